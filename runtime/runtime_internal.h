/* runtime_internal.h — what the runtime's host code (C), its device code (CUDA) and the host
 * emulation of the interpreter (C++) share: the device tables a plan is made of, the window
 * layout, per-call arguments, the watchdog record, and the plan builder. */
#ifndef WEFT_RUNTIME_INTERNAL_H
#define WEFT_RUNTIME_INTERNAL_H

#include "trace_internal.h"
#include "weft_ir.h"

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---- limits and defaults ---------------------------------------------------------------- */
/* Thread blocks one rank of an algorithm may have: every CTA of a launch must be resident at
 * once (they wait on each other), and 512-thread CTAs capped at 64 registers fit 2 per SM. */
#define WEFT_RT_MAX_TBS 128
/* Sources a fused `re` combines (as the MSCCL executor). */
#define WEFT_RT_MAX_FUSE 16
/* Ranks simulated by one loopback launch. */
#define WEFT_RT_MAX_SUB  8
#define WEFT_RT_NTHREADS 512

/* Wire protocols the interpreter runs. XML LL128 runs as LL (see docs/runtime.md). */
#define WEFT_RT_PROTOS(X)                                                                          \
    X(SIMPLE, "Simple")                                                                            \
    X(LL, "LL")
typedef enum weft_rt_proto {
#define WEFT_X_(id, n) WEFT_RT_PROTO_##id,
    WEFT_RT_PROTOS(WEFT_X_)
#undef WEFT_X_
        WEFT_RT_PROTO_COUNT
} weft_rt_proto;

/* FIFO geometry per protocol; identical on every rank of a communicator (attach checks). */
typedef struct weft_rt_cfg {
    int32_t nslots[WEFT_RT_PROTO_COUNT];     /* messages a connection buffers */
    int32_t slot_bytes[WEFT_RT_PROTO_COUNT]; /* bytes of one slot (LL: lines, half is data) */
    /* > 0: a chunk's slice per iteration holds at most this many data bytes, so that a chunk
     * that fits one slot still crosses in several pipelined messages. */
    int32_t slice_bytes[WEFT_RT_PROTO_COUNT];
    int32_t nthreads;   /* threads per CTA */
    int64_t timeout_ns; /* watchdog; 0 = never */
} weft_rt_cfg;

/* The defaults, with WEFT_FIFO and WEFT_TIMEOUT_MS applied (a malformed WEFT_FIFO is
 * reported and ignored). */
void weft_rt_cfg_default(weft_rt_cfg *cfg);
/* Applies a WEFT_FIFO spec ("Simple=8x128K,LL=8x32K"; either part may be left out; a part may
 * end in /SLICE, e.g. Simple=8x128K/32K). */
weft_result weft_rt_cfg_parse(weft_rt_cfg *cfg, const char *spec, char *why, size_t whylen);
#define WEFT_RT_DEFAULT_TIMEOUT_MS 10000

/* ---- device tables ---------------------------------------------------------------------- */
/* One step as the interpreter walks it. Fused `re` runs have nsrc > 1 with their sources in
 * the xsrc table. Dependencies are counted per iteration: progress of a tb after finishing its
 * original step s in iteration it is base + it * nsteps_orig + s + 1. */
typedef struct weft_dstep {
    uint8_t type; /* weft_step_type */
    uint8_t srcbuf, dstbuf;
    uint8_t nsrc;                          /* re: sources (> 1: fused, in xsrc[xsrc ..]) */
    int32_t srcoff, dstoff, cnt;           /* chunks */
    int32_t depid, dep_stride, dep_target; /* wait: progress[depid] >= it*stride + target */
    int32_t post;                          /* > 0: afterwards progress = it*nsteps_orig + post */
    int32_t xsrc;
    int32_t orig; /* first original step index (diagnostics) */
} weft_dstep;

typedef struct weft_dsrc {
    int32_t buf, off;
} weft_dsrc;

typedef struct weft_dtb {
    int32_t first, nsteps; /* range in the step table */
    int32_t nsteps_orig;
    int32_t sconn, rconn; /* connection (key) index, or -1 */
    int32_t speer, rpeer, chan;
} weft_dtb;

/* One end of a connection. For a send end, slots and tail are in the receiver's window and
 * head in the sender's; for a receive end, slots and tail are local and head is the
 * sender's. pos counts messages over the communicator's life (local memory). */
typedef struct weft_dconn {
    char *slots;
    uint64_t *tail;
    uint64_t *head;
    uint64_t *pos;
    int32_t nslots, slot_bytes;
    int32_t peer, chan;
} weft_dconn;

