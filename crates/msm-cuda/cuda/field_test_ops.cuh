// The base-field and curve operations the tests run elementwise (msm-cuda's FieldOp and CurveOp, by number): on the
// device in msm.cu's field_test_kernel and curve_test_kernel, and on the host in msm-cuda's tests/host_emu.cpp
// (cuda-build's host_emu.h), both against blst.
#pragma once
#include <type_traits>

#include "curve.cuh"

namespace cuzk {

// Operation `op` of FieldOp on a and b in field F (Fp or Fp2). The product-form operations (6-9) are Fp's alone:
// the entry points refuse them for Fp2, and here Fp2 returns a unchanged.
template <class F>
__device__ __forceinline__ typename F::T field_test_op(int op, const typename F::T& a, const typename F::T& b) {
    switch (op) {
        case 0: return F::add(a, b);
        case 1: return F::sub(a, b);
        case 2: return F::mul(a, b);
        case 3: return F::sqr(a);
        case 4: return F::neg(a);
        case 6:
            if constexpr (std::is_same<F, Fp>::value) return mont_mul<FpModulus>(a, b);
            return a;
        case 7:
            if constexpr (std::is_same<F, Fp>::value) return mont_mul_f64<FpModulus>(a, b);
            return a;
        case 8:
        case 9:
            // The lazy product on inputs lifted to x + p (below 2p, as a lazy value can be), reduced after: equal to
            // a * b only if the unreduced result stayed below 2p. 9: the square of a lifted input, as the slope's
            // square takes a lazy product's result (msm.cu's ba_sum_kernel).
            if constexpr (std::is_same<F, Fp>::value) {
                const fp_t la = mont_lift<FpModulus>(a);
                return op == 8 ? fp_reduce(fp_mul_lazy(la, mont_lift<FpModulus>(b))) : fp_sqr(la);
            }
            return a;
        default: return F::inv(a);
    }
}

// Operation `op` of CurveOp on affine a and b over field F (G1 over Fp, G2 over Fp2), element i of its launch (the
// small scalar of MulIndex), in XYZZ and returned in blst's Jacobian form.
template <class F>
__device__ __forceinline__ jacobian_t<F> curve_test_op(int op, const affine_t<F>& a, const affine_t<F>& b, size_t i) {
    xyzz_t<F> pa = xyzz_from_affine(a);
    xyzz_t<F> r;
    switch (op) {
        case 0: r = xyzz_add_affine(pa, b); break;
        case 1: r = xyzz_add(xyzz_dbl(pa), xyzz_dbl(xyzz_from_affine(b))); break;
        case 2: r = xyzz_dbl(xyzz_add_affine(pa, b)); break;
        case 3: r = xyzz_add_affine(xyzz_neg(pa), b); break;
        default: r = xyzz_mul_small(pa, (uint32_t)i); break;
    }
    return xyzz_to_jacobian(r);
}

}  // namespace cuzk
