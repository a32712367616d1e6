use proptest::prelude::*;

use super::*;

fn at(s: &str) -> Timestamp {
    s.parse().unwrap()
}

fn visitor() -> Visitor<'static> {
    Visitor {
        // A Wednesday, 10:30 in Paris.
        now: at("2030-01-02T09:30:00Z"),
        accept_language: None,
        query: None,
        address: None,
        browser: None,
        country: None,
        platform: None,
        roll: 0,
    }
}

fn rules(texts: &[&str]) -> Vec<Rule> {
    let mut errors = FieldErrors::default();
    let rules = parse_rules(texts, &mut errors);
    assert!(errors.is_empty(), "{errors:?}");
    rules
}

fn sent(rules: &[Rule], v: &Visitor<'_>) -> Option<usize> {
    first_match(rules, v).map(|(i, _)| i)
}

#[test]
fn each_kind_matches_its_visits_and_no_others() {
    let r = rules(&["language de,pt-BR => https://de.example"]);
    for (header, hit) in [
        ("de-CH,en;q=0.5", true),
        ("en, pt-br;q=0.8", true),
        ("pt", false),
        ("deu", false),
        ("en, de;q=0", false),
        ("", false),
    ] {
        let v = Visitor {
            accept_language: Some(header),
            ..visitor()
        };
        assert_eq!(sent(&r, &v).is_some(), hit, "{header}");
    }
    assert_eq!(sent(&r, &visitor()), None);

    let after = rules(&["after 2030-01-02T09:30Z => https://a.example"]);
    let before = rules(&["before 2030-01-02T09:30Z => https://b.example"]);
    assert_eq!(
        sent(&after, &visitor()),
        Some(0),
        "the instant itself is after"
    );
    assert_eq!(sent(&before, &visitor()), None);
    let earlier = Visitor {
        now: at("2030-01-02T09:29:59Z"),
        ..visitor()
    };
    assert_eq!(
        (sent(&after, &earlier), sent(&before, &earlier)),
        (None, Some(0))
    );

    let q = rules(&[
        "query utm_source=news => https://q.example",
        "query ref => https://r.example",
    ]);
    for (query, want) in [
        (Some("utm_source=news&x=1"), Some(0)),
        (Some("utm_source=other&ref"), Some(1)),
        (Some("utm_source=news%20"), None),
        (Some("ref="), Some(1)),
        (None, None),
    ] {
        let v = Visitor { query, ..visitor() };
        assert_eq!(sent(&q, &v), want, "{query:?}");
    }

    let c = rules(&[
        "cidr 10.1.0.0/16 => https://in.example",
        "cidr 2001:db8::1 => https://v6.example",
    ]);
    for (addr, want) in [
        ("10.1.200.3", Some(0)),
        ("10.2.0.1", None),
        ("2001:db8::1", Some(1)),
        ("2001:db8::2", None),
    ] {
        let v = Visitor {
            address: Some(addr.parse().unwrap()),
            ..visitor()
        };
        assert_eq!(sent(&c, &v), want, "{addr}");
    }

    let b = rules(&[
        "browser firefox => https://ff.example",
        "country de => https://de.example",
        "platform ios => https://ios.example",
    ]);
    assert_eq!(
        b[1].when,
        Condition::Country {
            country: "DE".into()
        },
        "canonical"
    );
    assert_eq!(
        b[2].when,
        Condition::Platform {
            platform: "iOS".into()
        }
    );
    let v = Visitor {
        browser: Some("Firefox"),
        ..visitor()
    };
    assert_eq!(sent(&b, &v), Some(0));
    let v = Visitor {
        country: Some("DE"),
        platform: Some(Platform::Ios),
        ..visitor()
    };
    assert_eq!(sent(&b, &v), Some(1), "the first match wins");
    let v = Visitor {
        platform: Some(Platform::Ios),
        ..visitor()
    };
    assert_eq!(sent(&b, &v), Some(2));
}

