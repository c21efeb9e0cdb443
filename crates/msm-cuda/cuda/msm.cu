// Multi-scalar multiplication on the GPU: Pippenger's bucket method with signed digits, written once over G1 and G2.
//
// One MSM, all on the set's stream (but for a chunked upload's copies):
//   1. classify: scalars leave Montgomery form; zeros are dropped, ones (with split) listed, the rest counted. Host
//      scalars of large MSMs go up in chunks on a copy stream, and each chunk is classified and its digits staged
//      for the sort as it lands (upload_and_stage).
//   2. sort: a counting sort of (window, bucket) digits: counts, exclusive scan, scatter of point indices
//      (the sign of the digit in the top bit). Each bucket's points end up contiguous. Dense MSMs count and scatter
//      in block-aggregated passes through a stage (sort_staged), sparse ones with an atomic a digit (histogram_kernel,
//      scatter_kernel).
//   3. accumulate: each bucket's list is cut into tasks of bounded length, one thread each (longest first), summing
//      points with mixed XYZZ additions; further levels sum the tasks' partials until each bucket has one value (hot
//      buckets, such as the few of the top window or those of a repeated scalar, are shared out instead of walked by
//      one thread).
//   4. reduce: per window, sum over buckets of b * bucket_b, in segments of L buckets (running sums, then the
//      segment's offset times its plain sum; L from the card's resident threads, see weighted_segment), then levels
//      of pairwise plain sums until at most 32 partial sums per window.
//   5. ones: the bases of scalar-1 entries summed directly (G1: by batch-affine rounds over chunks of the list when
//      there are many, see ones_by_rounds), reduced the same way.
// The host combines the few partial sums per window (Horner over windows) with blstrs.
#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_scan.cuh>
#include <cuda/std/functional>
#include <cuda_runtime.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <vector>
#include <type_traits>

#include "curve.cuh"
#include "device_mem.cuh"
#include "env_switch.cuh"
#include "field_test_ops.cuh"
#include "fr.cuh"
#include "msm.h"
#include "once_per_device.cuh"
#include "status.cuh"
#include "stream.cuh"

using namespace cuzk;


namespace {

constexpr uint32_t SEGMENT = 32;    // partial sums a window returns at most, and the XYZZ task levels' fan-in
constexpr uint32_t MAX_WINDOW = 24;  // bucket counts stay far inside 32-bit indices

// 16-byte loads and stores of values whose size is a multiple of 16 at 16-byte aligned addresses (device buffers,
// and arrays of 48-, 96- and 192-byte elements in them): a quarter of the memory instructions of word accesses.
// RO: through the read-only data cache (memory no thread writes during the kernel).
template <class T, bool RO = true>
__device__ __forceinline__ T load16(const T* p) {
    static_assert(sizeof(T) % 16 == 0, "16-byte multiple");
    T r;
    const uint4* src = reinterpret_cast<const uint4*>(p);
    uint4* dst = reinterpret_cast<uint4*>(&r);
#pragma unroll
    for (int i = 0; i < (int)(sizeof(T) / 16); i++) dst[i] = RO ? __ldg(src + i) : src[i];
    return r;
}

template <class T>
__device__ __forceinline__ void store16(T* p, const T& v) {
    static_assert(sizeof(T) % 16 == 0, "16-byte multiple");
    const uint4* src = reinterpret_cast<const uint4*>(&v);
    uint4* dst = reinterpret_cast<uint4*>(p);
#pragma unroll
    for (int i = 0; i < (int)(sizeof(T) / 16); i++) dst[i] = src[i];
}

// ---------------------------------------------------------------------------------------------------------------
// Scalars and digits.

__device__ __forceinline__ fr_t fr_from_mont(const fr_t& a) {
    fr_t one_raw = fr_zero();
    one_raw.l[0] = 1;
    return fr_mul(a, one_raw);
}

__device__ __forceinline__ bool fr_is_raw_one(const fr_t& a) {
    uint32_t acc = a.l[0] ^ 1;
#pragma unroll
    for (int i = 1; i < 8; i++) acc |= a.l[i];
    return acc == 0;
}

__device__ __forceinline__ uint32_t bits_at(const uint32_t* limbs, uint32_t pos, uint32_t c) {
    uint32_t k = pos >> 5, sh = pos & 31;
    uint64_t lo = k < 8 ? limbs[k] : 0;
    uint64_t hi = k + 1 < 8 ? limbs[k + 1] : 0;
    return (uint32_t)(((lo | (hi << 32)) >> sh) & ((1ull << c) - 1));
}

// Calls fn(window, |digit|, negative) for each non-zero signed digit of a canonical scalar in windows [from, to).
// Digits lie in [-(2^(c-1) - 1), 2^(c-1)]; windows * c >= 256 > 255 bits leaves no carry out of the top window. The
// carries run from window 0 whatever `from` is, so a range gives the same digits as the whole scalar's walk.
template <class Fn>
__device__ __forceinline__ void for_each_digit_in(const fr_t& s, uint32_t c, uint32_t from, uint32_t to, Fn fn) {
    uint32_t carry = 0;
    const uint32_t half = 1u << (c - 1);
    for (uint32_t w = 0; w < to; w++) {
        uint32_t d = bits_at(s.l, w * c, c) + carry;
        bool neg = d > half;
        if (neg) {
            d = (1u << c) - d;
            carry = 1;
        } else {
            carry = 0;
        }
        if (w >= from && d != 0) fn(w, d, neg);
    }
}

template <class Fn>
__device__ __forceinline__ void for_each_digit(const fr_t& s, uint32_t c, uint32_t windows, Fn fn) {
    for_each_digit_in(s, c, 0, windows, fn);
}

// Scalar arrays are read and written 16 bytes at a time (fr_t itself is only 4-byte aligned, so a plain copy is
// eight word accesses): device allocations are 256-byte aligned, and run_msm checks the caller's pointer (in16).
// Scalars [0, n) of `in` are the MSM's scalars [i0, i0 + n) (a chunk of an upload, see upload_and_stage): the ones
// list takes their indices in the whole MSM, times `stride` (the tables a base has in a set of window tables, where
// base i's own point is at i * stride; 1 otherwise).
__global__ void classify_kernel(const fr_t* __restrict__ in, bool in16, fr_t* __restrict__ canon, uint32_t n,
                                int split, uint32_t* __restrict__ ones_list, uint32_t* __restrict__ counters,
                                uint32_t i0, uint32_t stride) {
    uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
    bool one = false, other = false;
    if (i < n) {
        fr_t c = fr_from_mont(in16 ? load16(&in[i]) : in[i]);
        store16(&canon[i], c);
        if (!fr_is_zero(c)) {
            one = split && fr_is_raw_one(c);
            other = !one;
        }
    }
    // Block-aggregated counters: one atomic on each of the two counters a block, not a warp. With one a warp, the
    // 2 x 2^19 atomics of a 2^24 PoRep-like MSM queued on two addresses and the kernel took 0.93 ms, for 0.5 GB read.
    __shared__ uint32_t warp_ones[32], warp_others[32];
    __shared__ uint32_t block_base;
    const uint32_t lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    const uint32_t ones_mask = __ballot_sync(0xffffffffu, one);
    const uint32_t others_mask = __ballot_sync(0xffffffffu, other);
    if (lane == 0) {
        warp_ones[warp] = __popc(ones_mask);
        warp_others[warp] = __popc(others_mask);
    }
    __syncthreads();
    if (threadIdx.x == 0) {
        uint32_t before = 0, others = 0;
        for (uint32_t w = 0; w < (blockDim.x + 31) / 32; w++) {
            const uint32_t k = warp_ones[w];
            warp_ones[w] = before;  // the warp's first position in the block's run
            before += k;
            others += warp_others[w];
        }
        block_base = before ? atomicAdd(&counters[0], before) : 0;
        if (others) atomicAdd(&counters[1], others);
    }
    __syncthreads();
    if (one) ones_list[block_base + warp_ones[warp] + __popc(ones_mask & ((1u << lane) - 1))] = (i0 + i) * stride;
}

__device__ __forceinline__ bool is_pippenger(const fr_t& c, int split) {
    return !fr_is_zero(c) && !(split && fr_is_raw_one(c));
}

__global__ void histogram_kernel(const fr_t* __restrict__ canon, uint32_t n, int split, uint32_t c,
                                 uint32_t windows, uint32_t buckets, uint32_t* __restrict__ counts) {
    uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    fr_t s = load16(&canon[i]);
    if (!is_pippenger(s, split)) return;
    for_each_digit(s, c, windows, [&](uint32_t w, uint32_t d, bool) { atomicAdd(&counts[w * buckets + d], 1u); });
}

// Blocks of grid row y scatter windows [y * group, (y + 1) * group). Blocks start roughly in index order, so the
// card works on about one group at a time, and the write fronts of that group's buckets (a partly filled 32-byte
// sector each) and their cursors stay in L2. With all 13 windows of a 2^26 MSM at once, 6.8M fronts (218 MB)
// overflowed the 50 MB L2 and the scatter took 75 ms (ncu: L2 hit rate 63 %, warps stalled 518 cycles an instruction
// on the cursor atomics); a window at a time, the whole sort takes 54.5 ms where it took 83.4 (H200, 2026-12-02). The
// price is a read of the scalars per group (scatter_group chooses).
__global__ void scatter_kernel(const fr_t* __restrict__ canon, uint32_t n, int split, uint32_t c, uint32_t windows,
                               uint32_t group, uint32_t buckets, uint32_t* __restrict__ cursor,
                               uint32_t* __restrict__ entries) {
    uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    fr_t s = load16(&canon[i]);
    if (!is_pippenger(s, split)) return;
    uint32_t from = blockIdx.y * group, to = min(windows, from + group);
    for_each_digit_in(s, c, from, to, [&](uint32_t w, uint32_t d, bool neg) {
        uint32_t pos = atomicAdd(&cursor[w * buckets + d], 1u);
        entries[pos] = i | (neg ? 0x80000000u : 0u);
    });
}

// The staged sort: the same counting sort as scatter_kernel, in two scatters whose global atomics each reserve a run
// of entries for a block instead of one entry for a thread, and whose writes are coalesced. scatter_kernel's atomics
// (one answered atomic a digit, 8.7e8 at 2^26) were most of the sort: 45.7 of 54.5 ms at 2^26 (ncu, H200).
//   Pass A (stage_coarse_kernel): a block takes STAGE_SCALARS scalars and, one window at a time, sorts their digits
//     by coarse bin (2^s consecutive buckets) in shared memory; one global atomic per non-empty bin reserves the
//     block's run there, and the sorted tile goes out to the stage as (bucket key, entry) in runs.
//     The stage holds a group of windows' entries in the final layout's order of coarse bins, unordered in a bin.
//   Pass B (stage_fine_kernel): a block takes STAGE_ENTRIES consecutive stage entries, whose keys lie in a few
//     consecutive coarse bins, sorts them by bucket in shared memory, reserves a run per bucket with one global
//     atomic, and writes the entries to `entries` in runs.
// The counts the passes start from come without a per-digit histogram: the coarse bins' counts from a block-aggregated
// count of the scalars' digits (coarse_histogram_kernel), before pass A, and each group's bucket counts from its stage
// (stage_count_kernel), before pass B. See sort_staged.
// With s = c / 2 each pass sorts by about 2^(c/2) keys. On the H200 (2026-12-03, BENCHMARKS.md) the sort phase of a
// 2^26 random MSM went from 54.7 to 22.5 ms and 2^24's from 10.4 to 6.2 ms. Pass A re-reads its tile's scalars for
// each window: with 4096 scalars a block they came from DRAM (32 GB at 2^26 by ncu; sort 24.9 ms), with 2048 the
// sort is 22.5 ms (not profiled; the tiles in flight are half the size against a 50 MB L2). Windows of a group share
// the stage only: the group's size made no measurable difference (one window at a time: 25.4 against 24.9 ms).
constexpr uint32_t STAGE_THREADS = 256;
constexpr uint32_t STAGE_PER_A = 8;  // 2^26 sort 22.5 ms, against 24.9 ms with 16
constexpr uint32_t STAGE_SCALARS = STAGE_THREADS * STAGE_PER_A;
constexpr uint32_t STAGE_PER_B = 32;
constexpr uint32_t STAGE_ENTRIES = STAGE_THREADS * STAGE_PER_B;
constexpr uint32_t STAGE_SPAN_B = 4096;  // the keys a pass-B tile may span and still sort in shared memory
constexpr uint32_t NO_KEY = 0xffffffffu;

__host__ __device__ inline uint32_t stage_shift(uint32_t c) { return c / 2; }
__host__ __device__ inline uint32_t stage_coarse(uint32_t c) { return ((1u << (c - 1)) >> stage_shift(c)) + 1; }

// Window w's signed digit of a canonical scalar, as for_each_digit_in walks it. The carry into window w is 1 when
// window w - 1's bits exceed half, 0 when below, and window w - 2's carry when equal: so only the windows below w down
// to the first whose bits differ from half are read (almost always one).
__device__ __forceinline__ uint32_t signed_digit_at(const fr_t& s, uint32_t c, uint32_t w, bool* neg) {
    const uint32_t half = 1u << (c - 1);
    uint32_t carry = 0;
    for (int j = (int)w - 1; j >= 0; j--) {
        uint32_t b = bits_at(s.l, (uint32_t)j * c, c);
        if (b != half) {
            carry = b > half;
            break;
        }
    }
    uint32_t d = bits_at(s.l, w * c, c) + carry;
    *neg = d > half;
    return *neg ? (1u << c) - d : d;
}

// Exclusive prefix sums of a[0 .. m) in place, by the whole block (STAGE_THREADS threads); returns the total.
// tmp: 8 words of shared memory.
__device__ uint32_t block_exclusive_scan(uint32_t* a, uint32_t m, uint32_t* tmp) {
    const uint32_t t = threadIdx.x, q = (m + STAGE_THREADS - 1) / STAGE_THREADS;
    const uint32_t b = min(m, t * q), e = min(m, b + q);
    uint32_t sum = 0;
    for (uint32_t i = b; i < e; i++) sum += a[i];
    const uint32_t lane = t & 31, warp = t >> 5;
    uint32_t x = sum;
#pragma unroll
    for (int o = 1; o < 32; o <<= 1) {
        uint32_t y = __shfl_up_sync(0xffffffffu, x, o);
        if (lane >= (uint32_t)o) x += y;
    }
    if (lane == 31) tmp[warp] = x;
    __syncthreads();
    if (warp == 0) {
        uint32_t y = lane < STAGE_THREADS / 32 ? tmp[lane] : 0;
#pragma unroll
        for (int o = 1; o < 32; o <<= 1) {
            uint32_t z = __shfl_up_sync(0xffffffffu, y, o);
            if (lane >= (uint32_t)o) y += z;
        }
        if (lane < STAGE_THREADS / 32) tmp[lane] = y;
    }
    __syncthreads();
    uint32_t run = x - sum + (warp ? tmp[warp - 1] : 0);
    for (uint32_t i = b; i < e; i++) {
        uint32_t v = a[i];
        a[i] = run;
        run += v;
    }
    uint32_t total = tmp[STAGE_THREADS / 32 - 1];
    __syncthreads();
    return total;
}

// Digit counts of coarse bins (2^s consecutive buckets, see stage_coarse), bins[w * coarse + b] for window w, for the
// staged sort: a block counts its scalars' digits of every window in shared memory, then adds its non-zero counts to
// `bins` with one global atomic each. The per-bucket histogram (histogram_kernel) takes one global atomic a digit: at
// 2^27 random that is 1.7e9 atomics on 6.8M counters, 17.5 ms at the L2's atomic rate (ncu, H200, 2026-12-04), more
// than a third of the sort. The staged sort now takes the buckets' counts from its stage instead (stage_count_kernel).
// Dynamic shared memory: windows * coarse words (coarse_histogram_smem). Grid-stride over the scalars.
// merge = W > 0 (an MSM over window tables, see cuzk_msm_bases_create_tables): the digits of W windows all count in
// window 0's bins (`windows` is then 1).
inline size_t coarse_histogram_smem(uint32_t c) { return (size_t)((256 + c - 1) / c) * stage_coarse(c) * 4; }

__global__ void __launch_bounds__(256) coarse_histogram_kernel(const fr_t* __restrict__ canon, uint32_t n, int split,
                                                               uint32_t c, uint32_t windows, uint32_t merge,
                                                               uint32_t* __restrict__ bins) {
    extern __shared__ uint32_t cnt[];
    const uint32_t coarse = stage_coarse(c), s = stage_shift(c), m = windows * coarse;
    for (uint32_t i = threadIdx.x; i < m; i += blockDim.x) cnt[i] = 0;
    __syncthreads();
    for (uint64_t i = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (uint64_t)gridDim.x * blockDim.x) {
        const fr_t sc = load16(&canon[i]);
        if (!is_pippenger(sc, split)) continue;
        for_each_digit(sc, c, merge ? merge : windows,
                       [&](uint32_t w, uint32_t d, bool) { atomicAdd(&cnt[(merge ? 0 : w) * coarse + (d >> s)], 1u); });
    }
    __syncthreads();
    for (uint32_t i = threadIdx.x; i < m; i += blockDim.x)
        if (cnt[i]) atomicAdd(&bins[i], cnt[i]);
}

// Shared memory of stage_coarse_kernel: two counters a coarse bin, the scan's 8 words, the sorted tile.
inline size_t stage_coarse_smem(uint32_t c) {
    return ((size_t)2 * stage_coarse(c) + 8) * 4 + (size_t)STAGE_SCALARS * sizeof(uint2);
}

// Windows [w0, w0 + g) of scalars [blockIdx.x * STAGE_SCALARS, ...) to stage[pos - base], where pos is the entry's
// place in the whole layout's coarse bin (base: where window w0 starts). The scalars are the MSM's from index i0 on.
// merge = W > 0 (window tables; w0 = 0, g = W): every window's digits go to window 0's bins, entry i * W + w (the
// table point 2^(cw) P_i).
__global__ void __launch_bounds__(STAGE_THREADS) stage_coarse_kernel(const fr_t* __restrict__ canon, uint32_t n,
                                                                     int split, uint32_t c, uint32_t w0, uint32_t g,
                                                                     uint32_t buckets, uint32_t* __restrict__ seg_cursor,
                                                                     uint32_t base, uint2* __restrict__ stage,
                                                                     uint32_t i0, uint32_t merge) {
    extern __shared__ uint32_t smem[];
    const uint32_t coarse = stage_coarse(c), s = stage_shift(c);
    uint32_t* off = smem;              // counts, then where each bin starts in the sorted tile
    uint32_t* run = smem + coarse;     // where the block's run of each bin starts in the stage
    uint32_t* tmp = smem + 2 * coarse;
    uint2* tile = reinterpret_cast<uint2*>(smem + ((2 * coarse + 8 + 1) & ~1u));
    const uint32_t first = blockIdx.x * STAGE_SCALARS;
    for (uint32_t w = w0; w < w0 + g; w++) {
        const uint32_t ow = merge ? 0 : w;  // the window whose bins and keys the digits go to
        for (uint32_t h = threadIdx.x; h < coarse; h += STAGE_THREADS) off[h] = 0;
        __syncthreads();
        uint32_t key[STAGE_PER_A], entry[STAGE_PER_A], rank[STAGE_PER_A];
#pragma unroll
        for (uint32_t j = 0; j < STAGE_PER_A; j++) {
            uint32_t i = first + j * STAGE_THREADS + threadIdx.x;
            key[j] = NO_KEY;
            if (i < n) {
                fr_t sc = load16(&canon[i]);
                if (is_pippenger(sc, split)) {
                    bool neg;
                    uint32_t d = signed_digit_at(sc, c, w, &neg);
                    if (d) {
                        key[j] = d;
                        entry[j] = (merge ? (i0 + i) * merge + w : i0 + i) | (neg ? 0x80000000u : 0u);
                        rank[j] = atomicAdd(&off[d >> s], 1u);
                    }
                }
            }
        }
        __syncthreads();
        for (uint32_t h = threadIdx.x; h < coarse; h += STAGE_THREADS) {
            uint32_t k = off[h];
            run[h] = k ? atomicAdd(&seg_cursor[ow * coarse + h], k) - base : 0;
        }
        const uint32_t total = block_exclusive_scan(off, coarse, tmp);
#pragma unroll
        for (uint32_t j = 0; j < STAGE_PER_A; j++)
            if (key[j] != NO_KEY) tile[off[key[j] >> s] + rank[j]] = make_uint2(ow * buckets + key[j], entry[j]);
        __syncthreads();
        for (uint32_t j = threadIdx.x; j < total; j += STAGE_THREADS) {
            uint2 e = tile[j];
            uint32_t bin = (e.x - ow * buckets) >> s;
            stage[run[bin] + (j - off[bin])] = e;
        }
        __syncthreads();
    }
}

// A chunk's coarse bins' counts (m = windows * coarse of them, window after window) to pass A's cursors: each bin's
// place in a stage that holds the chunks one after another, each chunk's entries in the whole layout's order. *end
// is where the chunk starts, and becomes where the next one starts. One block of STAGE_THREADS threads.
__global__ void __launch_bounds__(STAGE_THREADS) chunk_cursor_kernel(const uint32_t* __restrict__ bins, uint32_t m,
                                                                     uint32_t* __restrict__ cursor,
                                                                     uint32_t* __restrict__ end) {
    __shared__ uint32_t tmp[8];
    __shared__ uint32_t base;
    for (uint32_t i = threadIdx.x; i < m; i += STAGE_THREADS) cursor[i] = bins[i];
    if (threadIdx.x == 0) base = *end;
    __syncthreads();
    const uint32_t total = block_exclusive_scan(cursor, m, tmp);
    for (uint32_t i = threadIdx.x; i < m; i += STAGE_THREADS) cursor[i] += base;
    if (threadIdx.x == 0) *end = base + total;
}

// The segments of a stage written chunk by chunk (StageMap), once every chunk is in: bin b's run in chunk k, of
// counts[k * bins + b] entries ending at cursor[k * bins + b] (pass A's cursor after the chunk), is segment
// b * chunks + k. tot: `bins` words of scratch. One block of STAGE_THREADS threads.
__global__ void __launch_bounds__(STAGE_THREADS) stage_segments_kernel(const uint32_t* __restrict__ counts,
                                                                       const uint32_t* __restrict__ cursor,
                                                                       uint32_t bins, uint32_t chunks,
                                                                       uint32_t* __restrict__ tot,
                                                                       uint2* __restrict__ seg) {
    __shared__ uint32_t tmp[8];
    for (uint32_t b = threadIdx.x; b < bins; b += STAGE_THREADS) {
        uint32_t sum = 0;
        for (uint32_t k = 0; k < chunks; k++) sum += counts[k * bins + b];
        tot[b] = sum;
    }
    __syncthreads();
    const uint32_t total = block_exclusive_scan(tot, bins, tmp);
    for (uint32_t b = threadIdx.x; b < bins; b += STAGE_THREADS) {
        uint32_t v = tot[b];
        for (uint32_t k = 0; k < chunks; k++) {
            const uint32_t n = counts[k * bins + b];
            seg[b * chunks + k] = make_uint2(v, cursor[k * bins + b] - n);
            v += n;
        }
    }
    if (threadIdx.x == 0) seg[bins * chunks] = make_uint2(total, 0);
}

// Where pass B reads its entries. A stage written chunk by chunk (upload_and_stage) holds each coarse bin in one run
// per chunk; pass B reads it in the whole layout's order (window, bin, then chunk) through segments: segment
// q = bin * chunks + chunk starts at seg[q].x in that order and at seg[q].y in the stage, and seg[nseg].x is the
// stage's length (stage_segments_kernel). Read so, each bin's tiles run one after another and write each bucket's
// entries in one stretch, as over a stage made whole. Without segments (sort_staged's stage, in that order already)
// entry e sits at e.
struct StageMap {
    const uint2* __restrict__ seg;
    uint32_t nseg;

