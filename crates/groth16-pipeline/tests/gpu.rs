//! H and the MSMs on the GPU: the dual checks pass, GPU proofs equal CPU proofs byte for byte (same r and s), and
//! they verify.
//! Skipped with a printed reason without a GPU; failing instead when CUZK_REQUIRE_GPU=1.

use blstrs::Scalar;
use circuits::Sha256Circuit;
use ff::Field;
use groth16_pipeline::{
    prepare_verifying_key, prove_one_with_randomness, prove_with, verify_proof, Backend,
    ProverOptions,
};
use r1cs_synth::{synthesize, SynthesisOptions};
use test_utils::{fresh_rng, gpu_or_skip, RandomCircuit};

/// A way to synthesize a fresh assignment, its parameters, and its public inputs.
type Case = (
    Box<dyn Fn() -> r1cs_synth::ProvingAssignment>,
    srs_loader::Parameters,
    Vec<Scalar>,
);

#[test]
fn gpu_proofs_equal_cpu_proofs_and_verify() {
    if !gpu_or_skip(
        "gpu_proofs_equal_cpu_proofs_and_verify",
        ntt_cuda::gpu::device(),
    ) {
        return;
    }
    let mut rng = fresh_rng("gpu_proofs_equal_cpu_proofs_and_verify");
    let random = RandomCircuit::new(3, 20, 500, &mut rng);
    let sha = Sha256Circuit::random(1, &mut rng);
    // Three blocks: over 2^16 aux values, so on the GPU aux is uploaded (for L) and A's and B's density-selected
    // scalars are gathered from it on the device; one block takes the host gather.
    let sha3 = Sha256Circuit::random(3, &mut rng);
    let cases: Vec<Case> = vec![
        (
            Box::new({
                let c = random.clone();
                move || synthesize(c.clone(), &SynthesisOptions::default()).unwrap()
            }),
            srs_loader::setup(random.without_values(), &mut rng).unwrap(),
            random.public_inputs(),
        ),
        (
            Box::new({
                let c = sha.clone();
                move || synthesize(c.clone(), &SynthesisOptions::default()).unwrap()
            }),
            srs_loader::setup(Sha256Circuit::blank(1), &mut rng).unwrap(),
            sha.public_inputs().unwrap(),
        ),
        (
            Box::new({
                let c = sha3.clone();
                move || synthesize(c.clone(), &SynthesisOptions::default()).unwrap()
            }),
            srs_loader::setup(Sha256Circuit::blank(3), &mut rng).unwrap(),
            sha3.public_inputs().unwrap(),
        ),
    ];
    for (i, (synth, params, inputs)) in cases.iter().enumerate() {
        let (r, s) = (Scalar::random(&mut rng), Scalar::random(&mut rng));
        let opts = |h_backend, msm_backend| ProverOptions {
            h_backend,
            msm_backend,
        };
        let (cpu, tc) =
            prove_one_with_randomness(params, synth(), r, s, &opts(Backend::Cpu, Backend::Cpu))
                .unwrap();
        assert_eq!((tc.h_backend, tc.msm_backend), ("cpu", "cpu"));
        assert_eq!(
            tc.msm_choices,
            Default::default(),
            "CPU MSMs note no GPU choice"
        );
        let pvk = prepare_verifying_key(&params.vk);
        // Every GPU combination, h staying on the device when both run there.
        for (h, m) in [
            (Backend::Gpu, Backend::Cpu),
            (Backend::Cpu, Backend::Gpu),
            (Backend::Gpu, Backend::Gpu),
        ] {
            let (gpu, tg) = prove_one_with_randomness(params, synth(), r, s, &opts(h, m)).unwrap();
            assert_ne!((tg.h_backend, tg.msm_backend), ("cpu", "cpu"));
            // The GPU MSMs' windows reach the timings (and CUZK_TIMING lines); CPU MSMs leave none.
            let c = tg.msm_choices;
            if m == Backend::Gpu {
                for (name, choice) in [("H", c.h), ("L", c.l), ("A", c.a), ("B_G1", c.b_g1)] {
                    assert!(choice.is_some(), "case {i}: no GPU choice noted for {name}");
                }
                // H's scalars are the quotient's coefficients, full-width, so Pippenger runs with a real window.
                let h_choice = c.h.expect("checked above");
                assert!(
                    (1..=24).contains(&h_choice.window),
                    "case {i}: H window {}",
                    h_choice.window
                );
                let kv = tg.key_values();
                assert!(
                    kv.iter()
                        .any(|(k, v)| *k == "msm_h_window" && v.parse::<u32>().is_ok()),
                    "{kv:?}"
                );
            } else {
                assert_eq!(
                    c,
                    Default::default(),
                    "case {i}: CPU MSMs note no GPU choice"
                );
            }
            assert_eq!(
                cpu.to_bytes(),
                gpu.to_bytes(),
                "case {i}: H on {h:?}, MSMs on {m:?} changed the proof"
            );
            assert!(verify_proof(&pvk, &gpu, inputs).unwrap(), "case {i}");
        }
        let checked = prove_with(
            params,
            vec![synth()],
            &mut rng,
            &opts(Backend::Check, Backend::Check),
        )
        .unwrap();
        assert_eq!(
            (checked[0].1.h_backend, checked[0].1.msm_backend),
            ("cpu+gpu", "cpu+gpu")
        );
        assert!(
            verify_proof(&pvk, &checked[0].0, inputs).unwrap(),
            "case {i}"
        );
    }
}

