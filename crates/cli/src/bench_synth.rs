//! `cuzk bench synth`: the synth-only microbenchmark (the tool the seeds' regression hunt was won with).
//!
//! Every variant synthesizes the same circuits (same seeds); one untimed warm-up round comes first, then the rounds
//! interleave the variants so that drift in the machine hits them alike. Peak RSS is measured per variant by resetting
//! the kernel's high-water mark (`/proc/self/clear_refs`) before each run.

use std::time::Instant;

use anyhow::{bail, Context, Result};
use bellpepper_core::Circuit;
use blstrs::Scalar;
use circuits::{PorepLikeCircuit, Sha256Circuit};
use clap::{Args, ValueEnum};
use lc_indexer::{Backend, SmallVecTerms1, SmallVecTerms2, SmallVecTerms4, TermStorage, VecTerms};
use r1cs_synth::{
    synthesize_batch_reusing, CompiledShape, ProvingAssignment, SizeHint, SynthesisOptions,
};

use crate::report::{median, Report};

#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum SynthCircuit {
    /// SHA-256 over --blocks blocks (its LCs are bellpepper's: the variant changes nothing, so its rows measure noise).
    Sha256,
    /// The PoRep-shaped synthetic circuit of --constraints constraints (its LCs use the variant's storage).
    PorepLike,
}

/// Which SHA-256 gadget the sha256 circuit hashes with: the same constraint system either way.
#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum Sha256Gadget {
    /// `circuits::sha256`: the sums' linear combinations are built inside `enforce` closures only, so witness-only
    /// synthesis skips them.
    Lazy,
    /// bellpepper's own gadget, whose sums are built outside `enforce` (for comparison).
    Bellpepper,
}

impl Sha256Gadget {
    /// `circuit` set to hash with this gadget.
    pub fn apply(self, circuit: Sha256Circuit) -> Sha256Circuit {
        match self {
            Sha256Gadget::Lazy => circuit,
            Sha256Gadget::Bellpepper => circuit.with_bellpepper_gadget(),
        }
    }
}

#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum OnOff {
    On,
    Off,
}

#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum Path {
    /// Every constraint evaluated while the circuit runs.
    Direct,
    /// Witness only, against a compiled shape (compiled once, outside the timing); a, b, c by sparse products.
    Compiled,
    /// The compiled path's witness alone, a, b and c left to the prover: what a partition is on the host when the
    /// GPU computes a, b and c from the witness it uploads (the engine's default with H on the GPU).
    CompiledWitness,
}

#[derive(Args, Debug)]
pub struct SynthArgs {
    /// Which circuit.
    #[arg(long, value_enum, default_value = "porep-like")]
    circuit: SynthCircuit,
    /// Constraints per partition (porep-like; rounded up to whole 200-constraint blocks). The domain is the next
    /// power of two at or above the constraints plus one per public input, so 134217728 (2^27) takes a 2^28 domain; a
    /// PoRep-sized partition (domain 2^27) is 130000000.
    #[arg(long, default_value_t = 1 << 20)]
    constraints: usize,
    /// SHA-256 blocks per partition (sha256).
    #[arg(long, default_value_t = 8)]
    blocks: usize,
    /// SHA-256 gadget (sha256): lazy sums, or bellpepper's own (the same constraints).
    #[arg(long, value_enum, default_value = "lazy")]
    sha256_gadget: Sha256Gadget,
    /// Circuits synthesized together (in parallel, as partitions are).
    #[arg(long, default_value_t = 1)]
    partitions: usize,
    /// Timed rounds per variant (after one warm-up round).
    #[arg(long, default_value_t = 5)]
    iterations: usize,
    /// LC storage variants to compare, comma-separated.
    #[arg(
        long,
        value_delimiter = ',',
        default_value = "vec,smallvec1,smallvec2,smallvec4"
    )]
    variant: Vec<String>,
    /// Pre-size every vector from the circuit's known sizes (A2).
    #[arg(long, value_enum, default_value = "off")]
    hint: OnOff,
    /// Synthesis path.
    #[arg(long, value_enum, default_value = "direct")]
    path: Path,
    /// Synthesize each round into the memory of the previous round's assignments (as a prover that hands finished
    /// partitions back would), instead of allocating and faulting in fresh pages. Either path.
    #[arg(long, value_enum, default_value = "off")]
    reuse: OnOff,
    /// Worker threads (default: all cores).
    #[arg(long)]
    threads: Option<usize>,
    /// Print JSON instead of a table.
    #[arg(long)]
    json: bool,
}

