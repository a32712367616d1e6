//! Targeting lists as one CSV cell: `US=https://a.example/;DE=https://b.example/` for geo and
//! platform, `https://a.example/;https://b.example/` for rotation.
//!
//! A URL may itself contain `;`, so a piece only starts a new rule when it looks like the start
//! of one (a known key before `=`, or `KEY=http…`; for rotation, `http…`); otherwise it belongs
//! to the previous URL.

use crate::domain::RuleInput;

pub const SEPARATOR: char = ';';

pub fn encode_keyed(rules: &[RuleInput]) -> String {
    rules
        .iter()
        .map(|r| {
            format!(
                "{}={}",
                r.key.as_deref().unwrap_or(""),
                r.value.as_deref().unwrap_or("")
            )
        })
        .collect::<Vec<_>>()
        .join(&SEPARATOR.to_string())
}

pub fn encode_values(rules: &[RuleInput]) -> String {
    rules
        .iter()
        .map(|r| r.value.as_deref().unwrap_or(""))
        .collect::<Vec<_>>()
        .join(&SEPARATOR.to_string())
}

/// Reads `KEY=URL;KEY=URL`; `is_key` says whether a text is a valid key of the list. A piece
/// without `=` becomes a rule with a key and no value, which the service's validation then
/// reports on the right row.
pub fn decode_keyed(cell: &str, is_key: impl Fn(&str) -> bool) -> Vec<RuleInput> {
    let mut rules: Vec<RuleInput> = Vec::new();
    for piece in cell.split(SEPARATOR) {
        let starts_rule = piece
            .split_once('=')
            .is_some_and(|(k, v)| is_key(k.trim()) || looks_like_url_start(v.trim()));
        match rules.last_mut() {
            Some(last) if !starts_rule && !piece.trim().is_empty() && last.value.is_some() => {
                let value = last.value.get_or_insert_with(String::new);
                value.push(SEPARATOR);
                value.push_str(piece);
            }
            _ if piece.trim().is_empty() => {}
            _ => rules.push(match piece.split_once('=') {
                Some((k, v)) => RuleInput::new(k.trim(), v.trim()),
                None => RuleInput {
                    key: Some(piece.trim().to_owned()),
                    value: None,
                },
            }),
        }
    }
    rules
}

pub fn decode_values(cell: &str) -> Vec<RuleInput> {
    let mut rules: Vec<RuleInput> = Vec::new();
    for piece in cell.split(SEPARATOR) {
        match rules.last_mut() {
            Some(last) if !looks_like_url_start(piece.trim()) && !piece.trim().is_empty() => {
                let value = last.value.get_or_insert_with(String::new);
                value.push(SEPARATOR);
                value.push_str(piece);
            }
            _ if piece.trim().is_empty() => {}
            _ => rules.push(RuleInput::value(piece.trim())),
        }
    }
    rules
}

fn looks_like_url_start(s: &str) -> bool {
    let lower = s.get(..8).unwrap_or(s).to_ascii_lowercase();
    lower.starts_with("http://") || lower.starts_with("https://")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::country_by_code;

    fn country(k: &str) -> bool {
        country_by_code(k).is_some()
    }

    #[test]
    fn keyed_round_trip_with_semicolons_in_urls() {
        let rules = vec![
            RuleInput::new("US", "https://a.example/x;y=1"),
            RuleInput::new("OS X", "https://b.example/"),
        ];
        let cell = encode_keyed(&rules);
        assert_eq!(cell, "US=https://a.example/x;y=1;OS X=https://b.example/");
        assert_eq!(decode_keyed(&cell, |_| false), rules);
        assert_eq!(
            decode_keyed("US=https://a/;DE=ftp://b", country),
            vec![
                RuleInput::new("US", "https://a/"),
                RuleInput::new("DE", "ftp://b")
            ]
        );
    }

    #[test]
    fn values_round_trip_with_semicolons_in_urls() {
        let rules = vec![
            RuleInput::value("https://a.example/;a"),
            RuleInput::value("https://b.example/"),
        ];
        assert_eq!(decode_values(&encode_values(&rules)), rules);
        assert!(decode_values("").is_empty());
    }

    #[test]
    fn malformed_pieces_are_kept_for_validation() {
        assert_eq!(
            decode_keyed("US", country),
            vec![RuleInput {
                key: Some("US".into()),
                value: None
            }]
        );
        assert_eq!(
            decode_keyed("US=ftp://x", country),
            vec![RuleInput::new("US", "ftp://x")]
        );
    }
}
