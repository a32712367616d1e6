//! What the service says of a fact a store found: one wording, whichever store found it (a
//! store that catches a conflict at the last moment, in a unique index, answers the same field
//! error the service's own check gives).

/// An alias another link of the domain has.
pub const ALIAS_TAKEN: &str = "is already taken";
/// A space that is not the owner's.
pub const NOT_YOUR_SPACE: &str = "must be one of your spaces";
/// A domain that is not the owner's.
pub const NOT_YOUR_DOMAIN: &str = "must be one of your domains";
/// A space name another of the owner's spaces has.
pub const NAME_TAKEN: &str = "is already used by another of your spaces";

/// What a database kept busy by another program says, after "the database": SQLite past its
/// busy timeout, PostgreSQL past its lock timeout.
pub const BUSY: &str = "is busy: another program has it locked; try again in a moment";

/// What a domain's name says when its host is taken.
pub fn host_in_use(host: &str) -> String {
    format!("{host} is already in use")
}
