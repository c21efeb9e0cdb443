//! The device's scalar-field arithmetic (cuda-build's `mont.cuh` and `fr.cuh`, ntt-cuda's `fr_test_ops.cuh`) compiled
//! for the host through cuda-build's `host_emu.h`, and checked against blstrs exactly as the GPU test checks the
//! device: so CI, which has no GPU, still checks every product form's arithmetic on every change. It cannot check
//! the device compiler; `gpu.rs` does that on a GPU machine.
//! The NTT's pass kernel runs there too (host_emu.h's threads, barriers and shared memory), every pass shape and
//! product form against the CPU transform, and H's passes with their pointwise steps (`PassIo`), the twisted pair
//! among them.
//! Skipped with a printed reason where no C++ compiler is found; failing instead when `CUZK_REQUIRE_HOST_CXX=1`.

use std::path::{Path, PathBuf};

use blstrs::Scalar;
use ff::{Field, PrimeField};
use ntt_cuda::gpu::FrOp;
use ntt_cuda::{bit_reverse, root_of_unity, Domain};
use rand::Rng;
use test_utils::{fresh_rng, host_emu, random_scalars};

mod field_ops;

/// The host build of `tests/host_emu.cpp` as `name`, with `defines`.
fn build(name: &str, defines: &[&str]) -> Option<PathBuf> {
    host_emu::build(
        env!("CARGO_MANIFEST_DIR"),
        env!("CARGO_TARGET_TMPDIR"),
        name,
        defines,
    )
}

/// The default build, made once for this binary's tests (which run in parallel and would otherwise write one file
/// at once).
fn default_build() -> Option<PathBuf> {
    static BUILT: std::sync::OnceLock<Option<PathBuf>> = std::sync::OnceLock::new();
    BUILT
        .get_or_init(|| build("ntt_cuda_host_emu", &[]))
        .clone()
}

/// R = 2^256 mod p: a scalar's raw (Montgomery) words are the canonical words of x R.
static MONTGOMERY_R: std::sync::LazyLock<Scalar> =
    std::sync::LazyLock::new(|| Scalar::from(2u64).pow_vartime([256]));

/// Appends x's raw bytes (the device's layout) to `out`.
fn put_raw(out: &mut Vec<u8>, x: &Scalar) {
    out.extend_from_slice(&(x * *MONTGOMERY_R).to_bytes_le());
}

/// The scalars whose raw bytes `output` holds; each must be reduced (the panic names `what` and the index).
fn from_raw(output: &[u8], what: &dyn std::fmt::Debug) -> Vec<Scalar> {
    let r_inv = MONTGOMERY_R.invert().unwrap();
    output
        .chunks_exact(32)
        .enumerate()
        .map(|(i, raw)| {
            Scalar::from_repr_vartime(raw.try_into().unwrap())
                .unwrap_or_else(|| panic!("{what:?} at {i}: not a reduced scalar: {raw:02x?}"))
                * r_inv
        })
        .collect()
}

/// Runs `op` on the host build as `gpu::fr_elementwise` runs it on the device.
fn host_elementwise(exe: &Path, op: FrOp, a: &[Scalar], b: &[Scalar]) -> Vec<Scalar> {
    let mut input = Vec::with_capacity(16 + 64 * a.len());
    input.extend_from_slice(&0i32.to_le_bytes()); // a field request
    input.extend_from_slice(&(op as i32).to_le_bytes());
    input.extend_from_slice(&(a.len() as u64).to_le_bytes());
    a.iter().for_each(|x| put_raw(&mut input, x));
    for y in b {
        // The device takes Pow's exponent as a plain little-endian integer, not a Montgomery field element.
        if op == FrOp::Pow {
            input.extend_from_slice(&y.to_bytes_le());
        } else {
            put_raw(&mut input, y);
        }
    }
    let output = host_emu::run(exe, &input);
    assert_eq!(output.len(), 32 * a.len(), "{op:?}: output length");
    from_raw(&output, &op)
}

#[test]
fn field_arithmetic_matches_blstrs_on_the_host() {
    let Some(exe) = default_build() else {
        return;
    };
    let mut rng = fresh_rng("field_arithmetic_matches_blstrs_on_the_host");
    field_ops::check_field_ops(
        &mut |op, a, b| host_elementwise(&exe, op, a, b),
        4000,
        &mut rng,
    );
}

