#![doc = include_str!("../README.md")]

use std::env;
use std::path::{Path, PathBuf};
use std::process::Command;

/// The folder of the shared device headers (`fr.cuh`, ...).
pub fn include_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("include")
}

/// Finds nvcc, or says why not.
pub fn find_nvcc() -> Result<PathBuf, String> {
    if env::var_os("CUZK_SKIP_CUDA").is_some_and(|v| v == "1") {
        return Err("CUZK_SKIP_CUDA=1".into());
    }
    if let Some(p) = env::var_os("NVCC") {
        let p = PathBuf::from(p);
        return if p.is_file() {
            Ok(p)
        } else {
            Err(format!("NVCC={} is not a file", p.display()))
        };
    }
    for var in ["CUDA_PATH", "CUDA_HOME"] {
        if let Some(root) = env::var_os(var) {
            let p = PathBuf::from(root).join("bin/nvcc");
            if p.is_file() {
                return Ok(p);
            }
        }
    }
    if let Some(paths) = env::var_os("PATH") {
        for dir in env::split_paths(&paths) {
            let p = dir.join("nvcc");
            if p.is_file() {
                return Ok(p);
            }
        }
    }
    let p = PathBuf::from("/usr/local/cuda/bin/nvcc");
    if p.is_file() {
        return Ok(p);
    }
    Err(
        "nvcc not found (set NVCC, CUDA_PATH or CUDA_HOME, or run `cargo xtask cuda-toolchain`)"
            .into(),
    )
}

/// The CUDA toolkit root of an nvcc (its `bin/..`).
fn toolkit_root(nvcc: &Path) -> PathBuf {
    nvcc.parent()
        .and_then(Path::parent)
        .map(Path::to_owned)
        .unwrap_or_default()
}

/// The project's nvcc flags: Hopper machine code plus PTX, line info, optimisation.
pub const NVCC_FLAGS: &[&str] = &[
    "-O3",
    "-std=c++17",
    "-lineinfo",
    "-Xcompiler",
    "-fPIC",
    "-gencode",
    "arch=compute_90,code=sm_90",
    "-gencode",
    "arch=compute_90,code=compute_90",
];

/// A crate's kernels.
#[derive(Debug)]
pub struct Kernels {
    lib: String,
    sources: Vec<PathBuf>,
    headers: Vec<PathBuf>,
}

/// Extra nvcc arguments from `CUZK_NVCC_FLAGS` (split at whitespace), for building a kernel variant to measure
/// against the default (for example `-DCUZK_FP_MUL_UL`); empty when unset.
fn extra_flags() -> Vec<String> {
    env::var("CUZK_NVCC_FLAGS")
        .map(|v| v.split_whitespace().map(str::to_owned).collect())
        .unwrap_or_default()
}

impl Kernels {
    /// Kernels compiled into the static library `lib`.
    pub fn new(lib: &str) -> Self {
        println!("cargo::rustc-check-cfg=cfg(has_cuda)");
        println!("cargo:rerun-if-env-changed=NVCC");
        println!("cargo:rerun-if-env-changed=CUDA_PATH");
        println!("cargo:rerun-if-env-changed=CUDA_HOME");
        println!("cargo:rerun-if-env-changed=CUZK_SKIP_CUDA");
        println!("cargo:rerun-if-env-changed=CUZK_NVCC_FLAGS");
        Self {
            lib: lib.into(),
            sources: Vec::new(),
            headers: Vec::new(),
        }
    }

    /// Adds a `.cu` source.
    pub fn source(mut self, path: impl Into<PathBuf>) -> Self {
        let p = path.into();
        println!("cargo:rerun-if-changed={}", p.display());
        self.sources.push(p);
        self
    }

    /// Adds a header whose change must rebuild.
    pub fn header(mut self, path: impl Into<PathBuf>) -> Self {
        let p = path.into();
        println!("cargo:rerun-if-changed={}", p.display());
        self.headers.push(p);
        self
    }

    /// Compiles and links the kernels, or explains in a warning why not. Returns whether CUDA was built.
    ///
    /// # Panics
    /// If nvcc is found but fails: a broken kernel must fail the build, not silently fall back.
    pub fn build(self) -> bool {
        for entry in std::fs::read_dir(include_dir())
            .into_iter()
            .flatten()
            .flatten()
        {
            println!("cargo:rerun-if-changed={}", entry.path().display());
        }
        let nvcc = match find_nvcc() {
            Ok(p) => p,
            Err(why) => {
                println!("cargo:warning=building {} without CUDA kernels: {why}; GPU entry points will return NoDevice", self.lib);
                return false;
            }
        };
        let out = PathBuf::from(env::var("OUT_DIR").expect("OUT_DIR is set for build scripts"));
        let mut objects = Vec::new();
        for src in &self.sources {
            let obj = out.join(
                src.file_stem()
                    .expect("a source file")
                    .to_string_lossy()
                    .to_string()
                    + ".o",
            );
            let status = Command::new(&nvcc)
                .args(NVCC_FLAGS)
                .args(extra_flags())
                .arg("-I")
                .arg(include_dir())
                .arg("-c")
                .arg(src)
                .arg("-o")
                .arg(&obj)
                .status()
                .unwrap_or_else(|e| panic!("running {}: {e}", nvcc.display()));
            assert!(status.success(), "nvcc failed on {}", src.display());
            objects.push(obj);
        }
        let archive = out.join(format!("lib{}.a", self.lib));
        let _ = std::fs::remove_file(&archive);
        let status = Command::new("ar")
            .arg("crs")
            .arg(&archive)
            .args(&objects)
            .status()
            .expect("running ar");
        assert!(status.success(), "ar failed");
        let root = toolkit_root(&nvcc);
        for lib_dir in ["lib64", "lib", "lib/x64"] {
            let d = root.join(lib_dir);
            if d.join("libcudart_static.a").is_file() {
                println!("cargo:rustc-link-search=native={}", d.display());
            }
        }
        println!("cargo:rustc-link-search=native={}", out.display());
        println!("cargo:rustc-link-lib=static={}", self.lib);
        println!("cargo:rustc-link-lib=static=cudart_static");
        for l in ["stdc++", "dl", "rt", "pthread"] {
            println!("cargo:rustc-link-lib={l}");
        }
        println!("cargo:rustc-cfg=has_cuda");
        true
    }
}
