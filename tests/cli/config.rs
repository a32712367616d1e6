//! Configuration: the config file, profiles, XDG locations and the `--remote` flags.

use crate::cli_support::Env;

/// `links list` under the config file `text`: the run that reads it and must refuse it.
fn refused_config(env: &Env, name: &str, text: &str) -> String {
    let config = env.write(name, text);
    let run = crate::cli_support::run(
        env.bare()
            .arg("--config")
            .arg(&config)
            .args(["links", "list"]),
    )
    .fails_with(9);
    assert!(run.stderr.contains(name), "{}", run.stderr);
    run.stderr
}

#[test]
fn a_base_url_with_credentials_is_refused_when_the_config_is_read() {
    let env = Env::new();
    let stderr = refused_config(
        &env,
        "creds.toml",
        "default_profile = \"far\"\n\n[profiles.far]\nbackend = \"remote\"\n\
         base_url = \"https://me:hunter2@links.example\"\napi_key_env = \"LINKDECK_KEY\"\n",
    );
    assert!(
        stderr.contains("line 5") && stderr.contains("must not hold credentials"),
        "{stderr}"
    );
    assert!(!stderr.contains("hunter2"), "{stderr}");
}

#[test]
fn a_redirect_status_is_refused_with_one_message_from_file_and_flag() {
    let env = Env::new();
    let words = "must be 301, 302, 307 or 308, not 303";
    let stderr = refused_config(&env, "serve.toml", "[serve]\nredirect_status = 303\n");
    assert!(
        stderr.contains("line 2") && stderr.contains(words),
        "{stderr}"
    );
    let run = env
        .run(&[
            "serve",
            "--listen",
            "127.0.0.1:0",
            "--redirect-status",
            "303",
        ])
        .fails_with(3);
    assert!(run.stderr.contains(words), "{}", run.stderr);
}

#[test]
fn bad_config_names_file_line_and_key() {
    let env = Env::new();
    let stderr = refused_config(
        &env,
        "bad.toml",
        "default_profile = \"home\"\n\n[profiles.home]\nbackend = \"local\"\ntimezone = \"Mars/Olympus\"\n",
    );
    assert!(stderr.contains("line 5"), "{stderr}");
    assert!(stderr.contains("timezone"), "{stderr}");
    assert!(stderr.contains("Mars/Olympus"), "{stderr}");

    let config = env.write("bad2.toml", "[ui]\ntheme = \"dark\"\nmosue = true\n");
    let run = crate::cli_support::run(
        env.bare()
            .arg("--config")
            .arg(&config)
            .args(["--json", "links", "list"]),
    )
    .fails_with(9);
    let err = run.error_json();
    assert_eq!(err["error"], "config");
    let message = err["message"].as_str().unwrap();
    assert!(
        message.contains("line 3") && message.contains("mosue"),
        "{message}"
    );

    let missing = env.path("nope.toml");
    let run = crate::cli_support::run(
        env.bare()
            .arg("--config")
            .arg(&missing)
            .args(["links", "list"]),
    )
    .fails_with(9);
    assert!(run.stderr.contains("nope.toml"), "{}", run.stderr);
}

#[test]
fn profiles_from_the_config_file() {
    let env = Env::new();
    let config = env.write(
        "profiles.toml",
        r#"
default_profile = "home"

[profiles.home]
backend = "local"
db = "home.db"
public_url = "https://go.example"
timezone = "Europe/Berlin"

[profiles.other]
backend = "local"
db = "other.db"
"#,
    );
    let run =
        |args: &[&str]| crate::cli_support::run(env.bare().arg("--config").arg(&config).args(args));
    // The expiry is read in the profile's zone: 10:00 in Berlin in May is 08:00 UTC.
    let link = run(&[
        "--json",
        "links",
        "create",
        "https://example.com",
        "--alias",
        "x",
        "--expires",
        "2030-05-01 10:00",
    ])
    .ok()
    .json();
    assert_eq!(link["short_url"], "https://go.example/x");
    assert_eq!(link["ends_at"], "2030-05-01T08:00:00Z");
    assert!(
        env.path("home.db").exists(),
        "relative db paths are read from the config's directory"
    );
    let other = run(&["--profile", "other", "--json", "links", "list"])
        .ok()
        .json();
    assert_eq!(other["total"], 0);
    // Export writes the expiry back in the same zone.
    let export = run(&["export"]).ok().stdout;
    assert!(
        export.contains("\"expiration_date\":\"2030-05-01\",\"expiration_time\":\"10:00\""),
        "{export}"
    );
}

