//! Screen snapshots of every state, rendered from domain values with a fixed clock. The app's
//! commands are answered here from a list in memory, so each snapshot shows the very state the
//! runtime would reach with those answers.

use std::sync::Arc;
use std::time::{Duration, Instant};

use jiff::{SignedDuration, Timestamp};
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use ratatui::crossterm::event::{Event, KeyCode, KeyEvent, KeyModifiers};
use ratatui::layout::Rect;

use super::app::{App, AppConfig};
use super::keys::KeyMap;
use super::msg::{Command, Msg};
use super::theme::{Theme, ThemeName};
use crate::backend::BulkAction;
use crate::domain::{
    Color, Domain, Error, FixedClock, Link, Page, SearchBy, Sort, Space, TargetRule, TargetType,
};

fn now() -> Timestamp {
    "2026-11-22T12:00:00Z".parse().unwrap()
}

fn space(id: i64, name: &str, color: u8, links: u64) -> Space {
    Space {
        id,
        owner_id: 1,
        name: name.into(),
        color: Color::new(color).unwrap(),
        links: Some(links),
        created_at: now() - SignedDuration::from_hours(24 * 30),
        updated_at: now() - SignedDuration::from_hours(24 * 30),
    }
}

fn link(id: i64, alias: &str, url: &str, clicks: u64) -> Link {
    let created = now() - SignedDuration::from_hours(24 * (40 - id));
    Link {
        id,
        alias: alias.into(),
        url: url.into(),
        short_url: format!("http://127.0.0.1:8080/{alias}"),
        title: Some(url.trim_start_matches("https://").into()),
        clicks,
        created_at: created,
        updated_at: created,
        ..Link::example()
    }
}

struct World {
    links: Vec<Link>,
    spaces: Vec<Space>,
    domains: Vec<Domain>,
    /// Answer link pages with this error instead.
    links_error: Option<Error>,
    /// Pretend the list holds this many links (rows beyond `links` are made up).
    total: Option<u64>,
    /// Count them as PostgreSQL does a search: up to the bound (or the page's end) and one more.
    bounded: bool,
    trash: Vec<crate::backend::Trashed>,
    /// What the Live pane's feed brings, oldest first.
    live: Vec<crate::domain::Visit>,
}

fn world() -> World {
    let launch = space(1, "Launch", 4, 3);
    let docs = space(2, "Docs", 5, 2);
    let mut links = vec![
        link(1, "x7k2p", "https://example.com/landing", 42),
        link(
            2,
            "spring-sale",
            "https://shop.example.com/sale/spring?utm_source=mail",
            1_204,
        ),
        link(3, "docs", "https://docs.example.org/getting-started", 310),
        link(4, "old-promo", "https://example.com/promo/2025", 9),
        link(5, "beta", "https://beta.example.net/signup", 0),
        link(
            6,
            "q1report",
            "https://files.example.com/reports/q1.pdf",
            77,
        ),
    ];
    links[0].space = Some(launch.clone());
    links[0].target_type = TargetType::Geo;
    links[0].geo = vec![
        TargetRule {
            key: "US".into(),
            value: "https://example.com/us".into(),
        },
        TargetRule {
            key: "DE".into(),
            value: "https://example.com/de".into(),
        },
        TargetRule {
            key: "FR".into(),
            value: "https://example.com/fr".into(),
        },
    ];
    links[0].password = true;
    links[0].public = true;
    links[0].ends_at = Some(now() + SignedDuration::from_hours(72));
    links[1].space = Some(launch.clone());
    links[2].space = Some(docs.clone());
    links[3].ends_at = Some(now() - SignedDuration::from_hours(24));
    links[3].expiration_url = Some("https://example.com/over".into());
    links[4].disabled = true;
    links[4].space = Some(launch);
    links[5].expiration_clicks = 100;
    links[5].space = Some(docs.clone());
    World {
        links,
        spaces: vec![docs, space(3, "Press kit", 1, 0), space(1, "Launch", 4, 3)],
        domains: vec![Domain {
            id: 1,
            owner_id: 1,
            name: "https://sho.rt".into(),
            created_at: now(),
            updated_at: now(),
            settings: Some(Default::default()),
        }],
        links_error: None,
        total: None,
        bounded: false,
        trash: Vec::new(),
        live: Vec::new(),
    }
}

pub(super) fn config() -> AppConfig {
    AppConfig {
        profile: "default".into(),
        location: "local ~/.local/share/linkdeck/linkdeck.db".into(),
        theme: Theme::new(ThemeName::Mono),
        keys: KeyMap::default(),
        mouse: false,
        timezone: jiff::tz::TimeZone::UTC,
        has_trash: true,
        refresh_every: None,
        read_only: false,
        columns: crate::config::Column::ALL.to_vec(),
    }
}

fn app(width: u16, height: u16) -> App {
    App::new(
        config(),
        Arc::new(FixedClock::new(now())),
        Rect::new(0, 0, width, height),
    )
}

/// Answers every queued command the way a backend holding `world` would.
fn answer(app: &mut App, world: &World) {
    loop {
        let commands = app.take_commands();
        if commands.is_empty() {
            return;
        }
        for command in commands {
            let msg = match command {
                Command::FetchLinks { req, query } => {
                    let result = match &world.links_error {
                        Some(e) => Err(e.clone()),
                        None => Ok(links_page(world, &query)),
                    };
                    Msg::LinksPage {
                        req,
                        page: query.page,
                        result,
                    }
                }
                Command::FetchSpaces { req } => Msg::Spaces {
                    req,
                    result: Ok(world.spaces.clone()),
                },
                Command::FetchTags { req } => Msg::Tags {
                    req,
                    result: Ok(Vec::new()),
                },
                Command::FetchDomains { req } => Msg::Domains {
                    req,
                    result: Ok(world.domains.clone()),
                },
                Command::FetchWebhooks { req } => Msg::Webhooks {
                    req,
                    result: Ok(Some(webhooks())),
                    held: None,
                },
                Command::FetchTrash { req } => Msg::Trash {
                    req,
                    result: Ok(Some(Page::new(
                        world.trash.clone(),
                        1,
                        100,
                        world.trash.len() as u64,
                    ))),
                },
                Command::FollowVisits { req } => {
                    for visit in &world.live {
                        app.update(Msg::LiveVisit {
                            req,
                            result: Ok(visit.clone()),
                        });
                    }
                    continue;
                }
                Command::StopVisits => continue,
                // Left in flight: the screen shows the work going on.
                Command::Bulk { .. } | Command::Undo { .. } => continue,
                other => panic!("unexpected command {other:?}"),
            };
            app.update(msg);
        }
    }
}

