//! `linkdeck trash list|restore|empty`: the deleted links and spaces a local database keeps
//! for `trash_days`, brought back with their ids, clicks and visits, or deleted for good.

use std::io::{BufRead, IsTerminal, Write};

use clap::Subcommand;
use serde_json::json;

use super::context::Context;
use super::error::{CliError, CliResult};
use super::output::{Table, date_time, print, print_json, thousands};
use crate::backend::local::LocalBackend;
use crate::backend::{Backend, BulkReport, Trashed, TrashedKind};
use crate::domain::{Error, PER_PAGE_MAX, Shown};

#[derive(Debug, Subcommand)]
pub enum TrashCommand {
    /// List deleted links and spaces, newest first, and when each is purged.
    #[command(visible_alias = "ls")]
    List {
        #[arg(long, default_value_t = 1)]
        page: u32,
        /// 10 to 100.
        #[arg(long, default_value_t = 50)]
        per_page: u32,
    },
    /// Bring deleted links and spaces back, with their ids, clicks and visits.
    Restore {
        /// Links by id or alias; spaces as space:ID or space:NAME.
        #[arg(required_unless_present = "all")]
        items: Vec<String>,
        /// Everything in the trash.
        #[arg(long, conflicts_with = "items")]
        all: bool,
    },
    /// Delete everything in the trash for good.
    Empty {
        /// Do not ask (required when standard input is not a terminal).
        #[arg(long, short = 'y')]
        yes: bool,
    },
}

pub async fn run(ctx: &Context, command: TrashCommand) -> CliResult {
    if !matches!(command, TrashCommand::List { .. }) {
        ctx.writable("trash")?;
    }
    let backend = ctx.local("trash").await?;
    match command {
        TrashCommand::List { page, per_page } => list(ctx, &backend, page, per_page).await,
        TrashCommand::Restore { items, all } => {
            let report = if all {
                backend.restore_all().await?
            } else {
                let trash = everything(&backend).await?;
                let chosen = items
                    .iter()
                    .map(|arg| find(&trash, arg))
                    .collect::<CliResult<Vec<_>>>()?;
                backend.restore(&chosen).await?
            };
            report_restore(ctx, &report)
        }
        TrashCommand::Empty { yes } => {
            let held = backend.trash(1, 10).await?.map_or(0, |p| p.total);
            if held == 0 {
                return Ok(print("the trash is empty")?);
            }
            if !yes {
                if !std::io::stdin().is_terminal() {
                    return Err(CliError::usage(format!(
                        "the trash holds {}; add --yes to delete them for good",
                        thousands(held)
                    )));
                }
                let mut err = std::io::stderr().lock();
                write!(
                    err,
                    "Delete the {} items in the trash for good, with their visits? [y/N] ",
                    thousands(held)
                )?;
                err.flush()?;
                let mut answer = String::new();
                std::io::stdin().lock().read_line(&mut answer)?;
                if !matches!(answer.trim().to_ascii_lowercase().as_str(), "y" | "yes") {
                    return Ok(print("nothing deleted")?);
                }
            }
            let n = backend.empty_trash().await?;
            if ctx.json {
                Ok(print_json(&json!({"purged": n}))?)
            } else {
                Ok(print(&format!("deleted {} for good", thousands(n)))?)
            }
        }
    }
}

async fn list(ctx: &Context, backend: &LocalBackend, page: u32, per_page: u32) -> CliResult {
    if !(crate::domain::PER_PAGE_MIN..=PER_PAGE_MAX).contains(&per_page) || page == 0 {
        return Err(CliError::usage("--page is 1 or more, --per-page 10 to 100"));
    }
    let trash = backend
        .trash(page, per_page)
        .await?
        .ok_or_else(crate::backend::trash::no_trash)?;
    if ctx.json {
        let items: Vec<_> = trash
            .items
            .iter()
            .map(|t| {
                json!({
                    "kind": t.kind.as_str(), "id": t.id, "name": t.name, "detail": t.detail,
                    "clicks": t.clicks, "deleted_at": t.deleted_at, "purge_at": t.purge_at,
                })
            })
            .collect();
        return Ok(print_json(&json!({
            "items": items, "page": trash.page, "per_page": trash.per_page,
            "total": trash.total, "last_page": trash.last_page(),
        }))?);
    }
    if trash.items.is_empty() {
        return Ok(print("the trash is empty")?);
    }
    let tz = ctx.timezone();
    let mut table = Table::new(&[
        ("KIND", 5, false),
        ("ID", 10, true),
        ("NAME", 24, false),
        ("WHAT", 48, false),
        ("CLICKS", 12, true),
        ("DELETED", 22, false),
        ("PURGED", 22, false),
    ]);
    for t in &trash.items {
        table.row(vec![
            t.kind.as_str().to_owned(),
            t.id.to_string(),
            t.name.clone(),
            t.detail.clone(),
            thousands(t.clicks),
            date_time(t.deleted_at, tz),
            t.purge_at
                .map_or("never".to_owned(), |at| date_time(at, tz)),
        ]);
    }
    print(&table.render())?;
    Ok(print(&format!(
        "page {} of {} · {} in the trash · `linkdeck trash restore ID…` brings them back",
        trash.page,
        trash.last_page(),
        thousands(trash.total)
    ))?)
}

/// Every item in the trash (a person names them; the trash is read whole to find them).
async fn everything(backend: &LocalBackend) -> CliResult<Vec<Trashed>> {
    let mut all = Vec::new();
    let mut page = 1;
    loop {
        let Some(trash) = backend.trash(page, PER_PAGE_MAX).await? else {
            break;
        };
        let more = trash.has_next() && !trash.items.is_empty();
        all.extend(trash.items);
        if !more {
            break;
        }
        page += 1;
    }
    Ok(all)
}

/// The trashed item `arg` names: `42` or `promo` (a link), `space:7` or `space:Launch`.
fn find(trash: &[Trashed], arg: &str) -> CliResult<Trashed> {
    let (kind, name) = match arg.split_once(':') {
        Some(("space", rest)) => (TrashedKind::Space, rest),
        Some(("link", rest)) => (TrashedKind::Link, rest),
        _ => (TrashedKind::Link, arg),
    };
    let name = name.trim();
    let by_id = name.parse::<i64>().ok();
    trash
        .iter()
        .find(|t| t.kind == kind && (Some(t.id) == by_id || t.name.eq_ignore_ascii_case(name)))
        .cloned()
        .ok_or_else(|| Error::not_found(format!("{} {name} in the trash", kind.as_str())).into())
}

fn report_restore(ctx: &Context, report: &BulkReport) -> CliResult {
    if ctx.json {
        let failed: Vec<_> = report
            .failed
            .iter()
            .map(|f| json!({"id": f.id, "name": f.alias, "error": f.error.to_string()}))
            .collect();
        print_json(&json!({"restored": report.changed, "failed": failed}))?;
    } else {
        print(&format!("restored {}", thousands(report.changed)))?;
        for failure in &report.failed {
            print(&format!(
                "  {} (still in the trash)",
                Shown(&failure.to_string())
            ))?;
        }
    }
    let failed = format!("{} could not be restored", report.failed.len());
    super::bulk::exit_status(report, failed)
}
