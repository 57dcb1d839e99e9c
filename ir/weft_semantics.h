/* weft_semantics.h — what the IR means, stated once: what a step reads, computes and writes,
 * what each collective's output must hold, where each buffer lives in each call mode, and the
 * count policy. The verifier, the CPU executor, the compiler's checker, the planner, the CUDA
 * interpreter, the shim and the tests' reference all call these. Plain C; device code includes
 * it too (weft_semantics.c has the host-only step evaluator). */
#ifndef WEFT_SEMANTICS_H
#define WEFT_SEMANTICS_H

#include <stdint.h>
#if !defined(__CUDACC__)
#include "weft_common.h" /* WEFT_API */
#endif

#if defined(__CUDACC__)
#define WEFT_HD __host__ __device__ __forceinline__
#else
#define WEFT_HD static inline
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* ---- buffers ---------------------------------------------------------------------------- */
/* X(id, xml code, name) */
#define WEFT_BUFS(X)                                                                               \
    X(INPUT, 'i', "input")                                                                         \
    X(OUTPUT, 'o', "output")                                                                       \
    X(SCRATCH, 's', "scratch")

typedef enum weft_buf {
#define WEFT_X_(id, c, n) WEFT_BUF_##id,
    WEFT_BUFS(WEFT_X_)
#undef WEFT_X_
        WEFT_BUF_COUNT
} weft_buf;

/* ---- collectives ------------------------------------------------------------------------ */
/* X(id, xml name, input segments, output segments, reduces, rooted, runnable, busbw)
 * segments: 1 = the buffer holds `count` elements; 0 = it holds N x count (the "large" side,
 * N = ngpus), cut into N segments of `count`. nchunksperloop K = (N if any side is large else 1)
 * x k, where k is the number of chunks per segment. `runnable` = 0: accepted by the reader and
 * writer, but neither verified nor executed (no NCCL collective matches it). busbw: nccl-tests'
 * bus bandwidth factor, busbw (N - 1) / N of the algorithm bandwidth, 1 where 0. */
#define WEFT_COLLS(X)                                                                              \
    X(ALLREDUCE, "allreduce", 1, 1, 1, 0, 1, 2)                                                    \
    X(ALLGATHER, "allgather", 1, 0, 0, 0, 1, 1)                                                    \
    X(REDUCESCATTER, "reducescatter", 0, 1, 1, 0, 1, 1)                                            \
    X(ALLTOALL, "alltoall", 0, 0, 0, 0, 1, 1)                                                      \
    X(BROADCAST, "broadcast", 1, 1, 0, 1, 1, 0)                                                    \
    X(REDUCE, "reduce", 1, 1, 1, 1, 1, 0)                                                          \
    X(GATHER, "gather", 1, 0, 0, 1, 1, 0)                                                          \
    X(SCATTER, "scatter", 0, 1, 0, 1, 1, 0)                                                        \
    X(ALLTOALLV, "alltoallv", 0, 0, 0, 0, 0, 0)                                                    \
    X(SEND, "send", 1, 1, 0, 0, 0, 0)                                                              \
    X(RECV, "recv", 1, 1, 0, 0, 0, 0)                                                              \
    X(CUSTOM, "custom", 1, 1, 0, 0, 0, 0)

typedef enum weft_coll {
#define WEFT_X_(id, n, is, os, red, root, run, bw) WEFT_COLL_##id,
    WEFT_COLLS(WEFT_X_)
#undef WEFT_X_
        WEFT_COLL_COUNT
} weft_coll;

