//! A backend opened read-only (`--read-only`, or `read_only = true` in a profile): for browsing
//! production without the risk of a stray key. It answers every question the backend behind it
//! answers, and refuses every change before it reaches that backend.

use async_trait::async_trait;
use jiff::tz::TimeZone;

use crate::{
    Backend, BackendInfo, BulkAction, BulkReport, Preview, Progress, Selection, TrashPage, Trashed,
    Undo,
};
use linkdeck_domain::{
    Domain, DomainInput, Error, Id, Link, LinkInput, LinkQuery, Page, Result, Space, SpaceInput,
    SpaceQuery, Stats, StatsQuery, StatsScope, TagCount, VisitQuery,
};

/// What a refused change says: what happened, and the setting that decides it.
pub const REFUSED: &str = "this profile is read-only (--read-only, or read_only = true in its \
                           [profiles] entry): nothing was changed";

fn refused<T>() -> Result<T> {
    Err(Error::Unsupported(REFUSED.into()))
}

/// `inner`, with every change refused.
pub struct ReadOnly<B: ?Sized>(pub std::sync::Arc<B>);

#[async_trait]
impl<B: Backend + ?Sized> Backend for ReadOnly<B> {
    fn info(&self) -> BackendInfo {
        self.0.info()
    }

    async fn list_links(&self, query: &LinkQuery) -> Result<Page<Link>> {
        self.0.list_links(query).await
    }

    async fn show_link(&self, id: Id) -> Result<Link> {
        self.0.show_link(id).await
    }

    async fn create_link(&self, _input: &LinkInput) -> Result<Link> {
        refused()
    }

    async fn update_link(&self, _id: Id, _input: &LinkInput) -> Result<Link> {
        refused()
    }

    async fn delete_link(&self, _id: Id) -> Result<()> {
        refused()
    }

    async fn list_spaces(&self, query: &SpaceQuery) -> Result<Page<Space>> {
        self.0.list_spaces(query).await
    }

    async fn show_space(&self, id: Id) -> Result<Space> {
        self.0.show_space(id).await
    }

    async fn create_space(&self, _input: &SpaceInput) -> Result<Space> {
        refused()
    }

    async fn update_space(&self, _id: Id, _input: &SpaceInput) -> Result<Space> {
        refused()
    }

    async fn delete_space(&self, _id: Id) -> Result<()> {
        refused()
    }

    async fn tags(&self) -> Result<Vec<TagCount>> {
        self.0.tags().await
    }

    async fn keeps_link_options(&self) -> Result<bool> {
        self.0.keeps_link_options().await
    }

    async fn rename_tag(&self, _from: &str, _to: &str) -> Result<u64> {
        refused()
    }

    async fn list_domains(&self, page: u32, per_page: u32) -> Result<Page<Domain>> {
        self.0.list_domains(page, per_page).await
    }

    async fn show_domain(&self, id: Id) -> Result<Domain> {
        self.0.show_domain(id).await
    }

    async fn update_domain(&self, _id: Id, _input: &DomainInput) -> Result<Domain> {
        refused()
    }

    fn input_zone(&self) -> TimeZone {
        self.0.input_zone()
    }

    async fn bulk(
        &self,
        _selection: &Selection,
        _action: &BulkAction,
        _progress: &Progress,
    ) -> Result<BulkReport> {
        refused()
    }

    async fn revert(&self, _undo: &Undo, _progress: &Progress) -> Result<BulkReport> {
        refused()
    }

    async fn preview(&self, selection: &Selection, first: u32) -> Result<Preview> {
        self.0.preview(selection, first).await
    }

    async fn trash(&self, page: u32, per_page: u32) -> Result<Option<TrashPage>> {
        self.0.trash(page, per_page).await
    }

    async fn restore(&self, _items: &[Trashed]) -> Result<BulkReport> {
        refused()
    }

    async fn purge(&self, _items: &[Trashed]) -> Result<u64> {
        refused()
    }

    async fn change_marker(&self) -> Result<Option<i64>> {
        self.0.change_marker().await
    }

    async fn webhooks(&self, recent: u32) -> Result<Option<Vec<linkdeck_domain::WebhookActivity>>> {
        self.0.webhooks(recent).await
    }

    async fn webhooks_held(&self) -> Result<Option<String>> {
        self.0.webhooks_held().await
    }

    async fn stats(&self, query: &StatsQuery) -> Result<Stats> {
        self.0.stats(query).await
    }

    async fn orphan_stats(&self, query: &StatsQuery) -> Result<linkdeck_domain::OrphanStats> {
        self.0.orphan_stats(query).await
    }

    async fn counted_clicks(&self, scope: StatsScope) -> Result<Option<u64>> {
        self.0.counted_clicks(scope).await
    }

    async fn visits(&self, query: &VisitQuery) -> Result<crate::VisitStream> {
        self.0.visits(query).await
    }

    async fn live_visits(
        &self,
        scope: StatsScope,
        after: Option<Id>,
    ) -> Result<crate::VisitStream> {
        self.0.live_visits(scope, after).await
    }
}
