// NTT over the BLS12-381 scalar field, and Groth16's H polynomial, on the GPU.
//
// Transforms run as passes of up to 10 stages each in shared memory (1024 scalars per block), two stages per trip
// through shared memory (radix 4): decimation in frequency (natural in, bit-reversed out) and in time (bit-reversed
// in, natural out). A natural-to-natural transform adds a tiled bit reversal.
// Twiddles w^i (i < n/2) for both directions are computed once per domain and stay on the device.
#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "device_mem.cuh"
#include "env_switch.cuh"
#include "fr.cuh"
#include "fr_test_ops.cuh"
#include "ntt_pass.cuh"
#include "ntt.h"
#include "once_per_device.cuh"
#include "status.cuh"
#include "stream.cuh"

using namespace cuzk;

// What a coset's power tables are made from (coset_tables): the coset's g, inverted or not, the constant c (times c2
// when given), and the twisted twiddles' stage count and table (0 and null without them).
struct CosetKey {
    fr_t g, c, c2;
    const fr_t* tw;
    uint32_t twist_k;
    bool invert, has_c2, untwist;
    bool operator==(const CosetKey& o) const {
        return !memcmp(&g, &o.g, sizeof g) && !memcmp(&c, &o.c, sizeof c) && has_c2 == o.has_c2 &&
               (!has_c2 || !memcmp(&c2, &o.c2, sizeof c2)) && tw == o.tw && twist_k == o.twist_k &&
               invert == o.invert && untwist == o.untwist;
    }
};

// A coset's tables kept by its domain: device memory of their own, and an event recorded once they are written.
struct CosetEntry {
    CosetKey key;
    fr_t* mem;
    cudaEvent_t ready;
};

struct cuzk_ntt_domain {
    uint32_t log_n;
    fr_t* tw_fwd;  // w^i for i < max(n/2, 1)
    fr_t* tw_inv;  // w^-i
    fr_t n_inv;
    // The coset tables made for this domain so far (coset_tables), at most COSET_CACHE_MAX; the mutex guards the list,
    // as calls on several threads share a domain.
    mutable std::mutex coset_mu;
    mutable std::vector<CosetEntry> cosets;
};

