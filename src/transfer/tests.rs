use super::record::PasswordField;
use super::*;
use crate::domain::RuleInput;

fn sample_links() -> Vec<LinkRecord> {
    vec![
        LinkRecord {
            url: Some("https://example.com/a".into()),
            alias: Some("a1".into()),
            space: Some("Launch".into()),
            disabled: Some(Scalar::Bool(false)),
            public: Some(Scalar::Bool(true)),
            password: Some(PasswordField::Had(true)),
            expiration_date: Some("2030-01-02".into()),
            expiration_time: Some("03:04".into()),
            expiration_clicks: Some(Scalar::Number(10)),
            expiration_url: Some("https://example.com/gone".into()),
            target_type: Some(Scalar::Text("geo".into())),
            geo: Some(vec![
                RuleInput::new("US", "https://us.example.com/"),
                RuleInput::new("DE", "https://de.example.com/?a=1;b=2"),
            ]),
            ..Default::default()
        },
        LinkRecord {
            url: Some("https://example.com/b".into()),
            alias: Some("b2".into()),
            disabled: Some(Scalar::Bool(true)),
            public: Some(Scalar::Bool(false)),
            password: Some(PasswordField::Had(false)),
            target_type: Some(Scalar::Text("rotation".into())),
            rotation: Some(vec![
                RuleInput::value("https://r1.example.com/"),
                RuleInput::value("https://r2.example.com/"),
            ]),
            platform: Some(vec![RuleInput::new("OS X", "https://mac.example.com/")]),
            forward_query: Some(Scalar::Bool(false)),
            forward_path: Some(Scalar::Bool(true)),
            allow_indexing: Some(Scalar::Bool(true)),
            preview_title: Some("Spring, \"sale\"".into()),
            preview_description: Some("=half price".into()),
            preview_image: Some("https://img.example/s.png".into()),
            ..Default::default()
        },
    ]
}

fn spaces() -> Vec<SpaceRecord> {
    vec![SpaceRecord {
        name: "Launch".into(),
        color: Scalar::Text("green".into()),
    }]
}

/// The sample spaces and links as an export writes them.
fn sample_json() -> String {
    let mut w = JsonWriter::new(Vec::new()).unwrap();
    for s in spaces() {
        w.space(&s).unwrap();
    }
    for l in sample_links() {
        w.link(&l).unwrap();
    }
    String::from_utf8(w.finish().unwrap()).unwrap()
}

#[test]
fn json_round_trip_numbers_records_by_line() {
    let text = sample_json();
    let bundle = read_json(&text).unwrap();
    assert_eq!(bundle.spaces.len(), 1);
    assert_eq!(bundle.spaces[0].line, 4);
    let lines: Vec<usize> = bundle.links.iter().map(|l| l.line).collect();
    assert_eq!(lines, vec![7, 8]);
    let links: Vec<LinkRecord> = bundle.links.into_iter().map(|n| n.record).collect();
    assert_eq!(links, sample_links());
}

#[test]
fn json_empty_export_reads_back_empty() {
    let text = String::from_utf8(JsonWriter::new(Vec::new()).unwrap().finish().unwrap()).unwrap();
    assert_eq!(read_json(&text).unwrap(), Bundle::default());
}

#[test]
fn json_lines_follow_hand_written_layout() {
    let text = r#"{
  "spaces": [
    {"name": "A", "color": 1},
    {
      "name": "B [x], \"y\"",
      "color": "blue"
    }
  ],
  "links": [{"url": "https://a.example"},
    {"url": "https://b.example", "geo": [{"key": "US", "value": "https://c.example"}]}
  ]
}"#;
    let bundle = read_json(text).unwrap();
    let space_lines: Vec<usize> = bundle.spaces.iter().map(|s| s.line).collect();
    let link_lines: Vec<usize> = bundle.links.iter().map(|s| s.line).collect();
    assert_eq!(space_lines, vec![3, 4]);
    assert_eq!(link_lines, vec![9, 10]);
}

