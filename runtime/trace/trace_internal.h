/* trace_internal.h — per-step timeline traces: the records the GPU interpreter writes (plain C
 * structs shared with CUDA code), the host model of a trace, clock alignment, the Chrome trace
 * event JSON writer and reader, and the summaries of `weft trace`. See docs/trace.md. */
#ifndef WEFT_TRACE_INTERNAL_H
#define WEFT_TRACE_INTERNAL_H

#include "weft_common.h"

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ==== what the device writes =============================================================== *
 * One CTA (thread block) of one rank, during one call, appends one record per step execution
 * (step s of its step table, slice iteration it) to its own linear buffer of `cap` records;
 * only the CTA's thread 0 writes, so no atomics are needed. Executions past `cap` are counted,
 * never written. Times are the GPU's %globaltimer (ns). */
typedef struct weft_trace_rec {
    uint64_t t0; /* the end of the tb's previous step (the CTA's entry for its first): a tb's
                  * records tile its time, the step's own setup and the loop's included */
    uint64_t t1; /* after the step published its result (tail, head, progress) */
    uint32_t dep_ns, data_ns, credit_ns; /* time spent waiting; saturate at 2^32-1 */
    uint32_t bytes;                      /* payload bytes the step moved (valid elements) */
    int32_t step;                        /* index in the tb's step table */
    int32_t iter;                        /* slice iteration */
    uint32_t spos, rpos; /* the tb's send / receive message counters (low 32 bits) when the
                          * step began: minus the header's spos0 / rpos0, the index within the
                          * call of the message it sends / receives */
} weft_trace_rec;

/* Written by the CTA itself: t_begin, spos0 and rpos0 at entry, the rest at exit. */
typedef struct weft_trace_tbhdr {
    uint64_t t_begin, t_end; /* CTA entry and exit */
    uint32_t n;              /* step executions, recorded or not: min(n, cap) records */
    uint32_t spos0, rpos0;   /* the message counters at entry (low 32 bits) */
    uint32_t stopped;        /* 1: the CTA gave up (watchdog or abort) */
} weft_trace_tbhdr;

/* In the kernel arguments; rec == NULL means tracing is off for this launch. Buffers are
 * device memory, zeroed by the host before the launch: hdr[ntbs], rec[ntbs * cap]. */
typedef struct weft_trace_dev {
    weft_trace_tbhdr *hdr;
    weft_trace_rec *rec;
    uint32_t cap;
    uint32_t pad_;
} weft_trace_dev;

/* ==== host side ============================================================================= */

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

/* ---- clock alignment ----------------------------------------------------------------------- *
 * A sample pairs a host clock reading (CLOCK_REALTIME, ns) with a %globaltimer reading taken
 * in between two host readings; err_ns is half that interval (the sample's uncertainty). GPU
 * times are mapped to host time linearly between the nearest samples (extrapolated outside);
 * with one sample by a constant offset; with none they are taken as host times. */
typedef struct weft_trace_clock_sample {
    int64_t host_ns;
    uint64_t gpu_ns;
    int64_t err_ns;
} weft_trace_clock_sample;

typedef struct weft_trace_clock {
    size_t n, cap;
    weft_trace_clock_sample *s; /* sorted by gpu_ns */
} weft_trace_clock;

weft_result weft_trace_clock_add(weft_trace_clock *c, int64_t host_ns, uint64_t gpu_ns,
                                 int64_t err_ns);
/* Host ns for a GPU time; *err_ns (may be NULL) receives the uncertainty, -1 when unknown. */
int64_t weft_trace_clock_map(const weft_trace_clock *c, uint64_t gpu_ns, int64_t *err_ns);
void weft_trace_clock_free(weft_trace_clock *c);
/* The host clock the samples use (CLOCK_REALTIME, ns). */
int64_t weft_trace_host_now(void);

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

