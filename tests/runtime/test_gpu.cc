/* test_gpu.cc — the runtime on real GPUs. Loopback (every rank on one GPU, no NCCL) against the
 * host reference; then, over NCCL (one process per GPU under mpirun, or one process driving every
 * GPU), weft against NCCL on the same inputs, bitwise: every 2-rank schedule (generated,
 * ../shared/conformance, --algos files), all types and ops, in-place and out-of-place, counts
 * from 1 element to 256 MB; CUDA graphs, several streams, several communicators, the watchdog.
 * Exits 77 ("skipped: no GPU") without a GPU. */
#include "comm_internal.h"
#include "gen.h"
#include "gpu_util.h"
#include "refcheck.h"

#include <cuda_runtime_api.h>
#include <dirent.h>
#include <nccl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <algorithm>
#include <string>
#include <vector>

#ifdef WEFT_HAVE_MPI
#include <mpi.h>
#endif
extern "C" {
#include "registry_internal.h" /* a C header without C++ guards */
}

#define MAXL 8

static FILE *logf_ = stderr;
static int prank = 0, pworld = 1;
static long n_cases = 0, n_fail = 0, n_skip = 0;

static void say(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vfprintf(logf_, fmt, ap);
    va_end(ap);
    fflush(logf_);
}

#define TG_SAY say
#include "gpu_check.h"

