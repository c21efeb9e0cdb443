//! Compiled-shape synthesis: record a circuit's R1CS once, then synthesize only its witness and compute a, b and c
//! as sparse matrix-vector products.
//!
//! The matrices are compressed sparse rows over one column space (inputs, then aux), with coefficients interned in a
//! small table (circuits use few distinct coefficients: 1, −1 and powers of two dominate), so a term is 8 bytes.
//! Densities depend on the shape only, so they are computed once here too.
//! Results are bit-identical to [`crate::synthesize`].

use bellpepper_core::Circuit;
use blstrs::Scalar;
use ff::{Field, PrimeField};
use rayon::prelude::*;
use std::collections::HashMap;

use crate::pieces::{PieceHead, WitnessCs};
use crate::{Density, Error, ProvingAssignment, R1csShape, Result, Var};

/// Coefficient-table slot of 1 (added without a multiplication).
const COEFF_ONE: u32 = 0;
/// Coefficient-table slot of −1 (subtracted without a multiplication).
const COEFF_MINUS_ONE: u32 = 1;

/// One matrix in compressed sparse rows: row r holds `cols[row_ptr[r]..row_ptr[r + 1]]` with coefficients `coeffs[...]` (table indices).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CsrMatrix {
    /// Row starts; rows + 1 entries. u32: a matrix holds fewer than 2^32 terms (a PoRep partition's A has about
    /// 3·10^8), and at 130M rows the narrower starts save 1.5 GB over three matrices.
    pub row_ptr: Vec<u32>,
    /// Column of each term: input i is column i, aux j is column num_inputs + j.
    pub cols: Vec<u32>,
    /// Index into [`CompiledShape::coeffs`] of each term.
    pub coeffs: Vec<u32>,
}

impl CsrMatrix {
    /// Number of rows.
    pub fn rows(&self) -> usize {
        self.row_ptr.len().saturating_sub(1)
    }

    /// Number of stored terms.
    pub fn nonzeros(&self) -> usize {
        self.cols.len()
    }

    /// Bytes this matrix holds on the heap.
    pub fn heap_bytes(&self) -> usize {
        self.row_ptr.len() * 4 + self.cols.len() * 4 + self.coeffs.len() * 4
    }
}

/// A circuit's R1CS compiled for repeated witness-only synthesis.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CompiledShape {
    /// Inputs, ONE included.
    pub num_inputs: usize,
    /// Aux variables.
    pub num_aux: usize,
    /// A, B and C.
    pub a: CsrMatrix,
    /// B.
    pub b: CsrMatrix,
    /// C.
    pub c: CsrMatrix,
    /// The distinct coefficients; slot 0 is 1 and slot 1 is −1.
    pub coeffs: Vec<Scalar>,
    /// Aux variables in A (non-zero coefficient).
    pub a_aux_density: Density,
    /// Inputs in B.
    pub b_input_density: Density,
    /// Aux variables in B.
    pub b_aux_density: Density,
    /// The head's size of this shape's pieces, once learned ([`CompiledShape::witness_assignment_pieces`]).
    pub(crate) piece_head: PieceHead,
}

impl CompiledShape {
    /// Bytes the shape holds on the heap (matrices, coefficient table, densities): resident while it is in use.
    pub fn heap_bytes(&self) -> usize {
        self.a.heap_bytes()
            + self.b.heap_bytes()
            + self.c.heap_bytes()
            + self.coeffs.len() * 32
            + (self.a_aux_density.len() + self.b_input_density.len() + self.b_aux_density.len()) / 8
    }

    /// Records and compiles a circuit (values are never evaluated).
    ///
    /// # Errors
    /// What the circuit's code returns; [`Error::ShapeTooLarge`] beyond 2^32 columns or coefficients.
    pub fn compile<C: Circuit<Scalar>>(circuit: C) -> Result<Self> {
        let shape =
            R1csShape::record(circuit).map_err(|source| Error::Synthesis { circuit: 0, source })?;
        Self::from_shape(&shape)
    }

