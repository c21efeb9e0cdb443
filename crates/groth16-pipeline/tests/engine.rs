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

#[test]
fn a_device_error_on_a_cpu_engine_fails_only_its_partition() {
    // With every stage on the CPU there is no GPU to fall back from: the partition's error is reported as it is,
    // named, and the engine goes on with the others. (The GPU tests check the fallback when the GPU fails.)
    let mut rng = seeded_rng(43);
    let circuit = RandomCircuit::new(1, 10, 60, &mut rng);
    let params = Arc::new(srs_loader::setup(circuit.without_values(), &mut rng).unwrap());
    let engine = Engine::new(
        params,
        EngineOptions {
            device_error_partition: Some(1),
            ..cpu_options(2, 1)
        },
    )
    .unwrap();
    let (outcomes, summary) = engine.prove_partitions(
        3,
        |_| synthesize(circuit.clone(), &SynthesisOptions::default()),
        &mut rng,
        |_| {},
    );
    assert_eq!(summary.proofs, 2);
    let err = outcomes[1].proof.as_ref().unwrap_err();
    assert!(err.is_device_error(), "{err}");
    assert!(err.to_string().contains("injected"), "{err}");
    assert!(!outcomes[1].report.gpu_failed && !outcomes[1].report.reproved_on_cpu);
    assert!(outcomes[0].proof.is_ok() && outcomes[2].proof.is_ok());
}

#[test]
fn proved_partitions_vectors_are_handed_to_the_next_synthesis() {
    let mut rng = fresh_rng("proved_partitions_vectors_are_handed_to_the_next_synthesis");
    let circuit = RandomCircuit::new(2, 40, 300, &mut rng);
    let params = Arc::new(srs_loader::setup(circuit.without_values(), &mut rng).unwrap());
    let pvk = prepare_verifying_key(&params.vk);
    let shape = r1cs_synth::CompiledShape::compile(circuit.without_values()).unwrap();
    let fresh = shape.synthesize(circuit.clone()).unwrap();
    for reuse_buffers in [true, false] {
        let engine = Engine::new(
            Arc::clone(&params),
            EngineOptions {
                reuse_buffers,
                ..cpu_options(2, 1)
            },
        )
        .unwrap();
        let reused = AtomicUsize::new(0);
        let (outcomes, _) = engine.prove_partitions_reusing(
            6,
            |_, spare: r1cs_synth::ProvingAssignment| {
                if spare.aux_assignment.capacity() > 0 {
                    reused.fetch_add(1, Ordering::SeqCst);
                }
                let pa = shape.synthesize_reusing(circuit.clone(), spare)?;
                // Written into a spare or not, the assignment is the fresh one.
                assert_eq!(pa, fresh);
                Ok::<_, r1cs_synth::Error>(pa)
            },
            &mut rng,
            |_| {},
        );
        for o in &outcomes {
            let proof = o.proof.as_ref().unwrap();
            assert!(verify_proof(&pvk, proof, &circuit.public_inputs()).unwrap());
        }
        // One worker, two in flight: partitions 0 and 1 start before any proof is done; each later one takes the
        // vectors of the partition whose slot it took.
        let expected = if reuse_buffers { 4 } else { 0 };
        assert_eq!(
            reused.load(Ordering::SeqCst),
            expected,
            "reuse {reuse_buffers}"
        );
    }
}

