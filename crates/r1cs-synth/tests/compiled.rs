//! Compiled-shape synthesis is bit-identical to the direct path: proptest on random circuits, plus SHA-256.

use bellpepper_core::{Circuit, ConstraintSystem, SynthesisError};
use blstrs::Scalar;
use circuits::Sha256Circuit;
use proptest::prelude::*;
use r1cs_synth::{synthesize, CompiledShape, Error, SynthesisOptions};
use test_utils::{seeded_rng, RandomCircuit};

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    #[test]
    fn compiled_equals_direct_on_random_circuits(
        seed in any::<u64>(),
        inputs in 0usize..6,
        witnesses in 0usize..30,
        constraints in 1usize..120,
    ) {
        let circuit = RandomCircuit::new(inputs, witnesses, constraints, &mut seeded_rng(seed));
        let direct = synthesize(circuit.clone(), &SynthesisOptions::default()).unwrap();
        let shape = CompiledShape::compile(circuit.without_values()).unwrap();
        prop_assert_eq!(shape.num_constraints(), direct.num_constraints());
        let compiled = shape.synthesize(circuit.clone()).unwrap();
        prop_assert_eq!(&compiled, &direct);
        // a, b and c left to the prover, then computed on the host: the same assignment.
        let mut deferred = shape
            .witness_assignment(circuit, r1cs_synth::ProvingAssignment::default())
            .unwrap();
        prop_assert!(deferred.products_deferred() && deferred.a.is_empty());
        prop_assert_eq!(deferred.num_constraints(), direct.num_constraints());
        shape.compute_products(&mut deferred).unwrap();
        prop_assert!(!deferred.products_deferred());
        prop_assert_eq!(deferred, direct);
    }
}

#[test]
fn compiled_equals_direct_on_sha256_and_reuses_the_shape() {
    let shape = CompiledShape::compile(Sha256Circuit::blank(1)).unwrap();
    // SHA-256 uses few distinct coefficients: 1, -1 and powers of two.
    assert!(
        shape.coeffs.len() < 600,
        "{} coefficients",
        shape.coeffs.len()
    );
    let mut rng = seeded_rng(30);
    for _ in 0..3 {
        let circuit = Sha256Circuit::random(1, &mut rng);
        let direct = synthesize(circuit.clone(), &SynthesisOptions::default()).unwrap();
        // The witness step alone: the direct path's inputs then aux, in column order.
        let w = shape.witness(circuit.clone()).unwrap();
        assert_eq!(w.inputs, direct.input_assignment);
        assert_eq!(w.aux, direct.aux_assignment);
        assert_eq!(shape.synthesize(circuit).unwrap(), direct);
    }
}

/// Allocates one aux variable more when its input is odd: its structure depends on its values.
#[derive(Clone)]
struct ValueDependent(u64);

impl Circuit<Scalar> for ValueDependent {
    fn synthesize<CS: ConstraintSystem<Scalar>>(self, cs: &mut CS) -> Result<(), SynthesisError> {
        let x = cs.alloc(|| "x", || Ok(Scalar::from(self.0)))?;
        cs.enforce(
            || "x * 1 = x",
            |lc| lc + x,
            |lc| lc + CS::one(),
            |lc| lc + x,
        );
        if self.0 % 2 == 1 {
            let y = cs.alloc(|| "y", || Ok(Scalar::from(self.0)))?;
            cs.enforce(
                || "y * 1 = y",
                |lc| lc + y,
                |lc| lc + CS::one(),
                |lc| lc + y,
            );
        }
        Ok(())
    }
}

#[test]
fn a_circuit_of_another_shape_is_rejected() {
    let shape = CompiledShape::compile(ValueDependent(2)).unwrap();
    assert!(shape.synthesize(ValueDependent(4)).is_ok());
    let err = shape.synthesize(ValueDependent(3)).unwrap_err();
    assert!(matches!(err, Error::ShapeMismatch(_)), "{err}");
    assert!(
        err.to_string()
            .contains("2 aux variables; the compiled shape has 1"),
        "{err}"
    );
}

