//! Import and export files built to hurt: cells a spreadsheet would run, pieces larger than any
//! link needs, files of nothing but bad rows, titles longer than a link keeps.

use crate::stores::Store;
use serde_json::{Value, json};

on_both_stores!(
    a_csv_export_opens_as_text_and_imports_back_as_it_was,
    a_piece_larger_than_its_bound_stops_the_import_with_a_short_error,
    a_title_cut_to_its_limit_is_said,
    bad_rows_sharing_a_line_are_each_counted_and_the_first_listed,
    the_first_errors_listed_are_the_first_lines_of_the_file,
);

/// Texts a spreadsheet would run as formulas, and texts that must read back despite looking
/// like what the export writes for them.
const FORMULAS: [&str; 6] = [
    r#"=HYPERLINK("http://evil","x")"#,
    "+cmd|' /C calc'!A0",
    "-2+3",
    "@SUM(A1:A9)",
    "'=quoted already",
    "'plain",
];

fn a_csv_export_opens_as_text_and_imports_back_as_it_was(store: Store) {
    let env = store.env();
    let spaces: Vec<Value> = FORMULAS
        .iter()
        .enumerate()
        .map(|(i, t)| json!({"name": format!("{}{i}", &t[..t.len().min(20)]), "color": "red"}))
        .collect();
    let links: Vec<Value> = FORMULAS
        .iter()
        .enumerate()
        .map(|(i, t)| {
            json!({"url": format!("https://example.com/{i}"), "alias": format!("-{i}"),
                   "title": t, "space": spaces[i]["name"]})
        })
        .collect();
    let file = env.write(
        "formulas.json",
        &format!(
            "{{\"version\": 1, \"spaces\": {}, \"links\": {}}}",
            Value::from(spaces.clone()),
            Value::from(links)
        ),
    );
    env.run(&["import", file.to_str().unwrap()]).ok();

    let csv = env.path("export.csv");
    env.run(&["export", csv.to_str().unwrap()]).ok();
    // Every cell in quotes, the neutralised ones too (OWASP asks for both).
    let text = std::fs::read_to_string(&csv).unwrap();
    assert!(text.contains(r#","'+cmd|' /C calc'!A0","#), "{text}");
    // As a spreadsheet reads the file: no cell starts what it would run.
    let mut cells = 0;
    for row in csv::Reader::from_path(&csv).unwrap().records() {
        for cell in row.unwrap().iter() {
            assert!(
                !cell.starts_with(['=', '+', '-', '@', '\t', '\r']),
                "{cell:?} would run"
            );
            cells += 1;
        }
    }
    assert!(cells > FORMULAS.len() * 3);

    let other = store.env();
    other.run(&["import", csv.to_str().unwrap()]).ok();
    let titles = |env: &crate::cli_support::Env| -> Vec<(String, String, String)> {
        let mut all: Vec<(String, String, String)> = env
            .json(&["links", "list", "--all"])
            .as_array()
            .unwrap()
            .iter()
            .map(|l| {
                (
                    l["alias"].as_str().unwrap().to_owned(),
                    l["title"].as_str().unwrap().to_owned(),
                    l["space"]["name"].as_str().unwrap().to_owned(),
                )
            })
            .collect();
        all.sort();
        all
    };
    let before = titles(&env);
    assert_eq!(before.len(), FORMULAS.len());
    assert_eq!(titles(&other), before);
    assert!(
        before.iter().any(|(_, t, _)| t == FORMULAS[0]),
        "{before:?}"
    );
}

fn a_piece_larger_than_its_bound_stops_the_import_with_a_short_error(store: Store) {
    let env = store.env();
    let cases = [
        (
            "cell.csv",
            format!(
                "url,alias,title\nhttps://a.example/,a,fine\nhttps://b.example/,b,\"{}\"\n",
                "t".repeat(5 << 20)
            ),
            "line 3: has a row longer than 4 MiB",
        ),
        (
            "header.csv",
            format!("url,{}\nhttps://a.example/,1\n", "h".repeat(100_000)),
            "line 1: unknown column \"hhhh",
        ),
        (
            "key.json",
            format!(
                "{{\"links\": [\n{{\"url\": \"https://a.example/\"}},\n{{\"url\": \"https://b.example/\", \"{}\": 1}}]}}",
                "k".repeat(100_000)
            ),
            "line 3: holds a text longer than 64 KiB",
        ),
        (
            "title.json",
            format!(
                "{{\"links\": [\n{{\"url\": \"https://a.example/\"}},\n{{\"url\": \"https://b.example/\", \"title\": \"{}\"}}]}}",
                "t".repeat(100_000)
            ),
            "line 3: holds a text longer than 64 KiB",
        ),
    ];
    for (name, text, said) in cases {
        let file = env.write(name, &text);
        let run = env.run(&["import", file.to_str().unwrap()]).fails_with(3);
        assert!(
            run.stderr.contains(said),
            "{name}: {}",
            &run.stderr[..run.stderr.len().min(500)]
        );
        assert!(
            run.stderr.contains("nothing imported"),
            "{name}: {}",
            run.stderr
        );
        assert!(
            run.stderr.len() < 600,
            "{name}: {} bytes of errors",
            run.stderr.len()
        );
    }
    assert_eq!(env.json(&["links", "list"])["total"], 0);
}

fn a_title_cut_to_its_limit_is_said(store: Store) {
    let env = store.env();
    let long = "é".repeat(600);
    let file = env.write(
        "long.json",
        &format!(
            "{{\"links\": [\n{{\"url\": \"https://a.example/\", \"alias\": \"short\", \"title\": \"Short\"}},\n{{\"url\": \"https://b.example/\", \"alias\": \"long\", \"title\": \"{long}\"}}\n]}}"
        ),
    );
    let run = env.run(&["import", file.to_str().unwrap()]).ok();
    assert!(
        run.stdout
            .contains("cut 1 title longer than 512 characters to their first 512:\n  line 3"),
        "{}",
        run.stdout
    );
    let title = env.json(&["links", "show", "long"])["title"]
        .as_str()
        .unwrap()
        .to_owned();
    assert_eq!(title.chars().count(), 512);

    let again = store.env();
    let summary = again.json(&["import", file.to_str().unwrap()]);
    assert_eq!(summary["titles_cut"], 1, "{summary}");
    assert_eq!(summary["titles_cut_at"], json!(["line 3"]), "{summary}");
}

fn bad_rows_sharing_a_line_are_each_counted_and_the_first_listed(store: Store) {
    let env = store.env();
    // As a Bitly answer saved straight from its API: one line, here every link a bad one.
    let bad = r#"{"id":"not a bitlink","long_url":"https://a.example/","title":"g"}"#;
    let file = env.write(
        "bitly.json",
        &format!(
            "{{\"links\":[{}],\"pagination\":{{}}}}\n",
            vec![bad; 300].join(",")
        ),
    );
    let run = env
        .run(&["import", "--from", "bitly", file.to_str().unwrap()])
        .fails_with(3);
    let lines: Vec<&str> = run.stderr.lines().collect();
    assert!(
        lines[0].ends_with("300 fields are invalid (the first 100 are listed)"),
        "{}",
        lines[0]
    );
    assert_eq!(
        lines[1],
        "  line 1: id: names no bitlink (expected host/back-half)"
    );
    assert_eq!(
        lines[2],
        "  line 1, row 2: id: names no bitlink (expected host/back-half)"
    );
    assert_eq!(
        lines[100],
        "  line 1, row 100: id: names no bitlink (expected host/back-half)"
    );
    assert_eq!(lines[101], "  … and 200 more fields");
    assert_eq!(lines.len(), 102);
}

fn the_first_errors_listed_are_the_first_lines_of_the_file(store: Store) {
    let env = store.env();
    // Rows naming two spaces no row gives a colour (their errors known only at the end), and
    // rows that are wrong at once, interleaved.
    let mut csv = String::from("url,alias,space\n");
    for i in 0..3_000 {
        match i % 3 {
            0 => csv.push_str(&format!("https://example.com/{i},a{i},Alpha\n")),
            1 => csv.push_str(&format!("javascript:{i},b{i},\n")),
            _ => csv.push_str(&format!("https://example.com/{i},c{i},Beta\n")),
        }
    }
    let file = env.write("spaces.csv", &csv);
    let run = env.run(&["import", file.to_str().unwrap()]).fails_with(3);
    assert!(
        run.stderr
            .lines()
            .next()
            .unwrap()
            .ends_with("3,000 fields are invalid (the first 100 are listed)"),
        "{}",
        run.stderr
    );
    let listed = crate::listed_lines(&run.stderr);
    assert_eq!(listed, (2..=101).collect::<Vec<_>>(), "{}", run.stderr);
    // The count of the rest, then what to do about the spaces, last so that it stays in sight.
    assert!(
        run.stderr.ends_with(
            "… and 2,900 more fields\nhint: --create-spaces makes the spaces the file names \
             that do not exist\n"
        ),
        "{}",
        run.stderr
    );
}
