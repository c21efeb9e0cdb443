//! A circuit's witness from its pieces (head + one part each, run at once) equals the whole circuit's, on the first
//! call (which learns the head's size) and on later ones; pieces that do not make the circuit are errors.

use bellpepper_core::{Circuit, ConstraintSystem, SynthesisError};
use blstrs::Scalar;
use ff::Field;
use r1cs_synth::{synthesize, CompiledShape, Error, ProvingAssignment, SynthesisOptions};
use test_utils::fresh_rng;

/// A head of aux values (the first `head_inputs` of them also made inputs) and parts of equal shape that read it.
/// `take: Some(i)` synthesizes the head and part i alone: piece i.
#[derive(Clone)]
struct Parted {
    head: Vec<Scalar>,
    head_inputs: usize,
    parts: Vec<Vec<Scalar>>,
    part_inputs: usize,
    take: Option<usize>,
    /// Part i's code fails.
    fail: Option<usize>,
}

impl Parted {
    fn random(
        head: usize,
        head_inputs: usize,
        parts: usize,
        len: usize,
        part_inputs: usize,
    ) -> Self {
        let mut rng = fresh_rng("pieces");
        let mut v = |n: usize| (0..n).map(|_| Scalar::random(&mut rng)).collect::<Vec<_>>();
        Parted {
            head: v(head),
            head_inputs,
            parts: (0..parts).map(|_| v(len)).collect(),
            part_inputs,
            take: None,
            fail: None,
        }
    }

    fn pieces(&self) -> Vec<Parted> {
        (0..self.parts.len())
            .map(|i| Parted {
                take: Some(i),
                ..self.clone()
            })
            .collect()
    }
}

impl Circuit<Scalar> for Parted {
    fn synthesize<CS: ConstraintSystem<Scalar>>(self, cs: &mut CS) -> Result<(), SynthesisError> {
        let mut head = Vec::new();
        for (j, &v) in self.head.iter().enumerate() {
            let var = cs.alloc(|| format!("head {j}"), || Ok(v))?;
            if j < self.head_inputs {
                let input = cs.alloc_input(|| format!("head input {j}"), || Ok(v))?;
                cs.enforce(
                    || "input",
                    |lc| lc + var,
                    |lc| lc + CS::one(),
                    |lc| lc + input,
                );
            }
            head.push((var, v));
        }
        let which: Vec<usize> = match self.take {
            Some(i) => vec![i],
            None => (0..self.parts.len()).collect(),
        };
        for i in which {
            let mut cs = cs.namespace(|| format!("part {i}"));
            for (j, &v) in self.parts[i].iter().enumerate() {
                let (h, hv) = head[j % head.len()];
                let a = cs.alloc(
                    || "v",
                    || {
                        if self.fail == Some(i) {
                            Err(SynthesisError::AssignmentMissing)
                        } else {
                            Ok(v)
                        }
                    },
                )?;
                let p = cs.alloc(|| "v h", || Ok(v * hv))?;
                cs.enforce(|| "p = v h", |lc| lc + a, |lc| lc + h, |lc| lc + p);
                if j < self.part_inputs {
                    let input = cs.alloc_input(|| "p", || Ok(v * hv))?;
                    cs.enforce(
                        || "input",
                        |lc| lc + p,
                        |lc| lc + CS::one(),
                        |lc| lc + input,
                    );
                }
            }
        }
        Ok(())
    }
}

#[test]
fn pieces_make_the_whole_circuits_witness_first_and_later_calls() {
    for (head, head_inputs, parts, len, part_inputs) in [
        (1, 0, 1, 5, 0),
        (1, 1, 2, 1, 0),
        (3, 2, 2, 7, 2),
        (5, 1, 3, 16, 0),
        (2, 0, 7, 9, 3),
    ] {
        let circuit = Parted::random(head, head_inputs, parts, len, part_inputs);
        let shape = CompiledShape::compile(circuit.clone()).unwrap();
        // Three times on one shape: the first call learns the head's size, the later ones use it; fresh values
        // each time, written into the previous call's vectors (a slot left unwritten would keep an old value).
        let mut previous = ProvingAssignment::default();
        for call in 0..3 {
            let circuit = Parted::random(head, head_inputs, parts, len, part_inputs);
            let at = format!(
                "head {head}/{head_inputs}, {parts} parts of {len}/{part_inputs}, call {call}"
            );
            let direct = synthesize(circuit.clone(), &SynthesisOptions::default()).unwrap();
            let mut deferred = shape
                .witness_assignment_pieces(circuit.pieces(), std::mem::take(&mut previous))
                .unwrap();
            assert_eq!(deferred.input_assignment, direct.input_assignment, "{at}");
            assert_eq!(deferred.aux_assignment, direct.aux_assignment, "{at}");
            shape.compute_products(&mut deferred).unwrap();
            assert_eq!(deferred, direct, "{at}");
            // Into a finished assignment's vectors, a, b and c included.
            let reused = shape
                .synthesize_pieces_reusing(circuit.pieces(), deferred)
                .unwrap();
            assert_eq!(reused, direct, "{at}");
            previous = reused;
        }
    }
}

