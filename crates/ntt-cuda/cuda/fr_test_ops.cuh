// The field operations the tests run elementwise (ntt-cuda's FrOp, by number): on the device in ntt.cu's
// fr_test_kernel, and on the host in ntt-cuda's tests/host_emu.cpp (cuda-build's host_emu.h), both against blstrs.
#pragma once
#include "fr.cuh"

namespace cuzk {

// A lazy result (below 2p) checked and reduced: all ones, which no reduced scalar is, when it is not below 2p.
__device__ __forceinline__ fr_t settle_2p(const fr_t& x) {
    const fr_t r = mont_reduce_once<Fr2pModulus>(x);
    bool below = true;
#pragma unroll
    for (int i = 0; i < 8; i++) below = below && r.l[i] == x.l[i];
    fr_t bad;
#pragma unroll
    for (int i = 0; i < 8; i++) bad.l[i] = 0xffffffffu;
    return below ? mont_reduce_once<FrModulus>(x) : bad;
}

// Operation `op` (ntt-cuda's FrOp, by number) on a and b, element i of its launch.
__device__ __forceinline__ fr_t fr_test_op(int op, const fr_t& a, const fr_t& b, size_t i) {
    // The lazy operations (11-14) take a lifted by p at odd i and b lifted at i = 2, 3 mod 4, so that every pair of
    // halves of the lazy range meets (the product's twiddle operand b is never lifted: below p, as in the NTT).
    const fr_t la = (i & 1) ? mont_lift<FrModulus>(a) : a, lb = (i & 2) ? mont_lift<FrModulus>(b) : b;
    switch (op) {
        case 11: return settle_2p(mont_mul_f64<FrModulus, false>(la, b));
        case 12: return settle_2p(mont_add<Fr2pModulus, true>(la, lb));  // the passes' forms (ntt_pass.cuh, pass_add)
        case 13: return settle_2p(mont_sub<Fr2pModulus, true>(la, lb));
        case 14: return mont_div_pow2<FrModulus>(la, (uint32_t)(i % 32) + 1);  // k = 1..32 by index
        case 0: return fr_add(a, b);
        case 1: return fr_sub(a, b);
        case 2: return fr_mul(a, b);
        case 3: return fr_sqr(a);
        case 4: return fr_inv(a);
        case 5: return fr_pow(a, b.l);
        case 7: return mont_mul_fold<FrModulus>(a, b);
        case 8: return mont_mul_ul<FrModulus>(a, b);
        case 9: return mont_mul_f64<FrModulus>(a, b);
        case 10: return mont_mul<FrModulus>(a, b);
        default: return fr_neg(a);
    }
}

}  // namespace cuzk