#[test]
fn gpu_engine_proves_partitions_and_reproves_a_bad_one_on_the_cpu() {
    if !gpu_or_skip(
        "gpu_engine_proves_partitions_and_reproves_a_bad_one_on_the_cpu",
        ntt_cuda::gpu::device(),
    ) {
        return;
    }
    let mut rng = fresh_rng("gpu_engine_proves_partitions_and_reproves_a_bad_one_on_the_cpu");
    let circuits: Vec<Sha256Circuit> = (0..4).map(|_| Sha256Circuit::random(1, &mut rng)).collect();
    let params = std::sync::Arc::new(srs_loader::setup(Sha256Circuit::blank(1), &mut rng).unwrap());
    let pvk = prepare_verifying_key(&params.vk);
    let engine = groth16_pipeline::Engine::new(
        params,
        groth16_pipeline::EngineOptions {
            prover: ProverOptions {
                h_backend: Backend::Gpu,
                msm_backend: Backend::Gpu,
            },
            max_in_flight: 2,
            corrupt_partition: Some(2),
            // A device error in partition 0 (as an exhausted card or a failed kernel gives): proved on the CPU, and
            // the next partitions use the GPU again.
            device_error_partition: Some(0),
            ..Default::default()
        },
    )
    .unwrap();
    let (outcomes, summary) = engine.prove_partitions(
        circuits.len(),
        |i| synthesize(circuits[i].clone(), &SynthesisOptions::default()),
        &mut rng,
        |_| {},
    );
    assert_eq!(summary.proofs, circuits.len());
    for (i, o) in outcomes.iter().enumerate() {
        let proof = o.proof.as_ref().unwrap();
        assert!(verify_proof(&pvk, proof, &circuits[i].public_inputs().unwrap()).unwrap());
        assert_eq!(o.report.reproved_on_cpu, i == 2 || i == 0, "partition {i}");
        assert_eq!(o.report.gpu_failed, i == 0, "partition {i}");
        let expect = if i == 2 || i == 0 { "cpu" } else { "gpu" };
        assert_eq!(o.report.timings.msm_backend, expect, "partition {i}");
        assert_eq!(o.report.timings.h_backend, expect, "partition {i}");
    }
}

/// Synthesis leaves a, b and c to the prover: the engine computes them on the device from the witness (the shape's
/// matrices uploaded once) and every proof verifies; a partition whose proof is corrupted is re-proved on the CPU,
/// whose prover computes them on the host.
#[test]
fn gpu_engine_computes_a_b_c_from_the_witness_on_the_device() {
    if !gpu_or_skip(
        "gpu_engine_computes_a_b_c_from_the_witness_on_the_device",
        ntt_cuda::gpu::device(),
    ) {
        return;
    }
    let mut rng = fresh_rng("gpu_engine_computes_a_b_c_from_the_witness_on_the_device");
    // Three blocks: over 2^16 aux values, so A's and B's scalars are gathered from the witness on the device.
    let circuits: Vec<Sha256Circuit> = (0..3).map(|_| Sha256Circuit::random(3, &mut rng)).collect();
    let params = std::sync::Arc::new(srs_loader::setup(Sha256Circuit::blank(3), &mut rng).unwrap());
    let shape =
        std::sync::Arc::new(r1cs_synth::CompiledShape::compile(Sha256Circuit::blank(3)).unwrap());
    let pvk = prepare_verifying_key(&params.vk);
    // With the witness staged ahead (the default) and without: the same proofs verify, and only the staged runs
    // record a staged upload (the re-proved partition's timings are the CPU prover's, which stages nothing).
    for stage_witness in [true, false] {
        let engine = groth16_pipeline::Engine::new(
            std::sync::Arc::clone(&params),
            groth16_pipeline::EngineOptions {
                prover: ProverOptions {
                    h_backend: Backend::Gpu,
                    msm_backend: Backend::Gpu,
                },
                max_in_flight: 2,
                corrupt_partition: Some(1),
                stage_witness,
                ..Default::default()
            },
        )
        .unwrap()
        .with_shape(std::sync::Arc::clone(&shape))
        .unwrap();
        assert!(engine.products().unwrap().device_bytes() > 0);
        let (outcomes, summary) = engine.prove_partitions_reusing(
            circuits.len(),
            |i, spare| shape.witness_assignment(circuits[i].clone(), spare),
            &mut rng,
            |_| {},
        );
        assert_eq!(summary.proofs, circuits.len(), "staged {stage_witness}");
        for (i, o) in outcomes.iter().enumerate() {
            let proof = o.proof.as_ref().unwrap();
            assert!(verify_proof(&pvk, proof, &circuits[i].public_inputs().unwrap()).unwrap());
            assert_eq!(o.report.reproved_on_cpu, i == 1, "partition {i}");
            let t = &o.report.timings;
            assert!(t.products > std::time::Duration::ZERO, "partition {i}");
            assert_eq!(
                t.staged_upload > std::time::Duration::ZERO,
                stage_witness && i != 1,
                "partition {i}, staged {stage_witness}: {t:?}"
            );
        }
    }
}

