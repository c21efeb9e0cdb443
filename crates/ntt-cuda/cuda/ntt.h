/* C ABI of ntt-cuda's kernels. Scalars are 32-byte blstrs::Scalar values (Montgomery form).
 * Every entry point returns a cuzk_status; device pointers and streams are opaque to the caller.
 * The Rust side (src/ffi.rs) is generated from this header by `cargo xtask bindgen`. */
#ifndef CUZK_NTT_H
#define CUZK_NTT_H

#include <stddef.h>
#include <stdint.h>
#include "cuzk_status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Device discovery and memory. */
cuzk_status cuzk_device_count(int* count);
cuzk_status cuzk_device_name(int device, char* name, size_t len);
/* The calling host thread's current device: every allocation, stream and kernel of that thread goes there. */
cuzk_status cuzk_set_device(int device);
cuzk_status cuzk_get_device(int* device);
cuzk_status cuzk_mem_get_info(size_t* free_bytes, size_t* total_bytes);
/* Device buffers come from cuzk's own memory pool on the device, which keeps freed memory for the next buffers
 * (cudaFree would wait for every stream's queued work); free only buffers with no work pending on them. The pool's unused memory
 * counts as free in cuzk_mem_get_info; cuzk_device_pool_trim gives it back to the device. After any call returns an
 * error, the next cuzk_free on that device first waits for all the device's queued work (the failed call may have
 * left some on the buffers its caller now frees); cuzk_mark_unsettled asks the same of every device, for a caller
 * that abandons queued work for a reason of its own (a panic). */
cuzk_status cuzk_malloc(void** ptr, size_t bytes);
cuzk_status cuzk_free(void* ptr);
cuzk_status cuzk_mark_unsettled(void);
cuzk_status cuzk_device_pool_trim(void);
/* Pinned host memory, portable: pinned for every device of the process. */
cuzk_status cuzk_host_alloc_pinned(void** ptr, size_t bytes);
cuzk_status cuzk_host_free_pinned(void* ptr);
/* Page-locks `bytes` of ordinary host memory at `ptr` in place (cudaHostRegister), so that copies from it run at
 * pinned speed and asynchronously; cuzk_host_unregister undoes it. Costly per call: measure before using it per proof. */
cuzk_status cuzk_host_register(void* ptr, size_t bytes);
cuzk_status cuzk_host_unregister(void* ptr);
cuzk_status cuzk_stream_create(void** stream);
cuzk_status cuzk_stream_destroy(void* stream);
cuzk_status cuzk_stream_sync(void* stream);
cuzk_status cuzk_copy_to_device(void* dst, const void* src, size_t bytes, void* stream);
cuzk_status cuzk_copy_to_host(void* dst, const void* src, size_t bytes, void* stream);
cuzk_status cuzk_memset_zero(void* dst, size_t bytes, void* stream);

/* An NTT domain of 2^log_n points: its twiddle tables live on the device until destroyed. */
typedef struct cuzk_ntt_domain cuzk_ntt_domain;
/* omega: a primitive 2^log_n-th root of unity; omega_inv its inverse; n_inv = 1/2^log_n (32-byte scalars each). */
cuzk_status cuzk_ntt_domain_create(uint32_t log_n, const void* omega, const void* omega_inv, const void* n_inv,
                                   cuzk_ntt_domain** out);
cuzk_status cuzk_ntt_domain_destroy(cuzk_ntt_domain* domain);

enum cuzk_ntt_direction { CUZK_NTT_FORWARD = 0, CUZK_NTT_INVERSE = 1 };
enum cuzk_ntt_order { CUZK_ORDER_NATURAL = 0, CUZK_ORDER_BIT_REVERSED = 1 };

/* In-place NTT of `batch` consecutive polynomials of 2^log_n scalars at `data` (device memory).
 * Forward: coefficients to evaluations; inverse: evaluations to coefficients, scaled by 1/n.
 * With `coset` non-null (a 32-byte scalar g), the evaluations are on the coset g<w>:
 * forward multiplies coefficient i by g^i first; inverse multiplies coefficient i by g^-i last. */
cuzk_status cuzk_ntt(const cuzk_ntt_domain* domain, void* data, uint32_t batch, int direction, int input_order,
                     int output_order, const void* coset, void* stream);

/* Groth16's H polynomial on the device. a, b, c: device buffers of 2^log_n scalars each (evaluations on <w>,
 * zero-padded), overwritten. On return the first 2^log_n - 1 scalars of a are h's coefficients in natural order
 * (the last one is what bellperson drops).
 * `coset` is g (32 bytes), `z_inv` is (g^n - 1)^-1 (32 bytes). Work runs on `streams[0..3]`, one per input,
 * joining on streams[0]; the call returns once queued, with streams[0] ordered after everything. */
cuzk_status cuzk_h_poly(const cuzk_ntt_domain* domain, void* a, void* b, void* c, const void* coset, const void* z_inv,
                        void* const* streams);

/* Sparse rows times a vector, on the device: out[r] = sum over k in [row_ptr[r], row_ptr[r + 1]) of
 * table[slots[k]] * value(cols[k]) for r < rows, and out[r] = 0 for rows <= r < out_len (out_len >= rows).
 * value(k) is values[k - rotate] for k >= rotate, else values[k + columns - rotate]: the buffer holds the columns from
 * `rotate` on, then the first `rotate`. table[0] must be one and table[1] minus one (no product for them).
 * Every pointer is device memory; the caller guarantees row_ptr non-decreasing with rows + 1 entries, every column
 * below `columns` and every slot inside the table. Queued on `stream`. */
cuzk_status cuzk_spmv(const uint32_t* row_ptr, const uint32_t* cols, const uint32_t* slots, const void* table,
                      uint32_t rows, const void* values, uint32_t columns, uint32_t rotate, void* out,
                      size_t out_len, void* stream);

/* Elementwise scalar-field operations for tests: out[i] = op(a[i], b[i]) on host arrays of n scalars.
 * op: 0 add, 1 sub, 2 mul, 3 square(a), 4 inverse(a), 5 a^e with e = b's raw little-endian words, 6 neg(a),
 * 7 mul by the folded product, 8 mul by the unsaturated-limb product. */
cuzk_status cuzk_fr_test(int op, const void* a, const void* b, void* out, size_t n);

/* Ceilings of this card, measured by simple kernels: device-to-device copy bandwidth (bytes read + written per
 * second) over a buffer of `bytes`, and 32-bit integer multiply-add rate (per second). */
cuzk_status cuzk_ceiling_copy(size_t bytes, uint32_t iterations, double* bytes_per_second);
cuzk_status cuzk_ceiling_imad(double* imad_per_second);

/* Scalar-field products per second in the form the NTT's butterflies use (CUZK_NTT_MUL): two independent dependent
 * chains per thread, all SMs busy. */
cuzk_status cuzk_ceiling_fr_mul(double* muls_per_second);

/* Times `iterations` NTTs of the 2^log_n scalars at `data` (direction, input order and coset as cuzk_ntt's, output
 * in natural order) with CUDA events on the default stream, after one untimed run; writes the median milliseconds. */
cuzk_status cuzk_time_ntt(const cuzk_ntt_domain* domain, void* data, int direction, int input_order,
                          const void* coset, uint32_t iterations, double* median_ms);

#ifdef __cplusplus
}
#endif

#endif
