//! The terminal app: browse links and spaces, filter and page through any number of links, act
//! on one or on every marked one, undo, and see changes made elsewhere — without ever waiting
//! on the backend.
//!
//! [`run`] takes the real terminal; [`run_with`] runs the same loop on any ratatui backend and
//! any stream of events, which is how the tests drive it.

mod app;
mod browser;
mod desktop;
mod dialog;
mod domains;
mod editor;
mod errors;
mod filter;
mod form;
mod format;
mod help;
mod hit;
mod input_gate;
mod keys;
mod links;
mod live;
mod marks;
mod msg;
mod named;
mod paging;
mod popups;
mod qr_popup;
mod runtime;
mod scroll;
mod spaces;
mod stats;
mod theme;
mod trash;
mod undo;
mod view;
mod webhooks;

use std::collections::BTreeMap;
use std::io;
use std::sync::Arc;

use futures::Stream;
use jiff::tz::TimeZone;
use ratatui::Terminal;
use ratatui::crossterm::event::{
    DisableBracketedPaste, DisableMouseCapture, EnableBracketedPaste, EnableMouseCapture, Event,
};
use ratatui::crossterm::execute;

pub use app::{App, AppConfig, MIN_HEIGHT, MIN_WIDTH, Pane};
pub use desktop::{Desktop, SystemDesktop, osc52};
pub use keys::{Action, Key, KeyBindingError, KeyCombo, KeyMap};
pub use msg::{Command, Msg, RequestId};
pub use paging::MAX_PAGES;
pub use runtime::answer;
pub use theme::{Theme, ThemeName};

use crate::backend::Backend;
use crate::domain::{Clock, SystemClock};

/// What the terminal app takes from the configuration and the command line.
#[derive(Debug, Clone)]
pub struct TuiOptions {
    /// The profile's name, shown in the header.
    pub profile: String,
    /// Backend kind and location for the header; `None` takes it from [`Backend::info`].
    pub header: Option<String>,
    pub theme: ThemeName,
    /// Scroll and click to select.
    pub mouse: bool,
    /// `[keys]`: action name → key (or several keys separated by spaces).
    pub keys: BTreeMap<String, String>,
    /// The zone dates are shown in.
    pub timezone: TimeZone,
    /// Seconds between looks at a remote server for changes made elsewhere; 0 never.
    pub refresh_secs: u64,
    /// Every change refused and none offered (`--read-only`, a profile's `read_only`).
    pub read_only: bool,
    /// `[ui] columns`: the links table's columns besides the alias.
    pub columns: Vec<crate::config::Column>,
}

impl Default for TuiOptions {
    fn default() -> Self {
        TuiOptions {
            profile: "default".into(),
            header: None,
            theme: ThemeName::Dark,
            mouse: false,
            keys: BTreeMap::new(),
            timezone: TimeZone::UTC,
            refresh_secs: 15,
            read_only: false,
            columns: crate::config::Column::ALL.to_vec(),
        }
    }
}

impl TuiOptions {
    /// The app's settings, or the `[keys]` error. `no_color` is the `NO_COLOR` variable.
    pub fn app_config(
        &self,
        backend: &dyn Backend,
        no_color: Option<&str>,
    ) -> Result<AppConfig, KeyBindingError> {
        let keys = KeyMap::with_overrides(&self.keys)?;
        let location = self.header.clone().unwrap_or_else(|| {
            let info = backend.info();
            // A profile named after its kind ("local", "remote") would read "local · local".
            if self.profile.eq_ignore_ascii_case(info.kind) {
                tilde(&info.location)
            } else {
                format!("{} {}", info.kind, tilde(&info.location))
            }
        });
        Ok(AppConfig {
            profile: self.profile.clone(),
            location,
            // `NO_COLOR` turns the light theme into mono; the background stays light.
            theme: Theme::new(self.theme.honouring_no_color(no_color))
                .on_light_background(self.theme == ThemeName::Light),
            keys,
            mouse: self.mouse,
            timezone: self.timezone.clone(),
            has_trash: backend.info().kind == "local",
            refresh_every: (self.refresh_secs > 0)
                .then(|| std::time::Duration::from_secs(self.refresh_secs)),
            read_only: self.read_only,
            columns: self.columns.clone(),
        })
    }
}

/// `/home/me/x` → `~/x`, as people write paths.
fn tilde(path: &str) -> String {
    match std::env::var("HOME") {
        Ok(home) if !home.is_empty() && path.starts_with(&home) => {
            format!("~{}", &path[home.len()..])
        }
        _ => path.to_owned(),
    }
}

