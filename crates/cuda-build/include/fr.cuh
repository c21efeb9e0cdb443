// The BLS12-381 scalar field on the device, in blstrs's representation:
// 256-bit Montgomery form (R = 2^256), eight 32-bit limbs little-endian, always fully reduced (< p).
// A blstrs::Scalar's bytes are an fr_t's bytes, so scalars cross to the GPU with no conversion.
#pragma once
#include <cstdint>

namespace cuzk {

struct fr_t {
    uint32_t l[8];
};
static_assert(sizeof(fr_t) == 32, "fr_t must match blstrs::Scalar");

// p = 0x73eda753299d7d483339d80809a1d80553bda402fffe5bfeffffffff00000001
__device__ __constant__ static const uint32_t FR_P[8] = {
    0x00000001, 0xffffffff, 0xfffe5bfe, 0x53bda402, 0x09a1d805, 0x3339d808, 0x299d7d48, 0x73eda753};
// -p^-1 mod 2^32
static constexpr uint32_t FR_INV = 0xffffffffu;

__device__ __forceinline__ fr_t fr_zero() {
    fr_t r;
#pragma unroll
    for (int i = 0; i < 8; i++) r.l[i] = 0;
    return r;
}

// R mod p: one in Montgomery form.
__host__ __device__ __forceinline__ fr_t fr_one() {
    const uint32_t one[8] = {0xfffffffe, 0x00000001, 0x00034802, 0x5884b7fa,
                             0xecbc4ff5, 0x998c4fef, 0xacc5056f, 0x1824b159};
    fr_t r;
#pragma unroll
    for (int i = 0; i < 8; i++) r.l[i] = one[i];
    return r;
}

__device__ __forceinline__ bool fr_is_zero(const fr_t& a) {
    uint32_t acc = 0;
#pragma unroll
    for (int i = 0; i < 8; i++) acc |= a.l[i];
    return acc == 0;
}

// r = t - p if t >= p, else t (t < 2p).
__device__ __forceinline__ fr_t fr_reduce_once(const fr_t& t) {
    fr_t s;
    uint64_t borrow = 0;
#pragma unroll
    for (int i = 0; i < 8; i++) {
        uint64_t d = (uint64_t)t.l[i] - FR_P[i] - borrow;
        s.l[i] = (uint32_t)d;
        borrow = (d >> 63) & 1;
    }
    return borrow ? t : s;
}

__device__ __forceinline__ fr_t fr_add(const fr_t& a, const fr_t& b) {
    // a, b < p < 2^255: the sum fits in 256 bits.
    fr_t t;
    uint64_t carry = 0;
#pragma unroll
    for (int i = 0; i < 8; i++) {
        uint64_t s = (uint64_t)a.l[i] + b.l[i] + carry;
        t.l[i] = (uint32_t)s;
        carry = s >> 32;
    }
    return fr_reduce_once(t);
}

__device__ __forceinline__ fr_t fr_sub(const fr_t& a, const fr_t& b) {
    fr_t t;
    uint64_t borrow = 0;
#pragma unroll
    for (int i = 0; i < 8; i++) {
        uint64_t d = (uint64_t)a.l[i] - b.l[i] - borrow;
        t.l[i] = (uint32_t)d;
        borrow = (d >> 63) & 1;
    }
    if (borrow) {
        uint64_t carry = 0;
#pragma unroll
        for (int i = 0; i < 8; i++) {
            uint64_t s = (uint64_t)t.l[i] + FR_P[i] + carry;
            t.l[i] = (uint32_t)s;
            carry = s >> 32;
        }
    }
    return t;
}

__device__ __forceinline__ fr_t fr_neg(const fr_t& a) {
    return fr_sub(fr_zero(), a);
}

// Montgomery product a * b * R^-1 mod p: CIOS over 32-bit words.
// Measured on the H200 (2026-11-30): this plain form, which nvcc lowers to IMAD.WIDE chains, ran the 2^27 NTT in
// 81.5 ms against 87.2 ms for a hand-written mad.lo.cc/madc.hi.cc PTX version of the same CIOS loop.
__device__ __forceinline__ fr_t fr_mul(const fr_t& a, const fr_t& b) {
    uint32_t t[10];
#pragma unroll
    for (int i = 0; i < 10; i++) t[i] = 0;
#pragma unroll
    for (int i = 0; i < 8; i++) {
        uint64_t c = 0;
#pragma unroll
        for (int j = 0; j < 8; j++) {
            uint64_t s = (uint64_t)a.l[j] * b.l[i] + t[j] + c;
            t[j] = (uint32_t)s;
            c = s >> 32;
        }
        uint64_t s = (uint64_t)t[8] + c;
        t[8] = (uint32_t)s;
        t[9] = (uint32_t)(s >> 32);
        uint32_t m = t[0] * FR_INV;
        s = (uint64_t)m * FR_P[0] + t[0];
        c = s >> 32;
#pragma unroll
        for (int j = 1; j < 8; j++) {
            s = (uint64_t)m * FR_P[j] + t[j] + c;
            t[j - 1] = (uint32_t)s;
            c = s >> 32;
        }
        s = (uint64_t)t[8] + c;
        t[7] = (uint32_t)s;
        t[8] = t[9] + (uint32_t)(s >> 32);
    }
    fr_t r;
#pragma unroll
    for (int i = 0; i < 8; i++) r.l[i] = t[i];
    return fr_reduce_once(r);
}

__device__ __forceinline__ fr_t fr_sqr(const fr_t& a) {
    return fr_mul(a, a);
}

// a^e for a 256-bit exponent given as little-endian 32-bit words (a plain integer, not Montgomery).
__device__ __forceinline__ fr_t fr_pow(const fr_t& a, const uint32_t e[8]) {
    fr_t r = fr_one();
    for (int w = 7; w >= 0; w--) {
        for (int b = 31; b >= 0; b--) {
            r = fr_sqr(r);
            if ((e[w] >> b) & 1) r = fr_mul(r, a);
        }
    }
    return r;
}

__device__ __forceinline__ fr_t fr_pow_u64(const fr_t& a, uint64_t e) {
    fr_t r = fr_one();
    fr_t base = a;
    while (e) {
        if (e & 1) r = fr_mul(r, base);
        base = fr_sqr(base);
        e >>= 1;
    }
    return r;
}

// a^(p-2) = a^-1 for a != 0; 0 maps to 0.
__device__ __forceinline__ fr_t fr_inv(const fr_t& a) {
    const uint32_t pm2[8] = {0xffffffff, 0xfffffffe, 0xfffe5bfe, 0x53bda402,
                             0x09a1d805, 0x3339d808, 0x299d7d48, 0x73eda753};
    return fr_pow(a, pm2);
}

}  // namespace cuzk
