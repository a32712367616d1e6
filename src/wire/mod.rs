//! The v1 JSON wire format as `linkdeck serve` writes it: records, list envelopes, delete
//! confirmations and error bodies, built from the domain types. Reading the format back
//! (tolerantly, from any phpShort-style server) is the remote backend's business. It is shared,
//! not the server's own, because `stats` is read and written on both sides (docs/ARCHITECTURE.md,
//! "The v1 wire format").

pub mod linkdeck;
pub mod stats;
pub mod visits;

use jiff::Timestamp;
use serde::ser::SerializeStruct;
use serde::{Serialize, Serializer};
use serde_json::{Value, json};

use crate::domain::{Domain, FieldErrors, Id, Link, LinkField, Page, Space, TargetRule};

use LinkField as F;

/// A key/value targeting entry.
#[derive(Debug, Clone, Serialize)]
pub struct KeyValue<'a> {
    pub key: &'a str,
    pub value: &'a str,
}

/// A rotation entry.
#[derive(Debug, Clone, Serialize)]
pub struct ValueOnly<'a> {
    pub value: &'a str,
}

/// A link as a v1 record, fields in the order phpShort sends them. Not a struct of its own
/// beside [`Link`]: the record is `Link` written under the v1 names of
/// [`LinkField::record_name`] (`geo_target`, …), with flags as numbers and empty lists as null.
#[derive(Debug, Clone, Copy)]
pub struct LinkRecord<'a>(&'a Link);

impl Serialize for LinkRecord<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let link = self.0;
        let name = |field: LinkField| field.record_name().unwrap_or_default();
        let mut r = s.serialize_struct("LinkRecord", 30)?;
        r.serialize_field("id", &link.id)?;
        r.serialize_field(name(F::Alias), &link.alias)?;
        r.serialize_field(name(F::Url), &link.url)?;
        r.serialize_field("short_url", &link.short_url)?;
        r.serialize_field(name(F::Title), &link.title)?;
        r.serialize_field(name(F::TargetType), &u8::from(link.target_type))?;
        r.serialize_field(name(F::Geo), &keyed(&link.geo))?;
        r.serialize_field(name(F::Platform), &keyed(&link.platform))?;
        let rotation = (!link.rotation.is_empty()).then(|| {
            link.rotation
                .iter()
                .map(|u| ValueOnly { value: u })
                .collect::<Vec<_>>()
        });
        r.serialize_field(name(F::Rotation), &rotation)?;
        r.serialize_field("last_rotation", &link.last_rotation)?;
        r.serialize_field(name(F::Disabled), &u8::from(link.disabled))?;
        r.serialize_field(name(F::Public), &u8::from(link.public))?;
        r.serialize_field(name(F::Password), &link.password)?;
        r.serialize_field(name(F::ExpirationUrl), &link.expiration_url)?;
        r.serialize_field(name(F::ExpirationClicks), &link.expiration_clicks)?;
        r.serialize_field(name(F::Clicks), &link.clicks)?;
        r.serialize_field("user_id", &link.owner_id)?;
        r.serialize_field(name(F::Space), &link.space.as_ref().map(space_record))?;
        r.serialize_field(name(F::Domain), &link.domain.as_ref().map(domain_record))?;
        r.serialize_field("ends_at", &link.ends_at)?;
        r.serialize_field(name(F::CreatedAt), &link.created_at)?;
        r.serialize_field("updated_at", &link.updated_at)?;
        // linkdeck's, after phpShort's own keys: a v1 client reads past it.
        r.serialize_field(name(F::Tags), &link.tags)?;
        let o = &link.options;
        r.serialize_field(name(F::ForwardQuery), &u8::from(o.forward_query))?;
        r.serialize_field(name(F::ForwardPath), &u8::from(o.forward_path))?;
        r.serialize_field(name(F::AllowIndexing), &u8::from(o.allow_indexing))?;
        r.serialize_field(name(F::PreviewTitle), &o.preview_title)?;
        r.serialize_field(name(F::PreviewDescription), &o.preview_description)?;
        r.serialize_field(name(F::PreviewImage), &o.preview_image)?;
        r.serialize_field(name(F::Previews), &link.previews)?;
        // Only when there are some, as the export writes them: a record without rules reads
        // the same as before rules existed.
        if o.rules.is_empty() {
            r.skip_field(name(F::Rules))?;
        } else {
            r.serialize_field(name(F::Rules), &o.rules)?;
        }
        r.end()
    }
}

