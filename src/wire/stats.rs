//! The statistics paths of the v1 API: `GET /api/v1/stats/{link_id}` and `GET /api/v1/stats`
//! (the account, or `space=`/`domain=`). Their query parameters, written by the client and read
//! by the server, and the record the server answers:
//!
//! ```text
//! from, to     YYYY-MM-DD, both days included, read in `timezone`     (or)
//! period       24h | 7d | 30d | 90d | 12m | all, with `offset` periods back (default 30d)
//! name         clicks | country | platform | browser | referrer | language: one part only
//! limit        values per breakdown and links in the top list, 1–100 (default 10)
//! timezone     an IANA zone name (default: the zone the server reads the owner's dates in)
//! ```
//!
//! ```json
//! {"data": {"scope": "link", "id": 12, "timezone": "Europe/Berlin",
//!   "from": "2026-11-01", "to": "2026-11-30", "starts_at": "…Z", "ends_at": "…Z",
//!   "interval": "day", "clicks": 120, "previous_clicks": 100,
//!   "timeline": [{"starts_at": "…Z", "clicks": 3}, …],
//!   "country": {"top": [{"value": "DE", "clicks": 50}, {"value": null, "clicks": 2}], "other": 4},
//!   "platform": {…}, "browser": {…}, "referrer": {…}, "language": {…},
//!   "top_links": [{"id": 7, "alias": "spring", "url": "https://…", "clicks": 40}]},
//!  "status": 200}
//! ```
//! A part not asked for (`name=`) is left out; `previous_clicks` is null for all time; a
//! visit without a value (unknown, or no referrer) has `"value": null`.

use jiff::tz::TimeZone;
use serde_json::{Map, Value, json};

use crate::domain::{Period, PeriodSpec, Stats, StatsQuery, StatsScope};

/// The query parameters of `query`, asking in `timezone` (by IANA name, when it has one).
pub fn query_params(query: &StatsQuery, timezone: &TimeZone) -> Vec<(&'static str, String)> {
    let mut params = Vec::new();
    match query.period {
        PeriodSpec::Preset { preset, back } => {
            params.push(("period", preset.as_str().to_owned()));
            if back > 0 {
                params.push(("offset", back.to_string()));
            }
        }
        PeriodSpec::Dates { from, to } => {
            params.push(("from", from.to_string()));
            params.push(("to", to.to_string()));
        }
    }
    if let Some(part) = query.only {
        params.push(("name", part.as_str().to_owned()));
    }
    if query.top != crate::domain::TOP_DEFAULT {
        params.push(("limit", query.top.to_string()));
    }
    match &query.scope {
        StatsScope::Space(id) => params.push(("space", id.to_string())),
        StatsScope::Domain(id) => params.push(("domain", id.to_string())),
        StatsScope::Tag(tag) => params.push(("tag", tag.clone())),
        StatsScope::Link(_) | StatsScope::Account => {}
    }
    if let Some(name) = timezone.iana_name() {
        params.push(("timezone", name.to_owned()));
    }
    params
}

/// The path under `/api/v1/` that answers `scope`.
pub fn path(scope: &StatsScope) -> String {
    match scope {
        StatsScope::Link(id) => format!("stats/{id}"),
        _ => "stats".to_owned(),
    }
}

/// The record of an answer, read in `tz`.
pub fn record(stats: &Stats, tz: &TimeZone) -> Value {
    let mut data = Map::new();
    let (scope, id) = match &stats.scope {
        StatsScope::Link(id) => ("link", Some(*id)),
        StatsScope::Space(id) => ("space", Some(*id)),
        StatsScope::Domain(id) => ("domain", Some(*id)),
        StatsScope::Tag(tag) => {
            data.insert("tag".into(), json!(tag));
            ("tag", None)
        }
        StatsScope::Account => ("account", None),
    };
    data.insert("scope".into(), json!(scope));
    data.insert("id".into(), json!(id));
    data.insert("timezone".into(), json!(tz.iana_name()));
    let period = Period {
        from: stats.from,
        to: stats.to,
        interval: stats.interval,
        buckets: Vec::new(),
        previous: None,
    };
    let (from, to) = period.dates(tz);
    data.insert("from".into(), json!(from.to_string()));
    data.insert("to".into(), json!(to.to_string()));
    data.insert("starts_at".into(), json!(stats.from));
    data.insert("ends_at".into(), json!(stats.to));
    data.insert("interval".into(), json!(stats.interval.as_str()));
    data.insert("clicks".into(), json!(stats.total));
    data.insert("previous_clicks".into(), json!(stats.previous));
    if !stats.timeline.is_empty() {
        let timeline: Vec<Value> = stats
            .timeline
            .iter()
            .map(|b| json!({"starts_at": b.start, "clicks": b.clicks}))
            .collect();
        data.insert("timeline".into(), Value::Array(timeline));
    }
    for b in &stats.breakdowns {
        let top: Vec<Value> = b
            .top
            .iter()
            .map(|v| json!({"value": v.value, "clicks": v.clicks}))
            .collect();
        data.insert(
            b.dimension.as_str().into(),
            json!({"top": top, "other": b.other}),
        );
    }
    if let Some(links) = &stats.top_links {
        let links: Vec<Value> = links
            .iter()
            .map(|l| json!({"id": l.id, "alias": l.alias, "url": l.url, "clicks": l.clicks}))
            .collect();
        data.insert("top_links".into(), Value::Array(links));
    }
    json!({"data": data, "status": 200})
}
