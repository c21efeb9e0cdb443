// The BLS12-381 base field and its quadratic extension on the device, in blst's representation:
// 384-bit Montgomery form (R = 2^384), twelve 32-bit limbs little-endian, always fully reduced (< p).
// A blst_fp's bytes (and so a blstrs::Fp's) are an fp_t's bytes; a blst_fp2 is {c0, c1} with u^2 = -1.
// Points therefore cross to the GPU as raw bytes, with no conversion.
#pragma once
#include <cstdint>

namespace cuzk {

struct fp_t {
    uint32_t l[12];
};
static_assert(sizeof(fp_t) == 48, "fp_t must match blst_fp");

// p = 0x1a0111ea397fe69a4b1ba7b6434bacd764774b84f38512bf6730d2a0f6b0f6241eabfffeb153ffffb9feffffffffaaab (381 bits)
__device__ __constant__ static const uint32_t FP_P[12] = {
    0xffffaaab, 0xb9feffff, 0xb153ffff, 0x1eabfffe, 0xf6b0f624, 0x6730d2a0,
    0xf38512bf, 0x64774b84, 0x434bacd7, 0x4b1ba7b6, 0x397fe69a, 0x1a0111ea};
// -p^-1 mod 2^32
static constexpr uint32_t FP_INV = 0xfffcfffdu;

__device__ __forceinline__ fp_t fp_zero() {
    fp_t r;
#pragma unroll
    for (int i = 0; i < 12; i++) r.l[i] = 0;
    return r;
}

// R mod p: one in Montgomery form.
__device__ __forceinline__ fp_t fp_one() {
    const uint32_t one[12] = {0x0002fffd, 0x76090000, 0xc40c0002, 0xebf4000b, 0x53c758ba, 0x5f489857,
                              0x70525745, 0x77ce5853, 0xa256ec6d, 0x5c071a97, 0xfa80e493, 0x15f65ec3};
    fp_t r;
#pragma unroll
    for (int i = 0; i < 12; i++) r.l[i] = one[i];
    return r;
}

__device__ __forceinline__ bool fp_is_zero(const fp_t& a) {
    uint32_t acc = 0;
#pragma unroll
    for (int i = 0; i < 12; i++) acc |= a.l[i];
    return acc == 0;
}

__device__ __forceinline__ bool fp_eq(const fp_t& a, const fp_t& b) {
    uint32_t acc = 0;
#pragma unroll
    for (int i = 0; i < 12; i++) acc |= a.l[i] ^ b.l[i];
    return acc == 0;
}

// t - p if t >= p, else t (for t < 2p, which fits 384 bits because p < 2^381).
__device__ __forceinline__ fp_t fp_reduce_once(const fp_t& t) {
    fp_t s;
    uint64_t borrow = 0;
#pragma unroll
    for (int i = 0; i < 12; i++) {
        uint64_t d = (uint64_t)t.l[i] - FP_P[i] - borrow;
        s.l[i] = (uint32_t)d;
        borrow = (d >> 63) & 1;
    }
    return borrow ? t : s;
}

__device__ __forceinline__ fp_t fp_add(const fp_t& a, const fp_t& b) {
    fp_t t;
    uint64_t carry = 0;
#pragma unroll
    for (int i = 0; i < 12; i++) {
        uint64_t s = (uint64_t)a.l[i] + b.l[i] + carry;
        t.l[i] = (uint32_t)s;
        carry = s >> 32;
    }
    return fp_reduce_once(t);
}

__device__ __forceinline__ fp_t fp_sub(const fp_t& a, const fp_t& b) {
    fp_t t;
    uint64_t borrow = 0;
#pragma unroll
    for (int i = 0; i < 12; i++) {
        uint64_t d = (uint64_t)a.l[i] - b.l[i] - borrow;
        t.l[i] = (uint32_t)d;
        borrow = (d >> 63) & 1;
    }
    if (borrow) {
        uint64_t carry = 0;
#pragma unroll
        for (int i = 0; i < 12; i++) {
            uint64_t s = (uint64_t)t.l[i] + FP_P[i] + carry;
            t.l[i] = (uint32_t)s;
            carry = s >> 32;
        }
    }
    return t;
}

__device__ __forceinline__ fp_t fp_dbl(const fp_t& a) {
    return fp_add(a, a);
}

__device__ __forceinline__ fp_t fp_neg(const fp_t& a) {
    return fp_sub(fp_zero(), a);
}

// Montgomery product a * b * R^-1 mod p: CIOS over 32-bit words, the same plain form as fr_mul (see fr.cuh for why
// plain C rather than PTX).
__device__ __forceinline__ fp_t fp_mul(const fp_t& a, const fp_t& b) {
    uint32_t t[14];
#pragma unroll
    for (int i = 0; i < 14; i++) t[i] = 0;
#pragma unroll
    for (int i = 0; i < 12; i++) {
        uint64_t c = 0;
#pragma unroll
        for (int j = 0; j < 12; j++) {
            uint64_t s = (uint64_t)a.l[j] * b.l[i] + t[j] + c;
            t[j] = (uint32_t)s;
            c = s >> 32;
        }
        uint64_t s = (uint64_t)t[12] + c;
        t[12] = (uint32_t)s;
        t[13] = (uint32_t)(s >> 32);
        uint32_t m = t[0] * FP_INV;
        s = (uint64_t)m * FP_P[0] + t[0];
        c = s >> 32;
#pragma unroll
        for (int j = 1; j < 12; j++) {
            s = (uint64_t)m * FP_P[j] + t[j] + c;
            t[j - 1] = (uint32_t)s;
            c = s >> 32;
        }
        s = (uint64_t)t[12] + c;
        t[11] = (uint32_t)s;
        t[12] = t[13] + (uint32_t)(s >> 32);
    }
    fp_t r;
#pragma unroll
    for (int i = 0; i < 12; i++) r.l[i] = t[i];
    return fp_reduce_once(r);
}

__device__ __forceinline__ fp_t fp_sqr(const fp_t& a) {
    return fp_mul(a, a);
}

// a^(p-2) = a^-1 for a != 0; 0 maps to 0. Slow (square and multiply): for tests and one-off conversions only.
__device__ __forceinline__ fp_t fp_inv(const fp_t& a) {
    // p - 2, little-endian 32-bit words.
    const uint32_t e[12] = {0xffffaaa9, 0xb9feffff, 0xb153ffff, 0x1eabfffe, 0xf6b0f624, 0x6730d2a0,
                            0xf38512bf, 0x64774b84, 0x434bacd7, 0x4b1ba7b6, 0x397fe69a, 0x1a0111ea};
    fp_t r = fp_one();
    for (int w = 11; w >= 0; w--) {
        for (int b = 31; b >= 0; b--) {
            r = fp_sqr(r);
            if ((e[w] >> b) & 1) r = fp_mul(r, a);
        }
    }
    return r;
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
