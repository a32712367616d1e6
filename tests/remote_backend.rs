//! The behaviour suite on `RemoteBackend`, talking over loopback HTTP to a real `linkdeck serve`
//! started in-process on 127.0.0.1:0 over a temporary SQLite database, and again ([`on_postgres`])
//! over a fresh PostgreSQL database; plus what only a remote profile has: keys that are wrong or
//! revoked, a stopped server, and how many requests paging makes.
//!
//! Without PostgreSQL the suite's second run says why and passes; with
//! `LINKDECK_REQUIRE_POSTGRES=1` it fails instead (see `tests/pg_cluster`).

#[macro_use]
mod suite;
mod common;
#[path = "common/counting_proxy.rs"]
mod counting_proxy;
mod embedded;
mod pg_cluster;
mod raw;

use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use jiff::Timestamp;
use jiff::tz::TimeZone;
use tempfile::TempDir;

use common::Store;
use counting_proxy::CountingProxy;
use linkdeck::backend::Backend;
use linkdeck::backend::local::{LocalOptions, LocalService};
use linkdeck::backend::remote::{ApiKey, RemoteBackend, RemoteOptions};
use linkdeck::domain::{Domain, Error, FixedClock, Id, LinkInput, LinkQuery};
use linkdeck::server::{ServeOptions, ServerHandle};
use raw::RawDb;

pub const PUBLIC_URL: &str = "http://links.test:8080";

/// A temporary database served by `linkdeck serve` on a loopback port, with a fixed clock
/// shared by the service and the test, two owners each with a key, and a `RemoteBackend` for
/// each.
pub struct RemoteHarness {
    _dir: TempDir,
    clock: Arc<FixedClock>,
    service: LocalService,
    raw: RawDb,
    server: ServerHandle,
    mine_id: Id,
    theirs_id: Id,
    mine_key: String,
    mine: RemoteBackend,
    theirs: RemoteBackend,
}

impl RemoteHarness {
    pub async fn new() -> RemoteHarness {
        Self::with_options(suite_options()).await
    }

    /// The suite's server over a fresh PostgreSQL database; `None` when PostgreSQL is not
    /// installed (the cluster has said so).
    pub async fn on_postgres() -> Option<RemoteHarness> {
        let store = Store::Postgres {
            url: pg_cluster::cluster()?.fresh_database(),
            password: pg_cluster::PASSWORD.into(),
        };
        Some(Self::on(store, suite_options()).await)
    }

    pub async fn with_options(opts: ServeOptions) -> RemoteHarness {
        Self::on(Store::Sqlite, opts).await
    }

    async fn on(store: Store, opts: ServeOptions) -> RemoteHarness {
        let dir = tempfile::tempdir().unwrap();
        let clock = Arc::new(FixedClock::new(suite::start()));
        let location = store.location(dir.path(), "links.db");
        let service = LocalService::open_at(
            &location,
            LocalOptions {
                public_url: PUBLIC_URL.into(),
                timezone: zone(),
                clock: clock.clone(),
                ..LocalOptions::default()
            },
        )
        .await
        .unwrap();
        let mine_id = service.default_backend().await.unwrap().owner_id();
        let theirs_id = service.add_owner("someone else").await.unwrap().id;
        let (mine_key, _) = service.create_key(mine_id, Some("tests")).await.unwrap();
        let (theirs_key, _) = service.create_key(theirs_id, None).await.unwrap();
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let server = linkdeck::server::start(service.clone(), opts, listener)
            .await
            .unwrap();
        let mine = remote(&server.url(), &mine_key);
        let theirs = remote(&server.url(), &theirs_key);
        RemoteHarness {
            _dir: dir,
            clock,
            service,
            raw: RawDb::new(location),
            server,
            mine_id,
            theirs_id,
            mine_key,
            mine,
            theirs,
        }
    }
}

fn suite_options() -> ServeOptions {
    ServeOptions {
        // The suite makes many quick requests; rate limits have their own tests.
        api_rate_limit: 0,
        ..ServeOptions::default()
    }
}

fn zone() -> TimeZone {
    TimeZone::get(suite::ZONE).unwrap()
}

