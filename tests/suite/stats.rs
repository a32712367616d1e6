//! The stats contract, on any backend: visits at fixed times across a daylight-saving change in
//! the harness's zone (America/New_York went to summer time on 2026-03-08 at 02:00), counted
//! exactly per bucket and per value for a link, a space, a domain and the account.

use jiff::Timestamp;

use linkdeck::backend::local::serving::VisitRow;
use linkdeck::domain::{
    Dimension, Error, Id, Interval, LinkInput, PeriodSpec, Preset, SpaceInput, Stats, StatsPart,
    StatsQuery, StatsScope,
};

use super::Harness;

fn at(s: &str) -> Timestamp {
    s.parse().unwrap()
}

/// A visit with every value given: country, platform, browser, referrer, language.
fn visit(link: Id, when: &str, values: [Option<&str>; 5]) -> VisitRow {
    let [country, platform, browser, referrer, language] = values.map(|v| v.map(str::to_owned));
    VisitRow {
        link_id: link,
        at: at(when).as_second(),
        country,
        platform,
        browser,
        referrer,
        language,
        address: None,
        rule: None,
    }
}

/// Three links — `a` (space Launch, domain sho.rt), `b` (Launch), `c` (neither) — and their
/// visits; the clock at 2026-03-10 12:00 in New York.
struct World {
    a: Id,
    b: Id,
    c: Id,
    space: Id,
    domain: Id,
}

async fn world(h: &dyn Harness) -> World {
    h.set_now(at("2026-03-10T16:00:00Z"));
    let space = h
        .backend()
        .create_space(&SpaceInput {
            name: Some("Launch".into()),
            color: Some("2".into()),
        })
        .await
        .unwrap();
    let domain = h.add_domain("sho.rt", false).await;
    let a = h
        .backend()
        .create_link(&LinkInput {
            alias: Some("a".into()),
            space: Some(space.id.to_string()),
            domain: Some(domain.id.to_string()),
            ..LinkInput::with_url("https://example.com/a")
        })
        .await
        .unwrap()
        .id;
    let b = h
        .backend()
        .create_link(&LinkInput {
            alias: Some("b".into()),
            space: Some(space.id.to_string()),
            ..LinkInput::with_url("https://example.com/b")
        })
        .await
        .unwrap()
        .id;
    let c = h
        .backend()
        .create_link(&LinkInput {
            alias: Some("c".into()),
            ..LinkInput::with_url("https://example.com/c")
        })
        .await
        .unwrap()
        .id;
    let de = [
        Some("DE"),
        Some("iOS"),
        Some("Safari"),
        Some("t.co"),
        Some("de"),
    ];
    h.record_visits(vec![
        // The 7 days before the period: counted as "previous".
        visit(a, "2026-02-28T12:00:00Z", de),
        // Mar 6 23:30 EST.
        visit(a, "2026-03-07T04:30:00Z", de),
        // Mar 7 00:00 EST.
        visit(
            a,
            "2026-03-07T05:00:00Z",
            [
                Some("US"),
                Some("Windows"),
                Some("Chrome"),
                None,
                Some("en"),
            ],
        ),
        // Mar 8 01:59 EST, then 03:00 EDT: one hour apart on the clock, one minute in time.
        visit(a, "2026-03-08T06:59:00Z", de),
        visit(
            a,
            "2026-03-08T07:00:00Z",
            [
                Some("DE"),
                Some("Android"),
                Some("Chrome"),
                Some("news.ycombinator.com"),
                Some("de"),
            ],
        ),
        // Mar 8 23:30 EDT: still the 8th here, already the 9th in UTC.
        visit(
            a,
            "2026-03-09T03:30:00Z",
            [Some("FR"), Some("iOS"), Some("Safari"), Some("t.co"), None],
        ),
        // Mar 9 00:00 EDT.
        visit(a, "2026-03-09T04:00:00Z", [None, None, None, None, None]),
        visit(
            b,
            "2026-03-09T15:00:00Z",
            [
                Some("US"),
                Some("OS X"),
                Some("Safari"),
                Some("t.co"),
                Some("en"),
            ],
        ),
        visit(
            c,
            "2026-03-10T13:00:00Z",
            [Some("JP"), Some("iOS"), Some("Safari"), None, Some("ja")],
        ),
    ])
    .await;
    World {
        a,
        b,
        c,
        space: space.id,
        domain: domain.id,
    }
}

