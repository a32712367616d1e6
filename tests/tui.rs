//! Flows through the real event loop: keys go in through a channel, the screen is a shared
//! `TestBackend`, and the backend is a real `LocalBackend` on a temporary database. Every wait is
//! for something to appear on screen, under a timeout.

/// The link and space forms (self-contained, with their own harness).
#[path = "tui/forms.rs"]
mod forms;
/// The Stats view.
#[path = "tui/stats.rs"]
mod stats;

/// Marks, bulk actions, undo, the palette, live updates and what a new user hit.
#[path = "tui/bulk.rs"]
mod bulk;

use std::io;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use async_trait::async_trait;
use futures::channel::mpsc::{UnboundedSender, unbounded};
use jiff::Timestamp;
use ratatui::Terminal;
use ratatui::backend::{Backend as RatatuiBackend, ClearType, TestBackend, WindowSize};
use ratatui::buffer::Cell;
use ratatui::crossterm::event::{Event, KeyCode, KeyEvent, KeyModifiers};
use ratatui::layout::{Position, Size};
use tempfile::TempDir;
use tokio::sync::{Notify, watch};

use linkdeck::backend::local::{LocalBackend, LocalOptions, LocalService};
use linkdeck::backend::{Backend, BackendInfo};
use linkdeck::domain::{
    Domain, DomainInput, Error, FixedClock, Id, Link, LinkInput, LinkQuery, Page, Result, Space,
    SpaceInput, SpaceQuery,
};
use linkdeck::tui::{Desktop, TuiOptions, run_with};

pub const WAIT: Duration = Duration::from_secs(30);

/// A `TestBackend` the test can read while the loop draws on it; each flush bumps a counter so
/// waiting costs nothing between frames.
#[derive(Clone)]
struct SharedScreen {
    inner: Arc<Mutex<TestBackend>>,
    frames: Arc<watch::Sender<u64>>,
}

impl SharedScreen {
    fn text(&self) -> String {
        self.inner.lock().unwrap().to_string()
    }
}

impl RatatuiBackend for SharedScreen {
    type Error = std::convert::Infallible;

    fn draw<'a, I>(&mut self, content: I) -> std::result::Result<(), Self::Error>
    where
        I: Iterator<Item = (u16, u16, &'a Cell)>,
    {
        self.inner.lock().unwrap().draw(content)
    }
    fn hide_cursor(&mut self) -> std::result::Result<(), Self::Error> {
        self.inner.lock().unwrap().hide_cursor()
    }
    fn show_cursor(&mut self) -> std::result::Result<(), Self::Error> {
        self.inner.lock().unwrap().show_cursor()
    }
    fn get_cursor_position(&mut self) -> std::result::Result<Position, Self::Error> {
        self.inner.lock().unwrap().get_cursor_position()
    }
    fn set_cursor_position<P: Into<Position>>(
        &mut self,
        position: P,
    ) -> std::result::Result<(), Self::Error> {
        self.inner.lock().unwrap().set_cursor_position(position)
    }
    fn clear(&mut self) -> std::result::Result<(), Self::Error> {
        self.inner.lock().unwrap().clear()
    }
    fn clear_region(&mut self, clear_type: ClearType) -> std::result::Result<(), Self::Error> {
        self.inner.lock().unwrap().clear_region(clear_type)
    }
    fn size(&self) -> std::result::Result<Size, Self::Error> {
        self.inner.lock().unwrap().size()
    }
    fn window_size(&mut self) -> std::result::Result<WindowSize, Self::Error> {
        self.inner.lock().unwrap().window_size()
    }
    fn flush(&mut self) -> std::result::Result<(), Self::Error> {
        self.inner.lock().unwrap().flush()?;
        self.frames.send_modify(|n| *n += 1);
        Ok(())
    }
}

/// Records what the app asked of the clipboard and browser.
#[derive(Default)]
struct RecordingDesktop {
    copied: Mutex<Vec<String>>,
}

impl Desktop for RecordingDesktop {
    fn copy(&self, text: &str) -> std::result::Result<(), String> {
        self.copied.lock().unwrap().push(text.to_owned());
        Ok(())
    }
    fn open(&self, _url: &str) -> std::result::Result<(), String> {
        Err("no browser in tests".into())
    }
}

struct Db {
    _dir: TempDir,
    service: LocalService,
    backend: LocalBackend,
    /// The same file through connections of the test's own.
    raw: linkdeck_sqlite::Db,
}

fn now() -> Timestamp {
    "2026-11-22T12:00:00Z".parse().unwrap()
}

async fn db() -> Db {
    let dir = tempfile::tempdir().unwrap();
    let opts = LocalOptions {
        public_url: "http://sho.test".into(),
        clock: Arc::new(FixedClock::new(now())),
        ..LocalOptions::default()
    };
    let path = dir.path().join("links.db");
    let service = LocalService::open(&path, opts).unwrap();
    let backend = service.default_backend().await.unwrap();
    Db {
        _dir: dir,
        service,
        backend,
        raw: linkdeck_sqlite::Db::open(&path).unwrap(),
    }
}

impl Db {
    async fn link(&self, alias: &str, url: &str) -> Link {
        self.link_with(alias, url, LinkInput::default()).await
    }

