//! The PoRep-like synthetic circuit is satisfied, has the real circuit's shape statistics, and every LC backend
//! synthesizes it identically.

use blstrs::Scalar;
use circuits::PorepLikeCircuit;
use ff::Field;
use lc_indexer::{SmallVecTerms1, SmallVecTerms2, SmallVecTerms4, VecTerms};
use r1cs_synth::{synthesize, CompiledShape, SynthesisOptions};

#[test]
fn shape_statistics_match_the_real_circuit() {
    let circuit = PorepLikeCircuit::<VecTerms>::new(20_000, 327, 7);
    let pa = synthesize(
        circuit.clone(),
        &SynthesisOptions {
            check: true,
            hint: None,
        },
    )
    .unwrap();
    let shape = CompiledShape::compile(PorepLikeCircuit::<VecTerms>::blank(20_000, 327)).unwrap();
    let rows = shape.num_constraints() as f64;
    let per_row = |nnz: usize| nnz as f64 / rows;
    let (a, b, c) = (
        per_row(shape.a.nonzeros()),
        per_row(shape.b.nonzeros()),
        per_row(shape.c.nonzeros()),
    );
    eprintln!("rows {rows}, non-zeros per row A {a:.3} B {b:.3} C {c:.3}");
    // Real partitions: A 2.4, B 1.0, C 2.2 (the x*0=0 input rows dilute it slightly here).
    assert!((2.3..2.5).contains(&a), "A {a}");
    assert!((0.95..1.05).contains(&b), "B {b}");
    assert!((2.1..2.3).contains(&c), "C {c}");
    let aux = pa.num_aux() as f64;
    let a_aux = pa.a_aux_density.count_ones() as f64 / aux;
    let b_aux = pa.b_aux_density.count_ones() as f64 / aux;
    eprintln!(
        "density A-aux {a_aux:.4}, B-aux {b_aux:.4}, B-input {} of {}",
        pa.b_input_density.count_ones(),
        pa.num_inputs()
    );
    assert!(a_aux > 0.99, "A-aux density {a_aux}");
    assert!((0.23..0.27).contains(&b_aux), "B-aux density {b_aux}");
    assert_eq!(pa.b_input_density.count_ones(), 1, "only ONE is in B");
    assert_eq!(pa.num_inputs(), 328);
    let zeros = pa
        .aux_assignment
        .iter()
        .filter(|v| bool::from(v.is_zero()))
        .count() as f64
        / aux;
    let ones = pa
        .aux_assignment
        .iter()
        .filter(|v| **v == Scalar::ONE)
        .count() as f64
        / aux;
    let other = 1.0 - zeros - ones;
    eprintln!("aux values: 0 {zeros:.3}, 1 {ones:.3}, other {other:.3}");
    assert!((0.47..0.55).contains(&zeros), "zeros {zeros}");
    assert!((0.43..0.51).contains(&ones), "ones {ones}");
    assert!((0.015..0.035).contains(&other), "other {other}");
}

#[test]
fn every_lc_backend_synthesizes_the_same() {
    let opts = SynthesisOptions {
        check: true,
        hint: None,
    };
    let reference = synthesize(PorepLikeCircuit::<VecTerms>::new(2_000, 10, 3), &opts).unwrap();
    assert_eq!(
        synthesize(PorepLikeCircuit::<SmallVecTerms1>::new(2_000, 10, 3), &opts).unwrap(),
        reference
    );
    assert_eq!(
        synthesize(PorepLikeCircuit::<SmallVecTerms2>::new(2_000, 10, 3), &opts).unwrap(),
        reference
    );
    assert_eq!(
        synthesize(PorepLikeCircuit::<SmallVecTerms4>::new(2_000, 10, 3), &opts).unwrap(),
        reference
    );
    // Compiled path too.
    let shape = CompiledShape::compile(PorepLikeCircuit::<VecTerms>::blank(2_000, 10)).unwrap();
    assert_eq!(
        shape
            .synthesize(PorepLikeCircuit::<VecTerms>::new(2_000, 10, 3))
            .unwrap(),
        reference
    );
    // Another seed gives another witness on the same shape.
    let other = synthesize(PorepLikeCircuit::<VecTerms>::new(2_000, 10, 4), &opts).unwrap();
    assert_ne!(other.aux_assignment, reference.aux_assignment);
    assert_eq!(other.num_constraints(), reference.num_constraints());
}

#[test]
fn challenges_make_a_circuit_whose_pieces_give_its_witness() {
    let check = SynthesisOptions {
        check: true,
        hint: None,
    };
    // One challenge is the circuit as it has always been.
    let one = PorepLikeCircuit::<VecTerms>::new(4_000, 10, 5);
    let same = one.clone().with_challenges(1);
    assert_eq!(same.shape_id(), one.shape_id());
    assert_eq!(
        synthesize(same, &check).unwrap(),
        synthesize(one, &check).unwrap()
    );
    for k in [2, 3, 18] {
        let circuit = PorepLikeCircuit::<VecTerms>::new(4_000, 10, 11).with_challenges(k);
        let blank = PorepLikeCircuit::<VecTerms>::blank(4_000, 10).with_challenges(k);
        assert_eq!(circuit.challenges(), k);
        assert_eq!(circuit.shape_id(), blank.shape_id());
        assert!(circuit.shape_id().contains(&format!("-{k}ch")));
        assert!(circuit.circuit_constraints() >= 4_000);
        // Satisfied (checked as it is synthesized), and its pieces give the same witness, learned and then known.
        let direct = synthesize(circuit.clone(), &check).unwrap();
        assert_eq!(direct.num_constraints(), circuit.circuit_constraints() + 11);
        let shape = CompiledShape::compile(blank).unwrap();
        for _ in 0..2 {
            let mut w = shape
                .witness_assignment_pieces(circuit.pieces(), Default::default())
                .unwrap();
            shape.compute_products(&mut w).unwrap();
            assert_eq!(w, direct, "{k} challenges");
        }
        // Another seed's challenges are other values.
        let other = PorepLikeCircuit::<VecTerms>::new(4_000, 10, 12).with_challenges(k);
        assert_ne!(
            synthesize(other, &check).unwrap().aux_assignment,
            direct.aux_assignment
        );
    }
}
