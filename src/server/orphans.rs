//! Orphan visits: a request no link answers (the root, an unknown alias, any other path) is
//! handed to the click writer beside the fallback its host answers with, and written with the
//! next batch, bounded as docs/SERVER.md, *Orphan visits*, says. Paths that are linkdeck's own
//! (`/api/`, `/robots.txt`, `/favicon.ico`, a link's stats page and QR codes) never come here.

use axum::http::{HeaderMap, header};

use super::AppState;
use super::proxies::Visitor;
use super::resolve::Host;
use crate::backend::local::serving::OrphanVisit;
use crate::domain::{OrphanKind, orphan_value};

/// Paths that browsers and tools ask for on their own: never a visitor's orphan.
fn ignored(path: &str) -> bool {
    path.starts_with("/api/") || path == "/api" || path == "/favicon.ico" || path == "/robots.txt"
}

/// Queues an orphan visit of `path` on `host`, unless a known bot asked or the path is one of
/// linkdeck's own.
pub fn record(
    state: &AppState,
    host: &Host,
    kind: OrphanKind,
    path: &str,
    headers: &HeaderMap,
    visitor: Visitor,
) {
    if ignored(path) {
        return;
    }
    let ua = headers
        .get(header::USER_AGENT)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("");
    if state.agents.parse(ua).bot {
        return;
    }
    let country = state
        .geo
        .enabled()
        .then(|| state.geo.country(headers, visitor.0))
        .flatten();
    state.clicks.orphan(OrphanVisit {
        domain: host.domain,
        at: state.service.now().as_second(),
        kind,
        path: orphan_value(path),
        referrer: super::visitor::referrer_host(headers).map(|r| orphan_value(&r)),
        country,
    });
}
