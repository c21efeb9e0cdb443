//! Fixed-base scalar multiplication by a precomputed comb: parameter generation multiplies one generator by
//! hundreds of thousands of scalars, so a table of j·2^(8i)·G (32 windows of 256 points) turns each product into at
//! most 32 mixed additions and no doublings.

use std::ops::AddAssign;

use blstrs::Scalar;
use ff::PrimeField;
use group::{Curve, Group};
use rayon::prelude::*;

const WINDOW_BITS: usize = 8;
const WINDOWS: usize = 32; // 256-bit scalars
const ENTRIES: usize = 1 << WINDOW_BITS;

/// The comb for one base point.
pub(crate) struct FixedBase<G: Curve> {
    /// `table[i * 256 + j] = j · 2^(8i) · base` (entry 0 unused).
    table: Vec<G::AffineRepr>,
}

impl<G> FixedBase<G>
where
    G: curve_batch::BatchAffine + Group<Scalar = Scalar> + for<'a> AddAssign<&'a G::AffineRepr>,
    G::AffineRepr: Send + Sync + Copy + Default,
{
    pub(crate) fn new(base: G) -> Self {
        let mut proj = Vec::with_capacity(WINDOWS * ENTRIES);
        let mut window_base = base;
        for _ in 0..WINDOWS {
            let mut acc = G::identity();
            for _ in 0..ENTRIES {
                proj.push(acc);
                acc += window_base;
            }
            for _ in 0..WINDOW_BITS {
                window_base = window_base.double();
            }
        }
        Self {
            table: curve_batch::par_to_affine_vec(&proj),
        }
    }

    /// `s · base`.
    pub(crate) fn mul(&self, s: &Scalar) -> G {
        let bytes = s.to_repr();
        let mut acc = G::identity();
        for (i, &b) in bytes.as_ref().iter().enumerate() {
            if b != 0 {
                acc += &self.table[i * ENTRIES + b as usize];
            }
        }
        acc
    }

    /// `s · base` for every scalar, in parallel, as affine points.
    pub(crate) fn mul_batch(&self, scalars: &[Scalar]) -> Vec<G::AffineRepr> {
        let proj: Vec<G> = scalars.par_iter().map(|s| self.mul(s)).collect();
        curve_batch::par_to_affine_vec(&proj)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use blstrs::{G1Projective, G2Projective};
    use ff::Field;
    use rand::SeedableRng;

    #[test]
    fn comb_equals_plain_multiplication() {
        let mut rng = rand::rngs::StdRng::seed_from_u64(1);
        let g1 = FixedBase::new(G1Projective::generator());
        let g2 = FixedBase::new(G2Projective::generator());
        let mut scalars = vec![
            Scalar::ZERO,
            Scalar::ONE,
            -Scalar::ONE,
            Scalar::from(255u64),
            Scalar::from(256u64),
        ];
        scalars.extend((0..50).map(|_| Scalar::random(&mut rng)));
        for s in &scalars {
            assert_eq!(g1.mul(s), G1Projective::generator() * s, "{s:?}");
            assert_eq!(g2.mul(s), G2Projective::generator() * s, "{s:?}");
        }
        let batch = g1.mul_batch(&scalars);
        for (p, s) in batch.iter().zip(&scalars) {
            assert_eq!(G1Projective::from(*p), G1Projective::generator() * s);
        }
    }
}
