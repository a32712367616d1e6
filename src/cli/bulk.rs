//! `links update` and `links delete` over every link a filter matches: a dry run that counts
//! and shows the first matches, a confirmation on a terminal (`--yes` skips it, and is required
//! without one), then the work with a plain summary of what changed and what failed.

use std::io::{BufRead, IsTerminal, Write};

use clap::Args;
use serde_json::json;

use super::context::Context;
use super::error::{CliError, CliResult};
use super::link_filter::{LinkFilterArgs, parse_by, parse_status, parse_tag};
use super::link_view::{link_json, link_table};
use super::output::{print, print_json, thousands};
use crate::backend::{Backend, BulkAction, BulkReport, Progress, Selection};
use crate::domain::{LinkQuery, SearchBy, Shown, StatusFilter};

/// How many matches a dry run and a confirmation show.
const SHOWN: u32 = 10;

/// Which links a bulk command acts on, and how carefully.
#[derive(Debug, Args)]
pub struct MatchArgs {
    /// Act on every link whose title (or --by field) contains TEXT.
    #[arg(long, value_name = "TEXT")]
    pub search: Option<String>,
    /// The field --search looks in: title, alias or url.
    #[arg(long, value_name = "FIELD", value_parser = parse_by, default_value = "title")]
    pub by: SearchBy,
    /// Act on links of this status: active, expired or disabled.
    #[arg(long, value_name = "STATUS", value_parser = parse_status)]
    pub status: Option<StatusFilter>,
    /// Act on the links in this space (id or name).
    #[arg(long, value_name = "ID|NAME")]
    pub in_space: Option<String>,
    /// Act on the links in no space.
    #[arg(long, conflicts_with = "in_space")]
    pub in_no_space: bool,
    /// Act on the links on this domain (id or name).
    #[arg(long, value_name = "ID|NAME")]
    pub on_domain: Option<String>,
    /// Act on the links carrying this tag; repeat it for links carrying every one of them.
    #[arg(long, value_name = "TAG", value_parser = parse_tag)]
    pub tagged: Vec<String>,
    /// With --tagged: the links carrying any of the tags instead of all of them.
    #[arg(long, requires = "tagged")]
    pub tagged_any: bool,
    /// Act on every link (no filter).
    #[arg(long)]
    pub all: bool,
    /// Only count the matches and show the first ones; change nothing.
    #[arg(long)]
    pub dry_run: bool,
    /// Do not ask for confirmation (required when standard input is not a terminal).
    #[arg(long, short = 'y')]
    pub yes: bool,
}

impl MatchArgs {
    /// Whether any filter (or `--all`) was given.
    pub fn given(&self) -> bool {
        self.all
            || self.search.is_some()
            || self.status.is_some()
            || self.in_space.is_some()
            || self.in_no_space
            || self.on_domain.is_some()
            || !self.tagged.is_empty()
    }

    /// The flags that only make sense with a filter, for refusing them beside a single link.
    pub fn refuse_with_one_link(&self) -> CliResult {
        if self.given() || self.dry_run {
            return Err(CliError::usage(
                "name one link, or give filters (--search, --status, --in-space, --in-no-space, \
                 --on-domain, --tagged, --all) to act on every match, not both",
            ));
        }
        Ok(())
    }

    async fn query(&self, backend: &dyn Backend) -> CliResult<LinkQuery> {
        LinkFilterArgs {
            search: self.search.clone(),
            by: self.by,
            status: self.status.unwrap_or_default(),
            space: self.in_space.clone(),
            no_space: self.in_no_space,
            domain: self.on_domain.clone(),
            tags: self.tagged.clone(),
            any_tag: self.tagged_any,
        }
        .query(backend)
        .await
    }

    /// "matching search "spring" in url, status expired, in space Launch".
    fn describe(&self) -> String {
        let mut parts = Vec::new();
        if let Some(search) = &self.search {
            parts.push(format!("search \"{search}\" in {}", self.by.as_str()));
        }
        if let Some(status) = self.status {
            parts.push(format!("status {}", status.label()));
        }
        if let Some(space) = &self.in_space {
            parts.push(format!("in space {space}"));
        }
        if self.in_no_space {
            parts.push("in no space".to_owned());
        }
        if let Some(domain) = &self.on_domain {
            parts.push(format!("on domain {domain}"));
        }
        if !self.tagged.is_empty() {
            let how = if self.tagged_any { " or " } else { " and " };
            parts.push(format!("tagged {}", self.tagged.join(how)));
        }
        if parts.is_empty() {
            "(every link)".into()
        } else {
            format!("matching {}", parts.join(", "))
        }
    }
}

