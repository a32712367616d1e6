//! A backend seen through a key limited to some spaces: the links in those spaces and the spaces
//! themselves are there to read and change, everything else is as if it did not exist — another
//! space's link is not found, a list holds only the key's spaces — and what concerns the whole
//! account (its totals, its tags, its spaces' names and settings, its domains' settings) is
//! refused, saying why.
//!
//! A link stays within the key's spaces: one made without a space goes in the key's only space
//! (a key of several must name one), and none can be moved out or left without a space.

use std::sync::Arc;

use async_trait::async_trait;
use jiff::tz::TimeZone;

use crate::{Backend, BackendInfo, VisitStream};
use linkdeck_domain::{
    Domain, DomainInput, Error, Id, Link, LinkInput, LinkQuery, Page, Result, Space, SpaceFilter,
    SpaceInput, SpaceQuery, SpaceSet, Stats, StatsQuery, StatsScope, TagCount, VisitQuery,
};

/// `inner`, as far as a key limited to `spaces` reaches.
pub struct SpaceLimited<B: ?Sized> {
    inner: Arc<B>,
    spaces: SpaceSet,
}

impl<B: Backend + ?Sized> SpaceLimited<B> {
    pub fn new(inner: Arc<B>, spaces: SpaceSet) -> Self {
        SpaceLimited { inner, spaces }
    }

    fn refused<T>(&self, what: &str) -> Result<T> {
        Err(Error::Forbidden(format!(
            "this key is limited to {}: {what}",
            self.spaces.described()
        )))
    }

    /// The same words for a space outside the key as for one that does not exist.
    fn space_in_reach(&self, id: Id) -> Result<()> {
        if self.spaces.contains(id) {
            Ok(())
        } else {
            Err(Error::not_found(format!("space {id}")))
        }
    }

    /// Link `id`, when it is in one of the key's spaces.
    async fn link_in_reach(&self, id: Id) -> Result<Link> {
        let link = self.inner.show_link(id).await?;
        if self.admits(&link) {
            Ok(link)
        } else {
            Err(Error::not_found(format!("link {id}")))
        }
    }

    fn admits(&self, link: &Link) -> bool {
        SpaceFilter::Among(self.spaces).admits(link.space.as_ref().map(|s| s.id))
    }

    /// The space a link is put in, as typed (`None`: not said), checked against the key: a
    /// link made without one goes in the key's only space.
    fn placed(&self, space: Option<&str>, creating: bool) -> Result<Option<String>> {
        let must = || {
            let only = self.spaces.described();
            Error::field("space", format!("this key may put links only in {only}"))
        };
        let typed = space.map(str::trim);
        if creating && typed.is_none_or(str::is_empty) {
            return self
                .spaces
                .single()
                .map(|id| Some(id.to_string()))
                .ok_or_else(must);
        }
        match typed {
            None => Ok(None),
            Some(typed) => match typed.parse::<Id>() {
                Ok(id) if self.spaces.contains(id) => Ok(Some(id.to_string())),
                _ => Err(must()),
            },
        }
    }
}

/// Whether a key limited to `spaces` may ask about the traffic of `scope` through `backend`
/// (one that already hides what is outside them): a link or a space within the key, not the
/// account, a domain or a tag, whose figures span every space.
pub async fn scope_in_reach(
    backend: &dyn Backend,
    spaces: SpaceSet,
    scope: &StatsScope,
) -> Result<()> {
    match scope {
        StatsScope::Link(id) => backend.show_link(*id).await.map(drop),
        StatsScope::Space(id) if spaces.contains(*id) => Ok(()),
        StatsScope::Space(id) => Err(Error::not_found(format!("space {id}"))),
        StatsScope::Account | StatsScope::Domain(_) | StatsScope::Tag(_) => {
            Err(Error::Forbidden(format!(
                "this key is limited to {}: ask for the traffic of one of them or of one of \
                 their links instead",
                spaces.described()
            )))
        }
    }
}

#[async_trait]
impl<B: Backend + ?Sized> Backend for SpaceLimited<B> {
    fn info(&self) -> BackendInfo {
        self.inner.info()
    }

    async fn list_links(&self, query: &LinkQuery) -> Result<Page<Link>> {
        let space = match query.space {
            SpaceFilter::Any => SpaceFilter::Among(self.spaces),
            SpaceFilter::In(id) => {
                self.space_in_reach(id)?;
                SpaceFilter::In(id)
            }
            SpaceFilter::Among(asked) => SpaceFilter::Among(
                SpaceSet::new(
                    asked
                        .ids()
                        .iter()
                        .copied()
                        .filter(|&id| self.spaces.contains(id)),
                )
                .expect("a subset of a set is no larger"),
            ),
            SpaceFilter::NoSpace => return self.refused("links in no space are outside it"),
        };
        let query = LinkQuery {
            space,
            ..query.clone()
        };
        self.inner.list_links(&query).await
    }

