//! `linkdeck domains list|add|update|remove`. Adding and removing are for the embedded service;
//! a remote server manages its own domains. `update` sets a domain's fallbacks and robots
//! policy, locally or on a linkdeck server.

use std::io::Read;
use std::path::PathBuf;

use clap::{Args, Subcommand};
use serde_json::json;

use super::context::Context;
use super::error::{CliError, CliResult};
use super::lookup::{all_domains, domain_id};
use super::output::{Table, date, print, print_json};
use crate::domain::{Domain, DomainInput, ROBOTS_MAX, validate_robots_txt, validate_url};

#[derive(Debug, Subcommand)]
pub enum DomainsCommand {
    /// List the domains that serve short links.
    #[command(visible_alias = "ls")]
    List,
    /// Add a domain (local profiles only), such as sho.rt or https://sho.rt.
    Add {
        /// Host name, with http:// or https:// (https when left out).
        name: String,
    },
    /// Set where a domain sends visitors no link takes, and its robots.txt.
    Update(UpdateArgs),
    /// Remove a domain (local profiles only).
    #[command(visible_alias = "rm")]
    Remove {
        /// The domain's id or name.
        domain: String,
    },
}

/// The settings `domains update` changes; each URL is held to a link URL's rules.
#[derive(Debug, Args)]
pub struct UpdateArgs {
    /// The domain's id or name.
    pub domain: String,
    /// Where the domain's root (/) sends a visitor.
    #[arg(long, value_name = "URL", value_parser = parse_url, conflicts_with = "no_root_url")]
    pub root_url: Option<String>,
    /// Show linkdeck's own page at the root again.
    #[arg(long)]
    pub no_root_url: bool,
    /// Where an alias no link has sends a visitor.
    #[arg(long, value_name = "URL", value_parser = parse_url, conflicts_with = "no_unknown_url")]
    pub unknown_url: Option<String>,
    /// Show linkdeck's own page for an unknown alias again.
    #[arg(long)]
    pub no_unknown_url: bool,
    /// Where a disabled link, or an expired one without its own expiration URL, sends a visitor.
    #[arg(long, value_name = "URL", value_parser = parse_url, conflicts_with = "no_expired_url")]
    pub expired_url: Option<String>,
    /// Show linkdeck's own page for disabled and expired links again.
    #[arg(long)]
    pub no_expired_url: bool,
    /// What robots.txt says: disallow (crawl nothing) or allow.
    #[arg(long, value_name = "POLICY", value_parser = ["allow", "disallow"],
          conflicts_with = "robots_file")]
    pub robots: Option<String>,
    /// Serve this file as robots.txt instead (at most 4 KiB).
    #[arg(long, value_name = "FILE")]
    pub robots_file: Option<PathBuf>,
}

fn parse_url(raw: &str) -> Result<String, String> {
    let url = raw.trim();
    if url.is_empty() {
        return Err("is empty (to clear it, use the --no- flag of the same name)".into());
    }
    validate_url(url).map(|()| url.to_owned())
}

/// A fallback flag pair as the input's field: a URL, an empty value that clears, or no change.
fn url_field(url: Option<String>, clear: bool) -> Option<String> {
    if clear { Some(String::new()) } else { url }
}

/// The text of `--robots-file`, read up to one byte past the largest allowed.
fn robots_file(path: &PathBuf) -> CliResult<String> {
    let named = |why: String| CliError::usage(format!("--robots-file {}: {why}", path.display()));
    let file = std::fs::File::open(path).map_err(|e| named(e.to_string()))?;
    let mut bytes = Vec::new();
    file.take(ROBOTS_MAX as u64 + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| named(e.to_string()))?;
    let text = String::from_utf8(bytes).map_err(|_| named("is not UTF-8 text".into()))?;
    validate_robots_txt(&text).map_err(named)?;
    Ok(text)
}

impl UpdateArgs {
    fn input(&self) -> CliResult<DomainInput> {
        let input = DomainInput {
            root_url: url_field(self.root_url.clone(), self.no_root_url),
            unknown_url: url_field(self.unknown_url.clone(), self.no_unknown_url),
            expired_url: url_field(self.expired_url.clone(), self.no_expired_url),
            robots: self.robots.clone(),
            robots_txt: self.robots_file.as_ref().map(robots_file).transpose()?,
        };
        if input == DomainInput::default() {
            return Err(CliError::usage(
                "nothing to change: give at least one setting, such as --root-url or --robots \
                 (see `linkdeck domains update --help`)",
            ));
        }
        Ok(input)
    }
}

/// A fallback as the list shows it: the URL, or `-` for linkdeck's own page.
fn shown_url(url: &Option<String>) -> String {
    url.clone().unwrap_or_else(|| "-".into())
}

fn list_table(domains: &[Domain], ctx: &Context) -> Table {
    let mut table = Table::new(&[
        ("ID", 10, true),
        ("NAME", 40, false),
        ("ROOT", 30, false),
        ("UNKNOWN", 30, false),
        ("EXPIRED", 30, false),
        ("ROBOTS", 8, false),
        ("ADDED", 10, false),
    ]);
    for d in domains {
        // A server without them (phpShort) shows none.
        let settings = match &d.settings {
            Some(s) => vec![
                shown_url(&s.root_url),
                shown_url(&s.unknown_url),
                shown_url(&s.expired_url),
                s.robots.word().to_owned(),
            ],
            None => vec!["?".into(); 4],
        };
        let mut row = vec![d.id.to_string(), d.name.clone()];
        row.extend(settings);
        row.push(date(d.created_at, ctx.timezone()));
        table.row(row);
    }
    table
}

pub async fn run(ctx: &Context, command: DomainsCommand) -> CliResult {
    match command {
        DomainsCommand::List => {
            let backend = ctx.backend().await?;
            let domains = all_domains(backend.as_ref()).await?;
            if ctx.json {
                return Ok(print_json(&domains)?);
            }
            if domains.is_empty() {
                return Ok(print(
                    "no domains: links use the profile's public_url (add one with `linkdeck domains add`)",
                )?);
            }
            Ok(print(&list_table(&domains, ctx).render())?)
        }
        DomainsCommand::Update(args) => {
            let input = args.input()?;
            let backend = ctx.backend().await?;
            let id = domain_id(backend.as_ref(), &args.domain).await?;
            let domain = backend.update_domain(id, &input).await?;
            if ctx.json {
                Ok(print_json(&domain)?)
            } else {
                Ok(print(&format!(
                    "updated domain {} {}",
                    domain.id, domain.name
                ))?)
            }
        }
        DomainsCommand::Add { name } => {
            ctx.writable("domains add")?;
            let backend = ctx.local("domains add").await?;
            let domain = backend.add_domain(&name).await?;
            if ctx.json {
                Ok(print_json(&domain)?)
            } else {
                Ok(print(&format!(
                    "added domain {} {}",
                    domain.id, domain.name
                ))?)
            }
        }
        DomainsCommand::Remove { domain } => {
            ctx.writable("domains remove")?;
            let backend = ctx.local("domains remove").await?;
            let id = domain_id(&backend, &domain).await?;
            backend.remove_domain(id).await?;
            if ctx.json {
                Ok(print_json(
                    &json!({"id": id, "object": "domain", "deleted": true}),
                )?)
            } else {
                Ok(print(&format!("removed domain {id}"))?)
            }
        }
    }
}
