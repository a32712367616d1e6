//! Screen snapshots of the forms in every section and state, at 100×30 and 80×24, driven by the
//! same keys a person presses. Each snapshot name says the form, the state and the size.

use jiff::Timestamp;
use jiff::tz::TimeZone;
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

use super::link_form::tests::{ctrl, press, type_text};
use super::{DomainForm, Form, LinkForm, SpaceForm};
use crate::domain::{Color, Domain, Error, FieldErrors, Link, Space, TargetRule, TargetType};
use crate::tui::keys::{Key, KeyMap};
use crate::tui::theme::{Theme, ThemeName};
use crate::tui::view::Ctx;

fn now() -> Timestamp {
    "2026-11-22T12:00:00Z".parse().unwrap()
}

fn berlin() -> TimeZone {
    TimeZone::get("Europe/Berlin").unwrap()
}

fn spaces() -> Vec<Space> {
    [(1, "Launch", 4), (2, "Docs", 5), (3, "Ads", 1)]
        .into_iter()
        .map(|(id, name, color)| Space {
            id,
            owner_id: 1,
            name: name.into(),
            color: Color::new(color).unwrap(),
            links: Some(2),
            created_at: now(),
            updated_at: now(),
        })
        .collect()
}

fn domains() -> Vec<Domain> {
    vec![Domain {
        id: 1,
        owner_id: 1,
        name: "https://sho.rt".into(),
        created_at: now(),
        updated_at: now(),
        settings: Default::default(),
    }]
}

/// A link with something in every section.
fn full_link() -> Link {
    Link {
        id: 9,
        alias: "launch-eu".into(),
        url: "https://example.com/launch/europe?utm_source=newsletter&utm_medium=email".into(),
        short_url: "https://sho.rt/launch-eu".into(),
        title: Some("example.com/launch/europe".into()),
        target_type: TargetType::Geo,
        geo: vec![
            TargetRule {
                key: "DE".into(),
                value: "https://example.de/launch".into(),
            },
            TargetRule {
                key: "FR".into(),
                value: "https://example.fr/lancement".into(),
            },
        ],
        platform: vec![],
        rotation: vec![],
        last_rotation: 0,
        disabled: false,
        public: true,
        password: true,
        expiration_url: Some("https://example.com/over".into()),
        expiration_clicks: 500,
        clicks: 42,
        owner_id: 1,
        space: Some(spaces()[0].clone()),
        domain: Some(domains()[0].clone()),
        ends_at: Some("2026-12-24T17:00:00Z".parse().unwrap()),
        created_at: now(),
        updated_at: now(),
        tags: vec!["launch".into(), "newsletter".into()],
        options: Default::default(),
        previews: 0,
    }
}

fn new_form() -> LinkForm {
    LinkForm::create(spaces(), domains(), berlin())
}

fn keys(form: &mut LinkForm, codes: &[KeyCode]) {
    for code in codes {
        form.handle_key(press(*code));
    }
}

fn tab(form: &mut LinkForm, n: usize) {
    for _ in 0..n {
        form.handle_key(press(KeyCode::Tab));
    }
}

fn draw(form: &Form, width: u16, height: u16) -> String {
    let theme = Theme::new(ThemeName::Dark);
    let keys = KeyMap::default();
    let tz = berlin();
    let ctx = Ctx {
        theme: &theme,
        keys: &keys,
        now: now(),
        tz: &tz,
        focused: true,
        spinner: '⠋',
    };
    let mut terminal = Terminal::new(TestBackend::new(width, height)).unwrap();
    terminal
        .draw(|f| {
            let area = f.area();
            form.render(area, f.buffer_mut(), &ctx);
        })
        .unwrap();
    terminal.backend().to_string()
}

/// Snapshots `form` at both sizes.
fn snap(name: &str, form: impl Into<Form>) {
    let form = form.into();
    insta::assert_snapshot!(format!("{name}_100x30"), draw(&form, 100, 30));
    insta::assert_snapshot!(format!("{name}_80x24"), draw(&form, 80, 24));
}

#[test]
fn link_form_new_empty_basics() {
    snap("link_form_new_empty_basics", new_form());
}

#[test]
fn link_form_new_basics_filled() {
    let mut form = new_form();
    type_text(
        &mut form,
        "https://example.com/a/very/long/landing/page/that/scrolls/inside/its/field?campaign=winter-sale-2026",
    );
    tab(&mut form, 1);
    type_text(&mut form, "winter");
    tab(&mut form, 1);
    keys(&mut form, &[KeyCode::Right, KeyCode::Right]);
    snap("link_form_new_basics_filled_space_docs", form);
}

