//! Acting on many links from the app, undo, the palette, live updates, and the defects a new
//! user hit — each on the real event loop over a real database file.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

use ratatui::crossterm::event::{KeyCode, KeyModifiers};

use linkdeck::backend::Backend;
use linkdeck::domain::{Error, Id, LinkInput, LinkQuery, SearchBy, SpaceInput, StatusFilter};
use linkdeck::tui::TuiOptions;

use super::{Failing, Tui, db, s};

fn disabled(query: &LinkQuery) -> LinkQuery {
    LinkQuery {
        status: StatusFilter::Disabled,
        per_page: 100,
        ..query.clone()
    }
}

async fn disabled_ids(backend: &dyn Backend) -> Vec<Id> {
    let mut ids: Vec<Id> = backend
        .list_links(&disabled(&LinkQuery::default()))
        .await
        .unwrap()
        .items
        .iter()
        .map(|l| l.id)
        .collect();
    ids.sort();
    ids
}

#[tokio::test]
async fn mark_three_links_disable_them_and_undo() {
    let db = db().await;
    let mut made = Vec::new();
    for alias in ["aa", "bb", "cc", "dd", "ee"] {
        made.push(
            db.link(alias, &format!("https://example.com/{alias}"))
                .await,
        );
    }
    let mut tui = Tui::start(Arc::new(db.backend.clone()));
    tui.settled_with("5 links").await;
    // Newest first: ee, dd, cc are the first three rows.
    for _ in 0..3 {
        tui.key(KeyCode::Char(' '));
    }
    tui.wait_text("● 3 marked").await;
    tui.key(KeyCode::Char('x'));
    tui.wait_text("Disable the 3 links marked").await;
    tui.key(KeyCode::Enter);
    let screen = tui.settled_with("Disabled 3 links").await;
    assert!(!screen.contains("marked "), "marks are cleared:\n{screen}");
    let mut want: Vec<Id> = made[2..].iter().map(|l| l.id).collect();
    want.sort();
    assert_eq!(disabled_ids(&db.backend).await, want);

    tui.key(KeyCode::Char('u'));
    tui.settled_with("Undid: Disabled 3 links").await;
    assert!(disabled_ids(&db.backend).await.is_empty());
    tui.quit().await;
}

async fn tags_of(backend: &dyn Backend, id: Id) -> Vec<String> {
    backend.show_link(id).await.unwrap().tags
}

/// `#` on marked links puts tags on and takes them off, keeping their other tags; a bad tag
/// keeps the prompt open saying why; `u` puts each link's tags back; `t` then filters by one.
#[tokio::test]
async fn mark_two_links_tag_them_filter_by_the_tag_and_undo() {
    let db = db().await;
    let tagged = |tags: &str| LinkInput {
        tags: s(tags),
        ..LinkInput::default()
    };
    let aa = db
        .link_with("aa", "https://example.com/aa", tagged("old, keep"))
        .await;
    let bb = db
        .link_with("bb", "https://example.com/bb", tagged("old"))
        .await;
    let cc = db.link("cc", "https://example.com/cc").await;
    let mut tui = Tui::start(Arc::new(db.backend.clone()));
    tui.settled_with("3 links").await;
    // Newest first: cc, bb are the first two rows.
    tui.key(KeyCode::Char(' '));
    tui.key(KeyCode::Char(' '));
    tui.wait_text("● 2 marked").await;
    tui.key(KeyCode::Char('#'));
    tui.wait_text("Tags of").await;
    let long = "x".repeat(41);
    tui.typing(&format!("Promo, -old, {long}"));
    tui.key(KeyCode::Enter);
    tui.wait_text("must be at most 40 characters").await;
    for _ in 0..long.len() {
        tui.key(KeyCode::Backspace);
    }
    tui.key(KeyCode::Enter);
    tui.settled_with("tag with promo and untag old").await;
    assert_eq!(tags_of(&db.backend, cc.id).await, ["promo"]);
    assert_eq!(tags_of(&db.backend, bb.id).await, ["promo"]);
    assert_eq!(
        tags_of(&db.backend, aa.id).await,
        ["keep", "old"],
        "not marked"
    );

    // The filter: the tag picked from the tags in use.
    tui.key(KeyCode::Char('t'));
    tui.wait_text("Filter by tags").await;
    let screen = tui.wait_text("promo (2)").await;
    assert!(screen.contains("keep (1)"), "{screen}");
    // Past "any" and the every/any switch.
    for _ in 0..4 {
        tui.key(KeyCode::Down);
    }
    tui.key(KeyCode::Enter);
    let screen = tui.settled_with("tag promo").await;
    assert!(screen.contains("2 links"), "{screen}");

    tui.key(KeyCode::Char('u'));
    tui.settled_with("Undid").await;
    assert_eq!(tags_of(&db.backend, cc.id).await, Vec::<String>::new());
    assert_eq!(tags_of(&db.backend, bb.id).await, ["old"]);
    tui.quit().await;
}