#[test]
fn pieces_that_do_not_make_the_circuit_are_errors() {
    let circuit = Parted::random(3, 1, 4, 6, 1);
    let shape = CompiledShape::compile(circuit.clone()).unwrap();
    let spare = ProvingAssignment::default;
    let mismatch = |r: r1cs_synth::Result<ProvingAssignment>, want: &str| match r {
        Err(Error::ShapeMismatch(m)) => assert!(m.contains(want), "{m}"),
        other => panic!("{:?}", other.map(|_| ())),
    };
    mismatch(
        shape.witness_assignment_pieces(Vec::<Parted>::new(), spare()),
        "no pieces",
    );
    // Parts one value longer, before and after the head's size is learned.
    let longer = Parted::random(3, 1, 4, 7, 1);
    mismatch(
        shape.witness_assignment_pieces(longer.pieces(), spare()),
        "cannot make a circuit",
    );
    shape
        .witness_assignment_pieces(circuit.pieces(), spare())
        .unwrap();
    mismatch(
        shape.witness_assignment_pieces(longer.pieces(), spare()),
        "piece 0 made",
    );
    // A piece with another head.
    let mut pieces = circuit.pieces();
    pieces[2].head[1] += Scalar::ONE;
    mismatch(
        shape.witness_assignment_pieces(pieces, spare()),
        "piece 2's head differs",
    );
    // A piece whose own code fails is named, and the shape still makes the right witness afterwards.
    failing_piece_is_named_then_right_witness(&shape, &circuit);
}

/// Piece 3 of `circuit`'s pieces fails its own code: the call names it, and the next call on `shape` with sound
/// pieces makes the whole circuit's witness.
fn failing_piece_is_named_then_right_witness(shape: &CompiledShape, circuit: &Parted) {
    let mut pieces = circuit.pieces();
    pieces[3].fail = Some(3);
    match shape.witness_assignment_pieces(pieces, ProvingAssignment::default()) {
        Err(Error::Synthesis {
            circuit: 3,
            source: SynthesisError::AssignmentMissing,
        }) => {}
        other => panic!("{:?}", other.map(|_| ())),
    }
    let direct = synthesize(circuit.clone(), &SynthesisOptions::default()).unwrap();
    let w = shape
        .witness_assignment_pieces(circuit.pieces(), ProvingAssignment::default())
        .unwrap();
    assert_eq!(w.input_assignment, direct.input_assignment);
    assert_eq!(w.aux_assignment, direct.aux_assignment);
}

#[test]
fn first_call_errors_name_the_piece() {
    // On a fresh shape the pieces run at once into vectors of their own: the checks must still name the piece.
    let circuit = Parted::random(3, 1, 4, 6, 1);
    let fresh = || CompiledShape::compile(circuit.clone()).unwrap();
    let spare = ProvingAssignment::default;
    let mismatch = |r: r1cs_synth::Result<ProvingAssignment>, want: &str| match r {
        Err(Error::ShapeMismatch(m)) => assert!(m.contains(want), "{m}"),
        other => panic!("{:?}", other.map(|_| ())),
    };
    // Piece 2's part one value longer, its head the same.
    let mut pieces = circuit.pieces();
    pieces[2].parts = Parted::random(3, 1, 4, 7, 1).parts;
    mismatch(
        fresh().witness_assignment_pieces(pieces, spare()),
        "piece 2 made",
    );
    // Piece 1 with another head.
    let mut pieces = circuit.pieces();
    pieces[1].head[2] += Scalar::ONE;
    mismatch(
        fresh().witness_assignment_pieces(pieces, spare()),
        "piece 1's head differs",
    );
    // Piece 3's code fails on a fresh shape; it learns nothing, and the next call makes the right witness.
    failing_piece_is_named_then_right_witness(&fresh(), &circuit);
}
