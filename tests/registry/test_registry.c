/* test_registry.c — registry loading (order, bad files reported once and skipped) and per-call
 * selection (collective, ranks, byte ranges, buffer modes, types, ops, roots, purity). */
#include "check.h"
#include "weft_compiler.h"
#include "weft_select.h"
#include "weft_tune_table.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static const char *algos_dir;

static weft_call call(weft_coll coll, weft_dtype t, size_t count, int inplace) {
    weft_call c = {coll, t, WEFT_OP_SUM, count, inplace, 0, 2, 0, 0};
    return c;
}

static const char *selected(const weft_registry *r, weft_call c) {
    int i = weft_registry_select(r, &c, NULL);
    return i < 0 ? "-" : weft_registry_get(r, (size_t)i)->name;
}

static const char *why(const weft_registry *r, weft_call c) {
    const char *w = NULL;
    int i = weft_registry_select(r, &c, &w);
    return i < 0 ? w : "(selected)";
}

static weft_registry *load(const char *paths, weft_diag *d) {
    weft_registry *r = NULL;
    CHECK(weft_registry_new(&r) == WEFT_OK);
    CHECK(weft_registry_load(r, paths, d) == WEFT_OK);
    return r;
}

static void test_order(void) {
    weft_diag *d = weft_diag_new();
    weft_registry *r = load(algos_dir, d);
    if (weft_diag_size(d)) weft_diag_print(d, stderr, WEFT_SEV_INFO);
    CHECK(weft_diag_count(d, WEFT_SEV_ERROR) == 0);
    static const char *const names[] = {"ag2",  "ar2_large", "ar2_small",
                                        "a2a2", "bc2_root0", "rs2"};
    CHECK(weft_registry_size(r) == 6);
    for (size_t i = 0; i < 6 && i < weft_registry_size(r); i++)
        CHECK_STR(weft_registry_get(r, i)->name, names[i]);
    CHECK(weft_registry_get(r, 6) == NULL);
    weft_registry_free(r);
    weft_diag_free(d);
}

static void test_select(void) {
    weft_registry *r = load(algos_dir, NULL);
    /* byte ranges, inclusive at both ends; maxBytes 0 is unbounded */
    CHECK_STR(selected(r, call(WEFT_COLL_ALLREDUCE, WEFT_DTYPE_FLOAT, 1, 1)), "ar2_small");
    CHECK_STR(selected(r, call(WEFT_COLL_ALLREDUCE, WEFT_DTYPE_FLOAT, 16384, 0)), "ar2_small");
    CHECK_STR(selected(r, call(WEFT_COLL_ALLREDUCE, WEFT_DTYPE_FLOAT, 16385, 0)), "-");
    CHECK_STR(why(r, call(WEFT_COLL_ALLREDUCE, WEFT_DTYPE_FLOAT, 16385, 0)),
              "message size outside the [minBytes, maxBytes] of every fitting algorithm");
    CHECK_STR(selected(r, call(WEFT_COLL_ALLREDUCE, WEFT_DTYPE_UINT8, 1048576, 0)), "-");
    CHECK_STR(selected(r, call(WEFT_COLL_ALLREDUCE, WEFT_DTYPE_UINT8, 1048577, 0)), "ar2_large");
    CHECK_STR(selected(r, call(WEFT_COLL_ALLREDUCE, WEFT_DTYPE_DOUBLE, (size_t)1 << 40, 0)),
              "ar2_large");
    /* buffer mode: ar2_large is out-of-place only */
    CHECK_STR(selected(r, call(WEFT_COLL_ALLREDUCE, WEFT_DTYPE_UINT8, 1048577, 1)), "-");
    CHECK_STR(why(r, call(WEFT_COLL_ALLREDUCE, WEFT_DTYPE_UINT8, 1 << 24, 1)),
              "no algorithm for this buffer mode (in-place or out-of-place; rooted collectives "
              "need an algorithm declaring both)");
    /* any count runs (count policy): odd counts, counts below the chunk count */
    CHECK_STR(selected(r, call(WEFT_COLL_REDUCESCATTER, WEFT_DTYPE_HALF, 7, 0)), "rs2");
    CHECK_STR(selected(r, call(WEFT_COLL_ALLREDUCE, WEFT_DTYPE_INT32, 3, 0)), "ar2_small");
    /* allgather, reducescatter, alltoall: bytes are count x size x ranks (msccl-executor) */
    CHECK_STR(selected(r, call(WEFT_COLL_ALLGATHER, WEFT_DTYPE_UINT8, 524288, 0)), "ag2");
    CHECK_STR(selected(r, call(WEFT_COLL_ALLGATHER, WEFT_DTYPE_UINT8, 524289, 0)), "-");
    CHECK_STR(selected(r, call(WEFT_COLL_ALLTOALL, WEFT_DTYPE_BFLOAT16, 1 << 20, 1)), "a2a2");
    /* rank count */
    weft_call c = call(WEFT_COLL_ALLREDUCE, WEFT_DTYPE_FLOAT, 4, 0);
    c.nranks = 4;
    CHECK_STR(selected(r, c), "-");
    CHECK_STR(why(r, c), "no algorithm for this collective and rank count");
    /* ops: avg, PreMulSum (5) and user ops go to NCCL; non-reducing calls ignore the op */
    c = call(WEFT_COLL_ALLREDUCE, WEFT_DTYPE_FLOAT, 4, 0);
    c.op = WEFT_OP_AVG;
    CHECK_STR(why(r, c),
              "reduction op not served by weft (avg, PreMulSum and user ops go to NCCL)");
    c.op = (weft_redop)5;
    CHECK_STR(selected(r, c), "-");
    c.op = WEFT_OP_MAX;
    CHECK_STR(selected(r, c), "ar2_small");
    c = call(WEFT_COLL_ALLGATHER, WEFT_DTYPE_FLOAT, 4, 0);
    c.op = WEFT_OP_AVG;
    CHECK_STR(selected(r, c), "ag2");
    /* types NCCL has and weft does not (fp8 = 10, 11) */
    c = call(WEFT_COLL_ALLREDUCE, (weft_dtype)10, 4, 0);
    CHECK_STR(why(r, c), "data type not served by weft");
    /* roots: the algorithm's root must be the call's; the mode cannot matter */
    c = call(WEFT_COLL_BROADCAST, WEFT_DTYPE_FLOAT, 100, 0);
    CHECK_STR(selected(r, c), "bc2_root0");
    c.inplace = 1;
    CHECK_STR(selected(r, c), "bc2_root0");
    c.root = 1;
    CHECK_STR(why(r, c), "no algorithm for this root");
    c.root = 2;
    CHECK_STR(why(r, c), "root is not a rank of the communicator");
    /* collectives without algorithms, and ones weft never serves */
    CHECK_STR(why(r, call(WEFT_COLL_GATHER, WEFT_DTYPE_FLOAT, 4, 0)),
              "no algorithm for this collective");
    CHECK_STR(why(r, call(WEFT_COLL_SEND, WEFT_DTYPE_FLOAT, 4, 0)),
              "collective not served by weft");
    CHECK_STR(why(r, call(WEFT_COLL_ALLREDUCE, WEFT_DTYPE_FLOAT, 0, 0)), "empty call (count 0)");
    /* sizes that overflow a 64-bit byte count never match and never crash */
    CHECK_STR(selected(r, call(WEFT_COLL_ALLTOALL, WEFT_DTYPE_DOUBLE, SIZE_MAX / 4, 0)), "-");
    CHECK(weft_registry_select(NULL, &c, NULL) == -1);
    CHECK(weft_registry_select(r, NULL, NULL) == -1);
    weft_registry_free(r);

    weft_registry *empty = NULL;
    CHECK(weft_registry_new(&empty) == WEFT_OK);
    CHECK_STR(why(empty, call(WEFT_COLL_ALLREDUCE, WEFT_DTYPE_FLOAT, 4, 0)), "no algorithm loaded");
    weft_registry_free(empty);
}

