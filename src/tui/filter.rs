//! The filter bar: what the link list is asked for. Search is typed live (applied after a short
//! pause, so a fast typist does not send a query per letter), the rest cycles with single keys.

use std::time::{Duration, Instant};

use ratatui::buffer::Buffer;
use ratatui::crossterm::event::{Event, KeyCode};
use ratatui::layout::{Position, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::Widget;
use tui_input::Input;
use tui_input::backend::crossterm::EventHandler;

use super::dialog::Pick;
use super::hit::clicked;
use super::keys::{Action, Key};
use super::named::Named;
use super::theme::Theme;
use crate::domain::{LinkQuery, SearchBy, Sort, StatusFilter, TagMatch, clip, into_shown};

/// The most of a tag the filter bar shows: beside the other filters, 80 columns leave little.
const TAG_SHOWN: usize = 12;

/// How long typing must pause before the search is sent.
pub const SEARCH_DEBOUNCE: Duration = Duration::from_millis(150);

/// What a key did to the filter.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FilterOutcome {
    Ignored,
    Handled,
    /// The query changed: fetch again from the top.
    Changed,
}

#[derive(Debug, Clone, Default)]
pub struct FilterBar {
    input: Input,
    focused: bool,
    /// The search the list is showing; the input may be ahead of it while typing.
    applied: String,
    /// When the typed search becomes the applied one.
    due: Option<Instant>,
    pub by: SearchBy,
    pub status: StatusFilter,
    pub sort: Sort,
    /// `Pick::First` is any space.
    pub space: Pick,
    pub domain: Option<Named>,
    /// Links carrying these tags (every one, or any, as `tag_match` says); none: any link.
    pub tags: Vec<String>,
    pub tag_match: TagMatch,
}

impl FilterBar {
    pub fn is_focused(&self) -> bool {
        self.focused
    }

    #[cfg(test)]
    fn search_text(&self) -> &str {
        self.input.value()
    }

    /// The query for `page` of the list as filtered now.
    pub fn query(&self, page: u32, per_page: u32) -> LinkQuery {
        LinkQuery {
            search: (!self.applied.is_empty()).then(|| self.applied.clone()),
            by: self.by,
            status: self.status,
            space: self.space.space_filter(),
            domain: self.domain.as_ref().map(|d| d.id),
            tags: self.tags.clone(),
            tag_match: self.tag_match,
            sort: self.sort,
            page,
            per_page,
        }
    }

    pub fn is_filtered(&self) -> bool {
        !self.applied.is_empty()
            || self.status != StatusFilter::All
            || self.space != Pick::First
            || self.domain.is_some()
            || !self.tags.is_empty()
    }

    /// Raw keys while the search field has focus.
    pub fn handle_key(&mut self, key: Key, now: Instant) -> FilterOutcome {
        if !self.focused {
            return FilterOutcome::Ignored;
        }
        match key.code {
            KeyCode::Enter => {
                self.focused = false;
                self.apply_now()
            }
            KeyCode::Esc => {
                self.focused = false;
                self.input.reset();
                self.apply_now()
            }
            _ => {
                if self.input.handle_event(&Event::Key(key.event())).is_some() {
                    self.edited(now);
                }
                FilterOutcome::Handled
            }
        }
    }

    /// Bracketed paste into the search field (newlines become spaces).
    pub fn paste(&mut self, text: &str, now: Instant) -> bool {
        if !self.focused {
            return false;
        }
        let mut value = self.input.value().to_owned();
        let cursor = self.input.cursor();
        let at = value
            .char_indices()
            .nth(cursor)
            .map_or(value.len(), |(i, _)| i);
        let clean: String = text
            .chars()
            .map(|c| if c.is_control() { ' ' } else { c })
            .collect();
        value.insert_str(at, &clean);
        self.input = Input::new(value).with_cursor(cursor + clean.chars().count());
        self.edited(now);
        true
    }

    fn edited(&mut self, now: Instant) {
        self.due = Some(now + SEARCH_DEBOUNCE);
    }

    fn apply_now(&mut self) -> FilterOutcome {
        self.due = None;
        let typed = self.input.value().trim().to_owned();
        if typed == self.applied {
            FilterOutcome::Handled
        } else {
            self.applied = typed;
            FilterOutcome::Changed
        }
    }

    /// When the debounced search falls due.
    pub fn deadline(&self) -> Option<Instant> {
        self.due
    }

    /// Applies the typed search if its pause has passed.
    pub fn on_time(&mut self, now: Instant) -> FilterOutcome {
        match self.due {
            Some(due) if due <= now => self.apply_now(),
            _ => FilterOutcome::Ignored,
        }
    }

