//! List query parameters, read strictly: a value that is present but wrong is a 422 naming the
//! parameter, never silently replaced by a default. Empty values count as absent; parameters the
//! lists do not know are ignored (caches and proxies add their own).

use std::collections::BTreeMap;

use super::error::ApiError;
use super::form::Fields;
use crate::domain::{
    FieldErrors, Id, LinkQuery, OnConflict, PeriodSpec, Preset, SearchBy, Sort, SpaceFilter,
    SpaceQuery, StatsPart, StatsQuery, StatsScope, StatusFilter, TAG_SEPARATOR, TOP_MAX, TagMatch,
    VisitQuery, tags_of_text,
};
use crate::wire::visits::VisitFormat;

struct Params(BTreeMap<String, String>);

impl Params {
    fn read(raw: Option<&str>, known: &[&str]) -> Result<Params, ApiError> {
        // Flat keys (no bracket nesting): every value of every parameter, so a repeated one can
        // be named rather than silently resolved.
        let all: Fields<Vec<String>> = serde_qs::Config::new()
            .max_depth(0)
            .deserialize_str(raw.unwrap_or(""))
            .map_err(|e| ApiError::field("query", format!("cannot be read: {e}")))?;
        let mut errors = FieldErrors::default();
        let mut map = BTreeMap::new();
        for (k, values) in all.0 {
            if !known.contains(&k.as_str()) {
                continue;
            }
            let mut values = match values {
                Ok(values) => values,
                Err(e) => {
                    errors.add(&k, format!("cannot be read: {e}"));
                    continue;
                }
            };
            if values.len() > 1 {
                errors.add(&k, "is given more than once");
            } else if let Some(v) = values.pop().filter(|v| !v.trim().is_empty()) {
                map.insert(k, v);
            }
        }
        errors.into_result(Params(map)).map_err(ApiError::from)
    }

    fn get(&self, name: &str) -> Option<&str> {
        self.0.get(name).map(String::as_str)
    }

    /// Parameter `name` as `parse` reads it; a value it refuses is a field error saying what it
    /// `must` be, never a silent default.
    fn read_as<T>(
        &self,
        name: &str,
        parse: impl FnOnce(&str) -> Option<T>,
        errors: &mut FieldErrors,
        must: &str,
    ) -> Option<T> {
        let read = parse(self.get(name)?);
        if read.is_none() {
            errors.add(name, must.to_owned());
        }
        read
    }

    fn number<T: std::str::FromStr>(
        &self,
        name: &str,
        errors: &mut FieldErrors,
        what: &str,
    ) -> Option<T> {
        self.read_as(name, |raw| raw.trim().parse().ok(), errors, what)
    }

    fn id(&self, name: &str, errors: &mut FieldErrors) -> Option<Id> {
        match self.number::<Id>(name, errors, "must be the id of one of your records") {
            Some(0) => None,
            Some(id) if id < 0 => {
                errors.add(name, "must be the id of one of your records");
                None
            }
            other => other,
        }
    }

    /// `space`: a space's id, or `none` for links in no space (linkdeck's word; phpShort has
    /// only ids). `0`, as phpShort reads it, is no filter.
    fn space(&self, errors: &mut FieldErrors) -> SpaceFilter {
        let Some(raw) = self.get("space").map(str::trim) else {
            return SpaceFilter::Any;
        };
        if raw.eq_ignore_ascii_case(SpaceFilter::NONE_WORD) {
            return SpaceFilter::NoSpace;
        }
        match raw.parse::<Id>() {
            Ok(0) => SpaceFilter::Any,
            Ok(id) if id > 0 => SpaceFilter::In(id),
            _ => {
                errors.add(
                    "space",
                    "must be the id of one of your spaces, or none for links in no space",
                );
                SpaceFilter::Any
            }
        }
    }

    fn paging(&self, errors: &mut FieldErrors) -> (u32, u32) {
        let page = self
            .number::<u32>("page", errors, "must be a whole number from 1")
            .unwrap_or(1);
        let per_page = self
            .number::<u32>("per_page", errors, "must be a whole number from 10 to 100")
            .unwrap_or(crate::domain::LinkQuery::default().per_page);
        (page, per_page)
    }
}

