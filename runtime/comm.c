/* comm.c — weft on NCCL communicators: resolving and checking NCCL, attaching (symmetric
 * windows, device communicator, LSA pointers, FIFOs, uploaded step tables), launching one
 * collective with no host allocation or synchronization, the watchdog's report, detaching; and
 * the loopback communicator that runs every rank on one GPU without NCCL (tests). */
#include "comm_internal.h"
#include "multinode_rt_internal.h"
#include "trace_rt_internal.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- NCCL entry points ------------------------------------------------------------------ */
static pthread_mutex_t api_lock = PTHREAD_MUTEX_INITIALIZER;
static weft_nccl_api api_table;
static int api_resolved;

/* The log's [dev] field, as NCCL's: the calling thread's current device (-1 when CUDA cannot
 * say, e.g. while the process exits). */
static int log_device(void) {
    int dev = -1;
    return cudaGetDevice(&dev) == cudaSuccess ? dev : -1;
}

void weft_runtime_set_nccl_api(const weft_nccl_api *api) {
    weft_log_set_device_fn(log_device);
    pthread_mutex_lock(&api_lock);
    api_table = *api;
    api_resolved = 1;
    pthread_mutex_unlock(&api_lock);
}

/* The table in use: the shim's, or ncclX resolved in the process. NULL (with a message) when
 * an entry is missing. */
