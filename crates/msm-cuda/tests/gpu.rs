//! GPU against blstrs: base-field and curve arithmetic, and MSMs against blst's multiexp on fresh random inputs and
//! edge cases (zero scalars, scalar 1, p - 1, identity bases, repeated bases, sizes that are not powers of two), with
//! and without the 0/1 split, for every window, against resident bases, selections and device scalars.
//! Skipped with a printed reason without a GPU; failing instead when CUZK_REQUIRE_GPU=1.
//! `cargo test -p msm-cuda --test gpu -- --ignored` runs the heavy sweep (2^24, 2^26).

mod arith;
mod common;

use blst::blst_fp2;
use blstrs::{G1Affine, G1Projective, G2Affine, G2Projective, Scalar};
use ff::Field;
use group::{prime::PrimeCurveAffine, Curve};
use msm_cuda::gpu::{
    self, Accumulation, CurveOp, DeviceBases, FieldOp, GpuScalars, MsmOptions, MsmScratch,
    StreamedBases,
};
use msm_cuda::{msm_g1, msm_g2, Selection};
use rand::Rng;
use test_utils::{
    edge_or_random_scalar, fresh_rng, gpu_or_skip, par_scalars, random_g1, random_g1_fast,
    random_g2,
};

/// The device as the arithmetic checks' backend.
struct Gpu;

impl arith::Backend for Gpu {
    fn field<F: arith::RawField>(&mut self, op: FieldOp, a: &[F], b: &[F]) -> Vec<F> {
        gpu::field_elementwise(op, a, b).unwrap()
    }
    fn curve<A: arith::RawPoint>(&mut self, op: CurveOp, a: &[A], b: &[A]) -> Vec<A::Projective> {
        gpu::curve_elementwise(op, a, b).unwrap()
    }
}

#[test]
fn fp_arithmetic_matches_blst() {
    if !gpu_or_skip("fp_arithmetic_matches_blst", gpu::device()) {
        return;
    }
    let mut rng = fresh_rng("fp_arithmetic_matches_blst");
    arith::check_fp(&mut Gpu, &mut rng);
    // The product-form operations are defined for Fp only: the entry point refuses them for Fp2.
    let fp2 = [blst_fp2::default()];
    for op in [
        FieldOp::MulChains,
        FieldOp::MulFloat64,
        FieldOp::MulLazy,
        FieldOp::SqrLazy,
    ] {
        assert!(
            gpu::field_elementwise(op, &fp2, &fp2).is_err(),
            "{op:?} is defined for Fp only"
        );
    }
}

#[test]
fn fp2_arithmetic_matches_blst() {
    if !gpu_or_skip("fp2_arithmetic_matches_blst", gpu::device()) {
        return;
    }
    let mut rng = fresh_rng("fp2_arithmetic_matches_blst");
    arith::check_fp2(&mut Gpu, &mut rng);
}

#[test]
fn g1_arithmetic_matches_blstrs() {
    if !gpu_or_skip("g1_arithmetic_matches_blstrs", gpu::device()) {
        return;
    }
    let mut rng = fresh_rng("g1_arithmetic_matches_blstrs");
    arith::check_curve_ops(&mut Gpu, &random_g1(600, &mut rng));
}

#[test]
fn g2_arithmetic_matches_blstrs() {
    if !gpu_or_skip("g2_arithmetic_matches_blstrs", gpu::device()) {
        return;
    }
    let mut rng = fresh_rng("g2_arithmetic_matches_blstrs");
    arith::check_curve_ops(&mut Gpu, &random_g2(300, &mut rng));
}

