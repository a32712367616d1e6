//! The behaviour suite of the `Backend` contract, written against `&dyn Backend` only, so the
//! same tests run on the embedded service (`tests/local_backend.rs`) and on `RemoteBackend`
//! talking to a real `linkdeck serve` (through another harness).
//!
//! Use: `#[macro_use] mod suite;` then `backend_suite!(make_harness().await);` generates one
//! `#[tokio::test]` per suite function, each with a fresh harness.

#![allow(dead_code)]

mod options;
mod stats;
mod tags;
mod visits;
pub use options::*;
pub use stats::*;
pub use tags::*;
pub use visits::*;

use std::collections::BTreeSet;

use async_trait::async_trait;
use jiff::tz::TimeZone;
use jiff::{SignedDuration, Timestamp};

use linkdeck::backend::{Backend, BulkAction, Progress, Selection, Undo};
use linkdeck::domain::{
    ALIAS_MAX, Domain, DomainInput, Error, FieldErrors, HostSettings, Id, Link, LinkInput,
    LinkQuery, Page, Robots, RuleInput, SearchBy, Sort, SpaceFilter, SpaceInput, SpaceQuery,
    StatusFilter, TargetType, URL_MAX,
};

/// What a backend under test must offer besides the `Backend` itself.
#[async_trait]
pub trait Harness: Send + Sync {
    /// Acts for the owner under test.
    fn backend(&self) -> &dyn Backend;
    /// Acts for a second owner of the same service.
    fn other_owner(&self) -> &dyn Backend;
    /// Moves the service's clock (it starts at [`START`]).
    fn set_now(&self, t: Timestamp);
    /// The zone in which the service reads expiry dates and times: must not be UTC.
    fn timezone(&self) -> TimeZone;
    /// The base of short URLs of links without a domain.
    fn public_url(&self) -> String;
    /// Adds a domain for the owner under test (`other` false) or the second owner.
    async fn add_domain(&self, name: &str, other: bool) -> Domain;
    /// Sets a link's click count, as visits would.
    async fn set_clicks(&self, id: Id, clicks: u64);
    /// Counts visits as the server's click writer does.
    async fn record_visits(&self, visits: Vec<linkdeck::backend::local::serving::VisitRow>);
}

/// Where every harness's clock starts.
pub fn start() -> Timestamp {
    "2026-01-15T12:00:00Z".parse().unwrap()
}

/// The zone harnesses read expiry in.
pub const ZONE: &str = "America/New_York";

macro_rules! suite_tests {
    ($make:expr; $($name:ident),* $(,)?) => {
        $(
            #[tokio::test]
            async fn $name() {
                let harness = $make;
                suite::$name(&harness).await;
            }
        )*
    };
}

/// Generates one test per suite function, each on a fresh harness from `$make` (which may
/// `return` from the test when the harness cannot be had, as when PostgreSQL is absent).
macro_rules! backend_suite {
    ($make:expr) => {
        suite_tests!($make;
            create_link_returns_the_stored_record,
            deleted_link_ids_are_never_given_out_again,
            create_link_reports_every_invalid_field_at_once,
            url_is_required_and_must_be_http,
            aliases_are_unique_per_domain_case_insensitively,
            reserved_aliases_are_refused,
            generated_aliases_are_five_lowercase_alphanumerics,
            password_is_never_returned_and_empty_removes_it,
            expiry_is_read_in_the_profile_zone,
            expiry_date_and_time_come_together,
            expiry_can_be_cleared,
            status_is_derived_from_the_clock_and_clicks,
            expired_and_disabled_link_matches_both_filters,
            every_filter_and_sort_combination,
            paging_reports_totals_and_reaches_the_last_page,
            out_of_range_paging_is_a_field_error,
            search_by_each_field_ignores_case,
            search_treats_wildcards_and_quotes_literally,
            search_results_page_like_any_list,
            a_search_longer_than_its_field_can_hold_is_a_field_error,
            long_search_terms_match_only_where_they_are_whole,
            space_and_domain_filters,
            update_changes_only_present_fields,
            update_of_url_renews_the_title,
            domain_cannot_change_on_update,
            targeting_is_validated_and_stored_canonically,
            deleting_a_link_removes_it,
            space_rules,
            space_list_search_sort_and_paging,
            deleting_a_space_keeps_its_links,
            space_sizes_follow_their_links,
            domains_are_listed_and_give_short_urls,
            domain_settings_change_only_what_is_given,
            other_owners_records_are_not_found,
            other_owners_space_or_domain_is_a_field_error,
            bulk_update_by_filter_changes_every_match_and_undoes,
            bulk_goes_on_past_a_missing_link_and_lists_it,
            bulk_moves_links_between_spaces,
            bulk_refuses_fields_that_belong_to_one_link,
            bulk_delete_by_filter_and_undo,
            bulk_preview_counts_and_shows_the_first,
            stats_count_visits_per_local_day_across_a_daylight_saving_change,
            stats_of_a_space_a_domain_and_the_account_sum_their_links,
            stats_follow_links_that_move_or_go,
            stats_follow_links_moved_or_deleted_in_bulk_and_back_with_undo,
            stats_of_another_owner_are_not_found,
            clicks_counted_in_all_sum_each_scopes_links_counters,
            stats_questions_are_checked,
            stats_of_a_tag_sum_the_links_that_carry_it_now,
            a_tag_on_many_links_is_summed_as_one_on_few,
            visits_export_by_scope_period_and_where_the_last_one_stopped,
            a_visits_export_longer_than_one_read_comes_out_whole_and_in_order,
            a_live_feed_sees_the_visits_logged_after_it_began,
            tags_are_stored_as_the_rules_say_and_filter_lists,
            tags_are_changed_cleared_and_checked,
            a_tag_renamed_onto_another_merges_them,
            tags_come_back_with_their_links_from_the_trash,
            link_options_are_stored_changed_and_checked,
            link_options_come_back_with_their_links_from_the_trash,
        );
    };
}

// ---- helpers ---------------------------------------------------------------------------------

fn link(url: &str) -> LinkInput {
    LinkInput::with_url(url)
}

fn aliased(url: &str, alias: &str) -> LinkInput {
    LinkInput {
        alias: Some(alias.into()),
        ..link(url)
    }
}

fn s(v: &str) -> Option<String> {
    Some(v.to_owned())
}

fn space(name: &str, color: &str) -> SpaceInput {
    SpaceInput {
        name: s(name),
        color: s(color),
    }
}

#[track_caller]
fn field_errors<T: std::fmt::Debug>(result: Result<T, Error>) -> FieldErrors {
    match result {
        Err(Error::Validation(errors)) => errors,
        other => panic!("expected field errors, got {other:?}"),
    }
}

#[track_caller]
fn assert_fields<T: std::fmt::Debug>(result: Result<T, Error>, fields: &[&str]) -> FieldErrors {
    let errors = field_errors(result);
    let got: BTreeSet<&str> = errors.iter().map(|(f, _)| f).collect();
    let want: BTreeSet<&str> = fields.iter().copied().collect();
    assert_eq!(got, want, "field errors: {errors}");
    errors
}

#[track_caller]
fn assert_not_found<T: std::fmt::Debug>(result: Result<T, Error>) {
    assert!(
        matches!(result, Err(Error::NotFound(_))),
        "expected not found, got {result:?}"
    );
}

fn query() -> LinkQuery {
    LinkQuery {
        per_page: 100,
        ..LinkQuery::default()
    }
}

async fn ids(h: &dyn Harness, q: LinkQuery) -> Vec<Id> {
    h.backend()
        .list_links(&q)
        .await
        .unwrap()
        .items
        .iter()
        .map(|l| l.id)
        .collect()
}

async fn search(h: &dyn Harness, by: SearchBy, term: &str) -> Vec<Id> {
    ids(
        h,
        LinkQuery {
            search: s(term),
            by,
            ..query()
        },
    )
    .await
}

async fn create(h: &dyn Harness, input: LinkInput) -> Link {
    h.backend().create_link(&input).await.unwrap()
}

/// The ids of links given as `(clicks, id)` in the order a list sorted by `sort` shows them:
/// equal clicks are ordered by id, in the direction of the sort.
pub fn in_list_order(mut links: Vec<(u64, Id)>, sort: Sort) -> Vec<Id> {
    match sort {
        Sort::Desc => links.sort_by_key(|&(_, id)| std::cmp::Reverse(id)),
        Sort::Asc => links.sort_by_key(|&(_, id)| id),
        Sort::Max => links.sort_by_key(|&k| std::cmp::Reverse(k)),
        Sort::Min => links.sort(),
    }
    links.into_iter().map(|(_, id)| id).collect()
}

fn hours(n: i64) -> SignedDuration {
    SignedDuration::from_hours(n)
}

// ---- links: create and validation --------------------------------------------------------------

