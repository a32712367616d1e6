//! Backups of a database file: `linkdeck db backup`, `db restore` and the dated backups `serve`
//! keeps. A backup is taken with SQLite's online backup API from a connection of its own, while
//! other programs (a running `serve`) go on writing; a restore checks a file and puts it in
//! place of a database. Either writes a temporary file beside its target and renames it, so a
//! failure halfway leaves what was there as it was.
//!
//! Consistency: in write-ahead-log mode (every linkdeck file) the backup holds one read
//! transaction on its source from the first page to the last, so every page comes from one
//! snapshot — every commit before it, none after — and a writer is never waited for nor waits:
//! readers and the one writer do not block each other in WAL mode. Without the held snapshot,
//! SQLite restarts a backup from the first page whenever another connection commits, and under
//! steady traffic a large file might never finish. The copy goes a few megabytes at a time with
//! a pause between, so that the disk is not the backup's alone while a server answers.

use std::path::{Path, PathBuf};
use std::time::Duration;

use rusqlite::backup::Backup;
use rusqlite::{Connection, OpenFlags};

use crate::error::file_error;
use crate::schema;
use linkdeck_domain::{Error, Result, plural};

/// Pages copied per step (4 MiB at SQLite's default page size)…
const PAGES_PER_STEP: std::ffi::c_int = 1024;
/// …and the pause after each.
const PAUSE: Duration = Duration::from_millis(5);
/// How long opening a file waits for another program's lock.
const BUSY_TIMEOUT: Duration = Duration::from_secs(5);

/// A backup written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Made {
    pub path: PathBuf,
    /// Links in the backup (the trash's not counted).
    pub links: u64,
    /// The file's size.
    pub bytes: u64,
    /// Its schema version.
    pub schema: i64,
}

/// A file checked for a restore: SQLite's integrity check passed, and it is a linkdeck
/// database of a schema this build reads.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Checked {
    pub links: u64,
    pub schema: i64,
    pub bytes: u64,
}

/// A restore done: what the target held before (`None`: no database there) and what it holds
/// now.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Restored {
    pub before: Option<u64>,
    pub restored: Checked,
}

/// Copies the database at `source` into a new file `to`, consistently while other programs
/// write to it. An existing `to` is replaced only when `replace` says so.
pub fn back_up(source: &Path, to: &Path, replace: bool) -> Result<Made> {
    if !source.is_file() {
        return Err(Error::NotFound(format!("database {}", source.display())));
    }
    refuse_existing(to, replace, "--force")?;
    if same_file(source, to) {
        return Err(Error::Conflict(format!(
            "{} is the database itself; back it up into another file",
            to.display()
        )));
    }
    let src = open_read_only(source)?;
    let version = linkdeck_version(&src, source)?;
    let wal = src
        .query_row("PRAGMA journal_mode", [], |r| r.get::<_, String>(0))
        .map_err(|e| file_error(source, e))?
        .eq_ignore_ascii_case("wal");
    // In WAL mode one snapshot from the first page to the last (see the top of this file);
    // otherwise a held read would stop every writer, so SQLite's restarts are the lesser evil.
    if wal {
        src.execute_batch("BEGIN; SELECT count(*) FROM sqlite_schema;")
            .map_err(|e| file_error(source, e))?;
    }
    let made = write_beside(to, |tmp| {
        let mut dst = Connection::open(tmp).map_err(|e| file_error(tmp, e))?;
        {
            let backup = Backup::new(&src, &mut dst).map_err(|e| file_error(tmp, e))?;
            backup
                .run_to_completion(PAGES_PER_STEP, PAUSE, None)
                .map_err(|e| file_error(source, e))?;
        }
        // One file to keep, move or mail: no log beside it until something opens it to write.
        dst.pragma_update(None, "journal_mode", "DELETE")
            .map_err(|e| file_error(tmp, e))?;
        let links = count_links(&dst, tmp)?;
        dst.close().map_err(|(_, e)| file_error(tmp, e))?;
        Ok(links)
    })?;
    if wal {
        let _ = src.execute_batch("COMMIT");
    }
    Ok(Made {
        path: to.to_owned(),
        links: made,
        bytes: size(to),
        schema: version,
    })
}

