//! `linkdeck import FILE`: linkdeck's own JSON or CSV export, or another shortener's (Bitly,
//! YOURLS, Shlink, Kutt; the formats live in `crate::transfer`). Into a local database the
//! import is one transaction, streamed: all or nothing, whatever the file's size. Into a
//! server, every row is checked first; then links go to a `linkdeck serve` a page a request
//! through its own import, everything they carry kept (history included), and to any other
//! server one request a link.

use std::fs::File;
use std::io::{self, BufRead, BufReader, Read};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use clap::Args;
use serde_json::json;

use super::context::Context;
use super::destination::{Decision, Destination, RECORDS_PER_REQUEST};
use super::error::{CliError, CliResult, Kind};
use super::lookup::{all_domains, find_domain};
use super::output::{plural, print, print_json};
use super::progress::{Counting, Progress, Unit};
use crate::backend::local::{ImportOptions, ImportRow, ImportSummary, Incoming, Renamed};
use crate::backend::remote::RemoteBackend;
use crate::domain::{
    Domain, Error, FieldErrors, Id, LISTED_FIELDS, OnConflict, Place, SpaceInput, TITLE_MAX,
    name_excerpt, thousands,
};
use crate::server::AgentParser;
use crate::transfer::foreign::{self, Dropped, ForeignRow, Kind as FileKind, Read as Foreign};
use crate::transfer::foreign::{AgentReader, ClickLog, LogError, ReadOptions, Service, Shape};
use crate::transfer::{self, Format, FormatError, ImportLink, LinkRecord, SpaceRecord};

#[derive(Debug, Args)]
pub struct ImportArgs {
    /// The file to read (`-` for standard input).
    pub file: PathBuf,
    /// The service the file comes from: linkdeck, bitly, yourls, shlink or kutt. Recognised
    /// from the file when left out.
    #[arg(long, value_enum, value_name = "SERVICE")]
    pub from: Option<Service>,
    /// json or csv, for linkdeck's own files; by default from the file's extension.
    #[arg(long, value_enum)]
    pub format: Option<Format>,
    /// What a link whose alias is taken does: fail (nothing is imported), skip (it is left
    /// out) or rename (it becomes ALIAS-2, ALIAS-3, …).
    #[arg(long, value_name = "WHAT", value_parser = parse_on_conflict, default_value = "fail")]
    pub on_conflict: OnConflict,
    /// Put each link in a space named after its first tag (made when missing), besides
    /// keeping its tags.
    #[arg(long)]
    pub tags_to_spaces: bool,
    /// Make the spaces the file names that do not exist yet (their colours taken in turn),
    /// instead of refusing the rows that name them.
    #[arg(long)]
    pub create_spaces: bool,
    /// The host of the old service's main domain (repeatable): its links go under this
    /// profile's own short URLs. Shlink's CSV writes that host on every row.
    #[arg(long, value_name = "HOST")]
    pub default_domain: Vec<String>,
    /// YOURLS's click log (its yourls_log table) in a file of its own, as phpMyAdmin's CSV or
    /// an SQL dump: each link keeps its clicks as traffic history. A dump of the whole database
    /// carries them without it.
    #[arg(long, value_name = "FILE")]
    pub log: Option<PathBuf>,
    /// Read the demo built into the binary instead of `file` (`linkdeck demo`).
    #[arg(skip)]
    pub demo: bool,
}

/// The demo's links, spaces and traffic, built in so that `linkdeck demo` works from anywhere.
const DEMO: &[u8] = include_bytes!("../../assets/demo.json");

impl ImportArgs {
    /// `linkdeck demo`: the built-in demo, links already there left as they are, so that it
    /// can be run again.
    pub fn demo() -> ImportArgs {
        ImportArgs {
            file: PathBuf::from("demo.json"),
            from: Some(Service::Linkdeck),
            format: Some(Format::Json),
            on_conflict: OnConflict::Skip,
            tags_to_spaces: false,
            create_spaces: false,
            default_domain: Vec::new(),
            log: None,
            demo: true,
        }
    }
}

pub(super) fn parse_on_conflict(s: &str) -> Result<OnConflict, String> {
    OnConflict::parse(s).ok_or_else(|| "expected fail, skip or rename".into())
}

