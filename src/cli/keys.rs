//! `linkdeck keys create|list|revoke`: API keys of the embedded service (local profiles only).
//! A new key is printed once and never again; only its digest is stored.

use clap::{Subcommand, ValueEnum};
use serde_json::json;

use super::context::Context;
use super::error::CliResult;
use super::output::{Table, date, print, print_json};
use crate::backend::Backend;
use crate::backend::local::{DEFAULT_OWNER, KeyGrant, KeyInfo, LocalService};
use crate::domain::{Error, Id, SPACE_SET_MAX, SpaceSet};

#[derive(Debug, Subcommand)]
pub enum KeysCommand {
    /// Create a key for the owner given with --owner (the default owner otherwise) and print
    /// it: only the key on standard output, so `KEY=$(linkdeck keys create --owner bob)` works.
    Create {
        /// A label to tell keys apart in `keys list`.
        #[arg(long)]
        name: Option<String>,
        /// What the key may do: full, or read (the server refuses it every request that
        /// changes data).
        #[arg(long, value_enum, default_value_t = Access::Full)]
        access: Access,
        /// When the key stops working: a date (YYYY-MM-DD, when that day begins in the
        /// profile's time zone) or a number of days from now (30d).
        #[arg(long, value_name = "DATE|DAYSd", value_parser = parse_expires)]
        expires: Option<Expires>,
        /// Limit the key to a space (its name or id; repeat for several, at most 8): it sees
        /// and changes only links there, and nothing of the account as a whole.
        #[arg(long = "space", value_name = "SPACE")]
        spaces: Vec<String>,
    },
    /// List keys (of --owner, when given): id, owner, label, first characters, dates, what
    /// each may do and the spaces it is limited to.
    #[command(visible_alias = "ls")]
    List,
    /// Revoke a key at once.
    Revoke {
        /// The key's id from `keys list`.
        id: Id,
    },
}

/// The spaces named by `--space` (names or ids), `None` when none is named.
async fn limited_to(backend: &dyn Backend, named: &[String]) -> CliResult<Option<SpaceSet>> {
    if named.is_empty() {
        return Ok(None);
    }
    let mut ids = Vec::with_capacity(named.len());
    for space in named {
        ids.push(super::lookup::space_id(backend, space).await?);
    }
    let too_many = || {
        Error::field(
            "spaces",
            format!("a key can be limited to at most {SPACE_SET_MAX} spaces"),
        )
    };
    Ok(Some(SpaceSet::new(ids).ok_or_else(too_many)?))
}

/// The spaces a key is limited to, by name (`all` when it is not), for the list.
async fn spaces_of(service: &LocalService, key: &KeyInfo) -> String {
    let Some(spaces) = key.spaces else {
        return "all".into();
    };
    let backend = service.for_owner(key.owner_id);
    let mut names = Vec::new();
    for &id in spaces.ids() {
        names.push(match backend.show_space(id).await {
            Ok(space) => space.name,
            Err(_) => format!("{id} (gone)"),
        });
    }
    names.join(", ")
}

pub async fn run(ctx: &Context, command: KeysCommand) -> CliResult {
    if !matches!(command, KeysCommand::List) {
        ctx.writable("keys")?;
    }
    let service = ctx.service("keys").await?;
    match command {
        KeysCommand::Create {
            name,
            access,
            expires,
            spaces,
        } => {
            let owner = match &ctx.owner {
                Some(name) => service.owner_by_name(name).await?,
                None => {
                    service.default_backend().await?;
                    service.owner_by_name(DEFAULT_OWNER).await?
                }
            };
            let spaces = limited_to(&service.for_owner(owner.id), &spaces).await?;
            let grant = KeyGrant {
                read_only: access == Access::Read,
                expires_at: expires
                    .map(|e| e.at(jiff::Timestamp::now(), ctx.timezone()))
                    .transpose()?,
                spaces,
            };
            let (key, info) = service
                .create_key_with(owner.id, name.as_deref(), grant)
                .await?;
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
                ("ACCESS", 9, false),
                ("EXPIRES", 10, false),
                ("REVOKED", 10, false),
                ("SPACES", 30, false),
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
                    if k.read_only { "read" } else { "full" }.into(),
                    k.expires_at.map(|t| date(t, tz)).unwrap_or_default(),
                    k.revoked_at.map(|t| date(t, tz)).unwrap_or_default(),
                    spaces_of(&service, k).await,
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

/// `--access`: what a new key may do.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Access {
    Full,
    Read,
}

/// `--expires`: a date, or days from now.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Expires {
    On(jiff::civil::Date),
    InDays(u16),
}

impl Expires {
    /// The moment the key stops working: the start of the date in `tz`, or `days` after `now`.
    fn at(self, now: jiff::Timestamp, tz: &jiff::tz::TimeZone) -> Result<jiff::Timestamp, Error> {
        let moment = match self {
            Expires::On(date) => date.to_zoned(tz.clone()).map(|z| z.timestamp()),
            Expires::InDays(days) => {
                now.checked_add(jiff::SignedDuration::from_hours(24 * i64::from(days)))
            }
        };
        moment.map_err(|e| Error::field("expires", format!("cannot be used: {e}")))
    }
}

fn parse_expires(s: &str) -> Result<Expires, String> {
    let s = s.trim();
    if let Some(days) = s.strip_suffix('d') {
        return match days.parse::<u16>() {
            Ok(n) if (1..=3660).contains(&n) => Ok(Expires::InDays(n)),
            _ => Err("days must be a whole number from 1 to 3660, as in 30d".into()),
        };
    }
    s.parse::<jiff::civil::Date>()
        .map(Expires::On)
        .map_err(|_| "expected a date (YYYY-MM-DD) or a number of days (30d)".into())
}
