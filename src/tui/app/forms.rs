//! Where the forms meet the app: `n` and `e` open them, their keys and pastes go to them first,
//! a save becomes a [`Command::Save`] and its answer closes the form (selecting the saved record
//! and confirming with a toast) or hands the error back to the still open form. ctrl-e edits a
//! link in `$EDITOR` instead (`tui/editor.rs`): its save goes the same way, and a refusal opens
//! the editor again with what is wrong.
//!
//! Kept apart from `app.rs` so the browsing app and the editing half can change independently;
//! `app.rs` only calls in here.

use ratatui::buffer::Buffer;
use ratatui::layout::{Position, Rect};

use super::{App, Pane};
use crate::domain::{Id, Link};
use crate::tui::editor::{self, Edited};
use crate::tui::form::{DomainForm, Form, FormOutcome, LinkForm, SaveRequest, SpaceForm};
use crate::tui::keys::Key;
use crate::tui::msg::{Command, Msg, RequestId};
use crate::tui::popups::ToastKind;
use crate::tui::undo::UndoWhat;
use crate::tui::view::{Ctx, SPINNER};

/// How far from the cursor a saved link is looked for.
const SELECT_WINDOW: usize = 500;

/// A record just saved, to select once the list that holds it has loaded.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Saved {
    Link(Id),
    Space(Id),
    Domain(Id),
}

/// The open form and the save in flight, if any.
#[derive(Debug, Default)]
pub struct Forms {
    pub form: Option<Form>,
    pub req: Option<RequestId>,
    pub select: Option<Saved>,
    /// How to take back the save in flight, once it succeeds.
    pub undo: Option<(UndoWhat, Option<String>)>,
    /// The link being edited in `$EDITOR`, and the text last saved there (shown again, with
    /// what is wrong, when the save is refused).
    pub editing: Option<Editing>,
}

#[derive(Debug)]
pub struct Editing {
    link: Box<Link>,
    req: RequestId,
    text: String,
}

impl App {
    pub fn form_is_open(&self) -> bool {
        self.forms.form.is_some()
    }

    /// `n`: a new link in the Links pane, a new space in the Spaces pane.
    pub(super) fn open_new_form(&mut self) {
        if self.pane == Pane::Domains {
            return self.toast(
                ToastKind::Info,
                "Domains are added with `linkdeck domains add NAME`",
            );
        }
        self.forms.form = Some(match self.pane {
            Pane::Links | Pane::Live | Pane::Domains => LinkForm::create(
                self.spaces.spaces().to_vec(),
                self.domains.clone().unwrap_or_default(),
                self.cfg.timezone.clone(),
            )
            .in_space(self.filter.space.space_filter().space())
            .with_known_tags(self.tag_names())
            .into(),
            Pane::Spaces | Pane::Trash => SpaceForm::create().into(),
        });
    }

    /// `e`: the selected link or space.
    pub(super) fn open_edit_form(&mut self) {
        let form: Option<Form> = match self.pane {
            Pane::Links => self.links.selected().cloned().map(|link| {
                LinkForm::edit(
                    link,
                    self.spaces.spaces().to_vec(),
                    self.domains.clone().unwrap_or_default(),
                    self.cfg.timezone.clone(),
                )
                .with_known_tags(self.tag_names())
                .into()
            }),
            Pane::Live => None,
            Pane::Domains => self
                .domains_view
                .selected()
                .cloned()
                .map(|domain| DomainForm::edit(domain).into()),
            Pane::Spaces | Pane::Trash => self
                .spaces
                .selected()
                .cloned()
                .map(|space| SpaceForm::edit(space).into()),
        };
        if form.is_some() {
            self.forms.form = form;
        }
    }

    /// ctrl-e: the selected link's fields in `$EDITOR`, as TOML.
    pub(super) fn open_in_editor(&mut self) {
        let Some(link) = self.links.selected().cloned() else {
            return;
        };
        let text = editor::text_of(&link, &self.cfg.timezone);
        self.edit_again(Box::new(link), text);
    }

