/* stepgraph_internal.h — a schedule as a flat step graph (structure checks, connection matching,
 * buffer layout per call mode) and the interleaving engine that the verifier and the CPU
 * executor both run on, so that the two agree on what a schedule means. */
#ifndef WEFT_STEPGRAPH_INTERNAL_H
#define WEFT_STEPGRAPH_INTERNAL_H

#include "weft_ir.h"

typedef struct weft_sg_step {
    const weft_step *ir;   /* the step in the algo */
    int32_t rank, tb, idx; /* tb: global tb id; idx: position in the tb */
    int32_t dep;           /* global step id of the dependency, or -1 */
    int32_t rconn, sconn;  /* connection received from / sent on, or -1 */
    int32_t rmsg, smsg;    /* index of the message on those connections */
    int32_t match;         /* a receive: global id of the send whose message it takes, or -1 */
    unsigned flags;        /* weft_step_flags */
} weft_sg_step;

typedef struct weft_sg_tb {
    int32_t rank, local;   /* rank and tb id inside the rank */
    int32_t first, nsteps; /* global ids first .. first+nsteps-1 */
    int32_t sconn, rconn;  /* connections it sends on / receives from, or -1 */
} weft_sg_tb;

/* A connection (sender, receiver, channel); messages on it arrive in order. */
typedef struct weft_sg_conn {
    int32_t src, dst, chan;
    int32_t stb, rtb; /* global tb ids of the sending and receiving tb, -1 when absent */
    int32_t nsend, nrecv;
    int32_t *sends, *recvs; /* global step ids in program order */
} weft_sg_conn;

typedef struct weft_sg {
    const weft_algo *a;
    int32_t nranks, k;       /* k: chunks per segment */
    int32_t nin, nout, smax; /* chunks of input, output, and the largest scratch */
    int32_t nlocs;           /* per rank: nin + nout + smax resolved locations */
    int32_t ntbs, nsteps, nconns;
    int32_t *rank_tb; /* nranks + 1: first global tb of each rank */
    weft_sg_tb *tbs;
    weft_sg_step *steps;
    weft_sg_conn *conns;
} weft_sg;

/* Builds the graph and checks what every later analysis relies on: ids, peers, one tb per
 * connection end, step types allowed by the tb's peers, dependencies on existing steps marked
 * hasdep, chunk ranges inside their buffers, and that the sends and receives of every
 * connection pair up in order with equal counts. Errors go to d and are counted in
 * errs[WEFT_VERIFY_<class>] (may be NULL); returns WEFT_ERR_INPUT when there were any (then
 * *out is NULL). *out is owned by the caller: weft_sg_free. */
weft_result weft_sg_build(const weft_algo *a, weft_diag *d, int64_t *errs, weft_sg **out);
void weft_sg_free(weft_sg *g);
/* weft_ir_validate, copying only its errors to d (the reader already ran it on files, so its
 * warnings would repeat), counted as structure errors. */
weft_result weft_sg_validate(const weft_algo *a, weft_diag *d, int64_t *errs);

/* Where chunk x of buffer b of `rank` lives in the call mode: a location in [0, nlocs), the
 * same for every alias of that memory (in-place calls alias input and output, see
 * docs/verify.md), or -1 when the buffer does not exist on that rank (the output of a
 * non-root rank of reduce and gather, the input of a non-root rank of broadcast and
 * scatter). Input locations are [0, nin), so location x < nin is input chunk x. */
int32_t weft_sg_loc(const weft_sg *g, int inplace, int32_t rank, weft_buf b, int32_t x);
/* Whether input and output are the same memory on rank (in-place calls, as NCCL defines
 * them: the same pointer when both hold N or 1 segments, else the rank's slice of the large
 * buffer; a non-root rank of gather or scatter has only one of the two). */
int weft_sg_aliased(const weft_sg *g, int inplace, int32_t rank);
/* Whether buffer b exists on rank in that mode (as above). */
int weft_sg_buf_exists(const weft_sg *g, int inplace, int32_t rank, weft_buf b);
/* Checks that no step touches a buffer that does not exist in that mode. */
weft_result weft_sg_check_mode(const weft_sg *g, int inplace, weft_diag *d, int64_t *errs);
/* Chunks of buffer b on rank (scratch: that rank's s_chunks). */
int32_t weft_sg_buf_chunks(const weft_sg *g, int32_t rank, weft_buf b);

/* Adds "rank R tb T step S: <msg>" at the step's file:line. */
void weft_sg_diag_step(const weft_sg *g, weft_diag *d, weft_severity sev, int32_t step,
                       const char *fmt, ...) WEFT_PRINTF(5, 6);
