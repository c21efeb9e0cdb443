//! The device's scalar-field arithmetic (cuda-build's `mont.cuh` and `fr.cuh`, ntt-cuda's `fr_test_ops.cuh`) compiled
//! for the host through cuda-build's `host_emu.h`, and checked against blstrs exactly as the GPU test checks the
//! device: so CI, which has no GPU, still checks every product form's arithmetic on every change. It cannot check
//! the device compiler; `gpu.rs` does that on a GPU machine.
//! Skipped with a printed reason where no C++ compiler is found; failing instead when `CUZK_REQUIRE_HOST_CXX=1`.

use std::path::{Path, PathBuf};

use blstrs::Scalar;
use ff::{Field, PrimeField};
use ntt_cuda::gpu::FrOp;
use test_utils::{fresh_rng, host_emu};

mod field_ops;

/// The host build of `tests/host_emu.cpp` as `name`, with `defines`.
fn build(name: &str, defines: &[&str]) -> Option<PathBuf> {
    host_emu::build(
        env!("CARGO_MANIFEST_DIR"),
        env!("CARGO_TARGET_TMPDIR"),
        name,
        defines,
    )
}

/// R = 2^256 mod p: a scalar's raw (Montgomery) words are the canonical words of x R.
fn montgomery_r() -> Scalar {
    Scalar::from(2u64).pow_vartime([256])
}

/// Runs `op` on the host build as `gpu::fr_elementwise` runs it on the device.
fn host_elementwise(exe: &Path, op: FrOp, a: &[Scalar], b: &[Scalar]) -> Vec<Scalar> {
    let r = montgomery_r();
    let r_inv = r.invert().unwrap();
    let mut input = Vec::with_capacity(12 + 64 * a.len());
    input.extend_from_slice(&(op as i32).to_le_bytes());
    input.extend_from_slice(&(a.len() as u64).to_le_bytes());
    for x in a {
        input.extend_from_slice(&(x * r).to_bytes_le());
    }
    for y in b {
        // The device takes Pow's exponent as a plain little-endian integer, not a Montgomery field element.
        let bytes = if op == FrOp::Pow {
            y.to_bytes_le()
        } else {
            (y * r).to_bytes_le()
        };
        input.extend_from_slice(&bytes);
    }
    let output = host_emu::run(exe, &input);
    assert_eq!(output.len(), 32 * a.len(), "{op:?}: output length");
    output
        .chunks_exact(32)
        .enumerate()
        .map(|(i, raw)| {
            let words: [u8; 32] = raw.try_into().unwrap();
            let x = Scalar::from_repr_vartime(words)
                .unwrap_or_else(|| panic!("{op:?} at {i}: not a reduced scalar: {raw:02x?}"));
            x * r_inv
        })
        .collect()
}

#[test]
fn field_arithmetic_matches_blstrs_on_the_host() {
    let Some(exe) = build("ntt_cuda_host_emu", &[]) else {
        return;
    };
    let mut rng = fresh_rng("field_arithmetic_matches_blstrs_on_the_host");
    field_ops::check_field_ops(
        &mut |op, a, b| host_elementwise(&exe, op, a, b),
        4000,
        &mut rng,
    );
}

/// The same with `mont_mul_f64`'s general Montgomery digit (`-DCUZK_F64_DENSE_INV`), the one the base field takes,
/// in place of the scalar field's sparse one.
#[test]
fn field_arithmetic_matches_blstrs_on_the_host_with_the_dense_digit() {
    let Some(exe) = build("ntt_cuda_host_emu_dense", &["CUZK_F64_DENSE_INV"]) else {
        return;
    };
    let mut rng = fresh_rng("field_arithmetic_matches_blstrs_on_the_host_with_the_dense_digit");
    field_ops::check_field_ops(
        &mut |op, a, b| host_elementwise(&exe, op, a, b),
        4000,
        &mut rng,
    );
}
