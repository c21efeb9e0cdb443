//! `cuzk porep ...`: Filecoin PoRep Commit-2 from a C1 output.

use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::atomic::{AtomicUsize, Ordering};
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
    /// Refuse a C1 output of any other sector size (2KiB, 8MiB, 512MiB, 32GiB, 64GiB, or bytes).
    #[arg(long, value_parser = parse_sector_size)]
    sector_size: Option<u64>,
}

impl SectorArgs {
    fn load(&self) -> Result<(C1Output, Sector)> {
        let c1 = C1Output::read(&self.c1)?;
        if let Some(size) = self.sector_size.filter(|&s| s != c1.sector_size()) {
            bail!(
                "{} is a {} sector's C1 output, not {} as --sector-size says",
                self.c1.display(),
                sector_size_text(c1.sector_size()),
                sector_size_text(size)
            );
        }
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

/// Parameters, synthesis and engine settings shared by `porep prove`, `bench porep` and `daemon`.
#[derive(Args, Debug)]
pub struct EngineArgs {
    /// Generate test parameters if the cache has none (test sector sizes only; never the ceremony's).
    #[arg(long)]
    generate_params: bool,
    /// Skip the subgroup check of every parameter point (on-curve checks stay): only for files you trust, such as
    /// the published ones after `paramfetch` checked their digests. Saves minutes at 32 GiB.
    #[arg(long)]
    trust_params: bool,
    /// Synthesis path: compiled (the proof type's R1CS recorded once into cuzk's cache, then only the witness is
    /// synthesized per partition) or direct (every constraint evaluated, as bellperson does).
    #[arg(long, value_enum, default_value = "compiled")]
    synthesis: crate::SynthesisPath,
    /// Where a, b and c are computed with compiled synthesis: auto (by the prover when H and the MSMs run on the
    /// GPU, which computes them there from the witness), synthesis, or prover.
    #[arg(long, value_enum, default_value = "auto")]
    abc: crate::AbcAt,
    /// Where compiled shapes are kept (default: cuzk's parameter cache, CUZK_PARAM_CACHE).
    #[arg(long, env = "CUZK_PARAM_CACHE", value_name = "DIR")]
    cache_dir: Option<PathBuf>,
    /// Where the H polynomial runs: auto (GPU if usable), cpu, gpu, or check (both, compared).
    #[arg(long, env = "CUZK_H_BACKEND", default_value = "auto")]
    h_backend: HBackend,
    /// Where the MSMs run: auto (GPU if usable), cpu, gpu, or check (both, compared).
    #[arg(long, env = "CUZK_MSM_BACKEND", default_value = "auto")]
    msm_backend: HBackend,
    /// Partitions synthesized concurrently. Default: half the cores, 1 to 8, but with compiled synthesis (whose
    /// witness runs a challenge a thread, at once) only as many as fill the cores with challenges: 8 for 2 KiB to
    /// 512 MiB sectors (2 challenges a partition) and 2 for 32 GiB (18) on 16 cores. More add latency and memory,
    /// not throughput; `bench porep --synthesis-only --synthesis-workers W` measures the witness's throughput.
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..=64))]
    synthesis_workers: Option<u64>,
    /// Partitions alive at once: synthesizing, queued or being proved; each holds its a, b, c and witness in
    /// memory (default: synthesis workers + one per GPU lane, so each GPU proves one while the workers synthesize,
    /// but no more than the memory budget holds).
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..=64))]
    max_in_flight: Option<u64>,
    /// Host memory for partitions in flight, GiB (default: 80 % of the memory available once the parameters are
    /// loaded). Bounds the default --max-in-flight.
    #[arg(long)]
    memory_budget_gib: Option<f64>,
    #[command(flatten)]
    lanes: crate::engine_defaults::LaneArgs,
}

#[derive(Args, Debug)]
pub struct ProveArgs {
    #[command(flatten)]
    sector: SectorArgs,
    #[command(flatten)]
    engine: EngineArgs,
    /// Where to write the proof: 192 bytes per partition, concatenated (filecoin-proofs' layout).
    #[arg(long, value_name = "FILE", default_value = "c2.proof")]
    proof: PathBuf,
    /// Log this process's resident memory to FILE (`timestamp_ms,rss_kb,rss_gib`, every second).
    #[arg(long, value_name = "FILE")]
    memlog: Option<PathBuf>,
    /// Print a JSON summary on stdout instead of text.
    #[arg(long)]
    json: bool,
}

