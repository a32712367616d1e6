//! Domains of the embedded service: listed and shown through [`Backend`](linkdeck_backend::Backend),
//! added and removed by the CLI through the inherent methods here.

use super::LocalBackend;
use linkdeck_domain::{
    Domain, DomainInput, Error, Id, Page, Result, SpaceQuery, normalize_domain_name,
    validate_domain_input,
};
use linkdeck_store::words::host_in_use;

/// Why a domain cannot be removed while `links` live links and `trashed` trashed ones use it.
fn still_used(name: &str, links: u64, trashed: u64) -> Option<Error> {
    if links > 0 {
        let noun = if links == 1 { "link uses" } else { "links use" };
        return Some(Error::Conflict(format!(
            "{links} {noun} the domain {name}; delete them first"
        )));
    }
    if trashed > 0 {
        let noun = if trashed == 1 { "link" } else { "links" };
        return Some(Error::Conflict(format!(
            "{trashed} {noun} in the trash use the domain {name}; empty the trash \
             (`linkdeck trash empty`) or restore and delete them first"
        )));
    }
    None
}

impl LocalBackend {
    /// Adds a domain for this owner. `name` may be `sho.rt`, `https://sho.rt/` or
    /// `http://sho.rt:8080`; it is stored as `scheme://host[:port]`. A name any owner already
    /// uses is a field error on `name`.
    pub async fn add_domain(&self, name: &str) -> Result<Domain> {
        let name = normalize_domain_name(name).map_err(|m| Error::field("name", m))?;
        let host = name
            .split_once("://")
            .map_or(name.as_str(), |(_, h)| h)
            .to_owned();
        let in_use = Error::field("name", host_in_use(&host));
        let owner = self.owner_id;
        let now = self.service.now();
        let id = self
            .store()
            .write(move |tx| {
                if tx.domain_in_use(&name, &host)? {
                    return Err(in_use);
                }
                tx.insert_domain(owner, &name, &host, now)
            })
            .await?;
        self.domain_show(id).await
    }

    /// Changes the fallbacks and robots policy of one of this owner's domains: only the fields
    /// `input` holds, every bad one named at once.
    pub(super) async fn domain_update(&self, id: Id, input: &DomainInput) -> Result<Domain> {
        let patch = validate_domain_input(input)?;
        let owner = self.owner_id;
        let now = self.service.now();
        self.store()
            .write(move |tx| {
                let domain = tx
                    .lock_domain(owner, id)?
                    .ok_or_else(|| Error::not_found(format!("domain {id}")))?;
                let settings = patch.apply(domain.settings().clone());
                tx.set_domain_settings(owner, id, &settings, now)?;
                Ok(())
            })
            .await?;
        self.domain_show(id).await
    }

    /// Removes one of this owner's domains; refused while links use it, trashed ones included.
    pub async fn remove_domain(&self, id: Id) -> Result<()> {
        let owner = self.owner_id;
        self.store()
            .write(move |tx| {
                let domain = tx
                    .lock_domain(owner, id)?
                    .ok_or_else(|| Error::not_found(format!("domain {id}")))?;
                let (links, trashed) = tx.domain_uses(owner, id)?;
                if let Some(e) = still_used(&domain.name, links, trashed) {
                    return Err(e);
                }
                tx.delete_domain(owner, id)?;
                Ok(())
            })
            .await
    }

    pub(super) async fn domain_list(&self, page: u32, per_page: u32) -> Result<Page<Domain>> {
        SpaceQuery {
            page,
            per_page,
            ..SpaceQuery::default()
        }
        .validate()?;
        self.page(page, per_page, move |tx, owner, offset| {
            tx.domains(owner, offset, per_page)
        })
        .await
    }

    pub(super) async fn domain_show(&self, id: Id) -> Result<Domain> {
        self.one("domain", id, |tx, owner, id| tx.domain(owner, id))
            .await
    }
}
