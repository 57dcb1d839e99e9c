/* test_phase.c — phases across nodes: every cut of the library's and the corpus's schedules, for
 * regular and irregular node maps, is proven by the verifier and runs correctly on the CPU
 * executor in every mode, type and count; the phase counts of the two-level files are what they
 * are built for; and cuts that reorder a transfer, misnumber a message, split a message across
 * phases or deadlock a phase are rejected.
 *   test_phase ALGORITHMS_DIR     (the conformance corpus from WEFT_SHARED_DIR, when present) */
#include "check.h"
#include "gen.h"
#include "weft_compiler.h"
#include "weft_ir.h"

#include <stdlib.h>
#include <string.h>

static const char *algo_dir;
static int ncuts, nruns;

/* The library file compiled with defs; the two-level files with SERVE=1 too: these tests are
 * about cuts of every node shape, not about which shapes the library serves by default. */
static weft_algo *compile(const char *file, const char *defs) {
    char path[1024], buf[256], *d[16];
    size_t nd = 0;
    snprintf(path, sizeof path, "%s/%s.weft", algo_dir, file);
    snprintf(buf, sizeof buf, "%s%s", defs, strstr(file, "_hierarchical") ? " SERVE=1" : "");
    for (char *t = strtok(buf, " "); t && nd < 16; t = strtok(NULL, " "))
        d[nd++] = t;
    weft_cc_options o = {(const char *const *)d, nd, NULL, 0};
    weft_algo *a = NULL;
    weft_diag *dg = weft_diag_new();
    if (weft_cc_compile_file(path, &o, &a, dg) != WEFT_OK) {
        fprintf(stderr, "%s %s: does not compile\n", file, defs);
        weft_diag_print(dg, stderr, WEFT_SEV_NOTE);
        check_failures++;
    }
    weft_diag_free(dg);
    return a;
}

static int32_t *blocked(int32_t n, int32_t g) {
    int32_t *v = malloc((size_t)n * sizeof *v);
    for (int32_t r = 0; r < n; r++)
        v[r] = r / g;
    return v;
}

/* The joined phases on the executor: every mode, a few counts (below, at and past k), types and
 * ops, round robin and random interleavings, bounded FIFOs. */
static void run_phased(const char *what, const weft_algo *a, const weft_algo *j) {
    static const struct {
        weft_dtype t;
        weft_redop op;
    } tops[] = {{WEFT_DTYPE_FLOAT, WEFT_OP_SUM},
                {WEFT_DTYPE_INT8, WEFT_OP_MIN},
                {WEFT_DTYPE_BFLOAT16, WEFT_OP_PROD},
                {WEFT_DTYPE_UINT64, WEFT_OP_AVG}};
    int32_t k = weft_algo_chunks_per_seg(a);
    int64_t counts[] = {1, (int64_t)k + 1, 3 * (int64_t)k + 5};
    weft_diag *d = weft_diag_new();
    int i = 0;
    for (int mode = 0; mode < 2; mode++) {
        if (mode == 0 ? !a->inplace : !a->outofplace) continue;
        for (size_t c = 0; c < 3; c++)
            for (size_t t = 0; t < 4; t++, i++) {
                weft_exec_opts o;
                weft_exec_opts_init(&o);
                o.count = counts[c];
                o.dtype = tops[t].t;
                o.op = tops[t].op;
                o.inplace = (uint8_t)(mode == 0);
                o.seed = (uint64_t)i + 7;
                o.sched_seed = (uint64_t)(i % 3);
                o.fifo_slots = i % 2 ? 2 : 0;
                weft_diag_clear(d);
                nruns++;
                if (weft_ir_exec(j, &o, d, NULL) != WEFT_OK) {
                    fprintf(stderr, "%s: phased run %s count %lld %s %s: wrong\n", what,
                            mode ? "out-of-place" : "in-place", (long long)o.count,
                            weft_dtype_name(o.dtype), weft_redop_name(o.op));
                    weft_diag_print(d, stderr, WEFT_SEV_NOTE);
                    check_failures++;
                }
            }
    }
    weft_diag_free(d);
}

