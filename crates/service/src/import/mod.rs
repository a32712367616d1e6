//! Bulk import: many spaces and links in one transaction, every rule of a single create applied
//! to each row, errors reported by source line. Nothing is written unless every row is valid.
//!
//! Rows arrive as a stream and are never all held at once: a second thread checks each row
//! (the rules that need no stored state, and password hashing) while the writer applies the
//! rules that need the database and stages the row. Staged rows move into the links table every
//! [`CHUNK`] rows, inside the same transaction, so memory stays flat however long the file is
//! and a bad row anywhere still leaves nothing behind.

use std::collections::{HashMap, HashSet};
use std::sync::mpsc::{Receiver, SyncSender, sync_channel};

use jiff::Timestamp;
use serde::Serialize;

use super::LocalBackend;
use super::alias::generate_alias;
use super::links::{apply_titled, default_title};
use super::password::hash_password;
pub use linkdeck_domain::Renamed;
use linkdeck_domain::{
    Carried, Color, Error, FieldErrors, Id, LinkField, LinkInput, LinkPatch, Mode, OnConflict,
    Place, Result, SpaceInput, SpacePatch, name_excerpt, renamed_alias, space_name_key,
    validate_alias, validate_link_input, validate_space_input,
};
use linkdeck_store::words::NAME_TAKEN;
use linkdeck_store::words::{ALIAS_TAKEN, NOT_YOUR_DOMAIN, NOT_YOUR_SPACE};
use linkdeck_store::{Counted, ImportStore, LinkRow};

/// What an import created, reused and left out.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct ImportSummary {
    pub spaces_created: usize,
    /// Spaces named in the import that already existed and were reused.
    pub spaces_reused: usize,
    pub links_created: usize,
    /// Rows left out because the same link is there already: the owner's link with the same
    /// alias on the same domain and the same destination (see
    /// [`ImportOptions::pass_over_arrived`]).
    pub links_already_there: usize,
    /// Rows left out because their alias was taken (`--on-conflict skip`).
    pub links_skipped: usize,
    /// Rows given a new alias because theirs was taken (`--on-conflict rename`).
    pub renamed: Vec<Renamed>,
    /// Clicks of the traffic history carried in.
    pub clicks_imported: u64,
}

/// Rows staged before they move into the links table in one statement. Large enough that the
/// full-text index writes big segments (SQLite) and a COPY is worth starting (PostgreSQL),
/// small enough that what is staged stays small.
pub const CHUNK: usize = 20_000;

/// One link of an import as read from its source.
#[derive(Debug, Clone, PartialEq)]
pub struct ImportRow {
    pub place: Place,
    pub input: LinkInput,
    /// The name of its space (existing, declared by the import, or — with
    /// [`ImportOptions::create_spaces`] — made for it).
    pub space: Option<String>,
    pub carried: Carried,
}

/// What a source hands the import: a row, a space it declares on the way (linkdeck's CSV names
/// a space's colour in the first row that has one), the errors of a row it could not read
/// (already keyed by place, `line 12: url`), or the end of what it can read (a file that is
/// not valid further on: the import stops there and writes nothing).
#[derive(Debug, Clone, PartialEq)]
pub enum Incoming {
    Row(Box<ImportRow>),
    Space(Place, SpaceInput),
    Invalid(FieldErrors),
    Broken(FieldErrors),
}

/// How an import treats what it finds.
#[derive(Debug, Clone, Default)]
pub struct ImportOptions {
    pub on_conflict: OnConflict,
    /// Spaces that rows name but that neither exist nor are declared are created (tags turned
    /// into spaces), their colours taken in turn; otherwise such a row is an error.
    pub create_spaces: bool,
    /// A row whose alias the owner already has on its domain, leading to the same destination,
    /// is passed over — it arrived on an earlier run, and brings nothing again (no click of its
    /// history is counted twice) — instead of being a taken alias. What a copy or an import
    /// that may be run again asks for (the server's import endpoint).
    pub pass_over_arrived: bool,
}

/// A row after the checks that need no stored state.
struct Checked {
    place: Place,
    patch: LinkPatch,
    space: Option<String>,
    hash: Option<Option<String>>,
    carried: Carried,
}

