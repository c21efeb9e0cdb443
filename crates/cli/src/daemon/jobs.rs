//! The daemon's job table: each job's phase, the priority queue, the request-id index and the counters.
//!
//! Everything here is in memory and guarded by one mutex held for a few operations at a time; what must survive a
//! crash is written by the journal before the table changes (a job is journaled before it is queued, a result
//! before waiters hear of it).

use std::cmp::Reverse;
use std::collections::{BTreeSet, HashMap};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};

use rpc::v1::await_proof_response::Status;
use rpc::v1::{AwaitProofResponse, Priority, ProofKind};
use tokio::sync::watch;

/// Where a job is.
#[derive(Clone, Debug)]
pub enum Phase {
    /// Admitted, its record being written to the journal.
    Accepting,
    /// In the queue.
    Pending,
    /// Being proved.
    Running,
    /// Finished: completed, failed or cancelled.
    Done(Arc<AwaitProofResponse>),
}

/// One job.
#[derive(Debug)]
pub struct Job {
    pub id: String,
    /// The caller's idempotency key ("" when none was given).
    pub request_id: String,
    pub kind: ProofKind,
    /// The parameter set it proves with: consecutive queued jobs of one set share an engine run.
    pub circuit_id: String,
    /// The queue order: higher first (an unspecified priority counts as NORMAL).
    pub priority: Priority,
    /// Acceptance order: first in, first out within a priority.
    pub seq: u64,
    pub submitted_unix_ms: u64,
    /// The phase; waiters subscribe.
    pub phase: watch::Sender<Phase>,
    /// Raised by CancelProof while the job runs.
    pub cancel: AtomicBool,
    /// When the job finished (0 until then).
    pub finished_unix_ms: AtomicU64,
    /// When a waiter first received the result (0 until then).
    pub fetched_unix_ms: AtomicU64,
}

impl Job {
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        id: String,
        request_id: String,
        kind: ProofKind,
        circuit_id: String,
        priority: Priority,
        seq: u64,
        submitted_unix_ms: u64,
        phase: Phase,
    ) -> Self {
        let priority = match priority {
            Priority::Unspecified => Priority::Normal,
            p => p,
        };
        Job {
            id,
            request_id,
            kind,
            circuit_id,
            priority,
            seq,
            submitted_unix_ms,
            phase: watch::Sender::new(phase),
            cancel: AtomicBool::new(false),
            finished_unix_ms: AtomicU64::new(0),
            fetched_unix_ms: AtomicU64::new(0),
        }
    }

    fn queue_key(&self) -> QueueKey {
        (Reverse(self.priority as i32), self.seq, self.id.clone())
    }

    /// The result, once there is one.
    pub fn result(&self) -> Option<Arc<AwaitProofResponse>> {
        match &*self.phase.borrow() {
            Phase::Done(r) => Some(r.clone()),
            _ => None,
        }
    }
}

type QueueKey = (Reverse<i32>, u64, String);

/// Totals since the daemon started (results recovered from the journal are not counted again).
#[derive(Clone, Copy, Debug, Default)]
pub struct Counters {
    pub submitted: u64,
    pub completed: u64,
    pub failed: u64,
    pub cancelled: u64,
    /// SubmitProof calls refused because the queue was full.
    pub refused_full: u64,
    /// Jobs found unfinished in the journal at start and queued again.
    pub recovered: u64,
    /// Sum of completed jobs' total time, ms.
    pub completed_ms: u64,
}

/// A snapshot for GetStatus and GetMetrics.
#[derive(Clone, Debug, Default)]
pub struct Snapshot {
    /// (kind, pending, running) for every kind with jobs, and always the supported kinds.
    pub queues: Vec<(ProofKind, u32, u32)>,
    /// The oldest running job.
    pub running: Option<(String, ProofKind)>,
    pub counters: Counters,
    /// Finished jobs whose results are kept.
    pub results_kept: usize,
}

/// What [`Table::admit`] decided.
#[derive(Debug)]
pub enum Admit {
    /// The request id names a job that is queued, running or completed: the same job.
    Existing(Arc<Job>),
    /// A new job, in [`Phase::Accepting`]: journal it, then [`Table::enqueue`] it.
    New(Arc<Job>),
    /// The queue holds `max` jobs already.
    Full { max: usize },
}

