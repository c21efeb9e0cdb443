// The base-field and curve operations of field_test_ops.cuh run on the host (cuda-build's host_emu.h), for
// tests/host_emulation.rs. Reads from stdin a kind (int32: 1 Fp, 2 Fp2, 3 G1, 4 G2), an operation number (int32), a
// count n (uint64), then n a's and n b's in the device's layout (field elements, or affine points); writes the n
// results (field elements, or Jacobian points) to stdout, raw.
#define CUZK_HOST_EMU
#include "host_emu.h"

#include <cstdio>
#include <vector>

#include "field_test_ops.cuh"

using namespace cuzk;

template <class In, class Out, class Op>
int run(uint64_t n, Op op) {
    std::vector<In> a(n), b(n);
    std::vector<Out> out(n);
    if (std::fread(a.data(), sizeof(In), n, stdin) != n || std::fread(b.data(), sizeof(In), n, stdin) != n) {
        std::fprintf(stderr, "host_emu: expected %llu pairs of inputs on stdin\n", (unsigned long long)n);
        return 2;
    }
    for (uint64_t i = 0; i < n; i++) out[i] = op(a[i], b[i], i);
    return std::fwrite(out.data(), sizeof(Out), n, stdout) == n ? 0 : 3;
}

int main() {
    int32_t kind = 0, op = 0;
    uint64_t n = 0;
    if (std::fread(&kind, sizeof kind, 1, stdin) != 1 || std::fread(&op, sizeof op, 1, stdin) != 1 ||
        std::fread(&n, sizeof n, 1, stdin) != 1) {
        std::fprintf(stderr, "host_emu: expected a kind, an operation and a count on stdin\n");
        return 2;
    }
    switch (kind) {
        case 1: return run<fp_t, fp_t>(n, [op](auto& a, auto& b, uint64_t) { return field_test_op<Fp>(op, a, b); });
        case 2: return run<fp2_t, fp2_t>(n, [op](auto& a, auto& b, uint64_t) { return field_test_op<Fp2>(op, a, b); });
        case 3:
            return run<affine_t<Fp>, jacobian_t<Fp>>(
                n, [op](auto& a, auto& b, uint64_t i) { return curve_test_op<Fp>(op, a, b, i); });
        case 4:
            return run<affine_t<Fp2>, jacobian_t<Fp2>>(
                n, [op](auto& a, auto& b, uint64_t i) { return curve_test_op<Fp2>(op, a, b, i); });
        default: std::fprintf(stderr, "host_emu: unknown kind %d\n", kind); return 2;
    }
}
