//! `linkdeck copy --from PROFILE --to PROFILE`: spaces and links from one profile to another —
//! a phpShort site or another `linkdeck serve` into a local database, a local database into a
//! server, one database file into another — with the list's filters.
//!
//! A copy is resumable: what is already there (same alias on the same domain, same
//! destination) is passed over, so a copy that stopped (a server that went away) is finished by
//! running it again, and every link arrives exactly once. Into a local database links are
//! written a page at a time, each page one transaction, carrying their titles, click totals and
//! creation dates; into another `linkdeck serve` likewise, a page a request through linkdeck's
//! own import (`wire::linkdeck`), each page one transaction there; into any other server (a
//! phpShort site) one request a link through the v1 API, which cannot set those.
//!
//! Where both ends are linkdeck — a database or a `linkdeck serve`, either way — each link also
//! carries its traffic history (the hourly rollups, as an export file does), in the same
//! transaction as the link: a link passed over as already there brings none, so running a copy
//! again never counts a click twice. Another server's stats API gives each dimension's totals
//! over a period, not per hour, so history from a phpShort site would not be the same history;
//! it is not carried (the click total is).
//!
//! The copy runs in steps — spaces, then links — each reporting into [`CopySummary`].

use std::collections::HashMap;

use clap::Args;
use serde::Serialize;
use serde_json::json;

use super::context::Context;
use super::destination::{Decision, Destination, Planned};
use super::error::{CliError, CliResult};
use super::import::parse_on_conflict;
use super::link_filter::LinkFilterArgs;
use super::output::{plural, print, print_json};
use super::progress::{Progress, Unit};
use crate::backend::Backend;
use crate::backend::local::{
    ImportOptions, ImportRow, ImportSummary, Incoming, LocalBackend, Renamed, StoreLocation,
};
use crate::backend::remote::RemoteBackend;
use crate::config::{Overrides, Resolved};
use crate::domain::{
    Domain, Error, FieldErrors, Id, Link, OnConflict, PER_PAGE_MAX, Place, Sort, SpaceInput,
};
use crate::transfer::LinkRecord;

#[derive(Debug, Args)]
pub struct CopyArgs {
    /// Where the links come from: a profile of the config file, or the path of a database.
    #[arg(long, value_name = "PROFILE|PATH")]
    pub from: String,
    /// Where they go: a profile, or the path of a database (created if missing).
    #[arg(long, value_name = "PROFILE|PATH")]
    pub to: String,
    #[command(flatten)]
    pub filter: LinkFilterArgs,
    /// What a link whose alias is taken there by another link does: fail (before anything is
    /// copied), skip or rename (ALIAS-2, ALIAS-3, …).
    #[arg(long, value_name = "WHAT", value_parser = parse_on_conflict, default_value = "fail")]
    pub on_conflict: OnConflict,
    /// Say what a copy would do, and change nothing.
    #[arg(long)]
    pub dry_run: bool,
}

/// What a copy did (or, with `--dry-run`, would do).
#[derive(Debug, Clone, Default, Serialize)]
pub struct CopySummary {
    pub from: String,
    pub to: String,
    pub dry_run: bool,
    pub spaces_created: usize,
    pub links_copied: usize,
    /// Links that were there already (an earlier run, or the same link made by hand).
    pub links_already_there: usize,
    pub links_skipped: usize,
    pub renamed: Vec<Renamed>,
    /// Links with a password, which cannot be copied (only its hash is kept).
    pub passwords_not_copied: usize,
    /// Links copied without their tags, to a server that keeps none.
    pub tags_not_copied: usize,
    /// Links copied without their options, to a server that keeps none.
    pub options_not_copied: usize,
    /// Clicks of the traffic history carried with the copied links (between linkdeck ends).
    pub clicks_copied: u64,
    /// What cannot travel between these two ends, and which way.
    pub not_carried: Option<&'static str>,
}

/// Links fetched from the source, and written into the destination, at a time.
const PAGE: u32 = PER_PAGE_MAX;

/// How a page of links is written.
enum Sink {
    /// A local database: one transaction a page, everything carried.
    Local(LocalBackend),
    /// A `linkdeck serve`, through its own import (the largest body it takes): one request and
    /// one transaction there a page, everything carried.
    Linkdeck(RemoteBackend, u64),
    /// Any other server, through the v1 API: a request a link, only what a person could type.
    V1,
}

