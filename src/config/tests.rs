use super::*;
use crate::backend::local::StoreLocation;

fn paths() -> Paths {
    Paths::new(
        "/cfg/linkdeck/config.toml".into(),
        "/data/linkdeck".into(),
        "/state/linkdeck".into(),
    )
}

fn parse(text: &str) -> Result<Config, ConfigError> {
    Config::parse(text, Path::new("/cfg/linkdeck/config.toml"), &paths())
}

#[test]
fn empty_file_gives_the_builtin_local_profile() {
    let config = parse("").unwrap();
    assert_eq!(config.default_profile, "local");
    let resolved = config.resolve(&Overrides::default(), &paths()).unwrap();
    match resolved {
        Resolved::Local { db, public_url, .. } => {
            assert_eq!(db, StoreLocation::File("/data/linkdeck/linkdeck.db".into()));
            assert_eq!(public_url, "http://127.0.0.1:8080");
        }
        other => panic!("expected local, got {other:?}"),
    }
}

#[test]
fn full_file_parses() {
    let config = parse(
        r#"
default_profile = "work"

[profiles.home]
backend = "local"
db = "home.db"
public_url = "https://sho.rt/"
timezone = "Europe/Berlin"
fetch_titles = true

[profiles.work]
backend = "remote"
base_url = "https://links.example.com"
api_key_env = "WORK_KEY"
timeout_secs = 5
timezone = "America/New_York"

[ui]
theme = "light"
mouse = true

[keys]
quit = "Z"

[serve]
listen = "0.0.0.0:9000"
redirect_status = 302
geo_header = "CF-IPCountry"
"#,
    )
    .unwrap();
    assert_eq!(config.default_profile, "work");
    assert_eq!(config.ui.theme, Theme::Light);
    assert!(config.ui.mouse);
    assert_eq!(config.keys["quit"], "Z");
    assert_eq!(config.serve.redirect_status.code(), 302);
    assert_eq!(config.serve.rate_limit_per_minute, 600);
    assert_eq!(config.serve.password_attempts_per_minute, 10);

    let home = config
        .resolve(
            &Overrides {
                profile: Some("home".into()),
                ..Default::default()
            },
            &paths(),
        )
        .unwrap();
    assert_eq!(
        home,
        Resolved::Local {
            profile: "home".into(),
            db: StoreLocation::File("/cfg/linkdeck/home.db".into()),
            public_url: "https://sho.rt".into(),
            timezone: TimeZone::get("Europe/Berlin").unwrap(),
            fetch_titles: true,
            trash_days: 30,
        }
    );
    match config.resolve(&Overrides::default(), &paths()).unwrap() {
        Resolved::Remote {
            base_url,
            api_key,
            timeout,
            ..
        } => {
            assert_eq!(base_url, "https://links.example.com");
            assert_eq!(api_key, ApiKeySource::Env("WORK_KEY".into()));
            assert_eq!(timeout, Duration::from_secs(5));
        }
        other => panic!("expected remote, got {other:?}"),
    }
}

