/* real_nccl_app.c — libweft_nccl.so preloaded over the real libnccl.so.2, on a machine without a
 * GPU: every call that needs no GPU must return exactly what libnccl returns when called directly
 * (its pncclX entry points, looked up in the library itself). */
#define _GNU_SOURCE /* RTLD_NOLOAD, dladdr */
#include "check.h"

#include <dlfcn.h>
#include <nccl.h>
#include <string.h>

#define REAL(sym, type) ((type)lookup(nccl, sym))

static void *lookup(void *h, const char *sym) {
    void *p = dlsym(h, sym);
    if (p == NULL) fprintf(stderr, "%s not found in libnccl.so.2\n", sym);
    return p;
}

int main(void) {
    void *nccl = dlopen("libnccl.so.2", RTLD_NOW | RTLD_NOLOAD);
    CHECK(nccl != NULL);
    if (nccl == NULL) CHECK_DONE();
    /* the application's NCCL calls go to the shim... */
    Dl_info info;
    void *p = NULL;
    ncclResult_t (*gv)(int *) = ncclGetVersion;
    memcpy(&p, &gv, sizeof p);
    CHECK(dladdr(p, &info) != 0 && info.dli_fname && strstr(info.dli_fname, "libweft_nccl.so"));
    /* ...and answer as libnccl does */
    int v1 = -1, v2 = -2;
    CHECK(ncclGetVersion(&v1) == REAL("pncclGetVersion", ncclResult_t(*)(int *))(&v2));
    CHECK(v1 == v2 && v1 >= NCCL_VERSION(2, 28, 0));
    for (int r = 0; r <= (int)ncclNumResults; r++)
        CHECK(ncclGetErrorString((ncclResult_t)r) ==
              REAL("pncclGetErrorString", const char *(*)(ncclResult_t))((ncclResult_t)r));
    CHECK(ncclGetLastError(NULL) == REAL("pncclGetLastError", const char *(*)(ncclComm_t))(NULL));
    int x = 0;
    CHECK(ncclCommCount(NULL, &x) ==
          REAL("pncclCommCount", ncclResult_t(*)(const ncclComm_t, int *))(NULL, &x));
    CHECK(ncclCommCuDevice(NULL, &x) ==
          REAL("pncclCommCuDevice", ncclResult_t(*)(const ncclComm_t, int *))(NULL, &x));
    float a[4] = {0};
    ncclResult_t (*ar)(const void *, void *, size_t, ncclDataType_t, ncclRedOp_t, ncclComm_t,
                       cudaStream_t) =
        REAL("pncclAllReduce", ncclResult_t(*)(const void *, void *, size_t, ncclDataType_t,
                                               ncclRedOp_t, ncclComm_t, cudaStream_t));
    ncclResult_t r1 = ncclAllReduce(a, a, 4, ncclFloat, ncclSum, NULL, NULL);
    CHECK(r1 != ncclSuccess && r1 == ar(a, a, 4, ncclFloat, ncclSum, NULL, NULL));
    CHECK(ncclBcast(a, 4, ncclFloat, 0, NULL, NULL) ==
          REAL("pncclBcast", ncclResult_t(*)(void *, size_t, ncclDataType_t, int, ncclComm_t,
                                             cudaStream_t))(a, 4, ncclFloat, 0, NULL, NULL));
    CHECK(ncclGroupStart() == ncclSuccess);
    CHECK(ncclGroupEnd() == ncclSuccess);
    CHECK(ncclGroupEnd() == ncclInvalidUsage);
    ncclUniqueId id1, id2;
    CHECK(ncclGetUniqueId(&id1) == REAL("pncclGetUniqueId", ncclResult_t(*)(ncclUniqueId *))(&id2));
    CHECK_DONE();
}
