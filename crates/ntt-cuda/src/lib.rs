#![doc = include_str!("../README.md")]
#![deny(unsafe_code)]

pub mod gpu;

#[cfg(has_cuda)]
#[allow(missing_debug_implementations)]
mod ffi;

use blstrs::Scalar;
use ff::{Field, PrimeField};
use rayon::prelude::*;
use std::borrow::Cow;

/// Errors of this crate.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum Error {
    /// No GPU to run on: the build has no kernels, no device is present, or `CUZK_NO_GPU=1`.
    #[error("no GPU: {0}")]
    NoDevice(String),
    /// A CUDA call failed.
    #[error("CUDA error {code}: {message}")]
    Cuda {
        /// The CUDA error code.
        code: i32,
        /// What failed, from the device side.
        message: String,
    },
    /// The field has roots of unity of order up to 2^32 only.
    #[error("an NTT domain of 2^{log_n} points exceeds the field's 2^{max} roots of unity")]
    DomainTooLarge {
        /// Requested log2 size.
        log_n: u32,
        /// Largest supported log2 size.
        max: u32,
    },
    /// A sparse matrix or its coefficient table is malformed (named: the row or term, the bound).
    #[error("invalid sparse matrix: {0}")]
    InvalidMatrix(String),
    /// A slice does not have the domain's size.
    #[error("{what} has {got} elements but the domain has {expected}")]
    LengthMismatch {
        /// Which argument.
        what: &'static str,
        /// Its length.
        got: usize,
        /// The domain size.
        expected: usize,
    },
}

/// Result alias of this crate.
pub type Result<T> = std::result::Result<T, Error>;

/// Below this many butterflies a stage of the reference transform ([`Domain::fft_reference`]) runs on one thread.
const PAR_THRESHOLD: usize = 1 << 12;

/// The fast transforms ([`dif`], [`dit`]) take a block of at most 2^LEAF_LOG2 scalars through all its remaining
/// stages at once, on one thread: 128 KiB, which stays in a core's L2 cache with its twiddles. Larger blocks take
/// their stages above the leaves in column passes ([`column_pass`]), a few stages a trip through memory.
const LEAF_LOG2: u32 = 12;

/// Scalars a task takes at least in a parallel gather ([`strided_twiddles`]).
const PAR_CHUNK: usize = 1 << 10;

/// Below this many scalars a bit reversal swaps in place on one thread; above, it goes by tiles across threads.
const TILES_MIN: usize = 1 << 16;

/// A radix-2 evaluation domain of size n = 2^log_n: the powers of a primitive n-th root of unity ω.
#[derive(Clone, Debug)]
pub struct Domain {
    log_n: u32,
    omega: Scalar,
    n_inv: Scalar,
    /// ω^i for i < n/2.
    twiddles: Vec<Scalar>,
    /// ω^-i for i < n/2.
    twiddles_inv: Vec<Scalar>,
}

impl Domain {
    /// The domain of 2^log_n points.
    ///
    /// # Errors
    /// [`Error::DomainTooLarge`] above 2^32.
    pub fn new(log_n: u32) -> Result<Self> {
        let omega = root_of_unity(log_n)?;
        let omega_inv = omega.invert().expect("a root of unity is non-zero");
        let n_inv = Scalar::from(1u64 << log_n)
            .invert()
            .expect("n < p is non-zero");
        let half = (1usize << log_n) / 2;
        Ok(Self {
            log_n,
            omega,
            n_inv,
            twiddles: powers(omega, half),
            twiddles_inv: powers(omega_inv, half),
        })
    }

    /// The smallest domain with at least `len` points.
    ///
    /// # Errors
    /// [`Error::DomainTooLarge`] above 2^32.
    pub fn for_len(len: usize) -> Result<Self> {
        Self::new(log_size_for(len)?)
    }

    /// Number of points.
    pub fn size(&self) -> usize {
        1 << self.log_n
    }

    /// log2 of the number of points.
    pub fn log_size(&self) -> u32 {
        self.log_n
    }

    /// The generator ω.
    pub fn omega(&self) -> Scalar {
        self.omega
    }

    fn check(&self, what: &'static str, v: &[Scalar]) -> Result<()> {
        if v.len() == self.size() {
            Ok(())
        } else {
            Err(Error::LengthMismatch {
                what,
                got: v.len(),
                expected: self.size(),
            })
        }
    }

