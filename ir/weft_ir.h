/* weft_ir.h — the MSCCL XML IR: types, tables, reader, writer, validation, verifier, CPU executor.
 */
#ifndef WEFT_IR_H
#define WEFT_IR_H

#include "weft_common.h"
#include "weft_semantics.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- enumerations (one X-macro table each; see weft_semantics.h for collectives, step types,
 *      data types, reduction ops and buffers, which device code shares) -------------------- */

/* The wire protocols, one row each, read by everything that knows one: the XML name; the
 * protocol the runtime runs it as (itself: each has its device code; the runtime runs LL128 as
 * LL where its lines are not known to cross whole, weft_plan_gate_proto); of every 16 bytes of a
 * FIFO slot, how many carry data (LL: lines of 8 data and 8 flag bytes; LL128: lines of 128 bytes,
 * 120 of data and a flag; Simple: all, one flag per message); the runtime's default FIFO (slots per
 * connection member and bytes per slot, WEFT_FIFO overrides) and the chunk bytes up to which a call
 * runs a rank's thread blocks collapsed by default (WEFT_COLLAPSE overrides; measured:
 * docs/runtime.md); the data of one chunk below which a call's slice does not shrink to spread over
 * more of a thread block's CTAs (Simple: a slice pays a handshake; LL: 256 threads' lines, one line
 * a thread, because on 4 x H200 a second and third line a thread cost more than another CTA:
 * allreduce one-shot 32 KB 18.6 us in 16 KB slices, 8.1 us in 2 KB ones; docs/runtime-perf.md). The
 * runtime (runtime/plan.c, cfg.c, call_geom.c), the trace model (tools/trace/sim.c), weft
 * estimate and the trace summary read the row; a protocol is its row plus its device code
 * (runtime/interp.h).
 * X(id, xml name, runs as, data bytes per 16, slots, slot bytes, collapse bytes, least slice) */
#define WEFT_PROTOS(X)                                                                             \
    X(SIMPLE, "Simple", SIMPLE, 16, 8, 128 << 10, 0, 16 << 10)                                     \
    X(LL, "LL", LL, 8, 8, 32 << 10, 256 << 10, 2 << 10)                                            \
    X(LL128, "LL128", LL128, 15, 8, 64 << 10, 0, 3840)

typedef enum weft_proto {
#define WEFT_X_(id, n, as, d, ns, sb, cb, ms) WEFT_PROTO_##id,
    WEFT_PROTOS(WEFT_X_)
#undef WEFT_X_
        WEFT_PROTO_COUNT
} weft_proto;

/* A protocol's row: the table's columns after its name. */
typedef struct weft_proto_row {
    weft_proto runs_as;
    int32_t data16, slots, slot_bytes;
    int64_t collapse_bytes, min_slice;
} weft_proto_row;
static inline weft_proto_row weft_proto_row_of(weft_proto p) {
    weft_proto_row r = {WEFT_PROTO_SIMPLE, 16, 0, 0, 0, 0}; /* not a protocol */
    switch (p) {
#define WEFT_X_(id, n, as, d, ns, sb, cb, ms)                                                      \
    case WEFT_PROTO_##id: {                                                                        \
        weft_proto_row x = {WEFT_PROTO_##as, d, ns, sb, cb, ms};                                   \
        r = x;                                                                                     \
        break;                                                                                     \
    }
        WEFT_PROTOS(WEFT_X_)
#undef WEFT_X_
    case WEFT_PROTO_COUNT: break;
    }
    return r;
}
/* The protocol the runtime runs p as (itself where it has its own path). */
static inline weft_proto weft_proto_runs_as(weft_proto p) {
    return weft_proto_row_of(p).runs_as;
}
/* Data bytes of a FIFO slot of slot_bytes bytes in protocol p (as the runtime runs it). */
static inline int64_t weft_proto_slot_data(weft_proto p, int64_t slot_bytes) {
    return slot_bytes / 16 * weft_proto_row_of(weft_proto_runs_as(p)).data16;
}
/* LL128's line: 128 bytes, 120 of data and an 8-byte flag in its last 16-byte unit. */
#define WEFT_LL128_LINE      128
#define WEFT_LL128_LINE_DATA 120
/* The data bytes each of maxcnt chunks of a message may take in a slot of slot_bytes bytes in
 * protocol p: LL128 gives each chunk whole lines (the interpreter's lines never straddle two
 * chunks), the others an equal share of the slot's data. */
