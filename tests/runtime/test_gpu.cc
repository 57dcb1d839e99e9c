/* test_gpu.cc — the runtime on real GPUs, for any number of ranks. Over NCCL (mpirun -np N, one
 * GPU per process, or one process driving N GPUs), weft against NCCL on the same inputs, bitwise:
 * the N-rank instances of the algorithm library (--library DIR; sources gated off by default
 * built with the gates open, -D SERVE=1 -D ANYN=1), the conformance corpus's N-rank files
 * (WEFT_SHARED_DIR/conformance), generated N-rank schedules (gen.c) and --algos files, all types
 * and ops, both buffer modes, 1 element to 256 MB; CUDA graph capture, two streams, two
 * communicators, the watchdog. Loopback (every rank of 2, 4 and 8 on one GPU, no NCCL) against
 * the host reference. --list prints every case for N ranks without a GPU. Each case that cannot
 * run says why; only a legitimate reason (its CTAs do not fit, its source rules the instance out)
 * makes it a skip, any other is a failure. Exits 77 ("skipped: no GPU") without a GPU. */
#include "comm_internal.h"
#include "gen.h"
#include "rgen.h"
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
#include <map>
#include <string>
#include <vector>

#ifdef WEFT_HAVE_MPI
#include <mpi.h>
#endif
extern "C" {
#include "weft_select.h" /* a C header without C++ guards */
}

#define MAXL 8 /* local ranks of one process; loopback ranks */

static FILE *logf_ = stderr;
static int prank = 0, pworld = 1;

static void say(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vfprintf(logf_, fmt, ap);
    va_end(ap);
    fflush(logf_);
}

#define TG_SAY say
#include "gpu_check.h"

/* Process 0 only: what every process would print the same. */
#define SAY0(...)                                                                                  \
    do {                                                                                           \
        if (prank == 0) say(__VA_ARGS__);                                                          \
    } while (0)