#[test]
fn g1_msm_matches_blst_across_sizes() {
    if !gpu_or_skip("g1_msm_matches_blst_across_sizes", gpu::device()) {
        return;
    }
    let mut rng = fresh_rng("g1_msm_matches_blst_across_sizes");
    let mut sizes = vec![
        1usize, 2, 3, 5, 31, 32, 33, 100, 255, 256, 257, 1000, 4095, 4097,
    ];
    for lg in 13..=20 {
        sizes.push(1 << lg);
        sizes.push((1 << lg) + rng.gen_range(1..1000));
    }
    for n in sizes {
        let (bases, scalars) = common::edge_inputs(n, &mut rng);
        let want = msm_g1(&bases, &scalars).unwrap();
        let resident = DeviceBases::upload(&bases).unwrap();
        for accumulation in BOTH {
            for split in [true, false] {
                let opts = MsmOptions {
                    window: None,
                    split,
                    accumulation,
                };
                let (got, stats) = resident.msm(0, GpuScalars::Host(&scalars), &opts).unwrap();
                assert_eq!(got, want, "n = {n}, split = {split}, stats = {stats:?}");
                assert_eq!(stats.zeros + stats.ones + stats.others, n as u64);
                if stats.others > 0 {
                    assert_eq!(stats.accumulation, accumulation, "n = {n}");
                }
            }
        }
    }
}

/// The two ways of summing buckets, each run explicitly (Auto picks one by size).
const BOTH: [Accumulation; 2] = [Accumulation::Xyzz, Accumulation::BatchAffine];

#[test]
fn g1_msm_every_window_and_scalar_mix() {
    if !gpu_or_skip("g1_msm_every_window_and_scalar_mix", gpu::device()) {
        return;
    }
    let mut rng = fresh_rng("g1_msm_every_window_and_scalar_mix");
    let n = 3000;
    let (bases, scalars) = common::edge_inputs(n, &mut rng);
    let resident = DeviceBases::upload(&bases).unwrap();
    let want = msm_g1(&bases, &scalars).unwrap();
    for window in 1..=20 {
        for accumulation in BOTH {
            let opts = MsmOptions {
                window: Some(window),
                split: window % 2 == 0,
                accumulation,
            };
            let (got, stats) = resident.msm(0, GpuScalars::Host(&scalars), &opts).unwrap();
            assert_eq!(got, want, "window {window}, {stats:?}");
            assert_eq!(stats.window, window);
            // Small windows make few, long buckets: the affine rounds run (several of them below 5 bits).
            if accumulation == Accumulation::BatchAffine && window <= 5 {
                assert!(stats.affine_rounds > 0, "window {window}: {stats:?}");
            }
        }
    }
    // Scalar mixes: all zero, all one, all p - 1, PoRep-like, and the full range of one window's digits.
    let mixes: Vec<(&str, Vec<Scalar>)> = vec![
        ("zeros", vec![Scalar::ZERO; n]),
        ("ones", vec![Scalar::ONE; n]),
        ("minus ones", vec![-Scalar::ONE; n]),
        ("porep-like", common::porep_like_scalars(n, &mut rng)),
        ("small", (0..n).map(|i| Scalar::from(i as u64)).collect()),
    ];
    // The table's window, and windows large enough for the staged sort (10 bits and up, when at least a quarter of
    // the scalars are left to Pippenger): all ones without the split put every digit in one bucket.
    for (name, s) in mixes {
        let want = msm_g1(&bases, &s).unwrap();
        for window in [None, Some(12), Some(16)] {
            for accumulation in BOTH {
                for split in [true, false] {
                    let (got, stats) = resident
                        .msm(
                            0,
                            GpuScalars::Host(&s),
                            &MsmOptions {
                                window,
                                split,
                                accumulation,
                            },
                        )
                        .unwrap();
                    assert_eq!(
                        got, want,
                        "{name}, window {window:?}, split = {split}, stats = {stats:?}"
                    );
                    // The scalar-1 bases go through the rounds with the affine accumulation once a chunk of
                    // their list is longer than the rounds' XYZZ tail (8), and never with XYZZ.
                    if accumulation == Accumulation::Xyzz || !split {
                        assert_eq!(stats.ones_rounds, 0, "{name}: {stats:?}");
                    } else if stats.ones > 8 {
                        assert!(stats.ones_rounds > 0, "{name}: {stats:?}");
                    }
                }
            }
        }
    }
}

