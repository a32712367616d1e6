//! The app's one state: the panes, the filter, dialogs and toasts. Events and answers come in,
//! [`Command`]s go out; drawing (`app/screen.rs`) reads the state and nothing else. Keys are
//! routed dialog → search field → focused pane → global actions; clicks (`app/mouse.rs`) do
//! what the key of the same place does.

use std::collections::BTreeSet;
use std::sync::Arc;
use std::time::{Duration, Instant};

use jiff::tz::TimeZone;
use ratatui::crossterm::event::{Event, KeyEventKind};
use ratatui::layout::{Constraint, Layout, Rect};

mod forms;
mod mouse;
mod screen;
mod stats;
mod work;

use super::domains::DomainsView;
use super::filter::{FilterBar, FilterOutcome};
use super::help::{Help, Palette};
use super::keys::{Action, Key, KeyContext, KeyMap};
use super::links::LinksView;
use super::live::LiveView;
use super::marks::Marks;
use super::msg::{Command, Msg, RequestId};
use super::named::Named;
use super::popups::{
    Asks, ConfirmAction, Modal, ModalOutcome, Pick, Picker, PickerKind, Toast, ToastKind,
};
use super::qr_popup::QrPopup;
use super::spaces::SpacesView;
use super::theme::Theme;
use super::trash::TrashView;
use super::undo::UndoEntry;
use super::view::{Outcome, SPINNER};
use crate::config::Column;
use crate::domain::{Clock, Domain, Id, Link, TagCount, TagMatch, thousands};

/// Below this the layout cannot show a usable table.
pub const MIN_WIDTH: u16 = 70;
pub const MIN_HEIGHT: u16 = 20;

const TOAST_TIME: Duration = Duration::from_secs(4);
const SPINNER_STEP: Duration = Duration::from_millis(100);

/// Everything about the app that does not change while it runs.
pub struct AppConfig {
    pub profile: String,
    /// Backend kind and where it points, such as `local ~/.local/share/linkdeck/linkdeck.db`.
    pub location: String,
    pub theme: Theme,
    pub keys: KeyMap,
    pub mouse: bool,
    /// The zone dates are shown in.
    pub timezone: TimeZone,
    /// The backend keeps deleted things (the embedded service): a Trash pane, and undo of a
    /// delete brings links back whole.
    pub has_trash: bool,
    /// How often to look again at a backend that cannot say when it changed; `None` never.
    pub refresh_every: Option<Duration>,
    /// No change is offered, and one asked for is refused (see [`Action::changes_data`]).
    pub read_only: bool,
    /// The links table's columns besides the alias, as configured.
    pub columns: Vec<Column>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Pane {
    Links,
    Spaces,
    Live,
    Domains,
    Trash,
}

/// The screen's regions.
struct Areas {
    header: Rect,
    tabs: Rect,
    filter: Rect,
    main: Rect,
    hints: Rect,
}

impl Areas {
    /// What the Stats view covers: everything between the header and the hints.
    fn stats_body(&self) -> Rect {
        Rect {
            y: self.tabs.y,
            height: self.hints.y - self.tabs.y,
            ..self.main
        }
    }
}

fn areas(area: Rect) -> Areas {
    let [header, tabs, filter, main, hints] = Layout::vertical([
        Constraint::Length(1),
        Constraint::Length(1),
        Constraint::Length(1),
        Constraint::Min(1),
        Constraint::Length(1),
    ])
    .areas(area);
    Areas {
        header,
        tabs,
        filter,
        main,
        hints,
    }
}

pub struct App {
    cfg: AppConfig,
    clock: Arc<dyn Clock>,
    pane: Pane,
    filter: FilterBar,
    links: LinksView,
    spaces: SpacesView,
    domains: Option<Vec<Domain>>,
    domains_req: Option<RequestId>,
    /// The owner's tags, most used first; `None` until they come, or where the backend keeps
    /// none.
    tags: Option<Vec<TagCount>>,
    tags_req: Option<RequestId>,
    /// The Domains pane, over the same domains.
    domains_view: DomainsView,
    modal: Option<Modal>,
    toasts: Vec<Toast>,
    in_flight: BTreeSet<RequestId>,
    next_req: u64,
    spinner: usize,
    next_spin: Option<Instant>,
    size: Rect,
    quit: bool,
    commands: Vec<Command>,
    /// The open link or space form (see `app/forms.rs`).
    forms: forms::Forms,
    trash: TrashView,
    live: LiveView,
    /// The links the next action applies to (see `app/work.rs`).
    marks: Marks,
    /// What `u` takes back, newest last.
    undo: Vec<UndoEntry>,
    /// The bulk operation whose progress dialog is open.
    work: Option<RequestId>,
    /// The range being read for a `V` mark.
    range_req: Option<RequestId>,
    /// The link the cursor stays on while a refresh brings new rows.
    follow: Option<Id>,
    /// The Stats view (see `app/stats.rs`).
    stats: stats::StatsState,
    /// The actions run from the palette, most recent first: it offers them first.
    ran_from_palette: Vec<Action>,
    /// The space filter from before a space's links were opened from the Spaces pane: where
    /// esc goes back to.
    back_from_space: Option<Pick>,
    /// The links table's columns shown now (`C` changes them for the session).
    columns: BTreeSet<Column>,
}

impl App {
    pub fn new(cfg: AppConfig, clock: Arc<dyn Clock>, size: Rect) -> App {
        let mut app = App {
            cfg,
            clock,
            pane: Pane::Links,
            filter: FilterBar::default(),
            links: LinksView::default(),
            spaces: SpacesView::default(),
            domains: None,
            domains_req: None,
            tags: None,
            tags_req: None,
            domains_view: DomainsView::default(),
            modal: None,
            toasts: Vec::new(),
            in_flight: BTreeSet::new(),
            next_req: 0,
            spinner: 0,
            next_spin: None,
            size,
            quit: false,
            commands: Vec::new(),
            forms: forms::Forms::default(),
            trash: TrashView::default(),
            live: LiveView::default(),
            marks: Marks::default(),
            undo: Vec::new(),
            work: None,
            range_req: None,
            follow: None,
            stats: stats::StatsState::default(),
            ran_from_palette: Vec::new(),
            back_from_space: None,
            columns: BTreeSet::new(),
        };
        app.columns = app.cfg.columns.iter().copied().collect();
        app.fetch_spaces();
        app.fetch_domains();
        app.fetch_tags();
        app.sync();
        app
    }

