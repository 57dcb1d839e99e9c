/* test_multinode.cc — weft across nodes without a GPU: the fake libnccl groups its ranks into
 * nodes (ncclTeamLsa) and moves the bytes of ncclSend/ncclRecv; the registry instantiates the
 * library's and the corpus's multi-node schedules for that node structure and cuts them into
 * phases; each GPU phase runs on the interpreter's host emulation (every rank at once, as every
 * node's kernel would), each network phase through the runtime's own NCCL group of
 * ncclSend/ncclRecv between the ranks' staging areas; every output is compared with the
 * collective's definition. Also: the node structure NCCL reports, weft's own communicator, and
 * one call's sequence of kernels and NCCL groups.
 *   test_multinode ALGORITHMS_DIR   (corpus from WEFT_SHARED_DIR when present) */
#include "emu.h"
#include "refcheck.h"
#include "weft_runtime.h"

extern "C" {
#include "multinode_rt_internal.h"
#include "weft_select.h"
void fake_nccl_set(const char *key, long value);
char *fake_nccl_take_log(void);
}

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <string>
#include <vector>

using namespace refcheck;

static int failures = 0;
static long ncases = 0;
#define FAILF(...)                                                                                 \
    do {                                                                                           \
        fprintf(stderr, __VA_ARGS__);                                                              \
        failures++;                                                                                \
    } while (0)

static weft_nccl_api fake_api() {
    weft_nccl_api t;
    memset(&t, 0, sizeof t);
#define WEFT_X_(ret, name, args) t.name = nccl##name;
    WEFT_NCCL_FUNCS(WEFT_X_)
#undef WEFT_X_
    return t; /* TeamLsa NULL: weft_mn_query finds the fake's ncclTeamLsa in the process */
}

static weft_rt_cfg small_cfg() {
    weft_rt_cfg c;
    memset(&c, 0, sizeof c);
    c.nslots[WEFT_RT_PROTO_SIMPLE] = 4;
    c.slot_bytes[WEFT_RT_PROTO_SIMPLE] = 1024;
    c.nslots[WEFT_RT_PROTO_LL] = 4;
    c.slot_bytes[WEFT_RT_PROTO_LL] = 2048;
    c.nslots[WEFT_RT_PROTO_LL128] = 4;
    c.slot_bytes[WEFT_RT_PROTO_LL128] = 2048;
    c.nthreads = 2;
    c.timeout_ns = 60ll * 1000000000ll; /* a hang is a failure, never a stuck test */
    return c;
}

/* A communicator of n ranks in nodes of g: the fake's communicators and weft's own. */
struct Comms {
    weft_nccl_api api = fake_api();
    std::vector<ncclComm_t> app, net;
    int n = 0;
    Comms(int nranks, int g) : n(nranks) {
        fake_nccl_set("gpus_per_node", g);
        fake_nccl_set("p2p_data", 1);
        app.assign((size_t)n, nullptr);
        net.assign((size_t)n, nullptr);
        if (ncclCommInitAll(app.data(), n, nullptr) != ncclSuccess) FAILF("CommInitAll failed\n");
        weft_diag *d = weft_diag_new();
        if (weft_mn_split(&api, n, app.data(), net.data(), d) != WEFT_OK)
            FAILF("weft_mn_split failed\n");
        weft_diag_free(d);
    }
    ~Comms() {
        for (int r = 0; r < n; r++) {
            if (net[r]) api.CommDestroy(net[r]);
            if (app[r]) api.CommDestroy(app[r]);
        }
        fake_nccl_set("p2p_data", 0);
        fake_nccl_set("gpus_per_node", 0);
        free(fake_nccl_take_log());
    }
};

