/* hop.h — the one-hop kernel's CTA (runtime_internal.h, "the one-hop path"): push every chunk the
 * peers take as LL lines flagged with the pair's call number, then fold what this rank takes in
 * the schedule's order. Written once over a platform P, as interp.h (whose platform it shares,
 * plus hsm(): the CTA's HopSmem), for the GPU (kernels_interp.cuh) and the host emulation. */
#ifndef WEFT_RT_HOP_H
#define WEFT_RT_HOP_H

#include "interp.h"

namespace weft_rt {

/* What a CTA keeps in shared memory: the calls so far with each peer, its own calls, a stop
 * vote, and the rank's table. */
struct HopSmem {
    char *win[WEFT_RT_HOP_MAX_RANKS]; /* every window, as this rank addresses it */
    uint64_t ctr[WEFT_RT_HOP_MAX_RANKS];
    uint64_t arrived;
    alignas(16) char tab[WEFT_RT_HOP_SMEM];
};

template <class P, class T, class Op> struct Hop {
    P &p;
    const weft_hop_kargs &c;
    const weft_hop_rargs &a;
    const int b; /* this CTA's part of every chunk: bytes [b S, (b + 1) S) */

    WEFT_DEV Hop(P &p_, const weft_hop_kargs &c_, const weft_hop_rargs &a_, int b_)
        : p(p_), c(c_), a(a_), b(b_) {}

    /* Bytes of chunk x of memory mem valid from byte o of the chunk on, and where that lies. */
    WEFT_DEV int64_t at(int mem, int32_t x, int64_t o, char **q) const {
        *q = a.mem[mem] + weft_chunk_start(c.count, c.k, c.C, x) * (int64_t)sizeof(T) + o;
        return weft_chunk_valid(c.count, c.k, c.C, x) * (int64_t)sizeof(T) - o;
    }
    /* 8 bytes of a chunk from byte o on (zeros past its valid end); whole words where aligned,
     * else element by element (a user buffer is only aligned to its type). */
    WEFT_DEV uint64_t load8(int mem, int32_t x, int64_t o) const {
        char *q;
        int64_t n = at(mem, x, o, &q);
        if (n >= 8 && ((uintptr_t)q & 7) == 0) return P::template ld<uint64_t>(q);
        uint64_t v = 0;
        for (int i = 0; i < 8 && i < n; i += (int)sizeof(T)) {
            T e = P::template ld<T>(q + i);
            memcpy((char *)&v + i, &e, sizeof(T));
        }
        return v;
    }
    WEFT_DEV void store8(int mem, int32_t x, int64_t o, uint64_t v) const {
        char *q;
        int64_t n = at(mem, x, o, &q);
        if (n >= 8 && ((uintptr_t)q & 7) == 0) {
            P::template st<uint64_t>(q, v);
            return;
        }
        for (int i = 0; i < 8 && i < n; i += (int)sizeof(T)) {
            T e;
            memcpy(&e, (const char *)&v + i, sizeof(T));
            P::template st<T>(q + i, e);
        }
    }

    WEFT_DEV char *area() const {
        return p.hsm()->win[a.rank] + c.hop_off;
    }
    /* Line l of slot `slot` of the area that window `win` keeps for sender `from`, CTA b, call
     * number n of the pair. */
    WEFT_DEV char *line(char *win, int from, uint64_t n, int32_t slot, int64_t l) const {
        size_t reg = ((size_t)b * 2 + (size_t)(n & 1)) * (size_t)c.nranks + (size_t)from;
        return win + c.hop_off + weft_hop_reg_off(c.nranks) + reg * WEFT_RT_HOP_REGION +
               ((size_t)slot * (size_t)(c.S / 8) + (size_t)l) * 16;
    }
    static WEFT_DEV uint32_t flag_of(uint64_t n) {
        return (uint32_t)(n % WEFT_RT_HOP_CYCLE) + 1u;
    }

    /* Stops when another rank gave up, or, once `peer` has entered this call (its CTA b has run
     * as many one-hop calls as this one) and still nothing came for a full period, records the
     * stall and makes every rank give up. */
    WEFT_DEV bool stalled(uint64_t &t0, uint64_t first, int peer, const weft_hop_fold &fo,
                          uint32_t want, uint32_t seen) {
        uint32_t ab =
            P::ld_rlx32((const uint32_t *)(const void *)(a.peer_win[a.rank] + WEFT_RT_ABORT_OFF));
        if (ab != 0) return true;
        uint64_t now = P::now_ns();
        if (c.timeout_ns <= 0 || now - t0 <= (uint64_t)c.timeout_ns) return false;
        const uint64_t *pa =
            (const uint64_t *)(const void *)(p.hsm()->win[peer] + c.hop_off + (size_t)b * 64);
        if (P::ld_rlx(pa) < p.hsm()->arrived) { /* late, not stuck */
            t0 = now;
            return false;
        }
        weft_errrec *e = a.err;
        if (P::claim(&a.state->claim)) {
            e->algo = c.tag;
            e->rank = a.rank;
            e->tb = fo.otb;
            e->step = fo.ostep;
            e->member = b;
            e->peer = peer;
            e->chan = -1;
            e->depid = -1;
            e->deps = -1;
            e->iter = 0;
            e->want = want;
            e->seen = seen;
            e->calls = p.hsm()->arrived;
            e->waited_ns = now - first;
            P::fence_sys();
            P::st_rlx32(&e->code, WEFT_RT_WAIT_DATA);
            P::fence_sys();
        }
        for (int q = 0; q < c.nranks; q++)
            P::st_rlx32((uint32_t *)(void *)(a.peer_win[q] + WEFT_RT_ABORT_OFF),
                        (uint32_t)a.rank + 1);
        return true;
    }

    WEFT_DEV void run() {
        HopSmem *sm = p.hsm();
        const int tid = p.tid(), nt = p.nthreads();
        /* the table and the windows' addresses were written at attach: loaded while the
         * previous kernel ends, so that no pointer is chased after the grid wait */
        for (int i = tid; i < a.tab_bytes / 8; i += nt)
            ((uint64_t *)(void *)sm->tab)[i] = ((const uint64_t *)(const void *)a.tab)[i];
        for (int q = tid; q < c.nranks; q += nt)
            sm->win[q] = a.peer_win[q];
        p.sync();
        P::grid_wait();
        weft_hop_hdr hd;
        memcpy(&hd, sm->tab, sizeof hd);
        const weft_hop_send *sends = (const weft_hop_send *)(const void *)(sm->tab + sizeof hd);
        const weft_hop_fold *folds = (const weft_hop_fold *)(const void *)(sends + hd.nsend);
        const weft_hop_op *ops = (const weft_hop_op *)(const void *)(folds + hd.nfold);
        const int32_t lps = c.S / 8;
        const int64_t o0 = (int64_t)b * c.S;
        uint64_t *ctr = (uint64_t *)(void *)(area() + weft_hop_ctr_off()) + (size_t)b * c.nranks;
        /* the pairs' counts for the folds (after the barrier below); every push loads its own
         * with its data, so that nothing waits for one load before it issues the next */
        const uint64_t cq = tid < c.nranks ? P::ld_rlx(ctr + tid) : 0;
        uint64_t *arr = (uint64_t *)(void *)(area() + (size_t)b * 64); /* this CTA's calls */
        const uint64_t a0 = tid == nt - 1 ? P::ld_rlx(arr) : 0;
        for (int32_t it = tid; it < hd.nsend * lps; it += nt) {
            int32_t s = it / lps, l = it - s * lps;
            const weft_hop_send &e = sends[s];
            uint64_t n = P::ld_rlx(ctr + e.peer);
            uint64_t v = load8(e.mem, e.x, o0 + (int64_t)l * 8);
            uint32_t f = flag_of(n);
            P::ll_st(line(sm->win[e.peer], a.rank, n, e.slot, l), (uint32_t)v, f,
                     (uint32_t)(v >> 32), f);
        }
        if (tid < c.nranks) sm->ctr[tid] = cq; /* only now: its load was in flight meanwhile */
        for (int q = tid + nt; q < c.nranks; q += nt) /* fewer threads than ranks (emulation) */
            sm->ctr[q] = P::ld_rlx(ctr + q);
        if (tid == nt - 1) { /* this CTA's calls, for its peers' watchdogs */
            sm->arrived = a0 + 1;
            P::st_rlx(arr, a0 + 1);
        }
        p.sync(); /* in place: every push has read its chunk before any fold writes */
        bool stop = false;
        char *own = sm->win[a.rank];
        for (int32_t it = tid; it < hd.nfold * lps && !stop; it += nt) {
            int32_t fi = it / lps, l = it - fi * lps;
            const weft_hop_fold &fo = folds[fi];
            uint64_t acc = 0;
            /* eight operands at a time: every load issued, then the stragglers awaited */
            for (int j0 = 0; j0 < fo.nops && !stop; j0 += 8) {
                uint64_t v[8];
                const char *ln[8];
                uint32_t fl[8];
                int16_t pr[8];
                uint32_t rev = 0; /* bit j: operand j goes first, op(it, value) */
                WEFT_UNROLL
                for (int j = 0; j < 8; j++) {
                    ln[j] = nullptr;
                    v[j] = 0;
                    if (j0 + j >= fo.nops) continue;
                    const weft_hop_op &o = ops[fo.op0 + j0 + j];
                    pr[j] = o.peer;
                    rev |= (uint32_t)(o.ord != 0) << j;
                    if (o.peer < 0) {
                        v[j] = load8(o.mem, o.x, o0 + (int64_t)l * 8);
                        continue;
                    }
                    uint64_t n = sm->ctr[o.peer];
                    fl[j] = flag_of(n);
                    ln[j] = line(own, o.peer, n, o.x, l);
                    Line w = P::ll_ld(ln[j]);
                    if (w.f0 == fl[j] && w.f1 == fl[j]) {
                        v[j] = (uint64_t)w.d0 | (uint64_t)w.d1 << 32;
                        ln[j] = nullptr;
                    }
                }
                /* the stragglers polled together, one round of loads at a time */
                uint64_t first = 0, t0 = 0;
                for (uint32_t k = 1; !stop; k++) {
                    Line w[8];
                    bool left = false;
                    WEFT_UNROLL
                    for (int j = 0; j < 8; j++)
                        if (ln[j]) w[j] = P::ll_ld(ln[j]);
                    WEFT_UNROLL
                    for (int j = 0; j < 8; j++) {
                        if (!ln[j]) continue;
                        if (w[j].f0 == fl[j] && w[j].f1 == fl[j]) {
                            v[j] = (uint64_t)w[j].d0 | (uint64_t)w[j].d1 << 32;
                            ln[j] = nullptr;
                        } else if (!left) {
                            left = true;
                            if ((k & 255) == 0) { /* the watchdog, for the first one left */
                                if (first == 0) first = t0 = P::now_ns();
                                stop = stalled(t0, first, pr[j], fo, fl[j], w[j].f0);
                            }
                        }
                    }
                    if (!left) break;
                    P::pause();
                }
                WEFT_UNROLL
                for (int j = 0; j < 8; j++)
                    if (j0 + j < fo.nops)
                        acc = j0 + j == 0 ? v[j]
                                          : reduce_u64<T, Op>(rev >> j & 1u ? v[j] : acc,
                                                              rev >> j & 1u ? acc : v[j]);
            }
            if (!stop) store8(fo.mem, fo.x, o0 + (int64_t)l * 8, acc);
        }
        if (p.sync_or(stop)) return;
        /* this call is done with every pair it exchanged on; near the flags' wrap the areas
         * just read are cleared, so that no line of the last cycle can pass for the next one */
        for (int q = 0; q < c.nranks; q++) {
            if (!(hd.peers >> q & 1u)) continue;
            uint64_t n = sm->ctr[q];
            if (n % WEFT_RT_HOP_CYCLE >= WEFT_RT_HOP_CYCLE - 2) {
                char *z = line(own, q, n, 0, 0);
                for (size_t i = (size_t)tid; i < WEFT_RT_HOP_REGION / 16; i += (size_t)nt)
                    P::ll_st(z + 16 * i, 0, 0, 0, 0);
            }
            if (tid == 0) P::st_rlx(ctr + q, n + 1);
        }
    }
};

} // namespace weft_rt
#endif
