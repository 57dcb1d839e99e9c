/* weft_runtime.h — the GPU runtime's C API: algorithm registry and selection, attaching weft to
 * NCCL communicators, launching collectives. Used by applications and by libweft_nccl.so. */
#ifndef WEFT_RUNTIME_H
#define WEFT_RUNTIME_H

#include "weft_ir.h"

#include <cuda_runtime_api.h>
#include <nccl.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---- the NCCL entry points the runtime uses --------------------------------------------- *
 * The runtime never calls NCCL by symbol: inside libweft_nccl.so those symbols are weft's own
 * interposers. The shim fills this table with the real implementations (pncclX via
 * RTLD_NEXT); a plain application gets a table resolved from the process (dlsym). */
#define WEFT_NCCL_FUNCS(X)                                                                         \
    X(ncclResult_t, GetVersion, (int *))                                                           \
    X(const char *, GetErrorString, (ncclResult_t))                                                \
    X(ncclResult_t, CommCount, (const ncclComm_t, int *))                                          \
    X(ncclResult_t, CommUserRank, (const ncclComm_t, int *))                                       \
    X(ncclResult_t, CommCuDevice, (const ncclComm_t, int *))                                       \
    X(ncclResult_t, MemAlloc, (void **, size_t))                                                   \
    X(ncclResult_t, MemFree, (void *))                                                             \
    X(ncclResult_t, CommWindowRegister, (ncclComm_t, void *, size_t, ncclWindow_t *, int))         \
    X(ncclResult_t, CommWindowDeregister, (ncclComm_t, ncclWindow_t))                              \
    X(ncclResult_t, AllReduce,                                                                     \
      (const void *, void *, size_t, ncclDataType_t, ncclRedOp_t, ncclComm_t, cudaStream_t))       \
    X(ncclResult_t, AllGather,                                                                     \
      (const void *, void *, size_t, ncclDataType_t, ncclComm_t, cudaStream_t))                    \
    X(ncclResult_t, GroupStart, (void))                                                            \
    X(ncclResult_t, GroupEnd, (void))                                                              \
    X(ncclResult_t, Send, (const void *, size_t, ncclDataType_t, int, ncclComm_t, cudaStream_t))   \
    X(ncclResult_t, Recv, (void *, size_t, ncclDataType_t, int, ncclComm_t, cudaStream_t))         \
    X(ncclResult_t, CommSplit, (ncclComm_t, int, int, ncclComm_t *, ncclConfig_t *))               \
    X(ncclResult_t, CommDestroy, (ncclComm_t))                                                     \
    X(ncclResult_t, CommAbort, (ncclComm_t))

typedef struct weft_nccl_api {
#define WEFT_X_(ret, name, args) ret(*name) args;
    WEFT_NCCL_FUNCS(WEFT_X_)
#undef WEFT_X_
    /* ncclDevCommCreate / ncclDevCommDestroy, typed as void* here because their argument types
     * are C++ (nccl_device/); the .cu code casts them back. */
    void *DevCommCreate;
    void *DevCommDestroy;
    /* ncclTeamLsa(ncclComm_t), the host function of nccl_device/core.h (the node structure);
     * NULL: the runtime looks it up in the process. */
    void *TeamLsa;
} weft_nccl_api;

/* Installs the table the runtime uses from now on (the shim calls this once, before any
 * attach). Without it the first attach resolves ncclX with dlsym(RTLD_DEFAULT). */
WEFT_API void weft_runtime_set_nccl_api(const weft_nccl_api *api);

/* A communicator's size, this rank, and its GPUs per node from NCCL's LSA team (ncclTeamLsa;
 * weft_mn_gpus_per_node's rules, multinode.c), through api's functions: the node shape a caller
 * needs before it attaches (the shim and weft tune build their registry for it). Without
 * ncclTeamLsa in the process, gpn is the rank count (one node: the attach then finds out from the
 * device communicator). WEFT_ERR_UNSUPPORTED with the reason in d when the team has a shape weft
 * cannot use. */
WEFT_API weft_result weft_mn_query(const weft_nccl_api *api, ncclComm_t comm, int *nranks,
                                   int *rank, int *gpn, weft_diag *d);