namespace {

// first * (*base)^(start + k) for k < chunk, one chunk per thread; base and first (1 when null) are read from device
// memory.
__global__ void powers_kernel(fr_t* out, uint64_t count, const fr_t* base, const fr_t* first, uint32_t chunk) {
    uint64_t t = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x;
    uint64_t start = t * chunk;
    if (start >= count) return;
    const fr_t b = *base;
    fr_t cur = fr_pow_u64(b, start);
    if (first) cur = fr_mul(cur, *first);
    for (uint32_t k = 0; k < chunk && start + k < count; k++) {
        out[start + k] = cur;
        cur = fr_mul(cur, b);
    }
}

cuzk_status fill_powers(fr_t* out, uint64_t count, const fr_t* base_dev, cudaStream_t stream,
                        const fr_t* first_dev = nullptr) {
    const uint32_t chunk = 64, threads = 256;
    uint64_t workers = (count + chunk - 1) / chunk;
    uint32_t blocks = (uint32_t)((workers + threads - 1) / threads);
    powers_kernel<<<blocks, threads, 0, stream>>>(out, count, base_dev, first_dev, chunk);
    CUZK_TRY_LAUNCH("powers_kernel");
    return status_ok();
}

// dst = src^e (one thread), or src^-1 when invert.
__global__ void pow_one(fr_t* dst, const fr_t* src, uint64_t e, bool invert) {
    *dst = invert ? fr_inv(*src) : fr_pow_u64(*src, e);
}

// Threads per pass block (each takes e / 4 / threads quads per round): 256 unless CUZK_NTT_THREADS
// (64..256, a power of two) asks otherwise; an A/B switch for measuring occupancy against work per thread.
// The kernel is built for at most 256 threads (and 3 blocks per SM: PASS_MIN_BLOCKS).
uint32_t pass_threads() {
    static const uint32_t threads = [] {
        const uint32_t t = env_u32("CUZK_NTT_THREADS", 64, PASS_MAX_THREADS, PASS_MAX_THREADS);
        if ((t & (t - 1)) == 0) return t;
        env_ignored("CUZK_NTT_THREADS", getenv("CUZK_NTT_THREADS"), "a power of two from 64 to 256");
        return PASS_MAX_THREADS;
    }();
    return threads;
}

// Butterflies multiply with mont_mul_f64, the product on the FP64 pipe, in both directions. With the twiddles in shared
// memory the pass spills less with it than it did (ptxas, swizzled: DIF 72 bytes, DIT 16, against 36 and 0 with
// mont_mul_ul; 100-170 bytes on 2026-12-01), and it beat every other form and mix (H200, 2026-12-04,
// two rounds, medians of 5): forward NTT 2^27 48.79 ms against 50.53 (mont_mul_ul), 50.15 (hybrid), 49.29 (hybrid3),
// 48.80 (f64 DIF, hybrid DIT); H 2^27 307.6 against 320.4, 314.1, 309.5, 309.3 ms. Built for 2 blocks an SM
// (-DCUZK_NTT_PASS_BLOCKS=2, 128 registers) every form was slower (f64 49.98 ms, H 315.2). Until then mont_mul_ul was
// the form: the 2^27 NTT in 58.45 ms against 60.64 ms with mont_mul_fold and 63.44 ms with mont_mul (2026-12-01).
// Its passes are lazy since 2026-12-05 (lazy_form): 2^27 48.45 against 49.41 ms, H 2^27 304-305 against 310 ms (H100).
// CUZK_NTT_MUL=ul|chains|fold|f64|hybrid|hybrid3 picks the form, DIF_FORM/DIT_FORM one per direction: an A/B switch.
// An unknown form warns (env_ignored) and takes the default, f64.
MulForm parse_mul_form(const std::string& s) {
    if (s == "ul") return MulForm::Unsaturated;
    if (s == "chains") return MulForm::Chains;
    if (s == "fold") return MulForm::Fold;
    if (s == "hybrid") return MulForm::Hybrid;
    if (s == "hybrid3") return MulForm::Hybrid3;
    if (s != "f64")
        env_ignored("CUZK_NTT_MUL", s.c_str(), "ul, chains, fold, f64, hybrid or hybrid3, or two of them as DIF/DIT");
    return MulForm::Float64;
}

// The form of DIF's passes (dit false) or DIT's: CUZK_NTT_MUL=FORM for both, or DIF_FORM/DIT_FORM.
MulForm mul_form(bool dit = false) {
    static const std::pair<MulForm, MulForm> forms = [] {
        const char* v = getenv("CUZK_NTT_MUL");
        const std::string s = v && *v ? v : "f64";
        const size_t slash = s.find('/');
        if (slash == std::string::npos) {
            const MulForm f = parse_mul_form(s);
            return std::make_pair(f, f);
        }
        return std::make_pair(parse_mul_form(s.substr(0, slash)), parse_mul_form(s.substr(slash + 1)));
    }();
    return dit ? forms.second : forms.first;
}

// Shared-memory layout of the passes (PassSmem): swizzled planes unless CUZK_NTT_SMEM=interleaved (an A/B switch).
// Swizzled, the 2^27 forward NTT takes 55.8 ms against 58.8 interleaved, H 2^27 425.4 against 438.0 ms (H200,
// 2026-12-01, same binary, two interleaved rounds).
bool smem_swizzled() {
    static const bool swz = env_word("CUZK_NTT_SMEM", {"interleaved"}) != 0;
    return swz;
}

// Raises a pass kernel's dynamic shared-memory limit to PASS_MAX_SMEM, once per device and kernel (the default is
// 48 KiB).
template <bool DIT, MulForm F, bool SWZ, uint32_t IO = PASS_IO_NONE>
cudaError_t raise_pass_smem() {
    static std::atomic<uint64_t> raised{0};
    return once_per_device(raised, [] {
        return cudaFuncSetAttribute(ntt_pass<DIT, F, SWZ, IO>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                    (int)PASS_MAX_SMEM);
    });
}

template <MulForm F, bool SWZ>
cudaError_t launch_pass_as(bool dit, dim3 grid, uint32_t threads, size_t shmem, cudaStream_t stream, fr_t* data,
                           uint32_t log_n, const PassShape& ps, const fr_t* tw) {
    cudaError_t err = dit ? raise_pass_smem<true, F, SWZ>() : raise_pass_smem<false, F, SWZ>();
    if (err != cudaSuccess) return err;
    if (dit)
        ntt_pass<true, F, SWZ><<<grid, threads, shmem, stream>>>(data, log_n, ps, tw, PassIo{});
    else
        ntt_pass<false, F, SWZ><<<grid, threads, shmem, stream>>>(data, log_n, ps, tw, PassIo{});
    return cudaSuccess;
}

// A pass with pointwise steps (PassIo: H's, fused_h, and the natural-order NTT's stores, natural_ntt; DIF, or DIT
// with PASS_IO_HALVE alone), in the default form and layout only.
template <uint32_t IO, bool DIT = false>
cudaError_t launch_io_pass(dim3 grid, uint32_t threads, size_t shmem, cudaStream_t stream, fr_t* data, uint32_t log_n,
                          const PassShape& ps, const fr_t* tw, const PassIo& io) {
    const cudaError_t err = raise_pass_smem<DIT, MulForm::Float64, true, IO>();
    if (err != cudaSuccess) return err;
    ntt_pass<DIT, MulForm::Float64, true, IO><<<grid, threads, shmem, stream>>>(data, log_n, ps, tw, io);
    return cudaSuccess;
}

template <MulForm F>
cudaError_t launch_pass(bool dit, dim3 grid, uint32_t threads, size_t shmem, cudaStream_t stream, fr_t* data,
                        uint32_t log_n, const PassShape& ps, const fr_t* tw) {
    const bool swz = smem_swizzled();
    if (swz) return launch_pass_as<F, true>(dit, grid, threads, shmem, stream, data, log_n, ps, tw);
    return launch_pass_as<F, false>(dit, grid, threads, shmem, stream, data, log_n, ps, tw);
}

// Stages per pass, in the order run, for a transform of 2^log_n: the fewest passes, as even as they allow (8, 8, 8 at
// 2^24), except where another split measured faster. At 2^27 9, 10, 8 (one odd pass, so one radix-2 round, where
// 9, 9, 9 has three): forward NTT 53.68 -> 52.97 ms, H 333.4 -> 329.4 ms; at 2^26 8, 10, 8: 25.47 -> 25.26 ms. At 2^24
// 10, 8, 6 and 6, 8, 10 were slower (5.98 and 5.88 ms against 5.80). H200, 2026-12-03, two rounds of five splits
// each. CUZK_NTT_SPLIT="27:10,10,7;26:10,8,8" overrides it per size (an A/B switch; a list that does not add up to
// log_n or has a pass above MAX_LOG_BLOCK is ignored).
std::vector<uint32_t> pass_split(uint32_t log_n) {
    static const std::map<uint32_t, std::vector<uint32_t>> custom = [] {
        std::map<uint32_t, std::vector<uint32_t>> m;
        const char* v = getenv("CUZK_NTT_SPLIT");
        std::string s = v ? v : "";
        size_t at = 0;
        while (at < s.size()) {
            size_t end = s.find(';', at);
            if (end == std::string::npos) end = s.size();
            const std::string item = s.substr(at, end - at);
            at = end + 1;
            const size_t colon = item.find(':');
            if (colon == std::string::npos) {
                if (!item.empty())
                    env_ignored("CUZK_NTT_SPLIT", item.c_str(), "SIZE:K,K,... with passes of 1 to 10 stages");
                continue;
            }
            const uint32_t size = (uint32_t)strtoul(item.c_str(), nullptr, 10);
            std::vector<uint32_t> ks;
            uint32_t sum = 0;
            bool ok = true;
            for (size_t p = colon + 1; p <= item.size();) {
                size_t q = item.find(',', p);
                if (q == std::string::npos) q = item.size();
                const uint32_t k = (uint32_t)strtoul(item.substr(p, q - p).c_str(), nullptr, 10);
                ok = ok && k >= 1 && k <= MAX_LOG_BLOCK;
                ks.push_back(k);
                sum += k;
                p = q + 1;
            }
            if (ok && sum == size)
                m[size] = ks;
            else
                env_ignored("CUZK_NTT_SPLIT", item.c_str(), "passes of 1 to 10 stages that add up to the size");
        }
        return m;
    }();
    const auto it = custom.find(log_n);
    if (it != custom.end()) return it->second;
    if (log_n == 27) return {9, 10, 8};
    if (log_n == 26) return {8, 10, 8};
    const uint32_t passes = (log_n + MAX_LOG_BLOCK - 1) / MAX_LOG_BLOCK;
    std::vector<uint32_t> ks(passes, log_n / passes);
    for (uint32_t i = 0; i < log_n % passes; i++) ks[i]++;
    return ks;
}

// Whether passes with PassIo's steps are built for the form and layout in use of DIF's passes (or DIT's): the default
// ones only (f64, swizzled; launch_io_pass).
bool io_passes_built(bool dit = false) { return mul_form(dit) == MulForm::Float64 && smem_swizzled(); }

// Whether H's pointwise steps run inside its passes (PassIo): with the default form and layout (io_passes_built),
// unless CUZK_H_FUSED=0 asks for the separate kernels (an A/B switch). H 2^27 279.1 against 284.6 ms, 2^24 31.58 against
// 32.13 ms (H100, 2026-12-06, one round).
bool fused_h() {
    static const bool fused = env_word("CUZK_H_FUSED", {"0", "1"}) != 0 && io_passes_built();
    return fused;
}

// Whether H's twisted pair runs (PASS_IO_TWIST: a's and b's inverse transforms end in their forward coset
// transforms' first passes, twisted), with fused_h, unless CUZK_H_TWIST=0 asks for the scaling pass (an A/B switch).
bool twisted_h() {
    static const bool twist = env_word("CUZK_H_TWIST", {"0", "1"}) != 0 && fused_h();
    return twist;
}

// Whether H's last pass stores h in natural order (PASS_IO_BITREV, into a's buffer, the product's transform running in
// b's), with fused_h, unless CUZK_H_BITREV=0 asks for the transform in a's buffer and a bit reversal after it (an A/B
// switch).
bool bitrev_h() {
    static const bool on = env_word("CUZK_H_BITREV", {"0", "1"}) != 0 && fused_h();
    return on;
}

// Whether H's last pass folds part of its coset scaling into its twiddles (PASS_IO_UNTWIST, from UNTWIST_MIN_STAGES
// stages: below 3 none would be twisted): with fused_h, unless CUZK_H_UNTWIST=0 asks for the scaling from the tables
// alone (an A/B switch).
constexpr uint32_t UNTWIST_MIN_STAGES = 3;
bool untwisted_h() {
    static const bool on = env_word("CUZK_H_UNTWIST", {"0", "1"}) != 0 && fused_h();
    return on;
}

// Whether an NTT from natural to natural order runs its passes out of place through a scratch vector from the pool,
// the last one storing in natural order (run_passes' scratch), in the default form and layout, and an inverse one
// from natural order (off a coset, from either order) scales in its last pass's stores, unless CUZK_NTT_BITREV=0
// asks for the passes in place and a scaling sweep and a bit reversal after them (an A/B switch). Forward 2^27 44.0
// -> 41.1 ms, 2^24 4.99 -> 4.62 ms (H100, 2026-12-06, two rounds; BENCHMARKS), for 4 GiB more device memory at 2^27
// while it runs (the inverse's figures are at ntt below).
bool natural_ntt() {
    static const bool on = env_word("CUZK_NTT_BITREV", {"0", "1"}) != 0 && io_passes_built();
    return on;
}

// Whether the inverse transform from natural order on a coset folds part of its scaling by n^-1 g^-i into its last
// pass's twiddles (PASS_IO_UNTWIST, from UNTWIST_MIN_STAGES stages), as H's last pass does, with natural_ntt, unless
// CUZK_NTT_UNTWIST=0 asks for the scaling from the tables alone (an A/B switch).
// Against the tables, medians of two rounds: 2^27 45.49 -> 43.14 ms, 2^24 5.41 -> 5.10 ms (H100, 2026-12-07;
// BENCHMARKS).
bool untwisted_ntt() {
    static const bool on = env_word("CUZK_NTT_UNTWIST", {"0", "1"}) != 0 && natural_ntt();
    return on;
}

// The stages of a 2^log_n transform's last DIF pass when that pass takes PASS_IO_UNTWIST (`on`, and at least
// UNTWIST_MIN_STAGES of them), else 0.
uint32_t untwist_stages(uint32_t log_n, bool on) {
    if (!on || log_n == 0) return 0;
    const uint32_t last_k = pass_split(log_n).back();
    return last_k >= UNTWIST_MIN_STAGES ? last_k : 0;
}

// All DIF (natural -> bit-reversed) or DIT (bit-reversed -> natural) stages, in passes. With io (DIF, fused_h), the
// first pass's loads take first_io's steps and the last pass's stores last_io's. after_twist (DIT): the stages after
// a PASS_IO_TWIST pass, which ran the first k of them, k the DIF split's last pass; the rest take that split's other
// passes in reverse order. With scratch (DIF, natural_ntt; batch x 2^log_n scalars, unused for one pass) the
// transform ends in natural order in data: its first pass stores into scratch (PASS_IO_OUT), the middle ones run
// there, and the last stores into data at the bit reversals (PASS_IO_BITREV; a lone pass does that in place, its
// block holding the whole transform), scaling as it stores with last_io = PASS_IO_SCALE (io's tables: the inverse
// transform's n^-1 and coset powers) or PASS_IO_HALVE (n^-1 alone).
cuzk_status run_passes(bool dit, fr_t* data, uint32_t log_n, uint32_t batch, const fr_t* tw, cudaStream_t stream,
                       const PassIo* io = nullptr, uint32_t first_io = PASS_IO_NONE, uint32_t last_io = PASS_IO_NONE,
                       bool after_twist = false, fr_t* scratch = nullptr) {
    if (log_n == 0) return status_ok();
    constexpr uint32_t READS_IO = PASS_IO_MUL | PASS_IO_SCALE | PASS_IO_SUB | PASS_IO_TWIST | PASS_IO_UNTWIST;
    if (!io && ((first_io | last_io) & READS_IO)) return status_msg(1, "run_passes: these steps need io's vectors");
    if (scratch && (dit || after_twist || first_io || (last_io & ~(PASS_IO_SCALE | PASS_IO_UNTWIST | PASS_IO_HALVE))))
        return status_msg(1, "run_passes: a natural-order output is DIF's, with no steps but the last pass's scaling");
    if (scratch == data && pass_split(log_n).size() > 1)
        return status_msg(1, "run_passes: a natural-order output in place needs a single pass");
    fr_t* const in = data;
    std::vector<uint32_t> ks = pass_split(log_n);
    uint32_t done = 0;
    if (after_twist) {
        if (!dit) return status_msg(1, "run_passes: the stages after a twisted pass are DIT");
        done = ks.back();
        ks.pop_back();
        std::reverse(ks.begin(), ks.end());
    }
    const uint32_t passes = (uint32_t)ks.size();
    const PassIo given = io ? *io : PassIo{};  // the passes' copy; the scratch path sets its out, per pass
    for (uint32_t p = 0; p < passes; p++) {
        const PassPlan plan = plan_pass(dit, log_n, ks[p], done, pass_threads());
        const PassShape& ps = plan.ps;
        const uint32_t threads = plan.threads;
        size_t shmem = plan.shmem;
        const dim3 grid(1u << (log_n - plan.log_e), batch);
        uint32_t io_steps = (p == 0 ? first_io : 0) | (p + 1 == passes ? last_io : 0);
        PassIo pio = given;
        if (scratch) {
            // The pass's source and where its stores go.
            data = p == 0 ? in : scratch;
            pio.out = p + 1 == passes ? in : scratch;
            io_steps = p + 1 == passes ? PASS_IO_BITREV | last_io : p == 0 ? PASS_IO_OUT : PASS_IO_NONE;
        }
        cudaError_t err;
        if (io_steps) {
            if (!io_passes_built(dit) || (dit && io_steps != PASS_IO_HALVE))
                return status_msg(1, "run_passes: pointwise steps in a pass need the f64 form, the swizzled layout and "
                                     "DIF (DIT: PASS_IO_HALVE alone)");
            if (io_steps & PASS_IO_TWIST) shmem += twist_smem(ps.log_ghigh);
            if ((io_steps & PASS_IO_UNTWIST) && (!ps.last || ps.k < UNTWIST_MIN_STAGES))
                return status_msg(1, "run_passes: PASS_IO_UNTWIST is the last pass's, of 3 stages or more");
            if (io_steps & PASS_IO_UNTWIST) shmem += untwist_smem(ps.log_ghigh);
            switch (io_steps) {
                case PASS_IO_TWIST: err = launch_io_pass<PASS_IO_TWIST>(grid, threads, shmem, stream, data, log_n, ps, tw, pio); break;
                case PASS_IO_MUL: err = launch_io_pass<PASS_IO_MUL>(grid, threads, shmem, stream, data, log_n, ps, tw, pio); break;
                case PASS_IO_SCALE: err = launch_io_pass<PASS_IO_SCALE>(grid, threads, shmem, stream, data, log_n, ps, tw, pio); break;
                case PASS_IO_SCALE | PASS_IO_SUB: err = launch_io_pass<PASS_IO_SCALE | PASS_IO_SUB>(grid, threads, shmem, stream, data, log_n, ps, tw, pio); break;
                case PASS_IO_MUL | PASS_IO_SCALE | PASS_IO_SUB: err = launch_io_pass<PASS_IO_MUL | PASS_IO_SCALE | PASS_IO_SUB>(grid, threads, shmem, stream, data, log_n, ps, tw, pio); break;
                case PASS_IO_SCALE | PASS_IO_SUB | PASS_IO_BITREV: err = launch_io_pass<PASS_IO_SCALE | PASS_IO_SUB | PASS_IO_BITREV>(grid, threads, shmem, stream, data, log_n, ps, tw, pio); break;
                case PASS_IO_MUL | PASS_IO_SCALE | PASS_IO_SUB | PASS_IO_BITREV: err = launch_io_pass<PASS_IO_MUL | PASS_IO_SCALE | PASS_IO_SUB | PASS_IO_BITREV>(grid, threads, shmem, stream, data, log_n, ps, tw, pio); break;
                case PASS_IO_SCALE | PASS_IO_SUB | PASS_IO_UNTWIST: err = launch_io_pass<PASS_IO_SCALE | PASS_IO_SUB | PASS_IO_UNTWIST>(grid, threads, shmem, stream, data, log_n, ps, tw, pio); break;
                case PASS_IO_MUL | PASS_IO_SCALE | PASS_IO_SUB | PASS_IO_UNTWIST: err = launch_io_pass<PASS_IO_MUL | PASS_IO_SCALE | PASS_IO_SUB | PASS_IO_UNTWIST>(grid, threads, shmem, stream, data, log_n, ps, tw, pio); break;
                case PASS_IO_SCALE | PASS_IO_SUB | PASS_IO_BITREV | PASS_IO_UNTWIST: err = launch_io_pass<PASS_IO_SCALE | PASS_IO_SUB | PASS_IO_BITREV | PASS_IO_UNTWIST>(grid, threads, shmem, stream, data, log_n, ps, tw, pio); break;
                case PASS_IO_MUL | PASS_IO_SCALE | PASS_IO_SUB | PASS_IO_BITREV | PASS_IO_UNTWIST: err = launch_io_pass<PASS_IO_MUL | PASS_IO_SCALE | PASS_IO_SUB | PASS_IO_BITREV | PASS_IO_UNTWIST>(grid, threads, shmem, stream, data, log_n, ps, tw, pio); break;
                case PASS_IO_OUT: err = launch_io_pass<PASS_IO_OUT>(grid, threads, shmem, stream, data, log_n, ps, tw, pio); break;
                case PASS_IO_BITREV: err = launch_io_pass<PASS_IO_BITREV>(grid, threads, shmem, stream, data, log_n, ps, tw, pio); break;
                case PASS_IO_SCALE | PASS_IO_BITREV: err = launch_io_pass<PASS_IO_SCALE | PASS_IO_BITREV>(grid, threads, shmem, stream, data, log_n, ps, tw, pio); break;
                case PASS_IO_SCALE | PASS_IO_UNTWIST: err = launch_io_pass<PASS_IO_SCALE | PASS_IO_UNTWIST>(grid, threads, shmem, stream, data, log_n, ps, tw, pio); break;
                case PASS_IO_SCALE | PASS_IO_BITREV | PASS_IO_UNTWIST: err = launch_io_pass<PASS_IO_SCALE | PASS_IO_BITREV | PASS_IO_UNTWIST>(grid, threads, shmem, stream, data, log_n, ps, tw, pio); break;
                case PASS_IO_HALVE:
                    err = dit ? launch_io_pass<PASS_IO_HALVE, true>(grid, threads, shmem, stream, data, log_n, ps, tw, pio)
                              : launch_io_pass<PASS_IO_HALVE>(grid, threads, shmem, stream, data, log_n, ps, tw, pio);
                    break;
                case PASS_IO_HALVE | PASS_IO_BITREV: err = launch_io_pass<PASS_IO_HALVE | PASS_IO_BITREV>(grid, threads, shmem, stream, data, log_n, ps, tw, pio); break;
                default: return status_msg(1, "run_passes: no pass is built for these pointwise steps");
            }
            CUZK_TRY(err);
            CUZK_TRY_LAUNCH("ntt_pass (pointwise steps)");
            done += ps.k;
            continue;
        }
        switch (mul_form(dit)) {
            case MulForm::Chains: err = launch_pass<MulForm::Chains>(dit, grid, threads, shmem, stream, data, log_n, ps, tw); break;
            case MulForm::Fold: err = launch_pass<MulForm::Fold>(dit, grid, threads, shmem, stream, data, log_n, ps, tw); break;
            case MulForm::Float64: err = launch_pass<MulForm::Float64>(dit, grid, threads, shmem, stream, data, log_n, ps, tw); break;
            case MulForm::Hybrid: err = launch_pass<MulForm::Hybrid>(dit, grid, threads, shmem, stream, data, log_n, ps, tw); break;
            case MulForm::Hybrid3: err = launch_pass<MulForm::Hybrid3>(dit, grid, threads, shmem, stream, data, log_n, ps, tw); break;
            default: err = launch_pass<MulForm::Unsaturated>(dit, grid, threads, shmem, stream, data, log_n, ps, tw);
        }
        CUZK_TRY(err);
        CUZK_TRY_LAUNCH("ntt_pass");
        done += ps.k;
    }
    return status_ok();
}

__global__ void bit_reverse_kernel(fr_t* data, uint32_t log_n) {
    data += (uint64_t)blockIdx.y << log_n;
    uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= (1u << log_n)) return;
    uint32_t j = bitrev(i, log_n);
    if (i < j) {
        fr_t a = load(&data[i]), b = load(&data[j]);
        store(&data[i], b);
        store(&data[j], a);
    }
}

