//! Where generated parameters live.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result};

/// The cache directory: the one given (flag or `CUZK_PARAM_CACHE`), else `$XDG_CACHE_HOME/cuzk/params`, else `~/.cache/cuzk/params`, else `/var/tmp/cuzk-params`.
/// It is created if missing.
pub fn dir(given: Option<&Path>) -> Result<PathBuf> {
    let dir = match given {
        Some(d) => d.to_owned(),
        None => std::env::var_os("XDG_CACHE_HOME")
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
            .or_else(|| {
                std::env::var_os("HOME")
                    .filter(|v| !v.is_empty())
                    .map(|h| PathBuf::from(h).join(".cache"))
            })
            .map(|c| c.join("cuzk").join("params"))
            .unwrap_or_else(|| PathBuf::from("/var/tmp/cuzk-params")),
    };
    std::fs::create_dir_all(&dir)
        .with_context(|| format!("creating parameter cache {}", dir.display()))?;
    Ok(dir)
}
