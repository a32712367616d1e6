//! Keys on the rule tables: adding, editing in place, moving and removing rows.

use super::*;

use ratatui::crossterm::event::{KeyEvent, KeyModifiers};

use crate::tui::keys::{KeyContext, KeyMap};

fn key(code: KeyCode) -> Key {
    press(code, KeyModifiers::NONE)
}

fn press(code: KeyCode, modifiers: KeyModifiers) -> Key {
    KeyMap::default().key_in(KeyEvent::new(code, modifiers), KeyContext::Forms)
}

fn type_text(list: &mut RuleList, text: &str) {
    for c in text.chars() {
        list.handle_key(&key(KeyCode::Char(c)));
    }
}

fn values(list: &RuleList) -> Vec<(&str, &str)> {
    list.rows()
        .iter()
        .map(|r| match r.cells.as_slice() {
            [url] => ("", url.as_str()),
            [key, url] => (key.as_str(), url.as_str()),
            other => panic!("not a targeting row: {other:?}"),
        })
        .collect()
}

#[test]
fn adding_a_geo_row_picks_the_country_then_types_the_url() {
    let mut list = RuleList::new(TargetType::Geo);
    assert_eq!(
        list.handle_key(&key(KeyCode::Char('a'))),
        RuleOutcome::Changed
    );
    assert!(list.picker().is_some());
    type_text(&mut list, "germany");
    list.handle_key(&key(KeyCode::Enter));
    type_text(&mut list, "https://de.example.com");
    list.handle_key(&key(KeyCode::Enter));
    assert!(!list.is_editing());
    assert_eq!(values(&list), [("DE", "https://de.example.com")]);
}

#[test]
fn cancelling_a_new_row_drops_it() {
    let mut list = RuleList::new(TargetType::Platform);
    list.handle_key(&key(KeyCode::Char('a')));
    list.handle_key(&key(KeyCode::Esc));
    assert!(list.rows().is_empty());
}

#[test]
fn enter_edits_the_selected_cell_in_place() {
    let mut list = RuleList::with_urls(&["https://a.io".into(), "https://b.io".into()]);
    list.handle_key(&key(KeyCode::Char('j')));
    list.handle_key(&key(KeyCode::Enter));
    type_text(&mut list, "/x");
    list.handle_key(&key(KeyCode::Enter));
    assert_eq!(
        values(&list),
        [("", "https://a.io"), ("", "https://b.io/x")]
    );
    // Esc leaves the cell as it was.
    list.handle_key(&key(KeyCode::Enter));
    type_text(&mut list, "zzz");
    list.handle_key(&key(KeyCode::Esc));
    assert_eq!(values(&list)[1], ("", "https://b.io/x"));
}

#[test]
fn rows_move_and_go() {
    let mut list = RuleList::with_urls(&["https://a.io".into(), "https://b.io".into()]);
    list.handle_key(&key(KeyCode::Char('J')));
    assert_eq!(values(&list)[1].1, "https://a.io");
    list.handle_key(&press(KeyCode::Up, KeyModifiers::ALT));
    assert_eq!(values(&list)[0].1, "https://a.io");
    list.handle_key(&key(KeyCode::Delete));
    assert_eq!(values(&list), [("", "https://b.io")]);
}

#[test]
fn platform_keys_come_from_the_nine_platforms() {
    let mut list = RuleList::new(TargetType::Platform);
    list.handle_key(&key(KeyCode::Char('a')));
    list.handle_key(&key(KeyCode::Down));
    list.handle_key(&key(KeyCode::Enter));
    type_text(&mut list, "https://play.example.com");
    list.handle_key(&key(KeyCode::Enter));
    assert_eq!(values(&list), [("Android", "https://play.example.com")]);
    assert_eq!(
        list.input(),
        [RuleInput::new("Android", "https://play.example.com")]
    );
}
