// ntt-cuda's device code run on the host (cuda-build's host_emu.h), for tests/host_emulation.rs. Reads a request from
// stdin and writes its result to stdout, raw (scalars as 32 bytes each, the device's layout). A request starts with
// its kind (int32):
//   0, field: an operation number (int32, fr_test_ops.cuh), a count n (uint64), n a's, n b's -> n results.
//   1, passes: dit, form (MulForm's number), swizzled, threads a block (int32 each), log_n, the pass count P and the
//      P stage counts (uint32 each), the 2^log_n scalars, the max(1, 2^log_n / 2) twiddles w^i -> the 2^log_n
//      scalars after ntt_pass ran for each pass in turn, planned by plan_pass as ntt.cu plans them.
//   2, H passes (DIF, f64, swizzled, with PassIo's steps as cuzk_h_poly runs them): threads a block (int32), log_n,
//      P, the P stage counts, the first pass's load steps and the last pass's store steps (uint32 each), the 2^log_n
//      scalars, the twiddles as above, mul and sub (2^log_n each), lo (2^COSET_LO_BITS) and hi (max(1, 2^log_n /
//      2^COSET_LO_BITS)); with PASS_IO_TWIST in the last pass's steps then also g, the forward twiddles w^i (i < n/2)
//      and the forward DIT passes after the twisted one (their count R and R stage counts, uint32 each); the
//      twisted table is built by twist_table_kernel, and those DIT passes run after the DIF passes -> the 2^log_n
//      scalars. With PASS_IO_UNTWIST in the last pass's steps then g, the coset's factor, from which
//      untwist_table_kernel builds the last pass's twisted table (lo and hi must then be g's powers). With
//      PASS_IO_BITREV in the last pass's steps it stores into mul's buffer (as cuzk_h_poly stores h into a's, the
//      product's factor), and the result is that buffer.
//   3, natural-order passes (DIF, f64, swizzled, as ntt.cu's run_passes runs them with a scratch vector): threads a
//      block (int32), log_n, P, the P stage counts, how the last pass scales (0 not, 1 from tables, 2 by 2^-log_n, 3
//      from tables partly in its twiddles, PASS_IO_UNTWIST; uint32 each), the 2^log_n scalars, the max(1, 2^log_n /
//      2) twiddles, with tables lo and hi as in 2, and with 3 then g, whose powers they must be -> the
//      transform in natural order: the first pass stores into the scratch (PASS_IO_OUT), the middle ones run there,
//      the last stores into the scalars' buffer at the bit reversals (PASS_IO_BITREV, with PASS_IO_SCALE or
//      PASS_IO_HALVE as ntt.cu's inverse transform scales; a lone pass in place).
//   4, halving DIT passes (f64, swizzled, as ntt.cu's inverse transform from bit-reversed order off a coset runs
//      them): threads a block (int32), log_n, P, the P stage counts (uint32 each), the 2^log_n scalars, the
//      max(1, 2^log_n / 2) twiddles -> the 2^log_n scalars after the passes in place, the last one multiplying each
//      by 2^-log_n as it stores it (PASS_IO_HALVE).
#define CUZK_HOST_EMU
#include "host_emu.h"

#include <algorithm>
#include <cstdio>
#include <vector>

#include "fr.cuh"
#include "fr_test_ops.cuh"
#include "ntt_pass.cuh"

namespace cuzk {
// The shared memory ntt_pass's `extern __shared__` names: one block's at a time (host_emu::launch runs them in turn).
uint4 smem_raw[PASS_MAX_SMEM / sizeof(uint4) + 1];
}  // namespace cuzk

using namespace cuzk;

template <class T>
bool read(T* p, size_t n = 1) {
    return std::fread(p, sizeof(T), n, stdin) == n;
}

int field() {
    int32_t op = 0;
    uint64_t n = 0;
    if (!read(&op) || !read(&n)) return 2;
    std::vector<fr_t> a(n), b(n), out(n);
    if (!read(a.data(), n) || !read(b.data(), n)) return 2;
    for (uint64_t i = 0; i < n; i++) out[i] = fr_test_op(op, a[i], b[i], i);
    return std::fwrite(out.data(), sizeof(fr_t), n, stdout) == n ? 0 : 3;
}

