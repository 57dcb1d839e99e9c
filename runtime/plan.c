/* plan.c — from an IR algorithm to the interpreter's tables: eligibility, connection keys and
 * the window layout, fused reductions, dependency numbering, the geometry of a call. Pure host
 * code, so every rule here is tested without a GPU. */
#include "runtime_internal.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int why_set(char *why, size_t len, const char *fmt, ...) WEFT_PRINTF(3, 4);
static int why_set(char *why, size_t len, const char *fmt, ...) {
    if (why && len) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(why, len, fmt, ap);
        va_end(ap);
    }
    return 0;
}

int32_t weft_plan_proto(const weft_algo *a) {
    return a->proto == WEFT_PROTO_SIMPLE ? WEFT_RT_PROTO_SIMPLE : WEFT_RT_PROTO_LL;
}

static int32_t mod(int32_t a, int32_t n) {
    int32_t m = a % n;
    return m < 0 ? m + n : m;
}

static int32_t buf_capacity(const weft_algo *a, const weft_gpu *g, weft_buf b) {
    if (b == WEFT_BUF_SCRATCH) return g->s_chunks;
    return weft_coll_large(a->coll, b) ? a->nchunksperloop : weft_algo_chunks_per_seg(a);
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
        return why_set(why, len,
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
            return why_set(why, len,
                           "message %d from rank %d to rank %d on channel %d: rank %d tb %d step "
                           "%d sends %d chunks, rank %d tb %d step %d receives %d",
                           m, r, q, stb->chan, r, stb->id, i, stb->steps[i].cnt, q, rtb->id, j,
                           rtb->steps[j].cnt);
        i++, j++, m++;
    }
    if (i != stb->nsteps || j != rtb->nsteps)
        return why_set(why, len,
                       "rank %d tb %d and rank %d tb %d disagree on the number of messages on "
                       "channel %d",
                       r, stb->id, q, rtb->id, stb->chan);
    return 1;
}

int weft_plan_eligible(const weft_algo *a, int32_t nranks, char *why, size_t whylen) {
    if (!weft_coll_runnable(a->coll))
        return why_set(why, whylen, "%s is not run by weft", weft_coll_name(a->coll));
    if (a->ngpus != nranks)
        return why_set(why, whylen, "written for %d ranks, the communicator has %d", a->ngpus,
                       nranks);
    if (weft_ir_validate(a, NULL) != WEFT_OK)
        return why_set(why, whylen, "not structurally valid (run weft verify)");
    int32_t k = weft_algo_chunks_per_seg(a);
    if (k < 1) return why_set(why, whylen, "no chunks per segment");
    int reduces = weft_coll_reduces(a->coll);
    for (int32_t r = 0; r < nranks; r++) {
        const weft_gpu *g = &a->gpus[r];
        if (g->ntbs < 1) return why_set(why, whylen, "rank %d has no thread blocks", r);
        if (g->ntbs > WEFT_RT_MAX_TBS)
            return why_set(why, whylen,
                           "rank %d has %d thread blocks; the interpreter runs at "
                           "most %d",
                           r, g->ntbs, WEFT_RT_MAX_TBS);
        for (int32_t t = 0; t < g->ntbs; t++) {
            const weft_tb *tb = &g->tbs[t];
            for (int32_t s = 0; s < tb->nsteps; s++) {
                const weft_step *st = &tb->steps[s];
                unsigned f = weft_step_flags(st->type);
                if ((f & WEFT_STEP_F_REDUCE) && !reduces)
                    return why_set(why, whylen,
                                   "rank %d tb %d step %d reduces, but %s does not reduce", r, t, s,
                                   weft_coll_name(a->coll));
                /* Bounds again, against what the interpreter will address. */
                if ((f & WEFT_STEP_F_READS_SRC) &&
                    st->srcoff + st->cnt > buf_capacity(a, g, st->srcbuf))
                    return why_set(why, whylen, "rank %d tb %d step %d reads past its buffer", r, t,
                                   s);
                if ((f & WEFT_STEP_F_WRITE) &&
                    st->dstoff + st->cnt > buf_capacity(a, g, st->dstbuf))
                    return why_set(why, whylen, "rank %d tb %d step %d writes past its buffer", r,
                                   t, s);
            }
            if (tb->send >= 0 && !check_connection(a, r, tb, why, whylen)) return 0;
            if (tb->recv >= 0 && find_tb(&a->gpus[tb->recv], 1, r, tb->chan) == NULL)
                return why_set(why, whylen,
                               "rank %d tb %d receives from rank %d on channel %d, but no tb of "
                               "rank %d sends to rank %d on that channel",
                               r, t, tb->recv, tb->chan, tb->recv, r);
        }
    }
    return 1;
}

