// Device set-up that must run once per device, not once per process: kernel attributes such as a raised dynamic
// shared-memory limit belong to the current device's context, so a process that drives several GPUs sets them on
// each one.
#pragma once
#include <cuda_runtime.h>
#include <atomic>
#include <cstdint>

namespace cuzk {

// Runs `set_up` (returning cudaError_t) on the calling thread's current device unless it already succeeded there,
// as recorded in `done` (one bit per device; the caller keeps it static, one mask per piece of set-up). A failure is
// returned and retried on the next call. Devices past the 64th run it on every call. Two threads may both run it on
// one device the first time; set-up that is idempotent, as cudaFuncSetAttribute is, does not mind.
template <class SetUp>
inline cudaError_t once_per_device(std::atomic<uint64_t>& done, SetUp&& set_up) {
    int dev = 0;
    cudaError_t err = cudaGetDevice(&dev);
    if (err != cudaSuccess) return err;
    const uint64_t bit = dev < 64 ? 1ull << dev : 0;
    if (bit && (done.load() & bit)) return cudaSuccess;
    err = set_up();
    if (err == cudaSuccess) done.fetch_or(bit);
    return err;
}

}  // namespace cuzk
