//! The README's pictures of the app, drawn from the app itself: each test renders a screen of
//! the snapshot tests' world (fixed clock, the dark theme) to SVG and checks it against the
//! file under `docs/pictures/`. A change to what the app draws rewrites the file and fails once,
//! so the picture is committed with the change and never goes stale.

use std::fmt::Write as _;
use std::path::PathBuf;

use ratatui::Terminal;
use ratatui::backend::TestBackend;
use ratatui::buffer::Buffer;
use ratatui::crossterm::event::KeyCode;
use ratatui::style::{Color, Modifier};

use super::app::App;
use super::snapshot_tests::{loaded_in, press};
use super::stats::snapshot_tests::{Answer, opened_in};
use super::theme::ThemeName;

/// A cell's width and a line's height in pixels, for a 14 px monospace font.
const CELL_WIDTH: f32 = 8.4;
const LINE_HEIGHT: f32 = 18.0;
/// A dark terminal's own colours, for cells that keep the terminal's default.
const BACKGROUND: &str = "#1e1e1e";
const FOREGROUND: &str = "#d4d4d4";

#[test]
fn the_readme_pictures_are_the_app_as_it_is() {
    let mut list = loaded_in(ThemeName::Dark, 100, 30);
    // The link with the most to show: a space, a password, geo targeting, an expiry.
    press(&mut list, KeyCode::Char('G'));
    let stats = opened_in(ThemeName::Dark, "link", Answer::Loaded, 100, 30);
    let mut form = loaded_in(ThemeName::Dark, 100, 30);
    press(&mut form, KeyCode::Char('G'));
    press(&mut form, KeyCode::Char('e'));
    let stale: Vec<String> = [("links", list), ("stats", stats), ("form", form)]
        .into_iter()
        .filter_map(|(name, app)| {
            let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
                .join("docs/pictures")
                .join(format!("{name}.svg"));
            let drawn = svg(&render(&app, 100, 30));
            if std::fs::read_to_string(&path).ok().as_deref() == Some(drawn.as_str()) {
                return None;
            }
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(&path, drawn).unwrap();
            Some(path.display().to_string())
        })
        .collect();
    assert!(
        stale.is_empty(),
        "the app draws these pictures differently now; they were rewritten, commit them: {stale:?}"
    );
}

fn render(app: &App, width: u16, height: u16) -> Buffer {
    let mut terminal = Terminal::new(TestBackend::new(width, height)).unwrap();
    terminal.draw(|f| app.render(f)).unwrap();
    terminal.backend().buffer().clone()
}

/// The cells' look that a run of text shares.
#[derive(Clone, Copy, PartialEq)]
struct Look {
    fg: Color,
    bg: Color,
    modifier: Modifier,
}

/// A buffer as an SVG picture: a rectangle for each run of cells with a background of its own,
/// a text for each run of one look. Each text is stretched to its cells, so the columns line
/// up whatever monospace font the viewer has.
fn svg(buf: &Buffer) -> String {
    let area = buf.area;
    let (w, h) = (
        f32::from(area.width) * CELL_WIDTH,
        f32::from(area.height) * LINE_HEIGHT,
    );
    let mut out = format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{w}\" height=\"{h}\" \
         viewBox=\"0 0 {w} {h}\" font-family=\"'DejaVu Sans Mono', Menlo, Consolas, monospace\" \
         font-size=\"14\">\n<rect width=\"100%\" height=\"100%\" rx=\"6\" fill=\"{BACKGROUND}\"/>\n"
    );
    for y in 0..area.height {
        let top = f32::from(y) * LINE_HEIGHT;
        let mut x = 0;
        while x < area.width {
            let here = look(buf, x, y);
            let mut end = x + 1;
            while end < area.width && look(buf, end, y) == here {
                end += 1;
            }
            let (fg, bg) = colours(here);
            let left = f32::from(x) * CELL_WIDTH;
            let width = f32::from(end - x) * CELL_WIDTH;
            if let Some(bg) = bg {
                let _ = writeln!(
                    out,
                    "<rect x=\"{left}\" y=\"{top}\" width=\"{width}\" height=\"{LINE_HEIGHT}\" \
                     fill=\"{bg}\"/>"
                );
            }
            let text: String = (x..end).map(|x| buf[(x, y)].symbol()).collect();
            if !text.trim().is_empty() {
                let mut attrs = format!("fill=\"{fg}\"");
                if here.modifier.contains(Modifier::BOLD) {
                    attrs.push_str(" font-weight=\"bold\"");
                }
                if here.modifier.contains(Modifier::ITALIC) {
                    attrs.push_str(" font-style=\"italic\"");
                }
                if here.modifier.contains(Modifier::DIM) {
                    attrs.push_str(" opacity=\"0.6\"");
                }
                if here.modifier.contains(Modifier::UNDERLINED) {
                    attrs.push_str(" text-decoration=\"underline\"");
                }
                let _ = writeln!(
                    out,
                    "<text x=\"{left}\" y=\"{}\" textLength=\"{width}\" \
                     lengthAdjust=\"spacingAndGlyphs\" xml:space=\"preserve\" {attrs}>{}</text>",
                    top + LINE_HEIGHT * 0.75,
                    escape(&text)
                );
            }
            x = end;
        }
    }
    out.push_str("</svg>\n");
    out
}