/// Where the traffic history of copied links comes from.
enum History {
    Local(LocalBackend),
    /// A `linkdeck serve`, a request for at most this many links.
    Server(RemoteBackend, usize),
}

/// What cannot travel from `source` (a linkdeck server or not, when a server) into `sink`.
fn not_carried(sink: &Sink, source_is_other_server: bool) -> Option<&'static str> {
    match sink {
        Sink::V1 => Some(
            "to the server: titles, click totals, creation dates and traffic history (it is not \
             a linkdeck server, and its API cannot set them)",
        ),
        _ if source_is_other_server => Some(
            "from the server: traffic history (it is not a linkdeck server, and its stats API \
             gives no hour-by-hour history; click totals are kept)",
        ),
        _ => None,
    }
}

pub async fn run(ctx: &Context, args: CopyArgs) -> CliResult {
    let source = profile_context(ctx, &args.from, "--from")?;
    let target = profile_context(ctx, &args.to, "--to")?;
    target.writable("copy --to")?;
    if same_place(&source.profile, &target.profile) {
        return Err(CliError::usage(format!(
            "--from and --to are the same place ({})",
            describe(&source.profile)
        )));
    }
    let src_server = source.remote()?;
    let dst_server = target.remote()?;
    let src: std::sync::Arc<dyn Backend> = match &src_server {
        Some(server) => std::sync::Arc::new(server.clone()),
        None => source.backend().await?,
    };
    let dst: std::sync::Arc<dyn Backend> = match &dst_server {
        Some(server) => std::sync::Arc::new(server.clone()),
        None => target.backend().await?,
    };
    let sink = match &dst_server {
        None => Sink::Local(target.local("copy").await?),
        Some(server) => match server.linkdeck().await? {
            Some(caps) => Sink::Linkdeck(server.clone(), caps.import_max_bytes),
            None => Sink::V1,
        },
    };
    let src_linkdeck = match &src_server {
        Some(server) => server.linkdeck().await?,
        None => None,
    };
    // Traffic history travels only between linkdeck ends (see the module's note).
    let history = match (&src_server, &src_linkdeck, &sink) {
        (_, _, Sink::V1) => None,
        _ if args.dry_run => None,
        (None, _, _) => Some(History::Local(source.local("copy").await?)),
        (Some(server), Some(caps), _) => Some(History::Server(
            server.clone(),
            usize::try_from(caps.traffic_max_ids).unwrap_or(1).max(1),
        )),
        (Some(_), None, _) => None,
    };
    let mut summary = CopySummary {
        from: describe(&source.profile),
        to: describe(&target.profile),
        dry_run: args.dry_run,
        not_carried: not_carried(&sink, src_server.is_some() && src_linkdeck.is_none()),
        ..CopySummary::default()
    };

    let query = args.filter.query(src.as_ref()).await?;
    let domains = map_domains(src.as_ref(), dst.as_ref(), &query, &summary.to).await?;
    let mut dest = Destination::load(dst.as_ref(), target.timezone().clone()).await?;

    // Step 1: spaces, with their colours.
    copy_spaces(src.as_ref(), &mut dest, &args, &mut summary).await?;

    // Step 2: links, a page at a time.
    let first = src
        .list_links(&crate::domain::LinkQuery {
            sort: Sort::Asc,
            per_page: PAGE,
            ..query.clone()
        })
        .await?;
    let progress = Progress::start(
        ctx,
        &format!("copying to {}", summary.to),
        Some(first.total),
        Unit::Items("links"),
    );
    let mut page = Some(first);
    let mut page_no = 1;
    while let Some(current) = page.take() {
        let more = current.has_next() && !current.items.is_empty();
        let mut planned = plan_page(
            &target,
            &current.items,
            &domains,
            &mut dest,
            &args,
            &mut summary,
        )?;
        if let Some(history) = &history {
            add_history(history, &mut planned)
                .await
                .map_err(|e| stopped(e, &summary))?;
        }
        if args.dry_run {
            summary.links_copied += planned.len();
        } else {
            match send_page(&mut dest, &sink, planned, args.on_conflict).await {
                Ok(done) => {
                    summary.links_copied += done.links_created;
                    summary.clicks_copied += done.clicks_imported;
                    summary.renamed.extend(done.renamed);
                }
                Err((n, e)) => {
                    summary.links_copied += n;
                    return Err(stopped(e, &summary));
                }
            }
        }
        progress.inc(current.items.len() as u64);
        if more {
            page_no += 1;
            let next = src
                .list_links(&crate::domain::LinkQuery {
                    sort: Sort::Asc,
                    per_page: PAGE,
                    page: page_no,
                    ..query.clone()
                })
                .await
                .map_err(|e| stopped(e, &summary))?;
            page = Some(next);
        }
    }
    progress.finish();
    summary.links_already_there = dest.already_there;
    summary.links_skipped = dest.skipped;
    summary.spaces_created += dest.spaces_created;
    summary.tags_not_copied = dest.left_out.tags;
    summary.options_not_copied = dest.left_out.options;
    report(ctx, &summary)
}