/* ---- layout ----------------------------------------------------------------------------- */
void weft_layout_init(weft_layout *l, int32_t nranks) {
    memset(l, 0, sizeof *l);
    l->nranks = nranks;
}

void weft_layout_free(weft_layout *l) {
    free(l->keys);
    free(l->tail_off);
    free(l->head_off);
    free(l->slot_off);
    memset(l, 0, sizeof *l);
}

static int key_cmp(const void *x, const void *y) {
    const weft_rt_key *a = x, *b = y;
    if (a->proto != b->proto) return a->proto < b->proto ? -1 : 1;
    if (a->d != b->d) return a->d < b->d ? -1 : 1;
    return a->chan < b->chan ? -1 : a->chan > b->chan;
}

int32_t weft_layout_find(const weft_layout *l, int32_t d, int32_t chan, int32_t proto) {
    weft_rt_key k = {d, chan, proto};
    const weft_rt_key *f = bsearch(&k, l->keys, (size_t)l->nkeys, sizeof k, key_cmp);
    return f ? (int32_t)(f - l->keys) : -1;
}

static weft_result layout_add_key(weft_layout *l, weft_rt_key k) {
    for (int32_t i = 0; i < l->nkeys; i++)
        if (key_cmp(&l->keys[i], &k) == 0) return WEFT_OK;
    weft_rt_key *n = realloc(l->keys, ((size_t)l->nkeys + 1) * sizeof *n);
    if (n == NULL) return WEFT_ERR_NOMEM;
    l->keys = n;
    l->keys[l->nkeys++] = k;
    return WEFT_OK;
}

weft_result weft_layout_add(weft_layout *l, const weft_algo *a) {
    weft_result res = WEFT_OK;
    int32_t p = weft_plan_proto(a), n = l->nranks;
    for (int32_t r = 0; r < a->ngpus && r < n; r++)
        for (int32_t t = 0; t < a->gpus[r].ntbs; t++) {
            const weft_tb *tb = &a->gpus[r].tbs[t];
            if (tb->send >= 0)
                WEFT_CHECK(layout_add_key(l, (weft_rt_key){mod(tb->send - r, n), tb->chan, p}));
            if (tb->recv >= 0)
                WEFT_CHECK(layout_add_key(l, (weft_rt_key){mod(r - tb->recv, n), tb->chan, p}));
        }
fail:
    return res;
}

static size_t round_up(size_t x, size_t a) {
    return (x + a - 1) / a * a;
}

weft_result weft_layout_finish(weft_layout *l, const weft_rt_cfg *cfg) {
    weft_result res = WEFT_OK;
    size_t n = (size_t)l->nkeys;
    if (n) qsort(l->keys, n, sizeof *l->keys, key_cmp);
    free(l->tail_off), free(l->head_off), free(l->slot_off);
    l->tail_off = calloc(n ? n : 1, sizeof(size_t));
    l->head_off = calloc(n ? n : 1, sizeof(size_t));
    l->slot_off = calloc(n ? n : 1, sizeof(size_t));
    WEFT_CHECK_ALLOC(l->tail_off);
    WEFT_CHECK_ALLOC(l->head_off);
    WEFT_CHECK_ALLOC(l->slot_off);
    size_t off = round_up(WEFT_RT_ARRIVAL_OFF(l->nalgos > 0 ? l->nalgos : 1), 4096);
    for (size_t i = 0; i < n; i++) {
        l->tail_off[i] = off, off += WEFT_RT_LINE;
        l->head_off[i] = off, off += WEFT_RT_LINE;
    }
    off = round_up(off, 4096);
    for (size_t i = 0; i < n; i++) {
        int32_t p = l->keys[i].proto;
        l->slot_off[i] = off;
        off = round_up(off + (size_t)cfg->nslots[p] * (size_t)cfg->slot_bytes[p], 4096);
    }
    l->bytes = off;
fail:
    return res;
}