    // The last segment that starts at or before e, of [lo, nseg) (seg[lo].x <= e).
    __device__ uint32_t find(uint32_t e, uint32_t lo = 0) const {
        uint32_t hi = nseg;
        while (hi - lo > 1) {
            const uint32_t mid = lo + (hi - lo) / 2;
            if (seg[mid].x <= e) lo = mid;
            else hi = mid;
        }
        return lo;
    }

    // Entry e's place in the stage; q is a segment at or before e's, and becomes e's (entries taken in order walk a
    // few segments forward; a longer way, over empty bins, is searched).
    __device__ __forceinline__ uint32_t at(uint32_t e, uint32_t& q) const {
        if (!seg) return e;
        for (int steps = 0; seg[q + 1].x <= e; steps++) {
            if (steps == 4) {
                q = find(e, q + 1);
                break;
            }
            q++;
        }
        return seg[q].y + (e - seg[q].x);
    }
};

// The stage entries [first, last) of [0, len) that a pass-B block (blockIdx.x) takes, and the keys they can hold: read
// in the layout's order (StageMap), so every key of the tile lies in [lo, lo + span), from the start of the first
// entry's bin to the end of the last entry's. The kernels still check every key against the span, and a tile with a
// key outside it takes the per-entry path: an unordered stage costs time, not correctness. q: the first entry's
// segment.
struct StageTile {
    uint32_t first, last, lo, span, q;
    __device__ __forceinline__ StageTile(const uint2* __restrict__ stage, const StageMap& m, uint32_t len,
                                         uint32_t buckets, uint32_t c) {
        const uint32_t s = stage_shift(c);
        auto bin_start = [&](uint32_t key) {
            const uint32_t w = key / buckets;
            return w * buckets + (((key - w * buckets) >> s) << s);
        };
        first = blockIdx.x * STAGE_ENTRIES;
        last = min(len, first + STAGE_ENTRIES);
        q = m.seg ? m.find(first) : 0;
        uint32_t q_last = q;
        lo = bin_start(stage[m.at(first, q)].x);
        span = bin_start(stage[m.at(last - 1, q_last)].x) + (1u << s) - lo;
    }
};

// The buckets' digit counts of a group's stage (pass B's tiles): counts[key] += the entries with that key. A tile
// counts its keys in shared memory and adds each non-zero count with one global atomic (a tile spanning more than
// STAGE_SPAN_B keys or holding a key outside its span, as in stage_fine_kernel, adds each entry alone). Reading the
// stage again (8 bytes an entry) costs less than the per-digit atomics of histogram_kernel (see
// coarse_histogram_kernel).
__global__ void __launch_bounds__(STAGE_THREADS) stage_count_kernel(const uint2* __restrict__ stage, StageMap m,
                                                                    uint32_t len, uint32_t buckets, uint32_t c,
                                                                    uint32_t* __restrict__ counts) {
    __shared__ uint32_t off[STAGE_SPAN_B];
    const StageTile t(stage, m, len, buckets, c);
    uint32_t key[STAGE_PER_B];  // all loads in flight before the first atomic
    bool fits = t.span <= STAGE_SPAN_B;
    uint32_t q = t.q;
#pragma unroll
    for (uint32_t j = 0; j < STAGE_PER_B; j++) {
        const uint32_t e = t.first + j * STAGE_THREADS + threadIdx.x;
        key[j] = e < t.last ? stage[m.at(e, q)].x : NO_KEY;
        fits &= key[j] == NO_KEY || key[j] - t.lo < t.span;
    }
    if (!__syncthreads_and(fits)) {  // the same for the whole block: no barrier below is skipped by part of it
#pragma unroll
        for (uint32_t j = 0; j < STAGE_PER_B; j++)
            if (key[j] != NO_KEY) atomicAdd(&counts[key[j]], 1u);
        return;
    }
    for (uint32_t h = threadIdx.x; h < t.span; h += STAGE_THREADS) off[h] = 0;
    __syncthreads();
#pragma unroll
    for (uint32_t j = 0; j < STAGE_PER_B; j++)
        if (key[j] != NO_KEY) atomicAdd(&off[key[j] - t.lo], 1u);
    __syncthreads();
    for (uint32_t h = threadIdx.x; h < t.span; h += STAGE_THREADS)
        if (off[h]) atomicAdd(&counts[t.lo + h], off[h]);
}

// Shared memory of stage_fine_kernel: two counters a key of the span, the scan's 8 words, the sorted tile.
constexpr size_t STAGE_FINE_SMEM = ((size_t)2 * STAGE_SPAN_B + 8) * 4 + (size_t)STAGE_ENTRIES * sizeof(uint2);

// Stage entries [blockIdx.x * STAGE_ENTRIES, ...) of [0, len) to their buckets' runs in `entries` (cursor:
// where each bucket's next entry goes, absolute). A tile whose keys span more than STAGE_SPAN_B (tiny coarse bins, as
// in a small MSM), or that holds a key outside its span (see StageTile), places each entry with its own atomic instead.
__global__ void __launch_bounds__(STAGE_THREADS) stage_fine_kernel(const uint2* __restrict__ stage, StageMap m,
                                                                   uint32_t len, uint32_t buckets,
                                                                   uint32_t c, uint32_t* __restrict__ cursor,
                                                                   uint32_t* __restrict__ entries) {
    extern __shared__ uint32_t smem[];
    uint32_t* off = smem;
    uint32_t* run = smem + STAGE_SPAN_B;
    uint32_t* tmp = smem + 2 * STAGE_SPAN_B;
    uint2* tile = reinterpret_cast<uint2*>(smem + 2 * STAGE_SPAN_B + 8);
    const StageTile t(stage, m, len, buckets, c);
    const uint32_t first = t.first, last = t.last, lo = t.lo, span = t.span;
    uint2 v[STAGE_PER_B];
    bool fits = span <= STAGE_SPAN_B;
    uint32_t q = t.q;
#pragma unroll
    for (uint32_t j = 0; j < STAGE_PER_B; j++) {
        uint32_t e = first + j * STAGE_THREADS + threadIdx.x;
        v[j] = e < last ? stage[m.at(e, q)] : make_uint2(NO_KEY, 0);
        fits &= v[j].x == NO_KEY || v[j].x - lo < span;
    }
    if (!__syncthreads_and(fits)) {
#pragma unroll
        for (uint32_t j = 0; j < STAGE_PER_B; j++)
            if (v[j].x != NO_KEY) entries[atomicAdd(&cursor[v[j].x], 1u)] = v[j].y;
        return;
    }
    for (uint32_t h = threadIdx.x; h < span; h += STAGE_THREADS) off[h] = 0;
    __syncthreads();
    uint32_t rank[STAGE_PER_B];
#pragma unroll
    for (uint32_t j = 0; j < STAGE_PER_B; j++)
        if (v[j].x != NO_KEY) rank[j] = atomicAdd(&off[v[j].x - lo], 1u);
    __syncthreads();
    for (uint32_t h = threadIdx.x; h < span; h += STAGE_THREADS) {
        uint32_t k = off[h];
        run[h] = k ? atomicAdd(&cursor[lo + h], k) : 0;
    }
    const uint32_t total = block_exclusive_scan(off, span, tmp);
#pragma unroll
    for (uint32_t j = 0; j < STAGE_PER_B; j++)
        if (v[j].x != NO_KEY) tile[off[v[j].x - lo] + rank[j]] = v[j];
    __syncthreads();
    for (uint32_t j = threadIdx.x; j < total; j += STAGE_THREADS) {
        uint2 e = tile[j];
        uint32_t k = e.x - lo;
        entries[run[k] + (j - off[k])] = e.y;
    }
}

// ---------------------------------------------------------------------------------------------------------------
// Buckets and their reduction.

// Load balance: a bucket's list is cut into tasks of at most k entries, so that no thread walks a hot bucket alone
// (the top window of a scalar has few bits, so its few buckets share every point; repeated scalars do the same).
// Level 0 sums points into one partial per task; each further level sums up to 32 partials per task, until every
// bucket has one.

// Level 0 runs its tasks longest first (the order from a radix sort of their lengths): a warp's threads then walk
// lists of nearly equal length and none idles while one finishes a long bucket (without it, 9 % of the lanes idled
// at 2^24 by ncu, more at 2^26 where buckets average 128 points), and the longest tasks start in the first wave.
// On the H200 (2026-12-01): accumulation 2^24 217 -> 186 ms, 2^26 809 -> 604 ms (BENCHMARKS.md).

// Sort keys for that order: task i's length, and i.
__global__ void task_len_kernel(const uint32_t* __restrict__ counts, const uint32_t* __restrict__ toff,
                                const uint32_t* __restrict__ task_bucket, uint32_t ntasks, uint32_t k,
                                uint32_t* __restrict__ keys, uint32_t* __restrict__ index) {
    uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= ntasks) return;
    uint32_t b = task_bucket[i];
    keys[i] = min(k, counts[b] - (i - toff[b]) * k);
    index[i] = i;
}

// tcount[b] = ceil(counts[b] / k); the largest goes to *max_out.
__global__ void task_count_kernel(const uint32_t* __restrict__ counts, uint32_t total, uint32_t k,
                                  uint32_t* __restrict__ tcount, uint32_t* __restrict__ max_out) {
    uint32_t t = blockIdx.x * blockDim.x + threadIdx.x;
    uint32_t tc = t < total ? (counts[t] + k - 1) / k : 0;
    if (t < total) tcount[t] = tc;
    for (int o = 16; o > 0; o >>= 1) tc = max(tc, __shfl_xor_sync(0xffffffffu, tc, o));
    if ((threadIdx.x & 31) == 0 && tc) atomicMax(max_out, tc);
}

// task_bucket[toff[b] + j] = b for each of bucket b's tasks.
__global__ void task_fill_kernel(const uint32_t* __restrict__ tcount, const uint32_t* __restrict__ toff,
                                 uint32_t total, uint32_t* __restrict__ task_bucket) {
    uint32_t t = blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= total) return;
    uint32_t o = toff[t];
    for (uint32_t j = 0; j < tcount[t]; j++) task_bucket[o + j] = t;
}

// Level 0: task order[t] (t when order is null) sums, with signs, the bases its entries name.
template <class F>
__device__ __forceinline__ void accumulate_task(const affine_t<F>* __restrict__ bases,
                                                const uint32_t* __restrict__ entries,
                                                const uint32_t* __restrict__ offsets,
                                                const uint32_t* __restrict__ counts,
                                                const uint32_t* __restrict__ toff,
                                                const uint32_t* __restrict__ task_bucket, uint32_t ntasks, uint32_t k,
                                                const uint32_t* __restrict__ order, xyzz_t<F>* __restrict__ out) {
    uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= ntasks) return;
    if (order) i = order[i];
    uint32_t b = task_bucket[i];
    uint32_t begin = offsets[b] + (i - toff[b]) * k;
    uint32_t end = min(offsets[b] + counts[b], begin + k);
    xyzz_t<F> acc = xyzz_identity<F>();
    for (uint32_t e_at = begin; e_at < end; e_at++) {
        uint32_t e = entries[e_at];
        affine_t<F> p = load16(&bases[e & 0x7fffffffu]);
        if (e >> 31) p = affine_neg(p);
        acc = xyzz_add_affine(acc, p);
    }
    out[i] = acc;
}

#define ACCUMULATE_PARAMS                                                                                         \
    const affine_t<F>*__restrict__ bases, const uint32_t *__restrict__ entries, const uint32_t *__restrict__ offsets, \
        const uint32_t *__restrict__ counts, const uint32_t *__restrict__ toff,                                   \
        const uint32_t *__restrict__ task_bucket, uint32_t ntasks, uint32_t k,                                    \
        const uint32_t *__restrict__ order, xyzz_t<F> *__restrict__ out

// Blocks of 128 threads each SM must hold: for G1 a cap of 168 registers (three blocks, 4 bytes spilled; uncapped, the
// carry-chain product takes 220 registers and two blocks: 290 against 218 ms at 2^24). G2 (out-of-line base
// products) is left to the compiler.
template <class F>
struct AccumulateBlocks {
    static constexpr int value = std::is_same<F, Fp>::value ? 3 : 1;
};

template <class F>
__global__ void __launch_bounds__(128, AccumulateBlocks<F>::value) accumulate_kernel(ACCUMULATE_PARAMS) {
    accumulate_task<F>(bases, entries, offsets, counts, toff, task_bucket, ntasks, k, order, out);
}

// Further levels: task i sums up to k partials of the previous level.
template <class F>
__global__ void __launch_bounds__(128) combine_tasks_kernel(const xyzz_t<F>* __restrict__ in,
                                                            const uint32_t* __restrict__ in_off,
                                                            const uint32_t* __restrict__ in_count,
                                                            const uint32_t* __restrict__ toff,
                                                            const uint32_t* __restrict__ task_bucket,
                                                            uint32_t ntasks, uint32_t k,
                                                            xyzz_t<F>* __restrict__ out) {
    uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= ntasks) return;
    uint32_t b = task_bucket[i];
    uint32_t begin = in_off[b] + (i - toff[b]) * k;
    uint32_t end = min(in_off[b] + in_count[b], begin + k);
    xyzz_t<F> acc = xyzz_identity<F>();
    for (uint32_t j = begin; j < end; j++) acc = xyzz_add(acc, in[j]);
    out[i] = acc;
}

// Bucket values once every bucket has at most one partial.
template <class F>
__global__ void buckets_kernel(const xyzz_t<F>* __restrict__ in, const uint32_t* __restrict__ toff,
                               const uint32_t* __restrict__ tcount, uint32_t total, xyzz_t<F>* __restrict__ out) {
    uint32_t t = blockIdx.x * blockDim.x + threadIdx.x;
    if (t < total) out[t] = tcount[t] ? in[toff[t]] : xyzz_identity<F>();
}

