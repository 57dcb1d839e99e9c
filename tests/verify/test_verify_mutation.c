/* test_verify_mutation.c — random single mutations (fixed seed) of correct schedules: the
 * conformance corpus, weft's own (the .weft files in the folders given with --weft-dir, compiled
 * with the `// args: -D ...` of their first line; those that do not compile are skipped) and
 * schedules generated here. Each mutant runs on the CPU executor (several counts, types, ops,
 * call modes, interleavings and buffer sizes) and through the verifier; every mutant that
 * computes a wrong result or stalls must be rejected by the verifier. Prints what the verifier
 * rejects beyond that, by kind.
 * With --counts, the converse over the same schedules and mutants: every one that verifies
 * computes the right result for every count from 1 to 4k (k chunks per segment; all counts up
 * to 64, then a spread), since a verified schedule is right for every count.
 *   test_verify_mutation [--counts] [--mutants N] [--seed S] [--weft-dir DIR]... [-v]
 *   (N per schedule, default 40) */
#include "check.h"
#include "gen.h"
#include "weft_ir.h"
#ifdef WEFT_HAVE_COMPILER
#include "weft_compiler.h"
#endif

#include <stdlib.h>
#include <string.h>

enum {
    M_DROP,
    M_NOP,
    M_SWAP,
    M_OFFSET,
    M_TYPE,
    M_PEER,
    M_DEP,
    M_COUNT,
    M_BUF,
    M_CHAN,
    M_PARK,
    M_KINDS
};
static const char *const kind_names[M_KINDS] = {
    "drop", "nop", "swap", "offset", "type", "peer", "dep", "count", "buffer", "channel", "park"};

static uint64_t rng;
static uint32_t rnd(uint32_t n) {
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return n ? (uint32_t)(rng % n) : 0;
}

/* Points every dependency on (tb t, step from) at step `to` (-1: drop the dependency). */
static void retarget(weft_gpu *g, int32_t t, int32_t from, int32_t to) {
    for (int32_t u = 0; u < g->ntbs; u++)
        for (int32_t x = 0; x < g->tbs[u].nsteps; x++) {
            weft_step *st = &g->tbs[u].steps[x];
            if (st->depid != t || st->deps != from) continue;
            if (to < 0)
                st->depid = st->deps = -1;
            else
                st->deps = to;
        }
}

/* Adds, on rank r, a tb that runs after every other tb of the rank and moves output chunk x
 * through output chunk y and back (saving y in a new scratch chunk): right for every count
 * when y's chunk slot is not after x's, and at chunk level always (issue 30). */
static int park(weft_algo *a, int32_t r, char *what, size_t len) {
    weft_gpu *g = &a->gpus[r];
    if (weft_coll_rooted(a->coll) && r != a->root) return -1;
    if (g->o_chunks < 2) return -1;
    int32_t x = (int32_t)rnd((uint32_t)g->o_chunks), y = (int32_t)rnd((uint32_t)g->o_chunks);
    if (x == y) return -1;
    int32_t ntb = g->ntbs, sc = g->s_chunks;
    weft_tb *tb = weft_gpu_add_tb(g, -1, -1, 0);
    if (tb == NULL) return -1;
    g->s_chunks++;
    for (int32_t u = 0; u < ntb; u++) {
        weft_tb *ut = &g->tbs[u];
        if (ut->nsteps == 0) continue;
        ut->steps[ut->nsteps - 1].hasdep = 1;
        weft_step n = weft_step_make(WEFT_STEP_NOP, WEFT_BUF_INPUT, 0, WEFT_BUF_INPUT, 0, 0);
        n.depid = u;
        n.deps = ut->nsteps - 1;
        if (weft_tb_add_step(&g->tbs[ntb], &n) < 0) return -1;
    }
    tb = &g->tbs[ntb];
    if (gen_add(tb, WEFT_STEP_CPY, WEFT_BUF_OUTPUT, y, WEFT_BUF_SCRATCH, sc, 1) ||
        gen_add(tb, WEFT_STEP_CPY, WEFT_BUF_OUTPUT, x, WEFT_BUF_OUTPUT, y, 1) ||
        gen_add(tb, WEFT_STEP_CPY, WEFT_BUF_OUTPUT, y, WEFT_BUF_OUTPUT, x, 1) ||
        gen_add(tb, WEFT_STEP_CPY, WEFT_BUF_SCRATCH, sc, WEFT_BUF_OUTPUT, y, 1))
        return -1;
    snprintf(what, len, "rank %d: park output chunk %d in output chunk %d", r, x, y);
    return 0;
}

