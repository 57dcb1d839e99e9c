/* gpu_trace.c — records real traces on GPUs for tests/trace/gpu_trace_check.sh: attaches weft to
 * NCCL communicators (one process driving every GPU, or one process per GPU under mpirun), loads
 * algorithms (a file, or a folder: the registry picks one per size), runs allreduce (float sum,
 * out-of-place) over a list of sizes, writes the CUDA-event time of every launch per rank
 * (EVENTS.rank<R>.txt: "call SEQ rank R bytes B event_us T served NAME"), checks the results,
 * and detaches (which completes the trace files when WEFT_TRACE is set). Exits 77 without 2
 * GPUs. */
#include "weft_runtime.h"

#include <cuda_runtime_api.h>
#include <nccl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef WEFT_HAVE_MPI
#include <mpi.h>
#endif

#define MAXL 8

static int prank = 0, pworld = 1;

#include "gpu_check.h"

typedef struct local {
    int dev, rank;
    ncclComm_t nccl;
    weft_comm *wc;
    cudaStream_t st;
    cudaEvent_t e0, e1;
    float *in, *out, *host;
    FILE *ev;
} local;

int main(int argc, char **argv) {
    const char *algo = NULL, *events = "events";
    size_t sizes[32];
    int nsizes = 0, iters = 5;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--algo") && i + 1 < argc)
            algo = argv[++i];
        else if (!strcmp(argv[i], "--events") && i + 1 < argc)
            events = argv[++i];
        else if (!strcmp(argv[i], "--iters") && i + 1 < argc)
            iters = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--sizes") && i + 1 < argc) {
            char *s = argv[++i], *tok;
            for (tok = strtok(s, ","); tok && nsizes < 32; tok = strtok(NULL, ","))
                sizes[nsizes++] = tg_parse_size(tok);
        } else {
            fprintf(stderr, "usage: gpu_trace --algo FILE --sizes 4K,1M,... [--iters N] "
                            "[--events PREFIX]\n");
            return 2;
        }
    }
    if (algo == NULL || nsizes == 0 || iters < 1) {
        fprintf(stderr, "gpu_trace: --algo and --sizes are required\n");
        return 2;
    }
#ifdef WEFT_HAVE_MPI
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &prank);
    MPI_Comm_size(MPI_COMM_WORLD, &pworld);
