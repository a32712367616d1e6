//! Errors and exit codes: every field named, one exit code per kind of error, unusable databases,
//! closed pipes.

use crate::cli_support::Env;
use serde_json::json;

#[test]
fn validation_errors_list_every_field_and_exit_3() {
    let env = Env::new();
    let run = env
        .run(&[
            "links",
            "create",
            "javascript:alert(1)",
            "--alias",
            "no spaces",
            "--max-clicks",
            "lots",
            "--geo",
            "XX=https://a.example",
            "--expires",
            "2030-13-01 10:00",
        ])
        .fails_with(3);
    let lines: Vec<&str> = run.stderr.lines().collect();
    assert_eq!(lines[0], "error: 5 fields are invalid", "{}", run.stderr);
    assert!(
        run.stderr.contains("\n  url: must be an http or https URL"),
        "{}",
        run.stderr
    );
    assert!(run.stderr.contains("\n  alias: "), "{}", run.stderr);
    assert!(
        run.stderr.contains("expiration_clicks (--max-clicks): "),
        "{}",
        run.stderr
    );
    assert!(
        run.stderr.contains("geo.0.key (--geo #1): "),
        "{}",
        run.stderr
    );
    assert!(
        run.stderr.contains("expiration_date (--expires): "),
        "{}",
        run.stderr
    );
    assert!(run.stdout.is_empty());

    let err = env
        .run(&["--json", "links", "create", "ftp://x", "--alias", "api"])
        .fails_with(3)
        .error_json();
    assert_eq!(err["error"], "validation");
    assert!(err["message"].is_string());
    assert!(err["fields"]["url"][0].is_string(), "{err}");
    assert!(
        err["fields"]["alias"][0]
            .as_str()
            .unwrap()
            .contains("reserved"),
        "{err}"
    );
    // Nothing was written.
    assert_eq!(env.json(&["links", "list"])["total"], 0);
}

#[test]
fn exit_codes_per_error_kind() {
    let env = Env::new();
    // not found: 4
    let err = env
        .run(&["--json", "links", "show", "12345"])
        .fails_with(4)
        .error_json();
    assert_eq!(err["error"], "not_found");
    assert_eq!(err["fields"], json!({}));
    env.run(&["spaces", "show", "nothing-here"]).fails_with(4);
    // usage: 2 (clap and our own), also as JSON with --json
    env.run(&["links", "frobnicate"]).fails_with(2);
    env.run(&["links", "create"]).fails_with(2);
    env.run(&["links", "create", "https://a.example", "--disabled=maybe"])
        .fails_with(2);
    env.run(&["links", "create", "https://a.example", "--geo", "US"])
        .fails_with(2);
    let err = env
        .run(&["--json", "links", "list", "--bogus"])
        .fails_with(2)
        .error_json();
    assert_eq!(err["error"], "usage");
    env.run(&["links", "create", "https://a.example"]).ok();
    let run = env.run(&["links", "update", "1"]).fails_with(2);
    assert!(run.stderr.contains("nothing to change"), "{}", run.stderr);
    // conflict: 7 (a domain still in use)
    env.run(&["domains", "add", "sho.rt"]).ok();
    env.run(&["links", "create", "https://b.example", "--domain", "sho.rt"])
        .ok();
    let err = env
        .run(&["--json", "domains", "remove", "sho.rt"])
        .fails_with(7)
        .error_json();
    assert_eq!(err["error"], "conflict");
    // validation: 3 (duplicate space name)
    env.run(&["spaces", "create", "A", "--color", "1"]).ok();
    env.run(&["spaces", "create", "a", "--color", "2"])
        .fails_with(3);
    // unauthorized: 5 (the variable named for the API key is not set)
    let run = env
        .bare()
        .env_remove("NOPE")
        .args([
            "--remote",
            "https://links.example.com",
            "--api-key-env",
            "NOPE",
        ])
        .args(["links", "list"])
        .output()
        .unwrap();
    assert_eq!(run.status.code(), Some(5));
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert!(
        stderr.contains("the environment variable NOPE that should hold the API key is not set"),
        "{stderr}"
    );
    // unavailable: 6 (a server that is not running)
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let run = env
        .bare()
        .env("LINKDECK_TEST_KEY", "some-key")
        .args([
            "--remote",
            &format!("http://127.0.0.1:{port}"),
            "--api-key-env",
            "LINKDECK_TEST_KEY",
        ])
        .args(["links", "list"])
        .output()
        .unwrap();
    assert_eq!(run.status.code(), Some(6));
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert_eq!(
        stderr.trim_end(),
        format!("error: cannot reach http://127.0.0.1:{port}: connection refused")
    );
    // config: 9
    let run = env
        .bare()
        .args(["--profile", "missing", "links", "list"])
        .output()
        .unwrap();
    assert_eq!(run.status.code(), Some(9));
}

