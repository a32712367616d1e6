//! List pickers that open over a form: a space, a domain, a platform, or a country looked up by
//! name or code. A picker answers with the chosen item's value; it never changes the form itself.

use ratatui::buffer::Buffer;
use ratatui::layout::{Constraint, Position, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Clear, Paragraph, Widget};

use super::field::{TextField, clip};
use crate::domain::{Color, Platform, search_countries};
use crate::tui::keys::{Action, Key};
use crate::tui::view::Ctx;

/// One item: what the form receives, and how it reads.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Choice {
    pub value: String,
    pub label: String,
    /// A space's colour, drawn as a dot before the label.
    pub dot: Option<Color>,
}

impl Choice {
    pub fn new(value: impl Into<String>, label: impl Into<String>) -> Choice {
        Choice {
            value: value.into(),
            label: label.into(),
            dot: None,
        }
    }
}

/// Where a picker's items come from.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Source {
    Fixed,
    /// Looked up again from the typed term on every change.
    Countries,
}

#[derive(Debug, Clone)]
pub struct ListPicker {
    title: String,
    items: Vec<Choice>,
    source: Source,
    search: Option<TextField>,
    cursor: usize,
}

/// What a key did to a picker.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PickOutcome {
    Stay,
    Cancel,
    Picked(Choice),
}

impl ListPicker {
    /// A picker over `items`, starting on the one whose value is `current`.
    pub fn new(title: impl Into<String>, items: Vec<Choice>, current: Option<&str>) -> ListPicker {
        let cursor = current
            .and_then(|c| items.iter().position(|i| i.value == c))
            .unwrap_or(0);
        ListPicker {
            title: title.into(),
            items,
            source: Source::Fixed,
            search: None,
            cursor,
        }
    }

    /// The nine platforms a rule can name.
    pub fn platforms(current: Option<&str>) -> ListPicker {
        let items = Platform::ALL
            .iter()
            .map(|p| Choice::new(p.name(), p.name()))
            .collect();
        let current = current.and_then(Platform::parse).map(Platform::name);
        ListPicker::new(" Platform ", items, current)
    }

    /// Countries by name or ISO code, narrowed as the person types; starts from `term`.
    pub fn countries(term: &str) -> ListPicker {
        let mut picker = ListPicker {
            title: " Country ".into(),
            items: Vec::new(),
            source: Source::Countries,
            search: Some(TextField::new(term)),
            cursor: 0,
        };
        picker.lookup();
        picker
    }

    fn lookup(&mut self) {
        if self.source == Source::Countries {
            let term = self.search.as_ref().map_or("", TextField::value);
            self.items = search_countries(term)
                .into_iter()
                .map(|c| Choice::new(c.code, format!("{}  {}", c.code, c.name)))
                .collect();
            self.cursor = 0;
        }
    }

    pub fn selected(&self) -> Option<&Choice> {
        self.items.get(self.cursor)
    }

    pub fn handle_key(&mut self, key: &Key) -> PickOutcome {
        let last = self.items.len().saturating_sub(1);
        // With a search line, letters are typed; only arrows and page keys move.
        let action = if self.search.is_some() && key.is_text() {
            None
        } else {
            key.action
        };
        match action {
            Some(Action::Cancel) => return PickOutcome::Cancel,
            Some(Action::Select) => {
                return match self.selected() {
                    Some(choice) => PickOutcome::Picked(choice.clone()),
                    None => PickOutcome::Stay,
                };
            }
            Some(Action::Down) => self.cursor = (self.cursor + 1).min(last),
            Some(Action::Up) => self.cursor = self.cursor.saturating_sub(1),
            Some(Action::PageDown) => self.cursor = (self.cursor + 10).min(last),
            Some(Action::PageUp) => self.cursor = self.cursor.saturating_sub(10),
            Some(Action::Top) => self.cursor = 0,
            Some(Action::Bottom) => self.cursor = last,
            _ => {
                if let Some(search) = &mut self.search
                    && search.handle_key(key)
                {
                    self.lookup();
                }
            }
        }
        PickOutcome::Stay
    }

