//! The behaviour suite on the embedded service, plus what only a local database file has:
//! several handles and processes on one file, bad files, bulk import, domain management.

#[macro_use]
mod suite;

mod embedded;
mod raw;

use std::sync::Arc;

use jiff::Timestamp;
use tempfile::TempDir;

use embedded::{Embedded as LocalHarness, options};
use linkdeck::backend::Backend;
use linkdeck::backend::local::{LocalBackend, LocalOptions, LocalService};
use linkdeck::domain::{FixedClock, Id};
use linkdeck_sqlite::Db;

backend_suite!(LocalHarness::sqlite().await);

// ---- local only ---------------------------------------------------------------------------------

use linkdeck::backend::local::ImportSummary;
use linkdeck::domain::LISTED_FIELDS;
use linkdeck::domain::{Error, LinkInput, LinkQuery, Sort, SpaceInput, SpaceQuery, StatusFilter};

fn space_input(name: &str, color: &str) -> SpaceInput {
    SpaceInput {
        name: Some(name.into()),
        color: Some(color.into()),
    }
}

fn all_links() -> LinkQuery {
    LinkQuery {
        per_page: 100,
        ..LinkQuery::default()
    }
}

#[tokio::test]
async fn import_batch_creates_spaces_and_links_in_one_go() {
    let h = LocalHarness::sqlite().await;
    let existing = h
        .mine
        .create_space(&space_input("Existing", "1"))
        .await
        .unwrap();
    let spaces = vec![
        (2, space_input("Launch", "2")),
        (3, space_input("existing", "4")),
        (4, space_input("LAUNCH", "3")),
    ];
    let links = vec![
        (
            6,
            LinkInput::with_url("https://a.example/one"),
            Some("launch".to_string()),
        ),
        (
            7,
            LinkInput {
                alias: Some("Fixed".into()),
                password: Some("hunter22".into()),
                ..LinkInput::with_url("https://b.example")
            },
            Some("Existing".to_string()),
        ),
        (8, LinkInput::with_url("https://c.example"), None),
        (
            9,
            LinkInput {
                space: Some(existing.id.to_string()),
                expiration_date: Some("2026-03-01".into()),
                expiration_time: Some("10:00".into()),
                ..LinkInput::with_url("https://d.example")
            },
            None,
        ),
    ];
    let summary = h.mine.import_batch(spaces, links).await.unwrap();
    assert_eq!(
        summary,
        ImportSummary {
            spaces_created: 1,
            spaces_reused: 2,
            links_created: 4,
            ..ImportSummary::default()
        }
    );
    let page = h.mine.list_links(&all_links()).await.unwrap();
    assert_eq!(page.total, 4);
    let by_url = |u: &str| page.items.iter().find(|l| l.url == u).unwrap().clone();
    assert_eq!(
        by_url("https://a.example/one").space.unwrap().name,
        "Launch"
    );
    assert_eq!(
        by_url("https://a.example/one").title.as_deref(),
        Some("a.example/one")
    );
    let fixed = by_url("https://b.example");
    assert_eq!(fixed.alias, "Fixed");
    assert!(fixed.password);
    assert_eq!(fixed.space.unwrap().id, existing.id);
    assert!(by_url("https://c.example").space.is_none());
    assert_eq!(by_url("https://c.example").alias.len(), 5);
    assert_eq!(
        by_url("https://d.example").ends_at,
        Some("2026-03-01T15:00:00Z".parse().unwrap())
    );
    let spaces = h.mine.list_spaces(&SpaceQuery::default()).await.unwrap();
    assert_eq!(spaces.total, 2);
    assert_eq!(h.mine.show_space(existing.id).await.unwrap().links, Some(2));
    // Imported links are found by search like any other.
    let found = h
        .mine
        .list_links(&LinkQuery {
            search: Some("a.example/on".into()),
            ..all_links()
        })
        .await
        .unwrap();
    assert_eq!(found.total, 1);
}

#[tokio::test]
async fn import_batch_reports_bad_rows_by_line_and_writes_nothing() {
    let h = LocalHarness::sqlite().await;
    h.mine
        .create_link(&LinkInput {
            alias: Some("taken".into()),
            ..LinkInput::with_url("https://a.example")
        })
        .await
        .unwrap();
    let spaces = vec![(1, space_input("Fine", "1")), (2, space_input("", "9"))];
    let ok = |url: &str| LinkInput::with_url(url);
    let links = vec![
        (4, ok("https://fine.example"), None),
        (5, ok("javascript:alert(1)"), None),
        (
            6,
            LinkInput {
                alias: Some("bad alias".into()),
                expiration_clicks: Some("many".into()),
                ..ok("https://x.example")
            },
            None,
        ),
    ];
    let err = h.mine.import_batch(spaces, links).await.unwrap_err();
    let Error::Validation(errors) = err else {
        panic!("{err:?}")
    };
    let fields: Vec<&str> = errors.iter().map(|(f, _)| f).collect();
    assert_eq!(
        fields,
        [
            "line 2: color",
            "line 2: name",
            "line 5: url",
            "line 6: alias",
            "line 6: expiration_clicks"
        ]
    );

    // Rules that need stored state, also reported by line.
    let links = vec![
        (10, ok("https://fine.example"), Some("Fine".to_string())),
        (
            11,
            LinkInput {
                alias: Some("TAKEN".into()),
                ..ok("https://x.example")
            },
            None,
        ),
        (
            12,
            LinkInput {
                alias: Some("twice".into()),
                ..ok("https://x.example")
            },
            None,
        ),
        (
            13,
            LinkInput {
                alias: Some("Twice".into()),
                ..ok("https://x.example")
            },
            None,
        ),
        (14, ok("https://x.example"), Some("Nowhere".to_string())),
        (
            15,
            LinkInput {
                space: Some("9999".into()),
                domain: Some("9999".into()),
                ..ok("https://x.example")
            },
            None,
        ),
    ];
    let err = h
        .mine
        .import_batch(vec![(1, space_input("Fine", "1"))], links)
        .await
        .unwrap_err();
    let Error::Validation(errors) = err else {
        panic!("{err:?}")
    };
    let fields: Vec<&str> = errors.iter().map(|(f, _)| f).collect();
    assert_eq!(
        fields,
        [
            "line 11: alias",
            "line 13: alias",
            "line 14: space",
            "line 15: domain",
            "line 15: space"
        ]
    );
    // Nothing of either attempt was written.
    assert_eq!(h.mine.list_links(&all_links()).await.unwrap().total, 1);
    assert_eq!(
        h.mine
            .list_spaces(&SpaceQuery::default())
            .await
            .unwrap()
            .total,
        0
    );
}