#[test]
fn garbage_database_file_is_a_clear_error() {
    let env = Env::new();
    let garbage = env.write("garbage.db", &"this is not a database\n".repeat(500));
    let run = env.run_on(&garbage, &["links", "list"]).fails_with(6);
    assert!(run.stderr.starts_with("error: "), "{}", run.stderr);
    assert!(run.stderr.contains("garbage.db"), "{}", run.stderr);
    assert_eq!(run.stderr.trim().lines().count(), 1, "{}", run.stderr);
    let err = env
        .run_on(&garbage, &["--json", "links", "list"])
        .fails_with(6)
        .error_json();
    assert_eq!(err["error"], "unavailable");
    // The file is left as it was.
    assert!(
        std::fs::read_to_string(&garbage)
            .unwrap()
            .starts_with("this is not")
    );
}

#[test]
fn a_database_locked_by_another_program_is_a_clear_error_and_nothing_is_written() {
    let env = Env::new();
    env.run(&["links", "create", "https://first.example"]).ok();
    // Another program holds the write lock (as a long import or a stuck tool would).
    let other = rusqlite::Connection::open(&env.db).unwrap();
    other.execute_batch("BEGIN IMMEDIATE").unwrap();
    let run = env
        .run(&["links", "create", "https://second.example"])
        .fails_with(6);
    assert!(run.stderr.starts_with("error: "), "{}", run.stderr);
    assert!(run.stderr.contains("busy"), "{}", run.stderr);
    assert_eq!(run.stderr.trim().lines().count(), 1, "{}", run.stderr);
    // Reading does not wait for the writer.
    let listed = env.run(&["--json", "links", "list"]).ok().json();
    assert_eq!(listed["total"], 1, "{listed}");
    other.execute_batch("ROLLBACK").unwrap();
    drop(other);
    // Once the lock is gone the same command works.
    env.run(&["links", "create", "https://second.example"]).ok();
    let listed = env.run(&["--json", "links", "list"]).ok().json();
    assert_eq!(listed["total"], 2, "{listed}");
}

