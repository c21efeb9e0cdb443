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
// The scalar field's product (fr_mul); the base field's was this until mont_mul_ul below. Against the plain C form over 64-bit intermediates it replaced (which
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
// butterflies used it (62.1 against 63.5 ms at 2^27) until mont_mul_ul below (58.5 ms; ntt.cu, CUZK_NTT_MUL).
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

// The same product over unsaturated limbs: both operands are cut into L = M::UL_L limbs of B = M::UL_B bits (the
// top one takes the rest), and each limb accumulates its word products whole in 64 bits (one IMAD.WIDE.U32 each, no
// carries: a limb's position gathers at most 2L products below 2^(2B), 2L * 2^(2B) < 2^63). Row i adds a * b_i and
// m_i * p, m_i = t_0 * (-p^-1) mod 2^B, then carries t_0's top bits into t_1 and shifts a limb down; the last row's
// digit has 32N - B(L-1) bits (24 for fr, 20 for fp), so the digits clear exactly 32N bits and the result is mont_mul's,
// bit for bit (R = 2^(32N), fully reduced) with no change of representation. The sum T ends below 2p * 2^(last digit)
// and is packed back to N words from that bit. L^2 + L^2 word products against mont_mul's 2N^2 (162 against 128 for
// fr), but about a quarter of its integer adds: 344 SASS instructions per fr product against 464 (fold: 496). Two
// independent chains per thread on the H200 (2026-12-01): fr 47.7e9 products/s against 41.8e9 (mont_mul) and 45.3e9
// (fold); fp 19.2e9 against 18.3e9 and 17.3e9. The wide multiply pipe bounds it, where the adds bound mont_mul, so
// inside kernels with other integer work it gains more: 14-15 % on the G1 MSM as the base field's product (fp.cuh).
// `m` goes through an empty asm so the compiler keeps it a 32-bit value: otherwise it widens m * p_j to a 64-bit
// product and adds zero high words (about 100 extra instructions per fp product).
template <class M>
__device__ __forceinline__ void ul_split(const typename M::T& w, uint32_t (&x)[M::UL_L]) {
    constexpr int N = M::N, L = M::UL_L, B = M::UL_B;
    constexpr uint32_t MASK = (1u << B) - 1;
#pragma unroll
    for (int k = 0; k < L; k++) {
        const int bit = B * k, wi = bit / 32, s = bit % 32;
        const uint32_t hi = wi + 1 < N ? w.l[wi + 1] : 0;
        const uint32_t v = s == 0 ? w.l[wi] : __funnelshift_r(w.l[wi], hi, s);
        x[k] = k == L - 1 ? v : (v & MASK);
    }
}

template <class M>
__device__ __forceinline__ typename M::T mont_mul_ul(const typename M::T& av, const typename M::T& bv) {
    constexpr int N = M::N, L = M::UL_L, B = M::UL_B, LAST = 32 * N - B * (L - 1);
    static_assert(LAST > 0 && LAST <= B, "UL_L limbs of UL_B bits must cover the N words with a last digit of 1..B bits");
    static_assert(B < 32 && 2 * L + 1 <= (1ull << (64 - 2 * B)), "2L products of 2B bits and a carry must fit 64 bits");
    constexpr uint32_t MASK = (1u << B) - 1, LAST_MASK = (1u << LAST) - 1;
    uint32_t a[L], b[L];
    ul_split<M>(av, a);
    ul_split<M>(bv, b);
    uint64_t t[L];
#pragma unroll
    for (int i = 0; i < L; i++) {
#pragma unroll
        for (int j = 0; j < L; j++) {
            // Limb L-1 was shifted in empty (and all are empty in row 0): a product, not a multiply-add.
            if (i == 0 || j == L - 1)
                t[j] = (uint64_t)a[j] * b[i];
            else
                t[j] += (uint64_t)a[j] * b[i];
        }
        uint32_t m = ((uint32_t)t[0] * M::INV) & (i == L - 1 ? LAST_MASK : MASK);
        asm("" : "+r"(m));
#pragma unroll
        for (int j = 0; j < L; j++) t[j] += (uint64_t)m * M::ul_p(j);
        if (i < L - 1) {
            const uint64_t c = t[0] >> B;  // t_0's low B bits are 0 by the choice of m
#pragma unroll
            for (int j = 0; j < L - 1; j++) t[j] = t[j + 1];
            t[0] += c;
        }
    }
    // Normalise to B-bit limbs (the top one keeps the rest, 64 bits), then take N words from bit LAST.
    uint32_t n[L - 1];
#pragma unroll
    for (int j = 0; j < L - 1; j++) {
        t[j + 1] += t[j] >> B;
        n[j] = (uint32_t)t[j] & MASK;
    }
    typename M::T r;
#pragma unroll
    for (int i = 0; i < N; i++) {
        const int base = 32 * i + LAST;
        uint32_t acc = 0;
#pragma unroll
        for (int k = 0; k < L - 1; k++) {
            const int lo = B * k - base;
            if (lo >= 32 || lo + B <= 0) continue;
            acc |= lo >= 0 ? (n[k] << lo) : (n[k] >> (-lo));
        }
        const int lo = B * (L - 1) - base;
        if (lo < 32 && lo > -64) acc |= lo >= 0 ? (uint32_t)(t[L - 1] << lo) : (uint32_t)(t[L - 1] >> (-lo));
        r.l[i] = acc;
    }
    return mont_reduce_once<M>(r);
}

