/* sim.c — the timing model of the interpreter (sim.h): each tb walks its steps slice by slice; a
 * step waits for its dependency, its message and its FIFO credit, then moves its bytes. */
#include "sim.h"

#include <stdlib.h>
#include <string.h>

void weft_sim_model_default(weft_sim_model *m) {
    memset(m, 0, sizeof *m);
    m->count = 1 << 20;
    m->dtype = WEFT_DTYPE_FLOAT;
    m->slots = 8;
    m->late_rank = -1;
    /* Calibrated against the 2-GPU measurements of docs/estimate.md (the library's allreduce
     * files on NVLink, 8 B - 128 MB); each figure's source is there. */
    m->launch_ns = 4578;
    m->cta_ns = 4; /* more CTAs cost close to nothing measurable (docs/estimate.md) */
    m->sig_ns = 450;
    m->tb_stagger_ns = 0;
    m->step_gap_ns = 0;
    m->link_Bpns = 336;
    m->gpu_Bpns = 336; /* 2 GPUs: one peer, the ports are the link */
    m->max_ctas = 128;
    m->proto[WEFT_PROTO_SIMPLE] = (weft_sim_proto){1870, 950, 20.0, 1.0};
    m->proto[WEFT_PROTO_LL] = (weft_sim_proto){446, 55, 233.2, 0.5};
    /* LL128: LL's latency and step (a line's flag is polled as LL's), 15 data bytes of 16 */
    m->proto[WEFT_PROTO_LL128] = (weft_sim_proto){446, 55, 233.2, 120.0 / 128.0};
    /* a protocol the runtime runs as another is priced as that one */
    for (int p = 0; p < WEFT_PROTO_COUNT; p++)
        m->proto[p] = m->proto[weft_proto_runs_as((weft_proto)p)];
}

void weft_sim_tb_steps(const weft_algo *a, int32_t r, int32_t b, weft_trace_step *steps) {
    const weft_gpu *g = &a->gpus[r];
    const weft_tb *x = &g->tbs[b];
    for (int s = 0; s < x->nsteps; s++) {
        const weft_step *xs = &x->steps[s];
        steps[s] = (weft_trace_step){xs->type,
                                     xs->srcbuf,
                                     xs->srcoff,
                                     xs->dstbuf,
                                     xs->dstoff,
                                     xs->cnt,
                                     1,
                                     s,
                                     xs->depid,
                                     xs->depid >= 0 ? g->tbs[xs->depid].nsteps : 0,
                                     xs->depid >= 0 ? xs->deps + 1 : 0,
                                     xs->hasdep ? s + 1 : 0};
    }
}

/* The elements of chunk x the slice [e0, e0 + E) holds (a scratch chunk is always whole). */
static int64_t valid(const weft_algo *a, int64_t count, int64_t C, int32_t buf, int32_t x,
                     int64_t e0, int64_t E) {
    if (buf == WEFT_BUF_SCRATCH) return E;
    int64_t v = weft_chunk_valid(count, weft_algo_chunks_per_seg(a), C, x) - e0;
    return v < 0 ? 0 : v < E ? v : E;
}

/* The runtime's cut of a call (runtime/call_geom.c, weft_call_geometry): slices of a FIFO slot's
 * data (LL carries 8 data bytes per 16) as weft_proto_slice cuts them; a tb runs on up to
 * max_ctas / tbs CTAs (at most 32), each taking every K-th slice. The model runs a tb's K slices at
 * once: *niter rounds of *slice elements, K x one CTA's bandwidth. */
