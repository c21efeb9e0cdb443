//! File format: round trips, bellperson interop, and a precise error for every kind of damage.

use bellperson::groth16 as bp;
use blstrs::{Bls12, G1Affine};
use r1cs_synth::{synthesize, SynthesisOptions};
use rand::RngCore;
use srs_loader::{read_params, setup, Error, Parameters, PointProblem, ReadOptions, Section};
use test_utils::{seeded_rng, RandomCircuit};

/// Offset of the h section's count: vk points (3 G1 + 3 G2... interleaved), ic count and points.
fn h_count_offset(p: &Parameters) -> usize {
    3 * 96 + 3 * 192 + 4 + p.vk.ic.len() * 96
}

fn small_params() -> (Parameters, RandomCircuit) {
    let mut rng = seeded_rng(20);
    let circuit = RandomCircuit::new(2, 5, 12, &mut rng);
    (setup(circuit.without_values(), &mut rng).unwrap(), circuit)
}

#[test]
fn round_trip_through_file_is_byte_identical() {
    let (params, _) = small_params();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("sub/dir/test.params");
    params.write_file(&path).unwrap();
    let bytes = std::fs::read(&path).unwrap();
    assert_eq!(bytes.len() as u64, params.file_len());
    assert_eq!(bytes, params.to_bytes());
    assert_eq!(read_params(&path, ReadOptions::default()).unwrap(), params);
    // No temporary file is left beside it.
    let names: Vec<_> = std::fs::read_dir(path.parent().unwrap())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(names, vec![std::ffi::OsString::from("test.params")]);
}

#[test]
fn bellperson_reads_ours_and_we_read_bellpersons() {
    let (params, circuit) = small_params();
    let bytes = params.to_bytes();
    let theirs = bp::Parameters::<Bls12>::read(&bytes[..], true).unwrap();
    let mut rng = seeded_rng(21);
    let bp_params =
        bp::generate_random_parameters::<Bls12, _, _>(circuit.without_values(), &mut rng).unwrap();
    let mut bp_bytes = Vec::new();
    bp_params.write(&mut bp_bytes).unwrap();
    let ours = Parameters::from_bytes(&bp_bytes, ReadOptions::default()).unwrap();
    assert_eq!(ours.to_bytes(), bp_bytes);
    // Same shape from both generators.
    assert_eq!(theirs.h.len(), ours.h.len());
    assert_eq!(theirs.a.len(), ours.a.len());
    assert_eq!(theirs.b_g1.len(), ours.b_g1.len());
    assert_eq!(theirs.l.len(), ours.l.len());
}

#[test]
fn parameters_match_the_circuit() {
    let (params, circuit) = small_params();
    let pa = synthesize(circuit, &SynthesisOptions::default()).unwrap();
    params.check_matches(&pa).unwrap();
    let other = synthesize(
        RandomCircuit::new(2, 9, 12, &mut seeded_rng(22)),
        &SynthesisOptions::default(),
    )
    .unwrap();
    let err = params.check_matches(&other).unwrap_err();
    assert!(
        matches!(
            err,
            Error::SectionLength {
                section: Section::L,
                ..
            }
        ),
        "{err}"
    );
}

#[test]
fn truncation_names_section_and_offset() {
    let (params, _) = small_params();
    let bytes = params.to_bytes();
    for cut in [
        0usize,
        10,
        96 * 3,
        h_count_offset(&params) + 2,
        bytes.len() - 1,
    ] {
        let err = Parameters::from_bytes(&bytes[..cut], ReadOptions::default()).unwrap_err();
        assert!(matches!(err, Error::Truncated { .. }), "cut {cut}: {err}");
    }
    let err = Parameters::from_bytes(
        &bytes[..h_count_offset(&params) + 2],
        ReadOptions::default(),
    )
    .unwrap_err();
    assert!(
        matches!(err, Error::Truncated { section: Section::H, offset, .. } if offset as usize == h_count_offset(&params)),
        "{err}"
    );
    let mut long = bytes.clone();
    long.extend_from_slice(&[0; 5]);
    let err = Parameters::from_bytes(&long, ReadOptions::default()).unwrap_err();
    assert!(
        matches!(err, Error::TrailingBytes { extra: 5, offset } if offset as usize == bytes.len()),
        "{err}"
    );
}

