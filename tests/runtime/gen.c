/* gen.c — schedules built in code (see gen.h): standard ring, direct, chain and staged shapes,
 * written as the MSCCL IR so that the runtime runs them exactly as it runs files. */
#include "gen.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const shape_names[GEN_SHAPE_COUNT] = {
    "ar_ring",    "ar_direct",   "ar_direct1",   "ag_ring",    "ag_direct", "rs_ring",
    "a2a_direct", "bcast_chain", "reduce_chain", "ar_oneshot", "ar_staged",
};

const char *gen_shape_name(gen_shape s) {
    return (unsigned)s < GEN_SHAPE_COUNT ? shape_names[s] : "?";
}

static int md(int a, int n) {
    return ((a % n) + n) % n;
}

typedef struct gb {
    weft_algo *a;
    int bad;
} gb;

static weft_tb *tb_new(gb *b, int r, int send, int recv, int chan) {
    if (b->bad) return NULL;
    weft_tb *t = weft_gpu_add_tb(&b->a->gpus[r], send, recv, chan);
    if (t == NULL) b->bad = 1;
    return t;
}

/* Appends a step; returns its index. */
static int st(gb *b, weft_tb *t, weft_step_type type, weft_buf sb, int so, weft_buf db, int dof,
              int cnt, int depid, int deps) {
    if (b->bad || t == NULL) return -1;
    weft_step s = {type, sb, db, so, dof, cnt, depid, deps, 0, 0};
    int i = weft_tb_add_step(t, &s);
    if (i < 0) b->bad = 1;
    return i;
}

static void mark_hasdep(weft_tb *t, int s) {
    if (t && s >= 0 && s < t->nsteps) t->steps[s].hasdep = 1;
}

#define I  WEFT_BUF_INPUT
#define O  WEFT_BUF_OUTPUT
#define S_ WEFT_STEP_SEND
#define R_ WEFT_STEP_RECV

