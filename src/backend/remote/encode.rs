//! Request bodies and list queries as a v1 server reads them.
//!
//! Bodies are form-urlencoded by `serde_qs` straight from the domain's input types, whose field
//! names are the wire names: nested rules become `geo[0][key]=US`. The brackets go out
//! unencoded, which is what PHP and `linkdeck serve` both read. Values use the WHATWG query
//! percent-encode set plus the form's own delimiters (`&`, `=`, `+`, `%`, `[`, `]`, `#`), with
//! spaces as `+` (`platform[0][key]=OS+X`); `:`, `/` and `?` stay plain, which form decoders
//! read the same as their escapes.
//!
//! Expiry goes out as typed (`expiration_date`, `expiration_time`): the server reads it in the
//! account's zone and answers with the instant (`ends_at`), which is what linkdeck shows. The
//! client cannot know the account's zone, so it does not convert.
//!
//! An empty targeting list sends nothing for that list: a form has no way to say "empty list"
//! that phpShort reads. Clearing targeting is done with `target_type=0`.

use crate::domain::{
    DomainInput, Error, LinkField, LinkInput, LinkQuery, Result, SpaceInput, SpaceQuery,
    StatusFilter, TAG_SEPARATOR, TagMatch,
};

pub fn link_form(input: &LinkInput) -> Result<String> {
    // serde_qs 1.x writes an empty list as `geo=`, which PHP reads as a string, not a list:
    // empty lists are left out here and sent as one blank row below.
    // A row with neither field would write nothing and leave a gap in the row numbers, which
    // the server refuses: it goes out as an empty value instead, keeping every later row's
    // index (and so the index its errors are named by).
    let mut lists = input.clone();
    for (_, list) in lists.lists_mut() {
        if list.as_ref().is_some_and(Vec::is_empty) {
            *list = None;
        }
        for row in list.iter_mut().flatten() {
            if row.key.is_none() && row.value.is_none() {
                row.value = Some(String::new());
            }
        }
    }
    let mut body = serde_qs::to_string(&lists)
        .map_err(|e| Error::field("request", format!("cannot be encoded: {e}")))?;
    for (field, list) in input.lists() {
        if list.as_ref().is_some_and(Vec::is_empty) {
            if !body.is_empty() {
                body.push('&');
            }
            body.push_str(&blank_row(field));
        }
    }
    Ok(body)
}

/// One row with every cell empty: `geo[0][key]=&geo[0][value]=`, `rotation[0][value]=`.
fn blank_row(list: LinkField) -> String {
    let name = list.name();
    if list.is_keyed() {
        format!("{name}[0][key]=&{name}[0][value]=")
    } else {
        format!("{name}[0][value]=")
    }
}

pub fn space_form(input: &SpaceInput) -> Result<String> {
    form(input)
}

/// A domain's settings as a form (linkdeck's own fields: only a linkdeck server is sent them).
pub fn domain_form(input: &DomainInput) -> Result<String> {
    form(input)
}

fn form(input: &impl serde::Serialize) -> Result<String> {
    serde_qs::to_string(input)
        .map_err(|e| Error::field("request", format!("cannot be encoded: {e}")))
}

/// Every filter of a link list, with the page asked for. Page URLs are always built here, never
/// taken from the server's `links.next` (phpShort's drops the status filter).
pub fn link_query(query: &LinkQuery) -> Vec<(&'static str, String)> {
    let mut params = paging(query.page, query.per_page);
    if let Some(term) = query.search_term() {
        params.push(("search", term.to_owned()));
        params.push(("by", query.by.as_str().to_owned()));
    }
    if query.status != StatusFilter::All {
        params.push(("status", query.status.number().to_string()));
    }
    if let Some(space) = query.space.wire() {
        params.push(("space", space));
    }
    if let Some(domain) = query.domain {
        params.push(("domain", domain.to_string()));
    }
    if !query.tags.is_empty() {
        params.push(("tags", query.tags.join(&TAG_SEPARATOR.to_string())));
    }
    if query.tag_match != TagMatch::default() {
        params.push(("tag_match", query.tag_match.as_str().to_owned()));
    }
    params.push(("sort", query.sort.as_str().to_owned()));
    params
}

pub fn space_query(query: &SpaceQuery) -> Vec<(&'static str, String)> {
    let mut params = paging(query.page, query.per_page);
    if let Some(term) = query.search_term() {
        params.push(("search", term.to_owned()));
    }
    params.push(("sort", query.sort.as_str().to_owned()));
    params
}

