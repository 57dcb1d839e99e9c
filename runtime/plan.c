/* plan.c — the planner: from an IR algorithm to the interpreter's tables: eligibility, call
 * modes, per-rank records, fused reductions, dependency numbering, collapsed ranks. Pure host
 * code, so every rule here is tested without a GPU. */
#include "runtime_internal.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int weft_rt_why(char *why, size_t len, const char *fmt, ...) {
    if (why && len) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(why, len, fmt, ap);
        va_end(ap);
    }
    return 0;
}

int32_t weft_plan_proto(const weft_algo *a) {
    return (int32_t)weft_proto_runs_as(a->proto); /* weft_rt_proto shares the values */
}

int32_t weft_plan_proto_gated(int32_t proto) {
    /* same chunks and messages; LL's lines cross in any order */
    return proto == WEFT_RT_PROTO_LL128 ? WEFT_RT_PROTO_LL : proto;
}

int weft_plan_gate_proto(weft_algo_plan *p, int ll128) {
    if (p->algo == NULL || ll128 || weft_plan_proto_gated(p->proto) == p->proto) return 0;
    p->proto = weft_plan_proto_gated(p->proto);
    return 1;
}

/* The tb of rank r that receives from `from` on channel c (or sends to `to`), or NULL. */
static const weft_tb *find_tb(const weft_gpu *g, int send, int32_t peer, int32_t chan) {
    for (int32_t t = 0; t < g->ntbs; t++) {
        const weft_tb *tb = &g->tbs[t];
        if ((send ? tb->send : tb->recv) == peer && tb->chan == chan) return tb;
    }
    return NULL;
}

/* Messages on a connection must pair up in order with equal sizes, or the receiver would read
 * a slot as something it is not. */
static int check_connection(const weft_algo *a, int32_t r, const weft_tb *stb, char *why,
                            size_t len) {
    int32_t q = stb->send;
    const weft_tb *rtb = find_tb(&a->gpus[q], 0, r, stb->chan);
    if (rtb == NULL)
        return weft_rt_why(why, len,
                           "rank %d tb %d sends to rank %d on channel %d, but no tb of rank %d "
                           "receives from rank %d on that channel",
                           r, stb->id, q, stb->chan, q, r);
    int32_t i = 0, j = 0, m = 0;
    for (;;) {
        while (i < stb->nsteps && !(weft_step_flags(stb->steps[i].type) & WEFT_STEP_F_SEND))
            i++;
        while (j < rtb->nsteps && !(weft_step_flags(rtb->steps[j].type) & WEFT_STEP_F_RECV))
            j++;
        if (i == stb->nsteps || j == rtb->nsteps) break;
        if (stb->steps[i].cnt != rtb->steps[j].cnt)
            return weft_rt_why(
                why, len,
                "message %d from rank %d to rank %d on channel %d: rank %d tb %d step "
                "%d sends %d chunks, rank %d tb %d step %d receives %d",
                m, r, q, stb->chan, r, stb->id, i, stb->steps[i].cnt, q, rtb->id, j,
                rtb->steps[j].cnt);
        i++, j++, m++;
    }
    if (i != stb->nsteps || j != rtb->nsteps)
        return weft_rt_why(why, len,
                           "rank %d tb %d and rank %d tb %d disagree on the number of messages on "
                           "channel %d",
                           r, stb->id, q, rtb->id, stb->chan);
    return 1;
}

static int may_overlap(const weft_algo *a, int32_t r, weft_buf b1, int32_t o1, weft_buf b2,
                       int32_t o2, int32_t cnt);

/* Whether chunk ranges [o1, o1+cnt) of b1 and [o2, o2+cnt) of b2 meet on rank r in a mode the
 * algorithm declares, at different chunks. */
static int mem_shifted(const weft_algo *a, int32_t r, weft_buf b1, int32_t o1, weft_buf b2,
                       int32_t o2, int32_t cnt) {
    int32_t s1, s2, k = weft_algo_chunks_per_seg(a);
    for (int ip = 0; ip < 2; ip++) {
        if (!(ip ? a->inplace : a->outofplace)) continue;
        if (weft_buf_mem(a->coll, ip, r, b1, &s1) != weft_buf_mem(a->coll, ip, r, b2, &s2))
            continue;
        int32_t p1 = o1 + s1 * k, p2 = o2 + s2 * k;
        if (p1 != p2 && p1 < p2 + cnt && p2 < p1 + cnt) return 1;
    }
    return 0;
}

int weft_plan_eligible(const weft_algo *a, int32_t nranks, char *why, size_t whylen) {
    if (!weft_coll_runnable(a->coll))
        return weft_rt_why(why, whylen, "%s is not run by weft", weft_coll_name(a->coll));
    if (a->ngpus != nranks)
        return weft_rt_why(why, whylen, "written for %d ranks, the communicator has %d", a->ngpus,
                           nranks);
    /* in bounds, counts and peers sound: validation, once per process (weft_ir_is_valid) */
    if (!weft_ir_is_valid(a))
        return weft_rt_why(why, whylen, "not structurally valid (run weft verify)");
    int32_t k = weft_algo_chunks_per_seg(a);
    if (k < 1) return weft_rt_why(why, whylen, "no chunks per segment");
    int reduces = weft_coll_reduces(a->coll);
    for (int32_t r = 0; r < nranks; r++) {
        const weft_gpu *g = &a->gpus[r];
        if (g->ntbs < 1) return weft_rt_why(why, whylen, "rank %d has no thread blocks", r);
        if (g->ntbs > WEFT_RT_MAX_TBS)
            return weft_rt_why(why, whylen,
                               "rank %d has %d thread blocks; the interpreter runs at "
                               "most %d",
                               r, g->ntbs, WEFT_RT_MAX_TBS);
        for (int32_t t = 0; t < g->ntbs; t++) {
            const weft_tb *tb = &g->tbs[t];
            for (int32_t s = 0; s < tb->nsteps; s++) {
                const weft_step *st = &tb->steps[s];
                unsigned f = weft_step_flags(st->type);
                if ((f & WEFT_STEP_F_REDUCE) && !reduces)
                    return weft_rt_why(why, whylen,
                                       "rank %d tb %d step %d reduces, but %s does not reduce", r,
                                       t, s, weft_coll_name(a->coll));
                /* The interpreter moves a step's chunks one after another, each element read
                 * before it is written; a source and destination that overlap shifted (source
                 * 0..1, destination 1..2) would read chunks the step already wrote. */
                if ((f & WEFT_STEP_F_READS_SRC) && (f & WEFT_STEP_F_WRITE) && st->cnt > 1 &&
                    mem_shifted(a, r, st->srcbuf, st->srcoff, st->dstbuf, st->dstoff, st->cnt))
                    return weft_rt_why(
                        why, whylen,
                        "rank %d tb %d step %d: its source (%s %d..%d) and destination "
                        "(%s %d..%d) overlap at different chunks; the interpreter "
                        "moves a step's chunks one after another and does not run it",
                        r, t, s, weft_buf_name(st->srcbuf), st->srcoff, st->srcoff + st->cnt - 1,
                        weft_buf_name(st->dstbuf), st->dstoff, st->dstoff + st->cnt - 1);
            }
            if (tb->send >= 0 && !check_connection(a, r, tb, why, whylen)) return 0;
            if (tb->recv >= 0 && find_tb(&a->gpus[tb->recv], 1, r, tb->chan) == NULL)
                return weft_rt_why(
                    why, whylen,
                    "rank %d tb %d receives from rank %d on channel %d, but no tb of "
                    "rank %d sends to rank %d on that channel",
                    r, t, tb->recv, tb->chan, tb->recv, r);
        }
    }
    return 1;
}

/* ---- preparing: call modes, group size ------------------------------------------------- */
/* Which memory chunk o of buffer b is on rank r in a's buffer mode (in place, when a declares
 * it: input and output alias), and in *at the chunk's index there. */
static int mem_of(const weft_algo *a, int32_t r, weft_buf b, int32_t o, int32_t *at) {
    int32_t s;
    int m = weft_buf_mem(a->coll, a->inplace, r, b, &s);
    *at = o + s * weft_algo_chunks_per_seg(a);
    return m;
}

/* Whether chunk ranges [o1, o1+n1) of b1 and [o2, o2+n2) of b2 can be the same memory on rank r
 * in a buffer mode the algorithm declares. */
static int spans_overlap(const weft_algo *a, int32_t r, weft_buf b1, int32_t o1, int32_t n1,
                         weft_buf b2, int32_t o2, int32_t n2) {
    int32_t x1, x2;
    return mem_of(a, r, b1, o1, &x1) == mem_of(a, r, b2, o2, &x2) && x1 < x2 + n2 && x2 < x1 + n1;
}

/* The same for two ranges of cnt chunks. */
static int may_overlap(const weft_algo *a, int32_t r, weft_buf b1, int32_t o1, weft_buf b2,
                       int32_t o2, int32_t cnt) {
    return spans_overlap(a, r, b1, o1, cnt, b2, o2, cnt);
}

/* Whether x and y touch the same memory, one of them writing it, out of place (no buffer
 * aliases another). */
static int steps_conflict(const weft_step *x, const weft_step *y) {
    weft_access ax[2], ay[2];
    int nx = weft_step_accesses(x, ax), ny = weft_step_accesses(y, ay);
    for (int i = 0; i < nx; i++)
        for (int j = 0; j < ny; j++)
            if ((ax[i].write || ay[j].write) && ax[i].buf == ay[j].buf && ax[i].cnt > 0 &&
                ay[j].cnt > 0 && ax[i].off < ay[j].off + ay[j].cnt &&
                ay[j].off < ax[i].off + ax[i].cnt)
                return 1;
    return 0;
}

