//! A batch of projective points to affine form: blstrs' `batch_normalize` (one inversion a point) against
//! `curve_batch::to_affine` (one inversion a batch), one thread, in G1 and G2.

use blstrs::{G1Projective, G2Projective};
use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use group::Group;
use rand::SeedableRng;

/// `n` points with Z far from 1: a random start stepped by a random point.
fn points<G: Group>(n: usize) -> Vec<G> {
    let mut rng = rand::rngs::StdRng::seed_from_u64(3);
    let (mut p, step) = (G::random(&mut rng), G::random(&mut rng));
    (0..n)
        .map(|_| {
            p += step;
            p
        })
        .collect()
}

fn bench<G: curve_batch::BatchAffine + Group>(c: &mut Criterion, name: &str)
where
    G::AffineRepr: Send + Default + Clone,
{
    let n = curve_batch::CHUNK;
    let p: Vec<G> = points(n);
    let mut out = vec![G::AffineRepr::default(); n];
    let mut g = c.benchmark_group(format!("to_affine_{name}"));
    g.throughput(Throughput::Elements(n as u64));
    g.bench_function(BenchmarkId::new("blstrs_batch_normalize", n), |b| {
        b.iter(|| G::batch_normalize(&p, &mut out))
    });
    g.bench_function(BenchmarkId::new("curve_batch", n), |b| {
        b.iter(|| curve_batch::to_affine(&p, &mut out))
    });
    g.finish();
}

fn benches(c: &mut Criterion) {
    bench::<G1Projective>(c, "g1");
    bench::<G2Projective>(c, "g2");
}

criterion_group! {
    name = group;
    config = Criterion::default().sample_size(20);
    targets = benches
}
criterion_main!(group);