#endif
    int ndev = 0;
    if (cudaGetDeviceCount(&ndev) != cudaSuccess || (pworld == 1 && ndev < 2)) {
        printf("skipped: needs 2 GPUs\n");
        return 77;
    }
    local L[MAXL];
    memset(L, 0, sizeof L);
    int nlocal, nranks;
    if (pworld > 1) {
#ifdef WEFT_HAVE_MPI
        nlocal = 1;
        nranks = pworld;
        ncclUniqueId id;
        L[0].dev = prank % ndev, L[0].rank = prank;
        CU(cudaSetDevice(L[0].dev));
        if (prank == 0) NC(ncclGetUniqueId(&id));
        MPI_Bcast(&id, sizeof id, MPI_BYTE, 0, MPI_COMM_WORLD);
        NC(ncclCommInitRank(&L[0].nccl, nranks, id, prank));
#else
        return 2;
#endif
    } else {
        nlocal = nranks = 2;
        ncclComm_t cs[2];
        int devs[2] = {0, 1};
        NC(ncclCommInitAll(cs, 2, devs));
        for (int l = 0; l < 2; l++)
            L[l].dev = l, L[l].rank = l, L[l].nccl = cs[l];
    }
    weft_diag *d = weft_diag_new();
    weft_registry *reg = NULL;
    if (weft_registry_new(&reg) != WEFT_OK || weft_registry_load(reg, algo, d) != WEFT_OK ||
        weft_registry_size(reg) == 0) {
        weft_diag_print(d, stderr, WEFT_SEV_WARNING);
        fprintf(stderr, "[%d] gpu_trace: %s: no algorithm loaded\n", prank, algo);
        return 1;
    }
    ncclComm_t cs[MAXL];
    weft_comm *wc[MAXL];
    for (int l = 0; l < nlocal; l++)
        cs[l] = L[l].nccl;
    if (weft_comm_attach(nlocal, cs, reg, wc, d) != WEFT_OK) {
        weft_diag_print(d, stderr, WEFT_SEV_WARNING);
        fprintf(stderr, "[%d] gpu_trace: attach failed\n", prank);
        return 1;
    }
    size_t maxb = 0;
    for (int i = 0; i < nsizes; i++)
        if (sizes[i] > maxb) maxb = sizes[i];
    for (int l = 0; l < nlocal; l++) {
        local *x = &L[l];
        x->wc = wc[l];
        CU(cudaSetDevice(x->dev));
        CU(cudaStreamCreateWithFlags(&x->st, cudaStreamNonBlocking));
        CU(cudaEventCreate(&x->e0));
        CU(cudaEventCreate(&x->e1));
        CU(cudaMalloc((void **)&x->in, maxb + 16));
        CU(cudaMalloc((void **)&x->out, maxb + 16));
        x->host = malloc(maxb + 16);
        for (size_t e = 0; e < maxb / 4; e++)
            x->host[e] = (float)(x->rank + 1);
        CU(cudaMemcpy(x->in, x->host, maxb, cudaMemcpyHostToDevice));
        char path[512];
        snprintf(path, sizeof path, "%s.rank%d.txt", events, x->rank);
        x->ev = fopen(path, "w");
        if (x->ev == NULL) {
            perror(path);
            return 1;
        }
    }
    int bad = 0;
    long seq = 0;
    const float want = (float)nranks * (float)(nranks + 1) / 2;
    for (int si = 0; si < nsizes; si++) {
        size_t count = sizes[si] / 4;
        if (count == 0) count = 1;
        for (int it = 0; it < iters + 1; it++, seq++) {
            weft_call call = {
                WEFT_COLL_ALLREDUCE, WEFT_DTYPE_FLOAT, WEFT_OP_SUM, count, 0, 0, nranks, 0, 0};
            const char *served[MAXL] = {0};
            for (int l = 0; l < nlocal; l++) {
                local *x = &L[l];
                CU(cudaSetDevice(x->dev));
                CU(cudaEventRecord(x->e0, x->st));
                weft_result r = weft_comm_launch(x->wc, &call, x->in, x->out, x->st, &served[l]);
                CU(cudaEventRecord(x->e1, x->st));
                if (r != WEFT_OK) {
                    fprintf(stderr, "[%d] rank %d: %zu floats: weft_comm_launch: %s\n", prank,
                            x->rank, count, weft_result_str(r));
                    bad = 1;
                }
            }
            for (int l = 0; l < nlocal; l++) {
                local *x = &L[l];
                float ms = 0;
                CU(cudaSetDevice(x->dev));
                CU(cudaEventSynchronize(x->e1));
                CU(cudaEventElapsedTime(&ms, x->e0, x->e1));
                fprintf(x->ev, "call %ld rank %d bytes %zu event_us %.3f served %s\n", seq, x->rank,
                        count * 4, ms * 1000.0, served[l] ? served[l] : "-");
            }
        }
        /* The result of the last call. */
        for (int l = 0; l < nlocal; l++) {
            local *x = &L[l];
            CU(cudaSetDevice(x->dev));
            CU(cudaMemcpy(x->host, x->out, count * 4, cudaMemcpyDeviceToHost));
            size_t wrong = 0;
            for (size_t e = 0; e < count; e++)
                wrong += x->host[e] != want;
            if (wrong) {
                fprintf(stderr, "[%d] rank %d: %zu floats: %zu wrong (e.g. %g, want %g)\n", prank,
                        x->rank, count, wrong, x->host[0], want);
                bad = 1;
            }
            for (size_t e = 0; e < maxb / 4; e++)
                x->host[e] = (float)(x->rank + 1);
        }
        printf("[%d] %zu bytes: %d calls %s\n", prank, count * 4, iters + 1, bad ? "FAILED" : "ok");
    }
    /* Detach completes the trace files. */
    if (nlocal > 1)
        weft_comm_detach_many(nlocal, wc);
    else
        weft_comm_detach(wc[0]);
    for (int l = 0; l < nlocal; l++) {
        fclose(L[l].ev);
        cudaSetDevice(L[l].dev);
        cudaFree(L[l].in);
        cudaFree(L[l].out);
        free(L[l].host);
        ncclCommDestroy(L[l].nccl);
    }
    weft_registry_free(reg);
    weft_diag_free(d);
#ifdef WEFT_HAVE_MPI
    MPI_Finalize();
#endif
    printf("[%d] gpu_trace: %s\n", prank, bad ? "FAILED" : "ok");
    return bad;
}
