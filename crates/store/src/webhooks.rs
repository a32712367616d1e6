//! Webhooks: the subscriptions, and the outbox their deliveries wait in. An event is written
//! into the outbox in the transaction of the change that causes it, so a change rolled back
//! sends nothing and a change committed is never lost; the deliverer (the service's) claims
//! what is due, sends it and records each attempt. What both stores share — the records, the
//! bodies events are sent as, how click batches are filled — is here.

use std::collections::HashMap;

use jiff::Timestamp;
use linkdeck_domain::{Id, Result, WebhookEvent, events_of_text};
use serde::Serialize;

pub use linkdeck_domain::{Delivery, Webhook};
use serde_json::json;

use crate::clamped;
use crate::rows::Cells;
use crate::visits::VisitRow;

/// A delivery claimed for sending: everything the attempt needs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Claimed {
    pub id: Id,
    pub webhook_id: Id,
    pub url: String,
    pub salt: String,
    pub msg_id: String,
    pub body: String,
    /// Attempts so far, this one included.
    pub attempts: u32,
}

pub trait Webhooks {
    /// Stores a subscription of an existing owner; answers its id.
    fn insert_webhook(
        &self,
        owner: Id,
        url: &str,
        events: &[WebhookEvent],
        salt: &str,
        now: Timestamp,
    ) -> Result<Id>;
    fn webhook(&self, id: Id) -> Result<Option<Webhook>>;
    /// The input of subscription `id`'s secret (see the service's `webhooks` module).
    fn webhook_salt(&self, id: Id) -> Result<Option<String>>;
    /// Every subscription (of one owner, when given), oldest first.
    fn webhooks(&self, owner: Option<Id>) -> Result<Vec<Webhook>>;
    /// Deletes a subscription and its deliveries; `false` when there is none.
    fn delete_webhook(&self, id: Id) -> Result<bool>;
    /// Stops a subscription, saying why (`Some`), or starts it again with its failures
    /// forgotten (`None`); `false` when there is none.
    fn set_webhook_stopped(&self, id: Id, stopped: Option<(&str, Timestamp)>) -> Result<bool>;
    /// A new input for the subscription's secret (a rotation).
    fn set_webhook_salt(&self, id: Id, salt: &str) -> Result<bool>;
    /// Records how an attempt for subscription `id` went: a success forgets its failures, a
    /// failure adds one (and starts the run at `now`). Answers the subscription after it.
    fn note_attempt(&self, id: Id, ok: bool, now: Timestamp) -> Result<Option<Webhook>>;
    /// The running subscriptions of `owner` that want `event`.
    fn webhooks_wanting(&self, owner: Id, event: WebhookEvent) -> Result<Vec<Id>>;
    /// Queues a delivery due at `due`.
    fn enqueue(
        &self,
        webhook: Id,
        msg_id: &str,
        event: WebhookEvent,
        body: &str,
        due: Timestamp,
        now: Timestamp,
    ) -> Result<Id>;
    /// The click delivery of `webhook` that is not yet tried and so still takes clicks: its id
    /// and body.
    fn open_clicks(&self, webhook: Id) -> Result<Option<(Id, String)>>;
    fn set_body(&self, delivery: Id, body: &str) -> Result<()>;
    /// Up to `limit` deliveries due by `now` of running subscriptions, each claimed until
    /// `until` and counted as one attempt more: no one else claims them meanwhile (another
    /// server sharing the database included), and one whose sender died is claimed again once
    /// `until` has passed.
    fn claim(&self, now: Timestamp, until: Timestamp, limit: u32) -> Result<Vec<Claimed>>;
    /// The delivery arrived: `status` is the receiver's answer.
    fn delivered(&self, id: Id, status: u16, now: Timestamp) -> Result<()>;
    /// The attempt failed: tried again at `next` with `error` recorded.
    fn retry_at(&self, id: Id, status: Option<u16>, error: &str, next: Timestamp) -> Result<()>;
    /// The last `limit` deliveries of `webhook`, newest first.
    fn deliveries(&self, webhook: Id, limit: u32) -> Result<Vec<Delivery>>;
    /// Forgets deliveries that arrived before `before`; answers how many.
    fn prune_deliveries(&self, before: Timestamp) -> Result<u64>;
    /// What the events of link `id` tell about it: its owner and [`LinkFacts`].
    fn link_facts(&self, id: Id) -> Result<Option<(Id, LinkFacts)>>;
    /// Owners with running subscriptions wanting `event`.
    fn owners_wanting(&self, event: WebhookEvent) -> Result<Vec<Id>>;
    /// Marks the expired links of `owner` not marked yet as told, up to `limit`, and answers
    /// them: each is answered by one transaction only, whichever server runs it. A mark
    /// whose link is no longer expired (its end moved, its limit raised) or no longer there
    /// (deleted) is taken off, so its next expiry is told too.
    fn mark_expired(&self, owner: Id, now: Timestamp, limit: u32) -> Result<Vec<Id>>;
}

