//! The raw visit log out: an export of the visits a question asks for, and a live feed of the
//! visits logged from now on. Both read the log a window of ids at a time, each window one short
//! snapshot holding at most [`WINDOW_ROWS`] visits, so memory stays flat however many visits
//! there are and no read holds the database for long.

use std::time::Duration;

use futures::{StreamExt, TryStreamExt, stream};
use linkdeck_backend::VisitStream;
use linkdeck_domain::{Id, Result, StatsScope, Visit, VisitQuery};
use linkdeck_store::{LogWindow, Tx};

/// Log ids one read looks through, and the visits it answers at most.
const WINDOW_IDS: i64 = 50_000;
const WINDOW_ROWS: usize = 5_000;

/// How often a live feed looks for new visits: a read of the newest log id, which costs next to
/// nothing. The click writer logs visits twice a second, so a visit reaches the feed within
/// about 0.6 s of its redirect.
pub const LIVE_POLL: Duration = Duration::from_millis(100);

/// The visits of the first window of `w` (`w.after` up to at most [`WINDOW_IDS`] ids on, not
/// past `w.upto`), and where the next read starts: a full answer may have stopped inside the
/// window, so it goes on after its last visit.
fn read_window(tx: &dyn Tx, w: LogWindow) -> Result<(Vec<Visit>, i64)> {
    let window = LogWindow {
        upto: w.upto.min(w.after.saturating_add(WINDOW_IDS)),
        ..w
    };
    let visits = tx.logged_visits(&window, WINDOW_ROWS)?;
    let next = match visits.last() {
        Some(last) if visits.len() == WINDOW_ROWS => last.id,
        _ => window.upto,
    };
    Ok((visits, next))
}

fn flat(windows: impl futures::Stream<Item = Result<Vec<Visit>>> + Send + 'static) -> VisitStream {
    windows
        .map_ok(|visits| stream::iter(visits.into_iter().map(Ok)))
        .try_flatten()
        .boxed()
}

impl super::LocalService {
    /// `owner`'s logged visits `query` asks for, oldest first. It ends at the newest visit
    /// logged when it began. A scope not the owner's is not found before anything is read.
    pub async fn visits(&self, owner: Id, query: VisitQuery) -> Result<VisitStream> {
        let upto = self.newest_visit(owner, query.scope.clone()).await?;
        let first = LogWindow {
            owner,
            scope: query.scope,
            since: query.since.map_or(i64::MIN, |t| t.as_second()),
            until: query.until.map_or(i64::MAX, |t| t.as_second()),
            after: query.after.unwrap_or(0).max(0),
            upto,
        };
        let store = self.store.clone();
        let windows = stream::try_unfold(first, move |w| {
            let store = store.clone();
            async move {
                if w.after >= w.upto {
                    return Ok(None);
                }
                let next = w.clone();
                let (visits, after) = store.snapshot(move |tx| read_window(tx, next)).await?;
                Ok(Some((visits, LogWindow { after, ..w })))
            }
        });
        Ok(flat(windows))
    }

    /// The visits to `owner`'s links in `scope` logged from now on (after visit `after`, when
    /// given), as they are logged; it never ends by itself. A scope not the owner's is not
    /// found at once.
    pub async fn live_visits(
        &self,
        owner: Id,
        scope: StatsScope,
        after: Option<Id>,
    ) -> Result<VisitStream> {
        let newest = self.newest_visit(owner, scope.clone()).await?;
        let start = after.map_or(newest, |a| a.clamp(0, newest));
        let store = self.store.clone();
        // `behind`: the last read stopped short of the newest visit, so the next one goes on at
        // once instead of waiting.
        let polls = stream::try_unfold((start, false), move |(after, behind)| {
            let (store, scope) = (store.clone(), scope.clone());
            async move {
                if !behind {
                    tokio::time::sleep(LIVE_POLL).await;
                }
                let (visits, next, upto) = store
                    .snapshot(move |tx| {
                        let upto = tx.last_visit_id()?;
                        let w = LogWindow {
                            owner,
                            scope,
                            since: i64::MIN,
                            until: i64::MAX,
                            after,
                            upto,
                        };
                        let (visits, next) = if after < upto {
                            read_window(tx, w)?
                        } else {
                            (Vec::new(), after)
                        };
                        Ok((visits, next, upto))
                    })
                    .await?;
                Ok(Some((visits, (next, next < upto))))
            }
        });
        Ok(flat(polls))
    }

    /// The id of the newest logged visit, once `scope` is found to be `owner`'s.
    async fn newest_visit(&self, owner: Id, scope: StatsScope) -> Result<i64> {
        self.store
            .snapshot(move |tx| {
                super::stats::owned(tx, owner, &scope)?;
                tx.last_visit_id()
            })
            .await
    }
}
