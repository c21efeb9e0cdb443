//! `cuzk`: a Groth16 prover for BLS12-381, compatible with bellperson and Filecoin.

mod bench;
mod bench_msm;
mod bench_prove;
mod bench_synth;
mod cache;
#[cfg(feature = "porep")]
mod client;
#[cfg(feature = "porep")]
mod daemon;
mod engine_defaults;
mod inputs;
mod memmon;
#[cfg(feature = "porep")]
mod porep_cmd;
mod report;

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};
use circuits::Sha256Circuit;
use clap::{Args, Parser, Subcommand, ValueEnum};
use groth16_pipeline::{
    prepare_verifying_key, prove_with, verify_proof, HBackend, Proof, ProverOptions,
};
use r1cs_synth::{synthesize, CompiledShape, SynthesisOptions};
use rand::rngs::OsRng;
use srs_loader::{read_params, read_verifying_key, ReadOptions};

use report::{Progress, Report};

/// Default SHA-256 size: two 64-byte blocks, about 2^16 constraints, a real proof in well under a minute on two cores.
const DEFAULT_BLOCKS: usize = 2;

#[derive(Parser, Debug)]
#[command(
    name = "cuzk",
    version,
    about = "A Groth16 prover over BLS12-381, compatible with bellperson and Filecoin",
    long_about = "A Groth16 prover over BLS12-381, compatible with bellperson and Filecoin.\n\n\
Parameters are bellperson's .params files; proofs are bellperson's 192-byte encoding.\n\
Without a GPU every stage runs on the CPU.\n\n\
Quick start: `cuzk prove` proves SHA-256 over two blocks of random data, generating test parameters on first use, and verifies the proof."
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Generate Groth16 parameters for a built-in circuit (a test setup: its secrets are random and discarded, not a ceremony).
    Setup(SetupArgs),
    /// Synthesize a built-in circuit, prove it, verify the proof, and write the proof and public inputs.
    Prove(ProveArgs),
    /// Verify a proof against a parameter file's verifying key and public inputs.
    Verify(VerifyArgs),
    /// Measure: GPU kernels beside the card's ceilings.
    #[command(subcommand)]
    Bench(bench::BenchCommand),
    /// Filecoin PoRep Commit-2: prove a sealed sector's C1 output, verify with filecoin-proofs.
    #[cfg(feature = "porep")]
    #[command(subcommand)]
    Porep(porep_cmd::PorepCommand),
    /// Serve proofs over gRPC (the cuzk.v1.ProvingEngine protocol Curio drives), journaling every job so none is
    /// lost.
    #[cfg(feature = "porep")]
    Daemon(Box<daemon::DaemonArgs>),
    /// Call a cuzk daemon: submit, await, prove, cancel, status, metrics, preload, evict.
    #[cfg(feature = "porep")]
    Client(client::ClientArgs),
    /// Log another process's resident memory (`timestamp_ms,rss_kb,rss_gib` CSV, one flushed row per sample) until it exits.
    Memmon(memmon::MemmonArgs),
}

#[derive(ValueEnum, Clone, Copy, Debug)]
enum CircuitKind {
    /// SHA-256 over a preimage that fills exactly --blocks 64-byte blocks; the digest is the public input.
    Sha256,
}

/// Where a, b and c are computed when synthesis is compiled.
#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum AbcAt {
    /// By the prover when H and the MSMs both run on the GPU, else in synthesis.
    Auto,
    /// In synthesis: sparse products on the host after the witness.
    Synthesis,
    /// By the prover, from the witness: on the GPU (the shape's matrices uploaded once), so a partition's host
    /// memory is its witness alone and the products leave the CPU; on the host otherwise.
    Prover,
}

impl AbcAt {
    /// Whether the prover computes a, b and c, for a prover with `opts` on a domain of `domain_size` points.
    pub(crate) fn by_prover(
        self,
        opts: &groth16_pipeline::ProverOptions,
        domain_size: usize,
    ) -> bool {
        match self {
            AbcAt::Auto => opts.all_on_gpu(domain_size),
            AbcAt::Synthesis => false,
            AbcAt::Prover => true,
        }
    }
}

