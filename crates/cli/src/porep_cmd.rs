//! `cuzk porep ...`: Filecoin PoRep Commit-2 from a C1 output.

use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};
use clap::{Args, Subcommand};
use groth16_pipeline::{Engine, EngineOptions, HBackend, PartitionOutcome, ProverOptions};
use porep::{params, sector_size_text, C1Output, RegisteredSealProof, Sector};
use rand::rngs::OsRng;

use crate::report::{Progress, Report};

const AFTER_HELP: &str = "\
Parameters are read from the directory FIL_PROOFS_PARAMETER_CACHE names (default /var/tmp/filecoin-proof-parameters), \
by filecoin-proofs' v28 file names. For the test sector sizes (2KiB, 8MiB, 512MiB) `--generate-params` makes test \
parameters there when they are missing: random secrets, marked by a `.cuzk-test` file beside them, never accepted by \
the chain.

Try it without lotus:
  cuzk porep seal --sector-size 2KiB --miner-id 1000 --sector-number 1 --c1 c1.json
  cuzk porep prove --c1 c1.json --miner-id 1000 --sector-number 1 --generate-params --proof c2.proof
  cuzk porep verify --c1 c1.json --miner-id 1000 --sector-number 1 --proof c2.proof";

#[derive(Subcommand, Debug)]
#[command(after_help = AFTER_HELP)]
pub enum PorepCommand {
    /// Prove a sector's Commit-2 from its C1 output; the proof is checked with filecoin-proofs before it is written.
    Prove(ProveArgs),
    /// Verify a Commit-2 proof with filecoin-proofs' verify_seal (the chain's check). Exit 0 valid, 1 invalid.
    Verify(VerifyArgs),
    /// Show (or generate, for test sizes) a sector size's parameter files.
    Params(ParamsArgs),
    /// Seal a test sector of random data with filecoin-proofs and write its C1 output (for trying cuzk out).
    Seal(SealArgs),
    /// Circuit statistics of each partition: constraints, non-zeros, densities, aux values 0/1/other.
    Stats(StatsArgs),
}

#[derive(Args, Debug)]
pub struct SectorArgs {
    /// The C1 output: filecoin-proofs-api's SealCommitPhase1Output as JSON (as lotus and curio write it), or
    /// lotus-bench's commit-2 input wrapping it.
    #[arg(long, value_name = "FILE")]
    c1: PathBuf,
    /// The miner actor id (the number of its f0 address).
    #[arg(long)]
    miner_id: u64,
    /// The sector number (default: the one a lotus-bench file records).
    #[arg(long)]
    sector_number: Option<u64>,
}

impl SectorArgs {
    fn load(&self) -> Result<(C1Output, Sector)> {
        let c1 = C1Output::read(&self.c1)?;
        let Some(sector_number) = self.sector_number.or(c1.sector_number_hint) else {
            bail!(
                "{} does not record its sector number: pass --sector-number",
                self.c1.display()
            )
        };
        Ok((
            c1,
            Sector {
                miner_id: self.miner_id,
                sector_number,
            },
        ))
    }
}

#[derive(Args, Debug)]
pub struct ProveArgs {
    #[command(flatten)]
    sector: SectorArgs,
    /// Where to write the proof: 192 bytes per partition, concatenated (filecoin-proofs' layout).
    #[arg(long, value_name = "FILE", default_value = "c2.proof")]
    proof: PathBuf,
    /// Refuse a C1 output of any other sector size (2KiB, 8MiB, 512MiB, 32GiB, 64GiB, or bytes).
    #[arg(long, value_parser = parse_sector_size)]
    sector_size: Option<u64>,
    /// Generate test parameters if the cache has none (test sector sizes only; never the ceremony's).
    #[arg(long)]
    generate_params: bool,
    /// Skip the subgroup check of every parameter point (on-curve checks stay): only for files you trust, such as
    /// the published ones after `paramfetch` checked their digests. Saves minutes at 32 GiB.
    #[arg(long)]
    trust_params: bool,
    /// Where the H polynomial runs: auto (GPU if usable), cpu, gpu, or check (both, compared).
    #[arg(long, env = "CUZK_H_BACKEND", default_value = "auto")]
    h_backend: HBackend,
    /// Where the MSMs run: auto (GPU if usable), cpu, gpu, or check (both, compared).
    #[arg(long, env = "CUZK_MSM_BACKEND", default_value = "auto")]
    msm_backend: HBackend,
    /// Partitions alive at once (synthesizing, queued or proving). Each holds its a, b, c and witness in memory.
    #[arg(long, default_value_t = 2, value_parser = clap::value_parser!(u64).range(1..=64))]
    max_in_flight: u64,
    /// Partitions synthesized concurrently.
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u64).range(1..=64))]
    synthesis_workers: u64,
    /// Log this process's resident memory to FILE (`timestamp_ms,rss_kb,rss_gib`, every second).
    #[arg(long, value_name = "FILE")]
    memlog: Option<PathBuf>,
    /// Print a JSON summary on stdout instead of text.
    #[arg(long)]
    json: bool,
}

