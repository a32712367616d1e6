use serde::{Deserialize, Serialize};

use super::{
    ALIAS_MAX, FieldErrors, Id, SpaceSet, TITLE_MAX, TagMatch, URL_MAX, space::SPACE_NAME_MAX,
};

pub const PER_PAGE_MIN: u32 = 10;
pub const PER_PAGE_MAX: u32 = 100;
pub const PER_PAGE_DEFAULT: u32 = 10;

/// Which field a search matches.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum SearchBy {
    #[default]
    Title,
    Alias,
    Url,
}

impl SearchBy {
    pub const ALL: [SearchBy; 3] = [SearchBy::Title, SearchBy::Alias, SearchBy::Url];

    pub fn as_str(self) -> &'static str {
        match self {
            SearchBy::Title => "title",
            SearchBy::Alias => "alias",
            SearchBy::Url => "url",
        }
    }

    pub fn parse(s: &str) -> Option<SearchBy> {
        Self::ALL
            .into_iter()
            .find(|b| b.as_str().eq_ignore_ascii_case(s.trim()))
    }

    /// The most characters the field can hold: a longer search can match nothing.
    pub fn longest(self) -> usize {
        match self {
            SearchBy::Title => TITLE_LONGEST,
            SearchBy::Alias => ALIAS_MAX,
            SearchBy::Url => URL_MAX,
        }
    }
}

/// The longest title a link can have: one made from its URL's host and path is no longer than
/// the URL, one an import carries is cut to [`TITLE_MAX`], and a fetched page's is shorter.
const TITLE_LONGEST: usize = if URL_MAX > TITLE_MAX {
    URL_MAX
} else {
    TITLE_MAX
};

/// A search longer than `longest` characters, which nothing it looks in can hold, is a field
/// error rather than a long look for nothing.
fn validate_search(search: Option<&str>, longest: usize, what: &str, errors: &mut FieldErrors) {
    if search.is_some_and(|s| s.chars().count() > longest) {
        errors.add(
            "search",
            format!("must be at most {longest} characters, the longest {what} can be"),
        );
    }
}

/// Which links a list keeps by their space: `space` on the wire is a space's id, or `none`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum SpaceFilter {
    /// Links in any space and in none.
    #[default]
    Any,
    /// Links in no space.
    NoSpace,
    /// Links in this space.
    In(Id),
    /// Links in any of these spaces: what a key limited to spaces sees. Never read from a
    /// query string.
    Among(SpaceSet),
}

impl SpaceFilter {
    /// The word for "no space" in a query string (`space=none`).
    pub const NONE_WORD: &'static str = "none";

    pub fn is_any(self) -> bool {
        self == SpaceFilter::Any
    }

    /// Whether a link in `space` (`None`: in no space) is listed under the filter.
    pub fn admits(self, space: Option<Id>) -> bool {
        match self {
            SpaceFilter::Any => true,
            SpaceFilter::NoSpace => space.is_none(),
            SpaceFilter::In(id) => space == Some(id),
            SpaceFilter::Among(set) => space.is_some_and(|id| set.contains(id)),
        }
    }

    /// The space a link made under this filter goes in.
    pub fn space(self) -> Option<Id> {
        match self {
            SpaceFilter::In(id) => Some(id),
            SpaceFilter::Among(set) => set.single(),
            SpaceFilter::Any | SpaceFilter::NoSpace => None,
        }
    }

    /// The query string's value, `None` for any space.
    pub fn wire(self) -> Option<String> {
        match self {
            SpaceFilter::Any => None,
            SpaceFilter::NoSpace => Some(Self::NONE_WORD.to_owned()),
            SpaceFilter::In(id) => Some(id.to_string()),
            SpaceFilter::Among(set) => Some(set.joined()),
        }
    }
}

/// The status filter of a link list (`status` 0–3 on the wire).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum StatusFilter {
    #[default]
    All,
    Active,
    Expired,
    Disabled,
}

impl StatusFilter {
    pub const ALL: [StatusFilter; 4] = [
        StatusFilter::All,
        StatusFilter::Active,
        StatusFilter::Expired,
        StatusFilter::Disabled,
    ];

    pub fn number(self) -> u8 {
        self as u8
    }

    pub fn label(self) -> &'static str {
        match self {
            StatusFilter::All => "all",
            StatusFilter::Active => "active",
            StatusFilter::Expired => "expired",
            StatusFilter::Disabled => "disabled",
        }
    }

    /// Whether a link of this status is listed under the filter.
    pub fn admits(self, status: super::LinkStatus) -> bool {
        match self {
            StatusFilter::All => true,
            StatusFilter::Active => status.is_active(),
            StatusFilter::Expired => status.expired,
            StatusFilter::Disabled => status.disabled,
        }
    }

    /// Accepts the wire number or the label.
    pub fn parse(s: &str) -> Option<StatusFilter> {
        let s = s.trim();
        Self::ALL
            .into_iter()
            .find(|f| s == f.number().to_string() || f.label().eq_ignore_ascii_case(s))
    }
}

