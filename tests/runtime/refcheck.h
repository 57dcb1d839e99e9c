/* refcheck.h — host reference for the runtime's tests: small-integer inputs (every reduction
 * order gives the same bits) and each collective's expected output, computed with the
 * interpreter's own element types and functors. C++17, header only. */
#ifndef WEFT_TESTS_REFCHECK_H
#define WEFT_TESTS_REFCHECK_H

#include "interp.h"

#include <string.h>
#include <vector>

namespace refcheck {
using namespace weft_rt;

/* ---- data ------------------------------------------------------------------------------- */
inline uint32_t mix(uint32_t x) {
    x ^= x >> 16;
    x *= 0x7feb352dU;
    x ^= x >> 15;
    x *= 0x846ca68bU;
    x ^= x >> 16;
    return x;
}

inline int small_val(uint32_t seed, int rank, size_t e, weft_redop op) {
    uint32_t h = mix(seed ^ mix((uint32_t)rank * 0x9e3779b9U ^ mix((uint32_t)e)));
    if (op == WEFT_OP_PROD) {
        static const int v[4] = {-2, -1, 1, 2};
        return v[h & 3];
    }
    return (int)(h % 7) - 3;
}

inline void put(weft_dtype dt, char *p, size_t e, int v) {
    switch (dt) {
    case WEFT_DTYPE_INT8: ((int8_t *)p)[e] = (int8_t)v; break;
    case WEFT_DTYPE_UINT8: ((uint8_t *)p)[e] = (uint8_t)v; break;
    case WEFT_DTYPE_INT32: ((int32_t *)(void *)p)[e] = v; break;
    case WEFT_DTYPE_UINT32: ((uint32_t *)(void *)p)[e] = (uint32_t)v; break;
    case WEFT_DTYPE_INT64: ((int64_t *)(void *)p)[e] = v; break;
    case WEFT_DTYPE_UINT64: ((uint64_t *)(void *)p)[e] = (uint64_t)(int64_t)v; break;
    case WEFT_DTYPE_HALF: ((f16 *)(void *)p)[e] = to_f16((float)v); break;
    case WEFT_DTYPE_FLOAT: ((float *)(void *)p)[e] = (float)v; break;
    case WEFT_DTYPE_DOUBLE: ((double *)(void *)p)[e] = (double)v; break;
    case WEFT_DTYPE_BFLOAT16: ((bf16 *)(void *)p)[e] = to_bf16((float)v); break;
    default: break;
    }
}

/* acc[0..n) = acc op x, with the interpreter's own types and functors. */
using CombineFn = void (*)(char *, const char *, size_t);
template <class T, class Op> inline void combine(char *acc, const char *x, size_t n) {
    for (size_t i = 0; i < n; i++) {
        T a, b;
        memcpy(&a, acc + i * sizeof(T), sizeof(T));
        memcpy(&b, x + i * sizeof(T), sizeof(T));
        a = Op::template apply<T>(a, b);
        memcpy(acc + i * sizeof(T), &a, sizeof(T));
    }
}
inline const CombineFn combine_fns[WEFT_RT_NKERNELS] = {
#define WEFT_X_(i, T, Op) combine<T, Op>,
    WEFT_RT_KERNEL_LIST(WEFT_X_)
#undef WEFT_X_
};

/* Expected output of rank r (oute elements of es bytes), segment by segment as
 * weft_coll_source says; false when the collective leaves rank r's output undefined (reduce
 * and gather off the root). in[q] is rank q's input. */
inline bool expected(weft_coll coll, int n, int r, int root, size_t count, size_t es, int ki,
                     const std::vector<std::vector<char>> &in, std::vector<char> &exp) {
    int32_t from, src;
    if (!weft_coll_source(coll, n, root, r, 0, &from, &src)) return false;
    size_t nseg = (size_t)weft_coll_segs(coll, WEFT_BUF_OUTPUT, n);
    exp.assign(nseg * count * es, 0);
    CombineFn comb = combine_fns[ki];
    for (size_t seg = 0; seg < nseg; seg++) {
        weft_coll_source(coll, n, root, r, (int32_t)seg, &from, &src);
        char *x = exp.data() + seg * count * es;
        size_t at = (size_t)src * count * es;
        memcpy(x, in[from < 0 ? 0 : from].data() + at, count * es);
        for (int q = 1; from < 0 && q < n; q++)
            comb(x, in[q].data() + at, count);
    }
    return true;
}

/* Whether rank r's send buffer `got` (the ine elements of es bytes its input spans) still holds
 * what the caller put there (`in`) wherever a step may not write it (weft_chunk_writable): the
 * whole input out of place, the input outside the output in place, all of a non-root rank's
 * buffer of reduce and gather. True when r has no send buffer in this mode; else the first
 * element that changed in *elem and its input chunk in *chunk. */
inline bool send_untouched(const weft_algo *a, int inplace, int r, size_t count, size_t es,
                           size_t ine, const char *got, const std::vector<char> &in, size_t *elem,
                           int32_t *chunk) {
    if (inplace && !weft_buf_exists(a->coll, a->root, 1, r, WEFT_BUF_INPUT)) return true;
    const int32_t k = weft_algo_chunks_per_seg(a);
    const size_t C = (size_t)weft_chunk_elems((int64_t)count, k);
    for (size_t e = 0; e < ine; e++) {
        int32_t x = (int32_t)(e / count) * k + (int32_t)((e % count) / C);
        if (inplace && weft_chunk_writable(a->coll, a->root, 1, r, k, WEFT_BUF_INPUT, x)) continue;
        if (memcmp(got + e * es, in.data() + e * es, es) != 0) {
            *elem = e, *chunk = x;
            return false;
        }
    }
    return true;
}

} // namespace refcheck
#endif
