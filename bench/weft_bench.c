/* weft_bench.c — weft against NCCL in nccl-tests' conventions: the same buffers, interleaved
 * rounds in one run, both printed with the ratio. One process per GPU under mpirun. */
#include "comm_internal.h"
#include "registry_internal.h"
#include "gen.h"
#include "gpu_util.h"

#include <mpi.h>
#include <nccl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAXA 64

static int rank = 0, world = 1;

#define TG_STOP() MPI_Abort(MPI_COMM_WORLD, 1)
#define TG_RANK   rank
#include "gpu_check.h"

static const char *const dnames[] = {"int8",   "uint8", "int32", "uint32", "int64",
                                     "uint64", "half",  "float", "double", "bfloat16"};
static const char *const onames[] = {"sum", "prod", "max", "min", "avg"};

static int lookup(const char *const *names, int n, const char *s) {
    for (int i = 0; i < n; i++)
        if (strcmp(names[i], s) == 0) return i;
    return -1;
}

typedef struct impl {
    int algo; /* index into the attach list, -1 = NCCL */
    double t[16];
    double host[16]; /* host time to enqueue one call (eager) */
} impl;

static double median(double *v, int n) {
    for (int i = 1; i < n; i++)
        for (int j = i; j > 0 && v[j] < v[j - 1]; j--) {
            double t = v[j];
            v[j] = v[j - 1], v[j - 1] = t;
        }
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/* nccl-tests: the "size" of a call and the bus bandwidth factor. */
static double busbw_factor(weft_coll c, int n) {
    switch (c) {
    case WEFT_COLL_ALLREDUCE: return 2.0 * (n - 1) / n;
    case WEFT_COLL_ALLGATHER:
    case WEFT_COLL_REDUCESCATTER:
    case WEFT_COLL_ALLTOALL: return (double)(n - 1) / n;
    default: return 1.0;
    }
}

int weft_bench_loopback(int argc, char **argv); /* loopback.cc */

int main(int argc, char **argv) {
    /* One GPU, every rank on it: no MPI, no NCCL (loopback.cc). */
    for (int i = 1; i < argc; i++)
        if (strncmp(argv[i], "--loopback", 10) == 0) return weft_bench_loopback(argc, argv);
    size_t minb = 8, maxb = 256u << 20;
    double factor = 2;
    int dt = WEFT_DTYPE_FLOAT, op = WEFT_OP_SUM, iters = 20, warm = 5, graph = 0, check = 1;
    int inplace = 0, rounds = 5, sweep = 0;
    int reg = 0; /* 1: buffers from ncclMemAlloc, registered as symmetric windows (NCCL and weft) */
    weft_coll coll = WEFT_COLL_ALLREDUCE;
    const char *specs[MAXA];
    size_t lo[MAXA], hi[MAXA];
    int nspecs = 0;
    /* -L: an algorithm folder as libweft_nccl.so loads it; the registry picks per size. */
    const char *libpaths = NULL;
    weft_registry *libbase = NULL, *lib = NULL;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &world);
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!v && strcmp(a, "-S") != 0) goto usage;
        if (!strcmp(a, "-b"))
            minb = tg_parse_size(v), i++;
        else if (!strcmp(a, "-e"))
            maxb = tg_parse_size(v), i++;
        else if (!strcmp(a, "-f"))
            factor = atof(v), i++;
        else if (!strcmp(a, "-d"))
            dt = lookup(dnames, 10, v), i++;
        else if (!strcmp(a, "-o"))
            op = lookup(onames, 5, v), i++;
        else if (!strcmp(a, "-n"))
            iters = atoi(v), i++;
        else if (!strcmp(a, "-w"))
            warm = atoi(v), i++;
        else if (!strcmp(a, "-G"))
            graph = atoi(v), i++;
        else if (!strcmp(a, "-c"))
            check = atoi(v), i++;
        else if (!strcmp(a, "-R"))
            reg = atoi(v), i++;
        else if (!strcmp(a, "-I"))
            inplace = atoi(v), i++;
        else if (!strcmp(a, "-r"))
            rounds = atoi(v), i++;
        else if (!strcmp(a, "-C"))
            coll = (weft_coll)weft_coll_from_name(v), i++;
        else if (!strcmp(a, "-S"))
            sweep = 1;
        else if (!strcmp(a, "-L"))
            libpaths = v, i++;
        else if (!strcmp(a, "-A") && nspecs < MAXA) {
            /* spec[@lo-hi]: the byte range the schedule serves (default: all) */
            char *s = strdup(v), *at = strchr(s, '@');
            lo[nspecs] = 0, hi[nspecs] = (size_t)-1;
            if (at) {
                *at = '\0';
                char *dash = strchr(at + 1, '-');
                lo[nspecs] = tg_parse_size(at + 1);
                if (dash) hi[nspecs] = tg_parse_size(dash + 1);
            }
            specs[nspecs++] = s;
            i++;
        } else
            goto usage;
    }
    if (dt < 0 || op < 0 || (int)coll < 0 || (nspecs == 0) == (libpaths == NULL) || rounds < 1 ||
        rounds > 16 || world < 2)
        goto usage;

    int ndev = 0;
    CU(cudaGetDeviceCount(&ndev));
    int dev = rank % ndev;
    CU(cudaSetDevice(dev));
    ncclUniqueId id;
    if (rank == 0) NC(ncclGetUniqueId(&id));
    MPI_Bcast(&id, sizeof id, MPI_BYTE, 0, MPI_COMM_WORLD);
    ncclComm_t comm;
    NC(ncclCommInitRank(&comm, world, id, rank));

    weft_algo *algos[MAXA];
    if (libpaths) {
        /* The shim's view of the folder: every file loaded and verified, the .weft sources
         * compiled for this rank count; the algorithms are the registry's (not freed here). */
        weft_diag *ld = weft_diag_new();
        if (weft_registry_new(&libbase) != WEFT_OK ||
            weft_registry_load(libbase, libpaths, ld) != WEFT_OK ||
            weft_registry_for_ranks(libbase, world, &lib, ld) != WEFT_OK) {
            if (rank == 0) weft_diag_print(ld, stderr, WEFT_SEV_WARNING);
            MPI_Abort(MPI_COMM_WORLD, 2);
        }
        /* Errors only: the MSCCL-runtime limit warnings of the library's wide files are not
         * this run's business (weft verify and weft library print them). */
        if (rank == 0) weft_diag_print(ld, stderr, WEFT_SEV_ERROR);
        weft_diag_free(ld);
        size_t n = weft_registry_size(lib);
        if (n > MAXA) {
            if (rank == 0)
                fprintf(stderr, "%s: %zu algorithms for %d ranks, at most %d\n", libpaths, n, world,
                        MAXA);
            MPI_Abort(MPI_COMM_WORLD, 2);
        }
        for (size_t i = 0; i < n; i++)
            algos[i] = (weft_algo *)weft_registry_get(lib, i);
        nspecs = (int)n;
        if (rank == 0)
            printf("# -L %s: %d algorithms for %d ranks; each size runs the one the registry "
                   "selects (as libweft_nccl.so would), sizes it leaves to NCCL are listed\n",
                   libpaths, nspecs, world);
    } else {
        for (int i = 0; i < nspecs; i++) {
            gen_params p;
            size_t sl = strlen(specs[i]);
            if (sl > 4 && strcmp(specs[i] + sl - 4, ".xml") == 0) {
                /* A schedule file (e.g. a library algorithm compiled for this rank count). */
                weft_diag *rd = weft_diag_new();
                if (weft_ir_read_file(specs[i], &algos[i], rd) != WEFT_OK) {
                    if (rank == 0) weft_diag_print(rd, stderr, WEFT_SEV_WARNING);
                    MPI_Abort(MPI_COMM_WORLD, 2);
                }
                weft_diag_free(rd);
            } else if (gen_parse(specs[i], &p) != 0 || (algos[i] = gen_algo(&p)) == NULL) {
                if (rank == 0) fprintf(stderr, "bad schedule spec %s\n", specs[i]);
                MPI_Abort(MPI_COMM_WORLD, 2);
            }
        }
    }
    weft_comm *wc = NULL;
    weft_diag *d = weft_diag_new();
    if (weft_rt_attach(1, &comm, (const weft_algo *const *)algos, (size_t)nspecs, NULL, &wc, d) !=
        WEFT_OK) {
        weft_diag_print(d, stderr, WEFT_SEV_NOTE);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    weft_diag_free(d);

    const size_t es = (size_t)weft_dtype_size((weft_dtype)dt);
    int mult = weft_coll_large(coll, WEFT_BUF_INPUT) || weft_coll_large(coll, WEFT_BUF_OUTPUT);
    size_t bufb = maxb + 4096;
    char *sendb, *recvb, *refb;
    unsigned long long *res;
    ncclWindow_t wins[2] = {NULL, NULL};
    if (reg) {
        /* symmetric windows, as nccl-tests -R 2 makes them: NCCL's symmetric kernels and weft's
         * direct transfers both read peers' buffers in place */
        NC(ncclMemAlloc((void **)&sendb, bufb));
        NC(ncclMemAlloc((void **)&recvb, bufb));
        NC(ncclCommWindowRegister(comm, sendb, bufb, &wins[0], NCCL_WIN_COLL_SYMMETRIC));
        NC(ncclCommWindowRegister(comm, recvb, bufb, &wins[1], NCCL_WIN_COLL_SYMMETRIC));
        if (weft_comm_window_register(wc, sendb, bufb, wins[0]) != WEFT_OK ||
            weft_comm_window_register(wc, recvb, bufb, wins[1]) != WEFT_OK) {
            fprintf(stderr, "[%d] weft window registration failed\n", rank);
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
    } else {
        CU(cudaMalloc((void **)&sendb, bufb));
        CU(cudaMalloc((void **)&recvb, bufb));
    }
    CU(cudaMalloc((void **)&refb, bufb));
    CU(cudaMalloc((void **)&res, 16));
    cudaStream_t st;
    CU(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));
    cudaEvent_t e0, e1;
    CU(cudaEventCreate(&e0));
    CU(cudaEventCreate(&e1));

    if (rank == 0) {
        int v = 0;
        ncclGetVersion(&v);
        printf("# weft_bench: %s %s %s, %s, %s, %s buffers, %d ranks (one process per GPU), NCCL "
               "%d\n",
               weft_coll_name(coll), dnames[dt], onames[op], inplace ? "in-place" : "out-of-place",
               graph ? "CUDA graph" : "eager", reg ? "registered (symmetric windows)" : "plain",
               world, v);
        printf("# %d warmup, %d rounds of %d iterations, weft and NCCL interleaved; time is the "
               "median of the rounds' means, averaged over ranks. nccl/weft = NCCL time / weft "
               "time.\n",
               warm, rounds, iters);
        printf("# host-us: host time to enqueue one call (rank 0, median), weft then NCCL.\n");
        printf("#%11s %12s %8s %6s %10s %8s %8s %6s %10s %8s %8s %6s %9s  %-32s %7s %7s\n", "size",
               "count", "type", "redop", "weft-us", "algbw", "busbw", "#wrong", "nccl-us", "algbw",
               "busbw", "#wrong", "nccl/weft", "schedule", "host-us", "host-us");
    }
    /* Floating-point sums and products over more than 2 ranks: weft and NCCL may add in different
     * orders (NCCL's own order depends on its algorithm), so the check allows a few units in the
     * last place per rank; everything else is compared bit for bit. */
    static const double eps[10] = {0, 0, 0, 0, 0, 0, 9.8e-4, 1.2e-7, 2.3e-16, 7.9e-3};
    double tol = 0;
    if (weft_coll_reduces(coll) && world > 2 &&
        (op == WEFT_OP_SUM || op == WEFT_OP_PROD || op == WEFT_OP_AVG))
        tol = 4.0 * world * eps[dt];
    if (rank == 0 && check)
        printf("# #wrong: elements that differ from NCCL's result %s\n",
               tol > 0 ? "by more than tol * (1 + |NCCL's|), the order of the reduction differing"
                       : "in any bit");
    if (rank == 0 && tol > 0) printf("# tol = %.3g\n", tol);
    double sum_w = 0, sum_n = 0;
    int nsum = 0;
    for (size_t bytes = minb; bytes <= maxb;
         bytes = (size_t)(bytes * factor) > bytes ? (size_t)(bytes * factor) : bytes + 1) {
        size_t count = bytes / es;
        if (mult) count /= (size_t)world;
        if (count == 0) continue;
        /* The implementations this size runs: NCCL and the schedule(s) that serve it. */
        weft_call call = {coll, (weft_dtype)dt, (weft_redop)op, count, inplace, 0, world, 0, 0};
        impl im[MAXA + 1];
        int nim = 0;
        im[nim++].algo = -1;
        if (lib) {
            const char *why = NULL;
            int ai = weft_registry_select(lib, &call, &why);
            if (ai >= 0 && weft_rt_algo_eligible(wc, ai))
                im[nim++].algo = ai;
            else if (rank == 0)
                printf("%12zu %12zu %8s %6s   NCCL serves it: %s\n", bytes,
                       count * (mult ? (size_t)world : 1), dnames[dt], onames[op],
                       ai >= 0 ? "the selected algorithm cannot run on this communicator"
                               : (why ? why : "no algorithm fits"));
        } else {
            for (int i = 0; i < nspecs; i++) {
                if (algos[i]->coll != coll || !weft_rt_algo_eligible(wc, i)) continue;
                if (!(inplace ? algos[i]->inplace : algos[i]->outofplace)) continue;
                if (!sweep && (bytes < lo[i] || bytes > hi[i])) continue;
                im[nim++].algo = i;
                if (!sweep) break;
            }
        }
        if (nim == 1) continue;
        size_t inb = (weft_coll_large(coll, WEFT_BUF_INPUT) ? world : 1) * count * es;
        size_t outb = (weft_coll_large(coll, WEFT_BUF_OUTPUT) ? world : 1) * count * es;
        char *in = sendb, *out = inplace ? sendb : recvb;
        if (inplace && weft_coll_large(coll, WEFT_BUF_OUTPUT) &&
            !weft_coll_large(coll, WEFT_BUF_INPUT))
            in = sendb + (size_t)rank * count * es;
        if (inplace && weft_coll_large(coll, WEFT_BUF_INPUT) &&
            !weft_coll_large(coll, WEFT_BUF_OUTPUT))
            out = sendb + (size_t)rank * count * es;
        CU(tg_fill(in, inb / es, dt, op, 1234, rank, st));
        CU(cudaStreamSynchronize(st));
        const void *sp[1] = {in};
        void *rp[1] = {out};
#define RUN_ONE(ai)                                                                                \
    do {                                                                                           \
        if ((ai) < 0) {                                                                            \
            ncclDataType_t t_ = (ncclDataType_t)dt;                                                \
            ncclRedOp_t o_ = (ncclRedOp_t)op;                                                      \
            switch (coll) {                                                                        \
            case WEFT_COLL_ALLREDUCE: NC(ncclAllReduce(in, out, count, t_, o_, comm, st)); break;  \
            case WEFT_COLL_ALLGATHER: NC(ncclAllGather(in, out, count, t_, comm, st)); break;      \
            case WEFT_COLL_REDUCESCATTER:                                                          \
                NC(ncclReduceScatter(in, out, count, t_, o_, comm, st));                           \
                break;                                                                             \
            case WEFT_COLL_ALLTOALL: NC(ncclAlltoAll(in, out, count, t_, comm, st)); break;        \
            case WEFT_COLL_BROADCAST: NC(ncclBroadcast(in, out, count, t_, 0, comm, st)); break;   \
            default: break;                                                                        \
            }                                                                                      \
        } else {                                                                                   \
            weft_result r_ = weft_rt_launch(wc, (ai), &call, sp, rp, st);                          \
            if (r_ != WEFT_OK) {                                                                   \
                fprintf(stderr, "[%d] weft launch: %s\n", rank, weft_result_str(r_));              \
                MPI_Abort(MPI_COMM_WORLD, 1);                                                      \
            }                                                                                      \
        }                                                                                          \
    } while (0)
        cudaGraphExec_t ge[MAXA + 1];
        for (int k = 0; k < nim; k++) {
            for (int i = 0; i < warm; i++)
                RUN_ONE(im[k].algo);
            CU(cudaStreamSynchronize(st));
            if (graph) {
                cudaGraph_t g;
                CU(cudaStreamBeginCapture(st, cudaStreamCaptureModeThreadLocal));
                for (int i = 0; i < iters; i++)
                    RUN_ONE(im[k].algo);
                CU(cudaStreamEndCapture(st, &g));
                CU(cudaGraphInstantiate(&ge[k], g, 0));
                CU(cudaGraphDestroy(g));
                CU(cudaGraphLaunch(ge[k], st));
                CU(cudaStreamSynchronize(st));
            }
        }
        for (int r = 0; r < rounds; r++)
            for (int k = 0; k < nim; k++) {
                MPI_Barrier(MPI_COMM_WORLD);
                CU(cudaEventRecord(e0, st));
                double h0 = MPI_Wtime();
                if (graph)
                    CU(cudaGraphLaunch(ge[k], st));
                else
                    for (int i = 0; i < iters; i++)
                        RUN_ONE(im[k].algo);
                im[k].host[r] = (MPI_Wtime() - h0) * 1e6 / iters;
                CU(cudaEventRecord(e1, st));
                CU(cudaEventSynchronize(e1));
                float ms = 0;
                CU(cudaEventElapsedTime(&ms, e0, e1));
                double us = 1000.0 * ms / iters, sum = 0;
                MPI_Allreduce(&us, &sum, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
                im[k].t[r] = sum / world;
            }
        if (graph)
            for (int k = 0; k < nim; k++)
                cudaGraphExecDestroy(ge[k]);
        /* #wrong: each schedule against NCCL on fresh inputs (elements, all ranks): bitwise, or
         * within tol where the reduction order may differ from NCCL's. */
        long long wrong[MAXA + 1] = {0};
        if (check) {
            for (int k = 1; k < nim; k++) {
                CU(tg_fill(in, inb / es, dt, op, 4321 + (unsigned)k, rank, st));
                RUN_ONE(-1);
                CU(cudaMemcpyAsync(refb, out, outb, cudaMemcpyDeviceToDevice, st));
                CU(tg_fill(in, inb / es, dt, op, 4321 + (unsigned)k, rank, st));
                RUN_ONE(im[k].algo);
                if (tol > 0)
                    CU(tg_compare_tol(out, refb, outb / es, dt, tol, res, st));
                else
                    CU(tg_compare(out, refb, outb / es, (int)es, res, st));
                unsigned long long h[2];
                CU(cudaMemcpyAsync(h, res, sizeof h, cudaMemcpyDeviceToHost, st));
                CU(cudaStreamSynchronize(st));
                long long w = (long long)h[0], tot = 0;
                MPI_Allreduce(&w, &tot, 1, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
                wrong[k] = tot;
            }
        }
        char st_msg[1024];
        if (weft_comm_status(wc, st_msg, sizeof st_msg) != WEFT_OK) {
            fprintf(stderr, "[%d] %s\n", rank, st_msg);
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
        double tn = median(im[0].t, rounds), bwf = busbw_factor(coll, world);
        double hn = median(im[0].host, rounds);
        for (int k = 1; k < nim; k++) {
            double tw = median(im[k].t, rounds);
            double aw = (double)bytes / tw / 1e3, an = (double)bytes / tn / 1e3;
            if (rank == 0) {
                printf("%12zu %12zu %8s %6s %10.2f %8.2f %8.2f %6lld %10.2f %8.2f %8.2f %6s %9.2f  "
                       "%-32s %7.2f %7.2f\n",
                       bytes, count * (mult ? (size_t)world : 1), dnames[dt], onames[op], tw, aw,
                       aw * bwf, check ? wrong[k] : 0, tn, an, an * bwf, "-", tn / tw,
                       algos[im[k].algo]->name, median(im[k].host, rounds), hn);
                fflush(stdout);
            }
            if (k == 1) sum_w += aw * bwf, sum_n += an * bwf, nsum++;
        }
    }
    if (rank == 0 && nsum)
        printf("# Avg bus bandwidth: weft %.2f GB/s, NCCL %.2f GB/s (first schedule per size)\n",
               sum_w / nsum, sum_n / nsum);
    if (reg) {
        for (int w = 0; w < 2; w++) {
            weft_comm_window_deregister(wc, wins[w]);
            ncclCommWindowDeregister(comm, wins[w]);
        }
    }
    weft_rt_detach(wc);
    ncclCommDestroy(comm);
    if (lib) {
        weft_registry_free(lib);
        weft_registry_free(libbase);
    } else {
        for (int i = 0; i < nspecs; i++)
            weft_algo_free(algos[i]);
    }
    MPI_Finalize();
    return 0;
usage:
    if (rank == 0)
        fprintf(
            stderr,
            "usage: mpirun -np N weft_bench {-A SCHEDULE[@MIN-MAX] [-A ...] | -L PATHS} [-b 8] "
            "[-e 256M] "
            "[-f 2] [-d float] [-o sum] [-n 20] [-w 5] [-G 0|1] [-c 1] [-I 0|1] [-R 0|1] [-r 5] "
            "[-C allreduce] [-S]\n"
            "  SCHEDULE: a generated schedule, e.g. ar_direct:n=2:ch=16:proto=Simple (see "
            "tests/runtime/gen.h), or an MSCCL XML file (FILE.xml)\n  -L PATHS: folders/files "
            "of .xml and .weft algorithms as "
            "WEFT_ALGO_DIR takes them; each size runs what the registry selects\n"
            "  -S: run every schedule at every size (sweep)\n");
    MPI_Finalize();
    return 2;
}
