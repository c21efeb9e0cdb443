//! Base-field and curve arithmetic checks shared by the GPU test (`gpu.rs`) and the host emulation test
//! (`host_emulation.rs`): each runs the same cases through its [`Backend`] against blst and blstrs.
#![allow(dead_code)]

use blst::{blst_fp, blst_fp2};
use blstrs::{G1Affine, G1Projective, G2Affine, G2Projective, Scalar};
use group::{prime::PrimeCurveAffine, Group};
use msm_cuda::gpu::{CurveOp, FieldOp, GpuCurve, GpuField};
use rand::Rng;
use test_utils::assert_each_eq;

/// Where the operations run: the device (`gpu::field_elementwise`, `gpu::curve_elementwise`) or the host build of the
/// same code.
pub trait Backend {
    fn field<F: RawField>(&mut self, op: FieldOp, a: &[F], b: &[F]) -> Vec<F>;
    fn curve<A: RawPoint>(&mut self, op: CurveOp, a: &[A], b: &[A]) -> Vec<A::Projective>;
}

/// A field element as the device lays it out: Montgomery limbs, little-endian.
pub trait RawField: GpuField + PartialEq + std::fmt::Debug {
    /// The host emulation's kind number (1 Fp, 2 Fp2).
    const KIND: i32;
    const BYTES: usize;
    fn put(&self, out: &mut Vec<u8>);
    fn get(bytes: &[u8]) -> Self;
}

impl RawField for blst_fp {
    const KIND: i32 = 1;
    const BYTES: usize = 48;
    fn put(&self, out: &mut Vec<u8>) {
        self.l
            .iter()
            .for_each(|w| out.extend_from_slice(&w.to_le_bytes()));
    }
    fn get(bytes: &[u8]) -> Self {
        blst_fp {
            l: std::array::from_fn(|i| {
                u64::from_le_bytes(bytes[8 * i..8 * i + 8].try_into().unwrap())
            }),
        }
    }
}

impl RawField for blst_fp2 {
    const KIND: i32 = 2;
    const BYTES: usize = 96;
    fn put(&self, out: &mut Vec<u8>) {
        self.fp.iter().for_each(|c| c.put(out));
    }
    fn get(bytes: &[u8]) -> Self {
        blst_fp2 {
            fp: [blst_fp::get(&bytes[..48]), blst_fp::get(&bytes[48..96])],
        }
    }
}

/// A point as the device lays it out: affine (x, y) in, Jacobian (x, y, z) out, over its coordinate field.
pub trait RawPoint:
    GpuCurve
    + PrimeCurveAffine<Curve = <Self as GpuCurve>::Projective>
    + std::ops::Neg<Output = Self>
    + std::fmt::Debug
{
    /// The host emulation's kind number (3 G1, 4 G2).
    const KIND: i32;
    type Coord: RawField;
    fn put(&self, out: &mut Vec<u8>);
    fn get_jacobian(bytes: &[u8]) -> <Self as GpuCurve>::Projective;
}

impl RawPoint for G1Affine {
    const KIND: i32 = 3;
    type Coord = blst_fp;
    fn put(&self, out: &mut Vec<u8>) {
        let p: &blst::blst_p1_affine = self.as_ref();
        p.x.put(out);
        p.y.put(out);
    }
    fn get_jacobian(bytes: &[u8]) -> G1Projective {
        let mut r = G1Projective::identity();
        let p: &mut blst::blst_p1 = r.as_mut();
        p.x = blst_fp::get(&bytes[..48]);
        p.y = blst_fp::get(&bytes[48..96]);
        p.z = blst_fp::get(&bytes[96..144]);
        r
    }
}

impl RawPoint for G2Affine {
    const KIND: i32 = 4;
    type Coord = blst_fp2;
    fn put(&self, out: &mut Vec<u8>) {
        let p: &blst::blst_p2_affine = self.as_ref();
        p.x.put(out);
        p.y.put(out);
    }
    fn get_jacobian(bytes: &[u8]) -> G2Projective {
        let mut r = G2Projective::identity();
        let p: &mut blst::blst_p2 = r.as_mut();
        p.x = blst_fp2::get(&bytes[..96]);
        p.y = blst_fp2::get(&bytes[96..192]);
        p.z = blst_fp2::get(&bytes[192..288]);
        r
    }
}

/// blst's own field arithmetic: the reference the device is checked against.
pub mod reference {
    #![allow(unsafe_code)]
    use blst::*;
    use rand::Rng;

    // SAFETY (every block below): blst's functions take valid pointers to initialised field elements and write one.
    pub fn from_u64(v: u64) -> blst_fp {
        let mut r = blst_fp::default();
        let limbs = [v, 0, 0, 0, 0, 0];
        unsafe { blst_fp_from_uint64(&mut r, limbs.as_ptr()) };
        r
    }

