#![doc = include_str!("../README.md")]

mod ffi;
pub mod fixed_base;
pub mod gpu;

use blst::{blst_p1, blst_p1_affine, blst_p2, blst_p2_affine, MultiPoint};
use blstrs::{G1Affine, G1Projective, G2Affine, G2Projective, Scalar};
use group::Group;
use rayon::prelude::*;

/// Errors of this crate.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum Error {
    /// Bases and scalars do not pair up.
    #[error("MSM has {bases} bases but {scalars} scalars")]
    LengthMismatch {
        /// Number of bases.
        bases: usize,
        /// Number of scalars.
        scalars: usize,
    },
    /// No usable GPU (not built with CUDA, no device, or `CUZK_NO_GPU=1`); says which.
    #[error("no GPU: {0}")]
    NoDevice(String),
    /// A CUDA call or kernel failed.
    #[error("CUDA error {code}: {message}")]
    Cuda {
        /// The CUDA error code (or 1 for a check of ours).
        code: i32,
        /// What failed.
        message: String,
    },
    /// A window width that window tables do not take.
    #[error("window of {window} bits: window tables take {min} to {max}")]
    Window {
        /// The width asked for.
        window: u32,
        /// The narrowest they take.
        min: u32,
        /// The widest.
        max: u32,
    },
    /// A selection's words hold fewer bits than its length.
    #[error("selection of {bits} bits has only {words} 64-bit words")]
    SelectionShort {
        /// Bits the selection claims.
        bits: usize,
        /// Words it has.
        words: usize,
    },
    /// A selection bitmask does not fit the scalars or the bases.
    #[error("selection covers {bits} scalars with {ones} set, but there are {scalars} scalars and {bases} bases")]
    SelectionMismatch {
        /// Bits in the selection.
        bits: usize,
        /// Set bits.
        ones: usize,
        /// Scalars given.
        scalars: usize,
        /// Bases given.
        bases: usize,
    },
}

/// Result alias of this crate.
pub type Result<T> = std::result::Result<T, Error>;

/// Which scalars of a full vector take part in an MSM: bit `i` (least significant first in 64-bit words) set means scalar `i` is used, with the next base in order.
#[derive(Clone, Copy, Debug)]
pub struct Selection<'a> {
    /// The bitmask words.
    pub words: &'a [u64],
    /// Number of meaningful bits.
    pub len: usize,
}

impl Selection<'_> {
    fn get(&self, i: usize) -> bool {
        self.words[i / 64] >> (i % 64) & 1 == 1
    }

    /// Set bits among the first `len` (whole words by popcount, the last one masked).
    fn count_ones(&self) -> usize {
        let full = self.len / 64;
        let whole: usize = self.words[..full]
            .iter()
            .map(|w| w.count_ones() as usize)
            .sum();
        let rest = self.len % 64;
        whole
            + if rest == 0 {
                0
            } else {
                (self.words[full] & ((1u64 << rest) - 1)).count_ones() as usize
            }
    }

    /// The number of selected scalars, once the selection is checked to cover exactly `scalars` of them.
    ///
    /// # Errors
    /// [`Error::SelectionMismatch`] if the words are too few for `len` bits or `len` is not `scalars`.
    pub fn selected(&self, scalars: usize) -> Result<usize> {
        if self.words.len() * 64 < self.len {
            return Err(Error::SelectionShort {
                bits: self.len,
                words: self.words.len(),
            });
        }
        let ones = self.count_ones();
        if self.len != scalars {
            return Err(Error::SelectionMismatch {
                bits: self.len,
                ones,
                scalars,
                bases: ones,
            });
        }
        Ok(ones)
    }

    /// The selected scalars, in order, checked against the number of bases they will pair with.
    /// Gather once and reuse when several MSMs (G1 and G2 of one query) take the same selection.
    ///
    /// # Errors
    /// [`Error::SelectionMismatch`] if the selection does not cover the scalars or its set bits do not count the bases.
    pub fn gather(&self, scalars: &[Scalar], bases: usize) -> Result<Vec<Scalar>> {
        let ones = if self.words.len() * 64 >= self.len {
            self.count_ones()
        } else {
            usize::MAX
        };
        if self.len != scalars.len() || ones != bases {
            return Err(Error::SelectionMismatch {
                bits: self.len,
                ones,
                scalars: scalars.len(),
                bases,
            });
        }
        // In parallel over blocks of 2^18 scalars: count each block's selected scalars, then each block fills its own
        // slice of the output (a serial gather of a PoRep partition's 130M aux values takes seconds).
        const BLOCK: usize = 1 << 18;
        let blocks: Vec<std::ops::Range<usize>> = (0..scalars.len())
            .step_by(BLOCK)
            .map(|start| start..(start + BLOCK).min(scalars.len()))
            .collect();
        let counts: Vec<usize> = blocks
            .par_iter()
            .map(|r| r.clone().filter(|&i| self.get(i)).count())
            .collect();
        let mut out = vec![<Scalar as ff::Field>::ZERO; ones];
        let mut slices = Vec::with_capacity(blocks.len());
        let mut rest = out.as_mut_slice();
        for &c in &counts {
            let (head, tail) = rest.split_at_mut(c);
            slices.push(head);
            rest = tail;
        }
        blocks.into_par_iter().zip(slices).for_each(|(r, dst)| {
            let picked = r.filter(|&i| self.get(i)).map(|i| scalars[i]);
            for (d, s) in dst.iter_mut().zip(picked) {
                *d = s;
            }
        });
        Ok(out)
    }
}

