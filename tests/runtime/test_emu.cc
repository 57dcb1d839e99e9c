/* test_emu.cc — the GPU interpreter run on the host (emu.h) against the collectives'
 * definitions: generated and conformance schedules, every data type and op, in-place and
 * out-of-place, counts that do and do not divide, FIFOs so small that every call wraps them;
 * several algorithms sharing one communicator; the watchdog. Data are small integers, so every
 * reduction order gives the same bits and results compare exactly. */
#include "emu.h"
#include "emu_case.h"
#include "gen.h"
#include "interp.h"
#include "refcheck.h"
#ifdef WEFT_TEST_REGISTRY
#include "weft_runtime.h"
extern "C" {
#include "weft_select.h" /* a C header without C++ guards */
}
#endif

#include <algorithm>
#include <chrono>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <string>
#include <time.h>
#include <vector>

using namespace weft_rt;
using namespace refcheck;

static int failures = 0;
#define FAILF(...)                                                                                 \
    do {                                                                                           \
        fprintf(stderr, __VA_ARGS__);                                                              \
        failures++;                                                                                \
    } while (0)

/* ---- one call, checked ------------------------------------------------------------------ */
static EmuTally tally;

/* LL128 on the GPU's lanes (HostPlat8: eight threads a line, the CTA one warp) with the
 * runtime's default FIFOs: slices of whole lines, the last of a chunk partial and in a warp of
 * which only some lines take part, chunks that start at odd bytes (int8 at odd counts), in and
 * out of place, 2, 4 and 8 ranks. */
static void test_ll128_lanes(void) {
    for (int nr : {2, 4, 8}) {
        std::vector<weft_algo *> own;
        char s[160];
        for (const char *sp : {"ar_direct", "ar_oneshot", "ar_staged", "ag_direct", "rs_ring",
                               "a2a_direct", "reduce_chain"}) {
            /* ar_direct is for 2 ranks, ar_oneshot for more */
            const bool direct = strcmp(sp, "ar_direct") == 0,
                       oneshot = strcmp(sp, "ar_oneshot") == 0;
            if ((direct && nr != 2) || (oneshot && nr == 2)) continue;
            for (int ch : {1, 4}) {
                snprintf(s, sizeof s, "%s:n=%d:ch=%d:proto=LL128:root=%d", sp, nr, ch, nr / 2);
                gen_params p;
                weft_algo *a = gen_parse(s, &p) == 0 ? gen_algo(&p) : nullptr;
                if (a)
                    own.push_back(a);
                else
                    FAILF("gen_algo(%s) failed\n", s);
            }
        }
        EmuComm em;
        std::vector<const weft_algo *> v(own.begin(), own.end());
        weft_rt_cfg c;
        weft_rt_cfg_default(&c);
        c.timeout_ns = 60ll * 1000000000ll;
        em.nthreads = nr == 8 ? 16 : 32;
        em.ll128_lanes = true;
        if (em.attach(nr, v, c) != WEFT_OK) {
            FAILF("attach of %d-rank LL128 schedules failed\n", nr);
        } else {
            uint32_t seed = 7;
            for (size_t ai = 0; ai < v.size(); ai++)
                for (int mode = 0; mode < 2; mode++) {
                    if (!(mode ? v[ai]->inplace : v[ai]->outofplace)) continue;
                    for (size_t count : {(size_t)1, (size_t)49, (size_t)1000, (size_t)65541}) {
                        int red = weft_coll_reduces(v[ai]->coll);
                        EmuCase k;
                        k.dt = count % 2 ? WEFT_DTYPE_INT8 : WEFT_DTYPE_FLOAT;
                        k.op = red ? (weft_redop)(seed % 4) : WEFT_OP_SUM;
                        k.count = count, k.inplace = mode, k.seed = seed++;
                        std::string err = emu_check_case(em, (int)ai, k, tally);
                        if (!err.empty()) FAILF("%s (LL128 lanes)\n", err.c_str());
                    }
                }
        }
        for (weft_algo *a : own)
            weft_algo_free(a);
    }
}

