//! Every backend equals a `BTreeMap` model on random insert sequences.

use std::collections::BTreeMap;

use blstrs::Scalar;
use ff::Field;
use lc_indexer::{SmallVecTerms1, SmallVecTerms2, SmallVecTerms4, TermStorage, VecTerms};
use proptest::prelude::*;

fn model(ops: &[(usize, u64)]) -> Vec<(usize, Scalar)> {
    let mut m = BTreeMap::new();
    for &(i, c) in ops {
        *m.entry(i).or_insert(Scalar::ZERO) += Scalar::from(c);
    }
    m.into_iter().collect()
}

fn run<S: TermStorage>(ops: &[(usize, u64)]) -> Vec<(usize, Scalar)> {
    let mut t = S::default();
    for &(i, c) in ops {
        t.add_term(i, Scalar::from(c));
    }
    t.terms().to_vec()
}

fn ops() -> impl Strategy<Value = Vec<(usize, u64)>> {
    // Small index ranges force merges; the mix of ascending runs and random jumps
    // exercises the append fast path and the binary-search path.
    prop_oneof![
        prop::collection::vec((0usize..8, any::<u64>()), 0..40),
        prop::collection::vec((0usize..1000, any::<u64>()), 0..200),
        (0usize..50, 0usize..30)
            .prop_map(|(start, n)| (start..start + n).map(|i| (i, i as u64)).collect()),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn backends_equal_btreemap(ops in ops()) {
        let expected = model(&ops);
        prop_assert_eq!(run::<VecTerms>(&ops), expected.clone());
        prop_assert_eq!(run::<SmallVecTerms1>(&ops), expected.clone());
        prop_assert_eq!(run::<SmallVecTerms2>(&ops), expected.clone());
        prop_assert_eq!(run::<SmallVecTerms4>(&ops), expected);
    }

    #[test]
    fn eval_equals_model(ops in ops(), seed in any::<u64>()) {
        let n = ops.iter().map(|o| o.0 + 1).max().unwrap_or(0);
        let assignment: Vec<Scalar> = (0..n as u64).map(|i| Scalar::from(i.wrapping_mul(seed) | 1)).collect();
        let expected = model(&ops).iter().fold(Scalar::ZERO, |acc, (i, c)| acc + assignment[*i] * c);
        let mut t = SmallVecTerms2::default();
        for &(i, c) in &ops {
            t.add_term(i, Scalar::from(c));
        }
        prop_assert_eq!(t.eval(&assignment), expected);
    }
}