/// `(id, clicks)` of every link `query` lists (three pages at most), by id.
async fn promo_links(backend: &dyn Backend, query: &LinkQuery) -> Vec<(Id, u64)> {
    let mut found = Vec::new();
    for page in 1..=3 {
        let items = backend
            .list_links(&LinkQuery {
                page,
                ..query.clone()
            })
            .await
            .unwrap()
            .items;
        found.extend(items.iter().map(|l| (l.id, l.clicks)));
    }
    found.sort();
    found
}

#[tokio::test]
async fn mark_every_match_among_ten_thousand_delete_and_undo_with_their_clicks() {
    let db = db().await;
    let rows = (0..10_000)
        .map(|i| {
            let path = if i % 40 == 0 { "promo" } else { "page" };
            let input = LinkInput {
                url: Some(format!("https://example.com/{path}/{i}")),
                alias: Some(format!("{path}{i:05}")),
                ..LinkInput::default()
            };
            (i + 1, input, None)
        })
        .collect();
    db.backend.import_batch(Vec::new(), rows).await.unwrap();
    let promo = LinkQuery {
        search: s("promo"),
        by: SearchBy::Url,
        per_page: 100,
        ..LinkQuery::default()
    };
    let mut before = Vec::new();
    for (id, _) in promo_links(&db.backend, &promo).await {
        db.set_clicks(id, (id % 7 + 1) as u64).await;
        before.push((id, (id % 7 + 1) as u64));
    }
    assert_eq!(before.len(), 250);

    let mut tui = Tui::start(Arc::new(db.backend.clone()));
    tui.settled_with("10,000 links").await;
    tui.key(KeyCode::Char('b'));
    tui.key(KeyCode::Char('b'));
    tui.key(KeyCode::Char('/'));
    tui.typing("promo");
    tui.key(KeyCode::Enter);
    tui.settled_with("250 links").await;
    tui.key(KeyCode::Char('*'));
    tui.wait_text("● 250 marked").await;
    tui.key(KeyCode::Char('d'));
    tui.wait_text("Delete the 250 links marked?").await;
    tui.key(KeyCode::Char('y'));
    tui.settled_with("Deleted 250 links").await;
    assert_eq!(
        db.backend
            .list_links(&LinkQuery::default())
            .await
            .unwrap()
            .total,
        9_750
    );

    tui.key(KeyCode::Char('u'));
    tui.settled_with("Undid: Deleted 250 links").await;
    tui.settled_with("250 links").await;
    let after = promo_links(&db.backend, &promo).await;
    assert_eq!(after, before, "the same links came back, with their clicks");
    tui.quit().await;
}

#[tokio::test]
async fn the_palette_finds_an_action_by_name_and_runs_it() {
    let db = db().await;
    let link = db.link("flip", "https://example.com/flip").await;
    let mut tui = Tui::start(Arc::new(db.backend.clone()));
    tui.settled_with("1 link ").await;
    tui.key(KeyCode::Char(':'));
    tui.wait_text("Run an action").await;
    tui.typing("enable");
    tui.wait_text("▶ disable / enable").await;
    tui.key(KeyCode::Enter);
    tui.settled_with("Disabled flip").await;
    assert!(db.backend.show_link(link.id).await.unwrap().disabled);
    // ctrl-p opens it too.
    tui.press(KeyCode::Char('p'), KeyModifiers::CONTROL);
    tui.wait_text("Run an action").await;
    tui.key(KeyCode::Esc);
    tui.wait_for("the palette to close", |s| !s.contains("Run an action"))
        .await;
    tui.quit().await;
}