#[derive(ValueEnum, Clone, Copy, Debug)]
pub(crate) enum SynthesisPath {
    /// Witness-only synthesis against a cached compiled shape; a, b, c from sparse products.
    Compiled,
    /// Every constraint evaluated while the circuit runs.
    Direct,
}

#[derive(Args, Debug)]
struct CircuitArgs {
    /// Built-in circuit.
    #[arg(long, value_enum, default_value = "sha256")]
    circuit: CircuitKind,
    /// SHA-256 compression blocks (about 27,000 constraints each).
    #[arg(long, default_value_t = DEFAULT_BLOCKS, value_parser = parse_blocks)]
    blocks: usize,
}

#[derive(Args, Debug)]
struct ParamsArgs {
    /// Parameter file to use instead of the cache.
    #[arg(long, value_name = "FILE")]
    params: Option<PathBuf>,
    /// Where generated parameters are kept.
    #[arg(long, env = "CUZK_PARAM_CACHE", value_name = "DIR")]
    cache_dir: Option<PathBuf>,
}

#[derive(Args, Debug)]
struct SetupArgs {
    #[command(flatten)]
    circuit: CircuitArgs,
    #[command(flatten)]
    params: ParamsArgs,
    /// Regenerate even if the file exists.
    #[arg(long)]
    force: bool,
    /// Print a JSON summary on stdout instead of text.
    #[arg(long)]
    json: bool,
}

#[derive(Args, Debug)]
struct ProveArgs {
    #[command(flatten)]
    circuit: CircuitArgs,
    #[command(flatten)]
    params: ParamsArgs,
    /// Preimage file (exactly 64·blocks − 9 bytes); random when absent.
    #[arg(long, value_name = "FILE")]
    preimage: Option<PathBuf>,
    /// Where to write the proof (192 bytes, bellperson's encoding).
    #[arg(long, value_name = "FILE", default_value = "proof.bin")]
    proof: PathBuf,
    /// Where to write the public inputs (JSON array of 32-byte little-endian hex scalars).
    #[arg(long, value_name = "FILE", default_value = "inputs.json")]
    inputs: PathBuf,
    /// Skip the satisfiability check (a*b = c for every constraint; a failure is named by index and namespace path).
    #[arg(long)]
    no_check: bool,
    /// Synthesis path: compiled (record the circuit's R1CS once into the cache, then synthesize only the witness)
    /// or direct (evaluate every constraint as bellperson does).
    #[arg(long, value_enum, default_value = "compiled")]
    synthesis: SynthesisPath,
    /// Skip the subgroup check when reading parameters (only for files you trust).
    #[arg(long)]
    trust_params: bool,
    /// Where the H polynomial runs: auto (GPU if usable), cpu, gpu, or check (both, compared; a debug switch).
    #[arg(long, env = "CUZK_H_BACKEND", default_value = "auto")]
    h_backend: HBackend,
    /// Where the MSMs run: auto (GPU if usable and the domain is at least 2^18), cpu, gpu (parameters uploaded once
    /// per process and kept on the device), or check (both, compared; a debug switch).
    #[arg(long, env = "CUZK_MSM_BACKEND", default_value = "auto")]
    msm_backend: HBackend,
    /// Log this process's resident memory to FILE while it works (`timestamp_ms,rss_kb,rss_gib`, every
    /// --memlog-interval-ms).
    #[arg(long, value_name = "FILE")]
    memlog: Option<PathBuf>,
    /// Milliseconds between --memlog samples.
    #[arg(long, default_value_t = 1000, value_parser = clap::value_parser!(u64).range(10..=3_600_000))]
    memlog_interval_ms: u64,
    /// Print a JSON summary on stdout instead of text.
    #[arg(long)]
    json: bool,
}

#[derive(Args, Debug)]
struct VerifyArgs {
    /// Parameter file whose verifying key to use (only the key at its start is read).
    #[arg(long, value_name = "FILE")]
    params: PathBuf,
    /// Proof file: 192 bytes per proof; several concatenated proofs share the inputs file's entries in order.
    #[arg(long, value_name = "FILE")]
    proof: PathBuf,
    /// Public inputs: JSON array of 32-byte little-endian hex scalars (ONE excluded).
    #[arg(long, value_name = "FILE")]
    inputs: PathBuf,
    /// Print a JSON summary on stdout instead of text.
    #[arg(long)]
    json: bool,
}