static inline int64_t weft_proto_chunk_data(weft_proto p, int64_t slot_bytes, int64_t maxcnt) {
    if (maxcnt < 1) maxcnt = 1;
    if (weft_proto_runs_as(p) == WEFT_PROTO_LL128)
        return slot_bytes / WEFT_LL128_LINE / maxcnt * WEFT_LL128_LINE_DATA;
    return weft_proto_slot_data(p, slot_bytes) / maxcnt;
}
/* Whether p carries its data in lines with a flag in each (no separate message flag). */
static inline int weft_proto_lines(weft_proto p) {
    return weft_proto_row_of(weft_proto_runs_as(p)).data16 < 16;
}
/* The runtime's defaults for p: FIFO slots, slot bytes, collapse bytes (see the table). */
static inline void weft_proto_defaults(weft_proto p, int32_t *slots, int32_t *slot_bytes,
                                       int64_t *collapse_bytes) {
    weft_proto_row r = weft_proto_row_of(weft_proto_runs_as(p));
    *slots = r.slots, *slot_bytes = r.slot_bytes, *collapse_bytes = r.collapse_bytes;
}
/* The data bytes of one chunk below which a call of protocol p keeps its slice (see the table). */
static inline int64_t weft_proto_min_slice(weft_proto p) {
    return weft_proto_row_of(weft_proto_runs_as(p)).min_slice;
}
/* The slice of a chunk of c units of ke bytes (ke: 1, 2, 4, 8 or 16) in protocol p: a slot's
 * worth (emax units) or the cap (0: none), smaller when that leaves some of a thread block's kmax
 * CTAs idle, but not below the protocol's least slice; in whole 16-byte packs. The runtime's cut
 * (runtime/call_geom.c) and the trace model's (tools/trace/sim.c) both ask it. */
static inline int64_t weft_proto_slice(weft_proto p, int64_t c, int64_t ke, int64_t emax,
                                       int64_t cap, int64_t kmax) {
    int64_t V = 16 / ke, cv = (c + V - 1) / V * V;
    int64_t E = cv < emax ? cv : emax;
    cap -= cap % V;
    if (cap >= V && E > cap) E = cap;
    int64_t minE = weft_proto_min_slice(p) / ke;
    minE = minE < V ? V : minE - minE % V;
    int64_t per = (c + kmax - 1) / kmax;
    per = (per + V - 1) / V * V;
    if (per < E) E = per > minE ? per : (minE < E ? minE : E);
    return E;
}

/* How a call reaches weft (weft extension, <algo launch="...">): eager or captured into a CUDA
 * graph, on plain buffers or on buffers registered as symmetric windows (where NCCL runs its
 * symmetric kernels). An algorithm serves the launch modes of its mask, every one by default;
 * the library names the modes where it was measured faster than NCCL.
 * X(id, name, graph, registered) */
#define WEFT_LAUNCHES(X)                                                                           \
    X(EAGER, "eager", 0, 0)                                                                        \
    X(GRAPH, "graph", 1, 0)                                                                        \
    X(REGISTERED, "registered", 0, 1)                                                              \
    X(REGISTERED_GRAPH, "registered-graph", 1, 1)

typedef enum weft_launch {
#define WEFT_X_(id, n, g, r) WEFT_LAUNCH_##id,
    WEFT_LAUNCHES(WEFT_X_)
#undef WEFT_X_
        WEFT_LAUNCH_COUNT
} weft_launch;

#define WEFT_LAUNCH_ALL ((1u << WEFT_LAUNCH_COUNT) - 1u)