#[tokio::test]
async fn a_link_created_by_the_cli_shows_in_the_running_app_within_two_seconds() {
    let db = db().await;
    db.link("before", "https://example.com/before").await;
    let mut tui = Tui::start(Arc::new(db.backend.clone()));
    tui.settled_with("1 link ").await;
    let home = tempfile::tempdir().unwrap();
    let status = std::process::Command::new(env!("CARGO_BIN_EXE_linkdeck"))
        .arg("--db")
        .arg(db.raw.path())
        .args([
            "links",
            "create",
            "https://example.com/cli",
            "--alias",
            "fromcli",
        ])
        .env("XDG_CONFIG_HOME", home.path().join("config"))
        .env("XDG_DATA_HOME", home.path().join("data"))
        .env("XDG_STATE_HOME", home.path().join("state"))
        .env("HOME", home.path())
        .env_remove("LINKDECK_LOG")
        .status()
        .unwrap();
    assert!(status.success());
    let screen = tui.wait_within(Duration::from_secs(2), " fromcli ").await;
    assert!(screen.contains("2 links"), "{screen}");
    assert!(
        screen.contains("▶ before"),
        "the cursor stays on its link as the new one arrives above it:\n{screen}"
    );
    tui.quit().await;
}

#[tokio::test]
async fn the_cursor_stays_on_its_link_when_links_arrive_above_it() {
    let db = db().await;
    db.link("first", "https://example.com/1").await;
    db.link("second", "https://example.com/2").await;
    let mut tui = Tui::start(Arc::new(db.backend.clone()));
    tui.settled_with("2 links").await;
    tui.key(KeyCode::Char('j'));
    tui.wait_text("▶ first").await;
    // Another handle on the file: a change from elsewhere.
    let other = linkdeck::backend::local::LocalService::open(
        db.raw.path(),
        linkdeck::backend::local::LocalOptions::default(),
    )
    .unwrap()
    .default_backend()
    .await
    .unwrap();
    other
        .create_link(&LinkInput {
            alias: s("third"),
            ..LinkInput::with_url("https://example.com/3")
        })
        .await
        .unwrap();
    let screen = tui.settled_with("3 links").await;
    assert!(screen.contains("▶ first"), "{screen}");
    tui.quit().await;
}

#[tokio::test]
async fn a_rebound_save_key_saves_the_link_form() {
    let db = db().await;
    let opts = TuiOptions {
        keys: BTreeMap::from([("submit".to_owned(), "f2".to_owned())]),
        ..TuiOptions::default()
    };
    let mut tui = Tui::start_with(Arc::new(db.backend.clone()), opts, 100, 30);
    tui.settled_with("No links yet").await;
    tui.key(KeyCode::Char('n'));
    tui.wait_text("New link").await;
    tui.typing("https://example.com/rebound");
    // The old key no longer saves; the hint names the new one.
    tui.press(KeyCode::Char('s'), KeyModifiers::CONTROL);
    tui.wait_text("f2 save").await;
    assert_eq!(
        db.backend
            .list_links(&LinkQuery::default())
            .await
            .unwrap()
            .total,
        0
    );
    tui.key(KeyCode::F(2));
    tui.settled_with("Created link").await;
    assert_eq!(
        db.backend
            .list_links(&LinkQuery::default())
            .await
            .unwrap()
            .total,
        1
    );
    tui.quit().await;
}

// ---- what a new user hit ------------------------------------------------------------------------

#[tokio::test]
async fn on_the_too_small_screen_keys_do_nothing_unseen() {
    let db = db().await;
    let link = db.link("keep", "https://example.com/keep").await;
    let mut tui = Tui::start(Arc::new(db.backend.clone()));
    tui.settled_with("1 link ").await;
    tui.resize(60, 20);
    tui.wait_text("The terminal is too small").await;
    tui.key(KeyCode::Char('x'));
    tui.key(KeyCode::Char('n'));
    tui.key(KeyCode::Char('d'));
    tui.resize(100, 30);
    let screen = tui.settled_with("1 link ").await;
    assert!(
        !screen.contains("New link") && !screen.contains("Delete"),
        "{screen}"
    );
    assert!(!db.backend.show_link(link.id).await.unwrap().disabled);
    tui.quit().await;
}