/* Applies one mutation of kind k at a random place; returns 0 when it changed something,
 * with a description in what. */
static int mutate(weft_algo *a, int k, char *what, size_t len) {
    int32_t r = (int32_t)rnd((uint32_t)a->ngpus);
    weft_gpu *g = &a->gpus[r];
    if (k == M_PARK) return park(a, r, what, len);
    if (g->ntbs == 0) return -1;
    int32_t t = (int32_t)rnd((uint32_t)g->ntbs);
    weft_tb *tb = &g->tbs[t];
    if (k == M_PEER || k == M_CHAN) {
        if (k == M_CHAN) {
            if (a->nchannels < 2) return -1;
            int32_t c = (int32_t)rnd((uint32_t)a->nchannels);
            if (c == tb->chan) return -1;
            snprintf(what, len, "rank %d tb %d: chan %d -> %d", r, t, tb->chan, c);
            tb->chan = c;
            return 0;
        }
        int32_t *p = rnd(2) ? &tb->send : &tb->recv;
        if (*p < 0 || a->ngpus < 3) return -1;
        int32_t q = (int32_t)rnd((uint32_t)a->ngpus);
        if (q == r || q == *p) return -1;
        snprintf(what, len, "rank %d tb %d: %s %d -> %d", r, t, p == &tb->send ? "send" : "recv",
                 *p, q);
        *p = q;
        return 0;
    }
    if (tb->nsteps == 0) return -1;
    int32_t s = (int32_t)rnd((uint32_t)tb->nsteps);
    weft_step *st = &tb->steps[s];
    unsigned f = weft_step_flags(st->type);
    snprintf(what, len, "rank %d tb %d step %d: %s", r, t, s, kind_names[k]);
    size_t n = strlen(what);
    switch (k) {
    case M_DROP:
        retarget(g, t, s, s > 0 ? s - 1 : -1);
        if (s > 0) tb->steps[s - 1].hasdep = 1;
        for (int32_t x = s + 1; x < tb->nsteps; x++)
            retarget(g, t, x, x - 1);
        memmove(&tb->steps[s], &tb->steps[s + 1], (size_t)(tb->nsteps - s - 1) * sizeof *st);
        tb->nsteps--;
        return 0;
    case M_NOP:
        if (st->type == WEFT_STEP_NOP) return -1;
        st->type = WEFT_STEP_NOP;
        return 0;
    case M_SWAP: {
        if (s + 1 >= tb->nsteps) return -1;
        weft_step tmp = tb->steps[s];
        tb->steps[s] = tb->steps[s + 1];
        tb->steps[s + 1] = tmp;
        for (int32_t u = 0; u < g->ntbs; u++)
            for (int32_t x = 0; x < g->tbs[u].nsteps; x++) {
                weft_step *y = &g->tbs[u].steps[x];
                if (y->depid != t) continue;
                if (y->deps == s)
                    y->deps = s + 1;
                else if (y->deps == s + 1)
                    y->deps = s;
            }
        tb->steps[s].hasdep = tb->steps[s + 1].hasdep =
            (uint8_t)(tb->steps[s].hasdep | tb->steps[s + 1].hasdep);
        return 0;
    }
    case M_OFFSET: {
        int src = (f & WEFT_STEP_F_READS_SRC) && (!(f & WEFT_STEP_F_WRITE) || rnd(2));
        if (!src && !(f & WEFT_STEP_F_WRITE)) return -1;
        int32_t *o = src ? &st->srcoff : &st->dstoff;
        int32_t d = rnd(2) ? 1 : -1;
        if (*o + d < 0) d = 1;
        snprintf(what + n, len - n, " %soff %d -> %d", src ? "src" : "dst", *o, *o + d);
        *o += d;
        return 0;
    }
    case M_TYPE: {
        weft_step_type nt = (weft_step_type)rnd(WEFT_STEP_COUNT);
        if (nt == st->type) return -1;
        st->type = nt;
        return 0;
    }
    case M_DEP:
        if (st->depid >= 0 && rnd(2)) {
            st->depid = st->deps = -1;
            return 0;
        } else {
            int32_t u = (int32_t)rnd((uint32_t)g->ntbs);
            if (g->tbs[u].nsteps == 0) return -1;
            int32_t x = (int32_t)rnd((uint32_t)g->tbs[u].nsteps);
            if (u == t && x >= s) return -1;
            if (st->depid == u && st->deps == x) return -1;
            st->depid = u;
            st->deps = x;
            g->tbs[u].steps[x].hasdep = 1;
            return 0;
        }
    case M_COUNT: {
        if (st->type == WEFT_STEP_NOP) return -1;
        int32_t c = st->cnt + (rnd(2) || st->cnt == 1 ? 1 : -1);
        snprintf(what + n, len - n, " cnt %d -> %d", st->cnt, c);
        st->cnt = c;
        return 0;
    }
    case M_BUF: {
        int src = (f & WEFT_STEP_F_READS_SRC) && (!(f & WEFT_STEP_F_WRITE) || rnd(2));
        if (!src && !(f & WEFT_STEP_F_WRITE)) return -1;
        weft_buf *b = src ? &st->srcbuf : &st->dstbuf;
        weft_buf nb = (weft_buf)rnd(WEFT_BUF_COUNT);
        if (nb == *b) return -1;
        *b = nb;
        return 0;
    }
    default: return -1;
    }
}

