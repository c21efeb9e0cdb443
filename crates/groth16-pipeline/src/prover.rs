//! Proving one assignment: H on the CPU or the GPU, the MSMs on the CPU or against device-resident parameters.

use std::cell::Cell;
use std::collections::{BTreeMap, BTreeSet};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use blstrs::{G1Affine, G2Affine, Scalar};
use ff::Field;
use group::{prime::PrimeCurveAffine, Curve};
use msm_cuda::gpu::{
    Accumulation, DeviceBases, GpuCurve, GpuScalars, MsmOptions, MsmScratch, MsmStats,
    StreamedBases,
};
use msm_cuda::Selection;
use r1cs_synth::{CompiledShape, Density, ProvingAssignment};
use rand_core::RngCore;
use srs_loader::Parameters;

use crate::{Error, Proof, Result};

/// Where a stage (the H polynomial, the MSMs) runs.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Backend {
    /// The GPU when one is usable and the domain is at least 2^[`GPU_H_MIN_LOG2`] (H) or
    /// 2^[`GPU_MSM_MIN_LOG2`] (MSMs), else the CPU.
    #[default]
    Auto,
    /// Always the CPU.
    Cpu,
    /// Always the GPU; an error without one.
    Gpu,
    /// Both, compared: a debug switch that fails the proof on any difference.
    Check,
}

/// Which of `words` the A/B switch `var` is set to: `Some(index)`; `None` when it is unset or empty, and, with a warning
/// (once per variable and value), when it holds anything else, so that a mistyped switch never passes for a
/// measurement of it. (The kernel libraries' switches warn the same way, on stderr: `cuda-build`'s `env_switch.cuh`.)
pub(crate) fn ab_switch(var: &str, words: &[&str]) -> Option<usize> {
    ab_choice(var, std::env::var(var).ok().as_deref(), words)
}

/// [`ab_switch`] on a given value.
fn ab_choice(var: &str, value: Option<&str>, words: &[&str]) -> Option<usize> {
    let value = value.filter(|v| !v.is_empty())?;
    if let Some(i) = words.iter().position(|w| *w == value) {
        return Some(i);
    }
    static WARNED: Mutex<BTreeSet<String>> = Mutex::new(BTreeSet::new());
    let first = WARNED
        .lock()
        .map(|mut seen| seen.insert(format!("{var}={value}")))
        .unwrap_or(true);
    if first {
        tracing::warn!(
            "{var}={value} ignored (expected {}); the default is used",
            words.join(" or ")
        );
    }
    None
}

/// The H polynomial's backend (the name the first releases used).
pub type HBackend = Backend;

impl Backend {
    /// From the environment variable `var` (auto, cpu, gpu, check); auto when unset.
    ///
    /// # Errors
    /// An unknown value, named.
    pub fn from_env_var(var: &str) -> std::result::Result<Self, String> {
        match std::env::var(var) {
            Err(_) => Ok(Backend::Auto),
            Ok(v) => v.parse().map_err(|e| format!("{var}: {e}")),
        }
    }

    /// The H backend from `CUZK_H_BACKEND`.
    ///
    /// # Errors
    /// An unknown value, named.
    pub fn from_env() -> std::result::Result<Self, String> {
        Self::from_env_var("CUZK_H_BACKEND")
    }

    /// Resolves `Auto` for a domain of `len` points: the GPU from 2^`min_log2` when a device is usable.
    pub(crate) fn resolve(self, len: usize, min_log2: u32) -> Backend {
        match self {
            Backend::Auto if len >= 1 << min_log2 && ntt_cuda::gpu::device().is_ok() => {
                Backend::Gpu
            }
            Backend::Auto => Backend::Cpu,
            other => other,
        }
    }

    fn name(self) -> &'static str {
        match self {
            Backend::Auto => "auto",
            Backend::Cpu => "cpu",
            Backend::Gpu => "gpu",
            Backend::Check => "cpu+gpu",
        }
    }
}

impl std::str::FromStr for Backend {
    type Err = String;
    fn from_str(s: &str) -> std::result::Result<Self, String> {
        match s {
            "auto" => Ok(Backend::Auto),
            "cpu" => Ok(Backend::Cpu),
            "gpu" => Ok(Backend::Gpu),
            "check" => Ok(Backend::Check),
            other => Err(format!(
                "unknown backend {other:?}: expected auto, cpu, gpu or check"
            )),
        }
    }
}

/// Below 2^18 constraints [`HBackend::Auto`] keeps H on the CPU: measured on the H200 host (2026-11-30), H of a 2^16
/// domain took 25 ms on its 16 cores against 245 ms through the GPU in a fresh process (context start-up, allocations,
/// uploads), while at 2^20 the CPU takes 464 ms and the GPU kernels 4.4 ms.
pub const GPU_H_MIN_LOG2: u32 = 18;

/// Below 2^18 constraints [`Backend::Auto`] keeps the MSMs on the CPU too: a one-shot process pays the device's
/// start-up and the parameter upload, which small circuits do not win back.
pub const GPU_MSM_MIN_LOG2: u32 = 18;

/// How to prove.
#[derive(Clone, Copy, Debug, Default)]
pub struct ProverOptions {
    /// Where the H polynomial runs.
    pub h_backend: Backend,
    /// Where the MSMs run (H, L, A, B in G1 and G2). On the GPU the parameters are uploaded once and stay resident
    /// for every later proof with the same parameters ([`GpuParams::shared`]).
    pub msm_backend: Backend,
}

impl ProverOptions {
    /// Whether H or the MSMs (or both) run on the GPU, alone or checked against the CPU, for a domain of
    /// `domain_size` points: then a device error is the GPU's, and the CPU can prove instead.
    pub fn any_on_gpu(&self, domain_size: usize) -> bool {
        self.h_backend.resolve(domain_size, GPU_H_MIN_LOG2) != Backend::Cpu
            || self.msm_backend.resolve(domain_size, GPU_MSM_MIN_LOG2) != Backend::Cpu
    }

    /// Whether both H and the MSMs run on the GPU for a domain of `domain_size` points: then a, b and c left to the
    /// prover come from the witness on the device ([`Products`]).
    pub fn all_on_gpu(&self, domain_size: usize) -> bool {
        self.h_backend.resolve(domain_size, GPU_H_MIN_LOG2) == Backend::Gpu
            && self.msm_backend.resolve(domain_size, GPU_MSM_MIN_LOG2) == Backend::Gpu
    }
}

/// A parameter set on the GPU: the H, L, A and B_G1 queries and B_G2, sharing one MSM scratch. Resident when the
/// device's free memory holds them beside a proof's working memory, else streamed from host memory chunk by chunk
/// for each MSM ([`Placement`]).
#[derive(Debug)]
pub struct GpuParams {
    h: GpuQuery<G1Affine>,
    l: GpuQuery<G1Affine>,
    a: GpuQuery<G1Affine>,
    b_g1: GpuQuery<G1Affine>,
    b_g2: GpuQuery<G2Affine>,
    placement: Placement,
    key: u64,
}

/// One query on the GPU: resident, or streamed from the host copy the prover passes to each MSM.
#[derive(Debug)]
enum GpuQuery<A: GpuCurve> {
    Resident(DeviceBases<A>),
    Streamed(StreamedBases<A>),
}

impl<A: GpuCurve> GpuQuery<A> {
    /// The MSM of `scalars` against the bases `offset ..` of this query, whose host copy is `host`.
    fn msm(
        &self,
        host: &[A],
        offset: usize,
        scalars: GpuScalars<'_>,
        opts: &MsmOptions,
    ) -> msm_cuda::Result<(A::Projective, MsmStats)> {
        match self {
            GpuQuery::Resident(b) => b.msm(offset, scalars, opts),
            GpuQuery::Streamed(b) => b.msm(host, offset, scalars, opts),
        }
    }
}

