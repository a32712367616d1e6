//! `linkdeck webhooks`: bad input named by its field, receivers on private addresses refused
//! unless the operator allows them, the secret shown at creation and on request only.

use crate::cli_support::Env;

#[test]
fn bad_subscriptions_are_refused_naming_the_field() {
    let env = Env::new();
    let run = env
        .run(&[
            "webhooks",
            "create",
            "--url",
            "ftp://hooks.example.com/in",
            "--event",
            "link.made",
        ])
        .fails_with(3);
    assert!(run.stderr.contains("url"), "{}", run.stderr);
    assert!(
        run.stderr.contains("events") && run.stderr.contains("unknown event \"link.made\""),
        "{}",
        run.stderr
    );
    assert!(!run.stderr.contains("panicked"), "{}", run.stderr);
    // No event at all is clap's to refuse.
    env.run(&["webhooks", "create", "--url", "https://hooks.example.com/"])
        .fails_with(2);
    // As JSON, the fields are keys.
    let run = env
        .run(&[
            "--json",
            "webhooks",
            "create",
            "--url",
            "https://user:pw@hooks.example.com/",
            "--event",
            "link.created",
        ])
        .fails_with(3);
    let error = run.error_json();
    assert!(error.to_string().contains("user name"), "{error}");
    assert!(
        env.json(&["webhooks", "list"])
            .as_array()
            .unwrap()
            .is_empty()
    );
    env.run(&["webhooks", "show", "7"]).fails_with(4);
    env.run(&["webhooks", "resume", "7"]).fails_with(4);
}

#[test]
fn private_receivers_need_the_operators_switch() {
    let env = Env::new();
    for url in [
        "http://127.0.0.1:9000/in",
        "http://localhost/in",
        "http://10.1.2.3/in",
        "http://[fe80::1]/in",
        "http://169.254.169.254/latest",
    ] {
        let run = env
            .run(&[
                "webhooks",
                "create",
                "--url",
                url,
                "--event",
                "link.created",
            ])
            .fails_with(3);
        assert!(
            run.stderr.contains("url") && run.stderr.contains("webhooks_allow_private"),
            "{url}: {}",
            run.stderr
        );
    }
    // The config every run of the sandbox reads.
    env.write("config.toml", "[serve]\nwebhooks_allow_private = true\n");
    let made = env.json(&[
        "webhooks",
        "create",
        "--url",
        "http://127.0.0.1:9000/in",
        "--event",
        "link.created,link.clicked",
    ]);
    let id = made["webhook"]["id"].as_i64().unwrap().to_string();
    let secret = made["secret"].as_str().unwrap();
    assert!(secret.starts_with("whsec_"));
    // Never listed; the same again on request; a new one on rotation.
    let listed = env.run(&["webhooks", "list"]).ok();
    assert!(!listed.stdout.contains(secret), "{}", listed.stdout);
    assert!(
        listed.stdout.contains("link.created,link.clicked"),
        "{}",
        listed.stdout
    );
    let again = env.run(&["webhooks", "secret", &id]).ok();
    assert_eq!(again.stdout.trim(), secret);
    let rotated = env.run(&["webhooks", "secret", &id, "--rotate"]).ok();
    assert_ne!(rotated.stdout.trim(), secret);
    assert!(rotated.stdout.trim().starts_with("whsec_"));
    env.run(&["webhooks", "delete", &id]).ok();
    assert!(
        env.json(&["webhooks", "list"])
            .as_array()
            .unwrap()
            .is_empty()
    );
}

