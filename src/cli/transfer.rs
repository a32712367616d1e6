//! `linkdeck import FILE` and `linkdeck export [FILE]`: moving spaces and links in and out as
//! JSON or CSV (the formats live in `crate::transfer`).

use std::fs::File;
use std::io::{self, BufWriter, Read, Write};
use std::path::{Path, PathBuf};

use clap::Args;
use serde_json::json;

use super::PER_PAGE_MAX;
use super::context::Context;
use super::error::{CliError, CliResult, Kind};
use super::lookup::{all_domains, find_domain};
use super::output::{plural, print, print_json};
use crate::backend::Backend;
use crate::backend::local::LocalBackend;
use crate::domain::{
    Error, FieldErrors, Id, Link, LinkInput, LinkQuery, Mode, Sort, SpaceInput,
    validate_link_input, validate_space_input,
};
use crate::transfer::{
    self, CsvWriter, Format, JsonWriter, LinkRecord, SpaceRecord, TrafficRecord,
};

#[derive(Debug, Args)]
pub struct ImportArgs {
    /// The file to read (`-` for standard input).
    pub file: PathBuf,
    /// json or csv; by default from the file's extension.
    #[arg(long, value_enum)]
    pub format: Option<Format>,
}

#[derive(Debug, Args)]
pub struct ExportArgs {
    /// The file to write (standard output when left out). It is replaced only once the export
    /// is complete.
    pub file: Option<PathBuf>,
    /// json or csv; by default from the file's extension, else json.
    #[arg(long, value_enum)]
    pub format: Option<Format>,
}

fn is_stdio(path: &Path) -> bool {
    path.as_os_str() == "-"
}

pub async fn import(ctx: &Context, args: ImportArgs) -> CliResult {
    let name = args.file.display().to_string();
    let format = match (args.format, Format::from_path(&args.file)) {
        (Some(f), _) | (None, Some(f)) => f,
        (None, None) if is_stdio(&args.file) => Format::Json,
        (None, None) => {
            return Err(CliError::usage(format!(
                "cannot tell the format of {name}: name it .json or .csv, or give --format"
            )));
        }
    };
    let mut bytes = Vec::new();
    let read = if is_stdio(&args.file) {
        io::stdin().lock().read_to_end(&mut bytes).map(|_| ())
    } else {
        File::open(&args.file).and_then(|mut f| f.read_to_end(&mut bytes).map(|_| ()))
    };
    read.map_err(|e| CliError::failure(format!("cannot read {name}: {e}")))?;

    let mut bundle = transfer::read(&bytes, format).map_err(|e| {
        let what = format!("nothing imported: {name} is not a valid {format} import file");
        match e.line {
            Some(line) => {
                let mut fields = FieldErrors::default();
                fields.add(&format!("line {line}"), e.message);
                CliError::invalid(what, fields)
            }
            None => CliError::invalid(format!("{what}: {}", e.message), FieldErrors::default()),
        }
    })?;

    bundle.bring_traffic_forward(ctx.clock.now());
    let backend = ctx.backend().await?;
    let domains = all_domains(backend.as_ref()).await?;
    let mut errors = FieldErrors::default();
    let mut links = Vec::with_capacity(bundle.links.len());
    let mut traffic = Vec::with_capacity(bundle.links.len());
    let mut lost_passwords = 0usize;
    for n in &bundle.links {
        match n
            .record
            .to_import(|name| find_domain(&domains, name).map(|d| d.id))
        {
            Ok(link) => {
                lost_passwords += usize::from(link.lost_password);
                links.push((n.line, link.input, link.space));
                traffic.push(link.traffic);
            }
            Err(e) => {
                for (field, messages) in e.iter() {
                    for m in messages {
                        errors.add(&format!("line {}: {field}", n.line), m.clone());
                    }
                }
            }
        }
    }
    if !errors.is_empty() {
        return Err(Error::Validation(errors).into());
    }
    let spaces: Vec<(usize, SpaceInput)> = bundle
        .spaces
        .iter()
        .map(|n| (n.line, n.record.to_input()))
        .collect();

    let history_hours = traffic.iter().map(Vec::len).sum::<usize>();
    let mut clicks_imported = 0;
    let (spaces_created, links_created) = if ctx.profile.is_local() {
        let local = ctx.local("import").await?;
        let summary = local
            .import_batch_with_traffic(spaces, links, traffic)
            .await
            .map_err(|e| named(e, &name))?;
        clicks_imported = summary.clicks_imported;
        (summary.spaces_created, summary.links_created)
    } else {
        if history_hours > 0 {
            eprintln!(
                "note: the file's traffic history stays behind: a server's API has no way to \
                 take it in"
            );
        }
        // A server has no transaction across requests: check every row first, so a file with
        // a bad row sends nothing at all.
        check_rows(&spaces, &links, ctx.timezone()).map_err(|e| named(e, &name))?;
        import_one_by_one(backend.as_ref(), spaces, links).await?
    };

    if lost_passwords > 0 {
        eprintln!(
            "note: {} had a password in the export, which an export cannot carry; set it \
             again with `linkdeck links update ALIAS --password-stdin`",
            plural(lost_passwords, "link")
        );
    }
    if ctx.json {
        return Ok(print_json(&json!({
            "spaces_created": spaces_created,
            "links_created": links_created,
            "passwords_not_imported": lost_passwords,
            "clicks_imported": clicks_imported,
        }))?);
    }
    let history = if clicks_imported > 0 {
        format!(
            " (with {} of traffic history)",
            plural(clicks_imported as usize, "click")
        )
    } else {
        String::new()
    };
    Ok(print(&format!(
        "imported {} and {} from {name}{history}",
        plural(links_created, "link"),
        plural(spaces_created, "new space")
    ))?)
}