// Thread (g, j): sum over b in segment j (seg buckets) of group g of b * in[g][b], as T + lo * S with running sums.
template <class F>
__global__ void __launch_bounds__(128) weighted_segments_kernel(const xyzz_t<F>* __restrict__ in, uint32_t groups,
                                                                uint32_t m, uint32_t seg,
                                                                xyzz_t<F>* __restrict__ out) {
    uint32_t per = (m + seg - 1) / seg;
    uint32_t t = blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= groups * per) return;
    uint32_t g = t / per, j = t % per;
    uint32_t lo = j * seg, hi = min(m, lo + seg);
    const xyzz_t<F>* row = in + (size_t)g * m;
    xyzz_t<F> S = xyzz_identity<F>(), T = xyzz_identity<F>();
    for (uint32_t b = hi - 1; b > lo; b--) {
        S = xyzz_add(S, row[b]);
        T = xyzz_add(T, S);
    }
    S = xyzz_add(S, row[lo]);
    out[t] = xyzz_add(T, xyzz_mul_small(S, lo));
}

// Thread (g, j): plain sum of in[g][j*fan .. (j+1)*fan).
template <class F>
__global__ void __launch_bounds__(128) sum_segments_kernel(const xyzz_t<F>* __restrict__ in, uint32_t groups,
                                                           uint32_t m, uint32_t fan, xyzz_t<F>* __restrict__ out) {
    uint32_t per = (m + fan - 1) / fan;
    uint32_t t = blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= groups * per) return;
    uint32_t g = t / per, j = t % per;
    uint32_t lo = j * fan, hi = min(m, lo + fan);
    const xyzz_t<F>* row = in + (size_t)g * m;
    xyzz_t<F> acc = xyzz_identity<F>();
    for (uint32_t b = lo; b < hi; b++) acc = xyzz_add(acc, row[b]);
    out[t] = acc;
}

// Thread t: the sum of the bases listed at t, t + threads, t + 2 threads, ...: a warp reads 32 neighbouring list
// entries at a time. Against a thread per contiguous run of the list: 2^27 PoRep-like scalars' ones 43.3 -> 42.2 ms,
// 2^26 23.1 -> 22.8 ms (H200, 2026-12-03, two runs each).
template <class F>
__global__ void __launch_bounds__(128) sum_listed_kernel(const affine_t<F>* __restrict__ bases,
                                                         const uint32_t* __restrict__ list, uint32_t m,
                                                         uint32_t threads, xyzz_t<F>* __restrict__ out) {
    uint32_t t = blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= threads) return;
    xyzz_t<F> acc = xyzz_identity<F>();
    for (uint64_t k = t; k < m; k += threads) acc = xyzz_add_affine(acc, bases[list[k]]);
    out[t] = acc;
}

template <class F>
__global__ void to_jacobian_kernel(const xyzz_t<F>* __restrict__ in, uint32_t n, jacobian_t<F>* __restrict__ out) {
    uint32_t t = blockIdx.x * blockDim.x + threadIdx.x;
    if (t < n) out[t] = xyzz_to_jacobian(in[t]);
}

// ---------------------------------------------------------------------------------------------------------------
// Batch-affine accumulation (G1): the buckets' points summed in affine coordinates, pairwise, in rounds.
//
// In each round every bucket's list pairs up (positions 0+1, 2+3, ... of the bucket; an odd last point passes
// through) and the pairs are added in affine coordinates: lambda = (y2 - y1) / (x2 - x1), x3 = lambda^2 - x1 - x2,
// y3 = lambda (x1 - x3) - y1. The divisions of a whole round share one field inversion (Montgomery's trick as a tree:
// the round's denominators multiplied up in groups of INV_G, the top inverted, the inverses multiplied back down), so
// an addition costs 5M + 1S (3M of them in the tree) against the mixed XYZZ addition's 8M + 2S. Each round halves
// every bucket; once no bucket holds more than BA_TAIL points, one thread per bucket sums the rest with XYZZ
// additions (each round has fixed costs, an inversion's latency among them). A bucket's round-r list is contiguous;
// its place in the next round follows from the counts alone (ceil(count / 2), scanned), so one thread per bucket
// writes the round's slot map (each slot's pair, by arithmetic), one thread per slot of the next round reads it, and
// no sort is repeated.
// Special pairs keep the round complete: with an identity the sum is the other point, P + P doubles (lambda =
// 3 x^2 / 2y) and P + (-P) is the identity (all-zero affine point, as blst writes it); their denominators are 1
// or 2y, never 0 for points of the curve.

constexpr uint32_t BA_TAIL = 8;   // rounds stop once no bucket is longer
constexpr uint32_t INV_G = 8;     // fan-in of the inversion tree (its latency is INV_G products a level)

// A/B switches for the two constants above, read once: CUZK_MSM_BA_TAIL=1..64 and CUZK_MSM_INV_G=2..64. Measured on
// the H200 (2026-12-03, random scalars, accumulation phase): tails of 4 and 2 took 2^24 120.2 -> 120.9 / 121.7 ms
// and 2^26 410.4 -> 411.4 / 415.3 ms; fan-in 16 took 2^24 121.6, 2^25 236.4 -> 238.8, 2^27 799.6 -> 806.8 ms, and
// 2^26 407.2 only because its smaller tree let three windows share a group (29 rounds where 39 ran); 32 was slower.
uint32_t ba_tail_len() {
    static const uint32_t v = env_u32("CUZK_MSM_BA_TAIL", 1, 64, BA_TAIL);
    return v;
}
uint32_t inv_fan_in() {
    static const uint32_t v = env_u32("CUZK_MSM_INV_G", 2, 64, INV_G);
    return v;
}

__device__ __forceinline__ bool fp_eq(const fp_t& a, const fp_t& b) {
    uint32_t acc = 0;
#pragma unroll
    for (int i = 0; i < 12; i++) acc |= a.l[i] ^ b.l[i];
    return acc == 0;
}

// A round's points: round 0 reads them through the sorted digits (base index, sign in the top bit) from the
// resident bases; later rounds read the previous round's sums.
template <bool R0>
struct BaSource {
    const affine_t<Fp>* pts;
    const uint32_t* entries;  // round 0 only
    uint32_t base;            // round 0: the group's first digit
    __device__ __forceinline__ fp_t x(uint32_t p) const {
        if (R0) return load16(&pts[entries[base + p] & 0x7fffffffu].x);
        return load16(&pts[p].x);
    }
    __device__ __forceinline__ affine_t<Fp> point(uint32_t p) const {
        if (R0) {
            uint32_t e = entries[base + p];
            affine_t<Fp> q = load16(&pts[e & 0x7fffffffu]);
            return (e >> 31) ? affine_neg(q) : q;
        }
        return load16(&pts[p]);
    }
};

// A round's layout: bucket b's points are positions off[b] - base .. + cnt[b] (b < nb).
struct BaLayout {
    const uint32_t* off;
    const uint32_t* cnt;
    uint32_t base, nb;
    __device__ __forceinline__ uint32_t start(uint32_t b) const { return off[b] - base; }
    __device__ __forceinline__ uint32_t points() const { return off[nb - 1] - base + cnt[nb - 1]; }
    // The bucket holding position p < points(): the last b with start(b) <= p (an empty bucket's start equals the
    // next one's, so the last such b holds p).
    __device__ __forceinline__ uint32_t find(uint32_t p) const {
        uint32_t lo = 0, hi = nb;
        while (hi - lo > 1) {
            uint32_t mid = (lo + hi) / 2;
            if (start(mid) <= p) lo = mid; else hi = mid;
        }
        return lo;
    }
};

// The denominator of P + Q: x2 - x1, 2 y1 for a doubling, 1 where the sum needs no division.
__device__ __forceinline__ fp_t ba_den(const affine_t<Fp>& P, const affine_t<Fp>& Q) {
    if (affine_is_identity(P) || affine_is_identity(Q)) return fp_one();
    if (fp_eq(P.x, Q.x)) return fp_eq(P.y, Q.y) ? fp_dbl(P.y) : fp_one();
    return fp_sub(Q.x, P.x);
}

// A slot of the next round: the first position p of its pair in this round's layout, and whether a second point
// follows (else p is the odd last point of its bucket and passes through alone).
struct BaPair {
    uint32_t p;
    bool pair;
};

// Slot j of a bucket that starts at position s with c points this round: positions s + 2j and the next.
__device__ __forceinline__ BaPair ba_pair_at(uint32_t s, uint32_t c, uint32_t j) { return {s + 2 * j, 2 * j + 1 < c}; }

// The slot map written by ba_slots_kernel holds each slot's p, with this bit set where the point passes through.
constexpr uint32_t BA_ALONE = 0x80000000u;

// Slot o's pair (o < N.points()): from the slot map when there is one, else by binary search for its bucket
// (CUZK_MSM_SLOTS=search).
__device__ __forceinline__ BaPair ba_pair(const BaLayout& L, const BaLayout& N, const uint32_t* slots, uint32_t o) {
    if (slots) {
        uint32_t v = slots[o];
        return {v & ~BA_ALONE, !(v & BA_ALONE)};
    }
    uint32_t b = N.find(o);
    return ba_pair_at(L.start(b), L.cnt[b], o - N.start(b));
}

// The slot map as first written, one thread a bucket storing its own slots (32 scattered words a warp instruction):
// kept for A/B (CUZK_MSM_SLOTS=thread).
__global__ void ba_slots_thread_kernel(BaLayout L, BaLayout N, uint32_t* __restrict__ slots) {
    uint32_t b = blockIdx.x * blockDim.x + threadIdx.x;
    if (b >= L.nb) return;
    const uint32_t s = L.start(b), c = L.cnt[b], o = N.start(b), k = N.cnt[b];
    for (uint32_t j = 0; j < k; j++) {
        BaPair q = ba_pair_at(s, c, j);
        slots[o + j] = q.p | (q.pair ? 0 : BA_ALONE);
    }
}

// The slot map of the next round (ba_pair_at for each of bucket b's N.cnt[b] slots). The map costs 4 bytes a slot
// written and read twice, where the search took 19 dependent loads a slot in each of the two kernels, spread over
// several buckets a warp once buckets are shorter than a warp's slots.
//
// Thread b reads bucket b's layout; its warp's 32 buckets own one contiguous run of slots, which the warp writes 32
// consecutive slots at a time, each lane finding its slot's bucket among the warp's by a 5-step search over
// shuffled starts. (One thread writing its own bucket's slots stored 32 scattered words a warp instruction.)
__global__ void ba_slots_kernel(BaLayout L, BaLayout N, uint32_t* __restrict__ slots) {
    constexpr uint32_t FULL = 0xffffffffu;
    const uint32_t b = blockIdx.x * blockDim.x + threadIdx.x;
    const uint32_t lane = threadIdx.x & 31;
    // No early return: every lane takes part in the shuffles. Lanes past the last bucket start after every slot.
    const bool live = b < L.nb;
    const uint32_t s = live ? L.start(b) : 0, c = live ? L.cnt[b] : 0;
    const uint32_t o = live ? N.start(b) : FULL;
    uint32_t end = live ? o + N.cnt[b] : 0;
#pragma unroll
    for (int d = 16; d > 0; d >>= 1) end = max(end, __shfl_xor_sync(FULL, end, d));
    const uint32_t first = __shfl_sync(FULL, o, 0);  // lane 0 is live wherever any lane is
    for (uint32_t at = first; at < end; at += 32) {
        const uint32_t q = at + lane;
        // The last lane whose slots start at or before q: the bucket holding q (an empty bucket starts where the
        // next does, so the last such lane is the one with slots).
        uint32_t w = 0;
#pragma unroll
        for (uint32_t step = 16; step > 0; step >>= 1) {
            if (__shfl_sync(FULL, o, w + step) <= q) w += step;
        }
        const uint32_t sw = __shfl_sync(FULL, s, w), cw = __shfl_sync(FULL, c, w), ow = __shfl_sync(FULL, o, w);
        if (q < end) {
            const BaPair p = ba_pair_at(sw, cw, q - ow);
            slots[q] = p.p | (p.pair ? 0 : BA_ALONE);
        }
    }
}

// d[o] for o < m: slot o's denominator (1 for a point passing through, and for slots past the round's end).
template <bool R0>
__global__ void __launch_bounds__(256) ba_den_kernel(BaSource<R0> src, BaLayout L, BaLayout N,
                                                     const uint32_t* __restrict__ slots, uint32_t m,
                                                     fp_t* __restrict__ d) {
    uint32_t o = blockIdx.x * blockDim.x + threadIdx.x;
    if (o >= m) return;
    fp_t v = fp_one();
    if (o < N.points()) {
        BaPair s = ba_pair(L, N, slots, o);
        if (s.pair) {
            fp_t x1 = src.x(s.p), x2 = src.x(s.p + 1);
            if (!fp_is_zero(x1) && !fp_is_zero(x2) && !fp_eq(x1, x2)) {
                v = fp_sub(x2, x1);
            } else {
                v = ba_den(src.point(s.p), src.point(s.p + 1));
            }
            if (fp_is_zero(v)) v = fp_one();  // only a point off the curve (y = 0) gets here
        }
    }
    store16(&d[o], v);
}

// With inv[o] = 1 / d[o]: slot o's point of the next round, the pair's sum or the point passing through.
template <bool R0>
__global__ void __launch_bounds__(128) ba_sum_kernel(BaSource<R0> src, BaLayout L, BaLayout N,
                                                     const uint32_t* __restrict__ slots,
                                                     const fp_t* __restrict__ inv, affine_t<Fp>* __restrict__ out) {
    uint32_t o = blockIdx.x * blockDim.x + threadIdx.x;
    if (o >= N.points()) return;
    BaPair s = ba_pair(L, N, slots, o);
    affine_t<Fp> P = src.point(s.p);
    if (!s.pair) {  // the odd last point of its bucket
        store16(&out[o], P);
        return;
    }
    affine_t<Fp> Q = src.point(s.p + 1);
    fp_t n;
    if (affine_is_identity(P)) {
        store16(&out[o], Q);
        return;
    }
    if (affine_is_identity(Q)) {
        store16(&out[o], P);
        return;
    }
    if (fp_eq(P.x, Q.x)) {
        if (!fp_eq(P.y, Q.y) || fp_is_zero(P.y)) {  // P + (-P); y = 0 only off the curve (the first pass took 1)
            store16(&out[o], fp_is_zero(P.y) ? P : affine_t<Fp>{fp_zero(), fp_zero()});
            return;
        }
        fp_t xx = fp_sqr(P.x);  // doubling: lambda = 3 x^2 / 2y
        n = fp_add(fp_dbl(xx), xx);
    } else {
        n = fp_sub(Q.y, P.y);
    }
    fp_t lam = fp_mul_lazy(n, load16(&inv[o]));  // below 2p: feeds only the two products below
    affine_t<Fp> r;
    r.x = fp_sub(fp_sub(fp_sqr(lam), P.x), Q.x);
    r.y = fp_sub(fp_mul(lam, fp_sub(P.x, r.x)), P.y);
    store16(&out[o], r);
}

// Once no bucket is longer than BA_TAIL: bucket b's value, its points summed with mixed XYZZ additions.
template <bool R0>
__global__ void __launch_bounds__(128) ba_tail_kernel(BaSource<R0> src, BaLayout L, xyzz_t<Fp>* __restrict__ out) {
    uint32_t b = blockIdx.x * blockDim.x + threadIdx.x;
    if (b >= L.nb) return;
    uint32_t s = L.start(b), c = L.cnt[b];
    xyzz_t<Fp> acc = xyzz_identity<Fp>();
    for (uint32_t i = 0; i < c; i++) acc = xyzz_add_affine(acc, src.point(s + i));
    out[b] = acc;
}

// The next round's counts: ceil(count / 2).
__global__ void ba_halve_kernel(const uint32_t* __restrict__ cnt, uint32_t nb, uint32_t* __restrict__ next) {
    uint32_t b = blockIdx.x * blockDim.x + threadIdx.x;
    if (b < nb) next[b] = (cnt[b] + 1) / 2;
}

// Per window w: its first digit (bounds[w]; bounds[windows] = all digits) and its longest bucket (longest[w], zeroed
// by the caller).
__global__ void window_bounds_kernel(const uint32_t* __restrict__ offsets, const uint32_t* __restrict__ counts,
                                     uint32_t windows, uint32_t buckets, uint32_t* __restrict__ bounds,
                                     uint32_t* __restrict__ longest) {
    uint32_t t = blockIdx.x * blockDim.x + threadIdx.x;
    uint32_t total = windows * buckets;
    uint32_t c = t < total ? counts[t] : 0;
    if (t < total && t % buckets == 0) bounds[t / buckets] = offsets[t];
    if (t == total - 1) bounds[windows] = offsets[t] + c;
    // The warp's maximum over the lanes in its first lane's window, one atomic; lanes in a later window (a warp
    // straddles windows) each add their own.
    uint32_t w = t < total ? t / buckets : windows;
    uint32_t first_w = __shfl_sync(0xffffffffu, w, 0);
    uint32_t m = w == first_w ? c : 0;
    for (int o = 16; o > 0; o >>= 1) m = max(m, __shfl_xor_sync(0xffffffffu, m, o));
    if ((threadIdx.x & 31) == 0 && first_w < windows && m) atomicMax(&longest[first_w], m);
    if (w != first_w && w < windows && c) atomicMax(&longest[w], c);
}

// The batched inversion's tree (Fp), its products lazy (fp_mul_lazy: below 2p, reduced only for the inversion; the
// inverses feed only the slopes' products): level up, thread u of T = ceil(m / INV_G) multiplies v[u], v[u + T],
// v[u + 2T], ... into next[u], keeping the prefix products; the top value is inverted; level down, each thread turns
// its inverse of the product back into the inverses of its values, in place. Strided groups keep neighbouring
// threads on neighbouring values (coalesced; contiguous groups of 8 ran at a tenth of the bandwidth).
__global__ void __launch_bounds__(256) inv_up_kernel(const fp_t* __restrict__ v, uint32_t m, uint32_t g,
                                                     fp_t* __restrict__ pre, fp_t* __restrict__ next) {
    uint32_t T = (m + g - 1) / g;
    uint32_t u = blockIdx.x * blockDim.x + threadIdx.x;
    if (u >= T) return;
    fp_t acc = load16(&v[u]);
    store16(&pre[u], acc);
    for (uint32_t i = u + T; i < m; i += T) {
        acc = fp_mul_lazy(acc, load16(&v[i]));
        store16(&pre[i], acc);
    }
    store16(&next[u], acc);
}

__global__ void inv_top_kernel(fp_t* v) { v[0] = fp_inv(fp_reduce(v[0])); }

