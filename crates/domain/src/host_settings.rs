//! What a host answers when no link of its own does (docs/ARCHITECTURE.md, *A redirect*): where
//! its root, an unknown alias and a link that turns its visitor away send the visitor, and what
//! its `/robots.txt` says. A domain stores its own; the server's own host takes them from
//! `[serve]` in the config. Checked here once for the service, the server's API, the CLI, the
//! app's form and the config.

use serde::{Deserialize, Serialize};

use super::{FieldErrors, validate_url};

/// The longest `robots.txt` a host may be given, in bytes.
pub const ROBOTS_MAX: usize = 4096;

/// A host's fallbacks and robots policy. `None`: linkdeck's own page, as without settings.
/// In JSON as the v1 API's domain record has them: `robots` a word, `robots_txt` its text.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(into = "SettingsRecord", from = "SettingsRecord")]
pub struct HostSettings {
    /// Where `/` sends a visitor.
    pub root_url: Option<String>,
    /// Where an alias no link has sends a visitor.
    pub unknown_url: Option<String>,
    /// Where a disabled link, or an expired one without its own expiration URL, sends a visitor.
    pub expired_url: Option<String>,
    pub robots: Robots,
}

/// [`HostSettings`] in JSON.
#[derive(Serialize, Deserialize)]
struct SettingsRecord {
    #[serde(default)]
    root_url: Option<String>,
    #[serde(default)]
    unknown_url: Option<String>,
    #[serde(default)]
    expired_url: Option<String>,
    #[serde(default)]
    robots: Option<String>,
    #[serde(default)]
    robots_txt: Option<String>,
}

impl From<HostSettings> for SettingsRecord {
    fn from(s: HostSettings) -> Self {
        SettingsRecord {
            robots: Some(s.robots.word().to_owned()),
            robots_txt: s.robots.text().map(str::to_owned),
            root_url: s.root_url,
            unknown_url: s.unknown_url,
            expired_url: s.expired_url,
        }
    }
}

impl From<SettingsRecord> for HostSettings {
    fn from(r: SettingsRecord) -> Self {
        HostSettings {
            root_url: r.root_url,
            unknown_url: r.unknown_url,
            expired_url: r.expired_url,
            robots: Robots::named(r.robots.as_deref(), r.robots_txt),
        }
    }
}

/// What `/robots.txt` says. A shortener's redirects lead elsewhere, so crawlers are kept out
/// unless the host says otherwise.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum Robots {
    #[default]
    Disallow,
    Allow,
    /// The host's own text, at most [`ROBOTS_MAX`] bytes.
    Custom(String),
}

impl Robots {
    /// `disallow`, `allow` or `custom`: the word the CLI, the API and the form use.
    pub fn word(&self) -> &'static str {
        match self {
            Robots::Disallow => "disallow",
            Robots::Allow => "allow",
            Robots::Custom(_) => "custom",
        }
    }

    /// The body of `/robots.txt`.
    pub fn body(&self) -> &str {
        match self {
            Robots::Disallow => "User-agent: *\nDisallow: /\n",
            Robots::Allow => "User-agent: *\nDisallow:\n",
            Robots::Custom(text) => text,
        }
    }

    /// As stored: 0 disallow, 1 allow, 2 custom (with its text beside it).
    pub fn code(&self) -> i64 {
        match self {
            Robots::Disallow => 0,
            Robots::Allow => 1,
            Robots::Custom(_) => 2,
        }
    }

    /// The text stored beside the code: only a custom policy has one.
    pub fn text(&self) -> Option<&str> {
        match self {
            Robots::Custom(text) => Some(text),
            _ => None,
        }
    }

    /// Read back from its [`Robots::word`] and text, as a record carries them: anything else
    /// is the default.
    pub fn named(word: Option<&str>, text: Option<String>) -> Robots {
        match word {
            Some("allow") => Robots::Allow,
            Some("custom") => Robots::stored(2, text),
            _ => Robots::Disallow,
        }
    }

    /// Read back from what [`Robots::code`] and [`Robots::text`] stored; anything else (a
    /// custom policy without its text, an unknown code) is the default, which keeps crawlers
    /// out.
    pub fn stored(code: i64, text: Option<String>) -> Robots {
        match (code, text) {
            (1, _) => Robots::Allow,
            (2, Some(text)) if !text.is_empty() => Robots::Custom(text),
            _ => Robots::Disallow,
        }
    }
}

/// Checks a custom `robots.txt`: not empty, at most [`ROBOTS_MAX`] bytes, no control
/// characters but line ends and tabs.
pub fn validate_robots_txt(text: &str) -> Result<(), String> {
    if text.trim().is_empty() {
        return Err("must not be empty (choose allow or disallow instead)".into());
    }
    if text.len() > ROBOTS_MAX {
        return Err(format!("must be at most {ROBOTS_MAX} bytes"));
    }
    if text
        .chars()
        .any(|c| c.is_control() && !matches!(c, '\n' | '\r' | '\t'))
    {
        return Err("must not contain control characters other than line ends and tabs".into());
    }
    Ok(())
}

