// gpu_util.cu — device helpers for the GPU test and the benchmark: deterministic random inputs
// of every NCCL type (and inputs whose reductions are exact in any order), and an elementwise
// bitwise comparison that counts differences; a kernel that holds the SMs for a while.
#include "gpu_util.h"

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <stdint.h>

#include <type_traits>

namespace {

__device__ __forceinline__ uint32_t mix(uint32_t x) {
    x ^= x >> 16;
    x *= 0x7feb352dU;
    x ^= x >> 15;
    x *= 0x846ca68bU;
    x ^= x >> 16;
    return x;
}

/* Floats in [-1, 1) (prod: [0.5, 1.5), so that products stay normal); integers: all bits. */
template <class T> __device__ __forceinline__ T make(uint32_t h, uint32_t h2, int prod);
template <> __device__ __forceinline__ float make<float>(uint32_t h, uint32_t, int prod) {
    float u = (float)(h >> 8) * (1.0f / 16777216.0f);
    return prod ? 0.5f + u : 2.0f * u - 1.0f;
}
template <> __device__ __forceinline__ double make<double>(uint32_t h, uint32_t h2, int prod) {
    double u = ((double)h * 4294967296.0 + (double)h2) * (1.0 / 18446744073709551616.0);
    return prod ? 0.5 + u : 2.0 * u - 1.0;
}
template <> __device__ __forceinline__ __half make<__half>(uint32_t h, uint32_t h2, int prod) {
    return __float2half(make<float>(h, h2, prod));
}
template <>
__device__ __forceinline__ __nv_bfloat16 make<__nv_bfloat16>(uint32_t h, uint32_t h2, int prod) {
    return __float2bfloat16(make<float>(h, h2, prod));
}
template <class T> __device__ __forceinline__ T make_int(uint32_t h, uint32_t h2) {
    return (T)(((uint64_t)h << 32) | h2);
}

template <class T>
__global__ void fill_kernel(T *p, size_t n, uint32_t seed, int rank, int prod, int is_float) {
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
         i += (size_t)gridDim.x * blockDim.x) {
        uint32_t h = mix(
            seed ^ mix((uint32_t)rank * 0x9e3779b9U ^ mix((uint32_t)i ^ (uint32_t)(i >> 32) * 7)));
        uint32_t h2 = mix(h ^ 0x51ed270bU);
        if constexpr (sizeof(T) >= 2 && !std::is_integral<T>::value)
            p[i] = make<T>(h, h2, prod);
        else
            p[i] = make_int<T>(h, h2);
        (void)is_float;
    }
}

/* Values whose sums and products are exact whatever the order, for up to 16 ranks. Sum and avg
 * (NCCL's premultiplied 1/N included, N a power of two): multiples of 1/16 below K/16 in
 * magnitude (half 4, bfloat16 1, float and double 256), so that a partial sum of 16 needs at most
 * 8 (bfloat16: 256 sixteenths), 11 (half) or 17 significant bits. Prod: +-1/2, +-1, +-2, whose
 * products of 16 are powers of two that half still holds (2^-16 as a subnormal). */
__device__ __forceinline__ float exact_val(uint32_t h, int prod, int K) {
    if (prod) {
        float m = (h >> 1) % 3 == 0 ? 0.5f : (h >> 1) % 3 == 1 ? 1.0f : 2.0f;
        return h & 1 ? -m : m;
    }
    return (float)((int)(h % (uint32_t)(2 * K)) - K) * (1.0f / 16.0f);
}

template <class T>
__global__ void fill_exact_kernel(T *p, size_t n, uint32_t seed, int rank, int prod, int K) {
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
         i += (size_t)gridDim.x * blockDim.x) {
        uint32_t h =
            mix(seed ^ 0x2545f491U ^
                mix((uint32_t)rank * 0x9e3779b9U ^ mix((uint32_t)i ^ (uint32_t)(i >> 32) * 7)));
        float v = exact_val(h, prod, K);
        if constexpr (std::is_same<T, __half>::value)
            p[i] = __float2half(v);
        else if constexpr (std::is_same<T, __nv_bfloat16>::value)
            p[i] = __float2bfloat16(v);
        else
            p[i] = (T)v;
    }
}

