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
/* Thread blocks one rank of an algorithm may have (XML <tb>s). Every CTA of a launch must be
 * resident at once (they wait on each other), so what fits is checked against the device's
 * CTA budget at attach. */
#define WEFT_RT_MAX_TBS 256
/* Sources a fused `re` combines (as the MSCCL executor), operands of a fold and connections of
 * one multi-peer send. */
#define WEFT_RT_MAX_FUSE 16
/* Ranks simulated by one loopback launch. */
#define WEFT_RT_MAX_SUB 8
/* Threads per CTA. 256 threads at the interpreter's 128 registers fit two CTAs per SM. */
#define WEFT_RT_NTHREADS 256
/* CTAs one tb may run on (its group); members split the tb's slices between them. */
#define WEFT_RT_MAX_GROUP 32
/* CTAs per rank a launch may take on a GPU by default (WEFT_MAX_CTAS): all of them spin while
 * they wait, so weft leaves the rest of the device to the application. */
#define WEFT_RT_DEFAULT_MAX_CTAS 128

/* The wire protocols the interpreter runs: the rows of WEFT_PROTOS (weft_ir.h) that run as
 * themselves, with the same values, so that a plan's protocol is weft_proto_runs_as of the
 * algorithm's. */
typedef enum weft_rt_proto {
    WEFT_RT_PROTO_SIMPLE = WEFT_PROTO_SIMPLE,
    WEFT_RT_PROTO_LL = WEFT_PROTO_LL,
    WEFT_RT_PROTO_LL128 = WEFT_PROTO_LL128,
    WEFT_RT_PROTO_COUNT
} weft_rt_proto;

/* FIFO geometry per protocol; identical on every rank of a communicator (attach checks). */
typedef struct weft_rt_cfg {
    int32_t nslots[WEFT_RT_PROTO_COUNT];     /* messages a connection buffers (per member) */
    int32_t slot_bytes[WEFT_RT_PROTO_COUNT]; /* bytes of one slot (LL: lines, half is data) */
    /* > 0: a chunk's slice per iteration holds at most this many data bytes, so that a chunk
     * that fits one slot still crosses in several pipelined messages. */
    int32_t slice_bytes[WEFT_RT_PROTO_COUNT];
    /* A rank's thread blocks run as one (its collapsed plan, where it has one and where it
     * shortens the rank's chains of waits between thread blocks: weft_mode_plan.collapse_gain;
     * with collapse_always every plan that has one) for calls whose chunks hold at most this
     * many bytes; 0: never. */
    int64_t collapse_bytes[WEFT_RT_PROTO_COUNT];
    int32_t collapse_always;
    int32_t nthreads;   /* threads per CTA */
    int32_t max_ctas;   /* CTAs per rank a launch may take (before the device's own limit) */
    int64_t timeout_ns; /* watchdog; 0 = never */
    /* Launch a call's CTAs as a cooperative grid (they wait for each other's steps, so one
     * started while another cannot be would spin until it can): 1 always, 0 never, -1 where
     * the launches of every communicator attached on the device could not all be resident at
     * once (a cooperative launch costs about 2 us more: docs/runtime.md). */
    int32_t cooperative;
    /* LL calls that are neither direct nor traced run on the latency kernel (WEFT_LATENCY_KERNEL;
     * 1 by default). */
    int32_t latency_kernel;
    /* Calls of one-hop plans that fit the one-hop kernel run on it (WEFT_HOP, weft_hop_call):
     * 1 always, 0 never, -1 (auto, the default) on 3 ranks or more, where it was measured
     * faster than the interpreter (2 ranks: the interpreter, docs/runtime-perf.md). */
    int32_t hop;
    /* LL128 algorithms run as LL128 (1) or as LL (0): WEFT_LL128, by default 1 where the device
     * is sm_90 or newer and NVLink joins every GPU of the node (weft_rt_ll128_auto); -1 until
     * a communicator resolves it. */
    int32_t ll128;
    /* Tests only: every counter starts as if start_calls calls of every algorithm had run and
     * start_msgs messages had crossed every connection (weft_layout_start), so that a short run
     * crosses the 2^32 wraps of the call epoch and of LL flags. 0 in use. */
    uint64_t start_calls, start_msgs;
} weft_rt_cfg;

/* Writes the reason a spec or an algorithm is refused into why[len] (when why is not NULL) and
 * returns 0, so that a refusal is one `return weft_rt_why(...)` (plan.c, cfg.c). */
int weft_rt_why(char *why, size_t len, const char *fmt, ...) WEFT_PRINTF(3, 4);
/* The runtime configuration (cfg.c). The defaults, with WEFT_FIFO, WEFT_MAX_CTAS, WEFT_TIMEOUT_MS,
 * WEFT_COLLAPSE and WEFT_COOPERATIVE applied (a malformed WEFT_FIFO or WEFT_COLLAPSE is reported
 * and ignored). */
void weft_rt_cfg_default(weft_rt_cfg *cfg);
/* Applies a WEFT_COLLAPSE spec: BYTES for every protocol, or "LL=256K,Simple=0", optionally
 * after "always," (collapse every plan that has a collapsed form, gain or not). */
