//! Exact clicks of limited and rotating links on PostgreSQL: each click is reserved in the
//! link's narrow `click_quota` row (schema migration 3), shared by every server. The row's
//! `used` is the link's exact count and `position` its rotation position; `links.clicks` and
//! `links.last_rotation` follow them, brought up to date by the click writers' batches
//! (`visits::record`) and before a link leaves for the trash ([`settle`]).

use deadpool_postgres::GenericClient;

use super::{Pg, pg_error};
use crate::domain::{Id, Result};

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

/// Counts one click of link `id` unless its click limit is reached, moving its rotation
/// position on when it has `rotation` URLs.
pub async fn reserve(pg: &Pg, id: Id, rotation: u32) -> Result<Reserved> {
    let client = pg.client().await?;
    // One statement on one small row, so the row lock it takes is held no longer than the
    // statement: the limit holds across every server, and no server waits long for another.
    let stmt = client
        .prepare_cached(
            "UPDATE click_quota SET used = used + 1,
                 position = CASE WHEN $2::bigint > 0 THEN (position % $2 + 1) % $2
                                 ELSE position END
             WHERE link_id = $1 AND (cap = 0 OR used < cap)
             RETURNING used, position",
        )
        .await
        .map_err(pg_error)?;
    let row = client
        .query_opt(&stmt, &[&id, &i64::from(rotation)])
        .await
        .map_err(pg_error)?;
    if let Some(r) = row {
        let clicks: i64 = r.get(0);
        let position: i64 = r.get(1);
        return Ok(Reserved::Counted {
            clicks: clicks.max(0) as u64,
            next: position.clamp(0, i64::from(u32::MAX)) as u32,
        });
    }
    // Refused, or no row to reserve in: only a refusal reaches here often, and only once per
    // server and link (the server remembers the limit is reached).
    let held = client
        .query_opt("SELECT 1 FROM click_quota WHERE link_id = $1", &[&id])
        .await
        .map_err(pg_error)?;
    Ok(if held.is_some() {
        Reserved::Refused
    } else {
        Reserved::NoQuota
    })
}

/// Brings the clicks and rotation position of the links among `ids` up to their quota rows'
/// (their rows locked by the caller): before they are copied somewhere else, such as the trash,
/// so the copy holds every reserved click.
pub async fn settle<C: GenericClient>(c: &C, ids: &[Id]) -> Result<()> {
    c.execute(
        "UPDATE links l SET clicks = GREATEST(l.clicks, q.used), last_rotation = q.position
         FROM click_quota q
         WHERE q.link_id = l.id AND l.id = ANY($1)
           AND (l.clicks < q.used OR l.last_rotation <> q.position)",
        &[&ids],
    )
    .await
    .map_err(pg_error)?;
    Ok(())
}

/// Gives every link with a click limit or a rotation its quota row, as migration 3 did: for a
/// links table filled while its triggers were set aside (`db copy`).
pub const FILL: &str = "
    INSERT INTO click_quota (link_id, cap, used, position)
        SELECT id, expiration_clicks, clicks, last_rotation FROM links
        WHERE expiration_clicks > 0 OR target_type = 3
        ON CONFLICT (link_id) DO NOTHING;
";
