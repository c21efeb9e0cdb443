//! Interoperability with bellperson 0.27: parameters both ways, proofs both ways, byte-identical proofs for the same r and s.

use bellpepper_core::Circuit;
use bellperson::groth16 as bp;
use blstrs::{Bls12, Scalar};
use circuits::Sha256Circuit;
use ff::Field;
use groth16_pipeline::{
    prepare_verifying_key, prove, prove_one_with_randomness, verify_proof, Proof, ProverOptions,
    PROOF_BYTES,
};
use r1cs_synth::{synthesize, SynthesisOptions};
use srs_loader::{Parameters, ReadOptions};
use test_utils::{fresh_rng, RandomCircuit, TestRng};

fn bellperson_params_bytes<C: Circuit<Scalar>>(blank: C, rng: &mut TestRng) -> Vec<u8> {
    let params = bp::generate_random_parameters::<Bls12, _, _>(blank, rng).unwrap();
    let mut bytes = Vec::new();
    params.write(&mut bytes).unwrap();
    bytes
}

fn bp_proof_bytes(p: &bp::Proof<Bls12>) -> [u8; PROOF_BYTES] {
    let mut v = Vec::new();
    p.write(&mut v).unwrap();
    v.try_into().unwrap()
}

/// bellperson's parameters, read by us; our proof with the same r, s equals bellperson's byte for byte,
/// so our a/b/c, H, assignments and densities agree with bellperson's; both verifiers accept it.
fn same_proof_as_bellperson<C: Circuit<Scalar> + Clone + Send>(
    blank: C,
    full: C,
    inputs: Vec<Scalar>,
    rng: &mut TestRng,
) {
    let bytes = bellperson_params_bytes(blank, rng);
    let ours = Parameters::from_bytes(&bytes, ReadOptions::default()).unwrap();
    assert_eq!(ours.to_bytes(), bytes, "round trip must be byte-identical");
    let theirs = bp::Parameters::<Bls12>::read(&bytes[..], true).unwrap();

    let (r, s) = (Scalar::random(&mut *rng), Scalar::random(&mut *rng));
    let pa = synthesize(
        full.clone(),
        &SynthesisOptions {
            check: true,
            hint: None,
        },
    )
    .unwrap();
    let (proof, _) = prove_one_with_randomness(&ours, pa, r, s, &ProverOptions::default()).unwrap();
    let expected = bp::create_proof::<Bls12, _, _>(full, &theirs, r, s).unwrap();
    assert_eq!(
        proof.to_bytes(),
        bp_proof_bytes(&expected),
        "proof bytes differ from bellperson's"
    );

    let pvk = prepare_verifying_key(&ours.vk);
    assert!(verify_proof(&pvk, &proof, &inputs).unwrap());
    let bp_pvk = bp::prepare_verifying_key(&theirs.vk);
    let decoded = bp::Proof::<Bls12>::read(&proof.to_bytes()[..]).unwrap();
    assert!(bp::verify_proof(&bp_pvk, &decoded, &inputs).unwrap());
}

#[test]
fn random_circuits_same_proof_as_bellperson() {
    let mut rng = fresh_rng("random_circuits_same_proof_as_bellperson");
    for (inputs, witnesses, constraints) in [(0, 1, 1), (1, 4, 9), (3, 30, 120), (6, 40, 300)] {
        let circuit = RandomCircuit::new(inputs, witnesses, constraints, &mut rng);
        let public = circuit.public_inputs();
        same_proof_as_bellperson(circuit.without_values(), circuit, public, &mut rng);
    }
}

#[test]
fn sha256_same_proof_as_bellperson() {
    let mut rng = fresh_rng("sha256_same_proof_as_bellperson");
    let circuit = Sha256Circuit::random(1, &mut rng);
    let public = circuit.public_inputs().unwrap();
    same_proof_as_bellperson(Sha256Circuit::blank(1), circuit, public, &mut rng);
}

