//! The registry of a link's fields: each field's names (on the wire, in an export, in a v1
//! record) and its label, listed here once. Every place that names a link's fields — the server's
//! form spec, the remote encoder and decoder, the CSV columns, the link form's stops, the rule
//! editor, the command line's error hints — asks this type instead of spelling the names again.
//! The structs that carry a link's fields keep their own member names (serde needs them as
//! literals); tests hold those names to this list.

use super::TargetType;

/// One field of a link as a person or another program names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum LinkField {
    Url,
    Alias,
    Title,
    Password,
    Space,
    Domain,
    Disabled,
    Public,
    ExpirationDate,
    ExpirationTime,
    ExpirationClicks,
    ExpirationUrl,
    TargetType,
    Geo,
    Platform,
    Rotation,
    Tags,
    ForwardQuery,
    ForwardPath,
    AllowIndexing,
    PreviewTitle,
    PreviewDescription,
    PreviewImage,
    Rules,
    Clicks,
    CreatedAt,
    Previews,
}

use LinkField as F;

impl LinkField {
    /// The fields of a create or update request ([`super::LinkInput`]) and of the form body,
    /// in the order a request is encoded.
    pub const INPUT: [LinkField; 23] = [
        F::Url,
        F::Alias,
        F::Password,
        F::Space,
        F::Domain,
        F::Disabled,
        F::Public,
        F::ExpirationUrl,
        F::ExpirationDate,
        F::ExpirationTime,
        F::ExpirationClicks,
        F::TargetType,
        F::Geo,
        F::Platform,
        F::Rotation,
        F::Tags,
        F::ForwardQuery,
        F::ForwardPath,
        F::AllowIndexing,
        F::PreviewTitle,
        F::PreviewDescription,
        F::PreviewImage,
        F::Rules,
    ];

    /// Every field, in the order a JSON export writes a link's: the request's fields, and what
    /// a link carries from before (`title`, `clicks`, `previews`, `created_at`) after its url
    /// and alias.
    pub const ALL: [LinkField; 27] = [
        F::Url,
        F::Alias,
        F::Title,
        F::Clicks,
        F::Previews,
        F::CreatedAt,
        F::Space,
        F::Domain,
        F::Disabled,
        F::Public,
        F::Password,
        F::ExpirationDate,
        F::ExpirationTime,
        F::ExpirationClicks,
        F::ExpirationUrl,
        F::TargetType,
        F::Geo,
        F::Platform,
        F::Rotation,
        F::Tags,
        F::ForwardQuery,
        F::ForwardPath,
        F::AllowIndexing,
        F::PreviewTitle,
        F::PreviewDescription,
        F::PreviewImage,
        F::Rules,
    ];

    /// A link's options ([`super::LinkOptions`]): linkdeck's own, which a v1-only server has
    /// none of.
    pub const OPTIONS: [LinkField; 6] = [
        F::ForwardQuery,
        F::ForwardPath,
        F::AllowIndexing,
        F::PreviewTitle,
        F::PreviewDescription,
        F::PreviewImage,
    ];

    /// The targeting lists, sent as `name[i][key]` and `name[i][value]` (rotation: value only).
    pub const TARGET_LISTS: [LinkField; 3] = [F::Geo, F::Platform, F::Rotation];

    /// The names of [`LinkField::TARGET_LISTS`].
    pub const TARGET_LIST_NAMES: [&'static str; 3] =
        [F::Geo.name(), F::Platform.name(), F::Rotation.name()];

    /// The name on the wire, in a form body, in error names, and as an export's key and CSV
    /// column.
    pub const fn name(self) -> &'static str {
        match self {
            F::Url => "url",
            F::Alias => "alias",
            F::Title => "title",
            F::Password => "password",
            F::Space => "space",
            F::Domain => "domain",
            F::Disabled => "disabled",
            F::Public => "public",
            F::ExpirationDate => "expiration_date",
            F::ExpirationTime => "expiration_time",
            F::ExpirationClicks => "expiration_clicks",
            F::ExpirationUrl => "expiration_url",
            F::TargetType => "target_type",
            F::Geo => "geo",
            F::Platform => "platform",
            F::Rotation => "rotation",
            F::Tags => "tags",
            F::ForwardQuery => "forward_query",
            F::ForwardPath => "forward_path",
            F::AllowIndexing => "allow_indexing",
            F::PreviewTitle => "preview_title",
            F::PreviewDescription => "preview_description",
            F::PreviewImage => "preview_image",
            F::Rules => "rules",
            F::Clicks => "clicks",
            F::CreatedAt => "created_at",
            F::Previews => "previews",
        }
    }