fn look(buf: &Buffer, x: u16, y: u16) -> Look {
    let cell = &buf[(x, y)];
    Look {
        fg: cell.fg,
        bg: cell.bg,
        modifier: cell.modifier,
    }
}

/// The text colour, and the background colour when it is not the terminal's own.
fn colours(look: Look) -> (String, Option<String>) {
    let fg = hex(look.fg).unwrap_or_else(|| FOREGROUND.to_owned());
    let bg = hex(look.bg);
    if look.modifier.contains(Modifier::REVERSED) {
        (bg.unwrap_or_else(|| BACKGROUND.to_owned()), Some(fg))
    } else {
        (fg, bg)
    }
}

/// A colour as `#rrggbb`, named ones as xterm shows them; `None` for the terminal's default.
fn hex(colour: Color) -> Option<String> {
    let (r, g, b) = match colour {
        Color::Reset => return None,
        Color::Rgb(r, g, b) => (r, g, b),
        Color::Black => (0, 0, 0),
        Color::Red => (205, 49, 49),
        Color::Green => (13, 188, 121),
        Color::Yellow => (229, 229, 16),
        Color::Blue => (36, 114, 200),
        Color::Magenta => (188, 63, 188),
        Color::Cyan => (17, 168, 205),
        Color::Gray => (229, 229, 229),
        Color::DarkGray => (102, 102, 102),
        Color::LightRed => (241, 76, 76),
        Color::LightGreen => (35, 209, 139),
        Color::LightYellow => (245, 245, 67),
        Color::LightBlue => (59, 142, 234),
        Color::LightMagenta => (214, 112, 214),
        Color::LightCyan => (41, 184, 219),
        Color::White => (255, 255, 255),
        Color::Indexed(i @ 0..16) => return hex(NAMED[usize::from(i)]),
        // xterm's 6×6×6 cube, then its 24 greys.
        Color::Indexed(i @ 16..232) => {
            let level = |n: u8| if n == 0 { 0 } else { 55 + n * 40 };
            let i = i - 16;
            (level(i / 36), level(i / 6 % 6), level(i % 6))
        }
        Color::Indexed(i) => {
            let grey = 8 + (i - 232) * 10;
            (grey, grey, grey)
        }
    };
    Some(format!("#{r:02x}{g:02x}{b:02x}"))
}

/// The sixteen colours in the order of their indexes.
const NAMED: [Color; 16] = [
    Color::Black,
    Color::Red,
    Color::Green,
    Color::Yellow,
    Color::Blue,
    Color::Magenta,
    Color::Cyan,
    Color::Gray,
    Color::DarkGray,
    Color::LightRed,
    Color::LightGreen,
    Color::LightYellow,
    Color::LightBlue,
    Color::LightMagenta,
    Color::LightCyan,
    Color::White,
];

fn escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}
