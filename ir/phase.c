/* phase.c — cutting a schedule at the messages between nodes into GPU phases (node-local
 * schedules) and network phases (transfers between staging areas), joining the phases back
 * into one schedule, and proving a cut with the verifier. */
#include "stepgraph_internal.h"

#include <stdlib.h>
#include <string.h>

void weft_phased_free(weft_phased *p) {
    if (p == NULL) return;
    for (int32_t i = 0; i < p->nphases; i++) {
        if (p->gpu) weft_algo_free(p->gpu[i]);
        if (p->lane) free(p->lane[i]);
        if (p->xfers && i + 1 < p->nphases) free(p->xfers[i]);
    }
    free(p->gpu);
    free(p->lane);
    free(p->xfers);
    free(p->nxfers);
    free(p->node);
    free(p->stage_base);
    free(p->step_phase);
    free(p);
}

int32_t weft_phased_lane(const weft_phased *p, int32_t phase, int32_t r, int32_t t) {
    if (p == NULL || phase < 0 || phase >= p->nphases || r < 0 || r >= p->nranks) return -1;
    const weft_algo *g = p->gpu[phase];
    if (t < 0 || t >= g->gpus[r].ntbs) return -1;
    int32_t at = 0;
    for (int32_t q = 0; q < r; q++)
        at += g->gpus[q].ntbs;
    return p->lane[phase][at + t];
}

/* ---- the cut ------------------------------------------------------------------------------ */

/* A staged message: its send and receive steps, and the network phase that carries it. */
typedef struct staged_msg {
    int32_t phase, src, dst, send, recv, cnt;
} staged_msg;

typedef struct cut {
    const weft_algo *a;
    const weft_sg *g;
    weft_phased *p;
    int32_t *ph;      /* per step */
    uint8_t *rstaged; /* per step: it receives a staged message */
    uint8_t *sstaged; /* per step: it sends a staged message */
    weft_diag *d;
    int32_t *in_off;       /* per receive step (staged): its chunks in the receiver's staging */
    int32_t *out_off;      /* per send step (staged): its chunks in the sender's staging */
    int32_t *first, *last; /* per step: its first and last step in its GPU phase's tb */
    int32_t *ptb;          /* per global tb: its tb in the phase being built, or -1 */
} cut;

static int cmp_staged(const void *x, const void *y) {
    const staged_msg *a = x, *b = y;
    return weft_cmp_keys((int64_t[]){a->phase, a->src, a->dst, a->send},
                         (int64_t[]){b->phase, b->src, b->dst, b->send}, 4);
}

/* Phases in a topological order of the happens-before graph: the smallest numbers with every
 * edge non-decreasing and every edge between nodes increasing. */
static void number_steps(cut *c, const int32_t *order) {
    const weft_sg *g = c->g;
    const int32_t *node = c->p->node;
    for (int32_t i = 0; i < g->nsteps; i++) {
        int32_t s = order[i];
        const weft_sg_step *st = &g->steps[s];
        int32_t v = 0;
        if (st->idx > 0 && c->ph[s - 1] > v) v = c->ph[s - 1];
        if (st->dep >= 0 && c->ph[st->dep] > v) v = c->ph[st->dep];
        if (st->match >= 0) {
            const weft_sg_step *ms = &g->steps[st->match];
            int32_t w = c->ph[st->match] + (node[ms->rank] != node[st->rank]);
            if (w > v) v = w;
        }
        c->ph[s] = v;
    }
}

/* Staged messages, grouped per network phase and rank pair, and their staging offsets: on each
 * rank, per network phase, first the outgoing groups by destination, then the incoming ones by
 * source, so that each transfer is one contiguous range at both ends. */
static weft_result lay_out_staging(cut *c) {
    weft_result res = WEFT_OK;
    const weft_sg *g = c->g;
    weft_phased *p = c->p;
    staged_msg *m = NULL;
    size_t n = 0, cap = 0;
    int32_t *cursor = NULL;
    for (int32_t s = 0; s < g->nsteps; s++) {
        const weft_sg_step *st = &g->steps[s];
        if (st->match < 0 || c->ph[s] == c->ph[st->match]) continue;
        int32_t snd = st->match;
        c->rstaged[s] = c->sstaged[snd] = 1;
        if (weft_grow((void **)&m, &cap, n, sizeof *m) != 0) WEFT_FAIL(WEFT_ERR_NOMEM);
        m[n++] = (staged_msg){c->ph[snd], g->steps[snd].rank, st->rank, snd, s, st->ir->cnt};
        p->staged++;
        if (p->node[g->steps[snd].rank] == p->node[st->rank]) p->staged_local++;
    }
    if (n > 1) qsort(m, n, sizeof *m, cmp_staged);
    cursor = malloc((size_t)g->nranks * sizeof *cursor);
    WEFT_CHECK_ALLOC(cursor);
    for (int32_t r = 0; r < g->nranks; r++)
        cursor[r] = p->stage_base[r];
    int32_t nnet = p->nphases - 1;
    size_t lo = 0;
    for (int32_t ph = 0; ph < nnet; ph++) {
        size_t hi = lo;
        while (hi < n && m[hi].phase == ph)
            hi++;
        /* outgoing: (src, dst, send) order is the sorted order */
        for (size_t i = lo; i < hi; i++) {
            c->out_off[m[i].send] = cursor[m[i].src];
            cursor[m[i].src] += m[i].cnt;
        }
        /* incoming: per destination, by (src, send), the same order within each pair */
        for (size_t i = lo; i < hi; i++) {
            c->in_off[m[i].recv] = cursor[m[i].dst];
            cursor[m[i].dst] += m[i].cnt;
        }
        /* one transfer per (src, dst) */
        int32_t nx = 0;
        for (size_t i = lo; i < hi; i++)
            if (i == lo || m[i].src != m[i - 1].src || m[i].dst != m[i - 1].dst) nx++;
        p->xfers[ph] = calloc((size_t)nx + 1, sizeof **p->xfers);
        WEFT_CHECK_ALLOC(p->xfers[ph]);
        for (size_t i = lo; i < hi; i++) {
            if (i == lo || m[i].src != m[i - 1].src || m[i].dst != m[i - 1].dst) {
                weft_phase_xfer *x = &p->xfers[ph][p->nxfers[ph]++];
                x->src = m[i].src;
                x->dst = m[i].dst;
                x->soff = c->out_off[m[i].send];
                x->doff = c->in_off[m[i].recv];
            }
            p->xfers[ph][p->nxfers[ph] - 1].cnt += m[i].cnt;
        }
        lo = hi;
    }
    for (int32_t r = 0; r < g->nranks; r++)
        if (cursor[r] > WEFT_IR_MAX_CHUNKS) {
            weft_diag_add(c->d, WEFT_SEV_ERROR, c->a->file, c->a->gpus[r].line, 0,
                          "rank %d: %d scratch chunks with staging, more than %d", r, cursor[r],
                          WEFT_IR_MAX_CHUNKS);
            WEFT_FAIL(WEFT_ERR_INPUT);
        }
    for (int32_t ph = 0; ph < p->nphases; ph++)
        for (int32_t r = 0; r < g->nranks; r++)
            p->gpu[ph]->gpus[r].s_chunks = cursor[r];
fail:
    free(cursor);
    free(m);
    return res;
}

