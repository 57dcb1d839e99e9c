/* shim_internal.h — internals of libweft_nccl.so: the real NCCL it forwards to, and the runtime
 * backend that serves calls (weft's GPU runtime in the library, a recording fake in CPU tests). */
#ifndef WEFT_SHIM_INTERNAL_H
#define WEFT_SHIM_INTERNAL_H

#include "nccl_api.h"
#include "weft_runtime.h"

/* One id per NCCL function, in table order. */
typedef enum shim_fn {
#define WEFT_X_(rk, how, name, params, args) SHIM_FN_##name,
    WEFT_NCCL_API(WEFT_X_)
#undef WEFT_X_
        SHIM_FN_COUNT
} shim_fn;

/* The real NCCL: its pncclX entry points (NULL where that library lacks one), resolved once. */
typedef struct shim_real {
#define WEFT_X_(rk, how, name, params, args) WEFT_NCCL_RET_##rk(*name) params;
    WEFT_NCCL_API(WEFT_X_)
#undef WEFT_X_
    void *DevCommCreate, *DevCommDestroy; /* nccl_device.h host functions, for the runtime */
    void *TeamLsa;                        /* the node structure (nccl_device/core.h) */
    int found;                            /* 0: no NCCL library could be found */
    char path[512];                       /* the file it came from, for the log */
} shim_real;

/* Resolves on first use (thread-safe): WEFT_NCCL_LIB when set, else the next definition of
 * pncclGetVersion after this library (RTLD_NEXT), else dlopen("libnccl.so.2"). Every entry point
 * comes from that one library. */
const shim_real *shim_real_get(void);

/* What a call whose real function is missing returns, after one WARN per function:
 * ncclSystemError when no NCCL was found at all, ncclInvalidUsage when only that function is
 * missing (an older libnccl). */
ncclResult_t shim_missing_res(shim_fn fn);
const char *shim_missing_str(shim_fn fn);
void shim_missing_void(shim_fn fn);
const char *shim_fn_name(shim_fn fn);

/* The runtime as the shim uses it (weft_runtime.h); CPU tests link a recording fake instead. */
typedef struct shim_backend {
    const char *name;
    void (*set_nccl_api)(const weft_nccl_api *api);
    weft_result (*attach)(int ncomms, ncclComm_t *comms, const weft_registry *reg, weft_comm **out,
                          weft_diag *d);
    weft_result (*detach)(weft_comm *c);
    /* Releases c's local resources with no collective step (after ncclCommAbort, or at the
     * destruction of a revoked communicator, when peers may be gone); NULL when the runtime
     * cannot, and then the state is left to the process. */
    weft_result (*abort)(weft_comm *c);
    /* The algorithm that serves the call on c (sets call->flags), or -1 with why. */
    int (*select)(const weft_comm *c, weft_call *call, const void *sendbuff, const void *recvbuff,
                  cudaStream_t stream, const char **why);
    weft_result (*launch)(weft_comm *c, const weft_call *call, const void *sendbuff, void *recvbuff,
                          cudaStream_t stream, const char **served);
    /* The application's symmetric windows (weft_comm_window_register). */
    weft_result (*window_register)(weft_comm *c, void *buf, size_t bytes, ncclWindow_t win);
    weft_result (*window_deregister)(weft_comm *c, ncclWindow_t win);
} shim_backend;

extern const shim_backend weft_shim_backend;

#endif