/* Every other call with registered buffers: direct transfers where the plan allows. Of the
 * calls, a third run every rank collapsed where the plan has it, a third as written, a third
 * with the ranks differing (both forms on one communicator, call after call). */
static void run_case(EmuComm &em, int ai, weft_dtype dt, weft_redop op, size_t count, int inplace,
                     uint32_t seed) {
    EmuCase c;
    c.dt = dt, c.op = op, c.count = count, c.inplace = inplace, c.seed = seed;
    c.direct = (seed & 1) != 0;
    c.collapse = (int)((seed >> 1) % 3);
    c.hop = (seed >> 3) & 1; /* half the calls on the one-hop kernel where it fits */
    std::string err = emu_check_case(em, ai, c, tally);
    if (!err.empty()) FAILF("%s\n", err.c_str());
}

/* Floats that do not add exactly: a collapsed call computes the bits the schedule as written
 * computes (its reduction order, operand by operand, for sum, max and min). */
static long norder = 0, nhop_order = 0;
static void check_order(EmuComm &em, int ai, int inplace) {
    const weft_algo *a = em.algos[ai];
    const weft_mode_plan *m = weft_plan_mode(&em.plans[ai], inplace);
    if (!m || !(m->collapsed || m->hop) || !weft_coll_reduces(a->coll)) return;
    const int n = em.n, li = weft_coll_large(a->coll, WEFT_BUF_INPUT),
              lo = weft_coll_large(a->coll, WEFT_BUF_OUTPUT);
    const size_t count = 37, ine = (li ? n : 1) * count, oute = (lo ? n : 1) * count;
    int64_t C = weft_chunk_elems((int64_t)count, weft_algo_chunks_per_seg(a));
    for (weft_redop op : {WEFT_OP_SUM, WEFT_OP_MAX, WEFT_OP_MIN}) {
        /* forms: as written, collapsed, on the one-hop kernel */
        std::vector<float> out[3];
        for (int form = 0; form < 3; form++) {
            std::vector<std::vector<float>> b1(n), b2(n), scr(n);
            std::vector<std::vector<char *>> bufs(n, std::vector<char *>(3));
            for (int r = 0; r < n; r++) {
                size_t big = inplace ? (li || lo ? n : 1) * count : ine;
                b1[r].assign(big, 0.f);
                b2[r].assign(oute, 0.f);
                uint32_t x = 2654435761u * (uint32_t)(r + 1);
                float *ip = b1[r].data() + (inplace && lo && !li ? (size_t)r * count : 0);
                for (size_t e = 0; e < ine; e++) {
                    x = x * 1664525u + 1013904223u;
                    ip[e] = (float)(x >> 8) * 1e-7f - 0.3f * (float)(e % 5) + 1e-3f * (float)r;
                    if (op != WEFT_OP_SUM && (x & 7) == 0) ip[e] = (x & 8) ? 0.0f : -0.0f;
                }
                scr[r].assign((size_t)a->gpus[r].s_chunks * (size_t)C + 1, 0.f);
                float *op_ = inplace
                                 ? (lo && !li ? b1[r].data()
                                              : b1[r].data() + (li && !lo ? (size_t)r * count : 0))
                                 : b2[r].data();
                bufs[r][0] = (char *)ip, bufs[r][1] = (char *)op_,
                bufs[r][2] = (char *)scr[r].data();
            }
            em.direct = false;
            em.collapse = form == 1;
            em.hop = form == 2;
            em.collapse_ranks.clear();
            long before = em.collapsed_calls, hop_before = em.hop_calls;
            weft_result res = em.launch(ai, WEFT_DTYPE_FLOAT, op, count, inplace, bufs);
            em.hop = -1;
            if (res != WEFT_OK) {
                FAILF("%s: order check launch failed\n", a->name);
                return;
            }
            /* too large to collapse, or no one-hop form: nothing to compare */
            if ((form == 1 && em.collapsed_calls == before) ||
                (form == 2 && em.hop_calls == hop_before))
                continue;
            for (int r = 0; r < n; r++)
                out[form].insert(out[form].end(), (float *)bufs[r][1],
                                 (float *)bufs[r][1] + (lo ? n : 1) * count);
        }
        for (int form = 1; form < 3; form++) {
            if (out[form].empty()) continue;
            if (memcmp(out[0].data(), out[form].data(), out[0].size() * sizeof(float)) != 0)
                FAILF("%s %s %s: %s results differ from the plan as written\n", a->name,
                      op == WEFT_OP_SUM   ? "sum"
                      : op == WEFT_OP_MAX ? "max"
                                          : "min",
                      inplace ? "in-place" : "out-of-place", form == 1 ? "collapsed" : "one-hop");
            norder++;
            nhop_order += form == 2;
        }
    }
}

