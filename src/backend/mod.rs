//! The one contract every front end calls: the TUI, the CLI and the server's API all speak to a
//! `dyn Backend`, whether it is the embedded service or a remote v1 server.

pub mod local;
pub mod remote;

use async_trait::async_trait;

use crate::domain::{
    Domain, Id, Link, LinkInput, LinkQuery, Page, Result, Space, SpaceInput, SpaceQuery,
};

/// Where a backend points, for headers and messages.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BackendInfo {
    /// `local` or `remote`.
    pub kind: &'static str,
    /// The database path or the server's base URL.
    pub location: String,
}

/// A link-shortening service acting for one owner. Every method may be called concurrently;
/// the inputs are what a person typed (validated by the backend, every invalid field reported),
/// the outputs the domain types.
#[async_trait]
pub trait Backend: Send + Sync {
    fn info(&self) -> BackendInfo;

    async fn list_links(&self, query: &LinkQuery) -> Result<Page<Link>>;
    async fn show_link(&self, id: Id) -> Result<Link>;
    async fn create_link(&self, input: &LinkInput) -> Result<Link>;
    /// Changes only the fields present in `input`.
    async fn update_link(&self, id: Id, input: &LinkInput) -> Result<Link>;
    async fn delete_link(&self, id: Id) -> Result<()>;

    async fn list_spaces(&self, query: &SpaceQuery) -> Result<Page<Space>>;
    async fn show_space(&self, id: Id) -> Result<Space>;
    async fn create_space(&self, input: &SpaceInput) -> Result<Space>;
    async fn update_space(&self, id: Id, input: &SpaceInput) -> Result<Space>;
    /// Keeps the space's links, which are left without a space.
    async fn delete_space(&self, id: Id) -> Result<()>;

    /// Domains, newest first; `per_page` as for links.
    async fn list_domains(&self, page: u32, per_page: u32) -> Result<Page<Domain>>;
    async fn show_domain(&self, id: Id) -> Result<Domain>;
}
