//! The CLI against a real `linkdeck serve` child: import and export through its API (linkdeck's
//! own beside v1, so that what the server exports equals what its database exports, history too),
//! and `stats --orphans` read from the same file locally and through the server.

use crate::cli_support::Env;
use serde_json::Value;

/// A `linkdeck serve` child on an ephemeral port over `db`, killed when dropped.
pub(super) struct Server {
    child: std::process::Child,
    pub(super) base: String,
}

impl Server {
    pub(super) fn start(env: &Env, db: &std::path::Path) -> Server {
        Self::spawn(env, db, None)
    }

    /// With `webhook_key` in `LINKDECK_WEBHOOK_KEY` (a short one leaves the server without).
    fn spawn(env: &Env, db: &std::path::Path, webhook_key: Option<&str>) -> Server {
        let mut command = env.std_bare();
        if let Some(key) = webhook_key {
            command.env("LINKDECK_WEBHOOK_KEY", key);
        }
        let mut child = command
            .arg("--db")
            .arg(db)
            .arg("--config")
            .arg(&env.config)
            .args(["serve", "--listen", "127.0.0.1:0"])
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        // The rest of the log is read on a thread until the child ends, and dropped.
        let (base, _rest) = crate::common::listening_on(child.stderr.take().unwrap())
            .unwrap_or_else(|log| panic!("serve exited early:\n{log}"));
        Server { child, base }
    }
}

