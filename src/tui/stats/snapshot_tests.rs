//! Screens of the Stats view in every state — a link's, a space's and the account's; loading,
//! loaded, empty, failed, and a server without statistics — at 100×30 and 80×24, with a fixed
//! clock. The app's commands are answered here from values in memory, as the runtime would.

use std::sync::Arc;

use jiff::{SignedDuration, Timestamp};
use ratatui::crossterm::event::KeyCode;
use ratatui::layout::Rect;

use crate::domain::{
    Breakdown, Bucket, Color, Dimension, Error, FixedClock, Link, OrphanStats, Page, Period, Space,
    Stats, StatsQuery, StatsScope, TopLink, ValueCount,
};
use crate::tui::app::App;
use crate::tui::msg::{Command, Msg};
use crate::tui::snapshot_tests::{config, press, screen, styled_screen};
use crate::tui::theme::{Theme, ThemeName};

fn now() -> Timestamp {
    "2026-11-22T12:00:00Z".parse().unwrap()
}

fn link() -> Link {
    let created = now() - SignedDuration::from_hours(24 * 60);
    Link {
        id: 7,
        alias: "spring".into(),
        url: "https://shop.example.com/spring/collection".into(),
        short_url: "http://127.0.0.1:8080/spring".into(),
        title: Some("shop.example.com/spring/collection".into()),
        public: true,
        clicks: 1_204,
        created_at: created,
        updated_at: created,
        ..Link::example()
    }
}

fn space() -> Space {
    Space {
        id: 3,
        owner_id: 1,
        name: "Launch".into(),
        color: Color::new(4).unwrap(),
        links: Some(12),
        created_at: now(),
        updated_at: now(),
    }
}

/// How the backend answers a stats question.
#[derive(Clone, Copy, PartialEq)]
pub(in crate::tui) enum Answer {
    None,
    Loaded,
    /// Loaded, beside links whose counters hold far more (an imported account).
    Imported,
    Empty,
    Failed,
    Unsupported,
    /// Loaded, and the account had orphan visits.
    Orphans,
    /// Loaded, and the link's rules sent some of its clicks.
    Rules,
}

/// `stats` with clicks sent by a redirect rule and by the targeting, the rest by the URL.
fn with_rules(mut stats: Stats) -> Stats {
    let v = |value: Option<&str>, clicks| ValueCount {
        value: value.map(str::to_owned),
        clicks,
    };
    for b in &mut stats.breakdowns {
        if b.dimension == Dimension::Rule {
            b.top = vec![
                v(None, 783),
                v(Some("rule 1 language"), 310),
                v(Some("country DE"), 120),
            ];
        }
    }
    stats
}

/// The account's orphan visits over `query`'s period: none, or a scan for a login page.
fn orphans(query: &StatsQuery, some: bool) -> OrphanStats {
    let period = Period::resolve(query.period, now(), &jiff::tz::TimeZone::UTC, None).unwrap();
    let v = |value: &str, clicks| ValueCount {
        value: Some(value.to_owned()),
        clicks,
    };
    let (kinds, paths) = if some {
        (
            vec![v("other_path", 212), v("unknown_alias", 37), v("root", 9)],
            vec![
                v("/wp-login.php", 180),
                v("/.env", 32),
                v("/sprnig", 21),
                v("/", 9),
                v("other", 16),
            ],
        )
    } else {
        (vec![], vec![])
    };
    OrphanStats {
        from: period.from,
        to: period.to,
        interval: period.interval,
        total: kinds.iter().map(|k| k.clicks).sum(),
        timeline: vec![],
        kinds,
        paths,
        referrers: vec![],
        countries: vec![],
    }
}

fn values(d: Dimension) -> Vec<ValueCount> {
    let v = |value: Option<&str>, clicks| ValueCount {
        value: value.map(str::to_owned),
        clicks,
    };
    match d {
        Dimension::Country => vec![
            v(Some("DE"), 412),
            v(Some("US"), 301),
            v(Some("FR"), 118),
            v(Some("NL"), 64),
            v(None, 21),
            v(Some("LU"), 3),
        ],
        Dimension::Platform => vec![
            v(Some("iOS"), 398),
            v(Some("Android"), 377),
            v(Some("Windows"), 141),
        ],
        Dimension::Browser => vec![
            v(Some("Safari"), 402),
            v(Some("Chrome"), 455),
            v(Some("Firefox"), 59),
        ],
        Dimension::Referrer => vec![
            v(Some("t.co"), 310),
            v(None, 288),
            v(Some("news.ycombinator.com"), 190),
            v(Some("www.instagram.com"), 128),
        ],
        Dimension::Language => vec![v(Some("de"), 420), v(Some("en"), 380), v(Some("fr"), 116)],
        // Set by the test that shows them.
        Dimension::Rule => vec![],
    }
}

