//! Tags: labels a link carries beside its one space, any number of them. A tag is compared
//! as it is stored — trimmed, its inner spaces made one, lower-case — so `Promo ` and `promo`
//! are one tag wherever they are typed: a form, the command line, a request or an import.

use serde::{Deserialize, Serialize};

use super::FieldErrors;

/// The longest tag, in characters.
pub const TAG_MAX: usize = 40;
/// The most tags one link carries.
pub const TAGS_PER_LINK_MAX: usize = 30;
/// What separates tags where they are typed as one text (`promo, q4`).
pub const TAG_SEPARATOR: char = ',';

/// A tag and how many of an owner's links carry it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TagCount {
    pub name: String,
    pub links: u64,
}

/// Whether a list keeps links with every tag asked for or with any of them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum TagMatch {
    #[default]
    All,
    Any,
}

impl TagMatch {
    pub fn as_str(self) -> &'static str {
        match self {
            TagMatch::All => "all",
            TagMatch::Any => "any",
        }
    }

    pub fn parse(s: &str) -> Option<TagMatch> {
        [TagMatch::All, TagMatch::Any]
            .into_iter()
            .find(|m| m.as_str().eq_ignore_ascii_case(s.trim()))
    }
}

/// A tag as stored, or why `raw` cannot be one.
pub fn tag(raw: &str) -> Result<String, String> {
    let tag = raw.split_whitespace().collect::<Vec<_>>().join(" ");
    if tag.is_empty() {
        return Err("must not be empty".into());
    }
    if tag.chars().count() > TAG_MAX {
        return Err(format!("must be at most {TAG_MAX} characters"));
    }
    if tag.contains(TAG_SEPARATOR) {
        return Err(format!(
            "must not contain \"{TAG_SEPARATOR}\", which separates tags"
        ));
    }
    if tag.chars().any(char::is_control) {
        return Err("must not contain control characters".into());
    }
    Ok(tag.to_lowercase())
}

/// The tags of `raw`, one text of tags separated by commas (empty: none), as stored: sorted,
/// each once. Every bad tag is an error of `field`.
pub fn tags_of_text(raw: &str, field: &str, errors: &mut FieldErrors) -> Vec<String> {
    let parts: Vec<&str> = raw
        .split(TAG_SEPARATOR)
        .filter(|t| !t.trim().is_empty())
        .collect();
    tags_of(&parts, field, errors)
}

/// The tags `raw` names, as stored: sorted, each once. Every bad tag is an error of `field`.
pub fn tags_of<S: AsRef<str>>(raw: &[S], field: &str, errors: &mut FieldErrors) -> Vec<String> {
    let mut tags = Vec::with_capacity(raw.len());
    for one in raw {
        match tag(one.as_ref()) {
            Ok(t) => tags.push(t),
            Err(message) => errors.add(field, format!("{:?} {message}", one.as_ref().trim())),
        }
    }
    tags.sort();
    tags.dedup();
    if tags.len() > TAGS_PER_LINK_MAX {
        errors.add(
            field,
            format!("a link carries at most {TAGS_PER_LINK_MAX} tags"),
        );
    }
    tags
}

/// The tags a link carries once `remove` are taken off and `add` put on: sorted, each once.
/// A tag in both is put on.
pub fn retagged(tags: &[String], add: &[String], remove: &[String]) -> Vec<String> {
    let mut after: Vec<String> = tags
        .iter()
        .filter(|t| !remove.contains(t))
        .chain(add)
        .cloned()
        .collect();
    after.sort();
    after.dedup();
    after
}

/// Tags as one text, the way they are typed: `promo, q4`.
pub fn tags_text(tags: &[String]) -> String {
    tags.join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_tag_is_stored_trimmed_and_lower_case_and_named_when_bad() {
        assert_eq!(tag("  Spring   Sale ").unwrap(), "spring sale");
        assert_eq!(tag("Café").unwrap(), "café");
        assert!(tag("   ").is_err());
        assert!(tag("a,b").unwrap_err().contains("separates"));
        assert!(tag(&"x".repeat(TAG_MAX + 1)).is_err());
        assert!(tag(&"é".repeat(TAG_MAX)).is_ok());
        assert!(tag("a\u{7}").is_err());
    }

    #[test]
    fn tags_put_on_and_taken_off_stay_sorted_and_once() {
        let v = |t: &[&str]| t.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        assert_eq!(
            retagged(&v(&["b", "old"]), &v(&["a"]), &v(&["old"])),
            v(&["a", "b"])
        );
        assert_eq!(retagged(&v(&["a"]), &v(&["a"]), &v(&[])), v(&["a"]));
        assert_eq!(retagged(&v(&["a"]), &v(&["a"]), &v(&["a"])), v(&["a"]));
    }

    #[test]
    fn tags_typed_as_text_are_sorted_each_once() {
        let mut errors = FieldErrors::default();
        let tags = tags_of_text("q4, Promo,, promo ,news", "tags", &mut errors);
        assert!(errors.is_empty());
        assert_eq!(tags, ["news", "promo", "q4"]);
        assert_eq!(tags_text(&tags), "news, promo, q4");
        let many: Vec<String> = (0..=TAGS_PER_LINK_MAX).map(|n| format!("t{n}")).collect();
        tags_of(&many, "tags", &mut errors);
        assert!(errors.contains("tags"));
    }
}
