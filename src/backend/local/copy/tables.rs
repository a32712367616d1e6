//! What a whole-database copy moves: every table both stores hold, in an order that puts each
//! row after the rows it refers to, with each column's kind. Derived state that only one store
//! has (SQLite's full-text and short-term search indexes, PostgreSQL's sequences) is rebuilt by
//! the target, not copied.

use bytes::BytesMut;
use tokio_postgres::types::{IsNull, ToSql, Type, to_sql_checked};

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

impl Kind {
    pub fn pg_type(self) -> Type {
        match self {
            Kind::Big => Type::INT8,
            Kind::Int => Type::INT4,
            Kind::Small => Type::INT2,
            Kind::Bool => Type::BOOL,
            Kind::Text => Type::TEXT,
            Kind::Bytes => Type::BYTEA,
        }
    }
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

impl ToSql for Cell {
    fn to_sql(
        &self,
        ty: &Type,
        out: &mut BytesMut,
    ) -> Result<IsNull, Box<dyn std::error::Error + Sync + Send>> {
        match self {
            Cell::Null => Ok(IsNull::Yes),
            Cell::Int(i) if *ty == Type::BOOL => (*i != 0).to_sql(ty, out),
            Cell::Int(i) if *ty == Type::INT4 => i32::try_from(*i)?.to_sql(ty, out),
            Cell::Int(i) if *ty == Type::INT2 => i16::try_from(*i)?.to_sql(ty, out),
            Cell::Int(i) => i.to_sql(ty, out),
            Cell::Bool(b) => b.to_sql(ty, out),
            Cell::Text(s) => s.to_sql(ty, out),
            Cell::Bytes(b) => b.to_sql(ty, out),
        }
    }

    fn accepts(_: &Type) -> bool {
        true
    }

    to_sql_checked!();
}

impl rusqlite::ToSql for Cell {
    fn to_sql(&self) -> rusqlite::Result<rusqlite::types::ToSqlOutput<'_>> {
        use rusqlite::types::{ToSqlOutput, ValueRef};
        Ok(ToSqlOutput::Borrowed(match self {
            Cell::Null => ValueRef::Null,
            Cell::Int(i) => ValueRef::Integer(*i),
            Cell::Bool(b) => ValueRef::Integer(i64::from(*b)),
            Cell::Text(s) => ValueRef::Text(s.as_bytes()),
            Cell::Bytes(b) => ValueRef::Blob(b),
        }))
    }
}