/* ---- one call: GPU phases on the emulation, network phases through the fake NCCL ---------- */
static void run_case(Comms &cm, EmuComm &em, std::vector<weft_mn_algo> &mn, weft_dtype dt,
                     weft_redop op, size_t count, int inplace, uint32_t seed) {
    const weft_algo *a = mn[0].algo;
    const int n = cm.n;
    const size_t es = (size_t)weft_dtype_size(dt);
    const weft_coll coll = a->coll;
    const int li = weft_coll_large(coll, WEFT_BUF_INPUT),
              lo = weft_coll_large(coll, WEFT_BUF_OUTPUT);
    const size_t ine = (li ? n : 1) * count, oute = (lo ? n : 1) * count;
    const int root = weft_coll_rooted(coll) ? a->root : -1;
    char name[256];
    snprintf(name, sizeof name, "%s on %d ranks %s %s count=%zu %s", a->name, n,
             weft_dtype_name(dt), weft_redop_name(op), count,
             inplace ? "in-place" : "out-of-place");
    std::vector<std::vector<char>> in(n, std::vector<char>(ine * es));
    for (int r = 0; r < n; r++)
        for (size_t e = 0; e < ine; e++)
            put(dt, in[r].data(), e, small_val(seed, r, e, op));
    size_t chunk = weft_mn_chunk_bytes(a, count, (int32_t)es);
    std::vector<std::vector<char>> b1(n), b2(n), scr(n);
    std::vector<std::vector<char *>> bufs(n, std::vector<char *>(3));
    for (int r = 0; r < n; r++) {
        char *ip, *opp;
        if (inplace) {
            b1[r].assign((li || lo ? n : 1) * count * es, (char)0x5A);
            if (li == lo)
                ip = opp = b1[r].data();
            else if (lo)
                opp = b1[r].data(), ip = opp + (size_t)r * count * es;
            else
                ip = b1[r].data(), opp = ip + (size_t)r * count * es;
        } else {
            b1[r].assign(ine * es, 0);
            b2[r].assign(oute * es, (char)0x5A);
            ip = b1[r].data(), opp = b2[r].data();
        }
        memcpy(ip, in[r].data(), ine * es);
        scr[r].assign((size_t)mn[0].gpu[0]->gpus[r].s_chunks * chunk + 1, (char)0x33);
        bufs[r][0] = ip, bufs[r][1] = opp, bufs[r][2] = scr[r].data();
    }
    ncases++;
    weft_diag *d = weft_diag_new();
    for (int32_t ph = 0; ph < mn[0].nphases; ph++) {
        weft_result res = em.launch(mn[0].slot[ph], dt, op, count, inplace, bufs);
        if (res != WEFT_OK) {
            char msg[1024] = "";
            for (int r = 0; r < n; r++)
                if (em.err[r].code) {
                    weft_errrec_format(&em.err[r], em.algos[mn[0].slot[ph]], msg, sizeof msg);
                    break;
                }
            FAILF("%s: GPU phase %d failed: %s %s\n", name, ph, weft_result_str(res), msg);
            weft_diag_free(d);
            return;
        }
        if (ph + 1 == mn[0].nphases) break;
        for (int r = 0; r < n; r++)
            if (weft_mn_net_phase(&cm.api, cm.net[r], &mn[r], ph, scr[r].data(), chunk, nullptr,
                                  d) != WEFT_OK) {
                FAILF("%s: rank %d network phase %d failed\n", name, r, ph);
                weft_diag_print(d, stderr, WEFT_SEV_NOTE);
            }
    }
    weft_diag_free(d);
    free(fake_nccl_take_log());
    int ki = weft_rt_kernel_index(dt, op, weft_coll_reduces(coll));
    std::vector<char> exp;
    for (int r = 0; r < n; r++) {
        if (!expected(coll, n, r, root, count, es, ki, in, exp)) continue;
        for (size_t e = 0; e < oute; e++)
            if (memcmp(bufs[r][1] + e * es, exp.data() + e * es, es) != 0) {
                FAILF("%s: rank %d output element %zu differs (and maybe more)\n", name, r, e);
                return;
            }
        if (!inplace && memcmp(bufs[r][0], in[r].data(), ine * es) != 0)
            FAILF("%s: rank %d changed its input\n", name, r);
    }
}

