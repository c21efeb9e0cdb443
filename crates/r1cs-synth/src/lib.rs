#![doc = include_str!("../README.md")]
#![forbid(unsafe_code)]

mod compiled;
mod density;
pub mod pieces;
mod shape;
mod shape_file;

pub use compiled::{CompiledShape, CsrMatrix, Witness};
pub use density::Density;
pub use shape::{R1csShape, SparseMatrix, Var};
pub use shape_file::{ShapeFileError, SHAPE_FORMAT_VERSION};

use bellpepper_core::{
    Circuit, ConstraintSystem, Index, LinearCombination, SynthesisError, Variable,
};
use blstrs::Scalar;
use ff::Field;
use rayon::prelude::*;

/// Errors of synthesis.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The circuit's own code failed.
    #[error("circuit {circuit}: synthesis failed: {source}")]
    Synthesis {
        /// Index of the circuit in its batch (0 for a single circuit).
        circuit: usize,
        /// What bellpepper reported.
        #[source]
        source: SynthesisError,
    },
    /// A shape is too large for the compiled representation.
    #[error("compiled shape: {0}")]
    ShapeTooLarge(String),
    /// A circuit does not have the compiled shape it is synthesized against.
    #[error("circuit does not match its compiled shape: {0}")]
    ShapeMismatch(String),
    /// A constraint does not hold for the assignment.
    #[error("circuit {circuit}: constraint {index} is not satisfied (a*b != c): {path}")]
    Unsatisfied {
        /// Index of the circuit in its batch.
        circuit: usize,
        /// Index of the constraint, counting from 0 in synthesis order.
        index: usize,
        /// Namespace path and annotation of the constraint.
        path: String,
    },
}

/// Result alias of this crate.
pub type Result<T> = std::result::Result<T, Error>;

/// Expected sizes of a circuit, to allocate every vector once (the A2 pre-sizing hint).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SizeHint {
    /// Constraints, input constraints included.
    pub constraints: usize,
    /// Aux variables.
    pub aux: usize,
    /// Inputs, ONE included.
    pub inputs: usize,
}

/// How to synthesize.
#[derive(Clone, Copy, Debug, Default)]
pub struct SynthesisOptions {
    /// Check `a * b = c` for every constraint and report the first that fails, with its namespace path.
    /// Costs one multiplication per constraint plus namespace bookkeeping.
    pub check: bool,
    /// Pre-size vectors (A2).
    pub hint: Option<SizeHint>,
}

/// The witness-side result of synthesizing one circuit: what the prover needs.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ProvingAssignment {
    /// A evaluated at every constraint.
    pub a: Vec<Scalar>,
    /// B evaluated at every constraint.
    pub b: Vec<Scalar>,
    /// C evaluated at every constraint.
    pub c: Vec<Scalar>,
    /// Input values; `input_assignment[0]` is ONE.
    pub input_assignment: Vec<Scalar>,
    /// Aux values.
    pub aux_assignment: Vec<Scalar>,
    /// Aux variables that appear in A.
    pub a_aux_density: Density,
    /// Inputs that appear in B.
    pub b_input_density: Density,
    /// Aux variables that appear in B.
    pub b_aux_density: Density,
    /// The number of constraints when a, b and c are left to the prover ([`CompiledShape::witness_assignment`]):
    /// then a, b and c are empty, and the prover computes them from the compiled shape (on the GPU, from the witness
    /// on the device; see [`CompiledShape::compute_products`] for the host). 0 when a, b and c are here.
    pub deferred_rows: usize,
    check: Option<Checker>,
}

/// Namespace tracking and the first failing constraint, when checking.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
struct Checker {
    namespace: Vec<String>,
    first_failure: Option<(usize, String)>,
}

