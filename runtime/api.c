/* api.c — weft_runtime.h's attach and launch over the algorithm registry: the registry picks
 * the algorithm, comm.c runs it. Kept apart so that code using comm_internal.h alone does not
 * need the registry. */
#include "comm_internal.h"
#include "registry_internal.h"

#include <stdlib.h>

/* ---- the public API over the registry --------------------------------------------------- */
weft_result weft_comm_attach(int ncomms, ncclComm_t *comms, const weft_registry *reg,
                             weft_comm **out, weft_diag *d) {
    weft_result res = WEFT_OK;
    size_t n = reg ? weft_registry_size(reg) : 0;
    const weft_algo **algos = calloc(n ? n : 1, sizeof *algos);
    WEFT_CHECK_ALLOC(algos);
    for (size_t i = 0; i < n; i++)
        algos[i] = weft_registry_get(reg, i);
    res = weft_rt_attach(ncomms, comms, algos, n, NULL, out, d);
    for (int i = 0; i < ncomms && res == WEFT_OK; i++)
        out[i]->reg = reg;
fail:
    free(algos);
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
    res = weft_rt_launch(c, ai, &x, &sendbuff, &recvbuff, stream);
    if (res == WEFT_OK && served) *served = c->algos[ai]->name;
    return res;
}
