//! `linkdeck serve`: the v1 API and the short-link redirects over the embedded service.
//!
//! Start it in-process with [`start`] (tests, embedding) or run it until a shutdown signal with
//! [`serve`] (the CLI). Either way a graceful stop writes every counted click before returning.

mod access;
mod api;
mod clicks;
pub mod connections;
mod error;
mod extract;
mod form;
mod front;
mod heads;
mod limit;
mod linkdeck;
mod orphans;
mod pages;
mod params;
mod passwords;
mod proxies;
mod public_stats;
mod qr;
mod redirect;
mod resolve;
mod slots;
mod upkeep;
mod visitor;
mod visits_out;
mod webhooks;

pub use webhooks::WebhookSettings;

use std::future::Future;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use axum::Router;
use axum::body::Body;
use axum::extract::DefaultBodyLimit;
use axum::http::{Request, StatusCode};
use axum::middleware::{self, Next};
use axum::response::Response;
use axum::routing::get;
use tokio::net::TcpListener;
use tokio::sync::oneshot;

pub use api::LimitKey;
pub use clicks::{Ledger, Reservation};
pub use redirect::plain_location;
pub use upkeep::Backups;
pub use visitor::{AgentParser, platform_of};

use crate::backend::local::serving::LocalService;
use crate::config::{ForwardedHeader, ServeConfig};
use crate::domain::{AddressLog, Error, HostSettings, RedirectStatus, Result};

/// How the server behaves. [`ServeOptions::default`] is what `linkdeck serve` uses without a
/// config file.
#[derive(Debug, Clone)]
pub struct ServeOptions {
    /// Where the CLI listens (the library takes a bound listener instead).
    pub listen: SocketAddr,
    /// Base of the API's page URLs; empty means the service's `public_url`.
    pub public_url: String,
    /// A trusted request header holding the visitor's country code, such as `CF-IPCountry`.
    pub geo_header: Option<String>,
    /// A MaxMind country database, used when the header is absent.
    pub geoip_db: Option<PathBuf>,
    /// 301, 302, 307 or 308, checked where it is made.
    pub redirect_status: RedirectStatus,
    /// API requests per key (or per address without a valid key) per minute; 0 = no limit.
    pub api_rate_limit: u32,
    /// Password attempts per visitor and link per minute; 0 = no limit.
    pub password_attempts: u32,
    /// Wrong password guesses per link per minute, from all visitors together; 0 = no limit.
    pub password_guesses_per_link: u32,
    /// Password checks running at once (each takes ~19 MiB and a core for a moment); 0 = half
    /// the cores, at least one.
    pub password_checks: usize,
    /// Largest request body accepted, in bytes.
    pub body_limit: usize,
    pub request_timeout: Duration,
    /// Open connections at most; 0 = 20,000, or fewer when the limit on open files asks.
    pub max_connections: usize,
    /// How long a request's head may take to arrive, once the connection waits for one.
    pub header_timeout: Duration,
    /// How long a connection may sit idle between requests before it is closed.
    pub idle_timeout: Duration,
    /// How long an alias lookup may be reused at most (0 turns the cache off).
    pub resolve_cache: Duration,
    /// How many links, the most clicked first, the alias cache is filled with before the server
    /// listens (0: none); each takes a few hundred bytes.
    pub warm_aliases: usize,
    /// How often the server asks the database whether another process changed it (and then
    /// forgets its cached lookups): the delay before the TUI's or the CLI's edits show. On
    /// PostgreSQL changes are announced and the answer is in memory, so the server looks at
    /// least every 20 ms whatever this says.
    pub change_poll: Duration,
    /// Visits are written at least this often (twice a second: a live feed shows a visit
    /// within a second of its redirect)…
    pub flush_interval: Duration,
    /// …or as soon as this many are waiting.
    pub flush_batch: usize,
    /// Raw visits held for the log at most while the database cannot be written (a full disk):
    /// past this they are dropped with a warning; clicks and statistics stay exact.
    pub pending_log_max: usize,
    /// How long a public stats page is reused per link and period (0 turns the cache off).
    pub stats_cache: Duration,
    /// Raw visits older than this are pruned from the visit log (`None` keeps them all);
    /// statistics read the rollups, which are kept.
    pub visit_log_retention: Option<Duration>,
    /// What the visit log keeps of a visitor's address (`[serve] visitor_addresses`).
    pub visitor_addresses: AddressLog,
    /// How often the raw log is pruned (and deleted links' visits removed).
    pub upkeep_every: Duration,
    /// The reverse proxies allowed to name a request's visitor (`[serve] trusted_proxies`);
    /// empty trusts no header.
    pub trusted_proxies: Vec<ipnet::IpNet>,
    /// The header they name the visitor in.
    pub forwarded_header: ForwardedHeader,
    /// Dated backups of the SQLite file on a schedule (`[serve] backup_every`); none when
    /// `None`.
    pub backups: Option<Backups>,
    /// What the server's own host (every host that is no domain) answers when no link does:
    /// its fallbacks and robots policy (`[serve] root_url`, `unknown_url`, `expired_url`,
    /// `robots`, `robots_txt`). A domain has its own.
    pub host: HostSettings,
    /// Webhooks: subscriptions taken over the API and their outbox delivered; none when
    /// `None` (the API answers that this server does not deliver them).
    pub webhooks: Option<WebhookSettings>,
}

