//! Recording a circuit's R1CS: the A, B and C matrices, without values.

use bellpepper_core::{
    Circuit, ConstraintSystem, Index, LinearCombination, SynthesisError, Variable,
};
use blstrs::Scalar;
use ff::Field;
pub use lc_indexer::Var;

/// A sparse matrix in compressed sparse rows: row `r` holds `terms[row_ptr[r]..row_ptr[r + 1]]`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SparseMatrix {
    /// Row starts; `row_ptr.len()` is rows + 1.
    pub row_ptr: Vec<usize>,
    /// Terms (variable, coefficient) of all rows, row after row, each row sorted inputs first then aux.
    pub terms: Vec<(Var, Scalar)>,
}

impl Default for SparseMatrix {
    fn default() -> Self {
        Self {
            row_ptr: vec![0],
            terms: Vec::new(),
        }
    }
}

impl SparseMatrix {
    /// Number of rows.
    pub fn rows(&self) -> usize {
        self.row_ptr.len() - 1
    }

    /// The terms of row `r`.
    pub fn row(&self, r: usize) -> &[(Var, Scalar)] {
        &self.terms[self.row_ptr[r]..self.row_ptr[r + 1]]
    }

    /// Number of stored terms with a non-zero coefficient.
    pub fn nonzeros(&self) -> usize {
        self.terms
            .iter()
            .filter(|t| !bool::from(t.1.is_zero()))
            .count()
    }

    fn push_row(&mut self, lc: &LinearCombination<Scalar>) {
        self.terms
            .extend(lc.iter_inputs().map(|(&i, c)| (Var::Input(i), *c)));
        self.terms
            .extend(lc.iter_aux().map(|(&i, c)| (Var::Aux(i), *c)));
        self.row_ptr.push(self.terms.len());
    }
}

/// A circuit's R1CS as the prover sees it: ONE first, then the circuit, then `x_i * 0 = 0` per input.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct R1csShape {
    /// Inputs, ONE included.
    pub num_inputs: usize,
    /// Aux variables.
    pub num_aux: usize,
    /// The A matrix.
    pub a: SparseMatrix,
    /// The B matrix.
    pub b: SparseMatrix,
    /// The C matrix.
    pub c: SparseMatrix,
}

impl R1csShape {
    /// Records `circuit` without evaluating any value.
    ///
    /// # Errors
    /// What the circuit's own code returns (value closures are never called, so a blank circuit works).
    pub fn record<C: Circuit<Scalar>>(circuit: C) -> Result<Self, SynthesisError> {
        let mut shape = R1csShape {
            num_inputs: 1,
            ..Default::default()
        };
        circuit.synthesize(&mut shape)?;
        for i in 0..shape.num_inputs {
            shape.enforce(
                || "",
                |lc| lc + Variable::new_unchecked(Index::Input(i)),
                |lc| lc,
                |lc| lc,
            );
        }
        Ok(shape)
    }

    /// Number of constraints, input constraints included.
    pub fn num_constraints(&self) -> usize {
        self.a.rows()
    }
}

impl ConstraintSystem<Scalar> for R1csShape {
    type Root = Self;

    fn new() -> Self {
        R1csShape {
            num_inputs: 1,
            ..Default::default()
        }
    }

    fn alloc<F, A, AR>(&mut self, _: A, _: F) -> Result<Variable, SynthesisError>
    where
        F: FnOnce() -> Result<Scalar, SynthesisError>,
        A: FnOnce() -> AR,
        AR: Into<String>,
    {
        self.num_aux += 1;
        Ok(Variable::new_unchecked(Index::Aux(self.num_aux - 1)))
    }

    fn alloc_input<F, A, AR>(&mut self, _: A, _: F) -> Result<Variable, SynthesisError>
    where
        F: FnOnce() -> Result<Scalar, SynthesisError>,
        A: FnOnce() -> AR,
        AR: Into<String>,
    {
        self.num_inputs += 1;
        Ok(Variable::new_unchecked(Index::Input(self.num_inputs - 1)))
    }

    fn enforce<A, AR, LA, LB, LC>(&mut self, _: A, a: LA, b: LB, c: LC)
    where
        A: FnOnce() -> AR,
        AR: Into<String>,
        LA: FnOnce(LinearCombination<Scalar>) -> LinearCombination<Scalar>,
        LB: FnOnce(LinearCombination<Scalar>) -> LinearCombination<Scalar>,
        LC: FnOnce(LinearCombination<Scalar>) -> LinearCombination<Scalar>,
    {
        self.a.push_row(&a(LinearCombination::zero()));
        self.b.push_row(&b(LinearCombination::zero()));
        self.c.push_row(&c(LinearCombination::zero()));
    }

    fn push_namespace<NR, N>(&mut self, _: N)
    where
        NR: Into<String>,
        N: FnOnce() -> NR,
    {
    }

    fn pop_namespace(&mut self) {}

    fn get_root(&mut self) -> &mut Self::Root {
        self
    }
}