    /// Uniform below p: rejection sampling of 381-bit values, then into Montgomery form.
    pub fn random(rng: &mut impl Rng) -> blst_fp {
        const P: [u64; 6] = [
            0xb9feffffffffaaab,
            0x1eabfffeb153ffff,
            0x6730d2a0f6b0f624,
            0x64774b84f38512bf,
            0x4b1ba7b6434bacd7,
            0x1a0111ea397fe69a,
        ];
        loop {
            let mut l: [u64; 6] = rng.gen();
            l[5] &= (1 << 61) - 1;
            if (0..6).rev().map(|i| l[i].cmp(&P[i])).find(|o| o.is_ne())
                == Some(std::cmp::Ordering::Less)
            {
                let mut r = blst_fp::default();
                unsafe { blst_fp_from_uint64(&mut r, l.as_ptr()) };
                return r;
            }
        }
    }

    macro_rules! binary {
        ($name:ident, $t:ty, $f:ident) => {
            pub fn $name(a: &$t, b: &$t) -> $t {
                let mut r = <$t>::default();
                unsafe { $f(&mut r, a, b) };
                r
            }
        };
    }
    macro_rules! unary {
        ($name:ident, $t:ty, $f:ident) => {
            pub fn $name(a: &$t) -> $t {
                let mut r = <$t>::default();
                unsafe { $f(&mut r, a) };
                r
            }
        };
    }
    binary!(add, blst_fp, blst_fp_add);
    binary!(sub, blst_fp, blst_fp_sub);
    binary!(mul, blst_fp, blst_fp_mul);
    unary!(sqr, blst_fp, blst_fp_sqr);
    unary!(inv, blst_fp, blst_fp_inverse);
    binary!(add2, blst_fp2, blst_fp2_add);
    binary!(sub2, blst_fp2, blst_fp2_sub);
    binary!(mul2, blst_fp2, blst_fp2_mul);
    unary!(sqr2, blst_fp2, blst_fp2_sqr);
    unary!(inv2, blst_fp2, blst_fp2_inverse);

    pub fn neg(a: &blst_fp) -> blst_fp {
        let mut r = blst_fp::default();
        unsafe { blst_fp_cneg(&mut r, a, true) };
        r
    }

    pub fn neg2(a: &blst_fp2) -> blst_fp2 {
        let mut r = blst_fp2::default();
        unsafe { blst_fp2_cneg(&mut r, a, true) };
        r
    }
}

/// 0, 1, -1, 2 and -2, and two raw values the products' limb bounds are written for: p - 1 as raw limbs, and 2^360 - 1,
/// whose twelve low 30-bit limbs (mont_mul_ul's) and six low 52-bit limbs (mont_mul_f64's) are all at their largest.
pub fn fp_edges() -> Vec<blst_fp> {
    use reference::*;
    let (one, two) = (from_u64(1), from_u64(2));
    let p_minus_1 = blst_fp {
        l: [
            0xb9feffffffffaaaa,
            0x1eabfffeb153ffff,
            0x6730d2a0f6b0f624,
            0x64774b84f38512bf,
            0x4b1ba7b6434bacd7,
            0x1a0111ea397fe69a,
        ],
    };
    let low_limbs_full = blst_fp {
        l: [
            u64::MAX,
            u64::MAX,
            u64::MAX,
            u64::MAX,
            u64::MAX,
            (1 << 40) - 1,
        ],
    };
    vec![
        from_u64(0),
        one,
        neg(&one),
        two,
        neg(&two),
        p_minus_1,
        low_limbs_full,
    ]
}

/// The CPU reference of one field operation.
type FieldRef<'a, F> = &'a dyn Fn(&F, &F) -> F;

