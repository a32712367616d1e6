//! Exact click counting, off the request path where it can be.
//!
//! A redirect reserves its click in the in-memory [`Ledger`] (one lock, no I/O) and hands the
//! visit to the [`writer`] task over a channel; the writer stores visits in batches (every
//! `flush_interval` or `flush_batch` visits, one transaction each) and is drained on shutdown.
//!
//! Exactness: per link the ledger knows `known` (clicks in the database as of the last write it
//! saw) and `pending` (reserved, not yet written). `known + pending` is the true count, so a
//! link limited to N clicks is redirected exactly N times however many requests race, even
//! before anything reaches the database. Rotation is decided under the same lock (plain
//! round-robin over the rotation URLs) and the writer persists the next position in
//! `links.last_rotation` with each batch, so a restart continues the cycle (a server killed
//! between batches gives a few URLs their turn again, which costs nothing).
//!
//! A click the ledger holds is lost if the process is killed before its batch, and that must
//! not let a limited link past its limit: the clicks of a link with a click limit are reserved
//! in the database instead, before the visitor is answered ([`reserve`]; on either store, the
//! clicks waiting at one moment reserved by one transaction, see the contract's `quota.rs`).
//! On PostgreSQL, where several servers share the database, so are the clicks of rotation
//! links, whose turn is shared. The visit then goes to the writer marked as counted, and its
//! batch adds the rollups and the log row but not the click again. Every other link keeps the
//! cheap path: counted in memory, written in batches.

use std::collections::HashMap;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use jiff::Timestamp;
use tokio::sync::{mpsc, oneshot};

use crate::backend::local::serving::LocalService;
use crate::backend::local::serving::ResolvedLink;
use crate::backend::local::serving::{ClickReservation, Interner};
use crate::backend::local::serving::{OrphanVisit, VisitBatch, VisitRow};
use crate::domain::{Id, LinkStatus, TargetType};

#[derive(Debug, Default)]
struct Counter {
    known: u64,
    pending: u64,
    /// Index of the rotation URL the next counted visit gets.
    next_rotation: u32,
    /// Whether the link rotates, so the writer persists `next_rotation`.
    rotates: bool,
}

/// What a reservation decided.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reservation {
    /// The click limit is reached: the visit is not counted.
    Exhausted,
    /// The click is counted; for rotation links, the index of the URL to send the visitor to.
    /// `stored`: the database holds the click already (see [`reserve`]).
    Counted {
        rotation: Option<usize>,
        stored: bool,
    },
}

/// Reserves one click of `link`, exactly: in the database when it has a click limit, or rotates
/// on a database several servers share; in the ledger otherwise.
pub async fn reserve(
    service: &LocalService,
    ledger: &Ledger,
    link: &ResolvedLink,
) -> crate::domain::Result<Reservation> {
    let rotation = match link.target_type {
        TargetType::Rotation => link.rotation.len(),
        _ => 0,
    };
    let shared_turn = rotation > 0 && service.counts_are_shared();
    if link.expiration_clicks == 0 && !shared_turn {
        return Ok(ledger.reserve(link));
    }
    Ok(match service.reserve_click(link.id, rotation).await? {
        ClickReservation::Counted { clicks, rotation } => {
            ledger.stored(link, Some(clicks));
            Reservation::Counted {
                rotation,
                stored: true,
            }
        }
        ClickReservation::Refused => {
            ledger.stored(link, None);
            Reservation::Exhausted
        }
        // The database has no reserved count for the link any more (an edit took its limit
        // away, and this copy of it is older): counted as any other link's click.
        ClickReservation::NotShared => ledger.reserve(link),
    })
}

/// In-memory click state of every link visited since the server started.
#[derive(Debug, Default)]
pub struct Ledger {
    counters: Mutex<HashMap<Id, Counter>>,
    /// Writes begun and writes finished; a database read taken while they are equal and
    /// unchanged across the read saw every finished write and no half-applied one.
    writes_started: AtomicU64,
    writes_finished: AtomicU64,
}