/// Where a parameter set's points live while GPU MSMs run against them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Placement {
    /// Uploaded once and kept in device memory for every proof (the fast way: nothing crosses the bus per proof).
    Resident,
    /// Kept in host memory and streamed to the device in chunks of this many points for each MSM, two chunk buffers
    /// at a time: for cards whose memory cannot hold the set beside a proof's working memory.
    Streamed {
        /// Points per chunk.
        chunk: usize,
    },
}

impl std::fmt::Display for Placement {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Placement::Resident => f.write_str("resident"),
            Placement::Streamed { chunk } => write!(f, "streamed in chunks of {chunk} points"),
        }
    }
}

/// Device bytes a proof of a `domain`-point domain may need beside resident parameters: a, b, c and h on the device
/// and the NTTs' room (eight scalars a point), plus 4 GiB for the MSM scratch and the compiled shape's matrices.
/// The MSM's batch-affine rounds size themselves to what is free, so this is a floor, not their whole use.
pub fn gpu_working_bytes(domain: usize) -> u64 {
    domain as u64 * 32 * 8 + (4 << 30)
}

/// Prover lanes (see `EngineOptions::gpus`) the calling thread's GPU can run at once for `params`, at most `max`:
/// the parameters resident once (lanes of a device share them) plus one proof's working memory
/// ([`gpu_working_bytes`]) per lane, within the device's free memory and `CUZK_GPU_MEMORY_GIB`. 1 when the
/// parameters would not be resident (or `CUZK_GPU_PARAMS` forces streaming). Two lanes on one H200 proved 2^27
/// partitions at 1,414.7 ms each against 1,597.8 ms with one (one lane's host work and small MSMs overlap the other's
/// kernels), with 125–131 GiB of the card in use.
///
/// # Errors
/// [`Error::Ntt`] without a GPU; [`Error::Config`] for a bad `CUZK_GPU_*` value.
pub fn lanes_that_fit(params: &Parameters, max: usize) -> Result<usize> {
    if matches!(placement_from_env()?, Some(Placement::Streamed { .. })) {
        return Ok(1);
    }
    Ok(lanes_within(
        usable_device_bytes()?,
        resident_bytes(params),
        gpu_working_bytes(params.domain_size()),
        max,
    ))
}

/// [`lanes_that_fit`] of the numbers: lanes of `working` bytes each beside `resident` bytes in `usable`, 1 to `max`.
fn lanes_within(usable: u64, resident: u64, working: u64, max: usize) -> usize {
    let room = usable.saturating_sub(resident) / working.max(1);
    (room as usize).clamp(1, max.max(1))
}

/// Points per streamed chunk when `budget` device bytes are free beyond a proof's working memory: the two chunk
/// buffers of G1 points take a quarter of it (G2's, twice the bytes a point, half), between 2^16 and 2^26 points.
pub fn streamed_chunk_points(budget: u64) -> usize {
    let per_point = 2 * 4 * std::mem::size_of::<G1Affine>() as u64;
    (budget / per_point).clamp(1 << 16, 1 << 26) as usize
}

/// The placement `CUZK_GPU_PARAMS` asks for (auto when unset) and the chunk `CUZK_GPU_CHUNK_POINTS` sets for streamed
/// sets: `None` for auto.
///
/// # Errors
/// An unknown value, named.
fn placement_from_env() -> Result<Option<Placement>> {
    parse_placement(
        std::env::var("CUZK_GPU_PARAMS").ok().as_deref(),
        std::env::var("CUZK_GPU_CHUNK_POINTS").ok().as_deref(),
    )
}

/// The cap `CUZK_GPU_MEMORY_GIB` puts on the card's whole use (GiB, fractions allowed), when set: a card shared with
/// other work, or a smaller card's plan tried on a larger one. The parameters' placement plans with it, and so do the
/// MSM's batch-affine rounds (msm-cuda reads the variable itself).
fn parse_memory_limit(gib: Option<&str>) -> Result<Option<u64>> {
    match gib {
        None => Ok(None),
        Some(v) => match v.parse::<f64>() {
            Ok(g) if g.is_finite() && g > 0.0 => Ok(Some((g * f64::from(1u32 << 30)) as u64)),
            _ => Err(Error::Config(format!(
                "CUZK_GPU_MEMORY_GIB={v:?}: expected a positive number of GiB"
            ))),
        },
    }
}

/// Device bytes the process may still take: `free`, or less when `cap` bounds the whole card's use (the cap less what
/// is in use now). msm-cuda's batch-affine rounds size their working memory the same way.
fn usable_free(free: u64, total: u64, cap: Option<u64>) -> u64 {
    match cap {
        None => free,
        Some(cap) => {
            let used = total.saturating_sub(free);
            cap.saturating_sub(used).min(free)
        }
    }
}

/// Device bytes the calling thread's GPU may still take: its free memory, within `CUZK_GPU_MEMORY_GIB`.
///
/// # Errors
/// [`Error::Ntt`] without a GPU; [`Error::Config`] for a bad cap.
fn usable_device_bytes() -> Result<u64> {
    let (free, total) = ntt_cuda::gpu::mem_info()?;
    let cap = parse_memory_limit(std::env::var("CUZK_GPU_MEMORY_GIB").ok().as_deref())?;
    Ok(usable_free(free, total, cap))
}

/// [`placement_from_env`] of the two variables' values.
fn parse_placement(params: Option<&str>, chunk: Option<&str>) -> Result<Option<Placement>> {
    let bad = |what: String| Error::Config(what);
    let chunk = match chunk {
        None => None,
        Some(v) => match v.parse::<usize>() {
            Ok(n) if n > 0 => Some(n),
            _ => {
                return Err(bad(format!(
                    "CUZK_GPU_CHUNK_POINTS={v:?}: expected a positive number of points"
                )))
            }
        },
    };
    match params {
        None | Some("auto") => Ok(chunk.map(|chunk| Placement::Streamed { chunk })),
        Some("resident") => Ok(Some(Placement::Resident)),
        Some("streamed") => Ok(Some(Placement::Streamed {
            chunk: chunk.unwrap_or(1 << 22),
        })),
        Some(other) => Err(bad(format!(
            "CUZK_GPU_PARAMS={other:?}: expected auto, resident or streamed"
        ))),
    }
}

/// Device bytes the five queries take resident.
pub fn resident_bytes(p: &Parameters) -> u64 {
    let g1 = (p.h.len() + p.l.len() + p.a.len() + p.b_g1.len()) as u64;
    g1 * std::mem::size_of::<G1Affine>() as u64
        + p.b_g2.len() as u64 * std::mem::size_of::<G2Affine>() as u64
}

/// Identifies a parameter set without hashing gigabytes: query lengths, δ (fresh randomness of each setup) and the
/// first and last point of each query.
fn params_key(p: &Parameters) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut h = std::collections::hash_map::DefaultHasher::new();
    for q in [&p.h, &p.l, &p.a, &p.b_g1] {
        q.len().hash(&mut h);
        for pt in [q.first(), q.last()].into_iter().flatten() {
            pt.to_compressed().hash(&mut h);
        }
    }
    p.b_g2.len().hash(&mut h);
    for pt in [p.b_g2.first(), p.b_g2.last()].into_iter().flatten() {
        pt.to_compressed().hash(&mut h);
    }
    p.vk.delta_g1.to_compressed().hash(&mut h);
    p.vk.delta_g2.to_compressed().hash(&mut h);
    h.finish()
}

