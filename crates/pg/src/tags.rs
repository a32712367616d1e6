//! SQL for tags on PostgreSQL: the owner's tags and their links, read from `link_tags`, which
//! the triggers of migration 8 keep from each link's `tags` column.

use deadpool_postgres::GenericClient;

use linkdeck_store::{Tags, parse_tags, tags_json};

use crate::sql::{all, col, count, execute};
use crate::tx::PgTx;
use linkdeck_domain::{Id, Result, TagCount};

impl<C: GenericClient + Sync> Tags for PgTx<'_, C> {
    fn tags(&self, owner: Id) -> Result<Vec<TagCount>> {
        self.wait(all(
            self.c,
            "SELECT tag, count(*) FROM link_tags WHERE owner_id = $1 GROUP BY tag ORDER BY tag",
            &[&owner],
            |r| {
                Ok(TagCount {
                    name: col(r, 0)?,
                    links: count(col(r, 1)?),
                })
            },
        ))
    }

    fn tagged(&self, owner: Id, tag: &str) -> Result<Vec<(Id, Vec<String>)>> {
        self.wait(all(
            self.c,
            "SELECT l.id, l.tags FROM link_tags t JOIN links l ON l.id = t.link_id \
             WHERE t.owner_id = $1 AND t.tag = $2 ORDER BY l.id FOR UPDATE OF l",
            &[&owner, &tag],
            |r| Ok((col(r, 0)?, parse_tags(col(r, 1)?))),
        ))
    }

    fn set_tags(&self, id: Id, tags: &[String]) -> Result<()> {
        self.wait(execute(
            self.c,
            "UPDATE links SET tags = $2 WHERE id = $1",
            &[&id, &tags_json(tags)],
        ))?;
        Ok(())
    }
}
