// The device arithmetic compiled for the host, for tests only (ntt-cuda's tests/host_emulation.rs checks it against
// blstrs on machines without a GPU, CI included). Define CUZK_HOST_EMU and include this before fr.cuh; build with
// -frounding-math. The CUDA qualifiers become empty, and the intrinsics mont.cuh uses are written out in their
// documented semantics: the directed rounding of __fma_rd through fesetround, the bit casts through memcpy. The carry
// chains (mont.cuh's add_cc and the rest, PTX on the device) share one carry flag, as the device's CC.CF: host code
// runs each chain in program order. What this cannot check is the device compiler itself; the GPU tests do that.
#pragma once
#ifndef CUZK_HOST_EMU
#error "host_emu.h is for host builds of the device arithmetic: define CUZK_HOST_EMU"
#endif
#include <cfenv>
#include <cmath>
#include <cstdint>
#include <cstring>

#define __device__
#define __host__
#define __global__
#define __constant__
#define __forceinline__ inline
#define __noinline__

inline double __fma_rd(double x, double y, double z) {
    std::fesetround(FE_DOWNWARD);
    volatile double r = std::fma(x, y, z);
    std::fesetround(FE_TONEAREST);
    return r;
}
inline double __fma_rn(double x, double y, double z) { return std::fma(x, y, z); }
inline double __dsub_rn(double x, double y) {
    volatile double r = x - y;
    return r;
}
inline long long __double_as_longlong(double d) {
    long long v;
    std::memcpy(&v, &d, sizeof v);
    return v;
}
inline double __hiloint2double(int hi, int lo) {
    const unsigned long long v = ((unsigned long long)(uint32_t)hi << 32) | (uint32_t)lo;
    double d;
    std::memcpy(&d, &v, sizeof d);
    return d;
}
// CUDA's funnel shifts take the shift modulo 32 (the _wrap forms, which these are).
inline uint32_t __funnelshift_r(uint32_t lo, uint32_t hi, uint32_t s) {
    s &= 31;
    return s ? (lo >> s) | (hi << (32 - s)) : lo;
}
inline uint32_t __funnelshift_l(uint32_t lo, uint32_t hi, uint32_t s) {
    s &= 31;
    return s ? (hi << s) | (lo >> (32 - s)) : hi;
}

inline int __clz(int x) { return x ? __builtin_clz((unsigned)x) : 32; }

namespace cuzk {
namespace host_emu {
inline uint32_t carry = 0;  // the carry (add) or borrow (sub) flag, one bit
}
inline uint32_t add_cc(uint32_t a, uint32_t b) {
    const uint64_t s = (uint64_t)a + b;
    host_emu::carry = (uint32_t)(s >> 32);
    return (uint32_t)s;
}
inline uint32_t addc_cc(uint32_t a, uint32_t b) {
    const uint64_t s = (uint64_t)a + b + host_emu::carry;
    host_emu::carry = (uint32_t)(s >> 32);
    return (uint32_t)s;
}
inline uint32_t addc(uint32_t a, uint32_t b) { return a + b + host_emu::carry; }
inline uint32_t sub_cc(uint32_t a, uint32_t b) {
    host_emu::carry = a < b;
    return a - b;
}
inline uint32_t subc_cc(uint32_t a, uint32_t b) {
    const uint64_t d = (uint64_t)a - b - host_emu::carry;
    host_emu::carry = (uint32_t)(d >> 63);
    return (uint32_t)d;
}
inline uint32_t subc(uint32_t a, uint32_t b) { return a - b - host_emu::carry; }
}  // namespace cuzk
