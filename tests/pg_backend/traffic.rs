//! Traffic follows links on PostgreSQL as on SQLite: out of the figures while a link is in the
//! trash, back on restore, gone with it when purged; a purged space's and a removed domain's
//! sums go too; and clicks written while links move, by another service at the same time, land
//! in the space each link is in.

use jiff::SignedDuration;
use linkdeck::backend::local::LocalBackend;
use linkdeck::backend::local::serving::VisitRow;
use linkdeck::backend::{Backend, BulkAction, Progress, Selection};
use linkdeck::domain::{Id, LinkInput, PeriodSpec, Preset, StatsQuery, StatsScope};

use crate::{PgHarness, all_links, space_input, suite, trash_of};

/// `n` visits of link `id`, one a day going back from the clock's day.
fn visits(h: &PgHarness, id: Id, n: i64) -> Vec<VisitRow> {
    let now = linkdeck::domain::Clock::now(h.clock.as_ref()).as_second();
    (0..n)
        .map(|i| VisitRow {
            link_id: id,
            at: now - 3_600 - i * 86_400,
            country: Some(if i % 2 == 0 { "DE" } else { "FR" }.into()),
            platform: None,
            browser: None,
            referrer: None,
            language: None,
            address: None,
            rule: None,
        })
        .collect()
}

/// The clicks of all time of `scope`, as the owner's statistics answer.
async fn total(backend: &LocalBackend, scope: StatsScope) -> u64 {
    backend
        .stats(&StatsQuery::new(scope, PeriodSpec::preset(Preset::All)))
        .await
        .unwrap()
        .total
}

/// How many rows `sql` (a count) finds for `id`.
async fn count(h: &PgHarness, sql: &str, id: Id) -> i64 {
    let client = h.raw.pg().await.unwrap().client().await.unwrap();
    client.query_one(sql, &[&id]).await.unwrap().get(0)
}

async fn link_rows(h: &PgHarness, link: Id) -> i64 {
    count(
        h,
        "SELECT count(*) FROM link_traffic WHERE link_id = $1",
        link,
    )
    .await
}

async fn scope_rows(h: &PgHarness, scope: i32, id: Id) -> i64 {
    let client = h.raw.pg().await.unwrap().client().await.unwrap();
    client
        .query_one(
            "SELECT count(*) FROM scope_traffic WHERE scope = $1 AND scope_id = $2",
            &[&scope, &id],
        )
        .await
        .unwrap()
        .get(0)
}

#[tokio::test]
async fn a_trashed_link_leaves_the_figures_comes_back_with_them_and_takes_its_traffic_when_purged()
{
    let h = harness!();
    let space = h
        .mine
        .create_space(&space_input("Launch", "2"))
        .await
        .unwrap();
    let domain = h.mine.add_domain("sho.rt").await.unwrap();
    let link = h
        .mine
        .create_link(&LinkInput {
            space: Some(space.id.to_string()),
            domain: Some(domain.id.to_string()),
            ..LinkInput::with_url("https://a.example")
        })
        .await
        .unwrap();
    let other = h
        .mine
        .create_link(&LinkInput::with_url("https://b.example"))
        .await
        .unwrap();
    h.service
        .record_visits(visits(&h, link.id, 3))
        .await
        .unwrap();
    h.service
        .record_visits(visits(&h, other.id, 2))
        .await
        .unwrap();
    let figures = || async {
        (
            total(&h.mine, StatsScope::Account).await,
            total(&h.mine, StatsScope::Space(space.id)).await,
            total(&h.mine, StatsScope::Domain(domain.id)).await,
        )
    };
    assert_eq!(figures().await, (5, 3, 3));

    h.mine.delete_link(link.id).await.unwrap();
    assert_eq!(figures().await, (2, 0, 0), "a trashed link leaves the sums");
    assert_eq!(link_rows(&h, link.id).await, 3, "its own traffic waits");

    h.mine.restore(&trash_of(&h.mine).await).await.unwrap();
    assert_eq!(figures().await, (5, 3, 3), "and comes back with it");
    assert_eq!(total(&h.mine, StatsScope::Link(link.id)).await, 3);

    // Emptied from the trash: its own rows go, and its logged visits are marked for the pruner,
    // which removes them.
    h.mine.delete_link(link.id).await.unwrap();
    assert_eq!(h.mine.empty_trash().await.unwrap(), 1);
    assert_eq!(figures().await, (2, 0, 0));
    assert_eq!(link_rows(&h, link.id).await, 0);
    assert_eq!(
        count(
            &h,
            "SELECT count(*) FROM visit_log_purge WHERE link_id = $1",
            link.id
        )
        .await,
        1
    );
    h.service.purge_deleted_visits().await.unwrap();
    let logged = "SELECT count(*) FROM visit_log WHERE link_id = $1";
    assert_eq!(count(&h, logged, link.id).await, 0);
    assert_eq!(count(&h, logged, other.id).await, 2, "others' visits stay");

    // Left in the trash past the profile's days, the other goes the same way at the next look.
    h.mine.delete_link(other.id).await.unwrap();
    h.clock
        .set(suite::start() + SignedDuration::from_hours(24 * 31));
    assert!(trash_of(&h.mine).await.is_empty());
    assert_eq!(link_rows(&h, other.id).await, 0);
    assert_eq!(total(&h.mine, StatsScope::Account).await, 0);
    h.service.purge_deleted_visits().await.unwrap();
    assert_eq!(count(&h, logged, other.id).await, 0);
}

