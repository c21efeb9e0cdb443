// The NTT's pass kernel (ntt_pass) and what it is made of: the butterflies in each product form, the shared-memory
// layouts, and the plan of a pass's launch. ntt.cu launches it; ntt-cuda's tests/host_emu.cpp runs the same kernel on
// the host (cuda-build's host_emu.h emulates its threads, barriers and shared memory), so that CI checks the passes'
// indexing, twiddles and lazy arithmetic without a GPU.
#pragma once
#include <cstdint>
#include <type_traits>

#include "fr.cuh"

namespace cuzk {

constexpr uint32_t MAX_LOG_BLOCK = 10;  // 1024 scalars, 32 KiB of shared memory per block
__device__ __forceinline__ uint32_t bitrev(uint32_t x, uint32_t bits) {
    return bits == 0 ? 0 : (__brev(x) >> (32 - bits));
}

// A scalar as two 16-byte halves (low words first), for 16-byte loads and stores.
__device__ __forceinline__ fr_t from_halves(const uint4& a, const uint4& b) {
    fr_t r;
    r.l[0] = a.x; r.l[1] = a.y; r.l[2] = a.z; r.l[3] = a.w;
    r.l[4] = b.x; r.l[5] = b.y; r.l[6] = b.z; r.l[7] = b.w;
    return r;
}
__device__ __forceinline__ uint4 low_half(const fr_t& v) { return make_uint4(v.l[0], v.l[1], v.l[2], v.l[3]); }
__device__ __forceinline__ uint4 high_half(const fr_t& v) { return make_uint4(v.l[4], v.l[5], v.l[6], v.l[7]); }

__device__ __forceinline__ fr_t load(const fr_t* p) {
    const uint4* q = reinterpret_cast<const uint4*>(p);
    return from_halves(q[0], q[1]);
}

__device__ __forceinline__ void store(fr_t* p, const fr_t& v) {
    uint4* q = reinterpret_cast<uint4*>(p);
    q[0] = low_half(v);
    q[1] = high_half(v);
}

// 16 bytes from global to shared memory, not through registers (cp.async, sm_80 on): the copies a thread issues are
// in flight together, where a load and a store to shared memory wait out the load's latency each time; copy_wait makes
// the thread's copies visible to it (and with a barrier after it, to the block). The host emulation copies at once.
// A pass's scalars and twiddles so copied, against loads and stores (medians of three rounds): forward NTT 2^24 4.507
// -> 4.452 ms, 2^27 40.43 -> 40.37 ms, H 2^24 29.09 -> 28.80 ms, 2^27 261.2 -> 260.2 ms (H200, 2026-12-07; BENCHMARKS).
__device__ __forceinline__ void copy16_async(uint4* dst, const uint4* src) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"((uint32_t)__cvta_generic_to_shared(dst)),
                 "l"(src)
                 : "memory");
#else
    *dst = *src;
#endif
}
__device__ __forceinline__ void copy_wait() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    asm volatile("cp.async.wait_all;\n" ::: "memory");
#endif
}

// A pass's place in its transform (stages s0 .. s0 + k - 1 of log_n) and its block's groups; `last` when it is the
// transform's last pass, the one whose store reduces a lazy pass's scalars.
struct PassShape {
    uint32_t s0, k, low_bits, log_glow, log_ghigh, last;
};

// The butterflies' product (mont.cuh has the forms; all give the same bits). Hybrid takes mont_mul_ul for the
// products of a round numbered 0 and 2 and mont_mul_f64 for those numbered 1 and 3 (independent pairs in each stage),
// so that the integer and the FP64 pipes work at once; a lone product takes mont_mul_ul. Hybrid3 takes mont_mul_ul
// for product 0 alone and mont_mul_f64 for the other three.
enum class MulForm { Chains, Fold, Unsaturated, Float64, Hybrid, Hybrid3 };

// Lazy reduction: a pass whose products all take mont_mul_f64 keeps its scalars below 2p, not p, from its loads to its
// stores: the products leave out their last conditional subtraction (the data operand may be below 2p, the twiddle is
// below p, the result is below 2p; mont.cuh), the butterflies add and subtract modulo 2p (fr.cuh's Fr2pModulus, as
// cheap as modulo p), and the transform's last pass reduces each scalar once as it stores it. Per product that drops a
// conditional subtraction (eight subtractions and eight selects on the ALU pipe, which bounds the pass) for one per
// scalar of the transform; the passes before the last store their scalars below 2p, as the next one loads them.
template <MulForm F>
__host__ __device__ constexpr bool lazy_form() {
    return F == MulForm::Float64;
}

// A product in form F; LAZY (a lazy pass's, F its form) leaves the result below 2p, not reduced.
template <MulForm F, bool LAZY = false>
__device__ __forceinline__ fr_t form_mul(const fr_t& x, const fr_t& y) {
    static_assert(!LAZY || lazy_form<F>(), "only a lazy form's product leaves its result below 2p");
    if (F == MulForm::Fold) return mont_mul_fold<FrModulus>(x, y);
    if (F == MulForm::Unsaturated || F == MulForm::Hybrid || F == MulForm::Hybrid3) return mont_mul_ul<FrModulus>(x, y);
    if (F == MulForm::Float64) return mont_mul_f64<FrModulus, !LAZY>(x, y);
    return mont_mul<FrModulus>(x, y);
}

