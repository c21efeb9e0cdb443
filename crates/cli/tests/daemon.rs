//! `cuzk daemon` end to end on loopback with SHA-256 test circuits: concurrent clients whose proofs verify, a
//! `kill -9` under load that loses no accepted job, cancellation, bad inputs with their precise errors, the token,
//! and a client generated independently from the .proto (Python grpcio) speaking the wire format.
#![cfg(feature = "porep")]

mod common;

use std::path::{Path, PathBuf};
use std::process::{Child, Output, Stdio};
use std::time::{Duration, Instant};

use common::{cuzk_command, s, text};
use serde_json::Value;

/// Parameters for test circuits, generated once per target directory and shared by the tests.
fn param_cache() -> PathBuf {
    Path::new(env!("CARGO_TARGET_TMPDIR")).join("daemon-params")
}

/// Generates the 1-block parameters once, before any daemon starts: daemons of concurrent tests generating the same
/// file at once would each prove with their own.
fn ensure_params() {
    static ONCE: std::sync::OnceLock<()> = std::sync::OnceLock::new();
    ONCE.get_or_init(|| {
        let out = cuzk_command()
            .args(["setup", "--blocks", "1"])
            .env("CUZK_PARAM_CACHE", param_cache())
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", text(&out));
    });
}

struct Daemon {
    child: Child,
    addr: String,
    log: PathBuf,
}

impl Daemon {
    /// Starts a daemon on a Unix socket in `dir` with its state in `dir/state`, and waits until it answers.
    fn start(dir: &Path, extra: &[&str]) -> Daemon {
        ensure_params();
        Self::start_with_cache(dir, extra, &param_cache())
    }

    /// [`Daemon::start`] with another parameter cache.
    fn start_with_cache(dir: &Path, extra: &[&str], cache: &Path) -> Daemon {
        let sock = dir.join("d.sock");
        let addr = format!("unix:{}", sock.display());
        let log = unique(&dir.join("daemon.log"));
        let child = cuzk_command()
            .args([
                "daemon",
                "--listen",
                &addr,
                "--state-dir",
                s(&dir.join("state")),
            ])
            .args(["--synthesis", "direct", "--synthesis-workers", "1"])
            .args(extra)
            .env("CUZK_PARAM_CACHE", cache)
            .env("CUZK_LOG", "info")
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(&log).unwrap())
            .spawn()
            .unwrap();
        let d = Daemon { child, addr, log };
        d.wait_ready(extra);
        d
    }

    fn wait_ready(&self, extra: &[&str]) {
        let token: Vec<&str> = extra
            .windows(2)
            .find(|w| w[0] == "--token-file")
            .map(|w| vec!["--token-file", w[1]])
            .unwrap_or_default();
        let deadline = Instant::now() + Duration::from_secs(120);
        loop {
            let mut args = vec!["status"];
            args.extend_from_slice(&token);
            if self.client(&args).status.success() {
                return;
            }
            assert!(
                Instant::now() < deadline,
                "daemon never answered:\n{}",
                self.logs()
            );
            std::thread::sleep(Duration::from_millis(200));
        }
    }

    fn client(&self, args: &[&str]) -> Output {
        // Every call is bounded in time: a daemon that stops answering fails the test instead of hanging it.
        cuzk_command()
            .arg("client")
            .args(["--addr", &self.addr, "--deadline-s", "300"])
            .args(args)
            .output()
            .unwrap()
    }

    /// Runs a client call that must succeed and print one JSON object.
    fn call(&self, args: &[&str]) -> Value {
        let out = self.client(args);
        assert!(
            out.status.success(),
            "{args:?}: {}\n{}",
            text(&out),
            self.logs()
        );
        serde_json::from_slice(&out.stdout)
            .unwrap_or_else(|e| panic!("{args:?}: {e}: {}", text(&out)))
    }

    /// Runs a client call that reports a job's result: exit 0 (completed) or 1 (failed, cancelled, timed out).
    fn result(&self, args: &[&str]) -> Value {
        let out = self.client(args);
        assert!(
            matches!(out.status.code(), Some(0 | 1)),
            "{args:?}: {}\n{}",
            text(&out),
            self.logs()
        );
        serde_json::from_slice(&out.stdout)
            .unwrap_or_else(|e| panic!("{args:?}: {e}: {}", text(&out)))
    }

    fn logs(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }

    fn kill9(mut self) {
        self.child.kill().unwrap(); // SIGKILL
        self.child.wait().unwrap();
    }
}

