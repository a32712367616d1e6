//! Tags from the command line: put on at creation, replaced, added and taken off one link or
//! many, listed, renamed and merged; bad tags refused naming the flag.

use crate::cli_support::Env;
use crate::{aliases_of, ids};

#[test]
fn tags_are_put_on_listed_renamed_and_taken_off() {
    let env = Env::new();
    let a = env.json(&[
        "links",
        "create",
        "https://a.example",
        "--alias",
        "a",
        "--tag",
        " Promo ",
        "--tag",
        "q4",
    ]);
    assert_eq!(a["tags"], serde_json::json!(["promo", "q4"]));
    env.json(&[
        "links",
        "create",
        "https://b.example",
        "--alias",
        "b",
        "--tag",
        "promo",
    ]);
    env.json(&["links", "create", "https://c.example", "--alias", "c"]);

    let both = env.json(&["links", "list", "--tag", "promo", "--tag", "q4"]);
    assert_eq!(aliases_of(&both["items"]), ["a"]);
    let either = env.json(&[
        "links",
        "list",
        "--tag",
        "q4",
        "--tag",
        "promo",
        "--any-tag",
    ]);
    assert_eq!(aliases_of(&either["items"]), ["a", "b"]);
    let text = env.run(&["links", "show", "a"]).ok().stdout;
    assert!(text.contains("tags          promo, q4"), "{text}");

    // One link: added and taken off, keeping the others; replaced; cleared.
    let a = env.json(&[
        "links",
        "update",
        "a",
        "--add-tag",
        "sale",
        "--remove-tag",
        "q4",
    ]);
    assert_eq!(a["tags"], serde_json::json!(["promo", "sale"]));
    let a = env.json(&["links", "update", "a", "--tag", "only"]);
    assert_eq!(a["tags"], serde_json::json!(["only"]));
    let a = env.json(&["links", "update", "a", "--no-tags"]);
    assert_eq!(a["tags"], serde_json::json!([]));

    // Many links: those tagged promo get spring too, in one go.
    let done = env.json(&[
        "links",
        "update",
        "--tagged",
        "promo",
        "--add-tag",
        "spring",
        "--yes",
    ]);
    assert_eq!(done["changed"], 1, "{done}");
    let list = env.json(&["tags", "list"]);
    let names: Vec<(&str, i64)> = list
        .as_array()
        .unwrap()
        .iter()
        .map(|t| (t["name"].as_str().unwrap(), t["links"].as_i64().unwrap()))
        .collect();
    assert_eq!(names, [("promo", 1), ("spring", 1)]);
    let text = env.run(&["tags", "list"]).ok().stdout;
    assert!(text.contains("spring"), "{text}");

    let renamed = env.json(&["tags", "rename", "spring", "Promo"]);
    assert_eq!(renamed["links"], 1);
    assert_eq!(
        ids(&env.json(&["links", "list", "--tag", "spring"])).len(),
        0
    );
    let b = env.json(&["links", "show", "b"]);
    assert_eq!(b["tags"], serde_json::json!(["promo"]), "merged");
}

#[test]
fn bad_tags_are_refused_naming_the_flag_and_nothing_changes() {
    let env = Env::new();
    let long = "x".repeat(41);
    for args in [
        vec!["links", "create", "https://a.example", "--tag", "a,b"],
        vec!["links", "create", "https://a.example", "--tag", "   "],
        vec![
            "links",
            "create",
            "https://a.example",
            "--tag",
            long.as_str(),
        ],
        vec!["links", "list", "--tag", "a,b"],
        vec!["links", "list", "--any-tag"],
        vec!["tags", "rename", "a", ""],
    ] {
        let run = env.run(&args).fails_with(2);
        assert!(
            run.stderr.contains("--tag")
                || run.stderr.contains("<TO>")
                || run.stderr.contains("tag"),
            "{args:?}: {}",
            run.stderr
        );
    }
    let run = env.run(&["tags", "rename", "nothing", "x"]).fails_with(4);
    assert!(run.stderr.contains("nothing"), "{}", run.stderr);
    let run = env
        .run(&[
            "links",
            "update",
            "--all",
            "--add-tag",
            "x",
            "--public",
            "--yes",
        ])
        .fails_with(2);
    assert!(run.stderr.contains("--add-tag"), "{}", run.stderr);
    assert_eq!(ids(&env.json(&["links", "list"])).len(), 0);
}