/* Appends one step to tb t of rank r of algo a; returns its index or -1. */
static int32_t emit(weft_algo *a, int32_t r, int32_t t, weft_step_type type, weft_buf sb,
                    int32_t so, weft_buf db, int32_t dof, int32_t cnt, int32_t line) {
    weft_step s = weft_step_make(type, sb, so, db, dof, cnt);
    s.line = line;
    return weft_tb_add_step(&a->gpus[r].tbs[t], &s);
}

/* The steps that replace original step s in its GPU phase (tb t of rank r of a): the step
 * itself when its message (if any) is carried by the kernel; otherwise the same value moved
 * through staging (IN: where a staged receive finds its message, OUT: where a staged send
 * leaves it). Records the first and the last of them. */
static weft_result expand_step(cut *c, weft_algo *a, int32_t r, int32_t t, int32_t s) {
    const weft_sg_step *gs = &c->g->steps[s];
    const weft_step *st = gs->ir;
    /* a step that receives and sends is staged on each side on its own */
    const int rs = c->rstaged[s], ss = c->sstaged[s];
    const weft_buf S = WEFT_BUF_SCRATCH;
    const int32_t n = st->cnt, ln = st->line;
    const int32_t in = rs ? c->in_off[s] : -1, out = ss ? c->out_off[s] : -1;
    const int same = st->srcbuf == st->dstbuf && st->srcoff == st->dstoff;
    const weft_buf sb = st->srcbuf, db = st->dstbuf;
    const int32_t so = st->srcoff, dof = st->dstoff;
    int32_t i0 = -1, i1 = -1;
#define E(...)                                                                                     \
    do {                                                                                           \
        i1 = emit(a, r, t, __VA_ARGS__, n, ln);                                                    \
        if (i1 < 0) return WEFT_ERR_NOMEM;                                                         \
        if (i0 < 0) i0 = i1;                                                                       \
    } while (0)
/* The value at (b, o) goes on: left at OUT when its send is staged, else sent by the kernel. */
#define FWD(b, o) E(ss ? WEFT_STEP_CPY : WEFT_STEP_SEND, b, o, S, ss ? out : 0)
    if (!rs && !ss) {
        weft_step cp = *st;
        cp.depid = cp.deps = -1;
        cp.hasdep = 0;
        i0 = i1 = weft_tb_add_step(&a->gpus[r].tbs[t], &cp);
        if (i1 < 0) return WEFT_ERR_NOMEM;
    } else {
        switch (st->type) {
        case WEFT_STEP_SEND: E(WEFT_STEP_CPY, sb, so, S, out); break;
        case WEFT_STEP_RECV: E(WEFT_STEP_CPY, S, in, db, dof); break;
        case WEFT_STEP_RCS:
            if (rs) {
                E(WEFT_STEP_CPY, S, in, db, dof);
                FWD(S, in);
            } else {
                E(WEFT_STEP_RECV, S, 0, S, out);
                E(WEFT_STEP_CPY, S, out, db, dof);
            }
            break;
        case WEFT_STEP_RRS:
            if (rs) {
                E(WEFT_STEP_RE, sb, so, S, in);
                FWD(S, in);
            } else {
                E(WEFT_STEP_RRC, sb, so, S, out);
            }
            break;
        case WEFT_STEP_RRC:
            if (same) {
                E(WEFT_STEP_RE, S, in, db, dof);
            } else {
                E(WEFT_STEP_RE, sb, so, S, in);
                E(WEFT_STEP_CPY, S, in, db, dof);
            }
            break;
        case WEFT_STEP_RRCS:
            if (!rs) {
                E(WEFT_STEP_RRC, sb, so, S, out);
                E(WEFT_STEP_CPY, S, out, db, dof);
            } else if (same) {
                E(WEFT_STEP_RE, S, in, db, dof);
                FWD(db, dof);
            } else {
                E(WEFT_STEP_RE, sb, so, S, in);
                E(WEFT_STEP_CPY, S, in, db, dof);
                FWD(S, in);
            }
            break;
        case WEFT_STEP_CPY:
        case WEFT_STEP_RE:
        case WEFT_STEP_NOP:
        case WEFT_STEP_COUNT: return WEFT_ERR_INTERNAL; /* neither sends nor receives */
        }
        if (i1 < 0) return WEFT_ERR_INTERNAL; /* not a step type: nothing emitted */
    }
#undef FWD
#undef E
    c->first[s] = i0;
    c->last[s] = i1;
    return WEFT_OK;
}