fn is_stdio(path: &std::path::Path) -> bool {
    path.as_os_str() == "-"
}

/// The file, buffered, with its size when known.
fn open(args: &ImportArgs, name: &str) -> CliResult<(Box<dyn Read + Send>, Option<u64>)> {
    if args.demo {
        return Ok((Box::new(DEMO), Some(DEMO.len() as u64)));
    }
    if is_stdio(&args.file) {
        return Ok((Box::new(io::stdin()), None));
    }
    let file = File::open(&args.file)
        .map_err(|e| CliError::failure(format!("cannot read {name}: {e}")))?;
    let size = file.metadata().ok().map(|m| m.len());
    Ok((Box::new(file), size))
}

/// What the file is: named by `--from`/`--format`, else recognised from its first bytes, else
/// from its extension.
fn kind_of(args: &ImportArgs, head: &[u8], name: &str) -> CliResult<FileKind> {
    let by_extension = Format::from_path(&args.file);
    let linkdeck = |format: Format| FileKind {
        service: Service::Linkdeck,
        shape: match format {
            Format::Json => Shape::Json,
            Format::Csv => Shape::Csv,
        },
    };
    Ok(match (args.from, args.format) {
        (Some(Service::Linkdeck) | None, Some(format)) => linkdeck(format),
        (Some(Service::Linkdeck), None) => match by_extension {
            Some(format) => linkdeck(format),
            None => FileKind {
                service: Service::Linkdeck,
                shape: foreign::sniff_shape(head),
            },
        },
        (Some(service), _) => FileKind {
            service,
            shape: foreign::sniff_shape(head),
        },
        (None, None) => match foreign::detect(head) {
            Some(kind) => kind,
            None => match by_extension {
                Some(format) => linkdeck(format),
                None if is_stdio(&args.file) => linkdeck(Format::Json),
                None => {
                    return Err(CliError::usage(format!(
                        "cannot tell what {name} is: give --from bitly|yourls|shlink|kutt, or \
                         name a linkdeck export .json or .csv (or give --format)"
                    )));
                }
            },
        },
    })
}

