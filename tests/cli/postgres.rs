//! The commands on a PostgreSQL database (`--db postgres://…`, the password from
//! `LINKDECK_DB_PASSWORD`): links created, listed, searched, edited one by one and in bulk,
//! deleted into the trash and back; spaces and domains. Skipped, with the reason, without
//! PostgreSQL (see `tests/pg_cluster`).

use serde_json::Value;

use crate::cli_support::{Env, Run, run};
use crate::pg_cluster;
use crate::{aliases_of, ids};

/// A sandbox whose commands run on a fresh database of the test cluster.
struct PgEnv {
    env: Env,
    url: String,
}

impl PgEnv {
    fn new() -> Option<PgEnv> {
        let url = pg_cluster::cluster()?.fresh_database();
        Some(PgEnv {
            env: Env::new(),
            url,
        })
    }

    /// The binary on the database, with the password in its environment only.
    fn run_with(&self, password: &str, args: &[&str]) -> Run {
        let mut cmd = self.env.bare();
        cmd.arg("--db")
            .arg(&self.url)
            .arg("--config")
            .arg(&self.env.config)
            .env("LINKDECK_DB_PASSWORD", password)
            .args(args);
        run(&mut cmd)
    }

    fn run(&self, args: &[&str]) -> Run {
        self.run_with(pg_cluster::PASSWORD, args)
    }

    fn json(&self, args: &[&str]) -> Value {
        let mut all = vec!["--json"];
        all.extend_from_slice(args);
        self.run(&all).ok().json()
    }

    /// The aliases a search finds, in alias order.
    fn found(&self, by: &str, term: &str) -> Vec<String> {
        aliases_of(&self.json(&["links", "list", "--search", term, "--by", by, "--all"]))
    }
}

#[test]
fn links_are_created_listed_searched_and_edited_on_postgres() {
    let Some(pg) = PgEnv::new() else {
        return;
    };
    pg.run(&["spaces", "create", "Launch", "--color", "green"])
        .ok();
    let domain = pg.json(&["domains", "add", "sho.rt"]);
    assert_eq!(domain["name"], "https://sho.rt");
    let link = pg.json(&[
        "links",
        "create",
        "https://shop.example.com/Summer-Shoes",
        "--alias",
        "ShoeSale",
        "--space",
        "launch",
        "--max-clicks",
        "100",
        "--geo",
        "us=https://shop.example.com/us",
    ]);
    assert_eq!(link["alias"], "ShoeSale");
    assert_eq!(link["title"], "shop.example.com/Summer-Shoes");
    assert_eq!(link["space"]["name"], "Launch");
    assert_eq!(link["geo"][0]["key"], "US");
    assert_eq!(link["status"], "active");
    let id = link["id"].as_i64().unwrap().to_string();
    assert_eq!(pg.json(&["links", "show", "shoesale"]), link);
    for (i, url) in [
        "https://blog.example.org/winter/boots",
        "https://docs.example.net/guide?lang=en",
        "https://x.example/100%25off",
    ]
    .into_iter()
    .enumerate()
    {
        pg.run(&["links", "create", url, "--alias", &format!("k{i}")])
            .ok();
    }
    let on_domain = pg.json(&[
        "links",
        "create",
        "https://a.example",
        "--alias",
        "shoesale",
        "--domain",
        "sho.rt",
    ]);
    assert_eq!(on_domain["short_url"], "https://sho.rt/shoesale");

    // Lists: newest first, pages, filters.
    let all = pg.json(&["links", "list"]);
    assert_eq!(all["total"], 5);
    assert_eq!(ids(&all)[0], on_domain["id"].as_i64().unwrap());
    let second_page = pg.json(&["links", "list", "--per-page", "10", "--page", "2"]);
    assert!(ids(&second_page).is_empty());
    assert_eq!(second_page["total"], 5);
    assert_eq!(
        ids(&pg.json(&["links", "list", "--space", "Launch"])),
        [link["id"].as_i64().unwrap()]
    );
    assert_eq!(
        pg.json(&["links", "list", "--domain", "sho.rt"])["total"],
        1
    );

    // Searches: without case, by each field, wildcards taken literally.
    assert_eq!(pg.found("title", "SUMMER-shoes"), ["ShoeSale"]);
    assert_eq!(pg.found("url", "lang=EN"), ["k1"]);
    assert_eq!(pg.found("alias", "shoe"), ["ShoeSale", "shoesale"]);
    assert_eq!(pg.found("url", "%"), ["k2"]);
    assert_eq!(pg.found("url", "_"), Vec::<String>::new());
    assert_eq!(pg.found("url", "g"), ["k0", "k1"]);

    // Edits: one link, then every match of a search; the alias taken is a field error.
    let updated = pg.json(&[
        "links",
        "update",
        &id,
        "--url",
        "https://new.example/b/",
        "--disabled",
    ]);
    assert_eq!(updated["title"], "new.example/b");
    assert_eq!(updated["status"], "disabled");
    assert_eq!(updated["alias"], "ShoeSale");
    let taken = pg
        .run(&["--json", "links", "update", "k0", "--alias", "SHOESALE"])
        .fails_with(3);
    assert_eq!(taken.error_json()["fields"]["alias"][0], "is already taken");
    pg.run(&[
        "links", "update", "--search", "example", "--by", "url", "--public", "--yes",
    ])
    .ok();
    let public = pg.json(&["links", "list", "--all"]);
    assert!(
        public
            .as_array()
            .unwrap()
            .iter()
            .all(|l| l["public"] == true),
        "{public}"
    );
    assert_eq!(
        pg.json(&["links", "list", "--status", "disabled"])["total"],
        1
    );
    assert_eq!(
        pg.json(&["links", "list", "--status", "active"])["total"],
        4
    );

    // Deleted into the trash and back, with its id.
    pg.run(&["links", "delete", "k1"]).ok();
    assert!(pg.found("url", "docs").is_empty());
    let trash = pg.run(&["trash", "list"]).ok().stdout;
    assert!(trash.contains("k1"), "{trash}");
    pg.run(&["trash", "restore", "k1"]).ok();
    assert_eq!(pg.found("url", "docs"), ["k1"]);

    // Spaces count their links; a domain in use is kept.
    let spaces = pg.json(&["spaces", "list"]);
    assert_eq!(spaces["items"][0]["links"], 1);
    pg.run(&["domains", "remove", "sho.rt"]).fails_with(7);
}