/// What an event tells about a link.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct LinkFacts {
    pub id: Id,
    pub alias: String,
    pub url: String,
    pub disabled: bool,
    pub ends_at: Option<Timestamp>,
    pub expiration_clicks: u32,
    pub clicks: u64,
}

/// The body of an event: Standard Webhooks' `{type, timestamp, data}`.
pub fn event_body(event: WebhookEvent, at: Timestamp, data: serde_json::Value) -> String {
    json!({"type": event.name(), "timestamp": at.to_string(), "data": data}).to_string()
}

/// A random message id, `msg_` and 26 characters: the `webhook-id` of every attempt.
pub fn new_msg_id() -> String {
    use rand::Rng;
    const SYMBOLS: &[u8] = b"0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ";
    let mut rng = rand::rng();
    let random: String = (0..26)
        .map(|_| char::from(SYMBOLS[rng.random_range(0..SYMBOLS.len())]))
        .collect();
    format!("msg_{random}")
}

/// Queues `event` for every running subscription of `owner` that wants it, with `data` as the
/// event's data, due at once. Nothing is read or written for an owner without one.
pub fn queue_event(
    tx: &dyn Webhooks,
    owner: Id,
    event: WebhookEvent,
    data: impl FnOnce() -> Result<serde_json::Value>,
    now: Timestamp,
) -> Result<()> {
    let hooks = tx.webhooks_wanting(owner, event)?;
    if hooks.is_empty() {
        return Ok(());
    }
    let body = event_body(event, now, data()?);
    for hook in hooks {
        tx.enqueue(hook, &new_msg_id(), event, &body, now, now)?;
    }
    Ok(())
}

/// Queues `event` about link `id` (its facts as the data), as [`queue_event`] does.
pub fn queue_link_event(
    tx: &dyn Webhooks,
    owner: Id,
    id: Id,
    event: WebhookEvent,
    now: Timestamp,
) -> Result<()> {
    queue_event(
        tx,
        owner,
        event,
        || {
            let facts = tx.link_facts(id)?.map(|(_, facts)| facts);
            Ok(json!({ "link": facts.unwrap_or_else(|| LinkFacts {
                id,
                alias: String::new(),
                url: String::new(),
                disabled: false,
                ends_at: None,
                expiration_clicks: 0,
                clicks: 0,
            }) }))
        },
        now,
    )
}

/// Clicks a click delivery carries at most; more open the next one.
pub const CLICKS_PER_DELIVERY: usize = 1000;

/// How long a click delivery gathers clicks before it is sent: at most one a second.
pub const CLICK_WINDOW: jiff::SignedDuration = jiff::SignedDuration::from_secs(1);

/// One visit as a `link.clicked` event tells it (never the visitor's address).
pub fn click_item(v: &VisitRow) -> serde_json::Value {
    json!({
        "link_id": v.link_id,
        "at": crate::time(v.at).to_string(),
        "country": v.country,
        "platform": v.platform,
        "browser": v.browser,
        "referrer": v.referrer,
        "language": v.language,
    })
}

