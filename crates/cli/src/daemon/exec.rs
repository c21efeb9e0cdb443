//! What the daemon proves: checking a submission, the parameter sets kept loaded (one engine each), and the
//! executor thread that takes jobs off the queue and proves them.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};
use circuits::Sha256Circuit;
use groth16_pipeline::Engine;
use rand::rngs::OsRng;
use rpc::journal::ResultRecord;
use rpc::v1::await_proof_response::Status;
use rpc::v1::{AwaitProofResponse, ProofKind, SubmitProofRequest};
use serde::Deserialize;

use super::jobs::{unix_ms, Job, Table};
use super::journal::Journal;
use crate::porep_cmd::{EngineArgs, Loaded};
use crate::report::{Progress, Report};

/// Most SHA-256 blocks a test-circuit job may ask for (about 27,000 constraints each).
pub const MAX_TEST_BLOCKS: usize = 64;

/// The kinds this daemon proves.
pub const SUPPORTED: [ProofKind; 2] = [ProofKind::PorepSealCommit, ProofKind::CuzkTestCircuit];

/// A test-circuit job's description (the JSON in `vanilla_proof`).
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TestSpec {
    /// Only "sha256".
    pub circuit: String,
    /// Compression blocks.
    pub blocks: usize,
    /// The preimage, hex (64·blocks − 9 bytes); random when absent.
    #[serde(default)]
    pub preimage: Option<String>,
}

impl TestSpec {
    pub fn parse(bytes: &[u8]) -> std::result::Result<Self, String> {
        let spec: TestSpec = serde_json::from_slice(bytes).map_err(|e| {
            format!(
                "vanilla_proof of a CUZK_TEST_CIRCUIT job must be JSON like {{\"circuit\": \"sha256\", \"blocks\": 1, \
                 \"preimage\": \"<hex>\"}}: {e}"
            )
        })?;
        if spec.circuit != "sha256" {
            return Err(format!(
                "unknown test circuit {:?} (known: \"sha256\")",
                spec.circuit
            ));
        }
        if !(1..=MAX_TEST_BLOCKS).contains(&spec.blocks) {
            return Err(format!(
                "blocks {} is out of range 1..={MAX_TEST_BLOCKS}",
                spec.blocks
            ));
        }
        spec.circuit()?;
        Ok(spec)
    }

    pub fn circuit(&self) -> std::result::Result<Sha256Circuit, String> {
        match &self.preimage {
            None => Ok(Sha256Circuit::random(self.blocks, &mut OsRng)),
            Some(h) => {
                let bytes = hex::decode(h).map_err(|e| format!("preimage: not hex: {e}"))?;
                Sha256Circuit::new(self.blocks, bytes).map_err(|e| format!("preimage: {e}"))
            }
        }
    }

    pub fn circuit_id(&self) -> String {
        format!("sha256-b{}", self.blocks)
    }
}

/// A parameter set's name, as GetStatus, PreloadSRS and EvictSRS use it: `porep-32g` (Curio's names; a proof type
/// other than V1_1 gets its own suffix, such as `porep-32g-synthetic`), or `sha256-b<blocks>` for a test circuit.
pub fn porep_circuit_id(rp: porep::RegisteredSealProof) -> String {
    let size = match u64::from(rp.sector_size()) {
        0x800 => "2k",
        0x80_0000 => "8m",
        0x2000_0000 => "512m",
        0x8_0000_0000 => "32g",
        0x10_0000_0000 => "64g",
        _ => "unknown",
    };
    let name = format!("{rp:?}");
    let variant = if name.ends_with("V1_1") {
        ""
    } else if name.contains("SyntheticPoRep") {
        "-synthetic"
    } else if name.contains("NonInteractive") {
        "-ni"
    } else {
        "-v1"
    };
    format!("porep-{size}{variant}")
}

/// What a circuit id names.
#[derive(Clone, Debug, PartialEq)]
pub enum CircuitId {
    Porep(porep::RegisteredSealProof),
    Test { blocks: usize },
}

