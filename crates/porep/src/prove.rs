//! Commit-2 through the engine, and verification through filecoin-proofs.

use filecoin_proofs::{with_shape, DefaultPieceHasher};
use filecoin_proofs_api::SectorId;
use groth16_pipeline::{Engine, PartitionOutcome, RunSummary};
use r1cs_synth::{synthesize, ProvingAssignment, SynthesisOptions};
use rand_core::RngCore;
use storage_proofs_core::compound_proof::CompoundProof;
use storage_proofs_core::merkle::MerkleTreeTrait;
use storage_proofs_porep::stacked::{StackedCircuit, StackedCompound};

use crate::c1::compound_params;
use crate::{C1Output, Error, Result, Sector};

/// Bytes of one partition's proof in filecoin-proofs' layout.
pub const PARTITION_PROOF_BYTES: usize = 192;

/// A sector's Commit-2 proof and how it was made.
#[derive(Debug)]
pub struct PorepProof {
    /// filecoin-proofs' layout: one 192-byte Groth16 proof per partition, in partition order.
    pub bytes: Vec<u8>,
    /// Each partition's outcome (every one succeeded) with its timings.
    pub partitions: Vec<PartitionOutcome>,
    /// The engine's summary of the run.
    pub summary: RunSummary,
}

/// Builds partition `k`'s circuit: storage-proofs-porep's `StackedCircuit`, exactly as filecoin-proofs'
/// `seal_commit_phase2` builds it.
pub(crate) fn partition_circuits<Tree: 'static + MerkleTreeTrait>(
    c1: &C1Output,
) -> Result<impl Fn(usize) -> Result<StackedCircuit<Tree, DefaultPieceHasher>> + Sync> {
    let pp = compound_params::<Tree>(c1.registered_proof())?;
    let proofs = c1.vanilla_proofs::<Tree>()?;
    let pub_inputs = c1.public_inputs::<Tree>()?;
    Ok(move |k: usize| {
        // The stacked circuit has no component private inputs (the unit type).
        <StackedCompound<Tree, DefaultPieceHasher> as CompoundProof<_, _>>::circuit(
            &pub_inputs,
            (),
            &proofs[k],
            &pp.vanilla_params,
            Some(k),
        )
        .map_err(|e| Error::Prove {
            partition: k,
            message: format!("building the circuit: {e:#}"),
        })
    })
}

/// Synthesizes partition `k` of `c1` (for statistics and tests; [`prove`] synthesizes inside the engine).
///
/// # Errors
/// [`Error::Prove`] naming the partition.
pub fn synthesize_partition(c1: &C1Output, k: usize) -> Result<ProvingAssignment> {
    with_shape!(c1.sector_size(), synthesize_tree, c1, k,)
}

fn synthesize_tree<Tree: 'static + MerkleTreeTrait>(
    c1: &C1Output,
    k: usize,
) -> Result<ProvingAssignment> {
    let circuit = partition_circuits::<Tree>(c1)?(k)?;
    synthesize(circuit, &SynthesisOptions::default()).map_err(|e| Error::Prove {
        partition: k,
        message: format!("synthesis: {e}"),
    })
}

/// Proves every partition of `c1` on `engine`, whose parameters must be this proof type's. Call
/// [`C1Output::check`] first: it catches bad inputs before this spends minutes. `on_done` hears of each partition
/// as the engine finishes it. Every proof has passed the engine's verifier check before it is returned.
///
/// # Errors
/// [`Error::Prove`] for the first partition that failed (the engine already retried it on the CPU), after all
/// partitions have run.
pub fn prove(
    c1: &C1Output,
    engine: &Engine,
    rng: &mut impl RngCore,
    on_done: impl FnMut(&PartitionOutcome),
) -> Result<PorepProof> {
    with_shape!(c1.sector_size(), prove_tree, c1, engine, rng, on_done,)
}

fn prove_tree<Tree: 'static + MerkleTreeTrait>(
    c1: &C1Output,
    engine: &Engine,
    rng: &mut impl RngCore,
    on_done: impl FnMut(&PartitionOutcome),
) -> Result<PorepProof> {
    let circuit = partition_circuits::<Tree>(c1)?;
    let synthesize_partition = |k: usize| -> std::result::Result<ProvingAssignment, Error> {
        let circuit = circuit(k)?;
        synthesize(circuit, &SynthesisOptions::default()).map_err(|e| Error::Prove {
            partition: k,
            message: format!("synthesis: {e}"),
        })
    };
    let (partitions, summary) =
        engine.prove_partitions(c1.partitions(), synthesize_partition, rng, on_done);
    let mut bytes = Vec::with_capacity(PARTITION_PROOF_BYTES * partitions.len());
    for (k, outcome) in partitions.iter().enumerate() {
        match &outcome.proof {
            Ok(proof) => bytes.extend_from_slice(&proof.to_bytes()),
            Err(e) => {
                return Err(Error::Prove {
                    partition: k,
                    message: e.to_string(),
                })
            }
        }
    }
    Ok(PorepProof {
        bytes,
        partitions,
        summary,
    })
}

/// Verifies a Commit-2 proof with filecoin-proofs' own `verify_seal` (the check the chain makes), against the
/// verifying key in the parameter cache.
///
/// # Errors
/// [`Error::C1Invalid`] if the proof is not 192 bytes per partition; [`Error::Filecoin`] if filecoin-proofs
/// cannot run the check (missing `.vk`, a proof whose points do not decode).
pub fn verify(c1: &C1Output, sector: &Sector, proof: &[u8]) -> Result<bool> {
    let expected = PARTITION_PROOF_BYTES * c1.partitions();
    if proof.len() != expected {
        return Err(Error::C1Invalid {
            source_name: c1.source_name.clone(),
            message: format!(
                "the proof has {} bytes; a {:?} proof has {} partitions of {PARTITION_PROOF_BYTES} bytes = {expected}",
                proof.len(),
                c1.registered_proof(),
                c1.partitions()
            ),
        });
    }
    let inner = &c1.inner;
    filecoin_proofs_api::seal::verify_seal(
        inner.registered_proof,
        inner.comm_r,
        inner.comm_d,
        sector.prover_id(),
        SectorId::from(sector.sector_number),
        inner.ticket,
        inner.seed,
        proof,
    )
    .map_err(Error::filecoin)
}
