//! Webhooks delivered by the real `linkdeck serve` to a real receiver on loopback: Python's
//! `http.server`, which checks every signature with Python's own `hmac` (an implementation
//! independent of ours) and writes down each request it is sent. On a SQLite file the receiver
//! refuses the first deliveries and is down across a restart of `serve`; on PostgreSQL two
//! servers share the database and the outbox.

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::common::client;
use crate::{Sandbox, database};

/// The receiver: `python3 - PORT DIR FAIL_FIRST`. It answers 500 to the first FAIL_FIRST
/// requests, 204 to the rest, and appends each request to DIR/requests.jsonl with whether its
/// signature verifies under the secret in DIR/secret (read at each request).
const RECEIVER: &str = r#"
import base64, hashlib, hmac, json, os, sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

port, folder, fail_first = int(sys.argv[1]), sys.argv[2], int(sys.argv[3])
seen = {"n": 0}

def verifies(secret, msg_id, timestamp, body, header):
    key = base64.b64decode(secret[len("whsec_"):])
    signed = msg_id.encode() + b"." + timestamp.encode() + b"." + body
    expected = base64.b64encode(hmac.new(key, signed, hashlib.sha256).digest()).decode()
    return any(hmac.compare_digest(s.split(",", 1)[1], expected)
               for s in header.split() if s.startswith("v1,"))

class Hook(BaseHTTPRequestHandler):
    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("content-length", 0)))
        seen["n"] += 1
        failed = seen["n"] <= fail_first
        with open(os.path.join(folder, "secret")) as f:
            secret = f.read().strip()
        record = {
            "id": self.headers.get("webhook-id"),
            "timestamp": self.headers.get("webhook-timestamp"),
            "verified": verifies(secret, self.headers.get("webhook-id", ""),
                                 self.headers.get("webhook-timestamp", ""), body,
                                 self.headers.get("webhook-signature", "")),
            "refused": failed,
            "body": json.loads(body),
        }
        with open(os.path.join(folder, "requests.jsonl"), "a") as f:
            f.write(json.dumps(record) + "\n")
        self.send_response(500 if failed else 204)
        self.end_headers()

    def log_message(self, *args):
        pass

server = ThreadingHTTPServer(("127.0.0.1", port), Hook)
print(server.server_address[1], flush=True)
server.serve_forever()
"#;

/// A running receiver; killed when dropped.
struct Receiver {
    child: Child,
    port: u16,
    dir: PathBuf,
}

impl Receiver {
    /// Starts the receiver on `port` (0: a free one) writing into `dir`; `None` without python3.
    fn start(dir: &Path, port: u16, fail_first: u32) -> Option<Receiver> {
        use std::io::{BufRead, BufReader, Write};
        let mut child = match Command::new("python3")
            .args([
                "-",
                &port.to_string(),
                dir.to_str().unwrap(),
                &fail_first.to_string(),
            ])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
        {
            Ok(child) => child,
            Err(e) => {
                assert!(
                    std::env::var_os("LINKDECK_REQUIRE_PYTHON").is_none(),
                    "python3: {e}"
                );
                eprintln!("skipped: python3 cannot be started ({e})");
                return None;
            }
        };
        let mut stdin = child.stdin.take().unwrap();
        stdin.write_all(RECEIVER.as_bytes()).unwrap();
        drop(stdin);
        let mut line = String::new();
        BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        let port = line.trim().parse().expect("the receiver's port");
        Some(Receiver {
            child,
            port,
            dir: dir.to_owned(),
        })
    }

    fn url(&self) -> String {
        format!("http://127.0.0.1:{}/hook", self.port)
    }

    /// Every request it was sent so far, in order.
    fn requests(&self) -> Vec<Value> {
        requests(&self.dir)
    }
}

