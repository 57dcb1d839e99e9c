/* trace_rt.c — recording per-step traces on a communicator: one tracer (file, device buffer,
 * clock samples) per local rank, the schedule tables its records refer to (built at a rank's
 * first traced call of each algorithm), a buffer region per launch; WEFT_TRACE at attach and
 * weft_comm_trace_start/stop. */
#include "comm_internal.h"
#include "trace_rt_internal.h"

#include <stdlib.h>
#include <string.h>

typedef struct sched {
    weft_trace_tb *tbs;
    weft_trace_step *steps;
} sched;

struct weft_rt_trace {
    int nsub;
    weft_tracer **tr; /* [nsub] */
    sched *sc;        /* [nalgos * 2 modes * nsub] */
    size_t nalgos;
    char *in_launch; /* [nsub]: a region was taken in the launch under way */
};

static void trace_free(weft_rt_trace *t) {
    if (t == NULL) return;
    for (size_t i = 0; i < t->nalgos * 2 * (size_t)t->nsub; i++) {
        free(t->sc[i].tbs);
        free(t->sc[i].steps);
    }
    free(t->sc);
    free(t->tr);
    free(t->in_launch);
    free(t);
}

weft_result weft_rt_trace_stop(weft_comm *c) {
    if (c == NULL || c->trace == NULL) return WEFT_OK;
    weft_result res = WEFT_OK;
    weft_rt_trace *t = c->trace;
    c->trace = NULL;
    for (int s = 0; s < t->nsub; s++) {
        if (t->tr[s] == NULL) continue;
        char *path = weft_strdup(weft_tracer_path(t->tr[s]));
        weft_result r = weft_tracer_close(t->tr[s]);
        if (r != WEFT_OK) {
            WEFT_WARN("weft: trace %s: not completed (%s)", path ? path : "", weft_result_str(r));
            res = r;
        } else {
            WEFT_INFO(WEFT_SUBSYS_PROFILE, "weft: trace of rank %d written to %s", c->sub[s].rank,
                      path ? path : "");
        }
        free(path);
    }
    trace_free(t);
    return res;
}

weft_result weft_rt_trace_start(weft_comm *c, const char *pattern, weft_diag *d) {
    weft_result res = WEFT_OK;
    weft_rt_trace *t = NULL;
    if (c == NULL || pattern == NULL || *pattern == '\0') return WEFT_ERR_USAGE;
    WEFT_CHECK(weft_rt_trace_stop(c));
    t = calloc(1, sizeof *t);
    WEFT_CHECK_ALLOC(t);
    t->nsub = c->nsub;
    t->nalgos = c->nalgos;
    t->tr = calloc((size_t)c->nsub, sizeof *t->tr);
    t->sc = calloc((c->nalgos ? c->nalgos : 1) * 2 * (size_t)c->nsub, sizeof *t->sc);
    t->in_launch = calloc((size_t)c->nsub, 1);
    WEFT_CHECK_ALLOC(t->tr);
    WEFT_CHECK_ALLOC(t->sc);
    WEFT_CHECK_ALLOC(t->in_launch);
    for (int s = 0; s < c->nsub; s++) {
        weft_tracer_backend be;
        WEFT_CHECK(weft_tracer_cuda_backend(c->dev, &be));
        WEFT_CHECK(weft_tracer_open(pattern, c->sub[s].rank, &be, 0, &t->tr[s], d));
        WEFT_INFO(WEFT_SUBSYS_PROFILE, "weft: tracing rank %d of %d into %s", c->sub[s].rank,
                  c->nranks, weft_tracer_path(t->tr[s]));
    }
    c->trace = t;
    return WEFT_OK;
fail:
    if (t) {
        for (int s = 0; t->tr && s < t->nsub; s++)
            if (t->tr[s]) {
                /* Opened but unused: remove the empty file it began. */
                char *path = weft_strdup(weft_tracer_path(t->tr[s]));
                weft_tracer_close(t->tr[s]);
                if (path) remove(path);
                free(path);
            }
        trace_free(t);
    }
    return res;
}

