//! Groth16 verification: e(A, B) = e(α₁, β₂) · e(Σ xᵢ·ICᵢ, γ₂) · e(C, δ₂).

use blstrs::{Bls12, G1Affine, G1Projective, G2Prepared, Gt, Scalar};
use group::{prime::PrimeCurveAffine, Curve};
use pairing::{MillerLoopResult, MultiMillerLoop};
use srs_loader::VerifyingKey;

use crate::{Error, Proof, Result};

/// A verifying key with its pairing-side precomputation done once.
#[derive(Debug)]
pub struct PreparedVerifyingKey {
    alpha_g1_beta_g2: Gt,
    neg_gamma_g2: G2Prepared,
    neg_delta_g2: G2Prepared,
    ic: Vec<G1Affine>,
}

impl PreparedVerifyingKey {
    /// Number of public inputs a proof takes (ONE excluded).
    pub fn num_public_inputs(&self) -> usize {
        self.ic.len().saturating_sub(1)
    }
}

/// Precomputes e(α₁, β₂) and the prepared −γ₂ and −δ₂.
pub fn prepare_verifying_key(vk: &VerifyingKey) -> PreparedVerifyingKey {
    PreparedVerifyingKey {
        alpha_g1_beta_g2: blstrs::pairing(&vk.alpha_g1, &vk.beta_g2),
        neg_gamma_g2: G2Prepared::from(-vk.gamma_g2),
        neg_delta_g2: G2Prepared::from(-vk.delta_g2),
        ic: vk.ic.clone(),
    }
}

/// Checks one proof against its public inputs (ONE excluded).
///
/// Returns `Ok(false)` for a proof that does not verify.
///
/// # Errors
/// [`Error::InputCount`] if the number of inputs does not match the key.
pub fn verify_proof(
    pvk: &PreparedVerifyingKey,
    proof: &Proof,
    public_inputs: &[Scalar],
) -> Result<bool> {
    if public_inputs.len() + 1 != pvk.ic.len() {
        return Err(Error::InputCount {
            expected: pvk.num_public_inputs(),
            got: public_inputs.len(),
        });
    }
    // Σ xᵢ·ICᵢ as one MSM: PoRep partitions have 327 inputs, a third of the check's time as a serial sum.
    let sum: G1Projective =
        msm_cuda::msm_g1(&pvk.ic[1..], public_inputs).expect("lengths checked above");
    let acc = (pvk.ic[0].to_curve() + sum).to_affine();
    // e(A, B) · e(acc, −γ) · e(C, −δ) = e(α, β), with one final exponentiation.
    let b = G2Prepared::from(proof.b);
    let ml = Bls12::multi_miller_loop(&[
        (&proof.a, &b),
        (&acc, &pvk.neg_gamma_g2),
        (&proof.c, &pvk.neg_delta_g2),
    ]);
    Ok(ml.final_exponentiation() == pvk.alpha_g1_beta_g2)
}