// Bit reversal by tiles, for log_n >= 2 * TILE_BITS. Write an index as (a, mid, b) with a and b of TILE_BITS bits;
// bitrev(a, mid, b) = (rev b, rev mid, rev a). A block owns the tiles of mid and of rev(mid) (mid <= rev mid), reads
// each as rows of 2^TILE_BITS consecutive scalars, and writes each into the other's place, again by whole rows: every
// global access is a run of 2^TILE_BITS scalars (512 bytes) where the scalar-by-scalar swap makes scattered 32-byte
// accesses. Shared memory holds the two tiles as two planes of 16-byte halves, rows padded by one entry, so a warp
// reading a column touches distinct banks.
constexpr uint32_t TILE_BITS = 4, TILE = 1u << TILE_BITS;

__global__ void bit_reverse_tiles(fr_t* data, uint32_t log_n) {
    __shared__ uint4 sh[2][2][TILE][TILE + 1];  // [tile][half][row][column]
    data += (uint64_t)blockIdx.y << log_n;
    const uint32_t mid_bits = log_n - 2 * TILE_BITS;
    const uint32_t mid = blockIdx.x, rmid = bitrev(mid, mid_bits);
    if (mid > rmid) return;
    const uint32_t r = threadIdx.x / TILE, c = threadIdx.x % TILE;
    auto at = [&](uint32_t row, uint32_t m, uint32_t col) -> uint4* {
        return reinterpret_cast<uint4*>(&data[((uint64_t)row << (log_n - TILE_BITS)) | ((uint64_t)m << TILE_BITS) | col]);
    };
    const bool pair = mid != rmid;
    {
        const uint4* p = at(r, mid, c);
        sh[0][0][r][c] = p[0];
        sh[0][1][r][c] = p[1];
    }
    if (pair) {
        const uint4* p = at(r, rmid, c);
        sh[1][0][r][c] = p[0];
        sh[1][1][r][c] = p[1];
    }
    __syncthreads();
    // Row r, column c of a destination tile holds the other tile's (rev c, rev r); a tile alone is its own other.
    const uint32_t rr = bitrev(r, TILE_BITS), rc = bitrev(c, TILE_BITS);
    {
        uint4* p = at(r, mid, c);
        p[0] = sh[pair][0][rc][rr];
        p[1] = sh[pair][1][rc][rr];
    }
    if (pair) {
        uint4* p = at(r, rmid, c);
        p[0] = sh[0][0][rc][rr];
        p[1] = sh[0][1][rc][rr];
    }
}

