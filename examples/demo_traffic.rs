//! Writes about 90 days of plausible traffic into `assets/demo.json`, so a new user who imports
//! the demo sees charts at once: campaign links that rise and peak, monthly newsletters that
//! spike and fade, steady support pages, mobile-heavy social links, desktop-heavy docs; weekdays
//! busier than weekends; countries, platforms, browsers, referrers and languages that go
//! together. Deterministic: the same file every run.
//!
//! `cargo run --example demo_traffic` (replaces the traffic already in the file). The file says
//! `traffic_as_of`, so `linkdeck import` moves the traffic forward to end near the day of the
//! import.

use std::collections::BTreeMap;

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use serde_json::{Value, json};

/// The end of the generated traffic (exclusive), and the file's `traffic_as_of`.
const AS_OF: &str = "2026-11-23T00:00:00Z";
const DAYS: i64 = 91;

/// Picks from `(value, weight)` pairs.
fn pick<'a>(rng: &mut StdRng, choices: &[(&'a str, u32)]) -> &'a str {
    let total: u32 = choices.iter().map(|c| c.1).sum();
    let mut at = rng.random_range(0..total);
    for (value, weight) in choices {
        if at < *weight {
            return value;
        }
        at -= weight;
    }
    choices[0].0
}

/// How a link's traffic moves over the 91 days: clicks expected on day `d` (0 = oldest).
#[derive(Clone, Copy)]
enum Shape {
    /// About `per_day` every day.
    Steady(f64),
    /// Rises from `start` to a peak `per_day` at day `peak`, then settles at a third.
    Campaign {
        start: i64,
        peak: i64,
        per_day: f64,
    },
    /// A burst on day `on` that halves every two days.
    Burst {
        on: i64,
        size: f64,
    },
    /// Traffic until day `until`, none after (a link since disabled or expired).
    Until {
        until: i64,
        per_day: f64,
    },
    Nothing,
}

impl Shape {
    fn expected(self, d: i64) -> f64 {
        match self {
            Shape::Steady(n) => n,
            Shape::Campaign {
                start,
                peak,
                per_day,
            } => {
                if d < start {
                    0.0
                } else if d <= peak {
                    per_day * ((d - start + 1) as f64 / (peak - start + 1) as f64).powf(1.6)
                } else {
                    per_day * (0.33 + 0.67 * 0.85f64.powf((d - peak) as f64))
                }
            }
            Shape::Burst { on, size } if d >= on => size * 0.5f64.powf((d - on) as f64 / 2.0),
            Shape::Burst { .. } => 0.0,
            Shape::Until { until, per_day } if d < until => per_day,
            Shape::Until { .. } | Shape::Nothing => 0.0,
        }
    }
}

/// Who a link reaches.
#[derive(Clone, Copy)]
enum Audience {
    Mobile,
    Desktop,
    Mixed,
}

struct Profile {
    shape: Shape,
    audience: Audience,
    referrers: &'static [(&'static str, u32)],
    countries: &'static [(&'static str, u32)],
}

const SHOP: &[(&str, u32)] = &[
    ("US", 34),
    ("DE", 14),
    ("GB", 12),
    ("FR", 8),
    ("NL", 6),
    ("CA", 6),
    ("AU", 4),
    ("JP", 4),
    ("BR", 3),
    ("ES", 3),
    ("IT", 3),
    ("", 3),
];
const BLOG: &[(&str, u32)] = &[
    ("US", 26),
    ("DE", 18),
    ("GB", 10),
    ("IN", 9),
    ("FR", 6),
    ("NL", 6),
    ("CA", 5),
    ("BR", 4),
    ("PL", 4),
    ("SE", 3),
    ("", 4),
];
const CONF: &[(&str, u32)] = &[
    ("DE", 30),
    ("NL", 12),
    ("FR", 10),
    ("GB", 10),
    ("US", 10),
    ("PL", 6),
    ("AT", 6),
    ("CH", 5),
    ("SE", 4),
    ("", 3),
];
const DIRECT: &str = "";
const SEARCH: &[(&str, u32)] = &[
    ("www.google.com", 50),
    (DIRECT, 30),
    ("duckduckgo.com", 8),
    ("www.bing.com", 7),
    ("news.ycombinator.com", 5),
];
const INSTAGRAM: &[(&str, u32)] = &[
    ("l.instagram.com", 70),
    ("www.instagram.com", 20),
    (DIRECT, 10),
];
const TIKTOK: &[(&str, u32)] = &[("www.tiktok.com", 80), (DIRECT, 20)];
const MAIL: &[(&str, u32)] = &[
    (DIRECT, 55),
    ("mail.google.com", 25),
    ("outlook.live.com", 12),
    ("www.linkedin.com", 8),
];
const SOCIAL: &[(&str, u32)] = &[
    ("social.example", 45),
    ("t.co", 25),
    (DIRECT, 15),
    ("www.reddit.com", 10),
    ("news.ycombinator.com", 5),
];
const EVENT: &[(&str, u32)] = &[
    ("conf.example.dev", 35),
    ("t.co", 20),
    ("www.linkedin.com", 20),
    (DIRECT, 20),
    ("social.example", 5),
];
const SUPPORT: &[(&str, u32)] = &[
    ("help.example.com", 40),
    ("www.google.com", 30),
    (DIRECT, 25),
    ("shop.example.com", 5),
];

