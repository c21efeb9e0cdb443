//! Public inputs as JSON, and atomic output files.

use std::path::Path;

use anyhow::{anyhow, Context, Result};
use blstrs::Scalar;

/// A JSON array of 32-byte little-endian hex scalars.
pub fn to_json(inputs: &[Scalar]) -> String {
    let items: Vec<String> = inputs
        .iter()
        .map(|x| hex::encode(x.to_bytes_le()))
        .collect();
    serde_json::to_string_pretty(&items).expect("strings serialize") + "\n"
}

/// Parses [`to_json`]'s format; a `0x` prefix is accepted. Errors name the entry.
pub fn from_json(text: &str) -> Result<Vec<Scalar>> {
    let items: Vec<String> =
        serde_json::from_str(text).context("expected a JSON array of hex strings")?;
    items
        .iter()
        .enumerate()
        .map(|(i, s)| {
            let digits = s.strip_prefix("0x").unwrap_or(s);
            let bytes = hex::decode(digits).map_err(|e| anyhow!("entry {i}: not hex: {e}"))?;
            let arr: [u8; 32] = bytes
                .try_into()
                .map_err(|b: Vec<u8>| anyhow!("entry {i}: {} bytes, expected 32", b.len()))?;
            Option::<Scalar>::from(Scalar::from_bytes_le(&arr)).ok_or_else(|| {
                anyhow!("entry {i}: not a canonical scalar (at or above the field modulus)")
            })
        })
        .collect()
}

/// Writes `bytes` to `path` through a temporary file and a rename, so a reader never sees half a file.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<()> {
    use std::io::Write;
    srs_loader::write_atomic(path, |w| w.write_all(bytes))?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use ff::Field;

    #[test]
    fn json_round_trip_and_errors() {
        let xs = vec![
            Scalar::ZERO,
            Scalar::ONE,
            -Scalar::ONE,
            Scalar::from(1234567u64),
        ];
        assert_eq!(from_json(&to_json(&xs)).unwrap(), xs);
        assert!(from_json("[\"0x01\"]")
            .unwrap_err()
            .to_string()
            .contains("entry 0: 1 bytes"));
        assert!(from_json("[\"zz\"]")
            .unwrap_err()
            .to_string()
            .contains("not hex"));
        let too_big = format!("[\"{}\"]", "ff".repeat(32));
        assert!(from_json(&too_big)
            .unwrap_err()
            .to_string()
            .contains("not a canonical scalar"));
        assert!(from_json("{}").is_err());
    }
}
