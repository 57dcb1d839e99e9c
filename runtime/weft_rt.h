/* weft_rt.h — the communicator beneath weft_runtime.h's attach, select and launch, which
 * select/api.c implements over a registry (not installed): attach to a registry's algorithms and
 * their cuts into phases, what a communicator tells selection, and running one of its
 * algorithms. The communicator's own structure stays in comm_internal.h. */
#ifndef WEFT_RT_H
#define WEFT_RT_H

#include "weft_runtime.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Attaches comms as weft_comm_attach does to algos[0..n), the algorithms of registry reg in its
 * order: phased[i] is algos[i]'s proven cut into phases in a registry made for several nodes of
 * gpn GPUs (NULL where it has none), each replaced by its GPU phases (multinode_launch.c). Every
 * out[i] remembers reg (weft_rt_registry). */
weft_result weft_rt_attach_registry(int ncomms, ncclComm_t *comms, const weft_registry *reg,
                                    const weft_algo *const *algos, const weft_phased *const *phased,
                                    size_t n, int gpn, weft_comm **out, weft_diag *d);
/* The registry c was attached to (NULL: an explicit algorithm list), and per algorithm of it
 * whether it can run on c (selection passes over the rest). */
const weft_registry *weft_rt_registry(const weft_comm *c);
const unsigned char *weft_rt_usable(const weft_comm *c);
/* Whether the call's buffers lie in registered windows at the same offset on every local rank
 * (then peers may read them in place); send and recv have one entry per local rank. */
int weft_rt_call_registered(const weft_comm *c, const weft_call *call, const void *const *send,
                            const void *const *recv);
/* 1 when c must not launch: *res = WEFT_ERR_TIMEOUT the first time a watchdog record is seen
 * (reported once), WEFT_ERR_UNSUPPORTED afterwards. */
int weft_rt_check_broken(weft_comm *c, weft_result *res);
/* Runs algorithm ai of c's registry for call on this process's rank: in phases where the
 * registry cut it (weft_mn_comm_launch), else as one kernel (weft_rt_launch);
 * WEFT_ERR_UNSUPPORTED when it cannot run on c. *served (may be NULL) receives its name. */
weft_result weft_rt_run(weft_comm *c, int ai, const weft_call *call, const void *sendbuff,
                        void *recvbuff, cudaStream_t stream, const char **served);

#ifdef __cplusplus
}
#endif
#endif