void weft_rt_trace_env(weft_comm *c) {
    const char *pat = weft_env_get(WEFT_ENV_TRACE);
    if (c == NULL || pat == NULL || *pat == '\0') return;
    weft_diag *d = weft_diag_new();
    weft_result r = weft_rt_trace_start(c, pat, d);
    if (r != WEFT_OK) {
        for (size_t i = 0; d && i < weft_diag_size(d); i++) {
            char *m = weft_diag_format(weft_diag_get(d, i));
            if (m) WEFT_WARN("weft: WEFT_TRACE: %s", m);
            free(m);
        }
        WEFT_WARN("weft: WEFT_TRACE=%s: not recording on rank %d (%s)", pat, c->rank,
                  weft_result_str(r));
    }
    weft_diag_free(d);
}

void weft_rt_trace_launch(weft_comm *c, int s, int ai, size_t count, int dtype, int op, int inplace,
                          const weft_call_geom *g, void *stream, weft_trace_dev *dev) {
    memset(dev, 0, sizeof *dev);
    weft_rt_trace *t = c->trace;
    if (t == NULL || s < 0 || s >= t->nsub || ai < 0 || (size_t)ai >= t->nalgos) return;
    const weft_algo_plan *p = &c->plans[ai];
    const weft_mode_plan *m = weft_plan_mode(p, inplace);
    if (m == NULL) return;
    const weft_rank_plan *rp = &m->ranks[c->sub[s].rank];
    /* one schedule table per algorithm, mode and local rank */
    sched *sc = &t->sc[((size_t)ai * 2 + (inplace ? 1 : 0)) * (size_t)t->nsub + (size_t)s];
    if (sc->tbs == NULL && weft_rt_trace_sched(rp, &sc->tbs, &sc->steps) != WEFT_OK) return;
    weft_trace_callinfo ci = {.seq = c->ncalls,
                              .algo = p->algo->name,
                              .coll = p->algo->coll,
                              .dtype = dtype,
                              .op = op,
                              .count = (int64_t)count,
                              .inplace = inplace,
                              .rank = c->sub[s].rank,
                              .nranks = c->nranks,
                              .proto = p->proto, /* a runtime protocol is its WEFT_PROTOS row */
                              .niter = g->niter0,
                              .group = g->K,
                              .chunk_elems = g->C,
                              .slice_elems = g->E,
                              .elem_bytes = g->kelem,
                              .fifo_slots = c->cfg.nslots[p->proto],
                              .ntbs = rp->ntbs,
                              .tbs = sc->tbs};
    if (weft_tracer_launch(t->tr[s], &ci, stream, dev) == WEFT_OK && dev->rec) t->in_launch[s] = 1;
}

void weft_rt_trace_end_launch(weft_comm *c, int launched) {
    weft_rt_trace *t = c->trace;
    if (t == NULL) return;
    for (int s = 0; s < t->nsub; s++) {
        if (t->in_launch[s] && !launched) weft_tracer_cancel(t->tr[s]);
        t->in_launch[s] = 0;
    }
}

/* ---- the public API ------------------------------------------------------------------------ */
weft_result weft_comm_trace_start(weft_comm *c, const char *path) {
    if (c == NULL || path == NULL || *path == '\0') return WEFT_ERR_USAGE;
    int cur = -1;
    cudaGetDevice(&cur);
    weft_diag *d = weft_diag_new();
    weft_result r = weft_rt_trace_start(c, path, d);
    for (size_t i = 0; d && i < weft_diag_size(d); i++) {
        char *m = weft_diag_format(weft_diag_get(d, i));
        if (m) WEFT_WARN("weft: %s", m);
        free(m);
    }
    weft_diag_free(d);
    if (cur >= 0) cudaSetDevice(cur);
    return r;
}

weft_result weft_comm_trace_stop(weft_comm *c) {
    if (c == NULL) return WEFT_ERR_USAGE;
    int cur = -1;
    cudaGetDevice(&cur);
    weft_result r = weft_rt_trace_stop(c);
    if (cur >= 0) cudaSetDevice(cur);
    return r;
}