template <class T>
__global__ void cmp_kernel(const T *a, const T *b, size_t n, unsigned long long *res) {
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
         i += (size_t)gridDim.x * blockDim.x) {
        if (a[i] != b[i]) {
            atomicAdd(&res[0], 1ull);
            atomicMin(&res[1], (unsigned long long)i);
        }
    }
}

template <class T>
__global__ void cmp_tol_kernel(const T *a, const T *b, size_t n, double tol,
                               unsigned long long *res) {
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
         i += (size_t)gridDim.x * blockDim.x) {
        double x = (double)a[i], y = (double)b[i];
        if (!(fabs(x - y) <= tol * (1.0 + fabs(y)))) { /* NaN counts */
            atomicAdd(&res[0], 1ull);
            atomicMin(&res[1], (unsigned long long)i);
        }
    }
}

unsigned grid_for(size_t n) {
    size_t g = (n + 255) / 256;
    return (unsigned)(g < 4096 ? (g ? g : 1) : 4096);
}

/* Block b spins for (b % 8 + 1) / 8 of ns: the SMs come free a few at a time. */
__global__ void busy_kernel(long long ns, unsigned long long *sink) {
    unsigned long long t0, t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
    long long mine = ns / 8 * (long long)(blockIdx.x % 8 + 1);
    unsigned long long acc = 0;
    do {
        acc += t0 ^ threadIdx.x;
        asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    } while ((long long)(t - t0) < mine);
    if (acc == 42) *sink = acc; /* never: keeps the loop */
}

} // namespace

extern "C" {

cudaError_t tg_busy(long long ns, unsigned long long *sink, cudaStream_t s) {
    int dev = 0, sms = 0, per = 0;
    cudaError_t e = cudaGetDevice(&dev);
    if (e == cudaSuccess) e = cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev);
    if (e == cudaSuccess)
        e = cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per, busy_kernel, 256, 0);
    if (e != cudaSuccess) return e;
    busy_kernel<<<sms *(per > 0 ? per : 1), 256, 0, s>>>(ns, sink);
    return cudaGetLastError();
}

cudaError_t tg_fill(void *buf, size_t n, int dtype, int op, uint32_t seed, int rank,
                    cudaStream_t s) {
    if (n == 0) return cudaSuccess;
    int prod = op == 1;
    unsigned g = grid_for(n);
    switch (dtype) {
    case 0: fill_kernel<int8_t><<<g, 256, 0, s>>>((int8_t *)buf, n, seed, rank, prod, 0); break;
    case 1: fill_kernel<uint8_t><<<g, 256, 0, s>>>((uint8_t *)buf, n, seed, rank, prod, 0); break;
    case 2: fill_kernel<int32_t><<<g, 256, 0, s>>>((int32_t *)buf, n, seed, rank, prod, 0); break;
    case 3: fill_kernel<uint32_t><<<g, 256, 0, s>>>((uint32_t *)buf, n, seed, rank, prod, 0); break;
    case 4: fill_kernel<int64_t><<<g, 256, 0, s>>>((int64_t *)buf, n, seed, rank, prod, 0); break;
    case 5: fill_kernel<uint64_t><<<g, 256, 0, s>>>((uint64_t *)buf, n, seed, rank, prod, 0); break;
    case 6: fill_kernel<__half><<<g, 256, 0, s>>>((__half *)buf, n, seed, rank, prod, 1); break;
    case 7: fill_kernel<float><<<g, 256, 0, s>>>((float *)buf, n, seed, rank, prod, 1); break;
    case 8: fill_kernel<double><<<g, 256, 0, s>>>((double *)buf, n, seed, rank, prod, 1); break;
    case 9:
        fill_kernel<__nv_bfloat16><<<g, 256, 0, s>>>((__nv_bfloat16 *)buf, n, seed, rank, prod, 1);
        break;
    default: return cudaErrorInvalidValue;
    }
    return cudaGetLastError();
}

