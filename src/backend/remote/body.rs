//! How much of an answer the client reads. Every answer's body passes through [`read`], which
//! takes it a chunk at a time and stops at the limit its request set ([`Limit`]; an error's is
//! [`Limit::Error`]) instead of reading whatever a server sends to its end. The rest of a body
//! past its limit is left unread and its connection dropped; the caller decides what that means.
//!
//! Each limit is what a legitimate answer can be with room to spare, and small enough that what
//! is read stays a small part of memory once decoded (a JSON tree takes up to about sixteen
//! times its text).

/// What an answer is, for how much of it is read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Limit {
    /// One link, space or domain; a delete's confirmation; linkdeck's capabilities; an
    /// import's summary.
    Record,
    /// A page of a list.
    Page,
    /// A statistics answer.
    Stats,
    /// linkdeck's traffic history of a page of links.
    Traffic,
    /// Any answer that is not a success.
    Error,
}

/// One record. A link's largest legitimate record holds three URLs of at most 2 KiB and a
/// targeting rule of a 2 KiB URL for each of some 250 countries, escaped (`\/`): under 1 MiB.
/// An import's summary lists at most the 1,000 links a request carries, renamed (two aliases
/// of at most 255 characters each): under 1 MiB too. A v1-only site may answer linkdeck's
/// capabilities path with its home page, which is read only to tell it is not linkdeck.
pub const RECORD_MAX: usize = 1 << 20;

/// A page of at most 100 records (`PER_PAGE_MAX`) averaging over 320 KiB: far more than links
/// made through a form (`linkdeck serve` takes 64 KiB a form) can be. Its records are decoded
/// one at a time, each at most [`RECORD_MAX`].
pub const PAGE_MAX: usize = 32 << 20;

/// Statistics: a timeline of at most 20 years of days (7,320 buckets of some 60 bytes), five
/// breakdowns and a list of top links of at most 100 entries each: under 2 MiB.
pub const STATS_MAX: usize = 4 << 20;

/// Traffic history: twice what a linkdeck server takes in one import request (16 MiB), so that
/// any link's history one linkdeck server can take is read whole from another. A page of links
/// whose history is larger than this together is asked for again in halves.
pub const TRAFFIC_MAX: usize = 32 << 20;

/// An error's body: a message, or a map of at most 50 fields with a line or two each (what a
/// linkdeck server lists; phpShort's are shorter). Only this much of a longer one is read.
pub const ERROR_MAX: usize = 64 << 10;

impl Limit {
    pub fn bytes(self) -> usize {
        match self {
            Limit::Record => RECORD_MAX,
            Limit::Page => PAGE_MAX,
            Limit::Stats => STATS_MAX,
            Limit::Traffic => TRAFFIC_MAX,
            Limit::Error => ERROR_MAX,
        }
    }

    /// What a message says the limit is for: "the most linkdeck reads of {noun}".
    pub fn noun(self) -> &'static str {
        match self {
            Limit::Record => "one record",
            Limit::Page => "a page of a list",
            Limit::Stats => "statistics",
            Limit::Traffic => "traffic history",
            Limit::Error => "an error",
        }
    }
}

/// A body as read.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Read {
    /// All of the body; when it is cut, only its first bytes ([`ERROR_MAX`] at most), which are
    /// enough to show how it began.
    pub bytes: Vec<u8>,
    /// The server sent more than the limit: the rest was not read.
    pub cut: bool,
}

/// Reads `response`'s body up to `max` bytes. An error is the transport's: the time limit, or
/// the connection lost part way.
///
/// The chunks are kept as they come and joined once at the end, so a body takes its own size
/// and one copy, never the spare room of a buffer grown by doubling.
pub async fn read(response: &mut reqwest::Response, max: usize) -> reqwest::Result<Read> {
    let mut chunks = Vec::new();
    let mut len = 0;
    while let Some(chunk) = response.chunk().await? {
        if chunk.len() > max - len {
            chunks.push(chunk);
            return Ok(Read {
                bytes: join(&chunks, max.min(ERROR_MAX)),
                cut: true,
            });
        }
        len += chunk.len();
        chunks.push(chunk);
    }
    Ok(Read {
        bytes: join(&chunks, len),
        cut: false,
    })
}

/// The first `n` bytes of `chunks`, in one buffer.
fn join(chunks: &[bytes::Bytes], n: usize) -> Vec<u8> {
    let mut out = Vec::with_capacity(n);
    for chunk in chunks {
        let take = chunk.len().min(n - out.len());
        out.extend_from_slice(&chunk[..take]);
    }
    out
}

/// `64 KiB`, `32 MiB`: a limit as messages name it.
pub fn size(bytes: usize) -> String {
    if bytes >= 1 << 20 && bytes.is_multiple_of(1 << 20) {
        format!("{} MiB", bytes >> 20)
    } else if bytes >= 1 << 10 && bytes.is_multiple_of(1 << 10) {
        format!("{} KiB", bytes >> 10)
    } else {
        format!("{bytes} bytes")
    }
}

/// The answer to a request, whatever its status.
pub struct Answer {
    pub status: reqwest::StatusCode,
    pub headers: reqwest::header::HeaderMap,
    /// All of the body, or only its beginning when `cut`.
    pub body: Vec<u8>,
    /// The limit the body was read under.
    pub limit: Limit,
    /// The server sent more than `limit`; the rest was not read.
    pub cut: bool,
    /// The request, as messages name it: `GET /api/v1/links`.
    pub request: String,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn limits_read_as_people_write_them() {
        assert_eq!(size(ERROR_MAX), "64 KiB");
        assert_eq!(size(RECORD_MAX), "1 MiB");
        assert_eq!(size(PAGE_MAX), "32 MiB");
        assert_eq!(size(TRAFFIC_MAX), "32 MiB");
        assert_eq!(size(1500), "1500 bytes");
    }

    #[test]
    fn chunks_are_joined_up_to_a_length() {
        let chunks = [b"abc", b"def", b"ghi"].map(|c| bytes::Bytes::from_static(c));
        assert_eq!(join(&chunks, 9), b"abcdefghi");
        assert_eq!(join(&chunks, 4), b"abcd");
        assert_eq!(join(&chunks, 0), b"");
    }
}
