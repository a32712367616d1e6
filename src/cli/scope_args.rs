//! The flags that name whose traffic a command reads — a link, a space, a domain, a tag or
//! every link — shared by `stats`, `visits export` and `visits tail`.

use clap::Args;

use super::error::CliResult;
use super::lookup::{domain_id, link_id, space_id};
use crate::backend::Backend;
use crate::domain::{Preset, StatsScope};

#[derive(Debug, Args)]
pub struct ScopeArgs {
    /// A link's id or alias; without it, every link (or --space, --domain, --tag).
    #[arg(conflicts_with_all = ["space", "domain", "tag"])]
    pub link: Option<String>,
    /// Only this space's links (id or name).
    #[arg(long, value_name = "ID|NAME", conflicts_with_all = ["domain", "tag"])]
    pub space: Option<String>,
    /// Only this domain's links (id or name).
    #[arg(long, value_name = "ID|NAME", conflicts_with = "tag")]
    pub domain: Option<String>,
    /// Only the links that carry this tag now (their clicks from before it was put on too).
    #[arg(long, value_name = "TAG", value_parser = crate::domain::tag)]
    pub tag: Option<String>,
}

impl ScopeArgs {
    /// The scope the flags name, each looked up on `backend`.
    pub async fn scope(&self, backend: &dyn Backend) -> CliResult<StatsScope> {
        Ok(match (&self.link, &self.space, &self.domain, &self.tag) {
            (Some(link), ..) => StatsScope::Link(link_id(backend, link).await?),
            (_, Some(space), ..) => StatsScope::Space(space_id(backend, space).await?),
            (_, _, Some(domain), _) => StatsScope::Domain(domain_id(backend, domain).await?),
            (.., Some(tag)) => StatsScope::Tag(tag.clone()),
            _ => StatsScope::Account,
        })
    }

    /// The scope as the person named it: `link a`, `space Launch`, `all links`.
    pub fn name(&self) -> String {
        match (&self.link, &self.space, &self.domain, &self.tag) {
            (Some(link), ..) => format!("link {link}"),
            (_, Some(space), ..) => format!("space {space}"),
            (_, _, Some(domain), _) => format!("domain {domain}"),
            (.., Some(tag)) => format!("tag {tag}"),
            _ => "all links".to_owned(),
        }
    }
}

/// `--period`'s value.
pub fn parse_period(s: &str) -> Result<Preset, String> {
    Preset::parse(s).ok_or_else(|| "expected 24h, 7d, 30d, 90d, 12m or all".into())
}