pub async fn import(ctx: &Context, args: ImportArgs) -> CliResult {
    ctx.writable("import")?;
    let agents = visitor_agents();
    if args.log.is_some() && args.from.is_some_and(|s| s != Service::Yourls) {
        return Err(log_is_for_yourls());
    }
    // A `linkdeck serve` takes everything a row carries; another server's API only what a
    // person could type.
    let server = ctx.remote()?;
    let linkdeck = match &server {
        Some(server) => server
            .linkdeck()
            .await?
            .map(|caps| (server.clone(), caps.import_max_bytes)),
        None => None,
    };
    let carries_all = server.is_none() || linkdeck.is_some();
    // The click log is read whole before the links, which take their history from it; not for
    // a server that could not keep it.
    let yourls_log = match &args.log {
        Some(path) if carries_all => Some(read_click_log(ctx, path, agents.clone())?),
        _ => None,
    };
    let name = if args.demo {
        "the built-in demo".to_owned()
    } else {
        args.file.display().to_string()
    };
    let (raw, size) = open(&args, &name)?;
    let progress = Progress::start(ctx, &format!("reading {name}"), size, Unit::Bytes);
    let mut input: Box<dyn BufRead + Send> = Box::new(BufReader::with_capacity(
        256 * 1024,
        Counting::new(raw, progress.clone()),
    ));
    let head = input
        .fill_buf()
        .map_err(|e| CliError::failure(format!("cannot read {name}: {e}")))?
        .to_vec();
    let kind = kind_of(&args, &head, &name)?;
    if args.log.is_some() && kind.service != Service::Yourls {
        return Err(log_is_for_yourls());
    }
    if kind.service == Service::Linkdeck && kind.shape == Shape::Sql {
        return Err(CliError::usage(format!(
            "{name} looks like an SQL dump: give --from yourls for YOURLS's yourls_url table"
        )));
    }

    // A local profile's one handle, for the domains here and the import itself: with no other
    // handle open in this process, the import may hold the file alone.
    let (backend, local): (Arc<dyn crate::backend::Backend>, _) = match &server {
        Some(server) => (Arc::new(server.clone()), None),
        None => {
            let local = ctx.local_for_large_writes("import").await?;
            (Arc::new(local.clone()), Some(local))
        }
    };
    let domains = all_domains(backend.as_ref()).await?;
    let broken: Arc<Mutex<Option<FormatError>>> = Arc::default();
    let dropped = Dropped::default();
    let lost_passwords = Arc::new(AtomicUsize::new(0));
    let cut_titles = CutTitles::default();

    let (spaces, rows): (
        Vec<(Place, SpaceInput)>,
        Box<dyn Iterator<Item = Incoming> + Send>,
    ) = if kind.service == Service::Linkdeck {
        let own = Own {
            domains: domains.clone(),
            lost_passwords: lost_passwords.clone(),
            cut_titles: cut_titles.clone(),
            broken: broken.clone(),
            shift: None,
        };
        if kind.shape == Shape::Csv {
            // A CSV file declares its spaces in its rows, as they come.
            let rows = transfer::stream_csv(input).map_err(|e| not_valid(&name, kind, e))?;
            (
                Vec::new(),
                Box::new(rows.flat_map(move |read| own.csv_row(read))),
            )
        } else {
            let (head, links) =
                transfer::stream_json(input).map_err(|e| not_valid(&name, kind, e))?;
            let own = Own {
                shift: transfer::traffic_shift(head.traffic_as_of, ctx.clock.now()),
                ..own
            };
            let spaces = own.spaces(head.spaces);
            (spaces, Box::new(links.map(move |n| own.row(n))))
        }
    } else {
        let adapter = Adapter {
            domains: domains.clone(),
            default_hosts: args.default_domain.iter().map(|h| bare_host(h)).collect(),
            tags_to_spaces: args.tags_to_spaces,
            cut_titles: cut_titles.clone(),
            broken: broken.clone(),
            progress: progress.clone(),
            count: 0,
        };
        let opts = ReadOptions {
            timezone: ctx.timezone().clone(),
            agents,
            yourls_log,
        };
        let reads = foreign::rows(kind, input, opts, dropped.clone());
        let mut adapter = adapter;
        (
            Vec::new(),
            Box::new(reads.map(move |read| adapter.adapt(read))),
        )
    };

    let opts = ImportOptions {
        on_conflict: args.on_conflict,
        create_spaces: args.tags_to_spaces || args.create_spaces,
        pass_over_arrived: false,
    };
    let result = if let Some(local) = local {
        local.import_stream(spaces, rows, opts).await
    } else {
        import_to_server(
            ctx,
            backend.as_ref(),
            linkdeck.as_ref(),
            spaces,
            rows,
            opts.on_conflict,
            &progress,
        )
        .await
        .map(|(summary, left_out)| {
            dropped.add("tags (the server keeps none)", left_out.tags);
            dropped.add(
                "link options: forwarding, indexing, preview (the server keeps none)",
                left_out.options,
            );
            summary
        })
    };
    progress.finish();
    let summary = match result {
        Ok(summary) => summary,
        Err(e) => {
            if let Some(format_error) = broken.lock().unwrap_or_else(|p| p.into_inner()).take() {
                return Err(not_valid(&name, kind, format_error));
            }
            return Err(named(e, &name));
        }
    };
    report(
        ctx,
        &name,
        kind,
        &summary,
        &Notes {
            dropped: &dropped,
            lost_passwords: lost_passwords.load(Ordering::Relaxed),
            cut_titles: &cut_titles,
        },
        carries_all,
    )
}

fn log_is_for_yourls() -> CliError {
    CliError::usage("--log is YOURLS's click log (yourls_log): give it with a YOURLS export")
}

/// Platforms and browsers of logged User-Agents, read as `linkdeck serve` reads a visitor's.
fn visitor_agents() -> AgentReader {
    let parser = AgentParser::default();
    Arc::new(move |ua: &str| {
        let agent = parser.parse(ua);
        (agent.os.clone(), agent.browser.clone())
    })
}