/// Minor page faults of this process so far (Linux `/proc/self/stat`, field 10), if readable.
fn minor_faults() -> Option<u64> {
    let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
    // Fields after the command name, which is parenthesised and may hold spaces.
    let rest = &stat[stat.rfind(')')? + 2..];
    rest.split_whitespace().nth(7)?.parse().ok()
}

/// Resets the peak-RSS high-water mark (Linux); false where the kernel does not allow it.
fn reset_peak_rss() -> bool {
    std::fs::write("/proc/self/clear_refs", "5").is_ok()
}

struct Case {
    args_circuit: SynthCircuit,
    constraints: usize,
    blocks: usize,
    gadget: Sha256Gadget,
    partitions: usize,
    path: Path,
    hint: Option<SizeHint>,
    reuse: bool,
}

/// One timed synthesis of all partitions with storage `S`; returns seconds and the constraint count.
/// With `case.reuse`, either path synthesizes into `spares` (the previous round's assignments) and leaves this
/// round's there.
fn run_once<S: TermStorage>(
    case: &Case,
    shape: Option<&CompiledShape>,
    spares: &mut Vec<ProvingAssignment>,
) -> Result<(f64, usize)> {
    let opts = SynthesisOptions {
        check: false,
        hint: case.hint,
    };
    fn synth_all<C: Circuit<Scalar> + Send>(
        circuits: Vec<C>,
        shape: Option<(&CompiledShape, Path)>,
        opts: &SynthesisOptions,
        spares: Vec<ProvingAssignment>,
    ) -> r1cs_synth::Result<Vec<ProvingAssignment>> {
        match shape {
            Some((shape, Path::CompiledWitness)) => {
                shape.witness_assignment_batch(circuits, spares)
            }
            Some((shape, _)) => shape.synthesize_batch_reusing(circuits, spares),
            None => synthesize_batch_reusing(circuits, opts, spares),
        }
    }
    let shape = match case.path {
        Path::Direct => None,
        path => shape.map(|s| (s, path)),
    };
    let spare = if case.reuse {
        std::mem::take(spares)
    } else {
        Vec::new()
    };
    let t = Instant::now();
    let assignments = match case.args_circuit {
        SynthCircuit::PorepLike => synth_all(
            (0..case.partitions)
                .map(|p| PorepLikeCircuit::<S>::new(case.constraints, 327, p as u64))
                .collect(),
            shape,
            &opts,
            spare,
        )?,
        SynthCircuit::Sha256 => synth_all(
            (0..case.partitions)
                .map(|p| {
                    case.gadget.apply(Sha256Circuit::random(
                        case.blocks,
                        &mut rand_seeded(p as u64),
                    ))
                })
                .collect(),
            shape,
            &opts,
            spare,
        )?,
    };
    let secs = t.elapsed().as_secs_f64();
    let constraints = assignments.iter().map(|a| a.num_constraints()).sum();
    if case.reuse {
        *spares = assignments;
    } else {
        drop(assignments);
    }
    Ok((secs, constraints))
}

fn rand_seeded(seed: u64) -> impl rand::RngCore {
    use rand::SeedableRng;
    rand::rngs::StdRng::seed_from_u64(seed)
}

fn run_variant(
    backend: Backend,
    case: &Case,
    shape: Option<&CompiledShape>,
    spares: &mut Vec<ProvingAssignment>,
) -> Result<(f64, usize)> {
    match backend {
        Backend::Vec => run_once::<VecTerms>(case, shape, spares),
        Backend::SmallVec1 => run_once::<SmallVecTerms1>(case, shape, spares),
        Backend::SmallVec2 => run_once::<SmallVecTerms2>(case, shape, spares),
        Backend::SmallVec4 => run_once::<SmallVecTerms4>(case, shape, spares),
    }
}