static double now_s() {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static const char *const dnames[] = {"int8",   "uint8", "int32", "uint32", "int64",
                                     "uint64", "half",  "float", "double", "bfloat16"};
static const char *const onames[] = {"sum", "prod", "max", "min", "avg"};

/* ---- algorithms ------------------------------------------------------------------------- */
static std::vector<weft_algo *> algos_owned;

static weft_algo *gen_spec(const char *spec) {
    gen_params p;
    if (gen_parse(spec, &p) != 0) return nullptr;
    weft_algo *a = gen_algo(&p);
    if (a) algos_owned.push_back(a);
    return a;
}

static void read_xml(const std::string &path, std::vector<weft_algo *> &out) {
    weft_algo *a = nullptr;
    weft_diag *d = weft_diag_new();
    if (weft_ir_read_file(path.c_str(), &a, d) == WEFT_OK) {
        algos_owned.push_back(a);
        out.push_back(a);
    } else {
        say("[%d] %s: not read\n", prank, path.c_str());
        weft_diag_print(d, logf_, WEFT_SEV_ERROR);
    }
    weft_diag_free(d);
}

static void read_path(const std::string &p, std::vector<weft_algo *> &out) {
    DIR *dp = opendir(p.c_str());
    if (!dp) {
        if (p.size() > 4 && p.substr(p.size() - 4) == ".xml") read_xml(p, out);
        return;
    }
    std::vector<std::string> files;
    while (struct dirent *de = readdir(dp)) {
        std::string f = de->d_name;
        if (f == "." || f == "..") continue;
        files.push_back(p + "/" + f);
    }
    closedir(dp);
    std::sort(files.begin(), files.end());
    for (auto &f : files)
        read_path(f, out);
}

static std::vector<weft_algo *> generated_2rank(void) {
    std::vector<weft_algo *> v;
    char s[160];
    for (const char *pr : {"Simple", "LL"}) {
        for (int ch : {1, 4}) {
            for (int ip = 0; ip < 2; ip++) {
                snprintf(s, sizeof s, "ar_direct:n=2:ch=%d:proto=%s:inplace=%d", ch, pr, ip);
                v.push_back(gen_spec(s));
                snprintf(s, sizeof s, "ag_ring:n=2:ch=%d:proto=%s:inplace=%d", ch, pr, ip);
                v.push_back(gen_spec(s));
                snprintf(s, sizeof s, "ag_direct:n=2:ch=%d:proto=%s:inplace=%d", ch, pr, ip);
                v.push_back(gen_spec(s));
                snprintf(s, sizeof s, "bcast_chain:n=2:ch=%d:proto=%s:inplace=%d:root=1", ch, pr,
                         ip);
                v.push_back(gen_spec(s));
            }
            snprintf(s, sizeof s, "ar_direct1:n=2:ch=%d:proto=%s", ch, pr);
            v.push_back(gen_spec(s));
            snprintf(s, sizeof s, "ar_ring:n=2:ch=%d:proto=%s", ch, pr);
            v.push_back(gen_spec(s));
            snprintf(s, sizeof s, "rs_ring:n=2:ch=%d:proto=%s", ch, pr);
            v.push_back(gen_spec(s));
            snprintf(s, sizeof s, "a2a_direct:n=2:ch=%d:proto=%s", ch, pr);
            v.push_back(gen_spec(s));
            snprintf(s, sizeof s, "reduce_chain:n=2:ch=%d:proto=%s:root=0", ch, pr);
            v.push_back(gen_spec(s));
        }
    }
    v.push_back(gen_spec("ar_direct:n=2:ch=16:proto=Simple"));
    v.push_back(gen_spec("ar_direct:n=2:ch=3:proto=LL:cpc=2"));
    v.push_back(gen_spec("ar_direct:n=2:ch=2:proto=LL128"));
    return v;
}

/* ---- loopback: all ranks on one GPU, against the host reference ------------------------- */
/* Every rank's buffers: loop_mem is registered as a window (calls there may run direct),
 * loop_mem2 is not (FIFO staging); cases alternate. */
static char *loop_mem[8], *loop_mem2[8];
static const size_t loop_cap = 40u << 20;

static void loopback_case(weft_comm *c, int ai, const weft_algo *a, weft_dtype dt, weft_redop op,
                          size_t count, int inplace, uint32_t seed, cudaStream_t st) {
    const int n = a->ngpus;
    const size_t es = (size_t)weft_dtype_size(dt);
    const weft_coll coll = a->coll;
    const int li = weft_coll_large(coll, WEFT_BUF_INPUT),
              lo = weft_coll_large(coll, WEFT_BUF_OUTPUT);
    const size_t ine = (li ? n : 1) * count, oute = (lo ? n : 1) * count;
    const int reduces = weft_coll_reduces(coll);
    weft_redop hop = op == WEFT_OP_AVG ? WEFT_OP_SUM : op;
    std::vector<std::vector<char>> in(n, std::vector<char>(ine * es));
    for (int r = 0; r < n; r++)
        for (size_t e = 0; e < ine; e++)
            refcheck::put(dt, in[r].data(), e, refcheck::small_val(seed, r, e, hop));
    std::vector<char *> mem(n), sendp(n), recvp(n);
    for (int r = 0; r < n; r++) {
        size_t bytes = inplace ? (li || lo ? n : 1) * count * es : (ine + oute) * es;
        if (bytes > loop_cap) {
            say("[%d] loopback case too large\n", prank);
            return;
        }
        mem[r] = (seed & 1) ? loop_mem2[r] : loop_mem[r];
        /* On st: the legacy stream's memset and copy would not be ordered before the launch. */
        CU(cudaMemsetAsync(mem[r], 0x5A, bytes, st));
        char *ip, *opp;
        if (inplace) {
            if (li == lo)
                ip = opp = mem[r];
            else if (lo)
                opp = mem[r], ip = opp + (size_t)r * count * es;
            else
                ip = mem[r], opp = ip + (size_t)r * count * es;
        } else {
            ip = mem[r], opp = mem[r] + ine * es;
        }
        CU(cudaMemcpyAsync(ip, in[r].data(), ine * es, cudaMemcpyHostToDevice, st));
        sendp[r] = ip, recvp[r] = opp;
    }
    CU(cudaStreamSynchronize(st));
    weft_call call = {coll, dt, op, count, inplace, a->root, n, 0, 0};
    n_cases++;
    weft_result res = weft_rt_launch(c, ai, &call, (const void *const *)sendp.data(),
                                     (void *const *)recvp.data(), st);
    char label[400];
    snprintf(label, sizeof label, "loopback %s %s %s count=%zu %s", a->name, dnames[dt], onames[op],
             count, inplace ? "in-place" : "out-of-place");
    if (res != WEFT_OK) {
        say("[%d] FAIL %s: launch: %s\n", prank, label, weft_result_str(res));
        n_fail++;
    } else {
        CU(cudaStreamSynchronize(st));
        char msg[1024];
        if (weft_comm_status(c, msg, sizeof msg) != WEFT_OK) {
            say("[%d] FAIL %s: %s\n", prank, label, msg);
            n_fail++;
        } else {
            int ki = weft_rt_kernel_index(dt, hop, reduces);
            std::vector<char> exp, got(oute * es);
            for (int r = 0; r < n; r++) {
                if (!refcheck::expected(coll, n, r, a->root, count, es, ki, in, exp)) continue;
                if (op == WEFT_OP_AVG) continue; /* avg is checked against NCCL */
                CU(cudaMemcpyAsync(got.data(), recvp[r], oute * es, cudaMemcpyDeviceToHost, st));
                CU(cudaStreamSynchronize(st));
                if (memcmp(got.data(), exp.data(), oute * es) != 0) {
                    size_t e = 0;
                    while (memcmp(got.data() + e * es, exp.data() + e * es, es) == 0)
                        e++;
                    say("[%d] FAIL %s: rank %d element %zu differs\n", prank, label, r, e);
                    n_fail++;
                    break;
                }
            }
        }
    }
}

static void run_loopback(const std::vector<weft_algo *> &algos, int quick) {
    cudaStream_t st;
    CU(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));
    for (int r = 0; r < 8; r++) {
        CU(cudaMalloc((void **)&loop_mem[r], loop_cap));
        CU(cudaMalloc((void **)&loop_mem2[r], loop_cap));
    }
    for (int n : {2, 3, 4, 8}) {
        std::vector<const weft_algo *> v;
        for (weft_algo *a : algos)
            if (a->ngpus == n) v.push_back(a);
        if (v.empty()) continue;
        weft_comm *c = nullptr;
        weft_diag *d = weft_diag_new();
        weft_rt_cfg cfg;
        weft_rt_cfg_default(&cfg);
        if (weft_rt_loopback_create(n, v.data(), v.size(), &cfg, &c, d) != WEFT_OK) {
            say("[%d] FAIL loopback create for %d ranks\n", prank, n);
            weft_diag_print(d, logf_, WEFT_SEV_NOTE);
            n_fail++;
            weft_diag_free(d);
            continue;
        }
        weft_diag_free(d);
        if (weft_rt_loopback_register(c, loop_mem, loop_cap) != WEFT_OK) {
            say("[%d] FAIL loopback register for %d ranks\n", prank, n);
            n_fail++;
        }
        uint32_t seed = 100;
        for (size_t ai = 0; ai < v.size(); ai++) {
            const weft_algo *a = v[ai];
            if (!weft_rt_algo_eligible(c, (int)ai)) {
                say("[%d] loopback: %s skipped: not eligible (WEFT_DEBUG=INFO says why)\n", prank,
                    a->name);
                n_skip++;
                continue;
            }
            long f0 = n_fail;
            int reduces = weft_coll_reduces(a->coll);
            /* Every type once (ops rotating), every op on float and int32. */
            std::vector<std::pair<int, int>> ty;
            for (int dt = 0; dt < WEFT_DTYPE_COUNT; dt++)
                ty.push_back({dt, reduces ? (dt + (int)ai) % 4 : 0});
            if (reduces)
                for (int op = 0; op < 4; op++)
                    ty.push_back({WEFT_DTYPE_FLOAT, op}), ty.push_back({WEFT_DTYPE_INT32, op});
            static const size_t counts[] = {1, 3, 1000, 65541};
            for (int mode = 0; mode < 2; mode++) {
                if (!(mode ? a->inplace : a->outofplace)) continue;
                for (size_t ci = 0; ci < sizeof counts / sizeof *counts; ci++)
                    for (size_t t = 0; t < ty.size(); t++) {
                        if ((quick || n > 2) && (t + ci) % 3) continue;
                        loopback_case(c, (int)ai, a, (weft_dtype)ty[t].first,
                                      (weft_redop)ty[t].second, counts[ci], mode, seed++, st);
                    }
            }
            say("[%d] loopback %-44s %s\n", prank, a->name, n_fail == f0 ? "ok" : "FAILED");
        }
        weft_rt_detach(c);
    }
    /* Watchdog, loopback: both ranks receive first. */
    {
        weft_algo *a = gen_deadlock();
        algos_owned.push_back(a);
        const weft_algo *v[1] = {a};
        weft_rt_cfg cfg;
        weft_rt_cfg_default(&cfg);
        cfg.timeout_ns = 200 * 1000000ll;
        weft_comm *c = nullptr;
        if (weft_rt_loopback_create(2, v, 1, &cfg, &c, nullptr) != WEFT_OK) {
            say("[%d] FAIL watchdog loopback create\n", prank);
            n_fail++;
        } else {
            void *b[2];
            CU(cudaMalloc(&b[0], 4096));
            CU(cudaMalloc(&b[1], 4096));
            weft_call call = {
                WEFT_COLL_ALLREDUCE, WEFT_DTYPE_FLOAT, WEFT_OP_SUM, 64, 0, 0, 2, 0, 0};
            double t0 = now_s();
            n_cases++;
            weft_result r1 = weft_rt_launch(c, 0, &call, (const void *const *)b, b, st);
            CU(cudaStreamSynchronize(st));
            double dt = now_s() - t0;
            char msg[1024];
            weft_result r2 = weft_comm_status(c, msg, sizeof msg);
            weft_result r3 = weft_rt_launch(c, 0, &call, (const void *const *)b, b, st);
            int ok = r1 == WEFT_OK && r2 == WEFT_ERR_TIMEOUT && r3 == WEFT_ERR_UNSUPPORTED &&
                     strstr(msg, "tb 0 step 0 (deadlock.xml:11): timed out after") &&
                     strstr(msg, "waiting for data from rank") && dt < 5.0;
            say("[%d] watchdog (loopback): %.2f s, \"%s\" %s\n", prank, dt, msg,
                ok ? "ok" : "FAILED");
            if (!ok) n_fail++;
            cudaFree(b[0]);
            cudaFree(b[1]);
            weft_rt_detach(c);
        }
    }
    for (int r = 0; r < 8; r++)
        cudaFree(loop_mem[r]), cudaFree(loop_mem2[r]);
    cudaStreamDestroy(st);
}

