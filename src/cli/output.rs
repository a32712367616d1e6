//! Human-readable output: aligned tables, short relative times, and writing to stdout.

use std::io::{self, Write};

use crate::domain::{Page, clip, into_shown};
pub use crate::domain::{plural, thousands};
use jiff::tz::TimeZone;
use jiff::{Timestamp, Zoned};
use serde::Serialize;
use unicode_width::UnicodeWidthStr;

/// Writes `text` to stdout. A closed pipe surfaces as an error that ends the command quietly.
pub fn print(text: &str) -> io::Result<()> {
    let mut out = io::stdout().lock();
    out.write_all(text.as_bytes())?;
    if !text.ends_with('\n') {
        out.write_all(b"\n")?;
    }
    out.flush()
}

/// Writes `value` as one line of JSON on stdout.
pub fn print_json(value: &impl Serialize) -> io::Result<()> {
    let text = serde_json::to_string_pretty(value).map_err(io::Error::other)?;
    print(&text)
}

/// A table with a header row, columns separated by two spaces, cells cut at a column's maximum.
/// Widths are display columns: a CJK character or an emoji takes two.
pub struct Table {
    headers: Vec<&'static str>,
    /// Per column: the widest a cell may be, and whether it is right-aligned (numbers).
    columns: Vec<(usize, bool)>,
    rows: Vec<Vec<String>>,
}

