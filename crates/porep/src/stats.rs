//! Statistics of a real PoRep partition circuit: the numbers that size the split MSM and validate the PoRep-like
//! synthetic circuit.

use ff::Field;
use filecoin_proofs::with_shape;
use r1cs_synth::R1csShape;
use serde::Serialize;
use storage_proofs_core::merkle::MerkleTreeTrait;

use crate::prove::{synthesize_partition, PartitionCircuits};
use crate::{C1Output, Error, Result};

/// One partition's circuit statistics.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct CircuitStats {
    /// The partition.
    pub partition: usize,
    /// Constraints, the per-input constraints bellperson adds included.
    pub constraints: usize,
    /// Public inputs, ONE included.
    pub inputs: usize,
    /// Aux (private) variables.
    pub aux: usize,
    /// Non-zero coefficients of A, B and C.
    pub a_nonzeros: usize,
    /// Non-zero coefficients of B.
    pub b_nonzeros: usize,
    /// Non-zero coefficients of C.
    pub c_nonzeros: usize,
    /// Fraction of aux variables that appear in A.
    pub a_aux_density: f64,
    /// Fraction of inputs that appear in B.
    pub b_input_density: f64,
    /// Fraction of aux variables that appear in B.
    pub b_aux_density: f64,
    /// Fraction of aux values that are 0.
    pub aux_zero: f64,
    /// Fraction of aux values that are 1.
    pub aux_one: f64,
    /// Fraction of aux values that are neither.
    pub aux_other: f64,
}

/// Measures partition `k` of `c1`: its shape (recorded without values) and its assignment (synthesized).
///
/// # Errors
/// [`Error::Prove`] naming the partition if the circuit cannot be built or synthesized.
pub fn partition_stats(c1: &C1Output, k: usize) -> Result<CircuitStats> {
    let shape = with_shape!(c1.sector_size(), record_tree, c1, k,)?;
    let pa = synthesize_partition(c1, k, crate::Synthesis::Direct)?;
    let frac = |n: usize, d: usize| if d == 0 { 0.0 } else { n as f64 / d as f64 };
    let aux = pa.aux_assignment.len();
    let zero = pa
        .aux_assignment
        .iter()
        .filter(|v| bool::from(v.is_zero()))
        .count();
    let one = pa
        .aux_assignment
        .iter()
        .filter(|v| **v == blstrs::Scalar::ONE)
        .count();
    Ok(CircuitStats {
        partition: k,
        constraints: pa.num_constraints(),
        inputs: pa.num_inputs(),
        aux,
        a_nonzeros: shape.a.nonzeros(),
        b_nonzeros: shape.b.nonzeros(),
        c_nonzeros: shape.c.nonzeros(),
        a_aux_density: frac(pa.a_aux_density.count_ones(), aux),
        b_input_density: frac(pa.b_input_density.count_ones(), pa.num_inputs()),
        b_aux_density: frac(pa.b_aux_density.count_ones(), aux),
        aux_zero: frac(zero, aux),
        aux_one: frac(one, aux),
        aux_other: frac(aux - zero - one, aux),
    })
}

fn record_tree<Tree: 'static + MerkleTreeTrait>(c1: &C1Output, k: usize) -> Result<R1csShape> {
    let circuit = PartitionCircuits::<Tree>::new(c1)?.whole(k)?;
    R1csShape::record(circuit).map_err(|e| Error::Prove {
        partition: k,
        message: format!("recording the shape: {e}"),
    })
}
