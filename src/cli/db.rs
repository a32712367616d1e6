//! `linkdeck db copy --from A --to B`: a whole embedded database into another store — a SQLite
//! file into PostgreSQL to scale out, or PostgreSQL back into a file. `db backup FILE` and
//! `db restore FILE`: a SQLite database into a file of its own while it is served, and back.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Instant;

use clap::{Args, Subcommand};
use serde_json::json;

use super::context::Context;
use super::error::{CliError, CliResult};
use super::output::{plural, print, print_json, thousands};
use super::progress::{Progress, Unit};
use crate::backend::local::backup::{self, ON_POSTGRES};
use crate::backend::local::{LocalOptions, LocalService, SCHEMA_VERSION, StoreLocation};
use crate::config::{Profile, Resolved, parse_db_flag};

#[derive(Debug, Subcommand)]
pub enum DbCommand {
    /// Copy a whole database (owners, API keys, domains, spaces, links, the trash, traffic)
    /// into an empty one, between SQLite files and PostgreSQL either way.
    Copy(CopyArgs),
    /// Back up the SQLite database (the profile's, or --db) into FILE, consistently even while
    /// `linkdeck serve` writes to it.
    Backup(BackupArgs),
    /// Put a backup back as the database (the profile's, or --db), once it passes SQLite's
    /// integrity check and is a linkdeck database this version reads.
    Restore(RestoreArgs),
}

#[derive(Debug, Args)]
pub struct BackupArgs {
    /// The file to write; written beside it first, then renamed into place.
    #[arg(value_name = "FILE")]
    file: PathBuf,
    /// Replace FILE if it exists.
    #[arg(long)]
    force: bool,
}

#[derive(Debug, Args)]
pub struct RestoreArgs {
    /// The backup to restore (a file `db backup` wrote, or any copy of a linkdeck database).
    #[arg(value_name = "FILE")]
    file: PathBuf,
    /// Replace a database that holds links.
    #[arg(long)]
    force: bool,
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
        DbCommand::Backup(args) => back_up(ctx, args).await,
        DbCommand::Restore(args) => restore(ctx, args).await,
    }
}

/// The SQLite file of the profile (or `--db`); a PostgreSQL database or a server is refused
/// with what to do instead.
fn sqlite_file(ctx: &Context, what: &str) -> CliResult<PathBuf> {
    match &ctx.profile {
        Resolved::Local {
            db: StoreLocation::File(path),
            ..
        } => Ok(path.clone()),
        Resolved::Local {
            db: StoreLocation::Postgres(target),
            ..
        } => {
            let mut e = CliError::usage(format!(
                "{what} works on a SQLite database; {target} is PostgreSQL"
            ));
            e.hints.push(ON_POSTGRES.to_owned());
            Err(e)
        }
        Resolved::Remote {
            profile, base_url, ..
        } => Err(CliError::usage(format!(
            "{what} works on a local database; profile \"{profile}\" uses the server at \
             {base_url} (back up on that machine, or pick a local profile with --profile or --db)"
        ))),
    }
}

async fn back_up(ctx: &Context, args: BackupArgs) -> CliResult {
    let db = sqlite_file(ctx, "db backup")?;
    if !db.is_file() {
        return Err(CliError::new(
            super::error::Kind::NotFound,
            format!(
                "there is no database at {} to back up (choose it with --db or --profile)",
                db.display()
            ),
        ));
    }
    let started = Instant::now();
    let made = backup::back_up(&StoreLocation::File(db.clone()), &args.file, args.force).await?;
    let seconds = started.elapsed().as_secs_f64();
    if ctx.json {
        return Ok(print_json(&json!({
            "database": db.display().to_string(),
            "file": made.path.display().to_string(),
            "links": made.links,
            "bytes": made.bytes,
            "schema": made.schema,
            "seconds": seconds,
        }))?);
    }
    Ok(print(&format!(
        "backed up {} ({}) from {} to {} in {seconds:.1} s",
        plural(made.links, "link"),
        size(made.bytes),
        db.display(),
        made.path.display(),
    ))?)
}

async fn restore(ctx: &Context, args: RestoreArgs) -> CliResult {
    ctx.writable("db restore")?;
    let db = sqlite_file(ctx, "db restore")?;
    let done = backup::restore(&args.file, &StoreLocation::File(db.clone()), args.force).await?;
    let was = match done.before {
        Some(n) => format!("it had {}", plural(n, "link")),
        None => "a new database".to_owned(),
    };
    let upgrade = (done.restored.schema < SCHEMA_VERSION).then(|| {
        format!(
            "; its schema ({}) is brought up to date ({SCHEMA_VERSION}) when it is next opened",
            done.restored.schema
        )
    });
    if ctx.json {
        return Ok(print_json(&json!({
            "database": db.display().to_string(),
            "file": args.file.display().to_string(),
            "links": done.restored.links,
            "links_before": done.before,
            "bytes": done.restored.bytes,
            "schema": done.restored.schema,
        }))?);
    }
    Ok(print(&format!(
        "restored {} ({}) from {} into {} ({was}){}",
        plural(done.restored.links, "link"),
        size(done.restored.bytes),
        args.file.display(),
        db.display(),
        upgrade.unwrap_or_default(),
    ))?)
}

/// A file's size for a person: `812 KiB`, `5.2 MiB`, `1.4 GiB`.
fn size(bytes: u64) -> String {
    const KIB: f64 = 1024.0;
    let b = bytes as f64;
    if b < KIB {
        format!("{bytes} bytes")
    } else if b < KIB * KIB {
        format!("{:.0} KiB", b / KIB)
    } else if b < KIB * KIB * KIB {
        format!("{:.1} MiB", b / (KIB * KIB))
    } else {
        format!("{:.1} GiB", b / (KIB * KIB * KIB))
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
        // A copy into a file nothing else has open holds it alone while it writes.
        large_writes_alone: true,
        ..LocalOptions::default()
    };
    Ok(LocalService::open_at(location, opts).await?)
}
