//! `linkdeck keys create|list|revoke`: API keys of the embedded service (local profiles only).
//! A new key is printed once and never again; only its digest is stored.

use clap::Subcommand;
use serde_json::json;

use super::context::Context;
use super::error::CliResult;
use super::output::{Table, date, print, print_json};
use crate::backend::local::DEFAULT_OWNER;
use crate::domain::Id;

#[derive(Debug, Subcommand)]
pub enum KeysCommand {
    /// Create a key for the owner given with --owner (the default owner otherwise) and print
    /// it: only the key on standard output, so `KEY=$(linkdeck keys create --owner bob)` works.
    Create {
        /// A label to tell keys apart in `keys list`.
        #[arg(long)]
        name: Option<String>,
    },
    /// List keys (of --owner, when given): id, owner, label, first characters, dates.
    #[command(visible_alias = "ls")]
    List,
    /// Revoke a key at once.
    Revoke {
        /// The key's id from `keys list`.
        id: Id,
    },
}

pub async fn run(ctx: &Context, command: KeysCommand) -> CliResult {
    if !matches!(command, KeysCommand::List) {
        ctx.writable("keys")?;
    }
    let service = ctx.service("keys").await?;
    match command {
        KeysCommand::Create { name } => {
            let owner = match &ctx.owner {
                Some(name) => service.owner_by_name(name).await?,
                None => {
                    service.default_backend().await?;
                    service.owner_by_name(DEFAULT_OWNER).await?
                }
            };
            let (key, info) = service.create_key(owner.id, name.as_deref()).await?;
            if ctx.json {
                Ok(print_json(
                    &json!({ "key": key, "id": info.id, "owner": info.owner }),
                )?)
            } else {
                Ok(print(&format!("{key}\n"))?)
            }
        }
        KeysCommand::List => {
            let owner = match &ctx.owner {
                Some(name) => Some(service.owner_by_name(name).await?.id),
                None => None,
            };
            let keys = service.list_keys(owner).await?;
            if ctx.json {
                return Ok(print_json(&keys)?);
            }
            let tz = ctx.timezone();
            let mut table = Table::new(&[
                ("ID", 6, true),
                ("OWNER", 16, false),
                ("NAME", 20, false),
                ("KEY", 12, false),
                ("CREATED", 10, false),
                ("LAST USED", 10, false),
                ("REVOKED", 10, false),
            ]);
            for k in &keys {
                table.row(vec![
                    k.id.to_string(),
                    k.owner.clone(),
                    k.name.clone().unwrap_or_default(),
                    format!("{}…", k.prefix),
                    date(k.created_at, tz),
                    k.last_used_at
                        .map(|t| date(t, tz))
                        .unwrap_or_else(|| "never".into()),
                    k.revoked_at.map(|t| date(t, tz)).unwrap_or_default(),
                ]);
            }
            Ok(print(&table.render())?)
        }
        KeysCommand::Revoke { id } => {
            let info = service.revoke_key(id).await?;
            if ctx.json {
                Ok(print_json(&info)?)
            } else {
                Ok(print(&format!(
                    "revoked key {} ({}…) of {}\n",
                    info.id, info.prefix, info.owner
                ))?)
            }
        }
    }
}