/* ---- the NCCL versions weft runs on ----------------------------------------------------- *
 * The device code is compiled against the nccl_device.h of one NCCL and reads its structures
 * (ncclDevComm, ncclWindow_vidmem) by that layout, so it runs on a libnccl from those headers'
 * version up to the last patch release of their minor (for 2.28.9 headers: 2.28.9 to 2.28.x).
 * An older patch can lay them out differently (2.28.3 under 2.28.9 code: an illegal memory
 * access); 2.29 versioned the device API (ncclDevCommCreate refuses requirements without its
 * magic) and 2.30 changed ncclDevComm. On any other version weft stays out and NCCL serves
 * every call. The one statement of the range: [MIN, END). */
#define WEFT_NCCL_VERSION_MIN NCCL_VERSION_CODE
#define WEFT_NCCL_VERSION_END NCCL_VERSION(NCCL_MAJOR, NCCL_MINOR + 1, 0)

/* Whether weft's device code runs on a libnccl whose ncclGetVersion says version. */
WEFT_API int weft_nccl_version_supported(int version);
/* An NCCL version code as NCCL writes it: 22809 as "2.28.9", 2803 (before 2.9) as "2.8.3". */
WEFT_API const char *weft_nccl_version_str(int version, char *buf, size_t len);
/* The supported range, "2.28.9 to 2.28.x". */
WEFT_API const char *weft_nccl_range_str(char *buf, size_t len);
/* For an unsupported version: one sentence naming it, the range, and what to do ("NCCL 2.30.7
 * is newer than ...: use ..."). */
WEFT_API const char *weft_nccl_version_advice(int version, char *buf, size_t len);

/* The GPUs this process can use (the CUDA runtime's device count), or 0 with why in why ("CUDA
 * driver version is insufficient for CUDA runtime version", or that this build has no CUDA):
 * measuring programs ask before they start. */
WEFT_API int weft_runtime_gpus(char *why, size_t len);

/* ---- registry --------------------------------------------------------------------------- */
typedef struct weft_registry weft_registry;

/* Owned by the caller; free with weft_registry_free. */
WEFT_API weft_result weft_registry_new(weft_registry **out);
WEFT_API void weft_registry_free(weft_registry *r);
/* Loads every algorithm named by a colon-separated list of directories and files (.xml; .weft
 * when the compiler is built in), in a deterministic order (files sorted by name). A file that
 * fails to read or to verify is reported in d and skipped; the others still load. Returns
 * WEFT_OK when the list could be walked, even if some files were skipped.
 * Then the tuning table (weft tune; docs/tune.md): the file WEFT_TUNE_FILE names, else the first
 * `weft-tune.txt` inside a listed directory, is read as weft_registry_load_table does. */
WEFT_API weft_result weft_registry_load(weft_registry *r, const char *paths, weft_diag *d);
/* Reads a tuning table written by `weft tune` and makes selection follow it: for the calls its
 * sections cover (collective, rank count, buffer mode, launch kind, registered buffers), each
 * size is served by the algorithm the table names, or by NCCL, whatever the files' own
 * [minBytes, maxBytes] say. A table that cannot be read, or whose machine fingerprint (GPU model
 * and count, NVLink topology, NCCL and weft versions, ranks per node) differs from this
 * machine's, is reported in d (a note saying why it is ignored) and not used: selection keeps
 * the files' own ranges. Returns WEFT_OK then too; errors are for allocation and usage only. */
WEFT_API weft_result weft_registry_load_table(weft_registry *r, const char *path, weft_diag *d);
/* Adds an algorithm (takes ownership of a, also on failure). It is verified first. */
WEFT_API weft_result weft_registry_add(weft_registry *r, weft_algo *a, weft_diag *d);
WEFT_API size_t weft_registry_size(const weft_registry *r);
WEFT_API const weft_algo *weft_registry_get(const weft_registry *r, size_t i);
/* The algorithms of base for nranks-rank communicators, in base's order, as a new registry owned
 * by the caller: every algorithm of base with nranks ranks, and every .weft source of base that
 * declares `param N` (the library's convention for the rank count) compiled again with N set to
 * nranks, checked like any loaded file. A rooted source that also declares `param ROOT` is
 * compiled once per root (for up to WEFT_REGISTRY_MAX_ROOTED_RANKS ranks; above, only its own
 * root). A source whose `require`s rule an instance out gets one INFO entry in d; other failures
 * are reported like bad files (errors, then a note). libweft_nccl.so builds one per rank count it
 * meets, so that a folder of sources serves every job size and root. */
