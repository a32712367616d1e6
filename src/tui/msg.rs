//! What flows through the app: answers from background work come back as [`Msg`]; what the app
//! wants done outside itself leaves as [`Command`]. The app never awaits anything.

use super::form::SaveRequest;
use crate::domain::{
    Domain, Id, Link, LinkInput, LinkQuery, Page, Result, Space, Stats, StatsQuery,
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
    LinkDeleted {
        req: RequestId,
        alias: String,
        result: Result<()>,
    },
    LinkUpdated {
        req: RequestId,
        result: Result<Box<Link>>,
    },
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
    /// Traffic for the Stats view.
    Stats {
        req: RequestId,
        result: Result<Stats>,
    },
    /// The clipboard or browser did (`Ok`, with what to tell the person) or failed.
    Desktop(std::result::Result<String, String>),
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
    DeleteLink {
        req: RequestId,
        id: Id,
        alias: String,
    },
    UpdateLink {
        req: RequestId,
        id: Id,
        input: Box<LinkInput>,
    },
    /// A form's create or update; answers [`Msg::LinkSaved`] or [`Msg::SpaceSaved`].
    Save {
        req: RequestId,
        request: Box<SaveRequest>,
    },
    /// Traffic for the Stats view; answers [`Msg::Stats`].
    FetchStats {
        req: RequestId,
        query: StatsQuery,
    },
    /// Copy to the clipboard; `what` names it in the toast.
    Copy {
        text: String,
        what: &'static str,
    },
    OpenUrl(String),
}
