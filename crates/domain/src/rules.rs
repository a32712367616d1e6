//! A link's redirect rules: conditions on the visit, each leading to a URL,
//! evaluated in the order the operator sets, the first match winning and the link's own URL the
//! default. One home for the rule model, its bounds, its text form (the CLI's `--rule`, the CSV
//! column) and its matching, as pure functions: the server hands [`first_match`] what the visit
//! brought and gets back the rule that sent it.
//!
//! The seed's targeting (`target_type` with geo, platform or rotation, as phpShort has them)
//! stays where it is: these rules are asked first, then that targeting, then the link's URL.

use std::fmt;
use std::net::IpAddr;

use ipnet::IpNet;
use jiff::Timestamp;
use jiff::civil::Weekday;
use jiff::tz::TimeZone;
use serde::{Deserialize, Serialize};

use super::{FieldErrors, Platform, country_by_code, validate_url};

/// Rules a link has at most.
pub const RULES_MAX: usize = 32;
/// Languages, query values, browser names: characters at most.
pub const RULE_TEXT_MAX: usize = 64;
/// Languages one rule names at most.
pub const RULE_LANGUAGES_MAX: usize = 16;
/// Arms of an A/B split at most.
pub const SPLIT_ARMS_MAX: usize = 10;
/// The largest weight of one arm.
pub const SPLIT_WEIGHT_MAX: u32 = 10_000;

/// The field every rule error is named under: `rules.2.cidr`.
pub const RULES_FIELD: &str = "rules";

/// Every kind of rule, as the text form names it, with an example of its arguments.
pub const RULE_KINDS: [(&str, &str); 10] = [
    ("language", "fr,de-CH"),
    ("after", "2030-01-01T00:00Z"),
    ("before", "2030-01-01T00:00Z"),
    ("schedule", "mon,fri 09-17 Europe/Paris"),
    ("query", "utm_source=news"),
    ("cidr", "10.0.0.0/8"),
    ("browser", "Firefox"),
    ("country", "DE"),
    ("platform", "iOS"),
    ("split", "30*https://a,70*https://b until 2030-02-01T00:00Z"),
];

/// One rule: when the visit meets `when`, it goes to `url`. For a split, `url` is the winner,
/// which takes every visit once the split has ended.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Rule {
    #[serde(flatten)]
    pub when: Condition,
    pub url: String,
}

/// What a rule asks of a visit.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Condition {
    /// One of the visitor's `Accept-Language` ranges (q > 0) is one of these tags, or a subtag
    /// of one (`de` takes `de-CH`).
    Language { languages: Vec<String> },
    /// From this instant on.
    After { at: Timestamp },
    /// Until this instant (excluded).
    Before { at: Timestamp },
    /// On these days (none: every day), from `from` to `to` o'clock (`from` included, `to`
    /// excluded, wrapping past midnight when `to` ≤ `from`; 0–0 is the whole day), in `tz`.
    Schedule {
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        days: Vec<Day>,
        from: u8,
        to: u8,
        tz: String,
    },
    /// The query has `name`, equal to `value` when one is given.
    Query {
        name: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        value: Option<String>,
    },
    /// The visitor's address is in this range.
    Cidr { cidr: IpNet },
    /// The browser, by the name the traffic views show (`Firefox`), without case.
    Browser { browser: String },
    /// The visitor's country (ISO 3166-1 alpha-2).
    Country { country: String },
    /// The visitor's platform, by [`Platform`]'s names.
    Platform { platform: String },
    /// Always matches: an A/B test sending each visit to an arm by weight, until `until`,
    /// after which the rule's URL (the winner) takes all.
    Split {
        arms: Vec<Arm>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        until: Option<Timestamp>,
    },
}

/// One arm of a split.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Arm {
    pub url: String,
    pub weight: u32,
}

/// A day of the week, as rules name it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Day {
    Mon,
    Tue,
    Wed,
    Thu,
    Fri,
    Sat,
    Sun,
}

impl Day {
    pub const ALL: [Day; 7] = [
        Day::Mon,
        Day::Tue,
        Day::Wed,
        Day::Thu,
        Day::Fri,
        Day::Sat,
        Day::Sun,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Day::Mon => "mon",
            Day::Tue => "tue",
            Day::Wed => "wed",
            Day::Thu => "thu",
            Day::Fri => "fri",
            Day::Sat => "sat",
            Day::Sun => "sun",
        }
    }

    fn parse(s: &str) -> Option<Day> {
        let s = s.trim().to_ascii_lowercase();
        Day::ALL.into_iter().find(|d| s.starts_with(d.name()))
    }

    fn of(w: Weekday) -> Day {
        Day::ALL[usize::from(w.to_monday_zero_offset().unsigned_abs())]
    }
}