/* Launch mode l's row as bits: 1 captured in a CUDA graph, 2 on registered buffers. */
static inline int weft_launch_bits(weft_launch l) {
    switch (l) {
#define WEFT_X_(id, n, g, r)                                                                       \
    case WEFT_LAUNCH_##id: return (g) | (r) << 1;
        WEFT_LAUNCHES(WEFT_X_)
#undef WEFT_X_
    case WEFT_LAUNCH_COUNT: break;
    }
    return 0; /* not a launch mode */
}
/* Whether launch mode l is captured in a CUDA graph, on registered buffers (its table row). */
static inline int weft_launch_graph(weft_launch l) {
    return weft_launch_bits(l) & 1;
}
static inline int weft_launch_registered(weft_launch l) {
    return weft_launch_bits(l) >> 1 & 1;
}
/* The launch mode of a call captured (graph) or not, on registered buffers or not. */
static inline weft_launch weft_launch_of(int graph, int registered) {
    for (int l = 0; l < WEFT_LAUNCH_COUNT; l++)
        if (weft_launch_graph((weft_launch)l) == !!graph &&
            weft_launch_registered((weft_launch)l) == !!registered)
            return (weft_launch)l;
    return WEFT_LAUNCH_EAGER;
}
WEFT_API const char *weft_launch_name(weft_launch l);
WEFT_API int weft_launch_from_name(const char *name);
/* "eager graph" for a mask (names in table order, space-separated) into buf. */
WEFT_API const char *weft_launch_mask_str(unsigned mask, char *buf, size_t len);

WEFT_API const char *weft_coll_name(weft_coll c);
WEFT_API const char *weft_proto_name(weft_proto p);
/* Lookups by name; return -1 when unknown. weft_coll_from_name accepts "reduce_scatter". */
WEFT_API int weft_coll_from_name(const char *name);
WEFT_API int weft_proto_from_name(const char *name);
/* Step types by their XML names ("rrc"), buffers by name ("input") and XML code ('i'); "?"
 * and -1 when out of range or unknown. */
WEFT_API const char *weft_step_name(weft_step_type t);
WEFT_API int weft_step_from_name(const char *name);
WEFT_API const char *weft_buf_name(weft_buf b);
WEFT_API char weft_buf_code(weft_buf b);
WEFT_API int weft_buf_from_code(char c);

/* ---- the IR ----------------------------------------------------------------------------- */
/* A step's index inside its tb is its position in tb->steps (the XML `s`). `line` is the
 * XML line the element came from (0 when built in memory), for diagnostics. */
typedef struct weft_step {
    weft_step_type type;
    weft_buf srcbuf, dstbuf;
    int32_t srcoff, dstoff, cnt;
    int32_t depid, deps; /* -1 = none */
    uint8_t hasdep;
    int32_t line;
} weft_step;

/* A step of type t moving cnt chunks from (sb, so) to (db, dof), with no dependency and no line:
 * where the compiler, the phase cut and the tests make one. */
static inline weft_step weft_step_make(weft_step_type t, weft_buf sb, int32_t so, weft_buf db,
                                       int32_t dof, int32_t cnt) {
    weft_step s = {t, sb, db, so, dof, cnt, -1, -1, 0, 0};
    return s;
}

/* What an IR step accesses (weft_step_access): its source read, then its destination. */
static inline int weft_step_accesses(const weft_step *s, weft_access out[2]) {
    return weft_step_access(s->type, s->srcbuf, s->srcoff, s->dstbuf, s->dstoff, s->cnt, out);
}

typedef struct weft_tb {
    int32_t id;         /* == its index in gpu->tbs */
    int32_t send, recv; /* peer rank or -1 */
    int32_t chan;
    int32_t nsteps, cap;
    weft_step *steps;
    int32_t line;
} weft_tb;

typedef struct weft_gpu {
    int32_t id; /* == its index in algo->gpus */
    int32_t i_chunks, o_chunks, s_chunks;
    int32_t ntbs, cap;
    weft_tb *tbs;
    int32_t line;
} weft_gpu;