static double now_s() {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static const char *const dnames[] = {"int8",   "uint8", "int32", "uint32", "int64",
                                     "uint64", "half",  "float", "double", "bfloat16"};
static const char *const onames[] = {"sum", "prod", "max", "min", "avg"};

/* ---- options ---------------------------------------------------------------------------- */
static struct {
    int quick = 0, loop = 1, nccl = 1, list = 0, gpus = 0;
    double time_limit = 0; /* seconds after which schedule cases are left out (0: none) */
    const char *library = nullptr, *only = nullptr;
    std::vector<int> ranks; /* loopback and --list rank counts */
    std::vector<std::string> defines{"SERVE=1", "ANYN=1"};
    std::vector<std::string> algos;
    uint64_t fuzz_seed = 0; /* --fuzz SEED:COUNT: the differential fuzzer's corpus (rgen.h) */
    int fuzz_count = 0;
} opt;
static double t_start;

/* ---- cases and their tallies ------------------------------------------------------------ */
enum Cat {
    CAT_LIBRARY,
    CAT_CORPUS,
    CAT_GENERATED,
    CAT_ALGOS,
    CAT_FUZZ,
    CAT_BIG,
    CAT_FEATURE,
    CAT_COUNT
};
static const char *const cat_names[CAT_COUNT] = {"library", "corpus", "generated", "algos",
                                                 "fuzz",    "big",    "features"};

/* run: cases attempted (failed ones included); failed: of those, the ones that failed or could
 * not run for a reason that is not legitimate; skipped: legitimately not run; notrun: left out
 * by --time-limit. */
struct Tally {
    long run = 0, failed = 0, skipped = 0, notrun = 0;
};
struct Pass {
    Tally t[CAT_COUNT];
    long calls = 0, wrong = 0; /* calls compared, and those that differed */
};
static Pass pass_nccl, pass_loop;
static int setup_failed = 0; /* the NCCL part could not start at all */

/* One schedule of the set for N ranks. */
struct Sched {
    const weft_algo *a = nullptr; /* NULL: no schedule; why says why */
    Cat cat = CAT_GENERATED;
    std::string label; /* name, root, origin: what the log calls it */
    std::string why;
    bool legit = true; /* a == NULL: a legitimate skip (else a failure) */
};

static bool wanted(const std::string &label) {
    return !opt.only || label.find(opt.only) != std::string::npos;
}

/* Why algorithm a cannot run on nranks ranks with at most max_ctas CTAs per rank ("" when it
 * can), as the runtime's planner says it; *legit: the reason is a limit of the machine or of the
 * interpreter (thread blocks, CTAs) or a collective weft leaves to NCCL, not a defect. */
static std::string cannot_run(const weft_algo *a, int nranks, int max_ctas, bool *legit) {
    char why[512] = "";
    weft_algo_plan p;
    weft_result r = weft_plan_prepare(a, nranks, max_ctas, &p, why, sizeof why);
    if (r == WEFT_OK) {
        weft_plan_free(&p);
        *legit = true;
        return "";
    }
    if (r != WEFT_ERR_UNSUPPORTED) snprintf(why, sizeof why, "%s", weft_result_str(r));
    *legit = strstr(why, "thread blocks") != nullptr || strstr(why, "is not run by weft");
    return why;
}

/* ---- schedules -------------------------------------------------------------------------- */
static std::vector<weft_algo *> algos_owned;

static weft_algo *gen_spec(const char *spec) {
    gen_params p;
    if (gen_parse(spec, &p) != 0) return nullptr;
    weft_algo *a = gen_algo(&p);
    if (a) algos_owned.push_back(a);
    return a;
}

typedef std::vector<std::pair<std::string, std::string>> BadFiles; /* path, why */

static void read_xml(const std::string &path, std::vector<weft_algo *> &out, BadFiles &bad) {
    weft_algo *a = nullptr;
    weft_diag *d = weft_diag_new();
    if (weft_ir_read_file(path.c_str(), &a, d) == WEFT_OK) {
        algos_owned.push_back(a);
        out.push_back(a);
    } else {
        std::string m = "not read";
        for (size_t i = 0; i < weft_diag_size(d); i++)
            if (weft_diag_get(d, i)->sev == WEFT_SEV_ERROR) {
                m += std::string(": ") + weft_diag_get(d, i)->msg;
                break;
            }
        bad.push_back({path, m});
    }
    weft_diag_free(d);
}

static void read_path(const std::string &p, std::vector<weft_algo *> &out, BadFiles &bad) {
    DIR *dp = opendir(p.c_str());
    if (!dp) {
        if (p.size() > 4 && p.substr(p.size() - 4) == ".xml") read_xml(p, out, bad);
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
        read_path(f, out, bad);
}

static const char *base_name(const char *path) {
    const char *s = path ? strrchr(path, '/') : nullptr;
    return s ? s + 1 : path ? path : "?";
}

/* What the process reads once: the library's sources, the corpus, --algos files. */
struct Sources {
    weft_registry *lib = nullptr;
    std::string lib_error;
    std::vector<weft_algo *> corpus, extra;
    BadFiles corpus_bad, extra_bad;
    std::string corpus_dir;
    std::vector<weft_registry *> per_ranks; /* instances, kept for the weft_algos they own */
};

static void load_sources(Sources &s, const char *shared) {
    if (opt.library) {
        weft_diag *d = weft_diag_new();
        /* No tuning table: every instance runs whatever a table would choose. */
        if (weft_registry_new(&s.lib) != WEFT_OK ||
            weft_registry_load_ex(s.lib, opt.library, WEFT_REGISTRY_NO_TABLE, d) != WEFT_OK) {
            s.lib_error = std::string("library ") + opt.library + " not loaded";
        } else {
            for (size_t i = 0; i < weft_diag_size(d); i++) {
                const weft_diag_entry *e = weft_diag_get(d, i);
                if (e->sev != WEFT_SEV_ERROR) continue;
                char *m = weft_diag_format(e);
                s.lib_error += s.lib_error.empty() ? "" : "; ";
                s.lib_error += m ? m : e->msg;
                free(m);
            }
        }
        weft_diag_free(d);
    }
    if (shared && *shared) {
        s.corpus_dir = std::string(shared) + "/conformance";
        read_path(s.corpus_dir, s.corpus, s.corpus_bad);
    }
    for (auto &p : opt.algos)
        read_path(p, s.extra, s.extra_bad);
}

/* Generated shapes for n ranks (gen.c): every shape that takes n, Simple and LL, 1 and 4
 * channels, each buffer mode where the shape writes one per schedule. */
static std::vector<std::pair<std::string, weft_algo *>> generated(int n) {
    std::vector<std::pair<std::string, weft_algo *>> v; /* spec, schedule (NULL: not built) */
    char s[160];
    auto add = [&](const char *fmt, auto... args) {
        snprintf(s, sizeof s, fmt, args...);
        v.push_back({s, gen_spec(s)});
    };
    for (const char *pr : {"Simple", "LL", "LL128"}) {
        for (int ch : {1, 4}) {
            for (int ip = 0; ip < 2; ip++) {
                if (n == 2) add("ar_direct:n=2:ch=%d:proto=%s:inplace=%d", ch, pr, ip);
                add("ag_ring:n=%d:ch=%d:proto=%s:inplace=%d", n, ch, pr, ip);
                add("ag_direct:n=%d:ch=%d:proto=%s:inplace=%d", n, ch, pr, ip);
                add("bcast_chain:n=%d:ch=%d:proto=%s:inplace=%d:root=%d", n, ch, pr, ip, n - 1);
            }
            if (n == 2) add("ar_direct1:n=2:ch=%d:proto=%s", ch, pr);
            add("ar_ring:n=%d:ch=%d:proto=%s", n, ch, pr);
            add("rs_ring:n=%d:ch=%d:proto=%s", n, ch, pr);
            add("a2a_direct:n=%d:ch=%d:proto=%s", n, ch, pr);
            add("reduce_chain:n=%d:ch=%d:proto=%s:root=%d", n, ch, pr, n / 2 - 1);
            if (n > 2) add("ar_oneshot:n=%d:ch=%d:proto=%s", n, ch, pr);
            add("ar_staged:n=%d:ch=%d:proto=%s", n, ch, pr); /* scratch: stress graph */
        }
    }
    if (n == 2) {
        add("%s", "ar_direct:n=2:ch=16:proto=Simple");
        add("%s", "ar_direct:n=2:ch=3:proto=LL:cpc=2");
        add("%s", "ar_direct:n=2:ch=2:proto=LL128");
    } else {
        add("ar_ring:n=%d:ch=2:proto=LL128", n);
    }
    return v;
}

/* The fuzzer's corpus for n ranks (--fuzz SEED:COUNT): the first COUNT random schedules from
 * SEED on (rgen.h, n ranks) that the verifier proves, the same on every process and run. */
static std::vector<weft_algo *> fuzz_set(int n) {
    static std::map<int, std::vector<weft_algo *>> cache;
    auto it = cache.find(n);
    if (it != cache.end()) return it->second;
    std::vector<weft_algo *> &v = cache[n];
    rgen_opts o;
    rgen_opts_init(&o);
    o.min_ranks = o.max_ranks = n;
    o.unsafe_pct = 0;
    for (uint64_t s = opt.fuzz_seed;
         (int)v.size() < opt.fuzz_count && s < opt.fuzz_seed + 20 * (uint64_t)opt.fuzz_count; s++) {
        weft_algo *a = rgen_algo(s, &o);
        if (a == nullptr) continue;
        algos_owned.push_back(a);
        if (weft_ir_verifies(a, nullptr)) v.push_back(a);
    }
    return v;
}

static std::string defines_str(const char *sep) {
    std::string s;
    for (auto &d : opt.defines)
        s += (s.empty() ? "" : sep) + d;
    return s;
}

/* Every schedule for n ranks, in the order the cases run: library, corpus, generated, algos. */
static std::vector<Sched> schedules_for(int n, Sources &src) {
    std::vector<Sched> S;
    char buf[1024];
    if (opt.library) {
        Sched f;
        f.cat = CAT_LIBRARY;
        f.legit = false;
        if (!src.lib_error.empty() || !src.lib) {
            f.label = opt.library;
            f.why = src.lib_error.empty() ? "not loaded" : src.lib_error;
            S.push_back(f);
        }
        weft_registry *r = nullptr;
        weft_diag *d = weft_diag_new();
        std::vector<const char *> defs;
        for (auto &x : opt.defines)
            defs.push_back(x.c_str());
        weft_result res =
            src.lib ? weft_registry_for_ranks_defines(src.lib, n, defs.data(), defs.size(), &r, d)
                    : WEFT_ERR_USAGE;
        if (src.lib && res != WEFT_OK) {
            f.label = std::string(opt.library) + " for " + std::to_string(n) + " ranks";
            f.why = std::string("no instances: ") + weft_result_str(res);
            S.push_back(f);
        }
        for (size_t i = 0; r && i < weft_registry_size(r); i++) {
            const weft_algo *a = weft_registry_get(r, i);
            Sched s;
            s.cat = CAT_LIBRARY;
            const char *rec = weft_registry_recipe(r, i);
            snprintf(buf, sizeof buf, "%s%s (%s N=%d%s%s)", a->name,
                     weft_coll_rooted(a->coll) ? (" root=" + std::to_string(a->root)).c_str() : "",
                     base_name(a->file), n, rec && *rec ? " " : "", rec ? rec : "");
            s.label = buf;
            if (!weft_coll_runnable(a->coll)) {
                s.why = std::string(weft_coll_name(a->coll)) + " is not run by weft";
            } else {
                s.a = a;
            }
            S.push_back(s);
        }
        /* Instances the registry did not build: a source's `require` ruled it out (its author
         * says why: legitimate), or it failed to compile or verify (a failure). */
        for (size_t i = 0; i < weft_diag_size(d); i++) {
            const weft_diag_entry *e = weft_diag_get(d, i);
            bool ruled_out = e->sev == WEFT_SEV_INFO && strncmp(e->msg, "no instance for", 15) == 0;
            if (!ruled_out && e->sev != WEFT_SEV_ERROR) continue; /* notes, warnings */
            Sched s;
            s.cat = CAT_LIBRARY;
            snprintf(buf, sizeof buf, "%s:%d", base_name(e->file), e->line);
            s.label = buf;
            s.why = e->msg;
            s.legit = ruled_out;
            S.push_back(s);
        }
        weft_diag_free(d);
        if (r) src.per_ranks.push_back(r);
    }
    for (auto &m : src.corpus_bad) {
        Sched s;
        s.cat = CAT_CORPUS, s.label = m.first, s.why = m.second, s.legit = false;
        S.push_back(s);
    }
    for (weft_algo *a : src.corpus) {
        if (a->ngpus != n) continue;
        Sched s;
        s.cat = CAT_CORPUS, s.a = a;
        std::string f = a->file ? a->file : a->name;
        if (f.compare(0, src.corpus_dir.size(), src.corpus_dir) == 0)
            f = f.substr(src.corpus_dir.size() + 1);
        s.label = std::string(a->name) + " (" + f + ")";
        S.push_back(s);
    }
    for (auto &g : generated(n)) {
        Sched s;
        s.cat = CAT_GENERATED, s.a = g.second;
        s.label = g.second ? g.second->name : g.first;
        if (!g.second) s.why = "gen.c did not build it", s.legit = false;
        S.push_back(s);
    }
    for (auto &m : src.extra_bad) {
        Sched s;
        s.cat = CAT_ALGOS, s.label = m.first, s.why = m.second, s.legit = false;
        S.push_back(s);
    }
    for (weft_algo *a : opt.fuzz_count > 0 ? fuzz_set(n) : std::vector<weft_algo *>()) {
        Sched s;
        s.cat = CAT_FUZZ, s.a = a;
        s.label = std::string(a->name) + " (" + weft_coll_name(a->coll) + " " +
                  weft_proto_name(a->proto) + (a->inplace ? " in-place" : "") + ")";
        S.push_back(s);
    }
    for (weft_algo *a : src.extra) {
        if (a->ngpus != n) continue;
        Sched s;
        s.cat = CAT_ALGOS, s.a = a;
        s.label = std::string(a->name) + " (" + (a->file ? a->file : "?") + ")";
        S.push_back(s);
    }
    for (Sched &s : S)
        if (s.a && !weft_coll_runnable(s.a->coll)) {
            s.why = std::string(weft_coll_name(s.a->coll)) + " is not run by weft";
            s.a = nullptr;
        }
    return S;
}

/* A deadlock for n ranks: every rank receives from the previous one before it sends to the next
 * (file "deadlock.xml", steps on lines 11 and 12; for 2 ranks gen_deadlock's schedule). */
static weft_algo *deadlock_ring(int n) {
    weft_algo *a = weft_algo_new("deadlock", WEFT_COLL_ALLREDUCE, n, 1);
    if (a == nullptr) return nullptr;
    algos_owned.push_back(a);
    a->nchannels = 1;
    for (int r = 0; r < n; r++) {
        a->gpus[r].i_chunks = a->gpus[r].o_chunks = 1;
        weft_tb *t = weft_gpu_add_tb(&a->gpus[r], (r + 1) % n, (r + n - 1) % n, 0);
        weft_step s1 = {WEFT_STEP_RECV, WEFT_BUF_INPUT, WEFT_BUF_OUTPUT, 0, 0, 1, -1, -1, 0, 11};
        weft_step s2 = {WEFT_STEP_SEND, WEFT_BUF_INPUT, WEFT_BUF_OUTPUT, 0, 0, 1, -1, -1, 0, 12};
        if (t == nullptr || weft_tb_add_step(t, &s1) < 0 || weft_tb_add_step(t, &s2) < 0)
            return nullptr;
    }
    a->file = weft_strdup("deadlock.xml");
    return a;
}

/* ---- the call matrix of one schedule ---------------------------------------------------- */
struct Call1 {
    int mode; /* 1: in place */
    size_t count;
    int dt, op;
    uint32_t seed;
};

static const size_t mcounts[] = {1,    2,    3,     7,      17,      255,    256,
                                 1023, 4097, 65537, 262147, 1048579, 4194319};
static const int NMC = (int)(sizeof mcounts / sizeof *mcounts);

/* Over NCCL: per declared buffer mode, every count x every (type, op) pair (ops only where the
 * collective reduces): 650 calls per mode for a reduction, 130 for a copy. --quick thins them to
 * every 12th and every 4th combination, the phase set by salt (the schedule's place) so that
 * neighbouring schedules cover different ones. */
static bool float_type(int dt) {
    return dt == WEFT_DTYPE_HALF || dt == WEFT_DTYPE_FLOAT || dt == WEFT_DTYPE_DOUBLE ||
           dt == WEFT_DTYPE_BFLOAT16;
}

/* NCCL's floating-point avg premultiplies every input by 1/N, weft scales the sum: the same bits
 * only where 1/N is exact, N a power of two. */
static bool avg_comparable(int n) {
    return (n & (n - 1)) == 0;
}

/* A fuzzer's schedule: per buffer mode four counts (one, two uneven, one of many slices), a
 * (type, op) pair each from a rotation: thousands of schedules, each in every mode's corners. */
static std::vector<Call1> fuzz_matrix_for(const weft_algo *a, size_t salt, bool loop) {
    static const size_t lc[] = {1, 3, 1000, 65541}, nc[] = {1, 7, 4097, 262147};
    std::vector<Call1> m;
    const int reduces = weft_coll_reduces(a->coll);
    for (int mode = 0; mode < 2; mode++) {
        if (!(mode ? a->inplace : a->outofplace)) continue;
        for (int ci = 0; ci < 4; ci++) {
            size_t j = salt * 8 + (size_t)mode * 4 + (size_t)ci;
            int dt = (int)(j % WEFT_DTYPE_COUNT), op = reduces ? (int)((j / 3) % 4) : 0;
            m.push_back({mode, loop ? lc[ci] : nc[ci], dt, op, (uint32_t)(salt * 7919u + j)});
        }
    }
    return m;
}

static bool is_fuzz(const weft_algo *a) {
    return strncmp(a->name, "rgen-", 5) == 0;
}

static std::vector<Call1> matrix_for(const weft_algo *a, size_t salt) {
    if (is_fuzz(a)) return fuzz_matrix_for(a, salt, false);
    std::vector<Call1> m;
    const int reduces = weft_coll_reduces(a->coll);
    const bool avg_ok = avg_comparable(a->ngpus);
    const int npairs = reduces ? WEFT_DTYPE_COUNT * 5 : WEFT_DTYPE_COUNT;
    const int stride = !opt.quick ? 1 : reduces ? 12 : 4;
    for (int mode = 0; mode < 2; mode++) {
        if (!(mode ? a->inplace : a->outofplace)) continue;
        for (int ci = 0; ci < NMC; ci++)
            for (int t = 0; t < npairs; t++) {
                size_t j = ((size_t)mode * NMC + (size_t)ci) * (size_t)npairs + (size_t)t;
                if ((j + salt) % (size_t)stride) continue;
                int dt = t % WEFT_DTYPE_COUNT, op = t / WEFT_DTYPE_COUNT;
                if (op == WEFT_OP_AVG && float_type(dt) && !avg_ok) continue;
                m.push_back({mode, mcounts[ci], dt, op, (uint32_t)(salt * 7919u + j)});
            }
    }
    return m;
}

/* Loopback: every type once (ops rotating) and every op on float and int32, 4 counts, each
 * buffer mode (--quick: every 6th combination). */
static const size_t lcounts[] = {1, 3, 1000, 65541};
static std::vector<Call1> loop_matrix_for(const weft_algo *a, size_t salt) {
    if (is_fuzz(a)) return fuzz_matrix_for(a, salt, true);
    std::vector<Call1> m;
    const int reduces = weft_coll_reduces(a->coll);
    std::vector<std::pair<int, int>> ty;
    for (int dt = 0; dt < WEFT_DTYPE_COUNT; dt++)
        ty.push_back({dt, reduces ? (dt + (int)salt) % 4 : 0});
    if (reduces)
        for (int op = 0; op < 4; op++)
            ty.push_back({WEFT_DTYPE_FLOAT, op}), ty.push_back({WEFT_DTYPE_INT32, op});
    const size_t stride = opt.quick ? 6 : 1;
    uint32_t seed = 100 + (uint32_t)salt * 1000u;
    for (int mode = 0; mode < 2; mode++) {
        if (!(mode ? a->inplace : a->outofplace)) continue;
        for (size_t ci = 0; ci < sizeof lcounts / sizeof *lcounts; ci++)
            for (size_t t = 0; t < ty.size(); t++) {
                if ((t + ci + salt) % stride) continue;
                m.push_back({mode, lcounts[ci], ty[t].first, ty[t].second, seed++});
            }
    }
    return m;
}

/* ---- agreement between processes -------------------------------------------------------- */
/* Element-wise maximum over the processes (identity without MPI): cases run in the same order in
 * every process, and each decision that changes what runs next is taken by all alike. */
static void agree_max(long *v, int n) {
#ifdef WEFT_HAVE_MPI
    if (pworld > 1) MPI_Allreduce(MPI_IN_PLACE, v, n, MPI_LONG, MPI_MAX, MPI_COMM_WORLD);
#else
    (void)v, (void)n;
#endif
}

/* Whether --time-limit has passed, by this process's clock (loopback: not collective). */
static bool out_of_time_local() {
    return opt.time_limit > 0 && now_s() - t_start > opt.time_limit;
}

/* Whether --time-limit has passed, by process 0's clock (agreed). */
static bool out_of_time() {
    long over = opt.time_limit > 0 && prank == 0 && now_s() - t_start > opt.time_limit;
    agree_max(&over, 1);
    return over != 0;
}

/* ---- loopback: all ranks on one GPU, against the host reference ------------------------- */
/* Every rank's buffers: loop_mem is registered as a window (calls there may run direct),
 * loop_mem2 is not (FIFO staging); cases alternate. */
static char *loop_mem[MAXL], *loop_mem2[MAXL];
static const size_t loop_cap = 40u << 20;

/* One call; returns 0 when it matched the reference, 1 when it did not, 2 when the watchdog
 * stopped it (the communicator then refuses every launch); says why. */
static int loopback_case(weft_comm *c, int ai, const weft_algo *a, weft_dtype dt, weft_redop op,
                         size_t count, int inplace, uint32_t seed, cudaStream_t st) {
    const int n = a->ngpus;
    const size_t es = (size_t)weft_dtype_size(dt);
    const weft_coll coll = a->coll;
    const int li = weft_coll_large(coll, WEFT_BUF_INPUT),
              lo = weft_coll_large(coll, WEFT_BUF_OUTPUT);
    const size_t ine = (li ? n : 1) * count, oute = (lo ? n : 1) * count;
    const int reduces = weft_coll_reduces(coll);
    weft_redop hop = op == WEFT_OP_AVG ? WEFT_OP_SUM : op;
    char label[400];
    snprintf(label, sizeof label, "loopback %s %s %s count=%zu %s", a->name, dnames[dt], onames[op],
             count, inplace ? "in-place" : "out-of-place");
    std::vector<std::vector<char>> in(n, std::vector<char>(ine * es));
    for (int r = 0; r < n; r++)
        for (size_t e = 0; e < ine; e++)
            refcheck::put(dt, in[r].data(), e, refcheck::small_val(seed, r, e, hop));
    std::vector<char *> mem(n), sendp(n), recvp(n);
    for (int r = 0; r < n; r++) {
        size_t bytes = inplace ? (li || lo ? n : 1) * count * es : (ine + oute) * es;
        if (bytes > loop_cap) {
            say("[%d] FAIL %s: %zu bytes per rank, the test has %zu\n", prank, label, bytes,
                loop_cap);
            return 1;
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
    pass_loop.calls++;
    weft_result res = weft_rt_launch(c, ai, &call, (const void *const *)sendp.data(),
                                     (void *const *)recvp.data(), st);
    if (res != WEFT_OK) {
        say("[%d] FAIL %s: launch: %s\n", prank, label, weft_result_str(res));
        pass_loop.wrong++;
        return 1;
    }
    CU(cudaStreamSynchronize(st));
    char msg[1024];
    if (weft_comm_status(c, msg, sizeof msg) != WEFT_OK) {
        say("[%d] FAIL %s: %s\n", prank, label, msg);
        pass_loop.wrong++;
        return 2;
    }
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
            pass_loop.wrong++;
            return 1;
        }
    }
    /* what NCCL never writes of the send buffer is as the caller left it */
    std::vector<char> sent(ine * es);
    for (int r = 0; r < n; r++) {
        CU(cudaMemcpyAsync(sent.data(), sendp[r], ine * es, cudaMemcpyDeviceToHost, st));
        CU(cudaStreamSynchronize(st));
        size_t e;
        int32_t x;
        if (!refcheck::send_untouched(a, inplace, r, count, es, ine, sent.data(), in[r], &e, &x)) {
            say("[%d] FAIL %s: rank %d changed element %zu of its send buffer (input chunk %d), "
                "which NCCL never writes\n",
                prank, label, r, e, x);
            pass_loop.wrong++;
            return 1;
        }
    }
    return 0;
}

/* The watchdog in loopback: the n-rank deadlock stops within a second and names its step. */
static void loopback_watchdog(int n, cudaStream_t st) {
    Tally &T = pass_loop.t[CAT_FEATURE];
    weft_algo *a = deadlock_ring(n);
    const weft_algo *v[1] = {a};
    weft_rt_cfg cfg;
    weft_rt_cfg_default(&cfg);
    cfg.timeout_ns = 200 * 1000000ll;
    weft_comm *c = nullptr;
    T.run++;
    if (a == nullptr || weft_rt_loopback_create(n, v, 1, &cfg, &c, nullptr) != WEFT_OK) {
        say("[%d] FAIL watchdog (loopback, %d ranks): create\n", prank, n);
        T.failed++;
        return;
    }
    std::vector<void *> b(n);
    for (int r = 0; r < n; r++)
        CU(cudaMalloc(&b[r], 4096));
    weft_call call = {WEFT_COLL_ALLREDUCE, WEFT_DTYPE_FLOAT, WEFT_OP_SUM, 64, 0, 0, n, 0, 0};
    double t0 = now_s();
    weft_result r1 = weft_rt_launch(c, 0, &call, (const void *const *)b.data(), b.data(), st);
    CU(cudaStreamSynchronize(st));
    double dt = now_s() - t0;
    char msg[1024];
    weft_result r2 = weft_comm_status(c, msg, sizeof msg);
    weft_result r3 = weft_rt_launch(c, 0, &call, (const void *const *)b.data(), b.data(), st);
    int ok = r1 == WEFT_OK && r2 == WEFT_ERR_TIMEOUT && r3 == WEFT_ERR_UNSUPPORTED &&
             strstr(msg, "tb 0 step 0 (deadlock.xml:11): timed out after") &&
             strstr(msg, "waiting for data from rank") && dt < 5.0;
    say("[%d] watchdog (loopback, %d ranks): %.2f s, \"%s\" %s\n", prank, n, dt, msg,
        ok ? "ok" : "FAILED");
    if (!ok) T.failed++;
    for (int r = 0; r < n; r++)
        cudaFree(b[r]);
    weft_rt_detach(c);
}

/* Counters near their wraps (weft_rt_cfg.start_calls, start_msgs): every algorithm starts
 * 1,000 calls before its call epoch (the upper half of progress and direct-transfer words)
 * wraps to 0, every connection 2,000 messages before LL flags wrap; 5,000 calls over four
 * schedules (LL and Simple, registered and not, collapsed where the defaults collapse), each
 * checked. */
static void loopback_wrap(int n, cudaStream_t st) {
    Tally &T = pass_loop.t[CAT_FEATURE];
    std::vector<const weft_algo *> v;
    char spec[128];
    for (const char *sh : {"ar_oneshot", "ag_ring", "ar_staged", "rs_ring"}) {
        snprintf(spec, sizeof spec, "%s:n=%d:ch=1:proto=%s", sh, n, v.size() % 2 ? "Simple" : "LL");
        if (const weft_algo *a = gen_spec(spec)) v.push_back(a);
    }
    weft_rt_cfg cfg;
    weft_rt_cfg_default(&cfg);
    cfg.start_calls = (1ull << 32) - 1000;
    cfg.start_msgs = (1ull << 32) - 2000;
    weft_comm *c = nullptr;
    T.run++;
    if (v.size() != 4 ||
        weft_rt_loopback_create(n, v.data(), v.size(), &cfg, &c, nullptr) != WEFT_OK ||
        weft_rt_loopback_register(c, loop_mem, loop_cap) != WEFT_OK) {
        say("[%d] FAIL wrap (loopback, %d ranks): create\n", prank, n);
        T.failed++;
        if (c) weft_rt_detach(c);
        return;
    }
    double t0 = now_s();
    long bad = 0, calls = 0;
    for (int i = 0; i < 5000 && !bad; i++, calls++) {
        int ai = i % 4;
        bool red = weft_coll_reduces(v[ai]->coll);
        bad = loopback_case(c, ai, v[ai], i % 3 ? WEFT_DTYPE_FLOAT : WEFT_DTYPE_INT32,
                            red ? (weft_redop)(i % 4) : WEFT_OP_SUM, (size_t)(1 + (i * 37) % 3000),
                            0, (uint32_t)(7000 + i), st);
    }
    say("[%d] wrap (loopback, %d ranks): %ld calls from 1,000 before the call epoch's wrap, %.2f "
        "s %s\n",
        prank, n, calls, now_s() - t0, bad ? "FAILED" : "ok");
    if (bad) T.failed++;
    weft_rt_detach(c);
}

/* Every schedule of every rank count in opt.ranks; process p takes the p-th of every pworld
 * cases, so that mpirun shares the work between the GPUs. */
static void run_loopback(Sources &src) {
    cudaStream_t st;
    CU(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));
    for (int r = 0; r < MAXL; r++) {
        CU(cudaMalloc((void **)&loop_mem[r], loop_cap));
        CU(cudaMalloc((void **)&loop_mem2[r], loop_cap));
    }
    long k = 0; /* case number, over every rank count */
    for (int n : opt.ranks) {
        std::vector<Sched> S = schedules_for(n, src);
        std::vector<const weft_algo *> v;
        std::vector<size_t> of; /* v[i] is S[of[i]] */
        std::vector<bool> mine; /* S[i] is this process's case */
        for (size_t i = 0; i < S.size(); i++) {
            bool take = wanted(S[i].label) && k++ % pworld == prank;
            mine.push_back(take);
            if (take && S[i].a) v.push_back(S[i].a), of.push_back(i);
        }
        for (size_t i = 0; i < S.size(); i++)
            if (mine[i] && !S[i].a) {
                Tally &T = pass_loop.t[S[i].cat];
                if (S[i].legit) {
                    T.skipped++;
                    say("[%d] loopback %d ranks: %s %s skipped: %s\n", prank, n,
                        cat_names[S[i].cat], S[i].label.c_str(), S[i].why.c_str());
                } else {
                    T.run++, T.failed++;
                    say("[%d] FAIL loopback %d ranks: %s %s: %s\n", prank, n, cat_names[S[i].cat],
                        S[i].label.c_str(), S[i].why.c_str());
                }
            }
        bool wd = wanted("watchdog") && k++ % pworld == prank;
        bool wrap = n == 4 && wanted("wrap") && k++ % pworld == prank;
        /* The communicator of this process's share, made again after a watchdog stop. */
        auto make = [&]() -> weft_comm * {
            weft_comm *c = nullptr;
            weft_diag *d = weft_diag_new();
            weft_rt_cfg cfg;
            weft_rt_cfg_default(&cfg);
            if (weft_rt_loopback_create(n, v.data(), v.size(), &cfg, &c, d) != WEFT_OK) {
                say("[%d] FAIL loopback create for %d ranks (%zu schedules)\n", prank, n, v.size());
                weft_diag_print(d, logf_, WEFT_SEV_NOTE);
                c = nullptr;
            } else if (weft_rt_loopback_register(c, loop_mem, loop_cap) != WEFT_OK) {
                say("[%d] FAIL loopback register for %d ranks\n", prank, n);
                pass_loop.t[CAT_FEATURE].run++, pass_loop.t[CAT_FEATURE].failed++;
            }
            weft_diag_free(d);
            return c;
        };
        weft_comm *c = v.empty() ? nullptr : make();
        if (!v.empty() && !c) {
            for (size_t i : of)
                pass_loop.t[S[i].cat].run++, pass_loop.t[S[i].cat].failed++;
            v.clear();
        }
        for (size_t ai = 0; ai < v.size(); ai++) {
            const Sched &s = S[of[ai]];
            Tally &T = pass_loop.t[s.cat];
            if (!weft_rt_algo_eligible(c, (int)ai)) {
                bool legit = false;
                std::string why = cannot_run(s.a, n, c->max_ctas, &legit);
                if (legit) {
                    T.skipped++;
                    say("[%d] loopback %d ranks: %s %s skipped: %s\n", prank, n, cat_names[s.cat],
                        s.label.c_str(), why.c_str());
                } else {
                    T.run++, T.failed++;
                    say("[%d] FAIL loopback %d ranks: %s %s cannot run: %s\n", prank, n,
                        cat_names[s.cat], s.label.c_str(), why.c_str());
                }
                continue;
            }
            if (out_of_time_local()) {
                T.notrun++;
                continue;
            }
            T.run++;
            int bad = 0;
            double t0 = now_s();
            std::vector<Call1> m = loop_matrix_for(s.a, of[ai]);
            for (const Call1 &x : m)
                if ((bad = loopback_case(c, (int)ai, s.a, (weft_dtype)x.dt, (weft_redop)x.op,
                                         x.count, x.mode, x.seed, st)))
                    break; /* one difference says it; the next calls would repeat it */
            if (bad) T.failed++;
            say("[%d] loopback %d ranks %-9s %-60s %4zu calls %6.2f s %s\n", prank, n,
                cat_names[s.cat], s.label.c_str(), m.size(), now_s() - t0, bad ? "FAILED" : "ok");
            if (bad == 2) { /* stopped by the watchdog: a fresh communicator for the rest */
                say("[%d] loopback %d ranks: making the communicator again\n", prank, n);
                weft_rt_detach(c);
                if (!(c = make())) {
                    for (size_t aj = ai + 1; aj < v.size(); aj++)
                        pass_loop.t[S[of[aj]].cat].run++, pass_loop.t[S[of[aj]].cat].failed++;
                    break;
                }
            }
        }
        if (c) weft_rt_detach(c);
        if (wd) loopback_watchdog(n, st);
        if (wrap) loopback_wrap(n, st);
    }
    for (int r = 0; r < MAXL; r++)
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
static std::vector<const weft_algo *> vall; /* what the main communicators are attached with */
static weft_comm *wc[MAXL];
static int nccl_dead = 0; /* weft could not attach again after a timeout: the rest cannot run */

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

/* Inputs of a call. Over more than 2 ranks NCCL reduces in another order than weft, so
 * floating-point sums, products and averages get values that every order reduces exactly (two
 * operands commute exactly: 2 ranks keep fully random values). */
static cudaError_t fill(void *buf, size_t n, int dt, int op, int reduces, uint32_t seed, int rank,
                        cudaStream_t s) {
    if (reduces && nranks > 2 && float_type(dt) &&
        (op == WEFT_OP_SUM || op == WEFT_OP_PROD || op == WEFT_OP_AVG))
        return tg_fill_exact(buf, n, dt, op, seed, rank, s);
    return tg_fill(buf, n, dt, op, seed, rank, s);
}

/* One call by weft and by NCCL on the same inputs, seen from this process. */
struct Outcome {
    int served = 1; /* weft launched it on every local rank */
    long wrong = 0; /* elements that differ from NCCL's, over the local ranks */
    int broken = 0; /* the watchdog stopped a local rank's kernel */
};

static Outcome nccl_case(weft_comm **w, int ai, const weft_algo *a, weft_dtype dt, weft_redop op,
                         size_t count, int inplace, uint32_t seed, const char *tag) {
    Outcome o;
    const size_t es = (size_t)weft_dtype_size(dt);
    const int reduces = weft_coll_reduces(a->coll);
    int li = weft_coll_large(a->coll, WEFT_BUF_INPUT),
        lo = weft_coll_large(a->coll, WEFT_BUF_OUTPUT);
    size_t ine = (li ? nranks : 1) * count, oute = (lo ? nranks : 1) * count;
    if ((ine > oute ? ine : oute) * es > cap) {
        say("[%d] FAIL %s %s count=%zu: %zu bytes, the test's buffers hold %zu\n", prank, tag,
            a->name, count, (ine > oute ? ine : oute) * es, cap);
        o.served = 0;
        return o;
    }
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
        CU(fill(in[l], ine, dt, op, reduces, seed, L[l].rank, L[l].st));
        CU(fill(rin[l], ine, dt, op, reduces, seed, L[l].rank, L[l].st));
    }
    weft_result res = WEFT_OK;
    for (int l = 0; l < nlocal && res == WEFT_OK; l++) {
        CU(cudaSetDevice(L[l].dev));
        res = weft_rt_launch(w[l], ai, &call, (const void *const *)&in[l], (void *const *)&out[l],
                             L[l].st);
    }
    if (res != WEFT_OK) {
        say("[%d] FAIL %s %s %s %s count=%zu %s: weft did not launch it: %s\n", prank, tag, a->name,
            dnames[dt], onames[op], count, inplace ? "in-place" : "out-of-place",
            weft_result_str(res));
        o.served = 0;
    }
    NC(ncclGroupStart());
    for (int l = 0; l < nlocal; l++)
        nccl_call(&call, rin[l], rout[l], L[l].comm, L[l].st);
    NC(ncclGroupEnd());
    for (int l = 0; l < nlocal; l++) {
        CU(cudaSetDevice(L[l].dev));
        if (!o.served ||
            ((a->coll == WEFT_COLL_REDUCE || a->coll == WEFT_COLL_GATHER) && L[l].rank != a->root))
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
            o.wrong += (long)r[0];
        }
    }
    for (int l = 0; l < nlocal; l++) {
        CU(cudaSetDevice(L[l].dev));
        CU(cudaStreamSynchronize(L[l].st));
        char msg[1024];
        if (weft_comm_status(w[l], msg, sizeof msg) != WEFT_OK) {
            say("[%d] FAIL %s %s: %s\n", prank, tag, a->name, msg);
            o.broken = 1;
        }
    }
    return o;
}

