// Device memory shared by the kernel libraries: cuzk's own memory pool on the calling thread's device, which the
// per-proof buffers come from (ntt.cu's cuzk_malloc), and what every other allocation does when the card is full.
//
// Why a pool: cudaFree waits for all the work queued on the device, every stream's. Measured on the H200
// (2026-12-03): freeing 4 GiB took 2.3 ms on an idle card and 378-429 ms while another stream had 0.4 s of work
// queued, so with two prover lanes on one GPU each lane's frees waited for the other lane's transforms and MSMs.
// cudaFreeAsync returns in 0.02 ms; with the pool's release threshold at its maximum the memory stays mapped and
// the next proof's buffers of the same sizes are served at once.
//
// The memory the pool holds unused counts as free for every budget (pool_idle_bytes), and is given back
// (pool_trim) before an allocation outside the pool reports that the card is full.
#pragma once
#include <cuda_runtime.h>
#include <cstdint>
#include <map>
#include <mutex>

namespace cuzk {

// cuzk's own pool on `device` (cudaMemPoolCreate), made on first use with its release threshold at its maximum so
// that freed memory stays mapped; nullptr where the device has no memory pools. Its own, not the device's default
// pool: keeping freed memory is cuzk's choice, and other CUDA code in the process that allocates from the default
// pool keeps the default behaviour (until 2026-12-03 cuzk set the default pool's threshold). One registry for the
// whole process: this inline function's statics are shared by every library that includes the header.
inline cudaMemPool_t own_pool(int device) {
    static std::mutex m;
    // Never destroyed: frees may run during the process's exit.
    static std::map<int, cudaMemPool_t>* pools = new std::map<int, cudaMemPool_t>();
    std::lock_guard<std::mutex> lock(m);
    auto it = pools->find(device);
    if (it != pools->end()) return it->second;
    cudaMemPool_t pool = nullptr;
    int supported = 0;
    if (cudaDeviceGetAttribute(&supported, cudaDevAttrMemoryPoolsSupported, device) == cudaSuccess && supported) {
        cudaMemPoolProps props = {};
        props.allocType = cudaMemAllocationTypePinned;
        props.handleTypes = cudaMemHandleTypeNone;
        props.location.type = cudaMemLocationTypeDevice;
        props.location.id = device;
        uint64_t keep = UINT64_MAX;
        if (cudaMemPoolCreate(&pool, &props) != cudaSuccess) {
            pool = nullptr;
        } else if (cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &keep) != cudaSuccess) {
            cudaMemPoolDestroy(pool);
            pool = nullptr;
        }
    }
    cudaGetLastError();
    (*pools)[device] = pool;
    return pool;
}

// The calling thread's device's pool (own_pool), or nullptr.
inline cudaMemPool_t current_pool() {
    int device = 0;
    if (cudaGetDevice(&device) != cudaSuccess) {
        cudaGetLastError();
        return nullptr;
    }
    return own_pool(device);
}

// Stream-ordered scratch from the calling thread's device's pool (cudaMallocAsync where there is none); freed with
// cudaFreeAsync, which returns it to whichever pool it came from.
inline cudaError_t pool_malloc_async(void** p, size_t bytes, cudaStream_t stream) {
    cudaMemPool_t pool = current_pool();
    return pool ? cudaMallocFromPoolAsync(p, bytes, pool, stream) : cudaMallocAsync(p, bytes, stream);
}

// Bytes the pool holds mapped but unallocated: free for any new buffer once trimmed.
inline size_t pool_idle_bytes() {
    cudaMemPool_t pool = current_pool();
    if (!pool) return 0;
    uint64_t reserved = 0, used = 0;
    if (cudaMemPoolGetAttribute(pool, cudaMemPoolAttrReservedMemCurrent, &reserved) != cudaSuccess ||
        cudaMemPoolGetAttribute(pool, cudaMemPoolAttrUsedMemCurrent, &used) != cudaSuccess) {
        cudaGetLastError();
        return 0;
    }
    return reserved > used ? (size_t)(reserved - used) : 0;
}

// Gives the pool's unused memory back to the device.
inline void pool_trim() {
    cudaMemPool_t pool = current_pool();
    if (pool && cudaMemPoolTrimTo(pool, 0) != cudaSuccess) cudaGetLastError();
}

// cudaMemGetInfo, with the pool's unused memory counted as free.
inline cudaError_t mem_get_info(size_t* free_b, size_t* total_b) {
    cudaError_t e = cudaMemGetInfo(free_b, total_b);
    if (e == cudaSuccess) *free_b += pool_idle_bytes();
    return e;
}

// cudaMalloc; when the card is full, once more after the pool has given its unused memory back.
inline cudaError_t malloc_or_trim(void** p, size_t bytes) {
    cudaError_t e = cudaMalloc(p, bytes);
    if (e == cudaErrorMemoryAllocation) {
        cudaGetLastError();
        pool_trim();
        e = cudaMalloc(p, bytes);
    }
    return e;
}

}  // namespace cuzk
