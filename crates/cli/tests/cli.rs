//! The `cuzk` binary end to end: prove, verify, tampering, and clear errors.

mod common;

use std::path::Path;
use std::process::{Command, Output};

use common::{cuzk_command, s, text};

fn cuzk(args: &[&str]) -> Output {
    cuzk_command()
        .args(args)
        .env_remove("CUZK_PARAM_CACHE")
        .output()
        .unwrap()
}

#[test]
fn prove_then_verify_and_reject_tampering() {
    let dir = tempfile::tempdir().unwrap();
    let cache = dir.path().join("cache");
    let proof = dir.path().join("proof.bin");
    let inputs = dir.path().join("inputs.json");
    let args = [
        "prove",
        "--blocks",
        "1",
        "--cache-dir",
        s(&cache),
        "--proof",
        s(&proof),
        "--inputs",
        s(&inputs),
        "--json",
    ];
    let out = cuzk(&args);
    assert!(out.status.success(), "{}", text(&out));
    let summary: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(summary["verified"], "yes");
    // One CUZK_TIMING line on stderr with every phase as key=value.
    let stderr = String::from_utf8_lossy(&out.stderr);
    let timing: Vec<&str> = stderr
        .lines()
        .filter(|l| l.starts_with("CUZK_TIMING "))
        .collect();
    assert_eq!(timing.len(), 1, "{stderr}");
    for key in [
        "partition",
        "synthesis_ms",
        "h_backend",
        "msm_backend",
        "h_ms",
        "msm_h_ms",
        "msm_l_ms",
        "msm_a_ms",
        "msm_b_g1_ms",
        "msm_b_g2_ms",
        "assembly_ms",
        "prove_ms",
        "verify_ms",
    ] {
        let value = timing[0]
            .split(' ')
            .find_map(|kv| kv.strip_prefix(&format!("{key}=")))
            .unwrap_or_else(|| panic!("{key} missing from {}", timing[0]));
        assert!(!value.is_empty(), "{key} empty in {}", timing[0]);
    }
    assert!(summary["constraints"].as_u64().unwrap() > 20_000);
    assert!(
        summary["shape"]
            .as_str()
            .unwrap()
            .contains("compiled: no shape file yet"),
        "{summary}"
    );
    assert!(summary["synthesis_compiled_ms"].is_number(), "{summary}");
    let params = cache.join("sha256-1blk-v1.params");
    assert_eq!(summary["params"], s(&params));
    assert_eq!(std::fs::metadata(&proof).unwrap().len(), 192);

    // A second proof reuses the cached parameters.
    let out = cuzk(&args);
    assert!(out.status.success(), "{}", text(&out));
    let again: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(again.get("setup_first_use_ms").is_none(), "{again}");
    assert!(
        again["shape"].as_str().unwrap().ends_with("(loaded)"),
        "{again}"
    );
    // The direct path proves too, here with a memory log of itself.
    let memlog = dir.path().join("mem.csv");
    let mut direct = args.to_vec();
    direct.extend([
        "--synthesis",
        "direct",
        "--memlog",
        s(&memlog),
        "--memlog-interval-ms",
        "20",
    ]);
    let out = cuzk(&direct);
    assert!(out.status.success(), "{}", text(&out));
    let rows = memory_log_rows(&memlog);
    assert!(
        rows.iter().any(|&(_, kb)| kb > 10_000),
        "a prover holds more than 10 MB at some point: {rows:?}"
    );

    let verify = [
        "verify",
        "--params",
        s(&params),
        "--proof",
        s(&proof),
        "--inputs",
        s(&inputs),
    ];
    let out = cuzk(&verify);
    assert!(out.status.success(), "{}", text(&out));
    assert!(text(&out).contains("valid") && text(&out).contains("yes"));

    // A changed byte in C: either undecodable (exit 2) or invalid (exit 1), never accepted.
    let good = std::fs::read(&proof).unwrap();
    let mut bytes = good.clone();
    bytes[150] ^= 1;
    std::fs::write(&proof, &bytes).unwrap();
    let out = cuzk(&verify);
    assert!(!out.status.success(), "{}", text(&out));
    std::fs::write(&proof, &good).unwrap();

    // Wrong input count is named.
    std::fs::write(&inputs, "[]").unwrap();
    let out = cuzk(&verify);
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out).contains("0 public inputs"), "{}", text(&out));
}

