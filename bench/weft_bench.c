/* weft_bench.c — weft against NCCL, both timed exactly as nccl-tests times a collective, in one
 * run with the ratio; --diagnose measures NCCL in the setups that could make it slower here than
 * in nccl-tests. One process per GPU under mpirun. */
#define _GNU_SOURCE /* getcpu, dladdr */
#include "comm_internal.h"
#include "kernels_internal.h"
#include "gen.h"
#include "gpu_util.h"
#include "opts.h"

#include <dlfcn.h>
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
#include "tune/stream_wait.h"
#include "tune/nccl_tests.h"

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

/* The command line (bench_spec below). */
typedef struct bench_args {
    weft_coll coll;
    int dt, op, iters, warm, graph, check, inplace, rounds, sweep, reg;
    int events, own_comm, blocked, cuda_alloc, diagnose;
    size_t minb, maxb;
    double factor;
    const char *specs[MAXA];   /* -A, without @MIN-MAX */
    size_t lo[MAXA], hi[MAXA]; /* the byte range each serves */
    int nspecs;
    const char *libpaths; /* -L */
} bench_args;

/* What a communicator of NCCL's carries in one setup --diagnose times NCCL in (below). */
typedef struct footprint {
    ncclComm_t comm;
    void *mem;
    ncclWindow_t win;
    uint64_t devcomm[WEFT_RT_DEVCOMM_BYTES / 8];
    int have_devcomm;
} footprint;

/* The communicators, schedules and buffers of a run, and the call at the size being timed. */
typedef struct bench {
    const bench_args *arg;
    size_t count, inb, outb, bufbytes;
    weft_call call;
    size_t es;  /* the element's size */
    int mult;   /* sizes are nccl-tests': N x count where a buffer holds N segments */
    double tol; /* #wrong: the relative error allowed (0: bitwise) */
    weft_algo *algos[MAXA];
    int nalgos;
    weft_registry *libbase, *lib; /* -L: the registry, owner of the algorithms */
    weft_comm *wc;
    ncclComm_t wcomm, ocomm; /* the communicator weft attached to; NCCL's own */
    ncclComm_t ncomm;        /* NCCL's column: ocomm or wcomm (--nccl-comm) */
    /* --diagnose: communicators carrying, one at a time, what weft's attach and a graph capture
     * leave on NCCL's, and whether NCCL let each be made */
    footprint fwin, fdev;
    ncclComm_t wincomm, devcomm, capcomm;
    int win_ok, dev_ok, cap_ok;
    cudaStream_t st;
    cudaEvent_t e0, e1;
    size_t bufb;             /* each buffer's bytes */
    char *buf[2][2];         /* [set][send, recv]: set 0 the main buffers, set 1 cudaMalloc'd */
    ncclWindow_t wins[5][2]; /* -R: each communicator's windows on set 0 (comms() order) */
    char *refb;              /* NCCL's result, for #wrong */
    unsigned long long *res;
} bench;

/* Where call `iter` of variant v reads and writes: nccl-tests' layout, in-place forms included,
 * shifted by the call's footprint while the shifted call still fits the buffers. */
static void place(const bench *b, const variant *v, int iter, char **in, char **out) {
    char *sendb = b->buf[v->cuda_bufs][0], *recvb = b->buf[v->cuda_bufs][1];
    size_t es = b->es;
    size_t total = b->inb > b->outb ? b->inb : b->outb;
    size_t shift = v->old ? 0 : (size_t)weft_nt_shift(total, b->bufbytes, iter);
    *in = sendb + shift;
    *out = recvb + shift;
    if (b->arg->inplace) { /* both in the send buffer, each at its segment of it (weft_buf_mem) */
        int32_t si, so;
        weft_buf_mem(b->arg->coll, 1, rank, WEFT_BUF_INPUT, &si);
        weft_buf_mem(b->arg->coll, 1, rank, WEFT_BUF_OUTPUT, &so);
        *in = sendb + shift + (size_t)si * b->count * es;
        *out = sendb + shift + (size_t)so * b->count * es;
    }
}