/* Selection is a pure function of (loaded files, call): two registries loaded from the same
 * files agree on every call of a grid, and repeated calls agree with themselves. */
static void test_pure(void) {
    weft_registry *a = load(algos_dir, NULL), *b = load(algos_dir, NULL);
    int n = 0, served = 0;
    for (int coll = 0; coll < WEFT_COLL_COUNT; coll++)
        for (int t = 0; t < WEFT_DTYPE_COUNT; t++)
            for (int op = 0; op < 6; op++)
                for (int ip = 0; ip < 2; ip++)
                    for (int ranks = 1; ranks <= 3; ranks++)
                        for (int root = 0; root < 2; root++)
                            for (size_t count = 1; count < ((size_t)1 << 32);
                                 count = count * 5 + 1) {
                                weft_call c = {(weft_coll)coll,
                                               (weft_dtype)t,
                                               (weft_redop)op,
                                               count,
                                               ip,
                                               root,
                                               ranks,
                                               0,
                                               0};
                                const char *w1 = NULL, *w2 = NULL;
                                int x = weft_registry_select(a, &c, &w1);
                                int y = weft_registry_select(b, &c, &w2);
                                int z = weft_registry_select(a, &c, NULL);
                                CHECK(x == y && x == z);
                                CHECK(x >= 0 || (w1 && w2 && w1 == w2));
                                n++;
                                served += x >= 0;
                            }
    CHECK(n > 10000 && served > 100);
    weft_registry_free(a);
    weft_registry_free(b);
}

static void write_file(const char *dir, const char *name, const char *text) {
    char path[512];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "w");
    CHECK(f != NULL);
    if (f == NULL) return;
    fputs(text, f);
    fclose(f);
}

static char *slurp(const char *path) {
    char *data = NULL;
    CHECK(weft_read_file(path, &data, NULL, NULL) == WEFT_OK);
    return data;
}

/* Count the entries of d whose formatted text is exactly s. */
static int count_diag(const weft_diag *d, const char *s) {
    int n = 0;
    for (size_t i = 0; i < weft_diag_size(d); i++) {
        char *t = weft_diag_format(weft_diag_get(d, i));
        n += t && strcmp(t, s) == 0;
        free(t);
    }
    return n;
}

static int mentions(const weft_diag *d, const char *file) {
    int n = 0;
    for (size_t i = 0; i < weft_diag_size(d); i++) {
        const weft_diag_entry *e = weft_diag_get(d, i);
        n += e->file && strcmp(e->file, file) == 0;
    }
    return n;
}

