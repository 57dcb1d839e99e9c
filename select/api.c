/* api.c — weft_runtime.h's attach and launch over the algorithm registry: the registry picks
 * the algorithm, the runtime (weft_rt.h: runtime/comm.c, multinode_*.c) runs it. Selection sits
 * above the runtime: code attaching an explicit algorithm list does not need the registry. */
#include "weft_rt.h"
#include "weft_select.h"

#include <stdlib.h>

/* ---- the public API over the registry --------------------------------------------------- */
weft_result weft_comm_attach(int ncomms, ncclComm_t *comms, const weft_registry *reg,
                             weft_comm **out, weft_diag *d) {
    weft_result res = WEFT_OK;
    size_t nreg = weft_registry_size(reg);
    const weft_algo **ra = calloc(nreg + 1, sizeof *ra);
    const weft_phased **rp = calloc(nreg + 1, sizeof *rp);
    WEFT_CHECK_ALLOC(ra);
    WEFT_CHECK_ALLOC(rp);
    for (size_t i = 0; i < nreg; i++)
        ra[i] = weft_registry_get(reg, i), rp[i] = weft_registry_phases(reg, i);
    res = weft_rt_attach_registry(ncomms, comms, reg, ra, rp, nreg,
                                  weft_registry_gpus_per_node(reg), out, d);
fail:
    free(ra);
    free(rp);
    return res;
}

int weft_comm_select(const weft_comm *c, weft_call *call, const void *sendbuff,
                     const void *recvbuff, cudaStream_t stream, const char **why) {
    if (why) *why = NULL;
    if (c == NULL || call == NULL || weft_rt_registry(c) == NULL) {
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
    return weft_registry_select_usable(weft_rt_registry(c), call, weft_rt_usable(c), why);
}

weft_result weft_comm_launch(weft_comm *c, const weft_call *call, const void *sendbuff,
                             void *recvbuff, cudaStream_t stream, const char **served) {
    weft_result res = WEFT_OK;
    if (served) *served = NULL;
    if (c == NULL || call == NULL) return WEFT_ERR_USAGE;
    if (weft_rt_check_broken(c, &res)) return res;
    weft_call x = *call;
    const weft_registry *reg = weft_rt_registry(c);
    int ai = x.algo > 0 && reg ? weft_registry_select_usable(reg, &x, weft_rt_usable(c), NULL)
                               : weft_comm_select(c, &x, sendbuff, recvbuff, stream, NULL);
    return weft_rt_run(c, ai, &x, sendbuff, recvbuff, stream, served);
}