#[derive(Args, Debug)]
pub struct VerifyArgs {
    #[command(flatten)]
    sector: SectorArgs,
    /// The proof to check.
    #[arg(long, value_name = "FILE")]
    proof: PathBuf,
    /// Print a JSON summary on stdout instead of text.
    #[arg(long)]
    json: bool,
}

#[derive(Args, Debug)]
pub struct ParamsArgs {
    /// Sector size: 2KiB, 8MiB, 512MiB, 32GiB, 64GiB (or bytes).
    #[arg(long, value_parser = parse_sector_size)]
    sector_size: u64,
    /// Generate test parameters if missing (test sizes only).
    #[arg(long)]
    generate: bool,
    /// Print a JSON summary on stdout instead of text.
    #[arg(long)]
    json: bool,
}

#[derive(Args, Debug)]
pub struct SealArgs {
    /// Sector size (a test size: 2KiB, 8MiB or 512MiB).
    #[arg(long, value_parser = parse_sector_size, default_value = "2KiB")]
    sector_size: u64,
    /// The miner actor id to seal for.
    #[arg(long, default_value_t = 1000)]
    miner_id: u64,
    /// The sector number.
    #[arg(long, default_value_t = 1)]
    sector_number: u64,
    /// Where to write the C1 output (JSON).
    #[arg(long, value_name = "FILE", default_value = "c1.json")]
    c1: PathBuf,
    /// Where the staged and sealed files go (default: a temporary directory, removed afterwards).
    #[arg(long, value_name = "DIR")]
    work_dir: Option<PathBuf>,
}

#[derive(Args, Debug)]
pub struct StatsArgs {
    /// The C1 output.
    #[arg(long, value_name = "FILE")]
    c1: PathBuf,
    /// Print JSON lines (one per partition) instead of a table.
    #[arg(long)]
    json: bool,
}

/// Parses `2KiB`, `8MiB`, `512MiB`, `32GiB`, `64GiB` (case-insensitive, `KB`/`K` accepted) or a byte count.
pub fn parse_sector_size(s: &str) -> std::result::Result<u64, String> {
    let t = s.trim().to_ascii_lowercase();
    let digits = t.trim_end_matches(|c: char| c.is_ascii_alphabetic());
    let unit = &t[digits.len()..];
    let n: u64 = digits
        .trim()
        .parse()
        .map_err(|_| format!("{s:?} is not a sector size (2KiB, 8MiB, 512MiB, 32GiB, 64GiB)"))?;
    let shift = match unit {
        "" | "b" => 0,
        "k" | "kb" | "kib" => 10,
        "m" | "mb" | "mib" => 20,
        "g" | "gb" | "gib" => 30,
        _ => return Err(format!("{s:?}: unknown unit {unit:?} (KiB, MiB, GiB)")),
    };
    let bytes = n
        .checked_mul(1 << shift)
        .ok_or_else(|| format!("{s:?} is too large"))?;
    if registered_proof(bytes).is_none() {
        return Err(format!(
            "{} is not a Filecoin sector size (2KiB, 8MiB, 512MiB, 32GiB, 64GiB)",
            sector_size_text(bytes)
        ));
    }
    Ok(bytes)
}

/// The current (V1_1) interactive seal proof type of a sector size.
fn registered_proof(bytes: u64) -> Option<RegisteredSealProof> {
    use RegisteredSealProof::*;
    Some(match bytes {
        0x800 => StackedDrg2KiBV1_1,
        0x80_0000 => StackedDrg8MiBV1_1,
        0x2000_0000 => StackedDrg512MiBV1_1,
        0x8_0000_0000 => StackedDrg32GiBV1_1,
        0x10_0000_0000 => StackedDrg64GiBV1_1,
        _ => return None,
    })
}

