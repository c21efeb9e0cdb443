//! End-to-end CPU proving (synthesis + proof) against bellperson's CPU prover, same circuit, same parameters, same run.
//!
//! Circuits: SHA-256 over BENCH_BLOCKS blocks (comma-separated, default "2,9": about 2^16 and 2^18 constraints).
//! Parameters come from our setup and are read by both provers from the same bytes.

use bellperson::groth16 as bp;
use blstrs::Bls12;
use circuits::Sha256Circuit;
use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use groth16_pipeline::prove;
use r1cs_synth::{synthesize, SynthesisOptions};
use srs_loader::{Parameters, ReadOptions};
use test_utils::seeded_rng;

fn bench(c: &mut Criterion) {
    let mut rng = seeded_rng(7);
    let mut group = c.benchmark_group("prove_cpu");
    for blocks in test_utils::bench_blocks("2,9") {
        let bytes = srs_loader::setup(Sha256Circuit::blank(blocks), &mut rng)
            .unwrap()
            .to_bytes();
        let ours = Parameters::from_bytes(&bytes, ReadOptions::default()).unwrap();
        let theirs = bp::Parameters::<Bls12>::read(&bytes[..], true).unwrap();
        let circuit = Sha256Circuit::random(blocks, &mut rng);
        let constraints = synthesize(circuit.clone(), &SynthesisOptions::default())
            .unwrap()
            .num_constraints();
        eprintln!(
            "sha256 {blocks} blocks: {constraints} constraints, domain 2^{}",
            ours.domain_size().trailing_zeros()
        );
        let id = format!("sha256-{blocks}blk-{constraints}c");
        group.throughput(Throughput::Elements(constraints as u64));
        group.bench_function(BenchmarkId::new("cuzk", &id), |b| {
            b.iter(|| {
                let pa = synthesize(circuit.clone(), &SynthesisOptions::default()).unwrap();
                prove(&ours, vec![pa], &mut rng).unwrap()
            })
        });
        group.bench_function(BenchmarkId::new("bellperson", &id), |b| {
            b.iter(|| {
                bp::create_random_proof::<Bls12, _, _, _>(circuit.clone(), &theirs, &mut rng)
                    .unwrap()
            })
        });
    }
    group.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(10).warm_up_time(std::time::Duration::from_secs(1));
    targets = bench
}
criterion_main!(benches);
