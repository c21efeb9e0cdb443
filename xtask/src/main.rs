//! `cargo xtask`: the project's own automation.
//!
//! Subcommands:
//! - `ci`: exactly what `.ci/run` runs.
//! - `py-grpc`: installs pinned grpcio and grpcio-tools into `target/py-grpc` for the daemon's wire-format test.
//! - `cuda-toolchain`: installs the pinned CUDA toolchain (from the Python package index) into `target/cuda-toolchain` and prints the `NVCC` to export.
//! - `tune msm`: on a machine with the GPU, measures every window per MSM size (`cuzk bench msm --tune`) and rewrites
//!   `crates/msm-cuda/tuning/h200.txt`, the window table msm-cuda embeds (commit it).
//! - `bench`: the curated benchmark set with a summary table, baselines (`--save`, `--compare`) and interleaved A/B
//!   runs of the optimisation switches (`--ab a1|a2|a4|b1|d4`); see `bench::USAGE`.
//! - `profile synth`: the synth-only benchmark under `perf stat`; `profile gpu`: the GPU binaries for the lent
//!   machine and the `ncu` command lines to run there.
//! - `plot`: SVG charts from `cargo xtask bench` JSON (time against size) and from memory logs.
//! - `bindgen`: regenerates each CUDA crate's `src/ffi.rs` from its C header (needs libclang); a test in each crate checks the committed file against the header's hash.

mod bench;
mod bindings;
mod plot;
mod profile;

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{bail, Context, Result};

/// The CUDA release the GPU machine's driver supports, pinned exactly (see shared DEVICE.md).
const CUDA_PACKAGES: &[&str] = &[
    "nvidia-cuda-nvcc==13.0.88",
    "nvidia-cuda-runtime==13.0.96",
    "nvidia-cuda-crt==13.0.88",
    "nvidia-cuda-cccl==13.0.85",
    "nvidia-nvvm==13.0.88",
];

pub(crate) fn run(program: &str, args: &[&str]) -> Result<()> {
    eprintln!("$ {program} {}", args.join(" "));
    let status = Command::new(program)
        .args(args)
        .status()
        .with_context(|| format!("running {program}"))?;
    if !status.success() {
        bail!("{program} {} failed: {status}", args.join(" "));
    }
    Ok(())
}

fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("xtask lives in the workspace root")
        .to_owned()
}

/// Creates the Python virtual environment `venv` and installs `packages` (pinned versions) into it.
fn venv_install(venv: &Path, packages: &[&str]) -> Result<()> {
    let v = venv.to_str().context("non-UTF-8 path")?;
    run("python3", &["-m", "venv", v])?;
    let pip = venv.join("bin/pip");
    let mut args = vec!["install", "-q"];
    args.extend_from_slice(packages);
    run(pip.to_str().context("non-UTF-8 path")?, &args)
}

/// Installs the toolchain into a virtual environment under target/ and returns the nvcc path.
pub(crate) fn cuda_toolchain() -> Result<PathBuf> {
    let venv = workspace_root().join("target/cuda-toolchain");
    let find = |venv: &Path| -> Option<PathBuf> {
        let lib = venv.join("lib");
        std::fs::read_dir(&lib).ok()?.flatten().find_map(|py| {
            let nvcc = py.path().join("site-packages/nvidia/cu13/bin/nvcc");
            nvcc.is_file().then_some(nvcc)
        })
    };
    if find(&venv).is_none() {
        venv_install(&venv, CUDA_PACKAGES)?;
    }
    find(&venv).context(
        "the toolchain installed, but nvcc is not where the nvidia-cuda-nvcc package puts it",
    )
}

/// The pinned Python gRPC packages the daemon's wire-format test generates its client with.
const PY_GRPC_PACKAGES: &[&str] = &["grpcio==1.68.1", "grpcio-tools==1.68.1"];

/// Installs Python's grpcio and grpcio-tools into a virtual environment under target/ and returns its python.
fn py_grpc() -> Result<PathBuf> {
    let venv = workspace_root().join("target/py-grpc");
    let python = venv.join("bin/python");
    let ready = || {
        Command::new(&python)
            .args(["-c", "import grpc, grpc_tools.protoc"])
            .output()
            .is_ok_and(|o| o.status.success())
    };
    if !ready() {
        venv_install(&venv, PY_GRPC_PACKAGES)?;
    }
    if !ready() {
        bail!(
            "{} cannot import grpc after installing it",
            python.display()
        );
    }
    Ok(python)
}

fn main() -> Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.first().map(String::as_str) {
        Some("ci") => run("bash", &[".ci/run"]),
        Some("cuda-toolchain") => {
            let nvcc = cuda_toolchain()?;
            eprintln!("CUDA toolchain ready. Use it with:");
            println!("export NVCC={}", nvcc.display());
            Ok(())
        }
        Some("py-grpc") => {
            let python = py_grpc()?;
            eprintln!("Python gRPC ready. The daemon's wire-format test uses it with:");
            println!("export CUZK_PYTHON={}", python.display());
            println!("export CUZK_REQUIRE_PYGRPC=1");
            Ok(())
        }
        Some("bindgen") => bindings::generate_all(&workspace_root()),
        Some("bench") => bench::run(&workspace_root(), &args[1..]),
        Some("profile") => profile::run(&workspace_root(), &args[1..]),
        Some("plot") => plot::run(&args[1..]),
        Some("tune") if args.get(1).map(String::as_str) == Some("msm") => {
            let table = workspace_root().join("crates/msm-cuda/tuning/h200.txt");
            let table = table.to_str().context("non-UTF-8 path")?;
            run(
                "cargo",
                &[
                    "run",
                    "--release",
                    "-p",
                    "cli",
                    "--",
                    "bench",
                    "msm",
                    "--scalars",
                    "random",
                    "--sizes",
                    "10,12,14,16,18,20,22,24,26",
                    "--iterations",
                    "5",
                    "--tune",
                    table,
                ],
            )
        }
        _ => {
            eprintln!(
                "usage: cargo xtask <command>\n\ncommands:\n  ci              run what CI runs (.ci/run)\n  cuda-toolchain  install the pinned CUDA toolchain into target/ and print NVCC\n  py-grpc         install Python grpcio into target/ for the daemon's wire-format test\n  bindgen         regenerate the CUDA crates' src/ffi.rs from their C headers\n  tune msm        measure MSM windows on this machine's GPU and rewrite crates/msm-cuda/tuning/h200.txt\n  bench           the curated benchmarks, baselines and A/B switches (cargo xtask bench --help)\n  profile synth   the synth-only benchmark under perf stat\n  profile gpu     build the GPU binaries into target/device and print the ncu command lines\n  plot            SVG charts: plot sizes BENCH.json OUT.svg | plot memlog LOG.csv OUT.svg"
            );
            std::process::exit(2)
        }
    }
}
