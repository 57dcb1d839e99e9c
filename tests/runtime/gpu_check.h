/* gpu_check.h — host-side helpers shared by the GPU test programs and the benchmark: CU() and
 * NC() stop the program on a failed CUDA or NCCL call, naming the rank, file and line, and
 * tg_parse_size reads sizes as nccl-tests writes them (8, 64K, 1M, 1G). Before including it a
 * program may define TG_SAY(...) (printf-like; default stderr), TG_STOP() (default exit(1)) and
 * TG_RANK (the rank printed; default the program's `prank`). */
#ifndef WEFT_TESTS_GPU_CHECK_H
#define WEFT_TESTS_GPU_CHECK_H

#include <cuda_runtime_api.h>
#include <nccl.h>
#include <stdio.h>
#include <stdlib.h>

#ifndef TG_SAY
#define TG_SAY(...) fprintf(stderr, __VA_ARGS__)
#endif
#ifndef TG_STOP
#define TG_STOP() exit(1)
#endif
#ifndef TG_RANK
#define TG_RANK prank
#endif

#define CU(call)                                                                                   \
    do {                                                                                           \
        cudaError_t e_ = (call);                                                                   \
        if (e_ != cudaSuccess) {                                                                   \
            TG_SAY("[%d] %s:%d: %s: %s\n", TG_RANK, __FILE__, __LINE__, #call,                     \
                   cudaGetErrorString(e_));                                                        \
            TG_STOP();                                                                             \
        }                                                                                          \
    } while (0)
#define NC(call)                                                                                   \
    do {                                                                                           \
        ncclResult_t r_ = (call);                                                                  \
        if (r_ != ncclSuccess) {                                                                   \
            TG_SAY("[%d] %s:%d: %s: %s\n", TG_RANK, __FILE__, __LINE__, #call,                     \
                   ncclGetErrorString(r_));                                                        \
            TG_STOP();                                                                             \
        }                                                                                          \
    } while (0)

/* "64K" -> 65536; K, M and G are powers of 1024. */
static inline size_t tg_parse_size(const char *s) {
    char *end;
    double v = strtod(s, &end);
    switch (*end) {
    case 'K':
    case 'k': v *= 1024; break;
    case 'M':
    case 'm': v *= 1024 * 1024; break;
    case 'G':
    case 'g': v *= 1024.0 * 1024 * 1024; break;
    default: break;
    }
    return (size_t)v;
}

#endif
