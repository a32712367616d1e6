//! The deliverer `linkdeck serve` runs: it claims what is due in the outbox, sends each
//! delivery signed, and records how it went — a retry after a growing delay, or a subscription
//! stopped once it has failed long enough. It also tells of links that expired, which no write
//! does at the moment it happens. At least once: a delivery is marked sent only after its
//! receiver answered 2xx, so one whose sender died mid-way is sent again once its claim lapses.

use std::sync::Arc;
use std::time::{Duration, Instant};

use jiff::{SignedDuration, Timestamp};
use linkdeck_domain::{Result, WebhookEvent, excerpt};
use linkdeck_store::webhooks::{Claimed, Webhook, queue_link_event};

use super::{WebhookKey, signature};
use crate::LocalService;
use crate::public_address::{pinned, reachable};

/// How deliveries are tried and when a subscription is given up.
#[derive(Debug, Clone)]
pub struct DeliveryPolicy {
    /// The wait after each failed attempt, in order; the last repeats.
    pub delays: Vec<Duration>,
    /// A subscription stops once this many deliveries failed in a row…
    pub stop_after_failures: u32,
    /// …and its failures have gone on at least this long.
    pub stop_after: Duration,
    /// One attempt, connection to answer.
    pub timeout: Duration,
    /// Whether receivers on loopback, private and link-local addresses are reached.
    pub allow_private: bool,
    /// How often the outbox is looked at when it had nothing due.
    pub poll: Duration,
    /// How often expired links are looked for.
    pub sweep: Duration,
    /// How long delivered deliveries are kept to be read.
    pub keep: Duration,
}

impl Default for DeliveryPolicy {
    fn default() -> Self {
        let minutes = |m: u64| Duration::from_secs(60 * m);
        DeliveryPolicy {
            // An outage of an hour is survived: the sixth attempt comes 43 minutes in, the
            // seventh an hour later, and so on hourly.
            delays: vec![
                Duration::from_secs(5),
                Duration::from_secs(30),
                minutes(2),
                minutes(10),
                minutes(30),
                minutes(60),
            ],
            stop_after_failures: 10,
            stop_after: minutes(24 * 60),
            timeout: Duration::from_secs(10),
            allow_private: false,
            poll: Duration::from_millis(500),
            sweep: Duration::from_secs(10),
            keep: minutes(7 * 24 * 60),
        }
    }
}

impl DeliveryPolicy {
    /// The wait after a delivery's `attempts`-th failed attempt.
    pub fn delay(&self, attempts: u32) -> Duration {
        let at = (attempts.max(1) - 1) as usize;
        self.delays
            .get(at)
            .or(self.delays.last())
            .copied()
            .unwrap_or(Duration::from_secs(60))
    }

    /// Whether `hook`, after a failure at `now`, has failed long enough to stop.
    fn gives_up(&self, hook: &Webhook, now: Timestamp) -> bool {
        hook.stopped_at.is_none()
            && hook.failures >= self.stop_after_failures
            && hook.failing_since.is_some_and(|since| {
                now.duration_since(since)
                    >= SignedDuration::try_from(self.stop_after).unwrap_or(SignedDuration::MAX)
            })
    }
}

/// Deliveries claimed at once.
const CLAIM: u32 = 16;
/// Bytes of a receiver's refusal kept to show.
const ERROR_BODY: usize = 1024;
/// Expired links told in one transaction.
const EXPIRED_BATCH: u32 = 500;

/// How one attempt went: the receiver's 2xx, or what went wrong.
type Outcome = std::result::Result<u16, (Option<u16>, String)>;

/// Sends the outbox of one database.
#[derive(Debug, Clone)]
pub struct Deliverer {
    service: LocalService,
    key: WebhookKey,
    policy: Arc<DeliveryPolicy>,
}

impl Deliverer {
    pub fn new(service: LocalService, key: WebhookKey, policy: DeliveryPolicy) -> Deliverer {
        Deliverer {
            service,
            key,
            policy: Arc::new(policy),
        }
    }

    /// Delivers for as long as it runs; stopping it (dropping the future) at any point loses
    /// nothing, as a claim lapses and its delivery is sent again.
    pub async fn run(self) {
        let mut swept: Option<Instant> = None;
        let mut pruned: Option<Instant> = None;
        loop {
            if swept.is_none_or(|at| at.elapsed() >= self.policy.sweep) {
                if let Err(e) = self.tell_expired().await {
                    tracing::warn!(error = %e, "webhooks: expired links not looked for");
                }
                swept = Some(Instant::now());
            }
            if pruned.is_none_or(|at| at.elapsed() >= Duration::from_secs(3600)) {
                if let Err(e) = self.prune().await {
                    tracing::warn!(error = %e, "webhooks: old deliveries not pruned");
                }
                pruned = Some(Instant::now());
            }
            match self.round().await {
                Ok(0) => tokio::time::sleep(self.policy.poll).await,
                Ok(_) => {}
                Err(e) => {
                    tracing::warn!(error = %e, "webhooks: the outbox could not be read");
                    tokio::time::sleep(self.policy.poll).await;
                }
            }
        }
    }

    /// Claims what is due, sends it and records each attempt; answers how many were tried.
    pub async fn round(&self) -> Result<usize> {
        let now = self.service.now();
        // Past the attempt's own time limit and the write of its outcome.
        let lease = SignedDuration::try_from(self.policy.timeout * 2 + Duration::from_secs(5))
            .unwrap_or(SignedDuration::from_secs(60));
        let until = now + lease;
        let claimed = self
            .service
            .store
            .write(move |tx| tx.claim(now, until, CLAIM))
            .await?;
        let tried = claimed.len();
        let attempts = claimed.into_iter().map(|c| async move {
            let outcome = self.attempt(&c).await;
            self.record(c, outcome).await
        });
        for done in futures::future::join_all(attempts).await {
            done?;
        }
        Ok(tried)
    }

