/* emu_cta_hop.cc — the one-hop kernel (runtime/hop.h) of every kernel slot on the host platform. */
#include "emu_internal.h"

namespace weft_emu {
using namespace weft_rt;
const HopFn cta_hop[WEFT_RT_NKERNELS] = {
#define WEFT_X_(i, T, Op) hop_thread<T, Op>,
    WEFT_RT_KERNEL_LIST(WEFT_X_)
#undef WEFT_X_
};
} // namespace weft_emu
