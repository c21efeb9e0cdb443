//! Host scalars uploaded in chunks, each classified and placed for the sort as it lands (the chunked upload, on by
//! default from 2^22 scalars, so the heavy sweep of `gpu.rs` runs it at full size): here from 2,048 scalars, with
//! chunk counts from 1 to 8, short last chunks, every accumulation and split, random, edge and PoRep-like scalars
//! (whose classification calls for another window or sort than the one guessed, so the stage made during the upload
//! is dropped and the sort runs again), plain bases and window tables, against blst.
//! The batch-affine rounds take their windows two a group here (`CUZK_MSM_GROUP_WINDOWS=2` unless set);
//! `CUZK_MSM_GROUP_WINDOWS=1024` runs every window in one group, as MSMs this small do by default.
//! Its own test binary: it sets `CUZK_MSM_CHUNKED_MIN` for the whole process before the first MSM.
//! Skipped with a printed reason without a GPU; failing instead when CUZK_REQUIRE_GPU=1.

mod common;

use blstrs::Scalar;
use ff::Field;
use msm_cuda::gpu::{self, Accumulation, DeviceBases, GpuScalars, MsmOptions};
use msm_cuda::msm_g1;
use rand::Rng;
use test_utils::{fresh_rng, gpu_or_skip, par_scalars};

/// Host scalars of 2^CHUNKED_MIN_LOG and more go up in chunks in this test's process (`CUZK_MSM_CHUNKED_MIN`).
const CHUNKED_MIN_LOG: u32 = 11;

/// The chunks of a chunked upload of n scalars (msm.cu, upload_and_stage): `CUZK_MSM_UPLOAD_CHUNKS` (eight unless
/// set to 1..8, as the C side reads it), each a multiple of 2,048 scalars.
fn chunks(n: usize) -> u32 {
    let k: usize = std::env::var("CUZK_MSM_UPLOAD_CHUNKS")
        .ok()
        .and_then(|v| v.parse().ok())
        .filter(|k| (1..=8).contains(k))
        .unwrap_or(8);
    let per = n.div_ceil(k).div_ceil(2048) * 2048;
    n.div_ceil(per) as u32
}

#[test]
fn chunked_uploads_equal_blst() {
    if !gpu_or_skip("chunked_uploads_equal_blst", gpu::device()) {
        return;
    }
    std::env::set_var("CUZK_MSM_CHUNKED_MIN", CHUNKED_MIN_LOG.to_string());
    if std::env::var_os("CUZK_MSM_GROUP_WINDOWS").is_none() {
        std::env::set_var("CUZK_MSM_GROUP_WINDOWS", "2");
    }
    let mut rng = fresh_rng("chunked_uploads_equal_blst");
    let sizes = [
        2048usize,
        3000,
        4096 + rng.gen_range(1..1000),
        (1 << 14) + rng.gen_range(1..1000),
        1 << 16,
        (1 << 17) + 77,
    ];
    for n in sizes {
        let (bases, edge) = common::edge_inputs(n, &mut rng);
        let resident = DeviceBases::upload(&bases).unwrap();
        let random = par_scalars(n, &mut rng, |r, _| Scalar::random(r));
        let porep = common::porep_like_scalars(n, &mut rng);
        for (name, scalars) in [("edge", &edge), ("random", &random), ("porep-like", &porep)] {
            let want = msm_g1(&bases, scalars).unwrap();
            // Windows of 10 bits and more take the staged sort (the table's may be smaller at these sizes).
            for window in [None, Some(10), Some(13), Some(16)] {
                for accumulation in [Accumulation::Xyzz, Accumulation::BatchAffine] {
                    for split in [true, false] {
                        let opts = MsmOptions {
                            window,
                            split,
                            accumulation,
                        };
                        let (got, stats) =
                            resident.msm(0, GpuScalars::Host(scalars), &opts).unwrap();
                        let at = format!("n = {n}, {name}, {opts:?}, {stats:?}");
                        assert_eq!(got, want, "{at}");
                        assert_eq!(stats.zeros + stats.ones + stats.others, n as u64, "{at}");
                        if window.is_some() {
                            assert_eq!(stats.upload_chunks, chunks(n), "{at}");
                        }
                    }
                }
            }
        }
        // Over window tables (every digit window into one window of buckets, the ones list's indices times the
        // tables a base has), from the start and at an offset.
        for window in [10u32, 16] {
            let tables =
                DeviceBases::upload_tables_sharing(&bases, window, resident.scratch()).unwrap();
            for (name, scalars) in [("edge", &edge), ("random", &random), ("porep-like", &porep)] {
                let want = msm_g1(&bases, scalars).unwrap();
                for accumulation in [Accumulation::Xyzz, Accumulation::BatchAffine] {
                    for split in [true, false] {
                        let opts = MsmOptions {
                            window: None,
                            split,
                            accumulation,
                        };
                        let (got, stats) = tables.msm(0, GpuScalars::Host(scalars), &opts).unwrap();
                        let at = format!(
                            "n = {n}, tables of {window} bits, {name}, {opts:?}, {stats:?}"
                        );
                        assert_eq!(got, want, "{at}");
                        assert_eq!(stats.window, window, "{at}");
                        assert_eq!(stats.upload_chunks, chunks(n), "{at}");
                    }
                }
            }
            let offset = rng.gen_range(1..n / 2);
            let s = &random[offset..];
            let (got, stats) = tables
                .msm(offset, GpuScalars::Host(s), &MsmOptions::default())
                .unwrap();
            let at = format!("n = {n}, tables of {window} bits, offset {offset}, {stats:?}");
            assert_eq!(got, msm_g1(&bases[offset..], s).unwrap(), "{at}");
            let m = n - offset;
            assert_eq!(
                stats.upload_chunks,
                if m >= 1 << CHUNKED_MIN_LOG {
                    chunks(m)
                } else {
                    0
                },
                "{at}"
            );
        }
        // Scalars on the device never take the chunked upload.
        let stream = ntt_cuda::gpu::Stream::new().unwrap();
        let dev = ntt_cuda::gpu::DeviceScalars::from_host_padded(&random, n, &stream).unwrap();
        stream.synchronize().unwrap();
        let (got, stats) = resident
            .msm(0, GpuScalars::Device(&dev, n), &MsmOptions::default())
            .unwrap();
        assert_eq!(
            got,
            msm_g1(&bases, &random).unwrap(),
            "n = {n}, device scalars"
        );
        assert_eq!(stats.upload_chunks, 0, "n = {n}, device scalars");
    }
}
