//! Shell completions.

use crate::cli_support::Env;

#[test]
fn completions_generate() {
    let env = Env::new();
    for shell in ["bash", "zsh", "fish", "powershell", "elvish"] {
        // No database or config is needed, even a broken one.
        let run = crate::cli_support::run(env.bare().args([
            "--config",
            "/nonexistent/config.toml",
            "completions",
            shell,
        ]))
        .ok();
        assert!(run.stdout.contains("linkdeck"), "{shell}");
        assert!(run.stdout.contains("links"), "{shell}");
    }
    env.run(&["completions", "tcsh"]).fails_with(2);
}
