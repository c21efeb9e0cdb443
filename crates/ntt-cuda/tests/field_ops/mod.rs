//! The field-operation check shared by the GPU test (`gpu.rs`) and the host emulation test (`host_emulation.rs`):
//! every `FrOp` on edge values and fresh random pairs, against blstrs.

use blstrs::Scalar;
use ff::{Field, PrimeField};
use ntt_cuda::gpu::FrOp;
use rand::Rng;
use test_utils::assert_each_eq;

/// Runs `op` elementwise on a and b, as `ntt_cuda::gpu::fr_elementwise` does (b is `Pow`'s exponent).
pub type Elementwise<'a> = dyn FnMut(FrOp, &[Scalar], &[Scalar]) -> Vec<Scalar> + 'a;

/// Checks every operation of `run` against blstrs: the pairs of the edge values below, then `random` random pairs
/// (exponentiation on the first 600 pairs alone: 255 squarings each).
pub fn check_field_ops(run: &mut Elementwise<'_>, random: usize, rng: &mut impl Rng) {
    // Besides 0, 1, -1, 2 and -2, two values given by their raw (Montgomery) words, which the products' limb bounds
    // are written for: p - 1, and 2^232 - 1, whose eight low 29-bit limbs (mont_mul_ul's) and four low 52-bit limbs
    // (mont_mul_f64's) are all at their largest. A raw value v is the scalar v R^-1 (R = 2^256).
    let r_inv = Scalar::from(2u64).pow_vartime([256]).invert().unwrap();
    let raw = |v: [u8; 32]| Scalar::from_repr_vartime(v).unwrap() * r_inv;
    let p_minus_1 = (-Scalar::ONE).to_repr(); // the canonical bytes of -1 are p - 1's
    let mut low_limbs_full = [0u8; 32];
    low_limbs_full[..29].fill(0xff);
    let edges = [
        Scalar::ZERO,
        Scalar::ONE,
        -Scalar::ONE,
        Scalar::from(2u64),
        -Scalar::from(2u64),
        raw(p_minus_1),
        raw(low_limbs_full),
    ];
    let mut a: Vec<Scalar> = Vec::new();
    let mut b: Vec<Scalar> = Vec::new();
    for x in edges {
        for y in edges {
            a.push(x);
            b.push(y);
        }
    }
    for _ in 0..random {
        a.push(Scalar::random(&mut *rng));
        b.push(Scalar::random(&mut *rng));
    }
    let mut check = |op, f: &dyn Fn(&Scalar, &Scalar) -> Scalar| {
        let got = run(op, &a, &b);
        assert_each_eq(&op, &got, |i| f(&a[i], &b[i]), &a, &b);
    };
    check(FrOp::Add, &|x, y| x + y);
    check(FrOp::Sub, &|x, y| x - y);
    check(FrOp::Mul, &|x, y| x * y);
    check(FrOp::MulFold, &|x, y| x * y);
    check(FrOp::MulUnsaturated, &|x, y| x * y);
    check(FrOp::MulFloat64, &|x, y| x * y);
    check(FrOp::MulChains, &|x, y| x * y);
    check(FrOp::MulFloat64Lazy, &|x, y| x * y);
    check(FrOp::AddLazy, &|x, y| x + y);
    check(FrOp::SubLazy, &|x, y| x - y);
    check(FrOp::Square, &|x, _| x.square());
    check(FrOp::Neg, &|x, _| -x);
    check(FrOp::Inverse, &|x, _| x.invert().unwrap_or(Scalar::ZERO));
    let half = Scalar::from(2u64).invert().unwrap();
    let got = run(FrOp::DivPow2Lazy, &a, &b);
    assert_each_eq(
        &FrOp::DivPow2Lazy,
        &got,
        |i| a[i] * half.pow_vartime([i as u64 % 32 + 1]),
        &a,
        &b,
    );
    let n = a.len().min(600);
    let (a2, b2) = (&a[..n], &b[..n]);
    let got = run(FrOp::Pow, a2, b2);
    for i in 0..n {
        let e = b2[i].to_bytes_le();
        let limbs: [u64; 4] =
            std::array::from_fn(|k| u64::from_le_bytes(e[8 * k..8 * k + 8].try_into().unwrap()));
        assert_eq!(got[i], a2[i].pow_vartime(limbs), "pow at {i}");
    }
}
