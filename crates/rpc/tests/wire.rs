//! The wire facts of Curio's cuzk.v1 schema (package, service, methods, messages, field numbers and types, enum
//! values), written out here from that schema, checked against our .proto: a change that would break a Curio
//! client fails this test.

use prost_types::field_descriptor_proto::{Label, Type};

const B: Type = Type::Bytes;
const S: Type = Type::String;
const U64: Type = Type::Uint64;
const U32: Type = Type::Uint32;
const E: Type = Type::Enum;
const M: Type = Type::Message;
const BOOL: Type = Type::Bool;

/// (message, field, number, type, repeated)
const FIELDS: &[(&str, &str, i32, Type, bool)] = &[
    ("SubmitProofRequest", "request_id", 1, S, false),
    ("SubmitProofRequest", "proof_kind", 2, E, false),
    ("SubmitProofRequest", "sector_size", 3, U64, false),
    ("SubmitProofRequest", "registered_proof", 4, U64, false),
    ("SubmitProofRequest", "priority", 5, E, false),
    ("SubmitProofRequest", "vanilla_proof", 10, B, false),
    ("SubmitProofRequest", "vanilla_proofs", 11, B, true),
    ("SubmitProofRequest", "sector_number", 20, U64, false),
    ("SubmitProofRequest", "miner_id", 21, U64, false),
    ("SubmitProofRequest", "randomness", 22, B, false),
    ("SubmitProofRequest", "partition_index", 23, U32, false),
    ("SubmitProofRequest", "comm_r_old", 30, B, false),
    ("SubmitProofRequest", "comm_r_new", 31, B, false),
    ("SubmitProofRequest", "comm_d_new", 32, B, false),
    ("SubmitProofResponse", "job_id", 1, S, false),
    ("SubmitProofResponse", "queue_position", 2, U32, false),
    ("SubmitProofResponse", "assigned_gpu", 3, S, false),
    ("AwaitProofRequest", "job_id", 1, S, false),
    ("AwaitProofRequest", "timeout_ms", 2, U64, false),
    ("AwaitProofResponse", "job_id", 1, S, false),
    ("AwaitProofResponse", "status", 2, E, false),
    ("AwaitProofResponse", "proof", 3, B, false),
    ("AwaitProofResponse", "error_message", 4, S, false),
    ("AwaitProofResponse", "queue_wait_ms", 10, U64, false),
    ("AwaitProofResponse", "srs_load_ms", 11, U64, false),
    ("AwaitProofResponse", "synthesis_ms", 12, U64, false),
    ("AwaitProofResponse", "gpu_compute_ms", 13, U64, false),
    ("AwaitProofResponse", "total_ms", 14, U64, false),
    ("ProveRequest", "submit", 1, M, false),
    ("ProveResponse", "result", 1, M, false),
    ("CancelProofRequest", "job_id", 1, S, false),
    ("CancelProofResponse", "was_running", 1, BOOL, false),
    ("GetStatusResponse", "gpus", 1, M, true),
    ("GetStatusResponse", "loaded_srs", 2, M, true),
    ("GetStatusResponse", "queues", 3, M, true),
    ("GetStatusResponse", "total_proofs_completed", 4, U64, false),
    ("GetStatusResponse", "total_proofs_failed", 5, U64, false),
    ("GetStatusResponse", "uptime_seconds", 6, U64, false),
    ("GetStatusResponse", "pinned_memory_bytes", 7, U64, false),
    (
        "GetStatusResponse",
        "pinned_memory_limit_bytes",
        8,
        U64,
        false,
    ),
    ("GPUStatus", "ordinal", 1, U32, false),
    ("GPUStatus", "name", 2, S, false),
    ("GPUStatus", "vram_total_bytes", 3, U64, false),
    ("GPUStatus", "vram_free_bytes", 4, U64, false),
    ("GPUStatus", "current_job_id", 5, S, false),
    ("GPUStatus", "current_proof_kind", 6, S, false),
    ("SRSStatus", "circuit_id", 1, S, false),
    ("SRSStatus", "tier", 2, E, false),
    ("SRSStatus", "size_bytes", 3, U64, false),
    ("SRSStatus", "ref_count", 4, U32, false),
    ("QueueStatus", "proof_kind", 1, S, false),
    ("QueueStatus", "pending", 2, U32, false),
    ("QueueStatus", "in_progress", 3, U32, false),
    ("PreloadSrsRequest", "circuit_id", 1, S, false),
    ("PreloadSrsResponse", "already_loaded", 1, BOOL, false),
    ("PreloadSrsResponse", "load_time_ms", 2, U64, false),
    ("EvictSrsRequest", "circuit_id", 1, S, false),
    ("EvictSrsResponse", "was_loaded", 1, BOOL, false),
    ("EvictSrsResponse", "freed_bytes", 2, U64, false),
    ("GetMetricsResponse", "prometheus_text", 1, S, false),
];

