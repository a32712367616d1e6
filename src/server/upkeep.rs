//! Work the server does in the background while it runs: pruning the raw visit log to its
//! retention, and removing the logged visits of deleted links. Statistics never change by it:
//! they read the rollups, which are kept.

use std::time::Duration;

use crate::backend::local::serving::LocalService;

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