    pub fn should_quit(&self) -> bool {
        self.quit
    }

    /// Work queued since the last call, for the runtime to carry out.
    pub fn take_commands(&mut self) -> Vec<Command> {
        std::mem::take(&mut self.commands)
    }

    /// Whether background work is in flight (the spinner shows).
    pub fn is_busy(&self) -> bool {
        !self.in_flight.is_empty()
    }

    pub fn pane(&self) -> Pane {
        self.pane
    }

    pub fn selected_link(&self) -> Option<&Link> {
        self.links.selected()
    }

    /// Links pages held in memory (bounded whatever the list's length).
    pub fn cached_pages(&self) -> usize {
        self.links.list.cached_pages()
    }

    /// How many links are marked.
    pub fn marked(&self) -> u64 {
        self.marks.count().n
    }

    /// How often the runtime should look for changes at a backend that cannot tell.
    pub fn refresh_every(&self) -> Option<Duration> {
        self.cfg.refresh_every
    }

    fn too_small(&self) -> bool {
        self.size.width < MIN_WIDTH || self.size.height < MIN_HEIGHT
    }

    fn request(&mut self) -> RequestId {
        self.next_req += 1;
        let req = RequestId(self.next_req);
        self.in_flight.insert(req);
        if self.next_spin.is_none() {
            self.next_spin = Some(Instant::now() + SPINNER_STEP);
        }
        req
    }

    fn answered(&mut self, req: RequestId) {
        self.in_flight.remove(&req);
        if self.in_flight.is_empty() {
            self.next_spin = None;
        }
    }

    /// Starts the Live pane's feed. It is not a question in flight (it never ends by itself),
    /// so it takes an id without keeping the spinner going.
    fn follow_visits(&mut self) {
        self.next_req += 1;
        let req = RequestId(self.next_req);
        self.live.follow(req);
        self.commands.push(Command::FollowVisits { req });
    }

    fn fetch_spaces(&mut self) {
        let req = self.request();
        self.spaces.expect(req);
        self.commands.push(Command::FetchSpaces { req });
    }

    fn fetch_domains(&mut self) {
        let req = self.request();
        self.domains_req = Some(req);
        self.commands.push(Command::FetchDomains { req });
    }