/// Reads the click log given with `--log`, naming it in its errors.
fn read_click_log(ctx: &Context, path: &Path, agents: AgentReader) -> CliResult<ClickLog> {
    let name = path.display().to_string();
    let file =
        File::open(path).map_err(|e| CliError::failure(format!("cannot read {name}: {e}")))?;
    let size = file.metadata().ok().map(|m| m.len());
    let progress = Progress::start(ctx, &format!("reading {name}"), size, Unit::Bytes);
    let mut input: Box<dyn BufRead + Send> = Box::new(BufReader::with_capacity(
        256 * 1024,
        Counting::new(file, progress.clone()),
    ));
    let head = input
        .fill_buf()
        .map_err(|e| CliError::failure(format!("cannot read {name}: {e}")))?;
    let shape = foreign::sniff_shape(head);
    let read = foreign::read_yourls_log(input, shape, agents);
    progress.finish();
    read.map_err(|e| match e {
        LogError::Broken(e) => not_valid(
            &name,
            FileKind {
                service: Service::Yourls,
                shape,
            },
            e,
        ),
        LogError::Invalid(fields) => named(Error::Validation(fields), &name),
    })
}

/// `sho.rt`, `https://sho.rt/` → `sho.rt`.
fn bare_host(h: &str) -> String {
    let h = h.trim().trim_end_matches('/');
    h.split_once("://")
        .map_or(h, |(_, rest)| rest)
        .to_ascii_lowercase()
}

/// A file that is not what it claims, named with its line.
fn not_valid(name: &str, kind: FileKind, e: FormatError) -> CliError {
    let what = format!("nothing imported: {name} is not a valid {kind} file");
    match e.line {
        Some(line) => {
            let mut fields = FieldErrors::default();
            fields.add(&Place::line(line).to_string(), e.message);
            CliError::invalid(what, fields)
        }
        None => CliError::invalid(format!("{what}: {}", e.message), FieldErrors::default()),
    }
}

/// Adds the file name to a failed import's message.
fn named(e: Error, file: &str) -> CliError {
    let mut err = CliError::from(e);
    if err.kind == Kind::Validation {
        err.message = format!("nothing imported from {file}: {}", err.message);
        // Importing a file again is the common way to meet these: say what to do about it.
        let taken = err.fields.iter().any(|(field, messages)| {
            field.ends_with("alias") && messages.iter().any(|m| m.contains("taken"))
        });
        if taken {
            err.hints.push(
                "for aliases already taken, --on-conflict skip leaves those links as they are \
                 and --on-conflict rename imports them under new aliases"
                    .into(),
            );
        }
        let unknown_space = err.fields.iter().any(|(field, messages)| {
            field.ends_with("space") && messages.iter().any(|m| m.starts_with("no space is named"))
        });
        if unknown_space {
            err.hints
                .push("--create-spaces makes the spaces the file names that do not exist".into());
        }
    }
    err
}

/// A file that cannot be read further: its error kept for the message, the import stopped.
fn broken_row(e: FormatError, broken: &Mutex<Option<FormatError>>) -> Incoming {
    let mut fields = FieldErrors::default();
    fields.add(
        &e.line
            .map_or("file".to_owned(), |l| Place::line(l).to_string()),
        e.message.clone(),
    );
    *broken.lock().unwrap_or_else(|p| p.into_inner()) = Some(e);
    Incoming::Broken(fields)
}

/// The rows whose title was longer than [`TITLE_MAX`] characters and was cut: the places of
/// the first of them, as many as an error list names, and how many in all. Rows come in file
/// order, so the first noted are the first in the file.
#[derive(Debug, Clone, Default)]
struct CutTitles(Arc<Mutex<(Vec<Place>, usize)>>);

impl CutTitles {
    fn note(&self, place: Place) {
        let mut cut = self.0.lock().unwrap_or_else(|p| p.into_inner());
        if cut.0.len() < LISTED_FIELDS {
            cut.0.push(place);
        }
        cut.1 += 1;
    }

    /// The first places, and how many titles were cut.
    fn get(&self) -> (Vec<Place>, usize) {
        self.0.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }
}

/// Turns the records of linkdeck's own files into rows of the import.
struct Own {
    domains: Vec<Domain>,
    lost_passwords: Arc<AtomicUsize>,
    cut_titles: CutTitles,
    broken: Arc<Mutex<Option<FormatError>>>,
    /// A sample file's traffic moves forward by this much.
    shift: Option<jiff::SignedDuration>,
}

