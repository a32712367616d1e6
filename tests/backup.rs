//! Backups of a SQLite database through the real binary: `db backup` taken while a real
//! `linkdeck serve` counts redirects fired at it, `db restore` and everything it refuses,
//! `serve`'s scheduled backups and how many it keeps, and a PostgreSQL database refused with
//! what to run instead (no PostgreSQL needed for that).

mod cli_support;
mod common;
mod raw;

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use cli_support::Env;
use rusqlite::{Connection, OpenFlags};

/// A `linkdeck serve` on the sandbox's database and config, on a free loopback port; stopped
/// with SIGTERM by [`Serving::stop`], or when dropped (a test failing halfway).
struct Serving {
    child: std::process::Child,
    base: String,
    log: Option<std::thread::JoinHandle<String>>,
}

impl Serving {
    fn start(env: &Env) -> Serving {
        let mut child = env
            .std_cmd()
            .args(["serve", "--listen", "127.0.0.1:0"])
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let stderr = child.stderr.take().unwrap();
        match common::listening_on(stderr) {
            Ok((base, log)) => Serving {
                child,
                base,
                log: Some(log),
            },
            Err(seen) => {
                let _ = child.wait();
                panic!("serve exited before it listened:\n{seen}");
            }
        }
    }

    /// Stops the server as a service manager would and returns its log.
    fn stop(mut self) -> String {
        self.terminate();
        let status = self.child.wait().unwrap();
        let log = self.log.take().unwrap().join().unwrap();
        assert!(status.success(), "serve exited with {status}:\n{log}");
        log
    }

    fn terminate(&self) {
        let _ = std::process::Command::new("kill")
            .args(["-TERM", &self.child.id().to_string()])
            .status();
    }
}

impl Drop for Serving {
    fn drop(&mut self) {
        if matches!(self.child.try_wait(), Ok(None)) {
            self.terminate();
            let _ = self.child.wait();
        }
    }
}

fn read_only(path: &Path) -> Connection {
    Connection::open_with_flags(path, OpenFlags::SQLITE_OPEN_READ_ONLY).unwrap()
}

/// Clicks written into the database at `path`, all links together.
fn clicks_in(path: &Path) -> u64 {
    read_only(path)
        .query_row("SELECT coalesce(sum(clicks), 0) FROM links", [], |r| {
            r.get::<_, i64>(0)
        })
        .unwrap() as u64
}

fn integrity(path: &Path) -> String {
    read_only(path)
        .query_row("PRAGMA integrity_check", [], |r| r.get(0))
        .unwrap()
}

