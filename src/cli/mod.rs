//! The command line: `clap` definitions, one file per command group, and one place that turns
//! a failed command into a message and an exit code (`error.rs`).
//!
//! To add a command group: a file holding its `Subcommand` enum and `run`, a variant in
//! [`Command`], and an arm in [`dispatch`].

mod app;
mod bulk;
mod context;
mod copy;
mod db;
mod destination;
mod domains;
mod error;
mod import;
mod keys;
mod link_filter;
mod link_view;
mod links;
mod lookup;
mod man;
mod output;
mod owners;
pub mod progress;
mod qr;
mod scope_args;
mod serve;
mod spaces;
mod stats;
mod stats_orphans;
mod stats_words;
mod tags;
mod transfer;
mod trash;
mod visits;
mod webhook_admin;
mod webhooks;

use std::ffi::OsString;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Args, CommandFactory, Parser, Subcommand};

pub use context::Context;
pub use error::{CliError, CliResult, Kind};
pub use output::{Table, print, print_json};

use crate::config::{Overrides, Paths};

/// The largest page the service allows; used wherever a command walks through every page.
pub(crate) use crate::domain::PER_PAGE_MAX;

/// Manage short links from the terminal: an embedded link-shortening service, a client for
/// phpShort-style v1 servers, and a server, in one program.
#[derive(Debug, Parser)]
#[command(
    name = "linkdeck",
    version,
    propagate_version = true,
    max_term_width = 100
)]
pub struct Cli {
    #[command(flatten)]
    pub global: GlobalArgs,
    #[command(subcommand)]
    pub command: Option<Command>,
}

/// Flags every command takes.
#[derive(Debug, Args)]
#[command(next_help_heading = "Global options")]
pub struct GlobalArgs {
    /// Use this profile from the config file.
    #[arg(long, global = true, value_name = "NAME")]
    pub profile: Option<String>,
    /// Use the embedded database at PATH (a SQLite file, created if missing) or at a
    /// postgres://USER@HOST/DB URL (password from LINKDECK_DB_PASSWORD).
    // Read here rather than by clap, whose message would repeat the value, password and all.
    #[arg(
        long,
        global = true,
        value_name = "PATH|URL",
        conflicts_with = "remote"
    )]
    pub db: Option<String>,
    /// Read the configuration from PATH instead of the standard location.
    #[arg(long, global = true, value_name = "PATH")]
    pub config: Option<PathBuf>,
    /// Talk to the v1 API server at URL.
    #[arg(long, global = true, value_name = "URL")]
    pub remote: Option<String>,
    /// The environment variable holding the API key of --remote.
    #[arg(long, global = true, value_name = "VAR")]
    pub api_key_env: Option<String>,
    /// On a local database, act as this owner (see `linkdeck owners`).
    #[arg(long, global = true, value_name = "NAME")]
    pub owner: Option<String>,
    /// Print records and errors as JSON, for scripts.
    #[arg(long, global = true)]
    pub json: bool,
    /// No progress bars or notes on standard error.
    #[arg(long, short, global = true)]
    pub quiet: bool,
    /// Refuse every change (the terminal app shows no way to make one): for browsing a
    /// database or server you must not touch. A profile can say so with `read_only = true`.
    #[arg(long, global = true)]
    pub read_only: bool,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Create, list, change and delete short links.
    #[command(subcommand)]
    Links(Box<links::LinksCommand>),
    /// Group links into named, coloured spaces.
    #[command(subcommand)]
    Spaces(spaces::SpacesCommand),
    /// The tags on links: list them, rename or merge one.
    #[command(subcommand)]
    Tags(tags::TagsCommand),
    /// The host names that serve short links.
    #[command(subcommand)]
    Domains(domains::DomainsCommand),
    /// The accounts of the embedded service.
    #[command(subcommand)]
    Owners(owners::OwnersCommand),
    /// Traffic of a link, a space, a domain or every link: clicks over time, countries,
    /// platforms, browsers, referrers, languages and top links.
    Stats(stats::StatsArgs),
    /// The raw visits out, as NDJSON or CSV.
    #[command(subcommand)]
    Visits(visits::VisitsCommand),
    /// Import links from linkdeck's JSON or CSV, or from Bitly, YOURLS, Shlink or Kutt, all or
    /// nothing.
    Import(import::ImportArgs),
    /// Load the demo (52 links in 5 spaces, with months of traffic) into this profile or
    /// --db FILE; links already there are left as they are.
    Demo,
    /// Export every space and link as JSON or CSV.
    Export(transfer::ExportArgs),
    /// Copy spaces and links from one profile to another (resumable).
    Copy(copy::CopyArgs),
    /// Serve the v1 API and the short links over the embedded database.
    Serve(serve::ServeArgs),
    /// API keys of the embedded service.
    #[command(subcommand)]
    Keys(keys::KeysCommand),
    /// Webhook subscriptions, which `linkdeck serve` delivers, signed (local or through a server).
    #[command(subcommand)]
    Webhooks(webhooks::WebhooksCommand),
    /// Deleted links and spaces, kept for `trash_days` on a local database.
    #[command(subcommand)]
    Trash(trash::TrashCommand),
    /// Whole embedded databases: copy one into another, SQLite and PostgreSQL either way; back
    /// up a SQLite database while it is served, and restore it.
    #[command(subcommand)]
    Db(db::DbCommand),
    /// Print a shell completion script (bash, zsh, fish, elvish, powershell).
    Completions {
        #[arg(value_enum)]
        shell: clap_complete::Shell,
    },
    /// Print linkdeck's man page, or with --out write one for every command into a folder.
    Man {
        /// The folder to write linkdeck.1, linkdeck-links.1, linkdeck-links-create.1… into.
        #[arg(long, value_name = "DIR")]
        out: Option<std::path::PathBuf>,
    },
}

