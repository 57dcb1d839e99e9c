/* weft_elemops.h — what one element of a reduction computes, for every data type and op: the
 * single definition the CPU executor uses and the CUDA interpreter mirrors. Plain C, header
 * only, no dependencies beyond weft_semantics.h; device code can include it.
 *
 * - Integers wrap (two's complement, computed in the unsigned type: no undefined behaviour).
 * - float and double use the C operators; min and max behave as fmin/fmax.
 * - half and bfloat16 are computed in float and rounded back to nearest, ties to even: for a
 *   sum or product of two values of those types the float result is exact or lies on the
 *   same side of every rounding boundary, so this equals the correctly rounded operation
 *   (__hadd, __hmul) the GPU performs.
 * - avg combines as sum; weft_elem_div divides by the rank count once the schedule is done
 *   (integer division truncating toward zero for integers, as NCCL's ncclAvg). */
#ifndef WEFT_ELEMOPS_H
#define WEFT_ELEMOPS_H

#include "weft_semantics.h"

#include <stdint.h>
#include <string.h>

/* ---- half and bfloat16 ------------------------------------------------------------------ */
WEFT_HD uint32_t weft_f32_bits(float f) {
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    return u;
}
WEFT_HD float weft_f32_from_bits(uint32_t u) {
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

WEFT_HD float weft_half_to_float(uint16_t h) {
    uint32_t sign = (uint32_t)(h & 0x8000u) << 16, e = (h >> 10) & 0x1fu, m = h & 0x3ffu;
    if (e == 0) {
        /* zero or subnormal: m * 2^-24, exact in float */
        float v = (float)m * 5.9604644775390625e-8f;
        return sign ? -v : v;
    }
    if (e == 31) return weft_f32_from_bits(sign | 0x7f800000u | (m << 13));
    return weft_f32_from_bits(sign | ((e + 112u) << 23) | (m << 13));
}

/* Round to nearest, ties to even; overflow gives infinity, NaN stays NaN (quiet). */
WEFT_HD uint16_t weft_float_to_half(float f) {
    uint32_t x = weft_f32_bits(f);
    uint32_t sign = (x >> 16) & 0x8000u, ax = x & 0x7fffffffu;
    if (ax >= 0x7f800000u) return (uint16_t)(sign | (ax > 0x7f800000u ? 0x7e00u : 0x7c00u));
    if (ax >= 0x47800000u) return (uint16_t)(sign | 0x7c00u); /* >= 65536: past the last tie */
    if (ax < 0x38800000u) {                                   /* below 2^-14: subnormal */
        if (ax < 0x33000000u) return (uint16_t)sign;          /* <= 2^-25 rounds to zero */
        uint32_t e = ax >> 23, m = (ax & 0x7fffffu) | 0x800000u;
        uint32_t shift = 126u - e; /* 14 .. 24 */
        uint32_t r = m >> shift, rem = m & ((1u << shift) - 1u), half = 1u << (shift - 1u);
        if (rem > half || (rem == half && (r & 1u))) r++;
        return (uint16_t)(sign | r);
    }
    uint32_t v = ax - 0x38000000u; /* rebias the exponent from 127 to 15 */
    uint32_t h = v >> 13, rem = v & 0x1fffu;
    if (rem > 0x1000u || (rem == 0x1000u && (h & 1u))) h++; /* a carry may reach infinity */
    return (uint16_t)(sign | h);
}

WEFT_HD float weft_bf16_to_float(uint16_t b) {
    return weft_f32_from_bits((uint32_t)b << 16);
}

WEFT_HD uint16_t weft_float_to_bf16(float f) {
    uint32_t x = weft_f32_bits(f);
    if ((x & 0x7fffffffu) > 0x7f800000u) return (uint16_t)((x >> 16) | 0x40u);
    x += 0x7fffu + ((x >> 16) & 1u);
    return (uint16_t)(x >> 16);
}

/* ---- one element ---------------------------------------------------------------------- */
#define WEFT_ELEM_INT_(name, T, UT)                                                                \
    WEFT_HD T weft_elem_##name(weft_redop op, T a, T b) {                                          \
        switch (op) {                                                                              \
        case WEFT_OP_PROD: return (T)((UT)((UT)a * (UT)b));                                        \
        case WEFT_OP_MIN: return a < b ? a : b;                                                    \
        case WEFT_OP_MAX: return a > b ? a : b;                                                    \
        case WEFT_OP_SUM:                                                                          \
        case WEFT_OP_AVG:                                                                          \
        case WEFT_OP_COUNT: break;                                                                 \
        }                                                                                          \
        return (T)((UT)((UT)a + (UT)b)); /* sum; avg sums (weft_elem_div ends it) */               \
    }
WEFT_ELEM_INT_(i8, int8_t, uint8_t)
WEFT_ELEM_INT_(u8, uint8_t, uint8_t)
WEFT_ELEM_INT_(i32, int32_t, uint32_t)
WEFT_ELEM_INT_(u32, uint32_t, uint32_t)
WEFT_ELEM_INT_(i64, int64_t, uint64_t)
WEFT_ELEM_INT_(u64, uint64_t, uint64_t)
#undef WEFT_ELEM_INT_