/* Cuts a for node[], proves the cut and runs it; returns the cut (owned by the caller). */
static weft_phased *cut_and_prove(const char *what, const weft_algo *a, const int32_t *node) {
    weft_diag *d = weft_diag_new();
    weft_phased *p = NULL;
    weft_algo *j = NULL;
    ncuts++;
    if (weft_phase_cut(a, node, &p, d) != WEFT_OK) {
        fprintf(stderr, "%s: cut failed\n", what);
        weft_diag_print(d, stderr, WEFT_SEV_NOTE);
        check_failures++;
        goto done;
    }
    weft_verify_summary sum;
    if (weft_phase_verify(a, p, NULL, d, &sum) != WEFT_OK) {
        fprintf(stderr, "%s: the cut does not verify\n", what);
        weft_diag_print(d, stderr, WEFT_SEV_NOTE);
        check_failures++;
    }
    weft_verify_summary_free(&sum);
    /* every phase keeps the schedule's shape; staging follows the original scratch */
    for (int32_t ph = 0; ph < p->nphases; ph++) {
        CHECK(p->gpu[ph]->coll == a->coll && p->gpu[ph]->ngpus == a->ngpus);
        CHECK(p->gpu[ph]->nchunksperloop == a->nchunksperloop && p->gpu[ph]->proto == a->proto);
        for (int32_t r = 0; r < a->ngpus; r++)
            CHECK(p->gpu[ph]->gpus[r].s_chunks >= a->gpus[r].s_chunks);
    }
    if (weft_phase_join(p, &j, d) != WEFT_OK) {
        fprintf(stderr, "%s: join failed\n", what);
        check_failures++;
        goto done;
    }
    run_phased(what, a, j);
done:
    weft_algo_free(j);
    weft_diag_free(d);
    return p;
}

/* ---- the library --------------------------------------------------------------------------- */
static void hierarchical(void) {
    static const struct {
        int32_t n, g, c;
    } shapes[] = {{4, 2, 1},  {6, 2, 1},  {8, 2, 1}, {8, 4, 1}, {12, 4, 1},
                  {16, 4, 1}, {16, 8, 1}, {8, 4, 2}, {6, 3, 1}, {4, 1, 1}};
    for (size_t i = 0; i < sizeof shapes / sizeof *shapes; i++) {
        int32_t n = shapes[i].n, g = shapes[i].g, nodes = n / g;
        char defs[64], what[96];
        snprintf(defs, sizeof defs, "N=%d G=%d C=%d", n, g, shapes[i].c);
        weft_algo *a = compile("allreduce_hierarchical", defs);
        int32_t *node = blocked(n, g);
        snprintf(what, sizeof what, "allreduce_hierarchical %s", defs);
        weft_phased *p = a ? cut_and_prove(what, a, node) : NULL;
        if (p) {
            /* a ring reduce-scatter and a ring all-gather across nodes: NODES-1 hops each */
            CHECK(p->nphases == 2 * nodes - 1);
            CHECK(p->staged_local == 0);
            for (int32_t ph = 0; ph + 1 < p->nphases; ph++) {
                /* every GPU of a node talks to one GPU of another node per hop */
                CHECK(p->nxfers[ph] == n);
                for (int32_t x = 0; x < p->nxfers[ph]; x++)
                    CHECK(p->xfers[ph][x].dst % g == p->xfers[ph][x].src % g);
            }
        }
        weft_phased_free(p);
        weft_algo_free(a);
        if (shapes[i].c == 1 && nodes >= 2 && g >= 2) {
            snprintf(defs, sizeof defs, "N=%d G=%d", n, g);
            a = compile("alltoall_hierarchical", defs);
            snprintf(what, sizeof what, "alltoall_hierarchical %s", defs);
            p = a ? cut_and_prove(what, a, node) : NULL;
            if (p) {
                /* gather inside the node, one exchange between nodes, deliver */
                CHECK(p->nphases == 2);
                CHECK(p->nxfers[0] == n * (nodes - 1));
                for (int32_t x = 0; x < p->nxfers[0]; x++)
                    CHECK(p->xfers[0][x].cnt == g);
            }
            weft_phased_free(p);
            weft_algo_free(a);
        }
        free(node);
    }
}

