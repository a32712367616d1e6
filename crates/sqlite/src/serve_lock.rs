//! One `linkdeck serve` per database file. A server keeps click counts in memory and writes
//! them in batches, so two servers on one file each let a link limited to one click through
//! once: counts would no longer be exact. The second server is refused instead.
//!
//! The guard is an OS advisory lock (`flock` on Unix) on a file next to the database. The
//! kernel drops it when the process ends however it ends (SIGKILL, a crash, a power cut), so
//! there is never a stale lock to clear by hand. The file itself is left in place: deleting it
//! on exit would let a starting server lock a file that is about to be unlinked while a third
//! creates a new one, and both would run.

use std::fs::{File, OpenOptions, TryLockError};
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use linkdeck_domain::{Error, Result};

/// Held for as long as the server runs; dropping it (or the process ending) releases it.
#[derive(Debug)]
pub struct ServeLock {
    _file: File,
}

/// The lock file of the database at `db`.
pub fn lock_path(db: &Path) -> PathBuf {
    let mut name = db.as_os_str().to_owned();
    name.push(".serve-lock");
    PathBuf::from(name)
}

impl ServeLock {
    /// Takes the lock of `db`, or says which process holds it.
    pub fn acquire(db: &Path) -> Result<ServeLock> {
        crate::db::create_parent(db)?;
        let path = lock_path(db);
        let cannot = |e: std::io::Error| {
            Error::Unavailable(format!("cannot use the lock file {}: {e}", path.display()))
        };
        let mut file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(&path)
            .map_err(cannot)?;
        match file.try_lock() {
            Ok(()) => {}
            Err(TryLockError::WouldBlock) => {
                let mut holder = String::new();
                let _ = file.read_to_string(&mut holder);
                let holder = holder.trim();
                let who = if holder.is_empty() {
                    String::new()
                } else {
                    format!(" (pid {holder})")
                };
                return Err(Error::Unavailable(format!(
                    "another linkdeck serve{who} is already serving {}; one server per \
                     database keeps click counts and limits exact, so stop that one first \
                     or serve another --db",
                    db.display()
                )));
            }
            Err(TryLockError::Error(e)) => return Err(cannot(e)),
        }
        // The holder's pid, for the refusal above; only ever read while the lock is held.
        file.set_len(0).map_err(cannot)?;
        file.seek(SeekFrom::Start(0)).map_err(cannot)?;
        write!(file, "{}", std::process::id()).map_err(cannot)?;
        Ok(ServeLock { _file: file })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_second_lock_on_one_database_is_refused_until_the_first_is_dropped() {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("sub/links.db");
        let first = ServeLock::acquire(&db).unwrap();
        let refused = ServeLock::acquire(&db).unwrap_err().to_string();
        assert!(refused.contains("already serving"), "{refused}");
        assert!(
            refused.contains(&format!("pid {}", std::process::id())),
            "{refused}"
        );
        // Another database is not affected.
        let _other = ServeLock::acquire(&dir.path().join("other.db")).unwrap();
        drop(first);
        ServeLock::acquire(&db).unwrap();
    }
}
