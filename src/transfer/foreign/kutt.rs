//! Kutt: the answer of its API v2 `GET /api/v2/links` (`{"limit", "skip", "total", "data":
//! [...]}`), one page or many in one file. A link's `address` is its back-half, `target` its
//! destination, `description` its title, `visit_count` its clicks, `expire_in` the instant it
//! expires and `domain` the host of a custom domain (null for the server's own). `password` only
//! says whether the link had one; `banned` links were taken down by the server's admin.

use std::io::BufRead;

use serde::Deserialize;

use super::{Dropped, ForeignRow, JsonItem, Read, ReadOptions, expiry_fields, json_elements, text};
use crate::domain::{Place, parse_instant};
use crate::transfer::{LinkRecord, Scalar};

#[derive(Deserialize, Default)]
#[serde(default)]
struct KuttLink {
    address: Option<String>,
    target: Option<String>,
    description: Option<String>,
    created_at: Option<String>,
    expire_in: Option<String>,
    visit_count: Option<u64>,
    domain: Option<String>,
    password: bool,
    banned: bool,
}

pub fn rows(
    input: Box<dyn BufRead + Send>,
    opts: ReadOptions,
    dropped: Dropped,
) -> impl Iterator<Item = Read> {
    json_elements::<KuttLink>(input, &["data"], &[], "Kutt link").filter_map(move |item| match item
    {
        Err(read) => Some(read),
        Ok(JsonItem::Sibling(_)) => None,
        Ok(JsonItem::Element(place, link)) => Some(row(place, link, &opts, &dropped)),
    })
}

fn row(place: Place, link: KuttLink, opts: &ReadOptions, dropped: &Dropped) -> Read {
    let mut record = LinkRecord {
        url: text(link.target.as_deref()),
        alias: text(link.address.as_deref()),
        title: text(link.description.as_deref()),
        created_at: text(link.created_at.as_deref()),
        clicks: link
            .visit_count
            .map(|n| Scalar::Number(i64::try_from(n).unwrap_or(i64::MAX))),
        domain: text(link.domain.as_deref()).map(|d| d.to_ascii_lowercase()),
        ..LinkRecord::default()
    };
    if let Some(at) = link.expire_in.as_deref().filter(|s| !s.trim().is_empty()) {
        match parse_instant(at) {
            Some(at) => expiry_fields(at, &opts.timezone, &mut record),
            None => return Read::invalid(place, "expire_in", "is not a date and time"),
        }
    }
    if link.password {
        dropped.note("passwords (Kutt exports only that a link had one: set them again)");
    }
    if link.banned {
        // A link the server's admin took down stays down.
        record.disabled = Some(Scalar::Bool(true));
        dropped.note("the banned mark (banned links are imported disabled)");
    }
    Read::Row(Box::new(ForeignRow {
        place,
        record,
        tags: Vec::new(),
    }))
}
