//! A link's fields as TOML for `$EDITOR` (ctrl-e in the Links pane): the text the editor
//! opens, and that text read back as an update. Mistakes come back in the text itself, as
//! `# error:` lines at its top, the way `git commit` shows what it needs.

use jiff::tz::TimeZone;
use serde::{Deserialize, Serialize};

use crate::domain::{
    Link, LinkInput, Mode, RuleInput, Space, TargetType, format_expiry_input, validate_link_input,
};

/// What the file says above the fields.
const HEADER: &str = "\
# Save and quit to apply; quit without saving, or empty the file, to leave the link as it is.
# space: a space's name, \"\" for none. expiration_date (YYYY-MM-DD) and expiration_time
# (HH:MM) are in the profile's time zone, both \"\" for no date. expiration_clicks: 0 for no
# limit. rules: redirect rules asked in order before the targeting, each as
# \"KIND ARGS => URL\" (\"language fr,de => https://…\"; the kinds are in docs/CLI.md).
# target_type: none, geo, platform or rotation; geo and platform rows are
# { key = \"DE\", url = \"https://…\" }, rotation rows are URLs.
";

/// The marker of the lines the app writes about mistakes; they are dropped when read back.
const ERROR_MARK: &str = "# error: ";

/// The fields of a link the editor shows, in the order it shows them.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct Fields {
    url: String,
    alias: String,
    space: String,
    disabled: bool,
    public: bool,
    expiration_date: String,
    expiration_time: String,
    expiration_clicks: u32,
    expiration_url: String,
    /// Redirect rules in their text form, in order.
    rules: Vec<String>,
    target_type: String,
    geo: Vec<Rule>,
    platform: Vec<Rule>,
    rotation: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct Rule {
    key: String,
    url: String,
}

impl Fields {
    fn of(link: &Link, tz: &TimeZone) -> Fields {
        let (expiration_date, expiration_time) = link
            .ends_at
            .map(|at| format_expiry_input(at, tz))
            .unwrap_or_default();
        let rules = |list: &[crate::domain::TargetRule]| {
            list.iter()
                .map(|r| Rule {
                    key: r.key.clone(),
                    url: r.value.clone(),
                })
                .collect()
        };
        Fields {
            url: link.url.clone(),
            alias: link.alias.clone(),
            space: link
                .space
                .as_ref()
                .map_or(String::new(), |s| s.name.clone()),
            disabled: link.disabled,
            public: link.public,
            expiration_date,
            expiration_time,
            expiration_clicks: link.expiration_clicks,
            expiration_url: link.expiration_url.clone().unwrap_or_default(),
            rules: link.options.rules.iter().map(ToString::to_string).collect(),
            target_type: link.target_type.label().to_owned(),
            geo: rules(&link.geo),
            platform: rules(&link.platform),
            rotation: link.rotation.clone(),
        }
    }
}

/// The text the editor opens for `link`.
pub fn text_of(link: &Link, tz: &TimeZone) -> String {
    let body = toml::to_string(&Fields::of(link, tz)).unwrap_or_default();
    format!("# Link {} (id {})\n{HEADER}\n{body}", link.alias, link.id)
}

/// What the edited text asks for.
#[derive(Debug, Clone, PartialEq)]
pub enum Edited {
    /// Nothing changed, or the file was emptied: leave the link alone.
    Unchanged,
    /// The fields that changed, checked by the service's own rules.
    Update(Box<LinkInput>),
    /// What is wrong, one line each (`field: message`), to show back in the text.
    Mistakes(Vec<String>),
}