typedef struct stats {
    int mutants, rejected, exec_bad, exec_bad_accepted, structure;
    int only[WEFT_VERIFY_CLASS_COUNT]; /* rejected, right on the executor, one class of finding */
    int extra_multi;                   /* ... several classes */
    int by_kind[M_KINDS], by_kind_rejected[M_KINDS];
} stats;

static int verbose;

/* Runs m on the executor in a spread of configurations; 1 when any run is wrong or stalls. */
static int exec_fails(const weft_algo *m, char *why, size_t len) {
    int32_t k = weft_algo_chunks_per_seg(m);
    if (k < 1) k = 1;
    static const struct {
        weft_dtype t;
        weft_redop op;
        int count; /* 0: 3k - 1 (every chunk holds data, the last one short), 1: one, 2: k */
    } cfg[] = {
        {WEFT_DTYPE_INT32, WEFT_OP_SUM, 0}, {WEFT_DTYPE_INT32, WEFT_OP_SUM, 0},
        {WEFT_DTYPE_INT64, WEFT_OP_SUM, 0}, {WEFT_DTYPE_UINT32, WEFT_OP_PROD, 0},
        {WEFT_DTYPE_UINT8, WEFT_OP_MAX, 1}, {WEFT_DTYPE_FLOAT, WEFT_OP_SUM, 2},
    };
    weft_diag *d = weft_diag_new();
    int bad = 0;
    for (int mode = 0; mode < 2 && !bad; mode++) {
        if (mode == 0 ? !m->inplace : !m->outofplace) continue;
        for (size_t i = 0; i < sizeof cfg / sizeof *cfg && !bad; i++) {
            weft_exec_opts eo;
            weft_exec_opts_init(&eo);
            eo.inplace = (uint8_t)(mode == 0);
            eo.dtype = cfg[i].t;
            eo.op = cfg[i].op;
            eo.count = cfg[i].count == 0 ? 3 * (int64_t)k - 1 : cfg[i].count == 1 ? 1 : k;
            eo.seed = 1000 + i;
            eo.sched_seed = i;             /* round robin, then random interleavings */
            eo.fifo_slots = i % 2 ? 2 : 0; /* the verifier's default buffering, and unbounded */
            weft_diag_clear(d);
            weft_result r = weft_ir_exec(m, &eo, d, NULL);
            if (r != WEFT_OK) {
                bad = 1;
                const weft_diag_entry *e = weft_diag_get(d, 0);
                snprintf(why, len, "%s count %lld %s sched %llu: %s",
                         mode == 0 ? "in-place" : "out-of-place", (long long)eo.count,
                         weft_dtype_name(eo.dtype), (unsigned long long)eo.sched_seed,
                         e ? e->msg : weft_result_str(r));
            }
        }
    }
    weft_diag_free(d);
    return bad;
}

