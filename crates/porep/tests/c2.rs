//! End to end with the real Filecoin circuit: seal a 2 KiB sector with filecoin-proofs (pre-commit 1 and 2,
//! commit 1), prove its Commit-2 with cuzk's engine, verify with filecoin-proofs' `verify_seal`; a changed proof
//! byte is rejected, and bad C1 outputs are refused with a precise error before any proving work.
//!
//! One test function: filecoin-proofs reads its settings (the parameter and parent cache directories) from the
//! environment once per process, so they are set before anything touches them.

use std::sync::Arc;

use groth16_pipeline::{Backend, Engine, EngineOptions, ProverOptions};
use porep::{params, seal::seal_sector, C1Output, Error, RegisteredSealProof, Sector, Synthesis};
use rand::SeedableRng;
use rand_chacha::ChaCha20Rng;

const RP: RegisteredSealProof = RegisteredSealProof::StackedDrg2KiBV1_1;

fn expect_invalid(result: porep::Result<()>, needle: &str) {
    match result {
        Err(e @ (Error::C1Invalid { .. } | Error::C1Format { .. })) => {
            let text = e.to_string();
            assert!(
                text.contains(needle),
                "error {text:?} should mention {needle:?}"
            );
        }
        other => panic!("expected an invalid-C1 error mentioning {needle:?}, got {other:?}"),
    }
}

