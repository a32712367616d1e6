//! Key-driven tests of the link form: what it sends, what it refuses, where errors land.

use ratatui::crossterm::event::KeyModifiers;

use super::*;
use crate::tui::keys::{KeyContext, KeyMap};

/// A key as the app delivers it to a form: with the action the default key map binds there.
pub fn press(code: KeyCode) -> Key {
    KeyMap::default().key_in(
        ratatui::crossterm::event::KeyEvent::new(code, KeyModifiers::NONE),
        KeyContext::Forms,
    )
}

/// A key answering the form's question (discard?), as the app delivers it then.
pub fn answer(code: KeyCode) -> Key {
    KeyMap::default().key_in(
        ratatui::crossterm::event::KeyEvent::new(code, KeyModifiers::NONE),
        KeyContext::Dialogs,
    )
}

pub fn ctrl(c: char) -> Key {
    KeyMap::default().key_in(
        ratatui::crossterm::event::KeyEvent::new(KeyCode::Char(c), KeyModifiers::CONTROL),
        KeyContext::Forms,
    )
}

pub fn type_text(form: &mut LinkForm, text: &str) {
    for c in text.chars() {
        form.handle_key(press(KeyCode::Char(c)));
    }
}

fn tab(form: &mut LinkForm, times: usize) {
    for _ in 0..times {
        form.handle_key(press(KeyCode::Tab));
    }
}

fn berlin() -> TimeZone {
    TimeZone::get("Europe/Berlin").unwrap()
}

#[test]
fn a_new_link_sends_only_what_was_filled() {
    let mut form = LinkForm::create(vec![], vec![], berlin());
    type_text(&mut form, "https://example.com/a");
    match form.handle_key(ctrl('s')) {
        FormOutcome::Save(SaveRequest::CreateLink(input)) => {
            assert_eq!(input, LinkInput::with_url("https://example.com/a"));
        }
        other => panic!("{other:?}"),
    }
    assert!(form.saving);
    // A second save while the first is in flight does nothing.
    assert_eq!(form.handle_key(ctrl('s')), FormOutcome::Stay);
}

#[test]
fn an_invalid_url_shows_its_error_when_left_and_keeps_the_text() {
    let mut form = LinkForm::create(vec![], vec![], berlin());
    type_text(&mut form, "javascript:alert(1)");
    assert!(form.errors.get("url").is_none());
    tab(&mut form, 1);
    assert!(form.errors.get("url").unwrap().contains("http"));
    assert_eq!(form.handle_key(ctrl('s')), FormOutcome::Stay);
    assert_eq!(form.url.value(), "javascript:alert(1)");
    assert_eq!(form.focus, Stop::Url);
    assert!(form.message.as_deref().unwrap().contains("1 field needs"));
}

#[test]
fn expiry_needs_date_and_time_together() {
    let mut form = LinkForm::create(vec![], vec![], berlin());
    type_text(&mut form, "https://example.com");
    form.focus = Stop::Date;
    type_text(&mut form, "2026-12-24");
    assert_eq!(form.handle_key(ctrl('s')), FormOutcome::Stay);
    assert!(form.errors.get("expiration_time").is_some());
    assert_eq!(form.focus, Stop::Time);
    type_text(&mut form, "18:00");
    match form.handle_key(ctrl('s')) {
        FormOutcome::Save(SaveRequest::CreateLink(input)) => {
            assert_eq!(input.expiration_date.as_deref(), Some("2026-12-24"));
            assert_eq!(input.expiration_time.as_deref(), Some("18:00"));
        }
        other => panic!("{other:?}"),
    }
}

/// A date or a time is judged when its field is left, even while the other half is empty.
#[test]
fn a_bad_date_or_time_shows_its_error_when_left() {
    for (stop, typed, field, said) in [
        (Stop::Date, "2027-13-40", "expiration_date", "YYYY-MM-DD"),
        (Stop::Date, "abc", "expiration_date", "YYYY-MM-DD"),
        (Stop::Time, "25:99", "expiration_time", "HH:MM"),
    ] {
        let mut form = LinkForm::create(vec![], vec![], berlin());
        type_text(&mut form, "https://example.com");
        form.focus = stop;
        type_text(&mut form, typed);
        assert!(form.errors.get(field).is_none(), "not while typing");
        tab(&mut form, 1);
        let error = form.errors.get(field);
        assert!(
            error.as_ref().is_some_and(|e| e.contains(said)),
            "{typed}: {error:?}"
        );
    }
}

