//! The targeting rule editor: a table of rows (country → URL, platform → URL, or rotation URLs)
//! where `a` adds a row, Enter edits the selected cell in place (an input over the cell, or a
//! picker for the key), `Delete` removes a row and `K`/`J` (or Alt-↑/↓) move it.

use ratatui::crossterm::event::KeyCode;
use ratatui::text::{Line, Span};

use super::field::{TextField, clip};
use super::picker::{ListPicker, PickOutcome};
use super::{Body, Errors};
use crate::domain::{LinkField, RuleInput, TargetRule, TargetType, country_by_code};
use crate::tui::keys::{Action, Key};
use crate::tui::view::Ctx;

/// Columns left of a rule row: the list sits under the form's labels.
const ROW_INDENT: u16 = 4;

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RuleRow {
    pub key: String,
    pub value: String,
}

impl RuleRow {
    fn is_blank(&self) -> bool {
        self.key.trim().is_empty() && self.value.trim().is_empty()
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Column {
    Key,
    Value,
}

#[derive(Debug, Clone)]
enum Editor {
    Value(TextField),
    Key(ListPicker),
}

/// What a key did to the list.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RuleOutcome {
    /// Not for the list: the form moves focus or ignores it.
    Ignored,
    Handled,
    /// A row was added, removed, moved or edited.
    Changed,
}

#[derive(Debug, Clone)]
pub struct RuleList {
    kind: TargetType,
    rows: Vec<RuleRow>,
    cursor: usize,
    column: Column,
    editor: Option<Editor>,
    /// The open editor belongs to a row just added: picking its key goes on to its URL, and
    /// cancelling drops the row while it is still blank.
    adding: bool,
}

impl RuleList {
    /// `kind` is Geo, Platform or Rotation.
    pub fn new(kind: TargetType) -> RuleList {
        RuleList {
            kind,
            rows: Vec::new(),
            cursor: 0,
            column: if kind == TargetType::Rotation {
                Column::Value
            } else {
                Column::Key
            },
            editor: None,
            adding: false,
        }
    }

    pub fn with_rules(kind: TargetType, rules: &[TargetRule]) -> RuleList {
        let mut list = RuleList::new(kind);
        list.rows = rules
            .iter()
            .map(|r| RuleRow {
                key: r.key.clone(),
                value: r.value.clone(),
            })
            .collect();
        list
    }

    pub fn with_urls(urls: &[String]) -> RuleList {
        let mut list = RuleList::new(TargetType::Rotation);
        list.rows = urls
            .iter()
            .map(|u| RuleRow {
                key: String::new(),
                value: u.clone(),
            })
            .collect();
        list
    }

    #[cfg(test)]
    pub fn rows(&self) -> &[RuleRow] {
        &self.rows
    }

    /// The wire name of the list, the prefix of its errors (`geo.0.key`).
    pub fn wire_name(&self) -> &'static str {
        LinkField::target_list(self.kind)
            .unwrap_or(LinkField::Rotation)
            .name()
    }

    /// The rows as sent: in order, so row `i` is `geo.i` in the answer's errors.
    pub fn input(&self) -> Vec<RuleInput> {
        self.rows
            .iter()
            .map(|r| match self.kind {
                TargetType::Rotation => RuleInput::value(r.value.clone()),
                _ => RuleInput::new(r.key.clone(), r.value.clone()),
            })
            .collect()
    }

    pub fn is_editing(&self) -> bool {
        self.editor.is_some()
    }

    /// The key picker, when one is open (drawn over the form).
    pub fn picker(&self) -> Option<&ListPicker> {
        match &self.editor {
            Some(Editor::Key(picker)) => Some(picker),
            _ => None,
        }
    }

    /// Moves the cursor to the row an error names.
    pub fn focus_row(&mut self, row: usize) {
        if row < self.rows.len() {
            self.cursor = row;
        }
    }

    /// Keeps what the open cell input holds (before a save); true when something changed.
    pub fn commit(&mut self) -> bool {
        match self.editor.take() {
            Some(Editor::Value(field)) => {
                self.adding = false;
                self.set_value(field.value().trim().to_owned())
            }
            Some(Editor::Key(_)) => {
                self.adding = false;
                self.drop_blank();
                false
            }
            None => false,
        }
    }

    fn set_value(&mut self, value: String) -> bool {
        match self.rows.get_mut(self.cursor) {
            Some(row) if row.value != value => {
                row.value = value;
                true
            }
            _ => false,
        }
    }

    fn drop_blank(&mut self) {
        if self.rows.get(self.cursor).is_some_and(RuleRow::is_blank) {
            self.rows.remove(self.cursor);
            self.cursor = self.cursor.min(self.rows.len().saturating_sub(1));
        }
    }

