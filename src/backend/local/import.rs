//! Bulk import: many spaces and links in one transaction, every rule of a single create applied
//! to each row, errors reported by source line. Nothing is written unless every row is valid.

use std::collections::{HashMap, HashSet};

use serde::Serialize;

use super::LocalBackend;
use super::alias::generate_alias;
use super::links::{ALIAS_TAKEN, NOT_YOUR_DOMAIN, NOT_YOUR_SPACE, apply, blank_row};
use super::password::hash_password;
use super::spaces::NAME_TAKEN;
use super::store::links::{self as link_store};
use super::store::traffic::{Interner, LinkHome};
use super::store::{domains, spaces};
use super::visits::add_history;
use crate::domain::{
    Error, FieldErrors, Id, LinkInput, LinkPatch, Mode, Result, SpaceInput, SpacePatch,
    TrafficHour, validate_link_input, validate_space_input,
};

/// What an import created.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct ImportSummary {
    pub spaces_created: usize,
    /// Spaces named in the import that already existed and were reused.
    pub spaces_reused: usize,
    pub links_created: usize,
    /// Clicks of the traffic history carried in.
    pub clicks_imported: u64,
}

/// Past this many invalid fields an import stops looking for more.
pub const MAX_IMPORT_ERRORS: usize = 50;

/// Field errors of one source line, keyed `line N: field`.
struct LineErrors {
    errors: FieldErrors,
}

impl LineErrors {
    fn add(&mut self, line: usize, field: &str, message: impl Into<String>) {
        self.errors.add(&format!("line {line}: {field}"), message);
    }

    fn merge(&mut self, line: usize, errors: FieldErrors) {
        for (field, messages) in errors.iter() {
            for message in messages {
                self.add(line, field, message.clone());
            }
        }
    }

    fn full(&self) -> bool {
        self.errors.len() >= MAX_IMPORT_ERRORS
    }
}

/// Space names compare as the database compares them (`COLLATE NOCASE`: ASCII case folded).
fn name_key(name: &str) -> String {
    name.to_ascii_lowercase()
}

struct ValidLink {
    line: usize,
    patch: LinkPatch,
    space_name: Option<String>,
    hash: Option<Option<String>>,
    traffic: Vec<TrafficHour>,
}

impl LocalBackend {
    /// Imports `spaces` then `links` in one transaction. Each entry carries its source line (or
    /// record number) for error messages; a link may name a space (of this owner, existing or
    /// created by this import) instead of giving its id. Spaces whose name already exists are
    /// reused. Any invalid row aborts the whole import with `Error::Validation`, keyed
    /// `line N: field`, listing up to [`MAX_IMPORT_ERRORS`] fields.
    pub async fn import_batch(
        &self,
        spaces: Vec<(usize, SpaceInput)>,
        links: Vec<(usize, LinkInput, Option<String>)>,
    ) -> Result<ImportSummary> {
        self.import_batch_with_traffic(spaces, links, Vec::new())
            .await
    }

    /// [`LocalBackend::import_batch`] with each link's traffic history (`traffic[i]` is
    /// `links[i]`'s; missing entries are none), written in the same transaction. A link with
    /// history starts with its clicks.
    pub async fn import_batch_with_traffic(
        &self,
        spaces: Vec<(usize, SpaceInput)>,
        links: Vec<(usize, LinkInput, Option<String>)>,
        traffic: Vec<Vec<TrafficHour>>,
    ) -> Result<ImportSummary> {
        let backend = self.clone();
        tokio::task::spawn_blocking(move || backend.import_blocking(spaces, links, traffic))
            .await
            .map_err(|e| Error::Unavailable(format!("import task failed: {e}")))?
    }