#[test]
fn esc_on_an_unchanged_form_closes_and_on_a_changed_one_asks() {
    let mut form = LinkForm::create(vec![], vec![], berlin());
    assert_eq!(form.handle_key(press(KeyCode::Esc)), FormOutcome::Close);
    type_text(&mut form, "h");
    assert_eq!(form.handle_key(press(KeyCode::Esc)), FormOutcome::Stay);
    assert!(matches!(form.popup, Some(Popup::Discard { .. })));
    assert_eq!(
        form.handle_key(answer(KeyCode::Char('n'))),
        FormOutcome::Stay
    );
    assert!(form.popup.is_none());
    assert_eq!(form.url.value(), "h");
    form.handle_key(press(KeyCode::Esc));
    assert_eq!(
        form.handle_key(answer(KeyCode::Char('y'))),
        FormOutcome::Close
    );
}

#[test]
fn a_server_422_lands_on_its_field_and_row() {
    let mut form = LinkForm::create(vec![], vec![], berlin());
    type_text(&mut form, "https://example.com");
    form.target = TargetType::Geo;
    form.geo = RuleList::with_rules(
        TargetType::Geo,
        &[
            crate::domain::TargetRule {
                key: "US".into(),
                value: "https://us.example.com".into(),
            },
            crate::domain::TargetRule {
                key: "FR".into(),
                value: "https://fr.example.com".into(),
            },
        ],
    );
    assert!(matches!(form.handle_key(ctrl('s')), FormOutcome::Save(_)));
    let mut errors = FieldErrors::default();
    errors.add("geo.1.value", "is not reachable");
    form.save_failed(&Error::Validation(errors));
    assert!(!form.saving);
    assert_eq!(form.focus, Stop::Rules);
    assert_eq!(
        form.errors.get("geo.1.value").as_deref(),
        Some("is not reachable")
    );
    assert_eq!(form.geo.rows().len(), 2);
}

fn protected_geo_link() -> Link {
    let at: jiff::Timestamp = "2026-11-22T12:00:00Z".parse().unwrap();
    Link {
        id: 4,
        alias: "promo".into(),
        url: "https://example.com/promo".into(),
        short_url: "http://127.0.0.1:8080/promo".into(),
        title: None,
        target_type: TargetType::Geo,
        geo: vec![crate::domain::TargetRule {
            key: "DE".into(),
            value: "https://example.de".into(),
        }],
        platform: vec![],
        rotation: vec![],
        last_rotation: 0,
        disabled: false,
        public: false,
        password: true,
        expiration_url: None,
        expiration_clicks: 10,
        clicks: 0,
        owner_id: 1,
        space: None,
        domain: None,
        ends_at: Some(at),
        created_at: at,
        updated_at: at,
        tags: Vec::new(),
        options: Default::default(),
        previews: 0,
    }
}

fn saved_update(form: &mut LinkForm) -> LinkInput {
    match form.handle_key(ctrl('s')) {
        FormOutcome::Save(SaveRequest::UpdateLink(4, input)) => input,
        other => panic!("{other:?}"),
    }
}

#[test]
fn an_unchanged_edit_closes_without_sending() {
    let mut form = LinkForm::edit(protected_geo_link(), vec![], vec![], berlin());
    assert!(!form.is_changed());
    assert_eq!(form.handle_key(ctrl('s')), FormOutcome::Close);
}

#[test]
fn removing_the_password_sends_an_empty_one_and_nothing_else() {
    let mut form = LinkForm::edit(protected_geo_link(), vec![], vec![], berlin());
    form.focus = Stop::PasswordMode;
    form.handle_key(press(KeyCode::Left));
    assert_eq!(form.password_mode, PasswordMode::Remove);
    let input = saved_update(&mut form);
    assert_eq!(
        input,
        LinkInput {
            password: Some(String::new()),
            ..LinkInput::default()
        }
    );
}

#[test]
fn changing_the_password_needs_the_new_one() {
    let mut form = LinkForm::edit(protected_geo_link(), vec![], vec![], berlin());
    form.focus = Stop::PasswordMode;
    form.handle_key(press(KeyCode::Right));
    assert_eq!(form.handle_key(ctrl('s')), FormOutcome::Stay);
    assert_eq!(form.focus, Stop::PasswordMode);
    form.handle_key(press(KeyCode::Tab));
    type_text(&mut form, "n3w");
    assert_eq!(saved_update(&mut form).password.as_deref(), Some("n3w"));
}

#[test]
fn switching_targeting_off_sends_only_the_type() {
    let mut form = LinkForm::edit(protected_geo_link(), vec![], vec![], berlin());
    form.focus = Stop::TargetType;
    form.handle_key(press(KeyCode::Left));
    let input = saved_update(&mut form);
    assert_eq!(
        input,
        LinkInput {
            target_type: Some("0".into()),
            ..LinkInput::default()
        }
    );
}

