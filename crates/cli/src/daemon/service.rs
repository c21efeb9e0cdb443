//! The `cuzk.v1.ProvingEngine` service over the job table, the journal and the loaded parameter sets.

use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::{Duration, Instant};

use rpc::journal::JobRecord;
use rpc::v1::await_proof_response::Status as JobStatus;
use rpc::v1::proving_engine_server::ProvingEngine;
use rpc::v1::srs_status::Tier;
use rpc::v1::*;
use tokio::sync::Semaphore;
use tonic::{Request, Response, Status};

use super::exec::{self, Engines, SUPPORTED};
use super::jobs::{unix_ms, Admit, Cancel, Job, Phase, Table};
use super::journal::Journal;

/// The service's state.
pub struct Service {
    pub table: Arc<Table>,
    pub journal: Arc<Journal>,
    pub engines: Arc<Engines>,
    pub started: Instant,
    /// Submissions checked at once (each may parse a C1 output of tens of MB).
    pub checks: Semaphore,
    /// Jobs recovered from the journal at start, and records found corrupt there.
    pub recovered: u64,
    pub corrupt: u64,
}

impl std::fmt::Debug for Service {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Service").finish_non_exhaustive()
    }
}

fn internal(what: &str, e: impl std::fmt::Display) -> Status {
    Status::internal(format!("{what}: {e}"))
}

