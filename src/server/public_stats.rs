//! `GET /{alias}/stats`: the statistics page of a public link, in HTML or (with `Accept:
//! application/json`) the API's stats record. Anyone may read it, so it stays cheap however it
//! is called: it reads the rollups (one row a day, whatever the traffic), keeps each answer for
//! a few seconds per link and period, and counts against its visitor's allowance on the public
//! pages.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::extract::{Path, RawQuery, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};

use super::AppState;
use super::error::ApiError;
use super::pages;
use super::proxies::Visitor;
use super::redirect::lookup;
use crate::domain::{Error, FieldErrors, Id, PeriodSpec, Preset, Stats};

/// Answers kept at most; past this the oldest half is forgotten.
const CACHE_MAX: usize = 10_000;

/// An answer and when it was computed, per link and period.
type Entries = HashMap<(Id, Preset), (Instant, Arc<Stats>)>;

/// Recent answers per link and period.
pub struct StatsCache {
    ttl: Duration,
    entries: Mutex<Entries>,
}

impl StatsCache {
    pub fn new(ttl: Duration) -> StatsCache {
        StatsCache {
            ttl,
            entries: Mutex::new(HashMap::new()),
        }
    }

    fn get(&self, key: (Id, Preset)) -> Option<Arc<Stats>> {
        let entries = self.entries.lock().unwrap_or_else(|e| e.into_inner());
        entries
            .get(&key)
            .filter(|(at, _)| at.elapsed() < self.ttl)
            .map(|(_, stats)| stats.clone())
    }

    fn put(&self, key: (Id, Preset), stats: Arc<Stats>) {
        if self.ttl.is_zero() {
            return;
        }
        let mut entries = self.entries.lock().unwrap_or_else(|e| e.into_inner());
        if entries.len() >= CACHE_MAX {
            let ttl = self.ttl;
            entries.retain(|_, (at, _)| at.elapsed() < ttl);
            if entries.len() >= CACHE_MAX {
                entries.clear();
            }
        }
        entries.insert(key, (Instant::now(), stats));
    }
}

fn wants_json(headers: &HeaderMap) -> bool {
    headers
        .get(header::ACCEPT)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.contains("application/json"))
}

/// The `period` of the page's query: 30 days unless another is named.
fn period(raw: Option<&str>) -> Result<Preset, String> {
    let value = url::form_urlencoded::parse(raw.unwrap_or("").as_bytes())
        .find(|(k, _)| k == "period")
        .map(|(_, v)| v.into_owned());
    match value.as_deref().map(str::trim) {
        None | Some("") => Ok(Preset::Days30),
        Some(v) => Preset::parse(v).ok_or_else(|| {
            format!(
                "There is no period called \"{}\": choose 24h, 7d, 30d, 90d, 12m or all.",
                v.chars().take(20).collect::<String>()
            )
        }),
    }
}

pub async fn page(
    State(state): State<Arc<AppState>>,
    Path(alias): Path<String>,
    RawQuery(query): RawQuery,
    visitor: Visitor,
    headers: HeaderMap,
) -> Response {
    let json = wants_json(&headers);
    let refuse = |e: ApiError, page: Response| if json { e.into_response() } else { page };
    let decision = state.public_page(visitor);
    if !decision.allowed {
        let page = pages::too_many_requests(decision.retry_after);
        return refuse(
            ApiError::RateLimited {
                limit: decision.limit,
                retry_after: decision.retry_after,
            },
            page,
        );
    }
    let not_found = || {
        refuse(
            ApiError::Domain(Error::not_found("link")),
            pages::not_found(),
        )
    };
    let link = match lookup(&state, &headers, &alias).await {
        Ok(link) if link.public => link,
        Ok(_) => return not_found(),
        Err(page) if page.status() == StatusCode::NOT_FOUND => return not_found(),
        Err(page) => return page,
    };
    let preset = match period(query.as_deref()) {
        Ok(p) => p,
        Err(message) => {
            let mut fields = FieldErrors::default();
            fields.add("period", "must be 24h, 7d, 30d, 90d, 12m or all");
            return refuse(
                ApiError::from(fields),
                pages::message(StatusCode::BAD_REQUEST, "Unknown period", &message),
            );
        }
    };
    let stats = match state.stats_cache.get((link.id, preset)) {
        Some(stats) => stats,
        None => {
            let query = crate::domain::StatsQuery::new(
                crate::domain::StatsScope::Link(link.id),
                PeriodSpec::preset(preset),
            );
            let tz = state.service.options().timezone.clone();
            match state.service.stats_in(link.owner_id, &query, tz).await {
                Ok(mut stats) => {
                    // How the operator routes visitors (its rules, its targeting) is theirs.
                    stats
                        .breakdowns
                        .retain(|b| b.dimension != crate::domain::Dimension::Rule);
                    let stats = Arc::new(stats);
                    state.stats_cache.put((link.id, preset), stats.clone());
                    stats
                }
                Err(Error::NotFound(_)) => return not_found(),
                Err(e) => {
                    tracing::warn!(error = %e, "reading stats failed");
                    return refuse(ApiError::Domain(e), pages::unavailable());
                }
            }
        }
    };
    let tz = &state.service.options().timezone;
    // Clicks counted but not yet written are part of the link's total.
    let all_time = state.ledger.clicks(&link);
    let mut response = if json {
        let mut record = crate::wire::stats::record(&stats, tz);
        if let Some(data) = record["data"].as_object_mut() {
            // The record id is the owner's business; visitors know the link by its alias.
            data.remove("id");
        }
        record["data"]["alias"] = link.alias.clone().into();
        record["data"]["all_clicks"] = all_time.into();
        axum::Json(record).into_response()
    } else {
        pages::stats(&link.alias, &stats, preset, all_time, tz)
    };
    response
        .headers_mut()
        .insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    response
}