fn stats(query: &StatsQuery, empty: bool) -> Stats {
    let period = Period::resolve(query.period, now(), &jiff::tz::TimeZone::UTC, None).unwrap();
    let timeline: Vec<Bucket> = period
        .buckets
        .iter()
        .enumerate()
        .map(|(i, &start)| Bucket {
            start,
            clicks: if empty {
                0
            } else {
                (i as u64 * 7 + 11) % 53 + i as u64
            },
        })
        .collect();
    let total = timeline.iter().map(|b| b.clicks).sum();
    Stats {
        scope: query.scope.clone(),
        from: period.from,
        to: period.to,
        interval: period.interval,
        total,
        previous: period
            .previous
            .map(|_| if empty { 0 } else { total * 9 / 10 }),
        timeline,
        breakdowns: Dimension::ALL
            .into_iter()
            .map(|d| Breakdown {
                dimension: d,
                top: if empty { vec![] } else { values(d) },
                other: if empty || d == Dimension::Rule { 0 } else { 5 },
            })
            .collect(),
        top_links: (!matches!(query.scope, StatsScope::Link(_))).then(|| {
            if empty {
                return vec![];
            }
            ["spring", "spring-ig", "lookbook", "get-app"]
                .iter()
                .enumerate()
                .map(|(i, alias)| TopLink {
                    id: i as i64 + 7,
                    alias: (*alias).to_owned(),
                    url: format!("https://shop.example.com/{alias}"),
                    clicks: total * (4 - i as u64) / 12,
                })
                .collect()
        }),
    }
}

/// Answers every queued command; stats questions as `answer` says.
fn settle(app: &mut App, answer: Answer) {
    loop {
        let commands = app.take_commands();
        if commands.is_empty() {
            return;
        }
        for command in commands {
            let msg = match command {
                Command::FetchLinks { req, query } => Msg::LinksPage {
                    req,
                    page: query.page,
                    result: Ok(Page::new(vec![link()], query.page, query.per_page, 1)),
                },
                Command::FetchSpaces { req } => Msg::Spaces {
                    req,
                    result: Ok(vec![space()]),
                },
                Command::FetchTags { req } => Msg::Tags {
                    req,
                    result: Ok(Vec::new()),
                },
                Command::FetchDomains { req } => Msg::Domains {
                    req,
                    result: Ok(vec![]),
                },
                Command::FetchStats { req, query } => {
                    let result = match answer {
                        Answer::None => continue,
                        Answer::Loaded | Answer::Imported | Answer::Orphans => {
                            Ok(stats(&query, false))
                        }
                        Answer::Rules => Ok(with_rules(stats(&query, false))),
                        Answer::Empty => Ok(stats(&query, true)),
                        Answer::Failed => Err(Error::Unavailable(
                            "cannot reach http://links.example.com: connection refused".into(),
                        )),
                        Answer::Unsupported => Err(Error::Unsupported(
                            "https://phpshort.example offers no statistics (its API has no \
                             /api/v1/stats)"
                                .into(),
                        )),
                    };
                    Msg::Stats { req, result }
                }
                Command::FetchOrphans { req, query } => match answer {
                    Answer::None => continue,
                    answer => Msg::Orphans {
                        req,
                        result: Ok(orphans(&query, answer == Answer::Orphans)),
                    },
                },
                // An empty history beside links that counted millions (an imported account);
                // elsewhere the backend cannot tell, as a remote server cannot.
                Command::FetchCounted { req, scope } => Msg::Counted {
                    req,
                    scope,
                    result: Ok(
                        matches!(answer, Answer::Empty | Answer::Imported).then_some(2_300_000)
                    ),
                },
                other => panic!("unexpected command {other:?}"),
            };
            app.update(msg);
        }
    }
}

/// The view of `scope` (`link`, `space` or `account`) after the backend answered.
fn opened(scope: &str, answer: Answer, width: u16, height: u16) -> App {
    opened_in(ThemeName::Mono, scope, answer, width, height)
}

pub(in crate::tui) fn opened_in(
    theme: ThemeName,
    scope: &str,
    answer: Answer,
    width: u16,
    height: u16,
) -> App {
    let mut app = App::new(
        crate::tui::app::AppConfig {
            theme: Theme::new(theme),
            ..config()
        },
        Arc::new(FixedClock::new(now())),
        Rect::new(0, 0, width, height),
    );
    settle(&mut app, answer);
    match scope {
        "link" => press(&mut app, KeyCode::Char('S')),
        "space" => {
            press(&mut app, KeyCode::Tab);
            press(&mut app, KeyCode::Char('S'));
        }
        "account" => press(&mut app, KeyCode::Char('T')),
        _ => {}
    }
    settle(&mut app, answer);
    app
}