/// The same with `mont_mul_f64`'s general Montgomery digit (`-DCUZK_F64_DENSE_INV`), the one the base field takes,
/// in place of the scalar field's sparse one.
#[test]
fn field_arithmetic_matches_blstrs_on_the_host_with_the_dense_digit() {
    let Some(exe) = build("ntt_cuda_host_emu_dense", &["CUZK_F64_DENSE_INV"]) else {
        return;
    };
    let mut rng = fresh_rng("field_arithmetic_matches_blstrs_on_the_host_with_the_dense_digit");
    field_ops::check_field_ops(
        &mut |op, a, b| host_elementwise(&exe, op, a, b),
        4000,
        &mut rng,
    );
}

/// A product form of the passes, by MulForm's number in `ntt_pass.cuh`.
#[derive(Clone, Copy, Debug)]
enum Form {
    Chains = 0,
    Unsaturated = 2,
    Float64 = 3,
    Hybrid = 4,
}

/// One run of passes on the host: direction, form, layout, threads a block, and the stages of each pass in order.
#[derive(Clone, Copy, Debug)]
struct Passes<'a> {
    dit: bool,
    form: Form,
    swizzled: bool,
    threads: i32,
    split: &'a [u32],
}

/// Runs `passes` over `data` (2^log_n scalars) with the twiddles w^i, i < n/2, of `omega`.
fn host_passes(exe: &Path, passes: Passes<'_>, data: &[Scalar], omega: Scalar) -> Vec<Scalar> {
    let n = data.len();
    let log_n = n.trailing_zeros();
    let mut input = Vec::new();
    input.extend_from_slice(&1i32.to_le_bytes()); // a passes request
    for v in [
        passes.dit as i32,
        passes.form as i32,
        passes.swizzled as i32,
        passes.threads,
    ] {
        input.extend_from_slice(&v.to_le_bytes());
    }
    input.extend_from_slice(&log_n.to_le_bytes());
    input.extend_from_slice(&(passes.split.len() as u32).to_le_bytes());
    passes
        .split
        .iter()
        .for_each(|k| input.extend_from_slice(&k.to_le_bytes()));
    data.iter().for_each(|x| put_raw(&mut input, x));
    let mut w = Scalar::ONE;
    for _ in 0..(n / 2).max(1) {
        put_raw(&mut input, &w);
        w *= omega;
    }
    let output = host_emu::run(exe, &input);
    assert_eq!(output.len(), 32 * n, "{passes:?}: output length");
    from_raw(&output, &passes)
}

/// The passes' transform against the CPU's, both directions: DIF takes natural order to bit-reversed, DIT
/// bit-reversed to natural, with the forward (omega) or inverse (omega^-1, unscaled) twiddles.
fn check_passes(exe: &Path, passes: Passes<'_>, log_n: u32, rng: &mut impl Rng) {
    let cpu = Domain::new(log_n).unwrap();
    let n = cpu.size();
    let data = random_scalars(n, rng);
    let omega = root_of_unity(log_n).unwrap();
    for inverse in [false, true] {
        let w = if inverse {
            omega.invert().unwrap()
        } else {
            omega
        };
        let mut expect = data.clone();
        if inverse {
            cpu.ifft(&mut expect).unwrap();
            let n_scalar = Scalar::from(n as u64);
            expect.iter_mut().for_each(|x| *x *= n_scalar);
        } else {
            cpu.fft(&mut expect).unwrap();
        }
        let mut input = data.clone();
        if passes.dit {
            bit_reverse(&mut input);
        } else {
            bit_reverse(&mut expect);
        }
        let got = host_passes(exe, passes, &input, w);
        assert_eq!(got, expect, "{passes:?}, 2^{log_n}, inverse {inverse}");
    }
}

/// The head of a request to `tests/host_emu.cpp` of kind 2, 3 or 4: the kind, threads a block, log_n (the split's
/// sum), the pass count and each pass's stages, then `extra` (uint32 each).
fn split_request(kind: i32, threads: i32, split: &[u32], extra: &[u32]) -> Vec<u8> {
    let mut input = Vec::new();
    input.extend_from_slice(&kind.to_le_bytes());
    input.extend_from_slice(&threads.to_le_bytes());
    let log_n: u32 = split.iter().sum();
    for v in [log_n, split.len() as u32]
        .into_iter()
        .chain(split.iter().copied())
        .chain(extra.iter().copied())
    {
        input.extend_from_slice(&v.to_le_bytes());
    }
    input
}

