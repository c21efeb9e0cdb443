//! Byte layout: reading (mapped, parallel, checked) and writing (atomic).

use std::fmt;
use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::Path;

use blstrs::{G1Affine, G2Affine};
use group::prime::PrimeCurveAffine;
use rayon::prelude::*;

use crate::{Error, Parameters, PointProblem, Result, VerifyingKey};

/// Bytes of an uncompressed G1 point.
pub const G1_BYTES: usize = 96;
/// Bytes of an uncompressed G2 point.
pub const G2_BYTES: usize = 192;

/// A part of the parameter file, for error messages.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Section {
    /// vk.alpha_g1
    AlphaG1,
    /// vk.beta_g1
    BetaG1,
    /// vk.beta_g2
    BetaG2,
    /// vk.gamma_g2
    GammaG2,
    /// vk.delta_g1
    DeltaG1,
    /// vk.delta_g2
    DeltaG2,
    /// vk.ic
    Ic,
    /// h
    H,
    /// l
    L,
    /// a
    A,
    /// b_g1
    BG1,
    /// b_g2
    BG2,
}

impl fmt::Display for Section {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Section::AlphaG1 => "alpha_g1",
            Section::BetaG1 => "beta_g1",
            Section::BetaG2 => "beta_g2",
            Section::GammaG2 => "gamma_g2",
            Section::DeltaG1 => "delta_g1",
            Section::DeltaG2 => "delta_g2",
            Section::Ic => "ic",
            Section::H => "h",
            Section::L => "l",
            Section::A => "a",
            Section::BG1 => "b_g1",
            Section::BG2 => "b_g2",
        })
    }
}

/// How much to trust a file.
#[derive(Debug, Clone, Copy)]
pub struct ReadOptions {
    /// Check that every point is in the prime-order subgroup (the expensive check).
    /// Turn off only for files whose integrity is known, such as a ceremony file whose digest was verified.
    /// Points are always checked to be on their curve.
    pub check_subgroup: bool,
}

impl Default for ReadOptions {
    fn default() -> Self {
        Self {
            check_subgroup: true,
        }
    }
}

struct Cursor<'a> {
    bytes: &'a [u8],
    pos: usize,
}

impl<'a> Cursor<'a> {
    fn take(&mut self, section: Section, n: usize) -> Result<&'a [u8]> {
        if self.bytes.len() - self.pos < n {
            return Err(Error::Truncated {
                section,
                offset: self.pos as u64,
                needed: n as u64,
                len: self.bytes.len() as u64,
            });
        }
        let out = &self.bytes[self.pos..self.pos + n];
        self.pos += n;
        Ok(out)
    }

    fn u32(&mut self, section: Section) -> Result<usize> {
        let b = self.take(section, 4)?;
        Ok(u32::from_be_bytes([b[0], b[1], b[2], b[3]]) as usize)
    }
}

/// One point type's decoding and checks.
trait Point: Sized + Send + PrimeCurveAffine {
    const BYTES: usize;
    fn decode(bytes: &[u8], check_subgroup: bool) -> std::result::Result<Self, PointProblem>;
    fn encode<W: Write>(&self, out: &mut W) -> std::io::Result<()>;
}

impl Point for G1Affine {
    const BYTES: usize = G1_BYTES;
    fn decode(bytes: &[u8], check_subgroup: bool) -> std::result::Result<Self, PointProblem> {
        let arr: &[u8; G1_BYTES] = bytes.try_into().expect("caller passes exact chunks");
        let p = Option::<G1Affine>::from(G1Affine::from_uncompressed_unchecked(arr))
            .ok_or(PointProblem::NotOnCurve)?;
        if !bool::from(p.is_on_curve()) {
            return Err(PointProblem::NotOnCurve);
        }
        if check_subgroup && !bool::from(p.is_torsion_free()) {
            return Err(PointProblem::NotInSubgroup);
        }
        Ok(p)
    }
    fn encode<W: Write>(&self, out: &mut W) -> std::io::Result<()> {
        out.write_all(&self.to_uncompressed())
    }
}

impl Point for G2Affine {
    const BYTES: usize = G2_BYTES;
    fn decode(bytes: &[u8], check_subgroup: bool) -> std::result::Result<Self, PointProblem> {
        let arr: &[u8; G2_BYTES] = bytes.try_into().expect("caller passes exact chunks");
        let p = Option::<G2Affine>::from(G2Affine::from_uncompressed_unchecked(arr))
            .ok_or(PointProblem::NotOnCurve)?;
        if !bool::from(p.is_on_curve()) {
            return Err(PointProblem::NotOnCurve);
        }
        if check_subgroup && !bool::from(p.is_torsion_free()) {
            return Err(PointProblem::NotInSubgroup);
        }
        Ok(p)
    }
    fn encode<W: Write>(&self, out: &mut W) -> std::io::Result<()> {
        out.write_all(&self.to_uncompressed())
    }
}

