//! The link rules of the embedded service, written once against the store: field validation,
//! ownership of spaces and domains, alias uniqueness and generation, password hashing, titles
//! and short URLs. Each write is one transaction of the store, checking and writing in it.

use jiff::Timestamp;
use linkdeck_store::words::{ALIAS_TAKEN, NOT_YOUR_DOMAIN, NOT_YOUR_SPACE};
use linkdeck_store::{LinkRow, ListFilter, Tx};
use url::Url;

use super::LocalBackend;
use super::alias::Candidates;
use super::password::hash_password_async;
use super::webhooks::link_events;
use linkdeck_domain::{
    Error, FieldErrors, Id, Link, LinkField, LinkInput, LinkPatch, LinkQuery, Mode, Page, Result,
    WebhookEvent, is_unshowable, validate_alias, validate_link_input,
};

/// The title the service gives a link: the destination's host and path, without a trailing
/// slash, as a person reads them: an international domain name in its own script rather than
/// punycode, and a path's percent-escapes decoded (where they decode to UTF-8 a terminal shows
/// as it is: see [`is_unshowable`]).
pub fn default_title(url: &str) -> Option<String> {
    let url = Url::parse(url).ok()?;
    let host = url.host_str()?;
    let (unicode_host, idna) = idna::domain_to_unicode(host);
    let host = if idna.is_ok() {
        unicode_host
    } else {
        host.to_owned()
    };
    let path = url.path().trim_end_matches('/');
    let path = match percent_encoding::percent_decode_str(path).decode_utf8() {
        Ok(decoded) if !decoded.chars().any(is_unshowable) => decoded.into_owned(),
        _ => path.to_owned(),
    };
    Some(format!("{host}{path}"))
}

/// Applies the fields present in `patch`; `hash` replaces the password when present
/// (`Some(None)` removes it). The domain is set only on create, by the caller.
pub(super) fn apply(
    row: &mut LinkRow,
    patch: LinkPatch,
    hash: Option<Option<String>>,
    now: Timestamp,
) {
    let title = patch.url.as_deref().map(default_title);
    apply_titled(row, patch, hash, title, now);
}

/// [`apply`] with the title a new destination gives already worked out (`Some`, when the patch
/// has a URL): an import works it out on its checking thread, off the writer's.
pub(super) fn apply_titled(
    row: &mut LinkRow,
    patch: LinkPatch,
    hash: Option<Option<String>>,
    title: Option<Option<String>>,
    now: Timestamp,
) {
    if let Some(url) = patch.url {
        row.title = title.unwrap_or_else(|| default_title(&url));
        row.url = url;
    }
    if let Some(alias) = patch.alias {
        row.alias = alias;
    }
    if let Some(hash) = hash {
        row.password_hash = hash;
    }
    if let Some(space) = patch.space {
        row.space_id = space;
    }
    if let Some(disabled) = patch.disabled {
        row.disabled = disabled;
    }
    if let Some(public) = patch.public {
        row.public = public;
    }
    if let Some(url) = patch.expiration_url {
        row.expiration_url = url;
    }
    if let Some(ends_at) = patch.ends_at {
        row.ends_at = ends_at;
    }
    if let Some(clicks) = patch.expiration_clicks {
        row.expiration_clicks = clicks;
    }
    if let Some(t) = patch.target_type {
        row.target_type = t;
    }
    if let Some(geo) = patch.geo {
        row.geo = geo;
    }
    if let Some(platform) = patch.platform {
        row.platform = platform;
    }
    if let Some(rotation) = patch.rotation {
        row.rotation = rotation;
    }
    if let Some(tags) = patch.tags {
        row.tags = tags;
    }
    patch.options.apply(&mut row.options);
    row.updated_at = now;
}

/// The references of a request that need stored state to check — its alias, space and domain,
/// as a patch of only those. Taken from the validated patch, or — when other fields are invalid
/// — from whatever of the raw input parses, so one answer reports every invalid field.
fn refs_of(patch: Option<&LinkPatch>, input: &LinkInput, mode: Mode) -> LinkPatch {
    if let Some(patch) = patch {
        return LinkPatch {
            alias: patch.alias.clone(),
            space: patch.space,
            domain: patch.domain,
            ..LinkPatch::default()
        };
    }
    let id = |raw: &Option<String>| {
        Some(
            raw.as_deref()
                .and_then(|s| s.trim().parse::<Id>().ok())
                .filter(|&i| i > 0),
        )
    };
    LinkPatch {
        alias: input
            .alias
            .as_deref()
            .map(str::trim)
            .filter(|a| validate_alias(a).is_ok())
            .map(str::to_owned),
        space: id(&input.space),
        domain: if mode == Mode::Create {
            id(&input.domain)
        } else {
            None
        },
        ..LinkPatch::default()
    }
}

/// What the store answers about a request's references: whether its space and domain are the
/// owner's, and whether its alias is taken in the domain (asked only when the domain is the
/// owner's). [`check_refs`] makes them field errors.
#[derive(Debug, Clone, Copy)]
struct RefFacts {
    space_mine: bool,
    domain_mine: bool,
    alias_taken: bool,
}