cudaError_t tg_fill_exact(void *buf, size_t n, int dtype, int op, uint32_t seed, int rank,
                          cudaStream_t s) {
    if (n == 0) return cudaSuccess;
    if (dtype < 6 || dtype > 9) return tg_fill(buf, n, dtype, op, seed, rank, s);
    int prod = op == 1;
    unsigned g = grid_for(n);
    switch (dtype) {
    case 6:
        fill_exact_kernel<__half><<<g, 256, 0, s>>>((__half *)buf, n, seed, rank, prod, 64);
        break;
    case 7:
        fill_exact_kernel<float><<<g, 256, 0, s>>>((float *)buf, n, seed, rank, prod, 4096);
        break;
    case 8:
        fill_exact_kernel<double><<<g, 256, 0, s>>>((double *)buf, n, seed, rank, prod, 4096);
        break;
    default:
        fill_exact_kernel<__nv_bfloat16>
            <<<g, 256, 0, s>>>((__nv_bfloat16 *)buf, n, seed, rank, prod, 16);
        break;
    }
    return cudaGetLastError();
}

cudaError_t tg_compare(const void *a, const void *b, size_t n, int esize, unsigned long long *res,
                       cudaStream_t s) {
    unsigned long long init[2] = {0, ~0ull};
    cudaError_t e = cudaMemcpyAsync(res, init, sizeof init, cudaMemcpyHostToDevice, s);
    if (e != cudaSuccess || n == 0) return e;
    unsigned g = grid_for(n);
    switch (esize) {
    case 1:
        cmp_kernel<uint8_t><<<g, 256, 0, s>>>((const uint8_t *)a, (const uint8_t *)b, n, res);
        break;
    case 2:
        cmp_kernel<uint16_t><<<g, 256, 0, s>>>((const uint16_t *)a, (const uint16_t *)b, n, res);
        break;
    case 4:
        cmp_kernel<uint32_t><<<g, 256, 0, s>>>((const uint32_t *)a, (const uint32_t *)b, n, res);
        break;
    case 8:
        cmp_kernel<uint64_t><<<g, 256, 0, s>>>((const uint64_t *)a, (const uint64_t *)b, n, res);
        break;
    default: return cudaErrorInvalidValue;
    }
    return cudaGetLastError();
}

cudaError_t tg_compare_tol(const void *a, const void *b, size_t n, int dtype, double tol,
                           unsigned long long *res, cudaStream_t s) {
    unsigned long long init[2] = {0, ~0ull};
    cudaError_t e = cudaMemcpyAsync(res, init, sizeof init, cudaMemcpyHostToDevice, s);
    if (e != cudaSuccess || n == 0) return e;
    unsigned g = grid_for(n);
    switch (dtype) { /* NCCL's numbering, as tg_fill */
    case 6:
        cmp_tol_kernel<__half><<<g, 256, 0, s>>>((const __half *)a, (const __half *)b, n, tol, res);
        break;
    case 7:
        cmp_tol_kernel<float><<<g, 256, 0, s>>>((const float *)a, (const float *)b, n, tol, res);
        break;
    case 8:
        cmp_tol_kernel<double><<<g, 256, 0, s>>>((const double *)a, (const double *)b, n, tol, res);
        break;
    case 9:
        cmp_tol_kernel<__nv_bfloat16>
            <<<g, 256, 0, s>>>((const __nv_bfloat16 *)a, (const __nv_bfloat16 *)b, n, tol, res);
        break;
    default: return cudaErrorInvalidValue;
    }
    return cudaGetLastError();
}

} // extern "C"
