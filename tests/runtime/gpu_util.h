/* gpu_util.h — device helpers shared by the GPU test and the benchmark (gpu_util.cu). */
#ifndef WEFT_TESTS_GPU_UTIL_H
#define WEFT_TESTS_GPU_UTIL_H

#include <cuda_runtime_api.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* n elements of NCCL type dtype, a function of (seed, rank, index): floats in [-1, 1) ([0.5,
 * 1.5) when op is prod), integers of random bits. */
cudaError_t tg_fill(void *buf, size_t n, int dtype, int op, uint32_t seed, int rank,
                    cudaStream_t s);
/* As tg_fill, but floating-point types (half, float, double, bfloat16) get values whose sums and
 * products over up to 16 ranks are exact in any order (integers as tg_fill: their sums and
 * products wrap, which no order changes), so that a reduction over more than 2 ranks gives the
 * same bits as NCCL's whichever order each reduces in. */
cudaError_t tg_fill_exact(void *buf, size_t n, int dtype, int op, uint32_t seed, int rank,
                          cudaStream_t s);
/* res[0] = elements (of esize bytes) where a and b differ, res[1] = the first such index (or
 * ~0); res is device memory, written on stream s. */
cudaError_t tg_compare(const void *a, const void *b, size_t n, int esize, unsigned long long *res,
                       cudaStream_t s);
/* The same for floating-point NCCL types (half, float, double, bfloat16) where the reduction
 * order may differ from the reference's: an element counts when |a - b| > tol * (1 + |b|).
 * Other types: cudaErrorInvalidValue. */
cudaError_t tg_compare_tol(const void *a, const void *b, size_t n, int dtype, double tol,
                           unsigned long long *res, cudaStream_t s);

/* A kernel over every SM, as many CTAs as fit, that spins up to ns nanoseconds (CTAs end at
 * eight different times) on stream s: other kernels find the SMs held, then freed a few at a
 * time. sink: device memory it may write. */
cudaError_t tg_busy(long long ns, unsigned long long *sink, cudaStream_t s);

#ifdef __cplusplus
}
#endif
#endif
