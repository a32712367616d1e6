//! A read whose caller may stop waiting: a request that timed out, or whose client went away.
//! The read runs on a blocking thread, which goes on when its caller's future is dropped, and
//! a statement in PostgreSQL runs to its end whatever its client does — the whole of a slow
//! search — while the connection makes its next user wait behind it. So the caller's side
//! ([`Waiting`]) asks the server to cancel the statement when it is dropped before the read
//! is over, and the read's side ([`Finish`]) then closes the connection rather than pooling it
//! again, so that the cancel can reach no one else's statement.

use std::sync::Arc;
use std::sync::atomic::{AtomicU8, Ordering};

use deadpool_postgres::Object;
use tokio::runtime::Handle;
use tokio_postgres::CancelToken;
use tokio_postgres_rustls::MakeRustlsConnect;

use crate::pool::Pg;

const RUNNING: u8 = 0;
const FINISHED: u8 = 1;
const GONE: u8 = 2;

/// Held by the caller for as long as it waits for the read.
pub struct Waiting {
    state: Arc<AtomicU8>,
    token: CancelToken,
    tls: MakeRustlsConnect,
    runtime: Handle,
}

/// Held by the read; hands its connection back when the read is over.
pub struct Finish {
    state: Arc<AtomicU8>,
}

impl Pg {
    /// The two ends of a read on `client` whose caller may give up on it.
    pub(crate) fn watch(&self, client: &Object) -> (Waiting, Finish) {
        let state = Arc::new(AtomicU8::new(RUNNING));
        let waiting = Waiting {
            state: state.clone(),
            token: client.cancel_token(),
            tls: self.inner.tls.clone(),
            runtime: self.runtime().clone(),
        };
        (waiting, Finish { state })
    }
}

impl Finish {
    /// The read is over: its connection goes back to the pool, or is closed when the caller
    /// left first and a cancel is on its way to it.
    pub fn release(self, client: Object) {
        let finished =
            self.state
                .compare_exchange(RUNNING, FINISHED, Ordering::AcqRel, Ordering::Acquire);
        if finished.is_err() {
            drop(Object::take(client));
        }
    }
}

impl Drop for Waiting {
    fn drop(&mut self) {
        let left = self
            .state
            .compare_exchange(RUNNING, GONE, Ordering::AcqRel, Ordering::Acquire);
        if left.is_err() {
            return;
        }
        let token = self.token.clone();
        let tls = self.tls.clone();
        self.runtime.spawn(async move {
            if let Err(e) = token.cancel_query(tls).await {
                tracing::debug!(error = %e, "cancelling a statement nobody waits for");
            }
        });
    }
}