    /// Sends one delivery, signed at this moment.
    async fn attempt(&self, c: &Claimed) -> Outcome {
        let url = url::Url::parse(&c.url).map_err(|e| (None, format!("bad URL: {e}")))?;
        let allow = self.policy.allow_private;
        let addrs = reachable(&url, |_| allow)
            .await
            .ok_or((None, "the receiver's host name does not resolve".to_owned()))?;
        if addrs.is_empty() {
            return Err((
                None,
                "refused: the receiver is on a loopback, private or link-local address".into(),
            ));
        }
        let builder = reqwest::Client::builder()
            .timeout(self.policy.timeout)
            .user_agent(concat!(
                "linkdeck/",
                env!("CARGO_PKG_VERSION"),
                " (webhook)"
            ));
        let client = pinned(builder, &url, &addrs)
            .build()
            .map_err(|e| (None, e.without_url().to_string()))?;
        let secret = self.key.secret(c.webhook_id, &c.salt);
        let timestamp = Timestamp::now().as_second();
        let sent = client
            .post(url)
            .header(reqwest::header::CONTENT_TYPE, "application/json")
            .header("webhook-id", &c.msg_id)
            .header("webhook-timestamp", timestamp.to_string())
            .header(
                "webhook-signature",
                signature(&secret, &c.msg_id, timestamp, &c.body),
            )
            .body(c.body.clone())
            .send()
            .await;
        let mut response = sent.map_err(|e| (None, e.without_url().to_string()))?;
        let status = response.status();
        if status.is_success() {
            return Ok(status.as_u16());
        }
        let mut body = Vec::new();
        while body.len() < ERROR_BODY {
            match response.chunk().await {
                Ok(Some(chunk)) => body.extend_from_slice(&chunk),
                _ => break,
            }
        }
        body.truncate(ERROR_BODY);
        let text = String::from_utf8_lossy(&body);
        let said = excerpt(text.trim());
        Err((
            Some(status.as_u16()),
            if said.is_empty() {
                format!("HTTP {status}")
            } else {
                format!("HTTP {status}: {said}")
            },
        ))
    }

    /// Records how an attempt went; a subscription that has failed long enough is stopped,
    /// and the log says so.
    async fn record(&self, c: Claimed, outcome: Outcome) -> Result<()> {
        let now = self.service.now();
        let policy = self.policy.clone();
        let stopped = self
            .service
            .store
            .write(move |tx| match outcome {
                Ok(status) => {
                    tx.delivered(c.id, status, now)?;
                    tx.note_attempt(c.webhook_id, true, now)?;
                    Ok(None)
                }
                Err((status, error)) => {
                    let next = now
                        + SignedDuration::try_from(policy.delay(c.attempts))
                            .unwrap_or(SignedDuration::from_secs(3600));
                    tx.retry_at(c.id, status, &error, next)?;
                    let Some(hook) = tx.note_attempt(c.webhook_id, false, now)? else {
                        return Ok(None);
                    };
                    if !policy.gives_up(&hook, now) {
                        return Ok(None);
                    }
                    let reason = format!(
                        "stopped after {} failed deliveries in a row since {}; the last: {error}",
                        hook.failures,
                        hook.failing_since.unwrap_or(now),
                    );
                    tx.set_webhook_stopped(hook.id, Some((&reason, now)))?;
                    Ok(Some((hook.id, reason)))
                }
            })
            .await?;
        if let Some((id, reason)) = stopped {
            tracing::warn!(webhook = id, %reason, "webhook stopped; `linkdeck webhooks resume` starts it again");
        }
        Ok(())
    }

    /// Queues `link.expired` for each link that expired (by date or clicks) since it was last
    /// looked at, for owners with a subscription wanting it.
    pub async fn tell_expired(&self) -> Result<()> {
        let owners = self
            .service
            .store
            .read(|tx| tx.owners_wanting(WebhookEvent::Expired))
            .await?;
        for owner in owners {
            loop {
                let now = self.service.now();
                let told = self
                    .service
                    .store
                    .write(move |tx| {
                        let ids = tx.mark_expired(owner, now, EXPIRED_BATCH)?;
                        for id in &ids {
                            queue_link_event(tx, owner, *id, WebhookEvent::Expired, now)?;
                        }
                        Ok(ids.len())
                    })
                    .await?;
                if told < EXPIRED_BATCH as usize {
                    break;
                }
            }
        }
        Ok(())
    }

    async fn prune(&self) -> Result<()> {
        let keep = SignedDuration::try_from(self.policy.keep).unwrap_or(SignedDuration::ZERO);
        let before = self.service.now() - keep;
        self.service
            .store
            .write(move |tx| tx.prune_deliveries(before))
            .await
            .map(|_| ())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn delays_grow_then_stay_at_the_last() {
        let policy = DeliveryPolicy::default();
        assert_eq!(policy.delay(1), Duration::from_secs(5));
        assert_eq!(policy.delay(2), Duration::from_secs(30));
        assert_eq!(policy.delay(6), Duration::from_secs(3600));
        assert_eq!(policy.delay(60), Duration::from_secs(3600));
        // An hour's outage is outlived: the attempts before the stop span a day.
        let span: Duration = (1..policy.stop_after_failures)
            .map(|n| policy.delay(n))
            .sum();
        assert!(span > Duration::from_secs(3600), "{span:?}");
    }
}