/* min and max as fmin/fmax: a NaN operand yields the other one */
#define WEFT_ELEM_FLOAT_(name, T)                                                                  \
    WEFT_HD T weft_elem_##name(weft_redop op, T a, T b) {                                          \
        switch (op) {                                                                              \
        case WEFT_OP_PROD: return a * b;                                                           \
        case WEFT_OP_MIN: return b != b ? a : a != a ? b : a < b ? a : b;                          \
        case WEFT_OP_MAX: return b != b ? a : a != a ? b : a > b ? a : b;                          \
        case WEFT_OP_SUM:                                                                          \
        case WEFT_OP_AVG:                                                                          \
        case WEFT_OP_COUNT: break;                                                                 \
        }                                                                                          \
        return a + b; /* sum; avg sums (weft_elem_div ends it) */                                  \
    }
WEFT_ELEM_FLOAT_(f32, float)
WEFT_ELEM_FLOAT_(f64, double)
#undef WEFT_ELEM_FLOAT_
WEFT_HD uint16_t weft_elem_f16(weft_redop op, uint16_t a, uint16_t b) {
    return weft_float_to_half(weft_elem_f32(op, weft_half_to_float(a), weft_half_to_float(b)));
}
WEFT_HD uint16_t weft_elem_bf16(weft_redop op, uint16_t a, uint16_t b) {
    return weft_float_to_bf16(weft_elem_f32(op, weft_bf16_to_float(a), weft_bf16_to_float(b)));
}

/* ---- arrays (host loops over the scalar definitions) ---------------------------------- */
/* dst[i] = a[i] (op) b[i] for n elements of type t; dst may alias a or b. */
WEFT_HD void weft_elem_reduce(weft_dtype t, weft_redop op, void *dst, const void *a, const void *b,
                              int64_t n) {
#define WEFT_LOOP_(T, f)                                                                           \
    for (int64_t i = 0; i < n; i++) {                                                              \
        T x, y;                                                                                    \
        memcpy(&x, (const char *)a + i * (int64_t)sizeof(T), sizeof x);                            \
        memcpy(&y, (const char *)b + i * (int64_t)sizeof(T), sizeof y);                            \
        x = f(op, x, y);                                                                           \
        memcpy((char *)dst + i * (int64_t)sizeof(T), &x, sizeof x);                                \
    }                                                                                              \
    break;
    switch (t) {
    case WEFT_DTYPE_INT8: WEFT_LOOP_(int8_t, weft_elem_i8)
    case WEFT_DTYPE_UINT8: WEFT_LOOP_(uint8_t, weft_elem_u8)
    case WEFT_DTYPE_INT32: WEFT_LOOP_(int32_t, weft_elem_i32)
    case WEFT_DTYPE_UINT32: WEFT_LOOP_(uint32_t, weft_elem_u32)
    case WEFT_DTYPE_INT64: WEFT_LOOP_(int64_t, weft_elem_i64)
    case WEFT_DTYPE_UINT64: WEFT_LOOP_(uint64_t, weft_elem_u64)
    case WEFT_DTYPE_HALF: WEFT_LOOP_(uint16_t, weft_elem_f16)
    case WEFT_DTYPE_FLOAT: WEFT_LOOP_(float, weft_elem_f32)
    case WEFT_DTYPE_DOUBLE: WEFT_LOOP_(double, weft_elem_f64)
    case WEFT_DTYPE_BFLOAT16: WEFT_LOOP_(uint16_t, weft_elem_bf16)
    case WEFT_DTYPE_COUNT: break; /* not a data type */
    }
#undef WEFT_LOOP_
}

/* x[i] /= nranks: the end of ncclAvg. */
WEFT_HD void weft_elem_div(weft_dtype t, void *x, int64_t n, int32_t nranks) {
#define WEFT_DIV_(T, expr)                                                                         \
    for (int64_t i = 0; i < n; i++) {                                                              \
        T v;                                                                                       \
        memcpy(&v, (char *)x + i * (int64_t)sizeof(T), sizeof v);                                  \
        v = (expr);                                                                                \
        memcpy((char *)x + i * (int64_t)sizeof(T), &v, sizeof v);                                  \
    }                                                                                              \
    break;
    switch (t) {
    case WEFT_DTYPE_INT8: WEFT_DIV_(int8_t, (int8_t)(v / nranks))
    case WEFT_DTYPE_UINT8: WEFT_DIV_(uint8_t, (uint8_t)(v / (uint32_t)nranks))
    case WEFT_DTYPE_INT32: WEFT_DIV_(int32_t, (int32_t)(v / nranks))
    case WEFT_DTYPE_UINT32: WEFT_DIV_(uint32_t, v / (uint32_t)nranks)
    case WEFT_DTYPE_INT64: WEFT_DIV_(int64_t, v / nranks)
    case WEFT_DTYPE_UINT64: WEFT_DIV_(uint64_t, v / (uint64_t)nranks)
    case WEFT_DTYPE_HALF:
        WEFT_DIV_(uint16_t, weft_float_to_half(weft_half_to_float(v) / (float)nranks))
    case WEFT_DTYPE_FLOAT: WEFT_DIV_(float, v / (float)nranks)
    case WEFT_DTYPE_DOUBLE: WEFT_DIV_(double, v / (double)nranks)
    case WEFT_DTYPE_BFLOAT16:
        WEFT_DIV_(uint16_t, weft_float_to_bf16(weft_bf16_to_float(v) / (float)nranks))
    case WEFT_DTYPE_COUNT: break; /* not a data type */
    }
#undef WEFT_DIV_
}

#endif
