//! QR codes of short links, drawn by the `qrcode` crate: for a terminal (half-height blocks, two
//! modules a character), as SVG and as PNG. Every form keeps the quiet zone — four light modules
//! around the code — without which phones struggle to find it.

use std::fmt::Write;

use qrcode::render::svg;
use qrcode::{Color, EcLevel, QrCode};

/// Light modules around the code, as the QR standard asks.
pub const QUIET_ZONE: usize = 4;
/// The sizes a PNG or SVG may be asked for, in pixels. A short URL's code is 25 to 41 modules a
/// side with its quiet zone, so the largest size gives 50 pixels or more to a module: a 17 cm
/// square at 300 dots an inch, sharp for a flyer or a poster. Past that a printer only scales up
/// squares, which the SVG does without limit, while each pixel more a side costs the server
/// time and memory for every stranger who asks.
pub const SIZE_MIN: u32 = 64;
pub const SIZE_MAX: u32 = 2048;
pub const SIZE_DEFAULT: u32 = 512;

/// A QR code and the text it holds.
pub struct Qr {
    code: QrCode,
    text: String,
}

impl Qr {
    /// The code of `text` (a short URL), with medium error correction: enough to survive a
    /// crease or a smudge, small enough to stay readable on a terminal.
    pub fn new(text: &str) -> Result<Qr, String> {
        let code = QrCode::with_error_correction_level(text.as_bytes(), EcLevel::M)
            .map_err(|e| format!("cannot make a QR code of {text}: {e}"))?;
        Ok(Qr {
            code,
            text: text.to_owned(),
        })
    }

    pub fn text(&self) -> &str {
        &self.text
    }

    /// Modules a side, quiet zone included.
    pub fn side(&self) -> usize {
        self.code.width() + 2 * QUIET_ZONE
    }

    /// Whether the module at (x, y) is dark, quiet zone included (so out of the code is light).
    pub fn dark(&self, x: usize, y: usize) -> bool {
        let w = self.code.width();
        let (Some(cx), Some(cy)) = (x.checked_sub(QUIET_ZONE), y.checked_sub(QUIET_ZONE)) else {
            return false;
        };
        cx < w && cy < w && self.code[(cx, cy)] == Color::Dark
    }

    /// The code for a terminal: each character two modules high (`▀`, `▄`, `█`, space). With
    /// `ansi`, colours are set explicitly — black on white — so that it scans on a dark terminal
    /// too; without, dark modules are drawn as ink, for a light background or paper.
    pub fn terminal(&self, ansi: bool) -> String {
        let side = self.side();
        let mut out = String::new();
        for y in (0..side).step_by(2) {
            if ansi {
                out.push_str("\x1b[30;47m");
            }
            for x in 0..side {
                let top = self.dark(x, y);
                let bottom = y + 1 < side && self.dark(x, y + 1);
                out.push(match (top, bottom) {
                    (true, true) => '█',
                    (true, false) => '▀',
                    (false, true) => '▄',
                    (false, false) => ' ',
                });
            }
            if ansi {
                out.push_str("\x1b[0m");
            }
            out.push('\n');
        }
        out
    }

    /// An SVG of about `size` pixels a side (whole pixels per module, never smaller).
    pub fn svg(&self, size: u32) -> String {
        let mut svg = self
            .code
            .render::<svg::Color>()
            .quiet_zone(true)
            .min_dimensions(size, size)
            .dark_color(svg::Color("#000000"))
            .light_color(svg::Color("#ffffff"))
            .build();
        // Say what it is, for screen readers and for whoever opens the file.
        if let Some(at) = svg
            .find('>')
            .and_then(|first| svg[first + 1..].find('>').map(|i| first + 1 + i))
        {
            let mut title = String::new();
            let _ = write!(title, "<title>{}</title>", escape_xml(&self.text));
            svg.insert_str(at + 1, &title);
        }
        svg
    }

