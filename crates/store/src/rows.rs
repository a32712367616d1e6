//! The records both stores read from a row, written once: which column is which, and the
//! rules that turn what is stored into a record (a count below zero as 0, an unknown kind as
//! none, a JSON list as its entries). A store hands its row over as [`Cells`]; nothing here
//! knows a driver.

use linkdeck_domain::{Color, Domain, HostSettings, Id, Link, Owner, Robots, Space, SpaceSet};

use crate::{
    KeyInfo, LinkRow, ResolvedLink, clamped, optional_time, parse_options, parse_rotation,
    parse_rules, parse_tags, target_type, time,
};

/// The columns of one row as a store reads them; a column of an unexpected type is the
/// store's error, never a panic.
pub trait Cells {
    type Error;
    /// An integer column of any width.
    fn int(&self, i: usize) -> Result<i64, Self::Error>;
    fn opt_int(&self, i: usize) -> Result<Option<i64>, Self::Error>;
    fn text(&self, i: usize) -> Result<String, Self::Error>;
    fn opt_text(&self, i: usize) -> Result<Option<String>, Self::Error>;
    fn flag(&self, i: usize) -> Result<bool, Self::Error>;
}

/// A space from columns `at..at + 7`, in the order of `id, owner_id, name, color, link_count,
/// created_at, updated_at` (also how a link's joined space is read).
pub fn space<R: Cells>(r: &R, at: usize) -> Result<Space, R::Error> {
    Ok(Space {
        id: r.int(at)?,
        owner_id: r.int(at + 1)?,
        name: r.text(at + 2)?,
        // The CHECK constraint keeps colours in range.
        color: u8::try_from(r.int(at + 3)?)
            .ok()
            .and_then(Color::new)
            .unwrap_or(Color::new(1).expect("1 is a colour")),
        links: Some(r.int(at + 4)?.max(0) as u64),
        created_at: time(r.int(at + 5)?),
        updated_at: time(r.int(at + 6)?),
    })
}

/// A domain from columns `at..at + 5`: `id, owner_id, name, created_at, updated_at` (how a
/// link's joined domain is read: without its settings).
pub fn domain<R: Cells>(r: &R, at: usize) -> Result<Domain, R::Error> {
    Ok(Domain {
        id: r.int(at)?,
        owner_id: r.int(at + 1)?,
        name: r.text(at + 2)?,
        created_at: time(r.int(at + 3)?),
        updated_at: time(r.int(at + 4)?),
        settings: None,
    })
}

/// A domain with its settings, from [`DOMAIN_COLUMNS`](crate::DOMAIN_COLUMNS) starting at 0.
pub fn domain_with_settings<R: Cells>(r: &R) -> Result<Domain, R::Error> {
    Ok(Domain {
        settings: Some(host_settings(r, 5)?),
        ..domain(r, 0)?
    })
}

/// A host's settings from `root_url, unknown_url, expired_url, robots, robots_txt` at `at`.
pub fn host_settings<R: Cells>(r: &R, at: usize) -> Result<HostSettings, R::Error> {
    Ok(HostSettings {
        root_url: r.opt_text(at)?,
        unknown_url: r.opt_text(at + 1)?,
        expired_url: r.opt_text(at + 2)?,
        robots: Robots::stored(r.int(at + 3)?, r.opt_text(at + 4)?),
    })
}

/// An owner from `id, name, created_at`.
pub fn owner<R: Cells>(r: &R) -> Result<Owner, R::Error> {
    Ok(Owner {
        id: r.int(0)?,
        name: r.text(1)?,
        created_at: time(r.int(2)?),
    })
}

/// A key from its columns with its owner's name: `k.id, k.owner_id, o.name, k.name, k.prefix,
/// k.created_at, k.last_used_at, k.revoked_at, k.read_only, k.expires_at, k.spaces`.
pub fn key<R: Cells>(r: &R) -> Result<KeyInfo, R::Error> {
    Ok(KeyInfo {
        id: r.int(0)?,
        owner_id: r.int(1)?,
        owner: r.text(2)?,
        name: r.opt_text(3)?,
        prefix: r.text(4)?,
        created_at: optional_time(r.opt_int(5)?).unwrap_or_default(),
        last_used_at: optional_time(r.opt_int(6)?),
        revoked_at: optional_time(r.opt_int(7)?),
        read_only: r.flag(8)?,
        expires_at: optional_time(r.opt_int(9)?),
        spaces: r.opt_text(10)?.as_deref().map(SpaceSet::parse_stored),
    })
}

