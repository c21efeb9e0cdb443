//! CPU NTT and H polynomial. Sizes: log2 from BENCH_MIN_LOG2 to BENCH_MAX_LOG2 (default 14..=18).

use blstrs::Scalar;
use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use ff::Field;
use ntt_cuda::{h_polynomial, Domain};
use test_utils::seeded_rng;

fn range() -> std::ops::RangeInclusive<u32> {
    let get = |k: &str, d: u32| {
        std::env::var(k)
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(d)
    };
    get("BENCH_MIN_LOG2", 14)..=get("BENCH_MAX_LOG2", 18)
}

fn bench(c: &mut Criterion) {
    let mut rng = seeded_rng(1);
    let mut group = c.benchmark_group("ntt");
    for log_n in range() {
        let d = Domain::new(log_n).unwrap();
        let v: Vec<Scalar> = (0..d.size()).map(|_| Scalar::random(&mut rng)).collect();
        group.throughput(Throughput::Elements(d.size() as u64));
        group.bench_function(BenchmarkId::new("cpu-forward", log_n), |b| {
            b.iter_batched_ref(
                || v.clone(),
                |x| d.fft(x).unwrap(),
                criterion::BatchSize::LargeInput,
            )
        });
        group.bench_function(BenchmarkId::new("cpu-h", log_n), |b| {
            b.iter_batched(
                || (v.clone(), v.clone(), v.clone()),
                |(a, bb, cc)| h_polynomial(a, bb, cc).unwrap(),
                criterion::BatchSize::LargeInput,
            )
        });
    }
    group.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(10);
    targets = bench
}
criterion_main!(benches);
