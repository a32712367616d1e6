//! The rule tables of the link form: targeting's rows (country → URL, platform → URL, or
//! rotation URLs) and the redirect rules' (kind | condition | URL, `redirect_rules.rs`). One
//! editor for all: `a` adds a row, Enter edits the selected cell in place (an input over the
//! cell, or a picker for a key), `Delete` removes a row and `K`/`J` (or Alt-↑/↓) move it.

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
/// The row number's column.
const NUMBER_WIDTH: u16 = 4;
/// Between two cells.
const GAP: u16 = 2;

/// What a table holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Table {
    /// A targeting list: geo, platform or rotation.
    Target(TargetType),
    /// The link's redirect rules.
    Redirect,
}

/// One column of a table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ColumnSpec {
    pub header: &'static str,
    /// Its width; 0 for a typed column sharing what is left.
    pub width: u16,
    /// The last part of the names of its errors (`geo.0.key`); empty when none names it.
    pub part: &'static str,
    /// Picked from a list rather than typed.
    pub pick: bool,
}

/// A targeting row's key, picked: `geo.0.key`.
const fn key(header: &'static str, width: u16) -> ColumnSpec {
    ColumnSpec {
        header,
        width,
        part: "key",
        pick: true,
    }
}

/// A targeting row's URL: `geo.0.value`.
const URL_VALUE: ColumnSpec = ColumnSpec {
    header: "URL",
    width: 0,
    part: "value",
    pick: false,
};

const GEO: [ColumnSpec; 2] = [key("country", 26), URL_VALUE];
const PLATFORM: [ColumnSpec; 2] = [key("platform", 12), URL_VALUE];
const ROTATION: [ColumnSpec; 1] = [URL_VALUE];

impl Table {
    fn columns(self) -> &'static [ColumnSpec] {
        match self {
            Table::Target(TargetType::Geo) => &GEO,
            Table::Target(TargetType::Platform) => &PLATFORM,
            Table::Target(_) => &ROTATION,
            Table::Redirect => &super::redirect_rules::COLUMNS,
        }
    }

    /// The wire name of the list, the prefix of its errors (`geo.0.key`).
    fn wire_name(self) -> &'static str {
        match self {
            Table::Target(kind) => LinkField::target_list(kind)
                .unwrap_or(LinkField::Rotation)
                .name(),
            Table::Redirect => LinkField::Rules.name(),
        }
    }

    /// The picker of the key column, starting on `current`.
    fn picker(self, current: &str) -> ListPicker {
        match self {
            Table::Target(TargetType::Geo) => ListPicker::countries(current),
            Table::Redirect => super::redirect_rules::kind_picker(current),
            Table::Target(_) => ListPicker::platforms(Some(current)),
        }
    }
}

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RuleRow {
    /// One per column of the table.
    pub cells: Vec<String>,
}

impl RuleRow {
    fn new(table: Table) -> RuleRow {
        RuleRow {
            cells: vec![String::new(); table.columns().len()],
        }
    }

    /// Nothing typed: a redirect rule's kind alone says nothing.
    fn is_blank(&self, table: Table) -> bool {
        let from = usize::from(table == Table::Redirect);
        self.cells[from..].iter().all(|c| c.trim().is_empty())
    }
}

#[derive(Debug, Clone)]
enum Editor {
    Text(TextField),
    Pick(ListPicker),
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
    table: Table,
    rows: Vec<RuleRow>,
    cursor: usize,
    /// The selected cell's column.
    column: usize,
    editor: Option<Editor>,
    /// The open editor belongs to a row just added: finishing a cell goes on to the next, and
    /// cancelling drops the row while it is still blank.
    adding: bool,
}

impl RuleList {
    /// `kind` is Geo, Platform or Rotation.
    pub fn new(kind: TargetType) -> RuleList {
        RuleList::of(Table::Target(kind))
    }

    pub fn of(table: Table) -> RuleList {
        RuleList {
            table,
            rows: Vec::new(),
            cursor: 0,
            column: 0,
            editor: None,
            adding: false,
        }
    }

    /// A table holding `rows`, one cell per column each.
    pub fn with_rows(table: Table, rows: Vec<Vec<String>>) -> RuleList {
        let mut list = RuleList::of(table);
        list.rows = rows.into_iter().map(|cells| RuleRow { cells }).collect();
        list
    }