impl ProvingAssignment {
    /// Reserves what `opts.hint` asks for (on empty vectors) and turns the checker on if asked.
    fn prepare(&mut self, opts: &SynthesisOptions) {
        if let Some(h) = opts.hint {
            self.a.reserve_exact(h.constraints);
            self.b.reserve_exact(h.constraints);
            self.c.reserve_exact(h.constraints);
            self.input_assignment.reserve_exact(h.inputs);
            self.aux_assignment.reserve_exact(h.aux);
            self.a_aux_density.reserve(h.aux);
            self.b_input_density.reserve(h.inputs);
            self.b_aux_density.reserve(h.aux);
        }
        if opts.check {
            self.check = Some(Checker::default());
        }
    }

    /// Number of constraints, input constraints included.
    pub fn num_constraints(&self) -> usize {
        if self.products_deferred() {
            self.deferred_rows
        } else {
            self.a.len()
        }
    }

    /// Whether a, b and c are left to the prover (see [`ProvingAssignment::deferred_rows`]).
    pub fn products_deferred(&self) -> bool {
        self.deferred_rows > 0
    }

    /// Number of inputs, ONE included.
    pub fn num_inputs(&self) -> usize {
        self.input_assignment.len()
    }

    /// Number of aux variables.
    pub fn num_aux(&self) -> usize {
        self.aux_assignment.len()
    }

    /// The sizes of this assignment, as a hint for the next circuit of the same shape.
    pub fn size_hint(&self) -> SizeHint {
        SizeHint {
            constraints: self.num_constraints(),
            aux: self.num_aux(),
            inputs: self.num_inputs(),
        }
    }

    /// The public inputs a verifier needs: the inputs after ONE.
    pub fn public_inputs(&self) -> &[Scalar] {
        &self.input_assignment[1..]
    }

    /// Index of the first constraint with `a * b != c`, if any (a plain scan, no namespace information).
    pub fn first_unsatisfied(&self) -> Option<usize> {
        (0..self.a.len()).find(|&i| self.a[i] * self.b[i] != self.c[i])
    }
}

/// Evaluates `lc`, setting density bits for variables with a non-zero coefficient.
#[inline]
fn eval_tracked(
    lc: &LinearCombination<Scalar>,
    input_density: Option<&mut Density>,
    aux_density: Option<&mut Density>,
    inputs: &[Scalar],
    aux: &[Scalar],
) -> Scalar {
    let mut acc = Scalar::ZERO;
    // Most values are bits (every boolean the gadgets allocate): a zero adds nothing and a one adds its coefficient,
    // so only the other values pay for a product. Exact field arithmetic, so the sum is the same bit for bit.
    let mut add = |value: Scalar, coeff: &Scalar| {
        if value == Scalar::ZERO {
            return;
        }
        if *coeff == Scalar::ONE {
            acc += value;
        } else if value == Scalar::ONE {
            acc += coeff;
        } else {
            acc += value * coeff;
        }
    };
    // Coefficients are the circuit's public constants: plain limb comparisons (blstrs's `==`), not the constant-time
    // `is_zero`, whose `black_box` showed in profiles of this loop.
    let mut input_density = input_density;
    for (&i, coeff) in lc.iter_inputs() {
        if *coeff == Scalar::ZERO {
            continue;
        }
        add(inputs[i], coeff);
        if let Some(d) = input_density.as_deref_mut() {
            d.set(i);
        }
    }
    let mut aux_density = aux_density;
    for (&i, coeff) in lc.iter_aux() {
        if *coeff == Scalar::ZERO {
            continue;
        }
        add(aux[i], coeff);
        if let Some(d) = aux_density.as_deref_mut() {
            d.set(i);
        }
    }
    acc
}

impl ConstraintSystem<Scalar> for ProvingAssignment {
    type Root = Self;

    fn new() -> Self {
        Self::default()
    }