#[derive(Debug, Clone, Serialize)]
pub struct SpaceRecord<'a> {
    pub id: Id,
    pub user_id: Id,
    pub name: &'a str,
    pub color: u8,
    /// How many links the space holds, when the service counted them.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub links: Option<u64>,
    pub created_at: Timestamp,
    pub updated_at: Timestamp,
}

#[derive(Debug, Clone, Serialize)]
pub struct DomainRecord<'a> {
    pub id: Id,
    pub user_id: Id,
    pub name: &'a str,
    pub created_at: Timestamp,
    pub updated_at: Timestamp,
}

/// A domain as its own endpoints answer it: the v1 record and linkdeck's settings beside it
/// (fields a phpShort client does not know, and passes over). A link's domain is the v1 record
/// alone.
#[derive(Debug, Clone, Serialize)]
pub struct DomainSettingsRecord<'a> {
    #[serde(flatten)]
    pub domain: DomainRecord<'a>,
    pub root_url: Option<&'a str>,
    pub unknown_url: Option<&'a str>,
    pub expired_url: Option<&'a str>,
    /// `disallow`, `allow` or `custom`.
    pub robots: &'static str,
    pub robots_txt: Option<&'a str>,
}

fn keyed(rules: &[TargetRule]) -> Option<Vec<KeyValue<'_>>> {
    (!rules.is_empty()).then(|| {
        rules
            .iter()
            .map(|r| KeyValue {
                key: &r.key,
                value: &r.value,
            })
            .collect()
    })
}

pub fn link_record(link: &Link) -> LinkRecord<'_> {
    LinkRecord(link)
}

pub fn space_record(space: &Space) -> SpaceRecord<'_> {
    SpaceRecord {
        id: space.id,
        user_id: space.owner_id,
        name: &space.name,
        color: space.color.number(),
        links: space.links,
        created_at: space.created_at,
        updated_at: space.updated_at,
    }
}

pub fn domain_record(domain: &Domain) -> DomainRecord<'_> {
    DomainRecord {
        id: domain.id,
        user_id: domain.owner_id,
        name: &domain.name,
        created_at: domain.created_at,
        updated_at: domain.updated_at,
    }
}

pub fn domain_settings_record(domain: &Domain) -> DomainSettingsRecord<'_> {
    let settings = domain.settings();
    DomainSettingsRecord {
        domain: domain_record(domain),
        root_url: settings.root_url.as_deref(),
        unknown_url: settings.unknown_url.as_deref(),
        expired_url: settings.expired_url.as_deref(),
        robots: settings.robots.word(),
        robots_txt: settings.robots.text(),
    }
}

/// `{"data": record, "status": 200}`: the body of show, create and update (create answers HTTP
/// 201 with the same body, as phpShort does).
#[derive(Debug, Clone, Serialize)]
pub struct Single<T> {
    pub data: T,
    pub status: u16,
}

pub fn single<T: Serialize>(data: T) -> Single<T> {
    Single { data, status: 200 }
}

/// The `links` of a list: page URLs that keep every filter.
#[derive(Debug, Clone, Serialize)]
pub struct PageLinks {
    pub first: String,
    pub last: String,
    pub prev: Option<String>,
    pub next: Option<String>,
}

/// The `meta` of a list.
#[derive(Debug, Clone, Serialize)]
pub struct PageMeta {
    pub current_page: u32,
    /// 1-based position of the first record on the page; null when the page is empty.
    pub from: Option<u64>,
    pub last_page: u32,
    pub path: String,
    pub per_page: u32,
    pub to: Option<u64>,
    /// Every match, or — when `total_exact` is false — at least this many: counting all of
    /// them would have cost more than the page, so the server stopped one past 10,000 (or past
    /// the page's end) and `last_page` is one past what it counted.
    pub total: u64,
    pub total_exact: bool,
}

/// A list envelope.
#[derive(Debug, Clone, Serialize)]
pub struct List<R> {
    pub data: Vec<R>,
    pub links: PageLinks,
    pub meta: PageMeta,
    pub status: u16,
}

