//! The behaviour suite on the embedded service over PostgreSQL (a fresh database of a real,
//! throwaway cluster per test), plus what only a shared database has: several services — as
//! several processes would be — writing at once, the same alias or name raced for, the trash.
//!
//! Without PostgreSQL's server programs every test here says why (once) and passes; with
//! `LINKDECK_REQUIRE_POSTGRES=1` they fail instead (see `tests/pg_cluster`).

#[macro_use]
mod suite;
mod embedded;
mod pg_cluster;
mod raw;

use embedded::Embedded;
use linkdeck::backend::local::pg::PgTarget;
use linkdeck::backend::local::{LocalBackend, StoreLocation};
use linkdeck::backend::{Backend, BulkAction, Progress, Selection, Trashed, TrashedKind, Undo};
use linkdeck::domain::{
    Error, Id, Link, LinkInput, LinkQuery, Page, SearchBy, Sort, SpaceInput, StatusFilter, TagMatch,
};
use std::time::Duration;

/// The suite's harness on a fresh database of the throwaway cluster.
pub type PgHarness = Embedded;

/// `None` when PostgreSQL is not installed (the cluster has said so).
pub async fn pg_harness() -> Option<PgHarness> {
    let cluster = pg_cluster::cluster()?;
    let target = PgTarget::parse(&cluster.fresh_database())
        .unwrap()
        .with_password(pg_cluster::PASSWORD);
    Some(Embedded::open(StoreLocation::Postgres(target)).await)
}

/// Runs `sql` on the harness's database directly (test setup only).
async fn sql(h: &PgHarness, sql: &str, params: &[&(dyn tokio_postgres::types::ToSql + Sync)]) {
    let client = h.raw.pg().await.unwrap().client().await.unwrap();
    client.execute(sql, params).await.unwrap();
}

/// The ids `select` answers, written in SQL as a reference for what a list must hold.
async fn ids_selected(
    h: &PgHarness,
    select: &str,
    params: &[&(dyn tokio_postgres::types::ToSql + Sync)],
) -> Vec<Id> {
    let client = h.raw.pg().await.unwrap().client().await.unwrap();
    let rows = client.query(select, params).await.unwrap();
    rows.iter().map(|row| row.get(0)).collect()
}

/// The ids of the links of the page `q` lists.
async fn ids_listed(h: &PgHarness, q: &LinkQuery) -> Vec<Id> {
    let page = h.mine.list_links(q).await.unwrap();
    page.items.iter().map(|l| l.id).collect()
}

backend_suite!(match pg_harness().await {
    Some(harness) => harness,
    None => return,
});

// ---- PostgreSQL only ------------------------------------------------------------------------------

macro_rules! harness {
    () => {
        match $crate::pg_harness().await {
            Some(harness) => harness,
            None => return,
        }
    };
}

fn aliased(url: &str, alias: &str) -> LinkInput {
    LinkInput {
        alias: Some(alias.into()),
        ..LinkInput::with_url(url)
    }
}

fn space_input(name: &str, color: &str) -> SpaceInput {
    SpaceInput {
        name: Some(name.into()),
        color: Some(color.into()),
    }
}

fn all_links() -> LinkQuery {
    LinkQuery {
        per_page: 100,
        ..LinkQuery::default()
    }
}

/// The messages of field `field`, or a panic naming what came instead.
#[track_caller]
fn field_messages<T: std::fmt::Debug>(result: Result<T, Error>, field: &str) -> Vec<String> {
    match result {
        Err(Error::Validation(errors)) => errors
            .get(field)
            .unwrap_or_else(|| panic!("no error on {field}: {errors}"))
            .to_vec(),
        other => panic!("expected a field error on {field}, got {other:?}"),
    }
}

/// Two services (as two processes) create links with the same alias at the same moment, many
/// times over: each time exactly one gets it and the other is told the alias is taken — never
/// a failure of another kind.
#[tokio::test]
async fn an_alias_raced_for_goes_to_one_writer_and_the_other_is_told_it_is_taken() {
    let h = harness!();
    let second = h.second_service().await.default_backend().await.unwrap();
    for round in 0..25 {
        let alias = format!("race{round}");
        let (first, other) = (
            aliased("https://a.example", &alias),
            aliased("https://b.example", &alias.to_uppercase()),
        );
        let (a, b) = tokio::join!(h.mine.create_link(&first), second.create_link(&other));
        let (won, lost) = match (a, b) {
            (Ok(link), lost) | (lost, Ok(link)) => (link, lost),
            (a, b) => panic!("round {round}: neither got the alias: {a:?} / {b:?}"),
        };
        assert!(won.alias.eq_ignore_ascii_case(&alias));
        assert_eq!(field_messages(lost, "alias"), ["is already taken"]);
    }
    assert_eq!(h.mine.list_links(&all_links()).await.unwrap().total, 25);
}

/// The same race between two renames.
#[tokio::test]
async fn an_alias_raced_for_by_two_updates_goes_to_one() {
    let h = harness!();
    let second = h.second_service().await.default_backend().await.unwrap();
    for round in 0..15 {
        let a = h
            .mine
            .create_link(&LinkInput::with_url("https://a.example"))
            .await
            .unwrap();
        let b = h
            .mine
            .create_link(&LinkInput::with_url("https://b.example"))
            .await
            .unwrap();
        let rename = LinkInput {
            alias: Some(format!("renamed{round}")),
            ..LinkInput::default()
        };
        let (ra, rb) = tokio::join!(
            h.mine.update_link(a.id, &rename),
            second.update_link(b.id, &rename)
        );
        let lost = match (ra, rb) {
            (Ok(_), lost) | (lost, Ok(_)) => lost,
            (a, b) => panic!("round {round}: neither renamed: {a:?} / {b:?}"),
        };
        assert_eq!(field_messages(lost, "alias"), ["is already taken"]);
    }
}

