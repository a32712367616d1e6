//! The PostgreSQL store's traffic against SQLite's: the same visits give the same statistics and
//! the same exported history; two click writers on one database lose no update and never
//! deadlock; pruning the raw log leaves statistics alone.

use std::collections::HashMap;
use std::sync::Arc;

use jiff::Timestamp;
use jiff::tz::TimeZone;
use linkdeck::backend::Backend;
use linkdeck::backend::local::serving::VisitRow;
use linkdeck::backend::local::{LocalOptions, LocalService};
use linkdeck::domain::{
    Dimension, FixedClock, Id, LinkInput, PeriodSpec, Preset, SpaceInput, StatsPart, StatsQuery,
    StatsScope, TrafficHour,
};

use crate::database;

/// 2030-01-10T12:00:00Z, "now" for both stores.
fn now() -> Timestamp {
    "2030-01-10T12:00:00Z".parse().unwrap()
}

fn options() -> LocalOptions {
    LocalOptions {
        clock: Arc::new(FixedClock::new(now())),
        ..LocalOptions::default()
    }
}

/// Visit `i` of a deterministic mix: three links, ten days back from now, a few countries and
/// browsers, many referrers (more than a day keeps for the busiest link, so "other" shows).
fn visit(links: &[Id], i: i64) -> VisitRow {
    let pick = |options: &[&str], n: i64| options[(n as usize) % options.len()].to_owned();
    VisitRow {
        link_id: links[(i * 7 % 11 % 3) as usize],
        at: now().as_second() - (i * 7_919) % (10 * 86_400),
        country: (i % 5 != 0).then(|| pick(&["NL", "US", "DE", "JP"], i / 3)),
        platform: Some(pick(&["Windows", "iOS", "Linux"], i / 2)),
        browser: Some(pick(&["Chrome", "Firefox", "Safari"], i)),
        referrer: (i % 4 != 0).then(|| format!("r{}.example", i % 300)),
        language: (i % 3 != 0).then(|| pick(&["en", "nl", "ja"], i)),
        address: None,
        rule: None,
    }
}