/* ---- over NCCL -------------------------------------------------------------------------- */
struct Local {
    int dev, rank;
    ncclComm_t comm;
    cudaStream_t st, st2;
    char *A, *B, *RA, *RB;
    unsigned long long *res;
};
static Local L[MAXL];
static int nlocal = 0, nranks = 2;
static size_t cap = 0;

static void nccl_call(const weft_call *c, const void *in, void *out, ncclComm_t comm,
                      cudaStream_t s) {
    ncclDataType_t t = (ncclDataType_t)c->dtype;
    ncclRedOp_t o = (ncclRedOp_t)c->op;
    switch (c->coll) {
    case WEFT_COLL_ALLREDUCE: NC(ncclAllReduce(in, out, c->count, t, o, comm, s)); break;
    case WEFT_COLL_ALLGATHER: NC(ncclAllGather(in, out, c->count, t, comm, s)); break;
    case WEFT_COLL_REDUCESCATTER: NC(ncclReduceScatter(in, out, c->count, t, o, comm, s)); break;
    case WEFT_COLL_ALLTOALL: NC(ncclAlltoAll(in, out, c->count, t, comm, s)); break;
    case WEFT_COLL_BROADCAST: NC(ncclBroadcast(in, out, c->count, t, c->root, comm, s)); break;
    case WEFT_COLL_REDUCE: NC(ncclReduce(in, out, c->count, t, o, c->root, comm, s)); break;
    case WEFT_COLL_GATHER: NC(ncclGather(in, out, c->count, t, c->root, comm, s)); break;
    case WEFT_COLL_SCATTER: NC(ncclScatter(in, out, c->count, t, c->root, comm, s)); break;
    default: break;
    }
}

/* Input and output pointers of local rank l in buffer pair (X, Y) for the call's mode. */
static void place(const weft_call *c, int l, char *X, char *Y, char **in, char **out) {
    size_t es = (size_t)weft_dtype_size(c->dtype);
    int li = weft_coll_large(c->coll, WEFT_BUF_INPUT),
        lo = weft_coll_large(c->coll, WEFT_BUF_OUTPUT);
    size_t seg = c->count * es;
    if (!c->inplace) {
        *in = X, *out = Y;
    } else if (li == lo) {
        *in = *out = X;
    } else if (lo) {
        *out = X, *in = X + (size_t)L[l].rank * seg;
    } else {
        *in = X, *out = X + (size_t)L[l].rank * seg;
    }
}

/* One call by weft and by NCCL on the same inputs; returns the number of differing elements
 * over the local ranks (-1: weft did not serve it). */