    async fn link_with(&self, alias: &str, url: &str, extra: LinkInput) -> Link {
        let input = LinkInput {
            url: Some(url.into()),
            alias: Some(alias.into()),
            ..extra
        };
        self.backend.create_link(&input).await.unwrap()
    }

    async fn set_clicks(&self, id: Id, clicks: u64) {
        self.raw
            .write(move |tx| {
                tx.execute(
                    "UPDATE links SET clicks = ?1 WHERE id = ?2",
                    rusqlite::params![clicks as i64, id],
                )
                .map_err(linkdeck::backend::local::db_error)?;
                Ok(())
            })
            .await
            .unwrap();
    }
}

struct Tui {
    input: UnboundedSender<io::Result<Event>>,
    screen: SharedScreen,
    frames: watch::Receiver<u64>,
    desktop: Arc<RecordingDesktop>,
    task: tokio::task::JoinHandle<color_eyre::Result<()>>,
}

impl Tui {
    fn start(backend: Arc<dyn Backend>) -> Tui {
        Tui::start_with(backend, TuiOptions::default(), 100, 30)
    }

    /// The app on `backend` with `opts` (its profile and header made the tests'), in a
    /// `width`×`height` terminal.
    fn start_with(backend: Arc<dyn Backend>, opts: TuiOptions, width: u16, height: u16) -> Tui {
        let (frames_tx, frames) = watch::channel(0);
        let screen = SharedScreen {
            inner: Arc::new(Mutex::new(TestBackend::new(width, height))),
            frames: Arc::new(frames_tx),
        };
        let (input, events) = unbounded();
        let desktop = Arc::new(RecordingDesktop::default());
        let opts = TuiOptions {
            profile: "test".into(),
            header: Some("local test.db".into()),
            ..opts
        };
        let cfg = opts.app_config(backend.as_ref(), Some("1")).unwrap();
        let mut terminal = Terminal::new(screen.clone()).unwrap();
        let desk: Arc<dyn Desktop> = desktop.clone();
        let task = tokio::spawn(async move {
            run_with(
                &mut terminal,
                events,
                backend,
                cfg,
                Arc::new(FixedClock::new(now())),
                desk,
            )
            .await
        });
        Tui {
            input,
            screen,
            frames,
            desktop,
            task,
        }
    }

    /// The terminal is resized, as a window drag would.
    fn resize(&self, width: u16, height: u16) {
        self.screen.inner.lock().unwrap().resize(width, height);
        self.input
            .unbounded_send(Ok(Event::Resize(width, height)))
            .unwrap();
    }

    fn press(&self, code: KeyCode, modifiers: KeyModifiers) {
        self.input
            .unbounded_send(Ok(Event::Key(KeyEvent::new(code, modifiers))))
            .unwrap();
    }

    fn key(&self, code: KeyCode) {
        self.press(code, KeyModifiers::NONE);
    }

    fn typing(&self, text: &str) {
        for c in text.chars() {
            let modifiers = if c.is_ascii_uppercase() {
                KeyModifiers::SHIFT
            } else {
                KeyModifiers::NONE
            };
            self.press(KeyCode::Char(c), modifiers);
        }
    }