/* Per-rank state that lives across calls (device memory). */
#define WEFT_RT_LINE 128
typedef struct weft_dstate {
    uint32_t claim; /* the first CTA to give up sets it, then writes the watchdog record */
    uint8_t pad_[WEFT_RT_LINE - 4];
} weft_dstate;

/* Progress of one tb of one algorithm (device memory, its own 128-byte line: other CTAs poll
 * it). The upper 32 bits count the algorithm's calls; during call c, after finishing its
 * original step s of iteration it, the tb posts (c << 32) + it * nsteps_orig + s + 1, and at
 * its end (c + 1) << 32. Every tb of an algorithm takes part in every call of it, so all of
 * them agree on c without a shared counter. */
typedef struct weft_dprog {
    uint64_t v;
    uint8_t pad_[WEFT_RT_LINE - 8];
} weft_dprog;

/* One tb's record, as the interpreter reads it: the tb, its connection ends, then its steps.
 * Records of an algorithm have one stride, so a CTA finds its own without a lookup and loads
 * header and first step in one round. */
typedef struct weft_drec {
    weft_dtb tb;
    weft_dconn sc, rc; /* zeroed when the tb does not send / receive */
    uint8_t pad_[16];
} weft_drec; /* followed by tb.nsteps weft_dstep */

/* What the watchdog saw (host-mapped memory; written once, by the first CTA that gives up). */
#define WEFT_RT_WAITS(X)                                                                           \
    X(NONE, "nothing")                                                                             \
    X(DATA, "data")                                                                                \
    X(CREDIT, "FIFO credit")                                                                       \
    X(DEP, "a dependency")                                                                         \
    X(ABORTED, "abort")
typedef enum weft_rt_wait {
#define WEFT_X_(id, n) WEFT_RT_WAIT_##id,
    WEFT_RT_WAITS(WEFT_X_)
#undef WEFT_X_
} weft_rt_wait;

typedef struct weft_errrec {
    uint32_t code; /* weft_rt_wait; 0 = no error; written last */
    int32_t algo;  /* weft_rargs.tag of the launch */
    int32_t rank, tb, step, peer, chan, depid, deps;
    int64_t iter;
    uint64_t want, seen, calls, waited_ns; /* calls: of this algorithm before this one */
} weft_errrec;

/* Window control words (offsets in every rank's window): the abort word (rank + 1 of a rank
 * that gave up), then per algorithm the call count + 1 of the call this rank is running. */
#define WEFT_RT_ABORT_OFF       0
#define WEFT_RT_ARRIVAL_OFF(ai) (128 + 8 * (size_t)(ai))

/* Per-rank launch arguments (by value in the kernel parameters). Element counts are in the
 * kernel's element type (bytes for collectives that do not reduce). */
typedef struct weft_rargs {
    const char *rec; /* ntbs records of rec_bytes */
    const weft_dsrc *xsrc;
    char *buf[3]; /* input, output, scratch */
    int64_t count, C, E;
    int32_t k, niter;
    int32_t rec_bytes, proto;
    weft_dprog *prog; /* this algorithm's progress, one per tb */
    weft_dstate *state;
    char *const *peer_win; /* device array [nranks]: every window, as this rank sees it */
    weft_errrec *err;
    int64_t timeout_ns;
    int32_t rank, nranks;
    int32_t tag;          /* copied into the watchdog record (the host's algorithm index) */
    int32_t arrival_off;  /* WEFT_RT_ARRIVAL_OFF(tag) */
    weft_trace_dev trace; /* per-step records; rec NULL: not traced (docs/trace.md) */
} weft_rargs;

/* A launch: one rank (nsub = 1, r0), or several ranks on one device (loopback), whose
 * arguments are then in device memory (sub) and whose CTAs are numbered consecutively. */
typedef struct weft_kargs {
    weft_rargs r0;
    const weft_rargs *sub;
    int32_t nsub;
    int32_t cta_base[WEFT_RT_MAX_SUB + 1];
} weft_kargs;

/* ---- kernel instantiations -------------------------------------------------------------- */
/* 35 instantiations (each in two variants, untraced and traced: kernels.cu): one byte-moving kernel
 * for collectives that do not reduce; sum and product per width and float type (signed and unsigned
 * integers share bits); max and min per type. weft_rt_kernel_index maps a call to its slot (avg
 * runs as sum, then a scaling pass). */
#define WEFT_RT_NKERNELS 35
static inline int weft_rt_kernel_index(weft_dtype t, weft_redop op, int reduces) {
    static const signed char sumslot[10] = {0, 0, 1, 1, 2, 2, 3, 4, 5, 6};
    if ((unsigned)t >= WEFT_DTYPE_COUNT) return -1;
    if (!reduces) return 0;
    switch (op) {
    case WEFT_OP_SUM:
    case WEFT_OP_AVG: return 1 + sumslot[t];
    case WEFT_OP_PROD: return 8 + sumslot[t];
    case WEFT_OP_MAX: return 15 + (int)t;
    case WEFT_OP_MIN: return 25 + (int)t;
    default: return -1;
    }
}