/// One bucket holding every point, with the cases an affine addition must not divide by: identities, a base
/// repeated (doublings, round after round), a base beside its negation (sums that are the identity, which later
/// rounds then add), against XYZZ and blst.
#[test]
fn g1_batch_affine_hot_bucket_edge_cases() {
    if !gpu_or_skip("g1_batch_affine_hot_bucket_edge_cases", gpu::device()) {
        return;
    }
    let mut rng = fresh_rng("g1_batch_affine_hot_bucket_edge_cases");
    let p = random_g1(8, &mut rng);
    let neg = |a: &G1Affine| (-G1Projective::from(*a)).to_affine();
    for n in [2usize, 3, 17, 33, 100, 1000, 5000] {
        // A pattern of repeats, negations and identities, then random points.
        let mut bases: Vec<G1Affine> = (0..n)
            .map(|i| match i % 7 {
                0 | 1 => p[0],
                2 => neg(&p[0]),
                3 => G1Affine::identity(),
                4 => p[1 + (i / 7) % 3],
                _ => p[4 + i % 4],
            })
            .collect();
        if n > 40 {
            let fresh = random_g1(n / 4, &mut rng);
            bases[n - n / 4..].copy_from_slice(&fresh);
        }
        let resident = DeviceBases::upload(&bases).unwrap();
        for (name, s) in [
            ("all one", Scalar::ONE),
            ("all seven", Scalar::from(7u64)),
            ("all minus one", -Scalar::ONE),
        ] {
            let scalars = vec![s; n];
            let want = msm_g1(&bases, &scalars).unwrap();
            for accumulation in BOTH {
                let (got, stats) = resident
                    .msm(
                        0,
                        GpuScalars::Host(&scalars),
                        &MsmOptions {
                            window: Some(4),
                            split: false,
                            accumulation,
                        },
                    )
                    .unwrap();
                assert_eq!(got, want, "n = {n}, {name}, {stats:?}");
                if accumulation == Accumulation::BatchAffine && n > 16 {
                    assert!(stats.affine_rounds > 0, "n = {n}: {stats:?}");
                }
            }
        }
    }
}

#[test]
fn resident_bases_serve_many_msms() {
    if !gpu_or_skip("resident_bases_serve_many_msms", gpu::device()) {
        return;
    }
    let mut rng = fresh_rng("resident_bases_serve_many_msms");
    let n = 20_000;
    let bases = random_g1(n, &mut rng);
    let resident = DeviceBases::upload(&bases).unwrap();
    let opts = MsmOptions::default();
    for round in 0..4 {
        // A sub-range at an offset, with fresh scalars each time.
        let offset = rng.gen_range(0..n / 2);
        let len = rng.gen_range(1..n - offset);
        let s: Vec<Scalar> = if round % 2 == 0 {
            common::porep_like_scalars(len, &mut rng)
        } else {
            (0..len).map(|_| edge_or_random_scalar(&mut rng)).collect()
        };
        let (got, _) = resident.msm(offset, GpuScalars::Host(&s), &opts).unwrap();
        assert_eq!(
            got,
            msm_g1(&bases[offset..offset + len], &s).unwrap(),
            "round {round}"
        );
    }
    // A density selection: the full assignment is longer than the bases, and the set bits pick the scalars.
    let full_len = n + 5000;
    let full: Vec<Scalar> = common::porep_like_scalars(full_len, &mut rng);
    let mut words = vec![0u64; full_len.div_ceil(64)];
    let mut picked = 0;
    for i in 0..full_len {
        if picked < n && rng.gen_bool(0.8) {
            words[i / 64] |= 1 << (i % 64);
            picked += 1;
        }
    }
    let selection = Selection {
        words: &words,
        len: full_len,
    };
    let (got, _) = resident.msm_selected(0, &full, selection, &opts).unwrap();
    let want = msm_cuda::msm_g1_selected(&bases[..picked], &full, selection).unwrap();
    assert_eq!(got, want);
    // A second set sharing the first one's scratch, used alternately with it (as a prover's queries are).
    let other_bases = random_g1(3000, &mut rng);
    let other = DeviceBases::upload_sharing(&other_bases, resident.scratch()).unwrap();
    for round in 0..2 {
        let s1: Vec<Scalar> = (0..3000).map(|_| edge_or_random_scalar(&mut rng)).collect();
        let s2 = common::porep_like_scalars(n, &mut rng);
        let (got1, _) = other.msm(0, GpuScalars::Host(&s1), &opts).unwrap();
        let (got2, _) = resident.msm(0, GpuScalars::Host(&s2), &opts).unwrap();
        assert_eq!(
            got1,
            msm_g1(&other_bases, &s1).unwrap(),
            "shared scratch, round {round}"
        );
        assert_eq!(
            got2,
            msm_g1(&bases, &s2).unwrap(),
            "shared scratch, round {round}"
        );
    }
    assert!(resident.scratch().device_bytes().unwrap() > 0);
    // Out of range and mismatched selections are errors, not crashes.
    assert!(resident
        .msm(n - 1, GpuScalars::Host(&[Scalar::ONE; 2]), &opts)
        .is_err());
    assert!(resident
        .msm_selected(0, &full[1..], selection, &opts)
        .is_err());
}

