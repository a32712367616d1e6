//! The short links themselves (their order of decisions: docs/ARCHITECTURE.md, "A redirect"):
//! `GET /{alias}` and the password form's
//! `POST /{alias}`, the preview at `/{alias}/+` and the public statistics at `/{alias}/stats`.

use std::borrow::Cow;
use std::sync::Arc;

use axum::body::Bytes;
use axum::extract::{Path, RawQuery, State};
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode, header};
use axum::response::{IntoResponse, Response};

use super::AppState;
use super::clicks::{self, Reservation};
use super::orphans;
use super::pages::{self, PasswordPrompt};
use super::passwords::Refused;
use super::proxies::Visitor;
use super::resolve::Host;
use crate::backend::local::serving::ResolvedLink;
use crate::backend::local::serving::VisitRow;
use crate::domain::{
    Answer, Condition, Gate, LinkOptions, OrphanKind, Platform, RuleVisitor, TargetType,
    TurnedAway, answer, destination, first_match, forwardable_path, gate, is_alias_shaped,
    rule_label, rule_urls, turned_away_to,
};

type Shared = State<Arc<AppState>>;

/// The request's host, lower-case, port included.
fn host_name(headers: &HeaderMap) -> String {
    headers
        .get(header::HOST)
        .and_then(|h| h.to_str().ok())
        .unwrap_or("")
        .trim()
        .to_ascii_lowercase()
}

/// Why [`find`] found no link.
enum Missing {
    /// No link has the alias on this host (or it has no alias's shape).
    Unknown(Host),
    /// The page to answer instead (503).
    Page(Response),
}

/// The request's host and the link `alias` names there. One home for alias resolution:
/// redirects, previews, statistics and QR codes all ask here.
async fn find(
    state: &AppState,
    headers: &HeaderMap,
    alias: &str,
) -> Result<(Host, Arc<ResolvedLink>), Missing> {
    let unavailable = |e: crate::domain::Error| {
        tracing::warn!(error = %e, "resolving an alias failed");
        Missing::Page(pages::unavailable())
    };
    let host = state
        .cache
        .host(&state.service, &host_name(headers))
        .await
        .map_err(unavailable)?;
    // Anything not shaped like an alias cannot name a link.
    if !is_alias_shaped(alias) {
        return Err(Missing::Unknown(host));
    }
    match state
        .cache
        .resolve(&state.service, &state.ledger, &host, alias)
        .await
    {
        Ok(Some(link)) => Ok((host, link)),
        Ok(None) => Err(Missing::Unknown(host)),
        Err(e) => Err(unavailable(e)),
    }
}

/// The link `alias` names on the request's host, or the page to answer instead (404, 503):
/// for the pages about a link (statistics, QR codes), which send no one to a fallback.
pub(super) async fn lookup(
    state: &AppState,
    headers: &HeaderMap,
    alias: &str,
) -> Result<Arc<ResolvedLink>, Response> {
    match find(state, headers, alias).await {
        Ok((_, link)) => Ok(link),
        Err(Missing::Unknown(_)) => Err(pages::not_found()),
        Err(Missing::Page(page)) => Err(page),
    }
}

/// The link `alias` names on the request's host and the host, or where a visitor of an
/// unknown alias goes: the host's `unknown_url`, else the 404 page.
async fn visited(
    state: &AppState,
    headers: &HeaderMap,
    alias: &str,
) -> Result<(Host, Arc<ResolvedLink>), Response> {
    find(state, headers, alias)
        .await
        .map_err(|missing| match missing {
            Missing::Unknown(host) => {
                fallback(host.settings.unknown_url.as_deref(), pages::not_found)
            }
            Missing::Page(page) => page,
        })
}

/// A 302 to a host's fallback `url` when it has one, else linkdeck's own `page`.
fn fallback(url: Option<&str>, page: fn() -> Response) -> Response {
    match url {
        Some(url) => redirect(StatusCode::FOUND, &plain_location(url)),
        None => page(),
    }
}

/// What the request's host answers with `answer`, or 503 when its domain cannot be read.
async fn on_host(state: &AppState, headers: &HeaderMap, answer: fn(&Host) -> Response) -> Response {
    match host_of(state, headers).await {
        Ok(host) => answer(&host),
        Err(page) => page,
    }
}

/// The request's host, or the 503 page when its domain cannot be read.
async fn host_of(state: &AppState, headers: &HeaderMap) -> Result<Host, Response> {
    state
        .cache
        .host(&state.service, &host_name(headers))
        .await
        .map_err(|e| {
            tracing::warn!(error = %e, "reading a host's domain failed");
            pages::unavailable()
        })
}

