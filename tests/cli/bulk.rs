//! Bulk edits over a filter, and the trash.

use crate::cli_support::Env;
use crate::{aliases_of, ids};
use serde_json::Value;

fn seed_campaign(env: &Env) {
    for i in 0..4 {
        env.run(&[
            "links",
            "create",
            &format!("https://shop.example/spring/{i}"),
            "--alias",
            &format!("spring{i}"),
        ])
        .ok();
    }
    env.run(&[
        "links",
        "create",
        "https://docs.example/x",
        "--alias",
        "docs",
    ])
    .ok();
}

fn disabled_aliases(env: &Env) -> Vec<String> {
    aliases_of(&env.json(&["links", "list", "--status", "disabled"])["items"])
}

#[test]
fn bulk_update_over_a_filter_with_a_dry_run_and_a_required_yes() {
    let env = Env::new();
    seed_campaign(&env);
    let dry = env
        .run(&[
            "links",
            "update",
            "--search",
            "spring",
            "--by",
            "url",
            "--disabled",
            "--dry-run",
        ])
        .ok();
    assert!(
        dry.stdout.contains("would disable 4 links"),
        "{}",
        dry.stdout
    );
    assert!(
        dry.stdout.contains("spring3"),
        "the first matches are shown:\n{}",
        dry.stdout
    );
    assert!(
        disabled_aliases(&env).is_empty(),
        "a dry run changes nothing"
    );
    let json = env.json(&[
        "links",
        "delete",
        "--search",
        "spring",
        "--by",
        "url",
        "--dry-run",
    ]);
    assert_eq!(json["total"], 4);
    assert_eq!(json["first"].as_array().unwrap().len(), 4);

    // Not on a terminal and no --yes: refused, nothing changed.
    let refused = env
        .run(&[
            "links",
            "update",
            "--search",
            "spring",
            "--by",
            "url",
            "--disabled",
        ])
        .fails_with(2);
    assert!(refused.stderr.contains("--yes"), "{}", refused.stderr);
    assert!(disabled_aliases(&env).is_empty());

    let done = env
        .run(&[
            "links",
            "update",
            "--search",
            "spring",
            "--by",
            "url",
            "--disabled",
            "--yes",
        ])
        .ok();
    assert!(done.stdout.contains("4 links changed"), "{}", done.stdout);
    assert_eq!(
        disabled_aliases(&env),
        ["spring0", "spring1", "spring2", "spring3"]
    );

    // Fields that belong to one link are refused for many.
    let bad = env
        .run(&["links", "update", "--all", "--alias", "same", "--yes"])
        .fails_with(3);
    assert!(bad.stderr.contains("many links"), "{}", bad.stderr);
    // A link and filters together are a usage error.
    env.run(&["links", "update", "docs", "--status", "active", "--public"])
        .fails_with(2);
}

#[test]
fn bulk_delete_goes_to_the_trash_and_comes_back() {
    let env = Env::new();
    seed_campaign(&env);
    let done = env
        .run(&["links", "delete", "--search", "spring", "--by", "url", "-y"])
        .ok();
    assert!(done.stdout.contains("4 links deleted"), "{}", done.stdout);
    let left = env.json(&["links", "list"]);
    assert_eq!(left["total"], 1);

    let trash = env.json(&["trash", "list"]);
    assert_eq!(trash["total"], 4);
    let item = &trash["items"][0];
    assert_eq!(item["kind"], "link");
    assert!(item["purge_at"].is_string());
    let text = env.run(&["trash", "list"]).ok().stdout;
    assert!(text.contains("spring2"), "{text}");

    env.run(&["trash", "restore", "spring1", "link:3"]).ok();
    assert_eq!(env.json(&["links", "list"])["total"], 3);
    let missing = env.run(&["trash", "restore", "nothing-here"]).fails_with(4);
    assert!(
        missing.stderr.contains("nothing-here"),
        "{}",
        missing.stderr
    );
    env.run(&["trash", "restore", "--all"]).ok();
    let all = env.json(&["links", "list"]);
    assert_eq!(all["total"], 5);
    assert_eq!(ids(&all), [5, 4, 3, 2, 1], "the same ids came back");

    env.run(&["links", "delete", "docs"]).ok();
    env.run(&["trash", "empty"]).fails_with(2);
    let emptied = env.json(&["trash", "empty", "--yes"]);
    assert_eq!(emptied["purged"], 1);
    assert_eq!(env.json(&["trash", "list"])["total"], 0);
}

#[test]
fn the_trash_keeps_deleted_links_for_the_profiles_days() {
    let env = Env::new();
    let db = env.path("kept.db");
    let config = env.write(
        "days.toml",
        &format!(
            "[profiles.local]\nbackend = \"local\"\ndb = \"{}\"\ntrash_days = 0\n",
            db.display()
        ),
    );
    let run = |args: &[&str]| {
        let mut cmd = env.bare();
        cmd.arg("--config").arg(&config).args(args);
        crate::cli_support::run(&mut cmd)
    };
    run(&["links", "create", "https://a.example", "--alias", "kept"]).ok();
    run(&["links", "delete", "kept"]).ok();
    let list = run(&["--json", "trash", "list"]).ok().json();
    assert_eq!(
        list["items"][0]["purge_at"],
        Value::Null,
        "0 keeps them until emptied"
    );
    let bad = env.write(
        "bad.toml",
        "[profiles.r]\nbackend = \"remote\"\nbase_url = \"http://127.0.0.1:1\"\napi_key_env = \"K\"\ntrash_days = 3\n",
    );
    let mut cmd = env.bare();
    cmd.arg("--config").arg(&bad).args(["links", "list"]);
    let out = crate::cli_support::run(&mut cmd).fails_with(9);
    assert!(out.stderr.contains("trash_days"), "{}", out.stderr);
}