/// Spaces and domains raced for by name end the same way: one gets it, the other a field error.
#[tokio::test]
async fn a_space_or_domain_name_raced_for_goes_to_one() {
    let h = harness!();
    let second = h.second_service().await.default_backend().await.unwrap();
    for round in 0..10 {
        let name = format!("Team {round}");
        let (first, other) = (
            space_input(&name, "1"),
            space_input(&name.to_lowercase(), "2"),
        );
        let (a, b) = tokio::join!(h.mine.create_space(&first), second.create_space(&other));
        let lost = match (a, b) {
            (Ok(_), lost) | (lost, Ok(_)) => lost,
            (a, b) => panic!("round {round}: neither made the space: {a:?} / {b:?}"),
        };
        assert_eq!(
            field_messages(lost, "name"),
            ["is already used by another of your spaces"]
        );
        let host = format!("race{round}.example");
        let (a, b) = tokio::join!(h.mine.add_domain(&host), h.theirs.add_domain(&host));
        let lost = match (a, b) {
            (Ok(_), lost) | (lost, Ok(_)) => lost,
            (a, b) => panic!("round {round}: neither added the domain: {a:?} / {b:?}"),
        };
        assert_eq!(
            field_messages(lost, "name"),
            [format!("{host} is already in use")]
        );
    }
}

#[tokio::test]
async fn two_services_on_one_database_share_reads_and_writes() {
    let h = harness!();
    let second = h.second_service().await.default_backend().await.unwrap();
    assert_eq!(second.owner_id(), h.mine.owner_id());
    let created = h
        .mine
        .create_link(&LinkInput::with_url("https://first.example"))
        .await
        .unwrap();
    assert_eq!(second.show_link(created.id).await.unwrap(), created);
    let updated = second
        .update_link(
            created.id,
            &LinkInput {
                disabled: Some("1".into()),
                ..LinkInput::default()
            },
        )
        .await
        .unwrap();
    assert_eq!(h.mine.show_link(created.id).await.unwrap(), updated);
    // Writers on both services at once: every write lands, none is lost, the counters agree.
    let space = h
        .mine
        .create_space(&space_input("Shared", "3"))
        .await
        .unwrap();
    let writes = |b: LocalBackend, tag: &'static str| {
        let space = space.id.to_string();
        async move {
            for i in 0..15 {
                b.create_link(&LinkInput {
                    space: Some(space.clone()),
                    ..LinkInput::with_url(format!("https://{tag}{i}.example"))
                })
                .await
                .unwrap();
            }
        }
    };
    tokio::join!(
        writes(h.mine.clone(), "a"),
        writes(second.clone(), "b"),
        writes(h.mine.clone(), "c")
    );
    assert_eq!(h.mine.list_links(&all_links()).await.unwrap().total, 46);
    assert_eq!(second.list_links(&all_links()).await.unwrap().total, 46);
    assert_eq!(second.show_space(space.id).await.unwrap().links, Some(45));
}

#[tokio::test]
async fn domains_are_added_and_removed_by_their_owner() {
    let h = harness!();
    let domain = h.mine.add_domain("Sho.RT").await.unwrap();
    assert_eq!(domain.name, "https://sho.rt");
    for dup in ["sho.rt", "http://SHO.rt/"] {
        let err = h.theirs.add_domain(dup).await.unwrap_err();
        assert!(err.field_errors().unwrap().contains("name"), "{dup}: {err}");
    }
    let link = h
        .mine
        .create_link(&LinkInput {
            domain: Some(domain.id.to_string()),
            ..LinkInput::with_url("https://a.example")
        })
        .await
        .unwrap();
    let err = h.mine.remove_domain(domain.id).await.unwrap_err();
    assert!(
        matches!(&err, Error::Conflict(m) if m.contains("1 link")),
        "{err}"
    );
    assert!(matches!(
        h.theirs.remove_domain(domain.id).await,
        Err(Error::NotFound(_))
    ));
    h.mine.delete_link(link.id).await.unwrap();
    // A deleted link waits in the trash, where it still needs its domain.
    let err = h.mine.remove_domain(domain.id).await.unwrap_err();
    assert!(err.to_string().contains("trash"), "{err}");
    assert_eq!(h.mine.empty_trash().await.unwrap(), 1);
    h.mine.remove_domain(domain.id).await.unwrap();
    assert!(matches!(
        h.mine.show_domain(domain.id).await,
        Err(Error::NotFound(_))
    ));
}

async fn trash_of(backend: &LocalBackend) -> Vec<Trashed> {
    backend.trash(1, 100).await.unwrap().unwrap().items
}

#[tokio::test]
async fn a_deleted_link_waits_in_the_trash_with_its_id_and_clicks() {
    let h = harness!();
    let link = h
        .mine
        .create_link(&aliased("https://a.example", "kept"))
        .await
        .unwrap();
    suite::Harness::set_clicks(&h, link.id, 3).await;
    h.mine.delete_link(link.id).await.unwrap();
    assert!(matches!(
        h.mine.show_link(link.id).await,
        Err(Error::NotFound(_))
    ));
    // A new link never takes its id.
    let newer = h
        .mine
        .create_link(&LinkInput::with_url("https://b.example"))
        .await
        .unwrap();
    assert!(newer.id > link.id);
    let trash = trash_of(&h.mine).await;
    assert_eq!(trash.len(), 1);
    assert_eq!(
        (
            trash[0].kind,
            trash[0].id,
            trash[0].clicks,
            trash[0].name.as_str()
        ),
        (TrashedKind::Link, link.id, 3, "kept")
    );
    assert!(trash[0].purge_at.is_some());
    let report = h.mine.restore(&trash).await.unwrap();
    assert_eq!(report.changed, 1);
    let back = h.mine.show_link(link.id).await.unwrap();
    assert_eq!((back.alias.as_str(), back.clicks), ("kept", 3));
    assert!(trash_of(&h.mine).await.is_empty());
    // Deleted again and left past the profile's days: gone for good at the next look.
    h.mine.delete_link(link.id).await.unwrap();
    h.clock
        .set(suite::start() + jiff::SignedDuration::from_hours(24 * 31));
    assert!(trash_of(&h.mine).await.is_empty());
    assert_eq!(h.mine.list_links(&all_links()).await.unwrap().total, 1);
}