static const weft_nccl_api *api_get(weft_diag *d) {
    pthread_mutex_lock(&api_lock);
    if (!api_resolved) {
        weft_nccl_api t;
        memset(&t, 0, sizeof t);
#define WEFT_X_(ret, name, args)                                                                   \
    {                                                                                              \
        void *s_ = dlsym(RTLD_DEFAULT, "nccl" #name);                                              \
        memcpy(&t.name, &s_, sizeof s_);                                                           \
    }
        WEFT_NCCL_FUNCS(WEFT_X_)
#undef WEFT_X_
        t.DevCommCreate = dlsym(RTLD_DEFAULT, "ncclDevCommCreate");
        t.DevCommDestroy = dlsym(RTLD_DEFAULT, "ncclDevCommDestroy");
        api_table = t;
        api_resolved = 1;
    }
    const weft_nccl_api *a = &api_table;
    const char *missing = NULL;
#define WEFT_X_(ret, name, args)                                                                   \
    if (!missing && a->name == NULL) missing = "nccl" #name;
    WEFT_NCCL_FUNCS(WEFT_X_)
#undef WEFT_X_
    if (!missing && a->DevCommCreate == NULL) missing = "ncclDevCommCreate";
    if (!missing && a->DevCommDestroy == NULL) missing = "ncclDevCommDestroy";
    pthread_mutex_unlock(&api_lock);
    if (missing) {
        weft_diag_add(d, WEFT_SEV_ERROR, NULL, 0, 0,
                      "weft: %s not found: libnccl is not loaded or is older than 2.28; the GPU "
                      "runtime is off",
                      missing);
        return NULL;
    }
    return a;
}

weft_result weft_rt_check_version(int v, weft_diag *d) {
    int hv = NCCL_VERSION_CODE;
    if (v < WEFT_NCCL_VERSION_MIN) {
        weft_diag_add(d, WEFT_SEV_ERROR, NULL, 0, 0,
                      "weft: the loaded libnccl %d.%d.%d is older than the NCCL %d.%d.%d headers "
                      "weft was built with; its device code cannot run there, so the GPU runtime "
                      "is off (NCCL runs every collective)",
                      v / 10000, v / 100 % 100, v % 100, hv / 10000, hv / 100 % 100, hv % 100);
        return WEFT_ERR_UNSUPPORTED;
    }
    if (v >= WEFT_NCCL_VERSION_END) {
        weft_diag_add(d, WEFT_SEV_ERROR, NULL, 0, 0,
                      "weft: the loaded libnccl %d.%d.%d has another device API than the NCCL "
                      "%d.%d it was built with; the GPU runtime is off (NCCL runs every "
                      "collective)",
                      v / 10000, v / 100 % 100, v % 100, hv / 10000, hv / 100 % 100);
        return WEFT_ERR_UNSUPPORTED;
    }
    return WEFT_OK;
}

/* ---- small helpers ---------------------------------------------------------------------- */
#define CUDA_TRY(d, call)                                                                          \
    do {                                                                                           \
        cudaError_t e_ = (call);                                                                   \
        if (e_ != cudaSuccess) {                                                                   \
            weft_diag_add((d), WEFT_SEV_ERROR, NULL, 0, 0, "weft: %s failed: %s (%s:%d)", #call,   \
                          cudaGetErrorString(e_), __FILE__, __LINE__);                             \
            WEFT_FAIL(WEFT_ERR_CUDA);                                                              \
        }                                                                                          \
    } while (0)

#define NCCL_TRY(d, api, call)                                                                     \
    do {                                                                                           \
        ncclResult_t n_ = (call);                                                                  \
        if (n_ != ncclSuccess) {                                                                   \
            weft_diag_add((d), WEFT_SEV_ERROR, NULL, 0, 0, "weft: %s failed: %s", #call,           \
                          (api)->GetErrorString(n_));                                              \
            WEFT_FAIL(WEFT_ERR_NCCL);                                                              \
        }                                                                                          \
    } while (0)

static void *dmalloc0(size_t bytes, weft_result *res) {
    void *p = NULL;
    if (cudaMalloc(&p, bytes ? bytes : 1) != cudaSuccess ||
        cudaMemset(p, 0, bytes ? bytes : 1) != cudaSuccess) {
        if (p) cudaFree(p);
        *res = WEFT_ERR_CUDA;
        return NULL;
    }
    return p;
}

static weft_result upload(void **dst, const void *src, size_t bytes) {
    *dst = NULL;
    if (cudaMalloc(dst, bytes ? bytes : 1) != cudaSuccess) return WEFT_ERR_CUDA;
    if (bytes && cudaMemcpy(*dst, src, bytes, cudaMemcpyHostToDevice) != cudaSuccess)
        return WEFT_ERR_CUDA;
    return WEFT_OK;
}

/* ---- per-rank device state -------------------------------------------------------------- */
#ifdef WEFT_RT_PROBE
/* A WEFT_PROBE build's report (runtime_internal.h): each CTA's mean per call and phase, in
 * microseconds (cycles scaled by the CTA's own %globaltimer total). */
static void probe_report(const rt_rank *rr) {
    static const char *const names[] = {
#define WEFT_X_(id, n) n,
        WEFT_RT_PROBES(WEFT_X_)
#undef WEFT_X_
    };
    uint64_t *h = calloc(WEFT_RT_PROBE_CTAS * WEFT_RT_PROBE_N, sizeof *h);
    if (!h || cudaMemcpy(h, rr->probe, WEFT_RT_PROBE_CTAS * WEFT_RT_PROBE_N * sizeof *h,
                         cudaMemcpyDeviceToHost) != cudaSuccess) {
        free(h);
        return;
    }
    for (int k = 0; k < WEFT_RT_PROBE_CTAS; k++) {
        const uint64_t *r = h + (size_t)k * WEFT_RT_PROBE_N;
        uint64_t n = r[WEFT_RT_PROBE_CALLS];
        if (n == 0 || r[WEFT_RT_PROBE_CYCLES] == 0) continue;
        double ns_per = (double)r[WEFT_RT_PROBE_NS] / (double)r[WEFT_RT_PROBE_CYCLES];
        char line[1024];
        /* the grid wait holds whatever kept the stream busy before the call (the previous
         * kernel, a host gap): what the call itself took is the rest */
        int o = snprintf(line, sizeof line,
                         "weft probe: rank %d cta %d: %llu calls, us/call: without the grid wait "
                         "%.2f,",
                         rr->rank, k, (unsigned long long)n,
                         (double)(r[WEFT_RT_PROBE_CYCLES] - r[WEFT_RT_PROBE_GRIDWAIT]) * ns_per /
                             (double)n / 1e3);
        for (int s = 0; s < WEFT_RT_PROBE_N && o < (int)sizeof line; s++) {
            if (s == WEFT_RT_PROBE_CALLS || (s > WEFT_RT_PROBE_CALLS && r[s] == 0)) continue;
            double us = s == WEFT_RT_PROBE_NS ? (double)r[s] / (double)n / 1e3
                                              : (double)r[s] * ns_per / (double)n / 1e3;
            o += snprintf(line + o, sizeof line - (size_t)o, " %s %.2f%s", names[s], us,
                          s + 1 < WEFT_RT_PROBE_N ? "," : "");
        }
        fprintf(stderr, "%s\n", line);
    }
    free(h);
}
#endif

static void rank_free(weft_comm *c, rt_rank *rr) {
#ifdef WEFT_RT_PROBE
    if (rr->probe) probe_report(rr);
    cudaFree(rr->probe);
#endif
    if (rr->tab) {
        for (size_t i = 0; i < c->nalgos; i++) {
            for (int m = 0; m < 2; m++) {
                cudaFree(rr->tab[i].rec[m]);
                cudaFree(rr->tab[i].xsrc[m]);
                cudaFree(rr->tab[i].xrecv[m]);
                cudaFree(rr->tab[i].hop[m]);
            }
            cudaFree(rr->tab[i].prog);
        }
        free(rr->tab);
    }
    cudaFree(rr->state);
    cudaFree(rr->pos);
    cudaFree(rr->peer_win);
    if (rr->scratch) cudaFree(rr->scratch);
    for (size_t i = 0; i < rr->nretired; i++)
        cudaFree(rr->retired[i]);
    free(rr->retired);
    if (rr->err_h) cudaFreeHost(rr->err_h);
    memset(rr, 0, sizeof *rr);
}

/* Tests: the rank's counters as weft_rt_cfg.start_calls and start_msgs say. */
typedef struct start_ctx {
    char *win;
    int err;
} start_ctx;

static void start_put(void *ctx, size_t off, uint64_t v) {
    start_ctx *s = ctx;
    if (cudaMemcpy(s->win + off, &v, sizeof v, cudaMemcpyHostToDevice) != cudaSuccess) s->err = 1;
}

static weft_result start_counters(weft_comm *c, rt_rank *rr, char *win) {
    weft_result res = WEFT_OK;
    start_ctx sc = {win, 0};
    uint64_t *pos = malloc(c->lay.pos_words * sizeof *pos);
    weft_dprog *prog = NULL;
    WEFT_CHECK_ALLOC(pos);
    weft_layout_start(&c->lay, &c->cfg, pos, start_put, &sc);
    if (sc.err || cudaMemcpy(rr->pos, pos, c->lay.pos_words * sizeof *pos,
                             cudaMemcpyHostToDevice) != cudaSuccess)
        WEFT_FAIL(WEFT_ERR_CUDA);
    for (size_t i = 0; i < c->nalgos; i++) {
        const weft_algo_plan *p = &c->plans[i];
        if (!p->algo || !rr->tab[i].prog) continue;
        size_t nprog = (size_t)p->maxtbs * (size_t)p->kmax;
        free(prog);
        prog = calloc(nprog, sizeof *prog);
        WEFT_CHECK_ALLOC(prog);
        for (size_t k = 0; k < nprog; k++)
            prog[k].v = weft_layout_start_progress(&c->cfg);
        if (cudaMemcpy(rr->tab[i].prog, prog, nprog * sizeof *prog, cudaMemcpyHostToDevice) !=
            cudaSuccess)
            WEFT_FAIL(WEFT_ERR_CUDA);
    }
fail:
    free(prog);
    free(pos);
    return res;
}

/* Everything rank `rank` needs on the device, given every window as this rank addresses it. */
static weft_result rank_setup(weft_comm *c, rt_rank *rr, int rank, char *const *win, weft_diag *d) {
    weft_result res = WEFT_OK;
    weft_dconn *hs = NULL, *hr = NULL;
    char *rec = NULL;
    size_t nk = (size_t)(c->lay.nkeys > 0 ? c->lay.nkeys : 1);
    memset(rr, 0, sizeof *rr);
    rr->rank = rank;
    rr->win_local = win[rank];
    rr->state = dmalloc0(sizeof(weft_dstate), &res);
    if (!rr->state) goto cuda_fail;
#ifdef WEFT_RT_PROBE
    rr->probe = dmalloc0(WEFT_RT_PROBE_CTAS * WEFT_RT_PROBE_N * sizeof(uint64_t), &res);
    if (!rr->probe || cudaMemcpy((char *)rr->state + offsetof(weft_dstate, probe), &rr->probe,
                                 sizeof rr->probe, cudaMemcpyHostToDevice) != cudaSuccess)
        goto cuda_fail;
#endif
    rr->pos = dmalloc0(c->lay.pos_words * sizeof(uint64_t), &res);
    if (!rr->pos) goto cuda_fail;
    hs = calloc(nk, sizeof *hs);
    hr = calloc(nk, sizeof *hr);
    WEFT_CHECK_ALLOC(hs);
    WEFT_CHECK_ALLOC(hr);
    weft_layout_conns(&c->lay, &c->cfg, rank, win, rr->pos, hs, hr);
    if (upload((void **)&rr->peer_win, win, (size_t)c->nranks * sizeof *win) != WEFT_OK)
        goto cuda_fail;
    if (cudaHostAlloc((void **)&rr->err_h, sizeof(weft_errrec), cudaHostAllocMapped) !=
            cudaSuccess ||
        cudaHostGetDevicePointer((void **)&rr->err_d, rr->err_h, 0) != cudaSuccess)
        goto cuda_fail;
    memset(rr->err_h, 0, sizeof(weft_errrec));
    rr->tab = calloc(c->nalgos ? c->nalgos : 1, sizeof *rr->tab);
    WEFT_CHECK_ALLOC(rr->tab);
    for (size_t i = 0; i < c->nalgos; i++) {
        const weft_algo_plan *p = &c->plans[i];
        if (!p->algo) continue;
        for (int m = 0; m < 2; m++) {
            const weft_mode_plan *mp = weft_plan_mode(p, m);
            if (mp == NULL) continue;
            const weft_rank_plan *rp = &mp->ranks[rank];
            int32_t rb = weft_plan_rec_bytes(rp);
            size_t bytes = weft_plan_table_bytes(rp);
            free(rec);
            rec = malloc(bytes);
            WEFT_CHECK_ALLOC(rec);
            weft_plan_records(p, (int32_t)i, mp, &c->lay, rank, win, hs, hr, rec);
            rr->tab[i].rec_bytes[m] = rb;
            if (upload((void **)&rr->tab[i].rec[m], rec, bytes) != WEFT_OK ||
                upload((void **)&rr->tab[i].xsrc[m], rp->xsrc,
                       (size_t)rp->nxsrc * sizeof *rp->xsrc) != WEFT_OK ||
                upload((void **)&rr->tab[i].xrecv[m], rp->xrecv,
                       (size_t)rp->nxrecv * sizeof *rp->xrecv) != WEFT_OK)
                goto cuda_fail;
            if (mp->hop) {
                weft_hop_hdr hd;
                memcpy(&hd, mp->hop->tab[rank], sizeof hd);
                rr->tab[i].hop_bytes[m] = hd.bytes;
                if (upload((void **)&rr->tab[i].hop[m], mp->hop->tab[rank], (size_t)hd.bytes) !=
                    WEFT_OK)
                    goto cuda_fail;
            }
        }
        size_t nprog = (size_t)p->maxtbs * (size_t)p->kmax;
        rr->tab[i].prog = dmalloc0(nprog * sizeof(weft_dprog), &res);
        if (!rr->tab[i].prog) goto cuda_fail;
    }
    if (c->cfg.start_calls || c->cfg.start_msgs) {
        res = start_counters(c, rr, win[rank]);
        if (res == WEFT_ERR_CUDA) goto cuda_fail;
        WEFT_CHECK(res);
    }
    goto done;
cuda_fail:
    res = WEFT_ERR_CUDA;
    weft_diag_add(d, WEFT_SEV_ERROR, NULL, 0, 0, "weft: device allocation for rank %d failed: %s",
                  rank, cudaGetErrorString(cudaGetLastError()));
fail:
done:
    free(hs);
    free(hr);
    free(rec);
    return res;
}

/* Algorithms, layout and plans for nranks with at most max_ctas CTAs per rank; ineligible
 * algorithms are noted at INFO level. */
static weft_result comm_plan(weft_comm *c, const weft_algo *const *algos, size_t nalgos,
                             int32_t max_ctas, weft_diag *d) {
    weft_result res = WEFT_OK;
    char why[512];
    const char *stage = "allocation";
    size_t at = 0;
    c->nalgos = nalgos;
    c->max_ctas = max_ctas;
    c->algos = calloc(nalgos ? nalgos : 1, sizeof *c->algos);
    c->plans = calloc(nalgos ? nalgos : 1, sizeof *c->plans);
    c->usable = calloc(nalgos ? nalgos : 1, 1);
    WEFT_CHECK_ALLOC(c->algos);
    WEFT_CHECK_ALLOC(c->plans);
    WEFT_CHECK_ALLOC(c->usable);
    stage = "window layout";
    WEFT_CHECK(weft_layout_init(&c->lay, c->nranks, (int32_t)nalgos));
    for (size_t i = 0; i < nalgos; i++) {
        at = i;
        stage = "plan";
        c->algos[i] = algos[i];
        res = weft_plan_prepare(algos[i], c->nranks, max_ctas, &c->plans[i], why, sizeof why);
        if (res == WEFT_ERR_UNSUPPORTED) {
            WEFT_INFO(WEFT_SUBSYS_PLAN,
                      "weft: algorithm %s is not used on this %d-rank communicator: %s",
                      algos[i]->name, c->nranks, why);
            res = WEFT_OK;
            continue;
        }
        WEFT_CHECK(res);
        if (weft_plan_gate_proto(&c->plans[i], c->cfg.ll128))
            WEFT_INFO(WEFT_SUBSYS_PLAN, "weft: algorithm %s: LL128 runs as LL on this device",
                      algos[i]->name);
        const weft_algo_plan *p = &c->plans[i];
        WEFT_INFO(WEFT_SUBSYS_PLAN,
                  "weft: algorithm %s: up to %d CTAs per thread block; out of place: %s%s, in "
                  "place: %s%s",
                  algos[i]->name, p->kmax,
                  !p->mode[0].sched   ? "-"
                  : p->mode[0].direct ? "direct"
                                      : "staged",
                  p->mode[0].dropped ? " (dependencies that only guard in-place aliasing dropped)"
                                     : "",
                  !p->mode[1].sched   ? "-"
                  : p->mode[1].direct ? "direct"
                                      : "staged",
                  !p->mode[1].skipped  ? ""
                  : p->mode[1].dropped ? " (copies onto themselves skipped, and the waits for them)"
                                       : " (copies onto themselves skipped)");
        if (p->mode[0].sched || p->mode[1].sched)
            WEFT_INFO(WEFT_SUBSYS_PLAN,
                      "weft: algorithm %s: one-hop kernel out of place: %s, in place: %s",
                      algos[i]->name,
                      !p->mode[0].sched ? "-"
                      : p->mode[0].hop  ? "yes"
                                        : p->mode[0].hop_why,
                      !p->mode[1].sched ? "-"
                      : p->mode[1].hop  ? "yes"
                                        : p->mode[1].hop_why);
        stage = "window layout";
        WEFT_CHECK(weft_layout_add(&c->lay, (int32_t)i, p));
    }
    stage = "window layout";
    at = nalgos;
    WEFT_CHECK(weft_layout_finish(&c->lay, &c->cfg));
    for (size_t i = 0; i < nalgos; i++) {
        weft_algo_plan *p = &c->plans[i];
        if (!p->algo) continue;
        at = i;
        stage = "records";
        WEFT_CHECK(weft_plan_build(p, &c->lay, c->cfg.nslots[p->proto]));
        c->usable[i] = 1;
        if (p->mode[0].fused || p->mode[1].fused)
            WEFT_INFO(WEFT_SUBSYS_PLAN,
                      "weft: algorithm %s: %d receive chains fused out of place, %d in place",
                      algos[i]->name, p->mode[0].fused, p->mode[1].fused);
    }
fail:
    /* a rank that cannot plan makes every rank refuse the communicator: say why here */
    if (res != WEFT_OK)
        weft_diag_add(d, WEFT_SEV_ERROR, NULL, 0, 0, "weft: rank %d: %s%s%s failed: %s", c->rank,
                      stage, at < nalgos ? " of algorithm " : "",
                      at < nalgos && algos[at] && algos[at]->name ? algos[at]->name : "",
                      weft_result_str(res));
    return res;
}

/* A hash of what every rank must agree on: rank count, FIFO geometry, the window layout. */
static int64_t comm_hash(const weft_comm *c) {
    uint64_t h = 1469598103934665603ull;
#define MIXIN(v) (h = (h ^ (uint64_t)(v)) * 1099511628211ull)
    MIXIN(c->nranks);
    MIXIN(c->max_ctas);
    MIXIN(c->cfg.hop); /* every rank runs a call on the same kernel (WEFT_HOP, WEFT_TRACE) */
    for (int p = 0; p < WEFT_RT_PROTO_COUNT; p++)
        MIXIN(c->cfg.nslots[p]), MIXIN(c->cfg.slot_bytes[p]), MIXIN(c->cfg.slice_bytes[p]);
    MIXIN(c->lay.nkeys);
    MIXIN(c->lay.bytes);
    for (int i = 0; i < c->lay.nkeys; i++)
        MIXIN(c->lay.keys[i].d), MIXIN(c->lay.keys[i].chan), MIXIN(c->lay.keys[i].proto);
    for (size_t i = 0; i < c->nalgos; i++) {
        const weft_algo *a = c->algos[i];
        const weft_algo_plan *pl = &c->plans[i];
        MIXIN(pl->algo != NULL);
        if (!pl->algo) continue;
        MIXIN(pl->kmax), MIXIN(pl->mode[0].direct), MIXIN(pl->mode[1].direct);
        MIXIN(pl->mode[0].dropped), MIXIN(pl->mode[1].dropped), MIXIN(pl->mode[1].skipped);
        MIXIN(a->coll), MIXIN(a->proto), MIXIN(a->nchunksperloop), MIXIN(a->inplace);
        MIXIN(a->outofplace), MIXIN(a->min_bytes), MIXIN(a->max_bytes), MIXIN(a->root);
        MIXIN(a->graph_max_bytes);
        for (int32_t r = 0; r < a->ngpus; r++) {
            const weft_gpu *g = &a->gpus[r];
            MIXIN(g->i_chunks), MIXIN(g->o_chunks), MIXIN(g->s_chunks), MIXIN(g->ntbs);
            for (int32_t t = 0; t < g->ntbs; t++) {
                const weft_tb *tb = &g->tbs[t];
                MIXIN(tb->send), MIXIN(tb->recv), MIXIN(tb->chan), MIXIN(tb->nsteps);
                for (int32_t k = 0; k < tb->nsteps; k++) {
                    const weft_step *st = &tb->steps[k];
                    MIXIN(st->type), MIXIN(st->srcbuf), MIXIN(st->dstbuf), MIXIN(st->srcoff);
                    MIXIN(st->dstoff), MIXIN(st->cnt), MIXIN(st->depid), MIXIN(st->deps);
                    MIXIN(st->hasdep);
                }
            }
        }
    }
#undef MIXIN
    return (int64_t)(h >> 2);
}

/* Communicators attached per device in this process: their launches may be in flight at once,
 * which decides whether a launch needs to be cooperative (weft_rt_cfg.cooperative). */
#define WEFT_RT_MAX_DEVICES 256
static _Atomic int attached_on[WEFT_RT_MAX_DEVICES];

static void count_attached(weft_comm *c, int add) {
    if (c->dev < 0 || c->dev >= WEFT_RT_MAX_DEVICES || c->counted == add) return;
    atomic_fetch_add(&attached_on[c->dev], add ? 1 : -1);
    c->counted = add;
}

/* Cooperative when asked, or (auto) when this launch could not be resident beside one as large
 * of every other communicator attached on the device: launches that all fit never wait for SMs
 * held by each other, and any other kernel holding SMs ends on its own. */
static int launch_cooperative(const weft_comm *c, int32_t ncta, int32_t cap) {
    if (c->cfg.cooperative >= 0) return c->cfg.cooperative;
    int n = c->dev >= 0 && c->dev < WEFT_RT_MAX_DEVICES ? atomic_load(&attached_on[c->dev]) : 1;
    return (int64_t)ncta * (n > 1 ? n : 1) > (int64_t)cap;
}

static void comm_free(weft_comm *c) {
    if (c == NULL) return;
    count_attached(c, 0);
    int cur = -1;
    cudaGetDevice(&cur);
    if (c->dev >= 0) cudaSetDevice(c->dev);
    weft_rt_trace_stop(c); /* its records refer to the plans freed below */
    weft_mn_comm_free(c->api, c->mn, 0);
    for (int s = 0; s < c->nsub; s++)
        rank_free(c, &c->sub[s]);
    free(c->sub);
    if (c->loop_win) {
        for (int r = 0; r < c->nranks; r++)
            cudaFree(c->loop_win[r]);
        free(c->loop_win);
    }
    for (size_t w = 0; w < c->nwins; w++)
        for (int s = 0; s < c->nsub; s++)
            cudaFree(c->wins[w].peer[s]);
    free(c->wins);
    if (c->agree_buf) cudaFree(c->agree_buf);
    if (c->order_ev) cudaEventDestroy(c->order_ev);
    if (c->internal) cudaStreamDestroy(c->internal);
    if (c->plans)
        for (size_t i = 0; i < c->nalgos; i++)
            weft_plan_free(&c->plans[i]);
    free(c->plans);
    free(c->usable);
    free(c->algos);
    weft_layout_free(&c->lay);
    if (cur >= 0) cudaSetDevice(cur);
    free(c);
}

/* ---- attach over NCCL ------------------------------------------------------------------- */
/* Every comm's ranks learn whether all of them are fine (grouped MIN allreduce of
 * [ok, hash, -hash]); *all_ok = 0 when any rank of any comm is not, or hashes differ. */
static weft_result agree(int n, weft_comm **cs, const int *ok, int *all_ok, weft_diag *d) {
    weft_result res = WEFT_OK;
    const weft_nccl_api *a = cs[0]->api;
    int64_t(*v)[3] = calloc((size_t)n, sizeof *v);
    WEFT_CHECK_ALLOC(v);
    for (int i = 0; i < n; i++) {
        int64_t h = cs[i]->hash;
        v[i][0] = ok[i], v[i][1] = h, v[i][2] = -h;
        CUDA_TRY(d, cudaSetDevice(cs[i]->dev));
        CUDA_TRY(d, cudaMemcpyAsync(cs[i]->agree_buf, v[i], sizeof v[i], cudaMemcpyHostToDevice,
                                    cs[i]->internal));
    }
    NCCL_TRY(d, a, a->GroupStart());
    for (int i = 0; i < n; i++) {
        ncclResult_t r = a->AllReduce(cs[i]->agree_buf, cs[i]->agree_buf, 3, ncclInt64, ncclMin,
                                      cs[i]->nccl, cs[i]->internal);
        if (r != ncclSuccess) {
            a->GroupEnd();
            weft_diag_add(d, WEFT_SEV_ERROR, NULL, 0, 0, "weft: agreement allreduce failed: %s",
                          a->GetErrorString(r));
            WEFT_FAIL(WEFT_ERR_NCCL);
        }
    }
    NCCL_TRY(d, a, a->GroupEnd());
    *all_ok = 1;
    for (int i = 0; i < n; i++) {
        CUDA_TRY(d, cudaSetDevice(cs[i]->dev));
        CUDA_TRY(d, cudaMemcpyAsync(v[i], cs[i]->agree_buf, sizeof v[i], cudaMemcpyDeviceToHost,
                                    cs[i]->internal));
        CUDA_TRY(d, cudaStreamSynchronize(cs[i]->internal));
        if (v[i][0] != 1)
            *all_ok = 0;
        else if (v[i][1] != -v[i][2]) {
            weft_diag_add(d, WEFT_SEV_ERROR, NULL, 0, 0,
                          "weft: the ranks of a communicator loaded different algorithms or FIFO "
                          "settings (WEFT_ALGO_DIR, WEFT_FIFO must be the same everywhere)");
            *all_ok = 0;
        }
    }
fail:
    free(v);
    return res;
}

/* A communicator whose ranks lie on several nodes (its phased algorithms cross them). */
static int spans_nodes(const weft_comm *c) {
    return c->mn && weft_mn_comm_gpus_per_node(c->mn) < c->nranks;
}

static weft_result release_windows(int n, weft_comm **cs, weft_diag *d) {
    weft_result res = WEFT_OK;
    for (int i = 0; i < n; i++) {
        weft_comm *c = cs[i];
        if (!c) continue;
        cudaSetDevice(c->dev);
        if (c->have_devcomm) {
            int r = weft_rt_devcomm_destroy(c->api->DevCommDestroy, c->nccl, c->devcomm);
            if (r != ncclSuccess) {
                weft_diag_add(d, WEFT_SEV_WARNING, NULL, 0, 0, "weft: ncclDevCommDestroy: %s",
                              c->api->GetErrorString((ncclResult_t)r));
                res = WEFT_ERR_NCCL;
            }
            c->have_devcomm = 0;
        }
    }
    int any = 0;
    for (int i = 0; i < n; i++)
        any |= cs[i] && cs[i]->win;
    if (any) {
        const weft_nccl_api *a = NULL;
        for (int i = 0; i < n && !a; i++)
            if (cs[i]) a = cs[i]->api;
        a->GroupStart();
        for (int i = 0; i < n; i++)
            if (cs[i] && cs[i]->win) {
                ncclResult_t r = a->CommWindowDeregister(cs[i]->nccl, cs[i]->win);
                if (r != ncclSuccess) res = WEFT_ERR_NCCL;
                cs[i]->win = NULL;
            }
        a->GroupEnd();
    }
    for (int i = 0; i < n; i++)
        if (cs[i] && cs[i]->win_mem) {
            cudaSetDevice(cs[i]->dev);
            cs[i]->api->MemFree(cs[i]->win_mem);
            cs[i]->win_mem = NULL;
        }
    return res;
}

weft_result weft_rt_attach(int ncomms, ncclComm_t *comms, const weft_algo *const *algos,
                           size_t nalgos, const weft_rt_cfg *cfg, weft_comm **out, weft_diag *d) {
    return weft_rt_attach_mn(ncomms, comms, algos, nalgos, cfg, NULL, out, d);
}

weft_result weft_rt_attach_mn(int ncomms, ncclComm_t *comms, const weft_algo *const *algos,
                              size_t nalgos, const weft_rt_cfg *cfg, struct weft_mn_comm **mns,
                              weft_comm **out, weft_diag *d) {
    weft_result res = WEFT_OK;
    weft_comm **cs = NULL;
    int *ok = NULL, all_ok = 0, cur = -1, registered = 0;
    if (ncomms < 1 || comms == NULL || out == NULL) return WEFT_ERR_USAGE;
    for (int i = 0; i < ncomms; i++)
        out[i] = NULL;
    weft_log_set_device_fn(log_device);
    const weft_nccl_api *a = api_get(d);
    if (a == NULL) return WEFT_ERR_UNSUPPORTED;
    cudaGetDevice(&cur);
    cs = calloc((size_t)ncomms, sizeof *cs);
    ok = calloc((size_t)ncomms, sizeof *ok);
    WEFT_CHECK_ALLOC(cs);
    WEFT_CHECK_ALLOC(ok);
    int version = 0;
    int vok =
        a->GetVersion(&version) == ncclSuccess && weft_rt_check_version(version, d) == WEFT_OK;

    /* 1. Local: nothing here is collective, so a failure only clears ok[i]. */
    for (int i = 0; i < ncomms; i++) {
        weft_comm *c = cs[i] = calloc(1, sizeof *c);
        WEFT_CHECK_ALLOC(c);
        if (mns) c->mn = mns[i], mns[i] = NULL;
        c->api = a;
        c->nccl = comms[i];
        c->dev = -1;
        if (cfg)
            c->cfg = *cfg;
        else
            weft_rt_cfg_default(&c->cfg);
        if (a->CommCount(comms[i], &c->nranks) != ncclSuccess ||
            a->CommUserRank(comms[i], &c->rank) != ncclSuccess ||
            a->CommCuDevice(comms[i], &c->dev) != ncclSuccess) {
            weft_diag_add(d, WEFT_SEV_ERROR, NULL, 0, 0, "weft: cannot query communicator %d", i);
            continue;
        }
        if (c->mn && weft_mn_comm_bind(c->mn, c->rank) != WEFT_OK) {
            weft_diag_add(d, WEFT_SEV_ERROR, NULL, 0, 0,
                          "weft: rank %d: its share of the phased algorithms cannot be set up",
                          c->rank);
            continue;
        }
        if (cudaSetDevice(c->dev) != cudaSuccess ||
            cudaStreamCreateWithFlags(&c->internal, cudaStreamNonBlocking) != cudaSuccess ||
            cudaEventCreateWithFlags(&c->order_ev, cudaEventDisableTiming) != cudaSuccess ||
            cudaMalloc(&c->agree_buf, 64) != cudaSuccess) {
            weft_diag_add(d, WEFT_SEV_ERROR, NULL, 0, 0, "weft: CUDA setup on device %d failed",
                          c->dev);
            continue;
        }
        int devmax = weft_rt_device_max_blocks();
        c->dev_ctas = devmax;
        if (c->cfg.ll128 < 0) c->cfg.ll128 = weft_rt_ll128_auto(c->dev, 0);
        /* A traced call runs on the interpreter (a trace records thread blocks), and every rank
         * must pick the same kernel for a call: so where the job asks for traces, no rank runs
         * the one-hop kernel, even one whose trace file could not be opened. */
        const char *tr = weft_env_get(WEFT_ENV_TRACE);
        if (tr && *tr) c->cfg.hop = 0;
        int32_t maxc = c->cfg.max_ctas < devmax ? c->cfg.max_ctas : devmax;
        if (comm_plan(c, algos, nalgos, maxc, d) != WEFT_OK) continue;
        c->hash = comm_hash(c);
        if (!vok) continue;
        if (a->MemAlloc(&c->win_mem, c->lay.bytes) != ncclSuccess ||
            cudaMemset(c->win_mem, 0, c->lay.bytes) != cudaSuccess ||
            cudaDeviceSynchronize() != cudaSuccess) {
            weft_diag_add(d, WEFT_SEV_ERROR, NULL, 0, 0,
                          "weft: ncclMemAlloc of the %zu-byte window failed", c->lay.bytes);
            continue;
        }
        ok[i] = 1;
    }
    for (int i = 0; i < ncomms; i++)
        if (cs[i]->internal == NULL) WEFT_FAIL(WEFT_ERR_CUDA); /* cannot even agree */
    WEFT_CHECK(agree(ncomms, cs, ok, &all_ok, d));
    if (!all_ok) {
        weft_diag_add(d, WEFT_SEV_ERROR, NULL, 0, 0,
                      "weft: not attached: a rank could not set up (see its log)");
        WEFT_FAIL(WEFT_ERR_UNSUPPORTED);
    }

    /* 2. Collective: symmetric windows and device communicators, grouped over the comms. */
    NCCL_TRY(d, a, a->GroupStart());
    for (int i = 0; i < ncomms; i++) {
        ncclResult_t r = a->CommWindowRegister(cs[i]->nccl, cs[i]->win_mem, cs[i]->lay.bytes,
                                               &cs[i]->win, NCCL_WIN_COLL_SYMMETRIC);
        if (r != ncclSuccess)
            weft_diag_add(d, WEFT_SEV_ERROR, NULL, 0, 0,
                          "weft: ncclCommWindowRegister failed: %s (the communicator needs "
                          "symmetric memory: NCCL_CUMEM_ENABLE, P2P)",
                          a->GetErrorString(r));
    }
    ncclResult_t ge = a->GroupEnd();
    registered = 1;
    if (ge != ncclSuccess)
        weft_diag_add(d, WEFT_SEV_ERROR, NULL, 0, 0,
                      "weft: registering the symmetric windows failed: %s (NCCL_DEBUG=WARN says "
                      "why; across nodes NCCL registers symmetric windows only where its network "
                      "supports it)",
                      a->GetErrorString(ge));
    for (int i = 0; i < ncomms; i++)
        ok[i] = ge == ncclSuccess && cs[i]->win != NULL;
    if (ge == ncclSuccess) {
        a->GroupStart();
        for (int i = 0; i < ncomms; i++) {
            if (!ok[i]) continue;
            /* Across nodes NCCL 2.28 builds a device communicator only over GIN (GPU-initiated
             * networking), which sockets and many NICs lack; weft needs none: its network phases
             * are host-issued NCCL groups, and the node's LSA team is known (ncclTeamLsa). */
            if (spans_nodes(cs[i])) continue;
            int r = weft_rt_devcomm_create(a->DevCommCreate, cs[i]->nccl, cs[i]->devcomm);
            if (r != ncclSuccess) {
                weft_diag_add(d, WEFT_SEV_ERROR, NULL, 0, 0,
                              "weft: ncclDevCommCreate failed: %s (no device API on this "
                              "communicator)",
                              a->GetErrorString((ncclResult_t)r));
                ok[i] = 0;
            } else {
                cs[i]->have_devcomm = 1;
            }
        }
        ncclResult_t de = a->GroupEnd();
        if (de != ncclSuccess) {
            weft_diag_add(d, WEFT_SEV_ERROR, NULL, 0, 0,
                          "weft: creating the device communicators failed: %s",
                          a->GetErrorString(de));
            for (int i = 0; i < ncomms; i++)
                ok[i] = 0;
        }
    }

    /* 3. Local again: LSA reachability, peer pointers, device state. */
    for (int i = 0; i < ncomms; i++) {
        weft_comm *c = cs[i];
        if (!ok[i]) continue;
        ok[i] = 0;
        int lrank = -1, lsize = 0, nr = 0;
        int gpn = c->mn ? weft_mn_comm_gpus_per_node(c->mn) : c->nranks;
        if (c->have_devcomm)
            weft_rt_devcomm_info(c->devcomm, &lrank, &lsize, &nr);
        else /* spans nodes: the LSA team ncclTeamLsa gave when the communicator was queried */
            lsize = gpn, nr = c->nranks;
        if (lsize != gpn || nr != c->nranks) {
            weft_diag_add(d, WEFT_SEV_ERROR, NULL, 0, 0,
                          "weft: only %d of the communicator's %d ranks are load/store reachable "
                          "(other nodes?); weft's algorithms are ineligible on it",
                          lsize, c->nranks);
            continue;
        }
        char **win = calloc((size_t)c->nranks, sizeof *win);
        if (win == NULL) continue;
        cudaSetDevice(c->dev);
        cudaError_t e = weft_rt_peer_pointers(c->win, c->nranks, (void **)win, c->internal);
        if (c->mn) weft_mn_peer_table(c->nranks, gpn, c->rank, win);
        c->nsub = 1;
        c->sub = calloc(1, sizeof *c->sub);
        if (e == cudaSuccess && c->sub && rank_setup(c, &c->sub[0], c->rank, win, d) == WEFT_OK &&
            cudaDeviceSynchronize() == cudaSuccess)
            ok[i] = 1;
        else if (e != cudaSuccess)
            weft_diag_add(d, WEFT_SEV_ERROR, NULL, 0, 0, "weft: LSA pointers: %s",
                          cudaGetErrorString(e));
        free(win);
    }
    /* Also the barrier after which peers may write into each other's windows. */
    WEFT_CHECK(agree(ncomms, cs, ok, &all_ok, d));
    if (!all_ok) {
        weft_diag_add(d, WEFT_SEV_ERROR, NULL, 0, 0,
                      "weft: not attached: a rank could not set up (see its log)");
        WEFT_FAIL(WEFT_ERR_UNSUPPORTED);
    }
    if (cs[0]->mn) { /* every rank attached: weft's own communicators, agreed */
        struct weft_mn_comm **ms = calloc((size_t)ncomms, sizeof *ms);
        WEFT_CHECK_ALLOC(ms);
        for (int i = 0; i < ncomms; i++)
            ms[i] = cs[i]->mn;
        res = weft_mn_comm_connect(ncomms, cs, ms, d);
        free(ms);
        WEFT_CHECK(res);
    }
    for (int i = 0; i < ncomms; i++) {
        out[i] = cs[i];
        count_attached(cs[i], 1);
        WEFT_INFO(WEFT_SUBSYS_INIT,
                  "weft: attached to rank %d of %d on device %d (window %zu bytes, %d "
                  "connection keys)",
                  cs[i]->rank, cs[i]->nranks, cs[i]->dev, cs[i]->lay.bytes, cs[i]->lay.nkeys);
        weft_rt_trace_env(cs[i]);
    }
    free(cs);
    free(ok);
    if (cur >= 0) cudaSetDevice(cur);
    return WEFT_OK;
fail:
    if (cs) {
        if (registered) release_windows(ncomms, cs, d);
        for (int i = 0; i < ncomms; i++) {
            if (cs[i] && cs[i]->win_mem) {
                cudaSetDevice(cs[i]->dev);
                a->MemFree(cs[i]->win_mem);
                cs[i]->win_mem = NULL;
            }
            comm_free(cs[i]);
        }
    }
    free(cs);
    free(ok);
    for (int i = 0; mns && i < ncomms; i++) /* those never handed to a communicator */
        weft_mn_comm_free(a, mns[i], 0);
    if (cur >= 0) cudaSetDevice(cur);
    return res;
}

weft_result weft_rt_detach(weft_comm *c) {
    if (c == NULL) return WEFT_OK;
    weft_result res = WEFT_OK;
    int cur = -1;
    cudaGetDevice(&cur);
    if (c->dev >= 0) cudaSetDevice(c->dev);
    if (cudaDeviceSynchronize() != cudaSuccess) res = WEFT_ERR_CUDA;
    if (!c->loop_win) {
        weft_comm *one[1] = {c};
        if (release_windows(1, one, NULL) != WEFT_OK) res = WEFT_ERR_NCCL;
    }
    comm_free(c);
    if (cur >= 0) cudaSetDevice(cur);
    return res;
}

typedef struct detach_job {
    weft_comm *c;
    weft_result res;
} detach_job;

static void *detach_thread(void *arg) {
    detach_job *j = arg;
    j->res = weft_rt_detach(j->c);
    return NULL;
}

weft_result weft_rt_detach_many(int n, weft_comm **cs) {
    if (n == 1) return weft_rt_detach(cs[0]);
    weft_result res = WEFT_OK;
    detach_job *jobs = calloc((size_t)n, sizeof *jobs);
    pthread_t *th = calloc((size_t)n, sizeof *th);
    if (!jobs || !th) {
        free(jobs);
        free(th);
        return WEFT_ERR_NOMEM;
    }
    /* Window deregistration may wait for the other ranks: one thread per communicator. */
    for (int i = 0; i < n; i++) {
        jobs[i].c = cs[i];
        if (pthread_create(&th[i], NULL, detach_thread, &jobs[i]) != 0) {
            jobs[i].res = WEFT_ERR_SYSTEM;
            th[i] = 0;
        }
    }
    for (int i = 0; i < n; i++) {
        if (th[i]) pthread_join(th[i], NULL);
        if (jobs[i].res != WEFT_OK) res = jobs[i].res;
    }
    free(jobs);
    free(th);
    return res;
}

/* ---- loopback: every rank on one device, no NCCL ---------------------------------------- */
weft_result weft_rt_loopback_create(int nranks, const weft_algo *const *algos, size_t nalgos,
                                    const weft_rt_cfg *cfg, weft_comm **out, weft_diag *d) {
    weft_result res = WEFT_OK;
    *out = NULL;
    if (nranks < 1 || nranks > WEFT_RT_MAX_SUB) return WEFT_ERR_USAGE;
    weft_log_set_device_fn(log_device);
    weft_comm *c = calloc(1, sizeof *c);
    WEFT_CHECK_ALLOC(c);
    c->nranks = nranks;
    c->rank = 0;
    CUDA_TRY(d, cudaGetDevice(&c->dev));
    if (cfg)
        c->cfg = *cfg;
    else
        weft_rt_cfg_default(&c->cfg);
    CUDA_TRY(d, cudaEventCreateWithFlags(&c->order_ev, cudaEventDisableTiming));
    if (c->cfg.ll128 < 0) c->cfg.ll128 = weft_rt_ll128_auto(c->dev, 1);
    /* Every rank's CTAs share the device, all resident at once. */
    int32_t devmax = weft_rt_device_max_blocks(), maxc = devmax / nranks;
    if (c->cfg.max_ctas < maxc) maxc = c->cfg.max_ctas;
    WEFT_CHECK(comm_plan(c, algos, nalgos, maxc, d));
    c->loop_win = calloc((size_t)nranks, sizeof *c->loop_win);
    c->sub = calloc((size_t)nranks, sizeof *c->sub);
    WEFT_CHECK_ALLOC(c->loop_win);
    WEFT_CHECK_ALLOC(c->sub);
    for (int r = 0; r < nranks; r++) {
        c->loop_win[r] = dmalloc0(c->lay.bytes, &res);
        if (!c->loop_win[r]) WEFT_FAIL(WEFT_ERR_CUDA);
    }
    c->nsub = nranks;
    for (int r = 0; r < nranks; r++)
        WEFT_CHECK(rank_setup(c, &c->sub[r], r, c->loop_win, d));
    CUDA_TRY(d, cudaDeviceSynchronize());
    c->dev_ctas = devmax;
    count_attached(c, 1);
    *out = c;
    return WEFT_OK;
fail:
    comm_free(c);
    return res;
}

weft_result weft_rt_loopback_register(weft_comm *c, char *const *base, size_t bytes) {
    weft_result res = WEFT_OK;
    if (c == NULL || c->loop_win == NULL || base == NULL || bytes == 0) return WEFT_ERR_USAGE;
    if (weft_grow((void **)&c->wins, &c->capwins, c->nwins, sizeof *c->wins) != 0)
        return WEFT_ERR_NOMEM;
    rt_window *w = &c->wins[c->nwins];
    memset(w, 0, sizeof *w);
    w->bytes = bytes;
    for (int s = 0; s < c->nsub; s++) {
        w->base[s] = base[s];
        /* one device memory: every rank addresses every part as it is */
        if (upload((void **)&w->peer[s], base, (size_t)c->nranks * sizeof *base) != WEFT_OK) {
            for (int q = 0; q <= s; q++)
                cudaFree(w->peer[q]);
            return WEFT_ERR_CUDA;
        }
    }
    c->nwins++;
    return res;
}

/* ---- the application's windows ---------------------------------------------------------- */
weft_result weft_comm_window_register(weft_comm *c, void *buf, size_t bytes, ncclWindow_t win) {
    weft_result res = WEFT_OK;
    char **host = NULL, **dev = NULL;
    if (c == NULL || buf == NULL || bytes == 0 || win == NULL || c->nsub != 1 || c->loop_win)
        return WEFT_ERR_USAGE;
    int cur = -1;
    cudaGetDevice(&cur);
    if (cudaSetDevice(c->dev) != cudaSuccess) return WEFT_ERR_CUDA;
    host = calloc((size_t)c->nranks, sizeof *host);
    WEFT_CHECK_ALLOC(host);
    /* every peer's part, as this rank addresses it (LSA pointers) */
    if (weft_rt_peer_pointers(win, c->nranks, (void **)host, c->internal) != cudaSuccess ||
        upload((void **)&dev, host, (size_t)c->nranks * sizeof *host) != WEFT_OK)
        WEFT_FAIL(WEFT_ERR_CUDA);
    if (weft_grow((void **)&c->wins, &c->capwins, c->nwins, sizeof *c->wins) != 0)
        WEFT_FAIL(WEFT_ERR_NOMEM);
    rt_window *w = &c->wins[c->nwins++];
    memset(w, 0, sizeof *w);
    w->handle = win;
    w->base[0] = buf;
    w->peer[0] = dev;
    w->bytes = bytes;
    dev = NULL;
    WEFT_INFO(WEFT_SUBSYS_REG,
              "weft: rank %d: window %p of %zu bytes registered: calls in it may read peers' "
              "buffers in place",
              c->rank, buf, bytes);
fail:
    if (dev) cudaFree(dev);
    free(host);
    if (cur >= 0) cudaSetDevice(cur);
    return res;
}

weft_result weft_comm_window_deregister(weft_comm *c, ncclWindow_t win) {
    if (c == NULL || win == NULL) return WEFT_ERR_USAGE;
    for (size_t i = 0; i < c->nwins; i++) {
        if (c->wins[i].handle != win) continue;
        int cur = -1;
        cudaGetDevice(&cur);
        cudaSetDevice(c->dev);
        /* queued launches may still read the peer array */
        weft_result res = cudaDeviceSynchronize() == cudaSuccess ? WEFT_OK : WEFT_ERR_CUDA;
        for (int s = 0; s < c->nsub; s++)
            cudaFree(c->wins[i].peer[s]);
        c->wins[i] = c->wins[--c->nwins];
        if (cur >= 0) cudaSetDevice(cur);
        return res;
    }
    return WEFT_OK; /* not one weft knew */
}

/* ---- launching -------------------------------------------------------------------------- */
/* Reports a watchdog record once; afterwards the communicator refuses (NCCL takes over). */
int weft_rt_check_broken(weft_comm *c, weft_result *res) {
    if (c->broken) {
        *res = WEFT_ERR_UNSUPPORTED;
        return 1;
    }
    /* The rank that gave up first says why; the others only say that it did. */
    int pick = -1;
    for (int s = 0; s < c->nsub; s++) {
        const volatile weft_errrec *e = c->sub[s].err_h;
        if (e && e->code && (pick < 0 || e->code != WEFT_RT_WAIT_ABORTED)) pick = s;
    }
    for (int s = pick < 0 ? c->nsub : pick; s < c->nsub; s++) {
        const volatile weft_errrec *e = c->sub[s].err_h;
        if (e && e->code) {
            weft_errrec rec;
            memcpy(&rec, (const void *)e, sizeof rec);
            const weft_algo *a =
                rec.algo >= 0 && (size_t)rec.algo < c->nalgos ? c->algos[rec.algo] : NULL;
            char phase[192];
            size_t at = 0;
            if (weft_mn_comm_describe(c->mn, rec.algo, phase, sizeof phase))
                at = (size_t)snprintf(c->broken_msg, sizeof c->broken_msg, "in %s: ", phase);
            weft_errrec_format(&rec, a, c->broken_msg + at, sizeof c->broken_msg - at);
            WEFT_WARN("weft: %s; weft is off on this communicator from now on", c->broken_msg);
            c->broken = 1;
            *res = WEFT_ERR_TIMEOUT;
            return 1;
        }
    }
    if (weft_mn_comm_check(c->mn, c->cfg.timeout_ns, c->broken_msg, sizeof c->broken_msg) ==
        WEFT_ERR_TIMEOUT) {
        WEFT_WARN("weft: %s; weft is off on this communicator from now on", c->broken_msg);
        c->broken = 1;
        *res = WEFT_ERR_TIMEOUT;
        return 1;
    }
    return 0;
}

weft_result weft_comm_status(weft_comm *c, char *msg, size_t len) {
    weft_result res = WEFT_OK;
    if (msg && len) msg[0] = '\0';
    if (c == NULL) return WEFT_ERR_USAGE;
    if (weft_rt_check_broken(c, &res) || c->broken) {
        if (msg && len) snprintf(msg, len, "%s", c->broken_msg);
        return WEFT_ERR_TIMEOUT;
    }
    return WEFT_OK;
}

static int is_capturing(cudaStream_t s, unsigned long long *id) {
    enum cudaStreamCaptureStatus st = cudaStreamCaptureStatusNone;
    *id = 0;
    if (cudaStreamGetCaptureInfo(s, &st, id, NULL, NULL, NULL, NULL) != cudaSuccess) return 0;
    return st == cudaStreamCaptureStatusActive;
}

/* Calls on one communicator run in issue order even on different streams: the new stream
 * waits for what the previous one has queued. Under capture only within the same capture. */
static weft_result order_streams(weft_comm *c, cudaStream_t stream) {
    if (!c->have_last || c->last_stream == stream) return WEFT_OK;
    unsigned long long id_new, id_old;
    int cap_new = is_capturing(stream, &id_new), cap_old = is_capturing(c->last_stream, &id_old);
    if (cap_new != cap_old || (cap_new && id_new != id_old)) return WEFT_OK;
    if (cudaEventRecord(c->order_ev, c->last_stream) != cudaSuccess ||
        cudaStreamWaitEvent(stream, c->order_ev, 0) != cudaSuccess)
        return WEFT_ERR_CUDA;
    return WEFT_OK;
}

weft_result weft_rt_grow_scratch(rt_rank *rr, size_t need, cudaStream_t stream) {
    if (need <= rr->scratch_bytes) return WEFT_OK;
    unsigned long long id;
    if (is_capturing(stream, &id)) return WEFT_ERR_UNSUPPORTED; /* no allocation in a graph */
    if (need < 2 * rr->scratch_bytes) need = 2 * rr->scratch_bytes;
    size_t bytes = (need + ((size_t)1 << 20) - 1) & ~(((size_t)1 << 20) - 1);
    void *p = NULL;
    if (rr->scratch) {
        char **r = realloc(rr->retired, (rr->nretired + 1) * sizeof *r);
        if (r == NULL) return WEFT_ERR_NOMEM;
        rr->retired = r;
    }
    if (cudaMallocAsync(&p, bytes, stream) != cudaSuccess) return WEFT_ERR_CUDA;
    /* A graph captured earlier may replay with the old address: keep it (not freed here,
     * not even stream-ordered, since a replay can come at any later time). */
    if (rr->scratch) rr->retired[rr->nretired++] = rr->scratch;
    rr->scratch = p;
    rr->scratch_bytes = bytes;
    return WEFT_OK;
}

/* The registered window holding [p, p + bytes) of local rank s, and p's offset in it. */
static const rt_window *find_window(const weft_comm *c, int s, const void *p, size_t bytes,
                                    int64_t *off) {
    uintptr_t x = (uintptr_t)p;
    for (size_t i = 0; i < c->nwins; i++) {
        const rt_window *w = &c->wins[i];
        uintptr_t b = (uintptr_t)w->base[s];
        if (x >= b && x - b <= w->bytes && bytes <= w->bytes - (x - b)) {
            *off = (int64_t)(x - b);
            return w;
        }
    }
    return NULL;
}

/* Whether the call's buffers lie in registered windows at the same offset on every local rank
 * (other processes' ranks register symmetrically, as NCCL requires): then peers may read them
 * in place. Fills the per-rank window bases and offsets. */
static int call_windows(const weft_comm *c, const weft_call *call, const void *const *send,
                        const void *const *recv, const rt_window *w[2], int64_t off[2]) {
    if (c->nwins == 0) return 0;
    size_t es = (size_t)weft_dtype_size(call->dtype);
    int32_t n = c->nranks;
    size_t bytes[2] = {call->count * es * (size_t)weft_coll_segs(call->coll, WEFT_BUF_INPUT, n),
                       call->count * es * (size_t)weft_coll_segs(call->coll, WEFT_BUF_OUTPUT, n)};
    for (int s = 0; s < c->nsub; s++) {
        const void *p[2] = {send[s], recv[s]};
        for (int b = 0; b < 2; b++) {
            int64_t o = 0;
            if (p[b] == NULL) return 0;
            const rt_window *x = find_window(c, s, p[b], bytes[b], &o);
            if (x == NULL || (s > 0 && (x != w[b] || o != off[b]))) return 0;
            w[b] = x, off[b] = o;
        }
    }
    return 1;
}

int weft_rt_call_registered(const weft_comm *c, const weft_call *call, const void *const *send,
                            const void *const *recv) {
    const rt_window *w[2] = {NULL, NULL};
    int64_t off[2] = {0, 0};
    return c && call && send && recv && call_windows(c, call, send, recv, w, off);
}

weft_result weft_rt_call_geom(weft_comm *c, int ai, const weft_call *call, const void *const *send,
                              void *const *recv, weft_call_geom *g) {
    if (c == NULL || call == NULL || ai < 0 || (size_t)ai >= c->nalgos || !c->plans[ai].algo)
        return WEFT_ERR_UNSUPPORTED;
    const weft_rt_cfg *cfg = &c->cfg;
    const rt_window *w[2] = {NULL, NULL};
    int64_t off[2] = {0, 0};
    int direct = send && recv && call_windows(c, call, send, (const void *const *)recv, w, off);
    return weft_call_geometry(&c->plans[ai], cfg, call->inplace, call->count,
                              weft_dtype_size(call->dtype), weft_coll_reduces(call->coll), direct,
                              g);
}

/* After a call's kernel: avg's scaling pass, the call count, the stream, the device back. */
static weft_result launch_tail(weft_comm *c, int ai, const weft_call *call, void *const *recv,
                               cudaStream_t stream, weft_result res, int launched, int cur) {
    const weft_algo *a = c->plans[ai].algo;
    if (res == WEFT_OK && call->op == WEFT_OP_AVG && weft_coll_reduces(a->coll))
        for (int s = 0; s < c->nsub && res == WEFT_OK; s++) {
            int64_t n = weft_avg_elems(call->coll, a->root, c->sub[s].rank, (int64_t)call->count,
                                       c->nranks);
            if (n &&
                weft_rt_scale_launch(recv[s], n, call->dtype, c->nranks, stream) != cudaSuccess)
                res = WEFT_ERR_CUDA;
        }
    c->ncalls += launched; /* a trace's call numbers: every launched call counts */
    if (res == WEFT_OK) {
        c->last_stream = stream;
        c->have_last = 1;
    }
    if (cur >= 0 && cur != c->dev) cudaSetDevice(cur);
    return res;
}

/* Whether call runs on the one-hop kernel (and its CTAs per rank, slice, threads): the
 * communicator has the area, this build the kernel, and weft_hop_call the call. */
static int call_hop(const weft_comm *c, int ai, const weft_call *call, int32_t *nb, int32_t *S,
                    int32_t *nt) {
    const weft_mode_plan *m = weft_plan_mode(&c->plans[ai], call->inplace);
    int reduces = weft_coll_reduces(call->coll);
    return c->lay.hop_off &&
           weft_rt_kernel_built(weft_rt_kernel_index(call->dtype, call->op, reduces),
                                WEFT_RT_KV_HOP) &&
           weft_hop_call(m, &c->plans[ai], &c->cfg, call->count, weft_dtype_size(call->dtype),
                         reduces, c->trace != NULL, nb, S, nt);
}

/* A call on the one-hop kernel (runtime_internal.h, "the one-hop path"): nb CTAs per rank of S
 * bytes of every chunk each, every rank of the launch's tables and buffers by value. */
static weft_result hop_launch(weft_comm *c, int ai, const weft_call *call, const void *const *send,
                              void *const *recv, cudaStream_t stream, int ki, int32_t nb, int32_t S,
                              int32_t nt) {
    const weft_algo_plan *p = &c->plans[ai];
    const int mi = call->inplace ? 1 : 0;
    const weft_mode_plan *m = weft_plan_mode(p, mi);
    weft_result res = order_streams(c, stream);
    if (res != WEFT_OK) return res;
    weft_hop_kargs ka;
    weft_hop_args(p, ai, &c->lay, &c->cfg, call->count, weft_dtype_size(call->dtype),
                  weft_coll_reduces(call->coll), nb, S, &ka);
    ka.nsub = c->nsub;
    for (int s = 0; s < c->nsub; s++) {
        rt_rank *rr = &c->sub[s];
        const weft_rank_plan *rp = &m->ranks[rr->rank];
        if ((rp->uses_buf[WEFT_BUF_INPUT] && send[s] == NULL) ||
            (rp->uses_buf[WEFT_BUF_OUTPUT] && recv[s] == NULL) || !rr->tab[ai].hop[mi])
            return WEFT_ERR_UNSUPPORTED;
        weft_hop_rargs *x = &ka.r[s];
        x->tab = rr->tab[ai].hop[mi];
        x->tab_bytes = rr->tab[ai].hop_bytes[mi];
        x->mem[0] = (char *)(uintptr_t)send[s];
        x->mem[1] = (char *)recv[s];
        x->peer_win = rr->peer_win;
        x->state = rr->state;
        x->err = rr->err_d;
        x->rank = rr->rank;
    }
    /* one rank a launch waits for nothing of its own launch; several (loopback) wait for each
     * other's CTAs, which must then be resident together as the interpreter's are */
    int coop = c->nsub > 1 && launch_cooperative(c, c->nsub * nb, c->dev_ctas);
    return weft_rt_hop_launch(ki, &ka, c->nsub * nb, nt, coop, stream) == cudaSuccess
               ? WEFT_OK
               : WEFT_ERR_CUDA;
}

weft_result weft_rt_launch(weft_comm *c, int ai, const weft_call *call, const void *const *send,
                           void *const *recv, cudaStream_t stream) {
    weft_result res = WEFT_OK;
    if (c == NULL || call == NULL) return WEFT_ERR_USAGE;
    if (weft_rt_check_broken(c, &res)) return res;
    if (ai < 0 || (size_t)ai >= c->nalgos || c->plans[ai].algo == NULL) return WEFT_ERR_UNSUPPORTED;
    const weft_algo_plan *p = &c->plans[ai];
    const weft_algo *a = p->algo;
    const int mi = call->inplace ? 1 : 0;
    const weft_mode_plan *m = weft_plan_mode(p, mi);
    if (m == NULL || call->coll != a->coll || call->nranks != c->nranks || call->count == 0 ||
        (unsigned)call->dtype >= WEFT_DTYPE_COUNT || (unsigned)call->op >= WEFT_OP_COUNT ||
        (weft_coll_rooted(a->coll) && call->root != a->root))
        return WEFT_ERR_UNSUPPORTED;
    int reduces = weft_coll_reduces(a->coll);
    int ki = weft_rt_kernel_index(call->dtype, call->op, reduces);
    if (ki < 0) return WEFT_ERR_UNSUPPORTED;
    if (!weft_rt_kernel_built(ki, c->trace ? WEFT_RT_KV_TRACED : WEFT_RT_KV_PLAIN)) {
        /* a build for kernel work (CMake's WEFT_KERNELS) without this call's kernel: said once
         * per kernel and process */
        static int said[WEFT_RT_NKERNELS][2];
        if (!__atomic_exchange_n(&said[ki][c->trace != NULL], 1, __ATOMIC_RELAXED))
            WEFT_INFO(WEFT_SUBSYS_COLL,
                      "%s %s %s: this build has no %skernel for it (WEFT_KERNELS=%s): NCCL "
                      "serves such calls",
                      weft_coll_name(call->coll), weft_dtype_name(call->dtype),
                      weft_redop_name(call->op), c->trace ? "traced " : "", WEFT_RT_KERNELS_SEL);
        return WEFT_ERR_UNSUPPORTED;
    }
    int cur = -1;
    cudaGetDevice(&cur);
    if (cur != c->dev && cudaSetDevice(c->dev) != cudaSuccess) return WEFT_ERR_CUDA;
    int32_t hb = 0, hS = 0, hT = 0;
    if (call_hop(c, ai, call, &hb, &hS, &hT)) {
        res = hop_launch(c, ai, call, send, recv, stream, ki, hb, hS, hT);
        return launch_tail(c, ai, call, recv, stream, res, res == WEFT_OK, cur);
    }
    const rt_window *w[2] = {NULL, NULL};
    int64_t off[2] = {0, 0};
    int direct = m->direct && call_windows(c, call, send, (const void *const *)recv, w, off);
    weft_call_geom g;
    weft_kargs ka;
    int ncta = 0, traced = 0, collapsed = 0;
    res = weft_call_geometry(p, &c->cfg, mi, call->count, weft_dtype_size(call->dtype), reduces,
                             direct, &g);
    if (res == WEFT_OK) collapsed = weft_plan_use_collapsed(p, m, &g, &c->cfg, c->trace != NULL);
    if (res == WEFT_OK) res = order_streams(c, stream);
    if (res == WEFT_OK) {
        weft_plan_call_args(p, ai, &g, &c->cfg, &ka.c);
        ka.nsub = c->nsub;
    }
    for (int s = 0; s < c->nsub && res == WEFT_OK; s++) {
        rt_rank *rr = &c->sub[s];
        const weft_rank_plan *rp = &m->ranks[rr->rank];
        if ((rp->uses_buf[WEFT_BUF_INPUT] && send[s] == NULL) ||
            (rp->uses_buf[WEFT_BUF_OUTPUT] && recv[s] == NULL)) {
            res = WEFT_ERR_UNSUPPORTED;
            break;
        }
        if (rp->uses_buf[WEFT_BUF_SCRATCH])
            res = weft_rt_grow_scratch(
                rr, weft_call_scratch(p, rr->rank, call->count, weft_dtype_size(call->dtype)),
                stream);
        if (res != WEFT_OK) break;
        weft_rank_args *x = &ka.r[s];
        memset(x, 0, sizeof *x);
        x->rec = rr->tab[ai].rec[mi], x->rec_bytes = rr->tab[ai].rec_bytes[mi];
        x->xsrc = rr->tab[ai].xsrc[mi];
        x->xrecv = rr->tab[ai].xrecv[mi];
        x->prog = rr->tab[ai].prog;
        x->buf[0] = (char *)(uintptr_t)send[s];
        x->buf[1] = (char *)recv[s];
        x->buf[2] = rr->scratch;
        x->state = rr->state;
        x->peer_win = rr->peer_win;
        x->err = rr->err_d;
        x->rank = rr->rank;
        x->tb0 = weft_plan_tb0(rp, collapsed);
        if (g.direct)
            for (int b = 0; b < 2; b++)
                x->pbase[b] = w[b]->peer[s], x->poff[b] = off[b];
        if (c->trace)
            weft_rt_trace_launch(c, s, ai, call->count, call->dtype, call->op, call->inplace, &g,
                                 stream, &x->trace);
        traced |= x->trace.rec != NULL;
        ka.cta_base[s] = ncta;
        ncta += weft_plan_ntbs_run(rp, collapsed) * g.K;
    }
    if (res == WEFT_OK) ka.cta_base[c->nsub] = ncta;
    int launched = 0;
    if (res == WEFT_OK) {
        weft_rt_kvariant kv = weft_call_variant(&c->cfg, &ka.c, traced);
        int nt = weft_call_threads(&c->cfg, &ka.c, g.kelem, kv), cap = c->dev_ctas;
        if (kv == WEFT_RT_KV_LL) {
            /* the latency kernel holds fewer CTAs an SM: where the launch does not fit it, the
             * general kernel runs it */
            int lc = weft_rt_kernel_capacity(c->dev, ki, kv, nt);
            if (ncta <= lc)
                cap = lc < cap ? lc : cap;
            else
                kv = WEFT_RT_KV_PLAIN, nt = weft_call_threads(&c->cfg, &ka.c, g.kelem, kv);
        }
        if (weft_rt_kernel_launch(ki, kv, launch_cooperative(c, ncta, cap), &ka, ncta, nt,
                                  stream) != cudaSuccess)
            res = WEFT_ERR_CUDA;
        else
            launched = 1;
    }
    if (c->trace) weft_rt_trace_end_launch(c, launched);
    return launch_tail(c, ai, call, recv, stream, res, launched, cur);
}

int weft_rt_algo_eligible(const weft_comm *c, int ai) {
    return c && ai >= 0 && (size_t)ai < c->nalgos && c->plans[ai].algo != NULL;
}

const weft_registry *weft_rt_registry(const weft_comm *c) {
    return c->reg;
}
const unsigned char *weft_rt_usable(const weft_comm *c) {
    return c->usable;
}

int weft_rt_call_ctas(const weft_comm *c, int ai, const weft_call *call) {
    weft_call_geom g;
    if (!weft_rt_algo_eligible(c, ai)) return 0;
    if (weft_rt_call_geom((weft_comm *)c, ai, call, NULL, NULL, &g) != WEFT_OK) return 0;
    const weft_mode_plan *m = weft_plan_mode(&c->plans[ai], call->inplace);
    if (m == NULL) return 0;
    int32_t hb = 0, hS = 0, hT = 0;
    if (call_hop(c, ai, call, &hb, &hS, &hT)) return hb; /* the one-hop kernel */
    int collapsed = weft_plan_use_collapsed(&c->plans[ai], m, &g, &c->cfg, c->trace != NULL);
    return weft_plan_ntbs_run(&m->ranks[c->sub[0].rank], collapsed) * g.K;
}

weft_result weft_comm_detach(weft_comm *c) {
    return weft_rt_detach(c);
}

weft_result weft_comm_detach_many(int n, weft_comm **cs) {
    if (n < 1 || cs == NULL) return WEFT_ERR_USAGE;
    return weft_rt_detach_many(n, cs);
}

weft_result weft_comm_abort(weft_comm *c) {
    if (c == NULL) return WEFT_OK;
    int cur = -1;
    cudaGetDevice(&cur);
    if (c->dev >= 0) cudaSetDevice(c->dev);
    /* Kernels still waiting for a vanished peer end at the watchdog's bound. */
    weft_result res = cudaDeviceSynchronize() == cudaSuccess ? WEFT_OK : WEFT_ERR_CUDA;
    if (c->win_mem && c->api) c->api->MemFree(c->win_mem);
    c->win_mem = NULL;
    c->win = NULL;
    c->have_devcomm = 0;
    weft_mn_comm_free(c->api, c->mn, 1); /* peers may be gone: abort weft's communicator */
    c->mn = NULL;
    comm_free(c);
    if (cur >= 0) cudaSetDevice(cur);
    return res;
}
