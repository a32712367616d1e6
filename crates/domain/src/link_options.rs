//! A link's redirect options (issue 30): whether the visitor's query string and the rest of
//! their path go on to the destination, whether search engines may index the redirect, and the
//! card chat and social apps draw for it. One home for their rules: the defaults (today's
//! behaviour), the bounds, how a change applies, and where a visit goes with them.

use serde::{Deserialize, Serialize};
use url::Url;

use super::{FieldErrors, LinkField, Rule, validate_url};

/// The longest preview title, in characters.
pub const PREVIEW_TITLE_MAX: usize = 200;
/// The longest preview description, in characters.
pub const PREVIEW_DESCRIPTION_MAX: usize = 500;
/// The longest rest of a path a link forwards, in bytes as requested (percent-encoded).
pub const EXTRA_PATH_MAX: usize = 1024;

/// What a link does with what the visitor brings, and how it is previewed. In JSON (the
/// stored column, exports, linkdeck's extras on a v1 record) under its field names; a record
/// without them has the defaults.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct LinkOptions {
    /// The visitor's query string goes on to the destination (on by default, as always).
    pub forward_query: bool,
    /// `/alias/extra/path` leads to the destination's path + `/extra/path` (off by default:
    /// such a path is an unknown one).
    pub forward_path: bool,
    /// Redirects go without `X-Robots-Tag: noindex` (off by default).
    pub allow_indexing: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub preview_title: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub preview_description: Option<String>,
    /// An absolute http(s) URL, by the link URL rule.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub preview_image: Option<String>,
    /// Redirect rules ([`super::rules`]), in the order they are asked; none by default.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub rules: Vec<Rule>,
}

impl Default for LinkOptions {
    fn default() -> Self {
        LinkOptions {
            forward_query: true,
            forward_path: false,
            allow_indexing: false,
            preview_title: None,
            preview_description: None,
            preview_image: None,
            rules: Vec::new(),
        }
    }
}

impl LinkOptions {
    pub fn is_default(&self) -> bool {
        *self == LinkOptions::default()
    }

    /// Whether preview agents are shown a card rather than redirected.
    pub fn has_preview(&self) -> bool {
        self.preview_title.is_some()
            || self.preview_description.is_some()
            || self.preview_image.is_some()
    }

    /// The fields that differ from the defaults: what a server without options would lose.
    pub fn set_fields(&self) -> Vec<LinkField> {
        let d = LinkOptions::default();
        [
            (
                LinkField::ForwardQuery,
                self.forward_query != d.forward_query,
            ),
            (LinkField::ForwardPath, self.forward_path != d.forward_path),
            (
                LinkField::AllowIndexing,
                self.allow_indexing != d.allow_indexing,
            ),
            (LinkField::PreviewTitle, self.preview_title.is_some()),
            (
                LinkField::PreviewDescription,
                self.preview_description.is_some(),
            ),
            (LinkField::PreviewImage, self.preview_image.is_some()),
            (LinkField::Rules, !self.rules.is_empty()),
        ]
        .into_iter()
        .filter_map(|(field, set)| set.then_some(field))
        .collect()
    }

    /// The switches in a few words, as the CLI and the app show them:
    /// `query forwarded · extra path refused · noindex`.
    pub fn redirect_summary(&self) -> String {
        format!(
            "query {} · extra path {} · {}",
            if self.forward_query {
                "forwarded"
            } else {
                "dropped"
            },
            if self.forward_path {
                "forwarded"
            } else {
                "refused"
            },
            if self.allow_indexing {
                "indexable"
            } else {
                "noindex"
            },
        )
    }

    /// The preview card in one line: its title, description and image, or `-` for none.
    pub fn preview_summary(&self) -> String {
        let parts: Vec<&str> = [
            &self.preview_title,
            &self.preview_description,
            &self.preview_image,
        ]
        .into_iter()
        .filter_map(|t| t.as_deref())
        .collect();
        if parts.is_empty() {
            "-".into()
        } else {
            parts.join(" · ")
        }
    }

