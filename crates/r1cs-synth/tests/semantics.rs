//! Synthesis semantics: against bellpepper's TestConstraintSystem and the recorded shape, on random circuits and SHA-256.

use bellpepper_core::test_cs::TestConstraintSystem;
use bellpepper_core::Circuit;
use blstrs::Scalar;
use circuits::Sha256Circuit;
use ff::Field;
use r1cs_synth::{
    synthesize, synthesize_batch, synthesize_batch_reusing, synthesize_reusing, Error,
    ProvingAssignment, R1csShape, SizeHint, SynthesisOptions, Var,
};
use test_utils::{fresh_rng, seeded_rng, RandomCircuit};

/// Recomputes a/b/c and densities from the recorded matrices: an independent path to the same numbers.
fn check_against_shape(pa: &ProvingAssignment, shape: &R1csShape) {
    assert_eq!(pa.num_inputs(), shape.num_inputs);
    assert_eq!(pa.num_aux(), shape.num_aux);
    assert_eq!(pa.num_constraints(), shape.num_constraints());
    let value = |v: &Var| match v {
        Var::Input(i) => pa.input_assignment[*i],
        Var::Aux(i) => pa.aux_assignment[*i],
    };
    let mut a_aux = vec![false; shape.num_aux];
    let mut b_in = vec![false; shape.num_inputs];
    let mut b_aux = vec![false; shape.num_aux];
    for r in 0..shape.num_constraints() {
        let eval = |row: &[(Var, Scalar)]| {
            row.iter()
                .fold(Scalar::ZERO, |acc, (v, c)| acc + value(v) * c)
        };
        assert_eq!(pa.a[r], eval(shape.a.row(r)), "a[{r}]");
        assert_eq!(pa.b[r], eval(shape.b.row(r)), "b[{r}]");
        assert_eq!(pa.c[r], eval(shape.c.row(r)), "c[{r}]");
        for (v, c) in shape.a.row(r) {
            if let (Var::Aux(i), false) = (v, bool::from(c.is_zero())) {
                a_aux[*i] = true;
            }
        }
        for (v, c) in shape.b.row(r) {
            if !bool::from(c.is_zero()) {
                match v {
                    Var::Input(i) => b_in[*i] = true,
                    Var::Aux(i) => b_aux[*i] = true,
                }
            }
        }
    }
    let bits = |d: &r1cs_synth::Density| (0..d.len()).map(|i| d.get(i)).collect::<Vec<_>>();
    assert_eq!(bits(&pa.a_aux_density), a_aux);
    assert_eq!(bits(&pa.b_input_density), b_in);
    assert_eq!(bits(&pa.b_aux_density), b_aux);
    assert_eq!(
        pa.a_aux_density.count_ones(),
        a_aux.iter().filter(|b| **b).count()
    );
}

fn check_assignments_against_test_cs<C: Circuit<Scalar> + Clone>(
    circuit: C,
    pa: &ProvingAssignment,
) {
    let mut cs = TestConstraintSystem::<Scalar>::new();
    circuit.synthesize(&mut cs).unwrap();
    assert!(cs.is_satisfied());
    // TestConstraintSystem counts ONE as an input but not the x_i * 0 = 0 constraints.
    assert_eq!(cs.num_inputs(), pa.num_inputs());
    assert_eq!(cs.num_constraints() + pa.num_inputs(), pa.num_constraints());
    assert_eq!(cs.scalar_inputs(), pa.input_assignment);
    assert_eq!(cs.scalar_aux(), pa.aux_assignment);
}

#[test]
fn random_circuits_match_shape_and_test_cs() {
    let mut rng = fresh_rng("random_circuits_match_shape_and_test_cs");
    for (inputs, witnesses, constraints) in
        [(0, 0, 1), (0, 1, 1), (1, 3, 7), (5, 20, 100), (2, 50, 333)]
    {
        let circuit = RandomCircuit::new(inputs, witnesses, constraints, &mut rng);
        let pa = synthesize(
            circuit.clone(),
            &SynthesisOptions {
                check: true,
                hint: None,
            },
        )
        .unwrap();
        assert_eq!(pa.first_unsatisfied(), None);
        // Input constraints: x_i * 0 = 0 at the end.
        for i in 0..pa.num_inputs() {
            let r = pa.num_constraints() - pa.num_inputs() + i;
            assert_eq!(
                (pa.a[r], pa.b[r], pa.c[r]),
                (pa.input_assignment[i], Scalar::ZERO, Scalar::ZERO)
            );
        }
        let shape = R1csShape::record(circuit.without_values()).unwrap();
        check_against_shape(&pa, &shape);
        check_assignments_against_test_cs(circuit, &pa);
    }
}

#[test]
fn sha256_matches_shape_and_test_cs() {
    let circuit = Sha256Circuit::random(1, &mut seeded_rng(3));
    let pa = synthesize(circuit.clone(), &SynthesisOptions::default()).unwrap();
    assert_eq!(pa.public_inputs(), circuit.public_inputs().unwrap());
    let shape = R1csShape::record(Sha256Circuit::blank(1)).unwrap();
    check_against_shape(&pa, &shape);
    check_assignments_against_test_cs(circuit, &pa);
}