/* A copy of a declaring only one buffer mode, or NULL when out of memory. */
static weft_algo *clone_in_mode(const weft_algo *a, int inplace) {
    weft_algo *c = weft_algo_clone(a);
    if (c == NULL) return NULL;
    c->inplace = (uint8_t)(inplace != 0);
    c->outofplace = (uint8_t)(inplace == 0);
    return c;
}

/* hasdep after dependencies were dropped: only steps something still waits for. */
static void mark_awaited(weft_gpu *g) {
    for (int32_t t = 0; t < g->ntbs; t++)
        for (int32_t s = 0; s < g->tbs[t].nsteps; s++)
            g->tbs[t].steps[s].hasdep = 0;
    for (int32_t t = 0; t < g->ntbs; t++)
        for (int32_t s = 0; s < g->tbs[t].nsteps; s++) {
            const weft_step *st = &g->tbs[t].steps[s];
            if (st->depid >= 0) g->tbs[st->depid].steps[st->deps].hasdep = 1;
        }
}

/* A copy of a with only the out-of-place mode and without the dependencies that guard nothing
 * there: a dependency whose waiting step (or, for a nop, the next step of its tb that does
 * something) touches no memory the awaited step touches. The verifier decides whether the copy
 * is still right; NULL when nothing would be dropped. */
static weft_algo *trim_out_of_place(const weft_algo *a, int32_t *dropped) {
    *dropped = 0;
    weft_algo *c = clone_in_mode(a, 0);
    if (c == NULL) return NULL;
    for (int32_t r = 0; r < c->ngpus; r++) {
        weft_gpu *g = &c->gpus[r];
        for (int32_t t = 0; t < g->ntbs; t++) {
            weft_tb *tb = &g->tbs[t];
            for (int32_t s = 0; s < tb->nsteps; s++) {
                weft_step *st = &tb->steps[s];
                if (st->depid < 0) continue;
                /* the awaited step, and everything its wait orders: this step and the rest
                 * of the tb */
                const weft_step *w = &g->tbs[st->depid].steps[st->deps];
                int keep = w->type == WEFT_STEP_NOP;
                for (int32_t n = s; n < tb->nsteps && !keep; n++)
                    keep = steps_conflict(w, &tb->steps[n]);
                if (keep) continue;
                st->depid = st->deps = -1;
                (*dropped)++;
            }
        }
        mark_awaited(g);
    }
    if (*dropped == 0) {
        weft_algo_free(c);
        return NULL;
    }
    return c;
}

/* Whether step x of rank r copies chunks onto themselves in a, which declares only the in-place
 * mode: a `cpy` whose source and destination are the same memory once input and output alias
 * (allgather's and alltoall's own block in place). It moves nothing. */
static int self_copy(const weft_algo *a, int32_t r, const weft_step *x) {
    int32_t x1, x2;
    return x->type == WEFT_STEP_CPY && x->cnt > 0 &&
           mem_of(a, r, x->srcbuf, x->srcoff, &x1) == mem_of(a, r, x->dstbuf, x->dstoff, &x2) &&
           x1 == x2;
}

/* Whether x and y (steps of rank r of a, which declares only the in-place mode) touch the same
 * memory, one of them writing it. */
static int steps_conflict_in_place(const weft_algo *a, int32_t r, const weft_step *x,
                                   const weft_step *y) {
    weft_access ax[2], ay[2];
    int nx = weft_step_accesses(x, ax), ny = weft_step_accesses(y, ay);
    for (int i = 0; i < nx; i++)
        for (int j = 0; j < ny; j++)
            if ((ax[i].write || ay[j].write) && ax[i].cnt > 0 && ay[j].cnt > 0 &&
                spans_overlap(a, r, (weft_buf)ax[i].buf, ax[i].off, ax[i].cnt, (weft_buf)ay[j].buf,
                              ay[j].off, ay[j].cnt))
                return 1;
    return 0;
}

/* A copy of a with only the in-place mode and its copies onto themselves (self_copy) made nops;
 * with drop_waits, also without the dependencies on them that guard nothing: the wait orders
 * the step after the awaited tb's steps up to the copy, so it goes only where none of those
 * touches memory that the waiting step or the rest of its tb touches, and none of them waits
 * for anything as written (which the wait would pass on). The verifier decides whether the copy
 * is still right; NULL when no step copies onto itself. *skipped: those copies; *dropped: the
 * dependencies. */
static weft_algo *trim_in_place(const weft_algo *a, int drop_waits, int32_t *skipped,
                                int32_t *dropped) {
    *skipped = *dropped = 0;
    weft_algo *c = clone_in_mode(a, 1);
    if (c == NULL) return NULL;
    for (int32_t r = 0; r < c->ngpus; r++) {
        weft_gpu *g = &c->gpus[r];
        for (int32_t t = 0; t < g->ntbs; t++)
            for (int32_t s = 0; s < g->tbs[t].nsteps; s++) {
                weft_step *st = &g->tbs[t].steps[s];
                if (!self_copy(c, r, st)) continue;
                st->type = WEFT_STEP_NOP;
                st->cnt = 0;
                st->srcoff = st->dstoff = -1;
                (*skipped)++;
            }
        for (int32_t t = 0; t < g->ntbs; t++) {
            weft_tb *tb = &g->tbs[t];
            for (int32_t s = 0; s < tb->nsteps; s++) {
                weft_step *st = &tb->steps[s];
                if (st->depid < 0) continue;
                const weft_tb *x = &g->tbs[st->depid];
                const weft_step *w = &x->steps[st->deps];
                const weft_step *orig = &a->gpus[r].tbs[st->depid].steps[st->deps];
                if (w->type != WEFT_STEP_NOP || orig->type != WEFT_STEP_CPY) continue;
                /* the prefix's own waits as written: this pass may have dropped some */
                const weft_tb *xa = &a->gpus[r].tbs[st->depid];
                int keep = !drop_waits;
                for (int32_t d = 0; d <= st->deps && !keep; d++) {
                    keep = xa->steps[d].depid >= 0;
                    for (int32_t n = s; n < tb->nsteps && !keep; n++)
                        keep = steps_conflict_in_place(c, r, &x->steps[d], &tb->steps[n]);
                }
                if (keep) continue;
                st->depid = st->deps = -1;
                (*dropped)++;
            }
        }
        mark_awaited(g);
    }
    if (*skipped == 0) {
        weft_algo_free(c);
        return NULL;
    }
    return c;
}

/* x verified in one mode (a copy declaring only that mode when a declares both). */
static int verifies(const weft_algo *x, int inplace, int direct) {
    weft_algo *one = NULL;
    if (x->inplace && x->outofplace) {
        one = clone_in_mode(x, inplace);
        if (one == NULL) return 0;
        x = one;
    }
    weft_verify_opts o;
    weft_verify_opts_init(&o);
    o.fifo_slots = 0; /* the registry checked buffering; trimming removes no message */
    o.direct_transfers = (uint8_t)(direct != 0);
    int ok = weft_ir_verifies(x, &o); /* once per process for the same schedule and mode */
    weft_algo_free(one);
    return ok;
}

/* The schedule one call mode runs: the first of its trimmed forms, then the schedule as
 * written, that the verifier proves with direct transfers (Simple only), then the same without;
 * as written, staged, at last. Trimmed: out of place without the guards of in-place aliasing
 * (trim_out_of_place); in place without copies onto themselves and the waits for them, or,
 * where the verifier does not prove that, without the copies alone (trim_in_place). */
static weft_result prepare_mode(const weft_algo *a, int inplace, weft_mode_plan *m) {
    int32_t dropped[2] = {0, 0}, skipped[2] = {0, 0};
    weft_algo *trim[2] = {NULL, NULL};
    if (!inplace) {
        trim[0] = trim_out_of_place(a, &dropped[0]);
    } else {
        trim[0] = trim_in_place(a, 1, &skipped[0], &dropped[0]);
        if (trim[0] && dropped[0] > 0) trim[1] = trim_in_place(a, 0, &skipped[1], &dropped[1]);
    }
    const weft_algo *cand[3] = {trim[0], trim[1], a};
    int simple = weft_plan_proto(a) == WEFT_RT_PROTO_SIMPLE;
    m->sched = a;
    m->direct = 0;
    int found = 0;
    for (int dir = simple; dir >= 0 && !found; dir--)
        for (int i = 0; i < 3 && !found; i++) {
            /* as written, staged: the fallback, taken unproven (the registry proves what it loads)
             */
            if (cand[i] == NULL || (!(i == 2 && dir == 0) && !verifies(cand[i], inplace, dir)))
                continue;
            m->sched = cand[i];
            m->direct = dir;
            found = 1;
        }
    for (int i = 0; i < 2; i++) {
        if (trim[i] && m->sched == trim[i]) {
            m->own = trim[i];
            m->dropped = dropped[i];
            m->skipped = skipped[i];
        } else {
            weft_algo_free(trim[i]);
        }
    }
    m->maxsteps = 1;
    for (int32_t r = 0; r < m->sched->ngpus; r++)
        for (int32_t t = 0; t < m->sched->gpus[r].ntbs; t++)
            if (m->sched->gpus[r].tbs[t].nsteps > m->maxsteps)
                m->maxsteps = m->sched->gpus[r].tbs[t].nsteps;
    return WEFT_OK;
}