impl Server {
    /// The CLI against this server with `key`, as a remote profile given by flags.
    pub(super) fn cli(&self, env: &Env, key: &str, args: &[&str]) -> crate::cli_support::Run {
        crate::cli_support::run(
            env.bare()
                .env("LINKDECK_CLI_TEST_KEY", key)
                .args(["--config", env.config.to_str().unwrap()])
                .args([
                    "--remote",
                    &self.base,
                    "--api-key-env",
                    "LINKDECK_CLI_TEST_KEY",
                ])
                .args(args),
        )
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[test]
fn import_and_export_through_a_server() {
    let env = Env::new();
    let served = env.path("served.db");
    let key = env.run_on(&served, &["keys", "create"]).ok().stdout;
    let key = key.trim();
    let server = Server::start(&env, &served);
    let remote = |args: &[&str]| server.cli(&env, key, args);

    // A file with a bad row sends nothing at all.
    let bad = env.write(
        "bad.json",
        "{\"links\": [\n{\"url\": \"https://ok.example\"},\n{\"url\": \"nope\"}\n]}",
    );
    let run = remote(&["import", bad.to_str().unwrap()]).fails_with(3);
    assert!(run.stderr.contains("line 3: url"), "{}", run.stderr);
    assert_eq!(remote(&["--json", "links", "list"]).ok().json()["total"], 0);

    let demo = concat!(env!("CARGO_MANIFEST_DIR"), "/assets/demo.json");
    let summary = remote(&["--json", "import", demo]).ok().json();
    assert_eq!(summary["links_created"], 52);
    assert_eq!(summary["spaces_created"], 5);

    // What the server exports equals what its database exports, and both read back the demo.
    let over_http = remote(&["export"]).ok().stdout;
    let direct = env.run_on(&served, &["export"]).ok().stdout;
    assert_eq!(over_http, direct);
    let exported: Value = serde_json::from_str(&over_http).unwrap();
    assert_eq!(exported["links"].as_array().unwrap().len(), 52);
    assert_eq!(exported["spaces"].as_array().unwrap().len(), 5);

    // Listing and showing by alias work the same over the API.
    let shown = remote(&["--json", "links", "show", "spring"]).ok().json();
    assert_eq!(shown["url"], "https://shop.example.com/spring/collection");
    let page = remote(&["--json", "links", "list", "--space", "Support"])
        .ok()
        .json();
    assert_eq!(page["total"], 7);
    // A CSV file declares its spaces in its rows: the server gets each, in its colour, before
    // the links, even one whose colour comes after a row naming it.
    let csv = env.write(
        "late.csv",
        "url,alias,space,space_color\nhttps://a.example,csv-a,Late,\n\
         https://b.example,csv-b,late,purple\n",
    );
    let summary = remote(&["--json", "import", csv.to_str().unwrap()])
        .ok()
        .json();
    assert_eq!(summary["links_created"], 2, "{summary}");
    assert_eq!(summary["spaces_created"], 1, "{summary}");
    let page = remote(&["--json", "links", "list", "--space", "Late"])
        .ok()
        .json();
    assert_eq!(page["total"], 2);
    assert_eq!(page["items"][0]["space"]["color"], 6, "{page}");

    // Local-only commands say so.
    let run = remote(&["domains", "add", "sho.rt"]).fails_with(2);
    assert!(run.stderr.contains("local"), "{}", run.stderr);
}

#[test]
fn a_key_limited_to_a_space_works_within_it_from_the_command_line() {
    let env = Env::new();
    let served = env.path("served.db");
    for args in [
        &["spaces", "create", "Team", "--color", "1"][..],
        &["spaces", "create", "Other", "--color", "2"],
        &[
            "links",
            "create",
            "https://team.example/a",
            "--space",
            "Team",
            "--alias",
            "ta",
        ],
        &[
            "links",
            "create",
            "https://other.example/b",
            "--space",
            "Other",
            "--alias",
            "ob",
        ],
    ] {
        env.run_on(&served, args).ok();
    }
    let key = env
        .run_on(&served, &["keys", "create", "--space", "Team"])
        .ok()
        .stdout;
    let server = Server::start(&env, &served);
    let remote = |args: &[&str]| server.cli(&env, key.trim(), args);

    let listed = remote(&["--json", "links", "list"]).ok().json();
    assert_eq!(listed["total"], 1, "{listed}");
    assert_eq!(listed["items"][0]["alias"], "ta", "{listed}");
    // A new link goes in the key's space, its tags kept.
    let made = remote(&[
        "--json",
        "links",
        "create",
        "https://team.example/new",
        "--tag",
        "q4",
    ])
    .ok()
    .json();
    assert_eq!(made["space"]["name"], "Team", "{made}");
    assert_eq!(made["tags"], serde_json::json!(["q4"]), "{made}");
    // Another space's link is not there; the account's traffic is refused, saying why.
    remote(&["links", "show", "ob"]).fails_with(4);
    let refused = remote(&["stats"]).fails_with(5);
    assert!(
        refused.stderr.contains("limited to space"),
        "{}",
        refused.stderr
    );
    let team = remote(&["--json", "stats", "--space", "Team"]).ok().json();
    assert_eq!(team["scope"], "space", "{team}");
    // Nothing outside its space changed.
    let other = env.run_on(&served, &["--json", "links", "list", "--space", "Other"]);
    assert_eq!(other.ok().json()["total"], 1);
}

/// Asks `base` (`http://127.0.0.1:PORT`) for `path` as a visitor sent from `referrer` would,
/// and reads the answer to its end, which a visit needs before it is counted.
fn visit(base: &str, path: &str, referrer: &str) {
    use std::io::{Read, Write};
    let addr = base.trim_start_matches("http://");
    let mut stream = std::net::TcpStream::connect(addr).unwrap();
    write!(
        stream,
        "GET {path} HTTP/1.1\r\nHost: {addr}\r\nUser-Agent: Mozilla/5.0 (X11; Linux x86_64) \
         Firefox/120.0\r\nReferer: {referrer}\r\nConnection: close\r\n\r\n"
    )
    .unwrap();
    let mut answer = String::new();
    let _ = stream.read_to_string(&mut answer);
    assert!(answer.starts_with("HTTP/1.1 "), "{path}: {answer}");
}

#[test]
fn stats_orphans_locally_and_through_a_server() {
    let env = Env::new();
    let served = env.path("served.db");
    let key = env.run_on(&served, &["keys", "create"]).ok().stdout;
    let key = key.trim();
    let server = Server::start(&env, &served);
    let remote = |args: &[&str]| server.cli(&env, key, args);

    for path in ["/", "/no-such-alias", "/some/other/path"] {
        visit(&server.base, path, "https://ref.example/page");
    }
    // The click writer writes in batches: wait until all three are there.
    let mut answer = Value::Null;
    for _ in 0..200 {
        answer = remote(&["--json", "stats", "--orphans", "--period", "24h"])
            .ok()
            .json();
        if answer["total"] == 3 {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    assert_eq!(answer["total"], 3, "{answer}");
    let kinds: Vec<&str> = answer["kinds"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|k| k["value"].as_str())
        .collect();
    for kind in ["root", "unknown_alias", "other_path"] {
        assert!(kinds.contains(&kind), "{kind}: {answer}");
    }

    // The local profile over the same file answers the same record.
    let local = env
        .run_on(
            &served,
            &["--json", "stats", "--orphans", "--period", "24h"],
        )
        .ok()
        .json();
    for field in ["total", "kinds", "paths", "referrers", "countries"] {
        assert_eq!(local[field], answer[field], "{field}: {local} vs {answer}");
    }

    for run in [
        remote(&["stats", "--orphans", "--period", "24h"]).ok(),
        env.run_on(&served, &["stats", "--orphans", "--period", "24h"])
            .ok(),
    ] {
        let table = run.stdout;
        assert!(table.starts_with("orphan visits · "), "{table}");
        assert!(table.contains("3 visits"), "{table}");
        for words in [
            "root (/)",
            "unknown alias",
            "other path",
            "/no-such-alias",
            "ref.example",
        ] {
            assert!(table.contains(words), "{words}:\n{table}");
        }
    }

    // Orphan visits are the account's: a scope or a breakdown is refused, naming the flag.
    for (flag, args) in [
        ("--by", &["stats", "--orphans", "--by", "country"][..]),
        ("--space", &["stats", "--orphans", "--space", "work"][..]),
        ("--csv", &["stats", "--orphans", "--csv"][..]),
    ] {
        for run in [remote(args), env.run_on(&served, args)] {
            let run = run.fails_with(2);
            assert!(
                run.stderr.contains(flag) && run.stderr.contains("--orphans"),
                "{flag}: {}",
                run.stderr
            );
        }
    }
}

#[test]
fn a_server_without_a_webhook_key_says_so_to_the_remote_cli() {
    let env = Env::new();
    let served = env.path("served.db");
    let key = env.run_on(&served, &["keys", "create"]).ok().stdout;
    let key = key.trim();
    // Too short to be a key: the server serves, and keeps no webhook key.
    let server = Server::spawn(&env, &served, Some("short"));
    let remote = |args: &[&str]| server.cli(&env, key, args);

    let made = remote(&[
        "webhooks",
        "create",
        "--url",
        "https://hooks.example.com/in",
        "--event",
        "link.created",
    ]);
    assert_ne!(made.code, 0, "{}", made.stdout);
    for words in [
        "keeps no webhook key",
        "LINKDECK_WEBHOOK_KEY",
        "webhook_key_file",
    ] {
        assert!(made.stderr.contains(words), "{words}: {}", made.stderr);
    }
    assert!(!made.stderr.contains("not found"), "{}", made.stderr);
    let secret = remote(&["webhooks", "secret", "1"]);
    assert_ne!(secret.code, 0, "{}", secret.stdout);
    assert!(
        secret.stderr.contains("keeps no webhook key"),
        "{}",
        secret.stderr
    );
    // Reading works without a key.
    remote(&["webhooks", "list"]).ok();
}