pub async fn create_link_returns_the_stored_record(h: &dyn Harness) {
    let created = create(h, link("https://Example.com/landing/page?utm=x")).await;
    assert_eq!(created.url, "https://Example.com/landing/page?utm=x");
    assert_eq!(created.title.as_deref(), Some("example.com/landing/page"));
    assert_eq!(
        created.short_url,
        format!("{}/{}", h.public_url().trim_end_matches('/'), created.alias)
    );
    assert!(!created.password);
    assert!(!created.disabled && !created.public);
    assert_eq!(created.clicks, 0);
    assert_eq!(created.target_type, TargetType::None);
    assert_eq!(created.ends_at, None);
    assert!(created.space.is_none() && created.domain.is_none());
    assert_eq!(created.created_at, start());
    assert!(created.status(start()).is_active());
    assert_eq!(h.backend().show_link(created.id).await.unwrap(), created);
    let page = h.backend().list_links(&query()).await.unwrap();
    assert_eq!(page.total, 1);
    assert_eq!(page.items, vec![created]);
}

/// A script or an app holding an old id must never act on another link through it.
pub async fn deleted_link_ids_are_never_given_out_again(h: &dyn Harness) {
    let b = h.backend();
    let first = create(h, LinkInput::with_url("https://example.com/1")).await;
    let newest = create(h, LinkInput::with_url("https://example.com/2")).await;
    b.delete_link(newest.id).await.unwrap();
    let next = create(h, LinkInput::with_url("https://example.com/3")).await;
    assert!(next.id > newest.id, "{} reused {}", next.id, newest.id);
    b.delete_link(next.id).await.unwrap();
    b.delete_link(first.id).await.unwrap();
    let after_all = create(h, LinkInput::with_url("https://example.com/4")).await;
    assert!(
        after_all.id > next.id,
        "{} reused {}",
        after_all.id,
        next.id
    );
    assert!(matches!(
        b.show_link(newest.id).await,
        Err(Error::NotFound(_))
    ));
}

pub async fn create_link_reports_every_invalid_field_at_once(h: &dyn Harness) {
    let input = LinkInput {
        url: s("javascript:alert(1)"),
        alias: s("bad alias!"),
        password: Some("p".repeat(129)),
        disabled: s("maybe"),
        public: s("2"),
        expiration_url: s("ftp://files.example.com"),
        expiration_date: s("2026-13-40"),
        expiration_time: s("25:00"),
        expiration_clicks: s("-1"),
        target_type: s("7"),
        geo: Some(vec![
            RuleInput::new("XX", "https://a.example"),
            RuleInput::new("us", "not a url"),
        ]),
        platform: Some(vec![RuleInput::new("Amiga", "https://b.example")]),
        rotation: Some(vec![RuleInput::value("data:text/html,hi")]),
        ..LinkInput::default()
    };
    assert_fields(
        h.backend().create_link(&input).await,
        &[
            "url",
            "alias",
            "password",
            "disabled",
            "public",
            "expiration_url",
            "expiration_date",
            "expiration_time",
            "expiration_clicks",
            "target_type",
            "geo.0.key",
            "geo.1.value",
            "platform.0.key",
            "rotation.0.value",
        ],
    );
    // Nothing was written.
    assert_eq!(h.backend().list_links(&query()).await.unwrap().total, 0);
}

pub async fn url_is_required_and_must_be_http(h: &dyn Harness) {
    assert_fields(
        h.backend().create_link(&LinkInput::default()).await,
        &["url"],
    );
    for bad in [
        "javascript:alert(1)",
        "data:text/html,x",
        "file:///etc/passwd",
        "example.com",
        "https://",
        "https://exa mple.com",
    ] {
        assert_fields(h.backend().create_link(&link(bad)).await, &["url"]);
    }
    let long = format!("https://example.com/{}", "a".repeat(2049 - 20));
    assert_eq!(long.len(), 2049);
    assert_fields(h.backend().create_link(&link(&long)).await, &["url"]);
    let ok = format!("https://example.com/{}", "a".repeat(2048 - 20));
    assert_eq!(create(h, link(&ok)).await.url, ok);
}

pub async fn aliases_are_unique_per_domain_case_insensitively(h: &dyn Harness) {
    let first = create(h, aliased("https://a.example", "Promo")).await;
    assert_eq!(first.alias, "Promo");
    let errors = assert_fields(
        h.backend()
            .create_link(&aliased("https://b.example", "pROMO"))
            .await,
        &["alias"],
    );
    assert_eq!(errors.get("alias").unwrap(), ["is already taken"]);
    // Also with another invalid field: both reported.
    assert_fields(
        h.backend()
            .create_link(&LinkInput {
                url: s("nope"),
                alias: s("promo"),
                ..LinkInput::default()
            })
            .await,
        &["url", "alias"],
    );
    let second = create(h, aliased("https://b.example", "other")).await;
    assert_fields(
        h.backend()
            .update_link(
                second.id,
                &LinkInput {
                    alias: s("PROMO"),
                    ..LinkInput::default()
                },
            )
            .await,
        &["alias"],
    );
    // Keeping one's own alias (in another case) is fine.
    let renamed = h
        .backend()
        .update_link(
            first.id,
            &LinkInput {
                alias: s("promo"),
                ..LinkInput::default()
            },
        )
        .await
        .unwrap();
    assert_eq!(renamed.alias, "promo");
    // The same alias on a domain is another alias.
    let domain = h.add_domain("sho.rt", false).await;
    let on_domain = create(
        h,
        LinkInput {
            domain: s(&domain.id.to_string()),
            ..aliased("https://c.example", "PROMO")
        },
    )
    .await;
    assert_eq!(on_domain.short_url, "https://sho.rt/PROMO");
    // Another owner cannot take it either: aliases are per domain, not per owner.
    assert_fields(
        h.other_owner()
            .create_link(&aliased("https://d.example", "promo"))
            .await,
        &["alias"],
    );
}

pub async fn reserved_aliases_are_refused(h: &dyn Harness) {
    for alias in ["api", "Stats", "ADMIN"] {
        assert_fields(
            h.backend()
                .create_link(&aliased("https://a.example", alias))
                .await,
            &["alias"],
        );
    }
    for alias in ["api-docs", "my_stats", "a", "Z-9_x"] {
        assert_eq!(
            create(h, aliased("https://a.example", alias)).await.alias,
            alias
        );
    }
    let long = "a".repeat(256);
    assert_fields(
        h.backend()
            .create_link(&aliased("https://a.example", &long))
            .await,
        &["alias"],
    );
}

pub async fn generated_aliases_are_five_lowercase_alphanumerics(h: &dyn Harness) {
    let mut seen = BTreeSet::new();
    for _ in 0..20 {
        let alias = create(h, link("https://a.example")).await.alias;
        assert_eq!(alias.len(), 5, "{alias}");
        assert!(
            alias
                .bytes()
                .all(|b| b.is_ascii_digit() || b.is_ascii_lowercase()),
            "{alias}"
        );
        assert!(seen.insert(alias));
    }
    // A blank alias also asks for a generated one.
    assert_eq!(
        create(h, aliased("https://a.example", "  "))
            .await
            .alias
            .len(),
        5
    );
}

pub async fn password_is_never_returned_and_empty_removes_it(h: &dyn Harness) {
    let secret = "correct horse battery";
    let created = create(
        h,
        LinkInput {
            password: s(secret),
            ..link("https://a.example")
        },
    )
    .await;
    assert!(created.password);
    let json = serde_json::to_string(&created).unwrap();
    assert!(!json.contains(secret) && !json.contains("argon2"), "{json}");
    let shown = h.backend().show_link(created.id).await.unwrap();
    assert!(shown.password);
    // An update that does not mention the password keeps it.
    let kept = h
        .backend()
        .update_link(
            created.id,
            &LinkInput {
                public: s("1"),
                ..LinkInput::default()
            },
        )
        .await
        .unwrap();
    assert!(kept.password && kept.public);
    let removed = h
        .backend()
        .update_link(
            created.id,
            &LinkInput {
                password: s(""),
                ..LinkInput::default()
            },
        )
        .await
        .unwrap();
    assert!(!removed.password);
    // An empty password on create simply means none.
    let none = create(
        h,
        LinkInput {
            password: s(""),
            ..link("https://b.example")
        },
    )
    .await;
    assert!(!none.password);
}

pub async fn expiry_is_read_in_the_profile_zone(h: &dyn Harness) {
    assert_ne!(h.timezone(), TimeZone::UTC);
    let created = create(
        h,
        LinkInput {
            expiration_date: s("2026-07-04"),
            expiration_time: s("09:30"),
            ..link("https://a.example")
        },
    )
    .await;
    let expected = jiff::civil::date(2026, 7, 4)
        .at(9, 30, 0, 0)
        .to_zoned(h.timezone())
        .unwrap()
        .timestamp();
    assert_eq!(created.ends_at, Some(expected));
    if h.timezone() == TimeZone::get(ZONE).unwrap() {
        assert_eq!(
            expected,
            "2026-07-04T13:30:00Z".parse::<Timestamp>().unwrap()
        );
    }
}