/// Splits for the natural-order and halving passes: one pass (2^1, 2^5, 2^10), two (the last pass's block holding
/// 1, 16 or 64 groups), three (one in the scratch between) and six.
const NATURAL_SPLITS: [&[u32]; 8] = [
    &[1],
    &[5],
    &[10],
    &[7, 6],
    &[10, 4],
    &[1, 3, 10],
    &[4, 4, 4],
    &[1, 1, 1, 1, 1, 1],
];

/// How the last pass of a natural-order transform scales its stores (`host_emu.cpp`'s request 3).
#[derive(Clone, Copy, Debug, PartialEq)]
enum Scaling {
    /// Not at all: the forward transform.
    None = 0,
    /// By lo[i & mask] hi[i >> COSET_LO_BITS] (`PASS_IO_SCALE`: the inverse transform on a coset).
    Tables = 1,
    /// By 2^-log_n (`PASS_IO_HALVE`: the inverse transform's n^-1).
    Halve = 2,
    /// By the tables' factor, partly from the last pass's twiddles (`PASS_IO_UNTWIST`, from 3 stages): the tables are
    /// then a random g's powers, lo[i] = g^i and hi[i] = t g^(i 2^COSET_LO_BITS) for a random t, and g goes with the
    /// request.
    Untwisted = 3,
}

/// A transform from natural to natural order as `run_passes` runs it with a scratch vector (DIF, f64, swizzled; the
/// first pass stores into the scratch, the last at the bit reversals into the input's buffer), against the CPU:
/// forward, or inverse with the last pass's stores scaled as `ntt.cu`'s inverse transform scales them. With tables,
/// coefficient i of the unscaled inverse times lo[i & mask] hi[i >> COSET_LO_BITS] (random tables, so every entry read
/// is checked, not only n^-1 and a coset's powers); halved, the inverse transform itself.
fn check_natural_passes(
    exe: &Path,
    split: &[u32],
    threads: i32,
    scaling: Scaling,
    rng: &mut impl Rng,
) {
    let log_n: u32 = split.iter().sum();
    let cpu = Domain::new(log_n).unwrap();
    let n = cpu.size();
    let data = random_scalars(n, rng);
    let hi_len = (n >> COSET_LO_BITS).max(1);
    let g = Scalar::random(&mut *rng);
    let (lo, hi) = if scaling == Scaling::Untwisted {
        coset_powers(g, Scalar::random(&mut *rng), hi_len)
    } else {
        (
            random_scalars(1 << COSET_LO_BITS, rng),
            random_scalars(hi_len, rng),
        )
    };
    let mut expect = data.clone();
    let mut omega = root_of_unity(log_n).unwrap();
    if scaling == Scaling::None {
        cpu.fft(&mut expect).unwrap();
    } else {
        omega = omega.invert().unwrap();
        cpu.ifft(&mut expect).unwrap();
    }
    if matches!(scaling, Scaling::Tables | Scaling::Untwisted) {
        let n_scalar = Scalar::from(n as u64);
        let mask = (1usize << COSET_LO_BITS) - 1;
        for (i, x) in expect.iter_mut().enumerate() {
            *x *= n_scalar * lo[i & mask] * hi[i >> COSET_LO_BITS];
        }
    }
    let mut input = split_request(3, threads, split, &[scaling as u32]); // a natural-order passes request
    data.iter().for_each(|x| put_raw(&mut input, x));
    powers(omega, n / 2).for_each(|x| put_raw(&mut input, &x));
    if matches!(scaling, Scaling::Tables | Scaling::Untwisted) {
        lo.iter().chain(&hi).for_each(|x| put_raw(&mut input, x));
    }
    if scaling == Scaling::Untwisted {
        put_raw(&mut input, &g);
    }
    let what = format!("natural order, split {split:?}, {threads} threads, scaling {scaling:?}");
    check_h_output(exe, &input, &expect, &what);
}