#[test]
fn window_tables_equal_blst() {
    if !gpu_or_skip("window_tables_equal_blst", gpu::device()) {
        return;
    }
    let mut rng = fresh_rng("window_tables_equal_blst");
    let sizes = [
        1usize,
        2,
        7,
        300,
        4096 + rng.gen_range(1..1000),
        (1 << 14) + rng.gen_range(1..1000),
        1 << 16,
    ];
    for n in sizes {
        let (bases, edge) = common::edge_inputs(n, &mut rng);
        let porep = common::porep_like_scalars(n, &mut rng);
        let zeros = vec![Scalar::ZERO; n];
        // Plain bases sharing the tables' scratch, run between their MSMs.
        let plain = DeviceBases::upload(&bases).unwrap();
        for window in [10u32, 13, 16, 20] {
            if window == 20 && n < 4096 {
                continue;
            }
            let tables =
                DeviceBases::upload_tables_sharing(&bases, window, plain.scratch()).unwrap();
            assert_eq!(tables.table_window(), Some(window));
            let w_count = 256u32.div_ceil(window) as usize;
            assert!(
                tables.device_bytes().unwrap() >= n * w_count * 96,
                "n = {n}"
            );
            for (name, scalars) in [("edge", &edge), ("porep-like", &porep), ("zeros", &zeros)] {
                let want = msm_g1(&bases, scalars).unwrap();
                for accumulation in BOTH {
                    for split in [true, false] {
                        let opts = MsmOptions {
                            window: if split { None } else { Some(window) },
                            split,
                            accumulation,
                        };
                        let (got, stats) = tables.msm(0, GpuScalars::Host(scalars), &opts).unwrap();
                        let at = format!("n = {n}, window {window}, {name}, {opts:?}, {stats:?}");
                        assert_eq!(got, want, "{at}");
                        assert_eq!(stats.window, window, "{at}");
                        if stats.others > 0 {
                            assert_eq!(stats.windows, 1, "{at}: one window of buckets");
                        }
                    }
                }
                let (got, _) = plain
                    .msm(0, GpuScalars::Host(scalars), &MsmOptions::default())
                    .unwrap();
                assert_eq!(got, want, "n = {n}, plain bases between tables, {name}");
            }
            // An MSM at an offset into the tables, and one of device scalars.
            if n > 10 {
                let offset = rng.gen_range(1..n / 2);
                let s = &edge[offset..];
                let (got, _) = tables
                    .msm(offset, GpuScalars::Host(s), &MsmOptions::default())
                    .unwrap();
                assert_eq!(
                    got,
                    msm_g1(&bases[offset..], s).unwrap(),
                    "n = {n}, offset {offset}"
                );
            }
            let stream = ntt_cuda::gpu::Stream::new().unwrap();
            let dev = ntt_cuda::gpu::DeviceScalars::from_host_padded(&edge, n, &stream).unwrap();
            stream.synchronize().unwrap();
            let (got, _) = tables
                .msm(0, GpuScalars::Device(&dev, n), &MsmOptions::default())
                .unwrap();
            assert_eq!(
                got,
                msm_g1(&bases, &edge).unwrap(),
                "n = {n}, device scalars"
            );
            // Another window than the tables' is an error.
            let other = MsmOptions {
                window: Some(window + 1),
                ..MsmOptions::default()
            };
            assert!(tables.msm(0, GpuScalars::Host(&edge), &other).is_err());
        }
    }
    let bases = random_g1(3, &mut rng);
    for window in [gpu::TABLE_MIN_WINDOW - 1, 25] {
        assert!(matches!(
            DeviceBases::upload_tables(&bases, window).unwrap_err(),
            msm_cuda::Error::Window { .. }
        ));
    }
}

