//! Which links a command works on, as flags: the list's filters, shared by `links list`, the
//! bulk commands and `copy`.

use clap::Args;

use super::error::CliResult;
use super::lookup::{domain_id, space_id};
use crate::backend::Backend;
use crate::domain::{LinkQuery, SearchBy, SpaceFilter, StatusFilter, TagMatch};

/// Which links a command works on: the list's filters, shared by every command that takes
/// many links at once.
#[derive(Debug, Args, Clone)]
pub struct LinkFilterArgs {
    /// Only links whose title (or --by field) contains TEXT.
    #[arg(long, short, value_name = "TEXT")]
    pub search: Option<String>,
    /// The field --search looks in: title, alias or url.
    #[arg(long, value_name = "FIELD", value_parser = parse_by, default_value = "title")]
    pub by: SearchBy,
    /// all, active, expired or disabled (or 0-3).
    #[arg(long, value_name = "STATUS", value_parser = parse_status, default_value = "all")]
    pub status: StatusFilter,
    /// Only links in this space (id or name).
    #[arg(long, value_name = "ID|NAME")]
    pub space: Option<String>,
    /// Only links in no space.
    #[arg(long, conflicts_with = "space")]
    pub no_space: bool,
    /// Only links on this domain (id or name).
    #[arg(long, value_name = "ID|NAME")]
    pub domain: Option<String>,
    /// Only links carrying this tag; repeat it for links carrying every one of them.
    #[arg(long = "tag", value_name = "TAG", value_parser = parse_tag)]
    pub tags: Vec<String>,
    /// With --tag: links carrying any of the tags instead of all of them.
    #[arg(long, requires = "tags")]
    pub any_tag: bool,
}

impl LinkFilterArgs {
    /// The query these filters make on `backend` (spaces and domains looked up there).
    pub async fn query(&self, backend: &dyn Backend) -> CliResult<LinkQuery> {
        let mut query = LinkQuery {
            search: self.search.clone().filter(|s| !s.is_empty()),
            by: self.by,
            status: self.status,
            tags: self.tags.clone(),
            tag_match: if self.any_tag {
                TagMatch::Any
            } else {
                TagMatch::All
            },
            ..LinkQuery::default()
        };
        if let Some(space) = &self.space {
            query.space = SpaceFilter::In(space_id(backend, space).await?);
        } else if self.no_space {
            query.space = SpaceFilter::NoSpace;
        }
        if let Some(domain) = &self.domain {
            query.domain = Some(domain_id(backend, domain).await?);
        }
        Ok(query)
    }

    /// Whether any filter narrows the links.
    pub fn is_set(&self) -> bool {
        self.search.as_deref().is_some_and(|s| !s.is_empty())
            || self.status != StatusFilter::All
            || self.space.is_some()
            || self.no_space
            || self.domain.is_some()
            || !self.tags.is_empty()
    }
}

pub(super) fn parse_by(s: &str) -> Result<SearchBy, String> {
    SearchBy::parse(s).ok_or_else(|| "expected title, alias or url".into())
}

/// A tag as it is stored (`Promo` is `promo`), or why it cannot be one.
pub(super) fn parse_tag(s: &str) -> Result<String, String> {
    crate::domain::tag(s)
}

pub(super) fn parse_status(s: &str) -> Result<StatusFilter, String> {
    StatusFilter::parse(s).ok_or_else(|| "expected all, active, expired or disabled".into())
}