    /// A black-and-white PNG of about `size` pixels a side (whole pixels per module, never
    /// larger unless a module would be smaller than a pixel). One bit a pixel: a code has two
    /// colours, and an eighth of the bytes is an eighth of the work to compress.
    pub fn png(&self, size: u32) -> Result<Vec<u8>, String> {
        let side = self.side();
        let scale = (size as usize / side).max(1);
        let pixels = side * scale;
        let row_bytes = pixels.div_ceil(8);
        let mut raster = Vec::with_capacity(row_bytes * pixels);
        let mut row = vec![0u8; row_bytes];
        for y in 0..side {
            // A set bit is white; the padding past the last pixel of a row stays white too.
            row.fill(0xff);
            for x in (0..side).filter(|&x| self.dark(x, y)) {
                for px in x * scale..(x + 1) * scale {
                    row[px / 8] &= !(0x80 >> (px % 8));
                }
            }
            for _ in 0..scale {
                raster.extend_from_slice(&row);
            }
        }
        let mut out = Vec::new();
        let dim = u32::try_from(pixels).map_err(|_| "the QR code is too large".to_owned())?;
        let mut encoder = png::Encoder::new(&mut out, dim, dim);
        encoder.set_color(png::ColorType::Grayscale);
        encoder.set_depth(png::BitDepth::One);
        let mut writer = encoder
            .write_header()
            .map_err(|e| format!("cannot write the PNG: {e}"))?;
        writer
            .write_image_data(&raster)
            .map_err(|e| format!("cannot write the PNG: {e}"))?;
        writer
            .finish()
            .map_err(|e| format!("cannot write the PNG: {e}"))?;
        Ok(out)
    }
}

/// A pixel size from the command line or a query string: `SIZE_MIN` to `SIZE_MAX`.
pub fn parse_size(s: &str) -> Result<u32, String> {
    match s.trim().parse::<u32>() {
        Ok(n) if (SIZE_MIN..=SIZE_MAX).contains(&n) => Ok(n),
        _ => Err(format!(
            "must be a number of pixels from {SIZE_MIN} to {SIZE_MAX}"
        )),
    }
}

fn escape_xml(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_terminal_code_keeps_its_quiet_zone() {
        let qr = Qr::new("https://sho.rt/spring").unwrap();
        let text = qr.terminal(false);
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), qr.side().div_ceil(2));
        assert!(lines.iter().all(|l| l.chars().count() == qr.side()));
        // Two blank rows of modules on top and bottom (one character line each, twice), and
        // four blank columns at both ends.
        assert!(lines[0].trim().is_empty() && lines[1].trim().is_empty());
        assert!(lines.iter().all(|l| l.starts_with("    ")));
        assert!(lines[2].contains('█') || lines[2].contains('▀') || lines[2].contains('▄'));
        assert!(qr.terminal(true).contains("\x1b[30;47m"));
    }

    #[test]
    fn sizes_are_bounded() {
        assert_eq!(parse_size("256"), Ok(256));
        assert!(parse_size("10").is_err());
        assert!(parse_size("100000").is_err());
        assert!(parse_size("big").is_err());
    }

    #[test]
    fn the_png_is_whole_pixels_a_module_within_the_asked_size() {
        let qr = Qr::new("https://sho.rt/spring").unwrap();
        let png = qr.png(SIZE_MAX).unwrap();
        let decoder = png::Decoder::new(std::io::Cursor::new(png));
        let mut reader = decoder.read_info().unwrap();
        let mut pixels = vec![0; reader.output_buffer_size().unwrap()];
        let frame = reader.next_frame(&mut pixels).unwrap();
        let scale = SIZE_MAX as usize / qr.side();
        assert_eq!(frame.width as usize, qr.side() * scale);
        assert_eq!(frame.bit_depth, png::BitDepth::One);
        // Every pixel is its module's colour: one bit a pixel, a set bit white.
        let row_bytes = frame.line_size;
        for y in 0..frame.height as usize {
            for x in 0..frame.width as usize {
                let white = pixels[y * row_bytes + x / 8] & (0x80 >> (x % 8)) != 0;
                assert_eq!(!white, qr.dark(x / scale, y / scale), "pixel ({x}, {y})");
            }
        }
    }

    #[test]
    fn svg_and_png_have_the_asked_size_or_more() {
        let qr = Qr::new("https://sho.rt/a?b=<c>&d").unwrap();
        let svg = qr.svg(300);
        assert!(
            svg.contains("<title>https://sho.rt/a?b=&lt;c&gt;&amp;d</title>"),
            "{svg}"
        );
        let png = qr.png(300).unwrap();
        assert_eq!(&png[1..4], b"PNG");
    }
}
