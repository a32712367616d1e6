//! Links: the rows the service writes, how their targeting lists are stored, and what a store
//! answers about them.

use std::fmt;

use jiff::Timestamp;
use linkdeck_domain::{Id, Link, LinkOptions, Result, TargetRule, TargetType};
use serde::{Deserialize, Serialize};

/// The stored columns of a link that the service writes (clicks and rotation are the server's).
/// Its own shape, not a [`Link`]: ids instead of joined records, the password's hash.
#[derive(Clone, PartialEq)]
pub struct LinkRow {
    pub owner_id: Id,
    pub domain_id: Option<Id>,
    pub space_id: Option<Id>,
    pub alias: String,
    pub url: String,
    pub title: Option<String>,
    pub password_hash: Option<String>,
    pub disabled: bool,
    pub public: bool,
    pub expiration_url: Option<String>,
    pub expiration_clicks: u32,
    pub ends_at: Option<Timestamp>,
    pub target_type: TargetType,
    pub geo: Vec<TargetRule>,
    pub platform: Vec<TargetRule>,
    pub rotation: Vec<String>,
    pub created_at: Timestamp,
    pub updated_at: Timestamp,
    /// As stored: sorted, each once.
    pub tags: Vec<String>,
    pub options: LinkOptions,
}

impl LinkRow {
    /// A new link's row before the patch is applied.
    pub fn blank(owner: Id, now: Timestamp) -> LinkRow {
        LinkRow {
            owner_id: owner,
            domain_id: None,
            space_id: None,
            alias: String::new(),
            url: String::new(),
            title: None,
            password_hash: None,
            disabled: false,
            public: false,
            expiration_url: None,
            expiration_clicks: 0,
            ends_at: None,
            target_type: TargetType::None,
            geo: Vec::new(),
            platform: Vec::new(),
            rotation: Vec::new(),
            created_at: now,
            updated_at: now,
            tags: Vec::new(),
            options: LinkOptions::default(),
        }
    }
}

impl fmt::Debug for LinkRow {
    // The password hash stays out of logs too.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("LinkRow")
            .field("owner_id", &self.owner_id)
            .field("alias", &self.alias)
            .field("url", &self.url)
            .field("password", &self.password_hash.is_some())
            .finish_non_exhaustive()
    }
}

/// Rotation entries are stored in the wire shape, `{"value": …}`.
#[derive(Serialize)]
struct RotationEntry {
    value: String,
}

pub fn rules_json(rules: &[TargetRule]) -> Option<String> {
    (!rules.is_empty()).then(|| serde_json::to_string(rules).unwrap_or_default())
}

pub fn rotation_json(urls: &[String]) -> Option<String> {
    (!urls.is_empty()).then(|| {
        let entries: Vec<RotationEntry> = urls
            .iter()
            .map(|u| RotationEntry { value: u.clone() })
            .collect();
        serde_json::to_string(&entries).unwrap_or_default()
    })
}

pub fn parse_rules(json: Option<String>) -> Vec<TargetRule> {
    json.and_then(|j| serde_json::from_str(&j).ok())
        .unwrap_or_default()
}

/// A stored rotation list, as both a link's reader and a redirect read it: plain strings or
/// `{"value"}` objects, and anything unreadable as no URLs rather than a failed read (targeting
/// rules read the same way by [`parse_rules`]).
pub fn parse_rotation(text: Option<String>) -> Vec<String> {
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum Entry {
        Url(String),
        Object { value: String },
    }
    let Some(text) = text else { return Vec::new() };
    serde_json::from_str::<Vec<Entry>>(&text)
        .unwrap_or_default()
        .into_iter()
        .map(|e| match e {
            Entry::Url(u) | Entry::Object { value: u } => u,
        })
        .collect()
}

/// Tags as stored: a JSON list of strings, or NULL for none, so each store's triggers can
/// keep its `link_tags` index from the column with its own JSON functions.
pub fn tags_json(tags: &[String]) -> Option<String> {
    (!tags.is_empty()).then(|| serde_json::to_string(tags).unwrap_or_default())
}

/// How `tag` is spelled inside the text [`tags_json`] stores: a JSON string, its quotes
/// included.
pub fn tag_json(tag: &str) -> String {
    serde_json::to_string(tag).unwrap_or_default()
}

/// Options as stored: a JSON object, or NULL for the defaults (most links), so a plain
/// link's row stays as it was.
pub fn options_json(options: &LinkOptions) -> Option<String> {
    (!options.is_default()).then(|| serde_json::to_string(options).unwrap_or_default())
}