weft_result weft_plan_prepare(const weft_algo *a, int32_t nranks, int32_t max_ctas,
                              weft_algo_plan *out, char *why, size_t whylen) {
    memset(out, 0, sizeof *out);
    if (!weft_plan_eligible(a, nranks, why, whylen)) return WEFT_ERR_UNSUPPORTED;
    out->algo = a;
    out->proto = weft_plan_proto(a);
    out->k = weft_algo_chunks_per_seg(a);
    out->nranks = nranks;
    out->maxcnt = weft_algo_msg_chunks(a);
    for (int32_t r = 0; r < nranks; r++)
        if (a->gpus[r].ntbs > out->maxtbs) out->maxtbs = a->gpus[r].ntbs;
    if (out->maxtbs > max_ctas) {
        weft_rt_why(why, whylen,
                    "rank with %d thread blocks; a launch runs at most %d CTAs per rank here "
                    "(all at once)",
                    out->maxtbs, max_ctas);
        memset(out, 0, sizeof *out);
        return WEFT_ERR_UNSUPPORTED;
    }
    out->kmax = max_ctas / out->maxtbs;
    if (out->kmax > WEFT_RT_MAX_GROUP) out->kmax = WEFT_RT_MAX_GROUP;
    if (out->kmax < 1) out->kmax = 1;
    for (int inplace = 0; inplace < 2; inplace++) {
        weft_mode_plan *m = &out->mode[inplace];
        if (!(inplace ? a->inplace : a->outofplace)) continue;
        prepare_mode(a, inplace, m);
        /* LL schedules (latency-bound by their author's choice) may run on the one-hop kernel */
        if (weft_proto_runs_as(a->proto) == WEFT_PROTO_SIMPLE)
            weft_rt_why(m->hop_why, sizeof m->hop_why, "a Simple schedule");
        else
            m->hop =
                weft_hop_build(m->sched, inplace, nranks, out->k, m->hop_why, sizeof m->hop_why);
    }
    return WEFT_OK;
}

/* ---- per-rank tables -------------------------------------------------------------------- */
/* Whether step st of tb t on rank r may take its dependency late (WEFT_DSTEP_F_DEPLATE): no
 * other tb of the rank writes memory st reads. Local memory is written only by the rank's own
 * steps, so no chain of waits can order a write that st reads; the wait then only orders st's
 * stores after what the awaited steps read or wrote, and may come after st's loads. */
static int dep_late(const weft_algo *a, int32_t r, int32_t t, const weft_step *st) {
    if (st->depid < 0) return 0;
    const weft_gpu *g = &a->gpus[r];
    const int32_t k = weft_algo_chunks_per_seg(a);
    weft_access ac[2], aw[2];
    int n = weft_step_accesses(st, ac);
    for (int i = 0; i < n; i++) {
        int32_t s1, s2;
        if (!ac[i].read || ac[i].cnt <= 0) continue;
        int m1 = weft_buf_mem(a->coll, a->inplace, r, (weft_buf)ac[i].buf, &s1);
        int32_t p1 = ac[i].off + s1 * k;
        for (int32_t u = 0; u < g->ntbs; u++) {
            if (u == t) continue;
            for (int32_t s = 0; s < g->tbs[u].nsteps; s++) {
                int nw = weft_step_accesses(&g->tbs[u].steps[s], aw);
                for (int j = 0; j < nw; j++) {
                    if (!aw[j].write || aw[j].cnt <= 0) continue;
                    if (weft_buf_mem(a->coll, a->inplace, r, (weft_buf)aw[j].buf, &s2) != m1)
                        continue;
                    int32_t p2 = aw[j].off + s2 * k;
                    if (p1 < p2 + aw[j].cnt && p2 < p1 + ac[i].cnt) return 0;
                }
            }
        }
    }
    return 1;
}

/* The step of tb that carries its k-th message (send: its k-th sending step; receive: its k-th
 * receiving step), or NULL. */
static const weft_step *nth_message(const weft_tb *tb, int send, int32_t k) {
    unsigned want = send ? WEFT_STEP_F_SEND : WEFT_STEP_F_RECV;
    for (int32_t s = 0; s < tb->nsteps; s++)
        if ((weft_step_flags(tb->steps[s].type) & want) && k-- == 0) return &tb->steps[s];
    return NULL;
}

/* Message-table entries a step may need at most: its send, its receive, and (folds made of it)
 * an operand and a source per fused `re` source, with room to spare. */
#define XRECV_PER_STEP 6

static weft_result build_rank(const weft_algo_plan *p, const weft_algo *a, int32_t r,
                              const weft_layout *l, weft_rank_plan *rp) {
    weft_result res = WEFT_OK;
    const weft_gpu *g = &a->gpus[r];
    int32_t n = a->ngpus, proto = p->proto;
    int64_t total = 0;
    for (int32_t t = 0; t < g->ntbs; t++)
        total += g->tbs[t].nsteps;
    rp->ntbs = rp->nrec = g->ntbs;
    rp->crun = -1;
    rp->s_chunks = g->s_chunks;
    /* room for a runner (collapse_rank): one more record, a copy of every step, and for each
     * step a send, a receive and fold operands in the message table */
    rp->tbs = calloc((size_t)g->ntbs + 1, sizeof *rp->tbs);
    rp->steps = calloc(2 * (size_t)total + 1, sizeof *rp->steps);
    rp->xsrc = calloc(total ? (size_t)total : 1, sizeof *rp->xsrc);
    rp->xrecv = calloc(XRECV_PER_STEP * (size_t)total + 1, sizeof *rp->xrecv);
    WEFT_CHECK_ALLOC(rp->tbs);
    WEFT_CHECK_ALLOC(rp->steps);
    WEFT_CHECK_ALLOC(rp->xsrc);
    WEFT_CHECK_ALLOC(rp->xrecv);
    for (int32_t t = 0; t < g->ntbs; t++) {
        const weft_tb *tb = &g->tbs[t];
        weft_dtb *dt = &rp->tbs[t];
        dt->first = rp->nsteps;
        dt->nsteps_orig = tb->nsteps;
        dt->speer = tb->send, dt->rpeer = tb->recv, dt->chan = tb->chan;
        for (int32_t s = 0; s < tb->nsteps; s++) {
            unsigned f = weft_step_flags(tb->steps[s].type);
            dt->nsend += (f & WEFT_STEP_F_SEND) != 0;
            dt->nrecv += (f & WEFT_STEP_F_RECV) != 0;
        }
        dt->sconn =
            tb->send >= 0 ? weft_layout_find(l, weft_rt_mod(tb->send - r, n), tb->chan, proto) : -1;
        dt->rconn =
            tb->recv >= 0 ? weft_layout_find(l, weft_rt_mod(r - tb->recv, n), tb->chan, proto) : -1;
        if ((tb->send >= 0 && dt->sconn < 0) || (tb->recv >= 0 && dt->rconn < 0))
            WEFT_FAIL(WEFT_ERR_INTERNAL); /* the layout was built without this algorithm */
        const weft_tb *ptb = tb->recv >= 0 ? find_tb(&a->gpus[tb->recv], 1, r, tb->chan) : NULL;
        int32_t nrecv = 0;
        for (int32_t s = 0; s < tb->nsteps;) {
            const weft_step *st = &tb->steps[s];
            unsigned f = weft_step_flags(st->type);
            int32_t nf = 1;
            if (st->type == WEFT_STEP_RE) {
                while (nf < WEFT_RT_MAX_FUSE && s + nf < tb->nsteps) {
                    const weft_step *nx = &tb->steps[s + nf], *pv = &tb->steps[s + nf - 1];
                    if (nx->type != WEFT_STEP_RE || nx->dstbuf != st->dstbuf ||
                        nx->dstoff != st->dstoff || nx->cnt != st->cnt || nx->depid >= 0 ||
                        pv->hasdep ||
                        may_overlap(a, r, nx->srcbuf, nx->srcoff, st->dstbuf, st->dstoff, st->cnt))
                        break;
                    nf++;
                }
            }
            weft_dstep *d = &rp->steps[rp->nsteps++];
            d->type = (uint8_t)st->type;
            d->srcbuf = (uint8_t)((f & WEFT_STEP_F_READS_SRC) ? st->srcbuf : 0);
            d->dstbuf = (uint8_t)((f & WEFT_STEP_F_WRITE) ? st->dstbuf : 0);
            d->srcoff = (f & WEFT_STEP_F_READS_SRC) ? st->srcoff : 0;
            d->dstoff = (f & WEFT_STEP_F_WRITE) ? st->dstoff : 0;
            d->cnt = st->type == WEFT_STEP_NOP ? 0 : st->cnt;
            d->nsrc = (uint8_t)nf;
            d->nrecv = (uint8_t)((f & WEFT_STEP_F_RECV) ? 1 : 0);
            d->depid = st->depid >= 0 ? st->depid : -1;
            d->dep_stride = st->depid >= 0 ? g->tbs[st->depid].nsteps : 0;
            d->dep_target = st->depid >= 0 ? st->deps + 1 : 0;
            /* only LL steps take a dependency late (the others ignore the flag) */
            if (nf == 1 && proto == WEFT_PROTO_LL && dep_late(a, r, t, st))
                d->flags |= WEFT_DSTEP_F_DEPLATE;
            d->post = tb->steps[s + nf - 1].hasdep ? s + nf : 0;
            d->otb = t;
            d->orig = s;
            d->xsrc = rp->nxsrc;
            if ((f & WEFT_STEP_F_RECV) && ptb) {
                /* where the matching send's data lies on the sender (an `s` step's source) */
                const weft_step *ps = nth_message(ptb, 1, nrecv++);
                if (ps && ps->type == WEFT_STEP_SEND)
                    d->pbuf = (uint8_t)ps->srcbuf, d->poff = ps->srcoff;
            }
            if (nf > 1)
                for (int32_t i = 0; i < nf; i++)
                    rp->xsrc[rp->nxsrc++] =
                        (weft_dsrc){tb->steps[s + i].srcbuf, tb->steps[s + i].srcoff};
            weft_access ac[2];
            for (int i = weft_step_accesses(st, ac) - 1; i >= 0; i--)
                rp->uses_buf[ac[i].buf] = 1;
            for (int32_t i = 1; i < nf; i++)
                rp->uses_buf[tb->steps[s + i].srcbuf] = 1;
            s += nf;
        }
        dt->nsteps = rp->nsteps - dt->first;
    }
fail:
    return res;
}