#[tokio::test]
async fn a_space_is_deleted_from_the_spaces_pane_and_comes_back_with_undo() {
    let db = db().await;
    let space = db
        .backend
        .create_space(&SpaceInput {
            name: s("Launch"),
            color: s("4"),
        })
        .await
        .unwrap();
    let link = db
        .link_with(
            "member",
            "https://example.com/m",
            LinkInput {
                space: Some(space.id.to_string()),
                ..LinkInput::default()
            },
        )
        .await;
    let mut tui = Tui::start(Arc::new(db.backend.clone()));
    tui.settled_with("1 link ").await;
    tui.key(KeyCode::Tab);
    tui.wait_text("Spaces (1)").await;
    tui.key(KeyCode::Char('d'));
    tui.wait_text("Delete space Launch?").await;
    tui.key(KeyCode::Char('y'));
    tui.settled_with("Deleted space Launch").await;
    assert!(matches!(
        db.backend.show_space(space.id).await,
        Err(Error::NotFound(_))
    ));
    assert!(db.backend.show_link(link.id).await.unwrap().space.is_none());
    tui.key(KeyCode::Char('u'));
    tui.settled_with("Undid: Deleted space Launch").await;
    let back = db.backend.show_space(space.id).await.unwrap();
    assert_eq!(back.links, Some(1));
    assert_eq!(
        db.backend
            .show_link(link.id)
            .await
            .unwrap()
            .space
            .unwrap()
            .id,
        space.id
    );
    tui.quit().await;
}

#[tokio::test]
async fn ctrl_c_in_a_changed_form_asks_before_anything_is_lost() {
    let db = db().await;
    let mut tui = Tui::start(Arc::new(db.backend.clone()));
    tui.settled_with("No links yet").await;
    tui.key(KeyCode::Char('n'));
    tui.wait_text("New link").await;
    tui.typing("https://example.com/typed");
    tui.press(KeyCode::Char('c'), KeyModifiers::CONTROL);
    tui.wait_text("Discard changes?").await;
    assert!(!tui.task.is_finished());
    tui.key(KeyCode::Char('n'));
    tui.wait_for("the question to close", |s| !s.contains("Discard changes?"))
        .await;
    let screen = tui.wait_text("https://example.com/typed").await;
    assert!(screen.contains("New link"), "{screen}");
    tui.press(KeyCode::Char('c'), KeyModifiers::CONTROL);
    tui.wait_text("Discard changes?").await;
    tui.key(KeyCode::Char('y'));
    tokio::time::timeout(super::WAIT, tui.task)
        .await
        .expect("the app quits")
        .unwrap()
        .unwrap();
}

#[tokio::test]
async fn long_texts_end_in_an_ellipsis_and_the_details_name_space_domain_and_title() {
    let db = db().await;
    let space = db
        .backend
        .create_space(&SpaceInput {
            name: s("Spring Launch Campaign"),
            color: s("4"),
        })
        .await
        .unwrap();
    db.link_with(
        "a-very-long-alias-for-the-spring-campaign-2027",
        "https://shop.example.com/a/very/long/path/that/goes/on/and/on/for/the/spring/launch",
        LinkInput {
            space: Some(space.id.to_string()),
            expiration_clicks: s("2000"),
            ..LinkInput::default()
        },
    )
    .await;
    let mut tui = Tui::start_with(Arc::new(db.backend.clone()), TuiOptions::default(), 80, 24);
    let screen = tui.settled_with("1 link ").await;
    let row = screen
        .lines()
        .find(|l| l.contains("▶"))
        .expect("a selected row");
    assert!(row.contains("a-very-long-al"), "{row}");
    assert!(row.contains('…'), "cut texts end in …: {row}");
    assert!(
        row.contains("0/2,000"),
        "the click limit as the CLI shows it: {row}"
    );
    assert!(!row.contains("Spring Launc "), "{row}");
    assert!(
        screen.contains("space       ● Spring Launch Campaign"),
        "{screen}"
    );
    assert!(
        screen.contains("title       shop.example.com/a/very"),
        "{screen}"
    );
    assert!(screen.contains("domain none (sho.test)"), "{screen}");
    tui.quit().await;
}

#[tokio::test]
async fn the_same_alias_on_two_domains_shows_which_domain() {
    let db = db().await;
    let domain = db.backend.add_domain("go.example").await.unwrap();
    db.link_with(
        "promo",
        "https://example.com/a",
        LinkInput {
            domain: Some(domain.id.to_string()),
            ..LinkInput::default()
        },
    )
    .await;
    db.link("promo", "https://example.com/b").await;
    let mut tui = Tui::start(Arc::new(db.backend.clone()));
    let screen = tui.settled_with("2 links").await;
    let rows: Vec<&str> = screen
        .lines()
        .filter(|l| l.contains("promo ") && l.contains("https://example.com/"))
        .collect();
    assert_eq!(rows.len(), 2, "{screen}");
    assert!(rows.iter().any(|r| r.contains("go.example")), "{screen}");
    assert!(rows.iter().any(|r| r.contains("sho.test")), "{screen}");
    tui.quit().await;
}

