/* hop.c — the one-hop form of a schedule (runtime_internal.h, "the one-hop path"): a symbolic run
 * of every rank's steps finds the fold of call-start chunks each written chunk ends up holding and
 * the pushes that bring every rank the chunks of its peers those folds take; plus when a call
 * runs on it and its launch arguments. Pure host code, tested without a GPU. */
#include "runtime_internal.h"

#include <stdlib.h>
#include <string.h>

/* operands of one fold (the symbolic run's limit; the kernel takes what the table holds) */
#define HOP_MAX_LEAVES 32

/* A chunk as it was when the call began: rank's memory mem, chunk x. */
/* ord (in a fold, not the first operand): 0 combines as op(value, it), 1 as op(it, value), as
 * the step that took it did, so that even an op whose two arguments are not interchangeable
 * bit for bit (max of -0 and +0, NaN payloads) gives the schedule's bits. */
typedef struct leaf {
    int32_t rank, mem, x, ord;
} leaf;

/* What a chunk holds: the fold of n leaves in their order (n == 1: one chunk's value); ok == 0:
 * nothing defined (scratch before the schedule writes it). wtb, wstep: the step that wrote it. */
typedef struct expr {
    int32_t n, ok, wtb, wstep;
    int32_t unread; /* scratch: written, and not read since */
    leaf l[HOP_MAX_LEAVES];
} expr;

typedef struct hop_sim {
    const weft_algo *a;
    int inplace;
    int32_t n, k, nm[3]; /* ranks, chunks per segment, chunks per memory */
    expr *st;            /* [rank][mem][x], nm[mem] each */
    size_t rank_stride;
    /* per (rank, tb): steps done, and the leaves it has sent (each message cnt of them) */
    int32_t **done;
    leaf ***q;
    int32_t **qlen, **qcap, **qread;
    char *why;
    size_t whylen;
} hop_sim;

static expr *cell(hop_sim *s, int32_t r, int32_t mem, int32_t x) {
    size_t o = (size_t)r * s->rank_stride;
    for (int32_t m = 0; m < mem; m++)
        o += (size_t)s->nm[m];
    return &s->st[o + (size_t)x];
}

/* Memory and chunk of buffer b, chunk o of rank r in the call mode (NULL: out of range). */
static expr *at(hop_sim *s, int32_t r, int32_t b, int32_t o, int32_t *mem, int32_t *x) {
    int32_t seg = 0;
    *mem = weft_buf_mem(s->a->coll, s->inplace, r, (weft_buf)b, &seg);
    *x = seg * s->k + o;
    if (o < 0 || *x < 0 || *x >= s->nm[*mem]) return NULL;
    return cell(s, r, *mem, *x);
}

static const weft_tb *sender_of(const weft_algo *a, int32_t r, const weft_tb *rtb, int32_t *qt) {
    const weft_gpu *g = &a->gpus[rtb->recv];
    for (int32_t t = 0; t < g->ntbs; t++)
        if (g->tbs[t].send == r && g->tbs[t].chan == rtb->chan) {
            *qt = t;
            return &g->tbs[t];
        }
    return NULL;
}

/* value := op(incoming, operand) as one fold: the fold so far, then the one chunk, combined as
 * op(value, chunk) when the fold came in, op(chunk, value) when it is the operand; 0 with the
 * reason where that is not one fold. */
static int combine(hop_sim *s, const expr *in, const expr *op, expr *out) {
    if (!in->ok || !op->ok)
        return weft_rt_why(s->why, s->whylen, "a step reduces a chunk nothing wrote yet");
    if (in->n > 1 && op->n > 1)
        return weft_rt_why(s->why, s->whylen,
                           "a step combines two partial results (not one fold of chunks)");
    if (in->n + op->n > HOP_MAX_LEAVES)
        return weft_rt_why(s->why, s->whylen, "a fold of more than %d chunks", HOP_MAX_LEAVES);
    const int chunk_in = in->n == 1 && op->n > 1; /* op(chunk, fold) */
    const expr *f = chunk_in ? op : in, *g = chunk_in ? in : op;
    *out = *f;
    out->l[f->n] = g->l[0];
    out->l[f->n].ord = chunk_in;
    out->n = f->n + 1;
    return 1;
}

/* What a step computes, stated once (weft_step_eval), over expressions: registers 0..cnt. */
typedef struct hop_eval {
    hop_sim *s;
    int32_t r, t, si, qr, qt;
    expr *reg;
} hop_eval;