#[tokio::test]
async fn a_link_whose_alias_was_taken_meanwhile_stays_in_the_trash() {
    let h = harness!();
    let first = h
        .mine
        .create_link(&aliased("https://a.example", "promo"))
        .await
        .unwrap();
    let keep = h
        .mine
        .create_link(&LinkInput::with_url("https://k.example"))
        .await
        .unwrap();
    let report = h
        .mine
        .bulk(
            &Selection::of_ids([first.id, keep.id]),
            &BulkAction::Delete,
            &Progress::new(),
        )
        .await
        .unwrap();
    assert_eq!(report.changed, 2);
    // The alias is free while its link is in the trash.
    let second = h
        .mine
        .create_link(&aliased("https://b.example", "PROMO"))
        .await
        .unwrap();
    let back = h.mine.revert(&report.undo, &Progress::new()).await.unwrap();
    assert_eq!(back.changed, 1, "{back:?}");
    assert_eq!(back.failed.len(), 1);
    assert_eq!(back.failed[0].id, first.id);
    assert!(
        back.failed[0].error.to_string().contains("promo"),
        "{back:?}"
    );
    assert!(h.mine.show_link(keep.id).await.is_ok());
    assert!(h.mine.show_link(second.id).await.is_ok());
    let trash = trash_of(&h.mine).await;
    assert_eq!(trash.iter().map(|t| t.id).collect::<Vec<_>>(), [first.id]);
}

#[tokio::test]
async fn a_trashed_space_comes_back_with_its_links() {
    let h = harness!();
    let space = h
        .mine
        .create_space(&space_input("Launch", "4"))
        .await
        .unwrap();
    let mut members = Vec::new();
    for i in 0..3 {
        let link = h
            .mine
            .create_link(&LinkInput {
                space: Some(space.id.to_string()),
                ..LinkInput::with_url(format!("https://example.com/{i}"))
            })
            .await
            .unwrap();
        members.push(link.id);
    }
    h.mine.delete_space(space.id).await.unwrap();
    assert!(h.mine.show_link(members[0]).await.unwrap().space.is_none());
    // One link moves elsewhere meanwhile: it stays where it was put.
    let other = h
        .mine
        .create_space(&space_input("Other", "1"))
        .await
        .unwrap();
    assert!(other.id > space.id, "a deleted space's id is not given out");
    h.mine
        .update_link(
            members[2],
            &LinkInput {
                space: Some(other.id.to_string()),
                ..LinkInput::default()
            },
        )
        .await
        .unwrap();
    let trash = trash_of(&h.mine).await;
    assert_eq!(trash.len(), 1);
    assert_eq!(
        (trash[0].kind, trash[0].detail.as_str()),
        (TrashedKind::Space, "3 links")
    );
    h.mine.restore(&trash).await.unwrap();
    let back = h.mine.show_space(space.id).await.unwrap();
    assert_eq!((back.name.as_str(), back.links), ("Launch", Some(2)));
    let space_of = |id| {
        let mine = h.mine.clone();
        async move { mine.show_link(id).await.unwrap().space.map(|s| s.id) }
    };
    assert_eq!(space_of(members[0]).await, Some(space.id));
    assert_eq!(space_of(members[2]).await, Some(other.id));
    assert_eq!(h.mine.show_space(other.id).await.unwrap().links, Some(1));
}

#[tokio::test]
async fn a_cancelled_bulk_change_changes_nothing() {
    let h = harness!();
    let link = h
        .mine
        .create_link(&LinkInput::with_url("https://a.example"))
        .await
        .unwrap();
    for action in [
        BulkAction::Delete,
        BulkAction::Update(LinkInput {
            disabled: Some("1".into()),
            ..LinkInput::default()
        }),
    ] {
        let progress = Progress::new();
        progress.cancel();
        let report = h
            .mine
            .bulk(&Selection::of_ids([link.id]), &action, &progress)
            .await
            .unwrap();
        assert!(report.cancelled, "{action:?}");
        assert_eq!(report.changed, 0);
        assert!(matches!(report.undo, Undo::Nothing));
        assert!(!h.mine.show_link(link.id).await.unwrap().disabled);
    }
}

/// Asks `q` in every order, at each page of each size in `pages`, and checks that each is its
/// slice of `whole` (each match's clicks and id) in that order, ties in clicks broken by id,
/// under an exact total.
async fn each_page_is_its_slice(
    backend: &LocalBackend,
    q: &LinkQuery,
    whole: &[(u64, Id)],
    pages: [(u32, std::ops::RangeInclusive<u32>); 3],
) {
    let n = whole.len() as u32;
    for sort in Sort::ALL {
        let expected = suite::in_list_order(whole.to_vec(), sort);
        for (per_page, pages) in pages.clone() {
            for page in pages {
                let q = LinkQuery {
                    sort,
                    page,
                    per_page,
                    ..q.clone()
                };
                let p = backend.list_links(&q).await.unwrap();
                let asked = format!("{q:?}");
                assert_eq!((p.total, p.total_exact), (u64::from(n), true), "{asked}");
                let ids: Vec<Id> = p.items.iter().map(|l| l.id).collect();
                let from = ((page - 1) * per_page).min(n) as usize;
                let to = (from + per_page as usize).min(n as usize);
                assert_eq!(ids, expected[from..to], "{asked}");
            }
        }
    }
}

