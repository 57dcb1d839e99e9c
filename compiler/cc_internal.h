/* cc_internal.h — the evaluated program shared by evaluation, checking and lowering (program.c). */
#ifndef WEFT_CC_INTERNAL_H
#define WEFT_CC_INTERNAL_H

#include "weft_compiler.h"

/* Sizes the compiler accepts; beyond them it says so instead of running out of memory. Ranks,
 * chunks, chunks over all ranks and the operations follow what a schedule may have (weft_ir.h):
 * the compiler does not produce what weft verify would refuse. */
#define CC_MAX_LOCATIONS  WEFT_IR_MAX_LOCATIONS /* chunks over all ranks, buffers, instances */
#define CC_MAX_OPS        WEFT_IR_MAX_STEPS
#define CC_MAX_ITERATIONS (32LL * 1024 * 1024)
/* Evaluation's work budget: expression nodes, statements, loop iterations, calls, and the chunks
 * operations and ensure terms cover. It bounds the time of evaluation and of checking and
 * lowering what it produced, whatever the program does (docs/language.md, limits). */
#define CC_MAX_WORK (32LL * 1024 * 1024)
/* What a call costs of it: a frame, arguments, bindings */
#define CC_CALL_WORK 16
/* Checking's budget: contributions merged by reductions, listed by ensures and compared with
 * the postcondition, over both buffer modes. */
#define CC_MAX_TRACE_WORK (256LL * 1024 * 1024)
#define CC_MAX_CALL_DEPTH 64
#define CC_MAX_CHANNELS   32

/* Buffers of a program: 0 input, 1 output, then the scratch buffers in declaration order. */
enum { CC_BUF_INPUT = 0, CC_BUF_OUTPUT = 1, CC_BUF_SCRATCH0 = 2 };

typedef struct cc_ref {
    int32_t buf, rank, off, cnt;
} cc_ref;

/* X(id, name) */
#define CC_OP_KINDS(X)                                                                             \
    X(COPY, "copy")                                                                                \
    X(REDUCE, "reduce")                                                                            \
    X(ENSURE, "ensure")

typedef enum cc_op_kind {
#define WEFT_X_(id, n) CC_OP_##id,
    CC_OP_KINDS(WEFT_X_)
#undef WEFT_X_
} cc_op_kind;

/* X(id, spelling): the hints an operation may carry. */
#define CC_HINTS(X)                                                                                \
    X(CHAN, "chan")                                                                                \
    X(SENDTB, "sendtb")                                                                            \
    X(RECVTB, "recvtb")                                                                            \
    X(TB, "tb")

typedef enum cc_hint {
#define WEFT_X_(id, n) CC_HINT_##id,
    CC_HINTS(WEFT_X_)
#undef WEFT_X_
        CC_HINT_COUNT
} cc_hint;

/* A term of an ensure: buffer[rank_lo..rank_hi)[off..off+cnt). */
typedef struct cc_term {
    int32_t buf, rank_lo, rank_hi, off, cnt;
} cc_term;

typedef struct cc_op {
    cc_op_kind kind;
    cc_ref src, dst;             /* ENSURE: dst is the checked chunk */
    int32_t hint[CC_HINT_COUNT]; /* -1 = not given */
    weft_lang_loc hint_loc[CC_HINT_COUNT];
    weft_lang_loc loc;
    int32_t frame;         /* innermost evaluation frame, -1 at top level */
    int32_t term0, nterms; /* ENSURE: terms in program.terms */
} cc_op;

/* Where an operation was evaluated: loop iterations and calls, for `note:` lines. */
typedef struct cc_frame {
    int32_t parent;
    uint8_t is_call;
    const char *name; /* loop variable or called def */
    int64_t value;    /* loop variable's value */
    char *args;       /* call: "(1, 2)" */
    weft_lang_loc loc;
} cc_frame;

typedef struct cc_scratch {
    const char *name;
    int32_t size, base; /* chunks per rank; offset in the XML scratch buffer */
    weft_lang_loc loc;
} cc_scratch;

