//! The two views of the key map: the help overlay (every action and its keys, filtered as you
//! type) and the command palette (`:` or ctrl-p: the actions of the lists, matched fuzzily,
//! Enter runs one). Both read the live [`KeyMap`], so they show a rebinding at once, and a new
//! action appears in both without further work.

use nucleo_matcher::pattern::{CaseMatching, Normalization, Pattern};
use nucleo_matcher::{Config, Matcher, Utf32Str};
use ratatui::buffer::Buffer;
use ratatui::layout::{Constraint, Layout, Position, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Paragraph, Widget};

use super::dialog::{ModalOutcome, dialog};
use super::form::TextField;
use super::format::{clip, width};
use super::keys::{Action, Key, KeyContext, KeyMap, description};
use super::theme::Theme;

/// The widest a key label column grows before labels are cut with "…".
const LABEL_MAX: usize = 16;

/// Where each action works, for the help's grouping words.
fn place(action: Action) -> &'static str {
    if action.works_in(KeyContext::Lists) && action.works_in(KeyContext::Forms) {
        "everywhere"
    } else if action.works_in(KeyContext::Lists) {
        "lists"
    } else if action.works_in(KeyContext::Forms) && action.works_in(KeyContext::Dialogs) {
        "forms, dialogs"
    } else if action.works_in(KeyContext::Forms) {
        "forms"
    } else {
        "dialogs"
    }
}

#[derive(Debug, Clone, Default)]
pub struct Help {
    filter: TextField,
    scroll: u16,
}

impl Help {
    fn shown(&self, keys: &KeyMap) -> Vec<Action> {
        let needle = self.filter.value().trim().to_lowercase();
        Action::ALL
            .into_iter()
            .filter(|a| {
                needle.is_empty()
                    || description(*a).to_lowercase().contains(&needle)
                    || a.as_str().contains(&needle)
                    || keys.label(*a).to_lowercase().contains(&needle)
                    || place(*a).contains(&needle)
            })
            .collect()
    }

    pub fn handle_key(&mut self, key: &Key) -> ModalOutcome {
        if key.is_text() {
            self.filter.handle_key(key);
            self.scroll = 0;
            return ModalOutcome::Stay;
        }
        match key.action {
            Some(Action::Down) => self.scroll = self.scroll.saturating_add(1),
            Some(Action::Up) => self.scroll = self.scroll.saturating_sub(1),
            Some(Action::Cancel) => return ModalOutcome::Close,
            _ => {
                if self.filter.handle_key(key) {
                    self.scroll = 0;
                }
            }
        }
        ModalOutcome::Stay
    }

    pub fn paste(&mut self, text: &str) -> bool {
        self.filter.paste(text)
    }

    pub fn render(
        &self,
        area: Rect,
        buf: &mut Buffer,
        theme: &Theme,
        keys: &KeyMap,
    ) -> Option<Position> {
        let shown = self.shown(keys);
        let label_w = shown
            .iter()
            .map(|a| width(&keys.label(*a)))
            .max()
            .unwrap_or(1)
            .min(LABEL_MAX);
        let half = shown.len().div_ceil(2).max(1);
        let rows = u16::try_from(half).unwrap_or(u16::MAX);
        let height = (rows + 6).min(area.height);
        let rect = area.centered(
            Constraint::Length(area.width.min(100)),
            Constraint::Length(height),
        );
        let inner = dialog(rect, buf, " Keys ", theme, theme.focused_border)?;
        let [search, _, columns, foot] = Layout::vertical([
            Constraint::Length(1),
            Constraint::Length(1),
            Constraint::Min(1),
            Constraint::Length(2),
        ])
        .areas(inner);
        let [l, r] = Layout::horizontal([Constraint::Fill(1), Constraint::Fill(1)]).areas(columns);
        let entry = |action: Action, column: Rect| {
            let label = clip(&keys.label(action), label_w);
            let room = usize::from(column.width).saturating_sub(label_w + 2);
            Line::from(vec![
                Span::styled(format!("{label:>label_w$} "), theme.accent),
                Span::raw(clip(description(action), room)),
            ])
        };
        let left: Vec<Line> = shown[..half.min(shown.len())]
            .iter()
            .map(|a| entry(*a, l))
            .collect();
        let right: Vec<Line> = shown[half.min(shown.len())..]
            .iter()
            .map(|a| entry(*a, r))
            .collect();
        let typed = self.filter.value();
        let search_line = if typed.is_empty() {
            Line::styled("type to filter the keys", theme.dim)
        } else {
            Line::from(vec![
                Span::styled("filter: ", theme.dim),
                Span::raw(typed.to_owned()),
                Span::styled(
                    format!("  ({} of {})", shown.len(), Action::ALL.len()),
                    theme.dim,
                ),
            ])
        };
        search_line.render(search, buf);
        if shown.is_empty() {
            Line::styled("no key matches", theme.dim).render(columns, buf);
        }
        Paragraph::new(left).scroll((self.scroll, 0)).render(l, buf);
        Paragraph::new(right)
            .scroll((self.scroll, 0))
            .render(r, buf);
        Paragraph::new(vec![
            Line::styled(
                "Search field: Enter keeps, Esc clears. ctrl-c quits anywhere.",
                theme.dim,
            ),
            Line::from(vec![
                Span::styled(keys.first(Action::Cancel), theme.accent),
                Span::styled(
                    " closes · keys are set in [keys] of the configuration",
                    theme.dim,
                ),
            ]),
        ])
        .render(foot, buf);
        None
    }
}