/// A change to a domain's settings as typed or sent on the wire: only the fields present
/// change, and an empty URL clears its fallback.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DomainInput {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub root_url: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub unknown_url: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub expired_url: Option<String>,
    /// `allow`, `disallow` or `custom` (then with `robots_txt`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub robots: Option<String>,
    /// A custom `robots.txt`; given alone, it makes the policy custom.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub robots_txt: Option<String>,
}

impl DomainInput {
    /// The input that sets every field to what `settings` hold (the app's form starts here).
    pub fn from_settings(settings: &HostSettings) -> DomainInput {
        let url = |u: &Option<String>| Some(u.clone().unwrap_or_default());
        DomainInput {
            root_url: url(&settings.root_url),
            unknown_url: url(&settings.unknown_url),
            expired_url: url(&settings.expired_url),
            robots: Some(settings.robots.word().to_owned()),
            robots_txt: settings.robots.text().map(str::to_owned),
        }
    }
}

/// A checked [`DomainInput`]: `Some(None)` clears a fallback.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DomainPatch {
    pub root_url: Option<Option<String>>,
    pub unknown_url: Option<Option<String>>,
    pub expired_url: Option<Option<String>>,
    pub robots: Option<Robots>,
}

impl DomainPatch {
    /// `settings` with this change made.
    pub fn apply(self, mut settings: HostSettings) -> HostSettings {
        if let Some(url) = self.root_url {
            settings.root_url = url;
        }
        if let Some(url) = self.unknown_url {
            settings.unknown_url = url;
        }
        if let Some(url) = self.expired_url {
            settings.expired_url = url;
        }
        if let Some(robots) = self.robots {
            settings.robots = robots;
        }
        settings
    }
}

/// A fallback URL: empty clears it, anything else is held to a link URL's rules.
fn fallback(
    errors: &mut FieldErrors,
    field: &str,
    value: Option<&String>,
) -> Option<Option<String>> {
    let url = value?.trim();
    if url.is_empty() {
        return Some(None);
    }
    match validate_url(url) {
        Ok(()) => Some(Some(url.to_owned())),
        Err(message) => {
            errors.add(field, message);
            None
        }
    }
}

/// Checks a change to a domain's settings, naming every bad field.
pub fn validate_domain_input(input: &DomainInput) -> Result<DomainPatch, FieldErrors> {
    let mut errors = FieldErrors::default();
    let mut patch = DomainPatch {
        root_url: fallback(&mut errors, "root_url", input.root_url.as_ref()),
        unknown_url: fallback(&mut errors, "unknown_url", input.unknown_url.as_ref()),
        expired_url: fallback(&mut errors, "expired_url", input.expired_url.as_ref()),
        robots: None,
    };
    let text = input.robots_txt.as_deref();
    let custom = |errors: &mut FieldErrors| match text {
        Some(text) => match validate_robots_txt(text) {
            Ok(()) => Some(Robots::Custom(text.to_owned())),
            Err(message) => {
                errors.add("robots_txt", message);
                None
            }
        },
        None => {
            errors.add("robots_txt", "is required when robots is custom");
            None
        }
    };
    patch.robots = match input.robots.as_deref().map(str::trim) {
        None if text.is_some() => custom(&mut errors),
        None => None,
        Some(word) => match word.to_ascii_lowercase().as_str() {
            "custom" => custom(&mut errors),
            chosen @ ("allow" | "disallow") => {
                if text.is_some_and(|t| !t.is_empty()) {
                    errors.add("robots_txt", "goes only with robots = custom");
                }
                Some(if chosen == "allow" {
                    Robots::Allow
                } else {
                    Robots::Disallow
                })
            }
            _ => {
                errors.add("robots", "must be allow, disallow or custom");
                None
            }
        },
    };
    errors.into_result(patch)
}

/// Why a link turns its visitor away before any destination of its own.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TurnedAway {
    /// Past its date or its click limit.
    Expired,
    Disabled,
}

/// What a visit to a link comes to before a destination is chosen, in the order the checks
/// run: expiry first (an expired link asks no password), then the password, then disabled.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Gate {
    Away(TurnedAway),
    /// The password form, until the visitor gives the password (`unlocked`).
    Password,
    /// On to the link's destination.
    Through,
}

/// The gate of a visit to a link that is `expired`, protected by a `password` (which the
/// visitor has `unlocked` or not) and `disabled`.
pub fn gate(expired: bool, password: bool, unlocked: bool, disabled: bool) -> Gate {
    if expired {
        Gate::Away(TurnedAway::Expired)
    } else if password && !unlocked {
        Gate::Password
    } else if disabled {
        Gate::Away(TurnedAway::Disabled)
    } else {
        Gate::Through
    }
}

