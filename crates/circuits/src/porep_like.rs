//! A synthetic circuit family shaped like Filecoin's PoRep C2 partition circuit, sized by constraint count.
//!
//! It repeats a block of 200 constraints modelled on SHA-256-style bit work:
//! 50 fresh bits (booleanity `(1 - b) * b = 0`: A 2 terms, B 1), 145 XORs (`2a * b = a + b - c`: A 1, B 1, C 3),
//! and 5 packings of 47 bits into a field element (`Σ 2^i·bit_i * 1 = x`: A 47 terms, B = ONE, C 1).
//! Per row that gives A ≈ 2.4, B = 1.0 and C ≈ 2.2 non-zeros, as measured on real partitions.
//! Only fresh bits sit in B (B-aux density 25 %, and the only input in B is ONE); every XOR result and every packed
//! value is consumed later on an A side, so nearly every aux variable is in A (real: 99.7 %).
//! Bits are 0 with probability 0.52, so about 51 % of aux values are 0, 47 % are 1 and 2.5 % (the packed values) are other.
//!
//! How it differs from the real circuit: no SHA-256 or Poseidon semantics (nothing is hashed, so it proves nothing
//! about data); a fixed block instead of the real gadget mix; public inputs are random and used only by the prover's
//! `x * 0 = 0` rows. It is for measuring synthesis and proving at sizes where real circuits are out of reach.
//!
//! Its linear combinations are built with `lc_indexer` (the storage backend is the type parameter `S`), so the
//! Vec-versus-SmallVec question (A1) is measured on code that builds LCs, then handed to bellpepper.
//!
//! With `with_challenges(k)` it is shaped as the real partition is at the top: its inputs, then k chains of blocks
//! that read nothing of each other (the real circuit's challenges, 18 a 32 GiB partition), each with values drawn
//! from its own stream; `pieces()` then gives the circuit as k pieces for
//! `r1cs_synth::CompiledShape::witness_assignment_pieces`. With one challenge (the default) it is the circuit it
//! has always been.

use std::marker::PhantomData;

use bellpepper_core::{
    Circuit, ConstraintSystem, LinearCombination as BpLc, SynthesisError, Variable,
};
use blstrs::Scalar;
use ff::Field;
use lc_indexer::{LinearCombination, TermStorage, Var};
use std::collections::VecDeque;

use rand_chacha::ChaCha8Rng;
use rand_core::{RngCore, SeedableRng};

/// Constraints in one block.
pub const BLOCK_ROWS: usize = 200;
const FRESH: usize = 50;
const XORS: usize = 145;
const PACKS: usize = 5;
const PACK_BITS: usize = 47;

/// The PoRep-shaped synthetic circuit; see the module docs.
#[derive(Debug)]
pub struct PorepLikeCircuit<S: TermStorage> {
    /// Blocks a challenge.
    blocks: usize,
    public_inputs: usize,
    seed: Option<u64>,
    challenges: usize,
    /// Some(i): the inputs and challenge i alone (piece i).
    take: Option<usize>,
    _storage: PhantomData<S>,
}

impl<S: TermStorage> Clone for PorepLikeCircuit<S> {
    fn clone(&self) -> Self {
        Self {
            blocks: self.blocks,
            public_inputs: self.public_inputs,
            seed: self.seed,
            challenges: self.challenges,
            take: self.take,
            _storage: PhantomData,
        }
    }
}

impl<S: TermStorage> PorepLikeCircuit<S> {
    /// About `constraints` constraints (whole blocks, at least one), `public_inputs` inputs besides ONE (the real circuit has 327),
    /// with witness values drawn from `seed`.
    pub fn new(constraints: usize, public_inputs: usize, seed: u64) -> Self {
        Self {
            blocks: constraints.div_ceil(BLOCK_ROWS).max(1),
            public_inputs,
            seed: Some(seed),
            challenges: 1,
            take: None,
            _storage: PhantomData,
        }
    }

    /// The same shape without values (for setup and compiled shapes).
    pub fn blank(constraints: usize, public_inputs: usize) -> Self {
        Self {
            seed: None,
            ..Self::new(constraints, public_inputs, 0)
        }
    }

    /// The same number of blocks (rounded up to a multiple of `challenges`, at least 1) as that many chains that
    /// read only the inputs (see the module docs).
    pub fn with_challenges(self, challenges: usize) -> Self {
        let challenges = challenges.max(1);
        Self {
            blocks: (self.blocks * self.challenges).div_ceil(challenges),
            challenges,
            ..self
        }
    }

    /// Its challenges.
    pub fn challenges(&self) -> usize {
        self.challenges
    }

    /// The circuit as pieces, one a challenge: piece i synthesizes the inputs and challenge i alone.
    pub fn pieces(&self) -> Vec<Self> {
        (0..self.challenges)
            .map(|i| Self {
                take: Some(i),
                ..self.clone()
            })
            .collect()
    }

    /// Circuit constraints (the prover adds one per input).
    pub fn circuit_constraints(&self) -> usize {
        self.blocks * self.challenges * BLOCK_ROWS
    }

