// The BLS12-381 base field and its quadratic extension on the device, in blst's representation:
// 384-bit Montgomery form (R = 2^384), twelve 32-bit limbs little-endian, always fully reduced (< p).
// A blst_fp's bytes (and so a blstrs::Fp's) are an fp_t's bytes; a blst_fp2 is {c0, c1} with u^2 = -1.
// Points therefore cross to the GPU as raw bytes, with no conversion. The arithmetic is mont.cuh's, shared with fr.
#pragma once
#include <cstdint>

#include "mont.cuh"

namespace cuzk {

struct fp_t {
    uint32_t l[12];
};
static_assert(sizeof(fp_t) == 48, "fp_t must match blst_fp");

// p = 0x1a0111ea397fe69a4b1ba7b6434bacd764774b84f38512bf6730d2a0f6b0f6241eabfffeb153ffffb9feffffffffaaab (381 bits)
__device__ __constant__ static const uint32_t FP_P[12] = {
    0xffffaaab, 0xb9feffff, 0xb153ffff, 0x1eabfffe, 0xf6b0f624, 0x6730d2a0,
    0xf38512bf, 0x64774b84, 0x434bacd7, 0x4b1ba7b6, 0x397fe69a, 0x1a0111ea};

struct FpModulus {
    using T = fp_t;
    static constexpr int N = 12;
    static constexpr uint32_t INV = 0xfffcfffdu;  // -p^-1 mod 2^32
    __device__ __forceinline__ static uint32_t p(int i) { return FP_P[i]; }
    // p in 30-bit limbs, for mont_mul_ul: 13 limbs, 338 word products a product where 14 limbs of 28 bits took 392
    // (a build with -DCUZK_FP_UL28 takes those again, for measuring). On the H200 (2026-12-04, same call): 22.10e9
    // products/s against 19.72e9, the G1 MSM 2^26 random 424.7 against 449.9 ms with the old square.
#ifdef CUZK_FP_UL28
    static constexpr int UL_L = 14, UL_B = 28;
    __device__ __forceinline__ static constexpr uint32_t ul_p(int j) {
        constexpr uint32_t P28[14] = {0x0fffaaab, 0x0fefffff, 0x03ffffb9, 0x0fffeb15, 0x06241eab, 0x0a0f6b0f, 0x0f6730d2,
                                      0x0f38512b, 0x04774b84, 0x04bacd76, 0x0ba7b643, 0x0e69a4b1, 0x01ea397f, 0x0001a011};
        return P28[j];
    }
#else
    static constexpr int UL_L = 13, UL_B = 30;
    __device__ __forceinline__ static constexpr uint32_t ul_p(int j) {
        constexpr uint32_t P30[13] = {0x3fffaaab, 0x27fbffff, 0x153ffffb, 0x2affffac, 0x30f6241e, 0x034a83da, 0x112bf673,
                                      0x12e13ce1, 0x2cd76477, 0x1ed90d2e, 0x29a4b1ba, 0x3a8e5ff9, 0x001a0111};
        return P30[j];
    }
#endif
    // p in 52-bit limbs and -p^-1 mod 2^52 and mod 2^20 (the last digit), for mont_mul_f64.
    static constexpr int F64_L = 8;
    static constexpr unsigned long long F64_INV = 0x3fffcfffcfffdull, F64_INV_LAST = 0xcfffdull;
    __device__ __forceinline__ static constexpr unsigned long long f64_p(int j) {
        constexpr unsigned long long P52[8] = {0xeffffffffaaabull, 0xfeb153ffffb9full, 0x6b0f6241eabffull,
                                               0x12bf6730d2a0full, 0x764774b84f385ull, 0x1ba7b6434bacdull,
                                               0x1ea397fe69a4bull, 0x1a011ull};
        return P52[j];
    }
    // The field product: the unsaturated-limb form (mont.cuh), which took the G1 MSM 2^26 random from 655.9 to 562.1 ms
    // and 2^24 from 177.7 to 150.4 ms against mont_mul (H200, 2026-12-01, same call). A build with
    // -DCUZK_FP_MUL_CHAINS (through CUZK_NVCC_FLAGS) takes mont_mul again, for measuring the two against each other;
    // -DCUZK_FP_MUL_F64 the FP64 product (mont_mul_f64: 21.9e9 products/s alone against 19.7e9, but the G1 MSM 2^26
    // 598.6 against 562.6 ms: the kernels' register budgets).
    __device__ __forceinline__ static fp_t mul(const fp_t& a, const fp_t& b) {
#if defined(CUZK_FP_MUL_CHAINS)
        return mont_mul<FpModulus>(a, b);
#elif defined(CUZK_FP_MUL_F64)
        return mont_mul_f64<FpModulus>(a, b);
#else
        return mont_mul_ul<FpModulus>(a, b);
#endif
    }
};

__device__ __forceinline__ fp_t fp_zero() { return mont_zero<FpModulus>(); }

// R mod p: one in Montgomery form.
__device__ __forceinline__ fp_t fp_one() {
    const uint32_t one[12] = {0x0002fffd, 0x76090000, 0xc40c0002, 0xebf4000b, 0x53c758ba, 0x5f489857,
                              0x70525745, 0x77ce5853, 0xa256ec6d, 0x5c071a97, 0xfa80e493, 0x15f65ec3};
    fp_t r;
#pragma unroll
    for (int i = 0; i < 12; i++) r.l[i] = one[i];
    return r;
}

__device__ __forceinline__ bool fp_is_zero(const fp_t& a) { return mont_is_zero<FpModulus>(a); }
__device__ __forceinline__ fp_t fp_add(const fp_t& a, const fp_t& b) { return mont_add<FpModulus>(a, b); }
__device__ __forceinline__ fp_t fp_sub(const fp_t& a, const fp_t& b) { return mont_sub<FpModulus>(a, b); }
__device__ __forceinline__ fp_t fp_dbl(const fp_t& a) { return fp_add(a, a); }
__device__ __forceinline__ fp_t fp_neg(const fp_t& a) { return fp_sub(fp_zero(), a); }
__device__ __forceinline__ fp_t fp_mul(const fp_t& a, const fp_t& b) { return FpModulus::mul(a, b); }
// The product without its last conditional subtraction (mont_ul without REDUCE): inputs and result below 2p, not p.
// Only for values that feed nothing but further products (fp_mul, fp_sqr, fp_mul_lazy) or fp_reduce; about 25 of the
// product's 1,000 instructions saved. The other product forms (-DCUZK_FP_MUL_CHAINS, -DCUZK_FP_MUL_F64) reduce.
__device__ __forceinline__ fp_t fp_mul_lazy(const fp_t& a, const fp_t& b) {
#if defined(CUZK_FP_MUL_CHAINS) || defined(CUZK_FP_MUL_F64)
    return fp_mul(a, b);
#else
    return mont_ul<FpModulus, false, false>(a, b);
#endif
}
// A value below 2p to its canonical form, below p.
__device__ __forceinline__ fp_t fp_reduce(const fp_t& a) { return mont_reduce_once<FpModulus>(a); }
// The square in the product's unsaturated form, each cross product once (mont_sqr_ul): 26.3e9 squares/s against
// 22.0e9 for mont_sqr, the saturated form, and the G1 MSM 2^26 random 417.0 against 424.7 ms (H200, 2026-12-04).
// A build with -DCUZK_FP_SQR_CHAINS takes mont_sqr again, -DCUZK_FP_SQR_MUL mont_mul_ul(a, a), for measuring.
__device__ __forceinline__ fp_t fp_sqr(const fp_t& a) {
#if defined(CUZK_FP_SQR_MUL)
    return mont_mul_ul<FpModulus>(a, a);
#elif defined(CUZK_FP_SQR_CHAINS)
    return mont_sqr<FpModulus>(a);
#else
    return mont_sqr_ul<FpModulus>(a);
#endif
}

// a^-1 (0 maps to 0) by the binary extended Euclidean algorithm on the integer A = aR: the invariants x1 A = u and
// x2 A = v (mod p) hold from (u, x1) = (A, 1), (v, x2) = (p, 0) while halving and subtracting, until u or v is 1; its x
// is A^-1 = a^-1 R^-1, and one product by R^3 gives a^-1 R, the Montgomery form. About 1,100 steps of 12-word
// shifts and subtractions: a tenth of the latency of a^(p-2) by 571 dependent products, which matters where one
// thread inverts while the card waits (the MSM's batch-affine rounds). Variable time: for public values only.
__device__ __forceinline__ bool fp_raw_is_one(const fp_t& a) {
    uint32_t acc = a.l[0] ^ 1;
#pragma unroll
    for (int i = 1; i < 12; i++) acc |= a.l[i];
    return acc == 0;
}

// a >> 1, with `top` shifted in as bit 383.
__device__ __forceinline__ void fp_raw_shr1(fp_t& a, uint32_t top = 0) {
#pragma unroll
    for (int i = 0; i < 11; i++) a.l[i] = __funnelshift_r(a.l[i], a.l[i + 1], 1);
    a.l[11] = __funnelshift_r(a.l[11], top, 1);
}

// x / 2 mod p for x < p.
__device__ __forceinline__ void fp_half(fp_t& x) {
    if ((x.l[0] & 1) == 0) {
        fp_raw_shr1(x);
        return;
    }
    x.l[0] = add_cc(x.l[0], FP_P[0]);
#pragma unroll
    for (int i = 1; i < 12; i++) x.l[i] = addc_cc(x.l[i], FP_P[i]);
    fp_raw_shr1(x, addc(0, 0));
}

// a >= b as integers.
__device__ __forceinline__ bool fp_raw_geq(const fp_t& a, const fp_t& b) {
    for (int i = 11; i >= 0; i--) {
        if (a.l[i] != b.l[i]) return a.l[i] > b.l[i];
    }
    return true;
}

// a - b as integers, for a >= b.
__device__ __forceinline__ void fp_raw_sub(fp_t& a, const fp_t& b) {
    a.l[0] = sub_cc(a.l[0], b.l[0]);
#pragma unroll
    for (int i = 1; i < 12; i++) a.l[i] = subc_cc(a.l[i], b.l[i]);
}

__device__ __noinline__ static fp_t fp_inv(fp_t a) {
    if (mont_is_zero<FpModulus>(a)) return a;
    fp_t u = a, v, x1 = mont_zero<FpModulus>(), x2 = mont_zero<FpModulus>();
#pragma unroll
    for (int i = 0; i < 12; i++) v.l[i] = FP_P[i];
    x1.l[0] = 1;
    while (!fp_raw_is_one(u) && !fp_raw_is_one(v)) {
        while ((u.l[0] & 1) == 0) {
            fp_raw_shr1(u);
            fp_half(x1);
        }
        while ((v.l[0] & 1) == 0) {
            fp_raw_shr1(v);
            fp_half(x2);
        }
        if (fp_raw_geq(u, v)) {
            fp_raw_sub(u, v);
            x1 = mont_sub<FpModulus>(x1, x2);
        } else {
            fp_raw_sub(v, u);
            x2 = mont_sub<FpModulus>(x2, x1);
        }
    }
    // R^3 mod p.
    const uint32_t r3[12] = {0xd94ca1e0, 0xed48ac6b, 0x03a7adf8, 0x315f831e, 0x615e29dd, 0x9a53352a,
                             0x921e1761, 0x34c04e5e, 0x65724728, 0x2512d435, 0x91755d4d, 0x0aa63460};
    fp_t R3;
#pragma unroll
    for (int i = 0; i < 12; i++) R3.l[i] = r3[i];
    return mont_mul<FpModulus>(fp_raw_is_one(u) ? x1 : x2, R3);
}

// Out-of-line product for extension-field code: inlining every base product of G2 formulas made kernels of tens of
// thousands of instructions that took nvcc over ten minutes to compile; G2 is not the hot path.
__device__ __noinline__ static fp_t fp_mul_outlined(fp_t a, fp_t b) { return fp_mul(a, b); }

// Fp2 = Fp[u] / (u^2 + 1), laid out as blst_fp2: c0 then c1.
struct fp2_t {
    fp_t c0, c1;
};
static_assert(sizeof(fp2_t) == 96, "fp2_t must match blst_fp2");

__device__ __forceinline__ fp2_t fp2_zero() { return {fp_zero(), fp_zero()}; }
__device__ __forceinline__ fp2_t fp2_one() { return {fp_one(), fp_zero()}; }
__device__ __forceinline__ bool fp2_is_zero(const fp2_t& a) { return fp_is_zero(a.c0) && fp_is_zero(a.c1); }
__device__ __forceinline__ fp2_t fp2_add(const fp2_t& a, const fp2_t& b) {
    return {fp_add(a.c0, b.c0), fp_add(a.c1, b.c1)};
}
__device__ __forceinline__ fp2_t fp2_sub(const fp2_t& a, const fp2_t& b) {
    return {fp_sub(a.c0, b.c0), fp_sub(a.c1, b.c1)};
}
__device__ __forceinline__ fp2_t fp2_dbl(const fp2_t& a) { return fp2_add(a, a); }
__device__ __forceinline__ fp2_t fp2_neg(const fp2_t& a) { return {fp_neg(a.c0), fp_neg(a.c1)}; }

// Karatsuba: three base-field products.
__device__ __forceinline__ fp2_t fp2_mul(const fp2_t& a, const fp2_t& b) {
    fp_t v0 = fp_mul_outlined(a.c0, b.c0);
    fp_t v1 = fp_mul_outlined(a.c1, b.c1);
    fp_t s = fp_mul_outlined(fp_add(a.c0, a.c1), fp_add(b.c0, b.c1));
    return {fp_sub(v0, v1), fp_sub(fp_sub(s, v0), v1)};
}

// (c0 + c1 u)^2 = (c0 + c1)(c0 - c1) + 2 c0 c1 u: two base-field products.
__device__ __forceinline__ fp2_t fp2_sqr(const fp2_t& a) {
    fp_t t = fp_mul_outlined(a.c0, a.c1);
    return {fp_mul_outlined(fp_add(a.c0, a.c1), fp_sub(a.c0, a.c1)), fp_dbl(t)};
}

// 1/(c0 + c1 u) = (c0 - c1 u) / (c0^2 + c1^2).
__device__ __forceinline__ fp2_t fp2_inv(const fp2_t& a) {
    fp_t n = fp_inv(fp_add(fp_sqr(a.c0), fp_sqr(a.c1)));
    return {fp_mul(a.c0, n), fp_neg(fp_mul(a.c1, n))};
}

// The two fields behind one interface, for code written once over both curves.
struct Fp {
    using T = fp_t;
    __device__ __forceinline__ static T zero() { return fp_zero(); }
    __device__ __forceinline__ static T one() { return fp_one(); }
    __device__ __forceinline__ static bool is_zero(const T& a) { return fp_is_zero(a); }
    __device__ __forceinline__ static T add(const T& a, const T& b) { return fp_add(a, b); }
    __device__ __forceinline__ static T sub(const T& a, const T& b) { return fp_sub(a, b); }
    __device__ __forceinline__ static T dbl(const T& a) { return fp_dbl(a); }
    __device__ __forceinline__ static T neg(const T& a) { return fp_neg(a); }
    __device__ __forceinline__ static T mul(const T& a, const T& b) { return fp_mul(a, b); }
    __device__ __forceinline__ static T sqr(const T& a) { return fp_sqr(a); }
    __device__ __forceinline__ static T inv(const T& a) { return fp_inv(a); }
};

struct Fp2 {
    using T = fp2_t;
    __device__ __forceinline__ static T zero() { return fp2_zero(); }
    __device__ __forceinline__ static T one() { return fp2_one(); }
    __device__ __forceinline__ static bool is_zero(const T& a) { return fp2_is_zero(a); }
    __device__ __forceinline__ static T add(const T& a, const T& b) { return fp2_add(a, b); }
    __device__ __forceinline__ static T sub(const T& a, const T& b) { return fp2_sub(a, b); }
    __device__ __forceinline__ static T dbl(const T& a) { return fp2_dbl(a); }
    __device__ __forceinline__ static T neg(const T& a) { return fp2_neg(a); }
    __device__ __forceinline__ static T mul(const T& a, const T& b) { return fp2_mul(a, b); }
    __device__ __forceinline__ static T sqr(const T& a) { return fp2_sqr(a); }
    __device__ __forceinline__ static T inv(const T& a) { return fp2_inv(a); }
};

}  // namespace cuzk
