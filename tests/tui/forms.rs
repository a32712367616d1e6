//! Flow tests of the forms on the real event loop: keys go in through the same stream the
//! terminal feeds, the screen is read from a `TestBackend`, and the records are checked in the
//! SQLite file through `LocalBackend`. No fixed sleeps: every wait is for something on screen,
//! under a timeout.

use std::io;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures::channel::mpsc::{UnboundedSender, unbounded};
use jiff::Timestamp;
use jiff::tz::TimeZone;
use ratatui::Terminal;
use ratatui::backend::{Backend as TermBackend, ClearType, TestBackend, WindowSize};
use ratatui::buffer::Cell;
use ratatui::crossterm::event::{Event, KeyCode, KeyEvent, KeyModifiers};
use ratatui::layout::{Position, Size};
use tempfile::TempDir;
use tokio::sync::watch;

use linkdeck::backend::Backend;
use linkdeck::backend::local::{LocalBackend, LocalOptions, LocalService};
use linkdeck::backend::remote::{ApiKey, RemoteBackend, RemoteOptions};
use linkdeck::domain::{
    Color, FixedClock, Link, LinkInput, LinkQuery, RuleInput, SpaceInput, SpaceQuery, TargetRule,
    TargetType,
};
use linkdeck::server::ServeOptions;
use linkdeck::tui::{Desktop, TuiOptions, run_with};

const ZONE: &str = "Europe/Berlin";
const PUBLIC_URL: &str = "http://links.test:8080";
// A ceiling, not a pause: waits end as soon as the screen shows what they look for. Generous
// because CI shares two cores with the build.
const WAIT: Duration = Duration::from_secs(30);

fn start_time() -> Timestamp {
    "2026-11-22T12:00:00Z".parse().unwrap()
}

/// A `TestBackend` the test reads while the loop draws on it; every flush bumps `frames`, so a
/// wait wakes once per frame and not otherwise.
#[derive(Clone)]
struct SharedScreen {
    screen: Arc<Mutex<TestBackend>>,
    frames: Arc<watch::Sender<u64>>,
}

impl SharedScreen {
    fn lock(&self) -> std::sync::MutexGuard<'_, TestBackend> {
        self.screen.lock().unwrap_or_else(|e| e.into_inner())
    }
}

impl TermBackend for SharedScreen {
    type Error = io::Error;
    fn draw<'a, I>(&mut self, content: I) -> io::Result<()>
    where
        I: Iterator<Item = (u16, u16, &'a Cell)>,
    {
        self.lock().draw(content).map_err(io::Error::other)
    }
    fn hide_cursor(&mut self) -> io::Result<()> {
        self.lock().hide_cursor().map_err(io::Error::other)
    }
    fn show_cursor(&mut self) -> io::Result<()> {
        self.lock().show_cursor().map_err(io::Error::other)
    }
    fn get_cursor_position(&mut self) -> io::Result<Position> {
        self.lock().get_cursor_position().map_err(io::Error::other)
    }
    fn set_cursor_position<P: Into<Position>>(&mut self, position: P) -> io::Result<()> {
        self.lock()
            .set_cursor_position(position)
            .map_err(io::Error::other)
    }
    fn clear(&mut self) -> io::Result<()> {
        self.lock().clear().map_err(io::Error::other)
    }
    fn clear_region(&mut self, clear_type: ClearType) -> io::Result<()> {
        self.lock()
            .clear_region(clear_type)
            .map_err(io::Error::other)
    }
    fn size(&self) -> io::Result<Size> {
        self.lock().size().map_err(io::Error::other)
    }
    fn window_size(&mut self) -> io::Result<WindowSize> {
        self.lock().window_size().map_err(io::Error::other)
    }
    fn flush(&mut self) -> io::Result<()> {
        self.lock().flush().map_err(io::Error::other)?;
        self.frames.send_modify(|n| *n += 1);
        Ok(())
    }
}

struct NoDesktop;

impl Desktop for NoDesktop {
    fn copy(&self, _text: &str) -> Result<(), String> {
        Ok(())
    }
    fn open(&self, _url: &str) -> Result<(), String> {
        Ok(())
    }
}

/// The app running on a fresh database file.
struct Session {
    _dir: TempDir,
    backend: LocalBackend,
    screen: SharedScreen,
    frames: watch::Receiver<u64>,
    keys: UnboundedSender<io::Result<Event>>,
    task: tokio::task::JoinHandle<()>,
}

impl Session {
    async fn start() -> Session {
        Session::start_with(|_| async {}).await
    }

