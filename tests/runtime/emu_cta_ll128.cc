/* emu_cta_ll128.cc — the LL128 kernel (the interpreter for untraced LL128 calls) of every kernel
 * slot on the host platform: a thread a line, and eight threads a line as on the GPU. */
#include "emu_internal.h"

namespace weft_emu {
using namespace weft_rt;
const CtaFn cta_ll128[WEFT_RT_NKERNELS] = {
#define WEFT_X_(i, T, Op) cta_thread<false, T, Op, false, true>,
    WEFT_RT_KERNEL_LIST(WEFT_X_)
#undef WEFT_X_
};
const CtaFn cta_ll128w[WEFT_RT_NKERNELS] = {
#define WEFT_X_(i, T, Op) cta_thread<false, T, Op, false, true, HostPlat8>,
    WEFT_RT_KERNEL_LIST(WEFT_X_)
#undef WEFT_X_
};
} // namespace weft_emu
