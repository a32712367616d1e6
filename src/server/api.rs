//! The v1 API (DESIGN §3) over any [`Backend`]: the caller's key picks the owner, and the owner's
//! view of the embedded service answers.

use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;

use axum::Router;
use axum::body::Bytes;
use axum::extract::{ConnectInfo, Path, RawQuery, Request, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::get;

use super::error::ApiError;
use super::form::{FormSpec, check_form_content_type, parse_form};
use super::{AppState, params};
use crate::backend::Backend;
use crate::domain::{Error, Id, LinkField, LinkInput, SpaceInput};
use crate::wire;

type Shared = State<Arc<AppState>>;
type ApiResult = Result<Response, ApiError>;

/// Who is calling: the backend acting for the key's owner.
#[derive(Clone)]
pub struct Caller {
    pub backend: Arc<dyn Backend>,
    /// The key's owner, for what the service answers beyond the `Backend` contract.
    pub owner: Id,
}

/// What a rate limit is counted against.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum LimitKey {
    Key(Id),
    /// Requests without a valid key, by address (an IPv6 one by its /64).
    Address(IpAddr),
}

const LINK_FORM: FormSpec = FormSpec {
    lists: &LinkField::TARGET_LIST_NAMES,
};

const SPACE_FORM: FormSpec = FormSpec { lists: &[] };

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
        .route("/domains/{id}", get(show_domain))
        .route("/stats", get(account_stats))
        .route("/stats/{id}", get(link_stats))
        .route_layer(middleware::from_fn_with_state(state, authenticate));
    Router::new()
        .nest("/api/v1", v1)
        .route("/api", axum::routing::any(not_found))
        .route("/api/", axum::routing::any(not_found))
        .route("/api/{*rest}", axum::routing::any(not_found))
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
    ConnectInfo(peer): ConnectInfo<SocketAddr>,
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
        None => LimitKey::Address(super::visitor::network(peer.ip())),
    };
    let decision = state.api_limiter.hit(&limit_key);
    if !decision.allowed {
        return ApiError::RateLimited {
            limit: decision.limit,
            retry_after: decision.retry_after,
        }
        .into_response();
    }
    let mut response = match owner {
        None => ApiError::Domain(Error::Unauthorized("no valid key".into())).into_response(),
        Some(owner) => {
            request.extensions_mut().insert(Caller {
                backend: Arc::new(state.service.for_owner(owner.owner_id)),
                owner: owner.owner_id,
            });
            if state.key_use.should_record(owner.key_id) {
                let service = state.service.clone();
                tokio::spawn(async move {
                    let _ = service.touch_key(owner.key_id).await;
                });
            }
            let writes = !request.method().is_safe();
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

fn caller(request_caller: Option<axum::Extension<Caller>>) -> Result<Arc<dyn Backend>, ApiError> {
    request_caller
        .map(|c| c.0.backend)
        .ok_or_else(|| ApiError::Domain(Error::Unauthorized("no caller".into())))
}

/// A record id from the path; anything but a positive integer names no record.
fn record_id(raw: &str) -> Result<Id, ApiError> {
    raw.parse::<Id>()
        .ok()
        .filter(|id| *id > 0)
        .ok_or(ApiError::Domain(Error::not_found("record")))
}

fn json(status: StatusCode, body: impl serde::Serialize) -> Response {
    (status, axum::Json(body)).into_response()
}

fn form<T: serde::de::DeserializeOwned>(
    headers: &HeaderMap,
    body: &Bytes,
    spec: &FormSpec,
) -> Result<T, ApiError> {
    check_form_content_type(headers, body.len())?;
    parse_form(body, spec)
}

fn url_of(state: &AppState, path: &str, query: String) -> String {
    format!("{}{path}?{query}", state.public_url)
}

type Ext = Option<axum::Extension<Caller>>;

async fn list_links(State(state): Shared, ext: Ext, RawQuery(q): RawQuery) -> ApiResult {
    let backend = caller(ext)?;
    let query = params::link_query(q.as_deref())?;
    let page = backend.list_links(&query).await?;
    let path = "/api/v1/links";
    let body = wire::list(
        &page,
        wire::link_record,
        &format!("{}{path}", state.public_url),
        |n| url_of(&state, path, params::link_query_string(&query, n)),
    );
    Ok(json(StatusCode::OK, body))
}

async fn show_link(ext: Ext, Path(id): Path<String>) -> ApiResult {
    let link = caller(ext)?.show_link(record_id(&id)?).await?;
    Ok(json(StatusCode::OK, wire::single(wire::link_record(&link))))
}

async fn create_link(ext: Ext, headers: HeaderMap, body: Bytes) -> ApiResult {
    let backend = caller(ext)?;
    let input: LinkInput = form(&headers, &body, &LINK_FORM)?;
    let link = backend.create_link(&input).await?;
    Ok(json(
        StatusCode::CREATED,
        wire::single(wire::link_record(&link)),
    ))
}

async fn update_link(
    ext: Ext,
    Path(id): Path<String>,
    headers: HeaderMap,
    body: Bytes,
) -> ApiResult {
    let backend = caller(ext)?;
    let id = record_id(&id)?;
    let input: LinkInput = form(&headers, &body, &LINK_FORM)?;
    let link = backend.update_link(id, &input).await?;
    Ok(json(StatusCode::OK, wire::single(wire::link_record(&link))))
}

async fn delete_link(ext: Ext, Path(id): Path<String>) -> ApiResult {
    let id = record_id(&id)?;
    caller(ext)?.delete_link(id).await?;
    Ok(json(StatusCode::OK, wire::deleted(id, "link")))
}

async fn list_spaces(State(state): Shared, ext: Ext, RawQuery(q): RawQuery) -> ApiResult {
    let backend = caller(ext)?;
    let query = params::space_query(q.as_deref())?;
    let page = backend.list_spaces(&query).await?;
    let path = "/api/v1/spaces";
    let body = wire::list(
        &page,
        wire::space_record,
        &format!("{}{path}", state.public_url),
        |n| url_of(&state, path, params::space_query_string(&query, n)),
    );
    Ok(json(StatusCode::OK, body))
}

async fn show_space(ext: Ext, Path(id): Path<String>) -> ApiResult {
    let space = caller(ext)?.show_space(record_id(&id)?).await?;
    Ok(json(
        StatusCode::OK,
        wire::single(wire::space_record(&space)),
    ))
}

async fn create_space(ext: Ext, headers: HeaderMap, body: Bytes) -> ApiResult {
    let backend = caller(ext)?;
    let input: SpaceInput = form(&headers, &body, &SPACE_FORM)?;
    let space = backend.create_space(&input).await?;
    Ok(json(
        StatusCode::CREATED,
        wire::single(wire::space_record(&space)),
    ))
}

async fn update_space(
    ext: Ext,
    Path(id): Path<String>,
    headers: HeaderMap,
    body: Bytes,
) -> ApiResult {
    let backend = caller(ext)?;
    let id = record_id(&id)?;
    let input: SpaceInput = form(&headers, &body, &SPACE_FORM)?;
    let space = backend.update_space(id, &input).await?;
    Ok(json(
        StatusCode::OK,
        wire::single(wire::space_record(&space)),
    ))
}

async fn delete_space(ext: Ext, Path(id): Path<String>) -> ApiResult {
    let id = record_id(&id)?;
    caller(ext)?.delete_space(id).await?;
    Ok(json(StatusCode::OK, wire::deleted(id, "space")))
}

async fn list_domains(State(state): Shared, ext: Ext, RawQuery(q): RawQuery) -> ApiResult {
    let backend = caller(ext)?;
    let (page_no, per_page) = params::paging(q.as_deref())?;
    let page = backend.list_domains(page_no, per_page).await?;
    let path = "/api/v1/domains";
    let body = wire::list(
        &page,
        wire::domain_record,
        &format!("{}{path}", state.public_url),
        |n| url_of(&state, path, params::paging_query_string(per_page, n)),
    );
    Ok(json(StatusCode::OK, body))
}

async fn show_domain(ext: Ext, Path(id): Path<String>) -> ApiResult {
    let domain = caller(ext)?.show_domain(record_id(&id)?).await?;
    Ok(json(
        StatusCode::OK,
        wire::single(wire::domain_record(&domain)),
    ))
}

async fn account_stats(State(state): Shared, ext: Ext, RawQuery(q): RawQuery) -> ApiResult {
    stats(&state, ext, q.as_deref(), None).await
}

async fn link_stats(
    State(state): Shared,
    ext: Ext,
    Path(id): Path<String>,
    RawQuery(q): RawQuery,
) -> ApiResult {
    let id = record_id(&id)?;
    stats(&state, ext, q.as_deref(), Some(id)).await
}

/// Statistics in the zone asked for, else the one the server reads the owner's dates in.
async fn stats(state: &AppState, ext: Ext, raw: Option<&str>, link: Option<Id>) -> ApiResult {
    let owner = ext
        .map(|c| c.0.owner)
        .ok_or_else(|| ApiError::Domain(Error::Unauthorized("no caller".into())))?;
    let (query, zone) = params::stats_query(raw, link)?;
    let tz = zone.unwrap_or_else(|| state.service.options().timezone.clone());
    let stats = state.service.stats_in(owner, &query, tz.clone()).await?;
    Ok(json(StatusCode::OK, wire::stats::record(&stats, &tz)))
}