    /// Starts the app after `seed` has put records in the database.
    async fn start_with<F, Fut>(seed: F) -> Session
    where
        F: FnOnce(LocalBackend) -> Fut,
        Fut: std::future::Future<Output = ()>,
    {
        Session::start_sized(100, 30, seed).await
    }

    async fn start_sized<F, Fut>(width: u16, height: u16, seed: F) -> Session
    where
        F: FnOnce(LocalBackend) -> Fut,
        Fut: std::future::Future<Output = ()>,
    {
        let dir = tempfile::tempdir().unwrap();
        let tz = TimeZone::get(ZONE).unwrap();
        let clock = Arc::new(FixedClock::new(start_time()));
        let service = LocalService::open(
            &dir.path().join("links.db"),
            LocalOptions {
                public_url: PUBLIC_URL.into(),
                timezone: tz.clone(),
                clock: clock.clone(),
                ..LocalOptions::default()
            },
        )
        .unwrap();
        let backend = service.default_backend().await.unwrap();
        seed(backend.clone()).await;
        let app_backend: Arc<dyn Backend> = Arc::new(backend.clone());
        Session::run(dir, backend, app_backend, clock, width, height).await
    }

    /// Runs the app on `app_backend` (local or remote); `backend` is the same owner's records
    /// in the database, for checking what was saved.
    async fn run(
        dir: TempDir,
        backend: LocalBackend,
        app_backend: Arc<dyn Backend>,
        clock: Arc<FixedClock>,
        width: u16,
        height: u16,
    ) -> Session {
        let tz = TimeZone::get(ZONE).unwrap();
        let opts = TuiOptions {
            // The temporary path would change every snapshot.
            header: Some("local links.db".into()),
            timezone: tz,
            ..TuiOptions::default()
        };
        let cfg = opts.app_config(app_backend.as_ref(), None).unwrap();
        let (frames_tx, frames) = watch::channel(0);
        let screen = SharedScreen {
            screen: Arc::new(Mutex::new(TestBackend::new(width, height))),
            frames: Arc::new(frames_tx),
        };
        let (keys, events) = unbounded();
        let term_screen = screen.clone();
        let task = tokio::spawn(async move {
            let mut terminal = Terminal::new(term_screen).unwrap();
            run_with(
                &mut terminal,
                events,
                app_backend,
                cfg,
                clock,
                Arc::new(NoDesktop),
            )
            .await
            .unwrap();
        });
        let mut session = Session {
            _dir: dir,
            backend,
            screen,
            frames,
            keys,
            task,
        };
        session.wait_for("Links").await;
        session
    }

    fn send(&self, event: Event) {
        self.keys.unbounded_send(Ok(event)).unwrap();
    }

    fn press(&self, code: KeyCode) {
        self.send(Event::Key(KeyEvent::new(code, KeyModifiers::NONE)));
    }

    fn press_n(&self, code: KeyCode, times: usize) {
        for _ in 0..times {
            self.press(code);
        }
    }

    fn ctrl(&self, c: char) {
        self.send(Event::Key(KeyEvent::new(
            KeyCode::Char(c),
            KeyModifiers::CONTROL,
        )));
    }

    fn type_text(&self, text: &str) {
        for c in text.chars() {
            self.press(KeyCode::Char(c));
        }
    }