/// A lane per GPU (two on device 0 when the machine has one GPU, so two provers share it): every lane holds the
/// parameters and the shape's matrices on its device, partitions from one queue verify whichever lane proved them,
/// each report names a listed GPU, and the calling thread's device is left as it was. A GPU the process does not
/// see is a named error.
#[test]
fn gpu_engine_runs_a_lane_per_gpu() {
    if !gpu_or_skip("gpu_engine_runs_a_lane_per_gpu", ntt_cuda::gpu::device()) {
        return;
    }
    let count = ntt_cuda::gpu::device_count().unwrap();
    let gpus: Vec<u32> = if count == 1 {
        vec![0, 0]
    } else {
        (0..count).collect()
    };
    let mut rng = fresh_rng("gpu_engine_runs_a_lane_per_gpu");
    let circuits: Vec<Sha256Circuit> = (0..6).map(|_| Sha256Circuit::random(3, &mut rng)).collect();
    let params = std::sync::Arc::new(srs_loader::setup(Sha256Circuit::blank(3), &mut rng).unwrap());
    let shape =
        std::sync::Arc::new(r1cs_synth::CompiledShape::compile(Sha256Circuit::blank(3)).unwrap());
    let pvk = prepare_verifying_key(&params.vk);
    let opts = |gpus: Vec<u32>| groth16_pipeline::EngineOptions {
        prover: ProverOptions {
            h_backend: Backend::Gpu,
            msm_backend: Backend::Gpu,
        },
        synthesis_workers: 2,
        max_in_flight: 2 + gpus.len(),
        gpus,
        ..Default::default()
    };
    let err = groth16_pipeline::Engine::new(std::sync::Arc::clone(&params), opts(vec![count]))
        .unwrap_err()
        .to_string();
    assert!(err.contains(&format!("GPU {count} requested")), "{err}");
    let engine = groth16_pipeline::Engine::new(std::sync::Arc::clone(&params), opts(gpus.clone()))
        .unwrap()
        .with_shape(std::sync::Arc::clone(&shape))
        .unwrap();
    assert_eq!(ntt_cuda::gpu::current_device().unwrap(), 0);
    let placed: Vec<u32> = engine.gpu_placements().iter().map(|(d, _)| *d).collect();
    assert_eq!(placed, gpus);
    assert!(engine.gpu_placements().iter().all(|(_, p)| p.is_some()));
    let (outcomes, summary) = engine.prove_partitions_reusing(
        circuits.len(),
        |i, spare| shape.witness_assignment(circuits[i].clone(), spare),
        &mut rng,
        |_| {},
    );
    assert_eq!(summary.proofs, circuits.len());
    assert_eq!(summary.lanes, gpus.len());
    for (i, o) in outcomes.iter().enumerate() {
        let proof = o.proof.as_ref().unwrap();
        assert!(verify_proof(&pvk, proof, &circuits[i].public_inputs().unwrap()).unwrap());
        assert!(!o.report.reproved_on_cpu, "partition {i}");
        let gpu = o.report.gpu.expect("a GPU lane names its device");
        assert!(gpus.contains(&gpu), "partition {i} on GPU {gpu}");
        assert_eq!(o.report.timings.msm_backend, "gpu", "partition {i}");
        assert!(o.report.timings.products > std::time::Duration::ZERO);
    }
    let used: std::collections::BTreeSet<u32> =
        outcomes.iter().filter_map(|o| o.report.gpu).collect();
    eprintln!(
        "lanes {gpus:?}: partitions per GPU {:?}",
        used.iter()
            .map(|d| (
                d,
                outcomes.iter().filter(|o| o.report.gpu == Some(*d)).count()
            ))
            .collect::<Vec<_>>()
    );
}