    fn alloc<F, A, AR>(&mut self, _: A, f: F) -> std::result::Result<Variable, SynthesisError>
    where
        F: FnOnce() -> std::result::Result<Scalar, SynthesisError>,
        A: FnOnce() -> AR,
        AR: Into<String>,
    {
        self.aux_assignment.push(f()?);
        self.a_aux_density.push_unset();
        self.b_aux_density.push_unset();
        Ok(Variable::new_unchecked(Index::Aux(
            self.aux_assignment.len() - 1,
        )))
    }

    fn alloc_input<F, A, AR>(&mut self, _: A, f: F) -> std::result::Result<Variable, SynthesisError>
    where
        F: FnOnce() -> std::result::Result<Scalar, SynthesisError>,
        A: FnOnce() -> AR,
        AR: Into<String>,
    {
        self.input_assignment.push(f()?);
        self.b_input_density.push_unset();
        Ok(Variable::new_unchecked(Index::Input(
            self.input_assignment.len() - 1,
        )))
    }

    fn enforce<A, AR, LA, LB, LC>(&mut self, annotation: A, a: LA, b: LB, c: LC)
    where
        A: FnOnce() -> AR,
        AR: Into<String>,
        LA: FnOnce(LinearCombination<Scalar>) -> LinearCombination<Scalar>,
        LB: FnOnce(LinearCombination<Scalar>) -> LinearCombination<Scalar>,
        LC: FnOnce(LinearCombination<Scalar>) -> LinearCombination<Scalar>,
    {
        let a = a(LinearCombination::zero());
        let b = b(LinearCombination::zero());
        let c = c(LinearCombination::zero());
        let (inputs, aux) = (&self.input_assignment, &self.aux_assignment);
        // Inputs are dense in A (every input has its x_i * 0 = 0 constraint): no A-input tracker.
        let va = eval_tracked(&a, None, Some(&mut self.a_aux_density), inputs, aux);
        let vb = eval_tracked(
            &b,
            Some(&mut self.b_input_density),
            Some(&mut self.b_aux_density),
            inputs,
            aux,
        );
        let vc = eval_tracked(&c, None, None, inputs, aux);
        if let Some(check) = &mut self.check {
            if check.first_failure.is_none() && va * vb != vc {
                let mut path = check.namespace.join("/");
                if !path.is_empty() {
                    path.push('/');
                }
                path.push_str(&annotation().into());
                check.first_failure = Some((self.a.len(), path));
            }
        }
        self.a.push(va);
        self.b.push(vb);
        self.c.push(vc);
    }

    fn push_namespace<NR, N>(&mut self, name: N)
    where
        NR: Into<String>,
        N: FnOnce() -> NR,
    {
        // Names cost an allocation each: only the checker pays for them.
        if let Some(check) = &mut self.check {
            check.namespace.push(name().into());
        }
    }

    fn pop_namespace(&mut self) {
        if let Some(check) = &mut self.check {
            check.namespace.pop();
        }
    }

    fn get_root(&mut self) -> &mut Self::Root {
        self
    }
}

/// Synthesizes one circuit as bellperson's prover does: ONE, the circuit, then `x_i * 0 = 0` per input.
///
/// # Errors
/// [`Error::Synthesis`] if the circuit fails; [`Error::Unsatisfied`] if `opts.check` is on and a constraint fails.
pub fn synthesize<C: Circuit<Scalar>>(
    circuit: C,
    opts: &SynthesisOptions,
) -> Result<ProvingAssignment> {
    synthesize_reusing(circuit, opts, ProvingAssignment::default())
}

/// [`synthesize`] into the memory of an assignment the caller is done with (`spare`, typically the previous
/// partition's): its vectors are emptied and written again, not dropped and allocated again, so their pages are
/// neither faulted in nor cleared by the kernel a second time, and they do not grow by reallocation when `spare` came
/// from a circuit of the same shape. `opts.hint` still reserves what `spare` lacks. The result is the same as
/// `synthesize`'s.
///
/// # Errors
/// As [`synthesize`].
pub fn synthesize_reusing<C: Circuit<Scalar>>(
    circuit: C,
    opts: &SynthesisOptions,
    spare: ProvingAssignment,
) -> Result<ProvingAssignment> {
    synthesize_reusing_indexed(0, circuit, opts, spare)
}

