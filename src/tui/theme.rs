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
    /// Whether the terminal's background is light (the light theme was configured), for
    /// what must be drawn without colours in the right polarity: the QR code.
    pub light_background: bool,
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
            light_background: name == ThemeName::Light,
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
            // Fixed colours rather than the palette's named ones, so that their contrast
            // does not depend on it: each text colour reads at WCAG's 4.5:1 or better, and
            // each border at 3:1, on the usual backgrounds of dark and of light terminals
            // (checked in the tests below).
            ThemeName::Dark => Theme {
                dim: Style::new().fg(Color::Rgb(150, 150, 150)),
                accent: Style::new()
                    .fg(Color::Rgb(80, 200, 220))
                    .add_modifier(Modifier::BOLD),
                header: Style::new()
                    .fg(Color::Rgb(240, 240, 240))
                    .add_modifier(Modifier::BOLD),
                selected: Style::new()
                    .bg(Color::Rgb(40, 60, 90))
                    .fg(Color::Rgb(255, 255, 255)),
                border: Style::new().fg(Color::Rgb(125, 125, 125)),
                focused_border: Style::new().fg(Color::Rgb(80, 200, 220)),
                tab_active: Style::new()
                    .fg(Color::Rgb(0, 0, 0))
                    .bg(Color::Rgb(80, 200, 220))
                    .add_modifier(Modifier::BOLD),
                error: Style::new()
                    .fg(Color::Rgb(255, 110, 100))
                    .add_modifier(Modifier::BOLD),
                success: Style::new().fg(Color::Rgb(110, 210, 110)),
                warning: Style::new().fg(Color::Rgb(230, 190, 60)),
                space,
                ..base
            },
            ThemeName::Light => Theme {
                text: Style::new().fg(Color::Rgb(20, 20, 20)),
                dim: Style::new().fg(Color::Rgb(90, 90, 90)),
                accent: Style::new()
                    .fg(Color::Rgb(0, 85, 170))
                    .add_modifier(Modifier::BOLD),
                header: Style::new()
                    .fg(Color::Rgb(0, 0, 0))
                    .add_modifier(Modifier::BOLD),
                selected: Style::new()
                    .bg(Color::Rgb(200, 220, 245))
                    .fg(Color::Rgb(0, 0, 0)),
                border: Style::new().fg(Color::Rgb(130, 130, 130)),
                focused_border: Style::new().fg(Color::Rgb(0, 85, 170)),
                tab_active: Style::new()
                    .fg(Color::Rgb(255, 255, 255))
                    .bg(Color::Rgb(0, 85, 170))
                    .add_modifier(Modifier::BOLD),
                error: Style::new()
                    .fg(Color::Rgb(180, 0, 0))
                    .add_modifier(Modifier::BOLD),
                success: Style::new().fg(Color::Rgb(0, 115, 0)),
                warning: Style::new().fg(Color::Rgb(140, 85, 0)),
                space,
                ..base
            },
        }
    }

    /// The theme for a terminal whose background is light or not, as the configured theme
    /// says even when `NO_COLOR` made it mono.
    pub fn on_light_background(self, light: bool) -> Theme {
        Theme {
            light_background: light,
            ..self
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

    /// Default backgrounds of common terminal schemes: xterm, VS Code, Windows Terminal
    /// (Campbell), Ubuntu, GNOME, One Dark, Dracula, Solarized dark.
    const DARK_BACKGROUNDS: [(u8, u8, u8); 8] = [
        (0, 0, 0),
        (30, 30, 30),
        (12, 12, 12),
        (48, 10, 36),
        (23, 20, 33),
        (40, 44, 52),
        (40, 42, 54),
        (0, 43, 54),
    ];
    /// White, Solarized light, One Light, and a light grey.
    const LIGHT_BACKGROUNDS: [(u8, u8, u8); 4] = [
        (255, 255, 255),
        (253, 246, 227),
        (250, 250, 250),
        (238, 238, 238),
    ];

    /// WCAG 2's relative luminance.
    fn luminance((r, g, b): (u8, u8, u8)) -> f64 {
        let channel = |v: u8| {
            let v = f64::from(v) / 255.0;
            if v <= 0.039_28 {
                v / 12.92
            } else {
                ((v + 0.055) / 1.055).powf(2.4)
            }
        };
        0.2126 * channel(r) + 0.7152 * channel(g) + 0.0722 * channel(b)
    }

    fn contrast(a: (u8, u8, u8), b: (u8, u8, u8)) -> f64 {
        let (la, lb) = (luminance(a), luminance(b));
        (la.max(lb) + 0.05) / (la.min(lb) + 0.05)
    }

    fn rgb(color: Option<Color>, what: &str) -> Option<(u8, u8, u8)> {
        match color {
            None | Some(Color::Reset) => None,
            Some(Color::Rgb(r, g, b)) => Some((r, g, b)),
            Some(other) => panic!("{what}: {other:?} depends on the terminal's palette"),
        }
    }

    /// Every text style of the colour themes reads at 4.5:1 or better and every border at
    /// 3:1, on its own background where it sets one, else on each usual background of its
    /// kind of terminal; mono sets no colour at all.
    #[test]
    fn every_theme_has_contrast_on_the_usual_backgrounds() {
        for (name, backgrounds) in [
            (ThemeName::Dark, &DARK_BACKGROUNDS[..]),
            (ThemeName::Light, &LIGHT_BACKGROUNDS[..]),
        ] {
            let t = Theme::new(name);
            let text = [
                ("text", t.text),
                ("dim", t.dim),
                ("accent", t.accent),
                ("header", t.header),
                ("selected", t.selected),
                ("tab_active", t.tab_active),
                ("error", t.error),
                ("success", t.success),
                ("warning", t.warning),
            ];
            let borders = [("border", t.border), ("focused_border", t.focused_border)];
            for (styles, floor) in [(&text[..], 4.5), (&borders[..], 3.0)] {
                for (what, style) in styles {
                    let Some(fg) = rgb(style.fg, what) else {
                        continue;
                    };
                    let own = rgb(style.bg, what);
                    for bg in own
                        .iter()
                        .chain(if own.is_some() { &[][..] } else { backgrounds })
                    {
                        let ratio = contrast(fg, *bg);
                        assert!(
                            ratio >= floor,
                            "{name:?} {what}: {fg:?} on {bg:?} is {ratio:.1}:1, under {floor}:1"
                        );
                    }
                }
            }
        }
        let mono = Theme::new(ThemeName::Mono);
        for style in [
            mono.text,
            mono.dim,
            mono.accent,
            mono.selected,
            mono.tab_active,
        ] {
            assert_eq!((style.fg, style.bg), (None, None), "mono sets no colour");
        }
    }

    #[test]
    fn theme_names_parse() {
        assert_eq!("Light".parse::<ThemeName>(), Ok(ThemeName::Light));
        assert!("neon".parse::<ThemeName>().unwrap_err().contains("neon"));
    }
}