#[test]
fn a_changed_rule_sends_the_type_and_the_whole_list() {
    let mut form = LinkForm::edit(protected_geo_link(), vec![], vec![], berlin());
    form.focus = Stop::Rules;
    form.handle_key(press(KeyCode::Char('a')));
    type_text(&mut form, "austria");
    form.handle_key(press(KeyCode::Enter));
    type_text(&mut form, "https://example.at");
    form.handle_key(press(KeyCode::Enter));
    let input = saved_update(&mut form);
    assert_eq!(input.target_type.as_deref(), Some("1"));
    assert_eq!(
        input.geo,
        Some(vec![
            crate::domain::RuleInput::new("DE", "https://example.de"),
            crate::domain::RuleInput::new("AT", "https://example.at"),
        ])
    );
    assert_eq!(input.url, None);
    assert_eq!(input.expiration_date, None);
}

#[test]
fn clearing_the_expiry_sends_both_halves_empty() {
    let mut form = LinkForm::edit(protected_geo_link(), vec![], vec![], berlin());
    form.date.set("");
    form.time.set("");
    let input = saved_update(&mut form);
    assert_eq!(input.expiration_date.as_deref(), Some(""));
    assert_eq!(input.expiration_time.as_deref(), Some(""));
    assert_eq!(input.expiration_clicks, None);
}

