/* rgen.h — random MSCCL schedules for differential fuzzing: every runnable collective (rooted
 * ones included), 1-3 chunks per segment, scratch, several tbs and channels per peer,
 * dependencies (nops for the extra ones), in and out of place, Simple, LL and LL128. Each is a
 * data flow built to deliver every output chunk its value (random trees of messages, reduction
 * trees with every step type, temporaries in scratch and in output chunks that are overwritten
 * later), emitted in a random interleaving, so that most verify; the verifier decides which do. */
#ifndef WEFT_TESTS_RGEN_H
#define WEFT_TESTS_RGEN_H

#include "weft_ir.h"

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct rgen_opts {
    int min_ranks, max_ranks; /* 2..4 by default; at most 8 */
    int max_k;                /* chunks per segment, 1..max_k (default 3, at most 4) */
    int max_channels;         /* default 2 */
    /* Percent of schedules allowed to store a temporary where NCCL never writes (a non-root
     * rank's send buffer, the input outside the output): the verifier must refuse those. */
    int unsafe_pct;
} rgen_opts;

void rgen_opts_init(rgen_opts *o);

/* The schedule of one seed (the same seed and options give the same schedule), named
 * "rgen-<seed>"; NULL when this seed's construction gave up (it is counted, not an error) or on
 * allocation failure. Owned by the caller. */
weft_algo *rgen_algo(uint64_t seed, const rgen_opts *o);

#ifdef __cplusplus
}
#endif
#endif
