//! The raw visits out, on any backend: an export answers the logged visits of a scope, oldest
//! first, with every value the click writer logged; a period, a starting visit and the scope
//! narrow it; another owner's scope is not found before anything is read; a deleted link's
//! visits leave it; and an export longer than one read of the log comes out whole and in order.

use futures::TryStreamExt;
use jiff::Timestamp;

use linkdeck::backend::local::serving::VisitRow;
use linkdeck::domain::{Error, Id, LinkInput, SpaceInput, StatsScope, Visit, VisitQuery};

use super::Harness;

fn row(link: Id, at: &str, country: Option<&str>) -> VisitRow {
    VisitRow {
        link_id: link,
        at: at.parse::<Timestamp>().unwrap().as_second(),
        country: country.map(str::to_owned),
        platform: Some("iOS".into()),
        browser: Some("Safari".into()),
        referrer: Some("t.co".into()),
        language: Some("de".into()),
        address: None,
        rule: None,
    }
}

/// A link of the owner under test at `https://example.com/{alias}`, in `space` and on
/// `domain` when given; its id.
async fn link_in(h: &dyn Harness, alias: &str, space: Option<Id>, domain: Option<Id>) -> Id {
    let input = LinkInput {
        space: space.map(|s| s.to_string()),
        domain: domain.map(|d| d.to_string()),
        ..super::aliased(&format!("https://example.com/{alias}"), alias)
    };
    h.backend().create_link(&input).await.unwrap().id
}

async fn link(h: &dyn Harness, alias: &str) -> Id {
    link_in(h, alias, None, None).await
}

/// A link of the second owner.
async fn their_link(h: &dyn Harness) -> Id {
    h.other_owner()
        .create_link(&LinkInput::with_url("https://example.com/theirs"))
        .await
        .unwrap()
        .id
}

async fn export(h: &dyn Harness, query: VisitQuery) -> Vec<Visit> {
    h.backend()
        .visits(&query)
        .await
        .unwrap()
        .try_collect()
        .await
        .unwrap()
}

fn aliases(visits: &[Visit]) -> Vec<&str> {
    visits.iter().map(|v| v.alias.as_str()).collect()
}

pub async fn visits_export_by_scope_period_and_where_the_last_one_stopped(h: &dyn Harness) {
    h.set_now("2026-03-10T16:00:00Z".parse().unwrap());
    let mine = h.backend();
    let space = mine
        .create_space(&SpaceInput {
            name: Some("Launch".into()),
            color: Some("2".into()),
        })
        .await
        .unwrap();
    let domain = h.add_domain("sho.rt", false).await;
    let a = link_in(h, "a", Some(space.id), Some(domain.id)).await;
    let b = link_in(h, "b", Some(space.id), None).await;
    let c = link(h, "c").await;
    let theirs = their_link(h).await;
    h.record_visits(vec![
        row(a, "2026-03-01T10:00:00Z", Some("DE")),
        row(b, "2026-03-02T10:00:00Z", None),
        row(theirs, "2026-03-02T11:00:00Z", Some("FR")),
        row(c, "2026-03-03T10:00:00Z", Some("US")),
        row(a, "2026-03-04T10:00:00Z", Some("DE")),
    ])
    .await;

    // The account: every visit of the owner's links, oldest first, with what was logged.
    let all = export(h, VisitQuery::all(StatsScope::Account)).await;
    assert_eq!(aliases(&all), ["a", "b", "c", "a"]);
    assert!(all.windows(2).all(|w| w[0].id < w[1].id), "{all:?}");
    let first = &all[0];
    assert_eq!(first.link_id, a);
    assert_eq!(
        first.at,
        "2026-03-01T10:00:00Z".parse::<Timestamp>().unwrap()
    );
    assert_eq!(first.country.as_deref(), Some("DE"));
    assert_eq!(first.platform.as_deref(), Some("iOS"));
    assert_eq!(first.browser.as_deref(), Some("Safari"));
    assert_eq!(first.referrer.as_deref(), Some("t.co"));
    assert_eq!(first.language.as_deref(), Some("de"));
    assert_eq!(all[1].country, None);

    // Each scope.
    let of = |scope| export(h, VisitQuery::all(scope));
    assert_eq!(aliases(&of(StatsScope::Link(a)).await), ["a", "a"]);
    assert_eq!(
        aliases(&of(StatsScope::Space(space.id)).await),
        ["a", "b", "a"]
    );
    assert_eq!(
        aliases(&of(StatsScope::Domain(domain.id)).await),
        ["a", "a"]
    );
    // A tag: the visits of the links that carry it now.
    for id in [b, c] {
        h.backend()
            .update_link(
                id,
                &LinkInput {
                    tags: Some("promo".into()),
                    ..LinkInput::default()
                },
            )
            .await
            .unwrap();
    }
    assert_eq!(
        aliases(&of(StatsScope::Tag("promo".into())).await),
        ["b", "c"]
    );
    let untagged = h
        .backend()
        .visits(&VisitQuery::all(StatsScope::Tag("nobody".into())))
        .await;
    assert!(
        matches!(untagged, Err(Error::NotFound(_))),
        "{:?}",
        untagged.err()
    );

    // A period: since included, until excluded.
    let period = VisitQuery {
        since: Some("2026-03-02T10:00:00Z".parse().unwrap()),
        until: Some("2026-03-04T10:00:00Z".parse().unwrap()),
        ..VisitQuery::all(StatsScope::Account)
    };
    assert_eq!(aliases(&export(h, period).await), ["b", "c"]);

    // Going on after the last visit an earlier export read.
    let after = VisitQuery {
        after: Some(all[1].id),
        ..VisitQuery::all(StatsScope::Account)
    };
    assert_eq!(aliases(&export(h, after).await), ["c", "a"]);

    // Another owner's link is not found, before anything is read; their export has only theirs.
    let refused = mine
        .visits(&VisitQuery::all(StatsScope::Link(theirs)))
        .await;
    assert!(
        matches!(refused, Err(Error::NotFound(_))),
        "{:?}",
        refused.err()
    );
    let other: Vec<Visit> = h
        .other_owner()
        .visits(&VisitQuery::all(StatsScope::Account))
        .await
        .unwrap()
        .try_collect()
        .await
        .unwrap();
    assert_eq!(other.len(), 1);
    assert_eq!(other[0].link_id, theirs);

    // A deleted link's visits leave the export.
    mine.delete_link(c).await.unwrap();
    assert_eq!(
        aliases(&export(h, VisitQuery::all(StatsScope::Account)).await),
        ["a", "b", "a"]
    );
}

