//! The fixed-base tables' MSM (one set of buckets for every window's digits) against blst's Pippenger, on random
//! inputs and edge cases, for window widths from 1 bit to 16; the signed digits against the scalars they encode.

mod common;

use blstrs::{G1Affine, G1Projective, Scalar};
use ff::{Field, PrimeField};
use group::{prime::PrimeCurveAffine, Group};
use msm_cuda::fixed_base::{
    narrow_top_window, signed_digits, top_window_bits, windows_for, FixedBaseTables, MAX_WINDOW,
};
use msm_cuda::{msm_g1, Error};
use rand::Rng;
use test_utils::{fresh_rng, random_g1};

/// `Σ_w d_w · 2^(cw)` in the field.
fn from_digits(digits: &[i32], window: u32) -> Scalar {
    let step = Scalar::from(2u64).pow_vartime([u64::from(window)]);
    digits.iter().rev().fold(Scalar::ZERO, |acc, &d| {
        let v = Scalar::from(u64::from(d.unsigned_abs()));
        acc * step + if d < 0 { -v } else { v }
    })
}

#[test]
fn signed_digits_encode_the_scalar_within_half_a_window() {
    let mut rng = fresh_rng("signed_digits_encode_the_scalar_within_half_a_window");
    // p - 1, the largest scalar, and 2^254 + ... patterns with every window's bits set.
    let max = -Scalar::ONE;
    let ones = Scalar::from_str_vartime(
        "28948022309329048855892746252171976963317496166410141009864396001978282409983",
    )
    .unwrap(); // 2^254 - 1
    for window in 1..=MAX_WINDOW {
        let mut digits = vec![0i32; windows_for(window) as usize];
        assert!(window * windows_for(window) >= 256, "window {window}");
        let scalars = [Scalar::ZERO, Scalar::ONE, max, ones]
            .into_iter()
            .chain((0..20).map(|_| Scalar::random(&mut rng)));
        for s in scalars {
            signed_digits(&s, window, &mut digits);
            let half = 1i64 << (window - 1);
            assert!(
                digits.iter().all(|&d| i64::from(d).abs() <= half),
                "window {window}: {digits:?}"
            );
            assert_eq!(from_digits(&digits, window), s, "window {window}");
            let top = i64::from(*digits.last().unwrap()).abs();
            assert!(
                top <= 1i64 << (top_window_bits(window) - 1),
                "window {window}: top digit {top} beyond {} bits",
                top_window_bits(window)
            );
        }
    }
}

#[test]
fn narrow_top_windows_are_the_widths_that_leave_few_bits() {
    let narrow: Vec<u32> = (10..=MAX_WINDOW)
        .filter(|&w| narrow_top_window(w))
        .collect();
    assert_eq!(narrow, [15, 17, 18, 21, 23]);
    // The widths the tables were measured at: 20 and 24 bits leave 16-bit top windows, 21 and 23 leave 4 and 3.
    let bits: Vec<u32> = [20, 21, 23, 24]
        .iter()
        .map(|&w| top_window_bits(w))
        .collect();
    assert_eq!(bits, [16, 4, 3, 16]);
}

#[test]
fn tables_hold_the_windows_powers_of_each_base() {
    let mut rng = fresh_rng("tables_hold_the_windows_powers_of_each_base");
    let mut bases = random_g1(5, &mut rng);
    bases[3] = G1Affine::identity();
    for window in [1u32, 7, 13] {
        let t = FixedBaseTables::new(&bases, window).unwrap();
        let w_count = windows_for(window) as usize;
        assert_eq!((t.len(), t.windows() as usize), (5, w_count));
        assert_eq!(t.points().len(), 5 * w_count);
        for (i, p) in bases.iter().enumerate() {
            for w in [0, 1, w_count - 1] {
                let want = G1Projective::from(p)
                    * Scalar::from(2u64).pow_vartime([u64::from(window) * w as u64]);
                assert_eq!(
                    G1Projective::from(t.points()[i * w_count + w]),
                    want,
                    "window {window}, base {i}, table {w}"
                );
            }
        }
    }
}

#[test]
fn fixed_base_msm_equals_blst() {
    let mut rng = fresh_rng("fixed_base_msm_equals_blst");
    for n in [1usize, 2, 3, 7, 100, 257] {
        // Identity, repeated and negated bases, scalars 0, 1 and p - 1 among random ones (from n = 6 up).
        let (bases, scalars) = common::edge_inputs(n, &mut rng);
        let want = msm_g1(&bases, &scalars).unwrap();
        for window in [1u32, 2, 3, 5, 8, 11, 16] {
            if n > 100 && window < 5 {
                continue; // 257 bases × 86..256 tables: slow in a debug build, and covered at n = 100
            }
            let t = FixedBaseTables::new(&bases, window).unwrap();
            assert_eq!(t.msm(&scalars).unwrap(), want, "n = {n}, window {window}");
        }
    }
    // All zero, all one, and a base set with no bases.
    let bases = random_g1(40, &mut rng);
    let t = FixedBaseTables::new(&bases, rng.gen_range(4..=12)).unwrap();
    assert_eq!(
        t.msm(&[Scalar::ZERO; 40]).unwrap(),
        G1Projective::identity()
    );
    let sum: G1Projective = bases.iter().map(G1Projective::from).sum();
    assert_eq!(t.msm(&[Scalar::ONE; 40]).unwrap(), sum);
    let empty = FixedBaseTables::new(&[], 8).unwrap();
    assert!(empty.is_empty());
    assert_eq!(empty.msm(&[]).unwrap(), G1Projective::identity());
}

#[test]
fn fixed_base_inputs_that_do_not_fit_are_errors() {
    let mut rng = fresh_rng("fixed_base_inputs_that_do_not_fit_are_errors");
    let bases = random_g1(3, &mut rng);
    for window in [0, MAX_WINDOW + 1] {
        assert_eq!(
            FixedBaseTables::new(&bases, window).unwrap_err(),
            Error::Window {
                window,
                min: 1,
                max: MAX_WINDOW
            }
        );
    }
    let t = FixedBaseTables::new(&bases, 4).unwrap();
    assert_eq!(
        t.msm(&[Scalar::ONE; 2]).unwrap_err(),
        Error::LengthMismatch {
            bases: 3,
            scalars: 2
        }
    );
}
