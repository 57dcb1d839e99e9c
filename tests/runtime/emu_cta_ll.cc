/* emu_cta_ll.cc — the latency kernel (the interpreter for LL calls alone) of every kernel slot on
 * the host platform. */
#include "emu_internal.h"

namespace weft_emu {
using namespace weft_rt;
const CtaFn cta_ll[WEFT_RT_NKERNELS] = {
#define WEFT_X_(i, T, Op) cta_thread<false, T, Op, true>,
    WEFT_RT_KERNEL_LIST(WEFT_X_)
#undef WEFT_X_
};
} // namespace weft_emu
