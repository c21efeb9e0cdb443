// Error reporting across the C ABI: a small struct returned by value, never an abort.
#pragma once
#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <cuda_runtime.h>
#include "cuzk_status.h"

namespace cuzk {

// Work queued before a failure may still be running when the caller, seeing the error, drops the buffers it used.
// cudaFree would wait for it; a pooled buffer is reused at once (device_mem.cuh, ntt.cu's cuzk_free). So every error
// status marks the calling thread's device "unsettled", and the next pooled free on that device first waits for all
// of the device's queued work (once: the mark is taken). Successful paths never pay for it.
constexpr int MAX_SETTLE_DEVICES = 64;

inline std::atomic<uint32_t>* unsettled_devices() {
    static std::atomic<uint32_t> marks[MAX_SETTLE_DEVICES];
    return marks;
}

// Marks every device (a failure whose device is not known, or a host thread unwinding from a panic).
inline void mark_all_unsettled() {
    for (int d = 0; d < MAX_SETTLE_DEVICES; d++) unsettled_devices()[d].store(1);
}

// Marks the calling thread's device.
inline void mark_unsettled() {
    int d = -1;
    if (cudaGetDevice(&d) != cudaSuccess || d < 0 || d >= MAX_SETTLE_DEVICES)
        mark_all_unsettled();
    else
        unsettled_devices()[d].store(1);
}

// Whether `device` was marked since the last call, clearing the mark.
inline bool take_unsettled(int device) {
    return device >= 0 && device < MAX_SETTLE_DEVICES && unsettled_devices()[device].exchange(0) != 0;
}

inline cuzk_status status_ok() {
    cuzk_status s;
    s.code = 0;
    s.message[0] = 0;
    return s;
}

inline cuzk_status status_from(cudaError_t e, const char* what) {
    if (e != cudaSuccess) mark_unsettled();
    cuzk_status s;
    s.code = (int)e;
    snprintf(s.message, sizeof(s.message), "%s: %s (%s)", what, cudaGetErrorString(e), cudaGetErrorName(e));
    return s;
}

inline cuzk_status status_msg(int code, const char* msg) {
    if (code != 0) mark_unsettled();
    cuzk_status s;
    s.code = code;
    snprintf(s.message, sizeof(s.message), "%s", msg);
    return s;
}

// Device milliseconds of the work `launch` queues on the legacy default stream, between two events. `launch` returns
// a cuzk_status (its own failure is returned as is); the events are released on every path.
template <class Launch>
cuzk_status time_on_device(Launch launch, float* ms) {
    cudaEvent_t t0 = nullptr, t1 = nullptr;
    cudaError_t e = cudaEventCreate(&t0);
    if (e == cudaSuccess) e = cudaEventCreate(&t1);
    if (e == cudaSuccess) e = cudaEventRecord(t0);
    cuzk_status s = status_ok();
    if (e == cudaSuccess) s = launch();
    if (e == cudaSuccess && s.code == 0) e = cudaEventRecord(t1);
    if (e == cudaSuccess && s.code == 0) e = cudaEventSynchronize(t1);
    if (e == cudaSuccess && s.code == 0) e = cudaEventElapsedTime(ms, t0, t1);
    if (t0) cudaEventDestroy(t0);
    if (t1) cudaEventDestroy(t1);
    if (s.code != 0) return s;
    return e == cudaSuccess ? status_ok() : status_from(e, "timing with device events");
}

// Throughput of a product-chain kernel: `launch(out, seed, iters, blocks, threads)` queues it on the default stream
// with 8 blocks of 256 threads per SM and a device buffer `out` of `out_bytes` (the kernel's keep-alive store); one
// short warm-up, then one timed launch of `iters` rounds. `*per_second` is products per second, `per_round` products
// per thread per round. The buffer is freed on every path.
template <class Launch>
cuzk_status chain_rate(size_t out_bytes, int iters, double per_round, const char* what, Launch launch,
                       double* per_second) {
    int sms = 0;
    cudaError_t e = cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0);
    if (e != cudaSuccess) return status_from(e, "cudaDeviceGetAttribute");
    void* out = nullptr;
    e = cudaMalloc(&out, out_bytes);
    if (e != cudaSuccess) return status_from(e, what);
    const uint32_t blocks = sms * 8, threads = 256;
    launch(out, 1u, 64, blocks, threads);  // warm-up
    float ms = 0;
    cuzk_status s = time_on_device(
        [&] {
            launch(out, 2u, iters, blocks, threads);
            return status_from(cudaGetLastError(), what);
        },
        &ms);
    cudaFree(out);
    if (s.code != 0) return s;
    *per_second = per_round * blocks * threads * iters / (ms * 1e-3);
    return status_ok();
}

}  // namespace cuzk

// Returns from the enclosing function with a status if a CUDA call fails.
#define CUZK_TRY(call)                                                  \
    do {                                                                \
        cudaError_t e_ = (call);                                        \
        if (e_ != cudaSuccess) return cuzk::status_from(e_, #call);     \
    } while (0)

// Checks the last launch.
#define CUZK_TRY_LAUNCH(what) CUZK_TRY(cudaGetLastError())

// Returns from the enclosing function with a cuzk_status that is not success.
#define CUZK_CHECK(expr)             \
    do {                             \
        cuzk_status s_ = (expr);     \
        if (s_.code != 0) return s_; \
    } while (0)
