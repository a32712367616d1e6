//! `linkdeck owners add|list`: the accounts of the embedded service (local profiles only).

use clap::Subcommand;

use super::context::Context;
use super::error::CliResult;
use super::output::{Table, date, print, print_json};

#[derive(Debug, Subcommand)]
pub enum OwnersCommand {
    /// Add an owner; act as it with --owner NAME.
    Add {
        /// 1 to 64 characters, unique.
        name: String,
    },
    /// List the owners.
    #[command(visible_alias = "ls")]
    List,
}

pub async fn run(ctx: &Context, command: OwnersCommand) -> CliResult {
    match command {
        OwnersCommand::Add { name } => {
            ctx.writable("owners add")?;
            let service = ctx.service("owners add").await?;
            let owner = service.add_owner(&name).await?;
            if ctx.json {
                Ok(print_json(&owner)?)
            } else {
                Ok(print(&format!("added owner {} {}", owner.id, owner.name))?)
            }
        }
        OwnersCommand::List => {
            let service = ctx.service("owners list").await?;
            // The default owner exists once anything has run; make sure it is listed.
            service.default_backend().await?;
            let owners = service.list_owners().await?;
            if ctx.json {
                return Ok(print_json(&owners)?);
            }
            let mut table =
                Table::new(&[("ID", 10, true), ("NAME", 64, false), ("ADDED", 10, false)]);
            for o in &owners {
                table.row(vec![
                    o.id.to_string(),
                    o.name.clone(),
                    date(o.created_at, ctx.timezone()),
                ]);
            }
            Ok(print(&table.render())?)
        }
    }
}