fn one_point<P: Point>(cur: &mut Cursor<'_>, section: Section, opts: ReadOptions) -> Result<P> {
    let offset = cur.pos as u64;
    let bytes = cur.take(section, P::BYTES)?;
    P::decode(bytes, opts.check_subgroup).map_err(|problem| Error::InvalidPoint {
        section,
        index: 0,
        offset,
        problem,
    })
}

/// A u32 count, then that many points, decoded in parallel; identity points are rejected as bellperson does.
fn section<P: Point>(cur: &mut Cursor<'_>, section: Section, opts: ReadOptions) -> Result<Vec<P>> {
    let count = cur.u32(section)?;
    let start = cur.pos;
    let bytes = cur.take(section, count * P::BYTES)?;
    let decode = |(index, chunk): (usize, &[u8])| {
        P::decode(chunk, opts.check_subgroup)
            .and_then(|p| {
                if bool::from(p.is_identity()) {
                    Err(PointProblem::Identity)
                } else {
                    Ok(p)
                }
            })
            .map_err(|problem| Error::InvalidPoint {
                section,
                index,
                offset: (start + index * P::BYTES) as u64,
                problem,
            })
    };
    let points: Result<Vec<P>> = bytes
        .par_chunks_exact(P::BYTES)
        .enumerate()
        .with_min_len(256)
        .map(decode)
        .collect();
    points.map_err(|_| {
        // Report the first bad point, not whichever thread failed first.
        bytes
            .par_chunks_exact(P::BYTES)
            .enumerate()
            .filter_map(|c| decode(c).err())
            .min_by_key(|e| match e {
                Error::InvalidPoint { index, .. } => *index,
                _ => usize::MAX,
            })
            .expect("some point failed")
    })
}

fn verifying_key(cur: &mut Cursor<'_>, opts: ReadOptions) -> Result<VerifyingKey> {
    Ok(VerifyingKey {
        alpha_g1: one_point(cur, Section::AlphaG1, opts)?,
        beta_g1: one_point(cur, Section::BetaG1, opts)?,
        beta_g2: one_point(cur, Section::BetaG2, opts)?,
        gamma_g2: one_point(cur, Section::GammaG2, opts)?,
        delta_g1: one_point(cur, Section::DeltaG1, opts)?,
        delta_g2: one_point(cur, Section::DeltaG2, opts)?,
        ic: section(cur, Section::Ic, opts)?,
    })
}

impl Parameters {
    /// Decodes parameters from their file bytes.
    ///
    /// # Errors
    /// [`Error::Truncated`], [`Error::TrailingBytes`], [`Error::InvalidPoint`], or what [`Parameters::check_consistent`] finds.
    pub fn from_bytes(bytes: &[u8], opts: ReadOptions) -> Result<Self> {
        let mut cur = Cursor { bytes, pos: 0 };
        let vk = verifying_key(&mut cur, opts)?;
        let params = Parameters {
            vk,
            h: section(&mut cur, Section::H, opts)?,
            l: section(&mut cur, Section::L, opts)?,
            a: section(&mut cur, Section::A, opts)?,
            b_g1: section(&mut cur, Section::BG1, opts)?,
            b_g2: section(&mut cur, Section::BG2, opts)?,
        };
        if cur.pos != bytes.len() {
            return Err(Error::TrailingBytes {
                offset: cur.pos as u64,
                extra: (bytes.len() - cur.pos) as u64,
            });
        }
        params.check_consistent()?;
        Ok(params)
    }

    /// The file bytes of these parameters.
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(self.file_len() as usize);
        self.write_to(&mut out)
            .expect("writing to a Vec cannot fail");
        out
    }

    /// The file's length in bytes.
    pub fn file_len(&self) -> u64 {
        let g1 =
            3 + self.vk.ic.len() + self.h.len() + self.l.len() + self.a.len() + self.b_g1.len();
        let g2 = 3 + self.b_g2.len();
        (g1 * G1_BYTES + g2 * G2_BYTES + 6 * 4) as u64
    }

    /// Writes the file bytes to `out`.
    ///
    /// # Errors
    /// What `out` returns.
    pub fn write_to<W: Write>(&self, out: &mut W) -> std::io::Result<()> {
        self.vk.write_to(out)?;
        put(out, &self.h)?;
        put(out, &self.l)?;
        put(out, &self.a)?;
        put(out, &self.b_g1)?;
        put(out, &self.b_g2)
    }

    /// Writes the parameters to `path` atomically (see [`write_atomic`]).
    ///
    /// # Errors
    /// [`Error::Io`] naming the file.
    pub fn write_file(&self, path: &Path) -> Result<()> {
        write_atomic(path, |w| self.write_to(w))
    }
}

