#![doc = include_str!("../README.md")]
#![forbid(unsafe_code)]

mod porep_like;
pub mod sha256;

pub use porep_like::{PorepLikeCircuit, BLOCK_ROWS};

use bellpepper::gadgets::boolean::{AllocatedBit, Boolean};
use bellpepper::gadgets::multipack;
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
///
/// The hash runs through [`sha256::sha256`], whose constraint system is bellpepper's `sha256` gadget's exactly but
/// whose sums are built only inside `enforce` closures, so witness-only synthesis skips them;
/// [`Sha256Circuit::with_bellpepper_gadget`] runs bellpepper's own gadget instead (same constraints, same
/// parameters, same proofs), for comparisons.
#[derive(Clone, Debug)]
pub struct Sha256Circuit {
    blocks: usize,
    preimage: Option<Vec<u8>>,
    bellpepper_gadget: bool,
}

impl Sha256Circuit {
    /// The shape only, for setup: synthesizing it for a proof fails with `AssignmentMissing`.
    pub fn blank(blocks: usize) -> Self {
        assert!(blocks >= 1, "a SHA-256 circuit needs at least one block");
        Self {
            blocks,
            preimage: None,
            bellpepper_gadget: false,
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
            bellpepper_gadget: false,
        })
    }

    /// The same circuit hashed by bellpepper's own `sha256` gadget, whose sums are built outside `enforce` closures
    /// (the same constraint system; for comparing synthesis speed).
    pub fn with_bellpepper_gadget(mut self) -> Self {
        self.bellpepper_gadget = true;
        self
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
        let digest = if self.bellpepper_gadget {
            bellpepper::gadgets::sha256::sha256(cs.namespace(|| "sha256"), &bits)?
        } else {
            sha256::sha256(cs.namespace(|| "sha256"), &bits)?
        };
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
    fn lazy_sha256_is_bellpeppers_constraint_system_exactly() {
        use rand_core::SeedableRng;
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(7);
        for blocks in [1, 2, 3] {
            for circuit in [
                Sha256Circuit::random(blocks, &mut rng),
                Sha256Circuit::blank(blocks),
            ] {
                let with_values = circuit.preimage().is_some();
                let mut ours = TestConstraintSystem::<Scalar>::new();
                let mut theirs = TestConstraintSystem::<Scalar>::new();
                let r1 = circuit.clone().synthesize(&mut ours);
                let r2 = circuit
                    .clone()
                    .with_bellpepper_gadget()
                    .synthesize(&mut theirs);
                // Without a preimage both stop at the first missing value; with one both succeed.
                assert_eq!(r1.is_ok(), with_values, "{blocks} blocks: {r1:?}");
                assert_eq!(r2.is_ok(), with_values, "{blocks} blocks: {r2:?}");
                if !with_values {
                    continue;
                }
                assert_eq!(ours.num_constraints(), theirs.num_constraints());
                assert_eq!(ours.num_inputs(), theirs.num_inputs());
                assert_eq!(
                    ours.hash(),
                    theirs.hash(),
                    "{blocks} blocks: the constraint systems differ"
                );
                // Satisfied with the same public inputs: the bits' constraints fix the witness, so it is the same.
                assert!(ours.is_satisfied(), "{:?}", ours.which_is_unsatisfied());
                let want = circuit.public_inputs().unwrap();
                for (i, x) in want.iter().enumerate() {
                    assert_eq!(ours.get_input(i + 1, &format!("digest/input {i}")), *x);
                }
            }
        }
    }

    #[test]
    fn lazy_sha256_matches_bellpeppers_on_every_input_length() {
        use rand_core::{RngCore, SeedableRng};
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(8);
        // Lengths around the padding boundaries (55, 56, 63, 64 bytes), the empty input, and two blocks and more.
        for len in [0usize, 1, 3, 55, 56, 63, 64, 65, 119, 120, 200] {
            let mut bytes = vec![0u8; len];
            rng.fill_bytes(&mut bytes);
            let bits = multipack::bytes_to_bits(&bytes);
            let run = |lazy: bool| {
                let mut cs = TestConstraintSystem::<Scalar>::new();
                let input: Vec<Boolean> = bits
                    .iter()
                    .enumerate()
                    .map(|(i, &b)| {
                        AllocatedBit::alloc(cs.namespace(|| format!("bit {i}")), Some(b))
                            .unwrap()
                            .into()
                    })
                    .collect();
                let out = if lazy {
                    sha256::sha256(cs.namespace(|| "sha256"), &input).unwrap()
                } else {
                    bellpepper::gadgets::sha256::sha256(cs.namespace(|| "sha256"), &input).unwrap()
                };
                let digest: Vec<bool> = out.iter().map(|b| b.get_value().unwrap()).collect();
                assert!(
                    cs.is_satisfied(),
                    "{len} bytes: {:?}",
                    cs.which_is_unsatisfied()
                );
                (cs.hash(), digest)
            };
            let (ours, theirs) = (run(true), run(false));
            assert_eq!(
                ours.0, theirs.0,
                "{len} bytes: the constraint systems differ"
            );
            assert_eq!(ours.1, theirs.1, "{len} bytes");
            assert_eq!(
                ours.1,
                multipack::bytes_to_bits(&Sha256::digest(&bytes)),
                "{len} bytes"
            );
        }
    }

    #[test]
    fn wrong_preimage_length_is_rejected() {
        let err = Sha256Circuit::new(1, vec![0; 64]).unwrap_err();
        assert!(err.contains("55-byte"), "{err}");
        assert!(Sha256Circuit::new(0, vec![]).is_err());
    }
}
