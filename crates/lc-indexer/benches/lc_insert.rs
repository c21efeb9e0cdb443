//! Building and evaluating linear combinations with each backend, on the exact term lists of a real SHA-256 circuit.
//!
//! The recorded LCs give the real term-count distribution (most have 1 to 3 terms, a few hundreds), which is what decides between Vec and SmallVec.

use bellpepper_core::{
    Circuit, ConstraintSystem, Index, LinearCombination as BpLc, SynthesisError, Variable,
};
use blstrs::Scalar;
use circuits::Sha256Circuit;
use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use lc_indexer::{
    LinearCombination, SmallVecTerms1, SmallVecTerms2, SmallVecTerms4, TermStorage, Var, VecTerms,
};

/// Records every A, B and C term list of a circuit.
#[derive(Default)]
struct Recorder {
    lcs: Vec<Vec<(Var, Scalar)>>,
    inputs: usize,
    aux: usize,
}

impl ConstraintSystem<Scalar> for Recorder {
    type Root = Self;
    fn alloc<F, A, AR>(&mut self, _: A, _: F) -> Result<Variable, SynthesisError>
    where
        F: FnOnce() -> Result<Scalar, SynthesisError>,
        A: FnOnce() -> AR,
        AR: Into<String>,
    {
        self.aux += 1;
        Ok(Variable::new_unchecked(Index::Aux(self.aux - 1)))
    }
    fn alloc_input<F, A, AR>(&mut self, _: A, _: F) -> Result<Variable, SynthesisError>
    where
        F: FnOnce() -> Result<Scalar, SynthesisError>,
        A: FnOnce() -> AR,
        AR: Into<String>,
    {
        self.inputs += 1;
        Ok(Variable::new_unchecked(Index::Input(self.inputs - 1)))
    }
    fn enforce<A, AR, LA, LB, LC>(&mut self, _: A, a: LA, b: LB, c: LC)
    where
        A: FnOnce() -> AR,
        AR: Into<String>,
        LA: FnOnce(BpLc<Scalar>) -> BpLc<Scalar>,
        LB: FnOnce(BpLc<Scalar>) -> BpLc<Scalar>,
        LC: FnOnce(BpLc<Scalar>) -> BpLc<Scalar>,
    {
        for lc in [a(BpLc::zero()), b(BpLc::zero()), c(BpLc::zero())] {
            let mut terms: Vec<(Var, Scalar)> = lc
                .iter_inputs()
                .map(|(i, c)| (Var::Input(*i), *c))
                .collect();
            terms.extend(lc.iter_aux().map(|(i, c)| (Var::Aux(*i), *c)));
            self.lcs.push(terms);
        }
    }
    fn push_namespace<NR: Into<String>, N: FnOnce() -> NR>(&mut self, _: N) {}
    fn pop_namespace(&mut self) {}
    fn get_root(&mut self) -> &mut Self {
        self
    }
}

fn build_and_eval<S: TermStorage>(
    lcs: &[Vec<(Var, Scalar)>],
    inputs: &[Scalar],
    aux: &[Scalar],
) -> Scalar {
    let mut acc = Scalar::from(0u64);
    for terms in lcs {
        let mut lc = LinearCombination::<S>::zero();
        for &(v, c) in terms {
            lc.add_term(v, c);
        }
        acc += lc.eval(inputs, aux);
    }
    acc
}

fn bench(c: &mut Criterion) {
    let mut rec = Recorder {
        inputs: 1,
        ..Default::default()
    };
    Sha256Circuit::blank(1).synthesize(&mut rec).unwrap();
    let inputs: Vec<Scalar> = (0..rec.inputs as u64).map(Scalar::from).collect();
    let aux: Vec<Scalar> = (0..rec.aux as u64)
        .map(|i| Scalar::from(i * 7 + 1))
        .collect();
    let mut histogram = std::collections::BTreeMap::new();
    for lc in &rec.lcs {
        *histogram.entry(lc.len().min(9)).or_insert(0usize) += 1;
    }
    eprintln!(
        "sha256-1blk: {} LCs, term-count histogram (9 = 9 or more): {histogram:?}",
        rec.lcs.len()
    );

    let mut group = c.benchmark_group("lc_build_eval");
    group.throughput(Throughput::Elements(rec.lcs.len() as u64));
    let id = "sha256-1blk";
    group.bench_function(BenchmarkId::new(VecTerms::NAME, id), |b| {
        b.iter(|| build_and_eval::<VecTerms>(&rec.lcs, &inputs, &aux))
    });
    group.bench_function(BenchmarkId::new(SmallVecTerms1::NAME, id), |b| {
        b.iter(|| build_and_eval::<SmallVecTerms1>(&rec.lcs, &inputs, &aux))
    });
    group.bench_function(BenchmarkId::new(SmallVecTerms2::NAME, id), |b| {
        b.iter(|| build_and_eval::<SmallVecTerms2>(&rec.lcs, &inputs, &aux))
    });
    group.bench_function(BenchmarkId::new(SmallVecTerms4::NAME, id), |b| {
        b.iter(|| build_and_eval::<SmallVecTerms4>(&rec.lcs, &inputs, &aux))
    });
    group.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(20);
    targets = bench
}
criterion_main!(benches);
