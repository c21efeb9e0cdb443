#![doc = include_str!("../README.md")]
#![forbid(unsafe_code)]

use bellpepper_core::{Circuit, ConstraintSystem, LinearCombination, SynthesisError, Variable};
use blstrs::{G1Affine, G1Projective, G2Affine, G2Projective, Scalar};
use ff::Field;
use group::Group;
use proptest::prelude::*;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha20Rng;

/// The RNG every test uses: reproducible from its seed.
pub type TestRng = ChaCha20Rng;

/// An RNG from a fixed seed.
pub fn seeded_rng(seed: u64) -> TestRng {
    ChaCha20Rng::seed_from_u64(seed)
}

/// A fresh RNG for "fresh random inputs": its seed comes from `CUZK_TEST_SEED` when set, else from the OS, and is printed so that a failure can be replayed.
pub fn fresh_rng(test: &str) -> TestRng {
    let seed = std::env::var("CUZK_TEST_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| rand::thread_rng().gen());
    eprintln!("{test}: CUZK_TEST_SEED={seed}");
    seeded_rng(seed)
}

/// A scalar of one of the interesting kinds: 0, 1, -1 (p - 1), small, or uniformly random.
pub fn edge_or_random_scalar(rng: &mut impl Rng) -> Scalar {
    match rng.gen_range(0..8) {
        0 => Scalar::ZERO,
        1 => Scalar::ONE,
        2 => -Scalar::ONE,
        3 => Scalar::from(rng.gen_range(2u64..16)),
        _ => Scalar::random(&mut *rng),
    }
}

/// Scalars per RNG in [`par_scalars`].
const PAR_SCALARS_CHUNK: usize = 1 << 16;

/// `n` scalars `f(r, i)` for i in 0..n, made on every core and reproducibly: each chunk of 2^16 takes its own RNG `r`,
/// seeded from `rng` in chunk order, so the vector depends on `rng`'s state alone, not on the threads. For the large
/// tests' inputs: one thread makes about 14 million random scalars a second (2026-12-07), 9 s for a 2^27 vector.
pub fn par_scalars(
    n: usize,
    rng: &mut impl Rng,
    f: impl Fn(&mut TestRng, usize) -> Scalar + Sync,
) -> Vec<Scalar> {
    use rayon::prelude::*;
    let seeds: Vec<u64> = (0..n.div_ceil(PAR_SCALARS_CHUNK))
        .map(|_| rng.gen())
        .collect();
    let mut out = vec![Scalar::ZERO; n];
    out.par_chunks_mut(PAR_SCALARS_CHUNK)
        .zip(seeds)
        .enumerate()
        .for_each(|(k, (chunk, seed))| {
            let mut r = seeded_rng(seed);
            for (j, x) in chunk.iter_mut().enumerate() {
                *x = f(&mut r, k * PAR_SCALARS_CHUNK + j);
            }
        });
    out
}

/// `n` scalars of [`edge_or_random_scalar`]'s kinds, made by [`par_scalars`].
pub fn random_scalars(n: usize, rng: &mut impl Rng) -> Vec<Scalar> {
    par_scalars(n, rng, |r, _| edge_or_random_scalar(r))
}

/// `n` random G1 points in affine form (never the identity).
pub fn random_g1(n: usize, rng: &mut impl Rng) -> Vec<G1Affine> {
    let proj: Vec<G1Projective> = (0..n).map(|_| G1Projective::random(&mut *rng)).collect();
    curve_batch::par_to_affine_vec(&proj)
}

/// `n` random G2 points in affine form (never the identity).
pub fn random_g2(n: usize, rng: &mut impl Rng) -> Vec<G2Affine> {
    let proj: Vec<G2Projective> = (0..n).map(|_| G2Projective::random(&mut *rng)).collect();
    curve_batch::par_to_affine_vec(&proj)
}

/// `n` points for large MSM tests and benchmarks, fast: chunks of 4096 start at a random point and step by another
/// random point, so neighbours are related but no point is a simple multiple of a fixed generator. Never the identity
/// in practice (a chunk would have to hit it exactly). Each chunk draws its two points from its own seed, taken from
/// `rng` in order, so the chunks run in parallel and the points depend only on `rng`.
pub fn random_points_fast<G>(n: usize, rng: &mut impl Rng) -> Vec<G::AffineRepr>
where
    G: curve_batch::BatchAffine + Group + for<'a> std::ops::AddAssign<&'a G::AffineRepr>,
    G::AffineRepr: Send + Sync + Default + Clone,
{
    use rayon::prelude::*;
    const CHUNK: usize = 4096;
    let seeds: Vec<[u8; 32]> = (0..n.div_ceil(CHUNK)).map(|_| rng.gen()).collect();
    let mut out = vec![G::AffineRepr::default(); n];
    out.par_chunks_mut(CHUNK)
        .zip(seeds.par_iter())
        .for_each(|(dst, seed)| {
            let mut chunk_rng = ChaCha20Rng::from_seed(*seed);
            let mut p = G::random(&mut chunk_rng);
            // The step in affine form: mixed additions, cheaper than projective ones (by a third in G2).
            let step = G::random(&mut chunk_rng).to_affine();
            let proj: Vec<G> = (0..dst.len())
                .map(|_| {
                    let q = p;
                    p += &step;
                    q
                })
                .collect();
            curve_batch::to_affine(&proj, dst);
        });
    out
}

/// [`random_points_fast`] in G1.
pub fn random_g1_fast(n: usize, rng: &mut impl Rng) -> Vec<G1Affine> {
    random_points_fast::<G1Projective>(n, rng)
}

/// [`random_points_fast`] in G2.
pub fn random_g2_fast(n: usize, rng: &mut impl Rng) -> Vec<G2Affine> {
    random_points_fast::<G2Projective>(n, rng)
}

/// Naive G1 MSM: the sum of `s_i * P_i`, one scalar multiplication at a time.
pub fn naive_msm_g1(bases: &[G1Affine], scalars: &[Scalar]) -> G1Projective {
    assert_eq!(bases.len(), scalars.len());
    bases
        .iter()
        .zip(scalars)
        .fold(G1Projective::identity(), |acc, (b, s)| acc + *b * s)
}

/// Naive G2 MSM: the sum of `s_i * P_i`.
pub fn naive_msm_g2(bases: &[G2Affine], scalars: &[Scalar]) -> G2Projective {
    assert_eq!(bases.len(), scalars.len());
    bases
        .iter()
        .zip(scalars)
        .fold(G2Projective::identity(), |acc, (b, s)| acc + *b * s)
}

/// proptest strategy for scalars biased to edge cases.
pub fn arb_scalar() -> impl Strategy<Value = Scalar> {
    any::<u64>().prop_map(|seed| edge_or_random_scalar(&mut seeded_rng(seed)))
}

/// Where a term of a random linear combination points.
#[derive(Clone, Copy, Debug)]
enum Slot {
    /// Input `i` (0 is ONE).
    Input(usize),
    /// Aux `i`.
    Aux(usize),
}

#[derive(Clone, Debug)]
struct RandomConstraint {
    a: Vec<(Slot, Scalar)>,
    b: Vec<(Slot, Scalar)>,
    /// Extra C terms besides the output variable.
    c_extra: Vec<(Slot, Scalar)>,
}

/// A random satisfiable R1CS circuit with a fixed shape, drawn once from a seed.
///
/// It allocates `inputs` public inputs (besides ONE) and `witnesses` free aux values (about a third are 0 or 1),
/// then `constraints` constraints `A * B = out + extra`, each with a fresh aux `out`.
/// Linear combinations repeat variables (to exercise merging), use coefficients 0, 1, -1 and random ones, use ONE,
/// and sometimes leave B empty or reference inputs in B (for the B-input density).
/// Every witness appears in some constraint (when there is at least one constraint), so parameters can be generated.
/// With `break_constraint = Some(k)` the k-th circuit constraint is made unsatisfied.
#[derive(Clone, Debug)]
pub struct RandomCircuit {
    input_values: Vec<Scalar>,
    witness_values: Vec<Scalar>,
    constraints: Vec<RandomConstraint>,
    /// Whether values are supplied (false: shape only, as for setup).
    pub with_values: bool,
    /// Which circuit constraint to break, if any.
    pub break_constraint: Option<usize>,
}

impl RandomCircuit {
    /// Draws a circuit shape and assignment from `rng`.
    pub fn new(inputs: usize, witnesses: usize, constraints: usize, rng: &mut impl Rng) -> Self {
        let input_values = (0..inputs).map(|_| edge_or_random_scalar(rng)).collect();
        let witness_values = (0..witnesses)
            .map(|_| match rng.gen_range(0..3) {
                0 => Scalar::ZERO,
                1 => Scalar::ONE,
                _ => Scalar::random(&mut *rng),
            })
            .collect();
        let mut list = Vec::with_capacity(constraints);
        for k in 0..constraints {
            // Aux variables that exist when this constraint is made: the witnesses and earlier outputs.
            let aux_now = witnesses + k;
            let lc = |rng: &mut dyn rand::RngCore, max_terms: usize, inputs_allowed: bool| {
                let n = rng.gen_range(0..=max_terms);
                (0..n)
                    .map(|_| {
                        let slot = if (inputs_allowed && rng.gen_bool(0.2)) || aux_now == 0 {
                            Slot::Input(rng.gen_range(0..=inputs))
                        } else {
                            Slot::Aux(rng.gen_range(0..aux_now))
                        };
                        let coeff = match rng.gen_range(0..10) {
                            0 => Scalar::ZERO,
                            1..=4 => Scalar::ONE,
                            5 => -Scalar::ONE,
                            _ => Scalar::random(&mut *rng),
                        };
                        (slot, coeff)
                    })
                    .collect::<Vec<_>>()
            };
            let a = lc(rng, 4, true);
            let b = if rng.gen_bool(0.3) {
                vec![]
            } else {
                let inputs_in_b = rng.gen_bool(0.5);
                lc(rng, 2, inputs_in_b)
            };
            let c_extra = lc(rng, 2, true);
            list.push(RandomConstraint { a, b, c_extra });
        }
        // Every witness must appear in some constraint with a non-zero coefficient: an unconstrained variable makes
        // parameter generation fail (bellperson: UnconstrainedVariable), so tie each unused one into a C.
        // Coefficients are summed per linear combination first, as bellpepper merges repeated variables.
        let mut used = vec![false; witnesses];
        for con in &list {
            for lc in [&con.a, &con.b, &con.c_extra] {
                let mut sums = std::collections::BTreeMap::new();
                for (slot, coeff) in lc.iter() {
                    if let Slot::Aux(i) = slot {
                        *sums.entry(*i).or_insert(Scalar::ZERO) += coeff;
                    }
                }
                for (i, sum) in sums {
                    if i < witnesses && !bool::from(sum.is_zero()) {
                        used[i] = true;
                    }
                }
            }
        }
        for (w, _) in used.iter().enumerate().filter(|(_, u)| !**u) {
            if !list.is_empty() {
                let k = w % list.len();
                list[k].c_extra.push((Slot::Aux(w), Scalar::ONE));
            }
        }
        Self {
            input_values,
            witness_values,
            constraints: list,
            with_values: true,
            break_constraint: None,
        }
    }

    /// The public inputs a verifier needs (ONE excluded).
    pub fn public_inputs(&self) -> Vec<Scalar> {
        self.input_values.clone()
    }

    /// The same shape without values (for setup).
    pub fn without_values(&self) -> Self {
        Self {
            with_values: false,
            ..self.clone()
        }
    }
}

impl Circuit<Scalar> for RandomCircuit {
    fn synthesize<CS: ConstraintSystem<Scalar>>(self, cs: &mut CS) -> Result<(), SynthesisError> {
        let known = self.with_values;
        let value = |v: Scalar| {
            if known {
                Ok(v)
            } else {
                Err(SynthesisError::AssignmentMissing)
            }
        };
        let mut inputs = vec![(CS::one(), Scalar::ONE)];
        for (i, v) in self.input_values.iter().enumerate() {
            let var = cs.alloc_input(|| format!("input {i}"), || value(*v))?;
            inputs.push((var, *v));
        }
        let mut aux: Vec<(Variable, Scalar)> = Vec::new();
        for (i, v) in self.witness_values.iter().enumerate() {
            let var = cs.alloc(|| format!("witness {i}"), || value(*v))?;
            aux.push((var, *v));
        }
        for (k, con) in self.constraints.iter().enumerate() {
            let resolve = |terms: &[(Slot, Scalar)]| {
                let mut lc = LinearCombination::zero();
                let mut val = Scalar::ZERO;
                for (slot, coeff) in terms {
                    let (var, v) = match slot {
                        Slot::Input(i) => inputs[*i],
                        Slot::Aux(i) => aux[*i],
                    };
                    lc = lc + (*coeff, var);
                    val += v * coeff;
                }
                (lc, val)
            };
            let (a, va) = resolve(&con.a);
            let (b, vb) = resolve(&con.b);
            let (c_extra, vc) = resolve(&con.c_extra);
            let mut out_value = va * vb - vc;
            if self.break_constraint == Some(k) {
                out_value += Scalar::ONE;
            }
            let mut ns = cs.namespace(|| format!("constraint {k}"));
            let out = ns.alloc(|| "out", || value(out_value))?;
            ns.enforce(|| "a * b = out + extra", |_| a, |_| b, |_| c_extra + out);
            aux.push((out, out_value));
        }
        Ok(())
    }
}

/// Block counts for SHA-256 benches: `BENCH_BLOCKS` (comma-separated) or `default`.
///
/// # Panics
/// On a malformed `BENCH_BLOCKS`, naming it.
pub fn bench_blocks(default: &str) -> Vec<usize> {
    std::env::var("BENCH_BLOCKS")
        .unwrap_or_else(|_| default.into())
        .split(',')
        .map(|s| {
            s.trim()
                .parse()
                .expect("BENCH_BLOCKS: comma-separated block counts")
        })
        .collect()
}

/// log2 sizes for benches: `BENCH_MIN_LOG2..=BENCH_MAX_LOG2`, each defaulting as given.
pub fn bench_log2_range(min: u32, max: u32) -> std::ops::RangeInclusive<u32> {
    let get = |k: &str, d: u32| {
        std::env::var(k)
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(d)
    };
    get("BENCH_MIN_LOG2", min)..=get("BENCH_MAX_LOG2", max)
}

/// Whether a GPU test should run: `Ok(device name)` runs it; an error skips it with a printed reason,
/// unless `CUZK_REQUIRE_GPU=1`, where it fails the test instead.
///
/// # Panics
/// When no GPU is available and `CUZK_REQUIRE_GPU=1`.
pub fn gpu_or_skip<E: std::fmt::Display>(test: &str, available: Result<String, E>) -> bool {
    match available {
        Ok(name) => {
            eprintln!("{test}: running on {name}");
            true
        }
        Err(e) if std::env::var("CUZK_REQUIRE_GPU").is_ok_and(|v| v == "1") => {
            panic!("{test}: CUZK_REQUIRE_GPU=1 but no GPU is usable: {e}")
        }
        Err(e) => {
            // Written to the process's stderr directly, not through eprintln!, so that the test harness does not
            // capture it: the reason for every skip shows in CI's log.
            use std::io::Write;
            let _ = writeln!(
                std::io::stderr(),
                "{test}: SKIPPED: {e} (set CUZK_REQUIRE_GPU=1 to make this a failure)"
            );
            false
        }
    }
}

/// Asserts that a CUDA crate's committed bindings (`src/ffi.rs`) were generated from its current C header: the file
/// records the SHA-256 of the header and the shared status header, which `cargo xtask bindgen` writes.
pub fn assert_ffi_in_sync(crate_root: &str, header: &str) {
    use sha2::{Digest, Sha256};
    let ffi =
        std::fs::read_to_string(format!("{crate_root}/src/ffi.rs")).expect("reading src/ffi.rs");
    let recorded = ffi
        .lines()
        .find_map(|l| l.strip_prefix("// header-sha256: "))
        .expect("src/ffi.rs records the header hash");
    let mut h = Sha256::new();
    h.update(std::fs::read(format!("{crate_root}/{header}")).expect("reading the header"));
    h.update(
        std::fs::read(format!("{crate_root}/../cuda-build/include/cuzk_status.h"))
            .expect("reading the status header"),
    );
    let actual = hex::encode(h.finalize());
    assert_eq!(
        recorded, actual,
        "{header} changed since src/ffi.rs was generated: run `cargo xtask bindgen`"
    );
}

/// Asserts `got[i] == want(i)` for every i of an elementwise operation on pairs (a[i], b[i]), naming `what`, the index
/// and the pair on a mismatch; `got` must have a result for every pair.
///
/// # Panics
/// On the first mismatch, or when the lengths differ.
#[track_caller]
pub fn assert_each_eq<T, U>(
    what: &dyn std::fmt::Debug,
    got: &[T],
    want: impl Fn(usize) -> T,
    a: &[U],
    b: &[U],
) where
    T: PartialEq + std::fmt::Debug,
    U: std::fmt::Debug,
{
    assert_eq!(got.len(), a.len(), "{what:?}: result length");
    for (i, g) in got.iter().enumerate() {
        assert_eq!(
            *g,
            want(i),
            "{what:?} at {i}: a = {:?}, b = {:?}",
            a[i],
            b[i]
        );
    }
}

/// The device arithmetic built for the host: a CUDA crate's test program (`tests/host_emu.cpp`, which includes
/// cuda-build's `host_emu.h`) compiled with the system's C++ compiler, so that CI, without a GPU, runs the same
/// field and curve code the kernels run.
pub mod host_emu {
    use std::io::{Read, Write};
    use std::path::{Path, PathBuf};
    use std::process::{Command, Stdio};

    /// A C++ compiler: `CXX`, else the first of c++, g++ and clang++ that runs.
    fn compiler() -> Option<String> {
        let candidates = std::env::var("CXX")
            .into_iter()
            .chain(["c++", "g++", "clang++"].map(String::from));
        candidates.into_iter().find(|cxx| {
            Command::new(cxx)
                .arg("--version")
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .status()
                .is_ok_and(|s| s.success())
        })
    }

    /// Builds `crate_root/tests/host_emu.cpp` with cuda-build's headers and `crate_root/cuda` on the include path,
    /// `defines` as `-D` flags, into `out_dir/name`. None, after printing why, when no compiler is found, unless
    /// `CUZK_REQUIRE_HOST_CXX=1`.
    ///
    /// # Panics
    /// When the compiler fails, or none is found under `CUZK_REQUIRE_HOST_CXX=1`.
    pub fn build(crate_root: &str, out_dir: &str, name: &str, defines: &[&str]) -> Option<PathBuf> {
        let Some(cxx) = compiler() else {
            let why = "no C++ compiler (CXX, c++, g++ or clang++) found";
            assert!(
                std::env::var("CUZK_REQUIRE_HOST_CXX").as_deref() != Ok("1"),
                "CUZK_REQUIRE_HOST_CXX=1 but {why}"
            );
            let _ = writeln!(
                std::io::stderr(),
                "{name}: SKIPPED host emulation of the device arithmetic: {why} (set CUZK_REQUIRE_HOST_CXX=1 to \
                 make this a failure)"
            );
            return None;
        };
        let root = Path::new(crate_root);
        let out = Path::new(out_dir).join(name);
        let built = Command::new(&cxx)
            .args([
                "-O2",
                "-std=c++17",
                "-frounding-math",
                "-Wno-unknown-pragmas",
            ])
            .args(defines.iter().map(|d| format!("-D{d}")))
            .arg("-I")
            .arg(root.join("../cuda-build/include"))
            .arg("-I")
            .arg(root.join("cuda"))
            .arg("-o")
            .arg(&out)
            .arg(root.join("tests/host_emu.cpp"))
            .output()
            .unwrap_or_else(|e| panic!("running {cxx}: {e}"));
        assert!(
            built.status.success(),
            "{cxx} failed to build {}/tests/host_emu.cpp:\n{}",
            root.display(),
            String::from_utf8_lossy(&built.stderr)
        );
        Some(out)
    }

    /// Runs a built program with `input` on its stdin and returns its stdout.
    ///
    /// # Panics
    /// When the program cannot start or exits with an error.
    pub fn run(exe: &Path, input: &[u8]) -> Vec<u8> {
        let mut child = Command::new(exe)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .unwrap_or_else(|e| panic!("starting {}: {e}", exe.display()));
        // The programs read all their input before they write, so writing first cannot deadlock.
        child
            .stdin
            .take()
            .unwrap()
            .write_all(input)
            .expect("writing to the host emulation");
        let mut output = Vec::new();
        child
            .stdout
            .take()
            .unwrap()
            .read_to_end(&mut output)
            .expect("reading the host emulation");
        let status = child.wait().expect("waiting for the host emulation");
        assert!(status.success(), "{} failed: {status}", exe.display());
        output
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use bellpepper_core::test_cs::TestConstraintSystem;

    #[test]
    fn random_circuit_is_satisfied_unless_broken() {
        let mut rng = seeded_rng(1);
        let circuit = RandomCircuit::new(3, 10, 50, &mut rng);
        let mut cs = TestConstraintSystem::new();
        circuit.clone().synthesize(&mut cs).unwrap();
        assert!(cs.is_satisfied());
        let mut broken = circuit;
        broken.break_constraint = Some(7);
        let mut cs = TestConstraintSystem::new();
        broken.synthesize(&mut cs).unwrap();
        assert_eq!(
            cs.which_is_unsatisfied(),
            Some("constraint 7/a * b = out + extra")
        );
    }

    #[test]
    fn naive_msm_matches_scalar_multiplication() {
        let mut rng = seeded_rng(2);
        let bases = random_g1(3, &mut rng);
        let scalars = [Scalar::ONE, Scalar::ZERO, Scalar::from(5u64)];
        let expected = G1Projective::from(bases[0]) + bases[2] * Scalar::from(5u64);
        assert_eq!(naive_msm_g1(&bases, &scalars), expected);
    }

    #[test]
    fn par_scalars_depend_on_the_seed_alone() {
        // Empty, below one chunk, exactly one, and a ragged last chunk.
        for n in [0, 1, 5, PAR_SCALARS_CHUNK, 2 * PAR_SCALARS_CHUNK + 3] {
            // Each index once, in place.
            let index = par_scalars(n, &mut seeded_rng(3), |_, i| Scalar::from(i as u64));
            assert!(index
                .iter()
                .enumerate()
                .all(|(i, x)| *x == Scalar::from(i as u64)));
            // The same seed gives the same vector, on any thread count, and leaves the caller's RNG in one state.
            let (mut r1, mut r2) = (seeded_rng(4), seeded_rng(4));
            let one = par_scalars(n, &mut r1, |r, _| Scalar::random(r));
            let pool = rayon::ThreadPoolBuilder::new()
                .num_threads(1)
                .build()
                .unwrap();
            let other = pool.install(|| par_scalars(n, &mut r2, |r, _| Scalar::random(r)));
            assert!(one == other, "n = {n}");
            assert_eq!(r1.gen::<u64>(), r2.gen::<u64>());
            // Chunks draw from their own RNGs: no two chunks repeat each other.
            if n > PAR_SCALARS_CHUNK {
                assert!(one[..PAR_SCALARS_CHUNK] != one[PAR_SCALARS_CHUNK..2 * PAR_SCALARS_CHUNK]);
            }
        }
        assert!(random_scalars(64, &mut seeded_rng(5)) != random_scalars(64, &mut seeded_rng(6)));
    }
}
