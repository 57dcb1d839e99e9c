/* interp.h — the interpreter of one thread block's step list: FIFO protocols (Simple, LL, LL128),
 * direct transfers, thread-block groups, dependencies, the count policy, the watchdog. Written
 * once over a platform P, compiled for the GPU (kernels_interp.cuh) and for the host emulation
 * that tests it without one (tests/runtime).
 *
 * P provides, for the calling thread of a CTA:
 *   int tid(), nthreads(); void sync(); bool sync_or(bool)         (CTA barrier)
 *   const char **sred()              (4 * WEFT_RT_MAX_FUSE pointers shared by the CTA)
 *   RunSmem *rsm()                   (a runner's tables, shared by the CTA)
 *   static uint64_t ld_acq_sys/ld_acq_gpu/ld_rlx(const uint64_t*)   (rlx: relaxed, system)
 *   static void st_rel_sys/st_rel_gpu/st_rlx(uint64_t*, uint64_t)
 *   static uint32_t ld_rlx32(const uint32_t*); static void st_rlx32(uint32_t*, uint32_t)
 *   static bool claim(uint32_t*)                                     (CAS 0 -> 1, this GPU)
 *   static void fence_sys(); static void grid_wait()   (grid_wait: the previous kernel of the
 *                                                       stream is complete and visible)
 *   static uint64_t now_ns(); static void pause()
 *   static Pack ld_pack(const char*); static void st_pack(char*, Pack)   (16 bytes, L2 path)
 *   template <class U> static U ld(const char*); template <class U> static void st(char*, U)
 *   static Line ll_ld(const char*); static void ll_st(char*, uint32_t d0, uint32_t f0,
 *                                                     uint32_t d1, uint32_t f1)
 *   WEFT_RT_PROBE builds only: static uint64_t clock(); static void probe_add(uint64_t*,
 *   uint64_t) (atomic); static void probe_use(uint64_t) (ends a phase when the value is in)
 * Groups: a tb runs on K CTAs (members); member g runs iterations g, g + K, ... of the call,
 * with its own FIFOs, counters and progress line, so members never wait for each other; member
 * g of a tb only waits for member g of another tb (they run the same iterations).
 * Memory ordering (both protocols): data stores by all threads, CTA barrier, then one thread
 * publishes with a release at system scope; the consumer's thread 0 acquires, a CTA barrier
 * follows, then all threads read through the L2 (ld_pack); after its last barrier the consumer
 * returns the slot with a plain store (the values were used, no load is in flight). LL carries a
 * flag in every 8 bytes and needs no fence.
 * Direct transfers (Simple, buffers registered on every rank, connections whose messages all
 * come from `s` steps of user buffers, algorithms the verifier proved safe for zero-copy
 * transfers in the call's mode): a send only raises the receiver's ready word; the receiver
 * reads the sender's chunk in place, then raises the sender's done word; a member whose sends
 * were read directly waits before it ends until all of them have been read, so that the
 * caller may reuse its buffers. The words are tagged with the call's epoch ((calls + 1) << 32
 * | messages so far in this call), so they are never reset.
 * Tracing (a.trace.rec != NULL; runtime/trace/trace_internal.h, docs/trace.md): thread 0 of
 * member 0 fills one record per step execution directly in global memory, at index
 * j * nsteps + s (j: the member's iteration), so that no register is held across a step for it
 * (the interpreter is at its register limit) and no load sits between one step's end and the
 * next one's start. Off, nothing: untraced launches run the instantiation without tracing
 * (TR = false). Waits add to the record on the spin's slow path only. */
#ifndef WEFT_RT_INTERP_H
#define WEFT_RT_INTERP_H

#include "ops.h"
#include "runtime_internal.h"

/* Tracing's code stays out of line: the interpreter runs at its register limit, and inlined
 * tracing code would take registers from the data path even when tracing is off. */
#if defined(__CUDACC__)
#define WEFT_COLD __device__ __noinline__
#else
#define WEFT_COLD
#endif