#[tokio::test]
async fn imported_links_never_take_a_deleted_links_id() {
    let h = LocalHarness::sqlite().await;
    let gone = h
        .mine
        .create_link(&LinkInput::with_url("https://example.com/gone"))
        .await
        .unwrap();
    h.mine.delete_link(gone.id).await.unwrap();
    let rows = (1..=3)
        .map(|line| {
            (
                line,
                LinkInput::with_url(format!("https://example.com/{line}")),
                None,
            )
        })
        .collect();
    h.mine.import_batch(Vec::new(), rows).await.unwrap();
    let page = h.mine.list_links(&all_links()).await.unwrap();
    let ids: Vec<i64> = page.items.iter().map(|l| l.id).collect();
    assert_eq!(ids.len(), 3);
    assert!(
        ids.iter().all(|&id| id > gone.id),
        "{ids:?} after {}",
        gone.id
    );
    // Short searches still find them: the short-term index followed the ids.
    let found = h
        .mine
        .list_links(&LinkQuery {
            search: Some("2".into()),
            by: linkdeck::domain::SearchBy::Url,
            ..all_links()
        })
        .await
        .unwrap();
    assert_eq!(found.total, 1);
}

#[tokio::test]
async fn import_batch_lists_the_first_errors_and_counts_them_all() {
    let h = LocalHarness::sqlite().await;
    let links = (1..=5_000)
        .map(|line| (line, LinkInput::with_url("not a url"), None))
        .collect();
    let err = h.mine.import_batch(Vec::new(), links).await.unwrap_err();
    let errors = err.field_errors().unwrap();
    assert_eq!(errors.len(), LISTED_FIELDS);
    assert_eq!(errors.total(), 5_000);
    let listed: Vec<&str> = errors.iter().map(|(field, _)| field).collect();
    assert_eq!(listed[..3], ["line 1: url", "line 2: url", "line 3: url"]);
    assert_eq!(listed[LISTED_FIELDS - 1], "line 100: url");
}

#[tokio::test]
async fn domains_are_added_and_removed_by_their_owner() {
    let h = LocalHarness::sqlite().await;
    let domain = h.mine.add_domain("Sho.RT").await.unwrap();
    assert_eq!(domain.name, "https://sho.rt");
    assert_eq!(domain.host(), "sho.rt");
    for dup in ["sho.rt", "http://SHO.rt/"] {
        let err = h.theirs.add_domain(dup).await.unwrap_err();
        assert!(err.field_errors().unwrap().contains("name"), "{dup}: {err}");
    }
    for bad in ["", "ftp://x.example", "x.example/path", "exa mple"] {
        let err = h.mine.add_domain(bad).await.unwrap_err();
        assert!(err.field_errors().unwrap().contains("name"), "{bad}: {err}");
    }
    let link = h
        .mine
        .create_link(&LinkInput {
            domain: Some(domain.id.to_string()),
            ..LinkInput::with_url("https://a.example")
        })
        .await
        .unwrap();
    let err = h.mine.remove_domain(domain.id).await.unwrap_err();
    assert!(
        matches!(&err, Error::Conflict(m) if m.contains("1 link")),
        "{err}"
    );
    assert!(matches!(
        h.theirs.remove_domain(domain.id).await,
        Err(Error::NotFound(_))
    ));
    h.mine.delete_link(link.id).await.unwrap();
    // A deleted link waits in the trash, where it still needs its domain.
    assert!(h.mine.remove_domain(domain.id).await.is_err());
    h.mine.empty_trash().await.unwrap();
    h.mine.remove_domain(domain.id).await.unwrap();
    assert!(matches!(
        h.mine.show_domain(domain.id).await,
        Err(Error::NotFound(_))
    ));
    assert!(matches!(
        h.mine.remove_domain(domain.id).await,
        Err(Error::NotFound(_))
    ));
}

#[tokio::test]
async fn two_services_on_one_file_share_reads_and_writes() {
    let h = LocalHarness::sqlite().await;
    let path = h.file().to_owned();
    let second = LocalService::open(&path, options(&h.clock)).unwrap();
    let second = second.default_backend().await.unwrap();
    assert_eq!(second.owner_id(), h.mine.owner_id());

    let created = h
        .mine
        .create_link(&LinkInput::with_url("https://first.example"))
        .await
        .unwrap();
    assert_eq!(second.show_link(created.id).await.unwrap(), created);
    let updated = second
        .update_link(
            created.id,
            &LinkInput {
                disabled: Some("1".into()),
                ..LinkInput::default()
            },
        )
        .await
        .unwrap();
    assert_eq!(h.mine.show_link(created.id).await.unwrap(), updated);

    // Writers on both handles at once: every write lands, none is lost.
    let writes = |b: LocalBackend, tag: &'static str| async move {
        for i in 0..15 {
            b.create_link(&LinkInput::with_url(format!("https://{tag}{i}.example")))
                .await
                .unwrap();
        }
    };
    tokio::join!(
        writes(h.mine.clone(), "a"),
        writes(second.clone(), "b"),
        writes(h.mine.clone(), "c")
    );
    assert_eq!(h.mine.list_links(&all_links()).await.unwrap().total, 46);
    assert_eq!(second.list_links(&all_links()).await.unwrap().total, 46);
}

#[tokio::test]
async fn a_file_that_is_not_a_database_gives_a_clear_error() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("garbage.db");
    std::fs::write(
        &path,
        b"this is not sqlite at all, just some bytes\n".repeat(200),
    )
    .unwrap();
    let err = LocalService::open(&path, LocalOptions::default()).unwrap_err();
    let Error::Unavailable(message) = &err else {
        panic!("{err:?}")
    };
    assert!(message.contains("garbage.db"), "{message}");
    assert!(message.contains("not a linkdeck database"), "{message}");

    // A directory where the file should be.
    let err = LocalService::open(dir.path(), LocalOptions::default()).unwrap_err();
    assert!(matches!(err, Error::Unavailable(_)), "{err:?}");
}

/// Set by [`two_processes_write_to_one_file`] for the copy of this test binary it starts.
const CHILD_DB: &str = "LINKDECK_TEST_CHILD_DB";
const PER_PROCESS: usize = 40;

/// In a child process: writes links into the parent's database. Otherwise does nothing.
#[tokio::test]
async fn child_process_writer() {
    let Ok(path) = std::env::var(CHILD_DB) else {
        return;
    };
    let service = LocalService::open(path.as_ref(), LocalOptions::default()).unwrap();
    let backend = service.default_backend().await.unwrap();
    for i in 0..PER_PROCESS {
        backend
            .create_link(&LinkInput::with_url(format!("https://child{i}.example")))
            .await
            .unwrap();
    }
}

#[tokio::test]
async fn two_processes_write_to_one_file() {
    let h = LocalHarness::sqlite().await;
    let path = h.file().to_owned();
    let mut child = std::process::Command::new(std::env::current_exe().unwrap())
        .args([
            "child_process_writer",
            "--exact",
            "--quiet",
            "--test-threads=1",
        ])
        .env(CHILD_DB, &path)
        .stdout(std::process::Stdio::null())
        .spawn()
        .unwrap();
    for i in 0..PER_PROCESS {
        h.mine
            .create_link(&LinkInput::with_url(format!("https://parent{i}.example")))
            .await
            .unwrap();
    }
    let status = tokio::task::spawn_blocking(move || child.wait())
        .await
        .unwrap()
        .unwrap();
    assert!(status.success());
    let page = h.mine.list_links(&all_links()).await.unwrap();
    assert_eq!(page.total, (2 * PER_PROCESS) as u64);
    let children = h
        .mine
        .list_links(&LinkQuery {
            search: Some("child".into()),
            by: linkdeck::domain::SearchBy::Url,
            ..all_links()
        })
        .await
        .unwrap();
    assert_eq!(children.total, PER_PROCESS as u64);
}