#[test]
fn missing_params_file_is_a_clear_error() {
    let out = cuzk(&[
        "prove",
        "--blocks",
        "1",
        "--params",
        "/nonexistent/p.params",
    ]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out).contains("does not exist; create it with `cuzk setup"),
        "{}",
        text(&out)
    );
    let out = cuzk(&["prove", "--blocks", "0"]);
    assert!(!out.status.success());
    assert!(text(&out).contains("out of range"), "{}", text(&out));
}

#[test]
fn damaged_cached_params_name_the_offset_and_the_fix() {
    let dir = tempfile::tempdir().unwrap();
    let cache = dir.path().join("cache");
    let (proof, inputs) = (dir.path().join("p.bin"), dir.path().join("i.json"));
    let args = [
        "prove",
        "--blocks",
        "1",
        "--cache-dir",
        s(&cache),
        "--proof",
        s(&proof),
        "--inputs",
        s(&inputs),
    ];
    assert!(cuzk(&args).status.success());
    let params = cache.join("sha256-1blk-v1.params");
    let mut bytes = std::fs::read(&params).unwrap();
    bytes.truncate(bytes.len() - 10);
    std::fs::write(&params, &bytes).unwrap();
    let out = cuzk(&args);
    assert_eq!(out.status.code(), Some(2));
    let msg = text(&out);
    assert!(
        msg.contains("truncated parameters: b_g2") && msg.contains("setup --force --blocks 1"),
        "{msg}"
    );
    assert!(!proof.exists() || std::fs::metadata(&proof).unwrap().len() == 192);
}

#[test]
fn bench_synth_reports_every_variant() {
    let out = cuzk(&[
        "bench",
        "synth",
        "--constraints",
        "2000",
        "--iterations",
        "1",
        "--partitions",
        "2",
        "--json",
    ]);
    assert!(out.status.success(), "{}", text(&out));
    let summary: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(summary["circuit"], "porep-like");
    assert_eq!(summary["constraints_per_round"], 2 * (2000 + 328));
    for v in ["vec", "smallvec1", "smallvec2", "smallvec4"] {
        assert!(
            summary[format!("variant_{v}")]
                .as_str()
                .unwrap()
                .contains("constraints/s"),
            "{summary}"
        );
    }
    // Every path, reusing the previous round's vectors, counts the same constraints.
    for path in ["direct", "compiled", "compiled-witness"] {
        let out = cuzk(&[
            "bench",
            "synth",
            "--constraints",
            "2000",
            "--iterations",
            "2",
            "--variant",
            "vec",
            "--path",
            path,
            "--reuse",
            "on",
            "--json",
        ]);
        assert!(out.status.success(), "{path}: {}", text(&out));
        let summary: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(summary["constraints_per_round"], 2000 + 328, "{path}");
        assert_eq!(summary["reuse"], "on", "{path}");
    }
    let out = cuzk(&["bench", "synth", "--variant", "smallvec3"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out).contains("unknown LC backend"), "{}", text(&out));
}

/// Checks a memory log's format (`timestamp_ms,rss_kb,rss_gib`, at least one row, timestamps in order, the GiB column
/// agreeing with the KiB column) and returns (timestamp, rss_kb) per row.
fn memory_log_rows(path: &Path) -> Vec<(u128, u64)> {
    let text = std::fs::read_to_string(path).unwrap();
    let mut lines = text.lines();
    assert_eq!(lines.next(), Some("timestamp_ms,rss_kb,rss_gib"));
    let rows: Vec<(u128, u64)> = lines
        .map(|l| {
            let f: Vec<&str> = l.split(',').collect();
            assert_eq!(f.len(), 3, "row {l:?}");
            let kb: u64 = f[1].parse().unwrap();
            let gib: f64 = f[2].parse().unwrap();
            assert!(
                (gib - kb as f64 / (1u64 << 20) as f64).abs() < 0.001,
                "row {l:?}"
            );
            (f[0].parse().unwrap(), kb)
        })
        .collect();
    assert!(!rows.is_empty(), "no rows in {text:?}");
    assert!(
        rows.windows(2).all(|w| w[0].0 <= w[1].0),
        "timestamps go back: {rows:?}"
    );
    rows
}

