//! Raw visits on the wire, as `GET /api/linkdeck/visits` streams them and `linkdeck visits
//! export` writes them: NDJSON (one JSON object a line, the fields of [`Visit`]) or CSV (a header
//! row of [`Visit::FIELDS`], then a row a visit). The time is RFC 3339 in UTC either way. A live
//! feed sends each visit as a server-sent event whose data is the NDJSON line ([`event`]).

use crate::domain::Visit;

/// The two shapes of an export.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum VisitFormat {
    /// One JSON object a line: what a data warehouse loads.
    #[default]
    Ndjson,
    /// A header row, then a row a visit: what a spreadsheet opens.
    Csv,
}

impl VisitFormat {
    pub fn parse(s: &str) -> Option<VisitFormat> {
        match s.trim().to_ascii_lowercase().as_str() {
            "ndjson" | "jsonl" => Some(VisitFormat::Ndjson),
            "csv" => Some(VisitFormat::Csv),
            _ => None,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            VisitFormat::Ndjson => "ndjson",
            VisitFormat::Csv => "csv",
        }
    }

    pub fn content_type(self) -> &'static str {
        match self {
            VisitFormat::Ndjson => "application/x-ndjson",
            VisitFormat::Csv => "text/csv; charset=utf-8",
        }
    }

    /// What comes before the first visit: CSV's header row.
    pub fn head(self) -> Vec<u8> {
        match self {
            VisitFormat::Ndjson => Vec::new(),
            VisitFormat::Csv => csv_row(Visit::FIELDS.iter().map(|f| f.to_string())),
        }
    }

    /// One visit as a line, its end of line included.
    pub fn line(self, visit: &Visit) -> Vec<u8> {
        match self {
            VisitFormat::Ndjson => {
                // A visit is plain data: writing it as JSON cannot fail.
                let mut line = serde_json::to_vec(visit).unwrap_or_default();
                line.push(b'\n');
                line
            }
            VisitFormat::Csv => {
                let text = |v: &Option<String>| v.clone().unwrap_or_default();
                csv_row([
                    visit.id.to_string(),
                    visit.at.to_string(),
                    visit.link_id.to_string(),
                    visit.alias.clone(),
                    text(&visit.country),
                    text(&visit.platform),
                    text(&visit.browser),
                    text(&visit.referrer),
                    text(&visit.language),
                    text(&visit.address),
                    text(&visit.rule),
                ])
            }
        }
    }
}

/// A visit as a server-sent event of a live feed: its id, and its JSON as the data.
pub fn event(visit: &Visit) -> Vec<u8> {
    let mut event = format!("id: {}\ndata: ", visit.id).into_bytes();
    event.extend(VisitFormat::Ndjson.line(visit));
    event.push(b'\n');
    event
}

/// One CSV row, quoted where a field needs it.
fn csv_row(fields: impl IntoIterator<Item = String>) -> Vec<u8> {
    let mut out = ::csv::Writer::from_writer(Vec::new());
    // Writing to memory fails only on a field the writer cannot hold, which no string is.
    let _ = out.write_record(fields);
    out.into_inner().unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn visit() -> Visit {
        Visit {
            id: 7,
            at: "2026-11-27T10:00:00Z".parse().unwrap(),
            link_id: 3,
            alias: "launch".into(),
            country: Some("DE".into()),
            platform: None,
            browser: Some("Firefox".into()),
            referrer: Some("news, and more".into()),
            language: Some("de".into()),
            address: Some("203.0.113.0/24".into()),
            rule: Some("country DE".into()),
        }
    }

    #[test]
    fn a_csv_row_lines_up_with_its_header_and_quotes_a_comma() {
        let head = String::from_utf8(VisitFormat::Csv.head()).unwrap();
        assert_eq!(
            head,
            "id,at,link_id,alias,country,platform,browser,referrer,language,address,rule\n"
        );
        let row = String::from_utf8(VisitFormat::Csv.line(&visit())).unwrap();
        assert_eq!(
            row,
            "7,2026-11-27T10:00:00Z,3,launch,DE,,Firefox,\"news, and more\",de,203.0.113.0/24,country DE\n"
        );
    }

    #[test]
    fn an_ndjson_line_reads_back_as_the_visit() {
        let line = VisitFormat::Ndjson.line(&visit());
        assert_eq!(line.last(), Some(&b'\n'));
        assert!(VisitFormat::Ndjson.head().is_empty());
        let back: Visit = serde_json::from_slice(&line).unwrap();
        assert_eq!(back, visit());
    }
}
