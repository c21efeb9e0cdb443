//! The Commit-1 output: reading it, and checking it against its sector before any proving work.

use std::path::Path;

use base64::Engine as _;
use filecoin_proofs::{as_safe_commitment, with_shape, DefaultPieceDomain, DefaultPieceHasher};
use filecoin_proofs_api::seal::{SealCommitPhase1Output, VanillaSealProof};
use filecoin_proofs_api::RegisteredSealProof;
use storage_proofs_core::compound_proof::{self, CompoundProof};
use storage_proofs_core::merkle::MerkleTreeTrait;
use storage_proofs_core::proof::ProofScheme;
use storage_proofs_porep::stacked::{self, generate_replica_id, StackedCompound, StackedDrg};

use crate::{sector_size_text, Error, Result};
use storage_proofs_core::api_version::ApiFeature;

/// Which sector a C1 output belongs to: the storage provider's actor id and the sector's number.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Sector {
    /// The miner actor id (the number of an `f0…` address).
    pub miner_id: u64,
    /// The sector number.
    pub sector_number: u64,
}

impl Sector {
    /// The 32-byte prover id that filecoin-proofs takes: the payload of the miner's ID address (the id as an
    /// unsigned LEB128 varint), zero-padded, as lotus and curio compute it.
    pub fn prover_id(&self) -> [u8; 32] {
        let mut out = [0u8; 32];
        let mut v = self.miner_id;
        let mut i = 0;
        loop {
            let byte = (v & 0x7f) as u8;
            v >>= 7;
            if v == 0 {
                out[i] = byte;
                break;
            }
            out[i] = byte | 0x80;
            i += 1;
        }
        out
    }
}

/// A parsed C1 output and where it came from.
#[derive(Clone, Debug)]
pub struct C1Output {
    /// filecoin-proofs-api's type, as lotus and curio serialize it.
    pub inner: SealCommitPhase1Output,
    /// The file name (or other label) used in error messages.
    pub source_name: String,
    /// The sector number recorded beside the output, when the file carried one (lotus-bench's commit-2 input).
    pub sector_number_hint: Option<u64>,
}

/// lotus-bench's `--save-commit2-input` wrapper: the C1 JSON, base64-encoded, beside the sector's number and size.
#[derive(serde::Deserialize)]
#[serde(rename_all = "PascalCase")]
struct LotusBenchInput {
    phase1_out: String,
    sector_num: Option<u64>,
    sector_size: Option<u64>,
}

impl C1Output {
    /// Reads a C1 file.
    ///
    /// # Errors
    /// [`Error::Io`] naming the file; otherwise as [`C1Output::from_json`].
    pub fn read(path: &Path) -> Result<Self> {
        let bytes = std::fs::read(path).map_err(|source| Error::Io {
            path: path.to_owned(),
            source,
        })?;
        Self::from_json(&bytes, &path.display().to_string())
    }

    /// Parses a C1 output: filecoin-proofs-api's `SealCommitPhase1Output` as JSON (what lotus and curio write), or
    /// lotus-bench's commit-2 input that wraps it (`{"Phase1Out": base64, "SectorNum": n, "SectorSize": s}`).
    /// Only the form is checked here; [`C1Output::check`] checks the content against the sector.
    ///
    /// # Errors
    /// [`Error::C1Format`] with the line and column where parsing stopped (a truncated file stops at its end);
    /// [`Error::C1Invalid`] if a lotus-bench wrapper's sector size disagrees with the output inside it.
    pub fn from_json(bytes: &[u8], source_name: &str) -> Result<Self> {
        let format_error = |e: serde_json::Error| Error::C1Format {
            source_name: source_name.to_owned(),
            message: e.to_string(),
            line: e.line(),
            column: e.column(),
        };
        let value: serde_json::Value = serde_json::from_slice(bytes).map_err(format_error)?;
        if value.get("Phase1Out").is_some() {
            let wrapper: LotusBenchInput = serde_json::from_value(value).map_err(format_error)?;
            let inner_bytes = base64::engine::general_purpose::STANDARD
                .decode(wrapper.phase1_out.trim())
                .map_err(|e| Error::C1Format {
                    source_name: source_name.to_owned(),
                    message: format!("Phase1Out is not base64: {e}"),
                    line: 1,
                    column: 1,
                })?;
            let mut out = Self::from_json(&inner_bytes, &format!("{source_name} (Phase1Out)"))?;
            out.source_name = source_name.to_owned();
            out.sector_number_hint = wrapper.sector_num;
            if let Some(size) = wrapper.sector_size {
                if size != out.sector_size() {
                    return Err(out.invalid(format!(
                        "SectorSize says {} but Phase1Out is a {} C1 output",
                        sector_size_text(size),
                        sector_size_text(out.sector_size())
                    )));
                }
            }
            return Ok(out);
        }
        let inner: SealCommitPhase1Output = serde_json::from_value(value).map_err(format_error)?;
        Ok(C1Output {
            inner,
            source_name: source_name.to_owned(),
            sector_number_hint: None,
        })
    }