/// Checks the file at `path` for a restore: a SQLite database that passes its integrity check,
/// written by linkdeck with a schema this build reads (an older one is brought up to date when
/// it is next opened, as any database is).
pub fn check(path: &Path) -> Result<Checked> {
    if !path.is_file() {
        return Err(Error::NotFound(format!("backup file {}", path.display())));
    }
    let conn = open_read_only(path)?;
    let problems: Vec<String> = {
        let mut statement = conn
            .prepare("PRAGMA integrity_check(10)")
            .map_err(|e| not_a_backup(path, e))?;
        let rows = statement
            .query_map([], |r| r.get::<_, String>(0))
            .map_err(|e| not_a_backup(path, e))?;
        rows.collect::<rusqlite::Result<_>>()
            .map_err(|e| not_a_backup(path, e))?
    };
    if problems != ["ok"] {
        return Err(Error::Unavailable(format!(
            "{} fails SQLite's integrity check ({}); it cannot be restored — take another backup",
            path.display(),
            problems.join("; ")
        )));
    }
    let schema = linkdeck_version(&conn, path)?;
    let links = count_links(&conn, path)?;
    Ok(Checked {
        links,
        schema,
        bytes: size(path),
    })
}

/// Links in the database at `path`: `None` when there is no file there.
pub fn links_in(path: &Path) -> Result<Option<u64>> {
    if !path.exists() {
        return Ok(None);
    }
    let conn = open_read_only(path)?;
    linkdeck_version(&conn, path)?;
    count_links(&conn, path).map(Some)
}

/// Puts the backup at `from` in place of the database at `target`, after [`check`]ing it. A
/// target that holds links is replaced only when `replace` says so; one a `linkdeck serve`
/// or another program has open never is.
pub fn restore(from: &Path, target: &Path, replace: bool) -> Result<Restored> {
    let restored = check(from)?;
    if same_file(from, target) {
        return Err(Error::Conflict(format!(
            "{} is the database itself; restore another file",
            from.display()
        )));
    }
    crate::db::create_parent(target)?;
    // A server holds this while it runs; held here, none starts while the file is replaced.
    let _no_server = crate::ServeLock::acquire(target).map_err(|e| match e {
        Error::Unavailable(m) if m.contains("already serving") => Error::Unavailable(format!(
            "a linkdeck serve is serving {}; stop it, restore, then start it again",
            target.display()
        )),
        other => other,
    })?;
    let before = match links_in(target) {
        Ok(n) => n,
        // Something is there that is not a linkdeck database: only replaced when asked.
        Err(e) if replace => {
            tracing::warn!(target = %target.display(), error = %e, "replacing a file that is not a linkdeck database");
            Some(0)
        }
        Err(e) => {
            return Err(Error::Conflict(format!(
                "{e}; add --force to replace it with {}",
                from.display()
            )));
        }
    };
    if let Some(n) = before.filter(|n| *n > 0 && !replace) {
        return Err(Error::Conflict(format!(
            "{} has {}; the backup {} has {}. Restoring replaces them all: add --force to go on",
            target.display(),
            plural(n, "link"),
            from.display(),
            plural(restored.links, "link"),
        )));
    }
    write_beside(target, |tmp| {
        let src = open_read_only(from)?;
        let mut dst = Connection::open(tmp).map_err(|e| file_error(tmp, e))?;
        {
            let backup = Backup::new(&src, &mut dst).map_err(|e| file_error(tmp, e))?;
            backup
                .run_to_completion(PAGES_PER_STEP, Duration::ZERO, None)
                .map_err(|e| file_error(from, e))?;
        }
        dst.pragma_update(None, "journal_mode", "DELETE")
            .map_err(|e| file_error(tmp, e))?;
        dst.close().map_err(|(_, e)| file_error(tmp, e))?;
        if before.is_some() {
            let busy = |m: String| {
                Error::Unavailable(format!(
                    "{} is open in another program ({m}); close the app or command using it, \
                     then restore again",
                    target.display()
                ))
            };
            // Out of WAL mode: its log written into the file and removed, so that no log of the
            // old database is left to be read into the new one. Possible only while no other
            // connection has the file open, which is the check that nothing else uses it.
            let old = Connection::open_with_flags(target, OpenFlags::SQLITE_OPEN_READ_WRITE)
                .map_err(|e| file_error(target, e))?;
            old.busy_timeout(Duration::from_millis(500))
                .map_err(|e| file_error(target, e))?;
            let mode: String = old
                .query_row("PRAGMA journal_mode = DELETE", [], |r| r.get(0))
                .map_err(|e| busy(e.to_string()))?;
            if !mode.eq_ignore_ascii_case("delete") {
                return Err(busy(format!("its journal stays {mode}")));
            }
            old.close().map_err(|(_, e)| file_error(target, e))?;
            for tail in ["-wal", "-shm"] {
                let side = with_suffix(target, tail);
                if side.exists() {
                    std::fs::remove_file(&side).map_err(|e| {
                        Error::Unavailable(format!("cannot remove {}: {e}", side.display()))
                    })?;
                }
            }
        }
        Ok(())
    })?;
    Ok(Restored {
        before,
        restored: Checked {
            bytes: size(target),
            ..restored
        },
    })
}