static void runtime_cut(const weft_algo *a, const weft_sim_model *m, int64_t C, int32_t *niter,
                        int64_t *slice, int32_t *group) {
    int32_t esz = weft_dtype_size((weft_dtype)m->dtype);
    int32_t ke = weft_coll_reduces(a->coll) ? esz : 1, maxtbs = 1;
    /* as the runtime's plan: a local step's chunks never pass through a slot */
    int32_t maxcnt = weft_algo_msg_chunks(a);
    for (int r = 0; r < a->ngpus; r++)
        if (a->gpus[r].ntbs > maxtbs) maxtbs = a->gpus[r].ntbs;
    int32_t max_ctas = m->max_ctas > 0 ? m->max_ctas : 128;
    int64_t kmax = max_ctas / maxtbs;
    kmax = kmax > 32 ? 32 : kmax < 1 ? 1 : kmax;
    int64_t Cb = C * esz / ke; /* the chunk in units of ke bytes */
    int64_t V = 16 / ke;
    int32_t slots, slot_bytes;
    int64_t collapse;
    weft_proto_defaults(a->proto, &slots, &slot_bytes, &collapse);
    /* the runtime's default FIFO */
    int64_t emax = weft_proto_chunk_data(a->proto, slot_bytes, maxcnt) / ke;
    emax -= emax % V;
    if (emax < V) emax = V;
    int64_t E = weft_proto_slice(a->proto, Cb, ke, emax, 0, kmax);
    int64_t n = (Cb + E - 1) / E;
    int64_t K = n < kmax ? n : kmax;
    *group = (int32_t)K;
    *niter = (int32_t)((n + K - 1) / K);
    *slice = K * E * ke / esz;
    if (*slice < 1) *slice = 1;
}

void weft_sim_free(weft_sim *s) {
    if (s == NULL) return;
    for (size_t i = 0; i < s->ntbs; i++)
        free(s->tbs[i].e);
    free(s->tbs);
    memset(s, 0, sizeof *s);
}

/* The tb of rank r with index b in s, or NULL (tbs are rank-major: first[r] is rank r's first). */
static weft_sim_tb *tb_of(weft_sim *s, const size_t *first, int32_t r, int32_t b) {
    size_t i = first[r] + (size_t)b;
    return i < first[r + 1] ? &s->tbs[i] : NULL;
}

/* Where the executions of messages and posts stand, so that a step finds what it waits for in
 * constant (messages) or logarithmic (posts) time, whatever the schedule's length: per tb, the
 * tb of the peer that sends it its messages (tx) and the one that receives its own (rx), and the
 * execution index of each of its sends, receives and posts so far, in order. */
typedef struct sim_index {
    int32_t *tx, *rx;          /* per tb: global index of the peer's tb, -1 none */
    int32_t **sx, **rxe, **px; /* per tb: executions of its sends, receives, posts */
    int64_t *ns, *nrc, *np;    /* how many of each are placed */
} sim_index;

static void index_free(sim_index *x, size_t ntr) {
    for (size_t i = 0; i < ntr; i++) {
        if (x->sx) free(x->sx[i]);
        if (x->rxe) free(x->rxe[i]);
        if (x->px) free(x->px[i]);
    }
    free(x->tx), free(x->rx), free(x->sx), free(x->rxe), free(x->px);
    free(x->ns), free(x->nrc), free(x->np);
}

/* The global index of the tb of rank peer that sends to (want_send) or receives from rank on
 * chan, or -1. */
static int32_t peer_tb(const weft_algo *a, const size_t *first, int32_t peer, int32_t rank,
                       int32_t chan, int want_send) {
    if (peer < 0 || peer >= a->ngpus) return -1;
    const weft_gpu *g = &a->gpus[peer];
    for (int32_t b = 0; b < g->ntbs; b++)
        if ((want_send ? g->tbs[b].send : g->tbs[b].recv) == rank && g->tbs[b].chan == chan)
            return (int32_t)(first[peer] + (size_t)b);
    return -1;
}

