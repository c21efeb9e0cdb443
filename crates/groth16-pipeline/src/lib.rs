#![doc = include_str!("../README.md")]
#![forbid(unsafe_code)]

mod engine;
mod proof;
mod prover;
mod verifier;

pub use engine::{
    panic_message, Engine, EngineOptions, PartitionOutcome, PartitionReport, RunSummary,
    SynthesisError,
};
pub use proof::{Proof, PROOF_BYTES};
pub use prover::{
    gpu_working_bytes, lanes_that_fit, prove, prove_one_with_randomness, prove_with,
    resident_bytes, streamed_chunk_points, Backend, GpuParams, HBackend, Placement, Products,
    ProofTimings, ProverOptions, GPU_H_MIN_LOG2, GPU_MSM_MIN_LOG2,
};
pub use verifier::{prepare_verifying_key, verify_proof, PreparedVerifyingKey};

/// Errors of this crate.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The parameters do not fit the circuit.
    #[error("parameters do not fit circuit {circuit}: {source}")]
    Params {
        /// Index of the circuit in the call.
        circuit: usize,
        /// What did not fit.
        #[source]
        source: srs_loader::Error,
    },
    /// The H polynomial could not be computed.
    #[error("H polynomial: {0}")]
    Ntt(#[from] ntt_cuda::Error),
    /// An MSM was called with inconsistent inputs (a bug in the caller, reported instead of a panic).
    #[error("MSM {what}: {source}")]
    Msm {
        /// Which MSM.
        what: &'static str,
        /// The MSM's error.
        #[source]
        source: msm_cuda::Error,
    },
    /// Scalars could not be uploaded to the device for an MSM.
    #[error("uploading the {what} scalars: {source}")]
    Upload {
        /// Which scalars.
        what: &'static str,
        /// The device error.
        #[source]
        source: ntt_cuda::Error,
    },
    /// The CPU and GPU results of a stage differ (the dual check found a bug).
    #[error("dual check: CPU and GPU differ in the {stage} at element {index}")]
    DualCheck {
        /// Which stage.
        stage: &'static str,
        /// First differing element.
        index: usize,
    },
    /// Proof bytes of the wrong length.
    #[error(
        "proof data has {got} bytes; a proof is {PROOF_BYTES} bytes, so expected a multiple of it"
    )]
    ProofLength {
        /// Length given.
        got: usize,
    },
    /// A proof point does not decode.
    #[error("proof {index}: {part} is {problem}")]
    ProofPoint {
        /// Which proof in a concatenation.
        index: usize,
        /// "A", "B" or "C".
        part: &'static str,
        /// What is wrong.
        problem: &'static str,
    },
    /// The caller's synthesis of a partition failed (or panicked).
    #[error("partition {partition}: synthesis failed: {message}")]
    Synthesis {
        /// The partition.
        partition: usize,
        /// The synthesis error.
        message: String,
    },
    /// An assignment left a, b and c to the prover, but no compiled shape to compute them was given.
    #[error("the assignment leaves a, b and c to the prover, but the prover has no compiled shape (Engine::with_shape)")]
    ProductsDeferred,
    /// The compiled shape could not compute an assignment's a, b and c (counts of another circuit).
    #[error("a, b and c from the witness: {0}")]
    Products(#[from] r1cs_synth::Error),
    /// The engine's synthesis thread pool could not start.
    #[error("cannot start the synthesis thread pool: {0}")]
    ThreadPool(String),
    /// A proof failed the verifier's check, and so did the CPU re-prove of its partition.
    #[error(
        "partition {partition}: the proof failed the verifier's check, and so did its CPU re-prove"
    )]
    CheckFailed {
        /// The partition.
        partition: usize,
    },
    /// A setting (read from the environment, or an engine option) is malformed.
    #[error("{0}")]
    Config(String),
    /// The prover panicked on a partition (a bug, reported instead of taking the engine down).
    #[error("partition {partition}: the prover panicked: {message}")]
    ProverPanicked {
        /// The partition.
        partition: usize,
        /// The panic's message.
        message: String,
    },
    /// The number of public inputs does not match the verifying key.
    #[error("{got} public inputs given, but the verifying key expects {expected}")]
    InputCount {
        /// Number expected (ic length - 1).
        expected: usize,
        /// Number given.
        got: usize,
    },
}

impl Error {
    /// Whether the error came from a working device (a CUDA call, a kernel, device memory, an upload) rather than
    /// from the inputs or the set-up: the engine proves such a partition on the CPU instead of failing it. No usable
    /// GPU at all (`NoDevice`, with a GPU backend forced) is a set-up error, reported as it is.
    pub fn is_device_error(&self) -> bool {
        match self {
            Error::Ntt(e) | Error::Upload { source: e, .. } => {
                matches!(e, ntt_cuda::Error::Cuda { .. })
            }
            Error::Msm { source, .. } => matches!(source, msm_cuda::Error::Cuda { .. }),
            _ => false,
        }
    }
}

/// Result alias of this crate.
pub type Result<T> = std::result::Result<T, Error>;