pub fn run(a: SynthArgs) -> Result<()> {
    if a.iterations == 0 || a.partitions == 0 {
        bail!("--iterations and --partitions must be at least 1");
    }
    let variants: Vec<Backend> = a
        .variant
        .iter()
        .map(|v| v.parse::<Backend>().map_err(anyhow::Error::msg))
        .collect::<Result<_>>()?;
    let mut pool = rayon::ThreadPoolBuilder::new();
    if let Some(t) = a.threads {
        pool = pool.num_threads(t);
    }
    let pool = pool.build().context("building the thread pool")?;
    let mut report = Report::streaming("bench synth", a.json);
    let name = |v: &dyn Fn() -> Option<clap::builder::PossibleValue>| {
        v().map(|p| p.get_name().to_string()).unwrap_or_default()
    };
    report.text("circuit", name(&|| a.circuit.to_possible_value()));
    if a.circuit == SynthCircuit::Sha256 {
        report.text(
            "sha256 gadget",
            name(&|| a.sha256_gadget.to_possible_value()),
        );
    }
    report.text("path", name(&|| a.path.to_possible_value()));
    report.count("partitions", a.partitions);
    report.count("threads", pool.current_num_threads());
    let mut case = Case {
        args_circuit: a.circuit,
        constraints: a.constraints,
        blocks: a.blocks,
        gadget: a.sha256_gadget,
        partitions: a.partitions,
        path: a.path,
        hint: None,
        reuse: a.reuse == OnOff::On,
    };
    let shape = match a.path {
        Path::Direct => None,
        Path::Compiled | Path::CompiledWitness => Some(pool.install(|| match a.circuit {
            SynthCircuit::PorepLike => {
                CompiledShape::compile(PorepLikeCircuit::<VecTerms>::blank(a.constraints, 327))
            }
            SynthCircuit::Sha256 => CompiledShape::compile(Sha256Circuit::blank(a.blocks)),
        })?),
    };
    if let Some(shape) = &shape {
        report.text(
            "compiled shape",
            format!(
                "{:.1} MiB resident (A {} + B {} + C {} terms, {} coefficients)",
                shape.heap_bytes() as f64 / (1u64 << 20) as f64,
                shape.a.nonzeros(),
                shape.b.nonzeros(),
                shape.c.nonzeros(),
                shape.coeffs.len()
            ),
        );
    }
    if a.hint == OnOff::On {
        // The hint comes from one synthesis of the same shape, as a prover learns it from its first partition.
        let probe = pool.install(|| match a.circuit {
            SynthCircuit::PorepLike => r1cs_synth::synthesize(
                PorepLikeCircuit::<VecTerms>::new(a.constraints, 327, 0),
                &Default::default(),
            ),
            SynthCircuit::Sha256 => r1cs_synth::synthesize(
                a.sha256_gadget
                    .apply(Sha256Circuit::random(a.blocks, &mut rand_seeded(0))),
                &Default::default(),
            ),
        })?;
        case.hint = Some(probe.size_hint());
    }
    report.text("hint", name(&|| a.hint.to_possible_value()));
    report.text("reuse", name(&|| a.reuse.to_possible_value()));
    if a.circuit == SynthCircuit::Sha256 && variants.len() > 1 {
        report.text("note", "sha256 builds bellpepper's LCs: the variants run identical code, so their spread is noise".into());
    }
    let can_reset = reset_peak_rss();
    // Each variant's assignments of its last round, for --reuse.
    let mut spares: Vec<Vec<ProvingAssignment>> = variants.iter().map(|_| Vec::new()).collect();
    // Warm-up: every variant once, untimed.
    for (k, &v) in variants.iter().enumerate() {
        pool.install(|| run_variant(v, &case, shape.as_ref(), &mut spares[k]))?;
    }
    let mut times: Vec<Vec<f64>> = vec![Vec::new(); variants.len()];
    let mut peaks: Vec<f64> = vec![0.0; variants.len()];
    let mut faults: Vec<Vec<u64>> = vec![Vec::new(); variants.len()];
    let mut constraints = 0;
    for _ in 0..a.iterations {
        for (k, &v) in variants.iter().enumerate() {
            reset_peak_rss();
            let faults_before = minor_faults();
            let (secs, c) =
                pool.install(|| run_variant(v, &case, shape.as_ref(), &mut spares[k]))?;
            if let (Some(a), Some(b)) = (faults_before, minor_faults()) {
                faults[k].push(b - a);
            }
            constraints = c;
            times[k].push(secs);
            if let Some(p) = crate::report::peak_rss_mib() {
                peaks[k] = peaks[k].max(p);
            }
        }
    }
    report.count("constraints per round", constraints);
    for (k, v) in variants.iter().enumerate() {
        let (med, lo, hi) = median(times[k].clone());
        // Numeric twins of the text rows, for scripts (`cargo xtask bench` reads `<variant>_median_ms`).
        report.time(
            &format!("{} median", v.name()),
            std::time::Duration::from_secs_f64(med),
        );
        report.text(
            &format!("variant {}", v.name()),
            format!(
                "median {:.1} ms (min {:.1}, max {:.1}, {} rounds); {:.2} M constraints/s; peak RSS {:.0} MiB{}; minor page faults per round {}",
                med * 1e3,
                lo * 1e3,
                hi * 1e3,
                a.iterations,
                constraints as f64 / med / 1e6,
                peaks[k],
                if can_reset { "" } else { " (process peak: high-water mark not resettable here)" },
                {
                    let mut f = faults[k].clone();
                    f.sort_unstable();
                    f.get(f.len() / 2).map_or("unknown".to_string(), |m| m.to_string())
                }
            ),
        );
    }
    report.print(a.json);
    Ok(())
}
