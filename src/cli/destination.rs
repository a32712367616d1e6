//! Where links are sent — a server, for an import or a copy, or any profile a copy writes to:
//! what is there already (every alias and destination, every space), the decision for each
//! incoming link (create it, pass over it because it already arrived, skip or rename it because
//! its alias is taken), and the requests that create it: one per link through the v1 API, or,
//! on a `linkdeck serve`, a page of them per request through linkdeck's own import, which keeps
//! everything they carry ([`Destination::import_records`]).
//!
//! Knowing what already arrived is what makes a copy (or a server import) resumable: run again
//! after a failure, it passes over every link already there — same alias on the same domain,
//! same destination — and creates the rest, so each link ends up there exactly once.

use std::collections::HashMap;

use jiff::tz::TimeZone;

use crate::backend::Backend;
use crate::backend::local::{ImportRow, ImportSummary, Renamed};
use crate::backend::remote::RemoteBackend;
use crate::domain::{
    Carried, Color, Domain, Error, FieldErrors, Id, LinkField, LinkInput, LinkQuery, Mode,
    OnConflict, PER_PAGE_MAX, Place, Result, Sort, SpaceInput, renamed_alias, space_name_key,
    validate_alias, validate_link_input, validate_space_input,
};
use crate::transfer::{JsonWriter, LinkRecord};

/// A link on its way, with the alias it will have.
#[derive(Debug, Clone)]
pub struct Planned {
    pub place: Place,
    pub input: LinkInput,
    pub space: Option<String>,
    pub carried: Carried,
    pub renamed: Option<Renamed>,
}

/// What a check decided about a link.
#[derive(Debug, Clone)]
pub enum Decision {
    Send(Box<Planned>),
    /// The same alias leads to the same destination there: it arrived earlier.
    AlreadyThere,
    /// Its alias is taken by another link, and the policy says skip.
    Skipped,
}

/// Link creations sent to a server at once: enough to hide the round trips, few enough not to
/// crowd a small server (a phpShort site on shared hosting).
pub const IN_FLIGHT: usize = 4;

/// Links in one request to a linkdeck server's import at most: one transaction there each.
pub const RECORDS_PER_REQUEST: usize = 1000;

/// Import bodies are kept under this (or the server's own limit, when lower), so that sending
/// one fits in a profile's timeout on a slow line; a link bigger than this goes alone.
const BODY_TARGET: usize = 4 << 20;

/// What an import body adds around its records: the head and the closing brackets.
const BODY_FRAME: usize = 64;

/// Line in an import body → the place of the record on it.
type Places = HashMap<usize, Place>;

/// An import body being built: the export document, and the place each of its records came
/// from by the line it is on, to name rows in the server's errors as the caller knows them.
struct Body {
    writer: JsonWriter<Vec<u8>>,
    places: Places,
    /// Newlines in the body so far, counted up to `scanned`.
    lines: usize,
    scanned: usize,
}

/// A body that could not be written (which, in memory, only a record serde refuses could do).
fn unwritable(e: std::io::Error) -> Error {
    Error::Unavailable(format!("cannot write an import request: {e}"))
}

impl Body {
    fn new() -> Result<Body> {
        Ok(Body {
            writer: JsonWriter::new(Vec::new()).map_err(unwritable)?,
            places: HashMap::new(),
            lines: 0,
            scanned: 0,
        })
    }

    fn len(&self) -> usize {
        self.writer.get_ref().len()
    }

    fn add(&mut self, record: &LinkRecord, place: Place) -> Result<()> {
        self.writer.link(record).map_err(unwritable)?;
        let written = self.writer.get_ref();
        self.lines += written[self.scanned..]
            .iter()
            .filter(|&&b| b == b'\n')
            .count();
        self.scanned = written.len();
        // A record is written on a line of its own, the last one so far.
        self.places.insert(self.lines + 1, place);
        Ok(())
    }

    fn finish(self) -> Result<(Vec<u8>, Places)> {
        let body = self.writer.finish().map_err(unwritable)?;
        Ok((body, self.places))
    }
}

/// `line N: field` of a body as `PLACE: field` of the row it holds.
fn at_place(key: &str, places: &Places) -> String {
    let Some(rest) = key.strip_prefix("line ") else {
        return key.to_owned();
    };
    let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
    match rest[..digits].parse().ok().and_then(|n| places.get(&n)) {
        Some(place) => format!("{place}{}", &rest[digits..]),
        None => key.to_owned(),
    }
}

/// A server's error about a body, its rows named by their places.
fn error_at_places(e: Error, places: &Places) -> Error {
    match e {
        Error::Validation(fields) => {
            let mut named = FieldErrors::default();
            for (key, messages) in fields.iter() {
                for m in messages {
                    named.add(&at_place(key, places), m.clone());
                }
            }
            Error::Validation(named)
        }
        other => other,
    }
}