#[tokio::test]
async fn a_failed_refresh_keeps_the_last_rows_marked_stale_at_once() {
    let db = db().await;
    db.link("kept", "https://example.com/kept").await;
    let failing = Arc::new(Failing {
        inner: db.backend.clone(),
        fail: std::sync::atomic::AtomicBool::new(false),
    });
    let mut tui = Tui::start(failing.clone());
    tui.settled_with("1 link ").await;
    failing.fail.store(true, Ordering::SeqCst);
    tui.key(KeyCode::Char('r'));
    let screen = tui.settled_with("Showing the last rows loaded").await;
    assert!(screen.contains("stale"), "{screen}");
    assert!(screen.contains("▶ kept"), "the rows stay:\n{screen}");
    assert!(!screen.contains("Nothing selected"), "{screen}");
    assert!(
        screen.contains("1 link "),
        "the header agrees with the rows:\n{screen}"
    );
    failing.fail.store(false, Ordering::SeqCst);
    tui.key(KeyCode::Char('r'));
    tui.wait_for("the rows to be fresh again", |s| !s.contains("stale"))
        .await;
    tui.quit().await;
}

// ---- the same flows on a remote profile ------------------------------------------------------

/// A real `linkdeck serve` on a loopback port over a temporary database: the owner's records
/// (to arrange and check), the app's `RemoteBackend`, and the server (stops when dropped).
struct Served {
    _dir: tempfile::TempDir,
    records: linkdeck::backend::local::LocalBackend,
    remote: linkdeck::backend::remote::RemoteBackend,
    _server: linkdeck::server::ServerHandle,
}

async fn served() -> Served {
    use linkdeck::backend::local::{LocalOptions, LocalService};
    use linkdeck::backend::remote::{ApiKey, RemoteBackend, RemoteOptions};
    let dir = tempfile::tempdir().unwrap();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    let service = LocalService::open(
        &dir.path().join("served.db"),
        LocalOptions {
            public_url: base.clone(),
            ..LocalOptions::default()
        },
    )
    .unwrap();
    let owner = service.add_owner("alice").await.unwrap();
    let (key, _) = service.create_key(owner.id, Some("tui")).await.unwrap();
    let server = linkdeck::server::start(
        service.clone(),
        linkdeck::server::ServeOptions {
            public_url: base.clone(),
            ..linkdeck::server::ServeOptions::default()
        },
        listener,
    )
    .await
    .unwrap();
    let remote = RemoteBackend::new(RemoteOptions::new(base, ApiKey::new(key).unwrap())).unwrap();
    Served {
        _dir: dir,
        records: service.for_owner(owner.id),
        remote,
        _server: server,
    }
}

#[tokio::test]
async fn on_a_remote_server_bulk_work_goes_on_past_a_failure_and_undo_recreates() {
    let served = served().await;
    let mut made = Vec::new();
    for alias in ["r1", "r2", "r3", "other"] {
        let link = served
            .records
            .create_link(&LinkInput {
                alias: s(alias),
                ..LinkInput::with_url(format!("https://example.com/{alias}"))
            })
            .await
            .unwrap();
        made.push(link);
    }
    let mut tui = Tui::start(Arc::new(served.remote.clone()));
    tui.settled_with("4 links").await;
    // Mark other, r3, r2 (newest first); then r3 goes away behind the app's back.
    for _ in 0..3 {
        tui.key(KeyCode::Char(' '));
    }
    tui.wait_text("● 3 marked").await;
    served.records.delete_link(made[2].id).await.unwrap();
    tui.key(KeyCode::Char('x'));
    tui.wait_text("Disable the 3 links marked").await;
    tui.key(KeyCode::Enter);
    let screen = tui.settled_with("2 links changed, 1 failed").await;
    assert!(screen.contains(&format!("link {}", made[2].id)), "{screen}");
    let mut want = vec![made[1].id, made[3].id];
    want.sort();
    assert_eq!(disabled_ids(&served.records).await, want);

    // Everything that matches "r", deleted; a server keeps no trash, so the question says so,
    // and undo makes them again.
    tui.key(KeyCode::Char('/'));
    tui.typing("example.com/r");
    tui.key(KeyCode::Enter);
    tui.settled_with("Links 1 of 2 ").await;
    tui.key(KeyCode::Char('*'));
    tui.wait_text("● 2 marked").await;
    tui.key(KeyCode::Char('d'));
    tui.wait_text("Delete the 2 links marked?").await;
    assert!(tui.screen.text().contains("server keeps no trash"));
    tui.key(KeyCode::Char('y'));
    tui.settled_with("Deleted 2 links").await;
    assert_eq!(
        served
            .records
            .list_links(&LinkQuery::default())
            .await
            .unwrap()
            .total,
        1
    );
    tui.key(KeyCode::Char('u'));
    tui.settled_with("Undid: Deleted 2 links").await;
    let mut aliases: Vec<String> = served
        .records
        .list_links(&LinkQuery::default())
        .await
        .unwrap()
        .items
        .into_iter()
        .map(|l| l.alias)
        .collect();
    aliases.sort();
    assert_eq!(aliases, ["other", "r1", "r2"]);
    tui.quit().await;
}