__global__ void __launch_bounds__(256) inv_down_kernel(fp_t* __restrict__ v, uint32_t m, uint32_t g,
                                                       const fp_t* __restrict__ pre, const fp_t* __restrict__ next_inv) {
    uint32_t T = (m + g - 1) / g;
    uint32_t u = blockIdx.x * blockDim.x + threadIdx.x;
    if (u >= T) return;
    uint32_t last = u + (m - 1 - u) / T * T;  // this thread's last value
    fp_t run = load16(&next_inv[u]);          // 1 / (v[u] v[u + T] ... v[last])
    for (uint32_t i = last; i > u; i -= T) {
        fp_t vi = load16<fp_t, false>(&v[i]);
        store16(&v[i], fp_mul_lazy(run, load16(&pre[i - T])));
        run = fp_mul_lazy(run, vi);
    }
    store16(&v[u], run);
}

// Whether level 0 runs its tasks longest first (the default) or in bucket order (CUZK_MSM_TASK_ORDER=bucket, read
// once): an A/B switch for measuring, not a tuning knob for users.
bool sort_tasks_by_length() {
    static const bool v = env_word("CUZK_MSM_TASK_ORDER", {"bucket"}) != 0;
    return v;
}

// Windows scattered per grid row (scatter_kernel). Each row reads all n scalars again, so sparse MSMs (fewer than a
// quarter of the scalars left for Pippenger, as in a Groth16 assignment) keep every window in one row; otherwise a
// row takes as many windows as keep its buckets' write fronts (2^(c-1) buckets of 32 bytes a window) within 4 MiB:
// 4 windows at c = 16, 2 at c = 17, one from c = 18 up. CUZK_MSM_SCATTER_GROUP=G (read once) forces G, an A/B
// switch. Sort phase on the H200 (2026-12-02), G = 1 / 2 / 3 / 4 / 13: 2^24 random (c = 16) 11.65 / 10.59 / 10.59 /
// 10.35 / 12.67 ms, 2^22 random (c = 16) 2.93 / 2.68 / 2.69 / 2.64 ms; 2^26 random (c = 20) G = 1 / 2 / 13: 54.5 /
// 58.7 / 83.5 ms; 2^26 PoRep-like (c = 16, 2.5 % others) with G = 1 15.4 ms, with every window in one row 3.4 ms.
uint32_t scatter_group(uint64_t n, uint64_t others, uint32_t windows, uint32_t window_bits) {
    static const uint32_t forced = env_u32("CUZK_MSM_SCATTER_GROUP", 1, 64, 0);
    if (forced) return std::min<uint32_t>(windows, forced);
    if (others * 4 < n) return windows;
    uint64_t front_bytes = (1ull << (window_bits - 1)) * 32;
    uint64_t fit = (4ull << 20) / front_bytes;
    return (uint32_t)std::max<uint64_t>(1, std::min<uint64_t>(windows, fit));
}

// Below this many tasks (well under one wave of the card) the sort's launches cost more than the balance gains.
constexpr uint32_t SORT_MIN_TASKS = 1u << 16;

inline uint32_t blocks_for(uint64_t n, uint32_t threads) { return (uint32_t)((n + threads - 1) / threads); }

// Grows a scratch buffer (never shrinks it: one MSM after another reuses the same memory).
cuzk_status ensure(void** p, size_t* cap, size_t bytes, const char* what) {
    if (*cap >= bytes) return status_ok();
    if (*p) cudaFree(*p);
    *p = nullptr;
    *cap = 0;
    cudaError_t e = malloc_or_trim(p, std::max<size_t>(bytes, 1));
    if (e != cudaSuccess) {
        cudaGetLastError();  // clear the sticky allocation error
        char msg[200];
        snprintf(msg, sizeof(msg), "allocating %zu bytes of device memory for %s: %s", bytes, what,
                 cudaGetErrorString(e));
        return status_msg((int)e, msg);
    }
    *cap = bytes;
    return status_ok();
}

struct Scratch {
    void* ptr = nullptr;
    size_t cap = 0;
};

}  // namespace

struct cuzk_msm_bases {
    int curve;
    size_t n;
    size_t point_bytes;
    void* points;
    // Window tables (cuzk_msm_bases_create_tables): W = table_windows points a base, 2^(cw) P_i at i * W + w for
    // c = table_window; 0 for a plain set.
    uint32_t table_window = 0, table_windows = 0;
};

// Chunks of a chunked upload (upload_and_stage).
constexpr uint32_t UPLOAD_CHUNKS = 8;

struct cuzk_msm_scratch {
    cudaStream_t stream;
    cudaEvent_t ev[8];
    // The chunked upload's copies, and each chunk's arrival.
    cudaStream_t copy_stream;
    cudaEvent_t chunk_ev[UPLOAD_CHUNKS];
    Scratch scalars, canon, ones, counters, counts, offsets, cursor, entries, cub, parts_a, parts_b, ones_sums;
    Scratch tcount[2], toff[2], task_bucket, tasks[2], level_max;
    Scratch sort_keys[2], sort_index[2], sort_tmp;
    Scratch ba_bounds, ba_cnt[2], ba_off[2], ba_elems[2], ba_tree, ba_slots;
    Scratch stage_cursor, ones_layout;
};

namespace {
// Every scratch buffer of a set, for freeing and counting.
std::array<Scratch*, 36> scratch_list(cuzk_msm_scratch* S) {
    return {{&S->scalars,     &S->canon,      &S->ones,     &S->counters, &S->counts,  &S->offsets,   &S->cursor,
            &S->entries,     &S->cub,        &S->parts_a,  &S->parts_b,  &S->ones_sums, &S->tcount[0], &S->tcount[1],
            &S->toff[0],     &S->toff[1],    &S->task_bucket, &S->tasks[0], &S->tasks[1], &S->level_max,
            &S->sort_keys[0], &S->sort_keys[1], &S->sort_index[0], &S->sort_index[1], &S->sort_tmp,
            &S->ba_bounds,   &S->ba_cnt[0],  &S->ba_cnt[1], &S->ba_off[0], &S->ba_off[1], &S->ba_elems[0],
            &S->ba_elems[1], &S->ba_tree,   &S->ba_slots, &S->stage_cursor, &S->ones_layout}};
}
}  // namespace

namespace {

cuzk_status scratch(Scratch& s, size_t bytes, const char* what) { return ensure(&s.ptr, &s.cap, bytes, what); }

float elapsed(cudaEvent_t a, cudaEvent_t b) {
    float ms = 0;
    cudaEventElapsedTime(&ms, a, b);
    return ms;
}

// CUZK_MSM_SORT=atomic|staged (read once): the sort of dense MSMs, an A/B switch. Staged unless set to atomic.
bool staged_sort_enabled() {
    static const bool v = env_word("CUZK_MSM_SORT", {"atomic"}) != 0;
    return v;
}

// The staged sort for MSMs that leave at least a quarter of their scalars to Pippenger with windows of 10 bits and
// more; sparse MSMs keep scatter_kernel's single row (a few atomics for a few digits, one read of the scalars).
bool use_staged_sort(uint64_t n, uint64_t others, uint32_t c) {
    return staged_sort_enabled() && c >= 10 && others * 4 >= n;
}

// The stage's size when nothing larger is at hand: 2 GiB (two windows of a 2^27 MSM, four of 2^26).
constexpr size_t STAGE_BYTES = 2ull << 30;

// The stage kernels' dynamic shared memory limits, raised once per device to what any window needs.
cuzk_status raise_stage_smem_limits() {
    static std::atomic<uint64_t> raised{0};
    CUZK_TRY(once_per_device(raised, [] {
        size_t smem_a = 0;
        for (uint32_t c = 10; c <= MAX_WINDOW; c++) smem_a = std::max(smem_a, stage_coarse_smem(c));
        cudaError_t err =
            cudaFuncSetAttribute(stage_coarse_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem_a);
        if (err != cudaSuccess) return err;
        size_t smem_h = 0;
        for (uint32_t c = 10; c <= MAX_WINDOW; c++) smem_h = std::max(smem_h, coarse_histogram_smem(c));
        err = cudaFuncSetAttribute(coarse_histogram_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem_h);
        if (err != cudaSuccess) return err;
        return cudaFuncSetAttribute(stage_fine_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                    (int)STAGE_FINE_SMEM);
    }));
    return status_ok();
}

// The windows' first offsets into the sorted digits, read from the scan's offsets and counts: start[w] for each
// window and start[windows], the number of digits. One host sync; the atomic sort's path needs the total, and the
// batch-affine decision each window's length. (The staged sort takes the same list from its coarse bins' counts.)
cuzk_status window_starts(cudaStream_t st, const uint32_t* offsets, const uint32_t* counts, uint32_t windows,
                          uint32_t buckets, std::vector<uint32_t>* start) {
    const size_t total = (size_t)windows * buckets;
    start->assign(windows + 1, 0);
    uint32_t tail[2];
    CUZK_TRY(cudaMemcpy2DAsync(start->data(), 4, offsets, (size_t)buckets * 4, 4, windows, cudaMemcpyDeviceToHost,
                               st));
    CUZK_TRY(cudaMemcpyAsync(&tail[0], offsets + total - 1, 4, cudaMemcpyDeviceToHost, st));
    CUZK_TRY(cudaMemcpyAsync(&tail[1], counts + total - 1, 4, cudaMemcpyDeviceToHost, st));
    CUZK_TRY(cudaStreamSynchronize(st));
    (*start)[windows] = tail[0] + tail[1];
    return status_ok();
}

// The most digits in one window, from window_starts' list.
size_t largest_window(const std::vector<uint32_t>& start) {
    size_t largest = 0;
    for (size_t w = 0; w + 1 < start.size(); w++) largest = std::max<size_t>(largest, start[w + 1] - start[w]);
    return largest;
}

// coarse_histogram_kernel over scalars [0, n) of `canon` into `bins` (zeroed by the caller): grid-stride, at most 8
// blocks an SM.
cuzk_status coarse_histogram(cudaStream_t st, const fr_t* canon, uint32_t n, int split, uint32_t c, uint32_t windows,
                             uint32_t* bins, uint32_t merge = 0) {
    int dev = 0, sms = 0;
    CUZK_TRY(cudaGetDevice(&dev));
    CUZK_TRY(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
    const uint32_t blocks = std::max(1u, std::min<uint32_t>(blocks_for(n, 256), (uint32_t)sms * 8));
    coarse_histogram_kernel<<<blocks, 256, coarse_histogram_smem(c), st>>>(canon, n, split, c, windows, merge, bins);
    CUZK_TRY_LAUNCH("coarse_histogram_kernel");
    return status_ok();
}

// Pass B of the staged sort: the stage's `len` entries (at `map`'s segments, or contiguous) to their buckets' runs in
// `entries` (`cursor`: where each bucket's next entry goes).
cuzk_status stage_fine(cudaStream_t st, const uint2* stage, const StageMap& map, uint32_t len, uint32_t buckets,
                       uint32_t c, uint32_t* cursor, uint32_t* entries) {
    if (len == 0) return status_ok();
    stage_fine_kernel<<<blocks_for(len, STAGE_ENTRIES), STAGE_THREADS, STAGE_FINE_SMEM, st>>>(stage, map, len, buckets,
                                                                                            c, cursor, entries);
    CUZK_TRY_LAUNCH("stage_fine_kernel");
    return status_ok();
}

// Places the digits of the MSM's scalars in `entries` (see stage_coarse_kernel) and fills the buckets' `counts` (zeroed
// by the caller), `offsets` (their exclusive prefix sums over all windows) and `cursor` (each bucket's end), with no
// per-digit histogram: the coarse bins' counts come first (coarse_histogram_kernel; with one host sync they give the
// windows' starts and pass A's bin cursors), and each group's bucket counts from its stage (stage_count_kernel), scanned
// from the group's start, before its pass B. `start` gets each window's first offset and the number of digits last.
// `scan_bytes`: B->cub's size, enough for a scan of windows * buckets counts.
// The stage lives in the batch-affine rounds' first buffer, which is idle until the accumulation and holds several
// windows once an MSM with rounds has run; windows go through it in groups that fit.
cuzk_status sort_staged(cuzk_msm_scratch* B, cudaStream_t st, const fr_t* canon, uint32_t n, int split, uint32_t c,
                        uint32_t windows, uint32_t buckets, uint32_t* counts, uint32_t* offsets, uint32_t* cursor,
                        uint32_t* entries, size_t scan_bytes, std::vector<uint32_t>* start, uint32_t merge = 0) {
    const uint32_t coarse = stage_coarse(c);
    const size_t bins = (size_t)windows * coarse;
    CUZK_CHECK(raise_stage_smem_limits());
    CUZK_CHECK(scratch(B->stage_cursor, bins * 4, "the sort's bin cursors"));
    uint32_t* seg_cursor = (uint32_t*)B->stage_cursor.ptr;
    CUZK_TRY(cudaMemsetAsync(seg_cursor, 0, bins * 4, st));
    CUZK_CHECK(coarse_histogram(st, canon, n, split, c, windows, seg_cursor, merge));
    // Counts to positions in the whole layout: window after window, bin after bin.
    std::vector<uint32_t> h(bins);
    CUZK_TRY(cudaMemcpyAsync(h.data(), seg_cursor, bins * 4, cudaMemcpyDeviceToHost, st));
    CUZK_TRY(cudaStreamSynchronize(st));
    start->assign(windows + 1, 0);
    uint64_t pos = 0;
    for (uint32_t w = 0; w < windows; w++) {
        (*start)[w] = (uint32_t)pos;
        for (uint32_t b = 0; b < coarse; b++) {
            const uint32_t k = h[(size_t)w * coarse + b];
            h[(size_t)w * coarse + b] = (uint32_t)pos;
            pos += k;
        }
    }
    if (pos > 0xffffffffull) return status_msg(1, "the sort's digits overflow 32-bit positions");
    (*start)[windows] = (uint32_t)pos;
    // From pageable memory: the copy returns once `h` has been read.
    CUZK_TRY(cudaMemcpyAsync(seg_cursor, h.data(), bins * 4, cudaMemcpyHostToDevice, st));
    const size_t largest = largest_window(*start);
    size_t cap = B->ba_elems[0].cap / sizeof(uint2);
    if (largest > 0 && cap < largest) {
        cap = std::max<size_t>(largest, std::min<size_t>(pos, STAGE_BYTES / sizeof(uint2)));
        CUZK_CHECK(scratch(B->ba_elems[0], cap * sizeof(uint2), "the sort's stage"));
    }
    uint2* stage = (uint2*)B->ba_elems[0].ptr;
    const size_t smem_a = stage_coarse_smem(c);
    for (uint32_t w0 = 0; w0 < windows;) {
        uint32_t g = 1;
        size_t len = (*start)[w0 + 1] - (*start)[w0];
        while (w0 + g < windows && len + ((*start)[w0 + g + 1] - (*start)[w0 + g]) <= cap) {
            len += (*start)[w0 + g + 1] - (*start)[w0 + g];
            g++;
        }
        const size_t first = (size_t)w0 * buckets, items = (size_t)g * buckets;
        if (len > 0) {
            // Window tables (merge = W, one window of buckets): the W windows of digits into window 0.
            stage_coarse_kernel<<<blocks_for(n, STAGE_SCALARS), STAGE_THREADS, smem_a, st>>>(
                canon, n, split, c, merge ? 0 : w0, merge ? merge : g, buckets, seg_cursor, (*start)[w0], stage, 0,
                merge);
            CUZK_TRY_LAUNCH("stage_coarse_kernel");
            stage_count_kernel<<<blocks_for(len, STAGE_ENTRIES), STAGE_THREADS, 0, st>>>(stage, StageMap{}, (uint32_t)len,
                                                                                         buckets, c, counts);
            CUZK_TRY_LAUNCH("stage_count_kernel");
        }
        // Every bucket gets its offset, those of empty windows too (the accumulation reads them all).
        size_t need = 0;
        CUZK_TRY(cub::DeviceScan::ExclusiveScan(nullptr, need, counts + first, offsets + first, ::cuda::std::plus<>{},
                                                (*start)[w0], (int)items, st));
        if (need > scan_bytes) return status_msg(1, "the sort's scan needs more scratch than sized");
        CUZK_TRY(cub::DeviceScan::ExclusiveScan(B->cub.ptr, scan_bytes, counts + first, offsets + first,
                                                ::cuda::std::plus<>{}, (*start)[w0], (int)items, st));
        CUZK_TRY(cudaMemcpyAsync(cursor + first, offsets + first, items * 4, cudaMemcpyDeviceToDevice, st));
        CUZK_CHECK(stage_fine(st, stage, StageMap{}, (uint32_t)len, buckets, c, cursor, entries));
        w0 += g;
    }
    return status_ok();
}

// Fan-in of the plain-sum levels (CUZK_MSM_REDUCE_FAN, 2..32, read once; an A/B switch). These levels hold few
// partial sums, too few threads to fill the card, so a level's time is its threads' chain of dependent additions
// (one XYZZ addition about 27 us there): fan-in f costs (f - 1) additions a level for log_f of the count's levels,
// least at f = 2. With 32 a level, each of the two or three levels took about 0.9 ms (ncu, H200, 2026-12-04).
uint32_t reduce_fan_in() {
    static const uint32_t f = env_u32("CUZK_MSM_REDUCE_FAN", 2, SEGMENT, 2);
    return f;
}

// Buckets a weighted_segments_kernel thread takes, for `groups` windows of m buckets. Candidates: the powers of two
// 4..64, and the shortest length that makes the threads one wave of the card's resident threads (at most 256 buckets),
// each costed as waves times a thread's additions (2 a bucket, about 1.5 a bit of the segment's offset for lo * S);
// the cheapest wins, a tie the longer. H200 (50.7K resident threads at 146 registers), 2026-12-04, reduce phase:
// - random 2^26 and 2^27 (13 windows of 2^19 buckets): one wave of 135 a thread, 16.8-17.0 ms, against 24.6-24.9 ms
//   at 32 (five waves, the last a fifth full) and 18.8-18.9 ms at 64;
// - 16 windows of 2^15 buckets (random 2^24, PoRep-like 2^26 and 2^27): 16 a thread (32.8K threads), 2.45-2.58 ms,
//   against 2.97-3.05 ms at 32 and 3.34-3.55 ms at 11, the one-wave length: within a wave, fewer threads with longer
//   chains did better than the wave count alone says, so the one-wave length is a candidate only above 64.
// CUZK_MSM_REDUCE_SEG=S (1..256, read once) forces S: an A/B switch (32 was the constant).
template <class F>
uint32_t weighted_segment(uint32_t groups, uint32_t m) {
    static const uint32_t forced = env_u32("CUZK_MSM_REDUCE_SEG", 1, 256, 0);
    if (forced) return forced;
    int dev = 0, sms = 0, per_sm = 0;
    if (cudaGetDevice(&dev) != cudaSuccess || cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev) !=
                                                  cudaSuccess ||
        cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, weighted_segments_kernel<F>, 128, 0) != cudaSuccess) {
        cudaGetLastError();
        return SEGMENT;
    }
    const uint64_t resident = (uint64_t)std::max(sms, 1) * std::max(per_sm, 1) * 128;
    const uint32_t bits = 32 - __builtin_clz(std::max(m, 1u));
    auto threads = [&](uint32_t s) { return (uint64_t)groups * ((m + s - 1) / s); };
    auto cost = [&](uint32_t s) { return (threads(s) + resident - 1) / resident * (2 * s + 3 * bits / 2); };
    uint32_t best = 4;
    for (uint32_t s = 8; s <= 64; s *= 2)
        if (cost(s) <= cost(best)) best = s;
    uint32_t wave = 65;
    while (wave <= 256 && threads(wave) > resident) wave++;
    if (wave <= 256 && cost(wave) <= cost(best)) best = wave;
    return best;
}

