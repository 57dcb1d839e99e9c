/* runtime_internal.h — what the runtime's host code (C), its device code (CUDA) and the host
 * emulation of the interpreter (C++) share: the device tables a plan is made of, the window
 * layout, per-call arguments, the watchdog record, and the plan builder. */
#ifndef WEFT_RUNTIME_INTERNAL_H
#define WEFT_RUNTIME_INTERNAL_H

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
    int32_t nthreads;                        /* threads per CTA */
    int32_t pad_;
    int64_t timeout_ns; /* watchdog; 0 = never */
} weft_rt_cfg;

/* The defaults, with WEFT_FIFO and WEFT_TIMEOUT_MS applied (a malformed WEFT_FIFO is
 * reported and ignored). */
void weft_rt_cfg_default(weft_rt_cfg *cfg);
/* Applies a WEFT_FIFO spec ("Simple=8x128K,LL=8x32K"; either part may be left out). */
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

/* Per-rank state that lives across calls (device memory). Counters sit on their own 128-byte
 * lines: other CTAs poll them. */
#define WEFT_RT_LINE 128
typedef struct weft_dstate {
    uint64_t epoch; /* calls completed on this communicator */
    uint8_t pad0_[WEFT_RT_LINE - 8];
    uint32_t done; /* CTAs of the current call that finished */
    uint8_t pad1_[WEFT_RT_LINE - 4];
    struct {
        uint64_t v;
        uint8_t pad_[WEFT_RT_LINE - 8];
    } progress[WEFT_RT_MAX_TBS];
} weft_dstate;

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
    uint32_t claim; /* the first CTA to give up sets it, then fills the rest */
    uint32_t code;  /* weft_rt_wait; 0 = no error; written last */
    int32_t algo;   /* weft_rargs.tag of the launch */
    int32_t rank, tb, step, peer, chan, depid, deps;
    int64_t iter;
    uint64_t want, seen, epoch, waited_ns;
} weft_errrec;

/* Window control words (offsets in every rank's window). */
#define WEFT_RT_ARRIVAL_OFF 0   /* uint64: epoch + 1 of the call this rank is running */
#define WEFT_RT_ABORT_OFF   128 /* uint32: rank + 1 of a rank that gave up, or 0 */
#define WEFT_RT_CTRL_BYTES  4096

/* Per-rank launch arguments (by value in the kernel parameters). Element counts are in the
 * kernel's element type (bytes for collectives that do not reduce). */
typedef struct weft_rargs {
    const weft_dtb *tbs;
    const weft_dstep *steps;
    const weft_dsrc *xsrc;
    const weft_dconn *sconn, *rconn;
    char *buf[3]; /* input, output, scratch */
    int64_t count, C, E;
    int32_t k, niter;
    int32_t ntbs, proto;
    weft_dstate *state;
    uint64_t *arrival;             /* own window */
    uint32_t *abortw;              /* own window */
    uint64_t *const *peer_arrival; /* device array [nranks] */
    uint32_t *const *peer_abort;   /* device array [nranks] */
    weft_errrec *err;
    int64_t timeout_ns;
    int32_t rank, nranks;
    int32_t tag; /* copied into the watchdog record (the host's algorithm index) */
    int32_t pad_;
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
/* 35 instantiations: one byte-moving kernel for collectives that do not reduce; sum and
 * product per width and float type (signed and unsigned integers share bits); max and min per
 * type. weft_rt_kernel_index maps a call to its slot (avg runs as sum, then a scaling pass). */
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

/* Formats what a watchdog record says, naming rank/tb/step and the step's XML line. */
void weft_errrec_format(const weft_errrec *e, const weft_algo *a, char *buf, size_t len);

#ifdef __cplusplus
}
#endif
#endif