/* Adds one call of one rank from what its CTAs wrote: hdr[ci->ntbs], rec[tb * cap + i].
 * Records that contradict the schedule (step index out of range, end before start) are
 * skipped with a warning in d. Times are mapped with clk. */
weft_result weft_trace_add_call(weft_trace *t, const weft_trace_callinfo *ci,
                                const weft_trace_tbhdr *hdr, const weft_trace_rec *rec,
                                uint32_t cap, const weft_trace_clock *clk, weft_diag *d);

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

/* ---- recording (tracer.c): what the runtime drives per communicator rank ------------------- *
 * A tracer owns a bounded device arena. Each traced launch takes a region of it (one header per
 * tb, then cap records per tb; the kernel's CTAs write their headers themselves, at entry and at
 * exit, so nothing is zeroed between calls); the host collects the regions
 * (synchronizing the streams of the pending calls) when the arena cannot hold the next call, at
 * weft_tracer_flush and at close, and appends them to the rank's file. Launches under CUDA graph
 * capture are not traced (a graph would replay into a region already collected). Device access
 * goes through a backend so that tests run it on host memory. */
typedef struct weft_tracer_backend {
    void *ctx;
    void *(*alloc)(void *ctx, size_t bytes); /* device memory, or NULL */
    void (*free)(void *ctx, void *p);
    int (*sync)(void *ctx, void *stream); /* 0 = ok */
    int (*to_host)(void *ctx, void *dst, const void *src, size_t bytes);
    int (*capturing)(void *ctx, void *stream); /* 1 while the stream is being captured */
    /* One clock sample (host CLOCK_REALTIME ns, GPU %globaltimer, uncertainty); 0 = ok. */
    int (*clock)(void *ctx, int64_t *host_ns, uint64_t *gpu_ns, int64_t *err_ns);
    void (*release)(void *ctx); /* at close, after the arena is freed; may be NULL */
} weft_tracer_backend;

/* The CUDA backend for `device` (trace_cuda.cu, CUDA builds only): cudaMalloc'd arena, waiting
 * on the launch's stream, capture detection, and clock samples by a ping-pong
 * between the host and a one-thread kernel through host-mapped memory (the narrowest of 16
 * round trips; an answer later than 100 ms fails the sample instead of waiting). */
weft_result weft_tracer_cuda_backend(int device, weft_tracer_backend *out);

typedef struct weft_tracer weft_tracer;

#define WEFT_TRACE_DEFAULT_ARENA ((size_t)64 << 20)

/* Opens the file for rank `rank` from a path pattern: %r rank, %p pid, %h host, %% a percent
 * sign; without %r, ".rank<R>" goes before a final ".json" (or at the end). A path already open
 * in this process gets ".<N>" before the extension. arena_bytes 0 = the default. The backend
 * is copied and owned from here on (its release runs at close, or now on failure). The file is
 * completed at weft_tracer_close, or at process exit (then nothing more is recorded, and the
 * owner's weft_tracer_close only frees t). */
weft_result weft_tracer_open(const char *pattern, int rank, const weft_tracer_backend *be,
                             size_t arena_bytes, weft_tracer **out, weft_diag *d);
/* The device view for one launch of ci (copied; ci->tbs must stay valid until the call is
 * collected). dev->rec == NULL: this launch is not traced (capture, or nothing fits). */
weft_result weft_tracer_launch(weft_tracer *t, const weft_trace_callinfo *ci, void *stream,
                               weft_trace_dev *dev);
/* Forgets the call of the last weft_tracer_launch (its kernel was not launched). */
void weft_tracer_cancel(weft_tracer *t);
/* Collects every pending call into the file. */
weft_result weft_tracer_flush(weft_tracer *t);
/* Flushes and closes the file; frees t. */
weft_result weft_tracer_close(weft_tracer *t);
/* The file's path (expanded); calls not traced (capture) and records dropped so far. */
const char *weft_tracer_path(const weft_tracer *t);
int64_t weft_tracer_untraced(const weft_tracer *t);

#ifdef __cplusplus
}
#endif
#endif
