/* gpus.c — whether this process can use a GPU, asked before anything that needs one starts (weft
 * tune), so that a machine without one gets one clear sentence instead of CUDA's first error. */
#include "weft_runtime.h"

#include <stdio.h>

int weft_runtime_gpus(char *why, size_t len) {
#ifdef WEFT_RT_CUDA
    int n = 0;
    cudaError_t e = cudaGetDeviceCount(&n);
    if (e != cudaSuccess) {
        snprintf(why, len, "cudaGetDeviceCount: %s", cudaGetErrorString(e));
        return 0;
    }
    if (n < 1) snprintf(why, len, "the CUDA runtime sees no device");
    return n;
#else
    snprintf(why, len,
             "this weft was built without CUDA: rebuild it where CUDA, NCCL >= 2.28 and MPI are "
             "installed; the build itself needs no GPU");
    return 0;
#endif
}