/// An import into a file nothing else has open holds it alone while it writes, and another
/// command meanwhile is told why it must wait; the file is shared again after.
#[test]
fn an_import_holds_a_file_nobody_else_has_open_and_says_so_to_a_command_beside_it() {
    use std::io::Write;
    let env = Env::new();
    env.run(&["links", "create", "https://first.example"]).ok();
    let mut import = env
        .std_cmd()
        .args(["--quiet", "import", "-", "--format", "json"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut input = import.stdin.take().unwrap();
    // The head and a first link: the import starts, and waits for the rest.
    input
        .write_all(b"{\"links\": [{\"url\": \"https://one.example\"},\n")
        .unwrap();
    input.flush().unwrap();
    let journal = || -> String {
        let conn = rusqlite::Connection::open(&env.db).unwrap();
        conn.query_row("PRAGMA journal_mode", [], |r| r.get(0))
            .unwrap_or_default()
    };
    let started = std::time::Instant::now();
    while journal() != "delete" {
        assert!(
            started.elapsed() < std::time::Duration::from_secs(60),
            "the import never held the file alone"
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let run = env.run(&["links", "list"]).fails_with(6);
    assert!(
        run.stderr
            .contains("is busy: another program holds it alone")
            && run.stderr.contains("try again when that has finished"),
        "{}",
        run.stderr
    );
    input
        .write_all(b"{\"url\": \"https://two.example\"}]}\n")
        .unwrap();
    drop(input);
    let out = import.wait_with_output().unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(journal(), "wal", "shared again");
    let listed = env.run(&["--json", "links", "list"]).ok().json();
    assert_eq!(listed["total"], 3, "{listed}");
}

#[test]
fn refusals_say_what_is_allowed() {
    let env = Env::new();
    let run = env
        .run(&["spaces", "create", "Launch", "--color", "pink"])
        .fails_with(3);
    assert!(
        run.stderr
            .contains("red, orange, yellow, green, blue, purple"),
        "{}",
        run.stderr
    );
    let run = env
        .run(&["links", "create", "https://example.com", "--alias", "café"])
        .fails_with(3);
    assert!(run.stderr.contains("ASCII letters"), "{}", run.stderr);
    // A search longer than anything it could find.
    let long = "x".repeat(2_049);
    let run = env.run(&["links", "list", "--search", &long]).fails_with(3);
    assert!(
        run.stderr.contains(
            "\n  search (--search): must be at most 2048 characters, the longest a link's title can be"
        ),
        "{}",
        run.stderr
    );
    let run = env
        .run(&["spaces", "list", "--search", &long[..33]])
        .fails_with(3);
    assert!(
        run.stderr
            .contains("\n  search (--search): must be at most 32 characters"),
        "{}",
        run.stderr
    );
}

#[test]
fn a_closed_output_pipe_ends_quietly() {
    let env = Env::new();
    let demo = concat!(env!("CARGO_MANIFEST_DIR"), "/assets/demo.json");
    env.run(&["import", demo]).ok();
    // The reader goes away before (or while) linkdeck writes: no panic, no error, exit 0.
    let mut child = env
        .std_bare()
        .arg("--db")
        .arg(&env.db)
        .arg("--config")
        .arg(&env.config)
        .args(["links", "list", "--all"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stdout.take());
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(String::from_utf8_lossy(&out.stderr), "");
}

/// Turns the sandbox's database back into the file linkdeck wrote before the per-field search
/// indexes (schema 9: one full-text index over title, alias and url, no common terms, no key
/// access or expiry, no visitor addresses), as an older build left it.
fn as_written_by_schema_9(db: &std::path::Path) {
    let conn = rusqlite::Connection::open(db).unwrap();
    conn.execute_batch(
        "DROP TRIGGER links_fts_ai; DROP TRIGGER links_fts_ad; DROP TRIGGER links_fts_au_title;
         DROP TRIGGER links_fts_au_alias; DROP TRIGGER links_fts_au_url;
         DROP TABLE links_title_fts; DROP TABLE links_alias_fts; DROP TABLE links_url_fts;
         CREATE VIRTUAL TABLE links_fts USING fts5(
             title, alias, url,
             content = 'links', content_rowid = 'id', tokenize = 'trigram', columnsize = 0
         );
         INSERT INTO links_fts(links_fts) VALUES ('rebuild');
         CREATE TRIGGER links_ai AFTER INSERT ON links BEGIN
             INSERT INTO links_fts(rowid, title, alias, url) VALUES (new.id, new.title, new.alias, new.url);
         END;
         CREATE TRIGGER links_ad AFTER DELETE ON links BEGIN
             INSERT INTO links_fts(links_fts, rowid, title, alias, url)
                 VALUES ('delete', old.id, old.title, old.alias, old.url);
         END;
         CREATE TRIGGER links_au_text AFTER UPDATE OF title, alias, url ON links BEGIN
             INSERT INTO links_fts(links_fts, rowid, title, alias, url)
                 VALUES ('delete', old.id, old.title, old.alias, old.url);
             INSERT INTO links_fts(rowid, title, alias, url) VALUES (new.id, new.title, new.alias, new.url);
         END;
         DROP TABLE link_common_grams;
         ALTER TABLE link_grams_upto DROP COLUMN common_at;
         ALTER TABLE api_keys DROP COLUMN read_only;
         ALTER TABLE api_keys DROP COLUMN expires_at;
         ALTER TABLE api_keys DROP COLUMN spaces;
         ALTER TABLE visit_log DROP COLUMN address;
         ALTER TABLE visit_log DROP COLUMN rule;
         DROP TABLE tag_sets; DROP TABLE tag_set_notes;
         DROP TRIGGER link_tags_ai; DROP TRIGGER link_tags_ad; DROP TRIGGER link_tags_au;
         DROP TABLE link_tags;
         ALTER TABLE links DROP COLUMN tags;
         ALTER TABLE trash_links DROP COLUMN tags;
         ALTER TABLE domains DROP COLUMN root_url;
         ALTER TABLE domains DROP COLUMN unknown_url;
         ALTER TABLE domains DROP COLUMN expired_url;
         ALTER TABLE domains DROP COLUMN robots;
         ALTER TABLE domains DROP COLUMN robots_txt;
         DROP TABLE webhook_deliveries; DROP TABLE webhooks; DROP TABLE webhook_expired;
         ALTER TABLE links DROP COLUMN options;
         ALTER TABLE links DROP COLUMN previews;
         ALTER TABLE trash_links DROP COLUMN options;
         ALTER TABLE trash_links DROP COLUMN previews;
         DROP TRIGGER orphan_traffic_domain_gone; DROP TABLE orphan_traffic;
         DROP TRIGGER space_set_notes_ai; DROP TRIGGER space_set_notes_ad;
         DROP TRIGGER space_set_notes_au;
         DROP TABLE space_sets; DROP TABLE space_sets_upto; DROP TABLE space_set_notes;
         DROP TRIGGER domain_set_notes_ai; DROP TRIGGER domain_set_notes_ad;
         DROP TRIGGER domain_set_notes_au;
         DROP TABLE domain_sets; DROP TABLE domain_sets_upto; DROP TABLE domain_set_notes;
         PRAGMA user_version = 9;",
    )
    .unwrap();
}

#[test]
fn an_upgrade_says_so_before_the_wait_and_keeps_every_search() {
    let env = Env::new();
    // Titles as made from the URLs: the host and path, without the query.
    for (url, alias) in [
        ("https://shop.example/summer-sale", "sun"),
        ("https://docs.example/guide?from=summer", "manual"),
    ] {
        env.run(&["links", "create", url, "--alias", alias]).ok();
    }
    as_written_by_schema_9(&env.db);
    let search = |env: &Env, by: &str, term: &str| {
        let found = env.json(&["links", "list", "--search", term, "--by", by]);
        crate::aliases_of(&found["items"])
    };

    let run = env.run(&["links", "list"]).ok();
    assert!(
        run.stderr.starts_with("note: upgrading ") && run.stderr.contains("from schema 9 to "),
        "{}",
        run.stderr
    );
    assert!(run.stdout.contains("sun"), "{}", run.stdout);
    // Each field's own index now: a term is found in the field it is in and only there.
    assert_eq!(search(&env, "url", "summer"), ["manual", "sun"]);
    assert_eq!(search(&env, "title", "summer"), ["sun"]);
    assert_eq!(search(&env, "alias", "anu"), ["manual"]);
    // Three characters, from the short-term index's triples, rebuilt by the upgrade.
    assert_eq!(search(&env, "url", "SUM"), ["manual", "sun"]);
    assert_eq!(search(&env, "title", "sum"), ["sun"]);
    assert!(search(&env, "alias", "summer").is_empty());
    assert!(search(&env, "url", "anu").is_empty());
    // Each place's links, from the bitmaps the upgrade built.
    let in_no_space = env.json(&["links", "list", "--no-space", "--status", "active"]);
    assert_eq!(crate::aliases_of(&in_no_space["items"]), ["manual", "sun"]);
    // Once: the next run has nothing to say.
    let again = env.run(&["links", "list"]).ok();
    assert!(!again.stderr.contains("upgrading"), "{}", again.stderr);

    // --quiet keeps it to itself.
    let quiet = Env::new();
    quiet
        .run(&["links", "create", "https://a.example/x", "--alias", "a"])
        .ok();
    as_written_by_schema_9(&quiet.db);
    let run = quiet.run(&["--quiet", "links", "list"]).ok();
    assert!(run.stderr.is_empty(), "{}", run.stderr);
}

/// Mistakes a newcomer makes first are answered in the words of what they typed: the flag, and
/// what to type instead.
#[test]
fn first_mistakes_name_the_flag_and_the_way_out() {
    let env = Env::new();
    for value in ["2027-03-21", "tomorrow"] {
        let run = env
            .run(&["links", "create", "https://example.com", "--expires", value])
            .fails_with(2);
        assert!(
            run.stderr.contains("--expires") && run.stderr.contains("'2027-03-21 18:00'"),
            "{}",
            run.stderr
        );
        assert!(!run.stderr.contains("expiration_time"), "{}", run.stderr);
    }
    let run = env.run(&["links", "list", "--per-page", "5"]).fails_with(3);
    assert!(
        run.stderr.contains("per_page (--per-page)"),
        "{}",
        run.stderr
    );

    let demo = concat!(env!("CARGO_MANIFEST_DIR"), "/assets/demo.json");
    env.run(&["import", demo]).ok();
    let again = env.run(&["import", demo]).fails_with(3);
    assert!(
        again.stderr.contains("--on-conflict skip") && again.stderr.contains("rename"),
        "{}",
        again.stderr
    );
}

/// A CSV naming spaces that do not exist says how to have them made, and --create-spaces
/// makes them.
#[test]
fn spaces_a_file_names_are_made_with_create_spaces() {
    let env = Env::new();
    let csv = env.write(
        "spaces.csv",
        "url,alias,space\nhttps://a.example/1,a1,Newspace\nhttps://a.example/2,a2,Other\n",
    );
    let csv = csv.to_str().unwrap();
    let refused = env.run(&["import", csv]).fails_with(3);
    assert!(
        refused.stderr.contains("no space is named Newspace")
            && refused.stderr.contains("--create-spaces"),
        "{}",
        refused.stderr
    );
    env.run(&["import", csv, "--create-spaces"]).ok();
    let spaces = env.json(&["spaces", "list"]);
    assert_eq!(spaces["total"], 2);
    let links = env.json(&["links", "list", "--space", "Newspace"]);
    assert_eq!(links["total"], 1);
}