/// Any page of a search, deep or shallow (read from the nearer end), in every order, is the
/// same slice of the whole ordered list of matches, ties in clicks broken by id; and so is a
/// page of the disabled links holding a term most links hold, which is checked on the disabled
/// rows rather than looked up, and in a clicks order sorted whole.
#[tokio::test]
async fn every_page_of_a_search_is_its_slice_of_the_whole_list_in_every_order() {
    let h = harness!();
    // 600 links straight into the table: every sixth a match of `/match/`, every twelfth
    // disabled, and every sixtieth (disabled too) on another host. Few distinct click counts,
    // so most of the order is decided by the id among equal clicks.
    sql(
        &h,
        "INSERT INTO links (id, owner_id, alias, url, title, clicks, disabled, created_at, \
                            updated_at) \
         SELECT i, $1, 'a' || i, \
                CASE WHEN i % 60 = 1 THEN 'https://elsewhere.example/' \
                     ELSE 'https://links.example-store.com/' END \
                || CASE WHEN i % 6 = 1 THEN 'match/' ELSE 'other/' END || i, \
                NULL, (i * 7) % 5, i % 12 = 1, 0, 0 \
         FROM generate_series(1, 600) AS i",
        &[&h.mine.owner_id()],
    )
    .await;
    // Statistics, as autovacuum would gather them: the host's term is then sized as leaving
    // far more rows than the disabled status, and checked on the 50 disabled rows.
    sql(&h, "ANALYZE links", &[]).await;
    // Each status, the term asked, and which links it lists.
    type Lists = fn(Id) -> bool;
    let cases: [(StatusFilter, &str, Lists); 2] = [
        (StatusFilter::All, "/MATCH/", |i: Id| i % 6 == 1),
        (
            StatusFilter::Disabled,
            "LINKS.example-store.com/",
            |i: Id| i % 12 == 1 && i % 60 != 1,
        ),
    ];
    for (status, term, holds) in cases {
        let whole: Vec<(u64, Id)> = (1..=600)
            .filter(|&i| holds(i))
            .map(|id: Id| (((id * 7) % 5) as u64, id))
            .collect();
        let q = LinkQuery {
            search: Some(term.into()),
            by: SearchBy::Url,
            status,
            ..LinkQuery::default()
        };
        let pages = [(10, 1..=11), (30, 1..=5), (100, 1..=2)];
        each_page_is_its_slice(&h.mine, &q, &whole, pages).await;
    }
    // The whole list's total comes from the owner's counter, kept by the database.
    assert_eq!(h.mine.list_links(&all_links()).await.unwrap().total, 600);
}

/// A tagged list is the same slice of its whole ordered list on every page and in every order,
/// whether its links are found through the planner's plan or read from their few candidates (a
/// tag's links, or the disabled ones) and sorted: every tag or any of them, beside a term most
/// links hold, a term too short for the trigram index, a selective term, or none.
#[tokio::test]
async fn every_page_of_a_tagged_list_is_its_slice_of_the_whole_list_in_every_order() {
    let h = harness!();
    // 600 links: every second tagged red, every fifth blue, every thirtieth green; every
    // twelfth disabled, every ninth expired; every sixth a match of `/match/`, every sixtieth
    // on another host.
    sql(
        &h,
        "INSERT INTO links (id, owner_id, alias, url, title, clicks, disabled, ends_at, tags, \
                            created_at, updated_at) \
         SELECT i, $1, 'a' || i, \
                CASE WHEN i % 60 = 1 THEN 'https://elsewhere.example/' \
                     ELSE 'https://links.example-store.com/' END \
                || CASE WHEN i % 6 = 1 THEN 'match/' ELSE 'other/' END || i, \
                NULL, (i * 7) % 5, i % 12 = 1, CASE WHEN i % 9 = 0 THEN 1 END, \
                (SELECT json_agg(t)::text FROM unnest(ARRAY[ \
                    CASE WHEN i % 2 = 0 THEN 'red' END, \
                    CASE WHEN i % 5 = 0 THEN 'blue' END, \
                    CASE WHEN i % 30 = 0 THEN 'green' END]) AS t WHERE t IS NOT NULL), \
                0, 0 \
         FROM generate_series(1, 600) AS i",
        &[&h.mine.owner_id()],
    )
    .await;
    sql(&h, "ANALYZE", &[]).await;
    let red = |i: Id| i % 2 == 0;
    let blue = |i: Id| i % 5 == 0;
    let green = |i: Id| i % 30 == 0;
    let host = |i: Id| i % 60 != 1;
    let disabled = |i: Id| i % 12 == 1;
    let expired = |i: Id| i % 9 == 0;
    let active = move |i: Id| !disabled(i) && !expired(i);
    // Each status, term (by url or alias), tags and whether every one is asked, and which
    // links it lists.
    type Lists = Box<dyn Fn(Id) -> bool>;
    type Case = (
        StatusFilter,
        Option<(SearchBy, &'static str)>,
        &'static [&'static str],
    );
    let cases: [(Case, TagMatch, Lists); 8] = [
        (
            (
                StatusFilter::All,
                Some((SearchBy::Url, "LINKS.example-store.com/")),
                &["green"],
            ),
            TagMatch::All,
            Box::new(move |i| green(i) && host(i)),
        ),
        (
            (StatusFilter::All, None, &["red", "blue"]),
            TagMatch::All,
            Box::new(move |i| red(i) && blue(i)),
        ),
        (
            (StatusFilter::Disabled, None, &["blue", "red"]),
            TagMatch::Any,
            Box::new(move |i| disabled(i) && (red(i) || blue(i))),
        ),
        (
            (
                StatusFilter::Active,
                Some((SearchBy::Url, "/MATCH/")),
                &["blue"],
            ),
            TagMatch::All,
            Box::new(move |i| i % 6 == 1 && active(i) && blue(i)),
        ),
        (
            (StatusFilter::All, Some((SearchBy::Alias, "A1")), &["red"]),
            TagMatch::Any,
            Box::new(move |i| i.to_string().starts_with('1') && red(i)),
        ),
        (
            (
                StatusFilter::Active,
                Some((SearchBy::Url, "example-store.com/other/")),
                &["green", "blue"],
            ),
            TagMatch::Any,
            Box::new(move |i| host(i) && i % 6 != 1 && active(i) && (green(i) || blue(i))),
        ),
        (
            (StatusFilter::Active, None, &["blue"]),
            TagMatch::All,
            Box::new(move |i| active(i) && blue(i)),
        ),
        (
            (StatusFilter::Expired, None, &["red"]),
            TagMatch::Any,
            Box::new(move |i| expired(i) && red(i)),
        ),
    ];
    for (case, ((status, search, tags), tag_match, holds)) in cases.into_iter().enumerate() {
        let whole: Vec<(u64, Id)> = (1..=600)
            .filter(|&i| holds(i))
            .map(|id: Id| (((id * 7) % 5) as u64, id))
            .collect();
        let q = LinkQuery {
            search: search.map(|(_, term)| term.to_owned()),
            by: search.map_or(SearchBy::Url, |(by, _)| by),
            status,
            tags: tags.iter().map(|&t| t.to_owned()).collect(),
            tag_match,
            ..LinkQuery::default()
        };
        let pages = [(10, 1..=4), (30, 1..=3), (100, 1..=3)];
        each_page_is_its_slice(&h.mine, &q, &whole, pages).await;
        // A bulk action on every match of the same filter reaches the same links: each gets a
        // tag of its own, and that tag's list is the matches.
        let picked = format!("picked-{case}");
        let action = BulkAction::Tag {
            add: vec![picked.clone()],
            remove: Vec::new(),
        };
        let selection = Selection::matching(q);
        let progress = Progress::new();
        let report = h.mine.bulk(&selection, &action, &progress).await.unwrap();
        let asked = format!("{search:?} {tags:?} {status:?}");
        assert_eq!(report.matched, whole.len() as u64, "{asked}");
        let expected = suite::in_list_order(whole, Sort::Asc);
        for (page, want) in expected.chunks(100).enumerate() {
            let q = LinkQuery {
                tags: vec![picked.clone()],
                sort: Sort::Asc,
                page: page as u32 + 1,
                per_page: 100,
                ..LinkQuery::default()
            };
            let got = h.mine.list_links(&q).await.unwrap();
            let ids: Vec<Id> = got.items.iter().map(|l| l.id).collect();
            assert_eq!(ids, want, "{picked} page {}", page + 1);
        }
    }
}

