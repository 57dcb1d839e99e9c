/* multinode_launch.c — a registry's algorithms on communicators, for select/api.c (weft_rt.h):
 * attach with each phased algorithm's GPU phases, and one call, in phases (GPU phases through
 * comm.c's launch, network phases as NCCL groups, all on the caller's stream, with the
 * watchdog's marks between them) or as one kernel. CUDA builds. */
#include "comm_internal.h"
#include "multinode_rt_internal.h"

#include <stdlib.h>
#include <string.h>

/* ---- attach to a registry's algorithms ------------------------------------------------ */
weft_result weft_rt_attach_registry(int ncomms, ncclComm_t *comms, const weft_registry *reg,
                                    const weft_algo *const *algos, const weft_phased *const *phased,
                                    size_t n, int gpn, weft_comm **out, weft_diag *d) {
    weft_result res = WEFT_OK;
    weft_mn_comm **mns = calloc((size_t)(ncomms > 0 ? ncomms : 1), sizeof *mns);
    const weft_algo **list = NULL;
    size_t nlist = 0;
    WEFT_CHECK_ALLOC(mns);
    /* the phased algorithms become their GPU phases (the same list on every communicator of
     * this attach; each one's own state for its rank) */
    for (int i = 0; i < ncomms; i++) {
        const weft_algo **l = NULL;
        size_t nl = 0;
        WEFT_CHECK(weft_mn_comm_new(algos, phased, n, gpn, &mns[i], &l, &nl, d));
        if (i == 0)
            list = l, nlist = nl;
        else
            free(l);
    }
    res = weft_rt_attach_mn(ncomms, comms, list, nlist, NULL, mns, out, d);
    for (int i = 0; i < ncomms && res == WEFT_OK; i++)
        out[i]->reg = reg;
fail:
    for (int i = 0; mns && i < ncomms; i++)
        weft_mn_comm_free(NULL, mns[i], 0); /* NULL once a communicator took it */
    free(mns);
    free(list);
    return res;
}

/* ---- one call ----------------------------------------------------------------------------- */
typedef struct call_ctx {
    weft_comm *c;
    weft_mn_comm *m;
    weft_call call; /* avg runs as sum in the phases */
    const void *send;
    void *recv;
    int watch; /* this call's marks are recorded */
} call_ctx;

static weft_result gpu_phase(void *ctx, int32_t slot, cudaStream_t stream) {
    call_ctx *x = ctx;
    return weft_rt_launch(x->c, slot, &x->call, &x->send, &x->recv, stream);
}

static void mark(void *ctx, int32_t ph, int network, cudaStream_t stream) {
    call_ctx *x = ctx;
    if (!x->watch) return;
    int32_t k = 2 * ph + network;
    if (cudaEventRecord(x->m->ev[k], stream) == cudaSuccess) {
        x->m->seen_ns[k] = 0;
        x->m->nmarks = k + 1;
    }
}

static int capturing(cudaStream_t s) {
    enum cudaStreamCaptureStatus st = cudaStreamCaptureStatusNone;
    if (cudaStreamIsCapturing(s, &st) != cudaSuccess) return 0;
    return st != cudaStreamCaptureStatusNone;
}

/* Scratch with staging for the whole call, before any phase is enqueued (comm.c's policy: 1 MB
 * granules, stream-ordered, never under capture). */
static weft_result size_scratch(weft_comm *c, const weft_mn_algo *ma, const weft_call *call,
                                cudaStream_t stream) {
    rt_rank *rr = &c->sub[0];
    size_t need = weft_call_scratch(&c->plans[ma->slot[0]], rr->rank, call->count,
                                    weft_dtype_size(call->dtype));
    return weft_rt_grow_scratch(rr, need, stream);
}

weft_result weft_mn_comm_launch(weft_comm *c, weft_mn_comm *m, int ai, const weft_call *call,
                                const void *sendbuff, void *recvbuff, cudaStream_t stream) {
    if (!weft_mn_comm_phased(m, ai) || c->nsub != 1 || m->net == NULL) return WEFT_ERR_UNSUPPORTED;
    weft_mn_algo *ma = &m->algos[ai];
    for (int32_t ph = 0; ph < ma->nphases; ph++)
        if (!weft_rt_algo_eligible(c, ma->slot[ph])) return WEFT_ERR_UNSUPPORTED;
    int cur = -1;
    cudaGetDevice(&cur);
    if (cur != c->dev && cudaSetDevice(c->dev) != cudaSuccess) return WEFT_ERR_CUDA;
    call_ctx x = {c, m, *call, sendbuff, recvbuff, 0};
    if (x.call.op == WEFT_OP_AVG) x.call.op = WEFT_OP_SUM;
    weft_result res = size_scratch(c, ma, call, stream);
    if (res == WEFT_OK) {
        char msg[512];
        /* watch this call unless an earlier one is still being watched */
        if (!capturing(stream) && weft_mn_comm_check(m, 0, msg, sizeof msg) == WEFT_OK &&
            m->watch_ai < 0) {
            m->watch_ai = ai;
            m->nmarks = 0;
            x.watch = 1;
        }
        weft_diag *d = weft_diag_new();
        int32_t done = 0;
        size_t chunk = weft_mn_chunk_bytes(ma->algo, call->count, weft_dtype_size(call->dtype));
        res = weft_mn_run(m->api, m->net, ma, gpu_phase, mark, &x, c->sub[0].scratch, chunk, stream,
                          &done, d);
        if (res != WEFT_OK && done > 0) {
            /* half a call is enqueued: peers wait for the rest; weft stops serving here */
            char what[160];
            weft_mn_phase_name(ma, done / 2, done % 2, what, sizeof what);
            snprintf(c->broken_msg, sizeof c->broken_msg,
                     "rank %d: %s could not be enqueued (%s%s%s)", c->rank, what,
                     weft_result_str(res), weft_diag_size(d) ? ": " : "",
                     weft_diag_size(d) ? weft_diag_get(d, 0)->msg : "");
            WEFT_WARN("weft: %s; weft is off on this communicator from now on", c->broken_msg);
            c->broken = 1;
        }
        weft_diag_free(d);
        if (x.watch && res != WEFT_OK) m->watch_ai = -1;
    }
    if (res == WEFT_OK && call->op == WEFT_OP_AVG && weft_coll_reduces(call->coll)) {
        int64_t n =
            weft_avg_elems(call->coll, ma->algo->root, c->rank, (int64_t)call->count, c->nranks);
        if (n && weft_rt_scale_launch(recvbuff, n, call->dtype, c->nranks, stream) != cudaSuccess)
            res = WEFT_ERR_CUDA;
    }
    if (cur >= 0 && cur != c->dev) cudaSetDevice(cur);
    return res;
}

weft_result weft_rt_run(weft_comm *c, int ai, const weft_call *call, const void *sendbuff,
                        void *recvbuff, cudaStream_t stream, const char **served) {
    if (ai < 0 || !weft_rt_algo_eligible(c, ai)) return WEFT_ERR_UNSUPPORTED;
    weft_result res = weft_mn_comm_phased(c->mn, ai)
                          ? weft_mn_comm_launch(c, c->mn, ai, call, sendbuff, recvbuff, stream)
                          : weft_rt_launch(c, ai, call, &sendbuff, &recvbuff, stream);
    if (res == WEFT_OK && served) *served = c->algos[ai]->name;
    return res;
}
