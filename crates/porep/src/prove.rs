//! Commit-2 through the engine, and verification through filecoin-proofs.

use filecoin_proofs::{with_shape, DefaultPieceHasher};
use filecoin_proofs_api::SectorId;
use groth16_pipeline::{Engine, PartitionOutcome, RunSummary};
use std::path::Path;

use filecoin_hashers::Hasher;
use r1cs_synth::{synthesize, CompiledShape, ProvingAssignment, SynthesisOptions};
use rand_core::RngCore;
use storage_proofs_core::compound_proof::CompoundProof;
use storage_proofs_core::merkle::MerkleTreeTrait;
use storage_proofs_porep::stacked::{StackedCircuit, StackedCompound, StackedDrg};

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

/// How partitions are synthesized.
#[derive(Clone, Copy, Debug)]
pub enum Synthesis<'a> {
    /// Every constraint evaluated while the circuit runs, as bellperson does.
    Direct,
    /// Only the witness is computed (the circuit's `enforce` calls are skipped); a, b and c come from sparse
    /// products with the proof type's compiled shape (see [`compiled_shape`]).
    Compiled(&'a CompiledShape),
    /// Only the witness, as `Compiled`, and a, b and c are left to the prover: for an engine given this shape
    /// ([`Engine::with_shape`]), which computes them on the GPU from the witness it uploads anyway.
    Witness(&'a CompiledShape),
}

impl Synthesis<'_> {
    /// Synthesizes `circuit` (partition `k`); the compiled path writes into `spare`'s vectors.
    fn run<C: bellpepper_core::Circuit<blstrs::Scalar>>(
        self,
        circuit: C,
        k: usize,
        spare: ProvingAssignment,
    ) -> Result<ProvingAssignment> {
        match self {
            Synthesis::Direct => {
                drop(spare); // freed before the direct path allocates its own vectors
                synthesize(circuit, &SynthesisOptions::default())
            }
            Synthesis::Compiled(shape) => shape.synthesize_reusing(circuit, spare),
            Synthesis::Witness(shape) => shape.witness_assignment(circuit, spare),
        }
        .map_err(|e| Error::Prove {
            partition: k,
            message: format!("synthesis: {e}"),
        })
    }
}

/// The compiled shape of `rp`'s partition circuit (the same for every partition and sector of that proof type),
/// loaded from `path` if it is there, valid and of this circuit (keyed by filecoin-proofs' parameter identifier),
/// else compiled from the blank circuit and saved there. Returns the shape and, when it was rebuilt, why.
///
/// # Errors
/// [`Error::Filecoin`] if the public parameters cannot be set up; [`Error::Prove`] if compiling fails.
pub fn compiled_shape(
    rp: filecoin_proofs_api::RegisteredSealProof,
    path: &Path,
) -> Result<(CompiledShape, Option<String>)> {
    with_shape!(u64::from(rp.sector_size()), compiled_shape_tree, rp, path,)
}

fn compiled_shape_tree<Tree: 'static + MerkleTreeTrait>(
    rp: filecoin_proofs_api::RegisteredSealProof,
    path: &Path,
) -> Result<(CompiledShape, Option<String>)> {
    let id = crate::params::files(rp)?.identifier;
    let pp = compound_params::<Tree>(rp)?;
    CompiledShape::load_or_compile(path, &id, || {
        <StackedCompound<Tree, DefaultPieceHasher> as CompoundProof<_, _>>::blank_circuit(
            &pp.vanilla_params,
        )
    })
    .map_err(|e| Error::Prove {
        partition: 0,
        message: format!("compiling the circuit's shape: {e}"),
    })
}