pub async fn a_visits_export_longer_than_one_read_comes_out_whole_and_in_order(h: &dyn Harness) {
    h.set_now("2026-03-10T16:00:00Z".parse().unwrap());
    let mut ids = Vec::new();
    for alias in ["x", "y", "z"] {
        ids.push(link(h, alias).await);
    }
    // More than one read of the log answers (5,000 visits), spread over the three links.
    const N: usize = 12_001;
    let rows: Vec<VisitRow> = (0..N)
        .map(|i| {
            let at = Timestamp::from_second(1_772_000_000 + i as i64).unwrap();
            row(ids[i % 3], &at.to_string(), None)
        })
        .collect();
    h.record_visits(rows).await;
    let all = export(h, VisitQuery::all(StatsScope::Account)).await;
    assert_eq!(all.len(), N);
    assert!(all.windows(2).all(|w| w[0].id < w[1].id));
    assert!(all.windows(2).all(|w| w[0].at <= w[1].at));
    let of_y = export(h, VisitQuery::all(StatsScope::Link(ids[1]))).await;
    assert_eq!(of_y.len(), N / 3);
    assert!(of_y.iter().all(|v| v.alias == "y"));
}

/// The next visit of a live feed; fails the test instead of hanging it.
async fn next_live(feed: &mut linkdeck::backend::VisitStream) -> Visit {
    use futures::StreamExt;
    tokio::time::timeout(std::time::Duration::from_secs(20), feed.next())
        .await
        .expect("no visit arrived within 20 s")
        .expect("the feed ended")
        .expect("the feed failed")
}

pub async fn a_live_feed_sees_the_visits_logged_after_it_began(h: &dyn Harness) {
    h.set_now("2026-03-10T16:00:00Z".parse().unwrap());
    let mine = h.backend();
    let a = link(h, "a").await;
    let b = link(h, "b").await;
    h.record_visits(vec![row(a, "2026-03-10T15:00:00Z", Some("FR"))])
        .await;

    let mut everything = mine.live_visits(StatsScope::Account, None).await.unwrap();
    let mut only_b = mine.live_visits(StatsScope::Link(b), None).await.unwrap();
    let tagged = LinkInput {
        tags: Some("promo".into()),
        ..LinkInput::default()
    };
    mine.update_link(b, &tagged).await.unwrap();
    let mut promo = mine
        .live_visits(StatsScope::Tag("promo".into()), None)
        .await
        .unwrap();
    h.record_visits(vec![
        row(a, "2026-03-10T16:00:01Z", Some("DE")),
        row(b, "2026-03-10T16:00:02Z", Some("US")),
    ])
    .await;
    // What came before the feed began is not in it.
    let first = next_live(&mut everything).await;
    assert_eq!(
        (first.alias.as_str(), first.country.as_deref()),
        ("a", Some("DE"))
    );
    let second = next_live(&mut everything).await;
    assert_eq!(second.alias, "b");
    let of_b = next_live(&mut only_b).await;
    assert_eq!((of_b.id, of_b.country.as_deref()), (second.id, Some("US")));
    assert_eq!(
        next_live(&mut promo).await.id,
        second.id,
        "b's, the tagged one"
    );

    // A feed that was cut off goes on after the last visit it had.
    let mut again = mine
        .live_visits(StatsScope::Account, Some(first.id))
        .await
        .unwrap();
    assert_eq!(next_live(&mut again).await.id, second.id);

    // Another owner's link is not found at once.
    let theirs = their_link(h).await;
    let refused = mine.live_visits(StatsScope::Link(theirs), None).await;
    assert!(
        matches!(refused, Err(Error::NotFound(_))),
        "{:?}",
        refused.err()
    );
}
