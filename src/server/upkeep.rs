//! Work the server does in the background while it runs: pruning the raw visit log to its
//! retention, and removing the logged visits of deleted links (statistics never change by it:
//! they read the rollups, which are kept); and dated backups of a SQLite database.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use crate::backend::local::serving::{LocalService, back_up_file};

/// How often the log is pruned unless told otherwise.
pub const EVERY: Duration = Duration::from_secs(3600);

/// Prunes now and then every `every`, until the task is aborted.
pub async fn prune_visit_log(service: LocalService, retention: Option<Duration>, every: Duration) {
    loop {
        prune_once(&service, retention).await;
        tokio::time::sleep(every).await;
    }
}

/// One pass: raw visits older than `retention` (if any), then those of deleted links.
pub async fn prune_once(service: &LocalService, retention: Option<Duration>) {
    if let Some(retention) = retention {
        let span = jiff::SignedDuration::try_from(retention).unwrap_or(jiff::SignedDuration::MAX);
        let before = service
            .now()
            .checked_sub(span)
            .unwrap_or(jiff::Timestamp::MIN);
        match service.prune_visit_log(before).await {
            Ok(0) => {}
            Ok(n) => tracing::info!(visits = n, "pruned the visit log"),
            Err(e) => tracing::warn!(error = %e, "pruning the visit log failed"),
        }
    }
    if let Err(e) = service.purge_deleted_visits().await {
        tracing::warn!(error = %e, "removing logged visits of deleted links failed");
    }
}

/// Dated backups of a SQLite database while it is served: `[serve] backup_every`,
/// `backup_keep` and `backup_dir`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Backups {
    /// The database file.
    pub db: PathBuf,
    /// The folder the backups go to.
    pub dir: PathBuf,
    pub every: Duration,
    /// Backups kept, the oldest deleted past it; 0 keeps them all.
    pub keep: u32,
}

/// Backs up every `every` (the first one `every` after the start) until `stop` changes: a
/// backup under way is finished, old ones pruned, before the task returns. A failure is
/// logged and the next one tried on time: it never stops the server.
pub async fn back_up_on_schedule(backups: Backups, mut stop: tokio::sync::watch::Receiver<()>) {
    let mut ticks =
        tokio::time::interval_at(tokio::time::Instant::now() + backups.every, backups.every);
    ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tokio::select! {
            _ = ticks.tick() => back_up_once(&backups).await,
            _ = stop.changed() => return,
        }
    }
}

/// One scheduled backup, then the oldest beyond `keep` deleted.
pub async fn back_up_once(backups: &Backups) {
    let started = Instant::now();
    let to = backups
        .dir
        .join(dated_name(&backups.db, jiff::Timestamp::now()));
    match back_up_file(&backups.db, &to, false).await {
        Ok(made) => tracing::info!(
            path = %made.path.display(),
            bytes = made.bytes,
            links = made.links,
            ms = started.elapsed().as_millis() as u64,
            "backed up the database"
        ),
        Err(e) => {
            tracing::warn!(path = %to.display(), error = %e, "backing up the database failed");
            return;
        }
    }
    if backups.keep == 0 {
        return;
    }
    let mut ours = match dated_backups(&backups.dir, &backups.db) {
        Ok(found) => found,
        Err(e) => {
            tracing::warn!(dir = %backups.dir.display(), error = %e, "cannot list the backups");
            return;
        }
    };
    ours.sort();
    let extra = ours.len().saturating_sub(backups.keep as usize);
    for old in ours.into_iter().take(extra) {
        let path = backups.dir.join(&old);
        match std::fs::remove_file(&path) {
            Ok(()) => tracing::info!(path = %path.display(), "removed an old backup"),
            Err(e) => {
                tracing::warn!(path = %path.display(), error = %e, "cannot remove an old backup");
            }
        }
    }
}

/// `links-20261127T134501Z.db` for a backup of `links.db`: sorted by name, sorted by time.
fn dated_name(db: &Path, at: jiff::Timestamp) -> String {
    format!("{}-{}.db", stem(db), at.strftime("%Y%m%dT%H%M%SZ"))
}

fn stem(db: &Path) -> String {
    db.file_stem()
        .map_or_else(|| "linkdeck".into(), |s| s.to_string_lossy().into_owned())
}

/// The names in `dir` that [`dated_name`] gives backups of `db`; nothing else there is
/// ever deleted.
fn dated_backups(dir: &Path, db: &Path) -> std::io::Result<Vec<String>> {
    let prefix = format!("{}-", stem(db));
    let mut found = Vec::new();
    for entry in std::fs::read_dir(dir)? {
        let name = entry?.file_name().to_string_lossy().into_owned();
        let Some(stamp) = name
            .strip_prefix(&prefix)
            .and_then(|rest| rest.strip_suffix(".db"))
        else {
            continue;
        };
        let dated = stamp.len() == 16
            && stamp.char_indices().all(|(i, c)| match i {
                8 => c == 'T',
                15 => c == 'Z',
                _ => c.is_ascii_digit(),
            });
        if dated {
            found.push(name);
        }
    }
    Ok(found)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_names_of_dated_backups_of_this_database_are_ever_pruned() {
        let dir = tempfile::tempdir().unwrap();
        let db = Path::new("/var/lib/linkdeck/links.db");
        let at: jiff::Timestamp = "2026-11-27T13:45:01Z".parse().unwrap();
        assert_eq!(dated_name(db, at), "links-20261127T134501Z.db");
        for name in [
            "links-20261127T134501Z.db",
            "links-20261126T134501Z.db",
            "links-20261127T134501Z.db-journal",
            ".links-20261127T134501Z.db.42.tmp",
            "other-20261127T134501Z.db",
            "links-keep-this.db",
        ] {
            std::fs::write(dir.path().join(name), "").unwrap();
        }
        let mut found = dated_backups(dir.path(), db).unwrap();
        found.sort();
        assert_eq!(
            found,
            ["links-20261126T134501Z.db", "links-20261127T134501Z.db"]
        );
    }
}
