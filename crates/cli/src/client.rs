//! `cuzk client ...`: every call of a cuzk daemon (ours or any `cuzk.v1.ProvingEngine` server) from the shell.
//! Each prints one JSON object on stdout.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{bail, Context, Result};
use clap::{Args, Subcommand, ValueEnum};
use rpc::v1::await_proof_response::Status as JobStatus;
use rpc::v1::proving_engine_client::ProvingEngineClient;
use rpc::v1::*;
use serde_json::json;
use tonic::metadata::{Ascii, MetadataValue};
use tonic::service::interceptor::InterceptedService;
use tonic::transport::{Channel, Endpoint};

use crate::daemon::{read_token, Addr, TestSpec};

#[derive(Args, Debug)]
pub struct ClientArgs {
    /// The daemon: HOST:PORT or unix:PATH.
    #[arg(
        long,
        env = "CUZK_DAEMON_ADDR",
        default_value = "127.0.0.1:9820",
        global = true
    )]
    addr: String,
    /// A file holding the daemon's token.
    #[arg(
        long,
        env = "CUZK_DAEMON_TOKEN_FILE",
        value_name = "FILE",
        global = true
    )]
    token_file: Option<PathBuf>,
    /// Give up on the call after this many seconds (exit 2; a submitted job goes on in the daemon).
    #[arg(long, value_name = "SECONDS", global = true)]
    deadline_s: Option<u64>,
    #[command(subcommand)]
    call: Call,
}

#[derive(Subcommand, Debug)]
enum Call {
    /// Queue a job; prints its id (SubmitProof).
    Submit(JobArgs),
    /// Wait for a job; writes its proof (AwaitProof). Exit 0 completed, 1 failed, cancelled or timed out.
    Await(AwaitArgs),
    /// Submit and wait in one call (Prove); writes the proof. Exit 0 completed, 1 failed or cancelled.
    Prove(ProveArgs),
    /// Cancel a queued or running job (CancelProof).
    Cancel(JobIdArg),
    /// GPUs, loaded parameter sets, queues and counters (GetStatus).
    Status,
    /// Prometheus text (GetMetrics), printed as is.
    Metrics,
    /// Load a parameter set now (PreloadSRS), e.g. porep-32g or sha256-b1.
    Preload(CircuitIdArg),
    /// Drop a loaded parameter set (EvictSRS).
    Evict(CircuitIdArg),
}

#[derive(Args, Debug)]
struct JobArgs {
    /// PoRep Commit-2: the sector's C1 output (JSON, as lotus and curio write it).
    #[arg(
        long,
        value_name = "FILE",
        conflicts_with = "test_blocks",
        required_unless_present = "test_blocks"
    )]
    c1: Option<PathBuf>,
    /// PoRep: the miner actor id.
    #[arg(long, requires = "c1")]
    miner_id: Option<u64>,
    /// PoRep: the sector number.
    #[arg(long, requires = "c1")]
    sector_number: Option<u64>,
    /// PoRep: the numeric RegisteredSealProof (default: not sent; the C1 output names its own).
    #[arg(long, requires = "c1")]
    registered_proof: Option<u64>,
    /// A test circuit instead: SHA-256 over this many 64-byte blocks (proof kind CUZK_TEST_CIRCUIT).
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..=crate::daemon::MAX_TEST_BLOCKS as u64))]
    test_blocks: Option<u64>,
    /// The test circuit's preimage as hex (default: random, chosen here so the inputs can be written).
    #[arg(long, requires = "test_blocks")]
    preimage_hex: Option<String>,
    /// Where to write a test circuit's public inputs (for `cuzk verify`).
    #[arg(long, value_name = "FILE", requires = "test_blocks")]
    inputs: Option<PathBuf>,
    /// The idempotency key: submitting it again returns the same job.
    #[arg(long, default_value = "")]
    request_id: String,
    #[arg(long, value_enum, default_value = "normal")]
    priority: PriorityArg,
}

#[derive(ValueEnum, Clone, Copy, Debug)]
enum PriorityArg {
    Low,
    Normal,
    High,
    Critical,
}

#[derive(Args, Debug)]
struct AwaitArgs {
    #[arg(long)]
    job_id: String,
    /// Give up after this many ms (0: wait until the job finishes).
    #[arg(long, default_value_t = 0)]
    timeout_ms: u64,
    /// Where to write the proof.
    #[arg(long, value_name = "FILE")]
    proof: Option<PathBuf>,
}

#[derive(Args, Debug)]
struct ProveArgs {
    #[command(flatten)]
    job: JobArgs,
    /// Where to write the proof.
    #[arg(long, value_name = "FILE")]
    proof: Option<PathBuf>,
}

#[derive(Args, Debug)]
struct JobIdArg {
    #[arg(long)]
    job_id: String,
}

#[derive(Args, Debug)]
struct CircuitIdArg {
    #[arg(long)]
    circuit_id: String,
}

/// Adds the token to every call.
#[derive(Clone, Debug)]
pub struct Auth(Option<MetadataValue<Ascii>>);