typedef struct weft_algo {
    char *name;
    char *file; /* path it was read from, for diagnostics; may be NULL */
    weft_proto proto;
    weft_coll coll;
    int32_t nchannels, nchunksperloop, ngpus;
    uint8_t inplace, outofplace;
    int64_t min_bytes, max_bytes; /* as in the file: max_bytes 0 = unbounded */
    /* weft extension (attribute `root`, written only for rooted collectives): the root rank
     * of broadcast, reduce, gather and scatter. MSCCL runtimes ignore unknown attributes. */
    int32_t root;
    /* weft extension (attribute `launch`, written only when not every mode): the launch modes
     * (bits 1 << weft_launch) it serves; WEFT_LAUNCH_ALL by default. */
    uint8_t launch;
    /* weft extension (attribute `graphMaxBytes`, written only when set): calls captured in a
     * CUDA graph are served only up to it (eager calls up to max_bytes), where NCCL's captured
     * kernels overtake the algorithm at sizes its eager calls still win; 0 = max_bytes. */
    int64_t graph_max_bytes;
    uint8_t legacy; /* the file lacked outofplace/minBytes/maxBytes; defaults were applied */
    int32_t line;
    weft_gpu *gpus; /* ngpus entries, indexed by rank */
} weft_algo;

/* ---- building and freeing (ir.c) -------------------------------------------------------- */
/* A new algo with ngpus empty gpus (ids set), proto Simple, inplace 0, outofplace 1, no size
 * bounds. Owned by the caller; free with weft_algo_free. NULL on allocation failure. */
WEFT_API weft_algo *weft_algo_new(const char *name, weft_coll coll, int32_t ngpus,
                                  int32_t nchunksperloop);
WEFT_API void weft_algo_free(weft_algo *a);
/* Deep copy, owned by the caller. */
WEFT_API weft_algo *weft_algo_clone(const weft_algo *a);
/* Appends a tb with the next id; returns it (owned by gpu), NULL on allocation failure. */
WEFT_API weft_tb *weft_gpu_add_tb(weft_gpu *g, int32_t send, int32_t recv, int32_t chan);
/* Appends a copy of *s; returns the new step's index, -1 on allocation failure. */
WEFT_API int32_t weft_tb_add_step(weft_tb *tb, const weft_step *s);
/* Structural equality (ignores name, file and lines). When different and why != NULL, writes
 * the first difference there. */
WEFT_API int weft_algo_equal(const weft_algo *a, const weft_algo *b, char *why, size_t whylen);
/* Multiplier from the per-segment count to the large buffer: ngpus or 1. */
WEFT_API int32_t weft_algo_size_mult(const weft_algo *a);
/* Chunks per segment k = nchunksperloop / size_mult. */
WEFT_API int32_t weft_algo_chunks_per_seg(const weft_algo *a);
/* Total steps over all ranks and tbs. */
WEFT_API int64_t weft_algo_nsteps(const weft_algo *a);
/* The most chunks one message carries: the largest cnt of a step that sends or receives (at
 * least 1). A FIFO slot holds a message, so this, not a local step's cnt, bounds a slice. */
WEFT_API int32_t weft_algo_msg_chunks(const weft_algo *a);

/* ---- XML (xml_read.c, xml_write.c) ------------------------------------------------------ */
/* Hard limits: input beyond them is rejected with a clear message (the MSCCL runtimes' own,
 * much lower limits are only warnings, see weft_ir_validate). Downstream code (verifier,
 * executors) may rely on a validated algo staying within them. */
#define WEFT_IR_MAX_FILE_BYTES (256 << 20) /* XML input size */
#define WEFT_IR_MAX_RANKS      8192        /* ngpus */
#define WEFT_IR_MAX_CHANNELS   1024        /* nchannels */
#define WEFT_IR_MAX_CHUNKS     (1 << 20)   /* nchunksperloop, i/o/s_chunks */
/* What one schedule may ask of weft as a whole: these bound the memory and time of reading,
 * verifying (docs/verify.md, "Limits") and planning it; the compiler produces no more. */
#define WEFT_IR_MAX_STEPS     (1 << 19) /* steps over all ranks and tbs, nops included */
#define WEFT_IR_MAX_MOVES     (1 << 21) /* the sum of cnt over all steps */
#define WEFT_IR_MAX_LOCATIONS (1 << 22) /* ngpus x chunks of a rank (input, output, scratch) */
/* Reads an MSCCL XML algorithm. Errors are reported as `file:line: message` naming the element
 * and attribute; legacy files get defaults with an INFO note. On success *out is owned by the
 * caller. The structural validation below runs as part of reading. */
