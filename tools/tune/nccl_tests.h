/* nccl_tests.h — nccl-tests 2.19's way of timing a collective (src/common.cu: BenchTime,
 * startColl), the parts that need no GPU: where each call of a sample lies in the buffers and
 * which run tools/compare_nccl.sh makes for a size. weft-tune's verification and weft_bench
 * time with these, so that the three cannot drift apart. */
#ifndef WEFT_TOOLS_NCCL_TESTS_H
#define WEFT_TOOLS_NCCL_TESTS_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* compare_nccl.sh runs sizes below this with --iters-small calls per sample, the others with
 * --iters, as two nccl-tests runs (-e of the first: its largest size below it). */
#define WEFT_NT_SMALL (1ull << 20)

/* startColl: call `iter` of a sample (0 for the untimed call before the barrier) is moved by
 * the call's footprint (the larger of its send and receive bytes) times iter modulo how many
 * footprints fit in maxbytes, the run's -e ("to avoid cache effects"). A footprint larger than
 * maxbytes, or of 0 bytes, is not moved. */
uint64_t weft_nt_shift(uint64_t footprint, uint64_t maxbytes, int iter);

/* One nccl-tests run as compare_nccl.sh makes it for the sweep -b minb -e maxb -f factor. */
typedef struct weft_nt_run {
    uint64_t maxbytes; /* its -e: the buffers' size and the shifts' bound */
    int iters;         /* its -n: calls per timed sample */
} weft_nt_run;

/* The run that times `bytes` (nccl-tests' size: the larger buffer of the call): below
 * WEFT_NT_SMALL, -e is the sweep's largest size below it (sizes from minb, each factor times the
 * last, whole bytes) and -n iters_small; from it, -e maxb and -n iters. */
weft_nt_run weft_nt_run_of(uint64_t bytes, uint64_t minb, uint64_t maxb, double factor, int iters,
                           int iters_small);

#ifdef __cplusplus
}
#endif
#endif