enum Prepared {
    Row(Box<Checked>),
    Space(Place, SpacePatch),
    Invalid(FieldErrors),
    Broken(FieldErrors),
}

/// Rows handed from the checking thread to the writer at a time, and how many such hand-offs
/// may wait: more than a [`CHUNK`] in all, so that while the writer moves a chunk into the
/// links table (a burst of a few hundred milliseconds) the reading and checking go on instead
/// of waiting for it. Still a bound: memory stays flat (about 20 MB more at the peak).
const HANDOFF: usize = 512;
const HANDOFFS_WAITING: usize = CHUNK / HANDOFF + 8;

impl LocalBackend {
    /// Imports `spaces` then `links` in one transaction: [`LocalBackend::import_stream`] over rows
    /// already in memory, each with its source line; a link may name a space instead of giving
    /// its id. Any invalid row aborts the whole import with `Error::Validation`, keyed
    /// `line N: field`, listing the first fields and counting every one.
    pub async fn import_batch(
        &self,
        spaces: Vec<(usize, SpaceInput)>,
        links: Vec<(usize, LinkInput, Option<String>)>,
    ) -> Result<ImportSummary> {
        let spaces = spaces
            .into_iter()
            .map(|(line, input)| (Place::line(line), input))
            .collect();
        let rows = links.into_iter().map(|(line, input, space)| {
            Incoming::Row(Box::new(ImportRow {
                place: Place::line(line),
                input,
                space,
                carried: Carried::default(),
            }))
        });
        self.import_stream(spaces, rows, ImportOptions::default())
            .await
    }

    /// Imports `spaces` (reused when one of the same name exists), then every row of `rows`, in
    /// one transaction. Rows are read, checked and written as they come, never all held at once.
    /// An invalid row, a taken alias (unless `opts` says to skip or rename) or a broken source
    /// aborts the whole import with `Error::Validation` keyed by place, listing the first fields
    /// and counting every one (see [`FieldErrors`]); nothing is written then.
    pub async fn import_stream(
        &self,
        spaces: Vec<(Place, SpaceInput)>,
        rows: impl Iterator<Item = Incoming> + Send + 'static,
        opts: ImportOptions,
    ) -> Result<ImportSummary> {
        let backend = self.clone();
        tokio::task::spawn_blocking(move || backend.import_blocking(spaces, rows, &opts))
            .await
            .map_err(|e| Error::Unavailable(format!("import task failed: {e}")))?
    }

    fn import_blocking(
        &self,
        space_rows: Vec<(Place, SpaceInput)>,
        rows: impl Iterator<Item = Incoming> + Send + 'static,
        opts: &ImportOptions,
    ) -> Result<ImportSummary> {
        let mut errors = FieldErrors::default();
        let mut valid_spaces: Vec<(Place, SpacePatch)> = Vec::with_capacity(space_rows.len());
        for (place, input) in &space_rows {
            match validate_space_input(input, Mode::Create) {
                Ok(patch) => valid_spaces.push((*place, patch)),
                Err(e) => errors.add_at(place, e),
            }
        }

        let (sender, receiver) = sync_channel::<Vec<Prepared>>(HANDOFFS_WAITING);
        let tz = self.service.options().timezone.clone();
        // The checking thread ends when the rows do, or when the writer stops listening.
        let checker = std::thread::Builder::new()
            .name("import-check".into())
            .spawn(move || check_rows(rows, &tz, &sender))
            .map_err(|e| Error::Unavailable(format!("cannot start the import: {e}")))?;

        let work = Work {
            owner: self.owner_id,
            now: self.service.now(),
            on_conflict: opts.on_conflict,
            create_spaces: opts.create_spaces,
            pass_over_arrived: opts.pass_over_arrived,
            errors,
            spaces: valid_spaces,
            receiver,
        };
        let result = self.store().import(move |store| work.run(store));
        // A writer that stopped early dropped the receiver; the checker notices and ends.
        let _ = checker.join();
        result
    }
}