fn synthesize_reusing_indexed<C: Circuit<Scalar>>(
    index: usize,
    circuit: C,
    opts: &SynthesisOptions,
    spare: ProvingAssignment,
) -> Result<ProvingAssignment> {
    // The spare's vectors, emptied; everything else (the constraint count, the checker) starts afresh.
    fn emptied<T>(mut v: Vec<T>) -> Vec<T> {
        v.clear();
        v
    }
    let emptied_density = |mut d: Density| {
        d.clear();
        d
    };
    let mut pa = ProvingAssignment {
        a: emptied(spare.a),
        b: emptied(spare.b),
        c: emptied(spare.c),
        input_assignment: emptied(spare.input_assignment),
        aux_assignment: emptied(spare.aux_assignment),
        a_aux_density: emptied_density(spare.a_aux_density),
        b_input_density: emptied_density(spare.b_input_density),
        b_aux_density: emptied_density(spare.b_aux_density),
        ..ProvingAssignment::default()
    };
    pa.prepare(opts);
    let wrap = |source| Error::Synthesis {
        circuit: index,
        source,
    };
    pa.alloc_input(|| "ONE", || Ok(Scalar::ONE)).map_err(wrap)?;
    circuit.synthesize(&mut pa).map_err(wrap)?;
    for i in 0..pa.input_assignment.len() {
        pa.enforce(
            || "input constraint",
            |lc| lc + Variable::new_unchecked(Index::Input(i)),
            |lc| lc,
            |lc| lc,
        );
    }
    if let Some(check) = pa.check.take() {
        if let Some((index_, path)) = check.first_failure {
            return Err(Error::Unsatisfied {
                circuit: index,
                index: index_,
                path,
            });
        }
    }
    Ok(pa)
}

/// Synthesizes many circuits in parallel (rayon), each as [`synthesize`] does.
///
/// The first error (in circuit order) is returned; it names the circuit's index in the batch.
///
/// # Errors
/// As [`synthesize`], for the first failing circuit.
pub fn synthesize_batch<C: Circuit<Scalar> + Send>(
    circuits: Vec<C>,
    opts: &SynthesisOptions,
) -> Result<Vec<ProvingAssignment>> {
    synthesize_batch_reusing(circuits, opts, Vec::new())
}

/// [`synthesize_batch`] into the memory of assignments the caller is done with (`spares`, matched to circuits in
/// order; missing ones start empty, extra ones are dropped), as [`synthesize_reusing`] does for one circuit.
///
/// # Errors
/// As [`synthesize_batch`].
pub fn synthesize_batch_reusing<C: Circuit<Scalar> + Send>(
    circuits: Vec<C>,
    opts: &SynthesisOptions,
    spares: Vec<ProvingAssignment>,
) -> Result<Vec<ProvingAssignment>> {
    batch_reusing(circuits, spares, |i, c, spare| {
        synthesize_reusing_indexed(i, c, opts, spare)
    })
}

/// `one(i, circuit i, spare i)` for every circuit in parallel (rayon), circuit i taking `spares[i]` where there is
/// one (missing spares start empty, extra ones are dropped); the results in circuit order, or the first error in
/// circuit order. Every batch entry point of the crate runs through it.
pub(crate) fn batch_reusing<C: Send, T: Send>(
    circuits: Vec<C>,
    mut spares: Vec<ProvingAssignment>,
    one: impl Fn(usize, C, ProvingAssignment) -> Result<T> + Sync + Send,
) -> Result<Vec<T>> {
    spares.resize_with(circuits.len(), ProvingAssignment::default);
    circuits
        .into_par_iter()
        .zip(spares)
        .enumerate()
        .map(|(i, (c, spare))| one(i, c, spare))
        .collect()
}