static void test_bad_files(void) {
    char dir[] = "/tmp/weft_registry_XXXXXX";
    CHECK(mkdtemp(dir) != NULL);
    char src[512];
    snprintf(src, sizeof src, "%s/allreduce_2r_small.xml", algos_dir);
    char *good = slurp(src);
    write_file(dir, "a_good.xml", good);
    /* structurally valid, but it does not reduce: the verifier rejects it */
    char *wrong = weft_strdup(good), *rrc;
    while ((rrc = strstr(wrong, "type=\"rrc\"")) != NULL)
        memcpy(rrc, "type=\"r\"  ", 11);
    write_file(dir, "b_wrong.xml", wrong);
    free(wrong);
    write_file(dir, "b_broken.xml", "<algo name=\"x\" proto=\"Simple\"\n");
    write_file(dir, "c_source.weft", "allreduce ring\n");
    write_file(dir, "d_notes.txt", "not an algorithm\n");
    write_file(dir, "e_ring.weft",
               "// ring allreduce, compiled when the registry loads it\n"
               "param N = 2;\n"
               "algorithm ring_weft {\n"
               "    collective allreduce;\n"
               "    ranks      N;\n"
               "    chunks     N;\n"
               "    inplace;\n"
               "    minbytes   128K;\n"
               "}\n"
               "for s in 0..N-1 {\n"
               "    for i in 0..N {\n"
               "        let r = (i + s) % N;\n"
               "        reduce input[r][i] -> input[(r + 1) % N][i];\n"
               "    }\n"
               "}\n"
               "for s in 0..N-1 {\n"
               "    for i in 0..N {\n"
               "        let r = (i - 1 + s) % N;\n"
               "        copy input[r][i] -> input[(r + 1) % N][i];\n"
               "    }\n"
               "}\n");
    write_file(dir, ".e_hidden.xml", "<algo");
    char sub[600];
    snprintf(sub, sizeof sub, "%s/f_subdir.xml", dir);
    CHECK(mkdir(sub, 0700) == 0);
    /* entries named like algorithms that are not files: each skipped with one INFO saying why
     * (and nothing waits on the FIFO, nothing reads the device) */
    char lnk[700];
    snprintf(lnk, sizeof lnk, "%s/g_dangling.weft", dir);
    CHECK(symlink("/nonexistent/algo.weft", lnk) == 0);
    snprintf(lnk, sizeof lnk, "%s/h_loop.xml", dir);
    CHECK(symlink("h_loop.xml", lnk) == 0);
    snprintf(lnk, sizeof lnk, "%s/i_fifo.xml", dir);
    CHECK(mkfifo(lnk, 0600) == 0);
    snprintf(lnk, sizeof lnk, "%s/j_zero.xml", dir);
    CHECK(symlink("/dev/zero", lnk) == 0);

    char paths[2048];
    snprintf(paths, sizeof paths, "/nonexistent/weft:%s::%s/d_notes.txt", dir, dir);
    weft_diag *d = weft_diag_new();
    weft_registry *r = load(paths, d);
    CHECK(weft_registry_size(r) == 2);
    CHECK_STR(weft_registry_get(r, 0)->name, "ar2_small");
    if (weft_registry_size(r) == 2) CHECK_STR(weft_registry_get(r, 1)->name, "ring_weft");
    weft_call big = {WEFT_COLL_ALLREDUCE, WEFT_DTYPE_FLOAT, WEFT_OP_SUM, 1 << 20, 1, 0, 2, 0, 0};
    CHECK(weft_registry_select(r, &big, NULL) == 1);
    char path[700], msg[1200];
    /* each bad file: its own errors, then one note that it was skipped */
    const char *bad[] = {"b_broken.xml", "b_wrong.xml", "c_source.weft"};
    for (int i = 0; i < 3; i++) {
        snprintf(path, sizeof path, "%s/%s", dir, bad[i]);
        snprintf(msg, sizeof msg, "%s: note: algorithm skipped", path);
        CHECK(count_diag(d, msg) == 1);
        CHECK(mentions(d, path) >= 2);
    }
    snprintf(path, sizeof path, "%s/c_source.weft", dir);
    CHECK(weft_diag_count(d, WEFT_SEV_ERROR) >= 4);
    int located = 0; /* compile errors come with file:line:col */
    for (size_t i = 0; i < weft_diag_size(d); i++) {
        const weft_diag_entry *e = weft_diag_get(d, i);
        located += e->file && strcmp(e->file, path) == 0 && e->sev == WEFT_SEV_ERROR &&
                   e->line > 0 && e->col > 0;
    }
    CHECK(located >= 1);
    /* files a directory holds that are not algorithms are not mentioned; named ones are */
    snprintf(path, sizeof path, "%s/d_notes.txt", dir);
    snprintf(msg, sizeof msg, "%s: error: not an algorithm file (expected a .xml or .weft name)",
             path);
    CHECK(count_diag(d, msg) == 1);
    CHECK(mentions(d, path) == 2);
    snprintf(path, sizeof path, "%s/.e_hidden.xml", dir);
    CHECK(mentions(d, path) == 0);
    const char *skipped[][2] = {
        {"f_subdir.xml", "skipped: not a regular file (it is a directory)"},
        {"g_dangling.weft", "skipped: a symbolic link to nothing (what it names does not exist)"},
        {"h_loop.xml", "skipped: Too many levels of symbolic links"},
        {"i_fifo.xml", "skipped: not a regular file (it is a FIFO)"},
        {"j_zero.xml", "skipped: not a regular file (it is a character device)"},
    };
    for (int i = 0; i < 5; i++) {
        snprintf(path, sizeof path, "%s/%s", dir, skipped[i][0]);
        snprintf(msg, sizeof msg, "%s: info: %s", path, skipped[i][1]);
        CHECK(count_diag(d, msg) == 1);
        CHECK(mentions(d, path) == 1);
    }
    CHECK(count_diag(d, "/nonexistent/weft: error: cannot open: No such file or directory") == 1);
    CHECK(weft_diag_count(d, WEFT_SEV_NOTE) == 4);
    weft_registry_free(r);
    weft_diag_free(d);

    const char *names[] = {"a_good.xml",  "b_broken.xml",  "b_wrong.xml", "c_source.weft",
                           "d_notes.txt", ".e_hidden.xml", "e_ring.weft", "g_dangling.weft",
                           "h_loop.xml",  "i_fifo.xml",    "j_zero.xml"};
    for (int i = 0; i < 11; i++) {
        snprintf(path, sizeof path, "%s/%s", dir, names[i]);
        unlink(path);
    }
    rmdir(sub);
    rmdir(dir);
    free(good);
}

static const char ring_src[] = "// ring allreduce for N ranks\n"
                               "param N = 4;\n"
                               "%s"
                               "algorithm %s {\n"
                               "    collective allreduce;\n"
                               "    ranks      N;\n"
                               "    chunks     N;\n"
                               "    inplace;\n"
                               "}\n"
                               "for s in 0..N-1 {\n"
                               "    for i in 0..N {\n"
                               "        let r = (i + s) %% N;\n"
                               "        reduce input[r][i] -> input[(r + 1) %% N][i];\n"
                               "    }\n"
                               "}\n"
                               "for s in 0..N-1 {\n"
                               "    for i in 0..N {\n"
                               "        let r = (i - 1 + s) %% N;\n"
                               "        copy input[r][i] -> input[(r + 1) %% N][i];\n"
                               "    }\n"
                               "}\n";

