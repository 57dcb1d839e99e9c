/* weft_semantics.c — the step evaluator of weft_semantics.h: what one step computes, once, over
 * the value algebra of its caller (the verifier's contributions, the CPU executor's data). */
#include "weft_semantics.h"

int weft_step_eval(const weft_step_algebra *A, void *self, weft_step_type t, weft_buf srcbuf,
                   int32_t srcoff, weft_buf dstbuf, int32_t dstoff, int32_t cnt) {
    unsigned f = weft_step_flags(t);
    int rc = 0;
    if (t == WEFT_STEP_NOP) return 0;
    /* the incoming value (received, or dst for `re`) reduced with src; or src alone */
    for (int32_t i = 0; i < cnt && rc == 0; i++) {
        if (f & WEFT_STEP_F_RECV)
            rc = A->take(self, i);
        else if (f & WEFT_STEP_F_READS_DST)
            rc = A->load(self, i, dstbuf, dstoff + i);
        else
            rc = A->load(self, i, srcbuf, srcoff + i);
        if (rc == 0 && (f & WEFT_STEP_F_REDUCE)) {
            rc = A->load(self, cnt, srcbuf, srcoff + i);
            if (rc == 0) rc = A->reduce(self, i, cnt);
        }
    }
    if (f & WEFT_STEP_F_WRITE)
        for (int32_t i = 0; i < cnt && rc == 0; i++)
            rc = A->store(self, i, dstbuf, dstoff + i);
    if (rc == 0 && (f & WEFT_STEP_F_SEND)) rc = A->send(self, cnt);
    return rc;
}