    /// A stable identifier of the shape.
    pub fn shape_id(&self) -> String {
        let challenges = if self.challenges > 1 {
            format!("-{}ch", self.challenges)
        } else {
            String::new()
        };
        format!(
            "porep-like-{}c-{}in{challenges}-v1",
            self.circuit_constraints(),
            self.public_inputs
        )
    }
}

/// Converts our LC into bellpepper's, which `enforce` takes.
fn to_bellpepper<S: TermStorage>(ours: &LinearCombination<S>, vars: &Vars) -> BpLc<Scalar> {
    let mut lc = BpLc::zero();
    for &(i, c) in ours.inputs.terms() {
        lc = lc + (c, vars.input(i));
    }
    for &(i, c) in ours.aux.terms() {
        lc = lc + (c, vars.aux[i]);
    }
    lc
}

/// Variables allocated so far, indexed as the LCs index them.
struct Vars {
    one: Variable,
    inputs: Vec<Variable>,
    aux: Vec<Variable>,
    /// Witness values (empty for a blank circuit): a byte per bit, and the packed values apart, so the circuit holds
    /// 1 byte per aux variable besides its `Variable` instead of an `Option<Scalar>` (40 bytes).
    values: Values,
}

/// The values of the aux variables so far. A block's aux variables are its fresh bits, its XOR results (both bits) and
/// its packed values, in that order, so an index says which kind it is.
struct Values {
    /// By aux index: the bit, or 0 in a packed value's slot.
    bits: Vec<u8>,
    /// By packing, in order: `PACKS` per block.
    packed: Vec<Scalar>,
}

impl Values {
    /// Packing number of aux index `idx`, if it is a packed value.
    fn packing(idx: usize) -> Option<usize> {
        let slot = idx % BLOCK_ROWS;
        (slot >= FRESH + XORS).then(|| idx / BLOCK_ROWS * PACKS + slot - FRESH - XORS)
    }

    /// The bit at aux index `idx` (a fresh bit or an XOR result).
    fn bit(&self, idx: usize) -> bool {
        debug_assert!(Self::packing(idx).is_none());
        self.bits[idx] == 1
    }
}

impl Vars {
    fn input(&self, i: usize) -> Variable {
        if i == 0 {
            self.one
        } else {
            self.inputs[i - 1]
        }
    }
}

impl<S: TermStorage> Circuit<Scalar> for PorepLikeCircuit<S> {
    fn synthesize<CS: ConstraintSystem<Scalar>>(self, cs: &mut CS) -> Result<(), SynthesisError> {
        let mut rng = ChaCha8Rng::seed_from_u64(self.seed.unwrap_or(0));
        let known = self.seed.is_some();
        let mut inputs = Vec::with_capacity(self.public_inputs);
        for i in 0..self.public_inputs {
            let v = known.then(|| Scalar::from(rng.next_u64()));
            inputs.push(cs.alloc_input(
                || format!("input {i}"),
                || v.ok_or(SynthesisError::AssignmentMissing),
            )?);
        }
        if self.challenges == 1 {
            // The circuit as it has always been: one chain, its values drawn after the inputs' from one stream.
            return self.chain(cs, inputs, rng, known);
        }
        let challenges: Vec<usize> = match self.take {
            Some(i) => vec![i],
            None => (0..self.challenges).collect(),
        };
        for i in challenges {
            // Each challenge's own stream, so that piece i draws what the whole circuit's challenge i does.
            let stream =
                self.seed.unwrap_or(0) ^ (i as u64 + 1).wrapping_mul(0x9e37_79b9_7f4a_7c15);
            self.chain(
                &mut cs.namespace(|| format!("challenge {i}")),
                inputs.clone(),
                ChaCha8Rng::seed_from_u64(stream),
                known,
            )?;
        }
        Ok(())
    }
}