impl tonic::service::Interceptor for Auth {
    fn call(&mut self, mut req: tonic::Request<()>) -> Result<tonic::Request<()>, tonic::Status> {
        if let Some(v) = &self.0 {
            req.metadata_mut().insert("authorization", v.clone());
        }
        Ok(req)
    }
}

pub type Client = ProvingEngineClient<InterceptedService<Channel, Auth>>;

/// Connects to a daemon.
pub async fn connect(addr: &str, token: Option<&str>) -> Result<Client> {
    let channel = match Addr::parse(addr)? {
        Addr::Tcp(sock) => Endpoint::from_shared(format!("http://{sock}"))?
            .connect()
            .await
            .with_context(|| format!("connecting to the daemon at {sock}"))?,
        Addr::Unix(path) => {
            let shown = path.display().to_string();
            Endpoint::from_static("http://localhost")
                .connect_with_connector(tower::service_fn(move |_: tonic::transport::Uri| {
                    let path = path.clone();
                    async move {
                        let stream = tokio::net::UnixStream::connect(path).await?;
                        Ok::<_, std::io::Error>(hyper_util::rt::TokioIo::new(stream))
                    }
                }))
                .await
                .with_context(|| format!("connecting to the daemon at unix:{shown}"))?
        }
    };
    let auth = match token {
        Some(t) => Some(
            format!("Bearer {t}")
                .parse()
                .context("the token is not printable ASCII")?,
        ),
        None => None,
    };
    Ok(ProvingEngineClient::with_interceptor(channel, Auth(auth))
        .max_decoding_message_size(256 << 20)
        .max_encoding_message_size(256 << 20))
}

impl JobArgs {
    /// The request, and a test circuit's public inputs as JSON.
    fn request(&self) -> Result<(SubmitProofRequest, Option<String>)> {
        let priority = match self.priority {
            PriorityArg::Low => Priority::Low,
            PriorityArg::Normal => Priority::Normal,
            PriorityArg::High => Priority::High,
            PriorityArg::Critical => Priority::Critical,
        };
        let mut req = SubmitProofRequest {
            request_id: self.request_id.clone(),
            priority: priority as i32,
            ..Default::default()
        };
        if let Some(blocks) = self.test_blocks {
            let blocks = blocks as usize;
            let preimage = match &self.preimage_hex {
                Some(h) => hex::decode(h).context("--preimage-hex is not hex")?,
                None => {
                    let mut p = vec![0u8; circuits::Sha256Circuit::preimage_len(blocks)];
                    rand::RngCore::fill_bytes(&mut rand::rngs::OsRng, &mut p);
                    p
                }
            };
            let circuit = circuits::Sha256Circuit::new(blocks, preimage.clone())
                .map_err(anyhow::Error::msg)
                .context("--preimage-hex")?;
            let spec =
                json!({"circuit": "sha256", "blocks": blocks, "preimage": hex::encode(&preimage)});
            TestSpec::parse(spec.to_string().as_bytes()).map_err(anyhow::Error::msg)?;
            req.proof_kind = ProofKind::CuzkTestCircuit as i32;
            req.vanilla_proof = spec.to_string().into_bytes();
            let inputs = circuit
                .public_inputs()
                .context("the circuit has a preimage")?;
            return Ok((req, Some(crate::inputs::to_json(&inputs))));
        }
        let Some(c1) = &self.c1 else {
            bail!("give --c1 FILE (PoRep) or --test-blocks N (a test circuit)");
        };
        let (Some(miner_id), Some(sector_number)) = (self.miner_id, self.sector_number) else {
            bail!("a PoRep job needs --miner-id and --sector-number");
        };
        req.proof_kind = ProofKind::PorepSealCommit as i32;
        req.vanilla_proof =
            std::fs::read(c1).with_context(|| format!("reading {}", c1.display()))?;
        req.miner_id = miner_id;
        req.sector_number = sector_number;
        req.registered_proof = self.registered_proof.unwrap_or(0);
        Ok((req, None))
    }

    fn write_inputs(&self, inputs: Option<String>) -> Result<()> {
        if let (Some(path), Some(json)) = (&self.inputs, inputs) {
            crate::inputs::write_atomic(path, json.as_bytes())?;
        }
        Ok(())
    }
}

