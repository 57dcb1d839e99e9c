/* trace_sim.c — makes realistic synthetic traces without a GPU: runs an XML schedule through the
 * timing model of the interpreter (tools/trace/sim.h, the one `weft estimate` uses, here with
 * fixed round numbers), fills the same per-tb record buffers the GPU fills, with each rank's GPU
 * clock offset from the host, and writes one trace file per rank through the runtime's writer.
 * Deterministic: the tests pin its output. */
#include "sim.h"
#include "trace_internal.h"
#include "weft_ir.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct model {
    int64_t count;
    int32_t dtype;
    int32_t niter, slots, calls;
    uint32_t cap;      /* records per tb; 0 = exactly what the call needs */
    int64_t offset;    /* rank r's GPU clock = host clock + r * offset */
    int64_t clock_err; /* uncertainty of each clock sample */
    int64_t lat, sig;  /* message and dependency-signal latency, ns */
    int64_t bw;        /* bytes per ns */
    int64_t overhead;  /* fixed cost of a step, ns */
    int32_t late_rank;
    int64_t late_ns; /* late_rank enters each call this much later */
} model;

static int usage(void) {
    fprintf(stderr, "usage: trace_sim XML OUT_PREFIX [--count N] [--niter K] [--slots S] "
                    "[--calls C] [--cap R] [--offset NS] [--late RANK:NS]\n");
    return 2;
}