/// `cuzk bench porep`: one C1 output proved again and again in one engine run.
#[derive(Args, Debug)]
pub struct BenchArgs {
    #[command(flatten)]
    sector: SectorArgs,
    #[command(flatten)]
    engine: EngineArgs,
    /// Sector proofs (copies of the C1 output's proof) made in the run.
    #[arg(long, default_value_t = 6, value_parser = clap::value_parser!(u64).range(2..=10_000))]
    proofs: u64,
    /// Also write each partition's timings as a JSON line to FILE.
    #[arg(long, value_name = "FILE")]
    timing_json: Option<PathBuf>,
    /// Only synthesize: every partition's witness (compiled synthesis, a, b and c left out) --proofs times, with no
    /// parameters, engine or GPU. After the first, --synthesis-workers partitions at a time, as the engine's
    /// workers take them; prints the median, min and max per partition and the throughput (wall time over
    /// witnesses). `CUZK_SYNTH_PIECES=0` gives the one-circuit witness to compare with.
    #[arg(long)]
    synthesis_only: bool,
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

/// What `porep prove` and `bench porep` share: the checked C1 output and the loaded engine.
struct Started {
    c1: C1Output,
    sector: Sector,
    loaded: Loaded,
}

impl Started {
    fn synthesis(&self) -> porep::Synthesis<'_> {
        self.loaded.synthesis()
    }
}

/// A proof type's engine (its parameters resident) and, when synthesis is compiled, its compiled shape.
pub(crate) struct Loaded {
    pub engine: Engine,
    pub shape: Option<Arc<r1cs_synth::CompiledShape>>,
    pub workers: usize,
    pub max_in_flight: usize,
}

impl Loaded {
    /// Compiled synthesis leaves a, b and c to the prover when the engine was given the shape.
    pub fn synthesis(&self) -> porep::Synthesis<'_> {
        match &self.shape {
            Some(shape) if self.engine.products().is_some() => porep::Synthesis::Witness(shape),
            Some(shape) => porep::Synthesis::Compiled(shape),
            None => porep::Synthesis::Direct,
        }
    }
}

/// Reads and checks the C1 output, then loads the engine for its proof type ([`load_engine`]), reporting each step.
fn start(
    s: &SectorArgs,
    e: &EngineArgs,
    progress: &Progress,
    report: &mut Report,
) -> Result<Started> {
    let (c1, sector) = s.load()?;
    let rp = c1.registered_proof();
    report.text("proof type", format!("{rp:?}"));
    report.text("sector size", sector_size_text(c1.sector_size()));
    report.count("partitions per sector", c1.partitions());

    let spinner = progress.spinner("checking the C1 output against the sector".into());
    let t = Instant::now();
    c1.check(&sector, s.sector_size)?;
    report.time("C1 check (vanilla proofs verified)", t.elapsed());
    spinner.finish();
    let loaded = load_engine(rp, e, progress, report)?;
    Ok(Started { c1, sector, loaded })
}

impl EngineArgs {
    /// The engine options for `params`, whose partitions' witness comes in `pieces` (1: one circuit): synthesis
    /// workers (default [`crate::engine_defaults::synthesis_workers`]) and partitions in flight (default workers +
    /// one per lane, within the memory budget), reported with the memory they predict.
    pub(crate) fn options(
        &self,
        params: &srs_loader::Parameters,
        abc_by_prover: bool,
        pieces: usize,
        report: &mut Report,
    ) -> EngineOptions {
        let workers = self.synthesis_workers.map_or_else(
            || crate::engine_defaults::synthesis_workers(pieces),
            |w| w as usize,
        );
        // The parameters are resident by now, so what is available is what partitions may use.
        let budget = self
            .memory_budget_gib
            .map(|gib| (gib * (1u64 << 30) as f64) as u64)
            .or_else(crate::engine_defaults::memory_budget);
        let per_partition = Engine::partition_bytes(params, abc_by_prover);
        let on_gpu = self.prover().any_on_gpu(params.domain_size());
        let gpus = self.lanes.lanes(params, on_gpu);
        let max_in_flight = match self.max_in_flight {
            Some(m) => m as usize,
            None => crate::engine_defaults::max_in_flight(
                workers,
                gpus.len(),
                budget,
                params,
                abc_by_prover,
            ),
        };
        report.count("synthesis workers", workers);
        report.count("max in flight", max_in_flight);
        let gib = |b: u64| b as f64 / (1u64 << 30) as f64;
        report.text(
            "memory per partition",
            format!(
                "{:.2} GiB predicted ({}); {} in flight: {:.2} GiB{}",
                gib(per_partition),
                if abc_by_prover {
                    "the witness: a, b, c by the prover"
                } else {
                    "a, b, c and the witness"
                },
                max_in_flight,
                gib(per_partition * max_in_flight as u64),
                budget.map_or(String::new(), |b| format!(" of a {:.1} GiB budget", gib(b)))
            ),
        );
        EngineOptions {
            prover: self.prover(),
            max_in_flight,
            synthesis_workers: workers,
            gpus,
            ..EngineOptions::default()
        }
    }