#define WEFT_REGISTRY_MAX_ROOTED_RANKS 16
/* With a tuning table, the new registry has it too (for nranks ranks): the algorithms it names
 * are found among the instances by file, name, rank count and schedule hash; one that the
 * defaults do not build (a `require` ruled it out) is compiled with the -D defines the table
 * recorded, and then serves only the sizes the table gives it. A named algorithm that is missing
 * or changed since it was measured is a note in d; its sizes keep the files' own ranges. */
WEFT_API weft_result weft_registry_for_ranks(const weft_registry *base, int nranks,
                                             weft_registry **out, weft_diag *d);

/* How a call is made, beyond its arguments: a tuning table measures these kinds separately,
 * since the fastest algorithm differs between them. X(id, bit, table word when set, when clear) */
#define WEFT_CALL_FLAGS(X)                                                                         \
    X(GRAPH, 1u, "graph", "eager")                                                                 \
    X(REGISTERED, 2u, "registered", "unregistered")

enum {
#define WEFT_X_(id, bit, set, clear) WEFT_CALL_##id = bit,
    WEFT_CALL_FLAGS(WEFT_X_)
#undef WEFT_X_
};

/* The table's word for flag bit (one WEFT_CALL_*) as flags have it: its word when set, when
 * clear. The tuning table, weft tune and the shim's log all name a call's kind by these. */
static inline const char *weft_call_flag_word(unsigned bit, unsigned flags) {
#define WEFT_X_(id, b, set, clear)                                                                 \
    if (bit == (b)) return (flags & (b)) ? (set) : (clear);
    WEFT_CALL_FLAGS(WEFT_X_)
#undef WEFT_X_
    return "?";
}

/* One collective call, as the application made it. Zero-initialize it ({0} or memset) and set
 * the fields: flags and algo are 0 for an ordinary call. */
typedef struct weft_call {
    weft_coll coll;
    weft_dtype dtype;
    weft_redop op;
    size_t count; /* NCCL's count argument */
    int inplace;
    int root; /* rooted collectives */
    int nranks;
    /* WEFT_CALL_GRAPH: the stream is capturing a CUDA graph (cudaStreamGetCaptureInfo says
     * cudaStreamCaptureStatusActive). WEFT_CALL_REGISTERED: every byte the call reads or writes
     * (send and receive buffers, at the extents NCCL defines) lies in windows the application
     * registered with ncclCommWindowRegister(..., NCCL_WIN_COLL_SYMMETRIC) on this
     * communicator. Like the buffer mode, both must be the same on every rank; a tuning
     * table ignores WEFT_CALL_REGISTERED for rooted collectives (NCCL ignores the buffers of
     * non-root ranks, so the ranks could not agree on it). */
    unsigned flags;
    /* 0: the registry selects. k > 0: algorithm k - 1 of the registry serves the call if it
     * fits its collective, rank count, root, buffer mode, type and op, whatever its byte range
     * and the tuning table say (weft tune measures every candidate at every size this way). */
    int algo;
} weft_call;

/* The algorithm that serves the call, or -1 (NCCL). With a tuning table that covers the call
 * (weft_registry_load_table), the algorithm it names for the call's size (when that algorithm
 * is loaded and fits) or -1 when it names NCCL; otherwise the best of the algorithms that serve
 * the call (collective, rank count, message bytes within [minBytes, maxBytes], buffer mode, type
 * and op, root): the lowest estimated time when weft has a cost model, else the fewest bytes
 * sent across the network (registries made for several nodes), else the first in load order.
 * When -1 and why is not NULL, a static string says why (without a table: why the closest
 * candidate was rejected). A pure function of its arguments, so every rank decides the same. */
WEFT_API int weft_registry_select(const weft_registry *r, const weft_call *c, const char **why);

/* ---- communicators ---------------------------------------------------------------------- */
typedef struct weft_comm weft_comm;

/* Attaches weft to NCCL communicators (collective: every rank of each communicator calls it;
 * several communicators of one process are attached together, as ncclCommInitAll creates
 * them). Creates weft-owned symmetric windows, the device communicator, FIFOs, and uploads the
 * step tables of the registry's algorithms that fit each communicator. All ranks agree on the
 * outcome: when any rank fails, every rank gets an error and a NULL weft_comm. The registry
 * must outlive the weft_comms. out[i] is owned by the caller; release with weft_comm_detach. */
WEFT_API weft_result weft_comm_attach(int ncomms, ncclComm_t *comms, const weft_registry *reg,
                                      weft_comm **out, weft_diag *d);
