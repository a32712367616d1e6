//! What the app asks of the desktop around it: the clipboard (OSC 52, which works over SSH and
//! in most terminals) and the web browser. Behind a trait so tests record instead of acting.

use std::io::Write;

pub trait Desktop: Send + Sync {
    fn copy(&self, text: &str) -> Result<(), String>;
    fn open(&self, url: &str) -> Result<(), String>;
}

/// The real terminal and browser.
#[derive(Debug, Default)]
pub struct SystemDesktop;

impl Desktop for SystemDesktop {
    fn copy(&self, text: &str) -> Result<(), String> {
        let mut out = std::io::stdout().lock();
        out.write_all(osc52(text).as_bytes())
            .and_then(|()| out.flush())
            .map_err(|e| format!("could not write to the terminal: {e}"))
    }

    /// Opens `url` in the browser (see [`super::browser::open`]). May wait for the browser:
    /// call it off the app's loop.
    fn open(&self, url: &str) -> Result<(), String> {
        super::browser::open(url)
    }
}

/// The OSC 52 "set clipboard" escape for `text`.
pub fn osc52(text: &str) -> String {
    format!("\x1b]52;c;{}\x07", base64(text.as_bytes()))
}

fn base64(bytes: &[u8]) -> String {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let b = [
            chunk[0],
            chunk.get(1).copied().unwrap_or(0),
            chunk.get(2).copied().unwrap_or(0),
        ];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        for i in 0..4 {
            if i <= chunk.len() {
                out.push(char::from(ALPHABET[((n >> (18 - 6 * i)) & 63) as usize]));
            } else {
                out.push('=');
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base64_matches_the_rfc_vectors() {
        for (plain, encoded) in [
            ("", ""),
            ("f", "Zg=="),
            ("fo", "Zm8="),
            ("foo", "Zm9v"),
            ("foob", "Zm9vYg=="),
            ("fooba", "Zm9vYmE="),
            ("foobar", "Zm9vYmFy"),
        ] {
            assert_eq!(base64(plain.as_bytes()), encoded);
        }
    }

    #[test]
    fn osc52_wraps_the_text() {
        assert_eq!(osc52("hi"), "\x1b]52;c;aGk=\x07");
    }
}