#[tokio::test]
async fn every_space_is_fetched_across_pages_and_only_the_owners() {
    let h = LocalHarness::sqlite().await;
    let spaces = (1..=230)
        .map(|i| (i, space_input(&format!("Space {i:03}"), "2")))
        .collect();
    h.mine.import_batch(spaces, Vec::new()).await.unwrap();
    let names = |spaces: Vec<linkdeck::domain::Space>| -> Vec<String> {
        spaces.into_iter().map(|s| s.name).collect()
    };
    let oldest_first = names(
        linkdeck::backend::all_spaces(&h.mine, linkdeck::domain::Sort::Asc)
            .await
            .unwrap(),
    );
    assert_eq!(oldest_first.len(), 230, "more than two pages of 100");
    assert_eq!(oldest_first[0], "Space 001");
    assert_eq!(oldest_first[229], "Space 230");
    let newest_first = names(
        linkdeck::backend::all_spaces(&h.mine, linkdeck::domain::Sort::Desc)
            .await
            .unwrap(),
    );
    assert_eq!(newest_first[0], "Space 230");
    let theirs = linkdeck::backend::all_spaces(&h.theirs, linkdeck::domain::Sort::Asc)
        .await
        .unwrap();
    assert!(theirs.is_empty());
}

// ---- page titles fetched in the background ---------------------------------------------------

/// A loopback site: `/sale` is a page titled "Spring &amp; Sale", `/slow` answers "Too late"
/// after a second, `/data` is JSON. Counts the requests it gets.
async fn title_site() -> (String, Arc<std::sync::atomic::AtomicUsize>) {
    use axum::http::header::CONTENT_TYPE;
    use std::sync::atomic::{AtomicUsize, Ordering};
    let hits = Arc::new(AtomicUsize::new(0));
    let counted = hits.clone();
    let app = axum::Router::new()
        .route(
            "/sale",
            axum::routing::get(|| async {
                (
                    [(CONTENT_TYPE, "text/html; charset=utf-8")],
                    "<html><head><title>Spring &amp; Sale</title></head><body></body></html>",
                )
            }),
        )
        .route(
            "/slow",
            axum::routing::get(|| async {
                tokio::time::sleep(std::time::Duration::from_secs(1)).await;
                ([(CONTENT_TYPE, "text/html")], "<title>Too late</title>")
            }),
        )
        .route(
            "/data",
            axum::routing::get(|| async {
                ([(CONTENT_TYPE, "application/json")], "{\"title\": \"no\"}")
            }),
        )
        .layer(axum::middleware::from_fn(
            move |req: axum::extract::Request, next: axum::middleware::Next| {
                counted.fetch_add(1, Ordering::SeqCst);
                next.run(req)
            },
        ));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, app).await });
    (base, hits)
}

/// A loopback site that redirects every request to `target`; counts the requests it gets.
async fn redirect_site(target: String) -> (String, Arc<std::sync::atomic::AtomicUsize>) {
    use std::sync::atomic::{AtomicUsize, Ordering};
    let hits = Arc::new(AtomicUsize::new(0));
    let counted = hits.clone();
    let app = axum::Router::new().fallback(move || {
        counted.fetch_add(1, Ordering::SeqCst);
        let target = target.clone();
        async move { axum::response::Redirect::temporary(&target) }
    });
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, app).await });
    (base, hits)
}

fn socket(base: &str) -> std::net::SocketAddr {
    base.trim_start_matches("http://").parse().unwrap()
}

/// A service that fetches titles (when asked) and may reach the loopback `sites`, which are not
/// public addresses.
async fn titled_service_reaching(
    dir: &TempDir,
    fetch_titles: bool,
    sites: &[&str],
) -> LocalBackend {
    let service = LocalService::open(
        &dir.path().join("titles.db"),
        LocalOptions {
            fetch_titles,
            title_fetch_allow: sites.iter().map(|s| socket(s)).collect(),
            ..LocalOptions::default()
        },
    )
    .unwrap();
    service.default_backend().await.unwrap()
}