weft_result weft_rt_cfg_parse_collapse(weft_rt_cfg *cfg, const char *spec, char *why,
                                       size_t whylen);
/* Applies a WEFT_FIFO spec ("Simple=8x128K,LL=8x32K"; either part may be left out; a part may
 * end in /SLICE, e.g. Simple=8x128K/32K). */
weft_result weft_rt_cfg_parse(weft_rt_cfg *cfg, const char *spec, char *why, size_t whylen);
#define WEFT_RT_DEFAULT_TIMEOUT_MS 10000
/* ---- device tables ---------------------------------------------------------------------- */
/* One step as the interpreter walks it. Fused `re` runs have nsrc > 1 with their sources in
 * the xsrc table. Dependencies are counted per iteration of the member: progress of a tb
 * member after finishing its original step s in its j-th iteration is base + j * nsteps_orig
 * + s + 1 (members of one tb run the same iterations as the members of the same index of every
 * other tb, so member g only ever waits for member g). A receive also names where the matching
 * send's data lies on the sender (pbuf, poff: its source chunk), for direct transfers.
 * Steps of a collapsed rank (see weft_rank_plan) take their connections from the message table
 * (WEFT_DSTEP_F_XCONN): sends to nsend connections from xrecv[xsend ..] (the message table),
 * receives from nrecv at xrecv[xrecv ..]. A fold (WEFT_DSTEP_F_FOLD) combines nrecv operands,
 * messages and local chunks, listed at xrecv[xrecv ..] in the order of the steps it replaces. */
typedef struct weft_dstep {
    uint8_t type; /* weft_step_type */
    uint8_t srcbuf, dstbuf;
    uint8_t nsrc;  /* re: sources (> 1: fused, in xsrc[xsrc ..]) */
    uint8_t pbuf;  /* receives: the sender's buffer of this message (direct transfers) */
    uint8_t nrecv; /* receives: messages taken (> 1: fused, in xrecv[xrecv ..]); folds: operands */
    uint8_t flags; /* WEFT_DSTEP_F_* */
    uint8_t nsend; /* XCONN sends: connections (one source to each, in xrecv[xsend ..]) */
    int32_t srcoff, dstoff, cnt;           /* chunks */
    int32_t poff;                          /* receives: the sender's chunk of this message */
    int32_t depid, dep_stride, dep_target; /* wait: progress[depid] >= j*stride + target */
    int32_t post;                          /* > 0: afterwards progress = j*nsteps_orig + post */
    int32_t xsrc;
    int32_t xrecv;
    int32_t xsend;
    int32_t dst2off; /* folds with WEFT_DSTEP_F_DST2: a second destination (a copy folded in) */
    uint8_t dst2buf;
    uint8_t pad_[3];
    int32_t otb;  /* the tb the (first) original step belongs to (diagnostics) */
    int32_t orig; /* first original step index (diagnostics) */
} weft_dstep;

/* This receive's message is taken by another tb's fused receive (the step waits for it and
 * only counts the message). */
#define WEFT_DSTEP_F_ELSEWHERE 1u
/* Connections from the message table, not the tb's own ends (collapsed ranks). */
#define WEFT_DSTEP_F_XCONN 2u
/* A fold: value = operand 0, then each further operand combined with it in its order; written
 * to dst (unless WEFT_DSTEP_F_NODST) and to dst2 (WEFT_DSTEP_F_DST2). */
#define WEFT_DSTEP_F_FOLD  4u
#define WEFT_DSTEP_F_NODST 8u
#define WEFT_DSTEP_F_DST2  16u
/* A scatter: nrecv independent moves, each entry's data (a message, or a local chunk at
 * pbuf/poff) to its own destination (dbuf/doff); one pass for all of them. */
#define WEFT_DSTEP_F_SCATTER 32u
/* The dependency may be taken late: no other tb of the rank writes anything this step reads, so
 * the wait only orders the step's stores; an LL step of one batch then waits for it after its
 * loads, while its message is on the way (interp.h, ll_step). */
#define WEFT_DSTEP_F_DEPLATE 64u

typedef struct weft_dsrc {
    int32_t buf, off;
} weft_dsrc;

/* One entry of the message table. A message (tb >= 0) arrives on (or, for a send, leaves on)
 * tb's connection, which carries only the messages of that tb's steps: in the member's
 * iteration j it is the tb's message j * per + k of the call. pbuf/poff: where a received
 * message lies on the sender (direct transfers). A fold's local operand has tb = -1 and names
 * its chunk with pbuf/poff. ord (folds): 0 combines as op(operand, value) (a receive-reduce),
 * 1 as op(value, operand) (an `re` into the value). Fused receives of the plan as written
 * (chains of receive-reduce steps of several tbs) are folds whose operand 0 is the first
 * link's source. */
typedef struct weft_drecv {
    int32_t tb, k, per;
    int32_t pbuf, poff; /* a send's source chunk in a multi-peer send */
    int32_t ord;        /* WEFT_XENT_* */
    int32_t conn;       /* a runner's entries: its connection (weft_rconn) */
    int32_t dbuf, doff; /* a scatter's entries: where this one goes */
} weft_drecv;

/* What a runner holds in shared memory (interp.h): every step, connection and entry. Larger
 * ranks do not collapse. */
