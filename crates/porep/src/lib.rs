//! Filecoin PoRep Commit-2 on the cuzk engine.
//!
//! A storage provider's Commit-1 step leaves a [`C1Output`]: the vanilla (Merkle) proofs of a sealed sector's
//! challenged nodes, with the sector's commitments. Commit-2 turns them into one Groth16 proof per partition. This
//! crate reads the C1 output as lotus and curio write it (filecoin-proofs-api's `SealCommitPhase1Output` as JSON),
//! checks it against the sector before any proving work, builds the partition circuits with storage-proofs-porep
//! (the crate Filecoin uses), and proves them through [`groth16_pipeline::Engine`]. The proof bytes are
//! filecoin-proofs' layout: 192 bytes per partition, concatenated; [`verify`] checks them with filecoin-proofs'
//! own `verify_seal`.
//!
//! Parameters are the published files in the parameter cache (`FIL_PROOFS_PARAMETER_CACHE`, as filecoin-proofs
//! reads it); for the test sector sizes they can be generated here ([`params::ensure`]), marked as not the
//! ceremony's.

pub mod c1;
pub mod params;
mod prove;
pub mod seal;
pub mod stats;

pub use c1::{challenges_per_partition, C1Output, Sector};
pub use filecoin_proofs_api::RegisteredSealProof;
pub use prove::{
    compiled_shape, prove, prove_copies, synthesize_partition, verify, Partitions, PorepProof,
    Synthesis, PARTITION_PROOF_BYTES,
};

use std::path::PathBuf;

/// Errors of this crate. Each names what is wrong and where.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The C1 file could not be read.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The operating system's error.
        #[source]
        source: std::io::Error,
    },
    /// The C1 data is not a C1 output (bad JSON, truncated, a field missing or of the wrong type).
    #[error("{source_name}: not a C1 output: {message} (line {line}, column {column})")]
    C1Format {
        /// The file or stream it came from.
        source_name: String,
        /// serde_json's description.
        message: String,
        /// Where the parser stopped.
        line: usize,
        /// Where the parser stopped.
        column: usize,
    },
    /// The C1 output disagrees with itself or with what the caller expects of the sector.
    #[error("{source_name}: {message}")]
    C1Invalid {
        /// The file or stream it came from.
        source_name: String,
        /// What is wrong.
        message: String,
    },
    /// The C1 output is of a kind this prover does not handle.
    #[error("{source_name}: {message}")]
    Unsupported {
        /// The file or stream it came from.
        source_name: String,
        /// What and why.
        message: String,
    },
    /// Parameter files: missing, unreadable, or not matching the circuit.
    #[error("parameters: {0}")]
    Params(String),
    /// Proving a partition failed (after the engine's own CPU retry).
    #[error("partition {partition}: {message}")]
    Prove {
        /// The partition.
        partition: usize,
        /// What failed.
        message: String,
    },
    /// The Filecoin proof crates reported an error.
    #[error("filecoin-proofs: {0}")]
    Filecoin(String),
}

/// Result alias of this crate.
pub type Result<T> = std::result::Result<T, Error>;

impl Error {
    pub(crate) fn filecoin(e: impl std::fmt::Display) -> Self {
        // anyhow's alternate form carries the whole chain of causes.
        Error::Filecoin(format!("{e:#}"))
    }
}

/// Human form of a sector size: `2 KiB`, `32 GiB`.
pub fn sector_size_text(bytes: u64) -> String {
    const UNITS: [&str; 5] = ["B", "KiB", "MiB", "GiB", "TiB"];
    let mut v = bytes;
    let mut unit = 0;
    while v >= 1024 && v % 1024 == 0 && unit + 1 < UNITS.len() {
        v /= 1024;
        unit += 1;
    }
    format!("{v} {}", UNITS[unit])
}

/// The proof type Filecoin's actors number `n` (go-state-types' `abi.RegisteredSealProof`: 0-4 V1, 5-9 V1_1,
/// 10-14 V1_1 with synthetic PoRep, 15-19 V1_2 non-interactive; 2 KiB, 8 MiB, 512 MiB, 32 GiB, 64 GiB in each
/// group), or `None` for a number no proof type has.
pub fn registered_proof_from_number(n: u64) -> Option<RegisteredSealProof> {
    use RegisteredSealProof::*;
    const ALL: [RegisteredSealProof; 20] = [
        StackedDrg2KiBV1,
        StackedDrg8MiBV1,
        StackedDrg512MiBV1,
        StackedDrg32GiBV1,
        StackedDrg64GiBV1,
        StackedDrg2KiBV1_1,
        StackedDrg8MiBV1_1,
        StackedDrg512MiBV1_1,
        StackedDrg32GiBV1_1,
        StackedDrg64GiBV1_1,
        StackedDrg2KiBV1_1_Feat_SyntheticPoRep,
        StackedDrg8MiBV1_1_Feat_SyntheticPoRep,
        StackedDrg512MiBV1_1_Feat_SyntheticPoRep,
        StackedDrg32GiBV1_1_Feat_SyntheticPoRep,
        StackedDrg64GiBV1_1_Feat_SyntheticPoRep,
        StackedDrg2KiBV1_2_Feat_NonInteractivePoRep,
        StackedDrg8MiBV1_2_Feat_NonInteractivePoRep,
        StackedDrg512MiBV1_2_Feat_NonInteractivePoRep,
        StackedDrg32GiBV1_2_Feat_NonInteractivePoRep,
        StackedDrg64GiBV1_2_Feat_NonInteractivePoRep,
    ];
    ALL.get(usize::try_from(n).ok()?).copied()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn actor_numbers_map_to_proof_types() {
        use RegisteredSealProof::*;
        assert_eq!(registered_proof_from_number(5), Some(StackedDrg2KiBV1_1));
        assert_eq!(registered_proof_from_number(8), Some(StackedDrg32GiBV1_1));
        assert_eq!(
            registered_proof_from_number(13),
            Some(StackedDrg32GiBV1_1_Feat_SyntheticPoRep)
        );
        assert_eq!(
            registered_proof_from_number(19),
            Some(StackedDrg64GiBV1_2_Feat_NonInteractivePoRep)
        );
        assert_eq!(registered_proof_from_number(20), None);
        assert_eq!(registered_proof_from_number(u64::MAX), None);
        // Sizes ascend within each group of five.
        for n in 0..20 {
            let rp = registered_proof_from_number(n).unwrap();
            let size = u64::from(rp.sector_size());
            assert_eq!(
                size,
                [2048, 8 << 20, 512 << 20, 32 << 30, 64 << 30][n as usize % 5]
            );
        }
    }

    #[test]
    fn a_partitions_challenges_follow_the_sector_size() {
        use RegisteredSealProof::*;
        // 2 a partition up to 512 MiB; 176 over 10 partitions, rounded up, at 32 and 64 GiB.
        for (rp, challenges) in [
            (StackedDrg2KiBV1_1, 2),
            (StackedDrg512MiBV1_1, 2),
            (StackedDrg32GiBV1_1, 18),
            (StackedDrg64GiBV1_1, 18),
        ] {
            assert_eq!(challenges_per_partition(rp).unwrap(), challenges, "{rp:?}");
        }
    }
}
