//! The server's HTTP tests of `server.rs` — the same source, `tests/server/*.rs` — on
//! PostgreSQL: every server here runs over a fresh database of a throwaway cluster
//! (`tests/pg_cluster`), and the binary is given its URL.
//!
//! What cannot run here is listed in [`NOT_ON_POSTGRES`], each with the reason, which is printed
//! when the test is skipped. Without PostgreSQL's server programs every test says so and passes;
//! with `LINKDECK_REQUIRE_POSTGRES=1` they fail instead.

mod common;
mod pg_cluster;
mod raw;

#[path = "server/api.rs"]
mod api;
#[path = "server/cli.rs"]
mod cli;
#[path = "server/errors.rs"]
mod errors;
#[path = "server/fallbacks.rs"]
mod fallbacks;
#[path = "server/hardening.rs"]
mod hardening;
#[path = "server/linkdeck_api.rs"]
mod linkdeck_api;
#[path = "server/orphans.rs"]
mod orphans;
#[path = "server/qr.rs"]
mod qr;
#[path = "server/redirects.rs"]
mod redirects;
#[path = "server/rules.rs"]
mod rules;
#[path = "server/scopes.rs"]
mod scopes;
#[path = "server/traffic.rs"]
mod traffic;
#[path = "server/webhooks.rs"]
mod webhooks;

use common::{Store, TestServer};
use linkdeck::server::ServeOptions;

/// Tests of the shared modules that do not run on PostgreSQL, by `module::name`, with the
/// reason: what they test is SQLite's by nature.
const NOT_ON_POSTGRES: &[(&str, &str)] = &[(
    "cli::a_second_serve_on_one_database_is_refused_and_counts_stay_exact",
    "SQLite's serve lock (one serve per database file); several servers share a PostgreSQL \
         database by design, which tests/server_pg.rs tests",
)];

/// The store of the calling test: a fresh PostgreSQL database; `None` (the reason printed) when
/// the test is listed in [`NOT_ON_POSTGRES`] or PostgreSQL is not installed.
fn store() -> Option<Store> {
    let current = std::thread::current();
    let test = current.name().unwrap_or_default();
    if let Some((_, why)) = NOT_ON_POSTGRES.iter().find(|(name, _)| *name == test) {
        // Past the test harness's capture, which would hide it in a passing test.
        use std::io::Write;
        let _ = writeln!(std::io::stderr(), "{test}: not run on PostgreSQL: {why}");
        return None;
    }
    Some(Store::Postgres {
        url: pg_cluster::cluster()?.fresh_database(),
        password: pg_cluster::PASSWORD.into(),
    })
}

/// A server for the calling test on [`store`]; `None` when the test does not run here.
async fn serve(opts: ServeOptions) -> Option<TestServer> {
    Some(TestServer::start_on(store()?, opts).await)
}

/// The shared modules' sources.
const SOURCES: [(&str, &str); 9] = [
    ("api", include_str!("server/api.rs")),
    ("cli", include_str!("server/cli.rs")),
    ("errors", include_str!("server/errors.rs")),
    ("hardening", include_str!("server/hardening.rs")),
    ("linkdeck_api", include_str!("server/linkdeck_api.rs")),
    ("qr", include_str!("server/qr.rs")),
    ("redirects", include_str!("server/redirects.rs")),
    ("traffic", include_str!("server/traffic.rs")),
    ("webhooks", include_str!("server/webhooks.rs")),
];

/// Each name in [`NOT_ON_POSTGRES`] is a test of its module, so that none is listed after it
/// was renamed or removed.
#[test]
fn every_test_not_on_postgres_exists() {
    for (name, _) in NOT_ON_POSTGRES {
        let (module, test) = name.split_once("::").unwrap();
        let (_, source) = SOURCES
            .iter()
            .find(|(m, _)| *m == module)
            .unwrap_or_else(|| panic!("{name}: no module {module}"));
        assert!(
            source.contains(&format!("#[tokio::test]\nasync fn {test}()")),
            "{name} is not a test of {module}"
        );
    }
}

/// No shared test opens a store of its own choosing: it would run on SQLite here too, unseen.
#[test]
fn the_shared_tests_open_only_this_crates_store() {
    for (module, source) in SOURCES {
        for chosen in [
            "TestServer::start(",
            "TestServer::start_with(",
            "LocalService::open(",
        ] {
            assert!(
                !source.contains(chosen),
                "server/{module}.rs calls {chosen}…): start servers with crate::serve, and give \
                 the binary crate::store()'s database"
            );
        }
    }
}