/* Collective like ncclCommDestroy; frees everything weft created for the communicator (waits
 * for the device, deregisters the window). */
WEFT_API weft_result weft_comm_detach(weft_comm *c);
/* Detaches several communicators of this process at once (one thread each: a window
 * deregistration may wait for the other ranks, which one thread could not serve). */
WEFT_API weft_result weft_comm_detach_many(int n, weft_comm **cs);
/* Frees c's local resources with no collective step (after ncclCommAbort, or when peers may be
 * gone): no window deregistration, no device communicator destruction. */
WEFT_API weft_result weft_comm_abort(weft_comm *c);
/* WEFT_OK, or WEFT_ERR_TIMEOUT when the watchdog stopped a collective of c (also one replayed
 * from a CUDA graph); then msg receives "rank R tb T step S (file:line): ..." and c refuses every
 * later launch (WEFT_ERR_UNSUPPORTED: the caller uses NCCL). Never blocks. */
WEFT_API weft_result weft_comm_status(weft_comm *c, char *msg, size_t len);

/* Per-step timeline traces (docs/trace.md). Starts recording every collective weft serves on
 * c, each local rank into its own Chrome trace event file named by path (%r rank, %p pid, %h
 * host; without %r ".rank<R>" goes before ".json"); a recording already running on c is
 * completed first. Local to the calling process: call it on every rank for all their files,
 * between the same two collectives (a traced call runs on the interpreter, an untraced small
 * call of a one-hop schedule on the one-hop kernel, and every rank must run a call alike;
 * WEFT_HOP=0 or WEFT_TRACE at attach keeps every call on the interpreter).
 * WEFT_TRACE=path starts it at attach. Calls captured in CUDA graphs are not recorded. */
WEFT_API weft_result weft_comm_trace_start(weft_comm *c, const char *path);
/* Completes c's trace files (waits for c's traced calls to finish); WEFT_OK when none. Detach
 * does it too, and so does the end of the process. */
WEFT_API weft_result weft_comm_trace_stop(weft_comm *c);

/* The algorithm of c's registry that serves call on c: as weft_registry_select, passing over
 * algorithms that cannot run on this communicator, once call->flags are set from the stream
 * (WEFT_CALL_GRAPH while it captures) and the buffers (WEFT_CALL_REGISTERED when both lie in
 * windows registered with weft_comm_window_register). -1: NCCL serves it, and why (static)
 * says why. Select once, then launch with call->algo = the result + 1. */
WEFT_API int weft_comm_select(const weft_comm *c, weft_call *call, const void *sendbuff,
                              const void *recvbuff, cudaStream_t stream, const char **why);

/* The application registered [buf, buf + bytes) as NCCL window win of c's communicator with
 * NCCL_WIN_COLL_SYMMETRIC on every rank (ncclCommWindowRegister is collective): calls whose
 * buffers lie in such windows, at the same offset on every rank, may read peers' buffers in
 * place (direct transfers; docs/runtime.md). Local: every rank calls it for the same window,
 * after the registration completed. */
WEFT_API weft_result weft_comm_window_register(weft_comm *c, void *buf, size_t bytes,
                                               ncclWindow_t win);
/* Forgets win (before the application deregisters it; waits for c's device work). */
WEFT_API weft_result weft_comm_window_deregister(weft_comm *c, ncclWindow_t win);

/* Launches one collective on stream: returns WEFT_OK when weft served it, WEFT_ERR_UNSUPPORTED
 * when no loaded algorithm fits (nothing was launched: the caller uses NCCL), another error
 * when the launch failed; WEFT_ERR_TIMEOUT once when an earlier collective was stopped by the
 * watchdog (see weft_comm_status). Never synchronizes the host; capturable in CUDA graphs. A
 * schedule with scratch chunks allocates its scratch (stream-ordered) the first time a call
 * needs more, outside capture; under capture such a call returns WEFT_ERR_UNSUPPORTED. Calls on
 * one communicator are ordered as issued, also across streams (capture: within one capture).
 * avg runs as sum and a scaling pass (a second kernel). *served, when not NULL, receives the
 * name of the algorithm that ran. */
WEFT_API weft_result weft_comm_launch(weft_comm *c, const weft_call *call, const void *sendbuff,
                                      void *recvbuff, cudaStream_t stream, const char **served);

#ifdef __cplusplus
}
#endif
#endif
