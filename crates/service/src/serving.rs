//! Everything `linkdeck serve` needs of the embedded service beyond the [`Backend`] contract,
//! in one place: the server imports from here and from nowhere else inside `backend::local`.
//!
//! The calls themselves are methods of [`LocalService`](super::LocalService) (every owner's
//! data, which a public short link needs), on either store: `authenticate` and `touch_key`
//! (API key → owner), `domain_for_host` and `resolve_in_domain` (alias → [`ResolvedLink`]),
//! `link_domain_name`, `external_change_marker` and `change_poll` (when to forget cached
//! lookups), `counts_are_shared` and `reserve_click` (clicks stored before their visitor is answered:
//! limited links', and rotating links' where several servers share the database), `write_visits` (one batch of the click writer), `stats_in` (statistics in a
//! zone the caller picks), `prune_visit_log` and `purge_deleted_visits` (upkeep), and [`back_up_file`] (the dated backups of a
//! SQLite file). This module
//! adds the types those calls speak in ([`VisitBatch`], [`Interner`], …) and the password
//! check. linkdeck's own API (`server/linkdeck.rs`) also asks one owner's
//! [`LocalBackend`] for `import_stream` (a page of export records in one transaction) and
//! `traffic_history`, as a local copy does.
//!
//! [`Backend`]: linkdeck_backend::Backend

pub use super::backup::back_up_file;
pub use super::import::{ImportOptions, ImportRow, ImportSummary, Incoming};
pub use super::keys::KeyOwner;
pub use super::password::verify_password;
pub use super::visits::{ClickReservation, FlushedLink, RAW_PENDING_MAX, VisitBatch, VisitRow};
pub use super::{LocalBackend, LocalService};
pub use linkdeck_store::ResolvedLink;
pub use linkdeck_store::orphans::OrphanVisit;
pub use linkdeck_store::traffic::values::Interner;
