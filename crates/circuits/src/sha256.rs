//! SHA-256 in R1CS with its sums built lazily.
//!
//! The constraint system this produces is bellpepper's `sha256` gadget's, variable for variable and constraint for
//! constraint, in the same order (tests compare the two). What differs is when the linear combinations of the
//! additions are built. bellpepper's `UInt32::addmany` builds each sum's linear combination as it goes, and its
//! `MultiEq` folds several sums into one constraint by cloning and extending a growing combination, all outside any
//! `enforce` closure. A constraint system that only wants the witness (compiled-shape synthesis, which skips
//! `enforce` closures) still pays for that: about two thirds of the witness step on this circuit
//! (BENCHMARKS.md). Here an addition only records its operands' bits and its result's variables; the packed
//! constraint's closures build the combinations when, and only if, the constraint system calls them.

use bellpepper::gadgets::boolean::{AllocatedBit, Boolean};
use bellpepper_core::{ConstraintSystem, LinearCombination, SynthesisError, Variable};
use ff::PrimeField;

/// SHA-256's round constants (FIPS 180-4, 4.2.2).
#[rustfmt::skip]
const ROUND_CONSTANTS: [u32; 64] = [
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
    0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
    0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
    0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
    0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
    0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
    0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
    0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
];

/// SHA-256's initial hash value (FIPS 180-4, 5.3.3).
const IV: [u32; 8] = [
    0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19,
];

/// SHA-256 of `input` (a whole number of bytes, bits big-endian within each byte, as bellpepper's `sha256` takes
/// them): the 256 digest bits, big-endian. Padding is appended as constants.
///
/// # Errors
/// What the constraint system returns; `AssignmentMissing` when a value is needed and absent.
pub fn sha256<Scalar, CS>(mut cs: CS, input: &[Boolean]) -> Result<Vec<Boolean>, SynthesisError>
where
    Scalar: PrimeField,
    CS: ConstraintSystem<Scalar>,
{
    assert!(
        input.len() % 8 == 0,
        "SHA-256 input must be whole bytes ({} bits)",
        input.len()
    );
    let bit_len = input.len() as u64;
    let mut padded = input.to_vec();
    padded.push(Boolean::constant(true));
    while (padded.len() + 64) % 512 != 0 {
        padded.push(Boolean::constant(false));
    }
    padded.extend(
        (0..64)
            .rev()
            .map(|i| Boolean::constant((bit_len >> i) & 1 == 1)),
    );
    let mut state: Vec<Word> = IV.iter().map(|&v| Word::constant(v)).collect();
    for (i, block) in padded.chunks(512).enumerate() {
        state = compress(cs.namespace(|| format!("block {i}")), block, &state)?;
    }
    Ok(state.into_iter().flat_map(Word::into_bits_be).collect())
}

/// A 32-bit word: its bits, least significant first, and its value when every bit's is known.
#[derive(Clone)]
struct Word {
    bits: Vec<Boolean>,
    value: Option<u32>,
}

impl Word {
    fn constant(value: u32) -> Self {
        Word {
            bits: (0..32)
                .map(|i| Boolean::constant((value >> i) & 1 == 1))
                .collect(),
            value: Some(value),
        }
    }

    /// From 32 bits, most significant first.
    fn from_bits_be(bits: &[Boolean]) -> Self {
        assert_eq!(bits.len(), 32);
        let value = bits.iter().try_fold(0u32, |acc, b| {
            b.get_value().map(|bit| (acc << 1) | u32::from(bit))
        });
        Word {
            bits: bits.iter().rev().cloned().collect(),
            value,
        }
    }

    fn into_bits_be(self) -> Vec<Boolean> {
        let mut bits = self.bits;
        bits.reverse();
        bits
    }

    fn rotr(&self, by: usize) -> Self {
        let mut bits = self.bits[by..].to_vec();
        bits.extend_from_slice(&self.bits[..by]);
        Word {
            bits,
            value: self.value.map(|v| v.rotate_right(by as u32)),
        }
    }

    fn shr(&self, by: usize) -> Self {
        let mut bits = self.bits[by..].to_vec();
        bits.resize(32, Boolean::constant(false));
        Word {
            bits,
            value: self.value.map(|v| v >> by),
        }
    }

