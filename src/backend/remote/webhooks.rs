//! Webhook subscriptions on a remote server: a linkdeck server that says so in its
//! capabilities keeps them under linkdeck's own API (`wire::linkdeck::WEBHOOKS_PATH`), acting on
//! the API key's owner's; any other server (a phpShort site, an older linkdeck) keeps none, and
//! is told apart before anything is sent, so it is answered with that rather than a 404.

use reqwest::Method;
use serde::de::DeserializeOwned;

use super::RemoteBackend;
use super::body::Limit;
use super::decode;
use super::errors;
use super::http::{Api, Body, Call};
use crate::domain::{Delivery, Error, Id, Result, Webhook, WebhookActivity, WebhookInput};
use crate::wire::linkdeck::WEBHOOKS_PATH;

/// What `POST webhooks` answers: the subscription, and its secret shown this once.
#[derive(serde::Deserialize)]
struct Created {
    webhook: Webhook,
    secret: String,
}

/// What `POST webhooks/{id}/secret` answers.
#[derive(serde::Deserialize)]
struct Secret {
    secret: String,
}

/// One request under `webhooks`: where, what is sent, and how errors name it.
struct HookCall<'a> {
    method: Method,
    path: String,
    query: &'a [(&'static str, String)],
    body: Body,
    record: &'a str,
}

impl RemoteBackend {
    /// Whether the server keeps webhooks (a linkdeck server new enough to say so).
    async fn keeps_webhooks(&self) -> Result<bool> {
        Ok(self.linkdeck().await?.is_some_and(|caps| caps.webhooks))
    }

    /// What a server without webhooks is answered, saying which kind of server it is.
    async fn no_webhooks(&self) -> Result<Error> {
        let origin = self.http.origin();
        Ok(Error::Unsupported(match self.linkdeck().await? {
            Some(caps) => format!(
                "{origin} (linkdeck {}) keeps no webhooks; a newer linkdeck serve does",
                caps.version
            ),
            None => format!(
                "{origin} keeps no webhooks (a phpShort server has none; linkdeck serve does)"
            ),
        }))
    }

    /// Refuses what needs the server's webhook key (making a subscription, its secret) when the
    /// server says it has none; a server too old to say is asked, and answers for itself.
    pub(super) async fn needs_key(&self) -> Result<()> {
        if self
            .linkdeck()
            .await?
            .is_some_and(|caps| caps.webhooks && caps.webhook_key == Some(false))
        {
            return Err(Error::Unsupported(format!(
                "{} keeps no webhook key, so it cannot {}",
                self.http.origin(),
                crate::wire::linkdeck::NO_WEBHOOK_KEY
            )));
        }
        Ok(())
    }

    /// Sends `call` to a server that keeps webhooks and reads the record it answers.
    async fn hook_call<T: DeserializeOwned>(&self, call: HookCall<'_>) -> Result<T> {
        if !self.keeps_webhooks().await? {
            return Err(self.no_webhooks().await?);
        }
        let body = self
            .http
            .send(Call {
                method: call.method,
                api: Api::Linkdeck,
                path: &call.path,
                query: call.query,
                body: call.body,
                record: Some(call.record),
                limit: Limit::Page,
            })
            .await?;
        decode::record(&body, |data| {
            serde_json::from_value::<T>(data.clone()).map_err(|e| e.to_string())
        })
        .map_err(|problem| {
            errors::unreadable(self.subject(Some(call.record)), call.record, &problem)
        })
    }

    fn get<'a>(path: String, record: &'a str, query: &'a [(&'static str, String)]) -> HookCall<'a> {
        HookCall {
            method: Method::GET,
            path,
            query,
            body: Body::None,
            record,
        }
    }

    fn post(path: String, record: &str) -> HookCall<'_> {
        HookCall {
            method: Method::POST,
            ..Self::get(path, record, &[])
        }
    }

    /// The key's owner's subscriptions.
    pub async fn list_webhooks(&self) -> Result<Vec<Webhook>> {
        self.hook_call(Self::get(WEBHOOKS_PATH.to_owned(), "the webhooks", &[]))
            .await
    }

    pub async fn webhook(&self, id: Id) -> Result<Webhook> {
        let record = format!("webhook {id}");
        self.hook_call(Self::get(format!("{WEBHOOKS_PATH}/{id}"), &record, &[]))
            .await
    }

    /// Subscription `id`'s latest `limit` deliveries, newest first.
    pub async fn webhook_deliveries(&self, id: Id, limit: u32) -> Result<Vec<Delivery>> {
        let record = format!("webhook {id}");
        let query = [("limit", limit.to_string())];
        let path = format!("{WEBHOOKS_PATH}/{id}/deliveries");
        self.hook_call(Self::get(path, &record, &query)).await
    }

    /// Makes a subscription for the key's owner: its signing secret, shown this once, and it.
    /// The server checks the input (its 422 names `url` or `events`).
    pub async fn create_webhook(&self, input: &WebhookInput) -> Result<(String, Webhook)> {
        self.needs_key().await?;
        let body = serde_json::to_vec(input)
            .map_err(|e| Error::field("request", format!("cannot be encoded: {e}")))?;
        let created: Created = self
            .hook_call(HookCall {
                body: Body::Json(body),
                ..Self::post(WEBHOOKS_PATH.to_owned(), "the new webhook")
            })
            .await?;
        Ok((created.secret, created.webhook))
    }

    pub async fn delete_webhook(&self, id: Id) -> Result<()> {
        let record = format!("webhook {id}");
        let _: serde_json::Value = self
            .hook_call(HookCall {
                method: Method::DELETE,
                ..Self::get(format!("{WEBHOOKS_PATH}/{id}"), &record, &[])
            })
            .await?;
        Ok(())
    }

    /// Starts a stopped subscription again.
    pub async fn resume_webhook(&self, id: Id) -> Result<Webhook> {
        let record = format!("webhook {id}");
        self.hook_call(Self::post(format!("{WEBHOOKS_PATH}/{id}/resume"), &record))
            .await
    }

    /// Subscription `id`'s signing secret; a new one first with `rotate`.
    pub async fn webhook_secret(&self, id: Id, rotate: bool) -> Result<String> {
        self.needs_key().await?;
        let record = format!("webhook {id}");
        let query = [("rotate", rotate.to_string())];
        let secret: Secret = self
            .hook_call(HookCall {
                query: &query,
                ..Self::post(format!("{WEBHOOKS_PATH}/{id}/secret"), &record)
            })
            .await?;
        Ok(secret.secret)
    }

    /// The subscriptions with their latest `recent` deliveries each, for the app; `None` from a
    /// server that keeps none.
    pub(super) async fn webhook_activity(
        &self,
        recent: u32,
    ) -> Result<Option<Vec<WebhookActivity>>> {
        if !self.keeps_webhooks().await? {
            return Ok(None);
        }
        let mut out = Vec::new();
        for hook in self.list_webhooks().await? {
            let deliveries = self.webhook_deliveries(hook.id, recent).await?;
            out.push((hook, deliveries));
        }
        Ok(Some(out))
    }
}