/// The list envelope. `page_url(n)` builds the URL of page `n` keeping every filter; `path` is
/// the list's URL without a query.
pub fn list<'a, T, R: Serialize>(
    page: &'a Page<T>,
    record: impl Fn(&'a T) -> R,
    path: &str,
    page_url: impl Fn(u32) -> String,
) -> List<R> {
    let last = page.last_page();
    let count = page.items.len() as u64;
    let (from, to) = if count == 0 {
        (None, None)
    } else {
        let from = u64::from(page.page.saturating_sub(1)) * u64::from(page.per_page) + 1;
        (Some(from), Some(from + count - 1))
    };
    List {
        data: page.items.iter().map(record).collect(),
        links: PageLinks {
            first: page_url(1),
            last: page_url(last),
            prev: (page.page > 1).then(|| page_url((page.page - 1).min(last))),
            next: (page.page < last).then(|| page_url(page.page + 1)),
        },
        meta: PageMeta {
            current_page: page.page,
            from,
            last_page: last,
            path: path.to_owned(),
            per_page: page.per_page,
            to,
            total: page.total,
            total_exact: page.total_exact,
        },
        status: 200,
    }
}

/// What a delete answers.
pub fn deleted(id: Id, object: &str) -> Value {
    json!({ "id": id, "object": object, "deleted": true, "status": 200 })
}

/// `{"message": "…", "status": N}`.
pub fn error(status: u16, message: &str) -> Value {
    json!({ "message": message, "status": status })
}

/// The 422 body: `message` maps each field (nested ones dotted: `geo.0.key`) to its messages.
pub fn validation(errors: &FieldErrors) -> Value {
    json!({ "message": errors, "status": 422 })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn list_envelope_counts_from_and_to() {
        let page = Page::new(vec![1, 2, 3], 2, 10, 13);
        let v = serde_json::to_value(list(
            &page,
            |n| *n,
            "http://x/api/v1/links",
            |n| format!("p{n}"),
        ))
        .unwrap();
        assert_eq!(v["meta"]["from"], 11);
        assert_eq!(v["meta"]["to"], 13);
        assert_eq!(v["meta"]["last_page"], 2);
        assert_eq!(v["links"]["prev"], "p1");
        assert_eq!(v["links"]["next"], Value::Null);
        assert_eq!(v["meta"]["total_exact"], true);
    }

    /// A bound says so, and its last page is one past what was counted, so a client that
    /// pages by `links.next` reaches the rest.
    #[test]
    fn a_bounded_total_says_so() {
        let total = crate::domain::Total::at_least(10_001);
        let page = Page::new(vec![1; 100], 1, 100, total);
        let v = serde_json::to_value(list(&page, |n| *n, "p", |n| format!("p{n}"))).unwrap();
        assert_eq!(v["meta"]["total"], 10_001);
        assert_eq!(v["meta"]["total_exact"], false);
        assert_eq!(v["meta"]["last_page"], 101);
        assert_eq!(v["links"]["next"], "p2");
    }

    #[test]
    fn empty_list_has_null_bounds() {
        let page: Page<u8> = Page::new(vec![], 1, 10, 0);
        let v = serde_json::to_value(list(&page, |n| *n, "p", |n| n.to_string())).unwrap();
        assert_eq!(v["meta"]["from"], Value::Null);
        assert_eq!(v["meta"]["last_page"], 1);
    }

    /// The v1 record: every key, in phpShort's order.
    #[test]
    fn a_link_record_has_the_v1_keys_in_order() {
        let record = serde_json::to_string(&link_record(&Link::example())).unwrap();
        let v1 = [
            "id",
            "alias",
            "url",
            "short_url",
            "title",
            "target_type",
            "geo_target",
            "platform_target",
            "rotation_target",
            "last_rotation",
            "disabled",
            "public",
            "password",
            "expiration_url",
            "expiration_clicks",
            "clicks",
            "user_id",
            "space",
            "domain",
            "ends_at",
            "created_at",
            "updated_at",
            "tags",
            "forward_query",
            "forward_path",
            "allow_indexing",
            "preview_title",
            "preview_description",
            "preview_image",
            "previews",
        ];
        let keys: Vec<String> = v1.iter().map(|k| format!("\"{k}\":")).collect();
        let mut rest = record.as_str();
        for key in &keys {
            let at = rest
                .find(key.as_str())
                .unwrap_or_else(|| panic!("{key} out of order in {record}"));
            rest = &rest[at + key.len()..];
        }
        assert_eq!(record.matches("\":").count(), v1.len(), "{record}");
    }
}