/// A live key from `id, owner_id, digest, read_only, expires_at, spaces`; the digest read by the
/// store.
pub fn live_key<R: Cells>(r: &R, digest: Vec<u8>) -> Result<crate::LiveKey, R::Error> {
    Ok(crate::LiveKey {
        id: r.int(0)?,
        owner: r.int(1)?,
        digest,
        grant: crate::KeyGrant {
            read_only: r.flag(3)?,
            expires_at: optional_time(r.opt_int(4)?),
            spaces: r.opt_text(5)?.as_deref().map(SpaceSet::parse_stored),
        },
    })
}

/// A link as read with [`READ_COLUMNS`](crate::sql::READ_COLUMNS); `short_url` is left empty
/// for the service to fill in.
pub fn link<R: Cells>(r: &R) -> Result<Link, R::Error> {
    let space_id: Option<Id> = r.opt_int(19)?;
    let domain_id: Option<Id> = r.opt_int(26)?;
    Ok(Link {
        id: r.int(0)?,
        alias: r.text(1)?,
        url: r.text(2)?,
        short_url: String::new(),
        title: r.opt_text(3)?,
        target_type: target_type(r.int(4)?),
        geo: parse_rules(r.opt_text(5)?),
        platform: parse_rules(r.opt_text(6)?),
        rotation: parse_rotation(r.opt_text(7)?),
        last_rotation: u32::try_from(r.int(8)?).unwrap_or(0),
        disabled: r.flag(9)?,
        public: r.flag(10)?,
        password: r.flag(11)?,
        expiration_url: r.opt_text(12)?,
        expiration_clicks: clamped(r.int(13)?),
        clicks: r.int(14)?.max(0) as u64,
        owner_id: r.int(15)?,
        ends_at: r.opt_int(16)?.map(time),
        created_at: time(r.int(17)?),
        updated_at: time(r.int(18)?),
        space: space_id.map(|_| space(r, 19)).transpose()?,
        domain: domain_id.map(|_| domain(r, 26)).transpose()?,
        tags: parse_tags(r.opt_text(31)?),
        options: parse_options(r.opt_text(32)?),
        previews: r.int(33)?.max(0) as u64,
    })
}

/// The writable columns of a link, as read with [`WRITE_COLUMNS`](crate::sql::WRITE_COLUMNS).
pub fn link_row<R: Cells>(r: &R) -> Result<LinkRow, R::Error> {
    Ok(LinkRow {
        owner_id: r.int(0)?,
        domain_id: r.opt_int(1)?,
        space_id: r.opt_int(2)?,
        alias: r.text(3)?,
        url: r.text(4)?,
        title: r.opt_text(5)?,
        password_hash: r.opt_text(6)?,
        disabled: r.flag(7)?,
        public: r.flag(8)?,
        expiration_url: r.opt_text(9)?,
        expiration_clicks: clamped(r.int(10)?),
        ends_at: r.opt_int(11)?.map(time),
        target_type: target_type(r.int(12)?),
        geo: parse_rules(r.opt_text(13)?),
        platform: parse_rules(r.opt_text(14)?),
        rotation: parse_rotation(r.opt_text(15)?),
        created_at: time(r.int(16)?),
        updated_at: time(r.int(17)?),
        tags: parse_tags(r.opt_text(18)?),
        options: parse_options(r.opt_text(19)?),
    })
}

/// A link as a redirect reads it: `id, owner_id, alias, url, password_hash, disabled, public,
/// expiration_url, expiration_clicks, ends_at, clicks, target_type, geo_target,
/// platform_target, rotation_target, last_rotation, options`.
pub fn resolved<R: Cells>(r: &R) -> Result<ResolvedLink, R::Error> {
    let url = r.text(3)?;
    Ok(ResolvedLink {
        id: r.int(0)?,
        owner_id: r.int(1)?,
        alias: r.text(2)?,
        location: linkdeck_domain::destination(&url, &Default::default(), None, None),
        url,
        password_hash: r.opt_text(4)?,
        disabled: r.flag(5)?,
        public: r.flag(6)?,
        expiration_url: r.opt_text(7)?.filter(|u| !u.is_empty()),
        expiration_clicks: clamped(r.int(8)?),
        ends_at: optional_time(r.opt_int(9)?),
        clicks: r.int(10)?.max(0) as u64,
        target_type: target_type(r.int(11)?),
        geo: parse_rules(r.opt_text(12)?),
        platform: parse_rules(r.opt_text(13)?),
        rotation: parse_rotation(r.opt_text(14)?),
        last_rotation: clamped(r.int(15)?),
        options: parse_options(r.opt_text(16)?),
    })
}
