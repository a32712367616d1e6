//! `linkdeck serve`: the v1 API and the short links over the profile's embedded database, until
//! SIGINT or SIGTERM, after which every counted click is written before the process exits.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

use clap::Args;

use super::context::Context;
use super::error::{CliError, CliResult, Kind};
use crate::backend::local::webhooks::DeliveryPolicy;
use crate::backend::local::{LocalOptions, LocalService, ServeLock, StoreLocation};
use crate::config::Resolved;
use crate::config::webhook_key::webhook_key;
use crate::domain::{BaseUrl, Error, RedirectStatus};
use crate::server::{Backups, ServeOptions, WebhookSettings};

#[derive(Debug, Args)]
pub struct ServeArgs {
    /// Address and port to listen on (`[serve] listen`; port 0 picks a free one).
    #[arg(long, value_name = "ADDR:PORT")]
    pub listen: Option<SocketAddr>,
    /// Base URL of short links and API page links (`[serve] public_url`).
    #[arg(long, value_name = "URL")]
    pub public_url: Option<String>,
    /// Trusted request header with the visitor's country code, such as CF-IPCountry.
    #[arg(long, value_name = "NAME")]
    pub geo_header: Option<String>,
    /// MaxMind country database for visitors' countries.
    #[arg(long, value_name = "FILE")]
    pub geoip_db: Option<PathBuf>,
    /// 301 (default), 302, 307 or 308.
    #[arg(long, value_name = "N")]
    pub redirect_status: Option<u16>,
}

/// The server's options: the command line over `[serve]` over the defaults.
fn options(ctx: &Context, args: &ServeArgs) -> CliResult<ServeOptions> {
    let config = &ctx.config.serve;
    let redirect_status = match args.redirect_status {
        Some(code) => RedirectStatus::new(code).map_err(|m| Error::field("redirect_status", m))?,
        None => config.redirect_status,
    };
    Ok(ServeOptions {
        listen: args.listen.unwrap_or(config.listen),
        public_url: String::new(),
        geo_header: args
            .geo_header
            .clone()
            .or_else(|| config.geo_header.clone()),
        geoip_db: args.geoip_db.clone().or_else(|| config.geoip_db.clone()),
        redirect_status,
        api_rate_limit: config.rate_limit_per_minute,
        password_attempts: config.password_attempts_per_minute,
        visit_log_retention: config.visit_log_retention(),
        visitor_addresses: config.visitor_addresses,
        password_guesses_per_link: config.password_guesses_per_link_per_minute,
        password_checks: config.password_checks_at_once,
        max_connections: config.max_connections,
        header_timeout: Duration::from_secs(config.header_timeout_secs.max(1)),
        idle_timeout: Duration::from_secs(config.idle_timeout_secs.max(1)),
        warm_aliases: config.warm_aliases,
        trusted_proxies: config.trusted_proxies.iter().map(|p| p.range()).collect(),
        forwarded_header: config.forwarded_header,
        host: config.host_settings(),
        ..ServeOptions::default()
    })
}

/// How webhooks are delivered: `[serve]`'s switch and key, the policy's defaults otherwise.
/// Tests shorten the waits through two undocumented variables: `LINKDECK_WEBHOOK_DELAYS_MS`
/// (the retry delays, in milliseconds, separated by commas) and `LINKDECK_WEBHOOK_STOP`
/// (`FAILURES,SECONDS`: when a failing subscription is stopped).
fn webhook_settings(ctx: &Context) -> CliResult<WebhookSettings> {
    let key = webhook_key(&ctx.config.serve, &ctx.paths).map_err(CliError::failure)?;
    let mut policy = DeliveryPolicy {
        allow_private: ctx.config.serve.webhooks_allow_private,
        ..DeliveryPolicy::default()
    };
    let bad = |name: &str| CliError::usage(format!("{name}: not a list of numbers"));
    if let Ok(text) = std::env::var("LINKDECK_WEBHOOK_DELAYS_MS") {
        policy.delays = text
            .split(',')
            .map(|ms| ms.trim().parse().map(Duration::from_millis))
            .collect::<Result<_, _>>()
            .map_err(|_| bad("LINKDECK_WEBHOOK_DELAYS_MS"))?;
        policy.poll = Duration::from_millis(100);
        policy.timeout = Duration::from_secs(2);
        policy.sweep = Duration::from_millis(200);
    }
    if let Ok(text) = std::env::var("LINKDECK_WEBHOOK_STOP") {
        let (failures, secs) = text
            .split_once(',')
            .and_then(|(f, s)| Some((f.trim().parse().ok()?, s.trim().parse().ok()?)))
            .ok_or_else(|| bad("LINKDECK_WEBHOOK_STOP"))?;
        policy.stop_after_failures = failures;
        policy.stop_after = Duration::from_secs(secs);
    }
    Ok(WebhookSettings { key, policy })
}

