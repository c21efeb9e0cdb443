//! `cuzk bench prove`: the pipelined engine on the PoRep-shaped circuit family, end to end.
//!
//! Partitions of one run go through [`groth16_pipeline::Engine`]: synthesis of the next partition overlaps the proof
//! of the current one, within the in-flight bound. Each partition prints a `CUZK_TIMING` line on stderr as it
//! finishes (and a JSON line with `--timing-json`); the summary gives per-phase medians, the sustained time per
//! partition beside the slower of synthesis and proving, proofs per hour, the prover's busy fraction, and peak RSS
//! beside the predicted peak.

use std::io::Write;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};
use bellpepper_core::{Circuit, ConstraintSystem};
use blstrs::{G2Affine, Scalar};
use circuits::{PorepLikeCircuit, Sha256Circuit};
use clap::{Args, ValueEnum};
use groth16_pipeline::{
    Backend, Engine, EngineOptions, PartitionOutcome, PartitionReport, ProverOptions, RunSummary,
};
use lc_indexer::VecTerms;
use r1cs_synth::{
    synthesize, synthesize_reusing, CompiledShape, ProvingAssignment, SynthesisOptions,
};
use rand::rngs::OsRng;
use srs_loader::{Parameters, ReadOptions, VerifyingKey};

use crate::report::{median, Progress, Report};

/// Public inputs of the real PoRep partition circuit.
const POREP_INPUTS: usize = 327;

#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum ParamsKind {
    /// Real up to 2^17 constraints, fake above.
    Auto,
    /// A real (test) setup, generated once and kept in the parameter cache: proofs verify.
    Real,
    /// Random points of the right counts, made in seconds: proofs cannot verify, so the check is off.
    Fake,
}

#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum SynthPath {
    /// Witness only against a shape compiled once before the run; a, b, c by sparse products.
    Compiled,
    /// Every constraint evaluated while the circuit runs.
    Direct,
}

#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum BenchCircuit {
    /// The PoRep-shaped synthetic circuit of --constraints constraints.
    PorepLike,
    /// SHA-256 over --blocks blocks (about 27,000 constraints each): the circuit other engines publish numbers for.
    Sha256,
}

/// The benchmark's circuit, one type for either family.
#[derive(Clone, Debug)]
enum AnyCircuit {
    PorepLike(PorepLikeCircuit<VecTerms>),
    Sha256(Sha256Circuit),
}

impl Circuit<Scalar> for AnyCircuit {
    fn synthesize<CS: ConstraintSystem<Scalar>>(
        self,
        cs: &mut CS,
    ) -> std::result::Result<(), bellpepper_core::SynthesisError> {
        match self {
            AnyCircuit::PorepLike(c) => c.synthesize(cs),
            AnyCircuit::Sha256(c) => c.synthesize(cs),
        }
    }
}

impl AnyCircuit {
    fn shape_id(&self) -> String {
        match self {
            AnyCircuit::PorepLike(c) => c.shape_id(),
            AnyCircuit::Sha256(c) => c.shape_id(),
        }
    }
}

