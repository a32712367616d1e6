//! `linkdeck serve` end to end: real HTTP on a loopback port, a real SQLite database in a
//! temporary directory. `api` covers the v1 API's records, `errors` every refused request,
//! `redirects` the short links and click counting, `qr` their QR codes, `cli` the real binary,
//! `linkdeck_api` linkdeck's own paths beside v1, `fallbacks` where a host sends visitors no
//! link takes and its robots.txt.
//!
//! The same modules run on PostgreSQL in `server_on_postgres.rs`: they start their servers and
//! databases through [`store`] and [`serve`] below, never on a store of their own choosing.

mod common;
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

/// The store of the calling test: a SQLite file, for every test of this crate.
fn store() -> Option<Store> {
    Some(Store::Sqlite)
}

/// A server for the calling test on [`store`]; `None` when the test does not run here.
async fn serve(opts: ServeOptions) -> Option<TestServer> {
    Some(TestServer::start_on(store()?, opts).await)
}
