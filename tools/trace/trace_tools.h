/* trace_tools.h — the offline trace tools over the model of weft_trace.h: reading trace files
 * (trace_read.c), `weft trace summarize` and the critical path (trace_summary.c), a call drawn
 * as SVG (trace_draw.c), `weft trace check`. */
#ifndef WEFT_TRACE_TOOLS_H
#define WEFT_TRACE_TOOLS_H

#include "weft_trace.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Reads one weft trace file (written by weft or by `weft trace merge`) into t, which must be
 * initialized and may already hold other files' data: times are rebased to the earlier of the
 * two time bases. Errors name file:line; on error t is left as it was. */
weft_result weft_trace_read_file(weft_trace *t, const char *path, weft_diag *d);
weft_result weft_trace_read_memory(weft_trace *t, const char *data, size_t len, const char *name,
                                   weft_diag *d);

/* ---- analysis (trace_summary.c) ------------------------------------------------------------- */
typedef struct weft_trace_summary_opts {
    int64_t call; /* critical path of this call seq; -1: the longest call */
    int path_max; /* most steps of the critical path to list (0: all) */
} weft_trace_summary_opts;

/* The `weft trace summarize` report; WEFT_ERR_USAGE (before printing anything) when o->call is
 * not in the trace. */
weft_result weft_trace_summarize(const weft_trace *t, const weft_trace_summary_opts *o, FILE *out);

/* The critical path of one call, as weft trace summarize reports it (the longest call when seq
 * < 0): the call's model calls [c0, c1) (one per rank in the trace) and the slices on the path
 * in time order (indices in t->slices; malloc'd, free them). WEFT_ERR_USAGE when seq is not in
 * the trace (or it has no call). */
typedef struct weft_trace_path {
    int64_t seq;
    size_t c0, c1;
    size_t *slices, n;
} weft_trace_path;
weft_result weft_trace_call_path(const weft_trace *t, int64_t seq, weft_trace_path *out);

/* One call's timeline as SVG (tools/trace/trace_draw.c): the call numbered seq (< 0: the
 * longest), one group per rank (class "rank"), a bar per step execution (class "slice", "crit"
 * on the critical path) split into waiting and moving data, an arrow per message received
 * (class "msg"), the critical path as a polyline. WEFT_ERR_USAGE when seq is not in the trace. */
weft_result weft_trace_draw_svg(const weft_trace *t, int64_t seq, FILE *out);

typedef struct weft_trace_check_opts {
    double tolerance; /* per call and rank: busiest tb's step time within this of kernel time */
} weft_trace_check_opts;

/* The `weft trace check` report; returns the number of failed checks (messages in d too). */
size_t weft_trace_check(const weft_trace *t, const weft_trace_check_opts *o, FILE *out,
                        weft_diag *d);

#ifdef __cplusplus
}
#endif
#endif
