//! Compiled shapes on disk: versioned, checksummed, keyed by circuit identity; a stale, truncated or corrupt file is
//! detected (and, through [`CompiledShape::load_or_compile`], rebuilt), never trusted.
//!
//! Layout (little-endian): magic `CUZKSHP1`, u32 format version, u32 id length + circuit id bytes,
//! u64 inputs, u64 aux, u64 coefficient count + 32-byte canonical coefficients, then for A, B, C:
//! u64 rows, u64 terms, (rows + 1) u64 row starts, terms u32 columns, terms u32 coefficient slots;
//! last, the SHA-256 of everything before it.

use std::path::Path;

use blstrs::Scalar;
use ff::PrimeField;
use sha2::{Digest, Sha256};

use crate::{CompiledShape, CsrMatrix, Density};

const MAGIC: &[u8; 8] = b"CUZKSHP1";
/// Bump on any change of layout or meaning.
pub const SHAPE_FORMAT_VERSION: u32 = 1;

/// Why a shape file was not used.
#[derive(Debug, thiserror::Error)]
pub enum ShapeFileError {
    /// The file could not be read or written.
    #[error("{0}")]
    Io(#[from] std::io::Error),
    /// Written by another format version or for another circuit.
    #[error("stale shape file: {0}")]
    Stale(String),
    /// Shorter than its contents claim.
    #[error(
        "truncated shape file: {what} needs {needed} bytes at offset {offset}, file has {len}"
    )]
    Truncated {
        /// What was being read.
        what: &'static str,
        /// Where.
        offset: usize,
        /// Bytes needed there.
        needed: usize,
        /// File length.
        len: usize,
    },
    /// The checksum or the structure is wrong.
    #[error("corrupt shape file: {0}")]
    Corrupt(String),
}

struct Reader<'a> {
    bytes: &'a [u8],
    pos: usize,
}

impl<'a> Reader<'a> {
    fn take(&mut self, what: &'static str, n: usize) -> Result<&'a [u8], ShapeFileError> {
        if self.bytes.len().saturating_sub(self.pos) < n {
            return Err(ShapeFileError::Truncated {
                what,
                offset: self.pos,
                needed: n,
                len: self.bytes.len(),
            });
        }
        let out = &self.bytes[self.pos..self.pos + n];
        self.pos += n;
        Ok(out)
    }
    fn u32(&mut self, what: &'static str) -> Result<u32, ShapeFileError> {
        Ok(u32::from_le_bytes(
            self.take(what, 4)?.try_into().expect("4 bytes"),
        ))
    }
    fn u64(&mut self, what: &'static str) -> Result<u64, ShapeFileError> {
        Ok(u64::from_le_bytes(
            self.take(what, 8)?.try_into().expect("8 bytes"),
        ))
    }
    fn len(&mut self, what: &'static str, unit: usize) -> Result<usize, ShapeFileError> {
        let n = self.u64(what)?;
        let n = usize::try_from(n)
            .map_err(|_| ShapeFileError::Corrupt(format!("{what} count {n} too large")))?;
        // A count can never exceed what is left: reject before allocating.
        if n.checked_mul(unit)
            .is_none_or(|b| b > self.bytes.len() - self.pos)
        {
            return Err(ShapeFileError::Truncated {
                what,
                offset: self.pos,
                needed: n.saturating_mul(unit),
                len: self.bytes.len(),
            });
        }
        Ok(n)
    }
}

impl CompiledShape {
    /// The file bytes of this shape for circuit `id`.
    pub fn to_file_bytes(&self, id: &str) -> Vec<u8> {
        let mut out = Vec::new();
        out.extend_from_slice(MAGIC);
        out.extend_from_slice(&SHAPE_FORMAT_VERSION.to_le_bytes());
        out.extend_from_slice(&(id.len() as u32).to_le_bytes());
        out.extend_from_slice(id.as_bytes());
        out.extend_from_slice(&(self.num_inputs as u64).to_le_bytes());
        out.extend_from_slice(&(self.num_aux as u64).to_le_bytes());
        out.extend_from_slice(&(self.coeffs.len() as u64).to_le_bytes());
        for c in &self.coeffs {
            out.extend_from_slice(c.to_repr().as_ref());
        }
        for m in [&self.a, &self.b, &self.c] {
            out.extend_from_slice(&(m.rows() as u64).to_le_bytes());
            out.extend_from_slice(&(m.nonzeros() as u64).to_le_bytes());
            m.row_ptr
                .iter()
                .for_each(|&x| out.extend_from_slice(&u64::from(x).to_le_bytes()));
            m.cols
                .iter()
                .for_each(|x| out.extend_from_slice(&x.to_le_bytes()));
            m.coeffs
                .iter()
                .for_each(|x| out.extend_from_slice(&x.to_le_bytes()));
        }
        let digest = Sha256::digest(&out);
        out.extend_from_slice(&digest);
        out
    }

