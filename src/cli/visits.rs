//! `linkdeck visits export`: the raw visit log out, as NDJSON or CSV (`wire::visits`), for a
//! link, a space, a domain or every link, in a period. Visits are written as they are read, so
//! memory stays flat however many there are; a file is replaced only once the export is
//! complete. `linkdeck visits tail`: the visits as they arrive, a line each.

use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::path::PathBuf;

use clap::{Args, Subcommand};
use futures::StreamExt;
use jiff::civil::Date;
use serde_json::json;

use super::context::Context;
use super::error::{CliError, CliResult};
use super::output::{plural, print, print_json};
use super::scope_args::{ScopeArgs, parse_period};
use super::transfer::{is_stdio, partial_path};
use crate::backend::Backend;
use crate::domain::{Id, Period, PeriodSpec, Preset, VisitQuery};
use crate::wire::visits::VisitFormat;

#[derive(Debug, Subcommand)]
pub enum VisitsCommand {
    /// Write the raw visits (kept for the server's `visit_log_days`) as NDJSON or CSV: one
    /// line a visit with its time, link, country, platform, browser, referrer and language.
    Export(ExportArgs),
    /// Print visits as they arrive, a line each (NDJSON with --json), until interrupted.
    Tail(TailArgs),
}

#[derive(Debug, Args)]
pub struct TailArgs {
    #[command(flatten)]
    pub scope: ScopeArgs,
}

#[derive(Debug, Args)]
pub struct ExportArgs {
    #[command(flatten)]
    pub scope: ScopeArgs,
    /// 24h, 7d, 30d, 90d, 12m or all (the default), ending now.
    #[arg(long, value_parser = parse_period, conflicts_with_all = ["from", "to"])]
    pub period: Option<Preset>,
    /// The first day (YYYY-MM-DD, in the profile's time zone); with --to.
    #[arg(long, value_name = "DATE", requires = "to")]
    pub from: Option<Date>,
    /// The last day, included; with --from.
    #[arg(long, value_name = "DATE", requires = "from")]
    pub to: Option<Date>,
    /// Only visits after this one: the last id an earlier export wrote, to go on from there.
    #[arg(long, value_name = "VISIT_ID")]
    pub after: Option<Id>,
    /// ndjson (one JSON object a line) or csv; by default from the file's extension, else
    /// ndjson.
    #[arg(long, value_enum)]
    pub format: Option<VisitFormat>,
    /// The file to write (standard output when left out or `-`).
    #[arg(long, short)]
    pub output: Option<PathBuf>,
}

pub async fn run(ctx: &Context, command: VisitsCommand) -> CliResult {
    match command {
        VisitsCommand::Export(args) => export(ctx, args).await,
        VisitsCommand::Tail(args) => tail(ctx, args).await,
    }
}

/// The instants `[since, until)` the period flags name, in the profile's zone; all time is no
/// bound at all.
fn window(
    ctx: &Context,
    args: &ExportArgs,
) -> CliResult<(Option<jiff::Timestamp>, Option<jiff::Timestamp>)> {
    let spec = match (args.from, args.to, args.period) {
        (Some(from), Some(to), _) => PeriodSpec::Dates { from, to },
        (_, _, Some(preset)) if preset != Preset::All => PeriodSpec::preset(preset),
        _ => return Ok((None, None)),
    };
    let period =
        Period::resolve(spec, jiff::Timestamp::now(), ctx.timezone(), None).map_err(|errors| {
            let said: Vec<String> = errors
                .iter()
                .map(|(field, messages)| format!("--{field} {}", messages.join(", ")))
                .collect();
            CliError::usage(said.join("; "))
        })?;
    Ok((Some(period.from), Some(period.to)))
}