/// `GET /`: the host's `root_url`, else the 404 page as without one; an orphan visit.
pub async fn root(
    State(state): Shared,
    method: Method,
    visitor: Visitor,
    headers: HeaderMap,
) -> Response {
    let host = match host_of(&state, &headers).await {
        Ok(host) => host,
        Err(page) => return page,
    };
    if method == Method::GET {
        orphans::record(&state, &host, OrphanKind::Root, "/", &headers, visitor);
    }
    fallback(host.settings.root_url.as_deref(), pages::not_found)
}

/// Any other path no route answers: `/alias/extra/path` of a link that forwards the rest of
/// its path (`GET` and `HEAD` past the same gates as `GET /alias`, and `POST` from its password
/// form as `POST /alias`), else an unknown alias of the host (a fallback only for `GET` and
/// `HEAD`; any other method gets the 404 page).
pub async fn unknown(
    State(state): Shared,
    visitor: Visitor,
    request: axum::extract::Request,
) -> Response {
    let (parts, body) = request.into_parts();
    let (method, uri, headers) = (&parts.method, &parts.uri, &parts.headers);
    let found = forwarding(&state, uri, headers).await;
    match (method, found) {
        (&Method::GET | &Method::HEAD, Some((host, link, rest))) => {
            let count = method != Method::HEAD;
            let brought = Brought {
                query: uri.query(),
                rest: Some(rest),
            };
            match gate_of(&state, &link, false) {
                Gate::Away(why) => turned_away(&state, &host, &link, why),
                Gate::Password => password_form(&link, PasswordPrompt::First),
                Gate::Through => {
                    visit(&state, (&host, &link), headers, brought, visitor, count).await
                }
            }
        }
        (&Method::POST, Some((host, link, rest))) => {
            let Ok(body) = axum::body::to_bytes(body, PASSWORD_FORM_MAX).await else {
                return password_form(&link, PasswordPrompt::Wrong);
            };
            if has_expired(&state, &link) {
                return turned_away(&state, &host, &link, TurnedAway::Expired);
            }
            if let Err(page) = check_password(&state, &link, headers, &body, visitor).await {
                return page;
            }
            let brought = Brought {
                query: uri.query(),
                rest: Some(rest),
            };
            visit(&state, (&host, &link), headers, brought, visitor, true).await
        }
        (&Method::GET | &Method::HEAD, None) => {
            let host = match host_of(&state, headers).await {
                Ok(host) => host,
                Err(page) => return page,
            };
            if method == Method::GET {
                let kind = OrphanKind::OtherPath;
                orphans::record(&state, &host, kind, uri.path(), headers, visitor);
            }
            fallback(host.settings.unknown_url.as_deref(), pages::not_found)
        }
        _ => pages::not_found(),
    }
}

/// The largest password form read from a forwarded path's `POST`.
const PASSWORD_FORM_MAX: usize = 16 * 1024;

/// The link of `/alias/extra/path` and the rest of the path, when the link forwards the rest
/// of its path and the rest may be forwarded; `None` leaves the path an unknown one, as it was.
async fn forwarding<'u>(
    state: &AppState,
    uri: &'u axum::http::Uri,
    headers: &HeaderMap,
) -> Option<(Host, Arc<ResolvedLink>, &'u str)> {
    let path = uri.path().strip_prefix('/')?;
    let (alias, rest) = path.split_at(path.find('/')?);
    if !forwardable_path(rest) {
        return None;
    }
    let (host, link) = find(state, headers, alias).await.ok()?;
    link.options.forward_path.then_some((host, link, rest))
}

/// `GET /robots.txt`: the host's robots policy (crawlers kept out unless it says otherwise).
pub async fn robots(State(state): Shared, headers: HeaderMap) -> Response {
    on_host(&state, &headers, |host| {
        (
            [
                (header::CONTENT_TYPE, "text/plain; charset=utf-8"),
                (header::CACHE_CONTROL, "max-age=300"),
            ],
            host.settings.robots.body().to_owned(),
        )
            .into_response()
    })
    .await
}

/// A redirect to a fallback or a turned-away link's page: never indexed.
fn redirect(status: StatusCode, location: &str) -> Response {
    link_redirect(status, location, true)
}

