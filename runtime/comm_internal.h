/* comm_internal.h — the runtime's communicator object and the functions tests and the benchmark
 * use beneath the public API (explicit algorithm lists, per-rank buffers, loopback). */
#ifndef WEFT_COMM_INTERNAL_H
#define WEFT_COMM_INTERNAL_H

#include "kernels_internal.h"
#include "weft_runtime.h"

#ifdef __cplusplus
extern "C" {
#endif

/* One rank's device state (a communicator has one; a loopback communicator one per rank). */
typedef struct rt_rank {
    int rank;
    char *win_local;    /* this rank's window */
    weft_dstate *state; /* the watchdog's claim */
    uint64_t *pos;      /* 2 x nkeys message counters */
    char **peer_win;    /* device array: every window, as this rank addresses it */
    struct {
        char *rec; /* ntbs records */
        int32_t rec_bytes;
        weft_dsrc *xsrc;
        weft_dprog *prog;
    } * tab;                    /* per algorithm (NULL when ineligible) */
    weft_errrec *err_h, *err_d; /* host-mapped watchdog record */
    char *scratch;
    size_t scratch_bytes;
} rt_rank;

struct weft_comm {
    const weft_nccl_api *api;
    ncclComm_t nccl;
    const weft_registry *reg;
    int dev, rank, nranks;
    weft_rt_cfg cfg;
    weft_layout lay;
    size_t nalgos;
    const weft_algo **algos;
    weft_algo_plan *plans;
    int32_t *maxsteps;
    int64_t hash;
    int nsub;
    rt_rank *sub;
    /* NCCL path */
    void *win_mem;
    ncclWindow_t win;
    uint64_t devcomm[WEFT_RT_DEVCOMM_BYTES / 8];
    int have_devcomm;
    cudaStream_t internal;
    void *agree_buf;
    /* loopback path */
    char **loop_win;
    weft_rargs *h_sub, *d_sub;
    /* calls */
    cudaStream_t last_stream;
    int have_last;
    cudaEvent_t order_ev;
    int broken;
    char broken_msg[1024];
    int64_t ncalls;              /* launches so far (a trace's call numbers) */
    struct weft_rt_trace *trace; /* per-step recording, or NULL (trace_rt.c) */
};

/* Attach with an explicit algorithm list (cfg NULL: defaults and environment). */
weft_result weft_rt_attach(int ncomms, ncclComm_t *comms, const weft_algo *const *algos,
                           size_t nalgos, const weft_rt_cfg *cfg, weft_comm **out, weft_diag *d);
weft_result weft_rt_detach(weft_comm *c);
weft_result weft_rt_detach_many(int n, weft_comm **cs);
/* Launch algorithm ai (index in the attach list); send/recv have one entry per local rank. */
weft_result weft_rt_launch(weft_comm *c, int ai, const weft_call *call, const void *const *send,
                           void *const *recv, cudaStream_t stream);
int weft_rt_algo_eligible(const weft_comm *c, int ai);
/* CTAs one rank runs for call with algorithm ai (0 when it cannot run). */
int weft_rt_call_ctas(const weft_comm *c, int ai, const weft_call *call);
/* 1 when c must not launch: *res = WEFT_ERR_TIMEOUT the first time a watchdog record is seen
 * (reported once), WEFT_ERR_UNSUPPORTED afterwards. */
int weft_rt_check_broken(weft_comm *c, weft_result *res);
/* nranks ranks on the current device, windows in plain device memory, no NCCL. */
weft_result weft_rt_loopback_create(int nranks, const weft_algo *const *algos, size_t nalgos,
                                    const weft_rt_cfg *cfg, weft_comm **out, weft_diag *d);
/* The libnccl version check (exposed for tests). */
weft_result weft_rt_check_version(int version, weft_diag *d);

#ifdef __cplusplus
}
#endif
#endif