static long nccl_case(weft_comm **wc, int ai, const weft_algo *a, weft_dtype dt, weft_redop op,
                      size_t count, int inplace, uint32_t seed, const char *tag) {
    const size_t es = (size_t)weft_dtype_size(dt);
    int li = weft_coll_large(a->coll, WEFT_BUF_INPUT),
        lo = weft_coll_large(a->coll, WEFT_BUF_OUTPUT);
    size_t ine = (li ? nranks : 1) * count, oute = (lo ? nranks : 1) * count;
    if ((ine > oute ? ine : oute) * es > cap) return -2;
    weft_call call = {a->coll, dt, op, count, inplace, a->root, nranks, 0, 0};
    char *in[MAXL], *out[MAXL], *rin[MAXL], *rout[MAXL];
    for (int l = 0; l < nlocal; l++) {
        CU(cudaSetDevice(L[l].dev));
        place(&call, l, L[l].A, L[l].B, &in[l], &out[l]);
        /* NCCL's alltoall is not an in-place operation (it runs as grouped sends and receives
         * that would overwrite what they still have to send): its reference runs out of place
         * on the same input. */
        weft_call rcall = call;
        if (a->coll == WEFT_COLL_ALLTOALL) rcall.inplace = 0;
        place(&rcall, l, L[l].RA, L[l].RB, &rin[l], &rout[l]);
        size_t obytes = inplace ? (li || lo ? nranks : 1) * count * es : oute * es;
        CU(cudaMemsetAsync(inplace ? L[l].A : L[l].B, 0xCD, obytes, L[l].st));
        CU(cudaMemsetAsync(rcall.inplace ? L[l].RA : L[l].RB, 0xCD, obytes, L[l].st));
        CU(tg_fill(in[l], ine, dt, op, seed, L[l].rank, L[l].st));
        CU(tg_fill(rin[l], ine, dt, op, seed, L[l].rank, L[l].st));
    }
    weft_result res = WEFT_OK;
    for (int l = 0; l < nlocal && res == WEFT_OK; l++) {
        CU(cudaSetDevice(L[l].dev));
        res = weft_rt_launch(wc[l], ai, &call, (const void *const *)&in[l], (void *const *)&out[l],
                             L[l].st);
    }
    if (res != WEFT_OK) {
        say("[%d] %s %s: weft did not serve the call: %s\n", prank, tag, a->name,
            weft_result_str(res));
        for (int l = 0; l < nlocal; l++)
            CU(cudaStreamSynchronize(L[l].st));
        return -1;
    }
    NC(ncclGroupStart());
    for (int l = 0; l < nlocal; l++)
        nccl_call(&call, rin[l], rout[l], L[l].comm, L[l].st);
    NC(ncclGroupEnd());
    long wrong = 0;
    for (int l = 0; l < nlocal; l++) {
        CU(cudaSetDevice(L[l].dev));
        if ((a->coll == WEFT_COLL_REDUCE || a->coll == WEFT_COLL_GATHER) && L[l].rank != a->root)
            continue;
        CU(tg_compare(out[l], rout[l], oute, (int)es, L[l].res, L[l].st));
        unsigned long long r[2];
        CU(cudaMemcpyAsync(r, L[l].res, sizeof r, cudaMemcpyDeviceToHost, L[l].st));
        CU(cudaStreamSynchronize(L[l].st));
        if (r[0]) {
            say("[%d] FAIL %s %s %s %s count=%zu %s: rank %d: %llu of %zu elements differ from "
                "NCCL (first at %llu)\n",
                prank, tag, a->name, dnames[dt], onames[op], count,
                inplace ? "in-place" : "out-of-place", L[l].rank, r[0], oute, r[1]);
            wrong += (long)r[0];
        }
    }
    for (int l = 0; l < nlocal; l++) {
        char msg[1024];
        if (weft_comm_status(wc[l], msg, sizeof msg) != WEFT_OK) {
            say("[%d] FAIL %s: %s\n", prank, a->name, msg);
            wrong++;
        }
    }
    return wrong;
}

static void run_nccl_matrix(weft_comm **wc, const std::vector<weft_algo *> &v, int quick) {
    static const size_t counts[] = {1, 2, 3, 7, 17, 255, 256, 1023, 4097, 65537, 1048579};
    uint32_t seed = 7;
    for (size_t ai = 0; ai < v.size(); ai++) {
        const weft_algo *a = v[ai];
        if (!weft_rt_algo_eligible(wc[0], (int)ai)) {
            say("[%d] nccl: %s not eligible\n", prank, a->name);
            continue;
        }
        long f0 = n_fail, c0 = n_cases;
        double t0 = now_s();
        int reduces = weft_coll_reduces(a->coll);
        for (int mode = 0; mode < 2; mode++) {
            if (!(mode ? a->inplace : a->outofplace)) continue;
            for (size_t ci = 0; ci < sizeof counts / sizeof *counts; ci++) {
                if (quick && ci % 3) continue;
                for (int dt = 0; dt < WEFT_DTYPE_COUNT; dt++) {
                    for (int op = 0; op < (reduces ? 5 : 1); op++) {
                        n_cases++;
                        long w = nccl_case(wc, (int)ai, a, (weft_dtype)dt, (weft_redop)op,
                                           counts[ci], mode, seed++, "nccl");
                        if (w == -1)
                            n_skip++;
                        else if (w > 0)
                            n_fail++;
                    }
                }
            }
        }
        say("[%d] nccl %-44s %5ld calls %6.2f s %s\n", prank, a->name, n_cases - c0, now_s() - t0,
            n_fail == f0 ? "ok" : "FAILED");
    }
}