#[derive(Args, Debug)]
pub struct ProveArgs {
    /// Which circuit.
    #[arg(long, value_enum, default_value = "porep-like")]
    circuit: BenchCircuit,
    /// SHA-256 blocks per partition (sha256).
    #[arg(long, default_value_t = 8)]
    blocks: usize,
    /// SHA-256 gadget (sha256): lazy sums, or bellpepper's own (the same constraints, parameters and proofs).
    #[arg(long, value_enum, default_value = "lazy")]
    sha256_gadget: crate::bench_synth::Sha256Gadget,
    /// Constraints per partition (porep-like; rounded up to whole 200-constraint blocks). The domain is the next
    /// power of two at or above the constraints plus one per public input, so 134217728 (2^27) takes a 2^28 domain; a
    /// PoRep-sized partition (domain 2^27) is 130000000.
    #[arg(long, default_value_t = 1 << 16)]
    constraints: usize,
    /// Challenges per partition (porep-like): its blocks as that many chains that read only the inputs, as a real
    /// partition's challenges (18 at 32 GiB) read only its head; compiled synthesis then computes the witness in
    /// pieces, a challenge each, at once (`CUZK_SYNTH_PIECES=0`: as one circuit). 1 (the default) is the circuit as
    /// it has always been.
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u16).range(1..=1024))]
    challenges: u16,
    /// Partitions per proof (a PoRep C2 proof has 10).
    #[arg(long, default_value_t = 10)]
    partitions: usize,
    /// Proofs in the run (their partitions all go through the engine in one stream).
    #[arg(long, default_value_t = 1)]
    proofs: usize,
    /// Prove on the GPU (H and every MSM; an error without one).
    #[arg(long, conflicts_with = "cpu")]
    gpu: bool,
    /// Prove on the CPU only.
    #[arg(long)]
    cpu: bool,
    /// Parameters: real (a test setup, cached; proofs verify) or fake (random points; not verifiable).
    #[arg(long, value_enum, default_value = "auto")]
    params: ParamsKind,
    /// Synthesis path.
    #[arg(long, value_enum, default_value = "compiled")]
    synthesis: SynthPath,
    /// Where a, b and c are computed with the compiled path: in synthesis, or by the prover from the witness.
    #[arg(long, value_enum, default_value = "auto")]
    abc: crate::AbcAt,
    #[command(flatten)]
    lanes: crate::engine_defaults::LaneArgs,
    /// Most partitions alive at once (synthesizing, queued or proving); overrides --memory-budget-gib.
    #[arg(long)]
    max_in_flight: Option<usize>,
    /// Host memory for partitions in flight, GiB: the in-flight count is this over one partition's size (default,
    /// when neither this nor --max-in-flight is given: synthesis workers + one per GPU lane, within 80 % of the
    /// memory available once the parameters are loaded).
    #[arg(long)]
    memory_budget_gib: Option<f64>,
    /// Partitions synthesized at once. A circuit's witness is computed on one thread (about two thirds of a compiled
    /// synthesis) unless it has several --challenges, so several workers scale it; default: half the cores, 1 to 8,
    /// fewer with --challenges (as many as fill the cores with challenges), as `porep prove` (on the 16-core
    /// H200 host, ten 2^27 PoRep-like partitions: 2,144 ms a partition with 4 workers, 1,786 ms with 6, the GPU
    /// prover's pace). A batch finishes soonest with a worker per partition, within the cores and memory: ten 2^22
    /// SHA-256 partitions took 2615, 2511 and 2140 ms with 6, 8 and 10 workers.
    #[arg(long)]
    synthesis_workers: Option<usize>,
    /// Threads of the engine's synthesis pool (default: one per core).
    #[arg(long)]
    synthesis_threads: Option<usize>,
    /// Synthesize in rayon's global pool, beside the prover's host work, instead of the engine's own pool (an A/B
    /// switch).
    #[arg(long)]
    global_synthesis_pool: bool,
    /// Skip the verifier's check of each proof (always off with fake parameters).
    #[arg(long)]
    no_verify: bool,
    /// Compiled synthesis writes into a proved partition's vectors (on) or into fresh ones (off: every partition's
    /// pages are faulted in and cleared by the kernel again; an A/B switch).
    #[arg(long, value_enum, default_value = "on")]
    reuse: crate::bench_synth::OnOff,
    /// Upload each partition's witness to the device while the partition before it is proved (on, the default), or
    /// at the start of its own proof (off: an A/B switch). Applies when a, b and c come from the witness on the
    /// device. On the H200, eight 2^26 partitions: prover step 859.9 ms on, 908.7 ms off.
    #[arg(long, value_enum, default_value = "on")]
    stage_witness: crate::bench_synth::OnOff,
    /// Where generated real parameters are kept.
    #[arg(long, env = "CUZK_PARAM_CACHE", value_name = "DIR")]
    cache_dir: Option<PathBuf>,
    /// Also write each partition's timings as one JSON object per line to FILE.
    #[arg(long, value_name = "FILE")]
    timing_json: Option<PathBuf>,
    /// Log this process's resident memory to FILE (`timestamp_ms,rss_kb,rss_gib`) during the run.
    #[arg(long, value_name = "FILE")]
    memlog: Option<PathBuf>,
    /// Milliseconds between --memlog samples.
    #[arg(long, default_value_t = 500, value_parser = clap::value_parser!(u64).range(10..=3_600_000))]
    memlog_interval_ms: u64,
    /// Print a JSON summary on stdout instead of a table.
    #[arg(long)]
    json: bool,
}