/// What the writer is given: who imports, the rules' options, the errors found so far, the
/// spaces declared up front, and the checked rows as they come.
struct Work {
    owner: Id,
    now: Timestamp,
    on_conflict: OnConflict,
    create_spaces: bool,
    pass_over_arrived: bool,
    errors: FieldErrors,
    spaces: Vec<(Place, SpacePatch)>,
    receiver: Receiver<Vec<Prepared>>,
}

impl Work {
    /// Writes everything into `store`, inside its transaction.
    fn run(self, store: &mut dyn ImportStore) -> Result<ImportSummary> {
        let mut writer = Writer::new(
            store,
            self.owner,
            self.now,
            Rules {
                on_conflict: self.on_conflict,
                create_spaces: self.create_spaces,
                pass_over_arrived: self.pass_over_arrived,
            },
            self.errors,
        )?;
        writer.declare_spaces(self.spaces)?;
        writer.take_all(self.receiver)?;
        writer.finish()
    }
}

/// Runs the checks that need no stored state over `rows`, handing them on in batches.
fn check_rows(
    rows: impl Iterator<Item = Incoming>,
    tz: &jiff::tz::TimeZone,
    out: &SyncSender<Vec<Prepared>>,
) {
    let mut batch = Vec::with_capacity(HANDOFF);
    for incoming in rows {
        let prepared = match incoming {
            Incoming::Row(row) => check_row(*row, tz),
            Incoming::Space(place, input) => match validate_space_input(&input, Mode::Create) {
                Ok(patch) => Prepared::Space(place, patch),
                Err(e) => {
                    let mut keyed = FieldErrors::default();
                    keyed.add_at(place, e);
                    Prepared::Invalid(keyed)
                }
            },
            Incoming::Invalid(e) => Prepared::Invalid(e),
            Incoming::Broken(e) => Prepared::Broken(e),
        };
        let stop = matches!(prepared, Prepared::Broken(_));
        batch.push(prepared);
        if (batch.len() >= HANDOFF || stop)
            && out
                .send(std::mem::replace(&mut batch, Vec::with_capacity(HANDOFF)))
                .is_err()
        {
            return;
        }
        if stop {
            return;
        }
    }
    if !batch.is_empty() {
        let _ = out.send(batch);
    }
}

fn check_row(row: ImportRow, tz: &jiff::tz::TimeZone) -> Prepared {
    let mut errors = FieldErrors::default();
    if row.space.is_some()
        && row
            .input
            .space
            .as_deref()
            .is_some_and(|s| !s.trim().is_empty())
    {
        errors.add(
            LinkField::Space.name(),
            "give a space id or a space name, not both",
        );
    }
    let patch = match validate_link_input(&row.input, Mode::Create, tz) {
        Ok(patch) => Some(patch),
        Err(e) => {
            errors.merge(e);
            None
        }
    };
    let Some(patch) = patch.filter(|_| errors.is_empty()) else {
        let mut keyed = FieldErrors::default();
        keyed.add_at(row.place, errors);
        return Prepared::Invalid(keyed);
    };
    let hash = match &patch.password {
        Some(Some(plain)) => match hash_password(plain) {
            Ok(hash) => Some(Some(hash)),
            Err(e) => {
                let mut keyed = FieldErrors::default();
                keyed.add(&format!("{}: password", row.place), e.to_string());
                return Prepared::Invalid(keyed);
            }
        },
        _ => None,
    };
    // The title a link gets (the one it carries, else its destination's) is worked out here,
    // off the writer's thread, which is the import's bottleneck.
    let mut carried = row.carried;
    if carried.title.is_none() {
        carried.title = patch.url.as_deref().and_then(default_title);
    }
    Prepared::Row(Box::new(Checked {
        place: row.place,
        patch,
        space: row
            .space
            .map(|n| n.trim().to_owned())
            .filter(|n| !n.is_empty()),
        hash,
        carried,
    }))
}

/// A space rows named before it was declared: its id, and the errors its rows are if the
/// declaration never comes.
struct Undeclared {
    id: Id,
    rows: FieldErrors,
}

fn one_error(field: &str, message: String) -> FieldErrors {
    let mut one = FieldErrors::default();
    one.add(field, message);
    one
}

