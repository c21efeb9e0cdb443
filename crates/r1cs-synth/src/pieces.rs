//! The witness of one circuit computed in pieces, at once on several threads.
//!
//! Many circuits synthesize a short head (their public inputs and the values every later step reads) and then a
//! run of parts that have one shape and read nothing of each other: a PoRep partition is such a head and one part
//! per challenge (18 at 32 GiB). The circuit's own code runs on one thread, so its witness takes as long as all the
//! parts one after another. Here the caller hands over one circuit per part instead: piece i synthesizes the same
//! head and then part i alone. The pieces run in parallel, each writing its part's values into its own stretch of
//! the assignment, which is laid out as the whole circuit's would be: the head, then part 0, part 1, and so on.
//!
//! The stretches' places follow from the head's size, which the shape does not record. The first call learns it from
//! piece 0's counts: with t values from a piece and n from the whole circuit, k pieces give
//! `head = (k·t − n) / (k − 1)`. That call runs every piece at once too, each as a whole circuit into vectors of its
//! own, and then moves each part into its stretch: the parts are held twice for a moment, where running piece 0
//! alone first took a whole piece's time more. The shape keeps the head's size ([`PieceHead`]), and later calls write
//! the parts in place. Every call checks that each piece made exactly `head + (n − head) / k` values (only the true
//! head size passes that check for k ≥ 2) and that every piece's head equals piece 0's, so a piece that does not fit
//! the layout is an error, never a wrong witness.

use std::sync::OnceLock;

use bellpepper_core::{
    Circuit, ConstraintSystem, Index, LinearCombination, SynthesisError, Variable,
};
use blstrs::Scalar;
use ff::Field;
use rayon::prelude::*;

use crate::compiled::Witness;
use crate::{CompiledShape, Error, ProvingAssignment, Result};

/// Whether a caller that can synthesize a circuit in pieces should (the default), or as one circuit on one thread
/// (`CUZK_SYNTH_PIECES=0`; read at each call).
pub fn enabled() -> bool {
    std::env::var("CUZK_SYNTH_PIECES").map_or(true, |v| v.trim() != "0")
}

/// The head's size of a shape's pieces (inputs with ONE, aux), learned on their first use. Not part of the shape's
/// identity: two shapes compare equal whether or not either has learned it.
#[derive(Clone, Debug, Default)]
pub struct PieceHead(OnceLock<(usize, usize)>);

impl PartialEq for PieceHead {
    fn eq(&self, _: &Self) -> bool {
        true
    }
}

impl Eq for PieceHead {}

/// A constraint system that keeps only the witness: allocations run their closures, `enforce` builds nothing.
/// Over a whole circuit every value goes to the head vectors (ONE first among the inputs), in allocation order.
/// Over a piece the head's values of each kind go there, and the piece's own part is written into its stretches;
/// values past them are counted, not written, and fail the count check afterwards.
pub(crate) struct WitnessCs<'a> {
    pub(crate) inputs: Values<'a>,
    pub(crate) aux: Values<'a>,
}

/// One kind of value (inputs with ONE, or aux) as [`WitnessCs`] records it.
pub(crate) struct Values<'a> {
    /// How many of this kind the head has: the first that many made go to `head`, the rest to `own`.
    head_len: usize,
    /// Where the part's values start in the whole circuit.
    base: usize,
    own: &'a mut [Scalar],
    pub(crate) head: Vec<Scalar>,
    /// Values made, the head's included.
    made: usize,
}

impl Values<'static> {
    /// Every value into `v`, after what it holds.
    fn whole(v: Vec<Scalar>) -> Self {
        Values {
            head_len: usize::MAX,
            base: 0,
            own: Default::default(),
            made: v.len(),
            head: v,
        }
    }
}

impl<'a> Values<'a> {
    /// A piece's values: `head_len` into a new head vector that starts with `first`, the rest into `own`, which
    /// starts at `base` in the whole circuit.
    fn piece(head_len: usize, base: usize, own: &'a mut [Scalar], first: Option<Scalar>) -> Self {
        let mut head = Vec::with_capacity(head_len);
        head.extend(first);
        Values {
            head_len,
            base,
            own,
            made: head.len(),
            head,
        }
    }