#[test]
fn a_wrong_database_password_is_refused_without_showing_it() {
    let Some(pg) = PgEnv::new() else {
        return;
    };
    let refused = pg
        .run_with("not-the-password-42", &["links", "list"])
        .fails_with(6);
    assert!(
        refused.stderr.contains("LINKDECK_DB_PASSWORD"),
        "{}",
        refused.stderr
    );
    assert!(
        !refused.stderr.contains("not-the-password-42"),
        "{}",
        refused.stderr
    );
    assert!(!refused.stdout.contains("not-the-password-42"));
}

#[test]
fn a_profile_gets_its_database_password_from_a_command() {
    let Some(pg) = PgEnv::new() else {
        return;
    };
    let secret = pg.env.write("secret", pg_cluster::PASSWORD);
    let config = pg.env.write(
        "pg.toml",
        &format!(
            "default_profile = \"shared\"\n\n[profiles.shared]\nbackend = \"local\"\n\
             db = \"{}\"\ndb_password_command = \"cat '{}'\"\n",
            pg.url,
            secret.display()
        ),
    );
    let on_profile = |args: &[&str]| {
        let mut cmd = pg.env.bare();
        cmd.arg("--config")
            .arg(&config)
            .env_remove("LINKDECK_DB_PASSWORD")
            .env_remove("PGPASSWORD")
            .args(args);
        run(&mut cmd)
    };
    on_profile(&[
        "links",
        "create",
        "https://example.com/from-a-command",
        "--alias",
        "cmd",
    ])
    .ok();
    assert_eq!(
        aliases_of(
            &on_profile(&["--json", "links", "list", "--all"])
                .ok()
                .json()
        ),
        ["cmd"]
    );
    // A command that fails says so in one line, without running anything else.
    std::fs::remove_file(&secret).unwrap();
    let failed = on_profile(&["links", "list"]);
    assert_eq!(failed.code, 6, "{}", failed.stderr);
    assert!(
        failed.stderr.contains("db_password_command failed"),
        "{}",
        failed.stderr
    );
}

#[test]
fn links_copied_from_a_file_into_postgres_keep_their_space_clicks_and_traffic() {
    let Some(pg) = PgEnv::new() else {
        return;
    };
    // The file: a link in a space with a history, and one without.
    let seed = pg.env.write(
        "seed.json",
        r#"{"version": 1, "spaces": [{"name": "Launch", "color": 2}], "links": [
            {"url": "https://a.example", "alias": "a", "space": "Launch", "clicks": 5,
             "traffic": [{"hour": "2024-03-01T10:00:00Z", "clicks": 3, "country": {"DE": 2}}]},
            {"url": "https://b.example", "alias": "b"}
        ]}"#,
    );
    pg.env.run(&["import", seed.to_str().unwrap()]).ok();
    let file = pg.env.db.to_str().unwrap().to_owned();
    let copy = |extra: &[&str]| {
        let mut cmd = pg.env.bare();
        cmd.arg("--config")
            .arg(&pg.env.config)
            .envs(pg_cluster::password_env())
            .args(["--json", "copy", "--from", &file, "--to", &pg.url])
            .args(extra);
        run(&mut cmd)
    };
    let summary = copy(&[]).ok().json();
    assert_eq!(
        (&summary["links_copied"], &summary["clicks_copied"]),
        (&Value::from(2), &Value::from(3)),
        "{summary}"
    );
    let a = pg.json(&["links", "show", "a"]);
    assert_eq!(
        (&a["space"]["name"], &a["clicks"]),
        (&"Launch".into(), &5.into())
    );
    let day = pg.json(&["stats", "a", "--from", "2024-03-01", "--to", "2024-03-01"]);
    assert_eq!(day["clicks"], 3, "{day}");
    assert_eq!(day["country"]["top"][0]["value"], "DE", "{day}");
    let space = pg.json(&[
        "stats",
        "--space",
        "Launch",
        "--from",
        "2024-03-01",
        "--to",
        "2024-03-01",
    ]);
    assert_eq!(space["clicks"], 3, "{space}");

    // Copied again: what is there already is passed over; an alias taken there by another link
    // stops the copy before anything is written, or is renamed.
    pg.env
        .run(&["links", "create", "https://c.example", "--alias", "c"])
        .ok();
    pg.run(&["links", "create", "https://other.example", "--alias", "c"])
        .ok();
    let refused = copy(&[]).fails_with(3).error_json();
    assert!(refused["fields"]["link c: alias"].is_array(), "{refused}");
    let summary = copy(&["--on-conflict", "rename"]).ok().json();
    assert_eq!(summary["links_already_there"], 2, "{summary}");
    assert_eq!(summary["renamed"][0]["to"], "c-2", "{summary}");
    assert_eq!(pg.found("alias", "c"), ["c", "c-2"]);
}