int32_t weft_plan_rec_bytes(const weft_rank_plan *rp) {
    int32_t m = 0;
    for (int32_t t = 0; t < rp->ntbs; t++)
        if (rp->tbs[t].nsteps > m) m = rp->tbs[t].nsteps;
    return (int32_t)(sizeof(weft_drec) + (size_t)m * sizeof(weft_dstep) + 15) / 16 * 16;
}

/* A runner's record: its tb, its steps, its connections, its entries (each part 16-aligned). */
static size_t run_conns_off(const weft_dtb *t) {
    return (sizeof(weft_drec) + (size_t)t->nsteps * sizeof(weft_dstep) + 15) / 16 * 16;
}
static size_t run_ents_off(const weft_dtb *t) {
    return run_conns_off(t) + ((size_t)t->nconn * sizeof(weft_rconn) + 15) / 16 * 16;
}

size_t weft_plan_table_bytes(const weft_rank_plan *rp) {
    size_t b = (size_t)weft_plan_rec_bytes(rp) * (size_t)rp->ntbs;
    if (rp->crun >= 0) {
        const weft_dtb *t = &rp->tbs[rp->crun];
        b += run_ents_off(t) + ((size_t)t->nent * sizeof(weft_drecv) + 15) / 16 * 16;
    }
    return b;
}

/* Whether every message tb sends comes from an `s` step out of a user buffer (which peers can
 * read: scratch is not in a window). */
static int sends_from_source(const weft_tb *tb) {
    for (int32_t s = 0; s < tb->nsteps; s++) {
        const weft_step *st = &tb->steps[s];
        if ((weft_step_flags(st->type) & WEFT_STEP_F_SEND) &&
            (st->type != WEFT_STEP_SEND || st->srcbuf == WEFT_BUF_SCRATCH))
            return 0;
    }
    return 1;
}

void weft_plan_records(const weft_algo_plan *p, int32_t ai, const weft_mode_plan *m,
                       const weft_layout *l, int32_t rank, char *const *win,
                       const weft_dconn *sconn, const weft_dconn *rconn, char *out) {
    const weft_rank_plan *rp = &m->ranks[rank];
    const weft_algo *a = m->sched;
    int32_t rb = weft_plan_rec_bytes(rp);
    size_t dfo = ai >= 0 && ai < l->nalgos ? l->dflag_off[ai] : 0;
    size_t ready0 = dfo, done0 = dfo + (size_t)p->maxtbs * (size_t)p->kmax * WEFT_RT_DLINE;
    size_t tbline = (size_t)p->kmax * WEFT_RT_DLINE;
    memset(out, 0, weft_plan_table_bytes(rp));
    for (int32_t t = 0; t < rp->nrec; t++) {
        weft_drec *r = (weft_drec *)(void *)(out + (size_t)t * (size_t)rb);
        r->tb = rp->tbs[t];
        memcpy(r + 1, rp->steps + r->tb.first, (size_t)r->tb.nsteps * sizeof(weft_dstep));
        if (t == rp->crun) { /* no end of its own: its connections, then its entries */
            weft_rconn *rc = (weft_rconn *)(void *)((char *)r + run_conns_off(&r->tb));
            for (int32_t i = 0; i < r->tb.nconn; i++) {
                int32_t h = rp->rconn[i] >> 1, send = rp->rconn[i] & 1;
                const weft_dtb *ht = &rp->tbs[h];
                rc[i].e = send ? sconn[ht->sconn] : rconn[ht->rconn];
                rc[i].per = send ? ht->nsend : ht->nrecv;
                rc[i].send = send;
            }
            memcpy((char *)r + run_ents_off(&r->tb), rp->xrecv + r->tb.xbase,
                   (size_t)r->tb.nent * sizeof(weft_drecv));
            continue;
        }
        const weft_tb *tb = &a->gpus[rank].tbs[t];
        if (r->tb.sconn >= 0) {
            r->sc = sconn[r->tb.sconn];
            const weft_tb *q = find_tb(&a->gpus[tb->send], 0, rank, tb->chan);
            if (m->direct && dfo && q && sends_from_source(tb)) {
                r->sc.direct = 1;
                r->sc.ready = (uint64_t *)(void *)(win[tb->send] + ready0 + (size_t)q->id * tbline);
                r->sc.done = (uint64_t *)(void *)(win[rank] + done0 + (size_t)t * tbline);
            }
        }
        if (r->tb.rconn >= 0) {
            r->rc = rconn[r->tb.rconn];
            const weft_tb *q = find_tb(&a->gpus[tb->recv], 1, rank, tb->chan);
            if (m->direct && dfo && q && sends_from_source(q)) {
                r->rc.direct = 1;
                r->rc.ready = (uint64_t *)(void *)(win[rank] + ready0 + (size_t)t * tbline);
                r->rc.done = (uint64_t *)(void *)(win[tb->recv] + done0 + (size_t)q->id * tbline);
            }
        }
    }
}

/* Entries of the message table: a message on tb's connection, or a local chunk. */
static weft_drecv xmsg(int32_t tb, int32_t k, int32_t per, int32_t pbuf, int32_t poff) {
    weft_drecv e;
    memset(&e, 0, sizeof e);
    e.tb = tb, e.k = k, e.per = per, e.pbuf = pbuf, e.poff = poff;
    return e;
}
static weft_drecv xlocal(int32_t buf, int32_t off, int32_t ord) {
    weft_drecv e = xmsg(-1, 0, 0, buf, off);
    e.ord = ord;
    return e;
}

/* ---- fused receives -------------------------------------------------------------------- *
 * A chain X1..Xm of rrc steps of different tbs of a rank, each but the first reducing into what
 * the previous one wrote (dst = src = X1's dst, waiting for it), becomes one step at Xm's place
 * that takes all m messages at once and reduces them, in the chain's order, with X1's source
 * (the same bits). X1..Xm-1 stay as markers that wait for it and count their message. To keep
 * every ordering the chain had, each Xi must be the only receive of its tb (its connection then
 * carries only these messages, consumed in order by the fused step) with nothing before it but
 * nops that wait for nothing, and nothing but Xi+1 may wait for Xi. A fused plan is kept only if a
 * simulation of every rank shows it cannot deadlock. */

/* dsteps of rank plan rp: the one that holds tb t's original step s. */
static int32_t dstep_of(const weft_rank_plan *rp, int32_t t, int32_t s) {
    const weft_dtb *dt = &rp->tbs[t];
    for (int32_t i = dt->nsteps - 1; i >= 0; i--)
        if (rp->steps[dt->first + i].orig <= s) return dt->first + i;
    return -1;
}

static int32_t receives_of(const weft_tb *tb) {
    int32_t n = 0;
    for (int32_t s = 0; s < tb->nsteps; s++)
        n += (weft_step_flags(tb->steps[s].type) & WEFT_STEP_F_RECV) != 0;
    return n;
}

/* A chain link: tb t's only receive is an rrc with nothing before it but nops that wait for
 * nothing (what trimming leaves of in-place guards out of place). Its index, or -1. */
static int32_t chain_link(const weft_gpu *g, int32_t t) {
    const weft_tb *tb = &g->tbs[t];
    if (tb->recv < 0 || receives_of(tb) != 1) return -1;
    for (int32_t s = 0; s < tb->nsteps; s++) {
        const weft_step *st = &tb->steps[s];
        if (st->type == WEFT_STEP_RRC) return s;
        if (st->type != WEFT_STEP_NOP || st->depid >= 0) return -1;
    }
    return -1;
}

