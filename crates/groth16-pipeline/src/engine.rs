//! The pipelined engine: synthesis workers feed a bounded queue that the prover drains, so the CPU synthesizes the
//! next partition while the GPU proves the current one.
//!
//! One run proves partitions `0..count` of one circuit family against one parameter set:
//! - synthesis workers (threads of their own; each synthesis is itself parallel through rayon) take partition
//!   indices in order, each after taking a slot of the in-flight budget;
//! - the prover (the calling thread, one per GPU) takes synthesized partitions from the queue, proves them, and gives
//!   the slot back once the partition's host data is freed;
//! - every proof is checked with the verifier before it is returned; a proof that fails the check is reported and
//!   the partition is synthesized again and proved on the CPU path, so no wrong proof leaves the engine.
//!
//! The budget bounds memory: at most `max_in_flight` partitions exist at once (being synthesized, queued or being
//! proved), each about [`Engine::partition_bytes`] of host memory, so the peak is the resident parameters plus that
//! product, printed by callers before they start.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc;
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

use blstrs::Scalar;
use ff::Field;
use r1cs_synth::ProvingAssignment;
use rand_core::RngCore;
use srs_loader::Parameters;

use crate::prover::{prove_checked, stage_witness, Backend, StagedWitness};
use crate::{
    prepare_verifying_key, verify_proof, Error, GpuParams, PreparedVerifyingKey, Products, Proof,
    ProofTimings, ProverOptions, Result, GPU_MSM_MIN_LOG2,
};

/// The message a caught panic carries (`panic!` with a string or a format), or "(no message)".
pub fn panic_message(panic: &(dyn std::any::Any + Send)) -> String {
    panic
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| panic.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "(no message)".into())
}

/// An error from the caller's synthesis of a partition.
pub type SynthesisError = Box<dyn std::error::Error + Send + Sync>;

/// How the engine runs.
#[derive(Clone, Debug)]
pub struct EngineOptions {
    /// Where H and the MSMs run.
    pub prover: ProverOptions,
    /// Threads that synthesize partitions concurrently (each synthesis also uses the rayon pool).
    pub synthesis_workers: usize,
    /// Threads of the engine's own synthesis pool (default: one per core). Synthesis runs there rather than in
    /// rayon's global pool, where the prover's parallel host work (staging copies, density gathers) would wait
    /// behind the synthesis jobs queued before it.
    pub synthesis_threads: Option<usize>,
    /// Run synthesis in the engine's own pool (default) or, when false, in rayon's global pool beside the prover's
    /// host work: an A/B switch.
    pub own_synthesis_pool: bool,
    /// Most partitions alive at once: being synthesized, queued, or being proved. 2 lets the CPU synthesize one
    /// partition while the GPU proves another.
    pub max_in_flight: usize,
    /// Check every proof with the verifier before returning it (and re-prove on the CPU when the check fails).
    /// Only parameters whose points are not a real setup (benchmark stand-ins) need this off.
    pub verify: bool,
    /// Testing only: the first proof of this partition is replaced by a wrong one before the check, to exercise the
    /// check and the CPU re-prove.
    pub corrupt_partition: Option<usize>,
    /// Testing only: the prover of this partition returns a device error instead of proving, as a failed kernel or
    /// an exhausted device would, to exercise the CPU fallback (with GPU stages) or the partition's clean failure.
    pub device_error_partition: Option<usize>,
    /// Hand a proved partition's vectors (a, b, c, the assignment) to the next synthesis instead of freeing them
    /// (the `_reusing` entry points pass them on as a spare): the next partition's pages are then neither faulted in
    /// nor cleared again by the kernel. Off frees them when the partition's proof is done: an A/B switch.
    pub reuse_buffers: bool,
    /// Upload each partition's witness to the device while the partition before it is being proved, when its a, b
    /// and c come from the witness on the device (see [`Engine::with_shape`]): one witness more on the device, and
    /// its upload off the GPU's critical path (on by default: on the H200, eight 2^26 PoRep-like partitions proved
    /// in 855.8 ms against 905.5 ms off). Off uploads it at the start of its own proof. A staging that fails (too
    /// little device memory, say) is logged, and the prover uploads the witness itself.
    pub stage_witness: bool,
    /// The GPUs to prove on (ordinals as the process sees them, after `CUDA_VISIBLE_DEVICES`): one lane per entry,
    /// each a prover and a stager thread of its own with the parameters (and a compiled shape's matrices) on its
    /// device, all fed from one queue, so every GPU proves its own partition at once. Default `[0]`; empty means
    /// `[0]`. An ordinal listed twice gives that device two lanes, which share its parameters. With every stage on
    /// the CPU the entries only count the prover threads.
    pub gpus: Vec<u32>,
}

