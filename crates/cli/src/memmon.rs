//! Memory monitor: samples a process's resident set size and writes `timestamp_ms,rss_kb,rss_gib` rows, one line
//! at a time (flushed), so a log survives the process it watches. `cuzk memmon --pid P` watches another process;
//! `cuzk prove --memlog FILE` watches itself while it proves.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use anyhow::{bail, Context, Result};
use clap::Args;

/// The CSV header every memory log starts with.
pub const HEADER: &str = "timestamp_ms,rss_kb,rss_gib";

#[derive(Args, Debug)]
pub struct MemmonArgs {
    /// Process to watch.
    #[arg(long)]
    pid: u32,
    /// Milliseconds between samples.
    #[arg(long, default_value_t = 1000, value_parser = clap::value_parser!(u64).range(10..=3_600_000))]
    interval_ms: u64,
    /// CSV file to write (`timestamp_ms,rss_kb,rss_gib`; timestamps are Unix milliseconds).
    #[arg(long)]
    csv: PathBuf,
    /// Stop after this many seconds even if the process still runs (default: when it exits).
    #[arg(long)]
    duration_s: Option<u64>,
}

/// The resident set size of `pid` in KiB (`VmRSS` of /proc/PID/status), or None once the process is gone.
pub fn rss_kb(pid: u32) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let line = status.lines().find(|l| l.starts_with("VmRSS:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

fn now_ms() -> u128 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_millis())
        .unwrap_or(0)
}

fn row(kb: u64) -> String {
    format!("{},{kb},{:.3}", now_ms(), kb as f64 / (1u64 << 20) as f64)
}

fn create(path: &Path) -> Result<std::fs::File> {
    let mut f = std::fs::File::create(path)
        .with_context(|| format!("creating memory log {}", path.display()))?;
    writeln!(f, "{HEADER}").with_context(|| format!("writing {}", path.display()))?;
    Ok(f)
}

/// `cuzk memmon`: samples until the process exits (or the duration ends); prints the peak.
pub fn run(a: MemmonArgs) -> Result<()> {
    let Some(first) = rss_kb(a.pid) else {
        bail!(
            "no process {} to watch (or its /proc/{}/status is unreadable)",
            a.pid,
            a.pid
        );
    };
    let mut f = create(&a.csv)?;
    let deadline = a
        .duration_s
        .map(|s| std::time::Instant::now() + Duration::from_secs(s));
    let (mut peak, mut samples) = (0u64, 0usize);
    let mut next = Some(first);
    while let Some(kb) = next {
        writeln!(f, "{}", row(kb)).with_context(|| format!("writing {}", a.csv.display()))?;
        f.flush()?;
        peak = peak.max(kb);
        samples += 1;
        if deadline.is_some_and(|d| std::time::Instant::now() >= d) {
            break;
        }
        std::thread::sleep(Duration::from_millis(a.interval_ms));
        next = rss_kb(a.pid);
    }
    println!(
        "memmon: {samples} samples of process {} in {}; peak RSS {:.3} GiB",
        a.pid,
        a.csv.display(),
        peak as f64 / (1u64 << 20) as f64
    );
    Ok(())
}

/// A monitor of this process on a background thread, stopped (with a last sample) on drop.
pub struct SelfLog {
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl SelfLog {
    /// Starts sampling this process every `interval` into `path`.
    pub fn start(path: &Path, interval: Duration) -> Result<Self> {
        let mut f = create(path)?;
        let stop = Arc::new(AtomicBool::new(false));
        let flag = Arc::clone(&stop);
        let pid = std::process::id();
        let thread = std::thread::Builder::new()
            .name("memlog".into())
            .spawn(move || loop {
                let done = flag.load(Ordering::Relaxed);
                if let Some(kb) = rss_kb(pid) {
                    // A full disk ends the log, not the proof.
                    if writeln!(f, "{}", row(kb)).and_then(|()| f.flush()).is_err() {
                        return;
                    }
                }
                if done {
                    return;
                }
                std::thread::park_timeout(interval);
            })
            .context("starting the memory log thread")?;
        Ok(SelfLog {
            stop,
            thread: Some(thread),
        })
    }
}

impl Drop for SelfLog {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            t.thread().unpark();
            let _ = t.join();
        }
    }
}
