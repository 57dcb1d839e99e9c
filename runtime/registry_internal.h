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

#endif
