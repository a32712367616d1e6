//! linkdeck's own API beside v1, under `/api/linkdeck/`: what one linkdeck asks of another
//! `linkdeck serve` that the phpShort-compatible v1 API cannot give — importing export records
//! with everything they carry (titles, click totals, creation dates, traffic history) in one
//! transaction, and the hourly traffic history of links. Written by the server
//! (`server/linkdeck.rs`), read by the remote backend; the v1 surface is left as phpShort has it.
//!
//! A client learns that a server speaks it from [`Capabilities`] (`GET capabilities`): any
//! other answer there — a phpShort site's 404 — means a v1-only server.

use serde::{Deserialize, Serialize};

use crate::domain::{Id, Renamed};
use crate::transfer::TrafficRecord;

/// What the capabilities record says in `server`.
pub const SERVER: &str = "linkdeck";

/// The version of this API; a client uses it only when the server says this one.
pub const API_VERSION: u32 = 1;

/// The paths, under `/api/linkdeck/`.
pub const CAPABILITIES_PATH: &str = "capabilities";
pub const IMPORT_PATH: &str = "import";
pub const TRAFFIC_PATH: &str = "traffic";
pub const VISITS_PATH: &str = "visits";
pub const LIVE_VISITS_PATH: &str = "visits/live";
pub const TAGS_PATH: &str = "tags";
pub const TAG_RENAME_PATH: &str = "tags/rename";
/// Webhook subscriptions (`server/webhooks.rs` has the calls under it).
pub const WEBHOOKS_PATH: &str = "webhooks";
/// `GET orphans?period=…`: a [`crate::domain::OrphanStats`].
pub const ORPHANS_PATH: &str = "orphans";
/// `GET` and `PUT links/{id}/rules`: a link's redirect rules ([`LinkRules`]), which v1 has no
/// field for.
pub const LINK_RULES_PATH: &str = "links/{id}/rules";

/// A link's redirect rules in their text form (`country DE => https://…`), in the order they
/// are asked: what `GET links/{id}/rules` answers, and (without `id`) what `PUT` takes, the
/// whole list at once (empty removes them).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LinkRules {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<crate::domain::Id>,
    pub rules: Vec<String>,
}

impl LinkRules {
    pub fn of(link: &crate::domain::Link) -> Self {
        LinkRules {
            id: Some(link.id),
            rules: link.options.rules.iter().map(ToString::to_string).collect(),
        }
    }
}

/// `POST tags/rename`'s form: the tag to rename and its new name (a merge, where a link has
/// both). Fields as typed; the service reads them by the tag rules.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TagRename {
    #[serde(default)]
    pub from: String,
    #[serde(default)]
    pub to: String,
}

/// What `POST tags/rename` did: how many links changed.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct TagRenamed {
    pub links: u64,
}

/// `GET /api/linkdeck/capabilities`: that this is a linkdeck server, and its limits.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Capabilities {
    /// Always [`SERVER`].
    pub server: String,
    /// The server's linkdeck version, for people reading it.
    pub version: String,
    /// [`API_VERSION`].
    pub api: u32,
    /// The largest body `POST import` takes, in bytes.
    pub import_max_bytes: u64,
    /// The most link ids one `GET traffic` may name.
    pub traffic_max_ids: u32,
    /// Whether `GET visits` streams the raw visit log and `GET visits/live` the visits as they
    /// come (servers before them say nothing).
    #[serde(default)]
    pub visits: bool,
    /// Whether links carry tags, `GET tags` lists them and `POST tags/rename` renames one
    /// (servers before them say nothing).
    #[serde(default)]
    pub tags: bool,
    /// Whether `GET /api/v1/stats`, `GET visits` and `GET visits/live` take `tag`, a tag's
    /// links' traffic (servers before it say nothing).
    #[serde(default)]
    pub tag_traffic: bool,
    /// Whether links carry their options (forwarding, indexing, a preview card) and previews
    /// (servers before them say nothing).
    #[serde(default)]
    pub link_options: bool,
    /// Whether the key's owner's webhook subscriptions are made and read under `webhooks`
    /// (servers before them say nothing).
    #[serde(default)]
    pub webhooks: bool,
    /// Whether the server holds a webhook key, without which it can read subscriptions but
    /// neither make one, show a secret nor deliver: `None` from servers before it said so.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub webhook_key: Option<bool>,
    /// Whether requests no link answers are recorded and `GET orphans` answers their rollups
    /// (servers before it say nothing).
    #[serde(default)]
    pub orphan_visits: bool,
}

/// What a server without a webhook key cannot do, and what its operator sets, after "so it
/// cannot": the server's 404 and the remote backend's refusal say it alike.
pub const NO_WEBHOOK_KEY: &str = "make a subscription, show a secret or deliver; its operator \
    sets LINKDECK_WEBHOOK_KEY (32 bytes or more) or [serve] webhook_key_file and restarts serve";

/// `POST /api/linkdeck/import?on_conflict=fail|skip|rename`, whose body is a linkdeck JSON
/// export (`{"version": 1, "spaces": […], "links": […]}`): what the import did. Rows are named
/// by their line in the body (`line 4`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ImportAnswer {
    pub spaces_created: usize,
    pub spaces_reused: usize,
    pub links_created: usize,
    /// Rows passed over: the same link (alias, domain, destination) was there already.
    pub links_already_there: usize,
    pub links_skipped: usize,
    pub renamed: Vec<Renamed>,
    /// Clicks of the traffic history written.
    pub clicks_imported: u64,
    /// Rows whose record said the link had a password but could not carry it (`true`).
    pub passwords_not_imported: usize,
}

/// One link's answer in `GET /api/linkdeck/traffic?ids=1,2,3`: its history, an hour a record,
/// as an export writes it. Links without traffic, or not the caller's, are left out.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LinkTraffic {
    pub id: Id,
    pub traffic: Vec<TrafficRecord>,
}
