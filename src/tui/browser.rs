//! Opening a URL in the browser the person chose. `$BROWSER` is run by us rather than by the
//! `webbrowser` crate, which starts it in the background and reports success whatever it does:
//! a browser command that fails must say so, with its own words, instead of a toast that
//! claims the page opened.

use std::io::Read;
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use wait_timeout::ChildExt;

/// How long a browser command has to fail in before it counts as opened: one that starts a
/// window may not return until the window is closed, so it cannot be waited for to the end.
const FAIL_WINDOW: Duration = Duration::from_secs(3);

/// How much of a failed command's error output is kept for the message.
const STDERR_KEPT: usize = 2048;

/// Opens `url` with `$BROWSER` when it is set (a `:`-separated list of commands tried in turn,
/// `%s` standing for the URL, else the URL appended), otherwise with the desktop's default.
/// Waits up to [`FAIL_WINDOW`] per command: call it off the app's loop.
pub fn open(url: &str) -> Result<(), String> {
    match std::env::var("BROWSER") {
        Ok(list) if !list.trim().is_empty() => open_with(&list, url),
        _ => {
            let mut options = webbrowser::BrowserOptions::new();
            options.with_suppress_output(true);
            webbrowser::open_browser_with_options(webbrowser::Browser::Default, url, &options)
                .map_err(|e| format!("could not open a browser: {e}"))
        }
    }
}

/// Tries each command of the `$BROWSER` list `list` in turn; the first that does not fail
/// opened `url`. When all fail, says why each did.
fn open_with(list: &str, url: &str) -> Result<(), String> {
    let mut failures = Vec::new();
    for entry in list.split(':').map(str::trim).filter(|e| !e.is_empty()) {
        match run(entry, url) {
            Ok(()) => return Ok(()),
            Err(why) => failures.push(why),
        }
    }
    let why = failures.join("; ");
    tracing::warn!(%url, %why, "the browser in $BROWSER failed");
    Err(format!("The browser ($BROWSER) did not open {url}: {why}"))
}

/// Runs one `$BROWSER` command for `url`: an error when it cannot start, or exits unsuccessfully
/// within [`FAIL_WINDOW`].
fn run(entry: &str, url: &str) -> Result<(), String> {
    let words = command_line(entry, url);
    let program = words[0].clone();
    let mut child = Command::new(&program)
        .args(&words[1..])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("`{program}` could not start: {e}"))?;
    let said = Said::gather(&mut child);
    match child.wait_timeout(FAIL_WINDOW) {
        Ok(Some(status)) if status.success() => Ok(()),
        Ok(Some(status)) => Err(match said.first_line() {
            Some(line) => format!("`{program}` {status}: {line}"),
            None => format!("`{program}` {status}"),
        }),
        // Still running: a browser that keeps its window; reaped when it ends.
        Ok(None) => {
            std::thread::spawn(move || child.wait());
            Ok(())
        }
        Err(e) => Err(format!("`{program}` could not be waited for: {e}")),
    }
}

/// The words of one `$BROWSER` entry with `%s` replaced by `url` (`%%` standing for `%`), the
/// URL appended when no word holds `%s`.
fn command_line(entry: &str, url: &str) -> Vec<String> {
    let mut has_url = false;
    let mut words: Vec<String> = entry
        .split_whitespace()
        .map(|word| {
            let mut out = String::with_capacity(word.len());
            let mut chars = word.chars();
            while let Some(c) = chars.next() {
                match (c, chars.clone().next()) {
                    ('%', Some('s')) => {
                        chars.next();
                        out.push_str(url);
                        has_url = true;
                    }
                    ('%', Some('%')) => {
                        chars.next();
                        out.push('%');
                    }
                    _ => out.push(c),
                }
            }
            out
        })
        .collect();
    if !has_url {
        words.push(url.to_owned());
    }
    words
}

/// The error output of a child, read on a thread of its own (so a chatty browser never blocks
/// on a full pipe), its first [`STDERR_KEPT`] bytes kept.
struct Said {
    kept: Arc<Mutex<Vec<u8>>>,
    done: std::sync::mpsc::Receiver<()>,
}

impl Said {
    fn gather(child: &mut Child) -> Said {
        let kept = Arc::new(Mutex::new(Vec::new()));
        let (tx, done) = std::sync::mpsc::channel();
        if let Some(mut stderr) = child.stderr.take() {
            let sink = Arc::clone(&kept);
            std::thread::spawn(move || {
                let _done = tx;
                let mut buf = [0u8; 1024];
                while let Ok(n) = stderr.read(&mut buf) {
                    if n == 0 {
                        break;
                    }
                    if let Ok(mut kept) = sink.lock() {
                        let room = STDERR_KEPT.saturating_sub(kept.len());
                        kept.extend_from_slice(&buf[..n.min(room)]);
                    }
                }
            });
        }
        Said { kept, done }
    }

    /// The first line the child wrote, once it has ended. Something it started may hold the
    /// pipe open: what came within a moment is what the message holds.
    fn first_line(self) -> Option<String> {
        let _ = self.done.recv_timeout(Duration::from_millis(500));
        let bytes = self.kept.lock().ok()?;
        first_line(&bytes)
    }
}

/// The first non-empty line of `bytes`, bounded, for a message.
fn first_line(bytes: &[u8]) -> Option<String> {
    let text = String::from_utf8_lossy(bytes);
    let line = text.lines().map(str::trim).find(|l| !l.is_empty())?;
    Some(line.chars().take(200).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_url_takes_the_place_of_percent_s_or_comes_last() {
        assert_eq!(
            command_line("firefox --new-tab %s", "https://a.example/"),
            ["firefox", "--new-tab", "https://a.example/"]
        );
        assert_eq!(
            command_line("chromium", "https://a.example/"),
            ["chromium", "https://a.example/"]
        );
        assert_eq!(command_line("echo 100%% %s", "u"), ["echo", "100%", "u"]);
    }

    #[cfg(unix)]
    #[test]
    fn a_browser_that_fails_says_why() {
        let dir = tempfile::tempdir().unwrap();
        let browser = dir.path().join("browser");
        std::fs::write(&browser, "#!/bin/sh\necho 'no display here' >&2\nexit 3\n").unwrap();
        let mut perms = std::fs::metadata(&browser).unwrap().permissions();
        std::os::unix::fs::PermissionsExt::set_mode(&mut perms, 0o755);
        std::fs::set_permissions(&browser, perms).unwrap();
        let err = open_with(&browser.display().to_string(), "https://a.example/").unwrap_err();
        assert!(err.contains("did not open https://a.example/"), "{err}");
        assert!(err.contains("exit status: 3: no display here"), "{err}");
        assert!(err.contains("$BROWSER"), "{err}");
    }

    #[test]
    fn a_browser_that_is_missing_says_so_and_the_next_one_is_tried() {
        let err = open_with("/nonexistent/browser", "https://a.example/").unwrap_err();
        assert!(
            err.contains("`/nonexistent/browser` could not start"),
            "{err}"
        );
        assert!(open_with("/nonexistent/browser:true", "https://a.example/").is_ok());
    }
}
