//! The flags that name whose traffic a command reads — a link, a space, a domain or every
//! link — shared by `stats` and `visits export`.

use clap::Args;

use super::error::CliResult;
use super::lookup::{domain_id, link_id, space_id};
use crate::backend::Backend;
use crate::domain::{Preset, StatsScope};

#[derive(Debug, Args)]
pub struct ScopeArgs {
    /// A link's id or alias; without it, every link (or --space, --domain).
    #[arg(conflicts_with_all = ["space", "domain"])]
    pub link: Option<String>,
    /// Only this space's links (id or name).
    #[arg(long, value_name = "ID|NAME", conflicts_with = "domain")]
    pub space: Option<String>,
    /// Only this domain's links (id or name).
    #[arg(long, value_name = "ID|NAME")]
    pub domain: Option<String>,
}

impl ScopeArgs {
    /// The scope the flags name, each looked up on `backend`.
    pub async fn scope(&self, backend: &dyn Backend) -> CliResult<StatsScope> {
        Ok(match (&self.link, &self.space, &self.domain) {
            (Some(link), _, _) => StatsScope::Link(link_id(backend, link).await?),
            (_, Some(space), _) => StatsScope::Space(space_id(backend, space).await?),
            (_, _, Some(domain)) => StatsScope::Domain(domain_id(backend, domain).await?),
            _ => StatsScope::Account,
        })
    }

    /// The scope as the person named it: `link a`, `space Launch`, `all links`.
    pub fn name(&self) -> String {
        match (&self.link, &self.space, &self.domain) {
            (Some(link), _, _) => format!("link {link}"),
            (_, Some(space), _) => format!("space {space}"),
            (_, _, Some(domain)) => format!("domain {domain}"),
            _ => "all links".to_owned(),
        }
    }
}

/// `--period`'s value.
pub fn parse_period(s: &str) -> Result<Preset, String> {
    Preset::parse(s).ok_or_else(|| "expected 24h, 7d, 30d, 90d, 12m or all".into())
}
