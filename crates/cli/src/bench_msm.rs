//! `cuzk bench msm`: GPU multi-scalar multiplication against resident bases, beside its floor; `--tune` measures
//! every window per size and writes the window table msm-cuda embeds.

use std::time::Instant;

use anyhow::{bail, Context, Result};
use blstrs::{G1Affine, Scalar};
use clap::{Args, ValueEnum};
use ff::Field;
use msm_cuda::gpu::{
    self, Accumulation, DeviceBases, GpuScalars, MsmOptions, MsmScratch, MsmStats, StreamedBases,
};
use ntt_cuda::gpu::PinnedScalars;
use rayon::prelude::*;

use crate::report::{median, Report};

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum ScalarKind {
    /// Uniformly random full-width scalars.
    Random,
    /// Groth16-assignment-like: 49 % zero, 48.5 % one, 2.5 % random (the PoRep-like circuit's value mix).
    Porep,
    /// Both, one after the other.
    Both,
}

#[derive(Args, Debug)]
pub struct MsmArgs {
    /// log2 sizes (number of G1 bases and scalars).
    #[arg(long, value_delimiter = ',', default_value = "16,20,22,24,26")]
    sizes: Vec<u32>,
    /// Scalar distribution.
    #[arg(long, value_enum, default_value_t = ScalarKind::Both)]
    scalars: ScalarKind,
    /// Timed repetitions per case, at least 1 (after one warm-up); median, min and max are reported.
    #[arg(long, default_value_t = 5, value_parser = clap::value_parser!(u32).range(1..))]
    iterations: u32,
    /// Bits per digit for every MSM (default: the committed tuning table's choice per MSM).
    #[arg(long)]
    window: Option<u32>,
    /// Turn the 0/1 split off (plain Pippenger over every non-zero scalar).
    #[arg(long)]
    no_split: bool,
    /// How G1 buckets are summed: auto (batch-affine for large MSMs with long buckets), xyzz, affine, or a list
    /// (xyzz,affine) to time each on the same inputs, one after the other; their results must agree.
    #[arg(long, value_delimiter = ',', default_value = "auto")]
    accumulate: Vec<Accumulation>,
    /// Also time blst's CPU multiexp on the same inputs (sizes up to 2^22; slow beyond).
    #[arg(long)]
    cpu: bool,
    /// Measure windows log2-10 ..= log2-1 (at most 22) at each size with random scalars and write the fastest per size to FILE
    /// (the format of crates/msm-cuda/tuning/h200.txt).
    #[arg(long, value_name = "FILE")]
    tune: Option<std::path::PathBuf>,
    /// log2 sizes of a G2 comparison: GPU against blst's CPU multiexp on the same random inputs (the A4 question:
    /// where B_G2 should run).
    #[arg(long, value_delimiter = ',')]
    g2_sizes: Vec<u32>,
    /// Also time each size with the bases left in host memory and streamed to the device in chunks of N points
    /// (as the prover does with `CUZK_GPU_PARAMS=streamed`, for cards that cannot hold the parameters).
    #[arg(long, value_name = "N")]
    streamed_chunk: Option<usize>,
    /// Also time each size against window tables of C-bit digits (10 to 24): every base's 2^(C·w) multiples kept on
    /// the device, so that all windows' digits share one set of buckets. Built per size, for that size's bases
    /// (⌈256/C⌉ points a base: 2^26 bases at C = 24 take 71 GB); the first accumulation of --accumulate.
    #[arg(long, value_name = "C")]
    tables: Option<u32>,
    /// Print JSON instead of a table.
    #[arg(long)]
    json: bool,
}

/// `n` scalars made in parallel by `make`, reproducible from `seed` (each chunk of 2^16 has its own RNG).
fn scalars_with(
    n: usize,
    seed: u64,
    make: impl Fn(&mut rand_chacha::ChaCha8Rng) -> Scalar + Sync,
) -> Vec<Scalar> {
    use rand::SeedableRng;
    let mut out = vec![Scalar::ZERO; n];
    out.par_chunks_mut(1 << 16)
        .enumerate()
        .for_each(|(i, chunk)| {
            let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed ^ ((i as u64) << 20));
            for s in chunk {
                *s = make(&mut rng);
            }
        });
    out
}