impl GpuParams {
    /// Puts the five queries on the GPU: resident when the device's free memory holds them and a proof's working
    /// memory ([`gpu_working_bytes`]), else streamed ([`Placement::Streamed`], chunks of
    /// [`streamed_chunk_points`]). `CUZK_GPU_PARAMS=resident|streamed` forces either, `CUZK_GPU_CHUNK_POINTS=N` sets
    /// the streamed chunk (and alone asks for streaming), `CUZK_GPU_MEMORY_GIB=G` caps the free memory the choice
    /// plans with.
    ///
    /// # Errors
    /// [`Error::Msm`] without a GPU or when device memory runs out (naming the query); [`Error::Config`] for a bad
    /// `CUZK_GPU_*` value.
    pub fn upload(params: &Parameters) -> Result<Self> {
        let placement = match placement_from_env()? {
            Some(p) => p,
            None => {
                let free = usable_device_bytes()?;
                let need = resident_bytes(params) + gpu_working_bytes(params.domain_size());
                if need <= free {
                    Placement::Resident
                } else {
                    Placement::Streamed {
                        chunk: streamed_chunk_points(
                            free.saturating_sub(gpu_working_bytes(params.domain_size())),
                        ),
                    }
                }
            }
        };
        Self::place(params, placement)
    }

    /// Puts the five queries on the GPU as `placement` says.
    ///
    /// # Errors
    /// As [`GpuParams::upload`].
    pub fn place(params: &Parameters, placement: Placement) -> Result<Self> {
        // The five MSMs of a proof run one after another: one scratch serves them all.
        let scratch = MsmScratch::new().map_err(msm_err("scratch"))?;
        fn query<A: GpuCurve>(
            points: &[A],
            placement: Placement,
            scratch: &Arc<MsmScratch>,
            what: &'static str,
        ) -> Result<GpuQuery<A>> {
            match placement {
                Placement::Resident => DeviceBases::upload_sharing(points, scratch)
                    .map(GpuQuery::Resident)
                    .map_err(msm_err(what)),
                Placement::Streamed { chunk } => StreamedBases::new(chunk, scratch)
                    .map(GpuQuery::Streamed)
                    .map_err(msm_err(what)),
            }
        }
        let started = Instant::now();
        let gp = GpuParams {
            h: query(&params.h, placement, &scratch, "H upload")?,
            l: query(&params.l, placement, &scratch, "L upload")?,
            a: query(&params.a, placement, &scratch, "A upload")?,
            b_g1: query(&params.b_g1, placement, &scratch, "B_G1 upload")?,
            b_g2: query(&params.b_g2, placement, &scratch, "B_G2 upload")?,
            placement,
            key: params_key(params),
        };
        tracing::info!(
            "GPU parameters {placement}: {:.0} MiB of points, {:.1} s",
            resident_bytes(params) as f64 / f64::from(1 << 20),
            started.elapsed().as_secs_f64()
        );
        Ok(gp)
    }

    /// Where the points are.
    pub fn placement(&self) -> Placement {
        self.placement
    }

    /// The calling thread's device's copy of `params` (see [`ntt_cuda::gpu::set_device`]): uploaded on first use,
    /// kept for later proofs with the same parameters, replaced (the old copy freed first) when another set comes.
    /// Each device holds its own copy; devices upload theirs at the same time.
    ///
    /// # Errors
    /// As [`GpuParams::upload`].
    pub fn shared(params: &Parameters) -> Result<Arc<GpuParams>> {
        type Slot = Arc<Mutex<Option<Arc<GpuParams>>>>;
        static CACHE: Mutex<BTreeMap<u32, Slot>> = Mutex::new(BTreeMap::new());
        let device = ntt_cuda::gpu::current_device()?;
        let slot = Arc::clone(
            CACHE
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .entry(device)
                .or_default(),
        );
        let key = params_key(params);
        let mut slot = slot.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(p) = slot.as_ref().filter(|p| p.key == key) {
            return Ok(Arc::clone(p));
        }
        *slot = None;
        let p = Arc::new(GpuParams::upload(params)?);
        *slot = Some(Arc::clone(&p));
        Ok(p)
    }
}

/// Where the time of one proof went.
#[derive(Clone, Copy, Debug, Default)]
pub struct ProofTimings {
    /// Which backend computed H: "cpu", "gpu" or "cpu+gpu" (checked).
    pub h_backend: &'static str,
    /// Which backend ran the MSMs, named the same way.
    pub msm_backend: &'static str,
    /// With the MSMs on the GPU, where the parameters were: "resident" or "streamed" ([`Placement`]); empty otherwise.
    pub gpu_params: &'static str,
    /// Of the phases below, the time spent moving a, b, c (or the witness) and the MSM scalars to the device.
    pub upload: Duration,
    /// The witness's upload when it was staged on the device ahead of the proof (by the engine, while the previous
    /// partition was being proved): outside the phases below and their total.
    pub staged_upload: Duration,
    /// a, b and c from the witness, when synthesis left them to the prover: on the device (the witness's upload
    /// and three sparse products) or on the host.
    pub products: Duration,
    /// H polynomial (three inverse NTTs, three coset NTTs, pointwise, one inverse coset NTT).
    pub h_poly: Duration,
    /// H MSM.
    pub msm_h: Duration,
    /// L MSM.
    pub msm_l: Duration,
    /// A MSM (inputs and aux).
    pub msm_a: Duration,
    /// B MSM in G1.
    pub msm_b_g1: Duration,
    /// B MSM in G2.
    pub msm_b_g2: Duration,
    /// Combining the MSMs with α, β, δ, r and s.
    pub assembly: Duration,
    /// What the GPU MSMs chose (none where an MSM ran on the CPU).
    pub msm_choices: MsmChoices,
}

/// The window and the bucket summation one GPU MSM ran with (for A and B_G1, their aux part, the large one).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MsmChoice {
    /// Bits per signed digit.
    pub window: u32,
    /// How the buckets were summed.
    pub accumulation: Accumulation,
    /// Batch-affine rounds (0 with XYZZ).
    pub affine_rounds: u32,
}

/// Where the GPU MSM calls leave their [`MsmChoice`] while the timing closures hold the proof's timings.
#[derive(Default)]
struct NotedChoices {
    h: Cell<Option<MsmChoice>>,
    l: Cell<Option<MsmChoice>>,
    a: Cell<Option<MsmChoice>>,
    b_g1: Cell<Option<MsmChoice>>,
}

/// [`MsmChoice`] of each G1 MSM of a proof.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct MsmChoices {
    /// The H MSM.
    pub h: Option<MsmChoice>,
    /// The L MSM.
    pub l: Option<MsmChoice>,
    /// The A MSM's aux part.
    pub a: Option<MsmChoice>,
    /// The B_G1 MSM's aux part.
    pub b_g1: Option<MsmChoice>,
}

impl ProofTimings {
    /// The phases as `key=value` pairs (milliseconds with three decimals, backends by name), in proving order, then
    /// each GPU MSM's window, accumulation and batch-affine rounds: the body of a `CUZK_TIMING` line.
    pub fn key_values(&self) -> Vec<(&'static str, String)> {
        let ms = |d: Duration| format!("{:.3}", d.as_secs_f64() * 1e3);
        let mut kv = vec![
            ("h_backend", self.h_backend.to_string()),
            ("msm_backend", self.msm_backend.to_string()),
        ];
        if !self.gpu_params.is_empty() {
            kv.push(("gpu_params", self.gpu_params.to_string()));
        }
        kv.extend([
            ("upload_ms", ms(self.upload)),
            ("staged_upload_ms", ms(self.staged_upload)),
            ("products_ms", ms(self.products)),
            ("h_ms", ms(self.h_poly)),
            ("msm_h_ms", ms(self.msm_h)),
            ("msm_l_ms", ms(self.msm_l)),
            ("msm_a_ms", ms(self.msm_a)),
            ("msm_b_g1_ms", ms(self.msm_b_g1)),
            ("msm_b_g2_ms", ms(self.msm_b_g2)),
            ("assembly_ms", ms(self.assembly)),
            ("prove_ms", ms(self.total())),
        ]);
        let c = &self.msm_choices;
        for (keys, choice) in [
            (
                ["msm_h_window", "msm_h_accumulation", "msm_h_affine_rounds"],
                c.h,
            ),
            (
                ["msm_l_window", "msm_l_accumulation", "msm_l_affine_rounds"],
                c.l,
            ),
            (
                ["msm_a_window", "msm_a_accumulation", "msm_a_affine_rounds"],
                c.a,
            ),
            (
                [
                    "msm_b_g1_window",
                    "msm_b_g1_accumulation",
                    "msm_b_g1_affine_rounds",
                ],
                c.b_g1,
            ),
        ] {
            if let Some(m) = choice {
                kv.push((keys[0], m.window.to_string()));
                kv.push((keys[1], m.accumulation.name().to_string()));
                kv.push((keys[2], m.affine_rounds.to_string()));
            }
        }
        kv
    }

