//! `cargo xtask bench`: the curated benchmark set, its summary table, baselines, and interleaved A/B runs.
//!
//! Every case is one `cuzk bench ...` command with `--json`, run as its own process several times, the cases taken
//! in turn (round robin) so that drift of the machine hits them alike. A case's value is the median over its runs of
//! one number the command prints; its noise is half the range of the runs over the median, measured, not assumed.
//! Against a baseline a change is called faster or slower only when it exceeds the larger noise of the two sides.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{bail, Context, Result};
use serde_json::{json, Value};

/// One benchmark: a `cuzk` command line and the JSON key of the number it reports (milliseconds).
#[derive(Debug)]
struct Case {
    id: String,
    args: Vec<String>,
    env: Vec<(&'static str, &'static str)>,
    key: String,
}

fn case(id: &str, args: &str, key: &str) -> Case {
    Case {
        id: id.into(),
        args: args.split_whitespace().map(String::from).collect(),
        env: Vec::new(),
        key: key.into(),
    }
}

impl Case {
    /// The same case run with `name=value` in its environment (the B side of an A/B switch).
    fn with_env(mut self, name: &'static str, value: &'static str) -> Case {
        self.env.push((name, value));
        self
    }
}

/// The curated set. `--quick` keeps the cases that take seconds on two cores (CI-sized); the full set adds 2^20
/// synthesis, a larger pipelined proof and the criterion benches ([`CRITERION`]); `--gpu` adds GPU cases.
fn curated(quick: bool, gpu: bool, cache: &Path) -> Vec<Case> {
    let cache = cache.display();
    let mut v = vec![
        case(
            "synth/porep-like/direct/2^16",
            "bench synth --circuit porep-like --constraints 65536 --path direct --variant vec --iterations 3",
            "vec_median_ms",
        ),
        case(
            "synth/porep-like/compiled/2^16",
            "bench synth --circuit porep-like --constraints 65536 --path compiled --variant vec --iterations 3",
            "vec_median_ms",
        ),
        case(
            "synth/sha256/compiled/2^16",
            "bench synth --circuit sha256 --blocks 2 --path compiled --variant vec --iterations 3",
            "vec_median_ms",
        ),
        case(
            "prove/porep-like/cpu/2^14x4",
            &format!("bench prove --cpu --constraints 16000 --partitions 4 --synthesis-workers 1 --cache-dir {cache}"),
            "per_partition_ms",
        ),
    ];
    if !quick {
        v.extend([
            case(
                "synth/porep-like/direct/2^20",
                "bench synth --circuit porep-like --constraints 1000000 --path direct --variant vec --iterations 3",
                "vec_median_ms",
            ),
            case(
                "synth/porep-like/compiled/2^20",
                "bench synth --circuit porep-like --constraints 1000000 --path compiled --variant vec --iterations 3",
                "vec_median_ms",
            ),
            case(
                "prove/porep-like/cpu/2^16x4",
                &format!("bench prove --cpu --constraints 65000 --partitions 4 --cache-dir {cache}"),
                "per_partition_ms",
            ),
        ]);
    }
    if gpu {
        v.extend([
            case(
                "msm/g1/random/2^20",
                "bench msm --sizes 20 --scalars random --iterations 5",
                "g1_2_20_random_median_ms",
            ),
            case(
                "msm/g1/random/2^24",
                "bench msm --sizes 24 --scalars random --iterations 5",
                "g1_2_24_random_median_ms",
            ),
            case(
                "prove/porep-like/gpu/2^22x6",
                "bench prove --gpu --constraints 4190000 --partitions 6 --params fake",
                "per_partition_ms",
            ),
        ]);
    }
    v
}

/// Environment variables of a command.
type Env = &'static [(&'static str, &'static str)];

/// Criterion benches of the full set: package, bench target, environment (small sizes: the set must stay quick).
const CRITERION: &[(&str, &str, Env)] = &[
    ("lc-indexer", "lc_insert", &[]),
    (
        "ntt-cuda",
        "ntt",
        &[("BENCH_MIN_LOG2", "14"), ("BENCH_MAX_LOG2", "16")],
    ),
    (
        "msm-cuda",
        "msm",
        &[("BENCH_MIN_LOG2", "12"), ("BENCH_MAX_LOG2", "14")],
    ),
];

