/* shim_overhead.c — what libweft_nccl.so costs a call it hands to NCCL, in one run: the same
 * calls on the same communicator and buffers, alternately through the application's ncclX (the
 * shim, when preloaded) and straight into libnccl's own pncclX. Three figures per path:
 *   host   — host time to issue one call, with the stream held by a gate (a host function that
 *            waits for a flag), so the GPU never makes the host wait;
 *   device — GPU time per call: the gated calls run back to back once the gate opens (CUDA
 *            events), so a shim that enqueued work of its own, or made NCCL's slower, shows here;
 *   wall   — nccl-tests' figure: a barrier, N calls, the host clock until the stream is idle.
 * Operations: allreduce, reducescatter (collectives), sendrecv (a ncclGroupStart/End of one
 * ncclSend to the next rank and one ncclRecv from the previous: grouped point-to-point calls,
 * which weft never serves). One process per GPU:
 *
 *   mpirun -np N -x LD_PRELOAD=libweft_nccl.so -x WEFT_ALGO_DIR=DIR shim_overhead [N] [ROUNDS]
 *
 * Pick WEFT_ALGO_DIR so that the calls fall back (no allreduce or reducescatter algorithm among
 * its files): the communicator is attached and every call goes through the shim's decision to
 * NCCL. Without LD_PRELOAD both paths are libnccl's (a control: ratios read 1). */
#define _GNU_SOURCE /* RTLD_NOLOAD */
#include <cuda_runtime_api.h>
#include <dlfcn.h>
#include <mpi.h>
#include <nccl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define CHECK(what, ok)                                                                            \
    do {                                                                                           \
        if (!(ok)) {                                                                               \
            fprintf(stderr, "shim_overhead: rank %d: %s failed\n", g_rank, what);                  \
            MPI_Abort(MPI_COMM_WORLD, 1);                                                          \
        }                                                                                          \
    } while (0)

static int g_rank, g_nranks;

typedef ncclResult_t (*allreduce_fn)(const void *, void *, size_t, ncclDataType_t, ncclRedOp_t,
                                     ncclComm_t, cudaStream_t);
typedef ncclResult_t (*p2p_fn)(const void *, size_t, ncclDataType_t, int, ncclComm_t, cudaStream_t);
typedef ncclResult_t (*recv_fn)(void *, size_t, ncclDataType_t, int, ncclComm_t, cudaStream_t);
typedef ncclResult_t (*group_fn)(void);

/* One set of entry points: the application's (ncclX) or libnccl's own (pncclX). */
typedef struct path {
    allreduce_fn allreduce, reducescatter;
    p2p_fn send;
    recv_fn recv;
    group_fn start, end;
} path;

enum { OP_ALLREDUCE, OP_REDUCESCATTER, OP_SENDRECV, OP_COUNT };
static const char *const op_names[] = {"allreduce", "reducescatter", "sendrecv"};

typedef struct ctx {
    ncclComm_t comm;
    cudaStream_t s;
    char *send, *recv;
    cudaEvent_t e0, e1;
} ctx;

static void call(const path *p, int op, const ctx *c, size_t bytes) {
    size_t n = bytes / sizeof(float);
    switch (op) {
    case OP_ALLREDUCE:
        CHECK("allreduce",
              p->allreduce(c->send, c->recv, n, ncclFloat, ncclSum, c->comm, c->s) == ncclSuccess);
        break;
    case OP_REDUCESCATTER: /* bytes as nccl-tests counts them: the input, all ranks' blocks */
        CHECK("reducescatter", p->reducescatter(c->send, c->recv,
                                                n / (size_t)g_nranks > 0 ? n / (size_t)g_nranks : 1,
                                                ncclFloat, ncclSum, c->comm, c->s) == ncclSuccess);
        break;
    default:
        CHECK("ncclGroupStart", p->start() == ncclSuccess);
        CHECK("ncclSend", p->send(c->send, n, ncclFloat, (g_rank + 1) % g_nranks, c->comm, c->s) ==
                              ncclSuccess);
        CHECK("ncclRecv", p->recv(c->recv, n, ncclFloat, (g_rank + g_nranks - 1) % g_nranks,
                                  c->comm, c->s) == ncclSuccess);
        CHECK("ncclGroupEnd", p->end() == ncclSuccess);
        break;
    }
}

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* The gate: holds the stream until the flag is set, or 5 s (then the sample is marked). */
static volatile int gate_flag, gate_timed_out;
static void CUDART_CB gate(void *arg) {
    (void)arg;
    double t0 = now_s();
    while (!__atomic_load_n(&gate_flag, __ATOMIC_ACQUIRE))
        if (now_s() - t0 > 5) {
            gate_timed_out = 1;
            return;
        }
}