/// What [`Table::cancel`] found.
#[derive(Debug)]
pub enum Cancel {
    NotFound,
    /// Taken out of the queue: journal its cancelled result, then [`Table::finish`] it.
    WasPending(Arc<Job>),
    /// Its cancel flag is raised; the executor stops it between partitions.
    Running,
    /// Still being accepted; the caller may retry.
    Accepting,
    /// Already finished with this status.
    Finished(Status),
}

#[derive(Debug, Default)]
struct Inner {
    jobs: HashMap<String, Arc<Job>>,
    by_request: HashMap<String, String>,
    queue: BTreeSet<QueueKey>,
    accepting: usize,
    /// Oldest first.
    running: Vec<Arc<Job>>,
    next_seq: u64,
    counters: Counters,
    stopping: bool,
}

/// The job table.
#[derive(Debug)]
pub struct Table {
    inner: Mutex<Inner>,
    work: Condvar,
    max_queue: usize,
}

/// A fresh job id: 128 random bits in hex.
pub fn new_job_id() -> String {
    use rand::RngCore;
    let mut bytes = [0u8; 16];
    rand::rngs::OsRng.fill_bytes(&mut bytes);
    hex::encode(bytes)
}

pub fn unix_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64)
}

impl Table {
    pub fn new(max_queue: usize) -> Self {
        Table {
            inner: Mutex::new(Inner::default()),
            work: Condvar::new(),
            max_queue: max_queue.max(1),
        }
    }