static void run_at(bench *b, int algo, ncclComm_t comm, char *in, char *out) {
    if (algo < 0) {
        ncclDataType_t t = (ncclDataType_t)b->arg->dt;
        ncclRedOp_t o = (ncclRedOp_t)b->arg->op;
        size_t n = b->count;
        switch (b->arg->coll) {
        case WEFT_COLL_ALLREDUCE: NC(ncclAllReduce(in, out, n, t, o, comm, b->st)); return;
        case WEFT_COLL_ALLGATHER: NC(ncclAllGather(in, out, n, t, comm, b->st)); return;
        case WEFT_COLL_REDUCESCATTER: NC(ncclReduceScatter(in, out, n, t, o, comm, b->st)); return;
        case WEFT_COLL_ALLTOALL: NC(ncclAlltoAll(in, out, n, t, comm, b->st)); return;
        case WEFT_COLL_BROADCAST: NC(ncclBroadcast(in, out, n, t, 0, comm, b->st)); return;
        case WEFT_COLL_REDUCE:
        case WEFT_COLL_GATHER:
        case WEFT_COLL_SCATTER:
        case WEFT_COLL_ALLTOALLV:
        case WEFT_COLL_SEND:
        case WEFT_COLL_RECV:
        case WEFT_COLL_CUSTOM:
        case WEFT_COLL_COUNT: break;
        }
        fprintf(stderr, "weft_bench: %s has no NCCL call here\n", weft_coll_name(b->arg->coll));
        MPI_Abort(MPI_COMM_WORLD, 2);
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

/* One timed sample of v (round r): time per call, averaged over the ranks, and this rank's host
 * time to issue one call. */
static void sample(bench *b, variant *v, int r) {
    int n = v->calls > 0 ? v->calls : b->arg->iters,
        launches = b->arg->graph > 0 ? b->arg->graph : 1;
    if (!v->old) { /* nccl-tests' "Sync": one call, completed, before the barrier */
        run_one(b, v, 0);
        weft_wait_stream(b->st, v->comm);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    cudaGraphExec_t ge = NULL;
    if (b->arg->graph) {
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
        weft_wait_stream(b->st, v->comm);
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

/* 0, or -1 on every rank when any rank failed (said on stderr): the variant is then left out
 * rather than the whole run lost. */
static int agree_ok(int ok, const char *what, ncclResult_t r) {
    int all = 0;
    if (!ok)
        fprintf(stderr, "[%d] weft_bench --diagnose: %s: %s\n", rank, what, ncclGetErrorString(r));
    MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    return all ? 0 : -1;
}

/* What weft's attach leaves on a communicator, made without weft: a symmetric window of `bytes`
 * (ncclMemAlloc, registered in a group) and, with devcomm, a device communicator. */
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
enum { OPT_TIMER = 256, OPT_NCCL_COMM, OPT_ORDER, OPT_ALLOC, OPT_DIAGNOSE, OPT_LOOPBACK };
/* the collectives run_at calls NCCL for */
static const char *const coll_words[] = {"allreduce", "allgather", "reducescatter",
                                         "alltoall",  "broadcast", NULL};
static const char *const timer_words[] = {"host", "events", NULL};
static const char *const comm_words[] = {"own", "weft", NULL};
static const char *const order_words[] = {"interleaved", "blocked", NULL};
static const char *const alloc_words[] = {"ncclmem", "cuda", NULL};

static const weft_opt bench_opts[] = {
    WEFT_OPT_TEXT(STR, 'A', NULL, "SCHEDULE",
                  "a generated schedule (tests/runtime/gen.h, e.g.\n"
                  "ar_direct:n=2:ch=16) or an MSCCL XML file;\n"
                  "SCHEDULE@MIN-MAX: the byte range it serves\n"
                  "(default all); repeatable"),
    WEFT_OPT_TEXT(PATHS, 'L', NULL, "PATHS",
                  "folders and files of algorithms as WEFT_ALGO_DIR\n"
                  "takes them; each size runs what the registry\n"
                  "selects (as libweft_nccl.so would)"),
    WEFT_OPT_WORD('C', NULL, "COLL", coll_words, weft_coll_from_name,
                  "the collective (default allreduce)"),
    WEFT_OPT_SIZE('b', NULL, "MIN", 0, ~0ull,
                  "the smallest size in bytes, as nccl-tests counts\n"
                  "them (default 8; K, M, G: powers of 1024)"),
    WEFT_OPT_SIZE('e', NULL, "MAX", 0, ~0ull, "the largest size (default 256M)"),
    WEFT_OPT_REAL('f', NULL, "FACTOR", 1, 1024, "each size FACTOR times the last (default 2)"),
    WEFT_OPT_WORD('d', NULL, "TYPE", weft_opt_type_words, weft_dtype_from_name,
                  "the data type (default float)"),
    WEFT_OPT_WORD('o', NULL, "OP", weft_opt_op_words, weft_redop_from_name,
                  "the reduction (default sum)"),
    WEFT_OPT_INT('n', NULL, "ITERS", 1, 1 << 30, "calls per sample (nccl-tests -n; default 20)"),
    WEFT_OPT_INT('w', NULL, "WARMUP", 0, 1 << 30,
                 "untimed calls per implementation and size first\n"
                 "(default 5)"),
    WEFT_OPT_INT('G', NULL, "N", 0, 1 << 30,
                 "0 eager (default); N: a CUDA graph of the -n calls\n"
                 "launched N times (nccl-tests -G N)"),
    WEFT_OPT_INT('c', NULL, "0|1", 0, 1,
                 "compare every schedule's result with NCCL's\n"
                 "(#wrong; default 1)"),
    WEFT_OPT_INT('I', NULL, "0|1", 0, 1, "in place (default 0: out of place)"),
    WEFT_OPT_INT('R', NULL, "0|1|2", 0, 2,
                 "buffers from ncclMemAlloc registered as symmetric\n"
                 "windows with NCCL and weft (1 and 2 alike:\n"
                 "nccl-tests -R 2)"),
    WEFT_OPT_INT('r', NULL, "ROUNDS", 1, MAXR,
                 "samples per implementation and size (default 5,\n"
                 "at most 64)"),
    WEFT_OPT_FLAG('S', NULL, "run every schedule at every size (sweep)"),
    WEFT_OPT_WORD(OPT_TIMER, "timer", "host|events", timer_words, NULL,
                  "host: nccl-tests' host clock (default); events:\n"
                  "CUDA events around the calls"),
    WEFT_OPT_WORD(OPT_NCCL_COMM, "nccl-comm", "own|weft", comm_words, NULL,
                  "own: NCCL on a communicator of its own that weft\n"
                  "never attached to, as in a stock application\n"
                  "(default); weft: on the one weft attached to"),
    WEFT_OPT_WORD(OPT_ORDER, "order", "interleaved|blocked", order_words, NULL,
                  "interleaved: every implementation once per round\n"
                  "(default); blocked: all rounds of one, then the\n"
                  "next"),
    WEFT_OPT_WORD(OPT_ALLOC, "alloc", "ncclmem|cuda", alloc_words, NULL,
                  "ncclmem: buffers from ncclMemAlloc, as nccl-tests\n"
                  "2.19 allocates them (default); cuda: cudaMalloc"),
    WEFT_OPT_FLAG(OPT_DIAGNOSE, "diagnose",
                  "per size, NCCL in every setup that could make it\n"
                  "slower than in nccl-tests, each against NCCL alone\n"
                  "on a fresh communicator (nccl.fresh), in the same\n"
                  "rounds: cudaMalloc'd buffers, a communicator with a\n"
                  "symmetric window like weft's, with weft's window\n"
                  "and device communicator, one NCCL has captured\n"
                  "into a graph once, the one weft attached to; CUDA\n"
                  "events instead of the host clock; one call per\n"
                  "sample (weft tune's large sizes before); and the\n"
                  "method before this one (events, no sync call,\n"
                  "fixed buffers) for NCCL and weft. Rows: size,\n"
                  "variant, time, host enqueue time per call, ratio\n"
                  "to nccl.fresh; then the median ratio per variant\n"
                  "over the sizes"),
    WEFT_OPT_INT(OPT_LOOPBACK, "loopback", "N", 1, 1 << 20,
                 "every rank of N on one GPU, no MPI, no NCCL, with\n"
                 "options of its own (weft_bench --loopback 2 -h)"),
    {0}};

static const weft_cmd_spec bench_spec = {
    .name = "weft_bench",
    .own_program = 1,
    .summary = "weft against NCCL, both timed as nccl-tests times them",
    .synopsis = "{-A SCHEDULE[@MIN-MAX]... | -L PATHS} [-C COLL] [-b MIN]\n"
                "                  [-e MAX] [-f FACTOR] [-d TYPE] [-o OP] [-n ITERS] [-w WARMUP]\n"
                "                  [-G N] [-c 0|1] [-I 0|1] [-R 0|1|2] [-r ROUNDS] [-S]\n"
                "                  [--timer=host|events] [--nccl-comm=own|weft]\n"
                "                  [--order=interleaved|blocked] [--alloc=ncclmem|cuda]\n"
                "                  [--diagnose]\n"
                "--loopback N ...",
    .description =
        "weft against NCCL on the same data, both timed exactly as nccl-tests 2.19 times\n"
        "(BenchTime), one process per GPU: mpirun -np N weft_bench ... (N >= 2). Per\n"
        "sample one untimed call and a stream sync, a barrier, then the host clock from\n"
        "before the first of -n calls until the stream is idle, per call, averaged over\n"
        "the ranks; buffers offset by the call's size on each call; with -G N the -n\n"
        "calls are captured into a fresh graph for each sample and launched N times\n"
        "(upload included). -r rounds, each timing every implementation once\n"
        "(interleaved, the order rotating); a column is the median of the rounds. Sizes\n"
        "no schedule serves are listed as NCCL's (not timed, except with --diagnose).\n"
        "\n"
        "--loopback N runs every rank of an N-rank communicator on one GPU, without MPI\n"
        "or NCCL (bench/loopback.cc).",
    .opts = bench_opts,
    .exit_status = "0 ok, 2 usage error; a failure aborts every rank (MPI_Abort).",
};

/* What is not on the command line: nccl-tests' defaults where it has the option. */
static const bench_args bench_defaults = {
    .coll = WEFT_COLL_ALLREDUCE,
    .dt = WEFT_DTYPE_FLOAT,
    .op = WEFT_OP_SUM,
    .minb = 8,
    .maxb = 256u << 20,
    .factor = 2,
    .iters = 20,
    .warm = 5,
    .check = 1,
    .rounds = 5,
    .own_comm = 1,
};

/* -A SCHEDULE[@MIN-MAX]: the schedule and the byte range it serves (default all); 0, or the
 * usage error's exit code. */
static int add_schedule(weft_getopt *g, bench_args *a) {
    if (a->nspecs == MAXA) return weft_opt_error(g, "at most %d schedules", MAXA);
    char *s = strdup(g->arg), *at = s ? strchr(s, '@') : NULL;
    unsigned long long lo = 0, hi = ~0ull;
    if (at) {
        char *dash = strchr(at + 1, '-');
        *at = '\0';
        if (dash) *dash = '\0';
        if (weft_parse_size(at + 1, 0, ~0ull, &lo) != 0 ||
            (dash && weft_parse_size(dash + 1, 0, ~0ull, &hi) != 0)) {
            free(s);
            return weft_opt_error(g,
                                  "'%s': MIN and MAX are sizes (bytes, or with a K, M or G "
                                  "suffix)",
                                  g->arg);
        }
    }
    if (s == NULL) return weft_opt_error(g, "out of memory");
    a->specs[a->nspecs] = s; /* kept to the end of the run */
    a->lo[a->nspecs] = (size_t)lo;
    a->hi[a->nspecs] = (size_t)hi;
    a->nspecs++;
    return 0;
}

/* The command line into a: -1 to run, else the exit code (0 after --help, 2 after a usage
 * error, which rank 0 says). */
static int parse_args(int argc, char **argv, bench_args *a) {
    *a = bench_defaults;
    weft_getopt g;
    weft_getopt_init(&g, &bench_spec, argc, argv);
    if (rank != 0) g.out = g.err = NULL;
    for (int c; (c = weft_getopt_next(&g)) != WEFT_OPT_END;) {
        switch (c) {
        case WEFT_OPT_EXIT: return g.exit_code;
        case 'A':
            if (add_schedule(&g, a) != 0) return g.exit_code;
            break;
        case 'L': a->libpaths = g.arg; break;
        case 'C': a->coll = (weft_coll)g.num; break;
        case 'b': a->minb = (size_t)g.unum; break;
        case 'e': a->maxb = (size_t)g.unum; break;
        case 'f': a->factor = g.real; break;
        case 'd': a->dt = (int)g.num; break;
        case 'o': a->op = (int)g.num; break;
        case 'n': a->iters = (int)g.num; break;
        case 'w': a->warm = (int)g.num; break;
        case 'G': a->graph = (int)g.num; break;
        case 'c': a->check = (int)g.num; break;
        case 'I': a->inplace = (int)g.num; break;
        case 'R': a->reg = g.num != 0; break;
        case 'r': a->rounds = (int)g.num; break;
        case 'S': a->sweep = 1; break;
        case OPT_TIMER: a->events = g.num == 1; break;
        case OPT_NCCL_COMM: a->own_comm = g.num == 0; break;
        case OPT_ORDER: a->blocked = g.num == 1; break;
        case OPT_ALLOC: a->cuda_alloc = g.num == 1; break;
        case OPT_DIAGNOSE: a->diagnose = 1; break;
        }
    }
    if (g.noperands) return weft_getopt_usage(&g, "unexpected argument '%s'", g.operands[0]);
    if (a->nspecs && a->libpaths) return weft_getopt_usage(&g, "-A or -L, not both");
    if (!a->nspecs && !a->libpaths)
        return weft_getopt_usage(&g, "which schedules? (-A SCHEDULE or -L PATHS)");
    if (a->reg && a->cuda_alloc)
        return weft_getopt_usage(&g, "-R registers buffers from ncclMemAlloc: not with "
                                     "--alloc=cuda");
    if (world < 2)
        return weft_getopt_usage(&g, "one process per GPU, on 2 or more (mpirun -np N "
                                     "weft_bench ...); on one GPU: --loopback N");
    return -1;
}

/* ---- setting up ---------------------------------------------------------------------------- */
/* This rank's GPU, and NCCL's communicators: its own first, when it runs on one (nothing of
 * weft's has happened in the process yet), then the one weft attaches to. Returns the GPU. */
static int open_comms(bench *b) {
    int ndev = 0;
    CU(cudaGetDeviceCount(&ndev));
    int dev = rank % ndev;
    CU(cudaSetDevice(dev));
    b->ocomm = b->arg->own_comm || b->arg->diagnose ? new_comm() : NULL;
    b->wcomm = new_comm();
    b->ncomm = b->arg->own_comm ? b->ocomm : b->wcomm;
    return dev;
}

/* -L: the shim's view of the folder: every file loaded and verified, the .weft sources compiled
 * for this rank count; the algorithms are the registry's. */
static void load_library(bench *b, const char *paths) {
    weft_diag *ld = weft_diag_new();
    if (weft_registry_new(&b->libbase) != WEFT_OK ||
        weft_registry_load(b->libbase, paths, ld) != WEFT_OK ||
        weft_registry_for_ranks(b->libbase, world, &b->lib, ld) != WEFT_OK) {
        if (rank == 0) weft_diag_print(ld, stderr, WEFT_SEV_WARNING);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    /* Errors only: the MSCCL-runtime limit warnings of the library's wide files are not this
     * run's business (weft verify and weft library print them). */
    if (rank == 0) weft_diag_print(ld, stderr, WEFT_SEV_ERROR);
    weft_diag_free(ld);
    size_t n = weft_registry_size(b->lib);
    if (n > MAXA) {
        if (rank == 0)
            fprintf(stderr, "%s: %zu algorithms for %d ranks, at most %d\n", paths, n, world, MAXA);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    for (size_t i = 0; i < n; i++)
        b->algos[i] = (weft_algo *)weft_registry_get(b->lib, i);
    b->nalgos = (int)n;
    if (rank == 0)
        printf("# -L %s: %d algorithms for %d ranks; each size runs the one the registry "
               "selects (as libweft_nccl.so would), sizes it leaves to NCCL are listed\n",
               paths, b->nalgos, world);
}

/* -A: each a schedule file (e.g. a library algorithm compiled for this rank count) or a
 * generated schedule. */
static void load_schedules(bench *b) {
    const bench_args *a = b->arg;
    for (int i = 0; i < a->nspecs; i++) {
        gen_params p;
        size_t sl = strlen(a->specs[i]);
        if (sl > 4 && strcmp(a->specs[i] + sl - 4, ".xml") == 0) {
            weft_diag *rd = weft_diag_new();
            if (weft_ir_read_file(a->specs[i], &b->algos[i], rd) != WEFT_OK) {
                if (rank == 0) weft_diag_print(rd, stderr, WEFT_SEV_WARNING);
                MPI_Abort(MPI_COMM_WORLD, 2);
            }
            weft_diag_free(rd);
        } else if (gen_parse(a->specs[i], &p) != 0 || (b->algos[i] = gen_algo(&p)) == NULL) {
            if (rank == 0) fprintf(stderr, "bad schedule spec %s\n", a->specs[i]);
            MPI_Abort(MPI_COMM_WORLD, 2);
        }
    }
    b->nalgos = a->nspecs;
}

/* weft attached to its communicator with the schedules, and the stream and events every sample
 * runs on. */
static void attach(bench *b) {
    weft_diag *d = weft_diag_new();
    if (weft_rt_attach(1, &b->wcomm, (const weft_algo *const *)b->algos, (size_t)b->nalgos, NULL,
                       &b->wc, d) != WEFT_OK) {
        weft_diag_print(d, stderr, WEFT_SEV_NOTE);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    weft_diag_free(d);
    CU(cudaStreamCreateWithFlags(&b->st, cudaStreamNonBlocking)); /* as nccl-tests */
    CU(cudaEventCreate(&b->e0));
    CU(cudaEventCreate(&b->e1));
}

/* --diagnose: the communicators of the setups, created after weft's attach, as the
 * application's would be; a setup NCCL refuses is left out (stderr says why), the rest still
 * measured. */
static void make_setups(bench *b) {
    b->wincomm = new_comm();
    b->devcomm = new_comm();
    b->capcomm = new_comm();
    b->win_ok = footprint_make(&b->fwin, b->wincomm, b->wc->lay.bytes, 0) == 0;
    b->dev_ok = footprint_make(&b->fdev, b->devcomm, b->wc->lay.bytes, 1) == 0;
    void *tmp;
    CU(cudaMalloc(&tmp, 64));
    CU(cudaMemset(tmp, 0, 64));
    b->cap_ok = capture_once(b->capcomm, b->st, tmp) == 0;
    CU(cudaFree(tmp));
}

/* Every communicator NCCL runs on here, in one order (wins[]), NULL where there is none. */
static void comms(const bench *b, ncclComm_t out[5]) {
    out[0] = b->wcomm;
    out[1] = b->ocomm;
    out[2] = b->wincomm;
    out[3] = b->devcomm;
    out[4] = b->capcomm;
}

/* The buffers: ncclMemAlloc'd (as nccl-tests 2.19 allocates whether it registers or not) or
 * cudaMalloc'd, a cudaMalloc'd second set for --diagnose, and with -R symmetric windows on
 * every communicator and weft's. */
static void alloc_buffers(bench *b) {
    const bench_args *a = b->arg;
    size_t bufb = b->bufb;
    if (a->reg || !a->cuda_alloc) {
        NC(ncclMemAlloc((void **)&b->buf[0][0], bufb));
        NC(ncclMemAlloc((void **)&b->buf[0][1], bufb));
    } else {
        CU(cudaMalloc((void **)&b->buf[0][0], bufb));
        CU(cudaMalloc((void **)&b->buf[0][1], bufb));
    }
    if (a->diagnose && !a->reg && !a->cuda_alloc) {
        CU(cudaMalloc((void **)&b->buf[1][0], bufb));
        CU(cudaMalloc((void **)&b->buf[1][1], bufb));
    }
    if (a->reg) {
        /* symmetric windows, as nccl-tests -R 2 makes them: NCCL's symmetric kernels and weft's
         * direct transfers both read peers' buffers in place */
        ncclComm_t nc[5];
        comms(b, nc);
        for (int c = 0; c < 5; c++) {
            if (nc[c] == NULL) continue;
            NC(ncclCommWindowRegister(nc[c], b->buf[0][0], bufb, &b->wins[c][0],
                                      NCCL_WIN_COLL_SYMMETRIC));
            NC(ncclCommWindowRegister(nc[c], b->buf[0][1], bufb, &b->wins[c][1],
                                      NCCL_WIN_COLL_SYMMETRIC));
        }
        if (weft_comm_window_register(b->wc, b->buf[0][0], bufb, b->wins[0][0]) != WEFT_OK ||
            weft_comm_window_register(b->wc, b->buf[0][1], bufb, b->wins[0][1]) != WEFT_OK) {
            fprintf(stderr, "[%d] weft window registration failed\n", rank);
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
    }
    CU(cudaMalloc((void **)&b->refb, bufb));
    CU(cudaMalloc((void **)&b->res, 16));
}

/* Floating-point sums and products over more than 2 ranks: weft and NCCL may add in different
 * orders (NCCL's own order depends on its algorithm), so the check allows a few units in the last
 * place per rank; everything else is compared bit for bit. */
static double result_tol(const bench_args *a) {
    static const double eps[10] = {0, 0, 0, 0, 0, 0, 9.8e-4, 1.2e-7, 2.3e-16, 7.9e-3};
    if (weft_coll_reduces(a->coll) && world > 2 &&
        (a->op == WEFT_OP_SUM || a->op == WEFT_OP_PROD || a->op == WEFT_OP_AVG))
        return 4.0 * world * eps[a->dt];
    return 0;
}

/* What is measured and how, and the columns (rank 0; --diagnose: each rank's placement too). */
static void print_header(const bench *b, int dev) {
    const bench_args *a = b->arg;
    if (rank == 0) {
        int v = 0;
        ncclGetVersion(&v);
        printf("# weft_bench: %s %s %s, %s, %s, %s buffers (%s), %d ranks (one process per GPU), "
               "NCCL %d\n",
               weft_coll_name(a->coll), weft_dtype_name((weft_dtype)a->dt),
               weft_redop_name((weft_redop)a->op), a->inplace ? "in-place" : "out-of-place",
               a->graph ? "CUDA graph" : "eager",
               a->reg ? "registered (symmetric windows)" : "plain",
               a->reg || !a->cuda_alloc ? "ncclMemAlloc" : "cudaMalloc", world, v);
        printf("# timing as nccl-tests: per sample 1 untimed call + sync, barrier, %d calls%s, "
               "%s; %d warmup, %d rounds, %s; a column is the median of the rounds, each round's "
               "time averaged over the ranks. NCCL on %s.\n",
               a->iters, a->graph ? " captured, the graph launched" : "",
               a->events ? "CUDA events" : "host clock to the stream's end", a->warm, a->rounds,
               a->blocked ? "blocked" : "interleaved (order rotating)",
               a->own_comm ? "a communicator of its own (weft never attached to it)"
                           : "weft's communicator");
    }
    if (a->diagnose) print_placement(dev);
    if (rank != 0) return;
    if (!a->diagnose) {
        printf("# host-us: host time to enqueue one call (rank 0, median), weft then NCCL.\n");
        printf("#%11s %12s %8s %6s %10s %8s %8s %6s %10s %8s %8s %6s %9s  %-32s %7s %7s\n", "size",
               "count", "type", "redop", "weft-us", "algbw", "busbw", "#wrong", "nccl-us", "algbw",
               "busbw", "#wrong", "nccl/weft", "schedule", "host-us", "host-us");
    }
    if (a->check)
        printf("# #wrong: elements that differ from NCCL's result %s\n",
               b->tol > 0
                   ? "by more than tol * (1 + |NCCL's|), the order of the reduction differing"
                   : "in any bit");
    if (b->tol > 0) printf("# tol = %.3g\n", b->tol);
    if (a->diagnose)
        printf("#%11s  %-16s %10s %8s %8s  %s\n", "size", "variant", "time-us", "host-us", "/fresh",
               "what");
}

/* ---- one size ------------------------------------------------------------------------------ */
/* The schedules that serve the call, into sel: the registry's choice (-L; rank 0 says why NCCL
 * serves a size it leaves), else every -A schedule of the collective and mode that serves its
 * size (the first; -S: each). */
static int select_schedules(const bench *b, size_t bytes, const weft_call *call, int sel[MAXA]) {
    const bench_args *a = b->arg;
    int nsel = 0;
    if (b->lib) {
        const char *why = NULL;
        int ai = weft_registry_select(b->lib, call, &why);
        if (ai >= 0 && weft_rt_algo_eligible(b->wc, ai))
            sel[nsel++] = ai;
        else if (rank == 0)
            printf("%12zu %12zu %8s %6s   NCCL serves it: %s\n", bytes,
                   call->count * (b->mult ? (size_t)world : 1), weft_dtype_name((weft_dtype)a->dt),
                   weft_redop_name((weft_redop)a->op),
                   ai >= 0 ? "the selected algorithm cannot run on this communicator"
                           : (why ? why : "no algorithm fits"));
        return nsel;
    }
    for (int i = 0; i < b->nalgos; i++) {
        const weft_algo *al = b->algos[i];
        if (al->coll != a->coll || !weft_rt_algo_eligible(b->wc, i)) continue;
        if (!(a->inplace ? al->inplace : al->outofplace)) continue;
        if (!a->sweep && (bytes < a->lo[i] || bytes > a->hi[i])) continue;
        sel[nsel++] = i;
        if (!a->sweep) break;
    }
    return nsel;
}

static void add_variant(variant *V, int *nv, const char *name, const char *what, int algo,
                        ncclComm_t comm, int cuda_bufs, int events, int old) {
    if (*nv < MAXV)
        V[(*nv)++] = (variant){.name = name,
                               .what = what,
                               .algo = algo,
                               .comm = comm,
                               .cuda_bufs = cuda_bufs,
                               .events = events,
                               .old = old};
}

/* The variants timed at this size: NCCL and each selected schedule, or --diagnose's setups (the
 * last three, when a schedule serves: weft, weft.old, nccl.old). */
static int make_variants(const bench *b, const int *sel, int nsel, variant *V) {
    const bench_args *a = b->arg;
    int nv = 0, cb = b->buf[1][0] != NULL;
    memset(V, 0, MAXV * sizeof *V);
    if (!a->diagnose) {
        add_variant(V, &nv, "nccl", "", -1, b->ncomm, 0, a->events, 0);
        for (int k = 0; k < nsel; k++)
            add_variant(V, &nv, b->algos[sel[k]]->name, "", sel[k], b->wcomm, 0, a->events, 0);
        return nv;
    }
    add_variant(V, &nv, "nccl.fresh", "NCCL alone on a communicator of its own (the reference)", -1,
                b->ocomm, 0, 0, 0);
    if (cb)
        add_variant(V, &nv, "nccl.cudamalloc", "the same, buffers from cudaMalloc", -1, b->ocomm, 1,
                    0, 0);
    add_variant(V, &nv, "nccl.events", "the same, timed with CUDA events", -1, b->ocomm, 0, 1, 0);
    if (b->win_ok)
        add_variant(V, &nv, "nccl.window", "a communicator with a symmetric window like weft's", -1,
                    b->wincomm, 0, 0, 0);
    if (b->dev_ok)
        add_variant(V, &nv, "nccl.devcomm", "weft's window and device communicator, without weft",
                    -1, b->devcomm, 0, 0, 0);
    if (b->cap_ok)
        add_variant(V, &nv, "nccl.captured", "a communicator NCCL once captured into a graph", -1,
                    b->capcomm, 0, 0, 0);
    add_variant(V, &nv, "nccl.1call",
                "NCCL alone, one call per sample, events, no sync call (weft tune before issue 29 "
                "at large sizes)",
                -1, b->ocomm, 0, 0, 1);
    V[nv - 1].calls = 1;
    add_variant(V, &nv, "nccl.weftcomm", "the communicator weft attached to", -1, b->wcomm, 0, 0,
                0);
    if (nsel > 0) {
        add_variant(V, &nv, "weft", b->algos[sel[0]]->name, sel[0], b->wcomm, 0, 0, 0);
        /* the method before issue 29, NCCL right after weft as it ran */
        add_variant(V, &nv, "weft.old",
                    "weft, the method before (events, no sync call, fixed buffers)", sel[0],
                    b->wcomm, cb, 0, 1);
    }
    add_variant(V, &nv, "nccl.old", "NCCL on weft's communicator, the method before", -1, b->wcomm,
                cb, 0, 1);
    return nv;
}

/* Inputs in every buffer set, the warm-up calls, then the rounds: interleaved (the order
 * rotating; --diagnose: in order) or blocked. */
static void time_variants(bench *b, variant *V, int nv) {
    const bench_args *a = b->arg;
    for (int s = 0; s < 2; s++)
        if (b->buf[s][0]) {
            CU(tg_fill(b->buf[s][0], b->bufb / b->es, a->dt, a->op, 1234, rank, b->st));
            if (!a->inplace) CU(cudaMemsetAsync(b->buf[s][1], 0, b->bufb, b->st));
        }
    CU(cudaStreamSynchronize(b->st));
    for (int k = 0; k < nv; k++) {
        for (int i = 0; i < a->warm; i++)
            run_one(b, &V[k], i);
        CU(cudaStreamSynchronize(b->st));
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (a->blocked) {
        for (int k = 0; k < nv; k++)
            for (int r = 0; r < a->rounds; r++)
                sample(b, &V[k], r);
    } else {
        for (int r = 0; r < a->rounds; r++)
            for (int j = 0; j < nv; j++)
                sample(b, &V[a->diagnose ? j : (j + r) % nv], r);
    }
}

/* #wrong: each schedule against NCCL on its own communicator, on fresh inputs (elements, all
 * ranks): bitwise, or within tol where the reduction order may differ. */
static void count_wrong(bench *b, const int *sel, int nsel, long long *wrong) {
    const bench_args *a = b->arg;
    variant ref = {.name = "", .what = "", .algo = -1, .comm = b->ncomm, .old = 1};
    size_t es = b->es;
    char *in, *out;
    place(b, &ref, 0, &in, &out);
    for (int k = 0; k < nsel; k++) {
        CU(tg_fill(in, b->inb / es, a->dt, a->op, 4321 + (unsigned)k, rank, b->st));
        run_at(b, -1, b->ncomm, in, out);
        CU(cudaMemcpyAsync(b->refb, out, b->outb, cudaMemcpyDeviceToDevice, b->st));
        CU(tg_fill(in, b->inb / es, a->dt, a->op, 4321 + (unsigned)k, rank, b->st));
        run_at(b, sel[k], b->wcomm, in, out);
        if (b->tol > 0)
            CU(tg_compare_tol(out, b->refb, b->outb / es, a->dt, b->tol, b->res, b->st));
        else
            CU(tg_compare(out, b->refb, b->outb / es, (int)es, b->res, b->st));
        unsigned long long h[2];
        CU(cudaMemcpyAsync(h, b->res, sizeof h, cudaMemcpyDeviceToHost, b->st));
        CU(cudaStreamSynchronize(b->st));
        long long w = (long long)h[0], tot = 0;
        MPI_Allreduce(&w, &tot, 1, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
        wrong[k] = tot;
    }
}

/* ---- the report ---------------------------------------------------------------------------- */
/* Over the sizes: the bus bandwidths of the first schedule and NCCL's; --diagnose, per variant,
 * the ratios to nccl.fresh. */
typedef struct summary {
    double sum_w, sum_n;
    int nsum;
    double ratios[MAXV][256];
    const char *vnames[MAXV];
    int nratio[MAXV], nvn;
} summary;

/* --diagnose's rows at one size: each variant's time, host time and ratio to nccl.fresh. */
static void report_diagnose(const bench *b, size_t bytes, const variant *V, int nv, int nsel,
                            const long long *wrong, summary *s) {
    int rounds = b->arg->rounds;
    double tf = median(V[0].t, rounds);
    for (int k = 0; k < nv; k++) {
        double t = median(V[k].t, rounds), x = tf > 0 ? t / tf : 0;
        if (rank == 0) {
            printf("%12zu  %-16s %10.2f %8.2f %8.3f  %s", bytes, V[k].name, t,
                   median(V[k].host, rounds), x, V[k].what);
            if (V[k].algo >= 0 && !V[k].old && b->arg->check) printf(" (#wrong %lld)", wrong[0]);
            printf("\n");
        }
        int vi = 0;
        while (vi < s->nvn && strcmp(s->vnames[vi], V[k].name) != 0)
            vi++;
        if (vi == s->nvn && s->nvn < MAXV) s->vnames[s->nvn++] = V[k].name;
        if (vi < s->nvn && s->nratio[vi] < 256) s->ratios[vi][s->nratio[vi]++] = x;
    }
    if (rank == 0 && nsel > 0) {
        double tw = median(V[nv - 3].t, rounds), two = median(V[nv - 2].t, rounds);
        double tno = median(V[nv - 1].t, rounds);
        printf("%12zu  %-16s %10.3f %8s %8.3f  NCCL/weft as measured now (nccl.fresh/weft) "
               "and before (nccl.old/weft.old)\n",
               bytes, "nccl/weft", tw > 0 ? tf / tw : 0, "", two > 0 ? tno / two : 0);
    }
    if (rank == 0) fflush(stdout);
}

/* A row per schedule at one size: its time and bandwidths against NCCL's (V[0]). */
static void report_size(const bench *b, size_t bytes, const variant *V, int nv,
                        const long long *wrong, summary *s) {
    const bench_args *a = b->arg;
    int rounds = a->rounds;
    size_t shown = b->count * (b->mult ? (size_t)world : 1);
    double tn = median(V[0].t, rounds), bwf = weft_coll_busbw_factor(a->coll, world);
    double hn = median(V[0].host, rounds);
    for (int k = 1; k < nv; k++) {
        double tw = median(V[k].t, rounds);
        double aw = (double)bytes / tw / 1e3, an = (double)bytes / tn / 1e3;
        if (rank == 0) {
            printf("%12zu %12zu %8s %6s %10.2f %8.2f %8.2f %6lld %10.2f %8.2f %8.2f %6s %9.2f  "
                   "%-32s %7.2f %7.2f\n",
                   bytes, shown, weft_dtype_name((weft_dtype)a->dt),
                   weft_redop_name((weft_redop)a->op), tw, aw, aw * bwf,
                   a->check ? wrong[k - 1] : 0, tn, an, an * bwf, "-", tn / tw, V[k].name,
                   median(V[k].host, rounds), hn);
            fflush(stdout);
        }
        if (k == 1) s->sum_w += aw * bwf, s->sum_n += an * bwf, s->nsum++;
    }
}

static void print_summary(const bench *b, const summary *s) {
    if (rank != 0) return;
    if (s->nsum)
        printf("# Avg bus bandwidth: weft %.2f GB/s, NCCL %.2f GB/s (first schedule per size)\n",
               s->sum_w / s->nsum, s->sum_n / s->nsum);
    if (!b->arg->diagnose) return;
    printf("# summary: per variant, time / nccl.fresh's over the sizes: median [min, max]\n");
    for (int vi = 0; vi < s->nvn; vi++) {
        double m = median(s->ratios[vi], s->nratio[vi]), mn = 1e30, mx = 0;
        for (int i = 0; i < s->nratio[vi]; i++) {
            if (s->ratios[vi][i] < mn) mn = s->ratios[vi][i];
            if (s->ratios[vi][i] > mx) mx = s->ratios[vi][i];
        }
        printf("# summary %-16s %6.3f [%.3f, %.3f] over %d sizes\n", s->vnames[vi], m, mn, mx,
               s->nratio[vi]);
    }
}

/* One size: the schedules that serve it, the variants timed, #wrong, the rows. */
static void measure_size(bench *b, size_t bytes, summary *s) {
    const bench_args *a = b->arg;
    size_t count = bytes / b->es;
    if (b->mult) count /= (size_t)world;
    if (count == 0) return;
    weft_call call = {a->coll, (weft_dtype)a->dt, (weft_redop)a->op, count, a->inplace, 0, world, 0,
                      0};
    int sel[MAXA], nsel = select_schedules(b, bytes, &call, sel);
    if (nsel == 0 && !a->diagnose) return;
    b->count = count;
    b->call = call;
    b->inb = (size_t)weft_coll_segs(a->coll, WEFT_BUF_INPUT, world) * count * b->es;
    b->outb = (size_t)weft_coll_segs(a->coll, WEFT_BUF_OUTPUT, world) * count * b->es;
    variant V[MAXV];
    int nv = make_variants(b, sel, nsel, V);
    time_variants(b, V, nv);
    long long wrong[MAXA] = {0};
    if (a->check) count_wrong(b, sel, nsel, wrong);
    char st_msg[1024];
    if (weft_comm_status(b->wc, st_msg, sizeof st_msg) != WEFT_OK) {
        fprintf(stderr, "[%d] %s\n", rank, st_msg);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    if (a->diagnose)
        report_diagnose(b, bytes, V, nv, nsel, wrong, s);
    else
        report_size(b, bytes, V, nv, wrong, s);
}

static void teardown(bench *b) {
    ncclComm_t nc[5];
    comms(b, nc);
    if (b->arg->reg) {
        weft_comm_window_deregister(b->wc, b->wins[0][0]);
        weft_comm_window_deregister(b->wc, b->wins[0][1]);
        for (int c = 0; c < 5; c++)
            for (int w = 0; w < 2; w++)
                if (b->wins[c][w]) ncclCommWindowDeregister(nc[c], b->wins[c][w]);
    }
    weft_rt_detach(b->wc);
    footprint_free(&b->fwin);
    footprint_free(&b->fdev);
    for (int c = 0; c < 5; c++)
        if (nc[c]) ncclCommDestroy(nc[c]);
    if (b->lib) {
        weft_registry_free(b->lib);
        weft_registry_free(b->libbase);
    } else {
        for (int i = 0; i < b->nalgos; i++)
            weft_algo_free(b->algos[i]);
    }
}

int weft_bench_loopback(int argc, char **argv); /* loopback.cc */

int main(int argc, char **argv) {
    /* One GPU, every rank on it: no MPI, no NCCL (loopback.cc). */
    for (int i = 1; i < argc; i++)
        if (strncmp(argv[i], "--loopback", 10) == 0) return weft_bench_loopback(argc, argv);
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &world);
    bench_args a;
    int rc = parse_args(argc, argv, &a);
    if (rc >= 0) {
        MPI_Finalize();
        return rc;
    }
    bench B;
    memset(&B, 0, sizeof B);
    B.arg = &a;
    B.es = (size_t)weft_dtype_size((weft_dtype)a.dt);
    B.mult = weft_coll_large(a.coll, WEFT_BUF_INPUT) || weft_coll_large(a.coll, WEFT_BUF_OUTPUT);
    B.bufbytes = a.maxb;
    B.bufb = a.maxb + 4096;
    B.tol = result_tol(&a);
    int dev = open_comms(&B);
    if (a.libpaths)
        load_library(&B, a.libpaths);
    else
        load_schedules(&B);
    attach(&B);
    if (a.diagnose) make_setups(&B);
    alloc_buffers(&B);
    print_header(&B, dev);
    static summary S; /* large: its ratios */
    for (size_t bytes = a.minb; bytes <= a.maxb;
         bytes = (size_t)(bytes * a.factor) > bytes ? (size_t)(bytes * a.factor) : bytes + 1)
        measure_size(&B, bytes, &S);
    print_summary(&B, &S);
    teardown(&B);
    MPI_Finalize();
    return 0;
}
