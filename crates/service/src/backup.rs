//! Backups of a whole database, whichever store holds it: on a SQLite file, SQLite's online
//! backup (the store's `backup` module, reached from here as every file-level step is); on
//! PostgreSQL, what to run instead, since the database server has its own tools.

use std::path::{Path, PathBuf};

use super::StoreLocation;
use super::store::backup;
pub use super::store::backup::{Checked, Made, Restored};
use linkdeck_domain::{Error, Result};

/// What to run for a PostgreSQL database, which linkdeck does not back up itself.
pub const ON_POSTGRES: &str = "on PostgreSQL, back up with pg_dump -Fc (for example \
     `pg_dump -Fc -f linkdeck.dump DBNAME`) and restore with pg_restore \
     (`pg_restore --clean --if-exists -d DBNAME linkdeck.dump`); linkdeck's own backups are \
     for SQLite files";

fn refused_on_postgres(what: &str) -> Error {
    Error::Unsupported(format!("{what} works on a SQLite database; {ON_POSTGRES}"))
}

/// Copies the database at `location` into the new file `to`, consistently while a server
/// writes to it; an existing `to` only when `replace`.
pub async fn back_up(location: &StoreLocation, to: &Path, replace: bool) -> Result<Made> {
    let StoreLocation::File(source) = location else {
        return Err(refused_on_postgres("db backup"));
    };
    back_up_file(source, to, replace).await
}

/// [`back_up`] of the SQLite file at `source`: what `serve`'s scheduled backups take.
pub async fn back_up_file(source: &Path, to: &Path, replace: bool) -> Result<Made> {
    let (source, to) = (source.to_owned(), to.to_owned());
    blocking(move || backup::back_up(&source, &to, replace)).await
}

/// Checks a backup file: SQLite's integrity check, and a linkdeck schema this build reads.
pub async fn check(file: &Path) -> Result<Checked> {
    let file = file.to_owned();
    blocking(move || backup::check(&file)).await
}

/// Puts the backup `from` in place of the database at `location` after checking it; a target
/// with links only when `replace`, one in use never.
pub async fn restore(from: &Path, location: &StoreLocation, replace: bool) -> Result<Restored> {
    let StoreLocation::File(target) = location else {
        return Err(refused_on_postgres("db restore"));
    };
    let (from, target): (PathBuf, PathBuf) = (from.to_owned(), target.clone());
    blocking(move || backup::restore(&from, &target, replace)).await
}

async fn blocking<T: Send + 'static>(f: impl FnOnce() -> Result<T> + Send + 'static) -> Result<T> {
    tokio::task::spawn_blocking(f)
        .await
        .map_err(|e| Error::Unavailable(format!("backup task failed: {e}")))?
}