/// Every `webhooks` command on a remote profile, against a real `linkdeck serve` child: the same
/// output as the same command on the server's database, the secret the server signs with, bad
/// input named by its flag.
#[test]
fn every_command_works_through_a_server() {
    let env = Env::new();
    let served = env.path("served.db");
    let key = env.run_on(&served, &["keys", "create"]).ok().stdout;
    let server = super::through_server::Server::start(&env, &served);
    let remote = |args: &[&str]| {
        crate::cli_support::run(
            env.bare()
                .env("LINKDECK_CLI_TEST_KEY", key.trim())
                .args(["--config", env.config.to_str().unwrap()])
                .args(["--remote", &server.base])
                .args(["--api-key-env", "LINKDECK_CLI_TEST_KEY"])
                .args(args),
        )
    };
    let local = |args: &[&str]| env.run_on(&served, args);

    let made = remote(&[
        "--json",
        "webhooks",
        "create",
        "--url",
        "https://hooks.example.com/in",
        "--event",
        "link.created,link.deleted",
    ])
    .ok()
    .json();
    let id = made["webhook"]["id"].as_i64().unwrap().to_string();
    let secret = made["secret"].as_str().unwrap().to_owned();
    assert!(secret.starts_with("whsec_"), "{made}");
    let made = remote(&[
        "webhooks",
        "create",
        "--url",
        "https://other.example.com/in",
        "--event",
        "link.clicked",
    ])
    .ok();
    assert!(made.stdout.trim().starts_with("whsec_"), "{}", made.stdout);
    assert!(made.stderr.contains("created"), "{}", made.stderr);

    for args in [
        vec!["webhooks", "list"],
        vec!["--json", "webhooks", "list"],
        vec!["webhooks", "show", &id],
        vec!["--json", "webhooks", "show", &id],
        vec!["webhooks", "deliveries", &id],
        vec!["webhooks", "resume", &id],
        vec!["--json", "webhooks", "resume", &id],
        vec!["webhooks", "secret", &id],
    ] {
        let (far, near) = (remote(&args).ok(), local(&args).ok());
        assert_eq!(far.stdout, near.stdout, "{args:?}");
    }
    assert!(!remote(&["webhooks", "list"]).ok().stdout.contains(&secret));
    assert_eq!(
        remote(&["webhooks", "secret", &id]).ok().stdout.trim(),
        secret
    );

    // A change through the server queues a delivery, read back through it.
    remote(&["links", "create", "https://example.com/told"]).ok();
    let deliveries = remote(&["--json", "webhooks", "deliveries", &id, "--limit", "5"])
        .ok()
        .json();
    assert_eq!(deliveries[0]["event"], "link.created", "{deliveries}");
    assert!(
        remote(&["webhooks", "deliveries", &id])
            .ok()
            .stdout
            .contains("link.created")
    );

    let rotated = remote(&["webhooks", "secret", &id, "--rotate"]).ok();
    let rotated = rotated.stdout.trim();
    assert!(
        rotated.starts_with("whsec_") && rotated != secret,
        "{rotated}"
    );
    assert_eq!(
        local(&["webhooks", "secret", &id]).ok().stdout.trim(),
        rotated
    );

    // Bad input is the server's to refuse, named by the flag.
    let run = remote(&[
        "webhooks",
        "create",
        "--url",
        "https://hooks.example.com/in",
        "--event",
        "link.made",
    ])
    .fails_with(3);
    assert!(
        run.stderr.contains("events (--event)") && run.stderr.contains("unknown event"),
        "{}",
        run.stderr
    );
    let run = remote(&[
        "webhooks",
        "create",
        "--url",
        "http://127.0.0.1:9/in",
        "--event",
        "link.created",
    ])
    .fails_with(3);
    assert!(
        run.stderr.contains("webhooks_allow_private"),
        "{}",
        run.stderr
    );
    remote(&["webhooks", "show", "999"]).fails_with(4);
    let run = remote(&["--owner", "someone", "webhooks", "list"]).fails_with(2);
    assert!(run.stderr.contains("API key"), "{}", run.stderr);

    let gone = remote(&["webhooks", "delete", &id]).ok();
    assert_eq!(gone.stdout, format!("deleted webhook {id}\n"));
    remote(&["webhooks", "show", &id]).fails_with(4);
    assert_eq!(
        local(&["--json", "webhooks", "list"]).ok().json(),
        remote(&["--json", "webhooks", "list"]).ok().json()
    );
}