impl Table {
    /// `columns` gives each column's header, maximum width and right alignment.
    pub fn new(columns: &[(&'static str, usize, bool)]) -> Self {
        Table {
            headers: columns.iter().map(|c| c.0).collect(),
            columns: columns.iter().map(|c| (c.1, c.2)).collect(),
            rows: Vec::new(),
        }
    }

    /// Adds a row; its cells are kept as a terminal may show them ([`into_shown`]), so the columns
    /// are as wide as what is shown.
    pub fn row(&mut self, cells: Vec<String>) {
        self.rows.push(cells.into_iter().map(into_shown).collect());
    }

    pub fn is_empty(&self) -> bool {
        self.rows.is_empty()
    }

    /// The table as text, its columns as wide as their widest cell (up to each maximum).
    pub fn render(&self) -> String {
        self.render_with(true, &self.widths(0))
    }

    /// Column widths that fit this table's cells, each at least `floor` (where the column's
    /// maximum allows): the later pages of a streamed table keep the first page's widths, and
    /// the floor leaves them some room.
    pub fn widths(&self, floor: usize) -> Vec<usize> {
        self.columns
            .iter()
            .enumerate()
            .map(|(i, (max, _))| {
                self.rows
                    .iter()
                    .map(|r| r.get(i).map_or(0, |c| c.width()))
                    .chain([self.headers[i].len(), floor])
                    .max()
                    .unwrap_or(0)
                    .min(*max)
            })
            .collect()
    }

    /// The table as text with the given column widths, with or without the header row.
    pub fn render_with(&self, header: bool, widths: &[usize]) -> String {
        let mut out = String::new();
        let headers: Vec<String> = self.headers.iter().map(|h| (*h).to_owned()).collect();
        let rows = header.then_some(&headers).into_iter().chain(&self.rows);
        for row in rows {
            let mut line = String::new();
            for (i, width) in widths.iter().enumerate() {
                let cell = clip(row.get(i).map_or("", String::as_str), *width);
                let pad = width.saturating_sub(cell.width());
                let last = i + 1 == widths.len();
                if i > 0 {
                    line.push_str("  ");
                }
                if self.columns[i].1 {
                    line.push_str(&" ".repeat(pad));
                    line.push_str(&cell);
                } else {
                    line.push_str(&cell);
                    if !last {
                        line.push_str(&" ".repeat(pad));
                    }
                }
            }
            out.push_str(line.trim_end());
            out.push('\n');
        }
        out
    }
}

/// `at` relative to `now`: `in 3d`, `2h ago`, `now`; the date beyond two months.
pub fn relative(at: Timestamp, now: Timestamp, tz: &TimeZone) -> String {
    near(at, now).unwrap_or_else(|| date(at, tz))
}

/// `at` relative to `now` when it is within two months, where a relative time reads better
/// than a date.
pub fn near(at: Timestamp, now: Timestamp) -> Option<String> {
    let secs = at.as_second() - now.as_second();
    let abs = secs.unsigned_abs();
    let amount = match abs {
        0..60 => return Some("now".into()),
        60..3_600 => format!("{}m", abs / 60),
        3_600..86_400 => format!("{}h", abs / 3_600),
        86_400..5_184_000 => format!("{}d", abs / 86_400),
        _ => return None,
    };
    Some(if secs > 0 {
        format!("in {amount}")
    } else {
        format!("{amount} ago")
    })
}

/// `2026-11-22` in `tz`.
pub fn date(at: Timestamp, tz: &TimeZone) -> String {
    let zoned: Zoned = at.to_zoned(tz.clone());
    zoned.strftime("%Y-%m-%d").to_string()
}

/// `2026-11-22 14:05 CET` in `tz`.
pub fn date_time(at: Timestamp, tz: &TimeZone) -> String {
    let zoned: Zoned = at.to_zoned(tz.clone());
    zoned.strftime("%Y-%m-%d %H:%M %Z").to_string()
}

/// A page as `--json` prints it.
#[derive(Serialize)]
pub struct PageJson<T> {
    items: Vec<T>,
    page: u32,
    per_page: u32,
    total: u64,
    /// False when `total` is a bound the list passes ("10,000+").
    total_exact: bool,
    last_page: u32,
}

pub fn page_json<'a, T, U>(page: &'a Page<T>, item: impl Fn(&'a T) -> U) -> PageJson<U> {
    PageJson {
        items: page.items.iter().map(item).collect(),
        page: page.page,
        per_page: page.per_page,
        total: page.total,
        total_exact: page.total_exact,
        last_page: page.last_page(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn relative_times() {
        let now = Timestamp::from_second(1_000_000_000).unwrap();
        let at = |d: i64| Timestamp::from_second(1_000_000_000 + d).unwrap();
        let tz = TimeZone::UTC;
        assert_eq!(relative(at(30), now, &tz), "now");
        assert_eq!(relative(at(3 * 86_400 + 5), now, &tz), "in 3d");
        assert_eq!(relative(at(-2 * 3_600), now, &tz), "2h ago");
        assert_eq!(relative(at(-90), now, &tz), "1m ago");
        assert_eq!(relative(at(400 * 86_400), now, &tz), "2002-10-14");
    }

    #[test]
    fn tables_align_and_cut() {
        let mut t = Table::new(&[("ID", 5, true), ("NAME", 6, false), ("X", 3, false)]);
        t.row(vec!["7".into(), "a very long name".into(), "y".into()]);
        t.row(vec!["12".into(), "b".into(), String::new()]);
        let text = t.render();
        assert_eq!(text, "ID  NAME    X\n 7  a ver…  y\n12  b\n");
        assert_eq!(t.widths(4), vec![4, 6, 3]);
        assert_eq!(t.render_with(false, &[2, 3, 1]), " 7  a …  y\n12  b\n");
    }

    #[test]
    fn wide_characters_keep_the_columns_in_line() {
        let mut t = Table::new(&[("ALIAS", 10, false), ("TITLE", 8, false), ("N", 3, true)]);
        t.row(vec!["plain".into(), "abc".into(), "1".into()]);
        t.row(vec!["例え".into(), "パス名前長い".into(), "2".into()]);
        t.row(vec!["🎉x".into(), "🎉🎉".into(), "3".into()]);
        let text = t.render();
        // The last column starts at the same display column on every line.
        let starts: Vec<usize> = text
            .lines()
            .map(|l| l[..l.rfind(' ').unwrap() + 1].width())
            .collect();
        assert!(starts.windows(2).all(|w| w[0] == w[1]), "{text}");
        assert!(text.contains("パス名…"), "cut by display width: {text}");
    }
}