pub async fn expiry_date_and_time_come_together(h: &dyn Harness) {
    assert_fields(
        h.backend()
            .create_link(&LinkInput {
                expiration_date: s("2026-07-04"),
                ..link("https://a.example")
            })
            .await,
        &["expiration_time"],
    );
    assert_fields(
        h.backend()
            .create_link(&LinkInput {
                expiration_time: s("09:30"),
                ..link("https://a.example")
            })
            .await,
        &["expiration_date"],
    );
    assert_fields(
        h.backend()
            .create_link(&LinkInput {
                expiration_date: s("04/07/2026"),
                expiration_time: s("9:30pm"),
                ..link("https://a.example")
            })
            .await,
        &["expiration_date", "expiration_time"],
    );
}

pub async fn expiry_can_be_cleared(h: &dyn Harness) {
    let created = create(
        h,
        LinkInput {
            expiration_date: s("2026-07-04"),
            expiration_time: s("09:30"),
            expiration_clicks: s("10"),
            expiration_url: s("https://expired.example"),
            ..link("https://a.example")
        },
    )
    .await;
    assert!(created.ends_at.is_some());
    assert_eq!(created.expiration_clicks, 10);
    assert_eq!(
        created.expiration_url.as_deref(),
        Some("https://expired.example")
    );
    let cleared = h
        .backend()
        .update_link(
            created.id,
            &LinkInput {
                expiration_date: s(""),
                expiration_time: s(""),
                expiration_clicks: s("0"),
                expiration_url: s(""),
                ..LinkInput::default()
            },
        )
        .await
        .unwrap();
    assert_eq!(cleared.ends_at, None);
    assert_eq!(cleared.expiration_clicks, 0);
    assert_eq!(cleared.expiration_url, None);
}

async fn status_ids(h: &dyn Harness, status: StatusFilter) -> Vec<Id> {
    let mut found = ids(h, LinkQuery { status, ..query() }).await;
    found.sort();
    let total = h
        .backend()
        .list_links(&LinkQuery { status, ..query() })
        .await
        .unwrap()
        .total;
    assert_eq!(total, found.len() as u64, "total of {status:?}");
    found
}

pub async fn status_is_derived_from_the_clock_and_clicks(h: &dyn Harness) {
    // Expires at 13:00 New York time on the start day (18:00 UTC), six hours after the start.
    let by_date = create(
        h,
        LinkInput {
            expiration_date: s("2026-01-15"),
            expiration_time: s("13:00"),
            ..link("https://a.example")
        },
    )
    .await;
    let ends = by_date.ends_at.unwrap();
    let by_clicks = create(
        h,
        LinkInput {
            expiration_clicks: s("5"),
            ..link("https://b.example")
        },
    )
    .await;
    let disabled = create(
        h,
        LinkInput {
            disabled: s("1"),
            ..link("https://c.example")
        },
    )
    .await;
    let plain = create(h, link("https://d.example")).await;

    let active = |v: &[&Link]| v.iter().map(|l| l.id).collect::<Vec<_>>();
    assert_eq!(
        status_ids(h, StatusFilter::Active).await,
        active(&[&by_date, &by_clicks, &plain])
    );
    assert_eq!(status_ids(h, StatusFilter::Expired).await, Vec::<Id>::new());
    assert_eq!(
        status_ids(h, StatusFilter::Disabled).await,
        vec![disabled.id]
    );

    h.set_clicks(by_clicks.id, 4).await;
    assert_eq!(status_ids(h, StatusFilter::Expired).await, Vec::<Id>::new());
    h.set_clicks(by_clicks.id, 5).await;
    assert_eq!(
        status_ids(h, StatusFilter::Expired).await,
        vec![by_clicks.id]
    );
    let shown = h.backend().show_link(by_clicks.id).await.unwrap();
    assert_eq!(shown.clicks, 5);
    assert!(shown.status(start()).expired);

    // One second before the end: still active; at the end itself: expired.
    h.set_now(ends - SignedDuration::from_secs(1));
    assert_eq!(
        status_ids(h, StatusFilter::Active).await,
        active(&[&by_date, &plain])
    );
    h.set_now(ends);
    assert_eq!(
        status_ids(h, StatusFilter::Expired).await,
        active(&[&by_date, &by_clicks])
    );
    assert_eq!(status_ids(h, StatusFilter::Active).await, vec![plain.id]);
    assert_eq!(status_ids(h, StatusFilter::All).await.len(), 4);
    let shown = h.backend().show_link(by_date.id).await.unwrap();
    assert!(shown.status(ends).expired && !shown.status(ends).disabled);
}

pub async fn expired_and_disabled_link_matches_both_filters(h: &dyn Harness) {
    let both = create(
        h,
        LinkInput {
            disabled: s("1"),
            expiration_clicks: s("1"),
            ..link("https://a.example")
        },
    )
    .await;
    let date_and_disabled = create(
        h,
        LinkInput {
            disabled: s("1"),
            expiration_date: s("2026-01-15"),
            expiration_time: s("06:00"),
            ..link("https://b.example")
        },
    )
    .await;
    h.set_clicks(both.id, 3).await;
    let mut pair = vec![both.id, date_and_disabled.id];
    pair.sort();
    assert_eq!(status_ids(h, StatusFilter::Expired).await, pair);
    assert_eq!(status_ids(h, StatusFilter::Disabled).await, pair);
    assert_eq!(status_ids(h, StatusFilter::Active).await, Vec::<Id>::new());
    let shown = h.backend().show_link(both.id).await.unwrap();
    let status = shown.status(start());
    assert!(status.expired && status.disabled);
}

pub async fn every_filter_and_sort_combination(h: &dyn Harness) {
    // Clicks with ties; statuses of every kind.
    let specs: [(u64, Option<&str>, &str, bool); 10] = [
        (5, None, "", false),
        (0, None, "", false),
        (5, None, "", true),
        (9, Some("2026-01-01"), "", false),
        (2, None, "2", false),
        (5, None, "10", false),
        (0, Some("2026-01-01"), "", true),
        (9, None, "", false),
        (1, Some("2027-01-01"), "", false),
        (2, None, "2", true),
    ];
    let mut links = Vec::new();
    for (i, (clicks, date, limit, disabled)) in specs.into_iter().enumerate() {
        let input = LinkInput {
            expiration_date: date.map(str::to_owned),
            expiration_time: date.map(|_| "00:00".to_owned()),
            expiration_clicks: s(limit),
            disabled: s(if disabled { "1" } else { "0" }),
            ..link(&format!("https://site{i}.example"))
        };
        let created = create(h, input).await;
        h.set_clicks(created.id, clicks).await;
        links.push(h.backend().show_link(created.id).await.unwrap());
    }
    let now = start();
    for status in StatusFilter::ALL {
        for sort in Sort::ALL {
            let mut expected: Vec<&Link> = links
                .iter()
                .filter(|l| {
                    let st = l.status(now);
                    match status {
                        StatusFilter::All => true,
                        StatusFilter::Active => st.is_active(),
                        StatusFilter::Expired => st.expired,
                        StatusFilter::Disabled => st.disabled,
                    }
                })
                .collect();
            match sort {
                Sort::Desc => expected.sort_by_key(|l| std::cmp::Reverse(l.id)),
                Sort::Asc => expected.sort_by_key(|l| l.id),
                Sort::Max => expected.sort_by_key(|l| std::cmp::Reverse((l.clicks, l.id))),
                Sort::Min => expected.sort_by_key(|l| (l.clicks, l.id)),
            }
            let expected: Vec<Id> = expected.iter().map(|l| l.id).collect();
            assert!(!expected.is_empty(), "{status:?}");
            let page = h
                .backend()
                .list_links(&LinkQuery {
                    status,
                    sort,
                    ..query()
                })
                .await
                .unwrap();
            let got: Vec<Id> = page.items.iter().map(|l| l.id).collect();
            assert_eq!(got, expected, "status {status:?} sort {sort:?}");
            assert_eq!(page.total, expected.len() as u64, "{status:?} {sort:?}");
            // The same order across pages of ten, down to the last one.
            let mut paged = Vec::new();
            for page in 1..=2 {
                let q = LinkQuery {
                    status,
                    sort,
                    page,
                    per_page: 10,
                    ..LinkQuery::default()
                };
                paged.extend(ids(h, q).await);
            }
            assert_eq!(paged, expected, "paged {status:?} {sort:?}");
        }
    }
}