impl Default for EngineOptions {
    fn default() -> Self {
        EngineOptions {
            prover: ProverOptions::default(),
            synthesis_workers: 1,
            synthesis_threads: None,
            own_synthesis_pool: true,
            max_in_flight: 2,
            verify: true,
            corrupt_partition: None,
            device_error_partition: None,
            reuse_buffers: true,
            stage_witness: true,
            gpus: vec![0],
        }
    }
}

impl EngineOptions {
    /// The in-flight count that a host-memory budget of `budget_bytes` for partitions allows (at least 1), each
    /// partition of [`Engine::partition_bytes`] (`abc_by_prover` as there).
    pub fn in_flight_for_budget(
        params: &Parameters,
        budget_bytes: u64,
        abc_by_prover: bool,
    ) -> usize {
        (budget_bytes / Engine::partition_bytes(params, abc_by_prover).max(1)).max(1) as usize
    }
}

/// What happened to one partition, in time order.
#[derive(Clone, Copy, Debug, Default)]
pub struct PartitionReport {
    /// The partition's index.
    pub partition: usize,
    /// The GPU whose lane proved it (see [`EngineOptions::gpus`]), when a stage ran on the GPU.
    pub gpu: Option<u32>,
    /// The lane that proved it: its place in [`EngineOptions::gpus`] (0 with one lane). Each lane proves one partition
    /// at a time, so a lane's reports give its own pace.
    pub lane: usize,
    /// Its synthesis (witness and a, b, c).
    pub synthesis: Duration,
    /// From the end of its synthesis to the prover taking it.
    pub queue_wait: Duration,
    /// The prover's phases (of the CPU re-prove, when there was one).
    pub timings: ProofTimings,
    /// The verifier's check of the proof (both checks when it was re-proved).
    pub verify: Duration,
    /// The first proof failed the check, or the GPU failed (`gpu_failed`), and the partition was proved again on
    /// the CPU.
    pub reproved_on_cpu: bool,
    /// The GPU prover returned a device error (out of device memory, a failed kernel; logged with the partition):
    /// the partition was proved on the CPU instead of failing.
    pub gpu_failed: bool,
    /// When the prover took it and when it was done, from the start of the run (for the GPU busy fraction).
    pub prove_start: Duration,
    /// See `prove_start`.
    pub prove_end: Duration,
}

impl PartitionReport {
    /// The report as `key=value` pairs, the body of a `CUZK_TIMING` line: partition, synthesis and queue wait, then
    /// the prover's phases, then the check.
    pub fn key_values(&self) -> Vec<(&'static str, String)> {
        let ms = |d: Duration| format!("{:.3}", d.as_secs_f64() * 1e3);
        let mut kv = vec![("partition", self.partition.to_string())];
        if let Some(gpu) = self.gpu {
            kv.push(("gpu", gpu.to_string()));
        }
        kv.push(("lane", self.lane.to_string()));
        kv.extend([
            ("synthesis_ms", ms(self.synthesis)),
            ("queue_wait_ms", ms(self.queue_wait)),
        ]);
        kv.extend(self.timings.key_values());
        kv.push(("verify_ms", ms(self.verify)));
        kv.push(("reproved_on_cpu", self.reproved_on_cpu.to_string()));
        if self.gpu_failed {
            kv.push(("gpu_failed", "true".into()));
        }
        kv
    }
}

/// One partition's result: its proof, or why there is none, with what was measured either way.
#[derive(Debug)]
pub struct PartitionOutcome {
    /// The proof (checked by the verifier when [`EngineOptions::verify`] is on).
    pub proof: Result<Proof>,
    /// Its timings.
    pub report: PartitionReport,
}

/// A run's totals.
#[derive(Clone, Copy, Debug)]
pub struct RunSummary {
    /// Wall time of the run.
    pub wall: Duration,
    /// Time the provers spent proving, summed over the lanes (the GPUs' share when the stages are on the GPU).
    pub proving: Duration,
    /// Partitions proved.
    pub proofs: usize,
    /// The in-flight bound used.
    pub max_in_flight: usize,
    /// Prover lanes (one per entry of [`EngineOptions::gpus`]).
    pub lanes: usize,
}