/* Whether original step s sends a message the kernel carries / receives one. */
static int kernel_sends(const cut *c, int32_t s) {
    return (c->g->steps[s].flags & WEFT_STEP_F_SEND) && !c->sstaged[s];
}
static int kernel_receives(const cut *c, int32_t s) {
    return (c->g->steps[s].flags & WEFT_STEP_F_RECV) && !c->rstaged[s];
}

/* GPU phase ph: every original tb's steps of that phase, in order, expanded; dependencies
 * inside the phase kept (those on earlier phases hold by the phase order). */
static weft_result build_phase(cut *c, int32_t ph) {
    weft_result res = WEFT_OK;
    const weft_sg *g = c->g;
    const weft_algo *a = c->a;
    weft_algo *pa = c->p->gpu[ph];
    int32_t *lanes = NULL;
    size_t nl = 0, capl = 0;
    int32_t maxchan = -1;
    for (int32_t r = 0; r < g->nranks; r++) {
        for (int32_t t = 0; t < a->gpus[r].ntbs; t++) {
            int32_t gt = g->rank_tb[r] + t;
            const weft_sg_tb *tb = &g->tbs[gt];
            int32_t lo = tb->first, hi = tb->first + tb->nsteps;
            while (lo < hi && c->ph[lo] < ph)
                lo++;
            int32_t end = lo;
            while (end < hi && c->ph[end] == ph)
                end++;
            c->ptb[gt] = -1;
            if (lo == end) continue;
            int ks = 0, kr = 0;
            for (int32_t s = lo; s < end; s++)
                ks |= kernel_sends(c, s), kr |= kernel_receives(c, s);
            const weft_tb *ot = &a->gpus[r].tbs[t];
            weft_tb *nt =
                weft_gpu_add_tb(&pa->gpus[r], ks ? ot->send : -1, kr ? ot->recv : -1, ot->chan);
            WEFT_CHECK_ALLOC(nt);
            nt->line = ot->line;
            c->ptb[gt] = nt->id;
            if (ot->chan > maxchan) maxchan = ot->chan;
            if (weft_grow((void **)&lanes, &capl, nl, sizeof *lanes) != 0)
                WEFT_FAIL(WEFT_ERR_NOMEM);
            lanes[nl++] = t;
            for (int32_t s = lo; s < end; s++)
                WEFT_CHECK(expand_step(c, pa, r, nt->id, s));
        }
        /* a rank with nothing to do still runs one tb (a nop): the interpreter runs at least one
         * tb per rank of a schedule, and every rank of a node launches each phase it works in */
        if (pa->gpus[r].ntbs == 0) {
            weft_tb *nt = weft_gpu_add_tb(&pa->gpus[r], -1, -1, 0);
            WEFT_CHECK_ALLOC(nt);
            if (emit(pa, r, nt->id, WEFT_STEP_NOP, WEFT_BUF_INPUT, 0, WEFT_BUF_INPUT, 0, 0, 0) < 0)
                WEFT_FAIL(WEFT_ERR_NOMEM);
            if (weft_grow((void **)&lanes, &capl, nl, sizeof *lanes) != 0)
                WEFT_FAIL(WEFT_ERR_NOMEM);
            lanes[nl++] = a->gpus[r].ntbs; /* a lane of its own, after the original tbs */
        }
        /* dependencies, now that every tb of the rank has its steps */
        for (int32_t t = 0; t < a->gpus[r].ntbs; t++) {
            int32_t gt = g->rank_tb[r] + t;
            if (c->ptb[gt] < 0) continue;
            const weft_sg_tb *tb = &g->tbs[gt];
            for (int32_t s = tb->first; s < tb->first + tb->nsteps; s++) {
                int32_t dep = g->steps[s].dep;
                if (c->ph[s] != ph || dep < 0 || c->ph[dep] < ph) continue;
                int32_t dt = c->ptb[g->steps[dep].tb];
                weft_step *ns = &pa->gpus[r].tbs[c->ptb[gt]].steps[c->first[s]];
                ns->depid = dt;
                ns->deps = c->last[dep];
                pa->gpus[r].tbs[dt].steps[c->last[dep]].hasdep = 1;
            }
        }
    }
    pa->nchannels = maxchan + 1 > 0 ? maxchan + 1 : 1;
    c->p->lane[ph] = lanes ? lanes : calloc(1, sizeof *lanes);
    WEFT_CHECK_ALLOC(c->p->lane[ph]);
    lanes = NULL;
fail:
    free(lanes);
    return res;
}

static weft_algo *new_like(const weft_algo *a, const char *name) {
    weft_algo *n = weft_algo_new(name, a->coll, a->ngpus, a->nchunksperloop);
    if (n == NULL) return NULL;
    n->proto = a->proto;
    n->nchannels = a->nchannels;
    n->inplace = a->inplace;
    n->outofplace = a->outofplace;
    n->min_bytes = a->min_bytes;
    n->max_bytes = a->max_bytes;
    n->graph_max_bytes = a->graph_max_bytes;
    n->root = a->root;
    n->line = a->line;
    if (a->file && (n->file = weft_strdup(a->file)) == NULL) {
        weft_algo_free(n);
        return NULL;
    }
    for (int32_t r = 0; r < a->ngpus; r++) {
        n->gpus[r].i_chunks = a->gpus[r].i_chunks;
        n->gpus[r].o_chunks = a->gpus[r].o_chunks;
        n->gpus[r].s_chunks = a->gpus[r].s_chunks;
        n->gpus[r].line = a->gpus[r].line;
    }
    return n;
}