/* The outcome every process agrees on: the call failed if it failed anywhere. */
static Outcome agreed(Outcome o) {
    long v[3] = {!o.served, o.wrong, o.broken};
    agree_max(v, 3);
    o.served = !v[0], o.wrong = v[1], o.broken = (int)v[2];
    return o;
}

static bool attach_main() {
    ncclComm_t comms[MAXL];
    for (int l = 0; l < nlocal; l++)
        comms[l] = L[l].comm, wc[l] = nullptr;
    weft_diag *d = weft_diag_new();
    double ta = now_s();
    weft_result ar = weft_rt_attach(nlocal, comms, vall.data(), vall.size(), nullptr, wc, d);
    SAY0("[%d] attach of %zu schedules: %s (%.2f s)\n", prank, vall.size(), weft_result_str(ar),
         now_s() - ta);
    weft_diag_print(d, logf_, WEFT_SEV_WARNING);
    weft_diag_free(d);
    return ar == WEFT_OK;
}

/* After the watchdog stopped a call, the communicators refuse every launch: drop weft's state
 * without collective steps and attach again (collective; every process does it together). */
static void recover() {
    for (int l = 0; l < nlocal; l++) {
        CU(cudaSetDevice(L[l].dev));
        CU(cudaDeviceSynchronize());
        weft_comm_abort(wc[l]);
        wc[l] = nullptr;
    }
    if (!attach_main()) {
        say("[%d] FAIL weft could not attach again after the timeout: the remaining cases over "
            "NCCL cannot run\n",
            prank);
        nccl_dead = 1;
    }
}

