/* test_compiler.c — the compiler API, the golden programs over many rank counts, and random
 * programs: every schedule compiled must verify (weft_ir_verify) and compute the right result
 * on the CPU executor (weft_ir_exec) in every mode it declares. */
#include "check.h"
#include "weft_compiler.h"

#include <stdlib.h>
#include <string.h>

static int verbose;
static int proven;

/* Verifies and CPU-executes a in each declared mode; prints diagnostics on failure. */
static int prove(const weft_algo *a, const char *what) {
    weft_diag *d = weft_diag_new();
    int ok = 1;
    if (a->coll != WEFT_COLL_CUSTOM) {
        weft_verify_opts vo;
        weft_verify_opts_init(&vo);
        if (weft_ir_verify(a, &vo, d, NULL) != WEFT_OK) ok = 0;
        for (int inplace = 0; ok && inplace <= 1; inplace++) {
            if (!(inplace ? a->inplace : a->outofplace)) continue;
            weft_exec_opts eo;
            weft_exec_opts_init(&eo);
            eo.inplace = (uint8_t)inplace;
            eo.count = 1001; /* short last chunks */
            eo.sched_seed = 7;
            eo.fifo_slots = 2;
            if (weft_ir_exec(a, &eo, d, NULL) != WEFT_OK) ok = 0;
        }
    }
    proven += ok;
    if (!ok) {
        fprintf(stderr, "%s: not proven:\n", what);
        weft_diag_print(d, stderr, WEFT_SEV_WARNING);
        char *x = NULL;
        if (verbose && weft_ir_write_string(a, &x) == WEFT_OK) fputs(x, stderr);
        free(x);
    }
    weft_diag_free(d);
    return ok;
}

static weft_algo *compile_file(const char *path, const char **defs, size_t ndefs) {
    weft_cc_options o = {defs, ndefs, NULL, 0};
    weft_diag *d = weft_diag_new();
    weft_algo *a = NULL;
    if (weft_cc_compile_file(path, &o, &a, d) != WEFT_OK) {
        fprintf(stderr, "%s:", path);
        for (size_t i = 0; i < ndefs; i++)
            fprintf(stderr, " -D %s", defs[i]);
        fprintf(stderr, ": does not compile\n");
        weft_diag_print(d, stderr, WEFT_SEV_NOTE);
    }
    weft_diag_free(d);
    return a;
}

/* ---- the golden programs for many shapes --------------------------------------------------- */

static const struct {
    const char *file;
    const char *extra; /* another -D, or NULL */
    int pow2, mult_of_2;
} matrix[] = {
    {"xml_ring_allreduce.weft", NULL, 0, 0},
    {"xml_ring_two_modes.weft", "C=3", 0, 0},
    {"xml_allpairs_allreduce.weft", NULL, 0, 0},
    {"xml_allpairs_hinted.weft", NULL, 0, 0},
    {"xml_recursive_halving_doubling.weft", NULL, 1, 0},
    {"xml_hierarchical_allreduce.weft", "G=2", 0, 1},
    {"xml_allgather_ring.weft", NULL, 0, 0},
    {"xml_allgather_inplace.weft", NULL, 0, 0},
    {"xml_reducescatter_ring.weft", NULL, 0, 0},
    {"xml_alltoall_direct.weft", "K=2", 0, 0},
    {"xml_broadcast_chain.weft", "ROOT=1", 0, 0},
    {"xml_reduce_chain.weft", NULL, 0, 0},
    {"xml_gather_scatter.weft", NULL, 0, 0},
    {"xml_scatter.weft", NULL, 0, 0},
    {"xml_instances.weft", NULL, 0, 0},
    {"xml_fuse_copy.weft", NULL, 0, 0},
    {"xml_fuse_receive.weft", "C=3", 0, 0},
    {"xml_fuse_receive_copy.weft", NULL, 0, 0},
};

static void run_matrix(const char *dir) {
    static const int ranks[] = {2, 3, 4, 5, 8, 16};
    for (size_t m = 0; m < sizeof matrix / sizeof *matrix; m++)
        for (size_t k = 0; k < sizeof ranks / sizeof *ranks; k++) {
            int n = ranks[k];
            if (matrix[m].pow2 && (n & (n - 1))) continue;
            if (matrix[m].mult_of_2 && n % 2) continue;
            char path[1024], nd[32];
            snprintf(path, sizeof path, "%s/%s", dir, matrix[m].file);
            snprintf(nd, sizeof nd, "N=%d", n);
            const char *defs[2] = {nd, matrix[m].extra};
            weft_algo *a = compile_file(path, defs, matrix[m].extra ? 2 : 1);
            CHECK(a != NULL);
            if (a == NULL) continue;
            char what[1100];
            snprintf(what, sizeof what, "%s N=%d", matrix[m].file, n);
            CHECK(prove(a, what));
            weft_algo_free(a);
        }
}