    /// Waits until the screen satisfies `ok`; fails with the last screen after [`WAIT`].
    async fn wait_for(&mut self, what: &str, ok: impl Fn(&str) -> bool) -> String {
        let deadline = tokio::time::Instant::now() + WAIT;
        loop {
            let text = self.screen.text();
            if ok(&text) {
                return text;
            }
            if tokio::time::timeout_at(deadline, self.frames.changed())
                .await
                .is_err()
            {
                panic!("timed out waiting for {what}; the screen:\n{text}");
            }
        }
    }

    /// [`Tui::wait_for`] with a deadline of its own, for what must happen within a time.
    async fn wait_within(&mut self, limit: Duration, needle: &str) -> String {
        let deadline = tokio::time::Instant::now() + limit;
        loop {
            let text = self.screen.text();
            if text.contains(needle) {
                return text;
            }
            if tokio::time::timeout_at(deadline, self.frames.changed())
                .await
                .is_err()
            {
                panic!("{needle} did not show within {limit:?}; the screen:\n{text}");
            }
        }
    }

    async fn wait_text(&mut self, needle: &str) -> String {
        let n = needle.to_owned();
        self.wait_for(needle, move |s| s.contains(&n)).await
    }

    /// Waits until nothing is in flight (the header's spinner is gone) and the screen shows
    /// `needle`.
    async fn settled_with(&mut self, needle: &str) -> String {
        let n = needle.to_owned();
        self.wait_for(&format!("{needle} with nothing in flight"), move |s| {
            s.contains(&n) && !s.contains("working")
        })
        .await
    }

