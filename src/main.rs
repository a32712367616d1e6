#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

use std::process::ExitCode;

use clap::Parser;

fn main() -> ExitCode {
    let args: Vec<std::ffi::OsString> = std::env::args_os().collect();
    match linkdeck::cli::Cli::try_parse_from(&args) {
        Ok(cli) => linkdeck::cli::run(cli),
        Err(e) => linkdeck::cli::usage_error(e, &args),
    }
}