void weft_layout_conns(const weft_layout *l, const weft_rt_cfg *cfg, int32_t rank, char *const *win,
                       uint64_t *pos, weft_dconn *sconn, weft_dconn *rconn) {
    int32_t n = l->nranks;
    for (int32_t i = 0; i < l->nkeys; i++) {
        const weft_rt_key *k = &l->keys[i];
        int32_t to = mod(rank + k->d, n), from = mod(rank - k->d, n);
        sconn[i] = (weft_dconn){win[to] + l->slot_off[i],
                                (uint64_t *)(void *)(win[to] + l->tail_off[i]),
                                (uint64_t *)(void *)(win[rank] + l->head_off[i]),
                                pos + i,
                                cfg->nslots[k->proto],
                                cfg->slot_bytes[k->proto],
                                to,
                                k->chan};
        rconn[i] = (weft_dconn){win[rank] + l->slot_off[i],
                                (uint64_t *)(void *)(win[rank] + l->tail_off[i]),
                                (uint64_t *)(void *)(win[from] + l->head_off[i]),
                                pos + l->nkeys + i,
                                cfg->nslots[k->proto],
                                cfg->slot_bytes[k->proto],
                                from,
                                k->chan};
    }
}

/* ---- per-rank tables -------------------------------------------------------------------- */
/* Whether chunk ranges [o1, o1+cnt) of b1 and [o2, o2+cnt) of b2 can be the same memory on
 * rank r in a buffer mode the algorithm declares (in-place aliases input and output). */
static int may_overlap(const weft_algo *a, int32_t r, weft_buf b1, int32_t o1, weft_buf b2,
                       int32_t o2, int32_t cnt) {
    if (b1 != b2) {
        if (b1 == WEFT_BUF_SCRATCH || b2 == WEFT_BUF_SCRATCH || !a->inplace) return 0;
        int l1 = weft_coll_large(a->coll, b1), l2 = weft_coll_large(a->coll, b2);
        int32_t k = weft_algo_chunks_per_seg(a);
        if (l1 && !l2) o2 += r * k;
        if (l2 && !l1) o1 += r * k;
    }
    return o1 < o2 + cnt && o2 < o1 + cnt;
}