/// List order; ties are always broken by id in the same direction.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Sort {
    /// Newest first.
    #[default]
    Desc,
    /// Oldest first.
    Asc,
    /// Most clicks first.
    Max,
    /// Fewest clicks first.
    Min,
}

impl Sort {
    pub const ALL: [Sort; 4] = [Sort::Desc, Sort::Asc, Sort::Max, Sort::Min];

    pub fn as_str(self) -> &'static str {
        match self {
            Sort::Desc => "desc",
            Sort::Asc => "asc",
            Sort::Max => "max",
            Sort::Min => "min",
        }
    }

    pub fn label(self) -> &'static str {
        match self {
            Sort::Desc => "newest",
            Sort::Asc => "oldest",
            Sort::Max => "most clicks",
            Sort::Min => "fewest clicks",
        }
    }

    /// Accepts the wire value or the label.
    pub fn parse(s: &str) -> Option<Sort> {
        let s = s.trim();
        Self::ALL
            .into_iter()
            .find(|o| o.as_str().eq_ignore_ascii_case(s) || o.label().eq_ignore_ascii_case(s))
    }
}

/// A page of a link list.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LinkQuery {
    pub search: Option<String>,
    pub by: SearchBy,
    pub status: StatusFilter,
    pub space: SpaceFilter,
    pub domain: Option<Id>,
    /// Links carrying these tags (as stored: see [`super::tag`]); none asks nothing of tags.
    pub tags: Vec<String>,
    /// Every tag of `tags`, or any of them.
    pub tag_match: TagMatch,
    pub sort: Sort,
    /// 1-based.
    pub page: u32,
    pub per_page: u32,
}

impl Default for LinkQuery {
    fn default() -> Self {
        LinkQuery {
            search: None,
            by: SearchBy::Title,
            status: StatusFilter::All,
            space: SpaceFilter::Any,
            domain: None,
            tags: Vec::new(),
            tag_match: TagMatch::All,
            sort: Sort::Desc,
            page: 1,
            per_page: PER_PAGE_DEFAULT,
        }
    }
}

impl LinkQuery {
    /// The non-empty search term, if any.
    pub fn search_term(&self) -> Option<&str> {
        self.search.as_deref().filter(|s| !s.is_empty())
    }

    /// Page and page size are in range and the search no longer than the field it looks in;
    /// reported as field errors, never silently replaced.
    pub fn validate(&self) -> Result<(), FieldErrors> {
        let mut errors = validate_paging(self.page, self.per_page)
            .err()
            .unwrap_or_default();
        let what = format!("a link's {}", self.by.as_str());
        validate_search(self.search_term(), self.by.longest(), &what, &mut errors);
        for tag in &self.tags {
            if super::tag(tag).as_deref() != Ok(tag.as_str()) {
                errors.add("tag", format!("{tag:?} is not a tag as stored"));
            }
        }
        errors.into_result(())
    }

    /// Its tags as stored, each once: what a person typed for `tag`, read by the tag rules.
    pub fn with_tags<S: AsRef<str>>(mut self, typed: &[S], errors: &mut FieldErrors) -> Self {
        self.tags = super::tags_of(typed, "tag", errors);
        self
    }
}

/// A page of a space list.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SpaceQuery {
    pub search: Option<String>,
    /// Only `Desc` and `Asc` apply to spaces.
    pub sort: Sort,
    pub page: u32,
    pub per_page: u32,
}

impl Default for SpaceQuery {
    fn default() -> Self {
        SpaceQuery {
            search: None,
            sort: Sort::Desc,
            page: 1,
            per_page: PER_PAGE_DEFAULT,
        }
    }
}

impl SpaceQuery {
    pub fn search_term(&self) -> Option<&str> {
        self.search.as_deref().filter(|s| !s.is_empty())
    }

    pub fn validate(&self) -> Result<(), FieldErrors> {
        let mut errors = validate_paging(self.page, self.per_page)
            .err()
            .unwrap_or_default();
        if !matches!(self.sort, Sort::Desc | Sort::Asc) {
            errors.add("sort", "must be desc or asc");
        }
        let (search, longest) = (self.search_term(), SPACE_NAME_MAX);
        validate_search(search, longest, "a space's name", &mut errors);
        errors.into_result(())
    }
}