/// Reads `edited` back against `link` as the editor showed it: the changed fields as an update,
/// every mistake found at once otherwise.
pub fn read(link: &Link, edited: &str, spaces: &[Space], tz: &TimeZone) -> Edited {
    let text = without_mistakes(edited);
    if text
        .lines()
        .all(|l| l.trim().is_empty() || l.trim_start().starts_with('#'))
    {
        return Edited::Unchanged;
    }
    let now: Fields = match toml::from_str(&text) {
        Ok(fields) => fields,
        Err(e) => return Edited::Mistakes(vec![format!("the file is not valid here: {e}")]),
    };
    let was = Fields::of(link, tz);
    if now == was {
        return Edited::Unchanged;
    }
    let mut mistakes = Vec::new();
    let mut input = LinkInput::default();
    let changed = |a: &String, b: &String| (a != b).then(|| a.clone());
    input.url = changed(&now.url, &was.url);
    input.alias = changed(&now.alias, &was.alias);
    if now.space.trim() != was.space {
        let name = now.space.trim();
        input.space = if name.is_empty() {
            Some(String::new())
        } else {
            match spaces.iter().find(|s| s.name.eq_ignore_ascii_case(name)) {
                Some(space) => Some(space.id.to_string()),
                None => {
                    let names: Vec<&str> = spaces.iter().map(|s| s.name.as_str()).collect();
                    mistakes.push(format!(
                        "space: no space is named {name:?} (there are: {})",
                        if names.is_empty() {
                            "none".to_owned()
                        } else {
                            names.join(", ")
                        }
                    ));
                    None
                }
            }
        };
    }
    let flag = |b: bool| if b { "1" } else { "0" }.to_owned();
    input.disabled = (now.disabled != was.disabled).then(|| flag(now.disabled));
    input.public = (now.public != was.public).then(|| flag(now.public));
    // Date and time go together, as the service reads them together.
    if now.expiration_date != was.expiration_date || now.expiration_time != was.expiration_time {
        input.expiration_date = Some(now.expiration_date.clone());
        input.expiration_time = Some(now.expiration_time.clone());
    }
    input.expiration_clicks =
        (now.expiration_clicks != was.expiration_clicks).then(|| now.expiration_clicks.to_string());
    input.expiration_url = changed(&now.expiration_url, &was.expiration_url);
    // The whole list when it changed, as the form sends it: blank entries left out.
    if now.rules != was.rules {
        let kept = now.rules.iter().filter(|r| !r.trim().is_empty());
        input.rules = Some(kept.cloned().collect());
    }
    let rules_changed = now.geo != was.geo
        || now.platform != was.platform
        || now.rotation != was.rotation
        || now.target_type != was.target_type;
    if rules_changed {
        // As the link form does: the type and the whole list of the type chosen.
        input.target_type = Some(now.target_type.clone());
        let rows = |list: &[Rule]| {
            list.iter()
                .map(|r| RuleInput::new(&r.key, &r.url))
                .collect()
        };
        match TargetType::parse(&now.target_type) {
            Some(TargetType::Geo) => input.geo = Some(rows(&now.geo)),
            Some(TargetType::Platform) => input.platform = Some(rows(&now.platform)),
            Some(TargetType::Rotation) => {
                input.rotation = Some(
                    now.rotation
                        .iter()
                        .map(|url| RuleInput {
                            key: None,
                            value: Some(url.clone()),
                        })
                        .collect(),
                );
            }
            Some(TargetType::None) | None => {}
        }
    }
    if let Err(errors) = validate_link_input(&input, Mode::Update, tz) {
        mistakes.extend(lines_of(&errors));
    }
    if mistakes.is_empty() {
        Edited::Update(Box::new(input))
    } else {
        Edited::Mistakes(mistakes)
    }
}

/// Each field's mistakes as `field: message` lines.
pub fn lines_of(errors: &crate::domain::FieldErrors) -> Vec<String> {
    errors
        .iter()
        .flat_map(|(field, messages)| messages.iter().map(move |m| format!("{field}: {m}")))
        .collect()
}

/// `edited` with `mistakes` written at its top (and the ones written before taken away), for
/// the editor to open again.
pub fn with_mistakes(edited: &str, mistakes: &[String]) -> String {
    let mut out = String::new();
    for mistake in mistakes {
        for (i, line) in mistake.lines().enumerate() {
            out.push_str(if i == 0 { ERROR_MARK } else { "#   " });
            out.push_str(line);
            out.push('\n');
        }
    }
    out.push_str("#\n");
    out.push_str(&without_mistakes(edited));
    out
}