#define WEFT_RT_RUN_MAX_STEPS 16
#define WEFT_RT_RUN_MAX_CONNS 32
#define WEFT_RT_RUN_MAX_ENTS  64

typedef struct weft_dtb {
    int32_t first, nsteps; /* range in the step table */
    int32_t nsteps_orig;
    int32_t nsend, nrecv; /* messages per iteration on the send and receive connection */
    int32_t runner;       /* this record runs a collapsed rank: it owns every connection */
    int32_t nconn, nent;  /* a runner: its connections and entries (after its steps) */
    int32_t xbase;        /* a runner: its first entry in the rank plan's message table */
    int32_t sconn, rconn; /* connection (key) index, or -1 */
    int32_t speer, rpeer, chan;
} weft_dtb;

/* One end of a connection, for member 0 of the tb's group; member g's FIFO and counters lie at
 * fixed strides from these (slots: mstride bytes; tail and head: a WEFT_RT_LINE each; pos: two
 * words each). For a send end, slots and tail are in the receiver's window and head in the
 * sender's; for a receive end, slots and tail are local and head is the sender's. pos counts
 * messages over the communicator's life (local memory): [0] the end's position, [1] (send end)
 * the last credit seen.
 * Direct transfers (the receiver reads the sender's buffer; no FIFO): ready is the receiver's
 * word (in its window) that the sender raises when a message's data is in place, done the
 * sender's word (in its window) that the receiver raises when it has read it; one line per
 * member, per algorithm (tagged with the call's epoch: see interp.h). direct: this connection
 * may run direct (every message comes from an `s` step and the algorithm verified safe for
 * zero-copy transfers in the call's mode). */
typedef struct weft_dconn {
    char *slots;
    uint64_t *tail;
    uint64_t *head;
    uint64_t *pos;
    uint64_t *ready;
    uint64_t *done;
    int64_t mstride;
    int32_t nslots, slot_bytes;
    int32_t peer, chan;
    int32_t direct, pad_;
} weft_dconn;

/* weft_drecv.ord: a fold combines this operand as op(value, it) (else op(it, value)); a later
 * entry of the same step is on the same connection (only the last one publishes the
 * connection's tail or head: a counter must never go back). */
#define WEFT_XENT_ORD     1
#define WEFT_XENT_NOTLAST 2

/* A connection of a collapsed rank's runner, after its steps in its record: the end (member 0's,
 * as in a tb record) and the messages it carries per iteration. */
typedef struct weft_rconn {
    weft_dconn e;
    int32_t per, send;
} weft_rconn;

/* The kernel's phase probe, a build for kernel work (CMake's WEFT_PROBE, docs/runtime-perf.md):
 * thread 0 of every CTA adds the clock cycles it spent in each phase of a call to its row of the
 * rank's table (weft_dstate.probe: WEFT_RT_PROBE_CTAS rows of WEFT_RT_PROBE_N words, a CTA's
 * index in the rank's launch), and the communicator prints the means per call when it is
 * detached. Waits are the spin's slow path (the first look missed) and lie inside "steps". */
#define WEFT_RT_PROBES(X)                                                                          \
    X(RECORD, "record")           /* entry until the tb's record is in registers */                \
    X(LOAD, "steps to smem")      /* the tb's steps (a runner's tables) to shared memory */        \
    X(GRIDWAIT, "grid wait")      /* the stream's previous kernel complete (PDL) */                \
    X(COUNTERS, "counters")       /* progress, FIFO positions, the arrival word */                 \
    X(STEPS, "steps")             /* every step of every iteration */                              \
    X(WDEP, "  dependency waits") /* of which: another tb's progress */                            \
    X(WDATA, "  data waits")      /* a message's flag, tail or ready word */                       \
    X(WCREDIT, "  credit waits")  /* room in the receiver's FIFO */                                \
    X(WREAD, "  read waits")      /* direct sends read by the receiver */                          \
    X(END, "end")                 /* drain, last barrier, counters stored */                       \
    X(CYCLES, "total")            /* entry to exit, cycles */                                      \
    X(NS, "total (globaltimer)")  /* entry to exit, %globaltimer ns (calibrates the cycles) */     \
    X(CALLS, "calls")                                                                              \
    X(SUB_CREDIT, "LL step: to credit") /* step start (dependency, dispatch) to credit */          \
    X(SUB_DATA, "LL: to first line in") /* the first line's flag matched */                        \
    X(SUB_STORE, "LL: to lines out")    /* the batch's lines reduced, written, sent */             \
    X(SUB_SYNC, "LL: to barrier")       /* the step's CTA barrier */                               \
    X(SUB_POST, "step: to post")        /* the step's end (head, progress post) */                 \
    X(STEP0, "step 0")                                                                             \
    X(STEP1, "step 1")                                                                             \
    X(STEP2, "step 2")                                                                             \
    X(STEP3, "step 3")                                                                             \
    X(STEP4, "step 4")                                                                             \
    X(STEP5, "step 5")                                                                             \
    X(STEP6, "step 6")                                                                             \
    X(STEP7, "step 7")
typedef enum weft_rt_probe {
#define WEFT_X_(id, n) WEFT_RT_PROBE_##id,
    WEFT_RT_PROBES(WEFT_X_)
#undef WEFT_X_
        WEFT_RT_PROBE_N
} weft_rt_probe;
#define WEFT_RT_PROBE_CTAS 64

