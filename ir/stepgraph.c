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

void weft_sg_diag_step(const weft_sg *g, weft_diag *d, weft_severity sev, int32_t step,
                       const char *fmt, ...) {
    if (d == NULL) return;
    char name[64];
    weft_sg_step_name(g, step, name, sizeof name);
    int line = weft_sg_ir_step(g, step)->line;
    if (weft_diag_full(d)) { /* only counted: nothing to format */
        weft_diag_add(d, sev, g->a->file, line, 0, "%s", name);
        return;
    }
    va_list ap;
    va_start(ap, fmt);
    char *msg = weft_vasprintf(fmt, ap);
    va_end(ap);
    weft_diag_add(d, sev, g->a->file, line, 0, "%s: %s", name,
                  msg ? msg : "(out of memory formatting a message)");
    free(msg);
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
    case WEFT_BUF_COUNT: break;
    }
    return 0; /* not a buffer */
}

static uint64_t conn_key(int32_t src, int32_t dst, int32_t chan) {
    return ((uint64_t)(uint32_t)src << 42) | ((uint64_t)(uint32_t)dst << 21) | (uint32_t)chan;
}

/* The algorithm passed weft_ir_validate (weft_sg_validate), which every caller runs first: ids,
 * peers, channels, one tb per connection end, step types allowed by the tb's peers, counts,
 * dependencies and bounds are as the graph needs them. What is left to check here is what
 * validation does not: that the messages of each connection pair up. */