/// A batch's visits as click items, by the owner of their link (`owner_of`); visits of links
/// not there (deleted meanwhile) are left out.
pub fn clicks_by_owner(
    rows: &[VisitRow],
    owner_of: impl Fn(Id) -> Option<Id>,
) -> HashMap<Id, Vec<serde_json::Value>> {
    let mut out: HashMap<Id, Vec<serde_json::Value>> = HashMap::new();
    for v in rows {
        if let Some(owner) = owner_of(v.link_id) {
            out.entry(owner).or_default().push(click_item(v));
        }
    }
    out
}

/// What to write for a subscription's new clicks: the open delivery's body with as many of
/// `items` as fit (`Some` when there was one), then the bodies of new deliveries for the rest.
pub fn click_bodies(
    open: Option<&str>,
    mut items: &[serde_json::Value],
    now: Timestamp,
) -> (Option<String>, Vec<String>) {
    let mut extended = None;
    if let Some(body) = open
        && let Ok(mut value) = serde_json::from_str::<serde_json::Value>(body)
        && let Some(clicks) = value
            .pointer_mut("/data/clicks")
            .and_then(|c| c.as_array_mut())
    {
        let room = CLICKS_PER_DELIVERY
            .saturating_sub(clicks.len())
            .min(items.len());
        clicks.extend(items[..room].iter().cloned());
        items = &items[room..];
        extended = Some(value.to_string());
    }
    let fresh = items
        .chunks(CLICKS_PER_DELIVERY)
        .map(|chunk| event_body(WebhookEvent::Clicked, now, json!({ "clicks": chunk })))
        .collect();
    (extended, fresh)
}

/// Adds a batch's clicks to the outbox of every subscription wanting them, through `tx`:
/// into each one's open click delivery while it has room, else into new ones due a second
/// apart.
pub fn queue_clicks(
    tx: &dyn Webhooks,
    rows: &[VisitRow],
    owner_of: impl Fn(Id) -> Option<Id>,
    now: Timestamp,
) -> Result<()> {
    let owners = tx.owners_wanting(WebhookEvent::Clicked)?;
    if owners.is_empty() {
        return Ok(());
    }
    let by_owner = clicks_by_owner(rows, |link| owner_of(link).filter(|o| owners.contains(o)));
    for (owner, items) in by_owner {
        for hook in tx.webhooks_wanting(owner, WebhookEvent::Clicked)? {
            let open = tx.open_clicks(hook)?;
            let (extended, fresh) =
                click_bodies(open.as_ref().map(|(_, b)| b.as_str()), &items, now);
            if let (Some((id, _)), Some(body)) = (&open, extended) {
                tx.set_body(*id, &body)?;
            }
            let mut due = now + CLICK_WINDOW;
            for body in fresh {
                tx.enqueue(hook, &new_msg_id(), WebhookEvent::Clicked, &body, due, now)?;
                due += CLICK_WINDOW;
            }
        }
    }
    Ok(())
}

/// A subscription's columns, from `w` (`webhooks`), with its deliveries waiting.
pub const WEBHOOK_COLUMNS: &str = "w.id, w.owner_id, w.url, w.events, w.created_at, \
     w.failures, w.failing_since, w.stopped_at, w.stopped_reason, \
     (SELECT count(*) FROM webhook_deliveries d WHERE d.webhook_id = w.id \
      AND d.delivered_at IS NULL)";

/// A subscription from [`WEBHOOK_COLUMNS`].
pub fn webhook<R: Cells>(r: &R) -> Result<Webhook, R::Error> {
    Ok(Webhook {
        id: r.int(0)?,
        owner_id: r.int(1)?,
        url: r.text(2)?,
        events: events_of_text(&r.text(3)?),
        created_at: crate::time(r.int(4)?),
        failures: clamped(r.int(5)?),
        failing_since: crate::optional_time(r.opt_int(6)?),
        stopped_at: crate::optional_time(r.opt_int(7)?),
        stopped_reason: r.opt_text(8)?,
        pending: r.int(9)?.max(0) as u64,
    })
}

