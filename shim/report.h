/* report.h — WEFT_REPORT=1: which implementation served each communicator's calls, counted per
 * call and printed as a table per collective when the communicator is destroyed (at exit for
 * the communicators never destroyed). */
#ifndef WEFT_SHIM_REPORT_H
#define WEFT_SHIM_REPORT_H

#include "weft_runtime.h"

/* Whether WEFT_REPORT=1 (read once; cheap on every call after the first). */
int shim_report_enabled(void);

/* One call on comm: its collective, bytes as selection counts them (or count x type size while
 * the rank count is unknown: nranks < 1), launch mode (a weft_launch, or -1 when the call never
 * reached selection), and the algorithm that served it or, with served NULL, why NCCL did.
 * rank and nranks: -1 when unknown. Strings are copied. */
void shim_report_call(ncclComm_t comm, int rank, int nranks, weft_coll coll,
                      unsigned long long bytes, int launch, const char *served, const char *why);

/* Prints comm's table (how: "ncclCommDestroy", ...) and forgets it; nothing when it made no
 * call. */
void shim_report_end(ncclComm_t comm, const char *how);

#endif