    /// Decodes a shape file written for circuit `id`, checking version, identity, checksum and structure.
    ///
    /// # Errors
    /// [`ShapeFileError::Stale`], [`ShapeFileError::Truncated`] or [`ShapeFileError::Corrupt`].
    pub fn from_file_bytes(bytes: &[u8], id: &str) -> Result<Self, ShapeFileError> {
        let mut r = Reader { bytes, pos: 0 };
        if r.take("magic", 8)? != MAGIC {
            return Err(ShapeFileError::Corrupt(
                "not a cuzk shape file (bad magic)".into(),
            ));
        }
        let version = r.u32("version")?;
        if version != SHAPE_FORMAT_VERSION {
            return Err(ShapeFileError::Stale(format!(
                "format version {version}, this build reads {SHAPE_FORMAT_VERSION}"
            )));
        }
        let id_len = r.u32("circuit id length")? as usize;
        let file_id = r.take("circuit id", id_len)?;
        if file_id != id.as_bytes() {
            return Err(ShapeFileError::Stale(format!(
                "written for circuit {:?}, wanted {id:?}",
                String::from_utf8_lossy(file_id)
            )));
        }
        if bytes.len() < 32 {
            return Err(ShapeFileError::Truncated {
                what: "checksum",
                offset: 0,
                needed: 32,
                len: bytes.len(),
            });
        }
        let (body, digest) = bytes.split_at(bytes.len() - 32);
        if Sha256::digest(body).as_slice() != digest {
            return Err(ShapeFileError::Corrupt("checksum mismatch".into()));
        }
        let mut r = Reader {
            bytes: body,
            pos: r.pos,
        };
        let num_inputs = r.u64("inputs")? as usize;
        let num_aux = r.u64("aux")? as usize;
        let columns = num_inputs
            .checked_add(num_aux)
            .filter(|c| u32::try_from(*c).is_ok())
            .ok_or_else(|| ShapeFileError::Corrupt("too many variables".into()))?;
        let n_coeffs = r.len("coefficients", 32)?;
        let mut coeffs = Vec::with_capacity(n_coeffs);
        for i in 0..n_coeffs {
            let offset = r.pos;
            let repr: [u8; 32] = r.take("coefficient", 32)?.try_into().expect("32 bytes");
            let c = Option::<Scalar>::from(Scalar::from_repr(repr)).ok_or_else(|| {
                ShapeFileError::Corrupt(format!(
                    "coefficient {i} at offset {offset} is not canonical"
                ))
            })?;
            coeffs.push(c);
        }
        if coeffs.len() < 2 || coeffs[0] != Scalar::from(1u64) || coeffs[1] != -Scalar::from(1u64) {
            return Err(ShapeFileError::Corrupt(
                "coefficient slots 0 and 1 must be 1 and -1".into(),
            ));
        }
        let mut matrix = |name: &'static str| -> Result<CsrMatrix, ShapeFileError> {
            let rows = r.len(name, 8)?;
            let terms = r.len(name, 8)?;
            let row_ptr: Vec<u64> = (0..=rows).map(|_| r.u64(name)).collect::<Result<_, _>>()?;
            // The file keeps u64 starts; in memory they are u32 (a matrix holds fewer than 2^32 terms).
            if terms > u32::MAX as usize {
                return Err(ShapeFileError::Corrupt(format!(
                    "{name}: {terms} terms, more than a matrix may hold (2^32 - 1)"
                )));
            }
            let cols: Vec<u32> = (0..terms).map(|_| r.u32(name)).collect::<Result<_, _>>()?;
            let slots: Vec<u32> = (0..terms).map(|_| r.u32(name)).collect::<Result<_, _>>()?;
            if row_ptr.first() != Some(&0)
                || row_ptr.last() != Some(&(terms as u64))
                || row_ptr.windows(2).any(|w| w[0] > w[1])
            {
                return Err(ShapeFileError::Corrupt(format!(
                    "{name}: row starts are not a non-decreasing run from 0 to {terms}"
                )));
            }
            if let Some(k) = cols.iter().position(|&c| c as usize >= columns) {
                return Err(ShapeFileError::Corrupt(format!(
                    "{name}: term {k} has column {} of {columns}",
                    cols[k]
                )));
            }
            if let Some(k) = slots.iter().position(|&s| s as usize >= coeffs.len()) {
                return Err(ShapeFileError::Corrupt(format!(
                    "{name}: term {k} has coefficient slot {}",
                    slots[k]
                )));
            }
            Ok(CsrMatrix {
                // Each start is at most `terms` (checked above), so it fits.
                row_ptr: row_ptr.into_iter().map(|x| x as u32).collect(),
                cols,
                coeffs: slots,
            })
        };
        let (a, b, c) = (matrix("A")?, matrix("B")?, matrix("C")?);
        if r.pos != body.len() {
            return Err(ShapeFileError::Corrupt(format!(
                "{} unexpected bytes at offset {}",
                body.len() - r.pos,
                r.pos
            )));
        }
        if a.rows() != b.rows() || a.rows() != c.rows() {
            return Err(ShapeFileError::Corrupt(
                "A, B and C have different row counts".into(),
            ));
        }
        let mut shape = CompiledShape {
            num_inputs,
            num_aux,
            a,
            b,
            c,
            coeffs,
            a_aux_density: Density::new(),
            b_input_density: Density::new(),
            b_aux_density: Density::new(),
            piece_head: Default::default(),
        };
        shape.recompute_densities();
        Ok(shape)
    }

