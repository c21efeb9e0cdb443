// Error reporting across the C ABI: a small struct returned by value, never an abort.
#pragma once
#include <cstdio>
#include <cstring>
#include <cuda_runtime.h>
#include "cuzk_status.h"

namespace cuzk {

inline cuzk_status status_ok() {
    cuzk_status s;
    s.code = 0;
    s.message[0] = 0;
    return s;
}

inline cuzk_status status_from(cudaError_t e, const char* what) {
    cuzk_status s;
    s.code = (int)e;
    snprintf(s.message, sizeof(s.message), "%s: %s (%s)", what, cudaGetErrorString(e), cudaGetErrorName(e));
    return s;
}

inline cuzk_status status_msg(int code, const char* msg) {
    cuzk_status s;
    s.code = code;
    snprintf(s.message, sizeof(s.message), "%s", msg);
    return s;
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