static int ev_take(void *self, int32_t i) {
    hop_eval *e = self;
    hop_sim *s = e->s;
    expr *x = &e->reg[i];
    x->n = 1, x->ok = 1;
    x->l[0] = s->q[e->qr][e->qt][s->qread[e->qr][e->qt] + i];
    return 0;
}
static int ev_load(void *self, int32_t i, weft_buf b, int32_t o) {
    hop_eval *e = self;
    int32_t mem, x;
    expr *c = at(e->s, e->r, b, o, &mem, &x);
    if (!c) return weft_rt_why(e->s->why, e->s->whylen, "a chunk out of range"), -1;
    c->unread = 0;
    e->reg[i] = *c;
    return 0;
}
static int ev_reduce(void *self, int32_t i, int32_t j) {
    hop_eval *e = self;
    expr v;
    if (!combine(e->s, &e->reg[i], &e->reg[j], &v)) return -1;
    e->reg[i] = v;
    return 0;
}
static int ev_store(void *self, int32_t i, weft_buf b, int32_t o) {
    hop_eval *e = self;
    int32_t mem, x;
    expr *c = at(e->s, e->r, b, o, &mem, &x);
    if (!c) return weft_rt_why(e->s->why, e->s->whylen, "a chunk out of range"), -1;
    *c = e->reg[i];
    c->wtb = e->t, c->wstep = e->si;
    c->unread = mem == WEFT_MEM_SCRATCH;
    return 0;
}
/* A message must be chunks of the sender's own memory as the call found them. */
static int ev_send(void *self, int32_t cnt) {
    hop_eval *e = self;
    hop_sim *s = e->s;
    int32_t r = e->r, t = e->t;
    for (int32_t i = 0; i < cnt; i++) {
        const expr *v = &e->reg[i];
        if (!v->ok || v->n != 1 || v->l[0].rank != r)
            return weft_rt_why(s->why, s->whylen, "%s",
                               !v->ok      ? "a message carries a chunk nothing wrote"
                               : v->n != 1 ? "a message carries a partial reduction"
                                           : "a rank forwards data it received"),
                   -1;
    }
    if (s->qlen[r][t] + cnt > s->qcap[r][t]) {
        int32_t c = (s->qlen[r][t] + cnt) * 2;
        leaf *nq = realloc(s->q[r][t], (size_t)c * sizeof *nq);
        if (!nq) return weft_rt_why(s->why, s->whylen, "out of memory"), -1;
        s->q[r][t] = nq, s->qcap[r][t] = c;
    }
    for (int32_t i = 0; i < cnt; i++)
        s->q[r][t][s->qlen[r][t]++] = e->reg[i].l[0];
    return 0;
}

/* Runs step si of tb t on rank r if it can now: 1 ran, 0 not yet, -1 refused (why). */
static int try_step(hop_sim *s, int32_t r, int32_t t, int32_t si) {
    static const weft_step_algebra alg = {ev_take, ev_load, ev_reduce, ev_store, ev_send};
    const weft_tb *tb = &s->a->gpus[r].tbs[t];
    const weft_step *st = &tb->steps[si];
    if (st->depid >= 0 && (st->depid >= s->a->gpus[r].ntbs || s->done[r][st->depid] <= st->deps))
        return 0;
    hop_eval e = {s, r, t, si, -1, -1, NULL};
    if (weft_step_flags(st->type) & WEFT_STEP_F_RECV) {
        if (tb->recv < 0 || tb->recv >= s->n || !sender_of(s->a, r, tb, &e.qt))
            return weft_rt_why(s->why, s->whylen, "a receive without its sender"), -1;
        e.qr = tb->recv;
        if (s->qlen[e.qr][e.qt] - s->qread[e.qr][e.qt] < st->cnt) return 0;
    }
    e.reg = calloc((size_t)(st->cnt > 0 ? st->cnt : 0) + 1, sizeof *e.reg);
    if (!e.reg) return weft_rt_why(s->why, s->whylen, "out of memory"), -1;
    int rc =
        weft_step_eval(&alg, &e, st->type, st->srcbuf, st->srcoff, st->dstbuf, st->dstoff, st->cnt);
    if (rc == 0 && e.qr >= 0) s->qread[e.qr][e.qt] += st->cnt;
    free(e.reg);
    return rc == 0 ? 1 : -1;
}