pub async fn paging_reports_totals_and_reaches_the_last_page(h: &dyn Harness) {
    let mut all = Vec::new();
    for i in 0..25 {
        all.push(create(h, link(&format!("https://p{i}.example"))).await.id);
    }
    let newest_first: Vec<Id> = all.iter().rev().copied().collect();
    for sort in [Sort::Desc, Sort::Asc, Sort::Min] {
        let expected: Vec<Id> = if sort == Sort::Desc {
            newest_first.clone()
        } else {
            all.clone()
        };
        let mut seen = Vec::new();
        for page in 1..=3 {
            let p: Page<Link> = h
                .backend()
                .list_links(&LinkQuery {
                    sort,
                    page,
                    per_page: 10,
                    ..LinkQuery::default()
                })
                .await
                .unwrap();
            assert_eq!(p.total, 25);
            assert_eq!(p.page, page);
            assert_eq!(p.per_page, 10);
            assert_eq!(p.last_page(), 3);
            assert_eq!(p.items.len(), if page == 3 { 5 } else { 10 });
            seen.extend(p.items.iter().map(|l| l.id));
        }
        assert_eq!(seen, expected, "{sort:?}");
    }
    let beyond = h
        .backend()
        .list_links(&LinkQuery {
            page: 4,
            per_page: 10,
            ..LinkQuery::default()
        })
        .await
        .unwrap();
    assert!(beyond.items.is_empty());
    assert_eq!(beyond.total, 25);
    // Uneven sizes: 25 in pages of 12 and 11.
    for per_page in [12, 11] {
        let mut seen = Vec::new();
        for page in 1..=3 {
            seen.extend(
                ids(
                    h,
                    LinkQuery {
                        page,
                        per_page,
                        ..LinkQuery::default()
                    },
                )
                .await,
            );
        }
        assert_eq!(seen, newest_first, "per_page {per_page}");
    }
}

pub async fn out_of_range_paging_is_a_field_error(h: &dyn Harness) {
    let b = h.backend();
    assert_fields(
        b.list_links(&LinkQuery {
            page: 0,
            ..LinkQuery::default()
        })
        .await,
        &["page"],
    );
    assert_fields(
        b.list_links(&LinkQuery {
            per_page: 9,
            ..LinkQuery::default()
        })
        .await,
        &["per_page"],
    );
    assert_fields(
        b.list_links(&LinkQuery {
            page: 0,
            per_page: 101,
            ..LinkQuery::default()
        })
        .await,
        &["page", "per_page"],
    );
    assert_fields(
        b.list_spaces(&SpaceQuery {
            per_page: 500,
            ..SpaceQuery::default()
        })
        .await,
        &["per_page"],
    );
    assert!(field_errors(b.list_domains(0, 10).await).contains("page"));
    assert!(field_errors(b.list_domains(1, 5).await).contains("per_page"));
    for per_page in [10, 100] {
        assert!(
            b.list_links(&LinkQuery {
                per_page,
                ..LinkQuery::default()
            })
            .await
            .is_ok()
        );
    }
}

pub async fn search_by_each_field_ignores_case(h: &dyn Harness) {
    let shoes = create(
        h,
        aliased("https://shop.example.com/Summer-Shoes", "ShoeSale"),
    )
    .await;
    let blog = create(
        h,
        aliased("https://blog.example.org/winter/boots", "boots-2026"),
    )
    .await;
    let docs = create(
        h,
        aliased("https://DOCS.example.net/guide?lang=en", "guide"),
    )
    .await;
    assert_eq!(
        search(h, SearchBy::Title, "summer-shoes").await,
        vec![shoes.id]
    );
    assert_eq!(
        search(h, SearchBy::Title, "WINTER/BOO").await,
        vec![blog.id]
    );
    assert_eq!(
        search(h, SearchBy::Title, "docs.example").await,
        vec![docs.id]
    );
    // The title holds host and path only, not the query.
    assert_eq!(
        search(h, SearchBy::Title, "lang=en").await,
        Vec::<Id>::new()
    );
    assert_eq!(search(h, SearchBy::Url, "lang=EN").await, vec![docs.id]);
    assert_eq!(search(h, SearchBy::Alias, "shoesale").await, vec![shoes.id]);
    assert_eq!(search(h, SearchBy::Alias, "2026").await, vec![blog.id]);
    // The default field is the title.
    let q = LinkQuery {
        search: s("ShOp"),
        ..query()
    };
    assert_eq!(ids(h, q).await, vec![shoes.id]);
    // Substrings anywhere, of any length.
    assert_eq!(
        search(h, SearchBy::Url, "example").await,
        vec![docs.id, blog.id, shoes.id]
    );
    assert_eq!(search(h, SearchBy::Alias, "Oe").await, vec![shoes.id]);
    assert_eq!(search(h, SearchBy::Url, "G").await, vec![docs.id, blog.id]);
    assert_eq!(
        search(h, SearchBy::Alias, "nothing-like-it").await,
        Vec::<Id>::new()
    );
    // An empty search is no search.
    assert_eq!(search(h, SearchBy::Title, "").await.len(), 3);
    // Search combines with status and reports its own total.
    let page = h
        .backend()
        .list_links(&LinkQuery {
            search: s("exa"),
            by: SearchBy::Url,
            per_page: 10,
            ..LinkQuery::default()
        })
        .await
        .unwrap();
    assert_eq!(page.total, 3);
    let page = h
        .backend()
        .list_links(&LinkQuery {
            search: s("exa"),
            by: SearchBy::Url,
            status: StatusFilter::Disabled,
            ..query()
        })
        .await
        .unwrap();
    assert_eq!(page.total, 0);
}

pub async fn search_results_page_like_any_list(h: &dyn Harness) {
    let mut matching = Vec::new();
    for i in 0..23 {
        let id = create(h, link(&format!("https://match.example/item-{i}")))
            .await
            .id;
        h.set_clicks(id, (i % 4) as u64).await;
        matching.push(id);
        // Fewer others than matches, so both ways of reading a clicks-sorted search are taken.
        if i % 3 == 0 {
            create(h, link(&format!("https://other.example/thing-{i}"))).await;
        }
    }
    // Another owner's matching links change nothing.
    h.other_owner()
        .create_link(&link("https://match.example/theirs"))
        .await
        .unwrap();
    for (term, by) in [
        ("MATCH.example/item", SearchBy::Url),
        ("h.", SearchBy::Title),
    ] {
        for sort in Sort::ALL {
            let mut expected = Vec::new();
            for id in &matching {
                let l = h.backend().show_link(*id).await.unwrap();
                expected.push((l.clicks, l.id));
            }
            let expected = in_list_order(expected, sort);
            let mut seen = Vec::new();
            for page in 1..=3 {
                let p = h
                    .backend()
                    .list_links(&LinkQuery {
                        search: s(term),
                        by,
                        sort,
                        page,
                        per_page: 10,
                        ..LinkQuery::default()
                    })
                    .await
                    .unwrap();
                assert_eq!(p.total, 23, "{term} {sort:?}");
                seen.extend(p.items.iter().map(|l| l.id));
            }
            assert_eq!(seen, expected, "{term} {sort:?}");
        }
    }
    // With a status filter as well: the same order, less the links the filter leaves out.
    for id in matching.iter().step_by(7) {
        let disabled = LinkInput {
            disabled: s("1"),
            ..LinkInput::default()
        };
        h.backend().update_link(*id, &disabled).await.unwrap();
    }
    for status in [StatusFilter::Active, StatusFilter::Disabled] {
        for sort in [Sort::Max, Sort::Min] {
            let mut expected = Vec::new();
            for id in &matching {
                let l = h.backend().show_link(*id).await.unwrap();
                if (status == StatusFilter::Disabled) == l.disabled {
                    expected.push((l.clicks, l.id));
                }
            }
            expected.sort();
            if sort == Sort::Max {
                expected.reverse();
            }
            let expected: Vec<Id> = expected.into_iter().map(|(_, id)| id).collect();
            let mut seen = Vec::new();
            for page in 1..=2 {
                let p = h
                    .backend()
                    .list_links(&LinkQuery {
                        search: s("match.example/item"),
                        by: SearchBy::Url,
                        status,
                        sort,
                        page,
                        per_page: 10,
                        ..LinkQuery::default()
                    })
                    .await
                    .unwrap();
                assert_eq!(p.total as usize, expected.len(), "{status:?} {sort:?}");
                seen.extend(p.items.iter().map(|l| l.id));
            }
            assert_eq!(seen, expected, "{status:?} {sort:?}");
        }
    }
}

pub async fn search_treats_wildcards_and_quotes_literally(h: &dyn Harness) {
    let percent = create(h, link("https://x.example/100%25off")).await;
    let underscore = create(h, link("https://x.example/snake_case")).await;
    let quoted = create(h, link("https://x.example/say\"hi\"and'so'")).await;
    let plain = create(h, link("https://x.example/plain-abc")).await;
    assert_eq!(search(h, SearchBy::Url, "%").await, vec![percent.id]);
    assert_eq!(search(h, SearchBy::Url, "0%2").await, vec![percent.id]);
    assert_eq!(search(h, SearchBy::Url, "_").await, vec![underscore.id]);
    assert_eq!(search(h, SearchBy::Url, "e_c").await, vec![underscore.id]);
    assert_eq!(search(h, SearchBy::Url, "\"").await, vec![quoted.id]);
    assert_eq!(search(h, SearchBy::Url, "\"hi\"").await, vec![quoted.id]);
    assert_eq!(search(h, SearchBy::Url, "'so'").await, vec![quoted.id]);
    assert_eq!(search(h, SearchBy::Url, "'").await, vec![quoted.id]);
    // Words of the full-text query language are plain text too.
    for term in [
        "NOT", "a OR b", "NEAR(", "abc*", "url:", "\\", "^ab", "-abc",
    ] {
        let found = search(h, SearchBy::Url, term).await;
        let expected = if term == "-abc" {
            vec![plain.id]
        } else {
            Vec::new()
        };
        assert_eq!(found, expected, "{term}");
    }
}