pub fn link_query(raw: Option<&str>) -> Result<LinkQuery, ApiError> {
    let p = Params::read(
        raw,
        &[
            "search",
            "by",
            "status",
            "space",
            "domain",
            "tags",
            "tag_match",
            "sort",
            "page",
            "per_page",
        ],
    )?;
    let mut errors = FieldErrors::default();
    let mut q = LinkQuery {
        search: p.get("search").map(str::to_owned),
        ..LinkQuery::default()
    };
    let by = p.read_as(
        "by",
        SearchBy::parse,
        &mut errors,
        "must be title, alias or url",
    );
    q.by = by.unwrap_or(q.by);
    let status = p.read_as(
        "status",
        StatusFilter::parse,
        &mut errors,
        "must be 0 (all), 1 (active), 2 (expired) or 3 (disabled)",
    );
    q.status = status.unwrap_or(q.status);
    let sort = p.read_as(
        "sort",
        Sort::parse,
        &mut errors,
        "must be desc, asc, max or min",
    );
    q.sort = sort.unwrap_or(q.sort);
    q.space = p.space(&mut errors);
    q.domain = p.id("domain", &mut errors);
    if let Some(tags) = p.get("tags") {
        let mut tag_errors = FieldErrors::default();
        q.tags = tags_of_text(tags, "tags", &mut tag_errors);
        errors.merge(tag_errors);
    }
    let tag_match = p.read_as(
        "tag_match",
        TagMatch::parse,
        &mut errors,
        "must be all or any",
    );
    q.tag_match = tag_match.unwrap_or_default();
    (q.page, q.per_page) = p.paging(&mut errors);
    if errors.is_empty()
        && let Err(e) = q.validate()
    {
        errors.merge(e);
    }
    errors.into_result(q).map_err(ApiError::from)
}

pub fn space_query(raw: Option<&str>) -> Result<SpaceQuery, ApiError> {
    let p = Params::read(raw, &["search", "sort", "page", "per_page"])?;
    let mut errors = FieldErrors::default();
    let mut q = SpaceQuery {
        search: p.get("search").map(str::to_owned),
        ..SpaceQuery::default()
    };
    // Spaces have no clicks to sort by.
    let sort = p.read_as(
        "sort",
        |s| Sort::parse(s).filter(|s| matches!(s, Sort::Desc | Sort::Asc)),
        &mut errors,
        "must be desc or asc",
    );
    q.sort = sort.unwrap_or(q.sort);
    (q.page, q.per_page) = p.paging(&mut errors);
    if errors.is_empty()
        && let Err(e) = q.validate()
    {
        errors.merge(e);
    }
    errors.into_result(q).map_err(ApiError::from)
}

/// `page` and `per_page` of the domain list.
pub fn paging(raw: Option<&str>) -> Result<(u32, u32), ApiError> {
    let p = Params::read(raw, &["page", "per_page"])?;
    let mut errors = FieldErrors::default();
    let (page, per_page) = p.paging(&mut errors);
    if errors.is_empty() {
        let q = SpaceQuery {
            page,
            per_page,
            ..SpaceQuery::default()
        };
        if let Err(e) = q.validate() {
            errors.merge(e);
        }
    }
    errors.into_result((page, per_page)).map_err(ApiError::from)
}

/// Periods a stats question may be stepped back at most.
const MAX_OFFSET: u32 = 10_000;