    fn xor<Scalar, CS>(&self, mut cs: CS, other: &Self) -> Result<Self, SynthesisError>
    where
        Scalar: PrimeField,
        CS: ConstraintSystem<Scalar>,
    {
        let bits = self
            .bits
            .iter()
            .zip(&other.bits)
            .enumerate()
            .map(|(i, (a, b))| Boolean::xor(cs.namespace(|| format!("xor of bit {i}")), a, b))
            .collect::<Result<_, _>>()?;
        Ok(Word {
            bits,
            value: self.value.zip(other.value).map(|(a, b)| a ^ b),
        })
    }

    /// (e and f) xor ((not e) and g), bit by bit.
    fn ch<Scalar, CS>(cs: CS, e: &Self, f: &Self, g: &Self) -> Result<Self, SynthesisError>
    where
        Scalar: PrimeField,
        CS: ConstraintSystem<Scalar>,
    {
        Self::bitwise3(
            cs,
            [e, f, g],
            |cs, i, [e, f, g]| Boolean::sha256_ch(cs.namespace(|| format!("ch {i}")), e, f, g),
            |e, f, g| (e & f) ^ (!e & g),
        )
    }

    /// (a and b) xor (a and c) xor (b and c), bit by bit.
    fn maj<Scalar, CS>(cs: CS, a: &Self, b: &Self, c: &Self) -> Result<Self, SynthesisError>
    where
        Scalar: PrimeField,
        CS: ConstraintSystem<Scalar>,
    {
        Self::bitwise3(
            cs,
            [a, b, c],
            |cs, i, [a, b, c]| Boolean::sha256_maj(cs.namespace(|| format!("maj {i}")), a, b, c),
            |a, b, c| (a & b) ^ (a & c) ^ (b & c),
        )
    }

    /// A function of three words applied bit by bit: `gadget` on bit i of each, `value` on the known values.
    fn bitwise3<Scalar, CS>(
        mut cs: CS,
        words: [&Self; 3],
        gadget: impl Fn(&mut CS, usize, [&Boolean; 3]) -> Result<Boolean, SynthesisError>,
        value: impl Fn(u32, u32, u32) -> u32,
    ) -> Result<Self, SynthesisError>
    where
        Scalar: PrimeField,
        CS: ConstraintSystem<Scalar>,
    {
        let bits = (0..32)
            .map(|i| gadget(&mut cs, i, words.map(|w| &w.bits[i])))
            .collect::<Result<_, _>>()?;
        let value = match words.map(|w| w.value) {
            [Some(x), Some(y), Some(z)] => Some(value(x, y, z)),
            _ => None,
        };
        Ok(Word { bits, value })
    }
}

/// One addition's equality, waiting in a packed constraint: Σ operands = Σ 2^i result[i], every coefficient
/// shifted by 2^`shift`.
struct Equality {
    shift: usize,
    operands: Vec<Vec<Boolean>>,
    result: Vec<Variable>,
}

/// Additions' equalities packed into one constraint while their bits fit below the field's capacity (bellpepper's
/// `MultiEq`: the same packing, the same constraints, flushed at the same points).
struct Packer {
    ops: usize,
    bits_used: usize,
    pending: Vec<Equality>,
}

impl Packer {
    fn new() -> Self {
        Packer {
            ops: 0,
            bits_used: 0,
            pending: Vec::new(),
        }
    }

    fn enforce_equal<Scalar, CS>(
        &mut self,
        cs: &mut CS,
        num_bits: usize,
        operands: Vec<Vec<Boolean>>,
        result: Vec<Variable>,
    ) where
        Scalar: PrimeField,
        CS: ConstraintSystem<Scalar>,
    {
        if Scalar::CAPACITY as usize <= self.bits_used + num_bits {
            self.flush(cs);
        }
        assert!((Scalar::CAPACITY as usize) > self.bits_used + num_bits);
        self.pending.push(Equality {
            shift: self.bits_used,
            operands,
            result,
        });
        self.bits_used += num_bits;
    }