#[tokio::test]
async fn statistics_on_postgresql_answer_as_on_sqlite() {
    let Some(db) = database().await else { return };
    let dir = tempfile::tempdir().unwrap();
    let sqlite = LocalService::open(&dir.path().join("same.db"), options()).unwrap();
    let lite = sqlite.default_backend().await.unwrap();
    let space = lite
        .create_space(&SpaceInput {
            name: Some("Campaign".into()),
            color: Some("2".into()),
        })
        .await
        .unwrap();
    let mut links = Vec::new();
    for (alias, in_space) in [("a", true), ("b", true), ("c", false)] {
        let link = lite
            .create_link(&LinkInput {
                url: Some(format!("https://example.com/{alias}")),
                alias: Some(alias.into()),
                space: in_space.then(|| space.id.to_string()),
                ..LinkInput::default()
            })
            .await
            .unwrap();
        links.push(link.id);
    }

    // The same owner, space and links on PostgreSQL, with the same ids.
    let postgres = db.service(options()).await;
    let pg = postgres.default_backend().await.unwrap();
    assert_eq!(pg.owner_id(), lite.owner_id());
    db.sql
        .execute(
            "INSERT INTO spaces (id, owner_id, name, color, created_at, updated_at)
             VALUES ($1, $2, 'Campaign', 2, 0, 0)",
            &[&space.id, &pg.owner_id()],
        )
        .await
        .unwrap();
    for (i, (&id, alias)) in links.iter().zip(["a", "b", "c"]).enumerate() {
        let space_id = (i < 2).then_some(space.id);
        db.sql
            .execute(
                "INSERT INTO links (id, owner_id, space_id, alias, url, created_at, updated_at)
                 VALUES ($1, $2, $3, $4, $5, 0, 0)",
                &[
                    &id,
                    &pg.owner_id(),
                    &space_id,
                    &alias,
                    &format!("https://example.com/{alias}"),
                ],
            )
            .await
            .unwrap();
    }

    // The same visits, in the same batches.
    for batch in 0..4 {
        let visits: Vec<VisitRow> = (batch * 400..(batch + 1) * 400)
            .map(|i| visit(&links, i))
            .collect();
        let lite_flushed = sqlite.record_visits(visits.clone()).await.unwrap();
        let pg_flushed = postgres.record_visits(visits).await.unwrap();
        assert_eq!(pg_flushed, lite_flushed, "clicks after batch {batch}");
    }

    let mut questions = Vec::new();
    for scope in [
        StatsScope::Link(links[0]),
        StatsScope::Link(links[2]),
        StatsScope::Space(space.id),
        StatsScope::Account,
    ] {
        for preset in [Preset::Hours24, Preset::Days7, Preset::Days30, Preset::All] {
            questions.push(StatsQuery::new(scope.clone(), PeriodSpec::preset(preset)));
        }
        let mut referrers = StatsQuery::new(scope, PeriodSpec::preset(Preset::Days7));
        referrers.only = Some(StatsPart::Dimension(Dimension::Referrer));
        referrers.top = 3;
        questions.push(referrers);
    }
    for query in questions {
        let want = sqlite
            .stats_in(lite.owner_id(), &query, TimeZone::UTC)
            .await
            .unwrap();
        let got = postgres
            .stats_in(pg.owner_id(), &query, TimeZone::UTC)
            .await
            .unwrap();
        assert!(want.total > 0, "{query:?} has traffic");
        assert_eq!(got, want, "{query:?}");
    }
    // Another owner's question finds nothing of it, as on SQLite.
    let stranger = postgres.add_owner("stranger").await.unwrap();
    let theirs = StatsQuery::new(StatsScope::Link(links[0]), PeriodSpec::preset(Preset::All));
    assert!(
        postgres
            .stats_in(stranger.id, &theirs, TimeZone::UTC)
            .await
            .is_err()
    );

    // An hour lists its values in the order of their stored numbers, which each database
    // gave in the order it first met them: the same values, in an order of no meaning.
    let by_name = |mut history: HashMap<Id, Vec<TrafficHour>>| {
        for hour in history.values_mut().flatten() {
            hour.values.iter_mut().for_each(|values| values.sort());
        }
        history
    };
    let want = by_name(lite.traffic_history(links.clone()).await.unwrap());
    let got = by_name(pg.traffic_history(links.clone()).await.unwrap());
    assert!(!want.is_empty());
    assert_eq!(got, want, "the exported history");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_click_writers_on_one_database_lose_no_update_and_never_deadlock() {
    let Some(db) = database().await else { return };
    // Two services with their own connection pools, as two servers have.
    let first = db.service(options()).await;
    let second = db.service(options()).await;
    let owner = first.default_backend().await.unwrap().owner_id();
    let mut links = Vec::new();
    for alias in ["w1", "w2", "w3", "w4", "w5"] {
        links.push(db.link(owner, alias, "https://example.com/w", 0, &[]).await);
    }
    let links = Arc::new(links);
    let (tasks, batches, per_batch): (i64, i64, i64) = (8, 15, 40);
    let writers: Vec<_> = (0..tasks)
        .map(|t| {
            let service = if t % 2 == 0 { &first } else { &second }.clone();
            let links = links.clone();
            tokio::spawn(async move {
                for b in 0..batches {
                    let visits: Vec<VisitRow> = (0..per_batch)
                        .map(|v| {
                            let i = t * 7_000 + b * 100 + v;
                            VisitRow {
                                // Mostly one link per batch, another than the other
                                // writers': they meet on the owner's rows, and sometimes on
                                // a link's.
                                link_id: links[((t + b + v / 30) % links.len() as i64) as usize],
                                at: now().as_second() - (i % 3) * 86_400,
                                country: Some(["NL", "US"][(i % 2) as usize].into()),
                                platform: None,
                                browser: None,
                                // New values race to be stored by both writers at once.
                                referrer: Some(format!("new{}.example", (b * per_batch + v) % 97)),
                                language: None,
                                address: None,
                                rule: None,
                            }
                        })
                        .collect();
                    service.record_visits(visits).await.unwrap();
                }
            })
        })
        .collect();
    for writer in writers {
        writer.await.unwrap();
    }
    let total = tasks * batches * per_batch;
    let sum = |sql: &'static str| {
        let sql_client = &db.sql;
        async move {
            sql_client
                .query_one(sql, &[])
                .await
                .unwrap()
                .get::<_, Option<i64>>(0)
                .unwrap_or(0)
        }
    };
    assert_eq!(sum("SELECT sum(clicks)::bigint FROM links").await, total);
    assert_eq!(sum("SELECT count(*) FROM visit_log").await, total);
    assert_eq!(
        sum("SELECT sum(clicks)::bigint FROM link_traffic").await,
        total
    );
    assert_eq!(
        sum("SELECT sum(clicks)::bigint FROM scope_traffic WHERE scope = 1").await,
        total
    );
    assert_eq!(
        sum("SELECT count(*) FROM traffic_values WHERE dimension = 3").await,
        97,
        "each new value stored once"
    );
    let account = StatsQuery::new(StatsScope::Account, PeriodSpec::preset(Preset::Days7));
    let stats = first
        .stats_in(owner, &account, TimeZone::UTC)
        .await
        .unwrap();
    assert_eq!(stats.total, total as u64);
    let countries = stats
        .breakdowns
        .iter()
        .find(|b| b.dimension == Dimension::Country)
        .unwrap();
    let counted: u64 = countries.top.iter().map(|v| v.clicks).sum::<u64>() + countries.other;
    assert_eq!(
        counted, total as u64,
        "every visit's country is in the rollups"
    );
}