/// The query of a stats path (see `wire::stats`): `link` for `/stats/{id}`, `None` for the
/// account-wide path, which also takes `space` or `domain`. The zone is the one the caller asked
/// for, if any.
pub fn stats_query(
    raw: Option<&str>,
    link: Option<Id>,
) -> Result<(StatsQuery, Option<jiff::tz::TimeZone>), ApiError> {
    let p = Params::read(
        raw,
        &[
            "from", "to", "period", "offset", "name", "limit", "space", "domain", "tag", "timezone",
        ],
    )?;
    let mut errors = FieldErrors::default();
    let date = |name: &str, errors: &mut FieldErrors| {
        let raw = p.get(name)?;
        match raw.trim().parse::<jiff::civil::Date>() {
            Ok(d) => Some(d),
            Err(_) => {
                errors.add(name, "must be a date written YYYY-MM-DD");
                None
            }
        }
    };
    let (from, to) = (date("from", &mut errors), date("to", &mut errors));
    let offset = p
        .number::<u32>(
            "offset",
            &mut errors,
            "must be a whole number of periods back",
        )
        .unwrap_or(0);
    if offset > MAX_OFFSET {
        errors.add("offset", format!("must be at most {MAX_OFFSET}"));
    }
    let period = match (p.get("period"), p.get("from"), p.get("to")) {
        (Some(_), Some(_), _) | (Some(_), _, Some(_)) => {
            errors.add("period", "give a period or from and to, not both");
            PeriodSpec::default()
        }
        (Some(name), None, None) => match Preset::parse(name) {
            Some(preset) => PeriodSpec::Preset {
                preset,
                back: offset,
            },
            None => {
                errors.add("period", "must be 24h, 7d, 30d, 90d, 12m or all");
                PeriodSpec::default()
            }
        },
        (None, Some(_), None) => {
            errors.add("to", "is required with from");
            PeriodSpec::default()
        }
        (None, None, Some(_)) => {
            errors.add("from", "is required with to");
            PeriodSpec::default()
        }
        (None, Some(_), Some(_)) => match (from, to) {
            (Some(from), Some(to)) => PeriodSpec::Dates { from, to },
            _ => PeriodSpec::default(),
        },
        (None, None, None) => PeriodSpec::default().stepped(offset as i32),
    };
    let only = match p.get("name") {
        None => None,
        Some(name) => match StatsPart::parse(name) {
            Some(part) => Some(part),
            None => {
                errors.add(
                    "name",
                    "must be clicks, country, platform, browser, referrer or language",
                );
                None
            }
        },
    };
    let top = p
        .number::<u32>(
            "limit",
            &mut errors,
            &format!("must be from 1 to {TOP_MAX}"),
        )
        .unwrap_or(crate::domain::TOP_DEFAULT);
    let timezone = p
        .get("timezone")
        .and_then(|name| match jiff::tz::TimeZone::get(name.trim()) {
            Ok(tz) => Some(tz),
            Err(_) => {
                errors.add(
                    "timezone",
                    "must be an IANA time zone name such as Europe/Berlin",
                );
                None
            }
        });
    let group = group_scope(&p, &mut errors);
    let scope = match (link, group) {
        (Some(id), None) => StatsScope::Link(id),
        (Some(_), Some((name, _))) => {
            errors.add(name, "applies to the account's statistics, not a link's");
            StatsScope::Account
        }
        (None, Some((_, scope))) => scope,
        (None, None) => StatsScope::Account,
    };
    let query = StatsQuery {
        scope,
        period,
        only,
        top,
    };
    if let Err(e) = query.validate()
        && !errors.contains("limit")
    {
        errors.merge(e);
    }
    errors
        .into_result((query, timezone))
        .map_err(ApiError::from)
}

/// The query string of page `page` of a link list, keeping every filter that is not a default.
pub fn link_query_string(q: &LinkQuery, page: u32) -> String {
    let mut s = url::form_urlencoded::Serializer::new(String::new());
    if let Some(search) = q.search_term() {
        s.append_pair("search", search);
    }
    if q.by != SearchBy::default() {
        s.append_pair("by", q.by.as_str());
    }
    if q.status != StatusFilter::default() {
        s.append_pair("status", &q.status.number().to_string());
    }
    if let Some(space) = q.space.wire() {
        s.append_pair("space", &space);
    }
    if let Some(domain) = q.domain {
        s.append_pair("domain", &domain.to_string());
    }
    if !q.tags.is_empty() {
        s.append_pair("tags", &q.tags.join(&TAG_SEPARATOR.to_string()));
    }
    if q.tag_match != TagMatch::default() {
        s.append_pair("tag_match", q.tag_match.as_str());
    }
    if q.sort != Sort::default() {
        s.append_pair("sort", q.sort.as_str());
    }
    s.append_pair("per_page", &q.per_page.to_string());
    s.append_pair("page", &page.to_string());
    s.finish()
}

pub fn space_query_string(q: &SpaceQuery, page: u32) -> String {
    let mut s = url::form_urlencoded::Serializer::new(String::new());
    if let Some(search) = q.search_term() {
        s.append_pair("search", search);
    }
    if q.sort != Sort::default() {
        s.append_pair("sort", q.sort.as_str());
    }
    s.append_pair("per_page", &q.per_page.to_string());
    s.append_pair("page", &page.to_string());
    s.finish()
}

pub fn paging_query_string(per_page: u32, page: u32) -> String {
    format!("per_page={per_page}&page={page}")
}

/// The query of linkdeck's import: what a taken alias does (`on_conflict`, fail by default).
pub fn import_query(raw: Option<&str>) -> Result<OnConflict, ApiError> {
    let p = Params::read(raw, &["on_conflict"])?;
    let mut errors = FieldErrors::default();
    let on_conflict = p.read_as(
        "on_conflict",
        OnConflict::parse,
        &mut errors,
        "must be fail, skip or rename",
    );
    errors
        .into_result(on_conflict.unwrap_or_default())
        .map_err(ApiError::from)
}