#[test]
fn errors_name_the_line_and_key() {
    let err = parse("[ui]\ntheme = \"dark\"\ncolour = 3\n").unwrap_err().0;
    assert!(err.contains("line 3"), "{err}");
    assert!(err.contains("colour"), "{err}");

    let err = parse("[profiles.x]\nbackend = \"local\"\ntimezone = \"Mars/Base\"\n")
        .unwrap_err()
        .0;
    assert!(err.contains("line 3"), "{err}");
    assert!(err.contains("Mars/Base"), "{err}");

    let err = parse("[serve]\nredirect_status = 303\n").unwrap_err().0;
    assert!(
        err.contains("line 2") && err.contains("must be 301, 302, 307 or 308, not 303"),
        "{err}"
    );

    let err = parse("[profiles.x]\nbackend = \"local\"\nbase_url = \"https://a.b\"\n")
        .unwrap_err()
        .0;
    assert!(
        err.contains("base_url") && err.contains("profiles.x"),
        "{err}"
    );

    let err = parse("default_profile = \"nope\"\n").unwrap_err().0;
    assert!(err.contains("line 1") && err.contains("nope"), "{err}");

    let err = parse("[profiles.r]\nbackend = \"remote\"\nbase_url = \"https://a.b\"\n")
        .unwrap_err()
        .0;
    assert!(err.contains("api_key_env"), "{err}");

    let err = parse(
        "[profiles.r]\nbackend = \"remote\"\nbase_url = \"https://a.b\"\n\
         api_key_env = \"K\"\nfetch_titles = true\n",
    )
    .unwrap_err()
    .0;
    assert!(
        err.contains("fetch_titles") && err.contains("local"),
        "{err}"
    );

    let err = parse("[profiles.x]\nbackend = \"local\"\nfetch_titles = \"yes\"\n")
        .unwrap_err()
        .0;
    assert!(
        err.contains("line 3") && err.contains("fetch_titles"),
        "{err}"
    );
}

#[test]
fn errors_quote_a_short_excerpt_and_never_a_key() {
    let key = "ldk_0123456789abcdefghijklmnopqrstuvwxyz";
    let text = format!(
        "[profiles.r]\nbackend = \"remote\"\nbase_url = \"https://a.b\"\napi_key = \"{key}\"\n"
    );
    let err = parse(&text).unwrap_err().0;
    assert!(err.contains("line 4") && err.contains("api_key"), "{err}");
    assert!(!err.contains("0123456789"), "the key was printed: {err}");
    // The names the parser expected are the config's own, shown whole however long.
    assert!(
        err.contains("`api_key_command`") && err.contains("`db_password_command`"),
        "{err}"
    );
    // A value in the wrong type is quoted by the parser's message too.
    let err = parse(&format!("[ui]\ntheme = \"{key}\"\n")).unwrap_err().0;
    assert!(
        err.contains("line 2") && !err.contains("0123456789"),
        "{err}"
    );
    let err = parse(&format!(
        "[profiles.x]\nbackend = \"local\"\nfetch_titles = \"{key}\"\n"
    ))
    .unwrap_err()
    .0;
    assert!(
        err.contains("fetch_titles") && !err.contains("0123456789"),
        "{err}"
    );
    // A huge line is cut to a short excerpt.
    let huge = format!("[ui]\ntheme = dark{}\n", "x".repeat(5_000_000));
    let err = parse(&huge).unwrap_err().0;
    assert!(err.len() < 600, "{} bytes: {}", err.len(), &err[..200]);
    assert!(err.contains("line 2"), "{err}");
}

#[test]
fn command_line_overrides() {
    let config = parse("").unwrap();
    let db = config
        .resolve(
            &Overrides {
                db: Some(StoreLocation::File("/tmp/x.db".into())),
                ..Default::default()
            },
            &paths(),
        )
        .unwrap();
    assert!(
        matches!(db, Resolved::Local { ref db, .. } if *db == StoreLocation::File("/tmp/x.db".into()))
    );

    let remote = config
        .resolve(
            &Overrides {
                remote: Some("https://a.example".into()),
                api_key_env: Some("K".into()),
                ..Default::default()
            },
            &paths(),
        )
        .unwrap();
    assert!(!remote.is_local());
    // The flag names itself, not the default profile it did not use.
    assert_eq!(remote.profile_name(), REMOTE_FLAG);

    let err = config
        .resolve(
            &Overrides {
                remote: Some("https://a.example".into()),
                ..Default::default()
            },
            &paths(),
        )
        .unwrap_err();
    assert!(err.0.contains("--api-key-env"), "{err}");

    let err = config
        .resolve(
            &Overrides {
                profile: Some("missing".into()),
                ..Default::default()
            },
            &paths(),
        )
        .unwrap_err();
    assert!(
        err.0.contains("missing") && err.0.contains("local"),
        "{err}"
    );
}

