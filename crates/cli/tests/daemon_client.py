"""A cuzk daemon client generated here, from crates/rpc/proto, by grpcio-tools: independent of cuzk's own Rust
client, so a daemon that passes this speaks the schema's wire format and not only its own.

Run by crates/cli/tests/daemon.rs against a live daemon. It checks the calls' answers and writes each completed
test-circuit proof with its preimage to --results, for the Rust side to verify with the verifying key.
"""

import argparse
import concurrent.futures
import json
import os
import subprocess
import sys


def generate_stubs(proto_root, out):
    os.makedirs(out, exist_ok=True)
    subprocess.run(
        [sys.executable, "-m", "grpc_tools.protoc", "-I", proto_root, "--python_out", out,
         "--grpc_python_out", out, "cuzk/v1/proving.proto"],
        check=True)
    sys.path.insert(0, out)


def expect_error(call, code, fragment):
    import grpc
    try:
        call()
    except grpc.RpcError as e:
        assert e.code() == code, f"expected {code}, got {e.code()}: {e.details()}"
        assert fragment in e.details(), f"expected {fragment!r} in {e.details()!r}"
        return
    raise AssertionError(f"expected {code}, the call succeeded")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--proto-root", required=True)
    ap.add_argument("--stubs", required=True)
    ap.add_argument("--addr", required=True)
    ap.add_argument("--results", required=True)
    ap.add_argument("--clients", type=int, default=4)
    a = ap.parse_args()
    generate_stubs(a.proto_root, a.stubs)
    import grpc
    from cuzk.v1 import proving_pb2 as pb
    from cuzk.v1 import proving_pb2_grpc as rpc

    # grpc's own address forms match the daemon's: HOST:PORT or unix:PATH. Over a Unix socket grpc-core sends the
    # socket path as :authority, which HTTP/2 servers (hyper's h2 among them) reject; grpc-go sends "localhost".
    options = [("grpc.max_send_message_length", 256 << 20), ("grpc.max_receive_message_length", 256 << 20)]
    if a.addr.startswith("unix:"):
        options.append(("grpc.default_authority", "localhost"))
    channel = grpc.insecure_channel(a.addr, options=options)
    stub = rpc.ProvingEngineStub(channel)

    status = stub.GetStatus(pb.GetStatusRequest(), timeout=30)
    kinds = {q.proof_kind for q in status.queues}
    assert "POREP_SEAL_COMMIT" in kinds, status

    # Concurrent Prove calls, as Curio makes them: one channel, many requests in flight.
    preimage_len = 64 - 9

    def prove(i):
        preimage = bytes((j * 7 + i * 13) % 256 for j in range(preimage_len))
        spec = json.dumps({"circuit": "sha256", "blocks": 1, "preimage": preimage.hex()}).encode()
        req = pb.SubmitProofRequest(
            request_id=f"py-{i}", proof_kind=pb.CUZK_TEST_CIRCUIT, priority=pb.NORMAL, vanilla_proof=spec)
        resp = stub.Prove(pb.ProveRequest(submit=req), timeout=600)
        r = resp.result
        assert r.status == pb.AwaitProofResponse.COMPLETED, (r.status, r.error_message)
        assert len(r.proof) == 192, len(r.proof)
        assert r.total_ms >= r.queue_wait_ms
        return {"job_id": r.job_id, "preimage": preimage.hex(), "proof": r.proof.hex()}

    with concurrent.futures.ThreadPoolExecutor(a.clients) as pool:
        results = list(pool.map(prove, range(a.clients)))

    # Submit + Await, and the request id as an idempotency key.
    first = stub.SubmitProof(pb.SubmitProofRequest(
        request_id="py-0", proof_kind=pb.CUZK_TEST_CIRCUIT, vanilla_proof=b'{"circuit":"sha256","blocks":1}'))
    assert first.job_id == results[0]["job_id"], (first.job_id, results[0]["job_id"])
    done = stub.AwaitProof(pb.AwaitProofRequest(job_id=first.job_id, timeout_ms=5000))
    assert done.status == pb.AwaitProofResponse.COMPLETED and done.proof.hex() == results[0]["proof"]

    # Bad inputs, each with its precise status.
    expect_error(lambda: stub.SubmitProof(pb.SubmitProofRequest(proof_kind=pb.WINDOW_POST_PARTITION)),
                 grpc.StatusCode.INVALID_ARGUMENT, "WINDOW_POST_PARTITION")
    expect_error(lambda: stub.SubmitProof(pb.SubmitProofRequest(proof_kind=pb.PROOF_KIND_UNSPECIFIED)),
                 grpc.StatusCode.INVALID_ARGUMENT, "not supported")
    expect_error(lambda: stub.SubmitProof(pb.SubmitProofRequest(
        proof_kind=pb.POREP_SEAL_COMMIT, vanilla_proof=b"\x00garbage", miner_id=1000, sector_number=1)),
                 grpc.StatusCode.INVALID_ARGUMENT, "not a C1 output")
    expect_error(lambda: stub.SubmitProof(pb.SubmitProofRequest(
        proof_kind=pb.CUZK_TEST_CIRCUIT, vanilla_proof=b'{"circuit":"sha256","blocks":1}', priority=9)),
                 grpc.StatusCode.INVALID_ARGUMENT, "unknown priority")
    # Bytes that are not a SubmitProofRequest at all (a length-delimited field running past the end).
    raw = channel.unary_unary("/cuzk.v1.ProvingEngine/SubmitProof",
                              request_serializer=lambda b: b, response_deserializer=lambda b: b)
    expect_error(lambda: raw(b"\x0a\xff\xff\xff\x0f\x00"), grpc.StatusCode.INTERNAL, "decode")
    expect_error(lambda: stub.AwaitProof(pb.AwaitProofRequest(job_id="nope")), grpc.StatusCode.NOT_FOUND, "nope")
    expect_error(lambda: stub.CancelProof(pb.CancelProofRequest(job_id="nope")), grpc.StatusCode.NOT_FOUND, "nope")
    expect_error(lambda: stub.PreloadSRS(pb.PreloadSrsRequest(circuit_id="snap-32g")),
                 grpc.StatusCode.INVALID_ARGUMENT, "unknown circuit id")

    # Status, metrics and the parameter-set calls.
    status = stub.GetStatus(pb.GetStatusRequest())
    assert status.total_proofs_completed >= a.clients, status
    assert any(s.circuit_id == "sha256-b1" and s.tier == pb.SRSStatus.HOT for s in status.loaded_srs), status
    metrics = stub.GetMetrics(pb.GetMetricsRequest()).prometheus_text
    assert "# TYPE cuzk_jobs_completed_total counter" in metrics, metrics
    pre = stub.PreloadSRS(pb.PreloadSrsRequest(circuit_id="sha256-b1"))
    assert pre.already_loaded
    ev = stub.EvictSRS(pb.EvictSrsRequest(circuit_id="sha256-b1"))
    assert ev.was_loaded and ev.freed_bytes > 0, ev

    with open(a.results, "w") as f:
        json.dump(results, f)
    print(f"python client: {len(results)} proofs, every call answered as the schema says")


if __name__ == "__main__":
    main()