static weft_result index_init(sim_index *x, const weft_algo *a, const weft_sim *s,
                              const size_t *first, int32_t niter) {
    size_t ntr = s->ntbs;
    memset(x, 0, sizeof *x);
    x->tx = calloc(ntr + 1, sizeof *x->tx), x->rx = calloc(ntr + 1, sizeof *x->rx);
    x->sx = calloc(ntr + 1, sizeof *x->sx), x->rxe = calloc(ntr + 1, sizeof *x->rxe);
    x->px = calloc(ntr + 1, sizeof *x->px);
    x->ns = calloc(ntr + 1, sizeof *x->ns), x->nrc = calloc(ntr + 1, sizeof *x->nrc);
    x->np = calloc(ntr + 1, sizeof *x->np);
    if (!x->tx || !x->rx || !x->sx || !x->rxe || !x->px || !x->ns || !x->nrc || !x->np)
        return WEFT_ERR_NOMEM;
    for (size_t i = 0; i < ntr; i++) {
        const weft_sim_tb *t = &s->tbs[i];
        const weft_tb *tb = &a->gpus[t->rank].tbs[t->tb];
        x->tx[i] = peer_tb(a, first, tb->recv, t->rank, tb->chan, 1);
        x->rx[i] = peer_tb(a, first, tb->send, t->rank, tb->chan, 0);
        int64_t ns = 0, nr = 0, np = 0;
        for (int32_t k = 0; k < tb->nsteps; k++) {
            unsigned f = weft_step_flags(tb->steps[k].type);
            ns += (f & WEFT_STEP_F_SEND) != 0;
            nr += (f & WEFT_STEP_F_RECV) != 0;
            np += tb->steps[k].hasdep != 0;
        }
        x->sx[i] = malloc((size_t)(ns * niter + 1) * sizeof **x->sx);
        x->rxe[i] = malloc((size_t)(nr * niter + 1) * sizeof **x->rxe);
        x->px[i] = malloc((size_t)(np * niter + 1) * sizeof **x->px);
        if (!x->sx[i] || !x->rxe[i] || !x->px[i]) return WEFT_ERR_NOMEM;
    }
    return WEFT_OK;
}

/* The placed execution of message msg on tb i's connection: sent = 1, the peer's send that
 * carries it (a receive's data); sent = 0, the peer's receive that took it (a send's credit).
 * NULL while it is not placed; else *tb and *x say where it stands (s->tbs[*tb].e[*x]). */
static const weft_sim_exec *msg_exec(const weft_sim *s, const sim_index *ix, size_t i, int sent,
                                     int64_t msg, int32_t *tb, int32_t *x) {
    int32_t j = sent ? ix->tx[i] : ix->rx[i];
    if (j < 0 || msg < 0 || msg >= (sent ? ix->ns[j] : ix->nrc[j])) return NULL;
    *tb = j;
    *x = sent ? ix->sx[j][msg] : ix->rxe[j][msg];
    return &s->tbs[j].e[*x];
}

/* The first placed execution of tb o whose post reaches want (posts only grow), or -1. */
static int32_t post_exec(const weft_sim *s, const sim_index *ix, size_t o, int64_t want) {
    int64_t lo = 0, hi = ix->np[o];
    while (lo < hi) {
        int64_t mid = lo + (hi - lo) / 2;
        if (s->tbs[o].e[ix->px[o][mid]].post >= want)
            hi = mid;
        else
            lo = mid + 1;
    }
    return lo < ix->np[o] ? ix->px[o][lo] : -1;
}

/* Nanoseconds the model may reach: beyond, parameters and sizes overflow its clock. */
#define SIM_MAX_NS 4.0e18

