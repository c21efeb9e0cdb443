// Montgomery arithmetic over N 32-bit limbs, written once for both BLS12-381 fields (fr.cuh: N = 8, fp.cuh: N = 12).
//
// A modulus is a traits type M with: `using T` (a struct holding `uint32_t l[N]`, little-endian), `N`, `INV`
// (-p^-1 mod 2^32) and `p(i)` (limb i of p, from constant memory). Values are always fully reduced (< p).
// The moduli leave at least one spare top bit (p < 2^(32N-1)), so a sum of two values never overflows N limbs.
// (fr.cuh's Fr2pModulus, 2p for lazy reduction, does not: mont_add carries into a word above, which mont_reduce_once
// takes; mont_add and mont_sub there work modulo 2p on values below 2p.)
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
#ifndef CUZK_HOST_EMU  // host_emu.h has the host forms
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
// x, which LLVM may no longer relate to the values it came from (so that a product by a 0/1 word stays a multiply).
__device__ __forceinline__ uint32_t opaque(uint32_t x) {
    uint32_t r;
    asm volatile("mov.b32 %0, %1;" : "=r"(r) : "r"(x));
    return r;
}
#endif

// FMA: the conditional steps of mont_reduce_once, mont_add and mont_sub (a select or a mask per word) as 32-bit
// multiply-adds by a 0/1 word, which run on the FMA pipe where the selects and masks take the ALU pipe. Same results;
// for kernels bound by the ALU pipe with the FMA pipe idle (the NTT's lazy passes, ntt_pass.cuh), not for those whose
// products keep the FMA pipe busy (the MSM's). In the lazy DIT pass's round (SASS, sm_90) the ALU instructions fall
// from 1,033 to 969 for 43 more in all; the 2^27 forward NTT 44.93 -> 44.46 ms, H 2^27 279.1 -> 275.6 ms (H100,
// 2026-12-06, two rounds alternating; BENCHMARKS).

// t - p if t >= p, else t (for t < 2p). `hi` is a word above t (0 when t fits N words). With FMA each word is
// keep t_i + take s_i (two multiply-adds) in place of a select.
template <class M, bool FMA = false>
__device__ __forceinline__ typename M::T mont_reduce_once(const typename M::T& t, uint32_t hi = 0) {
    constexpr int N = M::N;
    typename M::T s;
    s.l[0] = sub_cc(t.l[0], M::p(0));
#pragma unroll
    for (int i = 1; i < N; i++) s.l[i] = subc_cc(t.l[i], M::p(i));
    const uint32_t borrow = subc(hi, 0);  // all ones when t < p
    typename M::T r;
    if (FMA) {
        const uint32_t keep = opaque(0u - borrow), take = opaque(borrow + 1u);
#pragma unroll
        for (int i = 0; i < N; i++) r.l[i] = keep * t.l[i] + take * s.l[i];
    } else {
#pragma unroll
        for (int i = 0; i < N; i++) r.l[i] = borrow ? t.l[i] : s.l[i];
    }
    return r;
}

template <class M, bool FMA = false>
__device__ __forceinline__ typename M::T mont_add(const typename M::T& a, const typename M::T& b) {
    constexpr int N = M::N;
    typename M::T t;
    t.l[0] = add_cc(a.l[0], b.l[0]);
#pragma unroll
    for (int i = 1; i < N; i++) t.l[i] = addc_cc(a.l[i], b.l[i]);
    const uint32_t hi = addc(0, 0);  // 0 for the fields, whose moduli leave a spare top bit; 2p (fr.cuh) may carry
    return mont_reduce_once<M, FMA>(t, hi);
}