static int fuse_rank(const weft_algo *a, int32_t r, weft_rank_plan *rp) {
    const weft_gpu *g = &a->gpus[r];
    int32_t n = g->ntbs, nf = 0;
    /* link[t]: tb t's chain step; next[t]: the tb whose chain step is the only step waiting
     * for tb t's */
    int32_t *link = malloc((size_t)n * sizeof *link), *next = malloc((size_t)n * sizeof *next);
    int32_t *waiters = calloc((size_t)n, sizeof *waiters),
            *chain = malloc((size_t)n * sizeof *chain);
    uint8_t *fed = calloc((size_t)n, 1);
    if (!link || !next || !waiters || !chain || !fed) goto done;
    for (int32_t t = 0; t < n; t++)
        link[t] = chain_link(g, t), next[t] = -1;
    for (int32_t t = 0; t < n; t++)
        for (int32_t s = 0; s < g->tbs[t].nsteps; s++) {
            const weft_step *st = &g->tbs[t].steps[s];
            if (st->depid < 0 || st->deps != link[st->depid]) continue;
            waiters[st->depid]++;
            if (s == link[t]) next[st->depid] = t;
        }
    for (int32_t t = 0; t < n; t++) {
        int32_t u = next[t];
        if (u < 0 || waiters[t] != 1 || link[t] < 0) {
            next[t] = -1;
            continue;
        }
        const weft_step *x = &g->tbs[t].steps[link[t]], *y = &g->tbs[u].steps[link[u]];
        if (y->srcbuf != x->dstbuf || y->dstbuf != x->dstbuf || y->srcoff != x->dstoff ||
            y->dstoff != x->dstoff || y->cnt != x->cnt)
            next[t] = -1;
        else
            fed[u] = 1;
    }
    for (int32_t t1 = 0; t1 < n; t1++) {
        if (fed[t1] || next[t1] < 0) continue; /* chains start where nothing feeds them */
        int32_t m = 0;
        for (int32_t t = t1; t >= 0 && m < WEFT_RT_MAX_FUSE - 1; t = next[t]) /* + X1's source */
            chain[m++] = t;
        if (m < 2) continue;
        int32_t tm = chain[m - 1];
        weft_dstep *dm = &rp->steps[dstep_of(rp, tm, link[tm])];
        const weft_dstep *d1 = &rp->steps[dstep_of(rp, t1, link[t1])];
        /* the fused step: a fold of X1's source and every message, with X1's dependency */
        dm->srcbuf = d1->srcbuf, dm->srcoff = d1->srcoff;
        dm->depid = d1->depid, dm->dep_stride = d1->dep_stride, dm->dep_target = d1->dep_target;
        dm->flags = (uint8_t)((dm->flags & ~WEFT_DSTEP_F_DEPLATE) | WEFT_DSTEP_F_FOLD);
        dm->nrecv = (uint8_t)(m + 1);
        dm->xrecv = rp->nxrecv;
        dm->post = dm->orig + 1;
        rp->xrecv[rp->nxrecv++] = xlocal(d1->srcbuf, d1->srcoff, 0);
        for (int32_t i = 0; i < m; i++) {
            const weft_dstep *di = &rp->steps[dstep_of(rp, chain[i], link[chain[i]])];
            rp->xrecv[rp->nxrecv++] = xmsg(chain[i], 0, 1, di->pbuf, di->poff);
        }
        for (int32_t i = 0; i < m - 1; i++) {
            weft_dstep *di = &rp->steps[dstep_of(rp, chain[i], link[chain[i]])];
            di->flags = (uint8_t)((di->flags & ~WEFT_DSTEP_F_DEPLATE) | WEFT_DSTEP_F_ELSEWHERE);
            di->depid = tm;
            di->dep_stride = g->tbs[tm].nsteps;
            di->dep_target = dm->orig + 1;
        }
        nf++;
    }
done:
    free(link);
    free(next);
    free(waiters);
    free(chain);
    free(fed);
    return nf;
}

/* ---- simulating a plan ---------------------------------------------------------------- *
 * Every rank's tables, steps taken as soon as they may run, with connection buffers of cap
 * messages (direct connections never wait for room: no stricter). Each rank runs its collapsed
 * form when `collapsed` says so (and has one), else its tb records. Messages are counted per tb
 * of the schedule: a runner's count on the tbs they belong to. */
typedef struct sim {
    const weft_algo *a;
    const weft_mode_plan *m;
    int32_t nr, cap, iters, collapsed;
    int32_t *base;         /* first record of each rank */
    int64_t *pos, *prog;   /* per record: steps taken, progress */
    int64_t *sent, *taken; /* per receiving tb: messages sent to it, taken by it */
    int32_t *to;           /* the receiving tb of a tb's sends */
} sim;

/* pos, prog, sent and taken are one allocation (pos's). */
static void sim_free(sim *x) {
    free(x->base);
    free(x->pos);
    free(x->to);
}

static int sim_init(sim *x, const weft_algo *a, const weft_mode_plan *m, int32_t nr, int32_t cap,
                    int32_t iters, int collapsed) {
    memset(x, 0, sizeof *x);
    x->a = a, x->m = m, x->nr = nr, x->cap = cap, x->iters = iters, x->collapsed = collapsed;
    x->base = calloc((size_t)nr + 1, sizeof *x->base);
    if (x->base == NULL) return 0;
    for (int32_t r = 0; r < nr; r++)
        x->base[r + 1] = x->base[r] + m->ranks[r].nrec;
    size_t ntb = (size_t)x->base[nr];
    x->pos = calloc(4 * ntb + 1, sizeof *x->pos);
    x->to = malloc((ntb + 1) * sizeof *x->to);
    if (!x->pos || !x->to) {
        sim_free(x);
        return 0;
    }
    x->prog = x->pos + ntb, x->sent = x->prog + ntb, x->taken = x->sent + ntb;
    for (int32_t r = 0; r < nr; r++) {
        for (int32_t t = 0; t < m->ranks[r].nrec; t++)
            x->to[x->base[r] + t] = -1;
        for (int32_t t = 0; t < m->ranks[r].ntbs; t++) {
            const weft_tb *tb = &a->gpus[r].tbs[t];
            const weft_tb *q = tb->send >= 0 ? find_tb(&a->gpus[tb->send], 0, r, tb->chan) : NULL;
            x->to[x->base[r] + t] = q ? x->base[tb->send] + q->id : -1;
        }
    }
    return 1;
}

static int sim_collapsed(const sim *x, int32_t r) {
    return x->collapsed > 1 ? (x->collapsed >> (r + 1)) & 1 : x->collapsed;
}

/* The step record t of rank r would take next, or NULL when it is done. */
static const weft_dstep *sim_next(const sim *x, int32_t r, int32_t t, int64_t *j) {
    const weft_rank_plan *rp = &x->m->ranks[r];
    const weft_dtb *dt = &rp->tbs[t];
    int64_t p = x->pos[x->base[r] + t];
    if (dt->nsteps <= 0 || p >= (int64_t)x->iters * dt->nsteps) return NULL;
    *j = p / dt->nsteps;
    return &rp->steps[dt->first + p % dt->nsteps];
}

static int sim_receives(const weft_dstep *d) {
    return (weft_step_flags((weft_step_type)d->type) & WEFT_STEP_F_RECV) &&
           !(d->flags & WEFT_DSTEP_F_ELSEWHERE);
}

/* Whether step d may run now; messages count as arrived once avail (sent, or a snapshot of it)
 * says so. */
static int sim_ready(const sim *x, int32_t r, int32_t t, const weft_dstep *d, int64_t j,
                     const int64_t *avail) {
    const weft_rank_plan *rp = &x->m->ranks[r];
    const int32_t b = x->base[r];
    unsigned f = weft_step_flags((weft_step_type)d->type);
    const int xc = (d->flags & WEFT_DSTEP_F_XCONN) != 0;
    const int32_t xb = rp->tbs[t].runner ? rp->tbs[t].xbase : 0;
    if (d->depid >= 0 && x->prog[b + d->depid] < j * d->dep_stride + d->dep_target) return 0;
    if (sim_receives(d)) {
        if ((d->flags & WEFT_DSTEP_F_FOLD) || xc) {
            for (int32_t i = 0; i < d->nrecv; i++) {
                const weft_drecv *e = &rp->xrecv[xb + d->xrecv + i];
                if (e->tb >= 0 && avail[b + e->tb] <= j * e->per + e->k) return 0;
            }
        } else if (avail[b + t] <= x->taken[b + t]) {
            return 0;
        }
    }
    /* a step's messages on one connection must all fit its buffer at once (a multi-peer send
     * that puts several on one connection waits for room for each before it sends any) */
    int32_t nsend = (f & WEFT_STEP_F_SEND) ? (xc ? d->nsend : 1) : 0;
    for (int32_t i = 0; i < nsend; i++) {
        int32_t y = x->to[b + (xc ? rp->xrecv[xb + d->xsend + i].tb : t)], same = 0;
        for (int32_t k = 0; k <= i && y >= 0; k++)
            same += x->to[b + (xc ? rp->xrecv[xb + d->xsend + k].tb : t)] == y;
        if (y >= 0 && x->sent[y] - x->taken[y] + same > x->cap) return 0;
    }
    return 1;
}

static void sim_take(sim *x, int32_t r, int32_t t, const weft_dstep *d, int64_t j) {
    const weft_rank_plan *rp = &x->m->ranks[r];
    const int32_t b = x->base[r];
    unsigned f = weft_step_flags((weft_step_type)d->type);
    const int xc = (d->flags & WEFT_DSTEP_F_XCONN) != 0;
    const int32_t xb = rp->tbs[t].runner ? rp->tbs[t].xbase : 0;
    if (sim_receives(d)) {
        if ((d->flags & WEFT_DSTEP_F_FOLD) || xc) {
            for (int32_t i = 0; i < d->nrecv; i++)
                if (rp->xrecv[xb + d->xrecv + i].tb >= 0)
                    x->taken[b + rp->xrecv[xb + d->xrecv + i].tb]++;
        } else {
            x->taken[b + t]++;
        }
    }
    int32_t nsend = (f & WEFT_STEP_F_SEND) ? (xc ? d->nsend : 1) : 0;
    for (int32_t i = 0; i < nsend; i++) {
        int32_t y = x->to[b + (xc ? rp->xrecv[xb + d->xsend + i].tb : t)];
        if (y >= 0) x->sent[y]++;
    }
    if (d->post) x->prog[b + t] = j * rp->tbs[t].nsteps_orig + d->post;
    x->pos[b + t]++;
}

static int sim_done(const sim *x) {
    for (int32_t r = 0; r < x->nr; r++) {
        const weft_rank_plan *rp = &x->m->ranks[r];
        int cf = sim_collapsed(x, r);
        int32_t t0 = weft_plan_tb0(rp, cf), tn = weft_plan_ntbs_run(rp, cf);
        for (int32_t t = t0; t < t0 + tn; t++)
            if (x->pos[x->base[r] + t] != (int64_t)x->iters * rp->tbs[t].nsteps) return 0;
    }
    return 1;
}