    /// The registered proof type the C1 output names.
    pub fn registered_proof(&self) -> RegisteredSealProof {
        self.inner.registered_proof
    }

    /// The sector size in bytes, from the registered proof type.
    pub fn sector_size(&self) -> u64 {
        u64::from(self.inner.registered_proof.sector_size())
    }

    /// The number of partitions (one Groth16 proof each) this proof type has.
    pub fn partitions(&self) -> usize {
        usize::from(self.inner.registered_proof.partitions())
    }

    fn invalid(&self, message: String) -> Error {
        Error::C1Invalid {
            source_name: self.source_name.clone(),
            message,
        }
    }

    /// The sector size of the vanilla proofs themselves (their variant), independent of `registered_proof`.
    fn vanilla_sector_size(&self) -> u64 {
        use filecoin_proofs::constants::*;
        match &self.inner.vanilla_proofs {
            VanillaSealProof::StackedDrg2KiBV1(_) => SECTOR_SIZE_2_KIB,
            VanillaSealProof::StackedDrg8MiBV1(_) => SECTOR_SIZE_8_MIB,
            VanillaSealProof::StackedDrg512MiBV1(_) => SECTOR_SIZE_512_MIB,
            VanillaSealProof::StackedDrg32GiBV1(_) => SECTOR_SIZE_32_GIB,
            VanillaSealProof::StackedDrg64GiBV1(_) => SECTOR_SIZE_64_GIB,
        }
    }

    /// Checks everything that can be checked before proving, so that a bad input costs seconds, not a proof:
    /// the proof type is one this prover handles; `expected_size`, when given, is the sector size; the vanilla
    /// proofs are of the registered proof's sector size, with one entry per partition and the right number of
    /// challenges in each; the commitments and seed are not zero; the replica id is the one that `sector`, the
    /// ticket and comm_d derive (a wrong miner id or sector number is caught here); and each partition's vanilla
    /// proofs verify against comm_r and comm_d.
    ///
    /// # Errors
    /// [`Error::Unsupported`] or [`Error::C1Invalid`] naming the field, partition and values at fault.
    pub fn check(&self, sector: &Sector, expected_size: Option<u64>) -> Result<()> {
        let rp = self.registered_proof();
        if rp.major_version() != 1 {
            return Err(Error::Unsupported {
                source_name: self.source_name.clone(),
                message: format!("{rp:?}: only version-1 seal proofs exist and are supported"),
            });
        }
        let config = rp.as_v1_config();
        if config.feature_enabled(ApiFeature::NonInteractivePoRep) {
            return Err(Error::Unsupported {
                source_name: self.source_name.clone(),
                message: format!(
                    "{rp:?}: non-interactive PoRep aggregates its partition proofs (SnarkPack), which cuzk does not \
                     do yet; interactive proof types (…V1_1, …V1_1_Feat_SyntheticPoRep) are supported"
                ),
            });
        }
        if let Some(size) = expected_size {
            if size != self.sector_size() {
                return Err(self.invalid(format!(
                    "this is a {} sector's C1 output ({rp:?}), not {}",
                    sector_size_text(self.sector_size()),
                    sector_size_text(size)
                )));
            }
        }
        if self.vanilla_sector_size() != self.sector_size() {
            return Err(self.invalid(format!(
                "registered_proof is {rp:?} ({}), but vanilla_proofs are those of a {} sector",
                sector_size_text(self.sector_size()),
                sector_size_text(self.vanilla_sector_size())
            )));
        }
        for (name, value) in [
            ("comm_d", &self.inner.comm_d),
            ("comm_r", &self.inner.comm_r),
            ("seed", &self.inner.seed),
        ] {
            if value.iter().all(|&b| b == 0) {
                return Err(self.invalid(format!("{name} is all zeros")));
            }
        }
        with_shape!(self.sector_size(), check_tree, self, sector,)
    }

    /// The vanilla proofs, typed for the sector shape `Tree`.
    pub(crate) fn vanilla_proofs<Tree: 'static + MerkleTreeTrait>(
        &self,
    ) -> Result<Vec<Vec<filecoin_proofs::VanillaSealProof<Tree>>>> {
        self.inner
            .vanilla_proofs
            .clone()
            .try_into()
            .map_err(|e: anyhow::Error| self.invalid(format!("vanilla_proofs: {e:#}")))
    }

    /// The stacked-DRG public inputs of the whole sector (no partition chosen).
    pub(crate) fn public_inputs<Tree: 'static + MerkleTreeTrait>(
        &self,
    ) -> Result<
        stacked::PublicInputs<
            <Tree::Hasher as filecoin_hashers::Hasher>::Domain,
            DefaultPieceDomain,
        >,
    > {
        let comm_r = as_safe_commitment(&self.inner.comm_r, "comm_r")
            .map_err(|e| self.invalid(format!("{e:#}")))?;
        let comm_d = as_safe_commitment::<DefaultPieceDomain, _>(&self.inner.comm_d, "comm_d")
            .map_err(|e| self.invalid(format!("{e:#}")))?;
        let replica_bytes: [u8; 32] = self.inner.replica_id.into();
        let replica_id = filecoin_hashers::Domain::try_from_bytes(&replica_bytes)
            .map_err(|e| self.invalid(format!("replica_id: {e:#}")))?;
        Ok(stacked::PublicInputs {
            replica_id,
            tau: Some(stacked::Tau { comm_d, comm_r }),
            k: None,
            seed: Some(self.inner.seed),
        })
    }
}

