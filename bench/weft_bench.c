/* weft_bench.c — weft against NCCL, both timed exactly as nccl-tests times a collective, in one
 * run with the ratio; --diagnose measures NCCL in the setups that could make it slower here than
 * in nccl-tests. One process per GPU under mpirun. */
#define _GNU_SOURCE /* getcpu, dladdr */
#include "comm_internal.h"
#include "kernels_internal.h"
#include "registry_internal.h"
#include "gen.h"
#include "gpu_util.h"

#include <dlfcn.h>
#include <getopt.h>
#include <mpi.h>
#include <nccl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define MAXA 64 /* schedules */
#define MAXR 64 /* rounds */
#define MAXV 80 /* timed variants per size */

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

static double median(const double *in, int n) {
    double v[256];
    if (n > 256) n = 256;
    if (n < 1) return 0;
    for (int i = 0; i < n; i++)
        v[i] = in[i];
    for (int i = 1; i < n; i++)
        for (int j = i; j > 0 && v[j] < v[j - 1]; j--) {
            double t = v[j];
            v[j] = v[j - 1], v[j - 1] = t;
        }
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts); /* nccl-tests: std::chrono::steady_clock */
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* ---- what one timed sample runs ------------------------------------------------------------ *
 * A variant is an implementation (NCCL on a given communicator, or a weft schedule) and a way of
 * timing it. The default way is nccl-tests' BenchTime: one untimed call and a stream sync, a
 * barrier, then the host clock from before the first of n calls until the stream is seen idle
 * (cudaStreamQuery polled with a yield, the communicator's async error checked in the loop), per
 * call, averaged over the ranks. In a CUDA graph (-G N) the n calls are captured and
 * instantiated for each sample, and the timed part is N launches of the fresh graph (its upload
 * included), as nccl-tests -G N does. Buffers are offset by the call's size on every call while
 * they fit, as nccl-tests shifts them. */
typedef struct variant {
    const char *name; /* row label */
    const char *what; /* --diagnose: what it isolates */
    int algo;         /* -1: NCCL; else a weft schedule (index in the attach list) */
    ncclComm_t comm;  /* NCCL's communicator (weft: the one weft attached to) */
    int cuda_bufs;    /* the cudaMalloc'd buffer set instead of the main one */
    int events;       /* CUDA events on the stream instead of the host clock */
    int old;          /* weft_bench before issue 29: no sync call, fixed buffers, events */
    int skip;         /* not at this size */
    int calls;        /* calls per sample when not -n (0) */
    double t[MAXR], host[MAXR];
} variant;

typedef struct bench {
    weft_coll coll;
    int dt, op, inplace, iters, graph, rounds;
    size_t count, inb, outb, bufbytes;
    weft_call call;
    weft_comm *wc;
    ncclComm_t wcomm;
    cudaStream_t st;
    cudaEvent_t e0, e1;
    char *buf[2][2]; /* [set][send, recv]: set 0 the main buffers, set 1 cudaMalloc'd */
} bench;

/* Where call `iter` of variant v reads and writes: nccl-tests' layout, in-place forms included,
 * shifted by the call's footprint while the shifted call still fits the buffers. */
static void place(const bench *b, const variant *v, int iter, char **in, char **out) {
    char *sendb = b->buf[v->cuda_bufs][0], *recvb = b->buf[v->cuda_bufs][1];
    size_t es = (size_t)weft_dtype_size((weft_dtype)b->dt);
    size_t total = b->inb > b->outb ? b->inb : b->outb;
    size_t steps = total ? b->bufbytes / total : 1;
    size_t shift = v->old || steps == 0 ? 0 : total * ((size_t)iter % steps);
    *in = sendb + shift;
    *out = (b->inplace ? sendb : recvb) + shift;
    if (b->inplace && weft_coll_large(b->coll, WEFT_BUF_OUTPUT) &&
        !weft_coll_large(b->coll, WEFT_BUF_INPUT))
        *in = sendb + shift + (size_t)rank * b->count * es;
    if (b->inplace && weft_coll_large(b->coll, WEFT_BUF_INPUT) &&
        !weft_coll_large(b->coll, WEFT_BUF_OUTPUT))
        *out = sendb + shift + (size_t)rank * b->count * es;
}

static void run_at(bench *b, int algo, ncclComm_t comm, char *in, char *out) {
    if (algo < 0) {
        ncclDataType_t t = (ncclDataType_t)b->dt;
        ncclRedOp_t o = (ncclRedOp_t)b->op;
        size_t n = b->count;
        switch (b->coll) {
        case WEFT_COLL_ALLREDUCE: NC(ncclAllReduce(in, out, n, t, o, comm, b->st)); break;
        case WEFT_COLL_ALLGATHER: NC(ncclAllGather(in, out, n, t, comm, b->st)); break;
        case WEFT_COLL_REDUCESCATTER: NC(ncclReduceScatter(in, out, n, t, o, comm, b->st)); break;
        case WEFT_COLL_ALLTOALL: NC(ncclAlltoAll(in, out, n, t, comm, b->st)); break;
        case WEFT_COLL_BROADCAST: NC(ncclBroadcast(in, out, n, t, 0, comm, b->st)); break;
        default:
            fprintf(stderr, "weft_bench: %s has no NCCL call here\n", weft_coll_name(b->coll));
            MPI_Abort(MPI_COMM_WORLD, 2);
        }
        return;
    }
    const void *sp[1] = {in};
    void *rp[1] = {out};
    weft_result r = weft_rt_launch(b->wc, algo, &b->call, sp, rp, b->st);
    if (r != WEFT_OK) {
        fprintf(stderr, "[%d] weft launch: %s\n", rank, weft_result_str(r));
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
}

static void run_one(bench *b, const variant *v, int iter) {
    char *in, *out;
    place(b, v, iter, &in, &out);
    run_at(b, v->algo, v->comm, in, out);
}

/* nccl-tests' testStreamSynchronize: poll the stream, check the communicator, yield. */
static void wait_stream(bench *b, ncclComm_t comm) {
    for (;;) {
        cudaError_t e = cudaStreamQuery(b->st);
        if (e == cudaSuccess) return;
        if (e != cudaErrorNotReady) CU(e);
        ncclResult_t ae = ncclSuccess;
        NC(ncclCommGetAsyncError(comm, &ae));
        NC(ae);
        sched_yield();
    }
}

/* One timed sample of v (round r): time per call, averaged over the ranks, and this rank's host
 * time to issue one call. */
static void sample(bench *b, variant *v, int r) {
    int n = v->calls > 0 ? v->calls : b->iters, launches = b->graph > 0 ? b->graph : 1;
    if (!v->old) { /* nccl-tests' "Sync": one call, completed, before the barrier */
        run_one(b, v, 0);
        wait_stream(b, v->comm);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    cudaGraphExec_t ge = NULL;
    if (b->graph) {
        cudaGraph_t g;
        CU(cudaStreamBeginCapture(b->st, cudaStreamCaptureModeThreadLocal));
        for (int i = 0; i < n; i++)
            run_one(b, v, i);
        CU(cudaStreamEndCapture(b->st, &g));
        CU(cudaGraphInstantiate(&ge, g, 0));
        CU(cudaGraphDestroy(g));
        if (v->old) { /* it used to be uploaded by an untimed first launch */
            CU(cudaGraphUpload(ge, b->st));
            CU(cudaStreamSynchronize(b->st));
        }
        MPI_Barrier(MPI_COMM_WORLD);
    }
    int ev = v->events || v->old;
    if (ev) CU(cudaEventRecord(b->e0, b->st));
    double t0 = now_s();
    if (ge)
        for (int l = 0; l < launches; l++)
            CU(cudaGraphLaunch(ge, b->st));
    else
        for (int i = 0; i < n; i++)
            run_one(b, v, i);
    double issued = now_s() - t0;
    if (ev) CU(cudaEventRecord(b->e1, b->st));
    if (v->old)
        CU(cudaEventSynchronize(b->e1));
    else
        wait_stream(b, v->comm);
    double took = now_s() - t0;
    if (ev) {
        float ms = 0;
        CU(cudaEventElapsedTime(&ms, b->e0, b->e1));
        took = 1e-3 * ms;
    }
    if (ge) CU(cudaGraphExecDestroy(ge));
    double us = 1e6 * took / ((double)n * launches), sum = 0;
    MPI_Allreduce(&us, &sum, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    v->t[r] = sum / world;
    v->host[r] = 1e6 * issued / ((double)n * launches);
}

/* ---- communicators ------------------------------------------------------------------------- */
static ncclComm_t new_comm(void) {
    ncclUniqueId id;
    if (rank == 0) NC(ncclGetUniqueId(&id));
    MPI_Bcast(&id, sizeof id, MPI_BYTE, 0, MPI_COMM_WORLD);
    ncclComm_t c;
    NC(ncclCommInitRank(&c, world, id, rank));
    return c;
}

/* What weft's attach leaves on a communicator, made without weft: a symmetric window of `bytes`
 * (ncclMemAlloc, registered in a group) and, with devcomm, a device communicator. */
typedef struct footprint {
    ncclComm_t comm;
    void *mem;
    ncclWindow_t win;
    uint64_t devcomm[WEFT_RT_DEVCOMM_BYTES / 8];
    int have_devcomm;
} footprint;

/* 0, or -1 on every rank when any rank failed (said on stderr): the variant is then left out
 * rather than the whole run lost. */
static int agree_ok(int ok, const char *what, ncclResult_t r) {
    int all = 0;
    if (!ok)
        fprintf(stderr, "[%d] weft_bench --diagnose: %s: %s\n", rank, what, ncclGetErrorString(r));
    MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    return all ? 0 : -1;
}

static int footprint_make(footprint *f, ncclComm_t c, size_t bytes, int devcomm) {
    memset(f, 0, sizeof *f);
    f->comm = c;
    ncclResult_t r = ncclMemAlloc(&f->mem, bytes);
    if (r == ncclSuccess) {
        CU(cudaMemset(f->mem, 0, bytes));
        CU(cudaDeviceSynchronize());
        r = ncclGroupStart();
        if (r == ncclSuccess)
            r = ncclCommWindowRegister(c, f->mem, bytes, &f->win, NCCL_WIN_COLL_SYMMETRIC);
        ncclResult_t e = ncclGroupEnd();
        if (r == ncclSuccess) r = e;
    }
    if (agree_ok(r == ncclSuccess && f->win != NULL, "a symmetric window", r) != 0) return -1;
    if (!devcomm) return 0;
    r = ncclGroupStart();
    if (r == ncclSuccess)
        r = (ncclResult_t)weft_rt_devcomm_create(dlsym(RTLD_DEFAULT, "ncclDevCommCreate"), c,
                                                 f->devcomm);
    ncclResult_t e = ncclGroupEnd();
    if (r == ncclSuccess) r = e;
    f->have_devcomm = r == ncclSuccess;
    return agree_ok(r == ncclSuccess, "ncclDevCommCreate", r);
}

static void footprint_free(footprint *f) {
    if (f->have_devcomm)
        weft_rt_devcomm_destroy(dlsym(RTLD_DEFAULT, "ncclDevCommDestroy"), f->comm, f->devcomm);
    if (f->win) ncclCommWindowDeregister(f->comm, f->win);
    if (f->mem) ncclMemFree(f->mem);
}

/* NCCL's graph-mixing path: once a communicator has been used in a capture, every later eager
 * call on it also waits on its internal stream's serial event (NCCL_GRAPH_MIXING_SUPPORT). */
static int capture_once(ncclComm_t c, cudaStream_t st, void *buf) {
    cudaGraph_t g;
    cudaGraphExec_t ge;
    /* connected eagerly first: the capture then holds nothing but the call */
    ncclResult_t r = ncclAllReduce(buf, buf, 2, ncclFloat, ncclSum, c, st);
    CU(cudaStreamSynchronize(st));
    if (r == ncclSuccess) {
        CU(cudaStreamBeginCapture(st, cudaStreamCaptureModeThreadLocal));
        r = ncclAllReduce(buf, buf, 2, ncclFloat, ncclSum, c, st);
        CU(cudaStreamEndCapture(st, &g));
        if (r == ncclSuccess) {
            CU(cudaGraphInstantiate(&ge, g, 0));
            CU(cudaGraphLaunch(ge, st));
            CU(cudaStreamSynchronize(st));
            CU(cudaGraphExecDestroy(ge));
        }
        CU(cudaGraphDestroy(g));
    }
    return agree_ok(r == ncclSuccess, "capturing an allreduce", r);
}

/* Where each rank runs: its GPU's NUMA node against the CPU it is on (a process far from its
 * GPU enqueues slower), and the libnccl it loaded. */
static void print_placement(int dev) {
    char bus[32] = "?", path[96];
    int gnode = -1;
    unsigned cpu = 0, cnode = 0;
    if (cudaDeviceGetPCIBusId(bus, sizeof bus, dev) == cudaSuccess) {
        for (char *p = bus; *p; p++)
            if (*p >= 'A' && *p <= 'F') *p = (char)(*p - 'A' + 'a');
        snprintf(path, sizeof path, "/sys/bus/pci/devices/%s/numa_node", bus);
        FILE *f = fopen(path, "r");
        if (f) {
            if (fscanf(f, "%d", &gnode) != 1) gnode = -1;
            fclose(f);
        }
    }
    if (getcpu(&cpu, &cnode) != 0) cpu = cnode = 0;
    char line[256];
    snprintf(line, sizeof line, "# rank %d: GPU %d (%s, NUMA node %d), on CPU %u (NUMA node %u)",
             rank, dev, bus, gnode, cpu, cnode);
    char *all = rank == 0 ? malloc((size_t)world * sizeof line) : NULL;
    MPI_Gather(line, sizeof line, MPI_CHAR, all, sizeof line, MPI_CHAR, 0, MPI_COMM_WORLD);
    if (rank == 0) {
        Dl_info info;
        void *fn = (void *)ncclGetVersion;
        if (dladdr(fn, &info) && info.dli_fname) printf("# libnccl: %s\n", info.dli_fname);
        for (int i = 0; i < world && all; i++)
            printf("%s\n", all + (size_t)i * sizeof line);
        free(all);
    }
}

/* ---- options ------------------------------------------------------------------------------- */
static const char usage_text[] =
    "usage: mpirun -np N weft_bench {-A SCHEDULE[@MIN-MAX] [-A ...] | -L PATHS} [-C allreduce]\n"
    "         [-b 8] [-e 256M] [-f 2] [-d float] [-o sum] [-n 20] [-w 5] [-G 0] [-c 1] [-I 0]\n"
    "         [-R 0] [-r 5] [-S] [--timer host|events] [--nccl-comm own|weft]\n"
    "         [--order interleaved|blocked] [--alloc ncclmem|cuda] [--diagnose]\n"
    "       weft_bench --loopback N ...   (one GPU, no MPI, no NCCL; its options: --loopback 2 "
    "-h)\n"
    "\n"
    "weft against NCCL on the same data, both timed exactly as nccl-tests 2.19 times (BenchTime):\n"
    "per sample one untimed call and a stream sync, a barrier, then the host clock from before\n"
    "the first of -n calls until the stream is idle, per call, averaged over the ranks; buffers\n"
    "offset by the call's size on each call; with -G N the -n calls are captured into a fresh\n"
    "graph for each sample and launched N times (upload included). -r rounds, each timing every\n"
    "implementation once (interleaved, the order rotating); a column is the median of the rounds.\n"
    "\n"
    "  -A SCHEDULE       a generated schedule (tests/runtime/gen.h, e.g. ar_direct:n=2:ch=16) or "
    "an\n"
    "                    MSCCL XML file; @MIN-MAX: the byte range it serves (default all)\n"
    "  -L PATHS          folders/files of algorithms as WEFT_ALGO_DIR takes them; each size runs\n"
    "                    what the registry selects (as libweft_nccl.so would)\n"
    "  -C COLL           allreduce, allgather, reducescatter, alltoall, broadcast\n"
    "  -b, -e, -f        sizes in bytes as nccl-tests counts them (K, M, G), from, to, factor\n"
    "  -d TYPE, -o OP    data type, reduction (float, sum)\n"
    "  -n ITERS          calls per sample (nccl-tests -n; default 20)\n"
    "  -w WARMUP         untimed calls per implementation and size first (default 5)\n"
    "  -G N              0 eager; N: CUDA graph of -n calls launched N times (nccl-tests -G N)\n"
    "  -c 0|1            compare every schedule's result with NCCL's (#wrong; default 1)\n"
    "  -I 0|1            in place (default 0: out of place)\n"
    "  -R 0|1|2          buffers from ncclMemAlloc registered as symmetric windows with NCCL and\n"
    "                    weft (1 and 2 alike: nccl-tests -R 2)\n"
    "  -r ROUNDS         samples per implementation and size (default 5, at most 64)\n"
    "  -S                run every schedule at every size (sweep)\n"
    "  --timer host      nccl-tests' host clock (default); events: CUDA events around the calls\n"
    "  --nccl-comm own   NCCL runs on a communicator of its own that weft never attached to, as\n"
    "                    in a stock application (default); weft: on the one weft attached to\n"
    "  --order interleaved  every implementation once per round (default); blocked: all rounds\n"
    "                    of one, then the next\n"
    "  --alloc ncclmem   buffers from ncclMemAlloc, as nccl-tests 2.19 allocates them (default);\n"
    "                    cuda: cudaMalloc\n"
    "  --diagnose        per size, NCCL in every setup that could make it slower than in\n"
    "                    nccl-tests, each against NCCL alone on a fresh communicator "
    "(nccl.fresh),\n"
    "                    in the same rounds: cudaMalloc'd buffers, a communicator with a\n"
    "                    symmetric window like weft's, with weft's window and device\n"
    "                    communicator, one NCCL has captured into a graph once, the one weft\n"
    "                    attached to; CUDA events instead of the host clock; one call per\n"
    "                    sample (weft tune's large sizes before); and the method before this\n"
    "                    one (events, no sync call, fixed buffers) for NCCL and weft.\n"
    "                    Rows: size, variant, time, host enqueue time per call, ratio to\n"
    "                    nccl.fresh; then the median ratio per variant over the sizes.\n"
    "Sizes no schedule serves are listed as NCCL's (not timed, except with --diagnose).\n";

enum { OPT_TIMER = 256, OPT_NCCL_COMM, OPT_ORDER, OPT_ALLOC, OPT_DIAGNOSE, OPT_HELP };

int weft_bench_loopback(int argc, char **argv); /* loopback.cc */

int main(int argc, char **argv) {
    /* One GPU, every rank on it: no MPI, no NCCL (loopback.cc). */
    for (int i = 1; i < argc; i++)
        if (strncmp(argv[i], "--loopback", 10) == 0) return weft_bench_loopback(argc, argv);
    size_t minb = 8, maxb = 256u << 20;
    double factor = 2;
    int dt = WEFT_DTYPE_FLOAT, op = WEFT_OP_SUM, iters = 20, warm = 5, graph = 0, check = 1;
    int inplace = 0, rounds = 5, sweep = 0, reg = 0, bad = 0;
    int events = 0, own_comm = 1, blocked = 0, cuda_alloc = 0, diagnose = 0;
    weft_coll coll = WEFT_COLL_ALLREDUCE;
    const char *specs[MAXA];
    size_t lo[MAXA], hi[MAXA];
    int nspecs = 0;
    const char *libpaths = NULL;
    weft_registry *libbase = NULL, *lib = NULL;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &world);
    static const struct option longs[] = {{"timer", required_argument, 0, OPT_TIMER},
                                          {"nccl-comm", required_argument, 0, OPT_NCCL_COMM},
                                          {"order", required_argument, 0, OPT_ORDER},
                                          {"alloc", required_argument, 0, OPT_ALLOC},
                                          {"diagnose", no_argument, 0, OPT_DIAGNOSE},
                                          {"help", no_argument, 0, OPT_HELP},
                                          {0, 0, 0, 0}};
    opterr = rank == 0;
    for (int c;
         (c = getopt_long(argc, argv, "A:L:b:e:f:d:o:n:w:G:c:R:I:r:C:Sh", longs, NULL)) != -1;) {
        switch (c) {
        case 'b': minb = tg_parse_size(optarg); break;
        case 'e': maxb = tg_parse_size(optarg); break;
        case 'f': factor = atof(optarg); break;
        case 'd': dt = lookup(dnames, 10, optarg); break;
        case 'o': op = lookup(onames, 5, optarg); break;
        case 'n': iters = atoi(optarg); break;
        case 'w': warm = atoi(optarg); break;
        case 'G': graph = atoi(optarg); break;
        case 'c': check = atoi(optarg); break;
        case 'R': reg = atoi(optarg) != 0; break;
        case 'I': inplace = atoi(optarg); break;
        case 'r': rounds = atoi(optarg); break;
        case 'C': coll = (weft_coll)weft_coll_from_name(optarg); break;
        case 'S': sweep = 1; break;
        case 'L': libpaths = optarg; break;
        case 'A':
            if (nspecs == MAXA) {
                bad = 1;
                break;
            }
            {
                /* spec[@lo-hi]: the byte range the schedule serves (default: all) */
                char *s = strdup(optarg), *at = strchr(s, '@');
                lo[nspecs] = 0, hi[nspecs] = (size_t)-1;
                if (at) {
                    *at = '\0';
                    char *dash = strchr(at + 1, '-');
                    lo[nspecs] = tg_parse_size(at + 1);
                    if (dash) hi[nspecs] = tg_parse_size(dash + 1);
                }
                specs[nspecs++] = s;
            }
            break;
        case OPT_TIMER:
            events = !strcmp(optarg, "events");
            bad |= !events && strcmp(optarg, "host") != 0;
            break;
        case OPT_NCCL_COMM:
            own_comm = !strcmp(optarg, "own");
            bad |= !own_comm && strcmp(optarg, "weft") != 0;
            break;
        case OPT_ORDER:
            blocked = !strcmp(optarg, "blocked");
            bad |= !blocked && strcmp(optarg, "interleaved") != 0;
            break;
        case OPT_ALLOC:
            cuda_alloc = !strcmp(optarg, "cuda");
            bad |= !cuda_alloc && strcmp(optarg, "ncclmem") != 0;
            break;
        case OPT_DIAGNOSE: diagnose = 1; break;
        case 'h':
        case OPT_HELP:
            if (rank == 0) fputs(usage_text, stdout);
            MPI_Finalize();
            return 0;
        default: bad = 1; break;
        }
    }
    if (bad || optind != argc || dt < 0 || op < 0 || (int)coll < 0 ||
        (nspecs == 0) == (libpaths == NULL) || rounds < 1 || rounds > MAXR || iters < 1 ||
        graph < 0 || world < 2 || (reg && cuda_alloc))
        goto usage;

    int ndev = 0;
    CU(cudaGetDeviceCount(&ndev));
    int dev = rank % ndev;
    CU(cudaSetDevice(dev));
    /* NCCL's own communicator first: nothing of weft's has happened in the process yet */
    ncclComm_t ocomm = own_comm || diagnose ? new_comm() : NULL;
    ncclComm_t comm = new_comm();

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

    bench B;
    memset(&B, 0, sizeof B);
    B.coll = coll;
    B.dt = dt;
    B.op = op;
    B.inplace = inplace;
    B.iters = iters;
    B.graph = graph;
    B.rounds = rounds;
    B.wc = wc;
    B.wcomm = comm;
    B.bufbytes = maxb;
    CU(cudaStreamCreateWithFlags(&B.st, cudaStreamNonBlocking)); /* as nccl-tests */
    CU(cudaEventCreate(&B.e0));
    CU(cudaEventCreate(&B.e1));

    /* --diagnose: communicators carrying, one at a time, what weft's attach and a graph capture
     * leave on NCCL's; created after weft's attach, as the application's would be */
    footprint fwin, fdev;
    ncclComm_t wincomm = NULL, devcomm = NULL, capcomm = NULL;
    int win_ok = 1, dev_ok = 1, cap_ok = 1;
    memset(&fwin, 0, sizeof fwin);
    memset(&fdev, 0, sizeof fdev);
    if (diagnose) {
        wincomm = new_comm();
        devcomm = new_comm();
        capcomm = new_comm();
        /* a setup NCCL refuses is left out (stderr says why), the rest still measured */
        if (footprint_make(&fwin, wincomm, wc->lay.bytes, 0) != 0) win_ok = 0;
        if (footprint_make(&fdev, devcomm, wc->lay.bytes, 1) != 0) dev_ok = 0;
        void *tmp;
        CU(cudaMalloc(&tmp, 64));
        CU(cudaMemset(tmp, 0, 64));
        if (capture_once(capcomm, B.st, tmp) != 0) cap_ok = 0;
        CU(cudaFree(tmp));
    }

    const size_t es = (size_t)weft_dtype_size((weft_dtype)dt);
    int mult = weft_coll_large(coll, WEFT_BUF_INPUT) || weft_coll_large(coll, WEFT_BUF_OUTPUT);
    size_t bufb = maxb + 4096;
    char *refb;
    unsigned long long *res;
    /* the communicators NCCL runs on (each registers the buffers with -R) */
    ncclComm_t ncomms[5] = {comm, ocomm, wincomm, devcomm, capcomm};
    ncclWindow_t wins[5][2];
    memset(wins, 0, sizeof wins);
    if (reg || !cuda_alloc) {
        /* nccl-tests 2.19 allocates with ncclMemAlloc whether it registers or not */
        NC(ncclMemAlloc((void **)&B.buf[0][0], bufb));
        NC(ncclMemAlloc((void **)&B.buf[0][1], bufb));
    } else {
        CU(cudaMalloc((void **)&B.buf[0][0], bufb));
        CU(cudaMalloc((void **)&B.buf[0][1], bufb));
    }
    if (diagnose && !reg && !cuda_alloc) {
        CU(cudaMalloc((void **)&B.buf[1][0], bufb));
        CU(cudaMalloc((void **)&B.buf[1][1], bufb));
    }
    if (reg) {
        /* symmetric windows, as nccl-tests -R 2 makes them: NCCL's symmetric kernels and weft's
         * direct transfers both read peers' buffers in place */
        for (int c = 0; c < 5; c++) {
            if (ncomms[c] == NULL) continue;
            NC(ncclCommWindowRegister(ncomms[c], B.buf[0][0], bufb, &wins[c][0],
                                      NCCL_WIN_COLL_SYMMETRIC));
            NC(ncclCommWindowRegister(ncomms[c], B.buf[0][1], bufb, &wins[c][1],
                                      NCCL_WIN_COLL_SYMMETRIC));
        }
        if (weft_comm_window_register(wc, B.buf[0][0], bufb, wins[0][0]) != WEFT_OK ||
            weft_comm_window_register(wc, B.buf[0][1], bufb, wins[0][1]) != WEFT_OK) {
            fprintf(stderr, "[%d] weft window registration failed\n", rank);
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
    }
    CU(cudaMalloc((void **)&refb, bufb));
    CU(cudaMalloc((void **)&res, 16));

    if (rank == 0) {
        int v = 0;
        ncclGetVersion(&v);
        printf("# weft_bench: %s %s %s, %s, %s, %s buffers (%s), %d ranks (one process per GPU), "
               "NCCL %d\n",
               weft_coll_name(coll), dnames[dt], onames[op], inplace ? "in-place" : "out-of-place",
               graph ? "CUDA graph" : "eager", reg ? "registered (symmetric windows)" : "plain",
               reg || !cuda_alloc ? "ncclMemAlloc" : "cudaMalloc", world, v);
        printf("# timing as nccl-tests: per sample 1 untimed call + sync, barrier, %d calls%s, "
               "%s; %d warmup, %d rounds, %s; a column is the median of the rounds, each round's "
               "time averaged over the ranks. NCCL on %s.\n",
               iters, graph ? " captured, the graph launched" : "",
               events ? "CUDA events" : "host clock to the stream's end", warm, rounds,
               blocked ? "blocked" : "interleaved (order rotating)",
               own_comm ? "a communicator of its own (weft never attached to it)"
                        : "weft's communicator");
    }
    if (diagnose) print_placement(dev);
    if (rank == 0 && !diagnose) {
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
    if (rank == 0 && diagnose)
        printf("#%11s  %-16s %10s %8s %8s  %s\n", "size", "variant", "time-us", "host-us", "/fresh",
               "what");

    /* per variant, over the sizes: the ratio to nccl.fresh (--diagnose summary) */
    static double ratios[MAXV][256];
    static const char *vnames[MAXV];
    int nratio[MAXV] = {0}, nvn = 0;
    double sum_w = 0, sum_n = 0;
    int nsum = 0;
    ncclComm_t ncomm = own_comm ? ocomm : comm; /* NCCL's column */
    for (size_t bytes = minb; bytes <= maxb;
         bytes = (size_t)(bytes * factor) > bytes ? (size_t)(bytes * factor) : bytes + 1) {
        size_t count = bytes / es;
        if (mult) count /= (size_t)world;
        if (count == 0) continue;
        weft_call call = {coll, (weft_dtype)dt, (weft_redop)op, count, inplace, 0, world, 0, 0};
        /* The schedule(s) that serve this size. */
        int sel[MAXA], nsel = 0;
        if (lib) {
            const char *why = NULL;
            int ai = weft_registry_select(lib, &call, &why);
            if (ai >= 0 && weft_rt_algo_eligible(wc, ai))
                sel[nsel++] = ai;
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
                sel[nsel++] = i;
                if (!sweep) break;
            }
        }
        if (nsel == 0 && !diagnose) continue;
        B.count = count;
        B.call = call;
        B.inb = (weft_coll_large(coll, WEFT_BUF_INPUT) ? world : 1) * count * es;
        B.outb = (weft_coll_large(coll, WEFT_BUF_OUTPUT) ? world : 1) * count * es;

        /* The variants timed at this size. */
        variant V[MAXV];
        int nv = 0;
        memset(V, 0, sizeof V);
#define ADD(nm, wh, a, c, cb, ev, o)                                                               \
    do {                                                                                           \
        if (nv < MAXV)                                                                             \
            V[nv++] = (variant){.name = nm,                                                        \
                                .what = wh,                                                        \
                                .algo = a,                                                         \
                                .comm = c,                                                         \
                                .cuda_bufs = cb,                                                   \
                                .events = ev,                                                      \
                                .old = o};                                                         \
    } while (0)
        if (!diagnose) {
            ADD("nccl", "", -1, ncomm, 0, events, 0);
            for (int k = 0; k < nsel; k++)
                ADD(algos[sel[k]]->name, "", sel[k], comm, 0, events, 0);
        } else {
            ADD("nccl.fresh", "NCCL alone on a communicator of its own (the reference)", -1, ocomm,
                0, 0, 0);
            if (B.buf[1][0])
                ADD("nccl.cudamalloc", "the same, buffers from cudaMalloc", -1, ocomm, 1, 0, 0);
            ADD("nccl.events", "the same, timed with CUDA events", -1, ocomm, 0, 1, 0);
            if (win_ok)
                ADD("nccl.window", "a communicator with a symmetric window like weft's", -1,
                    wincomm, 0, 0, 0);
            if (dev_ok)
                ADD("nccl.devcomm", "weft's window and device communicator, without weft", -1,
                    devcomm, 0, 0, 0);
            if (cap_ok)
                ADD("nccl.captured", "a communicator NCCL once captured into a graph", -1, capcomm,
                    0, 0, 0);
            ADD("nccl.1call",
                "NCCL alone, one call per sample, events, no sync call (weft tune "
                "before issue 29 at large sizes)",
                -1, ocomm, 0, 0, 1);
            V[nv - 1].calls = 1;
            ADD("nccl.weftcomm", "the communicator weft attached to", -1, comm, 0, 0, 0);
            if (nsel > 0) {
                ADD("weft", algos[sel[0]]->name, sel[0], comm, 0, 0, 0);
                /* the method before issue 29, NCCL right after weft as it ran */
                ADD("weft.old", "weft, the method before (events, no sync call, fixed buffers)",
                    sel[0], comm, B.buf[1][0] != NULL, 0, 1);
            }
            ADD("nccl.old", "NCCL on weft's communicator, the method before", -1, comm,
                B.buf[1][0] != NULL, 0, 1);
        }
#undef ADD
        /* inputs in every buffer set, then warm-up */
        for (int s = 0; s < 2; s++)
            if (B.buf[s][0]) {
                CU(tg_fill(B.buf[s][0], bufb / es, dt, op, 1234, rank, B.st));
                if (!inplace) CU(cudaMemsetAsync(B.buf[s][1], 0, bufb, B.st));
            }
        CU(cudaStreamSynchronize(B.st));
        for (int k = 0; k < nv; k++) {
            for (int i = 0; i < warm; i++)
                run_one(&B, &V[k], i);
            CU(cudaStreamSynchronize(B.st));
        }
        MPI_Barrier(MPI_COMM_WORLD);
        if (blocked) {
            for (int k = 0; k < nv; k++)
                for (int r = 0; r < rounds; r++)
                    sample(&B, &V[k], r);
        } else {
            for (int r = 0; r < rounds; r++)
                for (int j = 0; j < nv; j++)
                    sample(&B, &V[diagnose ? j : (j + r) % nv], r);
        }
        /* #wrong: each schedule against NCCL on its own communicator, on fresh inputs (elements,
         * all ranks): bitwise, or within tol where the reduction order may differ. */
        long long wrong[MAXA] = {0};
        if (check) {
            variant ref = {.name = "", .what = "", .algo = -1, .comm = ncomm, .old = 1};
            char *in, *out;
            place(&B, &ref, 0, &in, &out);
            for (int k = 0; k < nsel; k++) {
                CU(tg_fill(in, B.inb / es, dt, op, 4321 + (unsigned)k, rank, B.st));
                run_at(&B, -1, ncomm, in, out);
                CU(cudaMemcpyAsync(refb, out, B.outb, cudaMemcpyDeviceToDevice, B.st));
                CU(tg_fill(in, B.inb / es, dt, op, 4321 + (unsigned)k, rank, B.st));
                run_at(&B, sel[k], comm, in, out);
                if (tol > 0)
                    CU(tg_compare_tol(out, refb, B.outb / es, dt, tol, res, B.st));
                else
                    CU(tg_compare(out, refb, B.outb / es, (int)es, res, B.st));
                unsigned long long h[2];
                CU(cudaMemcpyAsync(h, res, sizeof h, cudaMemcpyDeviceToHost, B.st));
                CU(cudaStreamSynchronize(B.st));
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
        size_t shown = count * (mult ? (size_t)world : 1);
        if (diagnose) {
            double tf = median(V[0].t, rounds);
            for (int k = 0; k < nv; k++) {
                double t = median(V[k].t, rounds), x = tf > 0 ? t / tf : 0;
                if (rank == 0) {
                    printf("%12zu  %-16s %10.2f %8.2f %8.3f  %s", bytes, V[k].name, t,
                           median(V[k].host, rounds), x, V[k].what);
                    if (V[k].algo >= 0 && !V[k].old && check) printf(" (#wrong %lld)", wrong[0]);
                    printf("\n");
                }
                int vi = 0;
                while (vi < nvn && strcmp(vnames[vi], V[k].name) != 0)
                    vi++;
                if (vi == nvn && nvn < MAXV) vnames[nvn++] = V[k].name;
                if (vi < nvn && nratio[vi] < 256) ratios[vi][nratio[vi]++] = x;
            }
            if (rank == 0 && nsel > 0) {
                double tw = median(V[nv - 3].t, rounds), two = median(V[nv - 2].t, rounds);
                double tno = median(V[nv - 1].t, rounds);
                printf("%12zu  %-16s %10.3f %8s %8.3f  NCCL/weft as measured now (nccl.fresh/weft) "
                       "and before (nccl.old/weft.old)\n",
                       bytes, "nccl/weft", tw > 0 ? tf / tw : 0, "", two > 0 ? tno / two : 0);
            }
            if (rank == 0) fflush(stdout);
            continue;
        }
        double tn = median(V[0].t, rounds), bwf = weft_coll_busbw_factor(coll, world);
        double hn = median(V[0].host, rounds);
        for (int k = 1; k < nv; k++) {
            double tw = median(V[k].t, rounds);
            double aw = (double)bytes / tw / 1e3, an = (double)bytes / tn / 1e3;
            if (rank == 0) {
                printf("%12zu %12zu %8s %6s %10.2f %8.2f %8.2f %6lld %10.2f %8.2f %8.2f %6s %9.2f  "
                       "%-32s %7.2f %7.2f\n",
                       bytes, shown, dnames[dt], onames[op], tw, aw, aw * bwf,
                       check ? wrong[k - 1] : 0, tn, an, an * bwf, "-", tn / tw, V[k].name,
                       median(V[k].host, rounds), hn);
                fflush(stdout);
            }
            if (k == 1) sum_w += aw * bwf, sum_n += an * bwf, nsum++;
        }
    }
    if (rank == 0 && nsum)
        printf("# Avg bus bandwidth: weft %.2f GB/s, NCCL %.2f GB/s (first schedule per size)\n",
               sum_w / nsum, sum_n / nsum);
    if (rank == 0 && diagnose) {
        printf("# summary: per variant, time / nccl.fresh's over the sizes: median [min, max]\n");
        for (int vi = 0; vi < nvn; vi++) {
            double m = median(ratios[vi], nratio[vi]), mn = 1e30, mx = 0;
            for (int i = 0; i < nratio[vi]; i++) {
                if (ratios[vi][i] < mn) mn = ratios[vi][i];
                if (ratios[vi][i] > mx) mx = ratios[vi][i];
            }
            printf("# summary %-16s %6.3f [%.3f, %.3f] over %d sizes\n", vnames[vi], m, mn, mx,
                   nratio[vi]);
        }
    }
    if (reg) {
        weft_comm_window_deregister(wc, wins[0][0]);
        weft_comm_window_deregister(wc, wins[0][1]);
        for (int c = 0; c < 5; c++)
            for (int w = 0; w < 2; w++)
                if (wins[c][w]) ncclCommWindowDeregister(ncomms[c], wins[c][w]);
    }
    weft_rt_detach(wc);
    footprint_free(&fwin);
    footprint_free(&fdev);
    for (int c = 0; c < 5; c++)
        if (ncomms[c]) ncclCommDestroy(ncomms[c]);
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
    if (rank == 0) fputs(usage_text, stderr);
    MPI_Finalize();
    return 2;
}