impl RunSummary {
    /// Fraction of the wall time the provers were proving, averaged over the lanes.
    pub fn busy_fraction(&self) -> f64 {
        self.proving.as_secs_f64() / (self.wall.as_secs_f64() * self.lanes.max(1) as f64).max(1e-9)
    }

    /// Proofs per hour at this run's rate.
    pub fn proofs_per_hour(&self) -> f64 {
        self.proofs as f64 * 3600.0 / self.wall.as_secs_f64().max(1e-9)
    }
}

/// A counting semaphore: the in-flight budget.
struct Slots {
    free: Mutex<usize>,
    freed: Condvar,
}

impl Slots {
    fn take(&self) {
        let mut free = lock(&self.free);
        while *free == 0 {
            free = self.freed.wait(free).unwrap_or_else(|e| e.into_inner());
        }
        *free -= 1;
    }

    fn give(&self) {
        *lock(&self.free) += 1;
        self.freed.notify_one();
    }
}

/// A synthesized partition on its way to the prover.
struct Synthesized {
    partition: usize,
    assignment: std::result::Result<ProvingAssignment, String>,
    synthesis: Duration,
    done_at: Instant,
}

/// A synthesized partition with its proof's randomness (r and s, then r and s of a CPU re-prove), drawn on the
/// caller's thread from the caller's generator, on its way to a lane.
struct Ticket {
    item: Synthesized,
    randomness: [Scalar; 4],
}

/// What the run's threads tell the calling thread, which draws the randomness, hears the outcomes and keeps the
/// in-flight budget.
// A few events per partition (of seconds of work each): their size does not matter.
#[allow(clippy::large_enum_variant)]
enum Event {
    Synthesized(Synthesized),
    WorkerDone,
    Proved(PartitionOutcome),
}

/// Sends [`Event::WorkerDone`] when a synthesis worker ends, even by a panic, so the run never waits for it.
struct WorkerDone(mpsc::Sender<Event>);

impl Drop for WorkerDone {
    fn drop(&mut self) {
        let _ = self.0.send(Event::WorkerDone);
    }
}

/// One prover lane: its device (when a stage runs on the GPU), the parameters there, and the compiled shape's
/// products for it. Its prover and stager threads run on that device.
struct Lane {
    // Its place in the engine's lanes (PartitionReport::lane).
    index: usize,
    device: Option<u32>,
    // The parameters on the device (kept resident, or the streamed set), for the engine's life.
    gpu: Option<Arc<GpuParams>>,
    // How a, b and c are computed for partitions whose synthesis left them to the prover.
    products: Option<Products>,
}

impl Lane {
    /// Makes the lane's device the calling thread's.
    fn enter(&self) -> Result<()> {
        match self.device {
            Some(d) => Ok(ntt_cuda::gpu::set_device(d)?),
            None => Ok(()),
        }
    }
}

impl Drop for Lane {
    /// Frees the lane's device memory with its device current (the engine may be dropped on any thread).
    fn drop(&mut self) {
        if let Some(d) = self.device {
            let (products, gpu) = (self.products.take(), self.gpu.take());
            let _ = ntt_cuda::gpu::on_device(d, move || {
                drop((products, gpu));
                // The pool's unused memory back to the device: the engine is done with it.
                let _ = ntt_cuda::gpu::trim_pool();
            });
        }
    }
}

/// Runs `f` on `device` (restoring the thread's device after), or as it is without one.
fn on_lane_device<T>(device: Option<u32>, f: impl FnOnce() -> Result<T>) -> Result<T> {
    match device {
        Some(d) => ntt_cuda::gpu::on_device(d, f)?,
        None => f(),
    }
}

/// Parameters loaded once (on the host and, for GPU MSMs, on each device) and the engine's options.
pub struct Engine {
    params: Arc<Parameters>,
    pvk: PreparedVerifyingKey,
    opts: EngineOptions,
    synthesis_pool: Option<rayon::ThreadPool>,
    lanes: Vec<Lane>,
}

impl std::fmt::Debug for Engine {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Engine")
            .field("domain", &self.params.domain_size())
            .field("opts", &self.opts)
            .finish_non_exhaustive()
    }
}