impl Ledger {
    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<Id, Counter>> {
        self.counters.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn counter<'a>(map: &'a mut HashMap<Id, Counter>, link: &ResolvedLink) -> &'a mut Counter {
        map.entry(link.id).or_insert_with(|| Counter {
            known: link.clicks,
            pending: 0,
            next_rotation: link.last_rotation,
            rotates: false,
        })
    }

    /// The link's clicks including those not yet written.
    pub fn clicks(&self, link: &ResolvedLink) -> u64 {
        let map = self.lock();
        map.get(&link.id)
            .map_or(link.clicks, |c| c.known + c.pending)
    }

    /// The link's status at `now` ([`LinkStatus::derive`]), counting clicks not yet written.
    pub fn status(&self, link: &ResolvedLink, now: Timestamp) -> LinkStatus {
        LinkStatus::derive(
            link.disabled,
            link.ends_at,
            link.expiration_clicks,
            self.clicks(link),
            now,
        )
    }

    /// Reserves one click atomically: refused once the link's limit is reached.
    pub fn reserve(&self, link: &ResolvedLink) -> Reservation {
        let mut map = self.lock();
        let c = Self::counter(&mut map, link);
        if LinkStatus::click_limit_reached(link.expiration_clicks, c.known + c.pending) {
            return Reservation::Exhausted;
        }
        c.pending += 1;
        let rotation = match (link.target_type, link.rotation.len()) {
            (TargetType::Rotation, n) if n > 0 => {
                let index = c.next_rotation as usize % n;
                c.next_rotation = ((index + 1) % n) as u32;
                c.rotates = true;
                Some(index)
            }
            _ => None,
        };
        Reservation::Counted {
            rotation,
            stored: false,
        }
    }

    /// Takes in what a reservation in the database found: the link's clicks after it, or
    /// (`None`, refused) that its limit is reached. The database decides every such click;
    /// this only lets later visits see the limit without asking it again.
    fn stored(&self, link: &ResolvedLink, clicks: Option<u64>) {
        let mut map = self.lock();
        let c = Self::counter(&mut map, link);
        let now = clicks.unwrap_or(u64::from(link.expiration_clicks));
        c.known = c.known.max(now);
    }

    /// Takes back a reservation whose visit could not be queued.
    fn release(&self, link_id: Id) {
        if let Some(c) = self.lock().get_mut(&link_id) {
            c.pending = c.pending.saturating_sub(1);
        }
    }

    /// Marks the start of a database read of links; pass the token to [`Ledger::observed`].
    pub fn read_token(&self) -> Option<u64> {
        let started = self.writes_started.load(Ordering::Acquire);
        (started == self.writes_finished.load(Ordering::Acquire)).then_some(started)
    }

    /// Takes in what a database read (begun at `token`) says of a link, so changes made by
    /// other processes reach the ledger; ignored when a write overlapped the read.
    pub fn observed(&self, token: Option<u64>, link: &ResolvedLink) {
        let Some(token) = token else { return };
        let mut map = self.lock();
        if self.writes_started.load(Ordering::Acquire) != token {
            return;
        }
        if let Some(c) = map.get_mut(&link.id) {
            c.known = link.clicks;
        }
    }

    fn rotations(&self, ids: impl Iterator<Item = Id>) -> Vec<(Id, u32)> {
        let map = self.lock();
        ids.filter_map(|id| {
            map.get(&id)
                .filter(|c| c.rotates)
                .map(|c| (id, c.next_rotation))
        })
        .collect()
    }
}

enum Msg {
    /// A counted visit, and whether the database holds its click already.
    Visit(VisitRow, bool),
    /// A link-preview agent's fetch of a link.
    Preview(Id),
    /// A request no link answered.
    Orphan(Box<OrphanVisit>),
    Flush(oneshot::Sender<()>),
}

/// The sending side of the click writer. Cloning is cheap.
#[derive(Clone)]
pub struct Clicks {
    tx: mpsc::UnboundedSender<Msg>,
}

impl Clicks {
    /// Queues a counted visit; `stored` says the database holds its click already. If the
    /// writer is gone (the server is stopping) an in-memory reservation is released so the
    /// count stays true.
    pub fn record(&self, ledger: &Ledger, visit: VisitRow, stored: bool) {
        let link_id = visit.link_id;
        if self.tx.send(Msg::Visit(visit, stored)).is_err() {
            if !stored {
                ledger.release(link_id);
            }
            tracing::error!(link_id, "click writer stopped; visit not recorded");
        }
    }

    /// Queues a preview of link `id`, written with the next batch like a click (a preview
    /// reserves nothing: it has no limit).
    pub fn preview(&self, id: Id) {
        if self.tx.send(Msg::Preview(id)).is_err() {
            tracing::error!(link_id = id, "click writer stopped; preview not recorded");
        }
    }

    /// Queues an orphan visit, written with the next batch.
    pub fn orphan(&self, visit: OrphanVisit) {
        if self.tx.send(Msg::Orphan(Box::new(visit))).is_err() {
            tracing::error!("click writer stopped; orphan visit not recorded");
        }
    }

    /// Writes everything queued so far; returns once it is in the database.
    pub async fn flush(&self) {
        let (tx, rx) = oneshot::channel();
        if self.tx.send(Msg::Flush(tx)).is_ok() {
            let _ = rx.await;
        }
    }
}

