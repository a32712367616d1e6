//! The v1 JSON wire format as `linkdeck serve` writes it (DESIGN §3): records, list envelopes,
//! delete confirmations and error bodies, built from the domain types. Reading the format back
//! (tolerantly, from any phpShort-style server) is the remote backend's business.

pub mod stats;

use jiff::Timestamp;
use serde::Serialize;
use serde_json::{Value, json};

use crate::domain::{Domain, FieldErrors, Id, Link, Page, Space, TargetRule};

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

/// A link record, fields in the order phpShort sends them. Its own shape, not a serialized
/// [`Link`]: the v1 names differ (`geo_target`, `user_id`, see
/// [`crate::domain::LinkField::record_name`]), flags are numbers, and empty lists are null.
#[derive(Debug, Clone, Serialize)]
pub struct LinkRecord<'a> {
    pub id: Id,
    pub alias: &'a str,
    pub url: &'a str,
    pub short_url: &'a str,
    pub title: Option<&'a str>,
    pub target_type: u8,
    pub geo_target: Option<Vec<KeyValue<'a>>>,
    pub platform_target: Option<Vec<KeyValue<'a>>>,
    pub rotation_target: Option<Vec<ValueOnly<'a>>>,
    pub last_rotation: u32,
    pub disabled: u8,
    pub public: u8,
    pub password: bool,
    pub expiration_url: Option<&'a str>,
    pub expiration_clicks: u32,
    pub clicks: u64,
    pub user_id: Id,
    pub space: Option<SpaceRecord<'a>>,
    pub domain: Option<DomainRecord<'a>>,
    pub ends_at: Option<Timestamp>,
    pub created_at: Timestamp,
    pub updated_at: Timestamp,
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
    LinkRecord {
        id: link.id,
        alias: &link.alias,
        url: &link.url,
        short_url: &link.short_url,
        title: link.title.as_deref(),
        target_type: link.target_type.into(),
        geo_target: keyed(&link.geo),
        platform_target: keyed(&link.platform),
        rotation_target: (!link.rotation.is_empty()).then(|| {
            link.rotation
                .iter()
                .map(|u| ValueOnly { value: u })
                .collect()
        }),
        last_rotation: link.last_rotation,
        disabled: link.disabled.into(),
        public: link.public.into(),
        password: link.password,
        expiration_url: link.expiration_url.as_deref(),
        expiration_clicks: link.expiration_clicks,
        clicks: link.clicks,
        user_id: link.owner_id,
        space: link.space.as_ref().map(space_record),
        domain: link.domain.as_ref().map(domain_record),
        ends_at: link.ends_at,
        created_at: link.created_at,
        updated_at: link.updated_at,
    }
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
    pub total: u64,
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
        let page = Page {
            items: vec![1, 2, 3],
            page: 2,
            per_page: 10,
            total: 13,
        };
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
    }

    #[test]
    fn empty_list_has_null_bounds() {
        let page: Page<u8> = Page {
            items: vec![],
            page: 1,
            per_page: 10,
            total: 0,
        };
        let v = serde_json::to_value(list(&page, |n| *n, "p", |n| n.to_string())).unwrap();
        assert_eq!(v["meta"]["from"], Value::Null);
        assert_eq!(v["meta"]["last_page"], 1);
    }

    /// The v1 record's keys are the registry's record names.
    #[test]
    fn a_link_record_carries_every_field_under_its_record_name() {
        let link = Link::example();
        let record = serde_json::to_value(link_record(&link)).unwrap();
        for field in crate::domain::LinkField::ALL {
            if let Some(name) = field.record_name() {
                assert!(record.get(name).is_some(), "no {name} in {record}");
            }
        }
    }
}
