//! Exact clicks of limited and rotating links on PostgreSQL: each click is reserved in the
//! link's narrow `click_quota` row (schema migration 3), shared by every server. The row's
//! `used` is the link's exact count and `position` its rotation position; `links.clicks` and
//! `links.last_rotation` follow them, brought up to date by the click writers' batches
//! (`visits::record`) and before a link leaves for the trash ([`settle`]).

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use deadpool_postgres::{GenericClient, Object, Pool};
use tokio::sync::{Semaphore, mpsc, oneshot};

use super::{Pg, PgTarget, col, pg_error, pool_error};
use crate::domain::{Error, Id, Result};

/// What a reservation found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reserved {
    /// Counted: the link's clicks after this one and the saved rotation position (the next
    /// visit's).
    Counted { clicks: u64, next: u32 },
    /// The link's click limit is reached.
    Refused,
    /// The database holds no quota for the link: it has neither a click limit nor a rotation
    /// any more (the caller's copy is older than an edit), or it is gone. Its click is counted
    /// as any other link's is.
    NoQuota,
}

/// Requests taken into one statement at most.
const GROUP_MAX: usize = 512;
/// Statements in flight at once per process: one held up by a lock (a hot link's row, an edit)
/// does not hold up every other link's clicks.
const GROUPS_IN_FLIGHT: usize = 4;

/// One click waiting for its reservation.
pub(super) struct Request {
    id: Id,
    rotation: u32,
    answer: oneshot::Sender<Result<Reserved>>,
}

/// Counts one click of link `id` unless its click limit is reached, moving its rotation
/// position on when it has `rotation` URLs.
///
/// The clicks that arrive while earlier ones are being reserved are reserved together, in one
/// statement: each link's row is updated once by the clicks it admits, in the order they came.
/// A click waits for at most one statement before its own, and under load the cost of a
/// statement and its commit is shared by many clicks.
pub async fn reserve(pg: &Pg, id: Id, rotation: u32) -> Result<Reserved> {
    let (answer, answered) = oneshot::channel();
    let queue = pg.inner.reservations.get_or_init(|| {
        let (tx, rx) = mpsc::unbounded_channel();
        tokio::spawn(run(pg.inner.pool.clone(), pg.inner.target.clone(), rx));
        tx
    });
    let request = Request {
        id,
        rotation,
        answer,
    };
    if queue.send(request).is_err() {
        return Err(Error::Unavailable("the click reserver has stopped".into()));
    }
    answered
        .await
        .map_err(|_| Error::Unavailable("the click reserver has stopped".into()))?
}

/// Takes requests as they come and reserves them in groups; ends when the last handle of the
/// database is dropped.
async fn run(pool: Pool, target: PgTarget, mut queue: mpsc::UnboundedReceiver<Request>) {
    let slots = Arc::new(Semaphore::new(GROUPS_IN_FLIGHT));
    loop {
        let Ok(slot) = slots.clone().acquire_owned().await else {
            return;
        };
        let mut group = Vec::new();
        if queue.recv_many(&mut group, GROUP_MAX).await == 0 {
            return;
        }
        let (pool, target) = (pool.clone(), target.clone());
        tokio::spawn(async move {
            let outcome = match pool.get().await {
                Ok(client) => reserve_group(&client, &group).await,
                Err(e) => Err(pool_error(e, &target)),
            };
            answer(group, outcome);
            drop(slot);
        });
    }
}

/// What one link's row said for a group: its clicks and position before, and how many of the
/// group's clicks it admitted.
#[derive(Debug, Clone, Copy)]
struct Granted {
    used: i64,
    position: i64,
    turns: i64,
    granted: i64,
}