#[test]
fn checker_names_the_first_failing_constraint() {
    let mut circuit = RandomCircuit::new(2, 5, 40, &mut seeded_rng(4));
    circuit.break_constraint = Some(17);
    let err = synthesize(
        circuit.clone(),
        &SynthesisOptions {
            check: true,
            hint: None,
        },
    )
    .unwrap_err();
    match err {
        Error::Unsatisfied {
            circuit: 0,
            index: 17,
            ref path,
        } => {
            assert_eq!(path, "constraint 17/a * b = out + extra")
        }
        other => panic!("unexpected {other}"),
    }
    // Without the check, synthesis succeeds and the plain scan finds the same index.
    let pa = synthesize(circuit, &SynthesisOptions::default()).unwrap();
    assert_eq!(pa.first_unsatisfied(), Some(17));
}

#[test]
fn missing_values_are_a_synthesis_error() {
    let circuit = RandomCircuit::new(1, 2, 3, &mut seeded_rng(5)).without_values();
    let err = synthesize(circuit, &SynthesisOptions::default()).unwrap_err();
    assert!(matches!(err, Error::Synthesis { circuit: 0, .. }), "{err}");
}

#[test]
fn batch_equals_one_by_one_with_and_without_hint() {
    let mut rng = fresh_rng("batch_equals_one_by_one_with_and_without_hint");
    let circuits: Vec<_> = (0..4)
        .map(|_| RandomCircuit::new(3, 10, 60, &mut rng))
        .collect();
    let single: Vec<_> = circuits
        .iter()
        .map(|c| synthesize(c.clone(), &SynthesisOptions::default()).unwrap())
        .collect();
    let batch = synthesize_batch(circuits.clone(), &SynthesisOptions::default()).unwrap();
    assert_eq!(batch, single);
    let hint = SizeHint {
        constraints: 100,
        aux: 100,
        inputs: 4,
    };
    let hinted = synthesize_batch(
        circuits.clone(),
        &SynthesisOptions {
            check: true,
            hint: Some(hint),
        },
    )
    .unwrap();
    assert_eq!(hinted, single);
    // The error names the failing circuit of the batch.
    let mut broken = circuits;
    broken[2].break_constraint = Some(0);
    let err = synthesize_batch(
        broken,
        &SynthesisOptions {
            check: true,
            hint: None,
        },
    )
    .unwrap_err();
    assert!(
        matches!(
            err,
            Error::Unsatisfied {
                circuit: 2,
                index: 0,
                ..
            }
        ),
        "{err}"
    );
}

/// The direct path into a finished assignment's memory gives what fresh memory gives, whatever the spare held: a
/// larger or smaller circuit's vectors, an assignment whose a, b and c were left to the prover, or nothing; the
/// checker and the hint work as without a spare, and a batch takes fewer spares than circuits.
#[test]
fn direct_synthesize_reusing_equals_synthesize() {
    let mut rng = fresh_rng("direct_synthesize_reusing_equals_synthesize");
    let big = RandomCircuit::new(5, 40, 200, &mut rng);
    let mut spare = synthesize(big, &SynthesisOptions::default()).unwrap();
    for round in 0..4 {
        let circuit = RandomCircuit::new(3, 10 + round, 60 + 20 * round, &mut rng);
        let fresh = synthesize(circuit.clone(), &SynthesisOptions::default()).unwrap();
        let opts = SynthesisOptions {
            check: round % 2 == 1,
            hint: (round == 2).then(|| fresh.size_hint()),
        };
        let reused = synthesize_reusing(circuit, &opts, spare).unwrap();
        assert_eq!(reused, fresh, "round {round}");
        spare = reused;
    }
    // A spare whose a, b and c are with the prover.
    let shape = r1cs_synth::CompiledShape::compile(Sha256Circuit::blank(1)).unwrap();
    let sha = Sha256Circuit::random(1, &mut rng);
    let deferred = shape
        .witness_assignment(sha.clone(), ProvingAssignment::default())
        .unwrap();
    assert!(deferred.products_deferred());
    let fresh = synthesize(sha.clone(), &SynthesisOptions::default()).unwrap();
    let reused = synthesize_reusing(sha, &SynthesisOptions::default(), deferred).unwrap();
    assert!(!reused.products_deferred());
    assert_eq!(reused, fresh);
    // The checker still names the failing constraint.
    let mut broken = RandomCircuit::new(2, 5, 40, &mut rng);
    broken.break_constraint = Some(9);
    let check = SynthesisOptions {
        check: true,
        hint: None,
    };
    let err = synthesize_reusing(broken, &check, reused).unwrap_err();
    assert!(matches!(err, Error::Unsatisfied { index: 9, .. }), "{err}");
    // A batch with fewer spares than circuits, one of them empty.
    let circuits: Vec<_> = (0..3)
        .map(|_| RandomCircuit::new(2, 8, 50, &mut rng))
        .collect();
    let fresh = synthesize_batch(circuits.clone(), &SynthesisOptions::default()).unwrap();
    let spares = vec![spare, ProvingAssignment::default()];
    assert_eq!(
        synthesize_batch_reusing(circuits, &SynthesisOptions::default(), spares).unwrap(),
        fresh
    );
}