#[test]
fn json_errors_name_the_line() {
    let err = read_json("{\n  \"links\": [\n    {\"url\": \"https://a\", \"colour\": 1}\n  ]\n}")
        .unwrap_err();
    assert_eq!(err.line, Some(3));
    assert!(err.message.contains("colour"), "{err}");

    let err = read_json("not json").unwrap_err();
    assert_eq!(err.line, Some(1));

    let err = read_json("[1, 2]").unwrap_err();
    assert!(err.message.contains("object"), "{err}");

    let err = read_json("{\"version\": 7}").unwrap_err();
    assert!(err.message.contains("version 7"), "{err}");
}

#[test]
fn csv_round_trip() {
    let mut w = CsvWriter::new(Vec::new(), &spaces()).unwrap();
    for l in sample_links() {
        w.link(&l).unwrap();
    }
    let bytes = w.finish().unwrap();
    let bundle = read_csv(&bytes).unwrap();
    assert_eq!(bundle.spaces.len(), 1);
    assert_eq!(bundle.spaces[0].record.name, "Launch");
    assert_eq!(bundle.spaces[0].record.color.to_input(), "green");
    assert_eq!(
        bundle.links.iter().map(|l| l.line).collect::<Vec<_>>(),
        vec![2, 3]
    );
    // CSV reads every value as text; compare what the service would be given.
    for (read, written) in bundle.links.iter().zip(sample_links()) {
        let read = read.record.to_import(|_| None).unwrap();
        let written = written.to_import(|_| None).unwrap();
        assert_eq!(read.space, written.space);
        assert_eq!(read.lost_password, written.lost_password);
        let norm = |mut i: crate::domain::LinkInput| {
            for flag in [
                &mut i.disabled,
                &mut i.public,
                &mut i.forward_query,
                &mut i.forward_path,
                &mut i.allow_indexing,
            ] {
                *flag = flag
                    .as_deref()
                    .map(|f| if f == "1" || f == "true" { "1" } else { "0" }.to_owned());
            }
            i
        };
        assert_eq!(norm(read.input), norm(written.input));
    }
}

#[test]
fn csv_errors_name_the_line() {
    let err = read_csv(b"url,colour\nhttps://a,1\n").unwrap_err();
    assert_eq!(err.line, Some(1));
    assert!(err.message.contains("colour"), "{err}");

    let err = read_csv(b"alias\nx\n").unwrap_err();
    assert!(err.message.contains("url"), "{err}");

    let err = read_csv(b"url,alias\nhttps://a,x\nhttps://b,y,z\n").unwrap_err();
    assert_eq!(err.line, Some(3));

    let err = read_csv(b"url,password\nhttps://a,hunter2\n").unwrap_err();
    assert_eq!(err.line, Some(2));
}

#[test]
fn a_csv_stream_declares_each_space_once_and_ends_at_a_broken_row() {
    let text = "url,space,space_color\n\
                https://a.example,Launch,\n\
                https://b.example,launch,red\n\
                https://c.example,LAUNCH,blue\n\
                https://d.example,x,y,z\n\
                https://e.example,Launch,\n";
    let rows: Vec<_> = stream_csv(text.as_bytes()).unwrap().collect();
    assert_eq!(rows.len(), 4, "nothing after the broken row");
    let declared: Vec<(usize, String)> = rows
        .iter()
        .filter_map(|r| r.as_ref().ok()?.space.as_ref())
        .map(|s| (s.line, s.record.color.to_input()))
        .collect();
    assert_eq!(declared, [(3, "red".to_owned())]);
    assert_eq!(rows[3].as_ref().unwrap_err().line, Some(5));
}