#[test]
fn natural_order_passes_match_cpu_on_the_host() {
    let Some(exe) = default_build() else {
        return;
    };
    let mut rng = fresh_rng("natural_order_passes_match_cpu_on_the_host");
    // NATURAL_SPLITS (the lone pass in place) with 4 threads, the kernel's 256 at 2^10 and 2^12; forward, and inverse
    // with each of the last pass's scalings (hi's index past 0 from 2^13; 2^-k for k = 1, 5, 10, 13, 14, 12, 6).
    for scaling in [Scaling::None, Scaling::Tables, Scaling::Halve] {
        for split in NATURAL_SPLITS {
            check_natural_passes(&exe, split, 4, scaling, &mut rng);
        }
        check_natural_passes(&exe, &[10], 256, scaling, &mut rng);
        check_natural_passes(&exe, &[6, 6], 256, scaling, &mut rng);
    }
    // The untwisted scaling wherever the last pass has 3 stages or more, and a last pass of 3 (128 groups a block).
    for split in NATURAL_SPLITS.into_iter().chain([&[9, 3][..]]) {
        if split.last().is_some_and(|&k| k >= 3) {
            check_natural_passes(&exe, split, 4, Scaling::Untwisted, &mut rng);
        }
    }
    check_natural_passes(&exe, &[6, 6], 256, Scaling::Untwisted, &mut rng);
}

/// The inverse transform from bit-reversed to natural order off a coset as `ntt.cu` runs it: DIT passes (f64,
/// swizzled) in place, the last one multiplying each scalar by 2^-log_n as it stores it (`PASS_IO_HALVE`), against the
/// CPU's inverse transform.
fn check_halving_dit_passes(exe: &Path, split: &[u32], threads: i32, rng: &mut impl Rng) {
    let log_n: u32 = split.iter().sum();
    let cpu = Domain::new(log_n).unwrap();
    let data = random_scalars(cpu.size(), rng);
    let mut expect = data.clone();
    cpu.ifft(&mut expect).unwrap();
    let mut reversed = data;
    bit_reverse(&mut reversed);
    let mut input = split_request(4, threads, split, &[]); // a halving DIT passes request
    reversed.iter().for_each(|x| put_raw(&mut input, x));
    let omega_inv = root_of_unity(log_n).unwrap().invert().unwrap();
    powers(omega_inv, reversed.len() / 2).for_each(|x| put_raw(&mut input, &x));
    let what = format!("halving DIT passes, split {split:?}, {threads} threads");
    check_h_output(exe, &input, &expect, &what);
}

#[test]
fn halving_dit_passes_match_cpu_on_the_host() {
    let Some(exe) = default_build() else {
        return;
    };
    let mut rng = fresh_rng("halving_dit_passes_match_cpu_on_the_host");
    // NATURAL_SPLITS with 4 threads a block, and the kernel's 256 at 2^10 and 2^12.
    for split in NATURAL_SPLITS {
        check_halving_dit_passes(&exe, split, 4, &mut rng);
    }
    check_halving_dit_passes(&exe, &[10], 256, &mut rng);
    check_halving_dit_passes(&exe, &[6, 6], 256, &mut rng);
}

/// ntt.cu's split of a transform into passes: the fewest, as even as they allow (no size here takes a measured split).
fn even_split(log_n: u32) -> Vec<u32> {
    let passes = log_n.div_ceil(10);
    (0..passes)
        .map(|i| log_n / passes + u32::from(i < log_n % passes))
        .collect()
}