/* ---- --counts: verified => right for every count ------------------------------------- */
static int counts_mode;
static int64_t count_runs;
static int count_sources, count_sources_verified, count_mutants_verified;

/* The counts a schedule with k chunks per segment is run for: every count up to 4k, or up to 64
 * and then a spread to 4k (k +- 1, 2k +- 1, 3k +- 1, 4k - 1, 4k and a few others; a count of
 * t <= k already puts t valid slots at an element position, as any larger count can), then a
 * few counts up to 4096 while the buffers stay small. */
static int count_list(const weft_algo *a, int32_t k, int64_t *out, int max) {
    int n = 0;
    int64_t top = 4 * (int64_t)k, dense = top < 64 ? top : 64;
    for (int64_t c = 1; c <= dense && n < max; c++)
        out[n++] = c;
    if (top > 64) {
        const int64_t spread[] = {k - 1,
                                  k,
                                  k + 1,
                                  2 * (int64_t)k - 1,
                                  2 * (int64_t)k + 1,
                                  3 * (int64_t)k - 1,
                                  3 * (int64_t)k + 1,
                                  top - 1,
                                  top,
                                  top / 3 + 1,
                                  top / 2 + 3,
                                  (top * 5) / 7};
        for (size_t i = 0; i < sizeof spread / sizeof *spread && n < max; i++)
            if (spread[i] > 64) out[n++] = spread[i];
    }
    /* elements over all ranks' input and output per unit of count */
    int64_t per = (int64_t)a->ngpus * 2 * weft_algo_size_mult(a);
    const int64_t big[] = {127, 1000, 4093};
    for (size_t i = 0; i < sizeof big / sizeof *big && n < max; i++)
        if (big[i] > top && big[i] * per <= (1 << 20)) out[n++] = big[i];
    return n;
}

/* Runs a verified schedule for every count of count_list in each mode it declares (types, ops,
 * interleavings and buffer sizes rotating); 0 when all are right. */