#[tokio::test]
async fn a_purged_space_and_a_removed_domain_take_their_sums() {
    let h = harness!();
    let space = h
        .mine
        .create_space(&space_input("Spring", "3"))
        .await
        .unwrap();
    let domain = h.mine.add_domain("go.example").await.unwrap();
    let in_space = h
        .mine
        .create_link(&LinkInput {
            space: Some(space.id.to_string()),
            ..LinkInput::with_url("https://a.example")
        })
        .await
        .unwrap();
    let on_domain = h
        .mine
        .create_link(&LinkInput {
            domain: Some(domain.id.to_string()),
            ..LinkInput::with_url("https://b.example")
        })
        .await
        .unwrap();
    h.service
        .record_visits(
            visits(&h, in_space.id, 2)
                .into_iter()
                .chain(visits(&h, on_domain.id, 2))
                .collect(),
        )
        .await
        .unwrap();
    assert_eq!(scope_rows(&h, 2, space.id).await, 2);
    assert_eq!(scope_rows(&h, 3, domain.id).await, 2);

    h.mine.delete_space(space.id).await.unwrap();
    assert_eq!(h.mine.empty_trash().await.unwrap(), 1);
    assert_eq!(scope_rows(&h, 2, space.id).await, 0);
    // Its link stays, without a space, with its clicks.
    assert_eq!(total(&h.mine, StatsScope::Link(in_space.id)).await, 2);

    h.mine.delete_link(on_domain.id).await.unwrap();
    h.mine.empty_trash().await.unwrap();
    h.mine.remove_domain(domain.id).await.unwrap();
    assert_eq!(scope_rows(&h, 3, domain.id).await, 0);
    assert_eq!(total(&h.mine, StatsScope::Account).await, 2);
}

/// Moves `ids` into `space` (or out of any, `None`) in one bulk change.
async fn move_all(backend: &LocalBackend, ids: &[Id], space: Option<Id>) {
    let to = BulkAction::Update(LinkInput {
        space: Some(space.map_or_else(String::new, |s| s.to_string())),
        ..LinkInput::default()
    });
    backend
        .bulk(
            &Selection::of_ids(ids.iter().copied()),
            &to,
            &Progress::new(),
        )
        .await
        .unwrap();
}

#[tokio::test]
async fn clicks_written_while_another_service_moves_and_trashes_links_land_where_each_link_is() {
    let h = harness!();
    let a = h.mine.create_space(&space_input("A", "1")).await.unwrap();
    let b = h.mine.create_space(&space_input("B", "2")).await.unwrap();
    let mut ids = Vec::new();
    for i in 0..6 {
        let link = h
            .mine
            .create_link(&LinkInput {
                space: Some(a.id.to_string()),
                ..LinkInput::with_url(format!("https://example.com/{i}"))
            })
            .await
            .unwrap();
        ids.push(link.id);
    }
    let mover = h.second_service().await.default_backend().await.unwrap();
    const ROUNDS: i64 = 12;
    // One service writes batches of clicks of every link, over several days…
    let clicks = {
        let service = h.service.clone();
        let batches: Vec<Vec<VisitRow>> = (0..ROUNDS)
            .map(|_| ids.iter().flat_map(|&id| visits(&h, id, 3)).collect())
            .collect();
        async move {
            for batch in batches {
                service.record_visits(batch).await.unwrap();
            }
        }
    };
    // …while the other moves them between spaces, in bulk and one by one, and trashes and
    // restores one of them.
    let moves = {
        let ids = ids.clone();
        async move {
            for round in 0..ROUNDS {
                let (to, back) = if round % 2 == 0 {
                    (b.id, a.id)
                } else {
                    (a.id, b.id)
                };
                move_all(&mover, &ids[..4], Some(to)).await;
                mover
                    .update_link(
                        ids[4],
                        &LinkInput {
                            space: Some(back.to_string()),
                            ..LinkInput::default()
                        },
                    )
                    .await
                    .unwrap();
                if round % 3 == 0 {
                    mover.delete_link(ids[5]).await.unwrap();
                } else if round % 3 == 1 {
                    let trash = mover.trash(1, 10).await.unwrap().unwrap().items;
                    mover.restore(&trash).await.unwrap();
                }
            }
        }
    };
    tokio::join!(clicks, moves);
    // Every click counted (but those of the link while it was in the trash), each in the
    // space its link is in now, none left behind where a link was.
    let mut in_space = std::collections::HashMap::<Option<Id>, u64>::new();
    let mut live = 0;
    for link in h.mine.list_links(&all_links()).await.unwrap().items {
        let clicks = total(&h.mine, StatsScope::Link(link.id)).await;
        assert_eq!(clicks, link.clicks, "link {}", link.id);
        *in_space.entry(link.space.map(|s| s.id)).or_default() += clicks;
        live += clicks;
    }
    assert!(live >= (ROUNDS * 3 * 5) as u64, "{live}");
    assert_eq!(total(&h.mine, StatsScope::Account).await, live);
    for space in [a.id, b.id] {
        assert_eq!(
            total(&h.mine, StatsScope::Space(space)).await,
            in_space.get(&Some(space)).copied().unwrap_or(0),
            "space {space}"
        );
    }
}

