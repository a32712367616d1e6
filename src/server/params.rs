//! List query parameters, read strictly: a value that is present but wrong is a 422 naming the
//! parameter, never silently replaced by a default. Empty values count as absent; parameters the
//! lists do not know are ignored (caches and proxies add their own).

use std::collections::BTreeMap;

use super::error::ApiError;
use super::form::pairs;
use crate::domain::{FieldErrors, Id, LinkQuery, SearchBy, Sort, SpaceQuery, StatusFilter};

struct Params(BTreeMap<String, String>);

impl Params {
    fn read(raw: Option<&str>, known: &[&str]) -> Result<Params, ApiError> {
        let mut errors = FieldErrors::default();
        let mut map = BTreeMap::new();
        let mut seen = std::collections::BTreeSet::new();
        for (k, v) in pairs(raw.unwrap_or("").as_bytes(), "query")? {
            if !known.contains(&k.as_str()) {
                continue;
            }
            if !seen.insert(k.clone()) {
                errors.add(&k, "is given more than once");
            } else if !v.trim().is_empty() {
                map.insert(k, v);
            }
        }
        errors.into_result(Params(map)).map_err(ApiError::from)
    }

    fn get(&self, name: &str) -> Option<&str> {
        self.0.get(name).map(String::as_str)
    }

    fn number<T: std::str::FromStr>(
        &self,
        name: &str,
        errors: &mut FieldErrors,
        what: &str,
    ) -> Option<T> {
        let raw = self.get(name)?;
        match raw.trim().parse::<T>() {
            Ok(n) => Some(n),
            Err(_) => {
                errors.add(name, what.to_owned());
                None
            }
        }
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
            "search", "by", "status", "space", "domain", "sort", "page", "per_page",
        ],
    )?;
    let mut errors = FieldErrors::default();
    let mut q = LinkQuery {
        search: p.get("search").map(str::to_owned),
        ..LinkQuery::default()
    };
    if let Some(by) = p.get("by") {
        match SearchBy::parse(by) {
            Some(by) => q.by = by,
            None => errors.add("by", "must be title, alias or url"),
        }
    }
    if let Some(status) = p.get("status") {
        match StatusFilter::parse(status) {
            Some(s) => q.status = s,
            None => errors.add(
                "status",
                "must be 0 (all), 1 (active), 2 (expired) or 3 (disabled)",
            ),
        }
    }
    if let Some(sort) = p.get("sort") {
        match Sort::parse(sort) {
            Some(s) => q.sort = s,
            None => errors.add("sort", "must be desc, asc, max or min"),
        }
    }
    q.space = p.id("space", &mut errors);
    q.domain = p.id("domain", &mut errors);
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
    if let Some(sort) = p.get("sort") {
        match Sort::parse(sort) {
            Some(s @ (Sort::Desc | Sort::Asc)) => q.sort = s,
            _ => errors.add("sort", "must be desc or asc"),
        }
    }
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
    if let Some(space) = q.space {
        s.append_pair("space", &space.to_string());
    }
    if let Some(domain) = q.domain {
        s.append_pair("domain", &domain.to_string());
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

#[cfg(test)]
mod tests {
    use super::*;

    fn fields(e: ApiError) -> Vec<String> {
        match e {
            ApiError::Domain(crate::domain::Error::Validation(f)) => {
                f.iter().map(|(k, _)| k.to_owned()).collect()
            }
            other => panic!("not a validation error: {other:?}"),
        }
    }

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