WEFT_API weft_result weft_ir_read_file(const char *path, weft_algo **out, weft_diag *d);
/* As above from memory; `name` is used in diagnostics. */
WEFT_API weft_result weft_ir_read_memory(const char *data, size_t len, const char *name,
                                         weft_algo **out, weft_diag *d);
/* Writes exactly the shape the MSCCL executor and RCCL parse: one element per line, all ten
 * step attributes, double quotes, no XML declaration, no tabs. Deterministic. */
WEFT_API weft_result weft_ir_write(const weft_algo *a, FILE *out);
/* As weft_ir_write into a malloc'd string owned by the caller. */
WEFT_API weft_result weft_ir_write_string(const weft_algo *a, char **out);

/* ---- structural validation (validate.c) ------------------------------------------------- */
/* One send and one recv peer per tb, one tb per (peer, channel, direction), dependencies point
 * at existing steps marked hasdep, offsets within the declared chunk counts, nchannels and
 * nchunksperloop consistent, the hard limits above (steps, moves, locations) kept. Limits of the
 * MSCCL runtimes become warnings. Returns
 * WEFT_ERR_INPUT when any error was reported. */
WEFT_API weft_result weft_ir_validate(const weft_algo *a, weft_diag *d);
/* weft_ir_validate without diagnostics, answered from what this process already established
 * for an algorithm with the same content (proven.c): the runtime asks about the same algorithms
 * for every communicator and call mode. */
WEFT_API int weft_ir_is_valid(const weft_algo *a);

/* ---- listing (show.c) ------------------------------------------------------------------- */
/* Readable per-rank, per-tb listing and a summary (ranks, tbs, channels, steps by type, chunks
 * moved per peer pair). */
WEFT_API weft_result weft_ir_show(const weft_algo *a, FILE *out, int summary_only);

/* ---- semantic verification (verify.c) --------------------------------------------------- */
/* Proves, for every rank and each call mode the algo declares (in-place, out-of-place), that
 * the schedule computes its collective (exact contribution tracking: every output chunk holds
 * each required input chunk exactly once), cannot deadlock in any interleaving (unbounded
 * connection buffers, and buffers of fifo_slots messages), has no data race between tbs of a
 * rank, and stays inside its buffers. docs/verify.md states what is proven and how. */

/* Classes of findings. X(id, name) */
#define WEFT_VERIFY_CLASSES(X)                                                                     \
    X(STRUCTURE, "structure")                                                                      \
    X(BOUNDS, "bounds")                                                                            \
    X(MATCH, "match")                                                                              \
    X(DEADLOCK, "deadlock")                                                                        \
    X(FIFO_DEADLOCK, "fifo-deadlock")                                                              \
    X(RACE, "race")                                                                                \
    X(POSTCONDITION, "postcondition")

typedef enum weft_verify_class {
#define WEFT_X_(id, n) WEFT_VERIFY_##id,
    WEFT_VERIFY_CLASSES(WEFT_X_)
#undef WEFT_X_
        WEFT_VERIFY_CLASS_COUNT
} weft_verify_class;

WEFT_API const char *weft_verify_class_name(weft_verify_class c);

/* The connection buffer the verifier assumes by default, and the compiler's scheduling
 * simulation with it (compiler/lower.c), so that what the compiler emits passes weft verify: the
 * ring schedules msccl-tools generates send a message and then receive-and-forward, which needs
 * 2 (1 is stricter; the summary says what a schedule needs). */
#define WEFT_VERIFY_FIFO_SLOTS 2

typedef struct weft_verify_opts {
    /* Messages one connection buffers before its sender waits, for the bounded-buffer
     * deadlock check; 0 skips that check. Default WEFT_VERIFY_FIFO_SLOTS. The runtime must
     * buffer at least this many per connection. */
    int32_t fifo_slots;
    /* Findings reported per class and mode before the rest are only counted (default 8). */
    int32_t max_reports;
    /* 1: also prove the schedule safe for zero-copy transfers, which read the sender's source
     * and write the receiver's destination (plain receives: r, rcs) in place at any time
     * between the start of the send and the end of the receive. Default 0: a send copies its
     * data into the connection's buffer (FIFO slots) when it runs. */
    uint8_t direct_transfers;
} weft_verify_opts;