/// A term or a tag checked on each row a list's sets leave, rather than looked up in an index,
/// is found as the index would find it: a term in any case as `ILIKE` finds it, letters beyond
/// ASCII included (`ß`, `É`, a Kelvin sign, a dotted capital I), and a tag with a quote, a
/// backslash and wildcards in it. Each list is the links the same filter finds in SQL.
#[tokio::test]
async fn a_term_or_tag_checked_on_the_rows_is_found_as_the_indexes_find_it() {
    let h = harness!();
    // 600 links, every title one of four spellings of the same words; a few tagged `few`
    // (more checks of a term on these rows cost less than the term's trigram postings), and
    // every second one two odd tags.
    let odd = ["50%_off", "say \"hi\" \\ now"];
    sql(
        &h,
        "INSERT INTO links (id, owner_id, alias, url, title, clicks, tags, created_at, updated_at) \
         SELECT i, $1, 'a' || i, 'https://x.example/' || i, \
                (ARRAY['STRASSE ÉTÉ 300 \u{212A} İSTANBUL', 'Straße été 300 k istanbul', \
                       'straße ÉTÉ 300 K İstanbul', 'Strasse Ete 300 x Istanbul'])[i % 4 + 1] \
                || ' item ' || i, \
                i % 7, \
                CASE WHEN i % 300 < 4 AND i % 2 = 0 THEN $2 WHEN i % 300 < 4 THEN $3 \
                     WHEN i % 2 = 0 THEN $4 END, \
                0, 0 \
         FROM generate_series(1, 600) AS i",
        &[
            &h.mine.owner_id(),
            &serde_json::to_string(&[odd[0], "few", odd[1]]).unwrap(),
            &serde_json::to_string(&["few"]).unwrap(),
            &serde_json::to_string(&odd).unwrap(),
        ],
    )
    .await;
    sql(&h, "ANALYZE", &[]).await;
    let cases: [(&str, &[&str]); 6] = [
        ("straße été 300", &["few"]),
        ("STRASSE ETE 300", &["few"]),
        ("300 k istanbul", &["few"]),
        ("ÉTÉ 300 K", &["few"]),
        (" item ", &["few", odd[1]]),
        (" 300 ", &["few", odd[0], odd[1]]),
    ];
    for (term, tags) in cases {
        let reference = ids_selected(
            &h,
            "SELECT l.id FROM links l WHERE l.title ILIKE '%' || $1 || '%' AND NOT EXISTS \
             (SELECT 1 FROM unnest($2::text[]) AS t(tag) WHERE NOT EXISTS \
              (SELECT 1 FROM link_tags lt WHERE lt.link_id = l.id AND lt.tag = t.tag)) \
             ORDER BY l.id DESC",
            &[&term, &tags],
        )
        .await;
        assert!(!reference.is_empty(), "{term} {tags:?}");
        let q = LinkQuery {
            search: Some(term.to_owned()),
            by: SearchBy::Title,
            tags: tags.iter().map(|&t| t.to_owned()).collect(),
            tag_match: TagMatch::All,
            sort: Sort::Desc,
            per_page: 100,
            ..LinkQuery::default()
        };
        assert_eq!(ids_listed(&h, &q).await, reference, "{term} {tags:?}");
    }
}

