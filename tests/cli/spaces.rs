//! Spaces, domains and owners.

use crate::cli_support::Env;
use serde_json::Value;

#[test]
fn spaces_round_trip() {
    let env = Env::new();
    let space = env.json(&["spaces", "create", "Launch", "--color", "purple"]);
    assert_eq!(space["name"], "Launch");
    assert_eq!(space["color"], 6);
    let id = space["id"].as_i64().unwrap().to_string();
    let updated = env.json(&[
        "spaces", "update", "launch", "--name", "Launch 2", "--color", "2",
    ]);
    assert_eq!(updated["name"], "Launch 2");
    assert_eq!(updated["color"], 2);
    env.run(&["links", "create", "https://example.com", "--space", &id])
        .ok();
    let list = env.json(&["spaces", "list"]);
    assert_eq!(list["total"], 1);
    assert_eq!(list["items"][0]["links"], 1);
    let text = env.run(&["spaces", "list"]).ok().stdout;
    assert!(
        text.contains("Launch 2") && text.contains("orange"),
        "{text}"
    );
    env.run(&["spaces", "create", "Bad", "--color", "7"])
        .fails_with(3);
    let flagged = env.json(&["spaces", "create", "--name", "Flagged", "--color", "yellow"]);
    assert_eq!(flagged["color"], 3);
    env.run(&["spaces", "create", "--color", "1"]).fails_with(2);
    env.json(&["spaces", "delete", "Flagged"]);
    env.run(&["spaces", "update", &id]).fails_with(2);
    env.json(&["spaces", "delete", "Launch 2"]);
    // The link stays, without a space.
    let links = env.json(&["links", "list"]);
    assert_eq!(links["total"], 1);
    assert_eq!(links["items"][0]["space"], Value::Null);
}