async fn stats(h: &dyn Harness, scope: StatsScope, period: PeriodSpec) -> Stats {
    h.backend()
        .stats(&StatsQuery::new(scope.clone(), period))
        .await
        .unwrap_or_else(|e| panic!("stats of {scope:?}: {e}"))
}

fn week() -> PeriodSpec {
    PeriodSpec::preset(Preset::Days7)
}

fn counts(s: &Stats, d: Dimension) -> Vec<(Option<String>, u64)> {
    s.breakdown(d)
        .unwrap()
        .top
        .iter()
        .map(|v| (v.value.clone(), v.clicks))
        .collect()
}

fn timeline(s: &Stats) -> Vec<u64> {
    s.timeline.iter().map(|b| b.clicks).collect()
}

pub async fn stats_count_visits_per_local_day_across_a_daylight_saving_change(h: &dyn Harness) {
    let w = world(h).await;
    let s = stats(h, StatsScope::Link(w.a), week()).await;
    assert_eq!(s.interval, Interval::Day);
    assert_eq!(s.from, at("2026-03-04T05:00:00Z"), "midnight EST");
    assert_eq!(s.to, at("2026-03-11T04:00:00Z"), "midnight EDT");
    // Mar 4 … Mar 10, New York days.
    assert_eq!(timeline(&s), [0, 0, 1, 1, 3, 1, 0]);
    assert_eq!(s.timeline[5].start, at("2026-03-09T04:00:00Z"));
    assert_eq!((s.total, s.previous), (6, Some(1)));
    assert_eq!(
        counts(&s, Dimension::Country),
        [
            (Some("DE".into()), 3),
            (None, 1),
            (Some("FR".into()), 1),
            (Some("US".into()), 1)
        ]
    );
    assert_eq!(
        counts(&s, Dimension::Referrer),
        [
            (Some("t.co".into()), 3),
            (None, 2),
            (Some("news.ycombinator.com".into()), 1)
        ]
    );
    assert_eq!(
        counts(&s, Dimension::Platform),
        [
            (Some("iOS".into()), 3),
            (None, 1),
            (Some("Android".into()), 1),
            (Some("Windows".into()), 1)
        ]
    );
    assert_eq!(counts(&s, Dimension::Language)[0], (Some("de".into()), 3));
    assert_eq!(
        counts(&s, Dimension::Browser)[0],
        (Some("Safari".into()), 3)
    );
    assert_eq!(s.top_links, None, "a link has no top links");

    // The day of the change has 23 hours, each counted where it fell.
    let day = PeriodSpec::Dates {
        from: "2026-03-08".parse().unwrap(),
        to: "2026-03-08".parse().unwrap(),
    };
    let s = stats(h, StatsScope::Link(w.a), day).await;
    assert_eq!(s.interval, Interval::Hour);
    assert_eq!(s.timeline.len(), 23);
    let hours: Vec<(usize, u64)> = timeline(&s)
        .into_iter()
        .enumerate()
        .filter(|(_, n)| *n > 0)
        .collect();
    // 01:00 EST, 03:00 EDT (the second bucket after 01:00) and 23:00 EDT.
    assert_eq!(hours, [(1, 1), (2, 1), (22, 1)]);
    assert_eq!(s.previous, Some(1), "Mar 7, the day before");
}