cuzk_status bit_reverse(fr_t* data, uint32_t log_n, uint32_t batch, cudaStream_t stream) {
    if (log_n >= 2 * TILE_BITS) {
        bit_reverse_tiles<<<dim3(1u << (log_n - 2 * TILE_BITS), batch), TILE * TILE, 0, stream>>>(data, log_n);
        CUZK_TRY_LAUNCH("bit_reverse_tiles");
        return status_ok();
    }
    uint32_t n = 1u << log_n, threads = std::min(256u, n);
    bit_reverse_kernel<<<dim3((n + threads - 1) / threads, batch), threads, 0, stream>>>(data, log_n);
    CUZK_TRY_LAUNCH("bit_reverse_kernel");
    return status_ok();
}

// data[j] *= c * g^idx(j), idx(j) = j or bitrev(j); c * g^i = lo[i & mask] * hi[i >> COSET_LO_BITS] (c is folded into
// hi). Without tables, data[j] *= c.
__global__ void scale_kernel(fr_t* data, uint32_t log_n, fr_t c, const fr_t* lo, const fr_t* hi, bool reversed) {
    data += (uint64_t)blockIdx.y << log_n;
    uint32_t j = blockIdx.x * blockDim.x + threadIdx.x;
    if (j >= (1u << log_n)) return;
    fr_t f = c;
    if (lo) {
        uint32_t i = reversed ? bitrev(j, log_n) : j;
        f = fr_mul(lo[i & ((1u << COSET_LO_BITS) - 1)], hi[i >> COSET_LO_BITS]);
    }
    store(&data[j], fr_mul(load(&data[j]), f));
}

// Power tables of a coset generator (or its inverse): the domain's own (coset_tables), or stream-ordered scratch that
// goes with the struct (stream set).
struct CosetTables {
    fr_t* lo = nullptr;
    fr_t* hi = nullptr;
    fr_t* twist = nullptr;  // twist_table_kernel's or untwist_table_kernel's, when asked for
    cudaStream_t stream = nullptr;
    ~CosetTables() {
        if (stream && lo) cudaFreeAsync(lo, stream);
    }
};

// *dst = *a * *b (one thread).
__global__ void mul_one(fr_t* dst, const fr_t* a, const fr_t* b) { *dst = fr_mul(*a, *b); }

// A coset's tables in one allocation of coset_table_scalars: lo (2^COSET_LO_BITS), hi (coset_hi_len), five scalars for
// the constants (write_coset_tables), then the twisted twiddles (2^twist_k - 1, none without twist_k).
uint64_t coset_hi_len(uint32_t log_n) { return std::max<uint64_t>(1, (1ull << log_n) >> COSET_LO_BITS); }
uint64_t coset_table_scalars(uint32_t log_n, uint32_t twist_k) {
    return (1ull << COSET_LO_BITS) + coset_hi_len(log_n) + 5 + (twist_k ? (1ull << twist_k) - 1 : 0);
}
// Points t at the tables laid out in mem.
void point_coset_tables(CosetTables& t, fr_t* mem, uint32_t log_n, uint32_t twist_k) {
    t.lo = mem;
    t.hi = mem + (1ull << COSET_LO_BITS);
    t.twist = twist_k ? t.hi + coset_hi_len(log_n) + 5 : nullptr;
}

// Writes key's tables into mem (coset_table_scalars of them) on stream and points t at them:
// lo[i] = g^i (i < 2^COSET_LO_BITS), hi[i] = c * g^(i * 2^COSET_LO_BITS) (i < max(1, n / 2^COSET_LO_BITS)); g inverted
// first if asked; c times c2 when c2 is given. With twist_k (1 .. log_n), also the twisted twiddles of a forward DIT
// pass of twist_k stages on this coset (twist_table_kernel), from the domain's forward table tw; with untwist, those
// of the last DIF pass of twist_k stages of a transform to this coset's coefficients (untwist_table_kernel), from the
// domain's inverse table tw.
cuzk_status write_coset_tables(fr_t* mem, uint32_t log_n, const CosetKey& key, cudaStream_t stream, CosetTables& t) {
    const uint64_t lo_n = 1ull << COSET_LO_BITS, hi_n = coset_hi_len(log_n);
    point_coset_tables(t, mem, log_n, key.twist_k);
    fr_t* g_raw = t.hi + hi_n;
    fr_t* g = g_raw + 1;
    fr_t* g_step = g_raw + 2;
    fr_t* c = g_raw + 3;
    // Copies from pageable memory return once the source has been read, so the key may be a temporary.
    CUZK_TRY(cudaMemcpyAsync(g_raw, &key.g, sizeof(fr_t), cudaMemcpyHostToDevice, stream));
    CUZK_TRY(cudaMemcpyAsync(c, &key.c, sizeof(fr_t), cudaMemcpyHostToDevice, stream));
    if (key.has_c2) {
        fr_t* c2 = g_raw + 4;
        CUZK_TRY(cudaMemcpyAsync(c2, &key.c2, sizeof(fr_t), cudaMemcpyHostToDevice, stream));
        mul_one<<<1, 1, 0, stream>>>(c, c, c2);
        CUZK_TRY_LAUNCH("mul_one");
    }
    pow_one<<<1, 1, 0, stream>>>(g, g_raw, 1, key.invert);
    CUZK_TRY_LAUNCH("pow_one");
    pow_one<<<1, 1, 0, stream>>>(g_step, g, 1ull << COSET_LO_BITS, false);
    CUZK_TRY_LAUNCH("pow_one");
    cuzk_status s = fill_powers(t.lo, lo_n, g, stream);
    if (s.code) return s;
    if (key.twist_k) {
        const uint64_t twist_n = (1ull << key.twist_k) - 1;
        const uint32_t threads = 256;
        const uint32_t blocks = (uint32_t)((twist_n + threads - 1) / threads);
        if (key.untwist) {
            untwist_table_kernel<<<blocks, threads, 0, stream>>>(t.twist, key.twist_k, log_n, key.tw, g);
            CUZK_TRY_LAUNCH("untwist_table_kernel");
        } else {
            twist_table_kernel<<<blocks, threads, 0, stream>>>(t.twist, key.twist_k, log_n, key.tw, g);
            CUZK_TRY_LAUNCH("twist_table_kernel");
        }
    }
    return fill_powers(t.hi, hi_n, g_step, stream, c);
}

// Whether a domain keeps the coset tables it makes (coset_tables), unless CUZK_NTT_COSET_CACHE=0 asks for them to be
// made on every call (an A/B switch).
bool coset_cache_enabled() {
    static const bool on = env_word("CUZK_NTT_COSET_CACHE", {"0", "1"}) != 0;
    return on;
}
// The most coset tables a domain keeps: H takes two sets (its coset's and the inverse's), a transform on a coset one
// for each coset and direction. Each takes (2^12 + n / 2^12 + 1k) scalars: 1.2 MiB at 2^27.
constexpr size_t COSET_CACHE_MAX = 8;

// The tables of the coset g<w> of domain d (see write_coset_tables), on stream. A domain keeps the first
// COSET_CACHE_MAX sets it makes, so that a later call with the same arguments only waits for them to be written: their
// single-thread exponentiations and inversion, and their power chains, cost a fixed 0.36 ms. Against tables made on
// every call (two rounds): the inverse NTT on a coset 2^20 0.667 -> 0.311 ms, 2^24 5.09 -> 4.73 ms; H 2^20 2.01 -> 1.57
// ms, 2^24 28.36 -> 27.91 ms, 2^27 the same within its spread (H100, 2026-12-07; BENCHMARKS). Past that, or without
// device memory for them, each call makes its own in stream-ordered scratch.
cuzk_status coset_tables(const cuzk_ntt_domain* d, CosetTables& t, const fr_t& g, bool invert, const fr_t& c,
                         cudaStream_t stream, const fr_t* c2 = nullptr, uint32_t twist_k = 0, const fr_t* tw = nullptr,
                         bool untwist = false) {
    const CosetKey key{g, c, c2 ? *c2 : fr_t{}, twist_k ? tw : nullptr, twist_k, invert, c2 != nullptr,
                       twist_k != 0 && untwist};
    const uint64_t bytes = coset_table_scalars(d->log_n, twist_k) * sizeof(fr_t);
    if (coset_cache_enabled()) {
        std::lock_guard<std::mutex> lock(d->coset_mu);
        for (const CosetEntry& e : d->cosets) {
            if (e.key == key) {
                point_coset_tables(t, e.mem, d->log_n, twist_k);
                CUZK_TRY(cudaStreamWaitEvent(stream, e.ready, 0));
                return status_ok();
            }
        }
        CosetEntry e{key, nullptr, nullptr};
        if (d->cosets.size() < COSET_CACHE_MAX) {
            if (malloc_or_trim((void**)&e.mem, bytes) == cudaSuccess) {
                cuzk_status s = write_coset_tables(e.mem, d->log_n, key, stream, t);
                cudaError_t err = s.code ? cudaSuccess : cudaEventCreateWithFlags(&e.ready, cudaEventDisableTiming);
                if (!s.code && err == cudaSuccess) err = cudaEventRecord(e.ready, stream);
                if (!s.code && err == cudaSuccess) {
                    d->cosets.push_back(e);
                    return status_ok();
                }
                if (e.ready) cudaEventDestroy(e.ready);
                cudaFree(e.mem);  // waits for the work queued on it
                t.lo = t.hi = t.twist = nullptr;
                return s.code ? s : status_from(err, "keeping a coset's tables");
            }
            cudaGetLastError();  // no device memory to keep them: this call's own tables, below
        }
    }
    CUZK_TRY(pool_malloc_async((void**)&t.lo, bytes, stream));
    t.stream = stream;
    return write_coset_tables(t.lo, d->log_n, key, stream, t);
}