/// Gives `engine` the compiled shape when the prover computes a, b and c (uploading its matrices when the prover
/// runs on the GPU), reporting where they are computed.
pub(crate) fn with_abc_by_prover(
    mut engine: Engine,
    shape: &Arc<CompiledShape>,
    by_prover: bool,
    report: &mut Report,
) -> Result<Engine> {
    if by_prover {
        let t = Instant::now();
        engine = engine
            .with_shape(Arc::clone(shape))
            .context("giving the engine the compiled shape")?;
        report.time("shape to the prover", t.elapsed());
        if let Some(p) = engine.products() {
            report.mib(
                "shape on the device",
                p.device_bytes() as f64 / (1u64 << 20) as f64,
            );
        }
    }
    report.text(
        "a, b, c computed by",
        if by_prover {
            "the prover, from the witness"
        } else {
            "synthesis"
        }
        .into(),
    );
    Ok(engine)
}

/// What the parameters' sizes follow: counts of one partition's circuit.
struct Sizes {
    constraints: usize,
    inputs: usize,
    aux: usize,
    a_aux: usize,
    b: usize,
}

impl Sizes {
    fn of_assignment(pa: &ProvingAssignment) -> Self {
        Sizes {
            constraints: pa.num_constraints(),
            inputs: pa.num_inputs(),
            aux: pa.num_aux(),
            a_aux: pa.a_aux_density.count_ones(),
            b: pa.b_input_density.count_ones() + pa.b_aux_density.count_ones(),
        }
    }

    fn of_shape(shape: &CompiledShape) -> Self {
        Sizes {
            constraints: shape.num_constraints(),
            inputs: shape.num_inputs,
            aux: shape.num_aux,
            a_aux: shape.a_aux_density.count_ones(),
            b: shape.b_input_density.count_ones() + shape.b_aux_density.count_ones(),
        }
    }
}