/// Random full-width scalars.
fn random_scalars(n: usize, seed: u64) -> Vec<Scalar> {
    scalars_with(n, seed, |rng| Scalar::random(rng))
}

/// Groth16-assignment-like scalars: 49 % zero, 48.5 % one, 2.5 % random.
fn porep_scalars(n: usize, seed: u64) -> Vec<Scalar> {
    use rand::Rng;
    scalars_with(n, seed, |rng| match rng.gen_range(0..1000) {
        0..=489 => Scalar::ZERO,
        490..=974 => Scalar::ONE,
        _ => Scalar::random(rng),
    })
}

/// Base-field multiplications the MSM needed at least: 10 per mixed addition of a point into a bucket (8M + 2S, one
/// per non-zero digit), 14 per full addition of the bucket reduction (two per bucket), 10 per scalar-1 base.
fn mults(s: &MsmStats) -> f64 {
    let buckets = s.windows as f64 * ((1u64 << (s.window.max(1) - 1)) as f64);
    // Per bucket addition: XYZZ 8M + 2S, batch-affine 5M + 1S (squares counted as products).
    let per_add = match s.accumulation {
        Accumulation::BatchAffine => 6.0,
        _ => 10.0,
    };
    // The scalar-1 bases: the same per addition, by the way they were summed.
    let per_one = if s.ones_rounds > 0 { 6.0 } else { 10.0 };
    s.digits as f64 * per_add + s.ones as f64 * per_one + buckets * 2.0 * 14.0
}

/// Times `iterations` MSMs against resident bases (after a warm-up): wall milliseconds from pinned scalars to the
/// combined point.
fn time_msm(
    bases: &DeviceBases<G1Affine>,
    scalars: &[Scalar],
    opts: &MsmOptions,
    iterations: u32,
    check: Option<blstrs::G1Projective>,
) -> Result<(Vec<f64>, MsmStats, blstrs::G1Projective)> {
    time_runs(
        || bases.msm(0, GpuScalars::Host(scalars), opts),
        scalars.len(),
        opts,
        iterations,
        check,
    )
}

/// Times `iterations` runs of `msm` (after a warm-up whose result must equal `check` when given, and every later
/// one the warm-up's): wall milliseconds each, the last run's stats, the result.
fn time_runs(
    msm: impl Fn() -> msm_cuda::Result<(blstrs::G1Projective, MsmStats)>,
    n: usize,
    opts: &MsmOptions,
    iterations: u32,
    check: Option<blstrs::G1Projective>,
) -> Result<(Vec<f64>, MsmStats, blstrs::G1Projective)> {
    let scalars_len = n;
    let (first, _) = msm()?;
    if let Some(want) = check {
        if first != want {
            bail!("GPU MSM disagrees with the CPU on {scalars_len} scalars ({opts:?})");
        }
    }
    let mut times = Vec::new();
    let mut last = MsmStats::default();
    for _ in 0..iterations.max(1) {
        let t = Instant::now();
        let (p, stats) = msm()?;
        times.push(t.elapsed().as_secs_f64() * 1e3);
        if p != first {
            bail!("GPU MSM gave different results on repeated runs");
        }
        last = stats;
    }
    Ok((times, last, first))
}

/// Reports one size's timed runs: the numeric row `g1 2^lg Kind<tag> median` (for scripts) and its text twin
/// `G1 MSM 2^lg Kind<tag>`, "median ms (median of N, min, max); detail".
fn report_row(
    report: &mut Report,
    lg: u32,
    kind: ScalarKind,
    tag: &str,
    times: Vec<f64>,
    detail: String,
) {
    let runs = times.len();
    let (med, min, max) = median(times);
    report.time(
        &format!("g1 2^{lg} {kind:?}{tag} median"),
        std::time::Duration::from_secs_f64(med / 1e3),
    );
    report.text(
        &format!("G1 MSM 2^{lg} {kind:?}{tag}"),
        format!("{med:.3} ms (median of {runs}, min {min:.3}, max {max:.3}); {detail}"),
    );
}