cuzk_status scale(fr_t* data, uint32_t log_n, uint32_t batch, const fr_t& c, const CosetTables* tables, bool reversed,
                  cudaStream_t stream) {
    uint32_t n = 1u << log_n, threads = std::min(256u, n);
    scale_kernel<<<dim3((n + threads - 1) / threads, batch), threads, 0, stream>>>(
        data, log_n, c, tables ? tables->lo : nullptr, tables ? tables->hi : nullptr, reversed);
    CUZK_TRY_LAUNCH("scale_kernel");
    return status_ok();
}

// a = a * b (on the coset: c's part of H is subtracted after the inverse transform, see cuzk_h_poly). This kernel and
// coset_scale_sub_kernel serve H when its steps are not fused into the passes (fused_h); PASS_IO_MUL and PASS_IO_SUB
// do the same inside them.
__global__ void ab_kernel(fr_t* a, const fr_t* b, uint64_t n) {
    uint64_t i = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    store(&a[i], fr_mul(load(&a[i]), load(&b[i])));
}

// H's last pass, both vectors in bit-reversed order: data[j] = data[j] k g^-bitrev(j) - sub[j] k, where the tables
// hold k g^-i (hi[0] = k, lo[0] = 1) and k = n^-1 Z(g)^-1.
__global__ void coset_scale_sub_kernel(fr_t* data, const fr_t* sub, uint32_t log_n, const fr_t* lo, const fr_t* hi) {
    uint32_t j = blockIdx.x * blockDim.x + threadIdx.x;
    if (j >= (1u << log_n)) return;
    uint32_t i = bitrev(j, log_n);
    fr_t f = fr_mul(lo[i & ((1u << COSET_LO_BITS) - 1)], hi[i >> COSET_LO_BITS]);
    store(&data[j], fr_sub(fr_mul(load(&data[j]), f), fr_mul(load(&sub[j]), hi[0])));
}


// The DIF passes from natural order with last_io's steps on the last pass's stores (io's tables), to natural order
// unless out_rev (natural_ntt): out of place through a scratch vector, stream-ordered from the pool, or in place where
// one pass holds the transform; a card that cannot hold the scratch takes the passes in place and a bit reversal.
cuzk_status dif_from_natural(fr_t* data, uint32_t log_n, uint32_t batch, const fr_t* tw, cudaStream_t stream,
                             const PassIo* io, uint32_t last_io, bool out_rev) {
    if (out_rev) return run_passes(false, data, log_n, batch, tw, stream, io, PASS_IO_NONE, last_io);
    if (pass_split(log_n).size() == 1)
        return run_passes(false, data, log_n, batch, tw, stream, io, PASS_IO_NONE, last_io, false, data);
    fr_t* scratch = nullptr;
    if (pool_malloc_async((void**)&scratch, sizeof(fr_t) * ((size_t)batch << log_n), stream) == cudaSuccess) {
        const cuzk_status st =
            run_passes(false, data, log_n, batch, tw, stream, io, PASS_IO_NONE, last_io, false, scratch);
        const cudaError_t freed = cudaFreeAsync(scratch, stream);
        if (st.code != 0) return st;
        CUZK_TRY(freed);
        return status_ok();
    }
    cudaGetLastError();  // out of memory
    static std::atomic<bool> told{false};
    if (!told.exchange(true)) {
        fprintf(stderr,
                "cuzk: note: no device memory for an NTT's %zu-byte scratch vector; natural-order transforms run in "
                "place and bit-reverse (slower, same results)\n",
                sizeof(fr_t) * ((size_t)batch << log_n));
    }
    CUZK_CHECK(run_passes(false, data, log_n, batch, tw, stream, io, PASS_IO_NONE, last_io));
    return bit_reverse(data, log_n, batch, stream);
}

// The general transform: see ntt.h.
cuzk_status ntt(const cuzk_ntt_domain* d, fr_t* data, uint32_t batch, bool inverse, bool in_rev, bool out_rev,
                const fr_t* coset, cudaStream_t stream) {
    const uint32_t log_n = d->log_n;
    if (!inverse) {
        if (coset) {
            CosetTables t;
            CUZK_CHECK(coset_tables(d, t, *coset, false, fr_one(), stream));
            CUZK_CHECK(scale(data, log_n, batch, fr_one(), &t, in_rev, stream));
        }
        // DIF takes natural order to bit-reversed; DIT bit-reversed to natural. Natural to natural: out of place
        // through a scratch vector, in place of the bit reversal's read and write of the vector (natural_ntt).
        if (!in_rev && !out_rev && log_n > 0 && natural_ntt())
            return dif_from_natural(data, log_n, batch, d->tw_fwd, stream, nullptr, PASS_IO_NONE, false);
        CUZK_CHECK(run_passes(in_rev, data, log_n, batch, d->tw_fwd, stream));
        bool now_rev = !in_rev;
        if (now_rev != out_rev) CUZK_CHECK(bit_reverse(data, log_n, batch, stream));
        return status_ok();
    }
    // From natural order (DIF, natural_ntt): the scaling in the last pass's stores, by n^-1 = 2^-log_n without a
    // product off a coset (PASS_IO_HALVE), by n^-1 g^-i from the coset tables on one (PASS_IO_SCALE), and to natural
    // order out of place as above, in place of a scaling sweep and a bit reversal: 2^27 47.04 -> 41.35 ms, 2^24 5.37
    // -> 4.66 ms (H100, 2026-12-06, two rounds against CUZK_NTT_BITREV=0; BENCHMARKS).
    // On a coset the last pass takes the factor's part owned by its stages in its twiddles (untwisted_ntt).
    if (!in_rev && log_n > 0 && natural_ntt()) {
        CosetTables t;
        PassIo io{};
        uint32_t steps = PASS_IO_HALVE;
        if (coset) {
            const uint32_t untwist_k = untwist_stages(log_n, untwisted_ntt());
            CUZK_CHECK(coset_tables(d, t, *coset, true, d->n_inv, stream, nullptr, untwist_k, d->tw_inv, true));
            io.lo = t.lo;
            io.hi = t.hi;
            io.twist = t.twist;
            steps = PASS_IO_SCALE | (untwist_k ? PASS_IO_UNTWIST : 0);
        }
        return dif_from_natural(data, log_n, batch, d->tw_inv, stream, &io, steps, out_rev);
    }
    // From bit-reversed order off a coset (DIT): n^-1 in the last pass's stores too (PASS_IO_HALVE), in place of the
    // scaling sweep: 2^27 45.25 -> 42.37 ms, 2^24 5.06 -> 4.70 ms (H100, 2026-12-06, two rounds against
    // CUZK_NTT_BITREV=0; BENCHMARKS).
    if (in_rev && !coset && log_n > 0 && natural_ntt() && io_passes_built(true)) {
        CUZK_CHECK(run_passes(true, data, log_n, batch, d->tw_inv, stream, nullptr, PASS_IO_NONE, PASS_IO_HALVE));
        if (out_rev) CUZK_CHECK(bit_reverse(data, log_n, batch, stream));
        return status_ok();
    }
    CUZK_CHECK(run_passes(in_rev, data, log_n, batch, d->tw_inv, stream));
    bool now_rev = !in_rev;
    if (coset) {
        CosetTables t;
        CUZK_CHECK(coset_tables(d, t, *coset, true, d->n_inv, stream));
        CUZK_CHECK(scale(data, log_n, batch, d->n_inv, &t, now_rev, stream));
    } else {
        CUZK_CHECK(scale(data, log_n, batch, d->n_inv, nullptr, false, stream));
    }
    if (now_rev != out_rev) CUZK_CHECK(bit_reverse(data, log_n, batch, stream));
    return status_ok();
}

// The field operations of ntt-cuda's FrOp, one element each (fr_test_ops.cuh, shared with the host emulation test).
__global__ void fr_test_kernel(int op, const fr_t* a, const fr_t* b, fr_t* out, size_t n) {
    size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    out[i] = fr_test_op(op, a[i], b[i], i);
}

__global__ void copy_kernel(const uint4* __restrict__ src, uint4* __restrict__ dst, size_t n) {
    size_t stride = (size_t)gridDim.x * blockDim.x;
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) dst[i] = src[i];
}

// Two independent chains of scalar-field products per thread, in form F, as the butterflies take it (lazy in a lazy
// form: x below 2p, y below p).
template <MulForm F>
__global__ void fr_mul_chain_kernel(fr_t* out, uint32_t seed, int iters) {
    fr_t x = fr_one(), z = fr_one(), y = fr_one();
    x.l[0] ^= seed + threadIdx.x;
    z.l[1] ^= seed * 3 + threadIdx.x;
    y.l[2] ^= blockIdx.x;
    for (int i = 0; i < iters; i++) {
        x = form_mul<round_form<F, 0>(), lazy_form<F>()>(x, y);
        z = form_mul<round_form<F, 1>(), lazy_form<F>()>(z, y);
    }
    if (fr_is_zero(x) || fr_is_zero(z)) out[0] = x;  // keeps the chains alive; practically never taken
}

