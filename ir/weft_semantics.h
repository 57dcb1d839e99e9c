/* weft_semantics.h — what a step does and where a chunk lives: shared by the verifier, the CPU
 * executor and the CUDA interpreter so that all three agree by construction. Plain C, no
 * dependencies; device code includes it too. */
#ifndef WEFT_SEMANTICS_H
#define WEFT_SEMANTICS_H

#include <stdint.h>

#if defined(__CUDACC__)
#define WEFT_HD __host__ __device__ __forceinline__
#else
#define WEFT_HD static inline
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

/* ---- step types ------------------------------------------------------------------------- */
/* X(id, xml name, recv, send, reduce, write, reads_src)
 *   recv:      takes one message of cnt chunks from the tb's recv peer
 *   send:      puts one message of cnt chunks on the tb's send peer
 *   reduce:    combines with src: value = incoming (received, or dst for `re`) (+) src
 *   write:     stores the value into dst
 *   reads_src: reads src[srcoff .. srcoff+cnt)
 * The value a step produces is: received data, reduced with src when `reduce` (for `re` the
 * incoming value is dst itself); or src when nothing is received. */
#define WEFT_STEP_TYPES(X)                                                                         \
    X(SEND, "s", 0, 1, 0, 0, 1)                                                                    \
    X(RECV, "r", 1, 0, 0, 1, 0)                                                                    \
    X(RCS, "rcs", 1, 1, 0, 1, 0)                                                                   \
    X(RRS, "rrs", 1, 1, 1, 0, 1)                                                                   \
    X(RRC, "rrc", 1, 0, 1, 1, 1)                                                                   \
    X(RRCS, "rrcs", 1, 1, 1, 1, 1)                                                                 \
    X(CPY, "cpy", 0, 0, 0, 1, 1)                                                                   \
    X(RE, "re", 0, 0, 1, 1, 1)                                                                     \
    X(NOP, "nop", 0, 0, 0, 0, 0)

typedef enum weft_step_type {
#define WEFT_X_(id, n, rv, sd, red, wr, rs) WEFT_STEP_##id,
    WEFT_STEP_TYPES(WEFT_X_)
#undef WEFT_X_
        WEFT_STEP_COUNT
} weft_step_type;

#define WEFT_STEP_F_RECV      1u
#define WEFT_STEP_F_SEND      2u
#define WEFT_STEP_F_REDUCE    4u
#define WEFT_STEP_F_WRITE     8u
#define WEFT_STEP_F_READS_SRC 16u

WEFT_HD unsigned weft_step_flags(weft_step_type t) {
    switch (t) {
#define WEFT_X_(id, n, rv, sd, red, wr, rs)                                                        \
    case WEFT_STEP_##id:                                                                           \
        return (rv ? WEFT_STEP_F_RECV : 0u) | (sd ? WEFT_STEP_F_SEND : 0u) |                       \
               (red ? WEFT_STEP_F_REDUCE : 0u) | (wr ? WEFT_STEP_F_WRITE : 0u) |                   \
               (rs ? WEFT_STEP_F_READS_SRC : 0u);
        WEFT_STEP_TYPES(WEFT_X_)
#undef WEFT_X_
    default: return 0u;
    }
}

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

WEFT_HD int weft_dtype_size(weft_dtype t) {
    switch (t) {
#define WEFT_X_(id, n, b, v, f)                                                                    \
    case WEFT_DTYPE_##id: return b;
        WEFT_DTYPES(WEFT_X_)
#undef WEFT_X_
    default: return 0;
    }
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
 * never read from or written to user memory (they are computed from padding and discarded),
 * so any schedule that is correct for counts divisible by k is correct for every count, and
 * no count needs a fallback. The CPU executor and the GPU interpreter both implement exactly
 * this. */
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

#endif
