//! Files built to hurt an import or a spreadsheet: cells that would run as formulas, pieces
//! larger than any link needs, errors that quote what they found, records sharing a line.

use super::limits::{RECORD_MAX, ROW_MAX, STRING_MAX};
use super::*;

/// Everything `stream_json` reads, or its error.
fn streamed(text: &str) -> Result<Vec<Numbered<LinkRecord>>, FormatError> {
    let (_, links) = stream_json(text.as_bytes())?;
    links.collect()
}

#[test]
fn csv_cells_never_start_a_formula_and_read_back_as_written() {
    let texts = [
        r#"=HYPERLINK("http://evil","x")"#,
        "x;=1+cmd|' /C calc'!A0",
        "+cmd|' /C calc'!A0",
        "-2+3",
        "@SUM(A1:A9)",
        "'=already quoted",
        "''+twice",
        "'plain",
        "Plain",
    ];
    let spaces: Vec<SpaceRecord> = texts
        .iter()
        .map(|t| SpaceRecord {
            name: (*t).to_owned(),
            color: Scalar::Text("red".into()),
        })
        .collect();
    let links: Vec<LinkRecord> = texts
        .iter()
        .enumerate()
        .map(|(i, t)| LinkRecord {
            url: Some(format!("https://example.com/{i}")),
            alias: Some(format!("-{i}")),
            title: Some((*t).to_owned()),
            space: Some((*t).to_owned()),
            geo: Some(vec![crate::domain::RuleInput::new(
                "",
                "https://e.example/",
            )]),
            ..Default::default()
        })
        .collect();
    let mut w = CsvWriter::new(Vec::new(), &spaces).unwrap();
    for l in &links {
        w.link(l).unwrap();
    }
    let bytes = w.finish().unwrap();

    // Every cell of a row in quotes: one that holds `;` stays whole where a spreadsheet
    // splits on it.
    let text = String::from_utf8(bytes.clone()).unwrap();
    assert!(
        text.contains(r#","'=HYPERLINK(""http://evil"",""x"")","#),
        "{text}"
    );
    assert!(text.contains(r#","x;=1+cmd|' /C calc'!A0","#), "{text}");
    assert!(text.starts_with("url,alias,title,"), "{text}");
    // As a spreadsheet reads the file: no cell starts a formula.
    let mut cells = ::csv::Reader::from_reader(&bytes[..]);
    for row in cells.records() {
        for cell in row.unwrap().iter() {
            assert!(
                !cell.starts_with(['=', '+', '-', '@', '\t', '\r']),
                "{cell:?} would run"
            );
        }
    }
    // As linkdeck reads it: every text as it was.
    let bundle = read_csv(&bytes).unwrap();
    let read: Vec<(String, String, String)> = bundle
        .links
        .iter()
        .map(|l| {
            let r = &l.record;
            let geo = r.geo.as_ref().unwrap()[0].key.clone().unwrap_or_default();
            (
                r.title.clone().unwrap(),
                r.space.clone().unwrap(),
                r.alias.clone().unwrap() + &geo,
            )
        })
        .collect();
    let written: Vec<(String, String, String)> = links
        .iter()
        .map(|l| {
            (
                l.title.clone().unwrap(),
                l.space.clone().unwrap(),
                l.alias.clone().unwrap(),
            )
        })
        .collect();
    assert_eq!(read, written);
    let declared: Vec<&str> = bundle
        .spaces
        .iter()
        .map(|s| s.record.name.as_str())
        .collect();
    assert_eq!(declared, texts);
}

#[test]
fn a_csv_row_longer_than_its_bound_stops_the_file_at_its_line() {
    let mut text = String::from("url,title\nhttps://a.example/,fine\n");
    text.push_str(&format!(
        "https://b.example/,\"{}\"\n",
        "t".repeat(ROW_MAX + 1)
    ));
    text.push_str("https://c.example/,never read\n");
    let rows: Vec<_> = stream_csv(text.as_bytes()).unwrap().collect();
    assert_eq!(rows.len(), 2);
    let err = rows[1].as_ref().unwrap_err();
    assert_eq!(err.line, Some(3));
    assert!(err.message.contains("longer than 4 MiB"), "{err}");

    let header = format!("url,{}\n", "h".repeat(ROW_MAX + 1));
    let err = stream_csv(header.as_bytes()).err().unwrap();
    assert_eq!(err.line, Some(1));
    assert!(err.message.contains("longer than 4 MiB"), "{err}");
}

#[test]
fn what_a_file_names_is_quoted_short() {
    let name = format!("{}\u{1b}[2J", "c".repeat(100_000));
    let err = stream_csv(format!("url,{name}\nhttps://a.example/,1\n").as_bytes())
        .err()
        .unwrap();
    assert_eq!(err.line, Some(1));
    assert!(err.message.len() < 500, "{} bytes", err.message.len());
    assert!(err.message.contains("…(99,940 more bytes)"), "{err}");

    let key = "k".repeat(10_000);
    for text in [
        format!("{{\"links\": [\n{{\"url\": \"https://a.example/\", \"{key}\": 1}}]}}"),
        format!("{{\"{key}\": 1}}"),
        format!(
            "{{\"links\": [\n{{\"url\": \"https://a.example/\", \"traffic\": [{{\"{key}\": 1}}]}}]}}"
        ),
    ] {
        let err = streamed(&text).unwrap_err();
        assert!(
            err.message.len() < 600,
            "{} bytes: {}",
            err.message.len(),
            &err.message[..200]
        );
        assert!(err.message.contains("…(9,936 more bytes)"), "{err}");
    }
}

#[test]
fn json_strings_and_records_are_bounded_while_read() {
    let long = "v".repeat(STRING_MAX + 1);
    for text in [
        format!(
            "{{\"links\": [\n{{\"url\": \"https://a.example/\"}},\n{{\"title\": \"{long}\"}}]}}"
        ),
        format!("{{\"links\": [\n{{\"url\": \"https://a.example/\"}},\n{{\"{long}\": 1}}]}}"),
        format!(
            "{{\"links\": [\n{{\"url\": \"https://a.example/\"}},\n{{\"title\": \"{}\"}}]}}",
            "\\n".repeat(STRING_MAX / 2 + 1)
        ),
        format!(
            "{{\"links\": [\n{{\"url\": \"https://a.example/\"}},\n{{\"clicks\": 1{}}}]}}",
            "0".repeat(STRING_MAX)
        ),
    ] {
        let err = streamed(&text).unwrap_err();
        assert_eq!(err.line, Some(3));
        assert!(err.message.contains("longer than 64 KiB"), "{err}");
    }
    // A string just within the bound is read (and a title that long is cut, not refused).
    let within = "w".repeat(STRING_MAX - 2);
    let links = streamed(&format!(
        "{{\"links\": [{{\"url\": \"https://a.example/\", \"title\": \"{within}\"}}]}}"
    ))
    .unwrap();
    assert_eq!(links[0].record.title.as_deref(), Some(within.as_str()));

    // A record of many strings, each within the bound, larger in all than a record may be.
    let piece = format!("\"{}\"", "p".repeat(STRING_MAX / 2));
    let pieces = vec![piece; RECORD_MAX / (STRING_MAX / 2) + 1].join(",");
    let text = format!(
        "{{\"links\": [\n{{\"url\": \"https://a.example/\"}},\n{{\"rotation\": [{pieces}]}}]}}"
    );
    let err = streamed(&text).unwrap_err();
    assert_eq!(err.line, Some(3));
    assert!(err.message.contains("record longer than 64 MiB"), "{err}");
}

#[test]
fn records_sharing_a_line_are_told_apart() {
    let links = streamed(
        "{\"links\": [{\"url\": \"https://a/\"}, {\"url\": \"https://b/\"},\n{\"url\": \"https://c/\"}, {\"url\": \"https://d/\"}]}",
    )
    .unwrap();
    let places: Vec<String> = links.iter().map(|l| l.place().to_string()).collect();
    assert_eq!(
        places,
        ["line 1", "line 1, row 2", "line 2", "line 2, row 2"]
    );
}
