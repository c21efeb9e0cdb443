// Multi-scalar multiplication on the GPU: Pippenger's bucket method with signed digits, written once over G1 and G2.
//
// One MSM, all on the set's stream:
//   1. classify: scalars leave Montgomery form; zeros are dropped, ones (with split) listed, the rest counted.
//   2. sort: a counting sort of (window, bucket) digits: histogram, exclusive scan, scatter of point indices
//      (the sign of the digit in the top bit). Each bucket's points end up contiguous.
//   3. accumulate: each bucket's list is cut into tasks of bounded length, one thread each (longest first), summing
//      points with mixed XYZZ additions; further levels sum the tasks' partials until each bucket has one value (hot
//      buckets, such as the few of the top window or those of a repeated scalar, are shared out instead of walked by
//      one thread).
//   4. reduce: per window, sum over buckets of b * bucket_b, in segments of L buckets (running sums, then the
//      segment's offset times its plain sum), then plain sums of segments until at most 32 partial sums per window.
//   5. ones: the bases of scalar-1 entries summed directly, reduced the same way.
// The host combines the few partial sums per window (Horner over windows) with blstrs.
#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_scan.cuh>
#include <cuda_runtime.h>

#include <algorithm>
#include <array>
#include <cstdlib>
#include <cstring>
#include <type_traits>

#include "curve.cuh"
#include "fr.cuh"
#include "msm.h"
#include "status.cuh"

using namespace cuzk;


namespace {

constexpr uint32_t SEGMENT = 32;    // buckets per reduction thread, and fan-in of each plain-sum level
constexpr uint32_t MAX_WINDOW = 24;  // bucket counts stay far inside 32-bit indices

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

// Calls fn(window, |digit|, negative) for each non-zero signed digit of a canonical scalar. Digits lie in
// [-(2^(c-1) - 1), 2^(c-1)]; windows * c >= 256 > 255 bits leaves no carry out of the top window.
template <class Fn>
__device__ __forceinline__ void for_each_digit(const fr_t& s, uint32_t c, uint32_t windows, Fn fn) {
    uint32_t carry = 0;
    const uint32_t half = 1u << (c - 1);
    for (uint32_t w = 0; w < windows; w++) {
        uint32_t d = bits_at(s.l, w * c, c) + carry;
        bool neg = d > half;
        if (neg) {
            d = (1u << c) - d;
            carry = 1;
        } else {
            carry = 0;
        }
        if (d != 0) fn(w, d, neg);
    }
}

__global__ void classify_kernel(const fr_t* __restrict__ in, fr_t* __restrict__ canon, uint32_t n, int split,
                                uint32_t* __restrict__ ones_list, uint32_t* __restrict__ counters) {
    uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
    bool one = false, other = false;
    if (i < n) {
        fr_t c = fr_from_mont(in[i]);
        canon[i] = c;
        if (!fr_is_zero(c)) {
            one = split && fr_is_raw_one(c);
            other = !one;
        }
    }
    // Warp-aggregated counters: one atomic per warp, not per scalar.
    uint32_t lane = threadIdx.x & 31;
    uint32_t ones_mask = __ballot_sync(0xffffffffu, one);
    uint32_t others_mask = __ballot_sync(0xffffffffu, other);
    uint32_t base = 0;
    if (lane == 0 && ones_mask) base = atomicAdd(&counters[0], __popc(ones_mask));
    if (lane == 0 && others_mask) atomicAdd(&counters[1], __popc(others_mask));
    base = __shfl_sync(0xffffffffu, base, 0);
    if (one) ones_list[base + __popc(ones_mask & ((1u << lane) - 1))] = i;
}

__device__ __forceinline__ bool is_pippenger(const fr_t& c, int split) {
    return !fr_is_zero(c) && !(split && fr_is_raw_one(c));
}

__global__ void histogram_kernel(const fr_t* __restrict__ canon, uint32_t n, int split, uint32_t c,
                                 uint32_t windows, uint32_t buckets, uint32_t* __restrict__ counts) {
    uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    fr_t s = canon[i];
    if (!is_pippenger(s, split)) return;
    for_each_digit(s, c, windows, [&](uint32_t w, uint32_t d, bool) { atomicAdd(&counts[w * buckets + d], 1u); });
}

__global__ void scatter_kernel(const fr_t* __restrict__ canon, uint32_t n, int split, uint32_t c, uint32_t windows,
                               uint32_t buckets, uint32_t* __restrict__ cursor, uint32_t* __restrict__ entries) {
    uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    fr_t s = canon[i];
    if (!is_pippenger(s, split)) return;
    for_each_digit(s, c, windows, [&](uint32_t w, uint32_t d, bool neg) {
        uint32_t pos = atomicAdd(&cursor[w * buckets + d], 1u);
        entries[pos] = i | (neg ? 0x80000000u : 0u);
    });
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
        affine_t<F> p = bases[e & 0x7fffffffu];
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

// Thread (g, j): sum over b in segment j of group g of b * in[g][b], as T + lo * S with running sums.
template <class F>
__global__ void __launch_bounds__(128) weighted_segments_kernel(const xyzz_t<F>* __restrict__ in, uint32_t groups,
                                                                uint32_t m, xyzz_t<F>* __restrict__ out) {
    uint32_t per = (m + SEGMENT - 1) / SEGMENT;
    uint32_t t = blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= groups * per) return;
    uint32_t g = t / per, j = t % per;
    uint32_t lo = j * SEGMENT, hi = min(m, lo + SEGMENT);
    const xyzz_t<F>* row = in + (size_t)g * m;
    xyzz_t<F> S = xyzz_identity<F>(), T = xyzz_identity<F>();
    for (uint32_t b = hi - 1; b > lo; b--) {
        S = xyzz_add(S, row[b]);
        T = xyzz_add(T, S);
    }
    S = xyzz_add(S, row[lo]);
    out[t] = xyzz_add(T, xyzz_mul_small(S, lo));
}

// Thread (g, j): plain sum of in[g][j*SEGMENT .. (j+1)*SEGMENT).
template <class F>
__global__ void __launch_bounds__(128) sum_segments_kernel(const xyzz_t<F>* __restrict__ in, uint32_t groups,
                                                           uint32_t m, xyzz_t<F>* __restrict__ out) {
    uint32_t per = (m + SEGMENT - 1) / SEGMENT;
    uint32_t t = blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= groups * per) return;
    uint32_t g = t / per, j = t % per;
    uint32_t lo = j * SEGMENT, hi = min(m, lo + SEGMENT);
    const xyzz_t<F>* row = in + (size_t)g * m;
    xyzz_t<F> acc = xyzz_identity<F>();
    for (uint32_t b = lo; b < hi; b++) acc = xyzz_add(acc, row[b]);
    out[t] = acc;
}