#[test]
fn every_scope_and_state_at_both_sizes() {
    let states = [
        ("loading", Answer::None),
        ("loaded", Answer::Loaded),
        ("empty", Answer::Empty),
        ("error", Answer::Failed),
    ];
    for scope in ["link", "space", "account"] {
        for (state, answer) in states {
            for (w, h) in [(100, 30), (80, 24)] {
                let app = opened(scope, answer, w, h);
                insta::assert_snapshot!(
                    format!("stats_{scope}_{state}_{w}x{h}"),
                    screen(&app, w, h)
                );
            }
        }
    }
}

/// The dashboard says how many requests no link answered, and Tab brings in their kinds and
/// paths; a period without any shows neither (the other snapshots).
#[test]
fn the_dashboard_shows_orphan_visits() {
    for (w, h) in [(100, 30), (80, 24)] {
        let mut app = opened("account", Answer::Orphans, w, h);
        let first = screen(&app, w, h);
        assert!(first.contains("258 orphan visits"), "{first}");
        for _ in 0..6 {
            press(&mut app, KeyCode::Tab);
        }
        let screen = screen(&app, w, h);
        for said in [
            "Orphan visits",
            "unknown alias",
            "Unanswered paths",
            "/wp-login.php",
        ] {
            assert!(screen.contains(said), "{said} in {screen}");
        }
        insta::assert_snapshot!(format!("stats_account_orphans_{w}x{h}"), screen);
    }
    // A link's traffic has no orphans, even after the dashboard's.
    let mut app = opened("account", Answer::Orphans, 100, 30);
    press(&mut app, KeyCode::Enter);
    settle(&mut app, Answer::Orphans);
    let link = screen(&app, 100, 30);
    assert!(link.contains("Traffic of link"), "{link}");
    assert!(!link.contains("orphan"), "{link}");
}

/// A link whose rules sent some of its clicks shows by which, beside the link's URL; one
/// without (every other snapshot) shows no such panel.
#[test]
fn a_links_traffic_says_which_rule_sent_its_clicks() {
    for (w, h) in [(100, 30), (80, 24)] {
        let mut app = opened("link", Answer::Rules, w, h);
        for _ in 0..5 {
            press(&mut app, KeyCode::Tab);
        }
        let screen = screen(&app, w, h);
        for said in ["Sent by", "rule 1 language", "country DE", "the link's URL"] {
            assert!(screen.contains(said), "{said} in {screen}");
        }
        insta::assert_snapshot!(format!("stats_link_sent_by_rules_{w}x{h}"), screen);
    }
}

#[test]
fn a_server_without_statistics_says_so() {
    for (w, h) in [(100, 30), (80, 24)] {
        let app = opened("link", Answer::Unsupported, w, h);
        insta::assert_snapshot!(format!("stats_unsupported_{w}x{h}"), screen(&app, w, h));
    }
}

#[test]
fn other_periods_and_the_panels_tab_brings_in() {
    let mut app = opened("account", Answer::Loaded, 80, 24);
    // 30 days → 90 days → 12 months.
    press(&mut app, KeyCode::Char('p'));
    press(&mut app, KeyCode::Char('p'));
    settle(&mut app, Answer::Loaded);
    insta::assert_snapshot!("stats_account_12m_80x24", screen(&app, 80, 24));
    // → all time → 24 hours.
    press(&mut app, KeyCode::Char('p'));
    press(&mut app, KeyCode::Char('p'));
    settle(&mut app, Answer::Loaded);
    insta::assert_snapshot!("stats_account_24h_80x24", screen(&app, 80, 24));
    for _ in 0..4 {
        press(&mut app, KeyCode::Tab);
    }
    insta::assert_snapshot!(
        "stats_account_referrers_in_view_80x24",
        screen(&app, 80, 24)
    );
    press(&mut app, KeyCode::Char('['));
    insta::assert_snapshot!("stats_account_loading_earlier_80x24", screen(&app, 80, 24));
}

#[test]
fn after_a_server_said_it_has_no_statistics_it_is_not_asked_again() {
    let mut app = opened("link", Answer::Unsupported, 100, 30);
    press(&mut app, KeyCode::Esc);
    assert!(!app.stats_is_open());
    press(&mut app, KeyCode::Char('T'));
    assert!(
        app.take_commands().is_empty(),
        "no question goes to the server again"
    );
    assert!(!app.stats_is_open());
    let screen = screen(&app, 100, 30);
    assert!(
        screen.contains("This server offers no statistics"),
        "{screen}"
    );
}