/* Sources written for any rank count (`param N`) serve every communicator size. */
static void test_for_ranks(void) {
    char dir[] = "/tmp/weft_ranks_XXXXXX", text[2048], src[512], path[600];
    CHECK(mkdtemp(dir) != NULL);
    snprintf(src, sizeof src, "%s/allreduce_2r_small.xml", algos_dir);
    char *xml = slurp(src);
    write_file(dir, "a_fixed.xml", xml);
    free(xml);
    snprintf(text, sizeof text, ring_src, "require N >= 4, \"needs 4 ranks\";\n", "ring4");
    write_file(dir, "b_needs4.weft", text);
    snprintf(text, sizeof text, ring_src, "", "ring");
    write_file(dir, "c_ring.weft", text);
    weft_diag *d = weft_diag_new();
    weft_registry *base = load(dir, d), *r[5] = {NULL};
    CHECK(weft_diag_size(d) == 0);
    CHECK(weft_registry_size(base) == 3);
    static const size_t want[5] = {0, 1, 2, 1, 2};
    for (int n = 1; n <= 4; n++) {
        weft_diag_clear(d);
        CHECK(weft_registry_for_ranks(base, n, &r[n], d) == WEFT_OK);
        CHECK(weft_registry_size(r[n]) == want[n]);
        for (size_t i = 0; i < weft_registry_size(r[n]); i++)
            CHECK(weft_registry_get(r[n], i)->ngpus == n);
        if (n < 4) {
            char msg[800];
            snprintf(msg, sizeof msg,
                     "%s/b_needs4.weft:3:1: info: no instance for N=%d: requirement failed: "
                     "needs 4 ranks",
                     dir, n);
            char *got = weft_diag_size(d) ? weft_diag_format(weft_diag_get(d, 0)) : NULL;
            CHECK(weft_diag_size(d) == 1);
            CHECK(got && strncmp(got, msg, strlen(msg)) == 0);
            if (got && strncmp(got, msg, strlen(msg)) != 0) fprintf(stderr, "%s\n", got);
            free(got);
        }
    }
    weft_call c = {WEFT_COLL_ALLREDUCE, WEFT_DTYPE_FLOAT, WEFT_OP_SUM, 1 << 20, 1, 0, 2, 0, 0};
    CHECK_STR(selected(r[2], c), "ring");
    c.count = 4;
    CHECK_STR(selected(r[2], c), "ar2_small");
    c.nranks = 3;
    CHECK_STR(selected(r[3], c), "ring");
    CHECK_STR(selected(base, c), "-");
    c.nranks = 4;
    CHECK_STR(selected(r[4], c), "ring4");
    /* the same files give the same instances */
    weft_registry *again = NULL;
    CHECK(weft_registry_for_ranks(base, 3, &again, NULL) == WEFT_OK);
    CHECK(weft_registry_size(again) == 1 &&
          weft_algo_equal(weft_registry_get(again, 0), weft_registry_get(r[3], 0), NULL, 0));
    weft_registry_free(again);
    CHECK(weft_registry_for_ranks(NULL, 3, &again, NULL) == WEFT_ERR_USAGE);
    /* a rooted source with `param ROOT` serves every root */
    write_file(dir, "d_chain.weft",
               "param N = 4;\nparam ROOT = 0;\n"
               "algorithm chain { collective broadcast; ranks N; chunks 1; root ROOT; inplace; "
               "outofplace; }\n"
               "copy input[ROOT][0] -> output[ROOT][0];\n"
               "for v in 1..N { let a = (ROOT + v - 1) % N; let b = (ROOT + v) % N;\n"
               "  if v == 1 { copy input[ROOT][0] -> output[b][0]; }\n"
               "  else { copy output[a][0] -> output[b][0]; } }\n");
    weft_registry *rooted = NULL, *r3 = NULL, *r20 = NULL;
    weft_diag_clear(d);
    rooted = load(dir, d);
    CHECK(weft_registry_size(rooted) == 4);
    CHECK(weft_registry_for_ranks(rooted, 3, &r3, d) == WEFT_OK);
    CHECK(weft_registry_size(r3) == 1 + 3); /* ring, chain for roots 0, 1, 2 */
    weft_call b = {WEFT_COLL_BROADCAST, WEFT_DTYPE_FLOAT, WEFT_OP_SUM, 100, 0, 0, 3, 0, 0};
    for (b.root = 0; b.root < 3; b.root++) {
        int i = weft_registry_select(r3, &b, NULL);
        CHECK(i == 1 + b.root && weft_registry_get(r3, (size_t)i)->root == b.root);
    }
    /* above WEFT_REGISTRY_MAX_ROOTED_RANKS, only the source's own root */
    CHECK(weft_registry_for_ranks(rooted, WEFT_REGISTRY_MAX_ROOTED_RANKS + 1, &r20, d) == WEFT_OK);
    CHECK(weft_registry_size(r20) == 3); /* ring4, ring, chain with ROOT 0 */
    weft_registry_free(r3);
    weft_registry_free(r20);
    weft_registry_free(rooted);
    for (int n = 1; n <= 4; n++)
        weft_registry_free(r[n]);
    weft_registry_free(base);
    weft_diag_free(d);
    const char *names[] = {"a_fixed.xml", "b_needs4.weft", "c_ring.weft", "d_chain.weft"};
    for (int i = 0; i < 4; i++) {
        snprintf(path, sizeof path, "%s/%s", dir, names[i]);
        unlink(path);
    }
    rmdir(dir);
}

/* Across nodes: sources with `param G` are compiled with it and cut into proven phases, XML files
 * of the rank count serve too, sources written for one node do not. */
static void test_for_nodes(void) {
    char dir[] = "/tmp/weft_nodes_XXXXXX", text[2048], src[512], path[600], list[1400];
    CHECK(mkdtemp(dir) != NULL);
    snprintf(src, sizeof src, "%s/allreduce_2r_small.xml", algos_dir);
    char *xml = slurp(src);
    write_file(dir, "a_fixed.xml", xml);
    free(xml);
    snprintf(text, sizeof text, ring_src, "", "ring");
    write_file(dir, "c_ring.weft", text);
    snprintf(list, sizeof list, "%s:%s/../../../algorithms/allreduce_hierarchical.weft", dir,
             algos_dir);
    weft_diag *d = weft_diag_new();
    weft_registry *base = NULL, *r = NULL;
    CHECK(weft_registry_new(&base) == WEFT_OK && weft_registry_load(base, list, d) == WEFT_OK);
    /* the two-level file's defaults (16 ranks in nodes of 8) are a shape NCCL serves by default:
     * it is kept as a source, built for the node shapes its requires allow */
    CHECK(weft_registry_size(base) == 2);
    CHECK(weft_registry_gpus_per_node(base) == 0 && weft_registry_phases(base, 0) == NULL);
    weft_call c = {WEFT_COLL_ALLREDUCE, WEFT_DTYPE_FLOAT, WEFT_OP_SUM, 1 << 18, 1, 0, 4, 0, 0};

    /* 2 nodes of 2: only the two-level source, in 3 GPU phases */
    weft_diag_clear(d);
    CHECK(weft_registry_for_nodes(base, 4, 2, &r, d) == WEFT_OK);
    CHECK(weft_registry_gpus_per_node(r) == 2);
    CHECK(weft_registry_size(r) == 1);
    CHECK_STR(selected(r, c), "allreduce_hierarchical");
    const weft_phased *p = weft_registry_phases(r, 0);
    CHECK(p && p->nphases == 3 && p->nnodes == 2 && p->gpu[0]->ngpus == 4);
    CHECK(weft_diag_count(d, WEFT_SEV_ERROR) == 0);
    int said = 0;
    for (size_t i = 0; i < weft_diag_size(d); i++)
        said |= strstr(weft_diag_get(d, i)->msg, "'ring' is written for one node (no parameter "
                                                 "G): NCCL serves the calls it would fit on 4 "
                                                 "ranks in nodes of 2") != NULL;
    CHECK(said);
    weft_registry_free(r);

    /* 2 nodes of 4: a shape no measurement has weft win, so NCCL serves it (one INFO says why) */
    weft_diag_clear(d);
    c.nranks = 8;
    CHECK(weft_registry_for_nodes(base, 8, 4, &r, d) == WEFT_OK);
    CHECK(weft_registry_size(r) == 0);
    said = 0;
    for (size_t i = 0; i < weft_diag_size(d); i++)
        said |= weft_diag_get(d, i)->sev == WEFT_SEV_INFO &&
                strstr(weft_diag_get(d, i)->msg, "across nodes NCCL serves this node shape by "
                                                 "default") != NULL;
    CHECK(said && weft_diag_count(d, WEFT_SEV_ERROR) == 0);
    weft_registry_free(r);
    /* -D SERVE=1 (weft tune) builds it there */
    const char *serve[] = {"SERVE=1"};
    CHECK(weft_registry_for_nodes_defines(base, 8, 4, serve, 1, &r, d) == WEFT_OK);
    CHECK(weft_registry_size(r) == 1);
    CHECK_STR(selected(r, c), "allreduce_hierarchical");
    weft_registry_free(r);

    /* one node of 8: the ring, not the two-level file */
    weft_diag_clear(d);
    CHECK(weft_registry_for_nodes(base, 8, 8, &r, d) == WEFT_OK);
    CHECK(weft_registry_size(r) == 1);
    CHECK_STR(selected(r, c), "ring");
    CHECK(weft_registry_phases(r, 0) == NULL);
    CHECK(weft_diag_count(d, WEFT_SEV_ERROR) == 0);
    weft_registry_free(r);

    /* 2 nodes of 1 GPU: the XML file written for 2 ranks serves, cut at its messages */
    weft_diag_clear(d);
    CHECK(weft_registry_for_nodes(base, 2, 1, &r, d) == WEFT_OK);
    CHECK(weft_registry_size(r) == 1);
    c.nranks = 2;
    c.count = 4;
    CHECK_STR(selected(r, c), "ar2_small");
    for (size_t i = 0; i < weft_registry_size(r); i++) {
        p = weft_registry_phases(r, i);
        CHECK(p && p->nphases >= 2 && p->nnodes == 2 && p->staged > 0);
    }
    weft_registry_free(r);

    CHECK(weft_registry_for_nodes(base, 8, 3, &r, d) == WEFT_ERR_USAGE);
    CHECK(weft_registry_for_nodes(base, 8, 0, &r, d) == WEFT_ERR_USAGE);
    CHECK(weft_registry_for_nodes(NULL, 8, 4, &r, d) == WEFT_ERR_USAGE);
    weft_registry_free(base);
    weft_diag_free(d);
    const char *names[] = {"a_fixed.xml", "c_ring.weft"};
    for (int i = 0; i < 2; i++) {
        snprintf(path, sizeof path, "%s/%s", dir, names[i]);
        unlink(path);
    }
    rmdir(dir);
}

