//! `linkdeck serve` end to end: real HTTP on a loopback port, a real database in a temporary
//! directory. `api` covers the v1 API's records, `errors` every refused request, `redirects` the
//! short links and click counting, `cli` the real binary.

mod common;

#[path = "server/api.rs"]
mod api;
#[path = "server/cli.rs"]
mod cli;
#[path = "server/errors.rs"]
mod errors;
#[path = "server/hardening.rs"]
mod hardening;
#[path = "server/redirects.rs"]
mod redirects;
#[path = "server/traffic.rs"]
mod traffic;