    async fn quit(self) {
        self.key(KeyCode::Char('q'));
        tokio::time::timeout(WAIT, self.task)
            .await
            .expect("the app quits")
            .unwrap()
            .unwrap();
    }
}

/// The rows of the links table, top to bottom, by alias.
fn aliases(screen: &str, known: &[&str]) -> Vec<String> {
    let mut found: Vec<(usize, String)> = known
        .iter()
        .filter_map(|a| {
            screen
                .lines()
                .position(|l| l.contains(&format!(" {a} ")) && l.contains("http"))
                .map(|i| (i, (*a).to_owned()))
        })
        .collect();
    found.sort();
    found.into_iter().map(|(_, a)| a).collect()
}

fn s(v: &str) -> Option<String> {
    Some(v.into())
}

#[tokio::test]
async fn search_narrows_the_list_and_esc_clears_it() {
    let db = db().await;
    db.link("alpha", "https://alpha.example.com/start").await;
    db.link("bravo", "https://bravo.example.org/docs").await;
    db.link("charlie", "https://charlie.example.net/x").await;
    let mut tui = Tui::start(Arc::new(db.backend.clone()));
    tui.settled_with("3 links").await;

    tui.key(KeyCode::Char('/'));
    tui.typing("bravo");
    let screen = tui.settled_with("1 link ").await;
    assert_eq!(aliases(&screen, &["alpha", "bravo", "charlie"]), ["bravo"]);

    // Searching by alias and by URL.
    tui.key(KeyCode::Enter);
    tui.key(KeyCode::Char('c'));
    tui.settled_with("3 links").await;
    tui.key(KeyCode::Char('b'));
    tui.key(KeyCode::Char('b'));
    tui.key(KeyCode::Char('/'));
    tui.typing(".net");
    tui.key(KeyCode::Enter);
    let screen = tui.settled_with("by url").await;
    let screen = if screen.contains("1 link ") {
        screen
    } else {
        tui.settled_with("1 link ").await
    };
    assert_eq!(
        aliases(&screen, &["alpha", "bravo", "charlie"]),
        ["charlie"]
    );

    tui.key(KeyCode::Char('/'));
    tui.key(KeyCode::Esc);
    tui.settled_with("3 links").await;
    tui.quit().await;
}

#[tokio::test]
async fn status_tabs_and_sort_orders_give_the_right_rows() {
    let db = db().await;
    let live = db.link("live", "https://example.com/live").await;
    let spent = db
        .link_with(
            "spent",
            "https://example.com/spent",
            LinkInput {
                expiration_clicks: s("5"),
                ..LinkInput::default()
            },
        )
        .await;
    let off = db
        .link_with(
            "off",
            "https://example.com/off",
            LinkInput {
                disabled: s("1"),
                ..LinkInput::default()
            },
        )
        .await;
    db.set_clicks(live.id, 50).await;
    db.set_clicks(spent.id, 7).await;
    db.set_clicks(off.id, 300).await;
    let all = ["live", "spent", "off"];
    let mut tui = Tui::start(Arc::new(db.backend.clone()));
    let screen = tui.settled_with("3 links").await;
    assert_eq!(
        aliases(&screen, &all),
        ["off", "spent", "live"],
        "newest first"
    );

    tui.key(KeyCode::Char('2'));
    let screen = tui.settled_with("[2 Active]").await;
    let screen = if screen.contains("1 link ") {
        screen
    } else {
        tui.settled_with("1 link ").await
    };
    assert_eq!(aliases(&screen, &all), ["live"]);

    tui.key(KeyCode::Char('3'));
    tui.wait_text("[3 Expired]").await;
    let screen = tui.settled_with("1 link ").await;
    assert_eq!(aliases(&screen, &all), ["spent"]);

    tui.key(KeyCode::Char('s'));
    tui.wait_text("[4 Disabled]").await;
    let screen = tui.settled_with("1 link ").await;
    assert_eq!(aliases(&screen, &all), ["off"]);

    tui.key(KeyCode::Char('1'));
    tui.settled_with("3 links").await;
    tui.key(KeyCode::Char('o'));
    let screen = tui.settled_with("sort oldest").await;
    assert_eq!(aliases(&screen, &all), ["live", "spent", "off"]);
    tui.key(KeyCode::Char('o'));
    let screen = tui.settled_with("sort most clicks").await;
    assert_eq!(aliases(&screen, &all), ["off", "live", "spent"]);
    tui.key(KeyCode::Char('o'));
    let screen = tui.settled_with("sort fewest clicks").await;
    assert_eq!(aliases(&screen, &all), ["spent", "live", "off"]);
    tui.quit().await;
}

#[tokio::test]
async fn a_space_filters_from_the_picker_and_from_the_spaces_pane() {
    let db = db().await;
    let space = db
        .backend
        .create_space(&SpaceInput {
            name: s("Launch"),
            color: s("4"),
        })
        .await
        .unwrap();
    db.link_with(
        "inside",
        "https://example.com/in",
        LinkInput {
            space: Some(space.id.to_string()),
            ..LinkInput::default()
        },
    )
    .await;
    db.link("outside", "https://example.com/out").await;
    let both = ["inside", "outside"];
    let mut tui = Tui::start(Arc::new(db.backend.clone()));
    tui.settled_with("2 links").await;

    // The picker: any, no space, then the spaces.
    tui.key(KeyCode::Char('f'));
    tui.wait_text("Filter by space").await;
    tui.key(KeyCode::Char('j'));
    tui.key(KeyCode::Char('j'));
    tui.key(KeyCode::Enter);
    let screen = tui.settled_with("space Launch").await;
    let screen = if screen.contains("1 link ") {
        screen
    } else {
        tui.settled_with("1 link ").await
    };
    assert_eq!(aliases(&screen, &both), ["inside"]);

    tui.key(KeyCode::Char('f'));
    tui.wait_text("Filter by space").await;
    tui.key(KeyCode::Char('k'));
    tui.key(KeyCode::Enter);
    let screen = tui.settled_with("space none").await;
    let screen = if screen.contains("1 link ") {
        screen
    } else {
        tui.settled_with("1 link ").await
    };
    assert_eq!(aliases(&screen, &both), ["outside"]);

    tui.key(KeyCode::Char('c'));
    tui.settled_with("2 links").await;
    tui.key(KeyCode::Tab);
    tui.wait_text("Spaces (1)").await;
    tui.key(KeyCode::Enter);
    let screen = tui.settled_with("space Launch").await;
    let screen = if screen.contains("1 link ") {
        screen
    } else {
        tui.settled_with("1 link ").await
    };
    assert_eq!(aliases(&screen, &both), ["inside"]);
    tui.quit().await;
}

#[tokio::test]
async fn delete_asks_then_removes_the_row_and_the_record() {
    let db = db().await;
    let keep = db.link("keepme", "https://example.com/keep").await;
    let doomed = db.link("doomed", "https://example.com/doomed").await;
    let mut tui = Tui::start(Arc::new(db.backend.clone()));
    tui.settled_with("2 links").await;

    // The newest (doomed) is selected; cancelling keeps it.
    tui.key(KeyCode::Char('d'));
    tui.wait_text("Delete link doomed?").await;
    tui.key(KeyCode::Esc);
    tui.wait_for("the dialog to close", |s| !s.contains("Delete link"))
        .await;
    assert!(db.backend.show_link(doomed.id).await.is_ok());

    tui.key(KeyCode::Char('d'));
    tui.wait_text("Delete link doomed?").await;
    tui.key(KeyCode::Char('y'));
    let screen = tui.settled_with("1 link ").await;
    assert!(screen.contains("Deleted doomed"), "{screen}");
    assert_eq!(aliases(&screen, &["keepme", "doomed"]), ["keepme"]);
    assert!(matches!(
        db.backend.show_link(doomed.id).await,
        Err(Error::NotFound(_))
    ));
    assert!(db.backend.show_link(keep.id).await.is_ok());
    tui.quit().await;
}

/// In the Trash pane, marked items are restored together, and `X` empties the trash after
/// a question that counts what goes.
#[tokio::test]
async fn trash_marks_restore_together_and_x_empties_the_trash() {
    let db = db().await;
    let mut ids = Vec::new();
    for alias in ["alpha", "bravo", "charlie", "delta"] {
        let link = db
            .link(alias, &format!("https://example.com/{alias}"))
            .await;
        db.backend.delete_link(link.id).await.unwrap();
        ids.push(link.id);
    }
    let mut tui = Tui::start(Arc::new(db.backend.clone()));
    tui.settled_with("0 links").await;
    // Links, Spaces, Live, Trash.
    tui.key(KeyCode::BackTab);
    tui.wait_text("Trash (4)").await;
    // The two newest, marked, come back together.
    tui.key(KeyCode::Char(' '));
    tui.key(KeyCode::Char(' '));
    tui.wait_text("restores the 2 marked").await;
    tui.key(KeyCode::Char('R'));
    tui.wait_text("Trash (2)").await;
    assert!(db.backend.show_link(ids[3]).await.is_ok());
    assert!(db.backend.show_link(ids[2]).await.is_ok());
    assert!(db.backend.show_link(ids[0]).await.is_err());

    tui.key(KeyCode::Char('X'));
    tui.wait_text("delete its 2 items for good?").await;
    tui.key(KeyCode::Char('y'));
    tui.wait_text("The trash is empty.").await;
    let trash = db.backend.trash(1, 10).await.unwrap().unwrap();
    assert_eq!(trash.total, 0);
    assert!(
        db.backend.show_link(ids[3]).await.is_ok(),
        "restored links stay"
    );
    tui.quit().await;
}

/// The Live pane shows each visit counted after it opened, newest at the top, with the
/// country's name and the other values; what came before it opened is not there.
#[tokio::test]
async fn the_live_pane_shows_visits_as_they_are_counted() {
    use linkdeck::backend::local::serving::VisitRow;
    let db = db().await;
    let launch = db.link("launch", "https://example.com/launch").await;
    let docs = db.link("docs", "https://example.com/docs").await;
    let visit = |link: Id, country: &str, referrer: &str| VisitRow {
        link_id: link,
        at: now().as_second(),
        country: s(country),
        platform: s("iOS"),
        browser: s("Safari"),
        referrer: s(referrer),
        language: s("de"),
        address: None,
        rule: None,
    };
    db.service
        .record_visits(vec![visit(docs.id, "FR", "before.example")])
        .await
        .unwrap();
    let mut tui = Tui::start(Arc::new(db.backend.clone()));
    tui.settled_with("2 links").await;
    tui.key(KeyCode::Tab);
    tui.key(KeyCode::Tab);
    tui.wait_text("Waiting for visits").await;
    db.service
        .record_visits(vec![
            visit(launch.id, "DE", "t.co"),
            visit(docs.id, "JP", "news.ycombinator.com"),
        ])
        .await
        .unwrap();
    let screen = tui.wait_text("Live (2 since it began)").await;
    let rows: Vec<&str> = screen.lines().filter(|l| l.contains("Safari")).collect();
    assert_eq!(rows.len(), 2, "{screen}");
    assert!(
        rows[0].contains("docs") && rows[0].contains("Japan"),
        "{screen}"
    );
    assert!(
        rows[1].contains("launch") && rows[1].contains("Germany") && rows[1].contains("t.co"),
        "{screen}"
    );
    assert!(!screen.contains("before.example"), "{screen}");
    tui.quit().await;
}

#[tokio::test]
async fn toggle_disabled_and_copy_act_on_the_selected_link() {
    let db = db().await;
    let link = db.link("flip", "https://example.com/flip").await;
    let mut tui = Tui::start(Arc::new(db.backend.clone()));
    tui.settled_with("1 link ").await;
    tui.key(KeyCode::Char('x'));
    tui.settled_with("Disabled flip").await;
    assert!(db.backend.show_link(link.id).await.unwrap().disabled);
    tui.key(KeyCode::Char('y'));
    tui.wait_text("Copied short URL").await;
    tui.press(KeyCode::Char('Y'), KeyModifiers::SHIFT);
    tui.wait_text("Copied destination").await;
    assert_eq!(
        *tui.desktop.copied.lock().unwrap(),
        ["http://sho.test/flip", "https://example.com/flip"]
    );
    tui.quit().await;
}

/// Holds back list answers for one search term until released.
struct Delaying {
    inner: LocalBackend,
    term: &'static str,
    held: Notify,
    release: Notify,
}

#[async_trait]
impl Backend for Delaying {
    fn info(&self) -> BackendInfo {
        self.inner.info()
    }
    async fn list_links(&self, query: &LinkQuery) -> Result<Page<Link>> {
        let answer = self.inner.list_links(query).await;
        if query.search_term() == Some(self.term) {
            self.held.notify_one();
            self.release.notified().await;
        }
        answer
    }
    async fn show_link(&self, id: Id) -> Result<Link> {
        self.inner.show_link(id).await
    }
    async fn create_link(&self, input: &LinkInput) -> Result<Link> {
        self.inner.create_link(input).await
    }
    async fn update_link(&self, id: Id, input: &LinkInput) -> Result<Link> {
        self.inner.update_link(id, input).await
    }
    async fn delete_link(&self, id: Id) -> Result<()> {
        self.inner.delete_link(id).await
    }
    async fn list_spaces(&self, query: &SpaceQuery) -> Result<Page<Space>> {
        self.inner.list_spaces(query).await
    }
    async fn show_space(&self, id: Id) -> Result<Space> {
        self.inner.show_space(id).await
    }
    async fn create_space(&self, input: &SpaceInput) -> Result<Space> {
        self.inner.create_space(input).await
    }
    async fn update_space(&self, id: Id, input: &SpaceInput) -> Result<Space> {
        self.inner.update_space(id, input).await
    }
    async fn delete_space(&self, id: Id) -> Result<()> {
        self.inner.delete_space(id).await
    }
    async fn list_domains(&self, page: u32, per_page: u32) -> Result<Page<Domain>> {
        self.inner.list_domains(page, per_page).await
    }
    async fn show_domain(&self, id: Id) -> Result<Domain> {
        self.inner.show_domain(id).await
    }
    async fn update_domain(&self, id: Id, input: &DomainInput) -> Result<Domain> {
        self.inner.update_domain(id, input).await
    }
    async fn stats(&self, query: &linkdeck::domain::StatsQuery) -> Result<linkdeck::domain::Stats> {
        self.inner.stats(query).await
    }
}

#[tokio::test]
async fn a_stale_search_answer_never_overwrites_a_newer_one() {
    let db = db().await;
    db.link("slowpoke", "https://slow.example.com/").await;
    db.link("fastlane", "https://fast.example.com/").await;
    let delaying = Arc::new(Delaying {
        inner: db.backend.clone(),
        term: "slow",
        held: Notify::new(),
        release: Notify::new(),
    });
    let mut tui = Tui::start(delaying.clone());
    tui.settled_with("2 links").await;

    tui.key(KeyCode::Char('/'));
    tui.typing("slow");
    delaying.held.notified().await;
    // The slow answer is held; the person changes their mind.
    tui.press(KeyCode::Char('u'), KeyModifiers::CONTROL);
    tui.typing("fast");
    tui.key(KeyCode::Enter);
    let screen = tui.wait_text("1 link ").await;
    assert_eq!(aliases(&screen, &["slowpoke", "fastlane"]), ["fastlane"]);
    assert!(
        screen.contains("working"),
        "the slow search is still in flight"
    );

    delaying.release.notify_one();
    let screen = tui.settled_with("1 link ").await;
    assert_eq!(aliases(&screen, &["slowpoke", "fastlane"]), ["fastlane"]);
    tui.quit().await;
}

#[tokio::test]
async fn an_unreachable_backend_shows_the_error_and_retry_works() {
    // A directory where the database should be: every call fails.
    let db = db().await;
    db.link("back", "https://example.com/back").await;
    let failing = Arc::new(Failing {
        inner: db.backend.clone(),
        fail: std::sync::atomic::AtomicBool::new(true),
    });
    let mut tui = Tui::start(failing.clone());
    tui.settled_with("Could not load links").await;
    failing
        .fail
        .store(false, std::sync::atomic::Ordering::SeqCst);
    tui.key(KeyCode::Char('r'));
    let screen = tui.settled_with("1 link ").await;
    assert_eq!(aliases(&screen, &["back"]), ["back"]);
    tui.quit().await;
}

/// Fails every list call while `fail` is set, like a server that is down.
struct Failing {
    inner: LocalBackend,
    fail: std::sync::atomic::AtomicBool,
}

#[async_trait]
impl Backend for Failing {
    fn info(&self) -> BackendInfo {
        self.inner.info()
    }
    async fn list_links(&self, query: &LinkQuery) -> Result<Page<Link>> {
        if self.fail.load(std::sync::atomic::Ordering::SeqCst) {
            return Err(Error::Unavailable("connection refused".into()));
        }
        self.inner.list_links(query).await
    }
    async fn show_link(&self, id: Id) -> Result<Link> {
        self.inner.show_link(id).await
    }
    async fn create_link(&self, input: &LinkInput) -> Result<Link> {
        self.inner.create_link(input).await
    }
    async fn update_link(&self, id: Id, input: &LinkInput) -> Result<Link> {
        self.inner.update_link(id, input).await
    }
    async fn delete_link(&self, id: Id) -> Result<()> {
        self.inner.delete_link(id).await
    }
    async fn list_spaces(&self, query: &SpaceQuery) -> Result<Page<Space>> {
        self.inner.list_spaces(query).await
    }
    async fn show_space(&self, id: Id) -> Result<Space> {
        self.inner.show_space(id).await
    }
    async fn create_space(&self, input: &SpaceInput) -> Result<Space> {
        self.inner.create_space(input).await
    }
    async fn update_space(&self, id: Id, input: &SpaceInput) -> Result<Space> {
        self.inner.update_space(id, input).await
    }
    async fn delete_space(&self, id: Id) -> Result<()> {
        self.inner.delete_space(id).await
    }
    async fn list_domains(&self, page: u32, per_page: u32) -> Result<Page<Domain>> {
        self.inner.list_domains(page, per_page).await
    }
    async fn show_domain(&self, id: Id) -> Result<Domain> {
        self.inner.show_domain(id).await
    }
    async fn update_domain(&self, id: Id, input: &DomainInput) -> Result<Domain> {
        self.inner.update_domain(id, input).await
    }
    async fn stats(&self, query: &linkdeck::domain::StatsQuery) -> Result<linkdeck::domain::Stats> {
        self.inner.stats(query).await
    }
}

#[test]
fn bad_key_overrides_are_refused_before_the_terminal_is_taken() {
    let rt = tokio::runtime::Runtime::new().unwrap();
    let db = rt.block_on(db());
    let opts = TuiOptions {
        keys: [("refresh".to_owned(), "q".to_owned())].into(),
        ..TuiOptions::default()
    };
    // `run` checks the key map first: it fails here without ever touching the terminal.
    let err = rt
        .block_on(linkdeck::tui::run(Arc::new(db.backend.clone()), opts))
        .unwrap_err();
    let text = err.to_string();
    assert!(text.contains("quit") && text.contains("refresh"), "{text}");
}

#[tokio::test]
async fn the_header_names_the_backend_kind_once() {
    let db = db().await;
    let header = |profile: &str| {
        let opts = TuiOptions {
            profile: profile.into(),
            ..TuiOptions::default()
        };
        opts.app_config(&db.backend, None).unwrap().location
    };
    let path = db.raw.path().display().to_string();
    let work = header("work");
    assert!(
        work.starts_with("local ") && work.ends_with("links.db"),
        "{work}"
    );
    // A profile called "local" does not read "local · local …".
    let local = header("local");
    assert!(!local.starts_with("local"), "{local}");
    assert!(
        path.ends_with(local.trim_start_matches('~')),
        "{local} vs {path}"
    );
}

#[tokio::test]
async fn paging_reaches_the_end_and_back_across_pages() {
    let db = db().await;
    let rows = (0..250)
        .map(|i| {
            let input = LinkInput {
                url: Some(format!("https://example.com/{i}")),
                alias: Some(format!("row{i:03}")),
                ..LinkInput::default()
            };
            (i + 1, input, None)
        })
        .collect();
    db.backend.import_batch(Vec::new(), rows).await.unwrap();
    let mut tui = Tui::start(Arc::new(db.backend.clone()));
    tui.settled_with("Links 1 of 250").await;

    tui.press(KeyCode::Char('G'), KeyModifiers::SHIFT);
    let screen = tui.settled_with("Links 250 of 250").await;
    assert!(
        screen.contains("▶ row000 "),
        "the oldest is last:\n{screen}"
    );
    tui.key(KeyCode::PageUp);
    tui.settled_with("of 250").await;
    tui.key(KeyCode::Char('g'));
    let screen = tui.settled_with("Links 1 of 250").await;
    assert!(
        screen.contains("▶ row249 "),
        "the newest is first:\n{screen}"
    );
    for _ in 0..120 {
        tui.key(KeyCode::Char('j'));
    }
    let screen = tui.settled_with("Links 121 of 250").await;
    assert!(screen.contains("▶ row129 "), "{screen}");
    tui.quit().await;
}

/// The Domains pane edits a domain's fallbacks through the embedded service: the save is
/// stored, and the pane shows it.
#[tokio::test]
async fn the_domains_pane_edits_a_domains_fallbacks() {
    let db = db().await;
    let domain = db.backend.add_domain("sho.rt").await.unwrap();
    let mut tui = Tui::start(Arc::new(db.backend.clone()));
    tui.settled_with("0 links").await;
    // Links → Trash → Domains.
    tui.key(KeyCode::BackTab);
    tui.key(KeyCode::BackTab);
    tui.wait_text("Domains (1)").await;
    tui.key(KeyCode::Char('e'));
    tui.wait_text("Edit domain https://sho.rt").await;
    tui.typing("https://home.example/");
    tui.key(KeyCode::Tab);
    tui.key(KeyCode::Tab);
    tui.key(KeyCode::Tab);
    tui.key(KeyCode::Right);
    tui.press(KeyCode::Char('s'), KeyModifiers::CONTROL);
    let screen = tui.settled_with("Saved domain https://sho.rt").await;
    assert!(screen.contains("https://home.example/"), "{screen}");
    let stored = db.backend.show_domain(domain.id).await.unwrap();
    assert_eq!(
        stored.settings().root_url.as_deref(),
        Some("https://home.example/")
    );
    assert_eq!(stored.settings().robots, linkdeck::domain::Robots::Allow);
    tui.quit().await;
}