// Addition and subtraction in a pass: modulo 2p on lazy scalars, modulo p otherwise. The lazy forms put their selects
// and masks on the FMA pipe (mont.cuh's FMA), as the pass is bound by the ALU pipe (ncu, H100, 2026-12-06: ALU 57 %,
// FP64 40 %, FMA 12 % of peak with them; ALU 64 % before).
template <bool LAZY>
__device__ __forceinline__ fr_t pass_add(const fr_t& a, const fr_t& b) {
    return LAZY ? mont_add<Fr2pModulus, true>(a, b) : fr_add(a, b);
}
template <bool LAZY>
__device__ __forceinline__ fr_t pass_sub(const fr_t& a, const fr_t& b) {
    return LAZY ? mont_sub<Fr2pModulus, true>(a, b) : fr_sub(a, b);
}

// The form of product number k (0..3) of a round.
template <MulForm F, int K>
__host__ __device__ constexpr MulForm round_form() {
    if (F == MulForm::Hybrid3) return K == 0 ? MulForm::Unsaturated : MulForm::Float64;
    return F == MulForm::Hybrid ? (K % 2 == 0 ? MulForm::Unsaturated : MulForm::Float64) : F;
}

// DIF butterfly (u, v) -> (u + v, (u - v) w); DIT (u, v) -> (u + v w, u - v w). LAZY: u, v and the results below
// 2p (lazy_form; F must then be lazy itself). (Tried for DIF: u - v mod 2^256 and its borrow straight into the FP64
// product, its top limb signed and p added once more for a borrow, in place of the modular subtraction. 0.6 % fewer
// instructions a round, but the 2^27 forward NTT 40.41 -> 41.02 ms, H 2^27 261.7 -> 263.8 ms; H200, 2026-12-06,
// BENCHMARKS.)
template <bool DIT, MulForm F, bool LAZY>
__device__ __forceinline__ void butterfly(fr_t& u, fr_t& v, const fr_t& w) {
    auto mul = [](const fr_t& x, const fr_t& y) { return form_mul<F, LAZY>(x, y); };
    if (DIT) {
        const fr_t t = mul(v, w);
        v = pass_sub<LAZY>(u, t);
        u = pass_add<LAZY>(u, t);
    } else {
        const fr_t d = pass_sub<LAZY>(u, v);
        u = pass_add<LAZY>(u, v);
        v = mul(d, w);
    }
}

// The butterfly of DIF's last stage, whose twiddles are all 1: (u, v) -> (u + v, u - v), no product (w^0 is
// Montgomery one, so the product it skips would return its input exactly).
template <bool LAZY>
__device__ __forceinline__ void butterfly_unit(fr_t& u, fr_t& v) {
    const fr_t d = pass_sub<LAZY>(u, v);
    u = pass_add<LAZY>(u, v);
    v = d;
}

// Shared memory of a pass. Interleaved: scalar l at smem[l], 32 bytes, so a warp's 16-byte access strides 32 bytes
// and a round whose pairing bit is low strides further (on average 9.4 wavefronts per access where 4 would do, ncu,
// 2^27 DIF pass, H200). Swizzled: two planes of 16-byte halves (low halves, then high), scalar l's halves at unit
// swz(l) of each, swz XORing l's low three bits with (b3 ^ b4, b3, b3 ^ b4) of bits 3 and 4. The eight consecutive
// threads a 16-byte access serves at a time then touch eight distinct bank groups in every access pattern of the pass:
// the load and store loops (consecutive l), the radix-4 rounds at any pairing bit q (the two bits q and q + 1 inserted
// into the thread's index) and the radix-2 round (one bit inserted). For q >= 3 the low bits come from the thread
// index and bits 3 and 4 are fixed across the eight; for q = 0, 1, 2 the three varying thread bits map to the column
// through an invertible 0/1 matrix (checked by hand for each case, and by the ntt-cuda GPU tests' results).
template <bool SWZ>
struct PassSmem {
    uint4* base;
    uint32_t e;
    __device__ __forceinline__ static uint32_t swz(uint32_t l) {
        const uint32_t t = (l >> 3) & 1, u = (l >> 4) & 1;
        return l ^ (((t ^ u) * 5u) | (t << 1));
    }
    // The units of scalar l's low and high halves: swz(l) of each plane, or 2l and 2l + 1 interleaved.
    __device__ __forceinline__ uint32_t lo_unit(uint32_t l) const { return SWZ ? swz(l) : 2 * l; }
    __device__ __forceinline__ uint32_t hi_unit(uint32_t lo) const { return SWZ ? e + lo : lo + 1; }
    __device__ __forceinline__ fr_t get(uint32_t l) const {
        const uint32_t p = lo_unit(l);
        return from_halves(base[p], base[hi_unit(p)]);
    }
    __device__ __forceinline__ void set(uint32_t l, const fr_t& v) const {
        const uint32_t p = lo_unit(l);
        base[p] = low_half(v);
        base[hi_unit(p)] = high_half(v);
    }
    // set(l, load(src)) by copy16_async (visible after copy_wait).
    __device__ __forceinline__ void copy_async(uint32_t l, const fr_t* src) const {
        const uint4* q = reinterpret_cast<const uint4*>(src);
        const uint32_t p = lo_unit(l);
        copy16_async(&base[p], &q[0]);
        copy16_async(&base[hi_unit(p)], &q[1]);
    }
};

// Twiddles a pass holds in shared memory: stage st of k pairs bit b of m (DIF b = k - 1 - st, DIT b = st) and needs one
// twiddle for each value of the 2^log_glow low group bits and of m's b bits below: 2^log_glow (2^k - 1) in all, at
// most as many as the block's scalars.
__host__ __device__ constexpr uint32_t pass_twiddles(uint32_t k, uint32_t log_glow) { return ((1u << k) - 1) << log_glow; }

