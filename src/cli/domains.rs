//! `linkdeck domains list|add|remove`. Adding and removing are for the embedded service; a
//! remote server manages its own domains.

use clap::Subcommand;
use serde_json::json;

use super::context::Context;
use super::error::CliResult;
use super::lookup::{all_domains, domain_id};
use super::output::{Table, date, print, print_json};

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
    /// Remove a domain (local profiles only).
    #[command(visible_alias = "rm")]
    Remove {
        /// The domain's id or name.
        domain: String,
    },
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
            let mut table =
                Table::new(&[("ID", 10, true), ("NAME", 60, false), ("ADDED", 10, false)]);
            for d in &domains {
                table.row(vec![
                    d.id.to_string(),
                    d.name.clone(),
                    date(d.created_at, ctx.timezone()),
                ]);
            }
            Ok(print(&table.render())?)
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