WEFT_HD int weft_coll_flag_(weft_coll c, int which) {
    switch (c) {
#define WEFT_X_(id, n, is, os, red, root, run, bw)                                                 \
    case WEFT_COLL_##id: {                                                                         \
        const int f[6] = {is == 0, os == 0, red, root, run, bw};                                   \
        return f[which];                                                                           \
    }
        WEFT_COLLS(WEFT_X_)
#undef WEFT_X_
    case WEFT_COLL_COUNT: break;
    }
    return 0; /* not a collective */
}
/* 1 when buffer b (INPUT or OUTPUT) of collective c holds N x count elements. */
WEFT_HD int weft_coll_large(weft_coll c, weft_buf b) {
    return b == WEFT_BUF_INPUT ? weft_coll_flag_(c, 0)
                               : b == WEFT_BUF_OUTPUT && weft_coll_flag_(c, 1);
}
WEFT_HD int weft_coll_reduces(weft_coll c) {
    return weft_coll_flag_(c, 2);
}
WEFT_HD int weft_coll_rooted(weft_coll c) {
    return weft_coll_flag_(c, 3);
}
WEFT_HD int weft_coll_runnable(weft_coll c) {
    return weft_coll_flag_(c, 4);
}
/* nccl-tests' bus bandwidth per algorithm bandwidth of c on n ranks. */
WEFT_HD double weft_coll_busbw_factor(weft_coll c, int32_t n) {
    int bw = weft_coll_flag_(c, 5);
    return bw && n > 0 ? bw * (double)(n - 1) / n : 1.0;
}
/* Segments of count elements that buffer b of c holds with n ranks (scratch: 0). */
WEFT_HD int32_t weft_coll_segs(weft_coll c, weft_buf b, int32_t n) {
    return b == WEFT_BUF_SCRATCH ? 0 : weft_coll_large(c, b) ? n : 1;
}

/* A call's size: the bytes compared with an algorithm's [minBytes, maxBytes] and a tuning
 * table's rows, which weft tune measures and the shim logs. count x elsize x n for the
 * collectives without a root that have an N-segment buffer (allgather, reducescatter, alltoall),
 * else count x elsize: exactly what msccl-executor-nccl and RCCL's MSCCL compare (their XML
 * loader sets sizeMultiplier = ngpus for those three only), so existing algorithm files keep
 * their meaning. Gather and scatter, though they have an N-segment buffer, count one segment
 * there and so here, while nccl-tests' size column (max of send and receive bytes, gather.cu and
 * scatter.cu) is their whole N-segment buffer: n times this. NCCL's own ncclGather and
 * ncclScatter (2.28) take count per rank, one segment, as weft_call.count. Alltoallv counts n
 * here and 1 in MSCCL; it is not runnable, so never compared. n < 1 counts as 1. 0 when the
 * product overflows. */
WEFT_HD uint64_t weft_coll_footprint(weft_coll c, uint64_t count, uint64_t elsize, int32_t n) {
    uint64_t segs = 1;
    if (!weft_coll_rooted(c) && n > 1 &&
        (weft_coll_large(c, WEFT_BUF_INPUT) || weft_coll_large(c, WEFT_BUF_OUTPUT)))
        segs = (uint64_t)n;
    if (elsize != 0 && count > UINT64_MAX / elsize) return 0;
    uint64_t b = count * elsize;
    if (b > UINT64_MAX / segs) return 0;
    return b * segs;
}

/* ---- what a collective computes --------------------------------------------------------- *
 * Output segment `seg` of rank r after collective c over n ranks (root `root`) holds input
 * segment *in_seg of rank *from, or, with *from == -1, the reduction of input segment *in_seg
 * over all ranks, combined in rank order (avg: the sum, then divided by n). 0 when the
 * collective leaves it unconstrained (the output of a non-root rank of reduce and gather;
 * collectives weft does not run). Chunks follow their segments: output chunk seg*k + j holds
 * input chunk *in_seg*k + j. */
WEFT_HD int weft_coll_source(weft_coll c, int32_t n, int32_t root, int32_t r, int32_t seg,
                             int32_t *from, int32_t *in_seg) {
    (void)n;
    *from = -1, *in_seg = 0;
    switch (c) {
    case WEFT_COLL_ALLREDUCE: return 1;
    case WEFT_COLL_REDUCE: return r == root;
    case WEFT_COLL_REDUCESCATTER: *in_seg = r; return 1;
    case WEFT_COLL_ALLGATHER: *from = seg; return 1;
    case WEFT_COLL_GATHER: *from = seg; return r == root;
    case WEFT_COLL_ALLTOALL: *from = seg, *in_seg = r; return 1;
    case WEFT_COLL_BROADCAST: *from = root; return 1;
    case WEFT_COLL_SCATTER: *from = root, *in_seg = r; return 1;
    case WEFT_COLL_ALLTOALLV:
    case WEFT_COLL_SEND:
    case WEFT_COLL_RECV:
    case WEFT_COLL_CUSTOM: return 0; /* not run by weft: no definition here */
    case WEFT_COLL_COUNT: break;
    }
    return 0; /* not a collective */
}