pub async fn stats_of_a_space_a_domain_and_the_account_sum_their_links(h: &dyn Harness) {
    let w = world(h).await;
    let space = stats(h, StatsScope::Space(w.space), week()).await;
    assert_eq!(space.total, 7);
    assert_eq!(timeline(&space), [0, 0, 1, 1, 3, 2, 0]);
    let top: Vec<(Id, u64)> = space
        .top_links
        .unwrap()
        .iter()
        .map(|l| (l.id, l.clicks))
        .collect();
    assert_eq!(top, [(w.a, 6), (w.b, 1)]);
    let domain = stats(h, StatsScope::Domain(w.domain), week()).await;
    assert_eq!((domain.total, domain.previous), (6, Some(1)));
    let account = stats(h, StatsScope::Account, week()).await;
    assert_eq!(account.total, 8);
    assert_eq!(
        counts(&account, Dimension::Country)[1],
        (Some("US".into()), 2)
    );
    let top = account.top_links.unwrap();
    assert_eq!(top[0].alias, "a");
    assert_eq!(top.iter().map(|l| l.clicks).sum::<u64>(), 8);
    assert!(top.iter().any(|l| l.id == w.c && l.clicks == 1));

    // One part only, and a limit.
    let mut q = StatsQuery::new(StatsScope::Account, week());
    q.only = Some(StatsPart::Dimension(Dimension::Referrer));
    q.top = 1;
    let s = h.backend().stats(&q).await.unwrap();
    assert!(s.timeline.is_empty() && s.top_links.is_none());
    assert_eq!(s.breakdowns.len(), 1);
    let referrers = s.breakdown(Dimension::Referrer).unwrap();
    assert_eq!(referrers.top.len(), 1);
    assert_eq!((referrers.top[0].clicks, referrers.other), (4, 4));

    // 24 hours, and all time.
    let day = stats(h, StatsScope::Account, PeriodSpec::preset(Preset::Hours24)).await;
    assert_eq!(
        (day.interval, day.timeline.len(), day.total),
        (Interval::Hour, 24, 1)
    );
    assert_eq!(day.previous, Some(3), "the 24 hours before");
    let all = stats(h, StatsScope::Account, PeriodSpec::preset(Preset::All)).await;
    assert_eq!((all.total, all.previous), (9, None));
    assert_eq!(all.timeline.iter().map(|b| b.clicks).sum::<u64>(), 9);
}

pub async fn stats_follow_links_that_move_or_go(h: &dyn Harness) {
    let w = world(h).await;
    // b leaves the space: its click leaves the space's figures.
    h.backend()
        .update_link(
            w.b,
            &LinkInput {
                space: Some(String::new()),
                ..LinkInput::default()
            },
        )
        .await
        .unwrap();
    assert_eq!(stats(h, StatsScope::Space(w.space), week()).await.total, 6);
    assert_eq!(stats(h, StatsScope::Account, week()).await.total, 8);
    // a is deleted: its traffic goes with it, everywhere.
    h.backend().delete_link(w.a).await.unwrap();
    assert_eq!(stats(h, StatsScope::Space(w.space), week()).await.total, 0);
    assert_eq!(
        stats(h, StatsScope::Domain(w.domain), week()).await.total,
        0
    );
    let account = stats(h, StatsScope::Account, week()).await;
    assert_eq!((account.total, account.previous), (2, Some(0)));
    assert_eq!(counts(&account, Dimension::Country).len(), 2);
    assert!(matches!(
        h.backend()
            .stats(&StatsQuery::new(StatsScope::Link(w.a), week()))
            .await,
        Err(Error::NotFound(_))
    ));
}

pub async fn stats_follow_links_moved_or_deleted_in_bulk_and_back_with_undo(h: &dyn Harness) {
    use linkdeck::backend::{BulkAction, Progress, Selection};
    let w = world(h).await;
    let space_week = |h| async move { stats(h, StatsScope::Space(w.space), week()).await.total };
    assert_eq!(space_week(h).await, 7);
    // a and b leave the space together: their clicks leave the space's figures.
    let out = BulkAction::Update(LinkInput {
        space: Some(String::new()),
        ..LinkInput::default()
    });
    let moved = h
        .backend()
        .bulk(&Selection::of_ids([w.a, w.b]), &out, &Progress::new())
        .await
        .unwrap();
    assert_eq!(moved.changed, 2);
    assert_eq!(space_week(h).await, 0);
    assert_eq!(stats(h, StatsScope::Account, week()).await.total, 8);
    // Undo puts them back, and their clicks with them.
    h.backend()
        .revert(&moved.undo, &Progress::new())
        .await
        .unwrap();
    assert_eq!(space_week(h).await, 7);
    // Deleted in bulk, c's clicks leave the account.
    let deleted = h
        .backend()
        .bulk(
            &Selection::of_ids([w.c]),
            &BulkAction::Delete,
            &Progress::new(),
        )
        .await
        .unwrap();
    assert_eq!(deleted.changed, 1);
    assert_eq!(stats(h, StatsScope::Account, week()).await.total, 7);
}