/* Per-rank state that lives across calls (device memory). */
#define WEFT_RT_LINE 128
typedef struct weft_dstate {
    uint32_t claim; /* the first CTA to give up sets it, then writes the watchdog record */
    uint32_t pad0_;
    uint64_t *probe; /* WEFT_PROBE builds: the phase table (NULL otherwise) */
    uint8_t pad_[WEFT_RT_LINE - 16];
} weft_dstate;

/* Progress of one member of one tb of one algorithm (device memory, its own 128-byte line:
 * other CTAs poll it; member g of tb t at index t * kmax + g). The upper 32 bits count the
 * calls this member ran; during such a call c, after finishing its original step s of its
 * j-th iteration, the member posts (c << 32) + j * nsteps_orig + s + 1, and at its end
 * (c + 1) << 32. Member g of every tb of an algorithm runs in the same calls (the group size
 * of a call is the same for all tbs and ranks), so they agree on c without a shared counter. */
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
} weft_drec;           /* followed by tb.nsteps weft_dstep */

/* What the watchdog saw (host-mapped memory; written once, by the first CTA that gives up). */
#define WEFT_RT_WAITS(X)                                                                           \
    X(NONE, "nothing")                                                                             \
    X(DATA, "data")                                                                                \
    X(CREDIT, "FIFO credit")                                                                       \
    X(DEP, "a dependency")                                                                         \
    X(ABORTED, "abort")                                                                            \
    X(READ, "its data to be read")
typedef enum weft_rt_wait {
#define WEFT_X_(id, n) WEFT_RT_WAIT_##id,
    WEFT_RT_WAITS(WEFT_X_)
#undef WEFT_X_
} weft_rt_wait;

typedef struct weft_errrec {
    uint32_t code; /* weft_rt_wait; 0 = no error; written last */
    int32_t algo;  /* weft_rargs.tag of the launch */
    int32_t rank, tb, step, peer, chan, depid, deps;
    int32_t member;
    int64_t iter;
    uint64_t want, seen, calls, waited_ns; /* calls: of this algorithm before this one */
} weft_errrec;

/* Window control words (offsets in every rank's window): the abort word (rank + 1 of a rank
 * that gave up), then per algorithm the call count + 1 of the call this rank is running. */
#define WEFT_RT_ABORT_OFF       0
#define WEFT_RT_ARRIVAL_OFF(ai) (128 + 8 * (size_t)(ai))

/* Launch arguments common to every rank of a call (by value in the kernel parameters).
 * Element counts are in the kernel's element type (bytes for collectives that do not reduce).
 * Member g of a tb runs iterations g, g + K, g + 2K, ... of niter. */
typedef struct weft_rargs {
    int64_t count, C, E;
    int64_t timeout_ns;
    int32_t k, niter;
    int32_t K;      /* CTAs per tb in this call (the group size) */
    int32_t kmax;   /* progress lines per tb (the algorithm's largest group) */
    int32_t proto;  /* weft_rt_proto */
    int32_t direct; /* direct transfers on the connections that allow them */
    int32_t nranks;
    int32_t tag;         /* copied into the watchdog record (the host's algorithm index) */
    int32_t arrival_off; /* WEFT_RT_ARRIVAL_OFF(tag) */
    int32_t pad_;
} weft_rargs;

/* Launch arguments of one rank. pbase[b] (direct calls): every rank's base of the window that
 * holds its buffer b (input, output), as this rank addresses it; the buffer lies at poff[b] in
 * it on every rank (symmetric registration). */
typedef struct weft_rank_args {
    const char *rec; /* ntbs records of rec_bytes */
    const weft_dsrc *xsrc;
    const weft_drecv *xrecv;
    char *buf[3];     /* input, output, scratch */
    weft_dprog *prog; /* this algorithm's progress, kmax per tb */
    weft_dstate *state;
    char *const *peer_win; /* device array [nranks]: every window, as this rank addresses it */
    weft_errrec *err;
    char *const *pbase[2];
    int64_t poff[2];
    weft_trace_dev trace; /* per-step records of member 0; rec NULL: not traced */
    int32_t rec_bytes, rank;
    int32_t tb0; /* the first record this launch runs (a collapsed rank: its runner) */
    int32_t pad_;
} weft_rank_args;

/* A launch: one rank (nsub = 1), or several ranks on one device (loopback), all in the kernel
 * parameters; rank s's CTAs are cta_base[s] .. cta_base[s + 1] - 1, tb t's member g at
 * cta_base[s] + t * K + g. */
typedef struct weft_kargs {
    weft_rargs c;
    int32_t nsub;
    int32_t cta_base[WEFT_RT_MAX_SUB + 1];
    weft_rank_args r[WEFT_RT_MAX_SUB];
} weft_kargs;

/* ---- kernel instantiations -------------------------------------------------------------- */
/* 35 instantiations (each in four variants, weft_rt_kvariant: kernels_interp.cuh): one
 * byte-moving kernel for collectives that do not reduce; sum and product per width and float type
 * (signed and unsigned integers share bits); max and min per type. weft_rt_kernel_index maps a
 * call to its slot (avg runs as sum, then a scaling pass). */