// Plain-sum levels until a group has at most SEGMENT partial sums. `cur` and `other` ping-pong; returns the
// buffer holding the result and updates m.
template <class F>
cuzk_status reduce_to_parts(cudaStream_t st, xyzz_t<F>** cur, xyzz_t<F>** other, uint32_t groups, uint32_t* m) {
    const uint32_t fan = reduce_fan_in();
    while (*m > SEGMENT) {
        uint32_t per = (*m + fan - 1) / fan;
        sum_segments_kernel<F><<<blocks_for((uint64_t)groups * per, 128), 128, 0, st>>>(*cur, groups, *m, fan,
                                                                                        *other);
        CUZK_TRY_LAUNCH("sum_segments_kernel");
        std::swap(*cur, *other);
        *m = per;
    }
    return status_ok();
}

// ---------------------------------------------------------------------------------------------------------------
// The batch-affine accumulation's host side (see ba_den_kernel).

// CUZK_MSM_ACCUMULATE=xyzz|affine (read once) overrides AUTO: an A/B switch for measuring whole provers, whose MSMs
// ask for AUTO, not a tuning knob for users.
int accumulate_override() {
    static int v = [] {
        const int w = env_word("CUZK_MSM_ACCUMULATE", {"xyzz", "affine"});
        if (w == 0) return (int)CUZK_MSM_ACCUMULATE_XYZZ;
        if (w == 1) return (int)CUZK_MSM_ACCUMULATE_AFFINE;
        return (int)CUZK_MSM_ACCUMULATE_AUTO;
    }();
    return v;
}

// The accumulation asked for, with the override applied to AUTO.
int effective_accumulate(int accumulate) {
    return accumulate == CUZK_MSM_ACCUMULATE_AUTO ? accumulate_override() : accumulate;
}

// Whether the G1 buckets are summed by batch-affine rounds: as asked, or (CUZK_MSM_ACCUMULATE_AUTO) when the MSM has
// at least 2^25 non-zero digits with a mean bucket of at least 64. Measured on the H200 (2026-12-01, BENCHMARKS.md):
// rounds won there (2^22 random 44.6 -> 38.9 ms, 2^24 182.7 -> 146.7, 2^26 570 -> 509) and were even or slightly
// behind below (2^20 random 11.3 -> 11.7 ms, 2^24 PoRep-like 7.3 -> 7.7).
bool use_batch_affine(int accumulate, uint64_t digits, uint32_t total) {
    accumulate = effective_accumulate(accumulate);
    if (accumulate == CUZK_MSM_ACCUMULATE_XYZZ) return false;
    if (accumulate == CUZK_MSM_ACCUMULATE_AFFINE) return true;
    return digits >= (1ull << 25) && digits >= 64ull * total;
}

// Device bytes the process may still take: the free memory, or less when CUZK_GPU_MEMORY_GIB caps the whole card's use
// (a card shared with other work, or a smaller card's plan tried on a larger one): the cap less what is in use now.
// groth16-pipeline's placement of the parameters reads the same variable the same way.
size_t usable_free(size_t free_b, size_t total_b) {
    static const double cap_gib = [] {
        const char* v = getenv("CUZK_GPU_MEMORY_GIB");
        if (!v || !*v) return 0.0;
        char* end = nullptr;
        const double g = strtod(v, &end);
        if (end != v && *end == '\0' && g > 0.0 && g < 1e9) return g;
        env_ignored("CUZK_GPU_MEMORY_GIB", v, "a positive number of GiB");
        return 0.0;
    }();
    if (cap_gib == 0.0) return free_b;
    const size_t cap = (size_t)(cap_gib * (double)(1ull << 30));
    const size_t used = total_b - free_b;
    return used >= cap ? 0 : std::min(free_b, cap - used);
}

// Working memory the rounds may take per group of windows: half of the usable free device memory plus what the set's
// rounds already hold (a scratch set keeps its buffers from one MSM to the next), at most 26 GiB. A window of a 2^27
// MSM takes about 17.5 GB (its pairs' sums twice, 96 bytes each, and the inversion tree, 110 bytes a pair), so two
// never share a group there; three windows of a 2^26 MSM take 24.4 GiB, where the 24 GiB cap until 2026-12-04 grouped
// them in twos (39 rounds, not 29). Over window tables (`tables`) the cap is 33 GiB: a set of tables is made only on
// a card with room, and there the one window's parts group further (H200, 2026-12-05, random scalars, medians of 5:
// 2^24 at 20 bits 99.85-100.04 -> 97.87-98.06 ms, 14 -> 8 rounds; 2^26 at 24 bits 365.3 -> 364.3 ms, 23 -> 18 rounds).
// CUZK_MSM_BUDGET_GIB=G (1..1024, read once) sets the cap of both.
size_t batch_affine_budget(size_t held, bool tables = false) {
    static const uint32_t forced = env_u32("CUZK_MSM_BUDGET_GIB", 1, 1024, 0);
    const size_t cap = (size_t)(forced ? forced : tables ? 33 : 26) << 30;
    size_t free_b = 0, total_b = 0;
    if (cuzk::mem_get_info(&free_b, &total_b) != cudaSuccess) {
        cudaGetLastError();
        return 0;
    }
    // (Until 2026-12-03 this halved the held memory too, against this comment. With two prover lanes on one H200 at
    // 2^27 the card is nearly full (134 of its 140 GiB at the peak), so (free + held) / 2 could fall below a window's need
    // although the set already held it, and MSM H fell back to XYZZ in three proofs of eight.)
    return std::min<size_t>(usable_free(free_b, total_b) / 2 + held, cap);
}

// The rounds' buffers a scratch set holds now (what batch_affine_budget adds to the free memory).
size_t ba_held(const cuzk_msm_scratch* B) {
    return B->ba_elems[0].cap + B->ba_elems[1].cap + B->ba_tree.cap + B->ba_slots.cap + B->ba_cnt[0].cap +
           B->ba_cnt[1].cap + B->ba_off[0].cap + B->ba_off[1].cap;
}

// Device fp_t values the inversion tree over m values takes (the values, the prefixes of every level below the top).
size_t inv_tree_elems(uint32_t m) {
    const uint32_t g = inv_fan_in();
    size_t total = 0;
    for (uint32_t mm = m;; mm = (mm + g - 1) / g) {
        total += mm;
        if (mm <= 1) break;
        total += mm;
    }
    return total;
}

// Inverts tree[0 .. m) in place (values non-zero); the rest of tree is the tree's working space.
cuzk_status batch_invert(cudaStream_t st, fp_t* tree, uint32_t m) {
    if (m == 0) return status_ok();
    fp_t* vals[32];  // m < 2^31 and a fan-in of 2 or more: at most 31 levels below the top (24 overflowed with
    fp_t* pres[32];  // CUZK_MSM_INV_G=2 above 2^23 values)
    uint32_t ms[32];
    int levels = 0;
    fp_t* at = tree;
    const uint32_t g = inv_fan_in();
    for (uint32_t mm = m;; mm = (mm + g - 1) / g) {
        vals[levels] = at;
        ms[levels] = mm;
        at += mm;
        if (mm <= 1) break;
        pres[levels] = at;
        at += mm;
        levels++;
    }
    for (int l = 0; l < levels; l++) {
        inv_up_kernel<<<blocks_for((ms[l] + g - 1) / g, 256), 256, 0, st>>>(vals[l], ms[l], g, pres[l],
                                                                              vals[l + 1]);
        CUZK_TRY_LAUNCH("inv_up_kernel");
    }
    inv_top_kernel<<<1, 1, 0, st>>>(vals[levels]);
    CUZK_TRY_LAUNCH("inv_top_kernel");
    for (int l = levels - 1; l >= 0; l--) {
        inv_down_kernel<<<blocks_for((ms[l] + g - 1) / g, 256), 256, 0, st>>>(vals[l], ms[l], g, pres[l],
                                                                                vals[l + 1]);
        CUZK_TRY_LAUNCH("inv_down_kernel");
    }
    return status_ok();
}

// CUZK_MSM_SLOTS=search (read once): the rounds' kernels find a slot's bucket by binary search instead of reading
// the slot map (ba_slots_kernel; the default), an A/B switch. With the map, random scalars (H200, 2026-12-03, two
// rounds each): 2^24 142.0 -> 137.6 ms, 2^26 501.8 -> 481.8 ms, 2^27 956.8 -> 925.2 ms.
// CUZK_MSM_SLOTS=thread writes the map with one thread a bucket (ba_slots_thread_kernel) instead of a warp's lanes
// taking consecutive slots (ba_slots_kernel).
int slots_switch() {
    static const int v = env_word("CUZK_MSM_SLOTS", {"search", "thread"});
    return v;
}

bool slots_by_thread() { return slots_switch() == 1; }

bool slot_map_enabled() { return slots_switch() != 0; }

// A round's output bound (a round's points never grow, ceil(c / 2) <= c, and are at most half plus one a bucket).
inline uint64_t ba_next_bound(uint64_t E, uint64_t nb) { return std::min(E, (E + nb) / 2); }

// Device bytes one group of windows takes: E digits over nb buckets.
size_t ba_group_bytes(uint64_t E, uint64_t nb) {
    uint64_t e1 = ba_next_bound(E, nb), e2 = ba_next_bound(e1, nb);
    return (size_t)((e1 + e2) * sizeof(affine_t<Fp>) + inv_tree_elems((uint32_t)e1) * sizeof(fp_t) +
                    (slot_map_enabled() ? e1 * sizeof(uint32_t) : 0) + 4 * nb * sizeof(uint32_t));
}

// One round: from layout L (points from src) to layout N (points into out, at most m of them).
template <bool R0>
cuzk_status ba_round(cudaStream_t st, BaSource<R0> src, const BaLayout& L, const BaLayout& N, uint32_t* slots,
                     uint32_t m, fp_t* tree, affine_t<Fp>* out) {
    if (slots) {
        if (slots_by_thread())
            ba_slots_thread_kernel<<<blocks_for(L.nb, 256), 256, 0, st>>>(L, N, slots);
        else
            ba_slots_kernel<<<blocks_for(L.nb, 256), 256, 0, st>>>(L, N, slots);
        CUZK_TRY_LAUNCH("ba_slots_kernel");
    }
    ba_den_kernel<R0><<<blocks_for(m, 256), 256, 0, st>>>(src, L, N, slots, m, tree);
    CUZK_TRY_LAUNCH("ba_den_kernel");
    CUZK_CHECK(batch_invert(st, tree, m));
    ba_sum_kernel<R0><<<blocks_for(m, 128), 128, 0, st>>>(src, L, N, slots, tree, out);
    CUZK_TRY_LAUNCH("ba_sum_kernel");
    return status_ok();
}

// The scalar-1 bases' sum (G1) can run through accumulate_affine: the ones list cut into buckets of ONES_CHUNK
// entries, at most ONES_WINDOW_CHUNKS buckets a window (so that a tight budget can take the windows in groups), each
// bucket summed in rounds (an addition 5M + 1S, against 8M + 2S in sum_listed_kernel's XYZZ sum), the buckets' sums
// reduced as the XYZZ path's are. The MSM's accumulation choice decides: AFFINE takes the rounds from 2 ones up (so
// the GPU tests reach them at small sizes), XYZZ never, AUTO from ONES_ROUNDS_MIN up. CUZK_MSM_ONES=xyzz|rounds
// (read once) overrides AUTO's choice for the ones alone, an A/B switch. PoRep-like scalars on the H200 (2026-12-04),
// the ones' phase with XYZZ against rounds: 1.0M ones 3.28 / 4.25 ms, 2.0M 3.98 / 4.80, 8.1M 7.87 / 7.25, 32.5M
// 22.85 / 18.04, 65.1M 42.3 / 31.4 ms: about 0.62 against 0.43 ns a one, with about 1.2 ms more of fixed costs in
// the rounds, so even near 6.3M.
constexpr uint32_t ONES_CHUNK = 512;
constexpr uint32_t ONES_WINDOW_CHUNKS = 1u << 15;
constexpr uint32_t ONES_ROUNDS_MIN = 6u << 20;

bool ones_by_rounds(int accumulate, uint32_t ones) {
    static const int ab = [] {
        const int w = env_word("CUZK_MSM_ONES", {"xyzz", "rounds"});
        return w == 0 ? CUZK_MSM_ACCUMULATE_XYZZ : w == 1 ? CUZK_MSM_ACCUMULATE_AFFINE : CUZK_MSM_ACCUMULATE_AUTO;
    }();
    accumulate = effective_accumulate(accumulate);
    if (accumulate == CUZK_MSM_ACCUMULATE_AUTO) accumulate = ab;
    if (accumulate == CUZK_MSM_ACCUMULATE_XYZZ) return false;
    return ones >= (accumulate == CUZK_MSM_ACCUMULATE_AFFINE ? 2 : ONES_ROUNDS_MIN);
}

// Bucket i of k takes entries [i * chunk, (i + 1) * chunk) of a list of m (fewer, or none, at the end).
__global__ void chunk_layout_kernel(uint32_t m, uint32_t chunk, uint32_t k, uint32_t* __restrict__ cnt,
                                    uint32_t* __restrict__ off) {
    uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= k) return;
    const uint64_t s0 = (uint64_t)i * chunk, s = s0 < m ? s0 : m;
    off[i] = (uint32_t)s;
    cnt[i] = (uint32_t)(m - s < chunk ? m - s : chunk);
}

// CUZK_MSM_GROUP_WINDOWS=K (read once, 1..1024): at most K windows a group of rounds, for the tests (small MSMs then
// run several groups); no cap unless set.
uint32_t group_windows_cap() {
    static const uint32_t v = env_u32("CUZK_MSM_GROUP_WINDOWS", 1, 1024, 1024);
    return v;
}

// Buckets [0, windows * buckets) summed into `out` from the sorted digits, by batch-affine rounds, windows taken
// in groups whose working memory fits `budget` (one window at least). Sets *rounds to the rounds run in all.
// `counts` and `offsets` give each bucket's run of `entries` (base index, sign in the top bit).
// (Pass B of a chunked upload's sort, deferred to run beside the first group's rounds on the copy stream, was tried
// and removed: the GPU tests passed with it, but the time it left the sort came back in the rounds beside it, and the
// totals were equal or slightly worse; H100, 2026-12-05, BENCHMARKS.md.)
cuzk_status accumulate_affine(cuzk_msm_scratch* B, cudaStream_t st, const affine_t<Fp>* bases, const uint32_t* counts,
                              const uint32_t* offsets, const uint32_t* entries, uint32_t windows, uint32_t buckets,
                              size_t budget, xyzz_t<Fp>* out, uint32_t* rounds) {
    *rounds = 0;
    const uint32_t total = windows * buckets;
    CUZK_CHECK(scratch(B->ba_bounds, (2 * (size_t)windows + 1) * 4, "window bounds"));
    uint32_t* bounds = (uint32_t*)B->ba_bounds.ptr;
    uint32_t* longest = bounds + windows + 1;
    CUZK_TRY(cudaMemsetAsync(longest, 0, (size_t)windows * 4, st));
    window_bounds_kernel<<<blocks_for(total, 256), 256, 0, st>>>(offsets, counts, windows, buckets, bounds, longest);
    CUZK_TRY_LAUNCH("window_bounds_kernel");
    std::vector<uint32_t> hb(2 * (size_t)windows + 1);
    CUZK_TRY(cudaMemcpyAsync(hb.data(), bounds, hb.size() * 4, cudaMemcpyDeviceToHost, st));
    CUZK_TRY(cudaStreamSynchronize(st));
    const uint32_t* hlong = hb.data() + windows + 1;

    for (uint32_t w0 = 0; w0 < windows;) {
        uint32_t w1 = w0 + 1;
        // (Positions within a group below 2^31 keep the slot map's flag bit free; a window of 2^31 digits and more,
        // an MSM of over 2^31 scalars, searches.)
        while (w1 < windows && w1 - w0 < group_windows_cap() && hb[w1 + 1] - hb[w0] < BA_ALONE &&
               ba_group_bytes(hb[w1 + 1] - hb[w0], (uint64_t)(w1 + 1 - w0) * buckets) <= budget)
            w1++;
        const uint32_t b0 = w0 * buckets, nb = (w1 - w0) * buckets;
        uint32_t E = hb[w1] - hb[w0], most = 0;
        for (uint32_t w = w0; w < w1; w++) most = std::max(most, hlong[w]);
        BaLayout L{offsets + b0, counts + b0, hb[w0], nb};
        BaSource<true> src0{bases, entries, hb[w0]};
        BaSource<false> src{nullptr, nullptr, 0};
        const uint32_t tail = ba_tail_len();
        const size_t e1 = ba_next_bound(E, nb), e2 = ba_next_bound(e1, nb);
        const size_t b1 = e1 * sizeof(affine_t<Fp>), b2 = e2 * sizeof(affine_t<Fp>);
        uint32_t* slots = nullptr;
        size_t tmp = 0;
        if (most > tail) {
            CUZK_CHECK(scratch(B->ba_elems[0], b1, "batch-affine sums"));
            CUZK_CHECK(scratch(B->ba_elems[1], b2, "batch-affine sums"));
            CUZK_CHECK(scratch(B->ba_tree, inv_tree_elems((uint32_t)e1) * sizeof(fp_t), "the inversion tree"));
            if (slot_map_enabled() && E < BA_ALONE) {
                CUZK_CHECK(scratch(B->ba_slots, e1 * sizeof(uint32_t), "the rounds' slot map"));
                slots = (uint32_t*)B->ba_slots.ptr;
            }
            for (int i = 0; i < 2; i++) {
                CUZK_CHECK(scratch(B->ba_cnt[i], (size_t)nb * 4, "batch-affine counts"));
                CUZK_CHECK(scratch(B->ba_off[i], (size_t)nb * 4, "batch-affine offsets"));
            }
            CUZK_TRY(cub::DeviceScan::ExclusiveSum(nullptr, tmp, (uint32_t*)B->ba_cnt[0].ptr,
                                                   (uint32_t*)B->ba_off[0].ptr, (int)nb, st));
            CUZK_CHECK(scratch(B->cub, tmp, "the scan"));
        }
        if (most > tail) {
            fp_t* tree = (fp_t*)B->ba_tree.ptr;
            uint64_t bound = E;
            for (int r = 0; most > tail; r++) {
                uint32_t* ncnt = (uint32_t*)B->ba_cnt[r % 2].ptr;
                uint32_t* noff = (uint32_t*)B->ba_off[r % 2].ptr;
                affine_t<Fp>* out_pts = (affine_t<Fp>*)B->ba_elems[r % 2].ptr;
                ba_halve_kernel<<<blocks_for(nb, 256), 256, 0, st>>>(L.cnt, nb, ncnt);
                CUZK_TRY_LAUNCH("ba_halve_kernel");
                CUZK_TRY(cub::DeviceScan::ExclusiveSum(B->cub.ptr, tmp, ncnt, noff, (int)nb, st));
                BaLayout N{noff, ncnt, 0, nb};
                bound = ba_next_bound(bound, nb);
                if (r == 0) {
                    CUZK_CHECK(ba_round<true>(st, src0, L, N, slots, (uint32_t)bound, tree, out_pts));
                } else {
                    CUZK_CHECK(ba_round<false>(st, src, L, N, slots, (uint32_t)bound, tree, out_pts));
                }
                L = N;
                src.pts = out_pts;
                most = (most + 1) / 2;
                ++*rounds;
            }
            ba_tail_kernel<false><<<blocks_for(nb, 128), 128, 0, st>>>(src, L, out + b0);
        } else {
            ba_tail_kernel<true><<<blocks_for(nb, 128), 128, 0, st>>>(src0, L, out + b0);
        }
        CUZK_TRY_LAUNCH("ba_tail_kernel");
        w0 = w1;
    }
    return status_ok();
}