    fn fetch_tags(&mut self) {
        let req = self.request();
        self.tags_req = Some(req);
        self.commands.push(Command::FetchTags { req });
    }

    /// The owner's tag names, most used first (what the link form completes from).
    fn tag_names(&self) -> Vec<String> {
        let mut tags = self.tags.clone().unwrap_or_default();
        tags.sort_by(|a, b| b.links.cmp(&a.links).then_with(|| a.name.cmp(&b.name)));
        tags.into_iter().map(|t| t.name).collect()
    }

    /// Fits the panes to the screen and asks for the pages the Links table now needs.
    fn sync(&mut self) {
        let main = areas(self.size).main;
        self.links.list.set_rows(self.links.rows_for(main));
        self.spaces.set_rows(SpacesView::rows_for(main));
        self.trash.set_rows(SpacesView::rows_for(main));
        self.domains_view.set_rows(SpacesView::rows_for(main));
        self.live.set_rows(SpacesView::rows_for(main));
        for page in self.links.list.wanted() {
            let req = self.request();
            self.links.list.expect(page, req);
            let query = self.filter.query(page, self.links.list.per_page());
            self.commands.push(Command::FetchLinks { req, query });
        }
    }

    /// The question changed: start the list again from the top.
    fn query_changed(&mut self) {
        self.links.list.reset();
        self.links.error = None;
        self.follow = None;
        self.links.filtered = self.filter.is_filtered();
        self.sync();
    }

    /// Asks again for everything shown, keeping the rows (and the cursor on its link) until
    /// the answers come: after a change here, a change elsewhere, or `r`.
    fn refresh(&mut self) {
        self.follow = self.links.selected().map(|l| l.id);
        self.links.list.refresh();
        self.fetch_spaces();
        self.fetch_domains();
        self.fetch_tags();
        if self.cfg.has_trash {
            self.fetch_trash();
        }
        self.sync();
    }

    /// Puts the cursor back on the link it was on before a refresh, once that link's rows
    /// have arrived.
    fn keep_following(&mut self) {
        let Some(id) = self.follow else {
            return;
        };
        if self.links.selected().is_some_and(|l| l.id == id) {
            if self.links.list.cursor_is_fresh() {
                self.follow = None;
            }
            return;
        }
        if let Some(index) = self.links.list.find(|l| l.id == id) {
            self.links.list.select(index);
            self.sync();
        }
        if self.links.list.cursor_is_fresh() {
            self.follow = None;
        }
    }

    pub fn toast(&mut self, kind: ToastKind, text: impl Into<String>) {
        self.toasts.push(Toast {
            text: text.into(),
            kind,
            until: Instant::now() + TOAST_TIME,
        });
        if self.toasts.len() > 5 {
            self.toasts.remove(0);
        }
    }

    /// The next moment something changes by itself (a debounced search, a toast leaving, the
    /// spinner turning); `None` when nothing will until an event comes.
    pub fn next_deadline(&self) -> Option<Instant> {
        [
            self.filter.deadline(),
            self.toasts.iter().map(|t| t.until).min(),
            self.next_spin,
        ]
        .into_iter()
        .flatten()
        .min()
    }

    pub fn on_time(&mut self, now: Instant) {
        if let Some(at) = self.next_spin
            && at <= now
        {
            self.spinner = (self.spinner + 1) % SPINNER.len();
            self.next_spin = Some(now + SPINNER_STEP);
        }
        self.toasts.retain(|t| t.until > now);
        if self.filter.on_time(now) == FilterOutcome::Changed {
            self.query_changed();
        }
    }

    pub fn handle_event(&mut self, event: Event) {
        match event {
            Event::Key(k) if matches!(k.kind, KeyEventKind::Press | KeyEventKind::Repeat) => {
                let key = self.cfg.keys.key_in(k, self.key_context());
                self.handle_key(key);
            }
            Event::Paste(text) if !self.form_paste(&text) => match &mut self.modal {
                Some(modal) => {
                    modal.paste(&text);
                }
                None => {
                    self.filter.paste(&text, Instant::now());
                }
            },
            Event::Mouse(mouse) if self.cfg.mouse => self.handle_mouse(mouse),
            Event::Resize(width, height) => {
                self.size = Rect::new(0, 0, width, height);
                self.sync();
            }
            _ => {}
        }
    }

