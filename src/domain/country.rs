//! ISO 3166-1 alpha-2 country codes, from the `celes` tables.

/// A country a geo-targeting rule can name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Country {
    /// Upper-case ISO 3166-1 alpha-2 code, as stored.
    pub code: &'static str,
    pub name: &'static str,
}

impl From<celes::Country> for Country {
    fn from(c: celes::Country) -> Self {
        Country {
            code: c.alpha2,
            name: c.long_name,
        }
    }
}

/// The country with this alpha-2 code, in any case.
pub fn country_by_code(code: &str) -> Option<Country> {
    let code = code.trim();
    if code.len() != 2 || !code.bytes().all(|b| b.is_ascii_alphabetic()) {
        return None;
    }
    celes::Country::from_alpha2(code).ok().map(Country::from)
}

/// Countries whose code equals `term` or whose name contains it (case-insensitive), exact code
/// matches first, then by name.
pub fn search_countries(term: &str) -> Vec<Country> {
    let term = term.trim().to_lowercase();
    let mut found: Vec<Country> = celes::Country::get_countries()
        .into_iter()
        .map(Country::from)
        .filter(|c| {
            term.is_empty()
                || c.code.eq_ignore_ascii_case(&term)
                || c.name.to_lowercase().contains(&term)
        })
        .collect();
    found.sort_by_key(|c| (!c.code.eq_ignore_ascii_case(&term), c.name));
    found
}