impl Service {
    async fn blocking<T: Send + 'static>(
        f: impl FnOnce() -> T + Send + 'static,
    ) -> std::result::Result<T, Status> {
        tokio::task::spawn_blocking(f)
            .await
            .map_err(|e| internal("worker task", e))
    }

    fn accepted(&self, job: &Job) -> SubmitProofResponse {
        SubmitProofResponse {
            job_id: job.id.clone(),
            queue_position: self.table.position(job),
            assigned_gpu: String::new(),
        }
    }

    async fn submit(
        &self,
        req: SubmitProofRequest,
    ) -> std::result::Result<SubmitProofResponse, Status> {
        // A repeated request id gets its job back without the input being checked again.
        if let Some(job) = self.table.by_request(&req.request_id) {
            return Ok(self.accepted(&job));
        }
        let kind = ProofKind::try_from(req.proof_kind).unwrap_or(ProofKind::Unspecified);
        let priority = Priority::try_from(req.priority).map_err(|_| {
            Status::invalid_argument(format!(
                "unknown priority {} (LOW 1, NORMAL 2, HIGH 3, CRITICAL 4)",
                req.priority
            ))
        })?;
        let permit = self
            .checks
            .acquire()
            .await
            .map_err(|e| internal("check queue", e))?;
        let (req, checked) = Self::blocking(move || {
            let checked = exec::validate(&req);
            (req, checked)
        })
        .await?;
        drop(permit);
        let circuit_id = checked.map_err(Status::invalid_argument)?;
        let job = match self.table.admit(&req.request_id, kind, &circuit_id, priority) {
            Admit::Existing(job) => return Ok(self.accepted(&job)),
            Admit::Full { max } => {
                return Err(Status::resource_exhausted(format!(
                    "the queue is full ({max} jobs waiting, the daemon's --max-queue); submit again later"
                )))
            }
            Admit::New(job) => job,
        };
        let record = JobRecord {
            job_id: job.id.clone(),
            seq: job.seq,
            submitted_unix_ms: job.submitted_unix_ms,
            request: Some(req),
            circuit_id,
        };
        let journal = self.journal.clone();
        match Self::blocking(move || journal.write_job(&record)).await {
            Ok(Ok(())) => {
                self.table.enqueue(&job);
                tracing::info!(job_id = %job.id, request_id = %job.request_id, kind = job.kind.as_str_name(), "job accepted");
                Ok(self.accepted(&job))
            }
            Ok(Err(e)) => {
                let message =
                    format!("the job could not be journaled, so it was not accepted: {e:#}");
                self.table.abandon(&job, message.clone());
                Err(Status::unavailable(message))
            }
            Err(status) => {
                self.table.abandon(&job, status.message().to_owned());
                Err(status)
            }
        }
    }

    async fn wait(
        &self,
        job_id: &str,
        timeout_ms: u64,
    ) -> std::result::Result<AwaitProofResponse, Status> {
        let job = self.table.get(job_id).ok_or_else(|| {
            Status::not_found(format!(
                "no job {job_id:?} (never accepted here, or its result expired or was purged)"
            ))
        })?;
        let mut rx = job.phase.subscribe();
        let wait = rx.wait_for(|p| matches!(p, Phase::Done(_)));
        let done = if timeout_ms == 0 {
            Some(wait.await)
        } else {
            tokio::time::timeout(Duration::from_millis(timeout_ms), wait)
                .await
                .ok()
        };
        match done {
            None => Ok(AwaitProofResponse {
                job_id: job.id.clone(),
                status: JobStatus::Timeout as i32,
                ..Default::default()
            }),
            Some(Err(_)) => Err(Status::not_found(format!(
                "job {job_id} was purged while waiting"
            ))),
            Some(Ok(phase)) => {
                let Phase::Done(result) = &*phase else {
                    return Err(internal("job phase", "not done"));
                };
                let result = (**result).clone();
                drop(phase);
                if job
                    .fetched_unix_ms
                    .compare_exchange(0, unix_ms(), Ordering::Relaxed, Ordering::Relaxed)
                    .is_ok()
                {
                    let (journal, id) = (self.journal.clone(), job.id.clone());
                    tokio::task::spawn_blocking(move || {
                        if let Err(e) = journal.mark_fetched(&id) {
                            tracing::warn!(job_id = %id, "could not record the fetch: {e:#}");
                        }
                    });
                }
                Ok(result)
            }
        }
    }

    /// The Prometheus text exposition.
    fn metrics(&self) -> String {
        let s = self.table.snapshot(&SUPPORTED);
        let c = s.counters;
        let mut out = String::new();
        let mut metric = |name: &str, kind: &str, help: &str, samples: Vec<(String, f64)>| {
            out.push_str(&format!("# HELP {name} {help}\n# TYPE {name} {kind}\n"));
            for (labels, v) in samples {
                out.push_str(&format!("{name}{labels} {v}\n"));
            }
        };
        let one = |v: u64| vec![(String::new(), v as f64)];
        metric(
            "cuzk_jobs_submitted_total",
            "counter",
            "Jobs accepted since start.",
            one(c.submitted),
        );
        metric(
            "cuzk_jobs_completed_total",
            "counter",
            "Jobs completed since start.",
            one(c.completed),
        );
        metric(
            "cuzk_jobs_failed_total",
            "counter",
            "Jobs failed since start.",
            one(c.failed),
        );
        metric(
            "cuzk_jobs_cancelled_total",
            "counter",
            "Jobs cancelled since start.",
            one(c.cancelled),
        );
        metric(
            "cuzk_jobs_refused_queue_full_total",
            "counter",
            "Submissions refused because the queue was full.",
            one(c.refused_full),
        );
        metric(
            "cuzk_jobs_recovered_total",
            "counter",
            "Unfinished jobs found in the journal at start and queued again.",
            one(self.recovered),
        );
        metric(
            "cuzk_journal_corrupt_records",
            "gauge",
            "Journal records that failed their checks at start (moved to corrupt/).",
            one(self.corrupt),
        );
        metric(
            "cuzk_job_completed_seconds_sum",
            "counter",
            "Total time of completed jobs, submission to result.",
            vec![(String::new(), c.completed_ms as f64 / 1e3)],
        );
        let by_kind = |f: fn(&(ProofKind, u32, u32)) -> u32| {
            s.queues
                .iter()
                .map(|q| {
                    (
                        format!("{{proof_kind=\"{}\"}}", q.0.as_str_name()),
                        f(q) as f64,
                    )
                })
                .collect()
        };
        metric(
            "cuzk_queue_pending",
            "gauge",
            "Jobs waiting in the queue.",
            by_kind(|q| q.1),
        );
        metric(
            "cuzk_queue_running",
            "gauge",
            "Jobs being proved.",
            by_kind(|q| q.2),
        );
        metric(
            "cuzk_results_kept",
            "gauge",
            "Finished jobs whose results are kept.",
            one(s.results_kept as u64),
        );
        metric(
            "cuzk_srs_loaded_bytes",
            "gauge",
            "Host bytes of each loaded parameter set.",
            self.engines
                .list()
                .into_iter()
                .map(|(id, bytes, _)| (format!("{{circuit_id=\"{id}\"}}"), bytes as f64))
                .collect(),
        );
        metric(
            "cuzk_uptime_seconds",
            "gauge",
            "Seconds since the daemon started.",
            one(self.started.elapsed().as_secs()),
        );
        out
    }
}

#[tonic::async_trait]
impl ProvingEngine for Service {
    async fn submit_proof(
        &self,
        request: Request<SubmitProofRequest>,
    ) -> std::result::Result<Response<SubmitProofResponse>, Status> {
        self.submit(request.into_inner()).await.map(Response::new)
    }

    async fn await_proof(
        &self,
        request: Request<AwaitProofRequest>,
    ) -> std::result::Result<Response<AwaitProofResponse>, Status> {
        let r = request.into_inner();
        self.wait(&r.job_id, r.timeout_ms).await.map(Response::new)
    }

    async fn prove(
        &self,
        request: Request<ProveRequest>,
    ) -> std::result::Result<Response<ProveResponse>, Status> {
        let submit = request
            .into_inner()
            .submit
            .ok_or_else(|| Status::invalid_argument("ProveRequest has no submit message"))?;
        let accepted = self.submit(submit).await?;
        let result = self.wait(&accepted.job_id, 0).await?;
        Ok(Response::new(ProveResponse {
            result: Some(result),
        }))
    }