impl VerifyingKey {
    /// Writes the key as bellperson's `VerifyingKey::write` does (a Filecoin `.vk` file): the six points, then
    /// the IC count and points, all uncompressed. The same bytes open a `.params` file.
    ///
    /// # Errors
    /// What `out` returns.
    pub fn write_to<W: Write>(&self, out: &mut W) -> std::io::Result<()> {
        self.alpha_g1.encode(out)?;
        self.beta_g1.encode(out)?;
        self.beta_g2.encode(out)?;
        self.gamma_g2.encode(out)?;
        self.delta_g1.encode(out)?;
        self.delta_g2.encode(out)?;
        put(out, &self.ic)
    }

    /// Writes the key to `path` atomically (see [`write_atomic`]).
    ///
    /// # Errors
    /// [`Error::Io`] naming the file.
    pub fn write_file(&self, path: &Path) -> Result<()> {
        write_atomic(path, |w| self.write_to(w))
    }
}

/// A section: its point count (u32, big-endian), then the points.
fn put<P: Point, W: Write>(out: &mut W, points: &[P]) -> std::io::Result<()> {
    let len = u32::try_from(points.len())
        .map_err(|_| std::io::Error::other("a section holds at most 2^32 - 1 points"))?;
    out.write_all(&len.to_be_bytes())?;
    points.iter().try_for_each(|p| p.encode(out))
}

/// Writes a file atomically: `write` fills a temporary file in the same directory, which is synced and then renamed
/// over `path`. Nothing half-written is ever left at `path`, even if the process dies; on error the temporary file
/// is removed. The directory is created if missing.
///
/// # Errors
/// [`Error::Io`] naming `path`.
pub fn write_atomic(
    path: &Path,
    write: impl FnOnce(&mut BufWriter<File>) -> std::io::Result<()>,
) -> Result<()> {
    let io = |source| Error::Io {
        path: path.to_owned(),
        source,
    };
    let dir = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir).map_err(io)?;
    let name = path
        .file_name()
        .ok_or_else(|| io(std::io::Error::other("not a file path")))?;
    let tmp = dir.join(format!(
        ".{}.tmp.{}",
        name.to_string_lossy(),
        std::process::id()
    ));
    let result = (|| {
        let mut w = BufWriter::with_capacity(1 << 20, File::create(&tmp)?);
        write(&mut w)?;
        let file = w.into_inner().map_err(|e| e.into_error())?;
        file.sync_all()?;
        std::fs::rename(&tmp, path)
    })();
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    result.map_err(io)
}

/// Reads only the verifying key at the start of a parameter file (a few kilobytes, even for a 44 GiB file).
///
/// # Errors
/// [`Error::Io`], [`Error::Truncated`] or [`Error::InvalidPoint`] within the key, [`Error::IdentityDelta`].
pub fn read_verifying_key(path: &Path) -> Result<VerifyingKey> {
    let map = map_file(path)?;
    let vk = verifying_key(
        &mut Cursor {
            bytes: &map,
            pos: 0,
        },
        ReadOptions::default(),
    )?;
    if bool::from(vk.delta_g1.is_identity()) {
        return Err(Error::IdentityDelta("delta_g1"));
    }
    if bool::from(vk.delta_g2.is_identity()) {
        return Err(Error::IdentityDelta("delta_g2"));
    }
    Ok(vk)
}

fn map_file(path: &Path) -> Result<memmap2::Mmap> {
    let io = |source| Error::Io {
        path: path.to_owned(),
        source,
    };
    let file = File::open(path).map_err(io)?;
    let len = file.metadata().map_err(io)?.len();
    if len == 0 {
        return Err(Error::Truncated {
            section: Section::AlphaG1,
            offset: 0,
            needed: G1_BYTES as u64,
            len: 0,
        });
    }
    // SAFETY: the map is read-only and dropped by the caller before it returns; a file truncated by another process
    // while mapped would fault, as with any mmap reader (bellperson's included). Parameter files are written once and renamed into place.
    unsafe { memmap2::Mmap::map(&file) }.map_err(io)
}

/// Reads and validates a parameter file through a memory map.
///
/// # Errors
/// [`Error::Io`] if the file cannot be opened or mapped; otherwise as [`Parameters::from_bytes`].
pub fn read_params(path: &Path, opts: ReadOptions) -> Result<Parameters> {
    Parameters::from_bytes(&map_file(path)?, opts)
}
