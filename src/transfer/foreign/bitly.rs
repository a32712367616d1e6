//! Bitly: the answer of its API v4 `GET /v4/groups/{group_guid}/bitlinks` (`{"links": [...],
//! "pagination": {...}}`), one page or many saved into one file. A bitlink's `id` is its short
//! link without a scheme (`bit.ly/2Qj2niP`); `custom_bitlinks` are the back-halves a person
//! chose for it. The list carries no click totals: they come from the sorted list
//! (`/v4/groups/{guid}/bitlinks/clicks`, whose answer puts `sorted_links` of `{id, clicks}`
//! before its `links`), or from a `total_clicks` (or `clicks`) field added to each link.

use std::collections::HashMap;
use std::io::BufRead;

use serde::Deserialize;

use super::{Dropped, ForeignRow, JsonItem, Read, host_and_alias, json_elements, text};
use crate::transfer::{LinkRecord, Scalar};

/// Bitly's own public short domains: nobody brings them along, so links on them go to the
/// profile's main domain.
pub const PUBLIC_HOSTS: [&str; 3] = ["bit.ly", "j.mp", "bitly.com"];

#[derive(Deserialize, Default)]
#[serde(default)]
struct Bitlink {
    id: Option<String>,
    link: Option<String>,
    long_url: Option<String>,
    title: Option<String>,
    created_at: Option<String>,
    archived: bool,
    is_deleted: bool,
    tags: Vec<String>,
    custom_bitlinks: Vec<String>,
    deeplinks: Vec<serde_json::Value>,
    total_clicks: Option<u64>,
    clicks: Option<u64>,
}

#[derive(Deserialize)]
struct Sorted {
    id: String,
    clicks: u64,
}

pub fn rows(input: Box<dyn BufRead + Send>, dropped: Dropped) -> impl Iterator<Item = Read> {
    let mut sorted: HashMap<String, u64> = HashMap::new();
    json_elements::<Bitlink>(input, &["links"], &["sorted_links"], "Bitly link").filter_map(
        move |item| match item {
            Err(read) => Some(read),
            Ok(JsonItem::Sibling(bytes)) => {
                if let Ok(list) = serde_json::from_slice::<Vec<Sorted>>(&bytes) {
                    sorted.extend(list.into_iter().map(|s| (bare(&s.id), s.clicks)));
                }
                None
            }
            Ok(JsonItem::Element(place, link)) => {
                if link.is_deleted {
                    dropped.note("deleted bitlinks (left out)");
                    return None;
                }
                Some(row(place, link, &sorted, &dropped))
            }
        },
    )
}

/// An id or link without its scheme, lower-cased host: how the two lists name a bitlink.
fn bare(id: &str) -> String {
    host_and_alias(id)
        .map(|(h, a)| format!("{h}/{a}"))
        .unwrap_or_else(|| id.to_owned())
}

fn row(
    place: crate::domain::Place,
    link: Bitlink,
    sorted: &HashMap<String, u64>,
    dropped: &Dropped,
) -> Read {
    let id = link.id.as_deref().or(link.link.as_deref()).unwrap_or("");
    let generated = host_and_alias(id);
    // The back-half a person chose is what they shared; the generated one is kept only when
    // there is none.
    let chosen = link.custom_bitlinks.first().and_then(|c| host_and_alias(c));
    let others = link.custom_bitlinks.len().saturating_sub(1) + usize::from(chosen.is_some());
    if others > 0 {
        dropped.note("further back-halves of a bitlink (its generated one, extra custom ones)");
    }
    let Some((host, alias)) = chosen.or(generated) else {
        return Read::invalid(place, "id", "names no bitlink (expected host/back-half)");
    };
    let clicks = link
        .total_clicks
        .or(link.clicks)
        // Most files have no sorted list: spare each row the parse of its id.
        .or_else(|| {
            if sorted.is_empty() {
                None
            } else {
                sorted.get(&bare(id)).copied()
            }
        });
    if clicks.is_none() {
        dropped.note("click totals (not in Bitly's bitlinks list)");
    }
    if link.archived {
        dropped.note("the archived mark (archived bitlinks still redirect: imported active)");
    }
    if !link.deeplinks.is_empty() {
        dropped.note("app deeplinks");
    }
    let domain = (!PUBLIC_HOSTS.contains(&host.as_str())).then_some(host);
    let record = LinkRecord {
        url: text(link.long_url.as_deref()),
        alias: Some(alias),
        title: text(link.title.as_deref()),
        clicks: clicks.map(|c| Scalar::Number(i64::try_from(c).unwrap_or(i64::MAX))),
        created_at: text(link.created_at.as_deref()),
        domain,
        ..LinkRecord::default()
    };
    Read::Row(Box::new(ForeignRow {
        place,
        record,
        tags: link.tags,
    }))
}