/* Whether every rank's tables run to the end of `iters` iterations, each step taken as soon as
 * it may. */
static int plan_completes(const weft_algo *a, const weft_mode_plan *m, const weft_algo_plan *p,
                          int32_t cap, int32_t iters, int collapsed) {
    sim x;
    if (!sim_init(&x, a, m, p->nranks, cap, iters, collapsed)) return 0;
    int64_t budget = (int64_t)1 << 24;
    for (int moved = 1; moved && budget > 0;) {
        moved = 0;
        for (int32_t r = 0; r < x.nr; r++) {
            const weft_rank_plan *rp = &m->ranks[r];
            int cf = sim_collapsed(&x, r);
            int32_t t0 = weft_plan_tb0(rp, cf), tn = weft_plan_ntbs_run(rp, cf);
            for (int32_t t = t0; t < t0 + tn; t++) {
                const weft_dstep *d;
                int64_t j;
                while ((d = sim_next(&x, r, t, &j)) && budget-- > 0 &&
                       sim_ready(&x, r, t, d, j, x.sent)) {
                    sim_take(&x, r, t, d, j);
                    moved = 1;
                }
            }
        }
    }
    int ok = sim_done(&x);
    sim_free(&x);
    return ok;
}

/* One iteration of the tb records in rounds, a round being one hop: a receive may take only
 * what was sent in earlier rounds. Within a round a rank takes everything that sends or computes
 * before it takes a receive, so its sends go out as early as the schedule allows. order[r]: the
 * rank's steps in the order taken (room for its steps), norder[r] their count. Returns whether
 * every step was taken. */
static int plan_order(const weft_algo *a, const weft_mode_plan *m, const weft_algo_plan *p,
                      int32_t cap, int32_t **order, int32_t *norder) {
    sim x;
    if (!sim_init(&x, a, m, p->nranks, cap, 1, 0)) return 0;
    size_t ntb = (size_t)x.base[x.nr];
    int64_t *avail = malloc(ntb * sizeof *avail);
    int ok = avail != NULL;
    for (int32_t r = 0; r < x.nr; r++)
        norder[r] = 0;
    for (int round = 1; ok && round;) {
        round = 0;
        memcpy(avail, x.sent, ntb * sizeof *avail);
        for (int32_t r = 0; r < x.nr; r++) {
            const weft_rank_plan *rp = &m->ranks[r];
            for (int moved = 1; moved;) {
                moved = 0;
                for (int pass = 0; pass < 2 && !moved; pass++)
                    for (int32_t t = 0; t < rp->ntbs; t++) {
                        const weft_dstep *d;
                        int64_t j;
                        /* pass 0: what needs no message; pass 1: one receive, then pass 0 again */
                        while ((d = sim_next(&x, r, t, &j)) && (pass == 1 || !sim_receives(d)) &&
                               sim_ready(&x, r, t, d, j, avail)) {
                            order[r][norder[r]++] =
                                rp->tbs[t].first +
                                (int32_t)(x.pos[x.base[r] + t] % rp->tbs[t].nsteps);
                            sim_take(&x, r, t, d, j);
                            moved = round = 1;
                            if (pass == 1) break;
                        }
                        if (pass == 1 && moved) break;
                    }
            }
        }
    }
    ok = ok && sim_done(&x);
    free(avail);
    sim_free(&x);
    return ok;
}

/* ---- collapsed ranks --------------------------------------------------------------------- *
 * A rank's steps on one CTA group (the runner): no progress hand-offs between CTAs, no marker
 * CTAs, and where the order allows, one pass for several peers: consecutive sends of one source
 * become one multi-peer send, and a chain of receive-reduces and `re`s into one accumulator
 * (the one-shot shape, with the local operand anywhere in it) becomes one fold whose copy out
 * is folded in. The order is the one a simulation of every rank ran the tbs' steps in, and the
 * collapsed plan is kept only if a simulation of it completes too. */

/* Whether chunk ranges [o1, o1+n) of b1 and [o2, o2+n) of b2 meet on rank r: anywhere, or
 * (shifted) only where they meet at different chunks. */
static int ranges_meet(const weft_algo *a, int32_t r, weft_buf b1, int32_t o1, weft_buf b2,
                       int32_t o2, int32_t n, int shifted) {
    return shifted ? mem_shifted(a, r, b1, o1, b2, o2, n) : may_overlap(a, r, b1, o1, b2, o2, n);
}

/* Whether chunks [o, o + n) of buffer b are read by step d of rank r (its source, the
 * destination of `re`, a fused `re`'s sources, a fold's local operands, every source of a
 * multi-peer send); shifted: only where d reads that memory at another chunk than [o, o + n)
 * names it. */
static int step_reads(const weft_algo *a, int32_t r, const weft_rank_plan *rp, const weft_dstep *d,
                      weft_buf b, int32_t o, int32_t n, int shifted) {
    unsigned f = weft_step_flags((weft_step_type)d->type);
    if ((d->flags & WEFT_DSTEP_F_XCONN) && (f & WEFT_STEP_F_SEND))
        for (int32_t i = 0; i < d->nsend; i++) {
            const weft_drecv *e = &rp->xrecv[d->xsend + i];
            if (ranges_meet(a, r, (weft_buf)e->pbuf, e->poff, b, o, n, shifted)) return 1;
        }
    if (d->flags & (WEFT_DSTEP_F_FOLD | WEFT_DSTEP_F_SCATTER)) {
        for (int32_t i = 0; i < d->nrecv; i++) {
            const weft_drecv *e = &rp->xrecv[d->xrecv + i];
            if (e->tb < 0 && ranges_meet(a, r, (weft_buf)e->pbuf, e->poff, b, o, n, shifted))
                return 1;
        }
        return 0;
    }
    if (f & WEFT_STEP_F_READS_SRC) {
        if (d->nsrc > 1) {
            for (int32_t i = 0; i < d->nsrc; i++) {
                const weft_dsrc *x = &rp->xsrc[d->xsrc + i];
                if (ranges_meet(a, r, (weft_buf)x->buf, x->off, b, o, n, shifted)) return 1;
            }
        } else if (ranges_meet(a, r, (weft_buf)d->srcbuf, d->srcoff, b, o, n, shifted)) {
            return 1;
        }
    }
    return d->type == WEFT_STEP_RE &&
           ranges_meet(a, r, (weft_buf)d->dstbuf, d->dstoff, b, o, n, shifted);
}

/* Index of send (or receive) message `which` of step s among tb's, and how many tb has. */
static int32_t message_index(const weft_tb *tb, int32_t s, int send) {
    unsigned want = send ? WEFT_STEP_F_SEND : WEFT_STEP_F_RECV;
    int32_t k = 0;
    for (int32_t i = 0; i < s; i++)
        k += (weft_step_flags(tb->steps[i].type) & want) != 0;
    return k;
}

/* Appends a fold of runner steps in[i0 .. i1) (a chain into accumulator A, see collapse_rank)
 * to out. Returns the fold. */
static weft_dstep *emit_fold(const weft_algo *a, int32_t r, weft_rank_plan *rp,
                             const weft_dstep *in, int32_t i0, int32_t i1, int32_t nin,
                             weft_dstep *out) {
    const weft_dstep *x = &in[i0];
    weft_dstep f = *x;
    f.flags = WEFT_DSTEP_F_XCONN | WEFT_DSTEP_F_FOLD;
    f.type = WEFT_STEP_RRC;
    f.nsrc = 1;
    f.nsend = 0;
    f.xrecv = rp->nxrecv;
    weft_drecv *e = rp->xrecv;
    int32_t n = 0;
    /* operand 0: the start's value */
    if (x->type == WEFT_STEP_RECV) {
        e[f.xrecv + n++] = rp->xrecv[x->xrecv];
    } else if (x->type == WEFT_STEP_RRC) {
        e[f.xrecv + n++] = xlocal(x->srcbuf, x->srcoff, 0);
        e[f.xrecv + n] = rp->xrecv[x->xrecv];
        e[f.xrecv + n++].ord = 0;
    } else { /* re */
        e[f.xrecv + n++] = xlocal(x->dstbuf, x->dstoff, 0);
        for (int32_t k = 0; k < x->nsrc; k++) {
            weft_dsrc sx = x->nsrc > 1 ? rp->xsrc[x->xsrc + k] : (weft_dsrc){x->srcbuf, x->srcoff};
            e[f.xrecv + n++] = xlocal(sx.buf, sx.off, WEFT_XENT_ORD);
        }
    }
    for (int32_t i = i0 + 1; i < i1; i++) {
        const weft_dstep *y = &in[i];
        if (y->type == WEFT_STEP_RRC) {
            e[f.xrecv + n] = rp->xrecv[y->xrecv];
            e[f.xrecv + n++].ord = 0;
        } else if (y->type == WEFT_STEP_RE) {
            for (int32_t k = 0; k < y->nsrc; k++) {
                weft_dsrc sx =
                    y->nsrc > 1 ? rp->xsrc[y->xsrc + k] : (weft_dsrc){y->srcbuf, y->srcoff};
                e[f.xrecv + n++] = xlocal(sx.buf, sx.off, WEFT_XENT_ORD);
            }
        } else { /* the closing cpy */
            f.flags |= WEFT_DSTEP_F_DST2;
            f.dst2buf = y->dstbuf;
            f.dst2off = y->dstoff;
        }
    }
    f.nrecv = (uint8_t)n;
    rp->nxrecv += n;
    /* the accumulator itself: scratch that nothing after the fold reads is never written */
    if (x->dstbuf == WEFT_BUF_SCRATCH) {
        int live = 0;
        for (int32_t i = i1; i < nin && !live; i++)
            live = step_reads(a, r, rp, &in[i], WEFT_BUF_SCRATCH, x->dstoff, x->cnt, 0);
        if (!live) f.flags |= WEFT_DSTEP_F_NODST;
    }
    *out = f;
    return out;
}

