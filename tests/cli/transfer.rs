//! Import and export: round trips in JSON and CSV, batches, refused files and rows.

use crate::cli_support::Env;
use crate::stores::Store;
use serde_json::{Value, json};

on_both_stores!(
    json_export_import_round_trip,
    csv_export_import_round_trip,
    export_walks_every_link_once_across_batches,
    export_to_stdout_and_formats,
    a_very_bad_import_counts_every_error_and_lists_the_first_in_line_order,
    bad_import_row_aborts_and_names_its_line,
    import_from_stdin_reuses_existing_spaces,
    demo_file_loads,
    a_csv_space_may_get_its_colour_on_a_later_row,
    a_csv_import_past_one_write_chunk_still_writes_nothing_for_a_bad_last_row,
    clicks_and_previews_travel_in_both_formats,
);

fn fill(env: &Env) {
    env.run(&["domains", "add", "sho.rt"]).ok();
    env.run(&["spaces", "create", "Launch", "--color", "green"])
        .ok();
    env.run(&["spaces", "create", "Empty", "--color", "red"])
        .ok();
    env.run(&[
        "links",
        "create",
        "https://example.com/a",
        "--alias",
        "a",
        "--space",
        "Launch",
        "--geo",
        "US=https://example.com/us;x=1",
        "--geo",
        "FR=https://example.com/fr",
        "--expires",
        "2031-02-03 04:05",
        "--expiration-url",
        "https://example.com/gone",
        "--tag",
        "promo",
        "--tag",
        "q4",
    ])
    .ok();
    env.run_stdin(
        &[
            "links",
            "create",
            "https://example.com/b",
            "--alias",
            "b",
            "--password-stdin",
            "--max-clicks",
            "50",
            "--public",
        ],
        "pw\n",
    )
    .ok();
    env.run(&[
        "links",
        "create",
        "https://example.com/c",
        "--alias",
        "c",
        "--domain",
        "sho.rt",
        "--platform",
        "Android=https://example.com/android",
        "--disabled",
    ])
    .ok();
    env.run(&[
        "links",
        "create",
        "https://example.com/d",
        "--alias",
        "d",
        "--rotation",
        "https://example.com/r1",
        "--rotation",
        "https://example.com/r2",
    ])
    .ok();
}

/// The links as an import would recreate them: without ids, times and clicks.
fn comparable(env: &Env) -> Vec<Value> {
    let all = env.json(&["links", "list", "--all", "--sort", "asc"]);
    all.as_array()
        .unwrap()
        .iter()
        .map(|l| {
            json!({
                "alias": l["alias"], "url": l["url"], "short_url": l["short_url"],
                "title": l["title"], "space": l["space"]["name"], "domain": l["domain"]["name"],
                "disabled": l["disabled"], "public": l["public"], "ends_at": l["ends_at"],
                "expiration_clicks": l["expiration_clicks"], "expiration_url": l["expiration_url"],
                "target_type": l["target_type"], "geo": l["geo"], "platform": l["platform"],
                "rotation": l["rotation"], "tags": l["tags"],
            })
        })
        .collect()
}

fn round_trip(store: Store, file: &str) {
    let env = store.env();
    fill(&env);
    let path = env.path(file);
    let run = env.run(&["export", path.to_str().unwrap()]).ok();
    assert!(run.stdout.contains("exported 4 links"), "{}", run.stdout);
    assert!(
        run.stderr.contains("1 link has a password"),
        "{}",
        run.stderr
    );

    let fresh = store.env();
    fresh.run(&["domains", "add", "https://sho.rt"]).ok();
    let summary = fresh.json(&["import", path.to_str().unwrap()]);
    assert_eq!(summary["links_created"], 4);
    assert_eq!(summary["passwords_not_imported"], 1);
    assert_eq!(comparable(&env), comparable(&fresh));
    assert_eq!(comparable(&fresh)[0]["tags"], json!(["promo", "q4"]));

    // Spaces with colours come along.
    let spaces = fresh.json(&["spaces", "list", "--all"]);
    let launch = spaces
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["name"] == "Launch")
        .unwrap();
    assert_eq!(launch["color"], 4);

    // Exporting the copy gives the same file but for the passwords that could not travel.
    let again = env.path(&format!("again-{file}"));
    fresh.run(&["export", again.to_str().unwrap()]).ok();
    let first = std::fs::read_to_string(&path).unwrap();
    let second = std::fs::read_to_string(&again).unwrap();
    let strip = |s: &str| {
        s.replace("\"password\":true", "\"password\":false")
            .replace(",true,50,", ",false,50,")
    };
    if file.ends_with(".json") {
        assert_eq!(strip(&first), strip(&second));
    } else {
        assert_eq!(first.lines().count(), second.lines().count());
    }
}

