// kernels.cu — the interpreter on the GPU: the device platform for interp.h, the 35 kernel
// instantiations, the avg scaling pass, and the NCCL device-API helpers (device communicator,
// LSA peer pointers); all behind the plain C functions of kernels_internal.h.
#include "interp.h"
#include "kernels_internal.h"

#include <nccl.h>
#include <nccl_device.h>

namespace {

using weft_rt::Pack;

struct DevPlat {
    const char **sr;
    weft_rt::RunSmem *rs;
    __device__ __forceinline__ const char **sred() const {
        return sr;
    }
    __device__ __forceinline__ weft_rt::RunSmem *rsm() const {
        return rs;
    }
    __device__ __forceinline__ int tid() const {
        return threadIdx.x;
    }
    __device__ __forceinline__ int nthreads() const {
        return blockDim.x;
    }
    __device__ __forceinline__ void sync() {
        __syncthreads();
    }
    __device__ __forceinline__ bool sync_or(bool v) {
        return __syncthreads_or(v) != 0;
    }
    static __device__ __forceinline__ uint64_t ld_acq_sys(const uint64_t *p) {
        uint64_t v;
        asm volatile("ld.acquire.sys.global.u64 %0, [%1];" : "=l"(v) : "l"(p) : "memory");
        return v;
    }
    static __device__ __forceinline__ uint64_t ld_acq_gpu(const uint64_t *p) {
        uint64_t v;
        asm volatile("ld.acquire.gpu.global.u64 %0, [%1];" : "=l"(v) : "l"(p) : "memory");
        return v;
    }
    static __device__ __forceinline__ uint64_t ld_rlx(const uint64_t *p) {
        uint64_t v;
        asm volatile("ld.relaxed.sys.global.u64 %0, [%1];" : "=l"(v) : "l"(p) : "memory");
        return v;
    }
    /* As NCCL publishes a FIFO step: a fence, then the flag (other threads' stores are ordered
     * before it by the CTA barrier that precedes every call). */
    static __device__ __forceinline__ void st_rel_sys(uint64_t *p, uint64_t v) {
        asm volatile("fence.acq_rel.sys;\n\tst.relaxed.sys.global.u64 [%0], %1;" ::"l"(p), "l"(v)
                     : "memory");
    }
    static __device__ __forceinline__ void st_rel_gpu(uint64_t *p, uint64_t v) {
        asm volatile("fence.acq_rel.gpu;\n\tst.relaxed.gpu.global.u64 [%0], %1;" ::"l"(p), "l"(v)
                     : "memory");
    }
    static __device__ __forceinline__ void st_rlx(uint64_t *p, uint64_t v) {
        asm volatile("st.relaxed.sys.global.u64 [%0], %1;" ::"l"(p), "l"(v) : "memory");
    }
    static __device__ __forceinline__ uint32_t ld_rlx32(const uint32_t *p) {
        uint32_t v;
        asm volatile("ld.relaxed.sys.global.u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
        return v;
    }
    static __device__ __forceinline__ void st_rlx32(uint32_t *p, uint32_t v) {
        asm volatile("st.relaxed.sys.global.u32 [%0], %1;" ::"l"(p), "r"(v) : "memory");
    }
    static __device__ __forceinline__ bool claim(uint32_t *p) {
        return atomicCAS(p, 0u, 1u) == 0u;
    }
    static __device__ __forceinline__ void fence_sys() {
        __threadfence_system();
    }
    /* Programmatic dependent launch: this kernel may have started before the previous kernel
     * of the stream ended; wait here until it has, and its memory is visible. A no-op when the
     * launch was not programmatic. */
    static __device__ __forceinline__ void grid_wait() {
        asm volatile("griddepcontrol.wait;" ::: "memory");
    }
    static __device__ __forceinline__ uint64_t now_ns() {
        uint64_t t;
        asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
        return t;
    }
    static __device__ __forceinline__ void pause() {}
    /* Data that other CTAs or GPUs wrote is read through the L2 (.cg), never a stale L1. */
    static __device__ __forceinline__ Pack ld_pack(const char *p) {
        Pack v;
        asm volatile("ld.global.cg.v2.u64 {%0, %1}, [%2];"
                     : "=l"(v.lo), "=l"(v.hi)
                     : "l"(p)
                     : "memory");
        return v;
    }
    static __device__ __forceinline__ void st_pack(char *p, Pack v) {
        asm volatile("st.global.v2.u64 [%0], {%1, %2};" ::"l"(p), "l"(v.lo), "l"(v.hi) : "memory");
    }
    template <class U> static __device__ __forceinline__ U ld(const char *p) {
        U u;
        if constexpr (sizeof(U) == 1) {
            unsigned short x;
            asm volatile("ld.global.cg.u8 %0, [%1];" : "=h"(x) : "l"(p) : "memory");
            unsigned char c = (unsigned char)x;
            memcpy(&u, &c, 1);
        } else if constexpr (sizeof(U) == 2) {
            unsigned short x;
            asm volatile("ld.global.cg.u16 %0, [%1];" : "=h"(x) : "l"(p) : "memory");
            memcpy(&u, &x, 2);
        } else if constexpr (sizeof(U) == 4) {
            unsigned int x;
            asm volatile("ld.global.cg.u32 %0, [%1];" : "=r"(x) : "l"(p) : "memory");
            memcpy(&u, &x, 4);
        } else {
            unsigned long long x;
            asm volatile("ld.global.cg.u64 %0, [%1];" : "=l"(x) : "l"(p) : "memory");
            memcpy(&u, &x, 8);
        }
        return u;
    }
    template <class U> static __device__ __forceinline__ void st(char *p, U u) {
        *reinterpret_cast<U *>(p) = u;
    }
    static __device__ __forceinline__ weft_rt::Line ll_ld(const char *line) {
        weft_rt::Line w;
        asm volatile("ld.volatile.global.v4.u32 {%0, %1, %2, %3}, [%4];"
                     : "=r"(w.d0), "=r"(w.f0), "=r"(w.d1), "=r"(w.f1)
                     : "l"(line)
                     : "memory");
        return w;
    }
    static __device__ __forceinline__ void ll_st(char *line, uint32_t d0, uint32_t f0, uint32_t d1,
                                                 uint32_t f1) {
        asm volatile("st.volatile.global.v4.u32 [%0], {%1, %2, %3, %4};" ::"l"(line), "r"(d0),
                     "r"(f0), "r"(d1), "r"(f1)
                     : "memory");
    }
};

/* Two CTAs of WEFT_RT_NTHREADS per SM: loopback runs every rank's CTAs on one GPU at once. */
template <class T, class Op, bool TR>
__global__ void __launch_bounds__(WEFT_RT_NTHREADS, 2)
    weft_interp(const __grid_constant__ weft_kargs ka) {
    int b = blockIdx.x, s = 0;
    while (s + 1 < ka.nsub && b >= ka.cta_base[s + 1])
        s++;
    b -= ka.cta_base[s];
    /* Once every CTA of this launch is running, the stream's next weft launch may start its
     * own (it waits in grid_wait until this one has ended). */
    asm volatile("griddepcontrol.launch_dependents;");
    int t = b / ka.c.K, g = b - t * ka.c.K, tbi = ka.r[s].tb0 + t;
    __shared__ const char *sred[4 * WEFT_RT_MAX_FUSE];
    __shared__ weft_rt::RunSmem rsm;
    DevPlat p{sred, &rsm};
    weft_rt::Interp<DevPlat, T, Op, TR> in(p, ka.c, ka.r[s], tbi, g);
    in.run();
}

using namespace weft_rt;
#ifdef WEFT_PROBE_ONE /* resource probes (ptxas -v) of one instantiation */
#undef WEFT_RT_KERNEL_LIST
#define WEFT_RT_KERNEL_LIST(X) X(0, float, OpSum)
#endif
/* [0]: untraced launches, no tracing code at all; [1]: launches that record a trace. */
const void *const kernel_fns[2][WEFT_RT_NKERNELS] = {
    {
#define WEFT_X_(i, T, Op) (const void *)weft_interp<T, Op, false>,
        WEFT_RT_KERNEL_LIST(WEFT_X_)
#undef WEFT_X_
    },
    {
#define WEFT_X_(i, T, Op) (const void *)weft_interp<T, Op, true>,
        WEFT_RT_KERNEL_LIST(WEFT_X_)
#undef WEFT_X_
    },
};

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

static_assert(sizeof(ncclDevComm) <= WEFT_RT_DEVCOMM_BYTES, "ncclDevComm grew");
static_assert(sizeof(weft_kargs) <= 4096, "kernel arguments too large");

extern "C" {

cudaError_t weft_rt_kernel_launch(int index, int traced, int cooperative, const weft_kargs *ka,
                                  int nblocks, cudaStream_t stream) {
    if (index < 0 || index >= WEFT_RT_NKERNELS || nblocks < 1) return cudaErrorInvalidValue;
    void *args[] = {(void *)ka};
    /* Programmatic stream serialization: the launch may begin while the stream's previous
     * kernel finishes (the interpreter waits for it before touching memory it may write).
     * Cooperative: CTAs spin on each other's progress, so a CTA that started while another
     * could not (other kernels, another communicator's, holding the SMs) would wait for it;
     * a cooperative grid is started whole. One CTA waits on nothing of its own launch. */
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
    cfg.blockDim = dim3(WEFT_RT_NTHREADS);
    cfg.dynamicSmemBytes = 0;
    cfg.stream = stream;
    cfg.attrs = attr;
    cfg.numAttrs = nattr;
    return cudaLaunchKernelExC(&cfg, kernel_fns[traced ? 1 : 0][index], args);
}

int weft_rt_kernel_max_blocks(int index) {
    int dev = 0, sms = 0, per = 0;
    if (index < 0 || index >= WEFT_RT_NKERNELS) return 0;
    if (cudaGetDevice(&dev) != cudaSuccess ||
        cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev) != cudaSuccess)
        return 0;
    /* Both variants of the kernel: a call must fit whether it is traced or not. */
    for (int v = 0; v < 2; v++) {
        int pv = 0;
        if (cudaOccupancyMaxActiveBlocksPerMultiprocessor(&pv, kernel_fns[v][index],
                                                          WEFT_RT_NTHREADS, 0) != cudaSuccess)
            return 0;
        per = v == 0 || pv < per ? pv : per;
    }
    return sms * per;
}

int weft_rt_device_max_blocks(void) {
    int m = 0;
    for (int i = 0; i < WEFT_RT_NKERNELS; i++) {
        int b = weft_rt_kernel_max_blocks(i);
        if (i == 0 || b < m) m = b;
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
