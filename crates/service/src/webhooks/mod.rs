//! Webhooks: subscriptions an owner makes, each with its signing secret, and the deliverer that
//! sends their outbox (`deliver.rs`). See docs/WEBHOOKS.md.
//!
//! A signing secret must be known to the sender, so it cannot be kept as a digest the way API
//! keys are. It is not kept at all: each subscription's secret is derived by HMAC-SHA256 from
//! the server's webhook key (read from the environment or a file only its owner can read, never
//! the database) and a random input the database holds. A copy of the database alone cannot
//! sign; rotating an input (`webhooks secret --rotate`) gives a subscription a new secret, and
//! a new key gives every subscription one.

mod deliver;

use base64::Engine;
use base64::engine::general_purpose::STANDARD as BASE64;
use hmac::{Hmac, Mac};
use jiff::Timestamp;
pub use linkdeck_domain::{Delivery, Webhook};
use linkdeck_domain::{Error, Id, Result, WebhookEvent, WebhookInput, validate_webhook_input};
use linkdeck_store::Tx;
use linkdeck_store::webhooks::queue_link_event;
use rand::Rng;
use sha2::Sha256;

use super::LocalService;
use super::public_address::is_public;

pub use deliver::{Deliverer, DeliveryPolicy};

/// Every secret starts with this (Standard Webhooks' spelling), then the key in base64.
pub const SECRET_PREFIX: &str = "whsec_";

/// Bytes a webhook key has at least.
pub const KEY_MIN_BYTES: usize = 32;

/// The server's webhook key, which every subscription's secret is derived from. Never shown.
#[derive(Clone)]
pub struct WebhookKey(Vec<u8>);

impl std::fmt::Debug for WebhookKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("WebhookKey(..)")
    }
}

impl WebhookKey {
    /// A key of these bytes; at least [`KEY_MIN_BYTES`] of them.
    pub fn new(bytes: Vec<u8>) -> Result<WebhookKey> {
        if bytes.len() < KEY_MIN_BYTES {
            return Err(Error::Unavailable(format!(
                "a webhook key has at least {KEY_MIN_BYTES} bytes"
            )));
        }
        Ok(WebhookKey(bytes))
    }

    /// A new random key, in the text form a key file holds (64 hexadecimal digits).
    pub fn generate_text() -> String {
        let bytes: [u8; 32] = rand::rng().random();
        bytes.iter().map(|b| format!("{b:02x}")).collect()
    }

    /// The key a key file or the environment gives: its text, surrounding whitespace aside.
    pub fn from_text(text: &str) -> Result<WebhookKey> {
        WebhookKey::new(text.trim().as_bytes().to_vec())
    }

    /// The signing secret of subscription `id` whose derivation input is `salt`.
    fn secret(&self, id: Id, salt: &str) -> [u8; 32] {
        let mut mac = hmac_of(&self.0);
        mac.update(b"linkdeck webhook secret v1\0");
        mac.update(id.to_string().as_bytes());
        mac.update(b"\0");
        mac.update(salt.as_bytes());
        mac.finalize().into_bytes().into()
    }
}

fn hmac_of(key: &[u8]) -> Hmac<Sha256> {
    // HMAC takes a key of any length.
    Hmac::<Sha256>::new_from_slice(key).expect("HMAC takes any key length")
}

/// A secret as a receiver is given it: `whsec_` and the key in base64.
fn secret_text(secret: &[u8]) -> String {
    format!("{SECRET_PREFIX}{}", BASE64.encode(secret))
}

/// The `webhook-signature` header of a message: Standard Webhooks' `v1,` and the base64
/// HMAC-SHA256, under `secret`, of `{id}.{timestamp}.{body}`.
pub fn signature(secret: &[u8], msg_id: &str, timestamp: i64, body: &str) -> String {
    let mut mac = hmac_of(secret);
    mac.update(format!("{msg_id}.{timestamp}.").as_bytes());
    mac.update(body.as_bytes());
    format!("v1,{}", BASE64.encode(mac.finalize().into_bytes()))
}