/// The link's title once it stops being `from` (within 10 s).
async fn title_after(backend: &LocalBackend, id: Id, from: Option<&str>) -> Option<String> {
    for _ in 0..200 {
        let title = backend.show_link(id).await.unwrap().title;
        if title.as_deref() != from {
            return title;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    from.map(str::to_owned)
}

#[tokio::test]
async fn a_fetched_page_title_replaces_host_and_path_and_is_searchable() {
    let (site, _) = title_site().await;
    let dir = tempfile::tempdir().unwrap();
    let backend = titled_service_reaching(&dir, true, &[&site]).await;
    let link = backend
        .create_link(&LinkInput::with_url(format!("{site}/sale")))
        .await
        .unwrap();
    // The save did not wait: it answers with the host-and-path title.
    assert_eq!(link.title.as_deref(), Some("127.0.0.1/sale"));
    let title = title_after(&backend, link.id, link.title.as_deref()).await;
    assert_eq!(title.as_deref(), Some("Spring & Sale"));
    let found = backend
        .list_links(&LinkQuery {
            search: Some("spring &".into()),
            ..all_links()
        })
        .await
        .unwrap();
    assert_eq!(found.total, 1);
}

#[tokio::test]
async fn a_slow_title_never_labels_a_newer_url() {
    let (site, _) = title_site().await;
    let dir = tempfile::tempdir().unwrap();
    let backend = titled_service_reaching(&dir, true, &[&site]).await;
    let link = backend
        .create_link(&LinkInput::with_url(format!("{site}/slow")))
        .await
        .unwrap();
    let moved = backend
        .update_link(
            link.id,
            &LinkInput {
                url: Some(format!("{site}/sale")),
                ..LinkInput::default()
            },
        )
        .await
        .unwrap();
    let title = title_after(&backend, link.id, moved.title.as_deref()).await;
    assert_eq!(title.as_deref(), Some("Spring & Sale"));
    // The first page answers after a second; its title must not land.
    tokio::time::sleep(std::time::Duration::from_millis(1500)).await;
    let title = backend.show_link(link.id).await.unwrap().title;
    assert_eq!(title.as_deref(), Some("Spring & Sale"));
}

#[tokio::test]
async fn titles_are_fetched_only_when_the_profile_asks_and_only_from_html() {
    use std::sync::atomic::Ordering;
    let (site, hits) = title_site().await;
    let dir = tempfile::tempdir().unwrap();
    let off = titled_service_reaching(&dir, false, &[&site]).await;
    off.create_link(&LinkInput::with_url(format!("{site}/sale")))
        .await
        .unwrap();
    tokio::time::sleep(std::time::Duration::from_millis(300)).await;
    assert_eq!(hits.load(Ordering::SeqCst), 0, "nothing fetched when off");

    let dir = tempfile::tempdir().unwrap();
    let on = titled_service_reaching(&dir, true, &[&site]).await;
    let json = on
        .create_link(&LinkInput::with_url(format!("{site}/data")))
        .await
        .unwrap();
    for _ in 0..200 {
        if hits.load(Ordering::SeqCst) > 0 {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(25)).await;
    }
    assert_eq!(
        hits.load(Ordering::SeqCst),
        1,
        "the JSON page was asked for"
    );
    tokio::time::sleep(std::time::Duration::from_millis(300)).await;
    let title = on.show_link(json.id).await.unwrap().title;
    assert_eq!(title.as_deref(), Some("127.0.0.1/data"), "not HTML: kept");
}

#[tokio::test]
async fn titles_are_never_fetched_from_internal_addresses() {
    use std::sync::atomic::Ordering;
    // The internal page: on loopback, and not among the addresses the fetcher may reach.
    let (internal, internal_hits) = title_site().await;
    let port = socket(&internal).port();
    let by_name = format!("http://localhost:{port}/sale");
    // Reachable sites whose redirects lead to the internal page, by address and by name.
    let (hop_to_address, address_hops) = redirect_site(format!("{internal}/sale")).await;
    let (hop_to_name, name_hops) = redirect_site(by_name.clone()).await;
    // And a reachable page behind a reachable redirect, to show that hops are followed.
    let (allowed, _) = title_site().await;
    let (hop_to_allowed, _) = redirect_site(format!("{allowed}/sale")).await;
    let dir = tempfile::tempdir().unwrap();
    let backend = titled_service_reaching(
        &dir,
        true,
        &[&hop_to_address, &hop_to_name, &allowed, &hop_to_allowed],
    )
    .await;
    let mut links = Vec::new();
    for url in [
        format!("{internal}/sale"),
        by_name,
        format!("{hop_to_address}/go"),
        format!("{hop_to_name}/go"),
    ] {
        links.push(
            backend
                .create_link(&LinkInput::with_url(url))
                .await
                .unwrap(),
        );
    }
    let followed = backend
        .create_link(&LinkInput::with_url(format!("{hop_to_allowed}/go")))
        .await
        .unwrap();
    let title = title_after(&backend, followed.id, followed.title.as_deref()).await;
    assert_eq!(
        title.as_deref(),
        Some("Spring & Sale"),
        "an allowed chain is followed"
    );
    for _ in 0..200 {
        if address_hops.load(Ordering::SeqCst) > 0 && name_hops.load(Ordering::SeqCst) > 0 {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(25)).await;
    }
    assert_eq!(
        address_hops.load(Ordering::SeqCst),
        1,
        "the first hop was fetched"
    );
    assert_eq!(
        name_hops.load(Ordering::SeqCst),
        1,
        "the first hop was fetched"
    );
    // Time for any fetch still under way to land (it must not).
    tokio::time::sleep(std::time::Duration::from_millis(500)).await;
    assert_eq!(
        internal_hits.load(Ordering::SeqCst),
        0,
        "the internal site was reached"
    );
    for link in links {
        let now = backend.show_link(link.id).await.unwrap();
        assert_eq!(now.title, link.title, "{}", link.url);
    }
}

/// A fresh database file named `name` in a temporary directory (kept while the first value
/// lives), with the suite's clock, its default owner's backend, and a handle of the test's own
/// on the file.
async fn fresh_file(name: &str) -> (TempDir, LocalService, LocalBackend, Db) {
    let dir = tempfile::tempdir().unwrap();
    let clock = Arc::new(FixedClock::new(suite::start()));
    let path = dir.path().join(name);
    let service = LocalService::open(&path, options(&clock)).unwrap();
    let backend = service.default_backend().await.unwrap();
    let raw = Db::open(&path).unwrap();
    (dir, service, backend, raw)
}

/// Gives the file's links few distinct click counts, so most of a clicks order is decided by
/// the id among equal clicks.
async fn spread_clicks(raw: &Db) {
    raw.write(|tx| {
        tx.execute("UPDATE links SET clicks = (id * 7) % 5", [])
            .map_err(linkdeck::backend::local::db_error)
    })
    .await
    .unwrap();
}

/// Totals of a search with a status filter when the owner holds every link: thousands of
/// matches (the inactive links' ids are crossed off the matches) and a few (each match's status
/// is read) both agree with the links themselves.
#[tokio::test]
async fn search_totals_by_status_agree_with_the_links_at_any_size() {
    let (_dir, _, backend, raw) = fresh_file("many.db").await;
    let rows = (0..9_000)
        .map(|i| {
            let special = if i % 50 == 0 { "special-" } else { "" };
            let mut input = LinkInput::with_url(format!("https://match.example/{special}{i}"));
            if i % 7 == 0 {
                input.disabled = Some("1".into());
            }
            if i % 11 == 0 {
                input.expiration_date = Some("2025-12-01".into());
                input.expiration_time = Some("09:00".into());
            }
            if i % 13 == 0 {
                input.expiration_clicks = Some("5".into());
            }
            (i + 1, input, None)
        })
        .collect();
    backend.import_batch(Vec::new(), rows).await.unwrap();
    // Half the click-limited links have reached their limit.
    raw.write(|tx| {
        tx.execute(
            "UPDATE links SET clicks = 5 WHERE expiration_clicks = 5 AND id % 2 = 0",
            [],
        )
        .map_err(linkdeck::backend::local::db_error)
    })
    .await
    .unwrap();
    let total = |search: Option<&str>, status| {
        let backend = backend.clone();
        let search = search.map(str::to_owned);
        async move {
            backend
                .list_links(&LinkQuery {
                    search,
                    by: linkdeck::domain::SearchBy::Url,
                    status,
                    ..all_links()
                })
                .await
                .unwrap()
                .total
        }
    };
    // Every link matches "match.example": the search's totals are the status totals.
    for status in StatusFilter::ALL {
        assert_eq!(
            total(Some("match.example"), status).await,
            total(None, status).await,
            "{status:?}"
        );
    }
    // A few match "special": count their statuses one by one.
    let mut special = Vec::new();
    for page in 1..=2 {
        let p = backend
            .list_links(&LinkQuery {
                search: Some("special".into()),
                by: linkdeck::domain::SearchBy::Url,
                page,
                ..all_links()
            })
            .await
            .unwrap();
        special.extend(p.items);
    }
    assert_eq!(special.len(), 180);
    for status in StatusFilter::ALL {
        let expected = special
            .iter()
            .filter(|l| status.admits(l.status(suite::start())))
            .count() as u64;
        assert!(expected > 0, "{status:?}");
        assert_eq!(total(Some("special"), status).await, expected, "{status:?}");
    }
    // And the inactive ones are really there: the totals are not trivially equal.
    assert!(total(None, StatusFilter::Expired).await > 0);
    assert!(total(None, StatusFilter::Disabled).await > 0);
}

/// Any page of a search, deep or shallow, in every order, is the same slice of the whole ordered
/// list of matches, ties in clicks broken by id — whether the owner holds every link (matches
/// paged as a set of ids) or another owner has links too (matches paged by SQL).
#[tokio::test]
async fn every_page_of_a_search_is_its_slice_of_the_whole_list_in_every_order() {
    let (_dir, service, backend, raw) = fresh_file("pages.db").await;
    let rows = (0..3_000)
        .map(|i| {
            let site = if i % 30 == 0 { "match" } else { "other" };
            (
                i + 1,
                LinkInput::with_url(format!("https://{site}.example/{i}")),
                None,
            )
        })
        .collect();
    backend.import_batch(Vec::new(), rows).await.unwrap();
    spread_clicks(&raw).await;
    let query = |sort, page| LinkQuery {
        search: Some("match.example".into()),
        by: linkdeck::domain::SearchBy::Url,
        sort,
        page,
        ..all_links()
    };
    // A fresh file numbers the imported links 1, 2, …: the matches are every thirtieth from 1.
    let whole: Vec<(u64, Id)> = (1..=3_000)
        .step_by(30)
        .map(|id: Id| (((id * 7) % 5) as u64, id))
        .collect();
    let check = |backend: LocalBackend, whose: &'static str| {
        let whole = whole.clone();
        async move {
            for sort in Sort::ALL {
                let expected = suite::in_list_order(whole.clone(), sort);
                // Pages of 10 from first to past the last (in clicks order the first and last
                // pages walk the clicks index from their end, the middle ones read each match),
                // then pages of 30 and one page of all.
                for (per_page, pages) in [(10, 1..=11), (30, 1..=5), (100, 1..=2)] {
                    for page in pages {
                        let p = backend
                            .list_links(&LinkQuery {
                                per_page,
                                ..query(sort, page)
                            })
                            .await
                            .unwrap();
                        assert_eq!(p.total, 100, "{whose} {sort:?} page {page} of {per_page}");
                        let ids: Vec<Id> = p.items.iter().map(|l| l.id).collect();
                        let from = ((page - 1) * per_page).min(100) as usize;
                        let to = (from + per_page as usize).min(100);
                        assert_eq!(
                            ids,
                            expected[from..to],
                            "{whose} {sort:?} page {page} of {per_page}"
                        );
                    }
                }
            }
        }
    };
    check(backend.clone(), "sole owner").await;
    let theirs = service.for_owner(service.add_owner("someone else").await.unwrap().id);
    theirs
        .create_link(&LinkInput::with_url("https://match.example/theirs"))
        .await
        .unwrap();
    check(backend, "two owners").await;
}

/// A rare term holding a stretch every link has (`://shop.example/item-24`: every URL starts
/// so) leaves the full-text index for the short-term index's triples, which read the stretch's
/// rows at once where the full-text index walks their postings: its pages, in every status
/// and order, are still those of the links whose URLs hold it, read one by one — whether the
/// owner holds every link or another owner has links too.
#[tokio::test]
async fn a_rare_term_holding_a_common_stretch_finds_exactly_its_links() {
    let (_dir, service, backend, raw) = fresh_file("stretch.db").await;
    let rows = (0..3_000)
        .map(|i| {
            let mut input = LinkInput::with_url(format!("https://shop.example/item-{i}"));
            if i % 7 == 0 {
                input.disabled = Some("1".into());
            }
            (i + 1, input, None)
        })
        .collect();
    backend.import_batch(Vec::new(), rows).await.unwrap();
    spread_clicks(&raw).await;
    let check = |backend: LocalBackend, whose: &'static str| async move {
        let mut every = Vec::new();
        for page in 1..=30 {
            let query = LinkQuery {
                per_page: 100,
                page,
                ..all_links()
            };
            every.extend(backend.list_links(&query).await.unwrap().items);
        }
        assert_eq!(every.len(), 3_000, "{whose}");
        let terms = [
            "://SHOP.example/item-24",
            "/shop.example/item-2471",
            "e/item-1234",
            "p.example/item-29x",
        ];
        for term in terms {
            let needle = term.to_lowercase();
            for status in StatusFilter::ALL {
                let whole: Vec<(u64, Id)> = every
                    .iter()
                    .filter(|l| l.url.to_lowercase().contains(&needle))
                    .filter(|l| status.admits(l.status(suite::start())))
                    .map(|l| (l.clicks, l.id))
                    .collect();
                for sort in Sort::ALL {
                    let expected = suite::in_list_order(whole.clone(), sort);
                    for page in 1..=2 {
                        let p = backend
                            .list_links(&LinkQuery {
                                search: Some(term.into()),
                                by: linkdeck::domain::SearchBy::Url,
                                status,
                                sort,
                                page,
                                per_page: 100,
                                ..all_links()
                            })
                            .await
                            .unwrap();
                        let what = format!("{whose} {term:?} {status:?} {sort:?} page {page}");
                        assert_eq!(p.total, expected.len() as u64, "{what}");
                        let ids: Vec<Id> = p.items.iter().map(|l| l.id).collect();
                        let from = ((page - 1) * 100).min(expected.len() as u32) as usize;
                        let to = (from + 100).min(expected.len());
                        assert_eq!(ids, expected[from..to], "{what}");
                    }
                }
            }
        }
    };
    check(backend.clone(), "sole owner").await;
    let theirs = service.for_owner(service.add_owner("someone else").await.unwrap().id);
    theirs
        .create_link(&LinkInput::with_url("https://shop.example/item-24"))
        .await
        .unwrap();
    check(backend, "two owners").await;
}