/// A delivery's columns (times in seconds, but `due_at` in milliseconds).
pub const DELIVERY_COLUMNS: &str = "id, webhook_id, msg_id, event, created_at, due_at, attempts, \
     delivered_at, last_status, last_error";

/// A delivery from [`DELIVERY_COLUMNS`].
pub fn delivery<R: Cells>(r: &R) -> Result<Delivery, R::Error> {
    let delivered_at = crate::optional_time(r.opt_int(7)?);
    Ok(Delivery {
        id: r.int(0)?,
        webhook_id: r.int(1)?,
        msg_id: r.text(2)?,
        event: r.text(3)?,
        created_at: crate::time(r.int(4)?),
        next_at: delivered_at
            .is_none()
            .then(|| millis(r.int(5).unwrap_or(0))),
        attempts: clamped(r.int(6)?),
        delivered_at,
        last_status: r.opt_int(8)?.and_then(|s| u16::try_from(s).ok()),
        last_error: r.opt_text(9)?,
    })
}

/// A claimed delivery's columns, from `d` (`webhook_deliveries`) joined to `w` (`webhooks`).
pub const CLAIMED_COLUMNS: &str = "d.id, d.webhook_id, w.url, w.salt, d.msg_id, d.body, d.attempts";

/// A claimed delivery from [`CLAIMED_COLUMNS`].
pub fn claimed<R: Cells>(r: &R) -> Result<Claimed, R::Error> {
    Ok(Claimed {
        id: r.int(0)?,
        webhook_id: r.int(1)?,
        url: r.text(2)?,
        salt: r.text(3)?,
        msg_id: r.text(4)?,
        body: r.text(5)?,
        attempts: clamped(r.int(6)?),
    })
}

/// A link's facts with its owner first, from `l` (`links`).
pub const LINK_FACT_COLUMNS: &str =
    "l.owner_id, l.id, l.alias, l.url, l.disabled, l.ends_at, l.expiration_clicks, l.clicks";

/// A link's owner and facts from [`LINK_FACT_COLUMNS`].
pub fn link_facts<R: Cells>(r: &R) -> Result<(Id, LinkFacts), R::Error> {
    Ok((
        r.int(0)?,
        LinkFacts {
            id: r.int(1)?,
            alias: r.text(2)?,
            url: r.text(3)?,
            disabled: r.flag(4)?,
            ends_at: crate::optional_time(r.opt_int(5)?),
            expiration_clicks: clamped(r.int(6)?),
            clicks: r.int(7)?.max(0) as u64,
        },
    ))
}

/// Stored milliseconds as a timestamp; out of range (never written by us) is the epoch.
pub fn millis(ms: i64) -> Timestamp {
    Timestamp::from_millisecond(ms).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn item(n: i64) -> serde_json::Value {
        json!({ "n": n })
    }

    #[test]
    fn clicks_fill_the_open_delivery_then_new_ones() {
        let now = Timestamp::UNIX_EPOCH;
        let open = event_body(WebhookEvent::Clicked, now, json!({ "clicks": [item(0)] }));
        let items: Vec<_> = (1..=CLICKS_PER_DELIVERY as i64 + 5).map(item).collect();
        let (extended, fresh) = click_bodies(Some(&open), &items, now);
        let extended: serde_json::Value = serde_json::from_str(&extended.unwrap()).unwrap();
        assert_eq!(
            extended["data"]["clicks"].as_array().unwrap().len(),
            CLICKS_PER_DELIVERY
        );
        assert_eq!(fresh.len(), 1);
        let rest: serde_json::Value = serde_json::from_str(&fresh[0]).unwrap();
        assert_eq!(rest["type"], "link.clicked");
        assert_eq!(rest["data"]["clicks"].as_array().unwrap().len(), 6);
    }
}