impl Engine {
    /// Checks the parameters, prepares the verifying key, and uploads the parameters to every GPU of
    /// [`EngineOptions::gpus`] (at the same time) when the MSMs run on the GPU.
    ///
    /// # Errors
    /// [`Error::Params`] for inconsistent parameters; [`Error::Ntt`] for a GPU the process does not see;
    /// [`Error::Msm`] when an upload fails (no device, or too little device memory, named by query);
    /// [`Error::ThreadPool`] when the synthesis pool cannot start.
    pub fn new(params: Arc<Parameters>, opts: EngineOptions) -> Result<Self> {
        params
            .check_consistent()
            .map_err(|source| Error::Params { circuit: 0, source })?;
        let on_gpu = opts.prover.any_on_gpu(params.domain_size());
        let msm_on_gpu = matches!(
            opts.prover
                .msm_backend
                .resolve(params.domain_size(), GPU_MSM_MIN_LOG2),
            Backend::Gpu | Backend::Check
        );
        let gpus = if opts.gpus.is_empty() {
            vec![0]
        } else {
            opts.gpus.clone()
        };
        // Each device uploads its own copy, all at once; lanes of one device share it.
        let uploads: Vec<Result<Option<Arc<GpuParams>>>> = std::thread::scope(|scope| {
            let handles: Vec<_> = gpus
                .iter()
                .map(|&d| {
                    let params = &params;
                    scope.spawn(move || {
                        on_lane_device(on_gpu.then_some(d), || {
                            msm_on_gpu.then(|| GpuParams::shared(params)).transpose()
                        })
                    })
                })
                .collect();
            handles
                .into_iter()
                .map(|h| {
                    h.join().unwrap_or_else(|p| {
                        Err(Error::Config(format!(
                            "uploading the parameters panicked: {}",
                            panic_message(&*p)
                        )))
                    })
                })
                .collect()
        });
        let lanes = gpus
            .iter()
            .zip(uploads)
            .enumerate()
            .map(|(index, (&d, gpu))| {
                Ok(Lane {
                    index,
                    device: on_gpu.then_some(d),
                    gpu: gpu?,
                    products: None,
                })
            })
            .collect::<Result<Vec<_>>>()?;
        let mut pool = rayon::ThreadPoolBuilder::new().thread_name(|i| format!("cuzk-synth-{i}"));
        if let Some(n) = opts.synthesis_threads {
            pool = pool.num_threads(n.max(1));
        }
        let synthesis_pool = if opts.own_synthesis_pool {
            Some(pool.build().map_err(|e| Error::ThreadPool(e.to_string()))?)
        } else {
            None
        };
        Ok(Engine {
            synthesis_pool,
            pvk: prepare_verifying_key(&params.vk),
            params,
            opts: EngineOptions {
                synthesis_workers: opts.synthesis_workers.max(1),
                max_in_flight: opts.max_in_flight.max(1),
                gpus,
                ..opts
            },
            lanes,
        })
    }

    /// Lets partitions leave a, b and c to the prover (synthesized by
    /// [`r1cs_synth::CompiledShape::witness_assignment`] with this `shape`): with H and the MSMs on the GPU, the
    /// shape's matrices are uploaded once here and a, b and c come from the witness on the device; otherwise the
    /// prover computes them on the host. A partition's host memory is then its witness alone
    /// ([`Engine::partition_bytes`] with `abc_by_prover`).
    ///
    /// # Errors
    /// [`Error::Ntt`] when an upload fails (device memory, or a malformed matrix).
    pub fn with_shape(mut self, shape: Arc<r1cs_synth::CompiledShape>) -> Result<Self> {
        let on_device = self.opts.prover.all_on_gpu(self.params.domain_size());
        for lane in &mut self.lanes {
            let shape = Arc::clone(&shape);
            lane.products = Some(match lane.device {
                Some(d) if on_device => on_lane_device(Some(d), || Products::upload(shape))?,
                _ => Products::host(shape),
            });
        }
        Ok(self)
    }

    /// The shape given by [`Engine::with_shape`], with where its products run (the first lane's: each GPU holds
    /// the same).
    pub fn products(&self) -> Option<&Products> {
        self.lanes[0].products.as_ref()
    }

    /// Each lane's GPU and where its parameters sit for GPU MSMs (resident, or streamed in chunks; each GPU chooses
    /// from its own free memory), for the lanes with a stage on the GPU.
    pub fn gpu_placements(&self) -> Vec<(u32, Option<crate::Placement>)> {
        self.lanes
            .iter()
            .filter_map(|l| Some((l.device?, l.gpu.as_deref().map(GpuParams::placement))))
            .collect()
    }

