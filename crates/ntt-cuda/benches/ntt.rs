//! NTT and H polynomial, CPU and GPU. Sizes: log2 from BENCH_MIN_LOG2 to BENCH_MAX_LOG2 (default 14..=18).
//! GPU cases run when a device is usable (data on the device, stream synchronised inside the timed closure);
//! `cuzk bench ntt` gives the event-timed kernel figures at PoRep sizes beside the card's ceilings.

use blstrs::Scalar;
use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use ff::Field;
use ntt_cuda::gpu::{self, DeviceScalars, Direction, GpuDomain, Order, Stream};
use ntt_cuda::{h_polynomial, h_polynomial_reference, Domain};
use test_utils::seeded_rng;

fn bench(c: &mut Criterion) {
    let mut rng = seeded_rng(1);
    let mut group = c.benchmark_group("ntt");
    for log_n in test_utils::bench_log2_range(14, 18) {
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
        // bellperson's seven-transform sequence, the same-run comparison for the six of `cpu-h`.
        group.bench_function(BenchmarkId::new("cpu-h-bellperson-sequence", log_n), |b| {
            b.iter_batched(
                || (v.clone(), v.clone(), v.clone()),
                |(a, bb, cc)| h_polynomial_reference(a, bb, cc).unwrap(),
                criterion::BatchSize::LargeInput,
            )
        });
    }
    if let Err(e) = gpu::device() {
        eprintln!("GPU cases skipped: {e}");
    } else {
        for log_n in test_utils::bench_log2_range(14, 18) {
            let domain = GpuDomain::new(log_n).unwrap();
            let stream = Stream::new().unwrap();
            let n = domain.size();
            let v: Vec<Scalar> = (0..n).map(|_| Scalar::random(&mut rng)).collect();
            let mut d = DeviceScalars::from_host_padded(&v, n, &stream).unwrap();
            group.throughput(Throughput::Elements(n as u64));
            group.bench_function(BenchmarkId::new("gpu-forward", log_n), |b| {
                b.iter(|| {
                    domain
                        .ntt(
                            &mut d,
                            1,
                            Direction::Forward,
                            Order::Natural,
                            Order::Natural,
                            None,
                            &stream,
                        )
                        .unwrap();
                    stream.synchronize().unwrap();
                })
            });
            let streams = [
                Stream::new().unwrap(),
                Stream::new().unwrap(),
                Stream::new().unwrap(),
            ];
            let mut db = DeviceScalars::from_host_padded(&v, n, &stream).unwrap();
            let mut dc = DeviceScalars::from_host_padded(&v, n, &stream).unwrap();
            stream.synchronize().unwrap();
            group.bench_function(BenchmarkId::new("gpu-h-on-device", log_n), |b| {
                b.iter(|| {
                    domain
                        .h_polynomial(
                            &mut d,
                            &mut db,
                            &mut dc,
                            [&streams[0], &streams[1], &streams[2]],
                        )
                        .unwrap();
                    streams[0].synchronize().unwrap();
                })
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