#[test]
fn ntt_passes_match_cpu_on_the_host() {
    let Some(exe) = default_build() else {
        return;
    };
    let mut rng = fresh_rng("ntt_passes_match_cpu_on_the_host");
    // The default form and layout at every size to 2^12 and at 2^14 (two passes), in both directions. A host thread
    // stands for each CUDA thread and every barrier wakes them all, so most runs take 4 threads a block (each thread
    // then takes several quads a round, as the kernel's loops allow); the kernel's own 256 run at 2^10 and 2^12.
    for log_n in (1..=12).chain([14]) {
        let split = even_split(log_n);
        for dit in [false, true] {
            let threads: &[i32] = if log_n == 10 || log_n == 12 {
                &[4, 256]
            } else {
                &[4]
            };
            for &threads in threads {
                let passes = Passes {
                    dit,
                    form: Form::Float64,
                    swizzled: true,
                    threads,
                    split: &split,
                };
                check_passes(&exe, passes, log_n, &mut rng);
            }
        }
    }
    // Uneven splits (at most 2^14, as the emulation takes about 0.1 s a transform there): passes of every length
    // 1..10, an odd pass first or last, groups packed low and high.
    let splits: [&[u32]; 7] = [
        &[1, 3, 10],
        &[10, 4],
        &[9, 5],
        &[2, 7, 5],
        &[6, 8],
        &[3, 5],
        &[1, 1, 1, 1, 1, 1],
    ];
    for split in splits {
        let log_n: u32 = split.iter().sum();
        for dit in [false, true] {
            let passes = Passes {
                dit,
                form: Form::Float64,
                swizzled: true,
                threads: 4,
                split,
            };
            check_passes(&exe, passes, log_n, &mut rng);
        }
    }
    // The other product forms (not lazy) and the interleaved layout.
    for (form, swizzled) in [
        (Form::Unsaturated, true),
        (Form::Chains, true),
        (Form::Hybrid, true),
        (Form::Float64, false),
    ] {
        for log_n in [5, 11] {
            for dit in [false, true] {
                let split = even_split(log_n);
                let passes = Passes {
                    dit,
                    form,
                    swizzled,
                    threads: 4,
                    split: &split,
                };
                check_passes(&exe, passes, log_n, &mut rng);
            }
        }
    }
}

/// `ntt_pass.cuh`'s `PassIo` steps, by their numbers there.
const IO_MUL: u32 = 1;
const IO_SCALE: u32 = 2;
const IO_SUB: u32 = 4;
const IO_TWIST: u32 = 8;
const IO_BITREV: u32 = 16;
const IO_UNTWIST: u32 = 128;
/// Its coset tables' split: lo holds 2^COSET_LO_BITS entries.
const COSET_LO_BITS: u32 = 12;

/// H's DIF passes (f64, swizzled) with the steps `first_io` on the first pass's loads and `last_io` on the last
/// pass's stores, as `cuzk_h_poly` runs them, against the CPU: the product with `mul` before the transform, the
/// scaling by lo[i & mask] hi[i >> COSET_LO_BITS] (i the bit reversal of the output index) and the subtraction of
/// sub times hi[0] after it; with `IO_BITREV` the result in natural order, in mul's buffer (as `cuzk_h_poly` leaves h
/// in a's). The tables are random, so every entry read is checked, not only a coset's powers; with `IO_UNTWIST`, which
/// folds part of the scaling into the last pass's twiddles, they are the powers of a random g, lo[i] = g^i and hi[i] =
/// t g^(i 2^COSET_LO_BITS) for a random t, and g goes with the request.
fn check_h_passes(exe: &Path, split: &[u32], first_io: u32, last_io: u32, rng: &mut impl Rng) {
    let log_n: u32 = split.iter().sum();
    let n = 1usize << log_n;
    let data = random_scalars(n, rng);
    let mul = random_scalars(n, rng);
    let sub = random_scalars(n, rng);
    let hi_len = (n >> COSET_LO_BITS).max(1);
    let g = Scalar::random(&mut *rng);
    let (lo, hi) = if last_io & IO_UNTWIST != 0 {
        coset_powers(g, Scalar::random(&mut *rng), hi_len)
    } else {
        (
            random_scalars(1 << COSET_LO_BITS, rng),
            random_scalars(hi_len, rng),
        )
    };
    let omega = root_of_unity(log_n).unwrap().invert().unwrap();

    let mut expect = data.clone();
    if first_io & IO_MUL != 0 {
        expect.iter_mut().zip(&mul).for_each(|(x, m)| *x *= m);
    }
    let cpu = Domain::new(log_n).unwrap();
    cpu.ifft(&mut expect).unwrap();
    let n_scalar = Scalar::from(n as u64);
    expect.iter_mut().for_each(|x| *x *= n_scalar);
    bit_reverse(&mut expect);
    if last_io & IO_SCALE != 0 {
        let mask = (1usize << COSET_LO_BITS) - 1;
        for (j, x) in expect.iter_mut().enumerate() {
            let i = j.reverse_bits() >> (usize::BITS - log_n);
            *x *= lo[i & mask] * hi[i >> COSET_LO_BITS];
            if last_io & IO_SUB != 0 {
                *x -= sub[j] * hi[0];
            }
        }
    }
    if last_io & IO_BITREV != 0 {
        bit_reverse(&mut expect);
    }

    let mut input = h_request(
        split,
        [first_io, last_io],
        &data,
        omega,
        [&mul, &sub, &lo, &hi],
    );
    if last_io & IO_UNTWIST != 0 {
        put_raw(&mut input, &g);
    }
    check_h_output(
        exe,
        &input,
        &expect,
        &format!("split {split:?}, steps {first_io}/{last_io}"),
    );
}