// Thread t: the sum of the bases listed in list[t*chunk .. (t+1)*chunk).
template <class F>
__global__ void __launch_bounds__(128) sum_listed_kernel(const affine_t<F>* __restrict__ bases,
                                                         const uint32_t* __restrict__ list, uint32_t m,
                                                         uint32_t chunk, uint32_t threads,
                                                         xyzz_t<F>* __restrict__ out) {
    uint32_t t = blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= threads) return;
    uint64_t lo = (uint64_t)t * chunk, hi = min((uint64_t)m, lo + chunk);
    xyzz_t<F> acc = xyzz_identity<F>();
    for (uint64_t k = lo; k < hi; k++) acc = xyzz_add_affine(acc, bases[list[k]]);
    out[t] = acc;
}

template <class F>
__global__ void to_jacobian_kernel(const xyzz_t<F>* __restrict__ in, uint32_t n, jacobian_t<F>* __restrict__ out) {
    uint32_t t = blockIdx.x * blockDim.x + threadIdx.x;
    if (t < n) out[t] = xyzz_to_jacobian(in[t]);
}

// Whether level 0 runs its tasks longest first (the default) or in bucket order (CUZK_MSM_TASK_ORDER=bucket, read
// once): an A/B switch for measuring, not a tuning knob for users.
bool sort_tasks_by_length() {
    static bool v = [] {
        const char* e = getenv("CUZK_MSM_TASK_ORDER");
        return !(e && !strcmp(e, "bucket"));
    }();
    return v;
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
    cudaError_t e = cudaMalloc(p, std::max<size_t>(bytes, 1));
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
};