/* Files written for one fully connected node still cut correctly on any node map (slowly). */
static void others(void) {
    static const struct {
        const char *file, *defs;
        int32_t g;
    } cases[] = {
        {"allreduce_ring", "N=8 SERVE=1", 4},
        {"allreduce_ring", "N=8 SERVE=1 C=2", 2},
        {"allgather_ring", "N=8 SERVE=1", 4},
        {"reducescatter_ring", "N=6 SERVE=1", 2},
        {"broadcast_chain", "N=6 SERVE=1 ROOT=2", 3},
        {"broadcast_tree", "N=8 ROOT=5 SERVE=1", 4},
        {"reduce_tree", "N=8 ROOT=5", 4},
        {"reduce_chain", "N=6 ROOT=1", 2},
        {"gather_direct", "N=6 ROOT=4", 2},
        {"scatter_direct", "N=6 ROOT=0", 3},
        {"alltoall_direct", "N=4 SERVE=1", 2},
        {"alltoall_staged", "N=4 SERVE=1", 2},
        {"allreduce_allpairs_oneshot", "N=4 SERVE=1", 2},
        {"allreduce_allpairs_twoshot", "N=4 SERVE=1", 2},
        {"reducescatter_direct", "N=4 SERVE=1", 2},
        {"allgather_direct", "N=6", 3},
        {"allreduce_direct_ll", "N=2", 1},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        weft_algo *a = compile(cases[i].file, cases[i].defs);
        if (a == NULL) continue;
        char what[128];
        snprintf(what, sizeof what, "%s %s on nodes of %d", cases[i].file, cases[i].defs,
                 cases[i].g);
        int32_t *node = blocked(a->ngpus, cases[i].g);
        weft_phased *p = cut_and_prove(what, a, node);
        if (p) CHECK(p->nphases >= 2 && p->staged > 0);
        weft_phased_free(p);
        free(node);
        weft_algo_free(a);
    }
}

/* Node maps NCCL would never produce still cut correctly: interleaved and uneven nodes, and a
 * single node (one phase, nothing staged). */
static void node_maps(void) {
    weft_algo *a = compile("allreduce_hierarchical", "N=8 G=4");
    if (a == NULL) return;
    int32_t inter[8] = {0, 1, 0, 1, 0, 1, 0, 1}, uneven[8] = {5, 5, 5, 9, 9, 2, 2, 2},
            one[8] = {3, 3, 3, 3, 3, 3, 3, 3};
    weft_phased *p = cut_and_prove("allreduce_hierarchical N=8 G=4, interleaved nodes", a, inter);
    if (p) CHECK(p->nnodes == 2 && p->nphases > 3);
    weft_phased_free(p);
    p = cut_and_prove("allreduce_hierarchical N=8 G=4, uneven nodes", a, uneven);
    if (p) CHECK(p->nnodes == 3 && p->node[0] == 0 && p->node[3] == 1 && p->node[7] == 2);
    weft_phased_free(p);
    p = cut_and_prove("allreduce_hierarchical N=8 G=4, one node", a, one);
    if (p) {
        CHECK(p->nphases == 1 && p->staged == 0 && p->nnodes == 1);
        /* one phase is the schedule itself */
        char why[128];
        weft_algo *c = weft_algo_clone(p->gpu[0]);
        CHECK(c && weft_algo_equal(c, a, why, sizeof why));
        weft_algo_free(c);
    }
    weft_phased_free(p);
    weft_algo_free(a);
}

/* ---- the corpus: every file, for every node size that divides its rank count ------------------
 */
static void corpus(void) {
    size_t n = 0;
    char **files = gen_corpus(&n);
    if (files == NULL) {
        printf("conformance corpus not found: its cuts are skipped\n");
        return;
    }
    for (size_t i = 0; i < n; i++) {
        weft_algo *a = NULL;
        if (weft_ir_read_file(files[i], &a, NULL) != WEFT_OK) {
            fprintf(stderr, "%s: unreadable\n", files[i]);
            check_failures++;
            continue;
        }
        for (int32_t g = 1; g < a->ngpus; g++) {
            if (a->ngpus % g) continue;
            char what[1100];
            snprintf(what, sizeof what, "%s on nodes of %d", files[i], g);
            int32_t *node = blocked(a->ngpus, g);
            weft_phased_free(cut_and_prove(what, a, node));
            free(node);
        }
        weft_algo_free(a);
    }
    gen_free_list(files, n);
}

/* ---- cuts the verifier must reject ------------------------------------------------------------
 */
