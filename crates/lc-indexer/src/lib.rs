#![doc = include_str!("../README.md")]
#![forbid(unsafe_code)]

use blstrs::Scalar;
use ff::Field;
use smallvec::SmallVec;

/// One term: a variable index and its coefficient.
pub type Term = (usize, Scalar);

/// Sorted sparse storage of terms with bellpepper-core's merge semantics.
///
/// Every implementation keeps the terms sorted by index with no duplicate index.
pub trait TermStorage: Default + Clone + std::fmt::Debug + Send + Sync {
    /// A short name for benchmark ids and reports.
    const NAME: &'static str;

    /// The terms, sorted by index.
    fn terms(&self) -> &[Term];

    /// Mutable access to the terms; callers must keep them sorted and unique.
    fn terms_mut(&mut self) -> &mut [Term];

    /// Inserts `(index, coeff)` at position `pos` (which keeps the order).
    fn insert_at(&mut self, pos: usize, term: Term);

    /// Removes every term.
    fn clear(&mut self);

    /// Reserves room for `additional` more terms where the backend can.
    fn reserve(&mut self, additional: usize);

    /// Adds `coeff` to the coefficient of `index`, inserting the term if it is absent.
    #[inline]
    fn add_term(&mut self, index: usize, coeff: Scalar) {
        let terms = self.terms();
        // Gadgets mostly append in increasing index order: check the end first.
        let pos = match terms.last() {
            None => 0,
            Some(&(last, _)) if last < index => terms.len(),
            Some(&(last, _)) if last == index => {
                let n = terms.len();
                self.terms_mut()[n - 1].1 += coeff;
                return;
            }
            _ => match terms.binary_search_by_key(&index, |t| t.0) {
                Ok(i) => {
                    self.terms_mut()[i].1 += coeff;
                    return;
                }
                Err(i) => i,
            },
        };
        self.insert_at(pos, (index, coeff));
    }

    /// Number of stored terms.
    #[inline]
    fn len(&self) -> usize {
        self.terms().len()
    }

    /// Whether there is no stored term.
    #[inline]
    fn is_empty(&self) -> bool {
        self.terms().is_empty()
    }

    /// Looks up the coefficient of `index`.
    fn get(&self, index: usize) -> Option<&Scalar> {
        let terms = self.terms();
        terms
            .binary_search_by_key(&index, |t| t.0)
            .ok()
            .map(|i| &terms[i].1)
    }

    /// Evaluates the terms against `assignment`: the sum of `coeff * assignment[index]`.
    ///
    /// # Panics
    /// If an index is out of range of `assignment`; checked callers validate indices first.
    #[inline]
    fn eval(&self, assignment: &[Scalar]) -> Scalar {
        eval_terms(self.terms(), assignment)
    }
}

/// Evaluates sorted terms against an assignment, skipping the multiplication for coefficient one.
#[inline]
pub fn eval_terms(terms: &[Term], assignment: &[Scalar]) -> Scalar {
    let mut acc = Scalar::ZERO;
    for (index, coeff) in terms {
        let value = assignment[*index];
        if *coeff == Scalar::ONE {
            acc += value;
        } else {
            acc += value * coeff;
        }
    }
    acc
}

/// Heap storage: a plain `Vec`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct VecTerms(Vec<Term>);

impl TermStorage for VecTerms {
    const NAME: &'static str = "vec";

    #[inline]
    fn terms(&self) -> &[Term] {
        &self.0
    }
    #[inline]
    fn terms_mut(&mut self) -> &mut [Term] {
        &mut self.0
    }
    #[inline]
    fn insert_at(&mut self, pos: usize, term: Term) {
        self.0.insert(pos, term);
    }
    fn clear(&mut self) {
        self.0.clear();
    }
    fn reserve(&mut self, additional: usize) {
        self.0.reserve(additional);
    }
}

/// Inline storage for up to `N` terms, spilling to the heap beyond.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SmallVecTerms<const N: usize>(SmallVec<[Term; N]>);

/// [`SmallVecTerms`] with one inline term.
pub type SmallVecTerms1 = SmallVecTerms<1>;
/// [`SmallVecTerms`] with two inline terms.
pub type SmallVecTerms2 = SmallVecTerms<2>;
/// [`SmallVecTerms`] with four inline terms.
pub type SmallVecTerms4 = SmallVecTerms<4>;

impl<const N: usize> TermStorage for SmallVecTerms<N> {
    const NAME: &'static str = match N {
        1 => "smallvec1",
        2 => "smallvec2",
        4 => "smallvec4",
        _ => "smallvec",
    };

    #[inline]
    fn terms(&self) -> &[Term] {
        &self.0
    }
    #[inline]
    fn terms_mut(&mut self) -> &mut [Term] {
        &mut self.0
    }
    #[inline]
    fn insert_at(&mut self, pos: usize, term: Term) {
        self.0.insert(pos, term);
    }
    fn clear(&mut self) {
        self.0.clear();
    }
    fn reserve(&mut self, additional: usize) {
        self.0.reserve(additional);
    }
}

