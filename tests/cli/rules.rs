//! A link's redirect rules from the command line: `--rule` in order at creation, replaced on
//! update, cleared with `--no-rules`, carried by JSON and CSV exports into another database;
//! a bad rule refused naming the rule and its flag, nothing changed.

use serde_json::{Value, json};

use crate::cli_support::Env;
use crate::ids;

const RULES: [&str; 3] = [
    "country DE => https://de.example/",
    "schedule mon,fri 09-17 Europe/Paris => https://office.example/",
    "split 30*https://a.example/,70*https://b.example/ until 2030-02-01T00:00:00Z => https://b.example/",
];

fn kinds(link: &Value) -> Vec<Value> {
    link["rules"]
        .as_array()
        .map(|r| r.iter().map(|r| r["kind"].clone()).collect())
        .unwrap_or_default()
}

#[test]
fn rules_are_set_replaced_cleared_and_exported() {
    let env = Env::new();
    let mut args = vec!["links", "create", "https://example.com/", "--alias", "r"];
    for rule in RULES {
        args.extend(["--rule", rule]);
    }
    let link = env.json(&args);
    assert_eq!(
        kinds(&link),
        [json!("country"), json!("schedule"), json!("split")]
    );

    // The table lists them in order, each as `--rule` takes it.
    let shown = env.run(&["links", "show", "r"]).ok().stdout;
    assert!(
        shown.contains("rules         3 (asked first, in order)"),
        "{shown}"
    );
    for (i, rule) in RULES.iter().enumerate() {
        let line = format!("              {}. {rule}", i + 1);
        assert!(shown.lines().any(|l| l == line), "{line:?} in {shown}");
    }

    for format in ["json", "csv"] {
        let file = env.path(&format!("links.{format}"));
        env.run(&["export", file.to_str().unwrap()]).ok();
        let other = env.path(&format!("other-{format}.db"));
        env.run_on(&other, &["import", file.to_str().unwrap()]).ok();
        let copied = env
            .run_on(&other, &["--json", "links", "show", "r"])
            .ok()
            .json();
        assert_eq!(copied["rules"], link["rules"], "{format}");
    }

    let replaced = env.json(&[
        "links",
        "update",
        "r",
        "--rule",
        "query ref => https://q.example/",
    ]);
    assert_eq!(kinds(&replaced), [json!("query")]);
    let cleared = env.json(&["links", "update", "r", "--no-rules"]);
    assert_eq!(cleared.get("rules"), None, "{cleared}");
}

#[test]
fn a_bad_rule_is_refused_naming_the_rule_and_nothing_changes() {
    let env = Env::new();
    let run = env
        .run(&[
            "links",
            "create",
            "https://a.example",
            "--rule",
            "country DE => https://de.example/",
            "--rule",
            "country XX => https://x.example/",
        ])
        .fails_with(3);
    assert!(
        run.stderr.contains("rules.1.country (--rule #2)"),
        "{}",
        run.stderr
    );
    let run = env
        .run(&[
            "links",
            "create",
            "https://a.example",
            "--rule",
            "colour red => x",
        ])
        .fails_with(3);
    assert!(run.stderr.contains("--rule #1"), "{}", run.stderr);
    assert_eq!(ids(&env.json(&["links", "list"])).len(), 0);
}

/// Through a linkdeck server the rules go out with the rest of the form and come back in
/// order; a bad one is refused by the server naming the flag, and nothing is created.
#[test]
fn rules_through_a_server() {
    let env = Env::new();
    let served = env.path("served.db");
    let key = env.run_on(&served, &["keys", "create"]).ok().stdout;
    let server = crate::through_server::Server::start(&env, &served);
    let remote = |args: &[&str]| server.cli(&env, key.trim(), args);

    let mut args = vec![
        "--json",
        "links",
        "create",
        "https://example.com/",
        "--alias",
        "r",
    ];
    for rule in RULES {
        args.extend(["--rule", rule]);
    }
    let made = remote(&args).ok().json();
    assert_eq!(
        kinds(&made),
        [json!("country"), json!("schedule"), json!("split")]
    );
    let stored = env
        .run_on(&served, &["--json", "links", "show", "r"])
        .ok()
        .json();
    assert_eq!(stored["rules"], made["rules"]);

    let replaced = remote(&[
        "--json",
        "links",
        "update",
        "r",
        "--rule",
        "query ref=a&b => https://q.example/?x=1",
    ])
    .ok()
    .json();
    assert_eq!(replaced["rules"][0]["value"], "a&b", "{replaced}");
    assert_eq!(replaced["rules"][0]["url"], "https://q.example/?x=1");

    let run = remote(&[
        "links",
        "create",
        "https://a.example",
        "--alias",
        "bad",
        "--rule",
        "country DE => https://de.example/",
        "--rule",
        "country XX => https://x.example/",
    ])
    .fails_with(3);
    assert!(
        run.stderr.contains("rules.1.country (--rule #2)"),
        "{}",
        run.stderr
    );
    env.run_on(&served, &["links", "show", "bad"]).fails_with(4);

    let cleared = remote(&["--json", "links", "update", "r", "--no-rules"])
        .ok()
        .json();
    assert_eq!(cleared.get("rules"), None, "{cleared}");
}