weft_algo *gen_algo(const gen_params *p) {
    int n = p->nranks, nch = p->nch, cpc = p->cpc > 0 ? p->cpc : 1, ip = p->inplace != 0;
    if (n < 2 || nch < 1 || (unsigned)p->shape >= GEN_SHAPE_COUNT) return NULL;
    weft_coll coll;
    int k = nch, both = 1; /* both: one schedule serves in-place and out-of-place */
    switch (p->shape) {
    case GEN_AR_RING: coll = WEFT_COLL_ALLREDUCE, k = n * nch; break;
    case GEN_AR_DIRECT:
        if (n != 2) return NULL;
        coll = WEFT_COLL_ALLREDUCE, k = nch * cpc, both = ip;
        break;
    case GEN_AR_DIRECT1:
        if (n != 2) return NULL;
        coll = WEFT_COLL_ALLREDUCE, k = nch * cpc;
        break;
    case GEN_AG_RING: coll = WEFT_COLL_ALLGATHER, both = 0; break;
    case GEN_AG_DIRECT: coll = WEFT_COLL_ALLGATHER, both = 0; break;
    case GEN_RS_RING: coll = WEFT_COLL_REDUCESCATTER; break;
    case GEN_A2A_DIRECT:
        if (ip) return NULL;
        coll = WEFT_COLL_ALLTOALL, both = 0;
        break;
    case GEN_BCAST_CHAIN: coll = WEFT_COLL_BROADCAST, both = 0; break;
    case GEN_REDUCE_CHAIN: coll = WEFT_COLL_REDUCE; break;
    case GEN_AR_ONESHOT:
    case GEN_AR_STAGED:
        if (ip) return NULL;
        coll = WEFT_COLL_ALLREDUCE, both = 0;
        break;
    default: return NULL;
    }
    int mult = (coll == WEFT_COLL_ALLGATHER || coll == WEFT_COLL_REDUCESCATTER ||
                coll == WEFT_COLL_ALLTOALL)
                   ? n
                   : 1;
    char name[128];
    snprintf(name, sizeof name, "%s_n%d_ch%d%s_%s_%s", shape_names[p->shape], n, nch,
             cpc > 1 ? "_cpc" : "", weft_proto_name(p->proto), ip ? "ip" : "oop");
    if (cpc > 1) snprintf(name + strlen(name), sizeof name - strlen(name), "%d", cpc);
    gb b = {weft_algo_new(name, coll, n, k * mult), 0};
    if (b.a == NULL) return NULL;
    weft_algo *a = b.a;
    a->proto = p->proto;
    a->nchannels = nch;
    a->inplace = (uint8_t)(both || ip);
    a->outofplace = (uint8_t)(both || !ip);
    a->root = weft_coll_rooted(coll) ? md(p->root, n) : 0;
    for (int r = 0; r < n; r++) {
        weft_gpu *g = &a->gpus[r];
        g->i_chunks = weft_coll_large(coll, WEFT_BUF_INPUT) ? k * mult : k;
        g->o_chunks = weft_coll_large(coll, WEFT_BUF_OUTPUT) ? k * mult : k;
        if (p->shape == GEN_AR_STAGED) g->s_chunks = (n - 1) * k;
    }
    for (int r = 0; r < n && !b.bad; r++) {
        int nx = md(r + 1, n), pv = md(r - 1, n);
        for (int c = 0; c < nch && !b.bad; c++) {
            switch (p->shape) {
            case GEN_AR_RING: {
                weft_tb *t = tb_new(&b, r, nx, pv, c);
#define X(j) (c * n + md((j), n))
                st(&b, t, S_, I, X(r), O, X(r), 1, -1, -1);
                for (int s = 1; s < n - 1; s++)
                    st(&b, t, WEFT_STEP_RRS, I, X(r - s), O, X(r - s), 1, -1, -1);
                st(&b, t, WEFT_STEP_RRCS, I, X(r + 1), O, X(r + 1), 1, -1, -1);
                for (int s = 1; s < n - 1; s++)
                    st(&b, t, WEFT_STEP_RCS, I, X(r + 1 - s), O, X(r + 1 - s), 1, -1, -1);
                st(&b, t, R_, I, X(r + 2), O, X(r + 2), 1, -1, -1);
#undef X
                break;
            }
            case GEN_AR_DIRECT: {
                int peer = 1 - r, x = c * cpc;
                weft_tb *ts = tb_new(&b, r, peer, -1, c);
                int s0 = st(&b, ts, S_, I, x, O, x, cpc, -1, -1);
                weft_tb *tr = tb_new(&b, r, -1, peer, c);
                if (ip) {
                    mark_hasdep(ts, s0);
                    st(&b, tr, WEFT_STEP_RRC, I, x, O, x, cpc, ts ? ts->id : -1, s0);
                } else {
                    st(&b, tr, WEFT_STEP_RRC, I, x, O, x, cpc, -1, -1);
                }
                break;
            }
            case GEN_AR_DIRECT1: {
                int peer = 1 - r, x = c * cpc;
                weft_tb *t = tb_new(&b, r, peer, peer, c);
                st(&b, t, S_, I, x, O, x, cpc, -1, -1);
                st(&b, t, WEFT_STEP_RRC, I, x, O, x, cpc, -1, -1);
                break;
            }
            case GEN_AG_RING: {
                weft_tb *t = tb_new(&b, r, nx, pv, c);
                if (!ip) st(&b, t, WEFT_STEP_CPY, I, c, O, r * k + c, 1, -1, -1);
                st(&b, t, S_, I, c, O, r * k + c, 1, -1, -1);
                for (int s = 1; s < n; s++) {
                    int q = md(r - s, n);
                    st(&b, t, s < n - 1 ? WEFT_STEP_RCS : R_, I, 0, O, q * k + c, 1, -1, -1);
                }
                break;
            }
            case GEN_AG_DIRECT: {
                if (!ip) {
                    weft_tb *t = tb_new(&b, r, -1, -1, c);
                    st(&b, t, WEFT_STEP_CPY, I, c, O, r * k + c, 1, -1, -1);
                }
                for (int q = 0; q < n; q++) {
                    if (q == r) continue;
                    weft_tb *ts = tb_new(&b, r, q, -1, c);
                    st(&b, ts, S_, I, c, O, c, 1, -1, -1);
                    weft_tb *tr = tb_new(&b, r, -1, q, c);
                    st(&b, tr, R_, I, 0, O, q * k + c, 1, -1, -1);
                }
                break;
            }
            case GEN_RS_RING: {
                weft_tb *t = tb_new(&b, r, nx, pv, c);
                st(&b, t, S_, I, md(r - 1, n) * k + c, O, 0, 1, -1, -1);
                for (int s = 1; s < n - 1; s++)
                    st(&b, t, WEFT_STEP_RRS, I, md(r - 1 - s, n) * k + c, O, 0, 1, -1, -1);
                st(&b, t, WEFT_STEP_RRC, I, r * k + c, O, c, 1, -1, -1);
                break;
            }
            case GEN_A2A_DIRECT: {
                weft_tb *t = tb_new(&b, r, -1, -1, c);
                st(&b, t, WEFT_STEP_CPY, I, r * k + c, O, r * k + c, 1, -1, -1);
                for (int q = 0; q < n; q++) {
                    if (q == r) continue;
                    weft_tb *ts = tb_new(&b, r, q, -1, c);
                    st(&b, ts, S_, I, q * k + c, O, 0, 1, -1, -1);
                    weft_tb *tr = tb_new(&b, r, -1, q, c);
                    st(&b, tr, R_, I, 0, O, q * k + c, 1, -1, -1);
                }
                break;
            }
            case GEN_BCAST_CHAIN: {
                int pos = md(r - a->root, n);
                if (pos == 0) {
                    weft_tb *t = tb_new(&b, r, nx, -1, c);
                    if (!ip) st(&b, t, WEFT_STEP_CPY, I, c, O, c, 1, -1, -1);
                    st(&b, t, S_, I, c, O, c, 1, -1, -1);
                } else if (pos < n - 1) {
                    st(&b, tb_new(&b, r, nx, pv, c), WEFT_STEP_RCS, I, 0, O, c, 1, -1, -1);
                } else {
                    st(&b, tb_new(&b, r, -1, pv, c), R_, I, 0, O, c, 1, -1, -1);
                }
                break;
            }
            case GEN_REDUCE_CHAIN: {
                int pos = md(r - a->root - 1, n);
                if (pos == 0)
                    st(&b, tb_new(&b, r, nx, -1, c), S_, I, c, O, c, 1, -1, -1);
                else if (pos < n - 1)
                    st(&b, tb_new(&b, r, nx, pv, c), WEFT_STEP_RRS, I, c, O, c, 1, -1, -1);
                else
                    st(&b, tb_new(&b, r, -1, pv, c), WEFT_STEP_RRC, I, c, O, c, 1, -1, -1);
                break;
            }
            case GEN_AR_ONESHOT: {
                /* the first receive reduces with the input, each next one with the output the
                 * previous wrote (out of place only) */
                for (int q = 1; q < n; q++)
                    st(&b, tb_new(&b, r, md(r + q, n), -1, c), S_, I, c, O, c, 1, -1, -1);
                int prev = -1;
                for (int q = 1; q < n && !b.bad; q++) {
                    weft_tb *tr = tb_new(&b, r, -1, md(r - q, n), c);
                    int id = tr ? tr->id : -1;
                    st(&b, tr, WEFT_STEP_RRC, q == 1 ? I : O, c, O, c, 1, prev, prev >= 0 ? 0 : -1);
                    if (prev >= 0) mark_hasdep(&a->gpus[r].tbs[prev], 0);
                    prev = id;
                }
                break;
            }
            case GEN_AR_STAGED: {
                /* peer q's chunk c lands in scratch slot (q - r - 1) mod n of channel c */
                for (int q = 1; q < n; q++)
                    st(&b, tb_new(&b, r, md(r + q, n), -1, c), S_, I, c, O, c, 1, -1, -1);
                int r0 = -1; /* the receiving tbs' ids are consecutive */
                for (int q = 1; q < n && !b.bad; q++) {
                    weft_tb *tr = tb_new(&b, r, -1, md(r - q, n), c);
                    if (tr && q == 1) r0 = tr->id;
                    st(&b, tr, R_, I, 0, WEFT_BUF_SCRATCH, (q - 1) * k + c, 1, -1, -1);
                    mark_hasdep(tr, 0);
                }
                weft_tb *tx = tb_new(&b, r, -1, -1, c);
                st(&b, tx, WEFT_STEP_CPY, I, c, O, c, 1, -1, -1);
                for (int q = 1; q < n && !b.bad; q++)
                    st(&b, tx, WEFT_STEP_RE, WEFT_BUF_SCRATCH, (q - 1) * k + c, O, c, 1, r0 + q - 1,
                       0);
                break;
            }
            default: b.bad = 1; break;
            }
        }
    }
    if (b.bad) {
        weft_algo_free(a);
        return NULL;
    }
    return a;
}