/// What the writer does with taken aliases and unknown spaces (from [`ImportOptions`]).
struct Rules {
    on_conflict: OnConflict,
    create_spaces: bool,
    pass_over_arrived: bool,
}

/// The writer's side of an import: the rules that need stored state, inside the transaction.
struct Writer<'s> {
    store: &'s mut dyn ImportStore,
    owner: Id,
    now: Timestamp,
    rules: Rules,
    errors: FieldErrors,
    summary: ImportSummary,
    /// Space name key → id, for the owner's spaces and those this import made.
    space_ids: HashMap<String, Id>,
    owned_spaces: HashSet<Id>,
    owned_domains: HashSet<Id>,
    /// Colour of the next space made for a row.
    next_color: u8,
    /// Spaces rows named before any declared them (by name key): made at once, so the rows
    /// can be staged, and given their colour when the declaration comes further on. One still
    /// here at the end was never declared: its rows are errors.
    undeclared: HashMap<String, Undeclared>,
    /// Aliases staged in the current chunk, by domain (0 for none), with their destinations
    /// when the import passes over arrived links (empty otherwise); earlier chunks are in the
    /// links table already.
    chunk_aliases: HashMap<(Id, String), String>,
}

impl<'s> Writer<'s> {
    fn new(
        store: &'s mut dyn ImportStore,
        owner: Id,
        now: Timestamp,
        rules: Rules,
        errors: FieldErrors,
    ) -> Result<Self> {
        let space_ids: HashMap<String, Id> = store
            .space_names(owner)?
            .into_iter()
            .map(|(id, name)| (space_name_key(&name), id))
            .collect();
        let owned_spaces = space_ids.values().copied().collect();
        let owned_domains = store.domain_ids(owner)?.into_iter().collect();
        Ok(Writer {
            store,
            owner,
            now,
            rules,
            errors,
            summary: ImportSummary::default(),
            space_ids,
            owned_spaces,
            owned_domains,
            next_color: 1,
            undeclared: HashMap::new(),
            chunk_aliases: HashMap::new(),
        })
    }

    fn add_error(&mut self, place: Place, field: &str, message: impl Into<String>) {
        self.errors.add_at(place, one_error(field, message.into()));
    }

    fn declare_spaces(&mut self, spaces: Vec<(Place, SpacePatch)>) -> Result<()> {
        for (place, patch) in spaces {
            self.declare_space(place, patch)?;
        }
        Ok(())
    }

    /// A space the source declares: reused when it exists, made otherwise; when rows named it
    /// before, it takes the declaration's name and colour.
    fn declare_space(&mut self, place: Place, patch: SpacePatch) -> Result<()> {
        let (Some(name), Some(color)) = (patch.name, patch.color) else {
            return Ok(());
        };
        let key = space_name_key(&name);
        if let Some(early) = self.undeclared.remove(&key) {
            let (id, now) = (early.id, self.now);
            self.store
                .tx()
                .update_space(self.owner, id, Some(name.as_str()), Some(color), now)?;
            return Ok(());
        }
        if self.space_ids.contains_key(&key) {
            self.summary.spaces_reused += 1;
            return Ok(());
        }
        // Reaching here with a taken name means the lookup and the index disagree.
        if self
            .store
            .tx()
            .space_named(self.owner, &name, None)?
            .is_some()
        {
            self.add_error(place, "name", NAME_TAKEN);
            return Ok(());
        }
        self.make_space(&name, color)?;
        Ok(())
    }

    fn make_space(&mut self, name: &str, color: Color) -> Result<Id> {
        let id = self
            .store
            .tx()
            .insert_space(self.owner, name, color, self.now)?;
        self.space_ids.insert(space_name_key(name), id);
        self.owned_spaces.insert(id);
        self.summary.spaces_created += 1;
        Ok(id)
    }

