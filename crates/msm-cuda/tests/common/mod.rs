//! Inputs shared by the GPU test binaries (each uses some of them).
#![allow(dead_code)]

use blstrs::{G1Affine, G1Projective, Scalar};
use ff::Field;
use group::{prime::PrimeCurveAffine, Curve};
use rand::Rng;
use test_utils::{par_scalars, random_g1, random_g1_fast, random_scalars};

/// Scalars with every kind of edge case mixed in, and bases with identities and repeats.
pub fn edge_inputs(n: usize, rng: &mut impl Rng) -> (Vec<G1Affine>, Vec<Scalar>) {
    let mut bases = if n > 4096 {
        random_g1_fast(n, rng)
    } else {
        random_g1(n, rng)
    };
    let mut scalars = random_scalars(n, rng);
    if n > 5 {
        bases[1] = G1Affine::identity();
        bases[2] = bases[0];
        bases[4] = (-G1Projective::from(bases[3])).to_affine(); // a base and its negation
        scalars[3] = -Scalar::ONE;
        scalars[4] = -Scalar::ONE;
        scalars[0] = Scalar::ONE;
        scalars[2] = Scalar::ONE; // the same base twice through the scalar-1 path
    }
    (bases, scalars)
}

/// PoRep-like assignments: about half zeros, half ones, a few full-width values.
pub fn porep_like_scalars(n: usize, rng: &mut impl Rng) -> Vec<Scalar> {
    par_scalars(n, rng, |r, _| match r.gen_range(0..1000) {
        0..=489 => Scalar::ZERO,
        490..=974 => Scalar::ONE,
        _ => Scalar::random(&mut *r),
    })
}
