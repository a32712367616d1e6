//! SQL for webhooks on PostgreSQL: subscriptions and their outbox. Several servers may share
//! the database, so a claim takes due rows `FOR UPDATE SKIP LOCKED` and marks them claimed
//! until a lease runs out: two servers never claim one delivery at once, and one whose server
//! died is claimed again after its lease.

use std::collections::HashMap;

use deadpool_postgres::GenericClient;
use jiff::Timestamp;
use linkdeck_domain::{Id, Result, WebhookEvent, events_text};
use linkdeck_store::traffic::LinkHome;
use linkdeck_store::visits::VisitRow;
use linkdeck_store::webhooks::{
    CLAIMED_COLUMNS, CLICK_WINDOW, Claimed, DELIVERY_COLUMNS, Delivery, LINK_FACT_COLUMNS,
    LinkFacts, WEBHOOK_COLUMNS, Webhook, Webhooks, claimed, click_bodies, clicks_by_owner,
    delivery, link_facts, new_msg_id, webhook,
};
use linkdeck_store::{expired_link, newly_expired};

use crate::sql::{Cols, all, col, execute, one, value};
use crate::tx::PgTx;

const WANTING: &str = "SELECT id FROM webhooks WHERE owner_id = $1 AND stopped_at IS NULL
     AND (' ' || events || ' ') LIKE ('% ' || $2 || ' %') ORDER BY id";
const OWNERS_WANTING: &str = "SELECT DISTINCT owner_id FROM webhooks WHERE stopped_at IS NULL
     AND (' ' || events || ' ') LIKE ('% ' || $1 || ' %') ORDER BY owner_id";
const ENQUEUE: &str = "INSERT INTO webhook_deliveries
     (webhook_id, msg_id, event, body, created_at, due_at)
     VALUES ($1, $2, $3, $4, $5, $6) RETURNING id";
const OPEN_CLICKS: &str = "SELECT id, body FROM webhook_deliveries
     WHERE webhook_id = $1 AND event = 'link.clicked' AND attempts = 0
     AND delivered_at IS NULL AND claimed_until IS NULL
     ORDER BY id DESC LIMIT 1 FOR UPDATE";
const SET_BODY: &str = "UPDATE webhook_deliveries SET body = $2 WHERE id = $1";

async fn wanting<C: GenericClient + Sync>(c: &C, owner: Id, event: &str) -> Result<Vec<Id>> {
    all(c, WANTING, &[&owner, &event], |r| col(r, 0)).await
}

async fn enqueue<C: GenericClient + Sync>(
    c: &C,
    webhook: Id,
    msg_id: &str,
    event: &str,
    body: &str,
    due: Timestamp,
    now: Timestamp,
) -> Result<Id> {
    value(
        c,
        ENQUEUE,
        &[
            &webhook,
            &msg_id,
            &event,
            &body,
            &now.as_second(),
            &due.as_millisecond(),
        ],
    )
    .await
}

/// The click writer's part, in its batch's transaction (see the contract's
/// `webhooks::queue_clicks`, which the synchronous side runs).
pub(crate) async fn queue_clicks<C: GenericClient + Sync>(
    c: &C,
    rows: &[VisitRow],
    homes: &HashMap<Id, LinkHome>,
    now: Timestamp,
) -> Result<()> {
    let clicked = WebhookEvent::Clicked.name();
    let owners: Vec<Id> = all(c, OWNERS_WANTING, &[&clicked], |r| col(r, 0)).await?;
    if owners.is_empty() {
        return Ok(());
    }
    let by_owner = clicks_by_owner(rows, |link| {
        homes
            .get(&link)
            .map(|h| h.owner)
            .filter(|o| owners.contains(o))
    });
    for (owner, items) in by_owner {
        for hook in wanting(c, owner, clicked).await? {
            let open: Option<(Id, String)> =
                one(c, OPEN_CLICKS, &[&hook], |r| Ok((col(r, 0)?, col(r, 1)?))).await?;
            let (extended, fresh) =
                click_bodies(open.as_ref().map(|(_, b)| b.as_str()), &items, now);
            if let (Some((id, _)), Some(body)) = (&open, extended) {
                execute(c, SET_BODY, &[id, &body]).await?;
            }
            let mut due = now + CLICK_WINDOW;
            for body in fresh {
                enqueue(c, hook, &new_msg_id(), clicked, &body, due, now).await?;
                due += CLICK_WINDOW;
            }
        }
    }
    Ok(())
}