    /// Emits the packed constraint (lhs) · ONE = (rhs), if any equality waits.
    fn flush<Scalar, CS>(&mut self, cs: &mut CS)
    where
        Scalar: PrimeField,
        CS: ConstraintSystem<Scalar>,
    {
        if self.bits_used == 0 {
            return;
        }
        let pending = std::mem::take(&mut self.pending);
        let ops = self.ops;
        let one = CS::one();
        cs.enforce(
            || format!("multieq {ops}"),
            |_| {
                let mut lc = LinearCombination::zero();
                let mut shifted = PowerOfTwo::<Scalar>::new();
                for eq in &pending {
                    let base = shifted.at(eq.shift);
                    for bits in &eq.operands {
                        let mut coeff = base;
                        for bit in bits {
                            lc = add_bit(lc, one, bit, coeff);
                            coeff = coeff.double();
                        }
                    }
                }
                lc
            },
            |lc| lc + one,
            |_| {
                let mut lc = LinearCombination::zero();
                let mut shifted = PowerOfTwo::<Scalar>::new();
                for eq in &pending {
                    let mut coeff = shifted.at(eq.shift);
                    for &v in &eq.result {
                        lc = lc + (coeff, v);
                        coeff = coeff.double();
                    }
                }
                lc
            },
        );
        self.bits_used = 0;
        self.ops += 1;
    }
}

/// 2^e for non-decreasing e, by doubling (the packed equalities' shifts only grow): a few additions where a power by
/// squarings cost products.
struct PowerOfTwo<Scalar> {
    value: Scalar,
    exp: usize,
}

impl<Scalar: PrimeField> PowerOfTwo<Scalar> {
    fn new() -> Self {
        PowerOfTwo {
            value: Scalar::ONE,
            exp: 0,
        }
    }

    /// 2^`exp`: cheapest when `exp` is at least the previous call's (a smaller one starts again from 1).
    fn at(&mut self, exp: usize) -> Scalar {
        if exp < self.exp {
            *self = Self::new();
        }
        while self.exp < exp {
            self.value = self.value.double();
            self.exp += 1;
        }
        self.value
    }
}

/// `lc` plus coeff times the bit, as `Boolean::lc` writes it (a false constant adds no term, a true one adds to ONE,
/// a negated bit is ONE minus the bit).
fn add_bit<Scalar: PrimeField>(
    lc: LinearCombination<Scalar>,
    one: Variable,
    bit: &Boolean,
    coeff: Scalar,
) -> LinearCombination<Scalar> {
    match bit {
        Boolean::Constant(false) => lc,
        Boolean::Constant(true) => lc + (coeff, one),
        Boolean::Is(v) => lc + (coeff, v.get_variable()),
        Boolean::Not(v) => lc + (coeff, one) - (coeff, v.get_variable()),
    }
}

/// The sum of 2 to 10 words modulo 2^32: result bits allocated for the whole sum (carries included), their equality
/// with the operands left to `packer`. Constant operands give a constant, with no constraint.
fn add_words<Scalar, CS>(
    mut cs: CS,
    packer: &mut Packer,
    operands: &[Word],
) -> Result<Word, SynthesisError>
where
    Scalar: PrimeField,
    CS: ConstraintSystem<Scalar>,
{
    assert!((2..=10).contains(&operands.len()));
    let sum = operands
        .iter()
        .try_fold(0u64, |acc, op| op.value.map(|v| acc + u64::from(v)));
    let modular = sum.map(|v| v as u32);
    let all_constants = operands
        .iter()
        .all(|op| op.bits.iter().all(Boolean::is_constant));
    if let (true, Some(v)) = (all_constants, modular) {
        return Ok(Word::constant(v));
    }
    // Bits for the largest possible sum.
    let max = operands.len() as u64 * u64::from(u32::MAX);
    let width = (u64::BITS - max.leading_zeros()) as usize;
    let mut bits = Vec::with_capacity(width);
    let mut result = Vec::with_capacity(width);
    for i in 0..width {
        let b = AllocatedBit::alloc(
            cs.namespace(|| format!("result bit {i}")),
            sum.map(|v| (v >> i) & 1 == 1),
        )?;
        result.push(b.get_variable());
        bits.push(Boolean::from(b));
    }
    packer.enforce_equal(
        &mut cs,
        width,
        operands.iter().map(|op| op.bits.clone()).collect(),
        result,
    );
    bits.truncate(32);
    Ok(Word {
        bits,
        value: modular,
    })
}

/// A word that is either known or a sum not yet computed (its operands kept, so that later operands join the same
/// addition, as bellpepper's compression does).
enum Lazy {
    Sum(Vec<Word>),
    Word(Word),
}

