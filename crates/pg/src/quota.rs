//! Exact clicks of limited and rotating links on PostgreSQL: each click is reserved in the
//! link's narrow `click_quota` row (schema migration 3), shared by every server. The row's
//! `used` is the link's exact count and `position` its rotation position; `links.clicks` and
//! `links.last_rotation` follow them, brought up to date by the click writers' batches
//! (`visits::record`) and before a link leaves for the trash ([`settle`]).

use std::collections::{BTreeMap, HashMap};

use deadpool_postgres::{GenericClient, Object};

use crate::error::{pg_error, pool_error};
use crate::pool::Pg;
use crate::sql::{col, execute, rows};
use linkdeck_domain::{Id, Result};
use linkdeck_store::quota::{self, Asked, Granted, Reserved};

/// Statements in flight at once per process: one held up by a lock (a hot link's row, an edit)
/// does not hold up every other link's clicks.
const GROUPS_IN_FLIGHT: usize = 4;

/// Counts one click of link `id` unless its click limit is reached, moving its rotation
/// position on when it has `rotation` URLs; grouped with the clicks waiting beside it
/// (the contract's `quota`), each group one statement.
pub async fn reserve(pg: &Pg, id: Id, rotation: u32) -> Result<Reserved> {
    let start = |rx| {
        let (pool, target) = (pg.inner.pool.clone(), pg.inner.target.clone());
        tokio::spawn(quota::run(rx, GROUPS_IN_FLIGHT, move |asked| {
            let (pool, target) = (pool.clone(), target.clone());
            async move {
                let client = pool.get().await.map_err(|e| pool_error(e, &target))?;
                reserve_group(&client, &asked).await
            }
        }));
    };
    quota::reserve(&pg.inner.reservations, start, id, rotation).await
}

/// Reserves a group of clicks in one statement. Rows are locked in id order, so two servers'
/// groups never wait for each other in a circle; each admits as many clicks as its limit has
/// room for, and moves its rotation position on by as many.
async fn reserve_group(
    client: &Object,
    asked: &BTreeMap<Id, Asked>,
) -> Result<HashMap<Id, Granted>> {
    let ids: Vec<Id> = asked.keys().copied().collect();
    let counts: Vec<i64> = asked.values().map(|a| a.clicks).collect();
    let turns: Vec<i64> = asked.values().map(|a| a.turns).collect();
    let rows = rows(
        client,
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
        &[&ids, &counts, &turns],
    )
    .await?;
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

/// Brings the clicks and rotation position of the links among `ids` up to their quota rows'
/// (their rows locked by the caller): before they are copied somewhere else, such as the trash,
/// so the copy holds every reserved click.
pub async fn settle<C: GenericClient>(c: &C, ids: &[Id]) -> Result<()> {
    execute(c, &format!("{SETTLE} AND l.id = ANY($1)"), &[&ids]).await?;
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
