//! BLS12-381 points from projective to affine form in batches.
//!
//! blstrs 0.7 keeps `group::Curve::batch_normalize`'s default, a loop of `to_affine`: one field inversion a point,
//! about 5 µs in G1. blst's batch conversion shares one inversion across a batch (Montgomery's trick: invert the
//! product of every Z, then peel each inverse off with two products), so a point costs a handful of field products.
//! It maps the identity (Z = 0) to the affine identity.

use blst::{
    blst_p1, blst_p1_affine, blst_p1s_to_affine, blst_p2, blst_p2_affine, blst_p2s_to_affine,
};
use blstrs::{G1Affine, G1Projective, G2Affine, G2Projective};
use group::Curve;
use rayon::prelude::*;

/// Points per batch in [`par_to_affine`]: the inversion (about 100 µs) is then under 30 ns a point.
pub const CHUNK: usize = 4096;

/// A projective point type with a batch conversion to affine form.
pub trait BatchAffine: Curve + Send + Sync
where
    Self::AffineRepr: Send,
{
    /// `out[i] = points[i]` in affine form, one field inversion for the whole slice.
    ///
    /// # Panics
    /// If the slices' lengths differ (checked before blst writes anything).
    fn batch_to_affine(points: &[Self], out: &mut [Self::AffineRepr]);
}

/// One group's impl: `$proj` and `$affine` are `repr(transparent)` wrappers of blst's `$raw` and `$raw_affine`, and
/// `$convert` is blst's batch conversion for them.
macro_rules! batch_affine_via_blst {
    ($proj:ty, $affine:ty, $raw:ty, $raw_affine:ty, $convert:path) => {
        // The layouts the casts below rely on (blstrs 0.7 declares both wrappers `repr(transparent)`).
        const _: () = assert!(std::mem::size_of::<$proj>() == std::mem::size_of::<$raw>());
        const _: () = assert!(std::mem::size_of::<$affine>() == std::mem::size_of::<$raw_affine>());
        impl BatchAffine for $proj {
            fn batch_to_affine(points: &[$proj], out: &mut [$affine]) {
                assert_eq!(points.len(), out.len(), "points and out differ in length");
                let Some(first) = points.first() else {
                    return;
                };
                // blst reads `points` as an array of pointers where a null one means "the point after the last":
                // so [first, null] walks the slice.
                let walk: [*const $raw; 2] = [AsRef::<$raw>::as_ref(first), std::ptr::null()];
                // SAFETY: the affine type is a `repr(transparent)` $raw_affine, `out` has room for `points.len()`
                // of them, and blst reads `points.len()` consecutive $raw from `first` (the projective type is a
                // `repr(transparent)` $raw, and a slice is contiguous).
                unsafe {
                    $convert(
                        out.as_mut_ptr().cast::<$raw_affine>(),
                        walk.as_ptr(),
                        points.len(),
                    )
                };
            }
        }
    };
}

batch_affine_via_blst!(
    G1Projective,
    G1Affine,
    blst_p1,
    blst_p1_affine,
    blst_p1s_to_affine
);
batch_affine_via_blst!(
    G2Projective,
    G2Affine,
    blst_p2,
    blst_p2_affine,
    blst_p2s_to_affine
);

/// `out[i] = points[i]` in affine form, with one field inversion for the whole slice.
///
/// # Panics
/// If the slices' lengths differ.
pub fn to_affine<G: BatchAffine>(points: &[G], out: &mut [G::AffineRepr])
where
    G::AffineRepr: Send,
{
    G::batch_to_affine(points, out);
}

/// [`to_affine`] in parallel, a batch of [`CHUNK`] points at a time.
///
/// # Panics
/// If the slices' lengths differ.
pub fn par_to_affine<G: BatchAffine>(points: &[G], out: &mut [G::AffineRepr])
where
    G::AffineRepr: Send,
{
    assert_eq!(points.len(), out.len(), "points and out differ in length");
    out.par_chunks_mut(CHUNK)
        .zip(points.par_chunks(CHUNK))
        .for_each(|(o, p)| to_affine(p, o));
}

/// [`par_to_affine`] into a new vector.
pub fn par_to_affine_vec<G: BatchAffine>(points: &[G]) -> Vec<G::AffineRepr>
where
    G::AffineRepr: Send + Default + Clone,
{
    let mut out = vec![G::AffineRepr::default(); points.len()];
    par_to_affine(points, &mut out);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use group::Group;
    use rand::SeedableRng;

    /// Points with every kind of Z: random sums (Z far from 1), the identity at both ends and between, a point
    /// and its negation's sum (an identity reached by addition), and an affine point lifted (Z = 1).
    fn mixed<G: Group>(rng: &mut rand::rngs::StdRng, n: usize) -> Vec<G> {
        let mut v = vec![G::identity()];
        for i in 0..n {
            let p = G::random(&mut *rng) + G::random(&mut *rng);
            v.push(p);
            if i % 7 == 3 {
                let q = -p;
                v.push(p + q);
            }
        }
        v.push(G::generator());
        v.push(G::identity());
        v
    }

    fn check<G: BatchAffine + Group>(points: &[G])
    where
        G::AffineRepr: Send + Default + Clone + PartialEq + std::fmt::Debug,
    {
        let want: Vec<G::AffineRepr> = points.iter().map(|p| p.to_affine()).collect();
        let mut got = vec![G::AffineRepr::default(); points.len()];
        to_affine(points, &mut got);
        assert_eq!(got, want);
        assert_eq!(par_to_affine_vec(points), want);
    }

    #[test]
    fn matches_to_affine_in_g1_and_g2() {
        let mut rng = rand::rngs::StdRng::seed_from_u64(7);
        check(&mixed::<G1Projective>(&mut rng, 50));
        check(&mixed::<G2Projective>(&mut rng, 30));
    }

    #[test]
    fn edge_sizes() {
        let mut rng = rand::rngs::StdRng::seed_from_u64(8);
        check::<G1Projective>(&[]);
        check(&[G1Projective::identity()]);
        check(&[G1Projective::random(&mut rng)]);
        check(&[G2Projective::identity(), G2Projective::identity()]);
        // Across a chunk boundary, in parallel.
        let p: Vec<G1Projective> = mixed(&mut rng, CHUNK + 5);
        check(&p);
    }

    #[test]
    #[should_panic(expected = "differ in length")]
    fn mismatched_lengths_panic_before_writing() {
        let mut out = vec![G1Affine::default(); 1];
        to_affine(
            &[G1Projective::generator(), G1Projective::generator()],
            &mut out,
        );
    }
}