#[tokio::test]
async fn pruning_the_log_on_postgresql_leaves_statistics_alone() {
    let Some(db) = database().await else { return };
    let service = db.service(options()).await;
    let owner = service.default_backend().await.unwrap().owner_id();
    let link = db
        .link(owner, "old", "https://example.com/old", 0, &[])
        .await;
    let at = |days_back: i64| VisitRow {
        link_id: link,
        at: now().as_second() - days_back * 86_400,
        country: None,
        platform: None,
        browser: None,
        referrer: None,
        language: None,
        address: None,
        rule: None,
    };
    service
        .record_visits(vec![at(40), at(40), at(35), at(2), at(1)])
        .await
        .unwrap();
    let query = StatsQuery::new(StatsScope::Link(link), PeriodSpec::preset(Preset::All));
    let before = service
        .stats_in(owner, &query, TimeZone::UTC)
        .await
        .unwrap();

    let cutoff = now() - jiff::SignedDuration::from_hours(24 * 30);
    assert_eq!(service.prune_visit_log(cutoff).await.unwrap(), 3);
    assert_eq!(
        db.clicks(link).await,
        (5, 2),
        "clicks stay, old log rows go"
    );
    let after = service
        .stats_in(owner, &query, TimeZone::UTC)
        .await
        .unwrap();
    assert_eq!(after, before);
    assert_eq!(after.total, 5);
}

/// Orphan visits 40 and 1 days back, the log pruned at 30 days: only the recent one's rollups
/// are left.
async fn orphans_go_with_the_log(service: &LocalService) {
    use linkdeck::backend::local::serving::{Interner, OrphanVisit, VisitBatch};
    use linkdeck::domain::OrphanKind;
    let owner = service.default_backend().await.unwrap().owner_id();
    let mut batch = VisitBatch::keeping(2);
    for (days_back, path) in [(40, "/old"), (1, "/new")] {
        batch.add_orphan(&OrphanVisit {
            domain: None,
            at: now().as_second() - days_back * 86_400,
            kind: OrphanKind::OtherPath,
            path: path.into(),
            referrer: None,
            country: None,
        });
    }
    let interner = Arc::new(std::sync::Mutex::new(Interner::default()));
    service
        .write_visits(batch, Vec::new(), &interner)
        .await
        .0
        .unwrap();
    let all = StatsQuery::new(StatsScope::Account, PeriodSpec::preset(Preset::All));
    let total = || async {
        service
            .orphan_stats_in(owner, &all, TimeZone::UTC)
            .await
            .unwrap()
            .total
    };
    assert_eq!(total().await, 2);
    service
        .prune_visit_log(now() - jiff::SignedDuration::from_hours(24 * 30))
        .await
        .unwrap();
    assert_eq!(total().await, 1, "the 40-day-old orphan visit is pruned");
}

#[tokio::test]
async fn orphan_rollups_are_pruned_with_the_log_on_both_stores() {
    let dir = tempfile::tempdir().unwrap();
    let sqlite = LocalService::open(&dir.path().join("orphans.db"), options()).unwrap();
    orphans_go_with_the_log(&sqlite).await;
    let Some(db) = database().await else { return };
    orphans_go_with_the_log(&db.service(options()).await).await;
}