/// A link's redirect to `location`; `noindex` unless the link allows indexing.
fn link_redirect(status: StatusCode, location: &str, noindex: bool) -> Response {
    let mut response = status.into_response();
    let headers = response.headers_mut();
    match HeaderValue::from_str(location) {
        Ok(v) => {
            headers.insert(header::LOCATION, v);
        }
        Err(_) => return pages::unavailable(),
    }
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    // A short link is an address, not a page: search engines should index where it leads,
    // unless its owner allows the link itself to be indexed.
    if noindex {
        headers.insert("x-robots-tag", HeaderValue::from_static("noindex"));
    }
    response
}

/// `url` in the one form every `Location` header carries (see [`crate::domain::destination`]):
/// a fallback's or an expiration URL, which take nothing from the visitor.
pub fn plain_location(url: &str) -> String {
    crate::domain::destination(url, &LinkOptions::default(), None, None)
}

/// Whether the link is expired now, by date or by clicks (those not yet written included).
fn has_expired(state: &AppState, link: &ResolvedLink) -> bool {
    state.ledger.status(link, state.service.now()).expired
}

/// Where a link that turns its visitor away sends them: an expired link's expiration URL (at
/// the link's own redirect status), else the host's `expired_url` (302), else linkdeck's page.
/// No click is counted.
fn turned_away(state: &AppState, host: &Host, link: &ResolvedLink, why: TurnedAway) -> Response {
    let own = link.expiration_url.as_deref();
    match turned_away_to(why, own, &host.settings) {
        Some(url) if Some(url) == own => redirect(state.redirect_status, &plain_location(url)),
        to => fallback(to, away_page(why)),
    }
}

fn away_page(why: TurnedAway) -> fn() -> Response {
    match why {
        TurnedAway::Expired => pages::expired,
        TurnedAway::Disabled => pages::disabled,
    }
}

/// The gate of a visit (docs/ARCHITECTURE.md, "A redirect"), the password given or not.
fn gate_of(state: &AppState, link: &ResolvedLink, unlocked: bool) -> Gate {
    gate(
        has_expired(state, link),
        link.password_hash.is_some(),
        unlocked,
        link.disabled,
    )
}

/// The preview of a link past its password step: what `GET /{alias}` would do, shown instead
/// of done. A link that turns its visitor away shows where it sends them (its expiration URL,
/// the host's fallback) or its page: never a destination the link itself refuses.
fn preview_of(state: &AppState, host: &Host, link: &ResolvedLink) -> Response {
    match gate_of(state, link, true) {
        Gate::Away(why) => {
            match turned_away_to(why, link.expiration_url.as_deref(), &host.settings) {
                Some(url) => pages::preview(&link.alias, url),
                None => away_page(why)(),
            }
        }
        _ => pages::preview(&link.alias, &link.url),
    }
}

/// Every URL `link` can send a visitor to: its main URL, each targeting rule's, and its
/// expiration URL.
fn destinations(link: &ResolvedLink) -> impl Iterator<Item = &str> {
    std::iter::once(link.url.as_str())
        .chain(link.geo.iter().map(|r| r.value.as_str()))
        .chain(link.platform.iter().map(|r| r.value.as_str()))
        .chain(link.rotation.iter().map(String::as_str))
        .chain(rule_urls(&link.options.rules))
        .chain(link.expiration_url.as_deref())
}

/// The password form of `link`.
fn password_form(link: &ResolvedLink, prompt: PasswordPrompt) -> Response {
    pages::password_form(&link.alias, prompt, destinations(link))
}

/// The first rule whose key matches.
fn rule_for<'a>(rules: &'a [crate::domain::TargetRule], key: &str) -> Option<&'a str> {
    rules
        .iter()
        .find(|r| r.key.eq_ignore_ascii_case(key))
        .map(|r| r.value.as_str())
}

/// What the visitor brings to a link: the query string, and the rest of the path after the
/// alias (`/extra/path`, already checked by [`crate::domain::forwardable_path`]).
#[derive(Clone, Copy, Default)]
struct Brought<'a> {
    query: Option<&'a str>,
    rest: Option<&'a str>,
}

/// Where a visit sent to `url` (the link's own URL or a rule's) goes: [`destination`], or the
/// link's [`ResolvedLink::location`] when `url` is the link's own and the visitor brings
/// nothing the link would add to it.
fn location<'a>(link: &'a ResolvedLink, url: &str, brought: Brought<'_>) -> Cow<'a, str> {
    let options = &link.options;
    let adds_path = options.forward_path && brought.rest.is_some();
    let adds_query = options.forward_query && brought.query.is_some_and(|q| !q.is_empty());
    if url == link.url && !adds_path && !adds_query {
        return Cow::Borrowed(&link.location);
    }
    Cow::Owned(destination(url, options, brought.rest, brought.query))
}