impl Drop for Receiver {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn requests(dir: &Path) -> Vec<Value> {
    std::fs::read_to_string(dir.join("requests.jsonl"))
        .unwrap_or_default()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// What `look` finds, once it finds something: asked again until then, for a minute at most,
/// after which the test fails with what `look` last saw.
fn eventually<T, S: std::fmt::Debug>(what: &str, look: impl Fn() -> Result<T, S>) -> T {
    let start = Instant::now();
    loop {
        match look() {
            Ok(found) => return found,
            Err(seen) if start.elapsed() > Duration::from_secs(60) => {
                panic!("waited a minute for {what}; saw:\n{seen:#?}")
            }
            Err(_) => std::thread::sleep(Duration::from_millis(50)),
        }
    }
}

/// The requests received, once `done` holds of them.
fn wait_for(dir: &Path, what: &str, done: impl Fn(&[Value]) -> bool) -> Vec<Value> {
    eventually(what, || {
        let seen = requests(dir);
        if done(&seen) { Ok(seen) } else { Err(seen) }
    })
}

/// The accepted requests' events: type → aliases (or, for clicks, link ids clicked).
fn accepted(seen: &[Value]) -> BTreeMap<String, Vec<String>> {
    let mut out: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for r in seen.iter().filter(|r| r["refused"] == false) {
        let kind = r["body"]["type"].as_str().unwrap().to_owned();
        let data = &r["body"]["data"];
        let items = match data["clicks"].as_array() {
            Some(clicks) => clicks.iter().map(|c| c["link_id"].to_string()).collect(),
            None => vec![data["link"]["alias"].as_str().unwrap().to_owned()],
        };
        out.entry(kind).or_default().extend(items);
    }
    for items in out.values_mut() {
        items.sort();
    }
    out
}

/// Each accepted message id once, every request signed right.
fn check_signed_once(seen: &[Value]) {
    let mut ids: HashMap<&str, u32> = HashMap::new();
    for r in seen {
        assert_eq!(r["verified"], true, "a signature did not verify: {r}");
        if r["refused"] == false {
            *ids.entry(r["id"].as_str().unwrap()).or_default() += 1;
        }
    }
    let twice: Vec<_> = ids.iter().filter(|(_, n)| **n > 1).collect();
    assert!(twice.is_empty(), "delivered more than once: {twice:?}");
}

/// `linkdeck … --json` run to its end, its answer.
fn json(sandbox: &Sandbox, db: &str, args: &[&str]) -> Value {
    let mut all = vec!["--json"];
    all.extend_from_slice(args);
    serde_json::from_str(&sandbox.run(db, &all)).unwrap()
}

/// Lets the sandbox's servers and CLI send webhooks to loopback.
fn allow_private(sandbox: &Sandbox) {
    let dir = sandbox.config_dir();
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join("config.toml"),
        "[serve]\nwebhooks_allow_private = true\n",
    )
    .unwrap();
}

/// A subscription to every event for `receiver`; its secret is handed to the receiver.
fn subscribe(sandbox: &Sandbox, db: &str, receiver: &Receiver) -> i64 {
    let made = json(
        sandbox,
        db,
        &[
            "webhooks",
            "create",
            "--url",
            &receiver.url(),
            "--event",
            "link.created,link.updated,link.deleted",
            "--event",
            "link.expired",
            "--event",
            "link.clicked",
        ],
    );
    let secret = made["secret"].as_str().unwrap();
    assert!(secret.starts_with("whsec_"), "{made}");
    std::fs::write(receiver.dir.join("secret"), secret).unwrap();
    made["webhook"]["id"].as_i64().unwrap()
}

fn create_link(sandbox: &Sandbox, db: &str, alias: &str, extra: &[&str]) -> i64 {
    let mut args = vec![
        "links",
        "create",
        "https://example.com/dest",
        "--alias",
        alias,
    ];
    args.extend_from_slice(extra);
    json(sandbox, db, &args)["id"].as_i64().unwrap()
}

/// A sandbox whose database is a SQLite file, allowed to send to loopback, and a receiver
/// refusing its first `fail_first` requests; `None` without python3.
struct OnSqlite {
    sandbox: Sandbox,
    hooks: tempfile::TempDir,
    receiver: Receiver,
    db: String,
}

impl OnSqlite {
    fn start(fail_first: u32) -> Option<OnSqlite> {
        let sandbox = Sandbox::default();
        allow_private(&sandbox);
        let hooks = tempfile::tempdir().unwrap();
        let receiver = Receiver::start(hooks.path(), 0, fail_first)?;
        let db = sandbox.path().join("links.db").to_str().unwrap().to_owned();
        Some(OnSqlite {
            sandbox,
            hooks,
            receiver,
            db,
        })
    }
}

/// Short waits between attempts, so the test runs in seconds.
const FAST: [(&str, &str); 1] = [("LINKDECK_WEBHOOK_DELAYS_MS", "100,200,400")];

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn webhooks_survive_refusals_and_a_receiver_down_across_a_restart() {
    let Some(on) = OnSqlite::start(3) else {
        return;
    };
    let (sandbox, hooks, receiver, db) = (&on.sandbox, &on.hooks, on.receiver, on.db.as_str());
    let hook = subscribe(sandbox, db, &receiver);
    let server = sandbox.serve_with(db, &FAST);
    let http = client();

    // Made, changed, deleted, clicked and expired by clicks, while the receiver refuses the
    // first three deliveries.
    let first = create_link(sandbox, db, "first", &[]);
    let limited = create_link(sandbox, db, "limited", &["--max-clicks", "2"]);
    sandbox.run(db, &["links", "update", &first.to_string(), "--tag", "x"]);
    for path in ["/first", "/first", "/limited", "/limited"] {
        let r = http.get(server.url(path)).send().await.unwrap();
        assert_eq!(r.status(), 301, "{path}");
    }
    let wanted = |seen: &[Value]| {
        let got = accepted(seen);
        let clicks = got.get("link.clicked").map_or(0, Vec::len);
        got.get("link.created").map_or(0, Vec::len) == 2
            && got.contains_key("link.updated")
            && got.contains_key("link.expired")
            && clicks == 4
    };
    let seen = wait_for(hooks.path(), "the first events", wanted);
    assert!(seen.iter().filter(|r| r["refused"] == true).count() == 3);
    let got = accepted(&seen);
    assert_eq!(got["link.expired"], ["limited"]);
    assert_eq!(
        got["link.clicked"],
        [first, first, limited, limited].map(|id| id.to_string())
    );

    // The receiver goes down: deliveries fail and wait.
    let port = receiver.port;
    drop(receiver);
    create_link(sandbox, db, "while-down", &[]);
    sandbox.run(db, &["links", "delete", &first.to_string()]);
    let deliveries = eventually("failed attempts", || {
        let deliveries = json(sandbox, db, &["webhooks", "deliveries", &hook.to_string()]);
        let failing = deliveries
            .as_array()
            .unwrap()
            .iter()
            .filter(|d| d["delivered_at"].is_null() && d["attempts"].as_u64() >= Some(2))
            .count();
        if failing >= 2 {
            Ok(deliveries)
        } else {
            Err(deliveries)
        }
    });
    let error = deliveries[0]["last_error"].as_str().unwrap_or_default();
    assert!(!error.is_empty(), "{deliveries:#}");
    // … and `serve` is restarted while it is down, with an event made in between.
    server.stop();
    create_link(sandbox, db, "server-down", &[]);
    let server = sandbox.serve_with(db, &FAST);
    let receiver = Receiver::start(hooks.path(), port, 0).unwrap();

    let seen = wait_for(hooks.path(), "every event", |seen| {
        let got = accepted(seen);
        got.get("link.created").map_or(0, Vec::len) == 4 && got.contains_key("link.deleted")
    });
    check_signed_once(&seen);
    let got = accepted(&seen);
    assert_eq!(
        got["link.created"],
        ["first", "limited", "server-down", "while-down"]
    );
    assert_eq!(got["link.deleted"], ["first"]);
    assert_eq!(got["link.updated"], ["first"]);
    let shown = json(sandbox, db, &["webhooks", "show", &hook.to_string()]);
    assert_eq!(shown["webhook"]["pending"], 0, "{shown:#}");
    assert_eq!(shown["webhook"]["failures"], 0, "{shown:#}");
    drop(receiver);
    server.stop();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_subscription_that_keeps_failing_is_stopped_saying_why_and_resumed() {
    let Some(on) = OnSqlite::start(1000) else {
        return;
    };
    let (sandbox, hooks, receiver, db) = (&on.sandbox, &on.hooks, on.receiver, on.db.as_str());
    let hook = subscribe(sandbox, db, &receiver);
    let server = sandbox.serve_with(
        db,
        &[
            ("LINKDECK_WEBHOOK_DELAYS_MS", "50"),
            ("LINKDECK_WEBHOOK_STOP", "3,0"),
        ],
    );
    create_link(sandbox, db, "one", &[]);
    let stopped = eventually("the stop", || {
        let shown = json(sandbox, db, &["webhooks", "show", &hook.to_string()]);
        if shown["webhook"]["stopped_at"].is_null() {
            Err(shown)
        } else {
            Ok(shown)
        }
    });
    let reason = stopped["webhook"]["stopped_reason"].as_str().unwrap();
    assert!(reason.contains("3 failed deliveries"), "{reason}");
    assert!(reason.contains("HTTP 500"), "{reason}");
    let listed = sandbox.run(db, &["webhooks", "list"]);
    assert!(listed.contains("stopped"), "{listed}");
    // Stopped: nothing more is sent, and new events are not queued.
    let tried = receiver.requests().len();
    assert_eq!(tried, 3);
    create_link(sandbox, db, "two", &[]);
    let shown = json(sandbox, db, &["webhooks", "show", &hook.to_string()]);
    assert_eq!(shown["webhook"]["pending"], 1, "{shown:#}");

    // Resumed against a receiver that accepts: what waited is sent.
    drop(receiver);
    let port = url::Url::parse(stopped["webhook"]["url"].as_str().unwrap())
        .unwrap()
        .port()
        .unwrap();
    let receiver = Receiver::start(hooks.path(), port, 0).unwrap();
    let resumed = json(sandbox, db, &["webhooks", "resume", &hook.to_string()]);
    assert!(resumed["stopped_at"].is_null(), "{resumed:#}");
    let seen = wait_for(hooks.path(), "the waiting delivery", |seen| {
        accepted(seen).contains_key("link.created")
    });
    check_signed_once(&seen);
    assert_eq!(accepted(&seen)["link.created"], ["one"]);
    drop(receiver);
    server.stop();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_servers_on_one_postgres_deliver_each_event_once() {
    let Some(db) = database().await else { return };
    let sandbox = Sandbox::default();
    allow_private(&sandbox);
    let hooks = tempfile::tempdir().unwrap();
    let Some(receiver) = Receiver::start(hooks.path(), 0, 2) else {
        return;
    };
    subscribe(&sandbox, &db.url, &receiver);
    let servers = [
        sandbox.serve_with(&db.url, &FAST),
        sandbox.serve_with(&db.url, &FAST),
    ];
    const LINKS: usize = 20;
    let mut ids = Vec::new();
    for n in 0..LINKS {
        ids.push(create_link(&sandbox, &db.url, &format!("l{n:02}"), &[]));
    }
    let http = client();
    for (n, id) in ids.iter().enumerate() {
        let server = &servers[n % 2];
        let r = http
            .get(server.url(&format!("/l{n:02}")))
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 301, "link {id}");
    }
    wait_for(hooks.path(), "every event", |seen| {
        let got = accepted(seen);
        got.get("link.created").map_or(0, Vec::len) >= LINKS
            && got.get("link.clicked").map_or(0, Vec::len) >= LINKS
    });
    // Both servers stopped, so a second copy of anything would have landed by now.
    for server in servers {
        server.stop();
    }
    let seen = receiver.requests();
    check_signed_once(&seen);
    let got = accepted(&seen);
    let mut aliases: Vec<String> = (0..LINKS).map(|n| format!("l{n:02}")).collect();
    aliases.sort();
    assert_eq!(got["link.created"], aliases);
    let mut clicked: Vec<String> = ids.iter().map(|id| id.to_string()).collect();
    clicked.sort();
    assert_eq!(got["link.clicked"], clicked, "each link's click once");
    drop(receiver);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_private_receiver_is_refused_at_delivery_without_the_switch() {
    let Some(on) = OnSqlite::start(0) else {
        return;
    };
    let (sandbox, db) = (&on.sandbox, on.db.as_str());
    // Made while the operator allowed it; served after the switch was taken away.
    let hook = subscribe(sandbox, db, &on.receiver);
    std::fs::write(sandbox.config_dir().join("config.toml"), "").unwrap();
    let server = sandbox.serve_with(db, &FAST);
    create_link(sandbox, db, "inside", &[]);
    let deliveries = eventually("a refused attempt", || {
        let deliveries = json(sandbox, db, &["webhooks", "deliveries", &hook.to_string()]);
        match deliveries[0]["last_error"].as_str() {
            Some(_) => Ok(deliveries),
            None => Err(deliveries),
        }
    });
    let error = deliveries[0]["last_error"].as_str().unwrap();
    assert!(error.contains("loopback, private or link-local"), "{error}");
    assert!(
        on.receiver.requests().is_empty(),
        "the receiver was reached"
    );
    server.stop();
}
