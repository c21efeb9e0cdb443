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
/// verified). The error is for the caller, as an INVALID_ARGUMENT status.
pub fn validate(req: &SubmitProofRequest) -> std::result::Result<(), String> {
    let kind = ProofKind::try_from(req.proof_kind).map_err(|_| {
        format!(
            "unknown proof kind {} (supported: POREP_SEAL_COMMIT = 1, CUZK_TEST_CIRCUIT = 100)",
            req.proof_kind
        )
    })?;
    match kind {
        ProofKind::PorepSealCommit => validate_porep(req),
        ProofKind::CuzkTestCircuit => TestSpec::parse(&req.vanilla_proof).map(|_| ()),
        other => Err(format!(
            "proof kind {} ({}) is not supported by this daemon (supported: POREP_SEAL_COMMIT = 1, \
             CUZK_TEST_CIRCUIT = 100)",
            other as i32,
            other.as_str_name()
        )),
    }
}

fn validate_porep(req: &SubmitProofRequest) -> std::result::Result<(), String> {
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
        .map_err(|e| e.to_string())
}

/// A loaded parameter set.
pub struct Srs {
    pub id: String,
    pub kind: SrsKind,
    /// Host bytes of its points.
    pub size_bytes: u64,
    /// Jobs proving with it now.
    pub refs: AtomicU32,
}

pub enum SrsKind {
    Porep(Box<Loaded>),
    Test(Box<Engine>),
}

impl std::fmt::Debug for Srs {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Srs")
            .field("id", &self.id)
            .finish_non_exhaustive()
    }
}

impl Srs {
    fn engine(&self) -> &Engine {
        match &self.kind {
            SrsKind::Porep(l) => &l.engine,
            SrsKind::Test(e) => e,
        }
    }
}

/// A reference held while a job proves with a parameter set (so EvictSRS refuses meanwhile).
struct Hold(Arc<Srs>);

impl Hold {
    fn new(srs: Arc<Srs>) -> Self {
        srs.refs.fetch_add(1, Ordering::Relaxed);
        Hold(srs)
    }
}