impl Drop for Daemon {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn unique(p: &Path) -> PathBuf {
    let mut p = p.to_owned();
    let mut n = 0;
    while p.exists() {
        n += 1;
        p.set_extension(format!("{n}.log"));
    }
    p
}

/// Checks a test-circuit proof against its preimage with the cached parameters' verifying key.
fn verifies(blocks: usize, preimage: &[u8], proof: &[u8]) -> bool {
    let circuit = circuits::Sha256Circuit::new(blocks, preimage.to_vec()).unwrap();
    let params = param_cache().join(format!(
        "{}.params",
        circuits::Sha256Circuit::blank(blocks).shape_id()
    ));
    let vk = srs_loader::read_verifying_key(&params).unwrap();
    let pvk = groth16_pipeline::prepare_verifying_key(&vk);
    let proof = groth16_pipeline::Proof::from_bytes(proof).unwrap();
    groth16_pipeline::verify_proof(&pvk, &proof, &circuit.public_inputs().unwrap()).unwrap()
}

fn preimage(i: u8) -> Vec<u8> {
    (0..circuits::Sha256Circuit::preimage_len(1))
        .map(|j| (j as u8).wrapping_mul(31) ^ i)
        .collect()
}

#[test]
fn concurrent_clients_get_verified_proofs_and_kill_9_loses_no_job() {
    let dir = tempfile::tempdir().unwrap();
    let d = Daemon::start(dir.path(), &[]);
    let loaded = d.call(&["preload", "--circuit-id", "sha256-b1"]);
    assert!(loaded["already_loaded"].is_boolean(), "{loaded}");
    let status = d.call(&["status"]);
    assert_eq!(
        status["loaded_srs"][0]["circuit_id"], "sha256-b1",
        "{status}"
    );
    assert_eq!(status["loaded_srs"][0]["tier"], "HOT");

    // Concurrent clients, each with its own Prove call.
    let clients = 6u8;
    let results: Vec<(u8, Value)> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..clients)
            .map(|i| {
                let d = &d;
                scope.spawn(move || {
                    let hex = hex::encode(preimage(i));
                    let id = format!("client-{i}");
                    (
                        i,
                        d.call(&[
                            "prove",
                            "--test-blocks",
                            "1",
                            "--preimage-hex",
                            &hex,
                            "--request-id",
                            &id,
                        ]),
                    )
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    for (i, r) in &results {
        assert_eq!(r["status"], "COMPLETED", "{r}");
        let proof = hex::decode(r["proof_hex"].as_str().unwrap()).unwrap();
        assert!(
            verifies(1, &preimage(*i), &proof),
            "client {i}'s proof does not verify"
        );
    }
    // The same request id is the same job, not a new proof.
    let again = d.call(&[
        "submit",
        "--test-blocks",
        "1",
        "--preimage-hex",
        &hex::encode(preimage(0)),
        "--request-id",
        "client-0",
    ]);
    assert_eq!(again["job_id"], results[0].1["job_id"]);

    // Load, then kill -9 with accepted jobs queued or running.
    let mut accepted = Vec::new();
    for i in 10..16u8 {
        let r = d.call(&[
            "submit",
            "--test-blocks",
            "1",
            "--preimage-hex",
            &hex::encode(preimage(i)),
        ]);
        accepted.push((i, r["job_id"].as_str().unwrap().to_owned()));
    }
    d.kill9();

    let d = Daemon::start(dir.path(), &[]);
    assert!(
        d.logs().contains("unfinished job(s) queued again"),
        "{}",
        d.logs()
    );
    for (i, job) in &accepted {
        let r = d.call(&["await", "--job-id", job]);
        assert_eq!(r["status"], "COMPLETED", "job {job} after the restart: {r}");
        let proof = hex::decode(r["proof_hex"].as_str().unwrap()).unwrap();
        assert!(
            verifies(1, &preimage(*i), &proof),
            "job {job}'s proof does not verify"
        );
    }
    // Results finished before the crash are served from the journal.
    let first = results[0].1["job_id"].as_str().unwrap();
    let r = d.call(&["await", "--job-id", first, "--timeout-ms", "1000"]);
    assert_eq!(r["status"], "COMPLETED", "{r}");
    let metrics = d.client(&["metrics"]);
    let metrics = String::from_utf8_lossy(&metrics.stdout);
    let recovered: f64 = metrics
        .lines()
        .find_map(|l| l.strip_prefix("cuzk_jobs_recovered_total "))
        .unwrap_or_else(|| panic!("{metrics}"))
        .parse()
        .unwrap();
    assert!(
        recovered >= 1.0,
        "the restart should have re-queued the last jobs:\n{metrics}"
    );
}

#[test]
fn cancel_timeout_bad_inputs_and_the_token() {
    let dir = tempfile::tempdir().unwrap();
    let token = dir.path().join("token");
    std::fs::write(&token, "s3cret\n").unwrap();
    let extra = ["--token-file", s(&token), "--max-message-mib", "1"];
    // A cache of its own, so the first job's parameters are always generated first: a job that runs for seconds.
    let d = Daemon::start_with_cache(dir.path(), &extra, &dir.path().join("params"));
    let with = |args: &[&str]| -> Vec<String> {
        let mut v: Vec<String> = vec!["--token-file".into(), s(&token).into()];
        v.extend(args.iter().map(|a| a.to_string()));
        v
    };
    let call = |args: &[&str]| {
        let v = with(args);
        d.call(&v.iter().map(String::as_str).collect::<Vec<_>>())
    };
    let result = |args: &[&str]| {
        let v = with(args);
        d.result(&v.iter().map(String::as_str).collect::<Vec<_>>())
    };
    let fails = |args: &[&str], code: &str, message: &str| {
        let v = with(args);
        let out = d.client(&v.iter().map(String::as_str).collect::<Vec<_>>());
        let t = text(&out);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {t}");
        assert!(
            t.contains(code) && t.contains(message),
            "{args:?}: expected {code} {message:?}: {t}"
        );
    };

    // Without the token every call is refused.
    let out = d.client(&["status"]);
    assert!(text(&out).contains("Unauthenticated"), "{}", text(&out));

    // A job that runs long (its parameters are generated first), one queued behind it: cancel both.
    let long = call(&["submit", "--test-blocks", "3"]);
    let queued = call(&["submit", "--test-blocks", "3", "--priority", "low"]);
    let (long, queued) = (
        long["job_id"].as_str().unwrap(),
        queued["job_id"].as_str().unwrap(),
    );
    let r = result(&["await", "--job-id", long, "--timeout-ms", "200"]);
    assert_eq!(r["status"], "TIMEOUT", "{r}");
    assert_eq!(call(&["cancel", "--job-id", queued])["was_running"], false);
    let r = result(&["await", "--job-id", queued]);
    assert_eq!(r["status"], "CANCELLED", "{r}");
    assert_eq!(call(&["cancel", "--job-id", long])["was_running"], true);
    let r = result(&["await", "--job-id", long]);
    assert_eq!(r["status"], "CANCELLED", "{r}");
    fails(
        &["cancel", "--job-id", queued],
        "FailedPrecondition",
        "already finished (CANCELLED)",
    );

    // Bad inputs, each with its status; the daemon keeps serving.
    fails(
        &["await", "--job-id", "no-such-job"],
        "NotFound",
        "no job \"no-such-job\"",
    );
    fails(&["cancel", "--job-id", "no-such-job"], "NotFound", "no job");
    fails(
        &["preload", "--circuit-id", "wpost-32g"],
        "InvalidArgument",
        "unknown circuit id",
    );
    fails(
        &["evict", "--circuit-id", "porep-1t"],
        "InvalidArgument",
        "unknown circuit id",
    );
    let c1 = dir.path().join("c1.json");
    std::fs::write(
        &c1,
        br#"{"registered_proof": "StackedDrg2KiBV1_1", "vanilla_proofs": "#,
    )
    .unwrap();
    let porep = [
        "submit",
        "--c1",
        s(&c1),
        "--miner-id",
        "1000",
        "--sector-number",
        "1",
    ];
    fails(&porep, "InvalidArgument", "not a C1 output");
    std::fs::write(&c1, vec![b' '; 2 << 20]).unwrap();
    let out = d.client(&with(&porep).iter().map(String::as_str).collect::<Vec<_>>());
    let t = text(&out);
    assert!(
        t.contains("OutOfRange") || t.contains("ResourceExhausted"),
        "a 2 MiB message past a 1 MiB limit: {t}"
    );
    let r = call(&["status"]);
    assert_eq!(r["total_proofs_completed"], 0, "{r}");
    let evicted = call(&["evict", "--circuit-id", "sha256-b3"]);
    assert_eq!(evicted["was_loaded"], true, "{evicted}");

    // Beyond loopback only with a token.
    let out = cuzk_command()
        .args([
            "daemon",
            "--listen",
            "0.0.0.0:0",
            "--state-dir",
            s(&dir.path().join("other")),
        ])
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(text(&out).contains("--token-file"), "{}", text(&out));
}

/// The Python interpreter with grpcio and grpcio-tools, or why there is none.
fn python() -> Result<String, String> {
    let python = std::env::var("CUZK_PYTHON").unwrap_or_else(|_| "python3".into());
    match std::process::Command::new(&python)
        .args(["-c", "import grpc, grpc_tools.protoc"])
        .output()
    {
        Ok(o) if o.status.success() => Ok(python),
        Ok(o) => Err(format!(
            "{python} lacks grpcio/grpcio-tools: {}",
            text(&o).trim()
        )),
        Err(e) => Err(format!("{python}: {e}")),
    }
}

#[test]
fn a_python_client_generated_from_the_proto_speaks_the_wire_format() {
    let python = match python() {
        Ok(p) => p,
        Err(why) if std::env::var_os("CUZK_REQUIRE_PYGRPC").is_some_and(|v| v == "1") => {
            panic!("CUZK_REQUIRE_PYGRPC=1 but {why}")
        }
        Err(why) => {
            println!("SKIPPED: {why} (`cargo xtask py-grpc` installs them; .ci/run does)");
            return;
        }
    };
    let dir = tempfile::tempdir().unwrap();
    let d = Daemon::start(dir.path(), &[]);
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let results = dir.path().join("results.json");
    let out = std::process::Command::new(python)
        .arg(root.join("crates/cli/tests/daemon_client.py"))
        .args(["--proto-root", s(&root.join("crates/rpc/proto"))])
        .args(["--stubs", s(&dir.path().join("stubs"))])
        .args([
            "--addr",
            &d.addr,
            "--results",
            s(&results),
            "--clients",
            "4",
        ])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "python client: {}\n{}",
        text(&out),
        d.logs()
    );
    let results: Vec<Value> = serde_json::from_slice(&std::fs::read(&results).unwrap()).unwrap();
    assert_eq!(results.len(), 4);
    for r in &results {
        let preimage = hex::decode(r["preimage"].as_str().unwrap()).unwrap();
        let proof = hex::decode(r["proof"].as_str().unwrap()).unwrap();
        assert!(
            verifies(1, &preimage, &proof),
            "a proof fetched by Python does not verify: {r}"
        );
    }
}