pub fn run(a: MsmArgs) -> Result<()> {
    let device = gpu::device().context("cuzk bench msm needs a GPU")?;
    let mut report = Report::streaming("bench msm", a.json);
    report.text("device", device);
    let fp_rate = gpu::ceiling_fp_mul().context("measuring the Fp multiply rate")?;
    report.text(
        "ceiling: Fp multiply",
        format!(
            "{:.2}e9 /s (381-bit Montgomery products in the MSM's form, all SMs)",
            fp_rate / 1e9
        ),
    );
    // The other product forms beside it, for choosing the MSM's (the floor below uses the one it runs).
    for (form, what) in [
        (gpu::MulForm::Folded, "folded product"),
        (gpu::MulForm::Square, "square"),
        (gpu::MulForm::Chains, "carry-chain product"),
        (gpu::MulForm::Float64, "FP64 product"),
        (gpu::MulForm::WarpMix, "product, FP64 in odd warps"),
        (gpu::MulForm::PairMix, "product, two chains (one FP64)"),
        (gpu::MulForm::Pair, "product, two chains"),
    ] {
        let r = gpu::ceiling_fp_mul_form(form)
            .with_context(|| format!("measuring the Fp {what} rate"))?;
        report.text(
            &format!("ceiling: Fp {what}"),
            format!("{:.2}e9 /s", r / 1e9),
        );
    }
    let max_lg = a.sizes.iter().copied().max().unwrap_or(0);
    if max_lg > 28 {
        bail!("--sizes: 2^{max_lg} is above the 2^28 this benchmark supports");
    }
    let t = Instant::now();
    let mut rng = rand::thread_rng();
    let all_bases = test_utils::random_g1_fast(1usize << max_lg, &mut rng);
    report.text(
        "bases",
        format!(
            "2^{max_lg} random G1 points made in {:.1} s",
            t.elapsed().as_secs_f64()
        ),
    );
    let resident = DeviceBases::upload(&all_bases).context("uploading the bases")?;
    let mut tuned: Vec<(u32, u32, f64)> = Vec::new();
    for &lg in &a.sizes {
        let n = 1usize << lg;
        let tables = match a.tables {
            Some(c) => {
                let t = Instant::now();
                let tables =
                    DeviceBases::upload_tables_sharing(&all_bases[..n], c, resident.scratch())
                        .with_context(|| {
                            format!("building window tables of {c} bits for 2^{lg} bases")
                        })?;
                report.text(
                    &format!("tables 2^{lg}"),
                    format!(
                        "{c}-bit windows, {} points a base, {:.2} GiB, built in {:.2} s",
                        256u32.div_ceil(c),
                        tables.device_bytes()? as f64 / (1u64 << 30) as f64,
                        t.elapsed().as_secs_f64()
                    ),
                );
                Some(tables)
            }
            None => None,
        };
        let kinds = match a.scalars {
            ScalarKind::Both => vec![ScalarKind::Random, ScalarKind::Porep],
            k => vec![k],
        };
        for kind in kinds {
            let host = match kind {
                ScalarKind::Porep => porep_scalars(n, lg as u64),
                _ => random_scalars(n, lg as u64),
            };
            let want = if a.cpu || lg <= 16 {
                let t = Instant::now();
                let w = msm_cuda::msm_g1(&all_bases[..n], &host)?;
                if a.cpu {
                    report.text(
                        &format!("cpu blst 2^{lg} {kind:?}"),
                        format!(
                            "{:.2} ms (one run, {} threads)",
                            t.elapsed().as_secs_f64() * 1e3,
                            rayon::current_num_threads()
                        ),
                    );
                }
                Some(w)
            } else {
                None
            };
            let pinned = PinnedScalars::from_slice(&host)?;
            drop(host);
            let opts = MsmOptions {
                window: a.window,
                split: !a.no_split,
                accumulation: a.accumulate.first().copied().unwrap_or_default(),
            };
            if a.tune.is_some() && kind == ScalarKind::Random {
                let mut best: Option<(u32, f64)> = None;
                let lo = lg.saturating_sub(10).max(4);
                for w in lo..lg.min(23) {
                    let o = MsmOptions {
                        window: Some(w),
                        ..opts
                    };
                    let (times, _, _) = time_msm(&resident, &pinned, &o, a.iterations, want)?;
                    let (med, min, max) = median(times);
                    report.text(
                        &format!("tune 2^{lg} window {w}"),
                        format!("{med:.3} ms (min {min:.3}, max {max:.3})"),
                    );
                    if best.is_none_or(|(_, b)| med < b) {
                        best = Some((w, med));
                    }
                }
                if let Some((w, ms)) = best {
                    tuned.push((lg, w, ms));
                }
            }
            let mut agreed: Option<(Accumulation, blstrs::G1Projective)> = None;
            for &accumulation in &a.accumulate {
                let opts = MsmOptions {
                    accumulation,
                    ..opts
                };
                let (times, s, point) = time_msm(&resident, &pinned, &opts, a.iterations, want)?;
                match agreed {
                    Some((first, p)) if p != point => bail!(
                        "2^{lg} {kind:?}: accumulation {} and {} disagree",
                        first.name(),
                        accumulation.name()
                    ),
                    None => agreed = Some((accumulation, point)),
                    _ => {}
                }
                // The label names the accumulation only when several are compared, so scripts reading the
                // single-mode rows (`cargo xtask bench --ab d4`) keep working.
                let tag = if a.accumulate.len() > 1 {
                    format!(" {}", accumulation.name())
                } else {
                    String::new()
                };
                let floor_ms = mults(&s) / fp_rate * 1e3;
                let detail = format!(
                    "window {} x {}; {} accumulation ({} affine rounds); floor {floor_ms:.3} ms; device: upload {:.2} \
                     ({} chunks), classify {:.2}, sort {:.2}, accumulate {:.2}, reduce {:.2}, ones {:.2} ({} rounds), \
                     total {:.2}; combine {:.2} ms on the host; 0/1/other {}/{}/{}",
                    s.window, s.windows, s.accumulation.name(), s.affine_rounds, s.ms_upload, s.upload_chunks,
                    s.ms_classify, s.ms_sort, s.ms_accumulate, s.ms_reduce, s.ms_ones, s.ones_rounds, s.ms_total,
                    s.ms_combine, s.zeros, s.ones, s.others
                );
                report_row(&mut report, lg, kind, &tag, times, detail);
            }
            if let Some(tables) = &tables {
                let want = want.or(agreed.map(|(_, p)| p));
                let opts = MsmOptions {
                    window: None,
                    ..opts
                };
                let (times, s, _) = time_runs(
                    || tables.msm(0, GpuScalars::Host(&pinned), &opts),
                    n,
                    &opts,
                    a.iterations,
                    want,
                )?;
                let detail = format!(
                    "window {} over tables, {} digits in one window of buckets; {} accumulation ({} affine rounds); \
                     device: upload {:.2} ({} chunks), classify {:.2}, sort {:.2}, accumulate {:.2}, reduce {:.2}, \
                     ones {:.2}, total {:.2}",
                    s.window, s.digits, s.accumulation.name(), s.affine_rounds, s.ms_upload, s.upload_chunks, s.ms_classify,
                    s.ms_sort, s.ms_accumulate, s.ms_reduce, s.ms_ones, s.ms_total
                );
                report_row(&mut report, lg, kind, " tables", times, detail);
            }
            if let Some(chunk) = a.streamed_chunk {
                let want = want.or(agreed.map(|(_, p)| p));
                let streamed = StreamedBases::<G1Affine>::new(chunk, &MsmScratch::new()?)?;
                let (times, s, _) = time_runs(
                    || streamed.msm(&all_bases, 0, GpuScalars::Host(&pinned), &opts),
                    n,
                    &opts,
                    a.iterations,
                    want,
                )?;
                let detail = format!(
                    "{} chunks of at most {chunk} points from host memory, their uploads {:.2} ms (all but the first \
                     beside the previous chunk's MSM); window {} (first chunk); device total {:.2} ms",
                    s.bases_chunks, s.ms_bases_upload, s.window, s.ms_total
                );
                report_row(&mut report, lg, kind, " streamed", times, detail);
            }
        }
    }
    if let Some(path) = &a.tune {
        let mut text = String::from(
            "# Window (bits per signed digit) by ceil(log2(scalars that reach Pippenger)), measured on the lent NVIDIA H200.\n\
             # Written by `cuzk bench msm --tune` (`cargo xtask tune msm`); read by msm_cuda::gpu::window_table().\n\
             # Sizes not listed fall back to the rule window = log2 - 4 (at least 1, at most 24).\n",
        );
        text.push_str(&format!(
            "# {}, {}, random scalars, median of {} runs per window.\n",
            report_device_line(),
            utc_date(std::time::SystemTime::now()),
            a.iterations
        ));
        for (lg, w, ms) in &tuned {
            text.push_str(&format!("{lg} {w}  # {ms:.3} ms\n"));
        }
        std::fs::write(path, text).with_context(|| format!("writing {}", path.display()))?;
        report.text("tuning table", format!("written to {}", path.display()));
    }
    for &lg in &a.g2_sizes {
        g2_compare(&mut report, lg, a.iterations)?;
    }
    let gib = |b: usize| b as f64 / (1u64 << 30) as f64;
    report.text(
        "device memory",
        format!(
            "bases {:.2} GiB, MSM scratch {:.2} GiB",
            gib(resident.device_bytes()?),
            gib(resident.scratch().device_bytes()?)
        ),
    );
    report.print(a.json);
    Ok(())
}