mod files {
    use super::*;
    use r1cs_synth::ShapeFileError;

    fn shape() -> CompiledShape {
        CompiledShape::compile(Sha256Circuit::blank(1)).unwrap()
    }

    #[test]
    fn round_trip_and_reuse() {
        let s = shape();
        let bytes = s.to_file_bytes("sha256-1blk-v1");
        let back = CompiledShape::from_file_bytes(&bytes, "sha256-1blk-v1").unwrap();
        assert_eq!(back, s);
        let circuit = Sha256Circuit::random(1, &mut seeded_rng(40));
        let direct = synthesize(circuit.clone(), &SynthesisOptions::default()).unwrap();
        assert_eq!(back.synthesize(circuit).unwrap(), direct);
    }

    #[test]
    fn stale_truncated_and_corrupt_files_are_detected() {
        let bytes = shape().to_file_bytes("id-a");
        assert!(matches!(
            CompiledShape::from_file_bytes(&bytes, "id-b"),
            Err(ShapeFileError::Stale(_))
        ));
        let mut old = bytes.clone();
        old[8] = 0; // format version
        assert!(matches!(
            CompiledShape::from_file_bytes(&old, "id-a"),
            Err(ShapeFileError::Stale(_))
        ));
        for cut in [0usize, 7, 12, 20, bytes.len() / 2, bytes.len() - 1] {
            let err = CompiledShape::from_file_bytes(&bytes[..cut], "id-a").unwrap_err();
            assert!(
                matches!(
                    err,
                    ShapeFileError::Truncated { .. } | ShapeFileError::Corrupt(_)
                ),
                "cut at {cut}: {err}"
            );
        }
        for pos in [30usize, bytes.len() / 3, bytes.len() - 40, bytes.len() - 1] {
            let mut bad = bytes.clone();
            bad[pos] ^= 0x10;
            let err = CompiledShape::from_file_bytes(&bad, "id-a").unwrap_err();
            assert!(
                matches!(err, ShapeFileError::Corrupt(_)),
                "byte {pos}: {err}"
            );
        }
    }

    #[test]
    fn load_or_compile_rebuilds_what_it_cannot_trust() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.shape");
        let blank = || Sha256Circuit::blank(1);
        let (first, why) = CompiledShape::load_or_compile(&path, "id", blank).unwrap();
        assert_eq!(why.as_deref(), Some("no shape file yet"));
        let (again, why) = CompiledShape::load_or_compile(&path, "id", blank).unwrap();
        assert_eq!((again == first, why), (true, None));
        let mut bytes = std::fs::read(&path).unwrap();
        let n = bytes.len();
        bytes[n / 2] ^= 1;
        std::fs::write(&path, &bytes).unwrap();
        let (rebuilt, why) = CompiledShape::load_or_compile(&path, "id", blank).unwrap();
        assert!(why.unwrap().contains("checksum"));
        assert_eq!(rebuilt, first);
        // The rebuilt file is good again.
        assert_eq!(CompiledShape::read_file(&path, "id").unwrap(), first);
    }
}

#[test]
fn compiled_batch_equals_one_by_one() {
    let shape = CompiledShape::compile(Sha256Circuit::blank(1)).unwrap();
    let mut rng = seeded_rng(50);
    let circuits: Vec<_> = (0..3).map(|_| Sha256Circuit::random(1, &mut rng)).collect();
    let batch = shape.synthesize_batch(circuits.clone()).unwrap();
    for (c, got) in circuits.into_iter().zip(batch) {
        assert_eq!(got, synthesize(c, &SynthesisOptions::default()).unwrap());
    }
    let err = shape
        .synthesize_batch(vec![Sha256Circuit::blank(1)])
        .unwrap_err();
    assert!(matches!(err, Error::Synthesis { circuit: 0, .. }), "{err}");
}