impl RefFacts {
    /// The facts of `refs`: `domain` is the domain the link is or will be on, `except` the link
    /// itself on an update. The space and domain stay the owner's until the transaction ends.
    fn of(
        tx: &dyn Tx,
        owner: Id,
        refs: &LinkPatch,
        domain: Option<Id>,
        except: Option<Id>,
    ) -> Result<RefFacts> {
        let space_mine = match refs.space.flatten() {
            Some(space) => tx.space_is_mine(owner, space)?,
            None => true,
        };
        let domain_mine = match refs.domain.flatten() {
            Some(d) => tx.domain_is_mine(owner, d)?,
            None => true,
        };
        let alias_taken = match &refs.alias {
            Some(alias) if domain_mine => tx.alias_taken(domain, alias, except)?,
            _ => false,
        };
        Ok(RefFacts {
            space_mine,
            domain_mine,
            alias_taken,
        })
    }
}

/// Inserts a new link with the alias asked for — taken by another writer meanwhile, it is the
/// field error the check gives — or with a generated one, generated again if it was taken.
fn insert_new(tx: &dyn Tx, mut row: LinkRow, alias: Option<String>) -> Result<Id> {
    if let Some(alias) = alias {
        row.alias = alias;
        return tx
            .insert_link(&row)?
            .ok_or_else(|| Error::field(LinkField::Alias.name(), ALIAS_TAKEN));
    }
    let mut candidates = Candidates::default();
    loop {
        row.alias = candidates.next_alias()?;
        if !tx.alias_taken(row.domain_id, &row.alias, None)?
            && let Some(id) = tx.insert_link(&row)?
        {
            return Ok(id);
        }
        candidates.taken();
    }
}

/// Adds the errors of references that are not the owner's, or of an alias taken in the domain.
fn check_refs(refs: &LinkPatch, facts: RefFacts, errors: &mut FieldErrors) {
    if refs.space.flatten().is_some() && !facts.space_mine {
        errors.add(LinkField::Space.name(), NOT_YOUR_SPACE);
    }
    let domain_ok = refs.domain.flatten().is_none() || facts.domain_mine;
    if !domain_ok {
        errors.add(LinkField::Domain.name(), NOT_YOUR_DOMAIN);
    }
    if refs.alias.is_some() && domain_ok && facts.alias_taken {
        errors.add(LinkField::Alias.name(), ALIAS_TAKEN);
    }
}

/// The validated patch, or every field error: the input's own and its references'.
fn settle(
    validated: Result<LinkPatch, FieldErrors>,
    refs: &LinkPatch,
    facts: RefFacts,
) -> Result<LinkPatch> {
    let (patch, mut errors) = match validated {
        Ok(patch) => (Some(patch), FieldErrors::default()),
        Err(errors) => (None, errors),
    };
    check_refs(refs, facts, &mut errors);
    match patch.filter(|_| errors.is_empty()) {
        Some(patch) => Ok(patch),
        None => Err(errors.into()),
    }
}

/// The references to check of a request, from its validated patch or its raw input.
fn refs_for(
    validated: &Result<LinkPatch, FieldErrors>,
    input: &LinkInput,
    mode: Mode,
) -> LinkPatch {
    refs_of(validated.as_ref().ok(), input, mode)
}

/// The password to store, hashed off the async threads: `Some(None)` removes it.
async fn hash_of(validated: &Result<LinkPatch, FieldErrors>) -> Result<Option<Option<String>>> {
    match validated {
        Ok(LinkPatch {
            password: Some(Some(plain)),
            ..
        }) => Ok(Some(Some(hash_password_async(plain.clone()).await?))),
        Ok(LinkPatch {
            password: Some(None),
            ..
        }) => Ok(Some(None)),
        _ => Ok(None),
    }
}

/// What the store's search is asked for the links of `query`, `limit` rows after `offset`: the
/// list and a bulk action over a filter select the same links this way.
pub(super) fn list_filter(
    owner: Id,
    query: &LinkQuery,
    now: Timestamp,
    offset: u64,
    limit: u32,
) -> ListFilter<'_> {
    ListFilter {
        owner,
        search: query.search_term().map(|t| (query.by, t)),
        status: query.status,
        space: query.space,
        domain: query.domain,
        tags: &query.tags,
        tag_match: query.tag_match,
        sort: query.sort,
        offset,
        limit,
        now,
    }
}

impl LocalBackend {
    /// The short URL of a link: its domain's name, or the profile's public URL, then the alias.
    pub(super) fn finish(&self, mut link: Link) -> Link {
        let base = match &link.domain {
            Some(domain) => domain.name.as_str(),
            None => self.service.options().public_url.as_str(),
        };
        link.short_url = format!("{}/{}", base.trim_end_matches('/'), link.alias);
        link
    }

