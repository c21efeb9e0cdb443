//! The CPU proving backend.

use std::time::{Duration, Instant};

use blstrs::{G1Projective, G2Projective, Scalar};
use ff::Field;
use group::{prime::PrimeCurveAffine, Curve};
use msm_cuda::Selection;
use r1cs_synth::{Density, ProvingAssignment};
use rand_core::RngCore;
use srs_loader::Parameters;

use crate::{Error, Proof, Result};

/// Where the time of one proof went.
#[derive(Clone, Copy, Debug, Default)]
pub struct ProofTimings {
    /// H polynomial (three inverse NTTs, three coset NTTs, pointwise, one inverse coset NTT).
    pub h_poly: Duration,
    /// H MSM.
    pub msm_h: Duration,
    /// L MSM.
    pub msm_l: Duration,
    /// A MSM (inputs and aux).
    pub msm_a: Duration,
    /// B MSM in G1.
    pub msm_b_g1: Duration,
    /// B MSM in G2.
    pub msm_b_g2: Duration,
    /// Combining the MSMs with α, β, δ, r and s.
    pub assembly: Duration,
}

impl ProofTimings {
    /// The sum of the phases.
    pub fn total(&self) -> Duration {
        self.h_poly
            + self.msm_h
            + self.msm_l
            + self.msm_a
            + self.msm_b_g1
            + self.msm_b_g2
            + self.assembly
    }
}

fn selection(d: &Density) -> Selection<'_> {
    Selection {
        words: d.words(),
        len: d.len(),
    }
}

fn msm_err(what: &'static str) -> impl FnOnce(msm_cuda::Error) -> Error {
    move |source| Error::Msm { what, source }
}

fn timed<T>(slot: &mut Duration, f: impl FnOnce() -> T) -> T {
    let t = Instant::now();
    let out = f();
    *slot = t.elapsed();
    out
}

/// Proves each assignment against one parameter set, with fresh r and s per proof from `rng`.
///
/// Parameters are checked against every assignment first (sizes and densities), so a mismatch fails before any proving work.
///
/// # Errors
/// [`Error::Params`] naming the circuit whose sizes do not fit; other errors from the NTT or MSM stages.
pub fn prove(
    params: &Parameters,
    assignments: Vec<ProvingAssignment>,
    rng: &mut impl RngCore,
) -> Result<Vec<(Proof, ProofTimings)>> {
    params
        .check_consistent()
        .map_err(|source| Error::Params { circuit: 0, source })?;
    for (circuit, pa) in assignments.iter().enumerate() {
        params
            .check_matches(pa)
            .map_err(|source| Error::Params { circuit, source })?;
    }
    assignments
        .into_iter()
        .map(|pa| {
            let r = Scalar::random(&mut *rng);
            let s = Scalar::random(&mut *rng);
            prove_checked(params, pa, r, s)
        })
        .collect()
}

/// Proves one assignment with the given randomizers: deterministic, for tests against bellperson's `create_proof`.
///
/// # Errors
/// As [`prove`].
pub fn prove_one_with_randomness(
    params: &Parameters,
    pa: ProvingAssignment,
    r: Scalar,
    s: Scalar,
) -> Result<(Proof, ProofTimings)> {
    params
        .check_consistent()
        .map_err(|source| Error::Params { circuit: 0, source })?;
    params
        .check_matches(&pa)
        .map_err(|source| Error::Params { circuit: 0, source })?;
    prove_checked(params, pa, r, s)
}

fn prove_checked(
    params: &Parameters,
    pa: ProvingAssignment,
    r: Scalar,
    s: Scalar,
) -> Result<(Proof, ProofTimings)> {
    let mut t = ProofTimings::default();
    let ProvingAssignment {
        a,
        b,
        c,
        input_assignment: inputs,
        aux_assignment: aux,
        a_aux_density,
        b_input_density,
        b_aux_density,
        ..
    } = pa;
    let h = timed(&mut t.h_poly, || ntt_cuda::h_polynomial(a, b, c))?;
    let h_msm = timed(&mut t.msm_h, || msm_cuda::msm_g1(&params.h, &h)).map_err(msm_err("H"))?;
    drop(h);
    let l_msm = timed(&mut t.msm_l, || msm_cuda::msm_g1(&params.l, &aux)).map_err(msm_err("L"))?;

    let n_in = inputs.len();
    let a_msm = timed(&mut t.msm_a, || -> Result<G1Projective> {
        let a_in = msm_cuda::msm_g1(&params.a[..n_in], &inputs).map_err(msm_err("A inputs"))?;
        let a_aux = msm_cuda::msm_g1_selected(&params.a[n_in..], &aux, selection(&a_aux_density))
            .map_err(msm_err("A aux"))?;
        Ok(a_in + a_aux)
    })?;

    let b_in = b_input_density.count_ones();
    let b_g1_msm = timed(&mut t.msm_b_g1, || -> Result<G1Projective> {
        let x =
            msm_cuda::msm_g1_selected(&params.b_g1[..b_in], &inputs, selection(&b_input_density))
                .map_err(msm_err("B_G1 inputs"))?;
        let w = msm_cuda::msm_g1_selected(&params.b_g1[b_in..], &aux, selection(&b_aux_density))
            .map_err(msm_err("B_G1 aux"))?;
        Ok(x + w)
    })?;
    let b_g2_msm = timed(&mut t.msm_b_g2, || -> Result<G2Projective> {
        let x =
            msm_cuda::msm_g2_selected(&params.b_g2[..b_in], &inputs, selection(&b_input_density))
                .map_err(msm_err("B_G2 inputs"))?;
        let w = msm_cuda::msm_g2_selected(&params.b_g2[b_in..], &aux, selection(&b_aux_density))
            .map_err(msm_err("B_G2 aux"))?;
        Ok(x + w)
    })?;

    let proof = timed(&mut t.assembly, || {
        let vk = &params.vk;
        let g_a = vk.alpha_g1.to_curve() + a_msm + vk.delta_g1 * r;
        let g_b = vk.beta_g2.to_curve() + b_g2_msm + vk.delta_g2 * s;
        let g_c = a_msm * s
            + b_g1_msm * r
            + vk.delta_g1 * (r * s)
            + vk.alpha_g1 * s
            + vk.beta_g1 * r
            + h_msm
            + l_msm;
        Proof {
            a: g_a.to_affine(),
            b: g_b.to_affine(),
            c: g_c.to_affine(),
        }
    });
    Ok((proof, t))
}