/// What people reach for most, first in the palette after what they ran last; quitting is
/// offered last, so `:` then Enter never ends the app.
const COMMON: [Action; 18] = [
    Action::New,
    Action::Edit,
    Action::Search,
    Action::CopyShortUrl,
    Action::CopyDestination,
    Action::OpenInBrowser,
    Action::OpenShortUrl,
    Action::ShowQr,
    Action::ToggleDisabled,
    Action::MoveToSpace,
    Action::SetExpiry,
    Action::TagLinks,
    Action::Delete,
    Action::Undo,
    Action::Stats,
    Action::Dashboard,
    Action::SpaceFilter,
    Action::TagFilter,
];

/// How many of the actions run last the palette remembers.
pub const RECENT_KEPT: usize = 5;

/// The actions the palette offers, in the order it lists them: those run from it last (most
/// recent first), the common ones, the rest in the key map's order, and quitting last. Only
/// what the lists do: a form's or a dialog's own keys have nothing to act on from here.
fn offered(recent: &[Action], read_only: bool) -> Vec<Action> {
    let usable = |a: &Action| {
        a.works_in(KeyContext::Lists) && *a != Action::Palette && !(read_only && a.changes_data())
    };
    let mut order: Vec<Action> = Vec::with_capacity(Action::ALL.len());
    let candidates = recent
        .iter()
        .chain(&COMMON)
        .chain(Action::ALL.iter().filter(|a| **a != Action::Quit))
        .chain(&[Action::Quit]);
    for action in candidates {
        if usable(action) && !order.contains(action) {
            order.push(*action);
        }
    }
    order
}

#[derive(Debug, Clone, Default)]
pub struct Palette {
    input: TextField,
    cursor: usize,
    /// The actions run from the palette last, most recent first.
    recent: Vec<Action>,
    /// Changes are not offered (a read-only profile).
    read_only: bool,
}

impl Palette {
    pub fn new(recent: &[Action], read_only: bool) -> Palette {
        Palette {
            recent: recent.to_vec(),
            read_only,
            ..Palette::default()
        }
    }

    /// The offered actions that match what was typed, best first.
    pub fn matches(&self) -> Vec<Action> {
        let offered = offered(&self.recent, self.read_only);
        let typed = self.input.value().trim();
        if typed.is_empty() {
            return offered;
        }
        let pattern = Pattern::parse(typed, CaseMatching::Ignore, Normalization::Smart);
        let mut matcher = Matcher::new(Config::DEFAULT);
        let mut buf = Vec::new();
        let mut scored: Vec<(u32, usize, Action)> = offered
            .into_iter()
            .enumerate()
            .filter_map(|(rank, a)| {
                let text = format!("{} {}", description(a), a.as_str().replace('_', " "));
                pattern
                    .score(Utf32Str::new(&text, &mut buf), &mut matcher)
                    .map(|score| (score, rank, a))
            })
            .collect();
        // Best first; ties keep the order offered.
        scored.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
        scored.into_iter().map(|(_, _, a)| a).collect()
    }