    /// The parameters.
    pub fn params(&self) -> &Parameters {
        &self.params
    }

    /// The options in force (worker and in-flight counts raised to at least 1).
    pub fn options(&self) -> &EngineOptions {
        &self.opts
    }

    /// Host bytes one synthesized partition holds for these parameters: the assignment (one scalar per variable)
    /// and, unless synthesis left them to the prover (`abc_by_prover`, see [`Engine::with_shape`]), a, b and c (one
    /// scalar per constraint, at most the domain size). The engine's peak is about the resident parameters plus
    /// `max_in_flight` times this.
    pub fn partition_bytes(params: &Parameters, abc_by_prover: bool) -> u64 {
        let abc = if abc_by_prover {
            0
        } else {
            3 * params.domain_size()
        };
        (abc + params.l.len() + params.vk.ic.len()) as u64 * 32
    }

    /// Host bytes of the parameters themselves (affine points, uncompressed in memory).
    pub fn params_bytes(params: &Parameters) -> u64 {
        let g1 = params.h.len() + params.l.len() + params.a.len() + params.b_g1.len();
        (g1 * std::mem::size_of::<blstrs::G1Affine>()
            + params.b_g2.len() * std::mem::size_of::<blstrs::G2Affine>()) as u64
    }

    /// Proves partitions `0..count`: `synthesize(i)` builds partition i's assignment (called from the synthesis
    /// workers, and again on the prover's thread for a CPU re-prove); `rng` draws each proof's r and s; `on_done`
    /// hears of each partition as it finishes, in proving order. Returns the outcomes in partition order.
    ///
    /// A failure is confined to its partition: a synthesis error or panic, a parameter mismatch, a CUDA error, or a
    /// check that fails even after the CPU re-prove becomes that partition's error and the run goes on.
    pub fn prove_partitions<F, E>(
        &self,
        count: usize,
        synthesize: F,
        rng: &mut impl RngCore,
        on_done: impl FnMut(&PartitionOutcome),
    ) -> (Vec<PartitionOutcome>, RunSummary)
    where
        F: Fn(usize) -> std::result::Result<ProvingAssignment, E> + Sync,
        E: Into<SynthesisError> + Send,
    {
        self.prove_partitions_reusing(count, |i, _spare| synthesize(i), rng, on_done)
    }

    /// [`Engine::prove_partitions`] with a synthesis that can write into a proved partition's memory:
    /// `synthesize(i, spare)` gets the vectors of a partition the prover is done with (empty ones when there is none
    /// yet, or when [`EngineOptions::reuse_buffers`] is off), as [`r1cs_synth::CompiledShape::synthesize_reusing`]
    /// takes them. The engine never holds more than `max_in_flight` partitions' vectors, spares included.
    pub fn prove_partitions_reusing<F, E>(
        &self,
        count: usize,
        synthesize: F,
        rng: &mut impl RngCore,
        mut on_done: impl FnMut(&PartitionOutcome),
    ) -> (Vec<PartitionOutcome>, RunSummary)
    where
        F: Fn(usize, ProvingAssignment) -> std::result::Result<ProvingAssignment, E> + Sync,
        E: Into<SynthesisError> + Send,
    {
        let next = AtomicUsize::new(0);
        let feed = || {
            let i = next.fetch_add(1, Ordering::Relaxed);
            (i < count).then_some(i)
        };
        let mut outcomes: Vec<PartitionOutcome> = Vec::with_capacity(count);
        let summary = self.prove_feed_reusing(&feed, synthesize, rng, |o| {
            on_done(&o);
            outcomes.push(o);
        });
        outcomes.sort_by_key(|o| o.report.partition);
        (outcomes, summary)
    }

    /// Proves the partitions `feed` names, until it returns `None` to every worker: a stream whose length is not
    /// known up front (the daemon feeds one job's partitions after another's, so the GPU proves one job while the
    /// CPU synthesizes the next). Each worker calls `feed` after taking a slot of the in-flight budget; `synthesize`
    /// builds the named partition (again on the prover's thread for a CPU re-prove); `on_done` takes each outcome as
    /// it finishes, in proving order. Failures are confined to their partition as in [`Engine::prove_partitions`].
    pub fn prove_feed<F, E>(
        &self,
        feed: &(dyn Fn() -> Option<usize> + Sync),
        synthesize: F,
        rng: &mut impl RngCore,
        on_done: impl FnMut(PartitionOutcome),
    ) -> RunSummary
    where
        F: Fn(usize) -> std::result::Result<ProvingAssignment, E> + Sync,
        E: Into<SynthesisError> + Send,
    {
        self.prove_feed_reusing(feed, |i, _spare| synthesize(i), rng, on_done)
    }

