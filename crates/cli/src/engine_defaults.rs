//! Defaults shared by every command that runs the engine (`bench prove`, `porep prove`, `bench porep`, the daemon):
//! how many partitions synthesize at once, and how many may be alive.

use groth16_pipeline::EngineOptions;
use srs_loader::Parameters;

/// Synthesis workers when none is given: half the cores, 1 to 8. A partition's witness is computed on one thread
/// (the circuit's own code), so workers scale synthesis until the GPU prover is the slower stage. On the 16-core
/// H200 host, ten 2^27 PoRep-like partitions ran at 2,144 ms a partition with 4 workers and 1,786 ms with 6 (the
/// prover's pace, 1,766 ms); real 2 KiB PoRep proofs became prover-bound from 6 workers.
pub(crate) fn synthesis_workers() -> usize {
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    (cores / 2).clamp(1, 8)
}

/// Partitions in flight when none is given: one more than the workers (so one is proved while the workers
/// synthesize), and no more than `budget` bytes of partitions hold, when a budget is known.
pub(crate) fn max_in_flight(
    workers: usize,
    budget: Option<u64>,
    params: &Parameters,
    abc_by_prover: bool,
) -> usize {
    match budget {
        Some(b) => (workers + 1).min(EngineOptions::in_flight_for_budget(
            params,
            b,
            abc_by_prover,
        )),
        None => workers + 1,
    }
}

/// The memory partitions may use when no budget is given: 80 % of what the kernel reports available now (call it
/// once the parameters are resident), or `None` where that cannot be read.
pub(crate) fn memory_budget() -> Option<u64> {
    crate::report::mem_available_bytes().map(|b| b / 10 * 8)
}
