use super::scan::{Event, JsonArrays};
use super::*;

fn elements(text: &str, path: &'static [&'static str]) -> Result<Vec<(usize, String)>, String> {
    JsonArrays::new(text.as_bytes(), path, &["sorted_links"])
        .map(|e| match e {
            Ok(Event::Element { line, bytes, .. }) => Ok((line, String::from_utf8(bytes).unwrap())),
            Ok(Event::Sibling { key, bytes, .. }) => {
                Ok((0, format!("{key}={}", String::from_utf8(bytes).unwrap())))
            }
            Err(e) => Err(e.to_string()),
        })
        .collect()
}

#[test]
fn array_elements_stream_with_their_lines() {
    let text = "{\n  \"pagination\": {\"size\": 2},\n  \"sorted_links\": [{\"id\": \"a\"}],\n  \"links\": [\n    {\"id\": \"x]\\\"}\"},\n    {\"id\": \"y\", \"tags\": [\"a\", \"b\"]}\n  ],\n  \"more\": null\n}\n{\"links\": [{\"id\": \"z\"}]}";
    let got = elements(text, &["links"]).unwrap();
    assert_eq!(
        got,
        vec![
            (0, "sorted_links=[{\"id\": \"a\"}]".to_owned()),
            (5, "{\"id\": \"x]\\\"}\"}".to_owned()),
            (6, "{\"id\": \"y\", \"tags\": [\"a\", \"b\"]}".to_owned()),
            (10, "{\"id\": \"z\"}".to_owned()),
        ]
    );
}

#[test]
fn nested_paths_and_arrays_of_pages() {
    let text = r#"[{"shortUrls": {"pagination": {}, "data": [{"shortCode": "a"}]}}, {"shortUrls": {"data": [{"shortCode": "b"}, 3]}}]"#;
    let got = elements(text, &["shortUrls", "data"]).unwrap();
    let values: Vec<&str> = got.iter().map(|(_, v)| v.as_str()).collect();
    assert_eq!(
        values,
        ["{\"shortCode\": \"a\"}", "{\"shortCode\": \"b\"}", "3"]
    );
}

#[test]
fn broken_json_names_a_line() {
    for (text, want) in [
        ("{\"links\": [{\"id\": \"a\"},\n {\"id\": \"b\"", "ends"),
        ("{\"links\": [{\"id\": 1} {\"id\": 2}]}", "expected ','"),
        ("{\"other\": []}", "no \"links\""),
        ("{\"links\": {}}", "expected '['"),
    ] {
        let err = elements(text, &["links"]).unwrap_err();
        assert!(err.contains(want), "{text}: {err}");
    }
}

#[test]
fn files_are_recognised_from_their_first_bytes() {
    let kind = |s: &str| detect(s.as_bytes()).map(|k| (k.service, k.shape));
    assert_eq!(
        kind("{\"links\": [{\"id\": \"bit.ly/a\", \"long_url\": \"https://a\"}]}"),
        Some((Service::Bitly, Shape::Json))
    );
    assert_eq!(
        kind("{\"shortUrls\": {\"data\": []}}"),
        Some((Service::Shlink, Shape::Json))
    );
    assert_eq!(
        kind("{\"limit\": 10, \"data\": [{\"address\": \"a\", \"target\": \"https://a\"}]}"),
        Some((Service::Kutt, Shape::Json))
    );
    assert_eq!(
        kind("{\"version\": 1, \"links\": []}"),
        Some((Service::Linkdeck, Shape::Json))
    );
    assert_eq!(
        kind("createdAt,domain,shortCode,shortUrl,longUrl,title,tags,visits\n"),
        Some((Service::Shlink, Shape::Csv))
    );
    assert_eq!(
        kind("\"keyword\",\"url\",\"title\",\"timestamp\",\"ip\",\"clicks\"\n"),
        Some((Service::Yourls, Shape::Csv))
    );
    assert_eq!(
        kind(
            "\"ozh\",\"https://ozh.org/\",\"ozh.org\",\"2024-01-02 03:04:05\",\"127.0.0.1\",\"7\"\n"
        ),
        Some((Service::Yourls, Shape::Csv))
    );
    assert_eq!(
        kind("-- MariaDB dump\nCREATE TABLE `yourls_url` (`keyword` varchar(100))"),
        Some((Service::Yourls, Shape::Sql))
    );
    // A long click log fills the head before yourls_url shows.
    assert_eq!(
        kind(
            "-- MySQL dump\nCREATE TABLE `yourls_log` (`click_id` int, `click_time` datetime, \
             `shorturl` varchar(100))"
        ),
        Some((Service::Yourls, Shape::Sql))
    );
    assert_eq!(
        kind("url,alias\nhttps://a,b\n"),
        Some((Service::Linkdeck, Shape::Csv))
    );
    assert_eq!(kind("{}"), None);
    assert_eq!(kind("hello,world\n"), None);
}