impl Default for ServeOptions {
    fn default() -> Self {
        ServeOptions {
            listen: SocketAddr::from(([127, 0, 0, 1], 8080)),
            public_url: String::new(),
            geo_header: None,
            geoip_db: None,
            redirect_status: RedirectStatus::default(),
            api_rate_limit: 600,
            password_attempts: 10,
            password_guesses_per_link: 100,
            password_checks: 0,
            body_limit: 64 * 1024,
            request_timeout: Duration::from_secs(30),
            max_connections: 0,
            header_timeout: Duration::from_secs(10),
            idle_timeout: Duration::from_secs(30),
            resolve_cache: Duration::from_secs(60),
            warm_aliases: ServeConfig::default().warm_aliases,
            change_poll: Duration::from_millis(250),
            flush_interval: Duration::from_millis(500),
            flush_batch: 50_000,
            pending_log_max: crate::backend::local::serving::RAW_PENDING_MAX,
            stats_cache: Duration::from_secs(5),
            visit_log_retention: ServeConfig::default().visit_log_retention(),
            visitor_addresses: AddressLog::default(),
            upkeep_every: upkeep::EVERY,
            trusted_proxies: Vec::new(),
            forwarded_header: ForwardedHeader::default(),
            backups: None,
            host: HostSettings::default(),
            webhooks: None,
        }
    }
}

/// The status line of `status`; [`RedirectStatus`] only holds codes that have one.
fn status_code(status: RedirectStatus) -> StatusCode {
    StatusCode::from_u16(status.code()).unwrap_or(StatusCode::MOVED_PERMANENTLY)
}

/// Everything the handlers share.
pub(crate) struct AppState {
    service: LocalService,
    public_url: String,
    redirect_status: StatusCode,
    cache: Arc<resolve::ResolveCache>,
    ledger: Arc<Ledger>,
    clicks: clicks::Clicks,
    agents: visitor::AgentParser,
    geo: visitor::GeoSource,
    visitor_addresses: AddressLog,
    /// Who may name a request's visitor: see `proxies::Visitor`.
    proxies: proxies::TrustedProxies,
    api_limiter: limit::RateLimiter<LimitKey>,
    /// Requests for public pages (statistics, QR codes) per visitor, under the API's
    /// per-minute limit: see [`AppState::public_page`].
    public_limiter: limit::RateLimiter<std::net::IpAddr>,
    stats_cache: public_stats::StatsCache,
    qr_codes: qr::Codes,
    passwords: passwords::PasswordGate,
    key_use: limit::KeyUse,
    /// Turns of linkdeck's import endpoint (see `linkdeck::IMPORTS_AT_ONCE`).
    imports: tokio::sync::Semaphore,
    /// Turns of the visit export and the live feeds (`visits_out`).
    visit_turns: visits_out::Turns,
    /// What webhook subscriptions need (`webhooks`), when this server delivers them.
    webhooks: Option<WebhookSettings>,
}

impl AppState {
    /// Counts a request from `who` for a public page that costs the server work (a link's
    /// statistics, a QR code). A visitor is an IPv4 address or an IPv6 /64, as for passwords.
    fn public_page(&self, who: proxies::Visitor) -> limit::Decision {
        self.public_limiter.hit(&visitor::network(who.0))
    }
}