/// Runs the criterion benches and reads back every estimate they wrote in this run: id `criterion/<group>/<name>`,
/// the median with its 95 % confidence interval as min and max, and half that interval over the median as noise.
fn criterion(root: &Path) -> Result<Vec<(String, Stats)>> {
    let started = std::time::SystemTime::now();
    for (package, bench, env) in CRITERION {
        eprintln!("$ cargo bench -p {package} --bench {bench} -- --noplot");
        let status = Command::new("cargo")
            .args(["bench", "-p", package, "--bench", bench, "--", "--noplot"])
            .envs(env.iter().copied())
            .status()
            .context("running cargo bench")?;
        if !status.success() {
            bail!("cargo bench -p {package} --bench {bench} failed: {status}");
        }
    }
    let base = root.join("target/criterion");
    let mut found = Vec::new();
    let mut stack = vec![base.clone()];
    while let Some(dir) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for e in entries.flatten() {
            let path = e.path();
            if path.is_dir() {
                stack.push(path);
                continue;
            }
            let fresh = e
                .metadata()
                .and_then(|m| m.modified())
                .is_ok_and(|t| t >= started);
            if !fresh
                || path.file_name().and_then(|n| n.to_str()) != Some("estimates.json")
                || path
                    .parent()
                    .and_then(Path::file_name)
                    .and_then(|n| n.to_str())
                    != Some("new")
            {
                continue;
            }
            let v: Value = serde_json::from_str(&std::fs::read_to_string(&path)?)
                .with_context(|| format!("{} is not JSON", path.display()))?;
            let m = &v["median"];
            let (Some(p), Some(lo), Some(hi)) = (
                m["point_estimate"].as_f64(),
                m["confidence_interval"]["lower_bound"].as_f64(),
                m["confidence_interval"]["upper_bound"].as_f64(),
            ) else {
                bail!("{}: no median estimate", path.display());
            };
            let id = path
                .parent()
                .and_then(Path::parent)
                .and_then(|d| d.strip_prefix(&base).ok())
                .map(|d| format!("criterion/{}", d.display()))
                .unwrap_or_default();
            found.push((
                id,
                Stats {
                    median: p / 1e6,
                    min: lo / 1e6,
                    max: hi / 1e6,
                    noise: (hi - lo) / 2.0 / p.max(1e-12),
                },
            ));
        }
    }
    found.sort_by(|a, b| a.0.cmp(&b.0));
    Ok(found)
}

/// The two sides of an A/B switch: one case run with A's and B's extra arguments or environment.
fn ab_cases(switch: &str) -> Result<(Case, Case)> {
    let synth = "bench synth --circuit porep-like --constraints 65536 --path direct --iterations 3";
    Ok(match switch {
        "a1" => (
            case("A1 vec", &format!("{synth} --variant vec"), "vec_median_ms"),
            case(
                "A1 smallvec2",
                &format!("{synth} --variant smallvec2"),
                "smallvec2_median_ms",
            ),
        ),
        "a2" => (
            case(
                "A2 hint off",
                &format!("{synth} --variant vec --hint off"),
                "vec_median_ms",
            ),
            case(
                "A2 hint on",
                &format!("{synth} --variant vec --hint on"),
                "vec_median_ms",
            ),
        ),
        "a4" => {
            let prove = "bench prove --gpu --constraints 1048000 --partitions 4 --params fake";
            (
                case("A4 B_G2 on the GPU", prove, "per_partition_ms"),
                case("A4 B_G2 on the CPU beside the GPU", prove, "per_partition_ms")
                    .with_env("CUZK_B_G2", "cpu"),
            )
        }
        "b1" => {
            let prove = "bench prove --gpu --constraints 4190000 --partitions 4 --params fake";
            (
                case(
                    "B1 off: a, b, c through pinned staging (pinned once)",
                    prove,
                    "h_polynomial_median_ms",
                ),
                case(
                    "B1 a, b, c registered in place per proof (cudaHostRegister)",
                    prove,
                    "h_polynomial_median_ms",
                )
                .with_env("CUZK_H_UPLOAD", "register"),
            )
        }
        "d4" => (
            case(
                "D4 tuned window",
                "bench msm --sizes 22 --scalars random --iterations 5",
                "g1_2_22_random_median_ms",
            ),
            case(
                "D4 fixed window 13",
                "bench msm --sizes 22 --scalars random --iterations 5 --window 13",
                "g1_2_22_random_median_ms",
            ),
        ),
        "ntt-mul" => {
            let ntt = "bench ntt --sizes 27 --h-sizes 27 --iterations 5 --device-only";
            (
                case(
                    "NTT butterflies by mont_mul_f64 (FP64 pipe; the default)",
                    ntt,
                    "h_2_27_median_ms",
                ),
                case(
                    "NTT butterflies by mont_mul_ul (integer pipe)",
                    ntt,
                    "h_2_27_median_ms",
                )
                .with_env("CUZK_NTT_MUL", "ul"),
            )
        }
        other => bail!(
            "unknown switch {other:?}: a1 (LC storage Vec vs SmallVec), a2 (pre-sizing hint), a4 (B_G2 on the CPU \
             beside the GPU), b1 (cudaHostRegister per proof vs pinned staging; GPU), d4 (per-MSM window vs a fixed one; GPU), \
             ntt-mul (the NTT butterflies' product on the FP64 pipe vs the integer one; GPU)"
        ),
    })
}