WEFT_API void weft_verify_opts_init(weft_verify_opts *o);

typedef struct weft_verify_summary {
    int32_t nranks, nchannels;
    int64_t ntbs, nsteps;
    int64_t critical_path; /* steps on the longest happens-before chain (0: not computed) */
    int64_t chunks_moved;  /* over all messages */
    /* The fewest messages per connection buffer with which the schedule cannot deadlock
     * (0: not computed, e.g. it deadlocks even unbounded). */
    int32_t min_fifo;
    /* The rank pairs that exchange chunks, sorted by (src, dst), each once: npairs entries
     * (one per pair that sends, not nranks^2: 8192 ranks stay small); owned by the summary
     * (weft_verify_summary_free), NULL when not computed. */
    struct weft_verify_pair {
        int32_t src, dst;
        int64_t chunks;
    } * pairs;
    int64_t npairs;
    int64_t errors[WEFT_VERIFY_CLASS_COUNT]; /* findings per class, reported or not */
    uint8_t modes;                           /* bit 0: in-place checked, bit 1: out-of-place */
} weft_verify_summary;

/* Verifies a; findings go to d as `file:line: error: rank R tb T step S: ...`. opts and
 * summary may be NULL. Returns WEFT_OK when everything is proven, WEFT_ERR_INPUT when any
 * finding was reported, WEFT_ERR_UNSUPPORTED (with an error in d) for collectives weft does
 * not verify (alltoallv, send, recv, custom), WEFT_ERR_NOMEM. When summary is given it is
 * filled in every case; free it with weft_verify_summary_free. */
WEFT_API weft_result weft_ir_verify(const weft_algo *a, const weft_verify_opts *opts, weft_diag *d,
                                    weft_verify_summary *summary);
WEFT_API void weft_verify_summary_free(weft_verify_summary *s);
/* Whether weft_ir_verify passes with opts (NULL: the defaults), without diagnostics; remembered
 * per process for the algorithm's content and the options that decide it (proven.c). */
WEFT_API int weft_ir_verifies(const weft_algo *a, const weft_verify_opts *opts);
/* Prints the summary: ranks, tbs, steps, critical path, chunks moved per peer pair (listed
 * pair by pair when there are at most max_pairs pairs, else as totals). */
WEFT_API void weft_verify_summary_print(const weft_verify_summary *s, FILE *out, int max_pairs);

/* ---- the schedule in time (timeline.c): what pictures of it draw ----------------------- */
/* Every step at its happens-before depth, as the verifier computes the critical path: 1 + the
 * deepest of the previous step of its tb, its dependency and (a receive) the send whose message
 * it takes. The critical path ends at the deepest step (the first of them, in rank, tb, step
 * order) and is followed back through the predecessor that set each depth. */
typedef struct weft_placed_step {
    int32_t rank, tb, step; /* tb: its id in the rank; step: its index in the tb */
    int32_t depth;          /* 1 .. critical_path */
    int32_t dep;            /* index in steps of its dependency, -1 none */
    int32_t from;           /* a receive: index in steps of the send it takes, -1 none */
    int32_t pred;           /* index in steps of the step that set its depth, -1 none */
    int32_t critical;       /* 1: on the critical path */
} weft_placed_step;

typedef struct weft_timeline {
    int32_t nsteps;
    weft_placed_step *steps; /* every step, by rank, tb, step */
    int64_t critical_path;   /* steps on it: weft_verify_summary.critical_path */
    int64_t nmessages;       /* steps that take a message (from >= 0) */
} weft_timeline;

/* Places a's steps (a must be structurally valid and free of deadlock with unbounded
 * connection buffers; else the reason goes to d and WEFT_ERR_INPUT is returned). On WEFT_OK
 * *out is filled; free it with weft_timeline_free. */
WEFT_API weft_result weft_ir_timeline(const weft_algo *a, weft_timeline *out, weft_diag *d);
WEFT_API void weft_timeline_free(weft_timeline *t);

