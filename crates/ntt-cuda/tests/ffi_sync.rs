//! The committed bindings (src/ffi.rs) were generated from the current C headers.

use sha2::{Digest, Sha256};

#[test]
fn bindings_match_headers() {
    let root = concat!(env!("CARGO_MANIFEST_DIR"), "/");
    let ffi = std::fs::read_to_string(format!("{root}src/ffi.rs")).unwrap();
    let recorded = ffi
        .lines()
        .find_map(|l| l.strip_prefix("// header-sha256: "))
        .expect("src/ffi.rs records the header hash");
    let mut h = Sha256::new();
    h.update(std::fs::read(format!("{root}cuda/ntt.h")).unwrap());
    h.update(std::fs::read(format!("{root}../cuda-build/include/cuzk_status.h")).unwrap());
    let actual = hex::encode(h.finalize());
    assert_eq!(
        recorded, actual,
        "cuda/ntt.h changed since src/ffi.rs was generated: run `cargo xtask bindgen`"
    );
}