/* 256 MB and other large messages for the bandwidth schedules. */
static void run_nccl_big(weft_comm **wc, const std::vector<weft_algo *> &v) {
    struct {
        const char *prefix;
        weft_dtype dt;
        weft_redop op;
        size_t bytes;
    } big[] = {
        {"ar_direct_n2_ch16_Simple", WEFT_DTYPE_FLOAT, WEFT_OP_SUM, 256u << 20},
        {"ar_direct_n2_ch16_Simple", WEFT_DTYPE_BFLOAT16, WEFT_OP_MAX, 256u << 20},
        {"ar_direct_n2_ch16_Simple", WEFT_DTYPE_INT8, WEFT_OP_SUM, (256u << 20) + 1},
        {"ar_ring_n2_ch4_Simple", WEFT_DTYPE_FLOAT, WEFT_OP_SUM, 256u << 20},
        {"ar_direct_n2_ch4_LL", WEFT_DTYPE_HALF, WEFT_OP_SUM, 16u << 20},
        {"ag_ring_n2_ch4_Simple_oop", WEFT_DTYPE_FLOAT, WEFT_OP_SUM, 64u << 20},
        {"rs_ring_n2_ch4_Simple", WEFT_DTYPE_DOUBLE, WEFT_OP_MIN, 64u << 20},
        {"a2a_direct_n2_ch4_Simple", WEFT_DTYPE_INT32, WEFT_OP_SUM, 64u << 20},
    };
    for (auto &b : big)
        for (size_t ai = 0; ai < v.size(); ai++) {
            if (strncmp(v[ai]->name, b.prefix, strlen(b.prefix)) != 0) continue;
            size_t count = b.bytes / (size_t)weft_dtype_size(b.dt);
            for (int mode = 0; mode < 2; mode++) {
                if (!(mode ? v[ai]->inplace : v[ai]->outofplace)) continue;
                n_cases++;
                double t0 = now_s();
                long w = nccl_case(wc, (int)ai, v[ai], b.dt, b.op, count, mode, 99, "big");
                if (w == -1 || w == -2)
                    n_skip++;
                else if (w > 0)
                    n_fail++;
                say("[%d] big %-32s %-8s %s %zu MB %s: %s (%.2f s)\n", prank, v[ai]->name,
                    dnames[b.dt], onames[b.op], b.bytes >> 20, mode ? "in-place" : "out-of-place",
                    w == 0 ? "ok" : (w < 0 ? "skipped" : "FAILED"), now_s() - t0);
            }
            break;
        }
}

static int find_algo(const std::vector<weft_algo *> &v, const char *name) {
    for (size_t i = 0; i < v.size(); i++)
        if (strcmp(v[i]->name, name) == 0) return (int)i;
    return -1;
}

/* CUDA graphs: three weft calls captured once, replayed with new inputs; each replay against
 * NCCL. */
static void run_graph(weft_comm **wc, const std::vector<weft_algo *> &v) {
    int ai = find_algo(v, "ar_direct_n2_ch4_Simple_oop");
    int aj = find_algo(v, "ar_direct_n2_ch1_LL_oop");
    if (ai < 0 || aj < 0) return;
    const size_t count = 1 << 20, small = 1000;
    cudaGraphExec_t ge[MAXL];
    for (int l = 0; l < nlocal; l++) {
        CU(cudaSetDevice(L[l].dev));
        CU(cudaStreamBeginCapture(L[l].st, cudaStreamCaptureModeThreadLocal));
        weft_call c1 = {
            WEFT_COLL_ALLREDUCE, WEFT_DTYPE_FLOAT, WEFT_OP_SUM, count, 0, 0, nranks, 0, 0};
        weft_call c2 = {
            WEFT_COLL_ALLREDUCE, WEFT_DTYPE_FLOAT, WEFT_OP_SUM, small, 0, 0, nranks, 0, 0};
        char *in = L[l].A, *out = L[l].B;
        char *in2 = L[l].A + (8u << 20), *out2 = L[l].B + (8u << 20);
        weft_result r1 =
            weft_rt_launch(wc[l], ai, &c1, (const void *const *)&in, (void *const *)&out, L[l].st);
        weft_result r2 = weft_rt_launch(wc[l], aj, &c2, (const void *const *)&in2,
                                        (void *const *)&out2, L[l].st);
        weft_result r3 =
            weft_rt_launch(wc[l], ai, &c1, (const void *const *)&in, (void *const *)&out, L[l].st);
        cudaGraph_t g;
        CU(cudaStreamEndCapture(L[l].st, &g));
        if (r1 || r2 || r3) {
            say("[%d] FAIL graph capture: %s %s %s\n", prank, weft_result_str(r1),
                weft_result_str(r2), weft_result_str(r3));
            n_fail++;
            return;
        }
        CU(cudaGraphInstantiate(&ge[l], g, 0));
        CU(cudaGraphDestroy(g));
    }
    long f0 = n_fail;
    for (int rep = 0; rep < 5; rep++) {
        for (int l = 0; l < nlocal; l++) {
            CU(cudaSetDevice(L[l].dev));
            CU(tg_fill(L[l].A, count, WEFT_DTYPE_FLOAT, 0, 500 + rep, L[l].rank, L[l].st));
            CU(tg_fill(L[l].A + (8u << 20), small, WEFT_DTYPE_FLOAT, 0, 600 + rep, L[l].rank,
                       L[l].st));
            CU(cudaMemcpyAsync(L[l].RA, L[l].A, 16u << 20, cudaMemcpyDeviceToDevice, L[l].st));
            CU(cudaGraphLaunch(ge[l], L[l].st));
        }
        NC(ncclGroupStart());
        for (int l = 0; l < nlocal; l++) {
            NC(ncclAllReduce(L[l].RA, L[l].RB, count, ncclFloat, ncclSum, L[l].comm, L[l].st));
            NC(ncclAllReduce(L[l].RA + (8u << 20), L[l].RB + (8u << 20), small, ncclFloat, ncclSum,
                             L[l].comm, L[l].st));
        }
        NC(ncclGroupEnd());
        for (int l = 0; l < nlocal; l++) {
            CU(cudaSetDevice(L[l].dev));
            unsigned long long r[2], q[2];
            CU(tg_compare(L[l].B, L[l].RB, count, 4, L[l].res, L[l].st));
            CU(cudaMemcpyAsync(r, L[l].res, sizeof r, cudaMemcpyDeviceToHost, L[l].st));
            CU(cudaStreamSynchronize(L[l].st));
            CU(tg_compare(L[l].B + (8u << 20), L[l].RB + (8u << 20), small, 4, L[l].res, L[l].st));
            CU(cudaMemcpyAsync(q, L[l].res, sizeof q, cudaMemcpyDeviceToHost, L[l].st));
            CU(cudaStreamSynchronize(L[l].st));
            n_cases++;
            if (r[0] || q[0]) {
                say("[%d] FAIL graph replay %d: %llu + %llu elements differ\n", prank, rep, r[0],
                    q[0]);
                n_fail++;
            }
        }
    }
    for (int l = 0; l < nlocal; l++)
        cudaGraphExecDestroy(ge[l]);
    say("[%d] graph: 5 replays of 3 captured calls %s\n", prank, n_fail == f0 ? "ok" : "FAILED");
}