template <bool DIT, MulForm F, bool SWZ>
void run_pass(const PassPlan& plan, fr_t* data, uint32_t log_n, const fr_t* tw) {
    host_emu::launch(dim3(1u << (log_n - plan.log_e)), plan.threads,
                     [&] { ntt_pass<DIT, F, SWZ>(data, log_n, plan.ps, tw, PassIo{}); });
}

template <uint32_t IO>
void run_h_pass(const PassPlan& plan, fr_t* data, uint32_t log_n, const fr_t* tw, const PassIo& io) {
    host_emu::launch(dim3(1u << (log_n - plan.log_e)), plan.threads,
                     [&] { ntt_pass<false, MulForm::Float64, true, IO>(data, log_n, plan.ps, tw, io); });
}

template <bool DIT, MulForm F>
void run_pass_form(bool swz, const PassPlan& plan, fr_t* data, uint32_t log_n, const fr_t* tw) {
    if (swz)
        run_pass<DIT, F, true>(plan, data, log_n, tw);
    else
        run_pass<DIT, F, false>(plan, data, log_n, tw);
}

template <bool DIT>
bool run_pass_dir(int32_t form, bool swz, const PassPlan& plan, fr_t* data, uint32_t log_n, const fr_t* tw) {
    switch ((MulForm)form) {
        case MulForm::Chains: run_pass_form<DIT, MulForm::Chains>(swz, plan, data, log_n, tw); return true;
        case MulForm::Unsaturated: run_pass_form<DIT, MulForm::Unsaturated>(swz, plan, data, log_n, tw); return true;
        case MulForm::Float64: run_pass_form<DIT, MulForm::Float64>(swz, plan, data, log_n, tw); return true;
        case MulForm::Hybrid: run_pass_form<DIT, MulForm::Hybrid>(swz, plan, data, log_n, tw); return true;
        default: return false;
    }
}

int passes() {
    int32_t dit = 0, form = 0, swz = 0, threads = 0;
    uint32_t log_n = 0, count = 0;
    if (!read(&dit) || !read(&form) || !read(&swz) || !read(&threads) || !read(&log_n) || !read(&count)) return 2;
    if (log_n > 20 || count > 32 || threads < 1 || threads > (int32_t)PASS_MAX_THREADS) return 4;
    std::vector<uint32_t> ks(count);
    if (!read(ks.data(), count)) return 2;
    const size_t n = size_t(1) << log_n, tw_n = n / 2 ? n / 2 : 1;
    std::vector<fr_t> data(n), tw(tw_n);
    if (!read(data.data(), n) || !read(tw.data(), tw_n)) return 2;
    uint32_t done = 0;
    for (uint32_t k : ks) {
        if (k < 1 || k > MAX_LOG_BLOCK || done + k > log_n) return 4;
        const PassPlan plan = plan_pass(dit != 0, log_n, k, done, (uint32_t)threads);
        const bool ok = dit ? run_pass_dir<true>(form, swz != 0, plan, data.data(), log_n, tw.data())
                            : run_pass_dir<false>(form, swz != 0, plan, data.data(), log_n, tw.data());
        if (!ok) return 4;
        done += k;
    }
    if (done != log_n) return 4;
    return std::fwrite(data.data(), sizeof(fr_t), n, stdout) == n ? 0 : 3;
}

// A twisted pass's 2^k - 1 twiddles, as ntt.cu's coset_tables builds them: the first DIT pass's on the coset of g
// (twist_table_kernel, tw the forward twiddles) or, untwist, the last DIF pass's (untwist_table_kernel, tw the
// transform's own).
std::vector<fr_t> twisted_table(bool untwist, uint32_t k, uint32_t log_n, const fr_t* tw, const fr_t& g) {
    std::vector<fr_t> table((size_t(1) << k) - 1);
    const uint32_t threads = 64, blocks = (uint32_t)((table.size() + threads - 1) / threads);
    host_emu::launch(dim3(blocks), threads, [&] {
        if (untwist)
            untwist_table_kernel(table.data(), k, log_n, tw, &g);
        else
            twist_table_kernel(table.data(), k, log_n, tw, &g);
    });
    return table;
}