static int counts_right(const weft_algo *m, const char *name, const char *what) {
    static const struct {
        weft_dtype t;
        weft_redop op;
    } cfg[] = {{WEFT_DTYPE_INT32, WEFT_OP_SUM},  {WEFT_DTYPE_FLOAT, WEFT_OP_SUM},
               {WEFT_DTYPE_INT64, WEFT_OP_PROD}, {WEFT_DTYPE_UINT32, WEFT_OP_MAX},
               {WEFT_DTYPE_DOUBLE, WEFT_OP_AVG}, {WEFT_DTYPE_UINT64, WEFT_OP_SUM}};
    int32_t k = weft_algo_chunks_per_seg(m);
    if (k < 1) k = 1;
    int64_t counts[96];
    int nc = count_list(m, k, counts, 96);
    weft_diag *d = weft_diag_new();
    int bad = 0;
    for (int mode = 0; mode < 2 && !bad; mode++) {
        if (mode == 0 ? !m->inplace : !m->outofplace) continue;
        for (int i = 0; i < nc && !bad; i++) {
            weft_exec_opts eo;
            weft_exec_opts_init(&eo);
            size_t c = (size_t)i % (sizeof cfg / sizeof *cfg);
            eo.inplace = (uint8_t)(mode == 0);
            eo.dtype = cfg[c].t;
            eo.op = cfg[c].op;
            eo.count = counts[i];
            eo.seed = 77 + (uint64_t)i;
            eo.sched_seed = (uint64_t)(i % 3);
            eo.fifo_slots = i % 2 ? 2 : 0;
            weft_diag_clear(d);
            count_runs++;
            if (weft_ir_exec(m, &eo, d, NULL) == WEFT_OK) continue;
            bad = 1;
            check_failures++;
            fprintf(stderr, "%s%s%s verifies but is wrong with %s count %lld (%s %s):\n", name,
                    what[0] ? ": " : "", what, mode == 0 ? "in-place" : "out-of-place",
                    (long long)eo.count, weft_dtype_name(eo.dtype), weft_redop_name(eo.op));
            weft_diag_print(d, stderr, WEFT_SEV_NOTE);
        }
    }
    weft_diag_free(d);
    return bad;
}

/* --counts: the schedule itself and nmut mutants; every one that verifies runs right at every
 * count. */
static void count_source(const weft_algo *src, const char *name, int nmut) {
    if (!weft_coll_runnable(src->coll)) return; /* custom: neither verified nor run */
    count_sources++;
    for (int i = -1; i < nmut; i++) {
        weft_algo *m = weft_algo_clone(src);
        char what[160] = "";
        if (m == NULL) {
            check_failures++;
            return;
        }
        int ok = i < 0;
        for (int tries = 0; tries < 50 && !ok; tries++)
            ok = mutate(m, (int)rnd(M_KINDS), what, sizeof what) == 0;
        if (ok && weft_ir_verify(m, NULL, NULL, NULL) == WEFT_OK) {
            if (i < 0)
                count_sources_verified++;
            else
                count_mutants_verified++;
            counts_right(m, name, what);
        } else if (i < 0) {
            check_failures++;
            fprintf(stderr, "%s: does not verify\n", name);
        }
        weft_algo_free(m);
    }
}

static void run_source(const weft_algo *src, const char *name, int nmut, stats *st) {
    if (counts_mode) {
        count_source(src, name, nmut);
        return;
    }
    for (int i = 0; i < nmut; i++) {
        weft_algo *m = weft_algo_clone(src);
        char what[160] = "", why[400] = "";
        int k = -1;
        if (m == NULL) {
            check_failures++;
            return;
        }
        for (int tries = 0; tries < 50; tries++) {
            k = (int)rnd(M_KINDS);
            if (mutate(m, k, what, sizeof what) == 0) break;
            k = -1;
        }
        if (k < 0) {
            weft_algo_free(m);
            continue;
        }
        st->mutants++;
        st->by_kind[k]++;
        weft_diag *d = weft_diag_new();
        weft_verify_summary sum;
        weft_result vr = weft_ir_verify(m, NULL, d, &sum);
        int rejected = vr != WEFT_OK;
        int ebad = exec_fails(m, why, sizeof why);
        st->rejected += rejected;
        st->by_kind_rejected[k] += rejected;
        st->exec_bad += ebad;
        if (sum.errors[WEFT_VERIFY_STRUCTURE] || sum.errors[WEFT_VERIFY_BOUNDS] ||
            sum.errors[WEFT_VERIFY_MATCH])
            st->structure++;
        if (ebad && !rejected) {
            st->exec_bad_accepted++;
            check_failures++;
            fprintf(stderr, "%s: mutant %d (%s) is wrong on the executor but verifies:\n  %s\n",
                    name, i, what, why);
        }
        if (rejected && !ebad) {
            int classes = 0, last = -1;
            for (int c = 0; c < WEFT_VERIFY_CLASS_COUNT; c++)
                if (sum.errors[c]) classes++, last = c;
            if (classes == 1)
                st->only[last]++;
            else
                st->extra_multi++;
            if (verbose) {
                fprintf(stderr, "%s: mutant %d (%s): rejected, right on the executor:\n", name, i,
                        what);
                weft_diag_print(d, stderr, WEFT_SEV_ERROR);
            }
        }
        weft_verify_summary_free(&sum);
        weft_diag_free(d);
        weft_algo_free(m);
    }
}

