//! blst's Pippenger against the naive sum, on random inputs and edge cases.

mod common;

use blstrs::{G1Projective, G2Affine, Scalar};
use ff::Field;
use group::{prime::PrimeCurveAffine, Group};
use msm_cuda::{msm_g1, msm_g1_selected, msm_g2, msm_g2_selected, Error, Selection};
use rand::Rng;
use test_utils::{
    edge_or_random_scalar, fresh_rng, naive_msm_g1, naive_msm_g2, random_g1, random_g2,
};

#[test]
fn g1_matches_naive_on_sizes_and_edges() {
    let mut rng = fresh_rng("g1_matches_naive_on_sizes_and_edges");
    for n in [1usize, 2, 3, 7, 31, 32, 33, 100, 257, 1000] {
        let (bases, scalars) = common::edge_inputs(n, &mut rng);
        assert_eq!(
            msm_g1(&bases, &scalars).unwrap(),
            naive_msm_g1(&bases, &scalars),
            "n = {n}"
        );
    }
}

#[test]
fn g1_all_zero_and_all_one() {
    let mut rng = fresh_rng("g1_all_zero_and_all_one");
    let bases = random_g1(50, &mut rng);
    assert_eq!(
        msm_g1(&bases, &[Scalar::ZERO; 50]).unwrap(),
        G1Projective::identity()
    );
    let sum = bases
        .iter()
        .fold(G1Projective::identity(), |acc, b| acc + b);
    assert_eq!(msm_g1(&bases, &[Scalar::ONE; 50]).unwrap(), sum);
    assert_eq!(msm_g1(&[], &[]).unwrap(), G1Projective::identity());
}

#[test]
fn g2_matches_naive() {
    let mut rng = fresh_rng("g2_matches_naive");
    for n in [1usize, 5, 33, 200] {
        let mut bases = random_g2(n, &mut rng);
        if n > 1 {
            bases[0] = G2Affine::identity();
        }
        let scalars: Vec<Scalar> = (0..n).map(|_| edge_or_random_scalar(&mut rng)).collect();
        assert_eq!(
            msm_g2(&bases, &scalars).unwrap(),
            naive_msm_g2(&bases, &scalars),
            "n = {n}"
        );
    }
}

#[test]
fn selected_msm_equals_filtered_naive() {
    let mut rng = fresh_rng("selected_msm_equals_filtered_naive");
    let n: usize = 300;
    let mask: Vec<bool> = (0..n).map(|_| rng.gen_bool(0.3)).collect();
    let mut words = vec![0u64; n.div_ceil(64)];
    for (i, &m) in mask.iter().enumerate() {
        if m {
            words[i / 64] |= 1 << (i % 64);
        }
    }
    let k = mask.iter().filter(|m| **m).count();
    let scalars: Vec<Scalar> = (0..n).map(|_| edge_or_random_scalar(&mut rng)).collect();
    let picked: Vec<Scalar> = scalars
        .iter()
        .zip(&mask)
        .filter(|(_, m)| **m)
        .map(|(s, _)| *s)
        .collect();
    let sel = Selection {
        words: &words,
        len: n,
    };
    let g1 = random_g1(k, &mut rng);
    assert_eq!(
        msm_g1_selected(&g1, &scalars, sel).unwrap(),
        naive_msm_g1(&g1, &picked)
    );
    let g2 = random_g2(k, &mut rng);
    assert_eq!(
        msm_g2_selected(&g2, &scalars, sel).unwrap(),
        naive_msm_g2(&g2, &picked)
    );
    // Too few bases for the selection.
    assert!(matches!(
        msm_g1_selected(&g1[1..], &scalars, sel),
        Err(Error::SelectionMismatch { .. })
    ));
}

#[test]
fn length_mismatch_is_an_error() {
    let mut rng = fresh_rng("length_mismatch_is_an_error");
    let bases = random_g1(3, &mut rng);
    assert_eq!(
        msm_g1(&bases, &[Scalar::ONE; 2]).unwrap_err(),
        Error::LengthMismatch {
            bases: 3,
            scalars: 2
        }
    );
}

#[test]
fn selection_ignores_bits_past_its_length() {
    let mut rng = fresh_rng("selection_ignores_bits_past_its_length");
    // 70 scalars, bits 0, 3 and 69 selected; garbage above bit 69 in the last word must not count.
    let words = [0b1001u64, (1 << 5) | (0xffu64 << 8)];
    let sel = Selection {
        words: &words,
        len: 70,
    };
    let scalars: Vec<Scalar> = (0..70).map(|_| edge_or_random_scalar(&mut rng)).collect();
    let picked = sel.gather(&scalars, 3).unwrap();
    assert_eq!(picked, vec![scalars[0], scalars[3], scalars[69]]);
    let bases = random_g1(3, &mut rng);
    assert_eq!(
        msm_g1_selected(&bases, &scalars, sel).unwrap(),
        naive_msm_g1(&bases, &picked)
    );
    assert!(matches!(
        sel.gather(&scalars, 4),
        Err(Error::SelectionMismatch { ones: 3, .. })
    ));
}
