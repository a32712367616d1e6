//! Everything `linkdeck serve` needs of the embedded service beyond the [`Backend`] contract,
//! in one place: the server imports from here and from nowhere else inside `backend::local`.
//!
//! The calls themselves are methods of [`LocalService`](super::LocalService) (every owner's data, which a public short
//! link needs): `authenticate` and `touch_key` (API key → owner),
//! `domain_for_host_blocking` and `resolve_in_domain_blocking`
//! (alias → [`ResolvedLink`]), `link_domain_name`,
//! `external_change_marker` (when to forget cached lookups),
//! `stats_in` (statistics in a zone the caller picks),
//! `prune_visit_log` and `purge_deleted_visits` (upkeep). This
//! module adds the types those calls speak in and the pieces the click writer runs inside its own
//! write transaction ([`record_visits`] with its [`Interner`]), and the password check.
//!
//! [`Backend`]: crate::backend::Backend

pub use super::LocalService;
pub use super::keys::KeyOwner;
pub use super::password::verify_password;
pub use super::redirect::ResolvedLink;
pub use super::store::traffic::Interner;
pub use super::visits::{FlushedLink, RAW_PENDING_MAX, VisitBatch, VisitRow, record_visits};