static const char *const serve_all[] = {"SERVE=1"};

/* Every phased algorithm of a registry for n ranks in nodes of g, run. */
static int run_registry(const weft_registry *base, int n, int g) {
    Comms cm(n, g);
    /* the node structure, as the shim's attach would ask for it */
    for (int r = 0; r < n; r++) {
        int nr = 0, rk = -1, gpn = 0;
        weft_diag *d = weft_diag_new();
        if (weft_mn_query(&cm.api, cm.app[r], &nr, &rk, &gpn, d) != WEFT_OK || nr != n || rk != r ||
            gpn != g)
            FAILF("weft_mn_query on rank %d of %d: %d ranks, rank %d, %d per node\n", r, n, nr, rk,
                  gpn);
        weft_diag_free(d);
    }
    /* every gate open (SERVE=1): the runtime runs every node shape, whichever the library
     * serves by default */
    weft_registry *reg = nullptr;
    weft_diag *d = weft_diag_new();
    if (weft_registry_for_nodes_defines(base, n, g, serve_all, 1, &reg, d) != WEFT_OK)
        FAILF("for_nodes failed\n");
    if (weft_diag_count(d, WEFT_SEV_ERROR)) weft_diag_print(d, stderr, WEFT_SEV_ERROR);
    weft_diag_free(d);
    int nrun = 0;
    for (size_t i = 0; reg && i < weft_registry_size(reg); i++) {
        const weft_algo *a = weft_registry_get(reg, i);
        const weft_phased *p = weft_registry_phases(reg, i);
        if (p == nullptr) {
            FAILF("%s on %d ranks in nodes of %d: no cut\n", a->name, n, g);
            continue;
        }
        std::vector<weft_mn_algo> mn((size_t)n);
        bool ok = true;
        for (int r = 0; r < n; r++)
            ok &= weft_mn_algo_build(a, p, r, &mn[r]) == WEFT_OK;
        if (!ok) {
            FAILF("%s: weft_mn_algo_build failed\n", a->name);
            continue;
        }
        std::vector<const weft_algo *> phases;
        for (int32_t ph = 0; ph < mn[0].nphases; ph++) {
            for (int r = 0; r < n; r++)
                mn[r].slot[ph] = ph;
            phases.push_back(mn[0].gpu[ph]);
        }
        EmuComm em;
        if (em.attach(n, phases, small_cfg()) != WEFT_OK) FAILF("%s: emu attach failed\n", a->name);
        for (int32_t ph = 0; ph < mn[0].nphases; ph++)
            if (!em.eligible(ph))
                FAILF("%s GPU phase %d: the interpreter cannot run it: %s\n", a->name, ph,
                      em.why[ph].c_str());
        const int reduces = weft_coll_reduces(a->coll);
        static const size_t counts[] = {1, 5, 1031};
        uint32_t seed = 3;
        for (int mode = 0; mode < 2; mode++) {
            if (mode == 0 ? !a->outofplace : !a->inplace) continue;
            for (size_t c = 0; c < 3; c++) {
                run_case(cm, em, mn, WEFT_DTYPE_FLOAT, WEFT_OP_SUM, counts[c], mode, seed++);
                run_case(cm, em, mn, WEFT_DTYPE_INT8, reduces ? WEFT_OP_MIN : WEFT_OP_SUM,
                         counts[c], mode, seed++);
                if (c == 2)
                    run_case(cm, em, mn, WEFT_DTYPE_BFLOAT16, reduces ? WEFT_OP_PROD : WEFT_OP_SUM,
                             counts[c], mode, seed++);
            }
        }
        for (int r = 0; r < n; r++)
            weft_mn_algo_free(&mn[r]);
        nrun++;
    }
    weft_registry_free(reg);
    return nrun;
}

