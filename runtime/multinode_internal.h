/* multinode_internal.h — weft on communicators that span nodes, the part without NCCL: what a
 * rank runs of an algorithm cut into phases (which GPU phases its node works in, its NCCL
 * operations per network phase), the node structure rules, the peer window table.
 * multinode_rt_internal.h has the NCCL and communicator side. docs/runtime.md ("Across nodes"). */
#ifndef WEFT_MULTINODE_INTERNAL_H
#define WEFT_MULTINODE_INTERNAL_H

#include "weft_ir.h"

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---- a rank's share of a cut (multinode_rank.c; host code, no NCCL) --------------------- */

/* One NCCL operation of a network phase: cnt scratch chunks at chunk off, to or from peer. */
typedef struct weft_mn_op {
    int32_t peer, send;
    int32_t off, cnt;
} weft_mn_op;

/* An algorithm cut into phases (weft_phase_cut) as one rank runs it. */
typedef struct weft_mn_algo {
    const weft_algo *algo;     /* the original (not owned) */
    const weft_phased *phased; /* its proven cut (not owned) */
    int32_t rank, nphases;
    const weft_algo *const *gpu; /* the cut's GPU phases, what the interpreter plans (the
                                    cut's: they live as long as the registry) */
    uint8_t *active; /* per GPU phase: some rank of this rank's node has a step in it (when none
                        has, the node skips that kernel) */
    int32_t *nops;   /* per network phase: this rank's operations, sends by peer then receives
                        by peer (one per peer and direction: a transfer of the cut) */
    weft_mn_op **ops;
    int32_t *slot; /* per GPU phase: the communicator's index of its plan (set by the attach) */
    int64_t sent_chunks, recv_chunks; /* over all network phases, this rank */
} weft_mn_algo;

/* What rank `rank` runs of a cut: the active flags for its node, its network operations. out is
 * zeroed first; free with weft_mn_algo_free. */
weft_result weft_mn_algo_build(const weft_algo *a, const weft_phased *p, int32_t rank,
                               weft_mn_algo *out);
/* The same for another rank. */
weft_result weft_mn_algo_set_rank(weft_mn_algo *m, int32_t rank);
void weft_mn_algo_free(weft_mn_algo *m);
/* Bytes of one scratch chunk of a call (the count policy's C elements), for the network phases'
 * ncclSend/ncclRecv sizes and offsets. */
size_t weft_mn_chunk_bytes(const weft_algo *a, size_t count, int32_t dtype_bytes);
/* "GPU phase 1 of 3 of 'name'" or "network phase 0 of 2 of 'name'": what the watchdog names. */
void weft_mn_phase_name(const weft_mn_algo *m, int32_t phase, int network, char *buf, size_t len);

/* GPUs per node from NCCL's LSA team of rank `rank` of nranks (size lsa_size, lsa_rank inside,
 * stride lsa_stride). NCCL's device API numbers nodes as weft does (the rail team: nranks /
 * lsa_size teams of stride lsa_size), so the team must be lsa_size consecutive ranks starting at
 * a multiple of lsa_size; otherwise 0 with the reason in why. */
int weft_mn_gpus_per_node(int nranks, int rank, int lsa_rank, int lsa_size, int lsa_stride,
                          char *why, size_t whylen);
/* The window of every rank as rank sees it (win[q], from the device API's peer pointers by world
 * rank, which are addresses only for ranks of its own node): a rank of another node gets rank's
 * own window instead. The interpreter only reads a peer's arrival and abort words through it; a
 * GPU phase's messages never leave the node. */
void weft_mn_peer_table(int32_t nranks, int32_t gpn, int32_t rank, char **win);

#ifdef __cplusplus
}
#endif
#endif