/// An hour of history of one visit from `country`.
fn hour_from(at: jiff::Timestamp, country: &str) -> linkdeck::domain::TrafficHour {
    let mut values: [Vec<(String, u64)>; linkdeck::domain::DIMENSIONS] = Default::default();
    values[0].push((country.to_owned(), 1));
    linkdeck::domain::TrafficHour {
        hour: at,
        clicks: 1,
        values,
    }
}

#[tokio::test]
async fn an_import_adds_its_history_to_the_figures_while_another_service_writes_clicks() {
    use linkdeck::backend::local::{ImportOptions, ImportRow, Incoming};
    use linkdeck::domain::{Carried, Place};
    let h = harness!();
    let space = h
        .mine
        .create_space(&space_input("Imported", "5"))
        .await
        .unwrap();
    let live = h
        .mine
        .create_link(&LinkInput {
            space: Some(space.id.to_string()),
            ..LinkInput::with_url("https://live.example")
        })
        .await
        .unwrap();
    // Rows with a history over the same days the live link's clicks fall on, more than one
    // write chunk of them.
    let now = linkdeck::domain::Clock::now(h.clock.as_ref());
    const ROWS: usize = linkdeck::backend::local::IMPORT_CHUNK + 500;
    let rows = (0..ROWS).map(move |i| {
        let days_back = (i % 3) as i64;
        let at = now - SignedDuration::from_hours(24 * days_back + 1);
        Incoming::Row(Box::new(ImportRow {
            place: Place::line(i + 1),
            input: LinkInput {
                alias: Some(format!("imported-{i}")),
                ..LinkInput::with_url(format!("https://example.com/{i}"))
            },
            space: Some("Imported".into()),
            carried: Carried {
                clicks: 1,
                traffic: vec![hour_from(at, if i % 2 == 0 { "DE" } else { "JP" })],
                ..Carried::default()
            },
        }))
    });
    let clicks = {
        let service = h.second_service().await;
        let batches: Vec<Vec<VisitRow>> = (0..10).map(|_| visits(&h, live.id, 3)).collect();
        async move {
            for batch in batches {
                service.record_visits(batch).await.unwrap();
            }
        }
    };
    let (summary, ()) = tokio::join!(
        h.mine
            .import_stream(Vec::new(), rows, ImportOptions::default()),
        clicks
    );
    let summary = summary.unwrap();
    assert_eq!(summary.links_created, ROWS);
    assert_eq!(summary.clicks_imported, ROWS as u64);
    let expected = ROWS as u64 + 30;
    assert_eq!(total(&h.mine, StatsScope::Space(space.id)).await, expected);
    assert_eq!(total(&h.mine, StatsScope::Account).await, expected);
    let imported = h.mine.show_link(live.id + 1).await.unwrap();
    assert_eq!(
        (
            imported.clicks,
            total(&h.mine, StatsScope::Link(imported.id)).await
        ),
        (1, 1)
    );
}

/// A traffic column of a type the store does not expect reads as the store's error, not as a
/// panic of the database task: the traffic reads take their columns through the checked path.
#[tokio::test]
async fn a_traffic_column_of_an_unexpected_type_is_an_error_not_a_panic() {
    let h = harness!();
    let link = h
        .mine
        .create_link(&LinkInput::with_url("https://a.example"))
        .await
        .unwrap();
    h.service
        .record_visits(visits(&h, link.id, 2))
        .await
        .unwrap();
    assert_eq!(total(&h.mine, StatsScope::Link(link.id)).await, 2);
    for table in ["link_traffic", "scope_traffic"] {
        crate::sql(
            &h,
            &format!("ALTER TABLE {table} ALTER COLUMN clicks TYPE text USING clicks::text"),
            &[],
        )
        .await;
    }
    for scope in [StatsScope::Link(link.id), StatsScope::Account] {
        let message = h
            .mine
            .stats(&StatsQuery::new(scope, PeriodSpec::preset(Preset::All)))
            .await
            .unwrap_err()
            .to_string();
        assert!(message.contains("PostgreSQL"), "{message}");
        assert!(!message.contains("task failed"), "{message}");
    }
}
