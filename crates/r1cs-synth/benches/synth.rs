//! Direct synthesis against compiled-shape synthesis (and its witness step alone) on SHA-256 (BENCH_BLOCKS, comma-separated, default "2,8"),
//! and, in the same run, bellperson 0.27's own synthesis time as its prover logs it ("synthesis time: ..."),
//! captured from `create_random_proof` on the same circuit (BENCH_BELLPERSON_RUNS proofs, default 5; 0 skips it).
//! Ids ending in `-bellpepper-gadget` hash with bellpepper's own SHA-256 gadget instead of `circuits::sha256` (the
//! same constraint system; its sums built outside `enforce` closures), for bellperson as well.

use std::sync::Mutex;
use std::time::Duration;

use bellperson::groth16 as bp;
use blstrs::Bls12;

use circuits::Sha256Circuit;
use criterion::{
    criterion_group, criterion_main, BatchSize, Bencher, BenchmarkId, Criterion, Throughput,
};
use r1cs_synth::{synthesize, synthesize_reusing, CompiledShape, SynthesisOptions};
use test_utils::seeded_rng;

/// Times `routine` on a fresh clone of `circuit`, the clone made and the result dropped outside the timing, as
/// bellperson's logged "synthesis time" leaves out both (its circuit is moved in, its assignments live on).
fn timed<C: Clone, O>(b: &mut Bencher<'_>, circuit: &C, mut routine: impl FnMut(C) -> O) {
    b.iter_batched(|| circuit.clone(), &mut routine, BatchSize::PerIteration)
}

fn bench(c: &mut Criterion) {
    let mut group = c.benchmark_group("synth");
    for blocks in test_utils::bench_blocks("2,8") {
        let circuit = Sha256Circuit::random(blocks, &mut seeded_rng(blocks as u64));
        let shape = CompiledShape::compile(Sha256Circuit::blank(blocks)).unwrap();
        let id = format!("sha256-{blocks}blk-{}c", shape.num_constraints());
        group.throughput(Throughput::Elements(shape.num_constraints() as u64));
        let direct = |c| synthesize(c, &SynthesisOptions::default()).unwrap();
        group.bench_function(BenchmarkId::new("direct", &id), |b| {
            timed(b, &circuit, direct)
        });
        let hint = Some(direct(circuit.clone()).size_hint());
        group.bench_function(BenchmarkId::new("direct-hint", &id), |b| {
            timed(b, &circuit, |c| {
                synthesize(c, &SynthesisOptions { check: false, hint }).unwrap()
            })
        });
        // Into the previous synthesis's vectors, as the engine does once a partition is proved.
        let mut spare = Some(direct(circuit.clone()));
        group.bench_function(BenchmarkId::new("direct-reusing", &id), |b| {
            timed(b, &circuit, |c| {
                let pa = synthesize_reusing(c, &SynthesisOptions::default(), spare.take().unwrap())
                    .unwrap();
                spare = Some(pa);
            })
        });
        group.bench_function(BenchmarkId::new("compiled", &id), |b| {
            timed(b, &circuit, |c| shape.synthesize(c).unwrap())
        });
        let mut spare = Some(shape.synthesize(circuit.clone()).unwrap());
        group.bench_function(BenchmarkId::new("compiled-reusing", &id), |b| {
            timed(b, &circuit, |c| {
                let pa = shape.synthesize_reusing(c, spare.take().unwrap()).unwrap();
                spare = Some(pa);
            })
        });
        // The circuit's own code alone (the compiled path without its parallel products): the floor of any
        // synthesis that runs the circuit, which bounds what the compiled path can gain over bellperson's.
        group.bench_function(BenchmarkId::new("witness-only", &id), |b| {
            timed(b, &circuit, |c| shape.witness(c).unwrap())
        });
        // The same with bellpepper's gadget (the same shape serves: the constraint systems are identical).
        let theirs = circuit.clone().with_bellpepper_gadget();
        group.bench_function(BenchmarkId::new("direct-bellpepper-gadget", &id), |b| {
            timed(b, &theirs, direct)
        });
        group.bench_function(BenchmarkId::new("compiled-bellpepper-gadget", &id), |b| {
            timed(b, &theirs, |c| shape.synthesize(c).unwrap())
        });
        group.bench_function(
            BenchmarkId::new("witness-only-bellpepper-gadget", &id),
            |b| timed(b, &theirs, |c| shape.witness(c).unwrap()),
        );
    }
    group.finish();
}

/// bellperson's logged synthesis times.
static LOGGED: Mutex<Vec<Duration>> = Mutex::new(Vec::new());

struct Capture;

impl log::Log for Capture {
    fn enabled(&self, _: &log::Metadata<'_>) -> bool {
        true
    }
    fn log(&self, record: &log::Record<'_>) {
        let msg = record.args().to_string();
        if let Some(d) = msg
            .strip_prefix("synthesis time: ")
            .and_then(parse_debug_duration)
        {
            LOGGED.lock().unwrap().push(d);
        }
    }
    fn flush(&self) {}
}

/// Parses `Duration`'s Debug form ("1.5s", "812.3ms", "40.1µs", "900ns").
fn parse_debug_duration(s: &str) -> Option<Duration> {
    let (num, unit) = s
        .find(|c: char| c.is_alphabetic() || c == 'µ')
        .map(|i| s.split_at(i))?;
    let v: f64 = num.parse().ok()?;
    let secs = match unit {
        "s" => v,
        "ms" => v / 1e3,
        "µs" | "us" => v / 1e6,
        "ns" => v / 1e9,
        _ => return None,
    };
    Some(Duration::from_secs_f64(secs))
}

fn bellperson_synthesis() {
    let runs: usize = std::env::var("BENCH_BELLPERSON_RUNS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(5);
    if runs == 0 {
        return;
    }
    let _ = log::set_logger(&Capture);
    log::set_max_level(log::LevelFilter::Info);
    for blocks in test_utils::bench_blocks("2,8") {
        let mut rng = seeded_rng(1000 + blocks as u64);
        let params =
            bp::generate_random_parameters::<Bls12, _, _>(Sha256Circuit::blank(blocks), &mut rng)
                .unwrap();
        let circuit = Sha256Circuit::random(blocks, &mut rng);
        for (tag, circuit) in [
            ("", circuit.clone()),
            ("-bellpepper-gadget", circuit.with_bellpepper_gadget()),
        ] {
            LOGGED.lock().unwrap().clear();
            for _ in 0..runs {
                bp::create_random_proof::<Bls12, _, _, _>(circuit.clone(), &params, &mut rng)
                    .unwrap();
            }
            let mut t = LOGGED.lock().unwrap().clone();
            t.sort();
            if let (Some(min), Some(max)) = (t.first(), t.last()) {
                println!(
                    "synth/bellperson-logged{tag}/sha256-{blocks}blk: median {:?} (min {min:?}, max {max:?}, {} proofs)",
                    t[t.len() / 2],
                    t.len()
                );
            }
        }
    }
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(10);
    targets = bench
}
criterion_main!(benches, bellperson_synthesis);