    fn import_blocking(
        &self,
        space_rows: Vec<(usize, SpaceInput)>,
        link_rows: Vec<(usize, LinkInput, Option<String>)>,
        traffic: Vec<Vec<TrafficHour>>,
    ) -> Result<ImportSummary> {
        let mut traffic = traffic.into_iter();
        let tz = &self.service.options().timezone;
        let mut errors = LineErrors {
            errors: FieldErrors::default(),
        };

        // Rules that need no stored state first, so a bad file fails before any hashing.
        let mut valid_spaces: Vec<(usize, SpacePatch)> = Vec::with_capacity(space_rows.len());
        for (line, input) in &space_rows {
            match validate_space_input(input, Mode::Create) {
                Ok(patch) => valid_spaces.push((*line, patch)),
                Err(e) => errors.merge(*line, e),
            }
        }
        let mut valid_links: Vec<ValidLink> = Vec::with_capacity(link_rows.len());
        for (line, input, space_name) in link_rows {
            let history = traffic.next().unwrap_or_default();
            if errors.full() {
                break;
            }
            if space_name.is_some() && input.space.as_deref().is_some_and(|s| !s.trim().is_empty())
            {
                errors.add(line, "space", "give a space id or a space name, not both");
            }
            match validate_link_input(&input, Mode::Create, tz) {
                Ok(patch) => valid_links.push(ValidLink {
                    line,
                    patch,
                    space_name: space_name
                        .map(|n| n.trim().to_owned())
                        .filter(|n| !n.is_empty()),
                    hash: None,
                    traffic: history,
                }),
                Err(e) => errors.merge(line, e),
            }
        }
        if !errors.errors.is_empty() {
            return Err(errors.errors.into());
        }
        for link in &mut valid_links {
            if let Some(Some(plain)) = &link.patch.password {
                link.hash = Some(Some(hash_password(plain)?));
            }
        }

        let owner = self.owner_id;
        let now = self.service.now();
        self.service.db().write_blocking(move |tx| {
            let mut summary = ImportSummary::default();
            let mut space_ids: HashMap<String, Id> = spaces::names(tx, owner)?
                .into_iter()
                .map(|(id, name)| (name_key(&name), id))
                .collect();
            let mut owned_spaces: HashSet<Id> = space_ids.values().copied().collect();
            let owned_domains: HashSet<Id> = domains::ids(tx, owner)?.into_iter().collect();

            for (line, patch) in valid_spaces {
                let (Some(name), Some(color)) = (patch.name, patch.color) else {
                    continue;
                };
                if space_ids.contains_key(&name_key(&name)) {
                    summary.spaces_reused += 1;
                    continue;
                }
                // Reaching here with a taken name means the lookup and the index disagree.
                if spaces::id_by_name(tx, owner, &name, None)?.is_some() {
                    errors.add(line, "name", NAME_TAKEN);
                    continue;
                }
                let id = spaces::insert(tx, owner, &name, color, now.as_second())?;
                space_ids.insert(name_key(&name), id);
                owned_spaces.insert(id);
                summary.spaces_created += 1;
            }

            // Aliases given or generated earlier in this import, by domain (0 for none).
            let mut batch_aliases: HashSet<(Id, String)> = HashSet::new();
            let mut staged = link_store::stage_start(tx)?;
            let first_id = staged.first_id();
            // Each staged link's place and history, in staging order.
            let mut histories: Vec<(LinkHome, Vec<TrafficHour>)> = Vec::new();
            for link in valid_links {
                if errors.full() {
                    break;
                }
                let line = link.line;
                let mut patch = link.patch;
                if let Some(name) = &link.space_name {
                    match space_ids.get(&name_key(name)) {
                        Some(&id) => patch.space = Some(Some(id)),
                        None => errors.add(line, "space", format!("no space is named {name}")),
                    }
                } else if let Some(Some(id)) = patch.space
                    && !owned_spaces.contains(&id)
                {
                    errors.add(line, "space", NOT_YOUR_SPACE);
                }
                let domain = patch.domain.flatten();
                if let Some(d) = domain
                    && !owned_domains.contains(&d)
                {
                    errors.add(line, "domain", NOT_YOUR_DOMAIN);
                    continue;
                }
                let domain_key = domain.unwrap_or(0);
                let alias = match patch.alias.take() {
                    Some(alias) => {
                        let key = (domain_key, alias.to_ascii_lowercase());
                        if batch_aliases.contains(&key)
                            || link_store::alias_taken(tx, domain, &alias, None)?
                        {
                            errors.add(line, "alias", ALIAS_TAKEN);
                            continue;
                        }
                        batch_aliases.insert(key);
                        alias
                    }
                    None => {
                        let alias = generate_alias(|a| {
                            Ok(batch_aliases.contains(&(domain_key, a.to_owned()))
                                || link_store::alias_taken(tx, domain, a, None)?)
                        })?;
                        batch_aliases.insert((domain_key, alias.clone()));
                        alias
                    }
                };
                if !errors.errors.is_empty() {
                    // Keep checking the rest; nothing will be written.
                    continue;
                }
                let mut row = blank_row(owner, now);
                row.domain_id = domain;
                row.alias = alias;
                apply(&mut row, patch, link.hash, now);
                histories.push((
                    LinkHome {
                        owner,
                        space: row.space_id,
                        domain: row.domain_id,
                    },
                    link.traffic,
                ));
                link_store::stage(tx, &mut staged, &row)?;
            }
            if errors.errors.is_empty() {
                summary.links_created = link_store::stage_insert(tx, staged)?;
                let mut interner = Interner::default();
                for (k, (home, hours)) in histories.iter().enumerate() {
                    if !hours.is_empty() {
                        let id = first_id + k as Id;
                        summary.clicks_imported +=
                            add_history(tx, id, *home, hours, &mut interner)?;
                    }
                }
                Ok(summary)
            } else {
                Err(errors.errors.into())
            }
        })
    }
}