fn parse_blocks(s: &str) -> std::result::Result<usize, String> {
    match s.parse::<usize>() {
        Ok(n @ 1..=100_000) => Ok(n),
        Ok(n) => Err(format!("{n} blocks is out of range 1..=100000")),
        Err(e) => Err(format!("not a block count: {e}")),
    }
}

fn main() -> ExitCode {
    // Warnings and errors unless CUZK_LOG says otherwise (a filter with no directives would show nothing, the TEST
    // parameters' warning and the engine's fallbacks among it).
    let filter = tracing_subscriber::EnvFilter::builder()
        .with_default_directive(tracing_subscriber::filter::LevelFilter::WARN.into())
        .with_env_var("CUZK_LOG")
        .from_env_lossy();
    tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        .init();
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Setup(a) => cmd_setup(a),
        Command::Prove(a) => cmd_prove(a),
        Command::Verify(a) => cmd_verify(a),
        Command::Bench(b) => bench::run(b).map(|()| ExitCode::SUCCESS),
        Command::Memmon(a) => memmon::run(a).map(|()| ExitCode::SUCCESS),
        #[cfg(feature = "porep")]
        Command::Porep(p) => porep_cmd::run(p),
        #[cfg(feature = "porep")]
        Command::Daemon(a) => daemon::run(*a).map(|()| ExitCode::SUCCESS),
        #[cfg(feature = "porep")]
        Command::Client(a) => client::run(a),
    };
    match result {
        Ok(code) => code,
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::from(2)
        }
    }
}

impl CircuitArgs {
    fn blank(&self) -> Sha256Circuit {
        match self.circuit {
            CircuitKind::Sha256 => Sha256Circuit::blank(self.blocks),
        }
    }

    /// Generates this circuit's test parameters into `path` (see [`generate`]).
    fn generate(&self, path: &Path, progress: &Progress) -> Result<Duration> {
        generate(&self.blank().shape_id(), self.blank(), path, progress)
    }
}

/// The parameter file to use: the one given, or the cache's file for this circuit.
fn params_path(p: &ParamsArgs, circuit: &CircuitArgs) -> Result<(PathBuf, bool)> {
    match &p.params {
        Some(path) => Ok((path.clone(), false)),
        None => {
            let dir = cache::dir(p.cache_dir.as_deref())?;
            Ok((
                dir.join(format!("{}.params", circuit.blank().shape_id())),
                true,
            ))
        }
    }
}

/// Generates test parameters for `blank` (random secrets, not a ceremony), writes them atomically to `path`, and
/// records their digest so later loads may skip the subgroup check.
pub(crate) fn generate<C: bellpepper_core::Circuit<blstrs::Scalar>>(
    shape_id: &str,
    blank: C,
    path: &Path,
    progress: &Progress,
) -> Result<Duration> {
    let t = Instant::now();
    let spinner = progress.spinner(format!(
        "generating test parameters for {shape_id} (random secrets, not a ceremony)"
    ));
    let params = srs_loader::setup(blank, &mut OsRng).context("parameter generation failed")?;
    params
        .write_file(path)
        .with_context(|| format!("writing {}", path.display()))?;
    cache::record_generated(path)?;
    spinner.finish();
    Ok(t.elapsed())
}

fn cmd_setup(a: SetupArgs) -> Result<ExitCode> {
    let (path, _) = params_path(&a.params, &a.circuit)?;
    let progress = Progress::new(a.json);
    let mut report = Report::new("setup");
    report.text("circuit", a.circuit.blank().shape_id());
    report.text("params", path.display().to_string());
    if path.exists() && !a.force {
        report.text("status", "exists (use --force to regenerate)".into());
    } else {
        let took = a.circuit.generate(&path, &progress)?;
        report.time("setup", took);
        report.text("status", "generated".into());
    }
    report.print(a.json);
    Ok(ExitCode::SUCCESS)
}