impl CircuitId {
    pub fn parse(id: &str) -> std::result::Result<Self, String> {
        if let Some(b) = id.strip_prefix("sha256-b") {
            if let Ok(blocks @ 1..=MAX_TEST_BLOCKS) = b.parse::<usize>() {
                return Ok(CircuitId::Test { blocks });
            }
        }
        (0..20)
            .filter_map(porep::registered_proof_from_number)
            .find(|&rp| porep_circuit_id(rp) == id)
            .map(CircuitId::Porep)
            .ok_or_else(|| {
                format!(
                    "unknown circuit id {id:?}: expected porep-2k, porep-8m, porep-512m, porep-32g or porep-64g \
                     (a -synthetic suffix for synthetic PoRep), or sha256-b<1..={MAX_TEST_BLOCKS}> for a test circuit"
                )
            })
    }
}

/// Checks a submission before it is accepted (blocking: a PoRep C1 output is parsed and its vanilla proofs
/// verified) and returns the circuit id of the parameters it proves with. The error is for the caller, as an
/// INVALID_ARGUMENT status.
pub fn validate(req: &SubmitProofRequest) -> std::result::Result<String, String> {
    let kind = ProofKind::try_from(req.proof_kind).map_err(|_| {
        format!(
            "unknown proof kind {} (supported: POREP_SEAL_COMMIT = 1, CUZK_TEST_CIRCUIT = 100)",
            req.proof_kind
        )
    })?;
    match kind {
        ProofKind::PorepSealCommit => validate_porep(req),
        ProofKind::CuzkTestCircuit => TestSpec::parse(&req.vanilla_proof).map(|t| t.circuit_id()),
        other => Err(format!(
            "proof kind {} ({}) is not supported by this daemon (supported: POREP_SEAL_COMMIT = 1, \
             CUZK_TEST_CIRCUIT = 100)",
            other as i32,
            other.as_str_name()
        )),
    }
}

fn validate_porep(req: &SubmitProofRequest) -> std::result::Result<String, String> {
    if req.vanilla_proof.is_empty() {
        return Err("a POREP_SEAL_COMMIT job needs the C1 output (JSON) in vanilla_proof".into());
    }
    let c1 = porep::C1Output::from_json(&req.vanilla_proof, "vanilla_proof")
        .map_err(|e| e.to_string())?;
    // 0 is the field's default: Curio always sends the number; StackedDrg2KiBV1 (0) predates V1_1 and is unused.
    if req.registered_proof != 0 {
        match porep::registered_proof_from_number(req.registered_proof) {
            Some(rp) if rp == c1.registered_proof() => {}
            Some(rp) => {
                return Err(format!(
                    "registered_proof {} is {rp:?}, but the C1 output is of {:?}",
                    req.registered_proof,
                    c1.registered_proof()
                ))
            }
            None => {
                return Err(format!(
                    "registered_proof {} names no seal proof type",
                    req.registered_proof
                ))
            }
        }
    }
    let sector = porep::Sector {
        miner_id: req.miner_id,
        sector_number: req.sector_number,
    };
    c1.check(&sector, (req.sector_size != 0).then_some(req.sector_size))
        .map_err(|e| e.to_string())?;
    Ok(porep_circuit_id(c1.registered_proof()))
}

/// A loaded parameter set: its engine, and the compiled shape when PoRep synthesis is compiled.
pub struct Srs {
    pub id: String,
    pub loaded: Loaded,
    /// Jobs proving with it now.
    pub refs: AtomicU32,
}

impl std::fmt::Debug for Srs {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Srs")
            .field("id", &self.id)
            .finish_non_exhaustive()
    }
}

impl Srs {
    /// Host bytes of its points.
    fn size_bytes(&self) -> u64 {
        Engine::params_bytes(self.loaded.engine.params())
    }
}

/// A reference held while a job proves with a parameter set (so EvictSRS refuses meanwhile).
struct Hold(Arc<Srs>);

impl std::fmt::Debug for Hold {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("Hold").field(&self.0.id).finish()
    }
}