// 8 independent chains of mad.lo.u32 per thread, 1024 rounds: 8192 IMADs per thread. The multiplier and addend come
// from the launch so nothing folds at compile time; volatile asm keeps every instruction.
__global__ void imad_kernel(uint32_t* out, uint32_t seed, uint32_t mul, uint32_t add) {
    uint32_t x[8];
#pragma unroll
    for (int i = 0; i < 8; i++) x[i] = seed + threadIdx.x + i;
    for (int r = 0; r < 1024; r++) {
#pragma unroll
        for (int i = 0; i < 8; i++) asm volatile("mad.lo.u32 %0, %0, %1, %2;" : "+r"(x[i]) : "r"(mul), "r"(add));
    }
    uint32_t acc = 0;
#pragma unroll
    for (int i = 0; i < 8; i++) acc ^= x[i];
    if (acc == 0x12345678u) out[0] = acc;  // keeps the work alive
}

// Sparse rows times a vector (a, b and c from a witness): one thread per row for its first SPMV_OWN terms, then the
// rows that have more, one at a time, by the whole warp (32 terms at a time, summed across the warp by shuffles).
// Column k's value is values[k - rotate] for k >= rotate and values[k + (columns - rotate)] below it: the values
// buffer holds the columns from `rotate` on, then the first `rotate` (Groth16's aux first, then the inputs, so the
// aux scalars the MSMs read are the buffer's start). Slot 0 of the table is one and slot 1 minus one: added and
// subtracted without a product. Rows from `rows` to `out_len` are zero (the domain's padding).
// A thread walking its whole row made a warp wait for its longest row: a PoRep-like A matrix (rows of 1, 2 and 47
// terms) took 4.32 ms at 2^24 rows, reading DRAM at 214 GB/s (H200, ncu, 2026-12-04).
constexpr uint32_t SPMV_OWN = 4;

// The terms a thread sums alone: SPMV_OWN, or CUZK_SPMV_OWN=N (read once; 1 and up, a large N is the thread-per-row
// kernel before the warps shared long rows), an A/B switch.
uint32_t spmv_own() {
    static const uint32_t own = env_u32("CUZK_SPMV_OWN", 1, 0xffffffffu, SPMV_OWN);
    return own;
}

__device__ __forceinline__ fr_t spmv_term(fr_t acc, uint32_t k, const uint32_t* __restrict__ cols,
                                          const uint32_t* __restrict__ slots, const fr_t* __restrict__ table,
                                          const fr_t* __restrict__ values, uint32_t columns, uint32_t rotate) {
    const uint32_t col = cols[k];
    const fr_t v = load(&values[col >= rotate ? col - rotate : col + (columns - rotate)]);
    const uint32_t slot = slots[k];
    if (slot == 0) return fr_add(acc, v);
    if (slot == 1) return fr_sub(acc, v);
    return fr_add(acc, fr_mul(v, table[slot]));
}

__global__ void spmv_kernel(const uint32_t* __restrict__ row_ptr, const uint32_t* __restrict__ cols,
                            const uint32_t* __restrict__ slots, const fr_t* __restrict__ table, uint32_t rows,
                            const fr_t* __restrict__ values, uint32_t columns, uint32_t rotate,
                            fr_t* __restrict__ out, uint64_t out_len, uint32_t own_terms) {
    // No early return: every lane of a warp takes part in its long rows' shuffles.
    const uint64_t r = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x;
    const uint32_t lane = threadIdx.x & 31;
    fr_t acc = fr_zero();
    uint32_t k = 0, end = 0;
    if (r < rows) {
        k = row_ptr[r];
        end = row_ptr[r + 1];
    }
    for (const uint32_t own = end - k > own_terms ? k + own_terms : end; k < own; k++)
        acc = spmv_term(acc, k, cols, slots, table, values, columns, rotate);
    for (uint32_t longer = __ballot_sync(0xffffffffu, k < end); longer; longer &= longer - 1) {
        const int owner = __ffs(longer) - 1;
        const uint32_t from = __shfl_sync(0xffffffffu, k, owner), to = __shfl_sync(0xffffffffu, end, owner);
        fr_t part = fr_zero();
        for (uint32_t j = from + lane; j < to; j += 32)
            part = spmv_term(part, j, cols, slots, table, values, columns, rotate);
#pragma unroll
        for (int o = 16; o > 0; o >>= 1) {
            fr_t other;
#pragma unroll
            for (int i = 0; i < 8; i++) other.l[i] = __shfl_xor_sync(0xffffffffu, part.l[i], o);
            part = fr_add(part, other);
        }
        if ((int)lane == owner) acc = fr_add(acc, part);
    }
    if (r < out_len) store(&out[r], acc);
}

// ---------------------------------------------------------------------------------------------------------------
// Device buffers (cuzk_malloc, cuzk_free) come from cuzk's own memory pool on the device (device_mem.cuh: own_pool),
// allocated and freed in order on one stream per device, the pool keeping its memory mapped (see device_mem.cuh for
// why: cudaFree waits for every stream's queued work). A freed buffer is reused at once by the next allocation, of
// any stream: callers free only buffers with no work pending on them (every user synchronises its streams first, as
// before, when cudaFree did it for them). After a failure (any error status, or a panic unwinding on the Rust side)
// that is not guaranteed, so the next free on that device waits for the device's queued work first (status.cuh:
// take_unsettled).
// CUZK_DEVICE_POOL=off (read once) keeps cudaMalloc and cudaFree: an A/B switch, and the way back.
// CUZK_DEVICE_SETTLE=off skips the wait after failures: only for showing what it prevents (ntt-cuda's GPU test
// a_failure_settles_queued_work_before_its_buffers_are_reused fails with it).

struct PoolRegistry {
    std::mutex m;
    std::map<int, cudaStream_t> streams;       // per device; nullptr where the device has no pool
    std::unordered_map<void*, int> live;       // pool allocations not yet freed, and their devices
};

PoolRegistry& pool_registry() {
    static PoolRegistry* r = new PoolRegistry();  // never destroyed: frees may run during the process's exit
    return *r;
}

bool settle_enabled() {
    static const bool on = env_word("CUZK_DEVICE_SETTLE", {"off"}) != 0;
    return on;
}

bool pool_enabled() {
    static const bool on = env_word("CUZK_DEVICE_POOL", {"off"}) != 0;
    return on;
}

// The allocation stream of `device`, set up on first use (with the device's own_pool); false where the pool is
// switched off or the device has none.
bool pool_stream(int device, cudaStream_t* out) {
    if (!pool_enabled()) return false;
    PoolRegistry& r = pool_registry();
    std::lock_guard<std::mutex> lock(r.m);
    auto it = r.streams.find(device);
    if (it != r.streams.end()) {
        *out = it->second;
        return it->second != nullptr;
    }
    cudaStream_t s = nullptr;
    int current = 0;
    if (cudaGetDevice(&current) == cudaSuccess && own_pool(device)) {
        if (current != device) cudaSetDevice(device);
        if (cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking) != cudaSuccess) s = nullptr;
        if (current != device) cudaSetDevice(current);
    }
    cudaGetLastError();
    r.streams[device] = s;
    *out = s;
    return s != nullptr;
}

}  // namespace

extern "C" {

cuzk_status cuzk_device_count(int* count) {
    cudaError_t e = cudaGetDeviceCount(count);
    if (e != cudaSuccess) {
        *count = 0;
        cudaGetLastError();
        return status_from(e, "cudaGetDeviceCount");
    }
    return status_ok();
}

cuzk_status cuzk_device_name(int device, char* name, size_t len) {
    cudaDeviceProp p;
    CUZK_TRY(cudaGetDeviceProperties(&p, device));
    snprintf(name, len, "%s (sm_%d%d, %d SMs, %zu MiB)", p.name, p.major, p.minor, p.multiProcessorCount,
             (size_t)(p.totalGlobalMem >> 20));
    return status_ok();
}

cuzk_status cuzk_set_device(int device) {
    CUZK_TRY(cudaSetDevice(device));
    return status_ok();
}

cuzk_status cuzk_get_device(int* device) {
    CUZK_TRY(cudaGetDevice(device));
    return status_ok();
}

cuzk_status cuzk_mem_get_info(size_t* free_bytes, size_t* total_bytes) {
    CUZK_TRY(cuzk::mem_get_info(free_bytes, total_bytes));
    return status_ok();
}

cuzk_status cuzk_malloc(void** ptr, size_t bytes) {
    cudaStream_t s = nullptr;
    int device = 0;
    CUZK_TRY(cudaGetDevice(&device));
    if (!pool_stream(device, &s)) {
        CUZK_TRY(malloc_or_trim(ptr, bytes));
        return status_ok();
    }
    cudaMemPool_t pool = own_pool(device);
    cudaError_t e = cudaMallocFromPoolAsync(ptr, bytes, pool, s);
    if (e == cudaErrorMemoryAllocation) {
        cudaGetLastError();
        pool_trim();
        e = cudaMallocFromPoolAsync(ptr, bytes, pool, s);
    }
    // Ready for every stream once the allocation stream has passed it.
    if (e == cudaSuccess) e = cudaStreamSynchronize(s);
    if (e != cudaSuccess) return status_from(e, "allocating device memory from the pool");
    std::lock_guard<std::mutex> lock(pool_registry().m);
    pool_registry().live[*ptr] = device;
    return status_ok();
}

cuzk_status cuzk_free(void* ptr) {
    if (!ptr) return status_ok();
    int device = -1;
    {
        std::lock_guard<std::mutex> lock(pool_registry().m);
        auto it = pool_registry().live.find(ptr);
        if (it != pool_registry().live.end()) {
            device = it->second;
            pool_registry().live.erase(it);
        }
    }
    if (device < 0) {
        CUZK_TRY(cudaFree(ptr));
        return status_ok();
    }
    // The pool's stream of the allocation's device, made current for the call.
    int current = 0;
    CUZK_TRY(cudaGetDevice(&current));
    cudaStream_t s = nullptr;
    pool_stream(device, &s);
    if (current != device) CUZK_TRY(cudaSetDevice(device));
    if (take_unsettled(device) && settle_enabled()) {
        // A failure may have left work queued on this buffer (see above): let the device drain first. Its own
        // error, if any, was reported where it happened.
        cudaDeviceSynchronize();
        cudaGetLastError();
    }
    cudaError_t e = cudaFreeAsync(ptr, s);
    if (current != device) cudaSetDevice(current);
    if (e != cudaSuccess) return status_from(e, "returning device memory to the pool");
    return status_ok();
}

cuzk_status cuzk_mark_unsettled(void) {
    mark_all_unsettled();
    return status_ok();
}

cuzk_status cuzk_device_pool_trim(void) {
    pool_trim();
    return status_ok();
}

cuzk_status cuzk_host_alloc_pinned(void** ptr, size_t bytes) {
    // Portable: pinned for every device's context, so one process's buffers serve uploads to any of its GPUs.
    CUZK_TRY(cudaHostAlloc(ptr, bytes, cudaHostAllocPortable));
    return status_ok();
}

cuzk_status cuzk_host_free_pinned(void* ptr) {
    CUZK_TRY(cudaFreeHost(ptr));
    return status_ok();
}

cuzk_status cuzk_host_register(void* ptr, size_t bytes) {
    CUZK_TRY(cudaHostRegister(ptr, bytes, cudaHostRegisterPortable));
    return status_ok();
}

cuzk_status cuzk_host_unregister(void* ptr) {
    CUZK_TRY(cudaHostUnregister(ptr));
    return status_ok();
}

cuzk_status cuzk_stream_create(void** stream) {
    CUZK_TRY(stream_create((cudaStream_t*)stream, "ntt"));
    return status_ok();
}

cuzk_status cuzk_stream_destroy(void* stream) {
    CUZK_TRY(cudaStreamDestroy((cudaStream_t)stream));
    return status_ok();
}

cuzk_status cuzk_stream_sync(void* stream) {
    CUZK_TRY(cudaStreamSynchronize((cudaStream_t)stream));
    return status_ok();
}

cuzk_status cuzk_copy_to_device(void* dst, const void* src, size_t bytes, void* stream) {
    CUZK_TRY(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyHostToDevice, (cudaStream_t)stream));
    return status_ok();
}

