// Device memory shared by the kernel libraries: the calling thread's device's default memory pool, which the
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

namespace cuzk {

// The calling thread's device's default pool, or nullptr where the device has none (cudaErrorNotSupported).
inline cudaMemPool_t default_pool() {
    int device = 0;
    cudaMemPool_t pool = nullptr;
    if (cudaGetDevice(&device) != cudaSuccess || cudaDeviceGetDefaultMemPool(&pool, device) != cudaSuccess) {
        cudaGetLastError();
        return nullptr;
    }
    return pool;
}

// Bytes the pool holds mapped but unallocated: free for any new buffer once trimmed.
inline size_t pool_idle_bytes() {
    cudaMemPool_t pool = default_pool();
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
    cudaMemPool_t pool = default_pool();
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