static weft_result check_nodes(const weft_algo *a, const int32_t *node, weft_phased *p,
                               weft_diag *d) {
    p->nranks = a->ngpus;
    p->node = malloc((size_t)a->ngpus * sizeof *p->node);
    if (p->node == NULL) return WEFT_ERR_NOMEM;
    /* renumber nodes 0.. in order of their first rank */
    for (int32_t r = 0; r < a->ngpus; r++) {
        int32_t q = 0;
        while (q < r && node[q] != node[r])
            q++;
        p->node[r] = q < r ? p->node[q] : p->nnodes++;
    }
    (void)d;
    return WEFT_OK;
}

weft_result weft_phase_cut(const weft_algo *a, const int32_t *node, weft_phased **out,
                           weft_diag *d) {
    return weft_phase_cut_max(a, node, 0, out, NULL, d);
}

weft_result weft_phase_cut_max(const weft_algo *a, const int32_t *node, int32_t max_phases,
                               weft_phased **out, int32_t *nphases, weft_diag *d) {
    weft_result res = WEFT_OK;
    weft_sg *g = NULL;
    weft_sg_run run = {0};
    int32_t *order = NULL;
    cut c;
    memset(&c, 0, sizeof c);
    weft_phased *p = NULL;
    if (a == NULL || node == NULL || out == NULL) return WEFT_ERR_USAGE;
    *out = NULL;
    WEFT_CHECK(weft_sg_validate(a, d, NULL));
    WEFT_CHECK(weft_sg_build(a, d, NULL, &g));
    p = calloc(1, sizeof *p);
    WEFT_CHECK_ALLOC(p);
    WEFT_CHECK(check_nodes(a, node, p, d));
    order = malloc(((size_t)g->nsteps + 1) * sizeof *order);
    WEFT_CHECK_ALLOC(order);
    WEFT_CHECK(weft_sg_linearize(g, order, &run));
    if (run.stalled) {
        weft_diag_add(d, WEFT_SEV_ERROR, a->file, a->line, 0,
                      "the schedule cannot complete (%lld of %d steps run; weft verify says "
                      "where), so it cannot be cut into phases",
                      (long long)run.nfired, g->nsteps);
        WEFT_FAIL(WEFT_ERR_INPUT);
    }
    size_t ns = (size_t)g->nsteps + 1, nt = (size_t)g->ntbs + 1;
    c.a = a;
    c.g = g;
    c.p = p;
    c.ph = calloc(ns, sizeof *c.ph);
    c.rstaged = calloc(ns, 1);
    c.sstaged = calloc(ns, 1);
    c.d = d;
    c.in_off = malloc(ns * sizeof *c.in_off);
    c.out_off = malloc(ns * sizeof *c.out_off);
    c.first = malloc(ns * sizeof *c.first);
    c.last = malloc(ns * sizeof *c.last);
    c.ptb = malloc(nt * sizeof *c.ptb);
    WEFT_CHECK_ALLOC(c.ph);
    WEFT_CHECK_ALLOC(c.rstaged);
    WEFT_CHECK_ALLOC(c.sstaged);
    WEFT_CHECK_ALLOC(c.in_off);
    WEFT_CHECK_ALLOC(c.out_off);
    WEFT_CHECK_ALLOC(c.first);
    WEFT_CHECK_ALLOC(c.last);
    WEFT_CHECK_ALLOC(c.ptb);
    number_steps(&c, order);
    int32_t nph = 1;
    for (int32_t s = 0; s < g->nsteps; s++)
        if (c.ph[s] + 1 > nph) nph = c.ph[s] + 1;
    if (nphases) *nphases = nph;
    if (max_phases > 0 && nph > max_phases) WEFT_FAIL(WEFT_ERR_UNSUPPORTED); /* before building */
    p->nphases = nph;
    p->nsteps = g->nsteps;
    p->step_phase = malloc(ns * sizeof *p->step_phase);
    p->stage_base = malloc((size_t)g->nranks * sizeof *p->stage_base);
    p->gpu = calloc((size_t)nph, sizeof *p->gpu);
    p->lane = calloc((size_t)nph, sizeof *p->lane);
    p->nxfers = calloc((size_t)nph, sizeof *p->nxfers);
    p->xfers = calloc((size_t)nph, sizeof *p->xfers);
    WEFT_CHECK_ALLOC(p->step_phase);
    WEFT_CHECK_ALLOC(p->stage_base);
    WEFT_CHECK_ALLOC(p->gpu);
    WEFT_CHECK_ALLOC(p->lane);
    WEFT_CHECK_ALLOC(p->nxfers);
    WEFT_CHECK_ALLOC(p->xfers);
    memcpy(p->step_phase, c.ph, (size_t)g->nsteps * sizeof *c.ph);
    for (int32_t r = 0; r < g->nranks; r++)
        p->stage_base[r] = a->gpus[r].s_chunks;
    for (int32_t ph = 0; ph < nph; ph++) {
        char *name = nph > 1 ? weft_asprintf("%s [GPU phase %d of %d]", a->name, ph, nph)
                             : weft_strdup(a->name);
        WEFT_CHECK_ALLOC(name);
        p->gpu[ph] = new_like(a, name);
        free(name);
        WEFT_CHECK_ALLOC(p->gpu[ph]);
    }
    WEFT_CHECK(lay_out_staging(&c));
    for (int32_t ph = 0; ph < nph; ph++)
        WEFT_CHECK(build_phase(&c, ph));
    *out = p;
    p = NULL;
fail:
    free(c.ph);
    free(c.rstaged);
    free(c.sstaged);
    free(c.in_off);
    free(c.out_off);
    free(c.first);
    free(c.last);
    free(c.ptb);
    free(order);
    weft_sg_run_free(&run);
    weft_sg_free(g);
    weft_phased_free(p);
    return res;
}

/* ---- joining the phases into one schedule ---------------------------------------------------- */