    /// The sum of the phases.
    pub fn total(&self) -> Duration {
        self.products
            + self.h_poly
            + self.msm_h
            + self.msm_l
            + self.msm_a
            + self.msm_b_g1
            + self.msm_b_g2
            + self.assembly
    }
}

/// How the prover computes a, b and c for assignments that left them to it
/// ([`r1cs_synth::CompiledShape::witness_assignment`]): the circuit's compiled shape, and its matrices on the device
/// for a prover whose H and MSMs run on the GPU. There a, b and c come from the witness the MSMs upload anyway, by
/// three sparse products on the device; elsewhere from the shape on the host, before the H stage.
#[derive(Debug)]
pub struct Products {
    shape: Arc<CompiledShape>,
    device: Option<DeviceShape>,
}

/// A compiled shape's matrices and coefficient table on the device.
#[derive(Debug)]
struct DeviceShape {
    matrices: [ntt_cuda::gpu::DeviceCsr; 3],
    coeffs: ntt_cuda::gpu::DeviceCoeffs,
}

impl Products {
    /// a, b and c on the host, from `shape`.
    pub fn host(shape: Arc<CompiledShape>) -> Self {
        Products {
            shape,
            device: None,
        }
    }

    /// `shape` with its matrices uploaded (checked first): a, b and c on the device when H and the MSMs run there.
    ///
    /// # Errors
    /// [`Error::Ntt`] without a device, for a malformed matrix, or when device memory runs out.
    pub fn upload(shape: Arc<CompiledShape>) -> Result<Self> {
        let columns = shape.num_inputs + shape.num_aux;
        let table = shape.coeffs.len();
        let up = |m: &r1cs_synth::CsrMatrix| {
            ntt_cuda::gpu::DeviceCsr::upload(&m.row_ptr, &m.cols, &m.coeffs, columns, table)
        };
        let device = DeviceShape {
            matrices: [up(&shape.a)?, up(&shape.b)?, up(&shape.c)?],
            coeffs: ntt_cuda::gpu::DeviceCoeffs::upload(&shape.coeffs)?,
        };
        Ok(Products {
            shape,
            device: Some(device),
        })
    }

    /// The compiled shape.
    pub fn shape(&self) -> &CompiledShape {
        &self.shape
    }

    /// Device bytes of the uploaded matrices (0 on the host).
    pub fn device_bytes(&self) -> usize {
        self.device.as_ref().map_or(0, |d| {
            d.matrices.iter().map(|m| m.device_bytes()).sum::<usize>() + d.coeffs.len() * 32
        })
    }
}

/// The witness on the device (aux first, then the inputs: the MSMs read aux from the buffer's start) and a, b, c of
/// `n` scalars each (zero past the constraints), by the shape's sparse products.
/// `staged` is the witness uploaded ahead of the proof ([`stage_witness`]); without it the witness is uploaded here.
fn products_on_device(
    d: &DeviceShape,
    inputs: &[Scalar],
    aux: &[Scalar],
    n: usize,
    staged: Option<StagedWitness>,
    upload: &Cell<Duration>,
) -> Result<(
    ntt_cuda::gpu::DeviceScalars,
    [ntt_cuda::gpu::DeviceScalars; 3],
)> {
    use ntt_cuda::gpu::Stream;
    let values = match staged {
        Some(w) => w.values,
        None => {
            let t = Instant::now();
            let values = upload_witness(inputs, aux)?;
            upload.set(upload.get() + t.elapsed());
            values
        }
    };
    let stream = Stream::new()?;
    let [ma, mb, mc] = &d.matrices;
    let rotate = inputs.len();
    let abc = [
        ntt_cuda::gpu::spmv_new(ma, &d.coeffs, &values, rotate, n, &stream)?,
        ntt_cuda::gpu::spmv_new(mb, &d.coeffs, &values, rotate, n, &stream)?,
        ntt_cuda::gpu::spmv_new(mc, &d.coeffs, &values, rotate, n, &stream)?,
    ];
    stream.synchronize()?;
    Ok((values, abc))
}

/// The witness on the device: aux first, then the inputs.
fn upload_witness(inputs: &[Scalar], aux: &[Scalar]) -> Result<ntt_cuda::gpu::DeviceScalars> {
    let up_err = |source| Error::Upload {
        what: "witness",
        source,
    };
    let mut values = ntt_cuda::gpu::upload_staged(aux, aux.len() + inputs.len()).map_err(up_err)?;
    let stream = ntt_cuda::gpu::Stream::new()?;
    values
        .write_at(aux.len(), inputs, &stream)
        .map_err(up_err)?;
    stream.synchronize()?;
    Ok(values)
}

/// A partition's witness on the device (aux first, then the inputs), uploaded ahead of its proof by
/// [`stage_witness`], so that the upload overlaps the previous partition's proof instead of adding to this one's.
pub(crate) struct StagedWitness {
    values: ntt_cuda::gpu::DeviceScalars,
    inputs: usize,
    aux: usize,
    took: Duration,
}

/// H's and the MSMs' backends for a proof against `params`, as the prover resolves them: both by the domain's size,
/// as `ProverOptions::any_on_gpu` and `all_on_gpu` do. (H went by the constraint count until 2026-12-06, so a circuit
/// of fewer than 2^18 constraints in a 2^18 domain took H to the CPU while `all_on_gpu` said the GPU.)
fn backends(params: &Parameters, opts: &ProverOptions) -> (Backend, Backend) {
    (
        opts.h_backend.resolve(params.domain_size(), GPU_H_MIN_LOG2),
        opts.msm_backend
            .resolve(params.domain_size(), GPU_MSM_MIN_LOG2),
    )
}

/// The device shape that computes `pa`'s a, b and c, when `pa` left them to the prover and H and the MSMs both run
/// on the GPU with the shape's matrices there (else `None`: a, b and c come from elsewhere).
fn device_shape_for<'a>(
    params: &Parameters,
    pa: &ProvingAssignment,
    opts: &ProverOptions,
    products: Option<&'a Products>,
) -> Option<&'a DeviceShape> {
    let (h, msm) = backends(params, opts);
    match products?.device.as_ref() {
        Some(d) if pa.products_deferred() && h == Backend::Gpu && msm == Backend::Gpu => Some(d),
        _ => None,
    }
}

