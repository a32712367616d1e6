//! `linkdeck db copy --from A --to B`: a whole embedded database into another store — a SQLite
//! file into PostgreSQL to scale out, or PostgreSQL back into a file.

use std::sync::Arc;
use std::time::Instant;

use clap::{Args, Subcommand};
use serde_json::json;

use super::context::Context;
use super::error::{CliError, CliResult};
use super::output::{plural, print, print_json, thousands};
use super::progress::{Progress, Unit};
use crate::backend::local::{LocalOptions, LocalService, StoreLocation};
use crate::config::{Profile, parse_db_flag};

#[derive(Debug, Subcommand)]
pub enum DbCommand {
    /// Copy a whole database (owners, API keys, domains, spaces, links, the trash, traffic)
    /// into an empty one, between SQLite files and PostgreSQL either way.
    Copy(CopyArgs),
}

#[derive(Debug, Args)]
pub struct CopyArgs {
    /// The database to read: a local profile's name, a SQLite path or a postgres:// URL.
    #[arg(long, value_name = "PROFILE|PATH|URL")]
    from: String,
    /// The database to write, which must be empty (a new file is created).
    #[arg(long, value_name = "PROFILE|PATH|URL")]
    to: String,
}

pub async fn run(ctx: &Context, command: DbCommand) -> CliResult {
    match command {
        DbCommand::Copy(args) => copy(ctx, args).await,
    }
}

async fn copy(ctx: &Context, args: CopyArgs) -> CliResult {
    let from = location(ctx, &args.from, "--from")?;
    let to = location(ctx, &args.to, "--to")?;
    if from == to {
        return Err(CliError::usage(format!(
            "--from and --to are the same database ({from})"
        )));
    }
    let source = open(ctx, &from).await?;
    let target = open(ctx, &to).await?;
    let total = source.table_counts().await?.total();
    let progress = Progress::start(ctx, "Copying", Some(total), Unit::Items("rows"));
    let bar = progress.clone();
    let started = Instant::now();
    let copied = source
        .copy_into(&target, Arc::new(move |n| bar.inc(n)))
        .await?;
    progress.finish();
    let seconds = started.elapsed().as_secs_f64();
    if ctx.json {
        let tables: serde_json::Map<String, serde_json::Value> = copied
            .0
            .iter()
            .map(|(name, n)| ((*name).to_owned(), json!(n)))
            .collect();
        return Ok(print_json(&json!({
            "from": from.to_string(),
            "to": to.to_string(),
            "rows": copied.total(),
            "tables": tables,
            "seconds": seconds,
        }))?);
    }
    Ok(print(&format!(
        "copied {}, {}, {}, {} in the trash and {} of traffic ({} rows) from {from} to {to} in {seconds:.1} s",
        plural(copied.of("owners"), "owner"),
        plural(copied.of("spaces"), "space"),
        plural(copied.of("links"), "link"),
        plural(copied.of("trash_links") + copied.of("trash_spaces"), "item"),
        plural(copied.of("link_traffic"), "link-day"),
        thousands(copied.total()),
    ))?)
}

/// A local profile's database, or a path or URL written out.
fn location(ctx: &Context, raw: &str, flag: &str) -> CliResult<StoreLocation> {
    match ctx.config.profiles.get(raw) {
        Some(Profile::Local(local)) => Ok(local
            .db
            .clone()
            .unwrap_or_else(|| StoreLocation::File(ctx.paths.default_db()))),
        Some(Profile::Remote(_)) => Err(CliError::usage(format!(
            "{flag} {raw}: a remote profile; db copy moves local databases (use `linkdeck copy` \
             to copy links from a server)"
        ))),
        None => parse_db_flag(raw).map_err(|m| CliError::usage(format!("{flag} {raw}: {m}"))),
    }
}

async fn open(ctx: &Context, location: &StoreLocation) -> CliResult<LocalService> {
    let opts = LocalOptions {
        timezone: ctx.timezone().clone(),
        clock: ctx.clock.clone(),
        ..LocalOptions::default()
    };
    Ok(LocalService::open_at(location, opts).await?)
}
