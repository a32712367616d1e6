//! List and search at scale: first pages of every status × sort, deep pages, and search by each
//! field, over the cached benchmark database (`LINKDECK_BENCH_LINKS`, 1M by default).
//! Targets: a first page ≤ 5 ms, a search ≤ 20 ms.

mod data;

use std::time::Duration;

use criterion::{Criterion, criterion_group, criterion_main};

use linkdeck::backend::Backend;
use linkdeck::domain::{LinkQuery, SearchBy, Sort, SpaceFilter, StatusFilter};

fn bench(c: &mut Criterion) {
    let n = data::link_count();
    let rt = tokio::runtime::Runtime::new().unwrap();
    let backend = data::open(&rt, n);
    let run = |q: &LinkQuery| {
        let page = rt.block_on(backend.list_links(q)).unwrap();
        std::hint::black_box(page)
    };

    let mut group = c.benchmark_group(format!("list_{n}"));
    group
        .sample_size(20)
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(2));
    for status in StatusFilter::ALL {
        for sort in Sort::ALL {
            let q = LinkQuery {
                status,
                sort,
                ..LinkQuery::default()
            };
            let total = run(&q).total;
            eprintln!("{} {}: {total} links", status.label(), sort.as_str());
            group.bench_function(
                format!("first_page/{}/{}", status.label(), sort.as_str()),
                |b| b.iter(|| run(&q)),
            );
        }
    }
    let last = run(&LinkQuery::default()).last_page();
    for sort in [Sort::Desc, Sort::Max] {
        let q = LinkQuery {
            sort,
            page: last,
            ..LinkQuery::default()
        };
        group.bench_function(format!("last_page/all/{}", sort.as_str()), |b| {
            b.iter(|| run(&q))
        });
    }
    let q = LinkQuery {
        space: SpaceFilter::In(2),
        ..LinkQuery::default()
    };
    group.bench_function("first_page/space", |b| b.iter(|| run(&q)));
    group.finish();

    let words = data::words();
    let mut group = c.benchmark_group(format!("search_{n}"));
    group
        .sample_size(20)
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(2));
    let searches = [
        (SearchBy::Title, words[100].clone()),
        (SearchBy::Title, words[1500][..3].to_string()),
        (SearchBy::Url, words[700].to_uppercase()),
        (SearchBy::Url, "ref=12345".to_string()),
        (SearchBy::Alias, "ab".to_string()),
        (SearchBy::Alias, "7".to_string()),
        (SearchBy::Title, "e".to_string()),
        (SearchBy::Url, "Z".to_string()),
        (SearchBy::Alias, "k3x".to_string()),
    ];
    for (by, term) in searches {
        let q = LinkQuery {
            search: Some(term.clone()),
            by,
            ..LinkQuery::default()
        };
        let total = run(&q).total;
        eprintln!("search {} {term:?}: {total} links", by.as_str());
        group.bench_function(format!("{}/{term}", by.as_str()), |b| b.iter(|| run(&q)));
    }
    let q = LinkQuery {
        search: Some(words[100].clone()),
        status: StatusFilter::Active,
        sort: Sort::Max,
        ..LinkQuery::default()
    };
    group.bench_function("title_active_max", |b| b.iter(|| run(&q)));
    // A common term (tens of thousands of matches) and a one-character term (most links) with
    // each status and sort: what the app does when a tab or a sort is chosen while a search is
    // kept.
    let common = words[1500][..3].to_string();
    for (name, term) in [("common", common.as_str()), ("one_char", "e")] {
        for status in StatusFilter::ALL {
            for sort in [Sort::Desc, Sort::Max, Sort::Min] {
                let q = LinkQuery {
                    search: Some(term.to_string()),
                    status,
                    sort,
                    ..LinkQuery::default()
                };
                let total = run(&q).total;
                eprintln!(
                    "search {term:?} {} {}: {total} links",
                    status.label(),
                    sort.as_str()
                );
                group.bench_function(
                    format!("{name}/{}/{}", status.label(), sort.as_str()),
                    |b| b.iter(|| run(&q)),
                );
            }
        }
    }
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