/// Settings of the writer.
#[derive(Debug, Clone, Copy)]
pub struct WriterOptions {
    pub interval: Duration,
    pub batch: usize,
    /// Raw visits kept for the log while the database cannot be written.
    pub raw_pending: usize,
}

/// Starts the writer task. It ends, after writing everything queued, when every [`Clicks`]
/// handle is dropped.
pub fn writer(
    service: LocalService,
    ledger: std::sync::Arc<Ledger>,
    opts: WriterOptions,
) -> (Clicks, tokio::task::JoinHandle<()>) {
    let (tx, rx) = mpsc::unbounded_channel();
    let task = tokio::spawn(run(service, ledger, opts, rx));
    (Clicks { tx }, task)
}

async fn run(
    service: LocalService,
    ledger: std::sync::Arc<Ledger>,
    opts: WriterOptions,
    mut rx: mpsc::UnboundedReceiver<Msg>,
) {
    let mut batch = VisitBatch::keeping(opts.raw_pending);
    let mut waiters: Vec<oneshot::Sender<()>> = Vec::new();
    let interner = std::sync::Arc::new(Mutex::new(Interner::default()));
    let mut inbox = Vec::with_capacity(opts.batch);
    let mut open = true;
    // Raw rows already reported as dropped, so each warning tells what is new.
    let mut reported = 0;
    while open || !batch.is_empty() {
        if open && batch.is_empty() && waiters.is_empty() {
            // Idle: wait for the first message without a deadline.
            if rx.recv_many(&mut inbox, opts.batch).await == 0 {
                open = false;
            }
        }
        // Gather until the interval passes, the batch is full, or someone asks for a flush.
        let deadline = tokio::time::Instant::now() + opts.interval;
        loop {
            take(&mut inbox, &mut batch, &mut waiters);
            if !open || batch.len() >= opts.batch as u64 || !waiters.is_empty() {
                break;
            }
            match tokio::time::timeout_at(deadline, rx.recv_many(&mut inbox, opts.batch)).await {
                Ok(0) => open = false,
                Ok(_) => {}
                Err(_) => break,
            }
        }
        if !batch.is_empty() {
            let empty = batch.emptied();
            let pending = std::mem::replace(&mut batch, empty);
            match write(&service, &ledger, pending, &interner).await {
                Ok(dropped) => {
                    if dropped > 0 {
                        tracing::warn!(
                            dropped,
                            "raw visits were not logged while the database could not be written; \
                             clicks and statistics are exact"
                        );
                    }
                    reported = 0;
                }
                Err(back) => {
                    // Keep the visits and try again shortly; a click is never dropped while the
                    // database can still be reached. What keeps arriving meanwhile is taken in
                    // (the batch stays bounded: see `VisitBatch`), never left in the channel.
                    batch = back;
                    if batch.dropped() > reported {
                        tracing::warn!(
                            dropped = batch.dropped() - reported,
                            "the visit log is full while the database cannot be written; raw \
                             visits are being dropped (clicks and statistics stay exact)"
                        );
                        reported = batch.dropped();
                    }
                    let pause = tokio::time::Instant::now() + RETRY_PAUSE;
                    while open {
                        match tokio::time::timeout_at(pause, rx.recv_many(&mut inbox, opts.batch))
                            .await
                        {
                            Ok(0) => open = false,
                            Ok(_) => take(&mut inbox, &mut batch, &mut waiters),
                            Err(_) => break,
                        }
                    }
                    if !open {
                        batch = last_tries(&service, &ledger, batch, &interner).await;
                    }
                    continue;
                }
            }
        }
        for done in waiters.drain(..) {
            let _ = done.send(());
        }
    }
    for done in waiters.drain(..) {
        let _ = done.send(());
    }
}

/// How long a failed write waits before the next try.
const RETRY_PAUSE: Duration = Duration::from_millis(200);

fn take(inbox: &mut Vec<Msg>, batch: &mut VisitBatch, waiters: &mut Vec<oneshot::Sender<()>>) {
    for msg in inbox.drain(..) {
        match msg {
            Msg::Visit(v, false) => batch.add(v),
            Msg::Visit(v, true) => batch.add_counted(v),
            Msg::Preview(id) => batch.add_preview(id),
            Msg::Orphan(v) => batch.add_orphan(&v),
            Msg::Flush(done) => waiters.push(done),
        }
    }
}

/// Shutting down with a batch the database refused: a few more tries, then give up loudly.
async fn last_tries(
    service: &LocalService,
    ledger: &std::sync::Arc<Ledger>,
    mut batch: VisitBatch,
    interner: &std::sync::Arc<Mutex<Interner>>,
) -> VisitBatch {
    for _ in 0..10 {
        match write(service, ledger, batch, interner).await {
            Ok(_) => return VisitBatch::default(),
            Err(back) => {
                batch = back;
                tokio::time::sleep(Duration::from_millis(500)).await;
            }
        }
    }
    tracing::error!(
        visits = batch.len(),
        "could not record visits before stopping"
    );
    VisitBatch::default()
}