/// Partition `k`'s circuit: storage-proofs-porep's `StackedCircuit`, exactly as filecoin-proofs'
/// `seal_commit_phase2` builds it ([`PartitionCircuits::whole`]), or in pieces ([`PartitionCircuits::pieces`]).
pub(crate) struct PartitionCircuits<Tree: 'static + MerkleTreeTrait> {
    pp: storage_proofs_core::compound_proof::PublicParams<
        'static,
        StackedDrg<'static, Tree, DefaultPieceHasher>,
    >,
    proofs: Vec<Vec<filecoin_proofs::VanillaSealProof<Tree>>>,
    pub_inputs: storage_proofs_porep::stacked::PublicInputs<
        <Tree::Hasher as Hasher>::Domain,
        filecoin_proofs::DefaultPieceDomain,
    >,
}

impl<Tree: 'static + MerkleTreeTrait> PartitionCircuits<Tree> {
    pub(crate) fn new(c1: &C1Output) -> Result<Self> {
        Ok(PartitionCircuits {
            pp: compound_params::<Tree>(c1.registered_proof())?,
            proofs: c1.vanilla_proofs::<Tree>()?,
            pub_inputs: c1.public_inputs::<Tree>()?,
        })
    }

    /// The circuit of partition `k` over the vanilla proofs of `challenges` of its challenges.
    fn circuit(
        &self,
        k: usize,
        challenges: std::ops::Range<usize>,
    ) -> Result<StackedCircuit<Tree, DefaultPieceHasher>> {
        let proof = self.proofs.get(k).ok_or_else(|| Error::Prove {
            partition: k,
            message: format!("the C1 output has only {} partitions", self.proofs.len()),
        })?;
        // The stacked circuit has no component private inputs (the unit type).
        <StackedCompound<Tree, DefaultPieceHasher> as CompoundProof<_, _>>::circuit(
            &self.pub_inputs,
            (),
            &proof[challenges].to_vec(),
            &self.pp.vanilla_params,
            Some(k),
        )
        .map_err(|e| Error::Prove {
            partition: k,
            message: format!("building the circuit: {e:#}"),
        })
    }

    /// Partition `k`'s circuit.
    pub(crate) fn whole(&self, k: usize) -> Result<StackedCircuit<Tree, DefaultPieceHasher>> {
        let n = self.proofs.get(k).map_or(0, Vec::len);
        self.circuit(k, 0..n)
    }

    /// Partition `k`'s circuit in pieces, one a challenge: each synthesizes the circuit's head (the public inputs,
    /// comm_r's check) and that challenge's proof, which read nothing of the other challenges (see
    /// [`r1cs_synth::pieces`]).
    pub(crate) fn pieces(&self, k: usize) -> Result<Vec<StackedCircuit<Tree, DefaultPieceHasher>>> {
        let n = self.proofs.get(k).map_or(0, Vec::len);
        (0..n).map(|i| self.circuit(k, i..i + 1)).collect()
    }
}

/// Builds and synthesizes partition k.
type BuildPartition =
    dyn Fn(usize, Synthesis<'_>, ProvingAssignment) -> Result<ProvingAssignment> + Send + Sync;

/// A sector's partitions, ready to synthesize one at a time (public parameters set up and vanilla proofs decoded
/// once): for callers that feed the partitions of several sectors through one engine run, as the daemon does.
pub struct Partitions {
    build: Box<BuildPartition>,
    count: usize,
}

impl std::fmt::Debug for Partitions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Partitions")
            .field("count", &self.count)
            .finish_non_exhaustive()
    }
}

impl Partitions {
    /// Prepares `c1`'s partitions (call [`C1Output::check`] first).
    ///
    /// # Errors
    /// [`Error::Filecoin`] or [`Error::C1Invalid`] if the circuits cannot be set up.
    pub fn new(c1: &C1Output) -> Result<Self> {
        with_shape!(c1.sector_size(), partitions_tree, c1,)
    }

    /// How many partitions the sector has.
    pub fn count(&self) -> usize {
        self.count
    }

    /// Synthesizes partition `k`.
    ///
    /// # Errors
    /// [`Error::Prove`] naming the partition.
    pub fn synthesize(&self, k: usize, synthesis: Synthesis<'_>) -> Result<ProvingAssignment> {
        self.synthesize_reusing(k, synthesis, ProvingAssignment::default())
    }

