/* multinode_rt_internal.h — weft on communicators that span nodes, the NCCL and communicator
 * side: the node structure from NCCL, weft's own communicator for the network phases, a network
 * phase as an NCCL group, one call's sequence of phases, and what attach and launch do with a
 * registry made for several nodes. docs/runtime.md ("Across nodes"). */
#ifndef WEFT_MULTINODE_RT_INTERNAL_H
#define WEFT_MULTINODE_RT_INTERNAL_H

#include "multinode_internal.h"
#include "weft_runtime.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- NCCL (multinode.c; weft_mn_query is public: weft_runtime.h) ------------------------ */
/* weft's own communicator for the network phases of each of comms: ncclCommSplit with one color
 * and the rank as key, grouped (collective: every rank of every one of comms calls it). out[i]
 * is NULL where NCCL failed (reported in d). Released with the api's CommDestroy, or CommAbort
 * when peers may be gone. */
weft_result weft_mn_split(const weft_nccl_api *api, int n, const ncclComm_t *comms, ncclComm_t *out,
                          weft_diag *d);
/* Network phase ph of m on stream: one NCCL group of ncclSend/ncclRecv of this rank's operations
 * (bytes, between scratch + off * chunk_bytes areas) on net. A rank without operations in the
 * phase issues nothing. */
weft_result weft_mn_net_phase(const weft_nccl_api *api, ncclComm_t net, const weft_mn_algo *m,
                              int32_t ph, char *scratch, size_t chunk_bytes, cudaStream_t stream,
                              weft_diag *d);
/* Launches GPU phase `slot` (a plan of the communicator) on stream; ctx is the caller's. */
typedef weft_result (*weft_mn_gpu_fn)(void *ctx, int32_t slot, cudaStream_t stream);
/* Observes the stream between phases (the watchdog's marks); may be NULL. `network`: the phase
 * just enqueued is network phase ph, else GPU phase ph. */
typedef void (*weft_mn_mark_fn)(void *ctx, int32_t ph, int network, cudaStream_t stream);
/* One call of m: GPU phase 0, network phase 0, GPU phase 1, ..., all enqueued on stream, never
 * waiting for the device (capturable: kernels and NCCL operations both are). The kernel of a
 * phase the node does not work in is not launched. *done receives the number of phases
 * enqueued (GPU and network, in order) so that a failure names the first one that was not. */
weft_result weft_mn_run(const weft_nccl_api *api, ncclComm_t net, const weft_mn_algo *m,
                        weft_mn_gpu_fn gpu, weft_mn_mark_fn mark, void *ctx, char *scratch,
                        size_t chunk_bytes, cudaStream_t stream, int32_t *done, weft_diag *d);

/* ---- on a communicator (multinode_comm.c, multinode_launch.c; CUDA builds) -------------- *
 * What weft_comm_attach and weft_comm_launch (api.c) and comm.c's attach, watchdog, detach and
 * abort do for a registry made for several nodes (docs/runtime.md, "Across nodes", the hooks). */
/* A communicator rank's state across nodes (multinode_comm.c; one call reads it). */
typedef struct weft_mn_comm {
    int rank, nranks, gpn, dev;
    size_t nreg;         /* algorithms of the registry */
    weft_mn_algo *algos; /* nreg; nphases == 0 where an algorithm is not phased */
    const weft_nccl_api *api;
    ncclComm_t net; /* weft's own communicator (a split of the application's) */
    /* the watchdog: the marks (events) of the oldest eager call not known complete */
    int watch_ai;      /* its algorithm, -1: nothing watched */
    int32_t nmarks;    /* marks recorded for it: 2p after GPU phase p, 2p+1 after network p */
    cudaEvent_t *ev;   /* 2 * max phases */
    uint64_t *seen_ns; /* per mark: when it was first seen complete (0: not yet) */
    int32_t maxphases;
} weft_mn_comm;

/* For the algorithms of a registry made for several nodes (weft_registry_for_nodes with gpn, fewer
 * GPUs per node than ranks; phased[i] the cut of algos[i]): the algorithms a communicator plans,
 * in the registry's order, each phased one replaced by its GPU phase 0 and its other GPU phases
 * appended (the same list on every rank), and the state of a rank of it (bound to its rank with
 * weft_mn_comm_bind). *out NULL when the registry is for one node (then *list is algos). *list
 * is owned by the caller (free), its algorithms by *out. */
weft_result weft_mn_comm_new(const weft_algo *const *algos, const weft_phased *const *phased,
                             size_t n, int gpn, weft_mn_comm **out, const weft_algo ***list,
                             size_t *nlist, weft_diag *d);
/* The NCCL operations of rank `rank` (the attach calls it once the rank is known). */
weft_result weft_mn_comm_bind(weft_mn_comm *m, int rank);
/* GPUs per node (the LSA team size the attach must find). */
int weft_mn_comm_gpus_per_node(const weft_mn_comm *m);
/* After every rank attached: weft's own communicators for the network phases (collective over
 * cs[0..n)); every rank learns whether all succeeded (an allreduce on the application's
 * communicators), and on failure all of them return the error. */
weft_result weft_mn_comm_connect(int n, weft_comm **cs, weft_mn_comm **ms, weft_diag *d);
/* Whether registry algorithm ai runs in phases. */
int weft_mn_comm_phased(const weft_mn_comm *m, int ai);
/* One call of phased algorithm ai (see weft_rt_launch for the rest; avg: sum in the phases, the
 * scaling pass after the last). Scratch (with staging) is sized before anything is enqueued, so
 * a call under capture that would need more is refused whole (WEFT_ERR_UNSUPPORTED). */
weft_result weft_mn_comm_launch(weft_comm *c, weft_mn_comm *m, int ai, const weft_call *call,
                                const void *sendbuff, void *recvbuff, cudaStream_t stream);
/* The watchdog: "GPU phase p of P of 'name'" for plan index slot (0 when slot is not a phase),
 * and a network phase that has not completed timeout_ns after the GPU phase before it did
 * (eager calls; a stalled call keeps being watched until it completes): WEFT_ERR_TIMEOUT with
 * its description, naming the peers it waits for. Never blocks. */
int weft_mn_comm_describe(const weft_mn_comm *m, int slot, char *buf, size_t len);
weft_result weft_mn_comm_check(weft_mn_comm *m, int64_t timeout_ns, char *msg, size_t len);
/* Frees m; destroys weft's communicator (abort: aborts it, when peers may be gone). */
void weft_mn_comm_free(const weft_nccl_api *api, weft_mn_comm *m, int abort);

#ifdef __cplusplus
}
#endif
#endif