/// Reserves a group of clicks in one statement. Rows are locked in id order, so two servers'
/// groups never wait for each other in a circle; each admits as many clicks as its limit has
/// room for, and moves its rotation position on by as many.
async fn reserve_group(client: &Object, group: &[Request]) -> Result<HashMap<Id, Granted>> {
    // Per link: its clicks asked and its rotation's URLs (as the first click of it says).
    let mut asked: BTreeMap<Id, (i64, i64)> = BTreeMap::new();
    for r in group {
        asked.entry(r.id).or_insert((0, i64::from(r.rotation))).0 += 1;
    }
    let ids: Vec<Id> = asked.keys().copied().collect();
    let counts: Vec<i64> = asked.values().map(|a| a.0).collect();
    let turns: Vec<i64> = asked.values().map(|a| a.1).collect();
    let stmt = client
        .prepare_cached(
            "WITH held AS MATERIALIZED (
                 SELECT link_id, cap, used, position FROM click_quota
                 WHERE link_id = ANY($1) ORDER BY link_id FOR UPDATE
             ), granted AS (
                 SELECT h.link_id, h.used, h.position, w.turns,
                        CASE WHEN h.cap = 0 THEN w.n
                             ELSE LEAST(w.n, GREATEST(h.cap - h.used, 0)) END AS granted
                 FROM held h
                 JOIN unnest($1::bigint[], $2::bigint[], $3::bigint[]) AS w(id, n, turns)
                   ON w.id = h.link_id
             ), moved AS (
                 UPDATE click_quota q SET
                     used = g.used + g.granted,
                     position = CASE WHEN g.turns > 0
                                     THEN (g.position % g.turns + g.granted) % g.turns
                                     ELSE g.position END
                 FROM granted g
                 WHERE q.link_id = g.link_id AND g.granted > 0
             )
             SELECT link_id, used, position, turns, granted FROM granted",
        )
        .await
        .map_err(pg_error)?;
    let rows = client
        .query(&stmt, &[&ids, &counts, &turns])
        .await
        .map_err(pg_error)?;
    let mut out = HashMap::with_capacity(rows.len());
    for r in rows {
        out.insert(
            col(&r, 0)?,
            Granted {
                used: col(&r, 1)?,
                position: col(&r, 2)?,
                turns: col(&r, 3)?,
                granted: col(&r, 4)?,
            },
        );
    }
    Ok(out)
}

/// Tells each click of the group what its link's row decided, in the order the clicks came.
fn answer(group: Vec<Request>, outcome: Result<HashMap<Id, Granted>>) {
    let mut rows = match outcome {
        Ok(rows) => rows,
        Err(e) => {
            for r in group {
                let _ = r.answer.send(Err(e.clone()));
            }
            return;
        }
    };
    for r in group {
        let reserved = match rows.get_mut(&r.id) {
            None => Reserved::NoQuota,
            Some(g) if g.granted <= 0 => Reserved::Refused,
            Some(g) => {
                g.used += 1;
                g.granted -= 1;
                g.position = if g.turns > 0 {
                    (g.position % g.turns + 1) % g.turns
                } else {
                    g.position
                };
                Reserved::Counted {
                    clicks: g.used.max(0) as u64,
                    next: g.position.clamp(0, i64::from(u32::MAX)) as u32,
                }
            }
        };
        let _ = r.answer.send(Ok(reserved));
    }
}

/// Brings the clicks and rotation position of the links among `ids` up to their quota rows'
/// (their rows locked by the caller): before they are copied somewhere else, such as the trash,
/// so the copy holds every reserved click.
pub async fn settle<C: GenericClient>(c: &C, ids: &[Id]) -> Result<()> {
    c.execute(&format!("{SETTLE} AND l.id = ANY($1)"), &[&ids])
        .await
        .map_err(pg_error)?;
    Ok(())
}

/// [`settle`] for every link with a quota row: clicks a server reserved and then could not
/// write into the link (it was killed) show in lists again, and a copy of the database holds
/// them. Never backwards, so it is safe while other servers run.
pub async fn settle_all(pg: &Pg) -> Result<()> {
    let client = pg.client().await?;
    client.execute(SETTLE, &[]).await.map_err(pg_error)?;
    Ok(())
}

const SETTLE: &str = "UPDATE links l SET clicks = GREATEST(l.clicks, q.used), \
     last_rotation = q.position FROM click_quota q \
     WHERE q.link_id = l.id AND (l.clicks < q.used OR l.last_rotation <> q.position)";

/// Gives every link with a click limit or a rotation its quota row, as migration 3 did: for a
/// links table filled while its triggers were set aside (`db copy`).
pub const FILL: &str = "
    INSERT INTO click_quota (link_id, cap, used, position)
        SELECT id, expiration_clicks, clicks, last_rotation FROM links
        WHERE expiration_clicks > 0 OR target_type = 3
        ON CONFLICT (link_id) DO NOTHING;
";
