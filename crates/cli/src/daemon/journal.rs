//! The daemon's journal: every accepted job and every result, on disk before anyone is told of it.
//!
//! Layout under the state directory:
//! - `lock`: held (flock) by the one daemon using the directory;
//! - `jobs/<id>.job`: an accepted job (its whole request), written before SubmitProof replies and removed once its
//!   result is written;
//! - `jobs/<id>.result`: a finished job's result;
//! - `jobs/<id>.fetched`: empty, its time the first fetch of the result;
//! - `corrupt/`: records that failed their checks at start, moved aside and never trusted.
//!
//! A record is `CUZKJRN1`, the protobuf message, then the SHA-256 of the message. Files are written to a temporary
//! name, synced, renamed, and the directory synced, so a crash leaves the old state or the new, never half a file.

use std::fs::File;
use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};
use prost::Message;
use rpc::journal::{JobRecord, ResultRecord};
use sha2::{Digest, Sha256};

const MAGIC: &[u8; 8] = b"CUZKJRN1";

/// The journal of one state directory.
#[derive(Debug)]
pub struct Journal {
    jobs: PathBuf,
    corrupt: PathBuf,
    // Held for the daemon's life.
    _lock: File,
}

/// What the journal held at start.
#[derive(Debug, Default)]
pub struct Recovered {
    /// Accepted jobs without a result, in acceptance order (their requests dropped to save memory; read again
    /// when they run).
    pub pending: Vec<JobRecord>,
    /// Finished jobs, with when their result was first fetched (0 if never).
    pub done: Vec<(ResultRecord, u64)>,
    /// Records that failed their checks, moved to `corrupt/`: (file, why).
    pub corrupt: Vec<(PathBuf, String)>,
}

fn encode(msg: &impl Message) -> Vec<u8> {
    let body = msg.encode_to_vec();
    let mut out = Vec::with_capacity(MAGIC.len() + body.len() + 32);
    out.extend_from_slice(MAGIC);
    out.extend_from_slice(&body);
    out.extend_from_slice(&Sha256::digest(&body));
    out
}

fn decode<M: Message + Default>(bytes: &[u8]) -> std::result::Result<M, String> {
    if bytes.len() < MAGIC.len() + 32 {
        return Err(format!("{} bytes: truncated", bytes.len()));
    }
    if &bytes[..MAGIC.len()] != MAGIC {
        return Err("not a cuzk journal record (bad magic)".into());
    }
    let (body, digest) = bytes[MAGIC.len()..].split_at(bytes.len() - MAGIC.len() - 32);
    if Sha256::digest(body).as_slice() != digest {
        return Err("checksum mismatch (damaged or truncated)".into());
    }
    M::decode(body).map_err(|e| format!("undecodable: {e}"))
}

fn sync_dir(dir: &Path) -> std::io::Result<()> {
    File::open(dir)?.sync_all()
}

