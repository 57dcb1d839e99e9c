/* emu_internal.h — what the emulation's scheduler (emu.cc) and the interpreter's instantiations
 * (emu_cta_plain.cc, emu_cta_traced.cc) share: the host platform of runtime/interp.h. The
 * instantiations live in translation units of their own so that they compile once, in parallel,
 * for every test program that links the emulation (weft_emu). C++17. */
#ifndef WEFT_TESTS_EMU_INTERNAL_H
#define WEFT_TESTS_EMU_INTERNAL_H

#include "emu.h"
#include "hop.h"

#include <atomic>
#include <functional>
#include <linux/futex.h>
#include <pthread.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>

namespace weft_emu {

using weft_rt::Pack;

/* ---- scheduling the emulated threads -------------------------------------------------------
 * By default every emulated thread of a launch is a coroutine (ucontext) on the calling thread,
 * run round robin: a waiting thread (pause(), a CTA barrier) yields to the next. Thousands of
 * waits per launch then cost microseconds, not context switches, and results do not depend on
 * how many cores the machine has. Under ThreadSanitizer (or EmuComm::os_threads) each emulated
 * thread is an OS thread instead, so that the sanitizer sees real concurrency; a waiter there
 * sleeps until some thread publishes something (every flag store bumps an epoch). */
struct Coro {
    ucontext_t ctx;
    char *stack = nullptr;
    void *fake = nullptr; /* AddressSanitizer's fake stack while switched away */
    bool done = false;
    uint64_t start_ns = 0; /* not started before (a late rank) */
    std::function<void()> fn;
};

constexpr size_t CORO_STACK = (size_t)256 << 10;

struct Sched {
    ucontext_t main;
    std::vector<Coro> co;
    Coro *cur = nullptr;
    void *main_fake = nullptr; /* the launching thread's, for AddressSanitizer */
    const void *main_bottom = nullptr;
    size_t main_size = 0;
    uint64_t round = 0; /* the scheduler's rounds so far (HostPlat8::warp_sync) */
};
extern thread_local Sched *g_sched;

/* Back to the scheduler; it resumes this coroutine on its next round. */
void coro_yield();

struct CtaSync {
    pthread_barrier_t bar; /* OS threads */
    int arrived = 0;       /* coroutines */
    unsigned gen = 0;
    uint64_t flip = 0; /* the round a warp barrier opened in (HostPlat8::warp_sync) */
    int flag[2];
    const char *sred[4 * WEFT_RT_MAX_FUSE];
    weft_rt::RunSmem rsm;
    weft_rt::HopSmem hsm;
};

extern std::atomic<uint32_t> g_epoch;
extern std::atomic<int> g_sleepers;
/* Wakes OS-thread waiters after a store (nothing to do under coroutines). */
void bump();

struct HostPlat {
    CtaSync *cs;
    int t, n, ph;
    /* LL128 (interp.h): a thread takes a whole line, so a "warp" is one thread */
    static constexpr int LG = 1;
    static bool warp_any(bool v) {
        return v;
    }
    static bool flag_leader() {
        return true;
    }
    static void warp_sync() {}