    /// Which actions a key may mean now: a form's, a dialog's, or the lists'.
    fn key_context(&self) -> KeyContext {
        match &self.forms.form {
            Some(form) if form.asks() => KeyContext::Dialogs,
            Some(_) => KeyContext::Forms,
            None if self.modal.is_some() => KeyContext::Dialogs,
            None => KeyContext::Lists,
        }
    }

    pub fn handle_key(&mut self, key: Key) {
        if key.is_ctrl('c') {
            // A form with changes asks first, as cancelling it does.
            if let Some(form) = &mut self.forms.form
                && !form.quit_requested()
            {
                return;
            }
            self.quit = true;
            return;
        }
        if self.too_small() {
            // Nothing can be seen: only quitting works, so no key acts unseen.
            if key.action == Some(Action::Quit) && !self.form_is_open() {
                self.quit = true;
            }
            return;
        }
        if self.form_key(key) {
            return;
        }
        if let Some(modal) = &mut self.modal {
            let outcome = modal.handle_key(key);
            self.modal_answered(outcome);
            return;
        }
        if self.stats_key(key) {
            return;
        }
        if self.filter.is_focused() {
            if self.filter.handle_key(key, Instant::now()) == FilterOutcome::Changed {
                self.query_changed();
            }
            return;
        }
        let outcome = match self.pane {
            Pane::Links => self.links.handle_key(key),
            Pane::Spaces => self.spaces.handle_key(key),
            Pane::Trash => self.trash.handle_key(key),
            Pane::Live => self.live.handle_key(key),
            Pane::Domains => self.domains_view.handle_key(key),
        };
        match outcome {
            Outcome::Handled => self.sync(),
            Outcome::OpenSpace(space) => {
                self.back_from_space = Some(std::mem::take(&mut self.filter.space));
                self.filter.space = Pick::One(space);
                self.pane = Pane::Links;
                self.query_changed();
            }
            Outcome::Ignored => {
                if let Some(action) = key.action {
                    self.global(action);
                }
            }
        }
    }

    /// The tag the tag picker lists at `index`.
    fn tag_named(&self, index: Id) -> Option<String> {
        let tags = self.tags.as_ref()?;
        tags.get(usize::try_from(index).ok()?)
            .map(|t| t.name.clone())
    }

    /// Shows `pane`, as its tab or the pane keys do.
    fn show_pane(&mut self, pane: Pane) {
        // The Live pane's feed runs while it is shown.
        if self.pane == Pane::Live && pane != Pane::Live {
            self.live.stop();
            self.commands.push(Command::StopVisits);
        }
        if pane == Pane::Live && self.live.feed().is_none() {
            self.follow_visits();
        }
        self.pane = pane;
        // Moving between panes by hand leaves the space's links for good.
        self.back_from_space = None;
        if self.pane == Pane::Trash {
            self.fetch_trash();
        }
    }

    /// Runs `action` as if its key had been pressed in the lists (the palette's Enter).
    fn run_action(&mut self, action: Action) {
        let key = Key {
            code: ratatui::crossterm::event::KeyCode::Null,
            modifiers: ratatui::crossterm::event::KeyModifiers::NONE,
            action: Some(action),
        };
        self.handle_key(key);
    }

