//! The NTT against the naive DFT and the fast transforms against the simple ones, round trips, cosets, and the H
//! polynomial against its definition and against bellperson's own sequence.

use blstrs::Scalar;
use ff::Field;
use ntt_cuda::{
    coset_generator, distribute_powers, h_polynomial, h_polynomial_reference, naive_dft, Domain,
    Error,
};
use proptest::prelude::*;
use test_utils::{arb_scalar, fresh_rng, random_scalars};

#[test]
fn fft_equals_naive_dft_every_small_size() {
    let mut rng = fresh_rng("fft_equals_naive_dft_every_small_size");
    for log_n in 0..=9 {
        let d = Domain::new(log_n).unwrap();
        let v = random_scalars(d.size(), &mut rng);
        let mut fast = v.clone();
        d.fft(&mut fast).unwrap();
        assert_eq!(fast, naive_dft(&v, d.omega()), "2^{log_n}");
        d.ifft(&mut fast).unwrap();
        assert_eq!(fast, v, "round trip 2^{log_n}");
    }
}

#[test]
fn fast_transforms_equal_the_reference_at_every_size() {
    // Up to 2^17: the leaves (2^12 scalars) alone, blocks split across threads above them, and the tiled bit
    // reversal from 2^16; random and edge scalars, and all zeros and all ones past the leaf size.
    let mut rng = fresh_rng("fast_transforms_equal_the_reference_at_every_size");
    let g = coset_generator();
    let g_inv = g.invert().unwrap();
    for log_n in 0..=17 {
        let d = Domain::new(log_n).unwrap();
        let mut inputs = vec![random_scalars(d.size(), &mut rng)];
        if log_n == 13 {
            inputs.push(vec![Scalar::ZERO; d.size()]);
            inputs.push(vec![Scalar::ONE; d.size()]);
        }
        for v in inputs {
            let (mut fast, mut slow) = (v.clone(), v.clone());
            d.fft(&mut fast).unwrap();
            d.fft_reference(&mut slow).unwrap();
            assert!(fast == slow, "fft 2^{log_n}");
            let (mut fast, mut slow) = (v.clone(), v.clone());
            d.ifft(&mut fast).unwrap();
            d.ifft_reference(&mut slow).unwrap();
            assert!(fast == slow, "ifft 2^{log_n}");
            let (mut fast, mut slow) = (v.clone(), v.clone());
            d.coset_fft(&mut fast, g).unwrap();
            distribute_powers(&mut slow, g);
            d.fft_reference(&mut slow).unwrap();
            assert!(fast == slow, "coset fft 2^{log_n}");
            let (mut fast, mut slow) = (v.clone(), v);
            d.icoset_fft(&mut fast, g).unwrap();
            d.ifft_reference(&mut slow).unwrap();
            distribute_powers(&mut slow, g_inv);
            assert!(fast == slow, "inverse coset fft 2^{log_n}");
        }
    }
}

#[test]
fn parallel_paths_round_trip_and_match_coset_definition() {
    // 2^14 crosses the parallel threshold, including the split-block path.
    let mut rng = fresh_rng("parallel_paths_round_trip");
    let d = Domain::new(14).unwrap();
    let v = random_scalars(d.size(), &mut rng);
    let g = coset_generator();
    let mut e = v.clone();
    d.coset_fft(&mut e, g).unwrap();
    // Spot-check evaluations at g·ω^i by Horner.
    for i in [0usize, 1, 777, d.size() - 1] {
        let x = g * d.omega().pow_vartime([i as u64]);
        let expect = v.iter().rev().fold(Scalar::ZERO, |acc, c| acc * x + c);
        assert_eq!(e[i], expect, "coset point {i}");
    }
    d.icoset_fft(&mut e, g).unwrap();
    assert_eq!(e, v);
}

#[test]
fn edge_inputs() {
    let d = Domain::new(3).unwrap();
    let mut zeros = vec![Scalar::ZERO; 8];
    d.fft(&mut zeros).unwrap();
    assert!(zeros.iter().all(|x| bool::from(x.is_zero())));
    // The constant polynomial 1 evaluates to 1 everywhere; the delta evaluation vector comes back to 1/n.
    let mut one = vec![Scalar::ZERO; 8];
    one[0] = Scalar::ONE;
    d.fft(&mut one).unwrap();
    assert!(one.iter().all(|x| *x == Scalar::ONE));
    let mut size1 = vec![Scalar::from(7u64)];
    Domain::new(0).unwrap().fft(&mut size1).unwrap();
    assert_eq!(size1, vec![Scalar::from(7u64)]);
    assert_eq!(
        d.fft(&mut [Scalar::ZERO; 5]).unwrap_err(),
        Error::LengthMismatch {
            what: "input",
            got: 5,
            expected: 8
        }
    );
    assert!(matches!(Domain::new(33), Err(Error::DomainTooLarge { .. })));
}

