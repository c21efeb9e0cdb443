// The device code compiled for the host, for tests only: the host_emulation tests of ntt-cuda and msm-cuda
// (test_utils::host_emu builds them) check the field and curve arithmetic and the NTT's pass kernel against blst,
// blstrs and the CPU transform on machines without a GPU, CI included. Define CUZK_HOST_EMU and include this before
// any device header; build with -frounding-math (so that no rounding is folded across fesetround) and -pthread. The CUDA qualifiers become empty, and the intrinsics mont.cuh uses are written out in their
// documented semantics: the directed rounding of __fma_rd through fesetround, the bit casts through memcpy. The carry
// chains (mont.cuh's add_cc and the rest, PTX on the device) keep a carry flag per host thread, as the device's CC.CF
// per thread: host code runs each chain in program order. Kernels run through host_emu::launch: a host thread per
// CUDA thread of a block, blocks one after another, __syncthreads a barrier of the block's threads, and shared memory
// a global array the kernel's `extern __shared__` names (the program defines it). What this cannot check is the
// device compiler and the device's own scheduling; the GPU tests do that.
#pragma once
#ifndef CUZK_HOST_EMU
#error "host_emu.h is for host builds of the device arithmetic: define CUZK_HOST_EMU"
#endif
#include <cfenv>
#include <cmath>
#include <condition_variable>
#include <cstdint>
#include <cstring>
#include <mutex>
#include <thread>
#include <vector>

#define __device__
#define __host__
#define __global__
#define __constant__
#define __forceinline__ inline
#define __noinline__
#define __shared__
#define __launch_bounds__(...)

struct uint4 {
    uint32_t x, y, z, w;
};
inline uint4 make_uint4(uint32_t x, uint32_t y, uint32_t z, uint32_t w) { return uint4{x, y, z, w}; }
struct dim3 {
    uint32_t x, y, z;
    dim3(uint32_t x_ = 1, uint32_t y_ = 1, uint32_t z_ = 1) : x(x_), y(y_), z(z_) {}
};
inline thread_local dim3 threadIdx{0, 0, 0}, blockIdx{0, 0, 0};
inline dim3 blockDim, gridDim;

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
// The clamping form: shifts of 32 and more give hi.
inline uint32_t __funnelshift_rc(uint32_t lo, uint32_t hi, uint32_t s) {
    if (s >= 32) return hi;
    return s == 0 ? lo : (lo >> s) | (hi << (32 - s));
}
inline uint32_t __funnelshift_l(uint32_t lo, uint32_t hi, uint32_t s) {
    s &= 31;
    return s ? (hi << s) | (lo >> (32 - s)) : hi;
}

inline int __clz(int x) { return x ? __builtin_clz((unsigned)x) : 32; }
inline uint32_t __brev(uint32_t x) {
    uint32_t r = 0;
    for (int i = 0; i < 32; i++) r |= ((x >> i) & 1u) << (31 - i);
    return r;
}

namespace cuzk {
namespace host_emu {
inline thread_local uint32_t carry = 0;  // the carry (add) or borrow (sub) flag, one bit

// A reusable barrier for a fixed number of threads.
class Barrier {
   public:
    explicit Barrier(uint32_t count) : count_(count) {}
    void wait() {
        std::unique_lock<std::mutex> lock(m_);
        const uint64_t gen = gen_;
        if (++arrived_ == count_) {
            arrived_ = 0;
            gen_++;
            cv_.notify_all();
        } else {
            cv_.wait(lock, [&] { return gen_ != gen; });
        }
    }

   private:
    std::mutex m_;
    std::condition_variable cv_;
    uint32_t count_, arrived_ = 0;
    uint64_t gen_ = 0;
};
inline Barrier* block_barrier = nullptr;

// Runs `body` (the kernel, arguments bound) as grid x threads CUDA threads: one host thread per thread of a block,
// the blocks one after another, a barrier between blocks so that shared memory passes whole from one to the next.
template <class Body>
void launch(dim3 grid, uint32_t threads, Body body) {
    blockDim = dim3(threads);
    gridDim = grid;
    Barrier barrier(threads);
    block_barrier = &barrier;
    std::vector<std::thread> pool;
    for (uint32_t t = 0; t < threads; t++) {
        pool.emplace_back([&, t] {
            threadIdx = dim3(t, 0, 0);
            for (uint32_t y = 0; y < grid.y; y++) {
                for (uint32_t x = 0; x < grid.x; x++) {
                    blockIdx = dim3(x, y, 0);
                    body();
                    barrier.wait();
                }
            }
        });
    }
    for (auto& th : pool) th.join();
    block_barrier = nullptr;
}
}  // namespace host_emu
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
inline uint32_t opaque(uint32_t x) { return x; }
}  // namespace cuzk

inline void __syncthreads() { cuzk::host_emu::block_barrier->wait(); }
