//! Reading `application/x-www-form-urlencoded` bodies and query strings strictly: every byte
//! must decode to UTF-8, every field must be known, scalars come once, and targeting lists must
//! look like `geo[0][key]` (brackets sent plain or percent-encoded alike).

use std::collections::BTreeMap;

use axum::http::{HeaderMap, StatusCode, header};
use serde::de::DeserializeOwned;
use serde_json::Value;

use super::error::ApiError;
use crate::domain::FieldErrors;

/// Rows a targeting list may have in one request.
pub const MAX_ROWS: usize = 100;

/// One `key=value` pair after percent-decoding.
pub type Pair = (String, String);

fn hex(b: u8) -> Option<u8> {
    match b {
        b'0'..=b'9' => Some(b - b'0'),
        b'a'..=b'f' => Some(b - b'a' + 10),
        b'A'..=b'F' => Some(b - b'A' + 10),
        _ => None,
    }
}

/// Form decoding of one component (`+` is a space); `None` when it is not UTF-8 or holds a
/// broken `%` escape.
fn decode(raw: &[u8]) -> Option<String> {
    let mut out = Vec::with_capacity(raw.len());
    let mut i = 0;
    while i < raw.len() {
        match raw[i] {
            b'+' => out.push(b' '),
            b'%' => {
                let hi = raw.get(i + 1).copied().and_then(hex)?;
                let lo = raw.get(i + 2).copied().and_then(hex)?;
                out.push(hi << 4 | lo);
                i += 2;
            }
            b => out.push(b),
        }
        i += 1;
    }
    String::from_utf8(out).ok()
}

/// Splits and decodes `a=1&b=2`. A pair that does not decode is reported under its field name
/// (or `body` when even the name is unreadable).
pub fn pairs(raw: &[u8], what: &str) -> Result<Vec<Pair>, FieldErrors> {
    let mut errors = FieldErrors::default();
    let mut out = Vec::new();
    for part in raw.split(|b| *b == b'&').filter(|p| !p.is_empty()) {
        let (k, v) = match part.iter().position(|b| *b == b'=') {
            Some(at) => (&part[..at], &part[at + 1..]),
            None => (part, &[][..]),
        };
        match (decode(k), decode(v)) {
            (Some(k), Some(v)) => out.push((k, v)),
            (Some(k), None) => {
                errors.add(&dotted(&k), "is not valid UTF-8 or holds a broken % escape")
            }
            (None, _) => errors.add(
                what,
                "holds a field name that is not valid UTF-8 or has a broken % escape",
            ),
        }
    }
    errors.into_result(out)
}

/// `geo[0][key]` → `geo.0.key`, the name errors use.
pub fn dotted(key: &str) -> String {
    key.replace("][", ".")
        .replace(['[', ']'], ".")
        .trim_end_matches('.')
        .to_owned()
}

/// The shape of a form a handler accepts.
pub struct FormSpec {
    /// Fields given once, as `name=value`.
    pub scalars: &'static [&'static str],
    /// Lists given as `name[i][key]` / `name[i][value]`.
    pub lists: &'static [&'static str],
}

/// Checks the pairs against `spec` and deserializes them into `T`.
pub fn parse_form<T: DeserializeOwned>(pairs: &[Pair], spec: &FormSpec) -> Result<T, ApiError> {
    let mut errors = FieldErrors::default();
    let mut scalars = serde_json::Map::new();
    // list name → row index → the row's fields
    let mut rows: BTreeMap<&str, BTreeMap<usize, serde_json::Map<String, Value>>> = BTreeMap::new();
    for (key, value) in pairs {
        let (name, rest) = match key.find('[') {
            Some(at) => (&key[..at], &key[at..]),
            None => (key.as_str(), ""),
        };
        if let Some(&list) = spec.lists.iter().find(|l| **l == name) {
            match list_index(rest) {
                Some((index, sub)) if index < MAX_ROWS => {
                    let row = rows.entry(list).or_default().entry(index).or_default();
                    if row
                        .insert(sub.to_owned(), Value::String(value.clone()))
                        .is_some()
                    {
                        errors.add(&dotted(key), "is given more than once");
                    }
                }
                Some(_) => errors.add(list, format!("may have at most {MAX_ROWS} rows")),
                None => errors.add(
                    &dotted(key),
                    format!("must be sent as {list}[N][key] and {list}[N][value]"),
                ),
            }
        } else if spec.scalars.contains(&name) {
            if !rest.is_empty() {
                errors.add(&dotted(key), "must be a single value");
            } else if scalars
                .insert(name.to_owned(), Value::String(value.clone()))
                .is_some()
            {
                errors.add(name, "is given more than once");
            }
        } else if name.is_empty() {
            errors.add(&dotted(key), "is not a field name");
        } else {
            errors.add(&dotted(name), "is not a known field");
        }
    }
    if !errors.is_empty() {
        return Err(errors.into());
    }
    for (list, mut given) in rows {
        // Missing indices become blank rows (which validation skips), so error names keep the
        // sender's indices.
        let last = given.keys().next_back().copied().unwrap_or(0);
        let list_rows: Vec<Value> = (0..=last)
            .map(|i| Value::Object(given.remove(&i).unwrap_or_default()))
            .collect();
        scalars.insert(list.to_owned(), Value::Array(list_rows));
    }
    // Through JSON rather than a query-string deserializer: an empty value must stay
    // `Some("")` (it clears a field on update), not become `None`.
    serde_json::from_value::<T>(Value::Object(scalars))
        .map_err(|e| ApiError::field("body", format!("cannot be read: {e}")))
}