/// Parameters of these sizes made of random points: cheap at any size, but no setup stands behind them, so proofs
/// against them do not verify. For benchmarks only.
fn fake_params(z: &Sizes) -> Parameters {
    use rand::SeedableRng;
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(0x0fa4e);
    let g1 = |n: usize, rng: &mut rand_chacha::ChaCha8Rng| test_utils::random_g1_fast(n, rng);
    let m = z.constraints.next_power_of_two();
    let vk_g1 = g1(4, &mut rng);
    let vk_g2: Vec<G2Affine> = test_utils::random_g2_fast(3, &mut rng);
    Parameters {
        vk: VerifyingKey {
            alpha_g1: vk_g1[0],
            beta_g1: vk_g1[1],
            beta_g2: vk_g2[0],
            gamma_g2: vk_g2[1],
            delta_g1: vk_g1[2],
            delta_g2: vk_g2[2],
            ic: g1(z.inputs, &mut rng),
        },
        h: g1(m - 1, &mut rng),
        l: g1(z.aux, &mut rng),
        a: g1(z.inputs + z.a_aux, &mut rng),
        b_g1: g1(z.b, &mut rng),
        b_g2: test_utils::random_g2_fast(z.b, &mut rng),
    }
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

pub fn run(a: ProveArgs) -> Result<()> {
    if a.partitions == 0 || a.proofs == 0 || a.constraints == 0 || a.blocks == 0 {
        bail!("--constraints, --blocks, --partitions and --proofs must be at least 1");
    }
    let _memlog = a
        .memlog
        .as_deref()
        .map(|p| crate::memmon::SelfLog::start(p, Duration::from_millis(a.memlog_interval_ms)))
        .transpose()?;
    let progress = Progress::new(a.json);
    let mut report = Report::streaming("bench prove", a.json);
    let (kind, constraints, blocks, gadget) = (a.circuit, a.constraints, a.blocks, a.sha256_gadget);
    let challenges = usize::from(a.challenges);
    if challenges > 1 && kind != BenchCircuit::PorepLike {
        bail!("--challenges is for the porep-like circuit");
    }
    // Partition i of the run: its own witness (seed i), one shape for all.
    let partition = move |i: usize| match kind {
        BenchCircuit::PorepLike => AnyCircuit::PorepLike(
            PorepLikeCircuit::new(constraints, POREP_INPUTS, i as u64).with_challenges(challenges),
        ),
        BenchCircuit::Sha256 => {
            use rand::SeedableRng;
            let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(i as u64);
            AnyCircuit::Sha256(gadget.apply(Sha256Circuit::random(blocks, &mut rng)))
        }
    };
    let blank = match kind {
        BenchCircuit::PorepLike => AnyCircuit::PorepLike(
            PorepLikeCircuit::blank(constraints, POREP_INPUTS).with_challenges(challenges),
        ),
        BenchCircuit::Sha256 => AnyCircuit::Sha256(Sha256Circuit::blank(blocks)),
    };
    let shape_id = blank.shape_id();
    report.text("circuit", shape_id.clone());
    if kind == BenchCircuit::Sha256 {
        report.text("sha256 gadget", format!("{gadget:?}").to_lowercase());
    }
    let backend = if a.gpu {
        Backend::Gpu
    } else if a.cpu {
        Backend::Cpu
    } else {
        Backend::Auto
    };

    // The parameters' sizes and the report's: from the compiled shape (compiled once, before the run), or on the
    // direct path from partition 0 synthesized once outside the run.
    let shape = match a.synthesis {
        SynthPath::Compiled => {
            let t = Instant::now();
            let s = progress.spinner("compiling the circuit's shape".into());
            let shape = CompiledShape::compile(blank.clone()).context("compiling the shape")?;
            s.finish();
            report.time("shape compile (once)", t.elapsed());
            Some(Arc::new(shape))
        }
        SynthPath::Direct => None,
    };
    let sizes = match &shape {
        Some(shape) => Sizes::of_shape(shape),
        None => Sizes::of_assignment(
            &synthesize(partition(0), &SynthesisOptions::default())
                .context("synthesizing the probe partition")?,
        ),
    };
    let domain = sizes.constraints.next_power_of_two();
    report.count("constraints per partition", sizes.constraints);
    report.text("domain", format!("2^{}", domain.trailing_zeros()));

    let params_kind = match a.params {
        ParamsKind::Auto if sizes.constraints <= 1 << 17 => ParamsKind::Real,
        ParamsKind::Auto => ParamsKind::Fake,
        k => k,
    };
    let t = Instant::now();
    let params = match params_kind {
        ParamsKind::Fake => {
            let s = progress.spinner("making fake parameters (random points)".into());
            let p = fake_params(&sizes);
            s.finish();
            report.text(
                "params",
                "FAKE: random points of the right counts (proofs cannot verify; check off)".into(),
            );
            p
        }
        _ => {
            let path =
                crate::cache::dir(a.cache_dir.as_deref())?.join(format!("{shape_id}.params"));
            if !path.exists() {
                let took = crate::generate(&shape_id, blank.clone(), &path, &progress)?;
                report.time("setup (first use)", took);
            }
            let check_subgroup = !crate::cache::is_unchanged_generated(&path);
            report.text("params", format!("{} (test setup)", path.display()));
            srs_loader::read_params(&path, ReadOptions { check_subgroup })
                .with_context(|| format!("reading {}", path.display()))?
        }
    };
    report.time("params ready", t.elapsed());
    let verify = params_kind == ParamsKind::Real && !a.no_verify;

    let params = Arc::new(params);
    let prover = ProverOptions {
        h_backend: backend,
        msm_backend: backend,
    };
    let abc_by_prover =
        a.synthesis == SynthPath::Compiled && a.abc.by_prover(&prover, params.domain_size());
    let partition_bytes = Engine::partition_bytes(&params, abc_by_prover);
    let params_bytes = Engine::params_bytes(&params);
    let workers = a.synthesis_workers.unwrap_or_else(|| {
        // Compiled synthesis computes a partition of several challenges in pieces, a challenge each.
        let compiled = a.synthesis == SynthPath::Compiled;
        crate::engine_defaults::synthesis_workers(if compiled { challenges } else { 1 })
    });
    let on_gpu = prover.any_on_gpu(params.domain_size());
    let gpus = a.lanes.lanes(&params, on_gpu);
    let max_in_flight = match (a.max_in_flight, a.memory_budget_gib) {
        (Some(n), _) => n.max(1),
        (None, Some(gib)) => {
            let budget = (gib * (1u64 << 30) as f64) as u64;
            EngineOptions::in_flight_for_budget(&params, budget, abc_by_prover)
        }
        // The parameters are loaded (not yet uploaded), so what is available is what partitions may use.
        (None, None) => crate::engine_defaults::max_in_flight(
            workers,
            gpus.len(),
            crate::engine_defaults::memory_budget(),
            &params,
            abc_by_prover,
        ),
    };
    let t = Instant::now();
    let mut engine = Engine::new(
        Arc::clone(&params),
        EngineOptions {
            prover,
            synthesis_workers: workers,
            synthesis_threads: a.synthesis_threads,
            own_synthesis_pool: !a.global_synthesis_pool,
            max_in_flight,
            verify,
            corrupt_partition: None,
            device_error_partition: None,
            reuse_buffers: a.reuse == crate::bench_synth::OnOff::On,
            stage_witness: a.stage_witness == crate::bench_synth::OnOff::On,
            gpus,
        },
    )
    .context("starting the engine")?;
    report.time("engine start (parameter upload)", t.elapsed());
    crate::engine_defaults::report_lanes(&engine, &mut report);
    let mib = |b: u64| b as f64 / (1u64 << 20) as f64;
    report.count("synthesis workers", workers);
    report.count("max in flight", max_in_flight);
    let lanes = engine.options().gpus.len();
    if max_in_flight < workers + lanes {
        report.text(
            "note",
            format!("{max_in_flight} in flight for {workers} workers and {lanes} prover lane(s): a partition being proved holds a slot, so at most {} synthesize while every lane proves", max_in_flight.saturating_sub(lanes)),
        );
    }
    // The compiled shape stays resident for the whole run (0 on the direct path).
    let shape_bytes = shape.as_ref().map_or(0, |s| s.heap_bytes() as u64);
    report.text(
        "predicted peak",
        format!(
            "{:.0} MiB = parameters {:.0} MiB + compiled shape {:.0} MiB + {max_in_flight} x {:.0} MiB per partition (plus the process)",
            mib(params_bytes + shape_bytes + max_in_flight as u64 * partition_bytes),
            mib(params_bytes),
            mib(shape_bytes),
            mib(partition_bytes)
        ),
    );
    report.text(
        "verify each proof",
        if verify {
            "on".into()
        } else if params_kind == ParamsKind::Fake {
            "off (fake parameters)".into()
        } else {
            "off (--no-verify)".into()
        },
    );

    if let Some(shape) = &shape {
        engine = with_abc_by_prover(engine, shape, abc_by_prover, &mut report)?;
    }
    report.text(
        "synthesis",
        match a.synthesis {
            SynthPath::Compiled => "compiled".into(),
            SynthPath::Direct => "direct".into(),
        },
    );

    let log = PartitionLog::create(a.timing_json.as_deref())?;
    let total = a.partitions * a.proofs;
    report.text("buffer reuse", format!("{:?}", a.reuse).to_lowercase());
    report.text(
        "witness staged ahead",
        format!("{:?}", a.stage_witness).to_lowercase(),
    );
    // A porep-like partition of several challenges is synthesized in pieces on the compiled paths, as a real one is.
    let in_pieces = challenges > 1 && r1cs_synth::pieces::enabled();
    if challenges > 1 {
        report.text("witness", crate::engine_defaults::witness_text(challenges));
    }
    let synthesize_partition =
        |i: usize, spare: ProvingAssignment| -> r1cs_synth::Result<ProvingAssignment> {
            let circuit = partition(i);
            match (&shape, circuit) {
                (Some(shape), AnyCircuit::PorepLike(c)) if in_pieces && abc_by_prover => {
                    shape.witness_assignment_pieces(c.pieces(), spare)
                }
                (Some(shape), AnyCircuit::PorepLike(c)) if in_pieces => {
                    shape.synthesize_pieces_reusing(c.pieces(), spare)
                }
                (Some(shape), circuit) if abc_by_prover => shape.witness_assignment(circuit, spare),
                (Some(shape), circuit) => shape.synthesize_reusing(circuit, spare),
                (None, circuit) => synthesize_reusing(circuit, &SynthesisOptions::default(), spare),
            }
        };
    let on_done = |o: &PartitionOutcome| log.log(o);
    let (outcomes, summary) =
        engine.prove_partitions_reusing(total, synthesize_partition, &mut OsRng, on_done);

    summarize(
        &mut report,
        &outcomes,
        &summary,
        &SummaryOptions {
            workers,
            max_in_flight,
            verify,
            partitions_per_proof: a.partitions,
            json: a.json,
        },
    )
}

/// Prints each finished partition: its `CUZK_TIMING` line and any error on stderr, and a JSON line to the
/// `--timing-json` file.
pub(crate) struct PartitionLog {
    json: Option<Mutex<std::io::BufWriter<std::fs::File>>>,
}

impl PartitionLog {
    pub(crate) fn create(path: Option<&std::path::Path>) -> Result<Self> {
        let json = path
            .map(|p| {
                std::fs::File::create(p)
                    .with_context(|| format!("creating {}", p.display()))
                    .map(|f| Mutex::new(std::io::BufWriter::new(f)))
            })
            .transpose()?;
        Ok(Self { json })
    }

    pub(crate) fn log(&self, o: &PartitionOutcome) {
        crate::timing_line(o.report.key_values());
        if let Err(e) = &o.proof {
            eprintln!("partition {}: {e}", o.report.partition);
        }
        if let Some(out) = &self.json {
            let obj: serde_json::Map<String, serde_json::Value> = o
                .report
                .key_values()
                .into_iter()
                .map(|(k, v)| {
                    let v = if let Ok(i) = v.parse::<u64>() {
                        serde_json::Value::from(i)
                    } else if let Ok(x) = v.parse::<f64>() {
                        serde_json::Value::from(x)
                    } else if let Ok(b) = v.parse::<bool>() {
                        serde_json::Value::from(b)
                    } else {
                        serde_json::Value::String(v)
                    };
                    (k.to_string(), v)
                })
                .collect();
            let mut out = out.lock().unwrap_or_else(|e| e.into_inner());
            let _ = writeln!(out, "{}", serde_json::Value::Object(obj));
            let _ = out.flush();
        }
    }
}

/// The sustained time per partition, in ms: each lane's finishes, first to last, give its rate (partitions
/// proved after its first, over the time they took), and the lanes' rates add up; a lane that finished fewer than
/// two partitions adds nothing. `None` when no lane finished two.
///
/// Until 2026-12-03 this was the span from the run's first finish to its last over (partitions - 1). Lanes proving
/// side by side finish at about the same times, so that span holds only (partitions per lane - 1) periods of each
/// lane, and the figure came out short by up to (lanes - 1) / (partitions - 1): 14 % for eight partitions on two
/// lanes, 7 % for sixteen.
pub(crate) fn sustained_ms(reports: &[&PartitionReport]) -> Option<f64> {
    let mut ends: std::collections::BTreeMap<usize, Vec<Duration>> =
        std::collections::BTreeMap::new();
    for r in reports {
        ends.entry(r.lane).or_default().push(r.prove_end);
    }
    let mut rate = 0.0; // partitions per ms
    for lane in ends.values() {
        if let (Some(first), Some(last)) = (lane.iter().min(), lane.iter().max()) {
            // A lane with one finish spans nothing and adds nothing.
            let span = ms(*last - *first);
            if span > 0.0 {
                rate += (lane.len() - 1) as f64 / span;
            }
        }
    }
    (rate > 0.0).then(|| 1.0 / rate)
}

/// How an engine run was set up, for [`summarize`].
pub(crate) struct SummaryOptions {
    pub workers: usize,
    pub max_in_flight: usize,
    pub verify: bool,
    /// Partitions in one proof (10 for a 32 GiB PoRep), for proofs per hour.
    pub partitions_per_proof: usize,
    pub json: bool,
}

/// The summary of an engine run: per-phase medians, the sustained time per partition beside the slower stage,
/// throughput, the prover's busy fraction and peak RSS; printed, then an error if any partition failed.
pub(crate) fn summarize(
    report: &mut Report,
    outcomes: &[PartitionOutcome],
    summary: &RunSummary,
    o: &SummaryOptions,
) -> Result<()> {
    let (workers, max_in_flight, verify, json) = (o.workers, o.max_in_flight, o.verify, o.json);
    let total = outcomes.len();
    let failed: Vec<_> = outcomes.iter().filter(|o| o.proof.is_err()).collect();
    let reports: Vec<&PartitionReport> = outcomes.iter().map(|o| &o.report).collect();
    if let Some(first) = reports.first() {
        report.backends(&first.timings);
    }
    let phase = |name: &str, f: &dyn Fn(&PartitionReport) -> Duration, report: &mut Report| {
        let (med, lo, hi) = median(reports.iter().map(|r| ms(f(r))).collect());
        report.text(
            name,
            format!("median {med:.1} ms (min {lo:.1}, max {hi:.1})"),
        );
        // Numeric twin, for scripts (`cargo xtask bench` reads e.g. `h_polynomial_median_ms`).
        if json {
            report.time(
                &format!("{name} median"),
                Duration::from_secs_f64(med / 1e3),
            );
        }
        med
    };
    let synth_med = phase("synthesis", &|r| r.synthesis, report);
    phase("queue wait", &|r| r.queue_wait, report);
    phase("a, b, c from the witness", &|r| r.timings.products, report);
    phase(
        "witness staged ahead (outside the prover step)",
        &|r| r.timings.staged_upload,
        report,
    );
    phase("H polynomial", &|r| r.timings.h_poly, report);
    phase("uploads (within the phases)", &|r| r.timings.upload, report);
    phase("MSM H", &|r| r.timings.msm_h, report);
    phase("MSM L", &|r| r.timings.msm_l, report);
    phase("MSM A", &|r| r.timings.msm_a, report);
    phase("MSM B_G1", &|r| r.timings.msm_b_g1, report);
    phase("MSM B_G2", &|r| r.timings.msm_b_g2, report);
    phase("assembly", &|r| r.timings.assembly, report);
    phase("prove (all phases)", &|r| r.timings.total(), report);
    if verify {
        phase("verify", &|r| r.verify, report);
    }
    let prove_med = phase(
        "prover step (prove and check)",
        &|r| r.prove_end - r.prove_start,
        report,
    );
    report.count("partitions", total);
    report.time("wall", summary.wall);
    // Sustained: each lane's pace between its first and its last finish (which leaves out the pipeline's fill),
    // the lanes' rates added.
    if let Some(sustained) = sustained_ms(&reports) {
        // Synthesis runs on `workers` partitions at once: its rate bound is its median over the workers.
        // Numeric, for scripts (`cargo xtask bench` reads `per_partition_ms`).
        report.time("per partition", Duration::from_secs_f64(sustained / 1e3));
        // Each lane holds a slot while it proves; the lanes prove side by side.
        let lanes = summary.lanes.max(1);
        let parallel = workers.min(max_in_flight.saturating_sub(lanes)).max(1);
        let bound = (synth_med / parallel as f64).max(prove_med / lanes as f64);
        report.text(
            "sustained per partition",
            format!(
                "{sustained:.1} ms; slower of synthesis (median / workers) and the prover step (median / lanes) {bound:.1} ms ({:+.1} %)",
                (sustained / bound - 1.0) * 100.0
            ),
        );
    }
    report.text(
        "throughput",
        format!(
            "{:.1} partitions/hour, {:.2} proofs/hour of {} partitions",
            summary.proofs_per_hour(),
            summary.proofs_per_hour() / o.partitions_per_proof as f64,
            o.partitions_per_proof
        ),
    );
    report.text(
        "prover busy",
        format!(
            "{:.1} % of the wall time{}",
            summary.busy_fraction() * 100.0,
            if summary.lanes > 1 {
                format!(", averaged over {} lanes", summary.lanes)
            } else {
                String::new()
            }
        ),
    );
    if let Some(p) = crate::report::peak_rss_mib() {
        report.mib("peak RSS", p);
    }
    report.count("partitions failed", failed.len());
    report.print(json);
    if let Some(f) = failed.first() {
        bail!(
            "{} of {total} partitions failed; the first: {}",
            failed.len(),
            f.proof.as_ref().unwrap_err()
        );
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Sized from a synthesis or from the compiled shape (as the run sizes them), the fake parameters fit the
    /// circuit's assignment, with a, b and c or without them.
    #[test]
    fn fake_params_fit_the_circuit() {
        let circuit = PorepLikeCircuit::<VecTerms>::new(1000, 3, 1);
        let pa = synthesize(circuit.clone(), &SynthesisOptions::default()).unwrap();
        let shape = CompiledShape::compile(PorepLikeCircuit::<VecTerms>::blank(1000, 3)).unwrap();
        let deferred = shape
            .witness_assignment(circuit, Default::default())
            .unwrap();
        for p in [
            fake_params(&Sizes::of_assignment(&pa)),
            fake_params(&Sizes::of_shape(&shape)),
        ] {
            p.check_consistent().unwrap();
            p.check_matches(&pa).unwrap();
            p.check_matches(&deferred).unwrap();
            assert_ne!(p.h[0], blstrs::G1Affine::default());
        }
    }

    fn finished(lane: usize, end_ms: u64) -> PartitionReport {
        PartitionReport {
            lane,
            prove_end: Duration::from_millis(end_ms),
            ..Default::default()
        }
    }

    fn sustained_of(ends: &[(usize, u64)]) -> Option<f64> {
        let reports: Vec<PartitionReport> = ends.iter().map(|&(l, e)| finished(l, e)).collect();
        sustained_ms(&reports.iter().collect::<Vec<_>>())
    }

    /// One lane: its period. Two lanes finishing together or staggered: half a lane's period, where the span from
    /// the first finish to the last over (partitions - 1) gives 43 ms for the first pair (the old figure).
    #[test]
    fn sustained_adds_the_lanes_rates() {
        let one = sustained_of(&[(0, 1000), (0, 1010), (0, 1020), (0, 1030), (0, 1040)]).unwrap();
        assert!((one - 10.0).abs() < 1e-9, "{one}");
        let together = [100, 200, 300, 400]
            .iter()
            .flat_map(|&e| [(0, e), (1, e + 1)])
            .collect::<Vec<_>>();
        let two = sustained_of(&together).unwrap();
        assert!((two - 50.0).abs() < 1e-9, "{two}");
        let staggered =
            sustained_of(&[(0, 100), (1, 150), (0, 200), (1, 250), (0, 300), (1, 350)]).unwrap();
        assert!((staggered - 50.0).abs() < 1e-9, "{staggered}");
        // Order of the reports does not matter; a lane with one finish adds nothing.
        let lone = sustained_of(&[(0, 300), (1, 5), (0, 100), (0, 200)]).unwrap();
        assert!((lone - 100.0).abs() < 1e-9, "{lone}");
        assert_eq!(sustained_of(&[(0, 100), (1, 100)]), None);
        assert_eq!(sustained_of(&[]), None);
    }
}
