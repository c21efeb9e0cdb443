//! The device's base-field and curve arithmetic (cuda-build's `mont.cuh`, `fp.cuh` and `curve.cuh`, msm-cuda's
//! `field_test_ops.cuh`) compiled for the host through cuda-build's `host_emu.h`, and checked against blst and
//! blstrs with the GPU test's own checks (`tests/arith`): so CI, which has no GPU, still checks the MSM's field and
//! curve code on every change. It cannot check the device compiler; `gpu.rs` does that on a GPU machine.
//! Skipped with a printed reason where no C++ compiler is found; failing instead when `CUZK_REQUIRE_HOST_CXX=1`.

mod arith;

use std::path::PathBuf;

use arith::{Backend, RawField, RawPoint};
use msm_cuda::gpu::{CurveOp, FieldOp, GpuCurve};
use test_utils::{fresh_rng, host_emu, random_g1, random_g2};

/// The host build of `tests/host_emu.cpp`, shared by this binary's tests.
fn host() -> Option<Host> {
    static BUILT: std::sync::OnceLock<Option<PathBuf>> = std::sync::OnceLock::new();
    BUILT
        .get_or_init(|| {
            host_emu::build(
                env!("CARGO_MANIFEST_DIR"),
                env!("CARGO_TARGET_TMPDIR"),
                "msm_cuda_host_emu",
                &[],
            )
        })
        .clone()
        .map(Host)
}

struct Host(PathBuf);

impl Host {
    /// Runs kind `kind` (1 Fp, 2 Fp2, 3 G1, 4 G2), operation `op` on the host build.
    fn run(&self, kind: i32, op: i32, n: usize, put: impl Fn(&mut Vec<u8>)) -> Vec<u8> {
        let mut input = Vec::new();
        input.extend_from_slice(&kind.to_le_bytes());
        input.extend_from_slice(&op.to_le_bytes());
        input.extend_from_slice(&(n as u64).to_le_bytes());
        put(&mut input);
        host_emu::run(&self.0, &input)
    }
}

impl Backend for Host {
    fn field<F: RawField>(&mut self, op: FieldOp, a: &[F], b: &[F]) -> Vec<F> {
        let out = self.run(F::KIND, op as i32, a.len(), |input| {
            a.iter().chain(b).for_each(|x| x.put(input));
        });
        assert_eq!(out.len(), F::BYTES * a.len(), "{op:?}: output length");
        out.chunks_exact(F::BYTES).map(F::get).collect()
    }
    fn curve<A: RawPoint>(
        &mut self,
        op: CurveOp,
        a: &[A],
        b: &[A],
    ) -> Vec<<A as GpuCurve>::Projective> {
        let coord = <A::Coord as RawField>::BYTES;
        let out = self.run(A::KIND, op as i32, a.len(), |input| {
            a.iter().chain(b).for_each(|p| p.put(input));
        });
        assert_eq!(out.len(), 3 * coord * a.len(), "{op:?}: output length");
        out.chunks_exact(3 * coord).map(A::get_jacobian).collect()
    }
}

#[test]
fn fp_arithmetic_matches_blst_on_the_host() {
    let Some(mut host) = host() else { return };
    arith::check_fp(
        &mut host,
        &mut fresh_rng("fp_arithmetic_matches_blst_on_the_host"),
    );
}

#[test]
fn fp2_arithmetic_matches_blst_on_the_host() {
    let Some(mut host) = host() else { return };
    arith::check_fp2(
        &mut host,
        &mut fresh_rng("fp2_arithmetic_matches_blst_on_the_host"),
    );
}

#[test]
fn g1_arithmetic_matches_blstrs_on_the_host() {
    let Some(mut host) = host() else { return };
    let mut rng = fresh_rng("g1_arithmetic_matches_blstrs_on_the_host");
    arith::check_curve_ops(&mut host, &random_g1(600, &mut rng));
}

#[test]
fn g2_arithmetic_matches_blstrs_on_the_host() {
    let Some(mut host) = host() else { return };
    let mut rng = fresh_rng("g2_arithmetic_matches_blstrs_on_the_host");
    arith::check_curve_ops(&mut host, &random_g2(300, &mut rng));
}
