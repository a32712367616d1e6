//! The pages of `linkdeck serve` in a real browser: headless Chromium driven through
//! chromedriver (Debian's `chromium` and `chromium-driver`), against a real server on a loopback
//! port. The password form is typed into and submitted, the expired, disabled, missing, preview
//! and statistics pages are looked at, a link's preview card as a chat app's preview agent sees it
//! (and a person does not), and no page may run script.
//!
//! Without Chromium these tests say why and pass; with `LINKDECK_REQUIRE_BROWSER=1` (as CI sets
//! it) they fail instead. Screenshots of every page land in `target/browser-screenshots/`.

mod common;
mod raw;

use std::net::TcpListener as StdListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use fantoccini::{Client, ClientBuilder, Locator};
use serde_json::json;

use common::TestServer;

const REQUIRE: &str = "LINKDECK_REQUIRE_BROWSER";
const WAIT: Duration = Duration::from_secs(20);

/// Where a program is: `$VAR` if set, else the first of `names` on the `PATH`.
fn program(var: &str, names: &[&str]) -> Option<PathBuf> {
    if let Some(path) = std::env::var_os(var) {
        return Some(PathBuf::from(path));
    }
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .flat_map(|dir| names.iter().map(move |n| dir.join(n)))
        .find(|p| p.is_file())
}

/// Headless Chromium under chromedriver, both stopped when dropped.
struct Browser {
    client: Option<Client>,
    driver: Child,
    _profile: tempfile::TempDir,
}

impl Browser {
    /// A fresh browser, or `None` (after saying why) when Chromium is not installed and CI does
    /// not require it.
    async fn start(test: &str) -> Option<Browser> {
        Self::start_as(test, None).await
    }

    /// [`Browser::start`], sending `agent` as its User-Agent when given.
    async fn start_as(test: &str, agent: Option<&str>) -> Option<Browser> {
        let chromium = program("LINKDECK_CHROMIUM", &["chromium", "chromium-browser"]);
        let driver = program("LINKDECK_CHROMEDRIVER", &["chromedriver"]);
        let (Some(chromium), Some(driver)) = (chromium, driver) else {
            let why = "Chromium and chromedriver are not installed (apt-get install chromium chromium-driver)";
            if std::env::var_os(REQUIRE).is_some_and(|v| v == "1") {
                panic!("{test}: {why}, and {REQUIRE}=1 requires them");
            }
            eprintln!("skipping {test}: {why}");
            return None;
        };
        let port = StdListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        // Its own process group, so that ending it ends the Chromium it starts too.
        let driver =
            std::os::unix::process::CommandExt::process_group(&mut Command::new(driver), 0)
                .arg(format!("--port={port}"))
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .spawn()
                .expect("chromedriver starts");
        let profile = tempfile::tempdir().unwrap();
        let mut browser = Browser {
            client: None,
            driver,
            _profile: profile,
        };
        let mut args = vec![
            json!("--headless"),
            json!("--no-sandbox"),
            json!("--disable-gpu"),
            json!("--disable-dev-shm-usage"),
            json!("--disable-background-networking"),
            json!("--disable-component-update"),
            json!("--disable-sync"),
            json!("--no-first-run"),
            json!("--disable-extensions"),
            json!("--window-size=1000,800"),
            json!(format!(
                "--user-data-dir={}",
                browser._profile.path().display()
            )),
        ];
        if let Some(agent) = agent {
            args.push(json!(format!("--user-agent={agent}")));
        }
        let mut caps = serde_json::Map::new();
        caps.insert(
            "goog:chromeOptions".into(),
            json!({ "binary": chromium, "args": args }),
        );
        let deadline = Instant::now() + WAIT;
        let client = loop {
            match ClientBuilder::rustls()
                .expect("TLS set-up")
                .capabilities(caps.clone())
                .connect(&format!("http://127.0.0.1:{port}"))
                .await
            {
                Ok(client) => break client,
                Err(e) if Instant::now() < deadline => {
                    let _ = e;
                    // chromedriver is still starting: its port answers once it is ready.
                    tokio::time::sleep(Duration::from_millis(100)).await;
                }
                Err(e) => panic!("{test}: chromedriver did not start Chromium: {e}"),
            }
        };
        browser.client = Some(client);
        Some(browser)
    }

    fn client(&self) -> &Client {
        self.client.as_ref().unwrap()
    }

    /// Saves what the browser shows as `target/browser-screenshots/NAME.png`.
    async fn screenshot(&self, name: &str) {
        let dir = Path::new(env!("CARGO_TARGET_TMPDIR"))
            .parent()
            .unwrap()
            .join("browser-screenshots");
        std::fs::create_dir_all(&dir).unwrap();
        let png = self.client().screenshot().await.unwrap();
        std::fs::write(dir.join(format!("{name}.png")), png).unwrap();
    }