fn profile(alias: &str, space: Option<&str>, disabled: bool) -> Profile {
    let p = |shape, audience, referrers, countries| Profile {
        shape,
        audience,
        referrers,
        countries,
    };
    if disabled {
        return p(
            Shape::Until {
                until: 30,
                per_day: 4.0,
            },
            Audience::Mixed,
            SEARCH,
            SHOP,
        );
    }
    match (alias, space) {
        ("spring", _) => p(
            Shape::Campaign {
                start: 40,
                peak: 70,
                per_day: 55.0,
            },
            Audience::Mixed,
            SEARCH,
            SHOP,
        ),
        ("spring-ig", _) => p(
            Shape::Campaign {
                start: 45,
                peak: 70,
                per_day: 40.0,
            },
            Audience::Mobile,
            INSTAGRAM,
            SHOP,
        ),
        ("spring-tt", _) => p(
            Shape::Campaign {
                start: 55,
                peak: 72,
                per_day: 30.0,
            },
            Audience::Mobile,
            TIKTOK,
            SHOP,
        ),
        ("lookbook", _) => p(
            Shape::Campaign {
                start: 50,
                peak: 74,
                per_day: 14.0,
            },
            Audience::Mixed,
            INSTAGRAM,
            SHOP,
        ),
        ("giveaway", _) => p(
            Shape::Burst { on: 72, size: 60.0 },
            Audience::Mobile,
            INSTAGRAM,
            SHOP,
        ),
        ("get-app", _) => p(Shape::Steady(9.0), Audience::Mobile, SEARCH, SHOP),
        ("stores", _) => p(Shape::Steady(4.0), Audience::Mobile, SEARCH, SHOP),
        ("spring-ab", _) => p(
            Shape::Campaign {
                start: 60,
                peak: 75,
                per_day: 12.0,
            },
            Audience::Mixed,
            SEARCH,
            SHOP,
        ),
        ("preorder", _) => p(
            Shape::Until {
                until: 20,
                per_day: 6.0,
            },
            Audience::Mixed,
            SEARCH,
            SHOP,
        ),
        ("nl-september", _) => p(
            Shape::Burst { on: 7, size: 70.0 },
            Audience::Mixed,
            MAIL,
            BLOG,
        ),
        ("nl-october", _) => p(
            Shape::Burst { on: 37, size: 80.0 },
            Audience::Mixed,
            MAIL,
            BLOG,
        ),
        ("nl-november", _) => p(
            Shape::Burst { on: 68, size: 90.0 },
            Audience::Mixed,
            MAIL,
            BLOG,
        ),
        ("why-short", _) => p(
            Shape::Burst {
                on: 25,
                size: 120.0,
            },
            Audience::Desktop,
            SOCIAL,
            BLOG,
        ),
        ("self-host", _) => p(Shape::Steady(6.0), Audience::Desktop, SEARCH, BLOG),
        ("subscribe", _) => p(Shape::Steady(3.0), Audience::Mixed, MAIL, BLOG),
        ("unsub", _) => p(Shape::Steady(0.4), Audience::Mixed, MAIL, BLOG),
        ("survey", _) => p(
            Shape::Campaign {
                start: 66,
                peak: 69,
                per_day: 20.0,
            },
            Audience::Mixed,
            MAIL,
            BLOG,
        ),
        ("conf", _) => p(Shape::Steady(8.0), Audience::Desktop, EVENT, CONF),
        ("tickets", _) => p(
            Shape::Campaign {
                start: 20,
                peak: 88,
                per_day: 25.0,
            },
            Audience::Desktop,
            EVENT,
            CONF,
        ),
        ("cfp", _) => p(Shape::Steady(3.0), Audience::Desktop, EVENT, CONF),
        ("schedule", _) => p(
            Shape::Campaign {
                start: 60,
                peak: 89,
                per_day: 10.0,
            },
            Audience::Mixed,
            EVENT,
            CONF,
        ),
        ("help", _) => p(Shape::Steady(14.0), Audience::Mixed, SUPPORT, SHOP),
        ("contact", _) => p(Shape::Steady(5.0), Audience::Mixed, SUPPORT, SHOP),
        ("returns", _) => p(Shape::Steady(4.0), Audience::Mixed, SUPPORT, SHOP),
        ("status-page", _) => p(
            Shape::Burst { on: 52, size: 45.0 },
            Audience::Desktop,
            SUPPORT,
            SHOP,
        ),
        ("download", _) => p(Shape::Steady(3.0), Audience::Desktop, SUPPORT, SHOP),
        ("chat", _) => p(Shape::Steady(2.0), Audience::Mixed, SUPPORT, SHOP),
        ("social" | "thread", _) => p(Shape::Steady(5.0), Audience::Mobile, SOCIAL, SHOP),
        ("videos" | "photos", _) => p(Shape::Steady(2.5), Audience::Mobile, SOCIAL, SHOP),
        ("home", _) => p(Shape::Steady(7.0), Audience::Mixed, SEARCH, SHOP),
        ("jobs", _) => p(Shape::Steady(1.5), Audience::Desktop, SEARCH, BLOG),
        ("press", _) => p(
            Shape::Burst { on: 70, size: 15.0 },
            Audience::Desktop,
            SEARCH,
            SHOP,
        ),
        ("api-docs", _) => p(Shape::Steady(4.0), Audience::Desktop, SEARCH, BLOG),
        (_, Some(_)) => p(Shape::Steady(0.6), Audience::Mixed, SEARCH, SHOP),
        _ => p(Shape::Nothing, Audience::Mixed, SEARCH, SHOP),
    }
}