/// Stored options; anything unreadable is the defaults, as unreadable targeting rules are none.
pub fn parse_options(text: Option<String>) -> LinkOptions {
    text.and_then(|t| serde_json::from_str(&t).ok())
        .unwrap_or_default()
}

/// Stored tags; anything unreadable reads as none, as targeting rules do.
pub fn parse_tags(text: Option<String>) -> Vec<String> {
    text.and_then(|t| serde_json::from_str(&t).ok())
        .unwrap_or_default()
}

/// A stored targeting kind; a number we never write (unknown, or out of any kind's range)
/// reads as none, on every reader of either store.
pub fn target_type(n: i64) -> TargetType {
    u8::try_from(n)
        .ok()
        .and_then(|n| TargetType::try_from(n).ok())
        .unwrap_or_default()
}

/// A stored count read as a `u32` (a click limit, a rotation's turn), on every reader of either
/// store: below zero (never written by us; "no limit" to the status SQL) reads as 0, above
/// `u32::MAX` as `u32::MAX`.
pub fn clamped(n: i64) -> u32 {
    n.clamp(0, i64::from(u32::MAX)) as u32
}

pub trait Links {
    /// The owner's link `id`, with its space and domain; `short_url` is left for the service.
    fn link(&self, owner: Id, id: Id) -> Result<Option<Link>>;
    /// Up to `limit` of the owner's links with ids above `after`, oldest first: a keyset scan
    /// that costs the same on the last batch of a million links as on the first.
    fn links_after(&self, owner: Id, after: Id, limit: u32) -> Result<Vec<Link>>;
    /// The writable columns of the owner's link `id`, held against other writers until the
    /// transaction ends.
    fn link_row(&self, owner: Id, id: Id) -> Result<Option<LinkRow>>;
    /// Whether space `id` is the owner's; it stays so until the transaction ends.
    fn space_is_mine(&self, owner: Id, id: Id) -> Result<bool>;
    /// Whether domain `id` is the owner's; it stays so until the transaction ends.
    fn domain_is_mine(&self, owner: Id, id: Id) -> Result<bool>;
    /// Whether `alias` is used in the domain (without case) by a link other than `except`.
    fn alias_taken(&self, domain: Option<Id>, alias: &str, except: Option<Id>) -> Result<bool>;
    /// The destination of the owner's link in the domain with `alias` (without case), if the
    /// owner has one (during an import: the links of earlier chunks included, those staged in
    /// this one not).
    fn own_link_url(&self, owner: Id, domain: Option<Id>, alias: &str) -> Result<Option<String>>;
    /// Inserts the link; `None` when its alias is taken in its domain, also by a writer that
    /// got there first a moment ago. A new link's id was never given to another.
    fn insert_link(&self, row: &LinkRow) -> Result<Option<Id>>;
    /// Writes every service-owned column of link `id` (owner and creation time stay), and
    /// moves its counts and traffic when its space changes. An alias taken meanwhile by
    /// another writer is [`ALIAS_TAKEN`](crate::words::ALIAS_TAKEN) on `alias`.
    fn update_link(&self, id: Id, row: &LinkRow) -> Result<()>;
    /// Sets the title of link `id` if its url is still `url` (a fetched title that arrives
    /// after the link was edited is dropped); whether it was set.
    fn set_title(&self, id: Id, url: &str, title: &str) -> Result<bool>;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_rotation_list_stored_as_plain_strings_reads_as_its_urls() {
        let plain = parse_rotation(Some(r#"["https://a.example","https://b.example"]"#.into()));
        let objects = parse_rotation(Some(
            r#"[{"value":"https://a.example"},{"value":"https://b.example"}]"#.into(),
        ));
        assert_eq!(plain, ["https://a.example", "https://b.example"]);
        assert_eq!(plain, objects);
        assert_eq!(parse_rotation(rotation_json(&plain)), plain);
        assert!(parse_rotation(Some("not json".into())).is_empty());
        assert!(parse_rotation(None).is_empty());
    }

    #[test]
    fn out_of_range_stored_numbers_read_as_one_rule() {
        assert_eq!(target_type(3), TargetType::try_from(3u8).unwrap());
        for n in [-1, 99, 300, i64::from(i16::MAX), i64::MAX] {
            assert_eq!(target_type(n), TargetType::None, "{n}");
        }
        assert_eq!(clamped(-5), 0);
        assert_eq!(clamped(7), 7);
        assert_eq!(clamped(5_000_000_000), u32::MAX);
    }
}