/// The context of `--from`/`--to`: a profile of the config file, or a database path.
fn profile_context(ctx: &Context, name: &str, flag: &str) -> CliResult<Context> {
    let profile = if ctx.config.profiles.contains_key(name) {
        ctx.config
            .resolve(
                &Overrides {
                    profile: Some(name.to_owned()),
                    ..Overrides::default()
                },
                &ctx.paths,
            )
            .map_err(CliError::from)?
    } else if let Some(db) = as_database(name) {
        Resolved::Local {
            profile: name.to_owned(),
            db,
            public_url: ctx.config.serve.effective_public_url(),
            timezone: ctx.timezone().clone(),
            fetch_titles: false,
            trash_days: crate::backend::local::DEFAULT_TRASH_DAYS,
        }
    } else {
        let known: Vec<&str> = ctx.config.profiles.keys().map(String::as_str).collect();
        return Err(CliError::new(
            super::error::Kind::Config,
            format!(
                "{flag} {name}: no such profile (known: {}); a database is named by its path \
                 (./{name}.db)",
                known.join(", ")
            ),
        ));
    };
    Ok(ctx.with_profile(profile))
}

/// A `--from`/`--to` value that names a database rather than a profile: a file path, or a
/// `postgres://` URL.
fn as_database(name: &str) -> Option<StoreLocation> {
    let path_like = name.contains('/')
        || name.contains('\\')
        || name.ends_with(".db")
        || name.ends_with(".sqlite");
    path_like
        .then(|| crate::config::parse_db_flag(name).ok())
        .flatten()
}

fn describe(profile: &Resolved) -> String {
    match profile {
        Resolved::Local { db, .. } => db.to_string(),
        Resolved::Remote { base_url, .. } => base_url.clone(),
    }
}

fn same_place(a: &Resolved, b: &Resolved) -> bool {
    match (a, b) {
        (
            Resolved::Local {
                db: StoreLocation::File(x),
                ..
            },
            Resolved::Local {
                db: StoreLocation::File(y),
                ..
            },
        ) => {
            x == y
                || std::fs::canonicalize(x)
                    .ok()
                    .zip(std::fs::canonicalize(y).ok())
                    .is_some_and(|(x, y)| x == y)
        }
        (Resolved::Local { db: x, .. }, Resolved::Local { db: y, .. }) => x == y,
        (Resolved::Remote { base_url: x, .. }, Resolved::Remote { base_url: y, .. }) => x == y,
        _ => false,
    }
}

/// Source domain id → destination domain name. A domain that the copied links use but that is
/// missing there stops the copy before anything is written.
async fn map_domains(
    src: &dyn Backend,
    dst: &dyn Backend,
    query: &crate::domain::LinkQuery,
    to: &str,
) -> CliResult<HashMap<i64, String>> {
    let theirs = crate::backend::all_domains(dst).await?;
    let mut map = HashMap::new();
    let mut missing = Vec::new();
    for d in crate::backend::all_domains(src).await? {
        match theirs
            .iter()
            .find(|t: &&Domain| t.host().eq_ignore_ascii_case(d.host()))
        {
            Some(t) => {
                map.insert(d.id, t.name.clone());
            }
            None => {
                let used = src
                    .list_links(&crate::domain::LinkQuery {
                        domain: Some(d.id),
                        per_page: crate::domain::PER_PAGE_MIN,
                        ..query.clone()
                    })
                    .await?
                    .total;
                if used > 0 {
                    missing.push(format!("{} ({})", d.host(), plural(used, "link")));
                }
            }
        }
    }
    if missing.is_empty() {
        Ok(map)
    } else {
        Err(CliError::new(
            super::error::Kind::Validation,
            format!(
                "nothing copied: {to} has no domain {}; add it there first (`linkdeck domains \
                 add HOST` on that database or server)",
                missing.join(", ")
            ),
        ))
    }
}