async fn export(ctx: &Context, args: ExportArgs) -> CliResult {
    let (since, until) = window(ctx, &args)?;
    let backend = ctx.backend().await?;
    let scope = args.scope.scope(backend.as_ref()).await?;
    let query = VisitQuery {
        scope,
        since,
        until,
        after: args.after,
    };
    let file = args.output.filter(|f| !is_stdio(f));
    let format = args
        .format
        .or_else(|| {
            let ext = file.as_deref()?.extension()?.to_str()?.to_ascii_lowercase();
            VisitFormat::parse(&ext)
        })
        .unwrap_or_default();
    let Some(path) = file else {
        let out = BufWriter::new(io::stdout());
        write_visits(backend.as_ref(), &query, format, out).await?;
        return Ok(());
    };
    // Written beside the target and renamed into place, so a failed export never leaves a
    // truncated file where a good one was.
    let partial = partial_path(&path);
    let cannot = |e: io::Error| CliError::failure(format!("cannot write {}: {e}", path.display()));
    let result = async {
        let out = File::create(&partial).map_err(cannot)?;
        let written = write_visits(backend.as_ref(), &query, format, BufWriter::new(out)).await?;
        std::fs::rename(&partial, &path).map_err(cannot)?;
        Ok::<_, CliError>(written)
    }
    .await;
    let written = match result {
        Ok(w) => w,
        Err(e) => {
            let _ = std::fs::remove_file(&partial);
            return Err(e);
        }
    };
    if ctx.json {
        return Ok(print_json(&json!({
            "file": path.display().to_string(),
            "visits": written.visits,
            "last_id": written.last_id,
        }))?);
    }
    let mut said = format!(
        "wrote {} to {}",
        plural(written.visits, "visit"),
        path.display()
    );
    if let Some(last) = written.last_id {
        said.push_str(&format!(" (--after {last} goes on from the last one)"));
    }
    Ok(print(&said)?)
}

/// What an export wrote.
struct Written {
    visits: u64,
    last_id: Option<Id>,
}

async fn write_visits<W: Write>(
    backend: &dyn Backend,
    query: &VisitQuery,
    format: VisitFormat,
    mut out: W,
) -> CliResult<Written> {
    let mut visits = backend.visits(query).await?;
    let mut written = Written {
        visits: 0,
        last_id: None,
    };
    out.write_all(&format.head())?;
    while let Some(visit) = visits.next().await {
        let visit = visit?;
        out.write_all(&format.line(&visit))?;
        written.visits += 1;
        written.last_id = Some(visit.id);
    }
    out.flush()?;
    Ok(written)
}

async fn tail(ctx: &Context, args: TailArgs) -> CliResult {
    let backend = ctx.backend().await?;
    let scope = args.scope.scope(backend.as_ref()).await?;
    let mut visits = backend.live_visits(scope, None).await?;
    if !ctx.quiet {
        eprintln!(
            "following the visits of {} (Ctrl-C stops)",
            args.scope.name()
        );
    }
    let mut out = io::stdout();
    while let Some(visit) = visits.next().await {
        let visit = visit?;
        let line = if ctx.json {
            VisitFormat::Ndjson.line(&visit)
        } else {
            tail_line(&visit, ctx.timezone()).into_bytes()
        };
        out.write_all(&line)?;
        out.flush()?;
    }
    Ok(())
}

/// A visit as `visits tail` prints it for people: the local time, the alias, then each value
/// (`-` where none was known).
fn tail_line(visit: &crate::domain::Visit, tz: &jiff::tz::TimeZone) -> String {
    let at = visit.at.to_zoned(tz.clone()).strftime("%Y-%m-%d %H:%M:%S");
    let value = |v: &Option<String>| v.clone().unwrap_or_else(|| "-".to_owned());
    let mut line = format!(
        "{at}  {}  {}  {}  {}  {}  {}",
        visit.alias,
        value(&visit.country),
        value(&visit.platform),
        value(&visit.browser),
        value(&visit.referrer),
        value(&visit.language),
    );
    if let Some(rule) = &visit.rule {
        line.push_str("  by ");
        line.push_str(rule);
    }
    if let Some(address) = &visit.address {
        line.push_str("  ");
        line.push_str(address);
    }
    // What a visitor sent must not steer the terminal.
    let mut line = crate::domain::cleaned(&line).into_owned();
    line.push('\n');
    line
}
