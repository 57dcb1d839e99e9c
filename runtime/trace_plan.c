/* trace_plan.c — a rank plan's step tables as a trace describes them (the schedule records are
 * annotated with when they are collected): built once per algorithm and rank, host code only. */
#include "trace_rt_internal.h"

#include <stdlib.h>

weft_result weft_rt_trace_sched(const weft_rank_plan *rp, weft_trace_tb **tbs,
                                weft_trace_step **steps) {
    weft_result res = WEFT_OK;
    weft_trace_tb *tb = calloc(rp->ntbs ? (size_t)rp->ntbs : 1, sizeof *tb);
    weft_trace_step *st = calloc(rp->nsteps ? (size_t)rp->nsteps : 1, sizeof *st);
    *tbs = NULL;
    *steps = NULL;
    WEFT_CHECK_ALLOC(tb);
    WEFT_CHECK_ALLOC(st);
    for (int32_t i = 0; i < rp->nsteps; i++) {
        const weft_dstep *d = &rp->steps[i];
        st[i] =
            (weft_trace_step){d->type, d->srcbuf, d->srcoff, d->dstbuf,     d->dstoff,     d->cnt,
                              d->nsrc, d->orig,   d->depid,  d->dep_stride, d->dep_target, d->post};
        /* A fused re names its first source; the others are in xsrc. */
        if (d->nsrc > 1 && d->xsrc >= 0 && d->xsrc < rp->nxsrc)
            st[i].srcbuf = rp->xsrc[d->xsrc].buf, st[i].srcoff = rp->xsrc[d->xsrc].off;
    }
    for (int32_t t = 0; t < rp->ntbs; t++) {
        const weft_dtb *d = &rp->tbs[t];
        tb[t] =
            (weft_trace_tb){d->speer, d->rpeer, d->chan, d->nsteps_orig, d->nsteps, st + d->first};
    }
    *tbs = tb;
    *steps = st;
    return WEFT_OK;
fail:
    free(tb);
    free(st);
    return res;
}