/* ---- the pieces on their own ------------------------------------------------------------- */
static void test_shapes(void) {
    char why[256];
    if (weft_mn_gpus_per_node(16, 9, 1, 8, 1, why, sizeof why) != 8) FAILF("16 = 2 x 8\n");
    if (weft_mn_gpus_per_node(8, 3, 3, 8, 1, why, sizeof why) != 8) FAILF("one node\n");
    if (weft_mn_gpus_per_node(2, 1, 0, 1, 1, why, sizeof why) != 1) FAILF("2 x 1\n");
    if (weft_mn_gpus_per_node(12, 5, 0, 8, 1, why, sizeof why) != 0 ||
        !strstr(why, "different numbers of GPUs"))
        FAILF("uneven nodes accepted: %s\n", why);
    if (weft_mn_gpus_per_node(8, 5, 0, 4, 1, why, sizeof why) != 0 || !strstr(why, "n*G"))
        FAILF("misnumbered nodes accepted: %s\n", why);
    if (weft_mn_gpus_per_node(8, 1, 0, 4, 2, why, sizeof why) != 0 || !strstr(why, "consecutive"))
        FAILF("strided team accepted: %s\n", why);
    char w[8][1], *world[8];
    for (int q = 0; q < 8; q++)
        world[q] = w[q];
    weft_mn_peer_table(8, 4, 5, world);
    for (int q = 0; q < 8; q++)
        if (world[q] != (q >= 4 ? w[q] : w[5])) FAILF("peer table entry %d\n", q);
    /* the fake's LSA team of 3 on 8 ranks: weft stays out */
    Comms cm(8, 3);
    int nr, rk, gpn;
    weft_diag *d = weft_diag_new();
    if (weft_mn_query(&cm.api, cm.app[4], &nr, &rk, &gpn, d) != WEFT_ERR_UNSUPPORTED ||
        weft_diag_size(d) != 1 || !strstr(weft_diag_get(d, 0)->msg, "different numbers"))
        FAILF("an LSA team of 3 on 8 ranks was accepted\n");
    weft_diag_free(d);
}

struct Rec {
    std::string log;
};
static weft_result rec_gpu(void *ctx, int32_t slot, cudaStream_t) {
    ((Rec *)ctx)->log += "kernel " + std::to_string(slot) + "\n";
    return WEFT_OK;
}
static void rec_mark(void *ctx, int32_t ph, int net, cudaStream_t) {
    ((Rec *)ctx)->log +=
        std::string(net ? "mark network " : "mark gpu ") + std::to_string(ph) + "\n";
}