    async fn show_link(&self, id: Id) -> Result<Link> {
        self.link_in_reach(id).await
    }

    async fn create_link(&self, input: &LinkInput) -> Result<Link> {
        let input = LinkInput {
            space: self.placed(input.space.as_deref(), true)?,
            ..input.clone()
        };
        self.inner.create_link(&input).await
    }

    async fn update_link(&self, id: Id, input: &LinkInput) -> Result<Link> {
        self.link_in_reach(id).await?;
        let input = LinkInput {
            space: self.placed(input.space.as_deref(), false)?,
            ..input.clone()
        };
        self.inner.update_link(id, &input).await
    }

    async fn delete_link(&self, id: Id) -> Result<()> {
        self.link_in_reach(id).await?;
        self.inner.delete_link(id).await
    }

    /// The key's spaces, read one by one (a key has a handful), searched, ordered and paged here
    /// as the store would.
    async fn list_spaces(&self, query: &SpaceQuery) -> Result<Page<Space>> {
        let mut spaces = Vec::new();
        for &id in self.spaces.ids() {
            match self.inner.show_space(id).await {
                Ok(space) => spaces.push(space),
                Err(Error::NotFound(_)) => {}
                Err(e) => return Err(e),
            }
        }
        if let Some(term) = query
            .search
            .as_deref()
            .map(str::trim)
            .filter(|t| !t.is_empty())
        {
            let term = term.to_lowercase();
            spaces.retain(|s| s.name.to_lowercase().contains(&term));
        }
        spaces.sort_by_key(|s| s.id);
        if query.sort != linkdeck_domain::Sort::Asc {
            spaces.reverse();
        }
        let total = spaces.len() as u64;
        let per_page = query.per_page.max(1) as usize;
        let skip = (query.page.max(1) as usize - 1).saturating_mul(per_page);
        Ok(Page::new(
            spaces.into_iter().skip(skip).take(per_page).collect(),
            query.page,
            query.per_page,
            total,
        ))
    }

    async fn show_space(&self, id: Id) -> Result<Space> {
        self.space_in_reach(id)?;
        self.inner.show_space(id).await
    }

    async fn create_space(&self, _input: &SpaceInput) -> Result<Space> {
        self.refused("it cannot create spaces")
    }

    async fn update_space(&self, _id: Id, _input: &SpaceInput) -> Result<Space> {
        self.refused("it cannot change spaces")
    }

    async fn delete_space(&self, _id: Id) -> Result<()> {
        self.refused("it cannot delete spaces")
    }

    async fn tags(&self) -> Result<Vec<TagCount>> {
        self.refused("the account's tags are outside it")
    }

    async fn keeps_link_options(&self) -> Result<bool> {
        self.inner.keeps_link_options().await
    }

    async fn rename_tag(&self, _from: &str, _to: &str) -> Result<u64> {
        self.refused("renaming a tag changes links outside it")
    }

    async fn list_domains(&self, page: u32, per_page: u32) -> Result<Page<Domain>> {
        self.inner.list_domains(page, per_page).await
    }

    async fn show_domain(&self, id: Id) -> Result<Domain> {
        self.inner.show_domain(id).await
    }

    async fn update_domain(&self, _id: Id, _input: &DomainInput) -> Result<Domain> {
        self.refused("it cannot change domains")
    }

    fn input_zone(&self) -> TimeZone {
        self.inner.input_zone()
    }

    async fn stats(&self, query: &StatsQuery) -> Result<Stats> {
        scope_in_reach(self, self.spaces, &query.scope).await?;
        self.inner.stats(query).await
    }

    async fn orphan_stats(&self, query: &StatsQuery) -> Result<linkdeck_domain::OrphanStats> {
        // Orphan visits belong to hosts, which are the account's.
        scope_in_reach(self, self.spaces, &StatsScope::Account).await?;
        self.inner.orphan_stats(query).await
    }

    async fn counted_clicks(&self, scope: StatsScope) -> Result<Option<u64>> {
        scope_in_reach(self, self.spaces, &scope).await?;
        self.inner.counted_clicks(scope).await
    }

    async fn visits(&self, query: &VisitQuery) -> Result<VisitStream> {
        scope_in_reach(self, self.spaces, &query.scope).await?;
        self.inner.visits(query).await
    }

    async fn live_visits(&self, scope: StatsScope, after: Option<Id>) -> Result<VisitStream> {
        scope_in_reach(self, self.spaces, &scope).await?;
        self.inner.live_visits(scope, after).await
    }
}