fn remote(base_url: &str, key: &str) -> RemoteBackend {
    RemoteBackend::new(RemoteOptions {
        base_url: base_url.to_owned(),
        api_key: ApiKey::new(key).unwrap(),
        timeout: Duration::from_secs(10),
        timezone: zone(),
    })
    .unwrap()
}

#[async_trait]
impl suite::Harness for RemoteHarness {
    fn backend(&self) -> &dyn Backend {
        &self.mine
    }
    fn other_owner(&self) -> &dyn Backend {
        &self.theirs
    }
    fn set_now(&self, t: Timestamp) {
        self.clock.set(t);
    }
    fn timezone(&self) -> TimeZone {
        zone()
    }
    fn public_url(&self) -> String {
        PUBLIC_URL.into()
    }
    async fn add_domain(&self, name: &str, other: bool) -> Domain {
        // Domains are managed on the embedded service only; the API lists and shows them.
        let owner = if other { self.theirs_id } else { self.mine_id };
        self.service
            .for_owner(owner)
            .add_domain(name)
            .await
            .unwrap()
    }
    async fn set_clicks(&self, id: Id, clicks: u64) {
        self.raw.set_clicks(id, clicks).await;
    }
    async fn record_visits(&self, visits: Vec<linkdeck::backend::local::serving::VisitRow>) {
        self.service.record_visits(visits).await.unwrap();
    }
}

backend_suite!(RemoteHarness::new().await);

/// The behaviour suite again, through a server over PostgreSQL.
mod on_postgres {
    use crate::{RemoteHarness, suite};

    backend_suite!(match RemoteHarness::on_postgres().await {
        Some(harness) => harness,
        None => return,
    });
}

// ---- remote only --------------------------------------------------------------------------------

/// Fails the test instead of hanging it.
async fn bounded<T>(fut: impl std::future::Future<Output = T>) -> T {
    tokio::time::timeout(Duration::from_secs(60), fut)
        .await
        .expect("the call did not return within 60s")
}

#[tokio::test]
async fn a_wrong_key_is_unauthorized_in_one_line() {
    let h = RemoteHarness::new().await;
    let wrong = remote(&h.server.url(), "ld_not-a-real-key");
    let err = bounded(wrong.list_links(&LinkQuery::default()))
        .await
        .unwrap_err();
    assert!(matches!(err, Error::Unauthorized(_)), "{err:?}");
    let message = err.to_string();
    assert!(!message.contains('\n'), "{message}");
    assert!(!message.contains("not-a-real-key"), "{message}");
    assert!(message.contains(&h.server.url()), "{message}");
}

#[tokio::test]
async fn a_revoked_key_stops_working() {
    let h = RemoteHarness::new().await;
    h.mine.list_links(&LinkQuery::default()).await.unwrap();
    let keys = h.service.list_keys(Some(h.mine_id)).await.unwrap();
    h.service.revoke_key(keys[0].id).await.unwrap();
    let err = bounded(h.mine.list_links(&LinkQuery::default()))
        .await
        .unwrap_err();
    assert!(matches!(err, Error::Unauthorized(_)), "{err:?}");
}

#[tokio::test]
async fn a_stopped_server_is_unavailable_at_once() {
    let h = RemoteHarness::new().await;
    let url = h.server.url();
    h.server.shutdown().await.unwrap();
    let err = bounded(h.mine.show_link(1)).await.unwrap_err();
    assert_eq!(
        err,
        Error::Unavailable(format!("cannot reach {url}: connection refused"))
    );
}

#[tokio::test]
async fn the_server_rate_limit_comes_back_as_rate_limited() {
    let h = RemoteHarness::with_options(ServeOptions {
        api_rate_limit: 2,
        ..ServeOptions::default()
    })
    .await;
    let mut last = Ok(());
    for _ in 0..5 {
        last = bounded(h.mine.list_links(&LinkQuery::default()))
            .await
            .map(drop);
        if last.is_err() {
            break;
        }
    }
    match last {
        Err(Error::RateLimited { retry_after }) => {
            assert!(retry_after.is_some_and(|d| d > Duration::ZERO && d <= Duration::from_secs(60)))
        }
        other => panic!("expected RateLimited, got {other:?}"),
    }
}