    /// The text of the page's body.
    async fn text(&self) -> String {
        self.client()
            .find(Locator::Css("body"))
            .await
            .unwrap()
            .text()
            .await
            .unwrap()
    }

    /// Checks that the page runs no script: the CSP forbids it, no `<script>` element is in
    /// the document, and nothing a script would have done happened.
    async fn assert_no_script(&self, page: &str) {
        let scripts = self
            .client()
            .find_all(Locator::Css("script"))
            .await
            .unwrap();
        assert!(
            scripts.is_empty(),
            "{page}: {} script elements",
            scripts.len()
        );
        let handlers = self
            .client()
            .execute(
                "return [...document.querySelectorAll('*')].flatMap(e => \
                 [...e.attributes].filter(a => a.name.startsWith('on')).map(a => a.name)).length",
                vec![],
            )
            .await
            .unwrap();
        assert_eq!(handlers, json!(0), "{page}: inline event handlers");
        let title = self.client().title().await.unwrap();
        assert!(!title.contains("pwned"), "{page}: a script ran ({title})");
    }

    /// Waits until the browser is at a URL starting with `prefix`.
    async fn wait_for_url(&self, prefix: &str) -> String {
        let deadline = Instant::now() + WAIT;
        loop {
            let url = self.client().current_url().await.unwrap().to_string();
            if url.starts_with(prefix) {
                return url;
            }
            assert!(
                Instant::now() < deadline,
                "still at {url}, waiting for {prefix}"
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }
}

impl Drop for Browser {
    fn drop(&mut self) {
        // chromedriver and the Chromium it started share a process group: end them all.
        // SAFETY: kill(2) with a negative pid signals that process group only.
        unsafe {
            libc::kill(-(self.driver.id() as i32), libc::SIGKILL);
        }
        let _ = self.driver.wait();
    }
}

/// A second loopback site, on another port (another origin): `/landing` is a page titled
/// "Arrived".
async fn destination_site() -> String {
    let app = axum::Router::new().route(
        "/landing",
        axum::routing::get(|| async {
            axum::response::Html("<!doctype html><title>Arrived</title><p>You made it.</p>")
        }),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, app).await });
    base
}

#[tokio::test]
async fn the_right_password_typed_into_the_form_reaches_another_origin() {
    let Some(browser) = Browser::start("password form").await else {
        return;
    };
    let s = TestServer::start().await;
    let destination = destination_site().await;
    s.create_link(&[
        ("url", &format!("{destination}/landing")),
        ("alias", "locked"),
        ("password", "open sesame"),
    ])
    .await;
    let b = browser.client();
    b.goto(&s.url("/locked")).await.unwrap();
    browser.screenshot("password-form").await;
    browser.assert_no_script("password form").await;

    // A wrong password first: the form comes back saying so.
    let field = b.find(Locator::Css("input[name=password]")).await.unwrap();
    field.send_keys("wrong guess").await.unwrap();
    b.find(Locator::Css("button[type=submit]"))
        .await
        .unwrap()
        .click()
        .await
        .unwrap();
    b.wait()
        .at_most(WAIT)
        .for_element(Locator::Css("p.error"))
        .await
        .unwrap();
    assert!(browser.text().await.contains("not right"));
    browser.screenshot("password-wrong").await;

    // The right one: the browser follows the redirect to the other origin.
    let field = b.find(Locator::Css("input[name=password]")).await.unwrap();
    field.send_keys("open sesame").await.unwrap();
    b.find(Locator::Css("button[type=submit]"))
        .await
        .unwrap()
        .click()
        .await
        .unwrap();
    let at = browser.wait_for_url(&destination).await;
    assert_eq!(at, format!("{destination}/landing"));
    assert_eq!(b.title().await.unwrap(), "Arrived");
    browser.screenshot("password-arrived").await;
}

#[tokio::test]
async fn every_page_renders_and_none_runs_script() {
    let Some(browser) = Browser::start("pages").await else {
        return;
    };
    let s = TestServer::start().await;
    // Markup in a destination is shown as text, never run.
    let hostile = "https://example.com/?q=\"><script>document.title='pwned'</script><img/src=x/onerror=document.title='pwned'>";
    s.create_link(&[("url", hostile), ("alias", "hostile")])
        .await;
    s.create_link(&[
        ("url", "https://example.com/off"),
        ("alias", "off"),
        ("disabled", "1"),
    ])
    .await;
    s.create_link(&[
        ("url", "https://example.com/once"),
        ("alias", "once"),
        ("expiration_clicks", "1"),
    ])
    .await;
    s.visit("/once", &[]).await;
    let b = browser.client();
    for (path, name, says) in [
        ("/no-such-link", "not-found", "Link not found"),
        ("/off", "disabled", "disabled"),
        ("/once", "expired", "expired"),
        ("/hostile/+", "preview", "leads to"),
    ] {
        b.goto(&s.url(path)).await.unwrap();
        let text = browser.text().await;
        assert!(text.contains(says), "{path}: {text}");
        browser.assert_no_script(path).await;
        browser.screenshot(name).await;
    }
    // The preview shows the hostile destination as text.
    b.goto(&s.url("/hostile/+")).await.unwrap();
    let shown = b
        .find(Locator::Css("p.url a"))
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(
        shown.contains("<script>document.title='pwned'</script>"),
        "{shown}"
    );
}