fn platform(rng: &mut StdRng, audience: Audience) -> (&'static str, &'static str) {
    let platforms: &[(&str, u32)] = match audience {
        Audience::Mobile => &[
            ("iOS", 48),
            ("Android", 40),
            ("Windows", 6),
            ("OS X", 4),
            ("", 2),
        ],
        Audience::Desktop => &[
            ("Windows", 34),
            ("OS X", 28),
            ("Linux", 16),
            ("iOS", 10),
            ("Android", 8),
            ("Chrome OS", 2),
            ("", 2),
        ],
        Audience::Mixed => &[
            ("iOS", 30),
            ("Android", 26),
            ("Windows", 22),
            ("OS X", 14),
            ("Linux", 4),
            ("", 4),
        ],
    };
    let platform = pick(rng, platforms);
    let browsers: &[(&str, u32)] = match platform {
        "iOS" => &[("Safari", 82), ("Chrome", 14), ("Firefox", 4)],
        "OS X" => &[("Safari", 48), ("Chrome", 40), ("Firefox", 8), ("Edge", 4)],
        "Windows" => &[("Chrome", 62), ("Edge", 26), ("Firefox", 10), ("Opera", 2)],
        "Linux" => &[("Firefox", 52), ("Chrome", 46), ("Opera", 2)],
        "" => &[("", 100)],
        _ => &[("Chrome", 84), ("Firefox", 8), ("Opera", 4), ("", 4)],
    };
    (platform, pick(rng, browsers))
}

fn language(rng: &mut StdRng, country: &str) -> &'static str {
    let main = match country {
        "US" | "GB" | "CA" | "AU" | "IN" => "en",
        "DE" | "AT" => "de",
        "CH" => pick(rng, &[("de", 70), ("fr", 25), ("it", 5)]),
        "FR" => "fr",
        "NL" => "nl",
        "JP" => "ja",
        "BR" => "pt",
        "ES" => "es",
        "IT" => "it",
        "PL" => "pl",
        "SE" => "sv",
        _ => "",
    };
    // Some browsers ask for English first wherever they are; a few send nothing.
    pick(rng, &[(main, 80), ("en", 15), ("", 5)])
}

/// Hours of the day (UTC) weighted by when Europe and America are awake.
const HOURS: [u32; 24] = [
    3, 2, 2, 1, 1, 2, 4, 7, 10, 12, 12, 11, 11, 12, 14, 16, 16, 15, 14, 12, 10, 8, 6, 4,
];