static int64_t rejected(const char *what, const weft_algo *a, const weft_phased *p,
                        weft_verify_class cls) {
    weft_diag *d = weft_diag_new();
    weft_verify_summary sum;
    weft_result r = weft_phase_verify(a, p, NULL, d, &sum);
    int64_t n = sum.errors[cls];
    if (r != WEFT_ERR_INPUT || weft_diag_count(d, WEFT_SEV_ERROR) == 0) {
        fprintf(stderr, "%s: accepted\n", what);
        check_failures++;
    } else if (getenv("TEST_PHASE_VERBOSE")) {
        printf("%s:\n", what);
        weft_diag_print(d, stdout, WEFT_SEV_NOTE);
    }
    weft_verify_summary_free(&sum);
    weft_diag_free(d);
    return n;
}

static int has_error(const weft_algo *a, const weft_phased *p, const char *text) {
    weft_diag *d = weft_diag_new();
    weft_phase_verify(a, p, NULL, d, NULL);
    int found = 0;
    for (size_t i = 0; i < weft_diag_size(d); i++)
        if (weft_diag_get(d, i)->sev == WEFT_SEV_ERROR && strstr(weft_diag_get(d, i)->msg, text))
            found = 1;
    weft_diag_free(d);
    return found;
}

static void bad_cuts(void) {
    weft_algo *a = compile("allreduce_hierarchical", "N=8 G=4");
    if (a == NULL) return;
    int32_t *node = blocked(8, 4);
    weft_diag *d = weft_diag_new();
    weft_phased *p = NULL;

    /* 1. A transfer one network phase late: GPU phase 1 reads staging before it arrives. */
    CHECK(weft_phase_cut(a, node, &p, d) == WEFT_OK && p->nphases == 3);
    weft_phase_xfer *x1 = realloc(p->xfers[1], (size_t)(p->nxfers[1] + p->nxfers[0]) * sizeof *x1);
    CHECK(x1 != NULL);
    p->xfers[1] = x1;
    memcpy(x1 + p->nxfers[1], p->xfers[0], (size_t)p->nxfers[0] * sizeof *x1);
    p->nxfers[1] += p->nxfers[0];
    p->nxfers[0] = 0;
    CHECK(rejected("a transfer one phase late", a, p, WEFT_VERIFY_POSTCONDITION) > 0);
    weft_phased_free(p);

    /* 2. A transfer to the wrong place: two ranks' staging swapped. */
    CHECK(weft_phase_cut(a, node, &p, d) == WEFT_OK);
    int32_t t = p->xfers[0][0].doff;
    p->xfers[0][0].doff = p->xfers[0][0].doff + 1;
    (void)t;
    CHECK(rejected("a transfer into the wrong staging chunk", a, p, WEFT_VERIFY_POSTCONDITION) > 0);
    weft_phased_free(p);

    /* 3. Numbering: a message between nodes received in the phase of its send. */
    CHECK(weft_phase_cut(a, node, &p, d) == WEFT_OK);
    for (int64_t s = 0; s < p->nsteps; s++)
        if (p->step_phase[s] == 1) p->step_phase[s] = 0;
    CHECK(has_error(a, p, "the phase of the send of its message, on another node"));
    weft_phased_free(p);

    /* 4. A message split across GPU phases: rank 4's first tb's last step (it receives from
     *    rank 7 and sends to rank 5 inside node 1) moved to the front of GPU phase 1. */
    CHECK(weft_phase_cut(a, node, &p, d) == WEFT_OK);
    {
        weft_tb *t0 = &p->gpu[0]->gpus[4].tbs[0];
        weft_step last = t0->steps[t0->nsteps - 1];
        CHECK(weft_step_flags(last.type) & WEFT_STEP_F_RECV);
        t0->nsteps--;
        weft_gpu *g1 = &p->gpu[1]->gpus[4];
        int32_t lane = weft_phased_lane(p, 0, 4, 0), at = 0;
        for (int32_t r = 0; r < 4; r++)
            at += p->gpu[1]->gpus[r].ntbs;
        int32_t ntotal = 0;
        for (int32_t r = 0; r < 8; r++)
            ntotal += p->gpu[1]->gpus[r].ntbs;
        weft_tb *t1 = weft_gpu_add_tb(g1, t0->send, t0->recv, t0->chan);
        CHECK(t1 && weft_tb_add_step(t1, &last) == 0);
        int32_t *ln = realloc(p->lane[1], (size_t)(ntotal + 1) * sizeof *ln);
        CHECK(ln != NULL);
        memmove(ln + at + g1->ntbs, ln + at + g1->ntbs - 1,
                (size_t)(ntotal - at - g1->ntbs + 1) * sizeof *ln);
        ln[at + g1->ntbs - 1] = lane;
        p->lane[1] = ln;
        CHECK(has_error(a, p, "GPU phase 0: rank 5"));
        CHECK(has_error(a, p, "GPU phase 1: rank 4 tb 1 step 0: receives"));
    }
    weft_phased_free(p);

    /* 5. A GPU phase that deadlocks: inside node 0 in phase 0, every rank's first send of the
     *    intra-node ring waits for the end of the ring it receives (a cycle around the node). */
    CHECK(weft_phase_cut(a, node, &p, d) == WEFT_OK);
    for (int32_t r = 0; r < 4; r++) {
        weft_gpu *g = &p->gpu[0]->gpus[r];
        weft_step *snd = NULL;
        int32_t rt = -1, rs = -1;
        for (int32_t tb = 0; tb < g->ntbs; tb++)
            for (int32_t s = 0; s < g->tbs[tb].nsteps; s++) {
                weft_step *x = &g->tbs[tb].steps[s];
                if (x->type == WEFT_STEP_SEND && snd == NULL) snd = x;
                if (x->type == WEFT_STEP_RRC && rt < 0) rt = tb, rs = s;
            }
        CHECK(snd != NULL && rt >= 0);
        if (snd == NULL || rt < 0) continue;
        snd->depid = rt;
        snd->deps = rs;
        g->tbs[rt].steps[rs].hasdep = 1;
    }
    CHECK(rejected("a GPU phase that deadlocks", a, p, WEFT_VERIFY_DEADLOCK) > 0);
    weft_phased_free(p);

    /* 6. The wrong rank count, and a message between nodes left in a GPU phase (a map that
     *    claims two nodes are one). */
    CHECK(weft_phase_cut(a, node, &p, d) == WEFT_OK);
    weft_algo *b = compile("allreduce_hierarchical", "N=4 G=2");
    if (b) CHECK(has_error(b, p, "the cut is for 8 ranks"));
    weft_algo_free(b);
    weft_phased_free(p);
    int32_t one[8] = {0, 0, 0, 0, 0, 0, 0, 0};
    CHECK(weft_phase_cut(a, one, &p, d) == WEFT_OK && p->nphases == 1);
    for (int32_t r = 4; r < 8; r++)
        p->node[r] = 1;
    CHECK(has_error(a, p, "only a network phase can carry that message"));
    weft_phased_free(p);

    weft_diag_free(d);
    free(node);
    weft_algo_free(a);
}

