//! The accept loop: every connection is served by hyper (HTTP/1.1, or HTTP/2 with prior
//! knowledge) inside bounds a stranger cannot stretch.
//!
//! - **Open connections are capped** ([`Limits::max_connections`]), below the process's limit
//!   on open files, so `accept` never fails for lack of descriptors. When the cap is reached, the
//!   connections that sit idle are closed to make room (as nginx reuses its keep-alive
//!   connections when it runs out): a flood of idle sockets cannot lock out the next visitor.
//! - **A request's head must arrive within [`Limits::header_timeout`]** of the connection
//!   becoming ready for one, however slowly it trickles in.
//! - **A connection with nothing to do is closed** after [`Limits::idle_timeout`] (after
//!   `header_timeout` when it has never sent a request).
//! - **A request's head is at most [`Limits::max_head_bytes`]**; hyper refuses a longer one
//!   with 431 before reading its path (the tighter per-header limits, which answer in the
//!   path's own format, are in `heads`).
//!
//! A watchdog per connection enforces the timeouts. It sees the bytes read (through [`Tracked`])
//! and the requests in flight (through the service wrapper), so it applies to the first bytes
//! of a connection (while the HTTP version is still being sniffed) and to HTTP/2 alike.

use std::future::Future;
use std::io;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use axum::body::Body;
use axum::extract::ConnectInfo;
use hyper::body::Incoming;
use hyper_util::rt::{TokioExecutor, TokioIo, TokioTimer};
use hyper_util::server::conn::auto::Builder;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{Notify, Semaphore, watch};
use tower::ServiceExt;

use super::front::Front;

/// How long a connection must have been idle before the cap may close it to make room.
const DRAIN_AFTER: Duration = Duration::from_secs(1);
/// How often the accept loop, at the cap, asks idle connections again to make room.
const DRAIN_EVERY: Duration = Duration::from_millis(250);
/// Descriptors kept free beside the connections: the database, log files, the title fetcher's
/// sockets.
const RESERVED_FDS: usize = 64;
/// The cap when none is configured and the limit on open files does not ask for a lower one.
pub const DEFAULT_MAX_CONNECTIONS: usize = 20_000;

/// The bounds of the accept loop; see the module notes.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    pub max_connections: usize,
    pub header_timeout: Duration,
    pub idle_timeout: Duration,
    pub max_head_bytes: usize,
}

/// The process's limit on open files (the soft one), where the platform has one.
pub fn open_files_limit() -> Option<usize> {
    #[cfg(unix)]
    {
        let mut limit = libc::rlimit {
            rlim_cur: 0,
            rlim_max: 0,
        };
        // SAFETY: getrlimit writes into the struct we own and reads nothing else.
        let ok = unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit) } == 0;
        (ok && limit.rlim_cur != libc::RLIM_INFINITY).then_some(limit.rlim_cur as usize)
    }
    #[cfg(not(unix))]
    {
        None
    }
}

/// Raises the soft limit on open files to the hard one, as a server that holds one descriptor
/// per visitor should (the soft default of 1,024 would cap `serve` at a few hundred visitors).
/// For the command line only: a library should not change its host's limits.
pub fn raise_open_files_limit() {
    #[cfg(unix)]
    {
        let mut limit = libc::rlimit {
            rlim_cur: 0,
            rlim_max: 0,
        };
        // SAFETY: both calls only read and write the struct we own.
        unsafe {
            if libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit) == 0
                && limit.rlim_cur < limit.rlim_max
            {
                limit.rlim_cur = limit.rlim_max;
                libc::setrlimit(libc::RLIMIT_NOFILE, &limit);
            }
        }
    }
}

/// The cap to use: `configured` (0 = automatic), never so high that accepting could run out of
/// descriptors.
pub fn connection_cap(configured: usize, open_files: Option<usize>) -> usize {
    let wanted = if configured == 0 {
        DEFAULT_MAX_CONNECTIONS
    } else {
        configured
    };
    match open_files {
        Some(limit) => {
            let reserve = (limit / 10).clamp(RESERVED_FDS / 2, RESERVED_FDS * 16);
            wanted.min(limit.saturating_sub(reserve).max(1))
        }
        None => wanted,
    }
}

/// What the watchdog of one connection knows about it.
struct Activity {
    started: Instant,
    /// Milliseconds since `started` of the last read that returned bytes.
    last_read: AtomicU64,
    /// Milliseconds since `started` at which the connection last became idle (no request in
    /// flight): its start, or the end of its last request.
    idle_since: AtomicU64,
    in_flight: AtomicUsize,
    requests: AtomicU64,
}

impl Activity {
    fn new() -> Activity {
        Activity {
            started: Instant::now(),
            last_read: AtomicU64::new(0),
            idle_since: AtomicU64::new(0),
            in_flight: AtomicUsize::new(0),
            requests: AtomicU64::new(0),
        }
    }