fn cmd_prove(a: ProveArgs) -> Result<ExitCode> {
    let total = Instant::now();
    let _memlog = a
        .memlog
        .as_deref()
        .map(|p| memmon::SelfLog::start(p, Duration::from_millis(a.memlog_interval_ms)))
        .transpose()?;
    let progress = Progress::new(a.json);
    let mut report = Report::new("prove");
    let (path, from_cache) = params_path(&a.params, &a.circuit)?;
    report.text("circuit", a.circuit.blank().shape_id());
    report.text("params", path.display().to_string());
    if !path.exists() {
        if !from_cache {
            bail!(
                "parameter file {} does not exist; create it with `cuzk setup --params {}`",
                path.display(),
                path.display()
            );
        }
        let took = a.circuit.generate(&path, &progress)?;
        report.time("setup (first use)", took);
    }

    let circuit = match &a.preimage {
        Some(file) => {
            let bytes = std::fs::read(file)
                .with_context(|| format!("reading preimage {}", file.display()))?;
            Sha256Circuit::new(a.circuit.blocks, bytes)
                .map_err(anyhow::Error::msg)
                .with_context(|| format!("preimage {}", file.display()))?
        }
        None => Sha256Circuit::random(a.circuit.blocks, &mut OsRng),
    };
    let public_inputs = circuit.public_inputs().expect("circuit has a preimage");

    let check = !a.no_check;
    let synthesis_started = Instant::now();
    let pa = match a.synthesis {
        SynthesisPath::Direct => {
            let spinner = progress.spinner("synthesizing".into());
            let t = Instant::now();
            let pa = synthesize(circuit, &SynthesisOptions { check, hint: None })
                .context("synthesis failed")?;
            report.time("synthesis (direct)", t.elapsed());
            spinner.finish();
            pa
        }
        SynthesisPath::Compiled => {
            let shape_path = cache::dir(a.params.cache_dir.as_deref())?
                .join(format!("{}.shape", a.circuit.blank().shape_id()));
            let spinner =
                progress.spinner(format!("loading compiled shape {}", shape_path.display()));
            let t = Instant::now();
            let (shape, rebuilt) =
                CompiledShape::load_or_compile(&shape_path, &a.circuit.blank().shape_id(), || {
                    a.circuit.blank()
                })
                .context("compiling the circuit's shape")?;
            report.time("shape load", t.elapsed());
            report.text(
                "shape",
                match rebuilt {
                    None => format!("{} (loaded)", shape_path.display()),
                    Some(why) => format!("{} (compiled: {why})", shape_path.display()),
                },
            );
            spinner.finish();
            let spinner = progress.spinner("synthesizing the witness".into());
            let t = Instant::now();
            let pa = shape
                .synthesize(circuit.clone())
                .context("synthesis failed")?;
            report.time("synthesis (compiled)", t.elapsed());
            spinner.finish();
            if check {
                let t = Instant::now();
                if pa.first_unsatisfied().is_some() {
                    // Name the constraint: the direct path with the checker knows its namespace path.
                    synthesize(
                        circuit,
                        &SynthesisOptions {
                            check: true,
                            hint: None,
                        },
                    )
                    .context("synthesis failed")?;
                    bail!("constraint check failed on the compiled path but not the direct one: please report this bug");
                }
                report.time("constraint check", t.elapsed());
            }
            pa
        }
    };
    report.count("constraints", pa.num_constraints());
    report.count("aux variables", pa.num_aux());
    report.count("public inputs", pa.num_inputs() - 1);

    let spinner = progress.spinner(format!("loading {}", path.display()));
    let t = Instant::now();
    // Parameters generated here whose recorded digest still matches need no subgroup check (every point was
    // computed here); any other file gets every check unless the user vouches for it.
    let generated_here = cache::is_unchanged_generated(&path);
    report.text(
        "params check",
        if a.trust_params {
            "on curve (--trust-params)"
        } else if generated_here {
            "on curve; generated here, digest unchanged"
        } else {
            "on curve and in subgroup"
        }
        .into(),
    );
    let params = read_params(
        &path,
        ReadOptions {
            check_subgroup: !a.trust_params && !generated_here,
        },
    )
    .with_context(|| {
        if from_cache {
            format!(
                "reading cached parameters {} (damaged? `cuzk setup --force --blocks {}` regenerates them)",
                path.display(),
                a.circuit.blocks
            )
        } else {
            format!("reading parameters {}", path.display())
        }
    })?;
    report.time("load params", t.elapsed());
    spinner.finish();

    let synthesis_time = synthesis_started.elapsed();

    let spinner = progress.spinner("proving".into());
    let opts = ProverOptions {
        h_backend: a.h_backend,
        msm_backend: a.msm_backend,
    };
    let (proof, timings) = prove_with(&params, vec![pa], &mut OsRng, &opts)
        .context("proving failed")?
        .pop()
        .expect("one proof per circuit");
    spinner.finish();
    report.backends(&timings);
    report.time("H polynomial", timings.h_poly);
    report.time("MSM H", timings.msm_h);
    report.time("MSM L", timings.msm_l);
    report.time("MSM A", timings.msm_a);
    report.time("MSM B_G1", timings.msm_b_g1);
    report.time("MSM B_G2", timings.msm_b_g2);
    report.time("assembly", timings.assembly);

    let t = Instant::now();
    let pvk = prepare_verifying_key(&params.vk);
    let ok = verify_proof(&pvk, &proof, &public_inputs)?;
    let verify_time = t.elapsed();
    report.time("verify", verify_time);
    // The partition and synthesis first, then the prover's phases, then verification.
    timing_line(
        [
            ("partition", "0".to_string()),
            (
                "synthesis_ms",
                format!("{:.3}", synthesis_time.as_secs_f64() * 1e3),
            ),
        ]
        .into_iter()
        .chain(timings.key_values())
        .chain([(
            "verify_ms",
            format!("{:.3}", verify_time.as_secs_f64() * 1e3),
        )]),
    );
    if !ok {
        bail!("the proof does not verify; it was not written (this is a bug: please report it)");
    }
    inputs::write_atomic(&a.proof, &proof.to_bytes())?;
    inputs::write_atomic(&a.inputs, inputs::to_json(&public_inputs).as_bytes())?;
    report.text("proof", a.proof.display().to_string());
    report.text("inputs", a.inputs.display().to_string());
    report.text("verified", "yes".into());
    report.time("total", total.elapsed());
    if let Some(mib) = report::peak_rss_mib() {
        report.mib("peak RSS", mib);
    }
    report.print(a.json);
    Ok(ExitCode::SUCCESS)
}