typedef struct join {
    const weft_phased *p;
    weft_algo *j;
    weft_diag *d;
    /* per rank, rebuilt for each: */
    int32_t nlanes;
    int32_t *lane_tb;           /* original tb -> joined tb, or -1 */
    int32_t *phase_tb;          /* tb of the current phase -> joined tb */
    int32_t *sec;               /* tb of the current phase -> first joined step of its section */
    int32_t *net_s, *net_r;     /* peer -> joined tb sending to / receiving from it, or -1 */
    int32_t bar;                /* the barrier tb, or -1 */
    int32_t mark_tb, mark_step; /* the latest barrier step, or -1 */
} join;

static int32_t add_nop_dep(weft_algo *j, int32_t r, int32_t t, int32_t dt, int32_t ds) {
    weft_step s;
    memset(&s, 0, sizeof s);
    s.type = WEFT_STEP_NOP;
    s.depid = dt;
    s.deps = ds;
    int32_t i = weft_tb_add_step(&j->gpus[r].tbs[t], &s);
    if (i >= 0 && dt >= 0) j->gpus[r].tbs[dt].steps[ds].hasdep = 1;
    return i;
}

/* The joined tbs of rank r: one per original tb used in any phase (its peers the union of its
 * phase tbs' peers), one per network peer and direction, and the barrier tb. */
static weft_result join_tbs(join *J, int32_t r, int32_t netch) {
    const weft_phased *p = J->p;
    weft_algo *j = J->j;
    int32_t maxlane = -1;
    for (int32_t ph = 0; ph < p->nphases; ph++)
        for (int32_t t = 0; t < p->gpu[ph]->gpus[r].ntbs; t++) {
            int32_t l = weft_phased_lane(p, ph, r, t);
            if (l > maxlane) maxlane = l;
        }
    J->nlanes = maxlane + 1;
    free(J->lane_tb);
    J->lane_tb = malloc(((size_t)J->nlanes + 1) * sizeof *J->lane_tb);
    if (J->lane_tb == NULL) return WEFT_ERR_NOMEM;
    for (int32_t l = 0; l < J->nlanes; l++) {
        int32_t send = -1, recv = -1, chan = -1;
        for (int32_t ph = 0; ph < p->nphases; ph++)
            for (int32_t t = 0; t < p->gpu[ph]->gpus[r].ntbs; t++) {
                if (weft_phased_lane(p, ph, r, t) != l) continue;
                const weft_tb *tb = &p->gpu[ph]->gpus[r].tbs[t];
                if ((tb->send >= 0 && send >= 0 && tb->send != send) ||
                    (tb->recv >= 0 && recv >= 0 && tb->recv != recv) ||
                    (chan >= 0 && tb->chan != chan)) {
                    weft_diag_add(J->d, WEFT_SEV_ERROR, j->file, tb->line, 0,
                                  "rank %d: the tbs of original tb %d differ in peers or channel "
                                  "between GPU phases",
                                  r, l);
                    return WEFT_ERR_INPUT;
                }
                if (tb->send >= 0) send = tb->send;
                if (tb->recv >= 0) recv = tb->recv;
                chan = tb->chan;
            }
        J->lane_tb[l] = -1;
        if (chan < 0) continue;
        weft_tb *nt = weft_gpu_add_tb(&j->gpus[r], send, recv, chan);
        if (nt == NULL) return WEFT_ERR_NOMEM;
        J->lane_tb[l] = nt->id;
    }
    for (int32_t q = 0; q < p->nranks; q++)
        J->net_s[q] = J->net_r[q] = -1;
    for (int32_t ph = 0; ph + 1 < p->nphases; ph++)
        for (int32_t i = 0; i < p->nxfers[ph]; i++) {
            const weft_phase_xfer *x = &p->xfers[ph][i];
            int32_t *slot = x->src == r   ? &J->net_s[x->dst]
                            : x->dst == r ? &J->net_r[x->src]
                                          : NULL;
            if (slot == NULL || *slot >= 0) continue;
            weft_tb *nt = weft_gpu_add_tb(&j->gpus[r], x->src == r ? x->dst : -1,
                                          x->src == r ? -1 : x->src, netch);
            if (nt == NULL) return WEFT_ERR_NOMEM;
            *slot = nt->id;
        }
    J->bar = -1;
    if (p->nphases > 1) {
        weft_tb *nt = weft_gpu_add_tb(&j->gpus[r], -1, -1, 0);
        if (nt == NULL) return WEFT_ERR_NOMEM;
        J->bar = nt->id;
    }
    J->mark_tb = J->mark_step = -1;
    return WEFT_OK;
}

/* GPU phase ph of rank r: each tb's steps after a nop on the latest barrier step. */
static weft_result join_gpu_phase(join *J, int32_t r, int32_t ph) {
    const weft_algo *pa = J->p->gpu[ph];
    const weft_gpu *pg = &pa->gpus[r];
    weft_algo *j = J->j;
    for (int32_t t = 0; t < pg->ntbs; t++) {
        int32_t jt = J->lane_tb[weft_phased_lane(J->p, ph, r, t)];
        J->phase_tb[t] = jt;
        if (J->mark_tb >= 0 && add_nop_dep(j, r, jt, J->mark_tb, J->mark_step) < 0)
            return WEFT_ERR_NOMEM;
        J->sec[t] = j->gpus[r].tbs[jt].nsteps;
        for (int32_t s = 0; s < pg->tbs[t].nsteps; s++) {
            weft_step st = pg->tbs[t].steps[s];
            st.depid = st.deps = -1;
            st.hasdep = 0;
            if (weft_tb_add_step(&j->gpus[r].tbs[jt], &st) < 0) return WEFT_ERR_NOMEM;
        }
    }
    for (int32_t t = 0; t < pg->ntbs; t++)
        for (int32_t s = 0; s < pg->tbs[t].nsteps; s++) {
            const weft_step *st = &pg->tbs[t].steps[s];
            if (st->depid < 0) continue;
            if (st->depid >= pg->ntbs || st->deps < 0 || st->deps >= pg->tbs[st->depid].nsteps) {
                weft_diag_add(J->d, WEFT_SEV_ERROR, j->file, st->line, 0,
                              "GPU phase %d: rank %d tb %d step %d depends on tb %d step %d, "
                              "which does not exist",
                              ph, r, t, s, st->depid, st->deps);
                return WEFT_ERR_INPUT;
            }
            int32_t dt = J->phase_tb[st->depid];
            weft_step *ns = &j->gpus[r].tbs[J->phase_tb[t]].steps[J->sec[t] + s];
            ns->depid = dt;
            ns->deps = J->sec[st->depid] + st->deps;
            j->gpus[r].tbs[dt].steps[ns->deps].hasdep = 1;
        }
    return WEFT_OK;
}

