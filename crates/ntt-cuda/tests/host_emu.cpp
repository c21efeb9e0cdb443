// The scalar-field operations of fr_test_ops.cuh run on the host (cuda-build's host_emu.h), for
// tests/host_emulation.rs. Reads from stdin an operation number (int32), a count n (uint64), then n a's and n b's
// (32 raw bytes each, the device's layout); writes the n results to stdout, raw.
#define CUZK_HOST_EMU
#include "host_emu.h"

#include <cstdio>
#include <vector>

#include "fr.cuh"
#include "fr_test_ops.cuh"

int main() {
    int32_t op = 0;
    uint64_t n = 0;
    if (std::fread(&op, sizeof op, 1, stdin) != 1 || std::fread(&n, sizeof n, 1, stdin) != 1) {
        std::fprintf(stderr, "host_emu: expected an operation and a count on stdin\n");
        return 2;
    }
    std::vector<cuzk::fr_t> a(n), b(n), out(n);
    if (std::fread(a.data(), sizeof(cuzk::fr_t), n, stdin) != n ||
        std::fread(b.data(), sizeof(cuzk::fr_t), n, stdin) != n) {
        std::fprintf(stderr, "host_emu: expected %llu pairs of scalars on stdin\n", (unsigned long long)n);
        return 2;
    }
    for (uint64_t i = 0; i < n; i++) out[i] = cuzk::fr_test_op(op, a[i], b[i], i);
    if (std::fwrite(out.data(), sizeof(cuzk::fr_t), n, stdout) != n) return 3;
    return 0;
}