static weft_rt_cfg tiny_cfg() {
    weft_rt_cfg c;
    memset(&c, 0, sizeof c);
    c.nslots[WEFT_RT_PROTO_SIMPLE] = 3;
    c.slot_bytes[WEFT_RT_PROTO_SIMPLE] = 512;
    c.nslots[WEFT_RT_PROTO_LL] = 3;
    c.slot_bytes[WEFT_RT_PROTO_LL] = 1024;
    c.nslots[WEFT_RT_PROTO_LL128] = 3;
    c.slot_bytes[WEFT_RT_PROTO_LL128] = 2048;
    c.nthreads = 2;
    c.latency_kernel = 1;
    c.timeout_ns = 60ll * 1000000000ll; /* a hang is a failure, never a stuck test */
    return c;
}

/* Every type once, every op on float and int32, several counts, every mode it declares. */
static void run_algo(EmuComm &em, int ai, int heavy) {
    const weft_algo *a = em.algos[ai];
    if (!em.eligible(ai)) {
        FAILF("%s: not eligible: %s\n", a->name, em.why[ai].c_str());
        return;
    }
    static const size_t counts_light[] = {1, 7, 64, 1031};
    static const size_t counts_heavy[] = {1, 2, 3, 8, 13, 64, 100, 257, 1031, 4099};
    const size_t *counts = heavy ? counts_heavy : counts_light;
    size_t ncounts = heavy ? sizeof counts_heavy / sizeof *counts_heavy
                           : sizeof counts_light / sizeof *counts_light;
    int reduces = weft_coll_reduces(a->coll);
    std::vector<std::pair<weft_dtype, weft_redop>> ty;
    for (int d = 0; d < WEFT_DTYPE_COUNT; d++)
        ty.push_back({(weft_dtype)d, reduces ? (weft_redop)((d + ai) % 4) : WEFT_OP_SUM});
    if (reduces)
        for (int o = 0; o < 4; o++) {
            ty.push_back({WEFT_DTYPE_FLOAT, (weft_redop)o});
            ty.push_back({WEFT_DTYPE_INT32, (weft_redop)o});
        }
    uint32_t seed = 1;
    for (int mode = 0; mode < 2; mode++) {
        if (mode == 0 && !a->outofplace) continue;
        if (mode == 1 && !a->inplace) continue;
        check_order(em, ai, mode);
        for (size_t ci = 0; ci < ncounts; ci++)
            for (size_t t = 0; t < ty.size(); t++) {
                /* Heavy schedules: a subset of types per count. */
                if (!heavy && (t + ci) % 3 != 0 && counts[ci] > 64) continue;
                /* LL calls alternate between the latency kernel and the general one (both
                 * serve them on the GPU: WEFT_LATENCY_KERNEL) */
                em.cfg.latency_kernel = (int32_t)(seed % 2);
                run_case(em, ai, ty[t].first, ty[t].second, counts[ci], mode, seed++);
            }
    }
}