pub async fn a_search_longer_than_its_field_can_hold_is_a_field_error(h: &dyn Harness) {
    let b = h.backend();
    create(h, aliased("https://long.example/spring", "spring")).await;
    // A title is made from its URL's host and path, so it is no longer than a URL.
    for (by, longest) in [
        (SearchBy::Title, URL_MAX),
        (SearchBy::Alias, ALIAS_MAX),
        (SearchBy::Url, URL_MAX),
    ] {
        let of = |n: usize| LinkQuery {
            search: Some("s".repeat(n)),
            by,
            ..query()
        };
        assert_eq!(b.list_links(&of(longest)).await.unwrap().total, 0, "{by:?}");
        let errors = assert_fields(b.list_links(&of(longest + 1)).await, &["search"]);
        let message = errors.get("search").unwrap().join(" ");
        assert!(message.contains(&longest.to_string()), "{by:?}: {message}");
    }
    // Characters are counted, not bytes.
    let wide = LinkQuery {
        search: Some("é".repeat(URL_MAX)),
        by: SearchBy::Url,
        ..query()
    };
    assert_eq!(b.list_links(&wide).await.unwrap().total, 0);
    // A space's name is at most 32 characters.
    let spaces = |n: usize| SpaceQuery {
        search: Some("x".repeat(n)),
        ..SpaceQuery::default()
    };
    assert_eq!(b.list_spaces(&spaces(32)).await.unwrap().total, 0);
    assert_fields(b.list_spaces(&spaces(33)).await, &["search"]);
}

/// Terms longer than a trigram index is asked for whole are looked up by pieces of them and
/// checked whole: a link holding every piece, but not the term, is no match.
pub async fn long_search_terms_match_only_where_they_are_whole(h: &dyn Harness) {
    let word = "Course-School-";
    let url = |path: &str| link(&format!("https://long.example/{path}"));
    let whole = create(h, url(&word.repeat(6))).await;
    let apart = create(h, url(&format!("{}X{}", word.repeat(2), word.repeat(2)))).await;
    let shouted = create(h, url(&word.to_uppercase().repeat(4))).await;
    let wild = create(h, url(&"100%25_off-".repeat(4))).await;
    let tame = create(h, url(&"100%25Xoff-".repeat(4))).await;
    h.other_owner()
        .create_link(&url(&word.repeat(6)))
        .await
        .unwrap();
    let term = word.to_lowercase().repeat(3);
    for by in [SearchBy::Url, SearchBy::Title] {
        assert_eq!(
            search(h, by, &term).await,
            vec![shouted.id, whole.id],
            "{by:?}"
        );
    }
    assert_eq!(
        search(h, SearchBy::Url, &word.repeat(2)).await,
        vec![shouted.id, apart.id, whole.id]
    );
    assert_eq!(
        search(h, SearchBy::Url, &word.repeat(7)).await,
        Vec::<Id>::new()
    );
    // Wildcards and quotes are plain text in long terms too.
    assert_eq!(
        search(h, SearchBy::Url, &"100%25_off-".repeat(3)).await,
        vec![wild.id]
    );
    assert_eq!(
        search(h, SearchBy::Url, &"100%25Xoff-".repeat(3)).await,
        vec![tame.id]
    );
    // With a status filter and an order by clicks.
    h.set_clicks(whole.id, 5).await;
    let by_clicks = LinkQuery {
        search: Some(term.clone()),
        by: SearchBy::Url,
        sort: Sort::Max,
        ..query()
    };
    assert_eq!(ids(h, by_clicks.clone()).await, vec![whole.id, shouted.id]);
    let disabled = LinkInput {
        disabled: s("1"),
        ..LinkInput::default()
    };
    h.backend()
        .update_link(shouted.id, &disabled)
        .await
        .unwrap();
    let active = LinkQuery {
        status: StatusFilter::Active,
        ..by_clicks
    };
    let page = h.backend().list_links(&active).await.unwrap();
    assert_eq!(page.total, 1);
    assert_eq!(page.items[0].id, whole.id);
}

pub async fn space_and_domain_filters(h: &dyn Harness) {
    let b = h.backend();
    let red = b.create_space(&space("Red", "1")).await.unwrap();
    let blue = b.create_space(&space("Blue", "5")).await.unwrap();
    let domain = h.add_domain("go.example", false).await;
    let in_red = create(
        h,
        LinkInput {
            space: s(&red.id.to_string()),
            ..link("https://a.example")
        },
    )
    .await;
    let in_blue_on_domain = create(
        h,
        LinkInput {
            space: s(&blue.id.to_string()),
            domain: s(&domain.id.to_string()),
            ..link("https://b.example")
        },
    )
    .await;
    let loose = create(h, link("https://c.example")).await;
    assert_eq!(in_red.space.as_ref().unwrap().name, "Red");
    assert_eq!(in_blue_on_domain.domain.as_ref().unwrap().id, domain.id);
    assert_eq!(
        ids(
            h,
            LinkQuery {
                space: SpaceFilter::In(red.id),
                ..query()
            }
        )
        .await,
        vec![in_red.id]
    );
    assert_eq!(
        ids(
            h,
            LinkQuery {
                space: SpaceFilter::In(blue.id),
                ..query()
            }
        )
        .await,
        vec![in_blue_on_domain.id]
    );
    assert_eq!(
        ids(
            h,
            LinkQuery {
                domain: Some(domain.id),
                ..query()
            }
        )
        .await,
        vec![in_blue_on_domain.id]
    );
    assert_eq!(
        ids(
            h,
            LinkQuery {
                space: SpaceFilter::In(red.id),
                domain: Some(domain.id),
                ..query()
            }
        )
        .await,
        Vec::<Id>::new()
    );
    // "No space" keeps the links in none, alone, with a search and beside another filter.
    let no_space = LinkQuery {
        space: SpaceFilter::NoSpace,
        ..query()
    };
    assert_eq!(ids(h, no_space.clone()).await, vec![loose.id]);
    let searched = LinkQuery {
        search: Some("example".into()),
        by: SearchBy::Url,
        ..no_space.clone()
    };
    assert_eq!(ids(h, searched).await, vec![loose.id]);
    let on_domain = LinkQuery {
        domain: Some(domain.id),
        ..no_space
    };
    assert_eq!(ids(h, on_domain).await, Vec::<Id>::new());
    let page = b
        .list_links(&LinkQuery {
            space: SpaceFilter::In(blue.id),
            ..query()
        })
        .await
        .unwrap();
    assert_eq!(page.total, 1);
    assert_eq!(b.list_links(&query()).await.unwrap().total, 3);
    assert_eq!(b.show_space(red.id).await.unwrap().links, Some(1));
    // Moving a link between spaces moves the counts.
    b.update_link(
        loose.id,
        &LinkInput {
            space: s(&red.id.to_string()),
            ..LinkInput::default()
        },
    )
    .await
    .unwrap();
    b.update_link(
        in_red.id,
        &LinkInput {
            space: s(""),
            ..LinkInput::default()
        },
    )
    .await
    .unwrap();
    assert_eq!(
        ids(
            h,
            LinkQuery {
                space: SpaceFilter::In(red.id),
                ..query()
            }
        )
        .await,
        vec![loose.id]
    );
    assert_eq!(b.show_space(red.id).await.unwrap().links, Some(1));
    b.delete_link(loose.id).await.unwrap();
    assert_eq!(b.show_space(red.id).await.unwrap().links, Some(0));
    assert_eq!(b.show_space(blue.id).await.unwrap().links, Some(1));
}

pub async fn update_changes_only_present_fields(h: &dyn Harness) {
    let sp = h
        .backend()
        .create_space(&space("Launch", "3"))
        .await
        .unwrap();
    let created = create(
        h,
        LinkInput {
            alias: s("keep-me"),
            space: s(&sp.id.to_string()),
            public: s("1"),
            expiration_clicks: s("50"),
            expiration_url: s("https://after.example"),
            target_type: s("3"),
            rotation: Some(vec![
                RuleInput::value("https://r1.example"),
                RuleInput::value("https://r2.example"),
            ]),
            ..link("https://a.example/start")
        },
    )
    .await;
    h.set_now(start() + hours(1));
    let updated = h
        .backend()
        .update_link(
            created.id,
            &LinkInput {
                disabled: s("1"),
                ..LinkInput::default()
            },
        )
        .await
        .unwrap();
    assert!(updated.disabled);
    assert_eq!(updated.updated_at, start() + hours(1));
    let expected = Link {
        disabled: true,
        updated_at: updated.updated_at,
        ..created.clone()
    };
    assert_eq!(updated, expected);
    // An empty update changes nothing but the update time.
    let same = h
        .backend()
        .update_link(created.id, &LinkInput::default())
        .await
        .unwrap();
    assert_eq!(same, expected);
}

