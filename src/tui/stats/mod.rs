//! The Stats view: the traffic of a link, a space or the whole account over a period. A period
//! picker (24 h to all time, stepped back and forth), a chart of clicks over time, the total
//! against the previous period, and panels of top countries, platforms, browsers, referrers,
//! languages and (for a space or the account) links; the account's also shows the period's
//! orphan visits (requests no link answered) by kind and path, when there were any. Enter on a
//! top link opens its own stats; Esc goes back the way it came.
//!
//! Like every view it never waits: a change asks the app for a [`StatsQuery`] and keeps showing
//! what it has until the answer with the expected request id arrives; older answers are dropped.

mod render;
#[cfg(test)]
pub(in crate::tui) mod snapshot_tests;

use ratatui::crossterm::event::KeyCode;

use super::keys::{Action, Key};
use super::msg::RequestId;
use crate::domain::{
    Dimension, Error, OrphanStats, PeriodSpec, Preset, Stats, StatsQuery, StatsScope, TopLink,
};

/// Whose traffic the view shows, and how it is named on screen.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Target {
    pub scope: StatsScope,
    /// `spring`, `Launch`, `every link`.
    pub name: String,
    /// A link's destination, shown beside its alias.
    pub detail: Option<String>,
    /// A link's own count of its clicks, when known: clicks imported, or counted before the
    /// traffic history was kept, are in it but have no date in the history.
    pub counted: Option<u64>,
}

impl Target {
    pub fn link(id: crate::domain::Id, alias: &str, url: &str) -> Target {
        Target {
            scope: StatsScope::Link(id),
            name: alias.to_owned(),
            detail: Some(url.to_owned()),
            counted: None,
        }
    }

    /// This target with the link's own count of its clicks.
    pub fn counted(self, clicks: u64) -> Target {
        Target {
            counted: Some(clicks),
            ..self
        }
    }

    /// A space, a domain or a tag, named as its list names it.
    pub fn group(scope: StatsScope, name: &str) -> Target {
        Target {
            scope,
            name: name.to_owned(),
            detail: None,
            counted: None,
        }
    }

    pub fn account() -> Target {
        Target {
            scope: StatsScope::Account,
            name: "every link".to_owned(),
            detail: None,
            counted: None,
        }
    }

    /// What the name names, said before it (the account's name says it all).
    fn kind(&self) -> Option<&'static str> {
        match self.scope {
            StatsScope::Link(_) => Some("link"),
            StatsScope::Space(_) => Some("space"),
            StatsScope::Domain(_) => Some("domain"),
            StatsScope::Tag(_) => Some("tag"),
            StatsScope::Account => None,
        }
    }
}

/// What the view holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Shown {
    /// Nothing yet: the first answer is on its way.
    Loading,
    Loaded(Box<Stats>),
    Failed(String),
    /// The backend has no statistics at all.
    Unsupported(String),
}

/// The panels under the chart, in order; Tab moves between them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Panel {
    Values(Dimension),
    TopLinks,
    /// Orphan visits by kind: the root, unknown aliases, other paths.
    OrphanKinds,
    /// The paths orphan visits asked for, most first.
    OrphanPaths,
}

/// What the view asks of the app after a key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StatsOutcome {
    /// Not a key of this view.
    Ignored,
    Handled,
    /// Ask the backend for this.
    Fetch(StatsQuery),
    Close,
}

#[derive(Debug, Clone)]
pub struct StatsView {
    pub target: Target,
    pub period: PeriodSpec,
    pub shown: Shown,
    /// The request whose answer the view waits for.
    expected: Option<RequestId>,
    focus: usize,
    /// The selected row of the top links.
    cursor: usize,
    /// Where Esc goes back to.
    back: Vec<(Target, PeriodSpec)>,
    /// The account's orphan visits over the period shown, once answered.
    pub orphans: Option<Box<OrphanStats>>,
    expected_orphans: Option<RequestId>,
}