    /// [`Partitions::synthesize`] into the vectors of a partition the caller is done with (compiled synthesis only;
    /// see [`CompiledShape::synthesize_reusing`]).
    ///
    /// # Errors
    /// [`Error::Prove`] naming the partition.
    pub fn synthesize_reusing(
        &self,
        k: usize,
        synthesis: Synthesis<'_>,
        spare: ProvingAssignment,
    ) -> Result<ProvingAssignment> {
        (self.build)(k, synthesis, spare)
    }
}

fn partitions_tree<Tree: 'static + MerkleTreeTrait>(c1: &C1Output) -> Result<Partitions> {
    let circuits = PartitionCircuits::<Tree>::new(c1)?;
    // On the compiled paths a partition's witness is computed in pieces, a challenge each, unless turned off.
    let in_pieces = r1cs_synth::pieces::enabled();
    Ok(Partitions {
        build: Box::new(move |k, synthesis, spare| {
            let failed = |e: r1cs_synth::Error| Error::Prove {
                partition: k,
                message: format!("synthesis: {e}"),
            };
            match synthesis {
                Synthesis::Witness(shape) if in_pieces => shape
                    .witness_assignment_pieces(circuits.pieces(k)?, spare)
                    .map_err(failed),
                Synthesis::Compiled(shape) if in_pieces => shape
                    .synthesize_pieces_reusing(circuits.pieces(k)?, spare)
                    .map_err(failed),
                _ => synthesis.run(circuits.whole(k)?, k, spare),
            }
        }),
        count: c1.partitions(),
    })
}

/// Synthesizes partition `k` of `c1` (for statistics and tests; [`prove`] synthesizes inside the engine).
///
/// # Errors
/// [`Error::Prove`] naming the partition.
pub fn synthesize_partition(
    c1: &C1Output,
    k: usize,
    synthesis: Synthesis<'_>,
) -> Result<ProvingAssignment> {
    Partitions::new(c1)?.synthesize(k, synthesis)
}

/// Proves every partition of `c1` on `engine`, whose parameters must be this proof type's, synthesizing each as
/// `synthesis` says. Call
/// [`C1Output::check`] first: it catches bad inputs before this spends minutes. `on_done` hears of each partition
/// as the engine finishes it. Every proof has passed the engine's verifier check before it is returned.
///
/// # Errors
/// [`Error::Prove`] for the first partition that failed (the engine already retried it on the CPU), after all
/// partitions have run.
pub fn prove(
    c1: &C1Output,
    engine: &Engine,
    synthesis: Synthesis<'_>,
    rng: &mut impl RngCore,
    on_done: impl FnMut(&PartitionOutcome),
) -> Result<PorepProof> {
    let (partitions, summary) = prove_copies(c1, engine, synthesis, 1, rng, on_done)?;
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

/// Proves `c1` `copies` times in one engine run (a benchmark of sustained throughput: the engine overlaps one
/// copy's synthesis with another's proving). Outcome `i` is partition `i % partitions` of copy `i / partitions`;
/// failures stay in their outcomes.
///
/// # Errors
/// [`Error::Filecoin`] or [`Error::C1Invalid`] if the circuits cannot be set up.
pub fn prove_copies(
    c1: &C1Output,
    engine: &Engine,
    synthesis: Synthesis<'_>,
    copies: usize,
    rng: &mut impl RngCore,
    on_done: impl FnMut(&PartitionOutcome),
) -> Result<(Vec<PartitionOutcome>, RunSummary)> {
    let parts = Partitions::new(c1)?;
    let count = parts.count();
    let synthesize_partition =
        |i: usize, spare| parts.synthesize_reusing(i % count, synthesis, spare);
    Ok(engine.prove_partitions_reusing(count * copies, synthesize_partition, rng, on_done))
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
