/* backend_runtime.c — the runtime backend of libweft_nccl.so: weft's GPU runtime (weft_runtime.h).
 */
#include "shim_internal.h"

const shim_backend weft_shim_backend = {
    "weft GPU runtime", weft_runtime_set_nccl_api, weft_comm_attach,
    weft_comm_detach,   weft_comm_abort,           weft_comm_select,
    weft_comm_launch,   weft_comm_window_register, weft_comm_window_deregister};