fn links_page(world: &World, q: &crate::domain::LinkQuery) -> Page<Link> {
    if let Some(total) = world.total {
        let start = u64::from(q.page - 1) * u64::from(q.per_page);
        let items = (start..(start + u64::from(q.per_page)).min(total))
            .map(|i| {
                let n = i64::try_from(i).unwrap() + 1;
                link(
                    n.min(39),
                    &format!("l{n}"),
                    &format!("https://example.com/{n}"),
                    i,
                )
            })
            .collect();
        let limit = crate::domain::COUNT_BOUND.max(start + u64::from(q.per_page)) + 1;
        let total = match world.bounded && total >= limit {
            true => crate::domain::Total::at_least(limit),
            false => crate::domain::Total::exact(total),
        };
        return Page::new(items, q.page, q.per_page, total);
    }
    let mut rows: Vec<Link> = world
        .links
        .iter()
        .filter(|l| q.status.admits(l.status(now())))
        .filter(|l| q.space.admits(l.space.as_ref().map(|s| s.id)))
        .filter(|l| {
            q.domain
                .is_none_or(|id| l.domain.as_ref().map(|d| d.id) == Some(id))
        })
        .filter(|l| {
            q.search_term().is_none_or(|term| {
                let field = match q.by {
                    SearchBy::Title => l.title.clone().unwrap_or_default(),
                    SearchBy::Alias => l.alias.clone(),
                    SearchBy::Url => l.url.clone(),
                };
                field.to_lowercase().contains(&term.to_lowercase())
            })
        })
        .cloned()
        .collect();
    match q.sort {
        Sort::Desc => rows.sort_by_key(|l| std::cmp::Reverse(l.id)),
        Sort::Asc => rows.sort_by_key(|l| l.id),
        Sort::Max => rows.sort_by_key(|l| (std::cmp::Reverse(l.clicks), std::cmp::Reverse(l.id))),
        Sort::Min => rows.sort_by_key(|l| (l.clicks, l.id)),
    }
    let total = rows.len() as u64;
    Page::new(rows, q.page, q.per_page, total)
}

pub(super) fn press(app: &mut App, code: KeyCode) {
    let modifiers = match code {
        KeyCode::Char(c) if c.is_ascii_uppercase() => KeyModifiers::SHIFT,
        _ => KeyModifiers::NONE,
    };
    app.handle_event(Event::Key(KeyEvent::new(code, modifiers)));
}

fn keys(app: &mut App, world: &World, text: &str) {
    for c in text.chars() {
        press(app, KeyCode::Char(c));
        answer(app, world);
    }
}

pub(super) fn screen(app: &App, width: u16, height: u16) -> String {
    let mut terminal = Terminal::new(TestBackend::new(width, height)).unwrap();
    terminal.draw(|f| app.render(f)).unwrap();
    terminal.backend().to_string()
}

/// The screen with its styles: each line's text, then under it the runs of cells drawn in
/// other than the terminal's own style (`x-x fg/bg modifiers`), so that a theme's colours are
/// part of what a snapshot holds.
pub(super) fn styled_screen(app: &App, width: u16, height: u16) -> String {
    let mut terminal = Terminal::new(TestBackend::new(width, height)).unwrap();
    terminal.draw(|f| app.render(f)).unwrap();
    let buf = terminal.backend().buffer();
    let mut out = String::new();
    for y in 0..height {
        let cells: Vec<&ratatui::buffer::Cell> = (0..width).map(|x| &buf[(x, y)]).collect();
        out.extend(cells.iter().map(|c| c.symbol()));
        out.push('\n');
        let key = |c: &ratatui::buffer::Cell| (c.fg, c.bg, c.modifier);
        let mut x = 0;
        while x < cells.len() {
            let style = key(cells[x]);
            let end = (x..cells.len())
                .find(|&e| key(cells[e]) != style)
                .unwrap_or(cells.len());
            if style != key(&ratatui::buffer::Cell::EMPTY) {
                let (fg, bg, modifier) = style;
                out.push_str(&format!("  {x}-{} {fg:?}/{bg:?} {modifier:?}\n", end - 1));
            }
            x = end;
        }
    }
    out
}

fn loaded(width: u16, height: u16, world: &World) -> App {
    let mut app = app(width, height);
    answer(&mut app, world);
    app
}

/// The list of the usual world in `theme`, answered.
pub(super) fn loaded_in(theme: ThemeName, width: u16, height: u16) -> App {
    let mut app = App::new(
        AppConfig {
            theme: Theme::new(theme),
            ..config()
        },
        Arc::new(FixedClock::new(now())),
        Rect::new(0, 0, width, height),
    );
    answer(&mut app, &world());
    app
}

macro_rules! snap {
    ($name:literal, $app:expr, $w:expr, $h:expr) => {
        insta::assert_snapshot!($name, screen(&$app, $w, $h));
    };
}

#[test]
fn links_loading() {
    let app = app(100, 30);
    snap!("links_loading_100x30", app, 100, 30);
}

#[test]
fn links_loaded_at_both_sizes() {
    let w = world();
    snap!("links_loaded_100x30", loaded(100, 30, &w), 100, 30);
    snap!("links_loaded_80x24", loaded(80, 24, &w), 80, 24);
}

#[test]
fn links_empty_tells_a_new_user_what_to_do() {
    let w = World {
        links: vec![],
        spaces: vec![],
        ..world()
    };
    snap!("links_empty_new_user", loaded(100, 30, &w), 100, 30);
}

#[test]
fn links_empty_after_filtering_offers_to_clear() {
    let w = world();
    let mut app = loaded(100, 30, &w);
    press(&mut app, KeyCode::Char('/'));
    keys(&mut app, &w, "nothing-like-this");
    press(&mut app, KeyCode::Enter);
    answer(&mut app, &w);
    snap!("links_empty_filtered", app, 100, 30);
}

#[test]
fn links_error_offers_retry() {
    let w = World {
        links_error: Some(Error::Unavailable("database is locked".into())),
        ..world()
    };
    snap!("links_error_retry", loaded(100, 30, &w), 100, 30);
}

/// While a search is asked, the rows from before stay on screen (dimmed, the pane saying it
/// is searching) instead of blanking, until its answer replaces them.
#[test]
fn a_search_keeps_the_old_rows_until_its_answer() {
    let w = world();
    let mut app = loaded(100, 30, &w);
    let before = screen(&app, 100, 30);
    let first_alias = &w.links.iter().max_by_key(|l| l.id).unwrap().alias;
    assert!(before.contains(first_alias.as_str()), "{before}");
    press(&mut app, KeyCode::Char('/'));
    press(&mut app, KeyCode::Char('z'));
    app.on_time(Instant::now() + Duration::from_secs(5));
    let asked = app.take_commands();
    assert!(
        asked
            .iter()
            .any(|c| matches!(c, Command::FetchLinks { .. })),
        "{asked:?}"
    );
    let waiting = screen(&app, 100, 30);
    assert!(waiting.contains(first_alias.as_str()), "{waiting}");
    assert!(waiting.contains("searching"), "{waiting}");
    assert!(!waiting.contains("Loading links"), "{waiting}");
}

