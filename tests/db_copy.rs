//! `linkdeck db copy`: a whole database from a SQLite file into a real PostgreSQL and back, run
//! as the real binary. What comes back must be what went: the export, the statistics, the
//! trash, API keys, and link ids that are never given out twice.

mod cli_support;
mod pg_cluster;

use std::path::Path;

use jiff::Timestamp;
use linkdeck::backend::Backend;
use linkdeck::backend::local::serving::VisitRow;
use linkdeck::backend::local::{LocalOptions, LocalService, StoreLocation};
use linkdeck::domain::{DomainInput, LinkInput, RuleInput, SpaceInput};

use cli_support::{Env, Run};

/// A database with something of everything: spaces, a domain, links with passwords, targeting,
/// expiry and non-ASCII text, visits on several days, a key, a trashed link and space, and a
/// second owner.
async fn fill(path: &Path) -> String {
    let service = LocalService::open(path, LocalOptions::default()).unwrap();
    let me = service.default_backend().await.unwrap();
    let space = |name: &str| SpaceInput {
        name: Some(name.into()),
        color: Some("3".into()),
    };
    let work = me.create_space(&space("Work")).await.unwrap();
    let old = me.create_space(&space("Old")).await.unwrap();
    let domain = me.add_domain("sho.rt").await.unwrap();
    // Its fallbacks and robots.txt travel with it.
    me.update_domain(
        domain.id,
        &DomainInput {
            root_url: Some("https://example.com/home".into()),
            expired_url: Some("https://example.com/gone".into()),
            robots_txt: Some("User-agent: *\nDisallow: /x\n".into()),
            ..DomainInput::default()
        },
    )
    .await
    .unwrap();
    let link = |url: &str, alias: &str| LinkInput {
        url: Some(url.into()),
        alias: Some(alias.into()),
        ..LinkInput::default()
    };
    let a = me
        .create_link(&LinkInput {
            space: Some(work.id.to_string()),
            tags: Some("Launch, beta-test".into()),
            password: Some("open sesame".into()),
            expiration_clicks: Some("100".into()),
            target_type: Some("geo".into()),
            geo: Some(vec![RuleInput {
                key: Some("DE".into()),
                value: Some("https://example.de/ä?x=1&y=2".into()),
            }]),
            ..link("https://example.com/a?q=1", "alpha")
        })
        .await
        .unwrap();
    let b = me
        .create_link(&LinkInput {
            domain: Some(domain.id.to_string()),
            space: Some(old.id.to_string()),
            ..link("https://例え.jp/パス", "beta")
        })
        .await
        .unwrap();
    let gone = me
        .create_link(&link("https://example.com/gone", "gone"))
        .await
        .unwrap();
    me.delete_link(gone.id).await.unwrap();
    me.delete_space(old.id).await.unwrap();
    let theirs = service.for_owner(service.add_owner("someone").await.unwrap().id);
    theirs
        .create_link(&link("https://example.org/", "theirs"))
        .await
        .unwrap();
    let (key, _) = service.create_key(me.owner_id(), Some("ci")).await.unwrap();
    let now = Timestamp::now().as_second();
    let visits = (0..40)
        .map(|i| VisitRow {
            link_id: if i % 3 == 0 { b.id } else { a.id },
            at: now - i * 3_600 * 7,
            country: Some(["DE", "US", "JP"][i as usize % 3].into()),
            platform: Some("Linux".into()),
            browser: Some("Firefox".into()),
            referrer: (i % 2 == 0).then(|| "news.example".into()),
            language: Some("de".into()),
            address: None,
            rule: None,
        })
        .collect();
    service.record_visits(visits).await.unwrap();
    key
}

fn ok(run: Run) -> Run {
    run.ok()
}

/// The binary with the sandbox's config and the test cluster's password, on no database.
trait RunBare {
    fn run_bare(&self, args: &[&str]) -> Run;
}

impl RunBare for Env {
    fn run_bare(&self, args: &[&str]) -> Run {
        let mut cmd = self.bare();
        cmd.arg("--config").arg(&self.config);
        for (var, value) in pg_cluster::password_env() {
            cmd.env(var, value);
        }
        cli_support::run(cmd.args(args))
    }
}

/// What a person would compare: every link and space as exported, the trash, the traffic.
fn snapshot(env: &Env, db: &str) -> Vec<String> {
    let on = |args: &[&str]| {
        let mut full = vec!["--db", db];
        full.extend_from_slice(args);
        ok(env.run_bare(&full)).stdout
    };
    vec![
        on(&["export", "--format", "json"]),
        on(&["trash", "list", "--json"]),
        on(&["stats", "--period", "all", "--json"]),
        on(&["--owner", "someone", "links", "list", "--json"]),
        on(&["domains", "list", "--json"]),
    ]
}

