/* multinode.c — the NCCL side of weft across nodes: the node structure from NCCL's LSA team,
 * weft's own communicator for the network phases, one network phase as an NCCL group of
 * ncclSend/ncclRecv, and one call's sequence of GPU and network phases on a stream. Calls NCCL
 * only through the weft_nccl_api table, and CUDA not at all, so that CPU tests run it over a
 * fake libnccl. */
#include "weft_runtime.h"

#include "multinode_rt_internal.h"

#include <dlfcn.h>
#include <string.h>

/* ncclTeam_t of nccl_device/core.h, returned by value by the host ncclTeamLsa. */
typedef struct mn_team {
    int nRanks, rank, stride;
} mn_team;
typedef mn_team (*mn_team_fn)(ncclComm_t);

weft_result weft_mn_query(const weft_nccl_api *api, ncclComm_t comm, int *nranks, int *rank,
                          int *gpn, weft_diag *d) {
    if (api == NULL || nranks == NULL || rank == NULL || gpn == NULL) return WEFT_ERR_USAGE;
    if (api->CommCount(comm, nranks) != ncclSuccess ||
        api->CommUserRank(comm, rank) != ncclSuccess) {
        weft_diag_add(d, WEFT_SEV_ERROR, NULL, 0, 0, "weft: cannot query the communicator");
        return WEFT_ERR_NCCL;
    }
    void *sym = api->TeamLsa ? api->TeamLsa : dlsym(RTLD_DEFAULT, "ncclTeamLsa");
    if (sym == NULL) {
        *gpn = *nranks;
        return WEFT_OK;
    }
    mn_team_fn fn;
    memcpy(&fn, &sym, sizeof fn);
    mn_team t = fn(comm);
    char why[256];
    *gpn = weft_mn_gpus_per_node(*nranks, *rank, t.rank, t.nRanks, t.stride, why, sizeof why);
    if (*gpn == 0) {
        weft_diag_add(d, WEFT_SEV_ERROR, NULL, 0, 0, "weft: %s; weft does not serve it", why);
        return WEFT_ERR_UNSUPPORTED;
    }
    return WEFT_OK;
}

weft_result weft_mn_split(const weft_nccl_api *api, int n, const ncclComm_t *comms, ncclComm_t *out,
                          weft_diag *d) {
    weft_result res = WEFT_OK;
    for (int i = 0; i < n; i++)
        out[i] = NULL;
    if (api->GroupStart() != ncclSuccess) return WEFT_ERR_NCCL;
    for (int i = 0; i < n; i++) {
        int rank = 0;
        ncclResult_t r = api->CommUserRank(comms[i], &rank);
        if (r == ncclSuccess) r = api->CommSplit(comms[i], 0, rank, &out[i], NULL);
        if (r != ncclSuccess) {
            weft_diag_add(d, WEFT_SEV_ERROR, NULL, 0, 0,
                          "weft: ncclCommSplit for the network phases failed: %s",
                          api->GetErrorString(r));
            out[i] = NULL;
            res = WEFT_ERR_NCCL;
        }
    }
    ncclResult_t r = api->GroupEnd();
    if (r != ncclSuccess) {
        weft_diag_add(d, WEFT_SEV_ERROR, NULL, 0, 0,
                      "weft: ncclCommSplit for the network phases failed: %s",
                      api->GetErrorString(r));
        res = WEFT_ERR_NCCL;
    }
    return res;
}

weft_result weft_mn_net_phase(const weft_nccl_api *api, ncclComm_t net, const weft_mn_algo *m,
                              int32_t ph, char *scratch, size_t chunk_bytes, cudaStream_t stream,
                              weft_diag *d) {
    if (ph < 0 || ph + 1 >= m->nphases) return WEFT_ERR_USAGE;
    if (m->nops[ph] == 0) return WEFT_OK;
    if (scratch == NULL || chunk_bytes == 0) return WEFT_ERR_USAGE;
    ncclResult_t r = api->GroupStart();
    const char *what = "ncclGroupStart";
    for (int32_t i = 0; i < m->nops[ph] && r == ncclSuccess; i++) {
        const weft_mn_op *o = &m->ops[ph][i];
        char *p = scratch + (size_t)o->off * chunk_bytes;
        size_t bytes = (size_t)o->cnt * chunk_bytes;
        if (o->send) {
            r = api->Send(p, bytes, ncclUint8, o->peer, net, stream);
            what = "ncclSend";
        } else {
            r = api->Recv(p, bytes, ncclUint8, o->peer, net, stream);
            what = "ncclRecv";
        }
    }
    ncclResult_t e = api->GroupEnd();
    if (r == ncclSuccess && e != ncclSuccess) r = e, what = "ncclGroupEnd";
    if (r != ncclSuccess) {
        char name[160];
        weft_mn_phase_name(m, ph, 1, name, sizeof name);
        weft_diag_add(d, WEFT_SEV_ERROR, NULL, 0, 0, "weft: %s: %s failed: %s", name, what,
                      api->GetErrorString(r));
        return WEFT_ERR_NCCL;
    }
    return WEFT_OK;
}

weft_result weft_mn_run(const weft_nccl_api *api, ncclComm_t net, const weft_mn_algo *m,
                        weft_mn_gpu_fn gpu, weft_mn_mark_fn mark, void *ctx, char *scratch,
                        size_t chunk_bytes, cudaStream_t stream, int32_t *done, weft_diag *d) {
    weft_result res = WEFT_OK;
    int32_t n = 0;
    for (int32_t ph = 0; ph < m->nphases && res == WEFT_OK; ph++) {
        if (m->active[ph]) res = gpu(ctx, m->slot[ph], stream);
        if (res != WEFT_OK) break;
        if (mark) mark(ctx, ph, 0, stream);
        n++;
        if (ph + 1 == m->nphases) break;
        res = weft_mn_net_phase(api, net, m, ph, scratch, chunk_bytes, stream, d);
        if (res != WEFT_OK) break;
        if (mark) mark(ctx, ph, 1, stream);
        n++;
    }
    if (done) *done = n;
    return res;
}