/// Runs the parsed command line and gives the process's exit code.
pub fn run(cli: Cli) -> ExitCode {
    install_panic_hook();
    let json = cli.global.json;
    match run_inner(cli) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => e.report(json),
    }
}

/// Reports a command line clap refused. With `--json` anywhere in it, the error is JSON too.
pub fn usage_error(e: clap::Error, args: &[OsString]) -> ExitCode {
    use clap::error::ErrorKind;
    let json = args.iter().any(|a| a == "--json");
    match e.kind() {
        ErrorKind::DisplayHelp | ErrorKind::DisplayVersion => e.exit(),
        _ if json => {
            let text = e.render().to_string();
            let message = text
                .lines()
                .find(|l| !l.trim().is_empty())
                .unwrap_or("invalid arguments")
                .trim_start_matches("error: ")
                .to_owned();
            CliError::usage(message).report(true)
        }
        _ => e.exit(),
    }
}

fn run_inner(cli: Cli) -> CliResult {
    let Cli { global, command } = cli;
    if let Some(Command::Completions { shell }) = command {
        let mut cmd = Cli::command();
        let mut out = Vec::new();
        clap_complete::generate(shell, &mut cmd, "linkdeck", &mut out);
        return Ok(print(&String::from_utf8_lossy(&out))?);
    }
    if let Some(Command::Man { out }) = command {
        return man::write(out.as_deref());
    }
    // Without a command the terminal app runs and logs to its file: stderr would draw over it.
    if command.is_some() && std::env::var_os("LINKDECK_LOG").is_some() {
        let _ = tracing_subscriber::fmt()
            .with_env_filter(tracing_subscriber::EnvFilter::from_env("LINKDECK_LOG"))
            .with_writer(std::io::stderr)
            .with_ansi(serve::colour_on_stderr())
            .try_init();
    }
    let db = global
        .db
        .as_deref()
        .map(crate::config::parse_db_flag)
        .transpose()
        .map_err(|m| CliError::usage(format!("--db: {m}")))?;
    let overrides = Overrides {
        profile: global.profile,
        db,
        remote: global.remote,
        api_key_env: global.api_key_env,
    };
    let ctx = Context::load(
        Paths::discover(),
        global.config.as_deref(),
        &overrides,
        global.json,
        global.owner,
    )?
    .quiet(global.quiet)
    .read_only(global.read_only);
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(|e| CliError::failure(format!("cannot start the async runtime: {e}")))?;
    runtime.block_on(dispatch(&ctx, command))
}