// The classification's buffers for n scalars: canonical scalars, the scalar-1 list, and three counters (ones, others,
// and the end of a chunked upload's stage).
cuzk_status classify_scratch(cuzk_msm_scratch* B, size_t n) {
    CUZK_CHECK(scratch(B->canon, n * sizeof(fr_t), "canonical scalars"));
    CUZK_CHECK(scratch(B->ones, n * sizeof(uint32_t), "the scalar-1 list"));
    return scratch(B->counters, 3 * sizeof(uint32_t), "counters");
}

// The window for an MSM whose Pippenger part has `others` scalars: `window` when given, else the tuning table's entry
// for their count's log (the D4 choice), else a rule of thumb.
uint32_t choose_window(uint32_t window, const uint8_t* table, uint32_t others) {
    uint32_t c = window;
    if (c == 0) {
        uint32_t lg = others <= 1 ? 0 : 32 - __builtin_clz(others - 1);
        c = table ? table[std::min<uint32_t>(lg, 31)] : 0;
        if (c == 0) c = std::max<uint32_t>(1, std::min<uint32_t>(MAX_WINDOW, lg > 4 ? lg - 4 : 1));
        c = std::min(c, MAX_WINDOW);
    }
    return c;
}

// CUZK_MSM_CHUNKED_MIN=L (read once, 0..31): host scalars of an MSM of 2^L scalars and more go up in chunks
// (upload_and_stage), 0 turns that off; 22 unless set.
uint32_t chunked_min_log() {
    static const uint32_t v = env_u32("CUZK_MSM_CHUNKED_MIN", 0, 31, 22);
    return v;
}

// CUZK_MSM_UPLOAD_CHUNKS=K (read once, 1..UPLOAD_CHUNKS): the chunks of upload_and_stage; UPLOAD_CHUNKS unless set.
uint32_t upload_chunks() {
    static const uint32_t v = env_u32("CUZK_MSM_UPLOAD_CHUNKS", 1, UPLOAD_CHUNKS, UPLOAD_CHUNKS);
    return v;
}

// What upload_and_stage leaves.
struct Prestaged {
    bool done = false;  // the scalars are on the device, classified (canon, the ones list, the counters)
    uint32_t c = 0;     // the window the stage was made for
    uint32_t ones = 0, others = 0;
    uint32_t digits = 0;  // the stage's entries
    uint32_t chunks = 0;
    // The stage's segments (StageMap): `segs` of them (and the end), from word segs_at of the set's stage_cursor.
    size_t segs_at = 0;
    uint32_t segs = 0;
};

// The scalars' upload from the host, in UPLOAD_CHUNKS chunks on the set's copy stream, overlapped with the work that
// needs only the scalars already there: each chunk, once it has landed, is classified, its digits' coarse bins counted
// (coarse_histogram_kernel), and its digits placed by pass A of the staged sort (stage_coarse_kernel) in a region of
// the stage of its own, which starts where the previous chunk's ends (chunk_cursor_kernel). That leaves pass B to
// run once the last chunk is in, reading each coarse bin's runs from all chunks as one (stage_segments_kernel,
// StageMap). The window is guessed from the table as if every scalar went to Pippenger (random
// scalars, where the upload is longest); when the classification's count calls for another window, or not for the
// staged sort, run_msm sorts from the classified scalars as it does after a whole upload, and only the overlapped
// work is lost. The stage holds every digit (n * windows * 8 bytes, in the rounds' first buffer, as sort_staged's
// does a group of windows), so the path is taken only when free memory allows.
// On the H200 (2026-12-04, BENCHMARKS.md), random scalars from pinned memory, same call: 2^24 119.5 -> 117.5-118.3 ms,
// 2^26 413.4-413.9 -> 410.2-410.8 ms, 2^27 805.7-805.9 -> 792.4-792.5 ms (the sort after the upload 35.2 -> 22.0
// ms); PoRep-like scalars unchanged. Counting the buckets per chunk as well (histogram_kernel) moved time from the sort
// to the last chunk's work and gained nothing measurable.

cuzk_status upload_and_stage(cuzk_msm_scratch* B, cudaStream_t st, const fr_t* host, uint32_t n, uint32_t window,
                             const uint8_t* table, int split, uint32_t merge, Prestaged* out) {
    *out = Prestaged{};
    const uint32_t min_log = chunked_min_log();
    if (min_log == 0 || n < (1u << min_log)) return status_ok();
    // Over window tables (merge = W) the window is the tables' and the staged sort always runs; every digit window
    // goes to window 0's bins.
    const uint32_t c = merge ? window : choose_window(window, table, n);
    if (!merge && !use_staged_sort(n, n, c)) return status_ok();
    const uint32_t digit_windows = (256 + c - 1) / c, buckets = (1u << (c - 1)) + 1, coarse = stage_coarse(c);
    const uint32_t windows = merge ? 1 : digit_windows;
    const uint64_t cap = (uint64_t)n * digit_windows;
    if (cap >= 0x80000000ull) return status_ok();
    const size_t stage_bytes = cap * sizeof(uint2);
    if (B->ba_elems[0].cap < stage_bytes) {
        // Room for the stage and the rest of the MSM's sort (its own scalars twice, the sorted digits), with 1 GiB
        // to spare; else the whole upload, and a stage of a group of windows.
        size_t free_b = 0, total_b = 0;
        if (cuzk::mem_get_info(&free_b, &total_b) != cudaSuccess) {
            cudaGetLastError();
            return status_ok();
        }
        const size_t need = stage_bytes + cap * 4 + 2 * (size_t)n * sizeof(fr_t) + (1ull << 30);
        if (usable_free(free_b, total_b) + B->ba_elems[0].cap + B->scalars.cap + B->canon.cap < need)
            return status_ok();
    }
    CUZK_CHECK(raise_stage_smem_limits());
    const size_t bins = (size_t)windows * coarse;
    const uint32_t per = blocks_for(blocks_for(n, upload_chunks()), STAGE_SCALARS) * STAGE_SCALARS;
    const uint32_t chunks = blocks_for(n, per);
    // Each chunk's bin counts and cursors, the bins' totals, then the segments (8-byte aligned).
    const size_t segs_at = ((2 * chunks + 1) * bins + 1) & ~(size_t)1;
    CUZK_CHECK(scratch(B->scalars, (size_t)n * sizeof(fr_t), "scalars"));
    CUZK_CHECK(classify_scratch(B, n));
    CUZK_CHECK(scratch(B->ba_elems[0], stage_bytes, "the sort's stage"));
    CUZK_CHECK(scratch(B->stage_cursor, (segs_at + 2 * (chunks * bins + 1)) * 4, "the sort's bin counts and cursors"));
    fr_t* dev = (fr_t*)B->scalars.ptr;
    fr_t* canon = (fr_t*)B->canon.ptr;
    uint32_t* counters = (uint32_t*)B->counters.ptr;
    uint32_t* bin_counts = (uint32_t*)B->stage_cursor.ptr;
    uint32_t* bin_cursor = bin_counts + chunks * bins;
    uint32_t* bin_totals = bin_cursor + chunks * bins;
    uint2* segs = (uint2*)((uint32_t*)B->stage_cursor.ptr + segs_at);
    uint2* stage = (uint2*)B->ba_elems[0].ptr;
    CUZK_TRY(cudaMemsetAsync(counters, 0, 3 * sizeof(uint32_t), st));
    CUZK_TRY(cudaMemsetAsync(bin_counts, 0, chunks * bins * 4, st));
    // The copies wait for the stream's earlier work (the scratch above may have held the last MSM's data).
    CUZK_TRY(cudaEventRecord(B->chunk_ev[0], st));
    CUZK_TRY(cudaStreamWaitEvent(B->copy_stream, B->chunk_ev[0], 0));
    const size_t smem_a = stage_coarse_smem(c);
    for (uint32_t k = 0, first = 0; first < n; k++, first += per) {
        const uint32_t len = std::min(per, n - first);
        // From pageable memory the copy returns once it is done: the chunks before it compute meanwhile.
        CUZK_TRY(cudaMemcpyAsync(dev + first, host + first, (size_t)len * sizeof(fr_t), cudaMemcpyHostToDevice,
                                 B->copy_stream));
        CUZK_TRY(cudaEventRecord(B->chunk_ev[k], B->copy_stream));
        CUZK_TRY(cudaStreamWaitEvent(st, B->chunk_ev[k], 0));
        if (first + len == n) CUZK_TRY(cudaEventRecord(B->ev[1], st));
        classify_kernel<<<blocks_for(len, 256), 256, 0, st>>>(dev + first, true, canon + first, len, split,
                                                              (uint32_t*)B->ones.ptr, counters, first,
                                                              merge ? merge : 1);
        CUZK_TRY_LAUNCH("classify_kernel");
        uint32_t* counts_k = bin_counts + k * bins;
        uint32_t* cursor_k = bin_cursor + k * bins;
        CUZK_CHECK(coarse_histogram(st, canon + first, len, split, c, windows, counts_k, merge));
        chunk_cursor_kernel<<<1, STAGE_THREADS, 0, st>>>(counts_k, (uint32_t)bins, cursor_k, counters + 2);
        CUZK_TRY_LAUNCH("chunk_cursor_kernel");
        stage_coarse_kernel<<<blocks_for(len, STAGE_SCALARS), STAGE_THREADS, smem_a, st>>>(
            canon + first, len, split, c, 0, digit_windows, buckets, cursor_k, 0, stage, first, merge);
        CUZK_TRY_LAUNCH("stage_coarse_kernel");
    }
    stage_segments_kernel<<<1, STAGE_THREADS, 0, st>>>(bin_counts, bin_cursor, (uint32_t)bins, chunks, bin_totals,
                                                         segs);
    CUZK_TRY_LAUNCH("stage_segments_kernel");
    uint32_t h[3];
    CUZK_TRY(cudaMemcpyAsync(h, counters, sizeof(h), cudaMemcpyDeviceToHost, st));
    CUZK_TRY(cudaEventRecord(B->ev[2], st));
    CUZK_TRY(cudaStreamSynchronize(st));
    *out = Prestaged{true, c, h[0], h[1], h[2], chunks, segs_at, (uint32_t)(chunks * bins)};
    return status_ok();
}

// The rest of the staged sort after upload_and_stage: the buckets' counts from the whole stage (`counts` zeroed by the
// caller), their offsets, the cursors and the windows' starts (`start`, as sort_staged gives them), then pass B: the
// stage's entries to their buckets' runs in `entries`.
cuzk_status finish_stage(cuzk_msm_scratch* B, cudaStream_t st, uint32_t c, uint32_t windows, uint32_t buckets,
                         const Prestaged& pre, uint32_t* counts, uint32_t* offsets, uint32_t* cursor,
                         uint32_t* entries, size_t scan_bytes, std::vector<uint32_t>* start) {
    const uint32_t len = pre.digits;
    const uint2* stage = (const uint2*)B->ba_elems[0].ptr;
    const StageMap map{(const uint2*)((uint32_t*)B->stage_cursor.ptr + pre.segs_at), pre.segs};
    const size_t total = (size_t)windows * buckets;
    if (len > 0) {
        stage_count_kernel<<<blocks_for(len, STAGE_ENTRIES), STAGE_THREADS, 0, st>>>(stage, map, len, buckets, c,
                                                                                     counts);
        CUZK_TRY_LAUNCH("stage_count_kernel");
    }
    CUZK_TRY(cub::DeviceScan::ExclusiveSum(B->cub.ptr, scan_bytes, counts, offsets, (int)total, st));
    CUZK_TRY(cudaMemcpyAsync(cursor, offsets, total * 4, cudaMemcpyDeviceToDevice, st));
    CUZK_CHECK(window_starts(st, offsets, counts, windows, buckets, start));
    if ((*start)[windows] != len) return status_msg(1, "the chunked sort lost digits (an internal error)");
    return stage_fine(st, stage, map, len, buckets, c, cursor, entries);
}

// Over window tables (cuzk_msm_bases_create_tables) the one window's buckets are cut into this many parts, which the
// batch-affine rounds take in groups as they take windows: a 2^26 MSM's 738M digits at c = 24 need several groups.
constexpr uint32_t MERGE_PARTS = 64;
// Window tables take the staged sort, which the tests cover from 10-bit windows up.
constexpr uint32_t TABLE_MIN_WINDOW = 10;

// offsets[0 .. m) = v: the padding buckets' offsets past the sorted ones (their counts are zero).
__global__ void pad_offsets_kernel(uint32_t* __restrict__ offsets, uint32_t m, uint32_t v) {
    const uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < m) offsets[i] = v;
}