#[test]
fn a_new_link_starts_in_the_filtered_space_without_counting_as_a_change() {
    let at = jiff::Timestamp::UNIX_EPOCH;
    let docs = Space {
        id: 2,
        owner_id: 1,
        name: "Docs".into(),
        color: crate::domain::Color::new(5).unwrap(),
        links: None,
        created_at: at,
        updated_at: at,
    };
    let mut form = LinkForm::create(vec![docs], vec![], berlin()).in_space(Some(2));
    assert!(!form.is_changed());
    type_text(&mut form, "https://example.com");
    match form.handle_key(ctrl('s')) {
        FormOutcome::Save(SaveRequest::CreateLink(input)) => {
            assert_eq!(input.space.as_deref(), Some("2"))
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn the_add_key_on_the_targeting_type_adds_a_rule_as_the_list_says() {
    let mut form = LinkForm::create(Vec::new(), Vec::new(), berlin());
    form.focus = Stop::TargetType;
    form.handle_key(press(KeyCode::Right));
    assert_eq!(form.target, TargetType::Geo);
    form.handle_key(press(KeyCode::Char('a')));
    assert_eq!(form.focus, Stop::Rules);
    assert!(
        form.geo.picker().is_some(),
        "the new row asks for its country"
    );
}

#[test]
fn an_empty_focused_rule_list_shows_where_focus_is() {
    let mut form = LinkForm::create(Vec::new(), Vec::new(), berlin());
    form.target = TargetType::Rotation;
    form.focus = Stop::Rules;
    let theme = crate::tui::theme::Theme::new(crate::tui::theme::ThemeName::Mono);
    let keys = KeyMap::default();
    let tz = berlin();
    let ctx = crate::tui::view::Ctx {
        theme: &theme,
        keys: &keys,
        now: jiff::Timestamp::UNIX_EPOCH,
        tz: &tz,
        focused: true,
        spinner: ' ',
    };
    let mut body = crate::tui::form::Body::default();
    form.rotation
        .render_into(&mut body, 70, true, &form.errors, &ctx);
    let text: Vec<String> = body.lines.iter().map(ToString::to_string).collect();
    assert!(
        text.iter().any(|l| l.contains("▶ no rules yet: press a")),
        "{text:?}"
    );
}

#[test]
fn a_tag_being_typed_is_completed_from_the_tags_in_use() {
    let known = vec![
        "newsletter".to_owned(),
        "news".to_owned(),
        "promo".to_owned(),
    ];
    let mut form = LinkForm::create(vec![], vec![], berlin()).with_known_tags(known);
    type_text(&mut form, "https://example.com/a");
    tab(&mut form, 3);
    type_text(&mut form, "New");
    // The most used tag that the typed one begins comes first.
    assert_eq!(form.tag_completion().as_deref(), Some("sletter"));
    form.handle_key(press(KeyCode::Right));
    assert_eq!(form.tags.value(), "Newsletter");
    // A tag the link has already is not offered again.
    type_text(&mut form, ", NEWS");
    assert_eq!(
        form.tag_completion().as_deref(),
        None,
        "news is typed whole"
    );
    type_text(&mut form, "L");
    assert_eq!(form.tag_completion(), None, "newsletter is on the link");
    match form.handle_key(ctrl('s')) {
        FormOutcome::Save(SaveRequest::CreateLink(input)) => {
            assert_eq!(input.tags.as_deref(), Some("Newsletter, NEWSL"));
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn the_redirect_switches_and_the_preview_send_only_what_changed() {
    let mut form = LinkForm::edit(protected_geo_link(), vec![], vec![], berlin());
    form.focus = Stop::Redirect;
    // The cursor starts on the query switch; → moves to the path's, space flips it.
    form.handle_key(press(KeyCode::Right));
    form.handle_key(press(KeyCode::Char(' ')));
    assert!(form.options.forward_path && form.options.forward_query);
    form.handle_key(press(KeyCode::Tab));
    assert_eq!(form.focus, Stop::PreviewTitle);
    type_text(&mut form, "Spring sale");
    let input = saved_update(&mut form);
    assert_eq!(
        input,
        LinkInput {
            forward_path: Some("1".into()),
            preview_title: Some("Spring sale".into()),
            ..LinkInput::default()
        }
    );
}

#[test]
fn a_new_link_sends_its_options_only_away_from_the_defaults() {
    let mut form = LinkForm::create(vec![], vec![], berlin());
    type_text(&mut form, "https://example.com/a");
    form.focus = Stop::Redirect;
    // ← wraps to the indexing switch.
    form.handle_key(press(KeyCode::Left));
    form.handle_key(press(KeyCode::Char(' ')));
    form.focus = Stop::PreviewImage;
    type_text(&mut form, "ftp://img.example/a.png");
    // The preview image is checked by the link URL rule, and the error lands beside it.
    assert_eq!(form.handle_key(ctrl('s')), FormOutcome::Stay);
    assert_eq!(form.focus, Stop::PreviewImage);
    assert!(form.errors.iter().any(|(name, _)| name == "preview_image"));
    form.preview_image.set("https://img.example/a.png");
    match form.handle_key(ctrl('s')) {
        FormOutcome::Save(SaveRequest::CreateLink(input)) => assert_eq!(
            input,
            LinkInput {
                allow_indexing: Some("1".into()),
                preview_image: Some("https://img.example/a.png".into()),
                ..LinkInput::with_url("https://example.com/a")
            }
        ),
        other => panic!("{other:?}"),
    }
}

/// `protected_geo_link` with two redirect rules.
fn link_with_rules() -> Link {
    let mut errors = FieldErrors::default();
    let rules = crate::domain::parse_rules(
        &[
            "language fr,de-CH => https://example.com/fr",
            "query utm_source=news => https://example.com/news",
        ],
        &mut errors,
    );
    assert!(errors.is_empty(), "{errors:?}");
    let mut link = protected_geo_link();
    link.options.rules = rules;
    link
}

const FR: &str = "language fr,de-ch => https://example.com/fr";
const NEWS: &str = "query utm_source=news => https://example.com/news";

fn rule_rows(form: &LinkForm) -> Vec<Vec<&str>> {
    form.redirect
        .rows()
        .iter()
        .map(|r| r.cells.iter().map(String::as_str).collect())
        .collect()
}

/// A form on `link_with_rules`, focus on its redirect rules.
fn on_rules() -> LinkForm {
    let mut form = LinkForm::edit(link_with_rules(), vec![], vec![], berlin());
    form.focus = Stop::RedirectRules;
    form
}

/// Adds a redirect rule after the selected one by keys: the kind `downs` steps down the
/// picker, then its condition and URL.
fn add_rule(form: &mut LinkForm, downs: usize, condition: &str, url: &str) {
    form.focus = Stop::RedirectRules;
    form.handle_key(press(KeyCode::Char('a')));
    for _ in 0..downs {
        form.handle_key(press(KeyCode::Down));
    }
    form.handle_key(press(KeyCode::Enter));
    type_text(form, condition);
    form.handle_key(press(KeyCode::Enter));
    type_text(form, url);
    form.handle_key(press(KeyCode::Enter));
}

#[test]
fn a_links_redirect_rules_show_as_rows_and_unchanged_are_not_sent() {
    let mut form = LinkForm::edit(link_with_rules(), vec![], vec![], berlin());
    assert_eq!(
        rule_rows(&form),
        [
            ["language", "fr,de-ch", "https://example.com/fr"],
            ["query", "utm_source=news", "https://example.com/news"],
        ]
    );
    assert!(!form.is_changed());
    assert_eq!(form.handle_key(ctrl('s')), FormOutcome::Close);
    // Another field changed: the rules stay out of the request.
    form.url.set("https://example.com/other");
    let input = saved_update(&mut form);
    assert_eq!(input.url.as_deref(), Some("https://example.com/other"));
    assert_eq!(input.rules, None);
}

#[test]
fn a_rule_added_by_keys_is_sent_with_the_others_in_order() {
    let mut form = on_rules();
    form.handle_key(press(KeyCode::Char('j')));
    // `country` is the eighth kind.
    add_rule(&mut form, 7, "DE", "https://example.de/x");
    assert!(!form.redirect.is_editing());
    assert_eq!(form.errors.len(), 0, "{:?}", form.errors);
    let input = saved_update(&mut form);
    assert_eq!(
        input.rules,
        Some(vec![
            FR.to_owned(),
            NEWS.to_owned(),
            "country DE => https://example.de/x".to_owned(),
        ])
    );
    assert_eq!(input.url, None);
    assert_eq!(input.target_type, None);
}

#[test]
fn moving_a_rule_sends_the_new_order_and_moving_it_back_sends_nothing() {
    let mut form = on_rules();
    form.handle_key(press(KeyCode::Char('J')));
    assert_eq!(rule_rows(&form)[1][0], "language");
    let mut moved = form.clone();
    assert_eq!(
        saved_update(&mut moved).rules,
        Some(vec![NEWS.to_owned(), FR.to_owned()])
    );
    form.handle_key(press(KeyCode::Char('K')));
    assert!(!form.is_changed());
    assert_eq!(form.handle_key(ctrl('s')), FormOutcome::Close);
}

#[test]
fn removing_every_rule_sends_an_empty_list() {
    let mut form = on_rules();
    form.handle_key(press(KeyCode::Delete));
    form.handle_key(press(KeyCode::Delete));
    assert!(form.redirect.rows().is_empty());
    assert_eq!(saved_update(&mut form).rules, Some(vec![]));
}

#[test]
fn a_bad_rule_shows_its_error_on_its_row_and_keeps_what_was_typed() {
    let mut form = on_rules();
    form.handle_key(press(KeyCode::Char('j')));
    // A row with a kind and nothing else is blank: not sent, so the next row is `rules.2`.
    add_rule(&mut form, 0, "", "");
    // `cidr` is the sixth kind.
    add_rule(&mut form, 5, "10.0.0.0/33", "https://example.com/lan");
    assert_eq!(rule_rows(&form).len(), 4);
    // The finished row is judged at once, by the service's own parser.
    let error = form
        .errors
        .get("rules.2")
        .expect("an error on the sent row");
    assert!(error.contains("address range"), "{error}");
    form.focus = Stop::Url;
    assert_eq!(form.handle_key(ctrl('s')), FormOutcome::Stay);
    assert_eq!(form.focus, Stop::RedirectRules);
    assert_eq!(form.redirect.selected(), 3, "the row of `rules.2`");
    assert_eq!(
        rule_rows(&form)[3],
        ["cidr", "10.0.0.0/33", "https://example.com/lan"]
    );
    // Fixed in its condition's cell, the blank row is left out.
    form.handle_key(press(KeyCode::Left));
    form.handle_key(press(KeyCode::Enter));
    assert!(form.redirect.is_editing());
    for _ in 0..2 {
        form.handle_key(press(KeyCode::Backspace));
    }
    type_text(&mut form, "24");
    form.handle_key(press(KeyCode::Enter));
    assert!(form.errors.get("rules.2").is_none());
    let rules = saved_update(&mut form).rules.unwrap();
    assert_eq!(rules.len(), 3);
    assert_eq!(rules[2], "cidr 10.0.0.0/24 => https://example.com/lan");
}

#[test]
fn a_servers_rule_errors_land_on_their_rows() {
    let mut form = on_rules();
    form.handle_key(press(KeyCode::Delete));
    assert!(matches!(form.handle_key(ctrl('s')), FormOutcome::Save(_)));
    // A server without link options (a phpShort one) refuses the whole list.
    let mut errors = FieldErrors::default();
    errors.add("rules", "this server keeps no link options");
    form.focus = Stop::Url;
    form.save_failed(&Error::Validation(errors));
    assert_eq!(form.focus, Stop::RedirectRules);
    assert!(form.message.as_deref().unwrap().contains("1 field needs"));
    assert_eq!(rule_rows(&form).len(), 1);
    let mut errors = FieldErrors::default();
    errors.add("rules.0.url", "is not reachable");
    form.handle_key(ctrl('s'));
    form.save_failed(&Error::Validation(errors));
    assert_eq!(
        form.errors.get("rules.0.url").as_deref(),
        Some("is not reachable")
    );
    assert_eq!(rule_rows(&form)[0][0], "query");
}