/* Several algorithms fit one call: the fewest bytes across the network serves, then load order;
 * never the first file silently (issue 28: a one-node all-pairs XML of the right rank count
 * came first by name and was chosen across 2 nodes ahead of the two-level file). */
static void test_rank(void) {
    char list[1400], dir[] = "/tmp/weft_rank_XXXXXX", src[512], path[600];
    snprintf(list, sizeof list, "%s/../nodes:%s/../../../algorithms/allreduce_hierarchical.weft",
             algos_dir, algos_dir);
    weft_diag *d = weft_diag_new();
    weft_registry *base = load(list, d), *r = NULL;
    CHECK(weft_diag_count(d, WEFT_SEV_ERROR) == 0);
    /* 1 MB on 2 nodes of 2: both fit; the all-pairs file comes first by name and sends twice
     * the network bytes (each rank sends 2 of its 4 blocks across, twice) of the two-level one
     * (1 of 4, twice) */
    CHECK(weft_registry_for_nodes(base, 4, 2, &r, d) == WEFT_OK);
    CHECK(weft_registry_size(r) == 2);
    CHECK_STR(weft_registry_get(r, 0)->name, "allreduce_allpairs_twoshot");
    weft_call c = {WEFT_COLL_ALLREDUCE, WEFT_DTYPE_FLOAT, WEFT_OP_SUM, 1 << 18, 0, 0, 4, 0, 0};
    weft_select_expl e;
    CHECK_STR(selected(r, c), "allreduce_hierarchical");
    CHECK(weft_registry_select_explain(r, &c, NULL, &e) == 1);
    CHECK(e.basis == WEFT_SELECT_NETWORK && e.ncands == 2 && e.gpus_per_node == 2);
    CHECK(e.section == NULL && e.why == NULL);
    CHECK(e.cands[0].algo == 1 && e.cands[0].net_bytes == 2u << 20 && e.cands[0].est_us < 0);
    CHECK(e.cands[1].algo == 0 && e.cands[1].net_bytes == 4u << 20);
    /* in place alike; a count that does not divide into chunks rounds them up */
    c.inplace = 1;
    c.count = 32769; /* chunks of ceil(32769 / 4) = 8193 floats: 8 and 16 of them cross */
    CHECK_STR(selected(r, c), "allreduce_hierarchical");
    CHECK(weft_registry_select_explain(r, &c, NULL, &e) == 1 && e.cands[0].net_bytes == 8 * 32772 &&
          e.cands[1].net_bytes == 16 * 32772);
    /* an algorithm the communicator cannot run is passed over: the next one serves */
    unsigned char usable[2] = {1, 0};
    CHECK(weft_registry_select_usable(r, &c, usable, NULL) == 0);
    CHECK(weft_registry_select_explain(r, &c, usable, &e) == 0 && e.basis == WEFT_SELECT_ONLY);
    /* below the two-level file's measured range (128 KB) the all-pairs file alone fits */
    c.count = 5;
    CHECK(weft_registry_select_explain(r, &c, NULL, &e) == 0 && e.basis == WEFT_SELECT_ONLY);
    weft_registry_free(r);

    /* one node of 4: the two-level file rules itself out; the only fit serves */
    CHECK(weft_registry_for_nodes(base, 4, 4, &r, d) == WEFT_OK);
    CHECK(weft_registry_size(r) == 1);
    CHECK(weft_registry_select_explain(r, &c, NULL, &e) == 0);
    CHECK(e.basis == WEFT_SELECT_ONLY && e.ncands == 1 && e.cands[0].net_bytes == 0);
    weft_registry_free(r);
    weft_registry_free(base);

    /* equal keys (one node: no network bytes, no cost model): load order, and it says so */
    CHECK(mkdtemp(dir) != NULL);
    snprintf(src, sizeof src, "%s/../nodes/allreduce_allpairs_4r.xml", algos_dir);
    char *xml = slurp(src);
    write_file(dir, "b.xml", xml);
    write_file(dir, "a.xml", xml);
    free(xml);
    base = load(dir, d);
    CHECK(weft_registry_size(base) == 2);
    c.count = 1000;
    CHECK(weft_registry_select_explain(base, &c, NULL, &e) == 0);
    CHECK(e.basis == WEFT_SELECT_ORDER && e.ncands == 2 && e.cands[1].algo == 1);
    CHECK(strstr(weft_registry_get(base, 0)->file, "/a.xml") != NULL);
    CHECK(strstr(weft_select_basis_str(e.basis), "load order") != NULL);
    /* nothing fits: the reason, and no candidates */
    c.coll = WEFT_COLL_ALLGATHER;
    CHECK(weft_registry_select_explain(base, &c, NULL, &e) == -1);
    CHECK(e.basis == WEFT_SELECT_NONE && e.ncands == 0);
    CHECK_STR(e.why, "no algorithm for this collective");
    weft_registry_free(base);
    weft_diag_free(d);
    for (int i = 0; i < 2; i++) {
        snprintf(path, sizeof path, "%s/%s", dir, i ? "b.xml" : "a.xml");
        unlink(path);
    }
    rmdir(dir);
}