    /// Coefficients to evaluations on ⟨ω⟩, natural order in and out.
    ///
    /// # Errors
    /// [`Error::LengthMismatch`] if `v` is not of the domain's size.
    pub fn fft(&self, v: &mut [Scalar]) -> Result<()> {
        self.check("input", v)?;
        dif(v, &self.twiddles);
        bit_reverse_scaled(v, None);
        Ok(())
    }

    /// Evaluations on ⟨ω⟩ to coefficients (scaled by 1/n).
    ///
    /// # Errors
    /// [`Error::LengthMismatch`] if `v` is not of the domain's size.
    pub fn ifft(&self, v: &mut [Scalar]) -> Result<()> {
        self.check("input", v)?;
        dif(v, &self.twiddles_inv);
        bit_reverse_scaled(v, Some(self.n_inv));
        Ok(())
    }

    /// [`Domain::fft`] by the simple transform the fast one is tested against: a serial bit reversal, then
    /// radix-2 decimation in time one stage at a time over the whole vector.
    ///
    /// # Errors
    /// [`Error::LengthMismatch`] if `v` is not of the domain's size.
    pub fn fft_reference(&self, v: &mut [Scalar]) -> Result<()> {
        self.check("input", v)?;
        radix2(v, &self.twiddles);
        Ok(())
    }

    /// [`Domain::ifft`] by the simple transform of [`Domain::fft_reference`], then the scaling by 1/n.
    ///
    /// # Errors
    /// [`Error::LengthMismatch`] if `v` is not of the domain's size.
    pub fn ifft_reference(&self, v: &mut [Scalar]) -> Result<()> {
        self.check("input", v)?;
        radix2(v, &self.twiddles_inv);
        scale(v, self.n_inv);
        Ok(())
    }

    /// Coefficients to evaluations on the coset g⟨ω⟩.
    ///
    /// # Errors
    /// [`Error::LengthMismatch`] if `v` is not of the domain's size.
    pub fn coset_fft(&self, v: &mut [Scalar], g: Scalar) -> Result<()> {
        self.check("input", v)?;
        distribute_powers(v, g);
        self.fft(v)
    }

    /// Evaluations on the coset g⟨ω⟩ to coefficients.
    ///
    /// # Errors
    /// [`Error::LengthMismatch`] if `v` is not of the domain's size.
    pub fn icoset_fft(&self, v: &mut [Scalar], g: Scalar) -> Result<()> {
        self.ifft(v)?;
        distribute_powers(v, g.invert().expect("coset generator must be non-zero"));
        Ok(())
    }

    /// The vanishing polynomial X^n - 1 at `x`.
    pub fn z_at(&self, x: Scalar) -> Scalar {
        x.pow_vartime([self.size() as u64]) - Scalar::ONE
    }
}

/// log2 of the smallest domain with at least `len` points, without building it (a [`Domain`] computes its
/// twiddles: hundreds of milliseconds at 2^24).
///
/// # Errors
/// [`Error::DomainTooLarge`] above 2^32.
pub fn log_size_for(len: usize) -> Result<u32> {
    let log_n = len.max(1).next_power_of_two().trailing_zeros();
    if log_n > Scalar::S {
        return Err(Error::DomainTooLarge {
            log_n,
            max: Scalar::S,
        });
    }
    Ok(log_n)
}

/// A primitive 2^log_n-th root of unity (the generator of the domain of 2^log_n points).
///
/// # Errors
/// [`Error::DomainTooLarge`] above 2^32.
pub fn root_of_unity(log_n: u32) -> Result<Scalar> {
    if log_n > Scalar::S {
        return Err(Error::DomainTooLarge {
            log_n,
            max: Scalar::S,
        });
    }
    let mut omega = Scalar::ROOT_OF_UNITY;
    for _ in log_n..Scalar::S {
        omega = omega.square();
    }
    Ok(omega)
}

/// `[1, x, x^2, ..., x^(n-1)]`, computed in parallel chunks.
pub fn powers(x: Scalar, n: usize) -> Vec<Scalar> {
    let mut out = vec![Scalar::ZERO; n];
    let chunk = (n / rayon::current_num_threads().max(1)).clamp(1024, 1 << 16);
    out.par_chunks_mut(chunk).enumerate().for_each(|(k, part)| {
        let mut cur = x.pow_vartime([(k * chunk) as u64]);
        for p in part {
            *p = cur;
            cur *= x;
        }
    });
    out
}

/// Multiplies element i by g^i.
pub fn distribute_powers(v: &mut [Scalar], g: Scalar) {
    let chunk = (v.len() / rayon::current_num_threads().max(1)).clamp(1024, 1 << 16);
    v.par_chunks_mut(chunk).enumerate().for_each(|(k, part)| {
        let mut cur = g.pow_vartime([(k * chunk) as u64]);
        for p in part {
            *p *= cur;
            cur *= g;
        }
    });
}