    /// The options as typed in a [`super::LinkInput`]: each field as its raw text.
    pub fn input_fields(&self) -> [(LinkField, String); 6] {
        let flag = |b: bool| if b { "1" } else { "0" }.to_owned();
        let text = |t: &Option<String>| t.clone().unwrap_or_default();
        [
            (LinkField::ForwardQuery, flag(self.forward_query)),
            (LinkField::ForwardPath, flag(self.forward_path)),
            (LinkField::AllowIndexing, flag(self.allow_indexing)),
            (LinkField::PreviewTitle, text(&self.preview_title)),
            (
                LinkField::PreviewDescription,
                text(&self.preview_description),
            ),
            (LinkField::PreviewImage, text(&self.preview_image)),
        ]
    }
}

/// A validated change to a link's options; `None` leaves one as it is, and for the preview's
/// texts `Some(None)` clears one.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct OptionsPatch {
    pub forward_query: Option<bool>,
    pub forward_path: Option<bool>,
    pub allow_indexing: Option<bool>,
    pub preview_title: Option<Option<String>>,
    pub preview_description: Option<Option<String>>,
    pub preview_image: Option<Option<String>>,
    /// The whole list of rules; empty removes them.
    pub rules: Option<Vec<Rule>>,
}

impl OptionsPatch {
    pub fn is_empty(&self) -> bool {
        *self == OptionsPatch::default()
    }

    pub fn apply(&self, options: &mut LinkOptions) {
        fn set<T: Clone>(to: &mut T, from: &Option<T>) {
            if let Some(v) = from {
                *to = v.clone();
            }
        }
        set(&mut options.forward_query, &self.forward_query);
        set(&mut options.forward_path, &self.forward_path);
        set(&mut options.allow_indexing, &self.allow_indexing);
        set(&mut options.preview_title, &self.preview_title);
        set(&mut options.preview_description, &self.preview_description);
        set(&mut options.preview_image, &self.preview_image);
        set(&mut options.rules, &self.rules);
    }
}

/// A preview text: trimmed, empty clears it, at most `max` characters, no control characters.
pub fn preview_text(
    raw: Option<&str>,
    field: LinkField,
    max: usize,
    errors: &mut FieldErrors,
) -> Option<Option<String>> {
    let text = raw?.trim();
    if text.is_empty() {
        return Some(None);
    }
    if text.chars().count() > max {
        errors.add(field.name(), format!("must be at most {max} characters"));
        return None;
    }
    if text.chars().any(char::is_control) {
        errors.add(field.name(), "must not contain control characters");
        return None;
    }
    Some(Some(text.to_owned()))
}

/// A preview image: empty clears it, else an absolute http(s) URL by the link URL rule.
pub fn preview_image(raw: Option<&str>, errors: &mut FieldErrors) -> Option<Option<String>> {
    let url = raw?.trim();
    if url.is_empty() {
        return Some(None);
    }
    match validate_url(url) {
        Ok(()) => Some(Some(url.to_owned())),
        Err(message) => {
            errors.add(LinkField::PreviewImage.name(), message);
            None
        }
    }
}

/// What a visit is answered with, in order: a link with a preview shows preview agents its
/// card (the visit is a preview, not a click); everyone else is redirected, with
/// `X-Robots-Tag: noindex` unless the link allows indexing. The gates before (expiry,
/// password, disabled) and the host's fallbacks come first, as for any link.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Answer {
    Card,
    Redirect { noindex: bool },
}

pub fn answer(options: &LinkOptions, preview_agent: bool) -> Answer {
    if preview_agent && options.has_preview() {
        Answer::Card
    } else {
        Answer::Redirect {
            noindex: !options.allow_indexing,
        }
    }
}