// The twiddle table in shared memory: two planes of 16-byte halves, so that a warp reading consecutive twiddles (or
// one, broadcast) touches distinct banks. (Tried and not kept: for the FP64 product, each twiddle split into its five
// 52-bit limbs as doubles once, as the pass loads it, five planes of doubles, 72 KiB a block. The middle 2^27 pass ran
// 1.9 % fewer instructions but waited more on shared memory, 2^27 50.06 against 49.77 ms; H100, 2026-12-05.)
struct TwiddleSmem {
    uint4* base;
    uint32_t count;
    __device__ __forceinline__ fr_t get(uint32_t i) const { return from_halves(base[i], base[count + i]); }
    __device__ __forceinline__ void set(uint32_t i, const fr_t& v) const {
        base[i] = low_half(v);
        base[count + i] = high_half(v);
    }
    // set(i, load(src)) by copy16_async (visible after copy_wait).
    __device__ __forceinline__ void copy_async(uint32_t i, const fr_t* src) const {
        const uint4* q = reinterpret_cast<const uint4*>(src);
        copy16_async(&base[i], &q[0]);
        copy16_async(&base[count + i], &q[1]);
    }
};

// One pass of k radix-2 stages over groups of 2^k scalars spaced 2^low_bits apart.
// A block holds 2^log_glow groups adjacent in the low bits (coalesced loads) times 2^log_ghigh groups in the high bits.
// Stages go two at a time (radix 4): a thread takes the four scalars that two consecutive stages pair up, so each
// round is one trip through shared memory and one barrier for two stages, and a thread's two butterflies per stage
// are independent work for the scheduler. An odd stage left over runs radix 2. The pass's twiddles (at most one per
// scalar, see pass_twiddles) are loaded from the domain's table (w^e, e < n/2) into shared memory with the scalars,
// before the first round, so the rounds wait on no global load: three a round, as its fourth butterfly shares one
// (see round_twiddles). Read from the table at each round instead, the 2^27 forward NTT took 52.94 against 50.49 ms,
// H 2^27 329.7 against 320.2 ms (H200, 2026-12-03); three reads where there were four had made it 55.8 -> 53.7 ms,
// and loading a round's twiddles during the round before (held in registers across the barrier) spilled 128 bytes
// and took 62.1 ms.
constexpr uint32_t PASS_MAX_THREADS = 256;

// Coset power tables (ntt.cu's coset_tables): c g^i = lo[i & (2^COSET_LO_BITS - 1)] * hi[i >> COSET_LO_BITS].
constexpr uint32_t COSET_LO_BITS = 12;

// What a pass of H (cuzk_h_poly in ntt.cu) does beside its stages, so that H's pointwise steps take no sweeps of
// their own. PASS_IO_MUL: each scalar loaded at index j is multiplied by mul[j] (the product a b, in the first pass of
// its inverse transform). PASS_IO_SCALE: each scalar stored at index j is multiplied by c g^i, i = bitrev(j) (the
// last pass of a DIF transform, whose output is bit-reversed), from the tables lo and hi; PASS_IO_SUB with it also
// subtracts sub[j] times hi[0] (= c). The products take mont_mul_f64, reduced, whatever the butterflies' form.
// PASS_IO_TWIST (the last pass of a DIF transform, in place of PASS_IO_SCALE): the pass goes on to the first pass of
// the forward coset transform, DIT, of the same groups (see twist_table_kernel), so that the scaling by c g^i and one
// sweep of the vector drop out. (The DIF transform's last pass and the DIT transform's first, of k stages each, both
// take groups of 2^k adjacent scalars.)
// PASS_IO_BITREV (in a transform's last DIF pass): the pass stores the scalar of index j at
// bitrev(j) of `out`, another buffer, so that the output is in natural order with no bit reversal of its own (H's
// last pass, ntt.cu's cuzk_h_poly). The block takes the groups J whose bit reversals are adjacent, J = bitrev(b G +
// t) over the log_n - k group bits (G = 2^log_ghigh groups a block, t < G), and its stores go group first: for a
// fixed m the G groups' scalars land at adjacent indices bitrev(m) 2^(log_n - k) + b G + t, G 32-byte scalars in a
// run. The loads stay runs of 2^k scalars. In place it would race: a block's stores land in other blocks' groups
// (unless the pass is the whole transform, one block). Without PASS_IO_SCALE the scalars go as they are (the forward
// NTT from natural to natural order, ntt.cu's natural_ntt). PASS_IO_OUT: the pass stores into `out` at the same
// indices (the first pass of that NTT, out of place).
// Against the bit reversal after the pass (CUZK_H_BITREV=0): H 2^27 270.3 -> 267.9 ms, 2^24 29.87 -> 29.61 ms (H100,
// 2026-12-06, two rounds; BENCHMARKS).
// PASS_IO_HALVE (a transform's last pass, DIF in place of PASS_IO_SCALE, or DIT): each scalar stored is multiplied
// by 2^-log_n, the inverse transform's n^-1, by mont_div_pow2 (no product; ntt.cu's inverse NTT off a coset).
// PASS_IO_UNTWIST (with PASS_IO_SCALE, a transform's last DIF pass of at least 3 stages: H's product's, and the
// inverse NTT's on a coset): the coset factor c g^i of the stores (g here the inverse of the coset's generator) folded
// in part into the pass's twiddles, so that a scalar stored takes one product where the scaling takes two (see
// untwist_table_kernel).
enum : uint32_t {
    PASS_IO_NONE = 0,
    PASS_IO_MUL = 1,
    PASS_IO_SCALE = 2,
    PASS_IO_SUB = 4,
    PASS_IO_TWIST = 8,
    PASS_IO_BITREV = 16,
    PASS_IO_OUT = 32,
    PASS_IO_HALVE = 64,
    PASS_IO_UNTWIST = 128
};
struct PassIo {
    const fr_t* mul;
    const fr_t* sub;
    const fr_t* lo;
    const fr_t* hi;
    const fr_t* twist;  // twist_table's or untwist_table's 2^k - 1 twiddles (PASS_IO_TWIST, PASS_IO_UNTWIST)
    fr_t* out;          // the stores' buffer (PASS_IO_BITREV, PASS_IO_OUT)
};