    fn take_all(&mut self, receiver: Receiver<Vec<Prepared>>) -> Result<()> {
        for batch in receiver {
            let wanted: Vec<(Option<Id>, &str)> = batch
                .iter()
                .filter_map(|p| match p {
                    Prepared::Row(row) => row
                        .patch
                        .alias
                        .as_deref()
                        .map(|alias| (row.patch.domain.flatten(), alias)),
                    _ => None,
                })
                .collect();
            self.store.look_ahead(&wanted)?;
            for prepared in batch {
                match prepared {
                    Prepared::Row(row) => self.take(*row)?,
                    Prepared::Space(place, patch) => self.declare_space(place, patch)?,
                    Prepared::Invalid(e) => self.errors.merge(e),
                    Prepared::Broken(e) => {
                        self.errors.merge(e);
                        return Ok(());
                    }
                }
            }
        }
        Ok(())
    }

    /// The space a row names, made for it when the import may make spaces. Without that, a
    /// space nobody declared yet is made in the first colour and waits for its declaration
    /// further on (see [`Writer::undeclared`]).
    fn space_of(&mut self, place: Place, name: &str) -> Result<Option<Id>> {
        let key = space_name_key(name);
        if let Some(early) = self.undeclared.get_mut(&key) {
            early.rows.add_at(
                place,
                one_error(LinkField::Space.name(), format!("no space is named {name}")),
            );
            return Ok(Some(early.id));
        }
        if let Some(&id) = self.space_ids.get(&key) {
            return Ok(Some(id));
        }
        if !self.rules.create_spaces {
            let valid = validate_space_input(
                &SpaceInput {
                    name: Some(name.to_owned()),
                    color: Some("1".into()),
                },
                Mode::Create,
            );
            let Ok(SpacePatch {
                name: Some(name),
                color: Some(color),
            }) = valid
            else {
                // No declaration could make it either.
                self.add_error(
                    place,
                    LinkField::Space.name(),
                    format!("no space is named {}", name_excerpt(name)),
                );
                return Ok(None);
            };
            let id = self.make_space(&name, color)?;
            let mut rows = FieldErrors::default();
            rows.add_at(
                place,
                one_error(LinkField::Space.name(), format!("no space is named {name}")),
            );
            self.undeclared.insert(key, Undeclared { id, rows });
            return Ok(Some(id));
        }
        let patch = validate_space_input(
            &SpaceInput {
                name: Some(name.to_owned()),
                color: Some(self.next_color.to_string()),
            },
            Mode::Create,
        );
        match patch {
            Ok(SpacePatch {
                name: Some(name),
                color: Some(color),
            }) => {
                self.next_color = self.next_color % Color::COUNT + 1;
                self.make_space(&name, color).map(Some)
            }
            Ok(_) => Ok(None),
            Err(e) => {
                // A tag that cannot name a space (too long, say): the row's error.
                for (_, messages) in e.iter() {
                    for m in messages {
                        self.add_error(
                            place,
                            LinkField::Space.name(),
                            format!("\"{}\" {m}", name_excerpt(name)),
                        );
                    }
                }
                Ok(None)
            }
        }
    }

    fn taken(&mut self, domain: Option<Id>, alias: &str) -> Result<bool> {
        Ok(self
            .chunk_aliases
            .contains_key(&(domain.unwrap_or(0), alias.to_ascii_lowercase()))
            || self.store.alias_taken(domain, alias)?)
    }

    /// Whether taken `alias` is the owner's link to `url` — an earlier row of this import, or
    /// a link stored before — and the import passes over such links. Counts it when it is.
    fn arrived(&mut self, domain: Option<Id>, alias: &str, url: &str) -> Result<bool> {
        if !self.rules.pass_over_arrived {
            return Ok(false);
        }
        let there = match self
            .chunk_aliases
            .get(&(domain.unwrap_or(0), alias.to_ascii_lowercase()))
        {
            Some(staged) => staged == url,
            None => {
                self.store
                    .tx()
                    .own_link_url(self.owner, domain, alias)?
                    .as_deref()
                    == Some(url)
            }
        };
        if there {
            self.summary.links_already_there += 1;
        }
        Ok(there)
    }

