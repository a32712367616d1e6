//! What a SQLite failure means to a person, said once for opening the file and for normal
//! work alike. The bottom of the store: every other file may import it, it imports none of
//! them.

use std::path::Path;

use linkdeck_domain::Error;
use linkdeck_store::words::BUSY;

/// What a SQLite failure says of the database file, as the end of a sentence about it
/// (`database … is busy: another program has it locked; …`), or `None` when the code says nothing a
/// person can act on. The one wording for opening the file and for normal work alike.
fn file_problem(e: &rusqlite::Error) -> Option<&'static str> {
    use rusqlite::ErrorCode as Code;
    Some(match e.sqlite_error_code()? {
        Code::NotADatabase => "is not a linkdeck database (or is corrupt)",
        Code::DatabaseCorrupt => "is corrupt",
        Code::DatabaseBusy | Code::DatabaseLocked => BUSY,
        Code::CannotOpen => "cannot be opened (check the path and permissions)",
        Code::ReadOnly | Code::PermissionDenied => "is read-only or not permitted",
        Code::DiskFull => "cannot grow: the disk is full",
        _ => return None,
    })
}

/// An error opening `path`, said so a person knows what to do.
pub(crate) fn file_error(path: &Path, e: rusqlite::Error) -> Error {
    let what = file_problem(&e).map_or_else(|| format!("cannot be used: {e}"), str::to_owned);
    Error::Unavailable(format!("database {} {what}", path.display()))
}

/// An error opening a connection to `path`. In WAL mode no step of an open waits for another
/// connection, so a busy file is one another connection holds alone: a large write of another
/// linkdeck (`Db::let_large_writes_hold_it`), or another program.
pub(crate) fn opening_error(path: &Path, e: rusqlite::Error) -> Error {
    use rusqlite::ErrorCode as Code;
    match e.sqlite_error_code() {
        Some(Code::DatabaseBusy | Code::DatabaseLocked) => Error::Unavailable(format!(
            "database {} is busy: another program holds it alone (a linkdeck import or copy \
             into it, say); try again when that has finished",
            path.display()
        )),
        _ => file_error(path, e),
    }
}

/// Maps a SQLite failure during normal work to the backend error a person sees.
pub fn db_error(e: rusqlite::Error) -> Error {
    Error::Unavailable(match file_problem(&e) {
        Some(what) => format!("the database {what}"),
        None => format!("database error: {e}"),
    })
}
