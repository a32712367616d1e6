//! Man pages: one for every command, from the same definitions as --help.

use crate::cli_support::Env;

#[test]
fn man_prints_the_main_page() {
    let env = Env::new();
    let run = env.run(&["man"]).ok();
    assert!(run.stdout.starts_with(".ie"), "{}", run.stdout);
    assert!(run.stdout.contains(".TH linkdeck 1"), "{}", run.stdout);
    assert!(run.stdout.contains("links"), "the commands are listed");
}

#[test]
fn man_writes_a_page_for_every_command() {
    let env = Env::new();
    let dir = env.path("man");
    env.run(&["man", "--out", dir.to_str().unwrap()]).ok();
    for page in [
        "linkdeck.1",
        "linkdeck-links.1",
        "linkdeck-links-create.1",
        "linkdeck-serve.1",
        "linkdeck-db-copy.1",
    ] {
        assert!(dir.join(page).is_file(), "{page} is written");
    }
    let create = std::fs::read_to_string(dir.join("linkdeck-links-create.1")).unwrap();
    assert!(
        create.contains(r"\-\-expires"),
        "flags are documented: {create}"
    );
}

#[test]
fn man_names_the_folder_it_cannot_write() {
    let env = Env::new();
    let file = env.path("a-file");
    std::fs::write(&file, "").unwrap();
    let run = env
        .run(&["man", "--out", file.to_str().unwrap()])
        .fails_with(1);
    assert!(run.stderr.contains("--out"), "{}", run.stderr);
    assert!(run.stderr.contains("a-file"), "{}", run.stderr);
}