    const char **sred() const {
        return cs->sred;
    }
    weft_rt::RunSmem *rsm() const {
        return &cs->rsm;
    }
    weft_rt::HopSmem *hsm() const {
        return &cs->hsm;
    }
    int tid() const {
        return t;
    }
    int nthreads() const {
        return n;
    }
    void sync() {
        if (g_sched == nullptr) {
            pthread_barrier_wait(&cs->bar);
            return;
        }
        unsigned g = cs->gen;
        if (++cs->arrived == n) {
            cs->arrived = 0;
            cs->gen++;
            return;
        }
        while (cs->gen == g)
            coro_yield();
    }
    bool sync_or(bool v) {
        ph ^= 1;
        if (v) __atomic_store_n(&cs->flag[ph], 1, __ATOMIC_RELAXED);
        sync();
        bool r = __atomic_load_n(&cs->flag[ph], __ATOMIC_RELAXED) != 0;
        sync();
        if (t == 0) __atomic_store_n(&cs->flag[ph], 0, __ATOMIC_RELAXED);
        return r;
    }
    static uint64_t ld_acq_sys(const uint64_t *p) {
        return __atomic_load_n(p, __ATOMIC_ACQUIRE);
    }
    static uint64_t ld_acq_gpu(const uint64_t *p) {
        return __atomic_load_n(p, __ATOMIC_ACQUIRE);
    }
    static uint64_t ld_rlx(const uint64_t *p) {
        return __atomic_load_n(p, __ATOMIC_RELAXED);
    }
    static void st_rel_sys(uint64_t *p, uint64_t v) {
        __atomic_store_n(p, v, __ATOMIC_RELEASE);
        bump();
    }
    static void st_rel_gpu(uint64_t *p, uint64_t v) {
        __atomic_store_n(p, v, __ATOMIC_RELEASE);
        bump();
    }
    static void st_rlx(uint64_t *p, uint64_t v) {
        __atomic_store_n(p, v, __ATOMIC_RELAXED);
        bump();
    }
    static uint32_t ld_rlx32(const uint32_t *p) {
        return __atomic_load_n(p, __ATOMIC_RELAXED);
    }
    static void st_rlx32(uint32_t *p, uint32_t v) {
        __atomic_store_n(p, v, __ATOMIC_RELAXED);
        bump();
    }
    static bool claim(uint32_t *p) {
        uint32_t z = 0;
        return __atomic_compare_exchange_n(p, &z, 1u, false, __ATOMIC_ACQ_REL, __ATOMIC_RELAXED);
    }
    /* What the fences order on the GPU (the watchdog record, the epoch) is read here only
     * after the threads are joined. */
    static void fence_sys() {
#if !defined(__SANITIZE_THREAD__)
        __atomic_thread_fence(__ATOMIC_SEQ_CST);
#endif
    }
    static void grid_wait() {}
    static uint64_t now_ns() {
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
    }
    /* Back to the caller's check when anything was published since this thread's last pause;
     * otherwise sleep until something is (at most 2 ms). */
    static void pause() {
        if (g_sched) {
            coro_yield();
            return;
        }
        static thread_local uint32_t seen;
        uint32_t e = g_epoch.load(std::memory_order_acquire);
        if (e != seen) {
            seen = e;
            return;
        }
        g_sleepers.fetch_add(1, std::memory_order_acq_rel);
        struct timespec ts = {0, 2000000};
        syscall(SYS_futex, (uint32_t *)&g_epoch, FUTEX_WAIT_PRIVATE, e, &ts, nullptr, 0);
        g_sleepers.fetch_sub(1, std::memory_order_acq_rel);
        seen = g_epoch.load(std::memory_order_acquire);
    }
    static Pack ld_pack(const char *p) {
        Pack v;
        memcpy(&v, p, 16);
        return v;
    }
    static void st_pack(char *p, Pack v) {
        memcpy(p, &v, 16);
    }
    template <class U> static U ld(const char *p) {
        U u;
        memcpy(&u, p, sizeof u);
        return u;
    }
    template <class U> static void st(char *p, U u) {
        memcpy(p, &u, sizeof u);
    }
    /* An LL line is two 8-byte halves, each written at once (as on the GPU). */
    static weft_rt::Line ll_ld(const char *line) {
        uint64_t a = __atomic_load_n((const uint64_t *)(const void *)line, __ATOMIC_RELAXED);
        uint64_t b = __atomic_load_n((const uint64_t *)(const void *)(line + 8), __ATOMIC_RELAXED);
        return weft_rt::Line{(uint32_t)a, (uint32_t)(a >> 32), (uint32_t)b, (uint32_t)(b >> 32)};
    }
    static void ll_st(char *line, uint32_t d0, uint32_t f0, uint32_t d1, uint32_t f1) {
        __atomic_store_n((uint64_t *)(void *)line, (uint64_t)d0 | (uint64_t)f0 << 32,
                         __ATOMIC_RELAXED);
        __atomic_store_n((uint64_t *)(void *)(line + 8), (uint64_t)d1 | (uint64_t)f1 << 32,
                         __ATOMIC_RELAXED);
        bump();
    }