/// The coset tables of g and t: lo[i] = g^i (2^COSET_LO_BITS of them), hi[i] = t g^(i 2^COSET_LO_BITS) (hi_len).
fn coset_powers(g: Scalar, t: Scalar, hi_len: usize) -> (Vec<Scalar>, Vec<Scalar>) {
    let step = g.pow_vartime([1u64 << COSET_LO_BITS]);
    let lo = powers(g, 1 << COSET_LO_BITS).collect();
    (lo, powers(step, hi_len).map(|x| x * t).collect())
}

/// w^0 .. w^(count - 1).
fn powers(w: Scalar, count: usize) -> impl Iterator<Item = Scalar> {
    (0..count).scan(Scalar::ONE, move |p, _| Some(std::mem::replace(p, *p * w)))
}

/// An H passes request to `tests/host_emu.cpp` (4 threads a block): the split, the first pass's load steps and the
/// last pass's store steps (`io`), the scalars, the twiddles of `omega` (n/2), then mul, sub, lo and hi (`tables`).
fn h_request(
    split: &[u32],
    io: [u32; 2],
    data: &[Scalar],
    omega: Scalar,
    tables: [&[Scalar]; 4],
) -> Vec<u8> {
    let mut input = split_request(2, 4, split, &io); // an H passes request, 4 threads a block
    data.iter().for_each(|x| put_raw(&mut input, x));
    powers(omega, data.len() / 2).for_each(|x| put_raw(&mut input, &x));
    for v in tables {
        v.iter().for_each(|x| put_raw(&mut input, x));
    }
    input
}

/// Runs an H passes request and checks its scalars against `expect`.
fn check_h_output(exe: &Path, input: &[u8], expect: &[Scalar], what: &str) {
    let output = host_emu::run(exe, input);
    assert_eq!(output.len(), 32 * expect.len(), "{what}: output length");
    assert_eq!(from_raw(&output, &what), expect, "{what}");
}

#[test]
fn h_passes_match_cpu_on_the_host() {
    let Some(exe) = default_build() else {
        return;
    };
    let mut rng = fresh_rng("h_passes_match_cpu_on_the_host");
    // a's and b's inverse transforms end scaled; the product's starts with a b and ends scaled, minus C, in place
    // or in natural order into a's buffer. One pass (both steps in it) at 2^1..2^10, two and three passes above, hi's
    // index past 0 from 2^13; the last pass's block holds one group ([1, 3, 10]), 16 ([7, 6]) or 64 ([10, 4]).
    let splits: [&[u32]; 6] = [&[1], &[5], &[10], &[7, 6], &[1, 3, 10], &[10, 4]];
    for split in splits {
        check_h_passes(&exe, split, 0, IO_SCALE, &mut rng);
        check_h_passes(&exe, split, IO_MUL, IO_SCALE | IO_SUB, &mut rng);
        check_h_passes(&exe, split, IO_MUL, IO_SCALE | IO_SUB | IO_BITREV, &mut rng);
    }
}