/// Page `query.page` of 20 of `query` holds its share of `expected` (every match, in list
/// order), and the total counts them all.
async fn assert_page_of_20(backend: &LocalBackend, query: LinkQuery, expected: &[Id], what: &str) {
    let page = query.page as usize;
    let p = backend
        .list_links(&LinkQuery {
            per_page: 20,
            ..query
        })
        .await
        .unwrap();
    assert_eq!(p.total, expected.len() as u64, "{what}");
    let ids: Vec<Id> = p.items.iter().map(|l| l.id).collect();
    let from = (page - 1) * 20;
    let to = (from + 20).min(expected.len());
    assert_eq!(ids, expected[from..to], "{what}");
}

/// The space filter — a space, or no space — and the domain filter keep exactly the links
/// there, with and without a search, small (each link read) and large (the place's links kept
/// as bitmaps), under every status and sort, on the first, a middle and the last page.
#[tokio::test]
async fn no_space_a_space_and_a_domain_filter_large_and_small_lists_exactly() {
    use linkdeck::domain::{LinkStatus, SearchBy, SpaceFilter};
    let (_dir, _service, backend, _db) = fresh_file("spaces.db").await;
    let red = backend
        .create_space(&space_input("Red", "1"))
        .await
        .unwrap();
    let short = backend.add_domain("sho.rt").await.unwrap();
    // (id, status, space, domain, url) of each link, as the model to check against.
    let mut model = Vec::new();
    let rows = (0..6_000usize)
        .map(|i| {
            let in_red = i % 3 == 0;
            let on_short = i % 4 != 0;
            let url = format!(
                "https://{}.example/{i}",
                if i % 5 == 0 { "rare" } else { "common" }
            );
            let mut input = LinkInput::with_url(url.clone());
            if in_red {
                input.space = Some(red.id.to_string());
            }
            if on_short {
                input.domain = Some(short.id.to_string());
            }
            if i % 7 == 0 {
                input.disabled = Some("1".into());
            }
            let status = LinkStatus::derive(i % 7 == 0, None, 0, 0, suite::start());
            let place = (in_red.then_some(red.id), on_short.then_some(short.id));
            model.push((i as Id + 1, status, place, url));
            (i + 1, input, None)
        })
        .collect();
    backend.import_batch(Vec::new(), rows).await.unwrap();
    let places = [
        (SpaceFilter::NoSpace, None),
        (SpaceFilter::In(red.id), None),
        (SpaceFilter::Any, Some(short.id)),
        (SpaceFilter::NoSpace, Some(short.id)),
    ];
    for (space, domain) in places {
        for term in [None, Some("/12"), Some("rare"), Some("example")] {
            for status in StatusFilter::ALL {
                let chosen: Vec<(u64, Id)> = model
                    .iter()
                    .filter(|(_, s, (in_space, on), url)| {
                        space.admits(*in_space)
                            && domain.is_none_or(|d| *on == Some(d))
                            && status.admits(*s)
                            && term.is_none_or(|t| url.contains(t))
                    })
                    .map(|&(id, ..)| (0, id))
                    .collect();
                for sort in Sort::ALL {
                    let expected = suite::in_list_order(chosen.clone(), sort);
                    let last = expected.len().div_ceil(20).max(1) as u32;
                    for page in [1, last / 2 + 1, last] {
                        let query = LinkQuery {
                            search: term.map(str::to_owned),
                            by: SearchBy::Url,
                            status,
                            space,
                            domain,
                            sort,
                            page,
                            ..LinkQuery::default()
                        };
                        let what = format!(
                            "{space:?} {domain:?} {term:?} {status:?} {sort:?} page {page}"
                        );
                        assert_page_of_20(&backend, query, &expected, &what).await;
                    }
                }
            }
        }
    }
}