#ifdef WEFT_HAVE_COMPILER
/* Compiles every .weft file of dir (with the -D options on its first line) and mutates what
 * compiles; returns the number of schedules. */
static int run_weft_dir(const char *dir, int nmut, stats *st) {
    DIR *dp = opendir(dir);
    int n = 0;
    if (dp == NULL) return 0;
    char **names = NULL;
    size_t nn = 0, cap = 0;
    struct dirent *de;
    while ((de = readdir(dp)) != NULL) {
        size_t len = strlen(de->d_name);
        if (len < 6 || strcmp(de->d_name + len - 5, ".weft") != 0) continue;
        if (nn + 1 >= cap) {
            cap = cap ? 2 * cap : 32;
            char **nv = realloc(names, cap * sizeof *nv);
            if (nv == NULL) break;
            names = nv;
        }
        names[nn++] = weft_asprintf("%s/%s", dir, de->d_name);
    }
    closedir(dp);
    if (nn) qsort(names, nn, sizeof *names, gen_cmp_str);
    for (size_t i = 0; i < nn; i++) {
        char *text = NULL, *defs[16];
        size_t len = 0, nd = 0;
        if (weft_read_file(names[i], &text, &len, NULL) != WEFT_OK) continue;
        /* first line "// args: -D N=4 -D X=1" */
        if (strncmp(text, "// args:", 8) == 0) {
            char *eol = strchr(text, '\n');
            if (eol) *eol = '\0';
            for (char *tok = strtok(text + 8, " \t"); tok && nd < 16; tok = strtok(NULL, " \t"))
                if (strcmp(tok, "-D") != 0) defs[nd++] = tok;
        }
        weft_cc_options co;
        memset(&co, 0, sizeof co);
        co.defines = (const char *const *)defs;
        co.ndefines = nd;
        weft_algo *a = NULL;
        if (weft_cc_compile_file(names[i], &co, &a, NULL) == WEFT_OK && a != NULL) {
            run_source(a, names[i], nmut, st);
            n++;
        }
        weft_algo_free(a);
        free(text);
    }
    gen_free_list(names, nn);
    return n;
}
#endif

