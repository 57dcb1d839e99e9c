/* trace_internal.h — the trace recorder: the records the GPU interpreter writes (plain C structs
 * shared with CUDA code), clock alignment, a call's records into the model, and the tracer the
 * runtime drives per rank. The model and its file format are weft_trace.h. See docs/trace.md. */
#ifndef WEFT_TRACE_INTERNAL_H
#define WEFT_TRACE_INTERNAL_H

#include "weft_trace.h"

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

/* ---- a call into the model (trace_model.c) -------------------------------------------------- */
/* Adds one call of one rank from what its CTAs wrote: hdr[ci->ntbs], rec[tb * cap + i].
 * Records that contradict the schedule (step index out of range, end before start) are
 * skipped with a warning in d. Times are mapped with clk. */
weft_result weft_trace_add_call(weft_trace *t, const weft_trace_callinfo *ci,
                                const weft_trace_tbhdr *hdr, const weft_trace_rec *rec,
                                uint32_t cap, const weft_trace_clock *clk, weft_diag *d);

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