    /// [`Engine::prove_feed`] with a synthesis that takes a proved partition's vectors, as in
    /// [`Engine::prove_partitions_reusing`].
    pub fn prove_feed_reusing<F, E>(
        &self,
        feed: &(dyn Fn() -> Option<usize> + Sync),
        synthesize: F,
        rng: &mut impl RngCore,
        mut on_done: impl FnMut(PartitionOutcome),
    ) -> RunSummary
    where
        F: Fn(usize, ProvingAssignment) -> std::result::Result<ProvingAssignment, E> + Sync,
        E: Into<SynthesisError> + Send,
    {
        let started = Instant::now();
        let synth_one = |partition: usize,
                         spare: ProvingAssignment|
         -> std::result::Result<ProvingAssignment, String> {
            let run = || match &self.synthesis_pool {
                Some(pool) => pool.install(|| synthesize(partition, spare)),
                None => synthesize(partition, spare),
            };
            match catch_unwind(AssertUnwindSafe(run)) {
                Ok(Ok(pa)) => Ok(pa),
                Ok(Err(e)) => Err(e.into().to_string()),
                Err(panic) => Err(format!("synthesis panicked: {}", panic_message(&*panic))),
            }
        };
        let slots = Slots {
            free: Mutex::new(self.opts.max_in_flight),
            freed: Condvar::new(),
        };
        // Proved partitions' vectors, waiting for the next synthesis. A spare is put here before its partition's
        // slot is given back, and a worker takes one (when there is one) after taking a slot, so vectors are only
        // allocated while no spare exists: spares and partitions in flight together stay within max_in_flight.
        let spares: Mutex<Vec<ProvingAssignment>> = Mutex::new(Vec::new());
        let mut proving = Duration::ZERO;
        let mut proofs = 0;
        // Tickets go to whichever lane's stager is free first.
        let (tickets, ticket_queue) = mpsc::channel::<Ticket>();
        let ticket_queue = Mutex::new(ticket_queue);
        let mut tickets = Some(tickets);
        std::thread::scope(|scope| {
            let (events, heard) = mpsc::channel::<Event>();
            for _ in 0..self.opts.synthesis_workers {
                let done = WorkerDone(events.clone());
                let (slots, synth_one, spares) = (&slots, &synth_one, &spares);
                scope.spawn(move || loop {
                    slots.take();
                    let Some(partition) = feed() else {
                        slots.give();
                        break;
                    };
                    let spare = lock(spares).pop().unwrap_or_default();
                    let t = Instant::now();
                    let assignment = synth_one(partition, spare);
                    let item = Synthesized {
                        partition,
                        assignment,
                        synthesis: t.elapsed(),
                        done_at: Instant::now(),
                    };
                    if done.0.send(Event::Synthesized(item)).is_err() {
                        break;
                    }
                });
            }
            for lane in &self.lanes {
                // The stager: takes the next ticket and, when its a, b and c will come from the witness on the
                // device, uploads the witness there, then waits for its lane's prover to take both. The upload thus
                // runs while the prover proves the partition before (one staged witness per lane at most: the
                // hand-over is a rendezvous). A failed upload is logged and left to the prover, which uploads again.
                let (staged_tx, staged_rx) =
                    mpsc::sync_channel::<(Ticket, Option<StagedWitness>)>(0);
                let ticket_queue = &ticket_queue;
                scope.spawn(move || {
                    let on_device = lane.enter();
                    loop {
                        let Ok(ticket) = lock(ticket_queue).recv() else {
                            break;
                        };
                        let staged = match (&ticket.item.assignment, &on_device) {
                            (Ok(pa), Ok(())) if self.opts.stage_witness => {
                                self.stage(lane, ticket.item.partition, pa)
                            }
                            _ => None,
                        };
                        if staged_tx.send((ticket, staged)).is_err() {
                            break;
                        }
                    }
                });
                // The lane's prover. While the first partition synthesizes it has nothing to prove: it sets up what
                // the first proof would otherwise pay for.
                let events = events.clone();
                let (synth_one, spares) = (&synth_one, &spares);
                scope.spawn(move || {
                    let on_device = lane.enter();
                    // The warm-up only logs its failures; a panic there must not take the lane down either.
                    if on_device.is_ok() {
                        let warm = || crate::prover::warm_up(&self.params, &self.opts.prover);
                        if let Err(panic) = catch_unwind(AssertUnwindSafe(warm)) {
                            tracing::warn!("warm-up panicked: {}", panic_message(&*panic));
                        }
                    }
                    for (ticket, staged) in staged_rx.iter() {
                        let outcome = self.prove_ticket(
                            lane, &on_device, ticket, staged, started, synth_one, spares,
                        );
                        if events.send(Event::Proved(outcome)).is_err() {
                            break;
                        }
                    }
                });
            }
            drop(events);
            // This thread: draws each synthesized partition's randomness and hands it to the lanes, hears the
            // outcomes in the order they finish, and gives their slots back. It ends when the workers have ended
            // and every partition they synthesized is proved (or every other thread is gone).
            let mut workers = self.opts.synthesis_workers;
            let mut pending = 0usize;
            while workers > 0 || pending > 0 {
                let Ok(event) = heard.recv() else {
                    break;
                };
                match event {
                    Event::Synthesized(item) => {
                        let randomness = [(); 4].map(|()| Scalar::random(&mut *rng));
                        if let Some(t) = &tickets {
                            pending += usize::from(t.send(Ticket { item, randomness }).is_ok());
                        }
                    }
                    Event::WorkerDone => {
                        workers -= 1;
                        if workers == 0 {
                            // No more tickets: the stagers end once the queue is empty, and their provers after.
                            tickets = None;
                        }
                    }
                    Event::Proved(outcome) => {
                        pending -= 1;
                        let report = &outcome.report;
                        proving += report.prove_end - report.prove_start;
                        proofs += usize::from(outcome.proof.is_ok());
                        on_done(outcome);
                        // The partition's host data is gone (consumed by the prover) and the caller has heard of
                        // it: its slot is free.
                        slots.give();
                    }
                }
            }
            tickets = None;
        });
        RunSummary {
            wall: started.elapsed(),
            proving,
            proofs,
            max_in_flight: self.opts.max_in_flight,
            lanes: self.lanes.len(),
        }
    }

