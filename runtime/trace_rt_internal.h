/* trace_rt_internal.h — the runtime's side of per-step traces (docs/trace.md): the schedule a
 * rank's records are annotated with, taken from its plan, and recording per communicator (one
 * tracer per local rank, one region of its buffer per launch). No CUDA types here: the host
 * emulation of the interpreter uses the first part. */
#ifndef WEFT_TRACE_RT_INTERNAL_H
#define WEFT_TRACE_RT_INTERNAL_H

#include "runtime_internal.h"

#ifdef __cplusplus
extern "C" {
#endif

/* rp's step tables as the trace describes them: *tbs (rp->ntbs entries, whose steps point into
 * *steps) and *steps (rp->nsteps entries); both malloc'd, owned by the caller. */
weft_result weft_rt_trace_sched(const weft_rank_plan *rp, weft_trace_tb **tbs,
                                weft_trace_step **steps);

/* ---- recording on a communicator (trace_rt.c, CUDA builds) ---------------------------------- */
struct weft_comm;
typedef struct weft_rt_trace weft_rt_trace;

/* Starts recording on every local rank of c (a file per rank from the pattern); a recording
 * already running is completed first. */
weft_result weft_rt_trace_start(struct weft_comm *c, const char *pattern, weft_diag *d);
/* Completes c's files (waits for the traced calls); no-op when not recording. */
weft_result weft_rt_trace_stop(struct weft_comm *c);
/* At attach: starts recording when WEFT_TRACE is set (a failure is a WARN, not an error). */
void weft_rt_trace_env(struct weft_comm *c);
/* For local rank s of one launch of algorithm ai: the region its CTAs record into (dev->rec
 * NULL: not traced). Then weft_rt_trace_end_launch, with whether the kernel was launched. */
void weft_rt_trace_launch(struct weft_comm *c, int s, int ai, size_t count, int dtype, int op,
                          int inplace, const weft_call_geom *g, void *stream, weft_trace_dev *dev);
void weft_rt_trace_end_launch(struct weft_comm *c, int launched);

#ifdef __cplusplus
}
#endif
#endif
