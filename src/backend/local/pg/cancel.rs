//! A pooled connection for a read whose caller may stop waiting: a request that timed out, or
//! whose client went away. Dropping a tokio-postgres query stops the reading of its answer, not
//! the statement, which runs on to its end in its backend — the whole of a slow search — while
//! the connection, back in the pool, makes its next user wait behind it. So a read left before
//! its end asks the server to cancel its statement, and its connection is closed rather than
//! pooled again: the cancel can reach no one else's statement.

use std::ops::{Deref, DerefMut};

use deadpool_postgres::Object;
use tokio_postgres_rustls::MakeRustlsConnect;

use super::Pg;
use crate::domain::Result;

/// A pooled connection whose statement is cancelled if this is dropped before
/// [`Cancellable::done`].
pub struct Cancellable {
    client: Option<Object>,
    tls: MakeRustlsConnect,
    done: bool,
}

impl Pg {
    /// A pooled connection for a read its caller may give up on.
    pub async fn cancellable(&self) -> Result<Cancellable> {
        Ok(Cancellable {
            client: Some(self.client().await?),
            tls: self.inner.tls.clone(),
            done: false,
        })
    }
}

impl Cancellable {
    /// The read has its answer (or its error): the connection goes back to the pool.
    pub fn done(mut self) {
        self.done = true;
    }
}

impl Deref for Cancellable {
    type Target = Object;

    fn deref(&self) -> &Object {
        self.client.as_ref().expect("a connection until dropped")
    }
}

impl DerefMut for Cancellable {
    fn deref_mut(&mut self) -> &mut Object {
        self.client.as_mut().expect("a connection until dropped")
    }
}

impl Drop for Cancellable {
    fn drop(&mut self) {
        if self.done {
            return;
        }
        let Some(client) = self.client.take() else {
            return;
        };
        let token = client.cancel_token();
        // Out of the pool: closed once dropped, after the cancel.
        let client = Object::take(client);
        let tls = self.tls.clone();
        if let Ok(runtime) = tokio::runtime::Handle::try_current() {
            runtime.spawn(async move {
                if let Err(e) = token.cancel_query(tls).await {
                    tracing::debug!(error = %e, "cancelling a statement nobody waits for");
                }
                drop(client);
            });
        }
    }
}