fn scale(v: &mut [Scalar], s: Scalar) {
    v.par_iter_mut().with_min_len(1024).for_each(|x| *x *= s);
}

/// Permutes `v` (of power-of-two length) into bit-reversed order; its own inverse.
pub fn bit_reverse(v: &mut [Scalar]) {
    let n = v.len();
    let log_n = n.trailing_zeros();
    if log_n == 0 {
        return;
    }
    for i in 0..n {
        let j = i.reverse_bits() >> (usize::BITS - log_n);
        if i < j {
            v.swap(i, j);
        }
    }
}

/// In-place iterative Cooley-Tukey (decimation in time) with `tw[i] = ω^i`, natural order in and out.
fn radix2(v: &mut [Scalar], tw: &[Scalar]) {
    let n = v.len();
    if n <= 1 {
        return;
    }
    bit_reverse(v);
    let mut half = 1;
    while half < n {
        let stride = n / (2 * half);
        let butterfly = |block: &mut [Scalar]| {
            let (lo, hi) = block.split_at_mut(half);
            for j in 0..half {
                let t = hi[j] * tw[j * stride];
                hi[j] = lo[j] - t;
                lo[j] += t;
            }
        };
        if n / 2 < PAR_THRESHOLD {
            v.chunks_mut(2 * half).for_each(butterfly);
        } else if stride >= rayon::current_num_threads() {
            v.par_chunks_mut(2 * half).for_each(butterfly);
        } else {
            // Few large blocks: split each block's butterflies across threads.
            for block in v.chunks_mut(2 * half) {
                let (lo, hi) = block.split_at_mut(half);
                lo.par_chunks_mut(1024)
                    .zip(hi.par_chunks_mut(1024))
                    .enumerate()
                    .for_each(|(k, (l, h))| {
                        for j in 0..l.len() {
                            let t = h[j] * tw[(k * 1024 + j) * stride];
                            h[j] = l[j] - t;
                            l[j] += t;
                        }
                    });
            }
        }
        half *= 2;
    }
}

/// The butterflies of [`dif`] and [`dit`], on the scalars in place: blst writes a result word by word, and a copy
/// of a fresh 32-byte result (`x = u + w`) reads it back in wider loads that wait for those stores to retire, which
/// made the butterflies half as slow again (perf, 2026-12-07).
/// DIF: (x, y) -> (x + y, (x - y) w).
#[inline(always)]
fn dif_butterfly(x: &mut Scalar, y: &mut Scalar, w: &Scalar) {
    let v = *y;
    *y = *x;
    *y -= &v;
    *y *= w;
    *x += &v;
}

/// DIT: (x, y) -> (x + y w, x - y w).
#[inline(always)]
fn dit_butterfly(x: &mut Scalar, y: &mut Scalar, w: &Scalar) {
    *y *= w;
    let t = *y;
    *y = *x;
    *y -= &t;
    *x += &t;
}

/// Either one with the twiddle 1: (x, y) -> (x + y, x - y).
#[inline(always)]
fn unit_butterfly(x: &mut Scalar, y: &mut Scalar) {
    let v = *y;
    *y = *x;
    *y -= &v;
    *x += &v;
}

/// Decimation in frequency (Gentleman-Sande): natural order in, bit-reversed order out, unscaled, with the domain's
/// twiddles `tw[i] = ω^i` (i < v.len() / 2). A block larger than a leaf takes its first stages in a column pass,
/// then its rows at once ([`dif_block`]).
fn dif(v: &mut [Scalar], tw: &[Scalar]) {
    let levels = Levels::new(tw, v.len());
    dif_block(v, &levels.passes, &levels.leaf);
}

/// The twiddles a transform of n points reads, level by level. A block at depth d of the recursion (after d column
/// passes) is a transform of its own, of root ω^stride, and each level reads them from a table of its own domain's
/// twiddles ω^(j stride): a table of 8 MiB where the domain's spreads them over 2 GiB (2^27, the second pass), and
/// 64 KiB for the leaves, which stays in cache. (2026-12-08: no change beyond the spread on a machine whose L3 held a
/// 2^22 or 2^24 transform's table; not measured apart where it does not.)
struct Levels<'a> {
    /// Each column pass level, widest first: its stages ([`pass_stages`]) and its blocks' twiddles.
    passes: Vec<(u32, Cow<'a, [Scalar]>)>,
    /// The leaves' twiddles.
    leaf: Cow<'a, [Scalar]>,
}