#[test]
fn link_form_long_url_scrolls_while_typing() {
    let mut form = new_form();
    type_text(
        &mut form,
        "https://example.com/a/very/long/landing/page/that/scrolls/inside/its/field?campaign=winter-sale-2026",
    );
    snap("link_form_long_url_focused_scrolled", form);
}

#[test]
fn link_form_protection_section() {
    let mut form = new_form();
    type_text(&mut form, "https://example.com");
    tab(&mut form, 5);
    type_text(&mut form, "s3cret");
    tab(&mut form, 1);
    keys(&mut form, &[KeyCode::Char(' ')]);
    tab(&mut form, 1);
    keys(&mut form, &[KeyCode::Char(' ')]);
    snap("link_form_protection_password_masked_disabled_public", form);
}

#[test]
fn link_form_expiry_section() {
    let mut form = new_form();
    type_text(&mut form, "https://example.com");
    tab(&mut form, 8);
    type_text(&mut form, "2026-12-24");
    tab(&mut form, 1);
    type_text(&mut form, "18:00");
    tab(&mut form, 1);
    type_text(&mut form, "1000");
    tab(&mut form, 1);
    type_text(&mut form, "https://example.com/sold-out");
    snap("link_form_expiry_date_time_clicks_url", form);
}

/// A new form with `rows` added to the targeting type reached with `steps` presses of →.
fn targeting(steps: usize, rows: &[(&str, &str)]) -> LinkForm {
    let mut form = new_form();
    type_text(&mut form, "https://example.com");
    tab(&mut form, 12);
    for _ in 0..steps {
        form.handle_key(press(KeyCode::Right));
    }
    tab(&mut form, 1);
    for (key, url) in rows {
        form.handle_key(press(KeyCode::Char('a')));
        if !key.is_empty() {
            form.paste(key);
            form.handle_key(press(KeyCode::Enter));
        }
        type_text(&mut form, url);
        form.handle_key(press(KeyCode::Enter));
    }
    form
}

#[test]
fn link_form_targeting_none() {
    let mut form = new_form();
    tab(&mut form, 12);
    snap("link_form_targeting_none", form);
}

#[test]
fn link_form_targeting_geo_rows() {
    let form = targeting(
        1,
        &[
            ("germany", "https://example.de"),
            ("fr", "https://example.fr"),
            ("japan", "https://example.jp"),
        ],
    );
    snap("link_form_targeting_geo_three_rows", form);
}

#[test]
fn link_form_targeting_platform_rows() {
    let mut form = targeting(2, &[]);
    for (downs, url) in [
        (0, "https://apps.apple.com/x"),
        (1, "https://play.google.com/x"),
    ] {
        form.handle_key(press(KeyCode::Char('a')));
        for _ in 0..downs {
            form.handle_key(press(KeyCode::Down));
        }
        form.handle_key(press(KeyCode::Enter));
        type_text(&mut form, url);
        form.handle_key(press(KeyCode::Enter));
    }
    snap("link_form_targeting_platform_ios_android", form);
}

#[test]
fn link_form_targeting_rotation_rows() {
    let form = targeting(
        3,
        &[
            ("", "https://a.example.com"),
            ("", "https://b.example.com"),
            ("", "https://c.example.com"),
        ],
    );
    snap("link_form_targeting_rotation_three_urls", form);
}

#[test]
fn link_form_targeting_rows_reordered() {
    let mut form = targeting(
        3,
        &[
            ("", "https://a.example.com"),
            ("", "https://b.example.com"),
            ("", "https://c.example.com"),
        ],
    );
    form.handle_key(press(KeyCode::Char('K')));
    form.handle_key(press(KeyCode::Char('K')));
    snap("link_form_targeting_rotation_c_moved_to_top", form);
}

#[test]
fn link_form_targeting_cell_editing() {
    let mut form = targeting(1, &[("germany", "https://example.de")]);
    form.handle_key(press(KeyCode::Right));
    form.handle_key(press(KeyCode::Enter));
    type_text(&mut form, "/angebot");
    snap("link_form_targeting_geo_url_cell_editing", form);
}

#[test]
fn link_form_country_lookup() {
    let mut form = targeting(1, &[]);
    form.handle_key(press(KeyCode::Char('a')));
    type_text(&mut form, "uni");
    snap("link_form_picker_country_lookup_uni", form);
}

#[test]
fn link_form_platform_picker() {
    let mut form = targeting(2, &[]);
    form.handle_key(press(KeyCode::Char('a')));
    snap("link_form_picker_platform", form);
}

#[test]
fn link_form_space_picker() {
    let mut form = new_form();
    tab(&mut form, 2);
    form.handle_key(press(KeyCode::Enter));
    form.handle_key(press(KeyCode::Down));
    snap("link_form_picker_space", form);
}