static int find_algo(const char *name) {
    for (size_t i = 0; i < vall.size(); i++)
        if (strcmp(vall[i]->name, name) == 0) return (int)i;
    return -1;
}

/* Whether a case that needs schedule ai can run: false after saying why (a missing schedule is
 * the test's own defect: a failure; one that does not fit: a skip). */
static bool usable(Tally &T, const char *what, const char *name, int ai) {
    if (nccl_dead) {
        T.run++, T.failed++;
        SAY0("[%d] FAIL %s: not run (weft could not attach again)\n", prank, what);
        return false;
    }
    if (ai < 0) {
        T.run++, T.failed++;
        SAY0("[%d] FAIL %s: schedule %s is not in the %d-rank set\n", prank, what, name, nranks);
        return false;
    }
    if (!weft_rt_algo_eligible(wc[0], ai)) {
        bool legit = false;
        std::string why = cannot_run(vall[ai], nranks, wc[0]->max_ctas, &legit);
        if (legit) {
            T.skipped++;
            SAY0("[%d] %s skipped: %s: %s\n", prank, what, name, why.c_str());
        } else {
            T.run++, T.failed++;
            SAY0("[%d] FAIL %s: %s cannot run: %s\n", prank, what, name, why.c_str());
        }
        return false;
    }
    return true;
}