/// Which variable space a term belongs to, as in bellpepper-core's `Index`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Var {
    /// A public input (input 0 is the constant ONE).
    Input(usize),
    /// A private (auxiliary) variable.
    Aux(usize),
}

/// A linear combination over inputs and aux, each kept in its own sorted storage.
#[derive(Clone, Debug, Default)]
pub struct LinearCombination<S: TermStorage> {
    /// Input terms, sorted by index.
    pub inputs: S,
    /// Aux terms, sorted by index.
    pub aux: S,
}

impl<S: TermStorage> LinearCombination<S> {
    /// The empty combination.
    pub fn zero() -> Self {
        Self::default()
    }

    /// Adds `coeff * var`.
    #[inline]
    pub fn add_term(&mut self, var: Var, coeff: Scalar) {
        match var {
            Var::Input(i) => self.inputs.add_term(i, coeff),
            Var::Aux(i) => self.aux.add_term(i, coeff),
        }
    }

    /// Adds every term of `other`, scaled by `scale`.
    pub fn add_scaled(&mut self, other: &Self, scale: Scalar) {
        for &(i, c) in other.inputs.terms() {
            self.inputs.add_term(i, c * scale);
        }
        for &(i, c) in other.aux.terms() {
            self.aux.add_term(i, c * scale);
        }
    }

    /// Number of terms over both spaces.
    pub fn len(&self) -> usize {
        self.inputs.len() + self.aux.len()
    }

    /// Whether there is no term.
    pub fn is_empty(&self) -> bool {
        self.inputs.is_empty() && self.aux.is_empty()
    }

    /// Evaluates against the two assignments.
    #[inline]
    pub fn eval(&self, inputs: &[Scalar], aux: &[Scalar]) -> Scalar {
        self.inputs.eval(inputs) + self.aux.eval(aux)
    }

    /// Removes every term, keeping allocated room.
    pub fn clear(&mut self) {
        self.inputs.clear();
        self.aux.clear();
    }
}

/// The backends by name, for command-line switches and reports.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Backend {
    /// [`VecTerms`].
    Vec,
    /// [`SmallVecTerms1`].
    SmallVec1,
    /// [`SmallVecTerms2`].
    SmallVec2,
    /// [`SmallVecTerms4`].
    SmallVec4,
}

impl Backend {
    /// Every backend, in a fixed order.
    pub const ALL: [Backend; 4] = [
        Backend::Vec,
        Backend::SmallVec1,
        Backend::SmallVec2,
        Backend::SmallVec4,
    ];

    /// The backend's short name (as in [`TermStorage::NAME`]).
    pub fn name(self) -> &'static str {
        match self {
            Backend::Vec => VecTerms::NAME,
            Backend::SmallVec1 => SmallVecTerms1::NAME,
            Backend::SmallVec2 => SmallVecTerms2::NAME,
            Backend::SmallVec4 => SmallVecTerms4::NAME,
        }
    }
}

impl std::str::FromStr for Backend {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Backend::ALL
            .into_iter()
            .find(|b| b.name() == s)
            .ok_or_else(|| {
                format!("unknown LC backend {s:?}: expected vec, smallvec1, smallvec2 or smallvec4")
            })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(v: u64) -> Scalar {
        Scalar::from(v)
    }

    fn check_merge<S: TermStorage>() {
        let mut t = S::default();
        t.add_term(5, s(1));
        t.add_term(2, s(2));
        t.add_term(5, s(3));
        t.add_term(9, s(4));
        t.add_term(0, s(5));
        t.add_term(9, -s(4));
        assert_eq!(
            t.terms(),
            &[(0, s(5)), (2, s(2)), (5, s(4)), (9, Scalar::ZERO)],
            "{}",
            S::NAME
        );
        // Zero sums stay, as in bellpepper-core.
        assert_eq!(t.len(), 4);
        assert_eq!(t.get(5), Some(&s(4)));
        assert_eq!(t.get(3), None);
        let assignment: Vec<Scalar> = (0..10u64).map(|i| s(i + 1)).collect();
        assert_eq!(t.eval(&assignment), s(5) + s(2 * 3) + s(4 * 6));
    }

    #[test]
    fn merge_semantics_every_backend() {
        check_merge::<VecTerms>();
        check_merge::<SmallVecTerms1>();
        check_merge::<SmallVecTerms2>();
        check_merge::<SmallVecTerms4>();
    }

    #[test]
    fn backend_names_round_trip() {
        for b in Backend::ALL {
            assert_eq!(b.name().parse::<Backend>().unwrap(), b);
        }
        assert!("smallvec3".parse::<Backend>().is_err());
    }

    #[test]
    fn linear_combination_spaces_are_separate() {
        let mut lc = LinearCombination::<VecTerms>::zero();
        lc.add_term(Var::Input(0), s(2));
        lc.add_term(Var::Aux(0), s(3));
        lc.add_term(Var::Aux(0), s(4));
        assert_eq!(lc.len(), 2);
        assert_eq!(lc.eval(&[s(10)], &[s(100)]), s(20 + 700));
    }
}