impl Condition {
    /// The kind's name, as the text form and the JSON's `kind` say it.
    pub fn kind(&self) -> &'static str {
        match self {
            Condition::Language { .. } => "language",
            Condition::After { .. } => "after",
            Condition::Before { .. } => "before",
            Condition::Schedule { .. } => "schedule",
            Condition::Query { .. } => "query",
            Condition::Cidr { .. } => "cidr",
            Condition::Browser { .. } => "browser",
            Condition::Country { .. } => "country",
            Condition::Platform { .. } => "platform",
            Condition::Split { .. } => "split",
        }
    }
}

/// What a visit brings that rules can ask about. The server fills it from the request; nothing
/// here is trusted beyond being compared.
#[derive(Debug, Clone, Copy)]
pub struct Visitor<'a> {
    pub now: Timestamp,
    pub accept_language: Option<&'a str>,
    /// The raw query string, without `?`.
    pub query: Option<&'a str>,
    pub address: Option<IpAddr>,
    pub browser: Option<&'a str>,
    pub country: Option<&'a str>,
    pub platform: Option<Platform>,
    /// A random number for splits.
    pub roll: u64,
}

/// The rule that sends a visit, and where: its index and URL. `None`: no rule matched.
pub fn first_match<'r>(rules: &'r [Rule], visitor: &Visitor<'_>) -> Option<(usize, &'r str)> {
    rules
        .iter()
        .enumerate()
        .find_map(|(i, rule)| Some((i, rule_target(rule, visitor)?)))
}

/// Where `rule` sends `visitor`, if it matches.
fn rule_target<'r>(rule: &'r Rule, v: &Visitor<'_>) -> Option<&'r str> {
    let url = rule.url.as_str();
    let hit = match &rule.when {
        Condition::Language { languages } => v
            .accept_language
            .is_some_and(|header| accepts(header, languages)),
        Condition::After { at } => v.now >= *at,
        Condition::Before { at } => v.now < *at,
        Condition::Schedule { days, from, to, tz } => in_schedule(days, *from, *to, tz, v.now),
        Condition::Query { name, value } => has_param(v.query, name, value.as_deref()),
        Condition::Cidr { cidr } => v.address.is_some_and(|a| cidr.contains(&a)),
        Condition::Browser { browser } => {
            v.browser.is_some_and(|b| b.eq_ignore_ascii_case(browser))
        }
        Condition::Country { country } => {
            v.country.is_some_and(|c| c.eq_ignore_ascii_case(country))
        }
        Condition::Platform { platform } => v
            .platform
            .is_some_and(|p| p.name().eq_ignore_ascii_case(platform)),
        Condition::Split { arms, until } => {
            return Some(match until {
                Some(end) if v.now >= *end => url,
                _ => pick(arms, v.roll).unwrap_or(url),
            });
        }
    };
    hit.then_some(url)
}

/// Whether an `Accept-Language` header accepts one of `languages`: a range equal to a tag, or
/// a subtag of it, with a q above 0.
fn accepts(header: &str, languages: &[String]) -> bool {
    header.split(',').take(32).any(|part| {
        let mut pieces = part.split(';');
        let range = pieces.next().unwrap_or("").trim();
        let refused = pieces.any(|p| {
            p.trim()
                .strip_prefix("q=")
                .and_then(|q| q.trim().parse::<f32>().ok())
                .is_some_and(|q| q <= 0.0)
        });
        !refused
            && !range.is_empty()
            && languages.iter().any(|tag| {
                range.eq_ignore_ascii_case(tag)
                    || (range.len() > tag.len()
                        && range.as_bytes()[tag.len()] == b'-'
                        && range[..tag.len()].eq_ignore_ascii_case(tag))
            })
    })
}

fn in_schedule(days: &[Day], from: u8, to: u8, tz: &str, now: Timestamp) -> bool {
    let Ok(zone) = TimeZone::get(tz) else {
        return false;
    };
    let local = now.to_zoned(zone);
    let hour = u8::try_from(local.hour()).unwrap_or(0);
    let day = Day::of(local.weekday());
    let in_hours = match from.cmp(&to) {
        std::cmp::Ordering::Equal => true,
        std::cmp::Ordering::Less => (from..to).contains(&hour),
        // Past midnight: the hours after `to` belong to the previous day's window.
        std::cmp::Ordering::Greater => hour >= from || hour < to,
    };
    let window_day = if from > to && hour < to {
        Day::of(local.weekday().wrapping_sub(1))
    } else {
        day
    };
    in_hours && (days.is_empty() || days.contains(&window_day))
}

