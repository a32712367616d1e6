//! A test's own handle on the database it made, beside the service's: what a test sets up or
//! reads back in raw SQL goes through it, because the service offers no way to its store. It
//! is opened at first use, so a test that never looks adds no connection. A test binary using
//! it has the module `raw` at its root.

#![allow(dead_code)]

use linkdeck::backend::local::StoreLocation;
use linkdeck::domain::Id;
use linkdeck_pg::Pg;
use linkdeck_sqlite::Db;
use tokio::sync::OnceCell;

/// The same database as a service at `location`, through connections of the test's own.
pub struct RawDb {
    location: StoreLocation,
    opened: OnceCell<Opened>,
}

enum Opened {
    /// A second pool on the file: WAL lets it and the service's work side by side, and its
    /// busy timeout rides out the service's writes.
    Sqlite(Db),
    Postgres(Pg),
}

impl RawDb {
    pub fn new(location: StoreLocation) -> RawDb {
        RawDb {
            location,
            opened: OnceCell::new(),
        }
    }

    async fn opened(&self) -> &Opened {
        self.opened
            .get_or_init(|| async {
                match &self.location {
                    StoreLocation::File(path) => Opened::Sqlite(Db::open(path).unwrap()),
                    StoreLocation::Postgres(target) => {
                        Opened::Postgres(Pg::connect(target).await.unwrap())
                    }
                }
            })
            .await
    }

    /// The SQLite file; panics on PostgreSQL.
    pub async fn sqlite(&self) -> &Db {
        match self.opened().await {
            Opened::Sqlite(db) => db,
            Opened::Postgres(_) => panic!("{} is not a SQLite file", self.location),
        }
    }

    /// The PostgreSQL database, when the data is in one (a SQLite file is not opened to say so).
    pub async fn pg(&self) -> Option<&Pg> {
        if let StoreLocation::File(_) = self.location {
            return None;
        }
        match self.opened().await {
            Opened::Postgres(pg) => Some(pg),
            Opened::Sqlite(_) => None,
        }
    }

    /// Gives link `id` a click total straight in the database, on either store (test setup only).
    pub async fn set_clicks(&self, id: Id, clicks: u64) {
        let clicks = clicks as i64;
        if let Some(pg) = self.pg().await {
            let client = pg.client().await.unwrap();
            client
                .execute(
                    "UPDATE links SET clicks = $1 WHERE id = $2",
                    &[&clicks, &id],
                )
                .await
                .unwrap();
            return;
        }
        self.sqlite()
            .await
            .write(move |tx| {
                tx.execute(
                    "UPDATE links SET clicks = ?1 WHERE id = ?2",
                    rusqlite::params![clicks, id],
                )
                .map_err(linkdeck::backend::local::db_error)?;
                Ok(())
            })
            .await
            .unwrap();
    }

    /// Runs one statement without parameters, written so that both stores take it (test setup
    /// only).
    pub async fn execute(&self, sql: &'static str) {
        if let Some(pg) = self.pg().await {
            pg.client().await.unwrap().execute(sql, &[]).await.unwrap();
            return;
        }
        self.sqlite()
            .await
            .write(move |tx| {
                tx.execute(sql, [])
                    .map_err(linkdeck::backend::local::db_error)?;
                Ok(())
            })
            .await
            .unwrap();
    }
}