struct weft_cc_program {
    const weft_lang_program *src;
    /* header */
    char *name;
    weft_coll coll;
    weft_proto proto;
    int32_t nranks, chunks, instances, root;
    uint8_t inplace, outofplace;
    uint8_t launch;               /* launch modes served (weft_algo.launch) */
    int64_t min_bytes, max_bytes; /* max 0 = unbounded */
    int64_t graph_max_bytes;      /* captured calls' bound (weft_algo.graph_max_bytes); 0 none */
    weft_lang_loc coll_loc, header_loc;
    int32_t in_chunks, out_chunks; /* per rank, one instance */
    cc_scratch *scratch;
    int32_t nscratch, scratch_total;
    size_t capscratch;
    /* operations in program order */
    cc_op *ops;
    size_t nops, capops;
    cc_term *terms;
    size_t nterms, capterms;
    cc_frame *frames;
    size_t nframes, capframes;
    /* filled by weft_cc_check for lowering */
    int32_t *fuse_from; /* per op: the op whose received value this op sends on, or -1 */
    uint8_t *dead;      /* per op: the value it stores is read only by the op fused after it */
    uint8_t *noop;      /* per op: a copy onto itself in every enabled mode */
    int32_t *feed;      /* per op: the local copy X -> Y whose Y this op reads first (the copy
                           can become this op's source: docs/language.md, lowering), or -1 */
    int32_t *recv_into; /* per local op: the receive whose value it is the only reader of (the
                           receive can store straight into this op's destination), or -1 */
    uint8_t checked;
    void *seen; /* positions already reported (program.c) */
};

int cc_seen_new(weft_cc_program *p);
void cc_count_suppressed(const weft_cc_program *p, size_t n);
/* Adds a note counting the diagnostics dropped as repeats since the last call. */
void cc_flush_suppressed(const weft_cc_program *p, weft_diag *d);

/* Where chunks live in one buffer mode: every (buffer, rank, index) maps to a slot of one of
 * three memories (WEFT_MEM_SEND, RECV, SCRATCH), rank-major. In-place, input and output overlap
 * as NCCL defines it (weft_buf_mem; docs/language.md, "Buffer modes"). */
typedef struct cc_layout {
    int inplace;
    int64_t base[3], size[3];
    int64_t nslots;
} cc_layout;
void cc_layout_init(cc_layout *l, const weft_cc_program *p, int inplace);
int64_t cc_slot(const cc_layout *l, const weft_cc_program *p, int32_t buf, int32_t rank,
                int32_t idx);

/* Channels for the operations (place.c): chan[i] is op i's chan hint where it has one, and for
 * messages without a placement hint the channel that keeps chains of messages that meet at the
 * same dependency depth (dsend, drecv: per op, of its sending and receiving step) out of one
 * thread block. Returns 0, or -1 when memory runs out. */
int cc_place_channels(const weft_cc_program *p, const int32_t *dsend, const int32_t *drecv,
                      int32_t *chan);

/* Buffer name for messages: input, output or the scratch name. */
const char *cc_buf_name(const weft_cc_program *p, int32_t buf);
/* Chunks per rank of a buffer (one instance). */
int32_t cc_buf_size(const weft_cc_program *p, int32_t buf);
/* "input[2][0..4]" into buf. */
void cc_ref_str(const weft_cc_program *p, const cc_ref *r, char *buf, size_t n);

/* The source text of loc (not NUL-terminated; *len bytes). */
const char *cc_source_text(const weft_cc_program *p, weft_lang_loc loc, int *len);

/* Diagnostics with notes for the frames an operation was evaluated in. */
void cc_report(const weft_cc_program *p, weft_diag *d, weft_severity sev, weft_lang_loc loc,
               int32_t frame, const char *fmt, ...) WEFT_PRINTF(6, 7);
void cc_vreport(const weft_cc_program *p, weft_diag *d, weft_severity sev, weft_lang_loc loc,
                int32_t frame, const char *fmt, va_list ap);
/* The two halves of cc_vreport: whether loc has not had a diagnostic of this kind yet (a repeat
 * is counted and dropped), and the report itself. A caller that would do work to report (such
 * as recording where it is) asks first. */
int cc_report_wanted(const weft_cc_program *p, weft_lang_loc loc, weft_severity sev);
void cc_vreport_new(const weft_cc_program *p, weft_diag *d, weft_severity sev, weft_lang_loc loc,
                    int32_t frame, const char *fmt, va_list ap);

#endif