/// Our parameters, read by bellperson, prove with bellperson; bellperson's proof verifies under ours, ours under bellperson's.
fn our_setup_works_with_bellperson<C: Circuit<Scalar> + Clone + Send>(
    blank: C,
    full: C,
    inputs: Vec<Scalar>,
    rng: &mut TestRng,
) {
    let ours = srs_loader::setup(blank, rng).unwrap();
    let bytes = ours.to_bytes();
    let theirs = bp::Parameters::<Bls12>::read(&bytes[..], true).unwrap();
    let mut again = Vec::new();
    theirs.write(&mut again).unwrap();
    assert_eq!(
        again, bytes,
        "bellperson must write our file back byte for byte"
    );

    let bp_proof = bp::create_random_proof::<Bls12, _, _, _>(full.clone(), &theirs, rng).unwrap();
    let pvk = prepare_verifying_key(&ours.vk);
    let decoded = Proof::from_bytes(&bp_proof_bytes(&bp_proof)).unwrap();
    assert!(
        verify_proof(&pvk, &decoded, &inputs).unwrap(),
        "bellperson's proof must verify under ours"
    );

    let pa = synthesize(full, &SynthesisOptions::default()).unwrap();
    let (proof, _) = prove(&ours, vec![pa], rng).unwrap().pop().unwrap();
    let bp_pvk = bp::prepare_verifying_key(&theirs.vk);
    let ours_decoded = bp::Proof::<Bls12>::read(&proof.to_bytes()[..]).unwrap();
    assert!(
        bp::verify_proof(&bp_pvk, &ours_decoded, &inputs).unwrap(),
        "our proof must verify under bellperson's"
    );
    assert!(verify_proof(&pvk, &proof, &inputs).unwrap());

    // A changed public input fails both verifiers.
    if let Some(first) = inputs.first() {
        let mut bad = inputs.clone();
        bad[0] = *first + Scalar::ONE;
        assert!(!verify_proof(&pvk, &proof, &bad).unwrap());
        assert!(!bp::verify_proof(&bp_pvk, &ours_decoded, &bad).unwrap());
    }
    // A changed proof byte fails both: either it no longer decodes, or it decodes and does not verify.
    let bytes = proof.to_bytes();
    for pos in [0usize, 47, 50, 143, 150, 191] {
        let mut tampered = bytes;
        tampered[pos] ^= 0x01;
        let ours_ok = Proof::from_bytes(&tampered)
            .map(|p| verify_proof(&pvk, &p, &inputs).unwrap())
            .unwrap_or(false);
        let theirs_ok = bp::Proof::<Bls12>::read(&tampered[..])
            .map(|p| bp::verify_proof(&bp_pvk, &p, &inputs).unwrap())
            .unwrap_or(false);
        assert!(
            !ours_ok && !theirs_ok,
            "byte {pos} flipped: ours {ours_ok}, bellperson {theirs_ok}"
        );
    }
}

#[test]
fn random_circuits_our_setup_with_bellperson() {
    let mut rng = fresh_rng("random_circuits_our_setup_with_bellperson");
    for (inputs, witnesses, constraints) in [(1, 2, 3), (4, 25, 150)] {
        let circuit = RandomCircuit::new(inputs, witnesses, constraints, &mut rng);
        let public = circuit.public_inputs();
        our_setup_works_with_bellperson(circuit.without_values(), circuit, public, &mut rng);
    }
}

#[test]
fn sha256_our_setup_with_bellperson() {
    let mut rng = fresh_rng("sha256_our_setup_with_bellperson");
    let circuit = Sha256Circuit::random(1, &mut rng);
    let public = circuit.public_inputs().unwrap();
    our_setup_works_with_bellperson(Sha256Circuit::blank(1), circuit, public, &mut rng);
}

#[test]
fn several_circuits_share_one_parameter_set() {
    let mut rng = fresh_rng("several_circuits_share_one_parameter_set");
    let params = srs_loader::setup(Sha256Circuit::blank(1), &mut rng).unwrap();
    let pvk = prepare_verifying_key(&params.vk);
    let circuits: Vec<_> = (0..3).map(|_| Sha256Circuit::random(1, &mut rng)).collect();
    let pas = r1cs_synth::synthesize_batch(circuits.clone(), &SynthesisOptions::default()).unwrap();
    let proofs = prove(&params, pas, &mut rng).unwrap();
    assert_eq!(proofs.len(), 3);
    for (i, ((proof, _), c)) in proofs.iter().zip(&circuits).enumerate() {
        assert!(
            verify_proof(&pvk, proof, &c.public_inputs().unwrap()).unwrap(),
            "proof {i}"
        );
        // Each proof checks only against its own digest.
        let other = &circuits[(i + 1) % 3];
        assert!(!verify_proof(&pvk, proof, &other.public_inputs().unwrap()).unwrap());
    }
    // Fresh randomness: two proofs of the same circuit differ.
    let pa1 = synthesize(circuits[0].clone(), &SynthesisOptions::default()).unwrap();
    let pa2 = pa1.clone();
    let p1 = prove(&params, vec![pa1], &mut rng).unwrap();
    let p2 = prove(&params, vec![pa2], &mut rng).unwrap();
    assert_ne!(p1[0].0, p2[0].0);
}