/// The challenges one partition of `rp` proves (2 up to 512 MiB, 18 at 32 GiB): the pieces its witness is
/// computed in.
///
/// # Errors
/// When filecoin-proofs has no setup for `rp`.
pub fn challenges_per_partition(rp: RegisteredSealProof) -> Result<usize> {
    Ok(
        filecoin_proofs::parameters::setup_params(&rp.as_v1_config())
            .map_err(Error::filecoin)?
            .challenges
            .num_challenges_per_partition(),
    )
}

/// The compound (all partitions) public parameters of a proof type.
pub(crate) fn compound_params<Tree: 'static + MerkleTreeTrait>(
    rp: RegisteredSealProof,
) -> Result<compound_proof::PublicParams<'static, StackedDrg<'static, Tree, DefaultPieceHasher>>> {
    let config = rp.as_v1_config();
    let setup = compound_proof::SetupParams {
        vanilla_params: filecoin_proofs::parameters::setup_params(&config)
            .map_err(Error::filecoin)?,
        partitions: Some(usize::from(config.partitions)),
        priority: false,
    };
    <StackedCompound<Tree, DefaultPieceHasher> as CompoundProof<_, _>>::setup(&setup)
        .map_err(Error::filecoin)
}

fn check_tree<Tree: 'static + MerkleTreeTrait>(c1: &C1Output, sector: &Sector) -> Result<()> {
    let rp = c1.registered_proof();
    let pub_params = compound_params::<Tree>(rp)?;
    let proofs = c1.vanilla_proofs::<Tree>()?;
    let partitions = c1.partitions();
    if proofs.len() != partitions {
        return Err(c1.invalid(format!(
            "vanilla_proofs has {} partitions; {rp:?} has {partitions}",
            proofs.len()
        )));
    }
    let challenges = pub_params
        .vanilla_params
        .challenges
        .num_challenges_per_partition();
    for (k, p) in proofs.iter().enumerate() {
        if p.len() != challenges {
            return Err(c1.invalid(format!(
                "partition {k} of vanilla_proofs has {} challenge proofs; {rp:?} has {challenges} per partition",
                p.len()
            )));
        }
    }
    // The replica id binds the sector: a C1 output proved under another miner id or sector number fails here.
    let expected = filecoin_hashers::Domain::into_bytes(&generate_replica_id::<Tree::Hasher, _>(
        &sector.prover_id(),
        sector.sector_number,
        &c1.inner.ticket,
        c1.inner.comm_d,
        &rp.as_v1_config().porep_id,
    ));
    let have: [u8; 32] = c1.inner.replica_id.into();
    if expected[..] != have[..] {
        return Err(c1.invalid(format!(
            "replica_id {} is not the one miner id {} and sector number {} derive with this ticket and comm_d ({}): \
             wrong --miner-id or --sector-number, or a C1 output of another sector",
            hex::encode(have),
            sector.miner_id,
            sector.sector_number,
            hex::encode(expected)
        )));
    }
    let pub_inputs = c1.public_inputs::<Tree>()?;
    // storage-proofs verifies partitions only as a prefix 0..n (a partition's index picks its challenges), so the
    // first bad partition is found by a binary search over prefix lengths, on the error path only.
    let prefix_ok = |n: usize| {
        StackedDrg::<Tree, DefaultPieceHasher>::verify_all_partitions(
            &pub_params.vanilla_params,
            &pub_inputs,
            &proofs[..n],
        )
        .map_err(|e| c1.invalid(format!("checking the vanilla proofs failed: {e:#}")))
    };
    if !prefix_ok(proofs.len())? {
        let (mut good, mut bad) = (0, proofs.len());
        while bad - good > 1 {
            let mid = (good + bad) / 2;
            if prefix_ok(mid)? {
                good = mid;
            } else {
                bad = mid;
            }
        }
        return Err(c1.invalid(format!(
            "partition {}: the vanilla proofs do not verify against comm_r {} and comm_d {} with seed {}",
            bad - 1,
            hex::encode(c1.inner.comm_r),
            hex::encode(c1.inner.comm_d),
            hex::encode(c1.inner.seed)
        )));
    }
    Ok(())
}