    fn modal_answered(&mut self, outcome: ModalOutcome) {
        match outcome {
            ModalOutcome::Stay => {}
            ModalOutcome::Close => self.modal = None,
            ModalOutcome::Confirmed(action) => {
                self.modal = None;
                match action {
                    ConfirmAction::Bulk(work) => self.run_work(*work),
                    ConfirmAction::DeleteSpace(space) => {
                        let req = self.request();
                        self.commands.push(Command::DeleteSpace { req, space });
                    }
                    ConfirmAction::Purge(items) => self.purge(items),
                    ConfirmAction::EmptyTrash(_) => {
                        let req = self.request();
                        self.commands.push(Command::EmptyTrash { req });
                    }
                }
            }
            ModalOutcome::StatsOf(kind, choice) => self.stats_of_pick(kind, choice),
            ModalOutcome::Rename(_) if self.cfg.read_only => self.global(Action::Edit),
            ModalOutcome::Rename(choice) => {
                if let Some(tag) = choice.id().and_then(|i| self.tag_named(i)) {
                    self.modal = Some(work::tag_name_prompt(&tag, tag.clone(), None));
                }
            }
            ModalOutcome::Picked(kind, choice) => {
                self.modal = None;
                match kind {
                    PickerKind::Space => self.filter.space = choice,
                    PickerKind::Domain => self.filter.domain = choice.named(),
                    PickerKind::Tag if matches!(choice, Pick::Match(_)) => {
                        self.filter.tag_match = match self.filter.tag_match {
                            TagMatch::All => TagMatch::Any,
                            TagMatch::Any => TagMatch::All,
                        };
                    }
                    PickerKind::Tag => {
                        let tag = choice.id().and_then(|i| self.tag_named(i));
                        match tag {
                            // A tag picked again is taken out of the filter.
                            Some(tag) if self.filter.tags.contains(&tag) => {
                                self.filter.tags.retain(|t| *t != tag);
                            }
                            Some(tag) => {
                                self.filter.tags.push(tag);
                                self.filter.tags.sort();
                            }
                            None => self.filter.tags.clear(),
                        }
                    }
                    PickerKind::MoveTo => return self.move_to(choice.named()),
                    PickerKind::Column => {
                        let column = choice
                            .named()
                            .and_then(|c| Column::ALL.get(usize::try_from(c.id).ok()?));
                        if let Some(column) = column
                            && !self.columns.remove(column)
                        {
                            self.columns.insert(*column);
                        }
                        return;
                    }
                }
                self.pane = Pane::Links;
                self.query_changed();
            }
            ModalOutcome::Chosen(work) => {
                self.modal = None;
                self.run_work(*work);
            }
            ModalOutcome::Typed {
                asks,
                text,
                selection,
                what,
                many,
            } => {
                self.modal = None;
                match asks {
                    Asks::Expiry => self.typed_expiry(text, *selection, what, many),
                    Asks::Tags => self.typed_tags(text, *selection, what, many),
                    Asks::TagName => self.typed_tag_name(what, text),
                }
            }
            ModalOutcome::Run(action) => {
                self.modal = None;
                self.ran_from_palette.retain(|a| *a != action);
                self.ran_from_palette.insert(0, action);
                self.ran_from_palette.truncate(super::help::RECENT_KEPT);
                self.run_action(action);
            }
        }
    }

