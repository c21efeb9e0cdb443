// The BLS12-381 scalar field on the device, in blstrs's representation:
// 256-bit Montgomery form (R = 2^256), eight 32-bit limbs little-endian, always fully reduced (< p).
// A blstrs::Scalar's bytes are an fr_t's bytes, so scalars cross to the GPU with no conversion.
// The arithmetic itself is mont.cuh's, shared with the base field.
#pragma once
#include <cstdint>

#include "mont.cuh"

namespace cuzk {

struct fr_t {
    uint32_t l[8];
};
static_assert(sizeof(fr_t) == 32, "fr_t must match blstrs::Scalar");

// p = 0x73eda753299d7d483339d80809a1d80553bda402fffe5bfeffffffff00000001
__device__ __constant__ static const uint32_t FR_P[8] = {
    0x00000001, 0xffffffff, 0xfffe5bfe, 0x53bda402, 0x09a1d805, 0x3339d808, 0x299d7d48, 0x73eda753};

struct FrModulus {
    using T = fr_t;
    static constexpr int N = 8;
    static constexpr uint32_t INV = 0xffffffffu;  // -p^-1 mod 2^32
    __device__ __forceinline__ static uint32_t p(int i) { return FR_P[i]; }
    // p in 29-bit limbs, for mont_mul_ul (immediates: the indices are compile-time constants there).
    static constexpr int UL_L = 9, UL_B = 29;
    __device__ __forceinline__ static constexpr uint32_t ul_p(int j) {
        constexpr uint32_t P29[9] = {0x00000001, 0x1ffffff8, 0x1f96ffbf, 0x1b4805ff, 0x1d80553b,
                                     0x0c0404d0, 0x1520cce7, 0x0a6533af, 0x0073eda7};
        return P29[j];
    }
    // p in 52-bit limbs and -p^-1 mod 2^52 and mod 2^48 (the last digit), for mont_mul_f64.
    static constexpr int F64_L = 5;
    static constexpr unsigned long long F64_INV = 0xffffeffffffffull, F64_INV_LAST = 0xfffeffffffffull;
    __device__ __forceinline__ static constexpr unsigned long long f64_p(int j) {
        constexpr unsigned long long P52[5] = {0xfffff00000001ull, 0x2fffe5bfefffull, 0x9a1d80553bda4ull,
                                               0x7d483339d8080ull, 0x73eda753299dull};
        return P52[j];
    }
    // The field product (see mont.cuh for the forms): the unsaturated-limb form, as in the NTT's butterflies (47.7e9
    // products/s against mont_mul's 41.8e9 on the H200). -DCUZK_FR_MUL_CHAINS (through CUZK_NVCC_FLAGS) takes mont_mul
    // again, for measuring the two against each other.
    __device__ __forceinline__ static fr_t mul(const fr_t& a, const fr_t& b) {
#ifdef CUZK_FR_MUL_CHAINS
        return mont_mul<FrModulus>(a, b);
#else
        return mont_mul_ul<FrModulus>(a, b);
#endif
    }
};

// 2p, as a modulus for lazy reduction: values kept below 2p, not p, between products (mont_mul_f64 without REDUCE
// takes a < 2p and returns below 2p), added and subtracted modulo 2p by mont_add and mont_sub, and reduced once
// (mont_reduce_once<FrModulus>) where they leave. 2p < 2^256, but a sum of two values below 2p may carry out of the
// eight words: mont_add passes that carry to mont_reduce_once (when it carries, the low words are below 4p - 2^256 < 2p,
// so the subtraction's borrow cancels it).
__device__ __constant__ static const uint32_t FR_2P[8] = {
    0x00000002, 0xfffffffe, 0xfffcb7fd, 0xa77b4805, 0x1343b00a, 0x6673b010, 0x533afa90, 0xe7db4ea6};

struct Fr2pModulus {
    using T = fr_t;
    static constexpr int N = 8;
    __device__ __forceinline__ static uint32_t p(int i) { return FR_2P[i]; }
};

__device__ __forceinline__ fr_t fr_zero() { return mont_zero<FrModulus>(); }

// R mod p: one in Montgomery form.
__host__ __device__ __forceinline__ fr_t fr_one() {
    const uint32_t one[8] = {0xfffffffe, 0x00000001, 0x00034802, 0x5884b7fa,
                             0xecbc4ff5, 0x998c4fef, 0xacc5056f, 0x1824b159};
    fr_t r;
#pragma unroll
    for (int i = 0; i < 8; i++) r.l[i] = one[i];
    return r;
}

__device__ __forceinline__ bool fr_is_zero(const fr_t& a) { return mont_is_zero<FrModulus>(a); }
__device__ __forceinline__ fr_t fr_add(const fr_t& a, const fr_t& b) { return mont_add<FrModulus>(a, b); }
__device__ __forceinline__ fr_t fr_sub(const fr_t& a, const fr_t& b) { return mont_sub<FrModulus>(a, b); }
__device__ __forceinline__ fr_t fr_neg(const fr_t& a) { return fr_sub(fr_zero(), a); }
__device__ __forceinline__ fr_t fr_mul(const fr_t& a, const fr_t& b) { return FrModulus::mul(a, b); }
__device__ __forceinline__ fr_t fr_sqr(const fr_t& a) { return mont_sqr<FrModulus>(a); }

// a^e for a 256-bit exponent given as little-endian 32-bit words (a plain integer, not Montgomery).
__device__ __forceinline__ fr_t fr_pow(const fr_t& a, const uint32_t e[8]) {
    return mont_pow<FrModulus, 8>(a, e, fr_one());
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