// The coset transform folded into a DIT transform's twiddles. Evaluating on the coset g<w> is transforming x_i g^i,
// and a DIT whose stage s multiplies its twiddles by g^(2^(log_n - 1 - s)) does that with no scaling at all (the
// butterflies of stage s combine sub-transforms over i = r + 2^(log_n - 1 - s) k, whose coset factor is that power
// of g, and the r part rides on the later stages' twiddles). In H only the first DIT pass is twisted (its twiddles
// do not depend on the block, so one small table serves every block); a scalar at bit-reversed position j, i =
// bitrev(j) = u 2^L + r (L = log_n - the pass's stages; r is the same for a whole group), then still needs t g^r (t
// the coset tables' constant, n^-1 in H), one factor per group of the pass, which its first round applies. Against
// the scaling pass (PASS_IO_SCALE, two products a scalar: the factor from lo and hi, then the scalar) that is one
// product a scalar, and no pass of its own: H 2^27 274.5 -> 269.1 ms, 2^24 30.72 -> 30.03 ms (H100, 2026-12-06, two
// rounds; BENCHMARKS).
// twist_table: entry (2^st - 1) + mb = g^(2^(log_n - 1 - st)) w^(mb << (log_n - 1 - st)), mb < 2^st, for the local
// stages st < k of a DIT pass with no low bits, laid out as the pass's twiddles in shared memory (tw_off) and read in
// place of them; tw is the domain's forward table (w^e, e < n/2).
__global__ void twist_table_kernel(fr_t* out, uint32_t k, uint32_t log_n, const fr_t* __restrict__ tw,
                                   const fr_t* __restrict__ g) {
    const uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i + 1 >= (1u << k)) return;
    uint32_t st = 0;
    while ((2u << st) <= i + 1) st++;
    const uint32_t mb = i + 1 - (1u << st), shift = log_n - 1 - st;
    fr_t c = *g;
    for (uint32_t r = 0; r < shift; r++) c = fr_mul(c, c);
    out[i] = fr_mul(c, load(&tw[(uint64_t)mb << shift]));
}

// The coset scaling folded into a DIF transform's twiddles, the transpose of the twist above. A DIF stage s whose
// twiddles are all multiplied by a constant f multiplies by f every output whose natural index i has bit s set (its
// butterflies' second outputs hold those outputs' sub-transform); so with f = g^(2^s) at every stage the outputs come
// out times g^i with no scaling at all. H's product and the inverse NTT on a coset take it in their last pass
// (PASS_IO_UNTWIST), whose twiddles are the same for every block, but for that pass's last round: DIF's last two stages
// have the twiddles 1 but for one product in four, and twisted they would need all four. Each scalar stored then still
// needs t g^r (t the coset tables' constant, r = i without the bits of the twisted stages): r's bits below the pass's
// first stage s0 are fixed by the scalar's group, and its two top bits, which the last round's stages own, are the two
// low bits of the scalar's index m in its group; so each block makes the 4 G factors its G groups need (PASS_IO_UNTWIST
// in ntt_pass), one product each, and a scalar stored takes one product, where PASS_IO_SCALE makes its factor from the
// tables first, two. Against the tables (CUZK_H_UNTWIST=0), medians of three rounds: H 2^27 261.9 -> 259.4 ms, 2^24
// 28.79 -> 28.50 ms (H100, 2026-12-07; BENCHMARKS).
// untwist_table: entry (2^k - 2^(k - st)) + mb = g^(2^s) w^(mb << s), s = log_n - k + st, mb < 2^(k - 1 - st), for the
// local stages st < k of the last DIF pass (no low bits), laid out as its twiddles in shared memory (tw_off), the
// factor g^(2^s) left out for the last two stages; tw is the transform's table (w^e, e < n/2), g the coset's factor.
__global__ void untwist_table_kernel(fr_t* out, uint32_t k, uint32_t log_n, const fr_t* __restrict__ tw,
                                     const fr_t* __restrict__ g) {
    const uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i + 1 >= (1u << k)) return;
    uint32_t st = 0;
    while ((1u << k) - (1u << (k - st - 1)) <= i) st++;
    const uint32_t mb = i - ((1u << k) - (1u << (k - st))), s = log_n - k + st;
    const fr_t w = load(&tw[(uint64_t)mb << s]);
    if (st + 2 >= k) {
        out[i] = w;
        return;
    }
    fr_t c = *g;
    for (uint32_t r = 0; r < s; r++) c = fr_mul(c, c);
    out[i] = fr_mul(c, w);
}

// Shared memory of a pass with PASS_IO_UNTWIST beyond plan_pass's: four factors for each group of the block.
__host__ __device__ constexpr size_t untwist_smem(uint32_t log_ghigh) { return sizeof(fr_t) << (log_ghigh + 2); }

// Local stage st's twiddles in shared memory: stage st pairs bit b of m (DIF b = k - 1 - st, DIT b = st) and takes one
// twiddle for each value of m's b bits below and of the 2^log_glow low group bits, from tw_off(st) on.
template <bool DIT>
__device__ __forceinline__ uint32_t stage_tw_bits(const PassShape& ps, uint32_t st) {
    return DIT ? st : ps.k - 1 - st;
}
template <bool DIT>
__device__ __forceinline__ uint32_t stage_tw_off(const PassShape& ps, uint32_t st) {
    return (DIT ? (1u << st) - 1 : (1u << ps.k) - (1u << (ps.k - st))) << ps.log_glow;
}

