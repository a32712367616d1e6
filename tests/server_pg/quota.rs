//! Clicks of limited and rotating links reserved in their quota rows (PostgreSQL schema 3): the
//! count follows the link through edits of its limit, the trash and back, and a database
//! upgraded from schema 2 keeps every limit and rotation turn where it was.

use std::sync::Arc;

use linkdeck::backend::Backend;
use linkdeck::backend::local::LocalOptions;
use linkdeck::backend::local::pg::create_at_version;
use linkdeck::backend::local::serving::ClickReservation;
use linkdeck::domain::{FixedClock, LinkInput};
use reqwest::StatusCode;

use crate::common::{client, location};
use crate::{Sandbox, database};

fn limited(limit: &str) -> LinkInput {
    LinkInput {
        expiration_clicks: Some(limit.into()),
        ..LinkInput::with_url("https://example.com/limited")
    }
}

#[tokio::test]
async fn a_limited_link_keeps_its_count_through_edits_of_its_limit_and_the_trash() {
    let Some(db) = database().await else { return };
    let service = db
        .service(LocalOptions {
            clock: Arc::new(FixedClock::new("2030-01-10T12:00:00Z".parse().unwrap())),
            ..LocalOptions::default()
        })
        .await;
    let me = service.default_backend().await.unwrap();
    let link = me.create_link(&limited("5")).await.unwrap();
    let counted = |n: u64| ClickReservation::Counted {
        clicks: n,
        rotation: None,
    };
    for n in 1..=3 {
        assert_eq!(service.reserve_click(link.id, 0).await.unwrap(), counted(n));
    }

    // The limit taken away before any click writer wrote: the three clicks stay the link's.
    let open = me
        .update_link(
            link.id,
            &LinkInput {
                expiration_clicks: Some("0".into()),
                ..LinkInput::default()
            },
        )
        .await
        .unwrap();
    assert_eq!(open.clicks, 3);
    assert_eq!(
        service.reserve_click(link.id, 0).await.unwrap(),
        ClickReservation::NotShared,
        "a link without a limit is counted by the server, not reserved"
    );

    // A limit again: it counts on from there, to exactly the limit.
    me.update_link(link.id, &limited("4")).await.unwrap();
    assert_eq!(service.reserve_click(link.id, 0).await.unwrap(), counted(4));
    assert_eq!(
        service.reserve_click(link.id, 0).await.unwrap(),
        ClickReservation::Refused
    );

    // Into the trash with every reserved click, and back at its limit.
    me.delete_link(link.id).await.unwrap();
    let trash = me.trash(1, 100).await.unwrap().unwrap().items;
    assert_eq!((trash[0].id, trash[0].clicks), (link.id, 4));
    me.restore(&trash).await.unwrap();
    let back = me.show_link(link.id).await.unwrap();
    assert_eq!(back.clicks, 4);
    assert!(back.status(back.created_at).expired);
    assert_eq!(
        service.reserve_click(link.id, 0).await.unwrap(),
        ClickReservation::Refused
    );
}

#[tokio::test]
async fn a_database_upgraded_from_schema_2_keeps_its_limits_and_rotation_turns() {
    let Some(mut db) = database().await else {
        return;
    };
    create_at_version(&mut db.sql, 2).await.unwrap();
    let owner: i64 = db
        .sql
        .query_one(
            "INSERT INTO owners (name, created_at) VALUES ('me', 0) RETURNING id",
            &[],
        )
        .await
        .unwrap()
        .get(0);
    // Written as linkdeck at schema 2 left them: clicks and rotation position in the link row.
    let nearly = db
        .link(owner, "nearly", "https://example.com/nearly", 100, &[])
        .await;
    let spent = db
        .link(owner, "spent", "https://example.com/spent", 100, &[])
        .await;
    let urls = [
        "https://r0.example/",
        "https://r1.example/",
        "https://r2.example/",
    ];
    let turns = db
        .link(owner, "turns", "https://example.com/main", 0, &urls)
        .await;
    for (id, clicks, position) in [(nearly, 98i64, 0i64), (spent, 100, 0), (turns, 7, 2)] {
        db.sql
            .execute(
                "UPDATE links SET clicks = $2, last_rotation = $3 WHERE id = $1",
                &[&id, &clicks, &position],
            )
            .await
            .unwrap();
    }

    // Two servers of this version open it (one upgrades it) and share its counts.
    let sandbox = Sandbox::default();
    let servers = [sandbox.serve(&db.url), sandbox.serve(&db.url)];
    let http = client();
    let mut followed = 0;
    for i in 0..6 {
        let r = http
            .get(servers[i % 2].url("/nearly"))
            .send()
            .await
            .unwrap();
        match r.status() {
            StatusCode::MOVED_PERMANENTLY => followed += 1,
            StatusCode::GONE => {}
            other => panic!("/nearly answered {other}"),
        }
    }
    assert_eq!(followed, 2, "98 of 100 before the upgrade: two more");
    let r = http.get(servers[0].url("/spent")).send().await.unwrap();
    assert_eq!(
        r.status(),
        StatusCode::GONE,
        "at its limit before the upgrade"
    );
    let mut served = Vec::new();
    for i in 0..4 {
        let r = http.get(servers[i % 2].url("/turns")).send().await.unwrap();
        served.push(location(&r));
    }
    assert_eq!(
        served,
        [urls[2], urls[0], urls[1], urls[2]],
        "the turn saved before the upgrade comes next"
    );
    for server in servers {
        server.stop();
    }
    assert_eq!(db.clicks(nearly).await, (100, 2));
    assert_eq!(db.clicks(spent).await, (100, 0));
    assert_eq!(db.clicks(turns).await, (11, 4));
}

/// A limited link's clicks are reserved in the database as they are served; the link's own
/// count follows in the server's batches. A server killed before its batch leaves the link
/// behind its reservations: the next server to start brings it up to them.
#[tokio::test]
async fn clicks_reserved_by_a_killed_server_show_once_another_starts() {
    let Some(db) = database().await else {
        return;
    };
    let sandbox = Sandbox::default();
    let server = sandbox.serve(&db.url);
    sandbox.run(
        &db.url,
        &[
            "links",
            "create",
            "https://example.com/kept",
            "--alias",
            "kept",
            "--max-clicks",
            "5",
        ],
    );
    let id: i64 = db
        .sql
        .query_one("SELECT id FROM links WHERE alias = 'kept'", &[])
        .await
        .unwrap()
        .get(0);
    let http = client();
    for _ in 0..3 {
        let r = http.get(server.url("/kept")).send().await.unwrap();
        assert_eq!(r.status(), StatusCode::MOVED_PERMANENTLY);
    }
    server.kill();
    let stored = |sql: &'static str| {
        let db = &db;
        async move {
            db.sql
                .query_one(sql, &[&id])
                .await
                .unwrap()
                .get::<_, i64>(0)
        }
    };
    assert_eq!(
        stored("SELECT used FROM click_quota WHERE link_id = $1").await,
        3,
        "every served click is reserved"
    );
    let next = sandbox.serve(&db.url);
    assert_eq!(db.clicks(id).await.0, 3, "the link shows its 3 clicks");
    for _ in 0..4 {
        http.get(next.url("/kept")).send().await.unwrap();
    }
    next.stop();
    assert_eq!(db.clicks(id).await.0, 5, "exactly its limit, no more");
}
