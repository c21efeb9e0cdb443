//! Human and JSON summaries, and progress spinners on stderr.

use std::time::Duration;

use indicatif::{ProgressBar, ProgressStyle};
use serde_json::{Map, Value};

/// Median, minimum and maximum of measurements (all zero when there are none).
pub fn median(mut v: Vec<f64>) -> (f64, f64, f64) {
    if v.is_empty() {
        return (0.0, 0.0, 0.0);
    }
    v.sort_by(|a, b| a.total_cmp(b));
    (v[v.len() / 2], v[0], v[v.len() - 1])
}

/// A verdict row and the exit code that goes with it: 0 valid, 1 invalid.
pub fn verdict(report: &mut Report, valid: bool) -> std::process::ExitCode {
    report.text("valid", if valid { "yes" } else { "no" }.into());
    if valid {
        std::process::ExitCode::SUCCESS
    } else {
        std::process::ExitCode::from(1)
    }
}

/// An ordered list of results, printed as a table or as JSON.
pub struct Report {
    command: &'static str,
    rows: Vec<(String, Value, String)>,
    /// Text rows are printed as they come (long benchmarks), not as one table at the end.
    streaming: bool,
}

/// Label width of streamed rows.
const STREAM_WIDTH: usize = 46;

fn label(key: &str) -> &str {
    key.strip_suffix(" ms")
        .or_else(|| key.strip_suffix(" MiB"))
        .unwrap_or(key)
}

impl Report {
    pub fn new(command: &'static str) -> Self {
        Self {
            command,
            rows: Vec::new(),
            streaming: false,
        }
    }

    /// A report whose text rows appear as soon as they are measured (unless `json`, which prints once at the end).
    pub fn streaming(command: &'static str, json: bool) -> Self {
        Self {
            command,
            rows: Vec::new(),
            streaming: !json,
        }
    }

    fn push(&mut self, key: String, value: Value, shown: String) {
        if self.streaming {
            use std::io::Write;
            println!("{:<STREAM_WIDTH$}  {shown}", label(&key));
            let _ = std::io::stdout().flush();
        }
        self.rows.push((key, value, shown));
    }

    pub fn text(&mut self, key: &str, value: String) {
        self.push(key.into(), Value::String(value.clone()), value);
    }

    /// Where a proof's stages ran: the H and MSM backends, and with GPU MSMs where the parameters were.
    pub fn backends(&mut self, t: &groth16_pipeline::ProofTimings) {
        self.text("H backend", t.h_backend.into());
        self.text("MSM backend", t.msm_backend.into());
        if !t.gpu_params.is_empty() {
            self.text("GPU parameters", t.gpu_params.into());
        }
    }

    pub fn count(&mut self, key: &str, value: usize) {
        self.push(key.into(), Value::from(value), value.to_string());
    }

    pub fn mib(&mut self, key: &str, mib: f64) {
        self.push(
            format!("{key} MiB"),
            Value::from((mib * 10.0).round() / 10.0),
            format!("{mib:>10.1} MiB"),
        );
    }

    pub fn time(&mut self, key: &str, d: Duration) {
        let ms = d.as_secs_f64() * 1e3;
        self.push(
            format!("{key} ms"),
            Value::from((ms * 1e3).round() / 1e3),
            format!("{ms:>10.1} ms"),
        );
    }

    /// Each row as an info log line (for the daemon, which has no terminal to print to).
    #[cfg(feature = "porep")]
    pub fn log(&self) {
        for (k, _, shown) in &self.rows {
            tracing::info!(command = self.command, "{}: {}", label(k), shown.trim());
        }
    }

    pub fn print(&self, json: bool) {
        if json {
            let mut map = Map::new();
            map.insert("command".into(), Value::String(self.command.into()));
            for (k, v, _) in &self.rows {
                map.insert(json_key(k), v.clone());
            }
            println!("{}", Value::Object(map));
        } else if !self.streaming {
            let width = self.rows.iter().map(|r| r.0.len()).max().unwrap_or(0);
            for (k, _, shown) in &self.rows {
                let k = k
                    .strip_suffix(" ms")
                    .or_else(|| k.strip_suffix(" MiB"))
                    .unwrap_or(k);
                println!("{k:<width$}  {shown}");
            }
        }
    }
}

/// A table label as a JSON key: lower case, runs of other characters as one underscore ("setup (first use) ms" -> "setup_first_use_ms").
fn json_key(label: &str) -> String {
    let mut out = String::new();
    for ch in label.chars() {
        if ch.is_ascii_alphanumeric() {
            out.push(ch.to_ascii_lowercase());
        } else if !out.ends_with('_') {
            out.push('_');
        }
    }
    out.trim_matches('_').to_string()
}

/// Spinners on stderr, hidden when stderr is not a terminal or output is JSON.
pub struct Progress {
    hidden: bool,
}

pub struct Spinner(ProgressBar);

impl Spinner {
    pub fn finish(self) {
        self.0.finish_and_clear();
    }
}

impl Progress {
    pub fn new(json: bool) -> Self {
        Self { hidden: json }
    }

    pub fn spinner(&self, message: String) -> Spinner {
        let bar = if self.hidden {
            ProgressBar::hidden()
        } else {
            ProgressBar::new_spinner()
        };
        bar.set_style(
            ProgressStyle::with_template("{spinner} {msg} ({elapsed})").expect("valid template"),
        );
        bar.set_message(message);
        bar.enable_steady_tick(Duration::from_millis(120));
        Spinner(bar)
    }
}

/// The kernel's estimate of memory available to new work (`MemAvailable` in `/proc/meminfo`), bytes.
pub fn mem_available_bytes() -> Option<u64> {
    let info = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = info.lines().find(|l| l.starts_with("MemAvailable:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}

/// Peak resident set size of this process in MiB (Linux `VmHWM`), if readable.
pub fn peak_rss_mib() -> Option<f64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kib: f64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib / 1024.0)
}