/// The outermost middleware, one layer doing three things (each `from_fn` layer costs every
/// request a boxed future and a boxed copy of the service below it), from the outside in:
/// - the access log ([`access`]);
/// - the JSON guard: every error answer on `/api/` carries a JSON body ([`error::json_errors`]);
/// - the header bounds: 431 for a request whose headers are too large ([`heads::within_limits`]),
///   in the path's own format.
///
/// A redirect the front door answers (`front`) gets the same log and bounds there.
async fn edge(request: Request<Body>, next: Next) -> Response {
    let logged = access::start(request.method(), request.uri().path());
    let api = error::is_api_path(request.uri().path());
    let response = if heads::within_limits(request.headers()) {
        next.run(request).await
    } else {
        heads::too_large(api)
    };
    let response = if api {
        error::json_errors(response)
    } else {
        response
    };
    access::finish(logged, response.status());
    response
}

fn app(state: Arc<AppState>, opts: &ServeOptions) -> Router {
    let links = Router::new()
        .route("/", get(redirect::root))
        .route("/robots.txt", get(redirect::robots))
        .route("/{alias}", get(redirect::follow).post(redirect::unlock))
        .route(
            "/{alias}/+",
            get(redirect::preview).post(redirect::unlock_preview),
        )
        .route("/{alias}/stats", get(public_stats::page))
        .route("/{alias}/qr.svg", get(qr::code))
        .route("/{alias}/qr.png", get(qr::code))
        .fallback(redirect::unknown);
    api::router(state.clone())
        .merge(links)
        .layer(DefaultBodyLimit::max(opts.body_limit))
        .layer(tower_http::timeout::TimeoutLayer::with_status_code(
            StatusCode::REQUEST_TIMEOUT,
            opts.request_timeout,
        ))
        .layer(tower_http::catch_panic::CatchPanicLayer::new())
        .layer(middleware::from_fn(edge))
        .with_state(state)
}

/// A server running on a task: its address, and a graceful stop.
pub struct ServerHandle {
    addr: SocketAddr,
    stop: Option<oneshot::Sender<()>>,
    task: tokio::task::JoinHandle<Result<()>>,
}

impl ServerHandle {
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// `http://127.0.0.1:PORT`.
    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// Stops accepting, lets requests in flight finish, writes every counted click, and
    /// returns when all of it is done.
    pub async fn shutdown(mut self) -> Result<()> {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        (&mut self.task)
            .await
            .map_err(|e| Error::Unavailable(format!("server task failed: {e}")))?
    }
}

/// Settings checked and loaded (the GeoIP database read) before anything listens, so a bad
/// one stops `serve` before it says it is listening.
pub struct Prepared {
    opts: ServeOptions,
    redirect_status: StatusCode,
    geo: visitor::GeoSource,
}

impl ServeOptions {
    /// Checks every setting and loads what they name.
    pub fn prepare(self) -> Result<Prepared> {
        let redirect_status = status_code(self.redirect_status);
        let geo = visitor::GeoSource::new(self.geo_header.clone(), self.geoip_db.as_deref())?;
        Ok(Prepared {
            opts: self,
            redirect_status,
            geo,
        })
    }
}

impl Prepared {
    /// Sets the base of the API's page URLs once the listening address is known.
    pub fn set_public_url(&mut self, url: &str) {
        self.opts.public_url = url.to_owned();
    }
}

/// Starts serving on `listener` on a new task.
pub async fn start(
    service: LocalService,
    opts: ServeOptions,
    listener: TcpListener,
) -> Result<ServerHandle> {
    let prepared = opts.prepare()?;
    let addr = listener
        .local_addr()
        .map_err(|e| Error::Unavailable(format!("listener has no address: {e}")))?;
    let (stop, stopped) = oneshot::channel::<()>();
    let task = tokio::spawn(serve_prepared(service, prepared, listener, async move {
        let _ = stopped.await;
    }));
    Ok(ServerHandle {
        addr,
        stop: Some(stop),
        task,
    })
}