/// Prints a job's result; writes its proof when asked. Exit 0 only when it completed.
fn report_result(r: &AwaitProofResponse, proof: Option<&PathBuf>) -> Result<ExitCode> {
    let status = JobStatus::try_from(r.status).unwrap_or(JobStatus::Unknown);
    if status == JobStatus::Completed {
        if let Some(path) = proof {
            crate::inputs::write_atomic(path, &r.proof)?;
        }
    }
    println!(
        "{}",
        json!({
            "job_id": r.job_id,
            "status": status.as_str_name(),
            "error_message": r.error_message,
            "proof_bytes": r.proof.len(),
            "proof_hex": hex::encode(&r.proof),
            "queue_wait_ms": r.queue_wait_ms,
            "srs_load_ms": r.srs_load_ms,
            "synthesis_ms": r.synthesis_ms,
            "gpu_compute_ms": r.gpu_compute_ms,
            "total_ms": r.total_ms,
        })
    );
    Ok(if status == JobStatus::Completed {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

pub fn run(a: ClientArgs) -> Result<ExitCode> {
    let token = a.token_file.as_deref().map(read_token).transpose()?;
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("starting the async runtime")?;
    let deadline = a.deadline_s.map(std::time::Duration::from_secs);
    let call = async move {
        let mut c = connect(&a.addr, token.as_deref()).await?;
        let rpc = |s: tonic::Status| anyhow::anyhow!("{:?}: {}", s.code(), s.message());
        match a.call {
            Call::Submit(job) => {
                let (req, inputs) = job.request()?;
                let r = c.submit_proof(req).await.map_err(rpc)?.into_inner();
                job.write_inputs(inputs)?;
                println!(
                    "{}",
                    json!({"job_id": r.job_id, "queue_position": r.queue_position})
                );
                Ok(ExitCode::SUCCESS)
            }
            Call::Await(w) => {
                let r = c
                    .await_proof(AwaitProofRequest {
                        job_id: w.job_id.clone(),
                        timeout_ms: w.timeout_ms,
                    })
                    .await
                    .map_err(rpc)?
                    .into_inner();
                report_result(&r, w.proof.as_ref())
            }
            Call::Prove(p) => {
                let (req, inputs) = p.job.request()?;
                p.job.write_inputs(inputs)?;
                let r = c
                    .prove(ProveRequest { submit: Some(req) })
                    .await
                    .map_err(rpc)?
                    .into_inner()
                    .result
                    .context("the daemon's ProveResponse has no result")?;
                report_result(&r, p.proof.as_ref())
            }
            Call::Cancel(j) => {
                let r = c
                    .cancel_proof(CancelProofRequest { job_id: j.job_id })
                    .await
                    .map_err(rpc)?
                    .into_inner();
                println!("{}", json!({"was_running": r.was_running}));
                Ok(ExitCode::SUCCESS)
            }
            Call::Status => {
                let s = c
                    .get_status(GetStatusRequest {})
                    .await
                    .map_err(rpc)?
                    .into_inner();
                println!(
                    "{}",
                    json!({
                        "gpus": s.gpus.iter().map(|g| json!({
                            "ordinal": g.ordinal, "name": g.name, "vram_total_bytes": g.vram_total_bytes,
                            "vram_free_bytes": g.vram_free_bytes, "current_job_id": g.current_job_id,
                            "current_proof_kind": g.current_proof_kind,
                        })).collect::<Vec<_>>(),
                        "loaded_srs": s.loaded_srs.iter().map(|l| json!({
                            "circuit_id": l.circuit_id,
                            "tier": rpc::v1::srs_status::Tier::try_from(l.tier).map_or("?", |t| t.as_str_name()),
                            "size_bytes": l.size_bytes, "ref_count": l.ref_count,
                        })).collect::<Vec<_>>(),
                        "queues": s.queues.iter().map(|q| json!({
                            "proof_kind": q.proof_kind, "pending": q.pending, "in_progress": q.in_progress,
                        })).collect::<Vec<_>>(),
                        "total_proofs_completed": s.total_proofs_completed,
                        "total_proofs_failed": s.total_proofs_failed,
                        "uptime_seconds": s.uptime_seconds,
                        "pinned_memory_bytes": s.pinned_memory_bytes,
                        "pinned_memory_limit_bytes": s.pinned_memory_limit_bytes,
                    })
                );
                Ok(ExitCode::SUCCESS)
            }
            Call::Metrics => {
                let m = c
                    .get_metrics(GetMetricsRequest {})
                    .await
                    .map_err(rpc)?
                    .into_inner();
                print!("{}", m.prometheus_text);
                Ok(ExitCode::SUCCESS)
            }
            Call::Preload(id) => {
                let r = c
                    .preload_srs(PreloadSrsRequest {
                        circuit_id: id.circuit_id,
                    })
                    .await
                    .map_err(rpc)?
                    .into_inner();
                println!(
                    "{}",
                    json!({"already_loaded": r.already_loaded, "load_time_ms": r.load_time_ms})
                );
                Ok(ExitCode::SUCCESS)
            }
            Call::Evict(id) => {
                let r = c
                    .evict_srs(EvictSrsRequest {
                        circuit_id: id.circuit_id,
                    })
                    .await
                    .map_err(rpc)?
                    .into_inner();
                println!(
                    "{}",
                    json!({"was_loaded": r.was_loaded, "freed_bytes": r.freed_bytes})
                );
                Ok(ExitCode::SUCCESS)
            }
        }
    };
    runtime.block_on(async move {
        match deadline {
            None => call.await,
            Some(d) => tokio::time::timeout(d, call)
                .await
                .map_err(|_| anyhow::anyhow!("no answer within --deadline-s {}", d.as_secs()))?,
        }
    })
}
