//! How a window over rows scrolls: the one rule every scrolled list and the form keep their
//! cursor in view by.

/// The scroll offset of a window `rows` tall that shows row `row` and moves the least from
/// `offset`: every scrolled list and the form keep their cursor in view this way.
pub fn offset_showing(row: usize, offset: usize, rows: usize) -> usize {
    if row < offset {
        row
    } else if row >= offset + rows {
        row + 1 - rows
    } else {
        offset
    }
}

/// A cursor over a list of `len` rows held whole (spaces, domains), and the window of `rows`
/// that shows it: the moves every such pane makes.
#[derive(Debug, Clone, Copy, Default)]
pub struct ListCursor {
    pub cursor: usize,
    pub offset: usize,
    pub rows: usize,
}

impl ListCursor {
    pub fn set_rows(&mut self, rows: usize) {
        self.rows = rows.max(1);
        self.scroll();
    }

    fn scroll(&mut self) {
        self.offset = offset_showing(self.cursor, self.offset, self.rows);
    }

    /// Moves to `index`, kept within the `len` rows.
    pub fn move_to(&mut self, index: isize, len: usize) {
        let last = len.saturating_sub(1);
        self.cursor = usize::try_from(index.max(0)).unwrap_or(0).min(last);
        self.scroll();
    }

    pub fn select(&mut self, index: usize, len: usize) {
        self.move_to(isize::try_from(index).unwrap_or(isize::MAX), len);
    }

    /// The row a click at line `y` of a bordered table in `area` (a header row under the
    /// border) lands on.
    pub fn index_at(&self, area: ratatui::layout::Rect, y: u16, len: usize) -> Option<usize> {
        let first_row = area.y + 2;
        if y < first_row || y >= area.bottom().saturating_sub(1) {
            return None;
        }
        let index = self.offset + usize::from(y - first_row);
        (index < len).then_some(index)
    }

    /// Draws `table` in `area` with this cursor's row highlighted.
    pub fn render(
        &self,
        table: ratatui::widgets::Table,
        area: ratatui::layout::Rect,
        buf: &mut ratatui::buffer::Buffer,
        theme: &super::theme::Theme,
    ) {
        let table = table
            .row_highlight_style(theme.selected)
            .highlight_symbol("▶ ")
            .highlight_spacing(ratatui::widgets::HighlightSpacing::Always);
        let mut state =
            ratatui::widgets::TableState::default().with_selected(Some(self.cursor - self.offset));
        ratatui::widgets::StatefulWidget::render(table, area, buf, &mut state);
    }

    /// A movement key; false for any other.
    pub fn handle_move(&mut self, action: Option<super::keys::Action>, len: usize) -> bool {
        use super::keys::Action;
        let cursor = isize::try_from(self.cursor).unwrap_or(0);
        let page = isize::try_from(self.rows.saturating_sub(1).max(1)).unwrap_or(1);
        let to = match action {
            Some(Action::Down) => cursor + 1,
            Some(Action::Up) => cursor - 1,
            Some(Action::PageDown) => cursor + page,
            Some(Action::PageUp) => cursor - page,
            Some(Action::HalfPageDown) => cursor + (page / 2).max(1),
            Some(Action::HalfPageUp) => cursor - (page / 2).max(1),
            Some(Action::Top) => 0,
            Some(Action::Bottom) => isize::MAX,
            _ => return false,
        };
        self.move_to(to, len);
        true
    }
}
