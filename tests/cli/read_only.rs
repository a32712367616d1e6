//! `--read-only` and a profile's `read_only = true`: every question answered, every change
//! refused before it reaches the database, and the database left as it was.

use crate::cli_support::Env;

/// Each change the CLI can make, refused the same way; what was there stays.
#[test]
fn the_read_only_flag_refuses_every_change_and_answers_every_question() {
    let env = Env::new();
    env.json(&[
        "links",
        "create",
        "https://example.com/kept",
        "--alias",
        "kept",
    ]);
    let csv = env.write("more.csv", "url,alias\nhttps://example.com/new,new\n");
    let csv = csv.to_str().unwrap();
    for change in [
        &["links", "create", "https://example.com/x"][..],
        &[
            "links",
            "update",
            "kept",
            "--url",
            "https://example.com/changed",
        ],
        &["links", "delete", "kept"],
        &["spaces", "create", "Launch", "--color", "1"],
        &["import", csv],
        &["domains", "add", "go.example.com"],
        &["owners", "add", "someone"],
        &["keys", "create"],
        &["trash", "empty", "--yes"],
    ] {
        let mut args = vec!["--read-only"];
        args.extend_from_slice(change);
        let run = env.run(&args).fails_with(6);
        assert!(
            run.stderr.contains("read-only") && run.stderr.contains("read_only = true"),
            "{change:?}: {}",
            run.stderr
        );
    }
    let listed = env.json(&["--read-only", "links", "list"]);
    let aliases: Vec<&str> = listed["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l["alias"].as_str().unwrap())
        .collect();
    assert_eq!(aliases, ["kept"], "nothing was added or removed");
    let kept = env.json(&["links", "show", "kept"]);
    assert_eq!(kept["url"], "https://example.com/kept");
}

/// A profile can be read-only by itself, for a production database opened often.
#[test]
fn a_read_only_profile_refuses_changes_without_the_flag() {
    let env = Env::new();
    let db = env.path("prod.db");
    env.run_on(
        &db,
        &["links", "create", "https://example.com/a", "--alias", "a"],
    )
    .ok();
    let config = env.write(
        "ro.toml",
        &format!(
            "default_profile = \"prod\"\n\n[profiles.prod]\nbackend = \"local\"\n\
             db = \"{}\"\nread_only = true\n",
            db.display()
        ),
    );
    let run =
        |args: &[&str]| crate::cli_support::run(env.bare().arg("--config").arg(&config).args(args));
    run(&["links", "list"]).ok();
    let refused = run(&["links", "delete", "a", "--yes"]).fails_with(6);
    assert!(refused.stderr.contains("read-only"), "{}", refused.stderr);
    env.run_on(&db, &["links", "show", "a"]).ok();
}
