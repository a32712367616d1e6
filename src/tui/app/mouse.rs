//! Clicks and the wheel, with `mouse = true`: rows, the pane and status tabs, the filter bar,
//! and a confirm dialog's answers, each doing what its key does.

use ratatui::crossterm::event::{MouseButton, MouseEvent, MouseEventKind};

use super::{App, Pane, areas};
use crate::tui::hit::clicked;
use crate::tui::keys::{Action, Key};

impl App {
    pub(super) fn handle_mouse(&mut self, mouse: MouseEvent) {
        let a = areas(self.size);
        let main = a.main;
        if let Some(modal) = &self.modal {
            // The dialogs the lists draw over their pane; a confirm's answers take clicks.
            let over = if self.stats_is_open() {
                a.stats_body()
            } else {
                main
            };
            if mouse.kind == MouseEventKind::Down(MouseButton::Left)
                && let Some(outcome) = modal.click(over, mouse.column, mouse.row, &self.cfg.keys)
            {
                self.modal_answered(outcome);
            }
            return;
        }
        if self.form_is_open() {
            return;
        }
        if mouse.kind == MouseEventKind::Down(MouseButton::Left) && self.stats.view.is_none() {
            // The tabs and the filter bar: a click does what the key of the same place does.
            if mouse.row == a.tabs.y {
                if let Some(pane) = clicked(&self.pane_tabs(), a.tabs, mouse.column, false) {
                    self.show_pane(pane);
                } else if let Some(action) =
                    clicked(&self.status_tabs(a.tabs.width), a.tabs, mouse.column, true)
                {
                    self.global(action);
                }
                return;
            }
            if mouse.row == a.filter.y {
                let theme = self.cfg.theme.clone();
                if let Some(action) = self.filter.click(a.filter, mouse.column, &theme) {
                    self.global(action);
                }
                return;
            }
        }
        let step = |app: &mut App, action| {
            let key = Key {
                code: ratatui::crossterm::event::KeyCode::Null,
                modifiers: ratatui::crossterm::event::KeyModifiers::NONE,
                action: Some(action),
            };
            match app.pane {
                Pane::Links => app.links.handle_key(key),
                Pane::Spaces => app.spaces.handle_key(key),
                Pane::Trash => app.trash.handle_key(key),
                Pane::Live => app.live.handle_key(key),
                Pane::Domains => app.domains_view.handle_key(key),
            }
        };
        match mouse.kind {
            MouseEventKind::ScrollDown => {
                step(self, Action::Down);
            }
            MouseEventKind::ScrollUp => {
                step(self, Action::Up);
            }
            MouseEventKind::Down(MouseButton::Left) => match self.pane {
                Pane::Links => {
                    if let Some(i) = self.links.index_at(main, mouse.column, mouse.row) {
                        self.links.list.select(i);
                    }
                }
                Pane::Spaces => {
                    if let Some(i) = self.spaces.index_at(main, mouse.row) {
                        self.spaces.select(i);
                    }
                }
                Pane::Domains => {
                    if let Some(i) = self.domains_view.index_at(main, mouse.row) {
                        self.domains_view.select(i);
                    }
                }
                Pane::Trash | Pane::Live => {}
            },
            _ => return,
        }
        self.sync();
    }
}
