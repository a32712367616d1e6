//! The owner's webhook subscriptions and their latest deliveries, in a popup opened from the
//! palette (`webhooks`): each subscription's URL, events and state — running, failing, or
//! stopped and why — then its recent deliveries, failures with their last error. Read only:
//! `linkdeck webhooks` makes, resumes and deletes them. Up and Down scroll; any other key closes.

use ratatui::buffer::Buffer;
use ratatui::layout::{Constraint, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Paragraph, Widget, Wrap};

use super::msg::RequestId;
use super::theme::Theme;
use crate::domain::{WebhookActivity, plural, shown};

/// Deliveries shown under each subscription.
pub const RECENT_DELIVERIES: u32 = 5;

/// What the popup shows: loading, the subscriptions, or why there are none to show.
#[derive(Debug, Clone, PartialEq)]
pub enum State {
    Loading(RequestId),
    Hooks(Vec<WebhookActivity>),
    Message(String),
}

#[derive(Debug, Clone, PartialEq)]
pub struct WebhooksPopup {
    pub state: State,
    /// Why deliveries cannot go out (a server without its webhook key), said first.
    held: Option<String>,
    scroll: u16,
}

impl WebhooksPopup {
    pub fn loading(req: RequestId) -> WebhooksPopup {
        WebhooksPopup {
            state: State::Loading(req),
            held: None,
            scroll: 0,
        }
    }

    /// The answer to request `req`, if it is the one awaited.
    pub fn accept(
        &mut self,
        req: RequestId,
        result: crate::domain::Result<Option<Vec<WebhookActivity>>>,
        held: Option<String>,
    ) {
        if self.state != State::Loading(req) {
            return;
        }
        self.held = held;
        self.state = match result {
            Ok(Some(hooks)) if hooks.is_empty() => State::Message(
                "No webhooks. `linkdeck webhooks create --url URL --event EVENT` makes one.".into(),
            ),
            Ok(Some(hooks)) => State::Hooks(hooks),
            Ok(None) => State::Message(
                "This profile's server keeps no webhooks (a phpShort server has none; `linkdeck serve` does)."
                    .into(),
            ),
            Err(e) => State::Message(format!("Could not load the webhooks: {e}")),
        };
    }

    pub fn scroll(&mut self, down: bool) {
        self.scroll = if down {
            self.scroll.saturating_add(1)
        } else {
            self.scroll.saturating_sub(1)
        };
    }

    fn lines(&self, theme: &Theme) -> Vec<Line<'static>> {
        let mut lines = Vec::new();
        if let Some(held) = &self.held {
            lines.push(Line::styled(
                format!("Held: {}", shown(held)),
                theme.warning,
            ));
        }
        let hooks = match &self.state {
            State::Loading(_) => return vec![Line::styled("Loading…", theme.dim)],
            State::Message(m) => {
                lines.push(Line::raw(m.clone()));
                return lines;
            }
            State::Hooks(hooks) => hooks,
        };
        for (hook, deliveries) in hooks {
            if !lines.is_empty() {
                lines.push(Line::raw(""));
            }
            let (state, style) = match (&hook.stopped_at, hook.failures) {
                (Some(_), _) => ("stopped".to_owned(), theme.error),
                (None, 0) => ("running".to_owned(), theme.success),
                (None, n) => (format!("{n} failed in a row"), theme.warning),
            };
            lines.push(Line::from(vec![
                Span::styled(format!("#{} ", hook.id), theme.accent),
                Span::raw(shown(&hook.url).to_string()),
                Span::raw("  "),
                Span::styled(state, style),
            ]));
            let events: Vec<&str> = hook.events.iter().map(|e| e.name()).collect();
            lines.push(Line::styled(
                format!("   {} · {} waiting", events.join(", "), hook.pending),
                theme.dim,
            ));
            if let Some(reason) = &hook.stopped_reason {
                lines.push(Line::styled(format!("   {}", shown(reason)), theme.error));
            }
            for d in deliveries {
                let (mark, style) = match (d.delivered_at, d.attempts) {
                    (Some(_), _) => ("✓", theme.success),
                    (None, 0) => ("…", theme.dim),
                    (None, _) => ("✗", theme.error),
                };
                let mut text = format!(
                    "   {mark} {} {} · {}",
                    d.event,
                    d.created_at.strftime("%Y-%m-%d %H:%M:%S"),
                    plural(u64::from(d.attempts), "attempt")
                );
                if let (None, Some(error)) = (d.delivered_at, &d.last_error) {
                    text.push_str(&format!(" · {}", shown(error)));
                }
                lines.push(Line::styled(text, style));
            }
        }
        lines
    }

    pub fn render(&self, area: Rect, buf: &mut Buffer, theme: &Theme) {
        let lines = self.lines(theme);
        let width = area.width.min(100);
        // Rows the lines take once wrapped inside the borders.
        let rows = super::links::wrapped_height(&lines, width.saturating_sub(2));
        let height = rows.saturating_add(2);
        let area = area.centered(
            Constraint::Length(width),
            Constraint::Length(height.min(area.height)),
        );
        if let Some(inner) =
            super::dialog::dialog(area, buf, " Webhooks ", theme, theme.focused_border)
        {
            Paragraph::new(lines)
                .wrap(Wrap { trim: false })
                .scroll((self.scroll, 0))
                .render(inner, buf);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A server without its webhook key says so above its webhooks, as the backend put it.
    #[test]
    fn held_deliveries_are_said_first() {
        let mut popup = WebhooksPopup::loading(RequestId(3));
        let why = "https://links.example keeps no webhook key, so it cannot deliver";
        popup.accept(RequestId(3), Ok(Some(Vec::new())), Some(why.into()));
        let theme = Theme::new(crate::tui::theme::ThemeName::Mono);
        let lines: Vec<String> = popup
            .lines(&theme)
            .iter()
            .map(ToString::to_string)
            .collect();
        assert_eq!(lines[0], format!("Held: {why}"));
        assert!(lines[1].starts_with("No webhooks."), "{lines:?}");
        let mut plain = WebhooksPopup::loading(RequestId(4));
        plain.accept(RequestId(4), Ok(Some(Vec::new())), None);
        assert!(!plain.lines(&theme)[0].to_string().starts_with("Held"));
    }
}