fn has_param(query: Option<&str>, name: &str, value: Option<&str>) -> bool {
    query.is_some_and(|q| {
        url::form_urlencoded::parse(q.as_bytes())
            .take(100)
            .any(|(k, v)| k == name && value.is_none_or(|want| v == want))
    })
}

/// The arm `roll` lands on, by weight; `None` when no arm has weight.
fn pick(arms: &[Arm], roll: u64) -> Option<&str> {
    let total: u64 = arms.iter().map(|a| u64::from(a.weight)).sum();
    if total == 0 {
        return None;
    }
    let mut left = roll % total;
    arms.iter().find_map(|a| {
        let w = u64::from(a.weight);
        if left < w {
            Some(a.url.as_str())
        } else {
            left -= w;
            None
        }
    })
}

/// Every URL rules can send a visitor to.
pub fn rule_urls(rules: &[Rule]) -> impl Iterator<Item = &str> {
    rules.iter().flat_map(|r| {
        let arms: &[Arm] = match &r.when {
            Condition::Split { arms, .. } => arms,
            _ => &[],
        };
        std::iter::once(r.url.as_str()).chain(arms.iter().map(|a| a.url.as_str()))
    })
}

/// Checks rules as received (JSON, or parsed from text) and puts them in their canonical form
/// (country codes upper-case, platform names canonical, texts trimmed). Errors name the field:
/// `rules.2.cidr`, `rules.0.url`, `rules` for their number.
pub fn validate_rules(rules: Vec<Rule>, errors: &mut FieldErrors) -> Vec<Rule> {
    if rules.len() > RULES_MAX {
        errors.add(RULES_FIELD, format!("at most {RULES_MAX} rules"));
        return Vec::new();
    }
    let mut out = Vec::with_capacity(rules.len());
    for (i, mut rule) in rules.into_iter().enumerate() {
        let field = |name: &str| format!("{RULES_FIELD}.{i}.{name}");
        let before = errors.total();
        rule.url = rule.url.trim().to_owned();
        if let Err(message) = validate_url(&rule.url) {
            errors.add(&field("url"), message);
        }
        let text = |t: &mut String, name: &str, errors: &mut FieldErrors| {
            *t = t.trim().to_owned();
            if t.is_empty() {
                errors.add(&field(name), "is required");
            } else if t.chars().count() > RULE_TEXT_MAX || t.chars().any(char::is_control) {
                errors.add(
                    &field(name),
                    format!("must be 1 to {RULE_TEXT_MAX} printable characters"),
                );
            }
        };
        match &mut rule.when {
            Condition::Language { languages } => {
                if languages.is_empty() || languages.len() > RULE_LANGUAGES_MAX {
                    errors.add(
                        &field("languages"),
                        format!("must name 1 to {RULE_LANGUAGES_MAX} languages"),
                    );
                }
                for l in languages.iter_mut() {
                    *l = l.trim().to_ascii_lowercase();
                    let ok = !l.is_empty()
                        && l.len() <= RULE_TEXT_MAX
                        && l.split('-').all(|p| {
                            (1..=8).contains(&p.len())
                                && p.bytes().all(|b| b.is_ascii_alphanumeric())
                        });
                    if !ok {
                        errors.add(
                            &field("languages"),
                            format!("{l:?} is not a language tag (en, de-CH)"),
                        );
                    }
                }
            }
            Condition::After { .. } | Condition::Before { .. } => {}
            Condition::Schedule { days, from, to, tz } => {
                if *from > 23 {
                    errors.add(&field("from"), "must be an hour from 0 to 23");
                }
                if *to > 24 {
                    errors.add(&field("to"), "must be an hour from 0 to 24");
                }
                if *to == 24 {
                    *to = 0;
                }
                days.sort_by_key(|d| *d as u8);
                days.dedup();
                *tz = tz.trim().to_owned();
                if tz.len() > RULE_TEXT_MAX || TimeZone::get(tz).is_err() {
                    errors.add(&field("tz"), "must be a time zone (Europe/Paris, UTC)");
                }
            }
            Condition::Query { name, value } => {
                text(name, "name", errors);
                if let Some(v) = value
                    && (v.chars().count() > RULE_TEXT_MAX || v.chars().any(char::is_control))
                {
                    errors.add(
                        &field("value"),
                        format!("must be at most {RULE_TEXT_MAX} printable characters"),
                    );
                }
            }
            Condition::Cidr { cidr } => *cidr = cidr.trunc(),
            Condition::Browser { browser } => text(browser, "browser", errors),
            Condition::Country { country } => match country_by_code(country.trim()) {
                Some(c) => *country = c.code.to_owned(),
                None => errors.add(
                    &field("country"),
                    "must be an ISO 3166-1 alpha-2 country code",
                ),
            },
            Condition::Platform { platform } => match Platform::parse(platform) {
                Some(p) => *platform = p.name().to_owned(),
                None => {
                    let names: Vec<&str> = Platform::ALL.iter().map(|p| p.name()).collect();
                    errors.add(
                        &field("platform"),
                        format!("must be one of {}", names.join(", ")),
                    );
                }
            },
            Condition::Split { arms, .. } => {
                if arms.is_empty() || arms.len() > SPLIT_ARMS_MAX {
                    errors.add(
                        &field("arms"),
                        format!("must have 1 to {SPLIT_ARMS_MAX} arms"),
                    );
                }
                if arms.iter().all(|a| a.weight == 0) {
                    errors.add(&field("arms"), "need a weight above 0");
                }
                for (j, arm) in arms.iter_mut().enumerate() {
                    arm.url = arm.url.trim().to_owned();
                    if let Err(message) = validate_url(&arm.url) {
                        errors.add(&field(&format!("arms.{j}.url")), message);
                    }
                    if arm.weight > SPLIT_WEIGHT_MAX {
                        errors.add(
                            &field(&format!("arms.{j}.weight")),
                            format!("must be at most {SPLIT_WEIGHT_MAX}"),
                        );
                    }
                }
            }
        }
        if errors.total() == before {
            out.push(rule);
        }
    }
    out
}

