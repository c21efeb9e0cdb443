//! The `cuzk.v1.ProvingEngine` gRPC schema, wire-compatible with the cuzk service Curio drives, as prost messages
//! and tonic client and server code; and the daemon's journal records.
//!
//! The schema lives in `proto/cuzk/v1/proving.proto`; its one addition, [`v1::ProofKind::CuzkTestCircuit`], is a
//! value Curio never sends.

#![allow(missing_docs, clippy::all, missing_debug_implementations)]

/// Modules mirror the protobuf packages, so generated cross-package paths resolve.
pub mod cuzk {
    /// The wire protocol (`cuzk.v1`).
    pub mod v1 {
        tonic::include_proto!("cuzk.v1");
    }
    /// The daemon's journal records, on disk only (`cuzk.journal.v1`).
    pub mod journal {
        pub mod v1 {
            tonic::include_proto!("cuzk.journal.v1");
        }
    }
}

pub use cuzk::journal::v1 as journal;
pub use cuzk::v1;

/// The service's full gRPC name.
pub const SERVICE: &str = "cuzk.v1.ProvingEngine";
