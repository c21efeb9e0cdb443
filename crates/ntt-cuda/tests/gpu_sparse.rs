//! Sparse rows times a vector on the GPU (`gpu::spmv`, a, b and c from a witness) against a naive loop on fresh
//! random matrices: empty rows, ±1 and other coefficients, repeated columns, every rotation of the values, padding
//! rows. Malformed matrices are refused on the host, by name, before anything reaches the device (runs without a GPU).
//! The GPU part skips with a printed reason without a GPU; it fails instead when CUZK_REQUIRE_GPU=1.

use blstrs::Scalar;
use ff::Field;
use ntt_cuda::gpu::{self, DeviceCoeffs, DeviceCsr, DeviceScalars, Stream};
use ntt_cuda::Error;
use rand::Rng;
use test_utils::{edge_or_random_scalar, fresh_rng, gpu_or_skip};

struct Csr {
    row_ptr: Vec<u32>,
    cols: Vec<u32>,
    slots: Vec<u32>,
}

/// `rows` rows of 0 to `max_terms` terms over `columns` columns; slots 0 and 1 (one, minus one) are most of them, as
/// in real circuits.
fn random_csr(
    rows: usize,
    columns: usize,
    table: usize,
    max_terms: usize,
    rng: &mut impl Rng,
) -> Csr {
    let mut m = Csr {
        row_ptr: vec![0],
        cols: Vec::new(),
        slots: Vec::new(),
    };
    for _ in 0..rows {
        for _ in 0..rng.gen_range(0..=max_terms) {
            m.cols.push(rng.gen_range(0..columns) as u32);
            m.slots.push(match rng.gen_range(0..4) {
                0 => 0,
                1 => 1,
                _ => rng.gen_range(0..table) as u32,
            });
        }
        m.row_ptr.push(m.cols.len() as u32);
    }
    m
}

/// The naive product: value k is column k, read from the rotated buffer as the GPU reads it.
fn reference(
    m: &Csr,
    table: &[Scalar],
    values: &[Scalar],
    rotate: usize,
    out_len: usize,
) -> Vec<Scalar> {
    let columns = values.len();
    let value = |k: usize| {
        values[if k >= rotate {
            k - rotate
        } else {
            k + columns - rotate
        }]
    };
    let mut out = vec![Scalar::ZERO; out_len];
    for (row, acc) in m.row_ptr.windows(2).zip(out.iter_mut()) {
        for k in row[0] as usize..row[1] as usize {
            *acc += table[m.slots[k] as usize] * value(m.cols[k] as usize);
        }
    }
    out
}

fn table(n: usize, rng: &mut impl Rng) -> Vec<Scalar> {
    let mut t = vec![Scalar::ONE, -Scalar::ONE];
    t.extend((2..n).map(|_| edge_or_random_scalar(rng)));
    t
}

#[test]
fn spmv_matches_the_naive_product() {
    if !gpu_or_skip("spmv_matches_the_naive_product", gpu::device()) {
        return;
    }
    let mut rng = fresh_rng("spmv_matches_the_naive_product");
    // (rows, columns, padding rows, terms per row at most, table size)
    for (rows, columns, pad, max_terms, tsize) in [
        (1, 1, 0, 1, 2),
        (1, 3, 7, 3, 2),
        (37, 5, 27, 4, 3),
        (1000, 300, 24, 6, 17),
        (70_001, 50_000, 1 << 14, 5, 40),
        // Rows longer than a thread sums alone (4 terms), which its warp shares out, up to several rounds of 32.
        (513, 64, 31, 70, 5),
        (4000, 9000, 100, 37, 12),
    ] {
        let m = random_csr(rows, columns, tsize, max_terms, &mut rng);
        let t = table(tsize, &mut rng);
        let values: Vec<Scalar> = (0..columns)
            .map(|_| edge_or_random_scalar(&mut rng))
            .collect();
        let stream = Stream::new().unwrap();
        let dm = DeviceCsr::upload(&m.row_ptr, &m.cols, &m.slots, columns, tsize).unwrap();
        assert_eq!((dm.rows(), dm.columns()), (rows, columns));
        let dt = DeviceCoeffs::upload(&t).unwrap();
        for rotate in [0, columns / 2, columns] {
            // The buffer holds the columns from `rotate` on, then the first `rotate`.
            let mut rotated = values[rotate..].to_vec();
            rotated.extend_from_slice(&values[..rotate]);
            let dv = DeviceScalars::from_host_padded(&rotated, columns, &stream).unwrap();
            let out_len = rows + pad;
            // Poisoned first: every element, padding included, must be written.
            let poison = vec![Scalar::from(0xdead_u64); out_len];
            let mut out = DeviceScalars::from_host_padded(&poison, out_len, &stream).unwrap();
            gpu::spmv(&dm, &dt, &dv, rotate, &mut out, &stream).unwrap();
            let got = out.to_host(out_len, &stream).unwrap();
            let want = reference(&m, &t, &rotated, rotate, out_len);
            if let Some(i) = (0..out_len).find(|&i| got[i] != want[i]) {
                panic!("{rows} rows, {columns} columns, rotate {rotate}: row {i} differs");
            }
        }
        // Lengths that do not fit the matrix are refused.
        let short = DeviceScalars::zeroed(columns.saturating_sub(1), &stream).unwrap();
        let mut out = DeviceScalars::zeroed(rows, &stream).unwrap();
        assert!(matches!(
            gpu::spmv(&dm, &dt, &short, 0, &mut out, &stream),
            Err(Error::LengthMismatch { .. })
        ));
    }
}

#[test]
fn malformed_matrices_are_refused_by_name() {
    let bad = |row_ptr: &[u32], cols: &[u32], slots: &[u32], columns, table| match gpu::check_csr(
        row_ptr, cols, slots, columns, table,
    ) {
        Err(Error::InvalidMatrix(m)) => m,
        other => panic!("{other:?}"),
    };
    assert!(gpu::check_csr(&[0, 1, 1, 3], &[0, 2, 1], &[0, 1, 5], 3, 6).is_ok());
    assert!(bad(&[], &[], &[], 1, 2).contains("empty"));
    assert!(bad(&[1, 1], &[0], &[0], 1, 2).contains("first is 1"));
    assert!(bad(&[0, 2, 1, 2], &[0, 0], &[0, 0], 1, 2).contains("row 1 ends before it starts"));
    assert!(bad(&[0, 2], &[0], &[0, 0], 1, 2).contains("1 columns and 2 coefficient slots"));
    assert!(bad(&[0, 1, 2], &[0, 3], &[0, 0], 3, 2).contains("term 1: column 3"));
    assert!(bad(&[0, 1, 2], &[0, 1], &[0, 2], 3, 2).contains("term 1: coefficient slot 2"));
    // A table must start with one, then minus one.
    for t in [vec![Scalar::ONE], vec![-Scalar::ONE, Scalar::ONE]] {
        assert!(matches!(
            DeviceCoeffs::upload(&t),
            Err(Error::InvalidMatrix(_))
        ));
    }
}