    fn global(&mut self, action: Action) {
        if self.cfg.read_only && action.changes_data() {
            self.toast(
                ToastKind::Error,
                "Read-only: this profile changes nothing (--read-only, or read_only = true)",
            );
            return;
        }
        match action {
            Action::Quit => self.quit = true,
            Action::Help => self.modal = Some(Modal::Help(Help::default())),
            Action::Palette => {
                self.modal = Some(Modal::Palette(Palette::new(
                    &self.ran_from_palette,
                    self.cfg.read_only,
                )))
            }
            Action::NextPane | Action::PrevPane => {
                let mut order = vec![Pane::Links, Pane::Spaces, Pane::Live, Pane::Domains];
                if self.cfg.has_trash {
                    order.push(Pane::Trash);
                }
                let at = order.iter().position(|p| *p == self.pane).unwrap_or(0);
                let step = if action == Action::NextPane {
                    1
                } else {
                    order.len() - 1
                };
                self.show_pane(order[(at + step) % order.len()]);
            }
            Action::Refresh => {
                self.links.error = None;
                self.refresh();
                if self.pane == Pane::Live {
                    self.follow_visits();
                }
            }
            Action::SpaceFilter => match self.spaces.is_loaded() {
                true => {
                    let choices = self.spaces.spaces().iter().map(Named::from).collect();
                    self.modal = Some(Modal::Picker(Picker::new(
                        PickerKind::Space,
                        choices,
                        &self.filter.space,
                    )));
                }
                false => self.toast(ToastKind::Error, "Spaces are not loaded yet"),
            },
            Action::DomainFilter => match &self.domains {
                Some(domains) => {
                    let choices = domains.iter().map(Named::from).collect();
                    let current = self.filter.domain.clone().map_or(Pick::First, Pick::One);
                    self.modal = Some(Modal::Picker(Picker::new(
                        PickerKind::Domain,
                        choices,
                        &current,
                    )));
                }
                None => self.toast(ToastKind::Error, "Domains are not loaded yet"),
            },
            Action::TagFilter => match &self.tags {
                Some(tags) => {
                    let choices = tags
                        .iter()
                        .enumerate()
                        .map(|(i, t)| Named {
                            id: i as Id,
                            name: format!(
                                "{} {} ({})",
                                if self.filter.tags.contains(&t.name) {
                                    "✓"
                                } else {
                                    " "
                                },
                                t.name,
                                thousands(t.links)
                            ),
                        })
                        .collect();
                    let matching = match self.filter.tag_match {
                        TagMatch::All => "match: every tag (pick for any)",
                        TagMatch::Any => "match: any tag (pick for every)",
                    };
                    self.modal = Some(Modal::Picker(
                        Picker::new(PickerKind::Tag, choices, &Pick::First)
                            .with_second(Pick::Match(matching.into())),
                    ));
                }
                None => self.toast(ToastKind::Error, "No tags here (yet)"),
            },
            Action::Stats | Action::Dashboard => self.stats_action(action),
            Action::Webhooks => self.open_webhooks(),
            Action::Columns => {
                let choices = Column::ALL
                    .iter()
                    .enumerate()
                    .map(|(i, c)| Named {
                        id: i as Id,
                        name: format!(
                            "{} {}",
                            if self.columns.contains(c) { "✓" } else { " " },
                            c.as_str()
                        ),
                    })
                    .collect();
                self.modal = Some(Modal::Picker(Picker::new(
                    PickerKind::Column,
                    choices,
                    &Pick::First,
                )));
            }
            Action::New if self.pane != Pane::Trash => self.open_new_form(),
            Action::Edit if self.pane != Pane::Trash => self.open_edit_form(),
            Action::EditInEditor if self.pane == Pane::Links => self.open_in_editor(),
            Action::Delete => match self.pane {
                Pane::Links => self.link_work(action),
                Pane::Spaces => self.ask_delete_space(),
                Pane::Trash => self.ask_purge(),
                Pane::Live | Pane::Domains => {}
            },
            Action::ToggleDisabled
            | Action::TogglePublic
            | Action::MoveToSpace
            | Action::SetExpiry
            | Action::TagLinks => self.link_work(action),
            Action::CopyShortUrl
            | Action::CopyDestination
            | Action::CopyAlias
            | Action::CopyMarkdown
            | Action::OpenInBrowser
            | Action::OpenShortUrl
            | Action::ShowQr => self.link_action(action),
            Action::Mark if self.pane == Pane::Trash => self.trash.toggle_mark(),
            Action::MarkAll if self.pane == Pane::Trash => self.trash.mark_all(),
            Action::ClearMarks if self.pane == Pane::Trash => {
                self.trash.clear_marks();
            }
            Action::EmptyTrash => self.ask_empty_trash(),
            Action::Mark if self.pane == Pane::Links => {
                self.mark_row();
                self.sync();
            }
            Action::MarkRange if self.pane == Pane::Links => self.mark_range(),
            Action::MarkAll if self.pane == Pane::Links => self.mark_all(),
            // With nothing marked, esc backs out of a space's links to the Spaces pane.
            Action::ClearMarks if self.marks.is_empty() && self.pane == Pane::Links => {
                if let Some(space) = self.back_from_space.take() {
                    self.filter.space = space;
                    self.pane = Pane::Spaces;
                    self.query_changed();
                }
            }
            Action::ClearMarks => self.marks.clear(),
            Action::Undo => self.undo_last(),
            Action::Restore => self.restore_selected(),
            filter_action => match self.filter.apply_action(filter_action) {
                FilterOutcome::Ignored => {}
                // Filters are about links: show them.
                FilterOutcome::Handled => self.pane = Pane::Links,
                FilterOutcome::Changed => {
                    self.pane = Pane::Links;
                    self.query_changed();
                }
            },
        }
    }

    fn link_action(&mut self, action: Action) {
        if self.pane != Pane::Links {
            return;
        }
        let Some(link) = self.links.selected() else {
            return;
        };
        match action {
            Action::CopyShortUrl => self.commands.push(Command::Copy {
                text: link.short_url.clone(),
                what: "short URL",
            }),
            Action::CopyDestination => self.commands.push(Command::Copy {
                text: link.url.clone(),
                what: "destination",
            }),
            Action::CopyAlias => self.commands.push(Command::Copy {
                text: link.alias.clone(),
                what: "alias",
            }),
            Action::CopyMarkdown => self.commands.push(Command::Copy {
                text: markdown_link(link),
                what: "Markdown link",
            }),
            Action::OpenInBrowser => self.commands.push(Command::OpenUrl(link.url.clone())),
            Action::ShowQr => {
                self.modal = Some(Modal::Qr(Box::new(QrPopup::new(&link.short_url))));
            }
            Action::OpenShortUrl => self.commands.push(Command::OpenUrl(link.short_url.clone())),
            _ => {}
        }
    }