#define WEFT_RT_NKERNELS 35
/* Written without a static table so that the kernels' shards can ask it at compile time which
 * calls a slot serves (WEFT_KERNELS, kernels_interp.cuh). */
#ifdef __cplusplus
#define WEFT_RT_CONSTEXPR constexpr
#else
#define WEFT_RT_CONSTEXPR
#endif
static inline WEFT_RT_CONSTEXPR int weft_rt_sum_slot(weft_dtype t) {
    /* signed and unsigned integers share bits: int8/uint8 0, int32/uint32 1, int64/uint64 2,
     * then half, float, double, bfloat16 */
    return (int)t < 6 ? (int)t / 2 : (int)t - 3;
}
static inline WEFT_RT_CONSTEXPR int weft_rt_kernel_index(weft_dtype t, weft_redop op, int reduces) {
    if ((unsigned)t >= WEFT_DTYPE_COUNT) return -1;
    if (!reduces) return 0;
    switch (op) {
    case WEFT_OP_SUM:
    case WEFT_OP_AVG: return 1 + weft_rt_sum_slot(t);
    case WEFT_OP_PROD: return 8 + weft_rt_sum_slot(t);
    case WEFT_OP_MAX: return 15 + (int)t;
    case WEFT_OP_MIN: return 25 + (int)t;
    case WEFT_OP_COUNT: break;
    }
    return -1;
}

/* ---- plans (plan.c) and the window layout (layout.c)
 * --------------------------------------------------------------------- */
/* A connection key: sender-to-receiver rank distance d = (recv - send) mod N, channel and
 * protocol. Every rank's window holds, per key and member, the FIFO of its incoming connection
 * and the credit counter of its outgoing one, so the layout is the same on all ranks. Each
 * algorithm has its own area of direct-transfer words (ready and done, per tb and member). */
typedef struct weft_rt_key {
    int32_t d, chan, proto;
} weft_rt_key;

/* Direct-transfer words: one 64-byte line each, so that a poller shares its line with few. */
#define WEFT_RT_DLINE 64
/* a mod n in [0, n): the distance d of a connection key from its ranks (layout.c, plan.c). */
static inline int32_t weft_rt_mod(int32_t a, int32_t n) {
    int32_t m = a % n;
    return m < 0 ? m + n : m;
}

/* The window layout (layout.c). */
typedef struct weft_layout {
    int32_t nranks, nkeys;
    int32_t nalgos;    /* algorithms (arrival words in the control area) */
    weft_rt_key *keys; /* sorted */
    int32_t *members;  /* per key: the largest group that uses it */
    size_t *tail_off, *head_off, *slot_off, *pos_off;
    size_t *dflag_off;  /* per algorithm: its direct-transfer words (0: none) */
    int32_t *dflag_tbs; /* per algorithm: tbs x kmax lines of ready, then as many of done */
    size_t pos_words;   /* local message counters per rank */
    size_t hop_off;     /* the one-hop area (weft_hop_area), 0: no algorithm has a one-hop plan */
    size_t bytes;
} weft_layout;

/* One rank's share of one algorithm in one call mode, ready to upload: ntbs records, one per
 * tb of the schedule, and where the rank collapses, one more (index crun) that runs every
 * step of the rank on one CTA group, in an order a simulation of every rank shows cannot
 * deadlock, with multi-peer sends and folds; the tb records then only hold its connections.
 * Both forms move the same messages in the same order on every connection, so ranks may
 * differ in which one they run. */
typedef struct weft_rank_plan {
    int32_t ntbs, nsteps, nxsrc, nxrecv;
    int32_t nrec;   /* records: ntbs, or ntbs + 1 with a runner */
    int32_t crun;   /* the runner's record, or -1 */
    int32_t *rconn; /* the runner's connections: tb << 1 | send (tbs[crun].nconn of them) */
    weft_dtb *tbs;
    weft_dstep *steps;
    weft_dsrc *xsrc;
    weft_drecv *xrecv;
    uint8_t uses_buf[3]; /* the rank touches input / output / scratch */
    int32_t s_chunks;
} weft_rank_plan;

/* An algorithm in one call mode: the schedule run (a copy without the dependencies that only
 * guard in-place aliasing when the mode is out of place, or without copies onto themselves and
 * the waits for them in place, checked by the verifier), whether its
 * transfers may run direct, and the per-rank tables. */
typedef struct weft_mode_plan {
    weft_algo *own;         /* the copy (owned), or NULL when the schedule is the algorithm's */
    const weft_algo *sched; /* what runs; NULL: the algorithm does not declare this mode */
    int32_t direct;         /* verified safe for direct (zero-copy) transfers in this mode */
    int32_t dropped;        /* dependencies dropped */
    int32_t skipped;        /* in place: copies onto themselves made nops (trim_in_place) */
    int32_t fused;          /* receive chains run as fused receives (weft_plan_build) */
    int32_t collapsed;      /* every rank has a runner (weft_plan_build) */
    /* The longest chain of waits between thread blocks of one rank as written (fused) is
     * this much longer than collapsed (weft_plan_build): where it is <= 0 the thread blocks
     * run in parallel as well as the runner would serially, and calls run them as written. */
    int32_t collapse_gain;
    int32_t maxsteps;          /* most steps of a tb */
    weft_rank_plan *ranks;     /* nranks (weft_plan_build) */
    struct weft_hop_plan *hop; /* the one-hop form (hop.c), or NULL */
    char hop_why[160];         /* why there is none */
} weft_mode_plan;