async fn copy_spaces(
    src: &dyn Backend,
    dest: &mut Destination<'_>,
    args: &CopyArgs,
    summary: &mut CopySummary,
) -> CliResult {
    let spaces = crate::backend::all_spaces(src, Sort::Asc).await?;
    let wanted: Vec<SpaceInput> = spaces
        .iter()
        .filter(|s| match &args.filter.space {
            Some(name) => s.name.eq_ignore_ascii_case(name.trim()) || s.id.to_string() == *name,
            None => true,
        })
        .map(|s| SpaceInput {
            name: Some(s.name.clone()),
            color: Some(s.color.number().to_string()),
        })
        .collect();
    if args.dry_run {
        summary.spaces_created += wanted.iter().filter(|s| !dest.has_space(s)).count();
        return Ok(());
    }
    let declared = wanted
        .into_iter()
        .enumerate()
        .map(|(i, s)| (Place::line(i + 1), s))
        .collect();
    summary.spaces_created += dest.declare_spaces(declared).await?.spaces_created;
    Ok(())
}

/// Decides every link of a page, each planned one with its id at the source; a taken alias
/// under `fail` is an error before anything of the page is written. Expiry times are written in
/// the destination's zone, which reads them.
fn plan_page(
    target: &Context,
    links: &[Link],
    domains: &HashMap<i64, String>,
    dest: &mut Destination<'_>,
    args: &CopyArgs,
    summary: &mut CopySummary,
) -> CliResult<Vec<(Id, Planned)>> {
    let mut errors = FieldErrors::default();
    let mut planned = Vec::new();
    for link in links {
        let place = Place::line(usize::try_from(link.id).unwrap_or(0));
        let mut record = LinkRecord::from_link(link, target.timezone());
        if let Some(d) = &link.domain {
            record.domain = domains.get(&d.id).cloned();
        }
        let import = record
            .to_import(|name| dest.domain_id(name))
            .map_err(|e| CliError::from(Error::Validation(e)))?;
        let lost_password = import.lost_password;
        let row = ImportRow {
            place,
            input: import.input,
            space: import.space,
            carried: import.carried,
        };
        match dest.check(row, args.on_conflict) {
            Ok(Decision::Send(p)) => {
                // Only a link written now loses its password; one already there keeps its own.
                summary.passwords_not_copied += usize::from(lost_password);
                if let Some(r) = &p.renamed {
                    summary.renamed.push(r.clone());
                }
                planned.push((link.id, *p));
            }
            Ok(Decision::AlreadyThere | Decision::Skipped) => {}
            Err(e) => {
                // Keyed by the source link, which a person can find.
                for (_, messages) in e.iter() {
                    for m in messages {
                        errors.add(&format!("link {}: alias", link.alias), m.clone());
                    }
                }
            }
        }
    }
    if errors.is_empty() {
        Ok(planned)
    } else {
        let mut err = CliError::from(Error::Validation(errors));
        err.message = format!(
            "{} links stopped the copy (--on-conflict skip or rename decides taken aliases)",
            err.fields.len()
        );
        Err(err)
    }
}

/// Gives the links about to be sent their traffic history from the source — a database, or a
/// linkdeck server a request per page. Only links that will be written ask for it: those
/// already there keep what they have.
async fn add_history(source: &History, planned: &mut [(Id, Planned)]) -> Result<(), Error> {
    let ids: Vec<Id> = planned.iter().map(|(id, _)| *id).collect();
    let mut history = match source {
        History::Local(local) => local.traffic_history(ids).await?,
        History::Server(server, at_most) => {
            let mut all = std::collections::HashMap::new();
            for some in ids.chunks(*at_most) {
                all.extend(server.traffic_history(some).await?);
            }
            all
        }
    };
    for (id, p) in planned {
        if let Some(hours) = history.remove(id) {
            p.carried.traffic = hours;
        }
    }
    Ok(())
}