#[test]
fn search_field_while_typing() {
    let w = world();
    let mut app = loaded(100, 30, &w);
    press(&mut app, KeyCode::Char('/'));
    keys(&mut app, &w, "exam");
    // Not yet applied: the pause has not passed, the list still shows everything.
    snap!("filter_search_typing", app, 100, 30);
}

#[test]
fn search_kept_with_enter_by_url() {
    let w = world();
    let mut app = loaded(100, 30, &w);
    press(&mut app, KeyCode::Char('b'));
    press(&mut app, KeyCode::Char('b'));
    answer(&mut app, &w);
    press(&mut app, KeyCode::Char('/'));
    keys(&mut app, &w, "example.com");
    press(&mut app, KeyCode::Enter);
    answer(&mut app, &w);
    snap!("filter_search_by_url_kept", app, 100, 30);
}

#[test]
fn status_tabs() {
    let w = world();
    for (key, name) in [('2', "active"), ('3', "expired"), ('4', "disabled")] {
        let mut app = loaded(100, 30, &w);
        press(&mut app, KeyCode::Char(key));
        answer(&mut app, &w);
        insta::assert_snapshot!(format!("filter_status_{name}"), screen(&app, 100, 30));
    }
}

#[test]
fn sort_most_clicks() {
    let w = world();
    let mut app = loaded(100, 30, &w);
    press(&mut app, KeyCode::Char('o'));
    press(&mut app, KeyCode::Char('o'));
    answer(&mut app, &w);
    snap!("filter_sort_most_clicks", app, 100, 30);
}

#[test]
fn space_picker_and_space_filter() {
    let w = world();
    let mut app = loaded(100, 30, &w);
    press(&mut app, KeyCode::Char('f'));
    press(&mut app, KeyCode::Char('j'));
    press(&mut app, KeyCode::Char('j'));
    snap!("picker_space", app, 100, 30);
    press(&mut app, KeyCode::Enter);
    answer(&mut app, &w);
    snap!("filter_space_docs", app, 100, 30);
}

/// "no space", the picker's second line, lists the links in none and says so in the bar; the
/// picker opens on it again.
#[test]
fn no_space_filter() {
    let w = world();
    let mut app = loaded(100, 30, &w);
    press(&mut app, KeyCode::Char('f'));
    press(&mut app, KeyCode::Char('j'));
    press(&mut app, KeyCode::Enter);
    answer(&mut app, &w);
    snap!("filter_no_space", app, 100, 30);
    press(&mut app, KeyCode::Char('f'));
    assert!(
        screen(&app, 100, 30).contains("▶ no space"),
        "{}",
        screen(&app, 100, 30)
    );
}

#[test]
fn domain_picker() {
    let w = world();
    let mut app = loaded(100, 30, &w);
    press(&mut app, KeyCode::Char('F'));
    snap!("picker_domain", app, 100, 30);
}

#[test]
fn details_of_an_expired_link_and_hidden_details() {
    let w = world();
    let mut app = loaded(100, 30, &w);
    press(&mut app, KeyCode::Char('j'));
    press(&mut app, KeyCode::Char('j'));
    snap!("details_expired_link", app, 100, 30);
    press(&mut app, KeyCode::Enter);
    snap!("details_hidden", app, 100, 30);
}

#[test]
fn details_of_a_link_with_options_and_previews() {
    let mut w = world();
    // Every link, so the one selected first shows them.
    for link in &mut w.links {
        link.previews = 17;
        link.options = crate::domain::LinkOptions {
            forward_query: false,
            forward_path: true,
            preview_title: Some("Landing".into()),
            ..Default::default()
        };
    }
    let app = loaded(100, 30, &w);
    snap!("details_link_with_options_and_previews", app, 100, 30);
}

#[test]
fn details_of_a_targeted_protected_link() {
    let w = world();
    let mut app = loaded(100, 30, &w);
    press(&mut app, KeyCode::Char('G'));
    snap!("details_targeted_protected_link", app, 100, 30);
}

#[test]
fn confirm_delete() {
    let w = world();
    let mut app = loaded(100, 30, &w);
    press(&mut app, KeyCode::Char('d'));
    snap!("confirm_delete_link", app, 100, 30);
    press(&mut app, KeyCode::Esc);
    assert!(app.take_commands().is_empty(), "cancelling deletes nothing");
}

#[test]
fn help_overlay() {
    let mut app = loaded(100, 30, &world());
    press(&mut app, KeyCode::Char('?'));
    snap!("help_overlay", app, 100, 30);
}

/// A running subscription with a delivery that arrived and one failing, and a stopped one.
fn webhooks() -> Vec<crate::domain::WebhookActivity> {
    use crate::domain::{Delivery, Webhook, WebhookEvent};
    let at = |minutes: i64| now() - SignedDuration::from_mins(minutes);
    let delivery = |id, event: &str, delivered: bool, attempts, error: Option<&str>| Delivery {
        id,
        webhook_id: 1,
        msg_id: format!("msg_{id}"),
        event: event.into(),
        created_at: at(60 - id),
        next_at: (!delivered).then(|| at(-5)),
        attempts,
        delivered_at: delivered.then(|| at(59 - id)),
        last_status: Some(if delivered { 204 } else { 500 }),
        last_error: error.map(str::to_owned),
    };
    let running = Webhook {
        id: 1,
        owner_id: 1,
        url: "https://hooks.example.com/linkdeck".into(),
        events: vec![WebhookEvent::Created, WebhookEvent::Clicked],
        created_at: at(600),
        failures: 2,
        failing_since: Some(at(10)),
        stopped_at: None,
        stopped_reason: None,
        pending: 1,
    };
    let stopped = Webhook {
        id: 2,
        url: "https://old.example.net/in".into(),
        events: vec![WebhookEvent::Deleted],
        failures: 10,
        stopped_at: Some(at(30)),
        stopped_reason: Some(
            "stopped after 10 failed deliveries in a row since 2026-03-01T09:00:00Z; \
             the last: HTTP 404 Not Found"
                .into(),
        ),
        ..running.clone()
    };
    vec![
        (
            running,
            vec![
                delivery(
                    12,
                    "link.clicked",
                    false,
                    2,
                    Some("HTTP 500 Internal Server Error"),
                ),
                delivery(11, "link.created", true, 1, None),
            ],
        ),
        (stopped, Vec::new()),
    ]
}

#[test]
fn webhooks_popup() {
    let world = world();
    let mut app = loaded(100, 30, &world);
    press(&mut app, KeyCode::Char('H'));
    answer(&mut app, &world);
    snap!("webhooks_popup_100x30", app, 100, 30);
    // Any other key than a movement closes it.
    press(&mut app, KeyCode::Esc);
    assert!(app.take_commands().is_empty());
    let mut small = loaded(80, 24, &world);
    press(&mut small, KeyCode::Char('H'));
    answer(&mut small, &world);
    snap!("webhooks_popup_80x24", small, 80, 24);
}