/// Large searches (more matches than `search::facts` reads row by row) page, count and filter by
/// status exactly as the links are, while the links change between searches: clicks counted
/// by the click writer, links disabled and given limits by updates, deleted to the trash and
/// restored from it under their old ids.
#[tokio::test]
async fn large_searches_stay_exact_while_their_links_change() {
    use linkdeck::domain::LinkStatus;
    let (_dir, service, backend, db) = fresh_file("large.db").await;
    let rows = (0..10_000)
        .map(|i| {
            let mut input = LinkInput::with_url(format!("https://match.example/{i}"));
            if i % 7 == 0 {
                input.disabled = Some("1".into());
            }
            if i % 11 == 0 {
                input.expiration_date = Some("2025-12-01".into());
                input.expiration_time = Some("09:00".into());
            }
            if i % 13 == 0 {
                input.expiration_clicks = Some("3".into());
            }
            (i + 1, input, None)
        })
        .collect();
    backend.import_batch(Vec::new(), rows).await.unwrap();
    spread_clicks(&db).await;
    let owner = backend.owner_id();
    // Every link's id, clicks and status, from its row and the Rust rule.
    let links = || {
        let db = db.clone();
        async move {
            db.read(move |conn| {
                let mut stmt = conn
                    .prepare(
                        "SELECT id, clicks, disabled, ends_at, expiration_clicks FROM links \
                         WHERE owner_id = ?1",
                    )
                    .map_err(linkdeck::backend::local::db_error)?;
                let rows = stmt
                    .query_map([owner], |r| {
                        let clicks = r.get::<_, i64>(1)? as u64;
                        let status = LinkStatus::derive(
                            r.get(2)?,
                            r.get::<_, Option<i64>>(3)?
                                .map(|s| Timestamp::from_second(s).unwrap()),
                            r.get(4)?,
                            clicks,
                            suite::start(),
                        );
                        Ok((r.get::<_, Id>(0)?, clicks, status))
                    })
                    .map_err(linkdeck::backend::local::db_error)?
                    .collect::<Result<Vec<_>, _>>()
                    .map_err(linkdeck::backend::local::db_error)?;
                Ok(rows)
            })
            .await
            .unwrap()
        }
    };
    let check = |when: &'static str| {
        let backend = backend.clone();
        let links = links();
        async move {
            let links = links.await;
            for status in StatusFilter::ALL {
                let chosen: Vec<(u64, Id)> = links
                    .iter()
                    .filter(|(_, _, s)| status.admits(*s))
                    .map(|&(id, clicks, _)| (clicks, id))
                    .collect();
                assert!(chosen.len() > 500, "{when} {status:?}: too few to be large");
                for sort in Sort::ALL {
                    let expected = suite::in_list_order(chosen.clone(), sort);
                    let last = expected.len().div_ceil(20) as u32;
                    for page in [1, 2, last / 2, last] {
                        let query = LinkQuery {
                            search: Some("match.example".into()),
                            by: linkdeck::domain::SearchBy::Url,
                            status,
                            sort,
                            page,
                            ..LinkQuery::default()
                        };
                        let what = format!("{when} {status:?} {sort:?} {page}");
                        assert_page_of_20(&backend, query, &expected, &what).await;
                    }
                }
            }
        }
    };
    check("imported").await;
    // The click writer counts visits of every ninth link, some past their limits.
    let now = suite::start().as_second();
    let visits = (1..=10_000)
        .step_by(9)
        .flat_map(|id| {
            (0..(id % 4 + 1)).map(move |i| linkdeck::backend::local::serving::VisitRow {
                link_id: id,
                at: now - 60 + i,
                country: None,
                platform: None,
                browser: None,
                referrer: None,
                language: None,
                address: None,
                rule: None,
            })
        })
        .collect();
    service.record_visits(visits).await.unwrap();
    check("clicks counted").await;
    for id in [2, 3, 14, 15, 500] {
        let input = LinkInput {
            disabled: Some("1".into()),
            expiration_clicks: Some("1".into()),
            ..LinkInput::default()
        };
        backend.update_link(id, &input).await.unwrap();
    }
    for id in [7, 26, 9_999] {
        let input = LinkInput {
            disabled: Some("0".into()),
            expiration_clicks: Some("0".into()),
            ..LinkInput::default()
        };
        backend.update_link(id, &input).await.unwrap();
    }
    check("edited").await;
    for id in (100..10_000).step_by(97) {
        backend.delete_link(id).await.unwrap();
    }
    check("deleted").await;
    let trashed = backend.trash(1, 100).await.unwrap().unwrap().items;
    backend.restore(&trashed[..40]).await.unwrap();
    check("restored").await;
}

