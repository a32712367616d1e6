//! Webhook subscriptions as a person asks for them: a receiver's URL and the events wanted.
//! Which addresses a receiver may have is the service's rule (it needs name resolution); the
//! shape of the request is checked here once for the CLI, the server and the app.

use std::fmt;
use std::str::FromStr;

use jiff::Timestamp;
use serde::{Deserialize, Serialize};

use crate::Id;

use crate::{Error, FieldErrors, validate_url};

/// What happened to a link, as a subscription names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub enum WebhookEvent {
    #[serde(rename = "link.created")]
    Created,
    #[serde(rename = "link.updated")]
    Updated,
    #[serde(rename = "link.deleted")]
    Deleted,
    /// Its end date passed, or its click limit was reached.
    #[serde(rename = "link.expired")]
    Expired,
    /// Visits, sent in batches: at most one delivery a second per subscription.
    #[serde(rename = "link.clicked")]
    Clicked,
}

impl WebhookEvent {
    pub const ALL: [WebhookEvent; 5] = [
        WebhookEvent::Created,
        WebhookEvent::Updated,
        WebhookEvent::Deleted,
        WebhookEvent::Expired,
        WebhookEvent::Clicked,
    ];

    pub fn name(self) -> &'static str {
        match self {
            WebhookEvent::Created => "link.created",
            WebhookEvent::Updated => "link.updated",
            WebhookEvent::Deleted => "link.deleted",
            WebhookEvent::Expired => "link.expired",
            WebhookEvent::Clicked => "link.clicked",
        }
    }

    /// Every event's name, for messages.
    pub fn names() -> String {
        Self::ALL.map(Self::name).join(", ")
    }
}

impl fmt::Display for WebhookEvent {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for WebhookEvent {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        Self::ALL
            .into_iter()
            .find(|e| e.name() == s.trim())
            .ok_or_else(|| {
                format!(
                    "unknown event {:?}: one of {}",
                    crate::excerpt(s),
                    Self::names()
                )
            })
    }
}

/// Events stored as their names, separated by spaces.
pub fn events_text(events: &[WebhookEvent]) -> String {
    events
        .iter()
        .map(|e| e.name())
        .collect::<Vec<_>>()
        .join(" ")
}

/// Events read back from [`events_text`]; a name this build does not know is left out.
pub fn events_of_text(text: &str) -> Vec<WebhookEvent> {
    text.split_whitespace()
        .filter_map(|name| name.parse().ok())
        .collect()
}

/// A subscription: where events go and which. Its secret is never part of it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Webhook {
    pub id: Id,
    pub owner_id: Id,
    pub url: String,
    pub events: Vec<WebhookEvent>,
    pub created_at: Timestamp,
    /// Deliveries failed in a row since the last that arrived.
    pub failures: u32,
    /// When the current run of failures began.
    pub failing_since: Option<Timestamp>,
    /// When the deliverer gave up on it; nothing is sent or queued until it is resumed.
    pub stopped_at: Option<Timestamp>,
    pub stopped_reason: Option<String>,
    /// Deliveries waiting to be sent.
    pub pending: u64,
}

/// One delivery: one event (or one batch of clicks) for one subscription.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Delivery {
    pub id: Id,
    pub webhook_id: Id,
    /// The `webhook-id` header: the same on every attempt, so a receiver can drop repeats.
    pub msg_id: String,
    pub event: String,
    pub created_at: Timestamp,
    /// When it is tried next; none once delivered.
    pub next_at: Option<Timestamp>,
    pub attempts: u32,
    pub delivered_at: Option<Timestamp>,
    /// The receiver's last HTTP status, if it answered.
    pub last_status: Option<u16>,
    pub last_error: Option<String>,
}

/// A subscription with its latest deliveries, newest first: what the app shows.
pub type WebhookActivity = (Webhook, Vec<Delivery>);

/// A subscription as a person asks for it.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct WebhookInput {
    pub url: String,
    /// Event names, as typed.
    pub events: Vec<String>,
}

/// The receiver's URL at most this long.
pub const WEBHOOK_URL_MAX: usize = 2048;

/// Checks the shape of `input`: an http(s) URL without credentials, and at least one known
/// event. Every invalid field is reported, named `url` and `events`.
pub fn validate_webhook_input(input: &WebhookInput) -> Result<(String, Vec<WebhookEvent>), Error> {
    let mut errors = FieldErrors::default();
    let url = input.url.trim();
    if let Err(m) = validate_url(url) {
        errors.add("url", m);
    } else if url.chars().count() > WEBHOOK_URL_MAX {
        errors.add(
            "url",
            format!("must be at most {WEBHOOK_URL_MAX} characters"),
        );
    } else if let Ok(parsed) = url::Url::parse(url)
        && (!parsed.username().is_empty() || parsed.password().is_some())
    {
        errors.add("url", "must not carry a user name or password");
    }
    let mut events = Vec::new();
    if input.events.is_empty() {
        errors.add(
            "events",
            format!("name at least one event: {}", WebhookEvent::names()),
        );
    }
    for name in &input.events {
        match name.parse::<WebhookEvent>() {
            Ok(event) if !events.contains(&event) => events.push(event),
            Ok(_) => {}
            Err(m) => errors.add("events", m),
        }
    }
    if errors.is_empty() {
        events.sort();
        Ok((url.to_owned(), events))
    } else {
        Err(Error::Validation(errors))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn input(url: &str, events: &[&str]) -> WebhookInput {
        WebhookInput {
            url: url.into(),
            events: events.iter().map(|e| e.to_string()).collect(),
        }
    }

    #[test]
    fn names_round_trip() {
        for event in WebhookEvent::ALL {
            assert_eq!(event.name().parse::<WebhookEvent>(), Ok(event));
        }
        let text = events_text(&WebhookEvent::ALL);
        assert_eq!(events_of_text(&text), WebhookEvent::ALL);
    }

    #[test]
    fn bad_input_names_its_fields() {
        let err = validate_webhook_input(&input("ftp://x", &["link.made"])).unwrap_err();
        let fields = err.field_errors().unwrap();
        assert!(fields.get("url").is_some(), "{err}");
        assert!(
            fields.get("events").unwrap()[0].contains("unknown event"),
            "{err}"
        );
        let err = validate_webhook_input(&input("https://u:p@x.example/", &[])).unwrap_err();
        assert!(err.to_string().contains("user name"), "{err}");
        assert!(err.to_string().contains("at least one event"), "{err}");
    }

    #[test]
    fn good_input_is_sorted_and_deduplicated() {
        let (url, events) = validate_webhook_input(&input(
            " https://hooks.example/in ",
            &["link.clicked", "link.created", "link.clicked"],
        ))
        .unwrap();
        assert_eq!(url, "https://hooks.example/in");
        assert_eq!(events, [WebhookEvent::Created, WebhookEvent::Clicked]);
    }
}
