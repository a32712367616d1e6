//! What `u` takes back. Each change the app makes leaves an entry saying how to reverse it;
//! carrying one out is backend work, done off the app's state like every other call.

use crate::backend::{Backend, BulkReport, Progress, Trashed, TrashedKind, Undo};
use crate::domain::{Error, Id, LinkInput, Result, Space, SpaceInput};

/// How many changes can be taken back, newest first.
pub const DEPTH: usize = 20;

#[derive(Debug, Clone, PartialEq)]
pub struct UndoEntry {
    /// What was done, as the toast said it: "Disabled 3 links".
    pub label: String,
    pub what: UndoWhat,
}

// A handful are kept: boxing the largest would buy nothing.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Clone, PartialEq)]
pub enum UndoWhat {
    /// Whatever the backend said would reverse a bulk operation (or a change of one link).
    Backend(Undo),
    /// Put these fields of a link back (an edit in the form).
    Edit {
        id: Id,
        input: LinkInput,
    },
    SpaceEdit {
        id: Id,
        input: SpaceInput,
    },
    /// A deleted space: from the trash where there is one, else made again.
    SpaceDelete(Space),
    /// Delete what was just created.
    Created(Id),
    CreatedSpace(Id),
}

/// Carries `entry` out; the report counts what came back and lists what could not.
pub async fn run(
    backend: &dyn Backend,
    entry: &UndoWhat,
    progress: &Progress,
) -> Result<BulkReport> {
    let one = || BulkReport {
        matched: 1,
        changed: 1,
        ..BulkReport::default()
    };
    match entry {
        UndoWhat::Backend(undo) => backend.revert(undo, progress).await,
        UndoWhat::Edit { id, input } => backend.update_link(*id, input).await.map(|_| one()),
        UndoWhat::SpaceEdit { id, input } => backend.update_space(*id, input).await.map(|_| one()),
        UndoWhat::SpaceDelete(space) => {
            if backend.trash(1, 10).await?.is_some() {
                let item = Trashed {
                    kind: TrashedKind::Space,
                    id: space.id,
                    name: space.name.clone(),
                    detail: String::new(),
                    clicks: 0,
                    deleted_at: space.updated_at,
                    purge_at: None,
                    batch: 0,
                };
                return backend.restore(&[item]).await;
            }
            let input = SpaceInput {
                name: Some(space.name.clone()),
                color: Some(space.color.number().to_string()),
            };
            backend.create_space(&input).await?;
            Ok(BulkReport {
                notes: vec!["the server keeps no trash: the space was made again, empty".into()],
                ..one()
            })
        }
        UndoWhat::Created(id) => {
            let report = backend
                .bulk(
                    &crate::backend::Selection::of_ids([*id]),
                    &crate::backend::BulkAction::Delete,
                    progress,
                )
                .await?;
            match report.failed.first() {
                Some(failure) => Err(failure.error.clone()),
                None => Ok(report),
            }
        }
        UndoWhat::CreatedSpace(id) => backend.delete_space(*id).await.map(|()| one()),
    }
}

/// The entry's first failure as an error, when nothing at all came back.
pub fn failed_entirely(report: &BulkReport) -> Option<Error> {
    (report.changed == 0)
        .then(|| report.failed.first().map(|f| f.error.clone()))
        .flatten()
}
