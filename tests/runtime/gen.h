/* gen.h — schedules built in code for the runtime's tests and the benchmark (ring and direct
 * allreduce with several channels, allgather, reducescatter, alltoall, broadcast, reduce), until
 * the algorithm library provides them. */
#ifndef WEFT_TESTS_GEN_H
#define WEFT_TESTS_GEN_H

#include "weft_ir.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Shapes. `nch` channels; `proto` the wire protocol; `inplace` picks the buffer mode the
 * result is written for (some shapes serve both: see gen.c). */
typedef enum gen_shape {
    GEN_AR_RING,      /* allreduce, ring reduce-scatter + allgather, one tb per channel */
    GEN_AR_DIRECT,    /* allreduce, 2 ranks: send whole input, reduce what arrives (one shot) */
    GEN_AR_DIRECT1,   /* as GEN_AR_DIRECT with send and receive in one tb per channel */
    GEN_AG_RING,      /* allgather ring */
    GEN_AG_DIRECT,    /* allgather, every rank sends its input to every peer */
    GEN_RS_RING,      /* reducescatter ring */
    GEN_A2A_DIRECT,   /* alltoall, every pair directly */
    GEN_BCAST_CHAIN,  /* broadcast along a chain from the root */
    GEN_REDUCE_CHAIN, /* reduce along a chain to the root */
    GEN_AR_ONESHOT,   /* allreduce, any N: every rank sends its input to every peer; the receives
                       * reduce one after another into the output (a chain the runtime fuses) */
    GEN_AR_STAGED,    /* allreduce, any N, out of place: every peer's input lands in scratch
                       * (a tb per peer), one tb copies the input to the output and reduces
                       * each scratch slot into it once its receive is done (uses scratch) */
    GEN_SHAPE_COUNT
} gen_shape;

typedef struct gen_params {
    gen_shape shape;
    int nranks, nch;
    weft_proto proto;
    int inplace;
    int cpc;  /* chunks per channel (GEN_AR_DIRECT*: moved by one step of cnt = cpc) */
    int root; /* rooted shapes */
} gen_params;

/* NULL on allocation failure or parameters the shape does not support. The name describes
 * the parameters. Owned by the caller. */
weft_algo *gen_algo(const gen_params *p);
/* Parses "shape:key=value:..." (keys n, ch, proto, inplace, cpc, root), e.g.
 * "ar_direct:n=2:ch=16:proto=Simple". Returns 0 on success. */
int gen_parse(const char *spec, gen_params *p);
const char *gen_shape_name(gen_shape s);
/* A 2-rank allreduce whose ranks both receive before they send (file "deadlock.xml", steps on
 * lines 11 and 12): a deadlock no FIFO breaks, for the watchdog tests. Owned by the caller. */
weft_algo *gen_deadlock(void);

#ifdef __cplusplus
}
#endif
#endif