    /// The filter keys that work from the list.
    pub fn apply_action(&mut self, action: Action) -> FilterOutcome {
        match action {
            Action::Search => {
                self.focused = true;
                return FilterOutcome::Handled;
            }
            Action::CycleBy => self.by = cycle(&SearchBy::ALL, self.by),
            Action::CycleStatus => self.status = cycle(&StatusFilter::ALL, self.status),
            Action::StatusAll => self.status = StatusFilter::All,
            Action::StatusActive => self.status = StatusFilter::Active,
            Action::StatusExpired => self.status = StatusFilter::Expired,
            Action::StatusDisabled => self.status = StatusFilter::Disabled,
            Action::CycleSort => self.sort = cycle(&Sort::ALL, self.sort),
            Action::ClearFilters => *self = FilterBar::default(),
            _ => return FilterOutcome::Ignored,
        }
        FilterOutcome::Changed
    }

    /// The status tabs, for the line above the list, each with the action a click on it runs.
    /// `short`: each name cut to its first three letters (`Act`, `Exp`), where room is scarce.
    pub fn status_tabs(&self, theme: &Theme, short: bool) -> Vec<(Span<'static>, Option<Action>)> {
        const PICK: [Action; 4] = [
            Action::StatusAll,
            Action::StatusActive,
            Action::StatusExpired,
            Action::StatusDisabled,
        ];
        StatusFilter::ALL
            .into_iter()
            .zip(PICK)
            .enumerate()
            .map(|(i, (status, pick))| {
                let mut name = title_case(status.label());
                if short {
                    name = name.chars().take(3).collect();
                }
                let span = if status == self.status {
                    Span::styled(format!("[{} {name}]", i + 1), theme.tab_active)
                } else {
                    Span::styled(format!(" {} {name} ", i + 1), theme.dim)
                };
                (span, Some(pick))
            })
            .collect()
    }

    /// The filters right of the search field, each with the action a click on it runs.
    fn rest(&self, theme: &Theme) -> Vec<(Span<'static>, Option<Action>)> {
        let chosen = |name: Option<&Named>| match name {
            Some(n) => (into_shown(n.name.clone()), theme.accent),
            None => ("any".to_owned(), theme.text),
        };
        let (space, space_style) = match &self.space {
            Pick::NoSpace => ("none".to_owned(), theme.accent),
            pick => chosen(pick.clone().named().as_ref()),
        };
        let (domain, domain_style) = chosen(self.domain.as_ref());
        let mut rest = vec![
            (Span::styled(" by ", theme.dim), Some(Action::CycleBy)),
            (
                Span::styled(self.by.as_str(), theme.accent),
                Some(Action::CycleBy),
            ),
            (Span::styled(" │", theme.dim), None),
            (Span::styled(" sort ", theme.dim), Some(Action::CycleSort)),
            (
                Span::styled(self.sort.label(), theme.accent),
                Some(Action::CycleSort),
            ),
            (Span::styled(" │", theme.dim), None),
            (
                Span::styled(" space ", theme.dim),
                Some(Action::SpaceFilter),
            ),
            (Span::styled(space, space_style), Some(Action::SpaceFilter)),
            (Span::styled(" │", theme.dim), None),
            (
                Span::styled(" domain ", theme.dim),
                Some(Action::DomainFilter),
            ),
            (
                Span::styled(domain, domain_style),
                Some(Action::DomainFilter),
            ),
        ];
        // Shown only once chosen: most lists have no tags, and the bar is full at 80 columns.
        if let Some(first) = self.tags.first() {
            let shown = match self.tags.len() {
                1 => clip(first, TAG_SHOWN),
                n => format!("{}+{}", clip(first, TAG_SHOWN), n - 1),
            };
            let label = match (self.tag_match, self.tags.len()) {
                (TagMatch::Any, 2..) => " any tag ",
                _ => " tag ",
            };
            rest.extend([
                (Span::styled(" │", theme.dim), None),
                (Span::styled(label, theme.dim), Some(Action::TagFilter)),
                (Span::styled(shown, theme.accent), Some(Action::TagFilter)),
            ]);
        }
        rest
    }

    /// Where the search field ends and the other filters begin, in a bar `width` wide.
    fn search_width(&self, width: u16, theme: &Theme) -> u16 {
        let rest: usize = self.rest(theme).iter().map(|(s, _)| s.width()).sum();
        width
            .saturating_sub(u16::try_from(rest).unwrap_or(u16::MAX))
            .max(16)
            .min(width)
    }

    /// What a click at `column` of the bar drawn in `area` does: the search field focuses the
    /// search, a filter runs its key's action.
    pub fn click(&self, area: Rect, column: u16, theme: &Theme) -> Option<Action> {
        let search = self.search_width(area.width, theme);
        if column < area.x + search {
            return Some(Action::Search);
        }
        let rest_area = Rect {
            x: area.x + search,
            width: area.width - search,
            ..area
        };
        clicked(&self.rest(theme), rest_area, column, true)
    }