#[test]
fn qr_popup() {
    let mut app = loaded(100, 30, &world());
    press(&mut app, KeyCode::Char('Q'));
    snap!("qr_popup_100x30", app, 100, 30);
    // Any key closes it; nothing was asked of the backend.
    press(&mut app, KeyCode::Esc);
    assert!(app.take_commands().is_empty());
    let mut small = loaded(80, 24, &world());
    press(&mut small, KeyCode::Char('Q'));
    snap!("qr_popup_80x24", small, 80, 24);
}

#[test]
fn toasts() {
    let mut app = loaded(100, 30, &world());
    app.update(Msg::Desktop(Ok(
        "Copied short URL: http://127.0.0.1:8080/beta".into(),
    )));
    snap!("toast_info", app, 100, 30);
    app.update(Msg::Desktop(
        Err("could not run xdg-open: not found".into()),
    ));
    snap!("toast_error", app, 100, 30);
}

#[test]
fn spaces_pane() {
    let w = world();
    let mut app = loaded(100, 30, &w);
    press(&mut app, KeyCode::Tab);
    snap!("spaces_pane", app, 100, 30);
    press(&mut app, KeyCode::Char('G'));
    press(&mut app, KeyCode::Enter);
    answer(&mut app, &w);
    snap!("spaces_enter_opens_links", app, 100, 30);
}

/// The Domains pane lists each domain's fallbacks and robots policy; `e` edits them, and the
/// save goes out as the settings that changed, its answer shown in the pane.
#[test]
fn domains_pane_and_its_form() {
    let mut w = world();
    w.domains.push(Domain {
        id: 2,
        owner_id: 1,
        name: "https://go.example".into(),
        created_at: now(),
        updated_at: now(),
        settings: Some(crate::domain::HostSettings {
            root_url: Some("https://example.com/".into()),
            unknown_url: Some("https://example.com/not-found".into()),
            expired_url: None,
            robots: crate::domain::Robots::Allow,
        }),
    });
    let mut app = loaded(100, 30, &w);
    // Links → Trash → Domains.
    press(&mut app, KeyCode::BackTab);
    press(&mut app, KeyCode::BackTab);
    answer(&mut app, &w);
    snap!("domains_pane_100x30", app, 100, 30);
    snap!("domains_pane_80x24", app, 80, 24);
    press(&mut app, KeyCode::Char('j'));
    press(&mut app, KeyCode::Char('e'));
    snap!("domains_form_100x30", app, 100, 30);
    // Clear the unknown alias's URL, and save.
    press(&mut app, KeyCode::Tab);
    for _ in 0..40 {
        press(&mut app, KeyCode::Backspace);
    }
    ctrl(&mut app, 's');
    let commands = app.take_commands();
    let [Command::Save { req, request }] = commands.as_slice() else {
        panic!("{commands:?}");
    };
    let crate::tui::form::SaveRequest::UpdateDomain(2, input) = request.as_ref() else {
        panic!("{request:?}");
    };
    assert_eq!(input.unknown_url.as_deref(), Some(""));
    assert_eq!(input.root_url, None);
    if let Some(settings) = &mut w.domains[1].settings {
        settings.unknown_url = None;
    }
    app.update(Msg::DomainSaved {
        req: *req,
        result: Ok(w.domains[1].clone()),
    });
    answer(&mut app, &w);
    snap!("domains_pane_after_save", app, 100, 30);
}

#[test]
fn too_small() {
    snap!("too_small_60x15", loaded(60, 15, &world()), 60, 15);
}

/// The row the Links pane's title says the cursor is on.
fn cursor_row(app: &App) -> u64 {
    let text = screen(app, 100, 30);
    let at = text.find(" Links ").expect("the Links title") + " Links ".len();
    let number: String = text[at..]
        .chars()
        .take_while(|c| c.is_ascii_digit() || *c == ',')
        .filter(char::is_ascii_digit)
        .collect();
    number.parse().unwrap()
}

fn ctrl(app: &mut App, c: char) {
    app.handle_event(Event::Key(KeyEvent::new(
        KeyCode::Char(c),
        KeyModifiers::CONTROL,
    )));
}

/// The keys k9s, lazygit and vim users move with: ctrl-f / ctrl-b a page (as pgdn / pgup),
/// ctrl-d / ctrl-u half a page, and h / l between panes.
#[test]
fn vim_style_paging_and_pane_keys() {
    let w = World {
        total: Some(1_000),
        ..world()
    };
    let mut paged = loaded(100, 30, &w);
    press(&mut paged, KeyCode::PageDown);
    answer(&mut paged, &w);
    let page = cursor_row(&paged) - 1;
    assert!(page > 4, "a page is most of the screen: {page}");

    let mut app = loaded(100, 30, &w);
    ctrl(&mut app, 'f');
    answer(&mut app, &w);
    assert_eq!(cursor_row(&app), 1 + page);
    ctrl(&mut app, 'u');
    assert_eq!(cursor_row(&app), 1 + page - page / 2);
    ctrl(&mut app, 'd');
    assert_eq!(cursor_row(&app), 1 + page);
    ctrl(&mut app, 'b');
    assert_eq!(cursor_row(&app), 1);

    press(&mut app, KeyCode::Char('l'));
    answer(&mut app, &w);
    assert!(
        screen(&app, 100, 30).contains("Spaces"),
        "l goes to the next pane"
    );
    let spaces = screen(&app, 100, 30);
    press(&mut app, KeyCode::Char('h'));
    answer(&mut app, &w);
    assert_ne!(screen(&app, 100, 30), spaces, "h goes back");
    assert_eq!(cursor_row(&app), 1);
}

/// Besides the short URL (`y`) and the destination (`Y`), the alias (`A`) and a Markdown link
/// (`M`) are copied.
#[test]
fn the_alias_and_a_markdown_link_are_copied() {
    let w = world();
    let mut app = loaded(100, 30, &w);
    let copied = |app: &mut App, key: char| {
        press(app, KeyCode::Char(key));
        match app.take_commands().as_slice() {
            [Command::Copy { text, what }] => (text.clone(), *what),
            other => panic!("{other:?}"),
        }
    };
    let newest = w.links.iter().max_by_key(|l| l.id).unwrap();
    assert_eq!(copied(&mut app, 'A'), (newest.alias.clone(), "alias"));
    let (markdown, what) = copied(&mut app, 'M');
    assert_eq!(what, "Markdown link");
    assert!(markdown.starts_with('['), "{markdown}");
    assert!(
        markdown.ends_with(&format!("]({})", newest.short_url)),
        "{markdown}"
    );
}