/// The product's last pass with its scaling partly in its twiddles (`PASS_IO_UNTWIST`, from 3 stages), in place and
/// in natural order: one pass of 3 (a lone radix-2 stage first, then the last round, one stage twisted), 4 and 10
/// stages; last passes of 3 (one stage twisted, 128 groups a block), 4 and 9 stages (odd: the radix-2 stage first);
/// [3, 3, 3] and [5, 8], whose factors' groups come from two and one earlier passes' stages.
#[test]
fn h_untwisted_last_pass_matches_cpu_on_the_host() {
    let Some(exe) = default_build() else {
        return;
    };
    let mut rng = fresh_rng("h_untwisted_last_pass_matches_cpu_on_the_host");
    let splits: [&[u32]; 8] = [
        &[3],
        &[4],
        &[10],
        &[9, 3],
        &[6, 4],
        &[4, 9],
        &[3, 3, 3],
        &[5, 8],
    ];
    for split in splits {
        check_h_passes(
            &exe,
            split,
            IO_MUL,
            IO_SCALE | IO_SUB | IO_UNTWIST,
            &mut rng,
        );
        check_h_passes(
            &exe,
            split,
            IO_MUL,
            IO_SCALE | IO_SUB | IO_BITREV | IO_UNTWIST,
            &mut rng,
        );
    }
}

/// H's twisted pair (`PASS_IO_TWIST`) against the CPU: the inverse transform's DIF passes (`split`), whose last pass
/// goes on to the forward coset transform's first DIT pass (as many stages, twiddles from `twist_table_kernel`), then
/// the forward transform's other passes (the split's others, reversed). Expected: the CPU's inverse transform (times
/// n), coefficient i = k 2^L + c (L = log_n - the last pass's stages) times lo[c & mask] hi[c >> COSET_LO_BITS]
/// (random tables, as in `check_h_passes`) and (g^(2^L))^k (g random), then the CPU's forward transform.
fn check_h_twist(exe: &Path, split: &[u32], rng: &mut impl Rng) {
    let log_n: u32 = split.iter().sum();
    let n = 1usize << log_n;
    let data = random_scalars(n, rng);
    let lo = random_scalars(1 << COSET_LO_BITS, rng);
    let hi = random_scalars((n >> COSET_LO_BITS).max(1), rng);
    let g = Scalar::random(&mut *rng);
    let k_last = *split.last().unwrap();
    let rest: Vec<u32> = split[..split.len() - 1].iter().rev().copied().collect();
    let omega = root_of_unity(log_n).unwrap();

    let cpu = Domain::new(log_n).unwrap();
    let mut expect = data.clone();
    cpu.ifft(&mut expect).unwrap();
    let l_bits = log_n - k_last;
    let g_step = (0..l_bits).fold(g, |x, _| x.square());
    let mask = (1usize << COSET_LO_BITS) - 1;
    let n_scalar = Scalar::from(n as u64);
    let mut g_k = Scalar::ONE;
    for (i, x) in expect.iter_mut().enumerate() {
        let c = i & ((1 << l_bits) - 1);
        if c == 0 && i > 0 {
            g_k *= g_step;
        }
        *x *= n_scalar * lo[c & mask] * hi[c >> COSET_LO_BITS] * g_k;
    }
    cpu.fft(&mut expect).unwrap();

    // mul and sub are unread by this pass; then g, the forward twiddles, the passes after the twisted one.
    let mut input = h_request(
        split,
        [0, IO_TWIST],
        &data,
        omega.invert().unwrap(),
        [&data, &data, &lo, &hi],
    );
    put_raw(&mut input, &g);
    powers(omega, n / 2).for_each(|x| put_raw(&mut input, &x));
    for v in [rest.len() as u32].into_iter().chain(rest.iter().copied()) {
        input.extend_from_slice(&v.to_le_bytes());
    }
    check_h_output(exe, &input, &expect, &format!("twisted split {split:?}"));
}

#[test]
fn h_twisted_pair_matches_cpu_on_the_host() {
    let Some(exe) = default_build() else {
        return;
    };
    let mut rng = fresh_rng("h_twisted_pair_matches_cpu_on_the_host");
    // One pass (the whole inverse and forward transforms in it) at 2^1..2^10; a twisted pass of 1 (radix 2 only),
    // 3 and 5 (a radix-2 round after radix 4), 4 and 10 stages after others; the groups' coset index past the lo
    // table (hi's index past 0) with [10, 3, 1].
    let splits: [&[u32]; 9] = [
        &[1],
        &[2],
        &[5],
        &[10],
        &[7, 6],
        &[1, 3, 10],
        &[10, 4],
        &[7, 4, 3],
        &[10, 3, 1],
    ];
    for split in splits {
        check_h_twist(&exe, split, &mut rng);
    }
}