impl StatsView {
    pub fn new(target: Target, period: PeriodSpec) -> StatsView {
        StatsView {
            target,
            period,
            shown: Shown::Loading,
            expected: None,
            focus: 0,
            cursor: 0,
            back: Vec::new(),
            orphans: None,
            expected_orphans: None,
        }
    }

    pub fn query(&self) -> StatsQuery {
        StatsQuery::new(self.target.scope.clone(), self.period)
    }

    /// The answer to wait for from now on.
    pub fn expect(&mut self, req: RequestId) {
        self.expected = Some(req);
    }

    /// The orphan visits to wait for from now on; those of another period are dropped.
    pub fn expect_orphans(&mut self, req: RequestId) {
        self.expected_orphans = Some(req);
        self.orphans = None;
    }

    /// Takes the orphan visits asked for last (`None`: none to show); false for any other.
    pub fn accept_orphans(&mut self, req: RequestId, orphans: Option<OrphanStats>) -> bool {
        if self.expected_orphans != Some(req) {
            return false;
        }
        self.expected_orphans = None;
        self.orphans = orphans.map(Box::new);
        let panels = self.panels().len();
        self.focus = self.focus.min(panels - 1);
        true
    }

    /// Whether a link's rules (or targeting) sent any of the period's clicks: only then does its
    /// "Sent by" panel say more than that every click went to the link's URL. Rules are a
    /// link's own, so a space or the account has none to show.
    fn sent_by_rules(&self) -> bool {
        let Shown::Loaded(stats) = &self.shown else {
            return false;
        };
        matches!(self.target.scope, StatsScope::Link(_))
            && stats
                .breakdown(Dimension::Rule)
                .is_some_and(|b| b.other > 0 || b.top.iter().any(|v| v.value.is_some()))
    }

    /// The orphan visits to show: the account's, when the period had some.
    pub fn shown_orphans(&self) -> Option<&OrphanStats> {
        self.orphans
            .as_deref()
            .filter(|o| self.target.scope == StatsScope::Account && o.total > 0)
    }

    pub fn is_loading(&self) -> bool {
        self.expected.is_some()
    }

    pub fn panels(&self) -> Vec<Panel> {
        let mut panels: Vec<Panel> = Dimension::ALL
            .into_iter()
            .filter(|d| *d != Dimension::Rule || self.sent_by_rules())
            .map(Panel::Values)
            .collect();
        if !matches!(self.target.scope, StatsScope::Link(_)) {
            panels.insert(0, Panel::TopLinks);
        }
        if self.shown_orphans().is_some() {
            panels.extend([Panel::OrphanKinds, Panel::OrphanPaths]);
        }
        panels
    }

    pub fn focused(&self) -> Panel {
        let panels = self.panels();
        panels[self.focus.min(panels.len() - 1)]
    }

    fn top_links(&self) -> &[TopLink] {
        match &self.shown {
            Shown::Loaded(stats) => stats.top_links.as_deref().unwrap_or(&[]),
            _ => &[],
        }
    }

    pub fn selected_link(&self) -> Option<&TopLink> {
        (self.focused() == Panel::TopLinks)
            .then(|| self.top_links().get(self.cursor))
            .flatten()
    }

    /// Takes an answer; false when it was not the one expected (stale, or for a view since
    /// left).
    pub fn accept(&mut self, req: RequestId, result: crate::domain::Result<Stats>) -> bool {
        if self.expected != Some(req) {
            return false;
        }
        self.expected = None;
        self.shown = match result {
            Ok(stats) => Shown::Loaded(Box::new(stats)),
            Err(Error::Unsupported(why)) => Shown::Unsupported(why),
            Err(e) => Shown::Failed(e.to_string()),
        };
        self.cursor = self.cursor.min(self.top_links().len().saturating_sub(1));
        true
    }

    fn repicked(&mut self, period: PeriodSpec) -> StatsOutcome {
        if period == self.period {
            return StatsOutcome::Handled;
        }
        self.period = period;
        StatsOutcome::Fetch(self.query())
    }