/* ---- where buffers live ----------------------------------------------------------------- */
/* Whether rank has buffer b in a call mode: not the output of a non-root rank of reduce and
 * gather, nor the input of a non-root rank of broadcast and scatter, except that in place
 * broadcast's and reduce's non-root ranks pass one buffer for both. */
WEFT_HD int weft_buf_exists(weft_coll c, int32_t root, int inplace, int32_t rank, weft_buf b) {
    if (b == WEFT_BUF_SCRATCH || !weft_coll_rooted(c) || rank == root) return 1;
    switch (c) {
    case WEFT_COLL_BROADCAST: return b == WEFT_BUF_OUTPUT || inplace;
    case WEFT_COLL_REDUCE: return b == WEFT_BUF_INPUT || inplace;
    case WEFT_COLL_GATHER: return b == WEFT_BUF_INPUT;
    case WEFT_COLL_SCATTER: return b == WEFT_BUF_OUTPUT;
    case WEFT_COLL_ALLREDUCE:
    case WEFT_COLL_ALLGATHER:
    case WEFT_COLL_REDUCESCATTER:
    case WEFT_COLL_ALLTOALL:
    case WEFT_COLL_ALLTOALLV:
    case WEFT_COLL_SEND:
    case WEFT_COLL_RECV:
    case WEFT_COLL_CUSTOM: return 1; /* no root: every rank has every buffer (returned above) */
    case WEFT_COLL_COUNT: break;
    }
    return 1; /* not a collective (not rooted either: returned above) */
}

/* The memories of a call: NCCL's send buffer, its receive buffer, weft's scratch. */
enum { WEFT_MEM_SEND = 0, WEFT_MEM_RECV = 1, WEFT_MEM_SCRATCH = 2 };

/* Whether, in place, one of input and output is a slice of the other (their sizes differ), so
 * that it lies at a different offset on every rank. */
WEFT_HD int weft_coll_inplace_sliced(weft_coll c) {
    return weft_coll_large(c, WEFT_BUF_INPUT) != weft_coll_large(c, WEFT_BUF_OUTPUT);
}

/* The memory buffer b of rank is part of, and the segment of it at which b starts, as NCCL
 * defines calls: out of place each buffer is its own memory; in place input and output are one,
 * the same pointer when both hold N segments or both one, else the large buffer with the small
 * one at segment `rank` of it (allgather's input, reducescatter's output). Where a rank lacks
 * a buffer (weft_buf_exists), gather and scatter do not alias: the caller decides with it. */
WEFT_HD int weft_buf_mem(weft_coll c, int inplace, int32_t rank, weft_buf b, int32_t *seg) {
    *seg = 0;
    if (b == WEFT_BUF_SCRATCH) return WEFT_MEM_SCRATCH;
    if (!inplace) return b == WEFT_BUF_INPUT ? WEFT_MEM_SEND : WEFT_MEM_RECV;
    if (!weft_coll_inplace_sliced(c)) return WEFT_MEM_SEND;
    weft_buf large = weft_coll_large(c, WEFT_BUF_INPUT) ? WEFT_BUF_INPUT : WEFT_BUF_OUTPUT;
    if (b != large) *seg = rank;
    return large == WEFT_BUF_INPUT ? WEFT_MEM_SEND : WEFT_MEM_RECV;
}

/* Whether a step may write input chunk x (k chunks per segment) of rank in a call mode. Out of
 * place never: NCCL's send buffer is const (the caller, or another rank in a zero-copy
 * transport, may read it while the collective runs). In place only where the input is also the
 * output: all of it when both are one buffer, only the rank's slice [rank*k, rank*k + k) when
 * the output is a slice of the larger input (reducescatter; scatter's root): the rest of that
 * buffer is still the application's send data. */
WEFT_HD int weft_input_writable(weft_coll c, int inplace, int32_t rank, int32_t k, int32_t x) {
    if (!inplace) return 0;
    if (!weft_coll_inplace_sliced(c) || !weft_coll_large(c, WEFT_BUF_INPUT)) return 1;
    return x / k == rank;
}