/// Enter on a space shows its links; esc goes back to the Spaces pane and the filter from
/// before.
#[test]
fn esc_backs_out_of_a_spaces_links() {
    let w = world();
    let mut app = loaded(100, 30, &w);
    let all_links = screen(&app, 100, 30);
    press(&mut app, KeyCode::Tab);
    answer(&mut app, &w);
    let spaces_pane = screen(&app, 100, 30);
    press(&mut app, KeyCode::Enter);
    answer(&mut app, &w);
    assert_ne!(screen(&app, 100, 30), spaces_pane, "the space's links");
    press(&mut app, KeyCode::Esc);
    answer(&mut app, &w);
    assert_eq!(screen(&app, 100, 30), spaces_pane, "back where it was");
    press(&mut app, KeyCode::BackTab);
    answer(&mut app, &w);
    assert_eq!(
        screen(&app, 100, 30),
        all_links,
        "no space filter left behind"
    );
}

/// A read-only profile says so in the header, hints at no change, offers none in the
/// palette, and refuses the keys of one with a message instead of opening a form.
#[test]
fn a_read_only_app_offers_no_change_and_refuses_one() {
    let w = world();
    let mut app = app_with(AppConfig {
        read_only: true,
        ..config()
    });
    answer(&mut app, &w);
    let text = screen(&app, 100, 30);
    assert!(text.lines().next().unwrap().contains("read-only"), "{text}");
    let hints = text.lines().last().unwrap();
    assert!(
        !hints.contains("new") && !hints.contains("delete"),
        "{hints}"
    );
    for key in ['n', 'e', 'd', 'x', 'u'] {
        press(&mut app, KeyCode::Char(key));
        assert!(app.take_commands().is_empty(), "{key} asks nothing");
        let text = screen(&app, 100, 30);
        assert!(text.contains("Read-only"), "{key}: {text}");
        assert!(!text.contains("New link"), "{key}: no form: {text}");
    }
    press(&mut app, KeyCode::Char(':'));
    let palette = screen(&app, 100, 30);
    assert!(!palette.contains("new link"), "{palette}");
    assert!(palette.contains("copy short URL"), "{palette}");
}

/// With the mouse on, a click on a pane tab shows that pane, on a status tab filters by it,
/// and on the filter bar does what that filter's key does.
#[test]
fn clicks_on_the_tabs_and_the_filter_bar() {
    let w = world();
    let mut app = app_with(AppConfig {
        mouse: true,
        ..config()
    });
    answer(&mut app, &w);
    let click = |app: &mut App, text: &str, row: u16| {
        click_on(app, text, row);
        answer(app, &w);
        screen_line(app, 1)
    };
    let tabs = click(&mut app, "Spaces", 1);
    assert!(tabs.contains("[Spaces]"), "{tabs}");
    let tabs = click(&mut app, "Expired", 1);
    assert!(
        tabs.contains("[3 Expired]") && tabs.contains("[Links]"),
        "{tabs}"
    );
    assert!(screen(&app, 100, 30).contains("old-promo"));
    assert!(!screen(&app, 100, 30).contains("x7k2p"));
    click(&mut app, "newest", 2);
    assert!(
        screen_line(&app, 2).contains("sort oldest"),
        "{}",
        screen_line(&app, 2)
    );
    click(&mut app, "search", 2);
    press(&mut app, KeyCode::Char('z'));
    assert!(
        screen_line(&app, 2).starts_with("\"/ z "),
        "{}",
        screen_line(&app, 2)
    );
}

/// With the mouse on, a confirm dialog's answers take clicks: "no" closes it, "yes" does it.
#[test]
fn a_confirm_dialog_answers_a_click() {
    let w = world();
    let mut app = app_with(AppConfig {
        mouse: true,
        ..config()
    });
    answer(&mut app, &w);
    let answers_row = |app: &App| {
        let screen = screen(app, 100, 30);
        let row = screen
            .lines()
            .position(|l| l.contains("  yes") && l.contains("  no"))
            .expect("the answers");
        u16::try_from(row).unwrap()
    };
    press(&mut app, KeyCode::Char('d'));
    assert!(screen(&app, 100, 30).contains("Confirm"));
    let row = answers_row(&app);
    click_on(&mut app, "no", row);
    assert!(!screen(&app, 100, 30).contains("Confirm"), "no closes it");
    assert!(app.take_commands().is_empty());
    press(&mut app, KeyCode::Char('d'));
    let row = answers_row(&app);
    click_on(&mut app, "yes", row);
    assert!(
        app.take_commands()
            .iter()
            .any(|c| matches!(c, Command::Bulk { .. })),
        "yes deletes"
    );
}

/// The app at 100×30 with `cfg`.
fn app_with(cfg: AppConfig) -> App {
    App::new(
        cfg,
        Arc::new(FixedClock::new(now())),
        Rect::new(0, 0, 100, 30),
    )
}

/// A left click, with the mouse on, on the first `text` of screen line `row` (at 100×30).
fn click_on(app: &mut App, text: &str, row: u16) {
    let screen = screen(app, 100, 30);
    let line = screen.lines().nth(usize::from(row)).unwrap().to_owned();
    let at = line
        .find(text)
        .unwrap_or_else(|| panic!("{text} in {line}"));
    // The line starts with a quote the screen does not have: this is the word's second cell.
    let column = u16::try_from(line[..at].chars().count()).unwrap();
    app.handle_event(Event::Mouse(ratatui::crossterm::event::MouseEvent {
        kind: ratatui::crossterm::event::MouseEventKind::Down(
            ratatui::crossterm::event::MouseButton::Left,
        ),
        column,
        row,
        modifiers: KeyModifiers::NONE,
    }));
}

/// Line `row` of the screen at 100×30.
fn screen_line(app: &App, row: usize) -> String {
    screen(app, 100, 30).lines().nth(row).unwrap().to_owned()
}

/// `[ui] columns` leaves columns out of the links table; `C` shows or hides one.
#[test]
fn columns_are_chosen_in_the_config_and_toggled_with_c() {
    use crate::config::Column;
    let w = world();
    let mut app = app_with(AppConfig {
        columns: vec![Column::Destination, Column::Clicks, Column::Status],
        ..config()
    });
    answer(&mut app, &w);
    let header = |app: &App| {
        screen(app, 100, 30)
            .lines()
            .find(|l| l.contains("alias"))
            .unwrap()
            .to_owned()
    };
    let before = header(&app);
    assert!(
        before.contains("destination") && before.contains("status"),
        "{before}"
    );
    assert!(
        !before.contains("space") && !before.contains("expires"),
        "{before}"
    );
    press(&mut app, KeyCode::Char('C'));
    let picker = screen(&app, 100, 30);
    assert!(
        picker.contains("✓ destination") && picker.contains("  space"),
        "{picker}"
    );
    // The choices: leave as they are, domain, destination, space.
    for _ in 0..3 {
        press(&mut app, KeyCode::Char('j'));
    }
    press(&mut app, KeyCode::Enter);
    assert!(
        app.take_commands().is_empty(),
        "a column asks the backend nothing"
    );
    let after = header(&app);
    assert!(
        after.contains("space") && !after.contains("expires"),
        "{after}"
    );
}

