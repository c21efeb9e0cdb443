//! The pipelined engine on the CPU path: every partition's proof verifies and comes back in order, the in-flight
//! bound holds, failures stay in their partition, and a proof that fails the check is re-proved on the CPU.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use groth16_pipeline::{
    prepare_verifying_key, verify_proof, Backend, Engine, EngineOptions, Error, ProverOptions,
};
use r1cs_synth::{synthesize, SynthesisOptions};
use test_utils::{fresh_rng, seeded_rng, RandomCircuit};

fn cpu_options(max_in_flight: usize, synthesis_workers: usize) -> EngineOptions {
    EngineOptions {
        prover: ProverOptions {
            h_backend: Backend::Cpu,
            msm_backend: Backend::Cpu,
        },
        synthesis_workers,
        max_in_flight,
        ..Default::default()
    }
}

#[test]
fn partitions_verify_in_order_within_the_in_flight_bound() {
    let mut rng = fresh_rng("partitions_verify_in_order_within_the_in_flight_bound");
    let circuit = RandomCircuit::new(2, 30, 200, &mut rng);
    let params = Arc::new(srs_loader::setup(circuit.without_values(), &mut rng).unwrap());
    let pvk = prepare_verifying_key(&params.vk);
    for (max_in_flight, workers) in [(1, 1), (2, 1), (3, 2)] {
        let engine = Engine::new(Arc::clone(&params), cpu_options(max_in_flight, workers)).unwrap();
        // Alive = synthesis started and proof not yet finished: never more than the bound.
        let alive = AtomicUsize::new(0);
        let peak = AtomicUsize::new(0);
        let mut finished = Vec::new();
        let (outcomes, summary) = engine.prove_partitions(
            6,
            |_| {
                let now = alive.fetch_add(1, Ordering::SeqCst) + 1;
                peak.fetch_max(now, Ordering::SeqCst);
                synthesize(circuit.clone(), &SynthesisOptions::default())
            },
            &mut rng,
            |o| {
                alive.fetch_sub(1, Ordering::SeqCst);
                finished.push(o.report.partition);
            },
        );
        assert!(
            peak.load(Ordering::SeqCst) <= max_in_flight,
            "{} partitions alive with a bound of {max_in_flight}",
            peak.load(Ordering::SeqCst)
        );
        assert_eq!(finished.len(), 6);
        assert_eq!(summary.proofs, 6);
        assert!(summary.busy_fraction() > 0.0 && summary.busy_fraction() <= 1.0);
        for (i, o) in outcomes.iter().enumerate() {
            assert_eq!(o.report.partition, i);
            assert!(!o.report.reproved_on_cpu);
            let proof = o.proof.as_ref().unwrap();
            assert!(verify_proof(&pvk, proof, &circuit.public_inputs()).unwrap());
            assert!(o.report.prove_end >= o.report.prove_start);
            let kv = o.report.key_values();
            assert_eq!(kv[0], ("partition", i.to_string()));
            assert!(kv.iter().any(|(k, _)| *k == "queue_wait_ms"));
        }
    }
}

#[test]
fn a_failing_partition_does_not_stop_the_others() {
    let mut rng = seeded_rng(41);
    let circuit = RandomCircuit::new(1, 10, 40, &mut rng);
    let other = RandomCircuit::new(1, 10, 300, &mut rng);
    let params = Arc::new(srs_loader::setup(circuit.without_values(), &mut rng).unwrap());
    let engine = Engine::new(params, cpu_options(2, 2)).unwrap();
    let (outcomes, summary) = engine.prove_partitions(
        5,
        |i| match i {
            1 => Err("witness file missing".into()),
            2 => panic!("gadget bug in partition 2"),
            3 => synthesize(other.clone(), &SynthesisOptions::default())
                .map_err(|e| Box::new(e) as groth16_pipeline::SynthesisError),
            _ => synthesize(circuit.clone(), &SynthesisOptions::default())
                .map_err(|e| Box::new(e) as groth16_pipeline::SynthesisError),
        },
        &mut rng,
        |_| {},
    );
    assert_eq!(summary.proofs, 3 - 1);
    assert!(outcomes[0].proof.is_ok() && outcomes[4].proof.is_ok());
    let err = |i: usize| outcomes[i].proof.as_ref().unwrap_err().to_string();
    assert!(
        matches!(
            outcomes[1].proof,
            Err(Error::Synthesis { partition: 1, .. })
        ),
        "{}",
        err(1)
    );
    assert!(err(1).contains("witness file missing"), "{}", err(1));
    assert!(
        err(2).contains("partition 2") && err(2).contains("gadget bug"),
        "{}",
        err(2)
    );
    assert!(
        matches!(outcomes[3].proof, Err(Error::Params { circuit: 3, .. })),
        "{}",
        err(3)
    );
}

#[test]
fn a_proof_that_fails_the_check_is_reproved_on_the_cpu() {
    let mut rng = seeded_rng(42);
    let circuit = RandomCircuit::new(2, 20, 100, &mut rng);
    let params = Arc::new(srs_loader::setup(circuit.without_values(), &mut rng).unwrap());
    let pvk = prepare_verifying_key(&params.vk);
    let engine = Engine::new(
        params,
        EngineOptions {
            corrupt_partition: Some(1),
            ..cpu_options(2, 1)
        },
    )
    .unwrap();
    let calls = AtomicUsize::new(0);
    let (outcomes, _) = engine.prove_partitions(
        3,
        |_| {
            calls.fetch_add(1, Ordering::SeqCst);
            synthesize(circuit.clone(), &SynthesisOptions::default())
        },
        &mut rng,
        |_| {},
    );
    // Partition 1 was synthesized twice: once for the corrupted proof, once for its CPU re-prove.
    assert_eq!(calls.load(Ordering::SeqCst), 4);
    for (i, o) in outcomes.iter().enumerate() {
        assert_eq!(o.report.reproved_on_cpu, i == 1);
        let proof = o.proof.as_ref().unwrap();
        assert!(verify_proof(&pvk, proof, &circuit.public_inputs()).unwrap());
    }
    assert_eq!(outcomes[1].report.timings.msm_backend, "cpu");
}