#[test]
fn msm_reads_scalars_from_device_memory() {
    if !gpu_or_skip("msm_reads_scalars_from_device_memory", gpu::device()) {
        return;
    }
    let mut rng = fresh_rng("msm_reads_scalars_from_device_memory");
    let n = 5000;
    let (bases, scalars) = common::edge_inputs(n, &mut rng);
    let stream = ntt_cuda::gpu::Stream::new().unwrap();
    let dev = ntt_cuda::gpu::DeviceScalars::from_host_padded(&scalars, n, &stream).unwrap();
    stream.synchronize().unwrap();
    let resident = DeviceBases::upload(&bases).unwrap();
    let opts = MsmOptions::default();
    let (got, _) = resident.msm(0, GpuScalars::Device(&dev, n), &opts).unwrap();
    assert_eq!(got, msm_g1(&bases, &scalars).unwrap());
    // A prefix of the device buffer (as the H MSM reads h), and a prefix longer than the buffer (an error).
    let (got, _) = resident
        .msm(0, GpuScalars::Device(&dev, n - 7), &opts)
        .unwrap();
    assert_eq!(got, msm_g1(&bases[..n - 7], &scalars[..n - 7]).unwrap());
    assert!(resident
        .msm(0, GpuScalars::Device(&dev, n + 1), &opts)
        .is_err());
}

#[test]
fn device_gather_equals_host_gather() {
    if !gpu_or_skip("device_gather_equals_host_gather", gpu::device()) {
        return;
    }
    let mut rng = fresh_rng("device_gather_equals_host_gather");
    let stream = ntt_cuda::gpu::Stream::new().unwrap();
    for n in [1usize, 63, 64, 65, 1000, (1 << 16) + 3] {
        let scalars: Vec<Scalar> = (0..n).map(|_| edge_or_random_scalar(&mut rng)).collect();
        // A buffer longer than the selection (as L's aux upload may be), so the length bound is exercised.
        let dev = ntt_cuda::gpu::DeviceScalars::from_host_padded(&scalars, n + 5, &stream).unwrap();
        stream.synchronize().unwrap();
        // Random density, all selected, none selected; stray bits past n in the last word must be ignored.
        let words_n = n.div_ceil(64);
        let cases: Vec<Vec<u64>> = vec![
            (0..words_n).map(|_| rng.gen::<u64>()).collect(),
            vec![u64::MAX; words_n],
            {
                let mut w = vec![0u64; words_n];
                if n % 64 != 0 {
                    w[words_n - 1] = !((1u64 << (n % 64)) - 1);
                }
                w
            },
        ];
        for words in cases {
            let selection = Selection {
                words: &words,
                len: n,
            };
            let ones = selection.selected(n).unwrap();
            let want = selection.gather(&scalars, ones).unwrap();
            let got = gpu::gather_selected(&dev, n, selection).unwrap();
            assert_eq!(got.len(), ones);
            assert_eq!(
                got.to_host(ones, &stream).unwrap(),
                want,
                "n = {n}, {ones} selected"
            );
        }
        let words = vec![u64::MAX; words_n];
        let selection = Selection {
            words: &words,
            len: n + 6,
        };
        assert!(
            gpu::gather_selected(&dev, n + 6, selection).is_err(),
            "longer than the buffer"
        );
    }
}

#[test]
fn g2_msm_matches_blst() {
    if !gpu_or_skip("g2_msm_matches_blst", gpu::device()) {
        return;
    }
    let mut rng = fresh_rng("g2_msm_matches_blst");
    for n in [1usize, 2, 7, 100, 1000, 5000] {
        let mut bases = random_g2(n, &mut rng);
        let mut scalars: Vec<Scalar> = (0..n).map(|_| edge_or_random_scalar(&mut rng)).collect();
        if n > 3 {
            bases[1] = G2Affine::identity();
            bases[2] = bases[0];
            scalars[0] = Scalar::ONE;
            scalars[2] = Scalar::ONE;
        }
        let want: G2Projective = msm_g2(&bases, &scalars).unwrap();
        let resident = DeviceBases::upload(&bases).unwrap();
        for split in [true, false] {
            let (got, _) = resident
                .msm(
                    0,
                    GpuScalars::Host(&scalars),
                    &MsmOptions {
                        window: None,
                        split,
                        accumulation: Accumulation::Auto,
                    },
                )
                .unwrap();
            assert_eq!(got, want, "n = {n}, split = {split}");
        }
    }
}