#[tokio::test]
async fn the_stats_page_renders_its_figures() {
    let Some(browser) = Browser::start("stats page").await else {
        return;
    };
    let s = TestServer::start().await;
    let link = s
        .create_link(&[
            ("url", "https://example.com/public"),
            ("alias", "open"),
            ("public", "1"),
        ])
        .await;
    for referrer in [
        "https://news.example.org/a",
        "https://news.example.org/b",
        "https://blog.example.net/",
    ] {
        s.visit("/open", &[("referer", referrer)]).await;
    }
    // Visits are written within a second.
    s.wait_for_clicks(link["id"].as_i64().unwrap(), 3).await;
    let b = browser.client();
    b.goto(&s.url("/open/stats")).await.unwrap();
    let text = browser.text().await;
    browser.screenshot("stats").await;
    browser.assert_no_script("stats").await;
    assert!(text.contains("3 clicks"), "{text}");
    assert!(text.contains("news.example.org"), "{text}");
    let cells: Vec<String> = {
        let mut cells = Vec::new();
        for cell in b.find_all(Locator::Css("td")).await.unwrap() {
            cells.push(cell.text().await.unwrap());
        }
        cells
    };
    let after = |label: &str| {
        cells
            .iter()
            .position(|c| c == label)
            .map(|i| cells[i + 1].clone())
    };
    assert_eq!(after("news.example.org").as_deref(), Some("2"), "{cells:?}");
    assert_eq!(after("blog.example.net").as_deref(), Some("1"), "{cells:?}");
    assert_eq!(after("Windows").as_deref(), Some("3"), "{cells:?}");
}

/// The value of the `<meta>` tag `selector` names on the page, or null when there is none.
async fn meta(browser: &Browser, selector: &str) -> serde_json::Value {
    browser
        .client()
        .execute(
            "const m = document.querySelector(arguments[0]); return m ? m.content : null",
            vec![json!(selector)],
        )
        .await
        .unwrap()
}

/// A link with a preview: a chat app's link-preview agent is shown its card (the Open Graph
/// and Twitter tags, escaped, and no script); a person's browser never sees them and arrives
/// at the destination.
#[tokio::test]
async fn a_preview_agent_sees_the_card_and_a_person_the_destination() {
    const SLACK: &str = "Slackbot-LinkExpanding 1.0 (+https://api.slack.com/robots)";
    let Some(agent) = Browser::start_as("preview card", Some(SLACK)).await else {
        return;
    };
    let s = TestServer::start().await;
    let destination = destination_site().await;
    let title = "Spring <sale> & \"more\"</title><script>document.title='p'+'wned'</script>";
    s.create_link(&[
        ("url", &format!("{destination}/landing")),
        ("alias", "card"),
        ("preview_title", title),
        ("preview_description", "Half price, this week only"),
        ("preview_image", "https://img.example/spring.png"),
    ])
    .await;
    agent.client().goto(&s.url("/card")).await.unwrap();
    assert_eq!(
        agent.client().current_url().await.unwrap().as_str(),
        s.url("/card"),
        "the agent stays on the short link"
    );
    assert_eq!(
        meta(&agent, "meta[property='og:title']").await,
        json!(title)
    );
    assert_eq!(
        meta(&agent, "meta[name='twitter:title']").await,
        json!(title)
    );
    assert_eq!(
        meta(&agent, "meta[property='og:description']").await,
        json!("Half price, this week only")
    );
    assert_eq!(
        meta(&agent, "meta[property='og:image']").await,
        json!("https://img.example/spring.png")
    );
    assert_eq!(
        meta(&agent, "meta[name='twitter:card']").await,
        json!("summary_large_image")
    );
    agent.assert_no_script("preview card").await;
    agent.screenshot("preview-card").await;
    drop(agent);

    let Some(person) = Browser::start("preview card, a person").await else {
        return;
    };
    person.client().goto(&s.url("/card")).await.unwrap();
    let at = person.wait_for_url(&destination).await;
    assert_eq!(at, format!("{destination}/landing"));
    assert_eq!(person.client().title().await.unwrap(), "Arrived");
    assert_eq!(
        meta(&person, "meta[property='og:title']").await,
        json!(null)
    );
}