/// Uploads `pa`'s witness for [`prove_checked`] to use, when it would compute a, b and c from it on the device;
/// `None` when it would not (or the witness does not match the shape: the proof reports that).
pub(crate) fn stage_witness(
    params: &Parameters,
    pa: &ProvingAssignment,
    opts: &ProverOptions,
    products: Option<&Products>,
) -> Option<Result<StagedWitness>> {
    let p = products?;
    device_shape_for(params, pa, opts, Some(p))?;
    p.shape.check_counts(pa).ok()?;
    let t = Instant::now();
    let (inputs, aux) = (pa.input_assignment.as_slice(), pa.aux_assignment.as_slice());
    Some(upload_witness(inputs, aux).map(|values| StagedWitness {
        values,
        inputs: inputs.len(),
        aux: aux.len(),
        took: t.elapsed(),
    }))
}

fn selection(d: &Density) -> Selection<'_> {
    Selection {
        words: d.words(),
        len: d.len(),
    }
}

fn msm_err(what: &'static str) -> impl FnOnce(msm_cuda::Error) -> Error {
    move |source| Error::Msm { what, source }
}

fn timed<T>(slot: &mut Duration, f: impl FnOnce() -> T) -> T {
    let t = Instant::now();
    let out = f();
    *slot = t.elapsed();
    out
}

/// Proves each assignment against one parameter set, with fresh r and s per proof from `rng`.
///
/// Parameters are checked against every assignment first (sizes and densities), so a mismatch fails before any proving work.
///
/// # Errors
/// [`Error::Params`] naming the circuit whose sizes do not fit; other errors from the NTT or MSM stages.
pub fn prove(
    params: &Parameters,
    assignments: Vec<ProvingAssignment>,
    rng: &mut impl RngCore,
) -> Result<Vec<(Proof, ProofTimings)>> {
    prove_with(params, assignments, rng, &ProverOptions::default())
}

/// As [`prove`], with options.
///
/// # Errors
/// As [`prove`]; with [`HBackend::Gpu`], [`Error::Ntt`] without a GPU; with [`HBackend::Check`], [`Error::DualCheck`] on a difference.
pub fn prove_with(
    params: &Parameters,
    assignments: Vec<ProvingAssignment>,
    rng: &mut impl RngCore,
    opts: &ProverOptions,
) -> Result<Vec<(Proof, ProofTimings)>> {
    params
        .check_consistent()
        .map_err(|source| Error::Params { circuit: 0, source })?;
    for (circuit, pa) in assignments.iter().enumerate() {
        params
            .check_matches(pa)
            .map_err(|source| Error::Params { circuit, source })?;
    }
    assignments
        .into_iter()
        .map(|pa| {
            let r = Scalar::random(&mut *rng);
            let s = Scalar::random(&mut *rng);
            prove_checked(params, pa, r, s, opts, None, None).map(|(proof, t, _)| (proof, t))
        })
        .collect()
}

/// Proves one assignment with the given randomizers: deterministic, for tests against bellperson's `create_proof`.
///
/// # Errors
/// As [`prove`].
pub fn prove_one_with_randomness(
    params: &Parameters,
    pa: ProvingAssignment,
    r: Scalar,
    s: Scalar,
    opts: &ProverOptions,
) -> Result<(Proof, ProofTimings)> {
    params
        .check_consistent()
        .map_err(|source| Error::Params { circuit: 0, source })?;
    params
        .check_matches(&pa)
        .map_err(|source| Error::Params { circuit: 0, source })?;
    prove_checked(params, pa, r, s, opts, None, None).map(|(proof, t, _)| (proof, t))
}

/// h's coefficients: on the host, or left on the device by the GPU (whose first m − 1 values are h) for the H MSM.
enum HValues {
    Host(Vec<Scalar>),
    Device(ntt_cuda::gpu::DeviceScalars),
}

/// The H polynomial on a resolved backend; with `keep_on_device` the GPU path leaves h where the H MSM reads it.
/// Also returns a, b and c where the backend only read them (the GPU's; the CPU transforms them in place), for reuse.
fn h_poly(
    a: Vec<Scalar>,
    b: Vec<Scalar>,
    c: Vec<Scalar>,
    backend: Backend,
    keep_on_device: bool,
    upload: &Cell<Duration>,
) -> Result<(HValues, Option<[Vec<Scalar>; 3]>)> {
    let domain = |len| -> Result<Arc<ntt_cuda::gpu::GpuDomain>> {
        let log_n = ntt_cuda::log_size_for(len)?;
        Ok(ntt_cuda::gpu::GpuDomain::shared(log_n)?)
    };
    // a, b and c are pageable vectors: by default they go through pinned staging chunks (a parallel copy
    // overlapping the DMA); CUZK_H_UPLOAD=pageable uses the driver's pageable path instead, for A/B runs.
    // CUZK_H_UPLOAD=register page-locks a, b and c in place for this proof instead (cudaHostRegister: the B1 switch).
    let on_device = |a: &[Scalar], b: &[Scalar], c: &[Scalar]| {
        let domain = domain(a.len())?;
        match ab_switch("CUZK_H_UPLOAD", &["pageable", "register"]) {
            Some(0) => return Ok(ntt_cuda::gpu::h_polynomial_on_device(&domain, a, b, c)?),
            Some(_) => {
                let t = Instant::now();
                let pin = |v| {
                    ntt_cuda::gpu::Registered::new(v).map_err(|source| Error::Upload {
                        what: "a, b, c (registering)",
                        source,
                    })
                };
                let pinned = (pin(a)?, pin(b)?, pin(c)?);
                upload.set(upload.get() + t.elapsed());
                let h = ntt_cuda::gpu::h_polynomial_on_device(&domain, a, b, c)?;
                let t = Instant::now();
                drop(pinned);
                upload.set(upload.get() + t.elapsed());
                return Ok(h);
            }
            None => {}
        }
        ntt_cuda::check_abc_lengths(a, b, c)?;
        let t = Instant::now();
        let n = domain.size();
        let up = |v: &[Scalar]| {
            ntt_cuda::gpu::upload_staged(v, n).map_err(|source| Error::Upload {
                what: "a, b, c",
                source,
            })
        };
        let (da, db, dc) = (up(a)?, up(b)?, up(c)?);
        upload.set(upload.get() + t.elapsed());
        Ok::<_, Error>(ntt_cuda::gpu::h_polynomial_of_device_inputs(
            &domain, da, db, dc,
        )?)
    };
    let gpu = |a: &[Scalar], b: &[Scalar], c: &[Scalar]| -> Result<Vec<Scalar>> {
        // h's buffer is the domain's size; its first n - 1 values are h.
        let (h, stream) = on_device(a, b, c)?;
        Ok(h.to_host(h.len() - 1, &stream)?)
    };
    let h = match backend {
        Backend::Gpu if keep_on_device => HValues::Device(on_device(&a, &b, &c)?.0),
        Backend::Gpu => HValues::Host(gpu(&a, &b, &c)?),
        Backend::Check => {
            let on_gpu = gpu(&a, &b, &c)?;
            let on_cpu = ntt_cuda::h_polynomial(a, b, c)?;
            let first_difference =
                (0..on_cpu.len().max(on_gpu.len())).find(|&i| on_cpu.get(i) != on_gpu.get(i));
            if let Some(index) = first_difference {
                return Err(Error::DualCheck {
                    stage: "H polynomial",
                    index,
                });
            }
            return Ok((HValues::Host(on_cpu), None));
        }
        Backend::Cpu | Backend::Auto => {
            return Ok((HValues::Host(ntt_cuda::h_polynomial(a, b, c)?), None))
        }
    };
    Ok((h, Some([a, b, c])))
}

/// One MSM stage on a resolved backend; with [`Backend::Check`] both run and must agree.
fn dual<P: PartialEq>(
    backend: Backend,
    stage: &'static str,
    cpu: impl FnOnce() -> Result<P>,
    gpu: impl FnOnce() -> Result<P>,
) -> Result<P> {
    match backend {
        Backend::Gpu => gpu(),
        Backend::Check => {
            let on_gpu = gpu()?;
            let on_cpu = cpu()?;
            if on_gpu != on_cpu {
                return Err(Error::DualCheck { stage, index: 0 });
            }
            Ok(on_cpu)
        }
        Backend::Cpu | Backend::Auto => cpu(),
    }
}