static void wait_stream(const ctx *c) {
    while (cudaStreamQuery(c->s) == cudaErrorNotReady)
        ;
}

/* One sample of n calls: host us per call (gated), device us per call (gated, events), wall us
 * per call (nccl-tests' way). Each averaged over the ranks. */
static void sample(const path *p, int op, const ctx *c, size_t bytes, int n, double out[3]) {
    call(p, op, c, bytes); /* as nccl-tests: one call completed first */
    wait_stream(c);
    MPI_Barrier(MPI_COMM_WORLD);
    __atomic_store_n(&gate_flag, 0, __ATOMIC_RELEASE);
    CHECK("cudaLaunchHostFunc", cudaLaunchHostFunc(c->s, gate, NULL) == cudaSuccess);
    CHECK("cudaEventRecord", cudaEventRecord(c->e0, c->s) == cudaSuccess);
    double t0 = now_s();
    for (int i = 0; i < n; i++)
        call(p, op, c, bytes);
    double host = now_s() - t0;
    CHECK("cudaEventRecord", cudaEventRecord(c->e1, c->s) == cudaSuccess);
    MPI_Barrier(MPI_COMM_WORLD); /* every rank's calls are queued: open the gates together */
    __atomic_store_n(&gate_flag, 1, __ATOMIC_RELEASE);
    CHECK("cudaEventSynchronize", cudaEventSynchronize(c->e1) == cudaSuccess);
    float ms = 0;
    CHECK("cudaEventElapsedTime", cudaEventElapsedTime(&ms, c->e0, c->e1) == cudaSuccess);
    MPI_Barrier(MPI_COMM_WORLD);
    double t1 = now_s();
    for (int i = 0; i < n; i++)
        call(p, op, c, bytes);
    wait_stream(c);
    double wall = now_s() - t1;
    double mine[3] = {1e6 * host / n, 1e3 * (double)ms / n, 1e6 * wall / n};
    MPI_Allreduce(mine, out, 3, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    for (int k = 0; k < 3; k++)
        out[k] /= g_nranks;
}

static int cmp(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double med(double *v, int n) {
    qsort(v, (size_t)n, sizeof *v, cmp);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

#define SYM(lib, name, dst)                                                                        \
    do {                                                                                           \
        void *s_ = dlsym(lib, name);                                                               \
        CHECK(name, s_ != NULL);                                                                   \
        memcpy(&(dst), &s_, sizeof s_);                                                            \
    } while (0)

int main(int argc, char **argv) {
    int n = argc > 1 ? atoi(argv[1]) : 50, rounds = argc > 2 ? atoi(argv[2]) : 11;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &g_nranks);
    if (n < 1 || n > 200 || rounds < 1 || rounds > 101) {
        /* more than ~200 gated calls could fill the stream's queue before the gate opens */
        if (g_rank == 0) fprintf(stderr, "usage: shim_overhead [CALLS 1-200] [ROUNDS 1-101]\n");
        MPI_Finalize();
        return 2;
    }
    int ndev = 0;
    CHECK("cudaGetDeviceCount", cudaGetDeviceCount(&ndev) == cudaSuccess && ndev > 0);
    cudaSetDevice(g_rank % ndev);
    ncclUniqueId id;
    if (g_rank == 0) CHECK("ncclGetUniqueId", ncclGetUniqueId(&id) == ncclSuccess);
    MPI_Bcast(&id, sizeof id, MPI_BYTE, 0, MPI_COMM_WORLD);
    ctx c;
    CHECK("ncclCommInitRank", ncclCommInitRank(&c.comm, g_nranks, id, g_rank) == ncclSuccess);
    /* the real entry points, whatever is in front of them */
    void *lib = dlopen("libnccl.so.2", RTLD_NOW | RTLD_NOLOAD);
    CHECK("dlopen libnccl.so.2", lib != NULL);
    path app = {ncclAllReduce, ncclReduceScatter, ncclSend, ncclRecv, ncclGroupStart, ncclGroupEnd};
    path direct;
    SYM(lib, "pncclAllReduce", direct.allreduce);
    SYM(lib, "pncclReduceScatter", direct.reducescatter);
    SYM(lib, "pncclSend", direct.send);
    SYM(lib, "pncclRecv", direct.recv);
    SYM(lib, "pncclGroupStart", direct.start);
    SYM(lib, "pncclGroupEnd", direct.end);
    Dl_info info;
    void *a = NULL;
    memcpy(&a, &app.allreduce, sizeof a);
    int shim = dladdr(a, &info) && info.dli_fname && strstr(info.dli_fname, "weft_nccl");
    if (g_rank == 0)
        printf("# ncclAllReduce resolves to %s; %d ranks; %d calls per sample, %d samples per path "
               "(alternating), medians; us per call averaged over the ranks\n",
               shim ? info.dli_fname : "libnccl itself (no shim)", g_nranks, n, rounds);
    CHECK("cudaMalloc", cudaMalloc((void **)&c.send, 1 << 20) == cudaSuccess);
    CHECK("cudaMalloc", cudaMalloc((void **)&c.recv, 1 << 20) == cudaSuccess);
    cudaMemset(c.send, 0, 1 << 20);
    cudaMemset(c.recv, 0, 1 << 20);
    CHECK("cudaStreamCreate",
          cudaStreamCreateWithFlags(&c.s, cudaStreamNonBlocking) == cudaSuccess);
    cudaEventCreate(&c.e0);
    cudaEventCreate(&c.e1);
    if (g_rank == 0)
        printf("| op | size | host us shim | host us direct | host +us | device us shim | device "
               "us direct | device ratio | wall us shim | wall us direct | wall ratio |\n"
               "|---|---|---|---|---|---|---|---|---|---|---|\n");
    double(*x)[3] = calloc((size_t)rounds, sizeof *x), (*y)[3] = calloc((size_t)rounds, sizeof *y);
    double *v = calloc((size_t)rounds, sizeof *v);
    for (int op = 0; op < OP_COUNT; op++) {
        for (size_t bytes = 8; bytes <= (1 << 19); bytes *= 8) {
            for (int i = 0; i < 3; i++) /* warm-up: connections, caches */
                call(&direct, op, &c, bytes), call(&app, op, &c, bytes);
            wait_stream(&c);
            for (int r = 0; r < rounds; r++) { /* alternating, in one process */
                sample(&app, op, &c, bytes, n, x[r]);
                sample(&direct, op, &c, bytes, n, y[r]);
            }
            double m[2][3];
            for (int k = 0; k < 3; k++) {
                for (int r = 0; r < rounds; r++)
                    v[r] = x[r][k];
                m[0][k] = med(v, rounds);
                for (int r = 0; r < rounds; r++)
                    v[r] = y[r][k];
                m[1][k] = med(v, rounds);
            }
            if (g_rank == 0)
                printf("| %s | %zu B | %.3f | %.3f | %+.3f | %.2f | %.2f | %.3f | %.2f | %.2f | "
                       "%.3f |\n",
                       op_names[op], bytes, m[0][0], m[1][0], m[0][0] - m[1][0], m[0][1], m[1][1],
                       m[0][1] / m[1][1], m[0][2], m[1][2], m[0][2] / m[1][2]);
        }
    }
    int to = gate_timed_out, any = 0;
    MPI_Allreduce(&to, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (g_rank == 0 && any)
        printf("# WARNING: a gate opened on its 5 s timeout (the stream's queue filled before "
               "the flag): device figures of that sample are wrong; use fewer calls\n");
    free(x);
    free(y);
    free(v);
    cudaFree(c.send);
    cudaFree(c.recv);
    ncclCommDestroy(c.comm);
    MPI_Finalize();
    return 0;
}
