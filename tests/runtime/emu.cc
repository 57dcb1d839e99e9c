/* emu.cc — the emulated communicator (see emu.h): its scheduler of emulated threads, windows and
 * launches; the interpreter's instantiations are in emu_cta_plain.cc and emu_cta_traced.cc. */
#include "emu_internal.h"

#include <climits>
#include <cstddef>
#include <functional>
#include <sched.h>
#include <stdlib.h>
#include <thread>

using namespace weft_emu;

namespace weft_emu {
thread_local Sched *g_sched = nullptr;
std::atomic<uint32_t> g_epoch{0};
std::atomic<int> g_sleepers{0};

#if defined(__SANITIZE_ADDRESS__)
extern "C" void __sanitizer_start_switch_fiber(void **fake_stack_save, const void *bottom,
                                               size_t size);
extern "C" void __sanitizer_finish_switch_fiber(void *fake_stack_save, const void **bottom_old,
                                                size_t *size_old);
#define SWITCH_START(save, bottom, size)  __sanitizer_start_switch_fiber(save, bottom, size)
#define SWITCH_FINISH(save, bottom, size) __sanitizer_finish_switch_fiber(save, bottom, size)
#else
#define SWITCH_START(save, bottom, size)  ((void)0)
#define SWITCH_FINISH(save, bottom, size) ((void)0)
#endif

/* Back to the scheduler; it resumes this coroutine on its next round. */
void coro_yield() {
    Sched *s = g_sched;
    Coro *c = s->cur;
    SWITCH_START(&c->fake, s->main_bottom, s->main_size);
    swapcontext(&c->ctx, &s->main);
    SWITCH_FINISH(c->fake, nullptr, nullptr);
}

void bump() {
    if (g_sched) return;
    g_epoch.fetch_add(1, std::memory_order_release);
    if (g_sleepers.load(std::memory_order_acquire) > 0)
        syscall(SYS_futex, (uint32_t *)&g_epoch, FUTEX_WAKE_PRIVATE, INT32_MAX, nullptr, nullptr,
                0);
}
} // namespace weft_emu