/// `[3][key]` → `(3, "key")`.
fn list_index(rest: &str) -> Option<(usize, &str)> {
    let rest = rest.strip_prefix('[')?;
    let (index, rest) = rest.split_once(']')?;
    if index.is_empty() || index.len() > 6 || !index.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let sub = rest.strip_prefix('[')?.strip_suffix(']')?;
    let index: usize = index.parse().ok()?;
    matches!(sub, "key" | "value").then_some((index, sub))
}

/// Checks the body's content type: form-urlencoded in UTF-8, or no body at all.
pub fn check_form_content_type(headers: &HeaderMap, body_len: usize) -> Result<(), ApiError> {
    let Some(ct) = headers.get(header::CONTENT_TYPE) else {
        return if body_len == 0 {
            Ok(())
        } else {
            Err(unsupported())
        };
    };
    let ct = ct.to_str().map_err(|_| unsupported())?.to_ascii_lowercase();
    let mut parts = ct.split(';').map(str::trim);
    if parts.next() != Some("application/x-www-form-urlencoded") {
        return Err(unsupported());
    }
    for param in parts {
        if let Some(charset) = param.strip_prefix("charset=")
            && !matches!(charset.trim_matches('"'), "utf-8" | "utf8")
        {
            return Err(ApiError::Status(
                StatusCode::UNSUPPORTED_MEDIA_TYPE,
                "The body must be UTF-8.".into(),
            ));
        }
    }
    Ok(())
}

fn unsupported() -> ApiError {
    ApiError::Status(
        StatusCode::UNSUPPORTED_MEDIA_TYPE,
        "Send the fields as application/x-www-form-urlencoded.".into(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::{LinkInput, RuleInput};

    const LINK: FormSpec = FormSpec {
        scalars: &["url", "alias"],
        lists: &["geo", "rotation"],
    };

    fn parse(body: &str) -> Result<LinkInput, ApiError> {
        let pairs = pairs(body.as_bytes(), "body").map_err(ApiError::from)?;
        parse_form(&pairs, &LINK)
    }

    fn fields(e: ApiError) -> Vec<String> {
        match e {
            ApiError::Domain(crate::domain::Error::Validation(f)) => {
                f.iter().map(|(k, _)| k.to_owned()).collect()
            }
            other => panic!("not a validation error: {other:?}"),
        }
    }

    #[test]
    fn nested_rows_encoded_or_not() {
        let a = parse("url=https%3A%2F%2Fa.example&geo[0][key]=US&geo[0][value]=https://u.example")
            .unwrap();
        let b = parse("url=https%3A%2F%2Fa.example&geo%5B0%5D%5Bkey%5D=US&geo%5B0%5D%5Bvalue%5D=https://u.example")
            .unwrap();
        assert_eq!(a, b);
        assert_eq!(a.geo.unwrap()[0], RuleInput::new("US", "https://u.example"));
    }

    #[test]
    fn empty_values_stay_present() {
        let input = parse("alias=&url=https://a.example").unwrap();
        assert_eq!(input.alias.as_deref(), Some(""));
    }

    #[test]
    fn gaps_keep_the_senders_indices() {
        let input = parse("rotation[2][value]=https://c.example").unwrap();
        let rows = input.rotation.unwrap();
        assert_eq!(rows.len(), 3);
        assert_eq!(rows[2].value.as_deref(), Some("https://c.example"));
    }

    #[test]
    fn unknown_duplicate_and_malformed_fields_are_named() {
        assert_eq!(fields(parse("url=x&colour=3").unwrap_err()), ["colour"]);
        assert_eq!(fields(parse("url=x&url=y").unwrap_err()), ["url"]);
        assert_eq!(
            fields(parse("geo[0][land]=US").unwrap_err()),
            ["geo.0.land"]
        );
        assert_eq!(fields(parse("url[]=x").unwrap_err()), ["url"]);
        assert_eq!(fields(parse("alias=%FF%FE").unwrap_err()), ["alias"]);
        assert_eq!(fields(parse("geo[100][key]=US").unwrap_err()), ["geo"]);
    }
}
