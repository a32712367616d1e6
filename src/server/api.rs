//! The v1 API over any [`Backend`](crate::backend::Backend): the caller's key picks the owner,
//! and the owner's view of the embedded service answers. What a handler needs of the request
//! (the caller, a record id, a form) it takes as a typed extractor from `extract`.

use std::net::IpAddr;
use std::sync::Arc;

use axum::extract::{RawQuery, Request, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::{Json, Router};

use super::error::ApiError;
use super::extract::{Caller, RecordId, V1Form};
use super::proxies::Visitor;
use super::{AppState, params};
use crate::backend::SpaceLimited;
use crate::backend::space_limited::scope_in_reach;
use crate::domain::{DomainInput, Error, Id, LinkInput, Page, SpaceInput};
use crate::wire;

type Shared = State<Arc<AppState>>;
type ApiResult = Result<Response, ApiError>;

/// What a rate limit is counted against.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum LimitKey {
    Key(Id),
    /// Requests without a valid key, by address (an IPv6 one by its /64).
    Address(IpAddr),
}

pub fn router(state: Arc<AppState>) -> Router<Arc<AppState>> {
    let v1 = Router::new()
        .route("/links", get(list_links).post(create_link))
        .route(
            "/links/{id}",
            get(show_link)
                .put(update_link)
                .patch(update_link)
                .delete(delete_link),
        )
        .route("/spaces", get(list_spaces).post(create_space))
        .route(
            "/spaces/{id}",
            get(show_space)
                .put(update_space)
                .patch(update_space)
                .delete(delete_space),
        )
        .route("/domains", get(list_domains))
        .route(
            "/domains/{id}",
            get(show_domain).put(update_domain).patch(update_domain),
        )
        .route("/stats", get(account_stats))
        .route("/stats/{id}", get(link_stats))
        .route_layer(middleware::from_fn_with_state(state.clone(), authenticate));
    // linkdeck's own paths sit beside v1, which stays as phpShort has it.
    let linkdeck = super::linkdeck::router()
        .merge(super::webhooks::router())
        .route_layer(middleware::from_fn_with_state(state, authenticate));
    Router::new()
        .nest("/api/v1", v1)
        .nest("/api/linkdeck", linkdeck)
        .route("/api/health", get(health))
        .route("/api", axum::routing::any(not_found))
        .route("/api/", axum::routing::any(not_found))
        .route("/api/{*rest}", axum::routing::any(not_found))
}

/// For load balancers: 200 once the database answers, 503 (with the reason) when it does not.
/// No key needed, and nothing about the data in the answer.
async fn health(State(state): State<Arc<AppState>>) -> Result<Json<serde_json::Value>, ApiError> {
    state.service.ping().await?;
    Ok(Json(serde_json::json!({"status": "ok"})))
}

async fn not_found() -> ApiError {
    ApiError::Domain(Error::not_found("path"))
}

fn limit_headers(headers: &mut HeaderMap, limit: u32, remaining: u32) {
    if limit > 0 {
        headers.insert("x-ratelimit-limit", HeaderValue::from(limit));
        headers.insert("x-ratelimit-remaining", HeaderValue::from(remaining));
    }
}

/// Bearer key → owner → that owner's backend, under the per-key rate limit (requests without a
/// valid key count against their address, so guessing keys is limited too).
async fn authenticate(
    State(state): Shared,
    Visitor(visitor): Visitor,
    mut request: Request,
    next: Next,
) -> Response {
    let key = request
        .headers()
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| {
            let (scheme, key) = v.trim().split_once(' ')?;
            scheme
                .eq_ignore_ascii_case("bearer")
                .then(|| key.trim().to_owned())
        })
        .filter(|k| !k.is_empty());
    let owner = match &key {
        Some(key) => match state.service.authenticate(key).await {
            Ok(owner) => owner,
            Err(e) => return ApiError::from(e).into_response(),
        },
        None => None,
    };
    let limit_key = match owner {
        Some(o) => LimitKey::Key(o.key_id),
        None => LimitKey::Address(super::visitor::network(visitor)),
    };
    let decision = state.api_limiter.hit(&limit_key);
    if !decision.allowed {
        return ApiError::RateLimited {
            limit: decision.limit,
            retry_after: decision.retry_after,
        }
        .into_response();
    }
    let writes = !request.method().is_safe();
    let mut response = match owner {
        None => ApiError::Domain(Error::Unauthorized("no valid key".into())).into_response(),
        Some(owner) if owner.read_only && writes => ApiError::Status(
            StatusCode::FORBIDDEN,
            "This key can only read (it was created with --access read).".into(),
        )
        .into_response(),
        Some(owner) => {
            let backend = state.service.for_owner(owner.owner_id);
            request.extensions_mut().insert(Caller {
                backend: match owner.spaces {
                    Some(spaces) => {
                        Arc::new(SpaceLimited::new(Arc::new(backend.within(spaces)), spaces))
                    }
                    None => Arc::new(backend),
                },
                owner: owner.owner_id,
                spaces: owner.spaces,
            });
            if state.key_use.should_record(owner.key_id) {
                let service = state.service.clone();
                tokio::spawn(async move {
                    let _ = service.touch_key(owner.key_id).await;
                });
            }
            let response = next.run(request).await;
            if writes && response.status().is_success() {
                // The redirect side must see this edit now, not when its cache expires.
                state.cache.clear();
            }
            response
        }
    };
    limit_headers(response.headers_mut(), decision.limit, decision.remaining);
    response
}

fn json(status: StatusCode, body: impl serde::Serialize) -> Response {
    (status, axum::Json(body)).into_response()
}