/* A schedule that cannot complete cannot be cut. */
static void stalled(void) {
    weft_algo *a = weft_algo_new("stall", WEFT_COLL_ALLREDUCE, 2, 1);
    a->nchannels = 1;
    for (int32_t r = 0; r < 2; r++) {
        a->gpus[r].i_chunks = a->gpus[r].o_chunks = 1;
        weft_tb *tb = weft_gpu_add_tb(&a->gpus[r], 1 - r, 1 - r, 0);
        weft_step s = {WEFT_STEP_RECV, WEFT_BUF_INPUT, WEFT_BUF_OUTPUT, 0, 0, 1, -1, -1, 0, 0};
        weft_tb_add_step(tb, &s);
        s.type = WEFT_STEP_SEND;
        weft_tb_add_step(tb, &s);
    }
    int32_t node[2] = {0, 1};
    weft_phased *p = NULL;
    weft_diag *d = weft_diag_new();
    CHECK(weft_phase_cut(a, node, &p, d) == WEFT_ERR_INPUT && p == NULL);
    CHECK(weft_diag_size(d) == 1 && strstr(weft_diag_get(d, 0)->msg, "cannot complete"));
    weft_diag_free(d);
    weft_algo_free(a);
}

int main(int argc, char **argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: test_phase ALGORITHMS_DIR\n");
        return 2;
    }
    algo_dir = argv[1];
    hierarchical();
    others();
    node_maps();
    bad_cuts();
    stalled();
    corpus();
    printf("%d cuts proven, %d phased executor runs\n", ncuts, nruns);
    CHECK_DONE();
}