#[test]
fn seal_prove_verify_2kib_and_refuse_bad_c1() {
    // Parameters persist across runs under the target directory (generating them is the slow part); the parent
    // cache and the sector live in a temporary directory.
    let params_dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("filecoin-params");
    let work = tempfile::tempdir().unwrap();
    std::env::set_var("FIL_PROOFS_PARAMETER_CACHE", &params_dir);
    std::env::set_var("FIL_PROOFS_PARENT_CACHE", work.path().join("parents"));

    let mut rng = ChaCha20Rng::seed_from_u64(0xc2);
    let sector = Sector {
        miner_id: 1000,
        sector_number: 7,
    };
    let t = std::time::Instant::now();
    let c1_json = seal_sector(RP, &work.path().join("sector"), &sector, &mut rng).unwrap();
    eprintln!("sealed a 2 KiB sector in {:?}", t.elapsed());

    let c1 = C1Output::from_json(&c1_json, "c1.json").unwrap();
    assert_eq!(c1.sector_size(), 2048);
    assert_eq!(c1.partitions(), 1);
    c1.check(&sector, Some(2048)).unwrap();

    // lotus-bench's commit-2 input wraps the same JSON in base64 beside the sector's number and size.
    let wrapped = |size: u64| {
        use base64::Engine as _;
        format!(
            "{{\"Phase1Out\":\"{}\",\"SectorNum\":7,\"SectorSize\":{size}}}",
            base64::engine::general_purpose::STANDARD.encode(&c1_json)
        )
    };
    let from_bench = C1Output::from_json(wrapped(2048).as_bytes(), "c2in.json").unwrap();
    assert_eq!(from_bench.sector_number_hint, Some(7));
    assert_eq!(from_bench.inner.comm_r, c1.inner.comm_r);
    from_bench.check(&sector, None).unwrap();
    match C1Output::from_json(wrapped(8 << 20).as_bytes(), "c2in.json") {
        Err(e @ Error::C1Invalid { .. }) => {
            assert!(e.to_string().contains("SectorSize says 8 MiB"), "{e}")
        }
        other => panic!("a wrapper whose size disagrees must be refused, got {other:?}"),
    }

    // Bad inputs, each refused before proving.
    match C1Output::from_json(&c1_json[..c1_json.len() / 2], "half.json") {
        Err(Error::C1Format { line, column, .. }) => assert!(line >= 1 && column > 0),
        other => panic!("a truncated C1 must be a format error, got {other:?}"),
    }
    expect_invalid(c1.check(&sector, Some(8 << 20)), "not 8 MiB");
    let other_size = String::from_utf8(c1_json.clone())
        .unwrap()
        .replace("\"StackedDrg2KiBV1_1\"", "\"StackedDrg8MiBV1_1\"");
    let other_size = C1Output::from_json(other_size.as_bytes(), "8mib.json").unwrap();
    expect_invalid(
        other_size.check(&sector, None),
        "vanilla_proofs are those of a 2 KiB",
    );
    expect_invalid(
        c1.check(
            &Sector {
                sector_number: 8,
                ..sector
            },
            None,
        ),
        "sector number 8",
    );
    let mut wrong_comm = c1.clone();
    wrong_comm.inner.comm_r[3] ^= 1;
    expect_invalid(
        wrong_comm.check(&sector, None),
        "do not verify against comm_r",
    );
    let mut zero_comm = c1.clone();
    zero_comm.inner.comm_d = [0; 32];
    expect_invalid(zero_comm.check(&sector, None), "comm_d is all zeros");

    // Parameters under filecoin-proofs' names, generated once and marked as test parameters.
    let t = std::time::Instant::now();
    let ensured = params::ensure(RP, true, &mut rng).unwrap();
    eprintln!(
        "parameters {} ({:?}) in {:?}",
        ensured.files.params.display(),
        ensured.generated,
        t.elapsed()
    );
    assert!(ensured.files.is_test());
    assert!(ensured.files.vk.exists() && ensured.files.meta.exists());
    let name = ensured
        .files
        .params
        .file_name()
        .unwrap()
        .to_string_lossy()
        .into_owned();
    assert!(
        name.starts_with(
            "v28-stacked-proof-of-replication-merkletree-poseidon_hasher-8-0-0-sha256_hasher-"
        ),
        "{name}"
    );
    let parameters = Arc::new(params::load(&ensured.files, false).unwrap());

    // The compiled shape (keyed by the parameter identifier) gives exactly the direct path's assignment on the
    // real circuit: a, b, c, both assignments and all three densities. The compiled paths compute the witness in
    // pieces, one a challenge (two here), at once: the first call learns the head's size, the second uses it.
    let shape_path = params_dir.join("porep-2kib.shape");
    let t = std::time::Instant::now();
    let (shape, rebuilt) = porep::compiled_shape(RP, &shape_path).unwrap();
    eprintln!("compiled shape ({rebuilt:?}) in {:?}", t.elapsed());
    let t = std::time::Instant::now();
    let direct = porep::synthesize_partition(&c1, 0, Synthesis::Direct).unwrap();
    eprintln!("direct synthesis in {:?}", t.elapsed());
    let t = std::time::Instant::now();
    let compiled = porep::synthesize_partition(&c1, 0, Synthesis::Compiled(&shape)).unwrap();
    eprintln!("compiled synthesis in {:?}", t.elapsed());
    assert_eq!(direct.num_constraints(), compiled.num_constraints());
    assert!(
        direct == compiled,
        "compiled synthesis differs from direct on the PoRep circuit"
    );
    // The witness alone, a, b and c left to the prover: computed afterwards, the same assignment.
    let mut witness = porep::synthesize_partition(&c1, 0, Synthesis::Witness(&shape)).unwrap();
    assert!(witness.products_deferred() && witness.a.is_empty());
    shape.compute_products(&mut witness).unwrap();
    assert!(
        witness == compiled,
        "a, b, c from the witness differ on the PoRep circuit"
    );
    // The witness as one circuit (CUZK_SYNTH_PIECES=0), as filecoin-proofs synthesizes it: the same.
    std::env::set_var("CUZK_SYNTH_PIECES", "0");
    let whole = porep::synthesize_partition(&c1, 0, Synthesis::Witness(&shape)).unwrap();
    std::env::remove_var("CUZK_SYNTH_PIECES");
    assert!(
        whole.aux_assignment == witness.aux_assignment
            && whole.input_assignment == witness.input_assignment,
        "the witness in pieces differs from the whole circuit's"
    );
    drop((direct, compiled, witness, whole));

    let engine = Engine::new(
        parameters,
        EngineOptions {
            prover: ProverOptions {
                h_backend: Backend::Auto,
                msm_backend: Backend::Auto,
            },
            ..EngineOptions::default()
        },
    )
    .unwrap()
    .with_shape(Arc::new(shape.clone()))
    .unwrap();
    // Partitions leave a, b and c to the engine's prover (on the GPU it computes them on the device).
    let t = std::time::Instant::now();
    let proof = porep::prove(&c1, &engine, Synthesis::Witness(&shape), &mut rng, |_| {}).unwrap();
    eprintln!("proved in {:?}", t.elapsed());
    assert_eq!(proof.bytes.len(), porep::PARTITION_PROOF_BYTES);
    assert!(!proof.partitions[0].report.reproved_on_cpu);

    // filecoin-proofs' verifier accepts it, and rejects any changed byte or another sector.
    assert!(porep::verify(&c1, &sector, &proof.bytes).unwrap());
    for at in [0, 100, 191] {
        let mut bad = proof.bytes.clone();
        bad[at] ^= 0x04;
        let verdict = porep::verify(&c1, &sector, &bad);
        assert!(
            !matches!(verdict, Ok(true)),
            "a proof with byte {at} changed must not verify"
        );
    }
    assert!(!porep::verify(
        &c1,
        &Sector {
            miner_id: 1001,
            ..sector
        },
        &proof.bytes
    )
    .unwrap());
    assert!(porep::verify(&c1, &sector, &proof.bytes[..100]).is_err());
}