typedef struct weft_algo_plan {
    const weft_algo *algo;
    int32_t proto; /* weft_rt_proto */
    int32_t k;     /* chunks per segment */
    int32_t maxcnt;
    int32_t nranks;
    int32_t maxtbs;         /* most tbs of a rank */
    int32_t kmax;           /* largest group (CTAs per tb) */
    weft_mode_plan mode[2]; /* [0] out of place, [1] in place */
} weft_algo_plan;

/* Checks that the interpreter can run algo on nranks ranks with at most max_ctas CTAs per rank
 * (reason in why, for the log), then prepares both call modes (dependency trimming and the
 * direct-transfer proof, by the verifier) and the group size. Layout-independent. */
weft_result weft_plan_prepare(const weft_algo *a, int32_t nranks, int32_t max_ctas,
                              weft_algo_plan *out, char *why, size_t whylen);
/* Builds the per-rank tables of a prepared plan with connection indices from layout (which
 * must contain every key the algorithm uses: see weft_layout_add), fusing receive chains where
 * a simulation of the fused plan (every rank, FIFOs of fifo_slots messages) shows that it
 * cannot deadlock. */
weft_result weft_plan_build(weft_algo_plan *p, const weft_layout *layout, int32_t fifo_slots);
void weft_plan_free(weft_algo_plan *p);
/* The protocol the interpreter runs an algorithm with. */
int32_t weft_plan_proto(const weft_algo *a);
/* A prepared plan of an LL128 algorithm runs as LL where ll128 is 0 (its lines are not known to
 * cross whole: weft_rt_cfg.ll128); before weft_layout_add, which keys connections by protocol.
 * Returns whether it changed the plan. */
int weft_plan_gate_proto(weft_algo_plan *p, int ll128);
/* The protocol a plan of protocol proto runs as where LL128 may not run (itself but LL128). */
int32_t weft_plan_proto_gated(int32_t proto);
/* Whether the interpreter can run a (independent of layout and device); reason in why. */
int weft_plan_eligible(const weft_algo *a, int32_t nranks, char *why, size_t whylen);
/* The plan of one call mode, or NULL when the algorithm does not declare it (its ranks are
 * there once weft_plan_build has run). */
static inline const weft_mode_plan *weft_plan_mode(const weft_algo_plan *p, int inplace) {
    const weft_mode_plan *m = &p->mode[inplace ? 1 : 0];
    return m->sched ? m : NULL;
}

/* Collects the keys of prepared plans (with their group sizes), then fixes offsets. */
weft_result weft_layout_init(weft_layout *l, int32_t nranks, int32_t nalgos);
weft_result weft_layout_add(weft_layout *l, int32_t ai, const weft_algo_plan *p);
weft_result weft_layout_finish(weft_layout *l, const weft_rt_cfg *cfg);
void weft_layout_free(weft_layout *l);
/* Key index or -1. */
int32_t weft_layout_find(const weft_layout *l, int32_t d, int32_t chan, int32_t proto);

/* Geometry of one call (call_geom.c): chunk size, slice size, iterations and group size, in kernel
 * elements. The same on every rank (it depends only on the call and the plan). */
typedef struct weft_call_geom {
    int32_t kelem; /* bytes of a kernel element: the dtype's, or 1 when nothing reduces */
    int64_t count; /* per segment, kernel elements */
    int64_t C;     /* chunk slot, kernel elements */
    int64_t E;     /* slice per iteration (slot stride), kernel elements */
    int32_t niter;
    int32_t K;      /* CTAs per tb */
    int32_t niter0; /* iterations member 0 runs */
    int32_t direct; /* direct transfers where the plan allows them */
} weft_call_geom;

/* A kernel slot's variants: the general interpreter without tracing code, the one that records
 * a trace, the latency kernel (LL calls that are neither direct nor traced: the same
 * interpreter compiled without the other paths, kernels_interp.cuh), and the LL128 kernel
 * (LL128 calls that are not traced; the general kernel has no LL128 code, so that its registers
 * and code stay as they were; the traced one has all of them). */
typedef enum weft_rt_kvariant {
    WEFT_RT_KV_PLAIN,
    WEFT_RT_KV_TRACED,
    WEFT_RT_KV_LL,
    WEFT_RT_KV_LL128,
    WEFT_RT_KV_HOP, /* the one-hop kernel (hop.h): weft_hop_kargs, not weft_kargs */
    WEFT_RT_KVARIANTS
} weft_rt_kvariant;
/* The variant that runs a launch of call arguments c (traced: some rank records a trace). */
weft_rt_kvariant weft_call_variant(const weft_rt_cfg *cfg, const weft_rargs *c, int traced);
/* Threads per CTA of that launch: the latency kernel takes as many as a slice has LL lines
 * (64 to cfg->nthreads), since every warp runs the whole interpreter and meets at its barriers. */