template <class F>
cuzk_status run_msm(const cuzk_msm_bases* Bs, cuzk_msm_scratch* B, size_t offset, const void* scalars, size_t n,
                    int on_device, uint32_t window, const uint8_t* table, int split, int accumulate, void* out,
                    size_t out_capacity, cuzk_msm_stats* stats) {
    using Xyzz = xyzz_t<F>;
    using Jac = jacobian_t<F>;
    cudaStream_t st = B->stream;
    memset(stats, 0, sizeof(*stats));
    stats->accumulation = CUZK_MSM_ACCUMULATE_XYZZ;
    if (offset > Bs->n || n > Bs->n - offset) {
        char msg[200];
        snprintf(msg, sizeof(msg), "MSM of %zu scalars at offset %zu runs past the %zu resident bases", n, offset,
                 Bs->n);
        return status_msg(1, msg);
    }
    if (n >= 0x80000000ull) return status_msg(1, "MSM of 2^31 or more scalars: split it");
    if (window > MAX_WINDOW) return status_msg(1, "window above 24 bits");
    // Window tables (cuzk_msm_bases_create_tables): every window's digits go to one window of buckets, entry
    // i * W + w naming the table point 2^(cw) P_i; the window is the tables'.
    const uint32_t merge = Bs->table_windows;
    if (merge) {
        if (window && window != Bs->table_window) {
            char msg[200];
            snprintf(msg, sizeof(msg), "window %u asked of bases with tables for %u-bit windows", window,
                     Bs->table_window);
            return status_msg(1, msg);
        }
        if ((n + offset) * merge >= 0x80000000ull) return status_msg(1, "window tables of 2^31 points or more");
    }
    const affine_t<F>* bases = (const affine_t<F>*)Bs->points + offset * (merge ? merge : 1);
    uint32_t n32 = (uint32_t)n;
    if (n == 0) return status_ok();

    CUZK_TRY(cudaEventRecord(B->ev[0], st));
    // 0-1. Host scalars of a large MSM: uploaded in chunks, each classified and staged for the sort as it lands.
    Prestaged pre;
    if (!on_device)
        CUZK_CHECK(upload_and_stage(B, st, (const fr_t*)scalars, n32, merge ? Bs->table_window : window, table, split,
                                    merge, &pre));
    fr_t* canon = nullptr;
    uint32_t ones = 0, others = 0;
    if (pre.done) {
        canon = (fr_t*)B->canon.ptr;
        ones = pre.ones;
        others = pre.others;
    } else {
        const fr_t* in = (const fr_t*)scalars;
        if (!on_device) {
            CUZK_CHECK(scratch(B->scalars, n * sizeof(fr_t), "scalars"));
            CUZK_TRY(cudaMemcpyAsync(B->scalars.ptr, scalars, n * sizeof(fr_t), cudaMemcpyHostToDevice, st));
            in = (const fr_t*)B->scalars.ptr;
        }
        CUZK_TRY(cudaEventRecord(B->ev[1], st));

        // 1. classify
        CUZK_CHECK(classify_scratch(B, n));
        canon = (fr_t*)B->canon.ptr;
        uint32_t* counters = (uint32_t*)B->counters.ptr;
        CUZK_TRY(cudaMemsetAsync(counters, 0, 2 * sizeof(uint32_t), st));
        const bool in16 = ((uintptr_t)in & 15) == 0;
        classify_kernel<<<blocks_for(n, 256), 256, 0, st>>>(in, in16, canon, n32, split, (uint32_t*)B->ones.ptr,
                                                            counters, 0, merge ? merge : 1);
        CUZK_TRY_LAUNCH("classify_kernel");
        uint32_t host_counters[2];
        CUZK_TRY(cudaMemcpyAsync(host_counters, counters, sizeof(host_counters), cudaMemcpyDeviceToHost, st));
        CUZK_TRY(cudaEventRecord(B->ev[2], st));
        CUZK_TRY(cudaStreamSynchronize(st));
        ones = host_counters[0];
        others = host_counters[1];
    }
    stats->ones = ones;
    stats->others = others;
    stats->zeros = n - ones - others;
    stats->upload_chunks = pre.chunks;

    // Window: given, or from the table by the number of scalars Pippenger will see (the D4 choice); the tables' own.
    const uint32_t c = merge ? Bs->table_window : choose_window(window, table, others);
    // Over window tables, one window of buckets takes every digit (digit_windows of them a scalar); its buckets are
    // padded to MERGE_PARTS * `part` (zero counts), so that the batch-affine rounds can take them in groups as they
    // take windows (accumulate_affine), and the reduction weighs them as one window.
    const uint32_t digit_windows = (256 + c - 1) / c;
    uint32_t windows = merge ? 1 : digit_windows;
    uint32_t buckets = (1u << (c - 1)) + 1;
    const uint32_t part = merge ? (buckets + MERGE_PARTS - 1) / MERGE_PARTS : buckets;
    const uint32_t sorted_total = windows * buckets;  // the buckets the sort fills
    stats->window = c;
    uint32_t total = merge ? MERGE_PARTS * part : windows * buckets;
    if ((uint64_t)others * digit_windows >= 0xffffffffull) return status_msg(1, "window too small for this MSM size");

    size_t parts_needed = 0;
    Xyzz* result_parts = nullptr;
    uint32_t per_window = 0;
    if (others > 0) {
        // 2. sort
        CUZK_CHECK(scratch(B->counts, (size_t)total * 4, "bucket counts"));
        CUZK_CHECK(scratch(B->offsets, (size_t)total * 4, "bucket offsets"));
        CUZK_CHECK(scratch(B->cursor, (size_t)total * 4, "bucket cursors"));
        CUZK_CHECK(scratch(B->entries, (size_t)others * windows * 4, "sorted digits"));
        uint32_t* counts = (uint32_t*)B->counts.ptr;
        uint32_t* offsets = (uint32_t*)B->offsets.ptr;
        uint32_t* cursor = (uint32_t*)B->cursor.ptr;
        CUZK_TRY(cudaMemsetAsync(counts, 0, (size_t)total * 4, st));
        if (merge) CUZK_CHECK(scratch(B->entries, (size_t)others * digit_windows * 4, "sorted digits"));
        // The scans' scratch, also for the levels' scans below: the larger of a whole sum and a scan from a start.
        size_t tmp = 0, tmp_scan = 0;
        CUZK_TRY(cub::DeviceScan::ExclusiveSum(nullptr, tmp, counts, offsets, (int)total, st));
        CUZK_TRY(cub::DeviceScan::ExclusiveScan(nullptr, tmp_scan, counts, offsets, ::cuda::std::plus<>{}, 0u,
                                                (int)total, st));
        tmp = std::max(tmp, tmp_scan);
        CUZK_CHECK(scratch(B->cub, tmp, "the scan"));
        std::vector<uint32_t> start;
        // Window tables always take the staged sort (it alone merges the windows' digits).
        const bool staged = merge || use_staged_sort(n, others, c);
        // The chunked upload's stage serves when it was made for this window and the staged sort is the one to run.
        if (staged && pre.done && pre.c == c) {
            CUZK_CHECK(finish_stage(B, st, c, windows, buckets, pre, counts, offsets, cursor,
                                    (uint32_t*)B->entries.ptr, tmp, &start));
        } else if (staged) {
            CUZK_CHECK(sort_staged(B, st, canon, n32, split, c, windows, buckets, counts, offsets, cursor,
                                   (uint32_t*)B->entries.ptr, tmp, &start, merge));
        } else {
            histogram_kernel<<<blocks_for(n, 256), 256, 0, st>>>(canon, n32, split, c, windows, buckets, counts);
            CUZK_TRY_LAUNCH("histogram_kernel");
            CUZK_TRY(cub::DeviceScan::ExclusiveSum(B->cub.ptr, tmp, counts, offsets, (int)total, st));
            CUZK_TRY(cudaMemcpyAsync(cursor, offsets, (size_t)total * 4, cudaMemcpyDeviceToDevice, st));
            CUZK_CHECK(window_starts(st, offsets, counts, windows, buckets, &start));
        }
        stats->digits = start[windows];
        size_t largest = largest_window(start);
        if (merge) {
            // The padding buckets' offsets (their counts are 0), then the parts as the windows the rest sees.
            pad_offsets_kernel<<<blocks_for(total - sorted_total, 256), 256, 0, st>>>(offsets + sorted_total,
                                                                                    total - sorted_total,
                                                                                    start[windows]);
            CUZK_TRY_LAUNCH("pad_offsets_kernel");
            windows = MERGE_PARTS;
            buckets = part;
            CUZK_CHECK(window_starts(st, offsets, counts, windows, buckets, &start));
            largest = largest_window(start);
        }
        if (!staged) {
            uint32_t group = scatter_group(n, others, windows, c);
            dim3 grid(blocks_for(n, 256), (windows + group - 1) / group);
            scatter_kernel<<<grid, 256, 0, st>>>(canon, n32, split, c, windows, group, buckets, cursor,
                                                 (uint32_t*)B->entries.ptr);
            CUZK_TRY_LAUNCH("scatter_kernel");
        }

        // 3. accumulate: by batch-affine rounds or in levels of tasks (see task_count_kernel).
        // The reduction's windows: over window tables, the parts are one window of `total` buckets.
        const uint32_t rwindows = merge ? 1 : windows, rbuckets = merge ? total : buckets;
        const uint32_t seg = weighted_segment<F>(rwindows, rbuckets);
        uint32_t per = (rbuckets + seg - 1) / seg;
        size_t part_bytes = std::max<size_t>((size_t)total, (size_t)rwindows * per) * sizeof(Xyzz);
        CUZK_CHECK(scratch(B->parts_a, part_bytes, "bucket sums"));
        CUZK_CHECK(scratch(B->parts_b, part_bytes, "partial sums"));
        Xyzz* cur = (Xyzz*)B->parts_a.ptr;
        Xyzz* other = (Xyzz*)B->parts_b.ptr;
        bool affine = false;
        size_t budget = 0;
        if constexpr (std::is_same<F, Fp>::value) {
            affine = use_batch_affine(accumulate, stats->digits, total);
            if (affine) {
                // The largest window's working memory must fit the budget, or a choice left to AUTO falls back to
                // XYZZ, which needs no more than it has (an explicit request goes ahead and fails, if it must, with
                // the allocation's own error).
                budget = batch_affine_budget(ba_held(B), merge != 0);
                if (effective_accumulate(accumulate) == CUZK_MSM_ACCUMULATE_AUTO &&
                    ba_group_bytes(largest, buckets) > budget)
                    affine = false;
            }
        }
        stats->accumulation = affine ? CUZK_MSM_ACCUMULATE_AFFINE : CUZK_MSM_ACCUMULATE_XYZZ;
        CUZK_TRY(cudaEventRecord(B->ev[3], st));
        if (affine) {
            if constexpr (std::is_same<F, Fp>::value) {
                CUZK_CHECK(accumulate_affine(B, st, bases, counts, offsets, (const uint32_t*)B->entries.ptr, windows,
                                             buckets, budget, cur, &stats->affine_rounds));
            }
        } else {
            for (int i = 0; i < 2; i++) {
                CUZK_CHECK(scratch(B->tcount[i], (size_t)total * 4, "task counts"));
                CUZK_CHECK(scratch(B->toff[i], (size_t)total * 4, "task offsets"));
            }
            CUZK_CHECK(scratch(B->level_max, 4, "a counter"));
            // Level 0 cuts lists at twice the mean bucket size: uniform buckets stay whole, hot ones are shared out.
            uint64_t mean = ((merge ? stats->digits : (uint64_t)others * windows) + total - 1) / total;
            uint32_t k = (uint32_t)std::max<uint64_t>(64, 2 * mean);
            const uint32_t* in_count = counts;
            const uint32_t* in_off = offsets;
            const Xyzz* in_pts = nullptr;
            for (int level = 0;; level++) {
                uint32_t* tc = (uint32_t*)B->tcount[level % 2].ptr;
                uint32_t* to = (uint32_t*)B->toff[level % 2].ptr;
                uint32_t* maxp = (uint32_t*)B->level_max.ptr;
                CUZK_TRY(cudaMemsetAsync(maxp, 0, 4, st));
                task_count_kernel<<<blocks_for(total, 256), 256, 0, st>>>(in_count, total, k, tc, maxp);
                CUZK_TRY_LAUNCH("task_count_kernel");
                CUZK_TRY(cub::DeviceScan::ExclusiveSum(B->cub.ptr, tmp, tc, to, (int)total, st));
                uint32_t h[3];
                CUZK_TRY(cudaMemcpyAsync(&h[0], to + total - 1, 4, cudaMemcpyDeviceToHost, st));
                CUZK_TRY(cudaMemcpyAsync(&h[1], tc + total - 1, 4, cudaMemcpyDeviceToHost, st));
                CUZK_TRY(cudaMemcpyAsync(&h[2], maxp, 4, cudaMemcpyDeviceToHost, st));
                CUZK_TRY(cudaStreamSynchronize(st));
                uint32_t ntasks = h[0] + h[1], max_tasks = h[2];
                CUZK_CHECK(scratch(B->task_bucket, (size_t)ntasks * 4, "the task map"));
                CUZK_CHECK(scratch(B->tasks[level % 2], (size_t)ntasks * sizeof(Xyzz), "task sums"));
                uint32_t* task_bucket = (uint32_t*)B->task_bucket.ptr;
                Xyzz* out_pts = (Xyzz*)B->tasks[level % 2].ptr;
                task_fill_kernel<<<blocks_for(total, 256), 256, 0, st>>>(tc, to, total, task_bucket);
                CUZK_TRY_LAUNCH("task_fill_kernel");
                if (level == 0) {
                    const uint32_t* order = nullptr;
                    if (ntasks >= SORT_MIN_TASKS && sort_tasks_by_length()) {
                        for (int j = 0; j < 2; j++) {
                            CUZK_CHECK(scratch(B->sort_keys[j], (size_t)ntasks * 4, "task lengths"));
                            CUZK_CHECK(scratch(B->sort_index[j], (size_t)ntasks * 4, "the task order"));
                        }
                        uint32_t* keys_in = (uint32_t*)B->sort_keys[0].ptr;
                        uint32_t* keys_out = (uint32_t*)B->sort_keys[1].ptr;
                        uint32_t* index_in = (uint32_t*)B->sort_index[0].ptr;
                        uint32_t* index_out = (uint32_t*)B->sort_index[1].ptr;
                        task_len_kernel<<<blocks_for(ntasks, 256), 256, 0, st>>>(counts, to, task_bucket, ntasks, k,
                                                                                 keys_in, index_in);
                        CUZK_TRY_LAUNCH("task_len_kernel");
                        const int bits = 32 - __builtin_clz(k);  // lengths are at most k
                        size_t sort_bytes = 0;
                        CUZK_TRY(cub::DeviceRadixSort::SortPairsDescending(nullptr, sort_bytes, keys_in, keys_out,
                                                                           index_in, index_out, (int)ntasks, 0, bits, st));
                        CUZK_CHECK(scratch(B->sort_tmp, sort_bytes, "the task sort"));
                        CUZK_TRY(cub::DeviceRadixSort::SortPairsDescending(B->sort_tmp.ptr, sort_bytes, keys_in,
                                                                           keys_out, index_in, index_out, (int)ntasks, 0,
                                                                           bits, st));
                        order = index_out;
                    }
                    accumulate_kernel<F><<<blocks_for(ntasks, 128), 128, 0, st>>>(
                        bases, (const uint32_t*)B->entries.ptr, offsets, counts, to, task_bucket, ntasks, k, order,
                        out_pts);
                    CUZK_TRY_LAUNCH("accumulate_kernel");
                } else {
                    combine_tasks_kernel<F><<<blocks_for(ntasks, 128), 128, 0, st>>>(in_pts, in_off, in_count, to,
                                                                                     task_bucket, ntasks, k, out_pts);
                    CUZK_TRY_LAUNCH("combine_tasks_kernel");
                }
                in_pts = out_pts;
                in_count = tc;
                in_off = to;
                if (max_tasks <= 1) break;
                k = SEGMENT;
            }
            buckets_kernel<F><<<blocks_for(total, 256), 256, 0, st>>>(in_pts, in_off, in_count, total, cur);
            CUZK_TRY_LAUNCH("buckets_kernel");
        }
        CUZK_TRY(cudaEventRecord(B->ev[4], st));

        // 4. reduce
        weighted_segments_kernel<F><<<blocks_for((uint64_t)rwindows * per, 128), 128, 0, st>>>(cur, rwindows,
                                                                                              rbuckets, seg, other);
        CUZK_TRY_LAUNCH("weighted_segments_kernel");
        std::swap(cur, other);
        per_window = per;
        CUZK_CHECK(reduce_to_parts<F>(st, &cur, &other, rwindows, &per_window));
        result_parts = cur;
        stats->windows = rwindows;
        stats->parts_per_window = per_window;
        parts_needed += (size_t)rwindows * per_window;
    } else {
        CUZK_TRY(cudaEventRecord(B->ev[3], st));
        CUZK_TRY(cudaEventRecord(B->ev[4], st));
    }
    CUZK_TRY(cudaEventRecord(B->ev[5], st));

    // 5. ones, in scratch of their own: the window parts must survive.
    uint32_t ones_parts = 0;
    Xyzz* ones_result = nullptr;
    if (ones > 0) {
        const uint32_t* list = (const uint32_t*)B->ones.ptr;
        Xyzz* cur = nullptr;  // the sums to reduce: ones_parts of them, `other` as much room again
        if constexpr (std::is_same<F, Fp>::value) {
            if (ones_by_rounds(accumulate, ones)) {
                const uint32_t chunks = (ones + ONES_CHUNK - 1) / ONES_CHUNK;
                const uint32_t buckets = std::min(chunks, ONES_WINDOW_CHUNKS);
                const uint32_t windows = (chunks + buckets - 1) / buckets, k = windows * buckets;
                const size_t budget = batch_affine_budget(ba_held(B));
                // Too little memory for one window: the XYZZ sum below, which needs none.
                if (ba_group_bytes(std::min<uint64_t>(ones, (uint64_t)buckets * ONES_CHUNK), buckets) <= budget) {
                    CUZK_CHECK(scratch(B->ones_layout, (size_t)k * 8, "the scalar-1 list's buckets"));
                    uint32_t* cnt = (uint32_t*)B->ones_layout.ptr;
                    uint32_t* off = cnt + k;
                    chunk_layout_kernel<<<blocks_for(k, 256), 256, 0, st>>>(ones, ONES_CHUNK, k, cnt, off);
                    CUZK_TRY_LAUNCH("chunk_layout_kernel");
                    CUZK_CHECK(scratch(B->ones_sums, (size_t)k * 2 * sizeof(Xyzz), "scalar-1 sums"));
                    cur = (Xyzz*)B->ones_sums.ptr;
                    CUZK_CHECK(accumulate_affine(B, st, bases, cnt, off, list, windows, buckets, budget, cur,
                                                 &stats->ones_rounds));
                    ones_parts = k;
                }
            }
        }
        if (!cur) {
            // Enough threads to fill the card (about 2^18), at least 8 bases each.
            uint32_t chunk = std::max<uint32_t>(8, (ones + (1u << 18) - 1) >> 18);
            uint32_t threads = (ones + chunk - 1) / chunk;
            CUZK_CHECK(scratch(B->ones_sums, (size_t)threads * 2 * sizeof(Xyzz), "scalar-1 sums"));
            cur = (Xyzz*)B->ones_sums.ptr;
            sum_listed_kernel<F><<<blocks_for(threads, 128), 128, 0, st>>>(bases, list, ones, threads, cur);
            CUZK_TRY_LAUNCH("sum_listed_kernel");
            ones_parts = threads;
        }
        Xyzz* other = cur + ones_parts;
        CUZK_CHECK(reduce_to_parts<F>(st, &cur, &other, 1, &ones_parts));
        ones_result = cur;
        stats->ones_parts = ones_parts;
        parts_needed += ones_parts;
    }
    CUZK_TRY(cudaEventRecord(B->ev[6], st));

    if (parts_needed > out_capacity) return status_msg(1, "output buffer too small for the partial sums");
    if (parts_needed > 0) {
        // Convert to Jacobian into a small device buffer, then copy out.
        static_assert(sizeof(Jac) <= sizeof(Xyzz), "a Jacobian point fits where an XYZZ one was");
        Jac* jac = nullptr;
        CUZK_TRY(cuzk::pool_malloc_async((void**)&jac, parts_needed * sizeof(Jac), st));
        size_t at = 0;
        if (result_parts) {
            uint32_t k = stats->windows * per_window;
            to_jacobian_kernel<F><<<blocks_for(k, 128), 128, 0, st>>>(result_parts, k, jac);
            at = k;
        }
        if (ones_result) to_jacobian_kernel<F><<<blocks_for(ones_parts, 128), 128, 0, st>>>(ones_result, ones_parts,
                                                                                            jac + at);
        cudaError_t e = cudaGetLastError();
        if (e == cudaSuccess) e = cudaMemcpyAsync(out, jac, parts_needed * sizeof(Jac), cudaMemcpyDeviceToHost, st);
        cudaFreeAsync(jac, st);
        if (e != cudaSuccess) return status_from(e, "copying the partial sums back");
    }
    CUZK_TRY(cudaEventRecord(B->ev[7], st));
    CUZK_TRY(cudaStreamSynchronize(st));
    stats->ms_upload = elapsed(B->ev[0], B->ev[1]);
    stats->ms_classify = elapsed(B->ev[1], B->ev[2]);
    stats->ms_sort = others ? elapsed(B->ev[2], B->ev[3]) : 0;
    stats->ms_accumulate = others ? elapsed(B->ev[3], B->ev[4]) : 0;
    stats->ms_reduce = elapsed(B->ev[4], B->ev[5]);
    stats->ms_ones = elapsed(B->ev[5], B->ev[6]);
    stats->ms_total = elapsed(B->ev[0], B->ev[7]);
    return status_ok();
}

// ---------------------------------------------------------------------------------------------------------------
// Test and ceiling kernels.

// The field and curve operations of msm-cuda's FieldOp and CurveOp, one element each (field_test_ops.cuh, shared with
// the host emulation test).
template <class F>
__global__ void field_test_kernel(int op, const typename F::T* a, const typename F::T* b, typename F::T* out,
                                  size_t n) {
    size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    out[i] = field_test_op<F>(op, a[i], b[i]);
}

template <class F>
__global__ void curve_test_kernel(int op, const affine_t<F>* a, const affine_t<F>* b, jacobian_t<F>* out,
                                  size_t n) {
    size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    out[i] = curve_test_op<F>(op, a[i], b[i], i);
}