    /// Draws the search field and the other filters; returns where the cursor goes when the
    /// search field is focused.
    pub fn render(&self, area: Rect, buf: &mut Buffer, theme: &Theme) -> Option<Position> {
        let rest = Line::from(
            self.rest(theme)
                .into_iter()
                .map(|(span, _)| span)
                .collect::<Vec<_>>(),
        );
        let search_width = self.search_width(area.width, theme);
        let search_area = Rect {
            width: search_width,
            ..area
        };
        let prefix = "/ ";
        let field = search_area.width.saturating_sub(2) as usize;
        let scroll = self.input.visual_scroll(field);
        let value = self.input.value();
        let line = if value.is_empty() && !self.focused {
            Line::from(vec![
                Span::styled(prefix, theme.dim),
                Span::styled("search…", theme.dim),
            ])
        } else {
            let shown: String = value.chars().skip(scroll).take(field).collect();
            Line::from(vec![
                Span::styled(
                    prefix,
                    if self.focused {
                        theme.accent
                    } else {
                        theme.dim
                    },
                ),
                Span::styled(shown, theme.text),
            ])
        };
        line.render(search_area, buf);
        if area.width > search_width {
            let rest_area = Rect {
                x: area.x + search_width,
                width: area.width - search_width,
                ..area
            };
            rest.right_aligned().render(rest_area, buf);
        }
        self.focused.then(|| {
            let x = (self.input.visual_cursor().saturating_sub(scroll) + 2).min(field + 1);
            Position::new(area.x + u16::try_from(x).unwrap_or(0), area.y)
        })
    }
}

fn cycle<T: Copy + PartialEq>(all: &[T], current: T) -> T {
    let i = all.iter().position(|x| *x == current).unwrap_or(0);
    all[(i + 1) % all.len()]
}

fn title_case(s: &str) -> String {
    let mut chars = s.chars();
    chars
        .next()
        .map(|c| c.to_uppercase().chain(chars).collect())
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use ratatui::crossterm::event::KeyModifiers;

    use super::*;

    fn key(c: char) -> Key {
        Key {
            code: KeyCode::Char(c),
            modifiers: KeyModifiers::NONE,
            action: None,
        }
    }

    fn named(code: KeyCode) -> Key {
        Key {
            code,
            modifiers: KeyModifiers::NONE,
            action: None,
        }
    }

    #[test]
    fn typing_applies_after_the_pause() {
        let mut bar = FilterBar::default();
        bar.apply_action(Action::Search);
        let t0 = Instant::now();
        for c in "abc".chars() {
            assert_eq!(bar.handle_key(key(c), t0), FilterOutcome::Handled);
        }
        assert_eq!(bar.query(1, 100).search, None);
        assert_eq!(
            bar.on_time(t0 + Duration::from_millis(10)),
            FilterOutcome::Ignored
        );
        assert_eq!(bar.on_time(t0 + SEARCH_DEBOUNCE), FilterOutcome::Changed);
        assert_eq!(bar.query(1, 100).search.as_deref(), Some("abc"));
    }

    #[test]
    fn enter_keeps_and_esc_clears() {
        let mut bar = FilterBar::default();
        bar.apply_action(Action::Search);
        let now = Instant::now();
        bar.handle_key(key('x'), now);
        assert_eq!(
            bar.handle_key(named(KeyCode::Enter), now),
            FilterOutcome::Changed
        );
        assert!(!bar.is_focused());
        assert_eq!(bar.query(1, 100).search.as_deref(), Some("x"));
        bar.apply_action(Action::Search);
        assert_eq!(
            bar.handle_key(named(KeyCode::Esc), now),
            FilterOutcome::Changed
        );
        assert_eq!(bar.query(1, 100).search, None);
        assert_eq!(bar.search_text(), "");
    }

    #[test]
    fn actions_cycle_and_clear() {
        let mut bar = FilterBar::default();
        bar.apply_action(Action::CycleSort);
        assert_eq!(bar.sort, Sort::Asc);
        bar.apply_action(Action::StatusExpired);
        assert_eq!(bar.query(1, 100).status, StatusFilter::Expired);
        bar.apply_action(Action::CycleStatus);
        assert_eq!(bar.status, StatusFilter::Disabled);
        bar.apply_action(Action::CycleBy);
        bar.apply_action(Action::ClearFilters);
        assert_eq!(bar.status, StatusFilter::All);
        assert_eq!(bar.sort, Sort::Desc);
        assert_eq!(bar.by, SearchBy::Title);
    }

    #[test]
    fn paste_inserts_at_the_cursor() {
        let mut bar = FilterBar::default();
        bar.apply_action(Action::Search);
        bar.paste("promo\n2026", Instant::now());
        assert_eq!(bar.search_text(), "promo 2026");
    }
}