#[test]
fn streamed_bases_equal_the_cpu_msm() {
    if !gpu_or_skip("streamed_bases_equal_the_cpu_msm", gpu::device()) {
        return;
    }
    let mut rng = fresh_rng("streamed_bases_equal_the_cpu_msm");
    let n = 70_000;
    let (bases, scalars) = common::edge_inputs(n, &mut rng);
    let porep = common::porep_like_scalars(n, &mut rng);
    let scratch = MsmScratch::new().unwrap();
    let stream = ntt_cuda::gpu::Stream::new().unwrap();
    let on_device = ntt_cuda::gpu::DeviceScalars::from_host_padded(&porep, n + 5, &stream).unwrap();
    stream.synchronize().unwrap();
    // Chunks of one point, an odd size, a size that leaves a short last chunk, exactly the range, and more than it;
    // offsets 0 and past the start; host scalars and device scalars (whole buffer, and a range of it).
    for chunk in [1usize, 777, 16_384, 69_990, 1 << 20] {
        let streamed = StreamedBases::<G1Affine>::new(chunk, &scratch).unwrap();
        for (offset, len) in [(0usize, n), (10, n - 10), (3, 1), (n - 1, 1), (0, 0)] {
            if chunk == 1 && len > 3000 {
                continue; // 70,000 one-point MSMs prove nothing the other sizes do not
            }
            let want = msm_g1(&bases[offset..offset + len], &scalars[..len]).unwrap();
            let (got, stats) = streamed
                .msm(
                    &bases,
                    offset,
                    GpuScalars::Host(&scalars[..len]),
                    &MsmOptions::default(),
                )
                .unwrap();
            assert_eq!(got, want, "chunk {chunk}, offset {offset}, len {len}");
            assert_eq!(
                stats.bases_chunks as usize,
                len.div_ceil(chunk),
                "chunk {chunk}"
            );
            assert_eq!(stats.zeros + stats.ones + stats.others, len as u64);
            let want = msm_g1(&bases[offset..offset + len], &porep[..len]).unwrap();
            let (got, _) = streamed
                .msm(
                    &bases,
                    offset,
                    GpuScalars::Device(&on_device, len),
                    &MsmOptions::default(),
                )
                .unwrap();
            assert_eq!(
                got, want,
                "device scalars: chunk {chunk}, offset {offset}, len {len}"
            );
        }
        // Scalars 5.. of the device buffer, through a range of a range.
        let within = GpuScalars::Device(&on_device, n + 5).range(5, n).unwrap();
        let (got, _) = streamed
            .msm(&bases, 0, within, &MsmOptions::default())
            .unwrap();
        let mut shifted = porep[5..].to_vec();
        shifted.resize(n, Scalar::ZERO); // the buffer's padding past the host scalars is zero
        assert_eq!(
            got,
            msm_g1(&bases, &shifted).unwrap(),
            "range: chunk {chunk}"
        );
    }
    let streamed = StreamedBases::<G1Affine>::new(1000, &scratch).unwrap();
    // Past the bases, past the scalars' buffer: errors, not reads out of bounds.
    assert!(streamed
        .msm(
            &bases,
            1,
            GpuScalars::Host(&scalars),
            &MsmOptions::default()
        )
        .is_err());
    assert!(streamed
        .msm(
            &bases,
            0,
            GpuScalars::Device(&on_device, n + 6),
            &MsmOptions::default()
        )
        .is_err());
    assert!(StreamedBases::<G1Affine>::new(0, &scratch).is_err());
    // G2 (B_G2), chunked, against blst.
    let g2 = random_g2(3000, &mut rng);
    let want = msm_g2(&g2, &scalars[..3000]).unwrap();
    let (got, stats) = StreamedBases::<G2Affine>::new(1024, &scratch)
        .unwrap()
        .msm(
            &g2,
            0,
            GpuScalars::Host(&scalars[..3000]),
            &MsmOptions::default(),
        )
        .unwrap();
    assert_eq!(got, want);
    assert_eq!(stats.bases_chunks, 3);
}