/// Writes one batch; gives it back when the database refused it. On success, says how many raw
/// rows the batch had dropped.
async fn write(
    service: &LocalService,
    ledger: &std::sync::Arc<Ledger>,
    batch: VisitBatch,
    interner: &std::sync::Arc<Mutex<Interner>>,
) -> Result<u64, VisitBatch> {
    let added = batch.clicks_to_add();
    ledger.writes_started.fetch_add(1, Ordering::AcqRel);
    let rotations = ledger.rotations(added.keys().copied());
    let outcome = match service.write_visits(batch, rotations, interner).await {
        (Ok(flushed), batch) => {
            let mut map = ledger.lock();
            for f in &flushed {
                if let Some(c) = map.get_mut(&f.link_id) {
                    c.known = f.clicks;
                    c.pending = c.pending.saturating_sub(added[&f.link_id]);
                }
            }
            // Links deleted meanwhile: their visits were dropped, so is their state.
            if flushed.len() < added.len() {
                let kept: std::collections::HashSet<Id> =
                    flushed.iter().map(|f| f.link_id).collect();
                for id in added.keys().filter(|id| !kept.contains(id)) {
                    map.remove(id);
                }
            }
            Ok(batch.dropped())
        }
        (Err(e), batch) => {
            tracing::warn!(error = %e, visits = batch.len(), "writing visits failed; will retry");
            Err(batch)
        }
    };
    ledger.writes_finished.fetch_add(1, Ordering::AcqRel);
    outcome
}

#[cfg(test)]
mod tests {
    use super::*;

    fn link(limit: u32, rotation: usize) -> ResolvedLink {
        ResolvedLink {
            id: 1,
            owner_id: 1,
            alias: "a".into(),
            url: "https://example.com".into(),
            location: "https://example.com/".into(),
            password_hash: None,
            disabled: false,
            public: false,
            expiration_url: None,
            expiration_clicks: limit,
            ends_at: None,
            clicks: 0,
            target_type: if rotation > 0 {
                TargetType::Rotation
            } else {
                TargetType::None
            },
            geo: vec![],
            platform: vec![],
            rotation: (0..rotation)
                .map(|i| format!("https://r{i}.example"))
                .collect(),
            options: Default::default(),
            last_rotation: 0,
        }
    }

    #[test]
    fn reservations_stop_exactly_at_the_limit_from_many_threads() {
        let ledger = std::sync::Arc::new(Ledger::default());
        let l = std::sync::Arc::new(link(100, 0));
        let counted: usize = (0..4)
            .map(|_| {
                let (ledger, l) = (ledger.clone(), l.clone());
                std::thread::spawn(move || {
                    (0..100)
                        .filter(|_| ledger.reserve(&l) != Reservation::Exhausted)
                        .count()
                })
            })
            .map(|t| t.join().unwrap())
            .sum();
        assert_eq!(counted, 100);
        assert!(ledger.status(&l, Timestamp::now()).expired);
        assert_eq!(ledger.clicks(&l), 100);
    }

    #[test]
    fn rotation_is_plain_round_robin() {
        let ledger = Ledger::default();
        let l = link(0, 3);
        let order: Vec<Option<usize>> = (0..7)
            .map(|_| match ledger.reserve(&l) {
                Reservation::Counted { rotation, .. } => rotation,
                Reservation::Exhausted => panic!("no limit"),
            })
            .collect();
        let want: Vec<Option<usize>> = [0, 1, 2, 0, 1, 2, 0].into_iter().map(Some).collect();
        assert_eq!(order, want);
    }

    #[test]
    fn a_read_overlapping_a_write_does_not_reset_counts() {
        let ledger = Ledger::default();
        let l = link(10, 0);
        ledger.reserve(&l);
        let token = ledger.read_token();
        ledger.writes_started.fetch_add(1, Ordering::AcqRel);
        // The database still says 0, but a write began meanwhile: keep what we know.
        ledger.observed(token, &l);
        assert_eq!(ledger.clicks(&l), 1);
        assert_eq!(
            ledger.read_token(),
            None,
            "no clean read while a write is in flight"
        );
        ledger.writes_finished.fetch_add(1, Ordering::AcqRel);
        let token = ledger.read_token();
        let elsewhere = ResolvedLink {
            clicks: 5,
            ..link(10, 0)
        };
        ledger.observed(token, &elsewhere);
        assert_eq!(
            ledger.clicks(&l),
            6,
            "known from the database plus the pending click"
        );
    }
}