impl Hold {
    fn new(srs: Arc<Srs>) -> Self {
        srs.refs.fetch_add(1, Ordering::AcqRel);
        Hold(srs)
    }
}

impl Drop for Hold {
    fn drop(&mut self) {
        self.0.refs.fetch_sub(1, Ordering::AcqRel);
    }
}

/// The parameter sets kept loaded (the "hot" tier): one engine each, parameters resident on the host and, when
/// the MSMs run there, on the GPU.
pub struct Engines {
    args: EngineArgs,
    map: Mutex<HashMap<String, Arc<Srs>>>,
    // One load at a time (two jobs or a preload asking for the same set load it once).
    loading: Mutex<()>,
}

impl std::fmt::Debug for Engines {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Engines").finish_non_exhaustive()
    }
}

impl Engines {
    pub fn new(args: EngineArgs) -> Self {
        Engines {
            args,
            map: Mutex::new(HashMap::new()),
            loading: Mutex::new(()),
        }
    }

    fn map(&self) -> std::sync::MutexGuard<'_, HashMap<String, Arc<Srs>>> {
        self.map.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The loaded sets: (id, bytes, jobs using it).
    pub fn list(&self) -> Vec<(String, u64, u32)> {
        let mut v: Vec<_> = self
            .map()
            .values()
            .map(|s| (s.id.clone(), s.size_bytes(), s.refs.load(Ordering::Relaxed)))
            .collect();
        v.sort();
        v
    }

    /// The set `id` names, loading it if needed; the time the load took when this call loaded it.
    pub fn get_or_load(&self, id: &str) -> Result<(Arc<Srs>, Option<Duration>)> {
        if let Some(s) = self.map().get(id) {
            return Ok((s.clone(), None));
        }
        let _one = self.loading.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(s) = self.map().get(id) {
            return Ok((s.clone(), None));
        }
        let t = Instant::now();
        let parsed = CircuitId::parse(id).map_err(anyhow::Error::msg)?;
        let mut report = Report::new("daemon load");
        let progress = Progress::new(true);
        let loaded = match parsed {
            CircuitId::Porep(rp) => {
                crate::porep_cmd::load_engine(rp, &self.args, &progress, &mut report)?
            }
            CircuitId::Test { blocks } => self.load_test(blocks, &mut report)?,
        };
        report.log();
        let srs = Arc::new(Srs {
            id: id.to_owned(),
            loaded,
            refs: AtomicU32::new(0),
        });
        self.map().insert(id.to_owned(), srs.clone());
        tracing::info!(
            circuit_id = id,
            ms = t.elapsed().as_millis() as u64,
            "parameters loaded"
        );
        Ok((srs, Some(t.elapsed())))
    }

    /// A test circuit's engine (direct synthesis: no compiled shape).
    fn load_test(&self, blocks: usize, report: &mut Report) -> Result<Loaded> {
        let blank = Sha256Circuit::blank(blocks);
        let path = self
            .args
            .cache_dir()?
            .join(format!("{}.params", blank.shape_id()));
        if !path.exists() {
            crate::generate(&blank.shape_id(), blank, &path, &Progress::new(true))?;
        }
        let params = srs_loader::read_params(
            &path,
            srs_loader::ReadOptions {
                check_subgroup: !crate::cache::is_unchanged_generated(&path),
            },
        )
        .with_context(|| format!("reading {}", path.display()))?;
        let opts = self.args.options(&params, false, 1, report);
        let (workers, max_in_flight) = (opts.synthesis_workers, opts.max_in_flight);
        Ok(Loaded {
            engine: Engine::new(Arc::new(params), opts).context("starting the engine")?,
            shape: None,
            workers,
            max_in_flight,
        })
    }

    /// Drops a loaded set unless jobs are using it: Ok(Some(bytes)) when dropped, Ok(None) when it was not loaded.
    pub fn evict(&self, id: &str) -> std::result::Result<Option<u64>, u32> {
        let mut map = self.map();
        match map.get(id) {
            None => Ok(None),
            Some(s) if s.refs.load(Ordering::Acquire) > 0 => Err(s.refs.load(Ordering::Acquire)),
            Some(_) => Ok(map.remove(id).map(|s| s.size_bytes())),
        }
    }
}