    /// Compiles a recorded shape.
    ///
    /// # Errors
    /// [`Error::ShapeTooLarge`] beyond 2^32 columns, coefficients or terms in a matrix.
    pub fn from_shape(shape: &R1csShape) -> Result<Self> {
        let columns = shape.num_inputs + shape.num_aux;
        if u32::try_from(columns).is_err() {
            return Err(Error::ShapeTooLarge(format!(
                "{columns} variables exceed 2^32 columns"
            )));
        }
        let mut table = vec![Scalar::ONE, -Scalar::ONE];
        let mut index: HashMap<[u8; 32], u32> = HashMap::new();
        index.insert(Scalar::ONE.to_repr(), COEFF_ONE);
        index.insert((-Scalar::ONE).to_repr(), COEFF_MINUS_ONE);
        let mut compile = |m: &crate::SparseMatrix| -> Result<CsrMatrix> {
            let mut out = CsrMatrix {
                row_ptr: Vec::with_capacity(m.rows() + 1),
                ..Default::default()
            };
            out.row_ptr.push(0);
            out.cols.reserve(m.terms.len());
            out.coeffs.reserve(m.terms.len());
            for r in 0..m.rows() {
                for (var, coeff) in m.row(r) {
                    // Zero coefficients contribute nothing and set no density bit: drop them.
                    if bool::from(coeff.is_zero()) {
                        continue;
                    }
                    let col = match *var {
                        Var::Input(i) => i,
                        Var::Aux(i) => shape.num_inputs + i,
                    };
                    let key: [u8; 32] = coeff.to_repr();
                    let slot = match index.get(&key) {
                        Some(&s) => s,
                        None => {
                            let s = u32::try_from(table.len()).map_err(|_| {
                                Error::ShapeTooLarge("more than 2^32 distinct coefficients".into())
                            })?;
                            table.push(*coeff);
                            index.insert(key, s);
                            s
                        }
                    };
                    out.cols.push(col as u32);
                    out.coeffs.push(slot);
                }
                out.row_ptr.push(u32::try_from(out.cols.len()).map_err(|_| {
                    Error::ShapeTooLarge("a matrix with 2^32 terms or more".into())
                })?);
            }
            Ok(out)
        };
        let a = compile(&shape.a)?;
        let b = compile(&shape.b)?;
        let c = compile(&shape.c)?;
        let mut out = CompiledShape {
            num_inputs: shape.num_inputs,
            num_aux: shape.num_aux,
            a,
            b,
            c,
            coeffs: table,
            a_aux_density: Density::new(),
            b_input_density: Density::new(),
            b_aux_density: Density::new(),
            piece_head: PieceHead::default(),
        };
        out.recompute_densities();
        Ok(out)
    }

    /// The densities from the matrices: a variable's bit is set when it has a term (terms never have a zero
    /// coefficient here) in A (aux) or B (inputs and aux).
    pub(crate) fn recompute_densities(&mut self) {
        let n_in = self.num_inputs;
        let sized = |len: usize| {
            let mut d = Density::with_capacity(len);
            for _ in 0..len {
                d.push_unset();
            }
            d
        };
        let (mut a_aux, mut b_in, mut b_aux) =
            (sized(self.num_aux), sized(n_in), sized(self.num_aux));
        for &col in &self.a.cols {
            if col as usize >= n_in {
                a_aux.set(col as usize - n_in);
            }
        }
        for &col in &self.b.cols {
            match (col as usize).checked_sub(n_in) {
                Some(aux) => b_aux.set(aux),
                None => b_in.set(col as usize),
            }
        }
        self.a_aux_density = a_aux;
        self.b_input_density = b_in;
        self.b_aux_density = b_aux;
    }

    /// Number of constraints, input constraints included.
    pub fn num_constraints(&self) -> usize {
        self.a.rows()
    }

    /// Runs `circuit` for its witness only: every allocation's closure, no `enforce` (their closures are never
    /// called). This is the part of [`CompiledShape::synthesize`] that runs the circuit's own code, in one thread; the
    /// products that follow are parallel.
    ///
    /// # Errors
    /// [`Error::Synthesis`] if the circuit fails; [`Error::ShapeMismatch`] if it allocates other counts than the compiled shape
    /// (a circuit whose structure depends on its values cannot use a compiled shape).
    pub fn witness<C: Circuit<Scalar>>(&self, circuit: C) -> Result<Witness> {
        self.witness_into(circuit, Vec::new(), Vec::new())
    }