/// Where a visitor a link turned away is sent: an expired link's own expiration URL first, then
/// the host's `expired_url`; `None`: linkdeck's own page for `why`.
pub fn turned_away_to<'a>(
    why: TurnedAway,
    expiration_url: Option<&'a str>,
    host: &'a HostSettings,
) -> Option<&'a str> {
    match why {
        TurnedAway::Expired => expiration_url.or(host.expired_url.as_deref()),
        TurnedAway::Disabled => host.expired_url.as_deref(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn input(f: impl FnOnce(&mut DomainInput)) -> DomainInput {
        let mut i = DomainInput::default();
        f(&mut i);
        i
    }

    #[test]
    fn urls_follow_link_rules_and_empty_clears() {
        let patch = validate_domain_input(&input(|i| {
            i.root_url = Some(" https://home.example/ ".into());
            i.unknown_url = Some(String::new());
        }))
        .unwrap();
        assert_eq!(patch.root_url, Some(Some("https://home.example/".into())));
        assert_eq!(patch.unknown_url, Some(None));
        assert_eq!(patch.expired_url, None);

        let errors = validate_domain_input(&input(|i| {
            i.root_url = Some("ftp://x.example".into());
            i.expired_url = Some("not a url".into());
            i.robots = Some("maybe".into());
        }))
        .unwrap_err();
        let named: Vec<_> = errors.iter().map(|(f, _)| f.to_owned()).collect();
        assert_eq!(named, ["expired_url", "robots", "root_url"]);
    }

    #[test]
    fn robots_choices() {
        let robots = |f: fn(&mut DomainInput)| validate_domain_input(&input(f)).map(|p| p.robots);
        assert_eq!(
            robots(|i| i.robots = Some("Allow".into())),
            Ok(Some(Robots::Allow))
        );
        assert_eq!(
            robots(|i| i.robots_txt = Some("User-agent: *\nDisallow: /x\n".into())),
            Ok(Some(Robots::Custom("User-agent: *\nDisallow: /x\n".into())))
        );
        assert!(robots(|i| i.robots = Some("custom".into())).is_err());
        assert!(
            robots(|i| {
                i.robots = Some("allow".into());
                i.robots_txt = Some("x".into());
            })
            .is_err()
        );
        assert!(robots(|i| i.robots_txt = Some("a\u{0}b".into())).is_err());
        assert!(robots(|i| i.robots_txt = Some("a".repeat(ROBOTS_MAX + 1))).is_err());
    }

    #[test]
    fn stored_robots_read_back() {
        for robots in [
            Robots::Disallow,
            Robots::Allow,
            Robots::Custom("User-agent: *\n".into()),
        ] {
            let text = robots.text().map(str::to_owned);
            assert_eq!(Robots::stored(robots.code(), text), robots);
        }
        assert_eq!(Robots::stored(2, None), Robots::Disallow);
        assert_eq!(Robots::stored(9, None), Robots::Disallow);
    }

    /// The order of evaluation of a visit, and where each refusal sends the visitor, with and
    /// without the host's fallback and the link's own expiration URL. A case's letters say what
    /// holds: `E`xpired, `P`assword, `U`nlocked (the password given), `D`isabled, `O`wn
    /// expiration URL, `H`ost fallback set.
    #[test]
    fn order_of_evaluation() {
        use Gate::*;
        use TurnedAway::*;
        const OWN: &str = "https://own.example/after";
        const HOST: &str = "https://host.example/gone";
        let cases: &[(&str, Gate, Option<&str>)] = &[
            ("H", Through, None),
            ("E", Away(Expired), None),
            ("EH", Away(Expired), Some(HOST)),
            ("EOH", Away(Expired), Some(OWN)),
            // Expiry comes before the password, and before disabled.
            ("EPDH", Away(Expired), Some(HOST)),
            ("PH", Password, None),
            // The password comes before disabled: a disabled link asks for it first.
            ("PDH", Password, None),
            ("PUDH", Away(Disabled), Some(HOST)),
            ("D", Away(Disabled), None),
            // A disabled link's own expiration URL is for its expiry only.
            ("DO", Away(Disabled), None),
            ("DOH", Away(Disabled), Some(HOST)),
            ("PUOH", Through, None),
        ];
        for &(case, want, to) in cases {
            let has = |c: char| case.contains(c);
            let host = HostSettings {
                expired_url: has('H').then(|| HOST.to_owned()),
                ..HostSettings::default()
            };
            let got = gate(has('E'), has('P'), has('U'), has('D'));
            assert_eq!(got, want, "{case}: gate");
            let sent = match got {
                Away(why) => turned_away_to(why, has('O').then_some(OWN), &host),
                _ => None,
            };
            assert_eq!(sent, to, "{case}: sent to");
        }
    }
}
