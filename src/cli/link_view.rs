//! How links look: the list table, the detail view and the `--json` record.

use jiff::Timestamp;
use serde::Serialize;

use super::context::Context;
use super::error::CliResult;
use super::output::{Table, date_time, near, print, print_json, relative, thousands};
use crate::domain::{Link, LinkQuery, Shown, StatusFilter, tags_text};

/// Ends "no links…": `match` when filters are set, `yet` otherwise.
pub fn filtered_note(query: &LinkQuery) -> &'static str {
    if query.search_term().is_some()
        || query.status != StatusFilter::All
        || !query.space.is_any()
        || query.domain.is_some()
    {
        " match"
    } else {
        " yet"
    }
}

pub fn link_table(ctx: &Context, links: &[Link], now: Timestamp) -> Table {
    let mut table = Table::new(&[
        ("ID", 10, true),
        ("ALIAS", 24, false),
        ("DESTINATION", 48, false),
        ("SPACE", 16, false),
        ("CLICKS", 22, true),
        ("STATUS", 8, false),
        ("EXPIRES", 12, false),
    ]);
    for link in links {
        table.row(vec![
            link.id.to_string(),
            link.alias.clone(),
            link.url.clone(),
            link.space
                .as_ref()
                .map_or(String::new(), |s| s.name.clone()),
            link.clicks_shown(),
            link.status(now).label().to_owned(),
            link.ends_at
                .map_or("-".to_owned(), |at| relative(at, now, ctx.timezone())),
        ]);
    }
    table
}

pub fn show(ctx: &Context, link: &Link) -> CliResult {
    let now = ctx.clock.now();
    if ctx.json {
        return Ok(print_json(&link_json(link, now))?);
    }
    let tz = ctx.timezone();
    let when = |at: Timestamp| match near(at, now) {
        Some(rel) => format!("{} ({rel})", date_time(at, tz)),
        None => date_time(at, tz),
    };
    let yes_no = |b: bool| if b { "yes" } else { "no" }.to_owned();
    let mut rows: Vec<(&str, String)> = vec![
        ("id", link.id.to_string()),
        ("alias", link.alias.clone()),
        ("short url", link.short_url.clone()),
        ("destination", link.url.clone()),
        ("title", link.title.clone().unwrap_or_default()),
        ("status", link.status(now).label().to_owned()),
        (
            "clicks",
            if link.expiration_clicks > 0 {
                format!(
                    "{} of {} allowed",
                    thousands(link.clicks),
                    thousands(u64::from(link.expiration_clicks))
                )
            } else {
                thousands(link.clicks)
            },
        ),
        ("previews", thousands(link.previews)),
        ("redirect", link.options.redirect_summary()),
        ("preview", link.options.preview_summary()),
        (
            "space",
            link.space
                .as_ref()
                .map_or("-".into(), |s| format!("{} ({})", s.name, s.color)),
        ),
        (
            "tags",
            if link.tags.is_empty() {
                "-".into()
            } else {
                tags_text(&link.tags)
            },
        ),
        (
            "domain",
            link.domain.as_ref().map_or("-".into(), |d| d.name.clone()),
        ),
        ("password", yes_no(link.password)),
        ("disabled", yes_no(link.disabled)),
        ("public stats", yes_no(link.public)),
        ("expires", link.ends_at.map_or("never".into(), when)),
        (
            "when expired",
            link.expiration_url.clone().unwrap_or_else(|| "-".into()),
        ),
        ("targeting", link.target_type.label().to_owned()),
    ];
    // Rotation URLs are numbered in their order, the one the next visitor gets marked.
    let next =
        (!link.rotation.is_empty()).then(|| link.last_rotation as usize % link.rotation.len());
    for (i, (key, url)) in link.active_rules().into_iter().enumerate() {
        rows.push((
            "",
            match key {
                Some(key) => format!("{key} → {url}"),
                None if next == Some(i) => format!("{}. {url}  (next)", i + 1),
                None => format!("{}. {url}", i + 1),
            },
        ));
    }
    // Redirect rules, asked before the targeting above, in their order: each as `--rule` takes
    // it, so a line can be typed back.
    let rules = &link.options.rules;
    rows.push((
        "rules",
        if rules.is_empty() {
            "-".into()
        } else {
            format!("{} (asked first, in order)", rules.len())
        },
    ));
    for (i, rule) in rules.iter().enumerate() {
        rows.push(("", format!("{}. {rule}", i + 1)));
    }
    rows.push(("created", when(link.created_at)));
    rows.push(("updated", when(link.updated_at)));
    let width = rows.iter().map(|(k, _)| k.len()).max().unwrap_or(0);
    // Values come from the record: each is one line, its control characters written out.
    let text: String = rows
        .iter()
        .map(|(k, v)| format!("{k:width$}  {}\n", Shown(v)))
        .collect();
    Ok(print(&text)?)
}

/// A link as `--json` prints it: the record's fields, in their order, plus its derived `status`.
#[derive(Serialize)]
pub struct LinkJson<'a> {
    #[serde(flatten)]
    link: &'a Link,
    status: &'static str,
}

pub fn link_json(link: &Link, now: Timestamp) -> LinkJson<'_> {
    LinkJson {
        link,
        status: link.status(now).label(),
    }
}