static void test_generated(void) {
    std::vector<weft_algo *> owned;
    auto add = [&](const char *spec) {
        gen_params p;
        if (gen_parse(spec, &p) != 0) {
            FAILF("bad spec %s\n", spec);
            return;
        }
        weft_algo *a = gen_algo(&p);
        if (!a)
            FAILF("gen_algo(%s) failed\n", spec);
        else
            owned.push_back(a);
    };
    const char *protos[] = {"Simple", "LL", "LL128"};
    char s[160];
    for (const char *pr : protos) {
        for (int ch : {1, 3}) {
            for (int ip = 0; ip < 2; ip++) {
                snprintf(s, sizeof s, "ar_direct:n=2:ch=%d:proto=%s:inplace=%d", ch, pr, ip);
                add(s);
                snprintf(s, sizeof s, "ag_ring:n=2:ch=%d:proto=%s:inplace=%d", ch, pr, ip);
                add(s);
                snprintf(s, sizeof s, "ag_direct:n=2:ch=%d:proto=%s:inplace=%d", ch, pr, ip);
                add(s);
                snprintf(s, sizeof s, "bcast_chain:n=2:ch=%d:proto=%s:inplace=%d:root=1", ch, pr,
                         ip);
                add(s);
            }
            snprintf(s, sizeof s, "ar_direct:n=2:ch=%d:proto=%s:cpc=3", ch, pr);
            add(s);
            snprintf(s, sizeof s, "ar_direct1:n=2:ch=%d:proto=%s", ch, pr);
            add(s);
            snprintf(s, sizeof s, "ar_ring:n=2:ch=%d:proto=%s", ch, pr);
            add(s);
            snprintf(s, sizeof s, "rs_ring:n=2:ch=%d:proto=%s", ch, pr);
            add(s);
            snprintf(s, sizeof s, "a2a_direct:n=2:ch=%d:proto=%s", ch, pr);
            add(s);
            snprintf(s, sizeof s, "reduce_chain:n=2:ch=%d:proto=%s:root=0", ch, pr);
            add(s);
            snprintf(s, sizeof s, "ar_staged:n=2:ch=%d:proto=%s", ch, pr);
            add(s);
        }
    }
    /* One communicator for all of them: they share connections, as in an application. */
    EmuComm em;
    std::vector<const weft_algo *> v(owned.begin(), owned.end());
    weft_rt_cfg c = tiny_cfg();
    /* Slices smaller than the slots: chunks that fit a slot still cross in pieces. */
    c.slot_bytes[WEFT_RT_PROTO_SIMPLE] = 1024;
    c.slice_bytes[WEFT_RT_PROTO_SIMPLE] = 256;
    c.slice_bytes[WEFT_RT_PROTO_LL] = 128;
    em.nthreads = 3;
    if (em.attach(2, v, c) != WEFT_OK) {
        FAILF("attach of generated 2-rank schedules failed\n");
    } else {
        for (size_t i = 0; i < v.size(); i++)
            run_algo(em, (int)i, 1);
    }
    /* More ranks. */
    std::vector<weft_algo *> more;
    for (int nr : {3, 4}) {
        for (const char *pr : {"Simple", "LL"}) {
            const char *specs[] = {"ar_ring",      "ag_ring",    "ag_direct",
                                   "rs_ring",      "a2a_direct", "bcast_chain",
                                   "reduce_chain", "ar_oneshot", "ar_staged"};
            for (const char *sp : specs) {
                snprintf(s, sizeof s, "%s:n=%d:ch=2:proto=%s:root=%d", sp, nr, pr, nr - 1);
                gen_params p;
                gen_parse(s, &p);
                weft_algo *a = gen_algo(&p);
                if (a)
                    more.push_back(a);
                else
                    FAILF("gen_algo(%s) failed\n", s);
            }
        }
        EmuComm e2;
        std::vector<const weft_algo *> w;
        for (weft_algo *a : more)
            if (a->ngpus == nr) w.push_back(a);
        e2.nthreads = 2;
        if (e2.attach(nr, w, c) != WEFT_OK)
            FAILF("attach of %d-rank schedules failed\n", nr);
        else
            for (size_t i = 0; i < w.size(); i++)
                run_algo(e2, (int)i, 0);
    }
    for (weft_algo *a : owned)
        weft_algo_free(a);
    for (weft_algo *a : more)
        weft_algo_free(a);
}

