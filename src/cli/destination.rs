//! Where links are sent one at a time — a server, for an import or a copy, or any profile a
//! copy writes to: what is there already (every alias and destination, every space), the
//! decision for each incoming link (create it, pass over it because it already arrived, skip
//! or rename it because its alias is taken), and the requests that create it.
//!
//! Knowing what already arrived is what makes a copy (or a server import) resumable: run again
//! after a failure, it passes over every link already there — same alias on the same domain,
//! same destination — and creates the rest, so each link ends up there exactly once.

use std::collections::HashMap;

use jiff::tz::TimeZone;

use crate::backend::Backend;
use crate::backend::local::{ImportRow, ImportSummary, Renamed};
use crate::domain::{
    Carried, Color, Domain, Error, FieldErrors, Id, LinkField, LinkInput, LinkQuery, Mode,
    OnConflict, PER_PAGE_MAX, Place, Result, Sort, SpaceInput, renamed_alias, space_name_key,
    validate_alias, validate_link_input, validate_space_input,
};

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

pub struct Destination<'a> {
    backend: &'a dyn Backend,
    tz: TimeZone,
    /// (domain id or 0, lower-case alias) → destination URL, for every link there and every
    /// link planned so far.
    links: HashMap<(Id, String), String>,
    spaces: HashMap<String, Id>,
    domains: Vec<Domain>,
    next_color: u8,
    pub skipped: usize,
    pub already_there: usize,
    pub spaces_created: usize,
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
        Ok(Destination {
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