    pub fn update(&mut self, msg: Msg) {
        match msg {
            Msg::LinksPage { req, page, result } => {
                self.answered(req);
                let had_total = self.links.list.total().is_some();
                if let Err(message) = self.links.accept(req, page, result)
                    && had_total
                {
                    self.toast(ToastKind::Error, format!("Could not load links: {message}"));
                }
                self.sync();
                self.keep_following();
                self.select_saved();
            }
            Msg::Spaces { req, result } => {
                self.answered(req);
                if let Err(message) = self.spaces.accept(req, result)
                    && self.pane == Pane::Spaces
                    && self.spaces.is_loaded()
                {
                    self.toast(
                        ToastKind::Error,
                        format!("Could not load spaces: {message}"),
                    );
                }
                self.select_saved();
            }
            Msg::Domains { req, result } => {
                self.answered(req);
                if self.domains_req == Some(req) {
                    self.domains_req = None;
                    match result {
                        Ok(domains) => {
                            self.domains_view.set(domains.clone());
                            self.domains = Some(domains);
                            self.select_saved();
                        }
                        Err(e) => tracing::warn!(error = %e, "could not load domains"),
                    }
                }
            }
            Msg::Tags { req, result } => {
                self.answered(req);
                if self.tags_req == Some(req) {
                    self.tags_req = None;
                    match result {
                        Ok(tags) => self.tags = Some(tags),
                        Err(e) => tracing::debug!(error = %e, "no tags"),
                    }
                }
            }
            Msg::TagRenamed {
                req,
                from,
                to,
                result,
            } => {
                self.answered(req);
                self.tag_renamed(from, to, result);
            }
            Msg::Bulk { .. } => self.work_done(msg),
            Msg::Undone { .. } => self.undone(msg),
            Msg::SpaceDeleted { req, space, result } => {
                self.answered(req);
                self.space_deleted(*space, result);
            }
            Msg::Webhooks { req, result, held } => {
                self.answered(req);
                if let Some(Modal::Webhooks(popup)) = &mut self.modal {
                    popup.accept(req, result, held);
                }
            }
            Msg::Trash { req, result } => {
                self.answered(req);
                if let Err(message) = self.trash.accept(req, result)
                    && self.pane == Pane::Trash
                {
                    self.toast(
                        ToastKind::Error,
                        format!("Could not load the trash: {message}"),
                    );
                }
            }
            Msg::LiveVisit { req, result } => self.live.accept(req, result),
            Msg::TrashDone {
                req,
                purged,
                result,
            } => {
                self.answered(req);
                self.trash_done(purged, result);
            }
            Msg::Range { req, result } => {
                self.answered(req);
                if self.range_req == Some(req) {
                    self.range_req = None;
                    self.range_marked(result);
                }
            }
            // Changed elsewhere: fetch what is shown again, disturbing nothing (an open form
            // or dialog stays as it is; the cursor stays on its link).
            Msg::Changed => self.refresh(),
            Msg::LinkSaved { .. } | Msg::SpaceSaved { .. } | Msg::DomainSaved { .. } => {
                self.form_saved(msg)
            }
            Msg::Stats { req, result } => self.stats_answered(req, result),
            Msg::Orphans { req, result } => self.orphans_answered(req, result),
            Msg::Counted { req, scope, result } => self.counted_answered(req, scope, result),
            Msg::Desktop(Ok(text)) => self.toast(ToastKind::Info, text),
            Msg::Desktop(Err(text)) => self.toast(ToastKind::Error, text),
            Msg::Edited { req, result } => self.editor_answered(req, result),
        }
    }
}

/// `[title](short URL)`, the alias standing in for a missing title; brackets and backslashes
/// in the text escaped so the link stays one link.
fn markdown_link(link: &crate::domain::Link) -> String {
    let text = link
        .title
        .as_deref()
        .filter(|t| !t.trim().is_empty())
        .unwrap_or(&link.alias);
    let mut escaped = String::with_capacity(text.len());
    for c in text.chars() {
        if matches!(c, '[' | ']' | '\\') {
            escaped.push('\\');
        }
        escaped.push(c);
    }
    format!("[{escaped}]({})", link.short_url)
}