#[test]
fn bad_points_name_section_index_and_offset() {
    let (params, _) = small_params();
    let bytes = params.to_bytes();
    let h2 = h_count_offset(&params) + 4 + 2 * 96;
    // Not on the curve: change the last byte of y.
    let mut bad = bytes.clone();
    bad[h2 + 95] ^= 1;
    let err = Parameters::from_bytes(&bad, ReadOptions::default()).unwrap_err();
    assert!(
        matches!(err, Error::InvalidPoint { section: Section::H, index: 2, offset, problem: PointProblem::NotOnCurve } if offset as usize == h2),
        "{err}"
    );
    assert!(
        err.to_string()
            .contains(&format!("h point 2 at offset {h2}")),
        "{err}"
    );
    // The identity.
    let mut inf = bytes.clone();
    inf[h2..h2 + 96].fill(0);
    inf[h2] = 0x40;
    let err = Parameters::from_bytes(&inf, ReadOptions::default()).unwrap_err();
    assert!(
        matches!(
            err,
            Error::InvalidPoint {
                problem: PointProblem::Identity,
                index: 2,
                ..
            }
        ),
        "{err}"
    );
    // On the curve, outside the subgroup: rejected when checking, accepted when trusting.
    let outsider = point_outside_subgroup();
    let mut out = bytes.clone();
    out[h2..h2 + 96].copy_from_slice(&outsider.to_uncompressed());
    let err = Parameters::from_bytes(&out, ReadOptions::default()).unwrap_err();
    assert!(
        matches!(
            err,
            Error::InvalidPoint {
                problem: PointProblem::NotInSubgroup,
                index: 2,
                ..
            }
        ),
        "{err}"
    );
    assert!(Parameters::from_bytes(
        &out,
        ReadOptions {
            check_subgroup: false
        }
    )
    .is_ok());
}

#[test]
fn identity_delta_is_rejected() {
    let (mut params, _) = small_params();
    params.vk.delta_g1 = G1Affine::default();
    // The encoded identity is on no section list, so only the δ check catches it.
    let err = Parameters::from_bytes(&params.to_bytes(), ReadOptions::default()).unwrap_err();
    assert!(matches!(err, Error::IdentityDelta("delta_g1")), "{err}");
}

#[test]
fn missing_file_names_the_path() {
    let err = read_params(
        std::path::Path::new("/nonexistent/x.params"),
        ReadOptions::default(),
    )
    .unwrap_err();
    assert!(err.to_string().contains("/nonexistent/x.params"), "{err}");
    let dir = tempfile::tempdir().unwrap();
    let empty = dir.path().join("empty.params");
    std::fs::write(&empty, b"").unwrap();
    assert!(matches!(
        read_params(&empty, ReadOptions::default()),
        Err(Error::Truncated { len: 0, .. })
    ));
}

#[test]
fn setup_rejects_unconstrained_aux() {
    struct Loose;
    impl bellpepper_core::Circuit<blstrs::Scalar> for Loose {
        fn synthesize<CS: bellpepper_core::ConstraintSystem<blstrs::Scalar>>(
            self,
            cs: &mut CS,
        ) -> Result<(), bellpepper_core::SynthesisError> {
            cs.alloc(|| "unused", || Ok(blstrs::Scalar::from(1u64)))?;
            Ok(())
        }
    }
    let err = setup(Loose, &mut seeded_rng(23)).unwrap_err();
    assert!(
        err.to_string()
            .contains("aux variable 0 appears in no constraint"),
        "{err}"
    );
}

/// A G1 point on the curve whose order is not r.
fn point_outside_subgroup() -> G1Affine {
    let mut rng = seeded_rng(24);
    loop {
        let mut x = [0u8; 48];
        rng.fill_bytes(&mut x);
        x[0] = (x[0] & 0x0f) | 0x80; // compressed flag, x well below p
        if let Some(p) = Option::<G1Affine>::from(G1Affine::from_compressed_unchecked(&x)) {
            if !bool::from(p.is_torsion_free()) {
                return p;
            }
        }
    }
}