impl<S: TermStorage> PorepLikeCircuit<S> {
    /// One chain of `blocks` blocks after the inputs, its values drawn from `rng`.
    fn chain<CS: ConstraintSystem<Scalar>>(
        &self,
        cs: &mut CS,
        inputs: Vec<Variable>,
        mut rng: ChaCha8Rng,
        known: bool,
    ) -> Result<(), SynthesisError> {
        let value = |v: Option<Scalar>| v.ok_or(SynthesisError::AssignmentMissing);
        let mut vars = Vars {
            one: CS::one(),
            inputs,
            // Sized up front: at PoRep scale a doubling would copy gigabytes and hold both copies at once.
            aux: Vec::with_capacity(self.blocks * BLOCK_ROWS),
            values: Values {
                bits: Vec::with_capacity(if known { self.blocks * BLOCK_ROWS } else { 0 }),
                packed: Vec::with_capacity(if known { self.blocks * PACKS } else { 0 }),
            },
        };
        let two = Scalar::from(2u64);
        let bit_value = |b: bool| if b { Scalar::ONE } else { Scalar::ZERO };
        // Aux indices (into vars.aux) not yet used on an A side, oldest first: later rows consume them first.
        // XOR results (bits) feed later XORs and packings; packed values (not bits) feed only later packings.
        let mut pending: VecDeque<usize> = VecDeque::new();
        let mut pending_packed: VecDeque<usize> = VecDeque::new();
        for block in 0..self.blocks {
            let mut fresh = Vec::with_capacity(FRESH);
            for k in 0..FRESH {
                let bit = known.then(|| rng.next_u32() % 100 >= 52);
                let var = cs.alloc(|| format!("b{block}.{k}"), || value(bit.map(bit_value)))?;
                vars.aux.push(var);
                if let Some(b) = bit {
                    vars.values.bits.push(u8::from(b));
                }
                let b = vars.aux.len() - 1;
                // The LCs are built inside the closures: a witness-only synthesis never pays for them.
                let v = &vars;
                cs.enforce(
                    || format!("bool {block}.{k}"),
                    |_| {
                        let mut a = LinearCombination::<S>::zero();
                        a.add_term(Var::Input(0), Scalar::ONE);
                        a.add_term(Var::Aux(b), -Scalar::ONE);
                        to_bellpepper(&a, v)
                    },
                    |_| {
                        let mut bb = LinearCombination::<S>::zero();
                        bb.add_term(Var::Aux(b), Scalar::ONE);
                        to_bellpepper(&bb, v)
                    },
                    |lc| lc,
                );
                fresh.push(b);
            }
            for k in 0..XORS {
                // a: an earlier result not yet on an A side if any, else a fresh bit; b: always a fresh bit (B-aux = fresh only).
                let a_idx = pending.pop_front().unwrap_or(fresh[k % FRESH]);
                let b_idx = fresh[(k * 7 + 3) % FRESH];
                // The constraint's c = a + b - 2ab is a XOR b on bits.
                let c_bit = known.then(|| vars.values.bit(a_idx) ^ vars.values.bit(b_idx));
                let var = cs.alloc(|| format!("x{block}.{k}"), || value(c_bit.map(bit_value)))?;
                vars.aux.push(var);
                if let Some(c) = c_bit {
                    vars.values.bits.push(u8::from(c));
                }
                let c_idx = vars.aux.len() - 1;
                let v = &vars;
                cs.enforce(
                    || format!("xor {block}.{k}"),
                    |_| {
                        let mut a = LinearCombination::<S>::zero();
                        a.add_term(Var::Aux(a_idx), two);
                        to_bellpepper(&a, v)
                    },
                    |_| {
                        let mut b = LinearCombination::<S>::zero();
                        b.add_term(Var::Aux(b_idx), Scalar::ONE);
                        to_bellpepper(&b, v)
                    },
                    |_| {
                        let mut c = LinearCombination::<S>::zero();
                        c.add_term(Var::Aux(a_idx), Scalar::ONE);
                        c.add_term(Var::Aux(b_idx), Scalar::ONE);
                        c.add_term(Var::Aux(c_idx), -Scalar::ONE);
                        to_bellpepper(&c, v)
                    },
                );
                pending.push_back(c_idx);
            }
            for k in 0..PACKS {
                let mut terms = Vec::with_capacity(PACK_BITS);
                // Σ 2^t·v_t: the bits' part as an integer (PACK_BITS < 64), the packed values' part in the field.
                let mut bits_part = 0u64;
                let mut packed_part = Scalar::ZERO;
                let mut coeff = Scalar::ONE;
                for t in 0..PACK_BITS {
                    let idx = match pending_packed.pop_front() {
                        Some(i) => i,
                        None => pending
                            .pop_front()
                            .unwrap_or(fresh[(k * PACK_BITS + t) % FRESH]),
                    };
                    terms.push((idx, coeff));
                    if known {
                        match Values::packing(idx) {
                            Some(p) => packed_part += vars.values.packed[p] * coeff,
                            None => bits_part |= u64::from(vars.values.bit(idx)) << t,
                        }
                    }
                    coeff = coeff.double();
                }
                let sum = known.then(|| Scalar::from(bits_part) + packed_part);
                let var = cs.alloc(|| format!("pack{block}.{k}"), || value(sum))?;
                vars.aux.push(var);
                if let Some(x) = sum {
                    vars.values.bits.push(0);
                    vars.values.packed.push(x);
                }
                let x_idx = vars.aux.len() - 1;
                debug_assert_eq!(Values::packing(x_idx), Some(block * PACKS + k));
                let v = &vars;
                cs.enforce(
                    || format!("pack {block}.{k}"),
                    |_| {
                        let mut a = LinearCombination::<S>::zero();
                        for &(idx, c) in &terms {
                            a.add_term(Var::Aux(idx), c);
                        }
                        to_bellpepper(&a, v)
                    },
                    |_| {
                        let mut b = LinearCombination::<S>::zero();
                        b.add_term(Var::Input(0), Scalar::ONE);
                        to_bellpepper(&b, v)
                    },
                    |_| {
                        let mut c = LinearCombination::<S>::zero();
                        c.add_term(Var::Aux(x_idx), Scalar::ONE);
                        to_bellpepper(&c, v)
                    },
                );
                pending_packed.push_back(x_idx);
            }
        }
        Ok(())
    }
}