impl Journal {
    /// Opens (creating) the journal in `state_dir` and locks it against a second daemon.
    ///
    /// # Errors
    /// When the directory cannot be created, or another process holds its lock.
    pub fn open(state_dir: &Path) -> Result<Self> {
        let jobs = state_dir.join("jobs");
        let corrupt = state_dir.join("corrupt");
        for d in [&jobs, &corrupt] {
            std::fs::create_dir_all(d).with_context(|| format!("creating {}", d.display()))?;
        }
        let lock_path = state_dir.join("lock");
        let lock = File::options()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&lock_path)
            .with_context(|| format!("opening {}", lock_path.display()))?;
        match lock.try_lock() {
            Ok(()) => {}
            Err(std::fs::TryLockError::WouldBlock) => bail!(
                "another cuzk daemon uses the state directory {} (its lock is held); give this one another \
                 --state-dir",
                state_dir.display()
            ),
            Err(std::fs::TryLockError::Error(e)) => {
                return Err(e).with_context(|| format!("locking {}", lock_path.display()))
            }
        }
        Ok(Journal {
            jobs,
            corrupt,
            _lock: lock,
        })
    }

    fn path(&self, id: &str, ext: &str) -> PathBuf {
        self.jobs.join(format!("{id}.{ext}"))
    }

    fn write(&self, path: &Path, bytes: &[u8]) -> Result<()> {
        use std::io::Write;
        srs_loader::write_atomic(path, |w| w.write_all(bytes))?;
        sync_dir(&self.jobs).with_context(|| format!("syncing {}", self.jobs.display()))
    }

    /// Writes an accepted job's record (durable when this returns).
    pub fn write_job(&self, record: &JobRecord) -> Result<()> {
        self.write(&self.path(&record.job_id, "job"), &encode(record))
    }

    /// Reads a job's record back (to run it).
    pub fn read_job(&self, id: &str) -> Result<JobRecord> {
        let path = self.path(id, "job");
        let bytes = std::fs::read(&path).with_context(|| format!("reading {}", path.display()))?;
        decode(&bytes).map_err(|why| anyhow::anyhow!("{}: {why}", path.display()))
    }

    /// Writes a finished job's result (durable when this returns), then drops its job record.
    pub fn write_result(&self, record: &ResultRecord) -> Result<()> {
        self.write(&self.path(&record.job_id, "result"), &encode(record))?;
        match std::fs::remove_file(self.path(&record.job_id, "job")) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(e).context("removing a finished job's record"),
        }
        Ok(())
    }

    /// Records the first fetch of a result (its file's time is the fetch's).
    pub fn mark_fetched(&self, id: &str) -> Result<()> {
        let path = self.path(id, "fetched");
        File::create(&path).with_context(|| format!("creating {}", path.display()))?;
        Ok(())
    }

    /// Deletes everything of an expired job.
    pub fn remove(&self, id: &str) {
        for ext in ["result", "fetched", "job"] {
            let _ = std::fs::remove_file(self.path(id, ext));
        }
    }

    /// Reads the whole journal: unfinished jobs, results, and corrupt records (moved aside). Stray temporary
    /// files of interrupted writes are deleted.
    pub fn recover(&self) -> Result<Recovered> {
        let mut out = Recovered::default();
        let mut results = std::collections::HashSet::new();
        let mut jobs = Vec::new();
        let entries = std::fs::read_dir(&self.jobs)
            .with_context(|| format!("reading {}", self.jobs.display()))?;
        let mut paths: Vec<PathBuf> = entries.flatten().map(|e| e.path()).collect();
        paths.sort();
        for path in paths {
            let name = path
                .file_name()
                .unwrap_or_default()
                .to_string_lossy()
                .into_owned();
            if name.starts_with('.') && name.contains(".tmp.") {
                let _ = std::fs::remove_file(&path);
                continue;
            }
            match path.extension().and_then(|e| e.to_str()) {
                Some("result") => match std::fs::read(&path)
                    .map_err(|e| e.to_string())
                    .and_then(|b| decode::<ResultRecord>(&b))
                {
                    Ok(r) => {
                        let fetched = std::fs::metadata(self.path(&r.job_id, "fetched"))
                            .and_then(|m| m.modified())
                            .ok()
                            .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
                            .map_or(0, |d| d.as_millis() as u64);
                        results.insert(r.job_id.clone());
                        out.done.push((r, fetched));
                    }
                    Err(why) => out.corrupt.push((self.quarantine(&path), why)),
                },
                Some("job") => jobs.push(path),
                _ => {}
            }
        }
        for path in jobs {
            match std::fs::read(&path)
                .map_err(|e| e.to_string())
                .and_then(|b| decode::<JobRecord>(&b))
            {
                // A crash between writing a result and removing the job record: the result stands.
                Ok(r) if results.contains(&r.job_id) => {
                    let _ = std::fs::remove_file(&path);
                }
                Ok(mut r) => {
                    if let Some(req) = r.request.as_mut() {
                        req.vanilla_proof = Vec::new();
                        req.vanilla_proofs = Vec::new();
                    }
                    out.pending.push(r);
                }
                Err(why) => out.corrupt.push((self.quarantine(&path), why)),
            }
        }
        out.pending.sort_by_key(|r| r.seq);
        Ok(out)
    }

    fn quarantine(&self, path: &Path) -> PathBuf {
        let to = self.corrupt.join(path.file_name().unwrap_or_default());
        match std::fs::rename(path, &to) {
            Ok(()) => to,
            Err(_) => path.to_owned(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rpc::v1::{AwaitProofResponse, SubmitProofRequest};

    fn job(id: &str, seq: u64) -> JobRecord {
        JobRecord {
            job_id: id.into(),
            seq,
            submitted_unix_ms: 1,
            request: Some(SubmitProofRequest {
                request_id: format!("r{seq}"),
                vanilla_proof: vec![7; 1000],
                ..Default::default()
            }),
            circuit_id: "sha256-b1".into(),
        }
    }

    #[test]
    fn jobs_and_results_survive_and_corruption_is_quarantined() {
        let dir = tempfile::tempdir().unwrap();
        {
            let j = Journal::open(dir.path()).unwrap();
            // A second daemon on the same directory is refused while the first holds it.
            let second = Journal::open(dir.path()).unwrap_err().to_string();
            assert!(second.contains("another cuzk daemon"), "{second}");
            j.write_job(&job("b", 2)).unwrap();
            j.write_job(&job("a", 1)).unwrap();
            j.write_job(&job("c", 3)).unwrap();
            assert_eq!(
                j.read_job("a")
                    .unwrap()
                    .request
                    .unwrap()
                    .vanilla_proof
                    .len(),
                1000
            );
            j.write_result(&ResultRecord {
                job_id: "c".into(),
                request_id: "r3".into(),
                finished_unix_ms: 5,
                proof_kind: 100,
                result: Some(AwaitProofResponse {
                    proof: vec![1; 192],
                    ..Default::default()
                }),
            })
            .unwrap();
            j.mark_fetched("c").unwrap();
            // A damaged record: one flipped byte.
            let path = dir.path().join("jobs/b.job");
            let mut bytes = std::fs::read(&path).unwrap();
            bytes[20] ^= 1;
            std::fs::write(&path, bytes).unwrap();
            // A stray temporary file of an interrupted write.
            std::fs::write(dir.path().join("jobs/.x.job.tmp.1"), b"half").unwrap();
        }
        let j = Journal::open(dir.path()).unwrap();
        let r = j.recover().unwrap();
        let pending: Vec<&str> = r.pending.iter().map(|p| p.job_id.as_str()).collect();
        assert_eq!(pending, ["a"]);
        assert!(r.pending[0]
            .request
            .as_ref()
            .unwrap()
            .vanilla_proof
            .is_empty());
        assert_eq!(r.done.len(), 1);
        assert_eq!(r.done[0].0.result.as_ref().unwrap().proof.len(), 192);
        assert!(r.done[0].1 > 0, "the fetch time is recovered");
        assert_eq!(r.corrupt.len(), 1);
        assert!(r.corrupt[0].1.contains("checksum"), "{}", r.corrupt[0].1);
        assert!(dir.path().join("corrupt/b.job").exists());
        assert!(!dir.path().join("jobs/.x.job.tmp.1").exists());
        // The job record of a finished job is gone; removing an expired one deletes its files.
        assert!(!dir.path().join("jobs/c.job").exists());
        j.remove("c");
        assert!(!dir.path().join("jobs/c.result").exists());
        // Truncation is caught too.
        assert!(decode::<JobRecord>(&encode(&job("t", 1))[..30]).is_err());
    }
}
