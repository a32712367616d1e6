//! A link's options from the command line: set at creation, changed one flag at a time (the
//! last of a flag and its `--no-` wins), the preview cleared with `--no-preview`, shown by
//! `links show`, carried by an export into another database; bad values refused naming the
//! flag, nothing changed.

use serde_json::json;

use crate::cli_support::Env;
use crate::ids;

#[test]
fn options_are_set_changed_shown_and_exported() {
    let env = Env::new();
    let link = env.json(&[
        "links",
        "create",
        "https://docs.example/v2",
        "--alias",
        "docs",
        "--forward-path",
        "--no-forward-query",
        "--preview-title",
        "Docs, v2",
        "--preview-image",
        "https://img.example/docs.png",
    ]);
    assert_eq!(link["forward_path"], json!(true));
    assert_eq!(link["forward_query"], json!(false));
    assert_eq!(link["allow_indexing"], json!(false));
    assert_eq!(link["preview_title"], "Docs, v2");
    assert_eq!(link["previews"], 0);

    let changed = env.json(&[
        "links",
        "update",
        "docs",
        "--no-allow-indexing",
        "--allow-indexing",
        "--forward-query",
    ]);
    assert_eq!(changed["allow_indexing"], json!(true), "the last flag wins");
    assert_eq!(changed["forward_query"], json!(true));
    assert_eq!(changed["forward_path"], json!(true), "left as it was");
    let shown = env.run(&["links", "show", "docs"]).ok().stdout;
    assert!(
        shown.contains("query forwarded · extra path forwarded · indexable"),
        "{shown}"
    );
    assert!(
        shown.contains("Docs, v2 · https://img.example/docs.png"),
        "{shown}"
    );

    let file = env.path("links.json");
    env.run(&["export", file.to_str().unwrap()]).ok();
    let other = env.path("other.db");
    env.run_on(&other, &["import", file.to_str().unwrap()]).ok();
    let copied = env
        .run_on(&other, &["--json", "links", "show", "docs"])
        .ok()
        .json();
    for field in [
        "forward_query",
        "forward_path",
        "allow_indexing",
        "preview_title",
        "preview_image",
    ] {
        assert_eq!(copied[field], changed[field], "{field}");
    }

    let cleared = env.json(&["links", "update", "docs", "--no-preview"]);
    assert_eq!(cleared["preview_title"], json!(null));
    assert_eq!(cleared["preview_image"], json!(null));
}

#[test]
fn bad_options_are_refused_naming_the_flag_and_nothing_changes() {
    let env = Env::new();
    let long = "t".repeat(201);
    // A value the rules refuse is an invalid field (3); flags that contradict, a usage error (2).
    for (args, flag, code) in [
        (vec!["--preview-title", long.as_str()], "--preview-title", 3),
        (
            vec!["--preview-image", "javascript:x"],
            "--preview-image",
            3,
        ),
        (
            vec!["--preview-title", "a", "--no-preview"],
            "--no-preview",
            2,
        ),
    ] {
        let mut all = vec!["links", "create", "https://a.example"];
        all.extend(args);
        let run = env.run(&all).fails_with(code);
        assert!(run.stderr.contains(flag), "{all:?}: {}", run.stderr);
    }
    assert_eq!(ids(&env.json(&["links", "list"])).len(), 0);
}