#[test]
fn the_example_config_parses() {
    let text = include_str!("../../config.example.toml");
    let config = parse(text).unwrap();
    let expected = Config {
        source: config.source.clone(),
        ..Config::default()
    };
    assert_eq!(config, expected);
}

/// Every commented-out key of the example, uncommented, is accepted too: the example documents
/// only keys that exist.
#[test]
fn the_example_config_with_every_key_set_parses() {
    let text = include_str!("../../config.example.toml");
    let mut out = String::new();
    let mut seen_api_key = false;
    for line in text.lines() {
        let body = line.strip_prefix("# ").unwrap_or("");
        let is_key = body.split_once(" = ").is_some_and(|(k, _)| {
            !k.is_empty() && k.bytes().all(|b| b.is_ascii_lowercase() || b == b'_')
        });
        // api_key_env and api_key_command exclude each other: keep the first.
        if body.starts_with("api_key_") {
            if seen_api_key {
                continue;
            }
            seen_api_key = true;
        }
        if is_key || body.starts_with("[profiles.") {
            out.push_str(body);
        } else {
            out.push_str(line);
        }
        out.push('\n');
    }
    let config = parse(&out).unwrap_or_else(|e| panic!("{e}\n{out}"));
    assert!(matches!(config.profiles["work"], Profile::Remote(_)));
    assert_eq!(config.keys["quit"], "q");
    assert_eq!(config.serve.geo_header.as_deref(), Some("CF-IPCountry"));
    assert!(config.read_only.contains("local"));
}

#[test]
fn key_mistakes_are_found_on_reading_and_name_the_line() {
    for (entry, needle) in [
        ("launch = \"l\"", "unknown action `launch`"),
        ("quit = \"hyper-q\"", "`hyper-q`"),
        ("refresh = \"q\"", "bound to both"),
    ] {
        let text = format!("[ui]\ntheme = \"dark\"\n\n[keys]\nhelp = \"?\"\n{entry}\n");
        let err = parse(&text).unwrap_err().0;
        assert!(err.contains("config.toml, line 6"), "{err}");
        assert!(err.contains(needle), "{err}");
    }
    // The same key in different places is fine: `y` answers a dialog and copies in a list.
    parse("[keys]\nyes = \"y\"\ncopy_short_url = \"y\"\n").unwrap();
}

#[test]
fn a_bad_base_url_fails_at_load_with_file_and_line() {
    // A URL with credentials used to pass here and fail only when the remote backend was built;
    // a public URL is a base URL too, and short links built on one with a query would break.
    for (text, line, words) in [
        (
            "[profiles.r]\nbackend = \"remote\"\nbase_url = \"https://me:hunter2@links.example\"\n\
             api_key_env = \"K\"\n",
            "line 3",
            "must not hold credentials",
        ),
        (
            "[serve]\npublic_url = \"https://sho.rt/?utm=x\"\n",
            "line 2",
            "must not have a query or fragment",
        ),
    ] {
        let err = parse(text).unwrap_err().0;
        assert!(
            err.contains("/cfg/linkdeck/config.toml") && err.contains(line) && err.contains(words),
            "{err}"
        );
        assert!(!err.contains("hunter2"), "the password was printed: {err}");
    }
}