    /// Writes the shape atomically (temporary file, then rename).
    ///
    /// # Errors
    /// What the file system returns.
    pub fn write_file(&self, path: &Path, id: &str) -> Result<(), ShapeFileError> {
        let dir = path
            .parent()
            .filter(|p| !p.as_os_str().is_empty())
            .unwrap_or(Path::new("."));
        std::fs::create_dir_all(dir)?;
        let name = path
            .file_name()
            .ok_or_else(|| std::io::Error::other("not a file path"))?;
        let tmp = dir.join(format!(
            ".{}.tmp.{}",
            name.to_string_lossy(),
            std::process::id()
        ));
        let result =
            std::fs::write(&tmp, self.to_file_bytes(id)).and_then(|_| std::fs::rename(&tmp, path));
        if result.is_err() {
            let _ = std::fs::remove_file(&tmp);
        }
        Ok(result?)
    }

    /// Reads a shape file.
    ///
    /// # Errors
    /// As [`CompiledShape::from_file_bytes`], or I/O.
    pub fn read_file(path: &Path, id: &str) -> Result<Self, ShapeFileError> {
        Self::from_file_bytes(&std::fs::read(path)?, id)
    }

    /// The shape at `path` if it is valid for `id`; otherwise compiles `blank()` and writes it there.
    /// Returns the shape and, when it was rebuilt, why.
    ///
    /// # Errors
    /// Compilation errors; a failed write of the rebuilt file is not an error (the shape is still returned).
    pub fn load_or_compile<C: bellpepper_core::Circuit<Scalar>>(
        path: &Path,
        id: &str,
        blank: impl FnOnce() -> C,
    ) -> crate::Result<(Self, Option<String>)> {
        match Self::read_file(path, id) {
            Ok(shape) => Ok((shape, None)),
            Err(why) => {
                let why = match why {
                    ShapeFileError::Io(e) if e.kind() == std::io::ErrorKind::NotFound => {
                        "no shape file yet".to_string()
                    }
                    other => other.to_string(),
                };
                let shape = Self::compile(blank())?;
                let why = match shape.write_file(path, id) {
                    Ok(()) => why,
                    Err(e) => format!("{why}; could not save the rebuilt shape: {e}"),
                };
                Ok((shape, Some(why)))
            }
        }
    }
}