/* A table section answers only calls of its node shape: 2 nodes of 2 GPUs follow the 2 x 2
 * section, one node of 4 the one-node section of the same rank count, and a table without a
 * section for the node shape leaves the files' own ranges (and the ranking) to decide. */
static weft_tune_table *shape_table(uint64_t ap_hash, int with_2x2) {
    weft_tune_table *t = weft_tune_table_new();
    CHECK(t != NULL);
    int ap = weft_tune_add_algo(t, "allreduce_allpairs_4r.xml", "allreduce_allpairs_twoshot", "", 4,
                                0, ap_hash);
    weft_tune_section *s = weft_tune_add_section(t, WEFT_COLL_ALLREDUCE, 4, 0, 0);
    CHECK(ap >= 0 && s && weft_tune_add_range(s, 0, WEFT_TUNE_INF, ap));
    if (with_2x2) {
        s = weft_tune_add_section(t, WEFT_COLL_ALLREDUCE, 4, 0, 0);
        CHECK(s != NULL);
        s->gpn = 2;
        CHECK(weft_tune_add_range(s, 0, 65535, ap) &&
              weft_tune_add_range(s, 65536, WEFT_TUNE_INF, -1));
    }
    return t;
}

static void test_table_shape(void) {
    char list[1400];
    snprintf(list, sizeof list, "%s/../nodes:%s/../../../algorithms/allreduce_hierarchical.weft",
             algos_dir, algos_dir);
    weft_diag *d = weft_diag_new();
    weft_registry *base = load(list, d), *r = NULL;
    CHECK(weft_registry_size(base) >= 1);
    uint64_t ap_hash = weft_tune_algo_hash(weft_registry_get(base, 0));
    weft_call c = {WEFT_COLL_ALLREDUCE, WEFT_DTYPE_FLOAT, WEFT_OP_SUM, 256, 0, 0, 4, 0, 0};
    weft_select_expl e;

    /* both sections: 2 x 2 follows its own (all-pairs to 64 KB, NCCL above) */
    CHECK(weft_registry_set_table(base, shape_table(ap_hash, 1), d) == WEFT_OK);
    CHECK(weft_registry_for_nodes(base, 4, 2, &r, d) == WEFT_OK);
    CHECK(weft_registry_select_explain(r, &c, NULL, &e) == 0);
    CHECK(e.basis == WEFT_SELECT_TABLE && e.section && e.section->gpn == 2);
    c.count = 1 << 18; /* 1 MB: the 2 x 2 section says NCCL, whatever the files would pick */
    CHECK_STR(selected(r, c), "-");
    CHECK(weft_registry_select_explain(r, &c, NULL, &e) == -1 && e.basis == WEFT_SELECT_TABLE);
    CHECK_STR(e.why, WEFT_SELECT_WHY_TABLE_NCCL);
    weft_registry_free(r);
    /* one node of 4: the one-node section (all-pairs at every size) */
    CHECK(weft_registry_for_nodes(base, 4, 4, &r, d) == WEFT_OK);
    CHECK(weft_registry_select_explain(r, &c, NULL, &e) == 0);
    CHECK(e.basis == WEFT_SELECT_TABLE && e.section && e.section->gpn == 4);
    weft_registry_free(r);

    /* only a one-node section: across nodes it does not apply; the ranking decides */
    CHECK(weft_registry_set_table(base, shape_table(ap_hash, 0), d) == WEFT_OK);
    CHECK(weft_registry_for_nodes(base, 4, 2, &r, d) == WEFT_OK);
    CHECK_STR(selected(r, c), "allreduce_hierarchical");
    CHECK(weft_registry_select_explain(r, &c, NULL, &e) >= 0);
    CHECK(e.basis == WEFT_SELECT_NETWORK && e.section == NULL && e.gpus_per_node == 2);
    weft_registry_free(r);
    /* the base registry (no node shape) answers as one node */
    CHECK(weft_registry_select_explain(base, &c, NULL, &e) == 0 && e.basis == WEFT_SELECT_TABLE);
    CHECK(e.gpus_per_node == 4);
    weft_registry_free(base);
    weft_diag_free(d);
}

static void test_add(void) {
    weft_registry *r = NULL;
    CHECK(weft_registry_new(&r) == WEFT_OK);
    weft_diag *d = weft_diag_new();
    /* ownership passes also on failure (ASan checks the leak) */
    weft_algo *a = weft_algo_new("sendonly", WEFT_COLL_SEND, 2, 1);
    CHECK(weft_registry_add(r, a, d) == WEFT_ERR_INPUT);
    CHECK(weft_registry_size(r) == 0);
    CHECK(weft_diag_count(d, WEFT_SEV_ERROR) >= 1);
    CHECK(weft_registry_add(r, NULL, d) == WEFT_ERR_USAGE);
    CHECK(weft_registry_add(NULL, weft_algo_new("x", WEFT_COLL_ALLREDUCE, 2, 2), d) ==
          WEFT_ERR_USAGE);
    CHECK(weft_registry_load(r, NULL, d) == WEFT_ERR_USAGE);
    CHECK(weft_registry_load(NULL, "", d) == WEFT_ERR_USAGE);
    CHECK(weft_registry_load(r, "", d) == WEFT_OK);
    CHECK(weft_registry_new(NULL) == WEFT_ERR_USAGE);
    CHECK(weft_registry_size(NULL) == 0 && weft_registry_get(NULL, 0) == NULL);
    weft_registry_free(r);
    weft_registry_free(NULL);
    weft_diag_free(d);
}

/* a written to XML (which must contain want) and read back: equal to a, owned by the caller. */
static weft_algo *round_trip(const weft_algo *a, const char *want) {
    char *x = NULL;
    weft_algo *back = NULL;
    CHECK(weft_ir_write_string(a, &x) == WEFT_OK);
    CHECK(x && strstr(x, want) != NULL);
    CHECK(x && weft_ir_read_memory(x, strlen(x), "ar", &back, NULL) == WEFT_OK);
    CHECK(back && weft_algo_equal(a, back, NULL, 0));
    free(x);
    return back;
}

