//! Defaults shared by every command that runs the engine (`bench prove`, `porep prove`, `bench porep`, the daemon):
//! how many partitions synthesize at once, and how many may be alive.

use groth16_pipeline::EngineOptions;
use srs_loader::Parameters;

/// Synthesis workers when none is given, for partitions whose witness comes in `pieces` run at once (1: the
/// circuit's own code on one thread): [`workers_for`] this machine's cores.
pub(crate) fn synthesis_workers(pieces: usize) -> usize {
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    workers_for(cores, pieces, r1cs_synth::pieces::enabled())
}

/// How compiled synthesis computes a witness of `pieces` pieces, for reports: in pieces at once, or as one circuit
/// (`CUZK_SYNTH_PIECES=0`, or a circuit of one piece).
pub(crate) fn witness_text(pieces: usize) -> String {
    if pieces > 1 && r1cs_synth::pieces::enabled() {
        format!("in pieces, {pieces} challenges a partition, at once")
    } else if pieces > 1 {
        "as one circuit (CUZK_SYNTH_PIECES=0)".into()
    } else {
        "as one circuit".into()
    }
}

/// Synthesis workers for `cores` and partitions of `pieces` (computed at once when `in_pieces`).
///
/// One thread a partition: half the cores, 1 to 8, so workers scale synthesis until the GPU prover is the slower
/// stage. On the 16-core H200 host, ten 2^27 PoRep-like partitions ran at 2,144 ms a partition with 4 workers and
/// 1,786 ms with 6 (the prover's pace, 1,766 ms); real 2 KiB PoRep proofs became prover-bound from 6 workers.
///
/// In pieces: no more than that, and only as many as fill the cores with pieces: the fewest partitions whose
/// pieces cover the cores, one more when their pieces do not share out evenly (its pieces fill the last round's
/// idle threads). More workers add no throughput, only latency and memory: on 2 cores, 2 KiB partitions (2 pieces)
/// gave one witness every 318-320 ms with 1 worker and 325-328 ms with 2, whose witnesses each took twice as long
/// (BENCHMARKS.md). So 2 workers at 32 GiB (18 pieces) on 16 cores, 8 at 2 KiB as before.
pub(crate) fn workers_for(cores: usize, pieces: usize, in_pieces: bool) -> usize {
    let one_thread = (cores / 2).clamp(1, 8);
    if !in_pieces || pieces <= 1 {
        return one_thread;
    }
    let cores = cores.max(1);
    let fill = cores.div_ceil(pieces);
    (fill + usize::from(!(fill * pieces).is_multiple_of(cores))).clamp(1, one_thread)
}

/// Partitions in flight when none is given: the workers plus one per prover lane (so each GPU proves one while the
/// workers synthesize), and no more than `budget` bytes of partitions hold, when a budget is known.
pub(crate) fn max_in_flight(
    workers: usize,
    lanes: usize,
    budget: Option<u64>,
    params: &Parameters,
    abc_by_prover: bool,
) -> usize {
    let want = workers + lanes.max(1);
    match budget {
        Some(b) => want.min(EngineOptions::in_flight_for_budget(
            params,
            b,
            abc_by_prover,
        )),
        None => want,
    }
}

/// The memory partitions may use when no budget is given: 80 % of what the kernel reports available now (call it
/// once the parameters are resident), or `None` where that cannot be read.
pub(crate) fn memory_budget() -> Option<u64> {
    crate::report::mem_available_bytes().map(|b| b / 10 * 8)
}

/// Reports the engine's lanes: the GPUs it proves on and each one's parameter placement.
pub(crate) fn report_lanes(engine: &groth16_pipeline::Engine, report: &mut crate::report::Report) {
    let placements = engine.gpu_placements();
    if placements.is_empty() {
        return;
    }
    let gpus: Vec<String> = placements.iter().map(|(d, _)| d.to_string()).collect();
    report.text("GPUs (one per lane)", gpus.join(", "));
    let mut seen = std::collections::BTreeSet::new();
    for (d, placement) in placements {
        if let Some(p) = placement.filter(|_| seen.insert(d)) {
            let key = if engine.options().gpus.len() == 1 {
                "GPU parameter placement".to_string()
            } else {
                format!("GPU {d} parameter placement")
            };
            report.text(&key, p.to_string());
        }
    }
}

