//! SQL for tags: the owner's tags and their links, read from `link_tags`, which the triggers of
//! schema migration 16 keep from each link's `tags` column.

use linkdeck_store::{Tags, parse_tags, tags_json};
use rusqlite::{Connection, params};

use crate::sql::Statements;
use crate::tx::SqliteTx;
use linkdeck_domain::{Id, Result, TagCount};

/// The ids of `owner`'s links carrying `tag`, in id order, read from the index alone.
pub fn link_ids(conn: &Connection, owner: Id, tag: &str) -> Result<Vec<u64>> {
    conn.all(
        "SELECT link_id FROM link_tags WHERE owner_id = ?1 AND tag = ?2 ORDER BY link_id",
        params![owner, tag],
        |r| r.get::<_, i64>(0).map(|id| id as u64),
    )
}

impl Tags for SqliteTx<'_> {
    fn tags(&self, owner: Id) -> Result<Vec<TagCount>> {
        self.conn.all(
            "SELECT tag, count(*) FROM link_tags WHERE owner_id = ?1 GROUP BY tag ORDER BY tag",
            [owner],
            |r| {
                Ok(TagCount {
                    name: r.get(0)?,
                    links: r.get::<_, i64>(1)?.max(0) as u64,
                })
            },
        )
    }

    fn tagged(&self, owner: Id, tag: &str) -> Result<Vec<(Id, Vec<String>)>> {
        self.conn.all(
            "SELECT l.id, l.tags FROM link_tags t JOIN links l ON l.id = t.link_id \
             WHERE t.owner_id = ?1 AND t.tag = ?2 ORDER BY l.id",
            params![owner, tag],
            |r| Ok((r.get(0)?, parse_tags(r.get(1)?))),
        )
    }

    fn set_tags(&self, id: Id, tags: &[String]) -> Result<()> {
        self.conn.run(
            "UPDATE links SET tags = ?2 WHERE id = ?1",
            params![id, tags_json(tags)],
        )?;
        Ok(())
    }
}