/// Runs the terminal app on the real terminal until the person quits. A bad `[keys]` entry is
/// reported before the terminal is touched; the terminal is restored on every way out,
/// including a panic.
pub async fn run(backend: Arc<dyn Backend>, opts: TuiOptions) -> color_eyre::Result<()> {
    let no_color = std::env::var("NO_COLOR").ok();
    let cfg = opts.app_config(backend.as_ref(), no_color.as_deref())?;
    let _log = init_logging();
    // Installs the panic and error report hooks unless the binary already did.
    let _ = color_eyre::install();
    let mouse = cfg.mouse;
    let mut terminal = ratatui::try_init()?;
    install_panic_cleanup(mouse);
    let result = async {
        execute!(io::stdout(), EnableBracketedPaste)?;
        if mouse {
            execute!(io::stdout(), EnableMouseCapture)?;
        }
        let (events, input) = runtime::terminal_events();
        let app = run_with(
            &mut terminal,
            events,
            backend,
            cfg,
            Arc::new(SystemClock),
            Arc::new(SystemDesktop {
                mouse,
                input: Some(input.gate()),
            }),
        );
        // A hangup or termination ends the app like `q` does, so the terminal is restored.
        let result = tokio::select! {
            result = app => result,
            () = terminated() => Ok(()),
        };
        drop(input);
        result
    }
    .await;
    leave_terminal(mouse);
    result
}

/// The loop of [`run`] on any terminal backend and event stream, with an injected clock and
/// desktop: what the tests and benchmarks drive.
pub async fn run_with<B, S>(
    terminal: &mut Terminal<B>,
    events: S,
    backend: Arc<dyn Backend>,
    cfg: AppConfig,
    clock: Arc<dyn Clock>,
    desktop: Arc<dyn Desktop>,
) -> color_eyre::Result<()>
where
    B: ratatui::backend::Backend,
    B::Error: Send + Sync + 'static,
    S: Stream<Item = io::Result<Event>> + Unpin,
{
    let size = terminal.size()?;
    let app = App::new(
        cfg,
        clock,
        ratatui::layout::Rect::new(0, 0, size.width, size.height),
    );
    runtime::event_loop(terminal, events, backend, desktop, app).await
}

#[cfg(unix)]
async fn terminated() {
    use tokio::signal::unix::{SignalKind, signal};
    let (Ok(mut term), Ok(mut hup)) = (
        signal(SignalKind::terminate()),
        signal(SignalKind::hangup()),
    ) else {
        return std::future::pending().await;
    };
    tokio::select! {
        _ = term.recv() => {}
        _ = hup.recv() => {}
    }
}

#[cfg(not(unix))]
async fn terminated() {
    std::future::pending().await
}

fn leave_terminal(mouse: bool) {
    if mouse {
        let _ = execute!(io::stdout(), DisableMouseCapture);
    }
    let _ = execute!(io::stdout(), DisableBracketedPaste);
    ratatui::restore();
}

/// ratatui's hook restores raw mode and the screen; mouse capture and paste mode are ours.
fn install_panic_cleanup(mouse: bool) {
    let previous = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        if mouse {
            let _ = execute!(io::stdout(), DisableMouseCapture);
        }
        let _ = execute!(io::stdout(), DisableBracketedPaste);
        previous(info);
    }));
}

/// Logs go to `$XDG_STATE_HOME/linkdeck/linkdeck.log`, never to the screen the app draws on.
/// Does nothing when the binary already set up logging.
fn init_logging() -> Option<tracing_appender::non_blocking::WorkerGuard> {
    let dirs = directories::ProjectDirs::from("", "", "linkdeck")?;
    let dir = dirs
        .state_dir()
        .unwrap_or_else(|| dirs.data_local_dir())
        .to_path_buf();
    std::fs::create_dir_all(&dir).ok()?;
    let (writer, guard) =
        tracing_appender::non_blocking(tracing_appender::rolling::never(dir, "linkdeck.log"));
    let filter = tracing_subscriber::EnvFilter::try_from_env("LINKDECK_LOG")
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info"));
    tracing_subscriber::fmt()
        .with_writer(writer)
        .with_ansi(false)
        .with_env_filter(filter)
        .try_init()
        .ok()?;
    Some(guard)
}

#[cfg(test)]
mod picture_tests;
#[cfg(test)]
mod snapshot_tests;
