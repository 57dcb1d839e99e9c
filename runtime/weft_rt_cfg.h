/* weft_rt_cfg.h — what the layers above the runtime ask of its configuration (not installed; no
 * CUDA or NCCL): the FIFO depth the registry verifies with, and whether `weft env` should flag a
 * value, both through the runtime's own defaults and parsers (cfg.c) so that neither restates
 * them. */
#ifndef WEFT_RT_CFG_H
#define WEFT_RT_CFG_H

#include "weft_ir.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Messages a connection of a's protocol buffers (the protocol it runs as) under the runtime's
 * defaults with WEFT_FIFO applied: a schedule that needs more could stall on the GPU. */
int32_t weft_rt_fifo_slots(const weft_algo *a);
/* WEFT_OK when the runtime's parser accepts value for variable id (WEFT_FIFO, WEFT_COLLAPSE; any
 * value of the others), else an error with the reason in why, as attach would ignore it. */
weft_result weft_rt_env_check(weft_env_id id, const char *value, char *why, size_t whylen);

#ifdef __cplusplus
}
#endif
#endif