// A dependent chain of base-field products per thread: form 0 the field's product (mont_mul_ul), 1 the folded form
// (mont_mul_fold), 2 the field's square (mont_sqr_ul), 3 the carry-chain product (mont_mul), 4 the FP64 product
// (mont_mul_f64), 5 the field's product in even warps and the FP64 one in odd warps; two chains per thread: 6 one of
// each, 7 two of the field's (6's control). Forms 5 and 6 ask whether the integer and FP64 pipes add up: on the
// H200 (2026-12-04) 23.7e9 and 23.3e9 products/s against 22.1e9 and 21.9e9 for each alone, a 7.5 % gain whose bound
// is not settled (SASS: neither product fills the issue slots). With odd warps on FP64 in the rounds' kernels
// (inv_up, inv_down, ba_sum: 124-128 registers against 54-94) the 2^26 MSM's accumulation took 15 % longer
// (BENCHMARKS.md).
template <int FORM>
__global__ void fp_mul_chain_kernel(fp_t* out, uint32_t seed, int iters) {
    fp_t x = fp_one(), y = fp_one(), z = fp_one();
    x.l[0] ^= seed + threadIdx.x;
    y.l[1] ^= blockIdx.x;
    z.l[0] ^= seed + 2 * threadIdx.x + 1;
    const bool odd_warp = (threadIdx.x >> 5) & 1;
    for (int i = 0; i < iters; i++) {
        if (FORM == 0) x = fp_mul(x, y);
        if (FORM == 1) x = mont_mul_fold<FpModulus>(x, y);
        if (FORM == 2) x = fp_sqr(x);
        if (FORM == 3) x = mont_mul<FpModulus>(x, y);
        if (FORM == 4) x = mont_mul_f64<FpModulus>(x, y);
        if (FORM == 5) x = odd_warp ? mont_mul_f64<FpModulus>(x, y) : fp_mul(x, y);
        if (FORM == 6) {
            x = fp_mul(x, y);
            z = mont_mul_f64<FpModulus>(z, y);
        }
        if (FORM == 7) {
            x = fp_mul(x, y);
            z = fp_mul(z, y);
        }
    }
    if (FORM >= 6) x = fp_add(x, z);
    if (fp_is_zero(x)) out[0] = x;  // keeps the chain alive; practically never taken
}

// Copies n host elements of `bytes` each in, runs `launch`, copies n results of `out_bytes` each back.
template <class Launch>
cuzk_status on_device(const void* a, const void* b, size_t in_bytes, void* out, size_t out_bytes, Launch launch,
                      const char* what) {
    void *da = nullptr, *db = nullptr, *dout = nullptr;
    cudaError_t e = cudaMalloc(&da, in_bytes);
    if (e == cudaSuccess) e = cudaMalloc(&db, in_bytes);
    if (e == cudaSuccess) e = cudaMalloc(&dout, out_bytes);
    if (e == cudaSuccess) e = cudaMemcpy(da, a, in_bytes, cudaMemcpyHostToDevice);
    if (e == cudaSuccess) e = cudaMemcpy(db, b, in_bytes, cudaMemcpyHostToDevice);
    if (e == cudaSuccess) {
        launch(da, db, dout);
        e = cudaGetLastError();
    }
    if (e == cudaSuccess) e = cudaMemcpy(out, dout, out_bytes, cudaMemcpyDeviceToHost);
    cudaFree(da);
    cudaFree(db);
    cudaFree(dout);
    return e == cudaSuccess ? status_ok() : status_from(e, what);
}

template <class F>
cuzk_status field_test(int op, const void* a, const void* b, void* out, size_t n) {
    using T = typename F::T;
    return on_device(
        a, b, n * sizeof(T), out, n * sizeof(T),
        [&](void* da, void* db, void* dout) {
            field_test_kernel<F><<<blocks_for(n, 128), 128>>>(op, (const T*)da, (const T*)db, (T*)dout, n);
        },
        "cuzk_field_test");
}

template <class F>
cuzk_status curve_test(int op, const void* a, const void* b, void* out, size_t n) {
    return on_device(
        a, b, n * sizeof(affine_t<F>), out, n * sizeof(jacobian_t<F>),
        [&](void* da, void* db, void* dout) {
            curve_test_kernel<F><<<blocks_for(n, 128), 128>>>(op, (const affine_t<F>*)da, (const affine_t<F>*)db,
                                                               (jacobian_t<F>*)dout, n);
        },
        "cuzk_curve_test");
}

}  // namespace

// Density filtering on the device: out[offsets[w] + (set bits of word w below bit j)] = src[64 w + j] for every set
// bit j of words[w], i.e. the selected scalars compacted in order. One thread per scalar.
__global__ void gather_selected_kernel(const fr_t* __restrict__ src, uint64_t n, const uint64_t* __restrict__ words,
                                       const uint32_t* __restrict__ offsets, fr_t* __restrict__ out) {
    uint64_t i = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    uint64_t w = words[i >> 6];
    uint32_t bit = (uint32_t)(i & 63);
    if (((w >> bit) & 1) == 0) return;
    uint64_t below = bit == 0 ? 0 : (w & (~0ull >> (64 - bit)));
    out[offsets[i >> 6] + __popcll(below)] = src[i];
}

// Window tables (cuzk_msm_bases_create_tables): the running points q_i = 2^(cw) P_i in XYZZ, a window at a time;
// each window's points go to affine through one batched inversion of ZZ * ZZZ (with t = 1 / (ZZ ZZZ): 1/ZZ = t ZZZ,
// 1/ZZZ = t ZZ; the identity inverts 1 and stays all zero), then take c doublings.
__global__ void table_start_kernel(const affine_t<Fp>* __restrict__ p, uint32_t n, xyzz_t<Fp>* __restrict__ q) {
    const uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) q[i] = xyzz_from_affine(p[i]);
}

__global__ void table_den_kernel(const xyzz_t<Fp>* __restrict__ q, uint32_t n, fp_t* __restrict__ v) {
    const uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    const xyzz_t<Fp> a = q[i];
    v[i] = xyzz_is_identity(a) ? Fp::one() : Fp::mul(a.ZZ, a.ZZZ);
}

__global__ void __launch_bounds__(128) table_out_kernel(xyzz_t<Fp>* __restrict__ q, const fp_t* __restrict__ inv,
                                                        uint32_t n, uint32_t c, uint32_t W, uint32_t w,
                                                        affine_t<Fp>* __restrict__ out) {
    const uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    xyzz_t<Fp> a = q[i];
    affine_t<Fp> r{Fp::zero(), Fp::zero()};
    if (!xyzz_is_identity(a)) {
        const fp_t t = inv[i];
        r.x = Fp::mul(a.X, Fp::mul(t, a.ZZZ));
        r.y = Fp::mul(a.Y, Fp::mul(t, a.ZZ));
    }
    out[(size_t)i * W + w] = r;
    if (w + 1 < W) {
        for (uint32_t k = 0; k < c; k++) a = xyzz_dbl(a);
        q[i] = a;
    }
}

// The tables of n bases (host memory) into `out` (n * W points), on st, with scratch p (n affine points), q (n
// XYZZ points) and tree (the inversion tree over n values).
cuzk_status fill_tables(cudaStream_t st, const void* points, uint32_t n, uint32_t c, uint32_t W, affine_t<Fp>* p,
                        xyzz_t<Fp>* q, fp_t* tree, affine_t<Fp>* out) {
    CUZK_TRY(cudaMemcpyAsync(p, points, (size_t)n * sizeof(affine_t<Fp>), cudaMemcpyHostToDevice, st));
    table_start_kernel<<<blocks_for(n, 256), 256, 0, st>>>(p, n, q);
    CUZK_TRY_LAUNCH("table_start_kernel");
    for (uint32_t w = 0; w < W; w++) {
        table_den_kernel<<<blocks_for(n, 256), 256, 0, st>>>(q, n, tree);
        CUZK_TRY_LAUNCH("table_den_kernel");
        CUZK_CHECK(batch_invert(st, tree, n));
        table_out_kernel<<<blocks_for(n, 128), 128, 0, st>>>(q, tree, n, c, W, w, out);
        CUZK_TRY_LAUNCH("table_out_kernel");
    }
    CUZK_TRY(cudaStreamSynchronize(st));
    return status_ok();
}

cuzk_status build_tables(const void* points, uint32_t n, uint32_t c, uint32_t W, affine_t<Fp>* out) {
    void *p = nullptr, *q = nullptr, *tree = nullptr;
    size_t cp = 0, cq = 0, ct = 0;
    cudaStream_t st = nullptr;
    cuzk_status s = ensure(&p, &cp, (size_t)n * sizeof(affine_t<Fp>), "the bases of the window tables");
    if (s.code == 0) s = ensure(&q, &cq, (size_t)n * sizeof(xyzz_t<Fp>), "the window tables' running points");
    if (s.code == 0) s = ensure(&tree, &ct, inv_tree_elems(n) * sizeof(fp_t), "the window tables' inversion tree");
    if (s.code == 0) {
        const cudaError_t e = cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking);
        if (e != cudaSuccess) s = status_from(e, "creating the window tables' stream");
    }
    if (s.code == 0) s = fill_tables(st, points, n, c, W, (affine_t<Fp>*)p, (xyzz_t<Fp>*)q, (fp_t*)tree, out);
    if (st) {
        cudaStreamSynchronize(st);
        cudaStreamDestroy(st);
    }
    cudaFree(p);
    cudaFree(q);
    cudaFree(tree);
    return s;
}

extern "C" {

cuzk_status cuzk_msm_bases_create_tables(const void* points, size_t n, uint32_t window, cuzk_msm_bases** out) {
    *out = nullptr;
    if (window < TABLE_MIN_WINDOW || window > MAX_WINDOW)
        return status_msg(1, "window tables take windows of 10 to 24 bits");
    const uint32_t W = (256 + window - 1) / window;
    if ((uint64_t)n * W >= 0x80000000ull)
        return status_msg(1, "window tables of 2^31 points or more: a wider window, or fewer bases");
    cuzk_msm_bases* B = new cuzk_msm_bases();
    B->curve = CUZK_CURVE_G1;
    B->n = n;
    B->point_bytes = (size_t)W * sizeof(affine_t<Fp>);  // a base's share of the device memory
    B->points = nullptr;
    B->table_window = window;
    B->table_windows = W;
    size_t cap = 0;
    cuzk_status s = ensure(&B->points, &cap, n * B->point_bytes, "the window tables");
    if (s.code == 0 && n > 0) s = build_tables(points, (uint32_t)n, window, W, (affine_t<Fp>*)B->points);
    if (s.code != 0) {
        cuzk_msm_bases_destroy(B);
        return s;
    }
    *out = B;
    return status_ok();
}

cuzk_status cuzk_msm_bases_create(int curve, const void* points, size_t n, cuzk_msm_bases** out) {
    *out = nullptr;
    size_t point_bytes;
    if (curve == CUZK_CURVE_G1) {
        point_bytes = sizeof(affine_t<Fp>);
    } else if (curve == CUZK_CURVE_G2) {
        point_bytes = sizeof(affine_t<Fp2>);
    } else {
        return status_msg(1, "unknown curve");
    }
    cuzk_msm_bases* B = new cuzk_msm_bases();
    B->curve = curve;
    B->n = n;
    B->point_bytes = point_bytes;
    B->points = nullptr;
    size_t cap = 0;
    cuzk_status s = ensure(&B->points, &cap, n * point_bytes, "the bases");
    if (s.code == 0 && n > 0) {
        // Both on the legacy stream, which the MSMs' streams (non-blocking) do not wait for, so the stream is waited
        // for here: a cudaMemcpy from pageable memory returns once the bytes are staged, before the copy has landed
        // (CUDA's "API synchronization behavior"), and an MSM queued next on another stream could read the bases
        // half-written. (Without this wait, msm-cuda's GPU tests, run whole with their tests in parallel, failed 2
        // runs of 11 on an H100, 2026-12-05: a G2 MSM of 7 bases and a G1 MSM of 3, neither again alone with its
        // seed; with it, 8 of 8 passed in the same call as 1 of 8 failed without.)
        cudaError_t e = points ? cudaMemcpy(B->points, points, n * point_bytes, cudaMemcpyHostToDevice)
                               : cudaMemset(B->points, 0, n * point_bytes);
        if (e == cudaSuccess) e = cudaStreamSynchronize(0);
        if (e != cudaSuccess) s = status_from(e, points ? "uploading the bases" : "zeroing the bases");
    }
    if (s.code != 0) {
        cuzk_msm_bases_destroy(B);
        return s;
    }
    *out = B;
    return status_ok();
}

cuzk_status cuzk_msm_bases_destroy(cuzk_msm_bases* B) {
    if (!B) return status_ok();
    if (B->points) cudaFree(B->points);
    delete B;
    return status_ok();
}

cuzk_status cuzk_msm_bases_device_bytes(const cuzk_msm_bases* B, size_t* bytes) {
    *bytes = B->n * B->point_bytes;
    return status_ok();
}

cuzk_status cuzk_msm_bases_points(cuzk_msm_bases* B, void** device_points) {
    *device_points = B->points;
    return status_ok();
}

cuzk_status cuzk_msm_scratch_create(cuzk_msm_scratch** out) {
    *out = nullptr;
    cuzk_msm_scratch* S = new cuzk_msm_scratch();
    S->stream = nullptr;
    S->copy_stream = nullptr;
    for (auto& e : S->ev) e = nullptr;
    for (auto& e : S->chunk_ev) e = nullptr;
    cudaError_t e = stream_create(&S->stream, "msm");
    // The copy stream keeps the default priority even under CUZK_STREAM_PRIORITY=msm.
    if (e == cudaSuccess) e = stream_create(&S->copy_stream, "msm-copy");
    for (int i = 0; i < 8 && e == cudaSuccess; i++) e = cudaEventCreate(&S->ev[i]);
    for (auto& ev : S->chunk_ev)
        if (e == cudaSuccess) e = cudaEventCreateWithFlags(&ev, cudaEventDisableTiming);
    if (e != cudaSuccess) {
        cuzk_msm_scratch_destroy(S);
        return status_from(e, "creating the MSM stream and events");
    }
    *out = S;
    return status_ok();
}

cuzk_status cuzk_msm_scratch_destroy(cuzk_msm_scratch* S) {
    if (!S) return status_ok();
    if (S->stream) cudaStreamSynchronize(S->stream);
    if (S->copy_stream) cudaStreamSynchronize(S->copy_stream);
    for (Scratch* s : scratch_list(S))
        if (s->ptr) cudaFree(s->ptr);
    for (auto& e : S->ev)
        if (e) cudaEventDestroy(e);
    for (auto& e : S->chunk_ev)
        if (e) cudaEventDestroy(e);
    if (S->stream) cudaStreamDestroy(S->stream);
    if (S->copy_stream) cudaStreamDestroy(S->copy_stream);
    delete S;
    return status_ok();
}

cuzk_status cuzk_msm_scratch_device_bytes(const cuzk_msm_scratch* S, size_t* bytes) {
    size_t total = 0;
    for (Scratch* s : scratch_list(const_cast<cuzk_msm_scratch*>(S))) total += s->cap;
    *bytes = total;
    return status_ok();
}

cuzk_status cuzk_msm_run(const cuzk_msm_bases* bases, cuzk_msm_scratch* scratch, size_t offset, const void* scalars,
                         size_t n, int scalars_on_device, uint32_t window, const uint8_t* window_table, int split,
                         int accumulate, void* out, size_t out_capacity, cuzk_msm_stats* stats) {
    if (bases->curve == CUZK_CURVE_G1)
        return run_msm<Fp>(bases, scratch, offset, scalars, n, scalars_on_device, window, window_table, split,
                           accumulate, out, out_capacity, stats);
    return run_msm<Fp2>(bases, scratch, offset, scalars, n, scalars_on_device, window, window_table, split,
                        accumulate, out, out_capacity, stats);
}

cuzk_status cuzk_msm_gather_selected(const void* src, size_t n, const uint64_t* words, const uint32_t* offsets,
                                     void* out) {
    if (n == 0) return status_ok();
    size_t n_words = (n + 63) / 64;
    uint64_t* d_words = nullptr;
    uint32_t* d_offsets = nullptr;
    // The selection's words from cuzk's pool on the device, on the legacy stream (which our streams, all non-blocking,
    // do not wait for): cudaFree would wait for every stream's work, another prover lane's among them.
    cudaError_t e = cuzk::pool_malloc_async((void**)&d_words, n_words * sizeof(uint64_t), 0);
    if (e == cudaSuccess) e = cuzk::pool_malloc_async((void**)&d_offsets, n_words * sizeof(uint32_t), 0);
    if (e == cudaSuccess) e = cudaMemcpy(d_words, words, n_words * sizeof(uint64_t), cudaMemcpyHostToDevice);
    if (e == cudaSuccess) e = cudaMemcpy(d_offsets, offsets, n_words * sizeof(uint32_t), cudaMemcpyHostToDevice);
    if (e == cudaSuccess) {
        uint32_t threads = 256;
        gather_selected_kernel<<<(unsigned)((n + threads - 1) / threads), threads>>>(
            (const fr_t*)src, n, d_words, d_offsets, (fr_t*)out);
        e = cudaGetLastError();
    }
    if (d_words) cudaFreeAsync(d_words, 0);
    if (d_offsets) cudaFreeAsync(d_offsets, 0);
    cudaError_t e2 = cudaStreamSynchronize(0);
    if (e == cudaSuccess) e = e2;
    return e == cudaSuccess ? status_ok() : status_from(e, "gather_selected_kernel");
}

cuzk_status cuzk_field_test(int field, int op, const void* a, const void* b, void* out, size_t n) {
    if (n == 0) return status_ok();
    if (op >= 6 && op <= 9 && field != 1) return status_msg(1, "the product-form tests are defined for Fp only");
    return field == 1 ? field_test<Fp>(op, a, b, out, n) : field_test<Fp2>(op, a, b, out, n);
}

cuzk_status cuzk_curve_test(int curve, int op, const void* a, const void* b, void* out, size_t n) {
    if (n == 0) return status_ok();
    return curve == CUZK_CURVE_G1 ? curve_test<Fp>(op, a, b, out, n) : curve_test<Fp2>(op, a, b, out, n);
}

cuzk_status cuzk_ceiling_fp_mul(int form, double* muls_per_second) {
    if (form < 0 || form > 7) return status_msg(1, "unknown product form");
    // One chain per thread (one product a round), two for forms 6 and 7.
    return chain_rate(sizeof(fp_t), 4096, form >= 6 ? 2.0 : 1.0, "fp_mul_chain_kernel",
                      [form](void* o, uint32_t seed, int n, uint32_t blocks, uint32_t threads) {
                          fp_t* out = (fp_t*)o;
                          if (form == 0) fp_mul_chain_kernel<0><<<blocks, threads>>>(out, seed, n);
                          if (form == 1) fp_mul_chain_kernel<1><<<blocks, threads>>>(out, seed, n);
                          if (form == 2) fp_mul_chain_kernel<2><<<blocks, threads>>>(out, seed, n);
                          if (form == 3) fp_mul_chain_kernel<3><<<blocks, threads>>>(out, seed, n);
                          if (form == 4) fp_mul_chain_kernel<4><<<blocks, threads>>>(out, seed, n);
                          if (form == 5) fp_mul_chain_kernel<5><<<blocks, threads>>>(out, seed, n);
                          if (form == 6) fp_mul_chain_kernel<6><<<blocks, threads>>>(out, seed, n);
                          if (form == 7) fp_mul_chain_kernel<7><<<blocks, threads>>>(out, seed, n);
                      },
                      muls_per_second);
}

}  // extern "C"