cuzk_status cuzk_copy_to_host(void* dst, const void* src, size_t bytes, void* stream) {
    CUZK_TRY(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToHost, (cudaStream_t)stream));
    return status_ok();
}

cuzk_status cuzk_memset_zero(void* dst, size_t bytes, void* stream) {
    CUZK_TRY(cudaMemsetAsync(dst, 0, bytes, (cudaStream_t)stream));
    return status_ok();
}

cuzk_status cuzk_ntt_domain_create(uint32_t log_n, const void* omega, const void* omega_inv, const void* n_inv,
                                   cuzk_ntt_domain** out) {
    if (log_n > 32) return status_msg(1, "NTT domain larger than 2^32");
    cuzk_ntt_domain* d = new cuzk_ntt_domain();
    d->log_n = log_n;
    d->n_inv = *(const fr_t*)n_inv;
    uint64_t half = std::max<uint64_t>(1, (1ull << log_n) / 2);
    fr_t* scratch = nullptr;
    cudaError_t e = malloc_or_trim((void**)&d->tw_fwd, half * sizeof(fr_t));
    if (e == cudaSuccess) e = malloc_or_trim((void**)&d->tw_inv, half * sizeof(fr_t));
    if (e == cudaSuccess) e = malloc_or_trim((void**)&scratch, 2 * sizeof(fr_t));
    if (e == cudaSuccess) e = cudaMemcpy(scratch, omega, sizeof(fr_t), cudaMemcpyHostToDevice);
    if (e == cudaSuccess) e = cudaMemcpy(scratch + 1, omega_inv, sizeof(fr_t), cudaMemcpyHostToDevice);
    cuzk_status s = e == cudaSuccess ? status_ok() : status_from(e, "allocating NTT twiddles");
    if (!s.code) s = fill_powers(d->tw_fwd, half, scratch, 0);
    if (!s.code) s = fill_powers(d->tw_inv, half, scratch + 1, 0);
    if (!s.code) {
        e = cudaDeviceSynchronize();
        if (e != cudaSuccess) s = status_from(e, "computing NTT twiddles");
    }
    if (scratch) cudaFree(scratch);
    if (s.code) {
        cudaFree(d->tw_fwd);
        cudaFree(d->tw_inv);
        delete d;
        return s;
    }
    *out = d;
    return status_ok();
}

cuzk_status cuzk_ntt_domain_destroy(cuzk_ntt_domain* d) {
    if (!d) return status_ok();
    const cudaError_t e1 = cudaFree(d->tw_fwd), e2 = cudaFree(d->tw_inv);
    cudaError_t e3 = cudaSuccess;
    for (const CosetEntry& e : d->cosets) {
        cudaEventDestroy(e.ready);
        const cudaError_t e4 = cudaFree(e.mem);
        if (e3 == cudaSuccess) e3 = e4;
    }
    delete d;
    if (e1 != cudaSuccess) return status_from(e1, "freeing a domain's twiddles");
    if (e2 != cudaSuccess) return status_from(e2, "freeing a domain's twiddles");
    if (e3 != cudaSuccess) return status_from(e3, "freeing a domain's coset tables");
    return status_ok();
}

cuzk_status cuzk_ntt(const cuzk_ntt_domain* domain, void* data, uint32_t batch, int direction, int input_order,
                     int output_order, const void* coset, void* stream) {
    return ntt(domain, (fr_t*)data, batch, direction == CUZK_NTT_INVERSE, input_order == CUZK_ORDER_BIT_REVERSED,
               output_order == CUZK_ORDER_BIT_REVERSED, (const fr_t*)coset, (cudaStream_t)stream);
}

// h = (A B - C) / Z with A, B, C the polynomials of a, b, c. Bellperson takes all three to the coset g<w> (seven
// transforms); as C has degree < n, the inverse coset transform of its coset evaluations is C itself, so by linearity
//   h = (icoset(A(g w^i) B(g w^i)) - C) / Z(g),
// six transforms: a and b to the coset, c to coefficients only, one inverse coset transform of the product, and C
// subtracted in its last scaling pass. The result is the same vector, bit for bit.
cuzk_status cuzk_h_poly(const cuzk_ntt_domain* d, void* a, void* b, void* c, const void* coset, const void* z_inv,
                        void* const* streams) {
    const uint32_t log_n = d->log_n;
    const fr_t g = *(const fr_t*)coset;
    fr_t* bufs[3] = {(fr_t*)a, (fr_t*)b, (fr_t*)c};
    // Fused (fused_h): the pointwise steps run in the passes next to them (PassIo), each sparing a read and a write
    // of the vector: the coset scaling in the last pass of a's and b's inverse transforms (twisted_h: folded into
    // their forward transforms' first pass, which that pass runs too), a b in the first pass of the product's, the
    // last scaling (untwisted_h: partly in that pass's twiddles) and C's subtraction in its last pass. A transform of
    // 2^0 has no pass.
    const bool fused = log_n > 0 && fused_h();
    cudaEvent_t done[3] = {nullptr, nullptr, nullptr};
    // One stream each, so that an input's transforms start as soon as its upload lands. (Tried, with the data on the
    // device: all three one after another on streams[0], each after its stream's work. H 2^27 264.6 -> 266.6 ms,
    // 2^24 28.89 -> 29.15 ms; H100, 2026-12-07, medians of three rounds; BENCHMARKS.)
    for (int i = 0; i < 3; i++) {
        cudaStream_t st = (cudaStream_t)streams[i];
        // Evaluations on <w> (natural) -> n * coefficients (bit-reversed); c stops there (its n^-1 is applied with
        // the product's, in the last pass).
        if (i < 2 && fused && twisted_h()) {
            // -> times n^-1 g^i and the forward coset transform's first pass, twisted (PASS_IO_TWIST), in the
            // inverse transform's last pass -> the forward transform's other passes -> evaluations on g<w>
            // (natural).
            CosetTables t;
            CUZK_CHECK(coset_tables(d, t, g, false, d->n_inv, st, nullptr, pass_split(log_n).back(), d->tw_fwd));
            const PassIo io{nullptr, nullptr, t.lo, t.hi, t.twist};
            CUZK_CHECK(run_passes(false, bufs[i], log_n, 1, d->tw_inv, st, &io, PASS_IO_NONE, PASS_IO_TWIST));
            CUZK_CHECK(run_passes(true, bufs[i], log_n, 1, d->tw_fwd, st, nullptr, PASS_IO_NONE, PASS_IO_NONE, true));
        } else if (i < 2) {
            // -> times n^-1 g^i in one pass (the inverse transform's scaling and the coset shift together) ->
            // evaluations on g<w> (natural).
            CosetTables t;
            CUZK_CHECK(coset_tables(d, t, g, false, d->n_inv, st));
            if (fused) {
                const PassIo io{nullptr, nullptr, t.lo, t.hi};
                CUZK_CHECK(run_passes(false, bufs[i], log_n, 1, d->tw_inv, st, &io, PASS_IO_NONE, PASS_IO_SCALE));
            } else {
                CUZK_CHECK(run_passes(false, bufs[i], log_n, 1, d->tw_inv, st));
                CUZK_CHECK(scale(bufs[i], log_n, 1, fr_one(), &t, true, st));
            }
            CUZK_CHECK(run_passes(true, bufs[i], log_n, 1, d->tw_fwd, st));
        } else {
            CUZK_CHECK(run_passes(false, bufs[i], log_n, 1, d->tw_inv, st));
        }
        if (i > 0) {
            CUZK_TRY(cudaEventCreateWithFlags(&done[i], cudaEventDisableTiming));
            CUZK_TRY(cudaEventRecord(done[i], st));
        }
    }
    cudaStream_t s0 = (cudaStream_t)streams[0];
    CUZK_TRY(cudaStreamWaitEvent(s0, done[1], 0));
    CUZK_TRY(cudaEventDestroy(done[1]));
    // Evaluations on g<w> of a b -> n * its coefficients on the coset (bit-reversed) -> times n^-1 Z^-1 g^-i, minus
    // n C times n^-1 Z^-1, in one pass -> h, natural order.
    if (fused) {
        CUZK_TRY(cudaStreamWaitEvent(s0, done[2], 0));
        CUZK_TRY(cudaEventDestroy(done[2]));
        // The last pass's scaling partly in its twiddles (PASS_IO_UNTWIST), from 3 stages.
        const uint32_t untwist_k = untwist_stages(log_n, untwisted_h());
        const uint32_t untwist = untwist_k ? PASS_IO_UNTWIST : 0;
        CosetTables t;
        CUZK_CHECK(coset_tables(d, t, g, true, d->n_inv, s0, (const fr_t*)z_inv, untwist_k, d->tw_inv, true));
        if (bitrev_h()) {
            // The transform runs in b's buffer (its first pass reads a as the factor); a is free after that pass,
            // and the last one stores h into it in natural order (PASS_IO_BITREV). With a single pass the block holds
            // the whole transform and reads a before it stores.
            const PassIo io{bufs[0], bufs[2], t.lo, t.hi, t.twist, bufs[0]};
            return run_passes(false, bufs[1], log_n, 1, d->tw_inv, s0, &io, PASS_IO_MUL,
                              PASS_IO_SCALE | PASS_IO_SUB | PASS_IO_BITREV | untwist);
        }
        const PassIo io{bufs[1], bufs[2], t.lo, t.hi, t.twist};
        CUZK_CHECK(run_passes(false, bufs[0], log_n, 1, d->tw_inv, s0, &io, PASS_IO_MUL,
                              PASS_IO_SCALE | PASS_IO_SUB | untwist));
        return bit_reverse(bufs[0], log_n, 1, s0);
    }
    const uint64_t n = 1ull << log_n;
    ab_kernel<<<(uint32_t)((n + 255) / 256), 256, 0, s0>>>(bufs[0], bufs[1], n);
    CUZK_TRY_LAUNCH("ab_kernel");
    CUZK_CHECK(run_passes(false, bufs[0], log_n, 1, d->tw_inv, s0));
    CUZK_TRY(cudaStreamWaitEvent(s0, done[2], 0));
    CUZK_TRY(cudaEventDestroy(done[2]));
    {
        CosetTables t;
        CUZK_CHECK(coset_tables(d, t, g, true, d->n_inv, s0, (const fr_t*)z_inv));
        uint32_t threads = std::min<uint32_t>(256u, (uint32_t)n);
        coset_scale_sub_kernel<<<(uint32_t)((n + threads - 1) / threads), threads, 0, s0>>>(bufs[0], bufs[2], log_n,
                                                                                           t.lo, t.hi);
        CUZK_TRY_LAUNCH("coset_scale_sub_kernel");
    }
    return bit_reverse(bufs[0], log_n, 1, s0);
}