/// ctrl-e opens the selected link in the editor as TOML; what comes back is saved as an update
/// of the fields that changed, and a mistake opens the editor again with it written at the top.
#[test]
fn a_link_is_edited_in_the_editor_and_mistakes_come_back_in_its_text() {
    let w = world();
    let mut app = loaded(100, 30, &w);
    let opened = |app: &mut App| match app.take_commands().as_slice() {
        [Command::EditText { req, text }] => (*req, text.clone()),
        other => panic!("{other:?}"),
    };
    app.handle_event(Event::Key(KeyEvent::new(
        KeyCode::Char('e'),
        KeyModifiers::CONTROL,
    )));
    let (req, text) = opened(&mut app);
    let newest = w.links.iter().max_by_key(|l| l.id).unwrap();
    assert!(
        text.contains(&format!("alias = \"{}\"", newest.alias)),
        "{text}"
    );
    // A bad URL: the editor opens again, the mistake on top, the rest as typed.
    let bad = text.replace(&newest.url, "javascript:alert(1)");
    app.update(Msg::Edited {
        req,
        result: Ok(bad),
    });
    let (req, again) = opened(&mut app);
    assert!(again.starts_with("# error: url:"), "{again}");
    assert!(again.contains("javascript:alert(1)"), "{again}");
    // Fixed: saved as an update of the URL alone.
    let good = again.replace("javascript:alert(1)", "https://example.com/fixed");
    app.update(Msg::Edited {
        req,
        result: Ok(good),
    });
    match app.take_commands().as_slice() {
        [Command::Save { request, .. }] => match request.as_ref() {
            crate::tui::form::SaveRequest::UpdateLink(id, input) => {
                assert_eq!(*id, newest.id);
                assert_eq!(
                    *input,
                    crate::domain::LinkInput {
                        url: Some("https://example.com/fixed".into()),
                        ..crate::domain::LinkInput::default()
                    }
                );
            }
            other => panic!("{other:?}"),
        },
        other => panic!("{other:?}"),
    }
    // An editor that fails says why, and nothing is saved.
    app.handle_event(Event::Key(KeyEvent::new(
        KeyCode::Char('e'),
        KeyModifiers::CONTROL,
    )));
    let (req, _) = opened(&mut app);
    app.update(Msg::Edited {
        req,
        result: Err("the editor `nano` ended with exit status: 1: nothing was changed".into()),
    });
    assert!(app.take_commands().is_empty());
    assert!(screen(&app, 100, 30).contains("ended with exit status: 1"));
}

/// The clicks column says when the list is in its order, and which way.
#[test]
fn the_sorted_column_shows_its_direction() {
    let w = world();
    let mut app = loaded(100, 30, &w);
    let header = |app: &App| {
        screen(app, 100, 30)
            .lines()
            .find(|l| l.contains("destination"))
            .unwrap()
            .to_owned()
    };
    assert!(!header(&app).contains('▼') && !header(&app).contains('▲'));
    let mut seen = Vec::new();
    for _ in 0..4 {
        press(&mut app, KeyCode::Char('o'));
        answer(&mut app, &w);
        seen.push(header(&app));
    }
    assert!(seen.iter().any(|h| h.contains("clicks ▼")), "{seen:#?}");
    assert!(seen.iter().any(|h| h.contains("clicks ▲")), "{seen:#?}");
}

#[test]
fn bottom_of_a_million_links() {
    let w = World {
        total: Some(1_000_000),
        ..world()
    };
    let mut app = loaded(100, 30, &w);
    press(&mut app, KeyCode::Char('G'));
    let commands = app.take_commands();
    assert_eq!(
        commands.len(),
        1,
        "only the last page is fetched: {commands:?}"
    );
    let Command::FetchLinks { req, query } = &commands[0] else {
        panic!()
    };
    assert_eq!(query.page, 10_000);
    app.update(Msg::LinksPage {
        req: *req,
        page: query.page,
        result: Ok(links_page(&w, query)),
    });
    assert!(app.cached_pages() <= super::MAX_PAGES);
    snap!("links_bottom_of_a_million", app, 100, 30);
}

/// A backend that stopped counting at 10,000: the list says "10,000+", and going to its bottom
/// fetches the last page known of, whose answer knows of the page after it.
#[test]
fn bottom_of_a_list_counted_to_a_bound() {
    let w = World {
        total: Some(1_000_000),
        bounded: true,
        ..world()
    };
    let mut app = loaded(100, 30, &w);
    let shown = screen(&app, 100, 30);
    assert!(shown.contains("Links 1 of 10,000+"), "{shown}");
    assert!(shown.contains("10,000+ links"), "{shown}");
    press(&mut app, KeyCode::Char('G'));
    // The screen spans the last rows of page 100 and row 10,001, page 101's first.
    let commands = app.take_commands();
    let pages: Vec<u32> = commands
        .iter()
        .map(|c| match c {
            Command::FetchLinks { query, .. } => query.page,
            other => panic!("{other:?}"),
        })
        .collect();
    assert_eq!(pages, [100, 101]);
    for command in commands {
        let Command::FetchLinks { req, query } = command else {
            panic!()
        };
        app.update(Msg::LinksPage {
            req,
            page: query.page,
            result: Ok(links_page(&w, &query)),
        });
    }
    let shown = screen(&app, 100, 30);
    assert!(shown.contains("Links 10,001 of 10,100+"), "{shown}");
    snap!("links_bottom_of_a_bounded_count", app, 100, 30);
}

#[test]
fn link_actions_queue_commands() {
    let w = world();
    let mut app = loaded(100, 30, &w);
    press(&mut app, KeyCode::Char('y'));
    press(&mut app, KeyCode::Char('Y'));
    press(&mut app, KeyCode::Char('x'));
    let commands = app.take_commands();
    assert_eq!(
        commands[0],
        Command::Copy {
            text: "http://127.0.0.1:8080/q1report".into(),
            what: "short URL"
        }
    );
    assert_eq!(
        commands[1],
        Command::Copy {
            text: "https://files.example.com/reports/q1.pdf".into(),
            what: "destination"
        }
    );
    assert!(
        matches!(&commands[2], Command::Bulk { selection, action, .. }
            if selection.ids.iter().eq([6].iter())
            && matches!(action.as_ref(), BulkAction::Update(input) if input.disabled.as_deref() == Some("1")))
    );
}

#[test]
fn stale_page_answers_are_dropped() {
    let w = world();
    let mut app = app(100, 30);
    let first = app.take_commands();
    // The question changes before the first answer comes.
    press(&mut app, KeyCode::Char('3'));
    for command in first {
        if let Command::FetchLinks { req, query } = command {
            app.update(Msg::LinksPage {
                req,
                page: 1,
                result: Ok(links_page(&w, &query)),
            });
        }
    }
    assert!(
        app.selected_link().is_none(),
        "the old answer was not shown"
    );
    answer(&mut app, &w);
    assert_eq!(
        app.selected_link().map(|l| l.alias.as_str()),
        Some("old-promo")
    );
}