/// `ids=1,2,3`: one to `max` link ids, each a positive whole number.
pub fn link_ids(raw: Option<&str>, max: usize) -> Result<Vec<Id>, ApiError> {
    let p = Params::read(raw, &["ids"])?;
    let must = format!("must be 1 to {max} link ids joined by commas");
    let Some(list) = p.get("ids") else {
        return Err(ApiError::field("ids", must));
    };
    let ids: Option<Vec<Id>> = list
        .split(',')
        .map(|id| id.trim().parse::<Id>().ok().filter(|id| *id > 0))
        .collect();
    match ids {
        Some(ids) if !ids.is_empty() && ids.len() <= max => Ok(ids),
        _ => Err(ApiError::field("ids", must)),
    }
}

/// At most one of `space`, `domain` (ids) and `tag`, with the parameter that gave it.
fn group_scope(p: &Params, errors: &mut FieldErrors) -> Option<(&'static str, StatsScope)> {
    let tag = p.get("tag").and_then(|raw| match crate::domain::tag(raw) {
        Ok(tag) => Some(StatsScope::Tag(tag)),
        Err(problem) => {
            errors.add("tag", problem);
            None
        }
    });
    let scopes = [
        ("space", p.id("space", errors).map(StatsScope::Space)),
        ("domain", p.id("domain", errors).map(StatsScope::Domain)),
        ("tag", tag),
    ];
    let mut given = scopes
        .into_iter()
        .filter_map(|(name, scope)| Some((name, scope?)));
    let first = given.next();
    if let Some((name, _)) = given.next() {
        errors.add(name, "give at most one of space, domain and tag");
    }
    first
}

/// At most one of `link`, `space`, `domain` (ids) and `tag`; none: the whole account.
fn visit_scope(p: &Params, errors: &mut FieldErrors) -> StatsScope {
    let link = p.id("link", errors);
    match (link, group_scope(p, errors)) {
        (Some(_), Some(_)) => {
            errors.add("link", "give at most one of link, space, domain and tag");
            StatsScope::Account
        }
        (Some(id), None) => StatsScope::Link(id),
        (None, group) => group.map_or(StatsScope::Account, |(_, scope)| scope),
    }
}

/// `GET /api/linkdeck/visits/live`: the scope as [`visits_query`] reads it, and `after` (a
/// visit's id: start after it rather than now).
pub fn live_query(raw: Option<&str>) -> Result<(StatsScope, Option<Id>), ApiError> {
    let p = Params::read(raw, &["link", "space", "domain", "tag", "after"])?;
    let mut errors = FieldErrors::default();
    let scope = visit_scope(&p, &mut errors);
    let after = p.number::<Id>("after", &mut errors, "must be the id of a visit");
    errors.into_result((scope, after)).map_err(ApiError::from)
}