    pub fn with_rules(kind: TargetType, rules: &[TargetRule]) -> RuleList {
        let rows = rules
            .iter()
            .map(|r| vec![r.key.clone(), r.value.clone()])
            .collect();
        RuleList::with_rows(Table::Target(kind), rows)
    }

    pub fn with_urls(urls: &[String]) -> RuleList {
        let rows = urls.iter().map(|u| vec![u.clone()]).collect();
        RuleList::with_rows(Table::Target(TargetType::Rotation), rows)
    }

    #[cfg(test)]
    pub fn rows(&self) -> &[RuleRow] {
        &self.rows
    }

    /// The selected row.
    #[cfg(test)]
    pub fn selected(&self) -> usize {
        self.cursor
    }

    /// The wire name of the list, the prefix of its errors (`geo.0.key`).
    pub fn wire_name(&self) -> &'static str {
        self.table.wire_name()
    }

    /// The targeting rows as sent: in order, so row `i` is `geo.i` in the answer's errors.
    pub fn input(&self) -> Vec<RuleInput> {
        self.rows
            .iter()
            .map(|r| match self.table {
                Table::Target(TargetType::Rotation) => RuleInput::value(r.cells[0].clone()),
                _ => RuleInput::new(r.cells[0].clone(), r.cells[1].clone()),
            })
            .collect()
    }

    /// The rows sent, by their place in the table: a redirect rule's blank rows are not.
    fn sent(&self) -> impl Iterator<Item = usize> + '_ {
        let table = self.table;
        (0..self.rows.len())
            .filter(move |i| table != Table::Redirect || !self.rows[*i].is_blank(table))
    }

    /// The rows [`RuleList::sent`] keeps.
    pub fn sent_rows(&self) -> impl Iterator<Item = &RuleRow> {
        self.sent().map(|i| &self.rows[i])
    }

    pub fn is_editing(&self) -> bool {
        self.editor.is_some()
    }

    /// The key picker, when one is open (drawn over the form).
    pub fn picker(&self) -> Option<&ListPicker> {
        match &self.editor {
            Some(Editor::Pick(picker)) => Some(picker),
            _ => None,
        }
    }

    /// Moves the cursor to the row an error names (its place in what was sent).
    pub fn focus_row(&mut self, sent: usize) {
        let row = self.sent().nth(sent);
        if let Some(row) = row {
            self.cursor = row;
        }
    }

    /// Keeps what the open cell input holds (before a save); true when something changed.
    pub fn commit(&mut self) -> bool {
        self.adding = false;
        match self.editor.take() {
            Some(Editor::Text(field)) => self.set_cell(field.value().trim().to_owned()),
            Some(Editor::Pick(_)) => {
                self.drop_blank();
                false
            }
            None => false,
        }
    }

    fn set_cell(&mut self, value: String) -> bool {
        match self
            .rows
            .get_mut(self.cursor)
            .and_then(|r| r.cells.get_mut(self.column))
        {
            Some(cell) if *cell != value => {
                *cell = value;
                true
            }
            _ => false,
        }
    }

    fn drop_blank(&mut self) {
        let table = self.table;
        if self
            .rows
            .get(self.cursor)
            .is_some_and(|r| r.is_blank(table))
        {
            self.rows.remove(self.cursor);
            self.cursor = self.cursor.min(self.rows.len().saturating_sub(1));
        }
    }

    fn cell(&self, column: usize) -> String {
        self.rows
            .get(self.cursor)
            .and_then(|r| r.cells.get(column))
            .cloned()
            .unwrap_or_default()
    }

    /// Opens the editor of the selected row's cell in `column`.
    fn open_editor(&mut self, column: usize) {
        self.column = column;
        let current = self.cell(column);
        self.editor = Some(if self.table.columns()[column].pick {
            Editor::Pick(self.table.picker(&current))
        } else {
            Editor::Text(TextField::new(current))
        });
    }

    /// After a cell of a row being added: on to its next cell, or done.
    fn next_cell(&mut self) {
        if self.adding && self.column + 1 < self.table.columns().len() {
            self.open_editor(self.column + 1);
        } else {
            self.adding = false;
            self.editor = None;
        }
    }

    /// Pastes into the open cell input or key search; false when none is open.
    pub fn paste(&mut self, text: &str) -> bool {
        match &mut self.editor {
            Some(Editor::Text(field)) => field.paste(text),
            Some(Editor::Pick(picker)) => {
                picker.paste(text);
                true
            }
            None => false,
        }
    }

    pub fn handle_key(&mut self, key: &Key) -> RuleOutcome {
        match &mut self.editor {
            Some(Editor::Text(field)) => match (key.code, key.action) {
                (KeyCode::Enter, _) | (_, Some(Action::NextField)) => {
                    let value = field.value().trim().to_owned();
                    self.set_cell(value);
                    self.next_cell();
                    RuleOutcome::Changed
                }
                (_, Some(Action::PrevField)) => {
                    self.commit();
                    RuleOutcome::Changed
                }
                (_, Some(Action::Cancel)) if !key.is_text() => {
                    self.cancel();
                    RuleOutcome::Changed
                }
                _ => {
                    field.handle_key(key);
                    RuleOutcome::Handled
                }
            },
            Some(Editor::Pick(picker)) => match picker.handle_key(key) {
                PickOutcome::Stay => RuleOutcome::Handled,
                PickOutcome::Cancel => {
                    self.cancel();
                    RuleOutcome::Changed
                }
                PickOutcome::Picked(choice) => {
                    self.set_cell(choice.value);
                    self.next_cell();
                    RuleOutcome::Changed
                }
            },
            None => self.handle_list_key(key),
        }
    }

    /// Closes the editor, leaving the cell as it was; a row just added goes while blank.
    fn cancel(&mut self) {
        self.editor = None;
        if self.adding {
            self.adding = false;
            self.drop_blank();
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
                self.rows.insert(at, RuleRow::new(self.table));
                self.cursor = at;
                self.adding = true;
                self.open_editor(0);
                return RuleOutcome::Changed;
            }
            Some(Action::Select) if !self.rows.is_empty() => {
                self.open_editor(self.column);
                return RuleOutcome::Handled;
            }
            Some(Action::RemoveRow) if !self.rows.is_empty() => return self.remove(),
            Some(Action::MoveRowUp) => return self.swap_up(),
            Some(Action::MoveRowDown) => return self.swap_down(),
            _ => {}
        }
        match key.code {
            KeyCode::Left | KeyCode::Char('h') => {
                self.column = self.column.saturating_sub(1);
                return RuleOutcome::Handled;
            }
            KeyCode::Right | KeyCode::Char('l') => {
                self.column = (self.column + 1).min(self.table.columns().len() - 1);
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

    /// Each column's width in a table `width` wide: typed columns share what the others leave,
    /// the first of two taking two fifths.
    fn widths(&self, width: u16) -> Vec<u16> {
        let columns = self.table.columns();
        let gaps = GAP * u16::try_from(columns.len() - 1).unwrap_or(0);
        let fixed: u16 = columns.iter().map(|c| c.width).sum();
        let rest = width
            .saturating_sub(ROW_INDENT + NUMBER_WIDTH + gaps + fixed)
            .max(8);
        let shared = columns.iter().filter(|c| c.width == 0).count();
        let mut left = rest;
        let mut seen = 0;
        columns
            .iter()
            .map(|c| {
                if c.width > 0 {
                    return c.width;
                }
                seen += 1;
                let w = if seen < shared { rest * 2 / 5 } else { left };
                left = left.saturating_sub(w);
                w.max(8)
            })
            .collect()
    }

    /// How a cell reads: a country's code with its name; an empty one says what goes there.
    fn cell_text(&self, row: &RuleRow, column: usize) -> (String, bool) {
        let value = &row.cells[column];
        if !value.is_empty() {
            let text = match self.table {
                Table::Target(TargetType::Geo) if column == 0 => match country_by_code(value) {
                    Some(c) => format!("{}  {}", c.code, c.name),
                    None => value.clone(),
                },
                _ => value.clone(),
            };
            return (text, false);
        }
        (self.placeholder(row, column).to_owned(), true)
    }

    /// What an empty cell shows: `(pick)`, `(URL)`, or an example of a rule's condition.
    fn placeholder(&self, row: &RuleRow, column: usize) -> &'static str {
        if self.table.columns()[column].pick {
            "(pick)"
        } else if self.is_condition(column) {
            super::redirect_rules::example(&row.cells[0])
        } else {
            "(URL)"
        }
    }

    /// Whether `column` holds a redirect rule's condition, whose form depends on its kind.
    fn is_condition(&self, column: usize) -> bool {
        let spec = self.table.columns()[column];
        self.table == Table::Redirect && !spec.pick && spec.part.is_empty()
    }

    /// The messages of the row sent as `sent`, each led by the column it is about.
    fn row_errors(&self, sent: usize, errors: &Errors) -> Vec<String> {
        let name = format!("{}.{sent}", self.wire_name());
        errors
            .iter()
            .filter_map(|(n, m)| {
                let rest = n.strip_prefix(&name)?;
                if rest.is_empty() {
                    return Some(m);
                }
                let part = rest.strip_prefix('.')?;
                let column = self.table.columns().iter().find(|c| c.part == part);
                Some(format!("{}: {m}", column.map_or(part, |c| c.header)))
            })
            .collect()
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
        let columns = self.table.columns();
        let widths = self.widths(width);
        let indent = " ".repeat(usize::from(ROW_INDENT));
        let mut header = format!("{indent}{:<w$}", "#", w = usize::from(NUMBER_WIDTH));
        for (i, (column, w)) in columns.iter().zip(&widths).enumerate() {
            if i + 1 < columns.len() {
                header.push_str(&format!("{:<w$}", column.header, w = usize::from(w + GAP)));
            } else {
                header.push_str(column.header);
            }
        }
        let start = body.next();
        body.push(Line::styled(header, t.dim));
        // Errors of the whole list (`rules`: too many, or none kept by this server).
        if let Some(message) = errors.get(self.wire_name()) {
            body.push_error(&message, ROW_INDENT + NUMBER_WIDTH, width, ctx);
        }
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
        let sent: Vec<usize> = self.sent().collect();
        for (i, row) in self.rows.iter().enumerate() {
            let selected = focused && i == self.cursor;
            let line_no = body.next();
            let marker = if selected { "▶ " } else { "  " };
            let mut spans = vec![
                Span::raw(" ".repeat(usize::from(ROW_INDENT - 2))),
                Span::styled(marker, t.accent),
                Span::styled(
                    format!("{:<w$}", i + 1, w = usize::from(NUMBER_WIDTH)),
                    t.dim,
                ),
            ];
            let mut x = ROW_INDENT + NUMBER_WIDTH;
            // A condition being typed has its kind's example under it.
            let mut example = None;
            for (column, w) in widths.iter().copied().enumerate() {
                let last = column + 1 == widths.len();
                let here = selected && self.column == column;
                match (&self.editor, here) {
                    (Some(Editor::Text(field)), true) => {
                        let (span, col) = field.span(w, true, "", t.selected, t.dim);
                        body.cursor = col.map(|c| (line_no, x + c));
                        spans.push(span);
                        example = Some((x, self.placeholder(row, column)))
                            .filter(|(_, e)| self.is_condition(column) && !e.is_empty());
                    }
                    _ => {
                        let (text, empty) = self.cell_text(row, column);
                        let style = match (here, empty) {
                            (true, _) => t.selected,
                            (false, true) => t.dim,
                            (false, false) => ratatui::style::Style::new(),
                        };
                        let text = clip(&text, w);
                        let text = if last {
                            text
                        } else {
                            format!("{text:<w$}", w = usize::from(w))
                        };
                        spans.push(Span::styled(text, style));
                    }
                }
                if !last {
                    spans.push(Span::raw(" ".repeat(usize::from(GAP))));
                }
                x += w + GAP;
            }
            body.push(Line::from(spans));
            if let Some((x, example)) = example {
                body.push(Line::from(vec![
                    Span::raw(" ".repeat(usize::from(x))),
                    Span::styled(
                        clip(&format!("e.g. {example}"), width.saturating_sub(x)),
                        t.dim,
                    ),
                ]));
            }
            let messages = match sent.iter().position(|s| *s == i) {
                Some(at) => self.row_errors(at, errors),
                None => Vec::new(),
            };
            if !messages.is_empty() {
                body.push_error(&messages.join("; "), ROW_INDENT + NUMBER_WIDTH, width, ctx);
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
mod tests;