// A pass's rounds over the block's scalars in shared memory (loaded, the barrier passed), its twiddles in tws; ends
// with a barrier. SCALE: the first round first multiplies each scalar by its group's factor, scale.get(group index in
// the block) (PASS_IO_TWIST's t g^r, see twist_table_kernel). (Tried: applying it within the first stage, as f u +
// (f w) v and f u - (f w) v, a product for u where scaling both takes two, f w a second factor per group. Half the
// products, but H 2^27 took 270.1 against 269.1 ms; H100, 2026-12-06, two rounds.)
template <bool DIT, MulForm FORM, bool SWZ, bool SCALE = false>
__device__ __forceinline__ void pass_rounds(const PassSmem<SWZ>& smem, const TwiddleSmem& tws, const PassShape& ps,
                                            uint32_t log_n, const TwiddleSmem& scale) {
    constexpr bool LAZY = lazy_form<FORM>();
    const uint32_t e = smem.e;
    const uint32_t gmask = (1u << ps.log_glow) - 1;
    // The twiddle of the butterfly whose lower scalar is l, at local stage st.
    auto twiddle = [&](uint32_t l, uint32_t st) -> fr_t {
        const uint32_t mb = (l >> ps.log_glow) & ((1u << stage_tw_bits<DIT>(ps, st)) - 1);
        return tws.get(stage_tw_off<DIT>(ps, st) + ((mb << ps.log_glow) | (l & gmask)));
    };
    // The group factor's product (SCALE): x below 2p (lazy) or p, the factor below p.
    auto scaled = [&](const fr_t& x, const fr_t& f) { return mont_mul_f64<FrModulus, !LAZY>(x, f); };
    // A radix-4 round (local stages st and st + 1) pairs the bits q and q + 1 of l: DIF from the top of m down, DIT
    // from the bottom up. Quad qd's four scalars are l0 + {0, 1, 2, 3} << q.
    auto quad_bit = [&](uint32_t st) { return ps.log_glow + (DIT ? st : ps.k - 2 - st); };
    auto quad_l0 = [&](uint32_t qd, uint32_t q) { return ((qd >> q) << (q + 2)) | (qd & ((1u << q) - 1)); };
    // The round's three twiddles for quad qd. DIT: (l0, s), (l0, s + 1), (l1, s + 1); stage s keeps the global bits
    // below s, so (x2, x3)'s twiddle equals (x0, x1)'s. DIF: (l0, s), (l1, s), (l0, s + 1); stage s + 1 keeps the
    // bits below log_n - s - 2, so (x2, x3)'s equals (x0, x1)'s. DIF's last round needs (l1, s) alone.
    auto round_twiddles = [&](uint32_t st, uint32_t qd, fr_t* w) {
        const uint32_t q = quad_bit(st), s = ps.s0 + st;
        const uint32_t l0 = quad_l0(qd, q), l1 = l0 | (1u << q);
        if (DIT) {
            w[0] = twiddle(l0, st);
            w[1] = twiddle(l0, st + 1);
            w[2] = twiddle(l1, st + 1);
        } else if (s + 2 == log_n) {
            w[1] = twiddle(l1, st);
        } else {
            w[0] = twiddle(l0, st);
            w[1] = twiddle(l1, st);
            w[2] = twiddle(l0, st + 1);
        }
    };
    // The round's four butterflies on x0..x3 (global stages s and s + 1), with round_twiddles' w; `last` is
    // std::true_type for DIF's last round (s + 2 == log_n).
    auto quad = [&](fr_t& x0, fr_t& x1, fr_t& x2, fr_t& x3, auto last, const fr_t* w) {
        if (DIT) {
            // Low bit first: (x0, x1), (x2, x3) at stage s; then the high bit: (x0, x2), (x1, x3) at s + 1.
            butterfly<true, round_form<FORM, 0>(), LAZY>(x0, x1, w[0]);
            butterfly<true, round_form<FORM, 1>(), LAZY>(x2, x3, w[0]);
            butterfly<true, round_form<FORM, 2>(), LAZY>(x0, x2, w[1]);
            butterfly<true, round_form<FORM, 3>(), LAZY>(x1, x3, w[2]);
        } else if (decltype(last)::value) {
            // DIF's last two stages. Stage log_n - 2 has the twiddles w^0 (for x0, x2: l0's bit q is global bit 0,
            // clear) and w^(n/4); stage log_n - 1 has only w^0. radix4 picks this loop for every thread of the
            // launch, so it never diverges. (DIT's first stages have the same property, but skipping products there
            // raised the kernel's spills from 16 to 64 bytes and made H 0.5 % slower; H200, 2026-12-01.)
            butterfly_unit<LAZY>(x0, x2);
            butterfly<false, round_form<FORM, 0>(), LAZY>(x1, x3, w[1]);
            butterfly_unit<LAZY>(x0, x1);
            butterfly_unit<LAZY>(x2, x3);
        } else {
            // High bit first: (x0, x2), (x1, x3) at stage s; then the low bit: (x0, x1), (x2, x3) at s + 1.
            butterfly<false, round_form<FORM, 0>(), LAZY>(x0, x2, w[0]);
            butterfly<false, round_form<FORM, 1>(), LAZY>(x1, x3, w[1]);
            butterfly<false, round_form<FORM, 2>(), LAZY>(x0, x1, w[2]);
            butterfly<false, round_form<FORM, 3>(), LAZY>(x2, x3, w[2]);
        }
    };
    // A thread's quads one at a time. (Tried: two at once, loaded, run and stored together, with 128 threads a block,
    // so that a warp had twice the independent work at the same blocks an SM: 168 registers, forward NTT 2^27 40.69
    // -> 41.67 ms, H 2^27 260.2 -> 279.1 ms; H100, 2026-12-07, BENCHMARKS.)
    auto radix4_loop = [&](uint32_t st, auto last) {
        const uint32_t q = quad_bit(st);
        for (uint32_t qd = threadIdx.x; qd < e / 4; qd += blockDim.x) {
            const uint32_t l0 = quad_l0(qd, q);
            const uint32_t l1 = l0 | (1u << q), l2 = l0 | (2u << q), l3 = l0 | (3u << q);
            fr_t x0 = smem.get(l0), x1 = smem.get(l1), x2 = smem.get(l2), x3 = smem.get(l3);
            if (SCALE && st == 0) {
                // The quad's scalars differ in bits of m only: one group.
                const fr_t f = scale.get(l0 >> (ps.log_glow + ps.k));
                x0 = scaled(x0, f);
                x1 = scaled(x1, f);
                x2 = scaled(x2, f);
                x3 = scaled(x3, f);
            }
            fr_t w[3];
            round_twiddles(st, qd, w);
            quad(x0, x1, x2, x3, last, w);
            smem.set(l0, x0);
            smem.set(l1, x1);
            smem.set(l2, x2);
            smem.set(l3, x3);
        }
    };
    // DIF's last round (stages log_n - 2 and log_n - 1) in a loop of its own, so that its registers are allocated apart
    // from the other rounds' (DIF spills 20 bytes, not 24). Against one loop with the branch inside: forward NTT 2^27
    // 40.46 -> 40.18 ms, 2^24 4.555 -> 4.490 ms, H 2^27 261.3 -> 260.5 ms (H100, 2026-12-07, two rounds; BENCHMARKS).
    auto radix4 = [&](uint32_t st) {
        if (!DIT && ps.s0 + st + 2 == log_n)
            radix4_loop(st, std::true_type{});
        else
            radix4_loop(st, std::false_type{});
        __syncthreads();
    };
    // One stage (local st) alone.
    auto radix2 = [&](uint32_t st) {
        const uint32_t q = ps.log_glow + (DIT ? st : ps.k - 1 - st);
        const uint32_t s = ps.s0 + st;
        for (uint32_t bt = threadIdx.x; bt < e / 2; bt += blockDim.x) {
            const uint32_t l1 = ((bt >> q) << (q + 1)) | (bt & ((1u << q) - 1));
            const uint32_t l2 = l1 | (1u << q);
            fr_t u = smem.get(l1), v = smem.get(l2);
            if (SCALE && st == 0) {
                const fr_t f = scale.get(l1 >> (ps.log_glow + ps.k));
                u = scaled(u, f);
                v = scaled(v, f);
            }
            if (!DIT && s + 1 == log_n) {
                butterfly_unit<LAZY>(u, v);
            } else {
                butterfly<DIT, round_form<FORM, 0>(), LAZY>(u, v, twiddle(l1, st));
            }
            smem.set(l1, u);
            smem.set(l2, v);
        }
        __syncthreads();
    };
    // An odd stage count leaves one stage alone: DIF takes it first, so that its last round holds stages log_n - 2
    // and log_n - 1 and skips three of their four products; DIT takes it last.
    uint32_t st = 0;
    if (!DIT && (ps.k & 1)) radix2(st++);
    for (; st + 2 <= ps.k; st += 2) radix4(st);
    if (st < ps.k) radix2(st);
}

