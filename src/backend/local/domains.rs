//! Domains of the embedded service: listed and shown through [`Backend`](crate::backend::Backend),
//! added and removed by the CLI through the inherent methods here.

use super::LocalBackend;
use super::pg::{self, domains as pg_domains};
use super::store::domains as store;
use crate::domain::{Domain, Error, Id, Page, Result, SpaceQuery, normalize_domain_name};

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
        let in_use = Error::field("name", format!("{host} is already in use"));
        let owner = self.owner_id;
        let now = self.service.now().as_second();
        let id = match self.service.pg() {
            Some(pg) => {
                let mut client = pg.client().await?;
                let tx = pg::write(&mut client).await?;
                if pg_domains::name_taken(&tx, &name, &host).await? {
                    return Err(in_use);
                }
                let id = pg_domains::insert(&tx, owner, &name, &host, now).await?;
                tx.commit().await.map_err(pg::pg_error)?;
                id
            }
            None => {
                self.service
                    .db()?
                    .write(move |tx| {
                        if store::name_taken(tx, &name, &host)? {
                            return Err(in_use);
                        }
                        store::insert(tx, owner, &name, &host, now)
                    })
                    .await?
            }
        };
        self.domain_show(id).await
    }

    /// Removes one of this owner's domains; refused while links use it, trashed ones included.
    pub async fn remove_domain(&self, id: Id) -> Result<()> {
        let owner = self.owner_id;
        if let Some(pg) = self.service.pg() {
            let mut client = pg.client().await?;
            let tx = pg::write(&mut client).await?;
            // Locked first: a link being written on it waits, then finds it gone.
            let domain = pg_domains::get_for_update(&tx, owner, id)
                .await?
                .ok_or_else(|| Error::not_found(format!("domain {id}")))?;
            let links = pg_domains::link_count(&tx, owner, id).await?;
            let trashed = pg_domains::trashed_link_count(&tx, owner, id).await?;
            if let Some(e) = still_used(&domain.name, links, trashed) {
                return Err(e);
            }
            pg_domains::delete(&tx, owner, id).await?;
            return tx.commit().await.map_err(pg::pg_error);
        }
        self.service
            .db()?
            .write(move |tx| {
                let domain = store::get(tx, owner, id)?
                    .ok_or_else(|| Error::not_found(format!("domain {id}")))?;
                let links = store::link_count(tx, owner, id)?;
                let trashed = store::trashed_link_count(tx, owner, id)?;
                if let Some(e) = still_used(&domain.name, links, trashed) {
                    return Err(e);
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
        self.read_page(
            page,
            per_page,
            move |conn, owner, offset| store::list(conn, owner, offset, per_page),
            move |pg, owner, offset| async move {
                pg_domains::list(&pg, owner, offset, per_page).await
            },
        )
        .await
    }

    pub(super) async fn domain_show(&self, id: Id) -> Result<Domain> {
        self.read_owned("domain", id, store::get, |pg, owner, id| async move {
            let client = pg.client().await?;
            pg_domains::get(&client, owner, id).await
        })
        .await
    }
}