    /// [`CompiledShape::witness`] into the memory of `inputs` and `aux` (cleared first, grown if too small).
    pub(crate) fn witness_into<C: Circuit<Scalar>>(
        &self,
        circuit: C,
        inputs: Vec<Scalar>,
        aux: Vec<Scalar>,
    ) -> Result<Witness> {
        let w = self.run_witness(circuit, inputs, aux)?;
        if w.inputs.len() != self.num_inputs || w.aux.len() != self.num_aux {
            return Err(Error::ShapeMismatch(format!(
                "the circuit allocated {} inputs and {} aux variables; the compiled shape has {} and {}",
                w.inputs.len(),
                w.aux.len(),
                self.num_inputs,
                self.num_aux
            )));
        }
        Ok(w)
    }

    /// Runs `circuit` for its witness into the memory of `inputs` and `aux` (cleared first, room for this shape's
    /// counts reserved), whatever counts it makes.
    pub(crate) fn run_witness<C: Circuit<Scalar>>(
        &self,
        circuit: C,
        inputs: Vec<Scalar>,
        aux: Vec<Scalar>,
    ) -> Result<Witness> {
        self.run_witness_reserving(circuit, inputs, aux, (self.num_inputs.max(1), self.num_aux))
    }

    /// [`CompiledShape::run_witness`] with room reserved for `room` (inputs with ONE, aux) values.
    pub(crate) fn run_witness_reserving<C: Circuit<Scalar>>(
        &self,
        circuit: C,
        mut inputs: Vec<Scalar>,
        mut aux: Vec<Scalar>,
        room: (usize, usize),
    ) -> Result<Witness> {
        inputs.clear();
        inputs.reserve(room.0);
        inputs.push(Scalar::ONE);
        aux.clear();
        aux.reserve(room.1);
        let mut w = WitnessCs::whole(inputs, aux);
        circuit
            .synthesize(&mut w)
            .map_err(|source| Error::Synthesis { circuit: 0, source })?;
        Ok(Witness {
            inputs: w.inputs.head,
            aux: w.aux.head,
        })
    }

    /// Synthesizes `circuit`'s witness only (its `enforce` calls cost nothing) and computes a, b and c from the matrices.
    ///
    /// # Errors
    /// As [`CompiledShape::witness`].
    pub fn synthesize<C: Circuit<Scalar>>(&self, circuit: C) -> Result<ProvingAssignment> {
        self.synthesize_reusing(circuit, ProvingAssignment::default())
    }

    /// [`CompiledShape::synthesize`] into the memory of an assignment the caller is done with (`spare`, typically the
    /// previous partition's): its vectors are overwritten, not dropped and allocated again, so their pages are not
    /// faulted in and cleared by the kernel a second time. The result is the same as `synthesize`'s.
    ///
    /// # Errors
    /// As [`CompiledShape::witness`].
    pub fn synthesize_reusing<C: Circuit<Scalar>>(
        &self,
        circuit: C,
        spare: ProvingAssignment,
    ) -> Result<ProvingAssignment> {
        self.synthesized_with(spare, |inputs, aux| self.witness_into(circuit, inputs, aux))
    }

    /// `spare`'s vectors given to `witness`, then a, b and c from the matrices into `spare`'s a, b and c.
    pub(crate) fn synthesized_with(
        &self,
        spare: ProvingAssignment,
        witness: impl FnOnce(Vec<Scalar>, Vec<Scalar>) -> Result<Witness>,
    ) -> Result<ProvingAssignment> {
        let ProvingAssignment {
            mut a,
            mut b,
            mut c,
            input_assignment,
            aux_assignment,
            ..
        } = spare;
        let started = std::time::Instant::now();
        let Witness { inputs, aux } = witness(input_assignment, aux_assignment)?;
        let witness = started.elapsed();
        self.products(&inputs, &aux, [&mut a, &mut b, &mut c]);
        tracing::debug!(
            witness_ms = witness.as_secs_f64() * 1e3,
            products_ms = (started.elapsed() - witness).as_secs_f64() * 1e3,
            "compiled synthesis"
        );
        Ok(self.assignment(inputs, aux, [a, b, c], 0))
    }