    fn lock(&self) -> MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The job a request id names, if it is one a repeated submission should get back (queued, running or
    /// completed; a failed or cancelled job is retried by a new one).
    pub fn by_request(&self, request_id: &str) -> Option<Arc<Job>> {
        Self::existing(&self.lock(), request_id)
    }

    fn existing(inner: &Inner, request_id: &str) -> Option<Arc<Job>> {
        if request_id.is_empty() {
            return None;
        }
        let job = inner.jobs.get(inner.by_request.get(request_id)?)?;
        let retry =
            matches!(&*job.phase.borrow(), Phase::Done(r) if r.status != Status::Completed as i32);
        (!retry).then(|| job.clone())
    }

    /// Admits a submission: the existing job of its request id, a new job, or a refusal when the queue is full.
    pub fn admit(
        &self,
        request_id: &str,
        kind: ProofKind,
        circuit_id: &str,
        priority: Priority,
    ) -> Admit {
        let mut inner = self.lock();
        // Checked under the same lock as the insert: two submissions of one request id race to one job.
        if let Some(job) = Self::existing(&inner, request_id) {
            return Admit::Existing(job);
        }
        if inner.queue.len() + inner.accepting >= self.max_queue {
            inner.counters.refused_full += 1;
            return Admit::Full {
                max: self.max_queue,
            };
        }
        inner.next_seq += 1;
        let job = Arc::new(Job::new(
            new_job_id(),
            request_id.to_owned(),
            kind,
            circuit_id.to_owned(),
            priority,
            inner.next_seq,
            unix_ms(),
            Phase::Accepting,
        ));
        inner.accepting += 1;
        inner.jobs.insert(job.id.clone(), job.clone());
        if !request_id.is_empty() {
            inner
                .by_request
                .insert(request_id.to_owned(), job.id.clone());
        }
        inner.counters.submitted += 1;
        Admit::New(job)
    }

    /// Queues an admitted job once its record is journaled.
    pub fn enqueue(&self, job: &Arc<Job>) {
        let mut inner = self.lock();
        inner.accepting = inner.accepting.saturating_sub(1);
        inner.queue.insert(job.queue_key());
        job.phase.send_replace(Phase::Pending);
        drop(inner);
        self.work.notify_all();
    }

    /// Forgets an admitted job whose record could not be journaled; anyone already waiting on it hears `message`.
    pub fn abandon(&self, job: &Arc<Job>, message: String) {
        let mut inner = self.lock();
        inner.accepting = inner.accepting.saturating_sub(1);
        inner.jobs.remove(&job.id);
        if inner.by_request.get(&job.request_id) == Some(&job.id) {
            inner.by_request.remove(&job.request_id);
        }
        inner.counters.submitted = inner.counters.submitted.saturating_sub(1);
        drop(inner);
        job.phase
            .send_replace(Phase::Done(Arc::new(AwaitProofResponse {
                job_id: job.id.clone(),
                status: Status::Failed as i32,
                error_message: message,
                ..Default::default()
            })));
    }

    /// Puts back a job the journal holds unfinished (at start, in acceptance order).
    pub fn restore_pending(&self, job: Job) {
        let job = Arc::new(job);
        job.phase.send_replace(Phase::Pending);
        let mut inner = self.lock();
        inner.next_seq = inner.next_seq.max(job.seq);
        inner.queue.insert(job.queue_key());
        if !job.request_id.is_empty() {
            inner
                .by_request
                .insert(job.request_id.clone(), job.id.clone());
        }
        inner.counters.recovered += 1;
        inner.jobs.insert(job.id.clone(), job);
        drop(inner);
        self.work.notify_all();
    }

    /// Puts back a finished job's result from the journal.
    pub fn restore_done(&self, job: Job, result: AwaitProofResponse, finished_unix_ms: u64) {
        job.finished_unix_ms
            .store(finished_unix_ms, Ordering::Relaxed);
        job.phase.send_replace(Phase::Done(Arc::new(result)));
        let mut inner = self.lock();
        inner.next_seq = inner.next_seq.max(job.seq);
        if !job.request_id.is_empty() {
            inner
                .by_request
                .insert(job.request_id.clone(), job.id.clone());
        }
        inner.jobs.insert(job.id.clone(), Arc::new(job));
    }

    /// Blocks until a job is queued (and returns it, now running) or [`Table::stop`] is called.
    pub fn next(&self) -> Option<Arc<Job>> {
        let mut inner = self.lock();
        loop {
            if inner.stopping {
                return None;
            }
            if let Some(job) = Self::pop(&mut inner, |_| true) {
                return Some(job);
            }
            inner = self.work.wait(inner).unwrap_or_else(|e| e.into_inner());
        }
    }

    /// The queue's first job, now running, if `take` accepts it (without waiting): the executor adds the next job
    /// to a running engine only when it is next in priority order and proves with the same parameters.
    pub fn next_if(&self, take: impl Fn(&Job) -> bool) -> Option<Arc<Job>> {
        let mut inner = self.lock();
        if inner.stopping {
            return None;
        }
        Self::pop(&mut inner, take)
    }

    fn pop(inner: &mut Inner, take: impl Fn(&Job) -> bool) -> Option<Arc<Job>> {
        loop {
            let key = inner.queue.first()?.clone();
            let Some(job) = inner.jobs.get(&key.2).cloned() else {
                inner.queue.remove(&key);
                continue;
            };
            if !take(&job) {
                return None;
            }
            inner.queue.remove(&key);
            job.phase.send_replace(Phase::Running);
            inner.running.push(job.clone());
            return Some(job);
        }
    }

    /// Waits up to `timeout` for a job to be queued (returns at once if one is).
    pub fn wait_for_work(&self, timeout: std::time::Duration) {
        let inner = self.lock();
        if inner.queue.is_empty() && !inner.stopping {
            let _ = self.work.wait_timeout(inner, timeout);
        }
    }

    /// Records a job's result (already journaled) and wakes its waiters.
    pub fn finish(&self, job: &Arc<Job>, result: AwaitProofResponse) {
        let mut inner = self.lock();
        inner.running.retain(|r| r.id != job.id);
        match Status::try_from(result.status) {
            Ok(Status::Completed) => {
                inner.counters.completed += 1;
                inner.counters.completed_ms += result.total_ms;
            }
            Ok(Status::Cancelled) => inner.counters.cancelled += 1,
            _ => inner.counters.failed += 1,
        }
        drop(inner);
        job.finished_unix_ms.store(unix_ms(), Ordering::Relaxed);
        job.phase.send_replace(Phase::Done(Arc::new(result)));
    }

    /// Cancels a job: out of the queue if it waits there, flagged if it runs.
    pub fn cancel(&self, job_id: &str) -> Cancel {
        let mut inner = self.lock();
        let Some(job) = inner.jobs.get(job_id).cloned() else {
            return Cancel::NotFound;
        };
        let phase = job.phase.borrow().clone();
        match phase {
            Phase::Accepting => Cancel::Accepting,
            // A second cancel while the first is journaling the result.
            Phase::Pending if job.cancel.swap(true, Ordering::Relaxed) => {
                Cancel::Finished(Status::Cancelled)
            }
            Phase::Pending => {
                inner.queue.remove(&job.queue_key());
                // Not running and not queued: nobody else will touch it before the caller finishes it.
                Cancel::WasPending(job)
            }
            Phase::Running => {
                job.cancel.store(true, Ordering::Relaxed);
                Cancel::Running
            }
            Phase::Done(r) => {
                Cancel::Finished(Status::try_from(r.status).unwrap_or(Status::Unknown))
            }
        }
    }

    /// The jobs running now.
    pub fn running(&self) -> Vec<Arc<Job>> {
        self.lock().running.clone()
    }

    pub fn get(&self, job_id: &str) -> Option<Arc<Job>> {
        self.lock().jobs.get(job_id).cloned()
    }

    /// Jobs ahead of `job` in the queue (0 when it is not queued).
    pub fn position(&self, job: &Job) -> u32 {
        let inner = self.lock();
        let key = job.queue_key();
        if !inner.queue.contains(&key) {
            return 0;
        }
        inner.queue.range(..key).count() as u32
    }

    /// Removes finished jobs whose results are older than `result_ttl_ms` since they finished, or `fetched_ttl_ms`
    /// since they were first fetched; returns them so their journal files can go too.
    pub fn expire(&self, now_ms: u64, result_ttl_ms: u64, fetched_ttl_ms: u64) -> Vec<Arc<Job>> {
        let mut inner = self.lock();
        let expired: Vec<Arc<Job>> = inner
            .jobs
            .values()
            .filter(|j| {
                let finished = j.finished_unix_ms.load(Ordering::Relaxed);
                let fetched = j.fetched_unix_ms.load(Ordering::Relaxed);
                j.result().is_some()
                    && (now_ms.saturating_sub(finished) >= result_ttl_ms
                        || (fetched != 0 && now_ms.saturating_sub(fetched) >= fetched_ttl_ms))
            })
            .cloned()
            .collect();
        for job in &expired {
            inner.jobs.remove(&job.id);
            if inner.by_request.get(&job.request_id) == Some(&job.id) {
                inner.by_request.remove(&job.request_id);
            }
        }
        expired
    }

    pub fn snapshot(&self, kinds: &[ProofKind]) -> Snapshot {
        let inner = self.lock();
        let mut queues: Vec<(ProofKind, u32, u32)> = kinds.iter().map(|&k| (k, 0, 0)).collect();
        fn slot(
            queues: &mut Vec<(ProofKind, u32, u32)>,
            kind: ProofKind,
        ) -> &mut (ProofKind, u32, u32) {
            let i = match queues.iter().position(|q| q.0 == kind) {
                Some(i) => i,
                None => {
                    queues.push((kind, 0, 0));
                    queues.len() - 1
                }
            };
            &mut queues[i]
        }
        for key in &inner.queue {
            if let Some(job) = inner.jobs.get(&key.2) {
                slot(&mut queues, job.kind).1 += 1;
            }
        }
        for job in &inner.running {
            slot(&mut queues, job.kind).2 += 1;
        }
        Snapshot {
            queues,
            running: inner.running.first().map(|j| (j.id.clone(), j.kind)),
            counters: inner.counters,
            results_kept: inner.jobs.values().filter(|j| j.result().is_some()).count(),
        }
    }

    /// Wakes the executor to stop.
    pub fn stop(&self) {
        self.lock().stopping = true;
        self.work.notify_all();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn new_job(t: &Table, request_id: &str, priority: Priority) -> Arc<Job> {
        match t.admit(
            request_id,
            ProofKind::CuzkTestCircuit,
            "sha256-b1",
            priority,
        ) {
            Admit::New(job) => {
                t.enqueue(&job);
                job
            }
            other => panic!("expected a new job, got {other:?}"),
        }
    }

    fn done(status: Status) -> AwaitProofResponse {
        AwaitProofResponse {
            status: status as i32,
            ..Default::default()
        }
    }

    #[test]
    fn critical_first_then_first_in_first_out() {
        let t = Table::new(10);
        let low = new_job(&t, "", Priority::Low);
        let a = new_job(&t, "", Priority::Unspecified);
        let b = new_job(&t, "", Priority::Normal);
        let crit = new_job(&t, "", Priority::Critical);
        let high = new_job(&t, "", Priority::High);
        assert_eq!(t.position(&crit), 0);
        assert_eq!(t.position(&low), 4);
        // A running engine takes the next job only when it is the queue's head.
        assert!(t.next_if(|j| j.id == high.id).is_none());
        let order: Vec<String> = (0..5).map(|_| t.next().unwrap().id.clone()).collect();
        assert_eq!(
            order,
            [&crit.id, &high.id, &a.id, &b.id, &low.id].map(String::clone)
        );
    }

    #[test]
    fn a_full_queue_refuses_and_counts() {
        let t = Table::new(2);
        new_job(&t, "", Priority::Normal);
        new_job(&t, "", Priority::Normal);
        assert!(matches!(
            t.admit(
                "",
                ProofKind::CuzkTestCircuit,
                "sha256-b1",
                Priority::Normal
            ),
            Admit::Full { max: 2 }
        ));
        assert_eq!(t.snapshot(&[]).counters.refused_full, 1);
        // A running job leaves the queue and makes room.
        let running = t.next().unwrap();
        assert!(matches!(running.phase.borrow().clone(), Phase::Running));
        assert!(matches!(
            t.admit(
                "",
                ProofKind::CuzkTestCircuit,
                "sha256-b1",
                Priority::Normal
            ),
            Admit::New(_)
        ));
    }

    #[test]
    fn a_repeated_request_id_is_the_same_job_unless_it_failed() {
        let t = Table::new(10);
        let first = new_job(&t, "porep-1000-7", Priority::Normal);
        match t.admit(
            "porep-1000-7",
            ProofKind::CuzkTestCircuit,
            "sha256-b1",
            Priority::Normal,
        ) {
            Admit::Existing(j) => assert_eq!(j.id, first.id),
            other => panic!("{other:?}"),
        }
        let job = t.next().unwrap();
        t.finish(&job, done(Status::Failed));
        let retry = new_job(&t, "porep-1000-7", Priority::Normal);
        assert_ne!(retry.id, first.id);
        let job = t.next().unwrap();
        t.finish(&job, done(Status::Completed));
        match t.admit(
            "porep-1000-7",
            ProofKind::CuzkTestCircuit,
            "sha256-b1",
            Priority::Normal,
        ) {
            Admit::Existing(j) => assert_eq!(j.id, retry.id),
            other => panic!("{other:?}"),
        }
        let s = t.snapshot(&[]);
        assert_eq!((s.counters.completed, s.counters.failed), (1, 1));
    }

    #[test]
    fn cancel_takes_pending_jobs_out_and_flags_running_ones() {
        let t = Table::new(10);
        let a = new_job(&t, "", Priority::Normal);
        let b = new_job(&t, "", Priority::Normal);
        let running = t.next().unwrap();
        assert_eq!(running.id, a.id);
        assert!(matches!(t.cancel(&a.id), Cancel::Running));
        assert!(a.cancel.load(Ordering::Relaxed));
        match t.cancel(&b.id) {
            Cancel::WasPending(j) => {
                // A second cancel before the first has finished the job does not take it twice.
                assert!(matches!(
                    t.cancel(&b.id),
                    Cancel::Finished(Status::Cancelled)
                ));
                t.finish(&j, done(Status::Cancelled))
            }
            other => panic!("{other:?}"),
        }
        assert!(matches!(
            t.cancel(&b.id),
            Cancel::Finished(Status::Cancelled)
        ));
        assert!(matches!(t.cancel("nope"), Cancel::NotFound));
        // Nothing is left to run once `a` finishes.
        t.finish(&a, done(Status::Cancelled));
        t.stop();
        assert!(t.next().is_none());
    }

    #[test]
    fn results_expire_by_age_or_after_a_fetch() {
        let t = Table::new(10);
        let a = new_job(&t, "r-a", Priority::Normal);
        let b = new_job(&t, "", Priority::Normal);
        for _ in 0..2 {
            let j = t.next().unwrap();
            t.finish(&j, done(Status::Completed));
        }
        let now = unix_ms();
        b.fetched_unix_ms.store(now, Ordering::Relaxed);
        assert!(t.expire(now, 60_000, 10_000).is_empty());
        let gone = t.expire(now + 10_000, 60_000, 10_000);
        assert_eq!(gone.len(), 1);
        assert_eq!(gone[0].id, b.id);
        let gone = t.expire(now + 60_000, 60_000, 10_000);
        assert_eq!(gone[0].id, a.id);
        assert!(t.get(&a.id).is_none());
        assert!(t.by_request("r-a").is_none());
    }
}