static void test_conformance(const char *shared) {
    std::string dir = std::string(shared) + "/conformance";
    const char *sub[] = {"generated", "legacy", "shipped"};
    int nfiles = 0;
    for (const char *sd : sub) {
        std::string d = dir + "/" + sd;
        DIR *dp = opendir(d.c_str());
        if (!dp) {
            FAILF("cannot open %s\n", d.c_str());
            continue;
        }
        std::vector<std::string> files;
        while (struct dirent *de = readdir(dp)) {
            std::string f = de->d_name;
            if (f.size() > 4 && f.substr(f.size() - 4) == ".xml") files.push_back(d + "/" + f);
        }
        closedir(dp);
        std::sort(files.begin(), files.end());
        for (const std::string &f : files) {
            weft_algo *a = nullptr;
            weft_diag *dg = weft_diag_new();
            if (weft_ir_read_file(f.c_str(), &a, dg) != WEFT_OK) {
                FAILF("%s: does not read\n", f.c_str());
                weft_diag_print(dg, stderr, WEFT_SEV_ERROR);
                weft_diag_free(dg);
                continue;
            }
            weft_diag_free(dg);
            EmuComm em;
            em.nthreads = a->ngpus <= 2 ? 3 : (a->ngpus * a->gpus[0].ntbs > 64 ? 1 : 2);
            weft_rt_cfg c = tiny_cfg();
            std::vector<const weft_algo *> v{a};
            if (em.attach(a->ngpus, v, c) != WEFT_OK)
                FAILF("%s: attach failed\n", f.c_str());
            else
                run_algo(em, 0, a->ngpus == 2);
            nfiles++;
            fprintf(stderr, "conformance %s: done\n", f.c_str());
            weft_algo_free(a);
        }
    }
    if (nfiles < 15) FAILF("only %d conformance files ran\n", nfiles);
}

/* ---- the watchdog ----------------------------------------------------------------------- */
/* Two tbs of a rank wait on each other. */
static weft_algo *deadlock_deps(void) {
    weft_algo *a = weft_algo_new("depcycle", WEFT_COLL_ALLREDUCE, 2, 1);
    a->nchannels = 1;
    for (int r = 0; r < 2; r++) {
        a->gpus[r].i_chunks = a->gpus[r].o_chunks = 1;
        weft_tb *t0 = weft_gpu_add_tb(&a->gpus[r], 1 - r, -1, 0);
        weft_tb *t1 = weft_gpu_add_tb(&a->gpus[r], -1, 1 - r, 0);
        weft_step n0 = {WEFT_STEP_NOP, WEFT_BUF_INPUT, WEFT_BUF_INPUT, -1, -1, 0, 1, 0, 1, 21};
        weft_step s0 = {WEFT_STEP_SEND, WEFT_BUF_INPUT, WEFT_BUF_OUTPUT, 0, 0, 1, -1, -1, 0, 22};
        weft_step n1 = {WEFT_STEP_NOP, WEFT_BUF_INPUT, WEFT_BUF_INPUT, -1, -1, 0, 0, 0, 1, 31};
        weft_step r1 = {WEFT_STEP_RRC, WEFT_BUF_INPUT, WEFT_BUF_OUTPUT, 0, 0, 1, -1, -1, 0, 32};
        weft_tb_add_step(t0, &n0);
        weft_tb_add_step(t0, &s0);
        weft_tb_add_step(t1, &n1);
        weft_tb_add_step(t1, &r1);
    }
    a->file = weft_strdup("depcycle.xml");
    return a;
}

