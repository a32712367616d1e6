//! YOURLS's click log, the `yourls_log` table: one row per click — `click_id`, `click_time`
//! (UTC), `shorturl` (the keyword), `referrer` (a URL, or `direct`), `user_agent` (`-` when
//! none), `ip_address`, `country_code` (empty when unknown). It is read into tallies per link
//! and UTC hour, never kept row by row, and each link takes its tallies as its traffic history
//! when its `yourls_url` row comes.

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use super::sqldump::SqlRow;
use crate::domain::{Dimension, FieldErrors, OTHER, bound_host, country_by_code, parse_instant};
use crate::transfer::TrafficRecord;

/// The columns of `yourls_log`, in table order (the same since YOURLS 1.0).
pub const LOG_COLUMNS: [&str; 7] = [
    "click_id",
    "click_time",
    "shorturl",
    "referrer",
    "user_agent",
    "ip_address",
    "country_code",
];

/// The platform and browser a User-Agent stands for, as `linkdeck serve` records them. The
/// caller gives the server's parser, so that reading a file does not depend on the server.
pub type AgentReader = Arc<dyn Fn(&str) -> (Option<String>, Option<String>) + Send + Sync>;

/// The clicks of one link in one hour, by value (values as codes of [`ClickLog::values`]).
#[derive(Default)]
struct Tally {
    clicks: u64,
    /// (dimension, value code, clicks), a handful per hour.
    values: Vec<(Dimension, u32, u64)>,
}

impl Tally {
    fn count(&mut self, dim: Dimension, code: u32) {
        match self
            .values
            .iter_mut()
            .find(|(d, c, _)| *d == dim && *c == code)
        {
            Some(entry) => entry.2 += 1,
            None => self.values.push((dim, code, 1)),
        }
    }
}

/// Clicks read from `yourls_log`, by keyword and hour, waiting for their links.
pub struct ClickLog {
    agents: AgentReader,
    /// Keyword → UTC hour (seconds) → its clicks.
    links: HashMap<String, BTreeMap<i64, Tally>>,
    /// Every value seen, once (countries, platforms, browsers and hosts repeat endlessly).
    values: Vec<String>,
    codes: HashMap<String, u32>,
}

impl ClickLog {
    pub fn new(agents: AgentReader) -> Self {
        ClickLog {
            agents,
            links: HashMap::new(),
            values: Vec::new(),
            codes: HashMap::new(),
        }
    }

    /// Whether the table is `yourls_log`, whatever its prefix (`yourls_log`, `links_log`, `log`).
    pub fn is_log_table(name: &str) -> bool {
        let name = name.to_ascii_lowercase();
        name == "log" || name.ends_with("_log")
    }

    fn code(&mut self, value: String) -> u32 {
        if let Some(&code) = self.codes.get(&value) {
            return code;
        }
        let code = u32::try_from(self.values.len()).unwrap_or(u32::MAX);
        self.values.push(value.clone());
        self.codes.insert(value, code);
        code
    }

    /// Counts one row of the table; a row that cannot be a click is its fields' errors.
    pub fn add(&mut self, row: &SqlRow) -> Result<(), FieldErrors> {
        let mut errors = FieldErrors::default();
        if row.columns.len() != row.values.len() {
            errors.add(
                "row",
                format!(
                    "has {} values for {} columns",
                    row.values.len(),
                    row.columns.len()
                ),
            );
            return Err(errors);
        }
        let get = |name: &str| row.get(name).map(str::trim).filter(|v| !v.is_empty());
        let keyword = get("shorturl");
        if keyword.is_none() {
            errors.add("shorturl", "is missing");
        }
        let at = get("click_time").and_then(parse_instant);
        if at.is_none() {
            errors.add(
                "click_time",
                "must be a date and time such as 2023-02-03 05:00:00 (UTC)",
            );
        }
        let (Some(keyword), Some(at)) = (keyword, at) else {
            return Err(errors);
        };
        let country = get("country_code")
            .and_then(country_by_code)
            .map(|c| c.code.to_owned());
        let referrer = get("referrer").and_then(referrer_host);
        let (platform, browser) = match get("user_agent").filter(|ua| *ua != "-") {
            Some(ua) => (self.agents)(ua),
            None => (None, None),
        };
        let mut seen = Vec::with_capacity(4);
        for (dim, value) in [
            (Dimension::Country, country),
            (Dimension::Platform, platform),
            (Dimension::Browser, browser),
            (Dimension::Referrer, referrer),
        ] {
            if let Some(value) = value.and_then(|v| dim.bound(&v)) {
                seen.push((dim, self.code(value)));
            }
        }
        let hour = at.as_second().div_euclid(3600) * 3600;
        let tally = match self.links.get_mut(keyword) {
            Some(hours) => hours.entry(hour).or_default(),
            None => self
                .links
                .entry(keyword.to_owned())
                .or_default()
                .entry(hour)
                .or_default(),
        };
        tally.clicks += 1;
        for (dim, code) in seen {
            tally.count(dim, code);
        }
        Ok(())
    }