/* One schedule against NCCL: its whole matrix (matrix_for). */
static void nccl_sched(const Sched &s, int ai, size_t salt) {
    Tally &T = pass_nccl.t[s.cat];
    const char *cat = cat_names[s.cat];
    if (!s.a) {
        if (s.legit) {
            T.skipped++;
            SAY0("[%d] nccl %s %s skipped: %s\n", prank, cat, s.label.c_str(), s.why.c_str());
        } else {
            T.run++, T.failed++;
            SAY0("[%d] FAIL nccl %s %s: %s\n", prank, cat, s.label.c_str(), s.why.c_str());
        }
        return;
    }
    if (out_of_time()) {
        T.notrun++;
        SAY0("[%d] nccl %s %s not run: --time-limit %.0f s passed\n", prank, cat, s.label.c_str(),
             opt.time_limit);
        return;
    }
    std::string what = std::string("nccl ") + cat + " " + s.label;
    if (!usable(T, what.c_str(), s.a->name, ai)) return;
    T.run++;
    /* The geometry of a call does not depend on its count here: a mode the runtime cannot lay
     * out (a message of the largest step does not fit a FIFO slot) fails before any call. */
    for (int mode = 0; mode < 2; mode++) {
        if (!(mode ? s.a->inplace : s.a->outofplace)) continue;
        weft_call c = {s.a->coll, WEFT_DTYPE_FLOAT, WEFT_OP_SUM, 1, mode, s.a->root, nranks, 0, 0};
        weft_call_geom g;
        if (weft_rt_call_geom(wc[0], ai, &c, nullptr, nullptr, &g) != WEFT_OK) {
            T.failed++;
            SAY0("[%d] FAIL %s: the runtime cannot lay out its %s calls (a message of its largest "
                 "step does not fit a FIFO slot: WEFT_FIFO)\n",
                 prank, what.c_str(), mode ? "in-place" : "out-of-place");
            return;
        }
    }
    std::vector<Call1> m = matrix_for(s.a, salt);
    long bad = 0;
    size_t done = 0;
    double t0 = now_s();
    for (const Call1 &x : m) {
        Outcome o = agreed(nccl_case(wc, ai, s.a, (weft_dtype)x.dt, (weft_redop)x.op, x.count,
                                     x.mode, x.seed, cat));
        pass_nccl.calls++, done++;
        if (!o.served || o.wrong) pass_nccl.wrong++, bad++;
        if (o.broken) {
            SAY0("[%d] %s: the watchdog stopped a call; attaching again\n", prank, what.c_str());
            recover();
            break;
        }
        if (bad >= 5) {
            SAY0("[%d] %s: stopped after %ld failed calls\n", prank, what.c_str(), bad);
            break;
        }
    }
    if (bad) T.failed++;
    SAY0("[%d] nccl %-9s %-64s %4zu calls %6.2f s %s\n", prank, cat, s.label.c_str(), done,
         now_s() - t0, bad ? "FAILED" : "ok");
}

/* Large messages for the bandwidth schedules (names for n ranks). */
struct Big {
    const char *name; /* printf format with the rank count */
    weft_dtype dt;
    weft_redop op;
    size_t bytes; /* per rank and segment */
    int lib;      /* a schedule of the library (--library) */
};
static std::vector<Big> big_cases(int n) {
    if (n == 2)
        return {
            {"ar_direct_n2_ch16_Simple_oop", WEFT_DTYPE_FLOAT, WEFT_OP_SUM, 256u << 20, 0},
            {"ar_direct_n2_ch16_Simple_oop", WEFT_DTYPE_BFLOAT16, WEFT_OP_MAX, 256u << 20, 0},
            {"ar_direct_n2_ch16_Simple_oop", WEFT_DTYPE_INT8, WEFT_OP_SUM, (256u << 20) + 1, 0},
            {"ar_ring_n2_ch4_Simple_oop", WEFT_DTYPE_FLOAT, WEFT_OP_SUM, 256u << 20, 0},
            {"ar_direct_n2_ch4_LL_oop", WEFT_DTYPE_HALF, WEFT_OP_SUM, 16u << 20, 0},
            {"ag_ring_n2_ch4_Simple_oop", WEFT_DTYPE_FLOAT, WEFT_OP_SUM, 64u << 20, 0},
            {"rs_ring_n2_ch4_Simple_oop", WEFT_DTYPE_DOUBLE, WEFT_OP_MIN, 64u << 20, 0},
            {"a2a_direct_n2_ch4_Simple_oop", WEFT_DTYPE_INT32, WEFT_OP_SUM, 64u << 20, 0},
            {"allreduce_direct_simple", WEFT_DTYPE_FLOAT, WEFT_OP_SUM, 256u << 20, 1},
            {"allreduce_ring", WEFT_DTYPE_BFLOAT16, WEFT_OP_SUM, 128u << 20, 1},
            {"allgather_direct_simple", WEFT_DTYPE_FLOAT, WEFT_OP_SUM, 64u << 20, 1},
        };
    return {
        {"ar_ring_n%d_ch4_Simple_oop", WEFT_DTYPE_FLOAT, WEFT_OP_SUM, 256u << 20, 0},
        {"ar_ring_n%d_ch4_Simple_oop", WEFT_DTYPE_BFLOAT16, WEFT_OP_MAX, 256u << 20, 0},
        {"ar_ring_n%d_ch4_Simple_oop", WEFT_DTYPE_INT8, WEFT_OP_SUM, (256u << 20) + 1, 0},
        {"ar_oneshot_n%d_ch4_LL_oop", WEFT_DTYPE_HALF, WEFT_OP_SUM, 16u << 20, 0},
        {"ag_ring_n%d_ch4_Simple_oop", WEFT_DTYPE_FLOAT, WEFT_OP_SUM, 64u << 20, 0},
        {"rs_ring_n%d_ch4_Simple_oop", WEFT_DTYPE_DOUBLE, WEFT_OP_MIN, 64u << 20, 0},
        {"a2a_direct_n%d_ch4_Simple_oop", WEFT_DTYPE_INT32, WEFT_OP_SUM, 32u << 20, 0},
        {"allreduce_ring", WEFT_DTYPE_FLOAT, WEFT_OP_SUM, 256u << 20, 1},
        {"allreduce_allpairs_twoshot", WEFT_DTYPE_BFLOAT16, WEFT_OP_SUM, 8u << 20, 1},
        {"allgather_ring", WEFT_DTYPE_FLOAT, WEFT_OP_SUM, 64u << 20, 1},
        {"reducescatter_ring", WEFT_DTYPE_FLOAT, WEFT_OP_SUM, 64u << 20, 1},
    };
}

static std::string big_label(const Big &b, int n, std::string *name) {
    char nm[128], lb[256];
    snprintf(nm, sizeof nm, b.name, n);
    snprintf(lb, sizeof lb, "%s %s %s %zu MB", nm, dnames[b.dt], onames[b.op], b.bytes >> 20);
    if (name) *name = nm;
    return lb;
}

static void run_big() {
    Tally &T = pass_nccl.t[CAT_BIG];
    for (const Big &b : big_cases(nranks)) {
        std::string name, label = big_label(b, nranks, &name);
        if (!wanted(label)) continue;
        int ai = find_algo(name.c_str());
        if (b.lib && !opt.library) continue; /* library schedules: with --library */
        if (b.lib && ai < 0) {
            T.skipped++;
            SAY0("[%d] big %s skipped: the library has no %d-rank instance of %s with -D %s\n",
                 prank, label.c_str(), nranks, name.c_str(), defines_str(" -D ").c_str());
            continue;
        }
        if (out_of_time()) {
            T.notrun++;
            SAY0("[%d] big %s not run: --time-limit %.0f s passed\n", prank, label.c_str(),
                 opt.time_limit);
            continue;
        }
        std::string what = "big " + label;
        if (!usable(T, what.c_str(), name.c_str(), ai)) continue;
        const weft_algo *a = vall[ai];
        size_t count = b.bytes / (size_t)weft_dtype_size(b.dt);
        T.run++;
        long bad = 0;
        for (int mode = 0; mode < 2; mode++) {
            if (!(mode ? a->inplace : a->outofplace)) continue;
            double t0 = now_s();
            Outcome o = agreed(nccl_case(wc, ai, a, b.dt, b.op, count, mode, 99, "big"));
            pass_nccl.calls++;
            if (!o.served || o.wrong) pass_nccl.wrong++, bad++;
            SAY0("[%d] big %-44s %s: %s (%.2f s)\n", prank, label.c_str(),
                 mode ? "in-place" : "out-of-place", o.served && !o.wrong ? "ok" : "FAILED",
                 now_s() - t0);
            if (o.broken) {
                recover();
                break;
            }
        }
        if (bad) T.failed++;
    }
}

/* The schedules the feature checks use, for n ranks. */
static std::string feat_name(const char *two, const char *fmt, int n) {
    char s[128];
    if (n == 2) return two;
    snprintf(s, sizeof s, fmt, n);
    return s;
}
static std::string graph_big(int n) {
    return feat_name("ar_direct_n2_ch4_Simple_oop", "ar_ring_n%d_ch4_Simple_oop", n);
}
static std::string graph_small(int n) {
    return feat_name("ar_direct_n2_ch1_LL_oop", "ar_oneshot_n%d_ch1_LL_oop", n);
}
static std::string streams_algo(int n) {
    return feat_name("ar_direct_n2_ch4_LL_oop", "ar_oneshot_n%d_ch4_LL_oop", n);
}
static std::string twocomm_a(int n) {
    return feat_name("ar_ring_n2_ch4_LL_oop", "ar_ring_n%d_ch4_LL_oop", n);
}
static std::string twocomm_b(int n) {
    return feat_name("ar_direct_n2_ch4_Simple_oop", "ar_ring_n%d_ch1_Simple_oop", n);
}

/* Compares B with RB (count floats at offset off) on every local rank; 1 when they differ. */
static long compare_float(size_t off, size_t count, const char *what, int rep) {
    long bad = 0;
    for (int l = 0; l < nlocal; l++) {
        CU(cudaSetDevice(L[l].dev));
        unsigned long long r[2];
        CU(tg_compare(L[l].B + off, L[l].RB + off, count, 4, L[l].res, L[l].st));
        CU(cudaMemcpyAsync(r, L[l].res, sizeof r, cudaMemcpyDeviceToHost, L[l].st));
        CU(cudaStreamSynchronize(L[l].st));
        if (r[0]) {
            say("[%d] FAIL %s %d: rank %d: %llu of %zu elements differ from NCCL (first at %llu)\n",
                prank, what, rep, L[l].rank, r[0], count, r[1]);
            bad = 1;
        }
    }
    return bad;
}

/* CUDA graphs: three weft calls captured once, replayed with new inputs; each replay against
 * NCCL. */
static void run_graph() {
    Tally &T = pass_nccl.t[CAT_FEATURE];
    std::string n1 = graph_big(nranks), n2 = graph_small(nranks);
    int ai = find_algo(n1.c_str()), aj = find_algo(n2.c_str());
    if (!usable(T, "graph", n1.c_str(), ai) || !usable(T, "graph", n2.c_str(), aj)) return;
    T.run++;
    const size_t count = 1 << 20, small = 1000, off2 = 8u << 20;
    cudaGraphExec_t ge[MAXL];
    long bad = 0;
    for (int l = 0; l < nlocal; l++) {
        CU(cudaSetDevice(L[l].dev));
        CU(cudaStreamBeginCapture(L[l].st, cudaStreamCaptureModeThreadLocal));
        weft_call c1 = {
            WEFT_COLL_ALLREDUCE, WEFT_DTYPE_FLOAT, WEFT_OP_SUM, count, 0, 0, nranks, 0, 0};
        weft_call c2 = {
            WEFT_COLL_ALLREDUCE, WEFT_DTYPE_FLOAT, WEFT_OP_SUM, small, 0, 0, nranks, 0, 0};
        char *in = L[l].A, *out = L[l].B;
        char *in2 = L[l].A + off2, *out2 = L[l].B + off2;
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
            bad = 1;
        }
        CU(cudaGraphInstantiate(&ge[l], g, 0));
        CU(cudaGraphDestroy(g));
    }
    agree_max(&bad, 1);
    for (int rep = 0; rep < 5 && !bad; rep++) {
        for (int l = 0; l < nlocal; l++) {
            CU(cudaSetDevice(L[l].dev));
            CU(fill(L[l].A, count, WEFT_DTYPE_FLOAT, WEFT_OP_SUM, 1, 500 + rep, L[l].rank,
                    L[l].st));
            CU(fill(L[l].A + off2, small, WEFT_DTYPE_FLOAT, WEFT_OP_SUM, 1, 600 + rep, L[l].rank,
                    L[l].st));
            CU(cudaMemcpyAsync(L[l].RA, L[l].A, 16u << 20, cudaMemcpyDeviceToDevice, L[l].st));
            CU(cudaGraphLaunch(ge[l], L[l].st));
        }
        NC(ncclGroupStart());
        for (int l = 0; l < nlocal; l++) {
            NC(ncclAllReduce(L[l].RA, L[l].RB, count, ncclFloat, ncclSum, L[l].comm, L[l].st));
            NC(ncclAllReduce(L[l].RA + off2, L[l].RB + off2, small, ncclFloat, ncclSum, L[l].comm,
                             L[l].st));
        }
        NC(ncclGroupEnd());
        long b = compare_float(0, count, "graph replay", rep) |
                 compare_float(off2, small, "graph replay (small call)", rep);
        pass_nccl.calls += 3;
        if (b) pass_nccl.wrong++;
        bad |= b;
        agree_max(&bad, 1);
    }
    for (int l = 0; l < nlocal; l++)
        cudaGraphExecDestroy(ge[l]);
    if (bad) T.failed++;
    SAY0("[%d] graph: 5 replays of 3 captured calls (%s, %s) %s\n", prank, n1.c_str(), n2.c_str(),
         bad ? "FAILED" : "ok");
}