/* The barrier after GPU phase ph, network phase ph, and the barrier after it. */
static weft_result join_net_phase(join *J, int32_t r, int32_t ph) {
    const weft_phased *p = J->p;
    const weft_gpu *pg = &p->gpu[ph]->gpus[r];
    weft_algo *j = J->j;
    for (int32_t t = 0; t < pg->ntbs; t++) {
        int32_t jt = J->lane_tb[weft_phased_lane(p, ph, r, t)];
        int32_t i = add_nop_dep(j, r, J->bar, jt, j->gpus[r].tbs[jt].nsteps - 1);
        if (i < 0) return WEFT_ERR_NOMEM;
        J->mark_tb = J->bar, J->mark_step = i;
    }
    int32_t nt0 = j->gpus[r].ntbs, *last = calloc((size_t)nt0 + 1, sizeof *last);
    if (last == NULL) return WEFT_ERR_NOMEM;
    weft_result res = WEFT_OK;
    for (int32_t i = 0; i < p->nxfers[ph]; i++) {
        const weft_phase_xfer *x = &p->xfers[ph][i];
        if (x->src != r && x->dst != r) continue;
        int send = x->src == r;
        int32_t jt = send ? J->net_s[x->dst] : J->net_r[x->src];
        weft_step st;
        memset(&st, 0, sizeof st);
        st.type = send ? WEFT_STEP_SEND : WEFT_STEP_RECV;
        st.srcbuf = st.dstbuf = WEFT_BUF_SCRATCH;
        st.srcoff = x->soff;
        st.dstoff = x->doff;
        st.cnt = x->cnt;
        st.depid = J->mark_tb;
        st.deps = J->mark_step;
        if (J->mark_tb >= 0) j->gpus[r].tbs[J->mark_tb].steps[J->mark_step].hasdep = 1;
        int32_t k = weft_tb_add_step(&j->gpus[r].tbs[jt], &st);
        if (k < 0) WEFT_FAIL(WEFT_ERR_NOMEM);
        last[jt] = k + 1;
    }
    for (int32_t t = 0; t < nt0; t++) {
        if (!last[t]) continue;
        int32_t i = add_nop_dep(j, r, J->bar, t, last[t] - 1);
        if (i < 0) WEFT_FAIL(WEFT_ERR_NOMEM);
        J->mark_tb = J->bar, J->mark_step = i;
    }
fail:
    free(last);
    return res;
}

weft_result weft_phase_join(const weft_phased *p, weft_algo **out, weft_diag *d) {
    weft_result res = WEFT_OK;
    join J;
    memset(&J, 0, sizeof J);
    if (p == NULL || out == NULL || p->nphases < 1) return WEFT_ERR_USAGE;
    *out = NULL;
    const weft_algo *a0 = p->gpu[0];
    int32_t maxtbs = 0, netch = 0;
    for (int32_t ph = 0; ph < p->nphases; ph++) {
        if (p->gpu[ph]->ngpus != p->nranks) return WEFT_ERR_USAGE;
        for (int32_t r = 0; r < p->nranks; r++) {
            const weft_gpu *g = &p->gpu[ph]->gpus[r];
            if (g->ntbs > maxtbs) maxtbs = g->ntbs;
            for (int32_t t = 0; t < g->ntbs; t++)
                if (g->tbs[t].chan + 1 > netch) netch = g->tbs[t].chan + 1;
        }
    }
    char *name = weft_asprintf("%s (phased)", a0->name);
    WEFT_CHECK_ALLOC(name);
    J.j = new_like(a0, name);
    free(name);
    WEFT_CHECK_ALLOC(J.j);
    J.j->nchannels = netch + 1;
    J.p = p;
    J.d = d;
    J.phase_tb = malloc(((size_t)maxtbs + 1) * sizeof *J.phase_tb);
    J.sec = malloc(((size_t)maxtbs + 1) * sizeof *J.sec);
    J.net_s = malloc((size_t)p->nranks * sizeof *J.net_s);
    J.net_r = malloc((size_t)p->nranks * sizeof *J.net_r);
    WEFT_CHECK_ALLOC(J.phase_tb);
    WEFT_CHECK_ALLOC(J.sec);
    WEFT_CHECK_ALLOC(J.net_s);
    WEFT_CHECK_ALLOC(J.net_r);
    for (int32_t r = 0; r < p->nranks; r++) {
        WEFT_CHECK(join_tbs(&J, r, netch));
        for (int32_t ph = 0; ph < p->nphases; ph++) {
            WEFT_CHECK(join_gpu_phase(&J, r, ph));
            if (ph + 1 < p->nphases) WEFT_CHECK(join_net_phase(&J, r, ph));
        }
    }
    *out = J.j;
    J.j = NULL;
fail:
    weft_algo_free(J.j);
    free(J.lane_tb);
    free(J.phase_tb);
    free(J.sec);
    free(J.net_s);
    free(J.net_r);
    return res;
}

/* ---- proving a cut ------------------------------------------------------------------------ */

/* Each GPU phase on its own: the same shape as a, a self-contained schedule (every message sent
 * and received in the phase), no message between nodes. */