    fn open_key_editor(&mut self) {
        let current = self.rows.get(self.cursor).map(|r| r.key.clone());
        let picker = match self.kind {
            TargetType::Geo => ListPicker::countries(current.as_deref().unwrap_or("")),
            _ => ListPicker::platforms(current.as_deref()),
        };
        self.editor = Some(Editor::Key(picker));
    }

    fn open_value_editor(&mut self) {
        let value = self
            .rows
            .get(self.cursor)
            .map(|r| r.value.clone())
            .unwrap_or_default();
        self.editor = Some(Editor::Value(TextField::new(value)));
        self.column = Column::Value;
    }

    /// Pastes into the open cell input or key search; false when none is open.
    pub fn paste(&mut self, text: &str) -> bool {
        match &mut self.editor {
            Some(Editor::Value(field)) => field.paste(text),
            Some(Editor::Key(picker)) => {
                picker.paste(text);
                true
            }
            None => false,
        }
    }

    pub fn handle_key(&mut self, key: &Key) -> RuleOutcome {
        match &mut self.editor {
            Some(Editor::Value(field)) => match (key.code, key.action) {
                (KeyCode::Enter, _) | (_, Some(Action::NextField | Action::PrevField)) => {
                    self.commit();
                    RuleOutcome::Changed
                }
                (_, Some(Action::Cancel)) if !key.is_text() => {
                    self.editor = None;
                    if self.adding {
                        self.adding = false;
                        self.drop_blank();
                    }
                    RuleOutcome::Changed
                }
                _ => {
                    field.handle_key(key);
                    RuleOutcome::Handled
                }
            },
            Some(Editor::Key(picker)) => match picker.handle_key(key) {
                PickOutcome::Stay => RuleOutcome::Handled,
                PickOutcome::Cancel => {
                    self.editor = None;
                    if self.adding {
                        self.adding = false;
                        self.drop_blank();
                    }
                    RuleOutcome::Changed
                }
                PickOutcome::Picked(choice) => {
                    if let Some(row) = self.rows.get_mut(self.cursor) {
                        row.key = choice.value;
                    }
                    if self.adding {
                        self.open_value_editor();
                    } else {
                        self.editor = None;
                    }
                    RuleOutcome::Changed
                }
            },
            None => self.handle_list_key(key),
        }
    }

    fn handle_list_key(&mut self, key: &Key) -> RuleOutcome {
        let last = self.rows.len().saturating_sub(1);
        match key.action {
            Some(Action::AddRow) => {
                let at = if self.rows.is_empty() {
                    0
                } else {
                    self.cursor + 1
                };
                self.rows.insert(at, RuleRow::default());
                self.cursor = at;
                self.adding = true;
                match self.kind {
                    TargetType::Rotation => self.open_value_editor(),
                    _ => {
                        self.column = Column::Key;
                        self.open_key_editor();
                    }
                }
                return RuleOutcome::Changed;
            }
            Some(Action::Select) if !self.rows.is_empty() => {
                match self.column {
                    Column::Key => self.open_key_editor(),
                    Column::Value => self.open_value_editor(),
                }
                return RuleOutcome::Handled;
            }
            Some(Action::RemoveRow) if !self.rows.is_empty() => return self.remove(),
            Some(Action::MoveRowUp) => return self.swap_up(),
            Some(Action::MoveRowDown) => return self.swap_down(),
            _ => {}
        }
        match key.code {
            KeyCode::Left | KeyCode::Char('h') if self.kind != TargetType::Rotation => {
                self.column = Column::Key;
                return RuleOutcome::Handled;
            }
            KeyCode::Right | KeyCode::Char('l') => {
                self.column = Column::Value;
                return RuleOutcome::Handled;
            }
            _ => {}
        }
        match key.action {
            Some(Action::Down) if self.cursor < last => {
                self.cursor += 1;
                RuleOutcome::Handled
            }
            Some(Action::Up) if self.cursor > 0 => {
                self.cursor -= 1;
                RuleOutcome::Handled
            }
            Some(Action::Top) => {
                self.cursor = 0;
                RuleOutcome::Handled
            }
            Some(Action::Bottom) => {
                self.cursor = last;
                RuleOutcome::Handled
            }
            _ => RuleOutcome::Ignored,
        }
    }

    fn remove(&mut self) -> RuleOutcome {
        self.rows.remove(self.cursor);
        self.cursor = self.cursor.min(self.rows.len().saturating_sub(1));
        RuleOutcome::Changed
    }

    fn swap_up(&mut self) -> RuleOutcome {
        if self.cursor == 0 || self.rows.is_empty() {
            return RuleOutcome::Handled;
        }
        self.rows.swap(self.cursor, self.cursor - 1);
        self.cursor -= 1;
        RuleOutcome::Changed
    }