/* Consecutive calls alternate between two streams with no synchronization in between: weft
 * orders them itself (its FIFO state is per communicator). */
static void run_streams() {
    Tally &T = pass_nccl.t[CAT_FEATURE];
    std::string nm = streams_algo(nranks);
    int ai = find_algo(nm.c_str());
    if (!usable(T, "streams", nm.c_str(), ai)) return;
    T.run++;
    const int K = 12;
    const size_t count = 4096;
    long bad = 0;
    for (int l = 0; l < nlocal; l++) {
        CU(cudaSetDevice(L[l].dev));
        for (int k = 0; k < K; k++)
            CU(fill(L[l].A + (size_t)k * count * 4, count, WEFT_DTYPE_FLOAT, WEFT_OP_SUM, 1,
                    700 + k, L[l].rank, L[l].st));
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
                bad = 1;
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
    bad |= compare_float(0, (size_t)K * count, "streams", 0);
    pass_nccl.calls += K;
    agree_max(&bad, 1);
    if (bad) T.failed++, pass_nccl.wrong++;
    SAY0("[%d] streams: %d calls of %s alternating two streams %s\n", prank, K, nm.c_str(),
         bad ? "FAILED" : "ok");
}

/* A second set of communicators on the same GPUs (ncclCommSplit of each rank's first), attached
 * with its own schedules (cfg NULL: the defaults); closing detaches what attached and destroys
 * the communicators. */
struct SplitComm {
    ncclComm_t c[MAXL] = {};
    weft_comm *wc[MAXL] = {};
    /* false, after saying "FAIL <what>: attach" and the attach's diagnostics, when it failed */
    bool open(const char *what, const weft_algo *const *algos, int n, const weft_rt_cfg *cfg) {
        NC(ncclGroupStart());
        for (int l = 0; l < nlocal; l++)
            NC(ncclCommSplit(L[l].comm, 0, L[l].rank, &c[l], nullptr));
        NC(ncclGroupEnd());
        weft_diag *d = weft_diag_new();
        bool ok = weft_rt_attach(nlocal, c, algos, n, cfg, wc, d) == WEFT_OK;
        if (!ok) {
            say("[%d] FAIL %s: attach\n", prank, what);
            weft_diag_print(d, logf_, WEFT_SEV_NOTE);
        }
        weft_diag_free(d);
        return ok;
    }
    void close() {
        if (wc[0]) weft_rt_detach_many(nlocal, wc);
        for (int l = 0; l < nlocal; l++)
            if (c[l]) ncclCommDestroy(c[l]);
    }
};

/* Two schedules on a second set of communicators, used interleaved with the first. */
static void run_two_comms() {
    Tally &T = pass_nccl.t[CAT_FEATURE];
    std::string na = twocomm_a(nranks), nb = twocomm_b(nranks);
    int ia = find_algo(na.c_str()), ib = find_algo(nb.c_str());
    if (!usable(T, "two communicators", na.c_str(), ia) ||
        !usable(T, "two communicators", nb.c_str(), ib))
        return;
    T.run++;
    SplitComm sc;
    weft_comm **wc2 = sc.wc;
    const weft_algo *two[2] = {vall[ia], vall[ib]};
    long bad = 0;
    if (!sc.open("second communicator", two, 2, nullptr)) {
        bad = 1;
    } else {
        for (int k = 0; k < 6 && !bad; k++) {
            bool second = k % 3 == 0;
            int which = k % 2; /* 0: na, 1: nb */
            int ai = second ? which : (which ? ib : ia);
            Outcome o = agreed(nccl_case(second ? wc2 : wc, ai, which ? vall[ib] : vall[ia],
                                         WEFT_DTYPE_BFLOAT16, WEFT_OP_SUM, 100003 + k, 0, 800 + k,
                                         "two-comms"));
            pass_nccl.calls++;
            if (!o.served || o.wrong || o.broken) bad = 1, pass_nccl.wrong++;
        }
    }
    sc.close();
    if (bad) T.failed++;
    SAY0("[%d] two communicators interleaved (%s, %s) %s\n", prank, na.c_str(), nb.c_str(),
         bad ? "FAILED" : "ok");
}

/* Stress (issue 30). (1) A CUDA graph captured while the communicator's scratch is small replays
 * after a larger eager call grew it: the graph keeps the scratch it was captured with. (2) Two
 * communicators launched on two streams while a kernel on a third holds every SM and frees them a
 * few at a time: a call's CTAs start together or wait together, none spins on a CTA that cannot
 * start. Every call against NCCL. */
static int scratch_allreduce(const std::vector<const weft_algo *> &v) {
    for (size_t i = 0; i < v.size(); i++) {
        const weft_algo *a = v[i];
        if (a == nullptr || a->coll != WEFT_COLL_ALLREDUCE || !a->outofplace) continue;
        for (int r = 0; r < a->ngpus; r++)
            if (a->gpus[r].s_chunks > 0) return (int)i;
    }
    return -1;
}

static void run_stress_graph() {
    Tally &T = pass_nccl.t[CAT_FEATURE];
    std::vector<const weft_algo *> elig; /* vall's schedules this communicator runs */
    for (size_t i = 0; i < vall.size(); i++)
        elig.push_back(weft_rt_algo_eligible(wc[0], (int)i) ? vall[i] : nullptr);
    int ai = scratch_allreduce(elig);
    if (ai < 0) { /* nothing to grow: the set has no allreduce that uses scratch */
        T.skipped++;
        SAY0("[%d] stress graph skipped: no %d-rank allreduce with scratch in the set\n", prank,
             nranks);
        return;
    }
    if (!usable(T, "stress graph", vall[ai]->name, ai)) return;
    T.run++;
    const size_t small = 1000, big = 2u << 20;
    long bad = 0;
    /* An eager small call gives the communicator its first (small) scratch. */
    Outcome o = agreed(nccl_case(wc, ai, vall[ai], WEFT_DTYPE_FLOAT, WEFT_OP_SUM, small, 0, 900,
                                 "stress graph (first)"));
    pass_nccl.calls++;
    if (!o.served || o.wrong || o.broken) bad = 1;
    cudaGraphExec_t ge[MAXL] = {};
    for (int l = 0; l < nlocal && !bad; l++) {
        CU(cudaSetDevice(L[l].dev));
        CU(cudaStreamBeginCapture(L[l].st, cudaStreamCaptureModeThreadLocal));
        weft_call c = {
            WEFT_COLL_ALLREDUCE, WEFT_DTYPE_FLOAT, WEFT_OP_SUM, small, 0, 0, nranks, 0, 0};
        weft_result r = weft_rt_launch(wc[l], ai, &c, (const void *const *)&L[l].A,
                                       (void *const *)&L[l].B, L[l].st);
        cudaGraph_t g;
        CU(cudaStreamEndCapture(L[l].st, &g));
        if (r != WEFT_OK) {
            say("[%d] FAIL stress graph: capture: %s\n", prank, weft_result_str(r));
            bad = 1;
        }
        CU(cudaGraphInstantiate(&ge[l], g, 0));
        CU(cudaGraphDestroy(g));
    }
    agree_max(&bad, 1);
    for (int rep = 0; rep < 3 && !bad; rep++) {
        /* A larger eager call: the scratch grows (the graph's is retired, not freed). */
        o = agreed(nccl_case(wc, ai, vall[ai], WEFT_DTYPE_FLOAT, WEFT_OP_SUM, big << rep, 0,
                             910 + rep, "stress graph (growing)"));
        pass_nccl.calls++;
        if (!o.served || o.wrong || o.broken) {
            bad = 1;
            break;
        }
        for (int l = 0; l < nlocal; l++) {
            CU(cudaSetDevice(L[l].dev));
            CU(cudaMemsetAsync(L[l].B, 0xCD, small * 4, L[l].st));
            CU(fill(L[l].A, small, WEFT_DTYPE_FLOAT, WEFT_OP_SUM, 1, 920 + rep, L[l].rank,
                    L[l].st));
            CU(cudaMemcpyAsync(L[l].RA, L[l].A, small * 4, cudaMemcpyDeviceToDevice, L[l].st));
            CU(cudaGraphLaunch(ge[l], L[l].st));
        }
        NC(ncclGroupStart());
        for (int l = 0; l < nlocal; l++)
            NC(ncclAllReduce(L[l].RA, L[l].RB, small, ncclFloat, ncclSum, L[l].comm, L[l].st));
        NC(ncclGroupEnd());
        long b = compare_float(0, small, "stress graph replay after growth", rep);
        pass_nccl.calls++;
        bad |= b;
        agree_max(&bad, 1);
    }
    for (int l = 0; l < nlocal; l++)
        if (ge[l]) cudaGraphExecDestroy(ge[l]);
    if (bad) T.failed++, pass_nccl.wrong++;
    SAY0("[%d] stress graph: replays of a small call after eager calls grew the scratch (%s) %s\n",
         prank, vall[ai]->name, bad ? "FAILED" : "ok");
}

static void run_stress_busy() {
    Tally &T = pass_nccl.t[CAT_FEATURE];
    std::string na = twocomm_a(nranks), nb = twocomm_b(nranks);
    int ia = find_algo(na.c_str()), ib = find_algo(nb.c_str());
    if (!usable(T, "stress busy", na.c_str(), ia) || !usable(T, "stress busy", nb.c_str(), ib))
        return;
    T.run++;
    SplitComm sc;
    weft_comm **wc2 = sc.wc;
    const weft_algo *two[1] = {vall[ib]};
    long bad = 0;
    cudaStream_t bs[MAXL] = {};
    if (!sc.open("stress busy: second communicator", two, 1, nullptr)) bad = 1;
    agree_max(&bad, 1);
    /* Calls of comm 1 (schedule a) at [0, K*n) of A/B, comm 2 (schedule b) after them. */
    const int K = 4;
    const size_t n = 1u << 18, off = (size_t)K * n * 4;
    for (int l = 0; l < nlocal && !bad; l++) {
        CU(cudaSetDevice(L[l].dev));
        CU(cudaStreamCreateWithFlags(&bs[l], cudaStreamNonBlocking));
        CU(fill(L[l].A, 2 * (size_t)K * n, WEFT_DTYPE_FLOAT, WEFT_OP_SUM, 1, 950, L[l].rank,
                L[l].st));
        CU(cudaMemcpyAsync(L[l].RA, L[l].A, 2 * off, cudaMemcpyDeviceToDevice, L[l].st));
        CU(cudaMemsetAsync(L[l].B, 0xCD, 2 * off, L[l].st));
        CU(cudaStreamSynchronize(L[l].st));
    }
    for (int k = 0; k < K && !bad; k++) {
        for (int l = 0; l < nlocal; l++) {
            CU(cudaSetDevice(L[l].dev));
            CU(tg_busy(20000000, L[l].res, bs[l])); /* 20 ms */
            weft_call c = {
                WEFT_COLL_ALLREDUCE, WEFT_DTYPE_FLOAT, WEFT_OP_SUM, n, 0, 0, nranks, 0, 0};
            char *i1 = L[l].A + (size_t)k * n * 4, *o1 = L[l].B + (size_t)k * n * 4;
            char *i2 = i1 + off, *o2 = o1 + off;
            weft_result r1 = weft_rt_launch(wc[l], ia, &c, (const void *const *)&i1,
                                            (void *const *)&o1, L[l].st);
            weft_result r2 = weft_rt_launch(wc2[l], 0, &c, (const void *const *)&i2,
                                            (void *const *)&o2, L[l].st2);
            if (r1 != WEFT_OK || r2 != WEFT_OK) {
                say("[%d] FAIL stress busy: launch %d: %s %s\n", prank, k, weft_result_str(r1),
                    weft_result_str(r2));
                bad = 1;
            }
        }
    }
    for (int l = 0; l < nlocal; l++) {
        CU(cudaSetDevice(L[l].dev));
        CU(cudaDeviceSynchronize());
        char msg[1024];
        if (!bad && (weft_comm_status(wc[l], msg, sizeof msg) != WEFT_OK ||
                     weft_comm_status(wc2[l], msg, sizeof msg) != WEFT_OK)) {
            say("[%d] FAIL stress busy: %s\n", prank, msg);
            bad = 1;
        }
    }
    agree_max(&bad, 1);
    if (!bad) {
        NC(ncclGroupStart());
        for (int l = 0; l < nlocal; l++)
            NC(ncclAllReduce(L[l].RA, L[l].RB, (size_t)K * n, ncclFloat, ncclSum, L[l].comm,
                             L[l].st));
        NC(ncclGroupEnd());
        NC(ncclGroupStart());
        for (int l = 0; l < nlocal; l++)
            NC(ncclAllReduce(L[l].RA + off, L[l].RB + off, (size_t)K * n, ncclFloat, ncclSum,
                             L[l].comm, L[l].st));
        NC(ncclGroupEnd());
        bad |= compare_float(0, 2 * (size_t)K * n, "stress busy", 0);
        agree_max(&bad, 1);
    }
    pass_nccl.calls += 2 * K;
    for (int l = 0; l < nlocal; l++)
        if (bs[l]) cudaStreamDestroy(bs[l]);
    sc.close();
    if (bad) T.failed++, pass_nccl.wrong++;
    SAY0("[%d] stress busy: %d x two communicators on two streams while the SMs are held (%s, %s) "
         "%s\n",
         prank, K, na.c_str(), nb.c_str(), bad ? "FAILED" : "ok");
}

/* The watchdog over NCCL: a third communicator with the n-rank deadlock; every rank's call stops
 * within a second, naming its step. */
static void run_watchdog() {
    Tally &T = pass_nccl.t[CAT_FEATURE];
    weft_algo *dl = deadlock_ring(nranks);
    T.run++;
    SplitComm sc;
    weft_comm **wc3 = sc.wc;
    weft_rt_cfg cfg;
    weft_rt_cfg_default(&cfg);
    cfg.timeout_ns = 300 * 1000000ll;
    const weft_algo *dv[1] = {dl};
    long bad = 0;
    if (dl && sc.open("watchdog communicator", dv, 1, &cfg)) {
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
            /* Each rank names its stalled step: its own timeout, or (when a peer's watchdog
             * fired first and stopped it: the ranks start at different times) the peer that
             * gave up; both name the step. */
            int ok = r == WEFT_ERR_TIMEOUT && el < 5.0 &&
                     strstr(msg, "tb 0 step 0 (deadlock.xml:11)") &&
                     (strstr(msg, "waiting for data from rank") || strstr(msg, " gave up"));
            if (!ok) bad = 1;
            say("[%d] watchdog (NCCL) rank %d: %.2f s, \"%s\" %s\n", prank, L[l].rank, el, msg,
                ok ? "ok" : "FAILED");
        }
    } else {
        if (!dl) say("[%d] FAIL watchdog communicator: attach\n", prank);
        bad = 1;
    }
    sc.close();
    agree_max(&bad, 1);
    if (bad) T.failed++;
}

