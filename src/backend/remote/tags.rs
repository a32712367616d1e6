//! Tags on a remote server: a linkdeck server lists and renames them on its own API
//! (`wire::linkdeck`) and carries them on its v1 link records; a v1-only server (a phpShort
//! site) has none, and is told apart before anything is sent, so a request that names tags is a
//! field error there rather than tags silently dropped.

use reqwest::Method;

use super::RemoteBackend;
use super::body::Limit;
use super::decode;
use super::errors;
use super::http::{Api, Body, Call};
use crate::backend::no_tags;
use crate::domain::{Error, LinkInput, LinkQuery, Result, StatsScope, TagCount};
use crate::wire::linkdeck::{TAG_RENAME_PATH, TAGS_PATH, TagRename, TagRenamed};

impl RemoteBackend {
    /// Whether the server keeps tags (a linkdeck server new enough to say so).
    pub(super) async fn keeps_tags(&self) -> Result<bool> {
        Ok(self.linkdeck().await?.is_some_and(|caps| caps.tags))
    }

    /// `input` as this server can take it: tags named on a server without them are a field
    /// error (clearing them is nothing to do there, and is left out).
    pub(super) async fn tagged_input(&self, input: &LinkInput) -> Result<LinkInput> {
        let Some(tags) = input.tags.as_deref() else {
            return Ok(input.clone());
        };
        if self.keeps_tags().await? {
            return Ok(input.clone());
        }
        if !tags.trim().is_empty() {
            return Err(Error::field("tags", no_tags().to_string()));
        }
        Ok(LinkInput {
            tags: None,
            ..input.clone()
        })
    }

    /// Refuses a tag filter a server without tags would pass over, listing every link.
    pub(super) async fn check_tag_filter(&self, query: &LinkQuery) -> Result<()> {
        if query.tags.is_empty() || self.keeps_tags().await? {
            return Ok(());
        }
        Err(Error::field("tag", no_tags().to_string()))
    }

    /// Refuses a tag's traffic to a server that would not read the tag (and answer every
    /// link's instead).
    pub(super) async fn check_tag_scope(&self, scope: &StatsScope) -> Result<()> {
        if !matches!(scope, StatsScope::Tag(_)) {
            return Ok(());
        }
        match self.linkdeck().await? {
            Some(caps) if caps.tag_traffic => Ok(()),
            Some(caps) if caps.tags => Err(Error::field(
                "tag",
                format!(
                    "this server (linkdeck {}) counts no traffic by tag; a newer one does",
                    caps.version
                ),
            )),
            _ => Err(Error::field("tag", no_tags().to_string())),
        }
    }

    pub(super) async fn tag_counts(&self) -> Result<Vec<TagCount>> {
        if !self.keeps_tags().await? {
            return Err(no_tags());
        }
        let what = "the tags";
        let body = self
            .http
            .send(Call {
                method: Method::GET,
                api: Api::Linkdeck,
                path: TAGS_PATH,
                query: &[],
                body: Body::None,
                record: Some(what),
                limit: Limit::Record,
            })
            .await?;
        decode::record(&body, |data| {
            serde_json::from_value::<Vec<TagCount>>(data.clone()).map_err(|e| e.to_string())
        })
        .map_err(|problem| errors::unreadable(self.subject(Some(what)), "a list of tags", &problem))
    }

    pub(super) async fn tag_rename(&self, from: &str, to: &str) -> Result<u64> {
        if !self.keeps_tags().await? {
            return Err(no_tags());
        }
        let form = serde_qs::to_string(&TagRename {
            from: from.to_owned(),
            to: to.to_owned(),
        })
        .map_err(|e| Error::field("request", format!("cannot be encoded: {e}")))?;
        let what = format!("tag {from:?}");
        let body = self
            .http
            .send(Call {
                method: Method::POST,
                api: Api::Linkdeck,
                path: TAG_RENAME_PATH,
                query: &[],
                body: Body::Form(form),
                record: Some(&what),
                limit: Limit::Record,
            })
            .await?;
        decode::record(&body, |data| {
            serde_json::from_value::<TagRenamed>(data.clone()).map_err(|e| e.to_string())
        })
        .map(|renamed| renamed.links)
        .map_err(|problem| errors::unreadable(self.subject(Some(&what)), "a rename", &problem))
    }
}