/* Whether NCCL writes rank's receive buffer: on every rank but the non-root ranks of reduce and
 * gather, whose output the collective leaves unconstrained (weft_coll_source) and which NCCL
 * never touches; in place their one buffer is their send buffer. */
WEFT_HD int weft_output_written(weft_coll c, int32_t root, int32_t rank) {
    int32_t from, seg;
    return !weft_coll_rooted(c) || rank == root ||
           weft_coll_source(c, 0, root, rank, 0, &from, &seg);
}

/* Elements of rank's output that an avg divides once the schedule has run (ncclAvg: the sum,
 * then / n): the output a reduction writes (weft_output_written), count x its segments; 0 where
 * c does not reduce or NCCL leaves the rank's output alone. */
WEFT_HD int64_t weft_avg_elems(weft_coll c, int32_t root, int32_t rank, int64_t count, int32_t n) {
    if (!weft_coll_reduces(c) || !weft_output_written(c, root, rank)) return 0;
    return count * weft_coll_segs(c, WEFT_BUF_OUTPUT, n);
}

/* Whether a step may write chunk x of buffer b of rank in a call mode (k chunks per segment):
 * scratch always; a user buffer only where the rank has it, NCCL writes its output
 * (weft_output_written), and, for the input, weft_input_writable allows it. In place a write to
 * either name lands in the memory both share, so this is the one rule for both. */
WEFT_HD int weft_chunk_writable(weft_coll c, int32_t root, int inplace, int32_t rank, int32_t k,
                                weft_buf b, int32_t x) {
    if (b == WEFT_BUF_SCRATCH) return 1;
    if (!weft_buf_exists(c, root, inplace, rank, b) || !weft_output_written(c, root, rank))
        return 0;
    return b == WEFT_BUF_OUTPUT || weft_input_writable(c, inplace, rank, k, x);
}

/* Whether input and output are one memory on rank in a call mode (weft_buf_mem, where the rank
 * has both). */
WEFT_HD int weft_buf_aliased(weft_coll c, int32_t root, int inplace, int32_t rank) {
    return inplace && weft_buf_exists(c, root, 1, rank, WEFT_BUF_INPUT) &&
           weft_buf_exists(c, root, 1, rank, WEFT_BUF_OUTPUT);
}

/* ---- step types ------------------------------------------------------------------------- */
/* X(id, xml name, recv, send, reduce, write, reads_src, reads_dst)
 *   recv:      takes one message of cnt chunks from the tb's recv peer
 *   send:      puts one message of cnt chunks on the tb's send peer
 *   reduce:    combines with src: value = incoming (+) src
 *   write:     stores the value into dst
 *   reads_src: reads src[srcoff .. srcoff+cnt)
 *   reads_dst: reads dst[dstoff .. dstoff+cnt) before writing it: the incoming value of `re`
 * The value a step produces is: the incoming value (received, or dst for `re`), reduced with src
 * when `reduce`; or src when nothing comes in. weft_step_eval spells this out. */
#define WEFT_STEP_TYPES(X)                                                                         \
    X(SEND, "s", 0, 1, 0, 0, 1, 0)                                                                 \
    X(RECV, "r", 1, 0, 0, 1, 0, 0)                                                                 \
    X(RCS, "rcs", 1, 1, 0, 1, 0, 0)                                                                \
    X(RRS, "rrs", 1, 1, 1, 0, 1, 0)                                                                \
    X(RRC, "rrc", 1, 0, 1, 1, 1, 0)                                                                \
    X(RRCS, "rrcs", 1, 1, 1, 1, 1, 0)                                                              \
    X(CPY, "cpy", 0, 0, 0, 1, 1, 0)                                                                \
    X(RE, "re", 0, 0, 1, 1, 1, 1)                                                                  \
    X(NOP, "nop", 0, 0, 0, 0, 0, 0)

typedef enum weft_step_type {
#define WEFT_X_(id, n, rv, sd, red, wr, rs, rd) WEFT_STEP_##id,
    WEFT_STEP_TYPES(WEFT_X_)
#undef WEFT_X_
        WEFT_STEP_COUNT
} weft_step_type;

