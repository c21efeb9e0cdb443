// Streams of the kernel libraries, with the priority switch CUZK_STREAM_PRIORITY (an A/B switch for two prover lanes
// on one GPU, whose kernels compete for the SMs): `msm` gives the MSM scratch's stream the device's greatest priority,
// `ntt` gives it to ntt-cuda's streams (the H polynomial, uploads, the sparse products); unset, every stream has the
// default priority. Other roles (the MSM scratch's copy stream, "msm-copy") always have the default priority. The block scheduler dispatches a higher-priority stream's pending blocks first.
#pragma once
#include <cuda_runtime.h>

#include "env_switch.cuh"

namespace cuzk {

// A non-blocking stream for `role` ("msm" or "ntt"), at the greatest priority when CUZK_STREAM_PRIORITY names it.
inline cudaError_t stream_create(cudaStream_t* s, const char* role) {
    static const int first = env_word("CUZK_STREAM_PRIORITY", {"msm", "ntt"});  // read (and checked) once
    int priority = 0;
    if (first >= 0 && !strcmp(role, first == 0 ? "msm" : "ntt")) {
        int least = 0, greatest = 0;
        const cudaError_t e = cudaDeviceGetStreamPriorityRange(&least, &greatest);
        if (e != cudaSuccess) return e;
        priority = greatest;
    }
    return cudaStreamCreateWithPriority(s, cudaStreamNonBlocking, priority);
}

}  // namespace cuzk
