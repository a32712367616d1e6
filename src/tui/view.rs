//! What every view shares: the answer to a key, and what a render needs besides the view itself.

use jiff::Timestamp;
use jiff::tz::TimeZone;

use super::keys::KeyMap;
use super::named::Named;
use super::theme::Theme;

/// What a view did with a key; the app routes unhandled keys onward (modal → pane → global).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    Ignored,
    Handled,
    /// Show this space's links.
    OpenSpace(Named),
}

/// Read-only context for rendering.
pub struct Ctx<'a> {
    pub theme: &'a Theme,
    pub keys: &'a KeyMap,
    pub now: Timestamp,
    pub tz: &'a TimeZone,
    pub focused: bool,
    pub spinner: char,
}

pub const SPINNER: [char; 8] = ['⠋', '⠙', '⠹', '⠸', '⠼', '⠴', '⠦', '⠧'];

impl Ctx<'_> {
    /// Draws a pane's rounded frame titled `title` (bright when focused) and returns its inside.
    pub fn pane(
        &self,
        title: String,
        area: ratatui::layout::Rect,
        buf: &mut ratatui::buffer::Buffer,
    ) -> ratatui::layout::Rect {
        use ratatui::widgets::Widget;
        let border = if self.focused {
            self.theme.focused_border
        } else {
            self.theme.border
        };
        let block = self.theme.panel(title, border);
        let inner = block.inner(area);
        block.render(area, buf);
        inner
    }
}
