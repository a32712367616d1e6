//! `linkdeck export [FILE]`: every space and link out as JSON or CSV (the formats live in
//! `crate::transfer`; `import.rs` reads them back).

use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};

use clap::Args;
use serde_json::json;

use super::PER_PAGE_MAX;
use super::context::Context;
use super::error::{CliError, CliResult};
use super::output::{plural, print, print_json};
use super::progress::{Progress, Unit};
use crate::backend::Backend;
use crate::backend::local::LocalBackend;
use crate::backend::remote::RemoteBackend;
use crate::domain::{Id, Link, LinkQuery, Sort};
use crate::transfer::{CsvWriter, Format, JsonWriter, LinkRecord, SpaceRecord, TrafficRecord};

#[derive(Debug, Args)]
pub struct ExportArgs {
    /// The file to write (standard output when left out). It is replaced only once the export
    /// is complete.
    pub file: Option<PathBuf>,
    /// json or csv; by default from the file's extension, else json.
    #[arg(long, value_enum)]
    pub format: Option<Format>,
}

pub(super) fn is_stdio(path: &Path) -> bool {
    path.as_os_str() == "-"
}

pub async fn export(ctx: &Context, args: ExportArgs) -> CliResult {
    let file = args.file.filter(|f| !is_stdio(f));
    let format = args
        .format
        .or_else(|| file.as_deref().and_then(Format::from_path))
        .unwrap_or(Format::Json);
    let backend = ctx.backend().await?;

    let Some(path) = file else {
        let counts = write_export(ctx, backend.as_ref(), format, io::stdout().lock()).await?;
        note_passwords(counts.passwords);
        return Ok(());
    };
    // Written beside the target and renamed into place, so a failed export never leaves a
    // truncated file where a good one was.
    let partial = partial_path(&path);
    let result = async {
        let out = File::create(&partial)
            .map_err(|e| CliError::failure(format!("cannot write {}: {e}", path.display())))?;
        let counts = write_export(ctx, backend.as_ref(), format, BufWriter::new(out)).await?;
        std::fs::rename(&partial, &path)
            .map_err(|e| CliError::failure(format!("cannot write {}: {e}", path.display())))?;
        Ok::<_, CliError>(counts)
    }
    .await;
    let counts = match result {
        Ok(c) => c,
        Err(e) => {
            let _ = std::fs::remove_file(&partial);
            return Err(e);
        }
    };
    note_passwords(counts.passwords);
    if ctx.json {
        Ok(print_json(&json!({
            "file": path.display().to_string(),
            "spaces": counts.spaces,
            "links": counts.links,
        }))?)
    } else {
        Ok(print(&format!(
            "exported {} and {} to {}",
            plural(counts.links as u64, "link"),
            plural(counts.spaces as u64, "space"),
            path.display()
        ))?)
    }
}

pub(super) fn partial_path(path: &Path) -> PathBuf {
    let mut name = path.file_name().unwrap_or_default().to_os_string();
    name.push(format!(".partial-{}", std::process::id()));
    path.with_file_name(name)
}

fn note_passwords(n: usize) {
    if n > 0 {
        eprintln!(
            "note: {} a password, which cannot be exported (only its hash is stored); the \
             export marks such links with \"password\": true",
            if n == 1 {
                "1 link has".to_owned()
            } else {
                format!("{n} links have")
            }
        );
    }
}

#[derive(Default)]
struct Counts {
    spaces: usize,
    links: usize,
    passwords: usize,
}