/// The rules a server would apply that need no stored state, for every row, errors keyed
/// `line N: field` as a local import reports them.
fn check_rows(
    spaces: &[(usize, SpaceInput)],
    links: &[(usize, LinkInput, Option<String>)],
    tz: &jiff::tz::TimeZone,
) -> Result<(), Error> {
    let mut errors = FieldErrors::default();
    let mut add = |line: usize, fields: FieldErrors| {
        for (field, messages) in fields.iter() {
            for m in messages {
                errors.add(&format!("line {line}: {field}"), m.clone());
            }
        }
    };
    for (line, input) in spaces {
        if let Err(fields) = validate_space_input(input, Mode::Create) {
            add(*line, fields);
        }
    }
    for (line, input, _) in links {
        if let Err(fields) = validate_link_input(input, Mode::Create, tz) {
            add(*line, fields);
        }
    }
    errors.into_result(()).map_err(Error::Validation)
}

/// Adds the file name to a failed import's message.
fn named(e: Error, file: &str) -> CliError {
    let mut err = CliError::from(e);
    if err.kind == Kind::Validation {
        err.message = format!("nothing imported from {file}: {}", err.message);
    }
    err
}

/// A server has no batch import: spaces and links are created one request at a time, after
/// the whole file has been read and its domains checked. A failure stops at the row named,
/// and says how much was already created, as a server cannot roll back.
async fn import_one_by_one(
    backend: &dyn Backend,
    spaces: Vec<(usize, SpaceInput)>,
    links: Vec<(usize, LinkInput, Option<String>)>,
) -> CliResult<(usize, usize)> {
    let mut existing: std::collections::HashMap<String, Id> =
        crate::backend::all_spaces(backend, Sort::Desc)
            .await?
            .into_iter()
            .map(|s| (s.name.to_lowercase(), s.id))
            .collect();
    let (mut spaces_created, mut links_created) = (0, 0);
    let stop = |line: usize, e: Error, spaces: usize, links: usize| {
        let mut err = CliError::from(match e {
            Error::Validation(fields) => {
                let mut lined = FieldErrors::default();
                for (f, ms) in fields.iter() {
                    for m in ms {
                        lined.add(&format!("line {line}: {f}"), m.clone());
                    }
                }
                Error::Validation(lined)
            }
            other => other,
        });
        err.message = format!(
            "import stopped at line {line} after creating {spaces} spaces and {links} links: {}",
            err.message
        );
        err
    };
    for (line, input) in spaces {
        let key = input.name.as_deref().unwrap_or("").trim().to_lowercase();
        if existing.contains_key(&key) {
            continue;
        }
        let space = backend
            .create_space(&input)
            .await
            .map_err(|e| stop(line, e, spaces_created, links_created))?;
        existing.insert(key, space.id);
        spaces_created += 1;
    }
    for (line, mut input, space) in links {
        if let Some(name) = space {
            match existing.get(&name.to_lowercase()) {
                Some(id) => input.space = Some(id.to_string()),
                None => {
                    return Err(stop(
                        line,
                        Error::field("space", format!("no space is named {name}")),
                        spaces_created,
                        links_created,
                    ));
                }
            }
        }
        backend
            .create_link(&input)
            .await
            .map_err(|e| stop(line, e, spaces_created, links_created))?;
        links_created += 1;
    }
    Ok((spaces_created, links_created))
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
            plural(counts.links, "link"),
            plural(counts.spaces, "space"),
            path.display()
        ))?)
    }
}

