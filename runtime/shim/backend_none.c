/* backend_none.c — the runtime backend of a libweft_nccl.so built before weft's GPU runtime is
 * available: communicators are never attached, so NCCL serves every call. */
#include "shim_internal.h"

static void none_set_nccl_api(const weft_nccl_api *api) {
    (void)api;
}

static weft_result none_attach(int ncomms, ncclComm_t *comms, const weft_registry *reg,
                               weft_comm **out, weft_diag *d) {
    (void)comms;
    (void)reg;
    for (int i = 0; i < ncomms; i++)
        out[i] = NULL;
    weft_diag_add(d, WEFT_SEV_ERROR, NULL, 0, 0,
                  "this libweft_nccl.so was built without weft's GPU runtime");
    return WEFT_ERR_UNSUPPORTED;
}

static weft_result none_detach(weft_comm *c) {
    (void)c;
    return WEFT_OK;
}

static weft_result none_launch(weft_comm *c, const weft_call *call, const void *sendbuff,
                               void *recvbuff, cudaStream_t stream, const char **served) {
    (void)c, (void)call, (void)sendbuff, (void)recvbuff, (void)stream, (void)served;
    return WEFT_ERR_UNSUPPORTED;
}

const shim_backend weft_shim_backend = {"none (built without the GPU runtime)",
                                        none_set_nccl_api,
                                        none_attach,
                                        none_detach,
                                        none_detach,
                                        none_launch};
