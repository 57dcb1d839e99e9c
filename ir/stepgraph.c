/* stepgraph.c — the flat step graph of a schedule, its buffer layout per call mode, and the
 * interleaving engine shared by the verifier and the CPU executor. */
#include "stepgraph_internal.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

const weft_step *weft_sg_ir_step(const weft_sg *g, int32_t step) {
    return g->steps[step].ir;
}

void weft_sg_step_name(const weft_sg *g, int32_t step, char *buf, size_t len) {
    const weft_sg_step *s = &g->steps[step];
    snprintf(buf, len, "rank %d tb %d step %d", s->rank, g->tbs[s->tb].local, s->idx);
}

/* "rank R tb T step S (line L)": a second step named inside a diagnostic. */
static void step_ref(const weft_sg *g, int32_t step, char *buf, size_t len) {
    char name[64];
    weft_sg_step_name(g, step, name, sizeof name);
    int line = weft_sg_ir_step(g, step)->line;
    if (line > 0)
        snprintf(buf, len, "%s (line %d)", name, line);
    else
        snprintf(buf, len, "%s", name);
}

static void vdiag_at(const weft_algo *a, weft_diag *d, weft_severity sev, int line,
                     const char *prefix, const char *fmt, va_list ap) {
    if (d == NULL) return;
    if (weft_diag_full(d)) { /* only counted: nothing to format */
        weft_diag_add(d, sev, a->file, line, 0, "%s", prefix);
        return;
    }
    va_list ap2;
    va_copy(ap2, ap);
    int n = vsnprintf(NULL, 0, fmt, ap2);
    va_end(ap2);
    char *msg = n >= 0 ? malloc((size_t)n + 1) : NULL;
    if (msg == NULL) {
        weft_diag_add(d, sev, a->file, line, 0, "%s: (out of memory formatting a message)", prefix);
        return;
    }
    vsnprintf(msg, (size_t)n + 1, fmt, ap);
    weft_diag_add(d, sev, a->file, line, 0, "%s: %s", prefix, msg);
    free(msg);
}

void weft_sg_diag_step(const weft_sg *g, weft_diag *d, weft_severity sev, int32_t step,
                       const char *fmt, ...) {
    char name[64];
    weft_sg_step_name(g, step, name, sizeof name);
    va_list ap;
    va_start(ap, fmt);
    vdiag_at(g->a, d, sev, weft_sg_ir_step(g, step)->line, name, fmt, ap);
    va_end(ap);
}

static void diag_tb(const weft_algo *a, weft_diag *d, int32_t rank, int32_t tb, const char *fmt,
                    ...) WEFT_PRINTF(5, 6);
static void diag_tb(const weft_algo *a, weft_diag *d, int32_t rank, int32_t tb, const char *fmt,
                    ...) {
    char name[48];
    snprintf(name, sizeof name, "rank %d tb %d", rank, tb);
    va_list ap;
    va_start(ap, fmt);
    vdiag_at(a, d, WEFT_SEV_ERROR, a->gpus[rank].tbs[tb].line, name, fmt, ap);
    va_end(ap);
}

static void diag_step_ir(const weft_algo *a, weft_diag *d, int32_t rank, int32_t tb, int32_t s,
                         const char *fmt, ...) WEFT_PRINTF(6, 7);
static void diag_step_ir(const weft_algo *a, weft_diag *d, int32_t rank, int32_t tb, int32_t s,
                         const char *fmt, ...) {
    char name[64];
    snprintf(name, sizeof name, "rank %d tb %d step %d", rank, tb, s);
    va_list ap;
    va_start(ap, fmt);
    vdiag_at(a, d, WEFT_SEV_ERROR, a->gpus[rank].tbs[tb].steps[s].line, name, fmt, ap);
    va_end(ap);
}