    /// Uploads a synthesized partition's witness to the lane's device ahead of its proof, when its a, b and c will
    /// come from there; a failure (or a panic) is logged, and the prover uploads the witness itself.
    fn stage(
        &self,
        lane: &Lane,
        partition: usize,
        pa: &ProvingAssignment,
    ) -> Option<StagedWitness> {
        let products = lane.products.as_ref();
        let staged = catch_unwind(AssertUnwindSafe(|| {
            stage_witness(&self.params, pa, &self.opts.prover, products)
        }));
        match staged {
            Ok(Some(Ok(w))) => Some(w),
            Ok(Some(Err(e))) => {
                tracing::warn!(
                    partition,
                    "staging the witness on the device: {e}; the prover uploads it"
                );
                None
            }
            Ok(None) => None,
            Err(panic) => {
                tracing::warn!(
                    partition,
                    "staging the witness on the device panicked: {}; the prover uploads it",
                    panic_message(&*panic)
                );
                None
            }
        }
    }

    /// Proves one ticket on its lane and reports what happened. A panic in the prover becomes the partition's
    /// error ([`Error::ProverPanicked`]); the lane goes on with the next.
    #[allow(clippy::too_many_arguments)]
    fn prove_ticket(
        &self,
        lane: &Lane,
        on_device: &Result<()>,
        ticket: Ticket,
        staged: Option<StagedWitness>,
        started: Instant,
        synth_one: &(dyn Fn(usize, ProvingAssignment) -> std::result::Result<ProvingAssignment, String>
              + Sync),
        spares: &Mutex<Vec<ProvingAssignment>>,
    ) -> PartitionOutcome {
        let Ticket { item, randomness } = ticket;
        let partition = item.partition;
        let mut report = PartitionReport {
            partition,
            gpu: lane.device,
            lane: lane.index,
            synthesis: item.synthesis,
            queue_wait: item.done_at.elapsed(),
            prove_start: started.elapsed(),
            ..Default::default()
        };
        let proof = match (item.assignment, on_device) {
            (Err(message), _) => Err(Error::Synthesis { partition, message }),
            (Ok(_), Err(e)) => Err(Error::Config(format!(
                "partition {partition}: the lane of GPU {} cannot use its device: {e}",
                lane.device.unwrap_or_default()
            ))),
            (Ok(pa), Ok(())) => {
                let again = |k| synth_one(k, ProvingAssignment::default());
                let proved = catch_unwind(AssertUnwindSafe(|| {
                    self.prove_one(lane, partition, pa, staged, randomness, &mut report, &again)
                }));
                match proved {
                    Ok((proof, spare)) => {
                        if let Some(spare) = spare.filter(|_| self.opts.reuse_buffers) {
                            lock(spares).push(spare);
                        }
                        proof
                    }
                    Err(panic) => {
                        let message = panic_message(&*panic);
                        tracing::error!(partition, "the prover panicked: {message}");
                        Err(Error::ProverPanicked { partition, message })
                    }
                }
            }
        };
        report.prove_end = started.elapsed();
        PartitionOutcome { proof, report }
    }

