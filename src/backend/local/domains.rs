//! Domains of the embedded service: listed and shown through [`Backend`](crate::backend::Backend),
//! added and removed by the CLI through the inherent methods here.

use super::LocalBackend;
use super::store::domains as store;
use crate::domain::{Domain, Error, Id, Page, Result, SpaceQuery, normalize_domain_name};

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
        let owner = self.owner_id;
        let now = self.service.now().as_second();
        let id = self
            .service
            .db()?
            .write(move |tx| {
                if store::name_taken(tx, &name, &host)? {
                    return Err(Error::field("name", format!("{host} is already in use")));
                }
                store::insert(tx, owner, &name, &host, now)
            })
            .await?;
        self.domain_show(id).await
    }

    /// Removes one of this owner's domains; refused while links use it, trashed ones included.
    pub async fn remove_domain(&self, id: Id) -> Result<()> {
        let owner = self.owner_id;
        self.service
            .db()?
            .write(move |tx| {
                let domain = store::get(tx, owner, id)?
                    .ok_or_else(|| Error::not_found(format!("domain {id}")))?;
                let links = store::link_count(tx, owner, id)?;
                if links > 0 {
                    let noun = if links == 1 { "link uses" } else { "links use" };
                    return Err(Error::Conflict(format!(
                        "{links} {noun} the domain {}; delete them first",
                        domain.name
                    )));
                }
                let trashed = store::trashed_link_count(tx, owner, id)?;
                if trashed > 0 {
                    let noun = if trashed == 1 { "link" } else { "links" };
                    return Err(Error::Conflict(format!(
                        "{trashed} {noun} in the trash use the domain {}; empty the trash \
                         (`linkdeck trash empty`) or restore and delete them first",
                        domain.name
                    )));
                }
                store::delete(tx, owner, id)?;
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
        self.read_page(page, per_page, move |conn, owner, offset| {
            store::list(conn, owner, offset, per_page)
        })
        .await
    }

    pub(super) async fn domain_show(&self, id: Id) -> Result<Domain> {
        self.read_owned("domain", id, store::get).await
    }
}
