//! What the app asks of the desktop around it: the clipboard (OSC 52, which works over SSH and
//! in most terminals), the web browser and the text editor. Behind a trait so tests record
//! instead of acting.

use std::io::Write;
use std::sync::Arc;

use ratatui::crossterm::event::{
    DisableBracketedPaste, DisableMouseCapture, EnableBracketedPaste, EnableMouseCapture,
};
use ratatui::crossterm::execute;
use ratatui::crossterm::terminal::{
    EnterAlternateScreen, LeaveAlternateScreen, disable_raw_mode, enable_raw_mode,
};

use super::input_gate::InputGate;

pub trait Desktop: Send + Sync {
    fn copy(&self, text: &str) -> Result<(), String>;
    fn open(&self, url: &str) -> Result<(), String>;

    /// `text` as the person left it in their editor. Blocks until the editor is closed; the
    /// screen is the editor's meanwhile and must be drawn whole afterwards.
    fn edit(&self, _text: &str) -> Result<String, String> {
        Err("there is no text editor here".into())
    }
}

/// The real terminal, browser and editor.
#[derive(Debug, Default)]
pub struct SystemDesktop {
    /// The app captures the mouse: given back to the terminal while an editor runs.
    pub mouse: bool,
    /// The app's input reader, paused while an editor reads the terminal.
    pub input: Option<Arc<InputGate>>,
}

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

    /// Runs `$VISUAL`, else `$EDITOR`, else `vi` on a private file holding `text`, with the
    /// terminal given over to it: out of raw mode and the alternate screen, the app's reader
    /// paused.
    fn edit(&self, text: &str) -> Result<String, String> {
        let file = tempfile::Builder::new()
            .prefix("linkdeck-")
            .suffix(".toml")
            .tempfile()
            .map_err(|e| format!("could not make a file to edit: {e}"))?;
        std::fs::write(file.path(), text)
            .map_err(|e| format!("could not write {}: {e}", file.path().display()))?;
        let editor = ["VISUAL", "EDITOR"]
            .into_iter()
            .find_map(|var| std::env::var(var).ok().filter(|v| !v.trim().is_empty()))
            .unwrap_or_else(|| "vi".to_owned());
        let mut words = editor.split_whitespace();
        let program = words.next().unwrap_or("vi").to_owned();
        if let Some(gate) = &self.input {
            gate.hold();
        }
        self.leave();
        let status = std::process::Command::new(&program)
            .args(words)
            .arg(file.path())
            .status();
        self.enter();
        if let Some(gate) = &self.input {
            gate.release();
        }
        match status {
            Err(e) => Err(format!(
                "could not start the editor `{program}` (set by $VISUAL or $EDITOR): {e}"
            )),
            Ok(status) if !status.success() => Err(format!(
                "the editor `{program}` ended with {status}: nothing was changed"
            )),
            Ok(_) => std::fs::read_to_string(file.path())
                .map_err(|e| format!("could not read {} back: {e}", file.path().display())),
        }
    }
}

impl SystemDesktop {
    /// Gives the terminal back as a shell has it, for another program.
    fn leave(&self) {
        let mut out = std::io::stdout();
        if self.mouse {
            let _ = execute!(out, DisableMouseCapture);
        }
        let _ = execute!(out, DisableBracketedPaste, LeaveAlternateScreen);
        let _ = disable_raw_mode();
    }

    /// Takes the terminal again, as the app started it.
    fn enter(&self) {
        let mut out = std::io::stdout();
        let _ = enable_raw_mode();
        let _ = execute!(out, EnterAlternateScreen, EnableBracketedPaste);
        if self.mouse {
            let _ = execute!(out, EnableMouseCapture);
        }
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