// With FMA, p's words are added back as back * p_i (back 0 or 1) in place of p_i & mask.
template <class M, bool FMA = false>
__device__ __forceinline__ typename M::T mont_sub(const typename M::T& a, const typename M::T& b) {
    constexpr int N = M::N;
    typename M::T t;
    t.l[0] = sub_cc(a.l[0], b.l[0]);
#pragma unroll
    for (int i = 1; i < N; i++) t.l[i] = subc_cc(a.l[i], b.l[i]);
    const uint32_t mask = subc(0, 0);  // all ones when a < b: add p back
    const uint32_t back = FMA ? opaque(0u - mask) : 0;
    auto word = [&](int i) { return FMA ? back * M::p(i) : M::p(i) & mask; };
    t.l[0] = add_cc(t.l[0], word(0));
#pragma unroll
    for (int i = 1; i < N; i++) t.l[i] = addc_cc(t.l[i], word(i));
    return t;
}

// a + p without reduction, for a below p: the same residue in [p, 2p), the largest input a lazy operation takes (the
// tests lift their operands with it; p < 2^(32N-1), so the sum fits N words).
template <class M>
__device__ __forceinline__ typename M::T mont_lift(const typename M::T& a) {
    constexpr int N = M::N;
    typename M::T t;
    t.l[0] = add_cc(a.l[0], M::p(0));
#pragma unroll
    for (int i = 1; i < N; i++) t.l[i] = addc_cc(a.l[i], M::p(i));
    return t;
}

