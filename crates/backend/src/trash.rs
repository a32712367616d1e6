//! The trash as every front end sees it: what was deleted, when, and until when it can come
//! back. Only the embedded service keeps one; its rules and SQL are in `local::trash`.

use linkdeck_domain::Error;

pub use linkdeck_domain::{TrashPage, Trashed, TrashedKind};

/// The answer of a backend that keeps no trash.
pub fn no_trash() -> Error {
    Error::Unavailable(
        "this server keeps no trash: a delete there is final (a local database keeps one)".into(),
    )
}