#[test]
fn memmon_logs_another_process_until_it_exits() {
    let dir = tempfile::tempdir().unwrap();
    let csv = dir.path().join("mem.csv");
    let mut child = Command::new("sleep").arg("1").spawn().unwrap();
    let pid = child.id().to_string();
    let out = cuzk(&[
        "memmon",
        "--pid",
        &pid,
        "--interval-ms",
        "50",
        "--csv",
        s(&csv),
    ]);
    let _ = child.wait();
    assert!(out.status.success(), "{}", text(&out));
    assert!(text(&out).contains("peak RSS"), "{}", text(&out));
    let rows = memory_log_rows(&csv);
    // One second at 50 ms: several samples, all of a live process.
    assert!(rows.len() >= 5, "{rows:?}");
    assert!(rows.iter().all(|&(_, kb)| kb > 0), "{rows:?}");

    // A process that does not exist is a clear error, and no log is left behind.
    let gone = dir.path().join("gone.csv");
    let out = cuzk(&["memmon", "--pid", "999999999", "--csv", s(&gone)]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out).contains("no process 999999999"),
        "{}",
        text(&out)
    );
    assert!(!gone.exists());
}

#[test]
fn bench_prove_runs_the_engine_and_checks_every_proof() {
    let dir = tempfile::tempdir().unwrap();
    let cache = dir.path().join("cache");
    let timings = dir.path().join("timings.jsonl");
    let out = cuzk(&[
        "bench",
        "prove",
        "--cpu",
        "--constraints",
        "1500",
        "--partitions",
        "3",
        "--max-in-flight",
        "2",
        "--cache-dir",
        s(&cache),
        "--timing-json",
        s(&timings),
        "--json",
    ]);
    assert!(out.status.success(), "{}", text(&out));
    let summary: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(summary["partitions"], 3, "{summary}");
    assert_eq!(summary["partitions_failed"], 0, "{summary}");
    assert_eq!(summary["verify_each_proof"], "on", "{summary}");
    assert_eq!(summary["msm_backend"], "cpu", "{summary}");
    assert!(summary["peak_rss_mib"].as_f64().unwrap() > 0.0, "{summary}");
    // One CUZK_TIMING line per partition on stderr, and the same as JSON lines.
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(
        stderr
            .lines()
            .filter(|l| l.starts_with("CUZK_TIMING partition="))
            .count(),
        3,
        "{stderr}"
    );
    let mut seen: Vec<u64> = std::fs::read_to_string(&timings)
        .unwrap()
        .lines()
        .map(|l| {
            let v: serde_json::Value = serde_json::from_str(l).unwrap();
            assert_eq!(v["reproved_on_cpu"], false, "{v}");
            assert!(v["verify_ms"].as_f64().unwrap() > 0.0, "{v}");
            assert!(v["synthesis_ms"].as_f64().unwrap() > 0.0, "{v}");
            v["partition"].as_u64().unwrap()
        })
        .collect();
    seen.sort_unstable();
    assert_eq!(seen, [0, 1, 2]);

    // Fake parameters: proving works, the check is off and says why.
    let out = cuzk(&[
        "bench",
        "prove",
        "--cpu",
        "--params",
        "fake",
        "--circuit",
        "sha256",
        "--blocks",
        "1",
        "--partitions",
        "2",
        "--json",
    ]);
    assert!(out.status.success(), "{}", text(&out));
    let summary: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(summary["verify_each_proof"], "off (fake parameters)");
    assert!(summary["params"].as_str().unwrap().starts_with("FAKE"));

    // Partitions of three challenges each, their witness in pieces: every proof still passes the check.
    let out = cuzk(&[
        "bench",
        "prove",
        "--cpu",
        "--constraints",
        "1500",
        "--challenges",
        "3",
        "--partitions",
        "2",
        "--cache-dir",
        s(&cache),
        "--json",
    ]);
    assert!(out.status.success(), "{}", text(&out));
    let summary: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(summary["partitions_failed"], 0, "{summary}");
    assert_eq!(summary["verify_each_proof"], "on", "{summary}");
    assert!(
        summary["witness"]
            .as_str()
            .unwrap()
            .contains("in pieces, 3"),
        "{summary}"
    );
    assert!(
        summary["circuit"].as_str().unwrap().contains("-3ch"),
        "{summary}"
    );

    let out = cuzk(&["bench", "prove", "--partitions", "0"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out).contains("at least 1"), "{}", text(&out));
    let out = cuzk(&["bench", "prove", "--circuit", "sha256", "--challenges", "2"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out).contains("porep-like"), "{}", text(&out));
}

/// A bench with no timed runs would report a median of nothing: clap refuses it before any device work.
#[test]
fn bench_iterations_below_one_are_refused() {
    for cmd in ["ntt", "msm"] {
        let out = cuzk(&["bench", cmd, "--iterations", "0"]);
        assert_eq!(out.status.code(), Some(2), "bench {cmd}: {}", text(&out));
        let msg = text(&out);
        assert!(
            msg.contains("--iterations") && msg.contains("0 is not in 1.."),
            "bench {cmd}: {msg}"
        );
    }
}