/// The clicks counted in all are the sums of the links' own counters — imported clicks with no
/// date in the history included — per link, space, domain and account, and another owner's
/// are not found. A remote server cannot tell, and says nothing rather than a wrong figure.
pub async fn clicks_counted_in_all_sum_each_scopes_links_counters(h: &dyn Harness) {
    let w = world(h).await;
    let b = h.backend();
    if b.info().kind == "remote" {
        assert_eq!(b.counted_clicks(StatsScope::Account).await.unwrap(), None);
        return;
    }
    // a's counter as an import leaves it: far more clicks than its history has dates for.
    h.set_clicks(w.a, 2_300_000).await;
    let clicks = |id| async move { b.show_link(id).await.unwrap().clicks };
    let (a, lb, c) = (clicks(w.a).await, clicks(w.b).await, clicks(w.c).await);
    assert_eq!(a, 2_300_000);
    for (scope, expected) in [
        (StatsScope::Account, a + lb + c),
        (StatsScope::Space(w.space), a + lb),
        (StatsScope::Domain(w.domain), a),
        (StatsScope::Link(w.b), lb),
    ] {
        assert_eq!(
            b.counted_clicks(scope.clone()).await.unwrap(),
            Some(expected),
            "{scope:?}"
        );
    }
    let theirs = h.other_owner();
    for scope in [StatsScope::Space(w.space), StatsScope::Link(w.a)] {
        let answer = theirs.counted_clicks(scope.clone()).await;
        assert!(
            matches!(answer, Err(Error::NotFound(_))),
            "{scope:?}: {answer:?}"
        );
    }
    assert_eq!(
        theirs.counted_clicks(StatsScope::Account).await.unwrap(),
        Some(0)
    );
}

pub async fn stats_of_another_owner_are_not_found(h: &dyn Harness) {
    let w = world(h).await;
    let theirs = h.other_owner();
    for scope in [
        StatsScope::Link(w.a),
        StatsScope::Space(w.space),
        StatsScope::Domain(w.domain),
    ] {
        let answer = theirs.stats(&StatsQuery::new(scope.clone(), week())).await;
        assert!(
            matches!(answer, Err(Error::NotFound(_))),
            "{scope:?}: {answer:?}"
        );
    }
    let account = theirs
        .stats(&StatsQuery::new(StatsScope::Account, week()))
        .await
        .unwrap();
    assert_eq!(account.total, 0, "none of mine");
    assert_eq!(account.top_links, Some(vec![]));
    let _ = (w.b, w.c);
}

pub async fn stats_questions_are_checked(h: &dyn Harness) {
    let w = world(h).await;
    let mut q = StatsQuery::new(StatsScope::Link(w.a), week());
    q.top = 0;
    assert!(
        matches!(h.backend().stats(&q).await, Err(Error::Validation(f)) if f.contains("limit"))
    );
    let backwards = PeriodSpec::Dates {
        from: "2026-03-08".parse().unwrap(),
        to: "2026-03-01".parse().unwrap(),
    };
    let answer = h
        .backend()
        .stats(&StatsQuery::new(StatsScope::Link(w.a), backwards))
        .await;
    assert!(
        matches!(&answer, Err(Error::Validation(f)) if f.contains("to")),
        "{answer:?}"
    );
    assert!(matches!(
        h.backend()
            .stats(&StatsQuery::new(StatsScope::Link(999_999), week()))
            .await,
        Err(Error::NotFound(_))
    ));
    // A period stepped back: the week before holds the one early visit.
    let before = stats(h, StatsScope::Link(w.a), week().stepped(1)).await;
    assert_eq!((before.total, before.previous), (1, Some(0)));
}

/// Puts `tags` (comma-separated; "" clears) on link `id`.
async fn tag(h: &dyn Harness, id: Id, tags: &str) {
    h.backend()
        .update_link(
            id,
            &LinkInput {
                tags: Some(tags.into()),
                ..LinkInput::default()
            },
        )
        .await
        .unwrap();
}

fn promo() -> StatsScope {
    StatsScope::Tag("promo".into())
}