#[test]
fn domains_and_owners() {
    let env = Env::new();
    let domain = env.json(&["domains", "add", "SHO.rt"]);
    assert_eq!(domain["name"], "https://sho.rt");
    let link = env.json(&[
        "links",
        "create",
        "https://example.com",
        "--alias",
        "x",
        "--domain",
        "sho.rt",
    ]);
    assert_eq!(link["short_url"], "https://sho.rt/x");
    assert_eq!(link["domain"]["name"], "https://sho.rt");
    // The same alias on another domain (none) is fine; by alias it is then ambiguous.
    env.run(&["links", "create", "https://example.com/2", "--alias", "x"])
        .ok();
    env.run(&["links", "show", "x"]).fails_with(7);
    let listed = env.json(&["domains", "list"]);
    assert_eq!(listed.as_array().unwrap().len(), 1);
    let on_domain = env.json(&["links", "list", "--domain", "https://sho.rt"]);
    assert_eq!(on_domain["total"], 1);

    env.json(&["links", "delete", &link["id"].to_string()]);
    // The deleted link waits in the trash, on its domain: the domain stays until it is gone.
    let kept = env.run(&["domains", "remove", "sho.rt"]).fails_with(7);
    assert!(kept.stderr.contains("trash"), "{}", kept.stderr);
    env.run(&["trash", "empty", "--yes"]).ok();
    let removed = env.json(&["domains", "remove", "sho.rt"]);
    assert_eq!(removed["deleted"], true);
    env.run(&["domains", "remove", "sho.rt"]).fails_with(4);

    // Owners: each sees only its own records.
    let owner = env.json(&["owners", "add", "alice"]);
    assert_eq!(owner["name"], "alice");
    env.run(&["owners", "add", "alice"]).fails_with(7);
    let owners = env.json(&["owners", "list"]);
    let names: Vec<&str> = owners
        .as_array()
        .unwrap()
        .iter()
        .map(|o| o["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, vec!["default", "alice"]);
    env.run(&[
        "--owner",
        "alice",
        "links",
        "create",
        "https://alice.example",
    ])
    .ok();
    assert_eq!(env.json(&["--owner", "alice", "links", "list"])["total"], 1);
    assert_eq!(env.json(&["links", "list"])["total"], 1);
    env.run(&["--owner", "bob", "links", "list"]).fails_with(4);
}

/// Without `--color` a new space takes the colour the others use least, and says which.
#[test]
fn a_space_made_without_a_colour_gets_the_least_used_one() {
    let env = Env::new();
    env.json(&["spaces", "create", "First", "--color", "red"]);
    let second = env.run(&["spaces", "create", "Second"]).ok().stdout;
    assert!(second.contains("\"Second\" (orange)"), "{second}");
    let third = env.json(&["spaces", "create", "Third"]);
    assert_eq!(third["color"], 3);
}

#[test]
fn domain_fallbacks_are_set_shown_and_cleared() {
    let env = Env::new();
    env.run(&["domains", "add", "sho.rt"]).ok();
    let updated = env.json(&[
        "domains",
        "update",
        "sho.rt",
        "--root-url",
        "https://home.example/",
        "--unknown-url",
        "https://home.example/404",
        "--expired-url",
        "https://home.example/gone",
        "--robots",
        "allow",
    ]);
    assert_eq!(updated["root_url"], "https://home.example/");
    assert_eq!(updated["unknown_url"], "https://home.example/404");
    assert_eq!(updated["expired_url"], "https://home.example/gone");
    assert_eq!(updated["robots"], "allow");
    let text = env.run(&["domains", "list"]).ok().stdout;
    assert!(
        text.contains("ROOT")
            && text.contains("https://home.example/404")
            && text.contains("allow"),
        "{text}"
    );
    // One setting changes alone; the others stay.
    let cleared = env.json(&["domains", "update", "sho.rt", "--no-root-url"]);
    assert_eq!(cleared["root_url"], Value::Null);
    assert_eq!(cleared["unknown_url"], "https://home.example/404");
    let robots = env.write("robots.txt", "User-agent: *\nDisallow: /private\n");
    let custom = env.json(&[
        "domains",
        "update",
        "sho.rt",
        "--robots-file",
        robots.to_str().unwrap(),
    ]);
    assert_eq!(custom["robots"], "custom");
    assert_eq!(custom["robots_txt"], "User-agent: *\nDisallow: /private\n");
    let listed = env.json(&["domains", "list"]);
    assert_eq!(listed[0]["expired_url"], "https://home.example/gone");
}

#[test]
fn bad_domain_settings_name_their_flag() {
    let env = Env::new();
    env.run(&["domains", "add", "sho.rt"]).ok();
    for (args, flag) in [
        (vec!["--root-url", "ftp://x.example"], "--root-url"),
        (vec!["--unknown-url", "not a url"], "--unknown-url"),
        (vec!["--expired-url", ""], "--expired-url"),
        (vec!["--robots", "sometimes"], "--robots"),
        (
            vec!["--root-url", "https://a.example", "--no-root-url"],
            "--root-url",
        ),
        (vec!["--robots-file", "/no/such/file"], "--robots-file"),
    ] {
        let mut all = vec!["domains", "update", "sho.rt"];
        all.extend(args.iter().copied());
        let run = env.run(&all).fails_with(2);
        assert!(run.stderr.contains(flag), "{args:?}: {}", run.stderr);
        assert!(!run.stderr.contains("panick"), "{}", run.stderr);
    }
    let big = env.write("big.txt", &"a".repeat(5000));
    let run = env
        .run(&[
            "domains",
            "update",
            "sho.rt",
            "--robots-file",
            big.to_str().unwrap(),
        ])
        .fails_with(2);
    assert!(run.stderr.contains("--robots-file"), "{}", run.stderr);
    let run = env.run(&["domains", "update", "sho.rt"]).fails_with(2);
    assert!(run.stderr.contains("nothing to change"), "{}", run.stderr);
    env.run(&["domains", "update", "no.such", "--robots", "allow"])
        .fails_with(4);
}
