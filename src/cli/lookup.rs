//! Commands take a record's id or, more memorably, its alias or name. An all-digit argument is
//! always an id.

use crate::backend::Backend;
pub use crate::domain::find_domain;
use crate::domain::{
    Domain, Error, Id, Link, LinkQuery, SearchBy, Space, SpaceQuery, StatusFilter,
};

use super::PER_PAGE_MAX;
use super::error::{CliError, CliResult, Kind};

fn as_id(arg: &str) -> Option<Id> {
    let arg = arg.trim();
    (!arg.is_empty() && arg.bytes().all(|b| b.is_ascii_digit()))
        .then(|| arg.parse().ok())
        .flatten()
}

/// The id of the link with this id or alias.
pub async fn link_id(backend: &dyn Backend, arg: &str) -> CliResult<Id> {
    if let Some(id) = as_id(arg) {
        return Ok(id);
    }
    let alias = arg.trim();
    let mut found: Vec<Link> = Vec::new();
    let mut query = LinkQuery {
        search: Some(alias.to_owned()),
        by: SearchBy::Alias,
        status: StatusFilter::All,
        per_page: PER_PAGE_MAX,
        ..LinkQuery::default()
    };
    loop {
        let page = backend.list_links(&query).await?;
        let more = page.has_next();
        found.extend(
            page.items
                .into_iter()
                .filter(|l| l.alias.eq_ignore_ascii_case(alias)),
        );
        if !more {
            break;
        }
        query.page += 1;
    }
    match found.as_slice() {
        [] => Err(Error::not_found(format!("link \"{alias}\"")).into()),
        [one] => Ok(one.id),
        many => Err(CliError::new(
            Kind::Conflict,
            format!(
                "alias \"{alias}\" is used on several domains (ids {}); give the id",
                many.iter()
                    .map(|l| l.id.to_string())
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        )),
    }
}

/// The id of the space with this id or name.
pub async fn space_id(backend: &dyn Backend, arg: &str) -> CliResult<Id> {
    if let Some(id) = as_id(arg) {
        return Ok(id);
    }
    let name = arg.trim();
    let mut query = SpaceQuery {
        search: Some(name.to_owned()),
        per_page: PER_PAGE_MAX,
        ..SpaceQuery::default()
    };
    loop {
        let page = backend.list_spaces(&query).await?;
        if let Some(space) = page
            .items
            .iter()
            .find(|s: &&Space| s.name.eq_ignore_ascii_case(name))
        {
            return Ok(space.id);
        }
        if !page.has_next() {
            return Err(Error::not_found(format!("space \"{name}\"")).into());
        }
        query.page += 1;
    }
}

/// Every domain of the caller.
pub async fn all_domains(backend: &dyn Backend) -> CliResult<Vec<Domain>> {
    Ok(crate::backend::all_domains(backend).await?)
}

/// The id of the domain with this id or name.
pub async fn domain_id(backend: &dyn Backend, arg: &str) -> CliResult<Id> {
    if let Some(id) = as_id(arg) {
        return Ok(id);
    }
    let domains = all_domains(backend).await?;
    find_domain(&domains, arg)
        .map(|d| d.id)
        .ok_or_else(|| Error::not_found(format!("domain \"{}\"", arg.trim())).into())
}
