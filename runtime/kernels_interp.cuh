// kernels_interp.cuh — the interpreter kernel (the device platform for interp.h and the kernel
// template), included by the generated shard files kernels_shardK.cu: shard K instantiates the
// kernels i with i % WEFT_RT_NSHARDS == K (all four variants of each), so that the build compiles
// the 140 instantiations in WEFT_RT_NSHARDS translation units side by side instead of one.
#ifndef WEFT_RT_SHARD
#error "kernels_interp.cuh is included by a kernels_shardK.cu that defines WEFT_RT_SHARD"
#endif
#include "hop.h"
#include "kernels_internal.h"

namespace {

using weft_rt::Pack;

struct DevPlat {
    const char **sr;
    weft_rt::RunSmem *rs;
    weft_rt::HopSmem *hs = nullptr;
    /* LL128 (interp.h): eight lanes of a warp take a line, one 16-byte unit each */
    static constexpr int LG = 8;
    static __device__ __forceinline__ bool warp_any(bool v) {
        return __any_sync(0xffffffffu, v) != 0;
    }
    /* the warp's first flag lane (unit 7 of its first line): it speaks for the warp */
    static __device__ __forceinline__ bool flag_leader() {
        return (threadIdx.x & 31) == LG - 1;
    }
    static __device__ __forceinline__ void warp_sync() {
        __syncwarp();
    }
    __device__ __forceinline__ const char **sred() const {
        return sr;
    }
    __device__ __forceinline__ weft_rt::RunSmem *rsm() const {
        return rs;
    }
    __device__ __forceinline__ weft_rt::HopSmem *hsm() const {
        return hs;
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
     * launch was not programmatic. Only then may the stream's next launch start its own CTAs
     * (once every CTA of this one is past here): triggered at the kernel's start, each launch of
     * a captured chain let the next one start at once, so that a graph of back-to-back calls
     * had many launches' CTAs resident and waiting. */
    static __device__ __forceinline__ void grid_wait() {
        asm volatile("griddepcontrol.wait;" ::: "memory");
        asm volatile("griddepcontrol.launch_dependents;");
    }
    static __device__ __forceinline__ uint64_t now_ns() {
        uint64_t t;
        asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
        return t;
    }
    static __device__ __forceinline__ void pause() {}
#ifdef WEFT_RT_PROBE
    static __device__ __forceinline__ uint64_t clock() {
        return (uint64_t)clock64();
    }
    static __device__ __forceinline__ void probe_add(uint64_t *p, uint64_t v) {
        atomicAdd((unsigned long long *)p, (unsigned long long)v);
    }
    /* A branch on the value: the phase before it ends when the value is in a register. */
    static __device__ __forceinline__ void probe_use(uint64_t v) {
        if (v == 0x5eed5eed5eed5eedull) __trap();
    }
#endif
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
    /* An LL128 unit; the warp's eight lanes of a line issue it together (as NCCL's LL128). */
    static __device__ __forceinline__ Pack ll128_ld(const char *u) {
        Pack v;
        asm volatile("ld.volatile.global.v2.u64 {%0, %1}, [%2];"
                     : "=l"(v.lo), "=l"(v.hi)
                     : "l"(u)
                     : "memory");
        return v;
    }
    /* The unit's upper half becomes flag where isflag holds, chosen inside the one asm block
     * (selp), so that no branch can split a line's lanes into two stores. */
    static __device__ __forceinline__ void ll128_st(char *u, Pack v, uint64_t flag, bool isflag) {
        uint64_t hi = v.hi;
        asm volatile("{\n\t.reg .pred p;\n\tsetp.ne.u32 p, %3, 0;\n\tselp.b64 %0, %4, %0, p;\n\t"
                     "st.volatile.global.v2.u64 [%1], {%2, %0};\n\t}"
                     : "+l"(hi)
                     : "l"(u), "l"(v.lo), "r"((unsigned)isflag), "l"(flag)
                     : "memory");
    }
};

/* Two CTAs of WEFT_RT_NTHREADS per SM: loopback runs every rank's CTAs on one GPU at once. The
 * latency kernel one (206 registers on sm_90, no spills where the general kernel spills 1.3 KB):
 * a launch that would not fit that way runs on the general kernel (comm.c). */
/* LLK: the latency kernel (interp.h), for calls whose messages are LL lines, neither direct
 * nor traced: the same interpreter without the other paths, so that its code is a fraction of
 * the general kernel's. A small call's time is mostly instruction fetch when the path through
 * a 330 KB kernel misses the SM's instruction cache at every turn (docs/runtime-perf.md). */
/* L128: the LL128 kernel (untraced LL128 calls; two CTAs an SM, as the general kernel, so that
 * whatever fits the one fits the other). */
template <class T, class Op, bool TR, bool LLK, bool L128 = false>
__global__ void __launch_bounds__(WEFT_RT_NTHREADS, LLK ? 1 : 2)
    weft_interp(const __grid_constant__ weft_kargs ka) {
    int b = blockIdx.x, s = 0;
    while (s + 1 < ka.nsub && b >= ka.cta_base[s + 1])
        s++;
    b -= ka.cta_base[s];
    int t = b / ka.c.K, g = b - t * ka.c.K, tbi = ka.r[s].tb0 + t;
    __shared__ const char *sred[4 * WEFT_RT_MAX_FUSE];
    __shared__ weft_rt::RunSmem rsm;
    DevPlat p{sred, &rsm};
    weft_rt::Interp<DevPlat, T, Op, TR, LLK, L128> in(p, ka.c, ka.r[s], tbi, g);
    in.run();
}

/* The one-hop kernel (hop.h): CTA b of rank s at blockIdx s * nb + b; a small kernel of its own,
 * so that its few hundred instructions stay in the SM's instruction cache. */
template <class T, class Op>
__global__ void __launch_bounds__(WEFT_RT_NTHREADS)
    weft_hop(const __grid_constant__ weft_hop_kargs ka) {
    int s = blockIdx.x / ka.nb, b = blockIdx.x - s * ka.nb;
    __shared__ weft_rt::HopSmem hsm;
    DevPlat p{nullptr, nullptr, &hsm};
    weft_rt::Hop<DevPlat, T, Op> h(p, ka, ka.r[s], b);
    h.run();
}

/* ---- which kernels this build compiles (CMake's WEFT_KERNELS, WEFT_KERNELS_TRACED) ---- *
 * WEFT_RT_KERNELS_SEL: "all", or a comma-separated list of TYPE:OP in the IR's names
 * (float:sum, bfloat16:max; avg runs on the sum kernel) and "copy" (the collectives that do not
 * reduce). A slot is compiled when some listed call maps to it (weft_rt_kernel_index); a call
 * whose slot is missing is refused at launch, so NCCL serves it. */
#ifndef WEFT_RT_KERNELS_SEL
#define WEFT_RT_KERNELS_SEL "all"
#endif
#ifndef WEFT_RT_KERNELS_TRACED
#define WEFT_RT_KERNELS_TRACED 1
#endif
constexpr const char *kSel = WEFT_RT_KERNELS_SEL;
#define WEFT_X_(id, n, b, v, f) n,
constexpr const char *kTypeNames[] = {WEFT_DTYPES(WEFT_X_)};
#undef WEFT_X_
#define WEFT_X_(id, n, v) n,
constexpr const char *kOpNames[] = {WEFT_REDOPS(WEFT_X_)};
#undef WEFT_X_

/* Whether sel[a, b) is the word w. */
constexpr bool sel_is(const char *sel, int a, int b, const char *w) {
    int i = 0;
    for (; a + i < b; i++)
        if (w[i] != sel[a + i]) return false;
    return w[i] == 0;
}
/* Whether the list entry sel[a, b) is TYPE:OP for type t and op o. */
constexpr bool sel_pair(const char *sel, int a, int b, int t, int o) {
    int c = a;
    while (c < b && sel[c] != ':')
        c++;
    return c < b && sel_is(sel, a, c, kTypeNames[t]) && sel_is(sel, c + 1, b, kOpNames[o]);
}
/* Calls slot I serves in entry sel[a, b): "all", "copy" for slot 0, or a TYPE:OP mapped to I
 * (-1: the entry names nothing known). */
constexpr int sel_entry(const char *sel, int a, int b, int I) {
    if (sel_is(sel, a, b, "all")) return 1;
    if (sel_is(sel, a, b, "copy")) return I == 0;
    for (int t = 0; t < WEFT_DTYPE_COUNT; t++)
        for (int o = 0; o < WEFT_OP_COUNT; o++)
            if (sel_pair(sel, a, b, t, o))
                return weft_rt_kernel_index((weft_dtype)t, (weft_redop)o, 1) == I;
    return -1;
}
/* Slot I's fate under the whole list: 1 compiled, 0 not, -1 the list has an unknown entry. */
constexpr int sel_slot(const char *sel, int I) {
    int want = 0, a = 0;
    for (int b = 0;; b++) {
        if (sel[b] != ',' && sel[b] != 0) continue;
        int e = sel_entry(sel, a, b, I);
        if (e < 0) return -1;
        want |= e;
        if (sel[b] == 0) return want;
        a = b + 1;
    }
}
static_assert(sel_slot(kSel, 0) >= 0, "WEFT_KERNELS: each entry is all, copy or TYPE:OP with "
                                      "the IR's names (float:sum, bfloat16:max, ...)");

/* Shard WEFT_RT_SHARD's slots: a discarded `if constexpr` branch of a template is never
 * instantiated, so every other slot, and every slot WEFT_KERNELS leaves out, costs nothing. */
template <int I, class T, class Op> void put_slot(const void **fn[WEFT_RT_KVARIANTS]) {
    if constexpr (I % WEFT_RT_NSHARDS == WEFT_RT_SHARD && sel_slot(kSel, I) == 1) {
        fn[WEFT_RT_KV_PLAIN][I] = (const void *)weft_interp<T, Op, false, false>;
        fn[WEFT_RT_KV_LL][I] = (const void *)weft_interp<T, Op, false, true>;
        fn[WEFT_RT_KV_LL128][I] = (const void *)weft_interp<T, Op, false, false, true>;
        fn[WEFT_RT_KV_HOP][I] = (const void *)weft_hop<T, Op>;
        if constexpr (WEFT_RT_KERNELS_TRACED)
            fn[WEFT_RT_KV_TRACED][I] = (const void *)weft_interp<T, Op, true, false>;
    }
}

} // namespace

using namespace weft_rt;
#define WEFT_SHARD_FN_(k) weft_rt_kernels_shard##k
#define WEFT_SHARD_FN(k)  WEFT_SHARD_FN_(k)
extern "C" void WEFT_SHARD_FN(WEFT_RT_SHARD)(const void **fn[WEFT_RT_KVARIANTS]) {
#define WEFT_X_(i, T, Op) put_slot<i, T, Op>(fn);
    WEFT_RT_KERNEL_LIST(WEFT_X_)
#undef WEFT_X_
}
