//! Property tests: the validators take whatever a person or a client sends and never panic;
//! what they accept satisfies the rules they promise.

use jiff::tz::TimeZone;
use proptest::prelude::*;

use super::{
    LinkInput, Mode, RuleInput, SpaceInput, validate_alias, validate_link_input,
    validate_space_input, validate_url,
};

/// Mostly plausible text, sometimes anything at all.
fn text() -> BoxedStrategy<String> {
    prop_oneof![
        Just(String::new()),
        "[0-9]{1,3}",
        "(https?|ftp|javascript|data)://[a-zA-Z0-9.-]{0,20}(/[ -~]{0,20})?",
        "[a-zA-Z0-9_-]{1,12}",
        "[0-9]{4}-[0-9]{2}-[0-9]{2}",
        "[0-9]{2}:[0-9]{2}",
        any::<String>(),
    ]
    .boxed()
}

fn field() -> BoxedStrategy<Option<String>> {
    proptest::option::of(text()).boxed()
}

fn rules() -> impl Strategy<Value = Option<Vec<RuleInput>>> {
    proptest::option::of(proptest::collection::vec(
        (field(), field()).prop_map(|(key, value)| RuleInput { key, value }),
        0..4,
    ))
}

/// Boxed so the strategy's type (and its stack use in debug builds) stays small.
fn link_input() -> BoxedStrategy<LinkInput> {
    (
        proptest::collection::vec(field(), 20),
        rules(),
        rules(),
        rules(),
    )
        .prop_map(|(f, geo, platform, rotation)| {
            let mut f = f.into_iter();
            let mut next = || f.next().flatten();
            LinkInput {
                url: next(),
                alias: next(),
                password: next(),
                space: next(),
                domain: next(),
                disabled: next(),
                public: next(),
                expiration_url: next(),
                expiration_date: next(),
                expiration_time: next(),
                expiration_clicks: next(),
                target_type: next(),
                tags: next(),
                forward_query: next(),
                forward_path: next(),
                allow_indexing: next(),
                preview_title: next(),
                preview_description: next(),
                preview_image: next(),
                rules: next().map(|r| vec![r]),
                geo,
                platform,
                rotation,
            }
        })
        .boxed()
}

const FIELDS: &[&str] = &[
    "url",
    "alias",
    "password",
    "space",
    "domain",
    "disabled",
    "public",
    "expiration_url",
    "expiration_date",
    "expiration_time",
    "expiration_clicks",
    "target_type",
    "tags",
    "forward_query",
    "forward_path",
    "allow_indexing",
    "preview_title",
    "preview_description",
    "preview_image",
];

proptest! {
    #![proptest_config(ProptestConfig::with_cases(400))]

    #[test]
    fn link_validation_never_panics_and_names_known_fields(
        input in link_input(),
        create in any::<bool>(),
        zone in prop_oneof![Just("UTC"), Just("America/New_York"), Just("Asia/Kathmandu")],
    ) {
        let mode = if create { Mode::Create } else { Mode::Update };
        let tz = TimeZone::get(zone).unwrap();
        match validate_link_input(&input, mode, &tz) {
            Ok(patch) => {
                if mode == Mode::Create {
                    prop_assert!(patch.url.is_some());
                }
                for url in patch.url.iter().chain(patch.expiration_url.iter().flatten()) {
                    prop_assert!(validate_url(url).is_ok());
                }
                if let Some(alias) = &patch.alias {
                    prop_assert!(validate_alias(alias).is_ok());
                }
                let rules = patch.geo.iter().chain(patch.platform.iter()).flatten();
                for rule in rules {
                    prop_assert!(validate_url(&rule.value).is_ok());
                }
            }
            Err(errors) => {
                prop_assert!(!errors.is_empty());
                for (field, messages) in errors.iter() {
                    let list = ["geo.", "platform.", "rotation.", "rules."].iter().any(|p| field.starts_with(p));
                    prop_assert!(FIELDS.contains(&field) || list, "unknown field {field}");
                    prop_assert!(messages.iter().all(|m| !m.is_empty()));
                }
            }
        }
    }

    #[test]
    fn space_validation_never_panics(name in field(), color in field(), create in any::<bool>()) {
        let mode = if create { Mode::Create } else { Mode::Update };
        if let Ok(patch) = validate_space_input(&SpaceInput { name, color }, mode)
            && let Some(name) = patch.name
        {
            prop_assert!(!name.is_empty() && name.chars().count() <= 32);
        }
    }
}