/* Consecutive calls alternate between two streams with no synchronization in between: weft
 * orders them itself (its FIFO state is per communicator). */
static void run_streams(weft_comm **wc, const std::vector<weft_algo *> &v) {
    int ai = find_algo(v, "ar_direct_n2_ch4_LL_oop");
    if (ai < 0) return;
    const int K = 12;
    const size_t count = 4096;
    long f0 = n_fail;
    for (int l = 0; l < nlocal; l++) {
        CU(cudaSetDevice(L[l].dev));
        for (int k = 0; k < K; k++)
            CU(tg_fill(L[l].A + (size_t)k * count * 4, count, WEFT_DTYPE_FLOAT, 0, 700 + k,
                       L[l].rank, L[l].st));
        CU(cudaMemcpyAsync(L[l].RA, L[l].A, (size_t)K * count * 4, cudaMemcpyDeviceToDevice,
                           L[l].st));
        CU(cudaStreamSynchronize(L[l].st));
    }
    for (int k = 0; k < K; k++)
        for (int l = 0; l < nlocal; l++) {
            CU(cudaSetDevice(L[l].dev));
            weft_call c = {
                WEFT_COLL_ALLREDUCE, WEFT_DTYPE_FLOAT, WEFT_OP_SUM, count, 0, 0, nranks, 0, 0};
            char *in = L[l].A + (size_t)k * count * 4, *out = L[l].B + (size_t)k * count * 4;
            weft_result r = weft_rt_launch(wc[l], ai, &c, (const void *const *)&in,
                                           (void *const *)&out, k % 2 ? L[l].st2 : L[l].st);
            if (r != WEFT_OK) {
                say("[%d] FAIL streams: launch %d: %s\n", prank, k, weft_result_str(r));
                n_fail++;
            }
        }
    for (int l = 0; l < nlocal; l++) {
        CU(cudaSetDevice(L[l].dev));
        CU(cudaDeviceSynchronize());
    }
    NC(ncclGroupStart());
    for (int l = 0; l < nlocal; l++)
        NC(ncclAllReduce(L[l].RA, L[l].RB, (size_t)K * count, ncclFloat, ncclSum, L[l].comm,
                         L[l].st));
    NC(ncclGroupEnd());
    for (int l = 0; l < nlocal; l++) {
        CU(cudaSetDevice(L[l].dev));
        unsigned long long r[2];
        CU(tg_compare(L[l].B, L[l].RB, (size_t)K * count, 4, L[l].res, L[l].st));
        CU(cudaMemcpyAsync(r, L[l].res, sizeof r, cudaMemcpyDeviceToHost, L[l].st));
        CU(cudaStreamSynchronize(L[l].st));
        n_cases++;
        if (r[0]) {
            say("[%d] FAIL streams: %llu elements differ\n", prank, r[0]);
            n_fail++;
        }
    }
    say("[%d] streams: %d calls alternating two streams %s\n", prank, K,
        n_fail == f0 ? "ok" : "FAILED");
}

int main(int argc, char **argv) {
    int quick = 0, want_loop = 1, want_nccl = 1;
    const char *library = nullptr;
    const char *shared = getenv("WEFT_SHARED_DIR");
    std::vector<std::string> extra;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--quick"))
            quick = 1;
        else if (!strcmp(argv[i], "--no-loopback"))
            want_loop = 0;
        else if (!strcmp(argv[i], "--loopback-only"))
            want_nccl = 0;
        else if (!strcmp(argv[i], "--algos") && i + 1 < argc)
            extra.push_back(argv[++i]);
        else if (!strcmp(argv[i], "--library") && i + 1 < argc)
            library = argv[++i];
        else if (!strcmp(argv[i], "--shared") && i + 1 < argc)
            shared = argv[++i];
        else {
            fprintf(stderr, "usage: test_gpu [--quick] [--no-loopback|--loopback-only] "
                            "[--shared DIR] [--algos FILE|DIR]... [--library DIR]\n");
            return 2;
        }
    }
#ifdef WEFT_HAVE_MPI
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &prank);
    MPI_Comm_size(MPI_COMM_WORLD, &pworld);
