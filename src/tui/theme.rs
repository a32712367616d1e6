//! Colours and emphasis. `mono` uses only bold, dim and reverse, so it reads on any terminal and
//! is what `NO_COLOR` selects.

use std::borrow::Cow;

use ratatui::style::{Color, Modifier, Style};
use ratatui::text::Span;
use ratatui::widgets::{Block, BorderType, Borders};

use crate::domain::Color as SpaceColor;
use crate::domain::{into_shown, is_unshowable};

/// The theme's name is the `[ui] theme` setting itself: one type for config and app.
pub use crate::config::Theme as ThemeName;

/// The styles every view draws with.
#[derive(Debug, Clone)]
pub struct Theme {
    pub name: ThemeName,
    pub text: Style,
    pub dim: Style,
    pub accent: Style,
    pub header: Style,
    pub selected: Style,
    pub border: Style,
    pub focused_border: Style,
    pub tab_active: Style,
    pub error: Style,
    pub success: Style,
    pub warning: Style,
    space: [Color; 6],
}

impl Theme {
    /// The frame of every panel and dialog: a rounded border drawn in `border`, the title in the
    /// header style. A title may name a record (`Edit space Launch`), so it is [`into_shown`].
    pub fn panel<'a>(&self, title: impl Into<Cow<'a, str>>, border: Style) -> Block<'a> {
        let mut title = title.into();
        if title.chars().any(is_unshowable) {
            title = Cow::Owned(into_shown(title.into_owned()));
        }
        Block::default()
            .borders(Borders::ALL)
            .border_type(BorderType::Rounded)
            .border_style(border)
            .title(Span::styled(title, self.header))
    }

    pub fn new(name: ThemeName) -> Theme {
        let base = Theme {
            name,
            text: Style::new(),
            dim: Style::new().add_modifier(Modifier::DIM),
            accent: Style::new().add_modifier(Modifier::BOLD),
            header: Style::new().add_modifier(Modifier::BOLD),
            selected: Style::new().add_modifier(Modifier::REVERSED),
            border: Style::new().add_modifier(Modifier::DIM),
            focused_border: Style::new(),
            tab_active: Style::new().add_modifier(Modifier::BOLD | Modifier::REVERSED),
            error: Style::new().add_modifier(Modifier::BOLD),
            success: Style::new(),
            warning: Style::new().add_modifier(Modifier::BOLD),
            space: [Color::Reset; 6],
        };
        let space = [
            Color::Red,
            Color::Rgb(230, 140, 30),
            Color::Yellow,
            Color::Green,
            Color::Blue,
            Color::Magenta,
        ];
        match name {
            ThemeName::Mono => base,
            ThemeName::Dark => Theme {
                dim: Style::new().fg(Color::DarkGray),
                accent: Style::new().fg(Color::Cyan).add_modifier(Modifier::BOLD),
                header: Style::new().fg(Color::White).add_modifier(Modifier::BOLD),
                selected: Style::new().bg(Color::Rgb(40, 60, 90)).fg(Color::White),
                border: Style::new().fg(Color::DarkGray),
                focused_border: Style::new().fg(Color::Cyan),
                tab_active: Style::new()
                    .fg(Color::Black)
                    .bg(Color::Cyan)
                    .add_modifier(Modifier::BOLD),
                error: Style::new()
                    .fg(Color::LightRed)
                    .add_modifier(Modifier::BOLD),
                success: Style::new().fg(Color::LightGreen),
                warning: Style::new().fg(Color::Yellow),
                space,
                ..base
            },
            ThemeName::Light => Theme {
                text: Style::new().fg(Color::Black),
                dim: Style::new().fg(Color::Gray),
                accent: Style::new().fg(Color::Blue).add_modifier(Modifier::BOLD),
                header: Style::new().fg(Color::Black).add_modifier(Modifier::BOLD),
                selected: Style::new().bg(Color::Rgb(200, 220, 245)).fg(Color::Black),
                border: Style::new().fg(Color::Gray),
                focused_border: Style::new().fg(Color::Blue),
                tab_active: Style::new()
                    .fg(Color::White)
                    .bg(Color::Blue)
                    .add_modifier(Modifier::BOLD),
                error: Style::new().fg(Color::Red).add_modifier(Modifier::BOLD),
                success: Style::new().fg(Color::Green),
                warning: Style::new().fg(Color::Rgb(160, 100, 0)),
                space,
                ..base
            },
        }
    }

    /// The style of a space's colour dot; mono shows the dot without colour.
    pub fn space(&self, color: SpaceColor) -> Style {
        match self.name {
            ThemeName::Mono => Style::new(),
            _ => Style::new().fg(self.space[usize::from(color.number() - 1)]),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn no_color_selects_mono() {
        assert_eq!(
            ThemeName::Dark.honouring_no_color(Some("1")),
            ThemeName::Mono
        );
        assert_eq!(
            ThemeName::Light.honouring_no_color(Some("")),
            ThemeName::Light
        );
        assert_eq!(ThemeName::Light.honouring_no_color(None), ThemeName::Light);
    }

    #[test]
    fn theme_names_parse() {
        assert_eq!("Light".parse::<ThemeName>(), Ok(ThemeName::Light));
        assert!("neon".parse::<ThemeName>().unwrap_err().contains("neon"));
    }
}