    async fn cancel_proof(
        &self,
        request: Request<CancelProofRequest>,
    ) -> std::result::Result<Response<CancelProofResponse>, Status> {
        let id = request.into_inner().job_id;
        match self.table.cancel(&id) {
            Cancel::NotFound => Err(Status::not_found(format!("no job {id:?}"))),
            Cancel::Accepting => Err(Status::unavailable(format!(
                "job {id} is still being accepted; cancel again in a moment"
            ))),
            Cancel::Finished(status) => Err(Status::failed_precondition(format!(
                "job {id} already finished ({})",
                status.as_str_name()
            ))),
            Cancel::Running => {
                tracing::info!(job_id = %id, "cancel requested for a running job");
                Ok(Response::new(CancelProofResponse { was_running: true }))
            }
            Cancel::WasPending(job) => {
                let (table, journal) = (self.table.clone(), self.journal.clone());
                Self::blocking(move || {
                    let result = AwaitProofResponse {
                        job_id: job.id.clone(),
                        status: JobStatus::Cancelled as i32,
                        total_ms: unix_ms().saturating_sub(job.submitted_unix_ms),
                        ..Default::default()
                    };
                    exec::finish(&table, &journal, &job, result);
                })
                .await?;
                tracing::info!(job_id = %id, "queued job cancelled");
                Ok(Response::new(CancelProofResponse { was_running: false }))
            }
        }
    }

    async fn get_status(
        &self,
        _request: Request<GetStatusRequest>,
    ) -> std::result::Result<Response<GetStatusResponse>, Status> {
        let s = self.table.snapshot(&SUPPORTED);
        let gpus = match Self::blocking(exec::gpu).await? {
            Ok((name, free, total)) => vec![GpuStatus {
                ordinal: 0,
                name,
                vram_total_bytes: total,
                vram_free_bytes: free,
                current_job_id: s.running.as_ref().map(|r| r.0.clone()).unwrap_or_default(),
                current_proof_kind: s
                    .running
                    .as_ref()
                    .map(|r| r.1.as_str_name().to_owned())
                    .unwrap_or_default(),
            }],
            Err(_) => Vec::new(),
        };
        Ok(Response::new(GetStatusResponse {
            gpus,
            loaded_srs: self
                .engines
                .list()
                .into_iter()
                .map(|(circuit_id, size_bytes, ref_count)| SrsStatus {
                    circuit_id,
                    tier: Tier::Hot as i32,
                    size_bytes,
                    ref_count,
                })
                .collect(),
            queues: s
                .queues
                .iter()
                .map(|&(kind, pending, in_progress)| QueueStatus {
                    proof_kind: kind.as_str_name().to_owned(),
                    pending,
                    in_progress,
                })
                .collect(),
            total_proofs_completed: s.counters.completed,
            total_proofs_failed: s.counters.failed,
            uptime_seconds: self.started.elapsed().as_secs(),
            // The staging chunks (pinned once per process) and any memory registered for a proof in progress.
            pinned_memory_bytes: ntt_cuda::gpu::pinned_bytes(),
            // No limit is configured: pinned memory is the fixed staging chunks, not a pool that grows.
            pinned_memory_limit_bytes: 0,
        }))
    }

    async fn get_metrics(
        &self,
        _request: Request<GetMetricsRequest>,
    ) -> std::result::Result<Response<GetMetricsResponse>, Status> {
        Ok(Response::new(GetMetricsResponse {
            prometheus_text: self.metrics(),
        }))
    }

    async fn preload_srs(
        &self,
        request: Request<PreloadSrsRequest>,
    ) -> std::result::Result<Response<PreloadSrsResponse>, Status> {
        let id = request.into_inner().circuit_id;
        exec::CircuitId::parse(&id).map_err(Status::invalid_argument)?;
        let engines = self.engines.clone();
        let loaded = Self::blocking(move || engines.get_or_load(&id)).await?;
        match loaded {
            Ok((_, took)) => Ok(Response::new(PreloadSrsResponse {
                already_loaded: took.is_none(),
                load_time_ms: took.map_or(0, |d| d.as_millis() as u64),
            })),
            Err(e) => Err(Status::failed_precondition(format!(
                "loading parameters: {e:#}"
            ))),
        }
    }

    async fn evict_srs(
        &self,
        request: Request<EvictSrsRequest>,
    ) -> std::result::Result<Response<EvictSrsResponse>, Status> {
        let id = request.into_inner().circuit_id;
        exec::CircuitId::parse(&id).map_err(Status::invalid_argument)?;
        match self.engines.evict(&id) {
            Ok(freed) => Ok(Response::new(EvictSrsResponse {
                was_loaded: freed.is_some(),
                freed_bytes: freed.unwrap_or(0),
            })),
            Err(jobs) => Err(Status::failed_precondition(format!(
                "{id} is in use by {jobs} running job(s); evict it when they finish"
            ))),
        }
    }
}