/// Refuses an existing `to` unless `replace`; `flag` is what says to replace it.
fn refuse_existing(to: &Path, replace: bool, flag: &str) -> Result<()> {
    if to.is_dir() {
        return Err(Error::Conflict(format!(
            "{} is a folder; name a file",
            to.display()
        )));
    }
    if to.exists() && !replace {
        return Err(Error::Conflict(format!(
            "{} exists; name another file, or add {flag} to replace it",
            to.display()
        )));
    }
    Ok(())
}

/// Writes `to` by way of a temporary file beside it, renamed over it once `write` has made it
/// whole; on any failure the temporary file goes and `to` is as it was.
fn write_beside<T>(to: &Path, write: impl FnOnce(&Path) -> Result<T>) -> Result<T> {
    crate::db::create_parent(to)?;
    let name = to
        .file_name()
        .ok_or_else(|| Error::Conflict(format!("{} names no file", to.display())))?;
    let mut tmp_name = std::ffi::OsString::from(".");
    tmp_name.push(name);
    tmp_name.push(format!(".{}.tmp", std::process::id()));
    let tmp = to.with_file_name(tmp_name);
    let remove_tmp = |tmp: &Path| {
        for tail in ["", "-journal", "-wal", "-shm"] {
            let _ = std::fs::remove_file(with_suffix(tmp, tail));
        }
    };
    remove_tmp(&tmp);
    let written = write(&tmp).and_then(|answer| {
        std::fs::File::open(&tmp)
            .and_then(|f| f.sync_all())
            .and_then(|()| std::fs::rename(&tmp, to))
            .map_err(|e| Error::Unavailable(format!("cannot write {}: {e}", to.display())))?;
        sync_dir(to);
        Ok(answer)
    });
    if written.is_err() {
        remove_tmp(&tmp);
    }
    written
}

/// Makes a rename in `path`'s folder last through a power cut (where the system can).
fn sync_dir(path: &Path) {
    #[cfg(unix)]
    if let Some(dir) = path.parent() {
        let dir = if dir.as_os_str().is_empty() {
            Path::new(".")
        } else {
            dir
        };
        if let Ok(d) = std::fs::File::open(dir) {
            let _ = d.sync_all();
        }
    }
}

fn open_read_only(path: &Path) -> Result<Connection> {
    let conn = Connection::open_with_flags(
        path,
        OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX,
    )
    .map_err(|e| file_error(path, e))?;
    conn.busy_timeout(BUSY_TIMEOUT)
        .map_err(|e| file_error(path, e))?;
    Ok(conn)
}