fn main() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/assets/demo.json");
    let text = std::fs::read_to_string(path).expect("read assets/demo.json");
    let end: jiff::Timestamp = AS_OF.parse().unwrap();
    let first_day = end.as_second() / 86_400 - DAYS;
    let mut rng = StdRng::seed_from_u64(2026);
    let hours: Vec<(String, u32)> = (0..24).map(|h| (h.to_string(), HOURS[h])).collect();
    let hour_choices: Vec<(&str, u32)> = hours.iter().map(|(h, w)| (h.as_str(), *w)).collect();
    let mut out = String::new();
    let mut clicks_in_all = 0u64;
    for line in text.lines() {
        if line.trim_start().starts_with("\"traffic_as_of\"") {
            continue;
        }
        if line.trim() == "\"version\": 1," {
            out.push_str(line);
            out.push_str(&format!("\n  \"traffic_as_of\": \"{AS_OF}\","));
            out.push('\n');
            continue;
        }
        let record = line.trim().trim_end_matches(',');
        let Ok(Value::Object(mut link)) = serde_json::from_str::<Value>(record) else {
            out.push_str(line);
            out.push('\n');
            continue;
        };
        if !link.contains_key("url") {
            out.push_str(line);
            out.push('\n');
            continue;
        }
        link.remove("traffic");
        let alias = link.get("alias").and_then(Value::as_str).unwrap_or("");
        let space = link.get("space").and_then(Value::as_str);
        let disabled = link.get("disabled") == Some(&Value::Bool(true));
        let profile = profile(alias, space, disabled);
        let mut by_hour: BTreeMap<i64, BTreeMap<&str, BTreeMap<String, u64>>> = BTreeMap::new();
        let mut clicks: BTreeMap<i64, u64> = BTreeMap::new();
        for d in 0..DAYS {
            let day = first_day + d;
            // 1970-01-01 was a Thursday: days 2 and 3 of the week are the weekend.
            let weekend = matches!(day.rem_euclid(7), 2 | 3);
            let mut expected = profile.shape.expected(d) * if weekend { 0.6 } else { 1.1 };
            expected *= rng.random_range(0.75..1.25);
            let n = expected.floor() as u64 + u64::from(rng.random_bool(expected.fract()));
            for _ in 0..n {
                let h: i64 = pick(&mut rng, &hour_choices).parse().unwrap();
                let at = day * 86_400 + h * 3600;
                *clicks.entry(at).or_default() += 1;
                let country = pick(&mut rng, profile.countries);
                let (platform, browser) = platform(&mut rng, profile.audience);
                let referrer = pick(&mut rng, profile.referrers);
                let language = language(&mut rng, country);
                let hour = by_hour.entry(at).or_default();
                for (dim, value) in [
                    ("country", country),
                    ("platform", platform),
                    ("browser", browser),
                    ("referrer", referrer),
                    ("language", language),
                ] {
                    if !value.is_empty() {
                        *hour
                            .entry(dim)
                            .or_default()
                            .entry(value.to_owned())
                            .or_default() += 1;
                    }
                }
            }
        }
        if !clicks.is_empty() {
            // Each hour reads "hour", "clicks", then its values.
            let traffic: Vec<String> = clicks
                .iter()
                .map(|(at, n)| {
                    clicks_in_all += n;
                    let hour = jiff::Timestamp::from_second(*at).unwrap();
                    let mut entry = format!("{{\"hour\":\"{hour}\",\"clicks\":{n}");
                    for (dim, values) in by_hour.remove(at).unwrap_or_default() {
                        entry.push_str(&format!(",\"{dim}\":{}", json!(values)));
                    }
                    entry.push('}');
                    entry
                })
                .collect();
            link.insert(
                "traffic".into(),
                Value::String(format!("[{}]", traffic.join(","))),
            );
        }
        // The hand-written fields keep their order; the traffic goes last.
        let head = record.trim_end_matches('}');
        let head = match head.find(", \"traffic\"") {
            Some(at) => &head[..at],
            None => head,
        };
        let tail = match link.get("traffic").and_then(Value::as_str) {
            Some(t) => format!(", \"traffic\": {t}}}"),
            None => "}".to_owned(),
        };
        let comma = if line.trim_end().ends_with(',') {
            ","
        } else {
            ""
        };
        let indent = &line[..line.len() - line.trim_start().len()];
        out.push_str(&format!("{indent}{head}{tail}{comma}\n"));
    }
    std::fs::write(path, out).expect("write assets/demo.json");
    eprintln!("wrote {clicks_in_all} clicks of traffic into {path}");
}