#[test]
fn without_a_gpu_entry_points_say_why() {
    if gpu::device().is_ok() {
        return;
    }
    let err = DeviceBases::upload(&[G1Affine::generator()]).unwrap_err();
    assert!(matches!(err, msm_cuda::Error::NoDevice(_)), "{err}");
}

#[test]
#[ignore = "heavy: 2^24 and 2^26 points (run on the GPU machine)"]
fn heavy_sweep_2_24_and_2_26() {
    if !gpu_or_skip("heavy_sweep_2_24_and_2_26", gpu::device()) {
        return;
    }
    let mut rng = fresh_rng("heavy_sweep_2_24_and_2_26");
    for lg in [24u32, 26] {
        let n = 1usize << lg;
        let bases = random_g1_fast(n, &mut rng);
        let random = par_scalars(n, &mut rng, |r, _| Scalar::random(r));
        let resident = DeviceBases::upload(&bases).unwrap();
        let want = msm_g1(&bases, &random).unwrap();
        for accumulation in BOTH {
            let opts = MsmOptions {
                accumulation,
                ..MsmOptions::default()
            };
            let (got, stats) = resident.msm(0, GpuScalars::Host(&random), &opts).unwrap();
            assert_eq!(got, want, "2^{lg} random, {stats:?}");
            // Host scalars of an MSM this large go up in eight chunks (gpu_chunked.rs covers small sizes).
            assert_eq!(stats.upload_chunks, 8, "2^{lg} random, {stats:?}");
        }
        let porep = common::porep_like_scalars(n, &mut rng);
        let (got, stats) = resident
            .msm(0, GpuScalars::Host(&porep), &MsmOptions::default())
            .unwrap();
        assert_eq!(
            got,
            msm_g1(&bases, &porep).unwrap(),
            "2^{lg} porep-like, {stats:?}"
        );
    }
}

#[test]
#[ignore = "heavy: window tables of 2^24 and 2^26 points, about 95 GB of device memory at 2^26 (run on the H200)"]
fn heavy_window_tables_2_24_and_2_26() {
    if !gpu_or_skip("heavy_window_tables_2_24_and_2_26", gpu::device()) {
        return;
    }
    let (_, card) = ntt_cuda::gpu::mem_info().unwrap();
    let mut rng = fresh_rng("heavy_window_tables_2_24_and_2_26");
    for (lg, window) in [(24u32, 20u32), (26, 24)] {
        let n = 1usize << lg;
        // The tables (a 96-byte affine point for each base and window) and room for the MSM's scratch: a card with
        // less memory (an H100 at 2^26) skips the size, saying so, rather than failing at the tables' allocation.
        let need =
            n as u64 * u64::from(msm_cuda::fixed_base::windows_for(window)) * 96 + (16u64 << 30);
        if card < need {
            println!(
                "heavy_window_tables: skipping 2^{lg} at {window} bits: it needs about {} GiB of device memory, \
                 the card has {} GiB",
                need >> 30,
                card >> 30
            );
            continue;
        }
        let bases = random_g1_fast(n, &mut rng);
        let tables = DeviceBases::upload_tables(&bases, window).unwrap();
        for (name, scalars) in [
            ("random", par_scalars(n, &mut rng, |r, _| Scalar::random(r))),
            ("porep-like", common::porep_like_scalars(n, &mut rng)),
        ] {
            let want = msm_g1(&bases, &scalars).unwrap();
            for accumulation in BOTH {
                let opts = MsmOptions {
                    accumulation,
                    ..MsmOptions::default()
                };
                let (got, stats) = tables.msm(0, GpuScalars::Host(&scalars), &opts).unwrap();
                assert_eq!(
                    got, want,
                    "2^{lg} {name}, window tables of {window} bits, {stats:?}"
                );
            }
        }
    }
}