    /// `spare`'s witness vectors given to `witness`, and a, b and c left to the prover (`spare`'s are freed).
    pub(crate) fn deferred_with(
        &self,
        spare: ProvingAssignment,
        witness: impl FnOnce(Vec<Scalar>, Vec<Scalar>) -> Result<Witness>,
    ) -> Result<ProvingAssignment> {
        let ProvingAssignment {
            input_assignment,
            aux_assignment,
            ..
        } = spare;
        let Witness { inputs, aux } = witness(input_assignment, aux_assignment)?;
        Ok(self.assignment(inputs, aux, Default::default(), self.num_constraints()))
    }

    /// The assignment of a witness (its input and aux values), with a, b and c (empty, and `deferred_rows` the
    /// constraint count, when they are left to the prover) and the shape's densities.
    fn assignment(
        &self,
        inputs: Vec<Scalar>,
        aux: Vec<Scalar>,
        [a, b, c]: [Vec<Scalar>; 3],
        deferred_rows: usize,
    ) -> ProvingAssignment {
        ProvingAssignment {
            a,
            b,
            c,
            input_assignment: inputs,
            aux_assignment: aux,
            a_aux_density: self.a_aux_density.clone(),
            b_input_density: self.b_input_density.clone(),
            b_aux_density: self.b_aux_density.clone(),
            deferred_rows,
            check: None,
        }
    }

    /// Synthesizes `circuit`'s witness only and leaves a, b and c to the prover: the assignment's a, b and c are
    /// empty and [`ProvingAssignment::deferred_rows`] holds the constraint count. A GPU prover computes them on the
    /// device from the witness it uploads anyway (host memory per partition is then the assignment alone, and the
    /// sparse products leave the CPU); [`CompiledShape::compute_products`] computes them on the host. `spare`'s
    /// assignment vector is written into; its a, b and c are freed.
    ///
    /// # Errors
    /// As [`CompiledShape::witness`].
    pub fn witness_assignment<C: Circuit<Scalar>>(
        &self,
        circuit: C,
        spare: ProvingAssignment,
    ) -> Result<ProvingAssignment> {
        self.deferred_with(spare, |inputs, aux| self.witness_into(circuit, inputs, aux))
    }

    /// Computes the a, b and c that [`CompiledShape::witness_assignment`] left out, on the host (into `pa`'s vectors),
    /// so that `pa` is what [`CompiledShape::synthesize`] returns. Does nothing when `pa` has them already.
    ///
    /// # Errors
    /// [`Error::ShapeMismatch`] when `pa`'s counts are not this shape's.
    pub fn compute_products(&self, pa: &mut ProvingAssignment) -> Result<()> {
        if !pa.products_deferred() {
            return Ok(());
        }
        self.check_counts(pa)?;
        self.products(
            &pa.input_assignment,
            &pa.aux_assignment,
            [&mut pa.a, &mut pa.b, &mut pa.c],
        );
        pa.deferred_rows = 0;
        Ok(())
    }

    /// Checks that `pa` has this shape's input, aux and constraint counts (before its a, b and c are computed from
    /// it, here or on a device).
    ///
    /// # Errors
    /// [`Error::ShapeMismatch`] naming the counts.
    pub fn check_counts(&self, pa: &ProvingAssignment) -> Result<()> {
        let (ni, na, rows) = (
            pa.input_assignment.len(),
            pa.aux_assignment.len(),
            pa.num_constraints(),
        );
        if ni != self.num_inputs || na != self.num_aux || rows != self.num_constraints() {
            return Err(Error::ShapeMismatch(format!(
                "the assignment has {ni} inputs, {na} aux variables and {rows} constraints; the compiled shape has {}, {} and {}",
                self.num_inputs,
                self.num_aux,
                self.num_constraints()
            )));
        }
        Ok(())
    }