/// Partitions that leave a, b and c to the prover: with the shape given to the engine, every proof verifies (on the
/// CPU the prover computes them on the host); without it, proving such an assignment is an error that says so.
#[test]
fn partitions_that_leave_a_b_c_to_the_prover_verify() {
    let mut rng = fresh_rng("partitions_that_leave_a_b_c_to_the_prover_verify");
    let circuit = RandomCircuit::new(3, 40, 250, &mut rng);
    let params = Arc::new(srs_loader::setup(circuit.without_values(), &mut rng).unwrap());
    let pvk = prepare_verifying_key(&params.vk);
    let shape = Arc::new(r1cs_synth::CompiledShape::compile(circuit.without_values()).unwrap());
    let engine = Engine::new(Arc::clone(&params), cpu_options(2, 2))
        .unwrap()
        .with_shape(Arc::clone(&shape))
        .unwrap();
    let (outcomes, summary) = engine.prove_partitions_reusing(
        5,
        |_, spare| shape.witness_assignment(circuit.clone(), spare),
        &mut rng,
        |o| assert!(o.report.timings.products > std::time::Duration::ZERO),
    );
    assert_eq!(summary.proofs, 5);
    for o in &outcomes {
        let proof = o.proof.as_ref().unwrap();
        assert!(verify_proof(&pvk, proof, &circuit.public_inputs()).unwrap());
    }
    let deferred = shape
        .witness_assignment(circuit.clone(), Default::default())
        .unwrap();
    let err = groth16_pipeline::prove(&params, vec![deferred], &mut rng).unwrap_err();
    assert!(matches!(err, Error::ProductsDeferred), "{err}");
}

/// Two prover lanes (with every stage on the CPU, `gpus` only counts them) fed from one queue: every partition is
/// proved once and verifies, outcomes come back in partition order, the in-flight bound holds across both lanes,
/// and a lane's failed or corrupted partition is handled in that lane as with one.
#[test]
fn two_lanes_share_the_queue_within_the_in_flight_bound() {
    let mut rng = fresh_rng("two_lanes_share_the_queue_within_the_in_flight_bound");
    let circuit = RandomCircuit::new(2, 30, 400, &mut rng);
    let params = Arc::new(srs_loader::setup(circuit.without_values(), &mut rng).unwrap());
    let pvk = prepare_verifying_key(&params.vk);
    for (max_in_flight, workers) in [(2, 1), (4, 3)] {
        let engine = Engine::new(
            Arc::clone(&params),
            EngineOptions {
                gpus: vec![0, 1],
                corrupt_partition: Some(3),
                device_error_partition: Some(5),
                ..cpu_options(max_in_flight, workers)
            },
        )
        .unwrap();
        assert_eq!(engine.options().gpus, vec![0, 1]);
        let alive = AtomicUsize::new(0);
        let peak = AtomicUsize::new(0);
        let synthesized = AtomicUsize::new(0);
        let mut heard = Vec::new();
        let (outcomes, summary) = engine.prove_partitions(
            9,
            |_| {
                synthesized.fetch_add(1, Ordering::SeqCst);
                let now = alive.fetch_add(1, Ordering::SeqCst) + 1;
                peak.fetch_max(now, Ordering::SeqCst);
                synthesize(circuit.clone(), &SynthesisOptions::default())
            },
            &mut rng,
            |o| {
                // The CPU re-prove of partition 3 synthesizes it again within its slot.
                let again = usize::from(o.report.reproved_on_cpu);
                alive.fetch_sub(1 + again, Ordering::SeqCst);
                heard.push(o.report.partition);
            },
        );
        let peak = peak.load(Ordering::SeqCst);
        assert!(
            peak <= max_in_flight + 1,
            "{peak} alive with a bound of {max_in_flight} (one more for a re-prove's synthesis)"
        );
        assert_eq!(summary.lanes, 2);
        assert_eq!(summary.max_in_flight, max_in_flight);
        assert!(summary.busy_fraction() > 0.0 && summary.busy_fraction() <= 1.0);
        // Each partition heard of once; partition 3 synthesized twice.
        heard.sort();
        assert_eq!(heard, (0..9).collect::<Vec<_>>());
        assert_eq!(synthesized.load(Ordering::SeqCst), 10);
        assert_eq!(summary.proofs, 8);
        for (i, o) in outcomes.iter().enumerate() {
            assert_eq!(o.report.partition, i);
            assert_eq!(o.report.gpu, None, "no GPU stage, so no GPU named");
            if i == 5 {
                let err = o.proof.as_ref().unwrap_err();
                assert!(err.is_device_error(), "{err}");
                continue;
            }
            assert_eq!(o.report.reproved_on_cpu, i == 3, "partition {i}");
            let proof = o.proof.as_ref().unwrap();
            assert!(verify_proof(&pvk, proof, &circuit.public_inputs()).unwrap());
        }
    }
}
