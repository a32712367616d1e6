//! The real binary: `keys` and `serve`, stopped by SIGTERM like a service manager would.

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};

use crate::common::{client, location};

fn linkdeck(db: &std::path::Path) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_linkdeck"));
    cmd.arg("--db").arg(db).env_remove("LINKDECK_LOG");
    cmd
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
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("cli.db");
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
    let mut stderr = BufReader::new(server.stderr.take().unwrap());
    let base = loop {
        let mut line = String::new();
        assert!(
            stderr.read_line(&mut line).unwrap() > 0,
            "serve exited early"
        );
        if let Some(url) = line.trim().strip_prefix("listening on ") {
            break url.to_owned();
        }
    };
    // Keep draining the log so the server never blocks on a full pipe.
    let drain = std::thread::spawn(move || {
        let mut rest = String::new();
        let _ = std::io::Read::read_to_string(&mut stderr, &mut rest);
        rest
    });

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
