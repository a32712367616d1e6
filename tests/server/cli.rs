//! The real binary: `keys` and `serve`, stopped by SIGTERM like a service manager would.

use std::process::{Command, Stdio};

use crate::common::{BinaryDb, client, listening_on, location};

fn linkdeck(db: &BinaryDb) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_linkdeck"));
    db.apply(&mut cmd).env_remove("LINKDECK_LOG");
    cmd
}

/// A temporary directory and the calling test's database in the store of this crate (a file
/// `cli.db` in the directory, on SQLite); `None` when the test does not run here.
fn database() -> Option<(tempfile::TempDir, BinaryDb)> {
    let store = crate::store()?;
    let dir = tempfile::tempdir().unwrap();
    let db = store.for_binary(dir.path(), "cli.db");
    Some((dir, db))
}

fn run(cmd: &mut Command) -> String {
    let out = cmd.output().unwrap();
    assert!(
        out.status.success(),
        "{cmd:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

#[tokio::test]
async fn keys_and_serve_through_the_binary() {
    let Some((_dir, db)) = database() else { return };
    run(linkdeck(&db).args(["owners", "add", "bob"]));

    let key = run(linkdeck(&db).args(["--owner", "bob", "keys", "create", "--name", "ci"]));
    assert!(
        key.starts_with("ldk_") && key.ends_with('\n') && key.trim().lines().count() == 1,
        "{key:?}"
    );
    let key = key.trim().to_owned();
    let created: serde_json::Value =
        serde_json::from_str(&run(linkdeck(&db).args(["keys", "create", "--json"]))).unwrap();
    assert!(created["key"].as_str().unwrap().starts_with("ldk_"));
    let listed = run(linkdeck(&db).args(["keys", "list"]));
    assert!(
        listed.contains("bob") && listed.contains("ci") && !listed.contains(&key),
        "{listed}"
    );
    // A key for a dashboard: it may only read, for 30 days.
    let reader = run(linkdeck(&db).args([
        "--owner",
        "bob",
        "keys",
        "create",
        "--name",
        "dash",
        "--access",
        "read",
        "--expires",
        "30d",
    ]));
    let reader = reader.trim().to_owned();
    let listed = run(linkdeck(&db).args(["keys", "list"]));
    let dash = listed.lines().find(|l| l.contains("dash")).unwrap();
    assert!(dash.contains(" read"), "{listed}");
    let in_30_days = (jiff::Zoned::now() + jiff::SignedDuration::from_hours(24 * 30))
        .strftime("%Y-%m-%d")
        .to_string();
    assert!(dash.contains(&in_30_days), "{listed}");
    assert!(
        listed.lines().filter(|l| l.contains(" full")).count() >= 2,
        "{listed}"
    );

    let mut server = linkdeck(&db)
        .args([
            "serve",
            "--listen",
            "127.0.0.1:0",
            "--redirect-status",
            "307",
        ])
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let (base, drain) = listening_on(server.stderr.take().unwrap())
        .unwrap_or_else(|log| panic!("serve exited early:\n{log}"));

    let http = client();
    let response = http
        .post(format!("{base}/api/v1/links"))
        .bearer_auth(&key)
        .header("accept", "application/json")
        .form(&[("url", "https://example.com/bin"), ("alias", "bin")])
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 201);
    let link: serde_json::Value = response.json().await.unwrap();
    assert_eq!(link["data"]["short_url"], format!("{base}/bin"));
    let as_reader = |method: reqwest::Method| {
        http.request(method, format!("{base}/api/v1/links"))
            .bearer_auth(&reader)
            .header("accept", "application/json")
    };
    let read = as_reader(reqwest::Method::GET).send().await.unwrap();
    assert_eq!(read.status(), 200);
    let write = as_reader(reqwest::Method::POST)
        .form(&[("url", "https://example.com/no")])
        .send()
        .await
        .unwrap();
    assert_eq!(write.status(), 403);
    for _ in 0..10 {
        let r = http
            .get(format!("{base}/bin"))
            .header("user-agent", "Mozilla/5.0 (X11; Linux x86_64)")
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 307);
        assert_eq!(location(&r), "https://example.com/bin");
    }

    let killed = Command::new("kill")
        .args(["-TERM", &server.id().to_string()])
        .status()
        .unwrap();
    assert!(killed.success());
    let status = server.wait().unwrap();
    assert!(status.success(), "serve exited with {status}");
    let log = drain.join().unwrap();
    assert!(!log.contains(&key), "the key must never reach the log");
    assert!(log.contains("stopped"), "{log}");
    assert!(
        !log.contains('\x1b'),
        "colour codes in a log that is not a terminal: {log:?}"
    );

    let links: serde_json::Value = serde_json::from_str(&run(
        linkdeck(&db).args(["--owner", "bob", "links", "show", "bin", "--json"])
    ))
    .unwrap();
    assert_eq!(links["clicks"], 10, "{links}");

    // Revoked keys stop working for the next server too.
    let id = created["id"].as_i64().unwrap().to_string();
    let revoked = run(linkdeck(&db).args(["keys", "revoke", &id]));
    assert!(revoked.contains("revoked"), "{revoked}");
}