pub async fn run(ctx: &Context, args: ServeArgs) -> CliResult {
    // A server counts every click it answers: it changes the database.
    ctx.writable("serve")?;
    let Resolved::Local {
        db,
        public_url,
        timezone,
        fetch_titles,
        trash_days,
        ..
    } = &ctx.profile
    else {
        // The context's refusal names the profile and what to do instead.
        return Err(ctx
            .service("serve")
            .await
            .err()
            .unwrap_or_else(|| CliError::usage("serve needs a local profile")));
    };
    let mut opts = options(ctx, &args)?;
    // Without a key (an unreadable key file, a data folder it cannot be written to) the server
    // still serves; what waits for delivery stays queued, and the log says why.
    let webhooks_off = match webhook_settings(ctx) {
        Ok(settings) => {
            opts.webhooks = Some(settings);
            None
        }
        Err(e) => Some(e),
    };
    let config = &ctx.config.serve;
    // Dated backups of a SQLite file; PostgreSQL has its own tools, said once the log is up.
    let ignored_backups = match (config.backup_every, db) {
        (Some(every), StoreLocation::File(path)) => {
            opts.backups = Some(Backups {
                db: path.clone(),
                dir: config.backup_folder(path),
                every: every.0,
                keep: config.backup_keep,
            });
            false
        }
        (Some(_), StoreLocation::Postgres(_)) => true,
        (None, _) => false,
    };
    // Short URLs: --public-url, else the configured one, else where we really listen.
    let configured = ctx.config.serve.public_url.is_some()
        || *public_url != ctx.config.serve.effective_public_url();
    let fixed_public_url = match &args.public_url {
        Some(url) => Some(
            BaseUrl::parse(url)
                .map_err(|m| CliError::usage(format!("--public-url: {m}")))?
                .to_string(),
        ),
        None if configured => Some(public_url.clone()),
        None => None,
    };
    // Every setting is checked, and the database opened, before anything listens: a mistake
    // stops here, before "listening on" tells a script the server is up.
    let listen = opts.listen;
    let scheduled = opts.backups.clone();
    let mut prepared = opts.prepare()?;
    // Held until the server has stopped and written every counted click. One server per SQLite
    // file; on PostgreSQL any number count as one (the database reserves their clicks).
    let _one_server = match db {
        StoreLocation::File(path) => Some(ServeLock::acquire(path)?),
        StoreLocation::Postgres(_) => None,
    };
    crate::server::connections::raise_open_files_limit();
    let listener = tokio::net::TcpListener::bind(listen)
        .await
        .map_err(|e| CliError::new(Kind::Unavailable, format!("cannot listen on {listen}: {e}")))?;
    let bound = listener
        .local_addr()
        .map_err(|e| CliError::failure(format!("cannot read the bound address: {e}")))?;
    let public_url = fixed_public_url.unwrap_or_else(|| format!("http://{bound}"));
    prepared.set_public_url(&public_url);
    let service = LocalService::open_at(
        db,
        LocalOptions {
            public_url: public_url.clone(),
            timezone: timezone.clone(),
            clock: ctx.clock.clone(),
            fetch_titles: *fetch_titles,
            trash_days: *trash_days,
            ..LocalOptions::default()
        },
    )
    .await?;
    service.settle_reserved_clicks().await?;
    if std::env::var_os("LINKDECK_LOG").is_none() {
        let _ = tracing_subscriber::fmt()
            .with_env_filter(tracing_subscriber::EnvFilter::new("info"))
            .with_writer(std::io::stderr)
            .with_ansi(colour_on_stderr())
            .try_init();
    }
    tracing::info!(address = %bound, public_url, db = %db, "serving");
    if let Some(e) = webhooks_off {
        tracing::warn!("webhooks are not delivered: {e}");
    }
    if ignored_backups {
        tracing::warn!(
            "[serve] backup_every is ignored: the database is PostgreSQL; {}",
            crate::backend::local::backup::ON_POSTGRES
        );
    }
    if let Some(b) = &scheduled {
        tracing::info!(
            dir = %b.dir.display(),
            every = %crate::config::Every(b.every),
            keep = b.keep,
            "backing up the database on a schedule"
        );
    }
    // Scripts wait for this line to know the port.
    eprintln!("listening on http://{bound}");
    crate::server::serve_prepared(service, prepared, listener, shutdown_signal()).await?;
    tracing::info!("stopped; every counted click is written");
    Ok(())
}

/// Colour in the log only on a terminal, and never when `NO_COLOR` is set (to anything).
pub fn colour_on_stderr() -> bool {
    use std::io::IsTerminal;
    std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty()) && std::io::stderr().is_terminal()
}

/// Completes on SIGINT (Ctrl-C) or SIGTERM.
async fn shutdown_signal() {
    let ctrl_c = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    #[cfg(unix)]
    let term = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut s) => {
                s.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    #[cfg(not(unix))]
    let term = std::future::pending::<()>();
    tokio::select! {
        () = ctrl_c => {}
        () = term => {}
    }
}