pub fn paging(page: u32, per_page: u32) -> Vec<(&'static str, String)> {
    vec![
        ("page", page.to_string()),
        ("per_page", per_page.to_string()),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::{RuleInput, SearchBy, Sort, SpaceFilter, TagMatch};

    #[test]
    fn nested_rules_are_bracketed_and_values_encoded() {
        let input = LinkInput {
            url: Some("https://example.com/a?b=c&d=e".into()),
            target_type: Some("2".into()),
            platform: Some(vec![
                RuleInput::new("OS X", "https://mac.example"),
                RuleInput::new("iOS", "https://ios.example"),
            ]),
            ..Default::default()
        };
        assert_eq!(
            link_form(&input).unwrap(),
            "url=https://example.com/a?b%3Dc%26d%3De&target_type=2\
             &platform[0][key]=OS+X&platform[0][value]=https://mac.example\
             &platform[1][key]=iOS&platform[1][value]=https://ios.example"
        );
    }

    #[test]
    fn rotation_rows_carry_only_values_and_empty_fields_are_sent() {
        let input = LinkInput {
            password: Some(String::new()),
            rotation: Some(vec![RuleInput::value("https://a.example")]),
            ..Default::default()
        };
        assert_eq!(
            link_form(&input).unwrap(),
            "password=&rotation[0][value]=https://a.example"
        );
    }

    #[test]
    fn a_row_with_no_fields_keeps_its_place() {
        let input = LinkInput {
            geo: Some(vec![
                RuleInput::new("US", "https://u.example"),
                RuleInput::default(),
                RuleInput::new("DE", "https://d.example"),
            ]),
            ..Default::default()
        };
        assert_eq!(
            link_form(&input).unwrap(),
            "geo[0][key]=US&geo[0][value]=https://u.example&geo[1][value]=\
             &geo[2][key]=DE&geo[2][value]=https://d.example"
        );
    }

    #[test]
    fn an_empty_list_goes_out_as_one_blank_row() {
        let input = LinkInput {
            target_type: Some("0".into()),
            geo: Some(vec![]),
            rotation: Some(vec![]),
            ..Default::default()
        };
        assert_eq!(
            link_form(&input).unwrap(),
            "target_type=0&geo[0][key]=&geo[0][value]=&rotation[0][value]="
        );
    }

    #[test]
    fn the_form_reads_back_as_the_same_input() {
        // The server reads bodies with serde_qs too; what goes out must come back unchanged.
        let input = LinkInput {
            url: Some("https://example.com/ü?x=1 2".into()),
            alias: Some("my-link_1".into()),
            password: Some("p&ss=wörd+".into()),
            space: Some("3".into()),
            disabled: Some("1".into()),
            expiration_date: Some("2030-01-02".into()),
            expiration_time: Some("13:45".into()),
            target_type: Some("1".into()),
            geo: Some(vec![
                RuleInput::new("us", "https://us.example/[x]"),
                RuleInput::new("DE", "https://de.example"),
            ]),
            ..Default::default()
        };
        let body = link_form(&input).unwrap();
        let back: LinkInput = serde_qs::from_str(&body).unwrap();
        assert_eq!(back, input);
        let space = SpaceInput {
            name: Some("Launch & Co".into()),
            color: Some("4".into()),
        };
        let back: SpaceInput = serde_qs::from_str(&space_form(&space).unwrap()).unwrap();
        assert_eq!(back, space);
    }

    #[test]
    fn a_link_query_carries_every_filter() {
        let query = LinkQuery {
            search: Some("launch day".into()),
            by: SearchBy::Url,
            status: StatusFilter::Expired,
            space: SpaceFilter::In(4),
            domain: Some(2),
            tags: vec!["promo".into(), "q4".into()],
            tag_match: TagMatch::Any,
            sort: Sort::Max,
            page: 3,
            per_page: 100,
        };
        let params = link_query(&query);
        let params: Vec<(&str, &str)> = params.iter().map(|(k, v)| (*k, v.as_str())).collect();
        assert_eq!(
            params,
            [
                ("page", "3"),
                ("per_page", "100"),
                ("search", "launch day"),
                ("by", "url"),
                ("status", "2"),
                ("space", "4"),
                ("domain", "2"),
                ("tags", "promo,q4"),
                ("tag_match", "any"),
                ("sort", "max"),
            ]
        );
    }

    #[test]
    fn a_default_query_sends_only_paging_and_sort() {
        let params = link_query(&LinkQuery::default());
        let names: Vec<&str> = params.iter().map(|(k, _)| *k).collect();
        assert_eq!(names, ["page", "per_page", "sort"]);
    }
}