/// One `CUZK_TIMING key=value ...` line on stderr, written whole (stderr is unbuffered), for scripts and log
/// collectors.
pub(crate) fn timing_line(pairs: impl IntoIterator<Item = (&'static str, String)>) {
    let mut line = String::from("CUZK_TIMING");
    for (k, v) in pairs {
        line.push_str(&format!(" {k}={v}"));
    }
    eprintln!("{line}");
}

fn cmd_verify(a: VerifyArgs) -> Result<ExitCode> {
    let t = Instant::now();
    let vk =
        read_verifying_key(&a.params).with_context(|| format!("reading {}", a.params.display()))?;
    let bytes =
        std::fs::read(&a.proof).with_context(|| format!("reading proof {}", a.proof.display()))?;
    let proofs =
        Proof::many_from_bytes(&bytes).with_context(|| format!("proof {}", a.proof.display()))?;
    let text = std::fs::read_to_string(&a.inputs)
        .with_context(|| format!("reading inputs {}", a.inputs.display()))?;
    let inputs =
        inputs::from_json(&text).with_context(|| format!("inputs {}", a.inputs.display()))?;
    let pvk = prepare_verifying_key(&vk);
    let per_proof = pvk.num_public_inputs();
    if inputs.len() != per_proof * proofs.len() {
        bail!(
            "{} has {} public inputs, but {} proof(s) against this key need {} each ({} in all)",
            a.inputs.display(),
            inputs.len(),
            proofs.len(),
            per_proof,
            per_proof * proofs.len()
        );
    }
    let mut valid = true;
    for (i, proof) in proofs.iter().enumerate() {
        let chunk = &inputs[i * per_proof..(i + 1) * per_proof];
        valid &= verify_proof(&pvk, proof, chunk)?;
    }
    let mut report = Report::new("verify");
    report.count("proofs", proofs.len());
    let code = report::verdict(&mut report, valid);
    report.time("verify", t.elapsed());
    report.print(a.json);
    Ok(code)
}
