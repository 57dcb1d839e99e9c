/* interp.h — the interpreter of one thread block's step list: FIFO protocols (Simple, LL),
 * dependencies, the count policy, the watchdog. Written once over a platform P, compiled for
 * the GPU (kernels.cu) and for the host emulation that tests it without one (tests/runtime).
 *
 * P provides, for the calling thread of a CTA:
 *   int tid(), nthreads(); void sync(); bool sync_or(bool)         (CTA barrier)
 *   const char **sred()                   (WEFT_RT_MAX_FUSE pointers shared by the CTA)
 *   static uint64_t ld_acq_sys/ld_acq_gpu/ld_rlx(const uint64_t*)   (rlx: relaxed, system)
 *   static void st_rel_sys/st_rel_gpu/st_rlx(uint64_t*, uint64_t)
 *   static uint32_t ld_rlx32(const uint32_t*); static void st_rlx32(uint32_t*, uint32_t)
 *   static bool claim(uint32_t*)                                     (CAS 0 -> 1, this GPU)
 *   static void fence_sys()
 *   static uint64_t now_ns(); static void pause()
 *   static Pack ld_pack(const char*); static void st_pack(char*, Pack)   (16 bytes, L2 path)
 *   template <class U> static U ld(const char*); template <class U> static void st(char*, U)
 *   static Line ll_ld(const char*); static void ll_st(char*, uint32_t d0, uint32_t f0,
 *                                                     uint32_t d1, uint32_t f1)
 * Memory ordering (both protocols): data stores by all threads, CTA barrier, then one thread
 * publishes with a release at system scope; the consumer's thread 0 acquires, a CTA barrier
 * follows, then all threads read through the L2 (ld_pack). LL carries a flag in every 8 bytes
 * and needs no fence.
 * Tracing (a.trace.rec != NULL; runtime/trace/trace_internal.h, docs/trace.md): thread 0 fills
 * one record per step execution directly in global memory, at index it * nsteps + s, so that no
 * register is held across a step for it (the interpreter is at its register limit) and no load
 * sits between one step's end and the next one's start. Off, nothing: untraced launches run
 * the instantiation without tracing (TR = false). Waits add to the record on the spin's slow
 * path only. */
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

/* TR: this instantiation can trace (a.trace.rec decides per launch). The GPU builds every
 * kernel twice and launches the TR = false one when the launch is not traced, so tracing costs
 * an untraced call nothing: not a test, not a register, not a byte of code. */