int main(int argc, char **argv) {
    int nmut = 40;
    uint64_t seed = 20240601;
    /* --counts under the sanitizers (tools/test.sh): a quarter of the mutants, the same paths */
    const char *san = getenv("WEFT_TEST_SAN");
    for (int i = 1; i < argc; i++)
        if (strcmp(argv[i], "--counts") == 0 && san && *san) nmut = 10;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--mutants") == 0 && i + 1 < argc)
            nmut = atoi(argv[++i]);
        else if (strcmp(argv[i], "--seed") == 0 && i + 1 < argc)
            seed = strtoull(argv[++i], NULL, 0);
        else if (strcmp(argv[i], "-v") == 0)
            verbose = 1;
        else if (strcmp(argv[i], "--counts") == 0)
            counts_mode = 1;
        else if (strcmp(argv[i], "--weft-dir") == 0 && i + 1 < argc)
            i++; /* below, after the seed is set */
    }
    rng = (seed ^ 0x9E3779B97F4A7C15ull) * 0xBF58476D1CE4E5B9ull | 1;
    stats st;
    memset(&st, 0, sizeof st);
    int nsrc = 0;
    size_t n = 0;
    char **files = gen_corpus(&n);
    for (size_t i = 0; i < n; i++) {
        weft_algo *a = NULL;
        if (weft_ir_read_file(files[i], &a, NULL) != WEFT_OK) {
            fprintf(stderr, "%s: read failed\n", files[i]);
            check_failures++;
            continue;
        }
        run_source(a, files[i], nmut, &st);
        nsrc++;
        weft_algo_free(a);
    }
    gen_free_list(files, n);
    /* generated schedules: every collective, both modes, rooted ones with a non-zero root */
    static const weft_coll colls[] = {
        WEFT_COLL_ALLREDUCE, WEFT_COLL_ALLGATHER, WEFT_COLL_REDUCESCATTER, WEFT_COLL_ALLTOALL,
        WEFT_COLL_BROADCAST, WEFT_COLL_REDUCE,    WEFT_COLL_GATHER,        WEFT_COLL_SCATTER};
    for (size_t c = 0; c < sizeof colls / sizeof *colls; c++) {
        weft_algo *a = gen_simple(colls[c], 4, 2);
        CHECK(a != NULL);
        if (a) run_source(a, weft_coll_name(colls[c]), nmut, &st);
        nsrc++;
        weft_algo_free(a);
    }
    int nweft = 0;
#ifdef WEFT_HAVE_COMPILER
    for (int i = 1; i < argc; i++)
        if (strcmp(argv[i], "--weft-dir") == 0 && i + 1 < argc)
            nweft += run_weft_dir(argv[++i], nmut, &st);
#endif
    nsrc += nweft;
    weft_algo *ring = gen_ring_allreduce(4, 2);
    CHECK(ring != NULL);
    if (ring) run_source(ring, "ring allreduce", 2 * nmut, &st);
    nsrc++;
    weft_algo_free(ring);

    if (counts_mode) {
        printf("%d schedules (%zu conformance files, %d compiled from .weft, %d generated) and "
               "%d of their mutants (%d each, seed %llu) verify and run right for counts 1 .. 4k: "
               "%lld executor runs\n",
               count_sources_verified, n, nweft, nsrc - (int)n - nweft, count_mutants_verified,
               nmut, (unsigned long long)seed, (long long)count_runs);
        CHECK(count_sources_verified == count_sources && count_sources >= nsrc - 4);
        CHECK(count_mutants_verified >= count_sources);
        CHECK_DONE();
    }
    printf("%d mutants of %d schedules (%zu conformance files, %d compiled from .weft, %d "
           "generated; seed %llu)\n",
           st.mutants, nsrc, n, nweft, nsrc - (int)n - nweft, (unsigned long long)seed);
    printf("  wrong or stalled on the CPU executor: %d, rejected by the verifier: %d of them\n",
           st.exec_bad, st.exec_bad - st.exec_bad_accepted);
    printf("  rejected by the verifier: %d (%d malformed: structure, bounds or matching)\n",
           st.rejected, st.structure);
    printf("  rejected although right on every executor run: %d\n",
           st.rejected - (st.exec_bad - st.exec_bad_accepted));
    for (int c = 0; c < WEFT_VERIFY_CLASS_COUNT; c++)
        if (st.only[c])
            printf("    %-14s alone: %d\n", weft_verify_class_name((weft_verify_class)c),
                   st.only[c]);
    if (st.extra_multi) printf("    several kinds:       %d\n", st.extra_multi);
    printf("  accepted by both: %d\n", st.mutants - st.rejected - st.exec_bad_accepted);
    printf("  per mutation (rejected/made):");
    for (int k = 0; k < M_KINDS; k++)
        printf(" %s %d/%d", kind_names[k], st.by_kind_rejected[k], st.by_kind[k]);
    printf("\n");
    CHECK(st.mutants >= 10 * nsrc);
    CHECK_DONE();
}