/* ---- CPU reference executor (exec.c) ---------------------------------------------------- */
/* Runs a schedule on host buffers for every rank with real data, one step at a time under a
 * deterministic scheduler, with the step semantics of weft_semantics.h, the count policy
 * (chunk slots of ceil(count / k) elements; nothing past a user chunk's valid end is read or
 * written) and the element operations of weft_elemops.h; then compares every rank's output
 * with a naive reference collective. Rooted collectives use algo->root. */

WEFT_API const char *weft_dtype_name(weft_dtype t);
/* Also accepts NCCL's spellings (e.g. "float16", "bf16", "fp32", "int"); -1 when unknown. */
WEFT_API int weft_dtype_from_name(const char *name);
WEFT_API const char *weft_redop_name(weft_redop op);
WEFT_API int weft_redop_from_name(const char *name);

typedef struct weft_exec_opts {
    int64_t count;       /* elements per segment: NCCL's count argument (default 1024) */
    weft_dtype dtype;    /* default float */
    weft_redop op;       /* default sum; ignored by collectives that do not reduce */
    uint8_t inplace;     /* 1: in-place call (the algo must declare the mode) */
    uint64_t seed;       /* input data */
    uint64_t sched_seed; /* 0: round robin over the tbs that can run; else a seeded random order */
    int32_t fifo_slots;  /* messages a connection holds before its sender waits; 0 unbounded */
    int32_t max_reports; /* mismatching elements and blocked tbs listed (default 8) */
} weft_exec_opts;

WEFT_API void weft_exec_opts_init(weft_exec_opts *o);

/* The most memory one weft_ir_exec run may hold: every rank's buffers and scratch, the saved
 * inputs, the reference and the messages in flight at their peak (found by a run without
 * data first, so that a schedule which keeps every message in flight is counted as such).
 * A larger run is refused before anything is allocated. */
#define WEFT_EXEC_MAX_BYTES ((int64_t)16 << 30)

typedef struct weft_exec_report {
    int64_t steps_run, steps_total;
    int64_t mismatches; /* elements that differ from the reference, over all ranks */
    uint8_t stalled;    /* no tb could progress before the end */
} weft_exec_report;

/* Executes a; report may be NULL. Returns WEFT_OK when every rank's result equals the
 * reference; WEFT_ERR_INPUT (diagnostics in d) when the schedule is malformed, stalls (every
 * blocked tb is listed with what it waits for) or computes a wrong result (first elements and
 * a count per rank); WEFT_ERR_USAGE for options that do not fit the algo; WEFT_ERR_NOMEM. */
WEFT_API weft_result weft_ir_exec(const weft_algo *a, const weft_exec_opts *o, weft_diag *d,
                                  weft_exec_report *report);

/* ---- phases across nodes (phase.c) ------------------------------------------------------ *
 * A schedule whose ranks sit on several nodes runs as a sequence GPU phase 0, network phase 0,
 * GPU phase 1, ..., GPU phase P-1. A GPU phase is an ordinary schedule of the same collective
 * and chunking whose messages all stay inside a node (the interpreter runs it over NCCL's LSA
 * team); a network phase is a list of transfers between staging areas, one NCCL group of
 * ncclSend/ncclRecv. Every step of the original gets the smallest phase consistent with its
 * tb's program order, its dependency and its message: a receive no earlier than its send, and
 * strictly later when the message crosses nodes. A message whose receive lands in a later phase
 * than its send (every message between nodes, and the rare one inside a node that must wait
 * across a network phase) is staged: its send writes the value into the sender's staging area
 * (scratch chunks after the original's), NCCL carries it in the network phase of the send's
 * phase, and its receive reads it from the receiver's staging area (`rrc` becomes `re`, `r`
 * becomes `cpy`, ...). Staging is never reused within a call. docs/runtime.md ("Across
 * nodes") describes the runtime side. */

/* One transfer of a network phase: cnt scratch chunks from rank src at chunk soff to rank dst
 * at chunk doff. All staged messages of a phase from one rank to another are one transfer. */
typedef struct weft_phase_xfer {
    int32_t src, dst;
    int32_t soff, doff, cnt;
} weft_phase_xfer;

