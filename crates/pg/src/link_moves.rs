//! Moving an owner's links as a whole, for bulk work and the trash alike: their rows locked in
//! id order before anything else of theirs ([`lock`]), into a trash batch ([`move_links`]), and
//! their share of the owner's, spaces' and domains' traffic following them ([`SpaceMoves`],
//! [`withdraw`], [`reinstate`]).

use std::collections::BTreeMap;

use deadpool_postgres::GenericClient;
use linkdeck_domain::{Id, Result};
use linkdeck_store::bulk::{Change, Earlier, Value};
use linkdeck_store::sql::LINK_COLUMNS;
use linkdeck_store::traffic::{LinkHome, Shift};

use crate::sql::{all, col, rows};
use crate::{quota, traffic};

/// Locks the owner's links among `ids` (ascending) in id order, as the click writer does, before
/// a bulk change writes them: a work of many chunks takes all its links' rows first and only
/// then their traffic rows (see [`SpaceMoves`]), so it never waits for a writer that waits for it.
pub async fn lock<C: GenericClient>(c: &C, owner: Id, ids: &[Id]) -> Result<()> {
    rows(
        c,
        "SELECT id FROM links WHERE owner_id = $1 AND id = ANY($2) ORDER BY id FOR UPDATE",
        &[&owner, &ids],
    )
    .await?;
    Ok(())
}

/// The links a bulk work moved between spaces, gathered over its chunks: where each was first
/// and where it is now. Their traffic follows them once, when the work is done.
#[derive(Debug, Default)]
pub struct SpaceMoves(BTreeMap<Id, (Option<Id>, Option<Id>)>);

impl SpaceMoves {
    /// Notes what a bulk update (`bulk::update`) changed, if `changes` set a space.
    pub fn note(&mut self, changes: &[Change], changed: &[Earlier]) {
        let Some(at) = changes.iter().position(|(c, _)| *c == "space_id") else {
            return;
        };
        let space = |v: &Value| match v {
            Value::Integer(id) => Some(*id),
            _ => None,
        };
        let to = space(&changes[at].1);
        for (id, earlier) in changed {
            let from = earlier.get(at).and_then(space);
            self.0.entry(*id).or_insert((from, to)).1 = to;
        }
    }

    /// Moves the links' traffic from the spaces they were in to the ones they are in.
    pub async fn apply<C: GenericClient>(self, c: &C, owner: Id) -> Result<()> {
        let moves: Vec<(Id, Shift)> = self
            .0
            .into_iter()
            .map(|(id, (from, to))| (id, Shift::Move { from, to }))
            .collect();
        traffic::shift(c, owner, &moves).await
    }
}

/// Moves the owner's links among `ids` (ascending) into trash `batch`, whole, their rows locked
/// in id order first. Returns each moved link with where its traffic counted, for [`withdraw`].
pub async fn move_links<C: GenericClient>(
    c: &C,
    owner: Id,
    ids: &[Id],
    batch: Id,
) -> Result<Vec<(Id, LinkHome)>> {
    lock(c, owner, ids).await?;
    // Clicks reserved in quota rows that no batch has carried into the links yet go with them.
    quota::settle(c, ids).await?;
    all(
        c,
        &format!(
            "WITH gone AS (DELETE FROM links WHERE owner_id = $1 AND id = ANY($2) \
             RETURNING {LINK_COLUMNS}), \
             kept AS (INSERT INTO trash_links (batch, {LINK_COLUMNS}) \
             SELECT $3, {LINK_COLUMNS} FROM gone) \
             SELECT id, space_id, domain_id FROM gone ORDER BY id"
        ),
        &[&owner, &ids, &batch],
        |r| home_of(r, owner),
    )
    .await
}

/// A link's id and home from columns `id, space_id, domain_id`.
pub fn home_of(r: &tokio_postgres::Row, owner: Id) -> Result<(Id, LinkHome)> {
    Ok((
        col(r, 0)?,
        LinkHome {
            owner,
            space: col(r, 1)?,
            domain: col(r, 2)?,
        },
    ))
}

/// Takes the share of trashed links out of their owner's, space's and domain's traffic, keeping
/// their own (see `store::traffic::withdraw`). Called once the links' rows are locked (moved).
pub async fn withdraw<C: GenericClient>(c: &C, owner: Id, homes: &[(Id, LinkHome)]) -> Result<()> {
    shift_homes(c, owner, homes, Shift::Withdraw).await
}

/// Gives restored links' share back to the rows of where they are now.
pub async fn reinstate<C: GenericClient>(c: &C, owner: Id, homes: &[(Id, LinkHome)]) -> Result<()> {
    shift_homes(c, owner, homes, Shift::Reinstate).await
}

async fn shift_homes<C: GenericClient>(
    c: &C,
    owner: Id,
    homes: &[(Id, LinkHome)],
    shift: fn(LinkHome) -> Shift,
) -> Result<()> {
    let shifts: Vec<(Id, Shift)> = homes.iter().map(|(id, home)| (*id, shift(*home))).collect();
    traffic::shift(c, owner, &shifts).await
}