#[tokio::test(flavor = "multi_thread")]
async fn a_file_copied_into_postgresql_and_back_is_the_same_database() {
    let Some(cluster) = pg_cluster::cluster() else {
        return;
    };
    let env = Env::new();
    let first = env.path("first.db");
    let key = fill(&first).await;
    let pg = cluster.fresh_database();
    let back = env.path("back.db");
    let (first_s, back_s) = (first.to_str().unwrap(), back.to_str().unwrap());

    let there = ok(env.run_bare(&["db", "copy", "--from", first_s, "--to", &pg, "--json"]));
    let tables = &there.json()["tables"];
    assert_eq!(tables["links"], 3, "{}", there.stdout);
    assert_eq!(tables["trash_links"], 1);
    assert_eq!(tables["trash_spaces"], 1);
    assert_eq!(tables["owners"], 2);
    assert!(tables["link_traffic"].as_u64().unwrap() > 0);
    ok(env.run_bare(&["db", "copy", "--from", &pg, "--to", back_s]));

    let copied = snapshot(&env, back_s);
    assert_eq!(snapshot(&env, first_s), copied);
    let domains = copied.last().unwrap();
    assert!(domains.contains("https://example.com/home") && domains.contains("Disallow: /x"));

    // The copy is a working database: the key opens it, and a new link takes an id above every
    // id the original gave out (the trashed link's too).
    let service = LocalService::open(&back, LocalOptions::default()).unwrap();
    assert!(service.authenticate(&key).await.unwrap().is_some());
    let me = service.default_backend().await.unwrap();
    let tagged = |tag: &str| linkdeck::domain::LinkQuery {
        tags: vec![tag.into()],
        ..linkdeck::domain::LinkQuery::default()
    };
    // The tag index is the target's own, filled from the links' tags.
    assert_eq!(me.tags().await.unwrap().len(), 2);
    assert_eq!(me.list_links(&tagged("launch")).await.unwrap().total, 1);
    let new = me
        .create_link(&LinkInput {
            url: Some("https://example.com/new".into()),
            ..LinkInput::default()
        })
        .await
        .unwrap();
    assert_eq!(new.id, 5, "ids 1-4 were given out in the original");
    drop(service);

    // On PostgreSQL too: the sequence moved past the copied ids.
    let target = linkdeck::backend::local::pg::PgTarget::parse(&pg)
        .unwrap()
        .with_password(pg_cluster::PASSWORD);
    let on_pg = LocalService::open_at(&StoreLocation::Postgres(target), LocalOptions::default())
        .await
        .unwrap();
    let counts = on_pg.table_counts().await.unwrap();
    assert_eq!(counts.of("links"), 3);
    assert_eq!(counts.of("visit_log"), 40);
    // The search indexes, set aside while the rows went in, are back.
    let mut config: tokio_postgres::Config = pg.parse().unwrap();
    config.password(pg_cluster::PASSWORD);
    let (sql, connection) = config.connect(tokio_postgres::NoTls).await.unwrap();
    tokio::spawn(connection);
    let trigram: i64 = sql
        .query_one(
            "SELECT count(*) FROM pg_indexes WHERE tablename = 'links' \
             AND indexdef LIKE '%gin_trgm_ops%'",
            &[],
        )
        .await
        .unwrap()
        .get(0);
    assert_eq!(trigram, 3);
    // The planner knows the copied tables at once, not after autovacuum's next round.
    let unanalyzed: i64 = sql
        .query_one(
            "SELECT count(*) FROM pg_stat_user_tables \
             WHERE relname IN ('links', 'link_tags', 'visit_log') AND last_analyze IS NULL",
            &[],
        )
        .await
        .unwrap()
        .get(0);
    assert_eq!(unanalyzed, 0, "the copied tables are analyzed");
    // The link counters are right, and kept again by the database after the copy.
    let me = on_pg.default_backend().await.unwrap();
    assert_eq!(
        me.tags().await.unwrap().len(),
        2,
        "the tag index, set aside, is filled"
    );
    assert_eq!(me.list_links(&tagged("beta-test")).await.unwrap().total, 1);
    let all = linkdeck::domain::LinkQuery::default();
    assert_eq!(me.list_links(&all).await.unwrap().total, 2);
    me.create_link(&LinkInput {
        url: Some("https://example.com/after-the-copy".into()),
        ..LinkInput::default()
    })
    .await
    .unwrap();
    assert_eq!(me.list_links(&all).await.unwrap().total, 3);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_target_that_is_not_empty_is_refused_and_left_as_it_was() {
    let Some(cluster) = pg_cluster::cluster() else {
        return;
    };
    let env = Env::new();
    let first = env.path("first.db");
    fill(&first).await;
    let pg = cluster.fresh_database();
    let first_s = first.to_str().unwrap();
    ok(env.run_bare(&["db", "copy", "--from", first_s, "--to", &pg]));
    let again = env.run_bare(&["db", "copy", "--from", first_s, "--to", &pg]);
    assert_ne!(again.code, 0);
    assert!(
        again.stderr.contains("is not empty") && again.stderr.contains("3 links"),
        "{}",
        again.stderr
    );
    // Into a file that already holds links, from PostgreSQL: refused the same way.
    let refused = env.run_bare(&["db", "copy", "--from", &pg, "--to", first_s]);
    assert_ne!(refused.code, 0);
    assert!(
        refused.stderr.contains("is not empty"),
        "{}",
        refused.stderr
    );
    let same = env.run_bare(&["db", "copy", "--from", first_s, "--to", first_s]);
    assert!(same.stderr.contains("the same database"), "{}", same.stderr);
}