    /// The history of `keyword`, hour by hour, taken out of the log (`None` without clicks).
    pub fn take(&mut self, keyword: &str) -> Option<Vec<TrafficRecord>> {
        let hours = self.links.remove(keyword)?;
        Some(
            hours
                .into_iter()
                .filter_map(|(hour, tally)| {
                    let mut record = TrafficRecord {
                        hour: jiff::Timestamp::from_second(hour).ok()?,
                        clicks: tally.clicks,
                        ..TrafficRecord::default()
                    };
                    for (dim, code, n) in tally.values {
                        let value = self.values.get(code as usize)?.clone();
                        let map = match dim {
                            Dimension::Country => &mut record.country,
                            Dimension::Platform => &mut record.platform,
                            Dimension::Browser => &mut record.browser,
                            Dimension::Referrer => &mut record.referrer,
                            Dimension::Language => &mut record.language,
                            Dimension::Rule => &mut record.rule,
                        };
                        *map.entry(value).or_default() += n;
                    }
                    Some(record)
                })
                .collect(),
        )
    }

    /// How many keywords have clicks no link took.
    pub fn untaken(&self) -> usize {
        self.links.len()
    }
}

/// The host of a referring page, as `linkdeck serve` keeps it; YOURLS writes `direct` when there
/// was none.
fn referrer_host(referrer: &str) -> Option<String> {
    if referrer.eq_ignore_ascii_case("direct") {
        return None;
    }
    let url = url::Url::parse(referrer).ok()?;
    match url.host_str() {
        Some(host) => bound_host(host),
        // A URL without a host (`data:…`) came from somewhere nameless.
        None => Some(OTHER.to_owned()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::transfer::foreign::sqldump::SqlValue;

    fn row(values: [&str; 7]) -> SqlRow {
        SqlRow {
            place: crate::domain::Place::line(1),
            table: Arc::from("yourls_log"),
            columns: LOG_COLUMNS.iter().map(|c| (*c).to_owned()).collect(),
            values: values
                .iter()
                .map(|v| SqlValue::Text((*v).to_owned()))
                .collect(),
        }
    }

    fn agents() -> AgentReader {
        Arc::new(|ua: &str| {
            let is = |s: &str| ua.contains(s).then(|| s.to_owned());
            (is("iPhone").map(|_| "iOS".to_owned()), is("Safari"))
        })
    }

    #[test]
    fn clicks_become_hours_with_their_values() {
        let mut log = ClickLog::new(agents());
        for (time, referrer, ua, country) in [
            ("2023-02-03 05:10:00", "direct", "-", "FR"),
            (
                "2023-02-03 05:59:59",
                "https://News.example/?a=1",
                "iPhone Safari",
                "fr",
            ),
            ("2023-02-04 00:00:00", "not a url", "curl/8", ""),
        ] {
            log.add(&row(["1", time, "ozh", referrer, ua, "10.0.0.1", country]))
                .unwrap();
        }
        assert_eq!(log.untaken(), 1);
        let hours = log.take("ozh").unwrap();
        assert_eq!(log.take("ozh"), None, "taken once");
        assert_eq!(hours.len(), 2);
        assert_eq!(hours[0].hour.to_string(), "2023-02-03T05:00:00Z");
        assert_eq!(hours[0].clicks, 2);
        assert_eq!(hours[0].country.get("FR"), Some(&2));
        assert_eq!(hours[0].referrer.get("news.example"), Some(&1));
        assert_eq!(hours[0].platform.get("iOS"), Some(&1));
        assert_eq!(hours[0].browser.get("Safari"), Some(&1));
        assert_eq!(hours[1].clicks, 1);
        assert!(hours[1].country.is_empty() && hours[1].referrer.is_empty());
        // Every hour passes the checks an export file's hours do.
        for (i, hour) in hours.iter().enumerate() {
            hour.to_hour(&format!("traffic.{i}")).unwrap();
        }
    }

    #[test]
    fn a_row_that_is_not_a_click_names_its_fields() {
        let mut log = ClickLog::new(agents());
        let err = log
            .add(&row([
                "1",
                "0000-00-00 00:00:00",
                "",
                "direct",
                "-",
                "",
                "",
            ]))
            .unwrap_err();
        let fields: Vec<&str> = err.iter().map(|(f, _)| f).collect();
        assert_eq!(fields, ["click_time", "shorturl"]);
        assert_eq!(log.untaken(), 0);
    }
}
