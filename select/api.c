/* api.c — weft_runtime.h's attach and launch over the algorithm registry: the registry picks
 * the algorithm, the runtime (runtime/comm.c, multinode_launch.c) runs it. Selection sits above
 * the runtime: code using comm_internal.h alone does not need the registry. */
#include "comm_internal.h"
#include "multinode_rt_internal.h"
#include "weft_select.h"

#include <stdlib.h>

/* ---- the public API over the registry --------------------------------------------------- */
weft_result weft_comm_attach(int ncomms, ncclComm_t *comms, const weft_registry *reg,
                             weft_comm **out, weft_diag *d) {
    weft_result res = WEFT_OK;
    struct weft_mn_comm **mns = calloc((size_t)(ncomms > 0 ? ncomms : 1), sizeof *mns);
    size_t nreg = weft_registry_size(reg), n = 0;
    const weft_algo **ra = calloc(nreg + 1, sizeof *ra), **algos = NULL;
    const weft_phased **rp = calloc(nreg + 1, sizeof *rp);
    WEFT_CHECK_ALLOC(mns);
    WEFT_CHECK_ALLOC(ra);
    WEFT_CHECK_ALLOC(rp);
    for (size_t i = 0; i < nreg; i++)
        ra[i] = weft_registry_get(reg, i), rp[i] = weft_registry_phases(reg, i);
    /* across nodes: the registry's phased algorithms become their GPU phases (the same list on
     * every communicator of this attach; each one's own state for its rank) */
    for (int i = 0; i < ncomms; i++) {
        const weft_algo **l = NULL;
        size_t nl = 0;
        WEFT_CHECK(
            weft_mn_comm_new(ra, rp, nreg, weft_registry_gpus_per_node(reg), &mns[i], &l, &nl, d));
        if (i == 0)
            algos = l, n = nl;
        else
            free(l);
    }
    res = weft_rt_attach_mn(ncomms, comms, algos, n, NULL, mns, out, d);
    for (int i = 0; i < ncomms && res == WEFT_OK; i++)
        out[i]->reg = reg;
fail:
    for (int i = 0; mns && i < ncomms; i++)
        weft_mn_comm_free(NULL, mns[i], 0); /* NULL once a communicator took it */
    free(mns);
    free(algos);
    free(ra);
    free(rp);
    return res;
}

int weft_comm_select(const weft_comm *c, weft_call *call, const void *sendbuff,
                     const void *recvbuff, cudaStream_t stream, const char **why) {
    if (why) *why = NULL;
    if (c == NULL || call == NULL || c->reg == NULL) {
        if (why) *why = "no registry";
        return -1;
    }
    unsigned long long id = 0;
    enum cudaStreamCaptureStatus st = cudaStreamCaptureStatusNone;
    call->flags = 0;
    if (cudaStreamGetCaptureInfo(stream, &st, &id, NULL, NULL, NULL, NULL) == cudaSuccess &&
        st == cudaStreamCaptureStatusActive)
        call->flags |= WEFT_CALL_GRAPH;
    if (weft_rt_call_registered(c, call, &sendbuff, &recvbuff)) call->flags |= WEFT_CALL_REGISTERED;
    return weft_registry_select_usable(c->reg, call, c->usable, why);
}

weft_result weft_comm_launch(weft_comm *c, const weft_call *call, const void *sendbuff,
                             void *recvbuff, cudaStream_t stream, const char **served) {
    weft_result res = WEFT_OK;
    if (served) *served = NULL;
    if (c == NULL || call == NULL) return WEFT_ERR_USAGE;
    if (weft_rt_check_broken(c, &res)) return res;
    weft_call x = *call;
    int ai = x.algo > 0 && c->reg ? weft_registry_select_usable(c->reg, &x, c->usable, NULL)
                                  : weft_comm_select(c, &x, sendbuff, recvbuff, stream, NULL);
    if (ai < 0 || !weft_rt_algo_eligible(c, ai)) return WEFT_ERR_UNSUPPORTED;
    if (weft_mn_comm_phased(c->mn, ai))
        res = weft_mn_comm_launch(c, c->mn, ai, &x, sendbuff, recvbuff, stream);
    else
        res = weft_rt_launch(c, ai, &x, &sendbuff, &recvbuff, stream);
    if (res == WEFT_OK && served) *served = c->algos[ai]->name;
    return res;
}
