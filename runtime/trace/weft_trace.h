/* weft_trace.h — a per-step timeline trace as weft writes and reads it (docs/trace.md): the
 * schedule a call ran, the host model of a trace file, and its Chrome trace event JSON writer;
 * the interface between the recorder (runtime/trace/, trace_internal.h) and the offline tools
 * (tools/trace/, trace_tools.h). */
#ifndef WEFT_TRACE_H
#define WEFT_TRACE_H

#include "weft_common.h"

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---- the schedule a call ran (what a record's step index refers to) ----------------------- *
 * The interpreter's step table of one rank: a fused `re` has nsrc > 1 (xml_step is its first
 * original step). A step waits until progress[dep_tb] >= iter * dep_stride + dep_target, and
 * afterwards (post > 0) sets its own tb's progress to iter * nsteps_orig + post. */
typedef struct weft_trace_step {
    int32_t type; /* weft_step_type */
    int32_t srcbuf, srcoff, dstbuf, dstoff, cnt, nsrc;
    int32_t xml_step;
    int32_t dep_tb; /* -1: none */
    int32_t dep_stride, dep_target;
    int32_t post; /* 0: none */
} weft_trace_step;

typedef struct weft_trace_tb {
    int32_t send, recv, chan; /* peers, -1 when none */
    int32_t nsteps_orig;
    int32_t nsteps;
    const weft_trace_step *steps;
} weft_trace_tb;

/* What the host knows about one call on one rank. */
typedef struct weft_trace_callinfo {
    int64_t seq; /* the communicator's call number (the same on every rank) */
    const char *algo;
    int32_t coll, dtype, op; /* weft_coll, weft_dtype, weft_redop */
    int64_t count;
    int32_t inplace;
    int32_t rank, nranks;
    int32_t proto;                    /* weft_proto the interpreter ran */
    int32_t niter;                    /* iterations of the recorded CTA */
    int32_t group;                    /* CTAs per tb; member 0 is recorded (its j-th iteration is
                                       * the call's j * group-th) */
    int64_t chunk_elems, slice_elems; /* C and E, in kernel elements */
    int32_t elem_bytes;               /* bytes of a kernel element */
    int32_t fifo_slots;               /* messages a connection buffers */
    int32_t ntbs;
    const weft_trace_tb *tbs;
} weft_trace_callinfo;

/* ---- the model: what a trace file holds ---------------------------------------------------- */
/* One step execution. Times are ns from the trace's time base. */
typedef struct weft_trace_slice {
    int32_t call; /* index in weft_trace.calls */
    int32_t tb, step, xml_step, iter;
    int32_t type, send, recv, chan;
    int32_t srcbuf, srcoff, dstbuf, dstoff, cnt, nsrc;
    int64_t elem0, elems; /* the slice of each chunk: elements [elem0, elem0 + elems) */
    int64_t t0, t1;
    int64_t dep_ns, data_ns, credit_ns, bytes;
    int32_t dep_tb;
    int64_t dep_want;   /* meaningful when dep_tb >= 0 */
    int64_t post;       /* progress after the step, -1: none */
    int64_t smsg, rmsg; /* -1: none */
    int32_t line;       /* where it was read from (0: built in memory) */
} weft_trace_slice;

/* One call on one rank. */
typedef struct weft_trace_call {
    int64_t seq;
    char *algo;
    int32_t coll, dtype, op;
    int64_t count;
    int32_t inplace, rank, nranks, proto, niter, group;
    int64_t chunk_elems, slice_elems;
    int32_t elem_bytes, fifo_slots, ntbs;
    int64_t t0, t1;       /* kernel: first CTA entry, last CTA exit */
    int64_t records;      /* step executions recorded */
    int64_t dropped;      /* step executions not recorded */
    int32_t stopped;      /* CTAs that gave up */
    int64_t clock_err_ns; /* -1: unknown */
    int32_t file;         /* index of the file it was read from */
    int32_t line;
} weft_trace_call;

typedef struct weft_trace {
    int64_t time_base_ns; /* host time (CLOCK_REALTIME ns) of time 0 */
    size_t ncalls, cap_calls;
    weft_trace_call *calls;
    size_t nslices, cap_slices;
    weft_trace_slice *slices;
    size_t nfiles;
    char **files; /* names of the files read (for messages) */
} weft_trace;

void weft_trace_init(weft_trace *t, int64_t time_base_ns);
void weft_trace_free(weft_trace *t);
/* Drops calls and slices, keeps the time base (the runtime after each flush). */
void weft_trace_clear(weft_trace *t);

/* Sorts calls by (seq, rank) and slices by (call, tb, t0, iter, step); slice.call follows. */
weft_result weft_trace_sort(weft_trace *t);

/* ---- Chrome trace event JSON ---------------------------------------------------------------- */
/* Writes t as one complete file (object format: displayTimeUnit, otherData, traceEvents). */
weft_result weft_trace_write(const weft_trace *t, FILE *out);

/* Incremental writing (the runtime): open writes the head, append writes t's calls and slices
 * (and names for ranks and tbs not seen before), close writes the tail. */
typedef struct weft_trace_writer weft_trace_writer;
weft_result weft_trace_writer_open(const char *path, int64_t time_base_ns, weft_trace_writer **out,
                                   weft_diag *d);
weft_result weft_trace_writer_append(weft_trace_writer *w, const weft_trace *t);
weft_result weft_trace_writer_close(weft_trace_writer *w);

#ifdef __cplusplus
}
#endif
#endif