/// A rare term beside tags many links carry is looked up through the indexes (the term's
/// trigrams, the tags' own), not through the tags' sets: every tag asked, or any of them, still
/// lists exactly the links that carry them, a tag with a quote and wildcards among them.
#[tokio::test]
async fn tags_beside_a_rare_term_list_exactly_the_links_that_carry_them() {
    let h = harness!();
    let odd = "40%_\"off\"";
    // 900 links, all tagged `red`, every second one `blue` too, every third one `odd`; the
    // term is in the titles of one link in a hundred and one.
    sql(
        &h,
        "INSERT INTO links (id, owner_id, alias, url, title, clicks, tags, created_at, updated_at) \
         SELECT i, $1, 'a' || i, 'https://x.example/' || i, \
                CASE WHEN i % 101 = 7 THEN 'Zephyrine ' || i ELSE 'plain item ' || i END, \
                i % 5, \
                CASE WHEN i % 3 = 0 THEN $2 WHEN i % 2 = 0 THEN $3 ELSE $4 END, 0, 0 \
         FROM generate_series(1, 900) AS i",
        &[
            &h.mine.owner_id(),
            &serde_json::to_string(&["red", odd]).unwrap(),
            &serde_json::to_string(&["red", "blue"]).unwrap(),
            &serde_json::to_string(&["red"]).unwrap(),
        ],
    )
    .await;
    sql(&h, "ANALYZE", &[]).await;
    let term: Vec<i64> = (1..=900).filter(|i| i % 101 == 7).collect();
    let blue = |i: &i64| i % 3 != 0 && i % 2 == 0;
    let cases: [(&[&str], TagMatch, Vec<i64>); 4] = [
        (
            &["red", "blue"],
            TagMatch::All,
            term.iter().copied().filter(blue).collect(),
        ),
        (
            &["red", odd],
            TagMatch::All,
            term.iter().copied().filter(|i| i % 3 == 0).collect(),
        ),
        (
            &["blue", odd],
            TagMatch::Any,
            term.iter()
                .copied()
                .filter(|i| blue(i) || i % 3 == 0)
                .collect(),
        ),
        (
            &["blue", "green"],
            TagMatch::Any,
            term.iter().copied().filter(blue).collect(),
        ),
    ];
    for (tags, how, mut want) in cases {
        want.reverse();
        assert!(!want.is_empty() && want.len() < term.len(), "{tags:?}");
        let q = LinkQuery {
            search: Some("zephyrine".to_owned()),
            by: SearchBy::Title,
            tags: tags.iter().map(|&t| t.to_owned()).collect(),
            tag_match: how,
            sort: Sort::Desc,
            per_page: 100,
            ..LinkQuery::default()
        };
        let page = h.mine.list_links(&q).await.unwrap();
        let ids: Vec<Id> = page.items.iter().map(|l| l.id).collect();
        assert_eq!(ids, want, "{tags:?} {how:?}");
        assert_eq!(page.total, want.len() as u64, "{tags:?} {how:?}");
    }
}

/// A term of two characters, which the trigram index cannot look up, is looked up by its pair
/// of characters in an alias, and finds every link `ILIKE` finds: in any case, letters beyond
/// ASCII included, at either end of the alias; and in titles, with emoji and punctuation, as
/// `ILIKE` finds them.
#[tokio::test]
async fn a_two_character_term_finds_what_ilike_finds() {
    let h = harness!();
    let aliases = ["K3", "ak3", "xK3y", "zzk", "3k", "Ék3", "kkk"];
    let titles = [
        "Sale ✨ Offer",
        "sale ✨offer",
        "SALE ✨ OFFER ✨",
        "✨ Brûlée",
        "✨ BRÛLÉE now",
        "no sparkle offer",
        "l'été — 50%",
        "L'ÉTÉ — 50 %",
    ];
    sql(
        &h,
        "INSERT INTO links (id, owner_id, alias, url, title, created_at, updated_at) \
         SELECT i, $1, ($2::text[])[i % 7 + 1] || '-' || i, 'https://x.example/' || i, \
                ($3::text[])[i % 8 + 1], 0, 0 \
         FROM generate_series(1, 140) AS i",
        &[
            &h.mine.owner_id(),
            &aliases.map(str::to_owned).to_vec(),
            &titles.map(str::to_owned).to_vec(),
        ],
    )
    .await;
    sql(&h, "ANALYZE", &[]).await;
    let cases = [
        (SearchBy::Alias, "k3"),
        (SearchBy::Alias, "K3"),
        (SearchBy::Alias, "3-"),
        (SearchBy::Alias, "ék"),
        (SearchBy::Alias, "kk"),
        (SearchBy::Title, " ✨ offer"),
        (SearchBy::Title, "✨ brû"),
        (SearchBy::Title, "✨o"),
        (SearchBy::Title, "'été — 5"),
        (SearchBy::Title, "er ✨"),
    ];
    for (by, term) in cases {
        let column = match by {
            SearchBy::Alias => "alias",
            _ => "title",
        };
        let select =
            format!("SELECT id FROM links WHERE {column} ILIKE '%' || $1 || '%' ORDER BY id DESC");
        let reference = ids_selected(&h, &select, &[&term]).await;
        assert!(!reference.is_empty() && reference.len() < 100, "{term}");
        let q = LinkQuery {
            search: Some(term.to_owned()),
            by,
            sort: Sort::Desc,
            per_page: 100,
            ..LinkQuery::default()
        };
        assert_eq!(ids_listed(&h, &q).await, reference, "{term}");
    }
}

