/* loopback.cc — `weft_bench --loopback N`: every rank of an N-rank communicator on one GPU (no
 * MPI, no NCCL). Per size: the algorithm the registry selects (or each -A schedule), checked
 * against the host reference, then timed eager and in a CUDA graph (median over rounds, at least
 * 200 calls each), with the host's enqueue time per call and the CTAs each rank runs. This is
 * where the interpreter's own costs are measured: the same code as on several GPUs, minus the
 * links. */
#include "comm_internal.h"
#include "gpu_util.h"
#include "refcheck.h"

#include <algorithm>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <string>
#include <time.h>
#include <vector>

static int prank = 0;
#include "gpu_check.h"

extern "C" int weft_bench_loopback(int argc, char **argv);

namespace {

double now_us() {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

double median(std::vector<double> v) {
    if (v.empty()) return 0;
    std::sort(v.begin(), v.end());
    size_t n = v.size();
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

struct Opts {
    int n = 0;
    std::vector<weft_coll> colls;
    size_t minb = 8, maxb = 128u << 20;
    double factor = 2;
    int dt = WEFT_DTYPE_FLOAT, op = WEFT_OP_SUM, inplace = 0, iters = 200, warm = 5, check = 1;
    int graph = 1, eager = 1;
    int reg = 2; /* buffers: 0 plain, 1 registered (direct transfers possible), 2 both */
    const char *lib = nullptr;
    std::vector<const char *> files;
};

int loopback_usage() {
    fprintf(
        stderr,
        "usage: weft_bench --loopback N {-L PATHS | -A FILE.xml [-A ...]} [-C allreduce[,...]]\n"
        "         [-b 8] [-e 128M] [-f 2] [-d float] [-o sum] [-I 0|1] [-n 200] [-w 5]\n"
        "         [-G 0|1|2] [-c 0|1]\n"
        "  every rank of an N-rank communicator on this one GPU (N <= %d), no MPI or NCCL;\n"
        "  -L: folders/files as WEFT_ALGO_DIR takes them, each size runs what the registry\n"
        "  selects; -A: these schedules at every size; -n: calls timed per size and mode\n"
        "  (rounds of 10, the median round reported); -G 0 eager only, 1 graph only, 2 both\n",
        WEFT_RT_MAX_SUB);
    return 2;
}

int parse(int argc, char **argv, Opts &o) {
    static const struct option lopts[] = {{"loopback", required_argument, nullptr, 'N'},
                                          {nullptr, 0, nullptr, 0}};
    optind = 1;
    int c, g = 2;
    while ((c = getopt_long(argc, argv, "L:A:C:b:e:f:d:o:I:n:w:G:R:c:", lopts, nullptr)) != -1) {
        switch (c) {
        case 'N': o.n = atoi(optarg); break;
        case 'L': o.lib = optarg; break;
        case 'A': o.files.push_back(optarg); break;
        case 'C': {
            std::string s(optarg);
            size_t p = 0;
            while (p <= s.size()) {
                size_t q = s.find(',', p);
                if (q == std::string::npos) q = s.size();
                int k = weft_coll_from_name(s.substr(p, q - p).c_str());
                if (k < 0) return loopback_usage();
                o.colls.push_back((weft_coll)k);
                p = q + 1;
            }
            break;
        }
        case 'b': o.minb = tg_parse_size(optarg); break;
        case 'e': o.maxb = tg_parse_size(optarg); break;
        case 'f': o.factor = atof(optarg); break;
        case 'd': o.dt = weft_dtype_from_name(optarg); break;
        case 'o': o.op = weft_redop_from_name(optarg); break;
        case 'I': o.inplace = atoi(optarg); break;
        case 'n': o.iters = atoi(optarg); break;
        case 'w': o.warm = atoi(optarg); break;
        case 'G': g = atoi(optarg); break;
        case 'R': o.reg = atoi(optarg); break;
        case 'c': o.check = atoi(optarg); break;
        default: return loopback_usage();
        }
    }
    o.eager = g != 1;
    o.graph = g != 0;
    if (o.colls.empty()) o.colls.push_back(WEFT_COLL_ALLREDUCE);
    if (o.n < 2 || o.n > WEFT_RT_MAX_SUB || o.dt < 0 || o.op < 0 || o.iters < 10 || o.factor <= 1 ||
        (o.lib == nullptr) == o.files.empty() || optind != argc)
        return loopback_usage();
    return 0;
}

/* Per-rank buffers of one size. */
struct Bufs {
    std::vector<char *> mem, send, recv;
};

/* Loads the algorithms: the registry's instances for N ranks, or the given files. */
int load_algos(const Opts &o, weft_registry **base, weft_registry **lib,
               std::vector<weft_algo *> &own, std::vector<const weft_algo *> &algos) {
    weft_diag *d = weft_diag_new();
    int rc = 0;
    if (o.lib) {
        if (weft_registry_new(base) != WEFT_OK || weft_registry_load(*base, o.lib, d) != WEFT_OK ||
            weft_registry_for_ranks(*base, o.n, lib, d) != WEFT_OK) {
            weft_diag_print(d, stderr, WEFT_SEV_WARNING);
            rc = 1;
        } else {
            weft_diag_print(d, stderr, WEFT_SEV_ERROR);
            for (size_t i = 0; i < weft_registry_size(*lib); i++)
                algos.push_back(weft_registry_get(*lib, i));
        }
    } else {
        for (const char *f : o.files) {
            weft_algo *a = nullptr;
            if (weft_ir_read_file(f, &a, d) != WEFT_OK) {
                weft_diag_print(d, stderr, WEFT_SEV_WARNING);
                rc = 1;
                break;
            }
            own.push_back(a);
            algos.push_back(a);
        }
    }
    weft_diag_free(d);
    return rc;
}

/* The host reference's inputs on every rank (small integers: any reduction order gives the same
 * bits), then one call, then every rank's output against the reference: elements that differ. */
long long check_call(weft_comm *c, int ai, const weft_call &call, const Bufs &b, size_t ine,
                     size_t oute, int root, cudaStream_t st) {
    const int n = call.nranks;
    const size_t es = (size_t)weft_dtype_size(call.dtype);
    weft_redop hop = call.op == WEFT_OP_AVG ? WEFT_OP_SUM : call.op;
    std::vector<std::vector<char>> in(n, std::vector<char>(ine * es));
    for (int r = 0; r < n; r++) {
        for (size_t e = 0; e < ine; e++)
            refcheck::put(call.dtype, in[r].data(), e, refcheck::small_val(77, r, e, hop));
        CU(cudaMemsetAsync(b.recv[r], 0x5A, oute * es, st));
        CU(cudaMemcpyAsync(b.send[r], in[r].data(), ine * es, cudaMemcpyHostToDevice, st));
    }
    weft_result res = weft_rt_launch(c, ai, &call, (const void *const *)b.send.data(),
                                     (void *const *)b.recv.data(), st);
    if (res != WEFT_OK) {
        fprintf(stderr, "weft launch: %s\n", weft_result_str(res));
        exit(1);
    }
    CU(cudaStreamSynchronize(st));
    char msg[1024];
    if (weft_comm_status(c, msg, sizeof msg) != WEFT_OK) {
        fprintf(stderr, "%s\n", msg);
        exit(1);
    }
    int ki = weft_rt_kernel_index(call.dtype, hop, weft_coll_reduces(call.coll));
    std::vector<char> exp, got(oute * es);
    long long wrong = 0;
    /* allreduce and broadcast expect the same output on every rank: computed once. */
    const bool same = call.coll == WEFT_COLL_ALLREDUCE || call.coll == WEFT_COLL_BROADCAST;
    for (int r = 0; r < n; r++) {
        if ((!same || r == 0) &&
            !refcheck::expected(call.coll, n, r, root, call.count, es, ki, in, exp))
            continue;
        CU(cudaMemcpy(got.data(), b.recv[r], oute * es, cudaMemcpyDeviceToHost));
        for (size_t e = 0; e < oute; e++)
            wrong += memcmp(got.data() + e * es, exp.data() + e * es, es) != 0;
    }
    return wrong;
}

} // namespace

extern "C" int weft_bench_loopback(int argc, char **argv) {
    Opts o;
    if (parse(argc, argv, o) != 0) return 2;
    weft_registry *base = nullptr, *lib = nullptr;
    std::vector<weft_algo *> own;
    std::vector<const weft_algo *> algos;
    if (load_algos(o, &base, &lib, own, algos) != 0) return 1;
    weft_comm *c = nullptr;
    weft_diag *d = weft_diag_new();
    if (weft_rt_loopback_create(o.n, algos.data(), algos.size(), nullptr, &c, d) != WEFT_OK) {
        weft_diag_print(d, stderr, WEFT_SEV_NOTE);
        return 1;
    }
    weft_diag_free(d);
    const int n = o.n;
    const size_t es = (size_t)weft_dtype_size((weft_dtype)o.dt);
    cudaDeviceProp prop;
    int dev = 0;
    CU(cudaGetDevice(&dev));
    CU(cudaGetDeviceProperties(&prop, dev));
    /* Per rank: input and output of the largest size (large buffers are N x count). */
    const size_t cap = o.maxb + 4096;
    /* Two sets of buffers: the first registered as a window on every rank. */
    Bufs b;
    std::vector<char *> plain(n), reg(n);
    b.mem.resize(n), b.send.resize(n), b.recv.resize(n);
    for (int r = 0; r < n; r++) {
        CU(cudaMalloc((void **)&reg[r], 2 * cap));
        CU(cudaMalloc((void **)&plain[r], 2 * cap));
    }
    if (weft_rt_loopback_register(c, reg.data(), 2 * cap) != WEFT_OK) {
        fprintf(stderr, "loopback window registration failed\n");
        return 1;
    }
    cudaStream_t st;
    CU(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));
    cudaEvent_t e0, e1;
    CU(cudaEventCreate(&e0));
    CU(cudaEventCreate(&e1));
    const int rounds = 20, per = std::max(1, o.iters / rounds);
    printf("# weft_bench --loopback %d: %s, %d SMs; %s %s, %s; %d rounds of %d calls per size "
           "and mode, the median round; eager: back-to-back launches; graph: %d calls captured "
           "in one CUDA graph\n",
           n, prop.name, prop.multiProcessorCount, weft_dtype_name((weft_dtype)o.dt),
           weft_redop_name((weft_redop)o.op), o.inplace ? "in place" : "out of place", rounds, per,
           per);
    printf("# host-us: host time of one launch call (median); ctas: CTAs per rank; #wrong: "
           "elements that differ from the host reference\n");
    printf("%-14s %12s %12s %10s %10s %9s %9s %8s %6s %6s %7s  %s\n", "collective", "size", "count",
           "eager-us", "graph-us", "algbw", "busbw", "host-us", "ctas", "xfer", "#wrong",
           "algorithm");
    for (weft_coll coll : o.colls) {
        const int li = weft_coll_large(coll, WEFT_BUF_INPUT),
                  lo = weft_coll_large(coll, WEFT_BUF_OUTPUT);
        for (size_t bytes = o.minb; bytes <= o.maxb;
             bytes = (size_t)((double)bytes * o.factor) > bytes ? (size_t)((double)bytes * o.factor)
                                                                : bytes + 1) {
            size_t count = bytes / es;
            if (li || lo) count /= (size_t)n;
            if (count == 0) continue;
            const size_t ine = (li ? n : 1) * count, oute = (lo ? n : 1) * count;
            weft_call call = {coll, (weft_dtype)o.dt, (weft_redop)o.op, count, o.inplace, 0, n, 0,
                              0};
            std::vector<int> run;
            if (lib) {
                const char *why = nullptr;
                int ai = weft_registry_select(lib, &call, &why);
                if (ai < 0 || !weft_rt_algo_eligible(c, ai)) {
                    printf("%-14s %12zu %12zu   NCCL serves it: %s\n", weft_coll_name(coll), bytes,
                           count * ((li || lo) ? (size_t)n : 1),
                           ai >= 0 ? "the selected algorithm cannot run" : (why ? why : "-"));
                    continue;
                }
                run.push_back(ai);
            } else {
                for (size_t i = 0; i < algos.size(); i++)
                    if (algos[i]->coll == coll && weft_rt_algo_eligible(c, (int)i) &&
                        (o.inplace ? algos[i]->inplace : algos[i]->outofplace))
                        run.push_back((int)i);
            }
            for (int ri = 0; ri < (int)run.size() * (o.reg == 2 ? 2 : 1); ri++) {
                const int ai = run[(size_t)ri / (o.reg == 2 ? 2 : 1)];
                const int regd = o.reg == 2 ? ri % 2 : o.reg;
                const weft_algo *a = algos[(size_t)ai];
                call.root = a->root;
                for (int r = 0; r < n; r++) {
                    char *m = b.mem[r] = regd ? reg[r] : plain[r];
                    if (!o.inplace)
                        b.send[r] = m, b.recv[r] = m + cap;
                    else if (li == lo)
                        b.send[r] = b.recv[r] = m;
                    else if (lo)
                        b.recv[r] = m, b.send[r] = m + (size_t)r * count * es;
                    else
                        b.send[r] = m, b.recv[r] = m + (size_t)r * count * es;
                }
                long long wrong = o.check ? check_call(c, ai, call, b, ine, oute, a->root, st) : 0;
                auto launch = [&]() {
                    weft_result res =
                        weft_rt_launch(c, ai, &call, (const void *const *)b.send.data(),
                                       (void *const *)b.recv.data(), st);
                    if (res != WEFT_OK) {
                        fprintf(stderr, "weft launch: %s\n", weft_result_str(res));
                        exit(1);
                    }
                };
                for (int i = 0; i < o.warm; i++)
                    launch();
                CU(cudaStreamSynchronize(st));
                std::vector<double> te, tg, host;
                if (o.eager)
                    for (int r = 0; r < rounds; r++) {
                        CU(cudaEventRecord(e0, st));
                        for (int i = 0; i < per; i++) {
                            double h0 = now_us();
                            launch();
                            host.push_back(now_us() - h0);
                        }
                        CU(cudaEventRecord(e1, st));
                        CU(cudaEventSynchronize(e1));
                        float ms = 0;
                        CU(cudaEventElapsedTime(&ms, e0, e1));
                        te.push_back(1000.0 * ms / per);
                    }
                if (o.graph) {
                    cudaGraph_t g;
                    cudaGraphExec_t ge;
                    CU(cudaStreamBeginCapture(st, cudaStreamCaptureModeThreadLocal));
                    for (int i = 0; i < per; i++)
                        launch();
                    CU(cudaStreamEndCapture(st, &g));
                    CU(cudaGraphInstantiate(&ge, g, 0));
                    CU(cudaGraphLaunch(ge, st));
                    CU(cudaStreamSynchronize(st));
                    for (int r = 0; r < rounds; r++) {
                        CU(cudaEventRecord(e0, st));
                        CU(cudaGraphLaunch(ge, st));
                        CU(cudaEventRecord(e1, st));
                        CU(cudaEventSynchronize(e1));
                        float ms = 0;
                        CU(cudaEventElapsedTime(&ms, e0, e1));
                        tg.push_back(1000.0 * ms / per);
                    }
                    CU(cudaGraphExecDestroy(ge));
                    CU(cudaGraphDestroy(g));
                }
                char msg[1024];
                if (weft_comm_status(c, msg, sizeof msg) != WEFT_OK) {
                    fprintf(stderr, "%s\n", msg);
                    return 1;
                }
                double tme = median(te), tmg = median(tg);
                double best = o.graph && (!o.eager || tmg < tme) ? tmg : tme;
                double algbw = (double)bytes / best / 1e3;
                weft_call_geom gm;
                memset(&gm, 0, sizeof gm);
                weft_rt_call_geom(c, ai, &call, (const void *const *)b.send.data(),
                                  (void *const *)b.recv.data(), &gm);
                printf("%-14s %12zu %12zu %10.2f %10.2f %9.2f %9.2f %8.2f %6d %6s %7lld  %s\n",
                       weft_coll_name(coll), bytes, count * ((li || lo) ? (size_t)n : 1), tme, tmg,
                       algbw, algbw * weft_coll_busbw_factor(coll, n), median(host),
                       weft_rt_call_ctas(c, ai, &call), gm.direct ? "direct" : "staged", wrong,
                       a->name);
                fflush(stdout);
            }
        }
    }
    weft_rt_detach(c);
    for (int r = 0; r < n; r++)
        cudaFree(reg[r]), cudaFree(plain[r]);
    if (lib) weft_registry_free(lib);
    if (base) weft_registry_free(base);
    for (weft_algo *a : own)
        weft_algo_free(a);
    return 0;
}