/// Walks every page of the default list at `per_page` and returns how many links it saw.
async fn walk(backend: &dyn Backend, per_page: u32) -> usize {
    let mut query = LinkQuery {
        per_page,
        ..LinkQuery::default()
    };
    let mut seen = 0;
    loop {
        let page = backend.list_links(&query).await.unwrap();
        seen += page.items.len();
        if !page.has_next() {
            return seen;
        }
        query.page = page.page + 1;
    }
}

async fn seed(h: &RemoteHarness, count: usize) {
    let rows = (0..count)
        .map(|i| {
            (
                i + 1,
                LinkInput::with_url(format!("https://example.com/{i}")),
                None,
            )
        })
        .collect();
    h.service
        .for_owner(h.mine_id)
        .import_batch(Vec::new(), rows)
        .await
        .unwrap();
}

#[tokio::test]
async fn paging_asks_for_no_more_pages_than_needed() {
    let h = RemoteHarness::new().await;
    seed(&h, 1_050).await;
    let proxy = CountingProxy::start(&h.server.url()).await;
    let through_proxy = remote(&proxy.base_url(), &h.mine_key);

    assert_eq!(bounded(walk(&through_proxy, 100)).await, 1_050);
    assert_eq!(proxy.count(), 11, "1,050 links at 100 a page");

    proxy.reset();
    assert_eq!(bounded(walk(&through_proxy, 10)).await, 1_050);
    assert_eq!(proxy.count(), 105);
}

// ---- the command line on a remote profile -------------------------------------------------------

/// Runs the real binary with a remote profile (from a config file whose key comes from a
/// command) against the harness's server; returns (exit code, stdout, stderr).
struct Cli {
    dir: TempDir,
    config: std::path::PathBuf,
}

impl Cli {
    fn new(server_url: &str, key: &str) -> Cli {
        let dir = tempfile::tempdir().unwrap();
        let config = dir.path().join("config.toml");
        std::fs::write(
            &config,
            format!(
                "default_profile = \"work\"\n\n[profiles.work]\nbackend = \"remote\"\n\
                 base_url = \"{server_url}\"\napi_key_command = \"printf '%s\\\\n' {key}\"\n\
                 timeout_secs = 10\ntimezone = \"{}\"\n",
                suite::ZONE
            ),
        )
        .unwrap();
        Cli { dir, config }
    }

