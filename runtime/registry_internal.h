/* registry_internal.h — what the runtime's attach uses from the registry beyond weft_runtime.h. */
#ifndef WEFT_REGISTRY_INTERNAL_H
#define WEFT_REGISTRY_INTERNAL_H

#include "weft_runtime.h"

/* The algorithms of base for nranks-rank communicators, in base's order, as a new registry owned
 * by the caller: every algorithm of base with nranks ranks, and every .weft source of base that
 * declares `param N` (the library's convention for the rank count) compiled again with N set to
 * nranks, checked like any loaded file. A rooted source that also declares `param ROOT` is
 * compiled once per root (for up to WEFT_REGISTRY_MAX_ROOTED_RANKS ranks; above, only its own
 * root). A source whose `require`s rule an instance out gets one INFO entry in d; other failures
 * are reported like bad files (errors, then a note). libweft_nccl.so builds one per rank count it
 * meets, so that a folder of sources serves every job size and root. */
#define WEFT_REGISTRY_MAX_ROOTED_RANKS 16
weft_result weft_registry_for_ranks(const weft_registry *base, int nranks, weft_registry **out,
                                    weft_diag *d);

/* The algorithms of base for a communicator of nranks ranks in nodes of gpus_per_node GPUs
 * (ranks n*G .. n*G+G-1 on node n: NCCL's LSA teams; gpus_per_node == nranks is one node), as
 * libweft_nccl.so uses them: like weft_registry_for_ranks, and sources that declare `param G`
 * (the library's convention for GPUs per node) compiled with G = gpus_per_node too. Across
 * several nodes, only algorithms written for them serve: XML files with nranks ranks (the user
 * chose them for this job) and sources with a parameter G; other sources get one INFO entry and
 * NCCL serves what they would fit. Each of those algorithms is cut into phases
 * (weft_phase_cut) and the cut proven (weft_phase_verify) before it joins; one whose cut has
 * more than WEFT_REGISTRY_MAX_PHASES GPU phases is left out with an INFO entry. */
#define WEFT_REGISTRY_MAX_PHASES 64
weft_result weft_registry_for_nodes(const weft_registry *base, int nranks, int gpus_per_node,
                                    weft_registry **out, weft_diag *d);
/* The gpus_per_node a registry was made for (0: weft_registry_load or _for_ranks). */
int weft_registry_gpus_per_node(const weft_registry *r);
/* Algorithm i's proven cut into phases in a registry for several nodes; NULL otherwise. Owned by
 * the registry. */
const weft_phased *weft_registry_phases(const weft_registry *r, size_t i);

#endif