/// A long term every link holds (a shop's own URL) is checked link by link only among the links
/// a tag or an inactive status admits; the pages and totals are those of every link.
#[tokio::test]
async fn a_long_shared_term_with_a_tag_or_an_inactive_status_lists_exactly_its_links() {
    use linkdeck::domain::{SearchBy, TagMatch};
    let (_dir, _service, backend, _db) = fresh_file("shop.db").await;
    let shop = "https://shop.example-store.com/collections/";
    let rows = (0..6_000)
        .map(|i| {
            let mut input = LinkInput::with_url(format!("{shop}{}/{i}", ["a", "b", "c"][i % 3]));
            input.disabled = (i % 7 == 0).then(|| "1".into());
            if i % 11 == 0 {
                input.expiration_date = Some("2025-12-01".into());
                input.expiration_time = Some("09:00".into());
            }
            input.tags = (i % 5 == 0).then(|| "sale".into());
            (i + 1, input, None)
        })
        .collect();
    backend.import_batch(Vec::new(), rows).await.unwrap();
    // (id, disabled, expired, tagged, which collection) of link i + 1.
    let model: Vec<(Id, bool, bool, bool, usize)> = (0..6_000)
        .map(|i| (i as Id + 1, i % 7 == 0, i % 11 == 0, i % 5 == 0, i % 3))
        .collect();
    let questions: [(&str, StatusFilter, bool); 5] = [
        (
            "example-store.com/collections/",
            StatusFilter::Expired,
            false,
        ),
        (
            "example-store.com/collections/",
            StatusFilter::Disabled,
            true,
        ),
        (
            "shop.example-store.com/collections/b/",
            StatusFilter::All,
            true,
        ),
        (
            "shop.example-store.com/collections/c/",
            StatusFilter::Expired,
            true,
        ),
        (
            "https://shop.example-store.com/colle",
            StatusFilter::Active,
            true,
        ),
    ];
    for (term, status, tagged) in questions {
        let collection = ["a/", "b/", "c/"].iter().position(|c| term.ends_with(c));
        let expected: Vec<Id> = model
            .iter()
            .filter(|&&(_, disabled, expired, tag, c)| {
                let admitted = match status {
                    StatusFilter::All => true,
                    StatusFilter::Active => !disabled && !expired,
                    // A link may be both expired and disabled: listed under both.
                    StatusFilter::Expired => expired,
                    StatusFilter::Disabled => disabled,
                };
                admitted && (!tagged || tag) && collection.is_none_or(|n| n == c)
            })
            .map(|&(id, ..)| id)
            .rev()
            .collect();
        let tags = if tagged {
            vec!["sale".to_owned()]
        } else {
            Vec::new()
        };
        let last = expected.len().div_ceil(20).max(1) as u32;
        for page in [1, 2, last] {
            let query = LinkQuery {
                search: Some(term.into()),
                by: SearchBy::Url,
                status,
                tags: tags.clone(),
                tag_match: TagMatch::All,
                page,
                ..LinkQuery::default()
            };
            let what = format!("{term:?} {status:?} tagged {tagged} page {page}");
            assert_page_of_20(&backend, query, &expected, &what).await;
        }
    }
}

// ---- the trash -----------------------------------------------------------------------------------

use linkdeck::backend::{BulkAction, Progress, Selection, Trashed, TrashedKind, Undo};

/// Records `n` visits of link `id` as the server's click writer does: clicks, rollups and log.
async fn add_visits(h: &LocalHarness, id: Id, n: i64) {
    let now = linkdeck::domain::Clock::now(h.clock.as_ref()).as_second();
    let visits = (0..n)
        .map(|i| linkdeck::backend::local::serving::VisitRow {
            link_id: id,
            at: now - 3_600 + i,
            country: Some("DE".into()),
            platform: None,
            browser: None,
            referrer: None,
            language: None,
            address: None,
            rule: None,
        })
        .collect();
    h.service.record_visits(visits).await.unwrap();
}

/// The rollup rows (one a day) a link's own traffic takes.
async fn traffic_rows(h: &LocalHarness, id: Id) -> i64 {
    h.raw
        .sqlite()
        .await
        .read(move |conn| {
            conn.query_row(
                "SELECT count(*) FROM link_traffic WHERE link_id = ?1",
                [id],
                |r| r.get(0),
            )
            .map_err(linkdeck::backend::local::db_error)
        })
        .await
        .unwrap()
}

/// The clicks of all time in the owner's account-wide statistics.
async fn account_clicks(h: &LocalHarness) -> u64 {
    use linkdeck::domain::{PeriodSpec, Preset, StatsQuery, StatsScope};
    h.mine
        .stats(&StatsQuery::new(
            StatsScope::Account,
            PeriodSpec::preset(Preset::All),
        ))
        .await
        .unwrap()
        .total
}

async fn trash_of(backend: &LocalBackend) -> Vec<Trashed> {
    backend.trash(1, 100).await.unwrap().unwrap().items
}

#[tokio::test]
async fn a_restored_link_keeps_its_id_though_newer_links_were_made() {
    let h = LocalHarness::sqlite().await;
    let old = h
        .mine
        .create_link(&LinkInput::with_url("https://a.example"))
        .await
        .unwrap();
    let newest = h
        .mine
        .create_link(&LinkInput {
            alias: Some("newest".into()),
            ..LinkInput::with_url("https://b.example")
        })
        .await
        .unwrap();
    let report = h
        .mine
        .bulk(
            &Selection::of_ids([newest.id]),
            &BulkAction::Delete,
            &Progress::new(),
        )
        .await
        .unwrap();
    // The deleted link had the highest id: a new link and an import must not take it.
    let after = h
        .mine
        .create_link(&LinkInput::with_url("https://c.example"))
        .await
        .unwrap();
    assert!(after.id > newest.id, "{} reused {}", after.id, newest.id);
    h.mine
        .import_batch(
            Vec::new(),
            vec![(1, LinkInput::with_url("https://d.example"), None)],
        )
        .await
        .unwrap();
    let back = h.mine.revert(&report.undo, &Progress::new()).await.unwrap();
    assert_eq!(back.changed, 1, "{back:?}");
    let restored = h.mine.show_link(newest.id).await.unwrap();
    assert_eq!(restored.alias, "newest");
    assert!(h.mine.show_link(old.id).await.is_ok());
    assert_eq!(h.mine.list_links(&all_links()).await.unwrap().total, 4);
    // A space's id is kept the same way.
    let space = h
        .mine
        .create_space(&space_input("Gone", "2"))
        .await
        .unwrap();
    h.mine.delete_space(space.id).await.unwrap();
    let other = h
        .mine
        .create_space(&space_input("Other", "3"))
        .await
        .unwrap();
    assert!(other.id > space.id);
}

#[tokio::test]
async fn trashed_links_keep_their_clicks_and_traffic_until_purged() {
    let h = LocalHarness::sqlite().await;
    let link = h
        .mine
        .create_link(&LinkInput::with_url("https://a.example"))
        .await
        .unwrap();
    add_visits(&h, link.id, 3).await;
    h.mine.delete_link(link.id).await.unwrap();
    assert!(matches!(
        h.mine.show_link(link.id).await,
        Err(Error::NotFound(_))
    ));
    assert_eq!(
        account_clicks(&h).await,
        0,
        "a trashed link leaves the account's figures"
    );
    assert_eq!(traffic_rows(&h, link.id).await, 1, "its own traffic waits");
    let trash = trash_of(&h.mine).await;
    assert_eq!(trash.len(), 1);
    assert_eq!(
        (trash[0].kind, trash[0].id, trash[0].clicks),
        (TrashedKind::Link, link.id, 3)
    );
    assert!(trash[0].purge_at.is_some());

    let report = h.mine.restore(&trash).await.unwrap();
    assert_eq!(report.changed, 1);
    assert_eq!(h.mine.show_link(link.id).await.unwrap().clicks, 3);
    assert_eq!(account_clicks(&h).await, 3);
    assert!(trash_of(&h.mine).await.is_empty());

    // Deleted again and left past the profile's days: purged with its traffic.
    h.mine.delete_link(link.id).await.unwrap();
    h.clock
        .set(suite::start() + jiff::SignedDuration::from_hours(24 * 31));
    assert_eq!(h.service.purge_due_blocking().unwrap(), 1);
    assert!(trash_of(&h.mine).await.is_empty());
    assert_eq!(account_clicks(&h).await, 0);
    assert_eq!(traffic_rows(&h, link.id).await, 0);
}

