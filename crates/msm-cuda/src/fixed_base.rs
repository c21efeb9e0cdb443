//! Fixed-base MSM over precomputed window tables: the CPU reference of the GPU's window tables
//! ([`crate::gpu::DeviceBases::upload_tables`]).
//!
//! With c-bit signed windows an MSM is `Σ_i Σ_w d_iw · 2^(cw) · P_i`. Keeping `Q_iw = 2^(cw) · P_i` for every base
//! turns it into one window, `Σ_(i,w) d_iw · Q_iw`: its n·W digits share one set of 2^(c−1) buckets, reduced once
//! instead of W times. Wider windows then pay (W = ⌈256 / c⌉ digits a scalar, for W times the bases' memory): a
//! 2^26 MSM at c = 24 would add 11 digits a scalar where today's c = 20 adds 13, and reduce 2^23 buckets once where
//! it reduces 13 × 2^19. At the H200's rates in the batch-affine rounds and the reduction (about 0.39 ns a digit and
//! 2.1 ns a bucket at 2^26, BENCHMARKS.md) that is an estimate of 50 ms less, for 70 GB of tables.
//!
//! This module is the simple version, for tests and as the specification: tables built with blstrs, buckets summed
//! one digit after another. The digits are those of [`signed_digits`], which every implementation must share.

use blstrs::{G1Affine, G1Projective, Scalar};
use group::Group;
use rayon::prelude::*;

use crate::{Error, Result};

/// The widest window the tables take: 2^23 buckets.
pub const MAX_WINDOW: u32 = 24;

/// Windows of c bits that cover a scalar below 2^255 in signed digits: ⌈256 / c⌉ (the top digit may take the
/// carry of the one below it, and then still lies within ±2^(c−1)).
pub fn windows_for(window: u32) -> u32 {
    256u32.div_ceil(window)
}

/// The bits of a scalar's top window of c bits, the carry from below included: `256 − (W − 1)·c`, W = [`windows_for`].
/// Its digits lie within ±2^(bits − 1).
pub fn top_window_bits(window: u32) -> u32 {
    256 - (windows_for(window) - 1) * window
}

/// Whether c-bit windows leave a narrow top window (fewer than c / 4 bits: from 10 to 24 bits, at 15, 17, 18, 21 and
/// 23): its few digit values gather every scalar in a few buckets, which a bucket method sums slowly (see
/// [`crate::gpu::DeviceBases::upload_tables`]).
pub fn narrow_top_window(window: u32) -> bool {
    4 * top_window_bits(window) < window
}

/// The signed c-bit digits of `scalar`, least significant first, into `out` (W = [`windows_for`] of them): each
/// within [−2^(c−1), 2^(c−1)], and `Σ_w out[w] · 2^(cw)` is the scalar. A window's bits above 2^(c−1) become
/// the digit less 2^c and a carry into the next window.
///
/// # Panics
/// If `window` is not 1..=[`MAX_WINDOW`] or `out` is not W long (callers check both).
pub fn signed_digits(scalar: &Scalar, window: u32, out: &mut [i32]) {
    assert!((1..=MAX_WINDOW).contains(&window), "window {window}");
    assert_eq!(out.len(), windows_for(window) as usize);
    let bytes = scalar.to_bytes_le();
    let limbs: [u64; 4] = std::array::from_fn(|j| {
        u64::from_le_bytes(bytes[8 * j..8 * j + 8].try_into().expect("8 bytes"))
    });
    let bits = |pos: u32| -> u64 {
        // The `window` bits from `pos` (zero past bit 255).
        let (j, s) = ((pos / 64) as usize, pos % 64);
        let lo = limbs.get(j).map_or(0, |l| l >> s);
        let hi = if s == 0 {
            0
        } else {
            limbs.get(j + 1).map_or(0, |l| l << (64 - s))
        };
        (lo | hi) & ((1u64 << window) - 1)
    };
    let half = 1i64 << (window - 1);
    let mut carry = 0i64;
    for (w, d) in out.iter_mut().enumerate() {
        let mut v = bits(window * w as u32) as i64 + carry;
        carry = 0;
        if v > half {
            v -= 1i64 << window;
            carry = 1;
        }
        *d = v as i32;
    }
    debug_assert_eq!(
        carry, 0,
        "a scalar below 2^255 leaves no carry past W windows"
    );
}

/// `2^(cw) · P_i` for every base i and window w, at `i · W + w`.
pub struct FixedBaseTables {
    window: u32,
    windows: u32,
    bases: usize,
    points: Vec<G1Affine>,
}

impl std::fmt::Debug for FixedBaseTables {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FixedBaseTables")
            .field("window", &self.window)
            .field("windows", &self.windows)
            .field("bases", &self.bases)
            .finish_non_exhaustive()
    }
}

impl FixedBaseTables {
    /// The tables of `bases` for `window`-bit digits (c doublings a step, in parallel over the bases).
    ///
    /// # Errors
    /// [`Error::Window`] if `window` is not 1..=[`MAX_WINDOW`].
    pub fn new(bases: &[G1Affine], window: u32) -> Result<Self> {
        if !(1..=MAX_WINDOW).contains(&window) {
            return Err(Error::Window {
                window,
                min: 1,
                max: MAX_WINDOW,
            });
        }
        let windows = windows_for(window);
        let proj: Vec<G1Projective> = bases
            .par_iter()
            .flat_map_iter(|p| {
                let mut q = G1Projective::from(p);
                (0..windows).map(move |_| {
                    let out = q;
                    for _ in 0..window {
                        q = q.double();
                    }
                    out
                })
            })
            .collect();
        let points = curve_batch::par_to_affine_vec(&proj);
        Ok(FixedBaseTables {
            window,
            windows,
            bases: bases.len(),
            points,
        })
    }

    /// The digits' width c.
    pub fn window(&self) -> u32 {
        self.window
    }

    /// W, the tables per base.
    pub fn windows(&self) -> u32 {
        self.windows
    }

    /// The bases the tables were built from.
    pub fn len(&self) -> usize {
        self.bases
    }

    /// Whether they were built from no bases.
    pub fn is_empty(&self) -> bool {
        self.bases == 0
    }

    /// The table points, `2^(cw) · P_i` at `i · W + w`.
    pub fn points(&self) -> &[G1Affine] {
        &self.points
    }

    /// `Σ scalars[i] · P_i`: every digit of every scalar added, with its sign, to the one bucket of its magnitude
    /// (from the table point of its base and window), then the buckets' weighted sum `Σ_b b · S_b` by running sums.
    ///
    /// # Errors
    /// [`Error::LengthMismatch`] if there is not one scalar a base.
    pub fn msm(&self, scalars: &[Scalar]) -> Result<G1Projective> {
        if scalars.len() != self.bases {
            return Err(Error::LengthMismatch {
                bases: self.bases,
                scalars: scalars.len(),
            });
        }
        let w_count = self.windows as usize;
        let mut buckets = vec![G1Projective::identity(); 1usize << (self.window - 1)];
        let mut digits = vec![0i32; w_count];
        for (i, s) in scalars.iter().enumerate() {
            signed_digits(s, self.window, &mut digits);
            for (w, &d) in digits.iter().enumerate() {
                if d == 0 {
                    continue;
                }
                let q = &self.points[i * w_count + w];
                let b = &mut buckets[d.unsigned_abs() as usize - 1];
                *b = if d > 0 { *b + q } else { *b - q };
            }
        }
        let (mut running, mut total) = (G1Projective::identity(), G1Projective::identity());
        for b in buckets.iter().rev() {
            running += b;
            total += running;
        }
        Ok(total)
    }
}
