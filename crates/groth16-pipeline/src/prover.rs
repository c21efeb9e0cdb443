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

/// Where the H polynomial is computed.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum HBackend {
    /// The GPU when one is usable and the domain is at least 2^[`GPU_H_MIN_LOG2`], else the CPU.
    #[default]
    Auto,
    /// Always the CPU.
    Cpu,
    /// Always the GPU; an error without one.
    Gpu,
    /// Both, compared element by element: a debug switch that fails the proof on any difference.
    Check,
}

impl HBackend {
    /// From `CUZK_H_BACKEND` (auto, cpu, gpu, check); auto when unset.
    ///
    /// # Errors
    /// An unknown value, named.
    pub fn from_env() -> std::result::Result<Self, String> {
        match std::env::var("CUZK_H_BACKEND") {
            Err(_) => Ok(HBackend::Auto),
            Ok(v) => v.parse(),
        }
    }
}

impl std::str::FromStr for HBackend {
    type Err = String;
    fn from_str(s: &str) -> std::result::Result<Self, String> {
        match s {
            "auto" => Ok(HBackend::Auto),
            "cpu" => Ok(HBackend::Cpu),
            "gpu" => Ok(HBackend::Gpu),
            "check" => Ok(HBackend::Check),
            other => Err(format!(
                "unknown H backend {other:?}: expected auto, cpu, gpu or check"
            )),
        }
    }
}

/// Below 2^18 constraints [`HBackend::Auto`] keeps H on the CPU: measured on the H200 host (2026-11-30), H of a 2^16
/// domain took 25 ms on its 16 cores against 245 ms through the GPU in a fresh process (context start-up, allocations,
/// uploads), while at 2^20 the CPU takes 464 ms and the GPU kernels 4.4 ms.
pub const GPU_H_MIN_LOG2: u32 = 18;

/// How to prove.
#[derive(Clone, Copy, Debug, Default)]
pub struct ProverOptions {
    /// Where the H polynomial runs.
    pub h_backend: HBackend,
}

/// Where the time of one proof went.
#[derive(Clone, Copy, Debug, Default)]
pub struct ProofTimings {
    /// Which backend computed H: "cpu", "gpu" or "cpu+gpu" (checked).
    pub h_backend: &'static str,
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
    prove_with(params, assignments, rng, &ProverOptions::default())
}

/// As [`prove`], with options.
///
/// # Errors
/// As [`prove`]; with [`HBackend::Gpu`], [`Error::Ntt`] without a GPU; with [`HBackend::Check`], [`Error::DualCheck`] on a difference.
pub fn prove_with(
    params: &Parameters,
    assignments: Vec<ProvingAssignment>,
    rng: &mut impl RngCore,
    opts: &ProverOptions,
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
            prove_checked(params, pa, r, s, opts)
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
    opts: &ProverOptions,
) -> Result<(Proof, ProofTimings)> {
    params
        .check_consistent()
        .map_err(|source| Error::Params { circuit: 0, source })?;
    params
        .check_matches(&pa)
        .map_err(|source| Error::Params { circuit: 0, source })?;
    prove_checked(params, pa, r, s, opts)
}

/// The H polynomial on the chosen backend.
fn h_poly(
    a: Vec<Scalar>,
    b: Vec<Scalar>,
    c: Vec<Scalar>,
    backend: HBackend,
) -> Result<(Vec<Scalar>, &'static str)> {
    let gpu = |a: &[Scalar], b: &[Scalar], c: &[Scalar]| -> Result<Vec<Scalar>> {
        let log_n = ntt_cuda::Domain::for_len(a.len())?.log_size();
        let domain = ntt_cuda::gpu::GpuDomain::shared(log_n)?;
        Ok(ntt_cuda::gpu::h_polynomial_gpu(&domain, a, b, c)?)
    };
    match backend {
        HBackend::Cpu => Ok((ntt_cuda::h_polynomial(a, b, c)?, "cpu")),
        HBackend::Gpu => Ok((gpu(&a, &b, &c)?, "gpu")),
        HBackend::Auto if a.len() >= 1 << GPU_H_MIN_LOG2 && ntt_cuda::gpu::device().is_ok() => {
            Ok((gpu(&a, &b, &c)?, "gpu"))
        }
        HBackend::Auto => Ok((ntt_cuda::h_polynomial(a, b, c)?, "cpu")),
        HBackend::Check => {
            let on_gpu = gpu(&a, &b, &c)?;
            let on_cpu = ntt_cuda::h_polynomial(a, b, c)?;
            let first_difference =
                (0..on_cpu.len().max(on_gpu.len())).find(|&i| on_cpu.get(i) != on_gpu.get(i));
            if let Some(index) = first_difference {
                return Err(Error::DualCheck {
                    stage: "H polynomial",
                    index,
                });
            }
            Ok((on_cpu, "cpu+gpu"))
        }
    }
}

fn prove_checked(
    params: &Parameters,
    pa: ProvingAssignment,
    r: Scalar,
    s: Scalar,
    opts: &ProverOptions,
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
    let (h, h_backend) = timed(&mut t.h_poly, || h_poly(a, b, c, opts.h_backend))?;
    t.h_backend = h_backend;
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

    // B_G1 and B_G2 take the same density-selected scalars: gather them once.
    let b_in = b_input_density.count_ones();
    let b_inputs = selection(&b_input_density)
        .gather(&inputs, b_in)
        .map_err(msm_err("B inputs"))?;
    let b_aux = selection(&b_aux_density)
        .gather(&aux, params.b_g1.len().saturating_sub(b_in))
        .map_err(msm_err("B aux"))?;
    let b_g1_msm = timed(&mut t.msm_b_g1, || -> Result<G1Projective> {
        let x =
            msm_cuda::msm_g1(&params.b_g1[..b_in], &b_inputs).map_err(msm_err("B_G1 inputs"))?;
        let w = msm_cuda::msm_g1(&params.b_g1[b_in..], &b_aux).map_err(msm_err("B_G1 aux"))?;
        Ok(x + w)
    })?;
    let b_g2_msm = timed(&mut t.msm_b_g2, || -> Result<G2Projective> {
        let x =
            msm_cuda::msm_g2(&params.b_g2[..b_in], &b_inputs).map_err(msm_err("B_G2 inputs"))?;
        let w = msm_cuda::msm_g2(&params.b_g2[b_in..], &b_aux).map_err(msm_err("B_G2 aux"))?;
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