/// Whether `rest` (what follows `/alias` in a request's path, as requested: percent-encoded,
/// starting with `/`) may be appended to a destination: at most [`EXTRA_PATH_MAX`] bytes of
/// URL path characters (RFC 3986 `pchar` and `/`), with no empty, `.` or `..` segment (encoded
/// or not) and no backslash, so it can only ever add to the destination's own path.
pub fn forwardable_path(rest: &str) -> bool {
    if !rest.starts_with('/') || rest.len() > EXTRA_PATH_MAX {
        return false;
    }
    let chars_ok = rest.bytes().all(|b| {
        b.is_ascii_alphanumeric()
            || matches!(
                b,
                b'/' | b'-'
                    | b'.'
                    | b'_'
                    | b'~'
                    | b'%'
                    | b'!'
                    | b'$'
                    | b'&'
                    | b'\''
                    | b'('
                    | b')'
                    | b'*'
                    | b'+'
                    | b','
                    | b';'
                    | b'='
                    | b':'
                    | b'@'
            )
    });
    if !chars_ok {
        return false;
    }
    // Each escape must be one, and decode to neither a separator nor a control character.
    let bytes = rest.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = bytes
                .get(i + 1..i + 3)
                .and_then(|h| std::str::from_utf8(h).ok());
            match hex.and_then(|h| u8::from_str_radix(h, 16).ok()) {
                Some(b'/' | b'\\') | None => return false,
                Some(c) if c < 0x20 || c == 0x7f => return false,
                Some(_) => i += 3,
            }
        } else {
            i += 1;
        }
    }
    // Segments after the leading `/`: a trailing `/` is kept, but `//`, `.` and `..` are not.
    let segments: Vec<&str> = rest[1..].split('/').collect();
    let last = segments.len() - 1;
    segments.iter().enumerate().all(|(i, s)| {
        let dots = s.to_ascii_lowercase().replace("%2e", ".");
        (!s.is_empty() || i == last) && dots != "." && dots != ".."
    })
}

