//! What a whole-database copy moves: every table both stores hold, in an order that puts each
//! row after the rows it refers to, with each column's kind. Derived state that only one store
//! has (SQLite's full-text and short-term search indexes, PostgreSQL's sequences) is rebuilt by
//! the target, not copied. Each store reads and writes these rows in its own way
//! (`Store::copy_out`, `Store::copy_in`), joined by a bounded channel of [`Batch`]es.

/// How a column is held. Integers are 64-bit in SQLite; PostgreSQL has three widths and real
/// booleans, so the kind says which one a value is written as there.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Big,
    Int,
    Small,
    Bool,
    Text,
    Bytes,
}

/// One table: its name and columns, in the order they are read and written.
#[derive(Debug)]
pub struct Table {
    pub name: &'static str,
    pub columns: &'static [(&'static str, Kind)],
    /// The key rows are read in, so a copy is the same whichever store it comes from.
    pub order: &'static str,
    /// The table has an identity column `id` whose next value the target must move past.
    pub identity: bool,
}

impl Table {
    pub fn column_list(&self) -> String {
        self.columns
            .iter()
            .map(|(name, _)| *name)
            .collect::<Vec<_>>()
            .join(", ")
    }
}

use Kind::{Big, Bool, Bytes, Int, Small, Text};

/// A link's columns after its id (and, in the trash, its batch).
macro_rules! link_columns {
    ($($first:expr),*) => {
        &[
            $($first,)*
            ("owner_id", Big),
            ("domain_id", Big),
            ("space_id", Big),
            ("alias", Text),
            ("url", Text),
            ("title", Text),
            ("password_hash", Text),
            ("disabled", Bool),
            ("public", Bool),
            ("expiration_url", Text),
            ("expiration_clicks", Big),
            ("ends_at", Big),
            ("clicks", Big),
            ("target_type", Small),
            ("geo_target", Text),
            ("platform_target", Text),
            ("rotation_target", Text),
            ("last_rotation", Big),
            ("created_at", Big),
            ("updated_at", Big),
            ("tags", Text),
            ("options", Text),
            ("previews", Big),
        ]
    };
}

pub const TABLES: &[Table] = &[
    Table {
        name: "owners",
        columns: &[
            ("id", Big),
            ("name", Text),
            ("timezone", Text),
            ("link_count", Big),
            ("created_at", Big),
        ],
        order: "id",
        identity: true,
    },
    Table {
        name: "api_keys",
        columns: &[
            ("id", Big),
            ("owner_id", Big),
            ("name", Text),
            ("prefix", Text),
            ("digest", Bytes),
            ("created_at", Big),
            ("last_used_at", Big),
            ("revoked_at", Big),
            ("read_only", Bool),
            ("expires_at", Big),
            ("spaces", Text),
        ],
        order: "id",
        identity: true,
    },
    Table {
        name: "domains",
        columns: &[
            ("id", Big),
            ("owner_id", Big),
            ("name", Text),
            ("host", Text),
            ("created_at", Big),
            ("updated_at", Big),
            ("root_url", Text),
            ("unknown_url", Text),
            ("expired_url", Text),
            ("robots", Small),
            ("robots_txt", Text),
        ],
        order: "id",
        identity: true,
    },
    Table {
        name: "spaces",
        columns: &[
            ("id", Big),
            ("owner_id", Big),
            ("name", Text),
            ("color", Int),
            ("link_count", Big),
            ("created_at", Big),
            ("updated_at", Big),
        ],
        order: "id",
        identity: true,
    },
    Table {
        name: "links",
        columns: link_columns!(("id", Big)),
        order: "id",
        identity: true,
    },
    Table {
        name: "trash_batches",
        columns: &[("id", Big), ("owner_id", Big), ("deleted_at", Big)],
        order: "id",
        identity: true,
    },
    Table {
        name: "trash_links",
        columns: link_columns!(("id", Big), ("batch", Big)),
        order: "id",
        identity: false,
    },
    Table {
        name: "trash_spaces",
        columns: &[
            ("id", Big),
            ("batch", Big),
            ("owner_id", Big),
            ("name", Text),
            ("color", Int),
            ("created_at", Big),
            ("updated_at", Big),
            ("members", Bytes),
        ],
        order: "id",
        identity: false,
    },
    Table {
        name: "traffic_values",
        columns: &[("id", Big), ("dimension", Int), ("value", Text)],
        order: "id",
        identity: true,
    },
    Table {
        name: "link_traffic",
        columns: &[
            ("owner_id", Big),
            ("day", Big),
            ("link_id", Big),
            ("clicks", Big),
            ("data", Bytes),
        ],
        order: "owner_id, day, link_id",
        identity: false,
    },
    Table {
        name: "scope_traffic",
        columns: &[
            ("scope", Int),
            ("scope_id", Big),
            ("day", Big),
            ("clicks", Big),
            ("data", Bytes),
        ],
        order: "scope, scope_id, day",
        identity: false,
    },
    Table {
        name: "orphan_traffic",
        columns: &[
            ("host_id", Big),
            ("day", Big),
            ("dim", Small),
            ("value", Text),
            ("visits", Big),
        ],
        order: "host_id, day, dim, value",
        identity: false,
    },
    Table {
        name: "visit_log",
        columns: &[
            ("id", Big),
            ("link_id", Big),
            ("at", Big),
            ("country", Text),
            ("platform", Text),
            ("browser", Text),
            ("referrer", Text),
            ("language", Text),
            ("address", Text),
            ("rule", Text),
        ],
        order: "id",
        identity: true,
    },
    Table {
        name: "visit_log_purge",
        columns: &[("link_id", Big), ("upto", Big)],
        order: "link_id",
        identity: false,
    },
];

/// One value on its way from one store to the other.
#[derive(Debug, Clone, PartialEq)]
pub enum Cell {
    Null,
    Int(i64),
    Bool(bool),
    Text(String),
    Bytes(Vec<u8>),
}

/// A row: its cells in the table's column order.
pub type Row = Vec<Cell>;

/// Rows per batch on the channel.
pub const CHUNK: usize = 2_000;

/// What the reader sends: a table begins (its index in [`TABLES`]), rows of it, the end.
#[derive(Debug)]
pub enum Batch {
    Start(usize),
    Rows(Vec<Row>),
    Done,
}

/// Told how many rows were just written, for a progress bar.
pub type Moved = dyn Fn(u64) + Send + Sync;

/// Link counters of owners and spaces, taken from the links copied (the same SQL on both
/// stores). PostgreSQL's triggers counted each copied link on top of the copied counter.
pub const RECOUNT: &str = "
    UPDATE owners SET link_count = (SELECT count(*) FROM links WHERE links.owner_id = owners.id);
    UPDATE spaces SET link_count = (SELECT count(*) FROM links WHERE links.space_id = spaces.id);
";