int h_passes() {
    int32_t threads = 0;
    uint32_t log_n = 0, count = 0, first_io = 0, last_io = 0;
    if (!read(&threads) || !read(&log_n) || !read(&count)) return 2;
    if (log_n < 1 || log_n > 20 || count > 32 || threads < 1 || threads > (int32_t)PASS_MAX_THREADS) return 4;
    std::vector<uint32_t> ks(count);
    if (!read(ks.data(), count) || !read(&first_io) || !read(&last_io)) return 2;
    const size_t n = size_t(1) << log_n, tw_n = n / 2, hi_n = std::max<size_t>(1, n >> COSET_LO_BITS);
    std::vector<fr_t> data(n), tw(tw_n), mul(n), sub(n), lo(size_t(1) << COSET_LO_BITS), hi(hi_n);
    if (!read(data.data(), n) || !read(tw.data(), tw_n) || !read(mul.data(), n) || !read(sub.data(), n) ||
        !read(lo.data(), lo.size()) || !read(hi.data(), hi_n))
        return 2;
    std::vector<fr_t> fwd, twist;
    std::vector<uint32_t> rest;
    if (last_io & PASS_IO_TWIST) {
        fr_t g;
        uint32_t rest_count = 0;
        fwd.resize(tw_n);
        if (!read(&g) || !read(fwd.data(), tw_n) || !read(&rest_count) || rest_count > 32) return 2;
        rest.resize(rest_count);
        if (!read(rest.data(), rest_count)) return 2;
        const uint32_t k = count ? ks[count - 1] : 0;
        if (k < 1 || k > MAX_LOG_BLOCK) return 4;
        twist = twisted_table(false, k, log_n, fwd.data(), g);
    }
    if (last_io & PASS_IO_UNTWIST) {
        fr_t g;
        if (!read(&g)) return 2;
        const uint32_t k = count ? ks[count - 1] : 0;
        if (k < 3 || k > MAX_LOG_BLOCK) return 4;
        twist = twisted_table(true, k, log_n, tw.data(), g);
    }
    const PassIo io{mul.data(), sub.data(), lo.data(), hi.data(), twist.data(), mul.data()};
    uint32_t done = 0;
    for (uint32_t p = 0; p < count; p++) {
        const uint32_t k = ks[p];
        if (k < 1 || k > MAX_LOG_BLOCK || done + k > log_n) return 4;
        const PassPlan plan = plan_pass(false, log_n, k, done, (uint32_t)threads);
        const uint32_t steps = (p == 0 ? first_io : 0) | (p + 1 == count ? last_io : 0);
        switch (steps) {
            case PASS_IO_NONE: run_h_pass<PASS_IO_NONE>(plan, data.data(), log_n, tw.data(), io); break;
            case PASS_IO_MUL: run_h_pass<PASS_IO_MUL>(plan, data.data(), log_n, tw.data(), io); break;
            case PASS_IO_TWIST: run_h_pass<PASS_IO_TWIST>(plan, data.data(), log_n, tw.data(), io); break;
            case PASS_IO_SCALE: run_h_pass<PASS_IO_SCALE>(plan, data.data(), log_n, tw.data(), io); break;
            case PASS_IO_SCALE | PASS_IO_SUB:
                run_h_pass<PASS_IO_SCALE | PASS_IO_SUB>(plan, data.data(), log_n, tw.data(), io);
                break;
            case PASS_IO_MUL | PASS_IO_SCALE | PASS_IO_SUB:
                run_h_pass<PASS_IO_MUL | PASS_IO_SCALE | PASS_IO_SUB>(plan, data.data(), log_n, tw.data(), io);
                break;
            case PASS_IO_SCALE | PASS_IO_SUB | PASS_IO_BITREV:
                run_h_pass<PASS_IO_SCALE | PASS_IO_SUB | PASS_IO_BITREV>(plan, data.data(), log_n, tw.data(), io);
                break;
            case PASS_IO_MUL | PASS_IO_SCALE | PASS_IO_SUB | PASS_IO_BITREV:
                run_h_pass<PASS_IO_MUL | PASS_IO_SCALE | PASS_IO_SUB | PASS_IO_BITREV>(plan, data.data(), log_n,
                                                                                        tw.data(), io);
                break;
            case PASS_IO_SCALE | PASS_IO_SUB | PASS_IO_UNTWIST:
                run_h_pass<PASS_IO_SCALE | PASS_IO_SUB | PASS_IO_UNTWIST>(plan, data.data(), log_n, tw.data(), io);
                break;
            case PASS_IO_MUL | PASS_IO_SCALE | PASS_IO_SUB | PASS_IO_UNTWIST:
                run_h_pass<PASS_IO_MUL | PASS_IO_SCALE | PASS_IO_SUB | PASS_IO_UNTWIST>(plan, data.data(), log_n,
                                                                                         tw.data(), io);
                break;
            case PASS_IO_SCALE | PASS_IO_SUB | PASS_IO_BITREV | PASS_IO_UNTWIST:
                run_h_pass<PASS_IO_SCALE | PASS_IO_SUB | PASS_IO_BITREV | PASS_IO_UNTWIST>(plan, data.data(), log_n,
                                                                                           tw.data(), io);
                break;
            case PASS_IO_MUL | PASS_IO_SCALE | PASS_IO_SUB | PASS_IO_BITREV | PASS_IO_UNTWIST:
                run_h_pass<PASS_IO_MUL | PASS_IO_SCALE | PASS_IO_SUB | PASS_IO_BITREV | PASS_IO_UNTWIST>(
                    plan, data.data(), log_n, tw.data(), io);
                break;
            default: return 4;
        }
        done += k;
    }
    if (done != log_n) return 4;
    // The forward transform's passes after the twisted one, DIT from the stages it ran.
    done = rest.empty() ? log_n : ks[count - 1];
    for (uint32_t k : rest) {
        if (k < 1 || k > MAX_LOG_BLOCK || done + k > log_n) return 4;
        run_pass<true, MulForm::Float64, true>(plan_pass(true, log_n, k, done, (uint32_t)threads), data.data(), log_n,
                                               fwd.data());
        done += k;
    }
    if (done != log_n) return 4;
    const std::vector<fr_t>& result = (last_io & PASS_IO_BITREV) ? mul : data;
    return std::fwrite(result.data(), sizeof(fr_t), n, stdout) == n ? 0 : 3;
}

