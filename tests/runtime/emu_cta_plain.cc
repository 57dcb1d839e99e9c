/* emu_cta_plain.cc — the interpreter's untraced variant of every kernel on the host platform. */
#include "emu_internal.h"

namespace weft_emu {
using namespace weft_rt;
const CtaFn cta_plain[WEFT_RT_NKERNELS] = {
#define WEFT_X_(i, T, Op) cta_thread<false, T, Op>,
    WEFT_RT_KERNEL_LIST(WEFT_X_)
#undef WEFT_X_
};
} // namespace weft_emu