static void test_watchdog(void) {
    for (int which = 0; which < 2; which++) {
        weft_algo *a = which == 0 ? gen_deadlock() : deadlock_deps();
        EmuComm em;
        weft_rt_cfg c = tiny_cfg();
        c.timeout_ns = 100 * 1000000ll;
        std::vector<const weft_algo *> v{a};
        if (em.attach(2, v, c) != WEFT_OK || !em.eligible(0)) {
            FAILF("watchdog %d: attach failed: %s\n", which, em.why[0].c_str());
            weft_algo_free(a);
            continue;
        }
        std::vector<char> b[2][3];
        std::vector<std::vector<char *>> bufs(2, std::vector<char *>(3));
        for (int r = 0; r < 2; r++)
            for (int k = 0; k < 3; k++) {
                b[r][k].assign(64, 0);
                bufs[r][k] = b[r][k].data();
            }
        uint64_t t0 = 0;
        {
            struct timespec ts;
            clock_gettime(CLOCK_MONOTONIC, &ts);
            t0 = (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
        }
        weft_result res = em.launch(0, WEFT_DTYPE_FLOAT, WEFT_OP_SUM, 4, 0, bufs);
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        uint64_t ms = (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000 - t0;
        if (res != WEFT_ERR_TIMEOUT) FAILF("watchdog %d: launch returned %d\n", which, res);
        if (ms > 5000) FAILF("watchdog %d: took %llu ms\n", which, (unsigned long long)ms);
        int timed = -1;
        for (int r = 0; r < 2; r++)
            if (em.err[r].code == (which == 0 ? WEFT_RT_WAIT_DATA : WEFT_RT_WAIT_DEP)) timed = r;
        if (timed < 0) {
            FAILF("watchdog %d: no rank recorded the stall (codes %u %u)\n", which, em.err[0].code,
                  em.err[1].code);
        } else {
            char msg[512];
            weft_errrec rec = em.err[timed];
            rec.waited_ns = 200 * 1000000ull; /* pin the text */
            weft_errrec_format(&rec, a, msg, sizeof msg);
            char want[512];
            if (which == 0)
                snprintf(want, sizeof want,
                         "rank %d tb 0 step 0 (deadlock.xml:11): timed out after 200 ms in "
                         "iteration 0 waiting for data from rank %d on channel 0 (message 1; the "
                         "sender has posted 0)",
                         timed, 1 - timed);
            else
                snprintf(want, sizeof want,
                         "rank %d tb %d step 0 (depcycle.xml:%d): timed out after 200 ms in "
                         "iteration 0 waiting for tb %d step 0 (which has not finished it)",
                         timed, rec.tb, rec.tb == 0 ? 21 : 31, 1 - rec.tb);
            if (strcmp(msg, want) != 0)
                FAILF("watchdog %d:\n got  %s\n want %s\n", which, msg, want);
            int other = 1 - timed;
            if (em.err[other].code == 0) FAILF("watchdog %d: rank %d kept running\n", which, other);
        }
        weft_algo_free(a);
    }
}

/* A rank that starts late is not a stall: the watchdog waits until every rank has entered. */
static void test_late_rank(void) {
    gen_params p;
    gen_parse("ar_direct:n=2:ch=2:proto=LL", &p);
    weft_algo *a = gen_algo(&p);
    EmuComm em;
    weft_rt_cfg c = tiny_cfg();
    c.timeout_ns = 50 * 1000000ll;
    std::vector<const weft_algo *> v{a};
    if (em.attach(2, v, c) != WEFT_OK) {
        FAILF("late rank: attach failed\n");
    } else {
        em.start_delay_ms[1] = 300;
        run_case(em, 0, WEFT_DTYPE_FLOAT, WEFT_OP_SUM, 100, 0, 7);
        long hops = em.hop_calls;
        run_case(em, 0, WEFT_DTYPE_FLOAT, WEFT_OP_SUM, 100, 0, 9); /* on the one-hop kernel */
        if (em.hop_calls == hops) FAILF("late rank: the one-hop kernel did not run\n");
        em.start_delay_ms[1] = 0;
        run_case(em, 0, WEFT_DTYPE_INT32, WEFT_OP_MAX, 1000, 0, 8);
    }
    weft_algo_free(a);
}

/* The one-hop kernel's watchdog: ranks that disagree on a pair's call count (as ranks running
 * different calls would) wait for each other's lines; once both have entered the call, the
 * first to give up records what it waited for and every rank stops, within the timeout. */
static void test_hop_watchdog(void) {
    gen_params p;
    gen_parse("ar_oneshot:n=4:ch=1:proto=LL", &p);
    weft_algo *a = gen_algo(&p);
    EmuComm em;
    weft_rt_cfg c = tiny_cfg();
    c.timeout_ns = 50 * 1000000ll;
    std::vector<const weft_algo *> v{a};
    if (!a || em.attach(4, v, c) != WEFT_OK || !em.eligible(0)) {
        FAILF("one-hop watchdog: attach failed\n");
        weft_algo_free(a);
        return;
    }
    run_case(em, 0, WEFT_DTYPE_FLOAT, WEFT_OP_SUM, 10, 0, 8);
    if (em.hop_calls != 1) FAILF("one-hop watchdog: the first call did not run one-hop\n");
    uint64_t *ctr = (uint64_t *)(void *)(em.win[1] + em.lay.hop_off + weft_hop_ctr_off());
    ctr[2] += 1; /* rank 1 (CTA 0) counts one call more with rank 2 than rank 2 with it */
    std::vector<std::vector<float>> b(4, std::vector<float>(20, 1.0f));
    std::vector<std::vector<char *>> bufs(4, std::vector<char *>(3));
    for (int r = 0; r < 4; r++)
        bufs[r][0] = (char *)b[r].data(), bufs[r][1] = (char *)(b[r].data() + 10),
        bufs[r][2] = nullptr;
    em.hop = 1;
    auto t0 = std::chrono::steady_clock::now();
    weft_result res = em.launch(0, WEFT_DTYPE_FLOAT, WEFT_OP_SUM, 10, 0, bufs);
    double ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    char msg[1024] = "";
    for (int r = 0; r < 4 && !msg[0]; r++)
        if (em.err[r].code == WEFT_RT_WAIT_DATA) weft_errrec_format(&em.err[r], a, msg, sizeof msg);
    if (res != WEFT_ERR_TIMEOUT || !strstr(msg, "waiting for data from rank") || ms > 5000)
        FAILF("one-hop watchdog: %s after %.0f ms, record \"%s\"\n", weft_result_str(res), ms, msg);
    weft_algo_free(a);
}

/* Counters that start just below their 2^32 wraps (weft_rt_cfg.start_calls, start_msgs): LL
 * flags stay unique across the wrap of their 32 bits (a flag of 0 would match lines never
 * written), and the call epoch in the upper half of progress and direct-transfer words wraps to
 * 0 without a waiter taking a finished call's word for a later one. Calls as written,
 * collapsed, mixed, with and without direct transfers. */
static void test_wrap(void) {
    std::vector<weft_algo *> owned;
    for (const char *spec : {"ar_direct:n=2:ch=2:proto=LL", "ar_direct:n=2:ch=2:proto=Simple",
                             "ar_oneshot:n=4:ch=1:proto=LL", "ag_ring:n=4:ch=1:proto=LL",
                             "ar_staged:n=3:ch=1:proto=Simple"}) {
        gen_params p;
        gen_parse(spec, &p);
        if (weft_algo *a = gen_algo(&p)) owned.push_back(a);
    }
    for (weft_algo *a : owned)
        for (int which = 0; which < 2; which++) {
            EmuComm em;
            weft_rt_cfg c = tiny_cfg();
            if (which == 0)
                c.start_msgs = 0xffffffffull - 5;
            else
                c.start_calls = 0xffffffffull - 5, c.start_msgs = 0xfffffff0ull;
            std::vector<const weft_algo *> v{a};
            if (em.attach(a->ngpus, v, c) != WEFT_OK || !em.eligible(0)) {
                FAILF("%s: attach failed\n", a->name);
                continue;
            }
            for (uint32_t i = 0; i < 12; i++)
                run_case(em, 0, WEFT_DTYPE_INT32, WEFT_OP_SUM, 1 + 37 * i, 0, 100 + i);
            /* run_case sends some calls to the one-hop kernel (its own counters, below) */
            uint64_t interp = 12 - (uint64_t)em.hop_calls;
            if (which == 1) {
                uint64_t v0 = em.prog[0][0][0].v;
                if (v0 >> 32 != ((c.start_calls + interp) & 0xffffffffull)) /* mod 2^32 */
                    FAILF("%s: after the wrap the first tb's progress is %#llx\n", a->name,
                          (unsigned long long)v0);
            }
            /* the one-hop kernel's count of calls with rank 1 (CTA 0 of rank 0) crossed the
             * flags' wrap (2^32 - 1 calls a cycle) as often as it ran */
            if (em.hop_calls > 0) {
                uint64_t got;
                memcpy(&got, em.win[0] + em.lay.hop_off + weft_hop_ctr_off() + 8, sizeof got);
                if (got != c.start_calls + (uint64_t)em.hop_calls)
                    FAILF("%s: the one-hop count of pair (0, 1) is %#llx after %ld calls\n",
                          a->name, (unsigned long long)got, em.hop_calls);
            } else if (a->proto == WEFT_PROTO_LL && a->ngpus == 2) {
                FAILF("%s: no call ran on the one-hop kernel\n", a->name);
            }
        }
    for (weft_algo *a : owned)
        weft_algo_free(a);
}

#ifdef WEFT_TEST_REGISTRY
/* The algorithm library (the .weft sources of algorithms/), instantiated by the registry for 2 and
 * 4 ranks as libweft_nccl.so does, run like any schedule. */
static void test_library(const char *dir) {
    weft_registry *base = nullptr;
    weft_diag *d = weft_diag_new();
    if (weft_registry_new(&base) != WEFT_OK || weft_registry_load(base, dir, d) != WEFT_OK) {
        FAILF("library %s: not loaded\n", dir);
        weft_diag_print(d, stderr, WEFT_SEV_ERROR);
    } else {
        for (int nr : {2, 4}) {
            weft_registry *r = nullptr;
            if (weft_registry_for_ranks(base, nr, &r, d) != WEFT_OK) {
                FAILF("library: no %d-rank instances\n", nr);
                continue;
            }
            std::vector<const weft_algo *> v;
            for (size_t i = 0; i < weft_registry_size(r); i++)
                v.push_back(weft_registry_get(r, i));
            EmuComm em;
            em.nthreads = 2;
            weft_rt_cfg c = tiny_cfg();
            if (em.attach(nr, v, c) != WEFT_OK) {
                FAILF("library: attach of %d-rank instances failed\n", nr);
            } else {
                for (size_t i = 0; i < v.size(); i++) {
                    if (!weft_coll_runnable(v[i]->coll)) continue;
                    run_algo(em, (int)i, 0);
                }
                fprintf(stderr, "library: %zu %d-rank instances done\n", v.size(), nr);
            }
            weft_registry_free(r);
        }
    }
    weft_registry_free(base);
    weft_diag_free(d);
}
#endif

int main(int argc, char **argv) {
    int quick = argc > 1 && strcmp(argv[1], "--quick") == 0;
    if (argc > 1 && strcmp(argv[1], "--watchdog") == 0) {
        for (int i = 0; i < 20 && !failures; i++)
            test_watchdog();
        return failures ? 1 : 0;
    }
    test_watchdog();
    test_late_rank();
    test_hop_watchdog();
    test_wrap();
    test_generated();
    test_ll128_lanes();
    const char *shared = getenv("WEFT_SHARED_DIR");
#ifdef WEFT_TEST_REGISTRY
    if (!quick && argc > 2 && strcmp(argv[1], "--library") == 0) test_library(argv[2]);
#endif
    if (!quick) {
        if (shared && *shared)
            test_conformance(shared);
        else
            fprintf(stderr, "WEFT_SHARED_DIR not set: conformance schedules not run\n");
    }
    if (failures)
        fprintf(stderr, "%d failure(s)\n", failures);
    else
        fprintf(stderr,
                "all %ld emulated calls match (%ld with direct transfers, %ld with groups of "
                "several CTAs, %ld with fused receives, %ld with collapsed ranks, %ld of them "
                "mixed, %ld on the one-hop kernel; %ld float calls bit for bit as written, %ld "
                "of them one-hop)\n",
                tally.cases, tally.direct, tally.groups, tally.fused, tally.collapsed, tally.mixed,
                tally.hop, norder, nhop_order);
    if (!failures &&
        (tally.direct == 0 || tally.groups == 0 || tally.fused == 0 || tally.collapsed == 0 ||
         tally.mixed == 0 || norder == 0 || tally.hop == 0 || (!quick && nhop_order == 0))) {
        fprintf(stderr, "direct transfers, groups, fused receives, collapsed ranks or the one-hop "
                        "kernel never ran\n");
        failures++;
    }
    return failures ? 1 : 0;
}