impl Own {
    fn spaces(&self, spaces: Vec<transfer::Numbered<SpaceRecord>>) -> Vec<(Place, SpaceInput)> {
        spaces
            .iter()
            .map(|n| (n.place(), n.record.to_input()))
            .collect()
    }

    /// A CSV row: the space it declares, if any, then its link.
    fn csv_row(
        &self,
        read: Result<transfer::CsvRow, FormatError>,
    ) -> impl Iterator<Item = Incoming> + use<> {
        match read {
            Ok(row) => [
                row.space
                    .map(|n| Incoming::Space(n.place(), n.record.to_input())),
                Some(self.row(Ok(row.link))),
            ],
            Err(e) => [Some(self.row(Err(e))), None],
        }
        .into_iter()
        .flatten()
    }

    fn row(&self, read: Result<transfer::Numbered<LinkRecord>, FormatError>) -> Incoming {
        let mut n = match read {
            Ok(n) => n,
            Err(e) => return broken_row(e, &self.broken),
        };
        if let Some(shift) = self.shift {
            n.record.shift_traffic(shift);
        }
        let place = n.place();
        match n
            .record
            .to_import(|name| find_domain(&self.domains, name).map(|d| d.id))
        {
            Ok(link) => {
                if link.lost_password {
                    self.lost_passwords.fetch_add(1, Ordering::Relaxed);
                }
                if link.title_cut {
                    self.cut_titles.note(place);
                }
                row_of(place, link)
            }
            Err(e) => invalid(place, e),
        }
    }
}

fn row_of(place: Place, link: ImportLink) -> Incoming {
    Incoming::Row(Box::new(ImportRow {
        place,
        input: link.input,
        space: link.space,
        carried: link.carried,
    }))
}

/// A row's errors, keyed by its place.
fn invalid(place: Place, errors: FieldErrors) -> Incoming {
    let mut keyed = FieldErrors::default();
    keyed.add_at(place, errors);
    Incoming::Invalid(keyed)
}

/// Turns foreign rows into rows of the import: the first tag becomes a space (when asked), host names
/// become the profile's domains (or its main one).
struct Adapter {
    domains: Vec<Domain>,
    default_hosts: Vec<String>,
    tags_to_spaces: bool,
    cut_titles: CutTitles,
    broken: Arc<Mutex<Option<FormatError>>>,
    progress: Progress,
    count: u64,
}

impl Adapter {
    fn domain_id(&self, host: &str) -> Option<Id> {
        self.domains
            .iter()
            .find(|d| d.host().eq_ignore_ascii_case(host))
            .or_else(|| find_domain(&self.domains, host))
            .map(|d| d.id)
    }

    fn adapt(&mut self, read: Foreign) -> Incoming {
        match read {
            Foreign::Broken(e) => broken_row(e, &self.broken),
            Foreign::Invalid(place, errors) => invalid(place, errors),
            Foreign::Row(row) => {
                self.count += 1;
                if self.count.is_multiple_of(4096) {
                    self.progress
                        .message(format!("importing · {} links read", self.count));
                }
                self.row(*row)
            }
        }
    }

    fn row(&self, row: ForeignRow) -> Incoming {
        let ForeignRow {
            place,
            mut record,
            tags,
        } = row;
        let tags: Vec<String> = tags.into_iter().filter(|t| !t.trim().is_empty()).collect();
        if self.tags_to_spaces {
            record.space = tags.first().cloned();
        }
        if !tags.is_empty() {
            record.tags = Some(tags);
        }
        let mut errors = FieldErrors::default();
        if let Some(host) = record.domain.take() {
            if self.default_hosts.contains(&host) {
                // The old main domain: the profile's own short URLs.
            } else if let Some(id) = self.domain_id(&host) {
                record.domain = self
                    .domains
                    .iter()
                    .find(|d| d.id == id)
                    .map(|d| d.name.clone());
            } else {
                let host = name_excerpt(&host);
                errors.add(
                    "domain",
                    format!(
                        "{host} is not one of your domains: add it (`linkdeck domains add \
                         {host}`), or give --default-domain {host} if it was the old service's \
                         main domain"
                    ),
                );
            }
        }
        match record.to_import(|name| find_domain(&self.domains, name).map(|d| d.id)) {
            Ok(link) if errors.is_empty() => {
                if link.title_cut {
                    self.cut_titles.note(place);
                }
                row_of(place, link)
            }
            Ok(_) => invalid(place, errors),
            Err(e) => {
                errors.merge(e);
                invalid(place, errors)
            }
        }
    }
}