namespace {

uint64_t mono_ns() {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

void coro_entry(unsigned lo, unsigned hi) {
    Coro *c = (Coro *)(((uintptr_t)hi << 32) | lo);
    Sched *s = g_sched;
    SWITCH_FINISH(nullptr, &s->main_bottom, &s->main_size);
    c->fn();
    c->done = true;
    SWITCH_START(nullptr, s->main_bottom, s->main_size); /* this stack is done with */
    setcontext(&s->main);
}

/* Apart: getcontext returns twice, which the caller's locals must not see. */
__attribute__((noinline)) void coro_prepare(Coro &c, char *stack) {
    c.stack = stack;
    getcontext(&c.ctx);
    c.ctx.uc_stack.ss_sp = c.stack;
    c.ctx.uc_stack.ss_size = CORO_STACK;
    c.ctx.uc_link = nullptr;
    uintptr_t p = (uintptr_t)&c;
    makecontext(&c.ctx, (void (*)())coro_entry, 2, (unsigned)(p & 0xffffffffu),
                (unsigned)(p >> 32));
}

/* Runs every coroutine to completion, round robin. Stacks are kept for the next launch and freed
 * at exit (LeakSanitizer checks after the globals are destroyed). */
struct Stacks : std::vector<char *> {
    ~Stacks() {
        for (char *p : *this)
            free(p);
    }
} g_stacks;

void coro_run(Sched &s) {
    g_sched = &s;
    size_t need = s.co.size();
    while (g_stacks.size() < need)
        g_stacks.push_back((char *)malloc(CORO_STACK));
    for (size_t i = 0; i < need; i++)
        coro_prepare(s.co[i], g_stacks[i]);
    size_t left = need;
    while (left > 0) {
        uint64_t now = mono_ns();
        bool ran = false;
        s.round++;
        for (Coro &c : s.co) {
            if (c.done || c.start_ns > now) continue;
            s.cur = &c;
            SWITCH_START(&s.main_fake, c.stack, CORO_STACK);
            swapcontext(&s.main, &c.ctx);
            SWITCH_FINISH(s.main_fake, nullptr, nullptr);
            ran = true;
            if (c.done) left--;
        }
        if (!ran) usleep(200); /* only late starters remain */
    }
    s.cur = nullptr;
    g_sched = nullptr;
}

/* Runs every emulated thread of a launch: CTA ci of ncta belongs to rank rank[ci] (its start
 * delay) and runs body(ci, its CtaSync, thread, nthreads); OS threads or coroutines as chosen. */
void run_ctas(size_t ncta, int nthreads, bool threads, const std::vector<int> &rank,
              const std::vector<int> &delay_ms,
              const std::function<void(size_t, CtaSync *, int, int)> &body) {
    std::vector<CtaSync> syncs(ncta);
    if (threads) {
        std::vector<std::thread> th;
        for (size_t ci = 0; ci < ncta; ci++) {
            CtaSync *cs = &syncs[ci];
            pthread_barrier_init(&cs->bar, nullptr, (unsigned)nthreads);
            cs->flag[0] = cs->flag[1] = 0;
            int delay = delay_ms[rank[ci]];
            for (int i = 0; i < nthreads; i++)
                th.emplace_back([=, &body] {
                    if (delay) usleep((useconds_t)delay * 1000);
                    body(ci, cs, i, nthreads);
                });
        }
        for (auto &x : th)
            x.join();
        for (auto &cs : syncs)
            pthread_barrier_destroy(&cs.bar);
        return;
    }
    Sched sch;
    sch.co.resize(ncta * (size_t)nthreads);
    size_t qi = 0;
    uint64_t t0 = mono_ns();
    for (size_t ci = 0; ci < ncta; ci++) {
        CtaSync *cs = &syncs[ci];
        cs->flag[0] = cs->flag[1] = 0;
        for (int i = 0; i < nthreads; i++, qi++) {
            Coro &co = sch.co[qi];
            co.start_ns = t0 + (uint64_t)delay_ms[rank[ci]] * 1000000u;
            co.fn = [=, &body] { body(ci, cs, i, nthreads); };
        }
    }
    coro_run(sch);
}

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
    if (weft_layout_init(&lay, n, (int32_t)a.size()) != WEFT_OK) return WEFT_ERR_NOMEM;
    plans.assign(a.size(), weft_algo_plan{});
    why.assign(a.size(), std::string());
    for (size_t i = 0; i < a.size(); i++) {
        char w[512] = "";
        int tbs = 1;
        for (int q = 0; q < a[i]->ngpus; q++)
            tbs = a[i]->gpus[q].ntbs > tbs ? a[i]->gpus[q].ntbs : tbs;
        weft_result r = weft_plan_prepare(a[i], n, max_group * tbs, &plans[i], w, sizeof w);
        why[i] = w;
        if (r == WEFT_ERR_UNSUPPORTED) continue;
        if (r != WEFT_OK) return r;
        if (weft_layout_add(&lay, (int32_t)i, &plans[i]) != WEFT_OK) return WEFT_ERR_NOMEM;
    }
    if (weft_layout_finish(&lay, &cfg) != WEFT_OK) return WEFT_ERR_NOMEM;
    for (size_t i = 0; i < a.size(); i++)
        if (plans[i].algo &&
            weft_plan_build(&plans[i], &lay, cfg.nslots[plans[i].proto]) != WEFT_OK)
            return WEFT_ERR_NOMEM;
    win.assign(n, nullptr);
    state.assign(n, nullptr);
    pos.assign(n, std::vector<uint64_t>(lay.pos_words, 0));
    sc.assign(n, std::vector<weft_dconn>(lay.nkeys > 0 ? lay.nkeys : 1));
    rc.assign(n, std::vector<weft_dconn>(lay.nkeys > 0 ? lay.nkeys : 1));
    rec.assign(n, std::vector<std::array<std::vector<char>, 2>>(a.size()));
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
            const weft_algo_plan &p = plans[i];
            if (!p.algo) continue;
            for (int m = 0; m < 2; m++) {
                const weft_mode_plan *mp = weft_plan_mode(&p, m);
                if (!mp) continue;
                const weft_rank_plan &rp = mp->ranks[r];
                rec[r][i][m].resize(weft_plan_table_bytes(&rp));
                weft_plan_records(&p, (int32_t)i, mp, &lay, r, win.data(), sc[r].data(),
                                  rc[r].data(), rec[r][i][m].data());
            }
            weft_dprog p0{};
            p0.v = weft_layout_start_progress(&cfg);
            prog[r][i].assign((size_t)p.maxtbs * (size_t)p.kmax, p0);
        }
        /* the counters' start (0, or near a wrap: weft_rt_cfg.start_calls, start_msgs) */
        weft_layout_start(
            &lay, &cfg, pos[r].data(),
            [](void *w, size_t off, uint64_t v) { memcpy((char *)w + off, &v, sizeof v); }, win[r]);
    }
    return WEFT_OK;
}

