#![doc = include_str!("../README.md")]
#![forbid(unsafe_code)]

mod porep_like;

pub use porep_like::{PorepLikeCircuit, BLOCK_ROWS};

use bellpepper::gadgets::boolean::{AllocatedBit, Boolean};
use bellpepper::gadgets::{multipack, sha256::sha256};
use bellpepper_core::{Circuit, ConstraintSystem, SynthesisError};
use blstrs::Scalar;
use rand_core::RngCore;
use sha2::{Digest, Sha256};

/// Bytes that SHA-256 padding adds at least (the 0x80 byte and the 64-bit length).
const PADDING_MIN: usize = 9;

/// SHA-256 of a preimage of `64 * blocks - 9` bytes: exactly `blocks` compression blocks after padding.
///
/// Public inputs (after ONE): the 256 digest bits, big-endian within each byte, packed into field elements of 254 bits (bellpepper's `multipack`), so two inputs.
/// The preimage is private.
/// Constructed without a preimage, the circuit still has its full shape (for parameter generation).
#[derive(Clone, Debug)]
pub struct Sha256Circuit {
    blocks: usize,
    preimage: Option<Vec<u8>>,
}

impl Sha256Circuit {
    /// The shape only, for setup: synthesizing it for a proof fails with `AssignmentMissing`.
    pub fn blank(blocks: usize) -> Self {
        assert!(blocks >= 1, "a SHA-256 circuit needs at least one block");
        Self {
            blocks,
            preimage: None,
        }
    }

    /// A circuit over the given preimage.
    ///
    /// # Errors
    /// If `blocks` is zero or `preimage.len()` is not `preimage_len(blocks)`.
    pub fn new(blocks: usize, preimage: Vec<u8>) -> Result<Self, String> {
        if blocks == 0 {
            return Err("a SHA-256 circuit needs at least one block".into());
        }
        let want = Self::preimage_len(blocks);
        if preimage.len() != want {
            return Err(format!(
                "a {blocks}-block SHA-256 circuit takes a {want}-byte preimage, got {} bytes",
                preimage.len()
            ));
        }
        Ok(Self {
            blocks,
            preimage: Some(preimage),
        })
    }

    /// A circuit over a preimage drawn from `rng`.
    pub fn random(blocks: usize, rng: &mut impl RngCore) -> Self {
        let mut preimage = vec![0u8; Self::preimage_len(blocks)];
        rng.fill_bytes(&mut preimage);
        Self::new(blocks, preimage).expect("length is right by construction")
    }

    /// Preimage length in bytes that fills `blocks` blocks exactly.
    pub fn preimage_len(blocks: usize) -> usize {
        64 * blocks - PADDING_MIN
    }

    /// Number of compression blocks.
    pub fn blocks(&self) -> usize {
        self.blocks
    }

    /// The preimage, if any.
    pub fn preimage(&self) -> Option<&[u8]> {
        self.preimage.as_deref()
    }

    /// The SHA-256 digest of the preimage, computed natively.
    pub fn digest(&self) -> Option<[u8; 32]> {
        self.preimage.as_ref().map(|p| Sha256::digest(p).into())
    }

    /// The public inputs a verifier needs (ONE excluded): the packed digest.
    pub fn public_inputs(&self) -> Option<Vec<Scalar>> {
        self.digest().map(|d| public_inputs_for_digest(&d))
    }

    /// A stable identifier of the circuit's shape, used to name parameter files.
    pub fn shape_id(&self) -> String {
        format!("sha256-{}blk-v1", self.blocks)
    }
}

/// Public inputs (ONE excluded) for a digest: its bits, big-endian within bytes, packed 254 to a scalar.
pub fn public_inputs_for_digest(digest: &[u8; 32]) -> Vec<Scalar> {
    multipack::compute_multipacking(&multipack::bytes_to_bits(digest))
}

impl Circuit<Scalar> for Sha256Circuit {
    fn synthesize<CS: ConstraintSystem<Scalar>>(self, cs: &mut CS) -> Result<(), SynthesisError> {
        let len = Self::preimage_len(self.blocks);
        let bit_values: Vec<Option<bool>> = match &self.preimage {
            Some(p) => multipack::bytes_to_bits(p).into_iter().map(Some).collect(),
            None => vec![None; 8 * len],
        };
        let bits = bit_values
            .into_iter()
            .enumerate()
            .map(|(i, b)| {
                AllocatedBit::alloc(cs.namespace(|| format!("preimage bit {i}")), b)
                    .map(Boolean::from)
            })
            .collect::<Result<Vec<_>, _>>()?;
        let digest = sha256(cs.namespace(|| "sha256"), &bits)?;
        multipack::pack_into_inputs(cs.namespace(|| "digest"), &digest)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use bellpepper_core::test_cs::TestConstraintSystem;

    #[test]
    fn sha256_circuit_is_satisfied_and_exposes_the_digest() {
        let preimage: Vec<u8> = (0..Sha256Circuit::preimage_len(2))
            .map(|i| i as u8)
            .collect();
        let circuit = Sha256Circuit::new(2, preimage.clone()).unwrap();
        let expected = circuit.public_inputs().unwrap();
        let mut cs = TestConstraintSystem::<Scalar>::new();
        circuit.synthesize(&mut cs).unwrap();
        assert!(
            cs.is_satisfied(),
            "unsatisfied: {:?}",
            cs.which_is_unsatisfied()
        );
        assert_eq!(cs.num_inputs(), 1 + expected.len());
        for (i, x) in expected.iter().enumerate() {
            assert_eq!(cs.get_input(i + 1, &format!("digest/input {i}")), *x);
        }
        // A wrong digest must not verify as the public input.
        let other = Sha256Circuit::new(2, vec![0u8; preimage.len()]).unwrap();
        assert_ne!(other.public_inputs().unwrap(), expected);
    }

    #[test]
    fn porep_like_circuit_is_satisfied() {
        use lc_indexer::{SmallVecTerms, VecTerms};
        // Several blocks, so packings take earlier packed values as well as bits; two seeds, two backends.
        for seed in [1, 2] {
            let mut cs = TestConstraintSystem::<Scalar>::new();
            PorepLikeCircuit::<VecTerms>::new(7 * BLOCK_ROWS, 3, seed)
                .synthesize(&mut cs)
                .unwrap();
            assert!(
                cs.is_satisfied(),
                "seed {seed}: {:?}",
                cs.which_is_unsatisfied()
            );
            assert_eq!(cs.num_constraints(), 7 * BLOCK_ROWS);
            let mut small = TestConstraintSystem::<Scalar>::new();
            PorepLikeCircuit::<SmallVecTerms<2>>::new(7 * BLOCK_ROWS, 3, seed)
                .synthesize(&mut small)
                .unwrap();
            assert!(small.is_satisfied());
            assert_eq!(small.hash(), cs.hash(), "same shape, whatever the backend");
        }
        // Without a seed the circuit has its shape but no values.
        let mut cs = TestConstraintSystem::<Scalar>::new();
        let err = PorepLikeCircuit::<VecTerms>::blank(BLOCK_ROWS, 3)
            .synthesize(&mut cs)
            .unwrap_err();
        assert!(matches!(err, SynthesisError::AssignmentMissing), "{err:?}");
    }

    #[test]
    fn wrong_preimage_length_is_rejected() {
        let err = Sha256Circuit::new(1, vec![0; 64]).unwrap_err();
        assert!(err.contains("55-byte"), "{err}");
        assert!(Sha256Circuit::new(0, vec![]).is_err());
    }
}
