//! Parameter generation from a circuit's R1CS: a toxic-waste setup for tests and built-in circuits.

use bellpepper_core::Circuit;
use blstrs::{G1Affine, G1Projective, G2Affine, G2Projective, Scalar};
use ff::{BatchInvert, Field, PrimeField};
use group::{Curve, Group};
use ntt_cuda::{powers, Domain};
use r1cs_synth::{R1csShape, SparseMatrix, Var};
use rand_core::RngCore;
use rayon::prelude::*;

use crate::fixed_base::FixedBase;
use crate::{Error, Parameters, Result, VerifyingKey};

/// Generates Groth16 parameters for `circuit` with fresh random τ, α, β, γ, δ from `rng`.
///
/// The result is what bellperson's generator would produce for the same secrets: the same sections, with identity points dropped from `a`, `b_g1` and `b_g2`.
/// The secrets are dropped when this returns; anyone who saw them could forge proofs, so these parameters are for tests and demonstrations, never a trusted setup.
///
/// # Errors
/// [`Error::Setup`] if the circuit fails to synthesize, its domain is too large, or an aux variable appears in no constraint (its L point would be the identity, which bellperson's reader rejects).
pub fn setup<C: Circuit<Scalar>>(circuit: C, rng: &mut impl RngCore) -> Result<Parameters> {
    let shape =
        R1csShape::record(circuit).map_err(|e| Error::Setup(format!("synthesis failed: {e}")))?;
    let nonzero = |rng: &mut dyn RngCore| loop {
        let x = Scalar::random(&mut *rng);
        if !bool::from(x.is_zero()) {
            break x;
        }
    };
    let (alpha, beta, gamma, delta) = (nonzero(rng), nonzero(rng), nonzero(rng), nonzero(rng));
    // τ must lie outside the domain (τ^m ≠ 1); a random τ does with overwhelming probability, and we check.
    let m = shape.num_constraints().max(1).next_power_of_two();
    let log_m = m.trailing_zeros();
    if log_m > Scalar::S {
        return Err(Error::Setup(format!(
            "{} constraints exceed the field's 2^{} domain",
            shape.num_constraints(),
            Scalar::S
        )));
    }
    let tau = loop {
        let t = nonzero(rng);
        if t.pow_vartime([m as u64]) != Scalar::ONE {
            break t;
        }
    };
    let secrets = Secrets {
        tau,
        alpha,
        beta,
        gamma,
        delta,
    };
    generate(&shape, m, &secrets)
}

struct Secrets {
    tau: Scalar,
    alpha: Scalar,
    beta: Scalar,
    gamma: Scalar,
    delta: Scalar,
}

/// L_j(τ) for j < m: the Lagrange basis of ⟨ω⟩ at τ, (τ^m − 1)/m · ω^j / (τ − ω^j).
fn lagrange_at(tau: Scalar, m: usize) -> Vec<Scalar> {
    let omega = Domain::new(m.trailing_zeros())
        .expect("caller checked the size")
        .omega();
    let z_over_m = (tau.pow_vartime([m as u64]) - Scalar::ONE)
        * Scalar::from(m as u64).invert().expect("m < p");
    let omega_j = powers(omega, m);
    let mut denom: Vec<Scalar> = omega_j.par_iter().map(|w| tau - w).collect();
    denom.par_chunks_mut(4096).for_each(|c| {
        c.batch_invert();
    });
    omega_j
        .par_iter()
        .zip(denom.par_iter())
        .map(|(w, d)| z_over_m * w * d)
        .collect()
}

/// For each variable (inputs, then aux), Σ over rows of coefficient · L_row(τ).
fn evaluate_columns(
    matrix: &SparseMatrix,
    lagrange: &[Scalar],
    num_inputs: usize,
    num_aux: usize,
) -> Vec<Scalar> {
    let mut out = vec![Scalar::ZERO; num_inputs + num_aux];
    for (row, &l) in lagrange.iter().enumerate().take(matrix.rows()) {
        for (var, coeff) in matrix.row(row) {
            let col = match var {
                Var::Input(i) => *i,
                Var::Aux(i) => num_inputs + i,
            };
            out[col] += l * coeff;
        }
    }
    out
}

fn nonzero_only(v: &[Scalar]) -> Vec<Scalar> {
    v.iter()
        .copied()
        .filter(|x| !bool::from(x.is_zero()))
        .collect()
}

fn generate(shape: &R1csShape, m: usize, s: &Secrets) -> Result<Parameters> {
    let (n_in, n_aux) = (shape.num_inputs, shape.num_aux);
    let lagrange = lagrange_at(s.tau, m);
    let (u, (v, w)) = rayon::join(
        || evaluate_columns(&shape.a, &lagrange, n_in, n_aux),
        || {
            rayon::join(
                || evaluate_columns(&shape.b, &lagrange, n_in, n_aux),
                || evaluate_columns(&shape.c, &lagrange, n_in, n_aux),
            )
        },
    );
    let gamma_inv = s.gamma.invert().expect("gamma is non-zero");
    let delta_inv = s.delta.invert().expect("delta is non-zero");
    let combined = |i: usize, scale: Scalar| (s.beta * u[i] + s.alpha * v[i] + w[i]) * scale;
    let ic_scalars: Vec<Scalar> = (0..n_in).map(|i| combined(i, gamma_inv)).collect();
    let l_scalars: Vec<Scalar> = (n_in..n_in + n_aux)
        .into_par_iter()
        .map(|i| combined(i, delta_inv))
        .collect();
    if let Some(i) = l_scalars.iter().position(|x| bool::from(x.is_zero())) {
        return Err(Error::Setup(format!(
            "aux variable {i} appears in no constraint: its L point would be the identity, which parameter readers reject"
        )));
    }
    let z_over_delta = (s.tau.pow_vartime([m as u64]) - Scalar::ONE) * delta_inv;
    let h_scalars: Vec<Scalar> = powers(s.tau, m - 1)
        .into_par_iter()
        .map(|t| t * z_over_delta)
        .collect();
    let v_nonzero = nonzero_only(&v);
    let g1_comb = FixedBase::new(G1Projective::generator());
    let g2_comb = FixedBase::new(G2Projective::generator());
    let g1_batch = |scalars: &[Scalar]| -> Vec<G1Affine> { g1_comb.mul_batch(scalars) };
    let g2_batch = |scalars: &[Scalar]| -> Vec<G2Affine> { g2_comb.mul_batch(scalars) };
    let g1 = G1Projective::generator();
    let g2 = G2Projective::generator();
    Ok(Parameters {
        vk: VerifyingKey {
            alpha_g1: (g1 * s.alpha).to_affine(),
            beta_g1: (g1 * s.beta).to_affine(),
            beta_g2: (g2 * s.beta).to_affine(),
            gamma_g2: (g2 * s.gamma).to_affine(),
            delta_g1: (g1 * s.delta).to_affine(),
            delta_g2: (g2 * s.delta).to_affine(),
            ic: g1_batch(&ic_scalars),
        },
        h: g1_batch(&h_scalars),
        l: g1_batch(&l_scalars),
        a: g1_batch(&nonzero_only(&u)),
        b_g1: g1_batch(&v_nonzero),
        b_g2: g2_batch(&v_nonzero),
    })
}