/// Host scalars on the device for the MSMs: through the pinned staging chunks (a parallel copy overlapping the DMA;
/// the driver's pageable path runs at about 8 GB/s). Small or empty vectors go as they are.
enum Uploaded<'a> {
    Host(&'a [Scalar]),
    Device(ntt_cuda::gpu::DeviceScalars, usize),
}

impl<'a> Uploaded<'a> {
    fn new(host: &'a [Scalar], what: &'static str, upload: &Cell<Duration>) -> Result<Self> {
        if host.len() < 1 << 16 {
            return Ok(Uploaded::Host(host));
        }
        let t = Instant::now();
        let up = ntt_cuda::gpu::upload_staged(host, host.len())
            .map(|d| Uploaded::Device(d, host.len()))
            .map_err(|source| Error::Upload { what, source });
        upload.set(upload.get() + t.elapsed());
        up
    }

    fn scalars(&self) -> GpuScalars<'_> {
        match self {
            Uploaded::Host(h) => GpuScalars::Host(h),
            Uploaded::Device(d, len) => GpuScalars::Device(d, *len),
        }
    }
}

/// The aux scalars `density` selects, gathered on the device from `aux` (the first `len` device scalars) into a new
/// device vector, which must hold exactly `count` scalars (the query's length past the inputs).
fn gather_on_device(
    aux: &ntt_cuda::gpu::DeviceScalars,
    len: usize,
    density: &Density,
    count: usize,
    what: &'static str,
) -> Result<Uploaded<'static>> {
    let picked =
        msm_cuda::gpu::gather_selected(aux, len, selection(density)).map_err(msm_err(what))?;
    if picked.len() != count {
        return Err(msm_err(what)(msm_cuda::Error::SelectionMismatch {
            bits: len,
            ones: picked.len(),
            scalars: len,
            bases: count,
        }));
    }
    Ok(Uploaded::Device(picked, count))
}

fn on_gpu<A: GpuCurve>(
    (bases, host): (&GpuQuery<A>, &[A]),
    offset: usize,
    scalars: GpuScalars<'_>,
    what: &'static str,
) -> Result<A::Projective> {
    on_gpu_noted((bases, host), offset, scalars, what, &Cell::new(None))
}

/// [`on_gpu`], keeping the MSM's window and accumulation in `note`.
fn on_gpu_noted<A: GpuCurve>(
    (bases, host): (&GpuQuery<A>, &[A]),
    offset: usize,
    scalars: GpuScalars<'_>,
    what: &'static str,
    note: &Cell<Option<MsmChoice>>,
) -> Result<A::Projective> {
    let (p, stats) = bases
        .msm(host, offset, scalars, &MsmOptions::default())
        .map_err(msm_err(what))?;
    note.set(Some(MsmChoice {
        window: stats.window,
        accumulation: stats.accumulation,
        affine_rounds: stats.affine_rounds,
    }));
    Ok(p)
}

/// Creates what the GPU stages keep per process (the domain's twiddles on the device, the pinned staging chunks)
/// so that the first proof does not pay for them; the engine calls it on the prover thread while the first partition
/// synthesizes. Failures are only logged: the proof that needs the resource reports its own error.
pub(crate) fn warm_up(params: &Parameters, opts: &ProverOptions) {
    let n = params.domain_size();
    let on_gpu =
        |b: Backend, min_log2| matches!(b.resolve(n, min_log2), Backend::Gpu | Backend::Check);
    let h_gpu = on_gpu(opts.h_backend, GPU_H_MIN_LOG2);
    let msm_gpu = on_gpu(opts.msm_backend, GPU_MSM_MIN_LOG2);
    if h_gpu {
        if let Err(e) = ntt_cuda::log_size_for(n)
            .map_err(|e| e.to_string())
            .and_then(|log_n| ntt_cuda::gpu::GpuDomain::shared(log_n).map_err(|e| e.to_string()))
        {
            tracing::debug!("warm-up: the GPU domain of {n} points: {e}");
        }
    }
    if h_gpu || msm_gpu {
        if let Err(e) = ntt_cuda::gpu::upload_staged(&[], 0) {
            tracing::debug!("warm-up: the pinned staging chunks: {e}");
        }
    }
    if h_gpu && msm_gpu {
        let started = Instant::now();
        match warm_up_h_and_msm_h(params) {
            Ok(()) => tracing::debug!(
                "warm-up: H and MSM H of {n} points in {:.1} ms",
                started.elapsed().as_secs_f64() * 1e3
            ),
            Err(e) => tracing::debug!("warm-up: H and MSM H of {n} points: {e}"),
        }
    }
}

/// One H of the full domain and MSM H on its result, thrown away: the first proof's H and MSM H then find the
/// device's scratch (the MSM's batch-affine rounds, the transforms' allocations) at full size. On the H200 the first
/// of ten 2^27 partitions paid 2,114.6 ms against 1,613.4 ms for the others (H 776 against 352 ms, MSM H 1,020
/// against 944 ms) without it. A few non-zero evaluations give h full-width coefficients throughout, as in a real
/// proof, so the MSM's digits fill its buckets as a proof's do.
fn warm_up_h_and_msm_h(params: &Parameters) -> Result<()> {
    use ntt_cuda::gpu::{DeviceScalars, GpuDomain, Stream};
    let n = params.domain_size();
    let domain = GpuDomain::shared(ntt_cuda::log_size_for(n)?)?;
    let few: Vec<Scalar> = (1..=64u64)
        .map(|i| Scalar::from(i.wrapping_mul(0x9e37_79b9_7f4a_7c15)))
        .collect();
    let stream = Stream::new()?;
    let [a, b, c] = [&few[..], &few[1..], &few[2..]]
        .map(|v| DeviceScalars::from_host_padded(&v[..v.len().min(n)], n, &stream));
    stream.synchronize()?;
    let (h, _ready) = ntt_cuda::gpu::h_polynomial_of_device_inputs(&domain, a?, b?, c?)?;
    let len = params.h.len().min(n);
    GpuParams::shared(params)?
        .h
        .msm(
            &params.h,
            0,
            GpuScalars::Device(&h, len),
            &MsmOptions::default(),
        )
        .map_err(msm_err("warm-up MSM H"))?;
    Ok(())
}