    /// Proves one partition with the engine's options on `lane`, checks it, and re-proves on the CPU when the check
    /// fails (`randomness`: r and s, then those of the re-prove). Returns the proof and, when the prover got that
    /// far, the partition's vectors for reuse.
    #[allow(clippy::too_many_arguments)]
    fn prove_one(
        &self,
        lane: &Lane,
        partition: usize,
        pa: ProvingAssignment,
        staged: Option<StagedWitness>,
        randomness: [Scalar; 4],
        report: &mut PartitionReport,
        synth_again: &dyn Fn(usize) -> std::result::Result<ProvingAssignment, String>,
    ) -> (Result<Proof>, Option<ProvingAssignment>) {
        let [r, s, r_again, s_again] = randomness;
        let products = lane.products.as_ref();
        let in_partition = |e: Error| match e {
            Error::Params { source, .. } => Error::Params {
                circuit: partition,
                source,
            },
            other => other,
        };
        if let Err(source) = self.params.check_matches(&pa) {
            let e = Error::Params {
                circuit: partition,
                source,
            };
            return (Err(e), None);
        }
        let inputs = pa.public_inputs().to_vec();
        let on_gpu = self.opts.prover.any_on_gpu(self.params.domain_size());
        let proved = if self.opts.device_error_partition == Some(partition) {
            Err(Error::Msm {
                what: "injected",
                source: msm_cuda::Error::Cuda {
                    code: 2,
                    message: "a device error injected by EngineOptions::device_error_partition"
                        .into(),
                },
            })
        } else {
            prove_checked(&self.params, pa, r, s, &self.opts.prover, products, staged)
        };
        match proved {
            Ok((mut proof, timings, spare)) => {
                report.timings = timings;
                if !self.opts.verify {
                    return (Ok(proof), Some(spare));
                }
                if self.opts.corrupt_partition == Some(partition) {
                    proof.c = proof.a;
                }
                let t = Instant::now();
                let ok = verify_proof(&self.pvk, &proof, &inputs);
                report.verify = t.elapsed();
                match ok {
                    Ok(true) => return (Ok(proof), Some(spare)),
                    Ok(false) => {}
                    Err(e) => return (Err(e), Some(spare)),
                }
                drop(spare);
                tracing::error!(
                    partition,
                    gpu = ?lane.device,
                    timings = ?report.timings,
                    "proof failed the verifier's check; proving the partition again on the CPU"
                );
            }
            // A device error (out of device memory, a failed kernel or copy) costs this partition its GPU proof, not
            // its proof: the CPU proves it, and the next partition tries the GPU again.
            Err(e) if on_gpu && e.is_device_error() => {
                tracing::error!(
                    partition,
                    gpu = ?lane.device,
                    "the GPU prover failed ({e}); proving the partition on the CPU"
                );
                report.gpu_failed = true;
            }
            Err(e) => return (Err(in_partition(e)), None),
        }
        report.reproved_on_cpu = true;
        let mut reprove = || -> Result<Proof> {
            let pa = synth_again(partition)
                .map_err(|message| Error::Synthesis { partition, message })?;
            let cpu = ProverOptions {
                h_backend: Backend::Cpu,
                msm_backend: Backend::Cpu,
            };
            let (proof, timings, _) =
                prove_checked(&self.params, pa, r_again, s_again, &cpu, products, None)
                    .map_err(in_partition)?;
            report.timings = timings;
            let t = Instant::now();
            let ok = verify_proof(&self.pvk, &proof, &inputs)?;
            report.verify += t.elapsed();
            if ok {
                Ok(proof)
            } else {
                Err(Error::CheckFailed { partition })
            }
        };
        (reprove(), None)
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}