    /// The key of a v1 link record (what a server answers with), where it differs from the
    /// request's name; `None` for the expiry's date and time, which a record carries as one
    /// instant (`ends_at`).
    pub const fn record_name(self) -> Option<&'static str> {
        match self {
            F::ExpirationDate | F::ExpirationTime => None,
            F::Geo => Some("geo_target"),
            F::Platform => Some("platform_target"),
            F::Rotation => Some("rotation_target"),
            other => Some(other.name()),
        }
    }

    /// How the link form labels the field; fields the form does not show read as their name.
    pub const fn label(self) -> &'static str {
        match self {
            F::Url => "destination URL",
            F::Public => "public statistics",
            F::ExpirationDate => "date",
            F::ExpirationTime => "time",
            F::ExpirationClicks => "max clicks",
            F::ExpirationUrl => "URL after expiry",
            F::TargetType => "type",
            other => other.name(),
        }
    }

    /// The field named `name` on the wire.
    pub fn from_name(name: &str) -> Option<LinkField> {
        F::ALL.into_iter().find(|f| f.name() == name)
    }

    /// The field an error name belongs to: `alias` to the alias, `geo.0.key` to the geo list.
    pub fn owning(error: &str) -> Option<LinkField> {
        let head = error.split('.').next().unwrap_or(error);
        let field = F::from_name(head)?;
        (head == error || field.is_target_list() || field == F::Rules).then_some(field)
    }

    pub fn is_target_list(self) -> bool {
        F::TARGET_LISTS.contains(&self)
    }

    /// Whether the list's rows carry a key as well as a value (rotation's carry only a URL).
    pub fn is_keyed(self) -> bool {
        matches!(self, F::Geo | F::Platform)
    }

    /// The list that holds the rules of targeting type `kind`.
    pub fn target_list(kind: TargetType) -> Option<LinkField> {
        match kind {
            TargetType::None => None,
            TargetType::Geo => Some(F::Geo),
            TargetType::Platform => Some(F::Platform),
            TargetType::Rotation => Some(F::Rotation),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_unique_and_read_back() {
        for field in LinkField::ALL {
            assert_eq!(LinkField::from_name(field.name()), Some(field));
        }
        let mut input = LinkField::INPUT.to_vec();
        input.sort();
        input.dedup();
        assert_eq!(input.len(), LinkField::INPUT.len());
        let mut all = LinkField::ALL.to_vec();
        all.sort();
        all.dedup();
        assert_eq!(all.len(), LinkField::ALL.len());
    }

    #[test]
    fn errors_belong_to_their_field() {
        assert_eq!(LinkField::owning("alias"), Some(LinkField::Alias));
        assert_eq!(LinkField::owning("geo.3.key"), Some(LinkField::Geo));
        assert_eq!(LinkField::owning("rotation"), Some(LinkField::Rotation));
        assert_eq!(LinkField::owning("alias.0"), None);
        assert_eq!(LinkField::owning("colour"), None);
    }

    #[test]
    fn each_targeting_type_but_none_has_its_list() {
        let lists: Vec<LinkField> = TargetType::ALL
            .into_iter()
            .filter_map(LinkField::target_list)
            .collect();
        assert_eq!(lists, LinkField::TARGET_LISTS);
        for kind in TargetType::ALL {
            if let Some(list) = LinkField::target_list(kind) {
                assert_eq!(list.name(), kind.label());
            }
        }
    }
}