/* Communicators of nranks ranks: one per process under MPI, else one process for every GPU. */
static bool setup_comms(int dev) {
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
        ncclComm_t cs[MAXL];
        int devs[MAXL];
        for (int l = 0; l < nlocal; l++)
            devs[l] = l;
        NC(ncclCommInitAll(cs, nlocal, devs));
        for (int l = 0; l < nlocal; l++)
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
    return true;
}

static void run_nccl(Sources &src, int dev) {
    setup_comms(dev);
    int ver = 0;
    ncclGetVersion(&ver);
    SAY0("[%d] NCCL %d, %d ranks: %s\n", prank, ver, nranks,
         pworld > 1 ? "one process per GPU (MPI)" : "one process driving every GPU");
    if (!avg_comparable(nranks))
        SAY0("[%d] floating-point avg left out: NCCL premultiplies by 1/%d, which is not exact\n",
             prank, nranks);
    std::vector<Sched> S = schedules_for(nranks, src);
    std::vector<int> idx(S.size(), -1);
    for (size_t i = 0; i < S.size(); i++)
        if (S[i].a) idx[i] = (int)vall.size(), vall.push_back(S[i].a);
    if (!attach_main()) {
        say("[%d] FAIL attach: no case over NCCL can run\n", prank);
        setup_failed = 1;
    } else {
        if (wanted("stress graph")) run_stress_graph(); /* first: while the scratch is small */
        if (wanted("graph")) run_graph();
        if (wanted("streams")) run_streams();
        if (wanted("two communicators")) run_two_comms();
        if (wanted("stress busy")) run_stress_busy();
        for (size_t i = 0; i < S.size(); i++)
            if (wanted(S[i].label)) nccl_sched(S[i], idx[i], i);
        run_big();
        if (wanted("watchdog")) run_watchdog();
        if (!nccl_dead) {
            double td = now_s();
            weft_result dr = weft_rt_detach_many(nlocal, wc);
            SAY0("[%d] detach: %s (%.2f s)\n", prank, weft_result_str(dr), now_s() - td);
            if (dr != WEFT_OK) pass_nccl.t[CAT_FEATURE].run++, pass_nccl.t[CAT_FEATURE].failed++;
        }
    }
    for (int l = 0; l < nlocal; l++) {
        cudaSetDevice(L[l].dev);
        cudaFree(L[l].A), cudaFree(L[l].B), cudaFree(L[l].RA), cudaFree(L[l].RB);
        cudaFree(L[l].res);
        cudaStreamDestroy(L[l].st), cudaStreamDestroy(L[l].st2);
        ncclCommDestroy(L[l].comm);
    }
}

/* ---- --list: the cases for each rank count, without a GPU ------------------------------- */
static int list_cases(Sources &src) {
    weft_rt_cfg cfg;
    weft_rt_cfg_default(&cfg);
    const int maxc = cfg.max_ctas;
    int bad = 0;
    printf("# test_gpu --list%s: the cases for each rank count. Over NCCL a schedule runs when a "
           "rank's thread blocks fit %d CTAs (the runtime's cap; a GPU with fewer resident CTAs "
           "skips more); loopback runs the same schedules where they fit the GPU's resident CTAs "
           "/ N. Library instances with -D %s.\n",
           opt.quick ? " --quick" : "", maxc, defines_str(" -D ").c_str());
    for (int n : opt.ranks) {
        std::vector<Sched> S = schedules_for(n, src);
        Tally T[CAT_COUNT];
        long calls = 0, lcalls = 0;
        std::vector<std::string> names;
        std::vector<const weft_algo *> runnable; /* wanted or not, as vall when running */
        for (const Sched &s : S) {
            bool lg;
            if (s.a && cannot_run(s.a, n, maxc, &lg).empty()) runnable.push_back(s.a);
        }
        for (size_t i = 0; i < S.size(); i++) {
            const Sched &s = S[i];
            if (!wanted(s.label)) continue;
            Tally &t = T[s.cat];
            std::string why = s.why;
            bool legit = s.legit;
            if (s.a) why = cannot_run(s.a, n, maxc, &legit);
            if (!why.empty()) {
                printf("N=%d %-9s %-4s %s: %s\n", n, cat_names[s.cat], legit ? "skip" : "FAIL",
                       s.label.c_str(), why.c_str());
                if (legit)
                    t.skipped++;
                else
                    t.run++, t.failed++, bad = 1;
                continue;
            }
            names.push_back(s.a->name);
            size_t m = matrix_for(s.a, i).size(), lm = loop_matrix_for(s.a, i).size();
            calls += (long)m, lcalls += (long)lm;
            t.run++;
            printf("N=%d %-9s run  %-64s %-13s %-6s %-6s %4zu calls (loopback %zu)\n", n,
                   cat_names[s.cat], s.label.c_str(), weft_coll_name(s.a->coll),
                   weft_proto_name(s.a->proto),
                   s.a->inplace && s.a->outofplace ? "oop+ip"
                   : s.a->inplace                  ? "ip"
                                                   : "oop",
                   m, lm);
        }
        auto have = [&](const std::string &nm) {
            return std::find(names.begin(), names.end(), nm) != names.end();
        };
        for (const Big &b : big_cases(n)) {
            std::string name, label = big_label(b, n, &name);
            if ((b.lib && !opt.library) || !wanted(label)) continue;
            Tally &t = T[CAT_BIG];
            if (have(name)) {
                t.run++, calls += 2;
                printf("N=%d %-9s run  %s\n", n, "big", label.c_str());
            } else if (b.lib) {
                t.skipped++;
                printf("N=%d %-9s skip %s: no %d-rank instance with these defines\n", n, "big",
                       label.c_str(), n);
            } else {
                t.run++, t.failed++, bad = 1;
                printf("N=%d %-9s FAIL %s: schedule not in the set\n", n, "big", label.c_str());
            }
        }
        struct {
            const char *what;
            std::string a, b;
        } feats[] = {
            {"graph", graph_big(n), graph_small(n)},
            {"streams", streams_algo(n), ""},
            {"two communicators", twocomm_a(n), twocomm_b(n)},
            {"stress graph",
             scratch_allreduce(runnable) < 0
                 ? std::string()
                 : std::string(runnable[scratch_allreduce(runnable)]->name),
             ""},
            {"stress busy", twocomm_a(n), twocomm_b(n)},
            {"watchdog", "", ""},
        };
        for (auto &f : feats) {
            if (!wanted(f.what)) continue;
            Tally &t = T[CAT_FEATURE];
            if (f.a.empty() && strcmp(f.what, "stress graph") == 0) {
                t.skipped++;
                printf("N=%d %-9s skip %s: no %d-rank allreduce with scratch in the set\n", n,
                       "features", f.what, n);
                continue;
            }
            bool ok = (f.a.empty() || have(f.a)) && (f.b.empty() || have(f.b));
            t.run++;
            if (!ok) t.failed++, bad = 1;
            printf("N=%d %-9s %-4s %s%s%s%s%s\n", n, "features", ok ? "run" : "FAIL", f.what,
                   f.a.empty() ? " (the n-rank deadlock, also in loopback)" : ": ", f.a.c_str(),
                   f.b.empty() ? "" : ", ", f.b.c_str());
        }
        printf("N=%d:", n);
        for (int c = 0; c < CAT_COUNT; c++)
            printf("%s %s %ld run%s, %ld skipped", c ? ";" : "", cat_names[c], T[c].run,
                   T[c].failed ? (" (" + std::to_string(T[c].failed) + " FAIL)").c_str() : "",
                   T[c].skipped);
        printf("; %ld calls over NCCL, %ld in loopback\n", calls, lcalls);
    }
    return bad;
}