/// `text` without the lines the app wrote about mistakes.
fn without_mistakes(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut in_mistakes = true;
    for line in text.lines() {
        // The block of mistakes is at the top: `# error:` lines, their continuations, and the
        // lone `#` that closes it.
        if in_mistakes && (line.starts_with(ERROR_MARK) || line.starts_with("#   ")) {
            continue;
        }
        if in_mistakes && line == "#" {
            in_mistakes = false;
            continue;
        }
        in_mistakes = false;
        out.push_str(line);
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::{Color, TargetRule};

    fn link() -> Link {
        Link {
            id: 7,
            alias: "spring".into(),
            url: "https://shop.example.com/spring".into(),
            target_type: TargetType::Geo,
            geo: vec![TargetRule {
                key: "DE".into(),
                value: "https://shop.example.de/spring".into(),
            }],
            ..Link::example()
        }
    }

    fn spaces() -> Vec<Space> {
        vec![Space {
            id: 3,
            owner_id: 1,
            name: "Launch".into(),
            color: Color::new(2).unwrap(),
            links: Some(1),
            created_at: jiff::Timestamp::UNIX_EPOCH,
            updated_at: jiff::Timestamp::UNIX_EPOCH,
        }]
    }

    fn tz() -> TimeZone {
        TimeZone::UTC
    }

    #[test]
    fn an_untouched_or_emptied_file_changes_nothing() {
        let text = text_of(&link(), &tz());
        assert!(
            text.contains("url = \"https://shop.example.com/spring\""),
            "{text}"
        );
        assert!(text.contains("key = \"DE\""), "{text}");
        assert_eq!(read(&link(), &text, &spaces(), &tz()), Edited::Unchanged);
        assert_eq!(read(&link(), "", &spaces(), &tz()), Edited::Unchanged);
        assert_eq!(
            read(&link(), "# all gone\n", &spaces(), &tz()),
            Edited::Unchanged
        );
    }

    #[test]
    fn only_the_changed_fields_are_sent() {
        let text = text_of(&link(), &tz())
            .replace("space = \"\"", "space = \"launch\"")
            .replace("public = false", "public = true");
        let Edited::Update(input) = read(&link(), &text, &spaces(), &tz()) else {
            panic!()
        };
        assert_eq!(
            *input,
            LinkInput {
                space: Some("3".into()),
                public: Some("1".into()),
                ..LinkInput::default()
            }
        );
    }

    #[test]
    fn mistakes_come_back_at_the_top_and_go_when_fixed() {
        let text = text_of(&link(), &tz())
            .replace("expiration_date = \"\"", "expiration_date = \"2027-13-40\"")
            .replace("expiration_time = \"\"", "expiration_time = \"18:00\"")
            .replace("space = \"\"", "space = \"Nope\"");
        let Edited::Mistakes(mistakes) = read(&link(), &text, &spaces(), &tz()) else {
            panic!()
        };
        assert_eq!(mistakes.len(), 2, "{mistakes:?}");
        assert!(mistakes[0].contains("no space is named \"Nope\" (there are: Launch)"));
        assert!(mistakes[1].starts_with("expiration_date: must be a date"));
        let shown = with_mistakes(&text, &mistakes);
        assert!(shown.starts_with("# error: space: no space"), "{shown}");
        // Shown again after a second try: the old lines go, the new ones come.
        let fixed = shown.replace("\"Nope\"", "\"Launch\"");
        let Edited::Mistakes(again) = read(&link(), &fixed, &spaces(), &tz()) else {
            panic!()
        };
        let shown = with_mistakes(&fixed, &again);
        assert_eq!(shown.matches(ERROR_MARK).count(), 1, "{shown}");
        let fixed = shown.replace("2027-13-40", "2027-12-24");
        let Edited::Update(input) = read(&link(), &fixed, &spaces(), &tz()) else {
            panic!()
        };
        assert_eq!(input.expiration_date.as_deref(), Some("2027-12-24"));
        assert_eq!(input.space.as_deref(), Some("3"));
    }

    #[test]
    fn a_changed_rule_sends_the_type_and_its_whole_list() {
        let text = text_of(&link(), &tz()).replace("key = \"DE\"", "key = \"FR\"");
        let Edited::Update(input) = read(&link(), &text, &spaces(), &tz()) else {
            panic!()
        };
        assert_eq!(input.target_type.as_deref(), Some("geo"));
        assert_eq!(
            input.geo,
            Some(vec![RuleInput::new("FR", "https://shop.example.de/spring")])
        );
        assert_eq!(input.url, None);
    }

    #[test]
    fn redirect_rules_are_edited_as_their_text() {
        let mut ruled = link();
        ruled.options.rules =
            vec![crate::domain::parse_rule("language de => https://shop.example.de/").unwrap()];
        let text = text_of(&ruled, &tz());
        assert!(
            text.contains("rules = [\"language de => https://shop.example.de/\"]"),
            "{text}"
        );
        assert_eq!(read(&ruled, &text, &spaces(), &tz()), Edited::Unchanged);
        let added = text.replace(
            "rules = [\"language de => https://shop.example.de/\"]",
            "rules = [\"query ref => https://q.example/\", \"language de => https://shop.example.de/\", \"\"]",
        );
        let Edited::Update(input) = read(&ruled, &added, &spaces(), &tz()) else {
            panic!()
        };
        assert_eq!(
            input.rules,
            Some(vec![
                "query ref => https://q.example/".to_owned(),
                "language de => https://shop.example.de/".to_owned()
            ])
        );
        assert_eq!((input.target_type, input.url), (None, None));
        let bad = text.replace("language de", "colour de");
        let Edited::Mistakes(mistakes) = read(&ruled, &bad, &spaces(), &tz()) else {
            panic!()
        };
        assert!(mistakes[0].starts_with("rules.0: "), "{mistakes:?}");
        let cleared = text.replace(
            "rules = [\"language de => https://shop.example.de/\"]",
            "rules = []",
        );
        let Edited::Update(input) = read(&ruled, &cleared, &spaces(), &tz()) else {
            panic!()
        };
        assert_eq!(input.rules, Some(vec![]));
    }

    #[test]
    fn text_that_is_not_toml_says_where() {
        let Edited::Mistakes(mistakes) = read(&link(), "url = \n", &spaces(), &tz()) else {
            panic!()
        };
        assert!(mistakes[0].contains("line 1"), "{mistakes:?}");
    }
}