/* Launch modes (<algo launch>): an algorithm serves only the modes it names, a call's mode being
 * whether its stream captures a graph and whether its buffers are registered; a rooted
 * collective's calls count as unregistered. */
static void test_launch(void) {
    weft_registry *base = load(algos_dir, NULL), *r = NULL;
    CHECK(weft_registry_new(&r) == WEFT_OK);
    weft_algo *ar = NULL, *bc = NULL;
    for (size_t i = 0; i < weft_registry_size(base); i++) {
        const weft_algo *a = weft_registry_get(base, i);
        if (strcmp(a->name, "ar2_small") == 0) ar = weft_algo_clone(a);
        if (strcmp(a->name, "bc2_root0") == 0) bc = weft_algo_clone(a);
    }
    CHECK(ar && bc);
    if (ar && bc) {
        ar->launch = bc->launch = 1u << WEFT_LAUNCH_EAGER | 1u << WEFT_LAUNCH_GRAPH;
        CHECK(weft_registry_add(r, ar, NULL) == WEFT_OK);
        CHECK(weft_registry_add(r, bc, NULL) == WEFT_OK);
        weft_call c = call(WEFT_COLL_ALLREDUCE, WEFT_DTYPE_FLOAT, 4, 0);
        CHECK_STR(selected(r, c), "ar2_small");
        c.flags = WEFT_CALL_GRAPH;
        CHECK_STR(selected(r, c), "ar2_small");
        c.flags = WEFT_CALL_REGISTERED;
        CHECK_STR(selected(r, c), "-");
        CHECK(strstr(why(r, c), "no algorithm for this launch mode") != NULL);
        c.flags = WEFT_CALL_GRAPH | WEFT_CALL_REGISTERED;
        CHECK_STR(selected(r, c), "-");
        weft_call b = call(WEFT_COLL_BROADCAST, WEFT_DTYPE_FLOAT, 8, 0);
        b.flags = WEFT_CALL_REGISTERED;
        CHECK_STR(selected(r, b), "bc2_root0");
        /* the mask survives the writer and the reader */
        weft_algo *back = round_trip(ar, " launch=\"eager graph\"");
        CHECK(back && back->launch == ar->launch);
        weft_algo_free(back);
    }
    weft_registry_free(r);
    weft_registry_free(base);
}

/* A CUDA-graph bound (<algo graphMaxBytes>): captured calls are served only up to it, eager
 * ones up to maxBytes; a table (which measures each mode apart) is not bounded by it. */
static void test_graph_bound(void) {
    weft_registry *base = load(algos_dir, NULL), *r = NULL;
    CHECK(weft_registry_new(&r) == WEFT_OK);
    weft_algo *ar = NULL;
    for (size_t i = 0; i < weft_registry_size(base); i++)
        if (strcmp(weft_registry_get(base, i)->name, "ar2_small") == 0)
            ar = weft_algo_clone(weft_registry_get(base, i));
    CHECK(ar != NULL);
    if (ar) {
        ar->min_bytes = 0, ar->max_bytes = 1 << 20, ar->graph_max_bytes = 64;
        CHECK(weft_registry_add(r, ar, NULL) == WEFT_OK);
        weft_call c = call(WEFT_COLL_ALLREDUCE, WEFT_DTYPE_FLOAT, 16, 0); /* 64 B */
        c.flags = WEFT_CALL_GRAPH;
        CHECK_STR(selected(r, c), "ar2_small");
        c.count = 17; /* 68 B: eager yes, captured no */
        c.flags = 0;
        CHECK_STR(selected(r, c), "ar2_small");
        c.flags = WEFT_CALL_GRAPH;
        CHECK_STR(selected(r, c), "-");
        CHECK(strstr(why(r, c), "CUDA-graph bound") != NULL);
        c.count = 1 << 18; /* 1 MB: the eager bound holds */
        c.flags = 0;
        CHECK_STR(selected(r, c), "ar2_small");
        c.count = (1 << 18) + 1;
        CHECK_STR(selected(r, c), "-");
        /* the bound survives the writer and the reader, and equality sees it */
        weft_algo *back = round_trip(ar, " graphMaxBytes=\"64\"");
        CHECK(back && back->graph_max_bytes == 64);
        if (back) back->graph_max_bytes = 128;
        CHECK(back && !weft_algo_equal(ar, back, NULL, 0));
        weft_algo_free(back);
    }
    weft_registry_free(r);
    weft_registry_free(base);
}

/* A 2-rank ring shaped like msccl-tools' (send, then receive-reduce-and-forward): it needs 2
 * messages buffered per connection. */
static const char ring2_xml[] =
    "<algo name=\"ring2\" proto=\"Simple\" nchannels=\"1\" nchunksperloop=\"2\" ngpus=\"2\" "
    "coll=\"allreduce\" inplace=\"1\" outofplace=\"0\" minBytes=\"0\" maxBytes=\"0\">\n"
    "%s%s</algo>\n";
static const char ring2_gpu[] =
    " <gpu id=\"%d\" i_chunks=\"2\" o_chunks=\"0\" s_chunks=\"0\">\n"
    "  <tb id=\"0\" send=\"%d\" recv=\"%d\" chan=\"0\">\n"
    "   <step s=\"0\" type=\"s\" srcbuf=\"i\" srcoff=\"%d\" dstbuf=\"i\" dstoff=\"%d\" cnt=\"1\" "
    "depid=\"-1\" deps=\"-1\" hasdep=\"0\"/>\n"
    "   <step s=\"1\" type=\"rrcs\" srcbuf=\"i\" srcoff=\"%d\" dstbuf=\"i\" dstoff=\"%d\" "
    "cnt=\"1\" depid=\"-1\" deps=\"-1\" hasdep=\"0\"/>\n"
    "   <step s=\"2\" type=\"r\" srcbuf=\"i\" srcoff=\"%d\" dstbuf=\"i\" dstoff=\"%d\" cnt=\"1\" "
    "depid=\"-1\" deps=\"-1\" hasdep=\"0\"/>\n"
    "  </tb>\n </gpu>\n";

/* The registry verifies with the connection buffers the runtime will have (WEFT_FIFO): a
 * schedule that needs more is refused, with a note saying how many it needs. */