/* ---- random programs ------------------------------------------------------------------------ */

static uint64_t rng;
static uint32_t rnd(uint32_t n) {
    rng = rng * 6364136223846793005ULL + 1442695040888963407ULL;
    return (uint32_t)(rng >> 33) % n;
}

typedef struct text {
    char *s;
    size_t n, cap;
} text;

static void put(text *t, const char *fmt, ...) WEFT_PRINTF(2, 3);
static void put(text *t, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    int m = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (t->n + (size_t)m + 1 > t->cap) {
        t->cap = 2 * (t->n + (size_t)m + 1);
        t->s = realloc(t->s, t->cap);
    }
    va_start(ap, fmt);
    vsnprintf(t->s + t->n, (size_t)m + 1, fmt, ap);
    va_end(ap);
    t->n += (size_t)m;
}

/* An allreduce where each chunk is reduced along a random chain of ranks (sometimes through a
 * scratch chunk) and then spread along a random tree, the chunks' operations interleaved at
 * random, on random channels; in-place, out-of-place or both. */
static char *random_allreduce(int n, int k, int mode) {
    const char *buf = mode == 1 ? "input" : "output";
    char ***ops = calloc((size_t)k, sizeof *ops);
    int *nops = calloc((size_t)k, sizeof *nops), *next = calloc((size_t)k, sizeof *next);
    for (int j = 0; j < k; j++) {
        ops[j] = calloc((size_t)(4 * n + 4), sizeof **ops);
        int perm[64];
        for (int r = 0; r < n; r++)
            perm[r] = r;
        for (int r = n - 1; r > 0; r--) {
            int x = (int)rnd((uint32_t)r + 1), t = perm[r];
            perm[r] = perm[x];
            perm[x] = t;
        }
        char line[256];
        for (int t = 1; t < n; t++) {
            int a = perm[t - 1], b = perm[t], ch = (int)rnd(3);
            const char *src = t == 1 && mode == 0 ? "input" : buf;
            if (rnd(4) == 0) {
                snprintf(line, sizeof line, "copy %s[%d][%d] -> s[%d][%d] chan=%d;\n", src, a, j, b,
                         j, ch);
                ops[j][nops[j]++] = weft_strdup(line);
                snprintf(line, sizeof line, "reduce s[%d][%d] -> %s[%d][%d];\n", b, j, buf, b, j);
            } else {
                snprintf(line, sizeof line, "reduce %s[%d][%d] -> %s[%d][%d] chan=%d;\n", src, a, j,
                         buf, b, j, ch);
            }
            ops[j][nops[j]++] = weft_strdup(line);
        }
        int have[64], nh = 1;
        have[0] = perm[n - 1];
        for (int t = n - 2; t >= 0; t--) {
            int src = have[rnd((uint32_t)nh)], dst = perm[t];
            snprintf(line, sizeof line, "copy %s[%d][%d] -> %s[%d][%d] chan=%d;\n", buf, src, j,
                     buf, dst, j, (int)rnd(3));
            ops[j][nops[j]++] = weft_strdup(line);
            have[nh++] = dst;
        }
    }
    text t = {0};
    put(&t, "algorithm rnd { collective allreduce; ranks %d; chunks %d; %s }\nscratch s[%d];\n", n,
        k,
        mode == 0   ? "outofplace;"
        : mode == 1 ? "inplace;"
                    : "inplace; outofplace;",
        k);
    /* out-of-place, each rank starts from a copy of its input: in one piece, or chunk by chunk
     * (each copy then fusable into the first receive that reduces into its chunk) */
    if (mode != 1) {
        int per_chunk = (int)rnd(2);
        for (int r = 0; r < n; r++)
            if (per_chunk)
                for (int j = 0; j < k; j++)
                    put(&t, "copy input[%d][%d] -> output[%d][%d];\n", r, j, r, j);
            else
                put(&t, "copy input[%d][0..%d] -> output[%d][0..%d];\n", r, k, r, k);
    }
    for (;;) {
        int left = 0;
        for (int j = 0; j < k; j++)
            left += nops[j] - next[j];
        if (left == 0) break;
        int pick = (int)rnd((uint32_t)left);
        for (int j = 0; j < k; j++) {
            int l = nops[j] - next[j];
            if (pick < l) {
                put(&t, "%s", ops[j][next[j]]);
                free(ops[j][next[j]++]);
                break;
            }
            pick -= l;
        }
    }
    for (int j = 0; j < k; j++)
        free(ops[j]);
    free(ops);
    free(nops);
    free(next);
    return t.s;
}