#[test]
fn a_database_password_command_belongs_to_a_postgresql_database() {
    let err = parse(
        "[profiles.home]\nbackend = \"local\"\ndb = \"home.db\"\ndb_password_command = \"pass show db\"\n",
    )
    .unwrap_err()
    .to_string();
    assert!(
        err.contains("db_password_command applies to a PostgreSQL db"),
        "{err}"
    );
    let err = parse(
        "[profiles.work]\nbackend = \"remote\"\nbase_url = \"https://l.example\"\napi_key_env = \"K\"\ndb_password_command = \"x\"\n",
    )
    .unwrap_err()
    .to_string();
    assert!(
        err.contains("db_password_command applies only to profiles with backend = \"local\""),
        "{err}"
    );
    let config = parse(
        "[profiles.shared]\nbackend = \"local\"\ndb = \"postgres://links@db/links\"\ndb_password_command = \"pass show db\"\n",
    )
    .unwrap();
    let Some(Profile::Local(LocalProfile {
        db: Some(StoreLocation::Postgres(target)),
        ..
    })) = config.profiles.get("shared")
    else {
        panic!(
            "not a PostgreSQL profile: {:?}",
            config.profiles.get("shared")
        );
    };
    assert_eq!(
        target,
        &linkdeck_target("postgres://links@db/links").with_password_command("pass show db")
    );
}

#[test]
fn a_postgresql_profile_takes_tls_settings_with_its_root_beside_the_config() {
    let config = parse(
        "[profiles.shared]\nbackend = \"local\"\ndb = \"postgres://links@db/links\"\n\
         db_sslmode = \"verify-full\"\ndb_sslrootcert = \"certs/root.pem\"\n",
    )
    .unwrap();
    let Some(Profile::Local(LocalProfile {
        db: Some(StoreLocation::Postgres(target)),
        ..
    })) = config.profiles.get("shared")
    else {
        panic!("not a PostgreSQL profile");
    };
    let expected = linkdeck_target("postgres://links@db/links?sslmode=verify-full")
        .with_tls_setting("sslrootcert", "/cfg/linkdeck/certs/root.pem")
        .unwrap();
    assert_eq!(target.tls(), expected.tls());

    for (text, words) in [
        (
            "[profiles.home]\nbackend = \"local\"\ndb = \"home.db\"\ndb_sslmode = \"require\"\n",
            "db_sslmode applies to a PostgreSQL db",
        ),
        (
            "[profiles.work]\nbackend = \"remote\"\nbase_url = \"https://l.example\"\napi_key_env = \"K\"\ndb_sslrootcert = \"x\"\n",
            "db_sslrootcert applies only to profiles with backend = \"local\"",
        ),
        (
            "[profiles.shared]\nbackend = \"local\"\ndb = \"postgres://links@db/links?sslmode=require\"\ndb_sslmode = \"disable\"\n",
            "db_sslmode: the db URL sets sslmode too",
        ),
        (
            "[profiles.shared]\nbackend = \"local\"\ndb = \"postgres://links@db/links\"\ndb_sslmode = \"strict\"\n",
            "db_sslmode must be one of disable, prefer, require, verify-ca, verify-full",
        ),
    ] {
        let err = parse(text).unwrap_err().to_string();
        assert!(err.contains(words) && err.contains("line 1"), "{err}");
    }
}

fn linkdeck_target(url: &str) -> crate::backend::local::pg::PgTarget {
    crate::backend::local::pg::PgTarget::parse(url).unwrap()
}

/// The shortcut to the system's zone finds the zone jiff finds, under the same name.
#[test]
fn the_system_zone_is_the_one_jiff_finds() {
    let ours = super::system_zone();
    let jiffs = TimeZone::system();
    assert_eq!(ours.iana_name(), jiffs.iana_name());
    for second in [0, 1_000_000_000, 1_800_000_000, 2_200_000_000] {
        let at = jiff::Timestamp::from_second(second).unwrap();
        assert_eq!(ours.to_offset(at), jiffs.to_offset(at), "{at}");
    }
}

#[test]
fn an_unknown_column_is_refused_with_the_choices() {
    let err = parse("[ui]\ncolumns = [\"destination\", \"alias\"]\n")
        .unwrap_err()
        .to_string();
    assert!(err.contains("line 2") && err.contains("alias"), "{err}");
    assert!(
        err.contains("destination") && err.contains("expires"),
        "{err}"
    );
    let config = parse("[ui]\ncolumns = [\"clicks\"]\n").unwrap();
    assert_eq!(config.ui.columns, [crate::config::Column::Clicks]);
}