/// h from its definition: interpolate a, b, c, multiply polynomials naively, divide by X^m - 1.
fn h_by_definition(a: &[Scalar], b: &[Scalar], c: &[Scalar]) -> Vec<Scalar> {
    let d = Domain::for_len(a.len()).unwrap();
    let m = d.size();
    let interp = |v: &[Scalar]| {
        let mut v = v.to_vec();
        v.resize(m, Scalar::ZERO);
        d.ifft(&mut v).unwrap();
        v
    };
    let (pa, pb, pc) = (interp(a), interp(b), interp(c));
    let mut prod = vec![Scalar::ZERO; 2 * m - 1];
    for i in 0..m {
        for j in 0..m {
            prod[i + j] += pa[i] * pb[j];
        }
    }
    for i in 0..m {
        prod[i] -= pc[i];
    }
    // Long division by X^m - 1: the quotient q satisfies prod = q·(X^m - 1) + r.
    let mut q = vec![Scalar::ZERO; m - 1];
    for k in (m..2 * m - 1).rev() {
        let coeff = prod[k];
        q[k - m] = coeff;
        prod[k] = Scalar::ZERO;
        prod[k - m] += coeff;
    }
    q
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]

    #[test]
    fn h_matches_definition_on_satisfied_rows(
        ab in prop::collection::vec((arb_scalar(), arb_scalar()), 1..40)
    ) {
        // c = a·b makes the remainder vanish, as for a satisfied R1CS; non-power-of-two lengths are padded.
        let a: Vec<Scalar> = ab.iter().map(|x| x.0).collect();
        let b: Vec<Scalar> = ab.iter().map(|x| x.1).collect();
        let c: Vec<Scalar> = ab.iter().map(|x| x.0 * x.1).collect();
        let expected = h_by_definition(&a, &b, &c);
        let got = h_polynomial(a, b, c).unwrap();
        prop_assert_eq!(got.len(), Domain::for_len(ab.len()).unwrap().size() - 1);
        prop_assert_eq!(got, expected);
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]

    #[test]
    fn h_in_six_transforms_equals_bellpersons_seven(
        abc in prop::collection::vec((arb_scalar(), arb_scalar(), arb_scalar()), 1..70)
    ) {
        // Unsatisfied rows too: the identity behind the six transforms is linear algebra, not the constraints.
        let a: Vec<Scalar> = abc.iter().map(|x| x.0).collect();
        let b: Vec<Scalar> = abc.iter().map(|x| x.1).collect();
        let c: Vec<Scalar> = abc.iter().map(|x| x.2).collect();
        let want = h_polynomial_reference(a.clone(), b.clone(), c.clone()).unwrap();
        prop_assert_eq!(h_polynomial(a, b, c).unwrap(), want);
    }
}

#[test]
fn h_in_six_transforms_equals_bellpersons_seven_at_every_size_and_edge() {
    let mut rng = fresh_rng("h_in_six_transforms_equals_bellpersons_seven_at_every_size_and_edge");
    // Past 2^12 the transforms split their blocks across threads and the coset powers take several runs.
    for log_n in 0..=14u32 {
        let n = 1usize << log_n;
        for len in [n, n.saturating_sub(3).max(1)] {
            let [a, b, c] = [(); 3].map(|_| random_scalars(len, &mut rng));
            let want = h_polynomial_reference(a.clone(), b.clone(), c.clone()).unwrap();
            assert_eq!(h_polynomial(a, b, c).unwrap(), want, "length {len}");
        }
    }
    // All zero, all one, and c alone (a·b = 0).
    let n = 64;
    for (a, b, c) in [
        (Scalar::ZERO, Scalar::ZERO, Scalar::ZERO),
        (Scalar::ONE, Scalar::ONE, Scalar::ONE),
        (Scalar::ZERO, Scalar::ONE, -Scalar::ONE),
    ] {
        let (a, b, c) = (vec![a; n], vec![b; n], vec![c; n]);
        let want = h_polynomial_reference(a.clone(), b.clone(), c.clone()).unwrap();
        assert_eq!(h_polynomial(a, b, c).unwrap(), want);
    }
}

#[test]
fn two_pass_levels_equal_the_reference() {
    // From 2^21 a transform takes two column passes above its leaves, the second from a table of its blocks' own
    // twiddles; DIF (fft, ifft) against the stage-by-stage reference, DIT through H against bellperson's sequence,
    // whose transforms are DIF alone. The bit reversal takes 2^9 tiles here, most of them paired with another.
    let mut rng = fresh_rng("two_pass_levels_equal_the_reference");
    let d = Domain::new(21).unwrap();
    let v = random_scalars(d.size(), &mut rng);
    let (mut fast, mut slow) = (v.clone(), v.clone());
    d.fft(&mut fast).unwrap();
    d.fft_reference(&mut slow).unwrap();
    assert!(fast == slow, "fft 2^21");
    let (mut fast, mut slow) = (v.clone(), v);
    d.ifft(&mut fast).unwrap();
    d.ifft_reference(&mut slow).unwrap();
    assert!(fast == slow, "ifft 2^21");
    let [a, b, c] = [(); 3].map(|_| random_scalars(d.size() - 5, &mut rng));
    let want = h_polynomial_reference(a.clone(), b.clone(), c.clone()).unwrap();
    assert!(h_polynomial(a, b, c).unwrap() == want, "H 2^21");
}

#[test]
fn h_rejects_mismatched_lengths() {
    let err = h_polynomial(
        vec![Scalar::ONE; 3],
        vec![Scalar::ONE; 3],
        vec![Scalar::ONE; 2],
    )
    .unwrap_err();
    assert_eq!(
        err,
        Error::LengthMismatch {
            what: "c",
            got: 2,
            expected: 3
        }
    );
}