    fn now_ms(&self) -> u64 {
        self.started.elapsed().as_millis() as u64
    }

    /// When the connection must be closed if nothing changes, or `None` while a request is in
    /// flight (the request timeout bounds it then).
    fn deadline(&self, limits: &Limits) -> Option<Instant> {
        if self.in_flight.load(Ordering::Acquire) > 0 {
            return None;
        }
        let idle_since = self.idle_since.load(Ordering::Acquire);
        let last_read = self.last_read.load(Ordering::Acquire);
        let never_asked = self.requests.load(Ordering::Acquire) == 0;
        // Bytes since it became idle are the start of a request: its head has `header_timeout`.
        let timeout = if last_read > idle_since || never_asked {
            limits.header_timeout
        } else {
            limits.idle_timeout
        };
        Some(self.started + Duration::from_millis(idle_since) + timeout)
    }

    /// Idle for at least `DRAIN_AFTER`: no request in flight, nothing read lately.
    fn drainable(&self) -> bool {
        let now = self.now_ms();
        let quiet = self
            .last_read
            .load(Ordering::Acquire)
            .max(self.idle_since.load(Ordering::Acquire));
        self.in_flight.load(Ordering::Acquire) == 0
            && now.saturating_sub(quiet) >= DRAIN_AFTER.as_millis() as u64
    }
}

/// A socket that tells its [`Activity`] when bytes arrive.
struct Tracked {
    inner: TcpStream,
    activity: Arc<Activity>,
}

impl AsyncRead for Tracked {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let before = buf.filled().len();
        let polled = Pin::new(&mut self.inner).poll_read(cx, buf);
        if matches!(polled, Poll::Ready(Ok(()))) && buf.filled().len() > before {
            let now = self.activity.now_ms();
            self.activity.last_read.store(now, Ordering::Release);
        }
        polled
    }
}

impl AsyncWrite for Tracked {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.inner).poll_write(cx, buf)
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.inner).poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.inner.is_write_vectored()
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_shutdown(cx)
    }
}

/// Marks a request in flight for as long as it lives: until its response's body is dropped.
struct InFlight(Arc<Activity>);

impl InFlight {
    fn start(activity: &Arc<Activity>) -> InFlight {
        activity.in_flight.fetch_add(1, Ordering::AcqRel);
        activity.requests.fetch_add(1, Ordering::AcqRel);
        InFlight(activity.clone())
    }
}

impl Drop for InFlight {
    fn drop(&mut self) {
        let now = self.0.now_ms();
        self.0.idle_since.store(now, Ordering::Release);
        self.0.in_flight.fetch_sub(1, Ordering::AcqRel);
    }
}

fn builder(limits: &Limits) -> Builder<TokioExecutor> {
    let mut builder = Builder::new(TokioExecutor::new());
    builder
        .http1()
        .timer(TokioTimer::new())
        // The watchdog times heads out, for HTTP/2 and the version sniffing too.
        .header_read_timeout(None)
        .max_buf_size(limits.max_head_bytes.max(8192));
    builder
        .http2()
        .timer(TokioTimer::new())
        .max_header_list_size(limits.max_head_bytes as u32)
        .max_concurrent_streams(100);
    builder
}

/// Accepts and serves connections on `listener` until `shutdown` completes; then stops
/// accepting, lets every connection finish the requests it has in flight, and returns.
pub(crate) async fn run(
    listener: TcpListener,
    front: Front,
    limits: Limits,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> io::Result<()> {
    let builder = Arc::new(builder(&limits));
    let front = Arc::new(front);
    let slots = Arc::new(Semaphore::new(limits.max_connections.max(1)));
    let pressure = Arc::new(Notify::new());
    // Connections hold a receiver; the sender's change (or drop) starts their graceful close,
    // and `closed()` resolves once every connection is gone.
    let (stop_tx, stop_rx) = watch::channel(false);
    let mut shutdown = std::pin::pin!(shutdown);
    'accept: loop {
        let permit = match slots.clone().try_acquire_owned() {
            Ok(permit) => permit,
            Err(_) => {
                // At the cap: ask idle connections to make room until a slot frees.
                let mut drain = tokio::time::interval(DRAIN_EVERY);
                loop {
                    tokio::select! {
                        permit = slots.clone().acquire_owned() => break permit.expect("never closed"),
                        _ = drain.tick() => pressure.notify_waiters(),
                        () = &mut shutdown => break 'accept,
                    }
                }
            }
        };
        let (stream, peer) = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok(accepted) => accepted,
                Err(e) => {
                    // Per-connection failures (reset before accept) are routine; anything else
                    // (out of descriptors despite the cap) gets a pause instead of a busy loop.
                    if !matches!(e.kind(), io::ErrorKind::ConnectionAborted | io::ErrorKind::ConnectionReset) {
                        tracing::warn!(error = %e, "accepting a connection failed");
                        tokio::time::sleep(Duration::from_millis(50)).await;
                    }
                    continue;
                }
            },
            () = &mut shutdown => break 'accept,
        };
        // Redirect answers are tiny: send them at once.
        let _ = stream.set_nodelay(true);
        let connection = Connection {
            builder: builder.clone(),
            front: front.clone(),
            limits,
            pressure: pressure.clone(),
            stop: stop_rx.clone(),
        };
        tokio::spawn(async move {
            connection.serve(stream, peer).await;
            drop(permit);
        });
    }
    drop(listener);
    drop(stop_rx);
    let _ = stop_tx.send(true);
    stop_tx.closed().await;
    Ok(())
}