/// The rule's name in the visit log and the traffic views: `rule 2 language`.
pub fn rule_label(index: usize, rule: &Rule) -> String {
    format!("rule {} {}", index + 1, rule.when.kind())
}

impl Condition {
    /// The arguments of the text form, between the kind and `=>`: `fr,de-CH`,
    /// `mon,fri 09-17 Europe/Paris`, `30*https://a,70*https://b until …`.
    pub fn args(&self) -> String {
        match self {
            Condition::Language { languages } => languages.join(","),
            Condition::After { at } | Condition::Before { at } => at.to_string(),
            Condition::Schedule { days, from, to, tz } => {
                let hours = format!("{from:02}-{to:02} {tz}");
                if days.is_empty() {
                    hours
                } else {
                    let names: Vec<&str> = days.iter().map(|d| d.name()).collect();
                    format!("{} {hours}", names.join(","))
                }
            }
            Condition::Query { name, value } => match value {
                Some(v) => format!("{name}={v}"),
                None => name.clone(),
            },
            Condition::Cidr { cidr } => cidr.to_string(),
            Condition::Browser { browser } => browser.clone(),
            Condition::Country { country } => country.clone(),
            Condition::Platform { platform } => platform.clone(),
            Condition::Split { arms, until } => {
                let arms: Vec<String> = arms
                    .iter()
                    .map(|a| format!("{}*{}", a.weight, a.url))
                    .collect();
                match until {
                    Some(until) => format!("{} until {until}", arms.join(",")),
                    None => arms.join(","),
                }
            }
        }
    }
}

impl fmt::Display for Rule {
    /// The text form [`parse_rule`] reads: `KIND ARGS => URL`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} {} => {}",
            self.when.kind(),
            self.when.args(),
            self.url
        )
    }
}