// The head of requests 3 and 4: threads a block, log_n, P and the P stage counts. 0, or main's code (2 short, 4 out of
// range).
int read_split(int32_t& threads, uint32_t& log_n, std::vector<uint32_t>& ks) {
    uint32_t count = 0;
    if (!read(&threads) || !read(&log_n) || !read(&count)) return 2;
    if (log_n < 1 || log_n > 20 || count < 1 || count > 32 || threads < 1 || threads > (int32_t)PASS_MAX_THREADS)
        return 4;
    ks.resize(count);
    return read(ks.data(), count) ? 0 : 2;
}

int natural_passes() {
    int32_t threads = 0;
    uint32_t log_n = 0, scales = 0;
    std::vector<uint32_t> ks;
    if (const int rc = read_split(threads, log_n, ks)) return rc;
    const uint32_t count = (uint32_t)ks.size();
    if (!read(&scales)) return 2;
    if (scales > 3) return 4;
    const size_t n = size_t(1) << log_n, tw_n = n / 2, hi_n = std::max<size_t>(1, n >> COSET_LO_BITS);
    std::vector<fr_t> data(n), tw(tw_n), scratch(n), lo, hi;
    if (!read(data.data(), n) || !read(tw.data(), tw_n)) return 2;
    std::vector<fr_t> twist;
    if (scales == 1 || scales == 3) {
        lo.resize(size_t(1) << COSET_LO_BITS);
        hi.resize(hi_n);
        if (!read(lo.data(), lo.size()) || !read(hi.data(), hi_n)) return 2;
    }
    if (scales == 3) {
        fr_t g;
        if (!read(&g)) return 2;
        const uint32_t k = ks[count - 1];
        if (k < 3 || k > MAX_LOG_BLOCK) return 4;
        twist = twisted_table(true, k, log_n, tw.data(), g);
    }
    uint32_t done = 0;
    for (uint32_t p = 0; p < count; p++) {
        const uint32_t k = ks[p];
        if (k < 1 || k > MAX_LOG_BLOCK || done + k > log_n) return 4;
        const PassPlan plan = plan_pass(false, log_n, k, done, (uint32_t)threads);
        const bool last = p + 1 == count;
        fr_t* src = p == 0 ? data.data() : scratch.data();
        PassIo io{};
        io.out = last ? data.data() : scratch.data();
        io.lo = lo.data();
        io.hi = hi.data();
        io.twist = twist.data();
        if (last && scales == 1)
            run_h_pass<PASS_IO_SCALE | PASS_IO_BITREV>(plan, src, log_n, tw.data(), io);
        else if (last && scales == 3)
            run_h_pass<PASS_IO_SCALE | PASS_IO_BITREV | PASS_IO_UNTWIST>(plan, src, log_n, tw.data(), io);
        else if (last && scales == 2)
            run_h_pass<PASS_IO_HALVE | PASS_IO_BITREV>(plan, src, log_n, tw.data(), io);
        else if (last)
            run_h_pass<PASS_IO_BITREV>(plan, src, log_n, tw.data(), io);
        else if (p == 0)
            run_h_pass<PASS_IO_OUT>(plan, src, log_n, tw.data(), io);
        else
            run_pass<false, MulForm::Float64, true>(plan, src, log_n, tw.data());
        done += k;
    }
    if (done != log_n) return 4;
    return std::fwrite(data.data(), sizeof(fr_t), n, stdout) == n ? 0 : 3;
}

