/* nccl_tests.c — nccl-tests' timing method, the host arithmetic (nccl_tests.h). */
#include "nccl_tests.h"

uint64_t weft_nt_shift(uint64_t footprint, uint64_t maxbytes, int iter) {
    uint64_t steps = footprint ? maxbytes / footprint : 1;
    if (steps == 0 || iter < 0) return 0; /* nccl-tests never gets here: its sizes stop at -e */
    return footprint * ((uint64_t)iter % steps);
}

weft_nt_run weft_nt_run_of(uint64_t bytes, uint64_t minb, uint64_t maxb, double factor, int iters,
                           int iters_small) {
    weft_nt_run r = {maxb, iters};
    if (bytes >= WEFT_NT_SMALL) return r;
    /* the sweep as compare_nccl.sh walks it (and weft tune's plan): the last size below 1 MB */
    uint64_t last = minb;
    for (uint64_t s = minb; s <= maxb && s < WEFT_NT_SMALL;) {
        last = s;
        double next = (double)s * factor;
        uint64_t ns = next >= 1.8e19 ? UINT64_MAX : (uint64_t)next;
        if (ns <= s) ns = s + 1;
        s = ns;
    }
    r.maxbytes = last > bytes ? last : bytes;
    r.iters = iters_small;
    return r;
}