// blstrs's affine types are `repr(transparent)` wrappers of blst's: the slice casts below rely on it.
const _: () = assert!(std::mem::size_of::<G1Affine>() == std::mem::size_of::<blst_p1_affine>());
const _: () = assert!(std::mem::align_of::<G1Affine>() == std::mem::align_of::<blst_p1_affine>());
const _: () = assert!(std::mem::size_of::<G2Affine>() == std::mem::size_of::<blst_p2_affine>());
const _: () = assert!(std::mem::align_of::<G2Affine>() == std::mem::align_of::<blst_p2_affine>());
const _: () = assert!(std::mem::size_of::<G1Projective>() == std::mem::size_of::<blst_p1>());
const _: () = assert!(std::mem::size_of::<G2Projective>() == std::mem::size_of::<blst_p2>());

fn as_blst_g1(bases: &[G1Affine]) -> &[blst_p1_affine] {
    // SAFETY: G1Affine is #[repr(transparent)] over blst_p1_affine (size and alignment asserted above).
    unsafe { std::slice::from_raw_parts(bases.as_ptr().cast(), bases.len()) }
}

fn as_blst_g2(bases: &[G2Affine]) -> &[blst_p2_affine] {
    // SAFETY: G2Affine is #[repr(transparent)] over blst_p2_affine (size and alignment asserted above).
    unsafe { std::slice::from_raw_parts(bases.as_ptr().cast(), bases.len()) }
}

fn g1_from_blst(p: blst_p1) -> G1Projective {
    // SAFETY: G1Projective is #[repr(transparent)] over blst_p1 (size asserted above); every bit pattern blst returns is a valid point.
    unsafe { std::mem::transmute::<blst_p1, G1Projective>(p) }
}

fn g2_from_blst(p: blst_p2) -> G2Projective {
    // SAFETY: as for G1.
    unsafe { std::mem::transmute::<blst_p2, G2Projective>(p) }
}

/// Little-endian canonical bytes of the scalars, as blst's Pippenger wants them.
fn scalar_bytes(scalars: &[Scalar]) -> Vec<u8> {
    let mut out = vec![0u8; scalars.len() * 32];
    out.par_chunks_mut(32)
        .zip(scalars.par_iter())
        .with_min_len(4096)
        .for_each(|(dst, s)| dst.copy_from_slice(&s.to_bytes_le()));
    out
}

/// Scalars are below 2^255.
const SCALAR_BITS: usize = 255;

/// G1 MSM: the sum of `scalars[i] * bases[i]`.
///
/// # Errors
/// [`Error::LengthMismatch`] if the lengths differ.
pub fn msm_g1(bases: &[G1Affine], scalars: &[Scalar]) -> Result<G1Projective> {
    if bases.len() != scalars.len() {
        return Err(Error::LengthMismatch {
            bases: bases.len(),
            scalars: scalars.len(),
        });
    }
    if bases.is_empty() {
        return Ok(G1Projective::identity());
    }
    let bytes = scalar_bytes(scalars);
    Ok(g1_from_blst(as_blst_g1(bases).mult(&bytes, SCALAR_BITS)))
}

/// G2 MSM: the sum of `scalars[i] * bases[i]`.
///
/// # Errors
/// [`Error::LengthMismatch`] if the lengths differ.
pub fn msm_g2(bases: &[G2Affine], scalars: &[Scalar]) -> Result<G2Projective> {
    if bases.len() != scalars.len() {
        return Err(Error::LengthMismatch {
            bases: bases.len(),
            scalars: scalars.len(),
        });
    }
    if bases.is_empty() {
        return Ok(G2Projective::identity());
    }
    let bytes = scalar_bytes(scalars);
    Ok(g2_from_blst(as_blst_g2(bases).mult(&bytes, SCALAR_BITS)))
}

/// G1 MSM over the scalars that `selection` picks from `scalars`, paired in order with `bases`.
///
/// # Errors
/// [`Error::SelectionMismatch`] if the selection does not cover the scalars or its set bits do not count the bases.
pub fn msm_g1_selected(
    bases: &[G1Affine],
    scalars: &[Scalar],
    selection: Selection<'_>,
) -> Result<G1Projective> {
    msm_g1(bases, &selection.gather(scalars, bases.len())?)
}

/// G2 MSM over the scalars that `selection` picks from `scalars`, paired in order with `bases`.
///
/// # Errors
/// [`Error::SelectionMismatch`] if the selection does not cover the scalars or its set bits do not count the bases.
pub fn msm_g2_selected(
    bases: &[G2Affine],
    scalars: &[Scalar],
    selection: Selection<'_>,
) -> Result<G2Projective> {
    msm_g2(bases, &selection.gather(scalars, bases.len())?)
}
