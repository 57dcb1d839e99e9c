/* multinode_comm.c — a communicator's state across nodes: the plan list with each phased
 * algorithm's GPU phases, the NCCL operations of its rank, weft's own communicator for the network
 * phases (a split of the application's), and the watchdog's view of network phases. CUDA builds;
 * called from comm.c's attach, watchdog, detach and abort. multinode_launch.c runs one call. */
#include "comm_internal.h"
#include "multinode_rt_internal.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

static uint64_t now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

weft_result weft_mn_comm_new(const weft_algo *const *algos, const weft_phased *const *phased,
                             size_t n, int gpn, weft_mn_comm **out, const weft_algo ***list,
                             size_t *nlist, weft_diag *d) {
    weft_result res = WEFT_OK;
    weft_mn_comm *m = NULL;
    size_t total = n;
    *out = NULL;
    *list = NULL;
    *nlist = 0;
    for (size_t i = 0; i < n; i++)
        if (phased[i]) total += (size_t)phased[i]->nphases - 1;
    const weft_algo **l = calloc(total ? total : 1, sizeof *l);
    WEFT_CHECK_ALLOC(l);
    int nranks = n ? algos[0]->ngpus : 0;
    if (gpn <= 0 || gpn >= nranks) { /* one node: the registry's algorithms as they are */
        for (size_t i = 0; i < n; i++)
            l[i] = algos[i];
        *list = l;
        *nlist = n;
        return WEFT_OK;
    }
    m = calloc(1, sizeof *m);
    WEFT_CHECK_ALLOC(m);
    m->rank = 0;
    m->nranks = nranks;
    m->gpn = gpn;
    m->nreg = n;
    m->watch_ai = -1;
    m->algos = calloc(n ? n : 1, sizeof *m->algos);
    WEFT_CHECK_ALLOC(m->algos);
    size_t next = n;
    for (size_t i = 0; i < n; i++) {
        const weft_algo *a = algos[i];
        const weft_phased *p = phased[i];
        if (p == NULL) { /* the registry cuts every algorithm it keeps across nodes */
            weft_diag_add(d, WEFT_SEV_ERROR, NULL, 0, 0, "weft: '%s' has no cut into phases",
                          a->name);
            WEFT_FAIL(WEFT_ERR_INTERNAL);
        }
        weft_mn_algo *ma = &m->algos[i];
        WEFT_CHECK(weft_mn_algo_build(a, p, 0, ma));
        l[i] = ma->gpu[0];
        ma->slot[0] = (int32_t)i;
        for (int32_t ph = 1; ph < ma->nphases; ph++) {
            ma->slot[ph] = (int32_t)next;
            l[next++] = ma->gpu[ph];
        }
        if (ma->nphases > m->maxphases) m->maxphases = ma->nphases;
    }
    *out = m;
    *list = l;
    *nlist = next;
    return WEFT_OK;
fail:
    free(l);
    weft_mn_comm_free(NULL, m, 0);
    return res;
}

weft_result weft_mn_comm_bind(weft_mn_comm *m, int rank) {
    if (m == NULL || rank < 0 || rank >= m->nranks) return WEFT_ERR_USAGE;
    m->rank = rank;
    for (size_t i = 0; i < m->nreg; i++) {
        weft_result r = weft_mn_algo_set_rank(&m->algos[i], rank);
        if (r != WEFT_OK) return r;
    }
    return WEFT_OK;
}

int weft_mn_comm_gpus_per_node(const weft_mn_comm *m) {
    return m ? m->gpn : 0;
}

int weft_mn_comm_phased(const weft_mn_comm *m, int ai) {
    return m && ai >= 0 && (size_t)ai < m->nreg && m->algos[ai].nphases > 0;
}

void weft_mn_comm_free(const weft_nccl_api *api, weft_mn_comm *m, int abort) {
    if (m == NULL) return;
    if (m->net && (api || m->api)) {
        const weft_nccl_api *a = api ? api : m->api;
        if (abort)
            a->CommAbort(m->net);
        else
            a->CommDestroy(m->net);
    }
    if (m->ev)
        for (int32_t i = 0; i < 2 * m->maxphases; i++)
            if (m->ev[i]) cudaEventDestroy(m->ev[i]);
    free(m->ev);
    free(m->seen_ns);
    for (size_t i = 0; i < m->nreg; i++)
        weft_mn_algo_free(&m->algos[i]);
    free(m->algos);
    free(m);
}

/* Every rank of every communicator learns whether all are ok (MIN allreduce on the application's
 * communicators, as the attach's own agreement). */
static weft_result agree(int n, weft_comm **cs, int *ok, weft_diag *d) {
    const weft_nccl_api *a = cs[0]->api;
    int64_t v = 0;
    for (int i = 0; i < n; i++) {
        v = ok[i];
        if (cudaSetDevice(cs[i]->dev) != cudaSuccess ||
            cudaMemcpyAsync(cs[i]->agree_buf, &v, sizeof v, cudaMemcpyHostToDevice,
                            cs[i]->internal) != cudaSuccess)
            return WEFT_ERR_CUDA;
    }
    if (a->GroupStart() != ncclSuccess) return WEFT_ERR_NCCL;
    ncclResult_t r = ncclSuccess;
    for (int i = 0; i < n && r == ncclSuccess; i++)
        r = a->AllReduce(cs[i]->agree_buf, cs[i]->agree_buf, 1, ncclInt64, ncclMin, cs[i]->nccl,
                         cs[i]->internal);
    ncclResult_t e = a->GroupEnd();
    if (r != ncclSuccess || e != ncclSuccess) {
        weft_diag_add(d, WEFT_SEV_ERROR, NULL, 0, 0, "weft: agreement allreduce failed: %s",
                      a->GetErrorString(r != ncclSuccess ? r : e));
        return WEFT_ERR_NCCL;
    }
    for (int i = 0; i < n; i++) {
        if (cudaSetDevice(cs[i]->dev) != cudaSuccess ||
            cudaMemcpyAsync(&v, cs[i]->agree_buf, sizeof v, cudaMemcpyDeviceToHost,
                            cs[i]->internal) != cudaSuccess ||
            cudaStreamSynchronize(cs[i]->internal) != cudaSuccess)
            return WEFT_ERR_CUDA;
        ok[i] = v == 1;
    }
    return WEFT_OK;
}

