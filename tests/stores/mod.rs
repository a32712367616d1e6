//! Running a CLI test on both stores: `on_both_stores!(name, …)` makes `sqlite::name` and
//! `postgres::name` of each test function `name(store: Store)`, which takes its sandboxes from
//! [`Store::env`]. Without PostgreSQL the `postgres::` tests pass without running (the cluster
//! says why, once; see `tests/pg_cluster`). A test binary using it has the modules
//! `cli_support` and `pg_cluster` at its root, and `#[macro_use] mod stores;` before its tests.

#![allow(dead_code)]

use crate::cli_support::Env;
use crate::pg_cluster;

/// Where a test's databases are.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Store {
    Sqlite,
    Postgres,
}

impl Store {
    /// A sandbox on a new, empty database of this store.
    pub fn env(self) -> Env {
        match self {
            Store::Sqlite => Env::new(),
            Store::Postgres => {
                let cluster = pg_cluster::cluster().expect("checked before the test ran");
                Env::on_postgres(cluster.fresh_database(), pg_cluster::PASSWORD)
            }
        }
    }
}

macro_rules! on_both_stores {
    ($($name:ident),* $(,)?) => {
        mod sqlite {
            $(
                #[test]
                fn $name() {
                    super::$name($crate::stores::Store::Sqlite);
                }
            )*
        }
        mod postgres {
            $(
                #[test]
                fn $name() {
                    if $crate::pg_cluster::cluster().is_some() {
                        super::$name($crate::stores::Store::Postgres);
                    }
                }
            )*
        }
    };
}
