// kernels.cu — the interpreter on the GPU behind the plain C functions of kernels_internal.h:
// the table of the 35 kernel instantiations (compiled in the shards, kernels_interp.cuh), the avg
// scaling pass, and the NCCL device-API helpers (device communicator, LSA peer pointers).
#include "kernels_internal.h"
#include "ops.h"

#include <nccl.h>
#include <nccl_device.h>

#include <type_traits>

namespace {

using weft_rt::bf16;
using weft_rt::f16;

/* One row per variant (weft_rt_kvariant). Filled by the shards once, on first use (C++
 * guarantees one thread runs the initializer). */
struct KernelTable {
    const void *fn[WEFT_RT_KVARIANTS][WEFT_RT_NKERNELS];
    KernelTable() : fn{} {
        const void **rows[WEFT_RT_KVARIANTS];
        for (int v = 0; v < WEFT_RT_KVARIANTS; v++)
            rows[v] = fn[v];
#define WEFT_X_(k) weft_rt_kernels_shard##k(rows);
        WEFT_RT_SHARD_LIST(WEFT_X_)
#undef WEFT_X_
    }
};
const KernelTable &kernels() {
    static const KernelTable t;
    return t;
}

/* ---- avg: the sum, then divided by the rank count as NCCL defines ncclAvg -------------- */
template <class T> __device__ __forceinline__ T avg_of(T x, int n) {
    if constexpr (std::is_floating_point<T>::value)
        return x * (T)(1.0 / n);
    else
        return (T)(x / (T)n);
}
template <> __device__ __forceinline__ f16 avg_of<f16>(f16 x, int n) {
    return __hmul(x, __float2half(1.0f / (float)n));
}
template <> __device__ __forceinline__ bf16 avg_of<bf16>(bf16 x, int n) {
    return __hmul(x, __float2bfloat16(1.0f / (float)n));
}

template <class T> __global__ void weft_scale(T *p, int64_t n, int nranks) {
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n;
         i += (int64_t)gridDim.x * blockDim.x)
        p[i] = avg_of<T>(p[i], nranks);
}

__global__ void weft_peer_ptrs(ncclWindow_t win, int nranks, void **out) {
    int p = threadIdx.x;
    if (p < nranks) out[p] = ncclGetPeerPointer(win, 0, p);
}

} // namespace