/* "rank R tb T step S" of a global step id. */
void weft_sg_step_name(const weft_sg *g, int32_t step, char *buf, size_t len);
const weft_step *weft_sg_ir_step(const weft_sg *g, int32_t step);

/* ---- the interleaving engine ---------------------------------------------------------- *
 * Runs every tb in program order. A step starts when the previous step of its tb, its
 * dependency and (receives) the send of its message are done and (sends) the connection holds
 * fewer than `fifo` unreceived messages; it then completes atomically. Every wait is "tb X has
 * completed v steps", which only ever becomes true, and each connection has one sending and
 * one receiving tb, so a step once startable stays startable until it runs: whether a run
 * completes does not depend on the interleaving (docs/verify.md). */
enum { WEFT_SG_WAIT_NONE, WEFT_SG_WAIT_DEP, WEFT_SG_WAIT_MSG, WEFT_SG_WAIT_SLOT };

typedef struct weft_sg_run {
    /* inputs */
    int32_t fifo;  /* messages a connection holds; 0 = unbounded */
    uint64_t seed; /* 0: round robin over ready tbs; otherwise a seeded random choice */
    int burst;     /* run a tb until it blocks before taking the next (fewer cache misses; the
                      outcome does not depend on the interleaving) */
    int (*fire)(void *user, int32_t step); /* nonzero stops the run with that weft_result */
    void *user;
    int32_t *order; /* optional, nsteps entries: the steps in the order they ran */
    /* outputs */
    int64_t nfired;
    int stalled;
    int32_t *pc;        /* per tb: steps completed */
    int32_t *wait_tb;   /* per blocked tb: the tb it waits for (-1 none possible) */
    int32_t *wait_need; /* ... to have completed this many steps */
    uint8_t *wait_why;  /* WEFT_SG_WAIT_* */
    /* engine internals */
    int32_t *ready, *whead, *wnext;
} weft_sg_run;

/* Runs the schedule; r's outputs are filled (free them with weft_sg_run_free). Returns the
 * fire callback's error if it stopped the run, WEFT_ERR_NOMEM, or WEFT_OK (check r->stalled). */
weft_result weft_sg_run_exec(const weft_sg *g, weft_sg_run *r);
/* The verifier's run (burst, unbounded unless r->fifo says otherwise), recording in order
 * (nsteps entries) the order the steps ran in: when it completes, a linearization of
 * happens-before, the one that weft verify, the phase cut and the timeline all read. As
 * weft_sg_run_exec. */
weft_result weft_sg_linearize(const weft_sg *g, int32_t *order, weft_sg_run *r);
void weft_sg_run_free(weft_sg_run *r);
/* Happens-before depths over the order of a completed run (a linearization): depth[s] is 1 +
 * the deepest of the previous step of s's tb, its dependency and (a receive) the send whose
 * message it takes; pred[s] (pred may be NULL) is the one that set it, preferred in that order
 * on ties, -1 for none. Returns the deepest: the critical path's length in steps, which the
 * verifier reports and `weft show --format=svg` draws. */
int32_t weft_sg_depths(const weft_sg *g, const int32_t *order, int32_t *depth, int32_t *pred);
/* What blocked tb t waits for, as "waits for ..." text. */
void weft_sg_describe_wait(const weft_sg *g, const weft_sg_run *r, int32_t t, char *buf,
                           size_t len);
/* Reports the cycles of waits of a stalled run: one error per cycle (at most max_cycles),
 * one note per wait in it. `what` prefixes the error ("deadlock"). Returns cycles found. */
int weft_sg_report_cycles(const weft_sg *g, const weft_sg_run *r, weft_diag *d, const char *what,
                          int max_cycles);

/* ---- what the process has proven (proven.c) ---------------------------------------------- *
 * Answers to questions about an algorithm's content (a kind and its options as the key),
 * remembered for the life of the process. */
enum { WEFT_FACT_VALID = 1, WEFT_FACT_VERIFIES = 2 };
typedef struct weft_fact {
    uint32_t *w; /* the content and the key */
    size_t n;
    uint64_t h;
} weft_fact;
/* The answer remembered for (a, key[0..nkey)): 0 or 1, or -1 when not known. Every call is
 * followed by weft_fact_keep: with the answer found since (0 or 1) to remember it, else -1. */
int weft_fact_recall(weft_fact *f, const weft_algo *a, const int64_t *key, int nkey);
void weft_fact_keep(weft_fact *f, int result);
/* Whether an algorithm with a's content passed weft_ir_validate in this process; that it did
 * (weft_ir_validate records it). */
int weft_proven_valid(const weft_algo *a);
void weft_proven_set_valid(const weft_algo *a);

#endif
