//! Webhook subscriptions over linkdeck's own API, under `/api/linkdeck/webhooks` behind the key
//! check, each acting on the key's owner's subscriptions (a read-only key may only read):
//!
//! - `GET webhooks`; `POST webhooks` with a JSON body `{"url": …, "events": [...]}`, answered
//!   with the subscription and its `secret`, shown this once;
//! - `GET webhooks/{id}`, `DELETE webhooks/{id}`, `POST webhooks/{id}/resume`;
//! - `POST webhooks/{id}/secret` (`?rotate=true` for a new one): the secret again;
//! - `GET webhooks/{id}/deliveries?limit=N`: the latest deliveries, newest first.
//!
//! The deliverer itself runs beside the server (`serve_prepared`), from the same settings.

use std::sync::Arc;

use axum::Router;
use axum::extract::{Query, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use serde::Deserialize;
use serde_json::json;

use super::AppState;
use super::error::ApiError;
use super::extract::{AccountCaller, RecordId};
use crate::backend::local::webhooks::{DeliveryPolicy, WebhookKey};
use crate::domain::{Error, WebhookInput};
use crate::wire;

/// What `serve` needs to take subscriptions and deliver them.
#[derive(Debug, Clone)]
pub struct WebhookSettings {
    pub key: WebhookKey,
    pub policy: DeliveryPolicy,
}

type Shared = State<Arc<AppState>>;
type ApiResult = Result<Response, ApiError>;

/// Deliveries one request lists at most.
const DELIVERIES_MAX: u32 = 500;

/// The routes, nested in linkdeck's own under the key check.
pub fn router() -> Router<Arc<AppState>> {
    let hooks = format!("/{}", wire::linkdeck::WEBHOOKS_PATH);
    Router::new()
        .route(&hooks, get(list).post(create))
        .route(&format!("{hooks}/{{id}}"), get(show).delete(delete))
        .route(&format!("{hooks}/{{id}}/resume"), post(resume))
        .route(&format!("{hooks}/{{id}}/secret"), post(secret))
        .route(&format!("{hooks}/{{id}}/deliveries"), get(deliveries))
}

fn ok(status: StatusCode, body: impl serde::Serialize) -> ApiResult {
    Ok((status, axum::Json(wire::single(body))).into_response())
}

fn settings(state: &AppState) -> Result<&WebhookSettings, ApiError> {
    state.webhooks.as_ref().ok_or_else(|| {
        ApiError::Status(
            StatusCode::NOT_FOUND,
            format!(
                "This server keeps no webhook key, so it cannot {}.",
                crate::wire::linkdeck::NO_WEBHOOK_KEY
            ),
        )
    })
}

async fn list(State(state): Shared, AccountCaller(caller): AccountCaller) -> ApiResult {
    ok(
        StatusCode::OK,
        state.service.list_webhooks(Some(caller.owner)).await?,
    )
}

async fn create(
    State(state): Shared,
    AccountCaller(caller): AccountCaller,
    body: Result<axum::Json<WebhookInput>, axum::extract::rejection::JsonRejection>,
) -> ApiResult {
    let axum::Json(input) = body.map_err(|e| {
        ApiError::Domain(Error::field(
            "body",
            format!("must be JSON with url and events: {}", e.body_text()),
        ))
    })?;
    let settings = settings(&state)?;
    let (secret, hook) = state
        .service
        .create_webhook(
            caller.owner,
            &input,
            &settings.key,
            settings.policy.allow_private,
        )
        .await?;
    ok(
        StatusCode::CREATED,
        json!({ "webhook": hook, "secret": secret }),
    )
}

async fn show(
    State(state): Shared,
    AccountCaller(caller): AccountCaller,
    RecordId(id): RecordId,
) -> ApiResult {
    ok(
        StatusCode::OK,
        state.service.webhook(id, Some(caller.owner)).await?,
    )
}

async fn delete(
    State(state): Shared,
    AccountCaller(caller): AccountCaller,
    RecordId(id): RecordId,
) -> ApiResult {
    state.service.delete_webhook(id, Some(caller.owner)).await?;
    ok(StatusCode::OK, json!({ "deleted": id }))
}

async fn resume(
    State(state): Shared,
    AccountCaller(caller): AccountCaller,
    RecordId(id): RecordId,
) -> ApiResult {
    ok(
        StatusCode::OK,
        state.service.resume_webhook(id, Some(caller.owner)).await?,
    )
}

#[derive(Debug, Default, Deserialize)]
struct SecretQuery {
    #[serde(default)]
    rotate: bool,
}

async fn secret(
    State(state): Shared,
    AccountCaller(caller): AccountCaller,
    RecordId(id): RecordId,
    Query(query): Query<SecretQuery>,
) -> ApiResult {
    let settings = settings(&state)?;
    let secret = state
        .service
        .webhook_secret(id, Some(caller.owner), &settings.key, query.rotate)
        .await?;
    ok(StatusCode::OK, json!({ "id": id, "secret": secret }))
}

#[derive(Debug, Default, Deserialize)]
struct DeliveriesQuery {
    limit: Option<u32>,
}

async fn deliveries(
    State(state): Shared,
    AccountCaller(caller): AccountCaller,
    RecordId(id): RecordId,
    Query(query): Query<DeliveriesQuery>,
) -> ApiResult {
    let limit = query.limit.unwrap_or(50).clamp(1, DELIVERIES_MAX);
    ok(
        StatusCode::OK,
        state
            .service
            .webhook_deliveries(id, Some(caller.owner), limit)
            .await?,
    )
}