#define COUNT_ERR(cls)                                                                             \
    do {                                                                                           \
        if (errs) errs[WEFT_VERIFY_##cls]++;                                                       \
        nerr++;                                                                                    \
    } while (0)

void weft_sg_free(weft_sg *g) {
    if (g == NULL) return;
    for (int32_t c = 0; c < g->nconns; c++) {
        free(g->conns[c].sends);
        free(g->conns[c].recvs);
    }
    free(g->conns);
    free(g->steps);
    free(g->tbs);
    free(g->rank_tb);
    free(g);
}

int32_t weft_sg_buf_chunks(const weft_sg *g, int32_t rank, weft_buf b) {
    switch (b) {
    case WEFT_BUF_INPUT: return g->nin;
    case WEFT_BUF_OUTPUT: return g->nout;
    case WEFT_BUF_SCRATCH: return g->a->gpus[rank].s_chunks;
    default: return 0;
    }
}

/* Connection lookup: open addressing on (src, dst, chan). */
typedef struct conn_map {
    uint64_t *keys;
    int32_t *vals;
    size_t cap;
} conn_map;

static uint64_t conn_key(int32_t src, int32_t dst, int32_t chan) {
    return ((uint64_t)(uint32_t)src << 42) | ((uint64_t)(uint32_t)dst << 21) | (uint32_t)chan;
}

static int32_t *conn_slot(conn_map *m, uint64_t key) {
    size_t h = (size_t)((key * 0x9E3779B97F4A7C15ull) >> 17) & (m->cap - 1);
    while (m->vals[h] >= 0 && m->keys[h] != key)
        h = (h + 1) & (m->cap - 1);
    m->keys[h] = key;
    return &m->vals[h];
}

weft_result weft_sg_build(const weft_algo *a, weft_diag *d, int64_t *errs, weft_sg **out) {
    weft_result res = WEFT_OK;
    weft_sg *g = NULL;
    conn_map map = {0};
    int64_t nerr = 0;
    *out = NULL;
    const int32_t N = a->ngpus;
    if (N < 1 || a->gpus == NULL) {
        weft_diag_add(d, WEFT_SEV_ERROR, a->file, a->line, 0, "the algorithm has no ranks");
        COUNT_ERR(STRUCTURE);
        WEFT_FAIL(WEFT_ERR_INPUT);
    }
    if (N >= (1 << 21)) {
        weft_diag_add(d, WEFT_SEV_ERROR, a->file, a->line, 0, "%d ranks are more than weft handles",
                      N);
        COUNT_ERR(STRUCTURE);
        WEFT_FAIL(WEFT_ERR_INPUT);
    }
    int32_t mult = weft_algo_size_mult(a);
    if (a->nchunksperloop < 1 || a->nchunksperloop % mult != 0) {
        weft_diag_add(d, WEFT_SEV_ERROR, a->file, a->line, 0,
                      "nchunksperloop=%d must be a positive multiple of %d for %s on %d ranks",
                      a->nchunksperloop, mult, weft_coll_name(a->coll), N);
        COUNT_ERR(STRUCTURE);
        WEFT_FAIL(WEFT_ERR_INPUT);
    }
    if (weft_coll_rooted(a->coll) && (a->root < 0 || a->root >= N)) {
        weft_diag_add(d, WEFT_SEV_ERROR, a->file, a->line, 0,
                      "root %d of %s is not a rank of the algorithm (0..%d)", a->root,
                      weft_coll_name(a->coll), N - 1);
        COUNT_ERR(STRUCTURE);
    }

    g = calloc(1, sizeof *g);
    WEFT_CHECK_ALLOC(g);
    g->a = a;
    g->nranks = N;
    g->k = a->nchunksperloop / mult;
    g->nin = (weft_coll_large(a->coll, WEFT_BUF_INPUT) ? N : 1) * g->k;
    g->nout = (weft_coll_large(a->coll, WEFT_BUF_OUTPUT) ? N : 1) * g->k;
    g->rank_tb = calloc((size_t)N + 1, sizeof *g->rank_tb);
    WEFT_CHECK_ALLOC(g->rank_tb);
    int64_t ntbs = 0, nsteps = 0;
    for (int32_t r = 0; r < N; r++) {
        const weft_gpu *gp = &a->gpus[r];
        g->rank_tb[r] = (int32_t)ntbs;
        if (gp->s_chunks < 0) {
            weft_diag_add(d, WEFT_SEV_ERROR, a->file, gp->line, 0,
                          "rank %d: s_chunks=%d is negative", r, gp->s_chunks);
            COUNT_ERR(STRUCTURE);
        } else if (gp->s_chunks > g->smax)
            g->smax = gp->s_chunks;
        ntbs += gp->ntbs;
        for (int32_t t = 0; t < gp->ntbs; t++)
            nsteps += gp->tbs[t].nsteps;
    }
    g->rank_tb[N] = (int32_t)ntbs;
    if (nsteps > INT32_MAX / 2 || ntbs > INT32_MAX / 2 ||
        (int64_t)g->nin + g->nout + g->smax > INT32_MAX / 2) {
        weft_diag_add(d, WEFT_SEV_ERROR, a->file, a->line, 0, "the schedule is too large");
        COUNT_ERR(STRUCTURE);
        WEFT_FAIL(WEFT_ERR_INPUT);
    }
    g->nlocs = g->nin + g->nout + g->smax;
    g->ntbs = (int32_t)ntbs;
    g->nsteps = (int32_t)nsteps;
    g->tbs = calloc((size_t)ntbs + 1, sizeof *g->tbs);
    g->steps = calloc((size_t)nsteps + 1, sizeof *g->steps);
    WEFT_CHECK_ALLOC(g->tbs);
    WEFT_CHECK_ALLOC(g->steps);

    /* tbs and connections */
    map.cap = 16;
    while (map.cap < 4 * (size_t)ntbs)
        map.cap *= 2;
    map.keys = calloc(map.cap, sizeof *map.keys);
    map.vals = malloc(map.cap * sizeof *map.vals);
    WEFT_CHECK_ALLOC(map.keys);
    WEFT_CHECK_ALLOC(map.vals);
    memset(map.vals, 0xff, map.cap * sizeof *map.vals);
    g->conns = calloc(2 * (size_t)ntbs + 1, sizeof *g->conns);
    WEFT_CHECK_ALLOC(g->conns);
    int32_t first = 0;
    for (int32_t r = 0; r < N; r++) {
        const weft_gpu *gp = &a->gpus[r];
        for (int32_t t = 0; t < gp->ntbs; t++) {
            const weft_tb *tb = &gp->tbs[t];
            int32_t gt = g->rank_tb[r] + t;
            weft_sg_tb *st = &g->tbs[gt];
            st->rank = r;
            st->local = t;
            st->first = first;
            st->nsteps = tb->nsteps;
            st->sconn = st->rconn = -1;
            first += tb->nsteps;
            int bad = 0;
            if (tb->send < -1 || tb->send >= N) {
                diag_tb(a, d, r, t, "send peer %d is not a rank (0..%d) or -1", tb->send, N - 1);
                COUNT_ERR(STRUCTURE);
                bad = 1;
            }
            if (tb->recv < -1 || tb->recv >= N) {
                diag_tb(a, d, r, t, "recv peer %d is not a rank (0..%d) or -1", tb->recv, N - 1);
                COUNT_ERR(STRUCTURE);
                bad = 1;
            }
            if (tb->chan < 0 || tb->chan >= (1 << 20)) {
                diag_tb(a, d, r, t, "channel %d is out of range", tb->chan);
                COUNT_ERR(STRUCTURE);
                bad = 1;
            }
            if (bad) continue;
            for (int dir = 0; dir < 2; dir++) {
                int32_t peer = dir == 0 ? tb->send : tb->recv;
                if (peer < 0) continue;
                int32_t src = dir == 0 ? r : peer, dst = dir == 0 ? peer : r;
                int32_t *slot = conn_slot(&map, conn_key(src, dst, tb->chan));
                if (*slot < 0) {
                    *slot = g->nconns++;
                    weft_sg_conn *c = &g->conns[*slot];
                    c->src = src;
                    c->dst = dst;
                    c->chan = tb->chan;
                    c->stb = c->rtb = -1;
                }
                weft_sg_conn *c = &g->conns[*slot];
                int32_t *end = dir == 0 ? &c->stb : &c->rtb;
                if (*end >= 0) {
                    diag_tb(a, d, r, t, "a second tb %s rank %d on channel %d (tb %d already does)",
                            dir == 0 ? "sending to" : "receiving from", peer, tb->chan,
                            g->tbs[*end].local);
                    COUNT_ERR(STRUCTURE);
                    continue;
                }
                *end = gt;
                if (dir == 0)
                    st->sconn = *slot;
                else
                    st->rconn = *slot;
            }
        }
    }

    /* steps */
    for (int32_t r = 0; r < N; r++) {
        const weft_gpu *gp = &a->gpus[r];
        for (int32_t t = 0; t < gp->ntbs; t++) {
            const weft_tb *tb = &gp->tbs[t];
            int32_t gt = g->rank_tb[r] + t;
            for (int32_t i = 0; i < tb->nsteps; i++) {
                const weft_step *s = &tb->steps[i];
                int32_t id = g->tbs[gt].first + i;
                weft_sg_step *gs = &g->steps[id];
                gs->ir = s;
                gs->rank = r;
                gs->tb = gt;
                gs->idx = i;
                gs->dep = gs->rconn = gs->sconn = gs->match = -1;
                gs->rmsg = gs->smsg = -1;
                if ((unsigned)s->type >= WEFT_STEP_COUNT) {
                    diag_step_ir(a, d, r, t, i, "unknown step type %d", (int)s->type);
                    COUNT_ERR(STRUCTURE);
                    continue;
                }
                unsigned f = weft_step_flags(s->type);
                gs->flags = f;
                const char *tn = weft_step_name(s->type);
                if ((f & WEFT_STEP_F_RECV) && tb->recv < 0) {
                    diag_step_ir(a, d, r, t, i, "'%s' receives, but the tb has no recv peer", tn);
                    COUNT_ERR(STRUCTURE);
                }
                if ((f & WEFT_STEP_F_SEND) && tb->send < 0) {
                    diag_step_ir(a, d, r, t, i, "'%s' sends, but the tb has no send peer", tn);
                    COUNT_ERR(STRUCTURE);
                }
                if (s->type != WEFT_STEP_NOP && s->cnt < 1) {
                    diag_step_ir(a, d, r, t, i, "cnt=%d: a '%s' step moves at least one chunk",
                                 s->cnt, tn);
                    COUNT_ERR(STRUCTURE);
                } else if (s->type != WEFT_STEP_NOP) {
                    weft_access ac[2];
                    int na = weft_step_accesses(s, ac);
                    for (int k = 0; k < na; k++) {
                        int side = ac[k].write; /* 0: its source, 1: its destination */
                        weft_buf b = (weft_buf)ac[k].buf;
                        int32_t off = ac[k].off;
                        if ((unsigned)b >= WEFT_BUF_COUNT) {
                            diag_step_ir(a, d, r, t, i, "unknown %s buffer",
                                         side == 0 ? "source" : "destination");
                            COUNT_ERR(STRUCTURE);
                            continue;
                        }
                        int32_t n = weft_sg_buf_chunks(g, r, b);
                        if (off < 0 || (int64_t)off + s->cnt > n) {
                            if (s->cnt == 1)
                                diag_step_ir(a, d, r, t, i,
                                             "%s %s chunk %d, but the %s has %d "
                                             "chunk%s",
                                             side == 0 ? "reads" : "writes", weft_buf_name(b), off,
                                             weft_buf_name(b), n, n == 1 ? "" : "s");
                            else
                                diag_step_ir(a, d, r, t, i,
                                             "%s %s chunks %d..%lld, but the %s "
                                             "has %d chunk%s",
                                             side == 0 ? "reads" : "writes", weft_buf_name(b), off,
                                             (long long)off + s->cnt - 1, weft_buf_name(b), n,
                                             n == 1 ? "" : "s");
                            COUNT_ERR(BOUNDS);
                        }
                    }
                }
                if (s->depid >= 0) {
                    if (s->depid >= gp->ntbs || s->deps < 0 ||
                        s->deps >= gp->tbs[s->depid].nsteps) {
                        diag_step_ir(a, d, r, t, i,
                                     "depends on tb %d step %d, which does not exist", s->depid,
                                     s->deps);
                        COUNT_ERR(STRUCTURE);
                    } else if (!gp->tbs[s->depid].steps[s->deps].hasdep) {
                        diag_step_ir(
                            a, d, r, t, i,
                            "depends on tb %d step %d, which lacks hasdep=\"1\" (the MSCCL "
                            "runtimes never signal its completion)",
                            s->depid, s->deps);
                        COUNT_ERR(STRUCTURE);
                    } else {
                        gs->dep = g->tbs[g->rank_tb[r] + s->depid].first + s->deps;
                    }
                } else if (s->depid < -1) {
                    diag_step_ir(a, d, r, t, i, "depid=%d is neither a tb nor -1", s->depid);
                    COUNT_ERR(STRUCTURE);
                }
                if ((f & WEFT_STEP_F_RECV) && g->tbs[gt].rconn >= 0) {
                    weft_sg_conn *c = &g->conns[g->tbs[gt].rconn];
                    gs->rconn = g->tbs[gt].rconn;
                    gs->rmsg = c->nrecv++;
                }
                if ((f & WEFT_STEP_F_SEND) && g->tbs[gt].sconn >= 0) {
                    weft_sg_conn *c = &g->conns[g->tbs[gt].sconn];
                    gs->sconn = g->tbs[gt].sconn;
                    gs->smsg = c->nsend++;
                }
            }
        }
    }

    /* message lists, then matching */
    for (int32_t c = 0; c < g->nconns; c++) {
        weft_sg_conn *cn = &g->conns[c];
        cn->sends = malloc(((size_t)cn->nsend + 1) * sizeof *cn->sends);
        cn->recvs = malloc(((size_t)cn->nrecv + 1) * sizeof *cn->recvs);
        WEFT_CHECK_ALLOC(cn->sends);
        WEFT_CHECK_ALLOC(cn->recvs);
        cn->nsend = cn->nrecv = 0;
    }
    for (int32_t s = 0; s < g->nsteps; s++) {
        weft_sg_step *gs = &g->steps[s];
        if (gs->rconn >= 0) g->conns[gs->rconn].recvs[g->conns[gs->rconn].nrecv++] = s;
        if (gs->sconn >= 0) g->conns[gs->sconn].sends[g->conns[gs->sconn].nsend++] = s;
    }
    for (int32_t c = 0; c < g->nconns; c++) {
        weft_sg_conn *cn = &g->conns[c];
        char other[96];
        if (cn->stb < 0 && cn->nrecv > 0) {
            weft_sg_diag_step(g, d, WEFT_SEV_ERROR, cn->recvs[0],
                              "receives from rank %d on channel %d, but no tb of rank %d sends to "
                              "rank %d on channel %d",
                              cn->src, cn->chan, cn->src, cn->dst, cn->chan);
            COUNT_ERR(MATCH);
            continue;
        }
        if (cn->rtb < 0 && cn->nsend > 0) {
            weft_sg_diag_step(g, d, WEFT_SEV_ERROR, cn->sends[0],
                              "sends to rank %d on channel %d, but no tb of rank %d receives from "
                              "rank %d on channel %d",
                              cn->dst, cn->chan, cn->dst, cn->src, cn->chan);
            COUNT_ERR(MATCH);
            continue;
        }
        int32_t n = cn->nsend < cn->nrecv ? cn->nsend : cn->nrecv;
        for (int32_t m = 0; m < n; m++) {
            int32_t rs = cn->recvs[m], ss = cn->sends[m];
            g->steps[rs].match = ss;
            int32_t rc = weft_sg_ir_step(g, rs)->cnt, sc = weft_sg_ir_step(g, ss)->cnt;
            if (rc != sc) {
                step_ref(g, ss, other, sizeof other);
                weft_sg_diag_step(g, d, WEFT_SEV_ERROR, rs,
                                  "receives %d chunk%s as message %d from rank %d on channel %d, "
                                  "but its send, %s, sends %d",
                                  rc, rc == 1 ? "" : "s", m, cn->src, cn->chan, other, sc);
                COUNT_ERR(MATCH);
            }
        }
        if (cn->nsend > cn->nrecv) {
            weft_sg_diag_step(g, d, WEFT_SEV_ERROR, cn->sends[n],
                              "sends message %d to rank %d on channel %d, which is never received "
                              "(rank %d sends %d message%s on this connection, rank %d receives "
                              "%d)",
                              n, cn->dst, cn->chan, cn->src, cn->nsend, cn->nsend == 1 ? "" : "s",
                              cn->dst, cn->nrecv);
            COUNT_ERR(MATCH);
        } else if (cn->nrecv > cn->nsend) {
            weft_sg_diag_step(g, d, WEFT_SEV_ERROR, cn->recvs[n],
                              "receives message %d from rank %d on channel %d, which is never sent "
                              "(rank %d sends %d message%s on this connection, rank %d receives "
                              "%d)",
                              n, cn->src, cn->chan, cn->src, cn->nsend, cn->nsend == 1 ? "" : "s",
                              cn->dst, cn->nrecv);
            COUNT_ERR(MATCH);
        }
    }
    if (nerr) WEFT_FAIL(WEFT_ERR_INPUT);
    *out = g;
    g = NULL;
fail:
    free(map.vals);
    free(map.keys);
    weft_sg_free(g);
    return res;
}

weft_result weft_sg_validate(const weft_algo *a, weft_diag *d, int64_t *errs) {
    weft_diag *vd = weft_diag_new();
    if (vd == NULL) return WEFT_ERR_NOMEM;
    weft_result vr = weft_ir_validate(a, vd);
    if (vr != WEFT_OK) {
        for (size_t i = 0; i < weft_diag_size(vd); i++) {
            const weft_diag_entry *e = weft_diag_get(vd, i);
            if (e->sev == WEFT_SEV_ERROR)
                weft_diag_add(d, e->sev, e->file, e->line, e->col, "%s", e->msg);
        }
        size_t n = weft_diag_count(vd, WEFT_SEV_ERROR);
        if (errs) errs[WEFT_VERIFY_STRUCTURE] += n ? (int64_t)n : 1;
        if (vr != WEFT_ERR_NOMEM) vr = WEFT_ERR_INPUT;
    }
    weft_diag_free(vd);
    return vr;
}

/* The output of a non-root rank of reduce and gather, and the input of a non-root rank of
 * broadcast and scatter, are not part of the call (NCCL ignores those pointers); in-place
 * broadcast and reduce alias the two on every rank, so there the buffer exists. */
int weft_sg_buf_exists(const weft_sg *g, int inplace, int32_t rank, weft_buf b) {
    return weft_buf_exists(g->a->coll, g->a->root, inplace, rank, b);
}

int weft_sg_aliased(const weft_sg *g, int inplace, int32_t rank) {
    return weft_buf_aliased(g->a->coll, g->a->root, inplace, rank);
}

/* Locations name memory: where input and output are one memory, by the input chunk there when
 * there is one (its initial value), else by the output chunk. */
int32_t weft_sg_loc(const weft_sg *g, int inplace, int32_t rank, weft_buf b, int32_t x) {
    if ((unsigned)b >= WEFT_BUF_COUNT || !weft_sg_buf_exists(g, inplace, rank, b)) return -1;
    if (b == WEFT_BUF_SCRATCH) return g->nin + g->nout + x;
    if (b == WEFT_BUF_INPUT) return x;
    if (!weft_sg_aliased(g, inplace, rank)) return g->nin + x;
    int32_t si, so;
    int mi = weft_buf_mem(g->a->coll, 1, rank, WEFT_BUF_INPUT, &si);
    int mo = weft_buf_mem(g->a->coll, 1, rank, WEFT_BUF_OUTPUT, &so);
    int32_t at = so * g->k + x - si * g->k; /* the output chunk's position in input chunks */
    return mi == mo && at >= 0 && at < g->nin ? at : g->nin + x;
}

weft_result weft_sg_check_mode(const weft_sg *g, int inplace, weft_diag *d, int64_t *errs) {
    int64_t nerr = 0;
    for (int32_t s = 0; s < g->nsteps; s++) {
        const weft_sg_step *gs = &g->steps[s];
        const weft_step *st = weft_sg_ir_step(g, s);
        weft_access ac[2];
        int na = weft_step_accesses(st, ac);
        for (int k = 0; k < na; k++) {
            int side = ac[k].write;
            weft_buf b = (weft_buf)ac[k].buf;
            if (weft_sg_buf_exists(g, inplace, gs->rank, b)) continue;
            weft_sg_diag_step(g, d, WEFT_SEV_ERROR, s,
                              "%s the %s buffer, which a non-root rank of %s does not have "
                              "(root=\"%d\", %s)",
                              side == 0 ? "reads" : "writes", weft_buf_name(b),
                              weft_coll_name(g->a->coll), g->a->root,
                              inplace ? "in-place" : "out-of-place");
            COUNT_ERR(BOUNDS);
        }
        /* NCCL's send buffer is const: in an out-of-place call the caller (or another rank, in a
         * zero-copy transport) may read it while the collective runs, so no step may write it,
         * not even to put back what was there */
        if (!inplace && (gs->flags & WEFT_STEP_F_WRITE) && st->dstbuf == WEFT_BUF_INPUT &&
            weft_sg_buf_exists(g, 0, gs->rank, WEFT_BUF_INPUT)) {
            weft_sg_diag_step(g, d, WEFT_SEV_ERROR, s,
                              "writes input chunk %d, but the input is NCCL's const send buffer in "
                              "an out-of-place call%s",
                              st->dstoff,
                              g->a->inplace && g->a->outofplace ? " (out-of-place)" : "");
            COUNT_ERR(BOUNDS);
        }
    }
    return nerr ? WEFT_ERR_INPUT : WEFT_OK;
}

/* ---- the engine ------------------------------------------------------------------------ */

void weft_sg_run_free(weft_sg_run *r) {
    free(r->pc);
    free(r->wait_tb);
    free(r->wait_need);
    free(r->wait_why);
    free(r->ready);
    free(r->whead);
    free(r->wnext);
    r->pc = r->wait_tb = r->wait_need = r->ready = r->whead = r->wnext = NULL;
    r->wait_why = NULL;
}

static uint64_t rng_next(uint64_t *s) {
    uint64_t x = *s;
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    return *s = x;
}

weft_result weft_sg_run_exec(const weft_sg *g, weft_sg_run *r) {
    weft_result res = WEFT_OK;
    const int32_t T = g->ntbs;
    size_t n = (size_t)T + 1;
    r->nfired = 0;
    r->stalled = 0;
    r->pc = calloc(n, sizeof *r->pc);
    r->wait_tb = malloc(n * sizeof *r->wait_tb);
    r->wait_need = calloc(n, sizeof *r->wait_need);
    r->wait_why = calloc(n, sizeof *r->wait_why);
    r->ready = malloc(n * sizeof *r->ready);
    r->whead = malloc(n * sizeof *r->whead);
    r->wnext = malloc(n * sizeof *r->wnext);
    WEFT_CHECK_ALLOC(r->pc);
    WEFT_CHECK_ALLOC(r->wait_tb);
    WEFT_CHECK_ALLOC(r->wait_need);
    WEFT_CHECK_ALLOC(r->wait_why);
    WEFT_CHECK_ALLOC(r->ready);
    WEFT_CHECK_ALLOC(r->whead);
    WEFT_CHECK_ALLOC(r->wnext);
    int32_t *pc = r->pc, *q = r->ready;
    for (int32_t t = 0; t < T; t++) {
        r->wait_tb[t] = r->whead[t] = r->wnext[t] = -1;
    }
    /* q is a ring of the tbs that may progress; each tb is in it at most once */
    int32_t qh = 0, qn = 0;
    for (int32_t t = 0; t < T; t++)
        if (g->tbs[t].nsteps > 0) q[qn++] = t;
    uint64_t rng = r->seed ? r->seed * 0x9E3779B97F4A7C15ull | 1 : 0;
    while (qn > 0) {
        if (rng) {
            int32_t j = (int32_t)(rng_next(&rng) % (uint64_t)qn);
            int32_t pos = (qh + j) % T, tmp = q[pos];
            q[pos] = q[qh];
            q[qh] = tmp;
        }
        int32_t t = q[qh];
        qh = (qh + 1) % T;
        qn--;
    again:;
        const weft_sg_tb *tb = &g->tbs[t];
        int32_t sid = tb->first + pc[t];
        const weft_sg_step *s = &g->steps[sid];
        int32_t on = -2, need = 0;
        uint8_t why = WEFT_SG_WAIT_NONE;
        if (s->dep >= 0) {
            const weft_sg_step *ds = &g->steps[s->dep];
            if (pc[ds->tb] <= ds->idx) on = ds->tb, need = ds->idx + 1, why = WEFT_SG_WAIT_DEP;
        }
        if (on == -2 && (s->flags & WEFT_STEP_F_RECV)) {
            if (s->match < 0)
                on = -1, why = WEFT_SG_WAIT_MSG;
            else {
                const weft_sg_step *ms = &g->steps[s->match];
                if (pc[ms->tb] <= ms->idx) on = ms->tb, need = ms->idx + 1, why = WEFT_SG_WAIT_MSG;
            }
        }
        if (on == -2 && (s->flags & WEFT_STEP_F_SEND) && r->fifo > 0 && s->sconn >= 0 &&
            s->smsg >= r->fifo) {
            const weft_sg_conn *c = &g->conns[s->sconn];
            int32_t j = s->smsg - r->fifo;
            if (j >= c->nrecv)
                on = -1, why = WEFT_SG_WAIT_SLOT;
            else {
                const weft_sg_step *rs = &g->steps[c->recvs[j]];
                if (pc[rs->tb] <= rs->idx) on = rs->tb, need = rs->idx + 1, why = WEFT_SG_WAIT_SLOT;
            }
        }
        if (on != -2) {
            r->wait_tb[t] = on;
            r->wait_need[t] = need;
            r->wait_why[t] = why;
            if (on >= 0) {
                r->wnext[t] = r->whead[on];
                r->whead[on] = t;
            }
            continue;
        }
        if (r->fire) {
            int rc = r->fire(r->user, sid);
            if (rc != 0) WEFT_FAIL((weft_result)rc);
        }
        if (r->order) r->order[r->nfired] = sid;
        r->nfired++;
        pc[t]++;
        r->wait_why[t] = WEFT_SG_WAIT_NONE;
        r->wait_tb[t] = -1;
        /* wake the tbs waiting for this one to get this far */
        int32_t *link = &r->whead[t];
        while (*link >= 0) {
            int32_t w = *link;
            if (r->wait_need[w] <= pc[t]) {
                *link = r->wnext[w];
                r->wnext[w] = -1;
                r->wait_tb[w] = -1;
                r->wait_why[w] = WEFT_SG_WAIT_NONE;
                q[(qh + qn) % T] = w;
                qn++;
            } else {
                link = &r->wnext[w];
            }
        }
        if (pc[t] < tb->nsteps) {
            if (r->burst) goto again;
            q[(qh + qn) % T] = t;
            qn++;
        }
    }
    for (int32_t t = 0; t < T; t++)
        if (pc[t] < g->tbs[t].nsteps) r->stalled = 1;
fail:
    return res;
}

void weft_sg_describe_wait(const weft_sg *g, const weft_sg_run *r, int32_t t, char *buf,
                           size_t len) {
    const weft_sg_tb *tb = &g->tbs[t];
    const weft_sg_step *s = &g->steps[tb->first + r->pc[t]];
    char other[96] = "";
    switch (r->wait_why[t]) {
    case WEFT_SG_WAIT_DEP:
        step_ref(g, s->dep, other, sizeof other);
        snprintf(buf, len, "waits for its dependency, %s", other);
        break;
    case WEFT_SG_WAIT_MSG: {
        const weft_sg_conn *c = &g->conns[s->rconn];
        if (s->match < 0) {
            snprintf(buf, len,
                     "waits for message %d from rank %d on channel %d, which no step "
                     "sends",
                     s->rmsg, c->src, c->chan);
        } else {
            step_ref(g, s->match, other, sizeof other);
            snprintf(buf, len, "waits for message %d from rank %d on channel %d, sent by %s",
                     s->rmsg, c->src, c->chan, other);
        }
        break;
    }
    case WEFT_SG_WAIT_SLOT: {
        const weft_sg_conn *c = &g->conns[s->sconn];
        int32_t j = s->smsg - r->fifo;
        if (j >= c->nrecv) {
            snprintf(buf, len,
                     "waits for a free slot to send message %d to rank %d on channel "
                     "%d, but message %d is never received",
                     s->smsg, c->dst, c->chan, j);
        } else {
            step_ref(g, c->recvs[j], other, sizeof other);
            snprintf(buf, len,
                     "waits for a free slot to send message %d to rank %d on channel "
                     "%d (%d message%s unreceived), freed when %s receives message %d",
                     s->smsg, c->dst, c->chan, r->fifo, r->fifo == 1 ? "" : "s", other, j);
        }
        break;
    }
    default: snprintf(buf, len, "is not blocked"); break;
    }
}

int weft_sg_report_cycles(const weft_sg *g, const weft_sg_run *r, weft_diag *d, const char *what,
                          int max_cycles) {
    const int32_t T = g->ntbs;
    int32_t *mark = malloc(((size_t)T + 1) * sizeof *mark);
    int found = 0;
    if (mark == NULL) {
        weft_diag_add(d, WEFT_SEV_ERROR, g->a->file, 0, 0, "%s (out of memory describing it)",
                      what);
        return 1;
    }
    for (int32_t t = 0; t < T; t++)
        mark[t] = -1;
    for (int32_t t0 = 0; t0 < T; t0++) {
        if (mark[t0] >= 0 || r->pc[t0] >= g->tbs[t0].nsteps) continue;
        int32_t t = t0;
        while (t >= 0 && mark[t] < 0 && r->pc[t] < g->tbs[t].nsteps) {
            mark[t] = t0;
            t = r->wait_tb[t];
        }
        if (t < 0 || mark[t] != t0) continue; /* ends outside, or in a cycle already seen */
        /* t is on a new cycle: list it starting at its lowest tb */
        int32_t n = 0, lo = t, u = t;
        do {
            n++;
            if (u < lo) lo = u;
            u = r->wait_tb[u];
        } while (u != t);
        found++;
        if (found > max_cycles) continue;
        int32_t s0 = g->tbs[lo].first + r->pc[lo];
        weft_sg_diag_step(g, d, WEFT_SEV_ERROR, s0,
                          "%s: a cycle of %d wait%s that no interleaving breaks", what, n,
                          n == 1 ? "" : "s");
        u = lo;
        do {
            char buf[320], name[64];
            int32_t su = g->tbs[u].first + r->pc[u];
            weft_sg_describe_wait(g, r, u, buf, sizeof buf);
            weft_sg_step_name(g, su, name, sizeof name);
            weft_diag_add(d, WEFT_SEV_NOTE, g->a->file, weft_sg_ir_step(g, su)->line, 0,
                          "%s ('%s') %s", name, weft_step_name(weft_sg_ir_step(g, su)->type), buf);
            u = r->wait_tb[u];
        } while (u != lo);
    }
    if (found > max_cycles)
        weft_diag_add(d, WEFT_SEV_NOTE, g->a->file, 0, 0, "%d more cycles not shown",
                      found - max_cycles);
    free(mark);
    return found;
}