#[test]
fn unknown_domain_is_a_field_error() {
    let record = LinkRecord {
        url: Some("https://a.example".into()),
        domain: Some("https://sho.rt".into()),
        ..Default::default()
    };
    let errors = record.to_import(|_| None).unwrap_err();
    assert!(errors.contains("domain"));
    let ok = record
        .to_import(|n| (n == "https://sho.rt").then_some(4))
        .unwrap();
    assert_eq!(ok.input.domain.as_deref(), Some("4"));
}

#[test]
fn format_from_extension() {
    use std::path::Path;
    assert_eq!(Format::from_path(Path::new("a.JSON")), Some(Format::Json));
    assert_eq!(Format::from_path(Path::new("a.csv")), Some(Format::Csv));
    assert_eq!(Format::from_path(Path::new("a.txt")), None);
}

/// Everything `stream_json` reads, or its error.
fn streamed(text: &str) -> Result<(JsonHead, Vec<Numbered<LinkRecord>>), FormatError> {
    let (head, links) = stream_json(std::io::BufReader::with_capacity(5, text.as_bytes()))?;
    Ok((head, links.collect::<Result<_, _>>()?))
}

#[test]
fn json_streamed_reads_what_read_json_reads() {
    let text = sample_json();
    let whole = read_json(&text).unwrap();
    let (head, links) = streamed(&format!("\u{feff}{text}")).unwrap();
    assert_eq!(head.spaces, whole.spaces);
    assert_eq!(links, whole.links);

    let text = "{\"version\": 1, \"traffic_as_of\": \"2026-01-05T00:00:00Z\",\n \"spaces\": [\n  {\"name\": \"A\", \"color\": 1},\n  {\"name\": \"B\", \"color\": 2}]}";
    let (head, links) = streamed(text).unwrap();
    assert_eq!(
        head.spaces.iter().map(|s| s.line).collect::<Vec<_>>(),
        [3, 4]
    );
    assert_eq!(
        head.traffic_as_of,
        Some("2026-01-05T00:00:00Z".parse().unwrap())
    );
    assert!(links.is_empty());
    assert_eq!(streamed("{}").unwrap(), (JsonHead::default(), Vec::new()));
}

#[test]
fn json_streamed_errors_name_the_line() {
    for (text, line, want) in [
        (
            "{\n  \"links\": [\n    {\"url\": \"https://a\", \"colour\": 1}\n  ]\n}",
            Some(3),
            "colour",
        ),
        (
            "{\"links\": [],\n \"colour\": 1}",
            Some(2),
            "unknown field `colour`",
        ),
        (
            "{\"links\": [],\n \"spaces\": []}",
            Some(2),
            "\"spaces\" must come before \"links\"",
        ),
        ("not json", Some(1), "expected '{'"),
        ("[1, 2]", Some(1), "object"),
        ("{\"version\": 7}", None, "version 7"),
        ("", Some(1), "empty"),
        ("{\"links\": [{\"url\": \"https://a\"}", Some(1), "ends"),
        ("{\"links\": []} {}", Some(1), "after the end"),
        ("{\"spaces\": [\n{\"name\": 1}]}", Some(2), "invalid type"),
    ] {
        let err = streamed(text).unwrap_err();
        assert_eq!(err.line, line, "{text}: {err}");
        assert!(err.message.contains(want), "{text}: {err}");
    }
}