impl Lazy {
    fn resolve<Scalar, CS>(
        self,
        cs: CS,
        packer: &mut Packer,
        more: &[Word],
    ) -> Result<Word, SynthesisError>
    where
        Scalar: PrimeField,
        CS: ConstraintSystem<Scalar>,
    {
        match self {
            Lazy::Word(w) => Ok(w),
            Lazy::Sum(mut ops) => {
                ops.extend_from_slice(more);
                add_words(cs, packer, &ops)
            }
        }
    }
}

/// One compression of a 512-bit block into the state.
fn compress<Scalar, CS>(
    mut cs: CS,
    block: &[Boolean],
    state: &[Word],
) -> Result<Vec<Word>, SynthesisError>
where
    Scalar: PrimeField,
    CS: ConstraintSystem<Scalar>,
{
    assert_eq!(block.len(), 512);
    assert_eq!(state.len(), 8);
    let mut packer = Packer::new();
    let mut w: Vec<Word> = block.chunks(32).map(Word::from_bits_be).collect();
    for i in 16..64 {
        let cs = &mut cs.namespace(|| format!("w extension {i}"));
        let s0 = w[i - 15]
            .rotr(7)
            .xor(cs.namespace(|| "first xor for s0"), &w[i - 15].rotr(18))?
            .xor(cs.namespace(|| "second xor for s0"), &w[i - 15].shr(3))?;
        let s1 = w[i - 2]
            .rotr(17)
            .xor(cs.namespace(|| "first xor for s1"), &w[i - 2].rotr(19))?
            .xor(cs.namespace(|| "second xor for s1"), &w[i - 2].shr(10))?;
        let next = add_words(
            cs.namespace(|| "computation of w[i]"),
            &mut packer,
            &[w[i - 16].clone(), s0, w[i - 7].clone(), s1],
        )?;
        w.push(next);
    }

    let mut a = Lazy::Word(state[0].clone());
    let mut b = state[1].clone();
    let mut c = state[2].clone();
    let mut d = state[3].clone();
    let mut e = Lazy::Word(state[4].clone());
    let mut f = state[5].clone();
    let mut g = state[6].clone();
    let mut h = state[7].clone();
    for (i, (&k, w_i)) in ROUND_CONSTANTS.iter().zip(&w).enumerate() {
        let cs = &mut cs.namespace(|| format!("compression round {i}"));
        let e_now = e.resolve(cs.namespace(|| "deferred e computation"), &mut packer, &[])?;
        let s1 = e_now
            .rotr(6)
            .xor(cs.namespace(|| "first xor for s1"), &e_now.rotr(11))?
            .xor(cs.namespace(|| "second xor for s1"), &e_now.rotr(25))?;
        let ch = Word::ch(cs.namespace(|| "ch"), &e_now, &f, &g)?;
        let temp1 = [h, s1, ch, Word::constant(k), w_i.clone()];
        let a_now = a.resolve(cs.namespace(|| "deferred a computation"), &mut packer, &[])?;
        let s0 = a_now
            .rotr(2)
            .xor(cs.namespace(|| "first xor for s0"), &a_now.rotr(13))?
            .xor(cs.namespace(|| "second xor for s0"), &a_now.rotr(22))?;
        let maj = Word::maj(cs.namespace(|| "maj"), &a_now, &b, &c)?;
        h = g;
        g = f;
        f = e_now;
        e = Lazy::Sum(temp1.iter().cloned().chain([d]).collect());
        d = c;
        c = b;
        b = a_now;
        a = Lazy::Sum(temp1.into_iter().chain([s0, maj]).collect());
    }

    let h0 = a.resolve(
        cs.namespace(|| "deferred h0 computation"),
        &mut packer,
        &[state[0].clone()],
    )?;
    let mut next = vec![h0];
    for (j, word) in [(1, b), (2, c), (3, d)] {
        next.push(add_words(
            cs.namespace(|| format!("new h{j}")),
            &mut packer,
            &[state[j].clone(), word],
        )?);
    }
    next.push(e.resolve(
        cs.namespace(|| "deferred h4 computation"),
        &mut packer,
        &[state[4].clone()],
    )?);
    for (j, word) in [(5, f), (6, g), (7, h)] {
        next.push(add_words(
            cs.namespace(|| format!("new h{j}")),
            &mut packer,
            &[state[j].clone(), word],
        )?);
    }
    packer.flush(&mut cs);
    Ok(next)
}