    pub fn handle_key(&mut self, key: &Key) -> ModalOutcome {
        if key.is_text() {
            self.input.handle_key(key);
            self.cursor = 0;
            return ModalOutcome::Stay;
        }
        let found = self.matches();
        match key.action {
            Some(Action::Down) => {
                self.cursor = (self.cursor + 1).min(found.len().saturating_sub(1))
            }
            Some(Action::Up) => self.cursor = self.cursor.saturating_sub(1),
            Some(Action::Select) => {
                return match found.get(self.cursor) {
                    Some(action) => ModalOutcome::Run(*action),
                    None => ModalOutcome::Stay,
                };
            }
            Some(Action::Cancel) => return ModalOutcome::Close,
            _ => {
                if self.input.handle_key(key) {
                    self.cursor = 0;
                }
            }
        }
        ModalOutcome::Stay
    }

    pub fn paste(&mut self, text: &str) -> bool {
        self.cursor = 0;
        self.input.paste(text)
    }

    pub fn render(
        &self,
        area: Rect,
        buf: &mut Buffer,
        theme: &Theme,
        keys: &KeyMap,
    ) -> Option<Position> {
        let found = self.matches();
        let list_rows = usize::from(area.height.saturating_sub(6)).clamp(1, 12);
        let height = u16::try_from(list_rows).unwrap_or(12) + 4;
        let rect = Rect {
            y: area.y + 1,
            ..area.centered(
                Constraint::Length(area.width.min(70)),
                Constraint::Length(height),
            )
        };
        let inner = dialog(rect, buf, " Run an action ", theme, theme.focused_border)?;
        let field_w = inner.width.saturating_sub(2);
        let view = self.input.view(field_w);
        Line::from(vec![
            Span::styled(": ", theme.accent),
            Span::raw(view.text.clone()),
        ])
        .render(Rect { height: 1, ..inner }, buf);
        let skip = self.cursor.saturating_sub(list_rows - 1);
        let key_w = 12;
        let name_w = usize::from(inner.width).saturating_sub(key_w + 3);
        let lines: Vec<Line> = found
            .iter()
            .enumerate()
            .skip(skip)
            .take(list_rows)
            .map(|(i, action)| {
                let name = clip(description(*action), name_w);
                let key = clip(&keys.label(*action), key_w);
                let text = format!("  {name:<name_w$} {key:>key_w$}");
                if i == self.cursor {
                    Line::styled(format!("▶{}", &text[1..]), theme.selected)
                } else {
                    Line::raw(text)
                }
            })
            .collect();
        let list = Rect {
            y: inner.y + 2,
            height: inner.height.saturating_sub(2),
            ..inner
        };
        if found.is_empty() {
            Line::styled("  no action matches", theme.dim).render(list, buf);
        }
        Paragraph::new(lines).render(list, buf);
        Some(Position::new(inner.x + 2 + view.cursor, inner.y))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_palette_finds_actions_by_fuzzy_words() {
        let mut palette = Palette {
            input: TextField::new("toggle dis"),
            ..Palette::default()
        };
        assert_eq!(palette.matches().first(), Some(&Action::ToggleDisabled));
        palette.input = TextField::new("undo");
        assert_eq!(palette.matches().first(), Some(&Action::Undo));
        assert!(
            !palette.matches().contains(&Action::Submit),
            "form keys are not offered"
        );
    }

    #[test]
    fn the_palette_offers_what_was_run_last_then_the_common_actions_and_quit_last() {
        let fresh = Palette::new(&[], false).matches();
        assert_eq!(fresh.first(), Some(&Action::New));
        assert_eq!(fresh.last(), Some(&Action::Quit));
        let used = Palette::new(&[Action::Stats, Action::ShowQr], false).matches();
        assert_eq!(used[..3], [Action::Stats, Action::ShowQr, Action::New]);
        assert_eq!(
            used.iter().filter(|a| **a == Action::Stats).count(),
            1,
            "an action is offered once"
        );
    }
}