bool EmuComm::any_error() const {
    for (const weft_errrec &e : err)
        if (e.code) return true;
    return false;
}

weft_result EmuComm::launch(int ai, weft_dtype dt, weft_redop op, size_t count, int inplace,
                            const std::vector<std::vector<char *>> &bufs) {
    const weft_algo_plan &p = plans[ai];
    const weft_mode_plan *m = p.algo ? weft_plan_mode(&p, inplace) : nullptr;
    if (m == nullptr) return WEFT_ERR_UNSUPPORTED;
    int reduces = weft_coll_reduces(p.algo->coll);
    int ki = weft_rt_kernel_index(dt, op, reduces);
    if (ki < 0) return WEFT_ERR_UNSUPPORTED;
    weft_call_geom g;
    weft_result res = weft_call_geometry(&p, &cfg, inplace, count, weft_dtype_size(dt), reduces,
                                         direct ? 1 : 0, &g);
    if (res != WEFT_OK) return res;
    last = g;
    bool any_traced = false;
    for (int r = 0; r < n; r++)
        any_traced |= (size_t)r < trace.size() && trace[r].rec != nullptr;
    weft_rt_cfg hc = cfg;
    if (hop >= 0) hc.hop = hop;
    int32_t hb = 0, hS = 0, hT = 0;
    if (weft_hop_call(m, &p, &hc, count, weft_dtype_size(dt), reduces, any_traced, &hb, &hS, &hT))
        return launch_hop(ai, ki, dt, count, inplace, bufs, hb, hS);
    weft_rargs c;
    weft_plan_call_args(&p, ai, &g, &cfg, &c);
    /* Direct: every rank's buffer b is its own "window" (offset 0). */
    std::vector<std::vector<char *>> pb(2, std::vector<char *>(n));
    for (int q = 0; q < n; q++)
        for (int b = 0; b < 2; b++)
            pb[b][q] = bufs[q][b];
    std::vector<weft_rank_args> ra(n);
    std::vector<int> col(n);
    for (int r = 0; r < n; r++) {
        const bool traced = (size_t)r < trace.size() && trace[r].rec != nullptr;
        int want = (size_t)r < collapse_ranks.size() ? collapse_ranks[r] : collapse;
        col[r] = want < 0 ? weft_plan_use_collapsed(&p, m, &g, &cfg, traced)
                          : want && m->collapsed && !g.direct && !traced;
        collapsed_calls += col[r];
    }
    for (int r = 0; r < n; r++) {
        weft_rank_args &x = ra[r];
        memset(&x, 0, sizeof x);
        const weft_rank_plan &rp = m->ranks[r];
        x.tb0 = weft_plan_tb0(&rp, col[r]);
        x.rec = rec[r][ai][inplace ? 1 : 0].data(), x.rec_bytes = weft_plan_rec_bytes(&rp);
        x.xsrc = rp.xsrc;
        x.xrecv = rp.xrecv;
        x.prog = prog[r][ai].data();
        for (int b = 0; b < 3; b++)
            x.buf[b] = bufs[r][b];
        x.state = state[r];
        x.peer_win = win.data();
        x.err = &err[r];
        x.rank = r;
        if (g.direct)
            for (int b = 0; b < 2; b++)
                x.pbase[b] = pb[b].data(), x.poff[b] = 0;
        if ((size_t)r < trace.size()) x.trace = trace[r];
    }
    size_t ncta = 0;
    for (int r = 0; r < n; r++)
        ncta += (size_t)weft_plan_ntbs_run(&m->ranks[r], col[r]) * (size_t)g.K;
    /* as the GPU (weft_call_variant): the tracing variant for traced ranks, the latency kernel
     * for LL calls that are not direct */
    static const CtaFn *const tabs[WEFT_RT_KVARIANTS] = {cta_plain, cta_traced, cta_ll, cta_ll128};
    std::vector<CtaFn> fns(n);
#if defined(__SANITIZE_THREAD__)
    const bool threads = true;
#else
    const bool threads = os_threads;
#endif
    /* the GPU's lanes need coroutines (HostPlat8: a line whole within a scheduler round); OS
     * threads run a thread a line */
    const bool lanes = ll128_lanes && !threads;
    for (int r = 0; r < n; r++) {
        weft_rt_kvariant v = weft_call_variant(&cfg, &c, ra[r].trace.rec != nullptr);
        fns[r] = v == WEFT_RT_KV_LL128 && lanes ? cta_ll128w[ki] : tabs[v][ki];
    }
    if (ll128_lanes && (nthreads < 8 || nthreads > 32 || nthreads % 8)) return WEFT_ERR_USAGE;
    /* CTA ci: rank, record and member */
    std::vector<int> crank, ctb, cmem;
    for (int r = 0; r < n; r++)
        for (int t = ra[r].tb0; t < ra[r].tb0 + weft_plan_ntbs_run(&m->ranks[r], col[r]); t++)
            for (int k = 0; k < g.K; k++)
                crank.push_back(r), ctb.push_back(t), cmem.push_back(k);
    run_ctas(ncta, nthreads, threads, crank, start_delay_ms,
             [&](size_t ci, CtaSync *cs, int i, int nt) {
                 int r = crank[ci];
                 fns[r](&c, &ra[r], ctb[ci], cmem[ci], cs, i, nt);
             });
    return any_error() ? WEFT_ERR_TIMEOUT : WEFT_OK;
}