/// Runs `cuzk` once and returns the number under `key` in its JSON summary.
fn run_once(cuzk: &Path, c: &Case) -> Result<f64> {
    let out = Command::new(cuzk)
        .args(&c.args)
        .arg("--json")
        .envs(c.env.iter().copied())
        .output()
        .with_context(|| format!("running {}", cuzk.display()))?;
    if !out.status.success() {
        bail!(
            "case {}: `cuzk {}` failed ({}):\n{}",
            c.id,
            c.args.join(" "),
            out.status,
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let v: Value = serde_json::from_slice(&out.stdout)
        .with_context(|| format!("case {}: the output is not JSON", c.id))?;
    v.get(&c.key).and_then(Value::as_f64).with_context(|| {
        format!(
            "case {}: no number {:?} in the output (keys: {})",
            c.id,
            c.key,
            v.as_object()
                .map(|o| o.keys().cloned().collect::<Vec<_>>().join(", "))
                .unwrap_or_default()
        )
    })
}

/// Median, min, max and noise (half the range over the median) of some runs.
#[derive(Clone, Copy, Debug)]
struct Stats {
    median: f64,
    min: f64,
    max: f64,
    noise: f64,
}

fn stats(runs: &[f64]) -> Stats {
    let mut v = runs.to_vec();
    v.sort_by(f64::total_cmp);
    let median = v[v.len() / 2];
    let (min, max) = (v[0], v[v.len() - 1]);
    Stats {
        median,
        min,
        max,
        noise: (max - min) / 2.0 / median.max(1e-12),
    }
}

/// "faster", "slower" or "within noise" for a relative change against a noise level.
fn verdict(change: f64, noise: f64) -> &'static str {
    if change < -noise {
        "faster"
    } else if change > noise {
        "slower"
    } else {
        "within noise"
    }
}

/// Builds the release `cuzk` and returns its path.
fn build_cuzk(root: &Path) -> Result<PathBuf> {
    crate::run("cargo", &["build", "--release", "-p", "cli"])?;
    Ok(root.join("target/release/cuzk"))
}

struct Options {
    quick: bool,
    gpu: bool,
    runs: usize,
    save: Option<String>,
    compare: Option<String>,
    ab: Option<String>,
    /// A prebuilt `cuzk` (the GPU machine has no cargo): no build, and no criterion benches.
    cuzk: Option<PathBuf>,
}

fn parse(args: &[String]) -> Result<Options> {
    let mut o = Options {
        quick: false,
        gpu: false,
        runs: 0,
        save: None,
        compare: None,
        ab: None,
        cuzk: None,
    };
    let mut it = args.iter();
    while let Some(a) = it.next() {
        let mut value = |name: &str| {
            it.next()
                .cloned()
                .with_context(|| format!("{name} needs a value"))
        };
        match a.as_str() {
            "--help" | "-h" => {
                println!("{USAGE}");
                std::process::exit(0)
            }
            "--quick" => o.quick = true,
            "--gpu" => o.gpu = true,
            "--runs" => o.runs = value("--runs")?.parse().context("--runs takes a number")?,
            "--save" => o.save = Some(value("--save")?),
            "--compare" => o.compare = Some(value("--compare")?),
            "--ab" => o.ab = Some(value("--ab")?.to_ascii_lowercase()),
            "--cuzk" => o.cuzk = Some(PathBuf::from(value("--cuzk")?)),
            other => bail!("unknown option {other:?}\n\n{USAGE}"),
        }
    }
    for name in [&o.save, &o.compare].into_iter().flatten() {
        if name.is_empty()
            || !name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
        {
            bail!("baseline name {name:?}: use letters, digits, - and _");
        }
    }
    match o.runs {
        0 => o.runs = if o.quick { 3 } else { 5 },
        1 => bail!("--runs 1 measures no noise: use at least 2"),
        _ => {}
    }
    Ok(o)
}

pub const USAGE: &str = "usage: cargo xtask bench [--quick] [--gpu] [--runs N] [--save NAME] [--compare NAME] [--cuzk PATH]
       cargo xtask bench --ab a1|a2|a4|b1|d4|ntt-mul [--runs N] [--cuzk PATH]

Runs the curated set (--quick: seconds on two cores; --gpu adds GPU cases), N runs per case (default 5, quick 3),
cases interleaved. Writes target/xtask-bench/last.md and last.json; --save keeps the results as baseline NAME,
--compare marks each case faster, slower or within noise against baseline NAME.
--ab runs the two sides of one optimisation switch interleaved and reports the effect with its spread.
--cuzk uses a prebuilt binary instead of building one (on the GPU machine, which has no cargo, carry the xtask
binary and cuzk: ./xtask bench --ab b1 --cuzk ./cuzk); the criterion benches then are skipped.";

pub fn run(root: &Path, args: &[String]) -> Result<()> {
    let o = parse(args)?;
    // With a prebuilt cuzk (another machine, no checkout) results go under the current directory.
    let dir = if o.cuzk.is_some() {
        PathBuf::from("xtask-bench")
    } else {
        root.join("target/xtask-bench")
    };
    std::fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;
    let cuzk = match &o.cuzk {
        Some(path) if path.is_file() => path.clone(),
        Some(path) => bail!("--cuzk {}: no such file", path.display()),
        None => build_cuzk(root)?,
    };
    if let Some(switch) = &o.ab {
        return ab(&cuzk, switch, o.runs);
    }
    let cases = curated(o.quick, o.gpu, &dir.join("params"));
    // One untimed run of each case first: parameters generated, caches warm.
    for c in &cases {
        eprintln!("warm-up: {}", c.id);
        run_once(&cuzk, c)?;
    }
    let mut runs: Vec<Vec<f64>> = vec![Vec::new(); cases.len()];
    for round in 0..o.runs {
        for (c, r) in cases.iter().zip(&mut runs) {
            let ms = run_once(&cuzk, c)?;
            eprintln!("round {}/{}: {} {ms:.2} ms", round + 1, o.runs, c.id);
            r.push(ms);
        }
    }
    let baseline: Option<BTreeMap<String, Value>> = match &o.compare {
        None => None,
        Some(name) => {
            let path = dir.join(format!("{name}.json"));
            let text = std::fs::read_to_string(&path).with_context(|| {
                format!(
                    "reading baseline {} (make it with --save {name})",
                    path.display()
                )
            })?;
            let v: Value = serde_json::from_str(&text)
                .with_context(|| format!("baseline {} is not JSON", path.display()))?;
            Some(
                v["cases"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .filter_map(|c| Some((c["case"].as_str()?.to_string(), c.clone())))
                    .collect(),
            )
        }
    };
    let mut md = String::from(
        "| case | median ms | min | max | noise | runs | vs baseline |\n| --- | ---: | ---: | ---: | ---: | ---: | --- |\n",
    );
    let mut rows = Vec::new();
    for (c, r) in cases.iter().zip(&runs) {
        let s = stats(r);
        let cmp = baseline.as_ref().map(|b| compare(b.get(&c.id), &s));
        md.push_str(&format!(
            "| {} | {:.2} | {:.2} | {:.2} | {:.1} % | {} | {} |\n",
            c.id,
            s.median,
            s.min,
            s.max,
            s.noise * 100.0,
            r.len(),
            cmp.clone().unwrap_or_else(|| "–".into())
        ));
        rows.push(json!({
            "case": c.id,
            "command": format!("cuzk {}", c.args.join(" ")),
            "metric": c.key,
            "median_ms": s.median,
            "min_ms": s.min,
            "max_ms": s.max,
            "noise": s.noise,
            "runs_ms": r,
            "throughput_per_s": 1e3 / s.median,
            "vs_baseline": cmp,
        }));
    }
    if !o.quick && o.cuzk.is_some() {
        eprintln!("criterion benches skipped: --cuzk means there is no cargo here");
    }
    if !o.quick && o.cuzk.is_none() {
        for (id, s) in criterion(root)? {
            let cmp = baseline.as_ref().map(|b| compare(b.get(&id), &s));
            md.push_str(&format!(
                "| {id} | {:.4} | {:.4} | {:.4} | {:.1} % | criterion | {} |\n",
                s.median,
                s.min,
                s.max,
                s.noise * 100.0,
                cmp.clone().unwrap_or_else(|| "–".into())
            ));
            rows.push(json!({
                "case": id,
                "command": "cargo bench (criterion; min and max are the median's 95 % confidence interval)",
                "median_ms": s.median,
                "min_ms": s.min,
                "max_ms": s.max,
                "noise": s.noise,
                "throughput_per_s": 1e3 / s.median,
                "vs_baseline": cmp,
            }));
        }
    }
    let summary = json!({ "quick": o.quick, "gpu": o.gpu, "runs": o.runs, "cases": rows });
    print!("{md}");
    write(&dir.join("last.md"), &md)?;
    write(
        &dir.join("last.json"),
        &serde_json::to_string_pretty(&summary)?,
    )?;
    if let Some(name) = &o.save {
        let path = dir.join(format!("{name}.json"));
        write(&path, &serde_json::to_string_pretty(&summary)?)?;
        eprintln!("saved baseline {name}: {}", path.display());
    }
    Ok(())
}

/// A case against its baseline entry: the change, its verdict and the noise it was judged against.
fn compare(base: Option<&Value>, s: &Stats) -> String {
    let Some(base) = base else {
        return "not in baseline".into();
    };
    let bm = base["median_ms"].as_f64().unwrap_or(f64::NAN);
    let bn = base["noise"].as_f64().unwrap_or(0.0);
    let change = s.median / bm - 1.0;
    let noise = s.noise.max(bn);
    format!(
        "{:+.1} % ({}; noise {:.1} %)",
        change * 100.0,
        verdict(change, noise),
        noise * 100.0
    )
}

/// Writes atomically (temporary file, then rename).
fn write(path: &Path, text: &str) -> Result<()> {
    let tmp = path.with_extension("tmp");
    std::fs::write(&tmp, text).with_context(|| format!("writing {}", tmp.display()))?;
    std::fs::rename(&tmp, path).with_context(|| format!("renaming to {}", path.display()))
}

fn ab(cuzk: &Path, switch: &str, runs: usize) -> Result<()> {
    let (a, b) = ab_cases(switch)?;
    eprintln!("warm-up: {} / {}", a.id, b.id);
    run_once(cuzk, &a)?;
    run_once(cuzk, &b)?;
    let (mut ra, mut rb) = (Vec::new(), Vec::new());
    for round in 0..runs {
        // Alternate which side goes first, so that neither always follows the other.
        let (first, second) = if round % 2 == 0 { (&a, &b) } else { (&b, &a) };
        for c in [first, second] {
            let ms = run_once(cuzk, c)?;
            eprintln!("round {}/{runs}: {} {ms:.2} ms", round + 1, c.id);
            if std::ptr::eq(c, &a) {
                ra.push(ms)
            } else {
                rb.push(ms)
            }
        }
    }
    let (sa, sb) = (stats(&ra), stats(&rb));
    let change = sb.median / sa.median - 1.0;
    let noise = sa.noise.max(sb.noise);
    println!("| side | median ms | min | max | noise | runs |\n| --- | ---: | ---: | ---: | ---: | ---: |");
    for (c, s, r) in [(&a, sa, &ra), (&b, sb, &rb)] {
        println!(
            "| {} | {:.2} | {:.2} | {:.2} | {:.1} % | {} |",
            c.id,
            s.median,
            s.min,
            s.max,
            s.noise * 100.0,
            r.len()
        );
    }
    println!(
        "\n{} against {}: {:+.1} % ({}; noise {:.1} %, measured)",
        b.id,
        a.id,
        change * 100.0,
        verdict(change, noise),
        noise * 100.0
    );
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn verdicts_respect_the_noise() {
        assert_eq!(verdict(-0.10, 0.05), "faster");
        assert_eq!(verdict(0.10, 0.05), "slower");
        assert_eq!(verdict(0.04, 0.05), "within noise");
        let s = stats(&[10.0, 12.0, 11.0]);
        assert_eq!((s.median, s.min, s.max), (11.0, 10.0, 12.0));
        assert!((s.noise - 1.0 / 11.0).abs() < 1e-12);
    }

    #[test]
    fn every_switch_has_two_sides_and_bad_input_is_named() {
        for s in ["a1", "a2", "a4", "b1", "d4", "ntt-mul"] {
            let (a, b) = ab_cases(s).unwrap();
            assert_ne!((a.args, a.env), (b.args, b.env), "{s}");
        }
        assert!(ab_cases("zz")
            .unwrap_err()
            .to_string()
            .contains("unknown switch"));
        let err = parse(&["--save".into(), "../x".into()]).err().unwrap();
        assert!(err.to_string().contains("baseline name"), "{err}");
        assert!(parse(&["--runs".into()]).is_err());
        assert_eq!(parse(&["--quick".into()]).unwrap().runs, 3);
        assert!(parse(&["--runs".into(), "1".into()]).is_err());
    }
}