    /// Records the next value, and returns its index in the whole circuit.
    fn place(&mut self, v: Scalar) -> usize {
        let j = self.made;
        self.made += 1;
        match j.checked_sub(self.head_len) {
            None => {
                self.head.push(v);
                j
            }
            Some(k) => {
                if let Some(slot) = self.own.get_mut(k) {
                    *slot = v;
                }
                self.base + k
            }
        }
    }
}

impl WitnessCs<'static> {
    /// Over a whole circuit, into `inputs` (ONE in it already) and `aux`.
    pub(crate) fn whole(inputs: Vec<Scalar>, aux: Vec<Scalar>) -> Self {
        WitnessCs {
            inputs: Values::whole(inputs),
            aux: Values::whole(aux),
        }
    }
}

impl ConstraintSystem<Scalar> for WitnessCs<'_> {
    type Root = Self;

    fn alloc<F, A, AR>(&mut self, _: A, f: F) -> std::result::Result<Variable, SynthesisError>
    where
        F: FnOnce() -> std::result::Result<Scalar, SynthesisError>,
        A: FnOnce() -> AR,
        AR: Into<String>,
    {
        let i = self.aux.place(f()?);
        Ok(Variable::new_unchecked(Index::Aux(i)))
    }

    fn alloc_input<F, A, AR>(&mut self, _: A, f: F) -> std::result::Result<Variable, SynthesisError>
    where
        F: FnOnce() -> std::result::Result<Scalar, SynthesisError>,
        A: FnOnce() -> AR,
        AR: Into<String>,
    {
        let i = self.inputs.place(f()?);
        Ok(Variable::new_unchecked(Index::Input(i)))
    }

    fn enforce<A, AR, LA, LB, LC>(&mut self, _: A, _: LA, _: LB, _: LC)
    where
        A: FnOnce() -> AR,
        AR: Into<String>,
        LA: FnOnce(LinearCombination<Scalar>) -> LinearCombination<Scalar>,
        LB: FnOnce(LinearCombination<Scalar>) -> LinearCombination<Scalar>,
        LC: FnOnce(LinearCombination<Scalar>) -> LinearCombination<Scalar>,
    {
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

/// `v` cut into `k` stretches of `share` values (k empty ones when `share` is 0).
fn stretches(v: &mut [Scalar], share: usize, k: usize) -> Vec<&mut [Scalar]> {
    if share == 0 {
        return (0..k).map(|_| <&mut [Scalar]>::default()).collect();
    }
    v.chunks_mut(share).collect()
}

impl CompiledShape {
    /// The head's size of k pieces from the value counts (inputs with ONE, aux) of one piece; None when no head
    /// size fits this shape.
    fn head_from_piece(&self, k: usize, made: (usize, usize)) -> Option<(usize, usize)> {
        let solve = |t: usize, n: usize| {
            let num = (k * t).checked_sub(n)?;
            (num % (k - 1) == 0 && num / (k - 1) <= t).then_some(num / (k - 1))
        };
        Some((
            solve(made.0, self.num_inputs)?,
            solve(made.1, self.num_aux)?,
        ))
    }

    /// [`CompiledShape::witness_assignment`] of a circuit from its pieces (see the [module](crate::pieces)): piece i
    /// synthesizes the circuit's head and then its part i alone. The pieces run on rayon's threads at once, each
    /// writing into its stretch of `spare`'s vectors; on the first call for this shape, which learns the head's size,
    /// each writes into vectors of its own and the parts are moved into place after. The assignment is the one the
    /// whole circuit gives.
    ///
    /// # Errors
    /// [`Error::Synthesis`] naming the first piece whose code failed; [`Error::ShapeMismatch`] when the pieces do
    /// not add up to this shape or their heads differ.
    pub fn witness_assignment_pieces<C: Circuit<Scalar> + Send>(
        &self,
        pieces: Vec<C>,
        spare: ProvingAssignment,
    ) -> Result<ProvingAssignment> {
        self.deferred_with(spare, |inputs, aux| {
            self.witness_pieces(pieces, inputs, aux)
        })
    }

    /// [`CompiledShape::synthesize_reusing`] of a circuit from its pieces: the witness as
    /// [`CompiledShape::witness_assignment_pieces`] computes it, then a, b and c from the matrices.
    ///
    /// # Errors
    /// As [`CompiledShape::witness_assignment_pieces`].
    pub fn synthesize_pieces_reusing<C: Circuit<Scalar> + Send>(
        &self,
        pieces: Vec<C>,
        spare: ProvingAssignment,
    ) -> Result<ProvingAssignment> {
        self.synthesized_with(spare, |inputs, aux| {
            self.witness_pieces(pieces, inputs, aux)
        })
    }

    /// The whole circuit's witness from its pieces, into the memory of `inputs` and `aux`.
    fn witness_pieces<C: Circuit<Scalar> + Send>(
        &self,
        pieces: Vec<C>,
        mut inputs: Vec<Scalar>,
        mut aux: Vec<Scalar>,
    ) -> Result<Witness> {
        let k = pieces.len();
        let mut pieces = pieces.into_iter();
        let Some(first) = pieces.next() else {
            return Err(Error::ShapeMismatch("a circuit in no pieces".into()));
        };
        if k == 1 {
            return self.witness_into(first, inputs, aux);
        }
        let Some(&head) = self.piece_head.0.get() else {
            return self.first_witness_pieces(first, pieces, inputs, aux);
        };
        let share = self.piece_share(k, head)?;
        // The vectors laid out whole, then every stretch written by its piece. What they held before (a reused
        // vector's old witness) is kept rather than cleared: once the count checks below pass, every slot has been
        // written (the head from piece 0, each stretch by its piece), so clearing would only cost a pass over the
        // memory.
        lay_out(&mut inputs, self.num_inputs);
        lay_out(&mut aux, self.num_aux);
        inputs[0] = Scalar::ONE;
        let (head_in, rest_in) = inputs.split_at_mut(head.0);
        let (head_aux, rest_aux) = aux.split_at_mut(head.1);
        let runs: Vec<_> = stretches(rest_in, share.0, k)
            .into_iter()
            .zip(stretches(rest_aux, share.1, k))
            .enumerate()
            .zip(std::iter::once(first).chain(pieces))
            .collect();
        let outs: Vec<Result<WitnessCs<'_>>> = runs
            .into_par_iter()
            .map(|((i, (own_inputs, own_aux)), piece)| {
                let mut cs = WitnessCs {
                    inputs: Values::piece(
                        head.0,
                        head.0 + i * share.0,
                        own_inputs,
                        Some(Scalar::ONE),
                    ),
                    aux: Values::piece(head.1, head.1 + i * share.1, own_aux, None),
                };
                piece
                    .synthesize(&mut cs)
                    .map_err(|source| Error::Synthesis { circuit: i, source })?;
                Ok(cs)
            })
            .collect();
        for (i, out) in outs.into_iter().enumerate() {
            let out = out?;
            check_piece(i, (out.inputs.made, out.aux.made), head, share)?;
            if i == 0 {
                head_in.copy_from_slice(&out.inputs.head);
                head_aux.copy_from_slice(&out.aux.head);
            } else if out.inputs.head != *head_in || out.aux.head != *head_aux {
                return Err(head_differs(i));
            }
        }
        Ok(Witness { inputs, aux })
    }

    /// Each piece's share of the values past the head (inputs, aux), checked to add up to this shape with `head`.
    fn piece_share(&self, k: usize, head: (usize, usize)) -> Result<(usize, usize)> {
        let share = ((self.num_inputs - head.0) / k, (self.num_aux - head.1) / k);
        if head.0 == 0
            || head.0 + k * share.0 != self.num_inputs
            || head.1 + k * share.1 != self.num_aux
        {
            return Err(Error::ShapeMismatch(format!(
                "a head of {} inputs and {} aux values leaves no equal share for {k} pieces of a circuit of {} and {}",
                head.0, head.1, self.num_inputs, self.num_aux
            )));
        }
        Ok(share)
    }

    /// The first call's witness from k ≥ 2 pieces, while the head's size is unknown: every piece at once, each run
    /// as a whole circuit into vectors of its own (piece 0 into `inputs` and `aux`, so that its head and part are in
    /// place already), the head's size from piece 0's counts, then each other piece's part moved into its stretch.
    fn first_witness_pieces<C: Circuit<Scalar> + Send>(
        &self,
        first: C,
        rest: impl Iterator<Item = C>,
        inputs: Vec<Scalar>,
        aux: Vec<Scalar>,
    ) -> Result<Witness> {
        let jobs: Vec<_> = std::iter::once((first, Some((inputs, aux))))
            .chain(rest.map(|piece| (piece, None)))
            .enumerate()
            .collect();
        let k = jobs.len();
        // A piece's own vectors start at its share of the shape and a quarter more for the head (they grow if that is
        // too little; pages never written cost nothing); piece 0's at the whole shape, as they are laid out whole
        // after.
        let guess = |n: usize| n / k + n / (4 * k) + 64;
        let guess = (guess(self.num_inputs), guess(self.num_aux));
        let outs: Vec<Result<Witness>> = jobs
            .into_par_iter()
            .map(|(i, (piece, spare))| {
                let (whole, (inputs, aux)) = match spare {
                    Some(v) => ((self.num_inputs.max(1), self.num_aux), v),
                    None => (guess, Default::default()),
                };
                self.run_witness_reserving(piece, inputs, aux, whole)
                    .map_err(|e| match e {
                        Error::Synthesis { source, .. } => Error::Synthesis { circuit: i, source },
                        e => e,
                    })
            })
            .collect();
        let mut outs = outs.into_iter();
        let Witness {
            mut inputs,
            mut aux,
        } = outs.next().expect("piece 0 ran")?;
        let rest: Vec<Witness> = outs.collect::<Result<_>>()?;
        let made = (inputs.len(), aux.len());
        let head = self.head_from_piece(k, made).ok_or_else(|| {
            Error::ShapeMismatch(format!(
                "{k} pieces of {} inputs and {} aux values each cannot make a circuit of {} and {}",
                made.0, made.1, self.num_inputs, self.num_aux
            ))
        })?;
        let share = self.piece_share(k, head)?;
        for (i, w) in rest.iter().enumerate() {
            check_piece(i + 1, (w.inputs.len(), w.aux.len()), head, share)?;
            if w.inputs[..head.0] != inputs[..head.0] || w.aux[..head.1] != aux[..head.1] {
                return Err(head_differs(i + 1));
            }
        }
        let _ = self.piece_head.0.set(head);
        lay_out(&mut inputs, self.num_inputs);
        lay_out(&mut aux, self.num_aux);
        // Part 0 is in place (piece 0 ran as a whole circuit); parts 1.. go to the stretches after it.
        let parts_in = stretches(&mut inputs[head.0 + share.0..], share.0, k - 1);
        let parts_aux = stretches(&mut aux[head.1 + share.1..], share.1, k - 1);
        parts_in
            .into_par_iter()
            .zip(parts_aux)
            .zip(rest.par_iter())
            .for_each(|((dst_in, dst_aux), w)| {
                dst_in.copy_from_slice(&w.inputs[head.0..]);
                dst_aux.copy_from_slice(&w.aux[head.1..]);
            });
        Ok(Witness { inputs, aux })
    }
}

/// `v` at length n: cut, or grown with zeros (in parallel: a PoRep partition's aux vector is 4 GB).
fn lay_out(v: &mut Vec<Scalar>, n: usize) {
    v.truncate(n);
    let have = v.len();
    v.par_extend(rayon::iter::repeat_n(Scalar::ZERO, n - have));
}

/// Whether piece i made the values (inputs, aux) its layout has room for.
fn check_piece(
    i: usize,
    made: (usize, usize),
    head: (usize, usize),
    share: (usize, usize),
) -> Result<()> {
    if made != (head.0 + share.0, head.1 + share.1) {
        return Err(Error::ShapeMismatch(format!(
            "piece {i} made {} inputs and {} aux values where its layout has {} and {}",
            made.0,
            made.1,
            head.0 + share.0,
            head.1 + share.1
        )));
    }
    Ok(())
}

fn head_differs(i: usize) -> Error {
    Error::ShapeMismatch(format!(
        "piece {i}'s head differs from piece 0's: the pieces are not one circuit's"
    ))
}
