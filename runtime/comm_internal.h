/* comm_internal.h — the runtime's communicator object and the functions tests and the benchmark
 * use beneath the public API (explicit algorithm lists, per-rank buffers, loopback). */
#ifndef WEFT_COMM_INTERNAL_H
#define WEFT_COMM_INTERNAL_H

#include "kernels_internal.h"
#include "weft_rt.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Whether LL128 algorithms run as LL128 on device dev (nvlink.c): sm_90 or newer, and every
 * rank on that one GPU (loopback) or NVLink to every GPU of the node; cached per device, said at
 * INFO level once. */
int weft_rt_ll128_auto(int dev, int loopback);

/* One rank's device state (a communicator has one; a loopback communicator one per rank). */
typedef struct rt_rank {
    int rank;
    char *win_local;    /* this rank's window */
    weft_dstate *state; /* the watchdog's claim */
    uint64_t *probe;    /* WEFT_PROBE builds: the phase table that state->probe points to */
    uint64_t *pos;      /* the layout's pos_words message counters */
    char **peer_win;    /* device array: every window, as this rank addresses it */
    struct {
        char *rec[2]; /* ntbs records per call mode (out of place, in place) */
        int32_t rec_bytes[2];
        weft_dsrc *xsrc[2];
        weft_drecv *xrecv[2];
        weft_dprog *prog; /* ntbs x kmax */
        char *hop[2];     /* the one-hop table per call mode (NULL: none) */
        int32_t hop_bytes[2];
    } * tab;                    /* per algorithm (NULL when ineligible) */
    weft_errrec *err_h, *err_d; /* host-mapped watchdog record */
    char *scratch;
    size_t scratch_bytes;
    /* Scratch outgrown by a larger call: a captured graph may still hold its address, so it
     * lives as long as the communicator (the sizes at least double: a bounded overhead). */
    char **retired;
    size_t nretired;
} rt_rank;

/* A buffer registered on every rank (an NCCL symmetric window, or a loopback registration):
 * local rank s's part starts at base[s]; peer[s] is a device array of every rank's part as
 * local rank s addresses it. Calls whose buffers lie in such windows may run direct. */
typedef struct rt_window {
    void *handle; /* ncclWindow_t, or NULL (loopback) */
    char *base[WEFT_RT_MAX_SUB];
    char **peer[WEFT_RT_MAX_SUB];
    size_t bytes;
} rt_window;

struct weft_mn_comm; /* multinode_rt_internal.h */

struct weft_comm {
    const weft_nccl_api *api;
    ncclComm_t nccl;
    const weft_registry *reg;
    int dev, rank, nranks;
    weft_rt_cfg cfg;
    int32_t max_ctas; /* CTAs per rank a launch may take here (agreed by every rank) */
    int32_t dev_ctas; /* CTAs the device keeps resident at once (every kernel's fewest) */
    int counted;      /* counted among the device's attached communicators (comm.c) */
    weft_layout lay;
    size_t nalgos;
    const weft_algo **algos;
    weft_algo_plan *plans;
    unsigned char *usable; /* per algorithm: it can run here (selection passes over the rest) */
    int64_t hash;
    int nsub;
    rt_rank *sub;
    rt_window *wins; /* registered buffers */
    size_t nwins, capwins;
    /* NCCL path */
    void *win_mem;
    ncclWindow_t win;
    uint64_t devcomm[WEFT_RT_DEVCOMM_BYTES / 8];
    int have_devcomm;
    cudaStream_t internal;
    void *agree_buf;
    /* loopback path */
    char **loop_win;
    /* calls */
    cudaStream_t last_stream;
    int have_last;
    cudaEvent_t order_ev;
    int broken;
    char broken_msg[1024];
    int64_t ncalls;              /* launches so far (a trace's call numbers) */
    struct weft_rt_trace *trace; /* per-step recording, or NULL (trace_rt.c) */
    struct weft_mn_comm *mn;     /* across nodes: phases and weft's communicator (NULL: one node) */
};

/* Attach with an explicit algorithm list (cfg NULL: defaults and environment). */
weft_result weft_rt_attach(int ncomms, ncclComm_t *comms, const weft_algo *const *algos,
                           size_t nalgos, const weft_rt_cfg *cfg, weft_comm **out, weft_diag *d);
/* As weft_rt_attach across nodes: mns[i] (owned by the communicator from then on, also on
 * failure) is comms[i]'s state from weft_mn_comm_new, NULL for one node; its LSA team must then
 * have weft_mn_comm_gpus_per_node GPUs. */
weft_result weft_rt_attach_mn(int ncomms, ncclComm_t *comms, const weft_algo *const *algos,
                              size_t nalgos, const weft_rt_cfg *cfg, struct weft_mn_comm **mns,
                              weft_comm **out, weft_diag *d);
weft_result weft_rt_detach(weft_comm *c);
weft_result weft_rt_detach_many(int n, weft_comm **cs);
/* Launch algorithm ai (index in the attach list); send/recv have one entry per local rank. */
weft_result weft_rt_launch(weft_comm *c, int ai, const weft_call *call, const void *const *send,
                           void *const *recv, cudaStream_t stream);
int weft_rt_algo_eligible(const weft_comm *c, int ai);
/* CTAs one rank runs for call with algorithm ai (0 when it cannot run). */
int weft_rt_call_ctas(const weft_comm *c, int ai, const weft_call *call);
/* nranks ranks on the current device, windows in plain device memory, no NCCL. */
weft_result weft_rt_loopback_create(int nranks, const weft_algo *const *algos, size_t nalgos,
                                    const weft_rt_cfg *cfg, weft_comm **out, weft_diag *d);
/* Registers bytes at base[r] of every rank r of a loopback communicator as one symmetric
 * window (as ncclCommWindowRegister does on every rank): calls whose buffers lie at the same
 * offset in it on every rank may read each other's buffers in place. */
weft_result weft_rt_loopback_register(weft_comm *c, char *const *base, size_t bytes);
/* The launch geometry weft_rt_launch would use for call with algorithm ai (WEFT_OK), and
 * whether its buffers are registered (direct). */
weft_result weft_rt_call_geom(weft_comm *c, int ai, const weft_call *call, const void *const *send,
                              void *const *recv, weft_call_geom *g);
/* The libnccl version check (exposed for tests). */
weft_result weft_rt_check_version(int version, weft_diag *d);

/* Grows a rank's scratch to need bytes (1 MB granules, at least doubling; the old buffer is
 * retired, never freed while graphs may replay it); WEFT_ERR_UNSUPPORTED
 * under graph capture, where nothing may be allocated. */
weft_result weft_rt_grow_scratch(rt_rank *rr, size_t need, cudaStream_t stream);

#ifdef __cplusplus
}
#endif
#endif