template <class P, class T, class Op, bool TR> struct Interp {
    static constexpr int SZ = sizeof(T);
    static constexpr int V = 16 / SZ;
    static constexpr int U = 4;  /* Simple: 16-byte packs in flight per thread */
    static constexpr int LU = 4; /* LL: lines in flight per thread */

    P &p;
    const weft_rargs &a;
    int tbi;
    weft_dtb t;
    const weft_dstep *steps;
    uint64_t calls, base; /* this algorithm's calls before this one; base = calls << 32 */
    bool posted;
    weft_dconn sc, rc;
    uint64_t spos, rpos, credit; /* credit: the sender's last view of the receiver's head */
    int64_t it;
    uint64_t tlast = 0; /* tracing (TR only): when the tb's last step ended */

    WEFT_DEV Interp(P &p_, const weft_rargs &a_, int tbi_) : p(p_), a(a_), tbi(tbi_) {}

    WEFT_DEV bool traced() const {
        return TR && a.trace.rec != nullptr;
    }

    /* ---- watchdog ---------------------------------------------------------------------- */
    WEFT_DEV bool all_arrived() const {
        for (int q = 0; q < a.nranks; q++)
            if (P::ld_rlx((const uint64_t *)(const void *)(a.peer_win[q] + a.arrival_off)) <
                calls + 1)
                return false;
        return true;
    }

    WEFT_DEV void record(uint32_t what, const weft_dstep &st, int peer, int chan, uint64_t want,
                         uint64_t seen, uint64_t waited) const {
        weft_errrec *e = a.err;
        if (!P::claim(&a.state->claim)) return; /* device memory: no host atomics */
        e->algo = a.tag;
        e->rank = a.rank;
        e->tb = tbi;
        e->step = st.orig;
        e->peer = peer;
        e->chan = chan;
        e->depid = st.depid;
        e->deps = st.dep_target - 1;
        e->iter = it;
        e->want = want;
        e->seen = seen;
        e->calls = calls;
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
        bool armed = false;
        for (uint32_t n = 1;; n++) {
            if (ready()) {
                if (traced() && p.tid() == 0)
                    trace_waited<P>(a.trace, tbi, what, P::now_ns() - first);
                return true;
            }
            if ((n & 255) == 0) {
                uint32_t *abortw = (uint32_t *)(void *)(a.peer_win[a.rank] + WEFT_RT_ABORT_OFF);
                uint32_t ab = P::ld_rlx32(abortw);
                if (ab != 0) {
                    record(WEFT_RT_WAIT_ABORTED, st, (int)ab - 1, chan, want, seen(), 0);
                    if (traced() && p.tid() == 0)
                        trace_waited<P>(a.trace, tbi, what, P::now_ns() - first);
                    return false;
                }
                uint64_t now = P::now_ns();
                if (a.timeout_ns > 0 && now - t0 > (uint64_t)a.timeout_ns) {
                    if (!all_arrived()) {
                        t0 = now;
                    } else if (!armed) {
                        armed = true;
                        t0 = now;
                    } else {
                        record(what, st, peer, chan, want, seen(), now - first);
                        for (int q = 0; q < a.nranks; q++)
                            P::st_rlx32((uint32_t *)(void *)(a.peer_win[q] + WEFT_RT_ABORT_OFF),
                                        (uint32_t)a.rank + 1);
                        if (traced() && p.tid() == 0)
                            trace_waited<P>(a.trace, tbi, what, now - first);
                        return false;
                    }
                }
            }
            P::pause();
        }
    }

    /* ---- addressing (the count policy of weft_semantics.h) ----------------------------- */
    /* Start of chunk x's slice in buffer b and how many of its elements are valid. */
    WEFT_DEV char *chunk(int b, int32_t x, int64_t e0, int64_t en, int64_t *lim) const {
        if (b == WEFT_BUF_SCRATCH) {
            *lim = en;
            return a.buf[b] + ((int64_t)x * a.C + e0) * SZ;
        }
        int64_t v = weft_chunk_valid(a.count, a.k, a.C, x) - e0;
        *lim = v < 0 ? 0 : (v < en ? v : en);
        return a.buf[b] + (weft_chunk_start(a.count, a.k, a.C, x) + e0) * SZ;
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

    /* Pointers of chunk j of a step: the incoming value, what it is reduced with, the
     * destination and the outgoing slot; lim = elements that matter (user memory past a
     * chunk's valid end is never touched). */
    struct Ptrs {
        const char *in, *red0;
        int nred;
        char *dst, *out;
        int64_t lim;
    };

    /* Uniform across the CTA (a fused `re` publishes its sources through shared memory). */
    WEFT_DEV void ptrs(const weft_dstep &st, unsigned f, int j, int64_t e0, int64_t en,
                       const char *islot, char *oslot, Ptrs &q) {
        int64_t lim = en, l;
        q.nred = 0;
        q.red0 = nullptr;
        q.dst = nullptr;
        q.out = oslot ? oslot + (int64_t)j * a.E * SZ : nullptr;
        const char *src = nullptr;
        if (f & WEFT_STEP_F_READS_SRC) {
            if (st.nsrc > 1) {
                const char **sr = p.sred();
                p.sync(); /* the previous chunk's readers are done with sr */
                for (int r = 0; r < st.nsrc; r++) {
                    weft_dsrc s = a.xsrc[st.xsrc + r];
                    const char *x = chunk(s.buf, s.off + j, e0, en, &l);
                    lim = l < lim ? l : lim;
                    if (r % p.nthreads() == p.tid()) sr[r] = x;
                }
                p.sync();
                q.nred = st.nsrc;
            } else {
                src = chunk(st.srcbuf, st.srcoff + j, e0, en, &l);
                lim = l < lim ? l : lim;
            }
        }
        if (f & WEFT_STEP_F_WRITE) {
            q.dst = chunk(st.dstbuf, st.dstoff + j, e0, en, &l);
            lim = l < lim ? l : lim;
        }
        if (f & WEFT_STEP_F_RECV) {
            q.in = islot ? islot + (int64_t)j * a.E * SZ : nullptr;
            if (f & WEFT_STEP_F_REDUCE) q.red0 = src, q.nred = 1;
        } else if (st.type == WEFT_STEP_RE) {
            q.in = q.dst;
            if (st.nsrc <= 1) q.red0 = src, q.nred = 1;
        } else {
            q.in = src;
        }
        q.lim = lim;
    }

    /* ---- the two protocols ------------------------------------------------------------- */
    WEFT_DEV bool wait_credit(const weft_dstep &st) {
        /* thread 0 only: room for message spos? */
        if (spos - credit < (uint64_t)sc.nslots) return true;
        uint64_t need = spos + 1 - (uint64_t)sc.nslots;
        return spin([&] { return (credit = P::ld_acq_sys(sc.head)) >= need; },
                    [&] { return credit; }, WEFT_RT_WAIT_CREDIT, st, sc.peer, sc.chan, need);
    }

    WEFT_DEV bool simple_step(const weft_dstep &st, unsigned f, int64_t e0, int64_t en) {
        const bool recv = f & WEFT_STEP_F_RECV, send = f & WEFT_STEP_F_SEND;
        bool ok = true;
        if ((recv || send) && p.tid() == 0) {
            if (recv) {
                uint64_t want = rpos + 1;
                ok = spin([&] { return P::ld_acq_sys(rc.tail) >= want; },
                          [&] { return P::ld_rlx(rc.tail); }, WEFT_RT_WAIT_DATA, st, rc.peer,
                          rc.chan, want);
            }
            if (ok && send) ok = wait_credit(st);
        }
        if ((recv || send) && p.sync_or(!ok)) return false;
        const char *islot =
            recv ? rc.slots + (int64_t)(rpos % (uint64_t)rc.nslots) * rc.slot_bytes : nullptr;
        char *oslot =
            send ? sc.slots + (int64_t)(spos % (uint64_t)sc.nslots) * sc.slot_bytes : nullptr;
        Ptrs q;
        for (int j = 0; j < st.cnt; j++) {
            ptrs(st, f, j, e0, en, islot, oslot, q);
            move(q.lim, q.in, q.nred, q.red0, p.sred(), q.dst, q.out);
            if (traced() && p.tid() == 0) trace_bytes<P>(a.trace, tbi, q.lim * SZ);
        }
        p.sync();
        if (p.tid() == 0) {
            if (send) P::st_rel_sys(sc.tail, spos + 1);
            if (recv) P::st_rel_sys(rc.head, rpos + 1);
        }
        spos += send;
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
        Line w = out;
        bool ok = spin(
            [&] {
                w = P::ll_ld(line);
                return w.f0 == flag && w.f1 == flag;
            },
            [&] { return (uint64_t)w.f0; }, WEFT_RT_WAIT_DATA, st, rc.peer, rc.chan, flag);
        out = w;
        return ok;
    }

    WEFT_DEV bool ll_step(const weft_dstep &st, unsigned f, int64_t e0, int64_t en) {
        const bool recv = f & WEFT_STEP_F_RECV, send = f & WEFT_STEP_F_SEND;
        /* Each thread checks credit for itself: no barrier before the lines go out. */
        bool ok = !send || wait_credit(st);
        const char *islot =
            recv ? rc.slots + (int64_t)(rpos % (uint64_t)rc.nslots) * rc.slot_bytes : nullptr;
        char *oslot =
            send ? sc.slots + (int64_t)(spos % (uint64_t)sc.nslots) * sc.slot_bytes : nullptr;
        const uint32_t fin = (uint32_t)(rpos + 1), fout = (uint32_t)(spos + 1);
        const int64_t nl = (en * SZ + 7) / 8, stride = a.E * SZ / 8;
        const int nt = p.nthreads(), tid = p.tid();
        Ptrs q;
        for (int j = 0; j < st.cnt && ok; j++) {
            ptrs(st, f, j, e0, en, nullptr, nullptr, q);
            /* Lines always cover the whole slice: the receiver counts on every one. */
            const int64_t slim = q.lim;
            if (traced() && p.tid() == 0) trace_bytes<P>(a.trace, tbi, slim * SZ);
            const bool rd = !recv || q.nred != 0;
            const char *rsrc = recv ? q.red0 : q.in;
            const char *ilines = recv ? islot + (int64_t)j * stride * 16 : nullptr;
            char *olines = send ? oslot + (int64_t)j * stride * 16 : nullptr;
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
                        v = (uint64_t)w[u].d0 | (uint64_t)w[u].d1 << 32;
                        if (rd) v = reduce_u64<T, Op>(v, x[u]);
                    }
                    if (q.dst) ll_write(q.dst, slim, l, v);
                    if (send)
                        P::ll_st(olines + l * 16, (uint32_t)v, fout, (uint32_t)(v >> 32), fout);
                }
            }
        }
        if (p.sync_or(!ok)) return false;
        /* As NCCL's LL: the lines' values are in registers and used before the barrier, so a
         * plain store returns the slot; no fence. */
        if (recv && p.tid() == 0) P::st_rlx(rc.head, rpos + 1);
        spos += send;
        rpos += recv;
        return true;
    }

    /* ---- one CTA's whole call ---------------------------------------------------------- */
    WEFT_DEV bool step(const weft_dstep &st, int s, int64_t e0, int64_t en) {
        if (traced() && p.tid() == 0)
            trace_begin<P>(a.trace, tbi, (uint32_t)(it * t.nsteps + s), s, it, spos, rpos, tlast);
        if (st.depid >= 0) {
            bool ok = true;
            if (p.tid() == 0) {
                uint64_t want = base + (uint64_t)(it * st.dep_stride + st.dep_target);
                const uint64_t *pr = &a.prog[st.depid].v;
                ok = spin([&] { return P::ld_acq_gpu(pr) >= want; }, [&] { return P::ld_rlx(pr); },
                          WEFT_RT_WAIT_DEP, st, -1, t.chan, want);
            }
            if (p.sync_or(!ok)) return false;
        }
        unsigned f = weft_step_flags((weft_step_type)st.type);
        if (st.type != WEFT_STEP_NOP) {
            bool comm = f & (WEFT_STEP_F_SEND | WEFT_STEP_F_RECV);
            bool ok = comm && a.proto == WEFT_RT_PROTO_LL ? ll_step(st, f, e0, en)
                                                          : simple_step(st, f, e0, en);
            if (!ok) return false;
        }
        if (st.post && p.tid() == 0) {
            P::st_rel_gpu(&a.prog[tbi].v, base + (uint64_t)(it * t.nsteps_orig + st.post));
            posted = true;
        }
        if (traced() && p.tid() == 0)
            tlast = trace_end_step<P>(a.trace, tbi, (uint32_t)(it * t.nsteps + s));
        return true;
    }

    WEFT_DEV void run() {
        /* One round of independent loads: the record (tb, connection ends, first step) and
         * the tb's progress; then the connections' message counters. */
        const weft_drec *R = (const weft_drec *)(const void *)(a.rec + (int64_t)tbi * a.rec_bytes);
        t = R->tb;
        sc = R->sc;
        rc = R->rc;
        steps = (const weft_dstep *)(const void *)(R + 1);
        uint64_t own = P::ld_rlx(&a.prog[tbi].v);
        calls = own >> 32;
        base = calls << 32;
        posted = false;
        if (tbi == 0 && p.tid() == 0)
            P::st_rlx((uint64_t *)(void *)(a.peer_win[a.rank] + a.arrival_off), calls + 1);
        spos = sc.pos ? P::ld_rlx(sc.pos) : 0;
        rpos = rc.pos ? P::ld_rlx(rc.pos) : 0;
        credit = 0;
        const bool tr = traced() && p.tid() == 0;
        if (tr) tlast = trace_entry<P>(a.trace, tbi, spos, rpos);
        for (it = 0; it < a.niter; it++) {
            int64_t e0 = it * a.E, en = a.C - e0 < a.E ? a.C - e0 : a.E;
            for (int s = 0; s < t.nsteps; s++) {
                weft_dstep st = steps[s];
                if (!step(st, s, e0, en)) {
                    if (tr) trace_exit<P>(a.trace, tbi, true, (uint32_t)(it * t.nsteps + s));
                    return;
                }
            }
        }
        if (tr) trace_exit<P>(a.trace, tbi, false, 0);
        /* Thread 0 holds what every thread holds, and every step ended with a CTA barrier.
         * The next call's base; a release when this call posted progress (a waiter may read
         * this value instead of the post it waited for). No barrier, no fence otherwise: only
         * the next launch reads these, and it starts after this one has ended. */
        if (p.tid() == 0) {
            if (sc.pos) P::st_rlx(sc.pos, spos);
            if (rc.pos) P::st_rlx(rc.pos, rpos);
            if (posted)
                P::st_rel_gpu(&a.prog[tbi].v, base + (1ull << 32));
            else
                P::st_rlx(&a.prog[tbi].v, base + (1ull << 32));
        }
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