static void sim_free(hop_sim *s) {
    for (int32_t r = 0; r < s->n; r++) {
        int32_t nt = s->a->gpus[r].ntbs;
        for (int32_t t = 0; s->q && s->q[r] && t < nt; t++)
            free(s->q[r][t]);
        if (s->q) free(s->q[r]);
        if (s->done) free(s->done[r]);
        if (s->qlen) free(s->qlen[r]);
        if (s->qcap) free(s->qcap[r]);
        if (s->qread) free(s->qread[r]);
    }
    free(s->q), free(s->done), free(s->qlen), free(s->qcap), free(s->qread);
    free(s->st);
}

/* The symbolic run; 0 with the reason when the schedule has no one-hop form. */
static int sim_run(hop_sim *s) {
    const weft_algo *a = s->a;
    int32_t n = s->n;
    s->nm[WEFT_MEM_SEND] = s->nm[WEFT_MEM_RECV] = n * s->k;
    s->nm[WEFT_MEM_SCRATCH] = 0;
    for (int32_t r = 0; r < n; r++)
        if (a->gpus[r].s_chunks > s->nm[WEFT_MEM_SCRATCH])
            s->nm[WEFT_MEM_SCRATCH] = a->gpus[r].s_chunks;
    s->rank_stride = (size_t)s->nm[0] + (size_t)s->nm[1] + (size_t)s->nm[2];
    s->st = calloc((size_t)n * s->rank_stride + 1, sizeof *s->st);
    s->done = calloc((size_t)n, sizeof *s->done);
    s->q = calloc((size_t)n, sizeof *s->q);
    s->qlen = calloc((size_t)n, sizeof *s->qlen);
    s->qcap = calloc((size_t)n, sizeof *s->qcap);
    s->qread = calloc((size_t)n, sizeof *s->qread);
    if (!s->st || !s->done || !s->q || !s->qlen || !s->qcap || !s->qread)
        return weft_rt_why(s->why, s->whylen, "out of memory");
    for (int32_t r = 0; r < n; r++) {
        size_t nt = (size_t)(a->gpus[r].ntbs > 0 ? a->gpus[r].ntbs : 1);
        s->done[r] = calloc(nt, sizeof(int32_t));
        s->q[r] = calloc(nt, sizeof(leaf *));
        s->qlen[r] = calloc(nt, sizeof(int32_t));
        s->qcap[r] = calloc(nt, sizeof(int32_t));
        s->qread[r] = calloc(nt, sizeof(int32_t));
        if (!s->done[r] || !s->q[r] || !s->qlen[r] || !s->qcap[r] || !s->qread[r])
            return weft_rt_why(s->why, s->whylen, "out of memory");
        for (int32_t mem = 0; mem < 2; mem++)
            for (int32_t x = 0; x < s->nm[mem]; x++) {
                expr *e = cell(s, r, mem, x);
                e->n = 1, e->ok = 1, e->wtb = e->wstep = -1;
                e->l[0] = (leaf){r, mem, x, 0};
            }
    }
    for (int progress = 1; progress;) {
        progress = 0;
        for (int32_t r = 0; r < n; r++)
            for (int32_t t = 0; t < a->gpus[r].ntbs; t++)
                while (s->done[r][t] < a->gpus[r].tbs[t].nsteps) {
                    int v = try_step(s, r, t, s->done[r][t]);
                    if (v < 0) return 0;
                    if (v == 0) break;
                    s->done[r][t]++;
                    progress = 1;
                }
    }
    for (int32_t r = 0; r < n; r++)
        for (int32_t t = 0; t < a->gpus[r].ntbs; t++)
            if (s->done[r][t] < a->gpus[r].tbs[t].nsteps)
                return weft_rt_why(s->why, s->whylen,
                                   "the symbolic run stops at rank %d tb %d step %d", r, t,
                                   s->done[r][t]);
    return 1;
}

typedef struct rank_tab {
    int32_t nsend, nfold, nop;
    weft_hop_send *send;
    weft_hop_fold *fold;
    weft_hop_op *op;
} rank_tab;