/// A deep page of a search in id order, newest or oldest first, is the same slice of the list
/// whether its matches are walked in that order or found through the trigram index and
/// sorted, as they are when they are few among the links (one link in five here), and counted
/// to the same bound.
#[tokio::test]
async fn a_deep_page_of_a_search_in_id_order_is_its_slice_of_the_list() {
    let h = harness!();
    sql(
        &h,
        "INSERT INTO links (id, owner_id, alias, url, title, clicks, created_at, updated_at) \
         SELECT i, $1, 'a' || i, \
                CASE WHEN i % 5 = 0 THEN 'https://match.example/' \
                ELSE 'https://other.example/' END || i, NULL, i % 3, 0, 0 \
         FROM generate_series(1, 60000) AS i",
        &[&h.mine.owner_id()],
    )
    .await;
    sql(&h, "ANALYZE", &[]).await;
    let whole: Vec<(u64, Id)> = (1..=60_000)
        .filter(|id: &Id| id % 5 == 0)
        .map(|id| ((id % 3) as u64, id))
        .collect();
    for sort in [Sort::Desc, Sort::Asc] {
        let expected = suite::in_list_order(whole.clone(), sort);
        // (page, total, exact): counted in the list's order to the page's end and one more.
        for (page, total, exact) in [
            (51, 10_001, false),
            (101, 10_101, false),
            (120, 12_000, true),
        ] {
            let q = match_example(sort, page);
            page_of_a_hundred_is_its_slice(&h, q, (total, exact), &expected).await;
        }
    }
}

/// Page `page`, in `sort`'s order, of the links whose URL holds `match.example`.
fn match_example(sort: Sort, page: u32) -> LinkQuery {
    LinkQuery {
        search: Some("match.example".into()),
        by: SearchBy::Url,
        sort,
        page,
        ..LinkQuery::default()
    }
}

/// Page `q.page` of `q` at 100 a page: its total is `total` (exactly, or at least), and its
/// links are that page's slice of the whole list `expected`.
async fn page_of_a_hundred_is_its_slice(
    h: &PgHarness,
    q: LinkQuery,
    (total, exact): (u64, bool),
    expected: &[Id],
) -> Page<Link> {
    let what = format!("{:?} page {}", q.sort, q.page);
    let q = LinkQuery { per_page: 100, ..q };
    let p = h.mine.list_links(&q).await.unwrap();
    assert_eq!((p.total, p.total_exact), (total, exact), "{what}");
    let from = (q.page as usize - 1) * 100;
    let to = (from + 100).min(expected.len());
    let ids: Vec<Id> = p.items.iter().map(|l| l.id).collect();
    assert_eq!(ids, expected[from..to], "{what}");
    p
}

/// A search counts its matches up to a bound (10,000, or the page's end when deeper) and one
/// more, and says so: reading every match to count it cost most of a second at a million
/// links. The pages themselves stay exact slices of the whole list, and a status alone, which
/// its partial indexes count, stays exact.
#[tokio::test]
async fn a_large_search_is_counted_to_a_bound_and_its_pages_stay_exact() {
    let h = harness!();
    // 12,100 links, all but every hundredth a match: 11,979 matches.
    sql(
        &h,
        "INSERT INTO links (id, owner_id, alias, url, title, clicks, created_at, updated_at) \
         SELECT i, $1, 'a' || i, \
                CASE WHEN i % 100 = 0 THEN 'https://other.example/' \
                ELSE 'https://match.example/' END || i, NULL, (i * 7) % 5, 0, 0 \
         FROM generate_series(1, 12100) AS i",
        &[&h.mine.owner_id()],
    )
    .await;
    let whole: Vec<(u64, Id)> = (1..=12_100)
        .filter(|id: &Id| id % 100 != 0)
        .map(|id| (((id * 7) % 5) as u64, id))
        .collect();
    for sort in [Sort::Desc, Sort::Max] {
        let expected = suite::in_list_order(whole.clone(), sort);
        // (page, total, exact)
        for (page, total, exact) in [
            (1, 10_001, false),
            (101, 10_101, false),
            (110, 11_001, false),
            (120, 11_979, true),
        ] {
            let q = match_example(sort, page);
            let p = page_of_a_hundred_is_its_slice(&h, q, (total, exact), &expected).await;
            assert_eq!(
                p.shown_total().to_string(),
                match exact {
                    true => "11,979".to_owned(),
                    false => format!("{}+", linkdeck::domain::thousands(total - 1)),
                }
            );
        }
    }
    // A status alone is counted from its indexes, however many links it holds.
    let active = h
        .mine
        .list_links(&LinkQuery {
            status: linkdeck::domain::StatusFilter::Active,
            ..LinkQuery::default()
        })
        .await
        .unwrap();
    assert_eq!((active.total, active.total_exact), (12_100, true));
    // So is a space alone, from its counter; a search within it is counted to the bound.
    let space = h.mine.create_space(&space_input("Big", "4")).await.unwrap();
    sql(
        &h,
        "UPDATE links SET space_id = $1 WHERE id <= 11000",
        &[&space.id],
    )
    .await;
    let in_space = |search: Option<&str>| LinkQuery {
        search: search.map(str::to_owned),
        by: SearchBy::Url,
        space: linkdeck::domain::SpaceFilter::In(space.id),
        ..LinkQuery::default()
    };
    let all = h.mine.list_links(&in_space(None)).await.unwrap();
    assert_eq!((all.total, all.total_exact), (11_000, true));
    let searched = h
        .mine
        .list_links(&in_space(Some("match.example")))
        .await
        .unwrap();
    assert_eq!((searched.total, searched.total_exact), (10_001, false));
    // The disabled links alone too, from their partial index, however many there are: a deep
    // page of them in clicks order needs the far end their count gives.
    sql(
        &h,
        "UPDATE links SET disabled = true WHERE id <= 10500",
        &[],
    )
    .await;
    let of_status = |status| LinkQuery {
        status,
        ..LinkQuery::default()
    };
    let disabled = h.mine.list_links(&of_status(StatusFilter::Disabled)).await;
    let disabled = disabled.unwrap();
    assert_eq!((disabled.total, disabled.total_exact), (10_500, true));
    let active = h.mine.list_links(&of_status(StatusFilter::Active)).await;
    assert_eq!(active.unwrap().total, 1_600);
}

