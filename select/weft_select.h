/* weft_select.h — selection beyond weft_runtime.h, for weft's own callers (the shim, the CLI,
 * weft tune; not installed): registries for a node shape and with -D defines, and how selection
 * decided, so that they say what selection did from its own code. */
#ifndef WEFT_SELECT_H
#define WEFT_SELECT_H

#include "weft_runtime.h"

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* weft_registry_for_ranks is public (weft_runtime.h). */
/* As weft_registry_for_ranks without the table, every source compiled with those of the
 * NAME=VALUE defines whose parameter it declares (weft tune -D). */
weft_result weft_registry_for_ranks_defines(const weft_registry *base, int nranks,
                                            const char *const *defines, size_t ndefines,
                                            weft_registry **out, weft_diag *d);
/* The -D defines beyond N and ROOT algorithm i was compiled with ("" for none). */
const char *weft_registry_recipe(const weft_registry *r, size_t i);

/* weft_registry_load without looking for a tuning table. */
#define WEFT_REGISTRY_NO_TABLE 1
weft_result weft_registry_load_ex(weft_registry *r, const char *paths, int flags, weft_diag *d);

/* weft_registry_select over the algorithms i with usable[i] != 0 (NULL: all): those that can
 * run on a communicator (weft_comm_select). */
int weft_registry_select_usable(const weft_registry *r, const weft_call *c,
                                const unsigned char *usable, const char **why);
#define WEFT_SELECT_WHY_UNUSABLE                                                                   \
    "the algorithms that fit cannot run on this communicator (WEFT_DEBUG=INFO at attach says why)"

/* How selection decided a call: the basis on which the chosen algorithm won. Among the
 * algorithms that fit a call in their own size ranges, the first of these that tells them apart
 * decides: the cost model's estimated time (when weft has one), then the fewest bytes sent
 * across the network (computed from the schedule's cut into phases; 0 on one node), then load
 * order (folders as listed, files by name). X(id, text) */
#define WEFT_SELECT_BASES(X)                                                                       \
    X(NONE, "no algorithm serves it")                                                              \
    X(NAMED, "weft_call.algo names it")                                                            \
    X(TABLE, "the tuning table names it for this size")                                            \
    X(ONLY, "the only algorithm that fits the call in its own size range")                         \
    X(ESTIMATE, "the lowest estimated time (cost model)")                                          \
    X(NETWORK, "the fewest bytes across the network")                                              \
    X(ORDER, "the first in load order (folders as listed, files by name): they send the same "     \
             "bytes across the network")

typedef enum weft_select_basis {
#define WEFT_X_(id, s) WEFT_SELECT_##id,
    WEFT_SELECT_BASES(WEFT_X_)
#undef WEFT_X_
        WEFT_SELECT_BASIS_COUNT
} weft_select_basis;

const char *weft_select_basis_str(weft_select_basis b);

/* One algorithm that fits a call, with the keys it was ranked by. */
typedef struct weft_select_cand {
    int algo;           /* index in the registry */
    double est_us;      /* the cost model's estimate; < 0: none */
    uint64_t net_bytes; /* sent across the network by all ranks together (UINT64_MAX: more) */
} weft_select_cand;

#define WEFT_SELECT_MAX_CANDS 64
struct weft_tune_section;
/* Everything weft_registry_select decided for a call, for `weft select -v`. */
typedef struct weft_select_expl {
    int chosen;                              /* -1: NCCL */
    const char *why;                         /* why NCCL (static), when chosen < 0 */
    weft_select_basis basis;                 /* why chosen won */
    int gpus_per_node;                       /* of the registry: c->nranks when one node */
    const struct weft_tune_section *section; /* the table's section for the call, or NULL */
    /* the algorithms that fit the call in their own size ranges, best first (at most
     * WEFT_SELECT_MAX_CANDS of ncands are listed); empty when the table decided */
    size_t ncands;
    weft_select_cand cands[WEFT_SELECT_MAX_CANDS];
} weft_select_expl;

/* weft_registry_select_usable, saying how it decided. */
int weft_registry_select_explain(const weft_registry *r, const weft_call *c,
                                 const unsigned char *usable, weft_select_expl *e);

/* The default policy across nodes, said by `weft select -v` and libweft_nccl.so's INFO log for a
 * node shape that no tuning table section covers. */