fn new_salt() -> String {
    let bytes: [u8; 16] = rand::rng().random();
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// Whether `url`'s host is written as an address that is not public, or is `localhost`: what
/// can be refused before anything is resolved. (Names are checked again, resolved, at every
/// delivery.)
fn names_a_private_host(url: &str) -> bool {
    let Ok(url) = url::Url::parse(url) else {
        return false;
    };
    match url.host() {
        Some(url::Host::Ipv4(ip)) => !is_public(ip.into()),
        Some(url::Host::Ipv6(ip)) => !is_public(ip.into()),
        Some(url::Host::Domain(name)) => {
            let name = name.trim_end_matches('.').to_ascii_lowercase();
            name == "localhost" || name.ends_with(".localhost")
        }
        None => false,
    }
}

/// The refusal of a receiver on a loopback, private or link-local address.
pub const PRIVATE_REFUSED: &str = "is a loopback, private or link-local address; \
     the operator allows those with `[serve] webhooks_allow_private = true`";

/// Queues `event` about each of the links `ids` of `owner`, in the transaction that changed
/// them; nothing is read when no subscription wants it.
pub(crate) fn link_events(
    tx: &dyn Tx,
    owner: Id,
    ids: impl IntoIterator<Item = Id>,
    event: WebhookEvent,
    now: Timestamp,
) -> Result<()> {
    if tx.webhooks_wanting(owner, event)?.is_empty() {
        return Ok(());
    }
    for id in ids {
        queue_link_event(tx, owner, id, event, now)?;
    }
    Ok(())
}

/// A subscription of `owner` (any owner's, for `None`), or not found.
fn owned(tx: &dyn Tx, id: Id, owner: Option<Id>) -> Result<Webhook> {
    tx.webhook(id)?
        .filter(|w| owner.is_none_or(|o| o == w.owner_id))
        .ok_or_else(|| Error::not_found(format!("webhook {id}")))
}

impl LocalService {
    /// Creates a subscription of `owner`; answers it with its secret, shown here and on an
    /// explicit [`LocalService::webhook_secret`] only. A receiver on a loopback, private or
    /// link-local address is refused unless `allow_private`.
    pub async fn create_webhook(
        &self,
        owner: Id,
        input: &WebhookInput,
        key: &WebhookKey,
        allow_private: bool,
    ) -> Result<(String, Webhook)> {
        let (url, events) = validate_webhook_input(input)?;
        if !allow_private && names_a_private_host(&url) {
            return Err(Error::field("url", PRIVATE_REFUSED));
        }
        let salt = new_salt();
        let now = self.now();
        let hook = self
            .store
            .write(move |tx| {
                if tx.owner(owner)?.is_none() {
                    return Err(Error::not_found(format!("owner {owner}")));
                }
                let id = tx.insert_webhook(owner, &url, &events, &salt, now)?;
                if events.contains(&WebhookEvent::Expired) {
                    // Links expired already are not news to a new subscription.
                    tx.mark_expired(owner, now, u32::MAX)?;
                }
                Ok((owned(tx, id, None)?, salt))
            })
            .await?;
        Ok((secret_text(&key.secret(hook.0.id, &hook.1)), hook.0))
    }

    /// Every subscription (of one owner, when given), oldest first.
    pub async fn list_webhooks(&self, owner: Option<Id>) -> Result<Vec<Webhook>> {
        self.store.read(move |tx| tx.webhooks(owner)).await
    }

    /// One subscription (of `owner`, when given).
    pub async fn webhook(&self, id: Id, owner: Option<Id>) -> Result<Webhook> {
        self.store.read(move |tx| owned(tx, id, owner)).await
    }

    /// Deletes a subscription and its deliveries, sent or waiting.
    pub async fn delete_webhook(&self, id: Id, owner: Option<Id>) -> Result<()> {
        self.store
            .write(move |tx| {
                owned(tx, id, owner)?;
                tx.delete_webhook(id).map(|_| ())
            })
            .await
    }

    /// Starts a stopped subscription again: its failures are forgotten and what waits in its
    /// outbox is sent.
    pub async fn resume_webhook(&self, id: Id, owner: Option<Id>) -> Result<Webhook> {
        self.store
            .write(move |tx| {
                owned(tx, id, owner)?;
                tx.set_webhook_stopped(id, None)?;
                owned(tx, id, owner)
            })
            .await
    }

    /// The subscription's signing secret; a new one first when `rotate`.
    pub async fn webhook_secret(
        &self,
        id: Id,
        owner: Option<Id>,
        key: &WebhookKey,
        rotate: bool,
    ) -> Result<String> {
        let fresh = new_salt();
        let salt = self
            .store
            .write(move |tx| {
                owned(tx, id, owner)?;
                if rotate {
                    tx.set_webhook_salt(id, &fresh)?;
                }
                tx.webhook_salt(id)?
                    .ok_or_else(|| Error::not_found(format!("webhook {id}")))
            })
            .await?;
        Ok(secret_text(&key.secret(id, &salt)))
    }

    /// The last `limit` deliveries of a subscription, newest first.
    pub async fn webhook_deliveries(
        &self,
        id: Id,
        owner: Option<Id>,
        limit: u32,
    ) -> Result<Vec<Delivery>> {
        self.store
            .read(move |tx| {
                owned(tx, id, owner)?;
                tx.deliveries(id, limit)
            })
            .await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The example of the Standard Webhooks specification.
    #[test]
    fn signatures_match_the_specification() {
        let secret = BASE64.decode("MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw").unwrap();
        assert_eq!(
            signature(
                &secret,
                "msg_p5jXN8AQM9LWM0D4loKWxJek",
                1614265330,
                r#"{"test": 2432232314}"#
            ),
            "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE="
        );
    }

    #[test]
    fn secrets_depend_on_key_subscription_and_input() {
        let key = WebhookKey::from_text(&WebhookKey::generate_text()).unwrap();
        let other = WebhookKey::from_text(&WebhookKey::generate_text()).unwrap();
        let a = key.secret(1, "salt");
        assert_eq!(a, key.secret(1, "salt"));
        assert_ne!(a, key.secret(2, "salt"));
        assert_ne!(a, key.secret(1, "pepper"));
        assert_ne!(a, other.secret(1, "salt"));
        assert!(secret_text(&a).starts_with("whsec_"));
        assert!(WebhookKey::from_text("short").is_err());
        assert_eq!(format!("{key:?}"), "WebhookKey(..)");
    }

    #[test]
    fn private_hosts_are_seen_before_resolving() {
        for url in [
            "http://127.0.0.1:9000/in",
            "http://[::1]/",
            "http://10.0.0.8/",
            "http://169.254.169.254/latest",
            "http://localhost:8080/",
            "http://api.localhost./",
        ] {
            assert!(names_a_private_host(url), "{url}");
        }
        assert!(!names_a_private_host("https://hooks.example.com/in"));
        assert!(!names_a_private_host("http://8.8.8.8/"));
    }
}