int gen_parse(const char *spec, gen_params *p) {
    memset(p, 0, sizeof *p);
    p->nranks = 2, p->nch = 1, p->proto = WEFT_PROTO_SIMPLE, p->cpc = 1;
    char buf[256];
    snprintf(buf, sizeof buf, "%s", spec);
    char *save = NULL, *tok = strtok_r(buf, ":", &save);
    if (tok == NULL) return -1;
    int found = 0;
    for (int s = 0; s < GEN_SHAPE_COUNT; s++)
        if (strcmp(tok, shape_names[s]) == 0) p->shape = (gen_shape)s, found = 1;
    if (!found) return -1;
    while ((tok = strtok_r(NULL, ":", &save)) != NULL) {
        char *eq = strchr(tok, '=');
        if (eq == NULL) return -1;
        *eq = '\0';
        const char *v = eq + 1;
        if (strcmp(tok, "n") == 0)
            p->nranks = atoi(v);
        else if (strcmp(tok, "ch") == 0)
            p->nch = atoi(v);
        else if (strcmp(tok, "inplace") == 0)
            p->inplace = atoi(v);
        else if (strcmp(tok, "cpc") == 0)
            p->cpc = atoi(v);
        else if (strcmp(tok, "root") == 0)
            p->root = atoi(v);
        else if (strcmp(tok, "proto") == 0) {
            int pr = weft_proto_from_name(v);
            if (pr < 0) return -1;
            p->proto = (weft_proto)pr;
        } else
            return -1;
    }
    return 0;
}

weft_algo *gen_deadlock(void) {
    weft_algo *a = weft_algo_new("deadlock", WEFT_COLL_ALLREDUCE, 2, 1);
    if (a == NULL) return NULL;
    a->nchannels = 1;
    for (int r = 0; r < 2; r++) {
        a->gpus[r].i_chunks = a->gpus[r].o_chunks = 1;
        weft_tb *t = weft_gpu_add_tb(&a->gpus[r], 1 - r, 1 - r, 0);
        weft_step s1 = {WEFT_STEP_RECV, WEFT_BUF_INPUT, WEFT_BUF_OUTPUT, 0, 0, 1, -1, -1, 0, 11};
        weft_step s2 = {WEFT_STEP_SEND, WEFT_BUF_INPUT, WEFT_BUF_OUTPUT, 0, 0, 1, -1, -1, 0, 12};
        weft_tb_add_step(t, &s1);
        weft_tb_add_step(t, &s2);
    }
    a->file = weft_strdup("deadlock.xml");
    return a;
}
