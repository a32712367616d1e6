//! Versioned migrations, applied in order inside one transaction each; `PRAGMA user_version`
//! records how far a database file has come.

use rusqlite::Connection;

use crate::search::upgrade;
use linkdeck_domain::{Error, Result};

/// One step of the schema: its SQL, then any work that needs code (inside the same transaction).
struct Migration {
    sql: &'static str,
    then: Option<fn(&Connection) -> Result<()>>,
}

const fn sql(sql: &'static str) -> Migration {
    Migration { sql, then: None }
}

/// Each entry moves the schema one version forward. Never edit a shipped entry: add one.
const MIGRATIONS: &[Migration] = &[
    // 1: owners, keys, domains, spaces, links, visits; counters kept by triggers so list totals
    // and space sizes never need a scan; a trigram full-text index for substring search.
    sql(r#"
    CREATE TABLE owners (
        id INTEGER PRIMARY KEY,
        name TEXT NOT NULL COLLATE NOCASE UNIQUE,
        timezone TEXT NOT NULL DEFAULT 'UTC',
        link_count INTEGER NOT NULL DEFAULT 0,
        created_at INTEGER NOT NULL
    );

    CREATE TABLE api_keys (
        id INTEGER PRIMARY KEY,
        owner_id INTEGER NOT NULL REFERENCES owners(id) ON DELETE CASCADE,
        name TEXT,
        prefix TEXT NOT NULL,
        digest BLOB NOT NULL UNIQUE,
        created_at INTEGER NOT NULL,
        last_used_at INTEGER,
        revoked_at INTEGER
    );
    CREATE INDEX api_keys_owner ON api_keys(owner_id);

    CREATE TABLE domains (
        id INTEGER PRIMARY KEY,
        owner_id INTEGER NOT NULL REFERENCES owners(id) ON DELETE CASCADE,
        name TEXT NOT NULL COLLATE NOCASE UNIQUE,
        host TEXT NOT NULL COLLATE NOCASE UNIQUE,
        created_at INTEGER NOT NULL,
        updated_at INTEGER NOT NULL
    );
    CREATE INDEX domains_owner ON domains(owner_id, id);

    CREATE TABLE spaces (
        id INTEGER PRIMARY KEY,
        owner_id INTEGER NOT NULL REFERENCES owners(id) ON DELETE CASCADE,
        name TEXT NOT NULL COLLATE NOCASE,
        color INTEGER NOT NULL CHECK (color BETWEEN 1 AND 6),
        link_count INTEGER NOT NULL DEFAULT 0,
        created_at INTEGER NOT NULL,
        updated_at INTEGER NOT NULL
    );
    CREATE UNIQUE INDEX spaces_owner_name ON spaces(owner_id, name);
    CREATE INDEX spaces_owner_id ON spaces(owner_id, id);

    CREATE TABLE links (
        id INTEGER PRIMARY KEY,
        owner_id INTEGER NOT NULL REFERENCES owners(id) ON DELETE CASCADE,
        domain_id INTEGER REFERENCES domains(id) ON DELETE RESTRICT,
        space_id INTEGER REFERENCES spaces(id) ON DELETE SET NULL,
        alias TEXT NOT NULL COLLATE NOCASE,
        url TEXT NOT NULL,
        title TEXT,
        password_hash TEXT,
        disabled INTEGER NOT NULL DEFAULT 0,
        public INTEGER NOT NULL DEFAULT 0,
        expiration_url TEXT,
        expiration_clicks INTEGER NOT NULL DEFAULT 0,
        ends_at INTEGER,
        clicks INTEGER NOT NULL DEFAULT 0,
        target_type INTEGER NOT NULL DEFAULT 0,
        geo_target TEXT,
        platform_target TEXT,
        rotation_target TEXT,
        last_rotation INTEGER NOT NULL DEFAULT 0,
        created_at INTEGER NOT NULL,
        updated_at INTEGER NOT NULL
    );
    -- One alias per domain, case-insensitively; links without a domain share domain 0.
    CREATE UNIQUE INDEX links_alias ON links(ifnull(domain_id, 0), alias);
    CREATE INDEX links_owner_id ON links(owner_id, id);
    CREATE INDEX links_owner_clicks ON links(owner_id, clicks, id);
    CREATE INDEX links_owner_space ON links(owner_id, space_id, id);
    CREATE INDEX links_owner_domain ON links(owner_id, domain_id, id);
    CREATE INDEX links_owner_ends ON links(owner_id, ends_at) WHERE ends_at IS NOT NULL;
    CREATE INDEX links_owner_disabled ON links(owner_id, id) WHERE disabled = 1;
    CREATE INDEX links_owner_click_expired ON links(owner_id, id)
        WHERE expiration_clicks > 0 AND clicks >= expiration_clicks;

    CREATE VIRTUAL TABLE links_fts USING fts5(
        title, alias, url,
        content = 'links', content_rowid = 'id', tokenize = 'trigram'
    );
    CREATE TRIGGER links_ai AFTER INSERT ON links BEGIN
        INSERT INTO links_fts(rowid, title, alias, url) VALUES (new.id, new.title, new.alias, new.url);
        UPDATE owners SET link_count = link_count + 1 WHERE id = new.owner_id;
        UPDATE spaces SET link_count = link_count + 1 WHERE id = new.space_id;
    END;
    CREATE TRIGGER links_ad AFTER DELETE ON links BEGIN
        INSERT INTO links_fts(links_fts, rowid, title, alias, url)
            VALUES ('delete', old.id, old.title, old.alias, old.url);
        UPDATE owners SET link_count = link_count - 1 WHERE id = old.owner_id;
        UPDATE spaces SET link_count = link_count - 1 WHERE id = old.space_id;
    END;
    CREATE TRIGGER links_au_text AFTER UPDATE OF title, alias, url ON links BEGIN
        INSERT INTO links_fts(links_fts, rowid, title, alias, url)
            VALUES ('delete', old.id, old.title, old.alias, old.url);
        INSERT INTO links_fts(rowid, title, alias, url) VALUES (new.id, new.title, new.alias, new.url);
    END;
    CREATE TRIGGER links_au_space AFTER UPDATE OF space_id ON links
        WHEN old.space_id IS NOT new.space_id BEGIN
        UPDATE spaces SET link_count = link_count - 1 WHERE id = old.space_id;
        UPDATE spaces SET link_count = link_count + 1 WHERE id = new.space_id;
    END;

    CREATE TABLE visits (
        id INTEGER PRIMARY KEY,
        link_id INTEGER NOT NULL REFERENCES links(id) ON DELETE CASCADE,
        at INTEGER NOT NULL,
        country TEXT,
        platform TEXT,
        browser TEXT,
        referrer TEXT,
        language TEXT
    );
    CREATE INDEX visits_link_at ON visits(link_id, at);
    "#),
    // 2: partial indexes keyed by expiry, so the totals of the status filters are index range
    // counts (inclusion-exclusion over small sets) instead of scans of every link.
    sql(r#"
    -- The rule's columns ride along so the counts never read the table.
    CREATE INDEX links_owner_click_expired_ends
        ON links(owner_id, ends_at, expiration_clicks, clicks)
        WHERE expiration_clicks > 0 AND clicks >= expiration_clicks;
    CREATE INDEX links_owner_inactive_ends
        ON links(owner_id, ends_at, disabled, expiration_clicks, clicks)
        WHERE disabled = 1 OR (expiration_clicks > 0 AND clicks >= expiration_clicks);
    "#),
    // 3: the full-text index without its per-row column sizes, which only ranking functions
    // read (lists have their own sorts): a fifth less work per imported link. The triggers
    // name the table, so they keep working once it is back.
    sql(r#"
    DROP TABLE links_fts;
    CREATE VIRTUAL TABLE links_fts USING fts5(
        title, alias, url,
        content = 'links', content_rowid = 'id', tokenize = 'trigram', columnsize = 0
    );
    INSERT INTO links_fts(links_fts, rank) VALUES ('automerge', 8);
    INSERT INTO links_fts(links_fts) VALUES ('rebuild');
    "#),
    // 4: the short-term index (`search/short.rs`): for each owner, field and pair of characters,
    // the ids of the links containing it; built here for the links already stored. Link counters
    // leave the triggers.
    Migration {
        sql: r#"
    CREATE TABLE link_grams (
        owner_id INTEGER NOT NULL REFERENCES owners(id) ON DELETE CASCADE,
        field INTEGER NOT NULL,
        gram TEXT NOT NULL,
        block INTEGER NOT NULL,
        ids BLOB NOT NULL,
        PRIMARY KEY (owner_id, field, gram, block)
    );
    CREATE TABLE link_grams_upto (upto INTEGER NOT NULL);
    INSERT INTO link_grams_upto VALUES (0);

    -- The link counters of owners and spaces move to the store's writes (`store::links`), which
    -- keep them in bulk for imports: one update per owner and space instead of two per link.
    -- The triggers keep only the full-text index.
    DROP TRIGGER links_ai;
    DROP TRIGGER links_ad;
    DROP TRIGGER links_au_space;
    CREATE TRIGGER links_ai AFTER INSERT ON links BEGIN
        INSERT INTO links_fts(rowid, title, alias, url) VALUES (new.id, new.title, new.alias, new.url);
    END;
    CREATE TRIGGER links_ad AFTER DELETE ON links BEGIN
        INSERT INTO links_fts(links_fts, rowid, title, alias, url)
            VALUES ('delete', old.id, old.title, old.alias, old.url);
    END;
    "#,
        then: Some(upgrade::short_term_index),
    },
    // 5: the trash (`trash.rs`). A deleted link or space moves here whole — its own id,
    // clicks and dates — grouped by the delete it went with, and comes back from here. The
    // visits of a trashed link stay in `visits`, waiting for it: the move runs with reference
    // actions off, so they are not cascaded away (a purge deletes them). A trashed space
    // remembers which links it held, to take them back.
    sql(r#"
    CREATE TABLE trash_batches (
        id INTEGER PRIMARY KEY,
        owner_id INTEGER NOT NULL REFERENCES owners(id) ON DELETE CASCADE,
        deleted_at INTEGER NOT NULL
    );
    CREATE INDEX trash_batches_owner ON trash_batches(owner_id, deleted_at);
    CREATE INDEX trash_batches_at ON trash_batches(deleted_at);
    CREATE TABLE trash_links (
        id INTEGER PRIMARY KEY,
        batch INTEGER NOT NULL REFERENCES trash_batches(id) ON DELETE CASCADE,
        owner_id INTEGER NOT NULL,
        domain_id INTEGER,
        space_id INTEGER,
        alias TEXT NOT NULL,
        url TEXT NOT NULL,
        title TEXT,
        password_hash TEXT,
        disabled INTEGER NOT NULL,
        public INTEGER NOT NULL,
        expiration_url TEXT,
        expiration_clicks INTEGER NOT NULL,
        ends_at INTEGER,
        clicks INTEGER NOT NULL,
        target_type INTEGER NOT NULL,
        geo_target TEXT,
        platform_target TEXT,
        rotation_target TEXT,
        last_rotation INTEGER NOT NULL,
        created_at INTEGER NOT NULL,
        updated_at INTEGER NOT NULL
    );
    CREATE INDEX trash_links_batch ON trash_links(batch);
    CREATE INDEX trash_links_owner ON trash_links(owner_id, id);
    CREATE TABLE trash_spaces (
        id INTEGER PRIMARY KEY,
        batch INTEGER NOT NULL REFERENCES trash_batches(id) ON DELETE CASCADE,
        owner_id INTEGER NOT NULL,
        name TEXT NOT NULL,
        color INTEGER NOT NULL,
        created_at INTEGER NOT NULL,
        updated_at INTEGER NOT NULL,
        -- The ids of the links it held, as a serialized roaring bitmap.
        members BLOB NOT NULL
    );
    CREATE INDEX trash_spaces_batch ON trash_spaces(batch);
    CREATE INDEX trash_spaces_owner ON trash_spaces(owner_id, id);
    "#),
    // 6: traffic rollups (`traffic/`): one row per link and UTC day, and per day for each
    // owner, space and domain, built here from the visits already stored. The visits become a
    // raw log without the per-link index every visit paid for (`visit_log.rs`), and every
    // value in it is bounded (old rows kept referrers whole).
    Migration {
        sql: r#"
    CREATE TABLE traffic_values (
        id INTEGER PRIMARY KEY,
        dimension INTEGER NOT NULL,
        value TEXT NOT NULL,
        UNIQUE (dimension, value)
    );
    CREATE TABLE link_traffic (
        owner_id INTEGER NOT NULL,
        day INTEGER NOT NULL,
        link_id INTEGER NOT NULL,
        clicks INTEGER NOT NULL,
        data BLOB NOT NULL,
        PRIMARY KEY (owner_id, day, link_id)
    ) WITHOUT ROWID;
    -- scope: 1 owner, 2 space, 3 domain.
    CREATE TABLE scope_traffic (
        scope INTEGER NOT NULL,
        scope_id INTEGER NOT NULL,
        day INTEGER NOT NULL,
        clicks INTEGER NOT NULL,
        data BLOB NOT NULL,
        PRIMARY KEY (scope, scope_id, day)
    ) WITHOUT ROWID;
    CREATE TABLE visit_log (
        id INTEGER PRIMARY KEY,
        link_id INTEGER NOT NULL,
        at INTEGER NOT NULL,
        country TEXT,
        platform TEXT,
        browser TEXT,
        referrer TEXT,
        language TEXT
    );
    -- Logged visits of deleted links, up to row `upto`, waiting for the pruner.
    CREATE TABLE visit_log_purge (
        link_id INTEGER PRIMARY KEY,
        upto INTEGER NOT NULL
    );
    "#,
        then: Some(rollups_from_visits),
    },
    // 7: link ids are never given out twice: the highest id a deleted link had is remembered, and
    // new links take ids above it and above every stored one (`links::next_id`). SQLite
    // alone would hand the newest link's id to the next link once it is deleted. A link put
    // back with its own id (from a trash) can still have it: that id is free, and only new ids
    // are chosen above the mark.
    sql(r#"
    CREATE TABLE link_ids (deleted_high INTEGER NOT NULL);
    INSERT INTO link_ids SELECT ifnull((SELECT max(id) FROM trash_links), 0);
    CREATE TRIGGER links_ad_id AFTER DELETE ON links WHEN old.id > (SELECT deleted_high FROM link_ids)
    BEGIN
        UPDATE link_ids SET deleted_high = old.id;
    END;
    "#),
    // 8: the short-term index (`search/short.rs`) kept in step by the database itself. A link
    // written after the index took it in (an edit of its texts or owner, a delete, a restore
    // under its old id), by whatever path, is noted here with the texts the index holds for it
    // (the first note wins: the index has not changed since); searches read such links as they
    // are now, and a later write folds the notes into the index.
    sql(r#"
    CREATE TABLE link_grams_stale (
        id INTEGER PRIMARY KEY,
        -- NULL: the index holds nothing for this id.
        owner_id INTEGER,
        title TEXT,
        alias TEXT,
        url TEXT
    );
    CREATE TRIGGER link_grams_au AFTER UPDATE OF owner_id, title, alias, url ON links
        WHEN old.id <= (SELECT upto FROM link_grams_upto)
    BEGIN
        INSERT OR IGNORE INTO link_grams_stale VALUES
            (old.id, old.owner_id, old.title, old.alias, old.url);
    END;
    CREATE TRIGGER link_grams_ad AFTER DELETE ON links
        WHEN old.id <= (SELECT upto FROM link_grams_upto)
    BEGIN
        INSERT OR IGNORE INTO link_grams_stale VALUES
            (old.id, old.owner_id, old.title, old.alias, old.url);
    END;
    CREATE TRIGGER link_grams_ai AFTER INSERT ON links
        WHEN new.id <= (SELECT upto FROM link_grams_upto)
    BEGIN
        INSERT OR IGNORE INTO link_grams_stale (id) VALUES (new.id);
    END;
    "#),
    // 9: the facts large searches are filtered and sorted by (`search/facts.rs`): each
    // link's clicks, disabled flag and whether its click limit is reached, as a snapshot by
    // block of ids, built here for the links already stored. A link whose facts change after the
    // snapshot took it in (by any statement), or that comes back under an id it covers, is noted
    // with its facts as they are now; a later write folds the notes in.
    Migration {
        sql: r#"
    CREATE TABLE link_facts (
        block INTEGER PRIMARY KEY,
        data BLOB NOT NULL
    );
    CREATE TABLE link_facts_upto (upto INTEGER NOT NULL);
    INSERT INTO link_facts_upto VALUES (0);
    CREATE TABLE link_facts_new (
        id INTEGER PRIMARY KEY,
        clicks INTEGER NOT NULL,
        disabled INTEGER NOT NULL,
        limit_reached INTEGER NOT NULL
    );
    -- No watermark test here: the click writer fires this for every link it counts, and a note
    -- of a link the snapshot does not cover yet is merely early.
    CREATE TRIGGER link_facts_au AFTER UPDATE OF clicks, disabled, expiration_clicks ON links
    BEGIN
        INSERT OR REPLACE INTO link_facts_new VALUES (new.id, new.clicks, new.disabled = 1,
            new.expiration_clicks > 0 AND new.clicks >= new.expiration_clicks);
    END;
    CREATE TRIGGER link_facts_ai AFTER INSERT ON links
        WHEN new.id <= (SELECT upto FROM link_facts_upto)
    BEGIN
        INSERT OR REPLACE INTO link_facts_new VALUES (new.id, new.clicks, new.disabled = 1,
            new.expiration_clicks > 0 AND new.clicks >= new.expiration_clicks);
    END;
    "#,
        then: Some(upgrade::facts),
    },
    // 10: one full-text index per searched field instead of one for all three. A search names
    // its field, and in the shared index a term's postings held every field's matches, each
    // read and its positions walked to keep the field's: `und` in 14 % of a million URLs read
    // 194,000 postings to keep 109,000. On its own the field's postings are all it reads, with
    // no positions to look at; writing three indexes costs what writing one did. An edit
    // rewrites only the fields it changed.
    sql(r#"
    DROP TRIGGER links_ai;
    DROP TRIGGER links_ad;
    DROP TRIGGER links_au_text;
    DROP TABLE links_fts;
    CREATE VIRTUAL TABLE links_title_fts USING fts5(
        title, content = 'links', content_rowid = 'id', tokenize = 'trigram', columnsize = 0
    );
    CREATE VIRTUAL TABLE links_alias_fts USING fts5(
        alias, content = 'links', content_rowid = 'id', tokenize = 'trigram', columnsize = 0
    );
    CREATE VIRTUAL TABLE links_url_fts USING fts5(
        url, content = 'links', content_rowid = 'id', tokenize = 'trigram', columnsize = 0
    );
    INSERT INTO links_title_fts(links_title_fts, rank) VALUES ('automerge', 8);
    INSERT INTO links_alias_fts(links_alias_fts, rank) VALUES ('automerge', 8);
    INSERT INTO links_url_fts(links_url_fts, rank) VALUES ('automerge', 8);
    INSERT INTO links_title_fts(links_title_fts) VALUES ('rebuild');
    INSERT INTO links_alias_fts(links_alias_fts) VALUES ('rebuild');
    INSERT INTO links_url_fts(links_url_fts) VALUES ('rebuild');
    CREATE TRIGGER links_fts_ai AFTER INSERT ON links BEGIN
        INSERT INTO links_title_fts(rowid, title) VALUES (new.id, new.title);
        INSERT INTO links_alias_fts(rowid, alias) VALUES (new.id, new.alias);
        INSERT INTO links_url_fts(rowid, url) VALUES (new.id, new.url);
    END;
    CREATE TRIGGER links_fts_ad AFTER DELETE ON links BEGIN
        INSERT INTO links_title_fts(links_title_fts, rowid, title) VALUES ('delete', old.id, old.title);
        INSERT INTO links_alias_fts(links_alias_fts, rowid, alias) VALUES ('delete', old.id, old.alias);
        INSERT INTO links_url_fts(links_url_fts, rowid, url) VALUES ('delete', old.id, old.url);
    END;
    CREATE TRIGGER links_fts_au_title AFTER UPDATE OF title ON links
        WHEN old.title IS NOT new.title BEGIN
        INSERT INTO links_title_fts(links_title_fts, rowid, title) VALUES ('delete', old.id, old.title);
        INSERT INTO links_title_fts(rowid, title) VALUES (new.id, new.title);
    END;
    CREATE TRIGGER links_fts_au_alias AFTER UPDATE OF alias ON links
        WHEN old.alias IS NOT new.alias BEGIN
        INSERT INTO links_alias_fts(links_alias_fts, rowid, alias) VALUES ('delete', old.id, old.alias);
        INSERT INTO links_alias_fts(rowid, alias) VALUES (new.id, new.alias);
    END;
    CREATE TRIGGER links_fts_au_url AFTER UPDATE OF url ON links
        WHEN old.url IS NOT new.url BEGIN
        INSERT INTO links_url_fts(links_url_fts, rowid, url) VALUES ('delete', old.id, old.url);
        INSERT INTO links_url_fts(rowid, url) VALUES (new.id, new.url);
    END;
    "#),
    // 11: the short-term index (`search/short.rs`) answers terms of three characters too,
    // from rows of triples: rebuilt here for the links already stored.
    Migration {
        sql: r#"
    DELETE FROM link_grams;
    DELETE FROM link_grams_stale;
    UPDATE link_grams_upto SET upto = 0;
    "#,
        then: Some(upgrade::short_term_index),
    },
    // 12: common longer terms (`search/short/common.rs`): the terms of four characters or
    // more that many links contain are kept in the short-term index too; which ones, and at
    // how many links they were last chosen. Chosen here from the links already stored.
    Migration {
        sql: r#"
    CREATE TABLE link_common_grams (
        field INTEGER NOT NULL,
        gram TEXT NOT NULL,
        PRIMARY KEY (field, gram)
    ) WITHOUT ROWID;
    ALTER TABLE link_grams_upto ADD COLUMN common_at INTEGER NOT NULL DEFAULT 0;
    "#,
        then: Some(upgrade::common_terms),
    },
    // 13: keys that may only read, and keys that expire (`keys create --read-only --expires`).
    sql(r#"
    ALTER TABLE api_keys ADD COLUMN read_only INTEGER NOT NULL DEFAULT 0;
    ALTER TABLE api_keys ADD COLUMN expires_at INTEGER;
    "#),
    // 14: the visitor's address, or its network, where `[serve] visitor_addresses` keeps it.
    sql(r#"
    ALTER TABLE visit_log ADD COLUMN address TEXT;
    "#),
    // 15: the targeting rule that sent each logged visit.
    sql(r#"
    ALTER TABLE visit_log ADD COLUMN rule TEXT;
    "#),
    // 16: tags. A link's are a JSON list in its own row (and in the trash's), and `link_tags`
    // indexes them by owner and tag for filters and counts, kept from that column by triggers.
    sql(r#"
    ALTER TABLE links ADD COLUMN tags TEXT;
    ALTER TABLE trash_links ADD COLUMN tags TEXT;
    CREATE TABLE link_tags (
        owner_id INTEGER NOT NULL,
        tag TEXT NOT NULL,
        link_id INTEGER NOT NULL,
        PRIMARY KEY (owner_id, tag, link_id)
    ) WITHOUT ROWID;
    CREATE INDEX link_tags_link ON link_tags(link_id);
    CREATE TRIGGER link_tags_ai AFTER INSERT ON links WHEN new.tags IS NOT NULL BEGIN
        INSERT OR IGNORE INTO link_tags (owner_id, tag, link_id)
            SELECT new.owner_id, value, new.id FROM json_each(new.tags);
    END;
    CREATE TRIGGER link_tags_ad AFTER DELETE ON links WHEN old.tags IS NOT NULL BEGIN
        DELETE FROM link_tags WHERE link_id = old.id;
    END;
    CREATE TRIGGER link_tags_au AFTER UPDATE OF tags, owner_id ON links
        WHEN old.tags IS NOT new.tags OR old.owner_id IS NOT new.owner_id BEGIN
        DELETE FROM link_tags WHERE link_id = old.id;
        INSERT OR IGNORE INTO link_tags (owner_id, tag, link_id)
            SELECT new.owner_id, value, new.id FROM json_each(new.tags);
    END;
    "#),
    // 17: where a domain sends a visitor no link takes (its root, an unknown alias, a disabled
    // or expired link without its own expiration URL), and its robots.txt: 0 disallow, 1
    // allow, 2 custom (the text in robots_txt).
    sql(r#"
    ALTER TABLE domains ADD COLUMN root_url TEXT;
    ALTER TABLE domains ADD COLUMN unknown_url TEXT;
    ALTER TABLE domains ADD COLUMN expired_url TEXT;
    ALTER TABLE domains ADD COLUMN robots INTEGER NOT NULL DEFAULT 0 CHECK (robots IN (0, 1, 2));
    ALTER TABLE domains ADD COLUMN robots_txt TEXT;
    "#),
    // 18: each tag's links as bitmaps for tag filters (`search/tag_sets.rs`), a block of
    // 65,536 ids a row, kept from `link_tags` by the notes its triggers write.
    Migration {
        sql: r#"
    CREATE TABLE tag_sets (
        owner_id INTEGER NOT NULL,
        tag TEXT NOT NULL,
        block INTEGER NOT NULL,
        ids BLOB NOT NULL,
        PRIMARY KEY (owner_id, tag, block)
    ) WITHOUT ROWID;
    CREATE TABLE tag_set_notes (
        owner_id INTEGER NOT NULL,
        tag TEXT NOT NULL,
        link_id INTEGER NOT NULL,
        PRIMARY KEY (owner_id, tag, link_id)
    ) WITHOUT ROWID;
    CREATE TRIGGER tag_set_notes_ai AFTER INSERT ON link_tags BEGIN
        INSERT OR IGNORE INTO tag_set_notes (owner_id, tag, link_id)
            VALUES (new.owner_id, new.tag, new.link_id);
    END;
    CREATE TRIGGER tag_set_notes_ad AFTER DELETE ON link_tags BEGIN
        INSERT OR IGNORE INTO tag_set_notes (owner_id, tag, link_id)
            VALUES (old.owner_id, old.tag, old.link_id);
    END;
    "#,
        then: Some(upgrade::tag_sets),
    },
    // 19: webhooks. Subscriptions keep the input their secret is derived from, never the
    // secret; deliveries are the outbox, written in the transaction of the change they tell
    // of (`due_at` and `claimed_until` in milliseconds); `webhook_expired` marks links whose
    // expiry was told.
    sql(r#"
    CREATE TABLE webhooks (
        id INTEGER PRIMARY KEY,
        owner_id INTEGER NOT NULL REFERENCES owners(id) ON DELETE CASCADE,
        url TEXT NOT NULL,
        events TEXT NOT NULL,
        salt TEXT NOT NULL,
        created_at INTEGER NOT NULL,
        failures INTEGER NOT NULL DEFAULT 0,
        failing_since INTEGER,
        stopped_at INTEGER,
        stopped_reason TEXT
    );
    CREATE INDEX webhooks_owner ON webhooks(owner_id);
    CREATE TABLE webhook_deliveries (
        id INTEGER PRIMARY KEY,
        webhook_id INTEGER NOT NULL REFERENCES webhooks(id) ON DELETE CASCADE,
        msg_id TEXT NOT NULL UNIQUE,
        event TEXT NOT NULL,
        body TEXT NOT NULL,
        created_at INTEGER NOT NULL,
        due_at INTEGER NOT NULL,
        attempts INTEGER NOT NULL DEFAULT 0,
        claimed_until INTEGER,
        delivered_at INTEGER,
        last_status INTEGER,
        last_error TEXT
    );
    CREATE INDEX webhook_deliveries_due ON webhook_deliveries(due_at)
        WHERE delivered_at IS NULL;
    CREATE INDEX webhook_deliveries_hook ON webhook_deliveries(webhook_id, id);
    CREATE TABLE webhook_expired (link_id INTEGER PRIMARY KEY);
    "#),
    // 20: a link's options (forwarding the visitor's query and path, indexing, its preview
    // card) as one JSON object, NULL for the defaults: read together on every redirect and
    // never filtered by. And its previews, counted apart from clicks by the click writer.
    sql(r#"
    ALTER TABLE links ADD COLUMN options TEXT;
    ALTER TABLE links ADD COLUMN previews INTEGER NOT NULL DEFAULT 0;
    ALTER TABLE trash_links ADD COLUMN options TEXT;
    ALTER TABLE trash_links ADD COLUMN previews INTEGER NOT NULL DEFAULT 0;
    "#),
    // 21: the spaces a key is limited to, as the ids joined by commas; NULL for the whole
    // account. Kept as written when a space goes, so a key never sees more than it was given.
    sql("ALTER TABLE api_keys ADD COLUMN spaces TEXT;"),
    // 22: orphan visits (requests no link answered), per host — a domain's id, 0 for the
    // server's own host — UTC day, dimension and value; a domain's rows go with it.
    sql(r#"
    CREATE TABLE orphan_traffic (
        host_id INTEGER NOT NULL,
        day INTEGER NOT NULL,
        dim INTEGER NOT NULL,
        value TEXT NOT NULL,
        visits INTEGER NOT NULL,
        PRIMARY KEY (host_id, day, dim, value)
    ) WITHOUT ROWID;
    CREATE TRIGGER orphan_traffic_domain_gone AFTER DELETE ON domains BEGIN
        DELETE FROM orphan_traffic WHERE host_id = old.id;
    END;
    "#),
    // 23: each space's links and the links in no space as bitmaps for space filters
    // (`search/place_sets.rs`), keyed by the space's id or 0, a block of 65,536 ids a row:
    // links above `space_sets_upto` are taken in by the next write's settle, and the triggers
    // note each link at or below it that joins or leaves a place. Not `INSERT OR IGNORE`: a
    // space's deletion moves its links by a foreign key action, whose statements put their own
    // conflict rule over a trigger's.
    Migration {
        sql: r#"
    CREATE TABLE space_sets (
        owner_id INTEGER NOT NULL,
        space INTEGER NOT NULL,
        block INTEGER NOT NULL,
        ids BLOB NOT NULL,
        PRIMARY KEY (owner_id, space, block)
    ) WITHOUT ROWID;
    CREATE TABLE space_sets_upto (upto INTEGER NOT NULL);
    INSERT INTO space_sets_upto VALUES (0);
    CREATE TABLE space_set_notes (
        owner_id INTEGER NOT NULL,
        space INTEGER NOT NULL,
        link_id INTEGER NOT NULL,
        PRIMARY KEY (owner_id, space, link_id)
    ) WITHOUT ROWID;
    CREATE TRIGGER space_set_notes_ai AFTER INSERT ON links
        WHEN new.id <= (SELECT upto FROM space_sets_upto) BEGIN
        INSERT INTO space_set_notes (owner_id, space, link_id)
            SELECT new.owner_id, ifnull(new.space_id, 0), new.id WHERE NOT EXISTS (
                SELECT 1 FROM space_set_notes WHERE owner_id = new.owner_id
                   AND space = ifnull(new.space_id, 0) AND link_id = new.id);
    END;
    CREATE TRIGGER space_set_notes_ad AFTER DELETE ON links
        WHEN old.id <= (SELECT upto FROM space_sets_upto) BEGIN
        INSERT INTO space_set_notes (owner_id, space, link_id)
            SELECT old.owner_id, ifnull(old.space_id, 0), old.id WHERE NOT EXISTS (
                SELECT 1 FROM space_set_notes WHERE owner_id = old.owner_id
                   AND space = ifnull(old.space_id, 0) AND link_id = old.id);
    END;
    CREATE TRIGGER space_set_notes_au AFTER UPDATE OF space_id, owner_id ON links
        WHEN (old.space_id IS NOT new.space_id OR old.owner_id IS NOT new.owner_id)
         AND old.id <= (SELECT upto FROM space_sets_upto) BEGIN
        INSERT INTO space_set_notes (owner_id, space, link_id)
            SELECT old.owner_id, ifnull(old.space_id, 0), old.id WHERE NOT EXISTS (
                SELECT 1 FROM space_set_notes WHERE owner_id = old.owner_id
                   AND space = ifnull(old.space_id, 0) AND link_id = old.id);
        INSERT INTO space_set_notes (owner_id, space, link_id)
            SELECT new.owner_id, ifnull(new.space_id, 0), new.id WHERE NOT EXISTS (
                SELECT 1 FROM space_set_notes WHERE owner_id = new.owner_id
                   AND space = ifnull(new.space_id, 0) AND link_id = new.id);
    END;
    "#,
        then: Some(upgrade::space_sets),
    },
    // 24: the same for domains (`search/place_sets.rs`): each domain's links and those on the
    // default domain (key 0), so a list on a domain holding most links reads a few rows.
    Migration {
        sql: r#"
    CREATE TABLE domain_sets (
        owner_id INTEGER NOT NULL,
        domain INTEGER NOT NULL,
        block INTEGER NOT NULL,
        ids BLOB NOT NULL,
        PRIMARY KEY (owner_id, domain, block)
    ) WITHOUT ROWID;
    CREATE TABLE domain_sets_upto (upto INTEGER NOT NULL);
    INSERT INTO domain_sets_upto VALUES (0);
    CREATE TABLE domain_set_notes (
        owner_id INTEGER NOT NULL,
        domain INTEGER NOT NULL,
        link_id INTEGER NOT NULL,
        PRIMARY KEY (owner_id, domain, link_id)
    ) WITHOUT ROWID;
    CREATE TRIGGER domain_set_notes_ai AFTER INSERT ON links
        WHEN new.id <= (SELECT upto FROM domain_sets_upto) BEGIN
        INSERT INTO domain_set_notes (owner_id, domain, link_id)
            SELECT new.owner_id, ifnull(new.domain_id, 0), new.id WHERE NOT EXISTS (
                SELECT 1 FROM domain_set_notes WHERE owner_id = new.owner_id
                   AND domain = ifnull(new.domain_id, 0) AND link_id = new.id);
    END;
    CREATE TRIGGER domain_set_notes_ad AFTER DELETE ON links
        WHEN old.id <= (SELECT upto FROM domain_sets_upto) BEGIN
        INSERT INTO domain_set_notes (owner_id, domain, link_id)
            SELECT old.owner_id, ifnull(old.domain_id, 0), old.id WHERE NOT EXISTS (
                SELECT 1 FROM domain_set_notes WHERE owner_id = old.owner_id
                   AND domain = ifnull(old.domain_id, 0) AND link_id = old.id);
    END;
    CREATE TRIGGER domain_set_notes_au AFTER UPDATE OF domain_id, owner_id ON links
        WHEN (old.domain_id IS NOT new.domain_id OR old.owner_id IS NOT new.owner_id)
         AND old.id <= (SELECT upto FROM domain_sets_upto) BEGIN
        INSERT INTO domain_set_notes (owner_id, domain, link_id)
            SELECT old.owner_id, ifnull(old.domain_id, 0), old.id WHERE NOT EXISTS (
                SELECT 1 FROM domain_set_notes WHERE owner_id = old.owner_id
                   AND domain = ifnull(old.domain_id, 0) AND link_id = old.id);
        INSERT INTO domain_set_notes (owner_id, domain, link_id)
            SELECT new.owner_id, ifnull(new.domain_id, 0), new.id WHERE NOT EXISTS (
                SELECT 1 FROM domain_set_notes WHERE owner_id = new.owner_id
                   AND domain = ifnull(new.domain_id, 0) AND link_id = new.id);
    END;
    "#,
        then: Some(upgrade::domain_sets),
    },
];

/// The code half of migration 6: rollups and the raw log from the old visits table, which then
/// goes.
fn rollups_from_visits(conn: &Connection) -> Result<()> {
    crate::visits::roll_up_old_visits(conn)?;
    conn.execute_batch("DROP TABLE visits;")
        .map_err(crate::error::db_error)
}

/// An empty database in memory, its connection set up as the service's are: for the tests of
/// what keeps the search indexes.
#[cfg(test)]
pub fn in_memory() -> Connection {
    let mut conn = Connection::open_in_memory().expect("a database in memory");
    rusqlite::vtab::array::load_module(&conn).expect("the array module");
    migrate(&mut conn).expect("the schema");
    conn
}

/// The schema version this build writes.
pub const SCHEMA_VERSION: i64 = MIGRATIONS.len() as i64;

/// Brings `conn` up to [`SCHEMA_VERSION`]. A database written by a newer linkdeck is refused
/// rather than guessed at.
pub fn migrate(conn: &mut Connection) -> Result<()> {
    migrate_to(conn, SCHEMA_VERSION)
}

/// The file's schema version, when this build can work with it: from 0 (a new file) to
/// [`SCHEMA_VERSION`]. A newer one was written by a newer linkdeck; a negative one by something
/// else entirely. Either is refused before anything is changed.
pub fn check_version(current: i64) -> Result<i64> {
    if current > SCHEMA_VERSION {
        return Err(Error::Unavailable(format!(
            "the database was written by a newer linkdeck \
             (schema {current}, this build knows {SCHEMA_VERSION})"
        )));
    }
    if current < 0 {
        return Err(Error::Unavailable(format!(
            "the database is not a linkdeck database (schema {current})"
        )));
    }
    Ok(current)
}

/// Brings `conn` up to schema `target` (at most [`SCHEMA_VERSION`]).
fn migrate_to(conn: &mut Connection, target: i64) -> Result<()> {
    let current = check_version(
        conn.query_row("PRAGMA user_version", [], |r| r.get(0))
            .map_err(crate::error::db_error)?,
    )?;
    for (i, step) in MIGRATIONS
        .iter()
        .enumerate()
        .take(target as usize)
        .skip(current as usize)
    {
        let tx = conn
            .transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)
            .map_err(crate::error::db_error)?;
        // Another process may have migrated while we waited for the write lock.
        let now: i64 = tx
            .query_row("PRAGMA user_version", [], |r| r.get(0))
            .map_err(crate::error::db_error)?;
        if now > i as i64 {
            continue;
        }
        let started = std::time::Instant::now();
        tx.execute_batch(step.sql).map_err(crate::error::db_error)?;
        if let Some(then) = step.then {
            then(&tx)?;
        }
        tx.pragma_update(None, "user_version", (i + 1) as i64)
            .map_err(crate::error::db_error)?;
        tx.commit().map_err(crate::error::db_error)?;
        // A step that rebuilds an index takes seconds on a large file: the log says where the
        // first start after an upgrade went (new files are not worth a line).
        if current > 0 {
            tracing::info!(
                schema = i + 1,
                ms = started.elapsed().as_millis() as u64,
                "database schema upgraded"
            );
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use linkdeck_domain::SearchBy;

    /// How many links the full-text index of `field` finds `term` in.
    fn matches(conn: &Connection, field: &str, term: &str) -> i64 {
        let table = format!("links_{field}_fts");
        conn.query_row(
            &format!("SELECT count(*) FROM {table} WHERE {table} MATCH ?1"),
            [format!("\"{term}\"")],
            |r| r.get(0),
        )
        .unwrap()
    }

    #[test]
    fn links_written_before_an_upgrade_are_still_found_after_it() {
        let mut conn = Connection::open_in_memory().unwrap();
        migrate_to(&mut conn, 2).unwrap();
        conn.execute_batch(
            "INSERT INTO owners (id, name, created_at) VALUES (1, 'me', 0);
             INSERT INTO links (owner_id, alias, url, title, created_at, updated_at)
                 VALUES (1, 'spring', 'https://shop.example/sale', 'shop.example/sale', 0, 0);",
        )
        .unwrap();
        migrate(&mut conn).unwrap();
        let version: i64 = conn
            .query_row("PRAGMA user_version", [], |r| r.get(0))
            .unwrap();
        assert_eq!(version, SCHEMA_VERSION);
        assert_eq!(matches(&conn, "url", "sale"), 1);
        assert_eq!(matches(&conn, "alias", "pri"), 1);
        // The short-term index was built for it, and its counter is still right.
        let upto: i64 = conn
            .query_row("SELECT upto FROM link_grams_upto", [], |r| r.get(0))
            .unwrap();
        assert_eq!(upto, 1, "indexed, not waiting");
        let found =
            crate::search::inside::short_term_matching(&conn, 1, SearchBy::Alias, "pr").unwrap();
        assert_eq!(found.iter().collect::<Vec<_>>(), vec![1]);
        assert_eq!(
            crate::search::inside::short_term_matching(&conn, 1, SearchBy::Url, "w")
                .unwrap()
                .len(),
            0
        );
        let count: i64 = conn
            .query_row("SELECT link_count FROM owners WHERE id = 1", [], |r| {
                r.get(0)
            })
            .unwrap();
        assert_eq!(count, 1);
        // The triggers still keep the rebuilt index: an edit moves the link's text.
        conn.execute(
            "UPDATE links SET url = 'https://shop.example/winter' WHERE id = 1",
            [],
        )
        .unwrap();
        assert_eq!(matches(&conn, "url", "sale"), 0);
        assert_eq!(matches(&conn, "url", "winter"), 1);
        // Each field has its own index: the others are untouched by the edit, and a term is
        // found only in the field it is in.
        assert_eq!(matches(&conn, "alias", "pri"), 1);
        assert_eq!(matches(&conn, "title", "sale"), 1);
        assert_eq!(matches(&conn, "title", "winter"), 0);
        conn.execute("UPDATE links SET title = 'Winter' WHERE id = 1", [])
            .unwrap();
        assert_eq!(matches(&conn, "title", "sale"), 0);
        assert_eq!(matches(&conn, "title", "winter"), 1);
        conn.execute("DELETE FROM links WHERE id = 1", []).unwrap();
        for (field, term) in [("title", "winter"), ("alias", "pri"), ("url", "winter")] {
            assert_eq!(matches(&conn, field, term), 0, "{field} after the delete");
        }
        let sizes: i64 = conn
            .query_row(
                "SELECT count(*) FROM sqlite_master WHERE name LIKE 'links_%_fts_docsize'",
                [],
                |r| r.get(0),
            )
            .unwrap();
        assert_eq!(sizes, 0, "no per-row sizes are kept");
    }

    #[test]
    fn an_upgrade_builds_rollups_from_the_visits_and_bounds_what_they_kept() {
        use crate::traffic::{self, Scope, day};
        let mut conn = Connection::open_in_memory().unwrap();
        migrate_to(&mut conn, 4).unwrap();
        conn.execute_batch(
            "INSERT INTO owners (id, name, created_at) VALUES (1, 'me', 0);
             INSERT INTO spaces (id, owner_id, name, color, created_at, updated_at)
                 VALUES (1, 1, 'Launch', 2, 0, 0);
             INSERT INTO links (id, owner_id, space_id, alias, url, title, clicks, \
                 created_at, updated_at)
                 VALUES (1, 1, 1, 'a', 'https://a.example', 'a.example', 3, 0, 0),
                        (2, 1, NULL, 'b', 'https://b.example', 'b.example', 1, 0, 0);",
        )
        .unwrap();
        let huge = "x".repeat(400 * 1024);
        // 2026-03-08 06:59 and 07:00 UTC, and a day later.
        for (link, at, referrer) in [
            (1, 1_772_953_140, "t.co".to_owned()),
            (1, 1_772_953_200, huge.clone()),
            (1, 1_773_039_600, "t.co".to_owned()),
            (2, 1_773_039_600, huge),
        ] {
            conn.execute(
                "INSERT INTO visits (link_id, at, country, platform, referrer, language)
                 VALUES (?1, ?2, 'DE', 'iOS', ?3, 'de')",
                rusqlite::params![link, at, referrer],
            )
            .unwrap();
        }
        migrate(&mut conn).unwrap();
        let tables: i64 = conn
            .query_row(
                "SELECT count(*) FROM sqlite_master WHERE name = 'visits'",
                [],
                |r| r.get(0),
            )
            .unwrap();
        assert_eq!(tables, 0, "the old table is gone");
        let longest: i64 = conn
            .query_row("SELECT max(length(referrer)) FROM visit_log", [], |r| {
                r.get(0)
            })
            .unwrap();
        assert_eq!(longest, 5, "\"other\" and \"t.co\" only");
        let logged: i64 = conn
            .query_row("SELECT count(*) FROM visit_log", [], |r| r.get(0))
            .unwrap();
        assert_eq!(logged, 4);
        let mut days = Vec::new();
        traffic::link_days(&conn, 1, 1, 0, i64::MAX, |d| {
            days.push((d.day, d.clicks, day::hours(d.data).unwrap()[6]));
            Ok(())
        })
        .unwrap();
        let first = traffic::day_of(1_772_953_140);
        assert_eq!(days, [(first, 2, 1), (first + 1, 1, 0)]);
        let sum = |scope, id| {
            let mut n = 0;
            traffic::scope_days(&conn, scope, id, 0, i64::MAX, |d| {
                n += d.clicks;
                Ok(())
            })
            .unwrap();
            n
        };
        assert_eq!((sum(Scope::Owner, 1), sum(Scope::Space, 1)), (4, 3));
        let referrers: Vec<String> = conn
            .prepare("SELECT value FROM traffic_values WHERE dimension = 3 ORDER BY value")
            .unwrap()
            .query_map([], |r| r.get(0))
            .unwrap()
            .collect::<rusqlite::Result<_>>()
            .unwrap();
        assert_eq!(referrers, ["t.co"], "\"other\" needs no row");
    }
}