    pub fn handle_key(&mut self, key: Key) -> StatsOutcome {
        if key.code == KeyCode::Esc {
            return match self.back.pop() {
                Some((target, period)) => {
                    self.target = target;
                    self.period = period;
                    self.shown = Shown::Loading;
                    self.focus = 0;
                    self.cursor = 0;
                    StatsOutcome::Fetch(self.query())
                }
                None => StatsOutcome::Close,
            };
        }
        let panels = self.panels().len();
        match key.action {
            Some(Action::CyclePeriod) => {
                let preset = match self.period {
                    PeriodSpec::Preset { preset, .. } => preset.next(),
                    PeriodSpec::Dates { .. } => Preset::default(),
                };
                self.repicked(PeriodSpec::preset(preset))
            }
            Some(Action::EarlierPeriod) => self.repicked(self.period.stepped(1)),
            Some(Action::LaterPeriod) => self.repicked(self.period.stepped(-1)),
            Some(Action::Refresh) => StatsOutcome::Fetch(self.query()),
            Some(Action::NextPane) => {
                self.focus = (self.focus.min(panels - 1) + 1) % panels;
                StatsOutcome::Handled
            }
            Some(Action::PrevPane) => {
                self.focus = (self.focus.min(panels - 1) + panels - 1) % panels;
                StatsOutcome::Handled
            }
            Some(Action::Down | Action::Up | Action::Top | Action::Bottom)
                if self.focused() == Panel::TopLinks =>
            {
                let last = self.top_links().len().saturating_sub(1);
                self.cursor = match key.action {
                    Some(Action::Down) => (self.cursor + 1).min(last),
                    Some(Action::Up) => self.cursor.saturating_sub(1),
                    Some(Action::Top) => 0,
                    _ => last,
                };
                StatsOutcome::Handled
            }
            Some(Action::Select) => match self.selected_link().cloned() {
                Some(link) => {
                    let from = std::mem::replace(
                        &mut self.target,
                        Target::link(link.id, &link.alias, &link.url),
                    );
                    self.back.push((from, self.period));
                    self.shown = Shown::Loading;
                    self.focus = 0;
                    self.cursor = 0;
                    StatsOutcome::Fetch(self.query())
                }
                None => StatsOutcome::Handled,
            },
            // Keys of the lists behind stay with this view while it is open.
            Some(
                Action::Down
                | Action::Up
                | Action::Top
                | Action::Bottom
                | Action::PageDown
                | Action::PageUp
                | Action::HalfPageDown
                | Action::HalfPageUp,
            ) => StatsOutcome::Handled,
            _ => StatsOutcome::Ignored,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tui::keys::KeyMap;
    use ratatui::crossterm::event::{KeyEvent, KeyModifiers};

    fn key(code: KeyCode) -> Key {
        KeyMap::default().key(KeyEvent::new(code, KeyModifiers::NONE))
    }

    #[test]
    fn periods_cycle_and_step_without_passing_the_present() {
        let mut view = StatsView::new(Target::account(), PeriodSpec::preset(Preset::Days7));
        let StatsOutcome::Fetch(q) = view.handle_key(key(KeyCode::Char('['))) else {
            panic!("a step back asks again");
        };
        assert_eq!(q.period, PeriodSpec::preset(Preset::Days7).stepped(1));
        view.handle_key(key(KeyCode::Right));
        assert_eq!(
            view.handle_key(key(KeyCode::Right)),
            StatsOutcome::Handled,
            "nothing later than now"
        );
        let StatsOutcome::Fetch(q) = view.handle_key(key(KeyCode::Char('p'))) else {
            panic!("a new period asks again");
        };
        assert_eq!(q.period, PeriodSpec::preset(Preset::Days30));
    }

    #[test]
    fn a_stale_answer_is_dropped() {
        let mut view = StatsView::new(Target::account(), PeriodSpec::default());
        view.expect(RequestId(1));
        view.expect(RequestId(2));
        assert!(!view.accept(RequestId(1), Err(Error::Unavailable("old".into()))));
        assert_eq!(view.shown, Shown::Loading);
        assert!(view.accept(RequestId(2), Err(Error::Unavailable("down".into()))));
        assert!(matches!(view.shown, Shown::Failed(_)));
    }
}