// Resident pass blocks per SM the kernel is built for (at most 85 registers a thread): a block of 1024 scalars and
// its twiddles takes 64 KiB of shared memory, so no more than 3 fit an SM. Before the twiddles moved to shared memory
// DIT built for 4 was faster (H 2^27 412.6 against 425.4 ms); the build for 4 timed after it (320.6 against 320.2 ms;
// H200, 2026-12-03) still ran three, for want of shared memory. Four did run on 2026-12-07, with passes of at most 9
// stages and no groups adjacent in the low bits (48 KiB a block), and lost: at most 64 registers, DIF spilled 96
// bytes and DIT 28, and the forward NTT 2^27 took 44.7 against 40.5 ms, H 2^27 284 against 261 ms (H100; those
// blocks alone at three an SM took 41.1 ms and 266 ms; BENCHMARKS).
// Built for 2 (-DCUZK_NTT_PASS_BLOCKS=2, at most 128 registers) no form of the product gained (see mul_form).
#ifndef CUZK_NTT_PASS_BLOCKS
#define CUZK_NTT_PASS_BLOCKS 3
#endif
constexpr int PASS_MIN_BLOCKS = CUZK_NTT_PASS_BLOCKS;

// Shared memory of a pass with PASS_IO_TWIST beyond plan_pass's: one factor for each group of the block.
__host__ __device__ constexpr size_t twist_smem(uint32_t log_ghigh) { return sizeof(fr_t) << log_ghigh; }