/// A key's expiry must be a date ahead or a number of days; each mistake names the flag.
#[test]
fn a_key_expiry_that_cannot_be_is_refused_by_name() {
    let Some((_dir, db)) = database() else { return };
    for (bad, code) in [
        ("2020-01-01", 3),
        ("0d", 2),
        ("soon", 2),
        ("99999d", 2),
        ("2021-02-30", 2),
    ] {
        let out = linkdeck(&db)
            .args(["keys", "create", "--expires", bad])
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(code), "{bad}: {err}");
        assert!(err.contains("expires"), "{bad}: {err}");
        assert!(out.stdout.is_empty(), "{bad}: a key was printed");
    }
    let listed = run(linkdeck(&db).args(["keys", "list", "--json"]));
    assert_eq!(listed.trim(), "[]", "no key made: {listed}");
}

/// Starts `serve` through `sh -c PREFIX exec linkdeck …` and returns it with its base URL (read
/// from "listening on"), or `Err` with everything it wrote when it exits first.
fn spawn_serve(
    db: &BinaryDb,
    prefix: &str,
    extra: &[&str],
) -> Result<(Serving, String, std::thread::JoinHandle<String>), String> {
    let script = format!("{prefix} exec \"$0\" \"$@\"");
    let mut child = Command::new("sh")
        .arg("-c")
        .arg(script)
        .arg(env!("CARGO_BIN_EXE_linkdeck"))
        .arg("--db")
        .arg(&db.arg)
        .envs(db.env.iter().map(|(k, v)| (*k, v)))
        .args(["serve", "--listen", "127.0.0.1:0"])
        .args(extra)
        .env_remove("LINKDECK_LOG")
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let stderr = child.stderr.take().unwrap();
    let mut server = Serving(child);
    match listening_on(stderr) {
        Ok((base, drain)) => Ok((server, base, drain)),
        Err(seen) => {
            let _ = server.0.wait();
            Err(seen)
        }
    }
}

/// A running `serve`, stopped with SIGTERM when dropped (also when a test fails halfway).
struct Serving(std::process::Child);

impl Drop for Serving {
    fn drop(&mut self) {
        if matches!(self.0.try_wait(), Ok(Some(_))) {
            return;
        }
        let _ = Command::new("kill")
            .args(["-TERM", &self.0.id().to_string()])
            .status();
        let _ = self.0.wait();
    }
}

#[tokio::test]
async fn a_bad_setting_stops_serve_before_it_says_it_listens() {
    let Some((dir, db)) = database() else { return };
    let missing = dir.path().join("nonexistent.mmdb");
    let failed = spawn_serve(&db, "", &["--geoip-db", missing.to_str().unwrap()]);
    let Err(output) = failed else {
        panic!("serve started despite a missing GeoIP database");
    };
    assert!(!output.contains("listening on"), "{output}");
    assert!(
        output.contains("GeoIP database") && output.contains("nonexistent.mmdb"),
        "{output}"
    );
}

#[tokio::test]
async fn serve_answers_while_idle_sockets_outnumber_its_descriptors() {
    let Some((_dir, db)) = database() else { return };
    run(linkdeck(&db).args(["owners", "list"]));
    // 128 descriptors in all for the server; 200 sockets that never send a byte.
    let (server, base, drain) = spawn_serve(&db, "ulimit -n 128 &&", &[]).unwrap();
    let addr = base.trim_start_matches("http://").to_owned();
    let mut idle = Vec::new();
    for _ in 0..200 {
        idle.push(tokio::net::TcpStream::connect(&addr).await.unwrap());
    }
    let response = client()
        .get(format!("{base}/api/v1/links"))
        .header("accept", "application/json")
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 401, "answered, and as the API answers");
    drop(idle);
    drop(server);
    let log = drain.join().unwrap();
    assert!(!log.contains("Too many open files"), "{log}");
}