impl<C: GenericClient + Sync> Webhooks for PgTx<'_, C> {
    fn insert_webhook(
        &self,
        owner: Id,
        url: &str,
        events: &[WebhookEvent],
        salt: &str,
        now: Timestamp,
    ) -> Result<Id> {
        self.wait(value(
            self.c,
            "INSERT INTO webhooks (owner_id, url, events, salt, created_at)
             VALUES ($1, $2, $3, $4, $5) RETURNING id",
            &[&owner, &url, &events_text(events), &salt, &now.as_second()],
        ))
    }

    fn webhook(&self, id: Id) -> Result<Option<Webhook>> {
        self.wait(one(
            self.c,
            &format!("SELECT {WEBHOOK_COLUMNS} FROM webhooks w WHERE w.id = $1"),
            &[&id],
            |r| webhook(&Cols(r)),
        ))
    }

    fn webhook_salt(&self, id: Id) -> Result<Option<String>> {
        self.wait(one(
            self.c,
            "SELECT salt FROM webhooks WHERE id = $1",
            &[&id],
            |r| col(r, 0),
        ))
    }

    fn webhooks(&self, owner: Option<Id>) -> Result<Vec<Webhook>> {
        self.wait(all(
            self.c,
            &format!(
                "SELECT {WEBHOOK_COLUMNS} FROM webhooks w
                 WHERE $1::bigint IS NULL OR w.owner_id = $1 ORDER BY w.id"
            ),
            &[&owner],
            |r| webhook(&Cols(r)),
        ))
    }

    fn delete_webhook(&self, id: Id) -> Result<bool> {
        self.wait(execute(
            self.c,
            "DELETE FROM webhook_deliveries WHERE webhook_id = $1",
            &[&id],
        ))?;
        Ok(self.wait(execute(
            self.c,
            "DELETE FROM webhooks WHERE id = $1",
            &[&id],
        ))? > 0)
    }

    fn set_webhook_stopped(&self, id: Id, stopped: Option<(&str, Timestamp)>) -> Result<bool> {
        let changed = match stopped {
            Some((reason, at)) => self.wait(execute(
                self.c,
                "UPDATE webhooks SET stopped_at = $2, stopped_reason = $3 WHERE id = $1",
                &[&id, &at.as_second(), &reason],
            ))?,
            None => self.wait(execute(
                self.c,
                "UPDATE webhooks SET stopped_at = NULL, stopped_reason = NULL, failures = 0,
                 failing_since = NULL WHERE id = $1",
                &[&id],
            ))?,
        };
        Ok(changed > 0)
    }

    fn set_webhook_salt(&self, id: Id, salt: &str) -> Result<bool> {
        Ok(self.wait(execute(
            self.c,
            "UPDATE webhooks SET salt = $2 WHERE id = $1",
            &[&id, &salt],
        ))? > 0)
    }

    fn note_attempt(&self, id: Id, ok: bool, now: Timestamp) -> Result<Option<Webhook>> {
        if ok {
            self.wait(execute(
                self.c,
                "UPDATE webhooks SET failures = 0, failing_since = NULL WHERE id = $1",
                &[&id],
            ))?;
        } else {
            self.wait(execute(
                self.c,
                "UPDATE webhooks SET failures = failures + 1,
                 failing_since = coalesce(failing_since, $2) WHERE id = $1",
                &[&id, &now.as_second()],
            ))?;
        }
        self.webhook(id)
    }

    fn webhooks_wanting(&self, owner: Id, event: WebhookEvent) -> Result<Vec<Id>> {
        self.wait(wanting(self.c, owner, event.name()))
    }

    fn enqueue(
        &self,
        webhook: Id,
        msg_id: &str,
        event: WebhookEvent,
        body: &str,
        due: Timestamp,
        now: Timestamp,
    ) -> Result<Id> {
        self.wait(enqueue(
            self.c,
            webhook,
            msg_id,
            event.name(),
            body,
            due,
            now,
        ))
    }

    fn open_clicks(&self, webhook: Id) -> Result<Option<(Id, String)>> {
        self.wait(one(self.c, OPEN_CLICKS, &[&webhook], |r| {
            Ok((col(r, 0)?, col(r, 1)?))
        }))
    }

    fn set_body(&self, delivery: Id, body: &str) -> Result<()> {
        self.wait(execute(self.c, SET_BODY, &[&delivery, &body]))?;
        Ok(())
    }

    fn claim(&self, now: Timestamp, until: Timestamp, limit: u32) -> Result<Vec<Claimed>> {
        self.wait(all(
            self.c,
            &format!(
                "UPDATE webhook_deliveries d SET claimed_until = $2, attempts = d.attempts + 1
                 FROM webhooks w
                 WHERE w.id = d.webhook_id AND d.id IN (
                     SELECT q.id FROM webhook_deliveries q JOIN webhooks h ON h.id = q.webhook_id
                     WHERE q.delivered_at IS NULL AND q.due_at <= $1
                     AND (q.claimed_until IS NULL OR q.claimed_until <= $1)
                     AND h.stopped_at IS NULL
                     ORDER BY q.due_at LIMIT $3
                     FOR UPDATE OF q SKIP LOCKED)
                 RETURNING {CLAIMED_COLUMNS}"
            ),
            &[
                &now.as_millisecond(),
                &until.as_millisecond(),
                &i64::from(limit),
            ],
            |r| claimed(&Cols(r)),
        ))
    }

    fn delivered(&self, id: Id, status: u16, now: Timestamp) -> Result<()> {
        self.wait(execute(
            self.c,
            "UPDATE webhook_deliveries SET delivered_at = $2, last_status = $3,
             claimed_until = NULL WHERE id = $1",
            &[&id, &now.as_second(), &i32::from(status)],
        ))?;
        Ok(())
    }

    fn retry_at(&self, id: Id, status: Option<u16>, error: &str, next: Timestamp) -> Result<()> {
        self.wait(execute(
            self.c,
            "UPDATE webhook_deliveries SET due_at = $2, last_status = $3, last_error = $4,
             claimed_until = NULL WHERE id = $1",
            &[&id, &next.as_millisecond(), &status.map(i32::from), &error],
        ))?;
        Ok(())
    }

    fn deliveries(&self, webhook: Id, limit: u32) -> Result<Vec<Delivery>> {
        self.wait(all(
            self.c,
            &format!(
                "SELECT {DELIVERY_COLUMNS} FROM webhook_deliveries
                 WHERE webhook_id = $1 ORDER BY id DESC LIMIT $2"
            ),
            &[&webhook, &i64::from(limit)],
            |r| delivery(&Cols(r)),
        ))
    }

    fn prune_deliveries(&self, before: Timestamp) -> Result<u64> {
        self.wait(execute(
            self.c,
            "DELETE FROM webhook_deliveries WHERE delivered_at < $1",
            &[&before.as_second()],
        ))
    }

    fn link_facts(&self, id: Id) -> Result<Option<(Id, LinkFacts)>> {
        self.wait(one(
            self.c,
            &format!("SELECT {LINK_FACT_COLUMNS} FROM links l WHERE l.id = $1"),
            &[&id],
            |r| link_facts(&Cols(r)),
        ))
    }

    fn owners_wanting(&self, event: WebhookEvent) -> Result<Vec<Id>> {
        self.wait(all(self.c, OWNERS_WANTING, &[&event.name()], |r| col(r, 0)))
    }

    fn mark_expired(&self, owner: Id, now: Timestamp, limit: u32) -> Result<Vec<Id>> {
        let now = now.as_second();
        self.wait(execute(
            self.c,
            concat!(
                "DELETE FROM webhook_expired WHERE link_id IN (
                     SELECT e.link_id FROM webhook_expired e LEFT JOIN links l ON l.id = e.link_id
                     WHERE l.id IS NULL OR (l.owner_id = $1 AND NOT coalesce(",
                expired_link!("l.", "$2"),
                ", false)))"
            ),
            &[&owner, &now],
        ))?;
        self.wait(all(
            self.c,
            concat!(
                "INSERT INTO webhook_expired (link_id) ",
                newly_expired!("$1", "$2", "$3"),
                " ON CONFLICT DO NOTHING RETURNING link_id"
            ),
            &[&owner, &now, &i64::from(limit)],
            |r| col(r, 0),
        ))
    }
}