/// Writes a page of planned links: into a local database as one transaction, into a linkdeck
/// server as one request (titles, clicks, creation dates and traffic history kept either way),
/// into another server a few requests at a time. Gives what was written, also when it fails
/// part way: then how many links were created, and the error.
async fn send_page(
    dest: &mut Destination<'_>,
    sink: &Sink,
    planned: Vec<(Id, Planned)>,
    on_conflict: OnConflict,
) -> Result<ImportSummary, (usize, Error)> {
    let planned = planned.into_iter().map(|(_, p)| p);
    match sink {
        Sink::Linkdeck(server, max_bytes) => dest
            .import_records(server, *max_bytes, planned.collect(), on_conflict)
            .await
            .map_err(|(done, e, _)| (done.links_created, e)),
        Sink::Local(local) => {
            let mut rows = Vec::new();
            for p in planned {
                let mut input = p.input;
                if let Some(name) = &p.space {
                    input.space = Some(dest.space_id(name).await.map_err(|e| (0, e))?.to_string());
                }
                rows.push(Incoming::Row(Box::new(ImportRow {
                    place: p.place,
                    input,
                    space: None,
                    carried: p.carried,
                })));
            }
            local
                .import_stream(Vec::new(), rows.into_iter(), ImportOptions::default())
                .await
                .map_err(|e| (0, e))
        }
        Sink::V1 => dest
            .send_all(planned.collect())
            .await
            .map(|n| ImportSummary {
                links_created: n,
                ..ImportSummary::default()
            }),
    }
}

/// A copy that stopped part way: what arrived, and how to finish.
fn stopped(e: Error, summary: &CopySummary) -> CliError {
    let mut err = CliError::from(e);
    err.message = format!(
        "copy from {} to {} stopped after {} ({}); run the same command again to finish: links \
         already there are passed over",
        summary.from,
        summary.to,
        plural(summary.links_copied as u64, "new link"),
        err.message
    );
    err
}

fn report(ctx: &Context, summary: &CopySummary) -> CliResult {
    if ctx.json {
        return Ok(print_json(&json!(summary))?);
    }
    let verb = if summary.dry_run {
        "would copy"
    } else {
        "copied"
    };
    let mut text = format!(
        "{verb} {} and {} from {} to {}",
        plural(summary.links_copied as u64, "link"),
        plural(summary.spaces_created as u64, "new space"),
        summary.from,
        summary.to
    );
    if summary.links_already_there > 0 {
        text.push_str(&format!(
            "\n{} already there, passed over",
            plural(summary.links_already_there as u64, "link")
        ));
    }
    if summary.links_skipped > 0 {
        text.push_str(&format!(
            "\n{} skipped: alias taken there by another link",
            plural(summary.links_skipped as u64, "link")
        ));
    }
    if summary.tags_not_copied > 0 {
        text.push_str(&format!(
            "\n{} copied without their tags: the server keeps none",
            plural(summary.tags_not_copied as u64, "link")
        ));
    }
    if summary.options_not_copied > 0 {
        text.push_str(&format!(
            "\n{} copied without their options (forwarding, indexing, preview): the server \
             keeps none",
            plural(summary.options_not_copied as u64, "link")
        ));
    }
    for r in summary.renamed.iter().take(20) {
        text.push_str(&format!("\nrenamed {} → {}", r.from, r.to));
    }
    if summary.renamed.len() > 20 {
        text.push_str(&format!(
            "\n… and {} more renamed (--json lists them all)",
            summary.renamed.len() - 20
        ));
    }
    if summary.passwords_not_copied > 0 {
        text.push_str(&format!(
            "\nnot copied: the passwords of {} (only their hashes are kept; set them again)",
            plural(summary.passwords_not_copied as u64, "link")
        ));
    }
    if summary.clicks_copied > 0 {
        text.push_str(&format!(
            "\ntraffic history carried: {}",
            plural(summary.clicks_copied, "click")
        ));
    }
    if let Some(what) = summary.not_carried {
        text.push_str(&format!("\nnot carried {what}"));
    }
    Ok(print(&text)?)
}