/// (enum, value name, number); ours may add values, never change these.
const ENUM_VALUES: &[(&str, &str, i32)] = &[
    ("ProofKind", "PROOF_KIND_UNSPECIFIED", 0),
    ("ProofKind", "POREP_SEAL_COMMIT", 1),
    ("ProofKind", "SNAP_DEALS_UPDATE", 2),
    ("ProofKind", "WINDOW_POST_PARTITION", 3),
    ("ProofKind", "WINNING_POST", 4),
    ("Priority", "PRIORITY_UNSPECIFIED", 0),
    ("Priority", "LOW", 1),
    ("Priority", "NORMAL", 2),
    ("Priority", "HIGH", 3),
    ("Priority", "CRITICAL", 4),
    ("AwaitProofResponse.Status", "UNKNOWN", 0),
    ("AwaitProofResponse.Status", "COMPLETED", 1),
    ("AwaitProofResponse.Status", "FAILED", 2),
    ("AwaitProofResponse.Status", "CANCELLED", 3),
    ("AwaitProofResponse.Status", "TIMEOUT", 4),
    ("SRSStatus.Tier", "HOT", 0),
    ("SRSStatus.Tier", "WARM", 1),
    ("SRSStatus.Tier", "COLD", 2),
];

/// (method, request, response)
const METHODS: &[(&str, &str, &str)] = &[
    ("SubmitProof", "SubmitProofRequest", "SubmitProofResponse"),
    ("AwaitProof", "AwaitProofRequest", "AwaitProofResponse"),
    ("Prove", "ProveRequest", "ProveResponse"),
    ("CancelProof", "CancelProofRequest", "CancelProofResponse"),
    ("GetStatus", "GetStatusRequest", "GetStatusResponse"),
    ("GetMetrics", "GetMetricsRequest", "GetMetricsResponse"),
    ("PreloadSRS", "PreloadSrsRequest", "PreloadSrsResponse"),
    ("EvictSRS", "EvictSrsRequest", "EvictSrsResponse"),
];

#[test]
fn our_schema_has_every_wire_fact_of_curios() {
    let root = concat!(env!("CARGO_MANIFEST_DIR"), "/proto");
    let fds = protox::compile(["cuzk/v1/proving.proto"], [root]).unwrap();
    let file = fds
        .file
        .iter()
        .find(|f| f.name() == "cuzk/v1/proving.proto")
        .unwrap();
    assert_eq!(file.package(), "cuzk.v1");
    assert_eq!(file.syntax(), "proto3");

    let service = &file.service[0];
    assert_eq!(service.name(), "ProvingEngine");
    assert_eq!(service.method.len(), METHODS.len());
    for &(name, input, output) in METHODS {
        let m = service
            .method
            .iter()
            .find(|m| m.name() == name)
            .unwrap_or_else(|| panic!("no method {name}"));
        assert_eq!(m.input_type(), format!(".cuzk.v1.{input}"), "{name}");
        assert_eq!(m.output_type(), format!(".cuzk.v1.{output}"), "{name}");
        assert!(
            !m.client_streaming() && !m.server_streaming(),
            "{name} is unary"
        );
    }

    for &(message, field, number, ty, repeated) in FIELDS {
        let m = file
            .message_type
            .iter()
            .find(|m| m.name() == message)
            .unwrap_or_else(|| panic!("no message {message}"));
        let f = m
            .field
            .iter()
            .find(|f| f.number() == number)
            .unwrap_or_else(|| panic!("{message} has no field {number}"));
        assert_eq!(f.name(), field, "{message} field {number}");
        assert_eq!(f.r#type(), ty, "{message}.{field}");
        assert_eq!(f.label() == Label::Repeated, repeated, "{message}.{field}");
    }
    // No field of ours that Curio's schema lacks (an unknown field is harmless on the wire, but would mean the
    // schemas drifted).
    for m in &file.message_type {
        for f in &m.field {
            assert!(
                FIELDS
                    .iter()
                    .any(|&(msg, _, n, _, _)| msg == m.name() && n == f.number()),
                "{}.{} ({}) is not in Curio's schema",
                m.name(),
                f.name(),
                f.number()
            );
        }
    }

    for &(path, value, number) in ENUM_VALUES {
        let e = match path.split_once('.') {
            None => file.enum_type.iter().find(|e| e.name() == path),
            Some((msg, inner)) => file
                .message_type
                .iter()
                .find(|m| m.name() == msg)
                .and_then(|m| m.enum_type.iter().find(|e| e.name() == inner)),
        }
        .unwrap_or_else(|| panic!("no enum {path}"));
        let v = e
            .value
            .iter()
            .find(|v| v.name() == value)
            .unwrap_or_else(|| panic!("{path} has no {value}"));
        assert_eq!(v.number(), number, "{path}.{value}");
    }
    // Our one extension is far from Curio's values.
    let kinds = file
        .enum_type
        .iter()
        .find(|e| e.name() == "ProofKind")
        .unwrap();
    let ours = kinds
        .value
        .iter()
        .find(|v| v.name() == "CUZK_TEST_CIRCUIT")
        .unwrap();
    assert_eq!(ours.number(), 100);
}