pub fn run(cmd: PorepCommand) -> Result<ExitCode> {
    match cmd {
        PorepCommand::Prove(a) => prove(a),
        PorepCommand::Verify(a) => verify(a),
        PorepCommand::Params(a) => show_params(a),
        PorepCommand::Seal(a) => seal(a),
        PorepCommand::Stats(a) => stats(a),
    }
}

fn prove(a: ProveArgs) -> Result<ExitCode> {
    let total = Instant::now();
    let _memlog = a
        .memlog
        .as_deref()
        .map(|p| crate::memmon::SelfLog::start(p, Duration::from_secs(1)))
        .transpose()?;
    let progress = Progress::new(a.json);
    let mut report = Report::new("porep prove");
    let (c1, sector) = a.sector.load()?;
    let rp = c1.registered_proof();
    report.text("proof type", format!("{rp:?}"));
    report.text("sector size", sector_size_text(c1.sector_size()));
    report.count("partitions", c1.partitions());

    let spinner = progress.spinner("checking the C1 output against the sector".into());
    let t = Instant::now();
    c1.check(&sector, a.sector_size)?;
    report.time("C1 check (vanilla proofs verified)", t.elapsed());
    spinner.finish();

    let spinner = progress.spinner(format!(
        "parameters for {} sectors",
        sector_size_text(c1.sector_size())
    ));
    let ensured = params::ensure(rp, a.generate_params, &mut OsRng)?;
    if let Some(took) = ensured.generated {
        report.time("parameters generated (TEST, not the ceremony's)", took);
    }
    report.text(
        "params",
        format!(
            "{}{}",
            ensured.files.params.display(),
            if ensured.files.is_test() {
                " (TEST parameters: the chain rejects these proofs)"
            } else {
                ""
            }
        ),
    );
    let t = Instant::now();
    let parameters = Arc::new(params::load(
        &ensured.files,
        !a.trust_params && !ensured.files.is_test(),
    )?);
    report.time("load params", t.elapsed());
    spinner.finish();

    let t = Instant::now();
    let engine = Engine::new(
        parameters,
        EngineOptions {
            prover: ProverOptions {
                h_backend: a.h_backend,
                msm_backend: a.msm_backend,
            },
            max_in_flight: a.max_in_flight as usize,
            synthesis_workers: a.synthesis_workers as usize,
            ..EngineOptions::default()
        },
    )
    .context("starting the engine")?;
    report.time("engine start", t.elapsed());

    let spinner = progress.spinner(format!("proving {} partitions", c1.partitions()));
    let on_done = |o: &PartitionOutcome| crate::timing_line(o.report.key_values());
    let proof = porep::prove(&c1, &engine, &mut OsRng, on_done)?;
    spinner.finish();
    if let Some(first) = proof.partitions.first() {
        report.text("H backend", first.report.timings.h_backend.into());
        report.text("MSM backend", first.report.timings.msm_backend.into());
    }
    report.time("prove (all partitions)", proof.summary.wall);

    let t = Instant::now();
    if !porep::verify(&c1, &sector, &proof.bytes)? {
        bail!("filecoin-proofs rejects the proof; it was not written (this is a bug: please report it)");
    }
    report.time("verify (filecoin-proofs)", t.elapsed());
    crate::inputs::write_atomic(&a.proof, &proof.bytes)?;
    report.text("proof", a.proof.display().to_string());
    report.time("total", total.elapsed());
    if let Some(mib) = crate::report::peak_rss_mib() {
        report.mib("peak RSS", mib);
    }
    report.print(a.json);
    Ok(ExitCode::SUCCESS)
}