    /// Opens `text` in the editor for `link`.
    fn edit_again(&mut self, link: Box<Link>, text: String) {
        let req = self.request();
        self.forms.editing = Some(Editing {
            link,
            req,
            text: text.clone(),
        });
        self.commands.push(Command::EditText { req, text });
    }

    /// The editor closed: save what changed, or open it again with what is wrong.
    pub(super) fn editor_answered(&mut self, req: RequestId, result: Result<String, String>) {
        let Some(editing) = self.forms.editing.take_if(|e| e.req == req) else {
            return;
        };
        let text = match result {
            Ok(text) => text,
            Err(why) => return self.toast(ToastKind::Error, why),
        };
        let spaces = self.spaces.spaces().to_vec();
        match editor::read(&editing.link, &text, &spaces, &self.cfg.timezone) {
            Edited::Unchanged => self.toast(
                ToastKind::Info,
                format!("Nothing changed in {}", editing.link.alias),
            ),
            Edited::Mistakes(mistakes) => {
                self.edit_again(editing.link, editor::with_mistakes(&text, &mistakes));
            }
            Edited::Update(input) => {
                let (back, lost) =
                    crate::backend::bulk::revert_of_edit(&editing.link, &input, &self.cfg.timezone);
                let note = lost.then(|| "its earlier password cannot come back".to_owned());
                self.forms.undo = Some((
                    UndoWhat::Edit {
                        id: editing.link.id,
                        input: back,
                    },
                    note,
                ));
                let req = self.request();
                self.forms.req = Some(req);
                let id = editing.link.id;
                // Kept until the answer: a refused save opens the editor again.
                self.forms.editing = Some(Editing {
                    req,
                    text,
                    ..editing
                });
                self.commands.push(Command::Save {
                    req,
                    request: Box::new(SaveRequest::UpdateLink(id, *input)),
                });
            }
        }
    }

    /// Gives `key` to the open form; false when no form is open.
    pub(super) fn form_key(&mut self, key: Key) -> bool {
        let Some(form) = &mut self.forms.form else {
            // The person has moved on: a saved record still loading is no longer selected.
            self.forms.select = None;
            return false;
        };
        match form.handle_key(key) {
            FormOutcome::Stay => {}
            FormOutcome::Close => self.forms.form = None,
            FormOutcome::Quit => self.quit = true,
            FormOutcome::Save(request) => {
                self.forms.undo = form.undo_of(&request);
                let req = self.request();
                self.forms.req = Some(req);
                self.commands.push(Command::Save {
                    req,
                    request: Box::new(request),
                });
            }
        }
        true
    }

    /// Bracketed paste into the open form; false when no form is open.
    pub(super) fn form_paste(&mut self, text: &str) -> bool {
        match &mut self.forms.form {
            Some(form) => {
                form.paste(text);
                true
            }
            None => false,
        }
    }