/// A server has no transaction across requests: every row is read and checked first (the
/// rules that need no stored state, and aliases against the server's links), so a file with a
/// bad row sends nothing at all; then spaces are created, and links — into a `linkdeck serve`
/// (`linkdeck`: it, and the largest body it takes) a page a request through its own import,
/// each page one transaction there with everything the rows carry; into another server one
/// request at a time. A link already there (same alias and destination) is passed over, so an
/// import that stopped can be run again.
async fn import_to_server(
    ctx: &Context,
    backend: &dyn crate::backend::Backend,
    linkdeck: Option<&(RemoteBackend, u64)>,
    mut spaces: Vec<(Place, SpaceInput)>,
    rows: Box<dyn Iterator<Item = Incoming> + Send>,
    on_conflict: OnConflict,
    progress: &Progress,
) -> crate::domain::Result<(ImportSummary, super::destination::LeftOut)> {
    let mut dest = Destination::load(backend, ctx.timezone().clone()).await?;
    let mut errors = FieldErrors::default();
    let mut plan = Vec::new();
    let check_space = |errors: &mut FieldErrors, place: &Place, input: &SpaceInput| {
        if let Err(e) = crate::domain::validate_space_input(input, crate::domain::Mode::Create) {
            errors.add_at(place, e);
        }
    };
    for (place, input) in &spaces {
        check_space(&mut errors, place, input);
    }
    for incoming in rows {
        match incoming {
            // Declared on the way (a CSV file's): created with the others before any link.
            Incoming::Space(place, input) => {
                check_space(&mut errors, &place, &input);
                spaces.push((place, input));
            }
            Incoming::Row(row) => match dest.check(*row, on_conflict) {
                Ok(Decision::Send(planned)) => plan.push(*planned),
                Ok(Decision::AlreadyThere | Decision::Skipped) => {}
                Err(e) => errors.merge(e),
            },
            Incoming::Invalid(e) => errors.merge(e),
            Incoming::Broken(e) => {
                errors.merge(e);
                break;
            }
        }
    }
    if !errors.is_empty() {
        return Err(Error::Validation(errors));
    }
    progress.message("creating on the server");
    progress.set_length(plan.len() as u64);
    let mut summary = dest.declare_spaces(spaces).await?;
    if let Some((server, max_bytes)) = linkdeck {
        let mut plan = plan.into_iter().peekable();
        while plan.peek().is_some() {
            let some: Vec<_> = plan.by_ref().take(RECORDS_PER_REQUEST).collect();
            let n = some.len() as u64;
            match dest
                .import_records(server, *max_bytes, some, on_conflict)
                .await
            {
                Ok(done) => add_up(&mut summary, done),
                Err((done, e, place)) => {
                    add_up(&mut summary, done);
                    return Err(dest.stopped(place, e, &summary));
                }
            }
            progress.inc(n);
        }
        summary.links_skipped += dest.skipped;
        summary.spaces_created += dest.spaces_created;
        return Ok((summary, dest.left_out));
    }
    for planned in plan {
        let place = planned.place;
        match dest.send(planned).await {
            Ok(renamed) => {
                summary.links_created += 1;
                summary.renamed.extend(renamed);
            }
            Err(e) => {
                return Err(dest.stopped(place, e, &summary));
            }
        }
        progress.inc(1);
    }
    summary.links_skipped += dest.skipped;
    summary.spaces_created += dest.spaces_created;
    Ok((summary, dest.left_out))
}

/// Adds what one import request did to the whole import's summary. Rows the client passed
/// over or skipped are counted by the destination, not here.
fn add_up(summary: &mut ImportSummary, done: ImportSummary) {
    summary.spaces_created += done.spaces_created;
    summary.links_created += done.links_created;
    summary.clicks_imported += done.clicks_imported;
    summary.renamed.extend(done.renamed);
}