/// Steps 2 and 4–7 of a redirect (docs/ARCHITECTURE.md, "A redirect") for a visitor who passed
/// the password step (or needs none).
/// `count` is false for HEAD requests: a probe that follows no link is not a click (nor a
/// preview).
async fn visit(
    state: &AppState,
    (host, link): (&Host, &ResolvedLink),
    headers: &HeaderMap,
    brought: Brought<'_>,
    visitor: Visitor,
    count: bool,
) -> Response {
    if let Gate::Away(why) = gate_of(state, link, true) {
        return turned_away(state, host, link, why);
    }
    let ua = headers
        .get(header::USER_AGENT)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("");
    let agent = state.agents.parse(ua);
    let options = &link.options;
    let to = |url: &str| location(link, url, brought);
    if agent.preview && count {
        state.clicks.preview(link.id);
    }
    let noindex = match answer(options, agent.preview) {
        Answer::Card => return pages::card(&link.alias, options, &to(&link.url)),
        Answer::Redirect { noindex } => noindex,
    };
    if agent.bot || !count {
        return link_redirect(state.redirect_status, &to(&link.url), noindex);
    }
    let (rotation, stored) = match clicks::reserve(&state.service, &state.ledger, link).await {
        Ok(Reservation::Exhausted) => return turned_away(state, host, link, TurnedAway::Expired),
        Ok(Reservation::Counted { rotation, stored }) => (rotation, stored),
        Err(e) => {
            tracing::warn!(error = %e, "reserving a click failed");
            return pages::unavailable();
        }
    };
    let rules = &link.options.rules;
    let by_country = rules
        .iter()
        .any(|r| matches!(r.when, Condition::Country { .. }));
    let country = if link.target_type == TargetType::Geo || by_country || state.geo.enabled() {
        state.geo.country(headers, visitor.0)
    } else {
        None
    };
    // The targeting rule that sent the visitor, and its name in the visit log (`country DE`,
    // `platform iOS`, `rotation 2`); none: the link's own URL.
    // The link's own rules first, in their order; then the seed's targeting.
    let by_rule = if rules.is_empty() {
        None
    } else {
        let asked = RuleVisitor {
            now: state.service.now(),
            accept_language: headers
                .get(header::ACCEPT_LANGUAGE)
                .and_then(|v| v.to_str().ok()),
            query: brought.query,
            address: Some(visitor.0),
            browser: agent.browser.as_deref(),
            country: country.as_deref(),
            platform: agent.platform,
            roll: rand::random(),
        };
        first_match(rules, &asked).map(|(i, url)| (url, rule_label(i, &rules[i])))
    };
    let sent = by_rule.or_else(|| match link.target_type {
        TargetType::Geo => country
            .as_deref()
            .and_then(|c| Some((rule_for(&link.geo, c)?, format!("country {c}")))),
        TargetType::Platform => agent
            .platform
            .map(Platform::name)
            .and_then(|p| Some((rule_for(&link.platform, p)?, format!("platform {p}")))),
        TargetType::Rotation => rotation.and_then(|i| {
            Some((
                link.rotation.get(i)?.as_str(),
                format!("rotation {}", i + 1),
            ))
        }),
        TargetType::None => None,
    });
    let (destination, rule) = match sent {
        Some((url, rule)) => (url, Some(rule)),
        None => (link.url.as_str(), None),
    };
    state.clicks.record(
        &state.ledger,
        VisitRow {
            link_id: link.id,
            at: state.service.now().as_second(),
            country,
            platform: agent.os.as_deref().and_then(crate::domain::bound_name),
            browser: agent.browser.as_deref().and_then(crate::domain::bound_name),
            referrer: super::visitor::referrer_host(headers),
            language: super::visitor::language(headers),
            address: state.visitor_addresses.kept(visitor.0),
            rule,
        },
        stored,
    );
    link_redirect(state.redirect_status, &to(destination), noindex)
}

/// `GET /{alias}` (and HEAD, which is answered the same way but never counted). Takes the
/// request whole: the hot path clones no headers.
pub async fn follow(
    State(state): Shared,
    Path(alias): Path<String>,
    visitor: Visitor,
    request: axum::extract::Request,
) -> Response {
    let (parts, _) = request.into_parts();
    alias_visited(&state, &parts, &alias, visitor).await
}