// a 2^-k mod p for 1 <= k <= 32 and a below 2p (the same in Montgomery form: 2^-k is a plain factor), with no
// product: m = (-a p^-1) mod 2^k clears the low k bits of a + m p, so (a + m p) / 2^k is a 2^-k modulo p, below
// (2p + 2^k p) / 2^k <= 2p, reduced once. One word's multiples of p (N wide multiplies, two carry chains) and a
// shift: the inverse NTT's n^-1 (ntt_pass.cuh's PASS_IO_HALVE) where a product by n^-1 takes several times as many
// instructions. k is the same for every thread (no divergence); 32 shifts whole words (__funnelshift_rc clamps).
template <class M>
__device__ __forceinline__ typename M::T mont_div_pow2(const typename M::T& a, uint32_t k) {
    constexpr int N = M::N;
    const uint32_t m = (a.l[0] * M::INV) & (k >= 32 ? 0xffffffffu : (1u << k) - 1);
    uint32_t lo[N], hi[N], t[N + 1];
#pragma unroll
    for (int j = 0; j < N; j++) {
        const uint64_t p = (uint64_t)m * M::p(j);
        lo[j] = (uint32_t)p;
        hi[j] = (uint32_t)(p >> 32);
    }
    t[0] = add_cc(a.l[0], lo[0]);
#pragma unroll
    for (int j = 1; j < N; j++) t[j] = addc_cc(a.l[j], lo[j]);
    t[N] = addc(0, 0);
    t[1] = add_cc(t[1], hi[0]);
#pragma unroll
    for (int j = 2; j < N; j++) t[j] = addc_cc(t[j], hi[j - 1]);
    t[N] = addc(t[N], hi[N - 1]);
    typename M::T r;
#pragma unroll
    for (int i = 0; i < N; i++) r.l[i] = __funnelshift_rc(t[i], t[i + 1], k);
    return mont_reduce_once<M>(r);
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

// Limbs of B = 30 bits (fp: 13 limbs, 338 word products where 28-bit limbs take 14 and 392) leave a limb room for
// only ROWS = 7 rows of two products (15 units of 2^60 below 2^64), so every ROWS rows the limbs are normalised (each
// limb's bits above B carried into the next), and the rows after start again from limbs below 2^B + 2^34.
//
// The square (SQR, b = a) takes each cross product once, doubled: row i adds a_i^2 at limb i and a_k * 2a_i (k > i)
// above it (the window's limb k is column i + k), L - i word products where the product takes L (fp: 91 + 169 = 260
// word products against 338). A row then adds up to three units of 2^(2B), so it normalises every 5 rows, not 7.
//
// Without REDUCE the last conditional subtraction is left out: the result is below 2p, not p. Inputs may then be
// below 2p too, as long as 4p < R (fp: p < 2^381): T = (ab + Mp) / R < 4p^2 / R + p < 2p, and limb L-1 gains one bit,
// inside the rows' bounds. For values that only feed further products.
template <class M, bool SQR, bool REDUCE = true>
__device__ __forceinline__ typename M::T mont_ul(const typename M::T& av, const typename M::T& bv) {
    constexpr int N = M::N, L = M::UL_L, B = M::UL_B, LAST = 32 * N - B * (L - 1);
    static_assert(LAST > 0 && LAST <= B, "UL_L limbs of UL_B bits must cover the N words with a last digit of 1..B bits");
    // Rows a limb can take between normalisations: a row adds two products below 2^(2B) (three units of 2^(2B) in
    // the square: a doubled cross product and m_i p_j), on top of a normalised limb (below one unit).
    constexpr int ROWS = (int)(((1ull << (64 - 2 * B)) - 1) / (SQR ? 3 : 2));
    static_assert(B < 32 && ROWS >= 2, "a limb must hold two rows of 2B-bit products");
    constexpr uint32_t MASK = (1u << B) - 1, LAST_MASK = (1u << LAST) - 1;
    uint32_t a[L], b[L];
    ul_split<M>(av, a);
    if (!SQR) ul_split<M>(bv, b);
    uint64_t t[L];
#pragma unroll
    for (int i = 0; i < L; i++) {
#pragma unroll
        for (int j = 0; j < L; j++) {
            if (SQR && j < i) continue;  // the square's cross products below the diagonal are taken doubled above it
            const uint32_t f = SQR ? (j == i ? a[i] : a[i] << 1) : b[i];
            // All limbs are empty in row 0: a product, not a multiply-add (limb L-1, shifted in as 0 later, folds
            // to a product too unless a normalisation carried into it).
            if (i == 0)
                t[j] = (uint64_t)a[j] * f;
            else
                t[j] += (uint64_t)a[j] * f;
        }
        uint32_t m = ((uint32_t)t[0] * M::INV) & (i == L - 1 ? LAST_MASK : MASK);
        asm("" : "+r"(m));
#pragma unroll
        for (int j = 0; j < L; j++) t[j] += (uint64_t)m * M::ul_p(j);
        if (i < L - 1) {
            const uint64_t c = t[0] >> B;  // t_0's low B bits are 0 by the choice of m
#pragma unroll
            for (int j = 0; j < L - 1; j++) t[j] = t[j + 1];
            t[L - 1] = 0;
            t[0] += c;
            if ((i + 1) % ROWS == 0) {
#pragma unroll
                for (int j = 0; j < L - 1; j++) {
                    t[j + 1] += t[j] >> B;
                    t[j] &= MASK;
                }
            }
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
    return REDUCE ? mont_reduce_once<M>(r) : r;
}

template <class M>
__device__ __forceinline__ typename M::T mont_mul_ul(const typename M::T& a, const typename M::T& b) {
    return mont_ul<M, false>(a, b);
}

template <class M>
__device__ __forceinline__ typename M::T mont_sqr_ul(const typename M::T& a) {
    return mont_ul<M, true>(a, a);
}

// The same product on the FP64 pipe, which the integer forms leave idle (on the H200 the wide integer multiplies run
// only on the fmaheavy half of the FMA pipe, 87 % busy in mont_mul_ul's throughput kernel, FP64 0 %; ncu,
// 2026-12-01). Operands are cut into L = M::F64_L limbs of 52 bits held exactly in doubles (the last limb takes the
// rest). Each limb product splits exactly into 52-bit halves with two fused multiply-adds (f64_mul_acc), which go
// into 64-bit integer columns, so no carries are propagated until the end. Montgomery rows as in mont_mul_ul: digit i
// has 52 bits (the last 32N - 52(L-1): 48 for fr, 20 for fp), m_i = (t_0 * -p^-1) mod 2^w from the same kind of split
// (a multiply-add rounded down onto multiples of 2^w, C = 2^(52+w)); R stays 2^(32N) and the result is mont_mul's, bit
// for bit. Columns stay below 2^57, T = (ab + Mp) / R below 2p: one conditional subtraction. Modelled first in Python
// against Python integers (fr and fp, 3,000 random pairs and 0, 1, p-1, p-2, the float64 roundings emulated exactly).
// As measured (H200, 2026-12-01): fr 51.5e9 products/s against mont_mul_ul's 47.7e9 (one chain of each per thread:
// 52.4e9), fp 21.9e9 against 19.7e9; the first version, with a round-to-nearest split and four FP64 operations per
// limb product, ran fr at 45.5e9. The NTT's butterflies use it since 2026-12-04 (the 2^27 NTT 48.8 against 50.5 ms
// with mont_mul_ul, once its pass read twiddles from shared memory and spilled less; ntt.cu, mul_form). In the G1
// MSM it loses: 2^26 598.6 against 562.6 ms (-DCUZK_FP_MUL_F64, 2026-12-01), so there it stays an A/B form (msm-cuda's
// MulForm::Float64 and FieldOp::MulFloat64; ntt-cuda's FrOp::MulFloat64 tests it against blstrs).
__host__ __device__ constexpr double f64_pow2(int e) {
    double r = 1.0;
    for (int i = 0; i < e; i++) r *= 2.0;
    return r;
}

// An integer below 2^(32+B) (B <= 20) as a double, exactly: 2^52 + v from the bits, minus 2^52. `lo` is its low word;
// its bits above 32 are the top B bits of `top` (top's other bits are ignored), so the exponent's word is one funnel
// shift of top and the exponent, where masking the bits and setting the exponent take two logic operations on the ALU
// pipe. Splitting both operands this way (f64_split) and the sparse digit's m: the 2^27 forward NTT 44.43 -> 43.95 ms,
// H 2^27 275.5 -> 273.8 ms (H100, 2026-12-06, three rounds alternating), though the product's own rate falls 0.3 %.
// (Tried with it and not kept: the columns' arithmetic shifts as two high-half multiplies of the high word, __mulhi
// by 2^(64-K) and by 2, on the FMA pipe. The ALU count fell further, but the product's rate fell 3 % and the 2^27 NTT
// took 45.0 ms: the multiplies' latency on the rows' chain.)
__device__ __forceinline__ double f64_from52_top(uint32_t lo, uint32_t top, int b = 20) {
    return __dsub_rn(__hiloint2double((int)__funnelshift_r(top, 0x43300000u >> b, 32 - b), (int)lo), 0x1p52);
}

// 32 bits of w from bit position `bit` up (0 past w's N words).
template <class M>
__device__ __forceinline__ uint32_t f64_window(const typename M::T& w, int bit) {
    constexpr int N = M::N;
    const int wi = bit / 32, s = bit % 32;
    const uint32_t w0 = wi < N ? w.l[wi] : 0, w1 = wi + 1 < N ? w.l[wi + 1] : 0;
    return s == 0 ? w0 : __funnelshift_r(w0, w1, s);
}

template <class M>
__device__ __forceinline__ void f64_split(const typename M::T& w, double (&x)[M::F64_L]) {
    constexpr int L = M::F64_L;
#pragma unroll
    for (int k = 0; k < L; k++) {
        const int bit = 52 * k;
        x[k] = f64_from52_top(f64_window<M>(w, bit), f64_window<M>(w, bit + 20));
    }
}

// lo_acc += x*y mod 2^52, hi_acc += floor(x*y / 2^52), for 0 <= x*y < 2^104, in three FP64 operations:
// h = fma(x, y, 2^104) rounded down is 2^104 + H 2^52 (H = floor(x*y / 2^52)), read from its bits; K - h, K = 2^104 +
// 2^52, is (1 - H) 2^52 exactly; fma(x, y, K - h) = x*y - H 2^52 + 2^52 lies in [2^52, 2^53), where doubles are the
// integers, so its bits minus 2^52's are the low part.
// NEG: the same for -2^104 + 2^52 < x*y <= 0 (y negative), with C = 2^105 - 2^52 in place of 2^104 and K = 2^105:
// C + x*y still lies in [2^104, 2^105), where the rounding down lands on C + H 2^52 (H = floor(x*y / 2^52), now
// negative), and the low part is again x*y - H 2^52 in [0, 2^52). The instructions are the same; only the constants
// differ.
template <bool NEG = false>
__device__ __forceinline__ void f64_mul_acc(double x, double y, long long& lo_acc, long long& hi_acc) {
    constexpr double C = NEG ? 0x1.fffffffffffffp104 : 0x1p104, K = NEG ? 0x1p105 : 0x1.0000000000001p104;
    constexpr long long C_BITS = NEG ? 0x467fffffffffffffll : 0x4670000000000000ll, LO_BITS = 0x4330000000000000ll;
    const double h = __fma_rd(x, y, C);
    const double l = __fma_rn(x, y, __dsub_rn(K, h));
    hi_acc += __double_as_longlong(h) - C_BITS;
    lo_acc += __double_as_longlong(l) - LO_BITS;
}

// Whether -p^-1 is -(1 + 2^32) modulo both digit sizes of mont_mul_f64 (2^52 and 2^LAST), as for the scalar field
// (p = 1 - 2^32 mod 2^64): then p^-1 = 1 + 2^32 and a digit's m is two integer operations (see mont_mul_f64).
// A build with -DCUZK_F64_DENSE_INV (through CUZK_NVCC_FLAGS) takes the general digit for every modulus, for
// measuring the two against each other.
template <class M, int LAST>
__host__ __device__ constexpr bool f64_inv_sparse() {
#ifdef CUZK_F64_DENSE_INV
    return false;
#else
    return LAST > 32 && M::F64_INV == (1ull << 52) - 1 - (1ull << 32) &&
           M::F64_INV_LAST == (1ull << LAST) - 1 - (1ull << 32);
#endif
}

// Limb k of p >> D in 52-bit limbs (the top one, k = L - 1, takes the rest), from M::f64_p.
template <class M>
__device__ constexpr unsigned long long f64_p_shifted(int k, int d) {
    constexpr int L = M::F64_L;
    const unsigned long long mask = (1ull << 52) - 1;
    const unsigned long long lo = M::f64_p(k) >> d;
    const unsigned long long hi = k + 1 < L && d > 0 ? (M::f64_p(k + 1) << (52 - d)) : 0;
    return k + 1 < L ? ((lo | hi) & mask) : lo;
}

// mont_mul_f64 (the FP64 product described above f64_pow2). Without REDUCE its last conditional subtraction is left
// out, for lazy reduction (the NTT's butterflies, ntt.cu): with a < 2p and b < p the result is below 2p,
// T < 2p^2 / R + p (fr: 1.91p, p < 0.453 R), and the limbs' bounds above hold for any a below R.
//
// Sparse inverse (f64_inv_sparse, the scalar field): p^-1 = 1 + 2^32 modulo 2^52 and 2^48, so a digit's
// m' = c p^-1 mod 2^w (c the low w bits of t_0) has c's low word as its low word and (c_hi + c_lo) mod 2^(w-32) above
// it: one 32-bit add (which the compiler may put on the FMA pipe) and the mask, where -p^-1's general digit takes a
// split on the FP64 pipe (a multiply-add rounded down, a subtraction, a multiply-add) on the row's critical path. The
// row then adds m' (-p), which clears the digit as adding m p does (m' = -m mod 2^w): its limb products are
// negative, split by f64_mul_acc<NEG> at the same cost. The columns, now signed, stay within 2^56 in magnitude. The
// sum ends at T' = (ab - M'p) / R in (-p, ab / R), so p is added as the limbs are normalised (constants folded into
// the carries' adds): T = T' + p is below ab / R + p, the same bound as above, and equals mont_mul's result modulo p,
// with the same final conditional subtraction. Modelled first in Python against Python integers (20,000 random pairs
// with a below 2p and b below p, and edges 0, 1, 2, p-2, p-1, p, p+1, 2^255, 2p-2, 2p-1: exact digits, column bounds,
// result below 1.87p), then checked against blstrs, and inside the NTT's passes against the CPU transform, through the
// host emulation (ntt-cuda's tests/host_emulation.rs, in CI). SASS (sm_90): the product's two-chain throughput kernel
// runs 812 instructions a round against 852 (DFMA 200 against 220, DADD 125 against 135, IMAD 59 against 82), and the
// NTT's lazy DIF pass spills 28 bytes against 64. Measured (H100, 2026-12-06, one round, the dense digit built with
// -DCUZK_F64_DENSE_INV in the same call): the product's rate 58.07e9/s against 52.56e9, the 2^27 NTT 44.92 against
// 48.08 ms, H 2^27 284.6 against 306.1 ms (BENCHMARKS).
template <class M, bool REDUCE = true>
__device__ __forceinline__ typename M::T mont_mul_f64(const typename M::T& av, const typename M::T& bv) {
    constexpr int N = M::N, L = M::F64_L, W = 52, LAST = 32 * N - W * (L - 1), D = W - LAST;
    static_assert(LAST > 0 && LAST <= W, "F64_L limbs of 52 bits must cover the N words with a last digit of 1..52 bits");
    constexpr bool SPARSE = f64_inv_sparse<M, LAST>();
    constexpr long long MASK = (1ll << W) - 1;
    constexpr double CW = 0x1p104, CW_LAST = f64_pow2(52 + LAST);  // the m split's constants (2^(52+w))
    double a[L], b[L];
    f64_split<M>(av, a);
    f64_split<M>(bv, b);
    // Every column carries BIAS, so that it stays positive (the sparse form's columns are signed, within 2^56 in
    // magnitude) and its carries are logical shifts: one SHF where an arithmetic shift of a 64-bit value takes two
    // (its sign word). A carry out of column j brings BIAS >> s along, taken off where it is added in; BIAS's low 52
    // bits are 0, so the digits' m and the limbs' masks see no change. SASS (sm_90): the lazy DIF pass's round 2,497
    // -> 2,459 instructions (ALU 1,261 -> 1,216), DIT's 1,829 -> 1,797 (ALU 921 -> 885); DIT now spills 8 bytes.
    // Measured (H100, 2026-12-06, two rounds alternating against the previous build): the product's rate 57.9e9 ->
    // 58.8e9/s, the 2^27 forward NTT 41.15 -> 40.48 ms, H 2^27 264.7 -> 261.1 ms (BENCHMARKS).
    constexpr long long BIAS = 1ll << 62;
    // x >> s for x carrying `bias` (a multiple of 2^s), the carried bias >> s taken off.
    auto carry = [](long long x, int s, long long bias) {
        return (long long)((unsigned long long)x >> s) - (bias >> s);
    };
    long long t[L + 1];
#pragma unroll
    for (int j = 0; j <= L; j++) t[j] = BIAS;
#pragma unroll
    for (int i = 0; i < L; i++) {
#pragma unroll
        for (int j = 0; j < L; j++) f64_mul_acc(a[j], b[i], t[j], t[j + 1]);
        const int w = i < L - 1 ? W : LAST;
        double m;
        if (SPARSE) {
            // m' = c (1 + 2^32) mod 2^w, from t_0's two words (only its low w bits matter). (Tried: the digit as
            // the double 2^52 + m read straight from its bits, with p in signed limbs whose 2^52 P offsets the high
            // halves' adds take off, to drop this DADD from each row's chain. The negation became a wide multiply
            // on the chain: the product's rate 58.9 -> 55.3e9/s, the 2^27 NTT 40.45 -> 42.33 ms; H100, 2026-12-06.
            // Also tried: m p_0 left out of the row's products, as p_0 = 2^52 - 2^32 + 1 makes (t_0 - m p_0) / 2^w
            // exact from t_0's words in a few integer operations. The product ran 2.2 % faster, the NTT's passes,
            // bound by the ALU pipe as much as by issue, not at all: the 2^27 NTT 40.44 -> 41.38 ms, and 41.0 against
            // 41.0 once t_0's bias was folded into the next row's add; H100, 2026-12-06. Both in BENCHMARKS.)
            const uint32_t t0_lo = (uint32_t)t[0], t0_hi = (uint32_t)((unsigned long long)t[0] >> 32);
            m = f64_from52_top(t0_lo, (t0_hi + t0_lo) << (64 - w), w - 32);
        } else {
            const unsigned long long t0 = (unsigned long long)t[0] & ((1ull << w) - 1);
            const double c = f64_from52_top((uint32_t)t0, (uint32_t)(t0 >> 32) << 12);
            const double inv = (double)(i < L - 1 ? M::F64_INV : M::F64_INV_LAST);
            const double cw = i < L - 1 ? CW : CW_LAST;
            const double h = __fma_rd(c, inv, cw);
            m = __fma_rn(c, inv, -__dsub_rn(h, cw));  // (c * inv) mod 2^w, in [0, 2^w)
        }
#pragma unroll
        for (int j = 0; j < L; j++) {
            if (SPARSE)
                f64_mul_acc<true>(m, -(double)M::f64_p(j), t[j], t[j + 1]);
            else
                f64_mul_acc(m, (double)M::f64_p(j), t[j], t[j + 1]);
        }
        if (i < L - 1) {
            const long long cr = carry(t[0], W, BIAS);  // t_0's low 52 bits are 0 by the choice of m
#pragma unroll
            for (int j = 0; j < L; j++) t[j] = t[j + 1];
            t[L] = BIAS;
            t[0] += cr;
        }
    }
    // T = c0 + 2^D * (t_1 + t_2 2^52 + ...), c0 = t_0 / 2^LAST; fold c0's high part into t_1 and normalise to 52-bit
    // limbs (the top one keeps the rest), then pack N words. The sparse form adds p here (T' + p, above): its low D
    // bits to c0 and p >> D's limbs to t_1..t_L, beside the carries.
    // c0 keeps BIAS >> LAST (a multiple of 2^D) until it is shifted into t_1, so that it stays positive too.
    const long long c0 = (long long)((unsigned long long)t[0] >> LAST) +
                         (SPARSE ? (long long)(M::f64_p(0) & ((1ull << D) - 1)) : 0);
    const uint32_t rem = (uint32_t)(c0 & ((1ll << D) - 1));
    t[1] += carry(c0, D, BIAS >> LAST) + (SPARSE ? (long long)f64_p_shifted<M>(0, D) : 0);
    unsigned long long n[L - 1];
#pragma unroll
    for (int j = 1; j < L; j++) {
        t[j + 1] += carry(t[j], W, BIAS) + (SPARSE ? (long long)f64_p_shifted<M>(j, D) : 0);
        n[j - 1] = (unsigned long long)(t[j] & MASK);
    }
    const long long top = t[L] - BIAS;
    typename M::T r;
#pragma unroll
    for (int i = 0; i < N; i++) {
        uint32_t acc = i == 0 ? rem : 0;
#pragma unroll
        for (int k = 0; k < L - 1; k++) {
            const int lo = D + W * k - 32 * i;
            if (lo >= 32 || lo + W <= 0) continue;
            acc |= (uint32_t)(lo >= 0 ? (n[k] << lo) : (n[k] >> (-lo)));
        }
        const int lo = D + W * (L - 1) - 32 * i;
        if (lo < 32) acc |= (uint32_t)(lo >= 0 ? (top << lo) : (lo > -64 ? (top >> (-lo)) : (top >> 63)));
        r.l[i] = acc;
    }
    return REDUCE ? mont_reduce_once<M>(r) : r;
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