#[test]
fn default_locations_follow_xdg() {
    let env = Env::new();
    let run =
        crate::cli_support::run(env.bare().args(["links", "create", "https://example.com"])).ok();
    assert!(run.stdout.starts_with("created link 1"), "{}", run.stdout);
    let db = env.dir.path().join("xdg-data/linkdeck/linkdeck.db");
    assert!(
        db.exists(),
        "the default database lives in $XDG_DATA_HOME/linkdeck"
    );
    // Without a command: where things live, then the help.
    let run = crate::cli_support::run(&mut env.bare()).ok();
    assert!(
        run.stdout.contains(&db.display().to_string()),
        "{}",
        run.stdout
    );
    assert!(
        run.stdout.contains("xdg-config/linkdeck/config.toml"),
        "{}",
        run.stdout
    );
    assert!(run.stdout.contains("Usage: linkdeck"), "{}", run.stdout);
    // A config in $XDG_CONFIG_HOME is picked up.
    let dir = env.dir.path().join("xdg-config/linkdeck");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("config.toml"), "[ui]\ntheme = \"purple\"\n").unwrap();
    crate::cli_support::run(env.bare().args(["links", "list"])).fails_with(9);
}

#[test]
fn remote_flag_messages_name_the_flag_not_a_profile() {
    let env = Env::new();
    let mut cmd = env.bare();
    cmd.arg("--config")
        .arg(&env.config)
        .args([
            "--remote",
            "http://127.0.0.1:9",
            "--api-key-env",
            "LINKDECK_TEST_KEY",
        ])
        .args(["domains", "add", "sho.rt"])
        .env("LINKDECK_TEST_KEY", "k");
    let out = crate::cli_support::run(&mut cmd).fails_with(2);
    assert!(out.stderr.contains("--remote points at"), "{}", out.stderr);
    assert!(!out.stderr.contains("profile \"local\""), "{}", out.stderr);
}

#[test]
fn a_database_url_is_opened_as_postgresql_never_taken_for_a_path() {
    let env = Env::new();
    // Port 1 on the loopback: nothing listens, so the message is about reaching the server.
    let run = crate::cli_support::run(env.bare().current_dir(env.dir.path()).args([
        "--db",
        "postgres://user@127.0.0.1:1/db",
        "links",
        "list",
    ]))
    .fails_with(6);
    assert!(
        run.stderr.contains("postgres://user@127.0.0.1:1/db")
            && run.stderr.contains("cannot reach PostgreSQL"),
        "{}",
        run.stderr
    );
    assert!(
        !env.path("postgres:").exists(),
        "nothing is created for a URL"
    );
    // A URL missing its "//" is named as one, not opened as a file in a directory "postgres:".
    let run = crate::cli_support::run(env.bare().current_dir(env.dir.path()).args([
        "--db",
        "postgres:/user@127.0.0.1/db",
        "links",
        "list",
    ]))
    .fails_with(2);
    assert!(
        run.stderr.contains("looks like a PostgreSQL URL"),
        "{}",
        run.stderr
    );
    assert!(!env.path("postgres:").exists(), "nothing is created for it");
    // A password in the URL is refused, and not repeated.
    let run = crate::cli_support::run(env.bare().current_dir(env.dir.path()).args([
        "--db",
        "postgres://user:s3cret@127.0.0.1:1/db",
        "links",
        "list",
    ]))
    .fails_with(2);
    assert!(
        run.stderr.contains("LINKDECK_DB_PASSWORD") && !run.stderr.contains("s3cret"),
        "{}",
        run.stderr
    );

    let config = env.write(
        "pg.toml",
        "default_profile = \"pg\"\n\n[profiles.pg]\nbackend = \"local\"\ndb = \"postgresql://u:pw@h/links\"\n",
    );
    let run = crate::cli_support::run(
        env.bare()
            .current_dir(env.dir.path())
            .arg("--config")
            .arg(&config)
            .args(["links", "list"]),
    )
    .fails_with(9);
    assert!(
        run.stderr.contains("pg.toml")
            && run.stderr.contains("line 5")
            && run.stderr.contains("holds a password")
            && !run.stderr.contains("pw@"),
        "{}",
        run.stderr
    );
    assert!(!env.path("postgresql:").exists());

    let config = env.write(
        "other.toml",
        "[profiles.local]\nbackend = \"local\"\ndb = \"mysql://h/links\"\n",
    );
    let run = crate::cli_support::run(
        env.bare()
            .arg("--config")
            .arg(&config)
            .args(["--json", "links", "list"]),
    )
    .fails_with(9);
    let message = run.error_json()["message"].as_str().unwrap().to_owned();
    assert!(
        message.contains("\"mysql://\" URLs are not supported"),
        "{message}"
    );
}