    async fn run(&self, args: &[&str]) -> (i32, String, String) {
        let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_linkdeck"));
        let root = self.dir.path();
        cmd.env("XDG_CONFIG_HOME", root.join("xdg-config"))
            .env("XDG_DATA_HOME", root.join("xdg-data"))
            .env("XDG_STATE_HOME", root.join("xdg-state"))
            .env("HOME", root)
            .env("TZ", "UTC")
            .env_remove("LINKDECK_LOG")
            .arg("--config")
            .arg(&self.config)
            .args(args);
        let out = tokio::task::spawn_blocking(move || cmd.output().unwrap())
            .await
            .unwrap();
        (
            out.status.code().unwrap_or(-1),
            String::from_utf8_lossy(&out.stdout).into_owned(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    }

    async fn ok(&self, args: &[&str]) -> String {
        let (code, stdout, stderr) = bounded(self.run(args)).await;
        assert_eq!(code, 0, "{args:?} failed: {stderr}");
        stdout
    }

    async fn json(&self, args: &[&str]) -> serde_json::Value {
        let mut all = vec!["--json"];
        all.extend_from_slice(args);
        serde_json::from_str(&self.ok(&all).await).unwrap()
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_command_works_on_a_remote_profile() {
    let h = RemoteHarness::new().await;
    h.service
        .for_owner(h.mine_id)
        .add_domain("sho.rt")
        .await
        .unwrap();
    let cli = Cli::new(&h.server.url(), &h.mine_key);

    cli.ok(&["spaces", "create", "Launch", "--color", "green"])
        .await;
    cli.ok(&[
        "links",
        "create",
        "https://example.com/spring",
        "--alias",
        "spring",
        "--space",
        "Launch",
        "--domain",
        "sho.rt",
        "--expires",
        "2027-03-21 09:00",
        "--max-clicks",
        "5",
        "--geo",
        "US=https://us.example",
    ])
    .await;
    let shown = cli.json(&["links", "show", "spring"]).await;
    assert_eq!(shown["alias"], "spring");
    assert_eq!(shown["space"]["name"], "Launch");
    assert_eq!(shown["domain"]["name"], "https://sho.rt");
    assert_eq!(shown["short_url"], "https://sho.rt/spring");
    // Typed in the profile's zone, read by the server in the same zone.
    assert_eq!(shown["ends_at"], "2027-03-21T13:00:00Z");
    assert_eq!(shown["geo"][0]["key"], "US", "{shown}");

    cli.ok(&["links", "update", "spring", "--no-targeting", "--disabled"])
        .await;
    let disabled = cli.json(&["links", "list", "--status", "disabled"]).await;
    assert_eq!(disabled["total"], 1);
    assert_eq!(disabled["items"][0]["target_type"], 0);
    let all = cli.json(&["links", "list", "--all"]).await;
    assert_eq!(all.as_array().unwrap().len(), 1);
    let spaces = cli.json(&["spaces", "list"]).await;
    assert_eq!(spaces["items"][0]["name"], "Launch");
    let domains = cli.json(&["domains", "list"]).await;
    assert_eq!(domains[0]["name"], "https://sho.rt");

    // Export, delete, import back: the import goes request by request.
    let file = cli.dir.path().join("links.json");
    cli.ok(&["export", file.to_str().unwrap()]).await;
    cli.ok(&["links", "delete", "spring"]).await;
    cli.ok(&["import", file.to_str().unwrap()]).await;
    let back = cli.json(&["links", "show", "spring"]).await;
    assert_eq!(back["space"]["name"], "Launch");
    assert_eq!(back["ends_at"], "2027-03-21T13:00:00Z");

    // A file with one bad row sends nothing.
    let bad = cli.dir.path().join("bad.csv");
    std::fs::write(
        &bad,
        "url,alias\nhttps://ok.example,fine\njavascript:alert(1),evil\n",
    )
    .unwrap();
    let (code, _, stderr) = bounded(cli.run(&["import", bad.to_str().unwrap()])).await;
    assert_eq!(code, 3, "{stderr}");
    assert!(stderr.contains("line 3: url"), "{stderr}");
    let count = cli.json(&["links", "list"]).await;
    assert_eq!(count["total"], 1, "nothing of the bad file was created");

    // Commands of the embedded database say they are local-only.
    for args in [
        &["domains", "add", "x.example"][..],
        &["domains", "remove", "sho.rt"][..],
        &["owners", "list"][..],
        &["keys", "list"][..],
    ] {
        let (code, _, stderr) = bounded(cli.run(args)).await;
        assert_ne!(code, 0);
        assert!(
            stderr.contains("works only on a local database"),
            "{stderr}"
        );
        assert_eq!(stderr.trim_end().lines().count(), 1, "{stderr}");
    }

    // A wrong key: one line, exit 5, the key not shown.
    let wrong = Cli::new(&h.server.url(), "ld_wrong_key_123");
    let (code, _, stderr) = bounded(wrong.run(&["links", "list"])).await;
    assert_eq!(code, 5, "{stderr}");
    assert_eq!(stderr.trim_end().lines().count(), 1, "{stderr}");
    assert!(!stderr.contains("ld_wrong_key_123"), "{stderr}");
}

/// A client of `h`'s server through a proxy that answers only the v1 API, as a phpShort site
/// does; the proxy lives as long as the first.
async fn v1_only(h: &RemoteHarness) -> (CountingProxy, RemoteBackend) {
    let proxy = CountingProxy::breaking(
        &h.server.url(),
        counting_proxy::Breaks {
            v1_only: true,
            ..counting_proxy::Breaks::default()
        },
    )
    .await;
    let v1 = remote(&format!("http://{}", proxy.addr), &h.mine_key);
    (proxy, v1)
}

/// A phpShort site has no domain settings: the client says so and sends nothing.
#[tokio::test]
async fn domain_settings_on_a_v1_only_server_are_refused_with_the_reason() {
    let h = RemoteHarness::new().await;
    let domain = h
        .service
        .for_owner(h.mine_id)
        .add_domain("sho.rt")
        .await
        .unwrap();
    let (_proxy, v1) = v1_only(&h).await;
    // Listing reads them as the defaults, whatever the server sends.
    let listed = v1.list_domains(1, 10).await.unwrap();
    assert_eq!(listed.items[0].name, "https://sho.rt");
    let input = linkdeck::domain::DomainInput {
        root_url: Some("https://home.example/".into()),
        ..Default::default()
    };
    match v1.update_domain(domain.id, &input).await {
        Err(Error::Unsupported(message)) => {
            assert!(message.contains("no domain fallbacks"), "{message}");
            assert!(message.contains("phpShort"), "{message}");
        }
        other => panic!("expected unsupported, got {other:?}"),
    }
    let stored = h
        .service
        .for_owner(h.mine_id)
        .show_domain(domain.id)
        .await
        .unwrap();
    assert_eq!(stored.settings().root_url, None);
    // A linkdeck server takes them.
    let set = h.mine.update_domain(domain.id, &input).await.unwrap();
    assert_eq!(
        set.settings().root_url.as_deref(),
        Some("https://home.example/")
    );
}

/// The app's webhooks popup on a remote profile: a linkdeck server's subscriptions of the key's
/// owner, each with its latest deliveries; another owner sees none of them, and a server in
/// front of which only the v1 API answers keeps none.
#[tokio::test]
async fn webhooks_come_from_the_server_with_their_deliveries() {
    use linkdeck::backend::local::webhooks::{DeliveryPolicy, WebhookKey};
    use linkdeck::domain::WebhookInput;
    let h = RemoteHarness::with_options(ServeOptions {
        webhooks: Some(linkdeck::server::WebhookSettings {
            key: WebhookKey::from_text(&"k".repeat(40)).unwrap(),
            policy: DeliveryPolicy::default(),
        }),
        ..suite_options()
    })
    .await;
    let input = WebhookInput {
        url: "https://hooks.example.com/in".into(),
        events: vec!["link.created".into()],
    };
    let (secret, hook) = h.mine.create_webhook(&input).await.unwrap();
    assert!(secret.starts_with("whsec_"));
    h.mine
        .create_link(&LinkInput::with_url("https://example.com/told"))
        .await
        .unwrap();

    let hooks = h.mine.webhooks(5).await.unwrap().expect("kept");
    assert_eq!(hooks.len(), 1, "{hooks:?}");
    let (listed, deliveries) = &hooks[0];
    assert_eq!(listed.id, hook.id);
    assert_eq!(listed.url, "https://hooks.example.com/in");
    assert_eq!(deliveries.len(), 1, "{deliveries:?}");
    assert_eq!(deliveries[0].event, "link.created");
    assert_eq!(deliveries[0].webhook_id, hook.id);

    assert_eq!(h.theirs.webhooks(5).await.unwrap(), Some(Vec::new()));
    assert_eq!(
        h.mine.webhooks_held().await.unwrap(),
        None,
        "it holds its key"
    );
    let (_proxy, v1) = v1_only(&h).await;
    assert_eq!(v1.webhooks(5).await.unwrap(), None);
    assert_eq!(
        v1.webhooks_held().await.unwrap(),
        None,
        "it has no webhooks to hold"
    );
}

/// A server started without its webhook key lists its webhooks, and says why their deliveries
/// cannot go out, naming what its operator sets (the app shows it above the list).
#[tokio::test]
async fn a_server_without_its_webhook_key_says_its_deliveries_are_held() {
    let h = RemoteHarness::with_options(suite_options()).await;
    assert_eq!(h.mine.webhooks(5).await.unwrap(), Some(Vec::new()));
    let held = h.mine.webhooks_held().await.unwrap().expect("held");
    for words in ["keeps no webhook key", "LINKDECK_WEBHOOK_KEY"] {
        assert!(held.contains(words), "{words}: {held}");
    }
}