pub async fn update_of_url_renews_the_title(h: &dyn Harness) {
    let created = create(h, link("https://old.example/a")).await;
    let updated = h
        .backend()
        .update_link(
            created.id,
            &LinkInput {
                url: s("https://new.example/b/"),
                ..LinkInput::default()
            },
        )
        .await
        .unwrap();
    assert_eq!(updated.url, "https://new.example/b/");
    assert_eq!(updated.title.as_deref(), Some("new.example/b"));
    assert_eq!(
        search(h, SearchBy::Title, "new.example").await,
        vec![created.id]
    );
    assert_eq!(
        search(h, SearchBy::Title, "old.example").await,
        Vec::<Id>::new()
    );
    assert_fields(
        h.backend()
            .update_link(
                created.id,
                &LinkInput {
                    url: s(""),
                    ..LinkInput::default()
                },
            )
            .await,
        &["url"],
    );
}

pub async fn domain_cannot_change_on_update(h: &dyn Harness) {
    let domain = h.add_domain("fixed.example", false).await;
    let created = create(h, link("https://a.example")).await;
    assert_fields(
        h.backend()
            .update_link(
                created.id,
                &LinkInput {
                    domain: s(&domain.id.to_string()),
                    ..LinkInput::default()
                },
            )
            .await,
        &["domain"],
    );
    assert_eq!(
        h.backend().show_link(created.id).await.unwrap().domain,
        None
    );
}

pub async fn targeting_is_validated_and_stored_canonically(h: &dyn Harness) {
    let created = create(
        h,
        LinkInput {
            target_type: s("1"),
            geo: Some(vec![
                RuleInput::new("us", "https://us.example"),
                RuleInput::default(),
                RuleInput::new("De", "https://de.example"),
            ]),
            platform: Some(vec![
                RuleInput::new("ios", "https://apple.example"),
                RuleInput::new("chrome os", "https://chrome.example"),
            ]),
            ..link("https://a.example")
        },
    )
    .await;
    assert_eq!(created.target_type, TargetType::Geo);
    let geo: Vec<(&str, &str)> = created
        .geo
        .iter()
        .map(|r| (r.key.as_str(), r.value.as_str()))
        .collect();
    assert_eq!(
        geo,
        [("US", "https://us.example"), ("DE", "https://de.example")]
    );
    let platforms: Vec<&str> = created.platform.iter().map(|r| r.key.as_str()).collect();
    assert_eq!(platforms, ["iOS", "Chrome OS"]);
    assert_eq!(h.backend().show_link(created.id).await.unwrap(), created);

    assert_fields(
        h.backend()
            .create_link(&LinkInput {
                geo: Some(vec![
                    RuleInput::new("FR", "https://a.example"),
                    RuleInput::new("fr", "https://b.example"),
                    RuleInput::new("", "https://c.example"),
                    RuleInput {
                        key: s("IT"),
                        value: None,
                    },
                ]),
                platform: Some(vec![
                    RuleInput::new("Android", "https://a.example"),
                    RuleInput::new("ANDROID", "https://b.example"),
                ]),
                rotation: Some(vec![RuleInput::new("x", "https://a.example")]),
                ..link("https://a.example")
            })
            .await,
        &[
            "geo.1.key",
            "geo.2.key",
            "geo.3.value",
            "platform.1.key",
            "rotation.0.key",
        ],
    );
    // Replacing a list replaces it whole; an empty list clears it.
    let updated = h
        .backend()
        .update_link(
            created.id,
            &LinkInput {
                target_type: s("0"),
                geo: Some(vec![]),
                ..LinkInput::default()
            },
        )
        .await
        .unwrap();
    assert_eq!(updated.target_type, TargetType::None);
    assert!(updated.geo.is_empty());
    assert_eq!(updated.platform.len(), 2);
}

pub async fn deleting_a_link_removes_it(h: &dyn Harness) {
    let a = create(h, aliased("https://a.example", "gone")).await;
    let b = create(h, link("https://b.example")).await;
    h.backend().delete_link(a.id).await.unwrap();
    assert_not_found(h.backend().show_link(a.id).await);
    assert_not_found(h.backend().delete_link(a.id).await);
    assert_not_found(h.backend().update_link(a.id, &LinkInput::default()).await);
    assert_not_found(h.backend().show_link(999_999).await);
    assert_eq!(ids(h, query()).await, vec![b.id]);
    assert_eq!(h.backend().list_links(&query()).await.unwrap().total, 1);
    assert_eq!(search(h, SearchBy::Alias, "gone").await, Vec::<Id>::new());
    // The alias is free again.
    assert_eq!(
        create(h, aliased("https://c.example", "GONE")).await.alias,
        "GONE"
    );
}

// ---- spaces ------------------------------------------------------------------------------------

pub async fn space_rules(h: &dyn Harness) {
    let b = h.backend();
    assert_fields(
        b.create_space(&SpaceInput::default()).await,
        &["name", "color"],
    );
    assert_fields(
        b.create_space(&space(&"n".repeat(33), "7")).await,
        &["name", "color"],
    );
    assert_fields(b.create_space(&space("  ", "red")).await, &["name"]);
    let created = b.create_space(&space(" Launch ", "blue")).await.unwrap();
    assert_eq!(created.name, "Launch");
    assert_eq!(created.color.number(), 5);
    assert_eq!(created.links, Some(0));
    assert_eq!(created.created_at, start());
    assert_eq!(b.show_space(created.id).await.unwrap(), created);
    let taken = assert_fields(b.create_space(&space("LAUNCH", "1")).await, &["name"]);
    assert!(!taken.get("name").unwrap().is_empty());
    // Both the duplicate and a bad colour at once.
    assert_fields(
        b.create_space(&space("launch", "9")).await,
        &["name", "color"],
    );
    // Another owner may use the name.
    h.other_owner()
        .create_space(&space("Launch", "1"))
        .await
        .unwrap();
    let other = b.create_space(&space("Other", "2")).await.unwrap();
    assert_fields(
        b.update_space(
            other.id,
            &SpaceInput {
                name: s("launch"),
                color: None,
            },
        )
        .await,
        &["name"],
    );
    h.set_now(start() + hours(2));
    let recoloured = b
        .update_space(
            created.id,
            &SpaceInput {
                name: None,
                color: s("6"),
            },
        )
        .await
        .unwrap();
    assert_eq!(recoloured.name, "Launch");
    assert_eq!(recoloured.color.number(), 6);
    assert_eq!(recoloured.updated_at, start() + hours(2));
    let renamed = b
        .update_space(
            created.id,
            &SpaceInput {
                name: s("launch"),
                color: None,
            },
        )
        .await
        .unwrap();
    assert_eq!(renamed.name, "launch");
    assert_fields(
        b.update_space(
            created.id,
            &SpaceInput {
                name: s(""),
                color: None,
            },
        )
        .await,
        &["name"],
    );
    assert_not_found(b.update_space(999_999, &space("x", "1")).await);
    b.delete_space(other.id).await.unwrap();
    assert_not_found(b.show_space(other.id).await);
    assert_not_found(b.delete_space(other.id).await);
}

pub async fn space_list_search_sort_and_paging(h: &dyn Harness) {
    let b = h.backend();
    let mut created = Vec::new();
    for i in 0..12 {
        let name = if i % 3 == 0 {
            format!("Team_{i}")
        } else {
            format!("Project {i}")
        };
        created.push(b.create_space(&space(&name, "1")).await.unwrap().id);
    }
    h.other_owner()
        .create_space(&space("Team_x", "1"))
        .await
        .unwrap();
    let page = b.list_spaces(&SpaceQuery::default()).await.unwrap();
    assert_eq!(page.total, 12);
    assert_eq!(page.items.len(), 10);
    let newest: Vec<Id> = created.iter().rev().take(10).copied().collect();
    assert_eq!(page.items.iter().map(|s| s.id).collect::<Vec<_>>(), newest);
    let second = b
        .list_spaces(&SpaceQuery {
            sort: Sort::Asc,
            page: 2,
            ..SpaceQuery::default()
        })
        .await
        .unwrap();
    assert_eq!(
        second.items.iter().map(|s| s.id).collect::<Vec<_>>(),
        created[10..]
    );
    let found = b
        .list_spaces(&SpaceQuery {
            search: s("team_"),
            sort: Sort::Asc,
            ..SpaceQuery::default()
        })
        .await
        .unwrap();
    let names: Vec<&str> = found.items.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(names, ["Team_0", "Team_3", "Team_6", "Team_9"]);
    assert_eq!(found.total, 4);
    // `_` is a literal underscore, not "any character".
    let none = b
        .list_spaces(&SpaceQuery {
            search: s("t_am"),
            ..SpaceQuery::default()
        })
        .await
        .unwrap();
    assert_eq!(none.total, 0);
    assert_fields(
        b.list_spaces(&SpaceQuery {
            sort: Sort::Max,
            ..SpaceQuery::default()
        })
        .await,
        &["sort"],
    );
}

