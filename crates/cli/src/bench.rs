//! `cuzk bench ...`: measurements on this machine, printed beside the card's measured ceilings.

use std::time::Instant;

use anyhow::{Context, Result};
use blstrs::Scalar;
use clap::{Args, Subcommand};
use ntt_cuda::gpu::{self, DeviceScalars, Direction, GpuDomain, Order, PinnedScalars, Stream};

use crate::report::{median, Report};

#[derive(Subcommand, Debug)]
pub enum BenchCommand {
    /// Synthesis only: LC storage variants (A1), the size hint (A2), direct or compiled path, thread count.
    Synth(crate::bench_synth::SynthArgs),
    /// GPU NTT and H polynomial: forward NTT times (kernels only, data on the device) and H times, beside the card's copy and multiply ceilings.
    Ntt(NttArgs),
    /// The pipelined engine end to end on the PoRep-shaped circuit: per-phase medians, sustained time per partition,
    /// proofs per hour, prover busy fraction, peak RSS beside the predicted peak.
    Prove(crate::bench_prove::ProveArgs),
    /// GPU G1 MSM against resident bases: random and PoRep-like scalars, phase times, floors; `--tune` writes the window table.
    Msm(crate::bench_msm::MsmArgs),
    /// Real Filecoin PoRep partitions through the engine: one C1 output proved --proofs times in one run; per-phase
    /// medians, sustained time per partition, sector proofs per hour, peak RSS.
    #[cfg(feature = "porep")]
    Porep(crate::porep_cmd::BenchArgs),
}

#[derive(Args, Debug)]
pub struct NttArgs {
    /// log2 sizes of the forward NTT.
    #[arg(long, value_delimiter = ',', default_value = "20,24,26,27")]
    sizes: Vec<u32>,
    /// log2 sizes of the inverse NTT to natural order: from natural order, from bit-reversed order, and from natural
    /// order on the coset H uses (`ntt_cuda::coset_generator`), as H's last transform (none unless asked; timed
    /// with device events, as the forward NTT).
    #[arg(long, value_delimiter = ',')]
    inverse_sizes: Vec<u32>,
    /// log2 sizes of the H polynomial (a, b, c already on the device).
    #[arg(long, value_delimiter = ',', default_value = "24,27")]
    h_sizes: Vec<u32>,
    /// Timed repetitions per case, at least 1 (after one warm-up); the median is reported.
    #[arg(long, default_value_t = 10, value_parser = clap::value_parser!(u32).range(1..))]
    iterations: u32,
    /// Skip the H runs from host memory (pageable, staged and pinned uploads); keep only data already on the device.
    #[arg(long)]
    device_only: bool,
    /// Idle time before each timed case, so that no case inherits the power cap the one before it ran into (an
    /// H100 runs 2^27 transforms at its 700 W cap, 1-3 % below its top clock, and about 1.2 s into continuous work
    /// drops the clock by up to a fifth for a moment). 0 measures the cases back to back.
    #[arg(long, default_value_t = 2000)]
    cool_down_ms: u64,
    /// Print JSON instead of a table.
    #[arg(long)]
    json: bool,
}

pub fn run(cmd: BenchCommand) -> Result<()> {
    match cmd {
        BenchCommand::Ntt(a) => ntt(a),
        BenchCommand::Synth(a) => crate::bench_synth::run(a),
        BenchCommand::Msm(a) => crate::bench_msm::run(a),
        BenchCommand::Prove(a) => crate::bench_prove::run(a),
        #[cfg(feature = "porep")]
        BenchCommand::Porep(a) => crate::porep_cmd::bench(a),
    }
}

/// Distinct non-zero pseudo-random scalars (never time on zeros).
/// n full-width scalars, the same for a seed on every run: element i is a product of two values hashed from
/// (seed, i) (splitmix64), so the 2^27-element inputs are made on all cores in a second or two.
fn fill(n: usize, seed: u64) -> Vec<Scalar> {
    use rayon::prelude::*;
    let mix = |mut z: u64| {
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    };
    (0..n as u64)
        .into_par_iter()
        .map(|i| {
            let x = mix(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) ^ i);
            Scalar::from(x) * Scalar::from(mix(x) | 1)
        })
        .collect()
}

