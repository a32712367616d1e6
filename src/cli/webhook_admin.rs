//! Where `linkdeck webhooks` makes and reads subscriptions, chosen once from the profile: the
//! embedded service of a local database (for `--owner`, else every owner's, new ones the default
//! owner's), or a remote `linkdeck serve` through its API (the API key's owner's). The commands
//! see one set of calls either way, with the same records.

use super::context::Context;
use super::error::{CliError, CliResult};
use crate::backend::local::webhooks::{Delivery, Webhook};
use crate::backend::local::{DEFAULT_OWNER, LocalService};
use crate::backend::remote::RemoteBackend;
use crate::config::webhook_key::webhook_key;
use crate::domain::{Id, WebhookInput};

pub enum WebhookAdmin<'a> {
    Local {
        ctx: &'a Context,
        service: LocalService,
        /// The owner named by --owner, if any.
        owner: Option<Id>,
    },
    Remote(RemoteBackend),
}

impl<'a> WebhookAdmin<'a> {
    pub async fn open(ctx: &'a Context) -> CliResult<WebhookAdmin<'a>> {
        if let Some(remote) = ctx.remote()? {
            return Ok(WebhookAdmin::Remote(remote));
        }
        let service = ctx.service("webhooks").await?;
        let owner = match &ctx.owner {
            Some(name) => Some(service.owner_by_name(name).await?.id),
            None => None,
        };
        Ok(WebhookAdmin::Local {
            ctx,
            service,
            owner,
        })
    }

    pub async fn list(&self) -> CliResult<Vec<Webhook>> {
        Ok(match self {
            Self::Local { service, owner, .. } => service.list_webhooks(*owner).await?,
            Self::Remote(remote) => remote.list_webhooks().await?,
        })
    }

    pub async fn show(&self, id: Id) -> CliResult<Webhook> {
        Ok(match self {
            Self::Local { service, owner, .. } => service.webhook(id, *owner).await?,
            Self::Remote(remote) => remote.webhook(id).await?,
        })
    }

    pub async fn deliveries(&self, id: Id, limit: u32) -> CliResult<Vec<Delivery>> {
        Ok(match self {
            Self::Local { service, owner, .. } => {
                service.webhook_deliveries(id, *owner, limit).await?
            }
            Self::Remote(remote) => remote.webhook_deliveries(id, limit).await?,
        })
    }

    /// The new subscription and its secret.
    pub async fn create(&self, input: &WebhookInput) -> CliResult<(String, Webhook)> {
        Ok(match self {
            Self::Local {
                ctx,
                service,
                owner,
            } => {
                let owner = match owner {
                    Some(id) => *id,
                    None => {
                        service.default_backend().await?;
                        service.owner_by_name(DEFAULT_OWNER).await?.id
                    }
                };
                let allow_private = ctx.config.serve.webhooks_allow_private;
                service
                    .create_webhook(owner, input, &key(ctx)?, allow_private)
                    .await?
            }
            Self::Remote(remote) => remote.create_webhook(input).await?,
        })
    }

    pub async fn delete(&self, id: Id) -> CliResult {
        match self {
            Self::Local { service, owner, .. } => service.delete_webhook(id, *owner).await?,
            Self::Remote(remote) => remote.delete_webhook(id).await?,
        }
        Ok(())
    }

    pub async fn resume(&self, id: Id) -> CliResult<Webhook> {
        Ok(match self {
            Self::Local { service, owner, .. } => service.resume_webhook(id, *owner).await?,
            Self::Remote(remote) => remote.resume_webhook(id).await?,
        })
    }

    pub async fn secret(&self, id: Id, rotate: bool) -> CliResult<String> {
        Ok(match self {
            Self::Local {
                ctx,
                service,
                owner,
            } => {
                service
                    .webhook_secret(id, *owner, &key(ctx)?, rotate)
                    .await?
            }
            Self::Remote(remote) => remote.webhook_secret(id, rotate).await?,
        })
    }
}

/// The key secrets are derived from, read only by the calls that sign: reading it may write it
/// the first time, which a listing should not.
fn key(ctx: &Context) -> CliResult<crate::backend::local::webhooks::WebhookKey> {
    webhook_key(&ctx.config.serve, &ctx.paths).map_err(CliError::failure)
}
