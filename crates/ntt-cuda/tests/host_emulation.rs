//! The device's scalar-field arithmetic (cuda-build's `mont.cuh` and `fr.cuh`, ntt-cuda's `fr_test_ops.cuh`) compiled
//! for the host through cuda-build's `host_emu.h`, and checked against blstrs exactly as the GPU test checks the
//! device: so CI, which has no GPU, still checks every product form's arithmetic on every change. It cannot check
//! the device compiler; `gpu.rs` does that on a GPU machine.
//! Skipped with a printed reason where no C++ compiler is found; failing instead when `CUZK_REQUIRE_HOST_CXX=1`.

use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use blstrs::Scalar;
use ff::{Field, PrimeField};
use ntt_cuda::gpu::FrOp;
use test_utils::fresh_rng;

mod field_ops;

/// A C++ compiler: `CXX`, else the first of c++, g++ and clang++ that runs.
fn compiler() -> Option<String> {
    let candidates = std::env::var("CXX")
        .into_iter()
        .chain(["c++", "g++", "clang++"].map(String::from));
    candidates.into_iter().find(|cxx| {
        Command::new(cxx)
            .arg("--version")
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success())
    })
}

/// Builds `tests/host_emu.cpp` (with `defines`, `-D` flags) into the test's scratch folder as `name`; None (after
/// printing why) when no compiler is found and none is required.
fn build(name: &str, defines: &[&str]) -> Option<PathBuf> {
    let Some(cxx) = compiler() else {
        let why = "no C++ compiler (CXX, c++, g++ or clang++) found";
        assert!(
            std::env::var("CUZK_REQUIRE_HOST_CXX").as_deref() != Ok("1"),
            "CUZK_REQUIRE_HOST_CXX=1 but {why}"
        );
        println!("SKIPPED host emulation of the device arithmetic: {why}");
        return None;
    };
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let out = Path::new(env!("CARGO_TARGET_TMPDIR")).join(name);
    let built = Command::new(&cxx)
        .args([
            "-O2",
            "-std=c++17",
            "-frounding-math",
            "-Wno-unknown-pragmas",
        ])
        .args(defines.iter().map(|d| format!("-D{d}")))
        .arg("-I")
        .arg(root.join("../cuda-build/include"))
        .arg("-I")
        .arg(root.join("cuda"))
        .arg("-o")
        .arg(&out)
        .arg(root.join("tests/host_emu.cpp"))
        .output()
        .unwrap_or_else(|e| panic!("running {cxx}: {e}"));
    assert!(
        built.status.success(),
        "{cxx} failed to build tests/host_emu.cpp:\n{}",
        String::from_utf8_lossy(&built.stderr)
    );
    Some(out)
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
    let mut child = Command::new(exe)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("starting the host emulation");
    // The child reads all its input before it writes, so writing first cannot deadlock.
    child
        .stdin
        .take()
        .unwrap()
        .write_all(&input)
        .expect("writing to the host emulation");
    let mut output = Vec::new();
    child
        .stdout
        .take()
        .unwrap()
        .read_to_end(&mut output)
        .expect("reading the host emulation");
    assert!(
        child.wait().unwrap().success(),
        "the host emulation failed on {op:?}"
    );
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