cuzk_status cuzk_spmv(const uint32_t* row_ptr, const uint32_t* cols, const uint32_t* slots, const void* table,
                      uint32_t rows, const void* values, uint32_t columns, uint32_t rotate, void* out,
                      size_t out_len, void* stream) {
    if (out_len < rows) return status_msg(1, "cuzk_spmv: the output is shorter than the matrix's rows");
    if (rotate > columns) return status_msg(1, "cuzk_spmv: rotate past the columns");
    if (out_len == 0) return status_ok();
    const uint32_t threads = 256;
    spmv_kernel<<<(uint32_t)((out_len + threads - 1) / threads), threads, 0, (cudaStream_t)stream>>>(
        row_ptr, cols, slots, (const fr_t*)table, rows, (const fr_t*)values, columns, rotate, (fr_t*)out,
        (uint64_t)out_len, spmv_own());
    CUZK_TRY_LAUNCH("spmv_kernel");
    return status_ok();
}

cuzk_status cuzk_fr_test(int op, const void* a, const void* b, void* out, size_t n) {
    if (n == 0) return status_ok();
    fr_t *da = nullptr, *db = nullptr, *dout = nullptr;
    size_t bytes = n * sizeof(fr_t);
    cudaError_t e = cudaMalloc(&da, bytes);
    if (e == cudaSuccess) e = cudaMalloc(&db, bytes);
    if (e == cudaSuccess) e = cudaMalloc(&dout, bytes);
    if (e == cudaSuccess) e = cudaMemcpy(da, a, bytes, cudaMemcpyHostToDevice);
    if (e == cudaSuccess) e = cudaMemcpy(db, b, bytes, cudaMemcpyHostToDevice);
    if (e == cudaSuccess) {
        fr_test_kernel<<<(uint32_t)((n + 255) / 256), 256>>>(op, da, db, dout, n);
        e = cudaGetLastError();
    }
    if (e == cudaSuccess) e = cudaMemcpy(out, dout, bytes, cudaMemcpyDeviceToHost);
    cudaFree(da);
    cudaFree(db);
    cudaFree(dout);
    return e == cudaSuccess ? status_ok() : status_from(e, "cuzk_fr_test");
}

cuzk_status cuzk_ceiling_copy(size_t bytes, uint32_t iterations, double* bytes_per_second) {
    uint4 *src = nullptr, *dst = nullptr;
    CUZK_TRY(cudaMalloc(&src, bytes));
    CUZK_TRY(cudaMalloc(&dst, bytes));
    CUZK_TRY(cudaMemset(src, 1, bytes));
    int sms = 0;
    CUZK_TRY(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
    size_t n = bytes / sizeof(uint4);
    copy_kernel<<<sms * 8, 512>>>(src, dst, n);  // warm-up
    float ms = 0;
    CUZK_CHECK(time_on_device(
        [&] {
            for (uint32_t i = 0; i < iterations; i++) copy_kernel<<<sms * 8, 512>>>(src, dst, n);
            return status_from(cudaGetLastError(), "copy_kernel");
        },
        &ms));
    *bytes_per_second = 2.0 * (double)bytes * iterations / (ms * 1e-3);
    cudaFree(src);
    cudaFree(dst);
    return status_ok();
}

cuzk_status cuzk_ceiling_imad(double* imad_per_second) {
    int sms = 0;
    CUZK_TRY(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
    uint32_t* out = nullptr;
    CUZK_TRY(cudaMalloc(&out, 4));
    uint32_t blocks = sms * 16, threads = 256;
    imad_kernel<<<blocks, threads>>>(out, 1, 0x9E3779B1u, 7);
    const int reps = 20;
    float ms = 0;
    CUZK_CHECK(time_on_device(
        [&] {
            for (int r = 0; r < reps; r++) imad_kernel<<<blocks, threads>>>(out, r, 0x9E3779B1u + 2 * r, 7);
            return status_from(cudaGetLastError(), "imad_kernel");
        },
        &ms));
    *imad_per_second = (double)blocks * threads * 8 * 1024 * reps / (ms * 1e-3);
    cudaFree(out);
    return status_ok();
}

cuzk_status cuzk_ceiling_fr_mul(double* muls_per_second) {
    // Two chains per thread: two products per round.
    return chain_rate(sizeof(fr_t), 2048, 2.0, "fr_mul_chain_kernel",
                      [](void* o, uint32_t seed, int n, uint32_t blocks, uint32_t threads) {
                          fr_t* out = (fr_t*)o;
                          switch (mul_form()) {
                              case MulForm::Chains: fr_mul_chain_kernel<MulForm::Chains><<<blocks, threads>>>(out, seed, n); break;
                              case MulForm::Fold: fr_mul_chain_kernel<MulForm::Fold><<<blocks, threads>>>(out, seed, n); break;
                              case MulForm::Float64: fr_mul_chain_kernel<MulForm::Float64><<<blocks, threads>>>(out, seed, n); break;
                              case MulForm::Hybrid: fr_mul_chain_kernel<MulForm::Hybrid><<<blocks, threads>>>(out, seed, n); break;
                              case MulForm::Hybrid3: fr_mul_chain_kernel<MulForm::Hybrid3><<<blocks, threads>>>(out, seed, n); break;
                              default: fr_mul_chain_kernel<MulForm::Unsaturated><<<blocks, threads>>>(out, seed, n);
                          }
                      },
                      muls_per_second);
}

cuzk_status cuzk_time_ntt(const cuzk_ntt_domain* d, void* data, int direction, int input_order, const void* coset,
                          uint32_t iterations, double* median_ms) {
    if (iterations == 0) return status_msg(1, "cuzk_time_ntt needs at least one iteration");
    const bool inverse = direction == CUZK_NTT_INVERSE, in_rev = input_order == CUZK_ORDER_BIT_REVERSED;
    auto run = [&] { return ntt(d, (fr_t*)data, 1, inverse, in_rev, false, (const fr_t*)coset, 0); };
    CUZK_CHECK(run());  // warm-up
    std::vector<float> times;
    for (uint32_t i = 0; i < iterations; i++) {
        float ms = 0;
        CUZK_CHECK(time_on_device(run, &ms));
        times.push_back(ms);
    }
    std::sort(times.begin(), times.end());
    *median_ms = times[times.size() / 2];
    return status_ok();
}

}  // extern "C"