    fn paste(&self, text: &str) {
        self.send(Event::Paste(text.into()));
    }

    fn screen(&self) -> String {
        self.screen.lock().to_string()
    }

    /// Waits until `text` shows on the screen, looking again after each frame; fails with the
    /// screen after [`WAIT`].
    async fn wait_for(&mut self, text: &str) {
        let deadline = tokio::time::Instant::now() + WAIT;
        loop {
            let screen = self.screen();
            if screen.contains(text) {
                return;
            }
            if tokio::time::timeout_at(deadline, self.frames.changed())
                .await
                .is_err()
            {
                panic!("`{text}` never showed; the screen:\n{screen}");
            }
        }
    }

    /// Waits until no request is in flight (the header's spinner is gone), so a picture of the
    /// screen does not depend on how fast the database answered.
    async fn settled(&mut self) {
        let deadline = tokio::time::Instant::now() + WAIT;
        while self.screen().contains("working") {
            if tokio::time::timeout_at(deadline, self.frames.changed())
                .await
                .is_err()
            {
                panic!("still working; the screen:\n{}", self.screen());
            }
        }
    }

    async fn links(&self) -> Vec<Link> {
        self.backend
            .list_links(&LinkQuery::default())
            .await
            .unwrap()
            .items
    }

    async fn quit(mut self) {
        self.ctrl('c');
        // A form with changes asks before the app goes: say yes.
        let done = match tokio::time::timeout(Duration::from_millis(300), &mut self.task).await {
            Ok(done) => done,
            Err(_) => {
                self.wait_for("Discard changes?").await;
                self.press(KeyCode::Char('y'));
                tokio::time::timeout(WAIT, &mut self.task)
                    .await
                    .expect("the app quits")
            }
        };
        done.unwrap();
    }
}

fn rule(key: &str, value: &str) -> TargetRule {
    TargetRule {
        key: key.into(),
        value: value.into(),
    }
}

/// From an empty database: `n`, the URL, an alias, an expiry date and time, geo targeting with
/// two countries looked up by name and code, `Ctrl-S`.
#[tokio::test]
async fn create_a_link_with_geo_targeting_and_an_expiry_date() {
    let mut s = Session::start().await;
    s.wait_for("No links yet").await;
    s.press(KeyCode::Char('n'));
    s.wait_for("New link").await;
    s.paste("https://example.com/launch\n");
    s.press(KeyCode::Tab);
    s.type_text("launch");
    // space → tags
    s.press_n(KeyCode::Tab, 2);
    s.type_text("Launch, promo");
    // domain, password, disabled, public → date
    s.press_n(KeyCode::Tab, 5);
    s.type_text("2026-12-24");
    s.press(KeyCode::Tab);
    s.type_text("18:30");
    s.press_n(KeyCode::Tab, 2);
    s.type_text("https://example.com/over");
    s.press(KeyCode::Tab);
    s.press(KeyCode::Right);
    s.press(KeyCode::Tab);
    s.press(KeyCode::Char('a'));
    s.type_text("germany");
    s.press(KeyCode::Enter);
    s.type_text("https://example.de");
    s.press(KeyCode::Enter);
    s.press(KeyCode::Char('a'));
    s.type_text("fr");
    s.press(KeyCode::Enter);
    s.paste("https://example.fr");
    s.press(KeyCode::Enter);
    s.wait_for("FR  France").await;
    s.ctrl('s');
    s.wait_for("Created link http://links.test:8080/launch")
        .await;
    s.wait_for("▶ launch").await;

    let links = s.links().await;
    assert_eq!(links.len(), 1);
    let link = &links[0];
    assert_eq!(link.alias, "launch");
    assert_eq!(link.url, "https://example.com/launch");
    assert_eq!(link.target_type, TargetType::Geo);
    assert_eq!(
        link.geo,
        [
            rule("DE", "https://example.de"),
            rule("FR", "https://example.fr")
        ]
    );
    // 18:30 in Berlin in December is 17:30 UTC.
    assert_eq!(link.ends_at, Some("2026-12-24T17:30:00Z".parse().unwrap()));
    assert_eq!(
        link.expiration_url.as_deref(),
        Some("https://example.com/over")
    );
    assert_eq!(link.expiration_clicks, 0);
    assert_eq!(link.tags, ["launch", "promo"]);
    assert!(!link.password && !link.disabled && !link.public);
    s.quit().await;
}

#[tokio::test]
async fn create_a_link_with_platform_targeting_a_click_limit_and_a_password() {
    let mut s = Session::start().await;
    s.press(KeyCode::Char('n'));
    s.wait_for("New link").await;
    s.type_text("https://example.com/app");
    // alias (generated), space, tags, domain → password
    s.press_n(KeyCode::Tab, 5);
    s.type_text("open sesame");
    s.press(KeyCode::Tab);
    s.press(KeyCode::Tab);
    s.press(KeyCode::Char(' '));
    // date, time → max clicks
    s.press_n(KeyCode::Tab, 3);
    s.type_text("100");
    s.press_n(KeyCode::Tab, 2);
    s.press_n(KeyCode::Right, 2);
    s.press(KeyCode::Tab);
    s.press(KeyCode::Char('a'));
    s.press(KeyCode::Enter);
    s.type_text("https://apps.apple.com/app");
    s.press(KeyCode::Enter);
    s.press(KeyCode::Char('a'));
    s.press(KeyCode::Down);
    s.press(KeyCode::Enter);
    s.type_text("https://play.google.com/app");
    s.press(KeyCode::Enter);
    s.wait_for("Android").await;
    assert!(!s.screen().contains("open sesame"), "{}", s.screen());
    s.ctrl('s');
    s.wait_for("Created link").await;

    let link = &s.links().await[0];
    assert_eq!(link.alias.len(), 5, "a generated alias");
    assert!(link.password);
    assert!(link.public);
    assert_eq!(link.expiration_clicks, 100);
    assert_eq!(link.ends_at, None);
    assert_eq!(link.target_type, TargetType::Platform);
    assert_eq!(
        link.platform,
        [
            rule("iOS", "https://apps.apple.com/app"),
            rule("Android", "https://play.google.com/app")
        ]
    );
    s.quit().await;
}

#[tokio::test]
async fn create_a_link_with_rotation_and_reordered_urls() {
    let mut s = Session::start().await;
    s.press(KeyCode::Char('n'));
    s.wait_for("New link").await;
    s.type_text("https://example.com");
    s.press_n(KeyCode::Tab, 12);
    s.press_n(KeyCode::Right, 3);
    s.press(KeyCode::Tab);
    for url in ["https://a.example.com", "https://b.example.com"] {
        s.press(KeyCode::Char('a'));
        s.type_text(url);
        s.press(KeyCode::Enter);
    }
    s.press(KeyCode::Char('K'));
    s.ctrl('s');
    s.wait_for("Created link").await;
    let link = &s.links().await[0];
    assert_eq!(link.target_type, TargetType::Rotation);
    assert_eq!(
        link.rotation,
        ["https://b.example.com", "https://a.example.com"]
    );
    s.quit().await;
}

#[tokio::test]
async fn invalid_input_shows_the_error_keeps_the_input_and_sends_nothing() {
    let mut s = Session::start().await;
    s.press(KeyCode::Char('n'));
    s.wait_for("New link").await;
    s.type_text("example.com/no-scheme");
    s.press(KeyCode::Tab);
    s.wait_for("must be an absolute http or https URL").await;
    s.type_text("api");
    s.ctrl('s');
    s.wait_for("\"api\" is reserved").await;
    s.wait_for("Not saved: 2 fields need attention").await;
    assert!(s.screen().contains("example.com/no-scheme"));
    assert!(s.links().await.is_empty());
    // Fix the URL (the cursor is on the first bad field) and pick another alias.
    s.press(KeyCode::Home);
    s.type_text("https://");
    s.press(KeyCode::Tab);
    s.press_n(KeyCode::Backspace, 3);
    s.type_text("docs");
    s.ctrl('s');
    s.wait_for("Created link").await;
    assert_eq!(s.links().await[0].url, "https://example.com/no-scheme");
    s.quit().await;
}

#[tokio::test]
async fn a_taken_alias_comes_back_on_its_field_and_the_form_stays() {
    let mut s = Session::start_with(|b| async move {
        let mut input = LinkInput::with_url("https://example.com/first");
        input.alias = Some("Taken".into());
        b.create_link(&input).await.unwrap();
    })
    .await;
    s.wait_for("Taken").await;
    s.press(KeyCode::Char('n'));
    s.wait_for("New link").await;
    s.type_text("https://example.com/second");
    s.press(KeyCode::Tab);
    s.type_text("taken");
    s.ctrl('s');
    s.wait_for("Not saved").await;
    let screen = s.screen();
    assert!(screen.contains("▶ alias"), "{screen}");
    assert!(screen.contains("https://example.com/second"), "{screen}");
    assert_eq!(s.links().await.len(), 1);
    s.quit().await;
}

#[tokio::test]
async fn editing_one_field_changes_only_that_field() {
    let mut s = Session::start_with(|b| async move {
        let input = LinkInput {
            url: Some("https://example.com/edit-me".into()),
            alias: Some("edit-me".into()),
            password: Some("secret".into()),
            public: Some("1".into()),
            expiration_date: Some("2027-01-01".into()),
            expiration_time: Some("09:00".into()),
            expiration_clicks: Some("50".into()),
            target_type: Some("1".into()),
            geo: Some(vec![RuleInput::new("de", "https://example.de")]),
            ..LinkInput::default()
        };
        b.create_link(&input).await.unwrap();
    })
    .await;
    let before = s.links().await.remove(0);
    s.wait_for("edit-me").await;
    s.press(KeyCode::Char('e'));
    s.wait_for("Edit link edit-me").await;
    s.wait_for("DE  Germany").await;
    // url, alias, space, tags, password (keep), disabled, public, date, time → max clicks
    s.press_n(KeyCode::Tab, 9);
    s.press_n(KeyCode::Backspace, 2);
    s.type_text("75");
    s.ctrl('s');
    s.wait_for("Saved link").await;
    let after = s.links().await.remove(0);
    assert_eq!(after.expiration_clicks, 75);
    let unchanged = Link {
        expiration_clicks: 75,
        updated_at: after.updated_at,
        ..before
    };
    assert_eq!(after, unchanged);
    assert!(after.password, "the password was kept");
    s.quit().await;
}

#[tokio::test]
async fn escape_asks_before_discarding_a_changed_form() {
    let mut s = Session::start().await;
    s.press(KeyCode::Char('n'));
    s.wait_for("New link").await;
    s.press(KeyCode::Esc);
    s.wait_for("No links yet").await;
    s.press(KeyCode::Char('n'));
    s.type_text("https://example.com");
    s.press(KeyCode::Esc);
    s.wait_for("Discard changes?").await;
    s.press(KeyCode::Char('n'));
    s.wait_for("https://example.com").await;
    s.press(KeyCode::Esc);
    s.press(KeyCode::Char('y'));
    s.wait_for("No links yet").await;
    assert!(s.links().await.is_empty());
    s.quit().await;
}

#[tokio::test]
async fn create_and_edit_a_space_with_its_colour() {
    let mut s = Session::start().await;
    s.press(KeyCode::Tab);
    s.wait_for("No spaces yet").await;
    s.press(KeyCode::Char('n'));
    s.wait_for("New space").await;
    s.type_text("Launch");
    s.press(KeyCode::Tab);
    s.press_n(KeyCode::Right, 3);
    s.ctrl('s');
    s.wait_for("Created space Launch").await;
    s.wait_for("green").await;
    let spaces = s.backend.list_spaces(&SpaceQuery::default()).await.unwrap();
    assert_eq!(spaces.items[0].name, "Launch");
    assert_eq!(spaces.items[0].color, Color::new(4).unwrap());

    s.press(KeyCode::Char('e'));
    s.wait_for("Edit space Launch").await;
    s.press(KeyCode::Tab);
    s.press(KeyCode::Char('6'));
    s.ctrl('s');
    s.wait_for("Saved space Launch").await;
    s.wait_for("purple").await;
    let space = s.backend.show_space(spaces.items[0].id).await.unwrap();
    assert_eq!(space.name, "Launch");
    assert_eq!(space.color, Color::new(6).unwrap());
    // The new space is offered in the link form's space picker (back to the Links pane).
    s.press(KeyCode::BackTab);
    s.press(KeyCode::Char('n'));
    s.press_n(KeyCode::Tab, 2);
    s.press(KeyCode::Enter);
    s.wait_for("● Launch").await;
    let _ = SpaceInput::default();
    s.quit().await;
}

/// The form inside the app at the smallest size the design promises: scrolled to the targeting
/// rows, under the app's header.
#[tokio::test]
async fn the_link_form_in_the_app_at_80x24() {
    let mut s = Session::start_sized(80, 24, |_| async {}).await;
    s.wait_for("No links yet").await;
    s.press(KeyCode::Char('n'));
    s.wait_for("New link").await;
    s.type_text("https://example.com/a/long/path/that/scrolls/inside/the/field/when/it/is/typed");
    s.press_n(KeyCode::Tab, 12);
    s.press(KeyCode::Right);
    s.press(KeyCode::Tab);
    s.press(KeyCode::Char('a'));
    s.type_text("japan");
    s.press(KeyCode::Enter);
    s.type_text("https://example.jp");
    s.press(KeyCode::Enter);
    s.wait_for("JP  Japan").await;
    s.settled().await;
    insta::assert_snapshot!("app_link_form_geo_row_80x24", s.screen());
    s.quit().await;
}

#[tokio::test]
async fn after_an_edit_the_saved_link_stays_selected() {
    let mut s = Session::start_with(|b| async move {
        for alias in ["first", "second", "third"] {
            let mut input = LinkInput::with_url(format!("https://example.com/{alias}"));
            input.alias = Some(alias.into());
            b.create_link(&input).await.unwrap();
        }
    })
    .await;
    s.wait_for("▶ third").await;
    s.press(KeyCode::Char('j'));
    s.wait_for("▶ second").await;
    s.press(KeyCode::Char('e'));
    s.wait_for("Edit link second").await;
    s.press(KeyCode::End);
    s.type_text("/v2");
    s.ctrl('s');
    s.wait_for("Saved link").await;
    s.wait_for("▶ second").await;
    s.wait_for("https://example.com/second/v2").await;
    s.quit().await;
}

/// The same form on a remote profile: the app speaks to a real `linkdeck serve` through
/// `RemoteBackend`, and what only the server can know (a taken alias, a space deleted meanwhile)
/// comes back as a 422 that lands on its field, with everything typed kept.
#[tokio::test]
async fn a_422_from_linkdeck_serve_lands_on_its_field() {
    let dir = tempfile::tempdir().unwrap();
    let tz = TimeZone::get(ZONE).unwrap();
    let clock = Arc::new(FixedClock::new(start_time()));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    let service = LocalService::open(
        &dir.path().join("served.db"),
        LocalOptions {
            public_url: base.clone(),
            timezone: tz.clone(),
            clock: clock.clone(),
            ..LocalOptions::default()
        },
    )
    .unwrap();
    let owner = service.add_owner("alice").await.unwrap();
    let (key, _) = service.create_key(owner.id, Some("tui")).await.unwrap();
    let server = linkdeck::server::start(
        service.clone(),
        ServeOptions {
            public_url: base.clone(),
            ..ServeOptions::default()
        },
        listener,
    )
    .await
    .unwrap();
    let records = service.for_owner(owner.id);
    let mut taken = LinkInput::with_url("https://example.com/first");
    taken.alias = Some("taken".into());
    records.create_link(&taken).await.unwrap();
    let space = records
        .create_space(&SpaceInput {
            name: Some("Launch".into()),
            color: Some("4".into()),
        })
        .await
        .unwrap();
    let remote = RemoteBackend::new(RemoteOptions {
        timezone: tz,
        ..RemoteOptions::new(base, ApiKey::new(key).unwrap())
    })
    .unwrap();
    let mut s = Session::run(dir, records, Arc::new(remote), clock, 100, 30).await;
    s.wait_for("taken").await;
    // The space picker offers the spaces the app has loaded: wait for them (they arrive apart
    // from the links).
    s.press(KeyCode::Tab);
    s.wait_for("Launch").await;
    s.press(KeyCode::BackTab);
    s.wait_for("taken").await;

    s.press(KeyCode::Char('n'));
    s.wait_for("New link").await;
    s.type_text("https://example.com/second");
    s.press(KeyCode::Tab);
    s.type_text("TAKEN");
    s.press(KeyCode::Tab);
    s.press(KeyCode::Right);
    s.wait_for("◀ ● Launch ▶").await;
    s.ctrl('s');
    s.wait_for("Not saved").await;
    let screen = s.screen();
    assert!(screen.contains("▶ alias"), "{screen}");
    assert!(screen.contains("TAKEN"), "{screen}");
    assert!(screen.contains("https://example.com/second"), "{screen}");
    assert_eq!(s.links().await.len(), 1);

    // The space goes away behind the form's back; the next save is refused on the space.
    s.backend.delete_space(space.id).await.unwrap();
    s.press_n(KeyCode::Backspace, 5);
    s.type_text("second");
    s.ctrl('s');
    s.wait_for("▶ space").await;
    s.wait_for("Not saved").await;
    assert_eq!(s.links().await.len(), 1);

    s.press(KeyCode::Delete);
    s.ctrl('s');
    s.wait_for("Created link").await;
    let links = s.links().await;
    let saved = links.iter().find(|l| l.alias == "second").unwrap();
    assert_eq!(saved.url, "https://example.com/second");
    assert_eq!(saved.space, None);
    s.quit().await;
    server.shutdown().await.unwrap();
}

/// A dead server: the save fails, the form says why and keeps everything typed; pressing
/// Ctrl-S again tries again.
#[tokio::test]
async fn a_dead_server_keeps_the_form_open_with_what_was_typed() {
    // A port that was just free: nothing listens there.
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    drop(listener);
    let dir = tempfile::tempdir().unwrap();
    let clock = Arc::new(FixedClock::new(start_time()));
    let service =
        LocalService::open(&dir.path().join("unused.db"), LocalOptions::default()).unwrap();
    let records = service.default_backend().await.unwrap();
    let remote = RemoteBackend::new(RemoteOptions {
        timeout: Duration::from_secs(2),
        ..RemoteOptions::new(base, ApiKey::new("k").unwrap())
    })
    .unwrap();
    let mut s = Session::run(dir, records, Arc::new(remote), clock, 100, 30).await;
    s.press(KeyCode::Char('n'));
    s.wait_for("New link").await;
    s.type_text("https://example.com/kept");
    s.press(KeyCode::Tab);
    s.type_text("kept");
    s.ctrl('s');
    s.wait_for("Not saved: backend unavailable").await;
    let screen = s.screen();
    assert!(screen.contains("https://example.com/kept"), "{screen}");
    assert!(
        screen
            .lines()
            .any(|l| l.contains("alias") && l.contains(" kept ")),
        "{screen}"
    );
    assert!(screen.contains("New link"), "{screen}");
    s.quit().await;
}