    pub fn paste(&mut self, text: &str) {
        if let Some(search) = &mut self.search
            && search.paste(text)
        {
            self.lookup();
        }
    }

    /// Draws the picker centred in `area`; returns the cursor of its search line.
    pub fn render(&self, area: Rect, buf: &mut Buffer, ctx: &Ctx) -> Option<Position> {
        let t = ctx.theme;
        let search_lines = if self.search.is_some() { 2 } else { 0 };
        let wanted = u16::try_from(self.items.len().max(1)).unwrap_or(u16::MAX) + search_lines + 2;
        let height = wanted.min(area.height.saturating_sub(2)).max(5);
        let width = 44.min(area.width.saturating_sub(4));
        let rect = area.centered(Constraint::Length(width), Constraint::Length(height));
        Clear.render(rect, buf);
        let block = t.panel(self.title.clone(), t.focused_border);
        let inner = block.inner(rect);
        block.render(rect, buf);
        if inner.height == 0 || inner.width < 4 {
            return None;
        }
        let mut y = inner.y;
        let mut cursor = None;
        if let Some(search) = &self.search {
            let label = "find ";
            let width = inner.width.saturating_sub(5);
            let (span, col) = search.span(width, true, "", t.selected, t.dim);
            Line::from(vec![Span::styled(label, t.dim), span]).render(
                Rect {
                    y,
                    height: 1,
                    ..inner
                },
                buf,
            );
            cursor = col.map(|c| Position::new(inner.x + 5 + c, y));
            y += 2;
        }
        let rows = usize::from(inner.bottom().saturating_sub(y));
        if self.items.is_empty() {
            Paragraph::new(Line::styled("nothing matches", t.dim)).render(
                Rect {
                    y,
                    height: 1,
                    ..inner
                },
                buf,
            );
            return cursor;
        }
        let skip = self.cursor.saturating_sub(rows.saturating_sub(1));
        for (i, item) in self.items.iter().enumerate().skip(skip).take(rows) {
            let selected = i == self.cursor;
            let mut spans = vec![Span::raw(if selected { "▶ " } else { "  " })];
            if let Some(color) = item.dot {
                spans.push(Span::styled("● ", t.space(color)));
            }
            spans.push(Span::raw(clip(
                &item.label,
                inner
                    .width
                    .saturating_sub(if item.dot.is_some() { 4 } else { 2 }),
            )));
            let mut line = Line::from(spans);
            if selected {
                line = line.style(t.selected);
            }
            let row = Rect {
                y,
                height: 1,
                ..inner
            };
            if selected {
                buf.set_style(row, t.selected);
            }
            line.render(row, buf);
            y += 1;
        }
        cursor
    }
}

#[cfg(test)]
mod tests {
    use ratatui::crossterm::event::{KeyCode, KeyModifiers};

    use super::*;

    fn key(code: KeyCode) -> Key {
        crate::tui::keys::KeyMap::default().key_in(
            ratatui::crossterm::event::KeyEvent::new(code, KeyModifiers::NONE),
            crate::tui::keys::KeyContext::Forms,
        )
    }

    #[test]
    fn country_lookup_by_name_or_code() {
        let mut picker = ListPicker::countries("");
        for c in "germ".chars() {
            picker.handle_key(&key(KeyCode::Char(c)));
        }
        assert_eq!(picker.selected().unwrap().value, "DE");
        let mut picker = ListPicker::countries("");
        picker.paste("us");
        assert_eq!(picker.selected().unwrap().value, "US");
        match picker.handle_key(&key(KeyCode::Enter)) {
            PickOutcome::Picked(choice) => assert_eq!(choice.value, "US"),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn platform_picker_starts_on_the_current_platform_and_moves() {
        let mut picker = ListPicker::platforms(Some("os x"));
        assert_eq!(picker.selected().unwrap().value, "OS X");
        picker.handle_key(&key(KeyCode::Down));
        assert_eq!(picker.selected().unwrap().value, "Linux");
        assert_eq!(picker.handle_key(&key(KeyCode::Esc)), PickOutcome::Cancel);
    }
}