#[test]
fn link_form_domain_picker() {
    let mut form = new_form();
    tab(&mut form, 4);
    form.handle_key(press(KeyCode::Enter));
    snap("link_form_picker_domain", form);
}

#[test]
fn link_form_field_errors_after_save() {
    let mut form = targeting(1, &[("germany", "ftp://example.de")]);
    // Back to the top: a bad URL, a reserved alias, a date without a time.
    for _ in 0..13 {
        form.handle_key(press(KeyCode::BackTab));
    }
    for _ in 0.."https://example.com".len() {
        form.handle_key(press(KeyCode::Backspace));
    }
    type_text(&mut form, "javascript:alert(1)");
    tab(&mut form, 1);
    type_text(&mut form, "api");
    tab(&mut form, 7);
    type_text(&mut form, "2026-13-01");
    form.handle_key(ctrl('s'));
    snap("link_form_field_errors_after_save", form);
}

#[test]
fn link_form_field_error_shown_when_left() {
    let mut form = new_form();
    type_text(&mut form, "example.com");
    tab(&mut form, 1);
    snap("link_form_url_error_when_left", form);
}

#[test]
fn link_form_server_422_on_rows() {
    let mut form = targeting(
        1,
        &[
            ("germany", "https://example.de"),
            ("fr", "https://example.fr"),
        ],
    );
    form.handle_key(ctrl('s'));
    let mut errors = FieldErrors::default();
    errors.add("alias", "has already been taken");
    errors.add("geo.1.value", "must not point back to this service");
    form.save_failed(&Error::Validation(errors));
    snap("link_form_server_422_alias_and_geo_row", form);
}

/// A long error is wrapped under its field, read whole at 80 columns, not cut at the edge.
#[test]
fn a_long_field_error_wraps_under_its_field() {
    let mut form = new_form();
    type_text(&mut form, "https://example.com");
    form.handle_key(ctrl('s'));
    let mut errors = FieldErrors::default();
    errors.add(
        "alias",
        "is already taken by another link on this domain; choose another alias or leave it \
         empty for a generated one (the end of this message)",
    );
    form.save_failed(&Error::Validation(errors));
    let screen = draw(&form.into(), 80, 24);
    assert!(screen.contains("(the end of this message)"), "{screen}");
    assert!(screen.contains("✗ is already taken"), "{screen}");
}

#[test]
fn link_form_saving() {
    let mut form = new_form();
    type_text(&mut form, "https://example.com");
    form.handle_key(ctrl('s'));
    snap("link_form_saving", form);
}

#[test]
fn link_form_unavailable_keeps_input() {
    let mut form = new_form();
    type_text(&mut form, "https://example.com");
    form.handle_key(ctrl('s'));
    form.save_failed(&Error::Unavailable("connection refused".into()));
    snap("link_form_save_failed_unavailable", form);
}

#[test]
fn link_form_discard_prompt() {
    let mut form = new_form();
    type_text(&mut form, "https://example.com");
    form.handle_key(press(KeyCode::Esc));
    snap("link_form_discard_prompt", form);
}

#[test]
fn link_form_edit_existing() {
    snap(
        "link_form_edit_all_sections",
        LinkForm::edit(full_link(), spaces(), domains(), berlin()),
    );
}

#[test]
fn link_form_edit_password_change() {
    let mut form = LinkForm::edit(full_link(), spaces(), domains(), berlin());
    tab(&mut form, 4);
    form.handle_key(press(KeyCode::Right));
    tab(&mut form, 1);
    type_text(&mut form, "new-secret");
    snap("link_form_edit_password_change", form);
}

#[test]
fn link_form_edit_targeting_section() {
    let mut form = LinkForm::edit(full_link(), spaces(), domains(), berlin());
    tab(&mut form, 12);
    snap("link_form_edit_geo_rows_focused", form);
}

fn space_key(form: &mut SpaceForm, code: KeyCode) {
    form.handle_key(KeyMap::default().key_in(
        KeyEvent::new(code, KeyModifiers::NONE),
        crate::tui::keys::KeyContext::Forms,
    ));
}

#[test]
fn space_form_new() {
    snap("space_form_new_empty", SpaceForm::create());
}

#[test]
fn space_form_colour_picker() {
    let mut form = SpaceForm::create();
    for c in "Launch".chars() {
        space_key(&mut form, KeyCode::Char(c));
    }
    space_key(&mut form, KeyCode::Tab);
    for _ in 0..3 {
        space_key(&mut form, KeyCode::Right);
    }
    snap("space_form_colour_picker_green", form);
}

#[test]
fn space_form_errors() {
    let mut form = SpaceForm::create();
    form.handle_key(ctrl_key('s'));
    snap("space_form_name_required", form);
}