// Montgomery square a^2 * 2^(-32N) mod p, cheaper than mont_mul(a, a): the N(N-1)/2 cross products a_i a_j (i < j)
// are summed once and doubled, the N squares a_i^2 added, and the 2N-word square reduced word by word (separated
// operand scanning): N(N+1)/2 + N^2 word products where mont_mul takes 2N^2 (222 against 288 for the base field).
// Bounds: after cross-product row i the sum is below 2^(32(N+i+1)), so each row's carries stop at word i+N; the
// square is below p^2 < 2^(64N-2); in the reduction the running window u (N+1 words) stays below 2^(32N) + p, and
// ends below 2p (p < 2^(32N-1)), so the last word is 0 and one conditional subtraction finishes.
template <class M>
__device__ __forceinline__ typename M::T mont_sqr(const typename M::T& a) {
    constexpr int N = M::N;
    uint32_t t[2 * N];
#pragma unroll
    for (int i = 0; i < 2 * N; i++) t[i] = 0;
    // Cross products: row i adds a_i a_j (j > i) at word i + j.
#pragma unroll
    for (int i = 0; i < N - 1; i++) {
        uint32_t lo[N], hi[N];
#pragma unroll
        for (int j = i + 1; j < N; j++) {
            const uint64_t p = (uint64_t)a.l[i] * a.l[j];
            lo[j] = (uint32_t)p;
            hi[j] = (uint32_t)(p >> 32);
        }
        t[2 * i + 1] = add_cc(t[2 * i + 1], lo[i + 1]);
#pragma unroll
        for (int j = i + 2; j < N; j++) t[i + j] = addc_cc(t[i + j], lo[j]);
        t[i + N] = addc(0, 0);  // word i + N was 0 (the bound above)
        if (i == N - 2) {
            t[2 * i + 2] += hi[i + 1];  // one product: word 2i + 2 is word i + N
        } else {
            t[2 * i + 2] = add_cc(t[2 * i + 2], hi[i + 1]);
#pragma unroll
            for (int j = i + 2; j < N - 1; j++) t[i + j + 1] = addc_cc(t[i + j + 1], hi[j]);
            t[i + N] = addc(t[i + N], hi[N - 1]);
        }
    }
    // Doubled (the top bit of the cross sum is 0), then the squares a_i^2 at words 2i, 2i + 1.
#pragma unroll
    for (int k = 2 * N - 1; k > 0; k--) t[k] = __funnelshift_l(t[k - 1], t[k], 1);
    t[0] = 0;  // no cross product lands at word 0
    {
        uint32_t sq[2 * N];
#pragma unroll
        for (int i = 0; i < N; i++) {
            const uint64_t p = (uint64_t)a.l[i] * a.l[i];
            sq[2 * i] = (uint32_t)p;
            sq[2 * i + 1] = (uint32_t)(p >> 32);
        }
        t[0] = sq[0];
        t[1] = add_cc(t[1], sq[1]);
#pragma unroll
        for (int k = 2; k < 2 * N - 1; k++) t[k] = addc_cc(t[k], sq[k]);
        t[2 * N - 1] = addc(t[2 * N - 1], sq[2 * N - 1]);
    }
    // Reduction: u holds words i .. i + N of the running sum; each row clears word i and shifts.
    uint32_t u[N + 1];
#pragma unroll
    for (int j = 0; j < N; j++) u[j] = t[j];
    u[N] = 0;
#pragma unroll
    for (int i = 0; i < N; i++) {
        uint32_t lo[N], hi[N];
        const uint32_t m = u[0] * M::INV;
#pragma unroll
        for (int j = 0; j < N; j++) {
            const uint64_t p = (uint64_t)m * M::p(j);
            lo[j] = (uint32_t)p;
            hi[j] = (uint32_t)(p >> 32);
        }
        u[0] = add_cc(u[0], lo[0]);  // 0 by the choice of m; only its carry matters
#pragma unroll
        for (int j = 1; j < N; j++) u[j] = addc_cc(u[j], lo[j]);
        u[N] = addc(u[N], 0);
        u[0] = add_cc(u[1], hi[0]);
#pragma unroll
        for (int j = 1; j < N - 1; j++) u[j] = addc_cc(u[j + 1], hi[j]);
        u[N - 1] = addc_cc(u[N], hi[N - 1]);
        u[N] = addc(0, 0);
        // Word N + i of the square enters the window at its top.
        u[N - 1] = add_cc(u[N - 1], t[N + i]);
        u[N] = addc(u[N], 0);
    }
    typename M::T r;
#pragma unroll
    for (int i = 0; i < N; i++) r.l[i] = u[i];
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
