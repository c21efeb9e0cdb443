// BLS12-381 G1 and G2 on the device, written once over the field (Fp for G1, Fp2 for G2).
//
// Affine points are blst's affine layout (x then y; the identity is all zero bytes), so blstrs affine points upload
// as raw bytes. Accumulation uses XYZZ coordinates (x = X/ZZ, y = Y/ZZZ, with ZZ^3 = ZZZ^2; the identity has
// ZZ = ZZZ = 0): a mixed addition costs 8M + 2S and needs no inversion. Results leave the device in blst's Jacobian
// layout (x = X/Z^2, y = Y/Z^3, identity Z = 0) so they read back as blstrs projective points.
// Formulas: add-2008-s, madd-2008-s and dbl-2008-s-1 of the Explicit-Formulas Database (a = 0 curves).
// Only the mixed addition (the bucket hot loop) is inlined; the rest are out of line, which keeps kernels small
// enough for nvcc to compile in reasonable time (fully inlined, the file took over ten minutes).
#pragma once
#include "fp.cuh"

namespace cuzk {

template <class F>
struct affine_t {
    typename F::T x, y;
};

template <class F>
struct xyzz_t {
    typename F::T X, Y, ZZ, ZZZ;
};

template <class F>
struct jacobian_t {
    typename F::T X, Y, Z;
};

static_assert(sizeof(affine_t<Fp>) == 96, "blst_p1_affine");
static_assert(sizeof(affine_t<Fp2>) == 192, "blst_p2_affine");
static_assert(sizeof(jacobian_t<Fp>) == 144, "blst_p1");
static_assert(sizeof(jacobian_t<Fp2>) == 288, "blst_p2");

template <class F>
__device__ __forceinline__ bool affine_is_identity(const affine_t<F>& p) {
    return F::is_zero(p.x) && F::is_zero(p.y);
}

template <class F>
__device__ __forceinline__ affine_t<F> affine_neg(const affine_t<F>& p) {
    // The identity's y is zero, and -0 = 0: negation keeps it the identity.
    return {p.x, F::neg(p.y)};
}

template <class F>
__device__ __forceinline__ xyzz_t<F> xyzz_identity() {
    return {F::zero(), F::zero(), F::zero(), F::zero()};
}

template <class F>
__device__ __forceinline__ bool xyzz_is_identity(const xyzz_t<F>& p) {
    return F::is_zero(p.ZZ);
}

template <class F>
__device__ __forceinline__ xyzz_t<F> xyzz_from_affine(const affine_t<F>& p) {
    if (affine_is_identity(p)) return xyzz_identity<F>();
    return {p.x, p.y, F::one(), F::one()};
}

template <class F>
__device__ __forceinline__ xyzz_t<F> xyzz_neg(const xyzz_t<F>& p) {
    return {p.X, F::neg(p.Y), p.ZZ, p.ZZZ};
}

// 2P (dbl-2008-s-1). The identity doubles to itself (ZZ stays 0).
template <class F>
__device__ __noinline__ xyzz_t<F> xyzz_dbl(const xyzz_t<F>& p) {
    using T = typename F::T;
    T U = F::dbl(p.Y);
    T V = F::sqr(U);
    T W = F::mul(U, V);
    T S = F::mul(p.X, V);
    T X2 = F::sqr(p.X);
    T M = F::add(F::dbl(X2), X2);
    xyzz_t<F> r;
    r.X = F::sub(F::sub(F::sqr(M), S), S);
    r.Y = F::sub(F::mul(M, F::sub(S, r.X)), F::mul(W, p.Y));
    r.ZZ = F::mul(V, p.ZZ);
    r.ZZZ = F::mul(W, p.ZZZ);
    return r;
}

// 2Q for an affine Q (mdbl-2008-s-1).
template <class F>
__device__ __noinline__ xyzz_t<F> xyzz_dbl_affine(const affine_t<F>& q) {
    using T = typename F::T;
    if (affine_is_identity(q)) return xyzz_identity<F>();
    T U = F::dbl(q.y);
    T V = F::sqr(U);
    T W = F::mul(U, V);
    T S = F::mul(q.x, V);
    T X2 = F::sqr(q.x);
    T M = F::add(F::dbl(X2), X2);
    xyzz_t<F> r;
    r.X = F::sub(F::sub(F::sqr(M), S), S);
    r.Y = F::sub(F::mul(M, F::sub(S, r.X)), F::mul(W, q.y));
    r.ZZ = V;
    r.ZZZ = W;
    return r;
}

// P + Q for an affine Q (madd-2008-s), complete: identities, P = Q (doubling) and P = -Q (identity) included.
template <class F>
__device__ __forceinline__ xyzz_t<F> xyzz_add_affine(const xyzz_t<F>& p, const affine_t<F>& q) {
    using T = typename F::T;
    if (affine_is_identity(q)) return p;
    if (xyzz_is_identity(p)) return {q.x, q.y, F::one(), F::one()};
    T U2 = F::mul(q.x, p.ZZ);
    T S2 = F::mul(q.y, p.ZZZ);
    T P = F::sub(U2, p.X);
    T R = F::sub(S2, p.Y);
    if (F::is_zero(P)) {
        if (F::is_zero(R)) return xyzz_dbl_affine(q);
        return xyzz_identity<F>();
    }
    T PP = F::sqr(P);
    T PPP = F::mul(P, PP);
    T Q = F::mul(p.X, PP);
    xyzz_t<F> r;
    r.X = F::sub(F::sub(F::sub(F::sqr(R), PPP), Q), Q);
    r.Y = F::sub(F::mul(R, F::sub(Q, r.X)), F::mul(p.Y, PPP));
    r.ZZ = F::mul(p.ZZ, PP);
    r.ZZZ = F::mul(p.ZZZ, PPP);
    return r;
}

// P + Q (add-2008-s), complete as above.
template <class F>
__device__ __noinline__ xyzz_t<F> xyzz_add(const xyzz_t<F>& p, const xyzz_t<F>& q) {
    using T = typename F::T;
    if (xyzz_is_identity(q)) return p;
    if (xyzz_is_identity(p)) return q;
    T U1 = F::mul(p.X, q.ZZ);
    T U2 = F::mul(q.X, p.ZZ);
    T S1 = F::mul(p.Y, q.ZZZ);
    T S2 = F::mul(q.Y, p.ZZZ);
    T P = F::sub(U2, U1);
    T R = F::sub(S2, S1);
    if (F::is_zero(P)) {
        if (F::is_zero(R)) return xyzz_dbl(p);
        return xyzz_identity<F>();
    }
    T PP = F::sqr(P);
    T PPP = F::mul(P, PP);
    T Q = F::mul(U1, PP);
    xyzz_t<F> r;
    r.X = F::sub(F::sub(F::sub(F::sqr(R), PPP), Q), Q);
    r.Y = F::sub(F::mul(R, F::sub(Q, r.X)), F::mul(S1, PPP));
    r.ZZ = F::mul(F::mul(p.ZZ, q.ZZ), PP);
    r.ZZZ = F::mul(F::mul(p.ZZZ, q.ZZZ), PPP);
    return r;
}

// k * P by double-and-add over the bits of a small integer k.
template <class F>
__device__ __noinline__ xyzz_t<F> xyzz_mul_small(const xyzz_t<F>& p, uint32_t k) {
    xyzz_t<F> r = xyzz_identity<F>();
    if (k == 0) return r;
    int top = 31 - __clz(k);
    r = p;
    for (int b = top - 1; b >= 0; b--) {
        r = xyzz_dbl(r);
        if ((k >> b) & 1) r = xyzz_add(r, p);
    }
    return r;
}

// XYZZ to blst's Jacobian without an inversion: (X ZZ^2, Y ZZZ^2, ZZZ), valid because ZZ^3 = ZZZ^2.
template <class F>
__device__ __noinline__ jacobian_t<F> xyzz_to_jacobian(const xyzz_t<F>& p) {
    jacobian_t<F> r;
    r.X = F::mul(p.X, F::sqr(p.ZZ));
    r.Y = F::mul(p.Y, F::sqr(p.ZZZ));
    r.Z = p.ZZZ;
    return r;
}

}  // namespace cuzk
