//! Parameters streamed to the GPU chunk by chunk (a card too small to hold them resident): proofs equal the CPU's
//! byte for byte and verify, through the one-shot prover (scalars from the host) and the engine (a, b and c from the
//! witness on the device, so every MSM reads device scalars chunk by chunk).
//! Its own test binary: it sets `CUZK_GPU_PARAMS` for the whole process before any parameters reach the GPU.
//! Skipped with a printed reason without a GPU; failing instead when CUZK_REQUIRE_GPU=1.

use blstrs::Scalar;
use circuits::Sha256Circuit;
use ff::Field;
use groth16_pipeline::{
    prepare_verifying_key, prove_one_with_randomness, verify_proof, Backend, GpuParams, Placement,
    ProverOptions,
};
use r1cs_synth::{synthesize, SynthesisOptions};
use test_utils::{fresh_rng, gpu_or_skip};

#[test]
fn streamed_parameters_prove_as_resident_ones() {
    if !gpu_or_skip(
        "streamed_parameters_prove_as_resident_ones",
        ntt_cuda::gpu::device(),
    ) {
        return;
    }
    // Chunks of 3,000 points: the three-block circuit's queries (over 2^16 points each) take many chunks, with a
    // short last one.
    std::env::set_var("CUZK_GPU_PARAMS", "streamed");
    std::env::set_var("CUZK_GPU_CHUNK_POINTS", "3000");
    let mut rng = fresh_rng("streamed_parameters_prove_as_resident_ones");
    let circuits: Vec<Sha256Circuit> = (0..3).map(|_| Sha256Circuit::random(3, &mut rng)).collect();
    let params = std::sync::Arc::new(srs_loader::setup(Sha256Circuit::blank(3), &mut rng).unwrap());
    let pvk = prepare_verifying_key(&params.vk);
    assert_eq!(
        GpuParams::shared(&params).unwrap().placement(),
        Placement::Streamed { chunk: 3000 }
    );

    let (r, s) = (Scalar::random(&mut rng), Scalar::random(&mut rng));
    let opts = |b| ProverOptions {
        h_backend: b,
        msm_backend: b,
    };
    let synth = || synthesize(circuits[0].clone(), &SynthesisOptions::default()).unwrap();
    let (cpu, tc) = prove_one_with_randomness(&params, synth(), r, s, &opts(Backend::Cpu)).unwrap();
    assert_eq!(tc.gpu_params, "");
    let (gpu, tg) = prove_one_with_randomness(&params, synth(), r, s, &opts(Backend::Gpu)).unwrap();
    assert_eq!(tg.gpu_params, "streamed");
    assert!(tg
        .key_values()
        .iter()
        .any(|(k, v)| *k == "gpu_params" && v == "streamed"));
    assert_eq!(
        cpu.to_bytes(),
        gpu.to_bytes(),
        "streamed MSMs changed the proof"
    );
    assert!(verify_proof(&pvk, &gpu, &circuits[0].public_inputs().unwrap()).unwrap());

    // The engine with a, b and c from the witness on the device: A's and B's scalars are gathered there, and each
    // chunk's MSM reads its range of them.
    let shape =
        std::sync::Arc::new(r1cs_synth::CompiledShape::compile(Sha256Circuit::blank(3)).unwrap());
    let engine = groth16_pipeline::Engine::new(
        std::sync::Arc::clone(&params),
        groth16_pipeline::EngineOptions {
            prover: opts(Backend::Gpu),
            max_in_flight: 2,
            ..Default::default()
        },
    )
    .unwrap()
    .with_shape(std::sync::Arc::clone(&shape))
    .unwrap();
    let (outcomes, summary) = engine.prove_partitions_reusing(
        circuits.len(),
        |i, spare| shape.witness_assignment(circuits[i].clone(), spare),
        &mut rng,
        |_| {},
    );
    assert_eq!(summary.proofs, circuits.len());
    for (i, o) in outcomes.iter().enumerate() {
        let proof = o.proof.as_ref().unwrap();
        assert!(verify_proof(&pvk, proof, &circuits[i].public_inputs().unwrap()).unwrap());
        assert!(!o.report.reproved_on_cpu, "partition {i} needed the CPU");
        assert_eq!(o.report.timings.gpu_params, "streamed", "partition {i}");
        assert!(o.report.timings.products > std::time::Duration::ZERO);
    }
}