#[test]
fn space_form_edit_and_discard() {
    let mut form = SpaceForm::edit(spaces()[1].clone());
    space_key(&mut form, KeyCode::Char('!'));
    space_key(&mut form, KeyCode::Esc);
    snap("space_form_edit_discard_prompt", form);
}

fn ctrl_key(c: char) -> Key {
    ctrl(c)
}

/// Any terminal size draws without a panic, however little fits.
#[test]
fn forms_draw_at_every_size() {
    let mut editing = targeting(1, &[("germany", "https://example.de")]);
    editing.handle_key(press(KeyCode::Right));
    editing.handle_key(press(KeyCode::Enter));
    let mut picking = new_form();
    tab(&mut picking, 2);
    picking.handle_key(press(KeyCode::Enter));
    let forms: Vec<Form> = vec![
        new_form().into(),
        editing.into(),
        picking.into(),
        LinkForm::edit(full_link(), spaces(), domains(), berlin()).into(),
        SpaceForm::create().into(),
    ];
    for form in &forms {
        for width in [1, 4, 12, 30, 70, 80, 160] {
            for height in [1, 3, 6, 12, 20, 24, 50] {
                draw(form, width, height);
            }
        }
    }
}

#[test]
fn domain_form_with_an_error() {
    let mut domain = domains()[0].clone();
    domain.settings = Some(crate::domain::HostSettings {
        root_url: Some("https://example.com/".into()),
        robots: crate::domain::Robots::Custom("User-agent: *\n".into()),
        ..Default::default()
    });
    let mut form = DomainForm::edit(domain);
    for _ in 0..2 {
        form.handle_key(press(KeyCode::Tab));
    }
    for c in "not a url".chars() {
        form.handle_key(press(KeyCode::Char(c)));
    }
    form.handle_key(ctrl('s'));
    snap("domain_form_expired_url_refused", form);
}

/// `full_link` with two redirect rules.
fn link_with_rules() -> Link {
    let mut errors = FieldErrors::default();
    let mut link = full_link();
    link.options.rules = crate::domain::parse_rules(
        &[
            "language fr,de-CH => https://example.fr/launch",
            "schedule mon,fri 09-17 Europe/Paris => https://example.com/office-hours",
        ],
        &mut errors,
    );
    assert!(errors.is_empty(), "{errors:?}");
    link
}

/// Focus past the targeting rows, on the redirect rules.
fn on_redirect_rules() -> LinkForm {
    let mut form = LinkForm::edit(link_with_rules(), spaces(), domains(), berlin());
    tab(&mut form, 13);
    form
}

#[test]
fn link_form_edit_redirect_rules_section() {
    snap("link_form_edit_redirect_rules_focused", on_redirect_rules());
}

#[test]
fn link_form_redirect_rule_kind_picker() {
    let mut form = on_redirect_rules();
    keys(
        &mut form,
        &[KeyCode::Char('a'), KeyCode::Down, KeyCode::Down],
    );
    snap("link_form_redirect_rule_kind_picker", form);
}

#[test]
fn link_form_redirect_rule_error_on_its_row() {
    let mut form = on_redirect_rules();
    // A third rule, `cidr` (the sixth kind), with a range that is not one.
    keys(&mut form, &[KeyCode::Char('j'), KeyCode::Char('a')]);
    keys(&mut form, &[KeyCode::Down; 5]);
    keys(&mut form, &[KeyCode::Enter]);
    type_text(&mut form, "10.0.0.0/33");
    keys(&mut form, &[KeyCode::Enter]);
    type_text(&mut form, "https://intranet.example.com");
    keys(&mut form, &[KeyCode::Enter]);
    form.handle_key(ctrl('s'));
    snap("link_form_redirect_rule_error_on_its_row", form);
}

#[test]
fn link_form_redirect_rule_condition_shows_its_kinds_example() {
    let mut form = on_redirect_rules();
    // `schedule` is the fourth kind.
    keys(&mut form, &[KeyCode::Char('a')]);
    keys(&mut form, &[KeyCode::Down; 3]);
    keys(&mut form, &[KeyCode::Enter]);
    type_text(&mut form, "mon");
    snap("link_form_redirect_rule_condition_typed_with_example", form);
}

/// A server without link options (a phpShort one) refuses rules: the section says so, and the
/// rows stay as typed.
#[test]
fn link_form_redirect_rules_refused_by_a_server_without_options() {
    let mut form = on_redirect_rules();
    keys(&mut form, &[KeyCode::Char('J')]);
    form.handle_key(ctrl('s'));
    let mut errors = FieldErrors::default();
    errors.add(
        "rules",
        "this server keeps no link options (forwarding, indexing, previews and redirect rules \
         need a linkdeck server)",
    );
    form.save_failed(&Error::Validation(errors));
    snap("link_form_redirect_rules_no_options", form);
}
