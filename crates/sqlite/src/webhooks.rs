//! SQL for webhooks: subscriptions and their outbox. One `serve` writes a file at a time
//! (`serve_lock.rs`), so a claim is the due rows marked in the writer's transaction.

use jiff::Timestamp;
use linkdeck_domain::{Id, Result, WebhookEvent, events_text};
use linkdeck_store::webhooks::{
    CLAIMED_COLUMNS, Claimed, DELIVERY_COLUMNS, Delivery, LINK_FACT_COLUMNS, LinkFacts,
    WEBHOOK_COLUMNS, Webhook, Webhooks, claimed, delivery, link_facts, webhook,
};
use linkdeck_store::{expired_link, newly_expired};
use rusqlite::params;

use crate::sql::{Cols, Statements};
use crate::tx::SqliteTx;

impl Webhooks for SqliteTx<'_> {
    fn insert_webhook(
        &self,
        owner: Id,
        url: &str,
        events: &[WebhookEvent],
        salt: &str,
        now: Timestamp,
    ) -> Result<Id> {
        self.conn.run(
            "INSERT INTO webhooks (owner_id, url, events, salt, created_at)
             VALUES (?1, ?2, ?3, ?4, ?5)",
            params![owner, url, events_text(events), salt, now.as_second()],
        )?;
        Ok(self.conn.last_insert_rowid())
    }

    fn webhook(&self, id: Id) -> Result<Option<Webhook>> {
        self.conn.one(
            &format!("SELECT {WEBHOOK_COLUMNS} FROM webhooks w WHERE w.id = ?1"),
            [id],
            |r| webhook(&Cols(r)),
        )
    }

    fn webhook_salt(&self, id: Id) -> Result<Option<String>> {
        self.conn
            .one("SELECT salt FROM webhooks WHERE id = ?1", [id], |r| {
                r.get(0)
            })
    }

    fn webhooks(&self, owner: Option<Id>) -> Result<Vec<Webhook>> {
        self.conn.all(
            &format!(
                "SELECT {WEBHOOK_COLUMNS} FROM webhooks w
                 WHERE ?1 IS NULL OR w.owner_id = ?1 ORDER BY w.id"
            ),
            [owner],
            |r| webhook(&Cols(r)),
        )
    }

    fn delete_webhook(&self, id: Id) -> Result<bool> {
        self.conn
            .run("DELETE FROM webhook_deliveries WHERE webhook_id = ?1", [id])?;
        Ok(self.conn.run("DELETE FROM webhooks WHERE id = ?1", [id])? > 0)
    }

    fn set_webhook_stopped(&self, id: Id, stopped: Option<(&str, Timestamp)>) -> Result<bool> {
        let changed = match stopped {
            Some((reason, at)) => self.conn.run(
                "UPDATE webhooks SET stopped_at = ?2, stopped_reason = ?3 WHERE id = ?1",
                params![id, at.as_second(), reason],
            )?,
            None => self.conn.run(
                "UPDATE webhooks SET stopped_at = NULL, stopped_reason = NULL, failures = 0,
                 failing_since = NULL WHERE id = ?1",
                [id],
            )?,
        };
        Ok(changed > 0)
    }

    fn set_webhook_salt(&self, id: Id, salt: &str) -> Result<bool> {
        Ok(self.conn.run(
            "UPDATE webhooks SET salt = ?2 WHERE id = ?1",
            params![id, salt],
        )? > 0)
    }

    fn note_attempt(&self, id: Id, ok: bool, now: Timestamp) -> Result<Option<Webhook>> {
        if ok {
            self.conn.run(
                "UPDATE webhooks SET failures = 0, failing_since = NULL WHERE id = ?1",
                [id],
            )?;
        } else {
            self.conn.run(
                "UPDATE webhooks SET failures = failures + 1,
                 failing_since = ifnull(failing_since, ?2) WHERE id = ?1",
                params![id, now.as_second()],
            )?;
        }
        self.webhook(id)
    }

    fn webhooks_wanting(&self, owner: Id, event: WebhookEvent) -> Result<Vec<Id>> {
        self.conn.all(
            "SELECT id FROM webhooks WHERE owner_id = ?1 AND stopped_at IS NULL
             AND (' ' || events || ' ') LIKE ('% ' || ?2 || ' %') ORDER BY id",
            params![owner, event.name()],
            |r| r.get(0),
        )
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
        self.conn.run(
            "INSERT INTO webhook_deliveries (webhook_id, msg_id, event, body, created_at, due_at)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
            params![
                webhook,
                msg_id,
                event.name(),
                body,
                now.as_second(),
                due.as_millisecond()
            ],
        )?;
        Ok(self.conn.last_insert_rowid())
    }

    fn open_clicks(&self, webhook: Id) -> Result<Option<(Id, String)>> {
        self.conn.one(
            "SELECT id, body FROM webhook_deliveries
             WHERE webhook_id = ?1 AND event = 'link.clicked' AND attempts = 0
             AND delivered_at IS NULL AND claimed_until IS NULL
             ORDER BY id DESC LIMIT 1",
            [webhook],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
    }

    fn set_body(&self, delivery: Id, body: &str) -> Result<()> {
        self.conn.run(
            "UPDATE webhook_deliveries SET body = ?2 WHERE id = ?1",
            params![delivery, body],
        )?;
        Ok(())
    }

    fn claim(&self, now: Timestamp, until: Timestamp, limit: u32) -> Result<Vec<Claimed>> {
        let due: Vec<Id> = self.conn.all(
            "SELECT d.id FROM webhook_deliveries d JOIN webhooks w ON w.id = d.webhook_id
             WHERE d.delivered_at IS NULL AND d.due_at <= ?1
             AND (d.claimed_until IS NULL OR d.claimed_until <= ?1)
             AND w.stopped_at IS NULL
             ORDER BY d.due_at LIMIT ?2",
            params![now.as_millisecond(), limit],
            |r| r.get(0),
        )?;
        let mut out = Vec::with_capacity(due.len());
        for id in due {
            self.conn.run(
                "UPDATE webhook_deliveries SET claimed_until = ?2, attempts = attempts + 1
                 WHERE id = ?1",
                params![id, until.as_millisecond()],
            )?;
            out.extend(self.conn.one(
                &format!(
                    "SELECT {CLAIMED_COLUMNS} FROM webhook_deliveries d
                     JOIN webhooks w ON w.id = d.webhook_id WHERE d.id = ?1"
                ),
                [id],
                |r| claimed(&Cols(r)),
            )?);
        }
        Ok(out)
    }

    fn delivered(&self, id: Id, status: u16, now: Timestamp) -> Result<()> {
        self.conn.run(
            "UPDATE webhook_deliveries SET delivered_at = ?2, last_status = ?3,
             claimed_until = NULL WHERE id = ?1",
            params![id, now.as_second(), status],
        )?;
        Ok(())
    }

    fn retry_at(&self, id: Id, status: Option<u16>, error: &str, next: Timestamp) -> Result<()> {
        self.conn.run(
            "UPDATE webhook_deliveries SET due_at = ?2, last_status = ?3, last_error = ?4,
             claimed_until = NULL WHERE id = ?1",
            params![id, next.as_millisecond(), status, error],
        )?;
        Ok(())
    }

    fn deliveries(&self, webhook: Id, limit: u32) -> Result<Vec<Delivery>> {
        self.conn.all(
            &format!(
                "SELECT {DELIVERY_COLUMNS} FROM webhook_deliveries
                 WHERE webhook_id = ?1 ORDER BY id DESC LIMIT ?2"
            ),
            params![webhook, limit],
            |r| delivery(&Cols(r)),
        )
    }

    fn prune_deliveries(&self, before: Timestamp) -> Result<u64> {
        Ok(self.conn.run(
            "DELETE FROM webhook_deliveries WHERE delivered_at < ?1",
            [before.as_second()],
        )? as u64)
    }

    fn link_facts(&self, id: Id) -> Result<Option<(Id, LinkFacts)>> {
        self.conn.one(
            &format!("SELECT {LINK_FACT_COLUMNS} FROM links l WHERE l.id = ?1"),
            [id],
            |r| link_facts(&Cols(r)),
        )
    }

    fn owners_wanting(&self, event: WebhookEvent) -> Result<Vec<Id>> {
        self.conn.all(
            "SELECT DISTINCT owner_id FROM webhooks WHERE stopped_at IS NULL
             AND (' ' || events || ' ') LIKE ('% ' || ?1 || ' %') ORDER BY owner_id",
            [event.name()],
            |r| r.get(0),
        )
    }

    fn mark_expired(&self, owner: Id, now: Timestamp, limit: u32) -> Result<Vec<Id>> {
        let now = now.as_second();
        self.conn.run(
            concat!(
                // From the marks (few) to their links, not the owner's links to the marks.
                "DELETE FROM webhook_expired WHERE link_id IN (
                     SELECT e.link_id FROM webhook_expired e LEFT JOIN links l ON l.id = e.link_id
                     WHERE l.id IS NULL OR (l.owner_id = ?1 AND NOT ifnull(",
                expired_link!("l.", "?2"),
                ", 0)))"
            ),
            params![owner, now],
        )?;
        self.conn.all(
            concat!(
                "INSERT INTO webhook_expired (link_id) ",
                newly_expired!("?1", "?2", "?3"),
                " RETURNING link_id"
            ),
            params![owner, now, limit],
            |r| r.get(0),
        )
    }
}