/// `--gpus` and `--lanes-per-gpu`, shared by every command that runs the engine.
#[derive(clap::Args, Debug)]
pub(crate) struct LaneArgs {
    /// GPUs to prove on: `all` (every GPU the process sees, after CUDA_VISIBLE_DEVICES) or ordinals such as `0,1`.
    /// Each GPU gets a lane of its own (a prover, a witness stager, the parameters on the device), all fed from one
    /// queue of synthesized partitions; the default in-flight count adds one partition per lane.
    #[arg(long, env = "CUZK_GPUS", default_value = "all")]
    gpus: GpuSelection,
    /// Prover lanes on each GPU: `auto` (default: two where the GPU's memory holds the parameters and two proofs'
    /// working memory, as the H200 does at 2^27; else one) or a count. Two lanes overlap one proof's host work and
    /// small MSMs with the other's kernels; on the H200 they have so far matched one lane's pace at 2^24 and 2^27
    /// (BENCHMARKS.md), holding more device memory.
    #[arg(long, env = "CUZK_LANES_PER_GPU", default_value = "auto")]
    lanes_per_gpu: LanesPerGpu,
}

impl LaneArgs {
    /// The GPU of each lane to run (see [`lanes`]); `on_gpu` when a stage of the proof runs on the GPU.
    pub(crate) fn lanes(&self, params: &Parameters, on_gpu: bool) -> Vec<u32> {
        lanes(
            self.gpus.resolve(on_gpu),
            self.lanes_per_gpu,
            params,
            on_gpu,
        )
    }
}

/// The `--gpus` of the commands that run the engine: `all`, or GPU ordinals separated by commas.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum GpuSelection {
    /// Every GPU the process sees (after `CUDA_VISIBLE_DEVICES`); GPU 0 when it sees none (the CPU proves).
    All,
    /// These ordinals, in this order.
    List(Vec<u32>),
}

impl std::str::FromStr for GpuSelection {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        let s = s.trim();
        if s.eq_ignore_ascii_case("all") {
            return Ok(GpuSelection::All);
        }
        let list = s
            .split(',')
            .map(|p| {
                let p = p.trim();
                p.parse::<u32>().map_err(|_| {
                    format!(
                        "`{p}` in `{s}` is not a GPU ordinal: give `all` or ordinals such as `0,1`"
                    )
                })
            })
            .collect::<Result<Vec<_>, _>>()?;
        if list.is_empty() {
            return Err("no GPU given: give `all` or ordinals such as `0,1`".into());
        }
        Ok(GpuSelection::List(list))
    }
}

impl GpuSelection {
    /// The ordinals to run lanes on: `All` is every GPU when a stage runs on one (`on_gpu`), else one lane.
    pub(crate) fn resolve(&self, on_gpu: bool) -> Vec<u32> {
        match self {
            GpuSelection::List(l) => l.clone(),
            GpuSelection::All => match ntt_cuda::gpu::device_count() {
                Ok(n) if n > 0 && on_gpu => (0..n).collect(),
                _ => vec![0],
            },
        }
    }
}

/// The `--lanes-per-gpu` of the commands that run the engine: `auto`, or a count.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum LanesPerGpu {
    /// As many as the GPU's memory holds beside the resident parameters, at most [`AUTO_LANES_MAX`].
    Auto,
    /// This many on every GPU.
    Count(usize),
}

/// Most lanes `auto` puts on one GPU: two measured faster than one (on the H200, 2^27 partitions 1,414.7 against
/// 1,597.8 ms each; 2^24 ones 229–233 against 247–253 ms); more were not measured.
pub(crate) const AUTO_LANES_MAX: usize = 2;

impl std::str::FromStr for LanesPerGpu {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        let s = s.trim();
        if s.eq_ignore_ascii_case("auto") {
            return Ok(LanesPerGpu::Auto);
        }
        match s.parse::<usize>() {
            Ok(n) if (1..=8).contains(&n) => Ok(LanesPerGpu::Count(n)),
            _ => Err(format!(
                "`{s}` is not a lane count: give `auto` or a number from 1 to 8"
            )),
        }
    }
}

