/* emu_cta_traced.cc — the interpreter's tracing variant of every kernel on the host platform. */
#include "emu_internal.h"

namespace weft_emu {
using namespace weft_rt;
const CtaFn cta_traced[WEFT_RT_NKERNELS] = {
#define WEFT_X_(i, T, Op) cta_thread<true, T, Op>,
    WEFT_RT_KERNEL_LIST(WEFT_X_)
#undef WEFT_X_
};
} // namespace weft_emu
