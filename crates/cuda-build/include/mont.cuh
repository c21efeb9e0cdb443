// Montgomery arithmetic over N 32-bit limbs, written once for both BLS12-381 fields (fr.cuh: N = 8, fp.cuh: N = 12).
//
// A modulus is a traits type M with: `using T` (a struct holding `uint32_t l[N]`, little-endian), `N`, `INV`
// (-p^-1 mod 2^32) and `p(i)` (limb i of p, from constant memory). Values are always fully reduced (< p).
// The moduli leave at least one spare top bit (p < 2^(32N-1)), so a sum of two values never overflows N limbs.
#pragma once
#include <cstdint>

namespace cuzk {

template <class M>
__device__ __forceinline__ typename M::T mont_zero() {
    typename M::T r;
#pragma unroll
    for (int i = 0; i < M::N; i++) r.l[i] = 0;
    return r;
}

template <class M>
__device__ __forceinline__ bool mont_is_zero(const typename M::T& a) {
    uint32_t acc = 0;
#pragma unroll
    for (int i = 0; i < M::N; i++) acc |= a.l[i];
    return acc == 0;
}

// Carry chains. Each step is its own `asm volatile`, so LLVM keeps them in order, and ptxas, which tracks the carry
// flag, lowers each to one IADD3.X. (A chain of mad.lo.cc/madc.hi.cc does not lower that well on sm_90: ptxas splits
// each into a multiply and a carried add and saves carries to registers; 752 SASS instructions per scalar-field
// product against 472 for the form below, read from `cuobjdump -sass`.)
#define CUZK_CARRY_OP(NAME, PTX)                                                  \
    __device__ __forceinline__ uint32_t NAME(uint32_t a, uint32_t b) {            \
        uint32_t r;                                                               \
        asm volatile(PTX " %0, %1, %2;" : "=r"(r) : "r"(a), "r"(b));              \
        return r;                                                                 \
    }
CUZK_CARRY_OP(add_cc, "add.cc.u32")    // a + b, carry out
CUZK_CARRY_OP(addc_cc, "addc.cc.u32")  // a + b + carry, carry out
CUZK_CARRY_OP(addc, "addc.u32")        // a + b + carry
CUZK_CARRY_OP(sub_cc, "sub.cc.u32")    // a - b, borrow out
CUZK_CARRY_OP(subc_cc, "subc.cc.u32")  // a - b - borrow, borrow out
CUZK_CARRY_OP(subc, "subc.u32")        // a - b - borrow
#undef CUZK_CARRY_OP

// t - p if t >= p, else t (for t < 2p). `hi` is a word above t (0 when t fits N words).
template <class M>
__device__ __forceinline__ typename M::T mont_reduce_once(const typename M::T& t, uint32_t hi = 0) {
    constexpr int N = M::N;
    typename M::T s;
    s.l[0] = sub_cc(t.l[0], M::p(0));
#pragma unroll
    for (int i = 1; i < N; i++) s.l[i] = subc_cc(t.l[i], M::p(i));
    const uint32_t borrow = subc(hi, 0);  // all ones when t < p
    typename M::T r;
#pragma unroll
    for (int i = 0; i < N; i++) r.l[i] = borrow ? t.l[i] : s.l[i];
    return r;
}

template <class M>
__device__ __forceinline__ typename M::T mont_add(const typename M::T& a, const typename M::T& b) {
    constexpr int N = M::N;
    typename M::T t;
    t.l[0] = add_cc(a.l[0], b.l[0]);
#pragma unroll
    for (int i = 1; i < N; i++) t.l[i] = addc_cc(a.l[i], b.l[i]);
    const uint32_t hi = addc(0, 0);  // 0: the moduli leave a spare top bit, but keeps the form general
    return mont_reduce_once<M>(t, hi);
}

template <class M>
__device__ __forceinline__ typename M::T mont_sub(const typename M::T& a, const typename M::T& b) {
    constexpr int N = M::N;
    typename M::T t;
    t.l[0] = sub_cc(a.l[0], b.l[0]);
#pragma unroll
    for (int i = 1; i < N; i++) t.l[i] = subc_cc(a.l[i], b.l[i]);
    const uint32_t mask = subc(0, 0);  // all ones when a < b: add p back
    t.l[0] = add_cc(t.l[0], M::p(0) & mask);
#pragma unroll
    for (int i = 1; i < N; i++) t.l[i] = addc_cc(t.l[i], M::p(i) & mask);
    return t;
}

// Montgomery product a * b * 2^(-32N) mod p: CIOS over 32-bit words. Each word product is one 64-bit multiply
// (IMAD.WIDE.U32); its low and high halves are added in by four carry chains per row, the last one shifting t down a
// word. Bounds: t < 2p at the top of each row, so t + a * b_i and t + m * p fit N + 1 words (p < 2^(32N - 1)).
// Both fields' products use it (fr_mul, fp_mul). Against the plain C form over 64-bit intermediates it replaced (which
// nvcc lowers to IMAD.WIDE plus 64-bit adds, a serial chain through every word): 552 -> 464 SASS instructions per
// scalar-field product, 19.6k -> 16.6k in the G1 bucket accumulation, whose time at 2^24 fell 242 -> 217 ms once its
// registers were capped at 168 (uncapped it takes 220 and runs two blocks per SM: 290 ms; H200, 2026-12-01).
template <class M>
__device__ __forceinline__ typename M::T mont_mul(const typename M::T& a, const typename M::T& b) {
    constexpr int N = M::N;
    uint32_t t[N + 1];
#pragma unroll
    for (int i = 0; i < N + 1; i++) t[i] = 0;
#pragma unroll
    for (int i = 0; i < N; i++) {
        uint32_t lo[N], hi[N];
#pragma unroll
        for (int j = 0; j < N; j++) {
            const uint64_t p = (uint64_t)a.l[j] * b.l[i];
            lo[j] = (uint32_t)p;
            hi[j] = (uint32_t)(p >> 32);
        }
        t[0] = add_cc(t[0], lo[0]);
#pragma unroll
        for (int j = 1; j < N; j++) t[j] = addc_cc(t[j], lo[j]);
        t[N] = addc(0, 0);
        t[1] = add_cc(t[1], hi[0]);
#pragma unroll
        for (int j = 2; j < N; j++) t[j] = addc_cc(t[j], hi[j - 1]);
        t[N] = addc(t[N], hi[N - 1]);
        const uint32_t m = t[0] * M::INV;
#pragma unroll
        for (int j = 0; j < N; j++) {
            const uint64_t p = (uint64_t)m * M::p(j);
            lo[j] = (uint32_t)p;
            hi[j] = (uint32_t)(p >> 32);
        }
        t[0] = add_cc(t[0], lo[0]);  // 0 by the choice of m; only its carry matters
#pragma unroll
        for (int j = 1; j < N; j++) t[j] = addc_cc(t[j], lo[j]);
        t[N] = addc(t[N], 0);
        t[0] = add_cc(t[1], hi[0]);
#pragma unroll
        for (int j = 1; j < N - 1; j++) t[j] = addc_cc(t[j + 1], hi[j]);
        t[N - 1] = addc(t[N], hi[N - 1]);
        t[N] = 0;
    }
    typename M::T r;
#pragma unroll
    for (int i = 0; i < N; i++) r.l[i] = t[i];
    return mont_reduce_once<M>(r);
}

// The same product with each word product's addend folded into the multiply: a_j * b_i + t_j and m * p_j + t_j are
// single 64-bit multiply-adds (IMAD.WIDE.U32 cannot overflow with a 32-bit addend), leaving one carry chain per
// half-row where mont_mul has two: fewer integer adds (the ALU pipe, which bounds the NTT), more moves. The NTT's
// butterflies use it (62.1 against 63.5 ms at 2^27; ntt.cu, CUZK_NTT_MUL).
template <class M>
__device__ __forceinline__ typename M::T mont_mul_fold(const typename M::T& a, const typename M::T& b) {
    constexpr int N = M::N;
    uint32_t t[N + 1];
#pragma unroll
    for (int i = 0; i < N + 1; i++) t[i] = 0;
#pragma unroll
    for (int i = 0; i < N; i++) {
        uint32_t lo[N], hi[N];
#pragma unroll
        for (int j = 0; j < N; j++) {
            const uint64_t p = (uint64_t)a.l[j] * b.l[i] + t[j];
            lo[j] = (uint32_t)p;
            hi[j] = (uint32_t)(p >> 32);
        }
        t[0] = lo[0];
        t[1] = add_cc(lo[1], hi[0]);
#pragma unroll
        for (int j = 2; j < N; j++) t[j] = addc_cc(lo[j], hi[j - 1]);
        t[N] = addc(hi[N - 1], 0);
        const uint32_t m = t[0] * M::INV;
#pragma unroll
        for (int j = 0; j < N; j++) {
            const uint64_t p = (uint64_t)m * M::p(j) + t[j];
            lo[j] = (uint32_t)p;
            hi[j] = (uint32_t)(p >> 32);
        }
        // lo[0] is 0 by the choice of m; hi[0] carries on.
        t[0] = add_cc(lo[1], hi[0]);
#pragma unroll
        for (int j = 2; j < N; j++) t[j - 1] = addc_cc(lo[j], hi[j - 1]);
        t[N - 1] = addc(t[N], hi[N - 1]);
        t[N] = 0;
    }
    typename M::T r;
#pragma unroll
    for (int i = 0; i < N; i++) r.l[i] = t[i];
    return mont_reduce_once<M>(r);
}

// a^e for an exponent given as little-endian 32-bit words (a plain integer, not Montgomery): square and multiply.
template <class M, int WORDS>
__device__ __forceinline__ typename M::T mont_pow(const typename M::T& a, const uint32_t* e, const typename M::T& one) {
    typename M::T r = one;
    for (int w = WORDS - 1; w >= 0; w--) {
        for (int b = 31; b >= 0; b--) {
            r = M::mul(r, r);
            if ((e[w] >> b) & 1) r = M::mul(r, a);
        }
    }
    return r;
}

}  // namespace cuzk
