/* app_nccl.c — an NCCL program linked with weft::weft_nccl (tests/install): ncclGetVersion must
 * resolve into libweft_nccl.so, which passes it on to the real NCCL linked after it. */
#define _GNU_SOURCE /* dladdr */
#include <dlfcn.h>
#include <nccl.h>
#include <stdio.h>
#include <string.h>

int main(void) {
    int v = 0;
    if (ncclGetVersion(&v) != ncclSuccess) return 1;
    Dl_info info;
    ncclResult_t (*f)(int *) = ncclGetVersion;
    void *p;
    memcpy(&p, &f, sizeof p);
    if (dladdr(p, &info) == 0 || info.dli_fname == NULL || !strstr(info.dli_fname, "weft_nccl")) {
        fprintf(stderr, "ncclGetVersion is not libweft_nccl's\n");
        return 1;
    }
    printf("NCCL %d through %s\n", v, info.dli_fname);
    return 0;
}