#[tokio::test]
async fn a_tag_renamed_from_its_picker_merges_and_the_filter_follows_it() {
    let db = db().await;
    let tagged = |tags: &str| LinkInput {
        tags: s(tags),
        ..LinkInput::default()
    };
    let aa = db
        .link_with("aa", "https://example.com/aa", tagged("promo"))
        .await;
    let bb = db
        .link_with("bb", "https://example.com/bb", tagged("promo, sale"))
        .await;
    let cc = db
        .link_with("cc", "https://example.com/cc", tagged("sale"))
        .await;
    let mut tui = Tui::start(Arc::new(db.backend.clone()));
    tui.settled_with("3 links").await;
    // Filter by promo: its two links.
    tui.key(KeyCode::Char('t'));
    tui.wait_text("promo (2)").await;
    tui.key(KeyCode::Down);
    tui.key(KeyCode::Down);
    tui.key(KeyCode::Enter);
    let screen = tui.settled_with("tag promo").await;
    assert!(screen.contains("2 links"), "{screen}");
    // promo and sale, every one: bb alone; then any of them: all three.
    tui.key(KeyCode::Char('t'));
    tui.wait_text("match: every tag").await;
    for _ in 0..3 {
        tui.key(KeyCode::Down);
    }
    tui.key(KeyCode::Enter);
    let screen = tui.settled_with("tag promo+1").await;
    assert!(screen.contains("1 link"), "{screen}");
    tui.key(KeyCode::Char('t'));
    tui.wait_text("match: every tag").await;
    tui.key(KeyCode::Down);
    tui.key(KeyCode::Enter);
    let screen = tui.settled_with("any tag promo+1").await;
    assert!(screen.contains("3 links"), "{screen}");
    // Back to promo alone (sale picked again leaves the filter).
    tui.key(KeyCode::Char('t'));
    tui.wait_text("match: any tag").await;
    for _ in 0..3 {
        tui.key(KeyCode::Down);
    }
    tui.key(KeyCode::Enter);
    tui.settled_with("2 links").await;

    // Rename it from the picker: a bad name keeps the prompt open with the reason.
    tui.key(KeyCode::Char('t'));
    tui.wait_text("e rename").await;
    tui.key(KeyCode::Down);
    tui.key(KeyCode::Down);
    tui.key(KeyCode::Char('e'));
    tui.wait_text("Rename the tag promo").await;
    for _ in 0.."promo".len() {
        tui.key(KeyCode::Backspace);
    }
    tui.typing("a,b");
    tui.key(KeyCode::Enter);
    tui.wait_text("✗").await;
    for _ in 0.."a,b".len() {
        tui.key(KeyCode::Backspace);
    }
    tui.typing("Sale");
    tui.key(KeyCode::Enter);
    let screen = tui.settled_with("promo merged into sale on 2 links").await;
    // The filter followed the tag: every link now carries sale.
    assert!(screen.contains("tag sale"), "{screen}");
    let screen = tui.settled_with("3 links").await;
    assert!(!screen.contains("tag promo"), "{screen}");
    for id in [aa.id, bb.id, cc.id] {
        assert_eq!(tags_of(&db.backend, id).await, ["sale"]);
    }
    tui.quit().await;
}
