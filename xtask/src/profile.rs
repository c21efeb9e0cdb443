//! `cargo xtask profile synth | gpu`.
//!
//! `synth` runs the synth-only benchmark under `perf stat` and prints each hardware counter, naming the ones this
//! machine would not let it read (containers and VMs often hide them). `gpu` builds what the lent GPU machine needs
//! (the GPU test binaries and the release `cuzk`, kernels compiled with the pinned toolchain) into `target/device`
//! and prints the `ncu` and `nsys` command lines to run there.

use std::path::Path;
use std::process::Command;

use anyhow::{bail, Context, Result};
use serde_json::Value;

const EVENTS: &[&str] = &[
    "cycles",
    "instructions",
    "branches",
    "branch-misses",
    "cache-references",
    "cache-misses",
    "page-faults",
];

pub fn run(root: &Path, args: &[String]) -> Result<()> {
    match args.first().map(String::as_str) {
        Some("synth") => synth(root, &args[1..]),
        Some("gpu") => gpu(root),
        _ => bail!(
            "usage: cargo xtask profile synth [cuzk bench synth options]\n       cargo xtask profile gpu"
        ),
    }
}

fn synth(root: &Path, extra: &[String]) -> Result<()> {
    crate::run("cargo", &["build", "--release", "-p", "cli"])?;
    let cuzk = root.join("target/release/cuzk");
    let mut bench: Vec<String> = ["bench", "synth"].map(String::from).to_vec();
    if extra.is_empty() {
        bench.extend(
            "--circuit porep-like --constraints 1000000 --path compiled --variant vec --iterations 3"
                .split_whitespace()
                .map(String::from),
        );
    } else {
        bench.extend(extra.iter().cloned());
    }
    let mut cmd = Command::new("perf");
    cmd.args(["stat", "-x", ",", "-e", &EVENTS.join(","), "--"])
        .arg(&cuzk)
        .args(&bench);
    eprintln!(
        "$ perf stat -e {} -- cuzk {}",
        EVENTS.join(","),
        bench.join(" ")
    );
    let out = match cmd.output() {
        Ok(o) => o,
        Err(e) => bail!("cannot run perf ({e}): install linux-perf (Debian: `apt install linux-perf`) or run the synth benchmark without counters"),
    };
    print!("{}", String::from_utf8_lossy(&out.stdout));
    let stderr = String::from_utf8_lossy(&out.stderr);
    if !out.status.success() {
        bail!("perf stat failed ({}):\n{stderr}", out.status);
    }
    // perf's CSV lines: value,unit,event,run time,percentage,...
    let mut read = Vec::new();
    let mut missing = Vec::new();
    for line in stderr.lines() {
        let f: Vec<&str> = line.split(',').collect();
        if f.len() < 3 || !EVENTS.contains(&f[2]) {
            continue;
        }
        match f[0].parse::<f64>() {
            Ok(v) => read.push((f[2], v)),
            Err(_) => missing.push((
                f[2],
                f[0].trim_matches(|c| c == '<' || c == '>').to_string(),
            )),
        }
    }
    let get = |name: &str| read.iter().find(|(n, _)| *n == name).map(|(_, v)| *v);
    println!("\nperf counters for `cuzk {}`:", bench.join(" "));
    for (name, v) in &read {
        println!("  {name:<18} {v:>18.0}");
    }
    if let (Some(i), Some(c)) = (get("instructions"), get("cycles")) {
        println!("  {:<18} {:>18.2}", "IPC", i / c);
    }
    if let (Some(m), Some(b)) = (get("branch-misses"), get("branches")) {
        println!("  {:<18} {:>17.2}%", "branch miss rate", m / b * 100.0);
    }
    if let (Some(m), Some(r)) = (get("cache-misses"), get("cache-references")) {
        println!("  {:<18} {:>17.2}%", "cache miss rate", m / r * 100.0);
    }
    for (name, why) in &missing {
        println!("  could not read {name}: perf says \"{why}\" (hardware counters are often hidden inside containers and VMs)");
    }
    if read.is_empty() && missing.is_empty() {
        println!("  perf printed no counters; its output was:\n{stderr}");
    }
    Ok(())
}

fn gpu(root: &Path) -> Result<()> {
    let nvcc = crate::cuda_toolchain()?;
    let dev = root.join("target/device");
    std::fs::create_dir_all(&dev).with_context(|| format!("creating {}", dev.display()))?;
    let cargo = |args: &[&str]| -> Result<Vec<u8>> {
        eprintln!("$ NVCC={} cargo {}", nvcc.display(), args.join(" "));
        let out = Command::new("cargo")
            .args(args)
            .env("NVCC", &nvcc)
            .stderr(std::process::Stdio::inherit())
            .output()
            .context("running cargo")?;
        if !out.status.success() {
            bail!("cargo {} failed: {}", args.join(" "), out.status);
        }
        Ok(out.stdout)
    };
    let json = cargo(&[
        "test",
        "--release",
        "-p",
        "ntt-cuda",
        "-p",
        "msm-cuda",
        "-p",
        "groth16-pipeline",
        "--no-run",
        "--message-format=json",
    ])?;
    for line in String::from_utf8_lossy(&json).lines() {
        let Ok(m) = serde_json::from_str::<Value>(line) else {
            continue;
        };
        let (Some(exe), Some(name), Some(pkg)) = (
            m["executable"].as_str(),
            m["target"]["name"].as_str(),
            m["package_id"].as_str(),
        ) else {
            continue;
        };
        // The GPU test binaries: `gpu`, and `gpu_*` ones that need a process of their own.
        if name != "gpu" && !name.starts_with("gpu_") {
            continue;
        }
        let dst = ["ntt-cuda", "msm-cuda", "groth16-pipeline"]
            .iter()
            .find(|p| pkg.contains(*p))
            .map(|p| format!("{}_{name}", p.replace('-', "_")));
        if let Some(dst) = dst {
            std::fs::copy(exe, dev.join(&dst)).with_context(|| format!("copying {exe}"))?;
        }
    }
    cargo(&["build", "--release", "-p", "cli"])?;
    std::fs::copy(root.join("target/release/cuzk"), dev.join("cuzk")).context("copying cuzk")?;
    println!(
        "GPU binaries are in {} (carry that folder to the GPU machine). There, for example:\n\
         \n  CUZK_REQUIRE_GPU=1 ./ntt_cuda_gpu && CUZK_REQUIRE_GPU=1 ./ntt_cuda_gpu_sparse && CUZK_REQUIRE_GPU=1 ./msm_cuda_gpu && CUZK_REQUIRE_GPU=1 ./msm_cuda_gpu_chunked && CUZK_REQUIRE_GPU=1 ./groth16_pipeline_gpu && CUZK_REQUIRE_GPU=1 ./groth16_pipeline_gpu_streamed\
         \n  ncu --set full -k regex:accumulate -c 3 -o msm_accumulate ./cuzk bench msm --sizes 24 --scalars random --iterations 1\
         \n  ncu --set full -k regex:ntt -c 6 -o ntt ./cuzk bench ntt --sizes 24 --h-sizes 24 --iterations 1\
         \n  nsys profile -o prove ./cuzk bench prove --gpu --constraints 4190000 --partitions 4 --params fake\
         \n\nRead `nvcc -Xptxas -v` (registers, spills) in the build log before timing a kernel.",
        dev.display()
    );
    Ok(())
}