#define WEFT_SELECT_POLICY_NODES                                                                   \
    "no tuning table section for this node shape: each algorithm serves only its own size range "  \
    "(the library's files for several nodes are built only for node shapes, and sized only for "   \
    "message sizes, measured faster than NCCL) and NCCL serves every other call; where several "   \
    "fit, the one sending the fewest bytes across the network serves (weft tune under this "       \
    "launch measures the node shape: docs/tune.md)"
/* How many of r's tuning table sections answer calls of nranks ranks in r's node shape. */
size_t weft_registry_shape_sections(const weft_registry *r, int nranks);

/* The reason weft_registry_select gives when a tuning table says NCCL. */
#define WEFT_SELECT_WHY_TABLE_NCCL                                                                 \
    "the tuning table gives this size to NCCL (weft was not faster by more than the noise)"

struct weft_tune_table;
struct weft_machine;
/* Uses table t as it is (no machine check; takes ownership, also on failure); NULL removes the
 * table. For `weft select --table` and tests. */
weft_result weft_registry_set_table(weft_registry *r, struct weft_tune_table *t, weft_diag *d);
const struct weft_tune_table *weft_registry_table(const weft_registry *r);
/* weft_registry_load_table compares tables with m instead of this machine (tests). */
weft_result weft_registry_set_machine(weft_registry *r, const struct weft_machine *m);

/* The algorithms of base for a communicator of nranks ranks in nodes of gpus_per_node GPUs
 * (ranks n*G .. n*G+G-1 on node n: NCCL's LSA teams; gpus_per_node == nranks is one node), as
 * libweft_nccl.so uses them: like weft_registry_for_ranks, and sources that declare `param G`
 * (the library's convention for GPUs per node) compiled with G = gpus_per_node too. Across
 * several nodes, only algorithms written for them serve: XML files with nranks ranks (the user
 * chose them for this job) and sources with a parameter G; other sources get one INFO entry and
 * NCCL serves what they would fit. Each of those algorithms is cut into phases
 * (weft_phase_cut) and the cut proven (weft_phase_verify) before it joins; one whose cut has
 * more than WEFT_REGISTRY_MAX_PHASES GPU phases is left out with an INFO entry. */
#define WEFT_REGISTRY_MAX_PHASES WEFT_IR_MAX_PHASES
weft_result weft_registry_for_nodes(const weft_registry *base, int nranks, int gpus_per_node,
                                    weft_registry **out, weft_diag *d);
/* As weft_registry_for_nodes without the table, every source compiled with those of the
 * NAME=VALUE defines whose parameter it declares (weft tune -D under a launch across nodes). */
weft_result weft_registry_for_nodes_defines(const weft_registry *base, int nranks,
                                            int gpus_per_node, const char *const *defines,
                                            size_t ndefines, weft_registry **out, weft_diag *d);
/* The gpus_per_node a registry was made for (0: weft_registry_load or _for_ranks). */
int weft_registry_gpus_per_node(const weft_registry *r);
/* Algorithm i's proven cut into phases in a registry for several nodes; NULL otherwise. Owned by
 * the registry. */
const weft_phased *weft_registry_phases(const weft_registry *r, size_t i);

/* Why each algorithm file of base does or does not serve call c on r, a registry made from base
 * for c's communicator (weft_registry_for_ranks, _for_nodes): one entry per file whose
 * collective is c's (or cannot be told without evaluating it), sorted by file name. made holds
 * what making r reported from entry made_from on (NULL: nothing): its INFO entries say why a
 * file made no instance; otherwise the file is compiled for the shape (N, ROOT, G) to find the
 * `require` that rules it out. *out (n entries) is the caller's: weft_registry_why_free. */
enum {
    WEFT_WHY_SELECTED,      /* serves the call */
    WEFT_WHY_FITS,          /* fits, but another file (or the table) is chosen */
    WEFT_WHY_NOT_THIS_CALL, /* built for this communicator; not for this size, mode or root */
    WEFT_WHY_RULED_OUT      /* nothing of it is built for this communicator */
};
typedef struct weft_registry_why {
    char *file;
    int line, col; /* where in the file the reason is; 0 when nowhere */
    int verdict;   /* WEFT_WHY_* */
    char *why;
} weft_registry_why;
weft_result weft_registry_explain(const weft_registry *base, const weft_registry *r,
                                  const weft_call *c, const weft_diag *made, size_t made_from,
                                  weft_registry_why **out, size_t *nout);
void weft_registry_why_free(weft_registry_why *w, size_t n);

#ifdef __cplusplus
}
#endif
#endif