/// The schema version of a linkdeck database, refused when it is not one or is newer than
/// this build.
fn linkdeck_version(conn: &Connection, path: &Path) -> Result<i64> {
    let version: i64 = conn
        .query_row("PRAGMA user_version", [], |r| r.get(0))
        .map_err(|e| not_a_backup(path, e))?;
    let ours = schema::check_version(version)
        .map_err(|e| match e {
            Error::Unavailable(m) => Error::Unavailable(format!("{}: {m}", path.display())),
            other => other,
        })
        .and_then(|v| {
            if v == 0 {
                Err(not_linkdeck(path))
            } else {
                Ok(v)
            }
        })?;
    let has_links: bool = conn
        .query_row(
            "SELECT EXISTS (SELECT 1 FROM sqlite_schema WHERE type = 'table' AND name = 'links')",
            [],
            |r| r.get(0),
        )
        .map_err(|e| not_a_backup(path, e))?;
    if !has_links {
        return Err(not_linkdeck(path));
    }
    Ok(ours)
}

fn count_links(conn: &Connection, path: &Path) -> Result<u64> {
    conn.query_row("SELECT count(*) FROM links", [], |r| r.get::<_, i64>(0))
        .map(|n| n.max(0) as u64)
        .map_err(|e| file_error(path, e))
}

fn not_linkdeck(path: &Path) -> Error {
    Error::Unavailable(format!(
        "{} is a SQLite database but not a linkdeck one",
        path.display()
    ))
}

/// A failure reading a file that should be a database: one that is not one at all says so.
fn not_a_backup(path: &Path, e: rusqlite::Error) -> Error {
    match e.sqlite_error_code() {
        Some(rusqlite::ErrorCode::NotADatabase) => Error::Unavailable(format!(
            "{} is not a SQLite database (nor a linkdeck backup)",
            path.display()
        )),
        _ => file_error(path, e),
    }
}

fn same_file(a: &Path, b: &Path) -> bool {
    match (std::fs::canonicalize(a), std::fs::canonicalize(b)) {
        (Ok(a), Ok(b)) => a == b,
        _ => false,
    }
}

fn with_suffix(path: &Path, tail: &str) -> PathBuf {
    let mut name = path.as_os_str().to_owned();
    name.push(tail);
    PathBuf::from(name)
}

fn size(path: &Path) -> u64 {
    std::fs::metadata(path).map_or(0, |m| m.len())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn database(path: &Path, links: usize) {
        let db = crate::Db::open(path).unwrap();
        db.write_blocking(move |tx| {
            tx.execute(
                "INSERT INTO owners (id, name, created_at) VALUES (1, 'me', 0)",
                [],
            )
            .map_err(crate::db_error)?;
            for i in 0..links {
                tx.execute(
                    "INSERT INTO links (owner_id, alias, url, created_at, updated_at) \
                     VALUES (1, ?1, 'https://example.com', 0, 0)",
                    [format!("a{i}")],
                )
                .map_err(crate::db_error)?;
            }
            Ok(())
        })
        .unwrap();
    }

    #[test]
    fn a_backup_is_checked_and_restored_over_an_empty_target_but_not_a_full_one() {
        let dir = tempfile::tempdir().unwrap();
        let live = dir.path().join("live.db");
        database(&live, 3);
        let copy = dir.path().join("copy.db");
        let made = back_up(&live, &copy, false).unwrap();
        assert_eq!(made.links, 3);
        assert!(made.bytes > 0);
        let refused = back_up(&live, &copy, false).unwrap_err().to_string();
        assert!(refused.contains("--force"), "{refused}");
        assert_eq!(check(&copy).unwrap().links, 3);

        let other = dir.path().join("other.db");
        database(&other, 1);
        let refused = restore(&copy, &other, false).unwrap_err().to_string();
        assert!(
            refused.contains("1 link") && refused.contains("3 links"),
            "{refused}"
        );
        let done = restore(&copy, &other, true).unwrap();
        assert_eq!((done.before, done.restored.links), (Some(1), 3));
        assert_eq!(links_in(&other).unwrap(), Some(3));

        let fresh = dir.path().join("new/fresh.db");
        assert_eq!(restore(&copy, &fresh, false).unwrap().before, None);
        assert_eq!(links_in(&fresh).unwrap(), Some(3));
    }
}