impl<'a> Levels<'a> {
    fn new(tw: &'a [Scalar], n: usize) -> Self {
        let (mut size, mut stride) = (n, 1);
        let mut passes = Vec::new();
        while size > 1 << LEAF_LOG2 {
            let k = pass_stages(size);
            passes.push((k, strided_twiddles(tw, stride, size / 2)));
            size >>= k;
            stride <<= k;
        }
        Self {
            passes,
            leaf: strided_twiddles(tw, stride, size / 2),
        }
    }
}

/// `tw[j * stride]` for j < len, in a table of their own unless the stride is 1.
fn strided_twiddles(tw: &[Scalar], stride: usize, len: usize) -> Cow<'_, [Scalar]> {
    if stride == 1 {
        Cow::Borrowed(&tw[..len])
    } else {
        Cow::Owned(
            (0..len)
                .into_par_iter()
                .with_min_len(PAR_CHUNK)
                .map(|j| tw[j * stride])
                .collect(),
        )
    }
}

/// A block of [`dif`], at the level of `passes[0]` (or a leaf when none is left): its first stages in one column
/// pass, then its rows (blocks of the next level) at once.
fn dif_block(v: &mut [Scalar], passes: &[(u32, Cow<'_, [Scalar]>)], leaf: &[Scalar]) {
    let Some(((k, tw), rest)) = passes.split_first() else {
        return dif_leaf(v, leaf);
    };
    let row = v.len() >> k;
    column_pass(v, row, *k, tw, false);
    v.par_chunks_mut(row).for_each(|r| dif_block(r, rest, leaf));
}

/// Most stages of a column pass: 2^8 rows of [`COLUMNS`] scalars, 128 KiB, stay in a core's L2 cache.
const PASS_MAX_STAGES: u32 = 8;

/// Scalars a column pass takes from each row at a time (512 bytes, eight cache lines).
const COLUMNS: usize = 16;

/// The stages a block of n scalars (more than a leaf) takes in its column pass: those above the leaves, in as few
/// passes as [`PASS_MAX_STAGES`] allows, shared out evenly (2^27: 8, then 7; 2^24: 6 and 6).
fn pass_stages(n: usize) -> u32 {
    let above = n.trailing_zeros() - LEAF_LOG2;
    let passes = above.div_ceil(PASS_MAX_STAGES);
    above.div_ceil(passes)
}

/// k stages of a block seen as 2^k rows of `row` scalars: those whose butterflies pair scalars `row` or more apart,
/// that is within a column (DIF's first k stages, DIT's last k). A pass takes [`COLUMNS`] columns of every row
/// through all k stages at once, so the block goes through memory once for k stages, where k stages one at a time
/// sweep it k times (2026-12-07: forward 2^24 1.23 -> 0.99 s on 16 cores; BENCHMARKS). `tw` holds the block's own
/// twiddles (ω_b^j, j < 2^(k-1) row, ω_b the block's root); the butterfly of stage t (0 the widest) on rows i and
/// i + 2^(k-t-1), column c, takes ω_b^((c + q row) 2^t), q = i mod 2^(k-t-1): the one the stage-by-stage transform
/// gives it.
fn column_pass(v: &mut [Scalar], row: usize, k: u32, tw: &[Scalar], dit: bool) {
    let rows: Vec<&mut [Scalar]> = v.chunks_mut(row).collect();
    columns(rows, 0, row, k, tw, dit);
}

/// [`column_pass`] on the columns from `c0` of its rows: halved across threads down to [`COLUMNS`] columns.
fn columns(mut rows: Vec<&mut [Scalar]>, c0: usize, row: usize, k: u32, tw: &[Scalar], dit: bool) {
    let width = rows[0].len();
    if width > COLUMNS {
        let mut right = Vec::with_capacity(rows.len());
        let left: Vec<&mut [Scalar]> = rows
            .drain(..)
            .map(|r| {
                let (l, h) = r.split_at_mut(width / 2);
                right.push(h);
                l
            })
            .collect();
        rayon::join(
            || columns(left, c0, row, k, tw, dit),
            || columns(right, c0 + width / 2, row, k, tw, dit),
        );
        return;
    }
    let stage = |rows: &mut [&mut [Scalar]], t: u32| {
        let half = 1usize << (k - t - 1);
        for group in rows.chunks_exact_mut(2 * half) {
            let (lo, hi) = group.split_at_mut(half);
            for (q, (x, y)) in lo.iter_mut().zip(hi.iter_mut()).enumerate() {
                let base = c0 + q * row;
                for (c, (x, y)) in x.iter_mut().zip(y.iter_mut()).enumerate() {
                    let j = base + c;
                    match (j, dit) {
                        (0, _) => unit_butterfly(x, y),
                        (_, false) => dif_butterfly(x, y, &tw[j << t]),
                        (_, true) => dit_butterfly(x, y, &tw[j << t]),
                    }
                }
            }
        }
    };
    if dit {
        (0..k).rev().for_each(|t| stage(&mut rows, t));
    } else {
        (0..k).for_each(|t| stage(&mut rows, t));
    }
}

/// [`dif`]'s stages over a block that fits in cache, on this thread; `tw` holds the block's own twiddles. A block's
/// first butterfly takes the twiddle ω^0 = 1, and the last stage takes it for every butterfly: those skip the product.
fn dif_leaf(v: &mut [Scalar], tw: &[Scalar]) {
    let mut half = v.len() / 2;
    let mut s = 1;
    while half > 1 {
        for block in v.chunks_exact_mut(2 * half) {
            let (lo, hi) = block.split_at_mut(half);
            unit_butterfly(&mut lo[0], &mut hi[0]);
            for j in 1..half {
                dif_butterfly(&mut lo[j], &mut hi[j], &tw[j * s]);
            }
        }
        half /= 2;
        s *= 2;
    }
    if half == 1 {
        for pair in v.chunks_exact_mut(2) {
            let (u, w) = pair.split_at_mut(1);
            unit_butterfly(&mut u[0], &mut w[0]);
        }
    }
}

/// Decimation in time (Cooley-Tukey): bit-reversed order in, natural order out, unscaled; `tw` as in [`dif`]. A
/// block larger than a leaf takes its rows at once, then its last stages in a column pass.
fn dit(v: &mut [Scalar], tw: &[Scalar]) {
    let levels = Levels::new(tw, v.len());
    dit_block(v, &levels.passes, &levels.leaf);
}

/// A block of [`dit`], as [`dif_block`] is of [`dif`]: its rows at once, then its last stages in one column pass.
fn dit_block(v: &mut [Scalar], passes: &[(u32, Cow<'_, [Scalar]>)], leaf: &[Scalar]) {
    let Some(((k, tw), rest)) = passes.split_first() else {
        return dit_leaf(v, leaf);
    };
    let row = v.len() >> k;
    v.par_chunks_mut(row).for_each(|r| dit_block(r, rest, leaf));
    column_pass(v, row, *k, tw, true);
}

/// [`dit`]'s stages over a block that fits in cache, on this thread; the twiddles 1 skip the product, as in
/// [`dif_leaf`].
fn dit_leaf(v: &mut [Scalar], tw: &[Scalar]) {
    let n = v.len();
    if n < 2 {
        return;
    }
    for pair in v.chunks_exact_mut(2) {
        let (u, w) = pair.split_at_mut(1);
        unit_butterfly(&mut u[0], &mut w[0]);
    }
    let mut half = 2;
    let mut s = n / 4;
    while half < n {
        for block in v.chunks_exact_mut(2 * half) {
            let (lo, hi) = block.split_at_mut(half);
            unit_butterfly(&mut lo[0], &mut hi[0]);
            for j in 1..half {
                dit_butterfly(&mut lo[j], &mut hi[j], &tw[j * s]);
            }
        }
        half *= 2;
        s /= 2;
    }
}

/// Index `i` of a vector of 2^log_n scalars, bit-reversed.
fn bitrev(i: usize, log_n: u32) -> usize {
    if log_n == 0 {
        0
    } else {
        i.reverse_bits() >> (usize::BITS - log_n)
    }
}

/// Permutes `v` (of power-of-two length) into bit-reversed order, each scalar times `s` if given: in place on this
/// thread for short vectors, else in tiles across threads ([`bit_reverse_tiles`]).
fn bit_reverse_scaled(v: &mut [Scalar], s: Option<Scalar>) {
    if v.len() < TILES_MIN {
        bit_reverse(v);
        if let Some(s) = s {
            scale(v, s);
        }
    } else {
        bit_reverse_tiles(v, s);
    }
}

/// log2 of a tile's side in [`bit_reverse_tiles`] and [`h_polynomial`]'s last step: runs of 64 scalars (2 KiB),
/// tiles of 128 KiB.
const TILE_LOG2: u32 = 6;

/// `v` (2^(2B + M) scalars, B = [`TILE_LOG2`]) as tiles for a bit reversal: `tiles(v)[m][a]` is the run of the
/// 2^B scalars whose index has top B bits a and middle M bits m.
fn tiles(v: &mut [Scalar]) -> Vec<Vec<&mut [Scalar]>> {
    let log_n = v.len().trailing_zeros();
    let b = TILE_LOG2;
    assert!(log_n >= 2 * b, "tiles need at least 2^{} scalars", 2 * b);
    let run = 1usize << b;
    let mut tiles: Vec<Vec<&mut [Scalar]>> = (0..1usize << (log_n - 2 * b))
        .map(|_| Vec::with_capacity(run))
        .collect();
    for row in v.chunks_mut(v.len() >> b) {
        for (tile, r) in tiles.iter_mut().zip(row.chunks_mut(run)) {
            tile.push(r);
        }
    }
    tiles
}

/// [`bit_reverse_scaled`] for long vectors, in place. Index i of 2^L = 2^(2B + M) scalars reads as (a, m, b): a its
/// top B bits, b its low B bits, m the M bits between. Its reversal is (rev b, rev m, rev a), so the tile of m (the
/// 2^B runs of 2^B scalars at (a, m, ·)) goes whole to the tile of rev m, transposed with both indices reversed.
/// Each task takes a tile and its partner through a buffer of one tile, reading and writing whole runs, where a
/// gather from a copy (which this replaced) read a cache line for each scalar and wrote a copy of the vector: 2^22
/// on 2 cores 115 -> 14 ms (2026-12-08, BENCHMARKS).
fn bit_reverse_tiles(v: &mut [Scalar], s: Option<Scalar>) {
    let (log_n, b) = (v.len().trailing_zeros(), TILE_LOG2);
    let mut slots: Vec<Option<Vec<&mut [Scalar]>>> = tiles(v).into_iter().map(Some).collect();
    let (m_bits, run) = (log_n - 2 * b, 1usize << b);
    let mut pairs = Vec::with_capacity(slots.len() / 2 + run);
    for m in 0..slots.len() {
        let r = bitrev(m, m_bits);
        if m <= r {
            let tile = slots[m].take().expect("each tile is taken once");
            let partner = if r == m { None } else { slots[r].take() };
            pairs.push((tile, partner));
        }
    }
    let rev: Vec<usize> = (0..run).map(|x| bitrev(x, b)).collect();
    // out[x][y] = from(rev y, rev x), times s if given: a tile written from its source tile.
    fn fill(
        out: &mut [&mut [Scalar]],
        rev: &[usize],
        s: Option<Scalar>,
        from: impl Fn(usize, usize) -> Scalar,
    ) {
        for (x, row) in out.iter_mut().enumerate() {
            for (y, o) in row.iter_mut().enumerate() {
                *o = from(rev[y], rev[x]);
                if let Some(s) = &s {
                    *o *= s;
                }
            }
        }
    }
    pairs.into_par_iter().for_each_init(
        || vec![Scalar::ZERO; run * run],
        |buf, (mut tile, partner)| {
            for (a, r) in tile.iter().enumerate() {
                buf[a * run..(a + 1) * run].copy_from_slice(r);
            }
            // The tile takes its partner's scalars (its own when it is its own partner), the partner the tile's.
            let saved = |a: usize, b: usize| buf[a * run + b];
            match partner {
                Some(mut partner) => {
                    fill(&mut tile, &rev, s, |a, b| partner[a][b]);
                    fill(&mut partner, &rev, s, saved);
                }
                None => fill(&mut tile, &rev, s, saved),
            }
        },
    );
}

/// Multiplies the scalar at bit-reversed position j of `v` (2^log_n scalars) by c g^i, i = bitrev(j): a coset's
/// powers for a vector in [`dif`]'s output order. A run of 2^k positions q 2^k + t takes the powers
/// (g^(2^(log_n - k)))^bitrev_k(t), one table for every run, times c g^bitrev(q) for the run: two products a scalar.
fn distribute_powers_bit_reversed(v: &mut [Scalar], c: Scalar, g: Scalar) {
    let n = v.len();
    if n == 0 {
        return;
    }
    let log_n = n.trailing_zeros();
    let k = log_n.min(LEAF_LOG2);
    let run = 1usize << k;
    let natural = powers(g.pow_vartime([1u64 << (log_n - k)]), run);
    let table: Vec<Scalar> = (0..run).map(|t| natural[bitrev(t, k)]).collect();
    v.par_chunks_mut(run).enumerate().for_each(|(q, part)| {
        let f = c * g.pow_vartime([bitrev(q, log_n - k) as u64]);
        for (x, t) in part.iter_mut().zip(&table) {
            let mut ft = f;
            ft *= t;
            *x *= &ft;
        }
    });
}

/// Checks that a, b and c have one length.
///
/// # Errors
/// [`Error::LengthMismatch`] naming b or c.
pub fn check_abc_lengths(a: &[Scalar], b: &[Scalar], c: &[Scalar]) -> Result<()> {
    for (what, v) in [("b", b), ("c", c)] {
        if v.len() != a.len() {
            return Err(Error::LengthMismatch {
                what,
                got: v.len(),
                expected: a.len(),
            });
        }
    }
    Ok(())
}

/// The coset generator bellperson uses: the field's multiplicative generator.
pub fn coset_generator() -> Scalar {
    Scalar::MULTIPLICATIVE_GENERATOR
}

/// The H polynomial of Groth16: h = (A·B − C) / Z for the polynomials A, B, C of a, b and c (evaluations on the
/// domain, zero-padded to its size), its first n − 1 coefficients. Bit for bit what bellperson computes
/// ([`h_polynomial_reference`]), in six transforms instead of seven: bellperson takes all three inputs to the coset
/// g⟨ω⟩ and back; since C has degree below n, the inverse coset transform of C's coset evaluations is C itself, so
/// by linearity h = (icoset(A(gωⁱ)·B(gωⁱ)) − C) / Z(g), and c needs only its inverse transform.
///
/// # Errors
/// [`Error::LengthMismatch`] if the lengths differ, [`Error::DomainTooLarge`] beyond 2^32.
pub fn h_polynomial(a: Vec<Scalar>, b: Vec<Scalar>, c: Vec<Scalar>) -> Result<Vec<Scalar>> {
    check_abc_lengths(&a, &b, &c)?;
    let domain = Domain::for_len(a.len())?;
    let (n, log_n) = (domain.size(), domain.log_n);
    let g = coset_generator();
    let g_inv = g.invert().expect("the coset generator is non-zero");
    // Every transform runs without a bit reversal: inverse transforms by decimation in frequency (natural order in,
    // bit-reversed out), the forward ones by decimation in time (bit-reversed in, natural out). The constants ride on
    // products made anyway: n^-1 on a's and b's coset powers, and Z(g)^-1 on a's too, so that the product a·b
    // carries k = n^-1 Z(g)^-1, which C (transformed unscaled, so n C) takes at the end.
    let k = domain.n_inv * coset_z_inverse(n, g);
    // Evaluations (zero-padded) to n times the coefficients, in bit-reversed order.
    let to_coefficients = |mut v: Vec<Scalar>| {
        v.resize(n, Scalar::ZERO);
        dif(&mut v, &domain.twiddles_inv);
        v
    };
    let to_coset = |v: Vec<Scalar>, factor: Scalar| {
        let mut v = to_coefficients(v);
        distribute_powers_bit_reversed(&mut v, factor, g);
        dit(&mut v, &domain.twiddles);
        v
    };
    let (mut ab, (b, c)) = rayon::join(
        || to_coset(a, domain.n_inv * k),
        || rayon::join(|| to_coset(b, domain.n_inv), || to_coefficients(c)),
    );
    ab.par_iter_mut()
        .zip(b.par_iter())
        .with_min_len(1024)
        .for_each(|(a, b)| *a *= b);
    drop(b);
    dif(&mut ab, &domain.twiddles_inv);
    // At bit-reversed position i the product's unscaled inverse transform holds n k p_i g^i (p the coefficients of
    // the interpolant of a·b on the coset, k from a's powers) and C's holds n C_i, so h_i = (p_i - C_i) Z(g)^-1 is
    // the first times g^-i less the second times k.
    Ok(gather_h(&ab, &c, k, g_inv, log_n))
}

/// h_i = ab[r] g^-i - c[r] k for i < n - 1, r = bitrev(i): [`h_polynomial`]'s last step. From 2^12 scalars it
/// takes h by tiles (as [`bit_reverse_tiles`]): each task writes the tile of m from the tiles of rev m of `ab` and
/// `c`, whole runs that stay in cache while it reads them across, where reading at each i's reversal read a cache line
/// for each scalar of each vector (2^22 on 2 cores: 860 ms of H's 4.1 s). g^-i is the product of three powers taken
/// from tables, one for each part of i.
fn gather_h(ab: &[Scalar], c: &[Scalar], k: Scalar, g_inv: Scalar, log_n: u32) -> Vec<Scalar> {
    let n = 1usize << log_n;
    let b = TILE_LOG2;
    if log_n < 2 * b {
        let powers = powers(g_inv, n);
        return (0..n - 1)
            .map(|i| {
                let r = bitrev(i, log_n);
                ab[r] * powers[i] - c[r] * k
            })
            .collect();
    }
    let (m_bits, run, row) = (log_n - 2 * b, 1usize << b, n >> b);
    let rev: Vec<usize> = (0..run).map(|x| bitrev(x, b)).collect();
    // g^-i for i = (a, m, t): g^-(a 2^(M+B)) g^-(m 2^B) g^-t.
    let top = powers(g_inv.pow_vartime([row as u64]), run);
    let middle = powers(g_inv.pow_vartime([run as u64]), 1 << m_bits);
    let low = powers(g_inv, run);
    let mut h = vec![Scalar::ZERO; n];
    tiles(&mut h)
        .into_par_iter()
        .enumerate()
        .for_each(|(m, mut tile)| {
            let from = bitrev(m, m_bits) * run;
            for (a, out) in tile.iter_mut().enumerate() {
                let f = top[a] * middle[m];
                let column = from + rev[a];
                for (t, x) in out.iter_mut().enumerate() {
                    let r = rev[t] * row + column;
                    let mut ck = c[r];
                    ck *= &k;
                    let mut power = f;
                    power *= &low[t];
                    *x = ab[r];
                    *x *= &power;
                    *x -= &ck;
                }
            }
        });
    h.truncate(n - 1);
    h
}

/// The H polynomial in bellperson's own sequence: a, b and c each to the coset (inverse transform, coset transform),
/// a·b − c there, times Z(g)⁻¹, the inverse coset transform, the first n − 1 coefficients. The reference that
/// [`h_polynomial`] and the GPU's H are tested against.
///
/// # Errors
/// As [`h_polynomial`].
pub fn h_polynomial_reference(
    a: Vec<Scalar>,
    b: Vec<Scalar>,
    c: Vec<Scalar>,
) -> Result<Vec<Scalar>> {
    check_abc_lengths(&a, &b, &c)?;
    let domain = Domain::for_len(a.len())?;
    let g = coset_generator();
    let to_coset = |v| coset_evaluations(&domain, g, v);
    // The three inputs in parallel, as bellperson's worker runs them (it is the 2^27 heavy sweep's reference).
    let (a, (b, c)) = rayon::join(
        || to_coset(a),
        || rayon::join(|| to_coset(b), || to_coset(c)),
    );
    let (mut a, b, c) = (a?, b?, c?);
    let z_inv = coset_z_inverse(domain.size(), g);
    a.par_iter_mut()
        .zip(b.par_iter().zip(c.par_iter()))
        .with_min_len(1024)
        .for_each(|(a, (b, c))| *a = (*a * b - c) * z_inv);
    domain.icoset_fft(&mut a, g)?;
    a.truncate(domain.size() - 1);
    Ok(a)
}

/// Evaluations on the domain (zero-padded to its size) to coefficients.
fn coefficients(domain: &Domain, mut v: Vec<Scalar>) -> Result<Vec<Scalar>> {
    v.resize(domain.size(), Scalar::ZERO);
    domain.ifft(&mut v)?;
    Ok(v)
}

/// Evaluations on the domain (zero-padded to its size) to evaluations on the coset g⟨ω⟩.
fn coset_evaluations(domain: &Domain, g: Scalar, v: Vec<Scalar>) -> Result<Vec<Scalar>> {
    let mut v = coefficients(domain, v)?;
    domain.coset_fft(&mut v, g)?;
    Ok(v)
}

/// Z(g)⁻¹ = (gⁿ − 1)⁻¹ for a domain of n points: Z's one value on the coset g⟨ω⟩ (the CPU and GPU H both divide by
/// it).
pub(crate) fn coset_z_inverse(n: usize, g: Scalar) -> Scalar {
    (g.pow_vartime([n as u64]) - Scalar::ONE)
        .invert()
        .expect("g is not in the domain, so Z(g) != 0")
}

/// Naive O(n²) evaluation of coefficients at the powers of ω: the reference for tests.
pub fn naive_dft(coeffs: &[Scalar], omega: Scalar) -> Vec<Scalar> {
    let mut x = Scalar::ONE;
    (0..coeffs.len())
        .map(|_| {
            let v = coeffs.iter().rev().fold(Scalar::ZERO, |acc, c| acc * x + c);
            x *= omega;
            v
        })
        .collect()
}