/* Slot of chunk (mem, x) among what r takes from q (appended when new); -1: out of memory. */
static int32_t slot_of(leaf **lists, int32_t *len, int32_t n, int32_t r, int32_t q, int32_t mem,
                       int32_t x) {
    leaf *l = lists[(size_t)r * n + q];
    int32_t m = len[(size_t)r * n + q];
    for (int32_t i = 0; i < m; i++)
        if (l[i].mem == mem && l[i].x == x) return i;
    leaf *nl = realloc(l, ((size_t)m + 1) * sizeof *nl);
    if (!nl) return -1;
    nl[m] = (leaf){q, mem, x, 0};
    lists[(size_t)r * n + q] = nl;
    len[(size_t)r * n + q] = m + 1;
    return m;
}

weft_hop_plan *weft_hop_build(const weft_algo *sched, int inplace, int32_t nranks, int32_t k,
                              char *why, size_t whylen) {
    hop_sim s;
    memset(&s, 0, sizeof s);
    s.a = sched, s.inplace = inplace, s.n = nranks, s.k = k, s.why = why, s.whylen = whylen;
    weft_hop_plan *h = NULL;
    rank_tab *rt = NULL;
    leaf **lists = NULL;
    int32_t *len = NULL;
    int ok = 1;
    if (why && whylen) why[0] = 0;
    if (nranks < 2 || nranks > WEFT_RT_HOP_MAX_RANKS || sched->ngpus != nranks || k < 1) {
        weft_rt_why(why, whylen, "%d ranks (the one-hop path takes 2 to %d)", nranks,
                    WEFT_RT_HOP_MAX_RANKS);
        return NULL;
    }
    if (!sim_run(&s)) goto out;
    rt = calloc((size_t)nranks, sizeof *rt);
    lists = calloc((size_t)nranks * (size_t)nranks, sizeof *lists);
    len = calloc((size_t)nranks * (size_t)nranks, sizeof *len);
    h = calloc(1, sizeof *h);
    if (!rt || !lists || !len || !h) goto nomem;
    h->nranks = nranks;
    h->tab = calloc((size_t)nranks, sizeof *h->tab);
    if (!h->tab) goto nomem;
    /* folds: every chunk of user memory a rank ends up holding something else than it began
     * with */
    for (int32_t r = 0; r < nranks && ok; r++) {
        rank_tab *t = &rt[r];
        for (int32_t mem = 0; mem < 2 && ok; mem++)
            for (int32_t x = 0; x < s.nm[mem] && ok; x++) {
                const expr *e = cell(&s, r, mem, x);
                if (!e->ok) {
                    ok = weft_rt_why(why, whylen, "rank %d's chunk is left undefined", r);
                    break;
                }
                if (e->n == 1 && e->l[0].rank == r && e->l[0].mem == mem && e->l[0].x == x)
                    continue;
                for (int32_t i = 0; i < e->n && ok; i++)
                    if (e->l[i].x % k != x % k || e->l[i].mem > WEFT_MEM_RECV)
                        ok = weft_rt_why(why, whylen,
                                         "rank %d's chunk %d takes a chunk of another position", r,
                                         x);
                if (!ok) break;
                weft_hop_fold *nf = realloc(t->fold, ((size_t)t->nfold + 1) * sizeof *nf);
                weft_hop_op *no = realloc(t->op, ((size_t)t->nop + (size_t)e->n) * sizeof *no);
                if (nf) t->fold = nf;
                if (no) t->op = no;
                if (!nf || !no) goto nomem;
                weft_hop_fold *fo = &t->fold[t->nfold++];
                memset(fo, 0, sizeof *fo);
                fo->mem = (uint8_t)mem, fo->x = x, fo->nops = (uint8_t)e->n;
                fo->op0 = (uint16_t)t->nop, fo->otb = e->wtb, fo->ostep = e->wstep;
                for (int32_t i = 0; i < e->n; i++) {
                    weft_hop_op *o = &t->op[t->nop++];
                    memset(o, 0, sizeof *o);
                    const leaf *lf = &e->l[i];
                    o->mem = (uint8_t)lf->mem;
                    o->ord = (uint8_t)lf->ord;
                    if (lf->rank == r) {
                        o->peer = -1, o->x = lf->x;
                    } else {
                        o->peer = (int16_t)lf->rank;
                        o->x = slot_of(lists, len, nranks, r, lf->rank, lf->mem, lf->x);
                        if (o->x < 0) goto nomem;
                    }
                }
            }
    }
    /* a schedule that leaves something in scratch that it never reads (a GPU phase's staging
     * across nodes is its output there) keeps the interpreter: the one-hop kernel writes user
     * buffers only; scratch read within the call is only a way station */
    for (int32_t r = 0; r < nranks && ok; r++)
        for (int32_t x = 0; x < s.nm[WEFT_MEM_SCRATCH] && ok; x++)
            if (cell(&s, r, WEFT_MEM_SCRATCH, x)->unread)
                ok = weft_rt_why(why, whylen, "rank %d leaves data in scratch it never reads", r);
    /* in place, a fold must not read a chunk another fold writes (they run side by side) */
    for (int32_t r = 0; r < nranks && ok; r++) {
        const rank_tab *t = &rt[r];
        for (int32_t g = 0; g < t->nfold && ok; g++)
            for (int32_t i = 0; i < t->fold[g].nops && ok; i++) {
                const weft_hop_op *o = &t->op[t->fold[g].op0 + i];
                if (o->peer >= 0) continue;
                for (int32_t f = 0; f < t->nfold && ok; f++)
                    if (f != g && t->fold[f].mem == o->mem && t->fold[f].x == o->x)
                        ok = weft_rt_why(why, whylen,
                                         "rank %d reads a chunk it overwrites in the same call", r);
            }
    }
    /* pushes, and the pairs' symmetry that lets two areas do without credits */
    for (int32_t r = 0; r < nranks && ok; r++)
        for (int32_t q = 0; q < nranks && ok; q++) {
            int32_t m = len[(size_t)r * nranks + q];
            if (q == r) continue;
            if ((m > 0) != (len[(size_t)q * nranks + r] > 0)) {
                ok = weft_rt_why(why, whylen,
                                 "rank %d takes data from rank %d but not the other way round",
                                 m > 0 ? r : q, m > 0 ? q : r);
                break;
            }
            if (m > h->maxslots) h->maxslots = m;
            rank_tab *t = &rt[q];
            weft_hop_send *ns = realloc(t->send, ((size_t)t->nsend + (size_t)m + 1) * sizeof *ns);
            if (!ns) goto nomem;
            t->send = ns;
            for (int32_t i = 0; i < m; i++) {
                const leaf *lf = &lists[(size_t)r * nranks + q][i];
                weft_hop_send *e = &t->send[t->nsend++];
                memset(e, 0, sizeof *e);
                e->peer = (int16_t)r, e->mem = (uint8_t)lf->mem, e->x = lf->x, e->slot = i;
            }
        }
    for (int32_t r = 0; r < nranks && ok; r++) {
        rank_tab *t = &rt[r];
        size_t bytes = sizeof(weft_hop_hdr) + (size_t)t->nsend * sizeof(weft_hop_send) +
                       (size_t)t->nfold * sizeof(weft_hop_fold) +
                       (size_t)t->nop * sizeof(weft_hop_op);
        if (bytes > WEFT_RT_HOP_SMEM || t->nop > 65535) {
            ok = weft_rt_why(why, whylen,
                             "rank %d's one-hop table takes %zu bytes (the kernel holds %d)", r,
                             bytes, WEFT_RT_HOP_SMEM);
            break;
        }
        char *b = calloc(1, bytes);
        if (!b) goto nomem;
        h->tab[r] = b;
        weft_hop_hdr hd;
        memset(&hd, 0, sizeof hd);
        hd.nsend = t->nsend, hd.nfold = t->nfold, hd.nop = t->nop, hd.bytes = (int32_t)bytes;
        for (int32_t i = 0; i < t->nsend; i++)
            hd.peers |= 1u << t->send[i].peer;
        memcpy(b, &hd, sizeof hd);
        size_t o = sizeof hd;
        memcpy(b + o, t->send, (size_t)t->nsend * sizeof *t->send);
        o += (size_t)t->nsend * sizeof *t->send;
        memcpy(b + o, t->fold, (size_t)t->nfold * sizeof *t->fold);
        o += (size_t)t->nfold * sizeof *t->fold;
        memcpy(b + o, t->op, (size_t)t->nop * sizeof *t->op);
        if (t->nsend > h->maxwork) h->maxwork = t->nsend;
        if (t->nfold > h->maxwork) h->maxwork = t->nfold;
    }
    goto out;
nomem:
    ok = weft_rt_why(why, whylen, "out of memory");
out:
    if (rt)
        for (int32_t r = 0; r < nranks; r++)
            free(rt[r].send), free(rt[r].fold), free(rt[r].op);
    if (lists)
        for (size_t i = 0; i < (size_t)nranks * (size_t)nranks; i++)
            free(lists[i]);
    free(lists), free(len), free(rt);
    sim_free(&s);
    if (h && (!ok || h->tab == NULL)) {
        weft_hop_free(h);
        h = NULL;
    }
    return h;
}

