//! The event loop: generic over the terminal backend and the input stream, so tests drive the
//! very loop the binary runs with a channel of key events and a `TestBackend`.

use std::io;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use futures::{Stream, StreamExt};
use ratatui::Terminal;
use ratatui::crossterm::event::{self, Event};
use tokio::sync::mpsc::{UnboundedSender, unbounded_channel};

use super::app::App;
use super::desktop::Desktop;
use super::msg::{Command, Msg};
use crate::backend::Backend;

/// Runs `app` until it quits or the input ends. Each turn handles one input, answer or timer,
/// then everything already queued, and draws once: no redraw while answers are pending, and no
/// wake-ups at all while nothing moves.
pub async fn event_loop<B, S>(
    terminal: &mut Terminal<B>,
    mut events: S,
    backend: Arc<dyn Backend>,
    desktop: Arc<dyn Desktop>,
    mut app: App,
) -> color_eyre::Result<()>
where
    B: ratatui::backend::Backend,
    B::Error: Send + Sync + 'static,
    S: Stream<Item = io::Result<Event>> + Unpin,
{
    let (tx, mut rx) = unbounded_channel::<Msg>();
    let size = terminal.size()?;
    app.handle_event(Event::Resize(size.width, size.height));
    execute(&mut app, &backend, &desktop, &tx);
    terminal.draw(|f| app.render(f))?;
    loop {
        let deadline = app.next_deadline();
        tokio::select! {
            biased;
            Some(msg) = rx.recv() => app.update(msg),
            event = events.next() => match event {
                Some(Ok(event)) => app.handle_event(event),
                Some(Err(e)) => return Err(e.into()),
                None => break,
            },
            () = sleep_until(deadline), if deadline.is_some() => {
                app.on_time(std::time::Instant::now());
            }
        }
        while let Ok(msg) = rx.try_recv() {
            app.update(msg);
        }
        execute(&mut app, &backend, &desktop, &tx);
        if app.should_quit() {
            break;
        }
        terminal.draw(|f| app.render(f))?;
    }
    Ok(())
}

async fn sleep_until(deadline: Option<std::time::Instant>) {
    if let Some(at) = deadline {
        tokio::time::sleep_until(tokio::time::Instant::from_std(at)).await;
    }
}

/// Carries out the app's commands: backend calls on tasks that answer by message.
fn execute(
    app: &mut App,
    backend: &Arc<dyn Backend>,
    desktop: &Arc<dyn Desktop>,
    tx: &UnboundedSender<Msg>,
) {
    for command in app.take_commands() {
        tracing::debug!(?command, "command");
        match command {
            Command::Copy { text, what } => {
                let result = desktop
                    .copy(&text)
                    .map(|()| format!("Copied {what}: {text}"));
                app.update(Msg::Desktop(result));
            }
            Command::OpenUrl(url) => {
                let result = desktop.open(&url).map(|()| format!("Opening {url}"));
                app.update(Msg::Desktop(result));
            }
            call => {
                let (backend, tx) = (Arc::clone(backend), tx.clone());
                tokio::spawn(async move {
                    // A send fails only when the loop has ended; the answer is then of no use.
                    if let Some(msg) = answer(call, backend.as_ref()).await {
                        let _ = tx.send(msg);
                    }
                });
            }
        }
    }
}

/// The backend's answer to a command, as the message the app takes; `None` for commands that
/// are not backend calls (the clipboard, the browser). The loop runs it on a task; tests and
/// benchmarks await it in place.
pub async fn answer(command: Command, backend: &dyn Backend) -> Option<Msg> {
    Some(match command {
        Command::FetchLinks { req, query } => Msg::LinksPage {
            req,
            page: query.page,
            result: backend.list_links(&query).await,
        },
        Command::FetchSpaces { req } => Msg::Spaces {
            req,
            result: crate::backend::all_spaces(backend, crate::domain::Sort::Asc).await,
        },
        Command::FetchDomains { req } => Msg::Domains {
            req,
            result: crate::backend::all_domains(backend).await,
        },
        Command::DeleteLink { req, id, alias } => Msg::LinkDeleted {
            req,
            alias,
            result: backend.delete_link(id).await,
        },
        Command::UpdateLink { req, id, input } => Msg::LinkUpdated {
            req,
            result: backend.update_link(id, &input).await.map(Box::new),
        },
        Command::Save { req, request } => request.send(backend, req).await,
        Command::FetchStats { req, query } => Msg::Stats {
            req,
            result: backend.stats(&query).await,
        },
        Command::Copy { .. } | Command::OpenUrl(_) => return None,
    })
}

/// Terminal events from a reader thread (crossterm's reader blocks). The stream ends when the
/// terminal hangs up (its window closed, the connection dropped); the thread ends soon after the
/// stream is dropped.
pub fn terminal_events() -> (impl Stream<Item = io::Result<Event>> + Unpin, InputThread) {
    let (tx, rx) = futures::channel::mpsc::unbounded();
    let stop = Arc::new(AtomicBool::new(false));
    let flag = Arc::clone(&stop);
    let (done_tx, done) = std::sync::mpsc::channel::<()>();
    std::thread::spawn(move || {
        let _done = done_tx;
        while !flag.load(Ordering::Relaxed) {
            // crossterm reads a hung-up terminal in an endless loop, so look first; this also
            // waits for input, and a zero-wait poll then picks up keys and resizes alike.
            if tty::wait(Duration::from_millis(50)) == tty::State::HungUp {
                break;
            }
            match event::poll(Duration::ZERO) {
                Ok(true) => {
                    let event = event::read();
                    let failed = event.is_err();
                    if tx.unbounded_send(event).is_err() || failed {
                        break;
                    }
                }
                Ok(false) => {}
                Err(e) => {
                    let _ = tx.unbounded_send(Err(e));
                    break;
                }
            }
        }
    });
    (rx, InputThread { stop, done })
}

/// Stops the reader thread when dropped, so no key is read after the terminal is restored. It
/// waits for the thread a moment, never forever: a thread stuck in a read must not keep the
/// program from ending.
pub struct InputThread {
    stop: Arc<AtomicBool>,
    done: std::sync::mpsc::Receiver<()>,
}

impl Drop for InputThread {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        // Ends with an error once the thread is gone (its sender dropped).
        let _ = self.done.recv_timeout(Duration::from_millis(500));
    }
}

/// The state of the terminal on standard input.
mod tty {
    use std::time::Duration;

    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    pub enum State {
        /// Input is waiting, or the wait ran out (a resize may be pending either way).
        Open,
        /// The terminal is gone: reads would fail forever.
        HungUp,
    }

    /// Waits up to `timeout` for input on standard input.
    #[cfg(unix)]
    pub fn wait(timeout: Duration) -> State {
        let mut fd = libc::pollfd {
            fd: libc::STDIN_FILENO,
            events: libc::POLLIN,
            revents: 0,
        };
        let ms = libc::c_int::try_from(timeout.as_millis()).unwrap_or(libc::c_int::MAX);
        // SAFETY: one valid pollfd, and its count, for the duration of the call.
        let ready = unsafe { libc::poll(&mut fd, 1, ms) };
        let gone = libc::POLLHUP | libc::POLLERR | libc::POLLNVAL;
        if ready > 0 && fd.revents & gone != 0 {
            State::HungUp
        } else {
            State::Open
        }
    }

    #[cfg(not(unix))]
    pub fn wait(timeout: Duration) -> State {
        std::thread::sleep(timeout);
        State::Open
    }
}
