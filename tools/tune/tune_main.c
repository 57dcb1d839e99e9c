/* tune_main.c — weft-tune: `weft tune` on GPUs. One MPI process per GPU, on one node or several
 * (the node shape is NCCL's, as libweft_nccl.so sees it); the
 * backend of tune.h over MPI, NCCL and the runtime's public API (weft_comm_attach and
 * weft_comm_launch with weft_call.algo naming each candidate), each sample timed as nccl-tests
 * times, then rank 0 writes the table. */
#define _GNU_SOURCE /* dladdr */
#include "tune.h"

#include "nccl_tests.h"

#include <cuda_runtime_api.h>
#include <dlfcn.h>
#include <mpi.h>
#include <nccl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* ---- fatal errors: every rank stops, the message names the rank and the call ------------- */
static int g_rank;

/* A CUDA or NCCL call of type T that must return OK; STR names its error. */
#define GPU_CHECK_(T, OK, STR, call)                                                               \
    do {                                                                                           \
        T e_ = (call);                                                                             \
        if (e_ != OK) {                                                                            \
            fprintf(stderr, "weft tune: rank %d: %s:%d: %s: %s\n", g_rank, __FILE__, __LINE__,     \
                    #call, STR(e_));                                                               \
            MPI_Abort(MPI_COMM_WORLD, 1);                                                          \
        }                                                                                          \
    } while (0)
#define CU(call) GPU_CHECK_(cudaError_t, cudaSuccess, cudaGetErrorString, call)
#define NC(call) GPU_CHECK_(ncclResult_t, ncclSuccess, ncclGetErrorString, call)
#include "stream_wait.h"

/* ---- the backend ------------------------------------------------------------------------- *
 * NCCL runs on communicators of its own, as in an application without weft: weft is attached
 * to a third one, and NCCL's eager calls never share a communicator with its captures (once a
 * communicator has been captured, NCCL makes every later eager call on it wait on its internal
 * stream too: NCCL_GRAPH_MIXING_SUPPORT). */
enum { C_WEFT, C_EAGER, C_GRAPH, C_COUNT };

typedef struct gpu {
    int rank, nranks;
    MPI_Comm mpi;
    ncclComm_t comms[C_COUNT]; /* weft's, NCCL's eager, NCCL's graph */
    weft_comm *wc;
    const weft_registry *reg;
    int through; /* verifying: wc is attached to the shim's registry (g_through) */
    cudaStream_t st;
    /* the buffers every implementation runs on, registered as symmetric windows or not */
    int registered;
    uint64_t bytes;
    char *send, *recv;
    ncclWindow_t wins[C_COUNT][2];
    float *h_in, *h_want;
    unsigned char *h_ref, *h_out, *h_def;
    int ref_reports; /* how many times NCCL's reference disagreed with the definition (said) */
} gpu;

static void free_buffers(gpu *g) {
    if (g->send == NULL) return;
    CU(cudaDeviceSynchronize());
    if (g->registered) {
        weft_comm_window_deregister(g->wc, g->wins[C_WEFT][0]);
        weft_comm_window_deregister(g->wc, g->wins[C_WEFT][1]);
        for (int c = 0; c < C_COUNT; c++)
            for (int w = 0; w < 2; w++)
                NC(ncclCommWindowDeregister(g->comms[c], g->wins[c][w]));
    }
    NC(ncclMemFree(g->send));
    NC(ncclMemFree(g->recv));
    free(g->h_in);
    free(g->h_ref);
    free(g->h_out);
    free(g->h_want);
    free(g->h_def);
    g->send = g->recv = NULL;
    g->h_in = NULL;
    g->h_ref = g->h_out = g->h_def = NULL;
    g->h_want = NULL;
}

static int g_buffers(void *ctx, int registered, uint64_t bytes, char *why, size_t len) {
    gpu *g = ctx;
    free_buffers(g);
    g->registered = registered;
    g->bytes = bytes + 4096;
    int bad = 0;
    if (registered) {
        /* the application's view: ncclMemAlloc'd buffers registered collectively */
        ncclResult_t r = ncclMemAlloc((void **)&g->send, g->bytes);
        if (r == ncclSuccess) r = ncclMemAlloc((void **)&g->recv, g->bytes);
        for (int c = 0; c < C_COUNT && r == ncclSuccess; c++) {
            r = ncclCommWindowRegister(g->comms[c], g->send, g->bytes, &g->wins[c][0],
                                       NCCL_WIN_COLL_SYMMETRIC);
            if (r == ncclSuccess)
                r = ncclCommWindowRegister(g->comms[c], g->recv, g->bytes, &g->wins[c][1],
                                           NCCL_WIN_COLL_SYMMETRIC);
        }
        if (r != ncclSuccess) {
            snprintf(why, len, "rank %d: ncclMemAlloc/ncclCommWindowRegister: %s", g->rank,
                     ncclGetErrorString(r));
            bad = 1;
        } else if (weft_comm_window_register(g->wc, g->send, g->bytes, g->wins[C_WEFT][0]) !=
                       WEFT_OK ||
                   weft_comm_window_register(g->wc, g->recv, g->bytes, g->wins[C_WEFT][1]) !=
                       WEFT_OK) {
            /* as the shim does when the application registers them: weft reads peers' windows
             * in place */
            snprintf(why, len, "rank %d: weft could not use the windows", g->rank);
            bad = 1;
        }
    } else {
        /* from ncclMemAlloc too, unregistered, as nccl-tests 2.19 allocates them: in a graph
         * NCCL may register such buffers at capture, which cudaMalloc'd ones cannot give it */
        NC(ncclMemAlloc((void **)&g->send, g->bytes));
        NC(ncclMemAlloc((void **)&g->recv, g->bytes));
    }
    int any = 0;
    MPI_Allreduce(&bad, &any, 1, MPI_INT, MPI_MAX, g->mpi);
    if (any) {
        if (!bad) snprintf(why, len, "another rank could not register symmetric windows");
        /* what was made is left to the end of the process: the peers may not have matched it */
        g->send = g->recv = NULL;
        return WEFT_TUNE_UNSUPPORTED;
    }
    g->h_in = malloc(g->bytes);
    g->h_ref = malloc(g->bytes);
    g->h_out = malloc(g->bytes);
    g->h_want = malloc(g->bytes);
    g->h_def = malloc(g->bytes / 4 + 1);
    if (!g->h_in || !g->h_ref || !g->h_out || !g->h_want || !g->h_def) {
        snprintf(why, len, "rank %d: out of host memory for %llu bytes", g->rank,
                 (unsigned long long)g->bytes);
        return -1;
    }
    return WEFT_TUNE_OK;
}

/* Where a point's input and output lie, as nccl-tests lays them out (NCCL's in-place forms). */
static void layout(const gpu *g, const tune_point *p, char **in, char **out, size_t *inb,
                   size_t *outb) {
    size_t seg = p->count * 4;
    *inb = seg * (size_t)weft_coll_segs(p->coll, WEFT_BUF_INPUT, p->nranks);
    *outb = seg * (size_t)weft_coll_segs(p->coll, WEFT_BUF_OUTPUT, p->nranks);
    *in = g->send;
    *out = g->recv;
    if (p->inplace) { /* both in the receive buffer, each at its segment of it (weft_buf_mem) */
        int32_t si, so;
        weft_buf_mem(p->coll, 1, g->rank, WEFT_BUF_INPUT, &si);
        weft_buf_mem(p->coll, 1, g->rank, WEFT_BUF_OUTPUT, &so);
        *in = g->recv + (size_t)si * seg;
        *out = g->recv + (size_t)so * seg;
    }
}

/* The communicator impl runs on for a call of these flags. */
static ncclComm_t comm_of(const gpu *g, int impl, unsigned flags) {
    if (impl >= 0) return g->comms[C_WEFT];
    return g->comms[(flags & WEFT_CALL_GRAPH) ? C_GRAPH : C_EAGER];
}

static void nccl_call(gpu *g, ncclComm_t cm, const tune_point *p, const void *in, void *out) {
    size_t c = p->count;
    switch (p->coll) {
    case WEFT_COLL_ALLREDUCE: NC(ncclAllReduce(in, out, c, ncclFloat, ncclSum, cm, g->st)); return;
    case WEFT_COLL_ALLGATHER: NC(ncclAllGather(in, out, c, ncclFloat, cm, g->st)); return;
    case WEFT_COLL_REDUCESCATTER:
        NC(ncclReduceScatter(in, out, c, ncclFloat, ncclSum, cm, g->st));
        return;
    case WEFT_COLL_ALLTOALL: NC(ncclAlltoAll(in, out, c, ncclFloat, cm, g->st)); return;
    case WEFT_COLL_BROADCAST: NC(ncclBroadcast(in, out, c, ncclFloat, 0, cm, g->st)); return;
    case WEFT_COLL_REDUCE: NC(ncclReduce(in, out, c, ncclFloat, ncclSum, 0, cm, g->st)); return;
    case WEFT_COLL_GATHER: NC(ncclGather(in, out, c, ncclFloat, 0, cm, g->st)); return;
    case WEFT_COLL_SCATTER: NC(ncclScatter(in, out, c, ncclFloat, 0, cm, g->st)); return;
    case WEFT_COLL_ALLTOALLV:
    case WEFT_COLL_SEND:
    case WEFT_COLL_RECV:
    case WEFT_COLL_CUSTOM:
    case WEFT_COLL_COUNT: break;
    }
    fprintf(stderr, "weft tune: %s has no NCCL call\n", weft_coll_name(p->coll));
    MPI_Abort(MPI_COMM_WORLD, 1);
}

/* One call of impl, call `iter` of a sample (its buffers shifted as nccl-tests shifts them);
 * WEFT_TUNE_UNSUPPORTED when weft launched nothing. */
static int launch_at(gpu *g, const tune_point *p, int impl, unsigned flags, int iter) {
    char *in, *out;
    size_t inb, outb;
    layout(g, p, &in, &out, &inb, &outb);
    /* nccl-tests moves each call of a sample by its footprint within its -e: the verification's
     * points say that run's -e (compare_nccl.sh's), the search's use the whole buffers */
    size_t total = inb > outb ? inb : outb;
    uint64_t room = p->maxbytes ? p->maxbytes : g->bytes - 4096;
    size_t shift = (size_t)weft_nt_shift(total, room, iter);
    in += shift;
    out += shift;
    if (impl < 0) {
        nccl_call(g, comm_of(g, impl, p->flags), p, in, out); /* the point's kind decides */
        return WEFT_TUNE_OK;
    }
    weft_call c = {p->coll, WEFT_DTYPE_FLOAT, WEFT_OP_SUM, p->count, p->inplace,
                   0,       p->nranks,        flags,       impl + 1};
    if (g->through && flags == p->flags) {
        /* verifying: the call goes as the shim sends it (shim.c's serve): the runtime selects
         * for it from the stream's capture state and the buffers' windows, then launches what
         * it selected. The eager warm-up of a graph point names its algorithm as measuring does. */
        const char *why = NULL;
        c.flags = 0;
        c.algo = 0;
        int ai = weft_comm_select(g->wc, &c, in, out, g->st, &why);
        if (ai != impl) {
            const char *sel = ai < 0 ? "NCCL" : weft_registry_get(g->reg, (size_t)ai)->name;
            fprintf(stderr,
                    "weft tune: rank %d: through the shim, %s at %llu bytes selects '%s'%s%s%s, "
                    "not '%s' as the table's lookup did\n",
                    g->rank, weft_coll_name(p->coll), (unsigned long long)p->bytes, sel,
                    why ? " (" : "", why ? why : "", why ? ")" : "",
                    weft_registry_get(g->reg, (size_t)impl)->name);
            return WEFT_TUNE_UNSUPPORTED;
        }
        c.algo = ai + 1;
    }
    weft_result r = weft_comm_launch(g->wc, &c, in, out, g->st, NULL);
    if (r == WEFT_OK) return WEFT_TUNE_OK;
    if (r == WEFT_ERR_UNSUPPORTED) return WEFT_TUNE_UNSUPPORTED;
    char msg[1024] = "";
    weft_comm_status(g->wc, msg, sizeof msg);
    fprintf(stderr, "weft tune: rank %d: launching '%s' on %s at %llu bytes: %s%s%s\n", g->rank,
            weft_registry_get(g->reg, (size_t)impl)->name, weft_coll_name(p->coll),
            (unsigned long long)p->bytes, weft_result_str(r), *msg ? ": " : "", msg);
    MPI_Abort(MPI_COMM_WORLD, 1);
    return -1;
}

static int launch(gpu *g, const tune_point *p, int impl, unsigned flags) {
    return launch_at(g, p, impl, flags, 0);
}

/* The inputs of a check: small integers (tune_input), so that float sums are exact in any order
 * and weft's result must equal the definition bit for bit; the output first holds a pattern no
 * result has. */
static void fill(gpu *g, const tune_point *p) {
    char *in, *out;
    size_t inb, outb;
    layout(g, p, &in, &out, &inb, &outb);
    size_t n = inb / 4;
    for (size_t i = 0; i < n; i++)
        g->h_in[i] = tune_input(g->rank, i);
    CU(cudaMemsetAsync(out, 0xff, outb, g->st));
    CU(cudaMemcpyAsync(in, g->h_in, inb, cudaMemcpyHostToDevice, g->st));
}

/* Checks impl against the collective's definition (tune_expected). NCCL runs first on the same
 * inputs as a cross-check of the definition and of tune's buffers: where NCCL's output differs,
 * that is said (a few times), never charged to weft. */
static int g_check(void *ctx, const tune_point *p, int impl) {
    gpu *g = ctx;
    char *in, *out, *rin, *rout;
    size_t inb, outb, rinb, routb;
    unsigned flags = p->flags & ~WEFT_CALL_GRAPH; /* eager */
    /* NCCL out of place on the same inputs (an in-place call defines the same result, and
     * NCCL's alltoall is not made for in place) */
    tune_point ref = *p;
    ref.inplace = 0;
    layout(g, &ref, &rin, &rout, &rinb, &routb);
    fill(g, &ref);
    launch(g, &ref, -1, flags);
    CU(cudaMemcpyAsync(g->h_ref, rout, routb, cudaMemcpyDeviceToHost, g->st));
    CU(cudaStreamSynchronize(g->st));
    layout(g, p, &in, &out, &inb, &outb);
    tune_expected(p, g->rank, g->h_want, g->h_def, outb);
    size_t n = outb / 4,
           bad =
               routb == outb ? tune_first_diff(g->h_want, g->h_def, (const float *)g->h_ref, n) : 0;
    if (bad != (size_t)-1 && g->ref_reports++ < 3)
        fprintf(stderr,
                "weft tune: rank %d: NCCL's own %s (%llu bytes, %s, %s buffers) differs from the "
                "collective's definition at element %zu: %g, not %g; weft is checked against "
                "the definition\n",
                g->rank, weft_coll_name(p->coll), (unsigned long long)p->bytes,
                (p->flags & WEFT_CALL_GRAPH) ? "its graph communicator" : "eager",
                (p->flags & WEFT_CALL_REGISTERED) ? "registered" : "unregistered", bad,
                (double)((const float *)g->h_ref)[bad], (double)g->h_want[bad]);
    fill(g, p);
    int st = launch(g, p, impl, flags);
    if (st == WEFT_TUNE_UNSUPPORTED) {
        CU(cudaStreamSynchronize(g->st));
        return st;
    }
    CU(cudaMemcpyAsync(g->h_out, out, outb, cudaMemcpyDeviceToHost, g->st));
    CU(cudaStreamSynchronize(g->st));
    bad = tune_first_diff(g->h_want, g->h_def, (const float *)g->h_out, n);
    if (bad == (size_t)-1) return WEFT_TUNE_OK;
    fprintf(stderr,
            "weft tune: rank %d: '%s' on %s (%llu bytes, %s, %s buffers): element %zu of %zu is "
            "%g, not %g\n",
            g->rank, weft_registry_get(g->reg, (size_t)impl)->name, weft_coll_name(p->coll),
            (unsigned long long)p->bytes, p->inplace ? "in place" : "out of place",
            (p->flags & WEFT_CALL_REGISTERED) ? "registered" : "unregistered", bad, n,
            (double)((const float *)g->h_out)[bad], (double)g->h_want[bad]);
    return WEFT_TUNE_WRONG;
}

static int g_warm(void *ctx, const tune_point *p, int impl, int n) {
    gpu *g = ctx;
    int st = WEFT_TUNE_OK;
    for (int i = 0; i < n && st == WEFT_TUNE_OK; i++)
        st = launch(g, p, impl, p->flags & ~WEFT_CALL_GRAPH);
    CU(cudaStreamSynchronize(g->st));
    return st;
}

/* Captures n calls of impl (buffers shifted as in an eager sample) into a graph and
 * instantiates it. */
static int capture_graph(gpu *g, const tune_point *p, int impl, int n, cudaGraphExec_t *ge) {
    cudaGraph_t graph;
    int st = WEFT_TUNE_OK;
    CU(cudaStreamBeginCapture(g->st, cudaStreamCaptureModeThreadLocal));
    for (int i = 0; i < n && st == WEFT_TUNE_OK; i++)
        st = launch_at(g, p, impl, p->flags | WEFT_CALL_GRAPH, i);
    CU(cudaStreamEndCapture(g->st, &graph));
    if (st == WEFT_TUNE_OK) CU(cudaGraphInstantiate(ge, graph, 0));
    CU(cudaGraphDestroy(graph));
    return st;
}

/* Whether impl can be captured; the first capture's one-time costs (NCCL registers the buffers
 * a graph uses) are paid here, untimed. */
static int g_capture(void *ctx, const tune_point *p, int impl, int n) {
    gpu *g = ctx;
    cudaGraphExec_t ge;
    int st = capture_graph(g, p, impl, n, &ge);
    if (st != WEFT_TUNE_OK) return st;
    CU(cudaGraphLaunch(ge, g->st)); /* the first capture's one-time costs, untimed */
    CU(cudaStreamSynchronize(g->st));
    CU(cudaGraphExecDestroy(ge));
    return WEFT_TUNE_OK;
}

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void stopped(gpu *g, int impl) {
    fprintf(stderr, "weft tune: rank %d: '%s' stopped launching\n", g->rank,
            impl < 0 ? "NCCL" : weft_registry_get(g->reg, (size_t)impl)->name);
    MPI_Abort(MPI_COMM_WORLD, 1);
}

/* One sample as nccl-tests' BenchTime takes it: one call completed, a barrier, then the host
 * clock from before the first of n calls (eager; or the launch of a graph of n calls captured
 * and instantiated for this sample, its upload included, as -G 1) until the stream is idle. */
static int g_sample(void *ctx, const tune_point *p, int impl, int n, double *us) {
    gpu *g = ctx;
    ncclComm_t cm = comm_of(g, impl, p->flags);
    if (launch_at(g, p, impl, p->flags & ~WEFT_CALL_GRAPH, 0) != WEFT_TUNE_OK) stopped(g, impl);
    weft_wait_stream(g->st, cm);
    MPI_Barrier(g->mpi);
    cudaGraphExec_t ge = NULL;
    if (p->flags & WEFT_CALL_GRAPH) {
        if (capture_graph(g, p, impl, n, &ge) != WEFT_TUNE_OK) stopped(g, impl);
        MPI_Barrier(g->mpi);
    }
    double t0 = now_s();
    if (ge) {
        CU(cudaGraphLaunch(ge, g->st));
    } else {
        for (int i = 0; i < n; i++)
            if (launch_at(g, p, impl, p->flags, i) != WEFT_TUNE_OK) stopped(g, impl);
    }
    weft_wait_stream(g->st, cm);
    *us = 1e6 * (now_s() - t0) / n;
    if (ge) CU(cudaGraphExecDestroy(ge));
    char msg[1024];
    if (weft_comm_status(g->wc, msg, sizeof msg) != WEFT_OK) {
        fprintf(stderr, "weft tune: rank %d: %s\n", g->rank, msg);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    return WEFT_TUNE_OK;
}

static void g_release(void *ctx, const tune_point *p) {
    (void)ctx, (void)p; /* each sample frees its graph */
}

static int g_allgather(void *ctx, const double *mine, int n, double *all) {
    gpu *g = ctx;
    return MPI_Allgather(mine, n, MPI_DOUBLE, all, n, MPI_DOUBLE, g->mpi) == MPI_SUCCESS ? 0 : -1;
}

static double g_now(void *ctx) {
    (void)ctx;
    return MPI_Wtime();
}

/* Verification: weft attached to the shim's registry on its communicator, as libweft_nccl.so
 * attaches it (one weft_comm_attach per communicator, the registry for its shape); NULL goes
 * back to no weft at all (measuring is over). The buffers go either way: their windows belong
 * to the weft_comm they were registered with. */
static int g_through(void *ctx, const weft_registry *reg, char *why, size_t len) {
    gpu *g = ctx;
    free_buffers(g);
    if (g->wc) weft_comm_detach(g->wc);
    g->wc = NULL;
    g->through = reg != NULL;
    g->reg = reg; /* impl names its algorithms from now on */
    if (reg == NULL) return 0;
    weft_diag *d = weft_diag_new();
    int bad = d == NULL || weft_comm_attach(1, &g->comms[C_WEFT], reg, &g->wc, d) != WEFT_OK;
    if (bad) {
        snprintf(why, len, "rank %d: weft_comm_attach failed", g->rank);
        if (d) weft_diag_print(d, stderr, WEFT_SEV_NOTE);
        g->wc = NULL;
    }
    weft_diag_free(d);
    int any = 0;
    MPI_Allreduce(&bad, &any, 1, MPI_INT, MPI_MAX, g->mpi);
    if (any && !bad) snprintf(why, len, "weft_comm_attach failed on another rank");
    return any ? -1 : 0;
}

/* ---- the program ------------------------------------------------------------------------- */

/* What makes NCCL's time here differ from nccl-tests' in tools/compare_nccl.sh, said before
 * measuring (rank 0): the libnccl this process loaded (the script puts PyTorch's first on
 * LD_LIBRARY_PATH) and NCCL_NVLS_ENABLE (the script sets 0). */
static void print_nccl_setup(void) {
    Dl_info info;
    int v = 0;
    ncclGetVersion(&v);
    const char *nvls = weft_env_get(WEFT_ENV_NCCL_NVLS_ENABLE);
    fprintf(stderr,
            "weft tune: NCCL %d.%d.%d from %s; NCCL_NVLS_ENABLE=%s (tools/compare_nccl.sh runs "
            "nccl-tests with the NCCL tools/gpu_env.sh picks and NCCL_NVLS_ENABLE=0: tune under "
            "the same for its verdicts to hold there)\n",
            v / 10000, v / 100 % 100, v % 100,
            dladdr((void *)ncclGetVersion, &info) && info.dli_fname ? info.dli_fname : "?",
            *nvls ? nvls : "(unset: NCCL's default)");
}

/* Problems loading the folder, without the `require`s that rule instances out on purpose
 * (SERVE, ANYN...: -D brings those in) and the notes that follow them. */
static void print_load_diag(const weft_diag *d) {
    int skipping = 0;
    for (size_t i = 0; i < weft_diag_size(d); i++) {
        const weft_diag_entry *e = weft_diag_get(d, i);
        if (e->sev == WEFT_SEV_ERROR) skipping = strncmp(e->msg, "requirement failed", 18) == 0;
        if (skipping || e->sev == WEFT_SEV_INFO || e->sev == WEFT_SEV_WARNING) continue;
        char *s = weft_diag_format(e);
        if (s) fprintf(stderr, "%s\n", s);
        free(s);
    }
}

static int file_exists(const char *p) {
    struct stat st;
    return stat(p, &st) == 0;
}

int main(int argc, char **argv) {
    int rank = 0, world = 1, rc = 0;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &world);
    g_rank = rank;
    tune_opts o;
    int pr = tune_opts_parse(argc, argv, &o, rank == 0 ? stderr : NULL);
    if (pr != 0 || o.plot_only) {
        if (pr == 0 && rank == 0)
            fprintf(stderr, "weft tune: --plot-only needs no GPU: run `weft tune --plot-only %s`\n",
                    o.plot_only);
        MPI_Finalize();
        return pr == 1 ? 0 : 2;
    }
    if (world < 2) {
        if (rank == 0)
            fprintf(stderr, "weft tune: needs at least 2 ranks; launch it like nccl-tests, one "
                            "process per GPU: mpirun -np N weft tune ...\n");
        MPI_Finalize();
        return 2;
    }
    /* one process per GPU of each host; the node shape weft serves is NCCL's (below), which
     * NCCL_HOSTID can make smaller than a host */
    MPI_Comm local;
    int lrank = 0, lsize = 1, ndev = 0;
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &local);
    MPI_Comm_rank(local, &lrank);
    MPI_Comm_size(local, &lsize);
    CU(cudaGetDeviceCount(&ndev));
    int bad = ndev < lsize, anybad = 0;
    MPI_Allreduce(&bad, &anybad, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (anybad) {
        if (bad)
            fprintf(stderr,
                    "weft tune: rank %d: %d ranks run on this host, which has %d GPUs; weft tune "
                    "runs one process per GPU\n",
                    rank, lsize, ndev);
        MPI_Finalize();
        return 2;
    }
    CU(cudaSetDevice(lrank));

    /* NCCL's communicators first (weft is never attached to them), then weft's */
    ncclComm_t comms[C_COUNT];
    for (int c = 0; c < C_COUNT; c++) {
        int k = (c + 1) % C_COUNT;
        ncclUniqueId id;
        if (rank == 0) NC(ncclGetUniqueId(&id));
        MPI_Bcast(&id, sizeof id, MPI_BYTE, 0, MPI_COMM_WORLD);
        NC(ncclCommInitRank(&comms[k], world, id, rank));
    }
    ncclComm_t comm = comms[C_WEFT];

    /* the node shape, as libweft_nccl.so finds it: NCCL's LSA team (ranks n*G .. n*G+G-1 on
     * node n), whether the nodes are hosts or NCCL_HOSTID's emulation on one host */
    weft_diag *d = weft_diag_new();
    int gpn = world, nr = world, me = rank;
    weft_nccl_api api;
    memset(&api, 0, sizeof api);
    api.CommCount = ncclCommCount;
    api.CommUserRank = ncclCommUserRank;
    if (d == NULL || weft_mn_query(&api, comm, &nr, &me, &gpn, d) != WEFT_OK) {
        if (rank == 0) {
            fprintf(stderr, "weft tune: NCCL's nodes have a shape weft does not serve:\n");
            weft_diag_print(d, stderr, WEFT_SEV_NOTE);
        }
        MPI_Finalize();
        return 1;
    }

    /* the candidates: the folder as libweft_nccl.so loads it for this rank count and node shape
     * (sources with a parameter G compiled for it; across nodes only files written for them),
     * with -D */
    weft_registry *base = NULL, *reg = NULL;
    if (weft_registry_new(&base) != WEFT_OK ||
        weft_registry_load_ex(base, o.paths, WEFT_REGISTRY_NO_TABLE, d) != WEFT_OK ||
        weft_registry_for_nodes_defines(base, world, gpn, o.defines, (size_t)o.ndefines, &reg, d) !=
            WEFT_OK) {
        fprintf(stderr, "weft tune: rank %d: out of memory loading %s\n", rank, o.paths);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    if (rank == 0) {
        print_load_diag(d);
        if (!o.quiet) print_nccl_setup();
    }
    weft_diag_clear(d);
    weft_comm *wc = NULL;
    if (weft_comm_attach(1, &comm, reg, &wc, d) != WEFT_OK) {
        if (rank == 0) {
            fprintf(stderr, "weft tune: weft could not attach to the communicator:\n");
            weft_diag_print(d, stderr, WEFT_SEV_NOTE);
        }
        MPI_Finalize();
        return 1;
    }
    weft_diag_clear(d);

    gpu g;
    memset(&g, 0, sizeof g);
    g.rank = rank;
    g.nranks = world;
    g.mpi = MPI_COMM_WORLD;
    memcpy(g.comms, comms, sizeof comms);
    g.wc = wc;
    g.reg = reg;
    CU(cudaStreamCreateWithFlags(&g.st, cudaStreamNonBlocking));
    tune_backend b = {&g,        rank,     world,     g_buffers,   g_check, g_warm,
                      g_capture, g_sample, g_release, g_allgather, g_now,   g_through};

    weft_machine m;
    weft_machine_detect(&m);
    m.rpn[0] = lsize; /* the launcher's own count, whatever its environment variables say */
    m.nrpn = 1;
    FILE *progress = rank == 0 && !o.quiet ? stderr : NULL;
    weft_tune_table *t = NULL;
    weft_result res = tune_run(&o, &b, reg, &m, progress, isatty(2), &t, d);
    if (res != WEFT_OK) {
        if (rank == 0) weft_diag_print(d, stderr, WEFT_SEV_NOTE);
        rc = 1;
    } else if (rank == 0) {
        weft_diag_print(d, stderr, WEFT_SEV_WARNING);
        weft_diag_clear(d);
        if (o.merge && file_exists(o.out)) {
            weft_tune_table *old = NULL;
            if (weft_tune_read_file(o.out, &old, d) != WEFT_OK ||
                weft_tune_merge(t, old, d) != WEFT_OK) {
                weft_diag_print(d, stderr, WEFT_SEV_NOTE);
                fprintf(stderr, "weft tune: not merged; the new table is written alone\n");
            }
            weft_tune_table_free(old);
            weft_diag_clear(d);
        }
        if (weft_tune_write_file(t, o.out, d) != WEFT_OK) {
            weft_diag_print(d, stderr, WEFT_SEV_NOTE);
            rc = 1;
        } else {
            size_t sizes = 0, weft = 0;
            for (size_t i = 0; i < t->nsecs; i++)
                for (size_t j = 0; j < t->secs[i].nrows; j++) {
                    sizes++;
                    weft += t->secs[i].rows[j].choice >= 0;
                }
            for (size_t i = 0; i < t->nrun; i++) /* the verification's summary */
                if (strcmp(t->run[i].key, "verified") == 0)
                    printf("weft tune: %s\n", t->run[i].value);
            printf("weft tune: wrote %s: %zu sections; weft serves %zu of the %zu measured "
                   "points, NCCL the rest.\nUse it: WEFT_TUNE_FILE=%s (or save it as "
                   "weft-tune.txt in the algorithm folder) with LD_PRELOAD=libweft_nccl.so\n",
                   o.out, t->nsecs, weft, sizes, o.out);
            if (o.plot) {
                char *svg = tune_plot_path(o.out);
                if (svg && tune_plot(t, svg, d) == WEFT_OK) printf("weft tune: wrote %s\n", svg);
                weft_diag_print(d, stderr, WEFT_SEV_NOTE);
                free(svg);
            }
        }
    }
    MPI_Bcast(&rc, 1, MPI_INT, 0, MPI_COMM_WORLD);
    free_buffers(&g);
    if (g.wc) weft_comm_detach(g.wc); /* verification may have detached it already */
    for (int c = 0; c < C_COUNT; c++)
        ncclCommDestroy(comms[c]);
    weft_tune_table_free(t);
    weft_machine_free(&m);
    weft_registry_free(reg);
    weft_registry_free(base);
    weft_diag_free(d);
    MPI_Comm_free(&local);
    MPI_Finalize();
    return rc;
}