int32_t weft_call_threads(const weft_rt_cfg *cfg, const weft_rargs *c, int32_t kelem,
                          weft_rt_kvariant v);

/* direct: the call's buffers are registered on every rank (window offsets agree). */
weft_result weft_call_geometry(const weft_algo_plan *p, const weft_rt_cfg *cfg, int inplace,
                               size_t count, int32_t dtype_bytes, int reduces, int direct,
                               weft_call_geom *g);
/* Scratch bytes rank needs for a call of count elements. */
size_t weft_call_scratch(const weft_algo_plan *p, int32_t rank, size_t count, int32_t dtype_bytes);

/* Connection end descriptors of one rank (per key), given every rank's window base (as this
 * rank sees it: LSA pointers, or plain pointers in loopback) and the rank's local counters
 * (layout->pos_words uint64). */
/* The counters of one rank at attach as cfg->start_calls and start_msgs say (all 0 when both
 * are): its local message counters pos[l->pos_words], and through put(ctx, offset, value) the
 * words of its own window (FIFO heads and tails, arrival and direct-transfer words); progress
 * words start at weft_layout_start_progress. */
void weft_layout_start(const weft_layout *l, const weft_rt_cfg *cfg, uint64_t *pos,
                       void (*put)(void *ctx, size_t off, uint64_t v), void *ctx);
static inline uint64_t weft_layout_start_progress(const weft_rt_cfg *cfg) {
    return cfg->start_calls << 32;
}
void weft_layout_conns(const weft_layout *l, const weft_rt_cfg *cfg, int32_t rank, char *const *win,
                       uint64_t *pos, weft_dconn *sconn, weft_dconn *rconn);

/* Whether a call of geometry g runs the collapsed form of mode plan m (traced calls never do:
 * a trace records thread blocks as written). */
int weft_plan_use_collapsed(const weft_algo_plan *p, const weft_mode_plan *m,
                            const weft_call_geom *g, const weft_rt_cfg *cfg, int traced);
/* Records and CTAs of rank plan rp for a call: first record and thread blocks launched. */
static inline int32_t weft_plan_tb0(const weft_rank_plan *rp, int collapsed) {
    return collapsed && rp->crun >= 0 ? rp->crun : 0;
}
static inline int32_t weft_plan_ntbs_run(const weft_rank_plan *rp, int collapsed) {
    return collapsed && rp->crun >= 0 ? 1 : rp->ntbs;
}

/* Bytes of one tb record of rp (all records of an algorithm, mode and rank share it; a
 * runner's record follows them, as long as it needs). */
int32_t weft_plan_rec_bytes(const weft_rank_plan *rp);
/* Bytes of rp's whole record table. */
size_t weft_plan_table_bytes(const weft_rank_plan *rp);
/* Rank rank's records of plan p (algorithm ai of layout l) in mode m into out
 * (weft_plan_table_bytes), with the rank's connection ends and the algorithm's direct-transfer
 * words. */
void weft_plan_records(const weft_algo_plan *p, int32_t ai, const weft_mode_plan *m,
                       const weft_layout *l, int32_t rank, char *const *win,
                       const weft_dconn *sconn, const weft_dconn *rconn, char *out);

/* The call arguments common to every rank (c) of a launch of plan p, algorithm ai. */
void weft_plan_call_args(const weft_algo_plan *p, int32_t ai, const weft_call_geom *g,
                         const weft_rt_cfg *cfg, weft_rargs *c);

/* ---- the one-hop path (hop.c, hop.h) ------------------------------------------------------
 * A schedule in which every message is a chunk of its sender's own buffers as they were when
 * the call began (no forwarding, no partial sums on the wire) computes, on every rank, each
 * chunk it writes as a fold of such chunks in a fixed order. hop.c finds those folds by running
 * the schedule symbolically over every rank (the order of its steps, dependencies and messages),
 * and where they exist, a call may run them directly: every rank pushes each chunk a peer
 * needs into that peer's window once, as LL lines whose flag is the call's number on that pair
 * of ranks (never reset: two areas by its parity), then folds what it needs in the schedule's
 * order. The results are the schedule's, bit for bit. No FIFO, no credit, no progress word: a
 * rank reaches call n + 2 of a pair only after its peer's pushes of call n + 1, which it made
 * after it had read everything of call n, so two areas suffice as long as every pair that
 * exchanges exchanges both ways (hop.c requires it). CTA b of a launch takes the bytes
 * [b S, (b + 1) S) of every chunk, sends and folds alike, and has its own counters and areas,
 * so in place is safe with one CTA barrier between pushing and folding. */
#define WEFT_RT_HOP_MAX_CTAS  16
#define WEFT_RT_HOP_MAX_RANKS 32
/* bytes of LL lines per CTA, parity and sender: 8 KB of data */
#define WEFT_RT_HOP_REGION ((size_t)16 << 10)
/* the one-hop kernel's table of a rank, in shared memory */
#define WEFT_RT_HOP_SMEM 6144
/* LL flags cycle through 1 .. 2^32 - 1 (0 never: a zeroed line is empty) */
#define WEFT_RT_HOP_CYCLE 0xffffffffull

/* A push: chunk x of memory mem (WEFT_MEM_SEND / RECV) to peer, into its slot `slot` of the
 * area it keeps for this rank. */
