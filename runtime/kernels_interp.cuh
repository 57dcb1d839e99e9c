// kernels_interp.cuh — the interpreter kernel (the device platform for interp.h and the kernel
// template), included by the generated shard files kernels_shardK.cu: shard K instantiates the
// kernels i with i % WEFT_RT_NSHARDS == K (and their traced variants), so that the build compiles
// the 70 instantiations in WEFT_RT_NSHARDS translation units side by side instead of one.
#ifndef WEFT_RT_SHARD
#error "kernels_interp.cuh is included by a kernels_shardK.cu that defines WEFT_RT_SHARD"
#endif
#include "interp.h"
#include "kernels_internal.h"

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

/* Shard WEFT_RT_SHARD's slots: a discarded `if constexpr` branch of a template is never
 * instantiated, so every other slot costs nothing here. */
template <int I, class T, class Op> void put_slot(const void **untraced, const void **traced) {
    if constexpr (I % WEFT_RT_NSHARDS == WEFT_RT_SHARD) {
        untraced[I] = (const void *)weft_interp<T, Op, false>;
        traced[I] = (const void *)weft_interp<T, Op, true>;
    }
}

} // namespace

using namespace weft_rt;
#define WEFT_SHARD_FN_(k) weft_rt_kernels_shard##k
#define WEFT_SHARD_FN(k)  WEFT_SHARD_FN_(k)
extern "C" void WEFT_SHARD_FN(WEFT_RT_SHARD)(const void **untraced, const void **traced) {
#define WEFT_X_(i, T, Op) put_slot<i, T, Op>(untraced, traced);
    WEFT_RT_KERNEL_LIST(WEFT_X_)
#undef WEFT_X_
}