/// Every [`FieldOp`] through `backend` against its reference (add, sub, mul, square, neg, inverse, in that order), on
/// all pairs except the inverse, which runs on the first `inverse_count` (each is a full exponentiation).
fn check_field_ops<F: RawField>(
    backend: &mut impl Backend,
    a: &[F],
    b: &[F],
    refs: [FieldRef<'_, F>; 6],
    inverse_count: usize,
) {
    let ops = [
        FieldOp::Add,
        FieldOp::Sub,
        FieldOp::Mul,
        FieldOp::Square,
        FieldOp::Neg,
        FieldOp::Inverse,
    ];
    for (op, f) in ops.into_iter().zip(refs) {
        let count = if op == FieldOp::Inverse {
            inverse_count
        } else {
            a.len()
        };
        let got = backend.field(op, &a[..count], &b[..count]);
        assert_each_eq(&op, &got, |i| f(&a[i], &b[i]), &a[..count], &b[..count]);
    }
}

/// Fp: the pairs of `fp_edges` and 3,000 random pairs, every operation, then the carry-chain product (which the
/// field's product replaced; the inverse's last step still uses it), the FP64 product and the lazy product on its
/// largest inputs on the same pairs, and the square on its largest input (a + p, below 2p). Returns the pairs.
pub fn check_fp(backend: &mut impl Backend, rng: &mut impl Rng) -> (Vec<blst_fp>, Vec<blst_fp>) {
    use reference::*;
    let (mut a, mut b) = (Vec::new(), Vec::new());
    for x in fp_edges() {
        for y in fp_edges() {
            a.push(x);
            b.push(y);
        }
    }
    for _ in 0..3000 {
        a.push(random(rng));
        b.push(random(rng));
    }
    check_field_ops(
        backend,
        &a,
        &b,
        [&add, &sub, &mul, &|x, _| sqr(x), &|x, _| neg(x), &|x, _| {
            inv(x)
        }],
        300,
    );
    for op in [FieldOp::MulChains, FieldOp::MulFloat64, FieldOp::MulLazy] {
        let got = backend.field(op, &a, &b);
        assert_each_eq(&op, &got, |i| mul(&a[i], &b[i]), &a, &b);
    }
    let got = backend.field(FieldOp::SqrLazy, &a, &b);
    assert_each_eq(&FieldOp::SqrLazy, &got, |i| sqr(&a[i]), &a, &b);
    (a, b)
}

/// Fp2: pairs of elements built from Fp's edges, and 2,000 random pairs.
pub fn check_fp2(backend: &mut impl Backend, rng: &mut impl Rng) {
    use reference::*;
    let edges: Vec<blst_fp2> = fp_edges()
        .into_iter()
        .flat_map(|x| fp_edges().into_iter().map(move |y| blst_fp2 { fp: [x, y] }))
        .collect();
    let (mut a, mut b) = (Vec::new(), Vec::new());
    for x in &edges {
        for y in edges.iter().step_by(3) {
            a.push(*x);
            b.push(*y);
        }
    }
    for _ in 0..2000 {
        a.push(blst_fp2 {
            fp: [random(rng), random(rng)],
        });
        b.push(blst_fp2 {
            fp: [random(rng), random(rng)],
        });
    }
    check_field_ops(
        backend,
        &a,
        &b,
        [
            &add2,
            &sub2,
            &mul2,
            &|x, _| sqr2(x),
            &|x, _| neg2(x),
            &|x, _| inv2(x),
        ],
        200,
    );
}

/// Pairs of points covering the special cases of addition: identities, equal points (the doubling case of an
/// addition), opposite points, and random pairs.
fn curve_pairs<A>(random: &[A]) -> (Vec<A>, Vec<A>)
where
    A: PrimeCurveAffine + std::ops::Neg<Output = A>,
{
    let id = A::identity();
    let (p, q) = (random[0], random[1]);
    let mut a = vec![id, id, p, p, p, p];
    let mut b = vec![id, p, id, p, -p, q];
    for w in random[2..].chunks(2) {
        a.push(w[0]);
        b.push(*w.get(1).unwrap_or(&w[0]));
    }
    (a, b)
}

/// The CPU result of one curve test case, per element index.
type Expected<'a, P> = &'a dyn Fn(usize) -> P;

/// Every [`CurveOp`] through `backend` on [`curve_pairs`] of `random`, against blstrs.
pub fn check_curve_ops<A: RawPoint>(backend: &mut impl Backend, random: &[A])
where
    <A as GpuCurve>::Projective: std::fmt::Debug
        + PartialEq
        + From<A>
        + std::ops::Mul<Scalar, Output = <A as GpuCurve>::Projective>,
{
    let (a, b) = curve_pairs(random);
    let proj = |p: &A| <A as GpuCurve>::Projective::from(*p);
    let cases: [(CurveOp, Expected<'_, <A as GpuCurve>::Projective>); 5] = [
        (CurveOp::AddMixed, &|i| proj(&a[i]) + proj(&b[i])),
        (CurveOp::AddFull, &|i| {
            proj(&a[i]).double() + proj(&b[i]).double()
        }),
        (CurveOp::Double, &|i| (proj(&a[i]) + proj(&b[i])).double()),
        (CurveOp::NegAdd, &|i| proj(&b[i]) - proj(&a[i])),
        (CurveOp::MulIndex, &|i| proj(&a[i]) * Scalar::from(i as u64)),
    ];
    for (op, want) in cases {
        let got = backend.curve(op, &a, &b);
        assert_each_eq(&op, &got, want, &a, &b);
    }
}