/// What a job proves: a sector's partitions or a test circuit.
enum Source {
    Porep {
        c1: Box<porep::C1Output>,
        sector: porep::Sector,
        parts: porep::Partitions,
    },
    Test(Sha256Circuit),
}

impl Source {
    fn partitions(&self) -> usize {
        match self {
            Source::Porep { parts, .. } => parts.count(),
            Source::Test(_) => 1,
        }
    }
}

/// A job in an engine run.
struct Active {
    job: Arc<Job>,
    // Counts the job among the parameter set's users (EvictSRS refuses meanwhile) until its result is recorded.
    hold: Hold,
    source: Arc<Source>,
    next: usize,
    issued: usize,
    reported: usize,
    proofs: Vec<Option<groth16_pipeline::Proof>>,
    error: Option<String>,
    started_ms: u64,
    srs_load: Duration,
    synthesis: Duration,
    proving: Duration,
}

impl Active {
    fn stopped(&self) -> bool {
        self.error.is_some() || self.job.cancel.load(Ordering::Relaxed)
    }

    /// Partitions remain to hand to the engine.
    fn issuing(&self) -> bool {
        !self.stopped() && self.next < self.proofs.len()
    }

    /// Nothing more will be issued and everything issued has come back.
    fn over(&self) -> bool {
        !self.issuing() && self.reported == self.issued
    }
}

/// One engine run's jobs.
#[derive(Default)]
struct Run {
    active: Vec<Active>,
    /// Jobs taken from the queue and being prepared (outside the lock).
    preparing: usize,
    /// Feed index -> (job id, partition).
    index: HashMap<usize, (String, usize)>,
    next_index: usize,
}

