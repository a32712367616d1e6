//! linkdeck's own API beside v1, under `/api/linkdeck/` and the same key check (the records are
//! in `wire::linkdeck`): what another linkdeck — `copy`, or `import` on a remote profile — asks
//! of this server to carry what v1 cannot.
//!
//! - `GET capabilities`: that this is a linkdeck server, and its limits.
//! - `POST import`: a linkdeck JSON export as the body, written in one transaction through the
//!   same import as `linkdeck import FILE` on a local database — titles, click totals, creation
//!   dates and traffic history kept, every row checked, one bad row (named by its line in the
//!   body) and nothing is written. A link already there (the caller's link with the same alias
//!   on the same domain and the same destination) is passed over and brings no history again,
//!   so sending the same records twice never counts a click twice.
//! - `GET traffic?ids=…`: the hourly history of some of the caller's links, as an export
//!   carries it.
//! - `GET tags`: the caller's tags and how many links carry each; `POST tags/rename` (a form
//!   of `from` and `to`) renames one on every link, merging it into `to` where a link has both.
//! - `GET visits` and `GET visits/live`: the raw visit log, streamed, and the visits logged
//!   from now on (`visits_out`).
//! - `GET orphans?period=…`: the rollups of orphan visits (requests no link answered) on the
//!   caller's domains and the server's own host, with the statistics paths' period parameters.
//!
//! The body is bounded ([`IMPORT_MAX_BYTES`], read only once the key is checked) and so are the
//! imports running at once ([`IMPORTS_AT_ONCE`]), as everything else a caller sends is.

use std::io::Cursor;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use axum::Router;
use axum::body::Bytes;
use axum::extract::{DefaultBodyLimit, FromRequest, RawQuery, Request, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};

use super::error::ApiError;
use super::extract::{AccountCaller, Caller, RecordId, V1Form};
use super::{AppState, params};
use crate::backend::local::serving::{ImportOptions, ImportRow, Incoming};
use crate::domain::{Error, FieldErrors, Place, find_domain};
use crate::transfer::{self, FormatError, LinkRecord, Numbered, TrafficRecord};
use crate::wire;
use crate::wire::linkdeck::{
    Capabilities, ImportAnswer, LinkRules, LinkTraffic, TagRename, TagRenamed,
};

/// The largest import body: a page of links with a long history each fits many times over,
/// and it is held in memory while it is imported.
pub const IMPORT_MAX_BYTES: usize = 16 << 20;

/// Imports running at once; more wait their turn before their bodies are read. Each holds its
/// body while it runs, and on SQLite they would take turns at the one writer anyway.
pub const IMPORTS_AT_ONCE: usize = 2;

/// Link ids one traffic request may name: a page of a list.
pub const TRAFFIC_MAX_IDS: u32 = crate::domain::PER_PAGE_MAX;

type Shared = State<Arc<AppState>>;
type ApiResult = Result<Response, ApiError>;

/// The routes, to be nested under `/api/linkdeck` behind the key check.
pub fn router() -> Router<Arc<AppState>> {
    use wire::linkdeck::{
        CAPABILITIES_PATH, IMPORT_PATH, LINK_RULES_PATH, LIVE_VISITS_PATH, ORPHANS_PATH,
        TAG_RENAME_PATH, TAGS_PATH, TRAFFIC_PATH, VISITS_PATH,
    };
    Router::new()
        .route(&format!("/{CAPABILITIES_PATH}"), get(capabilities))
        .route(
            &format!("/{IMPORT_PATH}"),
            post(import).layer(DefaultBodyLimit::max(IMPORT_MAX_BYTES)),
        )
        .route(&format!("/{TRAFFIC_PATH}"), get(traffic))
        .route(&format!("/{TAGS_PATH}"), get(tags))
        .route(&format!("/{ORPHANS_PATH}"), get(orphans))
        .route(&format!("/{TAG_RENAME_PATH}"), post(rename_tag))
        .route(
            &format!("/{LINK_RULES_PATH}"),
            get(link_rules).put(set_link_rules),
        )
        .route(&format!("/{VISITS_PATH}"), get(super::visits_out::export))
        .route(
            &format!("/{LIVE_VISITS_PATH}"),
            get(super::visits_out::live),
        )
}

fn ok(body: impl serde::Serialize) -> ApiResult {
    Ok((StatusCode::OK, axum::Json(wire::single(body))).into_response())
}