    fn swap_down(&mut self) -> RuleOutcome {
        if self.cursor + 1 >= self.rows.len() {
            return RuleOutcome::Handled;
        }
        self.rows.swap(self.cursor, self.cursor + 1);
        self.cursor += 1;
        RuleOutcome::Changed
    }

    fn key_width(&self) -> u16 {
        match self.kind {
            TargetType::Geo => 26,
            TargetType::Platform => 12,
            _ => 0,
        }
    }

    fn key_header(&self) -> &'static str {
        match self.kind {
            TargetType::Geo => "country",
            TargetType::Platform => "platform",
            _ => "",
        }
    }

    /// How a key reads: a country's code with its name.
    fn key_text(&self, key: &str) -> String {
        match self.kind {
            TargetType::Geo => match country_by_code(key) {
                Some(c) => format!("{}  {}", c.code, c.name),
                None => key.to_owned(),
            },
            _ => key.to_owned(),
        }
    }

    /// Appends the table to `body`: a header, one line per row, its errors under it. The
    /// focused row is the body's focus when the list has focus.
    pub fn render_into(
        &self,
        body: &mut Body,
        width: u16,
        focused: bool,
        errors: &Errors,
        ctx: &Ctx,
    ) {
        let t = ctx.theme;
        let key_w = self.key_width();
        let number_w: u16 = 4;
        let value_w = width
            .saturating_sub(ROW_INDENT + number_w + key_w + 2)
            .max(8);
        let indent = " ".repeat(usize::from(ROW_INDENT));
        let list = self.wire_name();
        let header_text = if key_w > 0 {
            format!(
                "{indent}{:<nw$}{:<kw$}  URL",
                "#",
                self.key_header(),
                nw = usize::from(number_w),
                kw = usize::from(key_w)
            )
        } else {
            format!("{indent}{:<nw$}URL", "#", nw = usize::from(number_w))
        };
        let start = body.next();
        body.push(Line::styled(header_text, t.dim));
        if self.rows.is_empty() {
            // The marker shows where focus is even with nothing to select.
            let marker = if focused { "▶ " } else { "  " };
            body.push(Line::from(vec![
                Span::raw(" ".repeat(usize::from(ROW_INDENT - 2))),
                Span::styled(marker, t.accent),
                Span::styled("no rules yet: press ", t.dim),
                Span::styled(ctx.keys.first(Action::AddRow), t.accent),
                Span::styled(" to add one", t.dim),
            ]));
            if focused {
                body.focus = (start, body.next() - 1);
            }
            return;
        }
        for (i, row) in self.rows.iter().enumerate() {
            let selected = focused && i == self.cursor;
            let line_no = body.next();
            let marker = if selected { "▶ " } else { "  " };
            let mut spans = vec![
                Span::raw(" ".repeat(usize::from(ROW_INDENT - 2))),
                Span::styled(marker, t.accent),
                Span::styled(format!("{:<w$}", i + 1, w = usize::from(number_w)), t.dim),
            ];
            let cell_style = |column: Column| {
                if selected && self.column == column {
                    t.selected
                } else {
                    ratatui::style::Style::new()
                }
            };
            if key_w > 0 {
                let text = if row.key.is_empty() {
                    "(pick)".to_owned()
                } else {
                    self.key_text(&row.key)
                };
                spans.push(Span::styled(
                    format!("{:<w$}", clip(&text, key_w), w = usize::from(key_w)),
                    cell_style(Column::Key),
                ));
                spans.push(Span::raw("  "));
            }
            match (&self.editor, selected) {
                (Some(Editor::Value(field)), true) => {
                    let (span, col) = field.span(value_w, true, "", t.selected, t.dim);
                    let x = ROW_INDENT + number_w + if key_w > 0 { key_w + 2 } else { 0 };
                    body.cursor = col.map(|c| (line_no, x + c));
                    spans.push(span);
                }
                _ => {
                    let text = if row.value.is_empty() {
                        "(URL)".to_owned()
                    } else {
                        clip(&row.value, value_w)
                    };
                    spans.push(Span::styled(text, cell_style(Column::Value)));
                }
            }
            body.push(Line::from(spans));
            let messages: Vec<String> = [("key", self.key_header()), ("value", "URL")]
                .iter()
                .filter_map(|(part, name)| {
                    errors
                        .get(&format!("{list}.{i}.{part}"))
                        .map(|m| format!("{name}: {m}"))
                })
                .collect();
            if !messages.is_empty() {
                body.push_error(&messages.join("; "), ROW_INDENT + number_w, width, ctx);
            }
            if selected {
                body.keep = Some(line_no);
            }
        }
        // The whole table is the focused stop: every rule shows when there is room, not only
        // the selected one.
        if focused {
            body.focus = (start, body.next() - 1);
        }
    }
}

#[cfg(test)]
mod tests {
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
            .map(|r| (r.key.as_str(), r.value.as_str()))
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
}