weft_result weft_sg_build(const weft_algo *a, weft_diag *d, int64_t *errs, weft_sg **out) {
    weft_result res = WEFT_OK;
    weft_sg *g = NULL;
    weft_map conn_of = {0}; /* conn_key -> connection index + 1 */
    int64_t nerr = 0;
    *out = NULL;
    const int32_t N = a->ngpus;
    g = calloc(1, sizeof *g);
    WEFT_CHECK_ALLOC(g);
    g->a = a;
    g->nranks = N;
    g->k = weft_algo_chunks_per_seg(a);
    g->nin = weft_coll_segs(a->coll, WEFT_BUF_INPUT, N) * g->k;
    g->nout = weft_coll_segs(a->coll, WEFT_BUF_OUTPUT, N) * g->k;
    g->rank_tb = calloc((size_t)N + 1, sizeof *g->rank_tb);
    WEFT_CHECK_ALLOC(g->rank_tb);
    int64_t ntbs = 0, nsteps = 0;
    for (int32_t r = 0; r < N; r++) {
        const weft_gpu *gp = &a->gpus[r];
        g->rank_tb[r] = (int32_t)ntbs;
        if (gp->s_chunks > g->smax) g->smax = gp->s_chunks;
        ntbs += gp->ntbs;
        for (int32_t t = 0; t < gp->ntbs; t++)
            nsteps += gp->tbs[t].nsteps;
    }
    g->rank_tb[N] = (int32_t)ntbs;
    g->nlocs = g->nin + g->nout + g->smax;
    g->ntbs = (int32_t)ntbs;
    g->nsteps = (int32_t)nsteps;
    g->tbs = calloc((size_t)ntbs + 1, sizeof *g->tbs);
    g->steps = calloc((size_t)nsteps + 1, sizeof *g->steps);
    g->conns = calloc(2 * (size_t)ntbs + 1, sizeof *g->conns);
    WEFT_CHECK_ALLOC(g->tbs);
    WEFT_CHECK_ALLOC(g->steps);
    WEFT_CHECK_ALLOC(g->conns);

    /* tbs and connections */
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
            for (int dir = 0; dir < 2; dir++) {
                int32_t peer = dir == 0 ? tb->send : tb->recv;
                if (peer < 0) continue;
                int32_t src = dir == 0 ? r : peer, dst = dir == 0 ? peer : r;
                int added = 0;
                uint64_t *slot = weft_map_put(&conn_of, conn_key(src, dst, tb->chan), &added);
                WEFT_CHECK_ALLOC(slot);
                if (added) {
                    weft_sg_conn *c = &g->conns[g->nconns];
                    c->src = src;
                    c->dst = dst;
                    c->chan = tb->chan;
                    c->stb = c->rtb = -1;
                    *slot = (uint64_t)++g->nconns;
                }
                int32_t ci = (int32_t)*slot - 1;
                *(dir == 0 ? &g->conns[ci].stb : &g->conns[ci].rtb) = gt;
                *(dir == 0 ? &st->sconn : &st->rconn) = ci;
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
                unsigned f = weft_step_flags(s->type);
                gs->ir = s;
                gs->rank = r;
                gs->tb = gt;
                gs->idx = i;
                gs->flags = f;
                gs->rconn = gs->sconn = gs->match = -1;
                gs->rmsg = gs->smsg = -1;
                gs->dep = s->depid >= 0 ? g->tbs[g->rank_tb[r] + s->depid].first + s->deps : -1;
                if (f & WEFT_STEP_F_RECV) {
                    gs->rconn = g->tbs[gt].rconn;
                    gs->rmsg = g->conns[gs->rconn].nrecv++;
                }
                if (f & WEFT_STEP_F_SEND) {
                    gs->sconn = g->tbs[gt].sconn;
                    gs->smsg = g->conns[gs->sconn].nsend++;
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
        /* an end without a tb at the other one: its first message names the problem */
        int recv = cn->stb < 0 && cn->nrecv > 0, send = !recv && cn->rtb < 0 && cn->nsend > 0;
        if (recv || send) {
            int32_t me = recv ? cn->dst : cn->src, peer = recv ? cn->src : cn->dst;
            weft_sg_diag_step(g, d, WEFT_SEV_ERROR, recv ? cn->recvs[0] : cn->sends[0],
                              "%s rank %d on channel %d, but no tb of rank %d %s rank %d on "
                              "channel %d",
                              recv ? "receives from" : "sends to", peer, cn->chan, peer,
                              recv ? "sends to" : "receives from", me, cn->chan);
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
        if (cn->nsend != cn->nrecv) { /* the first message without a partner */
            int extra_send = cn->nsend > cn->nrecv;
            weft_sg_diag_step(g, d, WEFT_SEV_ERROR, extra_send ? cn->sends[n] : cn->recvs[n],
                              "%s message %d %s rank %d on channel %d, which is never %s (rank %d "
                              "sends %d message%s on this connection, rank %d receives %d)",
                              extra_send ? "sends" : "receives", n, extra_send ? "to" : "from",
                              extra_send ? cn->dst : cn->src, cn->chan,
                              extra_send ? "received" : "sent", cn->src, cn->nsend,
                              cn->nsend == 1 ? "" : "s", cn->dst, cn->nrecv);
            COUNT_ERR(MATCH);
        }
    }
    if (nerr) WEFT_FAIL(WEFT_ERR_INPUT);
    *out = g;
    g = NULL;
fail:
    weft_map_free(&conn_of);
    weft_sg_free(g);
    return res;
}

weft_result weft_sg_validate(const weft_algo *a, weft_diag *d, int64_t *errs) {
    if (weft_proven_valid(a)) return WEFT_OK; /* valid: there would be no error to copy */
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
        /* what NCCL never writes may not be written, not even to put back what was there
         * (weft_chunk_writable): the input outside the output, a non-root rank's buffers of
         * reduce and gather */
        if (!(gs->flags & WEFT_STEP_F_WRITE) || st->dstbuf == WEFT_BUF_SCRATCH ||
            !weft_sg_buf_exists(g, inplace, gs->rank, st->dstbuf))
            continue;
        int32_t x = st->dstoff;
        while (x < st->dstoff + st->cnt &&
               weft_chunk_writable(g->a->coll, g->a->root, inplace, gs->rank, g->k, st->dstbuf, x))
            x++;
        if (x == st->dstoff + st->cnt) continue;
        const char *both =
            g->a->inplace && g->a->outofplace ? (inplace ? " (in-place)" : " (out-of-place)") : "";
        if (!weft_output_written(g->a->coll, g->a->root, gs->rank))
            weft_sg_diag_step(g, d, WEFT_SEV_ERROR, s,
                              "writes %s chunk %d of a non-root rank of %s (root=\"%d\"), whose "
                              "buffers NCCL never writes%s%s",
                              weft_buf_name(st->dstbuf), x, weft_coll_name(g->a->coll), g->a->root,
                              inplace && weft_sg_buf_exists(g, 1, gs->rank, WEFT_BUF_OUTPUT)
                                  ? ": in place its receive buffer is its send buffer"
                                  : "",
                              both);
        else if (!inplace)
            weft_sg_diag_step(g, d, WEFT_SEV_ERROR, s,
                              "writes input chunk %d, but the input is NCCL's const send buffer "
                              "in an out-of-place call%s",
                              x, both);
        else
            weft_sg_diag_step(g, d, WEFT_SEV_ERROR, s,
                              "writes input chunk %d, outside the rank's output (input chunks "
                              "%d..%d): in an in-place %s the rest of the input is the "
                              "application's send buffer, which must not change%s",
                              x, gs->rank * g->k, gs->rank * g->k + g->k - 1,
                              weft_coll_name(g->a->coll), both);
        COUNT_ERR(BOUNDS);
    }
    return nerr ? WEFT_ERR_INPUT : WEFT_OK;
}

/* ---- the engine ------------------------------------------------------------------------ */

void weft_sg_run_free(weft_sg_run *r) {
    WEFT_FREE(r->pc);
    WEFT_FREE(r->wait_tb);
    WEFT_FREE(r->wait_need);
    WEFT_FREE(r->wait_why);
    WEFT_FREE(r->ready);
    WEFT_FREE(r->whead);
    WEFT_FREE(r->wnext);
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

int32_t weft_sg_depths(const weft_sg *g, const int32_t *order, int32_t *depth, int32_t *pred) {
    int32_t best = 0;
    for (int32_t i = 0; i < g->nsteps; i++) {
        int32_t sid = order[i];
        const weft_sg_step *st = &g->steps[sid];
        int32_t v = 0, p = -1;
        if (st->idx > 0 && depth[sid - 1] > v) v = depth[sid - 1], p = sid - 1;
        if (st->dep >= 0 && depth[st->dep] > v) v = depth[st->dep], p = st->dep;
        if (st->match >= 0 && depth[st->match] > v) v = depth[st->match], p = st->match;
        depth[sid] = v + 1;
        if (pred) pred[sid] = p;
        if (depth[sid] > best) best = depth[sid];
    }
    return best;
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

weft_result weft_sg_linearize(const weft_sg *g, int32_t *order, weft_sg_run *r) {
    r->order = order;
    r->burst = 1;
    return weft_sg_run_exec(g, r);
}
