//! `cargo xtask`: the project's own automation.
//!
//! Subcommands:
//! - `ci`: exactly what `.ci/run` runs (format check, clippy with warnings denied, the README's test command).

use std::process::Command;

use anyhow::{bail, Context, Result};

fn run(program: &str, args: &[&str]) -> Result<()> {
    eprintln!("$ {program} {}", args.join(" "));
    let status = Command::new(program)
        .args(args)
        .status()
        .with_context(|| format!("running {program}"))?;
    if !status.success() {
        bail!("{program} {} failed: {status}", args.join(" "));
    }
    Ok(())
}

fn main() -> Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.first().map(String::as_str) {
        Some("ci") => run("bash", &[".ci/run"]),
        _ => {
            eprintln!(
                "usage: cargo xtask <command>\n\ncommands:\n  ci    run what CI runs (.ci/run)"
            );
            std::process::exit(2)
        }
    }
}
