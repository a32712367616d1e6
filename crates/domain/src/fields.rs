use std::cmp::Ordering;
use std::collections::BTreeMap;
use std::fmt;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// Fields listed at most; further invalid fields are only counted (an import of a large bad
/// file would otherwise print every one of them).
pub const LISTED_FIELDS: usize = 100;

/// Messages kept for one field; further ones add nothing a person needs (a row of a broken
/// file can be named again and again).
const MESSAGES_PER_FIELD: usize = 4;

/// Every invalid field of a request, by field name (nested fields with dots: `geo.0.key`; an
/// import's with their place: `line 12: alias`, `line 1, row 3: id`), each with one or more
/// messages a person can act on. Names are ordered as a person counts: `line 2` before `line 10`,
/// `line 1` before `line 1, row 2`, `geo.2` before `geo.10`. The first [`LISTED_FIELDS`] in that
/// order are listed, whatever order they were added in; [`FieldErrors::total`] counts them all.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FieldErrors {
    listed: BTreeMap<FieldName, Vec<String>>,
    unlisted: usize,
}

/// A field's name, ordered by its place (what comes before `": "`) and then its field, each
/// with its runs of digits compared as numbers.
#[derive(Debug, Clone, PartialEq, Eq)]
struct FieldName {
    text: String,
    /// Where `": "` splits the place from the field, if it does.
    split: Option<usize>,
}

impl FieldName {
    fn new(text: String) -> Self {
        let split = text.as_bytes().windows(2).position(|pair| pair == b": ");
        FieldName { text, split }
    }

    fn parts(&self) -> (&str, Option<&str>) {
        match self.split {
            Some(at) => (&self.text[..at], Some(&self.text[at + 2..])),
            None => (&self.text, None),
        }
    }
}

impl Ord for FieldName {
    fn cmp(&self, other: &Self) -> Ordering {
        let ((place_a, field_a), (place_b, field_b)) = (self.parts(), other.parts());
        natural_cmp(place_a, place_b).then_with(|| match (field_a, field_b) {
            (Some(a), Some(b)) => natural_cmp(a, b),
            (a, b) => a.is_some().cmp(&b.is_some()),
        })
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
    /// Adds a message for `field`. Once [`LISTED_FIELDS`] are listed, a field that comes
    /// before the last one listed takes its place, and the last is only counted: errors found
    /// out of order (a row's, known only at the end of an import) still list the first.
    pub fn add(&mut self, field: &str, message: impl Into<String>) {
        self.add_all(field, std::iter::once(message.into()));
    }

    /// Adds the messages of one field, which counts once however many it has.
    fn add_all(&mut self, field: &str, messages: impl IntoIterator<Item = String>) {
        let mut messages = messages.into_iter().peekable();
        if messages.peek().is_none() {
            return;
        }
        let name = FieldName::new(field.to_owned());
        if self.listed.len() >= LISTED_FIELDS {
            // Full: a field after the last listed is only counted (most are, in a large bad
            // file); one before it takes the last one's place.
            let Some((last, _)) = self.listed.last_key_value() else {
                return;
            };
            match name.cmp(last) {
                Ordering::Greater => {
                    self.unlisted += 1;
                    return;
                }
                Ordering::Less if !self.listed.contains_key(&name) => {
                    self.unlisted += 1;
                    self.listed.pop_last();
                }
                _ => {}
            }
        }
        let kept = self.listed.entry(name).or_default();
        for message in messages {
            if kept.len() < MESSAGES_PER_FIELD && !kept.contains(&message) {
                kept.push(message);
            }
        }
    }

    /// Adds `fields` as the errors of `place`, the one way an error gets its source's
    /// position: `url` of [`Place::line`]`(12)` becomes `line 12: url`. Errors `fields` only
    /// counted stay counted.
    ///
    /// [`Place::line`]: super::Place::line
    pub fn add_at(&mut self, place: impl fmt::Display, fields: FieldErrors) {
        for (field, messages) in fields.iter() {
            self.add_all(&format!("{place}: {field}"), messages.iter().cloned());
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

    /// The invalid fields counted but not listed.
    pub fn unlisted(&self) -> usize {
        self.unlisted
    }

    pub fn get(&self, field: &str) -> Option<&[String]> {
        self.listed
            .get(&FieldName::new(field.to_owned()))
            .map(Vec::as_slice)
    }

    pub fn contains(&self, field: &str) -> bool {
        self.get(field).is_some()
    }

    pub fn iter(&self) -> impl Iterator<Item = (&str, &[String])> {
        self.listed
            .iter()
            .map(|(k, v)| (k.text.as_str(), v.as_slice()))
    }

    pub fn merge(&mut self, other: FieldErrors) {
        for (field, messages) in other.listed {
            self.add_all(&field.text, messages);
        }
        self.unlisted += other.unlisted;
    }

    /// "1 field is invalid", "3 fields are invalid", "600,000 fields are invalid (the first
    /// 100 are listed)".
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
            errors.add_all(&field, messages);
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
            "600 fields are invalid (the first 100 are listed)"
        );
        assert!(errors.contains("line 100: url") && !errors.contains("line 101: url"));
        let json = serde_json::to_value(&errors).unwrap();
        assert_eq!(json.as_object().unwrap().len(), LISTED_FIELDS);
    }

    #[test]
    fn the_first_fields_are_listed_whatever_order_they_come_in() {
        // As an import finds them: most rows at once, a space's rows only at the end.
        let mut errors = FieldErrors::default();
        for line in (2..=400).filter(|l| l % 10 != 9) {
            errors.add(&format!("line {line}: url"), "bad");
        }
        for line in (9..=400).step_by(10) {
            errors.add(&format!("line {line}: space"), "no space is named X");
        }
        let mut late = FieldErrors::default();
        late.add("line 1: alias", "is taken");
        errors.merge(late);
        assert_eq!(errors.total(), 400);
        assert_eq!(errors.len(), LISTED_FIELDS);
        let lines: Vec<usize> = errors
            .iter()
            .map(|(f, _)| f[5..f.find(':').unwrap()].parse().unwrap())
            .collect();
        assert_eq!(lines, (1..=100).collect::<Vec<_>>());
    }

    #[test]
    fn a_place_named_again_and_again_is_one_field() {
        let mut errors = FieldErrors::default();
        for _ in 0..10_000 {
            errors.add("line 1: id", "names no bitlink");
        }
        for n in 0..10 {
            errors.add("line 1: id", format!("message {n}"));
        }
        assert_eq!(errors.total(), 1);
        assert_eq!(errors.get("line 1: id").unwrap().len(), MESSAGES_PER_FIELD);
    }

    #[test]
    fn the_rows_of_a_line_follow_it() {
        let mut errors = FieldErrors::default();
        for name in [
            "line 2: id",
            "line 1, row 10: id",
            "line 1, row 2: url",
            "line 1: id",
            "line 1, row 2: id",
        ] {
            errors.add(name, "bad");
        }
        let order: Vec<&str> = errors.iter().map(|(f, _)| f).collect();
        assert_eq!(
            order,
            [
                "line 1: id",
                "line 1, row 2: id",
                "line 1, row 2: url",
                "line 1, row 10: id",
                "line 2: id"
            ]
        );
    }
}