/// What an import noted on the way, besides what it created.
struct Notes<'a> {
    dropped: &'a Dropped,
    lost_passwords: usize,
    cut_titles: &'a CutTitles,
}

/// Places listed in a summary's text (`--json` lists as many as an error list).
const PLACES_SHOWN: usize = 20;

/// `carries_all`: whether the destination kept everything the rows carry (a local database, a
/// `linkdeck serve`) rather than only what a person could type (another server's API).
fn report(
    ctx: &Context,
    name: &str,
    kind: FileKind,
    summary: &ImportSummary,
    notes: &Notes,
    carries_all: bool,
) -> CliResult {
    let dropped = notes.dropped.entries();
    let lost_passwords = notes.lost_passwords;
    // A server that keeps no titles was sent none, cut or not.
    let (cut_at, cut) = if carries_all {
        notes.cut_titles.get()
    } else {
        Default::default()
    };
    let not_carried = (!carries_all).then_some(
        "titles, click totals, creation dates and traffic history (it is not a linkdeck server, \
         and its API cannot set them)",
    );
    if ctx.json {
        return Ok(print_json(&json!({
            "from": kind.to_string(),
            "spaces_created": summary.spaces_created,
            "links_created": summary.links_created,
            "links_skipped": summary.links_skipped,
            "renamed": summary.renamed,
            "passwords_not_imported": lost_passwords,
            "titles_cut": cut,
            "titles_cut_at": cut_at.iter().map(Place::to_string).collect::<Vec<_>>(),
            "clicks_imported": summary.clicks_imported,
            "dropped": dropped.iter().map(|(what, n)| json!({"what": what, "links": n})).collect::<Vec<_>>(),
            "not_carried": not_carried,
        }))?);
    }
    let history = if summary.clicks_imported > 0 {
        format!(
            " with {} of traffic history",
            plural(summary.clicks_imported, "click")
        )
    } else {
        String::new()
    };
    let mut text = format!(
        "imported {} and {} from {name} ({kind}){history}",
        plural(summary.links_created as u64, "link"),
        plural(summary.spaces_created as u64, "new space")
    );
    if summary.links_skipped > 0 {
        text.push_str(&format!(
            "\nskipped {} whose alias was taken",
            plural(summary.links_skipped as u64, "link")
        ));
    }
    if !summary.renamed.is_empty() {
        text.push_str(&format!(
            "\nrenamed {} whose alias was taken:",
            plural(summary.renamed.len() as u64, "link")
        ));
        for Renamed { place, from, to } in summary.renamed.iter().take(PLACES_SHOWN) {
            text.push_str(&format!("\n  {place}: {from} → {to}"));
        }
        if summary.renamed.len() > PLACES_SHOWN {
            text.push_str(&format!(
                "\n  … and {} more (--json lists them all)",
                summary.renamed.len() - PLACES_SHOWN
            ));
        }
    }
    if cut > 0 {
        text.push_str(&format!(
            "\ncut {} longer than {TITLE_MAX} characters to their first {TITLE_MAX}:",
            plural(cut as u64, "title")
        ));
        for place in cut_at.iter().take(PLACES_SHOWN) {
            text.push_str(&format!("\n  {place}"));
        }
        if cut > PLACES_SHOWN {
            text.push_str(&format!(
                "\n  … and {} more (--json lists the first {})",
                thousands((cut - PLACES_SHOWN) as u64),
                cut_at.len()
            ));
        }
    }
    if !dropped.is_empty() {
        text.push_str(&format!("\nnot carried from {}:", kind.service.name()));
        for (what, n) in &dropped {
            text.push_str(&format!("\n  {what}: {}", plural(*n as u64, "link")));
        }
    }
    if let Some(what) = not_carried {
        text.push_str(&format!("\nnot carried to the server: {what}"));
    }
    if lost_passwords > 0 && !ctx.quiet {
        eprintln!(
            "note: {} had a password in the export, which an export cannot carry; set it \
             again with `linkdeck links update ALIAS --password-stdin`",
            plural(lost_passwords as u64, "link")
        );
    }
    Ok(print(&text)?)
}