/// A term and a tag most links hold, in id order: walked in that order to the count's bound
/// (`search/walk.rs`), every page the slice of the whole list, counted exactly once the page
/// reaches past the bound.
#[tokio::test]
async fn a_large_search_with_a_tag_in_id_order_is_counted_to_a_bound_and_its_pages_stay_exact() {
    let h = harness!();
    // 12,100 links: every hundredth another host, every seventh without the tag.
    sql(
        &h,
        "INSERT INTO links (id, owner_id, alias, url, tags, created_at, updated_at) \
         SELECT i, $1, 'a' || i, \
                CASE WHEN i % 100 = 0 THEN 'https://other.example/' \
                ELSE 'https://match.example/' END || i, \
                CASE WHEN i % 7 = 0 THEN '[\"rare\"]' ELSE '[\"most\"]' END, 0, 0 \
         FROM generate_series(1, 12100) AS i",
        &[&h.mine.owner_id()],
    )
    .await;
    // Sized as autovacuum would have it sized by now: the walk goes by the planner's estimates.
    sql(&h, "ANALYZE", &[]).await;
    let whole: Vec<Id> = (1..=12_100)
        .filter(|id: &Id| id % 100 != 0 && id % 7 != 0)
        .collect();
    let matches = whole.len() as u64;
    assert!(
        matches > 10_001 + 100,
        "{matches}: enough for a bounded count"
    );
    let last = matches.div_ceil(100) as u32;
    for sort in [Sort::Desc, Sort::Asc] {
        let mut expected = whole.clone();
        if sort == Sort::Desc {
            expected.reverse();
        }
        // (page, total, exact)
        for (page, total, exact) in [
            (1, 10_001, false),
            (100, 10_001, false),
            (101, 10_101, false),
            (last, matches, true),
        ] {
            let q = LinkQuery {
                search: Some("match.example".into()),
                by: SearchBy::Url,
                tags: vec!["most".to_owned()],
                sort,
                page,
                ..LinkQuery::default()
            };
            page_of_a_hundred_is_its_slice(&h, q, (total, exact), &expected).await;
        }
    }
}

/// A list whose caller stops waiting (a request that timed out, or whose client went away)
/// leaves no statement running in the database for nobody, holding a connection the next
/// caller would wait behind: the statement is cancelled at once.
#[tokio::test]
async fn a_list_nobody_waits_for_any_more_is_cancelled_in_the_database() {
    let Some(cluster) = pg_cluster::cluster() else {
        return;
    };
    let url = cluster.fresh_database();
    // A lock is waited for a minute here, not the service's five seconds: only a cancel ends
    // the wait below soon.
    let waits_long = format!("{url}?options=-c%20lock_timeout%3D60000");
    let target = PgTarget::parse(&waits_long)
        .unwrap()
        .with_password(pg_cluster::PASSWORD);
    let h = Embedded::open(StoreLocation::Postgres(target)).await;
    h.mine
        .create_link(&LinkInput::with_url("https://spring.example/"))
        .await
        .unwrap();
    let search = LinkQuery {
        search: Some("spring".into()),
        ..all_links()
    };
    // Another session holds the links: the list's statement waits for them.
    let mut config: tokio_postgres::Config = url.parse().unwrap();
    config.password(pg_cluster::PASSWORD);
    let (holder, connection) = config.connect(tokio_postgres::NoTls).await.unwrap();
    tokio::spawn(connection);
    holder
        .batch_execute("BEGIN; LOCK TABLE links IN ACCESS EXCLUSIVE MODE")
        .await
        .unwrap();
    let waiting = "SELECT count(*) FROM pg_stat_activity \
                   WHERE datname = current_database() AND wait_event_type = 'Lock'";
    let gave_up = tokio::time::timeout(Duration::from_millis(500), h.mine.list_links(&search));
    assert!(gave_up.await.is_err(), "the list did not wait for the lock");
    let mut left: i64 = 1;
    for _ in 0..200 {
        left = holder.query_one(waiting, &[]).await.unwrap().get(0);
        if left == 0 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert_eq!(left, 0, "the list's statement still waits in the database");
    holder.batch_execute("ROLLBACK").await.unwrap();
    assert_eq!(h.mine.list_links(&search).await.unwrap().total, 1);
}

#[path = "pg_backend/traffic.rs"]
mod traffic;

#[tokio::test]
async fn out_of_range_stored_numbers_read_the_same_on_both_stores() {
    embedded::out_of_range_stored_numbers_read_the_same_on_both_stores(&harness!()).await;
}

/// A column of a type the store does not expect reads as the store's error, not as a panic of
/// the database task: keys and owners go through the same prepared, checked path as the rest.
#[tokio::test]
async fn a_key_or_owner_column_of_an_unexpected_type_is_an_error_not_a_panic() {
    let h = harness!();
    let owner = h.service.list_owners().await.unwrap()[0].id;
    h.service.create_key(owner, Some("ci")).await.unwrap();
    sql(
        &h,
        "ALTER TABLE api_keys ALTER COLUMN created_at TYPE text USING created_at::text",
        &[],
    )
    .await;
    sql(
        &h,
        "ALTER TABLE owners ALTER COLUMN created_at TYPE text USING created_at::text",
        &[],
    )
    .await;
    let keys = h.service.list_keys(None).await.unwrap_err().to_string();
    let owners = h.service.list_owners().await.unwrap_err().to_string();
    for message in [keys, owners] {
        assert!(message.contains("PostgreSQL"), "{message}");
        assert!(!message.contains("task failed"), "{message}");
    }
}