    /// Up to `limit` of this owner's links with ids above `after`, oldest first. Walking the
    /// whole table this way stays linear, where deep pages of a list would not.
    pub async fn links_after(&self, after: Id, limit: u32) -> Result<Vec<Link>> {
        let owner = self.owner_id();
        let links = self
            .store()
            .read(move |tx| tx.links_after(owner, after, limit))
            .await?;
        Ok(links.into_iter().map(|l| self.finish(l)).collect())
    }

    pub(super) async fn link_list(&self, query: &LinkQuery) -> Result<Page<Link>> {
        query.validate()?;
        let now = self.service.now();
        let query = query.clone();
        let page = self
            .page(query.page, query.per_page, move |tx, owner, offset| {
                tx.list_links(&list_filter(owner, &query, now, offset, query.per_page))
            })
            .await?;
        Ok(Page {
            items: page.items.into_iter().map(|l| self.finish(l)).collect(),
            ..page
        })
    }

    pub(super) async fn link_show(&self, id: Id) -> Result<Link> {
        let link = self
            .one("link", id, |tx, owner, id| tx.link(owner, id))
            .await?;
        Ok(self.finish(link))
    }

    pub(super) async fn link_create(&self, input: &LinkInput) -> Result<Link> {
        let validated = validate_link_input(input, Mode::Create, &self.service.options().timezone);
        let hash = hash_of(&validated).await?;
        let refs = refs_for(&validated, input, Mode::Create);
        let owner = self.owner_id;
        let now = self.service.now();
        let id = self
            .store()
            .write(move |tx| {
                let domain = refs.domain.flatten();
                let facts = RefFacts::of(tx, owner, &refs, domain, None)?;
                let patch = settle(validated, &refs, facts)?;
                let mut row = LinkRow::blank(owner, now);
                row.domain_id = domain;
                apply(&mut row, patch, hash, now);
                let id = insert_new(tx, row, refs.alias)?;
                link_events(tx, owner, [id], WebhookEvent::Created, now)?;
                Ok(id)
            })
            .await?;
        let link = self.link_show(id).await?;
        self.service.fetch_title_later(link.id, link.url.clone());
        Ok(link)
    }

    pub(super) async fn link_update(&self, id: Id, input: &LinkInput) -> Result<Link> {
        let validated = validate_link_input(input, Mode::Update, &self.service.options().timezone);
        let hash = hash_of(&validated).await?;
        let url_given = input.url.is_some();
        let refs = refs_for(&validated, input, Mode::Update);
        let (owner, reach) = (self.owner_id, self.reach);
        let now = self.service.now();
        self.store()
            .write(move |tx| {
                let mut row = tx
                    .link_row(owner, id)?
                    .filter(|row| super::reaches(reach, row.space_id))
                    .ok_or_else(|| Error::not_found(format!("link {id}")))?;
                let facts = RefFacts::of(tx, owner, &refs, row.domain_id, Some(id))?;
                let patch = settle(validated, &refs, facts)?;
                apply(&mut row, patch, hash, now);
                tx.update_link(id, &row)?;
                link_events(tx, owner, [id], WebhookEvent::Updated, now)
            })
            .await?;
        let link = self.link_show(id).await?;
        // A URL given again resets the title to host and path (see `apply`): fetch it anew.
        if url_given {
            self.service.fetch_title_later(link.id, link.url.clone());
        }
        Ok(link)
    }

    /// Moves the link to the trash (a batch of one), where it keeps its id, clicks and traffic.
    pub(super) async fn link_delete(&self, id: Id) -> Result<()> {
        let report = self
            .bulk_local(
                &linkdeck_backend::bulk::Selection::of_ids([id]),
                &linkdeck_backend::bulk::BulkAction::Delete,
                &linkdeck_backend::bulk::Progress::new(),
            )
            .await?;
        if report.changed == 1 {
            Ok(())
        } else {
            Err(Error::not_found(format!("link {id}")))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::default_title;

    #[test]
    fn titles_are_host_and_path() {
        assert_eq!(
            default_title("https://Example.com/landing/?utm=1#top").as_deref(),
            Some("example.com/landing")
        );
        assert_eq!(
            default_title("http://example.com").as_deref(),
            Some("example.com")
        );
        assert_eq!(
            default_title("http://example.com:8080/a/b").as_deref(),
            Some("example.com/a/b")
        );
    }

    #[test]
    fn titles_of_international_urls_read_as_typed() {
        assert_eq!(
            default_title("https://例え.jp/パス/名前").as_deref(),
            Some("例え.jp/パス/名前")
        );
        assert_eq!(
            default_title("https://xn--r8jz45g.jp/%E3%83%91%E3%82%B9").as_deref(),
            Some("例え.jp/パス")
        );
        assert_eq!(
            default_title("https://münchen.de/straße").as_deref(),
            Some("münchen.de/straße")
        );
        // Escapes that are not printable text stay escaped.
        assert_eq!(
            default_title("https://example.com/a%0Ab/%FF").as_deref(),
            Some("example.com/a%0Ab/%FF")
        );
        assert_eq!(
            default_title("https://example.com/txt%E2%80%AEexe.zip").as_deref(),
            Some("example.com/txt%E2%80%AEexe.zip"),
            "a bidirectional override stays escaped too"
        );
    }
}