namespace {
/* Programmatic stream serialization: a launch may begin while the stream's previous kernel
 * finishes (the kernels wait for it before touching memory it may write). Cooperative: CTAs
 * that wait for each other's steps must all be resident, so the grid is started whole (one CTA
 * waits on nothing of its own launch). */
cudaError_t launch_ex(const void *fn, void **args, int nblocks, int nthreads, int cooperative,
                      cudaStream_t stream) {
    cudaLaunchAttribute attr[2];
    unsigned nattr = 1;
    attr[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
    attr[0].val.programmaticStreamSerializationAllowed = 1;
    if (cooperative && nblocks > 1) {
        attr[1].id = cudaLaunchAttributeCooperative;
        attr[1].val.cooperative = 1;
        nattr = 2;
    }
    cudaLaunchConfig_t cfg = {};
    cfg.gridDim = dim3((unsigned)nblocks);
    cfg.blockDim = dim3((unsigned)nthreads);
    cfg.dynamicSmemBytes = 0;
    cfg.stream = stream;
    cfg.attrs = attr;
    cfg.numAttrs = nattr;
    return cudaLaunchKernelExC(&cfg, fn, args);
}
} // namespace

static_assert(sizeof(ncclDevComm) <= WEFT_RT_DEVCOMM_BYTES, "ncclDevComm grew");
static_assert(sizeof(weft_kargs) <= 4096, "kernel arguments too large");
static_assert(sizeof(weft_hop_kargs) <= 4096, "one-hop kernel arguments too large");

extern "C" {

cudaError_t weft_rt_kernel_launch(int index, weft_rt_kvariant v, int cooperative,
                                  const weft_kargs *ka, int nblocks, int nthreads,
                                  cudaStream_t stream) {
    if (index < 0 || index >= WEFT_RT_NKERNELS || (unsigned)v >= WEFT_RT_KVARIANTS || nblocks < 1 ||
        nthreads < 32 || nthreads > WEFT_RT_NTHREADS || nthreads % 32 != 0)
        return cudaErrorInvalidValue;
    const void *fn = kernels().fn[v][index];
    if (!fn) return cudaErrorInvalidDeviceFunction; /* refused before: weft_rt_kernel_built */
    void *args[] = {(void *)ka};
    return launch_ex(fn, args, nblocks, nthreads, cooperative, stream);
}

cudaError_t weft_rt_hop_launch(int index, const weft_hop_kargs *ka, int nblocks, int nthreads,
                               int cooperative, cudaStream_t stream) {
    if (index < 0 || index >= WEFT_RT_NKERNELS || nblocks < 1 || nthreads < 32 ||
        nthreads > WEFT_RT_NTHREADS || nthreads % 32 != 0)
        return cudaErrorInvalidValue;
    const void *fn = kernels().fn[WEFT_RT_KV_HOP][index];
    if (!fn) return cudaErrorInvalidDeviceFunction;
    void *args[] = {(void *)ka};
    /* as the interpreter's; cooperative where several ranks share the launch (loopback) and
     * their CTAs might not all be resident at once */
    return launch_ex(fn, args, nblocks, nthreads, cooperative, stream);
}

int weft_rt_kernel_built(int index, weft_rt_kvariant v) {
    return index >= 0 && index < WEFT_RT_NKERNELS && (unsigned)v < WEFT_RT_KVARIANTS &&
           kernels().fn[v][index] != NULL;
}

int weft_rt_kernel_max_blocks(int index) {
    int dev = 0, sms = 0, per = 0;
    if (!weft_rt_kernel_built(index, WEFT_RT_KV_PLAIN)) return 0;
    if (cudaGetDevice(&dev) != cudaSuccess ||
        cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev) != cudaSuccess)
        return 0;
    /* The general kernel, traced or not, and the LL128 kernel: a call must fit whichever of
     * them runs it. The latency kernel, compiled for one CTA an SM (no spills), serves a launch
     * only where it fits itself (weft_rt_kernel_capacity); the general kernel serves the others. */
    for (int v = 0; v < WEFT_RT_KVARIANTS; v++) {
        int pv = 0;
        if (v == WEFT_RT_KV_LL || v == WEFT_RT_KV_HOP || !kernels().fn[v][index]) continue;
        if (cudaOccupancyMaxActiveBlocksPerMultiprocessor(&pv, kernels().fn[v][index],
                                                          WEFT_RT_NTHREADS, 0) != cudaSuccess)
            return 0;
        per = v == 0 || pv < per ? pv : per;
    }
    return sms * per;
}

int weft_rt_kernel_capacity(int dev, int index, weft_rt_kvariant v, int nthreads) {
    /* per device, variant, kernel and thread count (32 .. WEFT_RT_NTHREADS in warps), cached:
     * every launch of the latency kernel asks it, with its communicator's device current */
    enum { MAXDEV = 64, NW = WEFT_RT_NTHREADS / 32 };
    static int cache[MAXDEV][WEFT_RT_KVARIANTS][WEFT_RT_NKERNELS][NW];
    int sms = 0, per = 0;
    if (!weft_rt_kernel_built(index, v) || nthreads < 32 || nthreads > WEFT_RT_NTHREADS ||
        nthreads % 32 != 0 || dev < 0)
        return 0;
    int *slot = dev < MAXDEV ? &cache[dev][v][index][nthreads / 32 - 1] : NULL;
    int got = slot ? __atomic_load_n(slot, __ATOMIC_RELAXED) : 0;
    if (got > 0) return got;
    if (cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev) != cudaSuccess ||
        cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per, kernels().fn[v][index], nthreads, 0) !=
            cudaSuccess)
        return 0;
    got = sms * per;
    if (slot && got > 0) __atomic_store_n(slot, got, __ATOMIC_RELAXED);
    return got;
}

