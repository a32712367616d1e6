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