pub struct Destination<'a> {
    backend: &'a dyn Backend,
    tz: TimeZone,
    /// (domain id or 0, lower-case alias) → destination URL, for every link there and every
    /// link planned so far.
    links: HashMap<(Id, String), String>,
    spaces: HashMap<String, Id>,
    domains: Vec<Domain>,
    next_color: u8,
    /// Whether the server keeps tags; where it does not, links go without theirs.
    keeps_tags: bool,
    /// Whether the server keeps link options; where it does not, links go without theirs.
    keeps_options: bool,
    pub left_out: LeftOut,
    pub skipped: usize,
    pub already_there: usize,
    pub spaces_created: usize,
}

/// Links sent without what a server that keeps none of it cannot take, counted.
#[derive(Debug, Clone, Copy, Default)]
pub struct LeftOut {
    /// Links that had tags.
    pub tags: usize,
    /// Links that had options away from the defaults.
    pub options: usize,
}

impl<'a> Destination<'a> {
    /// Reads what `backend` holds: its spaces and every link, a page at a time.
    pub async fn load(backend: &'a dyn Backend, tz: TimeZone) -> Result<Destination<'a>> {
        let spaces = crate::backend::all_spaces(backend, Sort::Asc)
            .await?
            .into_iter()
            .map(|s| (space_name_key(&s.name), s.id))
            .collect();
        let mut links = HashMap::new();
        let mut query = LinkQuery {
            sort: Sort::Asc,
            per_page: PER_PAGE_MAX,
            ..LinkQuery::default()
        };
        loop {
            let page = backend.list_links(&query).await?;
            let more = page.has_next() && !page.items.is_empty();
            for link in page.items {
                links.insert(
                    (
                        link.domain.as_ref().map_or(0, |d| d.id),
                        link.alias.to_ascii_lowercase(),
                    ),
                    link.url,
                );
            }
            if !more {
                break;
            }
            query.page += 1;
        }
        let domains = crate::backend::all_domains(backend).await?;
        // A server without tags (a phpShort site) answers so without being asked anything; a
        // key that may not list the account's tags (one limited to spaces) still keeps them.
        let keeps_tags = !matches!(backend.tags().await, Err(Error::Unsupported(_)));
        let keeps_options = backend.keeps_link_options().await?;
        Ok(Destination {
            keeps_tags,
            keeps_options,
            left_out: LeftOut::default(),
            backend,
            tz,
            links,
            spaces,
            domains,
            next_color: 1,
            skipped: 0,
            already_there: 0,
            spaces_created: 0,
        })
    }

    /// The id there of the domain named `name` (`sho.rt`, `https://sho.rt`).
    pub fn domain_id(&self, name: &str) -> Option<Id> {
        super::lookup::find_domain(&self.domains, name).map(|d| d.id)
    }

    /// Whether a space of this name is there.
    pub fn has_space(&self, space: &SpaceInput) -> bool {
        self.spaces
            .contains_key(&space_name_key(space.name.as_deref().unwrap_or("")))
    }

    /// Checks `row` by the rules that need no stored state and decides its alias against what
    /// is there and what is planned. Errors are keyed by the row's place.
    pub fn check(
        &mut self,
        row: ImportRow,
        on_conflict: OnConflict,
    ) -> std::result::Result<Decision, FieldErrors> {
        let place = row.place;
        let keyed = |e: FieldErrors| {
            let mut all = FieldErrors::default();
            all.add_at(place, e);
            all
        };
        let patch = validate_link_input(&row.input, Mode::Create, &self.tz).map_err(keyed)?;
        let url = patch.url.clone().unwrap_or_default();
        let domain = patch.domain.flatten().unwrap_or(0);
        let mut input = row.input;
        let mut renamed = None;
        if let Some(alias) = patch.alias {
            let key = (domain, alias.to_ascii_lowercase());
            match self.links.get(&key) {
                None => {}
                Some(there) if *there == url => {
                    self.already_there += 1;
                    return Ok(Decision::AlreadyThere);
                }
                Some(_) => match on_conflict {
                    OnConflict::Fail => {
                        let mut e = FieldErrors::default();
                        e.add(
                            LinkField::Alias.name(),
                            "is already taken there by another link",
                        );
                        return Err(keyed(e));
                    }
                    OnConflict::Skip => {
                        self.skipped += 1;
                        return Ok(Decision::Skipped);
                    }
                    OnConflict::Rename => {
                        let mut chosen = None;
                        for n in 2.. {
                            let candidate = renamed_alias(&alias, n);
                            if validate_alias(&candidate).is_err() {
                                break;
                            }
                            match self.links.get(&(domain, candidate.to_ascii_lowercase())) {
                                // Renamed on an earlier run.
                                Some(there) if *there == url => {
                                    self.already_there += 1;
                                    return Ok(Decision::AlreadyThere);
                                }
                                Some(_) => continue,
                                None => {
                                    chosen = Some(candidate);
                                    break;
                                }
                            }
                        }
                        let Some(candidate) = chosen else {
                            let mut e = FieldErrors::default();
                            e.add(
                                LinkField::Alias.name(),
                                "is taken, and so is every renamed form of it",
                            );
                            return Err(keyed(e));
                        };
                        renamed = Some(Renamed {
                            place: place.to_string(),
                            from: alias.clone(),
                            to: candidate.clone(),
                        });
                        input.alias = Some(candidate);
                    }
                },
            }
            let final_alias = input.alias.clone().unwrap_or(alias);
            self.links
                .insert((domain, final_alias.to_ascii_lowercase()), url);
        }
        if !self.keeps_tags && input.tags.take().is_some_and(|t| !t.trim().is_empty()) {
            self.left_out.tags += 1;
        }
        if !self.keeps_options && input.take_options() {
            self.left_out.options += 1;
        }
        Ok(Decision::Send(Box::new(Planned {
            place,
            input,
            space: row.space,
            carried: row.carried,
            renamed,
        })))
    }

    /// Creates the declared spaces that are not there yet.
    pub async fn declare_spaces(
        &mut self,
        spaces: Vec<(Place, SpaceInput)>,
    ) -> Result<ImportSummary> {
        let mut summary = ImportSummary::default();
        for (place, input) in spaces {
            let key = space_name_key(input.name.as_deref().unwrap_or(""));
            if self.spaces.contains_key(&key) {
                summary.spaces_reused += 1;
                continue;
            }
            let space = self
                .backend
                .create_space(&input)
                .await
                .map_err(|e| self.stopped(place, e, &summary))?;
            self.spaces.insert(key, space.id);
            summary.spaces_created += 1;
        }
        Ok(summary)
    }

    /// The id of the space named `name`, made (in the next colour) when missing.
    pub async fn space_id(&mut self, name: &str) -> Result<Id> {
        let key = space_name_key(name);
        if let Some(&id) = self.spaces.get(&key) {
            return Ok(id);
        }
        let input = SpaceInput {
            name: Some(name.trim().to_owned()),
            color: Some(self.next_color.to_string()),
        };
        validate_space_input(&input, Mode::Create).map_err(Error::Validation)?;
        self.next_color = self.next_color % Color::COUNT + 1;
        let space = self.backend.create_space(&input).await?;
        self.spaces.insert(key, space.id);
        self.spaces_created += 1;
        Ok(space.id)
    }

    /// Creates a planned link (and its space, when missing); gives its renaming, if any.
    pub async fn send(&mut self, planned: Planned) -> Result<Option<Renamed>> {
        let Planned {
            mut input,
            space,
            renamed,
            ..
        } = planned;
        if let Some(name) = space {
            input.space = Some(self.space_id(&name).await?.to_string());
        }
        self.backend.create_link(&input).await?;
        Ok(renamed)
    }

    /// Creates the planned links of a page with up to [`IN_FLIGHT`] requests at a time (their
    /// spaces made first, one by one). Gives how many were created — also when a request fails:
    /// then the first error, after the requests already sent have answered (a run that stopped
    /// may have created links after the failed one; the next run passes over them).
    pub async fn send_all(&mut self, planned: Vec<Planned>) -> Result<usize, (usize, Error)> {
        use futures::StreamExt;
        let mut inputs = Vec::with_capacity(planned.len());
        for p in planned {
            let mut input = p.input;
            if let Some(name) = &p.space {
                input.space = Some(self.space_id(name).await.map_err(|e| (0, e))?.to_string());
            }
            inputs.push(input);
        }
        let backend = self.backend;
        let results: Vec<Result<()>> = futures::stream::iter(inputs)
            .map(|input| async move { backend.create_link(&input).await.map(|_| ()) })
            .buffered(IN_FLIGHT)
            .collect()
            .await;
        let created = results.iter().filter(|r| r.is_ok()).count();
        match results.into_iter().find_map(Result::err) {
            None => Ok(created),
            Some(e) => Err((created, e)),
        }
    }

    /// Creates planned links through a linkdeck server's import (`max_bytes` is the largest body
    /// it takes): as few requests as fit — at most [`RECORDS_PER_REQUEST`] links and
    /// [`BODY_TARGET`] bytes each — each written there in one transaction with the titles,
    /// click totals, creation dates and traffic history the links carry. Their spaces are made
    /// first (by name, in the next colour) when missing. A link the server finds already there
    /// is passed over there too. Gives what the requests did — also when one fails: then what
    /// those before it did, the error (its rows named by their places) and the place of the
    /// first link of the failed request.
    pub async fn import_records(
        &mut self,
        server: &RemoteBackend,
        max_bytes: u64,
        planned: Vec<Planned>,
        on_conflict: OnConflict,
    ) -> Result<ImportSummary, (ImportSummary, Error, Place)> {
        let max_bytes = usize::try_from(max_bytes).unwrap_or(usize::MAX);
        let target = BODY_TARGET.min(max_bytes);
        let mut done = ImportSummary::default();
        let start = Place::line(0);
        let mut body = Body::new().map_err(|e| (done.clone(), e, start))?;
        let mut count = 0;
        for p in planned {
            let place = p.place;
            if let Some(name) = &p.space {
                self.space_id(name)
                    .await
                    .map_err(|e| (done.clone(), e, place))?;
            }
            let domain = p
                .input
                .domain
                .as_deref()
                .and_then(|id| id.parse::<Id>().ok())
                .and_then(|id| self.domains.iter().find(|d| d.id == id))
                .map(|d| d.name.clone());
            let record =
                LinkRecord::from_input(&p.input, p.space.as_deref(), domain.as_deref(), &p.carried);
            let size = serde_json::to_vec(&record).map_or(0, |r| r.len()) + 8;
            if size + BODY_FRAME > max_bytes {
                let mut e = FieldErrors::default();
                e.add(
                    &format!("{place}: traffic"),
                    format!(
                        "makes the link {} MiB, more than the server takes in one request ({} \
                         MiB)",
                        size.div_ceil(1 << 20),
                        max_bytes >> 20
                    ),
                );
                return Err((done, Error::Validation(e), place));
            }
            if count > 0
                && (count >= RECORDS_PER_REQUEST || body.len() + size + BODY_FRAME > target)
            {
                let next = Body::new().map_err(|e| (done.clone(), e, place))?;
                let full = std::mem::replace(&mut body, next);
                count = 0;
                self.send_body(server, full, on_conflict, &mut done).await?;
            }
            body.add(&record, place)
                .map_err(|e| (done.clone(), e, place))?;
            count += 1;
        }
        if count > 0 {
            self.send_body(server, body, on_conflict, &mut done).await?;
        }
        Ok(done)
    }

    /// Sends one import body and adds what the server did to `done`.
    async fn send_body(
        &mut self,
        server: &RemoteBackend,
        body: Body,
        on_conflict: OnConflict,
        done: &mut ImportSummary,
    ) -> Result<(), (ImportSummary, Error, Place)> {
        let (bytes, places) = body
            .finish()
            .map_err(|e| (done.clone(), e, Place::line(0)))?;
        let first = places
            .iter()
            .min_by_key(|(line, _)| **line)
            .map_or(Place::line(0), |(_, place)| *place);
        let answer = server
            .import_records(bytes, on_conflict)
            .await
            .map_err(|e| (done.clone(), error_at_places(e, &places), first))?;
        done.spaces_created += answer.spaces_created;
        done.spaces_reused += answer.spaces_reused;
        done.links_created += answer.links_created;
        done.links_already_there += answer.links_already_there;
        done.links_skipped += answer.links_skipped;
        done.clicks_imported += answer.clicks_imported;
        done.renamed
            .extend(answer.renamed.into_iter().map(|r| Renamed {
                place: at_place(&r.place, &places),
                ..r
            }));
        self.already_there += answer.links_already_there;
        self.skipped += answer.links_skipped;
        Ok(())
    }

    /// The error of a run that stopped at `place`, saying what was done before.
    pub fn stopped(&self, place: Place, e: Error, summary: &ImportSummary) -> Error {
        let done = format!(
            "stopped at {place} after creating {} and {} (run it again to finish: links already \
             there are passed over)",
            plural(summary.links_created, "link"),
            plural(summary.spaces_created + self.spaces_created, "space"),
        );
        match e {
            Error::Validation(fields) => {
                let mut keyed = FieldErrors::default();
                keyed.add_at(place, fields);
                keyed.add("stopped", done);
                Error::Validation(keyed)
            }
            Error::Unavailable(m) => Error::Unavailable(format!("{done}: {m}")),
            Error::Conflict(m) => Error::Conflict(format!("{done}: {m}")),
            other => other,
        }
    }
}

fn plural(n: usize, noun: &str) -> String {
    super::output::plural(n as u64, noun)
}