/// The idle time before a timed case (`--cool-down-ms`).
fn cool_down(a: &NttArgs) {
    std::thread::sleep(std::time::Duration::from_millis(a.cool_down_ms));
}

/// A domain of 2^log_n, a stream, and `fill`'s scalars for it uploaded and ready on the device.
fn timing_input(log_n: u32) -> Result<(GpuDomain, Stream, DeviceScalars)> {
    let n = 1usize << log_n;
    let domain = GpuDomain::new(log_n)?;
    let stream = Stream::new()?;
    let d = DeviceScalars::from_host_padded(&fill(n, log_n as u64), n, &stream)?;
    stream.synchronize()?;
    Ok((domain, stream, d))
}

fn ntt(a: NttArgs) -> Result<()> {
    let device = gpu::device().context("cuzk bench ntt needs a GPU")?;
    let mut report = Report::streaming("bench ntt", a.json);
    report.text("device", device);
    let (copy_bw, imad) = gpu::ceilings(1 << 30).context("measuring ceilings")?;
    report.text(
        "ceiling: device copy",
        format!("{:.2} TB/s (read + write, 1 GiB buffers)", copy_bw / 1e12),
    );
    report.text("ceiling: 32-bit IMAD", format!("{:.2}e12 /s", imad / 1e12));
    let fr_rate = gpu::ceiling_fr_mul().context("measuring the scalar-field product rate")?;
    report.text(
        "ceiling: Fr product",
        format!(
            "{:.2}e9 /s (the butterflies' form, two chains per thread, all SMs)",
            fr_rate / 1e9
        ),
    );
    for &log_n in &a.sizes {
        let n = 1usize << log_n;
        let (domain, _stream, mut d) = timing_input(log_n)?;
        let mut times = Vec::new();
        cool_down(&a);
        for _ in 0..3 {
            times.push(domain.time_ntt(
                &mut d,
                Direction::Forward,
                Order::Natural,
                None,
                a.iterations,
            )?);
        }
        let (med, lo, hi) = median(times);
        // Floors: each pass of up to 10 stages reads and writes every scalar once; every butterfly but those of DIF's
        // last stage (twiddle 1) is one product at the rate measured above.
        let passes = log_n.div_ceil(10) as f64;
        let mem_floor_ms = passes * 2.0 * 32.0 * n as f64 / copy_bw * 1e3;
        let mul_floor_ms = (n as f64 / 2.0) * log_n.saturating_sub(1) as f64 / fr_rate * 1e3;
        // Numeric twin of the row below, for scripts (`cargo xtask bench --ab ntt-mul`).
        report.time(
            &format!("ntt 2^{log_n} median"),
            std::time::Duration::from_secs_f64(med / 1e3),
        );
        report.text(
            &format!("forward NTT 2^{log_n}"),
            format!(
                "{med:.3} ms (median of 3 medians of {} runs; min {lo:.3}, max {hi:.3}); floors: memory {mem_floor_ms:.3} ms, multiply {mul_floor_ms:.3} ms",
                a.iterations
            ),
        );
    }
    for &log_n in &a.inverse_sizes {
        let (domain, _stream, mut d) = timing_input(log_n)?;
        // To natural order from natural order (DIF), from bit-reversed order (DIT) and from natural order on a
        // coset; the input is timing data every time.
        let g = ntt_cuda::coset_generator();
        for (key, label, input, coset) in [
            ("intt", "", Order::Natural, None),
            (
                "intt-rev",
                " from bit-reversed order",
                Order::BitReversed,
                None,
            ),
            ("intt-coset", " on a coset", Order::Natural, Some(&g)),
        ] {
            let mut times = Vec::new();
            cool_down(&a);
            for _ in 0..3 {
                times.push(domain.time_ntt(
                    &mut d,
                    Direction::Inverse,
                    input,
                    coset,
                    a.iterations,
                )?);
            }
            let (med, lo, hi) = median(times);
            report.time(
                &format!("{key} 2^{log_n} median"),
                std::time::Duration::from_secs_f64(med / 1e3),
            );
            report.text(
                &format!("inverse NTT 2^{log_n}{label}"),
                format!(
                    "{med:.3} ms (median of 3 medians of {} runs; min {lo:.3}, max {hi:.3})",
                    a.iterations
                ),
            );
        }
    }
    for &log_n in &a.h_sizes {
        let n = 1usize << log_n;
        let domain = GpuDomain::new(log_n)?;
        let streams = [Stream::new()?, Stream::new()?, Stream::new()?];
        let mut da = DeviceScalars::from_host_padded(&fill(n, 1), n, &streams[0])?;
        let mut db = DeviceScalars::from_host_padded(&fill(n, 2), n, &streams[1])?;
        let mut dc = DeviceScalars::from_host_padded(&fill(n, 3), n, &streams[2])?;
        for s in &streams {
            s.synchronize()?;
        }
        let mut times = Vec::new();
        cool_down(&a);
        for i in 0..=a.iterations {
            let t = Instant::now();
            domain.h_polynomial(
                &mut da,
                &mut db,
                &mut dc,
                [&streams[0], &streams[1], &streams[2]],
            )?;
            streams[0].synchronize()?;
            if i > 0 {
                times.push(t.elapsed().as_secs_f64() * 1e3);
            }
        }
        let (med, lo, hi) = median(times);
        // H runs six transforms (bellperson's sequence, seven; see ntt_cuda::h_polynomial).
        let mem_floor_ms = 6.0 * log_n.div_ceil(10) as f64 * 2.0 * 32.0 * n as f64 / copy_bw * 1e3;
        report.time(
            &format!("h 2^{log_n} median"),
            std::time::Duration::from_secs_f64(med / 1e3),
        );
        report.text(
            &format!("H polynomial 2^{log_n} (on device)"),
            format!("{med:.2} ms (median of {}; min {lo:.2}, max {hi:.2}); memory floor of the 6 NTTs {mem_floor_ms:.2} ms", a.iterations),
        );
        // From host memory: pageable (as a prover without pinned buffers sees it), then pinned (allocated once, reused).
        drop((da, db, dc));
        if a.device_only {
            continue;
        }
        let host = fill(n, 4);
        let t = Instant::now();
        let (h, _) = gpu::h_polynomial_on_device(&domain, &host, &host, &host)?;
        report.text(
            &format!("H polynomial 2^{log_n} (from pageable host memory)"),
            format!(
                "{:.2} ms (one run, uploads included, h left on the device)",
                t.elapsed().as_secs_f64() * 1e3
            ),
        );
        drop(h);
        let mut times = Vec::new();
        for _ in 0..3 {
            let t = Instant::now();
            let (h, _) = gpu::h_polynomial_staged(&domain, &host, &host, &host)?;
            times.push(t.elapsed().as_secs_f64() * 1e3);
            drop(h);
        }
        let (med, lo, hi) = median(times);
        report.text(
            &format!("H polynomial 2^{log_n} (pageable, through pinned staging)"),
            format!("{med:.2} ms (median of 3; min {lo:.2}, max {hi:.2}; parallel copy into 2 x 64 MiB pinned chunks overlapping the DMA, h left on the device)"),
        );
        let pinned = [
            PinnedScalars::from_slice(&host)?,
            PinnedScalars::from_slice(&fill(n, 5))?,
            PinnedScalars::from_slice(&fill(n, 6))?,
        ];
        drop(host);
        let mut times = Vec::new();
        for _ in 0..3 {
            let t = Instant::now();
            let (h, _) = gpu::h_polynomial_on_device(&domain, &pinned[0], &pinned[1], &pinned[2])?;
            times.push(t.elapsed().as_secs_f64() * 1e3);
            drop(h);
        }
        let (med, lo, hi) = median(times);
        report.text(
            &format!("H polynomial 2^{log_n} (from pinned host memory)"),
            format!("{med:.2} ms (median of 3; min {lo:.2}, max {hi:.2}; uploads overlap the first NTTs, h left on the device)"),
        );
    }
    report.print(a.json);
    Ok(())
}