    /// Where H and the MSMs run.
    pub(crate) fn prover(&self) -> ProverOptions {
        ProverOptions {
            h_backend: self.h_backend,
            msm_backend: self.msm_backend,
        }
    }

    /// Whether synthesis is compiled.
    pub(crate) fn compiled(&self) -> bool {
        matches!(self.synthesis, crate::SynthesisPath::Compiled)
    }

    /// The directory of compiled shapes.
    pub(crate) fn cache_dir(&self) -> Result<PathBuf> {
        crate::cache::dir(self.cache_dir.as_deref())
    }
}

/// Finds (or generates, for test sizes when allowed) and loads `rp`'s parameters, loads or compiles its shape when
/// synthesis is compiled, and starts the engine, reporting each step.
pub(crate) fn load_engine(
    rp: RegisteredSealProof,
    e: &EngineArgs,
    progress: &Progress,
    report: &mut Report,
) -> Result<Loaded> {
    let spinner = progress.spinner(format!(
        "parameters for {} sectors",
        sector_size_text(u64::from(rp.sector_size()))
    ));
    let ensured = params::ensure(rp, e.generate_params, &mut OsRng)?;
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
        !e.trust_params && !ensured.files.is_test(),
    )?);
    report.time("load params", t.elapsed());
    spinner.finish();

    let shape = if e.compiled() {
        let path = e
            .cache_dir()?
            .join(format!("porep-{}.shape", ensured.files.identifier));
        let spinner = progress.spinner(format!("compiled shape {}", path.display()));
        let t = Instant::now();
        let (shape, rebuilt) = porep::compiled_shape(rp, &path)?;
        spinner.finish();
        report.time("shape load", t.elapsed());
        report.text(
            "shape",
            match rebuilt {
                None => format!("{} (loaded)", path.display()),
                Some(why) => format!("{} (compiled: {why})", path.display()),
            },
        );
        Some(Arc::new(shape))
    } else {
        None
    };
    // Compiled synthesis computes a partition's witness in pieces, a challenge each.
    let pieces = match shape {
        Some(_) => porep::challenges_per_partition(rp)?,
        None => 1,
    };
    report.text(
        "synthesis",
        match shape {
            None => "direct".into(),
            Some(_) => format!(
                "compiled, the witness {}",
                crate::engine_defaults::witness_text(pieces)
            ),
        },
    );
    let abc_by_prover = shape.is_some() && e.abc.by_prover(&e.prover(), parameters.domain_size());
    let opts = e.options(&parameters, abc_by_prover, pieces, report);
    let (workers, max_in_flight) = (opts.synthesis_workers, opts.max_in_flight);
    let t = Instant::now();
    let mut engine = Engine::new(parameters, opts).context("starting the engine")?;
    report.time("engine start", t.elapsed());
    crate::engine_defaults::report_lanes(&engine, report);
    if let Some(shape) = &shape {
        engine = crate::bench_prove::with_abc_by_prover(engine, shape, abc_by_prover, report)?;
    }
    Ok(Loaded {
        engine,
        shape,
        workers,
        max_in_flight,
    })
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
    let st = start(&a.sector, &a.engine, &progress, &mut report)?;
    let c1 = &st.c1;

    let spinner = progress.spinner(format!("proving {} partitions", c1.partitions()));
    let on_done = |o: &PartitionOutcome| crate::timing_line(o.report.key_values());
    let proof = porep::prove(c1, &st.loaded.engine, st.synthesis(), &mut OsRng, on_done)?;
    spinner.finish();
    if let Some(first) = proof.partitions.first() {
        report.backends(&first.report.timings);
    }
    report.time("prove (all partitions)", proof.summary.wall);

    let t = Instant::now();
    if !porep::verify(c1, &st.sector, &proof.bytes)? {
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

/// `cuzk bench porep`: the engine's sustained rate on real PoRep partitions.
pub fn bench(a: BenchArgs) -> Result<()> {
    if a.synthesis_only {
        return bench_synthesis(a);
    }
    let progress = Progress::new(a.json);
    let mut report = Report::new("bench porep");
    let st = start(&a.sector, &a.engine, &progress, &mut report)?;
    report.count("sector proofs", a.proofs as usize);
    let log = crate::bench_prove::PartitionLog::create(a.timing_json.as_deref())?;
    let (outcomes, summary) = porep::prove_copies(
        &st.c1,
        &st.loaded.engine,
        st.synthesis(),
        a.proofs as usize,
        &mut OsRng,
        |o| log.log(o),
    )?;
    report.text(
        "sector proofs per hour",
        format!(
            "{:.1} ({} partitions each)",
            summary.proofs_per_hour() / st.c1.partitions() as f64,
            st.c1.partitions()
        ),
    );
    crate::bench_prove::summarize(
        &mut report,
        &outcomes,
        &summary,
        &crate::bench_prove::SummaryOptions {
            workers: st.loaded.workers,
            max_in_flight: st.loaded.max_in_flight,
            verify: true,
            partitions_per_proof: st.c1.partitions(),
            json: a.json,
        },
    )
}

/// `cuzk bench porep --synthesis-only`: the witness of each partition, timed, without parameters or an engine.
fn bench_synthesis(a: BenchArgs) -> Result<()> {
    let progress = Progress::new(a.json);
    let mut report = Report::new("bench porep --synthesis-only");
    let (c1, sector) = a.sector.load()?;
    let rp = c1.registered_proof();
    report.text("proof type", format!("{rp:?}"));
    c1.check(&sector, a.sector.sector_size)?;
    let path = a
        .engine
        .cache_dir()?
        .join(format!("porep-{}.shape", params::files(rp)?.identifier));
    let spinner = progress.spinner(format!("compiled shape {}", path.display()));
    let (shape, _) = porep::compiled_shape(rp, &path)?;
    spinner.finish();
    let pieces = porep::challenges_per_partition(rp)?;
    report.text("witness", crate::engine_defaults::witness_text(pieces));
    report.count("threads", rayon::current_num_threads());
    let partitions = porep::Partitions::new(&c1)?;
    let workers = a.engine.synthesis_workers.map_or_else(
        || crate::engine_defaults::synthesis_workers(pieces),
        |w| w as usize,
    );
    report.count("synthesis workers", workers);
    let spinner = progress.spinner(format!(
        "{} witnesses of {} partitions, {workers} at once",
        a.proofs,
        partitions.count()
    ));
    let witness = |k: usize, spare| -> Result<(r1cs_synth::ProvingAssignment, Duration)> {
        let t = Instant::now();
        let spare = partitions.synthesize_reusing(k, porep::Synthesis::Witness(&shape), spare)?;
        Ok((spare, t.elapsed()))
    };
    // The first witness of the process (the shape's pages, the vectors' first allocation, the head's size learned)
    // runs alone and is reported apart; the rest are shared out to the workers as the engine's are, each worker
    // taking the next partition when it is done with one.
    let (spare, first) = witness(0, Default::default())?;
    report.time("first witness", first);
    // Witness j is of partition j mod the count; the first has run.
    let total = a.proofs as usize * partitions.count();
    let next = AtomicUsize::new(1);
    let spares = std::sync::Mutex::new(vec![spare]);
    let t = Instant::now();
    let mut times = std::thread::scope(|scope| -> Result<Vec<Duration>> {
        let handles: Vec<_> = (0..workers)
            .map(|_| {
                scope.spawn(|| -> Result<Vec<Duration>> {
                    let mut spare = spares
                        .lock()
                        .ok()
                        .and_then(|mut s| s.pop())
                        .unwrap_or_default();
                    let mut times = Vec::new();
                    loop {
                        let j = next.fetch_add(1, Ordering::Relaxed);
                        if j >= total {
                            return Ok(times);
                        }
                        match witness(j % partitions.count(), spare) {
                            Ok((used, took)) => {
                                spare = used;
                                times.push(took);
                            }
                            Err(e) => {
                                // The other workers stop after their current witness.
                                next.store(total, Ordering::Relaxed);
                                return Err(e);
                            }
                        }
                    }
                })
            })
            .collect();
        let mut times = Vec::new();
        for h in handles {
            let worker = h
                .join()
                .map_err(|_| anyhow::anyhow!("a synthesis worker panicked"))?;
            times.extend(worker?);
        }
        Ok(times)
    })?;
    let wall = t.elapsed();
    spinner.finish();
    if !times.is_empty() {
        // Wall time over the witnesses after the first: one partition's witness every so often.
        report.time("witness throughput", wall / times.len() as u32);
    }
    report.count("constraints", shape.num_constraints());
    times.sort();
    if let (Some(min), Some(max)) = (times.first(), times.last()) {
        report.time("witness median", times[times.len() / 2]);
        report.time("witness min", *min);
        report.time("witness max", *max);
        report.count("witnesses timed", times.len());
    }
    report.print(a.json);
    Ok(())
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
    let code = crate::report::verdict(&mut report, valid);
    report.time("verify", t.elapsed());
    report.print(a.json);
    Ok(code)
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