#[test]
fn trusted_proxies_are_addresses_and_ranges() {
    let config = parse(
        "[serve]\ntrusted_proxies = [\"127.0.0.1/32\", \"::1\", \"10.0.0.0/8\", \
         \" fd00::/8 \", \"::ffff:192.168.0.0/112\", \"::ffff:172.16.0.1\"]\n\
         forwarded_header = \"forwarded\"\n",
    )
    .unwrap();
    let shown: Vec<String> = config
        .serve
        .trusted_proxies
        .iter()
        .map(ToString::to_string)
        .collect();
    assert_eq!(
        shown,
        [
            "127.0.0.1",
            "::1",
            "10.0.0.0/8",
            "fd00::/8",
            "192.168.0.0/16",
            "172.16.0.1"
        ]
    );
    assert_eq!(config.serve.forwarded_header, ForwardedHeader::Forwarded);
    let default = parse("[serve]\n").unwrap();
    assert!(default.serve.trusted_proxies.is_empty());
    assert_eq!(
        default.serve.forwarded_header,
        ForwardedHeader::XForwardedFor
    );
}

#[test]
fn a_bad_trusted_proxy_is_named_with_its_line() {
    for (entry, words) in [
        ("10.0.0.0/33", "no valid prefix length (/0 to /32 for IPv4)"),
        ("localhost", "is not an IP address or a CIDR range"),
        ("10.0.0.1/8", "the range starts at 10.0.0.0/8"),
        ("", "is not an IP address"),
        ("fd00::/x", "no valid prefix length (/0 to /128 for IPv6)"),
    ] {
        let text = format!(
            "[serve]\nlisten = \"127.0.0.1:8080\"\ntrusted_proxies = [\"::1\", \"{entry}\"]\n"
        );
        let err = parse(&text).unwrap_err().0;
        assert!(
            err.contains("config.toml, line 3")
                && err.contains("trusted_proxies: ")
                && err.contains(&format!("\"{entry}\""))
                && err.contains(words),
            "{entry}: {err}"
        );
    }
    // A long entry is located by its line and column, not printed back: it may be a secret
    // typed into the wrong line.
    let err = parse("[serve]\ntrusted_proxies = [\"ldk_0123456789abcdef\"]\n")
        .unwrap_err()
        .0;
    assert!(
        err.contains("line 2") && err.contains("trusted_proxies: ") && !err.contains("ldk_0123"),
        "{err}"
    );
    let err = parse("[serve]\nforwarded_header = \"X-Real-IP\"\n")
        .unwrap_err()
        .0;
    assert!(
        err.contains("line 2") && err.contains("neither X-Forwarded-For nor Forwarded"),
        "{err}"
    );
}

#[test]
fn warm_aliases_is_a_count_and_zero_starts_the_cache_empty() {
    assert_eq!(parse("[serve]\n").unwrap().serve.warm_aliases, 100_000);
    assert_eq!(
        parse("[serve]\nwarm_aliases = 0\n")
            .unwrap()
            .serve
            .warm_aliases,
        0
    );
    let err = parse("[serve]\nlisten = \"127.0.0.1:8080\"\nwarm_aliases = -5\n")
        .unwrap_err()
        .0;
    assert!(
        err.contains("line 3") && err.contains("warm_aliases"),
        "{err}"
    );
}

#[test]
fn backup_every_takes_a_period_with_its_unit() {
    let config = parse("[serve]\nbackup_every = \"6h\"\nbackup_keep = 3\n").unwrap();
    assert_eq!(
        config.serve.backup_every,
        Some(super::Every(Duration::from_secs(6 * 3600)))
    );
    assert_eq!(config.serve.backup_keep, 3);
    assert_eq!(config.serve.backup_dir, None);
    let e = parse("[serve]\nbackup_every = \"6 hours\"\n")
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("backup_every") && e.contains("s, m, h, d or w"),
        "{e}"
    );
}