async fn dispatch(ctx: &Context, command: Option<Command>) -> CliResult {
    match command {
        None => app::run(ctx).await,
        Some(Command::Links(c)) => links::run(ctx, *c).await,
        Some(Command::Spaces(c)) => spaces::run(ctx, c).await,
        Some(Command::Tags(c)) => tags::run(ctx, c).await,
        Some(Command::Domains(c)) => domains::run(ctx, c).await,
        Some(Command::Owners(c)) => owners::run(ctx, c).await,
        Some(Command::Stats(a)) => stats::run(ctx, a).await,
        Some(Command::Visits(c)) => visits::run(ctx, c).await,
        Some(Command::Import(a)) => import::import(ctx, a).await,
        Some(Command::Demo) => import::import(ctx, import::ImportArgs::demo()).await,
        Some(Command::Export(a)) => transfer::export(ctx, a).await,
        Some(Command::Copy(a)) => copy::run(ctx, a).await,
        Some(Command::Serve(a)) => serve::run(ctx, a).await,
        Some(Command::Keys(c)) => keys::run(ctx, c).await,
        Some(Command::Webhooks(c)) => webhooks::run(ctx, c).await,
        Some(Command::Trash(c)) => trash::run(ctx, c).await,
        Some(Command::Db(c)) => db::run(ctx, c).await,
        Some(Command::Completions { .. } | Command::Man { .. }) => Ok(()),
    }
}

/// `linkdeck` without a command and without a terminal: where things live, and the help.
pub(crate) fn overview(ctx: &Context) -> CliResult {
    use crate::config::Resolved;
    let config = match &ctx.config.source {
        Some(p) => p.display().to_string(),
        None => format!(
            "{} (not present: using defaults)",
            ctx.paths.config_file.display()
        ),
    };
    let backend = match &ctx.profile {
        Resolved::Local { db, .. } => format!("database {db}"),
        Resolved::Remote { base_url, .. } => format!("server {base_url}"),
    };
    let text = format!(
        "profile  {}\n{backend}\nconfig   {config}\nlogs     {}\n",
        ctx.profile.profile_name(),
        ctx.paths.log_dir().display()
    );
    print(&text)?;
    print(&Cli::command().render_help().to_string())?;
    Ok(())
}

/// `--page` and `--per-page` of a list command, which also takes `--all` (every page at the
/// largest size) — each command words its own `--all`, so it stays beside the command.
#[derive(Debug, Args, Clone, Copy)]
pub struct PageArgs {
    #[arg(long, default_value_t = 1, conflicts_with = "all")]
    pub page: u32,
    /// 10 to 100.
    #[arg(long, default_value_t = 20, conflicts_with = "all")]
    pub per_page: u32,
}

impl PageArgs {
    /// The page and page size to ask for first: with `all`, the first page at the largest size.
    pub fn first(self, all: bool) -> (u32, u32) {
        if all {
            (1, PER_PAGE_MAX)
        } else {
            (self.page, self.per_page)
        }
    }
}

/// `true`/`false`, `1`/`0`, `yes`/`no`, `on`/`off`.
pub(crate) fn parse_bool(s: &str) -> Result<bool, String> {
    match s.trim().to_ascii_lowercase().as_str() {
        "true" | "1" | "yes" | "on" => Ok(true),
        "false" | "0" | "no" | "off" => Ok(false),
        _ => Err("expected true or false".into()),
    }
}

/// A panic is a bug; say so in one line instead of a backtrace.
fn install_panic_hook() {
    std::panic::set_hook(Box::new(|info| {
        let place = info
            .location()
            .map(|l| format!(" at {}:{}", l.file(), l.line()))
            .unwrap_or_default();
        let what = info
            .payload()
            .downcast_ref::<&str>()
            .map(|s| (*s).to_owned())
            .or_else(|| info.payload().downcast_ref::<String>().cloned())
            .unwrap_or_default();
        eprintln!(
            "error: internal error{place}: {what} (this is a bug in linkdeck; please report it)"
        );
    }));
}
