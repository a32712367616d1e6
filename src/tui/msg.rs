//! What flows through the app: answers from background work come back as [`Msg`]; what the app
//! wants done outside itself leaves as [`Command`]. The app never awaits anything.

use super::form::SaveRequest;
use super::undo::UndoEntry;
use crate::backend::{BulkAction, BulkReport, Progress, Selection, TrashPage, Trashed};
use crate::domain::{
    Domain, Link, LinkQuery, OrphanStats, Page, Result, Space, Stats, StatsQuery, StatsScope,
    TagCount, Visit, WebhookActivity,
};

/// Tags every backend call, so an answer to a question no longer asked (an older search, a page
/// of a list since refreshed) is recognised and dropped.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct RequestId(pub u64);

/// An answer from background work.
#[derive(Debug)]
pub enum Msg {
    LinksPage {
        req: RequestId,
        page: u32,
        result: Result<Page<Link>>,
    },
    Spaces {
        req: RequestId,
        /// Every space: the app holds them whole.
        result: Result<Vec<Space>>,
    },
    Domains {
        req: RequestId,
        result: Result<Vec<Domain>>,
    },
    /// The owner's tags, most used first.
    Tags {
        req: RequestId,
        result: Result<Vec<TagCount>>,
    },
    /// A tag renamed (merged into another when it was one): how many links changed.
    TagRenamed {
        req: RequestId,
        from: String,
        to: String,
        result: Result<u64>,
    },
    /// A bulk operation (or a change of one link through it) ended.
    Bulk {
        req: RequestId,
        /// What was asked, for the toast and the undo entry: "Disable 3 links".
        label: String,
        result: Result<BulkReport>,
    },
    /// An undo ended.
    Undone {
        req: RequestId,
        entry: Box<UndoEntry>,
        result: Result<BulkReport>,
    },
    SpaceDeleted {
        req: RequestId,
        space: Box<Space>,
        result: Result<()>,
    },
    Trash {
        req: RequestId,
        result: Result<Option<TrashPage>>,
    },
    /// A visit of the Live pane's feed `req`, or the failure that ended it.
    LiveVisit {
        req: RequestId,
        result: Result<Visit>,
    },
    /// Trashed items restored (`purged` false) or deleted for good.
    TrashDone {
        req: RequestId,
        purged: bool,
        result: Result<BulkReport>,
    },
    /// The rows of a range being marked.
    Range {
        req: RequestId,
        result: Result<Vec<Link>>,
    },
    /// The data changed elsewhere (another program, a server's other clients).
    Changed,
    /// A link form's save was answered.
    LinkSaved {
        req: RequestId,
        created: bool,
        result: Result<Box<Link>>,
    },
    /// A space form's save was answered.
    SpaceSaved {
        req: RequestId,
        created: bool,
        result: Result<Space>,
    },
    /// A domain form's save was answered.
    DomainSaved {
        req: RequestId,
        result: Result<Domain>,
    },
    /// Traffic for the Stats view.
    Stats {
        req: RequestId,
        result: Result<Stats>,
    },
    /// Orphan visits for the account's Stats view.
    Orphans {
        req: RequestId,
        result: Result<OrphanStats>,
    },
    /// The clicks a space's or the account's links have counted in all; `None` when the
    /// backend cannot tell.
    Counted {
        req: RequestId,
        scope: StatsScope,
        result: Result<Option<u64>>,
    },
    /// The owner's webhooks with their latest deliveries; `None` when the backend keeps none.
    /// `held`: why their deliveries cannot go out, when the backend says.
    Webhooks {
        req: RequestId,
        result: Result<Option<Vec<WebhookActivity>>>,
        held: Option<String>,
    },
    /// The clipboard or browser did (`Ok`, with what to tell the person) or failed.
    Desktop(std::result::Result<String, String>),
    /// The text as the editor left it, or why the editor failed.
    Edited {
        req: RequestId,
        result: std::result::Result<String, String>,
    },
}

/// Work for the runtime: backend calls run on tasks and answer with a [`Msg`].
#[derive(Debug, Clone, PartialEq)]
pub enum Command {
    FetchLinks {
        req: RequestId,
        query: LinkQuery,
    },
    FetchSpaces {
        req: RequestId,
    },
    FetchDomains {
        req: RequestId,
    },
    FetchTags {
        req: RequestId,
    },
    RenameTag {
        req: RequestId,
        from: String,
        to: String,
    },
    /// A bulk operation; `progress` is shared with the dialog that shows it.
    Bulk {
        req: RequestId,
        selection: Box<Selection>,
        action: Box<BulkAction>,
        progress: Progress,
        label: String,
    },
    Undo {
        req: RequestId,
        entry: Box<UndoEntry>,
        progress: Progress,
    },
    DeleteSpace {
        req: RequestId,
        space: Box<Space>,
    },
    FetchTrash {
        req: RequestId,
    },
    FetchWebhooks {
        req: RequestId,
    },
    /// Start the Live pane's feed (ending any other); its visits come as [`Msg::LiveVisit`].
    FollowVisits {
        req: RequestId,
    },
    /// End the Live pane's feed.
    StopVisits,
    Restore {
        req: RequestId,
        items: Vec<Trashed>,
    },
    Purge {
        req: RequestId,
        items: Vec<Trashed>,
    },
    /// Everything in the trash, deleted for good.
    EmptyTrash {
        req: RequestId,
    },
    /// The rows at positions `from..=to` of the list `query` gives.
    FetchRange {
        req: RequestId,
        query: LinkQuery,
        from: u64,
        to: u64,
    },
    /// A form's create or update; answers [`Msg::LinkSaved`], [`Msg::SpaceSaved`] or [`Msg::DomainSaved`].
    Save {
        req: RequestId,
        request: Box<SaveRequest>,
    },
    /// Traffic for the Stats view; answers [`Msg::Stats`].
    FetchStats {
        req: RequestId,
        query: StatsQuery,
    },
    /// The account's orphan visits over the Stats view's period; answers [`Msg::Orphans`].
    FetchOrphans {
        req: RequestId,
        query: StatsQuery,
    },
    /// Answers [`Msg::Counted`].
    FetchCounted {
        req: RequestId,
        scope: StatsScope,
    },
    /// Copy to the clipboard; `what` names it in the toast.
    Copy {
        text: String,
        what: &'static str,
    },
    OpenUrl(String),
    /// Open `text` in the person's editor; the screen is theirs until it closes.
    EditText {
        req: RequestId,
        text: String,
    },
}