pub async fn space_sizes_follow_their_links(h: &dyn Harness) {
    let b = h.backend();
    let first = b.create_space(&space("First", "1")).await.unwrap();
    let second = b.create_space(&space("Second", "2")).await.unwrap();
    let sizes = || async {
        (
            b.show_space(first.id).await.unwrap().links,
            b.show_space(second.id).await.unwrap().links,
        )
    };
    let moved = create(
        h,
        LinkInput {
            space: s(&first.id.to_string()),
            ..link("https://moved.example")
        },
    )
    .await;
    create(
        h,
        LinkInput {
            space: s(&first.id.to_string()),
            ..link("https://stays.example")
        },
    )
    .await;
    assert_eq!(sizes().await, (Some(2), Some(0)));
    let to = |space: &str| LinkInput {
        space: s(space),
        ..LinkInput::default()
    };
    b.update_link(moved.id, &to(&second.id.to_string()))
        .await
        .unwrap();
    assert_eq!(sizes().await, (Some(1), Some(1)));
    // An edit that keeps the space changes nothing.
    b.update_link(moved.id, &to(&second.id.to_string()))
        .await
        .unwrap();
    assert_eq!(sizes().await, (Some(1), Some(1)));
    b.update_link(moved.id, &to("")).await.unwrap();
    assert_eq!(sizes().await, (Some(1), Some(0)));
    b.update_link(moved.id, &to(&second.id.to_string()))
        .await
        .unwrap();
    b.delete_link(moved.id).await.unwrap();
    assert_eq!(sizes().await, (Some(1), Some(0)));
}

pub async fn deleting_a_space_keeps_its_links(h: &dyn Harness) {
    let b = h.backend();
    let doomed = b.create_space(&space("Doomed", "1")).await.unwrap();
    let kept = b.create_space(&space("Kept", "2")).await.unwrap();
    let mut in_doomed = Vec::new();
    for i in 0..3 {
        let l = create(
            h,
            LinkInput {
                space: s(&doomed.id.to_string()),
                ..link(&format!("https://d{i}.example"))
            },
        )
        .await;
        in_doomed.push(l.id);
    }
    let in_kept = create(
        h,
        LinkInput {
            space: s(&kept.id.to_string()),
            ..link("https://k.example")
        },
    )
    .await;
    assert_eq!(b.show_space(doomed.id).await.unwrap().links, Some(3));
    b.delete_space(doomed.id).await.unwrap();
    for id in &in_doomed {
        assert_eq!(b.show_link(*id).await.unwrap().space, None);
    }
    assert_eq!(b.list_links(&query()).await.unwrap().total, 4);
    let kept_now = b.show_space(kept.id).await.unwrap();
    assert_eq!(kept_now.links, Some(1));
    assert_eq!(
        b.show_link(in_kept.id).await.unwrap().space.unwrap().id,
        kept.id
    );
    // A link cannot be put into the deleted space.
    assert_fields(
        b.update_link(
            in_kept.id,
            &LinkInput {
                space: s(&doomed.id.to_string()),
                ..LinkInput::default()
            },
        )
        .await,
        &["space"],
    );
}

// ---- domains -----------------------------------------------------------------------------------

pub async fn domains_are_listed_and_give_short_urls(h: &dyn Harness) {
    let first = h.add_domain("https://sho.rt/", false).await;
    let second = h.add_domain("l.example:8443", false).await;
    h.add_domain("theirs.example", true).await;
    assert_eq!(first.name, "https://sho.rt");
    assert_eq!(second.name, "https://l.example:8443");
    let page = h.backend().list_domains(1, 10).await.unwrap();
    assert_eq!(page.total, 2);
    assert_eq!(page.items, vec![second.clone(), first.clone()]);
    assert_eq!(h.backend().show_domain(first.id).await.unwrap(), first);
    let l = create(
        h,
        LinkInput {
            domain: s(&second.id.to_string()),
            ..aliased("https://a.example", "x1")
        },
    )
    .await;
    assert_eq!(l.short_url, "https://l.example:8443/x1");
    // A link's domain comes without the domain's settings (they are the domain's own record's).
    let bare = Domain {
        settings: None,
        ..second.clone()
    };
    assert_eq!(l.domain.as_ref(), Some(&bare));
    // Same alias without a domain is another link.
    let plain = create(h, aliased("https://a.example", "x1")).await;
    assert_eq!(
        plain.short_url,
        format!("{}/x1", h.public_url().trim_end_matches('/'))
    );
    assert_not_found(h.backend().show_domain(999_999).await);
}

pub async fn domain_settings_change_only_what_is_given(h: &dyn Harness) {
    let domain = h.add_domain("sho.rt", false).await;
    assert_eq!(domain.settings, Some(HostSettings::default()));
    let b = h.backend();
    let input = |f: fn(&mut DomainInput)| {
        let mut i = DomainInput::default();
        f(&mut i);
        i
    };
    let set = b
        .update_domain(
            domain.id,
            &input(|i| {
                i.root_url = s("https://home.example/");
                i.unknown_url = s("https://home.example/404");
                i.robots = s("allow");
            }),
        )
        .await
        .unwrap();
    assert_eq!(
        set.settings().root_url.as_deref(),
        Some("https://home.example/")
    );
    assert_eq!(set.settings().robots, Robots::Allow);
    assert_eq!(b.show_domain(domain.id).await.unwrap(), set);
    let custom = "User-agent: *\nDisallow: /x\n";
    let next = b
        .update_domain(
            domain.id,
            &input(|i| {
                i.unknown_url = s("");
                i.robots_txt = s("User-agent: *\nDisallow: /x\n");
            }),
        )
        .await
        .unwrap();
    assert_eq!(next.settings().root_url, set.settings().root_url);
    assert_eq!(next.settings().unknown_url, None);
    assert_eq!(next.settings().robots, Robots::Custom(custom.into()));
    assert_eq!(
        b.list_domains(1, 10).await.unwrap().items,
        vec![next.clone()]
    );
    // Every bad field named at once; nothing changes.
    let refused = b
        .update_domain(
            domain.id,
            &input(|i| {
                i.root_url = s("javascript:alert(1)");
                i.expired_url = s("nope");
                i.robots = s("maybe");
            }),
        )
        .await;
    assert_fields(refused, &["root_url", "expired_url", "robots"]);
    assert_eq!(b.show_domain(domain.id).await.unwrap(), next);
    // Another owner's domain is not found.
    let theirs = h.add_domain("theirs.example", true).await;
    assert_not_found(
        b.update_domain(theirs.id, &input(|i| i.robots = s("allow")))
            .await,
    );
}

// ---- owners ------------------------------------------------------------------------------------

pub async fn other_owners_records_are_not_found(h: &dyn Harness) {
    let other = h.other_owner();
    let theirs = other
        .create_link(&aliased("https://theirs.example", "theirs"))
        .await
        .unwrap();
    let their_space = other.create_space(&space("Theirs", "1")).await.unwrap();
    let their_domain = h.add_domain("their.example", true).await;
    let b = h.backend();
    assert_not_found(b.show_link(theirs.id).await);
    assert_not_found(
        b.update_link(
            theirs.id,
            &LinkInput {
                disabled: s("1"),
                ..LinkInput::default()
            },
        )
        .await,
    );
    assert_not_found(b.delete_link(theirs.id).await);
    assert_not_found(b.show_space(their_space.id).await);
    assert_not_found(b.update_space(their_space.id, &space("Mine", "2")).await);
    assert_not_found(b.delete_space(their_space.id).await);
    assert_not_found(b.show_domain(their_domain.id).await);
    assert_eq!(b.list_links(&query()).await.unwrap().total, 0);
    assert_eq!(
        b.list_spaces(&SpaceQuery::default()).await.unwrap().total,
        0
    );
    assert_eq!(b.list_domains(1, 10).await.unwrap().total, 0);
    assert!(search(h, SearchBy::Alias, "theirs").await.is_empty());
    assert_eq!(
        ids(
            h,
            LinkQuery {
                space: SpaceFilter::In(their_space.id),
                ..query()
            }
        )
        .await,
        Vec::<Id>::new()
    );
    // Untouched.
    assert_eq!(other.show_link(theirs.id).await.unwrap(), theirs);
    assert_eq!(
        other.show_space(their_space.id).await.unwrap().name,
        "Theirs"
    );
}

pub async fn other_owners_space_or_domain_is_a_field_error(h: &dyn Harness) {
    let their_space = h
        .other_owner()
        .create_space(&space("Theirs", "1"))
        .await
        .unwrap();
    let their_domain = h.add_domain("their.example", true).await;
    assert_fields(
        h.backend()
            .create_link(&LinkInput {
                space: s(&their_space.id.to_string()),
                domain: s(&their_domain.id.to_string()),
                ..link("https://a.example")
            })
            .await,
        &["space", "domain"],
    );
    assert_fields(
        h.backend()
            .create_link(&LinkInput {
                space: s("424242"),
                ..link("https://a.example")
            })
            .await,
        &["space"],
    );
    let mine = create(h, link("https://a.example")).await;
    assert_fields(
        h.backend()
            .update_link(
                mine.id,
                &LinkInput {
                    space: s(&their_space.id.to_string()),
                    ..LinkInput::default()
                },
            )
            .await,
        &["space"],
    );
    assert_eq!(h.backend().show_link(mine.id).await.unwrap().space, None);
}

