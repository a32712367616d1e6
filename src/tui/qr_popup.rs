//! The QR code of the selected link's short URL, in a popup (`Q`): two modules a character,
//! black on white whatever the theme — a phone needs that contrast — with the quiet zone, and
//! the URL under it. A window too small to hold it says so instead of drawing a code that
//! cannot be scanned.

use ratatui::buffer::Buffer;
use ratatui::layout::{Constraint, Rect};
use ratatui::style::{Color, Style};
use ratatui::text::Line;
use ratatui::widgets::{Paragraph, Widget, Wrap};

use super::theme::Theme;
use crate::domain::into_shown;
use crate::qr::Qr;

/// A drawn code: its modules, quiet zone included, and the URL it holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct QrPopup {
    /// The URL as it is shown under the code ([`into_shown`]).
    url: String,
    side: usize,
    dark: Vec<bool>,
    /// Why there is no code (a URL too long for one).
    error: Option<String>,
}

impl QrPopup {
    pub fn new(url: &str) -> QrPopup {
        match Qr::new(url) {
            Ok(qr) => {
                let side = qr.side();
                let dark = (0..side * side)
                    .map(|i| qr.dark(i % side, i / side))
                    .collect();
                QrPopup {
                    url: into_shown(url.to_owned()),
                    side,
                    dark,
                    error: None,
                }
            }
            Err(e) => QrPopup {
                url: into_shown(url.to_owned()),
                side: 0,
                dark: Vec::new(),
                error: Some(e),
            },
        }
    }

    fn is_dark(&self, x: usize, y: usize) -> bool {
        y < self.side && self.dark[y * self.side + x]
    }

    /// The popup's size: the code, the URL and the border.
    fn size(&self) -> (u16, u16) {
        let side = u16::try_from(self.side).unwrap_or(u16::MAX);
        let url = u16::try_from(self.url.chars().count()).unwrap_or(u16::MAX);
        (
            side.max(url).saturating_add(2),
            side.div_ceil(2).saturating_add(3),
        )
    }

    pub fn render(&self, area: Rect, buf: &mut Buffer, theme: &Theme) {
        let (width, height) = self.size();
        if let Some(error) = &self.error {
            let area = area.centered(
                Constraint::Length(area.width.min(60)),
                Constraint::Length(5.min(area.height)),
            );
            if let Some(inner) = super::dialog::dialog(area, buf, " QR code ", theme, theme.error) {
                Paragraph::new(error.as_str())
                    .wrap(Wrap { trim: true })
                    .render(inner, buf);
            }
            return;
        }
        if width > area.width || height > area.height {
            let area = area.centered(
                Constraint::Length(area.width.min(50)),
                Constraint::Length(6.min(area.height)),
            );
            if let Some(inner) =
                super::dialog::dialog(area, buf, " QR code ", theme, theme.focused_border)
            {
                Paragraph::new(vec![
                    Line::raw(format!(
                        "The window is too small for this code: it needs {width}×{height}."
                    )),
                    Line::styled(self.url.clone(), theme.accent),
                ])
                .wrap(Wrap { trim: true })
                .render(inner, buf);
            }
            return;
        }
        let area = area.centered(Constraint::Length(width), Constraint::Length(height));
        let Some(inner) =
            super::dialog::dialog(area, buf, " QR code ", theme, theme.focused_border)
        else {
            return;
        };
        let side = u16::try_from(self.side).unwrap_or(u16::MAX);
        let left = inner.x + (inner.width.saturating_sub(side)) / 2;
        let (black, white) = (Color::Black, Color::White);
        for row in 0..side.div_ceil(2) {
            let y = usize::from(row) * 2;
            for col in 0..side {
                let x = usize::from(col);
                let top = if self.is_dark(x, y) { black } else { white };
                let bottom = if self.is_dark(x, y + 1) { black } else { white };
                if let Some(cell) = buf.cell_mut((left + col, inner.y + row)) {
                    cell.set_symbol("▀")
                        .set_style(Style::default().fg(top).bg(bottom));
                }
            }
        }
        let url_row = Rect {
            y: inner.y + side.div_ceil(2),
            height: 1,
            ..inner
        };
        Paragraph::new(Line::styled(self.url.clone(), theme.accent))
            .centered()
            .render(url_row, buf);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_popup_draws_every_module_and_the_url() {
        let popup = QrPopup::new("http://127.0.0.1:8080/spring");
        let area = Rect::new(0, 0, 100, 30);
        let mut buf = Buffer::empty(area);
        popup.render(area, &mut buf, &Theme::new(crate::config::Theme::Dark));
        let text: String = buf.content().iter().map(|c| c.symbol()).collect();
        assert!(text.contains("http://127.0.0.1:8080/spring"));
        // Every module of the code is a half block, with black or white on both halves.
        let blocks = buf.content().iter().filter(|c| c.symbol() == "▀").count();
        assert_eq!(blocks, popup.side * popup.side.div_ceil(2));
        // Top-left of the code: the quiet zone is white.
        let first = buf.content().iter().find(|c| c.symbol() == "▀").unwrap();
        assert_eq!((first.fg, first.bg), (Color::White, Color::White));
    }

    #[test]
    fn a_small_window_says_so() {
        let popup = QrPopup::new("http://127.0.0.1:8080/spring");
        let area = Rect::new(0, 0, 30, 12);
        let mut buf = Buffer::empty(area);
        popup.render(area, &mut buf, &Theme::new(crate::config::Theme::Dark));
        let text: String = buf.content().iter().map(|c| c.symbol()).collect();
        assert!(text.contains("too small"), "{text}");
    }
}