weft_result weft_sim_run(const weft_algo *a, const weft_sim_model *m, int64_t start, weft_sim *out,
                         weft_diag *d) {
    weft_result res = WEFT_OK;
    int nr = a ? a->ngpus : 0;
    size_t *first = NULL;
    int32_t *next = NULL;
    int64_t *sends = NULL, *recvs = NULL;
    weft_trace_step **steps = NULL;
    double *bw_send = NULL, *bw_local = NULL, *lat_recv = NULL;
    sim_index ix;
    memset(&ix, 0, sizeof ix);
    if (a == NULL || m == NULL || out == NULL || m->count < 1 || m->slots < 1 ||
        (m->links && (m->links_n != a->ngpus || m->port_Bpns == NULL)))
        return WEFT_ERR_USAGE;
    memset(out, 0, sizeof *out);
    int32_t k = weft_algo_chunks_per_seg(a), esz = weft_dtype_size((weft_dtype)m->dtype);
    if (esz <= 0) return WEFT_ERR_USAGE;
    int64_t C = weft_chunk_elems(m->count, k), E;
    int32_t niter, group = 1;
    if (m->niter > 0) {
        niter = m->niter;
        E = (C + niter - 1) / niter;
    } else {
        runtime_cut(a, m, C, &niter, &E, &group);
    }
    out->chunk_elems = C, out->slice_elems = E, out->niter = niter, out->group = group;
    out->elem_bytes = esz;
    out->start = start;
    first = calloc((size_t)nr + 1, sizeof *first);
    WEFT_CHECK_ALLOC(first);
    for (int r = 0; r < nr; r++)
        first[r + 1] = first[r] + (size_t)a->gpus[r].ntbs;
    size_t ntr = first[nr];
    out->tbs = calloc(ntr + 1, sizeof *out->tbs);
    next = calloc(ntr + 1, sizeof *next);
    sends = calloc(ntr + 1, sizeof *sends);
    recvs = calloc(ntr + 1, sizeof *recvs);
    steps = calloc(ntr + 1, sizeof *steps);
    bw_send = calloc(ntr + 1, sizeof *bw_send);
    bw_local = calloc(ntr + 1, sizeof *bw_local);
    lat_recv = calloc(ntr + 1, sizeof *lat_recv);
    WEFT_CHECK_ALLOC(out->tbs);
    WEFT_CHECK_ALLOC(next);
    WEFT_CHECK_ALLOC(sends);
    WEFT_CHECK_ALLOC(recvs);
    WEFT_CHECK_ALLOC(steps);
    WEFT_CHECK_ALLOC(bw_send);
    WEFT_CHECK_ALLOC(bw_local);
    WEFT_CHECK_ALLOC(lat_recv);
    out->ntbs = ntr;
    const weft_sim_proto *pr = &m->proto[a->proto];
    for (int r = 0; r < nr; r++) {
        const weft_gpu *g = &a->gpus[r];
        int64_t ctas = (int64_t)g->ntbs * group; /* what this rank's launch starts */
        for (int b = 0; b < g->ntbs; b++) {
            size_t q = first[r] + (size_t)b;
            const weft_tb *x = &g->tbs[b];
            steps[q] = calloc((size_t)x->nsteps + 1, sizeof **steps);
            WEFT_CHECK_ALLOC(steps[q]);
            weft_sim_tb_steps(a, r, b, steps[q]);
            weft_sim_tb *t = &out->tbs[q];
            t->rank = r, t->tb = b;
            t->n = niter * x->nsteps;
            t->e = calloc((size_t)t->n + 1, sizeof *t->e);
            WEFT_CHECK_ALLOC(t->e);
            t->free_at = start + m->launch_ns + ctas * m->cta_ns + b * m->tb_stagger_ns +
                         (r == m->late_rank ? m->late_ns : 0);
            t->begin = t->free_at;
            /* a tb's CTAs share the link to its peer with the other tbs sending there, and
             * the rank's port with the other tbs sending through it */
            const weft_sim_link *lk = m->links && x->send >= 0 && x->send < nr
                                          ? &m->links[(size_t)r * (size_t)nr + (size_t)x->send]
                                          : NULL;
            int nlink = 0, nsend = 0;
            for (int o = 0; o < g->ntbs; o++) {
                int32_t to = g->tbs[o].send;
                nlink += to >= 0 && to == x->send;
                nsend +=
                    to >= 0 &&
                    (lk == NULL ||
                     (to < nr && m->links[(size_t)r * (size_t)nr + (size_t)to].port == lk->port));
            }
            double link_Bpns = lk ? lk->Bpns : m->link_Bpns;
            double port_Bpns =
                lk ? m->port_Bpns[(size_t)r * WEFT_SIM_PORTS + (size_t)lk->port] : m->gpu_Bpns;
            double cta = pr->cta_Bpns * group, bw = cta;
            double link = link_Bpns * pr->wire_eff / (nlink ? nlink : 1);
            double port = port_Bpns * pr->wire_eff / (nsend ? nsend : 1);
            if (link_Bpns > 0 && link < bw) bw = link;
            if (port_Bpns > 0 && port < bw) bw = port;
            bw_local[q] = cta;
            bw_send[q] = bw;
            /* a message from the peer this tb receives from crosses that pair's link */
            if (m->links && x->recv >= 0 && x->recv < nr)
                lat_recv[q] = m->links[(size_t)x->recv * (size_t)nr + (size_t)r].lat_ns;
        }
    }
    WEFT_CHECK(index_init(&ix, a, out, first, niter));
    /* Place executions until every one is placed; a pass that places nothing is a deadlock. */
    for (int progress = 1; progress;) {
        progress = 0;
        for (size_t i = 0; i < ntr; i++) {
            weft_sim_tb *t = &out->tbs[i];
            const weft_tb *tb = &a->gpus[t->rank].tbs[t->tb];
            while (next[i] < t->n) {
                int it = next[i] / tb->nsteps, s = next[i] % tb->nsteps;
                const weft_trace_step *st = &steps[i][s];
                unsigned f = weft_step_flags((weft_step_type)st->type);
                int64_t dep_at = 0, data_at = 0, credit_at = 0;
                int32_t dep_from = -1, dep_x = -1, data_from = -1, data_x = -1;
                int32_t credit_from = -1, credit_x = -1;
                int ok = 1;
                if (st->dep_tb >= 0) {
                    int64_t want = (int64_t)it * st->dep_stride + st->dep_target;
                    weft_sim_tb *o = tb_of(out, first, t->rank, st->dep_tb);
                    size_t oi = o ? (size_t)(o - out->tbs) : 0;
                    int32_t j = o ? post_exec(out, &ix, oi, want) : -1;
                    ok = j >= 0;
                    if (ok) {
                        dep_at = o->e[j].t1 + m->sig_ns;
                        dep_from = (int32_t)oi, dep_x = j;
                    }
                }
                if (ok && (f & WEFT_STEP_F_RECV)) {
                    const weft_sim_exec *x =
                        msg_exec(out, &ix, i, 1, recvs[i], &data_from, &data_x);
                    ok = x != NULL;
                    if (ok) data_at = x->t1 + (int64_t)(pr->lat_ns + lat_recv[i]);
                }
                if (ok && (f & WEFT_STEP_F_SEND) && sends[i] >= m->slots) {
                    const weft_sim_exec *x =
                        msg_exec(out, &ix, i, 0, sends[i] - m->slots, &credit_from, &credit_x);
                    ok = x != NULL;
                    if (ok) credit_at = x->t1 + m->sig_ns;
                }
                if (!ok) break;
                weft_sim_exec *e = &t->e[next[i]];
                int64_t e0 = (int64_t)it * E, en = C - e0 < E ? C - e0 : E, bytes = 0;
                for (int j = 0; j < st->cnt; j++) {
                    int32_t buf = (f & WEFT_STEP_F_WRITE) ? st->dstbuf : st->srcbuf;
                    int32_t off = (f & WEFT_STEP_F_WRITE) ? st->dstoff : st->srcoff;
                    bytes += valid(a, m->count, C, buf, off + j, e0, en) * esz;
                }
                int64_t t0 = t->free_at, c = t0;
                int64_t wd = dep_at > c ? dep_at - c : 0;
                c += wd;
                int64_t wr = data_at > c ? data_at - c : 0;
                c += wr;
                int64_t wc = credit_at > c ? credit_at - c : 0;
                c += wc;
                double bw = (f & WEFT_STEP_F_SEND) ? bw_send[i] : bw_local[i];
                double mv = (double)bytes / bw;
                if (!((double)c + pr->step_ns + mv < SIM_MAX_NS)) { /* inf and NaN too */
                    weft_diag_add(d, WEFT_SEV_ERROR, a->file, 0, 0,
                                  "the model's clock overflows (past %.0e ns) at rank %d tb %d "
                                  "step %d: a parameter is too extreme for this size",
                                  SIM_MAX_NS, t->rank, t->tb, s);
                    WEFT_FAIL(WEFT_ERR_USAGE);
                }
                int64_t t1 = c + (int64_t)pr->step_ns + (int64_t)mv;
                *e = (weft_sim_exec){s,
                                     it,
                                     t0,
                                     t1,
                                     wd,
                                     wr,
                                     wc,
                                     bytes,
                                     st->post ? (int64_t)it * tb->nsteps + st->post : -1,
                                     (f & WEFT_STEP_F_SEND) ? sends[i]++ : -1,
                                     (f & WEFT_STEP_F_RECV) ? recvs[i]++ : -1,
                                     next[i] ? WEFT_SIM_PROGRAM : WEFT_SIM_START,
                                     next[i] ? (int32_t)i : -1,
                                     next[i] - 1};
                /* released by the last wait that held it, else by its tb's previous step */
                if (wc > 0)
                    e->why = WEFT_SIM_CREDIT, e->from_tb = credit_from, e->from_x = credit_x;
                else if (wr > 0)
                    e->why = WEFT_SIM_DATA, e->from_tb = data_from, e->from_x = data_x;
                else if (wd > 0)
                    e->why = WEFT_SIM_DEP, e->from_tb = dep_from, e->from_x = dep_x;
                t->free_at = t1 + m->step_gap_ns;
                if (t1 > out->end) out->end = t1;
                if (f & WEFT_STEP_F_SEND) ix.sx[i][ix.ns[i]++] = next[i];
                if (f & WEFT_STEP_F_RECV) ix.rxe[i][ix.nrc[i]++] = next[i];
                if (st->post) ix.px[i][ix.np[i]++] = next[i];
                next[i]++;
                progress = 1;
            }
        }
    }
    for (size_t i = 0; i < ntr; i++)
        if (next[i] < out->tbs[i].n) {
            weft_diag_add(d, WEFT_SEV_ERROR, a->file, 0, 0,
                          "rank %d tb %d step %d: the model deadlocks there on slice %d (with %d "
                          "messages per connection; weft verify says why)",
                          out->tbs[i].rank, out->tbs[i].tb,
                          next[i] % a->gpus[out->tbs[i].rank].tbs[out->tbs[i].tb].nsteps,
                          next[i] / a->gpus[out->tbs[i].rank].tbs[out->tbs[i].tb].nsteps, m->slots);
            res = WEFT_ERR_INPUT;
        }
fail:
    index_free(&ix, out->ntbs);
    for (size_t i = 0; steps && i < out->ntbs; i++)
        free(steps[i]);
    free(steps);
    free(first);
    free(next);
    free(sends);
    free(recvs);
    free(bw_send);
    free(bw_local);
    free(lat_recv);
    if (res != WEFT_OK && res != WEFT_ERR_INPUT) weft_sim_free(out);
    return res;
}