/* Operands step y would add to a fold into accumulator A (0: y does not continue the chain). */
static int32_t chain_operands(const weft_algo *a, int32_t r, const weft_rank_plan *rp,
                              const weft_dstep *y, const weft_dstep *x) {
    if (y->cnt != x->cnt) return 0;
    const weft_buf ab = (weft_buf)x->dstbuf;
    const int32_t ao = x->dstoff, n = x->cnt;
    if (y->type == WEFT_STEP_RRC)
        return y->nrecv == 1 && y->srcbuf == ab && y->srcoff == ao && y->dstbuf == ab &&
                       y->dstoff == ao
                   ? 1
                   : 0;
    if (y->type == WEFT_STEP_RE) {
        if (y->dstbuf != ab || y->dstoff != ao) return 0;
        for (int32_t k = 0; k < y->nsrc; k++) {
            weft_dsrc sx = y->nsrc > 1 ? rp->xsrc[y->xsrc + k] : (weft_dsrc){y->srcbuf, y->srcoff};
            if (may_overlap(a, r, (weft_buf)sx.buf, sx.off, ab, ao, n)) return 0;
        }
        return y->nsrc;
    }
    return 0;
}

/* Whether runner steps in[i0 .. i1) plus y can run as one scatter: plain receives and copies
 * of one size whose destinations meet no other's source or destination. */
static int scatter_fits(const weft_algo *a, int32_t r, const weft_dstep *in, int32_t i0, int32_t i1,
                        const weft_dstep *y) {
    if (!((y->type == WEFT_STEP_RECV && y->nrecv == 1) ||
          (y->type == WEFT_STEP_CPY && y->nsrc <= 1)))
        return 0;
    if (i1 > i0 && y->cnt != in[i0].cnt) return 0;
    if (y->type == WEFT_STEP_CPY &&
        may_overlap(a, r, (weft_buf)y->srcbuf, y->srcoff, (weft_buf)y->dstbuf, y->dstoff, y->cnt))
        return 0;
    for (int32_t i = i0; i < i1; i++) {
        const weft_dstep *x = &in[i];
        if (may_overlap(a, r, (weft_buf)x->dstbuf, x->dstoff, (weft_buf)y->dstbuf, y->dstoff,
                        y->cnt) ||
            (y->type == WEFT_STEP_CPY && may_overlap(a, r, (weft_buf)x->dstbuf, x->dstoff,
                                                     (weft_buf)y->srcbuf, y->srcoff, y->cnt)) ||
            (x->type == WEFT_STEP_CPY && may_overlap(a, r, (weft_buf)x->srcbuf, x->srcoff,
                                                     (weft_buf)y->dstbuf, y->dstoff, y->cnt)))
            return 0;
    }
    return 1;
}

/* Builds rank r's runner from its tb records (unfused) and the order its steps ran in: 0 when
 * the rank does not fit a runner (see WEFT_RT_RUN_MAX_*). */
static int collapse_rank(const weft_algo *a, int32_t r, weft_rank_plan *rp, const int32_t *order,
                         int32_t norder) {
    const weft_gpu *g = &a->gpus[r];
    int32_t cap = rp->nsteps; /* step table entries before the runner's */
    weft_dstep *tmp = calloc((size_t)norder + 1, sizeof *tmp);
    int32_t *conn = calloc(2 * (size_t)rp->ntbs + 1, sizeof *conn);
    int32_t *rconn = calloc(WEFT_RT_RUN_MAX_CONNS, sizeof *rconn);
    int32_t n = 0, m = 0, ok = tmp && conn && rconn, xr0 = rp->nxrecv, nconn = 0;
    /* 1. the steps in order, dependencies gone (they ran in this order), connections from the
     * message table; consecutive sends as one multi-peer send (each entry names its source) */
    for (int32_t i = 0; ok && i < norder; i++) {
        weft_dstep d = rp->steps[order[i]];
        const weft_tb *tb = &g->tbs[d.otb];
        unsigned f = weft_step_flags((weft_step_type)d.type);
        if (d.type == WEFT_STEP_NOP) continue;
        d.depid = -1, d.dep_stride = d.dep_target = 0, d.post = 0;
        d.flags = WEFT_DSTEP_F_XCONN;
        d.nsend = 0, d.nrecv = 0;
        if (f & WEFT_STEP_F_RECV) {
            d.nrecv = 1;
            d.xrecv = rp->nxrecv;
            rp->xrecv[rp->nxrecv++] =
                xmsg(d.otb, message_index(tb, d.orig, 0), rp->tbs[d.otb].nrecv, d.pbuf, d.poff);
        }
        if (f & WEFT_STEP_F_SEND) {
            weft_drecv e =
                xmsg(d.otb, message_index(tb, d.orig, 1), rp->tbs[d.otb].nsend, d.srcbuf, d.srcoff);
            weft_dstep *pv = n > 0 ? &tmp[n - 1] : NULL;
            if (d.type == WEFT_STEP_SEND && pv && pv->type == WEFT_STEP_SEND && pv->cnt == d.cnt &&
                pv->nsend < WEFT_RT_MAX_FUSE && pv->xsend + pv->nsend == rp->nxrecv) {
                rp->xrecv[rp->nxrecv++] = e;
                pv->nsend++;
                continue;
            }
            d.nsend = 1;
            d.xsend = rp->nxrecv;
            rp->xrecv[rp->nxrecv++] = e;
        }
        tmp[n++] = d;
    }
    /* 2. folds: a chain into one accumulator A starts with r, rrc or re writing A; then rrc
     * (A to A) and re into A whose sources are not A; it may close with a cpy out of A.
     * Scatters: plain receives and copies that meet nothing of each other's. */
    weft_dstep *out = &rp->steps[cap];
    for (int32_t i = 0; ok && i < n;) {
        const weft_dstep *x = &tmp[i];
        int32_t i1 = i + 1, nops = 0, msgs = 0;
        if ((x->type == WEFT_STEP_RECV || x->type == WEFT_STEP_RRC || x->type == WEFT_STEP_RE) &&
            x->cnt > 0) {
            nops = x->type == WEFT_STEP_RECV ? 1 : x->type == WEFT_STEP_RRC ? 2 : 1 + x->nsrc;
            msgs = x->type != WEFT_STEP_RE;
            for (; i1 < n; i1++) {
                const weft_dstep *y = &tmp[i1];
                /* the closing copy is written chunk by chunk with the fold, each element after
                 * every operand's same element was read by the same thread (the interpreter's
                 * folds): its destination may meet neither the accumulator nor a local operand
                 * at another chunk (of a later chunk, or shifted); the very same memory is
                 * read first (the one-shot allreduce in place: the output over the input) */
                int meets = 0;
                for (int32_t k = i; k < i1 && !meets && y->type == WEFT_STEP_CPY; k++)
                    meets =
                        step_reads(a, r, rp, &tmp[k], (weft_buf)y->dstbuf, y->dstoff, y->cnt, 1);
                if (y->type == WEFT_STEP_CPY && y->cnt == x->cnt && y->srcbuf == x->dstbuf &&
                    y->srcoff == x->dstoff && y->nsrc <= 1 && !meets &&
                    !may_overlap(a, r, (weft_buf)y->dstbuf, y->dstoff, (weft_buf)x->dstbuf,
                                 x->dstoff, x->cnt)) {
                    i1++;
                    break;
                }
                int32_t k = chain_operands(a, r, rp, y, x);
                if (k == 0 || nops + k > WEFT_RT_MAX_FUSE) break;
                nops += k;
                msgs += y->type == WEFT_STEP_RRC;
            }
        }
        if (m >= WEFT_RT_RUN_MAX_STEPS) {
            ok = 0;
        } else if (i1 - i >= 2 && msgs > 0) {
            emit_fold(a, r, rp, tmp, i, i1, n, &out[m++]);
            i = i1;
        } else {
            int32_t j1 = i;
            while (j1 < n && j1 - i < WEFT_RT_MAX_FUSE && scatter_fits(a, r, tmp, i, j1, &tmp[j1]))
                j1++;
            if (j1 - i >= 2) {
                weft_dstep sc = tmp[i];
                sc.flags = WEFT_DSTEP_F_XCONN | WEFT_DSTEP_F_SCATTER;
                sc.type = WEFT_STEP_CPY;
                sc.nsrc = 1, sc.nsend = 0;
                sc.xrecv = rp->nxrecv;
                for (int32_t k = i; k < j1; k++) {
                    const weft_dstep *y = &tmp[k];
                    weft_drecv e = xlocal(y->srcbuf, y->srcoff, 0);
                    e.dbuf = y->dstbuf, e.doff = y->dstoff;
                    if (y->type == WEFT_STEP_RECV) {
                        e = rp->xrecv[y->xrecv];
                        e.dbuf = y->dstbuf, e.doff = y->dstoff;
                        sc.type = WEFT_STEP_RECV;
                    }
                    rp->xrecv[rp->nxrecv++] = e;
                }
                sc.nrecv = (uint8_t)(j1 - i);
                out[m++] = sc;
                i = j1;
            } else {
                out[m++] = tmp[i++];
            }
        }
    }
    /* 3. the runner's own entries, packed, each message naming its connection */
    int32_t xb = rp->nxrecv, nent = 0;
    for (int32_t i = 0; ok && i < m; i++) {
        weft_dstep *d = &out[i];
        for (int side = 0; side < 2 && ok; side++) {
            int32_t cnt = side ? d->nsend : d->nrecv, *first = side ? &d->xsend : &d->xrecv;
            if (cnt == 0) {
                *first = 0;
                continue;
            }
            int32_t from = *first;
            *first = nent;
            for (int32_t k = 0; k < cnt && ok; k++) {
                weft_drecv e = rp->xrecv[from + k];
                if (e.tb >= 0) {
                    int32_t key = e.tb * 2 + side;
                    if (conn[key] == 0) {
                        if (nconn == WEFT_RT_RUN_MAX_CONNS) {
                            ok = 0;
                            break;
                        }
                        rconn[nconn] = key;
                        conn[key] = ++nconn;
                    }
                    e.conn = conn[key] - 1;
                }
                if (nent == WEFT_RT_RUN_MAX_ENTS)
                    ok = 0;
                else
                    rp->xrecv[xb + nent++] = e;
            }
            /* several messages of one connection in one step: the last one publishes */
            for (int32_t k = 0; ok && k < cnt; k++) {
                weft_drecv *ek = &rp->xrecv[xb + *first + k];
                for (int32_t l = k + 1; ek->tb >= 0 && l < cnt; l++)
                    if (rp->xrecv[xb + *first + l].conn == ek->conn &&
                        rp->xrecv[xb + *first + l].tb >= 0)
                        ek->ord |= WEFT_XENT_NOTLAST;
            }
        }
    }
    free(tmp);
    free(conn);
    if (!ok || m == 0) {
        free(rconn);
        rp->nxrecv = xr0;
        return 0;
    }
    weft_dtb *rt = &rp->tbs[rp->ntbs];
    memset(rt, 0, sizeof *rt);
    rt->first = cap;
    rt->nsteps = rt->nsteps_orig = m;
    rt->sconn = rt->rconn = rt->speer = rt->rpeer = -1;
    rt->runner = 1;
    rt->nconn = nconn;
    rt->nent = nent;
    rt->xbase = xb;
    rp->nxrecv = xb + nent;
    rp->rconn = rconn;
    rp->nsteps = cap + m;
    rp->crun = rp->ntbs;
    rp->nrec = rp->ntbs + 1;
    return 1;
}