int main(int argc, char **argv) {
    if (argc < 3) return usage();
    model m = {1 << 20, WEFT_DTYPE_FLOAT, 2, 2, 1, 0, 1000000, 250, 700, 200, 100, 300, -1, 0};
    for (int i = 3; i < argc; i++) {
        if (i + 1 >= argc) return usage();
        const char *o = argv[i], *v = argv[++i];
        if (strcmp(o, "--count") == 0)
            m.count = atoll(v);
        else if (strcmp(o, "--niter") == 0)
            m.niter = atoi(v);
        else if (strcmp(o, "--slots") == 0)
            m.slots = atoi(v);
        else if (strcmp(o, "--calls") == 0)
            m.calls = atoi(v);
        else if (strcmp(o, "--cap") == 0)
            m.cap = (uint32_t)atoi(v);
        else if (strcmp(o, "--offset") == 0)
            m.offset = atoll(v);
        else if (strcmp(o, "--late") == 0) {
            if (sscanf(v, "%d:%" SCNd64, &m.late_rank, &m.late_ns) != 2) return usage();
        } else
            return usage();
    }
    weft_diag *d = weft_diag_new();
    weft_algo *a = NULL;
    if (weft_ir_read_file(argv[1], &a, d) != WEFT_OK) {
        weft_diag_print(d, stderr, WEFT_SEV_WARNING);
        return 1;
    }
    int nr = a->ngpus, rc = 0;
    int32_t k = weft_algo_chunks_per_seg(a);
    int64_t C = weft_chunk_elems(m.count, k), E = (C + m.niter - 1) / m.niter;
    int esz = weft_dtype_size((weft_dtype)m.dtype);
    const int64_t host0 = 1700000000000000000; /* the host clock at the first call */

    /* The interpreter's view of each rank: unfused, one trace step per XML step. */
    weft_trace_tb **tbs = calloc((size_t)nr, sizeof *tbs);
    weft_trace_clock *clk = calloc((size_t)nr, sizeof *clk);
    weft_trace_writer **w = calloc((size_t)nr, sizeof *w);
    for (int r = 0; r < nr; r++) {
        const weft_gpu *g = &a->gpus[r];
        tbs[r] = calloc((size_t)g->ntbs + 1, sizeof **tbs);
        for (int b = 0; b < g->ntbs; b++) {
            const weft_tb *x = &g->tbs[b];
            weft_trace_step *st = calloc((size_t)x->nsteps + 1, sizeof *st);
            weft_sim_tb_steps(a, r, b, st);
            tbs[r][b] = (weft_trace_tb){x->send, x->recv, x->chan, x->nsteps, x->nsteps, st};
        }
        /* Two clock samples a long way apart: rank r's GPU runs r * offset ahead of the host. */
        weft_trace_clock_add(&clk[r], host0 - 1000000, (uint64_t)(host0 - 1000000 + r * m.offset),
                             m.clock_err);
        weft_trace_clock_add(&clk[r], host0 + 1000000000,
                             (uint64_t)(host0 + 1000000000 + r * m.offset), m.clock_err);
        char *path = weft_asprintf("%s.rank%d.json", argv[2], r);
        if (weft_trace_writer_open(path, host0 - 1000000, &w[r], d) != WEFT_OK) rc = 1;
        free(path);
    }
    /* The model: every protocol alike, in round numbers; each tb starts 50 ns after the one
     * before it and takes 20 ns between steps. */
    weft_sim_model sm;
    memset(&sm, 0, sizeof sm);
    sm.count = m.count, sm.dtype = m.dtype, sm.niter = m.niter, sm.slots = m.slots;
    sm.sig_ns = m.sig, sm.tb_stagger_ns = 50, sm.step_gap_ns = 20;
    sm.late_rank = m.late_rank, sm.late_ns = m.late_ns;
    for (int p = 0; p < WEFT_PROTO_COUNT; p++)
        sm.proto[p] = (weft_sim_proto){(double)m.lat, (double)m.overhead, (double)m.bw, 1.0};
    int64_t start = host0;
    for (int call = 0; call < m.calls && rc == 0; call++) {
        weft_sim sim;
        if (weft_sim_run(a, &sm, start, &sim, d) != WEFT_OK) {
            weft_diag_print(d, stderr, WEFT_SEV_WARNING);
            weft_sim_free(&sim);
            rc = 1;
            break;
        }
        size_t ntr = sim.ntbs;
        weft_sim_tb *tr = sim.tbs;
        int64_t end = start;
        for (size_t i = 0; i < ntr; i++)
            if (tr[i].free_at > end) end = tr[i].free_at;
        /* Records in GPU time, then the runtime's path: add_call, append. */
        for (int r = 0; r < nr && rc == 0; r++) {
            int nt = a->gpus[r].ntbs;
            uint32_t cap = 0;
            for (size_t i = 0; i < ntr; i++)
                if (tr[i].rank == r && (uint32_t)tr[i].n > cap) cap = (uint32_t)tr[i].n;
            if (m.cap) cap = m.cap;
            weft_trace_tbhdr *hdr = calloc((size_t)nt + 1, sizeof *hdr);
            weft_trace_rec *rec = calloc((size_t)nt * cap + 1, sizeof *rec);
            for (size_t i = 0; i < ntr; i++) {
                weft_sim_tb *t = &tr[i];
                if (t->rank != r) continue;
                const weft_trace_tb *tb = &tbs[r][t->tb];
                weft_trace_tbhdr *h = &hdr[t->tb];
                int64_t off = r * m.offset;
                h->t_begin = (uint64_t)(t->begin + off);
                h->t_end = (uint64_t)(t->free_at + 80 + off);
                h->spos0 = r == 1 ? 0xfffffffeu : 1000u * (uint32_t)(call + 1);
                h->rpos0 = r == 1 ? 0xffffffffu : 77u * (uint32_t)(call + 1);
                for (int x = 0; x < t->n; x++) {
                    const weft_sim_exec *e = &t->e[x];
                    if (h->n++ >= cap) continue;
                    weft_trace_rec *o = &rec[(size_t)t->tb * cap + h->n - 1];
                    o->t0 = (uint64_t)(e->t0 + off);
                    o->t1 = (uint64_t)(e->t1 + off);
                    o->dep_ns = (uint32_t)e->dep;
                    o->data_ns = (uint32_t)e->data;
                    o->credit_ns = (uint32_t)e->credit;
                    o->bytes = (uint32_t)e->bytes;
                    o->step = x % tb->nsteps, o->iter = x / tb->nsteps;
                    /* The device's counters run over the communicator's life: start them
                     * somewhere else than 0 (and near the 32-bit wrap on rank 1). */
                    o->spos = h->spos0 + (uint32_t)(e->smsg >= 0 ? e->smsg : 0);
                    o->rpos = h->rpos0 + (uint32_t)(e->rmsg >= 0 ? e->rmsg : 0);
                }
            }
            weft_trace_callinfo ci = {call, a->name, a->coll, m.dtype,  WEFT_OP_SUM, m.count,
                                      0,    r,       nr,      a->proto, m.niter,     1,
                                      C,    E,       esz,     m.slots,  nt,          tbs[r]};
            weft_trace t;
            weft_trace_init(&t, host0 - 1000000);
            if (weft_trace_add_call(&t, &ci, hdr, rec, cap, &clk[r], d) != WEFT_OK ||
                weft_trace_sort(&t) != WEFT_OK || weft_trace_writer_append(w[r], &t) != WEFT_OK)
                rc = 1;
            weft_trace_free(&t);
            free(hdr);
            free(rec);
        }
        weft_sim_free(&sim);
        start = end + 5000;
    }
    for (int r = 0; r < nr; r++) {
        if (w[r] && weft_trace_writer_close(w[r]) != WEFT_OK) rc = 1;
        weft_trace_clock_free(&clk[r]);
        for (int b = 0; b < a->gpus[r].ntbs; b++)
            free((void *)tbs[r][b].steps);
        free(tbs[r]);
    }
    weft_diag_print(d, stderr, WEFT_SEV_WARNING);
    free(tbs);
    free(clk);
    free(w);
    weft_algo_free(a);
    weft_diag_free(d);
    return rc;
}