impl Drop for Hold {
    fn drop(&mut self) {
        self.0.refs.fetch_sub(1, Ordering::Relaxed);
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
            .map(|s| (s.id.clone(), s.size_bytes, s.refs.load(Ordering::Relaxed)))
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
        let kind = match parsed {
            CircuitId::Porep(rp) => SrsKind::Porep(Box::new(crate::porep_cmd::load_engine(
                rp,
                &self.args,
                &progress,
                &mut report,
            )?)),
            CircuitId::Test { blocks } => {
                SrsKind::Test(Box::new(self.load_test(blocks, &mut report)?))
            }
        };
        let size_bytes = match &kind {
            SrsKind::Porep(l) => Engine::params_bytes(l.engine.params()),
            SrsKind::Test(e) => Engine::params_bytes(e.params()),
        };
        report.log();
        let srs = Arc::new(Srs {
            id: id.to_owned(),
            kind,
            size_bytes,
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

    fn load_test(&self, blocks: usize, report: &mut Report) -> Result<Engine> {
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
        let opts = self.args.options(&params, report);
        Engine::new(Arc::new(params), opts).context("starting the engine")
    }

    /// Drops a loaded set unless jobs are using it: Ok(Some(bytes)) when dropped, Ok(None) when it was not loaded.
    pub fn evict(&self, id: &str) -> std::result::Result<Option<u64>, u32> {
        let mut map = self.map();
        match map.get(id) {
            None => Ok(None),
            Some(s) if s.refs.load(Ordering::Relaxed) > 0 => Err(s.refs.load(Ordering::Relaxed)),
            Some(_) => Ok(map.remove(id).map(|s| s.size_bytes)),
        }
    }
}

/// Why a job produced no proof.
enum Failure {
    Cancelled,
    Failed(String),
}

impl From<anyhow::Error> for Failure {
    fn from(e: anyhow::Error) -> Self {
        Failure::Failed(format!("{e:#}"))
    }
}

/// What a proof took.
#[derive(Default)]
struct Timings {
    srs_load: Duration,
    synthesis: Duration,
    proving: Duration,
}

/// The executor: one thread, one job at a time, each job's partitions pipelined through its engine.
pub struct Executor {
    pub table: Arc<Table>,
    pub journal: Arc<Journal>,
    pub engines: Arc<Engines>,
}

impl Executor {
    /// Runs jobs until the table stops.
    pub fn run(self) {
        while let Some(job) = self.table.next() {
            let started = unix_ms();
            tracing::info!(job_id = %job.id, kind = job.kind.as_str_name(), "job started");
            let outcome =
                std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| self.prove(&job)))
                    .unwrap_or_else(|panic| {
                        Err(Failure::Failed(format!(
                            "internal error (panic): {}",
                            panic
                                .downcast_ref::<&str>()
                                .map(|s| s.to_string())
                                .or_else(|| panic.downcast_ref::<String>().cloned())
                                .unwrap_or_default()
                        )))
                    });
            let finished = unix_ms();
            let mut result = AwaitProofResponse {
                job_id: job.id.clone(),
                queue_wait_ms: started.saturating_sub(job.submitted_unix_ms),
                total_ms: finished.saturating_sub(job.submitted_unix_ms),
                ..Default::default()
            };
            let outcome = match outcome {
                Ok(_) if job.cancel.load(Ordering::Relaxed) => Err(Failure::Cancelled),
                other => other,
            };
            match outcome {
                Ok((proof, t)) => {
                    result.status = Status::Completed as i32;
                    result.proof = proof;
                    result.srs_load_ms = t.srs_load.as_millis() as u64;
                    result.synthesis_ms = t.synthesis.as_millis() as u64;
                    result.gpu_compute_ms = t.proving.as_millis() as u64;
                }
                Err(Failure::Cancelled) => result.status = Status::Cancelled as i32,
                Err(Failure::Failed(message)) => {
                    result.status = Status::Failed as i32;
                    result.error_message = message;
                }
            }
            tracing::info!(
                job_id = %job.id,
                status = Status::try_from(result.status).map_or("?", |s| s.as_str_name()),
                total_ms = result.total_ms,
                error = %result.error_message,
                "job finished"
            );
            finish(&self.table, &self.journal, &job, result);
        }
    }

    fn prove(&self, job: &Job) -> std::result::Result<(Vec<u8>, Timings), Failure> {
        let record = self.journal.read_job(&job.id)?;
        let req = record
            .request
            .ok_or_else(|| Failure::Failed("the journal record holds no request".into()))?;
        match job.kind {
            ProofKind::PorepSealCommit => self.prove_porep(job, &req),
            ProofKind::CuzkTestCircuit => self.prove_test(job, &req),
            other => Err(Failure::Failed(format!(
                "proof kind {} is not supported",
                other.as_str_name()
            ))),
        }
    }

    fn prove_test(
        &self,
        job: &Job,
        req: &SubmitProofRequest,
    ) -> std::result::Result<(Vec<u8>, Timings), Failure> {
        let spec = TestSpec::parse(&req.vanilla_proof).map_err(Failure::Failed)?;
        let circuit = spec.circuit().map_err(Failure::Failed)?;
        let (srs, load) = self.engines.get_or_load(&spec.circuit_id())?;
        let hold = Hold::new(srs);
        let mut t = Timings {
            srs_load: load.unwrap_or_default(),
            ..Default::default()
        };
        let synthesize = |_: usize| {
            if job.cancel.load(Ordering::Relaxed) {
                return Err("cancelled".to_string());
            }
            r1cs_synth::synthesize(circuit.clone(), &r1cs_synth::SynthesisOptions::default())
                .map_err(|e| e.to_string())
        };
        let (mut outcomes, summary) =
            hold.0
                .engine()
                .prove_partitions(1, synthesize, &mut OsRng, |_| {});
        if job.cancel.load(Ordering::Relaxed) {
            return Err(Failure::Cancelled);
        }
        let outcome = outcomes
            .pop()
            .ok_or_else(|| Failure::Failed("no outcome".into()))?;
        t.synthesis = outcome.report.synthesis;
        t.proving = summary.proving;
        let proof = outcome.proof.map_err(|e| Failure::Failed(e.to_string()))?;
        Ok((proof.to_bytes().to_vec(), t))
    }

    fn prove_porep(
        &self,
        job: &Job,
        req: &SubmitProofRequest,
    ) -> std::result::Result<(Vec<u8>, Timings), Failure> {
        let c1 = porep::C1Output::from_json(&req.vanilla_proof, &format!("job {}", job.id))
            .map_err(|e| Failure::Failed(e.to_string()))?;
        let sector = porep::Sector {
            miner_id: req.miner_id,
            sector_number: req.sector_number,
        };
        let (srs, load) = self
            .engines
            .get_or_load(&porep_circuit_id(c1.registered_proof()))?;
        let hold = Hold::new(srs);
        let SrsKind::Porep(loaded) = &hold.0.kind else {
            return Err(Failure::Failed("parameter set of the wrong kind".into()));
        };
        let proof = match porep::prove_until(
            &c1,
            &loaded.engine,
            loaded.synthesis(),
            &job.cancel,
            &mut OsRng,
            |_| {},
        ) {
            Ok(p) => p,
            Err(porep::Error::Cancelled) => return Err(Failure::Cancelled),
            Err(e) => return Err(Failure::Failed(e.to_string())),
        };
        // The chain's own check, as `porep prove` does, before the proof leaves.
        match porep::verify(&c1, &sector, &proof.bytes) {
            Ok(true) => {}
            Ok(false) => {
                return Err(Failure::Failed(
                    "filecoin-proofs rejects the proof (a bug: please report it)".into(),
                ))
            }
            Err(e) => return Err(Failure::Failed(format!("verifying: {e}"))),
        }
        let t = Timings {
            srs_load: load.unwrap_or_default(),
            synthesis: proof.partitions.iter().map(|p| p.report.synthesis).sum(),
            proving: proof.summary.proving,
        };
        Ok((proof.bytes, t))
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