    /// The answer to a form's save.
    pub(super) fn form_saved(&mut self, msg: Msg) {
        let (req, created, outcome) = match msg {
            Msg::LinkSaved {
                req,
                created,
                result,
            } => (
                req,
                created,
                result.map(|link| (Saved::Link(link.id), format!("link {}", link.short_url))),
            ),
            Msg::SpaceSaved {
                req,
                created,
                result,
            } => (
                req,
                created,
                result.map(|space| (Saved::Space(space.id), format!("space {}", space.name))),
            ),
            Msg::DomainSaved { req, result } => (
                req,
                false,
                result.map(|domain| (Saved::Domain(domain.id), format!("domain {}", domain.name))),
            ),
            _ => return,
        };
        let verb = if created { "Created" } else { "Saved" };
        let outcome = outcome.map(|(saved, what)| (saved, format!("{verb} {what}")));
        self.answered(req);
        if self.forms.req != Some(req) {
            return;
        }
        self.forms.req = None;
        match outcome {
            Ok((saved, text)) => {
                self.forms.form = None;
                self.forms.editing = None;
                self.forms.select = Some(saved);
                self.toast(ToastKind::Info, text.clone());
                let undo = match (self.forms.undo.take(), saved) {
                    (Some((what, note)), _) => {
                        if let Some(note) = note {
                            self.toast(ToastKind::Info, format!("Saved; u undoes it, but {note}"));
                        }
                        Some(what)
                    }
                    (None, Saved::Link(id)) if created => Some(UndoWhat::Created(id)),
                    (None, Saved::Space(id)) if created => Some(UndoWhat::CreatedSpace(id)),
                    _ => None,
                };
                if let Some(what) = undo {
                    self.remember(text, what);
                }
                match saved {
                    // A new link may be the list's first: ask again from the top (a refresh
                    // keeps the place, and an empty list has no place to keep).
                    Saved::Link(_) if created => {
                        self.query_changed();
                        self.fetch_spaces();
                    }
                    // Counts and names shown elsewhere may have changed with the record.
                    _ => self.refresh(),
                }
            }
            Err(error) => {
                if let Some(form) = &mut self.forms.form {
                    form.save_failed(&error);
                } else if let Some(editing) = self.forms.editing.take() {
                    // A save from the editor: what the service said goes back into the text.
                    let mistakes = match &error {
                        crate::domain::Error::Validation(fields) => editor::lines_of(fields),
                        other => vec![other.to_string()],
                    };
                    let text = editor::with_mistakes(&editing.text, &mistakes);
                    self.edit_again(editing.link, text);
                }
            }
        }
    }

    /// Selects the record just saved once a list holding it arrives.
    pub(super) fn select_saved(&mut self) {
        match self.forms.select {
            Some(Saved::Link(id)) => {
                // The record is near the place the list kept (an edit) or at its top (a new
                // link, newest first): look there, not through a million rows.
                let list = &self.links.list;
                let around = list.cursor();
                let window =
                    around.saturating_sub(SELECT_WINDOW)..(around + SELECT_WINDOW).min(list.len());
                let held = window
                    .into_iter()
                    .find(|&i| list.get(i).is_some_and(|l| l.id == id));
                if let Some(index) = held {
                    self.links.list.select(index);
                    self.forms.select = None;
                    self.sync();
                }
            }
            Some(Saved::Space(id)) => {
                if let Some(index) = self.spaces.spaces().iter().position(|s| s.id == id) {
                    self.spaces.select(index);
                    self.forms.select = None;
                }
            }
            Some(Saved::Domain(id)) if self.domains_view.select_id(id) => self.forms.select = None,
            Some(Saved::Domain(_)) => {}
            None => {}
        }
    }

    /// Draws the open form over everything under the header; returns the cursor position.
    pub(super) fn render_form(&self, area: Rect, buf: &mut Buffer) -> Option<Position> {
        let form = self.forms.form.as_ref()?;
        let ctx = Ctx {
            theme: &self.cfg.theme,
            keys: &self.cfg.keys,
            now: self.clock.now(),
            tz: &self.cfg.timezone,
            focused: true,
            spinner: SPINNER[self.spinner],
        };
        let below_header = Rect {
            y: area.y + 1,
            height: area.height.saturating_sub(1),
            ..area
        };
        form.render(below_header, buf, &ctx)
    }
}

impl SaveRequest {
    /// Sends the request; the answer comes back as a message for [`App::update`].
    pub async fn send(self, backend: &dyn crate::backend::Backend, req: RequestId) -> Msg {
        match self {
            SaveRequest::CreateLink(input) => Msg::LinkSaved {
                req,
                created: true,
                result: backend.create_link(&input).await.map(Box::new),
            },
            SaveRequest::UpdateLink(id, input) => Msg::LinkSaved {
                req,
                created: false,
                result: backend.update_link(id, &input).await.map(Box::new),
            },
            SaveRequest::CreateSpace(input) => Msg::SpaceSaved {
                req,
                created: true,
                result: backend.create_space(&input).await,
            },
            SaveRequest::UpdateSpace(id, input) => Msg::SpaceSaved {
                req,
                created: false,
                result: backend.update_space(id, &input).await,
            },
            SaveRequest::UpdateDomain(id, input) => Msg::DomainSaved {
                req,
                result: backend.update_domain(id, &input).await,
            },
        }
    }
}
