/* emu.cc — the host platform for runtime/interp.h and the emulated communicator (see emu.h). */
#include "emu.h"

#include "interp.h"

#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <thread>
#include <time.h>
#include <unistd.h>

using weft_rt::Pack;

namespace {

struct CtaSync {
    pthread_barrier_t bar;
    int flag[2];
    const char *sred[WEFT_RT_MAX_FUSE];
};

struct HostPlat {
    CtaSync *cs;
    int t, n, ph;

    const char **sred() const {
        return cs->sred;
    }
    int tid() const {
        return t;
    }
    int nthreads() const {
        return n;
    }
    void sync() {
        pthread_barrier_wait(&cs->bar);
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
    }
    static void st_rel_gpu(uint64_t *p, uint64_t v) {
        __atomic_store_n(p, v, __ATOMIC_RELEASE);
    }
    static void st_rlx(uint64_t *p, uint64_t v) {
        __atomic_store_n(p, v, __ATOMIC_RELAXED);
    }
    static uint32_t ld_rlx32(const uint32_t *p) {
        return __atomic_load_n(p, __ATOMIC_RELAXED);
    }
    static void st_rlx32(uint32_t *p, uint32_t v) {
        __atomic_store_n(p, v, __ATOMIC_RELAXED);
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
    static uint64_t now_ns() {
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
    }
    /* Spinning threads outnumber the cores many times over: yield, and now and then sleep. */
    static void pause() {
        static thread_local unsigned n;
        if (++n % 8 == 0) {
            struct timespec ts = {0, 20000};
            nanosleep(&ts, nullptr);
        } else {
            sched_yield();
        }
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
    }
};

using CtaFn = void (*)(const weft_rargs *, int, CtaSync *, int, int);

template <class T, class Op>
void cta_thread(const weft_rargs *a, int tb, CtaSync *cs, int t, int n) {
    HostPlat p{cs, t, n, 0};
    if (a->trace.rec != nullptr) { /* as the GPU: the tracing variant only when traced */
        weft_rt::Interp<HostPlat, T, Op, true> in(p, *a, tb);
        in.run();
    } else {
        weft_rt::Interp<HostPlat, T, Op, false> in(p, *a, tb);
        in.run();
    }
}

using namespace weft_rt;
const CtaFn cta_fns[WEFT_RT_NKERNELS] = {
#define WEFT_X_(i, T, Op) cta_thread<T, Op>,
    WEFT_RT_KERNEL_LIST(WEFT_X_)
#undef WEFT_X_
};

} // namespace

EmuComm::~EmuComm() {
    for (char *w : win)
        free(w);
    for (weft_dstate *s : state)
        free(s);
    for (auto &p : plans)
        weft_plan_free(&p);
    weft_layout_free(&lay);
}

weft_result EmuComm::attach(int nranks, const std::vector<const weft_algo *> &a,
                            const weft_rt_cfg &c) {
    n = nranks;
    cfg = c;
    algos = a;
    weft_layout_init(&lay, n);
    lay.nalgos = (int32_t)a.size();
    plans.assign(a.size(), weft_algo_plan{});
    why.assign(a.size(), std::string());
    std::vector<int> ok(a.size());
    for (size_t i = 0; i < a.size(); i++) {
        char w[512] = "";
        ok[i] = weft_plan_eligible(a[i], n, w, sizeof w);
        why[i] = w;
        if (ok[i] && weft_layout_add(&lay, a[i]) != WEFT_OK) return WEFT_ERR_NOMEM;
    }
    if (weft_layout_finish(&lay, &cfg) != WEFT_OK) return WEFT_ERR_NOMEM;
    for (size_t i = 0; i < a.size(); i++) {
        if (!ok[i]) continue;
        char w[512] = "";
        weft_result r = weft_plan_build(a[i], n, &lay, &plans[i], w, sizeof w);
        if (r != WEFT_OK) return r;
    }
    win.assign(n, nullptr);
    state.assign(n, nullptr);
    pos.assign(n, std::vector<uint64_t>(2 * (size_t)(lay.nkeys > 0 ? lay.nkeys : 1), 0));
    sc.assign(n, std::vector<weft_dconn>(lay.nkeys > 0 ? lay.nkeys : 1));
    rc.assign(n, std::vector<weft_dconn>(lay.nkeys > 0 ? lay.nkeys : 1));
    rec.assign(n, std::vector<std::vector<char>>(a.size()));
    prog.assign(n, std::vector<std::vector<weft_dprog>>(a.size()));
    err.assign(n, weft_errrec{});
    start_delay_ms.assign(n, 0);
    for (int r = 0; r < n; r++) {
        win[r] = (char *)aligned_alloc(4096, lay.bytes);
        state[r] = (weft_dstate *)aligned_alloc(4096, (sizeof(weft_dstate) + 4095) / 4096 * 4096);
        if (!win[r] || !state[r]) return WEFT_ERR_NOMEM;
        memset(win[r], 0, lay.bytes);
        memset(state[r], 0, sizeof(weft_dstate));
    }
    for (int r = 0; r < n; r++) {
        weft_layout_conns(&lay, &cfg, r, win.data(), pos[r].data(), sc[r].data(), rc[r].data());
        for (size_t i = 0; i < a.size(); i++) {
            if (!plans[i].ranks) continue;
            const weft_rank_plan &rp = plans[i].ranks[r];
            rec[r][i].resize((size_t)weft_plan_rec_bytes(&rp) * (size_t)rp.ntbs);
            weft_plan_records(&rp, sc[r].data(), rc[r].data(), rec[r][i].data());
            prog[r][i].assign((size_t)rp.ntbs, weft_dprog{});
        }
    }
    return WEFT_OK;
}

bool EmuComm::any_error() const {
    for (const weft_errrec &e : err)
        if (e.code) return true;
    return false;
}

weft_result EmuComm::launch(int ai, weft_dtype dt, weft_redop op, size_t count,
                            const std::vector<std::vector<char *>> &bufs) {
    const weft_algo_plan &p = plans[ai];
    if (p.ranks == nullptr) return WEFT_ERR_UNSUPPORTED;
    int reduces = weft_coll_reduces(p.algo->coll);
    int ki = weft_rt_kernel_index(dt, op, reduces);
    if (ki < 0) return WEFT_ERR_UNSUPPORTED;
    std::vector<weft_rargs> ra(n);
    for (int r = 0; r < n; r++) {
        weft_call_geom g;
        weft_result res = weft_call_geometry(&p, &cfg, r, count, weft_dtype_size(dt), reduces, &g);
        if (res != WEFT_OK) return res;
        weft_rargs &x = ra[r];
        memset(&x, 0, sizeof x);
        const weft_rank_plan &rp = p.ranks[r];
        x.rec = rec[r][ai].data(), x.rec_bytes = weft_plan_rec_bytes(&rp);
        x.xsrc = rp.xsrc;
        x.prog = prog[r][ai].data();
        for (int b = 0; b < 3; b++)
            x.buf[b] = bufs[r][b];
        x.count = g.count, x.C = g.C, x.E = g.E, x.k = p.k, x.niter = g.niter;
        x.proto = p.proto;
        x.state = state[r];
        x.peer_win = win.data();
        x.err = &err[r];
        x.timeout_ns = cfg.timeout_ns;
        x.rank = r, x.nranks = n, x.tag = ai;
        if ((size_t)r < trace.size()) x.trace = trace[r];
        x.arrival_off = (int32_t)WEFT_RT_ARRIVAL_OFF(ai);
    }
    std::vector<CtaSync> syncs;
    size_t ncta = 0;
    for (int r = 0; r < n; r++)
        ncta += (size_t)p.ranks[r].ntbs;
    syncs.resize(ncta);
    std::vector<std::thread> th;
    size_t ci = 0;
    CtaFn fn = cta_fns[ki];
    for (int r = 0; r < n; r++)
        for (int t = 0; t < p.ranks[r].ntbs; t++, ci++) {
            CtaSync *cs = &syncs[ci];
            pthread_barrier_init(&cs->bar, nullptr, (unsigned)nthreads);
            cs->flag[0] = cs->flag[1] = 0;
            int delay = start_delay_ms[r];
            for (int i = 0; i < nthreads; i++)
                th.emplace_back([=, &ra] {
                    if (delay) usleep((useconds_t)delay * 1000);
                    fn(&ra[r], t, cs, i, nthreads);
                });
        }
    for (auto &x : th)
        x.join();
    for (auto &cs : syncs)
        pthread_barrier_destroy(&cs.bar);
    return any_error() ? WEFT_ERR_TIMEOUT : WEFT_OK;
}