int weft_rt_device_max_blocks(void) {
    /* over the kernels this build has (WEFT_KERNELS may leave some out) */
    int m = 0, any = 0;
    for (int i = 0; i < WEFT_RT_NKERNELS; i++) {
        if (!weft_rt_kernel_built(i, WEFT_RT_KV_PLAIN)) continue;
        int b = weft_rt_kernel_max_blocks(i);
        if (!any || b < m) m = b;
        any = 1;
    }
    return m;
}

cudaError_t weft_rt_scale_launch(void *buf, int64_t n, weft_dtype dt, int nranks,
                                 cudaStream_t stream) {
    if (n <= 0) return cudaSuccess;
    int64_t nb64 = (n + 511) / 512;
    unsigned nb = (unsigned)(nb64 < 1024 ? nb64 : 1024);
    switch (dt) {
#define WEFT_SCALE_(id, T)                                                                         \
    case WEFT_DTYPE_##id: weft_scale<T><<<nb, 512, 0, stream>>>((T *)buf, n, nranks); break;
        WEFT_SCALE_(INT8, int8_t)
        WEFT_SCALE_(UINT8, uint8_t)
        WEFT_SCALE_(INT32, int32_t)
        WEFT_SCALE_(UINT32, uint32_t)
        WEFT_SCALE_(INT64, int64_t)
        WEFT_SCALE_(UINT64, uint64_t)
        WEFT_SCALE_(HALF, f16)
        WEFT_SCALE_(FLOAT, float)
        WEFT_SCALE_(DOUBLE, double)
        WEFT_SCALE_(BFLOAT16, bf16)
#undef WEFT_SCALE_
    default: return cudaErrorInvalidValue;
    }
    return cudaGetLastError();
}

int weft_rt_devcomm_create(void *create_fn, ncclComm_t comm, void *out) {
    typedef ncclResult_t (*fn_t)(ncclComm_t, const ncclDevCommRequirements *, ncclDevComm *);
    ncclDevCommRequirements reqs;
    memset(&reqs, 0, sizeof reqs); /* no barriers, no multimem: weft brings its own flags */
    return (int)((fn_t)create_fn)(comm, &reqs, (ncclDevComm *)out);
}

void weft_rt_devcomm_info(const void *devcomm, int *lsa_rank, int *lsa_size, int *nranks) {
    const ncclDevComm *dc = (const ncclDevComm *)devcomm;
    *lsa_rank = dc->lsaRank;
    *lsa_size = dc->lsaSize;
    *nranks = dc->nRanks;
}

int weft_rt_devcomm_destroy(void *destroy_fn, ncclComm_t comm, const void *devcomm) {
    typedef ncclResult_t (*fn_t)(ncclComm_t, const ncclDevComm *);
    return (int)((fn_t)destroy_fn)(comm, (const ncclDevComm *)devcomm);
}

cudaError_t weft_rt_peer_pointers(ncclWindow_t win, int nranks, void **host_out,
                                  cudaStream_t stream) {
    void **d = nullptr;
    cudaError_t e = cudaMalloc((void **)&d, (size_t)nranks * sizeof(void *));
    if (e != cudaSuccess) return e;
    weft_peer_ptrs<<<1, (unsigned)((nranks + 31) / 32 * 32), 0, stream>>>(win, nranks, d);
    e = cudaGetLastError();
    if (e == cudaSuccess)
        e = cudaMemcpyAsync(host_out, d, (size_t)nranks * sizeof(void *), cudaMemcpyDeviceToHost,
                            stream);
    if (e == cudaSuccess) e = cudaStreamSynchronize(stream);
    cudaFree(d);
    return e;
}

} // extern "C"