    /* An LL128 unit: 16 bytes, its upper half (a line's flag in its last unit) loaded first with
     * an acquire and stored last with a release, so that a thread that stores a line's units in
     * order and one that loads them in reverse see the line whole, as a warp does on the GPU. */
    static Pack ll128_ld(const char *u) {
        Pack v;
        v.hi = __atomic_load_n((const uint64_t *)(const void *)(u + 8), __ATOMIC_ACQUIRE);
        v.lo = __atomic_load_n((const uint64_t *)(const void *)u, __ATOMIC_RELAXED);
        return v;
    }
    static void ll128_st(char *u, Pack v, uint64_t flag, bool isflag) {
        if (isflag) v.hi = flag;
        __atomic_store_n((uint64_t *)(void *)u, v.lo, __ATOMIC_RELAXED);
        __atomic_store_n((uint64_t *)(void *)(u + 8), v.hi, __ATOMIC_RELEASE);
        bump();
    }
};

/* The host platform with the GPU's LL128 lanes: eight threads take a line, one 16-byte unit each,
 * and the CTA is one warp (its votes are CTA barriers), so that the emulation runs the lane
 * arithmetic the GPU runs (EmuComm::ll128_lanes; the CTA's threads must be 8, 16, 24 or 32).
 * Coroutines switch only at waits and barriers (warp_sync), so the line a warp stores after its
 * barrier is whole before any other CTA looks, as the GPU's one instruction makes it; under OS
 * threads it is not (no test runs it so). */
struct HostPlat8 : HostPlat {
    static constexpr int LG = 8;
    bool warp_any(bool v) {
        return sync_or(v);
    }
    bool flag_leader() const {
        return t == LG - 1;
    }
    /* The barrier before a warp's line loads and stores, after which every thread goes on in
     * the round after the one it opened in, so all in one round, in order, one after the other
     * with nothing between (a thread that left the barrier in the round it opened would store
     * or load a line's unit a round before the others theirs). */
    void warp_sync() {
        if (g_sched == nullptr) {
            sync();
            return;
        }
        unsigned g = cs->gen;
        if (++cs->arrived == n) {
            cs->arrived = 0;
            cs->flip = g_sched->round;
            cs->gen++;
        } else {
            while (cs->gen == g)
                coro_yield();
        }
        while (g_sched->round <= cs->flip)
            coro_yield();
    }
};

using CtaFn = void (*)(const weft_rargs *, const weft_rank_args *, int, int, CtaSync *, int, int);

/* One emulated thread of a CTA running the interpreter (TR: the tracing variant, used only when
 * the launch is traced; LLK: the latency kernel; as weft_call_variant picks them on the GPU). */
template <bool TR, class T, class Op, bool LLK = false, bool L128 = false, class HP = HostPlat>
void cta_thread(const weft_rargs *c, const weft_rank_args *a, int tb, int g, CtaSync *cs, int t,
                int n) {
    HP p;
    p.cs = cs, p.t = t, p.n = n, p.ph = 0;
    weft_rt::Interp<HP, T, Op, TR, LLK, L128> in(p, *c, *a, tb, g);
    in.run();
}

/* One emulated thread of CTA b of rank c->r[0] on the one-hop kernel (hop.h). */
template <class T, class Op>
void hop_thread(const weft_hop_kargs *c, int b, CtaSync *cs, int t, int n) {
    HostPlat p;
    p.cs = cs, p.t = t, p.n = n, p.ph = 0;
    weft_rt::Hop<HostPlat, T, Op> h(p, *c, c->r[0], b);
    h.run();
}
using HopFn = void (*)(const weft_hop_kargs *, int, CtaSync *, int, int);
extern const HopFn cta_hop[WEFT_RT_NKERNELS]; /* emu_cta_hop.cc */

/* Per kernel index (WEFT_RT_KERNEL_LIST), in weft_rt_kvariant order: emu_cta_plain.cc,
 * emu_cta_traced.cc, emu_cta_ll.cc, emu_cta_ll128.cc. */
extern const CtaFn cta_plain[WEFT_RT_NKERNELS];
extern const CtaFn cta_traced[WEFT_RT_NKERNELS];
extern const CtaFn cta_ll[WEFT_RT_NKERNELS];
extern const CtaFn cta_ll128[WEFT_RT_NKERNELS];
extern const CtaFn cta_ll128w[WEFT_RT_NKERNELS]; /* the same on HostPlat8 */

} // namespace weft_emu

#endif