/// Each theme's colours on the screens people spend their time in: the list, a form, the
/// Stats view and the QR code, at 80×24 (styles included, see `styled_screen`).
#[test]
fn every_theme_on_the_list_a_form_the_stats_and_the_qr_code() {
    for theme in [ThemeName::Dark, ThemeName::Light, ThemeName::Mono] {
        let name = theme.to_string();
        let with_key = |key: Option<char>| {
            let mut app = opened_in(theme, "list", Answer::Loaded, 80, 24);
            if let Some(key) = key {
                press(&mut app, KeyCode::Char(key));
            }
            styled_screen(&app, 80, 24)
        };
        insta::assert_snapshot!(format!("theme_{name}_list"), with_key(None));
        insta::assert_snapshot!(format!("theme_{name}_form"), with_key(Some('n')));
        insta::assert_snapshot!(format!("theme_{name}_qr"), with_key(Some('Q')));
        let stats = opened_in(theme, "link", Answer::Loaded, 80, 24);
        insta::assert_snapshot!(format!("theme_{name}_stats"), styled_screen(&stats, 80, 24));
    }
}

/// On a wide screen the chart's bars are wider than a column, with room between them; a share
/// under half a percent reads "<1%", not "0%".
#[test]
fn wide_bars_and_small_shares() {
    let app = opened("account", Answer::Loaded, 200, 50);
    let text = screen(&app, 200, 50);
    let base = text
        .lines()
        .find(|l| l.contains("│0 ") && l.contains('█'))
        .expect("the chart's bottom row");
    let bars: Vec<usize> = base
        .split(|c: char| c != '█')
        .map(|run| run.chars().count())
        .filter(|n| *n > 0)
        .collect();
    assert!(bars.len() >= 20, "a bar a day: {base}");
    assert!(
        bars.iter().all(|w| *w >= 2),
        "bars, not lines: {bars:?}\n{base}"
    );
    assert!(
        base.contains("█ █") || base.contains("█  █"),
        "apart: {base}"
    );
    assert!(text.contains("<1%"), "{text}");
    assert!(!text.contains("   0%"), "{text}");
}

/// A space and the account whose links counted clicks the history has no date for say so, as
/// a link does: the sum of their links' counters arrives on its own, asked for once.
#[test]
fn a_space_and_the_account_say_their_clicks_in_all() {
    for scope in ["space", "account"] {
        let mut app = opened(scope, Answer::Empty, 100, 30);
        let text = screen(&app, 100, 30);
        assert!(text.contains("0 clicks"), "{text}");
        assert!(text.contains("2,300,000 in all"), "{scope}: {text}");
        press(&mut app, KeyCode::Char('p'));
        let asked: Vec<Command> = app.take_commands();
        assert!(
            asked
                .iter()
                .all(|c| !matches!(c, Command::FetchCounted { .. })),
            "{scope}: asked again {asked:?}"
        );
    }
}

/// On a narrow screen the summary line gives up the period before's count, then the dates,
/// before the clicks in all: never cut in the middle of a part.
#[test]
fn a_narrow_summary_keeps_the_clicks_in_all() {
    let app = opened("account", Answer::Imported, 80, 24);
    let text = screen(&app, 80, 24);
    let summary = text.lines().nth(2).unwrap();
    assert!(summary.contains("2,300,000 in all"), "{text}");
    assert!(!summary.contains("period before ("), "{summary}");
    let wide = opened("account", Answer::Imported, 160, 30);
    let text = screen(&wide, 160, 30);
    let summary = text.lines().nth(2).unwrap();
    assert!(
        summary.contains("on the period before (") && summary.contains("2,300,000 in all"),
        "{summary}"
    );
}

/// A link whose clicks the history has no date for (imported, or counted before it was kept)
/// says how many it counted in all, and over all time how many of them have no date, instead
/// of a bare "0 clicks".
#[test]
fn clicks_without_a_date_are_said() {
    let mut app = opened("link", Answer::Empty, 100, 30);
    let thirty_days = screen(&app, 100, 30);
    assert!(thirty_days.contains("0 clicks"), "{thirty_days}");
    assert!(thirty_days.contains("1,204 in all"), "{thirty_days}");
    for _ in 0..3 {
        press(&mut app, KeyCode::Char('p'));
        settle(&mut app, Answer::Empty);
    }
    let all_time = screen(&app, 100, 30);
    assert!(
        all_time.contains("[ all ]") || all_time.contains(" all "),
        "{all_time}"
    );
    assert!(
        all_time.contains("1,204 in all, 1,204 of them with no date"),
        "{all_time}"
    );
}