#[tokio::test]
async fn a_link_whose_alias_was_taken_meanwhile_stays_in_the_trash() {
    let h = LocalHarness::sqlite().await;
    let first = h
        .mine
        .create_link(&LinkInput {
            alias: Some("promo".into()),
            ..LinkInput::with_url("https://a.example")
        })
        .await
        .unwrap();
    let keep = h
        .mine
        .create_link(&LinkInput::with_url("https://k.example"))
        .await
        .unwrap();
    let report = h
        .mine
        .bulk(
            &Selection::of_ids([first.id, keep.id]),
            &BulkAction::Delete,
            &Progress::new(),
        )
        .await
        .unwrap();
    assert_eq!(report.changed, 2);
    // The alias is free while its link is in the trash.
    let second = h
        .mine
        .create_link(&LinkInput {
            alias: Some("PROMO".into()),
            ..LinkInput::with_url("https://b.example")
        })
        .await
        .unwrap();
    let back = h.mine.revert(&report.undo, &Progress::new()).await.unwrap();
    assert_eq!(back.changed, 1, "{back:?}");
    assert_eq!(back.failed.len(), 1);
    assert_eq!(back.failed[0].id, first.id);
    assert!(
        back.failed[0].error.to_string().contains("promo"),
        "{back:?}"
    );
    assert!(h.mine.show_link(keep.id).await.is_ok());
    assert!(h.mine.show_link(second.id).await.is_ok());
    let trash = trash_of(&h.mine).await;
    assert_eq!(trash.iter().map(|t| t.id).collect::<Vec<_>>(), [first.id]);
}

#[tokio::test]
async fn a_trashed_space_comes_back_with_its_links() {
    let h = LocalHarness::sqlite().await;
    let space = h
        .mine
        .create_space(&space_input("Launch", "4"))
        .await
        .unwrap();
    let mut members = Vec::new();
    for i in 0..3 {
        let link = h
            .mine
            .create_link(&LinkInput {
                space: Some(space.id.to_string()),
                ..LinkInput::with_url(format!("https://example.com/{i}"))
            })
            .await
            .unwrap();
        members.push(link.id);
    }
    h.mine.delete_space(space.id).await.unwrap();
    assert!(h.mine.show_link(members[0]).await.unwrap().space.is_none());
    // One link moves elsewhere meanwhile: it stays where it was put.
    let other = h
        .mine
        .create_space(&space_input("Other", "1"))
        .await
        .unwrap();
    h.mine
        .update_link(
            members[2],
            &LinkInput {
                space: Some(other.id.to_string()),
                ..LinkInput::default()
            },
        )
        .await
        .unwrap();
    let trash = trash_of(&h.mine).await;
    assert_eq!(trash.len(), 1);
    assert_eq!(
        (trash[0].kind, trash[0].detail.as_str()),
        (TrashedKind::Space, "3 links")
    );
    h.mine.restore(&trash).await.unwrap();
    let back = h.mine.show_space(space.id).await.unwrap();
    assert_eq!((back.name.as_str(), back.links), ("Launch", Some(2)));
    assert_eq!(
        h.mine
            .show_link(members[0])
            .await
            .unwrap()
            .space
            .unwrap()
            .id,
        space.id
    );
    assert_eq!(
        h.mine
            .show_link(members[2])
            .await
            .unwrap()
            .space
            .unwrap()
            .id,
        other.id
    );
}

#[tokio::test]
async fn a_domain_is_kept_while_trashed_links_use_it() {
    let h = LocalHarness::sqlite().await;
    let domain = h.mine.add_domain("sho.rt").await.unwrap();
    let link = h
        .mine
        .create_link(&LinkInput {
            domain: Some(domain.id.to_string()),
            ..LinkInput::with_url("https://a.example")
        })
        .await
        .unwrap();
    h.mine.delete_link(link.id).await.unwrap();
    let err = h.mine.remove_domain(domain.id).await.unwrap_err();
    assert!(err.to_string().contains("trash"), "{err}");
    assert_eq!(h.mine.empty_trash().await.unwrap(), 1);
    h.mine.remove_domain(domain.id).await.unwrap();
}

#[tokio::test]
async fn a_cancelled_bulk_change_changes_nothing() {
    let h = LocalHarness::sqlite().await;
    let link = h
        .mine
        .create_link(&LinkInput::with_url("https://a.example"))
        .await
        .unwrap();
    let progress = Progress::new();
    progress.cancel();
    let report = h
        .mine
        .bulk(
            &Selection::of_ids([link.id]),
            &BulkAction::Delete,
            &progress,
        )
        .await
        .unwrap();
    assert!(report.cancelled);
    assert_eq!(report.changed, 0);
    assert!(matches!(report.undo, Undo::Nothing));
    assert!(h.mine.show_link(link.id).await.is_ok());
}

#[tokio::test]
async fn out_of_range_stored_numbers_read_the_same_on_both_stores() {
    embedded::out_of_range_stored_numbers_read_the_same_on_both_stores(
        &LocalHarness::sqlite().await,
    )
    .await;
}

/// A key limited to some spaces is held to them again inside the transaction that writes: a
/// link outside them (as one moved away after the key's wrapper looked would be) is not found
/// by an update or a delete, and stays as it was; one inside them is changed as usual.
#[tokio::test]
async fn a_limited_keys_writes_check_the_link_is_still_within_its_spaces() {
    use linkdeck::domain::SpaceSet;
    let h = LocalHarness::sqlite().await;
    let team = h
        .mine
        .create_space(&space_input("Team", "1"))
        .await
        .unwrap();
    let other = h
        .mine
        .create_space(&space_input("Other", "2"))
        .await
        .unwrap();
    let placed = |space: i64, url: &str| LinkInput {
        space: Some(space.to_string()),
        ..LinkInput::with_url(url)
    };
    let inside = h
        .mine
        .create_link(&placed(team.id, "https://in.example"))
        .await
        .unwrap();
    let moved = h
        .mine
        .create_link(&placed(other.id, "https://moved.example"))
        .await
        .unwrap();
    let limited = h.mine.clone().within(SpaceSet::new([team.id]).unwrap());

    let disable = LinkInput {
        disabled: Some("1".into()),
        ..LinkInput::default()
    };
    let err = limited.update_link(moved.id, &disable).await.unwrap_err();
    assert!(matches!(err, Error::NotFound(_)), "{err}");
    let err = limited.delete_link(moved.id).await.unwrap_err();
    assert!(matches!(err, Error::NotFound(_)), "{err}");
    let still = h.mine.show_link(moved.id).await.unwrap();
    assert!(!still.disabled);
    assert_eq!(still.space.map(|s| s.id), Some(other.id));

    assert!(
        limited
            .update_link(inside.id, &disable)
            .await
            .unwrap()
            .disabled
    );
    limited.delete_link(inside.id).await.unwrap();
    assert!(matches!(
        h.mine.show_link(inside.id).await,
        Err(Error::NotFound(_))
    ));
}
