//! How large one piece of an import file may be. Files come from anyone, and every reader holds
//! one piece at a time — a CSV row, a JSON record, a string, an SQL row — so each piece is
//! bounded while it is read: a file with a larger piece stops there, with an error naming its
//! line and the bound, and memory never follows the largest piece of a file. The bounds are what
//! linkdeck's own records can need, with a wide margin.

/// A CSV row, in bytes. The largest a row of linkdeck's can need is a targeting list of every
/// country, each to a URL of [`URL_MAX`] characters (about 2 MiB in the widest UTF-8); other
/// services' rows (Shlink's, YOURLS's) hold one URL, a title and tags.
///
/// [`URL_MAX`]: crate::domain::URL_MAX
pub const ROW_MAX: usize = 4 << 20;

/// A string of a JSON file or an SQL dump — a key or a value — in bytes as written. A URL of
/// [`URL_MAX`] characters, every one escaped as JSON, takes 24 KiB; a title of many more
/// characters than [`TITLE_MAX`] is still read (and cut); MySQL's `TEXT`, which YOURLS keeps
/// its URLs and titles in, holds 64 KiB.
///
/// [`URL_MAX`]: crate::domain::URL_MAX
/// [`TITLE_MAX`]: crate::domain::TITLE_MAX
pub const STRING_MAX: usize = 64 << 10;

/// A record of a JSON file — a link with all its traffic history, an hour a record — or any
/// other value read whole (a list of spaces, say), in bytes as written.
pub const RECORD_MAX: usize = 64 << 20;

/// Values in a row of an SQL dump, and columns in a table: MySQL's own limit.
pub const SQL_COLUMNS_MAX: usize = 4096;

/// `4 MiB`, `64 KiB`: a bound as the errors name it.
pub fn size(bytes: usize) -> String {
    match bytes {
        b if b >= 1 << 20 && b.is_multiple_of(1 << 20) => format!("{} MiB", b >> 20),
        b if b >= 1 << 10 && b.is_multiple_of(1 << 10) => format!("{} KiB", b >> 10),
        b => format!("{b} bytes"),
    }
}

/// Why a file stopped: a string longer than [`STRING_MAX`].
pub fn string_too_long() -> String {
    format!(
        "holds a text longer than {} (no field of a link needs as much)",
        size(STRING_MAX)
    )
}

// The bounds hold what a link can need: every country to a URL of the longest, each character
// four bytes, in a row; a URL or a title of the longest, every character an escaped surrogate
// pair, in a string.
const _: () = {
    use crate::domain::{TITLE_MAX, URL_MAX};
    assert!(249 * (3 + URL_MAX * 4 + 1) < ROW_MAX / 2);
    assert!(URL_MAX * 12 < STRING_MAX);
    assert!(TITLE_MAX * 12 < STRING_MAX);
};

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bounds_are_named_as_people_read_them() {
        assert_eq!(size(ROW_MAX), "4 MiB");
        assert_eq!(size(STRING_MAX), "64 KiB");
        assert_eq!(size(RECORD_MAX), "64 MiB");
        assert_eq!(size(100), "100 bytes");
    }
}
