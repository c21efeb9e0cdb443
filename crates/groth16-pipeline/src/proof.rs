//! bellperson's proof encoding: A ‖ B ‖ C, compressed, 48 + 96 + 48 bytes.

use blstrs::{G1Affine, G2Affine};
use group::prime::PrimeCurveAffine;

use crate::{Error, Result};

/// Bytes of one encoded proof.
pub const PROOF_BYTES: usize = 192;

/// A Groth16 proof.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Proof {
    /// A in G1.
    pub a: G1Affine,
    /// B in G2.
    pub b: G2Affine,
    /// C in G1.
    pub c: G1Affine,
}

impl Proof {
    /// The 192-byte encoding.
    pub fn to_bytes(&self) -> [u8; PROOF_BYTES] {
        let mut out = [0u8; PROOF_BYTES];
        out[..48].copy_from_slice(&self.a.to_compressed());
        out[48..144].copy_from_slice(&self.b.to_compressed());
        out[144..].copy_from_slice(&self.c.to_compressed());
        out
    }

    /// Decodes one proof, checking each point is on its curve, in its subgroup and not the identity (as bellperson's reader does).
    ///
    /// # Errors
    /// [`Error::ProofLength`] or [`Error::ProofPoint`].
    pub fn from_bytes(bytes: &[u8]) -> Result<Self> {
        if bytes.len() != PROOF_BYTES {
            return Err(Error::ProofLength { got: bytes.len() });
        }
        Self::decode_at(bytes, 0)
    }

    fn decode_at(bytes: &[u8], index: usize) -> Result<Self> {
        let bad = |part, problem| Error::ProofPoint {
            index,
            part,
            problem,
        };
        let a = Option::<G1Affine>::from(G1Affine::from_compressed(
            bytes[..48].try_into().expect("48 bytes"),
        ))
        .ok_or(bad("A", "not a valid compressed G1 point in the subgroup"))?;
        let b = Option::<G2Affine>::from(G2Affine::from_compressed(
            bytes[48..144].try_into().expect("96 bytes"),
        ))
        .ok_or(bad("B", "not a valid compressed G2 point in the subgroup"))?;
        let c = Option::<G1Affine>::from(G1Affine::from_compressed(
            bytes[144..].try_into().expect("48 bytes"),
        ))
        .ok_or(bad("C", "not a valid compressed G1 point in the subgroup"))?;
        if bool::from(a.is_identity()) {
            return Err(bad("A", "the point at infinity"));
        }
        if bool::from(b.is_identity()) {
            return Err(bad("B", "the point at infinity"));
        }
        if bool::from(c.is_identity()) {
            return Err(bad("C", "the point at infinity"));
        }
        Ok(Self { a, b, c })
    }

    /// Decodes a concatenation of proofs (Filecoin's multi-partition layout).
    ///
    /// # Errors
    /// [`Error::ProofLength`] if the length is not a positive multiple of 192; [`Error::ProofPoint`] naming the proof.
    pub fn many_from_bytes(bytes: &[u8]) -> Result<Vec<Self>> {
        if bytes.is_empty() || bytes.len() % PROOF_BYTES != 0 {
            return Err(Error::ProofLength { got: bytes.len() });
        }
        bytes
            .chunks_exact(PROOF_BYTES)
            .enumerate()
            .map(|(i, c)| Self::decode_at(c, i))
            .collect()
    }
}