struct cuzk_msm_scratch {
    cudaStream_t stream;
    cudaEvent_t ev[8];
    Scratch scalars, canon, ones, counters, counts, offsets, cursor, entries, cub, parts_a, parts_b, ones_sums;
    Scratch tcount[2], toff[2], task_bucket, tasks[2], level_max;
    Scratch sort_keys[2], sort_index[2], sort_tmp;
};

namespace {
// Every scratch buffer of a set, for freeing and counting.
std::array<Scratch*, 25> scratch_list(cuzk_msm_scratch* S) {
    return {{&S->scalars,     &S->canon,      &S->ones,     &S->counters, &S->counts,  &S->offsets,   &S->cursor,
            &S->entries,     &S->cub,        &S->parts_a,  &S->parts_b,  &S->ones_sums, &S->tcount[0], &S->tcount[1],
            &S->toff[0],     &S->toff[1],    &S->task_bucket, &S->tasks[0], &S->tasks[1], &S->level_max,
            &S->sort_keys[0], &S->sort_keys[1], &S->sort_index[0], &S->sort_index[1], &S->sort_tmp}};
}
}  // namespace

namespace {

cuzk_status scratch(Scratch& s, size_t bytes, const char* what) { return ensure(&s.ptr, &s.cap, bytes, what); }

float elapsed(cudaEvent_t a, cudaEvent_t b) {
    float ms = 0;
    cudaEventElapsedTime(&ms, a, b);
    return ms;
}

// Plain-sum levels until a group has at most SEGMENT partial sums. `cur` and `other` ping-pong; returns the
// buffer holding the result and updates m.
template <class F>
cuzk_status reduce_to_parts(cudaStream_t st, xyzz_t<F>** cur, xyzz_t<F>** other, uint32_t groups, uint32_t* m) {
    while (*m > SEGMENT) {
        uint32_t per = (*m + SEGMENT - 1) / SEGMENT;
        sum_segments_kernel<F><<<blocks_for((uint64_t)groups * per, 128), 128, 0, st>>>(*cur, groups, *m, *other);
        CUZK_TRY_LAUNCH("sum_segments_kernel");
        std::swap(*cur, *other);
        *m = per;
    }
    return status_ok();
}

template <class F>
cuzk_status run_msm(const cuzk_msm_bases* Bs, cuzk_msm_scratch* B, size_t offset, const void* scalars, size_t n, int on_device, uint32_t window,
                    const uint8_t* table, int split, void* out, size_t out_capacity, cuzk_msm_stats* stats) {
    using Xyzz = xyzz_t<F>;
    using Jac = jacobian_t<F>;
    cudaStream_t st = B->stream;
    memset(stats, 0, sizeof(*stats));
    if (offset > Bs->n || n > Bs->n - offset) {
        char msg[200];
        snprintf(msg, sizeof(msg), "MSM of %zu scalars at offset %zu runs past the %zu resident bases", n, offset,
                 Bs->n);
        return status_msg(1, msg);
    }
    if (n >= 0x80000000ull) return status_msg(1, "MSM of 2^31 or more scalars: split it");
    if (window > MAX_WINDOW) return status_msg(1, "window above 24 bits");
    const affine_t<F>* bases = (const affine_t<F>*)Bs->points + offset;
    uint32_t n32 = (uint32_t)n;
    if (n == 0) return status_ok();

    CUZK_TRY(cudaEventRecord(B->ev[0], st));
    const fr_t* in = (const fr_t*)scalars;
    if (!on_device) {
        CUZK_CHECK(scratch(B->scalars, n * sizeof(fr_t), "scalars"));
        CUZK_TRY(cudaMemcpyAsync(B->scalars.ptr, scalars, n * sizeof(fr_t), cudaMemcpyHostToDevice, st));
        in = (const fr_t*)B->scalars.ptr;
    }
    CUZK_TRY(cudaEventRecord(B->ev[1], st));

    // 1. classify
    CUZK_CHECK(scratch(B->canon, n * sizeof(fr_t), "canonical scalars"));
    CUZK_CHECK(scratch(B->ones, n * sizeof(uint32_t), "the scalar-1 list"));
    CUZK_CHECK(scratch(B->counters, 2 * sizeof(uint32_t), "counters"));
    fr_t* canon = (fr_t*)B->canon.ptr;
    uint32_t* counters = (uint32_t*)B->counters.ptr;
    CUZK_TRY(cudaMemsetAsync(counters, 0, 2 * sizeof(uint32_t), st));
    classify_kernel<<<blocks_for(n, 256), 256, 0, st>>>(in, canon, n32, split, (uint32_t*)B->ones.ptr, counters);
    CUZK_TRY_LAUNCH("classify_kernel");
    uint32_t host_counters[2];
    CUZK_TRY(cudaMemcpyAsync(host_counters, counters, sizeof(host_counters), cudaMemcpyDeviceToHost, st));
    CUZK_TRY(cudaEventRecord(B->ev[2], st));
    CUZK_TRY(cudaStreamSynchronize(st));
    uint32_t ones = host_counters[0], others = host_counters[1];
    stats->ones = ones;
    stats->others = others;
    stats->zeros = n - ones - others;

    // Window: given, or from the table by the number of scalars Pippenger will see (the D4 choice).
    uint32_t c = window;
    if (c == 0) {
        uint32_t lg = others <= 1 ? 0 : 32 - __builtin_clz(others - 1);
        c = table ? table[std::min<uint32_t>(lg, 31)] : 0;
        if (c == 0) c = std::max<uint32_t>(1, std::min<uint32_t>(MAX_WINDOW, lg > 4 ? lg - 4 : 1));
        c = std::min(c, MAX_WINDOW);
    }
    uint32_t windows = (256 + c - 1) / c;
    uint32_t buckets = (1u << (c - 1)) + 1;
    stats->window = c;
    uint32_t total = windows * buckets;
    if ((uint64_t)others * windows >= 0xffffffffull) return status_msg(1, "window too small for this MSM size");

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
        histogram_kernel<<<blocks_for(n, 256), 256, 0, st>>>(canon, n32, split, c, windows, buckets, counts);
        CUZK_TRY_LAUNCH("histogram_kernel");
        size_t tmp = 0;
        CUZK_TRY(cub::DeviceScan::ExclusiveSum(nullptr, tmp, counts, offsets, (int)total, st));
        CUZK_CHECK(scratch(B->cub, tmp, "the scan"));
        CUZK_TRY(cub::DeviceScan::ExclusiveSum(B->cub.ptr, tmp, counts, offsets, (int)total, st));
        CUZK_TRY(cudaMemcpyAsync(cursor, offsets, (size_t)total * 4, cudaMemcpyDeviceToDevice, st));
        scatter_kernel<<<blocks_for(n, 256), 256, 0, st>>>(canon, n32, split, c, windows, buckets, cursor,
                                                           (uint32_t*)B->entries.ptr);
        CUZK_TRY_LAUNCH("scatter_kernel");
        CUZK_TRY(cudaEventRecord(B->ev[3], st));

        // 3. accumulate, in levels of tasks (see task_count_kernel).
        uint32_t per = (buckets + SEGMENT - 1) / SEGMENT;
        size_t part_bytes = std::max<size_t>((size_t)total, (size_t)windows * per) * sizeof(Xyzz);
        CUZK_CHECK(scratch(B->parts_a, part_bytes, "bucket sums"));
        CUZK_CHECK(scratch(B->parts_b, part_bytes, "partial sums"));
        Xyzz* cur = (Xyzz*)B->parts_a.ptr;
        Xyzz* other = (Xyzz*)B->parts_b.ptr;
        for (int i = 0; i < 2; i++) {
            CUZK_CHECK(scratch(B->tcount[i], (size_t)total * 4, "task counts"));
            CUZK_CHECK(scratch(B->toff[i], (size_t)total * 4, "task offsets"));
        }
        CUZK_CHECK(scratch(B->level_max, 4, "a counter"));
        // Level 0 cuts lists at twice the mean bucket size: uniform buckets stay whole, hot ones are shared out.
        uint64_t mean = ((uint64_t)others * windows + total - 1) / total;
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
            if (level == 0) {
                uint32_t last[2];
                CUZK_TRY(cudaMemcpy(&last[0], offsets + total - 1, 4, cudaMemcpyDeviceToHost));
                CUZK_TRY(cudaMemcpy(&last[1], counts + total - 1, 4, cudaMemcpyDeviceToHost));
                stats->digits = (uint64_t)last[0] + last[1];
            }
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
        CUZK_TRY(cudaEventRecord(B->ev[4], st));

        // 4. reduce
        weighted_segments_kernel<F><<<blocks_for((uint64_t)windows * per, 128), 128, 0, st>>>(cur, windows, buckets,
                                                                                             other);
        CUZK_TRY_LAUNCH("weighted_segments_kernel");
        std::swap(cur, other);
        per_window = per;
        CUZK_CHECK(reduce_to_parts<F>(st, &cur, &other, windows, &per_window));
        result_parts = cur;
        stats->windows = windows;
        stats->parts_per_window = per_window;
        parts_needed += (size_t)windows * per_window;
    } else {
        CUZK_TRY(cudaEventRecord(B->ev[3], st));
        CUZK_TRY(cudaEventRecord(B->ev[4], st));
    }
    CUZK_TRY(cudaEventRecord(B->ev[5], st));

