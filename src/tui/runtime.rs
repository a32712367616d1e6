//! The event loop: generic over the terminal backend and the input stream, so tests drive the
//! very loop the binary runs with a channel of key events and a `TestBackend`.

use std::io;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use futures::{FutureExt, Stream, StreamExt};
use ratatui::Terminal;
use ratatui::crossterm::event::{self, Event};
use tokio::sync::mpsc::{UnboundedSender, unbounded_channel};

use super::app::App;
use super::desktop::Desktop;
use super::input_gate::InputGate;
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
    let _watch = AbortOnDrop(tokio::spawn(watch_changes(
        Arc::clone(&backend),
        tx.clone(),
        app.refresh_every(),
    )));
    // The Live pane's feed, while it runs.
    let mut feed = None;
    let size = terminal.size()?;
    app.handle_event(Event::Resize(size.width, size.height));
    execute(&mut app, &backend, &desktop, &tx, &mut feed);
    terminal.draw(|f| app.render(f))?;
    loop {
        let deadline = app.next_deadline();
        tokio::select! {
            biased;
            Some(msg) = rx.recv() => app.update(msg),
            event = events.next() => match event {
                Some(Ok(event)) => {
                    app.handle_event(event);
                    // Every event already waiting is handled before the next frame: a paste
                    // the terminal does not bracket, or fast typing, is one frame's work.
                    match take_waiting(&mut events, &mut app)? {
                        Input::Open => {}
                        Input::Ended => break,
                    }
                }
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
        if execute(&mut app, &backend, &desktop, &tx, &mut feed) {
            // What the editor drew is not what ratatui thinks is on screen: the next frame is
            // drawn whole. (`Terminal::clear` would ask the terminal where its cursor is, and
            // the answer would go to the input reader instead.)
            let size = terminal.size()?;
            terminal.resize(ratatui::layout::Rect::new(0, 0, size.width, size.height))?;
        }
        if app.should_quit() {
            break;
        }
        terminal.draw(|f| app.render(f))?;
        tracing::trace!("frame drawn");
    }
    Ok(())
}

/// Whether the input stream goes on.
enum Input {
    Open,
    Ended,
}

/// Hands the app every event the stream holds ready now, without waiting; stops early once the
/// app is quitting, so no key typed after `q` acts.
fn take_waiting<S>(events: &mut S, app: &mut App) -> io::Result<Input>
where
    S: Stream<Item = io::Result<Event>> + Unpin,
{
    while !app.should_quit() {
        match events.next().now_or_never() {
            Some(Some(event)) => app.handle_event(event?),
            Some(None) => return Ok(Input::Ended),
            None => break,
        }
    }
    Ok(Input::Open)
}

/// The links at positions `from..=to` of the list `query` gives, page by page.
async fn range(
    backend: &dyn Backend,
    mut query: crate::domain::LinkQuery,
    from: u64,
    to: u64,
) -> crate::domain::Result<Vec<crate::domain::Link>> {
    let per_page = u64::from(crate::domain::PER_PAGE_MAX);
    query.per_page = crate::domain::PER_PAGE_MAX;
    let mut links = Vec::new();
    let mut page = from / per_page + 1;
    while (page - 1) * per_page <= to {
        query.page = u32::try_from(page).unwrap_or(u32::MAX);
        let answer = backend.list_links(&query).await?;
        let start = (page - 1) * answer.per_page.max(1) as u64;
        let more = answer.has_next();
        for (i, link) in answer.items.into_iter().enumerate() {
            let at = start + i as u64;
            if (from..=to).contains(&at) {
                links.push(link);
            }
        }
        if !more {
            break;
        }
        page += 1;
    }
    Ok(links)
}

/// Items purged a request while the trash is emptied.
const EMPTY_STEP: u32 = 500;

/// Purges everything in the trash, a page at a time, through the contract every backend
/// offers; how many items went.
async fn empty_trash(backend: &dyn Backend) -> crate::domain::Result<u64> {
    let mut gone = 0;
    while let Some(page) = backend.trash(1, EMPTY_STEP).await? {
        if page.items.is_empty() {
            break;
        }
        let n = backend.purge(&page.items).await?;
        if n == 0 {
            // Nothing went although items are held: asking again would loop.
            break;
        }
        gone += n;
    }
    Ok(gone)
}

fn purged(n: u64) -> crate::backend::BulkReport {
    crate::backend::BulkReport {
        matched: n,
        changed: n,
        ..Default::default()
    }
}

/// How often a backend that can tell (a local database) is asked whether anything changed.
const CHANGE_POLL: Duration = Duration::from_millis(500);

/// Tells the app when the data changed elsewhere: a backend with a change marker is asked
/// every [`CHANGE_POLL`]; one without is simply refreshed every `every`, if at all.
async fn watch_changes(
    backend: Arc<dyn Backend>,
    tx: UnboundedSender<Msg>,
    every: Option<Duration>,
) {
    let mut last = None;
    loop {
        match backend.change_marker().await {
            Ok(Some(marker)) => {
                if last.is_some_and(|l| l != marker) && tx.send(Msg::Changed).is_err() {
                    return;
                }
                last = Some(marker);
                tokio::time::sleep(CHANGE_POLL).await;
            }
            Ok(None) => {
                let Some(every) = every else { return };
                tokio::time::sleep(every).await;
                if tx.send(Msg::Changed).is_err() {
                    return;
                }
            }
            Err(e) => {
                tracing::debug!(error = %e, "asking for changes failed");
                tokio::time::sleep(CHANGE_POLL * 4).await;
            }
        }
    }
}

/// Hands the app each visit of every link as it is counted, until the feed fails or is stopped
/// (its task aborted).
async fn follow_visits(
    backend: Arc<dyn Backend>,
    tx: UnboundedSender<Msg>,
    req: super::msg::RequestId,
) {
    let mut visits = match backend
        .live_visits(crate::domain::StatsScope::Account, None)
        .await
    {
        Ok(visits) => visits,
        Err(e) => {
            let _ = tx.send(Msg::LiveVisit {
                req,
                result: Err(e),
            });
            return;
        }
    };
    while let Some(result) = visits.next().await {
        let failed = result.is_err();
        if tx.send(Msg::LiveVisit { req, result }).is_err() || failed {
            return;
        }
    }
}

/// Stops a background task when dropped.
struct AbortOnDrop(tokio::task::JoinHandle<()>);

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        self.0.abort();
    }
}

