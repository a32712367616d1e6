//! The QR code of the selected link's short URL, in a popup (`Q`): two modules a character,
//! black on white whatever the colour theme — a phone needs that contrast — or in the
//! terminal's own ink where there are no colours, with the quiet zone, and
//! the URL under it. A window too small to hold it says so instead of drawing a code that
//! cannot be scanned.

use ratatui::buffer::Buffer;
use ratatui::layout::{Constraint, Rect};
use ratatui::style::{Color, Style};
use ratatui::text::Line;
use ratatui::widgets::{Paragraph, Widget, Wrap};

use super::theme::{Theme, ThemeName};
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
        // Without colours (mono, `NO_COLOR`, which the terminal layer honours too) the code is
        // drawn in the terminal's own ink, by block shape: the light modules in ink on a dark
        // background, the dark ones on a light background.
        let ink_is_light = !theme.light_background;
        for row in 0..side.div_ceil(2) {
            let y = usize::from(row) * 2;
            for col in 0..side {
                let x = usize::from(col);
                let (top, bottom) = (self.is_dark(x, y), self.is_dark(x, y + 1));
                let Some(cell) = buf.cell_mut((left + col, inner.y + row)) else {
                    continue;
                };
                if theme.name == ThemeName::Mono {
                    let ink = |dark: bool| dark != ink_is_light;
                    cell.set_symbol(match (ink(top), ink(bottom)) {
                        (true, true) => "█",
                        (true, false) => "▀",
                        (false, true) => "▄",
                        (false, false) => " ",
                    })
                    .set_style(Style::default());
                } else {
                    let colour = |dark: bool| if dark { black } else { white };
                    cell.set_symbol("▀")
                        .set_style(Style::default().fg(colour(top)).bg(colour(bottom)));
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

    /// Reads a drawn code back as a phone would see it on a terminal with `ink` on `paper`
    /// (grey levels), each module four pixels a side.
    fn decode(buf: &Buffer, ink: u8, paper: u8) -> Option<String> {
        let area = buf.area;
        let scale = 4usize;
        let (w, h) = (
            usize::from(area.width) * scale,
            usize::from(area.height) * 2 * scale,
        );
        let mut grey = vec![paper; w * h];
        for y in 0..area.height {
            for x in 0..area.width {
                let cell = &buf[(x, y)];
                let (top, bottom) = match cell.symbol() {
                    "█" => (true, true),
                    "▀" => (true, false),
                    "▄" => (false, true),
                    _ => (false, false),
                };
                for (half, inked) in [(0, top), (1, bottom)] {
                    for dy in 0..scale {
                        for dx in 0..scale {
                            let px = usize::from(x) * scale + dx;
                            let py = (usize::from(y) * 2 + half) * scale + dy;
                            grey[py * w + px] = if inked { ink } else { paper };
                        }
                    }
                }
            }
        }
        let mut image = rqrr::PreparedImage::prepare_from_greyscale(w, h, |x, y| grey[y * w + x]);
        let grids = image.detect_grids();
        grids.first()?.decode().ok().map(|(_, text)| text)
    }

    /// Without colours (`NO_COLOR`) the code is drawn in block shapes alone, and reads back on
    /// a dark terminal (light ink) and, with the light theme configured, on a light one.
    #[test]
    fn without_colours_the_code_still_scans() {
        let url = "http://127.0.0.1:8080/spring";
        let popup = QrPopup::new(url);
        let area = Rect::new(0, 0, 100, 30);
        for (light_background, ink, paper) in [(false, 230, 20), (true, 20, 240)] {
            let mut theme = Theme::new(ThemeName::Mono);
            theme.light_background = light_background;
            let mut buf = Buffer::empty(area);
            popup.render(area, &mut buf, &theme);
            assert!(
                buf.content()
                    .iter()
                    .all(|c| c.fg == Color::Reset && c.bg == Color::Reset),
                "no colour is drawn"
            );
            assert_eq!(decode(&buf, ink, paper).as_deref(), Some(url));
        }
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