/// The executor: one thread that runs the engine of one parameter set at a time. Each run starts with the queue's
/// first job; while it runs, the queue's next job joins it when it proves with the same parameters, so the CPU
/// synthesizes the next job's partitions while the GPU proves the current one's.
pub struct Executor {
    pub table: Arc<Table>,
    pub journal: Arc<Journal>,
    pub engines: Arc<Engines>,
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

impl Executor {
    /// Runs jobs until the table stops.
    pub fn run(self) {
        while let Some(first) = self.table.next() {
            let run = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                match self.engines.get_or_load(&first.circuit_id) {
                    Ok((srs, load)) => {
                        self.run_engine(srs, load.unwrap_or_default(), first.clone())
                    }
                    Err(e) => self.conclude_failed(&first, unix_ms(), format!("{e:#}")),
                }
            }));
            if let Err(panic) = run {
                let message = format!(
                    "internal error (panic): {}",
                    groth16_pipeline::panic_message(&*panic)
                );
                // Fail whatever the broken run held, and go on serving.
                for job in self.table.running() {
                    self.conclude_failed(&job, unix_ms(), message.clone());
                }
            }
        }
    }

    /// Reads a job's record back and prepares what it proves.
    fn prepare(&self, job: &Job) -> std::result::Result<Source, String> {
        let record = self
            .journal
            .read_job(&job.id)
            .map_err(|e| format!("{e:#}"))?;
        let req = record
            .request
            .ok_or("the journal record holds no request")?;
        match job.kind {
            ProofKind::PorepSealCommit => {
                let c1 = porep::C1Output::from_json(&req.vanilla_proof, &format!("job {}", job.id))
                    .map_err(|e| e.to_string())?;
                let parts = porep::Partitions::new(&c1).map_err(|e| e.to_string())?;
                Ok(Source::Porep {
                    c1: Box::new(c1),
                    sector: porep::Sector {
                        miner_id: req.miner_id,
                        sector_number: req.sector_number,
                    },
                    parts,
                })
            }
            ProofKind::CuzkTestCircuit => {
                let spec = TestSpec::parse(&req.vanilla_proof)?;
                Ok(Source::Test(spec.circuit()?))
            }
            other => Err(format!(
                "proof kind {} is not supported",
                other.as_str_name()
            )),
        }
    }

    fn run_engine(&self, srs: Arc<Srs>, load: Duration, first: Arc<Job>) {
        let circuit_id = first.circuit_id.clone();
        let run = Mutex::new(Run::default());
        let first = Mutex::new(Some(first));
        let load = Mutex::new(Some(load));
        let feed = || -> Option<usize> {
            let mut r = lock(&run);
            loop {
                // Jobs stopped (cancelled, or a partition failed) with nothing in flight are over now.
                while let Some(i) = r.active.iter().position(|a| a.stopped() && a.over()) {
                    let a = r.active.remove(i);
                    self.conclude(a);
                }
                if let Some(a) = r.active.iter_mut().find(|a| a.issuing()) {
                    let (id, k) = (a.job.id.clone(), a.next);
                    a.next += 1;
                    a.issued += 1;
                    let index = r.next_index;
                    r.next_index += 1;
                    r.index.insert(index, (id, k));
                    return Some(index);
                }
                // The run's first job, then the queue's head while it proves with these parameters.
                let Some(job) = lock(&first)
                    .take()
                    .or_else(|| self.table.next_if(|j| j.circuit_id == circuit_id))
                else {
                    if r.active.is_empty() && r.preparing == 0 {
                        return None;
                    }
                    // Jobs are still in flight: linger, so a job submitted meanwhile gets every worker rather than
                    // the few still busy (a worker that returns leaves the run for good).
                    drop(r);
                    self.table.wait_for_work(Duration::from_millis(50));
                    r = lock(&run);
                    continue;
                };
                let started_ms = unix_ms();
                tracing::info!(job_id = %job.id, kind = job.kind.as_str_name(), "job started");
                // Reading the record and parsing a C1 output (tens of MB at 32 GiB) happen without the run's lock,
                // so the prover's completions and the other workers do not wait for them.
                r.preparing += 1;
                drop(r);
                let prepared = self.prepare(&job);
                r = lock(&run);
                r.preparing -= 1;
                match prepared {
                    Ok(source) => {
                        let n = source.partitions();
                        r.active.push(Active {
                            job,
                            hold: Hold::new(srs.clone()),
                            source: Arc::new(source),
                            next: 0,
                            issued: 0,
                            reported: 0,
                            proofs: vec![None; n],
                            error: None,
                            started_ms,
                            srs_load: lock(&load).take().unwrap_or_default(),
                            synthesis: Duration::ZERO,
                            proving: Duration::ZERO,
                        });
                    }
                    Err(message) => self.conclude_failed(&job, started_ms, message),
                }
            }
        };
        let synthesis = srs.loaded.synthesis();
        let synthesize = |index: usize,
                          spare: r1cs_synth::ProvingAssignment|
         -> std::result::Result<r1cs_synth::ProvingAssignment, String> {
            let (job, source, k) = {
                let r = lock(&run);
                let (id, k) = r.index.get(&index).cloned().ok_or("unknown partition")?;
                let a = r.active.iter().find(|a| a.job.id == id).ok_or("job gone")?;
                (a.job.clone(), a.source.clone(), k)
            };
            if job.cancel.load(Ordering::Relaxed) {
                return Err("cancelled".into());
            }
            match &*source {
                Source::Porep { parts, .. } => parts
                    .synthesize_reusing(k, synthesis, spare)
                    .map_err(|e| e.to_string()),
                Source::Test(circuit) => {
                    drop(spare); // freed before the direct path allocates its own vectors
                    r1cs_synth::synthesize(
                        circuit.clone(),
                        &r1cs_synth::SynthesisOptions::default(),
                    )
                    .map_err(|e| e.to_string())
                }
            }
        };
        let on_done = |o: groth16_pipeline::PartitionOutcome| {
            let mut r = lock(&run);
            let Some((id, k)) = r.index.remove(&o.report.partition) else {
                return;
            };
            let Some(i) = r.active.iter().position(|a| a.job.id == id) else {
                return;
            };
            let a = &mut r.active[i];
            a.reported += 1;
            a.synthesis += o.report.synthesis;
            a.proving += o.report.prove_end.saturating_sub(o.report.prove_start);
            match o.proof {
                Ok(p) => a.proofs[k] = Some(p),
                Err(e) if a.error.is_none() && !a.job.cancel.load(Ordering::Relaxed) => {
                    a.error = Some(format!("partition {k}: {e}"))
                }
                Err(_) => {}
            }
            if a.over() {
                let a = r.active.remove(i);
                self.conclude(a);
            }
        };
        srs.loaded
            .engine
            .prove_feed_reusing(&feed, synthesize, &mut OsRng, on_done);
        // Every issued partition has come back; whatever is left stopped with nothing in flight.
        for a in std::mem::take(&mut lock(&run).active) {
            self.conclude(a);
        }
    }

    fn conclude_failed(&self, job: &Arc<Job>, started_ms: u64, message: String) {
        let result = AwaitProofResponse {
            job_id: job.id.clone(),
            status: Status::Failed as i32,
            error_message: message,
            queue_wait_ms: started_ms.saturating_sub(job.submitted_unix_ms),
            total_ms: unix_ms().saturating_sub(job.submitted_unix_ms),
            ..Default::default()
        };
        self.record(job, result);
    }

    /// Assembles a job's proof (checked by filecoin-proofs for PoRep) or its failure, and records it.
    fn conclude(&self, a: Active) {
        let mut result = AwaitProofResponse {
            job_id: a.job.id.clone(),
            queue_wait_ms: a.started_ms.saturating_sub(a.job.submitted_unix_ms),
            srs_load_ms: a.srs_load.as_millis() as u64,
            synthesis_ms: a.synthesis.as_millis() as u64,
            gpu_compute_ms: a.proving.as_millis() as u64,
            ..Default::default()
        };
        let outcome: std::result::Result<Vec<u8>, Option<String>> =
            if a.job.cancel.load(Ordering::Relaxed) {
                Err(None)
            } else if let Some(e) = a.error {
                Err(Some(e))
            } else {
                match a
                    .proofs
                    .iter()
                    .map(|p| p.as_ref().map(|p| p.to_bytes()))
                    .collect::<Option<Vec<_>>>()
                {
                    None => Err(Some("a partition has no proof".into())),
                    Some(proofs) => {
                        let bytes = proofs.concat();
                        match &*a.source {
                            // The chain's own check, as `porep prove` does, before the proof leaves.
                            Source::Porep { c1, sector, .. } => match porep::verify(
                                c1, sector, &bytes,
                            ) {
                                Ok(true) => Ok(bytes),
                                Ok(false) => Err(Some(
                                    "filecoin-proofs rejects the proof (a bug: please report it)"
                                        .into(),
                                )),
                                Err(e) => Err(Some(format!("verifying: {e}"))),
                            },
                            Source::Test(_) => Ok(bytes),
                        }
                    }
                }
            };
        match outcome {
            Ok(proof) => {
                result.status = Status::Completed as i32;
                result.proof = proof;
            }
            Err(None) => result.status = Status::Cancelled as i32,
            Err(Some(message)) => {
                result.status = Status::Failed as i32;
                result.error_message = message;
            }
        }
        result.total_ms = unix_ms().saturating_sub(a.job.submitted_unix_ms);
        // The job stops using the parameter set before its result is visible: a client that awaits it and then
        // evicts the set must not be told that the set is still in use.
        drop(a.hold);
        self.record(&a.job, result);
    }

    fn record(&self, job: &Arc<Job>, result: AwaitProofResponse) {
        tracing::info!(
            job_id = %job.id,
            status = Status::try_from(result.status).map_or("?", |s| s.as_str_name()),
            total_ms = result.total_ms,
            error = %result.error_message,
            "job finished"
        );
        finish(&self.table, &self.journal, job, result);
    }
}