#[test]
fn more_or_fewer_inputs_than_the_shape_are_rejected_without_a_panic() {
    let mut rng = seeded_rng(77);
    let two = RandomCircuit::new(2, 5, 8, &mut rng);
    let shape = CompiledShape::compile(two.without_values()).unwrap();
    for inputs in [0, 1, 3, 6] {
        let other = RandomCircuit::new(inputs, 5, 8, &mut rng);
        let err = shape.synthesize(other).unwrap_err();
        assert!(matches!(err, Error::ShapeMismatch(_)), "{err}");
        assert!(
            err.to_string()
                .contains(&format!("allocated {} inputs", inputs + 1)),
            "{err}"
        );
    }
    assert!(shape.synthesize(two).is_ok());
}

/// Reusing a finished assignment's memory gives the same result as fresh memory, whatever the spare held: another
/// circuit's values, a larger or smaller shape's vectors, or nothing.
#[test]
fn synthesize_reusing_equals_synthesize() {
    let shape = CompiledShape::compile(Sha256Circuit::blank(1)).unwrap();
    let big = CompiledShape::compile(Sha256Circuit::blank(2)).unwrap();
    let mut rng = seeded_rng(31);
    let mut spare = big.synthesize(Sha256Circuit::random(2, &mut rng)).unwrap();
    for _ in 0..3 {
        let circuit = Sha256Circuit::random(1, &mut rng);
        let fresh = shape.synthesize(circuit.clone()).unwrap();
        let reused = shape.synthesize_reusing(circuit, spare).unwrap();
        assert_eq!(reused, fresh);
        spare = reused;
    }
    let circuits: Vec<_> = (0..3).map(|_| Sha256Circuit::random(1, &mut rng)).collect();
    let fresh = shape.synthesize_batch(circuits.clone()).unwrap();
    // Fewer spares than circuits, one of them empty.
    let spares = vec![spare, r1cs_synth::ProvingAssignment::default()];
    assert_eq!(
        shape
            .synthesize_batch_reusing(circuits.clone(), spares)
            .unwrap(),
        fresh
    );
    // The witness-only batch: each equals its circuit's own witness assignment, and with products computed, the
    // full synthesis.
    let spares = vec![r1cs_synth::ProvingAssignment::default(), fresh[0].clone()];
    let witnesses = shape
        .witness_assignment_batch(circuits.clone(), spares)
        .unwrap();
    for ((c, mut w), full) in circuits.into_iter().zip(witnesses).zip(&fresh) {
        assert_eq!(w, shape.witness_assignment(c, Default::default()).unwrap());
        shape.compute_products(&mut w).unwrap();
        assert_eq!(&w, full);
    }
}

/// a, b and c left to the prover: the assignment carries the witness and the constraint count, written into a spare
/// (its a, b and c freed); computed afterwards on the host it is the full synthesis, and another shape's assignment is
/// refused by name.
#[test]
fn witness_assignment_then_products_equals_synthesize() {
    let shape = CompiledShape::compile(Sha256Circuit::blank(1)).unwrap();
    let other = CompiledShape::compile(Sha256Circuit::blank(2)).unwrap();
    let mut rng = seeded_rng(32);
    let mut spare = shape
        .synthesize(Sha256Circuit::random(1, &mut rng))
        .unwrap();
    for _ in 0..2 {
        let circuit = Sha256Circuit::random(1, &mut rng);
        let fresh = shape.synthesize(circuit.clone()).unwrap();
        let mut pa = shape.witness_assignment(circuit, spare).unwrap();
        assert!(pa.a.is_empty() && pa.b.is_empty() && pa.c.is_empty());
        assert_eq!(pa.deferred_rows, fresh.num_constraints());
        assert_eq!(pa.aux_assignment, fresh.aux_assignment);
        assert_eq!(pa.input_assignment, fresh.input_assignment);
        let err = other.compute_products(&mut pa.clone()).unwrap_err();
        assert!(matches!(err, Error::ShapeMismatch(_)), "{err}");
        shape.compute_products(&mut pa).unwrap();
        assert_eq!(pa, fresh);
        // Computing again changes nothing.
        shape.compute_products(&mut pa).unwrap();
        assert_eq!(pa, fresh);
        spare = pa;
    }
}