template <bool DIT, MulForm FORM, bool SWZ, uint32_t IO = PASS_IO_NONE>
__global__ void __launch_bounds__(PASS_MAX_THREADS, PASS_MIN_BLOCKS)
    ntt_pass(fr_t* data, uint32_t log_n, PassShape ps, const fr_t* __restrict__ tw, PassIo io) {
    static_assert(!(IO & PASS_IO_SUB) || (IO & PASS_IO_SCALE), "PASS_IO_SUB comes with PASS_IO_SCALE");
    static_assert(!(IO & PASS_IO_TWIST) || (!DIT && IO == PASS_IO_TWIST), "PASS_IO_TWIST is a DIF pass's only step");
    static_assert(!(IO & (PASS_IO_BITREV | PASS_IO_OUT)) || !DIT, "stores elsewhere are a DIF pass's");
    static_assert(!((IO & PASS_IO_BITREV) && (IO & PASS_IO_OUT)), "PASS_IO_BITREV or PASS_IO_OUT, not both");
    static_assert(!((IO & PASS_IO_HALVE) && (IO & PASS_IO_SCALE)), "PASS_IO_HALVE or PASS_IO_SCALE, not both");
    static_assert(!DIT || (IO & ~PASS_IO_HALVE) == 0, "a DIT pass's only step is PASS_IO_HALVE");
    static_assert(!(IO & PASS_IO_UNTWIST) || (IO & PASS_IO_SCALE), "PASS_IO_UNTWIST comes with PASS_IO_SCALE");
    extern __shared__ uint4 smem_raw[];
    constexpr bool LAZY = lazy_form<FORM>();
    const uint32_t log_e = ps.k + ps.log_glow + ps.log_ghigh;
    const uint32_t e = 1u << log_e;
    const PassSmem<SWZ> smem{smem_raw, e};
    data += (uint64_t)blockIdx.y << log_n;
    if (IO & PASS_IO_MUL) io.mul += (uint64_t)blockIdx.y << log_n;
    if (IO & PASS_IO_SUB) io.sub += (uint64_t)blockIdx.y << log_n;
    if (IO & (PASS_IO_BITREV | PASS_IO_OUT)) io.out += (uint64_t)blockIdx.y << log_n;
    const uint32_t lo_blocks = 1u << (ps.low_bits - ps.log_glow);
    const uint64_t lo_base = (uint64_t)(blockIdx.x & (lo_blocks - 1)) << ps.log_glow;
    const uint64_t hi_base = (uint64_t)(blockIdx.x >> (ps.low_bits - ps.log_glow)) << ps.log_ghigh;
    auto global_index = [&](uint32_t l) -> uint64_t {
        uint64_t lo = lo_base + (l & ((1u << ps.log_glow) - 1));
        uint64_t m = (l >> ps.log_glow) & ((1u << ps.k) - 1);
        uint64_t hi = hi_base + (l >> (ps.log_glow + ps.k));
        // PASS_IO_BITREV: the last pass has no low bits; group bits log_n - k.
        if (IO & PASS_IO_BITREV) hi = bitrev((uint32_t)hi, log_n - ps.k);
        return (hi << (ps.low_bits + ps.k)) | (m << ps.low_bits) | lo;
    };
    // The pass's twiddles, loaded into shared memory with the scalars before the first round (see pass_twiddles):
    // local stage st's twiddles lie at stage_tw_off(st), one for each value of the bits of l below its pairing bit.
    // Stage s's twiddle for lower scalar l is w^(g << (DIT ? log_n - s - 1 : s)), g the bits of l's global index
    // below the pairing bit: the low bits (the block's lo_base and l's low group bits) and m's bits below.
    const uint32_t gmask = (1u << ps.log_glow) - 1;
    const uint32_t tw_count = pass_twiddles(ps.k, ps.log_glow);
    const TwiddleSmem tws{smem_raw + 2 * e, tw_count};
    if (IO & PASS_IO_UNTWIST) {
        // The last pass (no low bits): the twisted table, the same for every block, in place of the stages' twiddles.
        for (uint32_t i = threadIdx.x; i < tw_count; i += blockDim.x) tws.copy_async(i, &io.twist[i]);
    } else {
        for (uint32_t st = 0; st < ps.k; st++) {
            const uint32_t s = ps.s0 + st, shift = DIT ? log_n - s - 1 : s, off = stage_tw_off<DIT>(ps, st);
            for (uint32_t i = threadIdx.x; i < (1u << (stage_tw_bits<DIT>(ps, st) + ps.log_glow)); i += blockDim.x) {
                const uint64_t g = ((uint64_t)(i >> ps.log_glow) << ps.low_bits) | lo_base | (i & gmask);
                tws.copy_async(off + i, &tw[g << shift]);
            }
        }
    }
    // PASS_IO_UNTWIST's factors: entry 4 gi + v for the block's group gi and the scalars whose index m in it has v as
    // its two low bits, t g^r from the coset tables, r = bitrev(global index of m = v) (m's other bits are the
    // twisted stages', so r lacks them).
    const TwiddleSmem untwist{smem_raw + 2 * e + 2 * tw_count, 4u << ps.log_ghigh};
    if (IO & PASS_IO_UNTWIST) {
        for (uint32_t q = threadIdx.x; q < (4u << ps.log_ghigh); q += blockDim.x) {
            const uint32_t r = bitrev((uint32_t)global_index(((q >> 2) << ps.k) | (q & 3)), log_n);
            untwist.set(q, mont_mul_f64<FrModulus>(load(&io.lo[r & ((1u << COSET_LO_BITS) - 1)]),
                                                   load(&io.hi[r >> COSET_LO_BITS])));
        }
    }
    for (uint32_t l = threadIdx.x; l < e; l += blockDim.x) {
        const uint64_t g = global_index(l);
        if (IO & PASS_IO_MUL)
            smem.set(l, mont_mul_f64<FrModulus, !LAZY>(load(&data[g]), load(&io.mul[g])));
        else
            smem.copy_async(l, &data[g]);
    }
    copy_wait();
    __syncthreads();
    pass_rounds<DIT, FORM, SWZ>(smem, tws, ps, log_n, tws);
    // A lazy pass's scalars stay below 2p into the next pass of the transform, which takes them as its own (its
    // butterflies add and subtract modulo 2p, its products take a data operand below 2p); the last pass reduces, so
    // every buffer between transforms and kernels holds reduced scalars.
    bool reduce = LAZY && ps.last;
    if (IO & PASS_IO_TWIST) {
        // The forward coset transform's first pass (DIT, stages 0 .. k - 1) on the same groups: no low bits, so the
        // block's groups are 2^log_ghigh runs of 2^k scalars, group J = hi_base + index at positions J 2^k + m.
        // Its twiddles replace the DIF stages' (all read before the barrier above); group J's factor is t g^r, r =
        // bitrev(J) over the log_n - k high bits, from the coset tables (see twist_table_kernel).
        PassShape pt = ps;
        pt.s0 = 0;
        pt.last = ps.k == log_n;
        const TwiddleSmem scale{smem_raw + 2 * e + 2 * tw_count, 1u << ps.log_ghigh};
        for (uint32_t i = threadIdx.x; i < tw_count; i += blockDim.x) tws.set(i, load(&io.twist[i]));
        for (uint32_t gi = threadIdx.x; gi < (1u << ps.log_ghigh); gi += blockDim.x) {
            const uint32_t r = bitrev((uint32_t)(hi_base + gi), log_n - ps.k);
            scale.set(gi, mont_mul_f64<FrModulus>(load(&io.lo[r & ((1u << COSET_LO_BITS) - 1)]),
                                                  load(&io.hi[r >> COSET_LO_BITS])));
        }
        __syncthreads();
        pass_rounds<true, FORM, SWZ, true>(smem, tws, pt, log_n, scale);
        reduce = LAZY && pt.last;
    }
    for (uint32_t idx = threadIdx.x; idx < e; idx += blockDim.x) {
        // PASS_IO_BITREV stores group first (see PassIo): idx's low log_ghigh bits pick the group.
        const uint32_t l = (IO & PASS_IO_BITREV)
                               ? ((idx & ((1u << ps.log_ghigh) - 1)) << (ps.log_glow + ps.k)) | (idx >> ps.log_ghigh)
                               : idx;
        const fr_t x = smem.get(l);
        const uint64_t g = global_index(l);
        const uint32_t i = bitrev((uint32_t)g, log_n);  // the index in natural order
        fr_t* const to = (IO & PASS_IO_BITREV) ? &io.out[i] : (IO & PASS_IO_OUT) ? &io.out[g] : &data[g];
        if (IO & PASS_IO_SCALE) {
            // x below 2p (lazy) or p, the factor below p: the reduced product is below p.
            const fr_t f = (IO & PASS_IO_UNTWIST) ? untwist.get(((l >> ps.k) << 2) | (l & 3))
                                                  : mont_mul_f64<FrModulus>(load(&io.lo[i & ((1u << COSET_LO_BITS) - 1)]),
                                                                            load(&io.hi[i >> COSET_LO_BITS]));
            fr_t y = mont_mul_f64<FrModulus>(x, f);
            if (IO & PASS_IO_SUB) y = fr_sub(y, mont_mul_f64<FrModulus>(load(&io.sub[g]), load(&io.hi[0])));
            store(to, y);
        } else if (IO & PASS_IO_HALVE) {
            store(to, mont_div_pow2<FrModulus>(x, log_n));  // x below 2p (lazy) or p: reduced
        } else {
            store(to, reduce ? mont_reduce_once<FrModulus>(x) : x);
        }
    }
}