async fn sleep_until(deadline: Option<std::time::Instant>) {
    if let Some(at) = deadline {
        tokio::time::sleep_until(tokio::time::Instant::from_std(at)).await;
    }
}

/// Carries out the app's commands: backend calls on tasks that answer by message. True when
/// another program had the screen meanwhile (an editor), so the next frame is drawn whole.
fn execute(
    app: &mut App,
    backend: &Arc<dyn Backend>,
    desktop: &Arc<dyn Desktop>,
    tx: &UnboundedSender<Msg>,
    feed: &mut Option<AbortOnDrop>,
) -> bool {
    let mut left_screen = false;
    // An answer given in place (the clipboard's, the editor's) may ask for more.
    let mut commands = app.take_commands();
    while !commands.is_empty() {
        for command in commands {
            tracing::debug!(?command, "command");
            match command {
                Command::Copy { text, what } => {
                    let result = desktop
                        .copy(&text)
                        .map(|()| format!("Copied {what}: {text}"));
                    app.update(Msg::Desktop(result));
                }
                Command::EditText { req, text } => {
                    // The app waits for the person here: the editor has the screen and the keys.
                    let result = desktop.edit(&text);
                    app.update(Msg::Edited { req, result });
                    left_screen = true;
                }
                Command::FollowVisits { req } => {
                    *feed = Some(AbortOnDrop(tokio::spawn(follow_visits(
                        Arc::clone(backend),
                        tx.clone(),
                        req,
                    ))));
                }
                Command::StopVisits => *feed = None,
                Command::OpenUrl(url) => {
                    let (desktop, tx) = (Arc::clone(desktop), tx.clone());
                    // A browser may keep the call waiting until it is closed.
                    tokio::task::spawn_blocking(move || {
                        let result = desktop.open(&url).map(|()| format!("Opened {url}"));
                        let _ = tx.send(Msg::Desktop(result));
                    });
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
        commands = app.take_commands();
    }
    left_screen
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
        Command::FetchTags { req } => Msg::Tags {
            req,
            result: backend.tags().await,
        },
        Command::RenameTag { req, from, to } => Msg::TagRenamed {
            req,
            result: backend.rename_tag(&from, &to).await,
            from,
            to,
        },
        Command::FetchDomains { req } => Msg::Domains {
            req,
            result: crate::backend::all_domains(backend).await,
        },
        Command::Bulk {
            req,
            selection,
            action,
            progress,
            label,
        } => Msg::Bulk {
            req,
            label,
            result: backend.bulk(&selection, &action, &progress).await,
        },
        Command::Undo {
            req,
            entry,
            progress,
        } => {
            let result = super::undo::run(backend, &entry.what, &progress).await;
            Msg::Undone { req, entry, result }
        }
        Command::DeleteSpace { req, space } => {
            let result = backend.delete_space(space.id).await;
            Msg::SpaceDeleted { req, space, result }
        }
        Command::FetchWebhooks { req } => Msg::Webhooks {
            req,
            result: backend.webhooks(super::webhooks::RECENT_DELIVERIES).await,
            held: backend.webhooks_held().await.ok().flatten(),
        },
        Command::FetchTrash { req } => Msg::Trash {
            req,
            result: backend.trash(1, super::trash::HELD as u32).await,
        },
        Command::Restore { req, items } => Msg::TrashDone {
            req,
            purged: false,
            result: backend.restore(&items).await,
        },
        Command::Purge { req, items } => Msg::TrashDone {
            req,
            purged: true,
            result: backend.purge(&items).await.map(purged),
        },
        Command::EmptyTrash { req } => Msg::TrashDone {
            req,
            purged: true,
            result: empty_trash(backend).await.map(purged),
        },
        Command::FetchRange {
            req,
            query,
            from,
            to,
        } => Msg::Range {
            req,
            result: range(backend, query, from, to).await,
        },
        Command::Save { req, request } => request.send(backend, req).await,
        Command::FetchStats { req, query } => Msg::Stats {
            req,
            result: backend.stats(&query).await,
        },
        Command::FetchOrphans { req, query } => Msg::Orphans {
            req,
            result: backend.orphan_stats(&query).await,
        },
        Command::FetchCounted { req, scope } => Msg::Counted {
            req,
            result: backend.counted_clicks(scope.clone()).await,
            scope,
        },
        Command::Copy { .. }
        | Command::OpenUrl(_)
        | Command::EditText { .. }
        | Command::FollowVisits { .. }
        | Command::StopVisits => return None,
    })
}

/// Terminal events from a reader thread (crossterm's reader blocks). The stream ends when the
/// terminal hangs up (its window closed, the connection dropped); the thread ends soon after the
/// stream is dropped.
pub fn terminal_events() -> (impl Stream<Item = io::Result<Event>> + Unpin, InputThread) {
    let (tx, rx) = futures::channel::mpsc::unbounded();
    let stop = Arc::new(AtomicBool::new(false));
    let flag = Arc::clone(&stop);
    let gate = Arc::new(InputGate::default());
    let held = Arc::clone(&gate);
    let (done_tx, done) = std::sync::mpsc::channel::<()>();
    std::thread::spawn(move || {
        let _done = done_tx;
        while !flag.load(Ordering::Relaxed) {
            if held.reader_must_wait() {
                std::thread::sleep(Duration::from_millis(10));
                continue;
            }
            // crossterm reads a hung-up terminal in an endless loop, so look first; this also
            // waits for input, and a zero-wait poll then picks up keys and resizes alike.
            if tty::wait(Duration::from_millis(50)) == tty::State::HungUp {
                break;
            }
            // crossterm reads a burst (a paste, fast typing) into its own buffer at once, and
            // the descriptor then has nothing more to say: take every event it holds before
            // waiting again, or each further key would wait out the timeout above.
            if !forward_ready(&tx) {
                break;
            }
        }
    });
    (rx, InputThread { stop, done, gate })
}

/// Sends every event crossterm has ready to `tx`; false when the reader should stop (the
/// terminal failed, or nobody listens any more).
fn forward_ready(tx: &futures::channel::mpsc::UnboundedSender<io::Result<Event>>) -> bool {
    loop {
        match event::poll(Duration::ZERO) {
            Ok(true) => {
                let event = event::read();
                let failed = event.is_err();
                if tx.unbounded_send(event).is_err() || failed {
                    return false;
                }
            }
            Ok(false) => return true,
            Err(e) => {
                let _ = tx.unbounded_send(Err(e));
                return false;
            }
        }
    }
}

/// Stops the reader thread when dropped, so no key is read after the terminal is restored. It
/// waits for the thread a moment, never forever: a thread stuck in a read must not keep the
/// program from ending.
pub struct InputThread {
    stop: Arc<AtomicBool>,
    done: std::sync::mpsc::Receiver<()>,
    gate: Arc<InputGate>,
}

impl InputThread {
    /// The gate that pauses this reader.
    pub fn gate(&self) -> Arc<InputGate> {
        Arc::clone(&self.gate)
    }
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