/* Gives every rank of m a runner where all of them can have one and the collapsed plan
 * completes with FIFOs of cap messages; m's tb records are as built (unfused). */
static weft_result collapse_mode(const weft_algo_plan *p, weft_mode_plan *m, int32_t cap) {
    const weft_algo *a = m->sched;
    int32_t nr = p->nranks;
    int32_t **order = calloc((size_t)nr, sizeof *order),
            *norder = calloc((size_t)nr, sizeof *norder);
    int32_t *nsteps0 = calloc((size_t)nr, sizeof *nsteps0), *nx0 = calloc((size_t)nr, sizeof *nx0);
    weft_result res = WEFT_OK;
    int ok = order && norder && nsteps0 && nx0;
    if (!ok) res = WEFT_ERR_NOMEM;
    for (int32_t r = 0; r < nr && ok; r++) {
        nsteps0[r] = m->ranks[r].nsteps, nx0[r] = m->ranks[r].nxrecv;
        order[r] = malloc(((size_t)m->ranks[r].nsteps + 1) * sizeof **order);
        if (order[r] == NULL)
            ok = 0, res = WEFT_ERR_NOMEM;
        else if (m->ranks[r].nsteps > 8 * WEFT_RT_RUN_MAX_STEPS)
            ok = 0;
    }
    ok = ok && plan_order(a, m, p, cap, order, norder);
    for (int32_t r = 0; r < nr && ok; r++)
        ok = norder[r] == m->ranks[r].nsteps &&
             collapse_rank(a, r, &m->ranks[r], order[r], norder[r]);
    ok = ok && plan_completes(a, m, p, cap, cap + 2, 1);
    m->collapsed = ok;
    if (!ok && nsteps0)
        for (int32_t r = 0; r < nr; r++) { /* as built: no runner */
            weft_rank_plan *rp = &m->ranks[r];
            if (rp->crun >= 0) rp->nsteps = nsteps0[r], rp->nxrecv = nx0[r];
            free(rp->rconn);
            rp->rconn = NULL;
            rp->crun = -1;
            rp->nrec = rp->ntbs;
        }
    for (int32_t r = 0; order && r < nr; r++)
        free(order[r]);
    free(order);
    free(norder);
    free(nsteps0);
    free(nx0);
    return res;
}

int weft_plan_use_collapsed(const weft_algo_plan *p, const weft_mode_plan *m,
                            const weft_call_geom *g, const weft_rt_cfg *cfg, int traced) {
    return m && m->collapsed && (m->collapse_gain > 0 || cfg->collapse_always) && !g->direct &&
           !traced && g->C * (int64_t)g->kelem <= cfg->collapse_bytes[p->proto];
}

static void free_ranks(weft_mode_plan *m, int32_t nranks) {
    if (m->ranks)
        for (int32_t r = 0; r < nranks; r++) {
            free(m->ranks[r].tbs);
            free(m->ranks[r].steps);
            free(m->ranks[r].xsrc);
            free(m->ranks[r].xrecv);
            free(m->ranks[r].rconn);
        }
    free(m->ranks);
    m->ranks = NULL;
}

/* The longest chain of waits from one thread block on another in a rank's plan as built (a
 * step waiting on a step of another tb counts one more than that step); 0 when its thread
 * blocks never wait on each other. A collapsed rank has no such waits: it gains where chains
 * are long (a one-shot allreduce's receive-reduce chain across thread blocks) and loses where
 * the thread blocks are independent and would have run in parallel (all-gather, all-to-all). */
static int32_t rank_wait_depth(const weft_rank_plan *rp) {
    int32_t nt = rp->crun >= 0 ? rp->crun : rp->ntbs, best = 0;
    int32_t *depth = calloc((size_t)rp->nsteps + 1, sizeof *depth);
    if (depth == NULL) return 0;
    /* The waits form a DAG (the plan completes): passes of relaxation until nothing changes,
     * at most one per step. */
    for (int32_t pass = 0, changed = 1; changed && pass <= rp->nsteps; pass++) {
        changed = 0;
        for (int32_t t = 0; t < nt; t++) {
            const weft_dtb *tb = &rp->tbs[t];
            for (int32_t i = 0; i < tb->nsteps; i++) {
                const weft_dstep *d = &rp->steps[tb->first + i];
                int32_t v = i > 0 ? depth[tb->first + i - 1] : 0;
                if (d->depid >= 0 && d->depid != t && d->depid < nt) {
                    const weft_dtb *w = &rp->tbs[d->depid];
                    for (int32_t k = 0; k < w->nsteps; k++) {
                        const weft_dstep *e = &rp->steps[w->first + k];
                        if (e->post >= d->dep_target) {
                            int32_t dv = depth[w->first + k] + 1;
                            v = dv > v ? dv : v;
                            break;
                        }
                    }
                }
                if (v > depth[tb->first + i]) depth[tb->first + i] = v, changed = 1;
                best = v > best ? v : best;
            }
        }
    }
    free(depth);
    return best;
}

weft_result weft_plan_build(weft_algo_plan *p, const weft_layout *layout, int32_t fifo_slots) {
    weft_result res = WEFT_OK;
    const int32_t cap = fifo_slots > 0 ? fifo_slots : 1;
    for (int mi = 0; mi < 2; mi++) {
        weft_mode_plan *m = &p->mode[mi];
        if (m->sched == NULL) continue;
        /* LL128 steps run one connection each way (ll128_step): no folds, no runners */
        const int ll128 = p->proto == WEFT_RT_PROTO_LL128;
        for (int fuse = !ll128; fuse >= 0; fuse--) {
            m->ranks = calloc((size_t)p->nranks, sizeof *m->ranks);
            WEFT_CHECK_ALLOC(m->ranks);
            m->fused = 0;
            for (int32_t r = 0; r < p->nranks; r++)
                WEFT_CHECK(build_rank(p, m->sched, r, layout, &m->ranks[r]));
            /* the runners copy the steps as built, before fusing rewrites them */
            if (!ll128) WEFT_CHECK(collapse_mode(p, m, cap));
            if (fuse)
                for (int32_t r = 0; r < p->nranks; r++)
                    m->fused += fuse_rank(m->sched, r, &m->ranks[r]);
            if (!fuse || m->fused == 0 || plan_completes(m->sched, m, p, cap, cap + 2, 0)) break;
            free_ranks(m, p->nranks); /* fused, it could deadlock: as written instead */
        }
        /* One hand-off (receive on one tb, forward on another) costs the runner as much as it
         * saves (measured, docs/runtime.md): a gain from two. */
        m->collapse_gain = 0;
        for (int32_t r = 0; m->collapsed && r < p->nranks; r++) {
            int32_t g = rank_wait_depth(&m->ranks[r]) - 1;
            m->collapse_gain = g > m->collapse_gain ? g : m->collapse_gain;
        }
    }
fail:
    return res;
}

void weft_plan_free(weft_algo_plan *p) {
    for (int mi = 0; mi < 2; mi++) {
        weft_mode_plan *m = &p->mode[mi];
        free_ranks(m, p->nranks);
        weft_hop_free(m->hop);
        weft_algo_free(m->own);
    }
    memset(p, 0, sizeof *p);
}
