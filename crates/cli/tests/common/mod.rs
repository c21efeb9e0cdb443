//! Helpers shared by the cli's integration tests.
#![allow(dead_code)]

use std::path::Path;
use std::process::{Command, Output};

/// The `cuzk` binary under test.
pub fn cuzk_command() -> Command {
    Command::new(env!("CARGO_BIN_EXE_cuzk"))
}

/// stdout then stderr, for assertion messages and searches.
pub fn text(o: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

/// A path as an argument.
pub fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}
