//! Listing every link page by page through `RemoteBackend` against a real `linkdeck serve` on
//! loopback: how long a full walk takes and how many requests it makes.
//!
//! `cargo bench --bench remote` (10,000 links; `LINKDECK_BENCH_LINKS=N` for another size).
//! Before measuring, one walk of each page size goes through a counting proxy and the request
//! count is printed; the timed walks talk to the server directly.

#[path = "../tests/common/counting_proxy.rs"]
mod counting_proxy;

use std::time::Duration;

use criterion::{Criterion, criterion_group, criterion_main};
use jiff::tz::TimeZone;
use tokio::runtime::Runtime;

use counting_proxy::CountingProxy;
use linkdeck::backend::Backend;
use linkdeck::backend::local::{LocalOptions, LocalService};
use linkdeck::backend::remote::{ApiKey, RemoteBackend, RemoteOptions};
use linkdeck::domain::{LinkInput, LinkQuery};
use linkdeck::server::{ServeOptions, ServerHandle};

struct Setup {
    _dir: tempfile::TempDir,
    server: ServerHandle,
    key: String,
    links: usize,
}

async fn setup(links: usize) -> Setup {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let service = LocalService::open(&dir.path().join("bench.db"), LocalOptions::default())
        .expect("a database");
    let owner = service.default_backend().await.expect("the default owner");
    let rows = (0..links)
        .map(|i| {
            let input = LinkInput::with_url(format!("https://example.com/page/{i}"));
            (i + 1, input, None)
        })
        .collect();
    owner
        .import_batch(Vec::new(), rows)
        .await
        .expect("seeded links");
    let (key, _) = service
        .create_key(owner.owner_id(), Some("bench"))
        .await
        .expect("a key");
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("a loopback port");
    let opts = ServeOptions {
        api_rate_limit: 0,
        ..ServeOptions::default()
    };
    let server = linkdeck::server::start(service, opts, listener)
        .await
        .expect("a running server");
    Setup {
        _dir: dir,
        server,
        key,
        links,
    }
}

fn client(base_url: &str, key: &str) -> RemoteBackend {
    RemoteBackend::new(RemoteOptions {
        base_url: base_url.to_owned(),
        api_key: ApiKey::new(key).expect("a key"),
        timeout: Duration::from_secs(30),
        timezone: TimeZone::UTC,
    })
    .expect("a client")
}

/// Reads every page; returns how many links were seen.
async fn walk(backend: &RemoteBackend, per_page: u32) -> usize {
    let mut query = LinkQuery {
        per_page,
        ..LinkQuery::default()
    };
    let mut seen = 0;
    loop {
        let page = backend.list_links(&query).await.expect("a page");
        seen += page.items.len();
        if !page.has_next() {
            return seen;
        }
        query.page = page.page + 1;
    }
}

fn bench(c: &mut Criterion) {
    let links: usize = std::env::var("LINKDECK_BENCH_LINKS")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(10_000);
    let rt = Runtime::new().expect("a tokio runtime");
    let setup = rt.block_on(setup(links));
    let direct = client(&setup.server.url(), &setup.key);

    for per_page in [100, 10] {
        let (seen, requests) = rt.block_on(async {
            let proxy = CountingProxy::start(&setup.server.url()).await;
            let seen = walk(&client(&proxy.base_url(), &setup.key), per_page).await;
            (seen, proxy.count())
        });
        assert_eq!(seen, setup.links);
        println!(
            "remote walk: {} links at per_page {per_page}: {requests} requests",
            setup.links
        );
    }

    let mut group = c.benchmark_group("remote_list");
    group.sample_size(10);
    group.measurement_time(Duration::from_secs(20));
    for per_page in [100u32, 10] {
        group.bench_function(format!("walk_{links}_per_page_{per_page}"), |b| {
            b.to_async(&rt).iter(|| async {
                assert_eq!(walk(&direct, per_page).await, links);
            })
        });
    }
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