/// A link's counts — clicks, and previews (chat apps' preview agents, counted apart) — come in
/// with an import and go out with an export, in JSON and CSV alike; a bad count is refused by
/// field and line, and nothing is written.
fn clicks_and_previews_travel_in_both_formats(store: Store) {
    let env = store.env();
    let file = env.write(
        "counted.json",
        r#"{"links": [{"url": "https://a.example/", "alias": "counted", "clicks": 7, "previews": 12}]}"#,
    );
    env.run(&["import", file.to_str().unwrap()]).ok();
    let shown = env.json(&["links", "show", "counted"]);
    assert_eq!(
        (&shown["clicks"], &shown["previews"]),
        (&json!(7), &json!(12))
    );
    for format in ["json", "csv"] {
        let out = env.path(&format!("out.{format}"));
        env.run(&["export", out.to_str().unwrap()]).ok();
        let fresh = store.env();
        fresh.run(&["import", out.to_str().unwrap()]).ok();
        let copied = fresh.json(&["links", "show", "counted"]);
        assert_eq!(
            (&copied["clicks"], &copied["previews"]),
            (&json!(7), &json!(12)),
            "{format}"
        );
    }
    let bad = env.write(
        "bad.json",
        "{\"links\": [\n{\"url\": \"https://b.example/\", \"previews\": -3}\n]}",
    );
    let run = env.run(&["import", bad.to_str().unwrap()]).fails_with(3);
    assert!(run.stderr.contains("line 2: previews"), "{}", run.stderr);
    assert_eq!(env.json(&["links", "list"])["total"], 1);
}

fn json_export_import_round_trip(store: Store) {
    round_trip(store, "links.json");
}

fn csv_export_import_round_trip(store: Store) {
    round_trip(store, "links.csv");
}