async fn capabilities(State(state): Shared) -> ApiResult {
    ok(Capabilities {
        server: wire::linkdeck::SERVER.to_owned(),
        version: env!("CARGO_PKG_VERSION").to_owned(),
        api: wire::linkdeck::API_VERSION,
        import_max_bytes: IMPORT_MAX_BYTES as u64,
        traffic_max_ids: TRAFFIC_MAX_IDS,
        visits: true,
        tags: true,
        tag_traffic: true,
        link_options: true,
        webhooks: true,
        webhook_key: Some(state.webhooks.is_some()),
        orphan_visits: true,
    })
}

/// The caller's orphan visits over the period asked, in the zone asked (else the server's).
/// They belong to hosts, so a key limited to spaces is refused; the period parameters are the
/// statistics paths', and a scope (`space`, `domain`, `tag`) is refused rather than ignored.
async fn orphans(
    State(state): Shared,
    AccountCaller(caller): AccountCaller,
    RawQuery(query): RawQuery,
) -> ApiResult {
    let (query, zone) = params::stats_query(query.as_deref(), None)?;
    if query.scope != crate::domain::StatsScope::Account {
        let mut errors = FieldErrors::default();
        errors.add(
            "scope",
            "orphan visits are the account's: leave out space, domain and tag",
        );
        return Err(Error::Validation(errors).into());
    }
    let tz = zone.unwrap_or_else(|| state.service.options().timezone.clone());
    ok(state
        .service
        .orphan_stats_in(caller.owner, &query, tz)
        .await?)
}

async fn tags(caller: Caller) -> ApiResult {
    ok(caller.backend.tags().await?)
}

/// `GET links/{id}/rules`: the link's redirect rules, in order.
async fn link_rules(caller: Caller, RecordId(id): RecordId) -> ApiResult {
    let link = caller.backend.show_link(id).await?;
    ok(LinkRules::of(&link))
}

/// `PUT links/{id}/rules`: a JSON body `{"rules": ["country DE => https://…", …]}` replaces
/// the link's rules, each checked by the rule rules (errors name `rules.N.field`).
async fn set_link_rules(caller: Caller, RecordId(id): RecordId, body: Bytes) -> ApiResult {
    let body: LinkRules = serde_json::from_slice(&body)
        .map_err(|e| ApiError::field("body", format!("cannot be read: {e}")))?;
    let input = crate::domain::LinkInput {
        rules: Some(body.rules),
        ..Default::default()
    };
    let link = caller.backend.update_link(id, &input).await?;
    ok(LinkRules::of(&link))
}

async fn rename_tag(caller: Caller, V1Form(rename): V1Form<TagRename>) -> ApiResult {
    let links = caller.backend.rename_tag(&rename.from, &rename.to).await?;
    ok(TagRenamed { links })
}

/// The body must say it is JSON (UTF-8, as JSON is).
fn check_json(headers: &HeaderMap) -> Result<(), ApiError> {
    let unsupported = || {
        ApiError::Status(
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            "Send a linkdeck JSON export as application/json.".into(),
        )
    };
    let ct = headers
        .get(header::CONTENT_TYPE)
        .ok_or_else(unsupported)?
        .to_str()
        .map_err(|_| unsupported())?
        .to_ascii_lowercase();
    let mut parts = ct.split(';').map(str::trim);
    if parts.next() != Some("application/json") {
        return Err(unsupported());
    }
    let foreign_charset = parts.any(|p| {
        p.strip_prefix("charset=")
            .is_some_and(|c| !matches!(c.trim_matches('"'), "utf-8" | "utf8"))
    });
    if foreign_charset {
        return Err(ApiError::Status(
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            "The body must be UTF-8.".into(),
        ));
    }
    Ok(())
}

/// The body, at most [`IMPORT_MAX_BYTES`]; a larger one is a 413 saying the limit.
async fn read_body(request: Request, state: &Arc<AppState>) -> Result<Bytes, ApiError> {
    Bytes::from_request(request, state).await.map_err(|e| {
        if e.status() == StatusCode::PAYLOAD_TOO_LARGE {
            ApiError::Status(
                StatusCode::PAYLOAD_TOO_LARGE,
                format!(
                    "The body is larger than {} MiB: send fewer links in a request.",
                    IMPORT_MAX_BYTES >> 20
                ),
            )
        } else {
            ApiError::Status(e.status(), e.body_text())
        }
    })
}