/* One call's sequence for one rank: kernels, NCCL groups, marks; a failing send names its phase. */
static void test_sequence(const weft_registry *base) {
    Comms cm(8, 4);
    weft_registry *reg = nullptr;
    if (weft_registry_for_nodes_defines(base, 8, 4, serve_all, 1, &reg, nullptr) != WEFT_OK) return;
    int ai = -1;
    for (size_t i = 0; i < weft_registry_size(reg); i++)
        if (strcmp(weft_registry_get(reg, i)->name, "allreduce_hierarchical") == 0) ai = (int)i;
    if (ai < 0) {
        FAILF("no allreduce_hierarchical for 8 ranks in nodes of 4\n");
        weft_registry_free(reg);
        return;
    }
    weft_mn_algo m;
    if (weft_mn_algo_build(weft_registry_get(reg, ai), weft_registry_phases(reg, ai), 0, &m) !=
        WEFT_OK)
        FAILF("build failed\n");
    for (int32_t ph = 0; ph < m.nphases; ph++)
        m.slot[ph] = 10 + ph;
    if (m.nphases != 3 || m.nops[0] != 2 || m.nops[1] != 2 || !m.ops[0][0].send ||
        m.ops[0][0].peer != 4 || m.ops[0][1].send || m.ops[0][1].peer != 4)
        FAILF("rank 0 of the 8-rank hierarchical allreduce: %d phases, ops %d %d\n", m.nphases,
              m.nops[0], m.nops[1]);
    std::vector<char> scratch((size_t)m.gpu[0]->gpus[0].s_chunks * 64);
    Rec rec;
    weft_diag *d = weft_diag_new();
    int32_t done = -1;
    free(fake_nccl_take_log());
    fake_nccl_set("p2p_data", 0);
    weft_result r = weft_mn_run(&cm.api, cm.net[0], &m, rec_gpu, rec_mark, &rec, scratch.data(), 64,
                                nullptr, &done, d);
    char *log = fake_nccl_take_log();
    char want[512];
    snprintf(want, sizeof want,
             "GroupStart\nSend count=%d peer=4\nRecv count=%d peer=4\nGroupEnd\nGroupStart\n"
             "Send count=%d peer=4\nRecv count=%d peer=4\nGroupEnd\n",
             64 * m.ops[0][0].cnt, 64 * m.ops[0][1].cnt, 64 * m.ops[1][0].cnt,
             64 * m.ops[1][1].cnt);
    if (r != WEFT_OK || done != 5 || strcmp(log, want) != 0)
        FAILF("sequence: result %d, %d phases enqueued, NCCL log:\n%s\nwanted:\n%s\n", (int)r, done,
              log, want);
    if (rec.log != "kernel 10\nmark gpu 0\nmark network 0\nkernel 11\nmark gpu 1\n"
                   "mark network 1\nkernel 12\nmark gpu 2\n")
        FAILF("sequence: %s\n", rec.log.c_str());
    free(log);
    /* a send NCCL refuses (a peer out of range) stops the call at network phase 0, named */
    m.ops[0][0].peer = 99;
    fake_nccl_set("p2p_data", 1);
    weft_diag_clear(d);
    r = weft_mn_run(&cm.api, cm.net[0], &m, rec_gpu, nullptr, &rec, scratch.data(), 64, nullptr,
                    &done, d);
    if (r != WEFT_ERR_NCCL || done != 1 || weft_diag_size(d) != 1 ||
        !strstr(weft_diag_get(d, 0)->msg,
                "network phase 0 of 2 of 'allreduce_hierarchical': ncclSend failed"))
        FAILF("a failing network phase: result %d, %d enqueued\n", (int)r, done);
    m.ops[0][0].peer = 4;
    free(fake_nccl_take_log());
    weft_diag_free(d);
    weft_mn_algo_free(&m);
    weft_registry_free(reg);
}

int main(int argc, char **argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: test_multinode ALGORITHMS_DIR\n");
        return 2;
    }
    std::string paths = argv[1];
    const char *shared = getenv("WEFT_SHARED_DIR");
    std::string corpus = shared ? std::string(shared) + "/conformance" : "";
    if (!corpus.empty()) {
        paths += ":" + corpus + "/generated/hierarchical_allreduce_4gpn_2nodes_1inst_Simple.xml";
        paths += ":" + corpus + "/generated/alltoall_two_step_2nodes_4gpn_Simple.xml";
        paths += ":" + corpus + "/legacy/alltoall_two_step_2nodes_2gpn_Simple.xml";
    }
    weft_registry *base = nullptr;
    weft_diag *d = weft_diag_new();
    if (weft_registry_new(&base) != WEFT_OK ||
        weft_registry_load(base, paths.c_str(), d) != WEFT_OK)
        FAILF("cannot load %s\n", paths.c_str());
    weft_diag_free(d);
    test_shapes();
    test_sequence(base);
    static const int shapes[][2] = {{4, 2}, {8, 4}, {4, 1}, {6, 2}};
    int nalgos = 0;
    for (auto &s : shapes)
        nalgos += run_registry(base, s[0], s[1]);
    /* the library's two files on every shape; the corpus's 8-rank files on 8 ranks, its 4-rank
     * file on both 4-rank shapes */
    int want = 4 * 2 + (corpus.empty() ? 0 : 4);
    if (nalgos != want) FAILF("%d phased algorithms ran, expected %d\n", nalgos, want);
    weft_registry_free(base);
    printf("%d phased algorithms, %ld calls across nodes on the emulation\n", nalgos, ncases);
    if (failures) fprintf(stderr, "%d failure(s)\n", failures);
    return failures ? 1 : 0;
}