/// The v1 answer for one record, written by `record`.
fn record_answer(status: StatusCode, record: impl serde::Serialize) -> ApiResult {
    Ok(json(status, wire::single(record)))
}

/// The v1 answer for one page of the records under `path` (such as `/api/v1/links`): `record`
/// writes each, and `query_of(n)` is the query string that asks for page `n` the same way, for
/// the links to the other pages.
fn list_answer<'a, T, R: serde::Serialize>(
    state: &AppState,
    path: &str,
    page: &'a Page<T>,
    record: impl Fn(&'a T) -> R,
    query_of: impl Fn(u32) -> String,
) -> ApiResult {
    let base = format!("{}{path}", state.public_url);
    let body = wire::list(page, record, &base, |n| format!("{base}?{}", query_of(n)));
    Ok(json(StatusCode::OK, body))
}

async fn list_links(State(state): Shared, caller: Caller, RawQuery(q): RawQuery) -> ApiResult {
    let query = params::link_query(q.as_deref())?;
    let page = caller.backend.list_links(&query).await?;
    list_answer(&state, "/api/v1/links", &page, wire::link_record, |n| {
        params::link_query_string(&query, n)
    })
}

async fn show_link(caller: Caller, RecordId(id): RecordId) -> ApiResult {
    let link = caller.backend.show_link(id).await?;
    record_answer(StatusCode::OK, wire::link_record(&link))
}

async fn create_link(caller: Caller, V1Form(input): V1Form<LinkInput>) -> ApiResult {
    let link = caller.backend.create_link(&input).await?;
    record_answer(StatusCode::CREATED, wire::link_record(&link))
}

async fn update_link(
    caller: Caller,
    RecordId(id): RecordId,
    V1Form(input): V1Form<LinkInput>,
) -> ApiResult {
    let link = caller.backend.update_link(id, &input).await?;
    record_answer(StatusCode::OK, wire::link_record(&link))
}

async fn delete_link(caller: Caller, RecordId(id): RecordId) -> ApiResult {
    caller.backend.delete_link(id).await?;
    Ok(json(StatusCode::OK, wire::deleted(id, "link")))
}

async fn list_spaces(State(state): Shared, caller: Caller, RawQuery(q): RawQuery) -> ApiResult {
    let query = params::space_query(q.as_deref())?;
    let page = caller.backend.list_spaces(&query).await?;
    list_answer(&state, "/api/v1/spaces", &page, wire::space_record, |n| {
        params::space_query_string(&query, n)
    })
}

async fn show_space(caller: Caller, RecordId(id): RecordId) -> ApiResult {
    let space = caller.backend.show_space(id).await?;
    record_answer(StatusCode::OK, wire::space_record(&space))
}

async fn create_space(caller: Caller, V1Form(input): V1Form<SpaceInput>) -> ApiResult {
    let space = caller.backend.create_space(&input).await?;
    record_answer(StatusCode::CREATED, wire::space_record(&space))
}

async fn update_space(
    caller: Caller,
    RecordId(id): RecordId,
    V1Form(input): V1Form<SpaceInput>,
) -> ApiResult {
    let space = caller.backend.update_space(id, &input).await?;
    record_answer(StatusCode::OK, wire::space_record(&space))
}

async fn delete_space(caller: Caller, RecordId(id): RecordId) -> ApiResult {
    caller.backend.delete_space(id).await?;
    Ok(json(StatusCode::OK, wire::deleted(id, "space")))
}

async fn list_domains(State(state): Shared, caller: Caller, RawQuery(q): RawQuery) -> ApiResult {
    let (page_no, per_page) = params::paging(q.as_deref())?;
    let page = caller.backend.list_domains(page_no, per_page).await?;
    list_answer(
        &state,
        "/api/v1/domains",
        &page,
        wire::domain_settings_record,
        |n| params::paging_query_string(per_page, n),
    )
}

async fn show_domain(caller: Caller, RecordId(id): RecordId) -> ApiResult {
    let domain = caller.backend.show_domain(id).await?;
    record_answer(StatusCode::OK, wire::domain_settings_record(&domain))
}

/// linkdeck's own fields of a domain (its fallbacks and robots policy): phpShort's v1 has no
/// update of a domain at all.
async fn update_domain(
    caller: Caller,
    RecordId(id): RecordId,
    V1Form(input): V1Form<DomainInput>,
) -> ApiResult {
    let domain = caller.backend.update_domain(id, &input).await?;
    record_answer(StatusCode::OK, wire::domain_settings_record(&domain))
}

async fn account_stats(State(state): Shared, caller: Caller, RawQuery(q): RawQuery) -> ApiResult {
    stats(&state, &caller, q.as_deref(), None).await
}

async fn link_stats(
    State(state): Shared,
    caller: Caller,
    RecordId(id): RecordId,
    RawQuery(q): RawQuery,
) -> ApiResult {
    stats(&state, &caller, q.as_deref(), Some(id)).await
}

/// Statistics in the zone asked for, else the one the server reads the owner's dates in.
async fn stats(
    state: &AppState,
    caller: &Caller,
    raw: Option<&str>,
    link: Option<Id>,
) -> ApiResult {
    let (query, zone) = params::stats_query(raw, link)?;
    if let Some(spaces) = caller.spaces {
        scope_in_reach(caller.backend.as_ref(), spaces, &query.scope).await?;
    }
    let tz = zone.unwrap_or_else(|| state.service.options().timezone.clone());
    let stats = state
        .service
        .stats_in(caller.owner, &query, tz.clone())
        .await?;
    Ok(json(StatusCode::OK, wire::stats::record(&stats, &tz)))
}