/* A call on the one-hop kernel (hop.h): every rank's CTAs b = 0 .. nb - 1, each on its own
 * arguments (one rank a launch here, so that any rank count fits). */
weft_result EmuComm::launch_hop(int ai, int ki, weft_dtype dt, size_t count, int inplace,
                                const std::vector<std::vector<char *>> &bufs, int32_t nb,
                                int32_t S) {
    const weft_algo_plan &p = plans[ai];
    const weft_mode_plan *m = weft_plan_mode(&p, inplace);
    int reduces = weft_coll_reduces(p.algo->coll);
    std::vector<weft_hop_kargs> ka(n);
    for (int r = 0; r < n; r++) {
        weft_hop_args(&p, ai, &lay, &cfg, count, weft_dtype_size(dt), reduces, nb, S, &ka[r]);
        ka[r].nsub = 1;
        weft_hop_rargs &x = ka[r].r[0];
        x.tab = m->hop->tab[r];
        memcpy(&x.tab_bytes, m->hop->tab[r] + offsetof(weft_hop_hdr, bytes), sizeof x.tab_bytes);
        x.mem[0] = bufs[r][0];
        x.mem[1] = bufs[r][1];
        x.peer_win = win.data();
        x.state = state[r];
        x.err = &err[r];
        x.rank = r;
    }
    hop_calls++;
    const HopFn fn = cta_hop[ki];
    size_t ncta = (size_t)n * (size_t)nb;
#if defined(__SANITIZE_THREAD__)
    const bool threads = true;
#else
    const bool threads = os_threads;
#endif
    std::vector<int> crank(ncta);
    for (size_t ci = 0; ci < ncta; ci++)
        crank[ci] = (int)(ci / (size_t)nb);
    run_ctas(ncta, nthreads, threads, crank, start_delay_ms,
             [&](size_t ci, CtaSync *cs, int i, int nt) {
                 fn(&ka[crank[ci]], (int)(ci % (size_t)nb), cs, i, nt);
             });
    return any_error() ? WEFT_ERR_TIMEOUT : WEFT_OK;
}