#[test]
fn mouse_scrolls_and_clicks_only_when_enabled() {
    use ratatui::crossterm::event::{MouseButton, MouseEvent, MouseEventKind};
    let w = world();
    let mouse = |kind, row| {
        Event::Mouse(MouseEvent {
            kind,
            column: 10,
            row,
            modifiers: KeyModifiers::NONE,
        })
    };
    let mut off = loaded(100, 30, &w);
    off.handle_event(mouse(MouseEventKind::ScrollDown, 6));
    assert_eq!(
        off.selected_link().map(|l| l.id),
        Some(6),
        "mouse is opt-in"
    );

    let cfg = AppConfig {
        mouse: true,
        ..config()
    };
    let mut on = App::new(
        cfg,
        Arc::new(FixedClock::new(now())),
        Rect::new(0, 0, 100, 30),
    );
    answer(&mut on, &w);
    on.handle_event(mouse(MouseEventKind::ScrollDown, 6));
    assert_eq!(on.selected_link().map(|l| l.id), Some(5));
    // Row 5 of the screen is the first link row (header, tabs, filter, border, column names).
    on.handle_event(mouse(MouseEventKind::Down(MouseButton::Left), 5 + 3));
    assert_eq!(on.selected_link().map(|l| l.alias.as_str()), Some("docs"));
}

#[test]
fn help_and_hints_follow_the_live_key_map() {
    let overrides = [("quit".to_owned(), "ctrl-q".to_owned())].into();
    let cfg = AppConfig {
        keys: KeyMap::with_overrides(&overrides).unwrap(),
        ..config()
    };
    let mut app = App::new(
        cfg,
        Arc::new(FixedClock::new(now())),
        Rect::new(0, 0, 100, 30),
    );
    answer(&mut app, &world());
    assert!(screen(&app, 100, 30).contains("ctrl-q quit"));
    press(&mut app, KeyCode::Char('q'));
    assert!(!app.should_quit(), "q is no longer bound");
    press(&mut app, KeyCode::Char('?'));
    assert!(screen(&app, 100, 30).contains("ctrl-q quit"));
}

// ---- marks, bulk work, undo, palette, help, trash, live refresh ------------------------------

/// Takes the snapshot named `name` of `scenario` at 100×30 and at 80×24.
fn both_sizes(name: &str, scenario: impl Fn(u16, u16) -> App) {
    for (w, h) in [(100, 30), (80, 24)] {
        let app = scenario(w, h);
        insta::assert_snapshot!(format!("{name}_{w}x{h}"), screen(&app, w, h));
    }
}

fn marked_two(w: u16, h: u16, world: &World) -> App {
    let mut app = loaded(w, h, world);
    press(&mut app, KeyCode::Char(' '));
    press(&mut app, KeyCode::Char(' '));
    answer(&mut app, world);
    app
}

fn trashed() -> Vec<crate::backend::Trashed> {
    let at = now() - SignedDuration::from_hours(26);
    vec![
        crate::backend::Trashed {
            kind: crate::backend::TrashedKind::Link,
            id: 12,
            name: "spring-teaser".into(),
            detail: "https://shop.example.com/spring/teaser?utm_source=newsletter".into(),
            clicks: 1_204,
            deleted_at: at,
            purge_at: Some(at + SignedDuration::from_hours(24 * 30)),
            batch: 3,
        },
        crate::backend::Trashed {
            kind: crate::backend::TrashedKind::Space,
            id: 4,
            name: "Autumn".into(),
            detail: "7 links".into(),
            clicks: 0,
            deleted_at: at - SignedDuration::from_hours(48),
            purge_at: None,
            batch: 2,
        },
    ]
}

#[test]
fn marks_show_on_rows_and_in_the_header() {
    let w = world();
    both_sizes("marks_two_rows", |width, height| {
        marked_two(width, height, &w)
    });
    both_sizes("marks_every_match", |width, height| {
        let mut app = loaded(width, height, &w);
        press(&mut app, KeyCode::Char('*'));
        app
    });
    let mut app = loaded(100, 30, &w);
    press(&mut app, KeyCode::Char('*'));
    assert_eq!(app.marked(), 6);
    press(&mut app, KeyCode::Char(' '));
    assert_eq!(app.marked(), 5, "unmarking a row of a marked filter");
    press(&mut app, KeyCode::Esc);
    assert_eq!(app.marked(), 0);
}

#[test]
fn bulk_work_asks_once_then_shows_progress() {
    let w = world();
    both_sizes("bulk_confirm_delete", |width, height| {
        let mut app = marked_two(width, height, &w);
        press(&mut app, KeyCode::Char('d'));
        app
    });
    both_sizes("bulk_menu_disable_enable", |width, height| {
        let mut app = marked_two(width, height, &w);
        press(&mut app, KeyCode::Char('x'));
        app
    });
    both_sizes("bulk_move_to_space", |width, height| {
        let mut app = marked_two(width, height, &w);
        press(&mut app, KeyCode::Char('m'));
        app
    });
    both_sizes("bulk_expiry_prompt", |width, height| {
        let mut app = marked_two(width, height, &w);
        press(&mut app, KeyCode::Char('E'));
        for c in "2027-03-21 09:00".chars() {
            press(&mut app, KeyCode::Char(c));
        }
        app
    });
    both_sizes("bulk_progress", |width, height| {
        let mut app = marked_two(width, height, &w);
        press(&mut app, KeyCode::Char('x'));
        press(&mut app, KeyCode::Enter);
        for command in app.take_commands() {
            if let Command::Bulk { progress, .. } = command {
                progress.set_total(12_345);
                progress.advance(4_000);
            }
        }
        app
    });
}

#[test]
fn the_palette_and_the_help_filter_as_you_type() {
    let w = world();
    both_sizes("palette_mark", |width, height| {
        let mut app = loaded(width, height, &w);
        press(&mut app, KeyCode::Char(':'));
        for c in "mark".chars() {
            press(&mut app, KeyCode::Char(c));
        }
        app
    });
    both_sizes("help_filtered_form", |width, height| {
        let mut app = loaded(width, height, &w);
        press(&mut app, KeyCode::Char('?'));
        for c in "form".chars() {
            press(&mut app, KeyCode::Char(c));
        }
        app
    });
}

#[test]
fn a_binding_of_three_keys_keeps_the_help_in_its_columns() {
    let overrides = [("down".to_owned(), "j down ctrl-n".to_owned())].into();
    let mut app = app_with(AppConfig {
        keys: KeyMap::with_overrides(&overrides).unwrap(),
        ..config()
    });
    answer(&mut app, &world());
    press(&mut app, KeyCode::Char('?'));
    let text = screen(&app, 100, 30);
    let down = text.lines().find(|l| l.contains("move down")).unwrap();
    let up = text.lines().find(|l| l.contains("move up")).unwrap();
    assert!(down.contains("j/down/ctrl-n move down"), "{down}");
    assert_eq!(
        down.find("move down"),
        up.find("move up"),
        "descriptions line up:\n{text}"
    );
}