#endif
    int ndev = 0;
    if (cudaGetDeviceCount(&ndev) != cudaSuccess || ndev == 0) {
        printf("skipped: no GPU\n");
#ifdef WEFT_HAVE_MPI
        MPI_Finalize();
#endif
        return 77;
    }
    double t_start = now_s();
    /* Algorithms: generated, conformance, --algos. */
    std::vector<weft_algo *> gen2 = generated_2rank(), conf, more;
    if (shared && *shared) read_path(std::string(shared) + "/conformance", conf);
    for (auto &p : extra)
        read_path(p, more);
    /* The algorithm library, instantiated for 2, 4 and 8 ranks by the registry. */
    weft_registry *libbase = nullptr, *lib2 = nullptr, *lib4 = nullptr, *lib8 = nullptr;
    if (library) {
        weft_diag *d = weft_diag_new();
        if (weft_registry_new(&libbase) == WEFT_OK &&
            weft_registry_load(libbase, library, d) == WEFT_OK &&
            weft_registry_for_ranks(libbase, 2, &lib2, d) == WEFT_OK &&
            weft_registry_for_ranks(libbase, 4, &lib4, d) == WEFT_OK &&
            weft_registry_for_ranks(libbase, 8, &lib8, d) == WEFT_OK) {
            for (weft_registry *r : {lib2, lib4, lib8})
                for (size_t i = 0; i < weft_registry_size(r); i++)
                    if (weft_coll_runnable(weft_registry_get(r, i)->coll))
                        more.push_back((weft_algo *)weft_registry_get(r, i));
            say("[%d] library %s: %zu + %zu + %zu instances for 2, 4 and 8 ranks\n", prank, library,
                weft_registry_size(lib2), weft_registry_size(lib4), weft_registry_size(lib8));
        } else {
            say("[%d] FAIL library %s not loaded\n", prank, library);
            weft_diag_print(d, logf_, WEFT_SEV_ERROR);
            n_fail++;
        }
        weft_diag_free(d);
    }
    std::vector<weft_algo *> loop = gen2;
    for (weft_algo *a : conf)
        loop.push_back(a);
    for (weft_algo *a : more)
        loop.push_back(a);
    for (int nr : {3, 4, 8}) {
        char s[128];
        for (const char *sp :
             {"ar_ring", "ag_ring", "rs_ring", "a2a_direct", "bcast_chain", "ar_oneshot"}) {
            for (const char *pr : {"LL", "Simple"}) {
                if (nr != 8 && strcmp(pr, nr == 3 ? "LL" : "Simple") != 0) continue;
                snprintf(s, sizeof s, "%s:n=%d:ch=2:proto=%s:root=1", sp, nr, pr);
                loop.push_back(gen_spec(s));
            }
        }
    }
    int dev = pworld > 1 ? prank % ndev : 0;
    CU(cudaSetDevice(dev));
    if (want_loop) run_loopback(loop, quick);

    if (want_nccl && (pworld > 1 || ndev >= 2)) {
        int ver = 0;
        ncclGetVersion(&ver);
        say("[%d] NCCL %d, %d GPU(s), %s\n", prank, ver, ndev,
            pworld > 1 ? "one process per GPU (MPI)" : "one process, every GPU");
        std::vector<weft_algo *> v;
        for (weft_algo *a : gen2)
            v.push_back(a);
        for (weft_algo *a : conf)
            if (a->ngpus == 2) v.push_back(a);
        for (weft_algo *a : more)
            if (a->ngpus == 2) v.push_back(a);
        /* Communicators. */
        if (pworld > 1) {
#ifdef WEFT_HAVE_MPI
            nlocal = 1;
            nranks = pworld;
            ncclUniqueId id;
            if (prank == 0) NC(ncclGetUniqueId(&id));
            MPI_Bcast(&id, sizeof id, MPI_BYTE, 0, MPI_COMM_WORLD);
            L[0].dev = dev, L[0].rank = prank;
            CU(cudaSetDevice(dev));
            NC(ncclCommInitRank(&L[0].comm, nranks, id, prank));
#endif
        } else {
            nlocal = nranks = 2;
            ncclComm_t cs[2];
            int devs[2] = {0, 1};
            NC(ncclCommInitAll(cs, 2, devs));
            for (int l = 0; l < 2; l++)
                L[l].dev = l, L[l].rank = l, L[l].comm = cs[l];
        }
        cap = 600u << 20;
        for (int l = 0; l < nlocal; l++) {
            CU(cudaSetDevice(L[l].dev));
            CU(cudaStreamCreateWithFlags(&L[l].st, cudaStreamNonBlocking));
            CU(cudaStreamCreateWithFlags(&L[l].st2, cudaStreamNonBlocking));
            CU(cudaMalloc((void **)&L[l].A, cap));
            CU(cudaMalloc((void **)&L[l].B, cap));
            CU(cudaMalloc((void **)&L[l].RA, cap));
            CU(cudaMalloc((void **)&L[l].RB, cap));
            CU(cudaMalloc((void **)&L[l].res, 16));
        }
        ncclComm_t comms[MAXL];
        for (int l = 0; l < nlocal; l++)
            comms[l] = L[l].comm;
        weft_comm *wc[MAXL] = {nullptr};
        weft_diag *d = weft_diag_new();
        double ta = now_s();
        weft_result ar = weft_rt_attach(nlocal, comms, (const weft_algo *const *)v.data(), v.size(),
                                        nullptr, wc, d);
        say("[%d] attach: %s (%.2f s)\n", prank, weft_result_str(ar), now_s() - ta);
        weft_diag_print(d, logf_, WEFT_SEV_WARNING);
        weft_diag_free(d);
        if (ar != WEFT_OK) {
            n_fail++;
        } else {
            run_nccl_matrix(wc, v, quick);
            run_nccl_big(wc, v);
            run_graph(wc, v);
            run_streams(wc, v);
            /* A second set of communicators on the same GPUs, attached separately, used
             * interleaved with the first. */
            ncclComm_t c2[MAXL];
            NC(ncclGroupStart());
            for (int l = 0; l < nlocal; l++)
                NC(ncclCommSplit(L[l].comm, 0, L[l].rank, &c2[l], nullptr));
            NC(ncclGroupEnd());
            weft_comm *wc2[MAXL] = {nullptr};
            weft_diag *d2 = weft_diag_new();
            if (weft_rt_attach(nlocal, c2, (const weft_algo *const *)v.data(), v.size(), nullptr,
                               wc2, d2) != WEFT_OK) {
                say("[%d] FAIL second communicator: attach\n", prank);
                weft_diag_print(d2, logf_, WEFT_SEV_NOTE);
                n_fail++;
            } else {
                long f0 = n_fail;
                for (int k = 0; k < 6; k++) {
                    int ai = find_algo(v, k % 2 ? "ar_ring_n2_ch4_LL_oop"
                                                : "ar_direct_n2_ch4_Simple_oop");
                    long w = nccl_case(k % 3 ? wc : wc2, ai, v[ai], WEFT_DTYPE_BFLOAT16,
                                       WEFT_OP_SUM, 100003 + k, 0, 800 + k, "two-comms");
                    n_cases++;
                    if (w != 0) n_fail++;
                }
                say("[%d] two communicators interleaved %s\n", prank,
                    n_fail == f0 ? "ok" : "FAILED");
                weft_rt_detach_many(nlocal, wc2);
            }
            weft_diag_free(d2);
            /* Watchdog over NCCL: a third communicator with a deadlocking schedule. */
            weft_algo *dl = gen_deadlock();
            algos_owned.push_back(dl);
            ncclComm_t c3[MAXL];
            NC(ncclGroupStart());
            for (int l = 0; l < nlocal; l++)
                NC(ncclCommSplit(L[l].comm, 0, L[l].rank, &c3[l], nullptr));
            NC(ncclGroupEnd());
            weft_comm *wc3[MAXL] = {nullptr};
            weft_rt_cfg cfg;
            weft_rt_cfg_default(&cfg);
            cfg.timeout_ns = 300 * 1000000ll;
            const weft_algo *dv[1] = {dl};
            if (weft_rt_attach(nlocal, c3, dv, 1, &cfg, wc3, nullptr) == WEFT_OK) {
                double t0 = now_s();
                weft_call call = {
                    WEFT_COLL_ALLREDUCE, WEFT_DTYPE_FLOAT, WEFT_OP_SUM, 64, 0, 0, nranks, 0, 0};
                for (int l = 0; l < nlocal; l++) {
                    CU(cudaSetDevice(L[l].dev));
                    char *in = L[l].A, *out = L[l].B;
                    weft_rt_launch(wc3[l], 0, &call, (const void *const *)&in, (void *const *)&out,
                                   L[l].st);
                }
                for (int l = 0; l < nlocal; l++) {
                    CU(cudaSetDevice(L[l].dev));
                    CU(cudaStreamSynchronize(L[l].st));
                }
                double el = now_s() - t0;
                for (int l = 0; l < nlocal; l++) {
                    char msg[1024];
                    weft_result r = weft_comm_status(wc3[l], msg, sizeof msg);
                    int ok = r == WEFT_ERR_TIMEOUT && el < 5.0 &&
                             strstr(msg, "tb 0 step 0 (deadlock.xml:11)");
                    n_cases++;
                    if (!ok) n_fail++;
                    say("[%d] watchdog (NCCL) rank %d: %.2f s, \"%s\" %s\n", prank, L[l].rank, el,
                        msg, ok ? "ok" : "FAILED");
                }
                weft_rt_detach_many(nlocal, wc3);
            } else {
                say("[%d] FAIL watchdog communicator: attach\n", prank);
                n_fail++;
            }
            for (int l = 0; l < nlocal; l++) {
                ncclCommDestroy(c2[l]);
                ncclCommDestroy(c3[l]);
            }
            double td = now_s();
            weft_result dr = weft_rt_detach_many(nlocal, wc);
            say("[%d] detach: %s (%.2f s)\n", prank, weft_result_str(dr), now_s() - td);
            if (dr != WEFT_OK) n_fail++;
        }
        for (int l = 0; l < nlocal; l++) {
            cudaSetDevice(L[l].dev);
            cudaFree(L[l].A), cudaFree(L[l].B), cudaFree(L[l].RA), cudaFree(L[l].RB);
            cudaFree(L[l].res);
            ncclCommDestroy(L[l].comm);
        }
    } else if (want_nccl) {
        say("[%d] NCCL part skipped: needs 2 GPUs (or mpirun -np 2)\n", prank);
    }
    long tot[3] = {n_cases, n_fail, n_skip};
#ifdef WEFT_HAVE_MPI
    long all[3];
    MPI_Allreduce(tot, all, 3, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
    memcpy(tot, all, sizeof all);
    MPI_Finalize();
#endif
    if (prank == 0)
        printf("test_gpu: %ld calls checked, %ld failed, %ld skipped, %.1f s\n", tot[0], tot[1],
               tot[2], now_s() - t_start);
    for (weft_algo *a : algos_owned)
        weft_algo_free(a);
    weft_registry_free(lib2);
    weft_registry_free(lib4);
    weft_registry_free(lib8);
    weft_registry_free(libbase);
    return tot[1] ? 1 : 0;
}