static int64_t check_gpu_phases(const weft_algo *a, const weft_phased *p, weft_diag *d) {
    int64_t nerr = 0;
    for (int32_t ph = 0; ph < p->nphases; ph++) {
        const weft_algo *pa = p->gpu[ph];
        if (pa->ngpus != a->ngpus || pa->coll != a->coll ||
            pa->nchunksperloop != a->nchunksperloop || pa->proto != a->proto) {
            weft_diag_add(d, WEFT_SEV_ERROR, a->file, a->line, 0,
                          "GPU phase %d has another collective, rank count, chunking or protocol "
                          "than the schedule",
                          ph);
            nerr++;
            continue;
        }
        weft_sg *g = NULL;
        int64_t errs[WEFT_VERIFY_CLASS_COUNT] = {0};
        weft_diag *pd = weft_diag_new();
        if (pd == NULL) return nerr + 1;
        if (weft_sg_validate(pa, pd, errs) == WEFT_OK) weft_sg_build(pa, pd, errs, &g);
        for (size_t i = 0; i < weft_diag_size(pd); i++) {
            const weft_diag_entry *e = weft_diag_get(pd, i);
            if (e->sev != WEFT_SEV_ERROR) continue;
            weft_diag_add(d, e->sev, e->file, e->line, e->col, "GPU phase %d: %s", ph, e->msg);
            nerr++;
        }
        weft_diag_free(pd);
        weft_sg_free(g);
        for (int32_t r = 0; r < pa->ngpus; r++)
            for (int32_t t = 0; t < pa->gpus[r].ntbs; t++) {
                const weft_tb *tb = &pa->gpus[r].tbs[t];
                for (int k = 0; k < 2; k++) {
                    int32_t q = k ? tb->recv : tb->send;
                    if (q < 0 || q >= p->nranks || p->node[q] == p->node[r]) continue;
                    weft_diag_add(d, WEFT_SEV_ERROR, a->file, tb->line, 0,
                                  "GPU phase %d: rank %d tb %d %s rank %d on another node (%d, "
                                  "not %d): only a network phase can carry that message",
                                  ph, r, t, k ? "receives from" : "sends to", q, p->node[q],
                                  p->node[r]);
                    nerr++;
                }
            }
    }
    for (int32_t ph = 0; ph + 1 < p->nphases; ph++)
        for (int32_t i = 0; i < p->nxfers[ph]; i++) {
            const weft_phase_xfer *x = &p->xfers[ph][i];
            if (x->src < 0 || x->src >= p->nranks || x->dst < 0 || x->dst >= p->nranks ||
                x->src == x->dst || x->cnt < 1) {
                weft_diag_add(d, WEFT_SEV_ERROR, a->file, a->line, 0,
                              "network phase %d: transfer %d (rank %d to rank %d, %d chunks) is "
                              "malformed",
                              ph, i, x->src, x->dst, x->cnt);
                nerr++;
            }
        }
    return nerr;
}

/* The phase numbers against a's own order: never earlier than a predecessor in the tb, the
 * dependency or the message's send, and strictly later than the send across nodes. */
static int64_t check_numbering(const weft_algo *a, const weft_phased *p, weft_diag *d) {
    weft_sg *g = NULL;
    int64_t nerr = 0;
    if (!weft_ir_is_valid(a) || weft_sg_build(a, NULL, NULL, &g) != WEFT_OK) return 1;
    if (p->nsteps != g->nsteps) {
        weft_diag_add(d, WEFT_SEV_ERROR, a->file, a->line, 0,
                      "the cut numbers %lld steps, the schedule has %d", (long long)p->nsteps,
                      g->nsteps);
        weft_sg_free(g);
        return 1;
    }
    const int32_t *ph = p->step_phase;
    for (int32_t s = 0; s < g->nsteps && nerr < 8; s++) {
        const weft_sg_step *st = &g->steps[s];
        const char *what = NULL;
        int32_t other = -1;
        if (ph[s] < 0 || ph[s] >= p->nphases)
            what = "a phase that does not exist";
        else if (st->idx > 0 && ph[s] < ph[s - 1])
            what = "an earlier phase than the step before it in its tb", other = s - 1;
        else if (st->dep >= 0 && ph[s] < ph[st->dep])
            what = "an earlier phase than its dependency", other = st->dep;
        else if (st->match >= 0 && ph[s] < ph[st->match])
            what = "an earlier phase than the send of its message", other = st->match;
        else if (st->match >= 0 && ph[s] == ph[st->match] &&
                 p->node[g->steps[st->match].rank] != p->node[st->rank])
            what = "the phase of the send of its message, on another node", other = st->match;
        if (what == NULL) continue;
        char on[64] = "";
        if (other >= 0) weft_sg_step_name(g, other, on, sizeof on);
        weft_sg_diag_step(g, d, WEFT_SEV_ERROR, s, "the cut puts it in phase %d, %s%s%s%s", ph[s],
                          what, other >= 0 ? " (" : "", on, other >= 0 ? ")" : "");
        nerr++;
    }
    weft_sg_free(g);
    return nerr;
}

weft_result weft_phase_verify(const weft_algo *a, const weft_phased *p,
                              const weft_verify_opts *opts, weft_diag *d,
                              weft_verify_summary *summary) {
    weft_result res = WEFT_OK;
    weft_algo *j = NULL;
    if (summary) memset(summary, 0, sizeof *summary);
    if (a == NULL || p == NULL) return WEFT_ERR_USAGE;
    if (p->nranks != a->ngpus) {
        weft_diag_add(d, WEFT_SEV_ERROR, a->file, a->line, 0,
                      "the cut is for %d ranks, the schedule has %d", p->nranks, a->ngpus);
        return WEFT_ERR_INPUT;
    }
    /* every check runs: a broken phase often also shows as a deadlock or a wrong value */
    int64_t nerr = check_gpu_phases(a, p, d) + check_numbering(a, p, d);
    WEFT_CHECK(weft_phase_join(p, &j, d));
    weft_diag *jd = weft_diag_new();
    WEFT_CHECK_ALLOC(jd);
    res = weft_ir_verify(j, opts, jd, summary);
    if (res == WEFT_OK && nerr) res = WEFT_ERR_INPUT;
    if (weft_diag_count(jd, WEFT_SEV_ERROR))
        weft_diag_add(d, WEFT_SEV_ERROR, a->file, a->line, 0,
                      "the phases joined back into one schedule (GPU phases, network transfers "
                      "on channel %d, a barrier tb per rank) fail verification:",
                      j->nchannels - 1);
    for (size_t i = 0; i < weft_diag_size(jd); i++) {
        const weft_diag_entry *e = weft_diag_get(jd, i);
        weft_diag_add(d, e->sev == WEFT_SEV_ERROR ? WEFT_SEV_ERROR : WEFT_SEV_NOTE, e->file,
                      e->line, e->col, "%s", e->msg);
    }
    weft_diag_free(jd);
fail:
    weft_algo_free(j);
    return res;
}

