/* call_geom.c — a call's geometry: how a call of count elements is cut into chunks, slices and
 * iterations over a plan's thread blocks, its scratch, and the interpreter's call arguments. */
#include "runtime_internal.h"

#include <string.h>

weft_result weft_call_geometry(const weft_algo_plan *p, const weft_rt_cfg *cfg, int inplace,
                               size_t count, int32_t dtype_bytes, int reduces, int direct,
                               weft_call_geom *g) {
    memset(g, 0, sizeof *g);
    const weft_mode_plan *m = weft_plan_mode(p, inplace);
    if (m == NULL || count == 0 || dtype_bytes <= 0 || p->k < 1) return WEFT_ERR_UNSUPPORTED;
    if (count > ((size_t)1 << 40)) return WEFT_ERR_UNSUPPORTED;
    int64_t C = weft_chunk_elems((int64_t)count, p->k); /* the count policy, in dtype elements */
    int32_t ke = reduces ? dtype_bytes : 1, scale = reduces ? 1 : dtype_bytes;
    int64_t V = 16 / ke;
    int64_t emax =
        weft_proto_chunk_data((weft_proto)p->proto, cfg->slot_bytes[p->proto], p->maxcnt) / ke;
    emax -= emax % V;
    if (emax < V) return WEFT_ERR_UNSUPPORTED; /* a message of maxcnt chunks cannot fit */
    g->kelem = ke;
    g->count = (int64_t)count * scale;
    g->C = C * scale;
    /* In place, a small buffer that is a slice of a large one lies at another offset on every
     * rank: its peers could not find it at their own offset. */
    int sliced = inplace && weft_coll_inplace_sliced(p->algo->coll);
    g->direct = direct && m->direct && !sliced;
    /* The slice: a slot's worth (or the /SLICE cap), spread over the members down to the
     * protocol's least slice (weft_proto_slice). */
    g->E = weft_proto_slice((weft_proto)p->proto, g->C, ke, emax, cfg->slice_bytes[p->proto] / ke,
                            p->kmax);
    int64_t niter = (g->C + g->E - 1) / g->E;
    /* Progress values count iterations x steps in 32 bits (the epoch takes the upper half). */
    if (niter * (m->maxsteps + 1) >= ((int64_t)1 << 31)) return WEFT_ERR_UNSUPPORTED;
    g->niter = (int32_t)niter;
    g->K = niter < p->kmax ? (int32_t)niter : p->kmax;
    g->niter0 = (int32_t)((niter + g->K - 1) / g->K);
    return WEFT_OK;
}

size_t weft_call_scratch(const weft_algo_plan *p, int32_t rank, size_t count, int32_t dtype_bytes) {
    const weft_algo *a = p->algo;
    if (rank < 0 || rank >= a->ngpus || p->k < 1) return 0;
    size_t C = (size_t)weft_chunk_elems((int64_t)count, p->k);
    return (size_t)a->gpus[rank].s_chunks * C * (size_t)dtype_bytes;
}

void weft_plan_call_args(const weft_algo_plan *p, int32_t ai, const weft_call_geom *g,
                         const weft_rt_cfg *cfg, weft_rargs *c) {
    memset(c, 0, sizeof *c);
    c->count = g->count, c->C = g->C, c->E = g->E;
    c->timeout_ns = cfg->timeout_ns;
    c->k = p->k, c->niter = g->niter;
    c->K = g->K, c->kmax = p->kmax;
    c->proto = p->proto;
    c->direct = g->direct;
    c->nranks = p->nranks;
    c->tag = ai;
    c->arrival_off = (int32_t)WEFT_RT_ARRIVAL_OFF(ai);
}

weft_rt_kvariant weft_call_variant(const weft_rt_cfg *cfg, const weft_rargs *c, int traced) {
    if (traced) return WEFT_RT_KV_TRACED;
    if (c->proto == WEFT_RT_PROTO_LL128) return WEFT_RT_KV_LL128;
    return cfg->latency_kernel && c->proto == WEFT_RT_PROTO_LL && !c->direct ? WEFT_RT_KV_LL
                                                                             : WEFT_RT_KV_PLAIN;
}

/* Measured (docs/runtime-perf.md, 2 x H200): an 8 B allreduce in a graph took 0.3 us less on 64
 * threads than on 256, a 4 KB slice 2.6 us more (8 lines a thread instead of 2). */
#define WEFT_RT_LL_MIN_THREADS 64

int32_t weft_call_threads(const weft_rt_cfg *cfg, const weft_rargs *c, int32_t kelem,
                          weft_rt_kvariant v) {
    if (v != WEFT_RT_KV_LL) return cfg->nthreads;
    int64_t lines = (c->E * kelem + 7) / 8, t = (lines + 31) / 32 * 32;
    t = t < WEFT_RT_LL_MIN_THREADS ? WEFT_RT_LL_MIN_THREADS : t;
    return (int32_t)(t < cfg->nthreads ? t : cfg->nthreads);
}
