//! Cells a spreadsheet would run. A CSV export gets opened in spreadsheets, which take a cell
//! starting with `=`, `+`, `-` or `@` (or a tab or carriage return) for a formula: a title such
//! as `=HYPERLINK("http://evil","x")`, from an import, the API or the app, would run there. As
//! OWASP advises against CSV injection, such a cell is written with a `'` before it, which
//! spreadsheets show as text (and in quotes, as every cell of an export: see `csv.rs`);
//! linkdeck's CSV import takes it off again. So that every text reads back as it was, a text
//! that already starts with `'`s before one of those characters gets one more `'` too.

/// What a spreadsheet reads as the start of a formula.
const FORMULA_STARTS: [char; 6] = ['=', '+', '-', '@', '\t', '\r'];

/// Whether `text` is some `'`s (or none) before a formula's start.
fn quoted_formula(text: &str) -> bool {
    text.trim_start_matches('\'').starts_with(FORMULA_STARTS)
}

/// The cell that holds `text`.
pub fn to_cell(text: String) -> String {
    if quoted_formula(&text) {
        format!("'{text}")
    } else {
        text
    }
}

/// The text a cell of linkdeck's CSV holds (the inverse of [`to_cell`]).
pub fn from_cell(cell: &str) -> &str {
    match cell.strip_prefix('\'') {
        Some(text) if quoted_formula(text) => text,
        _ => cell,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn formulas_are_written_as_text() {
        for (text, cell) in [
            (
                r#"=HYPERLINK("http://evil","x")"#,
                r#"'=HYPERLINK("http://evil","x")"#,
            ),
            ("+cmd|' /C calc'!A0", "'+cmd|' /C calc'!A0"),
            ("-2+3", "'-2+3"),
            ("@SUM(A1)", "'@SUM(A1)"),
            ("\t=1", "'\t=1"),
            ("\r=1", "'\r=1"),
            ("'=1", "''=1"),
            ("''-1", "'''-1"),
            ("'quoted'", "'quoted'"),
            ("https://example.com/?a=1", "https://example.com/?a=1"),
            ("Launch", "Launch"),
            ("", ""),
        ] {
            assert_eq!(to_cell(text.to_owned()), cell, "{text:?}");
            assert_eq!(from_cell(cell), text, "{cell:?}");
        }
    }

    proptest! {
        #[test]
        fn every_text_reads_back_and_no_cell_starts_a_formula(
            text in "['=+@\t\r-]{0,3}[a-z'=+@-]{0,4}"
        ) {
            let cell = to_cell(text.clone());
            prop_assert!(!cell.starts_with(FORMULA_STARTS), "{:?}", cell);
            prop_assert_eq!(from_cell(&cell), text.as_str());
        }
    }
}
