/* fake_backend.c — the runtime backend of the shim's CPU tests: attaches and "launches" by
 * writing to the fake libnccl's log (found with dlsym, so the order of NCCL and weft work is one
 * sequence), selecting with the real registry. Options set through the fake libnccl make attach
 * or launch fail. */
#define _GNU_SOURCE /* RTLD_DEFAULT */
#include "shim_internal.h"

#include <dlfcn.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct weft_comm {
    ncclComm_t comm;
    const weft_registry *reg;
    int nranks;
};

static weft_nccl_api api;

static void record(const char *fmt, ...) {
    char line[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    void (*rec)(const char *, ...);
    void *p = dlsym(RTLD_DEFAULT, "fake_nccl_record");
    memcpy(&rec, &p, sizeof p);
    if (rec) rec("%s", line);
}

static long option(const char *key) {
    long (*get)(const char *);
    void *p = dlsym(RTLD_DEFAULT, "fake_nccl_get");
    memcpy(&get, &p, sizeof p);
    return get ? get(key) : 0;
}

static void fake_set_nccl_api(const weft_nccl_api *a) {
    api = *a;
    int v = 0;
    api.GetVersion(&v); /* the table reaches the real (fake) NCCL, not the shim */
    record("weft.api version=%d", v);
}

static weft_result fake_attach(int ncomms, ncclComm_t *comms, const weft_registry *reg,
                               weft_comm **out, weft_diag *d) {
    record("weft.attach n=%d", ncomms);
    for (int i = 0; i < ncomms; i++)
        out[i] = NULL;
    if (option("attach_fail")) {
        weft_diag_add(d, WEFT_SEV_ERROR, NULL, 0, 0, "fake attach failure");
        return WEFT_ERR_CUDA;
    }
    if (option("attach_unsupported")) {
        weft_diag_add(d, WEFT_SEV_ERROR, NULL, 0, 0, "peers are not LSA-reachable");
        return WEFT_ERR_UNSUPPORTED;
    }
    for (int i = 0; i < ncomms; i++) {
        out[i] = calloc(1, sizeof **out);
        if (out[i] == NULL) return WEFT_ERR_NOMEM;
        out[i]->comm = comms[i];
        out[i]->reg = reg;
        api.CommCount(comms[i], &out[i]->nranks);
    }
    return WEFT_OK;
}

static weft_result fake_detach(weft_comm *c) {
    record("weft.detach nranks=%d", c->nranks);
    free(c);
    return WEFT_OK;
}

static weft_result fake_abort(weft_comm *c) {
    record("weft.abort nranks=%d", c->nranks);
    free(c);
    return WEFT_OK;
}

static int fake_select(const weft_comm *c, weft_call *call, const void *sendbuff,
                       const void *recvbuff, cudaStream_t stream, const char **why) {
    (void)sendbuff, (void)recvbuff, (void)stream;
    return weft_registry_select(c->reg, call, why);
}

static weft_result fake_launch(weft_comm *c, const weft_call *call, const void *sendbuff,
                               void *recvbuff, cudaStream_t stream, const char **served) {
    (void)sendbuff, (void)recvbuff, (void)stream;
    if (option("launch_fail")) return WEFT_ERR_CUDA;
    int i = weft_registry_select(c->reg, call, NULL);
    if (i < 0) return WEFT_ERR_UNSUPPORTED;
    const weft_algo *a = weft_registry_get(c->reg, (size_t)i);
    record("weft.launch %s count=%zu inplace=%d%s", a->name, call->count, call->inplace,
           call->algo == i + 1 ? "" : " (not the algorithm selected)");
    *served = a->name;
    return WEFT_OK;
}

static weft_result fake_window_register(weft_comm *c, void *buf, size_t bytes, ncclWindow_t win) {
    (void)buf, (void)win;
    record("weft.window_register nranks=%d bytes=%zu", c->nranks, bytes);
    return WEFT_OK;
}

static weft_result fake_window_deregister(weft_comm *c, ncclWindow_t win) {
    (void)win;
    record("weft.window_deregister nranks=%d", c->nranks);
    return WEFT_OK;
}

const shim_backend weft_shim_backend = {
    "fake (CPU tests)", fake_set_nccl_api, fake_attach,          fake_detach,           fake_abort,
    fake_select,        fake_launch,       fake_window_register, fake_window_deregister};