#[test]
fn a_schedule_is_read_in_its_zone_and_wraps_past_midnight() {
    // 2030-01-02 is a Wednesday; 09:30 UTC is 10:30 in Paris.
    let office = rules(&["schedule mon,tue,wed,thu,fri 09-17 Europe/Paris => https://o.example"]);
    let weekend = rules(&["schedule sat,sun 00-00 UTC => https://w.example"]);
    let night = rules(&["schedule fri 22-06 UTC => https://n.example"]);
    let tokyo = rules(&["schedule 09-17 Asia/Tokyo => https://t.example"]);
    let at_ = |s: &str| Visitor {
        now: at(s),
        ..visitor()
    };
    assert_eq!(sent(&office, &at_("2030-01-02T09:30:00Z")), Some(0));
    assert_eq!(
        sent(&office, &at_("2030-01-02T16:00:00Z")),
        None,
        "17:00 in Paris"
    );
    assert_eq!(
        sent(&office, &at_("2030-01-05T09:30:00Z")),
        None,
        "a Saturday"
    );
    assert_eq!(sent(&weekend, &at_("2030-01-05T23:59:00Z")), Some(0));
    assert_eq!(sent(&weekend, &at_("2030-01-07T00:00:00Z")), None);
    assert_eq!(
        sent(&night, &at_("2030-01-04T23:00:00Z")),
        Some(0),
        "Friday night"
    );
    assert_eq!(
        sent(&night, &at_("2030-01-05T05:59:00Z")),
        Some(0),
        "still Friday's night"
    );
    assert_eq!(
        sent(&night, &at_("2030-01-05T23:00:00Z")),
        None,
        "Saturday night"
    );
    assert_eq!(sent(&night, &at_("2030-01-04T12:00:00Z")), None);
    assert_eq!(
        sent(&tokyo, &at_("2030-01-02T09:30:00Z")),
        None,
        "18:30 in Tokyo"
    );
    assert_eq!(sent(&tokyo, &at_("2030-01-02T01:00:00Z")), Some(0));
}

#[test]
fn a_split_goes_by_weight_until_its_end_then_the_winner_takes_all() {
    let r = rules(&[
        "split 1*https://a.example,3*https://b.example until 2030-02-01T00:00Z => https://b.example",
    ]);
    let mut counts = [0; 2];
    for roll in 0..400 {
        let v = Visitor { roll, ..visitor() };
        let (_, url) = first_match(&r, &v).unwrap();
        counts[usize::from(url == "https://b.example")] += 1;
    }
    assert_eq!(counts, [100, 300]);
    let ended = Visitor {
        now: at("2030-02-01T00:00:00Z"),
        roll: 0,
        ..visitor()
    };
    assert_eq!(first_match(&r, &ended), Some((0, "https://b.example")));
    let zero = rules(&["split 0*https://a.example,1*https://b.example => https://w.example"]);
    for roll in 0..10 {
        let v = Visitor { roll, ..visitor() };
        assert_eq!(first_match(&zero, &v).unwrap().1, "https://b.example");
    }
}

#[test]
fn errors_name_the_rule_and_its_field() {
    let mut errors = FieldErrors::default();
    let got = parse_rules(
        &[
            "language fr => https://ok.example",
            "country XX => https://x.example",
            "schedule mon 09-25 Mars/Olympus => https://x.example",
            "query => javascript:alert(1)",
            "split 0*https://a.example => https://w.example",
            "platform Amiga => https://x.example",
            "language en_US!! => https://x.example",
        ],
        &mut errors,
    );
    assert!(got.is_empty() || got.len() == 1);
    for field in [
        "rules.1.country",
        "rules.2.to",
        "rules.2.tz",
        "rules.3.name",
        "rules.3.url",
        "rules.4.arms",
        "rules.5.platform",
        "rules.6.languages",
    ] {
        assert!(errors.contains(field), "{field}: {errors:?}");
    }
    assert!(!errors.contains("rules.0.url"));

    let mut errors = FieldErrors::default();
    parse_rules(
        &[
            "cidr 10.0.0.0/33 => https://a.example",
            "hours 9 => x",
            "nothing",
        ],
        &mut errors,
    );
    for field in ["rules.0", "rules.1", "rules.2"] {
        assert!(errors.contains(field), "{field}: {errors:?}");
    }

    let mut errors = FieldErrors::default();
    let many: Vec<String> = (0..=RULES_MAX)
        .map(|i| format!("query q{i} => https://a.example"))
        .collect();
    assert!(parse_rules(&many, &mut errors).is_empty());
    assert!(errors.contains("rules"));
}

