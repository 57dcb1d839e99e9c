/* registry_internal.h — what the runtime's attach uses from the registry beyond weft_runtime.h. */
#ifndef WEFT_REGISTRY_INTERNAL_H
#define WEFT_REGISTRY_INTERNAL_H

#include "weft_runtime.h"

/* The algorithms of base for nranks-rank communicators, in base's order, as a new registry owned
 * by the caller: every algorithm of base with nranks ranks, and every .weft source of base that
 * declares `param N` (the library's convention for the rank count) compiled again with N set to
 * nranks, checked like any loaded file. A source whose `require`s rule nranks out gets one INFO
 * entry in d; other failures are reported like bad files (errors, then a note). libweft_nccl.so
 * builds one per rank count it meets, so that a folder of sources serves every job size. */
weft_result weft_registry_for_ranks(const weft_registry *base, int nranks, weft_registry **out,
                                    weft_diag *d);

#endif