fn export_walks_every_link_once_across_batches(store: Store) {
    // More links than two export batches, with a gap in the ids where some were deleted.
    let env = store.env();
    let links: Vec<String> = (0..2_345)
        .map(|i| format!(r#"{{"url": "https://example.com/{i}", "alias": "l{i}"}}"#))
        .collect();
    let file = env.write(
        "many.json",
        &format!(r#"{{"version": 1, "links": [{}]}}"#, links.join(",")),
    );
    env.run(&["import", file.to_str().unwrap()]).ok();
    for alias in ["l999", "l1000", "l1001"] {
        env.run(&["links", "delete", alias]).ok();
    }
    let export = env.run(&["export", "--format", "csv"]).ok().stdout;
    let aliases: Vec<String> = csv::Reader::from_reader(export.as_bytes())
        .records()
        .map(|row| row.unwrap()[1].to_owned())
        .collect();
    let expected: Vec<String> = (0..2_345)
        .filter(|i| !(999..=1001).contains(i))
        .map(|i| format!("l{i}"))
        .collect();
    assert_eq!(aliases, expected);
}

fn export_to_stdout_and_formats(store: Store) {
    let env = store.env();
    fill(&env);
    let json = env.run(&["export"]).ok().json();
    assert_eq!(json["version"], 1);
    assert_eq!(json["spaces"].as_array().unwrap().len(), 2);
    assert_eq!(json["links"].as_array().unwrap().len(), 4);
    let a = &json["links"][0];
    assert_eq!(a["space"], "Launch");
    assert_eq!(
        a["geo"][0],
        json!({"key": "US", "value": "https://example.com/us;x=1"})
    );
    let csv = env.run(&["export", "--format", "csv"]).ok().stdout;
    let header = csv.lines().next().unwrap();
    assert!(
        header.starts_with("url,alias,title,space,space_color,domain,disabled,public,password"),
        "{header}"
    );
    assert!(
        csv.contains("US=https://example.com/us;x=1;FR=https://example.com/fr"),
        "{csv}"
    );
    assert!(
        csv.contains("https://example.com/r1;https://example.com/r2"),
        "{csv}"
    );
}

#[test]
fn export_replaces_a_file_only_when_complete() {
    let env = Env::new();
    fill(&env);
    let target = env.write("keep.json", "previous export");
    let summary = env.json(&["export", target.to_str().unwrap()]);
    assert_eq!(summary["links"], 4);
    assert_eq!(summary["spaces"], 2);
    assert!(std::fs::read_to_string(&target).unwrap().starts_with('{'));

    // A database that cannot be read leaves the old file alone and no partial file behind.
    let garbage = env.write("garbage.db", &"not a database\n".repeat(300));
    std::fs::write(&target, "previous export").unwrap();
    env.run_on(&garbage, &["export", target.to_str().unwrap()])
        .fails_with(6);
    assert_eq!(std::fs::read_to_string(&target).unwrap(), "previous export");
    let run = env
        .run(&["export", env.path("no/such/dir/x.json").to_str().unwrap()])
        .fails_with(1);
    assert!(run.stderr.contains("no/such/dir/x.json"), "{}", run.stderr);
    let leftovers: Vec<_> = std::fs::read_dir(env.dir.path())
        .unwrap()
        .filter_map(|e| e.ok())
        .filter(|e| e.file_name().to_string_lossy().contains("partial"))
        .collect();
    assert!(leftovers.is_empty());
}

fn a_very_bad_import_counts_every_error_and_lists_the_first_in_line_order(store: Store) {
    let env = store.env();
    let mut csv = String::from("url,alias\n");
    for i in 0..600 {
        csv.push_str(&format!("not-a-url-{i},\n"));
    }
    let file = env.write("bad.csv", &csv);
    let run = env.run(&["import", file.to_str().unwrap()]).fails_with(3);
    let first = run.stderr.lines().next().unwrap();
    assert!(
        first.contains("600 fields are invalid (the first 100 are listed)"),
        "{first}"
    );
    let lines = crate::listed_lines(&run.stderr);
    assert_eq!(lines, (2..=101).collect::<Vec<_>>(), "{}", run.stderr);
}

fn bad_import_row_aborts_and_names_its_line(store: Store) {
    let env = store.env();
    env.run(&["links", "create", "https://example.com", "--alias", "taken"])
        .ok();
    let file = env.write(
        "bad.json",
        r#"{
  "spaces": [
    {"name": "New space", "color": "blue"}
  ],
  "links": [
    {"url": "https://ok.example.com", "space": "New space"},
    {"url": "https://ok2.example.com", "alias": "taken"},
    {"url": "javascript:alert(1)"}
  ]
}"#,
    );
    let run = env.run(&["import", file.to_str().unwrap()]).fails_with(3);
    assert!(run.stderr.contains("nothing imported"), "{}", run.stderr);
    assert!(run.stderr.contains("line 8: url"), "{}", run.stderr);
    // Without the bad URL, the taken alias is what stops it.
    let text = std::fs::read_to_string(&file).unwrap();
    let file = env.write(
        "bad2.json",
        &text.replace(",\n    {\"url\": \"javascript:alert(1)\"}", ""),
    );
    let err = env
        .run(&["--json", "import", file.to_str().unwrap()])
        .fails_with(3)
        .error_json();
    assert!(err["fields"]["line 7: alias"].is_array(), "{err}");
    // Nothing written: not the good row, not the space.
    assert_eq!(env.json(&["links", "list"])["total"], 1);
    assert_eq!(env.json(&["spaces", "list"])["total"], 0);

    // A CSV row is named by its line too.
    let csv = env.write(
        "bad.csv",
        "url,alias,expiration_clicks\nhttps://a.example,fine,\nhttps://b.example,also-fine,-3\n",
    );
    let run = env.run(&["import", csv.to_str().unwrap()]).fails_with(3);
    assert!(
        run.stderr.contains("line 3: expiration_clicks"),
        "{}",
        run.stderr
    );
    assert_eq!(env.json(&["links", "list"])["total"], 1);
}

#[test]
fn malformed_import_files_are_refused() {
    let env = Env::new();
    let cases: &[(&str, &str, &str)] = &[
        ("a.json", "this is not json", "line 1"),
        ("b.json", "[{\"url\": \"https://a.example\"}]", "object"),
        (
            "c.json",
            "{\"links\": [\n {\"url\": \"https://a.example\",\n  \"colour\": 1}]}",
            "line 3",
        ),
        (
            "d.json",
            "{\"links\": [{\"url\": \"https://a.example\"}",
            "line 1",
        ),
        ("e.csv", "url,colour\nhttps://a.example,1\n", "colour"),
        ("f.csv", "url,alias\nhttps://a.example,x,extra\n", "line 2"),
        ("g.csv", "alias\nx\n", "url"),
    ];
    for (name, text, expect) in cases {
        let path = env.write(name, text);
        let run = env.run(&["import", path.to_str().unwrap()]).fails_with(3);
        assert!(run.stderr.contains(expect), "{name}: {}", run.stderr);
        assert!(run.stderr.contains(name), "{name}: {}", run.stderr);
    }
    let path = env.write("h.txt", "{}");
    env.run(&["import", path.to_str().unwrap()]).fails_with(2);
    env.run(&["import", "--format", "json", path.to_str().unwrap()])
        .ok();
    env.run(&["import", env.path("missing.json").to_str().unwrap()])
        .fails_with(1);
    assert_eq!(env.json(&["links", "list"])["total"], 0);
}

fn import_from_stdin_reuses_existing_spaces(store: Store) {
    let env = store.env();
    env.run(&["spaces", "create", "Launch", "--color", "red"])
        .ok();
    let run = env.run_stdin(
        &["--json", "import", "-"],
        r#"{"spaces": [{"name": "launch", "color": 2}], "links": [{"url": "https://a.example", "space": "Launch", "password": "pw", "disabled": 1, "expiration_clicks": "5", "target_type": 3, "rotation": [{"value": "https://r.example"}]}]}"#,
    );
    let summary = run.ok().json();
    assert_eq!(summary["links_created"], 1);
    assert_eq!(summary["spaces_created"], 0);
    let link = &env.json(&["links", "list"])["items"][0];
    assert_eq!(
        link["space"]["color"], 1,
        "the existing space is kept as it was"
    );
    assert_eq!(link["password"], true);
    assert_eq!(link["disabled"], true);
    assert_eq!(link["expiration_clicks"], 5);
    assert_eq!(link["rotation"], json!(["https://r.example"]));
}

fn demo_file_loads(store: Store) {
    let env = store.env();
    let demo = concat!(env!("CARGO_MANIFEST_DIR"), "/assets/demo.json");
    let summary = env.json(&["import", demo]);
    assert!(
        summary["links_created"].as_u64().unwrap() >= 45,
        "{summary}"
    );
    assert!(
        summary["spaces_created"].as_u64().unwrap() >= 4,
        "{summary}"
    );
    let links = env.run(&["--json", "links", "list", "--all"]).ok().json();
    let links = links.as_array().unwrap();
    let any = |f: &dyn Fn(&Value) -> bool| links.iter().any(f);
    assert!(any(&|l| l["password"] == true));
    assert!(any(&|l| l["disabled"] == true));
    assert!(any(&|l| l["public"] == true));
    assert!(any(&|l| l["expiration_clicks"].as_u64() > Some(0)));
    assert!(any(&|l| !l["ends_at"].is_null()));
    assert!(any(&|l| !l["expiration_url"].is_null()));
    assert!(any(&|l| l["space"].is_null()));
    for t in 1..=3 {
        assert!(any(&|l| l["target_type"] == t), "target type {t}");
    }
}

fn a_csv_space_may_get_its_colour_on_a_later_row(store: Store) {
    let env = store.env();
    let rows = "url,alias,space,space_color\n\
                https://a.example,a,Launch,\n\
                https://b.example,b,launch,green\n";
    // A space no row gives a colour stops the import at every row that names it.
    let file = env.write(
        "never.csv",
        &format!("{rows}https://c.example,c,Other,\nhttps://d.example,d,other,\n"),
    );
    let err = env
        .run(&["--json", "import", file.to_str().unwrap()])
        .fails_with(3)
        .error_json();
    let fields: Vec<&String> = err["fields"].as_object().unwrap().keys().collect();
    assert_eq!(fields, ["line 4: space", "line 5: space"], "{err}");
    assert_eq!(env.json(&["links", "list"])["total"], 0);
    assert_eq!(env.json(&["spaces", "list"])["total"], 0);

    // Read as a stream, the row before the colour still lands in the space the colour makes.
    let file = env.write("late.csv", rows);
    let summary = env.json(&["import", file.to_str().unwrap()]);
    assert_eq!(summary["spaces_created"], 1, "{summary}");
    let spaces = env.json(&["spaces", "list"]);
    assert_eq!(spaces["total"], 1);
    assert_eq!(
        spaces["items"][0]["name"], "launch",
        "as line 3 declares it"
    );
    assert_eq!(spaces["items"][0]["color"], 4, "green, from line 3");
    for alias in ["a", "b"] {
        let link = env.json(&["links", "show", alias]);
        assert_eq!(link["space"]["name"], "launch", "{link}");
    }
}

fn a_csv_import_past_one_write_chunk_still_writes_nothing_for_a_bad_last_row(store: Store) {
    // More rows than the import moves into the links table at a time (20,000): the first chunk
    // is written inside the transaction before the bad row is read.
    let env = store.env();
    let mut csv = String::from("url,alias,space,space_color\n");
    for i in 0..20_500 {
        csv.push_str(&format!("https://example.com/{i},l{i},Bulk,blue\n"));
    }
    csv.push_str("javascript:alert(1),last,Bulk,\n");
    let file = env.write("big.csv", &csv);
    let err = env
        .run(&["--json", "import", file.to_str().unwrap()])
        .fails_with(3)
        .error_json();
    assert!(err["fields"]["line 20502: url"].is_array(), "{err}");
    assert_eq!(env.json(&["links", "list"])["total"], 0);
    assert_eq!(env.json(&["spaces", "list"])["total"], 0);
}

/// `linkdeck demo` loads the demo built into the binary from any folder, and a second run
/// leaves what is there as it is.
#[test]
fn the_demo_loads_from_anywhere_and_again() {
    let env = Env::new();
    let elsewhere = tempfile::tempdir().unwrap();
    let run = crate::cli_support::run(env.cmd().current_dir(elsewhere.path()).arg("demo")).ok();
    assert!(
        run.stdout.contains("imported 52 links") && run.stdout.contains("built-in demo"),
        "{}",
        run.stdout
    );
    let again = crate::cli_support::run(env.cmd().current_dir(elsewhere.path()).arg("demo"));
    let again = again.ok();
    assert!(again.stdout.contains("skipped"), "{}", again.stdout);
    let listed = env.json(&["links", "list"]);
    assert_eq!(listed["total"], 52);
}