static void test_fifo(void) {
    char dir[] = "/tmp/weft_fifo_XXXXXX", g0[1024], g1[1024], text[2600], msg[800];
    CHECK(mkdtemp(dir) != NULL);
    snprintf(g0, sizeof g0, ring2_gpu, 0, 1, 1, 0, 0, 1, 1, 0, 0);
    snprintf(g1, sizeof g1, ring2_gpu, 1, 0, 0, 1, 1, 0, 0, 1, 1);
    snprintf(text, sizeof text, ring2_xml, g0, g1);
    write_file(dir, "ring2.xml", text);
    const char *specs[] = {NULL, "Simple=2x128K", "Simple=1x128K", "LL=1x32K"};
    const size_t want[] = {1, 1, 0, 1};
    for (int i = 0; i < 4; i++) {
        if (specs[i])
            setenv("WEFT_FIFO", specs[i], 1);
        else
            unsetenv("WEFT_FIFO");
        weft_env_reset();
        weft_diag *d = weft_diag_new();
        weft_registry *r = load(dir, d);
        CHECK(weft_registry_size(r) == want[i]);
        snprintf(msg, sizeof msg,
                 "%s/ring2.xml: note: the runtime buffers 1 message per Simple connection "
                 "(WEFT_FIFO); this schedule needs 2",
                 dir);
        CHECK(count_diag(d, msg) == (want[i] ? 0 : 1));
        weft_registry_free(r);
        weft_diag_free(d);
    }
    unsetenv("WEFT_FIFO");
    weft_env_reset();
    snprintf(text, sizeof text, "%s/ring2.xml", dir);
    unlink(text);
    rmdir(dir);
}

/* The NCCL versions weft's device code runs on: from the headers' version to the last patch of
 * their minor, older patches and later minors refused; versions written as NCCL writes them. */
static void test_nccl_versions(void) {
    char b[64];
    CHECK(weft_nccl_version_supported(NCCL_VERSION_CODE));
    CHECK(!weft_nccl_version_supported(NCCL_VERSION_CODE - 1));
    CHECK(weft_nccl_version_supported(NCCL_VERSION(NCCL_MAJOR, NCCL_MINOR, 99)));
    CHECK(!weft_nccl_version_supported(NCCL_VERSION(NCCL_MAJOR, NCCL_MINOR + 1, 0)));
    CHECK(!weft_nccl_version_supported(NCCL_VERSION(NCCL_MAJOR + 1, 0, 0)));
    CHECK(!weft_nccl_version_supported(0));
    CHECK_STR(weft_nccl_version_str(22809, b, sizeof b), "2.28.9");
    CHECK_STR(weft_nccl_version_str(23007, b, sizeof b), "2.30.7");
    CHECK_STR(weft_nccl_version_str(2803, b, sizeof b), "2.8.3");
    char want[64];
    snprintf(want, sizeof want, "%d.%d.%d to %d.%d.x", NCCL_MAJOR, NCCL_MINOR, NCCL_PATCH,
             NCCL_MAJOR, NCCL_MINOR);
    CHECK_STR(weft_nccl_range_str(b, sizeof b), want);
    char advice[640];
    CHECK(strstr(weft_nccl_version_advice(NCCL_VERSION_CODE - 1, advice, sizeof advice),
                 " is older than the device API weft was built for (weft supports NCCL ") != NULL);
    CHECK(strstr(weft_nccl_version_advice(NCCL_VERSION(NCCL_MAJOR, NCCL_MINOR + 2, 7), advice,
                                          sizeof advice),
                 " is newer than the device API weft was built for (weft supports NCCL ") != NULL);
}

/* The same algorithm as a .weft source and as the .xml compiled from it: both load, and one
 * warning on the later file says which one is used, whichever order they come in. */
static void test_twice_loaded(void) {
    char dir[] = "/tmp/weft_registry_XXXXXX";
    CHECK(mkdtemp(dir) != NULL);
    write_file(dir, "ring.weft",
               "param N = 2;\n"
               "algorithm ring_twice {\n"
               "    collective allreduce;\n"
               "    ranks      N;\n"
               "    chunks     N;\n"
               "    inplace;\n"
               "}\n"
               "for s in 0..N-1 {\n"
               "    for i in 0..N {\n"
               "        let r = (i + s) % N;\n"
               "        reduce input[r][i] -> input[(r + 1) % N][i];\n"
               "    }\n"
               "}\n"
               "for s in 0..N-1 {\n"
               "    for i in 0..N {\n"
               "        let r = (i - 1 + s) % N;\n"
               "        copy input[r][i] -> input[(r + 1) % N][i];\n"
               "    }\n"
               "}\n");
    char src[600], xml[600], paths[1300], msg[2000];
    snprintf(src, sizeof src, "%s/ring.weft", dir);
    snprintf(xml, sizeof xml, "%s/ring.xml", dir);
    weft_diag *d = weft_diag_new();
    weft_algo *a = NULL;
    char *text = NULL;
    CHECK(weft_cc_load_file(src, NULL, &a, d) == WEFT_OK);
    if (a) CHECK(weft_ir_write_string(a, &text) == WEFT_OK);
    if (text) write_file(dir, "ring.xml", text);
    free(text);
    weft_algo_free(a);
    weft_diag_clear(d);
    /* one folder: ring.weft sorts first */
    weft_registry *r = load(dir, d);
    CHECK(weft_registry_size(r) == 2);
    snprintf(msg, sizeof msg,
             "%s: warning: algorithm 'ring_twice' (allreduce) is loaded twice, as .weft and as "
             ".xml: also from %s, which is used (it comes first in load order, so it serves every "
             "call both fit)",
             xml, src);
    CHECK(count_diag(d, msg) == 1);
    CHECK(weft_diag_count(d, WEFT_SEV_WARNING) == 1);
    weft_registry_free(r);
    weft_diag_clear(d);
    /* named in the other order: the .xml is used */
    snprintf(paths, sizeof paths, "%s:%s", xml, src);
    r = load(paths, d);
    snprintf(msg, sizeof msg,
             "%s: warning: algorithm 'ring_twice' (allreduce) is loaded twice, as .weft and as "
             ".xml: also from %s, which is used (it comes first in load order, so it serves every "
             "call both fit)",
             src, xml);
    CHECK(count_diag(d, msg) == 1);
    CHECK(weft_diag_count(d, WEFT_SEV_WARNING) == 1);
    weft_registry_free(r);
    weft_diag_free(d);
    unlink(src);
    unlink(xml);
    rmdir(dir);
}

int main(int argc, char **argv) {
    if (argc != 2) {
        fprintf(stderr, "usage: test_registry ALGOS_DIR\n");
        return 2;
    }
    algos_dir = argv[1];
    test_order();
    test_select();
    test_pure();
    test_bad_files();
    test_for_ranks();
    test_fifo();
    test_for_nodes();
    test_rank();
    test_table_shape();
    test_add();
    test_launch();
    test_graph_bound();
    test_nccl_versions();
    test_twice_loaded();
    CHECK_DONE();
}