typedef struct weft_phased {
    int32_t nranks, nnodes;
    int32_t *node;   /* nranks: the node of each rank (0 .. nnodes-1, in order of first rank) */
    int32_t nphases; /* GPU phases (network phases: nphases - 1) */
    weft_algo **gpu; /* nphases schedules for all nranks ranks, owned; every rank has a tb */
    int32_t **lane;  /* [phase][g]: for tb g of gpu[phase] counted over ranks in order (rank 0's
                        tbs, then rank 1's, ...), the tb of the original it comes from; a rank
                        with no step in a phase gets one tb with a nop there, whose lane is the
                        original's tb count */
    int32_t *nxfers; /* nphases - 1 */
    weft_phase_xfer **xfers;      /* [network phase], sorted by (src, dst) */
    int32_t *stage_base;          /* nranks: first staging chunk (the original's s_chunks) */
    int64_t nsteps;               /* steps of the original */
    int32_t *step_phase;          /* nsteps: phase of each original step, by (rank, tb, step) */
    int64_t staged, staged_local; /* staged messages; of them, inside one node */
} weft_phased;

/* Cuts a into phases for the node map node[rank] (any integers; ranks with the same value share
 * a node). a must pass structural checks and complete in the unbounded interleaving model
 * (weft verify proves the rest). On success *out is owned by the caller (weft_phased_free).
 * A schedule whose messages all stay inside nodes gets one GPU phase. */
WEFT_API weft_result weft_phase_cut(const weft_algo *a, const int32_t *node, weft_phased **out,
                                    weft_diag *d);
/* As weft_phase_cut, but a cut of more than max_phases GPU phases (0: no limit) is counted and
 * not built: WEFT_ERR_UNSUPPORTED, *nphases the count (when nphases is not NULL), nothing in d,
 * and only memory linear in the schedule's size (a chain across 2048 nodes has 2048 phases of
 * 2048 ranks each; building them all first took gigabytes). */
#define WEFT_IR_MAX_PHASES 64 /* GPU phases of a cut that weft runs (selection, weft plan) */
WEFT_API weft_result weft_phase_cut_max(const weft_algo *a, const int32_t *node, int32_t max_phases,
                                        weft_phased **out, int32_t *nphases, weft_diag *d);
WEFT_API void weft_phased_free(weft_phased *p);
/* The original tb that tb t of rank r in GPU phase `phase` comes from (-1 when out of range). */
WEFT_API int32_t weft_phased_lane(const weft_phased *p, int32_t phase, int32_t r, int32_t t);

/* The phases joined back into one schedule of a's collective, as the runtime executes them: on
 * every rank each original tb runs its sections of all GPU phases in order; every network
 * transfer is a send and a receive on tbs of their own (a new channel); a barrier tb per rank
 * orders, by nop steps with dependencies, GPU phase p before network phase p before GPU phase
 * p+1 (what one CUDA stream does with kernels and NCCL groups). Owned by the caller. */
WEFT_API weft_result weft_phase_join(const weft_phased *p, weft_algo **out, weft_diag *d);

/* Proves a cut of a: every GPU phase is a self-contained schedule whose messages stay inside a
 * node; the phase numbers respect a's program order, dependencies and messages (strictly later
 * across nodes); and the joined schedule implements a's collective, cannot deadlock, has no race
 * and stays in bounds (weft_ir_verify with opts). Findings go to d; summary (may be NULL) is the
 * joined schedule's. WEFT_OK when proven, WEFT_ERR_INPUT otherwise. */
WEFT_API weft_result weft_phase_verify(const weft_algo *a, const weft_phased *p,
                                       const weft_verify_opts *opts, weft_diag *d,
                                       weft_verify_summary *summary);

/* Prints the phases: per GPU phase the CTAs (tbs) per rank, steps, protocol and messages; per
 * network phase the transfers and bytes per chunk. steps != 0 adds every phase's listing as
 * weft show prints it, and the network transfers one by one. */
WEFT_API weft_result weft_phase_show(const weft_algo *a, const weft_phased *p, FILE *out,
                                     int steps);

#ifdef __cplusplus
}
#endif
#endif