/// A JSON export writes a link's fields under the registry's names, in its export order.
#[test]
fn a_json_record_names_its_fields_in_the_registry_order() {
    let text = |s: &str| Some(s.to_owned());
    let record = LinkRecord {
        url: text("https://example.com/a"),
        alias: text("a1"),
        title: text("A"),
        clicks: Some(Scalar::Number(3)),
        previews: Some(Scalar::Number(4)),
        created_at: text("2030-01-01T00:00:00Z"),
        space: text("Launch"),
        domain: text("go.example"),
        disabled: Some(Scalar::Bool(false)),
        public: Some(Scalar::Bool(false)),
        password: Some(PasswordField::Had(false)),
        expiration_date: text("2030-01-02"),
        expiration_time: text("03:04"),
        expiration_clicks: Some(Scalar::Number(10)),
        expiration_url: text("https://example.com/gone"),
        target_type: Some(Scalar::Text("geo".into())),
        geo: Some(vec![RuleInput::new("US", "https://us.example.com/")]),
        platform: Some(vec![RuleInput::new("Linux", "https://l.example.com/")]),
        rotation: Some(vec![RuleInput::value("https://r.example.com/")]),
        tags: Some(vec!["promo".into()]),
        forward_query: Some(Scalar::Bool(false)),
        forward_path: Some(Scalar::Bool(true)),
        allow_indexing: Some(Scalar::Bool(true)),
        preview_title: text("Spring"),
        preview_description: text("Half price"),
        preview_image: text("https://img.example/s.png"),
        rules: Some(vec!["country DE => https://de.example/".into()]),
        traffic: None,
    };
    let json = serde_json::to_string(&record).unwrap();
    let at: Vec<usize> = crate::domain::LinkField::ALL
        .iter()
        .map(|f| {
            json.find(&format!("\"{}\":", f.name()))
                .unwrap_or_else(|| panic!("no {} in {json}", f.name()))
        })
        .collect();
    assert!(at.windows(2).all(|w| w[0] < w[1]), "out of order: {json}");
}

#[test]
fn a_link_on_its_way_to_another_linkdeck_reads_back_as_it_left() {
    let hour: jiff::Timestamp = "2029-06-01T14:00:00Z".parse().unwrap();
    let record = LinkRecord {
        url: Some("https://example.com/a".into()),
        alias: Some("a1".into()),
        title: Some("A page".into()),
        clicks: Some(Scalar::Number(12)),
        created_at: Some("2029-05-01T09:30:00Z".into()),
        space: Some("Launch".into()),
        domain: Some("https://sho.rt".into()),
        password: Some(PasswordField::Set("s3cret".into())),
        traffic: Some(vec![TrafficRecord {
            hour,
            clicks: 3,
            country: [("DE".to_owned(), 2)].into(),
            ..TrafficRecord::default()
        }]),
        ..sample_links().remove(0)
    };
    let import = record
        .to_import(|n| (n == "https://sho.rt").then_some(4))
        .unwrap();
    let sent = LinkRecord::from_input(
        &import.input,
        import.space.as_deref(),
        Some("https://sho.rt"),
        &import.carried,
    );
    let back = sent
        .to_import(|n| (n == "https://sho.rt").then_some(4))
        .unwrap();
    assert_eq!(back, import);
    assert_eq!(back.carried.traffic.len(), 1);
    assert_eq!(back.carried.clicks, 12);
}

#[test]
fn sample_traffic_ends_within_the_day_before_any_import() {
    let as_of: jiff::Timestamp = "2026-11-23T00:00:00Z".parse().unwrap();
    let at = |now: &str| traffic_shift(Some(as_of), now.parse().unwrap());
    // Every day of a week after the file's date: the traffic's end lands within the last day
    // (moving by whole weeks left it up to six days behind).
    for day in 24..=30 {
        let now: jiff::Timestamp = format!("2026-11-{day}T13:30:00Z").parse().unwrap();
        let shift = at(&now.to_string()).unwrap();
        let end = as_of.checked_add(shift).unwrap();
        let behind = now.duration_since(end);
        assert!(
            behind >= jiff::SignedDuration::ZERO && behind < jiff::SignedDuration::from_hours(24),
            "imported {now}: traffic ends {end}"
        );
        // Whole days: an hour of the day stays that hour.
        assert_eq!(shift.as_secs() % 86_400, 0);
    }
    // Within the first day, and for a clock behind the file, the times stay; other files too.
    assert_eq!(at("2026-11-23T20:00:00Z"), None);
    assert_eq!(at("2026-11-20T00:00:00Z"), None);
    assert_eq!(traffic_shift(None, as_of), None);
}