/// Visits of the Live pane, one a second ending now: countries by name, `–` for what is not
/// known, the newest at the top.
fn visits() -> Vec<crate::domain::Visit> {
    let rows = [
        (
            "x7k2p",
            Some("DE"),
            Some("iOS"),
            Some("Safari"),
            Some("t.co"),
            Some("de"),
        ),
        (
            "spring-sale",
            Some("US"),
            Some("Windows"),
            Some("Chrome"),
            None,
            Some("en"),
        ),
        (
            "docs",
            None,
            Some("Linux"),
            Some("Firefox"),
            Some("news.ycombinator.com"),
            None,
        ),
        (
            "x7k2p",
            Some("JP"),
            Some("Android"),
            Some("Chrome"),
            Some("other"),
            Some("ja"),
        ),
    ];
    let n = rows.len() as i64;
    rows.into_iter()
        .enumerate()
        .map(
            |(i, (alias, country, platform, browser, referrer, language))| {
                let text = |v: Option<&str>| v.map(str::to_owned);
                crate::domain::Visit {
                    id: i as i64 + 1,
                    at: now() - SignedDuration::from_secs(n - i as i64),
                    link_id: 1,
                    alias: alias.into(),
                    country: text(country),
                    platform: text(platform),
                    browser: text(browser),
                    referrer: text(referrer),
                    language: text(language),
                    address: None,
                    rule: (alias == "spring-sale").then(|| "platform Windows".to_owned()),
                }
            },
        )
        .collect()
}

#[test]
fn the_live_pane() {
    let w = World {
        live: visits(),
        ..world()
    };
    both_sizes("live_pane", |width, height| {
        let mut app = loaded(width, height, &w);
        press(&mut app, KeyCode::Tab);
        press(&mut app, KeyCode::Tab);
        answer(&mut app, &w);
        app
    });
    // Before any visit, it says what it waits for.
    let empty = world();
    let mut app = loaded(80, 24, &empty);
    press(&mut app, KeyCode::Tab);
    press(&mut app, KeyCode::Tab);
    answer(&mut app, &empty);
    insta::assert_snapshot!("live_pane_waiting_80x24", screen(&app, 80, 24));
}

#[test]
fn the_trash_pane() {
    let w = World {
        trash: trashed(),
        ..world()
    };
    both_sizes("trash_pane", |width, height| {
        let mut app = loaded(width, height, &w);
        // Links, Spaces, Live, Trash: one step back from the first.
        press(&mut app, KeyCode::BackTab);
        answer(&mut app, &w);
        app
    });
}

#[test]
fn a_failed_refresh_keeps_the_rows_marked_stale() {
    let w = world();
    let failing = World {
        links_error: Some(Error::Unavailable("connection refused".into())),
        ..world()
    };
    both_sizes("links_stale_after_error", |width, height| {
        let mut app = loaded(width, height, &w);
        press(&mut app, KeyCode::Char('r'));
        answer(&mut app, &failing);
        app
    });
}

#[test]
fn the_too_small_screen_at_60x20() {
    snap!("too_small_60x20", loaded(60, 20, &world()), 60, 20);
}

/// With a form open, a window too small to show it says that enlarging it goes on with the
/// form, and does not offer a quit key that would not work (and would lose what was typed).
#[test]
fn the_too_small_screen_keeps_an_open_form() {
    let w = world();
    let mut app = loaded(100, 30, &w);
    press(&mut app, KeyCode::Char('n'));
    keys(&mut app, &w, "https://typed.example/");
    app.handle_event(Event::Resize(60, 15));
    let text = screen(&app, 60, 15);
    assert!(
        text.contains("Enlarge the window to go on with the form"),
        "{text}"
    );
    assert!(!text.contains("to quit"), "{text}");
    press(&mut app, KeyCode::Char('q'));
    assert!(!app.should_quit());
    app.handle_event(Event::Resize(100, 30));
    assert!(screen(&app, 100, 30).contains("https://typed.example/"));
}

/// ctrl-c in a changed form asks first, and the question says that yes quits the app.
#[test]
fn ctrl_c_in_a_changed_form_says_that_yes_quits() {
    let w = world();
    let mut app = loaded(100, 30, &w);
    press(&mut app, KeyCode::Char('n'));
    keys(&mut app, &w, "https://typed.example/");
    app.handle_event(Event::Key(KeyEvent::new(
        KeyCode::Char('c'),
        KeyModifiers::CONTROL,
    )));
    assert!(!app.should_quit(), "a changed form asks first");
    let text = screen(&app, 100, 30);
    assert!(
        text.contains("Quit linkdeck and lose what you typed"),
        "{text}"
    );
    assert!(text.contains("discard and quit"), "{text}");
    press(&mut app, KeyCode::Char('y'));
    assert!(app.should_quit());
}

/// The list with its newest link (on the first row, so in the details) as an import, another
/// server or an older database may hold it: an escape sequence that clears the screen, one that
/// sets the window's title (ended by BEL), a C1 control, a bidirectional override, and a tab and
/// an override in its space's name (a table cell handed an override on to the terminal).
fn hostile_world() -> World {
    let mut w = world();
    let hostile = &mut w.links[5];
    hostile.title = Some("Q1\u{1b}[2J\u{1b}]0;pwned\u{7} report\u{9b}31m \u{202e}fdp.exe".into());
    hostile.url = "https://files.example.com/\u{1b}[5mq1.pdf".into();
    if let Some(space) = &mut hostile.space {
        space.name = "Docs\t\u{202e}team".into();
    }
    w
}

#[test]
fn control_characters_from_outside_are_shown_not_sent() {
    let w = hostile_world();
    let app = loaded(100, 30, &w);
    let mut terminal = Terminal::new(TestBackend::new(100, 30)).unwrap();
    terminal.draw(|f| app.render(f)).unwrap();
    // A terminal acts on these instead of showing them.
    let acts =
        |c: char| c.is_control() || matches!(c, '\u{202A}'..='\u{202E}' | '\u{2066}'..='\u{2069}');
    for cell in terminal.backend().buffer().content() {
        assert!(
            !cell.symbol().chars().any(acts),
            "a cell holds {:?}",
            cell.symbol()
        );
    }
    let text = screen(&app, 100, 30);
    for visible in [
        "Q1\\u{1b}[2J\\u{1b}]0;pwned\\u{7} report\\u{9b}31m \\u{202e}fdp.exe",
        "https://files.example.com/\\u{1b}[5mq1.pdf",
        "Docs\\t\\u{202e}team",
    ] {
        assert!(text.contains(visible), "{visible} not on screen:\n{text}");
    }
    snap!("details_control_characters_shown", app, 100, 30);
}
