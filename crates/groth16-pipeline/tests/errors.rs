//! Bad input gets a precise error: mismatched parameters, wrong input counts, malformed proof bytes.

use blstrs::Scalar;
use groth16_pipeline::{prepare_verifying_key, prove, verify_proof, Error, Proof};
use r1cs_synth::{synthesize, SynthesisOptions};
use test_utils::{seeded_rng, RandomCircuit};

#[test]
fn mismatched_parameters_are_rejected_before_proving() {
    let mut rng = seeded_rng(10);
    let small = RandomCircuit::new(1, 3, 5, &mut rng);
    let big = RandomCircuit::new(1, 3, 40, &mut rng);
    let params = srs_loader::setup(small.without_values(), &mut rng).unwrap();
    let ok = synthesize(small, &SynthesisOptions::default()).unwrap();
    let pa = synthesize(big, &SynthesisOptions::default()).unwrap();
    let err = prove(&params, vec![ok, pa], &mut rng).unwrap_err();
    assert!(matches!(err, Error::Params { circuit: 1, .. }), "{err}");
    let msg = err.to_string();
    assert!(
        msg.contains("circuit 1") && msg.contains("the circuit needs"),
        "{msg}"
    );
}

#[test]
fn verifier_rejects_wrong_input_count_and_bad_bytes() {
    let mut rng = seeded_rng(11);
    let circuit = RandomCircuit::new(2, 3, 10, &mut rng);
    let params = srs_loader::setup(circuit.without_values(), &mut rng).unwrap();
    let pvk = prepare_verifying_key(&params.vk);
    let pa = synthesize(circuit.clone(), &SynthesisOptions::default()).unwrap();
    let (proof, _) = prove(&params, vec![pa], &mut rng).unwrap().pop().unwrap();
    let err = verify_proof(&pvk, &proof, &[Scalar::from(1u64)]).unwrap_err();
    assert!(
        matches!(
            err,
            Error::InputCount {
                expected: 2,
                got: 1
            }
        ),
        "{err}"
    );

    let bytes = proof.to_bytes();
    assert!(matches!(
        Proof::from_bytes(&bytes[..191]),
        Err(Error::ProofLength { got: 191 })
    ));
    assert!(matches!(
        Proof::many_from_bytes(&[]),
        Err(Error::ProofLength { got: 0 })
    ));
    let two = [bytes, bytes].concat();
    assert_eq!(Proof::many_from_bytes(&two).unwrap(), vec![proof, proof]);
    let mut garbage = two.clone();
    garbage[192..240].fill(0xff);
    assert!(matches!(
        Proof::many_from_bytes(&garbage),
        Err(Error::ProofPoint {
            index: 1,
            part: "A",
            ..
        })
    ));
}