/// Serves the API and the redirects on `listener` until `shutdown` completes, then finishes the
/// requests in flight and writes every counted click before returning.
pub async fn serve(
    service: LocalService,
    opts: ServeOptions,
    listener: TcpListener,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> Result<()> {
    serve_prepared(service, opts.prepare()?, listener, shutdown).await
}

/// [`serve`] with settings already checked.
pub async fn serve_prepared(
    service: LocalService,
    prepared: Prepared,
    listener: TcpListener,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> Result<()> {
    let Prepared {
        opts,
        redirect_status,
        geo,
    } = prepared;
    let public_url = if opts.public_url.trim().is_empty() {
        service.options().public_url.clone()
    } else {
        opts.public_url.clone()
    }
    .trim_end_matches('/')
    .to_owned();
    let ledger = Arc::new(Ledger::default());
    let cache = Arc::new(resolve::ResolveCache::new(
        opts.resolve_cache,
        opts.host.clone(),
    ));
    // Marked before the cache is warmed, so a change made meanwhile clears it.
    let marker = service.external_change_marker().await.ok();
    let warm_started = Instant::now();
    match cache.warm(&service, &ledger, opts.warm_aliases).await {
        Ok(n) => tracing::debug!(
            links = n,
            ms = warm_started.elapsed().as_millis() as u64,
            "alias cache warmed"
        ),
        // Not fatal: the cache fills as visitors come.
        Err(e) => tracing::warn!(error = %e, "warming the alias cache failed"),
    }
    let watcher = tokio::spawn(resolve::watch_changes(
        service.clone(),
        cache.clone(),
        opts.change_poll.max(Duration::from_millis(10)),
        marker,
    ));
    let pruner = tokio::spawn(upkeep::prune_visit_log(
        service.clone(),
        opts.visit_log_retention,
        opts.upkeep_every.max(Duration::from_millis(10)),
    ));
    let (stop_backups, backups_stopped) = tokio::sync::watch::channel(());
    let backups = opts
        .backups
        .clone()
        .map(|b| tokio::spawn(upkeep::back_up_on_schedule(b, backups_stopped)));
    let (clicks, writer) = clicks::writer(
        service.clone(),
        ledger.clone(),
        clicks::WriterOptions {
            interval: opts.flush_interval,
            batch: opts.flush_batch.max(1),
            raw_pending: opts.pending_log_max,
        },
    );
    let (stop_streams, stopping) = tokio::sync::watch::channel(false);
    let deliverer = opts.webhooks.clone().map(|w| {
        let deliverer =
            crate::backend::local::webhooks::Deliverer::new(service.clone(), w.key, w.policy);
        tokio::spawn(deliverer.run())
    });
    let state = Arc::new(AppState {
        service,
        public_url,
        redirect_status,
        cache: cache.clone(),
        ledger,
        clicks: clicks.clone(),
        agents: visitor::AgentParser::default(),
        geo,
        visitor_addresses: opts.visitor_addresses,
        proxies: proxies::TrustedProxies::new(opts.trusted_proxies.clone(), opts.forwarded_header),
        api_limiter: limit::RateLimiter::per_minute(opts.api_rate_limit),
        public_limiter: limit::RateLimiter::per_minute(opts.api_rate_limit),
        stats_cache: public_stats::StatsCache::new(opts.stats_cache),
        qr_codes: qr::Codes::new(),
        passwords: passwords::PasswordGate::new(
            opts.password_attempts,
            opts.password_guesses_per_link,
            opts.password_checks,
        ),
        key_use: limit::KeyUse::default(),
        imports: tokio::sync::Semaphore::new(linkdeck::IMPORTS_AT_ONCE),
        visit_turns: visits_out::Turns::new(stopping),
        webhooks: opts.webhooks.clone(),
    });
    let front = front::Front::new(
        app(state.clone(), &opts),
        state.clone(),
        opts.request_timeout,
    );
    let limits = connections::Limits {
        max_connections: connections::connection_cap(
            opts.max_connections,
            connections::open_files_limit(),
        ),
        header_timeout: opts.header_timeout,
        idle_timeout: opts.idle_timeout,
        max_head_bytes: heads::MAX_HEAD,
    };
    // Streams (exports, live feeds) end when the server stops: a graceful close waits for every
    // response in flight, and a live feed never ends by itself.
    let shutdown = async move {
        shutdown.await;
        let _ = stop_streams.send(true);
    };
    let served = connections::run(listener, front, limits, shutdown).await;
    watcher.abort();
    pruner.abort();
    // A delivery cut off here is claimed again once its claim lapses: sent at least once.
    if let Some(deliverer) = deliverer {
        deliverer.abort();
    }
    // A backup under way is finished (and the old ones pruned), not left half-written.
    let _ = stop_backups.send(());
    if let Some(backups) = backups {
        let _ = backups.await;
    }
    // Every request has finished: write what they counted, then let the writer go.
    clicks.flush().await;
    drop(state);
    drop(clicks);
    if tokio::time::timeout(Duration::from_secs(10), writer)
        .await
        .is_err()
    {
        tracing::warn!("click writer did not stop in time after its final flush");
    }
    served.map_err(|e| Error::Unavailable(format!("server failed: {e}")))
}