fn report_device_line() -> String {
    gpu::device().unwrap_or_default()
}

/// G2 on the GPU against blst on all CPU cores, same random inputs.
fn g2_compare(report: &mut Report, lg: u32, iterations: u32) -> Result<()> {
    if lg > 24 {
        bail!("--g2-sizes: 2^{lg} is above the 2^24 this comparison supports");
    }
    let n = 1usize << lg;
    let bases = test_utils::random_g2_fast(n, &mut rand::thread_rng());
    let scalars = random_scalars(n, 7);
    let resident = DeviceBases::upload(&bases)?;
    let opts = MsmOptions::default();
    let (first, _) = resident.msm(0, GpuScalars::Host(&scalars), &opts)?;
    let mut gpu_ms = Vec::new();
    let mut cpu_ms = Vec::new();
    let mut cpu = first;
    for _ in 0..iterations.max(1) {
        let t = Instant::now();
        resident.msm(0, GpuScalars::Host(&scalars), &opts)?;
        gpu_ms.push(t.elapsed().as_secs_f64() * 1e3);
        let t = Instant::now();
        cpu = msm_cuda::msm_g2(&bases, &scalars)?;
        cpu_ms.push(t.elapsed().as_secs_f64() * 1e3);
    }
    if cpu != first {
        bail!("GPU G2 MSM disagrees with the CPU at 2^{lg}");
    }
    let (g, gl, gh) = median(gpu_ms);
    let (c, cl, ch) = median(cpu_ms);
    report.text(
        &format!("G2 MSM 2^{lg} random"),
        format!("GPU {g:.2} ms (min {gl:.2}, max {gh:.2}); CPU blst {c:.2} ms (min {cl:.2}, max {ch:.2}, {} threads); interleaved, median of {iterations}", rayon::current_num_threads()),
    );
    Ok(())
}

/// `YYYY-MM-DD` (UTC) of a time, for the tuning table's header (the civil-from-days conversion of the proleptic
/// Gregorian calendar).
fn utc_date(t: std::time::SystemTime) -> String {
    let secs = t
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    let z = (secs / 86_400) as i64 + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1_460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!("{year:04}-{month:02}-{day:02}")
}

#[cfg(test)]
mod tests {
    use super::utc_date;
    use std::time::{Duration, UNIX_EPOCH};

    #[test]
    fn utc_dates_of_known_instants() {
        let at = |s: u64| utc_date(UNIX_EPOCH + Duration::from_secs(s));
        assert_eq!(at(0), "1970-01-01");
        assert_eq!(at(951_782_400), "2000-02-29");
        assert_eq!(at(1_798_761_599), "2026-12-31");
        assert_eq!(at(1_798_675_200 - 1), "2026-12-30");
    }
}