int halving_dit_passes() {
    int32_t threads = 0;
    uint32_t log_n = 0;
    std::vector<uint32_t> ks;
    if (const int rc = read_split(threads, log_n, ks)) return rc;
    const uint32_t count = (uint32_t)ks.size();
    const size_t n = size_t(1) << log_n, tw_n = n / 2;
    std::vector<fr_t> data(n), tw(tw_n);
    if (!read(data.data(), n) || !read(tw.data(), tw_n)) return 2;
    uint32_t done = 0;
    for (uint32_t p = 0; p < count; p++) {
        const uint32_t k = ks[p];
        if (k < 1 || k > MAX_LOG_BLOCK || done + k > log_n) return 4;
        const PassPlan plan = plan_pass(true, log_n, k, done, (uint32_t)threads);
        if (p + 1 == count)
            host_emu::launch(dim3(1u << (log_n - plan.log_e)), plan.threads, [&] {
                ntt_pass<true, MulForm::Float64, true, PASS_IO_HALVE>(data.data(), log_n, plan.ps, tw.data(), PassIo{});
            });
        else
            run_pass<true, MulForm::Float64, true>(plan, data.data(), log_n, tw.data());
        done += k;
    }
    if (done != log_n) return 4;
    return std::fwrite(data.data(), sizeof(fr_t), n, stdout) == n ? 0 : 3;
}

int main() {
    int32_t kind = -1;
    if (!read(&kind)) return 2;
    const int rc = kind == 0   ? field()
                   : kind == 1 ? passes()
                   : kind == 2 ? h_passes()
                   : kind == 3 ? natural_passes()
                   : kind == 4 ? halving_dit_passes()
                               : 4;
    if (rc == 2) std::fprintf(stderr, "host_emu: the request on stdin is short\n");
    if (rc == 4) std::fprintf(stderr, "host_emu: the request is out of range (kind, form, sizes or stage counts)\n");
    return rc;
}