struct Connection {
    builder: Arc<Builder<TokioExecutor>>,
    front: Arc<Front>,
    limits: Limits,
    pressure: Arc<Notify>,
    stop: watch::Receiver<bool>,
}

impl Connection {
    async fn serve(mut self, stream: TcpStream, peer: SocketAddr) {
        let activity = Arc::new(Activity::new());
        let io = TokioIo::new(Tracked {
            inner: stream,
            activity: activity.clone(),
        });
        let front = self.front.clone();
        let tracker = activity.clone();
        let service = hyper::service::service_fn(move |mut request: hyper::Request<Incoming>| {
            let in_flight = InFlight::start(&tracker);
            let front = front.clone();
            async move {
                if front.direct(&request) {
                    // A redirect's body is whole when it is answered: nothing streams after.
                    let response = front.redirect(request, peer).await;
                    drop(in_flight);
                    return Ok(response);
                }
                request.extensions_mut().insert(ConnectInfo(peer));
                let response = front.app().clone().oneshot(request.map(Body::new)).await;
                // The request is in flight until its body has gone out: a stream (an export, a
                // live feed) is not an idle connection.
                response.map(|r| {
                    r.map(|body| {
                        Body::new(http_body_util::BodyExt::map_frame(body, move |frame| {
                            let _held = &in_flight;
                            frame
                        }))
                    })
                })
            }
        });
        let conn = self.builder.serve_connection(io, service);
        let mut conn = std::pin::pin!(conn);
        let mut closing = false;
        loop {
            let deadline = activity.deadline(&self.limits);
            let sleep = async {
                match deadline {
                    Some(at) => tokio::time::sleep_until(at.into()).await,
                    // In flight: look again shortly (the request will end, or time out).
                    None => tokio::time::sleep(self.limits.header_timeout).await,
                }
            };
            tokio::select! {
                result = conn.as_mut() => {
                    if let Err(e) = result {
                        tracing::debug!(%peer, error = %e, "connection ended with an error");
                    }
                    return;
                }
                () = sleep => {
                    if activity.deadline(&self.limits).is_some_and(|at| at <= Instant::now()) {
                        // Nothing in flight to finish: close the socket outright.
                        return;
                    }
                }
                () = self.pressure.notified(), if !closing => {
                    if activity.drainable() {
                        return;
                    }
                }
                changed = self.stop.changed(), if !closing => {
                    let _ = changed;
                    closing = true;
                    conn.as_mut().graceful_shutdown();
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_cap_stays_below_the_open_files_limit() {
        assert_eq!(connection_cap(0, None), DEFAULT_MAX_CONNECTIONS);
        assert_eq!(connection_cap(500, None), 500);
        assert_eq!(connection_cap(0, Some(1024)), 1024 - 102);
        assert_eq!(connection_cap(0, Some(256)), 256 - 32);
        assert_eq!(connection_cap(0, Some(1_048_576)), DEFAULT_MAX_CONNECTIONS);
        assert_eq!(connection_cap(100, Some(1024)), 100);
        assert_eq!(connection_cap(0, Some(10)), 1);
    }

    #[test]
    fn a_silent_connection_gets_the_header_timeout_and_an_idle_one_the_idle_timeout() {
        let limits = Limits {
            max_connections: 1,
            header_timeout: Duration::from_secs(10),
            idle_timeout: Duration::from_secs(60),
            max_head_bytes: 8192,
        };
        let a = Activity::new();
        assert_eq!(a.deadline(&limits), Some(a.started + limits.header_timeout));
        let request = InFlight::start(&Arc::new(Activity::new()));
        assert_eq!(request.0.deadline(&limits), None, "in flight");
        let activity = request.0.clone();
        drop(request);
        let idle = activity.idle_since.load(Ordering::Acquire);
        assert_eq!(
            activity.deadline(&limits),
            Some(activity.started + Duration::from_millis(idle) + limits.idle_timeout)
        );
        // A byte of the next request: its head now has the header timeout.
        activity.last_read.store(idle + 1, Ordering::Release);
        assert_eq!(
            activity.deadline(&limits),
            Some(activity.started + Duration::from_millis(idle) + limits.header_timeout)
        );
    }
}
