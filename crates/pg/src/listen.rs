//! The listening connection: every process's committed change to links, domains or API keys
//! is notified by the schema's triggers, and each notification moves the change marker
//! ([`Pg::change_marker`](crate::Pg::change_marker)).

use std::sync::Arc;
use std::sync::atomic::{AtomicI64, Ordering};
use std::time::Duration;

use futures::StreamExt;
use linkdeck_domain::Result;
use tokio_postgres::AsyncMessage;
use tokio_postgres_rustls::MakeRustlsConnect;

use crate::error::{connect_error, pg_error};
use crate::target::PgTarget;

/// The channel the schema's triggers notify on (see `schema.rs`).
const CHANGES_CHANNEL: &str = "linkdeck_changes";

/// Opens the listening connection: every notification on [`CHANGES_CHANNEL`] moves `changes`.
/// A lost connection is opened again; while it is down the marker moves on every retry, so
/// callers forget their caches rather than trust them.
pub(crate) async fn listen(
    config: tokio_postgres::Config,
    tls: MakeRustlsConnect,
    target: PgTarget,
    changes: Arc<AtomicI64>,
) -> Result<tokio::task::JoinHandle<()>> {
    let first = subscribe(&config, &tls, &target, changes.clone()).await?;
    Ok(tokio::spawn(async move {
        let mut session = first;
        loop {
            session.await.ok();
            changes.fetch_add(1, Ordering::AcqRel);
            tracing::warn!("lost the PostgreSQL change listener; reconnecting");
            loop {
                tokio::time::sleep(Duration::from_millis(500)).await;
                match subscribe(&config, &tls, &target, changes.clone()).await {
                    Ok(next) => {
                        session = next;
                        break;
                    }
                    Err(e) => {
                        changes.fetch_add(1, Ordering::AcqRel);
                        tracing::warn!(error = %e, "PostgreSQL change listener");
                    }
                }
            }
        }
    }))
}

/// One listening session: connects, subscribes, and returns a task that runs until the
/// connection ends (or the task is aborted, which closes it).
async fn subscribe(
    config: &tokio_postgres::Config,
    tls: &MakeRustlsConnect,
    target: &PgTarget,
    changes: Arc<AtomicI64>,
) -> Result<tokio::task::JoinHandle<()>> {
    let (client, mut connection) = config
        .connect(tls.clone())
        .await
        .map_err(|e| connect_error(e, target))?;
    let mut messages = futures::stream::poll_fn(move |cx| connection.poll_message(cx));
    // The connection must be polled for the client's own statements to complete.
    let poller = tokio::spawn(async move {
        while let Some(Ok(message)) = messages.next().await {
            if let AsyncMessage::Notification(_) = message {
                changes.fetch_add(1, Ordering::AcqRel);
            }
        }
    });
    client
        .batch_execute(&format!("LISTEN {CHANGES_CHANNEL}"))
        .await
        .map_err(pg_error)?;
    Ok(tokio::spawn(async move {
        // Dropping the client (when this task ends or is aborted) closes the connection, which
        // ends the poller.
        let _client = client;
        let _ = poller.await;
    }))
}
