#![doc = include_str!("../README.md")]
#![deny(unsafe_code)]

pub mod gpu;

#[cfg(has_cuda)]
#[allow(missing_debug_implementations)]
mod ffi;

use blstrs::Scalar;
use ff::{Field, PrimeField};
use rayon::prelude::*;

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

/// Below this many butterflies a stage runs on one thread.
const PAR_THRESHOLD: usize = 1 << 12;

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
        radix2(v, &self.twiddles);
        Ok(())
    }

    /// Evaluations on ⟨ω⟩ to coefficients (scaled by 1/n).
    ///
    /// # Errors
    /// [`Error::LengthMismatch`] if `v` is not of the domain's size.
    pub fn ifft(&self, v: &mut [Scalar]) -> Result<()> {
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
        radix2(v, &self.twiddles);
        Ok(())
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
    let g = coset_generator();
    let (a, (b, c)) = rayon::join(
        || coset_evaluations(&domain, g, a),
        || {
            rayon::join(
                || coset_evaluations(&domain, g, b),
                || coefficients(&domain, c),
            )
        },
    );
    let (mut ab, b, c) = (a?, b?, c?);
    ab.par_iter_mut()
        .zip(b.par_iter())
        .with_min_len(1024)
        .for_each(|(a, b)| *a *= b);
    drop(b);
    domain.icoset_fft(&mut ab, g)?;
    let z_inv = coset_z_inverse(domain.size(), g);
    ab.par_iter_mut()
        .zip(c.par_iter())
        .with_min_len(1024)
        .for_each(|(h, c)| *h = (*h - c) * z_inv);
    ab.truncate(domain.size() - 1);
    Ok(ab)
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