/* ---- plans (plan.c) --------------------------------------------------------------------- */
/* A connection key: sender-to-receiver rank distance d = (recv - send) mod N, channel and
 * protocol. Every rank's window holds, per key, the FIFO of its incoming connection and the
 * credit counter of its outgoing one, so the layout is the same on all ranks. */
typedef struct weft_rt_key {
    int32_t d, chan, proto;
} weft_rt_key;

typedef struct weft_layout {
    int32_t nranks, nkeys;
    int32_t nalgos;    /* arrival words in the control area (set before weft_layout_finish) */
    weft_rt_key *keys; /* sorted */
    size_t *tail_off, *head_off, *slot_off;
    size_t bytes;
} weft_layout;

/* One rank's share of one algorithm, ready to upload. */
typedef struct weft_rank_plan {
    int32_t ntbs, nsteps, nxsrc;
    weft_dtb *tbs;
    weft_dstep *steps;
    weft_dsrc *xsrc;
    uint8_t uses_buf[3]; /* the rank touches input / output / scratch */
    int32_t s_chunks;
} weft_rank_plan;

typedef struct weft_algo_plan {
    const weft_algo *algo;
    int32_t proto; /* weft_rt_proto */
    int32_t k;     /* chunks per segment */
    int32_t maxcnt;
    int32_t nranks;
    weft_rank_plan *ranks; /* nranks */
} weft_algo_plan;

/* Checks that the interpreter can run algo on nranks ranks (reason in why, for the log) and
 * builds its per-rank tables with connection indices from layout (which must contain every key
 * the algorithm uses: see weft_layout_add). */
weft_result weft_plan_build(const weft_algo *a, int32_t nranks, const weft_layout *layout,
                            weft_algo_plan *out, char *why, size_t whylen);
void weft_plan_free(weft_algo_plan *p);
/* The protocol the interpreter runs an algorithm with. */
int32_t weft_plan_proto(const weft_algo *a);
/* Whether the interpreter can run a (independent of layout); reason in why. */
int weft_plan_eligible(const weft_algo *a, int32_t nranks, char *why, size_t whylen);

/* Collects the keys of algorithms, then fixes offsets. */
void weft_layout_init(weft_layout *l, int32_t nranks);
weft_result weft_layout_add(weft_layout *l, const weft_algo *a);
weft_result weft_layout_finish(weft_layout *l, const weft_rt_cfg *cfg);
void weft_layout_free(weft_layout *l);
/* Key index or -1. */
int32_t weft_layout_find(const weft_layout *l, int32_t d, int32_t chan, int32_t proto);

/* Geometry of one call: chunk size, slice size and iterations, in kernel elements. */
typedef struct weft_call_geom {
    int32_t kelem; /* bytes of a kernel element: the dtype's, or 1 when nothing reduces */
    int64_t count; /* per segment, kernel elements */
    int64_t C;     /* chunk slot, kernel elements */
    int64_t E;     /* slice per iteration (slot stride), kernel elements */
    int32_t niter;
    size_t scratch_bytes;
} weft_call_geom;

weft_result weft_call_geometry(const weft_algo_plan *p, const weft_rt_cfg *cfg, int32_t rank,
                               size_t count, int32_t dtype_bytes, int reduces, weft_call_geom *g);

/* Connection end descriptors of one rank, given every rank's window base (as this rank sees
 * it: LSA pointers, or plain pointers in loopback) and the rank's local pos counters
 * (2 * nkeys uint64: send positions, then receive positions). */
void weft_layout_conns(const weft_layout *l, const weft_rt_cfg *cfg, int32_t rank, char *const *win,
                       uint64_t *pos, weft_dconn *sconn, weft_dconn *rconn);

/* Bytes of one tb record of rp (all records of an algorithm and rank share it). */
int32_t weft_plan_rec_bytes(const weft_rank_plan *rp);
/* rp's records into out (ntbs x rec_bytes), with the connection ends of the rank. */
void weft_plan_records(const weft_rank_plan *rp, const weft_dconn *sconn, const weft_dconn *rconn,
                       char *out);

/* Formats what a watchdog record says, naming rank/tb/step and the step's XML line. */
void weft_errrec_format(const weft_errrec *e, const weft_algo *a, char *buf, size_t len);

#ifdef __cplusplus
}
#endif
#endif