#[test]
fn short_urls_split_into_host_and_alias() {
    assert_eq!(
        host_and_alias("bit.ly/2Qj2niP"),
        Some(("bit.ly".into(), "2Qj2niP".into()))
    );
    assert_eq!(
        host_and_alias("https://S.Test:8080/abc?x=1"),
        Some(("s.test:8080".into(), "abc".into()))
    );
}

#[test]
fn crlf_becomes_lf_so_csv_lines_count_right() {
    use std::io::Read;
    let text = "a\r\n\"b\r\nc\"\r\nd\re\r";
    // Tiny reads put a \r at the end of a chunk.
    struct Trickle<'a>(&'a [u8]);
    impl Read for Trickle<'_> {
        fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
            let n = self.0.len().min(buf.len()).min(2);
            buf[..n].copy_from_slice(&self.0[..n]);
            self.0 = &self.0[n..];
            Ok(n)
        }
    }
    let mut out = String::new();
    scan::LfLines::new(std::io::BufReader::with_capacity(
        2,
        Trickle(text.as_bytes()),
    ))
    .read_to_string(&mut out)
    .unwrap();
    assert_eq!(out, "a\n\"b\nc\"\nd\re\r");
    let mut r = csv::ReaderBuilder::new()
        .has_headers(false)
        .flexible(true)
        .from_reader(scan::LfLines::new("x\r\ny\r\nz\r\n".as_bytes()));
    let lines: Vec<u64> = r
        .records()
        .map(|r| r.unwrap().position().unwrap().line())
        .collect();
    assert_eq!(lines, vec![1, 2, 3]);
}

#[test]
fn runs_cut_by_tiny_buffers_read_the_same() {
    let text = "{\"sorted_links\": [{\"id\": \"a,b\"}],\n \"links\": [{\"t\": \"x \\\" ] } , y\",\n \"n\": [1, 2, {\"z\": null}]},\n  \"s\\\\\", 17, true]}";
    let whole = elements(text, &["links"]).unwrap();
    for size in [1, 2, 3, 7] {
        let tiny: Vec<(usize, String)> = JsonArrays::new(
            std::io::BufReader::with_capacity(size, text.as_bytes()),
            &["links"],
            &["sorted_links"],
        )
        .map(|e| match e.unwrap() {
            Event::Element { line, bytes, .. } => (line, String::from_utf8(bytes).unwrap()),
            Event::Sibling { key, bytes, .. } => {
                (0, format!("{key}={}", String::from_utf8(bytes).unwrap()))
            }
        })
        .collect();
        assert_eq!(tiny, whole, "buffer of {size}");
    }
    assert_eq!(whole.len(), 5);
    assert_eq!(whole[1].0, 2);
    assert_eq!(whole[2], (4, "\"s\\\\\"".to_owned()));
}

#[test]
fn yourls_clicks_logged_after_the_links_are_noted_not_carried() {
    let links = "INSERT INTO `yourls_url` VALUES \
                 ('a','https://a.example','A','2023-01-01 00:00:00','10.0.0.1',3);\n";
    let log = "INSERT INTO `yourls_log` VALUES \
               (1,'2023-01-02 00:00:00','a','direct','-','10.0.0.1','FR');\n";
    let history = |dump: String| {
        let dropped = Dropped::default();
        let agents: AgentReader = std::sync::Arc::new(|_: &str| (None, None));
        let reads: Vec<Read> = yourls::sql_rows(
            Box::new(std::io::Cursor::new(dump)),
            dropped.clone(),
            None,
            agents,
        )
        .collect();
        let traffic = match reads.as_slice() {
            [Read::Row(row)] => row.record.traffic.clone(),
            other => panic!("{other:?}"),
        };
        let mut dropped = dropped.entries();
        dropped.retain(|(what, _)| what.contains("yourls_log"));
        (traffic.map_or(0, |t| t.len()), dropped)
    };
    // mysqldump's order: the log first, carried.
    assert_eq!(history(format!("{log}{links}")), (1, Vec::new()));
    // After the links: too late for them, and said so.
    let (hours, dropped) = history(format!("{links}{log}"));
    assert_eq!(hours, 0);
    assert_eq!(dropped.len(), 1);
    assert!(
        dropped[0].0.contains("after the yourls_url rows"),
        "{dropped:?}"
    );
}