    /// [`CompiledShape::synthesize`] for many circuits of this shape, in parallel; the first error in circuit order is returned.
    ///
    /// # Errors
    /// As [`CompiledShape::synthesize`]; a circuit's own failure names its index in the batch.
    pub fn synthesize_batch<C: Circuit<Scalar> + Send>(
        &self,
        circuits: Vec<C>,
    ) -> Result<Vec<ProvingAssignment>> {
        self.synthesize_batch_reusing(circuits, Vec::new())
    }

    /// [`CompiledShape::synthesize_batch`] reusing finished assignments (see [`CompiledShape::synthesize_reusing`]):
    /// circuit i takes `spares[i]` where there is one (spares beyond the circuits are dropped).
    ///
    /// # Errors
    /// As [`CompiledShape::synthesize_batch`].
    pub fn synthesize_batch_reusing<C: Circuit<Scalar> + Send>(
        &self,
        circuits: Vec<C>,
        spares: Vec<ProvingAssignment>,
    ) -> Result<Vec<ProvingAssignment>> {
        crate::batch_reusing(circuits, spares, |i, c, spare| {
            self.synthesize_reusing(c, spare).map_err(in_batch(i))
        })
    }

    /// [`CompiledShape::witness_assignment`] for many circuits of this shape, in parallel, circuit i writing into
    /// `spares[i]` where there is one; the first error in circuit order is returned.
    ///
    /// # Errors
    /// As [`CompiledShape::witness_assignment`]; a circuit's own failure names its index in the batch.
    pub fn witness_assignment_batch<C: Circuit<Scalar> + Send>(
        &self,
        circuits: Vec<C>,
        spares: Vec<ProvingAssignment>,
    ) -> Result<Vec<ProvingAssignment>> {
        crate::batch_reusing(circuits, spares, |i, c, spare| {
            self.witness_assignment(c, spare).map_err(in_batch(i))
        })
    }

    /// a, b and c of the witness `inputs` then `aux` (the matrices' column order), into the given vectors (their
    /// allocations reused), the three products side by side and each row-parallel.
    fn products(&self, inputs: &[Scalar], aux: &[Scalar], [a, b, c]: [&mut Vec<Scalar>; 3]) {
        let ni = inputs.len();
        let value = |col: usize| {
            if col < ni {
                inputs[col]
            } else {
                aux[col - ni]
            }
        };
        rayon::join(
            || self.spmv_with(&self.a, value, a),
            || {
                rayon::join(
                    || self.spmv_with(&self.b, value, b),
                    || self.spmv_with(&self.c, value, c),
                )
            },
        );
    }

    /// Row-parallel sparse matrix times the vector that `value(column)` reads, into `out` (its allocation reused).
    fn spmv_with(
        &self,
        m: &CsrMatrix,
        value: impl Fn(usize) -> Scalar + Sync,
        out: &mut Vec<Scalar>,
    ) {
        (0..m.rows())
            .into_par_iter()
            .with_min_len(4096)
            .map(|r| {
                let (start, end) = (m.row_ptr[r] as usize, m.row_ptr[r + 1] as usize);
                let mut acc = Scalar::ZERO;
                for k in start..end {
                    let v = value(m.cols[k] as usize);
                    match m.coeffs[k] {
                        COEFF_ONE => acc += v,
                        COEFF_MINUS_ONE => acc -= v,
                        slot => acc += v * self.coeffs[slot as usize],
                    }
                }
                acc
            })
            .collect_into_vec(out);
    }
}

/// A circuit's full assignment from [`CompiledShape::witness`], in the matrices' column order: the inputs (ONE
/// first), then the aux values. The two are kept apart because the aux vector is what an assignment keeps (and a GPU
/// prover uploads) as it is: one vector with the inputs in front would have to be shifted by the inputs' width
/// afterwards, a copy of the whole witness (4 GiB at a PoRep partition's size).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Witness {
    /// The input values, ONE first.
    pub inputs: Vec<Scalar>,
    /// The aux values, in allocation order.
    pub aux: Vec<Scalar>,
}

/// Renames a circuit's own synthesis failure with its index `i` in a batch.
fn in_batch(i: usize) -> impl Fn(Error) -> Error {
    move |e| match e {
        Error::Synthesis { source, .. } => Error::Synthesis { circuit: i, source },
        other => other,
    }
}