/// Reads a rule's text form, as the CLI's `--rule` and the CSV's `rules` column take it:
///
/// - `language fr,de-CH => URL`
/// - `after 2030-01-01T00:00Z => URL`, `before … => URL`
/// - `schedule mon,tue,fri 09-17 Europe/Paris => URL` (days optional)
/// - `query utm_source => URL`, `query utm_source=news => URL`
/// - `cidr 10.0.0.0/8 => URL`, `browser Firefox => URL`, `country DE => URL`,
///   `platform iOS => URL`
/// - `split 30*https://a.example,70*https://b.example until 2030-02-01T00:00Z => WINNER`
///
/// The result is not yet validated beyond its shape: pass it to [`validate_rules`].
pub fn parse_rule(text: &str) -> Result<Rule, String> {
    let (when, url) = text
        .rsplit_once("=>")
        .ok_or("must be KIND ARGS => URL (language fr => https://…)")?;
    let url = url.trim().to_owned();
    let when = when.trim();
    let (kind, args) = when.split_once(char::is_whitespace).unwrap_or((when, ""));
    let args = args.trim();
    let instant = |s: &str| -> Result<Timestamp, String> {
        s.trim()
            .parse::<Timestamp>()
            .map_err(|_| format!("{s:?} is not an instant (2030-01-01T00:00Z)"))
    };
    let when = match kind.to_ascii_lowercase().as_str() {
        "language" | "lang" => Condition::Language {
            languages: args.split(',').map(|l| l.trim().to_owned()).collect(),
        },
        "after" => Condition::After { at: instant(args)? },
        "before" => Condition::Before { at: instant(args)? },
        "schedule" => {
            let words: Vec<&str> = args.split_whitespace().collect();
            let (days, hours, tz) = match words.as_slice() {
                [hours, tz] => (None, *hours, *tz),
                [days, hours, tz] => (Some(*days), *hours, *tz),
                _ => return Err("schedule takes [DAYS] HH-HH ZONE (mon,fri 09-17 UTC)".into()),
            };
            let days = match days {
                None => Vec::new(),
                Some(d) => d
                    .split(',')
                    .map(|d| Day::parse(d).ok_or_else(|| format!("{d:?} is not a day (mon…sun)")))
                    .collect::<Result<_, _>>()?,
            };
            let (from, to) = hours
                .split_once('-')
                .and_then(|(a, b)| Some((a.parse().ok()?, b.parse().ok()?)))
                .ok_or_else(|| format!("{hours:?} is not HH-HH (09-17)"))?;
            Condition::Schedule {
                days,
                from,
                to,
                tz: tz.to_owned(),
            }
        }
        "query" => match args.split_once('=') {
            Some((name, value)) => Condition::Query {
                name: name.to_owned(),
                value: Some(value.to_owned()),
            },
            None => Condition::Query {
                name: args.to_owned(),
                value: None,
            },
        },
        "cidr" => Condition::Cidr {
            cidr: args
                .parse::<IpNet>()
                .or_else(|_| args.parse::<IpAddr>().map(IpNet::from))
                .map_err(|_| format!("{args:?} is not an address range (10.0.0.0/8)"))?,
        },
        "browser" => Condition::Browser {
            browser: args.to_owned(),
        },
        "country" => Condition::Country {
            country: args.to_owned(),
        },
        "platform" => Condition::Platform {
            platform: args.to_owned(),
        },
        "split" => {
            let (arms, until) = match args.split_once(" until ") {
                Some((arms, until)) => (arms, Some(instant(until)?)),
                None => (args, None),
            };
            let arms = arms
                .split(',')
                .map(|arm| {
                    let (w, u) = arm
                        .split_once('*')
                        .ok_or_else(|| format!("{arm:?} is not WEIGHT*URL"))?;
                    Ok(Arm {
                        weight: w
                            .trim()
                            .parse()
                            .map_err(|_| format!("{w:?} is not a weight"))?,
                        url: u.trim().to_owned(),
                    })
                })
                .collect::<Result<_, String>>()?;
            Condition::Split { arms, until }
        }
        other => {
            let kinds: Vec<&str> = RULE_KINDS.iter().map(|(kind, _)| *kind).collect();
            return Err(format!(
                "{other:?} is not a rule kind ({})",
                kinds.join(", ")
            ));
        }
    };
    Ok(Rule { when, url })
}

/// Reads rules in their text form, one per entry, and validates them; errors name
/// `rules.{i}` (the shape) or `rules.{i}.{field}`.
pub fn parse_rules<S: AsRef<str>>(texts: &[S], errors: &mut FieldErrors) -> Vec<Rule> {
    let mut parsed = Vec::new();
    let mut shape_ok = true;
    for (i, text) in texts.iter().enumerate() {
        match parse_rule(text.as_ref()) {
            Ok(rule) => parsed.push(rule),
            Err(message) => {
                errors.add(&format!("{RULES_FIELD}.{i}"), message);
                shape_ok = false;
            }
        }
    }
    if !shape_ok {
        return Vec::new();
    }
    validate_rules(parsed, errors)
}

#[cfg(test)]
mod tests;