namespace weft_rt {

/* ---- tracing (thread 0 of a CTA; see runtime/trace/trace_internal.h) ---------------------
 * Free functions of values, never members: an out-of-line call that took the interpreter's
 * `this` would put the whole object in local memory, and every member access of the data path
 * with it, traced or not. Execution n of a tb (n = it * nsteps + s) owns record n. */
/* t0: when the tb's previous step ended (trace_end_step's value; trace_entry's for the first). */
template <class P>
WEFT_COLD void trace_begin(weft_trace_dev tr, int tbi, uint32_t n, int s, int64_t it, uint64_t spos,
                           uint64_t rpos, uint64_t t0) {
    tr.hdr[tbi].n = n + 1; /* executions so far, recorded or not */
    if (n >= tr.cap) return;
    weft_trace_rec *r = tr.rec + (int64_t)tbi * tr.cap + n;
    r->t0 = t0;
    r->dep_ns = r->data_ns = r->credit_ns = r->bytes = 0;
    r->step = s;
    r->iter = (int32_t)it;
    r->spos = (uint32_t)spos;
    r->rpos = (uint32_t)rpos;
    r->t1 = 0;
}

/* The record of the step running now (inside a step only), or NULL past the buffer's end. */
WEFT_DEV weft_trace_rec *trace_cur(weft_trace_dev tr, int tbi) {
    uint32_t n = tr.hdr[tbi].n - 1;
    return n < tr.cap ? tr.rec + (int64_t)tbi * tr.cap + n : nullptr;
}

template <class P>
WEFT_COLD void trace_waited(weft_trace_dev tr, int tbi, uint32_t what, uint64_t ns) {
    weft_trace_rec *r = trace_cur(tr, tbi);
    if (r == nullptr) return;
    uint32_t *w = what == WEFT_RT_WAIT_DEP      ? &r->dep_ns
                  : what == WEFT_RT_WAIT_CREDIT ? &r->credit_ns
                                                : &r->data_ns;
    uint64_t v = *w + ns;
    *w = v > 0xffffffffu ? 0xffffffffu : (uint32_t)v;
}

template <class P> WEFT_COLD void trace_bytes(weft_trace_dev tr, int tbi, int64_t bytes) {
    if (weft_trace_rec *r = trace_cur(tr, tbi)) r->bytes += (uint32_t)bytes;
}

template <class P> WEFT_COLD uint64_t trace_end_step(weft_trace_dev tr, int tbi, uint32_t n) {
    uint64_t t1 = P::now_ns();
    if (n < tr.cap) tr.rec[(int64_t)tbi * tr.cap + n].t1 = t1;
    return t1;
}

/* The CTA's header (docs: written by the CTA itself, at entry and at exit). */
template <class P>
WEFT_COLD uint64_t trace_entry(weft_trace_dev tr, int tbi, uint64_t spos, uint64_t rpos) {
    weft_trace_tbhdr *h = tr.hdr + tbi;
    uint64_t t = P::now_ns();
    h->t_begin = t;
    h->n = 0;
    h->spos0 = (uint32_t)spos;
    h->rpos0 = (uint32_t)rpos;
    return t;
}

/* stopped: the CTA gave up in execution n, whose record gets its end time here. */
template <class P> WEFT_COLD void trace_exit(weft_trace_dev tr, int tbi, bool stopped, uint32_t n) {
    uint64_t t = P::now_ns();
    if (stopped && n < tr.cap) {
        weft_trace_rec *r = tr.rec + (int64_t)tbi * tr.cap + n;
        if (r->t1 == 0) r->t1 = t;
    }
    weft_trace_tbhdr *h = tr.hdr + tbi;
    h->t_end = t;
    h->stopped = stopped ? 1u : 0u;
}

/* The tail of a value forwarded whole through a shorter destination: what only goes out,
 * element by element. Rare, and out of line so that it takes no register from the data path. */
template <class P, class T, class Op>
WEFT_COLD void forward_tail(int nt, int tid, int64_t n, const char *in, const char *red,
                            char *out) {
    for (int64_t e = tid; e < n; e += nt) {
        T v = P::template ld<T>(in + e * (int64_t)sizeof(T));
        if (red) v = Op::template apply<T>(v, P::template ld<T>(red + e * (int64_t)sizeof(T)));
        P::template st<T>(out + e * (int64_t)sizeof(T), v);
    }
}

struct alignas(16) Pack {
    uint64_t lo, hi;
};

/* An LL line: two 8-byte halves, each 4 data bytes and the message's flag. */
struct Line {
    uint32_t d0, f0, d1, f1;
};

template <class T, class Op> WEFT_DEV Pack reduce_pack(Pack a, Pack b) {
    constexpr int V = 16 / sizeof(T);
    T x[V], y[V];
    memcpy(x, &a, 16);
    memcpy(y, &b, 16);
    WEFT_UNROLL
    for (int i = 0; i < V; i++)
        x[i] = Op::template apply<T>(x[i], y[i]);
    memcpy(&a, x, 16);
    return a;
}

template <class T, class Op> WEFT_DEV uint64_t reduce_u64(uint64_t a, uint64_t b) {
    constexpr int V = 8 / sizeof(T);
    T x[V], y[V];
    memcpy(x, &a, 8);
    memcpy(y, &b, 8);
    WEFT_UNROLL
    for (int i = 0; i < V; i++)
        x[i] = Op::template apply<T>(x[i], y[i]);
    memcpy(&a, x, 8);
    return a;
}

/* What a collapsed rank's runner keeps in shared memory for the whole call, loaded once at its
 * start (the static part while the previous kernel ends): every step, every connection with its
 * counter at the call's start (member g's ends), every entry of its message table. Steps then
 * find a message in one shared-memory read instead of a chain of dependent global loads. */
struct RunConn {
    weft_dconn e;
    uint64_t pos0;
    int32_t per, send;
};
struct RunSmem {
    weft_dstep steps[WEFT_RT_RUN_MAX_STEPS];
    RunConn conn[WEFT_RT_RUN_MAX_CONNS];
    weft_drecv ent[WEFT_RT_RUN_MAX_ENTS];
};

/* TR: this instantiation can trace (a.trace.rec decides per launch). The GPU builds every
 * kernel with and without it and launches a TR = false one when the launch is not traced
 * (LLK: the latency kernel, L128: the LL128 kernel, both untraced), so tracing costs
 * an untraced call nothing: not a test, not a register, not a byte of code. */
template <class P, class T, class Op, bool TR, bool LLK = false, bool L128 = false> struct Interp {
    static constexpr int SZ = sizeof(T);
    static constexpr int V = 16 / SZ;
    static constexpr int U = 4;           /* Simple: 16-byte packs in flight per thread */
    static constexpr int LU = 4;          /* LL: lines in flight per thread */
    static constexpr int64_t DW = 64 / 8; /* words between members' direct-transfer words */

    P &p;
    const weft_rargs &c;     /* the call */
    const weft_rank_args &a; /* this rank */
    int tbi, g;              /* tb and member */
    weft_dtb t;
    const weft_dstep *steps;
    uint64_t *prog;
    uint64_t own; /* this member's progress word at the call's start: calls() << 32 */
    bool posted;
    weft_dconn sc, rc;           /* this member's ends */
    bool sdir, rdir;             /* the ends run direct in this call */
    uint64_t spos, rpos, credit; /* FIFO ends (credit: the last head seen) */
    uint32_t scount, rcount;     /* direct messages of this call */
    const char *rbase0, *rbase1; /* direct receives: the sender's input and output */
    int64_t it, j;               /* iteration of the call, and of this member */
    uint64_t tlast = 0;          /* tracing (TR only): when the tb's last step ended */
#ifdef WEFT_RT_PROBE
    uint64_t pr_c0 = 0, pr_ns0 = 0, pr_last = 0; /* probe: entry (cycles, ns), last boundary */
    uint64_t pr_sub = 0;                         /* probe: the last boundary within a step */
    uint64_t *pr_row = nullptr;                  /* probe: this CTA's row (thread 0) */
#endif

    WEFT_DEV Interp(P &p_, const weft_rargs &c_, const weft_rank_args &a_, int tbi_, int g_)
        : p(p_), c(c_), a(a_), tbi(tbi_), g(g_) {}

    /* This member's calls before this one, the progress base of this call and the epoch tag of
     * its direct-transfer words. Computed where used: the progress word arrives with the
     * connections' counters after the grid wait, and nothing before a step's first loads may
     * wait for it. */
    WEFT_DEV uint64_t calls() const {
        return own >> 32;
    }
    WEFT_DEV uint64_t base() const {
        return own >> 32 << 32;
    }
    WEFT_DEV uint64_t tag() const {
        return ((own >> 32) + 1) << 32;
    }

    /* Whether counter value x has reached want. Progress words count calls in their upper 32
     * bits and direct-transfer words carry the call's epoch there, so both wrap after 2^32
     * calls of an algorithm (3.3 days at 15,000 calls a second); the words compared are never
     * 2^63 apart, so the signed difference orders them across the wrap. */
    static WEFT_DEV bool reached(uint64_t x, uint64_t want) {
        return (int64_t)(x - want) >= 0;
    }

    /* The LL flag of message msg: never 0 (what lines never written hold), and different from
     * the flag of every message that used the same slot before (they are nslots <= 1024 apart),
     * also when the 32-bit count wraps. */
    static WEFT_DEV uint32_t ll_flag(uint64_t msg) {
        return (uint32_t)(msg % 0xffffffffull) + 1u;
    }

    WEFT_DEV bool traced() const {
        return TR && a.trace.rec != nullptr && g == 0;
    }

    /* The call's messages travel as LL lines. LLK: the latency kernel, built for LL calls
     * without direct transfers or tracing only, so that none of the other paths is in its
     * code (see weft_interp). */
    WEFT_DEV bool is_ll() const {
        return LLK || (!L128 && c.proto == WEFT_RT_PROTO_LL);
    }
    /* The call's messages travel as LL128 lines. L128: the LL128 kernel, built for untraced
     * LL128 calls; of the others only the tracing kernel has this path (the general kernel's
     * code and registers stay without it). */
    WEFT_DEV bool is_ll128() const {
        return L128 || (TR && c.proto == WEFT_RT_PROTO_LL128);
    }

    /* ---- the phase probe (WEFT_PROBE builds only; runtime_internal.h) ------------------ */
#ifdef WEFT_RT_PROBE
    WEFT_DEV uint64_t *probe_row() const {
        int64_t row = (int64_t)(tbi - a.tb0) * c.K + g;
        return a.state->probe && p.tid() == 0 && row < WEFT_RT_PROBE_CTAS
                   ? a.state->probe + row * WEFT_RT_PROBE_N
                   : nullptr;
    }
    /* The cycles since the last boundary go to `slot`; this is the next boundary. */
    WEFT_DEV void probe_at(int slot) {
        if (pr_row) {
            uint64_t t = P::clock();
            P::probe_add(pr_row + slot, t - pr_last);
            pr_last = t;
        }
    }
    /* The same within a step (its own boundaries; a step's phases in SUB*). */
    WEFT_DEV void probe_sub(int slot) {
        if (pr_row) {
            uint64_t t = P::clock();
            P::probe_add(pr_row + slot, t - pr_sub);
            pr_sub = t;
        }
    }
    WEFT_DEV void probe_add(int slot, uint64_t v) const {
        if (pr_row) P::probe_add(pr_row + slot, v);
    }
#define WEFT_PROBE_AT(slot)     probe_at(WEFT_RT_PROBE_##slot)
#define WEFT_PROBE_SUB(slot)    probe_sub(WEFT_RT_PROBE_##slot)
#define WEFT_PROBE_USE(v)       P::probe_use((uint64_t)(v))
#define WEFT_PROBE_CLOCK()      P::clock()
#define WEFT_PROBE_ADD(slot, v) probe_add(slot, v)
#else
#define WEFT_PROBE_AT(slot)     ((void)0)
#define WEFT_PROBE_SUB(slot)    ((void)0)
#define WEFT_PROBE_USE(v)       ((void)0)
#define WEFT_PROBE_CLOCK()      0ull
#define WEFT_PROBE_ADD(slot, v) ((void)0)
#endif

    /* ---- watchdog ---------------------------------------------------------------------- */
    /* Every rank has entered the call this rank is in (each rank's arrival word for the
     * algorithm, written by member 0 of tb 0 when it starts). */
    WEFT_DEV bool all_arrived() const {
        uint64_t mine =
            P::ld_rlx((const uint64_t *)(const void *)(a.peer_win[a.rank] + c.arrival_off));
        for (int q = 0; q < c.nranks; q++)
            if (P::ld_rlx((const uint64_t *)(const void *)(a.peer_win[q] + c.arrival_off)) < mine)
                return false;
        return true;
    }

    WEFT_DEV void record(uint32_t what, const weft_dstep &st, int peer, int chan, uint64_t want,
                         uint64_t seen, uint64_t waited) const {
        weft_errrec *e = a.err;
        if (!P::claim(&a.state->claim)) return; /* device memory: no host atomics */
        e->algo = c.tag;
        e->rank = a.rank;
        e->tb = st.otb; /* as the schedule numbers it (a runner stands for every tb) */
        e->member = g;
        e->step = st.orig;
        e->peer = peer;
        e->chan = chan;
        e->depid = st.depid;
        e->deps = st.dep_target - 1;
        e->iter = it;
        e->want = want;
        e->seen = seen;
        e->calls = calls();
        e->waited_ns = waited;
        P::fence_sys();
        P::st_rlx32(&e->code, what);
        P::fence_sys();
    }

    /* Spins until ready() holds. False when this call must stop: the watchdog fired here, or
     * another CTA or rank gave up. A wait only counts as a stall once every rank has entered
     * this call (a rank that is merely late is not a fault), and then for a full period. */
    template <class Ready, class Seen>
    WEFT_DEV bool spin(Ready ready, Seen seen, uint32_t what, const weft_dstep &st, int peer,
                       int chan, uint64_t want) {
        if (ready()) return true;
        uint64_t t0 = P::now_ns(), first = t0;
        const uint64_t pc = WEFT_PROBE_CLOCK();
        (void)pc;
        bool armed = false;
        for (uint32_t n = 1;; n++) {
            if (ready()) {
                waited(what, first, pc);
                return true;
            }
            if ((n & 255) == 0 && stalled(t0, first, armed, seen, what, st, peer, chan, want))
                return false;
            P::pause();
        }
    }

    /* A wait that ended, since first (ns) and pc (probe cycles): to the trace and the probe. */
    WEFT_DEV void waited(uint32_t what, uint64_t first, uint64_t pc) {
        (void)pc;
        if (traced() && p.tid() == 0) trace_waited<P>(a.trace, tbi, what, P::now_ns() - first);
        WEFT_PROBE_ADD(what == WEFT_RT_WAIT_DEP      ? WEFT_RT_PROBE_WDEP
                       : what == WEFT_RT_WAIT_CREDIT ? WEFT_RT_PROBE_WCREDIT
                       : what == WEFT_RT_WAIT_READ   ? WEFT_RT_PROBE_WREAD
                                                     : WEFT_RT_PROBE_WDATA,
                       WEFT_PROBE_CLOCK() - pc);
    }

    /* The watchdog's look at a wait (every 256 polls): true when this call must stop, because
     * another CTA or rank gave up or because this wait has stalled (recorded here, and every
     * rank told). t0 and armed: the wait's state between looks. */
    template <class Seen>
    WEFT_DEV bool stalled(uint64_t &t0, uint64_t first, bool &armed, Seen seen, uint32_t what,
                          const weft_dstep &st, int peer, int chan, uint64_t want) {
        uint32_t *abortw = (uint32_t *)(void *)(a.peer_win[a.rank] + WEFT_RT_ABORT_OFF);
        uint32_t ab = P::ld_rlx32(abortw);
        if (ab != 0) {
            record(WEFT_RT_WAIT_ABORTED, st, (int)ab - 1, chan, want, seen(), 0);
            if (traced() && p.tid() == 0) trace_waited<P>(a.trace, tbi, what, P::now_ns() - first);
            return true;
        }
        uint64_t now = P::now_ns();
        if (c.timeout_ns > 0 && now - t0 > (uint64_t)c.timeout_ns) {
            if (!all_arrived()) {
                t0 = now;
            } else if (!armed) {
                armed = true;
                t0 = now;
            } else {
                record(what, st, peer, chan, want, seen(), now - first);
                for (int q = 0; q < c.nranks; q++)
                    P::st_rlx32((uint32_t *)(void *)(a.peer_win[q] + WEFT_RT_ABORT_OFF),
                                (uint32_t)a.rank + 1);
                if (traced() && p.tid() == 0) trace_waited<P>(a.trace, tbi, what, now - first);
                return true;
            }
        }
        return false;
    }

    /* ---- addressing (the count policy of weft_semantics.h) ----------------------------- */
    /* How many of chunk x's elements from e0 on (at most en) are valid in a user buffer. */
    WEFT_DEV int64_t valid(int32_t x, int64_t e0, int64_t en) const {
        int64_t v = weft_chunk_valid(c.count, c.k, c.C, x) - e0;
        return v < 0 ? 0 : (v < en ? v : en);
    }
    /* Start of chunk x's slice in buffer b and how many of its elements are valid. */
    WEFT_DEV char *chunk(int b, int32_t x, int64_t e0, int64_t en, int64_t *lim) const {
        if (b == WEFT_BUF_SCRATCH) {
            *lim = en;
            return a.buf[b] + ((int64_t)x * c.C + e0) * SZ;
        }
        *lim = valid(x, e0, en);
        return a.buf[b] + (weft_chunk_start(c.count, c.k, c.C, x) + e0) * SZ;
    }

    /* ---- Simple: elementwise move of one chunk slice ----------------------------------- */
    /* dst/out[e] = in[e] (op red[e] ...) for e < lim; red is red0 when nred == 1, else the
     * CTA-shared pointer array (fused `re`). */
    WEFT_DEV void move(int64_t lim, const char *in, int nred, const char *red0,
                       const char *const *reds, char *dst, char *out) {
        const int nt = p.nthreads(), tid = p.tid();
        uintptr_t al = (uintptr_t)in | (uintptr_t)dst | (uintptr_t)out | (uintptr_t)red0;
        for (int r = 0; r < nred && nred > 1; r++)
            al |= (uintptr_t)reds[r];
        int64_t npk = (al & 15) == 0 ? lim / V : 0;
        for (int64_t i0 = 0; i0 < npk; i0 += (int64_t)U * nt) {
            Pack v[U];
            WEFT_UNROLL
            for (int u = 0; u < U; u++) {
                int64_t i = i0 + (int64_t)u * nt + tid;
                if (i < npk) v[u] = P::ld_pack(in + i * 16);
            }
            for (int r = 0; r < nred; r++) {
                const char *rp = nred == 1 ? red0 : reds[r];
                WEFT_UNROLL
                for (int u = 0; u < U; u++) {
                    int64_t i = i0 + (int64_t)u * nt + tid;
                    if (i < npk) v[u] = reduce_pack<T, Op>(v[u], P::ld_pack(rp + i * 16));
                }
            }
            WEFT_UNROLL
            for (int u = 0; u < U; u++) {
                int64_t i = i0 + (int64_t)u * nt + tid;
                if (i < npk) {
                    if (dst) P::st_pack(dst + i * 16, v[u]);
                    if (out) P::st_pack(out + i * 16, v[u]);
                }
            }
        }
        for (int64_t e = npk * V + tid; e < lim; e += nt) {
            T v = P::template ld<T>(in + e * SZ);
            for (int r = 0; r < nred; r++) {
                const char *rp = nred == 1 ? red0 : reds[r];
                v = Op::template apply<T>(v, P::template ld<T>(rp + e * SZ));
            }
            if (dst) P::template st<T>(dst + e * SZ, v);
            if (out) P::template st<T>(out + e * SZ, v);
        }
    }

    /* Pointers of chunk jj of a step: the incoming value, what it is reduced with, the
     * destination and the outgoing slot. lim: the value's elements that its operands hold
     * (user memory past a chunk's valid end is never read, here or on a peer read in place);
     * the value goes out whole (the receiver may keep it in a longer chunk). dlim: of those,
     * what the destination holds (never written past its valid end). */
    struct Ptrs {
        const char *in, *red0;
        int nred;
        char *dst, *out;
        int64_t lim, dlim;
    };

    /* Uniform across the CTA (a fused `re` publishes its sources through shared memory).
     * islot: the incoming slot (FIFO), or NULL for a direct receive. */
    WEFT_DEV void ptrs(const weft_dstep &st, unsigned f, int jj, int64_t e0, int64_t en,
                       const char *islot, char *oslot, int64_t mE, Ptrs &q) {
        int64_t lim = en, dlim = en, l;
        q.nred = 0;
        q.red0 = nullptr;
        q.dst = nullptr;
        q.out = oslot ? oslot + (int64_t)jj * mE * SZ : nullptr;
        const char *src = nullptr;
        if (f & WEFT_STEP_F_READS_SRC) {
            if (st.nsrc > 1) {
                const char **sr = p.sred();
                p.sync(); /* the previous chunk's readers are done with sr */
                for (int r = 0; r < st.nsrc; r++) {
                    weft_dsrc s = a.xsrc[st.xsrc + r];
                    const char *x = chunk(s.buf, s.off + jj, e0, en, &l);
                    lim = l < lim ? l : lim;
                    if (r % p.nthreads() == p.tid()) sr[r] = x;
                }
                p.sync();
                q.nred = st.nsrc;
            } else {
                src = chunk(st.srcbuf, st.srcoff + jj, e0, en, &l);
                lim = l < lim ? l : lim;
            }
        }
        if (f & WEFT_STEP_F_WRITE) {
            q.dst = chunk(st.dstbuf, st.dstoff + jj, e0, en, &dlim);
            if (f & WEFT_STEP_F_READS_DST) lim = dlim < lim ? dlim : lim; /* `re` reads it */
        }
        if (f & WEFT_STEP_F_RECV) {
            if (islot) {
                q.in = islot + (int64_t)jj * mE * SZ;
            } else { /* the sender's chunk, read in place */
                int32_t x = st.poff + jj;
                q.in = (st.pbuf ? rbase1 : rbase0) +
                       (weft_chunk_start(c.count, c.k, c.C, x) + e0) * SZ;
                l = valid(x, e0, en);
                lim = l < lim ? l : lim;
            }
            if (f & WEFT_STEP_F_REDUCE) q.red0 = src, q.nred = 1;
        } else if (f & WEFT_STEP_F_READS_DST) { /* `re`: dst is the incoming value */
            q.in = q.dst;
            if (st.nsrc <= 1) q.red0 = src, q.nred = 1;
        } else {
            q.in = src;
        }
        q.lim = lim;
        q.dlim = dlim < lim ? dlim : lim;
    }

    /* ---- the two protocols ------------------------------------------------------------- */
    WEFT_DEV bool wait_credit(const weft_dstep &st) {
        /* thread 0 only: room for message spos? */
        if (spos - credit < (uint64_t)sc.nslots) return true;
        uint64_t need = spos + 1 - (uint64_t)sc.nslots;
        return spin([&] { return reached(credit = P::ld_acq_sys(sc.head), need); },
                    [&] { return credit; }, WEFT_RT_WAIT_CREDIT, st, sc.peer, sc.chan, need);
    }

    WEFT_DEV bool simple_step(const weft_dstep &st, unsigned f, int64_t e0, int64_t en) {
        /* the latency and LL128 kernels move messages in their own steps: here, local copies */
        const bool recv = !LLK && !L128 && (f & WEFT_STEP_F_RECV),
                   send = !LLK && !L128 && (f & WEFT_STEP_F_SEND);
        if (send && sdir) {
            /* An `s` step read in place: its source is final once every thread of this CTA is
             * past its earlier stores (this barrier) and other CTAs' writes were acquired through
             * dependencies; the release publishes both. */
            scount++;
            p.sync();
            if (p.tid() == 0) P::st_rel_sys(sc.ready, tag() | scount);
            return true;
        }
        bool ok = true;
        if ((recv || send) && p.tid() == 0) {
            if (recv && rdir) {
                uint64_t want = tag() | (rcount + 1);
                ok = spin([&] { return reached(P::ld_acq_sys(rc.ready), want); },
                          [&] { return P::ld_rlx(rc.ready); }, WEFT_RT_WAIT_DATA, st, rc.peer,
                          rc.chan, want);
            } else if (recv) {
                uint64_t want = rpos + 1;
                ok = spin([&] { return reached(P::ld_acq_sys(rc.tail), want); },
                          [&] { return P::ld_rlx(rc.tail); }, WEFT_RT_WAIT_DATA, st, rc.peer,
                          rc.chan, want);
            }
            if (ok && send) ok = wait_credit(st);
        }
        if ((recv || send) && p.sync_or(!ok)) return false;
        const char *islot = recv && !rdir
                                ? rc.slots + (int64_t)(rpos % (uint64_t)rc.nslots) * rc.slot_bytes
                                : nullptr;
        char *oslot =
            send ? sc.slots + (int64_t)(spos % (uint64_t)sc.nslots) * sc.slot_bytes : nullptr;
        Ptrs q;
        for (int jj = 0; jj < st.cnt; jj++) {
            ptrs(st, f, jj, e0, en, islot, oslot, c.E, q);
            move(q.dlim, q.in, q.nred, q.red0, p.sred(), q.dst, q.out); /* dlim: lim without dst */
            if (q.dst && q.out && q.dlim < q.lim) {
                /* a value forwarded whole through a shorter destination (rcs, rrcs into the last
                 * chunk of an uneven split): the tail only goes out (no fused `re`: nred <= 1) */
                const int64_t o = q.dlim * SZ;
                forward_tail<P, T, Op>(p.nthreads(), p.tid(), q.lim - q.dlim, q.in + o,
                                       q.nred ? q.red0 + o : nullptr, q.out + o);
            }
            if (traced() && p.tid() == 0)
                trace_bytes<P>(a.trace, tbi, (q.dst ? q.dlim : q.lim) * SZ);
        }
        p.sync();
        if (p.tid() == 0) {
            /* The data goes out with a release; a slot (or a sender's buffer read in place)
             * goes back with a plain store, as NCCL's Simple returns its slots: every thread
             * used the values it loaded before the barrier, so no load is in flight, and no
             * fence waits for this step's own stores to land (2 x H200, the library's Simple
             * allreduce and reducescatter at 4-64 MB: 2-6% faster with this alone, 0-4% beside
             * the fold's loads below; docs/runtime-perf.md). */
            if (send) P::st_rel_sys(sc.tail, spos + 1);
            if (recv && rdir)
                P::st_rlx(rc.done, tag() | (rcount + 1));
            else if (recv)
                P::st_rlx(rc.head, rpos + 1);
        }
        spos += send;
        if (recv && rdir)
            rcount++;
        else
            rpos += recv;
        return true;
    }

    /* LL: a 16-byte line carries 8 data bytes and the message's flag twice. */
    WEFT_DEV uint64_t ll_read(const char *ptr, int64_t lim, int64_t l) const {
        int64_t nb = lim * SZ - l * 8;
        if (nb <= 0) return 0;
        const char *q = ptr + l * 8;
        if (nb >= 8 && ((uintptr_t)q & 7) == 0) return P::template ld<uint64_t>(q);
        uint64_t v = 0;
        char b[8] = {0, 0, 0, 0, 0, 0, 0, 0};
        for (int i = 0; i < 8 && i < nb; i += SZ) {
            T x = P::template ld<T>(q + i);
            memcpy(b + i, &x, SZ);
        }
        memcpy(&v, b, 8);
        return v;
    }
    WEFT_DEV void ll_write(char *ptr, int64_t lim, int64_t l, uint64_t v) const {
        int64_t nb = lim * SZ - l * 8;
        if (nb <= 0) return;
        char *q = ptr + l * 8;
        if (nb >= 8 && ((uintptr_t)q & 7) == 0) {
            P::template st<uint64_t>(q, v);
            return;
        }
        char b[8];
        memcpy(b, &v, 8);
        for (int i = 0; i < 8 && i < nb; i += SZ) {
            T x;
            memcpy(&x, b + i, SZ);
            P::template st<T>(q + i, x);
        }
    }

    /* Waits for one LL line of this message (slow path: the first look missed it). */
    WEFT_DEV bool wait_line(const char *line, uint32_t flag, const weft_dstep &st, Line &out) {
        return wait_line_on(line, flag, st, rc.peer, rc.chan, out);
    }
    /* A fold's or scatter's message (entry i of st), waited for: the watchdog names its own
     * connection (found only now, off the path of a message that is there). */
    WEFT_DEV bool wait_xline(const char *line, uint32_t flag, const weft_dstep &st, int i,
                             Line &out) {
        weft_dconn e;
        uint64_t msg;
        bool dir;
        msg_end(xent(st.xrecv + i), false, e, msg, dir);
        return wait_line_on(line, flag, st, e.peer, e.chan, out);
    }
    /* A message of connection (peer, chan). */
    WEFT_DEV bool wait_line_on(const char *line, uint32_t flag, const weft_dstep &st, int peer,
                               int chan, Line &out) {
        Line w = out;
        bool ok = spin(
            [&] {
                w = P::ll_ld(line);
                return w.f0 == flag && w.f1 == flag;
            },
            [&] { return (uint64_t)w.f0; }, WEFT_RT_WAIT_DATA, st, peer, chan, flag);
        out = w;
        return ok;
    }

    /* An LL step of one chunk and one batch whose dependency only orders its stores: every
     * line's source and message first, then the dependency (thread 0, then the CTA barrier
     * that every thread meets), then the stores; the step's end as ll_step's. ok: this
     * thread's credit. */
    WEFT_DEV bool ll_late(const weft_dstep &st, bool recv, bool send, bool ok, int64_t e0,
                          int64_t en, int64_t nl, const char *islot, char *oslot, uint32_t fin,
                          uint32_t fout) {
        const int tid = p.tid(), nt = p.nthreads();
        Ptrs q;
        ptrs(st, weft_step_flags((weft_step_type)st.type), 0, e0, en, islot, nullptr, c.E, q);
        if (traced() && tid == 0) trace_bytes<P>(a.trace, tbi, (q.dst ? q.dlim : q.lim) * SZ);
        const bool rd = !recv || q.nred != 0;
        const char *rsrc = recv ? q.red0 : q.in;
        Line w[LU];
        uint64_t v[LU] = {};
        WEFT_UNROLL
        for (int u = 0; u < LU; u++) {
            int64_t l = tid + (int64_t)u * nt;
            if (l < nl) {
                if (rd) v[u] = ll_read(rsrc, q.lim, l);
                if (recv) w[u] = P::ll_ld(islot + l * 16);
            }
        }
        WEFT_UNROLL
        for (int u = 0; u < LU; u++) {
            int64_t l = tid + (int64_t)u * nt;
            if (l >= nl || !ok || !recv) continue;
            if ((w[u].f0 != fin || w[u].f1 != fin) &&
                !(ok = wait_line(islot + l * 16, fin, st, w[u])))
                continue;
            uint64_t m = (uint64_t)w[u].d0 | (uint64_t)w[u].d1 << 32;
            v[u] = rd ? reduce_u64<T, Op>(m, v[u]) : m;
        }
        WEFT_PROBE_SUB(SUB_DATA);
        const bool okd = !ok || tid != 0 || wait_dep(st);
        if (p.sync_or(!ok || !okd)) return false;
        WEFT_UNROLL
        for (int u = 0; u < LU; u++) {
            int64_t l = tid + (int64_t)u * nt;
            if (l >= nl) continue;
            if (q.dst) ll_write(q.dst, q.dlim, l, v[u]);
            if (send) P::ll_st(oslot + l * 16, (uint32_t)v[u], fout, (uint32_t)(v[u] >> 32), fout);
        }
        WEFT_PROBE_SUB(SUB_STORE);
        if (p.sync_or(false)) return false;
        WEFT_PROBE_SUB(SUB_SYNC);
        if (recv && tid == 0) P::st_rlx(rc.head, rpos + 1);
        spos += send;
        rpos += recv;
        return true;
    }

    /* late: the step's dependency is still to be waited for, after the loads and before the
     * stores (step(): one chunk, one batch of lines). */
    WEFT_DEV bool ll_step(const weft_dstep &st, unsigned f, int64_t e0, int64_t en,
                          bool late = false) {
        const bool recv = f & WEFT_STEP_F_RECV, send = f & WEFT_STEP_F_SEND;
        /* Each thread checks credit for itself: no barrier before the lines go out. */
        bool ok = !send || wait_credit(st);
        WEFT_PROBE_SUB(SUB_CREDIT);
        const char *islot =
            recv ? rc.slots + (int64_t)(rpos % (uint64_t)rc.nslots) * rc.slot_bytes : nullptr;
        char *oslot =
            send ? sc.slots + (int64_t)(spos % (uint64_t)sc.nslots) * sc.slot_bytes : nullptr;
        const uint32_t fin = ll_flag(rpos), fout = ll_flag(spos);
        const int64_t nl = (en * SZ + 7) / 8, stride = c.E * SZ / 8;
        const int nt = p.nthreads(), tid = p.tid();
        Ptrs q;
        if (late) return ll_late(st, recv, send, ok, e0, en, nl, islot, oslot, fin, fout);
        for (int jj = 0; jj < st.cnt && ok; jj++) {
            ptrs(st, f, jj, e0, en, islot, nullptr, c.E, q);
            /* Lines always cover the whole slice: the receiver counts on every one. */
            const int64_t slim = q.lim;
            if (traced() && p.tid() == 0)
                trace_bytes<P>(a.trace, tbi, (q.dst ? q.dlim : q.lim) * SZ);
            const bool rd = !recv || q.nred != 0;
            const char *rsrc = recv ? q.red0 : q.in;
            const char *ilines = recv ? islot + (int64_t)jj * stride * 16 : nullptr;
            char *olines = send ? oslot + (int64_t)jj * stride * 16 : nullptr;
            for (int64_t l0 = tid; ok && l0 < nl; l0 += (int64_t)LU * nt) {
                /* All loads of LU lines first, then the flags: latency overlaps. */
                Line w[LU];
                uint64_t x[LU] = {};
                WEFT_UNROLL
                for (int u = 0; u < LU; u++) {
                    int64_t l = l0 + (int64_t)u * nt;
                    if (l < nl) {
                        /* The source first: its address does not wait for the slot's. */
                        if (rd) x[u] = ll_read(rsrc, slim, l);
                        if (recv) w[u] = P::ll_ld(ilines + l * 16);
                    }
                }
                WEFT_UNROLL
                for (int u = 0; u < LU; u++) {
                    int64_t l = l0 + (int64_t)u * nt;
                    if (l >= nl || !ok) continue;
                    uint64_t v = x[u];
                    if (recv) {
                        if ((w[u].f0 != fin || w[u].f1 != fin) &&
                            !(ok = wait_line(ilines + l * 16, fin, st, w[u])))
                            continue;
                        if (u == 0) WEFT_PROBE_SUB(SUB_DATA);
                        v = (uint64_t)w[u].d0 | (uint64_t)w[u].d1 << 32;
                        if (rd) v = reduce_u64<T, Op>(v, x[u]);
                    }
                    if (q.dst) ll_write(q.dst, q.dlim, l, v);
                    if (send)
                        P::ll_st(olines + l * 16, (uint32_t)v, fout, (uint32_t)(v >> 32), fout);
                }
                WEFT_PROBE_SUB(SUB_STORE);
            }
        }
        if (p.sync_or(!ok)) return false;
        WEFT_PROBE_SUB(SUB_SYNC);
        /* As NCCL's LL: the lines' values are in registers and used before the barrier, so a
         * plain store returns the slot; no fence. */
        if (recv && p.tid() == 0) P::st_rlx(rc.head, rpos + 1);
        spos += send;
        rpos += recv;
        return true;
    }

    /* ---- LL128 ------------------------------------------------------------------------ *
     * A message is lines of 128 bytes, each 8 units of 16: units 0-6 carry 16 data bytes, unit 7
     * carries 8 and the message's flag (ll_flag) in its upper half. A chunk's slice takes whole
     * lines (line L: data bytes [120 L, 120 L + 120)), and a message's chunks lie c.E's lines
     * apart (weft_proto_chunk_data sizes the slice so that they fit the slot). On the GPU
     * (P::LG = 8) eight lanes of a warp store a line, and load it, in one instruction, which
     * NVLink and the L2 move whole, so a line whose flag is the message's holds its data, with no
     * fence (NCCL's LL128 rests on the same; the runtime runs LL128 only where it holds,
     * weft_plan_gate_proto); a warp waits for its lines together (a vote). On the host (P::LG =
     * 1) a thread takes a whole line: its flag stored last with a release, loaded first with an
     * acquire. Lines are never reset: a slot's next message has another flag. */
    static constexpr int LG = P::LG;  /* threads of one line */
    static constexpr int LS = 8 / LG; /* units of a line each of them takes */

    /* The data of unit sub of line L of a slice of lim elements at ptr (zeros past its end).
     * Whatever a lane's unit holds, every lane runs the same instructions (predicated, a loop of
     * fixed length), and the flag goes into the store inside its asm (ll128_st): with a loop
     * as long as each lane's data and the flag set in a branch, int8 calls read torn lines on
     * one H200 (test_gpu in loopback: 12 of 376 cases wrong, all of 1-byte types; none since). */
    WEFT_DEV Pack l128_read(const char *ptr, int64_t lim, int64_t L, int sub) const {
        const int64_t off = L * WEFT_LL128_LINE_DATA + sub * 16, nb = lim * SZ - off;
        const int n = sub == 7 ? 8 : 16;
        const char *q = ptr + off;
        const bool fast = nb >= n && ((uintptr_t)q & 7) == 0;
        Pack v{0, 0};
        if (fast) v.lo = P::template ld<uint64_t>(q);
        if (fast && n == 16) v.hi = P::template ld<uint64_t>(q + 8);
        char b[16];
        memcpy(b, &v, 16);
        WEFT_UNROLL
        for (int i = 0; i < 16; i += SZ)
            if (!fast && i < n && i < nb) {
                T x = P::template ld<T>(q + i);
                memcpy(b + i, &x, SZ);
            }
        memcpy(&v, b, 16);
        return v;
    }
    WEFT_DEV void l128_write(char *ptr, int64_t lim, int64_t L, int sub, Pack v) const {
        const int64_t off = L * WEFT_LL128_LINE_DATA + sub * 16, nb = lim * SZ - off;
        const int n = sub == 7 ? 8 : 16;
        char *q = ptr + off;
        const bool fast = nb >= n && ((uintptr_t)q & 7) == 0;
        if (fast) P::template st<uint64_t>(q, v.lo);
        if (fast && n == 16) P::template st<uint64_t>(q + 8, v.hi);
        char b[16];
        memcpy(b, &v, 16);
        WEFT_UNROLL
        for (int i = 0; i < 16; i += SZ)
            if (!fast && i < n && i < nb) {
                T x;
                memcpy(&x, b + i, SZ);
                P::template st<T>(q + i, x);
            }
    }

    /* A warp's lines of one batch (act: this thread's line is in the slice) until every flag is
     * the message's; w: this thread's units of its line, loaded again. Every lane of the warp
     * calls it and gets the same answer (false: the call stops, as spin's). */
    WEFT_DEV bool wait128(const char *line, bool act, uint64_t flag, const weft_dstep &st,
                          Pack *w) {
        const int sub0 = p.tid() % LG;
        const bool fl = sub0 == LG - 1;
        uint64_t t0 = P::now_ns(), first = t0;
        const uint64_t pc = WEFT_PROBE_CLOCK();
        bool armed = false;
        for (uint32_t n = 1;; n++) {
            P::pause();
            p.warp_sync(); /* a line's lanes load it in one instruction */
            if (act)
                for (int k = LS - 1; k >= 0; k--)
                    w[k] = P::ll128_ld(line + (sub0 + k * LG) * 16);
            if (!p.warp_any(act && fl && w[LS - 1].hi != flag)) {
                waited(WEFT_RT_WAIT_DATA, first, pc);
                return true;
            }
            bool stop = false;
            if ((n & 255) == 0 && p.flag_leader()) /* it reports its flag as what it saw */
                stop = stalled(
                    t0, first, armed, [&] { return w[LS - 1].hi; }, WEFT_RT_WAIT_DATA, st, rc.peer,
                    rc.chan, flag);
            if (p.warp_any(stop)) return false;
        }
    }

    /* One step of one connection each way (at most), LL128: as ll_step, line by line. */
    WEFT_DEV bool ll128_step(const weft_dstep &st, unsigned f, int64_t e0, int64_t en) {
        constexpr int B = LU; /* lines in flight per thread */
        const bool recv = f & WEFT_STEP_F_RECV, send = f & WEFT_STEP_F_SEND;
        /* Each thread checks credit for itself (no barrier before the lines go out); a warp's
         * lanes then go on together. */
        bool ok = !send || wait_credit(st);
        ok = !p.warp_any(!ok);
        const char *islot =
            recv ? rc.slots + (int64_t)(rpos % (uint64_t)rc.nslots) * rc.slot_bytes : nullptr;
        char *oslot =
            send ? sc.slots + (int64_t)(spos % (uint64_t)sc.nslots) * sc.slot_bytes : nullptr;
        const uint64_t fin = ll_flag(rpos), fout = ll_flag(spos);
        const int64_t nline = (en * SZ + WEFT_LL128_LINE_DATA - 1) / WEFT_LL128_LINE_DATA,
                      stride = (c.E * SZ + WEFT_LL128_LINE_DATA - 1) / WEFT_LL128_LINE_DATA *
                               WEFT_LL128_LINE;
        const int tid = p.tid(), sub0 = tid % LG;
        const int64_t grp = tid / LG, ngrp = p.nthreads() / LG;
        Ptrs q;
        for (int jj = 0; jj < st.cnt && ok; jj++) {
            ptrs(st, f, jj, e0, en, islot, nullptr, c.E, q);
            if (traced() && tid == 0) trace_bytes<P>(a.trace, tbi, (q.dst ? q.dlim : q.lim) * SZ);
            const bool rd = !recv || q.nred != 0;
            const char *rsrc = recv ? q.red0 : q.in;
            const char *il = recv ? islot + (int64_t)jj * stride : nullptr;
            char *ol = send ? oslot + (int64_t)jj * stride : nullptr;
            /* every thread runs every batch (the votes take whole warps) */
            for (int64_t b0 = 0; ok && b0 < nline; b0 += (int64_t)B * ngrp) {
                Pack w[B][LS], x[B][LS];
                WEFT_UNROLL
                for (int u = 0; u < B; u++) {
                    const int64_t L = b0 + (int64_t)u * ngrp + grp;
                    WEFT_UNROLL
                    for (int k = 0; k < LS; k++)
                        x[u][k] =
                            L < nline && rd ? l128_read(rsrc, q.lim, L, sub0 + k * LG) : Pack{0, 0};
                }
                if (recv) {
                    p.warp_sync(); /* a line's lanes load it in one instruction */
                    WEFT_UNROLL
                    for (int u = 0; u < B; u++) {
                        const int64_t L = b0 + (int64_t)u * ngrp + grp;
                        if (L < nline)
                            for (int k = LS - 1; k >= 0; k--) /* the flag first (host) */
                                w[u][k] =
                                    P::ll128_ld(il + L * WEFT_LL128_LINE + (sub0 + k * LG) * 16);
                    }
                    WEFT_UNROLL
                    for (int u = 0; u < B && ok; u++) {
                        const int64_t L = b0 + (int64_t)u * ngrp + grp;
                        const bool act = L < nline;
                        if (p.warp_any(act && sub0 == LG - 1 && w[u][LS - 1].hi != fin))
                            ok = wait128(il + L * WEFT_LL128_LINE, act, fin, st, w[u]);
                    }
                    if (!ok) break;
                    WEFT_PROBE_SUB(SUB_DATA);
                }
                WEFT_UNROLL
                for (int u = 0; u < B; u++) {
                    const int64_t L = b0 + (int64_t)u * ngrp + grp;
                    if (L >= nline) continue;
                    WEFT_UNROLL
                    for (int k = 0; k < LS; k++) {
                        const int sub = sub0 + k * LG;
                        if (recv) {
                            Pack m = w[u][k];
                            if (sub == 7) m.hi = 0; /* the flag */
                            x[u][k] = rd ? reduce_pack<T, Op>(m, x[u][k]) : m;
                        }
                        if (q.dst) l128_write(q.dst, q.dlim, L, sub, x[u][k]);
                    }
                }
                if (send) {
                    p.warp_sync(); /* a line's lanes store it in one instruction */
                    WEFT_UNROLL
                    for (int u = 0; u < B; u++) {
                        const int64_t L = b0 + (int64_t)u * ngrp + grp;
                        if (L >= nline) continue;
                        WEFT_UNROLL
                        for (int k = 0; k < LS; k++) { /* the flag last (host) */
                            const int sub = sub0 + k * LG;
                            /* the flag goes in inside the store: no branch between the lanes */
                            P::ll128_st(ol + L * WEFT_LL128_LINE + sub * 16, x[u][k], fout,
                                        sub == 7);
                        }
                    }
                }
                WEFT_PROBE_SUB(SUB_STORE);
            }
        }
        if (p.sync_or(!ok)) return false;
        WEFT_PROBE_SUB(SUB_SYNC);
        /* as LL's: the values were used before the barrier; a plain store returns the slot */
        if (recv && tid == 0) P::st_rlx(rc.head, rpos + 1);
        spos += send;
        rpos += recv;
        return true;
    }

    /* ---- folds, scatters and multi-peer sends --------------------------------------- *
     * Entry i of the message table (see weft_drecv): a runner's from its shared tables, a tb's
     * from the rank's table. A message's connection end (member g's) and number: on a FIFO the
     * connection's position at the call's start (the owner only counts it: its counter does not
     * move until it ends, after this step, and a runner's never moves during the call) plus the
     * message's place in the member's iterations; direct, its number in this call. */
    static constexpr int F = WEFT_RT_MAX_FUSE;
    WEFT_DEV const weft_drecv &xent(int32_t i) const {
        return t.runner ? p.rsm()->ent[i] : a.xrecv[i];
    }
    WEFT_DEV void msg_end(const weft_drecv &x, bool send, weft_dconn &e, uint64_t &msg,
                          bool &dir) const {
        if (t.runner) {
            const RunConn &rc = p.rsm()->conn[x.conn];
            e = rc.e;
            dir = false;
            msg = rc.pos0 + (uint64_t)(j * rc.per + x.k);
            return;
        }
        const weft_drec *R = (const weft_drec *)(const void *)(a.rec + (int64_t)x.tb * a.rec_bytes);
        e = send ? R->sc : R->rc;
        member(e, g);
        dir = !LLK && c.direct && e.direct;
        msg = (uint64_t)(j * x.per + x.k);
        if (!dir) msg += P::ld_rlx(e.pos);
    }

    /* An entry's data for chunk jj: a FIFO slot, the sender's chunk read in place, or a local
     * chunk (lim: the elements that matter there). */
    WEFT_DEV const char *operand_ptr(const weft_drecv &x, const weft_dconn &e, uint64_t msg,
                                     bool dir, int jj, int64_t e0, int64_t en, int64_t *lim) const {
        if (x.tb < 0) return chunk(x.pbuf, x.poff + jj, e0, en, lim);
        /* A message carries whole slots, whatever buffer it was sent from (a user chunk's
         * invalid tail is padding the receiver discards); read in place, only the sender's
         * user chunk's valid part exists (direct transfers send only user buffers). */
        *lim = en;
        if (!dir)
            return e.slots + (int64_t)(msg % (uint64_t)e.nslots) * e.slot_bytes +
                   (int64_t)jj * c.E * (is_ll() ? 2 * SZ : SZ);
        *lim = valid(x.poff + jj, e0, en);
        const char *b = a.pbase[x.pbuf ? 1 : 0][e.peer] + a.poff[x.pbuf ? 1 : 0];
        return b + (weft_chunk_start(c.count, c.k, c.C, x.poff + jj) + e0) * SZ;
    }

    /* Simple: thread i waits for the message of entry i (its tail or ready word). */
    WEFT_DEV bool xwait(const weft_dstep &st) {
        bool ok = true;
        for (int i = p.tid(); i < st.nrecv && ok; i += p.nthreads()) {
            const weft_drecv &x = xent(st.xrecv + i);
            if (x.tb < 0) continue;
            weft_dconn e;
            uint64_t msg;
            bool dir;
            msg_end(x, false, e, msg, dir);
            const uint64_t *w = dir ? e.ready : e.tail;
            uint64_t want = dir ? (tag() | (msg + 1)) : msg + 1;
            ok = spin([&] { return reached(P::ld_acq_sys(w), want); }, [&] { return P::ld_rlx(w); },
                      WEFT_RT_WAIT_DATA, st, e.peer, e.chan, want);
        }
        return !p.sync_or(!ok);
    }

    /* Every message read: FIFO slots (or the senders' buffers) go back. */
    WEFT_DEV void xdone(const weft_dstep &st) {
        for (int i = p.tid(); i < st.nrecv; i += p.nthreads()) {
            const weft_drecv &x = xent(st.xrecv + i);
            if (x.tb < 0) continue;
            weft_dconn e;
            uint64_t msg;
            bool dir;
            msg_end(x, false, e, msg, dir);
            if (x.ord & WEFT_XENT_NOTLAST) continue;
            /* plain stores after the caller's barrier, as simple_step's */
            if (dir)
                P::st_rlx(e.done, tag() | (msg + 1));
            else
                P::st_rlx(e.head, msg + 1);
        }
        /* A fold of the plan as written took its last message on this tb's own connection. */
        if (!(st.flags & WEFT_DSTEP_F_XCONN)) {
            if (rdir)
                rcount++;
            else
                rpos++;
        }
    }

    /* Chunk jj of a fold or scatter, uniform across the CTA: entry i's data in sr[i]; in
     * sr[F + i] bit 0 its order (folds: op(value, it)), bit 1 an LL message, bits 32.. its flag;
     * scatters: its destination in sr[2F + i] and its elements in sr[3F + i]. Returns what a
     * fold computes (the least any operand holds); its destinations in *dst and *dst2 and what
     * each of them takes of it in *l1 and *l2 (0 where there is none: each destination is
     * written as far as it is valid, whatever the other holds). */
    WEFT_DEV int64_t xchunk(const weft_dstep &st, int jj, int64_t e0, int64_t en, char **dst,
                            char **dst2, int64_t *l1, int64_t *l2) {
        const char **sr = p.sred();
        const bool scat = st.flags & WEFT_DSTEP_F_SCATTER;
        int64_t lim = en;
        *dst = *dst2 = nullptr;
        *l1 = *l2 = 0;
        if (!scat && !(st.flags & WEFT_DSTEP_F_NODST))
            *dst = chunk(st.dstbuf, st.dstoff + jj, e0, en, l1);
        if (!scat && (st.flags & WEFT_DSTEP_F_DST2))
            *dst2 = chunk(st.dst2buf, st.dst2off + jj, e0, en, l2);
        p.sync(); /* the previous chunk's readers are done with sr */
        for (int i = p.tid(); i < st.nrecv; i += p.nthreads()) {
            const weft_drecv &x = xent(st.xrecv + i);
            weft_dconn e;
            uint64_t msg = 0;
            bool dir = false;
            if (x.tb >= 0) msg_end(x, false, e, msg, dir);
            int64_t li;
            sr[i] = operand_ptr(x, e, msg, dir, jj, e0, en, &li);
            uint64_t w = (x.ord & WEFT_XENT_ORD) ? 1u : 0u;
            if (x.tb >= 0 && !dir && is_ll()) w |= 2u | ((uint64_t)ll_flag(msg) << 32);
            sr[F + i] = (const char *)(uintptr_t)w;
            if (scat) {
                int64_t ld;
                sr[2 * F + i] = chunk(x.dbuf, x.doff + jj, e0, en, &ld);
                sr[3 * F + i] = (const char *)(uintptr_t)(li < ld ? li : ld);
            } else {
                sr[3 * F + i] = (const char *)(uintptr_t)li;
            }
        }
        p.sync();
        if (!scat)
            for (int i = 0; i < st.nrecv; i++) {
                int64_t li = (int64_t)(uintptr_t)sr[3 * F + i];
                lim = li < lim ? li : lim;
            }
        *l1 = *l1 < lim ? *l1 : lim;
        *l2 = *l2 < lim ? *l2 : lim;
        return lim;
    }

    /* Simple: value = op0, then each operand combined in its order, into dst and dst2. */
    WEFT_DEV bool fold_simple(const weft_dstep &st, int64_t e0, int64_t en) {
        if (!xwait(st)) return false;
        const char **sr = p.sred();
        const int m = st.nrecv, nt = p.nthreads(), tid = p.tid();
        for (int jj = 0; jj < st.cnt; jj++) {
            char *dst, *dst2;
            int64_t l1, l2;
            const int64_t lim = xchunk(st, jj, e0, en, &dst, &dst2, &l1, &l2);
            /* packs as far as both destinations go; the rest (a shorter one's end, or what
             * only the longer one takes: rare) element by element */
            const int64_t lo = dst && dst2 ? (l1 < l2 ? l1 : l2)
                               : dst       ? l1
                                           : l2,
                          hi = l1 > l2 ? l1 : l2;
            uintptr_t al = (uintptr_t)dst | (uintptr_t)dst2;
            for (int i = 0; i < m; i++)
                al |= (uintptr_t)sr[i];
            const int64_t npk = (al & 15) == 0 ? lo / V : 0;
            for (int64_t i0 = 0; i0 < npk; i0 += (int64_t)U * nt) {
                Pack v[U];
                WEFT_UNROLL
                for (int u = 0; u < U; u++) {
                    int64_t i = i0 + (int64_t)u * nt + tid;
                    if (i < npk) v[u] = P::ld_pack(sr[0] + i * 16);
                }
                for (int r = 1; r < m; r++) {
                    const bool ord = ((uintptr_t)sr[F + r] & 1u) != 0;
                    /* The operand's U loads all in flight before the first reduce waits for one
                     * (loaded and reduced pack by pack, they took a round trip each: loopback,
                     * 8 MB two-shot, 256 -> 165 us at N = 4, 958 -> 480 at N = 8) */
                    Pack x[U];
                    WEFT_UNROLL
                    for (int u = 0; u < U; u++) {
                        int64_t i = i0 + (int64_t)u * nt + tid;
                        if (i < npk) x[u] = P::ld_pack(sr[r] + i * 16);
                    }
                    WEFT_UNROLL
                    for (int u = 0; u < U; u++) {
                        int64_t i = i0 + (int64_t)u * nt + tid;
                        if (i < npk)
                            v[u] = ord ? reduce_pack<T, Op>(v[u], x[u])
                                       : reduce_pack<T, Op>(x[u], v[u]);
                    }
                }
                WEFT_UNROLL
                for (int u = 0; u < U; u++) {
                    int64_t i = i0 + (int64_t)u * nt + tid;
                    if (i >= npk) continue;
                    if (dst) P::st_pack(dst + i * 16, v[u]);
                    if (dst2) P::st_pack(dst2 + i * 16, v[u]);
                }
            }
            for (int64_t e = npk * V + tid; e < hi; e += nt) {
                T v = P::template ld<T>(sr[0] + e * SZ);
                for (int r = 1; r < m; r++) {
                    T x = P::template ld<T>(sr[r] + e * SZ);
                    v = ((uintptr_t)sr[F + r] & 1u) ? Op::template apply<T>(v, x)
                                                    : Op::template apply<T>(x, v);
                }
                if (dst && e < l1) P::template st<T>(dst + e * SZ, v);
                if (dst2 && e < l2) P::template st<T>(dst2 + e * SZ, v);
            }
            if (traced() && p.tid() == 0)
                trace_bytes<P>(a.trace, tbi, (dst || dst2 ? lo : lim) * SZ);
        }
        p.sync();
        xdone(st);
        return true;
    }

    /* LL: every thread takes its lines of every operand, loading a few operands' lines before
     * it looks at any flag, so that the messages' latencies overlap. */
    WEFT_DEV bool fold_ll(const weft_dstep &st, int64_t e0, int64_t en) {
        constexpr int B = 4;
        const int m = st.nrecv, nt = p.nthreads(), tid = p.tid();
        const char **sr = p.sred();
        const int64_t nl = (en * SZ + 7) / 8;
        bool ok = true;
        for (int jj = 0; jj < st.cnt && ok; jj++) {
            char *dst, *dst2;
            int64_t l1, l2;
            const int64_t lim = xchunk(st, jj, e0, en, &dst, &dst2, &l1, &l2);
            if (traced() && tid == 0)
                trace_bytes<P>(a.trace, tbi,
                               (dst && dst2 ? (l1 < l2 ? l1 : l2)
                                : dst       ? l1
                                : dst2      ? l2
                                            : lim) *
                                   SZ);
            for (int64_t l = tid; ok && l < nl; l += nt) {
                uint64_t v = 0;
                for (int i0 = 0; i0 < m && ok; i0 += B) {
                    Line w[B];
                    uint64_t x[B];
                    WEFT_UNROLL
                    for (int u = 0; u < B; u++) {
                        const int i = i0 + u;
                        if (i >= m) continue;
                        if ((uintptr_t)sr[F + i] & 2u)
                            w[u] = P::ll_ld(sr[i] + l * 16);
                        else
                            x[u] = ll_read(sr[i], lim, l);
                    }
                    WEFT_UNROLL
                    for (int u = 0; u < B; u++) {
                        const int i = i0 + u;
                        if (i >= m || !ok) continue;
                        const uintptr_t fw = (uintptr_t)sr[F + i];
                        if (fw & 2u) {
                            const uint32_t fin = (uint32_t)((uint64_t)fw >> 32);
                            if ((w[u].f0 != fin || w[u].f1 != fin) &&
                                !(ok = wait_xline(sr[i] + l * 16, fin, st, i, w[u])))
                                continue;
                            x[u] = (uint64_t)w[u].d0 | (uint64_t)w[u].d1 << 32;
                        }
                        v = i == 0      ? x[u]
                            : (fw & 1u) ? reduce_u64<T, Op>(v, x[u])
                                        : reduce_u64<T, Op>(x[u], v);
                    }
                }
                if (ok) {
                    if (dst) ll_write(dst, l1, l, v);
                    if (dst2) ll_write(dst2, l2, l, v);
                }
            }
        }
        if (p.sync_or(!ok)) return false;
        xdone(st);
        return true;
    }

    /* A scatter: every entry's data to its own destination in one pass. */
    WEFT_DEV bool scatter(const weft_dstep &st, int64_t e0, int64_t en) {
        constexpr int B = 4;
        const bool ll = is_ll();
        if (!ll && !xwait(st)) return false;
        const int m = st.nrecv, nt = p.nthreads(), tid = p.tid();
        const char **sr = p.sred();
        const int64_t nl = (en * SZ + 7) / 8;
        bool ok = true;
        for (int jj = 0; jj < st.cnt && ok; jj++) {
            char *d0, *d1;
            int64_t l1, l2;
            xchunk(st, jj, e0, en, &d0, &d1, &l1, &l2);
            if (!ll) {
                for (int i = 0; i < m; i++)
                    move((int64_t)(uintptr_t)sr[3 * F + i], sr[i], 0, nullptr, nullptr,
                         (char *)sr[2 * F + i], nullptr);
                continue;
            }
            for (int64_t l = tid; ok && l < nl; l += nt)
                for (int i0 = 0; i0 < m && ok; i0 += B) {
                    Line w[B];
                    uint64_t x[B];
                    WEFT_UNROLL
                    for (int u = 0; u < B; u++) {
                        const int i = i0 + u;
                        if (i >= m) continue;
                        if ((uintptr_t)sr[F + i] & 2u)
                            w[u] = P::ll_ld(sr[i] + l * 16);
                        else
                            x[u] = ll_read(sr[i], (int64_t)(uintptr_t)sr[3 * F + i], l);
                    }
                    WEFT_UNROLL
                    for (int u = 0; u < B; u++) {
                        const int i = i0 + u;
                        if (i >= m || !ok) continue;
                        const uintptr_t fw = (uintptr_t)sr[F + i];
                        if (fw & 2u) {
                            const uint32_t fin = (uint32_t)((uint64_t)fw >> 32);
                            if ((w[u].f0 != fin || w[u].f1 != fin) &&
                                !(ok = wait_xline(sr[i] + l * 16, fin, st, i, w[u])))
                                continue;
                            x[u] = (uint64_t)w[u].d0 | (uint64_t)w[u].d1 << 32;
                        }
                        ll_write((char *)sr[2 * F + i], (int64_t)(uintptr_t)sr[3 * F + i], l, x[u]);
                    }
                }
        }
        if (p.sync_or(!ok)) return false;
        xdone(st);
        return true;
    }

    /* Sends to several peers in one pass (a collapsed rank's consecutive sends): thread i waits
     * for room on entry i's connection and puts its slot, flag and (per chunk) its source in
     * sr; every source is read once per line. */
    WEFT_DEV bool msend(const weft_dstep &st, int64_t e0, int64_t en) {
        const int m = st.nsend, nt = p.nthreads(), tid = p.tid();
        const char **sr = p.sred();
        const bool ll = is_ll();
        bool ok = true;
        p.sync(); /* the previous step's readers are done with sr */
        for (int i = tid; i < m && ok; i += nt) {
            weft_dconn e;
            uint64_t msg;
            bool dir;
            msg_end(xent(st.xsend + i), true, e, msg, dir);
            if (msg >= (uint64_t)e.nslots) {
                uint64_t need = msg + 1 - (uint64_t)e.nslots;
                ok = spin([&] { return reached(P::ld_acq_sys(e.head), need); },
                          [&] { return P::ld_rlx(e.head); }, WEFT_RT_WAIT_CREDIT, st, e.peer,
                          e.chan, need);
            }
            sr[i] = e.slots + (int64_t)(msg % (uint64_t)e.nslots) * e.slot_bytes;
            sr[F + i] = (const char *)(uintptr_t)(ll ? ll_flag(msg) : msg + 1);
        }
        if (p.sync_or(!ok)) return false;
        const int64_t nl = (en * SZ + 7) / 8, stride = c.E * SZ / 8;
        for (int jj = 0; jj < st.cnt; jj++) {
            if (jj > 0) p.sync(); /* the previous chunk's readers are done with the sources */
            for (int i = tid; i < m; i += nt) {
                const weft_drecv &x = xent(st.xsend + i);
                int64_t lim;
                sr[2 * F + i] = chunk(x.pbuf, x.poff + jj, e0, en, &lim);
                sr[3 * F + i] = (const char *)(uintptr_t)lim;
            }
            p.sync();
            if (ll) {
                for (int64_t l = tid; l < nl; l += nt) {
                    uint64_t v = 0;
                    for (int i = 0; i < m; i++) {
                        /* one read for consecutive entries of one source (an empty chunk
                         * starts where the next segment does: the limits must agree too) */
                        if (i == 0 || sr[2 * F + i] != sr[2 * F + i - 1] ||
                            sr[3 * F + i] != sr[3 * F + i - 1])
                            v = ll_read(sr[2 * F + i], (int64_t)(uintptr_t)sr[3 * F + i], l);
                        const uint32_t fo = (uint32_t)(uintptr_t)sr[F + i];
                        P::ll_st((char *)sr[i] + ((int64_t)jj * stride + l) * 16, (uint32_t)v, fo,
                                 (uint32_t)(v >> 32), fo);
                    }
                }
            } else {
                for (int i = 0; i < m; i++)
                    move((int64_t)(uintptr_t)sr[3 * F + i], sr[2 * F + i], 0, nullptr, nullptr,
                         nullptr, (char *)sr[i] + (int64_t)jj * c.E * SZ);
            }
            if (traced() && tid == 0) trace_bytes<P>(a.trace, tbi, en * SZ);
        }
        /* Every step ends with a CTA barrier: the next one may overwrite what this one still
         * reads (an in-place copy over a source sent a moment ago). */
        p.sync();
        if (!ll) {
            for (int i = tid; i < m; i += nt) {
                weft_dconn e;
                uint64_t msg;
                bool dir;
                const weft_drecv &x = xent(st.xsend + i);
                if (x.ord & WEFT_XENT_NOTLAST) continue;
                msg_end(x, true, e, msg, dir);
                P::st_rel_sys(e.tail, msg + 1);
            }
        }
        return true;
    }

    /* A collapsed rank's step on one connection each way: that connection's ends become the
     * tb's own for the step (a runner has none of its own), then the step runs as any other. */
    WEFT_DEV bool xstep(const weft_dstep &st, unsigned f, int64_t e0, int64_t en) {
        bool dir;
        if (f & WEFT_STEP_F_SEND) {
            msg_end(xent(st.xsend), true, sc, spos, dir);
            credit = spos >= (uint64_t)sc.nslots ? 0 : spos; /* read the head when it matters */
            sdir = false;
        }
        if (f & WEFT_STEP_F_RECV) {
            msg_end(xent(st.xrecv), false, rc, rpos, dir);
            rdir = false;
        }
        const bool comm = f & (WEFT_STEP_F_SEND | WEFT_STEP_F_RECV);
        return comm && is_ll() ? ll_step(st, f, e0, en) : simple_step(st, f, e0, en);
    }

    /* ---- one CTA's whole call ---------------------------------------------------------- */
    /* Thread 0: the step's dependency is met (another tb's progress); the caller's CTA barrier
     * carries it to the other threads. */
    WEFT_DEV bool wait_dep(const weft_dstep &st) {
        uint64_t want = base() + (uint64_t)(j * st.dep_stride + st.dep_target);
        const uint64_t *pr = &a.prog[(int64_t)st.depid * c.kmax + g].v;
        return spin([&] { return reached(P::ld_acq_gpu(pr), want); }, [&] { return P::ld_rlx(pr); },
                    WEFT_RT_WAIT_DEP, st, -1, t.chan, want);
    }

    WEFT_DEV bool step(const weft_dstep &st, int s, int64_t e0, int64_t en) {
        if (traced() && p.tid() == 0)
            trace_begin<P>(a.trace, tbi, (uint32_t)(j * t.nsteps + s), s, j, spos, rpos, tlast);
        unsigned f = weft_step_flags((weft_step_type)st.type);
        /* A plain LL step of one batch whose dependency only orders its stores waits for it
         * after its loads (ll_step): an in-place receive then polls its message while the send
         * it waits for finishes, instead of after. */
        const bool late = (st.flags & WEFT_DSTEP_F_DEPLATE) && is_ll() &&
                          (f & (WEFT_STEP_F_SEND | WEFT_STEP_F_RECV)) &&
                          !(st.flags & (WEFT_DSTEP_F_ELSEWHERE | WEFT_DSTEP_F_FOLD |
                                        WEFT_DSTEP_F_SCATTER | WEFT_DSTEP_F_XCONN)) &&
                          st.nsend == 0 && st.cnt == 1 &&
                          (en * SZ + 7) / 8 <= (int64_t)LU * p.nthreads();
        if (st.depid >= 0 && !late) {
            bool ok = p.tid() != 0 || wait_dep(st);
            if (p.sync_or(!ok)) return false;
        }
        if (st.flags & WEFT_DSTEP_F_ELSEWHERE) {
            /* a fused receive of another tb took this message (it waited for that step) */
            if (rdir)
                rcount++;
            else
                rpos++;
        } else if (st.flags & WEFT_DSTEP_F_FOLD) {
            if (!(is_ll() ? fold_ll(st, e0, en) : fold_simple(st, e0, en))) return false;
        } else if (st.flags & WEFT_DSTEP_F_SCATTER) {
            if (!scatter(st, e0, en)) return false;
        } else if (st.nsend > 1 || (st.nsend == 1 && st.type == WEFT_STEP_SEND)) {
            if (!msend(st, e0, en)) return false;
        } else if ((st.flags & WEFT_DSTEP_F_XCONN) && (f & (WEFT_STEP_F_SEND | WEFT_STEP_F_RECV))) {
            if (!xstep(st, f, e0, en)) return false;
        } else if (st.type != WEFT_STEP_NOP) {
            bool comm = f & (WEFT_STEP_F_SEND | WEFT_STEP_F_RECV);
            bool ok = comm && is_ll128() ? ll128_step(st, f, e0, en)
                      : comm && is_ll()  ? ll_step(st, f, e0, en, late)
                                         : simple_step(st, f, e0, en);
            if (!ok) return false;
        }
        if (st.post && p.tid() == 0) {
            P::st_rel_gpu(prog, base() + (uint64_t)(j * t.nsteps_orig + st.post));
            posted = true;
        }
        WEFT_PROBE_SUB(SUB_POST);
        if (traced() && p.tid() == 0)
            tlast = trace_end_step<P>(a.trace, tbi, (uint32_t)(j * t.nsteps + s));
        return true;
    }

    /* Member g's FIFO, counters and direct-transfer words. */
    WEFT_DEV static void member(weft_dconn &e, int g) {
        if (e.slots == nullptr) return;
        e.slots += (int64_t)g * e.mstride;
        e.tail += (int64_t)g * (WEFT_RT_LINE / 8);
        e.head += (int64_t)g * (WEFT_RT_LINE / 8);
        e.pos += 2 * (int64_t)g;
        if (e.ready) e.ready += (int64_t)g * DW;
        if (e.done) e.done += (int64_t)g * DW;
    }

    /* A member whose sends were read in place waits until every one has been read. */
    WEFT_DEV bool drain(const weft_dstep &st) {
        bool ok = true;
        if (p.tid() == 0) {
            uint64_t want = tag() | scount;
            ok = spin([&] { return reached(P::ld_acq_sys(sc.done), want); },
                      [&] { return P::ld_rlx(sc.done); }, WEFT_RT_WAIT_READ, st, sc.peer, sc.chan,
                      want);
        }
        return !p.sync_or(!ok);
    }

    WEFT_DEV void run() {
        /* The record (tb, connection ends, first step) needs nothing from earlier kernels and
         * loads while they finish; then, once the stream's previous kernel is complete, one
         * round of the member's progress and the connections' counters. */
#ifdef WEFT_RT_PROBE
        pr_last = pr_c0 = P::clock();
        pr_ns0 = P::now_ns();
        pr_row = probe_row();
#endif
        const weft_drec *R = (const weft_drec *)(const void *)(a.rec + (int64_t)tbi * a.rec_bytes);
        t = R->tb;
        sc = R->sc;
        rc = R->rc;
        steps = (const weft_dstep *)(const void *)(R + 1);
        WEFT_PROBE_USE(t.nsteps + sc.nslots + rc.nslots);
        WEFT_PROBE_AT(RECORD);
        /* A tb's steps go to shared memory while the previous kernel ends (a runner's with its
         * tables), so that no step waits for its own record: each would be one more round trip
         * to global memory on the path. */
        const bool ssteps = t.runner || t.nsteps <= WEFT_RT_RUN_MAX_STEPS;
        /* A runner counts calls on tb 0's line, as the tbs it stands for do (see finish). */
        prog = &a.prog[(int64_t)(t.runner ? 0 : tbi) * c.kmax + g].v;
        member(sc, g);
        member(rc, g);
        sdir = !LLK && c.direct && sc.direct;
        rdir = !LLK && c.direct && rc.direct;
        if (t.runner) {
            run_load(R);
        } else if (ssteps) {
            const uint32_t *src = (const uint32_t *)(const void *)steps;
            uint32_t *dst = (uint32_t *)(void *)p.rsm()->steps;
            for (int w = p.tid(); w < (int)(t.nsteps * sizeof(weft_dstep) / 4); w += p.nthreads())
                dst[w] = src[w];
            p.sync();
        }
        WEFT_PROBE_AT(LOAD);
        P::grid_wait();
        WEFT_PROBE_AT(GRIDWAIT);
        if (t.runner) run_counters();
        /* One round of loads; nothing here waits for them (calls(), base() and tag() are taken
         * where used), so thread 0 goes on to its first step while they are in flight. */
        own = P::ld_rlx(prog);
        spos = sc.pos ? P::ld_rlx(sc.pos) : 0;
        credit = sc.pos ? P::ld_rlx(sc.pos + 1) : 0;
        rpos = rc.pos ? P::ld_rlx(rc.pos) : 0;
        rbase0 = rdir && a.pbase[0] ? a.pbase[0][rc.peer] + a.poff[0] : nullptr;
        rbase1 = rdir && a.pbase[1] ? a.pbase[1][rc.peer] + a.poff[1] : nullptr;
        scount = rcount = 0;
        posted = false;
        /* The arrival word (the watchdog's) from the last thread, which carries no line of a
         * small message: its address and value wait for loads. */
        if (tbi == a.tb0 && g == 0 && p.tid() == p.nthreads() - 1)
            P::st_rlx((uint64_t *)(void *)(a.peer_win[a.rank] + c.arrival_off), calls() + 1);
        const bool tr = traced() && p.tid() == 0;
        if (tr) tlast = trace_entry<P>(a.trace, tbi, spos, rpos);
        WEFT_PROBE_AT(COUNTERS);
        j = 0;
        for (it = g; it < c.niter; it += c.K, j++) {
            int64_t e0 = it * c.E, en = c.C - e0 < c.E ? c.C - e0 : c.E;
            for (int s = 0; s < t.nsteps; s++) {
                const uint64_t ps = WEFT_PROBE_CLOCK();
                (void)ps;
#ifdef WEFT_RT_PROBE
                pr_sub = ps;
#endif
                weft_dstep st = ssteps ? p.rsm()->steps[s] : steps[s];
                if (!step(st, s, e0, en)) {
                    if (tr) trace_exit<P>(a.trace, tbi, true, (uint32_t)(j * t.nsteps + s));
                    return;
                }
                if (s < 8) WEFT_PROBE_ADD(WEFT_RT_PROBE_STEP0 + s, WEFT_PROBE_CLOCK() - ps);
            }
        }
        WEFT_PROBE_AT(STEPS);
        if (sdir && scount > 0 && !drain(steps[t.nsteps - 1])) {
            if (tr) trace_exit<P>(a.trace, tbi, true, (uint32_t)(j * t.nsteps));
            return;
        }
        if (tr) trace_exit<P>(a.trace, tbi, false, 0);
        /* Threads of the last step may still be returning slots, which reads the connections'
         * counters (a fold's messages, a multi-peer send's tails): those go first. */
        p.sync();
        if (t.runner) {
            finish_runner();
            probe_exit();
            return;
        }
        /* Thread 0 holds what every thread holds, and every step ended with a CTA barrier.
         * The next call's base; a release when this call posted progress (a waiter may read
         * this value instead of the post it waited for). No barrier, no fence otherwise: only
         * the next launch reads these, and it starts after this one has ended. */
        if (p.tid() == 0) {
            if (sc.pos) P::st_rlx(sc.pos, spos), P::st_rlx(sc.pos + 1, credit);
            if (rc.pos) P::st_rlx(rc.pos, rpos);
            if (posted)
                P::st_rel_gpu(prog, base() + (1ull << 32));
            else
                P::st_rlx(prog, base() + (1ull << 32));
        }
        probe_exit();
    }

    /* The call's end in the probe: the end phase, the totals and one call. */
    WEFT_DEV void probe_exit() {
#ifdef WEFT_RT_PROBE
        WEFT_PROBE_AT(END);
        WEFT_PROBE_ADD(WEFT_RT_PROBE_CYCLES, pr_last - pr_c0);
        WEFT_PROBE_ADD(WEFT_RT_PROBE_NS, P::now_ns() - pr_ns0);
        WEFT_PROBE_ADD(WEFT_RT_PROBE_CALLS, 1);
#endif
    }

    /* A runner's end: for every tb it stood for (records 0 .. tbi - 1), what that tb would
     * have left had it run this call: its connections' counters past this member's messages
     * (j iterations of nsend / nrecv each) and its progress line at the next call, so that
     * calls run as written and collapsed share every counter and epoch. Thread i takes tb i;
     * only the next launch reads these. */
    WEFT_DEV void finish_runner() {
        RunSmem &S = *p.rsm();
        for (int i = p.tid(); i < t.nconn; i += p.nthreads())
            P::st_rlx(S.conn[i].e.pos, S.conn[i].pos0 + (uint64_t)(j * S.conn[i].per));
        for (int i = p.tid(); i < tbi; i += p.nthreads())
            P::st_rlx(&a.prog[(int64_t)i * c.kmax + g].v, base() + (1ull << 32));
    }

    /* A runner's tables into shared memory: steps, connections (member g's ends), entries. Needs
     * nothing of earlier kernels. */
    WEFT_DEV void run_load(const weft_drec *R) {
        RunSmem &S = *p.rsm();
        const int nt = p.nthreads(), tid = p.tid();
        const size_t co =
            (sizeof(weft_drec) + (size_t)t.nsteps * sizeof(weft_dstep) + 15) / 16 * 16;
        const size_t eo = co + ((size_t)t.nconn * sizeof(weft_rconn) + 15) / 16 * 16;
        const uint32_t *src = (const uint32_t *)(const void *)(R + 1);
        uint32_t *dst = (uint32_t *)(void *)S.steps;
        for (int w = tid; w < (int)(t.nsteps * sizeof(weft_dstep) / 4); w += nt)
            dst[w] = src[w];
        const weft_rconn *rc = (const weft_rconn *)(const void *)((const char *)R + co);
        for (int i = tid; i < t.nconn; i += nt) {
            S.conn[i].e = rc[i].e;
            member(S.conn[i].e, g);
            S.conn[i].per = rc[i].per;
            S.conn[i].send = rc[i].send;
        }
        src = (const uint32_t *)(const void *)((const char *)R + eo);
        dst = (uint32_t *)(void *)S.ent;
        for (int w = tid; w < (int)(t.nent * sizeof(weft_drecv) / 4); w += nt)
            dst[w] = src[w];
    }

    /* Each connection's counter at the call's start (thread i loaded connection i itself). */
    WEFT_DEV void run_counters() {
        RunSmem &S = *p.rsm();
        for (int i = p.tid(); i < t.nconn; i += p.nthreads())
            S.conn[i].pos0 = P::ld_rlx(S.conn[i].e.pos);
        p.sync();
    }
};

} // namespace weft_rt

