//! The link form's redirect rules as a table (`rules.rs` edits it): each row a kind picked
//! from the ten the domain knows, its condition as the text form writes it (`fr,de-CH`), and
//! the URL it leads to. Rows come from the link's [`Rule`]s and go back as the text form the
//! service parses (`language fr,de-CH => https://…`), so the service's own checks judge them.

use super::picker::{Choice, ListPicker};
use super::rules::{ColumnSpec, RuleList, Table};
use crate::domain::{RULE_KINDS, Rule};

/// Kind | condition | URL. The condition's errors (`rules.0`, `rules.0.languages`) and the
/// URL's (`rules.0.url`) show under the row.
pub const COLUMNS: [ColumnSpec; 3] = [
    ColumnSpec {
        header: "when",
        width: 8,
        part: "",
        pick: true,
    },
    ColumnSpec {
        header: "condition",
        width: 0,
        part: "",
        pick: false,
    },
    ColumnSpec {
        header: "URL",
        width: 0,
        part: "url",
        pick: false,
    },
];

/// The picker of the ten kinds, each with an example of its condition.
pub fn kind_picker(current: &str) -> ListPicker {
    let items = RULE_KINDS
        .iter()
        .map(|(kind, example)| Choice::new(*kind, format!("{kind:<9} {example}")))
        .collect();
    ListPicker::new(" Rule kind ", items, Some(current))
}

/// An example of the condition of `kind`: what an empty condition cell shows.
pub fn example(kind: &str) -> &'static str {
    RULE_KINDS
        .iter()
        .find(|(k, _)| *k == kind)
        .map_or("", |(_, example)| example)
}

impl RuleList {
    /// A table holding `rules`, in their order.
    pub fn redirect(rules: &[Rule]) -> RuleList {
        let rows = rules
            .iter()
            .map(|r| vec![r.when.kind().to_owned(), r.when.args(), r.url.clone()])
            .collect();
        RuleList::with_rows(Table::Redirect, rows)
    }

    /// The rules as sent, in their text form: blank rows left out, so the `N` of an error's
    /// `rules.N` counts only the rows sent.
    pub fn rule_texts(&self) -> Vec<String> {
        self.sent_rows()
            .map(|row| {
                let [kind, args, url] = [0, 1, 2].map(|i| row.cells[i].trim());
                format!("{kind} {args} => {url}")
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use ratatui::crossterm::event::KeyCode;

    use super::*;
    use crate::domain::{FieldErrors, parse_rules};
    use crate::tui::form::link_form::tests::press as key;

    fn rules(texts: &[&str]) -> Vec<Rule> {
        let mut errors = FieldErrors::default();
        let rules = parse_rules(texts, &mut errors);
        assert!(errors.is_empty(), "{errors:?}");
        rules
    }

    #[test]
    fn rules_read_back_as_the_texts_they_came_from() {
        let texts = [
            "schedule mon,fri 09-17 Europe/Paris => https://a.example/office",
            "split 30*https://a.example/a,70*https://a.example/b until 2030-02-01T00:00:00Z => https://a.example/b",
            "query ref => https://a.example/r",
        ];
        let list = RuleList::redirect(&rules(&texts));
        assert_eq!(list.rows()[0].cells[1], "mon,fri 09-17 Europe/Paris");
        assert_eq!(list.rule_texts(), texts);
    }

    #[test]
    fn adding_a_row_picks_the_kind_then_types_the_condition_then_the_url() {
        let mut list = RuleList::redirect(&[]);
        list.handle_key(&key(KeyCode::Char('a')));
        assert!(list.picker().is_some());
        // The second kind is `after`.
        list.handle_key(&key(KeyCode::Down));
        list.handle_key(&key(KeyCode::Enter));
        for c in "2030-01-01T00:00Z".chars() {
            list.handle_key(&key(KeyCode::Char(c)));
        }
        list.handle_key(&key(KeyCode::Enter));
        assert!(list.is_editing(), "on to the URL");
        for c in "https://a.example/new".chars() {
            list.handle_key(&key(KeyCode::Char(c)));
        }
        list.handle_key(&key(KeyCode::Enter));
        assert!(!list.is_editing());
        assert_eq!(
            list.rule_texts(),
            ["after 2030-01-01T00:00Z => https://a.example/new"]
        );
        // A kind picked and nothing typed: Esc drops the row.
        list.handle_key(&key(KeyCode::Char('a')));
        list.handle_key(&key(KeyCode::Enter));
        list.handle_key(&key(KeyCode::Esc));
        assert_eq!(list.rows().len(), 1);
    }
}
