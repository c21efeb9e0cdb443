//! The committed bindings (src/ffi.rs) were generated from the current C headers.

#[test]
fn bindings_match_headers() {
    test_utils::assert_ffi_in_sync(env!("CARGO_MANIFEST_DIR"), "cuda/ntt.h");
}