/// Proves `pa` (already checked against `params`); `products` computes a, b and c when `pa` left them to the prover.
/// Also returns the vectors it is done with (a, b and c where the H stage only read them, the assignment), for the
/// next synthesis to write into.
pub(crate) fn prove_checked(
    params: &Parameters,
    mut pa: ProvingAssignment,
    r: Scalar,
    s: Scalar,
    opts: &ProverOptions,
    products: Option<&Products>,
    staged: Option<StagedWitness>,
) -> Result<(Proof, ProofTimings, ProvingAssignment)> {
    let mut t = ProofTimings::default();
    let (h_backend, msm) = backends(params, opts);
    // a, b and c left to the prover: on the device from the witness when H and the MSMs both run there and the
    // matrices are uploaded, else on the host now.
    let device_products = match (pa.products_deferred(), products) {
        (false, _) => None,
        (true, None) => return Err(Error::ProductsDeferred),
        (true, Some(p)) => match device_shape_for(params, &pa, opts, Some(p)) {
            Some(d) => {
                p.shape.check_counts(&pa)?;
                Some(d)
            }
            None => {
                timed(&mut t.products, || p.shape.compute_products(&mut pa))?;
                None
            }
        },
    };
    // A staged witness stands in for the upload only if it is this assignment's (the engine stages the partition it
    // then proves; the lengths guard the pairing).
    let staged = staged.filter(|w| {
        device_products.is_some()
            && w.inputs == pa.input_assignment.len()
            && w.aux == pa.aux_assignment.len()
    });
    t.staged_upload = staged.as_ref().map_or(Duration::ZERO, |w| w.took);
    let ProvingAssignment {
        a,
        b,
        c,
        input_assignment: inputs,
        aux_assignment: aux,
        a_aux_density,
        b_input_density,
        b_aux_density,
        ..
    } = pa;
    let gp = match msm {
        Backend::Gpu | Backend::Check => Some(GpuParams::shared(params)?),
        Backend::Cpu | Backend::Auto => None,
    };
    t.gpu_params = match gp.as_deref().map(GpuParams::placement) {
        None => "",
        Some(Placement::Resident) => "resident",
        Some(Placement::Streamed { .. }) => "streamed",
    };
    let gp = || {
        gp.as_deref()
            .expect("GPU parameters are uploaded for GPU MSMs")
    };
    // Host-to-device time of a, b, c and the MSM scalars (part of the phases that do it).
    let upload = Cell::new(Duration::ZERO);
    let noted = NotedChoices::default();
    t.h_backend = h_backend.name();
    t.msm_backend = msm.name();
    // B_G1 and B_G2 take the same density-selected scalars: gather them once, on the host only when a CPU stage
    // needs them (on the GPU they are gathered on the device from L's copy of aux).
    let b_in = b_input_density.count_ones();
    let b_inputs = selection(&b_input_density)
        .gather(&inputs, b_in)
        .map_err(msm_err("B inputs"))?;
    let n_b_aux = params.b_g1.len().saturating_sub(b_in);
    let b_aux_host = std::sync::OnceLock::new();
    let host_b_aux = || -> Result<&Vec<Scalar>> {
        if let Some(v) = b_aux_host.get() {
            return Ok(v);
        }
        let v = selection(&b_aux_density)
            .gather(&aux, n_b_aux)
            .map_err(msm_err("B aux"))?;
        Ok(b_aux_host.get_or_init(|| v))
    };
    let b_g2_cpu = || -> Result<blstrs::G2Projective> {
        let x =
            msm_cuda::msm_g2(&params.b_g2[..b_in], &b_inputs).map_err(msm_err("B_G2 inputs"))?;
        let w =
            msm_cuda::msm_g2(&params.b_g2[b_in..], host_b_aux()?).map_err(msm_err("B_G2 aux"))?;
        Ok(x + w)
    };
    // CUZK_B_G2=cpu (the A4 switch): with the MSMs on the GPU, B_G2 runs on the CPU in a thread of its own beside the
    // GPU stages instead of on the GPU after them.
    let b_g2_beside = msm == Backend::Gpu && ab_switch("CUZK_B_G2", &["cpu"]).is_some();
    let (proof, t, abc) = std::thread::scope(|scope| -> Result<_> {
        let beside = b_g2_beside.then(|| {
            scope.spawn(|| {
                let started = Instant::now();
                (b_g2_cpu(), started.elapsed())
            })
        });
        // With a, b and c from the witness on the device, the witness stays there for L, A and B.
        let mut aux_device = None;
        let (h, abc) = match device_products {
            Some(d) => {
                let n = params.domain_size();
                let (values, [da, db, dc]) = timed(&mut t.products, || {
                    products_on_device(d, &inputs, &aux, n, staged, &upload)
                })?;
                aux_device = Some(Uploaded::Device(values, aux.len()));
                let h = timed(&mut t.h_poly, || -> Result<HValues> {
                    let log_n = ntt_cuda::log_size_for(n)?;
                    let domain = ntt_cuda::gpu::GpuDomain::shared(log_n)?;
                    let (h, _stream) =
                        ntt_cuda::gpu::h_polynomial_of_device_inputs(&domain, da, db, dc)?;
                    Ok(HValues::Device(h))
                })?;
                (h, None)
            }
            None => timed(&mut t.h_poly, || {
                h_poly(a, b, c, h_backend, msm == Backend::Gpu, &upload)
            })?,
        };
        let h_msm = timed(&mut t.msm_h, || match &h {
            HValues::Device(d) => on_gpu_noted(
                (&gp().h, &params.h[..]),
                0,
                GpuScalars::Device(d, params.h.len()),
                "H",
                &noted.h,
            ),
            HValues::Host(h) => dual(
                msm,
                "H MSM",
                || msm_cuda::msm_g1(&params.h, h).map_err(msm_err("H")),
                || {
                    on_gpu_noted(
                        (&gp().h, &params.h[..]),
                        0,
                        GpuScalars::Host(h),
                        "H",
                        &noted.h,
                    )
                },
            ),
        })?;
        drop(h);
        // On the GPU, aux goes to the device once (for L, unless the witness is there already); A's and B's
        // density-selected aux scalars are gathered from that copy on the device.
        let l_msm = timed(&mut t.msm_l, || {
            dual(
                msm,
                "L MSM",
                || msm_cuda::msm_g1(&params.l, &aux).map_err(msm_err("L")),
                || {
                    if aux_device.is_none() {
                        aux_device = Some(Uploaded::new(&aux, "L", &upload)?);
                    }
                    let up = aux_device.as_ref().expect("set above");
                    on_gpu_noted((&gp().l, &params.l[..]), 0, up.scalars(), "L", &noted.l)
                },
            )
        })?;

        let n_in = inputs.len();
        let a_msm = timed(&mut t.msm_a, || {
            dual(
                msm,
                "A MSM",
                || {
                    let a_in = msm_cuda::msm_g1(&params.a[..n_in], &inputs)
                        .map_err(msm_err("A inputs"))?;
                    let a_aux = msm_cuda::msm_g1_selected(
                        &params.a[n_in..],
                        &aux,
                        selection(&a_aux_density),
                    )
                    .map_err(msm_err("A aux"))?;
                    Ok(a_in + a_aux)
                },
                || {
                    let a_in = on_gpu(
                        (&gp().a, &params.a[..]),
                        0,
                        GpuScalars::Host(&inputs),
                        "A inputs",
                    )?;
                    let n_a_aux = params.a.len() - n_in;
                    let a_aux = match &aux_device {
                        Some(Uploaded::Device(d, len)) => {
                            let picked =
                                gather_on_device(d, *len, &a_aux_density, n_a_aux, "A aux")?;
                            on_gpu_noted(
                                (&gp().a, &params.a[..]),
                                n_in,
                                picked.scalars(),
                                "A aux",
                                &noted.a,
                            )?
                        }
                        _ => {
                            let picked = selection(&a_aux_density)
                                .gather(&aux, n_a_aux)
                                .map_err(msm_err("A aux"))?;
                            let scalars = Uploaded::new(&picked, "A aux", &upload)?;
                            on_gpu_noted(
                                (&gp().a, &params.a[..]),
                                n_in,
                                scalars.scalars(),
                                "A aux",
                                &noted.a,
                            )?
                        }
                    };
                    Ok(a_in + a_aux)
                },
            )
        })?;

        // On the GPU, B's aux scalars are uploaded once for both B MSMs (the upload is timed with B_G1).
        let mut b_aux_device = None;
        let b_g1_msm = timed(&mut t.msm_b_g1, || {
            dual(
                msm,
                "B_G1 MSM",
                || {
                    let x = msm_cuda::msm_g1(&params.b_g1[..b_in], &b_inputs)
                        .map_err(msm_err("B_G1 inputs"))?;
                    let w = msm_cuda::msm_g1(&params.b_g1[b_in..], host_b_aux()?)
                        .map_err(msm_err("B_G1 aux"))?;
                    Ok(x + w)
                },
                || {
                    let x = on_gpu(
                        (&gp().b_g1, &params.b_g1[..]),
                        0,
                        GpuScalars::Host(&b_inputs),
                        "B_G1 inputs",
                    )?;
                    let up = b_aux_device.insert(match &aux_device {
                        Some(Uploaded::Device(d, len)) => {
                            gather_on_device(d, *len, &b_aux_density, n_b_aux, "B aux")?
                        }
                        _ => Uploaded::new(host_b_aux()?, "B aux", &upload)?,
                    });
                    let w = on_gpu_noted(
                        (&gp().b_g1, &params.b_g1[..]),
                        b_in,
                        up.scalars(),
                        "B_G1 aux",
                        &noted.b_g1,
                    )?;
                    Ok(x + w)
                },
            )
        })?;
        let b_g2_msm = match beside {
            Some(handle) => {
                let (result, took) = handle.join().expect("the B_G2 thread does not panic");
                t.msm_b_g2 = took;
                result?
            }
            None => timed(&mut t.msm_b_g2, || {
                dual(msm, "B_G2 MSM", b_g2_cpu, || {
                    let x = on_gpu(
                        (&gp().b_g2, &params.b_g2[..]),
                        0,
                        GpuScalars::Host(&b_inputs),
                        "B_G2 inputs",
                    )?;
                    let w = match &b_aux_device {
                        Some(up) => on_gpu(
                            (&gp().b_g2, &params.b_g2[..]),
                            b_in,
                            up.scalars(),
                            "B_G2 aux",
                        )?,
                        None => on_gpu(
                            (&gp().b_g2, &params.b_g2[..]),
                            b_in,
                            GpuScalars::Host(host_b_aux()?),
                            "B_G2 aux",
                        )?,
                    };
                    Ok(x + w)
                })
            })?,
        };

        t.upload = upload.get();
        t.msm_choices = MsmChoices {
            h: noted.h.get(),
            l: noted.l.get(),
            a: noted.a.get(),
            b_g1: noted.b_g1.get(),
        };
        let proof = timed(&mut t.assembly, || {
            let vk = &params.vk;
            let g_a = vk.alpha_g1.to_curve() + a_msm + vk.delta_g1 * r;
            let g_b = vk.beta_g2.to_curve() + b_g2_msm + vk.delta_g2 * s;
            let g_c = a_msm * s
                + b_g1_msm * r
                + vk.delta_g1 * (r * s)
                + vk.alpha_g1 * s
                + vk.beta_g1 * r
                + h_msm
                + l_msm;
            Proof {
                a: g_a.to_affine(),
                b: g_b.to_affine(),
                c: g_c.to_affine(),
            }
        });
        Ok((proof, t, abc))
    })?;
    let mut spare = ProvingAssignment::default();
    [spare.a, spare.b, spare.c] = abc.unwrap_or_default();
    spare.input_assignment = inputs;
    spare.aux_assignment = aux;
    Ok((proof, t, spare))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ab_switches_take_their_words_and_nothing_else() {
        let words = ["pageable", "register"];
        assert_eq!(ab_choice("CUZK_X", None, &words), None);
        assert_eq!(ab_choice("CUZK_X", Some(""), &words), None);
        assert_eq!(ab_choice("CUZK_X", Some("pageable"), &words), Some(0));
        assert_eq!(ab_choice("CUZK_X", Some("register"), &words), Some(1));
        // A mistyped value keeps the default (and warns, once per variable and value).
        assert_eq!(ab_choice("CUZK_X", Some("registered"), &words), None);
        assert_eq!(ab_choice("CUZK_X", Some("registered"), &words), None);
        assert_eq!(ab_choice("CUZK_X", Some("Register"), &words), None);
    }

    #[test]
    fn lanes_fit_beside_the_resident_parameters() {
        const GIB: u64 = 1 << 30;
        // The H200 at 2^27: 139 GiB free, 44 GiB of parameters, 36 GiB a proof: two lanes (three would need 152).
        let working = gpu_working_bytes(1 << 27);
        assert_eq!(working, 36 * GIB);
        assert_eq!(lanes_within(139 * GIB, 44 * GIB, working, 2), 2);
        assert_eq!(lanes_within(139 * GIB, 44 * GIB, working, 8), 2);
        assert_eq!(lanes_within(116 * GIB, 44 * GIB, working, 8), 2);
        assert_eq!(lanes_within(116 * GIB - 1, 44 * GIB, working, 8), 1);
        // Too small for even one: still one lane (the placement then streams).
        assert_eq!(lanes_within(24 * GIB, 44 * GIB, working, 2), 1);
        assert_eq!(lanes_within(1000 * GIB, 0, 1, 0), 1);
    }

    #[test]
    fn placement_settings_parse_and_bad_ones_are_named() {
        assert_eq!(parse_placement(None, None).unwrap(), None);
        assert_eq!(parse_placement(Some("auto"), None).unwrap(), None);
        assert_eq!(
            parse_placement(Some("resident"), Some("5")).unwrap(),
            Some(Placement::Resident)
        );
        assert_eq!(
            parse_placement(Some("streamed"), None).unwrap(),
            Some(Placement::Streamed { chunk: 1 << 22 })
        );
        // A chunk alone asks for streaming.
        assert_eq!(
            parse_placement(None, Some("1000")).unwrap(),
            Some(Placement::Streamed { chunk: 1000 })
        );
        for (p, c, named) in [
            (Some("gpu"), None, "CUZK_GPU_PARAMS=\"gpu\""),
            (Some("streamed"), Some("0"), "CUZK_GPU_CHUNK_POINTS=\"0\""),
            (None, Some("-3"), "CUZK_GPU_CHUNK_POINTS=\"-3\""),
        ] {
            let e = parse_placement(p, c).unwrap_err().to_string();
            assert!(e.contains(named), "{e}");
        }
    }

    #[test]
    fn memory_limits_parse_and_bad_ones_are_named() {
        assert_eq!(parse_memory_limit(None).unwrap(), None);
        assert_eq!(parse_memory_limit(Some("48")).unwrap(), Some(48 << 30));
        assert_eq!(parse_memory_limit(Some("0.5")).unwrap(), Some(1 << 29));
        for bad in ["0", "-1", "lots", "inf", "NaN"] {
            let e = parse_memory_limit(Some(bad)).unwrap_err().to_string();
            assert!(e.contains("CUZK_GPU_MEMORY_GIB"), "{e}");
        }
    }

    #[test]
    fn a_memory_cap_counts_what_is_in_use() {
        let gib = 1u64 << 30;
        assert_eq!(usable_free(100 * gib, 140 * gib, None), 100 * gib);
        // 40 GiB in use under a 48 GiB cap: 8 GiB left.
        assert_eq!(usable_free(100 * gib, 140 * gib, Some(48 * gib)), 8 * gib);
        // The cap already reached, or above the card: nothing, or the free memory.
        assert_eq!(usable_free(100 * gib, 140 * gib, Some(30 * gib)), 0);
        assert_eq!(
            usable_free(100 * gib, 140 * gib, Some(500 * gib)),
            100 * gib
        );
    }

    #[test]
    fn streamed_chunks_take_a_quarter_of_the_budget_within_bounds() {
        // 10 GB beyond a proof's working memory: two buffers of 96-byte points in 2.5 GB.
        assert_eq!(streamed_chunk_points(10_000_000_000), 13_020_833);
        assert_eq!(streamed_chunk_points(0), 1 << 16);
        assert_eq!(streamed_chunk_points(u64::MAX), 1 << 26);
        // The working memory of a 2^27 domain: a, b, c, h and the NTTs' room, plus the scratch.
        assert_eq!(gpu_working_bytes(1 << 27), (32u64 << 30) + (4 << 30));
    }
}