weft_result weft_mn_comm_connect(int n, weft_comm **cs, weft_mn_comm **ms, weft_diag *d) {
    weft_result res = WEFT_OK;
    ncclComm_t *app = calloc((size_t)n, sizeof *app), *net = calloc((size_t)n, sizeof *net);
    int *ok = calloc((size_t)n, sizeof *ok), cur = -1;
    WEFT_CHECK_ALLOC(app);
    WEFT_CHECK_ALLOC(net);
    WEFT_CHECK_ALLOC(ok);
    cudaGetDevice(&cur);
    for (int i = 0; i < n; i++)
        app[i] = cs[i]->nccl;
    weft_mn_split(cs[0]->api, n, app, net, d);
    for (int i = 0; i < n; i++) {
        weft_mn_comm *m = ms[i];
        ok[i] = net[i] != NULL && m != NULL;
        if (!ok[i]) continue;
        m->api = cs[i]->api;
        m->dev = cs[i]->dev;
        m->ev = calloc(2 * (size_t)m->maxphases + 1, sizeof *m->ev);
        m->seen_ns = calloc(2 * (size_t)m->maxphases + 1, sizeof *m->seen_ns);
        ok[i] = m->ev && m->seen_ns && cudaSetDevice(m->dev) == cudaSuccess;
        for (int32_t k = 0; ok[i] && k < 2 * m->maxphases; k++)
            ok[i] = cudaEventCreateWithFlags(&m->ev[k], cudaEventDisableTiming) == cudaSuccess;
    }
    res = agree(n, cs, ok, d);
    for (int i = 0; i < n; i++) {
        if (res == WEFT_OK && ok[i]) {
            ms[i]->net = net[i];
            continue;
        }
        if (net[i]) cs[i]->api->CommDestroy(net[i]);
        if (res == WEFT_OK) res = WEFT_ERR_UNSUPPORTED;
    }
    if (res != WEFT_OK)
        weft_diag_add(d, WEFT_SEV_ERROR, NULL, 0, 0,
                      "weft: not attached: a rank could not create weft's communicator for the "
                      "network phases (see its log)");
fail:
    if (cur >= 0) cudaSetDevice(cur);
    free(app);
    free(net);
    free(ok);
    return res;
}

/* ---- the watchdog -----------------------------------------------------------------------------
 */
int weft_mn_comm_describe(const weft_mn_comm *m, int slot, char *buf, size_t len) {
    if (m == NULL) return 0;
    for (size_t i = 0; i < m->nreg; i++)
        for (int32_t ph = 0; ph < m->algos[i].nphases; ph++)
            if (m->algos[i].slot[ph] == slot) {
                weft_mn_phase_name(&m->algos[i], ph, 0, buf, len);
                return 1;
            }
    return 0;
}

weft_result weft_mn_comm_check(weft_mn_comm *m, int64_t timeout_ns, char *msg, size_t len) {
    if (m == NULL || m->watch_ai < 0) return WEFT_OK;
    uint64_t now = now_ns();
    const weft_mn_algo *ma = &m->algos[m->watch_ai];
    for (int32_t k = 0; k < m->nmarks; k++) {
        cudaError_t q = cudaEventQuery(m->ev[k]);
        if (q == cudaSuccess) {
            if (!m->seen_ns[k]) m->seen_ns[k] = now;
            continue;
        }
        if (q != cudaErrorNotReady) return WEFT_OK; /* the launch's own error path reports */
        /* mark k is pending; a network phase (odd k) whose GPU phase completed long ago */
        if (timeout_ns > 0 && k % 2 == 1 && m->seen_ns[k - 1] &&
            now - m->seen_ns[k - 1] > (uint64_t)timeout_ns) {
            int32_t ph = k / 2;
            char what[160], peers[256] = "";
            weft_mn_phase_name(ma, ph, 1, what, sizeof what);
            for (int32_t i = 0; i < ma->nops[ph]; i++)
                snprintf(peers + strlen(peers), sizeof peers - strlen(peers), "%s%s %d",
                         i ? ", " : "", ma->ops[ph][i].send ? "send to" : "receive from",
                         ma->ops[ph][i].peer);
            snprintf(msg, len,
                     "rank %d: %s has not completed %.0f ms after its GPU phase did (NCCL: %s); "
                     "a peer's GPU phase %d may have stalled (see that rank's report)",
                     m->rank, what, (double)(now - m->seen_ns[k - 1]) / 1e6, peers, ph);
            return WEFT_ERR_TIMEOUT;
        }
        return WEFT_OK;
    }
    if (m->nmarks == 2 * ma->nphases - 1) m->watch_ai = -1; /* the watched call completed */
    return WEFT_OK;
}