fn validate_paging(page: u32, per_page: u32) -> Result<(), FieldErrors> {
    let mut errors = FieldErrors::default();
    if page < 1 {
        errors.add("page", "must be 1 or more");
    }
    if !(PER_PAGE_MIN..=PER_PAGE_MAX).contains(&per_page) {
        errors.add(
            "per_page",
            format!("must be from {PER_PAGE_MIN} to {PER_PAGE_MAX}"),
        );
    }
    errors.into_result(())
}

/// How many items a list holds as a store counted them: all of them (`exact`), or — when
/// counting stopped at a bound — at least `n`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Total {
    pub n: u64,
    pub exact: bool,
}

impl Total {
    pub fn exact(n: u64) -> Total {
        Total { n, exact: true }
    }

    pub fn at_least(n: u64) -> Total {
        Total { n, exact: false }
    }
}

impl From<u64> for Total {
    fn from(n: u64) -> Total {
        Total::exact(n)
    }
}

/// A count as it is said: `n`, or "more than `n`" (`10,000+`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ListTotal {
    pub n: u64,
    pub more: bool,
}

impl ListTotal {
    /// The count of a list that holds `total` items, or at least `total` when not `exact`.
    pub fn of(total: u64, exact: bool) -> ListTotal {
        if exact {
            ListTotal {
                n: total,
                more: false,
            }
        } else {
            ListTotal {
                n: total.saturating_sub(1),
                more: true,
            }
        }
    }

    /// `3 links`, `10,000+ links`.
    pub fn plural(self, noun: &str) -> String {
        if self.more {
            format!("{self} {noun}s")
        } else {
            crate::plural(self.n, noun)
        }
    }
}

/// `1,204`, or `10,000+` when the list holds more.
impl std::fmt::Display for ListTotal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let more = if self.more { "+" } else { "" };
        write!(f, "{}{more}", crate::thousands(self.n))
    }
}

/// One page of results and where it sits in the whole list.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Page<T> {
    pub items: Vec<T>,
    /// 1-based.
    pub page: u32,
    /// The page size the backend actually used (a phpShort 2.x server always uses 10).
    pub per_page: u32,
    /// How many items the whole list holds, or — when `total_exact` is false — at least how
    /// many: one past the page's end, at the least.
    pub total: u64,
    /// False when counting every match would have cost more than the page: the store counted
    /// [`COUNT_BOUND`] matches (or up to the page's end, when deeper) and one more, and stopped.
    #[serde(default = "exact")]
    pub total_exact: bool,
}

/// How many matches a store counts at most, past the page asked for, when counting all of
/// them would mean reading each (a search, a tag, a space on PostgreSQL). A list that holds
/// more says "10,000+", and its pages are still exact.
pub const COUNT_BOUND: u64 = 10_000;

fn exact() -> bool {
    true
}

impl<T> Page<T> {
    /// A page of a list of `total` items.
    pub fn new(items: Vec<T>, page: u32, per_page: u32, total: impl Into<Total>) -> Page<T> {
        let total = total.into();
        Page {
            items,
            page,
            per_page,
            total: total.n,
            total_exact: total.exact,
        }
    }

    /// The total to show: exact, or the bound the list is known to pass (`10,000` of "10,000+",
    /// the list holding at least `total`, one more).
    pub fn shown_total(&self) -> ListTotal {
        ListTotal::of(self.total, self.total_exact)
    }

    pub fn last_page(&self) -> u32 {
        if self.total == 0 || self.per_page == 0 {
            1
        } else {
            u32::try_from(self.total.div_ceil(u64::from(self.per_page))).unwrap_or(u32::MAX)
        }
    }

    pub fn has_next(&self) -> bool {
        self.page < self.last_page()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_search_may_be_as_long_as_its_field_and_no_longer() {
        for by in SearchBy::ALL {
            let of = |n: usize| LinkQuery {
                search: Some("é".repeat(n)),
                by,
                ..LinkQuery::default()
            };
            assert!(of(by.longest()).validate().is_ok(), "{by:?}");
            let errors = of(by.longest() + 1).validate().unwrap_err();
            assert_eq!(
                errors.get("search").unwrap(),
                [format!(
                    "must be at most {} characters, the longest a link's {} can be",
                    by.longest(),
                    by.as_str()
                )]
            );
        }
        // A title made from a URL's host and path can be nearly as long as the URL.
        assert_eq!(SearchBy::Title.longest(), URL_MAX);
        let space = |n: usize| SpaceQuery {
            search: Some("x".repeat(n)),
            ..SpaceQuery::default()
        };
        assert!(space(SPACE_NAME_MAX).validate().is_ok());
        assert!(
            space(SPACE_NAME_MAX + 1)
                .validate()
                .unwrap_err()
                .contains("search")
        );
    }
}