/* ---- main ------------------------------------------------------------------------------- */
static void print_pass(const char *title, const Pass &p, Tally *total) {
    printf("test_gpu: %s:", title);
    for (int c = 0; c < CAT_COUNT; c++) {
        const Tally &t = p.t[c];
        printf("%s %s %ld run, %ld failed, %ld skipped", c ? ";" : "", cat_names[c], t.run,
               t.failed, t.skipped);
        if (t.notrun) printf(", %ld not run (time limit)", t.notrun);
        total->run += t.run, total->failed += t.failed, total->skipped += t.skipped;
        total->notrun += t.notrun;
    }
    printf("; %ld calls checked, %ld differed\n", p.calls, p.wrong);
}

static int usage(int rc) {
    fprintf(
        rc ? stderr : stdout,
        "usage: test_gpu [options]   (under mpirun -np N: N ranks, one GPU each; alone: one "
        "process driving every GPU)\n"
        "  --library DIR      the algorithm library: its instances for N ranks run too\n"
        "  -D, --define NAME=VALUE  defines the library's sources are built with (repeat; the "
        "first replaces the default SERVE=1 ANYN=1, which opens every gate; 'none': the "
        "library as shipped)\n"
        "  --shared DIR       the folder with conformance/ (default $WEFT_SHARED_DIR)\n"
        "  --algos FILE|DIR   more MSCCL XML schedules (repeat)\n"
        "  --fuzz SEED:COUNT  the differential fuzzer's corpus: per rank count the first COUNT\n"
        "                     verified random schedules from SEED on (tests/fuzz/rgen.h)\n"
        "  --quick            fewer calls per schedule (ctest)\n"
        "  --no-loopback | --loopback-only\n"
        "  --ranks LIST       rank counts for loopback and --list (default 2,4,8)\n"
        "  --gpus N           without MPI: drive N GPUs (default all, at most %d)\n"
        "  --only TEXT        only the cases whose name contains TEXT\n"
        "  --time-limit S     leave out (and report) the cases that would start after S "
        "seconds\n"
        "  --list             print the cases for each rank count of --ranks (no GPU needed)\n",
        MAXL);
    return rc;
}

static bool parse_ranks(const char *s) {
    opt.ranks.clear();
    for (const char *p = s; *p;) {
        char *end;
        long v = strtol(p, &end, 10);
        if (end == p || v < 2 || v > MAXL) return false;
        opt.ranks.push_back((int)v);
        p = *end == ',' ? end + 1 : end;
        if (*end && *end != ',') return false;
    }
    return !opt.ranks.empty();
}

int main(int argc, char **argv) {
    const char *shared = getenv("WEFT_SHARED_DIR");
    bool defines_given = false;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        bool more = i + 1 < argc;
        if (!strcmp(a, "--quick"))
            opt.quick = 1;
        else if (!strcmp(a, "--no-loopback"))
            opt.loop = 0;
        else if (!strcmp(a, "--loopback-only"))
            opt.nccl = 0;
        else if (!strcmp(a, "--list"))
            opt.list = 1;
        else if (!strcmp(a, "--algos") && more)
            opt.algos.push_back(argv[++i]);
        else if (!strcmp(a, "--library") && more)
            opt.library = argv[++i];
        else if (!strcmp(a, "--fuzz") && more) {
            unsigned long long seed = 0;
            if (sscanf(argv[++i], "%llu:%d", &seed, &opt.fuzz_count) != 2 || opt.fuzz_count < 1)
                return usage(2);
            opt.fuzz_seed = seed;
        } else if (!strcmp(a, "--shared") && more)
            shared = argv[++i];
        else if ((!strcmp(a, "-D") || !strcmp(a, "--define")) && more) {
            if (!defines_given) opt.defines.clear();
            defines_given = true;
            if (strcmp(argv[++i], "none") != 0) opt.defines.push_back(argv[i]);
        } else if (!strcmp(a, "--ranks") && more) {
            if (!parse_ranks(argv[++i])) return usage(2);
        } else if (!strcmp(a, "--gpus") && more) {
            opt.gpus = atoi(argv[++i]);
            if (opt.gpus < 2 || opt.gpus > MAXL) return usage(2);
        } else if (!strcmp(a, "--only") && more)
            opt.only = argv[++i];
        else if (!strcmp(a, "--time-limit") && more)
            opt.time_limit = atof(argv[++i]);
        else if (!strcmp(a, "--help") || !strcmp(a, "-h"))
            return usage(0);
        else
            return usage(2);
    }
    if (opt.ranks.empty()) opt.ranks = {2, 4, 8};
    Sources src;
    if (opt.list) {
        load_sources(src, shared);
        int bad = list_cases(src);
        for (weft_registry *r : src.per_ranks)
            weft_registry_free(r);
        weft_registry_free(src.lib);
        for (weft_algo *a : algos_owned)
            weft_algo_free(a);
        return bad;
    }
    int local_rank = 0, local_size = 1;
#ifdef WEFT_HAVE_MPI
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &prank);
    MPI_Comm_size(MPI_COMM_WORLD, &pworld);
    MPI_Comm node;
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, prank, MPI_INFO_NULL, &node);
    MPI_Comm_rank(node, &local_rank);
    MPI_Comm_size(node, &local_size);
    MPI_Comm_free(&node);
#endif
    int ndev = 0;
    if (cudaGetDeviceCount(&ndev) != cudaSuccess || ndev == 0) {
        printf("skipped: no GPU\n");
#ifdef WEFT_HAVE_MPI
        MPI_Finalize();
#endif
        return 77;
    }
    t_start = now_s();
    load_sources(src, shared);
    int dev = pworld > 1 ? local_rank % ndev : 0;
    CU(cudaSetDevice(dev));
    std::string nccl_title;
    if (opt.nccl) {
        long cant = 0;
        if (pworld > 1) {
            nranks = pworld, nlocal = 1;
            if (local_size > ndev) {
                say("[%d] FAIL NCCL part not run: %d processes on this node, %d GPUs (one GPU per "
                    "process)\n",
                    prank, local_size, ndev);
                cant = 1;
            }
            agree_max(&cant, 1);
            nccl_title = "over NCCL, " + std::to_string(nranks) + " ranks (" +
                         std::to_string(pworld) + " processes, one GPU each)";
        } else {
            nlocal = nranks = opt.gpus ? opt.gpus : std::min(ndev, MAXL);
            if (nlocal > ndev) {
                say("[%d] FAIL NCCL part not run: --gpus %d, %d GPUs here\n", prank, nlocal, ndev);
                cant = 1;
            } else if (nlocal < 2) {
                say("[%d] NCCL part skipped: needs 2 GPUs (or mpirun -np N); %d here\n", prank,
                    ndev);
                cant = 2;
            }
            nccl_title = "over NCCL, " + std::to_string(nranks) + " ranks (one process, " +
                         std::to_string(nlocal) + " GPUs)";
        }
        if (cant == 1) setup_failed = 1;
        if (!cant) run_nccl(src, dev);
        CU(cudaSetDevice(dev));
    }
    if (opt.loop) run_loopback(src);

    /* Over NCCL every process counted the same (agreed) cases; loopback cases were shared. */
    long lt[CAT_COUNT * 4 + 2 + 1];
    for (int c = 0; c < CAT_COUNT; c++) {
        lt[4 * c] = pass_loop.t[c].run, lt[4 * c + 1] = pass_loop.t[c].failed;
        lt[4 * c + 2] = pass_loop.t[c].skipped, lt[4 * c + 3] = pass_loop.t[c].notrun;
    }
    lt[4 * CAT_COUNT] = pass_loop.calls, lt[4 * CAT_COUNT + 1] = pass_loop.wrong;
    lt[4 * CAT_COUNT + 2] = setup_failed;
#ifdef WEFT_HAVE_MPI
    MPI_Allreduce(MPI_IN_PLACE, lt, (int)(sizeof lt / sizeof *lt), MPI_LONG, MPI_SUM,
                  MPI_COMM_WORLD);
#endif
    for (int c = 0; c < CAT_COUNT; c++) {
        pass_loop.t[c].run = lt[4 * c], pass_loop.t[c].failed = lt[4 * c + 1];
        pass_loop.t[c].skipped = lt[4 * c + 2], pass_loop.t[c].notrun = lt[4 * c + 3];
    }
    pass_loop.calls = lt[4 * CAT_COUNT], pass_loop.wrong = lt[4 * CAT_COUNT + 1];
    setup_failed = lt[4 * CAT_COUNT + 2] != 0;
    int rc = 0;
    if (prank == 0) {
        Tally tot;
        if (opt.nccl && !nccl_title.empty()) print_pass(nccl_title.c_str(), pass_nccl, &tot);
        if (opt.loop) {
            std::string r;
            for (int n : opt.ranks)
                r += (r.empty() ? "" : ",") + std::to_string(n);
            print_pass(("loopback against the host reference, " + r + " ranks on one GPU" +
                        (pworld > 1 ? " (shared between the processes)" : ""))
                           .c_str(),
                       pass_loop, &tot);
        }
        printf("test_gpu: %ld cases run, %ld failed, %ld skipped, %ld not run (time limit)%s; "
               "%.1f s\n",
               tot.run, tot.failed, tot.skipped, tot.notrun,
               setup_failed ? "; the NCCL part could not start" : "", now_s() - t_start);
        rc = tot.failed || tot.notrun || setup_failed ? 1 : 0;
    }
#ifdef WEFT_HAVE_MPI
    MPI_Bcast(&rc, 1, MPI_INT, 0, MPI_COMM_WORLD);
    MPI_Finalize();
#endif
    for (weft_registry *r : src.per_ranks)
        weft_registry_free(r);
    weft_registry_free(src.lib);
    for (weft_algo *a : algos_owned)
        weft_algo_free(a);
    return rc;
}
