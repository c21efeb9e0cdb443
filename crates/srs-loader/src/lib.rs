#![doc = include_str!("../README.md")]

mod fixed_base;
mod format;
mod setup;

pub use format::{read_params, read_verifying_key, write_atomic, ReadOptions, Section};
pub use setup::setup;

use blstrs::{G1Affine, G2Affine};
use group::prime::PrimeCurveAffine;
use r1cs_synth::ProvingAssignment;
use std::path::PathBuf;

/// Errors of this crate.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The file could not be opened, read or written.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The operating system's error.
        #[source]
        source: std::io::Error,
    },
    /// The file ends before a section does.
    #[error("truncated parameters: {section} needs {needed} bytes at offset {offset}, but the data ends at {len}")]
    Truncated {
        /// The section being read.
        section: Section,
        /// Where the missing bytes start.
        offset: u64,
        /// How many bytes were needed there.
        needed: u64,
        /// Length of the data.
        len: u64,
    },
    /// Bytes follow the last section.
    #[error("{extra} trailing bytes after the last section, at offset {offset}")]
    TrailingBytes {
        /// Where they start.
        offset: u64,
        /// How many.
        extra: u64,
    },
    /// A point fails a check.
    #[error("{section} point {index} at offset {offset}: {problem}")]
    InvalidPoint {
        /// The section.
        section: Section,
        /// The point's index in its section.
        index: usize,
        /// The point's byte offset.
        offset: u64,
        /// What is wrong.
        problem: PointProblem,
    },
    /// A section's length is impossible or does not fit the circuit.
    #[error("{section} has {got} points but {expected}")]
    SectionLength {
        /// The section.
        section: Section,
        /// Its length.
        got: usize,
        /// What was expected, in words.
        expected: String,
    },
    /// δ₁ or δ₂ is the identity: proofs would not be zero-knowledge.
    #[error("the verifying key's {0} is the identity")]
    IdentityDelta(&'static str),
    /// The circuit cannot be set up.
    #[error("setup: {0}")]
    Setup(String),
}

/// What is wrong with a point.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum PointProblem {
    /// Flags, coordinates out of range, or not on the curve.
    #[error("not a valid uncompressed point on the curve")]
    NotOnCurve,
    /// On the curve but outside the prime-order subgroup.
    #[error("not in the prime-order subgroup")]
    NotInSubgroup,
    /// The point at infinity, which parameter files never hold.
    #[error("point at infinity")]
    Identity,
}

/// Result alias of this crate.
pub type Result<T> = std::result::Result<T, Error>;

/// The verifying key.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct VerifyingKey {
    /// α in G1.
    pub alpha_g1: G1Affine,
    /// β in G1.
    pub beta_g1: G1Affine,
    /// β in G2.
    pub beta_g2: G2Affine,
    /// γ in G2.
    pub gamma_g2: G2Affine,
    /// δ in G1.
    pub delta_g1: G1Affine,
    /// δ in G2.
    pub delta_g2: G2Affine,
    /// One point per input, ONE included.
    pub ic: Vec<G1Affine>,
}

/// Groth16 proving parameters.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Parameters {
    /// The verifying key.
    pub vk: VerifyingKey,
    /// H query: m − 1 points for a domain of m.
    pub h: Vec<G1Affine>,
    /// L query: one point per aux variable.
    pub l: Vec<G1Affine>,
    /// A query: inputs, then the aux variables that appear in A.
    pub a: Vec<G1Affine>,
    /// B query in G1: inputs that appear in B, then aux that appear in B.
    pub b_g1: Vec<G1Affine>,
    /// B query in G2, same count as `b_g1`.
    pub b_g2: Vec<G2Affine>,
}

impl Parameters {
    /// The domain size m these parameters serve (`h.len() + 1`).
    pub fn domain_size(&self) -> usize {
        self.h.len() + 1
    }

    /// Checks the section lengths against a synthesized circuit: inputs, aux, constraints and densities.
    ///
    /// # Errors
    /// [`Error::SectionLength`] naming the first section that does not fit.
    pub fn check_matches(&self, pa: &ProvingAssignment) -> Result<()> {
        let m = pa.num_constraints().next_power_of_two();
        let expect = |section, got: usize, want: usize, what: &str| {
            if got == want {
                Ok(())
            } else {
                Err(Error::SectionLength {
                    section,
                    got,
                    expected: format!("the circuit needs {want} ({what})"),
                })
            }
        };
        expect(
            Section::Ic,
            self.vk.ic.len(),
            pa.num_inputs(),
            "one per input, ONE included",
        )?;
        expect(Section::H, self.h.len(), m - 1, "domain size - 1")?;
        expect(
            Section::L,
            self.l.len(),
            pa.num_aux(),
            "one per aux variable",
        )?;
        expect(
            Section::A,
            self.a.len(),
            pa.num_inputs() + pa.a_aux_density.count_ones(),
            "inputs + aux in A",
        )?;
        let b = pa.b_input_density.count_ones() + pa.b_aux_density.count_ones();
        expect(Section::BG1, self.b_g1.len(), b, "inputs and aux in B")?;
        expect(Section::BG2, self.b_g2.len(), b, "inputs and aux in B")
    }

    /// Checks what every parameter set must satisfy, whatever the circuit: δ not the identity, `h.len() + 1` a power of two, `b_g1` and `b_g2` of one length.
    ///
    /// # Errors
    /// The first problem found.
    pub fn check_consistent(&self) -> Result<()> {
        if bool::from(self.vk.delta_g1.is_identity()) {
            return Err(Error::IdentityDelta("delta_g1"));
        }
        if bool::from(self.vk.delta_g2.is_identity()) {
            return Err(Error::IdentityDelta("delta_g2"));
        }
        if !(self.h.len() + 1).is_power_of_two() {
            return Err(Error::SectionLength {
                section: Section::H,
                got: self.h.len(),
                expected: "2^k - 1 points".into(),
            });
        }
        if self.b_g1.len() != self.b_g2.len() {
            return Err(Error::SectionLength {
                section: Section::BG2,
                got: self.b_g2.len(),
                expected: format!("as many as b_g1 ({})", self.b_g1.len()),
            });
        }
        Ok(())
    }
}