    // 5. ones, in scratch of their own: the window parts must survive.
    uint32_t ones_parts = 0;
    Xyzz* ones_result = nullptr;
    if (ones > 0) {
        // Enough threads to fill the card (about 2^18), at least 8 bases each.
        uint32_t chunk = std::max<uint32_t>(8, (ones + (1u << 18) - 1) >> 18);
        uint32_t threads = (ones + chunk - 1) / chunk;
        threads = (ones + chunk - 1) / chunk;
        size_t bytes = (size_t)threads * 2 * sizeof(Xyzz);
        CUZK_CHECK(scratch(B->ones_sums, bytes, "scalar-1 sums"));
        Xyzz* cur = (Xyzz*)B->ones_sums.ptr;
        Xyzz* other = cur + threads;
        sum_listed_kernel<F><<<blocks_for(threads, 128), 128, 0, st>>>(bases, (const uint32_t*)B->ones.ptr, ones,
                                                                       chunk, threads, cur);
        CUZK_TRY_LAUNCH("sum_listed_kernel");
        ones_parts = threads;
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
        CUZK_TRY(cudaMallocAsync((void**)&jac, parts_needed * sizeof(Jac), st));
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

template <class F>
__global__ void field_test_kernel(int op, const typename F::T* a, const typename F::T* b, typename F::T* out,
                                  size_t n) {
    size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    switch (op) {
        case 0: out[i] = F::add(a[i], b[i]); break;
        case 1: out[i] = F::sub(a[i], b[i]); break;
        case 2: out[i] = F::mul(a[i], b[i]); break;
        case 3: out[i] = F::sqr(a[i]); break;
        case 4: out[i] = F::neg(a[i]); break;
        default: out[i] = F::inv(a[i]); break;
    }
}

template <class F>
__global__ void curve_test_kernel(int op, const affine_t<F>* a, const affine_t<F>* b, jacobian_t<F>* out,
                                  size_t n) {
    size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    xyzz_t<F> pa = xyzz_from_affine(a[i]);
    xyzz_t<F> r;
    switch (op) {
        case 0: r = xyzz_add_affine(pa, b[i]); break;
        case 1: r = xyzz_add(xyzz_dbl(pa), xyzz_dbl(xyzz_from_affine(b[i]))); break;
        case 2: r = xyzz_dbl(xyzz_add_affine(pa, b[i])); break;
        case 3: r = xyzz_add_affine(xyzz_neg(pa), b[i]); break;
        default: r = xyzz_mul_small(pa, (uint32_t)i); break;
    }
    out[i] = xyzz_to_jacobian(r);
}

__global__ void fp_mul_chain_kernel(fp_t* out, uint32_t seed, int iters) {
    fp_t x = fp_one(), y = fp_one();
    x.l[0] ^= seed + threadIdx.x;
    y.l[1] ^= blockIdx.x;
    for (int i = 0; i < iters; i++) x = fp_mul(x, y);
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

extern "C" {

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
        cudaError_t e = cudaMemcpy(B->points, points, n * point_bytes, cudaMemcpyHostToDevice);
        if (e != cudaSuccess) s = status_from(e, "uploading the bases");
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

cuzk_status cuzk_msm_scratch_create(cuzk_msm_scratch** out) {
    *out = nullptr;
    cuzk_msm_scratch* S = new cuzk_msm_scratch();
    S->stream = nullptr;
    for (auto& e : S->ev) e = nullptr;
    cudaError_t e = cudaStreamCreateWithFlags(&S->stream, cudaStreamNonBlocking);
    for (int i = 0; i < 8 && e == cudaSuccess; i++) e = cudaEventCreate(&S->ev[i]);
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
    for (Scratch* s : scratch_list(S))
        if (s->ptr) cudaFree(s->ptr);
    for (auto& e : S->ev)
        if (e) cudaEventDestroy(e);
    if (S->stream) cudaStreamDestroy(S->stream);
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
                         void* out, size_t out_capacity, cuzk_msm_stats* stats) {
    if (bases->curve == CUZK_CURVE_G1)
        return run_msm<Fp>(bases, scratch, offset, scalars, n, scalars_on_device, window, window_table, split, out,
                           out_capacity, stats);
    return run_msm<Fp2>(bases, scratch, offset, scalars, n, scalars_on_device, window, window_table, split, out,
                        out_capacity, stats);
}

cuzk_status cuzk_msm_gather_selected(const void* src, size_t n, const uint64_t* words, const uint32_t* offsets,
                                     void* out) {
    if (n == 0) return status_ok();
    size_t n_words = (n + 63) / 64;
    uint64_t* d_words = nullptr;
    uint32_t* d_offsets = nullptr;
    cudaError_t e = cudaMalloc(&d_words, n_words * sizeof(uint64_t));
    if (e == cudaSuccess) e = cudaMalloc(&d_offsets, n_words * sizeof(uint32_t));
    if (e == cudaSuccess) e = cudaMemcpy(d_words, words, n_words * sizeof(uint64_t), cudaMemcpyHostToDevice);
    if (e == cudaSuccess) e = cudaMemcpy(d_offsets, offsets, n_words * sizeof(uint32_t), cudaMemcpyHostToDevice);
    if (e == cudaSuccess) {
        uint32_t threads = 256;
        gather_selected_kernel<<<(unsigned)((n + threads - 1) / threads), threads>>>(
            (const fr_t*)src, n, d_words, d_offsets, (fr_t*)out);
        e = cudaGetLastError();
    }
    if (e == cudaSuccess) e = cudaStreamSynchronize(0);
    if (d_words) cudaFree(d_words);
    if (d_offsets) cudaFree(d_offsets);
    return e == cudaSuccess ? status_ok() : status_from(e, "gather_selected_kernel");
}

cuzk_status cuzk_field_test(int field, int op, const void* a, const void* b, void* out, size_t n) {
    if (n == 0) return status_ok();
    return field == 1 ? field_test<Fp>(op, a, b, out, n) : field_test<Fp2>(op, a, b, out, n);
}

cuzk_status cuzk_curve_test(int curve, int op, const void* a, const void* b, void* out, size_t n) {
    if (n == 0) return status_ok();
    return curve == CUZK_CURVE_G1 ? curve_test<Fp>(op, a, b, out, n) : curve_test<Fp2>(op, a, b, out, n);
}

cuzk_status cuzk_ceiling_fp_mul(double* muls_per_second) {
    int sms = 0;
    CUZK_TRY(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
    fp_t* out = nullptr;
    CUZK_TRY(cudaMalloc(&out, sizeof(fp_t)));
    uint32_t blocks = sms * 8, threads = 256;
    const int iters = 4096;
    fp_mul_chain_kernel<<<blocks, threads>>>(out, 1, 64);  // warm-up
    float ms = 0;
    CUZK_CHECK(time_on_device(
        [&] {
            fp_mul_chain_kernel<<<blocks, threads>>>(out, 2, iters);
            return status_from(cudaGetLastError(), "fp_mul_chain_kernel");
        },
        &ms));
    *muls_per_second = (double)blocks * threads * iters / (ms * 1e-3);
    cudaFree(out);
    return status_ok();
}

}  // extern "C"