/// Waits for `ready`, looking every 20 ms; panics with `what` after a minute (a test that hangs
/// says why instead).
async fn until(what: &str, mut ready: impl FnMut() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(60);
    while !ready() {
        assert!(Instant::now() < deadline, "gave up waiting for {what}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// A CSV of `n` links, `l0` to `l{n-1}`, with titles long enough to give the file some pages.
fn links_csv(env: &Env, n: usize) -> PathBuf {
    let mut csv = String::from("url,alias,title\n");
    for i in 0..n {
        csv.push_str(&format!(
            "https://example.com/{i}/a/longer/path?q={i},l{i},Link number {i} of a database big enough to be copied a step at a time\n"
        ));
    }
    env.write("links.csv", &csv)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_backup_taken_under_redirect_load_holds_every_click_written_before_it() {
    let env = Env::new();
    // Several backup steps' worth of pages, so that the copy runs while clicks are written.
    let n = 8_000;
    let csv = links_csv(&env, n);
    env.run(&["import", csv.to_str().unwrap()]).ok();
    let server = Serving::start(&env);

    let acknowledged = Arc::new(AtomicU64::new(0));
    let stop = Arc::new(AtomicBool::new(false));
    let mut load = Vec::new();
    for task in 0..4 {
        let (base, acknowledged, stop) = (server.base.clone(), acknowledged.clone(), stop.clone());
        load.push(tokio::spawn(async move {
            let http = common::client();
            let mut i = task;
            while !stop.load(Ordering::Relaxed) {
                let r = http
                    .get(format!("{base}/l{}", i % 20))
                    .send()
                    .await
                    .unwrap();
                assert_eq!(r.status(), 301);
                acknowledged.fetch_add(1, Ordering::Relaxed);
                i += 4;
            }
        }));
    }

    // Clicks the server has answered, then the moment the database holds at least as many:
    // every one of them written before the backup starts.
    until("the first redirects", || {
        acknowledged.load(Ordering::Relaxed) >= 200
    })
    .await;
    let answered = acknowledged.load(Ordering::Relaxed);
    let mut written = 0;
    until("the server to write the clicks it answered", || {
        written = clicks_in(&env.db);
        written >= answered
    })
    .await;

    let backup = env.path("backup.db");
    let made = {
        let mut cmd = env.cmd();
        cmd.args(["--json", "db", "backup", backup.to_str().unwrap()]);
        tokio::task::spawn_blocking(move || cli_support::run(&mut cmd))
            .await
            .unwrap()
            .ok()
            .json()
    };
    // The load went on after the backup: it was taken while clicks kept coming.
    let after_backup = acknowledged.load(Ordering::Relaxed);
    until("redirects after the backup", || {
        acknowledged.load(Ordering::Relaxed) >= after_backup + 200
    })
    .await;
    stop.store(true, Ordering::Relaxed);
    for task in load {
        task.await.unwrap();
    }
    let log = server.stop();
    let total = acknowledged.load(Ordering::Relaxed);

    eprintln!(
        "{answered} clicks answered and {written} written before the backup, {in_backup} in it \
         ({} bytes), {total} in all",
        made["bytes"],
        in_backup = clicks_in(&backup),
    );
    assert_eq!(made["links"], n as u64, "{made}");
    assert!(made["bytes"].as_u64().unwrap() > 4 << 20, "{made}");
    assert_eq!(integrity(&backup), "ok");
    let in_backup = clicks_in(&backup);
    assert!(
        in_backup >= written,
        "the backup holds {in_backup} clicks; {written} were written before it began"
    );
    assert!(in_backup <= total, "{in_backup} clicks of {total} answered");
    assert_eq!(
        clicks_in(&env.db),
        total,
        "every answered click is written at the stop"
    );
    assert!(!log.contains("failed"), "{log}");

    let shown = env.run_on(&backup, &["links", "show", "l7"]).ok();
    assert!(
        shown.stdout.contains("https://example.com/7/"),
        "{}",
        shown.stdout
    );
}

#[test]
fn restore_checks_the_file_and_refuses_to_replace_links_without_force() {
    let env = Env::new();
    for alias in ["one", "two"] {
        env.run(&["links", "create", "https://example.com/", "--alias", alias])
            .ok();
    }
    let good = env.path("good.db");
    let made = env.run(&["db", "backup", good.to_str().unwrap()]).ok();
    assert!(
        made.stdout.contains("2 links") && made.stdout.contains("good.db"),
        "{}",
        made.stdout
    );
    // A backup never overwrites a file unless told to.
    let again = env
        .run(&["db", "backup", good.to_str().unwrap()])
        .fails_with(7);
    assert!(again.stderr.contains("--force"), "{}", again.stderr);
    env.run(&["db", "backup", good.to_str().unwrap(), "--force"])
        .ok();
    env.run(&[
        "links",
        "create",
        "https://example.com/",
        "--alias",
        "three",
    ])
    .ok();

    // Each refusal names what is wrong and exits with `code`; `force` makes no difference.
    let refused = |file: &Path, force: bool, code: i32, says: &[&str]| {
        let file = file.to_str().unwrap();
        let mut args = vec!["db", "restore", file];
        if force {
            args.push("--force");
        }
        let stderr = env.run(&args).fails_with(code).stderr;
        for words in says {
            assert!(stderr.contains(words), "{words:?} not in: {stderr}");
        }
    };
    // Not a database at all.
    let text = env.write("notes.txt", &"not a database\n".repeat(400));
    refused(&text, true, 6, &["notes.txt", "not a SQLite database"]);
    // A database whose pages are damaged: every page but the first has its header overwritten.
    let corrupt = env.path("corrupt.db");
    let mut bytes = std::fs::read(&good).unwrap();
    let page = 4096;
    assert!(bytes.len() > 4 * page);
    for start in (page..bytes.len()).step_by(page) {
        bytes[start..start + 16].fill(0xA5);
    }
    std::fs::write(&corrupt, bytes).unwrap();
    refused(&corrupt, true, 6, &["corrupt.db is corrupt"]);
    // A SQLite database that is not linkdeck's, and one from a newer linkdeck.
    let other = env.path("other.db");
    Connection::open(&other)
        .unwrap()
        .execute_batch("CREATE TABLE notes (body TEXT); INSERT INTO notes VALUES ('hi');")
        .unwrap();
    refused(&other, true, 6, &["not a linkdeck one"]);
    let newer = env.path("newer.db");
    std::fs::copy(&good, &newer).unwrap();
    let next = linkdeck::backend::local::SCHEMA_VERSION + 1;
    Connection::open(&newer)
        .unwrap()
        .pragma_update(None, "user_version", next)
        .unwrap();
    refused(&newer, true, 6, &["newer linkdeck"]);
    // A database another program has open is not replaced under it, --force or not.
    let open = Connection::open(&env.db).unwrap();
    let held: i64 = open
        .query_row("SELECT count(*) FROM links", [], |r| r.get(0))
        .unwrap();
    assert_eq!(held, 3);
    refused(&good, true, 6, &["open in another program"]);
    drop(open);
    // Nothing refused touched the database.
    let listed = env.run(&["links", "list"]).ok().stdout;
    assert!(listed.contains("three"), "{listed}");

    // A database with links is replaced only with --force, and the refusal counts both sides.
    refused(&good, false, 7, &["3 links", "2 links", "--force"]);
    let restored = env
        .run(&["db", "restore", good.to_str().unwrap(), "--force"])
        .ok();
    assert!(
        restored.stdout.contains("restored 2 links") && restored.stdout.contains("it had 3 links"),
        "{}",
        restored.stdout
    );
    let listed = env.run(&["links", "list"]).ok().stdout;
    assert!(
        listed.contains("one") && listed.contains("two") && !listed.contains("three"),
        "{listed}"
    );
    assert_eq!(integrity(&env.db), "ok");

    // Into a new database, nothing to replace: no --force needed.
    let fresh = env.path("fresh/links.db");
    let mut cmd = env.bare();
    cmd.arg("--db")
        .arg(&fresh)
        .arg("--config")
        .arg(&env.config)
        .args(["db", "restore", good.to_str().unwrap()]);
    let restored = cli_support::run(&mut cmd).ok();
    assert!(
        restored.stdout.contains("a new database"),
        "{}",
        restored.stdout
    );
    let listed = env.run_on(&fresh, &["links", "list"]).ok().stdout;
    assert!(listed.contains("two"), "{listed}");

    // There is no database to back up where --db points: said, and none is created.
    let missing = env.path("missing.db");
    let refused = env
        .run_on(
            &missing,
            &["db", "backup", env.path("x.db").to_str().unwrap()],
        )
        .fails_with(4);
    assert!(refused.stderr.contains("missing.db"), "{}", refused.stderr);
    assert!(!missing.exists() && !env.path("x.db").exists());
}

#[tokio::test]
async fn serve_keeps_dated_backups_on_a_schedule_and_only_the_newest() {
    let env = Env::new();
    env.run(&["links", "create", "https://example.com/", "--alias", "kept"])
        .ok();
    let dir = env.path("backups");
    std::fs::write(
        &env.config,
        format!(
            "[serve]\nbackup_every = \"1s\"\nbackup_keep = 2\nbackup_dir = \"{}\"\n",
            dir.display()
        ),
    )
    .unwrap();
    let server = Serving::start(&env);
    let dated = |dir: &Path| -> BTreeSet<String> {
        std::fs::read_dir(dir)
            .map(|entries| {
                entries
                    .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
                    .filter(|n| n.starts_with("links-") && n.ends_with("Z.db"))
                    .collect()
            })
            .unwrap_or_default()
    };
    let mut seen = BTreeSet::new();
    until("four scheduled backups", || {
        seen.extend(dated(&dir));
        seen.len() >= 4
    })
    .await;

    // While it serves, the database cannot be restored over.
    let backup = dir.join(seen.iter().next_back().unwrap());
    let refused = env
        .run(&["db", "restore", backup.to_str().unwrap(), "--force"])
        .fails_with(6);
    assert!(
        refused.stderr.contains("linkdeck serve is serving") && refused.stderr.contains("stop it"),
        "{}",
        refused.stderr
    );

    let log = server.stop();
    let kept = dated(&dir);
    assert_eq!(kept.len(), 2, "{kept:?}\n{log}");
    let made = log.matches("backed up the database").count();
    assert!(made >= 4, "{log}");
    assert_eq!(
        log.matches("removed an old backup").count(),
        made - 2,
        "{log}"
    );
    // The oldest went, the newest stayed; each one kept is a database of the link.
    let newest: Vec<_> = dated(&dir).into_iter().collect();
    assert!(seen.iter().next().unwrap() < &newest[0]);
    for name in &newest {
        let path = dir.join(name);
        assert_eq!(integrity(&path), "ok");
        let listed = env.run_on(&path, &["links", "list"]).ok().stdout;
        assert!(listed.contains("kept"), "{listed}");
    }
    // Nothing half-written is left behind.
    let all: Vec<_> = std::fs::read_dir(&dir).unwrap().collect();
    assert_eq!(all.len(), 2, "{all:?}");
}

#[test]
fn a_postgres_database_is_refused_with_what_to_run_instead() {
    let env = Env::new();
    let out = env.path("pg.db");
    for args in [
        vec!["db", "backup", out.to_str().unwrap()],
        vec!["db", "restore", out.to_str().unwrap()],
    ] {
        let mut cmd = env.bare();
        cmd.args([
            "--db",
            "postgres://linkdeck@127.0.0.1:1/linkdeck",
            "--config",
        ])
        .arg(&env.config)
        .args(&args);
        let refused = cli_support::run(&mut cmd).fails_with(2);
        assert!(
            refused.stderr.contains("PostgreSQL")
                && refused.stderr.contains("pg_dump -Fc")
                && refused.stderr.contains("pg_restore"),
            "{}",
            refused.stderr
        );
    }
    assert!(!out.exists());
}
