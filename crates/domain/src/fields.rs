use std::cmp::Ordering;
use std::collections::BTreeMap;
use std::fmt;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// Fields listed at most; further invalid fields are only counted (an import of a large bad
/// file would otherwise print every one of them).
pub const LISTED_FIELDS: usize = 50;

/// Every invalid field of a request, by field name (nested fields with dots: `geo.0.key`; an
/// import's with their line: `line 12: alias`), each with one or more messages a person can act
/// on. Names are ordered as a person counts: `line 2` before `line 10`, `geo.2` before `geo.10`.
/// At most [`LISTED_FIELDS`] are listed; [`FieldErrors::total`] counts them all.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FieldErrors {
    listed: BTreeMap<FieldName, Vec<String>>,
    unlisted: usize,
}

/// A field's name, ordered with its runs of digits compared as numbers.
#[derive(Debug, Clone, PartialEq, Eq)]
struct FieldName(String);

impl Ord for FieldName {
    fn cmp(&self, other: &Self) -> Ordering {
        natural_cmp(&self.0, &other.0)
    }
}

impl PartialOrd for FieldName {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

fn without_leading_zeros(digits: &[u8]) -> &[u8] {
    let zeros = digits.iter().take_while(|&&c| c == b'0').count();
    &digits[zeros..]
}

/// `a` against `b`, runs of ASCII digits compared by value (then by length, so `02` and `2`
/// differ), everything else by character.
fn natural_cmp(a: &str, b: &str) -> Ordering {
    let (mut a, mut b) = (a.as_bytes(), b.as_bytes());
    loop {
        match (a.first(), b.first()) {
            (None, None) => return Ordering::Equal,
            (None, Some(_)) => return Ordering::Less,
            (Some(_), None) => return Ordering::Greater,
            (Some(x), Some(y)) if x.is_ascii_digit() && y.is_ascii_digit() => {
                let run = |s: &[u8]| s.iter().take_while(|c| c.is_ascii_digit()).count();
                let (na, nb) = (run(a), run(b));
                let (da, db) = (&a[..na], &b[..nb]);
                let (ta, tb) = (without_leading_zeros(da), without_leading_zeros(db));
                let by_value = ta.len().cmp(&tb.len()).then_with(|| ta.cmp(tb));
                match by_value.then_with(|| na.cmp(&nb)) {
                    Ordering::Equal => {
                        a = &a[na..];
                        b = &b[nb..];
                    }
                    other => return other,
                }
            }
            (Some(x), Some(y)) => match x.cmp(y) {
                Ordering::Equal => {
                    a = &a[1..];
                    b = &b[1..];
                }
                other => return other,
            },
        }
    }
}

impl FieldErrors {
    pub fn add(&mut self, field: &str, message: impl Into<String>) {
        let name = FieldName(field.to_owned());
        if let Some(messages) = self.listed.get_mut(&name) {
            messages.push(message.into());
        } else if self.listed.len() < LISTED_FIELDS {
            self.listed.insert(name, vec![message.into()]);
        } else {
            self.unlisted += 1;
        }
    }

    /// Adds `fields` as the errors of `place`, the one way an error gets its source's
    /// position: `url` of [`Place::line`]`(12)` becomes `line 12: url`. Errors `fields` only
    /// counted stay counted.
    ///
    /// [`Place::line`]: super::Place::line
    pub fn add_at(&mut self, place: impl fmt::Display, fields: FieldErrors) {
        for (field, messages) in fields.iter() {
            for message in messages {
                self.add(&format!("{place}: {field}"), message.clone());
            }
        }
        self.unlisted += fields.unlisted;
    }

    pub fn is_empty(&self) -> bool {
        self.listed.is_empty() && self.unlisted == 0
    }

    /// The fields listed.
    pub fn len(&self) -> usize {
        self.listed.len()
    }

    /// Every invalid field, listed or not.
    pub fn total(&self) -> usize {
        self.listed.len() + self.unlisted
    }

    pub fn get(&self, field: &str) -> Option<&[String]> {
        self.listed
            .get(&FieldName(field.to_owned()))
            .map(Vec::as_slice)
    }

    pub fn contains(&self, field: &str) -> bool {
        self.get(field).is_some()
    }

    pub fn iter(&self) -> impl Iterator<Item = (&str, &[String])> {
        self.listed
            .iter()
            .map(|(k, v)| (k.0.as_str(), v.as_slice()))
    }

    pub fn merge(&mut self, other: FieldErrors) {
        for (field, messages) in other.iter() {
            for message in messages {
                self.add(field, message.clone());
            }
        }
        self.unlisted += other.unlisted;
    }

    /// "1 field is invalid", "3 fields are invalid", "600,000 fields are invalid (the first
    /// 50 are listed)".
    pub fn summary(&self) -> String {
        let total = self.total();
        let count = crate::thousands(total as u64);
        match total {
            1 => "1 field is invalid".to_owned(),
            _ if self.unlisted > 0 => format!(
                "{count} fields are invalid (the first {} are listed)",
                self.listed.len()
            ),
            _ => format!("{count} fields are invalid"),
        }
    }

    /// `Ok(value)` when no error was collected, the errors otherwise.
    pub fn into_result<T>(self, value: T) -> Result<T, FieldErrors> {
        if self.is_empty() {
            Ok(value)
        } else {
            Err(self)
        }
    }
}

/// On the wire and in `--json`, the listed fields as an object of lists of messages.
impl Serialize for FieldErrors {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_map(self.iter())
    }
}

impl<'de> Deserialize<'de> for FieldErrors {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let map = BTreeMap::<String, Vec<String>>::deserialize(deserializer)?;
        let mut errors = FieldErrors::default();
        for (field, messages) in map {
            for message in messages {
                errors.add(&field, message);
            }
        }
        Ok(errors)
    }
}

impl fmt::Display for FieldErrors {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut first = true;
        for (field, messages) in self.iter() {
            for message in messages {
                if !first {
                    f.write_str("; ")?;
                }
                first = false;
                write!(f, "{field}: {message}")?;
            }
        }
        if self.unlisted > 0 {
            write!(f, "; and {} more fields", self.unlisted)?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_ordered_as_numbers_are_counted() {
        let mut errors = FieldErrors::default();
        for line in [10, 2, 100, 1] {
            errors.add(&format!("line {line}: url"), "bad");
        }
        errors.add("geo.10.key", "bad");
        errors.add("geo.2.key", "bad");
        let order: Vec<&str> = errors.iter().map(|(f, _)| f).collect();
        assert_eq!(
            order,
            [
                "geo.2.key",
                "geo.10.key",
                "line 1: url",
                "line 2: url",
                "line 10: url",
                "line 100: url"
            ]
        );
    }

    #[test]
    fn past_the_listed_fields_errors_are_counted() {
        let mut errors = FieldErrors::default();
        for line in 1..=600 {
            let mut row = FieldErrors::default();
            row.add("url", "must be an absolute http or https URL");
            errors.add_at(crate::Place::line(line), row);
        }
        assert_eq!(errors.len(), LISTED_FIELDS);
        assert_eq!(errors.total(), 600);
        assert_eq!(
            errors.summary(),
            "600 fields are invalid (the first 50 are listed)"
        );
        assert!(errors.contains("line 50: url") && !errors.contains("line 51: url"));
        let json = serde_json::to_value(&errors).unwrap();
        assert_eq!(json.as_object().unwrap().len(), LISTED_FIELDS);
    }
}