/// Journals a job's result, then records it in the table (waking its waiters). A journal failure is logged: the
/// result still reaches waiters now, and the job runs again after a restart.
pub fn finish(table: &Table, journal: &Journal, job: &Arc<Job>, result: AwaitProofResponse) {
    let record = ResultRecord {
        job_id: job.id.clone(),
        request_id: job.request_id.clone(),
        finished_unix_ms: unix_ms(),
        proof_kind: job.kind as i32,
        result: Some(result.clone()),
    };
    if let Err(e) = journal.write_result(&record) {
        tracing::error!(job_id = %job.id, "could not journal the result: {e:#}");
    }
    table.finish(job, result);
}

/// The GPU as GetStatus reports it: (name, free bytes, total bytes), or why there is none.
pub fn gpu() -> Result<(String, u64, u64)> {
    let name = ntt_cuda::gpu::device()?;
    let (free, total) = ntt_cuda::gpu::mem_info()?;
    if total == 0 {
        bail!("the GPU reports no memory");
    }
    Ok((name, free, total))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn circuit_ids_round_trip_and_bad_ones_are_named() {
        for n in 0..20 {
            let rp = porep::registered_proof_from_number(n).unwrap();
            assert_eq!(
                CircuitId::parse(&porep_circuit_id(rp)),
                Ok(CircuitId::Porep(rp))
            );
        }
        assert_eq!(
            porep_circuit_id(porep::RegisteredSealProof::StackedDrg32GiBV1_1),
            "porep-32g"
        );
        assert_eq!(
            CircuitId::parse("sha256-b3"),
            Ok(CircuitId::Test { blocks: 3 })
        );
        for bad in ["porep-1t", "sha256-b0", "sha256-b65", "wpost-32g", ""] {
            let e = CircuitId::parse(bad).unwrap_err();
            assert!(e.contains("unknown circuit id"), "{e}");
        }
    }

    #[test]
    fn submissions_are_checked_before_acceptance() {
        let test = |json: &str| SubmitProofRequest {
            proof_kind: ProofKind::CuzkTestCircuit as i32,
            vanilla_proof: json.as_bytes().to_vec(),
            ..Default::default()
        };
        assert!(validate(&test(r#"{"circuit":"sha256","blocks":1}"#)).is_ok());
        let preimage = "00".repeat(Sha256Circuit::preimage_len(1));
        assert!(validate(&test(&format!(
            r#"{{"circuit":"sha256","blocks":1,"preimage":"{preimage}"}}"#
        )))
        .is_ok());
        for (json, expect) in [
            (r#"{"circuit":"md5","blocks":1}"#, "unknown test circuit"),
            (r#"{"circuit":"sha256","blocks":0}"#, "out of range"),
            (
                r#"{"circuit":"sha256","blocks":1,"preimage":"zz"}"#,
                "not hex",
            ),
            (
                r#"{"circuit":"sha256","blocks":1,"preimage":"00"}"#,
                "preimage",
            ),
            (
                r#"{"circuit":"sha256","blocks":1,"extra":1}"#,
                "unknown field",
            ),
            ("not json", "must be JSON"),
        ] {
            let e = validate(&test(json)).unwrap_err();
            assert!(e.contains(expect), "{json}: {e}");
        }
        let kind = |k: i32| SubmitProofRequest {
            proof_kind: k,
            ..Default::default()
        };
        assert!(validate(&kind(3))
            .unwrap_err()
            .contains("WINDOW_POST_PARTITION"));
        assert!(validate(&kind(0)).unwrap_err().contains("not supported"));
        assert!(validate(&kind(77))
            .unwrap_err()
            .contains("unknown proof kind 77"));
        let e = validate(&kind(1)).unwrap_err();
        assert!(e.contains("needs the C1 output"), "{e}");
        let mut garbage = kind(1);
        garbage.vanilla_proof = b"{\"registered_proof\": ".to_vec();
        let e = validate(&garbage).unwrap_err();
        assert!(e.contains("not a C1 output"), "{e}");
    }
}