fn partial_path(path: &Path) -> PathBuf {
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
    let mut links = LinkBatches::new(ctx, backend).await?;
    while let Some(batch) = links.next().await? {
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
                query,
                done: false,
            }
        })
    }

    /// The traffic history of `links`: a local database has it; a server's API does not give it.
    async fn history(
        &self,
        links: &[Link],
    ) -> CliResult<std::collections::HashMap<Id, Vec<crate::domain::TrafficHour>>> {
        match self {
            LinkBatches::Local { backend, .. } => Ok(backend
                .traffic_history(links.iter().map(|l| l.id).collect())
                .await?),
            LinkBatches::Paged { .. } => Ok(Default::default()),
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::backend::local::{LocalOptions, LocalService};

    fn space(name: &str, color: &str) -> SpaceInput {
        SpaceInput {
            name: Some(name.into()),
            color: Some(color.into()),
        }
    }

    // The request-by-request import used for servers, run here over the embedded service.
    #[tokio::test]
    async fn one_by_one_import_reuses_spaces_and_stops_at_the_bad_row() {
        let dir = tempfile::tempdir().unwrap();
        let service =
            LocalService::open(&dir.path().join("t.db"), LocalOptions::default()).unwrap();
        let backend = service.default_backend().await.unwrap();
        backend.create_space(&space("Old", "1")).await.unwrap();

        let spaces = vec![(3, space("old", "2")), (4, space("New", "3"))];
        let links = vec![
            (
                7,
                LinkInput::with_url("https://a.example"),
                Some("OLD".to_owned()),
            ),
            (
                8,
                LinkInput::with_url("https://b.example"),
                Some("new".to_owned()),
            ),
            (9, LinkInput::with_url("https://c.example"), None),
        ];
        let (spaces_created, links_created) =
            import_one_by_one(&backend, spaces, links).await.unwrap();
        assert_eq!((spaces_created, links_created), (1, 3));
        let page = backend.list_links(&LinkQuery::default()).await.unwrap();
        let names: Vec<Option<String>> = page
            .items
            .iter()
            .map(|l| l.space.as_ref().map(|s| s.name.clone()))
            .collect();
        assert_eq!(names, vec![None, Some("New".into()), Some("Old".into())]);

        let links = vec![
            (2, LinkInput::with_url("https://d.example"), None),
            (3, LinkInput::with_url("ftp://bad"), None),
            (4, LinkInput::with_url("https://e.example"), None),
        ];
        let err = import_one_by_one(&backend, Vec::new(), links)
            .await
            .unwrap_err();
        assert_eq!(err.kind, Kind::Validation);
        assert!(err.message.contains("line 3"), "{}", err.message);
        assert!(
            err.message.contains("0 spaces and 1 links"),
            "{}",
            err.message
        );
        assert!(err.fields.contains("line 3: url"));
    }
}
