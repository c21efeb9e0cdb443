//! CPU G1 and G2 MSM. Sizes: log2 from BENCH_MIN_LOG2 to BENCH_MAX_LOG2 (default 12..=16).

use blstrs::Scalar;
use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use ff::Field;
use msm_cuda::{msm_g1, msm_g2};
use test_utils::{random_g1, random_g2, seeded_rng};

fn bench(c: &mut Criterion) {
    let mut rng = seeded_rng(1);
    let mut group = c.benchmark_group("msm");
    for log_n in test_utils::bench_log2_range(12, 16) {
        let n = 1usize << log_n;
        let scalars: Vec<Scalar> = (0..n).map(|_| Scalar::random(&mut rng)).collect();
        let g1 = random_g1(n, &mut rng);
        group.throughput(Throughput::Elements(n as u64));
        group.bench_function(BenchmarkId::new("g1/cpu", log_n), |b| {
            b.iter(|| msm_g1(&g1, &scalars).unwrap())
        });
        if log_n <= 14 {
            let g2 = random_g2(n, &mut rng);
            group.bench_function(BenchmarkId::new("g2/cpu", log_n), |b| {
                b.iter(|| msm_g2(&g2, &scalars).unwrap())
            });
        }
    }
    group.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(10);
    targets = bench
}
criterion_main!(benches);