/// Where a visit goes: `destination` with the rest of the path appended when the link forwards
/// it (`rest` already passed [`forwardable_path`]), and the visitor's query merged in when it
/// forwards that (the visitor's parameters win over the destination's of the same name; the
/// destination's others stay, in their order). In the one form every `Location` carries: the
/// URL as the URL standard serializes it, plain ASCII. The destination's scheme and host never
/// change.
pub fn destination(
    destination: &str,
    options: &LinkOptions,
    rest: Option<&str>,
    query: Option<&str>,
) -> String {
    let Ok(mut url) = Url::parse(destination) else {
        return destination.to_owned();
    };
    if let Some(rest) = rest.filter(|_| options.forward_path) {
        let path = format!("{}{rest}", url.path().trim_end_matches('/'));
        url.set_path(&path);
    }
    let theirs: Vec<(String, String)> = query
        .filter(|_| options.forward_query)
        .map(|q| {
            url::form_urlencoded::parse(q.as_bytes())
                .map(|(k, v)| (k.into_owned(), v.into_owned()))
                .collect()
        })
        .unwrap_or_default();
    if theirs.is_empty() {
        return url.into();
    }
    let ours: Vec<(String, String)> = url
        .query_pairs()
        .filter(|(k, _)| !theirs.iter().any(|(t, _)| t == k))
        .map(|(k, v)| (k.into_owned(), v.into_owned()))
        .collect();
    url.query_pairs_mut()
        .clear()
        .extend_pairs(ours.iter().chain(theirs.iter()));
    url.into()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn forwarding() -> LinkOptions {
        LinkOptions {
            forward_path: true,
            ..LinkOptions::default()
        }
    }

    #[test]
    fn defaults_are_todays_behaviour() {
        let d = LinkOptions::default();
        assert!(d.forward_query && !d.forward_path && !d.allow_indexing && !d.has_preview());
        assert!(d.is_default() && d.set_fields().is_empty());
        assert_eq!(forwarding().set_fields(), vec![LinkField::ForwardPath]);
    }

    #[test]
    fn the_query_merges_with_the_visitors_winning() {
        let d = LinkOptions::default();
        assert_eq!(
            destination(
                "https://a.example/p?utm=x&keep=1",
                &d,
                None,
                Some("utm=y&new=2")
            ),
            "https://a.example/p?keep=1&utm=y&new=2"
        );
        assert_eq!(
            destination("https://a.example/", &d, None, None),
            "https://a.example/"
        );
        assert_eq!(
            destination("https://a.example/#f", &d, None, Some("a=1")),
            "https://a.example/?a=1#f"
        );
        let kept = LinkOptions {
            forward_query: false,
            ..d
        };
        assert_eq!(
            destination("https://a.example/p?keep=1", &kept, None, Some("utm=y")),
            "https://a.example/p?keep=1"
        );
    }

    #[test]
    fn the_rest_of_the_path_is_appended_only_when_forwarded() {
        let on = forwarding();
        assert_eq!(
            destination(
                "https://a.example/docs/?v=1",
                &on,
                Some("/x/y"),
                Some("q=2")
            ),
            "https://a.example/docs/x/y?v=1&q=2"
        );
        assert_eq!(
            destination("https://a.example", &on, Some("/x/"), None),
            "https://a.example/x/"
        );
        assert_eq!(
            destination(
                "https://a.example/d",
                &LinkOptions::default(),
                Some("/x"),
                None
            ),
            "https://a.example/d"
        );
    }

    #[test]
    fn a_forwarded_path_never_leaves_the_destinations_host() {
        for good in ["/x", "/x/y/", "/a-b_c.d~e", "/%C3%A9t%C3%A9", "/a:b@c", "/"] {
            assert!(forwardable_path(good), "{good}");
        }
        for bad in [
            "//evil.example",
            "/x//y",
            "/..",
            "/x/../y",
            "/%2e%2e/y",
            "/.%2E",
            "/.",
            "/x/%2f/y",
            "/x%5cevil",
            "/x\\y",
            "/x%0d%0aSet-Cookie:a",
            "/x%zz",
            "/x%2",
            "/x?y",
            "/x#y",
            "/x y",
            "x",
            "",
        ] {
            assert!(!forwardable_path(bad), "{bad}");
        }
        assert!(!forwardable_path(&format!(
            "/{}",
            "a".repeat(EXTRA_PATH_MAX)
        )));
        let on = forwarding();
        for rest in ["/x", "/%C3%A9", "/a:b@c/", "/@evil.example"] {
            let to = destination("https://a.example/d", &on, Some(rest), None);
            assert_eq!(
                Url::parse(&to).unwrap().host_str(),
                Some("a.example"),
                "{to}"
            );
        }
    }

    #[test]
    fn preview_agents_see_the_card_only_when_there_is_one() {
        let d = LinkOptions::default();
        assert_eq!(answer(&d, true), Answer::Redirect { noindex: true });
        let card = LinkOptions {
            preview_title: Some("T".into()),
            allow_indexing: true,
            ..d
        };
        assert_eq!(answer(&card, true), Answer::Card);
        assert_eq!(answer(&card, false), Answer::Redirect { noindex: false });
    }

    #[test]
    fn preview_texts_are_bounded_and_clearable() {
        let mut errors = FieldErrors::default();
        let long = "é".repeat(PREVIEW_TITLE_MAX + 1);
        let t = LinkField::PreviewTitle;
        assert_eq!(
            preview_text(Some(" "), t, PREVIEW_TITLE_MAX, &mut errors),
            Some(None)
        );
        assert_eq!(
            preview_text(Some(&long[2..]), t, PREVIEW_TITLE_MAX, &mut errors),
            Some(Some(long[2..].to_owned()))
        );
        assert_eq!(
            preview_text(Some(&long), t, PREVIEW_TITLE_MAX, &mut errors),
            None
        );
        assert_eq!(
            preview_image(Some("javascript:alert(1)"), &mut errors),
            None
        );
        let names: Vec<&str> = errors.iter().map(|(f, _)| f).collect();
        assert_eq!(names, ["preview_image", "preview_title"], "sorted by name");
    }
}