static void run_random(int count) {
    for (int i = 0; i < count; i++) {
        rng = 0x5EEDULL + (uint64_t)i * 7919;
        int n = 2 + (int)rnd(7), k = 1 + (int)rnd(4), mode = (int)rnd(3);
        char *src = random_allreduce(n, k, mode);
        weft_diag *d = weft_diag_new();
        weft_algo *a = NULL;
        char name[64];
        snprintf(name, sizeof name, "random%d.weft", i);
        weft_result r = weft_cc_compile_string(src, strlen(src), name, NULL, &a, d);
        CHECK(r == WEFT_OK);
        if (r != WEFT_OK) {
            weft_diag_print(d, stderr, WEFT_SEV_NOTE);
            fputs(src, stderr);
        } else if (!prove(a, name)) {
            CHECK(0);
            fputs(src, stderr);
        }
        weft_algo_free(a);
        weft_diag_free(d);
        free(src);
    }
}

/* ---- the API --------------------------------------------------------------------------------- */

static void api(void) {
    weft_diag *d = weft_diag_new();
    weft_lang_program *prog = NULL;
    weft_cc_program *p = NULL;
    weft_algo *a = NULL;
    const char *src = "param N = 2;\nalgorithm x { collective allreduce; ranks N; inplace; }\n"
                      "reduce input[0][0] -> input[1][0];\ncopy input[1][0] -> input[0][0];\n";
    CHECK(weft_lang_parse_string(src, strlen(src), "x.weft", NULL, 0, &prog, d) == WEFT_OK);
    /* lowering wants a checked program */
    CHECK(weft_cc_eval(prog, NULL, &p, d) == WEFT_OK);
    CHECK(weft_cc_lower(p, &a, d) == WEFT_ERR_USAGE && a == NULL);
    CHECK(weft_cc_check(p, d) == WEFT_OK);
    CHECK(weft_cc_lower(p, &a, d) == WEFT_OK && a != NULL);
    if (a) {
        CHECK(a->ngpus == 2 && a->nchunksperloop == 1 && a->inplace && !a->outofplace);
        CHECK(weft_algo_nsteps(a) == 3); /* s; rrcs; r */
        CHECK(a->gpus[1].ntbs == 1 && a->gpus[1].tbs[0].steps[0].type == WEFT_STEP_RRCS);
    }
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    CHECK(weft_cc_write_ops(p, f) == WEFT_OK);
    fclose(f);
    CHECK_STR(buf, "# x: allreduce, 2 ranks, chunks 1, Simple, inplace, instances 1\n"
                   "3: reduce input[0][0] -> input[1][0]\n4: copy input[1][0] -> input[0][0]\n");
    free(buf);
    weft_algo_free(a);
    a = NULL;
    weft_cc_program_free(p);
    p = NULL;
    CHECK(weft_diag_count(d, WEFT_SEV_ERROR) == 0);

    /* parameters: overrides, bad values, unknown names */
    const char *good[] = {"N=2"}, *bad[] = {"N=two"}, *unknown[] = {"M=2"}, *neg[] = {"N=-3"};
    weft_cc_options o = {good, 1, NULL, 0};
    CHECK(weft_cc_eval(prog, &o, &p, d) == WEFT_OK);
    weft_cc_program_free(p);
    p = NULL;
    o.defines = bad;
    CHECK(weft_cc_eval(prog, &o, &p, d) == WEFT_ERR_INPUT && p == NULL);
    o.defines = unknown;
    CHECK(weft_cc_eval(prog, &o, &p, d) == WEFT_ERR_INPUT && p == NULL);
    weft_diag_clear(d);
    o.defines = neg;
    CHECK(weft_cc_eval(prog, &o, &p, d) == WEFT_ERR_INPUT && p == NULL);
    const weft_diag_entry *e = weft_diag_get(d, 0);
    CHECK(e && strstr(e->msg, "ranks must be in 1..8192 (got -3)") != NULL);
    weft_lang_program_free(prog);

    /* the one-call pipeline reports errors and leaves *out NULL */
    weft_diag_clear(d);
    const char *wrong = "algorithm y { collective allreduce; ranks 2; inplace; }\n"
                        "copy input[0][0] -> input[1][0];\n";
    CHECK(weft_cc_compile_string(wrong, strlen(wrong), "y.weft", NULL, &a, d) == WEFT_ERR_INPUT);
    CHECK(a == NULL && weft_diag_count(d, WEFT_SEV_ERROR) == 2);
    weft_diag_free(d);
}

int main(int argc, char **argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: test_compiler CASES_DIR [random-count [-v]]\n");
        return 2;
    }
    verbose = argc > 3 && strcmp(argv[3], "-v") == 0;
    api();
    run_matrix(argv[1]);
    run_random(argc > 2 ? atoi(argv[2]) : 300);
    printf("%d schedules verified and executed\n", proven);
    CHECK_DONE();
}
