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

/// The file recording the SHA-256 of parameters this program generated: `<params>.sha256`.
fn digest_path(params: &Path) -> PathBuf {
    let mut name = params.as_os_str().to_owned();
    name.push(".sha256");
    PathBuf::from(name)
}

fn sha256_hex(path: &Path) -> Result<String> {
    use sha2::{Digest, Sha256};
    use std::io::Read;
    let mut file =
        std::fs::File::open(path).with_context(|| format!("opening {}", path.display()))?;
    let mut hasher = Sha256::new();
    let mut buf = vec![0u8; 1 << 20];
    loop {
        let n = file
            .read(&mut buf)
            .with_context(|| format!("reading {}", path.display()))?;
        if n == 0 {
            break;
        }
        hasher.update(&buf[..n]);
    }
    Ok(hex::encode(hasher.finalize()))
}

/// Records the digest of parameters generated here, so later loads can skip the subgroup check of every point.
pub fn record_generated(params: &Path) -> Result<()> {
    let digest = sha256_hex(params)?;
    let path = digest_path(params);
    crate::inputs::write_atomic(&path, format!("{digest}\n").as_bytes())
}

/// Whether `params` is a file this program generated and that has not changed since (its recorded digest matches).
/// Such a file needs only the on-curve checks: every point in it was computed here.
pub fn is_unchanged_generated(params: &Path) -> bool {
    let Ok(recorded) = std::fs::read_to_string(digest_path(params)) else {
        return false;
    };
    sha256_hex(params).is_ok_and(|d| d == recorded.trim())
}