    /// The alias a row to `url` gets, or `None` when the row is left out (or is an error).
    fn alias_for(
        &mut self,
        place: Place,
        domain: Option<Id>,
        wanted: Option<String>,
        url: &str,
    ) -> Result<Option<String>> {
        let Some(alias) = wanted else {
            let chunk = &self.chunk_aliases;
            let store = &mut self.store;
            let key = domain.unwrap_or(0);
            return generate_alias(|a| {
                Ok(chunk.contains_key(&(key, a.to_owned())) || store.alias_taken(domain, a)?)
            })
            .map(Some);
        };
        if !self.taken(domain, &alias)? {
            return Ok(Some(alias));
        }
        if self.arrived(domain, &alias, url)? {
            return Ok(None);
        }
        match self.rules.on_conflict {
            OnConflict::Fail => {
                self.add_error(place, LinkField::Alias.name(), ALIAS_TAKEN);
                Ok(None)
            }
            OnConflict::Skip => {
                self.summary.links_skipped += 1;
                Ok(None)
            }
            OnConflict::Rename => {
                for n in 2.. {
                    let candidate = renamed_alias(&alias, n);
                    if validate_alias(&candidate).is_err() {
                        break;
                    }
                    if self.taken(domain, &candidate)? {
                        // Renamed so on an earlier run.
                        if self.arrived(domain, &candidate, url)? {
                            return Ok(None);
                        }
                        continue;
                    }
                    self.summary.renamed.push(Renamed {
                        place: place.to_string(),
                        from: alias,
                        to: candidate.clone(),
                    });
                    return Ok(Some(candidate));
                }
                self.add_error(
                    place,
                    LinkField::Alias.name(),
                    "is taken, and so is every renamed form of it",
                );
                Ok(None)
            }
        }
    }

    fn take(&mut self, row: Checked) -> Result<()> {
        let place = row.place;
        let mut patch = row.patch;
        if let Some(name) = &row.space {
            if let Some(id) = self.space_of(place, name)? {
                patch.space = Some(Some(id));
            }
        } else if let Some(Some(id)) = patch.space
            && !self.owned_spaces.contains(&id)
        {
            self.add_error(place, LinkField::Space.name(), NOT_YOUR_SPACE);
        }
        let domain = patch.domain.flatten();
        if let Some(d) = domain
            && !self.owned_domains.contains(&d)
        {
            self.add_error(place, LinkField::Domain.name(), NOT_YOUR_DOMAIN);
            return Ok(());
        }
        // Only an import that passes over arrived links compares destinations.
        let url = match (self.rules.pass_over_arrived, &patch.url) {
            (true, Some(url)) => url.clone(),
            _ => String::new(),
        };
        let Some(alias) = self.alias_for(place, domain, patch.alias.take(), &url)? else {
            return Ok(());
        };
        self.chunk_aliases
            .insert((domain.unwrap_or(0), alias.to_ascii_lowercase()), url);
        if !self.errors.is_empty() {
            // Keep checking the rest; nothing will be written.
            return Ok(());
        }
        let mut link = LinkRow::blank(self.owner, self.now);
        link.domain_id = domain;
        link.alias = alias;
        let Carried {
            title,
            clicks,
            previews,
            created_at,
            traffic,
        } = row.carried;
        apply_titled(&mut link, patch, row.hash, Some(title), self.now);
        if let Some(at) = created_at {
            link.created_at = at;
        }
        // Writing the history adds its clicks: stage only those the total has beyond it, so the
        // link ends with the larger of the two.
        let history_clicks: u64 = traffic.iter().map(|h| h.clicks).sum();
        let counted = Counted {
            clicks: clicks.saturating_sub(history_clicks),
            previews,
        };
        let staged = self.store.stage(&link, counted, traffic)?;
        if staged >= CHUNK {
            self.flush()?;
        }
        Ok(())
    }

    /// Moves the staged rows into the links table.
    fn flush(&mut self) -> Result<()> {
        let (links, clicks) = self.store.flush()?;
        self.summary.links_created += links;
        self.summary.clicks_imported += clicks;
        self.chunk_aliases.clear();
        Ok(())
    }

    fn finish(mut self) -> Result<ImportSummary> {
        for (_, never) in self.undeclared.drain() {
            self.errors.merge(never.rows);
        }
        if !self.errors.is_empty() {
            return Err(Error::Validation(self.errors));
        }
        self.flush()?;
        self.store.finish()?;
        Ok(self.summary)
    }
}
