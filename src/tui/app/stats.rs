//! Where the Stats view meets the app: `S` opens the traffic of the selected link or space,
//! `T` the whole account's; while the view is open its keys go to it first and it fills the
//! screen under the header. Its questions become [`Command::FetchStats`], its answers come back
//! as [`Msg::Stats`].
//!
//! A server without statistics (phpShort 2.x) is said so once, in the view; after that `S` and
//! `T` only remind with a toast instead of asking again. The account's view also asks for the
//! orphan visits of its period ([`Command::FetchOrphans`]); a backend that records none is
//! not asked again.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;

use super::{App, Pane};
use crate::domain::{OrphanStats, PeriodSpec, Result, Stats, StatsScope};
use crate::tui::dialog::{Pick, PickerKind};
use crate::tui::keys::{Action, Key};
use crate::tui::msg::{Command, RequestId};
use crate::tui::popups::ToastKind;
use crate::tui::stats::{Shown, StatsOutcome, StatsView, Target};
use crate::tui::view::Ctx;

/// The open Stats view, and what the app remembers between openings.
#[derive(Debug, Default)]
pub struct StatsState {
    pub view: Option<StatsView>,
    /// The last period picked, which the next view starts with.
    period: PeriodSpec,
    /// Why the backend has no statistics, once it has said so.
    unsupported: Option<String>,
    /// The target whose clicks counted in all were last asked for, so they are asked once.
    counted_asked: Option<StatsScope>,
    /// The backend records no orphan visits: the dashboard stops asking for them.
    no_orphans: bool,
}

impl App {
    pub fn stats_is_open(&self) -> bool {
        self.stats.view.is_some()
    }

    /// `S` and `T`.
    pub(super) fn stats_action(&mut self, action: Action) {
        let target = match (action, self.pane) {
            (Action::Dashboard, _) => Target::account(),
            (_, Pane::Links) => match self.links.selected() {
                Some(link) => Target::link(link.id, &link.alias, &link.url).counted(link.clicks),
                None => return self.toast(ToastKind::Info, "No link selected"),
            },
            (_, Pane::Spaces) => match self.spaces.selected() {
                Some(space) => Target::group(StatsScope::Space(space.id), &space.name),
                None => return self.toast(ToastKind::Info, "No space selected"),
            },
            // A trashed link's traffic waits with it; restore it to see it.
            (_, Pane::Trash) => return,
            (_, Pane::Live | Pane::Domains) => Target::account(),
        };
        self.open_stats(target);
    }

    /// `S` on a space, a domain or a tag in its filter's picker: its traffic.
    pub(super) fn stats_of_pick(&mut self, kind: PickerKind, pick: Pick) {
        let Some(named) = pick.named() else {
            return;
        };
        let target = match kind {
            PickerKind::Space => Target::group(StatsScope::Space(named.id), &named.name),
            PickerKind::Domain => Target::group(StatsScope::Domain(named.id), &named.name),
            PickerKind::Tag => match self.tag_named(named.id) {
                Some(tag) => Target::group(StatsScope::Tag(tag.clone()), &tag),
                None => return,
            },
            PickerKind::MoveTo | PickerKind::Column => return,
        };
        self.modal = None;
        self.open_stats(target);
    }

    fn open_stats(&mut self, target: Target) {
        if self.stats.unsupported.is_some() {
            return self.toast(ToastKind::Info, "This server offers no statistics");
        }
        self.stats.view = Some(StatsView::new(target, self.stats.period));
        self.stats.counted_asked = None;
        self.fetch_stats();
    }

    fn fetch_stats(&mut self) {
        let Some(view) = &self.stats.view else {
            return;
        };
        let query = view.query();
        // A link's own count came with it from the list; another target's is summed once.
        let count = view.target.counted.is_none()
            && self.stats.counted_asked.as_ref() != Some(&query.scope);
        let scope = query.scope.clone();
        let req = self.request();
        if let Some(view) = &mut self.stats.view {
            view.expect(req);
        }
        let orphans =
            (query.scope == StatsScope::Account && !self.stats.no_orphans).then(|| query.clone());
        self.commands.push(Command::FetchStats { req, query });
        if let Some(query) = orphans {
            let req = self.request();
            if let Some(view) = &mut self.stats.view {
                view.expect_orphans(req);
            }
            self.commands.push(Command::FetchOrphans { req, query });
        }
        if count {
            self.stats.counted_asked = Some(scope.clone());
            let req = self.request();
            self.commands.push(Command::FetchCounted { req, scope });
        }
    }

    /// Gives `key` to the open Stats view; false when none is open. Keys the view does not
    /// use reach only the actions that make sense over it (quit, help, the dashboard).
    pub(super) fn stats_key(&mut self, key: Key) -> bool {
        let Some(view) = &mut self.stats.view else {
            return false;
        };
        match view.handle_key(key) {
            StatsOutcome::Handled => {}
            StatsOutcome::Fetch(query) => {
                self.stats.period = query.period;
                self.fetch_stats();
            }
            StatsOutcome::Close => self.stats.view = None,
            StatsOutcome::Ignored => match key.action {
                Some(a @ (Action::Quit | Action::Help)) => self.global(a),
                Some(Action::Dashboard)
                    if self
                        .stats
                        .view
                        .as_ref()
                        .is_some_and(|v| v.target.scope != StatsScope::Account) =>
                {
                    self.stats_action(Action::Dashboard)
                }
                _ => {}
            },
        }
        true
    }

    /// An answer to [`Command::FetchStats`].
    pub(super) fn stats_answered(&mut self, req: RequestId, result: Result<Stats>) {
        self.answered(req);
        if let Some(view) = &mut self.stats.view
            && view.accept(req, result)
            && let Shown::Unsupported(why) = &view.shown
        {
            self.stats.unsupported = Some(why.clone());
        }
    }

    /// An answer to [`Command::FetchOrphans`]. A backend without them is not asked again; any
    /// other failure leaves the dashboard without them, as the log says.
    pub(super) fn orphans_answered(&mut self, req: RequestId, result: Result<OrphanStats>) {
        self.answered(req);
        let result = match result {
            Err(crate::domain::Error::Unsupported(_)) => {
                self.stats.no_orphans = true;
                None
            }
            Err(e) => {
                tracing::warn!(error = %e, "the orphan visits could not be read");
                None
            }
            Ok(orphans) => Some(orphans),
        };
        if let Some(view) = &mut self.stats.view {
            view.accept_orphans(req, result);
        }
    }

    /// An answer to [`Command::FetchCounted`], for the view if it still shows `scope`. Without
    /// one the view says only what the history holds.
    pub(super) fn counted_answered(
        &mut self,
        req: RequestId,
        scope: StatsScope,
        result: Result<Option<u64>>,
    ) {
        self.answered(req);
        match result {
            Ok(counted) => {
                if let Some(view) = &mut self.stats.view
                    && view.target.scope == scope
                {
                    view.target.counted = counted;
                }
            }
            Err(e) => tracing::warn!(error = %e, "the clicks counted in all could not be read"),
        }
    }

    pub(super) fn render_stats(&self, area: Rect, buf: &mut Buffer, ctx: &Ctx) {
        if let Some(view) = &self.stats.view {
            view.render(area, buf, ctx);
        }
    }
}