fn verify(a: VerifyArgs) -> Result<ExitCode> {
    let t = Instant::now();
    let (c1, sector) = a.sector.load()?;
    let bytes =
        std::fs::read(&a.proof).with_context(|| format!("reading proof {}", a.proof.display()))?;
    let valid = porep::verify(&c1, &sector, &bytes)?;
    let mut report = Report::new("porep verify");
    report.text("proof type", format!("{:?}", c1.registered_proof()));
    report.count("partitions", c1.partitions());
    report.text("valid", if valid { "yes" } else { "no" }.into());
    report.time("verify", t.elapsed());
    report.print(a.json);
    Ok(if valid {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

fn show_params(a: ParamsArgs) -> Result<ExitCode> {
    let rp = registered_proof(a.sector_size).expect("parser checked the size");
    let progress = Progress::new(a.json);
    let mut report = Report::new("porep params");
    let files = params::files(rp)?;
    report.text("cache", params::cache_dir().display().to_string());
    if a.generate {
        let spinner =
            progress.spinner("generating test parameters (random secrets, not a ceremony)".into());
        let ensured = params::ensure(rp, true, &mut OsRng)?;
        spinner.finish();
        if let Some(took) = ensured.generated {
            report.time("generated", took);
        }
    }
    for (what, path) in [
        ("params", &files.params),
        ("vk", &files.vk),
        ("meta", &files.meta),
    ] {
        report.text(
            what,
            format!(
                "{} ({})",
                path.display(),
                if path.exists() { "present" } else { "missing" }
            ),
        );
    }
    report.text(
        "origin",
        if files.is_test() {
            "TEST parameters generated by cuzk (not the ceremony's)"
        } else if files.params.exists() {
            "not generated by cuzk (the published files, if fetched)"
        } else {
            "-"
        }
        .into(),
    );
    report.print(a.json);
    Ok(ExitCode::SUCCESS)
}

fn seal(a: SealArgs) -> Result<ExitCode> {
    let rp = registered_proof(a.sector_size).expect("parser checked the size");
    if !params::TEST_SECTOR_SIZES.contains(&a.sector_size) {
        bail!(
            "sealing a {} sector here is not a test: use lotus or curio",
            sector_size_text(a.sector_size)
        );
    }
    let tmp;
    let work = match &a.work_dir {
        Some(d) => d.clone(),
        None => {
            tmp = tempfile::tempdir().context("creating a temporary directory")?;
            tmp.path().to_owned()
        }
    };
    let sector = Sector {
        miner_id: a.miner_id,
        sector_number: a.sector_number,
    };
    let t = Instant::now();
    let json = porep::seal::seal_sector(rp, &work, &sector, &mut OsRng)?;
    crate::inputs::write_atomic(&a.c1, &json)?;
    let mut report = Report::new("porep seal");
    report.text("proof type", format!("{rp:?}"));
    report.text("c1", a.c1.display().to_string());
    report.time("seal (pre-commit 1, 2, commit 1)", t.elapsed());
    report.print(false);
    Ok(ExitCode::SUCCESS)
}

fn stats(a: StatsArgs) -> Result<ExitCode> {
    let c1 = C1Output::read(&a.c1)?;
    for k in 0..c1.partitions() {
        let s = porep::stats::partition_stats(&c1, k)?;
        if a.json {
            println!("{}", serde_json::to_string(&s)?);
        } else {
            println!(
                "partition {k}: {} constraints, {} inputs, {} aux; non-zeros A {} B {} C {} ({:.2}/{:.2}/{:.2} per row); \
                 density A-aux {:.4} B-input {:.4} B-aux {:.4}; aux values 0 {:.4} 1 {:.4} other {:.4}",
                s.constraints,
                s.inputs,
                s.aux,
                s.a_nonzeros,
                s.b_nonzeros,
                s.c_nonzeros,
                s.a_nonzeros as f64 / s.constraints as f64,
                s.b_nonzeros as f64 / s.constraints as f64,
                s.c_nonzeros as f64 / s.constraints as f64,
                s.a_aux_density,
                s.b_input_density,
                s.b_aux_density,
                s.aux_zero,
                s.aux_one,
                s.aux_other
            );
        }
    }
    Ok(ExitCode::SUCCESS)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sector_sizes_parse_and_bad_ones_are_named() {
        assert_eq!(parse_sector_size("2KiB"), Ok(2048));
        assert_eq!(parse_sector_size("32gib"), Ok(32 << 30));
        assert_eq!(parse_sector_size("8MiB"), Ok(8 << 20));
        assert_eq!(parse_sector_size("2048"), Ok(2048));
        assert!(parse_sector_size("3KiB")
            .unwrap_err()
            .contains("not a Filecoin sector size"));
        assert!(parse_sector_size("2XB")
            .unwrap_err()
            .contains("unknown unit"));
        assert!(parse_sector_size("big").is_err());
    }
}