/// The lanes to run: each GPU of `gpus` `per` times, in order (`auto`: as many as that GPU's memory holds for
/// `params`, see [`groth16_pipeline::lanes_that_fit`], when a stage runs on the GPU and no GPU is listed twice
/// already; else one).
pub(crate) fn lanes(
    gpus: Vec<u32>,
    per: LanesPerGpu,
    params: &Parameters,
    on_gpu: bool,
) -> Vec<u32> {
    let distinct = gpus.iter().collect::<std::collections::BTreeSet<_>>().len() == gpus.len();
    let count = |g: u32| match per {
        LanesPerGpu::Count(n) => n,
        LanesPerGpu::Auto if on_gpu && distinct => ntt_cuda::gpu::on_device(g, || {
            groth16_pipeline::lanes_that_fit(params, AUTO_LANES_MAX)
        })
        .ok()
        .and_then(Result::ok)
        .unwrap_or(1),
        LanesPerGpu::Auto => 1,
    };
    gpus.into_iter()
        .flat_map(|g| std::iter::repeat_n(g, count(g)))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::GpuSelection;

    #[test]
    fn workers_fill_the_cores_with_pieces_and_never_exceed_the_one_thread_default() {
        use super::workers_for;
        // One thread a partition: half the cores, 1 to 8.
        assert_eq!(workers_for(1, 1, true), 1);
        assert_eq!(workers_for(16, 1, true), 8);
        assert_eq!(workers_for(96, 1, true), 8);
        assert_eq!(workers_for(16, 18, false), 8);
        // 2 KiB to 512 MiB (2 pieces): as before where they tile the cores.
        assert_eq!(workers_for(2, 2, true), 1);
        assert_eq!(workers_for(16, 2, true), 8);
        // 32 GiB (18 pieces): one partition leaves 2 pieces for a second round, so two.
        assert_eq!(workers_for(16, 18, true), 2);
        assert_eq!(workers_for(2, 18, true), 1);
        assert_eq!(workers_for(96, 18, true), 7);
        assert_eq!(workers_for(18, 18, true), 1);
        assert_eq!(workers_for(0, 18, true), 1);
    }

    #[test]
    fn gpu_selections_parse_and_bad_ones_are_named() {
        assert_eq!("all".parse(), Ok(GpuSelection::All));
        assert_eq!(" ALL ".parse(), Ok(GpuSelection::All));
        assert_eq!("0".parse(), Ok(GpuSelection::List(vec![0])));
        assert_eq!("1, 0".parse(), Ok(GpuSelection::List(vec![1, 0])));
        let e = "0,x".parse::<GpuSelection>().unwrap_err();
        assert!(e.contains("`x`"), "{e}");
        assert!("".parse::<GpuSelection>().is_err());
        assert!("-1".parse::<GpuSelection>().unwrap_err().contains("`-1`"));
        assert_eq!(GpuSelection::List(vec![3]).resolve(true), vec![3]);
        assert_eq!(GpuSelection::List(vec![3, 1]).resolve(false), vec![3, 1]);
        assert_eq!(GpuSelection::All.resolve(false), vec![0]);
        assert!(!GpuSelection::All.resolve(true).is_empty());
    }

    #[test]
    fn lanes_per_gpu_parse_and_repeat_each_gpu() {
        use super::{lanes, LanesPerGpu};
        assert_eq!("auto".parse(), Ok(LanesPerGpu::Auto));
        assert_eq!("2".parse(), Ok(LanesPerGpu::Count(2)));
        for bad in ["0", "9", "two", ""] {
            let e = bad.parse::<LanesPerGpu>().unwrap_err();
            assert!(e.contains(&format!("`{bad}`")), "{e}");
        }
        let mut rng = test_utils::seeded_rng(7);
        let circuit = test_utils::RandomCircuit::new(1, 4, 8, &mut rng);
        let params = srs_loader::setup(circuit.without_values(), &mut rng).unwrap();
        assert_eq!(
            lanes(vec![1, 0], LanesPerGpu::Count(2), &params, true),
            vec![1, 1, 0, 0]
        );
        // Auto with no GPU stage, or with a GPU listed twice already: one lane each.
        assert_eq!(lanes(vec![0], LanesPerGpu::Auto, &params, false), vec![0]);
        assert_eq!(
            lanes(vec![0, 0], LanesPerGpu::Auto, &params, true),
            vec![0, 0]
        );
    }
}
