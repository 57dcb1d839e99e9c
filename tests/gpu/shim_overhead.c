/* shim_overhead.c — the cost libweft_nccl.so adds to calls it hands to NCCL, measured in one run:
 * the same allreduce on the same communicator and buffers, alternately through the application's
 * ncclAllReduce (the shim, when preloaded) and straight into libnccl's own pncclAllReduce, in
 * nccl-tests' way (N calls back to back on one stream, wall time per call). One process per GPU:
 *
 *   mpirun -np 2 -x LD_PRELOAD=libweft_nccl.so -x WEFT_ALGO_DIR=DIR shim_overhead [N] [ROUNDS]
 *
 * Pick WEFT_ALGO_DIR so that the calls fall back (no allreduce algorithm among its files): the
 * communicator is attached, every call goes through selection, and NCCL runs it. */
#define _GNU_SOURCE /* RTLD_NOLOAD */
#include <cuda_runtime_api.h>
#include <dlfcn.h>
#include <mpi.h>
#include <nccl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef ncclResult_t (*allreduce_fn)(const void *, void *, size_t, ncclDataType_t, ncclRedOp_t,
                                     ncclComm_t, cudaStream_t);

#define CHECK(what, ok)                                                                            \
    do {                                                                                           \
        if (!(ok)) {                                                                               \
            fprintf(stderr, "shim_overhead: %s failed\n", what);                                   \
            MPI_Abort(MPI_COMM_WORLD, 1);                                                          \
        }                                                                                          \
    } while (0)

static double per_call_us(allreduce_fn f, void *buf, size_t count, ncclComm_t comm, cudaStream_t s,
                          int n) {
    for (int i = 0; i < 5; i++)
        f(buf, buf, count, ncclFloat, ncclSum, comm, s);
    cudaStreamSynchronize(s);
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    for (int i = 0; i < n; i++)
        CHECK("allreduce", f(buf, buf, count, ncclFloat, ncclSum, comm, s) == ncclSuccess);
    cudaStreamSynchronize(s);
    double t = (MPI_Wtime() - t0) * 1e6 / n;
    MPI_Allreduce(MPI_IN_PLACE, &t, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    return t;
}

static int cmp(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv) {
    int n = argc > 1 ? atoi(argv[1]) : 200, rounds = argc > 2 ? atoi(argv[2]) : 15;
    MPI_Init(&argc, &argv);
    int rank, nranks;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    int ndev = 0;
    CHECK("cudaGetDeviceCount", cudaGetDeviceCount(&ndev) == cudaSuccess && ndev > 0);
    cudaSetDevice(rank % ndev);
    ncclUniqueId id;
    if (rank == 0) CHECK("ncclGetUniqueId", ncclGetUniqueId(&id) == ncclSuccess);
    MPI_Bcast(&id, sizeof id, MPI_BYTE, 0, MPI_COMM_WORLD);
    ncclComm_t comm;
    CHECK("ncclCommInitRank", ncclCommInitRank(&comm, nranks, id, rank) == ncclSuccess);
    /* the real entry point, whatever is in front of it */
    void *lib = dlopen("libnccl.so.2", RTLD_NOW | RTLD_NOLOAD);
    CHECK("dlopen libnccl.so.2", lib != NULL);
    allreduce_fn direct, app = ncclAllReduce;
    void *p = dlsym(lib, "pncclAllReduce");
    CHECK("pncclAllReduce", p != NULL);
    memcpy(&direct, &p, sizeof p);
    Dl_info info;
    void *a = NULL;
    memcpy(&a, &app, sizeof a);
    int shim = dladdr(a, &info) && info.dli_fname && strstr(info.dli_fname, "weft_nccl");
    if (rank == 0)
        printf("# ncclAllReduce resolves to %s; %d calls per sample, %d samples per path\n",
               shim ? info.dli_fname : "libnccl itself (no shim)", n, rounds);
    void *buf;
    cudaStream_t s;
    CHECK("cudaMalloc", cudaMalloc(&buf, 1 << 20) == cudaSuccess);
    cudaMemset(buf, 0, 1 << 20);
    cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
    if (rank == 0)
        printf("| size | through ncclAllReduce us | direct pncclAllReduce us | ratio "
               "|\n|---|---|---|---|\n");
    double *x = calloc((size_t)rounds, sizeof *x), *y = calloc((size_t)rounds, sizeof *y);
    for (size_t bytes = 8; bytes <= (1 << 19); bytes *= 4) {
        size_t count = bytes / sizeof(float);
        for (int r = 0; r < rounds; r++) { /* alternating, in one process */
            x[r] = per_call_us(app, buf, count, comm, s, n);
            y[r] = per_call_us(direct, buf, count, comm, s, n);
        }
        qsort(x, (size_t)rounds, sizeof *x, cmp);
        qsort(y, (size_t)rounds, sizeof *y, cmp);
        double mx = x[rounds / 2], my = y[rounds / 2];
        if (rank == 0) printf("| %zu B | %.2f | %.2f | %.3f |\n", bytes, mx, my, mx / my);
    }
    free(x);
    free(y);
    cudaFree(buf);
    ncclCommDestroy(comm);
    MPI_Finalize();
    return 0;
}