#define WEFT_STEP_F_RECV      1u
#define WEFT_STEP_F_SEND      2u
#define WEFT_STEP_F_REDUCE    4u
#define WEFT_STEP_F_WRITE     8u
#define WEFT_STEP_F_READS_SRC 16u
#define WEFT_STEP_F_READS_DST 32u

WEFT_HD unsigned weft_step_flags(weft_step_type t) {
    switch (t) {
#define WEFT_X_(id, n, rv, sd, red, wr, rs, rd)                                                    \
    case WEFT_STEP_##id:                                                                           \
        return (rv ? WEFT_STEP_F_RECV : 0u) | (sd ? WEFT_STEP_F_SEND : 0u) |                       \
               (red ? WEFT_STEP_F_REDUCE : 0u) | (wr ? WEFT_STEP_F_WRITE : 0u) |                   \
               (rs ? WEFT_STEP_F_READS_SRC : 0u) | (rd ? WEFT_STEP_F_READS_DST : 0u);
        WEFT_STEP_TYPES(WEFT_X_)
#undef WEFT_X_
    case WEFT_STEP_COUNT: break;
    }
    return 0u; /* not a step type */
}

/* The memory a step touches: its source when it reads it, then its destination when it writes
 * it (`re` reads it first: read and write both set). Returns how many of out[0..2) it filled. */
typedef struct weft_access {
    int32_t buf, off, cnt;
    uint8_t read, write;
} weft_access;

WEFT_HD int weft_step_access(weft_step_type t, int32_t srcbuf, int32_t srcoff, int32_t dstbuf,
                             int32_t dstoff, int32_t cnt, weft_access out[2]) {
    unsigned f = weft_step_flags(t);
    int n = 0;
    if (f & WEFT_STEP_F_READS_SRC) {
        out[n].buf = srcbuf, out[n].off = srcoff, out[n].cnt = cnt;
        out[n].read = 1, out[n].write = 0, n++;
    }
    if (f & (WEFT_STEP_F_WRITE | WEFT_STEP_F_READS_DST)) {
        out[n].buf = dstbuf, out[n].off = dstoff, out[n].cnt = cnt;
        out[n].read = (f & WEFT_STEP_F_READS_DST) != 0, out[n].write = (f & WEFT_STEP_F_WRITE) != 0;
        n++;
    }
    return n;
}

/* ---- what a step computes (weft_semantics.c; host code) -------------------------------- *
 * One step over a caller's values: the verifier's symbolic contributions, the CPU executor's
 * data. The step works in registers 0..cnt-1 (its values) and register cnt (an operand);
 * every read happens before any write, as through a temporary. Each callback returns 0, or an
 * error that stops the step and is returned. */
typedef struct weft_step_algebra {
    /* register i := chunk i of the message the step receives */
    int (*take)(void *self, int32_t i);
    /* register i := chunk x of buffer b of the step's rank */
    int (*load)(void *self, int32_t i, weft_buf b, int32_t x);
    /* register i := register i (+) register j */
    int (*reduce)(void *self, int32_t i, int32_t j);
    /* chunk x of buffer b := register i */
    int (*store)(void *self, int32_t i, weft_buf b, int32_t x);
    /* the step's message := registers 0..cnt-1 */
    int (*send)(void *self, int32_t cnt);
} weft_step_algebra;

#if !defined(__CUDACC__)
WEFT_API int weft_step_eval(const weft_step_algebra *A, void *self, weft_step_type t,
                            weft_buf srcbuf, int32_t srcoff, weft_buf dstbuf, int32_t dstoff,
                            int32_t cnt);
#endif

/* ---- data types and reduction ops (values equal NCCL's enums) --------------------------- */
/* X(id, name, bytes, nccl enum value, is_float) */
#define WEFT_DTYPES(X)                                                                             \
    X(INT8, "int8", 1, 0, 0)                                                                       \
    X(UINT8, "uint8", 1, 1, 0)                                                                     \
    X(INT32, "int32", 4, 2, 0)                                                                     \
    X(UINT32, "uint32", 4, 3, 0)                                                                   \
    X(INT64, "int64", 8, 4, 0)                                                                     \
    X(UINT64, "uint64", 8, 5, 0)                                                                   \
    X(HALF, "half", 2, 6, 1)                                                                       \
    X(FLOAT, "float", 4, 7, 1)                                                                     \
    X(DOUBLE, "double", 8, 8, 1)                                                                   \
    X(BFLOAT16, "bfloat16", 2, 9, 1)

