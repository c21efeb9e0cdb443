//! Sealing a test sector with filecoin-proofs, to get a real C1 output without lotus or curio.
//!
//! This runs the storage provider's steps before Commit-2 (add a piece of random data, pre-commit 1 and 2,
//! commit 1) through filecoin-proofs-api, exactly as they would. Meant for the test sector sizes: a 2 KiB sector
//! seals in about a second.

use std::fs::{File, OpenOptions};
use std::path::Path;

use filecoin_proofs_api::seal::{
    add_piece, seal_commit_phase1, seal_pre_commit_phase1, seal_pre_commit_phase2,
};
use filecoin_proofs_api::{PaddedBytesAmount, RegisteredSealProof, SectorId, UnpaddedBytesAmount};
use rand::Rng;

use crate::{C1Output, Error, Result, Sector};

/// Seals a sector of random data in `work_dir` (which must be empty or absent; the staged and sealed files and the
/// cache land there) and returns its C1 output as lotus writes it (JSON bytes), with ticket and seed drawn from
/// `rng`.
///
/// # Errors
/// [`Error::Io`] for the work directory, [`Error::Filecoin`] for a failing sealing step.
pub fn seal_sector(
    rp: RegisteredSealProof,
    work_dir: &Path,
    sector: &Sector,
    rng: &mut impl Rng,
) -> Result<Vec<u8>> {
    let io = |path: &Path| {
        let path = path.to_owned();
        move |source| Error::Io { path, source }
    };
    let cache = work_dir.join("cache");
    std::fs::create_dir_all(&cache).map_err(io(&cache))?;
    let staged = work_dir.join("staged");
    let sealed = work_dir.join("sealed");
    File::create(&sealed).map_err(io(&sealed))?;

    let size = u64::from(rp.sector_size());
    let unpadded = UnpaddedBytesAmount::from(PaddedBytesAmount(size));
    let data: Vec<u8> = (0..u64::from(unpadded)).map(|_| rng.gen()).collect();
    let mut staged_file = OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(true)
        .open(&staged)
        .map_err(io(&staged))?;
    let (piece, _) =
        add_piece(rp, &data[..], &mut staged_file, unpadded, &[]).map_err(Error::filecoin)?;
    drop(staged_file);
    let pieces = [piece];

    let prover_id = sector.prover_id();
    let sector_id = SectorId::from(sector.sector_number);
    let ticket: [u8; 32] = rng.gen();
    let seed: [u8; 32] = rng.gen();
    let p1 = seal_pre_commit_phase1(
        rp, &cache, &staged, &sealed, prover_id, sector_id, ticket, &pieces,
    )
    .map_err(Error::filecoin)?;
    let p2 = seal_pre_commit_phase2(p1, &cache, &sealed).map_err(Error::filecoin)?;
    let c1 = seal_commit_phase1(
        &cache, &sealed, prover_id, sector_id, ticket, seed, p2, &pieces,
    )
    .map_err(Error::filecoin)?;
    serde_json::to_vec(&c1).map_err(|e| Error::Filecoin(format!("serializing the C1 output: {e}")))
}

impl C1Output {
    /// Serializes the output back to lotus's JSON form.
    ///
    /// # Errors
    /// [`Error::Filecoin`] if serialization fails.
    pub fn to_json(&self) -> Result<Vec<u8>> {
        serde_json::to_vec(&self.inner)
            .map_err(|e| Error::Filecoin(format!("serializing the C1 output: {e}")))
    }
}
