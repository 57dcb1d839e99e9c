/* ops.h — element types and reduction functors of the interpreter, shared by the CUDA kernels
 * and the host emulation that tests them (there half and bfloat16 are computed through float
 * and rounded to nearest even with weft_elemops.h's conversions, which equals the GPU's
 * correctly rounded result). C++17. */
#ifndef WEFT_RT_OPS_H
#define WEFT_RT_OPS_H

#include "weft_elemops.h"

#include <math.h>
#include <stdint.h>
#include <string.h>

#if defined(__CUDACC__)
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#define WEFT_DEV    __device__ __forceinline__
#define WEFT_UNROLL _Pragma("unroll")
#else
#define WEFT_DEV inline
#define WEFT_UNROLL
#endif

namespace weft_rt {

#if defined(__CUDACC__)
using f16 = __half;
using bf16 = __nv_bfloat16;
#else
struct f16 {
    uint16_t x;
};
struct bf16 {
    uint16_t x;
};
inline float to_float(f16 h) {
    return weft_half_to_float(h.x);
}
inline f16 to_f16(float f) {
    return f16{weft_float_to_half(f)};
}
inline float to_float(bf16 b) {
    return weft_bf16_to_float(b.x);
}
inline bf16 to_bf16(float f) {
    return bf16{weft_float_to_bf16(f)};
}
/* Through float, rounded back, as the GPU's half and bfloat16 arithmetic. */
#define WEFT_HOST_HALF_OPS_(T, TO)                                                                 \
    inline T operator+(T a, T b) {                                                                 \
        return TO(to_float(a) + to_float(b));                                                      \
    }                                                                                              \
    inline T operator*(T a, T b) {                                                                 \
        return TO(to_float(a) * to_float(b));                                                      \
    }                                                                                              \
    inline bool operator<(T a, T b) {                                                              \
        return to_float(a) < to_float(b);                                                          \
    }
WEFT_HOST_HALF_OPS_(f16, to_f16)
WEFT_HOST_HALF_OPS_(bf16, to_bf16)
#undef WEFT_HOST_HALF_OPS_
#endif

/* max/min: floats as NCCL (fmax/fmin), everything else by comparison. */
template <class T> WEFT_DEV T vmax(T a, T b) {
    return a < b ? b : a;
}
template <class T> WEFT_DEV T vmin(T a, T b) {
    return b < a ? b : a;
}
/* A floating type's max and min through its own functions (NaN as NCCL treats it). */
#define WEFT_VMINMAX_(T, MAX, MIN)                                                                 \
    template <> WEFT_DEV T vmax<T>(T a, T b) {                                                     \
        return MAX(a, b);                                                                          \
    }                                                                                              \
    template <> WEFT_DEV T vmin<T>(T a, T b) {                                                     \
        return MIN(a, b);                                                                          \
    }
WEFT_VMINMAX_(float, fmaxf, fminf)
WEFT_VMINMAX_(double, fmax, fmin)
#if defined(__CUDACC__)
WEFT_VMINMAX_(f16, __hmax, __hmin)
WEFT_VMINMAX_(bf16, __hmax, __hmin)
#endif
#undef WEFT_VMINMAX_

/* Functors. Sum and product of signed integers run on the unsigned type of the same width
 * (identical bits, no undefined overflow). */
struct OpCopy {
    template <class T> static WEFT_DEV T apply(T a, T) {
        return a;
    }
};
struct OpSum {
    template <class T> static WEFT_DEV T apply(T a, T b) {
        return (T)(a + b);
    }
};
struct OpProd {
    template <class T> static WEFT_DEV T apply(T a, T b) {
        return (T)(a * b);
    }
};
struct OpMax {
    template <class T> static WEFT_DEV T apply(T a, T b) {
        return vmax<T>(a, b);
    }
};
struct OpMin {
    template <class T> static WEFT_DEV T apply(T a, T b) {
        return vmin<T>(a, b);
    }
};

} // namespace weft_rt
#endif