/* X(index, element type, functor), in weft_rt_kernel_index order. */
#define WEFT_RT_KERNEL_LIST(X)                                                                     \
    X(0, uint8_t, OpCopy)                                                                          \
    X(1, uint8_t, OpSum)                                                                           \
    X(2, uint32_t, OpSum)                                                                          \
    X(3, uint64_t, OpSum)                                                                          \
    X(4, f16, OpSum)                                                                               \
    X(5, float, OpSum)                                                                             \
    X(6, double, OpSum)                                                                            \
    X(7, bf16, OpSum)                                                                              \
    X(8, uint8_t, OpProd)                                                                          \
    X(9, uint32_t, OpProd)                                                                         \
    X(10, uint64_t, OpProd)                                                                        \
    X(11, f16, OpProd)                                                                             \
    X(12, float, OpProd)                                                                           \
    X(13, double, OpProd)                                                                          \
    X(14, bf16, OpProd)                                                                            \
    X(15, int8_t, OpMax)                                                                           \
    X(16, uint8_t, OpMax)                                                                          \
    X(17, int32_t, OpMax)                                                                          \
    X(18, uint32_t, OpMax)                                                                         \
    X(19, int64_t, OpMax)                                                                          \
    X(20, uint64_t, OpMax)                                                                         \
    X(21, f16, OpMax)                                                                              \
    X(22, float, OpMax)                                                                            \
    X(23, double, OpMax)                                                                           \
    X(24, bf16, OpMax)                                                                             \
    X(25, int8_t, OpMin)                                                                           \
    X(26, uint8_t, OpMin)                                                                          \
    X(27, int32_t, OpMin)                                                                          \
    X(28, uint32_t, OpMin)                                                                         \
    X(29, int64_t, OpMin)                                                                          \
    X(30, uint64_t, OpMin)                                                                         \
    X(31, f16, OpMin)                                                                              \
    X(32, float, OpMin)                                                                            \
    X(33, double, OpMin)                                                                           \
    X(34, bf16, OpMin)
#endif
