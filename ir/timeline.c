/* timeline.c — the schedule in time for pictures: each step's happens-before depth and the
 * critical path, computed by the step graph exactly as the verifier computes its length. */
#include "stepgraph_internal.h"

#include <stdlib.h>
#include <string.h>

void weft_timeline_free(weft_timeline *t) {
    if (t == NULL) return;
    WEFT_FREE(t->steps);
    memset(t, 0, sizeof *t);
}

weft_result weft_ir_timeline(const weft_algo *a, weft_timeline *out, weft_diag *d) {
    weft_result res = WEFT_OK;
    weft_sg *g = NULL;
    weft_sg_run run = {0};
    int32_t *order = NULL, *depth = NULL, *pred = NULL;
    memset(out, 0, sizeof *out);
    WEFT_CHECK(weft_sg_validate(a, d, NULL));
    WEFT_CHECK(weft_sg_build(a, d, NULL, &g));
    size_t n = (size_t)g->nsteps + 1;
    order = malloc(n * sizeof *order);
    depth = malloc(n * sizeof *depth);
    pred = malloc(n * sizeof *pred);
    out->steps = calloc(n, sizeof *out->steps);
    WEFT_CHECK_ALLOC(order);
    WEFT_CHECK_ALLOC(depth);
    WEFT_CHECK_ALLOC(pred);
    WEFT_CHECK_ALLOC(out->steps);
    WEFT_CHECK(weft_sg_linearize(g, order, &run));
    if (run.stalled) {
        weft_diag_add(d, WEFT_SEV_ERROR, a->file, a->line, 0,
                      "the schedule deadlocks, so its steps have no place in time (weft verify "
                      "says where)");
        WEFT_FAIL(WEFT_ERR_INPUT);
    }
    out->nsteps = g->nsteps;
    out->critical_path = weft_sg_depths(g, order, depth, pred);
    int32_t last = -1;
    for (int32_t i = 0; i < g->nsteps; i++) {
        const weft_sg_step *st = &g->steps[i];
        weft_placed_step *p = &out->steps[i];
        *p = (weft_placed_step){
            st->rank, g->tbs[st->tb].local, st->idx, depth[i], st->dep, st->match, pred[i], 0};
        if (st->match >= 0) out->nmessages++;
        if (last < 0 && depth[i] == out->critical_path) last = i;
    }
    for (int32_t i = last; i >= 0; i = pred[i])
        out->steps[i].critical = 1;
fail:
    if (res != WEFT_OK) weft_timeline_free(out);
    weft_sg_run_free(&run);
    free(order);
    free(depth);
    free(pred);
    weft_sg_free(g);
    return res;
}