async fn write_export<W: Write>(
    ctx: &Context,
    backend: &dyn Backend,
    format: Format,
    out: W,
) -> CliResult<Counts> {
    let mut counts = Counts::default();
    let spaces: Vec<SpaceRecord> = crate::backend::all_spaces(backend, Sort::Asc)
        .await?
        .iter()
        .map(SpaceRecord::from_space)
        .collect();
    counts.spaces = spaces.len();

    enum Writer<W: Write> {
        Json(JsonWriter<W>),
        Csv(Box<CsvWriter<W>>),
    }
    let csv_err = |e: ::csv::Error| CliError::from(io::Error::from(e));
    let mut writer = match format {
        Format::Json => {
            let mut w = JsonWriter::new(out)?;
            for s in &spaces {
                w.space(s)?;
            }
            Writer::Json(w)
        }
        Format::Csv => Writer::Csv(Box::new(CsvWriter::new(out, &spaces).map_err(csv_err)?)),
    };

    // Oldest first, so an import recreates them in the same order.
    let tz = ctx.timezone();
    let total = backend
        .list_links(&LinkQuery {
            per_page: crate::domain::PER_PAGE_MIN,
            ..LinkQuery::default()
        })
        .await?
        .total;
    let progress = Progress::start(ctx, "exporting", Some(total), Unit::Items("links"));
    let mut links = LinkBatches::new(ctx, backend).await?;
    while let Some(batch) = links.next().await? {
        progress.inc(batch.len() as u64);
        let mut history = match format {
            Format::Json => links.history(&batch).await?,
            Format::Csv => Default::default(),
        };
        for link in &batch {
            counts.links += 1;
            counts.passwords += usize::from(link.password);
            let mut record = LinkRecord::from_link(link, tz);
            record.traffic = history
                .remove(&link.id)
                .map(|hours| hours.iter().map(TrafficRecord::from_hour).collect());
            match &mut writer {
                Writer::Json(w) => w.link(&record)?,
                Writer::Csv(w) => w.link(&record).map_err(csv_err)?,
            }
        }
    }
    progress.finish();
    match writer {
        Writer::Json(w) => {
            w.finish()?;
        }
        Writer::Csv(w) => {
            w.finish().map_err(csv_err)?.flush()?;
        }
    }
    Ok(counts)
}

/// Every link of the profile, oldest first, a batch at a time. A local database is walked by
/// id (linear at any size); a server is paged through its list, the only way its API offers.
enum LinkBatches<'a> {
    Local {
        backend: LocalBackend,
        after: Id,
        done: bool,
    },
    Paged {
        backend: &'a dyn Backend,
        /// The same server, for the traffic history a `linkdeck serve` gives.
        server: Option<RemoteBackend>,
        query: LinkQuery,
        done: bool,
    },
}

impl<'a> LinkBatches<'a> {
    async fn new(ctx: &Context, backend: &'a dyn Backend) -> CliResult<LinkBatches<'a>> {
        Ok(if ctx.profile.is_local() {
            LinkBatches::Local {
                backend: ctx.local("export").await?,
                after: 0,
                done: false,
            }
        } else {
            let query = LinkQuery {
                sort: Sort::Asc,
                per_page: PER_PAGE_MAX,
                ..LinkQuery::default()
            };
            LinkBatches::Paged {
                backend,
                server: ctx.remote()?,
                query,
                done: false,
            }
        })
    }

    /// The traffic history of `links`: a local database has it, and a `linkdeck serve` gives
    /// it; another server's API does not.
    async fn history(
        &self,
        links: &[Link],
    ) -> CliResult<std::collections::HashMap<Id, Vec<crate::domain::TrafficHour>>> {
        let ids: Vec<Id> = links.iter().map(|l| l.id).collect();
        match self {
            LinkBatches::Local { backend, .. } => Ok(backend.traffic_history(ids).await?),
            LinkBatches::Paged {
                server: Some(server),
                ..
            } => {
                let Some(caps) = server.linkdeck().await? else {
                    return Ok(Default::default());
                };
                let at_most = usize::try_from(caps.traffic_max_ids).unwrap_or(1).max(1);
                let mut all = std::collections::HashMap::new();
                for some in ids.chunks(at_most) {
                    all.extend(server.traffic_history(some).await?);
                }
                Ok(all)
            }
            LinkBatches::Paged { server: None, .. } => Ok(Default::default()),
        }
    }

    async fn next(&mut self) -> CliResult<Option<Vec<Link>>> {
        match self {
            LinkBatches::Local { done: true, .. } | LinkBatches::Paged { done: true, .. } => {
                Ok(None)
            }
            LinkBatches::Local {
                backend,
                after,
                done,
            } => {
                let batch = backend.links_after(*after, EXPORT_BATCH).await?;
                *done = batch.len() < EXPORT_BATCH as usize;
                *after = batch.last().map_or(*after, |l| l.id);
                Ok(Some(batch))
            }
            LinkBatches::Paged {
                backend,
                query,
                done,
                ..
            } => {
                let page = backend.list_links(query).await?;
                *done = !page.has_next();
                query.page += 1;
                Ok(Some(page.items))
            }
        }
    }
}

/// Links read per step of a local export.
const EXPORT_BATCH: u32 = 1000;
