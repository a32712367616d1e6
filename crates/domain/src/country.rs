//! ISO 3166-1 alpha-2 country codes, from the `celes` tables.

/// A country a geo-targeting rule can name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Country {
    /// Upper-case ISO 3166-1 alpha-2 code, as stored.
    pub code: &'static str,
    /// The name as a person reads it in a list: "United States of America".
    pub name: String,
}

impl From<celes::Country> for Country {
    fn from(c: celes::Country) -> Self {
        Country {
            code: c.alpha2,
            name: readable_name(c.long_name),
        }
    }
}

/// `celes` capitalises every word of its official names and leads some with "The" ("The United
/// Kingdom Of Great Britain And Northern Ireland"); lists read better without the article and
/// with the joining words in lower case, as ISO writes them.
fn readable_name(official: &str) -> String {
    let name = official.strip_prefix("The ").unwrap_or(official);
    name.split(' ')
        .enumerate()
        .map(|(i, word)| match word {
            "Of" | "And" | "The" | "Da" | "Du" if i > 0 => word.to_lowercase(),
            _ => word.to_owned(),
        })
        .collect::<Vec<_>>()
        .join(" ")
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
    found.sort_by(|a, b| {
        let key = |c: &Country| (!c.code.eq_ignore_ascii_case(&term), c.name.clone());
        key(a).cmp(&key(b))
    });
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_read_as_a_person_writes_them() {
        let name = |code| country_by_code(code).unwrap().name;
        assert_eq!(name("us"), "United States of America");
        assert_eq!(
            name("GB"),
            "United Kingdom of Great Britain and Northern Ireland"
        );
        assert_eq!(name("NL"), "Netherlands");
        assert_eq!(name("IM"), "Isle of Man");
    }

    #[test]
    fn lookup_sorts_by_the_name_shown() {
        let found: Vec<_> = search_countries("united")
            .into_iter()
            .map(|c| c.code)
            .collect();
        assert_eq!(found[..2], ["AE", "GB"], "{found:?}");
    }
}