void weft_hop_free(weft_hop_plan *h) {
    if (!h) return;
    for (int32_t r = 0; h->tab && r < h->nranks; r++)
        free(h->tab[r]);
    free(h->tab);
    free(h);
}

int weft_hop_call(const weft_mode_plan *m, const weft_algo_plan *p, const weft_rt_cfg *cfg,
                  size_t count, int32_t dtype_bytes, int reduces, int traced, int32_t *nb,
                  int32_t *S, int32_t *nthreads) {
    if (cfg->hop == 0 || traced || m == NULL || m->hop == NULL || p->proto != WEFT_RT_PROTO_LL ||
        count == 0 || dtype_bytes <= 0 || count > ((size_t)1 << 40))
        return 0;
    /* auto: on 2 ranks the interpreter's send and receive CTAs of each channel measured faster
     * (one H200, loopback: 3.18 against 3.38 us at 8 B in graphs; docs/runtime-perf.md) */
    if (cfg->hop < 0 && p->nranks < 3) return 0;
    int64_t ke = reduces ? dtype_bytes : 1, scale = reduces ? 1 : dtype_bytes;
    int64_t cb = weft_chunk_elems((int64_t)count, p->k) * scale * ke; /* bytes of a chunk */
    int64_t slots = m->hop->maxslots > 0 ? m->hop->maxslots : 1, work = m->hop->maxwork;
    int64_t lines_max = (int64_t)(WEFT_RT_HOP_REGION / 16) / slots;
    int64_t most = cfg->max_ctas > 0 && cfg->max_ctas < WEFT_RT_HOP_MAX_CTAS ? cfg->max_ctas
                                                                             : WEFT_RT_HOP_MAX_CTAS;
    int64_t tmax = cfg->nthreads >= 32 ? cfg->nthreads : WEFT_RT_NTHREADS;
    /* CTAs: a line of every push (or fold) for each thread of a full CTA, or fewer */
    int64_t b = (work * ((cb + 7) / 8) + tmax - 1) / tmax;
    b = b < 1 ? 1 : b > most ? most : b;
    for (;; b++) {
        if (b > most) return 0;
        int64_t s = (cb + b - 1) / b;
        s = (s + 7) / 8 * 8;
        if (s / 8 <= lines_max) {
            int64_t t = work * (s / 8);
            t = (t + 31) / 32 * 32;
            t = t < 32 ? 32 : t > tmax ? tmax : t;
            *nb = (int32_t)b, *S = (int32_t)s, *nthreads = (int32_t)t;
            return 1;
        }
    }
}