#[tokio::test]
async fn serve_logs_in_colour_only_on_a_terminal_without_no_color() {
    let Some((_dir, db)) = database() else { return };
    run(linkdeck(&db).args(["owners", "list"]));
    let bin = env!("CARGO_BIN_EXE_linkdeck");
    let log_on_terminal = |no_color: bool| {
        // `script` gives the server a terminal; `timeout` stops it once it has logged.
        let env = if no_color { "NO_COLOR=1 " } else { "" };
        let inner = format!(
            "{env}timeout -s TERM 3 '{bin}' --db '{}' serve --listen 127.0.0.1:0",
            db.arg.display()
        );
        let out = Command::new("script")
            .args(["-q", "-e", "-c", &inner, "/dev/null"])
            .envs(db.env.iter().map(|(k, v)| (*k, v)))
            .env_remove("LINKDECK_LOG")
            .env_remove("NO_COLOR")
            .stdin(Stdio::null())
            .output()
            .unwrap();
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    let coloured = log_on_terminal(false);
    assert!(
        coloured.contains("serving") && coloured.contains('\x1b'),
        "{coloured:?}"
    );
    let plain = log_on_terminal(true);
    assert!(
        plain.contains("serving") && !plain.contains('\x1b'),
        "{plain:?}"
    );
}

#[tokio::test]
async fn a_second_serve_on_one_database_is_refused_and_counts_stay_exact() {
    let Some((_dir, db)) = database() else { return };
    run(linkdeck(&db).args([
        "links",
        "create",
        "https://example.com/once",
        "--alias",
        "once",
        "--max-clicks",
        "1",
    ]));
    let (first, base, _drain) = spawn_serve(&db, "", &[]).unwrap();

    // The second server says why it will not start, and never listens.
    let Err(output) = spawn_serve(&db, "", &[]) else {
        panic!("a second serve started on the same database");
    };
    assert!(!output.contains("listening on"), "{output}");
    assert!(
        output.contains("already serving") && output.contains("cli.db"),
        "{output}"
    );
    assert!(
        output.contains(&format!("pid {}", first.0.id())),
        "names the running server: {output}"
    );

    // The one server lets the one allowed click through, and no more.
    let http = client();
    let visit = || async {
        http.get(format!("{base}/once"))
            .send()
            .await
            .unwrap()
            .status()
    };
    assert_eq!(visit().await, 301);
    assert_ne!(visit().await, 301);

    drop(first);

    // A server killed outright leaves no lock behind: the next one starts.
    let (mut killed, _, _drain) = spawn_serve(&db, "", &[]).unwrap();
    killed.0.kill().unwrap();
    killed.0.wait().unwrap();
    let (last, base, _drain) = spawn_serve(&db, "", &[]).unwrap();
    let again = http.get(format!("{base}/once")).send().await.unwrap();
    assert_ne!(again.status(), 301, "the limit still holds");
    drop(last);
    let shown: serde_json::Value =
        serde_json::from_str(&run(linkdeck(&db).args(["links", "show", "once", "--json"])))
            .unwrap();
    assert_eq!(shown["clicks"], 1, "{shown}");
}

/// Follows `/{alias}` on `base` up to `times` times, one request after another, and stops at
/// the first answer that is not a redirect (which must be the expired page); how many were
/// redirects.
async fn follow(http: &reqwest::Client, base: &str, alias: &str, times: usize) -> usize {
    for served in 0..times {
        let status = http
            .get(format!("{base}/{alias}"))
            .send()
            .await
            .unwrap()
            .status();
        if status != 301 {
            assert_eq!(status, 410, "/{alias} after {served} redirects");
            return served;
        }
    }
    times
}

/// Kills `serve` outright (SIGKILL): nothing it holds in memory reaches the database.
fn kill(mut server: Serving) {
    server.0.kill().unwrap();
    server.0.wait().unwrap();
}

#[tokio::test]
async fn a_server_killed_outright_never_serves_a_limited_link_past_its_limit() {
    let Some((_dir, db)) = database() else { return };
    run(linkdeck(&db).args([
        "links",
        "create",
        "https://example.com/fifty",
        "--alias",
        "fifty",
        "--max-clicks",
        "50",
    ]));
    let clicks = || {
        let shown: serde_json::Value = serde_json::from_str(&run(
            linkdeck(&db).args(["links", "show", "fifty", "--json"])
        ))
        .unwrap();
        shown["clicks"].as_u64().unwrap()
    };
    let http = client();

    // Killed part way, long before the click writer's next batch is due.
    let (server, base, _drain) = spawn_serve(&db, "", &[]).unwrap();
    assert_eq!(follow(&http, &base, "fifty", 20).await, 20);
    kill(server);
    let (server, base, _drain) = spawn_serve(&db, "", &[]).unwrap();
    assert_eq!(
        clicks(),
        20,
        "the clicks served before the kill, no fewer, no more"
    );

    // Followed until it answers that it has expired, and killed at once.
    assert_eq!(
        follow(&http, &base, "fifty", 100).await,
        30,
        "the rest of its limit"
    );
    kill(server);
    let (server, base, _drain) = spawn_serve(&db, "", &[]).unwrap();
    assert_eq!(clicks(), 50);
    assert_eq!(
        follow(&http, &base, "fifty", 20).await,
        0,
        "served past its limit by the server started after the kill"
    );
    drop(server);
    assert_eq!(clicks(), 50, "the clicks stored are the redirects served");
}

/// `[serve]`'s fallbacks and robots policy reach the server's own host; a bad one stops `serve`
/// naming the key.
#[tokio::test]
async fn serve_takes_its_own_hosts_fallbacks_from_the_config() {
    let Some((dir, db)) = database() else { return };
    let config = dir.path().join("config.toml");
    std::fs::write(
        &config,
        "[serve]\nroot_url = \"https://own.example/\"\nunknown_url = \"https://own.example/404\"\nrobots = \"allow\"\n",
    )
    .unwrap();
    let config = config.to_str().unwrap();
    let (_server, base, _drain) = spawn_serve(&db, "", &["--config", config]).unwrap();
    let http = client();
    let root = http.get(format!("{base}/")).send().await.unwrap();
    assert_eq!(root.status(), 302);
    assert_eq!(location(&root), "https://own.example/");
    assert_eq!(root.headers()["x-robots-tag"], "noindex");
    let unknown = http.get(format!("{base}/nothing")).send().await.unwrap();
    assert_eq!(location(&unknown), "https://own.example/404");
    let robots = http.get(format!("{base}/robots.txt")).send().await.unwrap();
    assert_eq!(robots.text().await.unwrap(), "User-agent: *\nDisallow:\n");

    let bad = dir.path().join("bad.toml");
    std::fs::write(&bad, "[serve]\nexpired_url = \"javascript:alert(1)\"\n").unwrap();
    let Err(output) = spawn_serve(&db, "", &["--config", bad.to_str().unwrap()]) else {
        panic!("serve started with a bad expired_url");
    };
    assert!(output.contains("expired_url"), "{output}");
}

#[test]
fn a_key_limited_to_spaces_is_made_by_name_or_id_and_listed_with_them() {
    let Some((_dir, db)) = database() else { return };
    run(linkdeck(&db).args(["spaces", "create", "Team", "--color", "1"]));
    run(linkdeck(&db).args(["spaces", "create", "Press", "--color", "2"]));
    let key = run(linkdeck(&db).args([
        "keys", "create", "--name", "team", "--space", "team", "--space", "2",
    ]));
    assert!(key.trim().starts_with("ldk_"), "{key}");
    let listed = run(linkdeck(&db).args(["keys", "list"]));
    let team = listed.lines().find(|l| l.contains("team")).unwrap();
    assert!(team.contains("Team, Press"), "{listed}");
    let listed: serde_json::Value =
        serde_json::from_str(&run(linkdeck(&db).args(["keys", "list", "--json"]))).unwrap();
    assert_eq!(listed[0]["spaces"], serde_json::json!([1, 2]), "{listed}");

    // A space that is not there: nothing is made, and what to change is named.
    for (space, code, words) in [
        ("Nope", 4, "space \"Nope\" not found"),
        ("99", 3, "spaces (--space): space 99 not found"),
    ] {
        let out = linkdeck(&db)
            .args(["keys", "create", "--space", space])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(code), "{out:?}");
        let said = String::from_utf8_lossy(&out.stderr);
        assert!(said.contains(words), "{said}");
    }
    let listed: serde_json::Value =
        serde_json::from_str(&run(linkdeck(&db).args(["keys", "list", "--json"]))).unwrap();
    assert_eq!(listed.as_array().map(Vec::len), Some(1), "{listed}");
}