/// Runs `action` on every link `m` matches. `done` is the past tense for the summary
/// ("disabled", "deleted").
pub async fn run(
    ctx: &Context,
    backend: &dyn Backend,
    m: &MatchArgs,
    action: BulkAction,
    done: &str,
) -> CliResult {
    if !m.given() {
        return Err(CliError::usage(
            "name a link, or give filters (--search, --status, --in-space, --on-domain) or --all",
        ));
    }
    action.check(&backend.input_zone())?;
    let selection = Selection::matching(m.query(backend).await?);
    let preview = backend.preview(&selection, SHOWN).await?;
    let now = ctx.clock.now();
    let what = format!("{} {}", links_word(preview.total), m.describe());
    if m.dry_run {
        if ctx.json {
            let first: Vec<_> = preview.first.iter().map(|l| link_json(l, now)).collect();
            return Ok(print_json(
                &json!({"total": preview.total, "first": first}),
            )?);
        }
        if preview.total > 0 {
            print(&link_table(ctx, &preview.first, now).render())?;
        }
        let more = preview.total.saturating_sub(preview.first.len() as u64);
        let tail = if more > 0 {
            format!(" ({} more not shown)", thousands(more))
        } else {
            String::new()
        };
        return Ok(print(&format!(
            "dry run: would {} {what}{tail}; nothing changed",
            action.verb()
        ))?);
    }
    if preview.total == 0 {
        return Ok(print(&format!(
            "no links {}; nothing changed",
            m.describe()
        ))?);
    }
    if !m.yes && !confirm(ctx, &action, &what, &preview.first)? {
        return Ok(print("nothing changed")?);
    }
    // The bar (on a terminal only) follows the backend's count; the summary is printed either way.
    let bar = super::progress::Progress::start(
        ctx,
        &action.verb(),
        Some(preview.total),
        super::progress::Unit::Items("links"),
    );
    let watched = bar.clone();
    let progress = Progress::with_callback(move |done, total| {
        watched.set_length(total);
        watched.set_position(done);
    });
    let report = backend.bulk(&selection, &action, &progress).await;
    bar.finish();
    summarize(ctx, &report?, done)
}

fn links_word(n: u64) -> String {
    format!("{} link{}", thousands(n), if n == 1 { "" } else { "s" })
}

/// Asks on the terminal; without one, refuses (a script must say `--yes`).
fn confirm(
    ctx: &Context,
    action: &BulkAction,
    what: &str,
    first: &[crate::domain::Link],
) -> CliResult<bool> {
    if !std::io::stdin().is_terminal() {
        return Err(CliError::usage(format!(
            "{what}: add --yes to {} them without asking (or --dry-run to list them)",
            action.verb()
        )));
    }
    let mut err = std::io::stderr().lock();
    let table = link_table(ctx, first, ctx.clock.now()).render();
    write!(err, "{table}")?;
    if !table.ends_with('\n') {
        writeln!(err)?;
    }
    let undo = match action {
        BulkAction::Delete if ctx.profile.is_local() => {
            " (they go to the trash: `linkdeck trash restore` brings them back)"
        }
        BulkAction::Delete => " (the server keeps no trash: this cannot be undone)",
        BulkAction::Update(_) | BulkAction::Tag { .. } => "",
    };
    write!(err, "{} {what}{undo}? [y/N] ", capitalize(&action.verb()))?;
    err.flush()?;
    let mut answer = String::new();
    std::io::stdin().lock().read_line(&mut answer)?;
    Ok(matches!(
        answer.trim().to_ascii_lowercase().as_str(),
        "y" | "yes"
    ))
}

fn capitalize(s: &str) -> String {
    let mut chars = s.chars();
    chars
        .next()
        .map(|c| c.to_uppercase().chain(chars).collect())
        .unwrap_or_default()
}

/// Prints what changed and what failed; a failure makes the command fail too, after the rest
/// was done.
fn summarize(ctx: &Context, report: &BulkReport, done: &str) -> CliResult {
    if ctx.json {
        let failed: Vec<_> = report
            .failed
            .iter()
            .map(|f| json!({"id": f.id, "alias": f.alias, "error": f.error.to_string()}))
            .collect();
        print_json(&json!({
            "matched": report.matched,
            "changed": report.changed,
            "unchanged": report.unchanged,
            "failed": failed,
            "cancelled": report.cancelled,
        }))?;
    } else {
        print(&report.summary(done))?;
        for failure in &report.failed {
            print(&format!("  {}", Shown(&failure.to_string())))?;
        }
    }
    let failed = format!("{} of {} links failed", report.failed.len(), report.matched);
    exit_status(report, failed)
}

/// How a command that did a bulk action ends: well when nothing failed, else with the first
/// failure's exit status and `failed`, which says how many.
pub(super) fn exit_status(report: &BulkReport, failed: String) -> CliResult {
    match report.failed.first() {
        None => Ok(()),
        Some(first) => Err(CliError::new(
            CliError::from(first.error.clone()).kind,
            failed,
        )),
    }
}