/// `GET /api/linkdeck/visits`: `format` (`ndjson`, the default, or `csv`); at most one of
/// `link`, `space` and `domain` (ids; none: the whole account); `since` and `until` (RFC 3339
/// instants, `until` excluded); `after` (the id of the last visit an earlier export read).
pub fn visits_query(raw: Option<&str>) -> Result<(VisitQuery, VisitFormat), ApiError> {
    let p = Params::read(
        raw,
        &[
            "format", "link", "space", "domain", "tag", "since", "until", "after",
        ],
    )?;
    let mut errors = FieldErrors::default();
    let format = p
        .read_as(
            "format",
            VisitFormat::parse,
            &mut errors,
            "must be ndjson or csv",
        )
        .unwrap_or_default();
    let scope = visit_scope(&p, &mut errors);
    let instant = |name: &str, errors: &mut FieldErrors| {
        p.read_as(
            name,
            |raw| raw.trim().parse::<jiff::Timestamp>().ok(),
            errors,
            "must be an instant written as RFC 3339, such as 2026-11-27T09:00:00Z",
        )
    };
    let (since, until) = (instant("since", &mut errors), instant("until", &mut errors));
    if let (Some(since), Some(until)) = (since, until)
        && until < since
    {
        errors.add("until", "must not be before since");
    }
    let after = p.number::<Id>("after", &mut errors, "must be the id of a visit");
    errors
        .into_result((
            VisitQuery {
                scope,
                since,
                until,
                after,
            },
            format,
        ))
        .map_err(ApiError::from)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::server::error::invalid_fields as fields;

    #[test]
    fn bad_values_are_named_not_replaced() {
        assert_eq!(
            fields(link_query(Some("status=9")).unwrap_err()),
            ["status"]
        );
        assert_eq!(
            fields(link_query(Some("sort=up&by=x")).unwrap_err()),
            ["by", "sort"]
        );
        assert_eq!(fields(link_query(Some("page=0")).unwrap_err()), ["page"]);
        assert_eq!(fields(link_query(Some("page=-1")).unwrap_err()), ["page"]);
        assert_eq!(
            fields(link_query(Some("per_page=5")).unwrap_err()),
            ["per_page"]
        );
        assert_eq!(fields(space_query(Some("sort=max")).unwrap_err()), ["sort"]);
        for bad in ["space=-3", "space=blue", "space=1.5"] {
            assert_eq!(
                fields(link_query(Some(bad)).unwrap_err()),
                ["space"],
                "{bad}"
            );
        }
    }

    #[test]
    fn a_space_is_an_id_none_or_phpshorts_zero_for_any() {
        let space = |raw: &str| link_query(Some(raw)).unwrap().space;
        assert_eq!(space("space=4"), SpaceFilter::In(4));
        assert_eq!(space("space=none"), SpaceFilter::NoSpace);
        assert_eq!(space("space=None"), SpaceFilter::NoSpace);
        assert_eq!(space("space=0"), SpaceFilter::Any);
        assert_eq!(space("page=1"), SpaceFilter::Any);
        let q = link_query(Some("space=none")).unwrap();
        assert_eq!(link_query_string(&q, 2), "space=none&per_page=10&page=2");
    }

    #[test]
    fn stats_parameters_round_trip_and_bad_ones_are_named() {
        let tz = jiff::tz::TimeZone::get("Europe/Berlin").unwrap();
        let query = StatsQuery {
            scope: StatsScope::Space(4),
            period: PeriodSpec::Preset {
                preset: Preset::Days7,
                back: 2,
            },
            only: Some(StatsPart::Dimension(crate::domain::Dimension::Referrer)),
            top: 25,
        };
        let raw = url::form_urlencoded::Serializer::new(String::new())
            .extend_pairs(crate::wire::stats::query_params(&query, &tz))
            .finish();
        let (back, zone) = stats_query(Some(&raw), None).unwrap();
        assert_eq!(back, query);
        assert_eq!(zone.unwrap().iana_name(), Some("Europe/Berlin"));
        let dates = stats_query(Some("from=2026-01-01&to=2026-01-31"), Some(3))
            .unwrap()
            .0;
        assert_eq!(dates.scope, StatsScope::Link(3));
        assert!(matches!(dates.period, PeriodSpec::Dates { .. }));
        assert_eq!(
            fields(
                stats_query(
                    Some("from=2026-13-01&period=7d&name=city&limit=0&timezone=Mars/Base"),
                    None
                )
                .unwrap_err()
            ),
            ["from", "limit", "name", "period", "timezone"]
        );
        assert_eq!(
            fields(stats_query(Some("to=2026-01-01"), None).unwrap_err()),
            ["from"]
        );
        assert_eq!(
            fields(stats_query(Some("space=1"), Some(2)).unwrap_err()),
            ["space"]
        );
        assert_eq!(
            fields(stats_query(Some("space=1&domain=2"), None).unwrap_err()),
            ["domain"]
        );
    }

    #[test]
    fn linkdeck_parameters_are_read_strictly() {
        assert_eq!(import_query(None).unwrap(), OnConflict::Fail);
        assert_eq!(
            import_query(Some("on_conflict=Rename")).unwrap(),
            OnConflict::Rename
        );
        assert_eq!(
            fields(import_query(Some("on_conflict=merge")).unwrap_err()),
            ["on_conflict"]
        );
        assert_eq!(link_ids(Some("ids=3,1,2"), 100).unwrap(), [3, 1, 2]);
        for bad in [
            None,
            Some("ids="),
            Some("ids=1,x"),
            Some("ids=0"),
            Some("ids=1,2,3"),
        ] {
            assert_eq!(fields(link_ids(bad, 2).unwrap_err()), ["ids"], "{bad:?}");
        }
    }

    #[test]
    fn page_urls_keep_every_filter() {
        let q = link_query(Some(
            "search=a+b&status=2&sort=max&space=4&by=url&per_page=25",
        ))
        .unwrap();
        let s = link_query_string(&q, 3);
        assert_eq!(
            s,
            "search=a+b&by=url&status=2&space=4&sort=max&per_page=25&page=3"
        );
        assert_eq!(link_query(Some(&s)).unwrap().page, 3);
    }
}