pub async fn stats_of_a_tag_sum_the_links_that_carry_it_now(h: &dyn Harness) {
    let w = world(h).await;
    tag(h, w.b, "promo, q4").await;
    tag(h, w.c, "promo").await;

    let week_ = stats(h, promo(), week()).await;
    assert_eq!((week_.total, week_.previous), (2, Some(0)));
    assert_eq!(timeline(&week_), [0, 0, 0, 0, 0, 1, 1]);
    let top: Vec<(Id, u64)> = week_
        .top_links
        .as_ref()
        .unwrap()
        .iter()
        .map(|l| (l.id, l.clicks))
        .collect();
    assert_eq!(top, [(w.b, 1), (w.c, 1)]);
    assert_eq!(
        counts(&week_, Dimension::Country),
        [(Some("JP".into()), 1), (Some("US".into()), 1)]
    );
    // All time starts at the tag's first click (b's, on Mar 9), not the account's (Feb 28).
    let all = stats(h, promo(), PeriodSpec::preset(Preset::All)).await;
    let b_all = stats(h, StatsScope::Link(w.b), PeriodSpec::preset(Preset::All)).await;
    assert_eq!((all.total, all.from), (2, b_all.from));

    // A tag groups links as they are now: a's clicks, from before it took the tag, count, and
    // c's leave with its tag.
    tag(h, w.a, "promo").await;
    tag(h, w.c, "").await;
    let week_ = stats(h, promo(), week()).await;
    assert_eq!((week_.total, week_.previous), (7, Some(1)));
    assert_eq!(
        week_.top_links.unwrap().first().map(|l| (l.id, l.clicks)),
        Some((w.a, 6))
    );
    // Clicks counted in all are the embedded service's (a server's API has no such path).
    let counted = (h.backend().info().kind != "remote").then_some(7 + 1);
    assert_eq!(
        h.backend().counted_clicks(promo()).await.unwrap(),
        counted,
        "a's and b's counters"
    );

    // One part only.
    let mut q = StatsQuery::new(StatsScope::Tag("q4".into()), week());
    q.only = Some(StatsPart::Clicks);
    let s = h.backend().stats(&q).await.unwrap();
    assert_eq!((s.total, s.breakdowns.len(), s.top_links), (1, 0, None));

    // A tag none of the owner's links carries is not found, theirs or anyone's.
    for (backend, scope) in [
        (h.backend(), StatsScope::Tag("nobody".into())),
        (h.other_owner(), promo()),
    ] {
        let answer = backend.stats(&StatsQuery::new(scope.clone(), week())).await;
        assert!(
            matches!(answer, Err(Error::NotFound(_))),
            "{scope:?}: {answer:?}"
        );
        if counted.is_some() {
            let answer = backend.counted_clicks(scope.clone()).await;
            assert!(
                matches!(answer, Err(Error::NotFound(_))),
                "{scope:?}: {answer:?}"
            );
        }
    }
}

pub async fn a_tag_on_many_links_is_summed_as_one_on_few(h: &dyn Harness) {
    // Past a few hundred links a tag's rows are read in one pass over the owner's instead of
    // link by link: both give the same figures.
    let w = world(h).await;
    let mut wide = Vec::new();
    for i in 0..300 {
        let link = h
            .backend()
            .create_link(&LinkInput {
                alias: Some(format!("wide{i}")),
                tags: Some("wide".into()),
                ..LinkInput::with_url("https://example.com/wide")
            })
            .await
            .unwrap();
        wide.push(link.id);
    }
    h.record_visits(vec![
        visit(
            wide[0],
            "2026-03-09T15:00:00Z",
            [Some("US"), None, None, None, None],
        ),
        visit(
            wide[0],
            "2026-03-10T13:00:00Z",
            [Some("US"), None, None, None, None],
        ),
        visit(
            wide[299],
            "2026-03-08T15:00:00Z",
            [Some("DE"), None, None, None, None],
        ),
    ])
    .await;
    tag(h, w.c, "wide").await;
    let scope = StatsScope::Tag("wide".into());
    let many = stats(h, scope.clone(), week()).await;
    for id in &wide[1..299] {
        tag(h, *id, "").await;
    }
    let few = stats(h, scope, week()).await;
    assert_eq!(many, few);
    assert_eq!(many.total, 4);
    let top: Vec<(Id, u64)> = many
        .top_links
        .unwrap()
        .iter()
        .map(|l| (l.id, l.clicks))
        .collect();
    assert_eq!(top, [(wide[0], 2), (w.c, 1), (wide[299], 1)]);
}