weft_result weft_sim_critical_path(const weft_sim *s, weft_sim_hop **path, size_t *n) {
    weft_result res = WEFT_OK;
    size_t cap = 0, len = 0;
    weft_sim_hop *p = NULL, cur = {-1, -1};
    *path = NULL;
    *n = 0;
    for (size_t i = 0; i < s->ntbs; i++)
        for (int32_t x = 0; x < s->tbs[i].n; x++)
            if (cur.tb < 0 || s->tbs[i].e[x].t1 > s->tbs[cur.tb].e[cur.x].t1)
                cur = (weft_sim_hop){(int32_t)i, x};
    /* each release points at an execution that ended earlier: the walk ends at the start */
    while (cur.tb >= 0) {
        if (weft_grow((void **)&p, &cap, len, sizeof *p) != 0) WEFT_FAIL(WEFT_ERR_NOMEM);
        p[len++] = cur;
        const weft_sim_exec *e = &s->tbs[cur.tb].e[cur.x];
        cur = (weft_sim_hop){e->from_tb, e->from_x};
    }
    for (size_t i = 0; i < len / 2; i++) {
        weft_sim_hop t = p[i];
        p[i] = p[len - 1 - i];
        p[len - 1 - i] = t;
    }
    *path = p;
    *n = len;
    p = NULL;
fail:
    free(p);
    return res;
}
