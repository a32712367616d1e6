//! The service's types and rules, with no I/O. Everything else depends on this
//! module; it depends on nothing of ours. Validation lives here once and serves the embedded
//! service, the server and the terminal app's forms.

mod base_url;
mod clock;
mod country;
mod error;
mod excerpt;
mod expiry;
mod fields;
mod host;
mod host_settings;
mod import;
mod link;
mod link_field;
mod link_options;
mod orphans;
mod platform;
#[cfg(test)]
mod proptests;
mod query;
mod redirect_status;
mod rules;
mod shown;
mod space;
mod space_set;
mod stats;
mod tag;
mod traffic;
mod trash;
mod validate;
mod visit;
mod visitor_address;
mod webhook;
mod words;

pub use base_url::BaseUrl;
pub use clock::{Clock, FixedClock, SystemClock};
pub use country::{Country, country_by_code, search_countries};
pub use error::{Error, Result};
pub use excerpt::{EXCERPT_CHARS, NAME_CHARS, excerpt, name_excerpt};
pub use expiry::{format_expiry_input, parse_expiry};
pub use fields::{FieldErrors, LISTED_FIELDS};
pub use host::{Domain, Owner, find_domain, normalize_domain_name};
pub use host_settings::{
    DomainInput, DomainPatch, Gate, HostSettings, ROBOTS_MAX, Robots, TurnedAway, gate,
    turned_away_to, validate_domain_input, validate_robots_txt,
};
pub use import::{
    CLICKS_MAX, Carried, OnConflict, Place, Renamed, TITLE_MAX, carried, parse_instant,
    renamed_alias,
};
pub use link::{
    Link, LinkInput, LinkPatch, LinkStatus, RuleInput, TargetRule, TargetType, validate_link_input,
};
pub use link_field::LinkField;
pub use link_options::{
    Answer, EXTRA_PATH_MAX, LinkOptions, OptionsPatch, PREVIEW_DESCRIPTION_MAX, PREVIEW_TITLE_MAX,
    answer, destination, forwardable_path,
};
pub use orphans::{ORPHAN_VALUE_MAX, ORPHAN_VALUES_PER_DAY, OrphanKind, OrphanStats, orphan_value};
pub use platform::Platform;
pub use query::{
    COUNT_BOUND, LinkQuery, ListTotal, PER_PAGE_MAX, PER_PAGE_MIN, Page, SearchBy, Sort,
    SpaceFilter, SpaceQuery, StatusFilter, Total,
};
pub use redirect_status::RedirectStatus;
pub use rules::{
    Arm, Condition, Day, RULE_KINDS, RULE_LANGUAGES_MAX, RULE_TEXT_MAX, RULES_FIELD, RULES_MAX,
    Rule, SPLIT_ARMS_MAX, SPLIT_WEIGHT_MAX, Visitor as RuleVisitor, first_match, parse_rule,
    parse_rules, rule_label, rule_urls, validate_rules,
};
pub use shown::{SUBSTITUTE, Shown, cleaned, into_shown, is_unshowable, shown};
pub use space::{Color, Space, SpaceInput, SpacePatch, space_name_key, validate_space_input};
pub use space_set::{SPACE_SET_MAX, SpaceSet};
pub use stats::{
    Breakdown, Bucket, Interval, MAX_DAYS, Period, PeriodSpec, Preset, Stats, StatsPart,
    StatsQuery, StatsScope, TOP_DEFAULT, TOP_MAX, TopLink, ValueCount, top_values,
};
pub use tag::{
    TAG_MAX, TAG_SEPARATOR, TAGS_PER_LINK_MAX, TagCount, TagMatch, retagged, tag, tags_of,
    tags_of_text, tags_text,
};
pub use traffic::{
    DIMENSIONS, Dimension, HOST_MAX, HOUR_CLICKS_MAX, NAME_MAX, OTHER, TrafficHour, bound_host,
    bound_name, primary_language,
};
pub use trash::{TrashPage, Trashed, TrashedKind};
pub use validate::{
    ALIAS_MAX, OWNER_KEY_NAME_MAX, PASSWORD_MAX, RESERVED_ALIASES, URL_MAX, is_alias_shaped,
    is_reserved_alias, validate_alias, validate_key_name, validate_owner_name, validate_url,
};
pub use visit::{Visit, VisitQuery};
pub use visitor_address::AddressLog;
pub use webhook::{
    Delivery, WEBHOOK_URL_MAX, Webhook, WebhookActivity, WebhookEvent, WebhookInput,
    events_of_text, events_text, validate_webhook_input,
};
pub use words::{clip, plural, thousands};

/// Identifier of a record (link, space, domain, owner, key).
pub type Id = i64;

/// Whether a patch creates a record (required fields must be present) or updates one (only the
/// fields present change).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    Create,
    Update,
}