// ---- bulk ----------------------------------------------------------------------------------------

fn disable(on: bool) -> BulkAction {
    BulkAction::Update(LinkInput {
        disabled: s(if on { "1" } else { "0" }),
        ..LinkInput::default()
    })
}

async fn seed_campaign(h: &dyn Harness) -> (Vec<Link>, Vec<Link>) {
    let mut campaign = Vec::new();
    for i in 0..5 {
        campaign.push(
            create(
                h,
                aliased(
                    &format!("https://shop.example/spring-{i}"),
                    &format!("spring{i}"),
                ),
            )
            .await,
        );
    }
    let mut others = Vec::new();
    for i in 0..3 {
        others.push(
            create(
                h,
                aliased(
                    &format!("https://docs.example/page-{i}"),
                    &format!("doc{i}"),
                ),
            )
            .await,
        );
    }
    (campaign, others)
}

fn spring() -> LinkQuery {
    LinkQuery {
        search: s("spring"),
        by: SearchBy::Url,
        ..query()
    }
}

async fn disabled_ids(h: &dyn Harness) -> Vec<Id> {
    let mut ids = ids(
        h,
        LinkQuery {
            status: StatusFilter::Disabled,
            ..query()
        },
    )
    .await;
    ids.sort();
    ids
}

pub async fn bulk_update_by_filter_changes_every_match_and_undoes(h: &dyn Harness) {
    let (campaign, _) = seed_campaign(h).await;
    // One is already disabled, one is spared.
    h.backend()
        .update_link(
            campaign[0].id,
            &LinkInput {
                disabled: s("1"),
                ..LinkInput::default()
            },
        )
        .await
        .unwrap();
    let spared = campaign[4].id;
    let selection = Selection {
        except: [spared].into(),
        ..Selection::matching(spring())
    };
    let progress = Progress::new();
    let report = h
        .backend()
        .bulk(&selection, &disable(true), &progress)
        .await
        .unwrap();
    assert_eq!(report.matched, 4, "{report:?}");
    assert_eq!(report.changed, 3);
    assert_eq!(report.unchanged, 1);
    assert!(report.failed.is_empty());
    assert_eq!(progress.get(), (4, 4));
    let want: Vec<Id> = campaign[..4].iter().map(|l| l.id).collect();
    assert_eq!(disabled_ids(h).await, want);

    // Undo puts back what each link had: the one already disabled stays so.
    let back = h
        .backend()
        .revert(&report.undo, &Progress::new())
        .await
        .unwrap();
    assert_eq!(back.changed, 3, "{back:?}");
    assert_eq!(disabled_ids(h).await, vec![campaign[0].id]);
}

pub async fn bulk_goes_on_past_a_missing_link_and_lists_it(h: &dyn Harness) {
    let (campaign, others) = seed_campaign(h).await;
    let missing = 999_999;
    let selection = Selection::of_ids([campaign[1].id, missing, others[2].id]);
    let report = h
        .backend()
        .bulk(&selection, &disable(true), &Progress::new())
        .await
        .unwrap();
    assert_eq!(report.changed, 2, "{report:?}");
    assert_eq!(report.failed.len(), 1);
    assert_eq!(report.failed[0].id, missing);
    assert!(
        matches!(report.failed[0].error, Error::NotFound(_)),
        "{report:?}"
    );
    let mut want = vec![campaign[1].id, others[2].id];
    want.sort();
    assert_eq!(disabled_ids(h).await, want);
}

pub async fn bulk_moves_links_between_spaces(h: &dyn Harness) {
    let (campaign, others) = seed_campaign(h).await;
    let launch = h
        .backend()
        .create_space(&space("Launch", "2"))
        .await
        .unwrap();
    let docs = h.backend().create_space(&space("Docs", "3")).await.unwrap();
    h.backend()
        .update_link(
            others[0].id,
            &LinkInput {
                space: Some(docs.id.to_string()),
                ..LinkInput::default()
            },
        )
        .await
        .unwrap();
    let into_launch = BulkAction::Update(LinkInput {
        space: Some(launch.id.to_string()),
        ..LinkInput::default()
    });
    let selection = Selection {
        ids: [others[0].id].into(),
        ..Selection::matching(spring())
    };
    let report = h
        .backend()
        .bulk(&selection, &into_launch, &Progress::new())
        .await
        .unwrap();
    assert_eq!(report.changed, 6, "{report:?}");
    let size = |id| async move { h.backend().show_space(id).await.unwrap().links };
    assert_eq!(size(launch.id).await, Some(6));
    assert_eq!(size(docs.id).await, Some(0));
    let in_launch = ids(
        h,
        LinkQuery {
            space: SpaceFilter::In(launch.id),
            ..query()
        },
    )
    .await;
    assert_eq!(in_launch.len(), 6);
    assert!(in_launch.contains(&campaign[3].id));

    // Out of spaces, and back by undo.
    let out = BulkAction::Update(LinkInput {
        space: s(""),
        ..LinkInput::default()
    });
    let report = h
        .backend()
        .bulk(
            &Selection::matching(LinkQuery {
                space: SpaceFilter::In(launch.id),
                ..query()
            }),
            &out,
            &Progress::new(),
        )
        .await
        .unwrap();
    assert_eq!(report.changed, 6);
    assert_eq!(size(launch.id).await, Some(0));
    h.backend()
        .revert(&report.undo, &Progress::new())
        .await
        .unwrap();
    assert_eq!(size(launch.id).await, Some(6));
}

pub async fn bulk_refuses_fields_that_belong_to_one_link(h: &dyn Harness) {
    let (campaign, _) = seed_campaign(h).await;
    let action = BulkAction::Update(LinkInput {
        alias: s("same"),
        disabled: s("1"),
        ..LinkInput::default()
    });
    let result = h
        .backend()
        .bulk(&Selection::matching(spring()), &action, &Progress::new())
        .await;
    assert_fields(result, &["alias"]);
    assert!(disabled_ids(h).await.is_empty(), "nothing changed");
    let bad_space = BulkAction::Update(LinkInput {
        space: s("999999"),
        ..LinkInput::default()
    });
    let result = h
        .backend()
        .bulk(
            &Selection::of_ids([campaign[0].id]),
            &bad_space,
            &Progress::new(),
        )
        .await;
    assert!(
        result.is_err() || !result.as_ref().unwrap().failed.is_empty(),
        "{result:?}"
    );
}

pub async fn bulk_delete_by_filter_and_undo(h: &dyn Harness) {
    let (campaign, others) = seed_campaign(h).await;
    h.set_clicks(campaign[2].id, 42).await;
    let report = h
        .backend()
        .bulk(
            &Selection::matching(spring()),
            &BulkAction::Delete,
            &Progress::new(),
        )
        .await
        .unwrap();
    assert_eq!(report.changed, 5, "{report:?}");
    let left = ids(h, query()).await;
    assert_eq!(left.len(), 3);
    assert!(others.iter().all(|l| left.contains(&l.id)));
    assert!(search(h, SearchBy::Url, "spring").await.is_empty());

    let back = h
        .backend()
        .revert(&report.undo, &Progress::new())
        .await
        .unwrap();
    assert_eq!(back.changed, 5, "{back:?}");
    let found = h.backend().list_links(&spring()).await.unwrap().items;
    let mut aliases: Vec<&str> = found.iter().map(|l| l.alias.as_str()).collect();
    aliases.sort();
    assert_eq!(
        aliases,
        ["spring0", "spring1", "spring2", "spring3", "spring4"]
    );
    if matches!(report.undo, Undo::Restore { .. }) {
        // A trash brings them back as they were: the same ids and clicks.
        let restored = h.backend().show_link(campaign[2].id).await.unwrap();
        assert_eq!(restored.clicks, 42);
        assert_eq!(restored.alias, "spring2");
        let mut want: Vec<Id> = campaign.iter().map(|l| l.id).collect();
        want.sort();
        let mut got: Vec<Id> = found.iter().map(|l| l.id).collect();
        got.sort();
        assert_eq!(got, want);
    } else {
        assert!(
            back.notes.iter().any(|n| n.contains("0 clicks")),
            "{back:?}"
        );
    }
    // Still searchable once back.
    assert_eq!(search(h, SearchBy::Alias, "spring3").await.len(), 1);
}

pub async fn bulk_preview_counts_and_shows_the_first(h: &dyn Harness) {
    let (campaign, _) = seed_campaign(h).await;
    let preview = h
        .backend()
        .preview(&Selection::matching(spring()), 3)
        .await
        .unwrap();
    assert_eq!(preview.total, 5);
    assert_eq!(preview.first.len(), 3);
    assert_eq!(preview.first[0].id, campaign[4].id, "newest first");
}