#[test]
fn the_text_form_and_the_json_read_back_what_they_wrote() {
    let texts = [
        "language fr,de-ch => https://a.example/fr",
        "after 2030-01-01T00:00:00Z => https://a.example/new",
        "before 2030-01-01T00:00:00Z => https://a.example/old",
        "schedule mon,fri 09-17 Europe/Paris => https://a.example/office",
        "query utm_source=news => https://a.example/q",
        "query ref => https://a.example/r",
        "cidr 10.0.0.0/8 => https://a.example/lan",
        "browser Firefox => https://a.example/ff",
        "country DE => https://a.example/de",
        "platform iOS => https://a.example/ios",
        "split 30*https://a.example/a,70*https://a.example/b until 2030-02-01T00:00:00Z => https://a.example/b",
    ];
    let parsed = rules(&texts);
    let shown: Vec<String> = parsed.iter().map(ToString::to_string).collect();
    assert_eq!(shown, texts);
    let json = serde_json::to_string(&parsed).unwrap();
    assert!(
        json.contains(r#"{"kind":"cidr","cidr":"10.0.0.0/8","url":"https://a.example/lan"}"#),
        "{json}"
    );
    let back: Vec<Rule> = serde_json::from_str(&json).unwrap();
    assert_eq!(back, parsed);
    assert_eq!(rule_label(2, &parsed[2]), "rule 3 before");
    assert_eq!(rule_urls(&parsed[10..]).count(), 3);
}

/// Every kind has an example, and each example is a rule of that kind: the form shows them as
/// hints.
#[test]
fn each_kind_has_an_example_that_reads_back() {
    for (kind, example) in RULE_KINDS {
        let text = format!("{kind} {example} => https://a.example/");
        let parsed = rules(&[text.as_str()]);
        assert_eq!(parsed[0].when.kind(), kind);
        assert_eq!(parse_rule(&parsed[0].to_string()).unwrap(), parsed[0]);
    }
    assert!(parse_rule("colour red => https://a.example/").is_err());
}

fn any_visitor() -> impl Strategy<Value = (Option<String>, Option<String>, Option<String>, u64, i64)>
{
    (
        proptest::option::of(any::<String>()),
        proptest::option::of("[a-z=&%0-9]{0,30}"),
        proptest::option::of(any::<String>()),
        any::<u64>(),
        -10_000_000_000i64..10_000_000_000i64,
    )
}

proptest! {
    #[test]
    fn any_text_is_parsed_or_refused_without_panicking(text in any::<String>(), tail in "[ -~]{0,40}") {
        let mut errors = FieldErrors::default();
        let _ = parse_rules(&[text.as_str(), tail.as_str()], &mut errors);
    }

    #[test]
    fn matching_never_panics_and_a_match_is_one_of_the_rules_urls(
        (lang, query, browser, roll, secs) in any_visitor()
    ) {
        let r = rules(&[
            "language fr,de-ch => https://a.example/1",
            "schedule sat 22-02 America/New_York => https://a.example/2",
            "query a=b => https://a.example/3",
            "browser Firefox => https://a.example/4",
            "split 1*https://a.example/5,2*https://a.example/6 => https://a.example/7",
        ]);
        let v = Visitor {
            now: Timestamp::from_second(secs).unwrap(),
            accept_language: lang.as_deref(),
            query: query.as_deref(),
            address: None,
            browser: browser.as_deref(),
            country: None,
            platform: None,
            roll,
        };
        let (i, url) = first_match(&r, &v).expect("the split always matches");
        prop_assert!(i <= 4);
        prop_assert!(rule_urls(&r).any(|u| u == url));
    }
}