/* ---- listing ------------------------------------------------------------------------------ */

/* "3 CTAs per rank", "1 CTA per rank", "0-4 CTAs per rank": the range of v over the ranks. */
static void print_ranks(FILE *out, const int32_t *v, int32_t n, const char *one, const char *many,
                        const char *tail) {
    int32_t lo = v[0], hi = v[0];
    for (int32_t r = 1; r < n; r++) {
        if (v[r] < lo) lo = v[r];
        if (v[r] > hi) hi = v[r];
    }
    if (lo == hi)
        fprintf(out, "%d %s%s", lo, lo == 1 ? one : many, tail);
    else
        fprintf(out, "%d-%d %s%s", lo, hi, many, tail);
}

weft_result weft_phase_show(const weft_algo *a, const weft_phased *p, FILE *out, int steps) {
    weft_result res = WEFT_OK;
    int32_t *v = malloc(((size_t)p->nranks + 1) * sizeof *v);
    WEFT_CHECK_ALLOC(v);
    fprintf(out, "%s: %s on %d ranks, %d node%s (", a->name, weft_coll_name(a->coll), p->nranks,
            p->nnodes, p->nnodes == 1 ? "" : "s");
    for (int32_t n = 0; n < p->nnodes; n++) {
        int32_t cnt = 0, first = -1, last = -1, blocked = 1;
        for (int32_t r = 0; r < p->nranks; r++)
            if (p->node[r] == n) {
                if (first < 0) first = r;
                if (last >= 0 && r != last + 1) blocked = 0;
                last = r, cnt++;
            }
        if (blocked)
            fprintf(out, "%s%d-%d", n ? " | " : "", first, last);
        else
            fprintf(out, "%s%d ranks from %d", n ? " | " : "", cnt, first);
    }
    fprintf(out, "), %s\n", weft_proto_name(a->proto));
    fprintf(out, "%d GPU phase%s, %d network phase%s; %lld message%s staged (%lld inside a node)\n",
            p->nphases, p->nphases == 1 ? "" : "s", p->nphases - 1, p->nphases == 2 ? "" : "s",
            (long long)p->staged, p->staged == 1 ? "" : "s", (long long)p->staged_local);
    for (int32_t r = 0; r < p->nranks; r++)
        v[r] = p->gpu[0]->gpus[r].s_chunks - p->stage_base[r];
    fprintf(out, "staging: ");
    print_ranks(out, v, p->nranks, "chunk", "chunks", " per rank");
    fprintf(out, " (after %d scratch chunks)\n", p->stage_base[0]);
    for (int32_t ph = 0; ph < p->nphases; ph++) {
        const weft_algo *pa = p->gpu[ph];
        int64_t nst = 0, msgs = 0;
        for (int32_t r = 0; r < p->nranks; r++) {
            v[r] = pa->gpus[r].ntbs;
            for (int32_t t = 0; t < pa->gpus[r].ntbs; t++) {
                const weft_tb *tb = &pa->gpus[r].tbs[t];
                nst += tb->nsteps;
                for (int32_t s = 0; s < tb->nsteps; s++)
                    msgs += (weft_step_flags(tb->steps[s].type) & WEFT_STEP_F_SEND) != 0;
            }
        }
        fprintf(out, "GPU phase %d: ", ph);
        print_ranks(out, v, p->nranks, "CTA", "CTAs", " per rank");
        fprintf(out, ", %s, %lld steps, %lld message%s inside nodes\n",
                weft_proto_name(weft_proto_runs_as(pa->proto)), (long long)nst, (long long)msgs,
                msgs == 1 ? "" : "s");
        if (steps) WEFT_CHECK(weft_ir_show(pa, out, 0));
        if (ph + 1 == p->nphases) break;
        int64_t chunks = 0;
        int32_t maxpeers = 0;
        for (int32_t r = 0; r < p->nranks; r++)
            v[r] = 0;
        for (int32_t i = 0; i < p->nxfers[ph]; i++) {
            chunks += p->xfers[ph][i].cnt;
            v[p->xfers[ph][i].src]++;
        }
        for (int32_t r = 0; r < p->nranks; r++)
            if (v[r] > maxpeers) maxpeers = v[r];
        fprintf(out, "network phase %d: NCCL send/recv, %d transfer%s, %lld chunk%s; ", ph,
                p->nxfers[ph], p->nxfers[ph] == 1 ? "" : "s", (long long)chunks,
                chunks == 1 ? "" : "s");
        print_ranks(out, v, p->nranks, "peer", "peers", " per rank\n");
        if (steps)
            for (int32_t i = 0; i < p->nxfers[ph]; i++) {
                const weft_phase_xfer *x = &p->xfers[ph][i];
                fprintf(out, "  rank %d s[%d..%d] -> rank %d s[%d..%d]\n", x->src, x->soff,
                        x->soff + x->cnt - 1, x->dst, x->doff, x->doff + x->cnt - 1);
            }
    }
fail:
    free(v);
    return res;
}