typedef enum weft_dtype {
#define WEFT_X_(id, n, b, v, f) WEFT_DTYPE_##id = v,
    WEFT_DTYPES(WEFT_X_)
#undef WEFT_X_
        WEFT_DTYPE_COUNT = 10
} weft_dtype;

WEFT_HD int weft_dtype_prop_(weft_dtype t, int is_float) {
    switch (t) {
#define WEFT_X_(id, n, b, v, f)                                                                    \
    case WEFT_DTYPE_##id: return is_float ? f : b;
        WEFT_DTYPES(WEFT_X_)
#undef WEFT_X_
    case WEFT_DTYPE_COUNT: break;
    }
    return 0; /* not a data type */
}
/* Bytes of one element; whether the type is floating point. */
WEFT_HD int weft_dtype_size(weft_dtype t) {
    return weft_dtype_prop_(t, 0);
}
WEFT_HD int weft_dtype_is_float(weft_dtype t) {
    return weft_dtype_prop_(t, 1);
}

/* X(id, name, nccl enum value). AVG is the sum divided by the rank count after the schedule
 * has finished (integer division for integer types), as NCCL defines ncclAvg. */
#define WEFT_REDOPS(X)                                                                             \
    X(SUM, "sum", 0)                                                                               \
    X(PROD, "prod", 1)                                                                             \
    X(MAX, "max", 2)                                                                               \
    X(MIN, "min", 3)                                                                               \
    X(AVG, "avg", 4)

typedef enum weft_redop {
#define WEFT_X_(id, n, v) WEFT_OP_##id = v,
    WEFT_REDOPS(WEFT_X_)
#undef WEFT_X_
        WEFT_OP_COUNT = 5
} weft_redop;

/* ---- where a chunk lives: the count policy ---------------------------------------------- *
 * A call moves `count` elements per segment (NCCL's count argument: per rank for allgather,
 * reducescatter, alltoall, gather and scatter). A buffer is 1 or N segments of `count`
 * elements; each segment is cut into k chunk slots of C = ceil(count / k) elements, so chunk
 * index x of a user buffer starts at element (x / k) * count + (x % k) * C and holds
 * min(C, count - (x % k) * C) valid elements (0 when past the end: trailing chunks may be
 * short or empty). Scratch chunk x starts at x * C and always holds C elements.
 *
 * Every step moves and combines whole slots of C elements, elementwise: element e of a chunk
 * only ever meets element e of other chunks. Elements past the valid end of a user chunk are
 * never read from or written to user memory (they are computed from padding and discarded).
 * The CPU executor and the GPU interpreter both implement exactly this.
 *
 * So a value stored into user chunk slot j keeps only the element positions where slot j is
 * valid, and slots shorten with j: data that ends in slot j but passed through a user slot
 * after j (parked in output chunk 1 on its way back to chunk 0) loses elements whenever the
 * count is not a multiple of k. A schedule right for counts divisible by k is therefore not
 * necessarily right for every count; it is when no value passes through a later user slot
 * than the one it is checked in, which is what the verifier and the compiler's checker prove
 * (an element position sees slots 0..t-1 valid for some t, and count = t realizes each t). */
WEFT_HD int64_t weft_chunk_elems(int64_t count, int32_t k) {
    return k > 0 ? (count + k - 1) / k : 0;
}
WEFT_HD int64_t weft_chunk_start(int64_t count, int32_t k, int64_t C, int32_t x) {
    return (int64_t)(x / k) * count + (int64_t)(x % k) * C;
}
WEFT_HD int64_t weft_chunk_valid(int64_t count, int32_t k, int64_t C, int32_t x) {
    int64_t s = (int64_t)(x % k) * C;
    if (s >= count) return 0;
    return count - s < C ? count - s : C;
}

#ifdef __cplusplus
}
#endif
#endif