/// What `GET /{alias}` (or `HEAD`) answers: for [`follow`], and for the front door, which
/// calls it without the router (`server/front.rs`).
pub(super) async fn alias_visited(
    state: &AppState,
    request: &axum::http::request::Parts,
    alias: &str,
    visitor: Visitor,
) -> Response {
    let headers = &request.headers;
    let (host, link) = match find(state, headers, alias).await {
        Ok(found) => found,
        Err(Missing::Unknown(host)) => {
            if request.method == Method::GET {
                let kind = if is_alias_shaped(alias) {
                    OrphanKind::UnknownAlias
                } else {
                    OrphanKind::OtherPath
                };
                let path = request.uri.path();
                orphans::record(state, &host, kind, path, headers, visitor);
            }
            return fallback(host.settings.unknown_url.as_deref(), pages::not_found);
        }
        Err(Missing::Page(page)) => return page,
    };
    match gate_of(state, &link, false) {
        Gate::Away(why) => return turned_away(state, &host, &link, why),
        Gate::Password => return password_form(&link, PasswordPrompt::First),
        Gate::Through => {}
    }
    let count = request.method != Method::HEAD;
    let brought = Brought {
        query: request.uri.query(),
        rest: None,
    };
    visit(state, (&host, &link), headers, brought, visitor, count).await
}

/// Checks the `password` field of a form post against the link's hash, rate-limited per
/// visitor and link. `Ok(())` lets the visitor through; `Err` is the page to show instead.
async fn check_password(
    state: &AppState,
    link: &ResolvedLink,
    headers: &HeaderMap,
    body: &Bytes,
    visitor: Visitor,
) -> Result<(), Response> {
    let Some(hash) = link.password_hash.clone() else {
        return Ok(());
    };
    let admitted = match state.passwords.admit(visitor.0, link.id) {
        Ok(admitted) => admitted,
        Err(refused) => return Err(refused_page(link, refused)),
    };
    let form_ok = headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|ct| {
            ct.to_ascii_lowercase()
                .starts_with("application/x-www-form-urlencoded")
        });
    let given = form_ok
        .then(|| serde_qs::from_bytes::<PasswordForm>(body).ok())
        .flatten()
        .and_then(|f| f.password);
    let Some(given) = given else {
        return Err(password_form(link, PasswordPrompt::Wrong));
    };
    match state
        .passwords
        .verify(visitor.0, link.id, admitted, hash, given)
        .await
    {
        Ok(true) => Ok(()),
        Ok(false) => Err(password_form(link, PasswordPrompt::Wrong)),
        Err(refused) => Err(refused_page(link, refused)),
    }
}

fn refused_page(link: &ResolvedLink, refused: Refused) -> Response {
    let prompt = match refused {
        Refused::TooMany { retry_after } => PasswordPrompt::TooMany { retry_after },
        Refused::Busy => PasswordPrompt::Busy,
    };
    password_form(link, prompt)
}

/// The password page's form; other fields are ignored.
#[derive(serde::Deserialize)]
struct PasswordForm {
    password: Option<String>,
}

/// `POST /{alias}`: the password form.
pub async fn unlock(
    State(state): Shared,
    Path(alias): Path<String>,
    RawQuery(query): RawQuery,
    visitor: Visitor,
    headers: HeaderMap,
    body: Bytes,
) -> Result<Response, Response> {
    let (host, link) = visited(&state, &headers, &alias).await?;
    if has_expired(&state, &link) {
        return Ok(turned_away(&state, &host, &link, TurnedAway::Expired));
    }
    check_password(&state, &link, &headers, &body, visitor).await?;
    let brought = Brought {
        query: query.as_deref(),
        rest: None,
    };
    Ok(visit(&state, (&host, &link), &headers, brought, visitor, true).await)
}

/// `GET /{alias}/+`: where the link leads, without counting.
pub async fn preview(
    State(state): Shared,
    Path(alias): Path<String>,
    headers: HeaderMap,
) -> Result<Response, Response> {
    let (host, link) = visited(&state, &headers, &alias).await?;
    // The same order as a visit: expiry first (an expired link previews as such), then the
    // password, then the rest.
    if gate_of(&state, &link, false) == Gate::Password {
        return Ok(password_form(&link, PasswordPrompt::First));
    }
    Ok(preview_of(&state, &host, &link))
}

/// `POST /{alias}/+`: the preview of a password-protected link.
pub async fn unlock_preview(
    State(state): Shared,
    Path(alias): Path<String>,
    visitor: Visitor,
    headers: HeaderMap,
    body: Bytes,
) -> Result<Response, Response> {
    let (host, link) = visited(&state, &headers, &alias).await?;
    // An expired link previews as such, password or not.
    if !has_expired(&state, &link) {
        check_password(&state, &link, &headers, &body, visitor).await?;
    }
    Ok(preview_of(&state, &host, &link))
}
