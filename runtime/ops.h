/* ops.h — element types and reduction functors of the interpreter, shared by the CUDA kernels
 * and the host emulation that tests them (there half and bfloat16 are computed through float
 * and rounded to nearest even, which equals the GPU's correctly rounded result). C++17. */
#ifndef WEFT_RT_OPS_H
#define WEFT_RT_OPS_H

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
inline float bits_to_float(uint32_t u) {
    float f;
    memcpy(&f, &u, 4);
    return f;
}
inline uint32_t float_to_bits(float f) {
    uint32_t u;
    memcpy(&u, &f, 4);
    return u;
}
struct f16 {
    uint16_t x;
};
struct bf16 {
    uint16_t x;
};
inline float to_float(f16 h) {
    uint32_t s = (uint32_t)(h.x >> 15) << 31, e = (h.x >> 10) & 31, m = h.x & 1023;
    if (e == 31) return bits_to_float(s | 0x7f800000u | (m << 13));
    if (e == 0) {
        float f = ldexpf((float)m, -24);
        return s ? -f : f;
    }
    return bits_to_float(s | ((e + 112) << 23) | (m << 13));
}
inline f16 to_f16(float f) {
    uint32_t u = float_to_bits(f), s = (u >> 16) & 0x8000u;
    uint32_t a = u & 0x7fffffffu;
    if (a > 0x7f800000u) return f16{(uint16_t)(s | 0x7e00u)};
    if (a >= 0x477ff000u) return f16{(uint16_t)(s | 0x7c00u)}; /* rounds to infinity */
    if (a < 0x38800000u) {                                     /* subnormal or zero in half */
        float af = bits_to_float(a);
        float q = af * 16777216.0f; /* units of 2^-24, exact */
        float r = nearbyintf(q);    /* ties to even in the default rounding mode */
        return f16{(uint16_t)(s | (uint32_t)r)};
    }
    uint32_t e = (a >> 23) - 112, m = a & 0x7fffffu;
    uint32_t h = (e << 10) | (m >> 13), rest = m & 0x1fffu;
    if (rest > 0x1000u || (rest == 0x1000u && (h & 1))) h++;
    return f16{(uint16_t)(s | h)};
}
inline float to_float(bf16 b) {
    return bits_to_float((uint32_t)b.x << 16);
}
inline bf16 to_bf16(float f) {
    uint32_t u = float_to_bits(f);
    if ((u & 0x7fffffffu) > 0x7f800000u) return bf16{(uint16_t)((u >> 16) | 0x40u)};
    u += 0x7fffu + ((u >> 16) & 1);
    return bf16{(uint16_t)(u >> 16)};
}
inline f16 operator+(f16 a, f16 b) {
    return to_f16(to_float(a) + to_float(b));
}
inline f16 operator*(f16 a, f16 b) {
    return to_f16(to_float(a) * to_float(b));
}
inline bool operator<(f16 a, f16 b) {
    return to_float(a) < to_float(b);
}
inline bf16 operator+(bf16 a, bf16 b) {
    return to_bf16(to_float(a) + to_float(b));
}
inline bf16 operator*(bf16 a, bf16 b) {
    return to_bf16(to_float(a) * to_float(b));
}
inline bool operator<(bf16 a, bf16 b) {
    return to_float(a) < to_float(b);
}
#endif

/* max/min: floats as NCCL (fmax/fmin), everything else by comparison. */
template <class T> WEFT_DEV T vmax(T a, T b) {
    return a < b ? b : a;
}
template <class T> WEFT_DEV T vmin(T a, T b) {
    return b < a ? b : a;
}
template <> WEFT_DEV float vmax<float>(float a, float b) {
    return fmaxf(a, b);
}
template <> WEFT_DEV float vmin<float>(float a, float b) {
    return fminf(a, b);
}
template <> WEFT_DEV double vmax<double>(double a, double b) {
    return fmax(a, b);
}
template <> WEFT_DEV double vmin<double>(double a, double b) {
    return fmin(a, b);
}
#if defined(__CUDACC__)
template <> WEFT_DEV f16 vmax<f16>(f16 a, f16 b) {
    return __hmax(a, b);
}
template <> WEFT_DEV f16 vmin<f16>(f16 a, f16 b) {
    return __hmin(a, b);
}
template <> WEFT_DEV bf16 vmax<bf16>(bf16 a, bf16 b) {
    return __hmax(a, b);
}
template <> WEFT_DEV bf16 vmin<bf16>(bf16 a, bf16 b) {
    return __hmin(a, b);
}
#endif

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