void weft_hop_args(const weft_algo_plan *p, int32_t ai, const weft_layout *l,
                   const weft_rt_cfg *cfg, size_t count, int32_t dtype_bytes, int reduces,
                   int32_t nb, int32_t S, weft_hop_kargs *ka) {
    memset(ka, 0, sizeof *ka);
    int64_t scale = reduces ? 1 : dtype_bytes;
    ka->count = (int64_t)count * scale;
    ka->C = weft_chunk_elems((int64_t)count, p->k) * scale;
    ka->timeout_ns = cfg->timeout_ns;
    ka->hop_off = l->hop_off;
    ka->k = p->k;
    ka->kelem = reduces ? dtype_bytes : 1;
    ka->nranks = p->nranks;
    ka->nb = nb, ka->S = S;
    ka->tag = ai;
}

void weft_hop_start(const weft_layout *l, const weft_rt_cfg *cfg,
                    void (*put)(void *ctx, size_t off, uint64_t v), void *ctx) {
    if (!l->hop_off || !cfg->start_calls) return;
    for (int32_t b = 0; b < WEFT_RT_HOP_MAX_CTAS; b++) {
        put(ctx, l->hop_off + (size_t)b * 64, cfg->start_calls);
        for (int32_t q = 0; q < l->nranks; q++)
            put(ctx, l->hop_off + weft_hop_ctr_off() + ((size_t)b * l->nranks + q) * 8,
                cfg->start_calls);
    }
}