typedef struct weft_hop_send {
    int16_t peer;
    uint8_t mem, pad_;
    int32_t x, slot, pad2_;
} weft_hop_send;
/* A fold's operand: chunk x of the rank's own memory mem (peer < 0), or slot x of what peer
 * pushed; ord: combined as op(value, it) (0) or op(it, value) (1), as the schedule's step did. */
typedef struct weft_hop_op {
    int16_t peer;
    uint8_t mem, ord;
    int32_t x;
} weft_hop_op;
/* Chunk x of memory mem := op over nops operands from op0 on, in their order (one operand: a
 * copy). otb/ostep: the schedule's step that wrote it last (the watchdog's report). */
typedef struct weft_hop_fold {
    uint8_t mem, nops;
    uint16_t op0;
    int32_t x, otb, ostep;
} weft_hop_fold;
/* A rank's table as uploaded (header, then nsend sends, nfold folds, nop operands). */
typedef struct weft_hop_hdr {
    int32_t nsend, nfold, nop, bytes;
    uint32_t peers; /* bit q: this rank exchanges with rank q */
    int32_t pad_[3];
} weft_hop_hdr;
typedef struct weft_hop_plan {
    int32_t nranks;
    int32_t maxslots; /* most chunks one rank pushes to one peer */
    int32_t maxwork;  /* most sends or folds of a rank */
    int32_t pad_;
    char **tab; /* per rank: its table (weft_hop_hdr and what follows, hdr.bytes) */
} weft_hop_plan;

/* The one-hop form of the schedule a mode plan runs (the mode's own: in place its aliasing), or
 * NULL with the reason in why. k: chunks per segment. */
weft_hop_plan *weft_hop_build(const weft_algo *sched, int inplace, int32_t nranks, int32_t k,
                              char *why, size_t whylen);
void weft_hop_free(weft_hop_plan *h);

/* The one-hop area of a window (layout.hop_off): per CTA b a 64-byte line with the calls it ran
 * (its peers' watchdog reads it), per CTA and peer the calls of that pair, then per CTA, parity
 * and sender an area of WEFT_RT_HOP_REGION. */
WEFT_HD size_t weft_hop_ctr_off(void) {
    return (size_t)WEFT_RT_HOP_MAX_CTAS * 64;
}
WEFT_HD size_t weft_hop_reg_off(int32_t nranks) {
    size_t o = weft_hop_ctr_off() + (size_t)WEFT_RT_HOP_MAX_CTAS * (size_t)nranks * 8;
    return (o + 4095) / 4096 * 4096;
}
WEFT_HD size_t weft_hop_area_bytes(int32_t nranks) {
    return weft_hop_reg_off(nranks) +
           (size_t)WEFT_RT_HOP_MAX_CTAS * 2 * (size_t)nranks * WEFT_RT_HOP_REGION;
}

/* Launch arguments of the one-hop kernel: per rank, then common. */
typedef struct weft_hop_rargs {
    const char *tab;       /* the rank's table (device) */
    char *mem[2];          /* NCCL's send and receive buffers */
    char *const *peer_win; /* every window, as this rank addresses it */
    weft_dstate *state;
    weft_errrec *err;
    int32_t rank, tab_bytes;
} weft_hop_rargs;
typedef struct weft_hop_kargs {
    int64_t count, C; /* kernel elements */
    int64_t timeout_ns;
    uint64_t hop_off;
    int32_t k, kelem, nranks;
    int32_t nb;   /* CTAs per rank */
    int32_t S;    /* bytes of each chunk a CTA takes (a multiple of 8: whole LL lines) */
    int32_t tag;  /* the host's algorithm index (watchdog record) */
    int32_t nsub; /* ranks of this launch (loopback: several on one device) */
    int32_t pad_;
    weft_hop_rargs r[WEFT_RT_MAX_SUB];
} weft_hop_kargs;

/* Whether a call of count elements (dtype_bytes each) in mode plan m runs on the one-hop kernel
 * under cfg, and if so (1) its CTAs per rank, slice and threads. Depends only on the call and
 * the plan, so every rank decides alike. */
int weft_hop_call(const weft_mode_plan *m, const weft_algo_plan *p, const weft_rt_cfg *cfg,
                  size_t count, int32_t dtype_bytes, int reduces, int traced, int32_t *nb,
                  int32_t *S, int32_t *nthreads);
/* The common part of a one-hop launch. */
void weft_hop_args(const weft_algo_plan *p, int32_t ai, const weft_layout *l,
                   const weft_rt_cfg *cfg, size_t count, int32_t dtype_bytes, int reduces,
                   int32_t nb, int32_t S, weft_hop_kargs *ka);
/* A rank's counters at attach (cfg->start_calls for tests near the flags' wrap) through
 * put(ctx, window offset, value). */
void weft_hop_start(const weft_layout *l, const weft_rt_cfg *cfg,
                    void (*put)(void *ctx, size_t off, uint64_t v), void *ctx);

/* Formats what a watchdog record says (errrec.c), naming rank/tb/step and the step's XML line. */
void weft_errrec_format(const weft_errrec *e, const weft_algo *a, char *buf, size_t len);

#ifdef __cplusplus
}
#endif
#endif