// The most dynamic shared memory a pass takes: 2^MAX_LOG_BLOCK scalars, as many twiddles less one, and with
// PASS_IO_TWIST a factor for each group (2^(MAX_LOG_BLOCK - k) groups beside 2^k - 1 twiddles: one more at most), with
// PASS_IO_UNTWIST four (k >= 2: four more at most, at k = MAX_LOG_BLOCK).
constexpr size_t PASS_MAX_SMEM = sizeof(fr_t) * ((2u << MAX_LOG_BLOCK) + 4);

// One pass's launch: its shape, 2^log_e scalars a block in 2^(log_n - log_e) blocks (times the batch), its threads and
// its dynamic shared memory (the scalars and the pass's twiddles).
struct PassPlan {
    PassShape ps;
    uint32_t log_e, threads;
    size_t shmem;
};

// The pass of k stages after `done` stages of a transform of 2^log_n (DIF from the top bit down, DIT from the bottom
// up), with at most max_threads threads a block: its groups of 2^k scalars, 2^low_bits apart, fill the block with
// groups adjacent in the low bits first (coalesced loads), then in the high bits, up to 2^MAX_LOG_BLOCK scalars.
__host__ __device__ inline PassPlan plan_pass(bool dit, uint32_t log_n, uint32_t k, uint32_t done, uint32_t max_threads) {
    PassPlan p;
    p.ps.k = k;
    p.ps.s0 = done;
    p.ps.last = done + k == log_n;
    p.ps.low_bits = dit ? done : log_n - done - k;
    const uint32_t room = MAX_LOG_BLOCK - k;
    p.ps.log_glow = room < p.ps.low_bits ? room : p.ps.low_bits;
    const uint32_t high_bits = log_n - p.ps.low_bits - k, room_high = room - p.ps.log_glow;
    p.ps.log_ghigh = room_high < high_bits ? room_high : high_bits;
    p.log_e = k + p.ps.log_glow + p.ps.log_ghigh;
    const uint32_t quads = (1u << p.log_e) / 4, t = max_threads < quads ? max_threads : quads;
    p.threads = t > 1 ? t : 1;
    p.shmem = sizeof(fr_t) * ((1u << p.log_e) + pass_twiddles(k, p.ps.log_glow));
    return p;
}

}  // namespace cuzk