static weft_result build_rank(const weft_algo *a, int32_t r, const weft_layout *l,
                              weft_rank_plan *rp) {
    weft_result res = WEFT_OK;
    const weft_gpu *g = &a->gpus[r];
    int32_t n = a->ngpus, proto = weft_plan_proto(a);
    int64_t total = 0;
    for (int32_t t = 0; t < g->ntbs; t++)
        total += g->tbs[t].nsteps;
    rp->ntbs = g->ntbs;
    rp->s_chunks = g->s_chunks;
    rp->tbs = calloc((size_t)g->ntbs, sizeof *rp->tbs);
    rp->steps = calloc(total ? (size_t)total : 1, sizeof *rp->steps);
    rp->xsrc = calloc(total ? (size_t)total : 1, sizeof *rp->xsrc);
    WEFT_CHECK_ALLOC(rp->tbs);
    WEFT_CHECK_ALLOC(rp->steps);
    WEFT_CHECK_ALLOC(rp->xsrc);
    for (int32_t t = 0; t < g->ntbs; t++) {
        const weft_tb *tb = &g->tbs[t];
        weft_dtb *dt = &rp->tbs[t];
        dt->first = rp->nsteps;
        dt->nsteps_orig = tb->nsteps;
        dt->speer = tb->send, dt->rpeer = tb->recv, dt->chan = tb->chan;
        dt->sconn = tb->send >= 0 ? weft_layout_find(l, mod(tb->send - r, n), tb->chan, proto) : -1;
        dt->rconn = tb->recv >= 0 ? weft_layout_find(l, mod(r - tb->recv, n), tb->chan, proto) : -1;
        if ((tb->send >= 0 && dt->sconn < 0) || (tb->recv >= 0 && dt->rconn < 0))
            WEFT_FAIL(WEFT_ERR_INTERNAL); /* the layout was built without this algorithm */
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
            d->depid = st->depid >= 0 ? st->depid : -1;
            d->dep_stride = st->depid >= 0 ? g->tbs[st->depid].nsteps : 0;
            d->dep_target = st->depid >= 0 ? st->deps + 1 : 0;
            d->post = tb->steps[s + nf - 1].hasdep ? s + nf : 0;
            d->orig = s;
            d->xsrc = rp->nxsrc;
            if (nf > 1)
                for (int32_t i = 0; i < nf; i++)
                    rp->xsrc[rp->nxsrc++] =
                        (weft_dsrc){tb->steps[s + i].srcbuf, tb->steps[s + i].srcoff};
            if (f & WEFT_STEP_F_READS_SRC) rp->uses_buf[st->srcbuf] = 1;
            if (f & WEFT_STEP_F_WRITE) rp->uses_buf[st->dstbuf] = 1;
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

void weft_plan_records(const weft_rank_plan *rp, const weft_dconn *sconn, const weft_dconn *rconn,
                       char *out) {
    int32_t rb = weft_plan_rec_bytes(rp);
    memset(out, 0, (size_t)rb * (size_t)rp->ntbs);
    for (int32_t t = 0; t < rp->ntbs; t++) {
        weft_drec *r = (weft_drec *)(void *)(out + (size_t)t * (size_t)rb);
        r->tb = rp->tbs[t];
        if (r->tb.sconn >= 0) r->sc = sconn[r->tb.sconn];
        if (r->tb.rconn >= 0) r->rc = rconn[r->tb.rconn];
        memcpy(r + 1, rp->steps + r->tb.first, (size_t)r->tb.nsteps * sizeof(weft_dstep));
    }
}

weft_result weft_plan_build(const weft_algo *a, int32_t nranks, const weft_layout *layout,
                            weft_algo_plan *out, char *why, size_t whylen) {
    weft_result res = WEFT_OK;
    memset(out, 0, sizeof *out);
    if (!weft_plan_eligible(a, nranks, why, whylen)) return WEFT_ERR_UNSUPPORTED;
    out->algo = a;
    out->proto = weft_plan_proto(a);
    out->k = weft_algo_chunks_per_seg(a);
    out->nranks = nranks;
    out->maxcnt = 1;
    for (int32_t r = 0; r < nranks; r++)
        for (int32_t t = 0; t < a->gpus[r].ntbs; t++)
            for (int32_t s = 0; s < a->gpus[r].tbs[t].nsteps; s++) {
                const weft_step *st = &a->gpus[r].tbs[t].steps[s];
                if ((weft_step_flags(st->type) & (WEFT_STEP_F_SEND | WEFT_STEP_F_RECV)) &&
                    st->cnt > out->maxcnt)
                    out->maxcnt = st->cnt;
            }
    out->ranks = calloc((size_t)nranks, sizeof *out->ranks);
    WEFT_CHECK_ALLOC(out->ranks);
    for (int32_t r = 0; r < nranks; r++)
        WEFT_CHECK(build_rank(a, r, layout, &out->ranks[r]));
    return WEFT_OK;
fail:
    why_set(why, whylen, "%s", weft_result_str(res));
    weft_plan_free(out);
    return res;
}

void weft_plan_free(weft_algo_plan *p) {
    if (p->ranks)
        for (int32_t r = 0; r < p->nranks; r++) {
            free(p->ranks[r].tbs);
            free(p->ranks[r].steps);
            free(p->ranks[r].xsrc);
        }
    free(p->ranks);
    memset(p, 0, sizeof *p);
}

/* ---- call geometry ---------------------------------------------------------------------- */
weft_result weft_call_geometry(const weft_algo_plan *p, const weft_rt_cfg *cfg, int32_t rank,
                               size_t count, int32_t dtype_bytes, int reduces, weft_call_geom *g) {
    memset(g, 0, sizeof *g);
    if (count == 0 || dtype_bytes <= 0 || p->k < 1) return WEFT_ERR_UNSUPPORTED;
    if (count > ((size_t)1 << 40)) return WEFT_ERR_UNSUPPORTED;
    int64_t C = weft_chunk_elems((int64_t)count, p->k); /* the count policy, in dtype elements */
    int32_t ke = reduces ? dtype_bytes : 1, scale = reduces ? 1 : dtype_bytes;
    int64_t V = 16 / ke;
    int64_t data =
        p->proto == WEFT_RT_PROTO_LL ? cfg->slot_bytes[p->proto] / 2 : cfg->slot_bytes[p->proto];
    int64_t emax = data / ((int64_t)p->maxcnt * ke);
    emax -= emax % V;
    if (emax < V) return WEFT_ERR_UNSUPPORTED; /* a message of maxcnt chunks cannot fit */
    g->kelem = ke;
    g->count = (int64_t)count * scale;
    g->C = C * scale;
    int64_t cv = (g->C + V - 1) / V * V;
    g->E = cv < emax ? cv : emax;
    int64_t cap = cfg->slice_bytes[p->proto] / ke;
    cap -= cap % V;
    if (cap >= V && g->E > cap) g->E = cap;
    int64_t niter = (g->C + g->E - 1) / g->E;
    int32_t maxsteps = 1;
    const weft_algo *a = p->algo;
    for (int32_t t = 0; t < a->gpus[rank].ntbs; t++)
        if (a->gpus[rank].tbs[t].nsteps > maxsteps) maxsteps = a->gpus[rank].tbs[t].nsteps;
    /* Progress values count iterations x steps in 32 bits (the epoch takes the upper half). */
    if (niter * (maxsteps + 1) >= ((int64_t)1 << 31)) return WEFT_ERR_UNSUPPORTED;
    g->niter = (int32_t)niter;
    g->scratch_bytes = (size_t)p->ranks[rank].s_chunks * (size_t)C * (size_t)dtype_bytes;
    return WEFT_OK;
}

/* ---- watchdog report -------------------------------------------------------------------- */
void weft_errrec_format(const weft_errrec *e, const weft_algo *a, char *buf, size_t len) {
    char where[512] = "";
    const char *file = a && a->file ? a->file : (a ? a->name : "?");
    int32_t line = 0;
    if (a && e->rank >= 0 && e->rank < a->ngpus && e->tb >= 0 && e->tb < a->gpus[e->rank].ntbs &&
        e->step >= 0 && e->step < a->gpus[e->rank].tbs[e->tb].nsteps)
        line = a->gpus[e->rank].tbs[e->tb].steps[e->step].line;
    if (line > 0)
        snprintf(where, sizeof where, "rank %d tb %d step %d (%s:%d)", e->rank, e->tb, e->step,
                 file, line);
    else
        snprintf(where, sizeof where, "rank %d tb %d step %d (%s)", e->rank, e->tb, e->step, file);
    double ms = (double)e->waited_ns / 1e6;
    switch ((weft_rt_wait)e->code) {
    case WEFT_RT_WAIT_DATA:
        snprintf(buf, len,
                 "%s: timed out after %.0f ms in iteration %lld waiting for data from rank %d on "
                 "channel %d (message %llu; the sender has posted %llu)",
                 where, ms, (long long)e->iter, e->peer, e->chan, (unsigned long long)e->want,
                 (unsigned long long)e->seen);
        break;
    case WEFT_RT_WAIT_CREDIT:
        snprintf(buf, len,
                 "%s: timed out after %.0f ms in iteration %lld waiting for FIFO credit from rank "
                 "%d on channel %d (needs %llu messages consumed; rank %d has consumed %llu)",
                 where, ms, (long long)e->iter, e->peer, e->chan, (unsigned long long)e->want,
                 e->peer, (unsigned long long)e->seen);
        break;
    case WEFT_RT_WAIT_DEP:
        snprintf(buf, len,
                 "%s: timed out after %.0f ms in iteration %lld waiting for tb %d step %d "
                 "(which has not finished it)",
                 where, ms, (long long)e->iter, e->depid, e->deps);
        break;
    case WEFT_RT_WAIT_ABORTED:
        snprintf(buf, len, "%s: stopped because rank %d gave up (see that rank's report)", where,
                 e->peer);
        break;
    default: snprintf(buf, len, "%s: unknown watchdog record %u", where, e->code); break;
    }
}

/* ---- configuration ---------------------------------------------------------------------- */
weft_result weft_rt_cfg_parse(weft_rt_cfg *cfg, const char *spec, char *why, size_t whylen) {
    weft_rt_cfg c = *cfg;
    const char *s = spec;
    while (*s) {
        int p = -1;
        size_t nl = strcspn(s, "=");
        if (nl == 6 && strncmp(s, "Simple", 6) == 0)
            p = WEFT_RT_PROTO_SIMPLE;
        else if (nl == 2 && strncmp(s, "LL", 2) == 0)
            p = WEFT_RT_PROTO_LL;
        if (p < 0 || s[nl] != '=') {
            why_set(why, whylen, "expected Simple=NxBYTES or LL=NxBYTES at '%s'", s);
            return WEFT_ERR_INPUT;
        }
        char *end;
        long n = strtol(s + nl + 1, &end, 10);
        if (*end != 'x') {
            why_set(why, whylen, "expected NxBYTES after %.*s=", (int)nl, s);
            return WEFT_ERR_INPUT;
        }
        long long b = strtoll(end + 1, &end, 10), sl = 0;
        if (*end == 'K' || *end == 'k')
            b <<= 10, end++;
        else if (*end == 'M' || *end == 'm')
            b <<= 20, end++;
        if (*end == '/') {
            sl = strtoll(end + 1, &end, 10);
            if (*end == 'K' || *end == 'k')
                sl <<= 10, end++;
            else if (*end == 'M' || *end == 'm')
                sl <<= 20, end++;
            if (sl < 16 || sl % 16) {
                why_set(why, whylen, "%.*s: the slice must be a multiple of 16 bytes",
                        (int)strcspn(s, ","), s);
                return WEFT_ERR_INPUT;
            }
        }
        if (n < 1 || n > 1024 || b < 256 || b > (64 << 20) || b % 256) {
            why_set(why, whylen,
                    "%.*s: slots must be 1..1024 and slot bytes a multiple of 256 up to 64M",
                    (int)strcspn(s, ","), s);
            return WEFT_ERR_INPUT;
        }
        c.nslots[p] = (int32_t)n;
        c.slot_bytes[p] = (int32_t)b;
        c.slice_bytes[p] = (int32_t)sl;
        if (*end == ',')
            end++;
        else if (*end != '\0') {
            why_set(why, whylen, "unexpected '%s'", end);
            return WEFT_ERR_INPUT;
        }
        s = end;
    }
    *cfg = c;
    return WEFT_OK;
}

void weft_rt_cfg_default(weft_rt_cfg *cfg) {
    memset(cfg, 0, sizeof *cfg);
    cfg->nslots[WEFT_RT_PROTO_SIMPLE] = 8;
    cfg->slot_bytes[WEFT_RT_PROTO_SIMPLE] = 128 << 10;
    cfg->nslots[WEFT_RT_PROTO_LL] = 8;
    cfg->slot_bytes[WEFT_RT_PROTO_LL] = 32 << 10;
    cfg->nthreads = WEFT_RT_NTHREADS;
    long long ms = weft_env_int(WEFT_ENV_TIMEOUT_MS, WEFT_RT_DEFAULT_TIMEOUT_MS);
    cfg->timeout_ns = ms > 0 ? ms * 1000000 : 0;
    const char *f = weft_env_get(WEFT_ENV_FIFO);
    char why[256];
    if (*f && weft_rt_cfg_parse(cfg, f, why, sizeof why) != WEFT_OK)
        WEFT_WARN("WEFT_FIFO=%s ignored: %s", f, why);
}
