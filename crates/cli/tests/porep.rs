//! `cuzk porep` end to end on a 2 KiB sector: seal, prove, verify, and exit codes for a tampered proof and bad C1
//! files. Parameters are shared with the porep crate's test under the target directory (generated once).
#![cfg(feature = "porep")]

mod common;

use std::path::Path;
use std::process::Output;

use common::{cuzk_command, s, text};

fn cuzk(args: &[&str], params: &Path, parents: &Path) -> Output {
    cuzk_command()
        .args(args)
        .env("FIL_PROOFS_PARAMETER_CACHE", params)
        .env("FIL_PROOFS_PARENT_CACHE", parents)
        .env("CUZK_PARAM_CACHE", params)
        .env_remove("CUZK_LOG")
        .output()
        .unwrap()
}

#[test]
fn porep_seal_prove_verify_and_exit_codes() {
    let params = Path::new(env!("CARGO_TARGET_TMPDIR")).join("filecoin-params");
    let dir = tempfile::tempdir().unwrap();
    let parents = dir.path().join("parents");
    let c1 = dir.path().join("c1.json");
    let proof = dir.path().join("c2.proof");
    let run = |args: &[&str]| cuzk(args, &params, &parents);

    let out = run(&[
        "porep",
        "seal",
        "--c1",
        s(&c1),
        "--miner-id",
        "1234",
        "--sector-number",
        "5",
    ]);
    assert!(out.status.success(), "{}", text(&out));

    let sector = ["--c1", s(&c1), "--miner-id", "1234", "--sector-number", "5"];
    let mut prove = vec!["porep", "prove"];
    prove.extend_from_slice(&sector);
    prove.extend_from_slice(&["--proof", s(&proof), "--generate-params", "--json"]);
    let out = run(&prove);
    assert!(out.status.success(), "{}", text(&out));
    let summary: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(summary["partitions_per_sector"], 1);
    // A 2 KiB partition's two challenges synthesized at once; on a machine of two cores or fewer one worker fills
    // them (never more than half the cores).
    let synthesis = summary["synthesis"].as_str().unwrap();
    assert!(
        synthesis.contains("in pieces, 2 challenges a partition"),
        "{summary}"
    );
    assert!(summary["synthesis_workers"].as_u64().unwrap() >= 1);
    assert!(summary["params"]
        .as_str()
        .unwrap()
        .contains("TEST parameters"));
    assert_eq!(std::fs::metadata(&proof).unwrap().len(), 192);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr
            .lines()
            .any(|l| l.starts_with("CUZK_TIMING partition=0 ")),
        "{stderr}"
    );
    // Warnings reach stderr with CUZK_LOG unset: the TEST parameters' among them.
    assert!(
        stderr.contains("WARN") && stderr.contains("not the ceremony's"),
        "{stderr}"
    );

    // The witness alone, timed: in pieces (the default, two workers) and as one circuit, no parameters read.
    for (pieces, workers) in [("1", "2"), ("0", "1")] {
        let mut bench = vec![
            "bench",
            "porep",
            "--synthesis-only",
            "--proofs",
            "3",
            "--synthesis-workers",
            workers,
            "--json",
        ];
        bench.extend_from_slice(&sector);
        let out = cuzk_command()
            .args(&bench)
            .env("FIL_PROOFS_PARENT_CACHE", &parents)
            .env("CUZK_PARAM_CACHE", &params)
            .env("CUZK_SYNTH_PIECES", pieces)
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", text(&out));
        let summary: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(summary["witnesses_timed"], 2, "{summary}");
        assert_eq!(
            summary["synthesis_workers"],
            workers.parse::<u64>().unwrap()
        );
        for key in ["witness_median_ms", "witness_throughput_ms"] {
            assert!(summary[key].as_f64().unwrap() > 0.0, "{key}: {summary}");
        }
        let how = summary["witness"].as_str().unwrap();
        assert_eq!(how.contains("in pieces"), pieces == "1", "{summary}");
    }

    let mut verify = vec!["porep", "verify"];
    verify.extend_from_slice(&sector);
    verify.extend_from_slice(&["--proof", s(&proof)]);
    let out = run(&verify);
    assert!(out.status.success(), "{}", text(&out));

    // A changed byte: a clean "invalid" (exit 1), or an error if the point no longer decodes (exit 2).
    let mut bytes = std::fs::read(&proof).unwrap();
    bytes[150] ^= 1;
    std::fs::write(&proof, &bytes).unwrap();
    let out = run(&verify);
    assert!(matches!(out.status.code(), Some(1 | 2)), "{}", text(&out));

    // Another sector number: the replica id check names it before any proving.
    let mut wrong = prove.clone();
    wrong[7] = "6";
    let out = run(&wrong);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(text(&out).contains("sector number 6"), "{}", text(&out));

    // A truncated C1 file: named with its line and column.
    let json = std::fs::read(&c1).unwrap();
    std::fs::write(&c1, &json[..json.len() - 10]).unwrap();
    let out = run(&prove);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(
        text(&out).contains("not a C1 output") && text(&out).contains("line 1"),
        "{}",
        text(&out)
    );
}