/// A body that is not a valid export, named by its line where it has one.
fn not_an_export(e: FormatError) -> ApiError {
    let field = e
        .line
        .map_or_else(|| "body".to_owned(), |l| Place::line(l).to_string());
    ApiError::field(&field, e.message)
}

async fn import(
    State(state): Shared,
    AccountCaller(caller): AccountCaller,
    RawQuery(query): RawQuery,
    request: Request,
) -> ApiResult {
    let on_conflict = params::import_query(query.as_deref())?;
    check_json(request.headers())?;
    // The turn comes before the body is read, so that only the imports running hold theirs.
    let _turn = state
        .imports
        .acquire()
        .await
        .map_err(|_| Error::Unavailable("the server is stopping".into()))?;
    let body = read_body(request, &state).await?;
    let backend = state.service.for_owner(caller.owner);
    let domains = crate::backend::all_domains(&backend).await?;
    let (head, links) = transfer::stream_json(Cursor::new(body)).map_err(not_an_export)?;
    let shift = transfer::traffic_shift(head.traffic_as_of, state.service.now());
    let spaces = head
        .spaces
        .iter()
        .map(|n| (n.place(), n.record.to_input()))
        .collect();
    let lost_passwords = Arc::new(AtomicUsize::new(0));
    let lost = lost_passwords.clone();
    let rows = links.map(move |read| row_of(read, shift, &domains, &lost));
    let summary = backend
        .import_stream(
            spaces,
            rows,
            ImportOptions {
                on_conflict,
                create_spaces: false,
                pass_over_arrived: true,
            },
        )
        .await?;
    ok(ImportAnswer {
        spaces_created: summary.spaces_created,
        spaces_reused: summary.spaces_reused,
        links_created: summary.links_created,
        links_already_there: summary.links_already_there,
        links_skipped: summary.links_skipped,
        renamed: summary.renamed,
        clicks_imported: summary.clicks_imported,
        passwords_not_imported: lost_passwords.load(Ordering::Relaxed),
    })
}

/// One record of the body as a row of the import, as `linkdeck import` reads a file's.
fn row_of(
    read: Result<Numbered<LinkRecord>, FormatError>,
    shift: Option<jiff::SignedDuration>,
    domains: &[crate::domain::Domain],
    lost_passwords: &AtomicUsize,
) -> Incoming {
    let mut n = match read {
        Ok(n) => n,
        Err(e) => {
            let mut fields = FieldErrors::default();
            fields.add(
                &e.line
                    .map_or_else(|| "body".to_owned(), |l| Place::line(l).to_string()),
                e.message,
            );
            return Incoming::Broken(fields);
        }
    };
    if let Some(shift) = shift {
        n.record.shift_traffic(shift);
    }
    let place = n.place();
    match n
        .record
        .to_import(|name| find_domain(domains, name).map(|d| d.id))
    {
        Ok(link) => {
            if link.lost_password {
                lost_passwords.fetch_add(1, Ordering::Relaxed);
            }
            Incoming::Row(Box::new(ImportRow {
                place,
                input: link.input,
                space: link.space,
                carried: link.carried,
            }))
        }
        Err(e) => {
            let mut keyed = FieldErrors::default();
            keyed.add_at(place, e);
            Incoming::Invalid(keyed)
        }
    }
}

async fn traffic(State(state): Shared, caller: Caller, RawQuery(query): RawQuery) -> ApiResult {
    let mut ids = params::link_ids(query.as_deref(), TRAFFIC_MAX_IDS as usize)?;
    if caller.spaces.is_some() {
        // Links outside the key's spaces are left out, as another owner's are.
        let mut reached = Vec::with_capacity(ids.len());
        for id in ids {
            match caller.backend.show_link(id).await {
                Ok(_) => reached.push(id),
                Err(Error::NotFound(_)) => {}
                Err(e) => return Err(e.into()),
            }
        }
        ids = reached;
    }
    let backend = state.service.for_owner(caller.owner);
    let mut history = backend.traffic_history(ids.clone()).await?;
    let links: Vec<LinkTraffic> = ids
        .into_iter()
        .filter_map(|id| {
            history.remove(&id).map(|hours| LinkTraffic {
                id,
                traffic: hours.iter().map(TrafficRecord::from_hour).collect(),
            })
        })
        .collect();
    ok(links)
}
