/* cmd_library.c — `weft library`: compiles, verifies and CPU-executes the algorithm library for
 * the shapes each file's `// test:` lines list, and prints a table. */
#include "commands.h"
#include "datadir.h"
#include "weft_compiler.h"
#include "weft_ir.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

/* The CPU runs made for every shape, in every call mode the algorithm declares. Counts are
 * relative to nchunksperloop K, so that some are not multiples of the chunks per segment and one
 * leaves most chunks empty; the interleavings and FIFO bounds vary too. */
typedef struct lib_run {
    weft_dtype dtype;
    weft_redop op;
    int64_t kmul, kadd; /* count = K * kmul + kadd */
    uint64_t sched_seed;
    int32_t fifo;
} lib_run;

static const lib_run lib_runs[] = {
    {WEFT_DTYPE_FLOAT, WEFT_OP_SUM, 4, 0, 0, 0},     {WEFT_DTYPE_INT32, WEFT_OP_MAX, 3, 1, 7, 0},
    {WEFT_DTYPE_BFLOAT16, WEFT_OP_PROD, 0, 1, 0, 2}, {WEFT_DTYPE_DOUBLE, WEFT_OP_MIN, 2, 3, 3, 2},
    {WEFT_DTYPE_UINT8, WEFT_OP_SUM, 0, 5, 0, 0},
};
#define LIB_NRUNS ((int)(sizeof lib_runs / sizeof *lib_runs))
_Static_assert(LIB_NRUNS == 5, "weft library --help says 5 runs per mode");

typedef struct lib_opts {
    const char *shape; /* --shape: replaces the files' test shapes */
    int64_t count;     /* --count: every run uses this count (0: the counts above) */
    const char **incs; /* -I */
    size_t nincs;
    int quiet;
} lib_opts;

typedef struct lib_totals {
    int files, shapes, failed, runs;
    double seconds;
} lib_totals;

static double now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

enum { OPT_SHAPE = 256, OPT_COUNT };

static const weft_opt library_opts[] = {
    WEFT_OPT_TEXT(STR, OPT_SHAPE, "shape", "S",
                  "this shape instead of the files' test lines (e.g.\n"
                  "N=8,C=2)"),
    WEFT_OPT_INT(OPT_COUNT, "count", "N", 1, 1ull << 32,
                 "elements per segment in every CPU run (default:\n"
                 "relative to the chunk count, e.g. 4K, 3K+1, 1)"),
    WEFT_OPT_TEXT(DIR, 'I', "include", "DIR", "include directory for the compiler"),
    WEFT_OPT_FLAG('q', "quiet", "print failing rows and the summary only"),
    {0}};

const weft_cmd_spec weft_spec_library = {
    .name = "library",
    .summary = "compile, verify and CPU-execute the algorithm library; print a table",
    .synopsis = "[options] [DIR|FILE.weft]...",
    .description =
        "Compiles every algorithm file (default: $WEFT_ALGO_DIR, else the library installed\n"
        "with this weft, DATADIR/weft/algorithms, else the .weft files in ./algorithms) for each\n"
        "shape its `// test:` lines list, verifies the XML, runs it on the CPU executor in\n"
        "every call mode it declares (5 runs per mode: several types, ops, counts and\n"
        "interleavings), and prints one table row per shape.\n"
        "\n"
        "A test line lists shapes separated by spaces, each NAME=VALUE[,NAME=VALUE...]:\n"
        "    // test: N=2 N=3 N=8,C=2\n"
        "\n"
        "Columns: steps and tbs over all ranks, tb/rank the most thread blocks on one rank,\n"
        "depth the critical path in steps, ms the wall time of compiling, verifying and\n"
        "running.",
    .opts = library_opts,
    .operands = WEFT_ARG_ALGO,
    .exit_status = "0 everything verified and executed, 1 anything failed, 2 usage error.",
};

/* ---- files -------------------------------------------------------------------------------- */
static int ends_with(const char *s, const char *suffix) {
    size_t n = strlen(s), m = strlen(suffix);
    return n >= m && strcmp(s + n - m, suffix) == 0;
}

static int cmp_str(const void *a, const void *b) {
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Appends path, or the sorted .weft files of the directory path, to *files. */
static weft_result collect(const char *path, char ***files, size_t *n, size_t *cap) {
    weft_result res = WEFT_OK;
    struct stat st;
    DIR *dir = NULL;
    size_t first = *n;
    if (stat(path, &st) != 0) {
        fprintf(stderr, "weft library: %s: no such file or directory\n", path);
        return WEFT_ERR_INPUT;
    }
    if (!S_ISDIR(st.st_mode)) {
        if (weft_grow((void **)files, cap, *n, sizeof **files)) return WEFT_ERR_NOMEM;
        WEFT_CHECK_ALLOC((*files)[*n] = weft_strdup(path));
        (*n)++;
        return WEFT_OK;
    }
    dir = opendir(path);
    if (dir == NULL) {
        fprintf(stderr, "weft library: %s: cannot read the directory\n", path);
        return WEFT_ERR_INPUT;
    }
    for (struct dirent *e; (e = readdir(dir)) != NULL;) {
        if (e->d_name[0] == '.' || !ends_with(e->d_name, ".weft")) continue;
        if (weft_grow((void **)files, cap, *n, sizeof **files)) WEFT_FAIL(WEFT_ERR_NOMEM);
        WEFT_CHECK_ALLOC((*files)[*n] = weft_asprintf("%s/%s", path, e->d_name));
        (*n)++;
    }
    qsort(*files + first, *n - first, sizeof **files, cmp_str);
    if (*n == first) {
        fprintf(stderr, "weft library: %s: no .weft files\n", path);
        res = WEFT_ERR_INPUT;
    }
fail:
    closedir(dir);
    return res;
}

/* The shapes of a file's `// test:` lines, as one malloc'd string of space-separated shapes. */
static char *test_shapes(const char *text) {
    size_t len = 0, cap = 0;
    char *out = NULL;
    for (const char *p = text; p && *p;) {
        const char *eol = strchr(p, '\n');
        size_t n = eol ? (size_t)(eol - p) : strlen(p);
        if (n > 8 && strncmp(p, "// test:", 8) == 0) {
            if (weft_grow((void **)&out, &cap, len + n + 2, 1)) {
                free(out);
                return NULL;
            }
            out[len++] = ' ';
            memcpy(out + len, p + 8, n - 8);
            len += n - 8;
            out[len] = '\0';
        }
        p = eol ? eol + 1 : NULL;
    }
    return out ? out : weft_strdup("");
}

static const char *basename_of(const char *path) {
    const char *s = strrchr(path, '/');
    return s ? s + 1 : path;
}

/* ---- one shape ------------------------------------------------------------------------------ */
typedef struct lib_row {
    int compiled, verified, runs_ok, runs;
    int32_t ranks, tb_per_rank;
    int64_t steps, tbs, depth;
    double ms;
} lib_row;

static void print_diag_indented(const weft_diag *d, int max_lines) {
    int lines = 0;
    for (size_t i = 0; i < weft_diag_size(d) && lines < max_lines; i++) {
        const weft_diag_entry *e = weft_diag_get(d, i);
        if (e->sev > WEFT_SEV_NOTE) continue;
        char *s = weft_diag_format(e);
        if (s == NULL) break;
        for (char *line = s, *next; line && *line && lines < max_lines; line = next) {
            next = strchr(line, '\n');
            if (next) *next++ = '\0';
            printf("      %s\n", line);
            lines++;
        }
        free(s);
    }
    size_t total = weft_diag_count(d, WEFT_SEV_ERROR) + weft_diag_count(d, WEFT_SEV_WARNING);
    if (lines >= max_lines && total > 1)
        printf("      ... (%zu errors and warnings in all)\n", total);
}

/* Runs the algo on the CPU executor in each declared mode; failures go to d. */
static void execute(const weft_algo *a, const lib_opts *o, lib_row *row, weft_diag *d) {
    for (int mode = 0; mode < 2; mode++) {
        if (!(mode == 0 ? a->inplace : a->outofplace)) continue;
        for (int i = 0; i < LIB_NRUNS; i++) {
            const lib_run *lr = &lib_runs[i];
            weft_exec_opts eo;
            weft_exec_opts_init(&eo);
            eo.dtype = lr->dtype;
            eo.op = lr->op;
            eo.count = o->count ? o->count : (int64_t)a->nchunksperloop * lr->kmul + lr->kadd;
            eo.inplace = (uint8_t)(mode == 0);
            eo.sched_seed = lr->sched_seed;
            eo.fifo_slots = lr->fifo;
            weft_diag *rd = weft_diag_new();
            weft_result r = rd ? weft_ir_exec(a, &eo, rd, NULL) : WEFT_ERR_NOMEM;
            row->runs++;
            if (r == WEFT_OK) {
                row->runs_ok++;
            } else {
                weft_diag_add(
                    d, WEFT_SEV_ERROR, a->file, 0, 0,
                    "CPU run failed (%s, %s %s, count %lld, sched-seed %llu, fifo %d): %s",
                    mode == 0 ? "in-place" : "out-of-place", weft_dtype_name(eo.dtype),
                    weft_redop_name(eo.op), (long long)eo.count, (unsigned long long)eo.sched_seed,
                    eo.fifo_slots, weft_result_str(r));
                for (size_t k = 0; rd && k < weft_diag_size(rd) && k < 4; k++) {
                    const weft_diag_entry *e = weft_diag_get(rd, k);
                    weft_diag_add(d, WEFT_SEV_NOTE, NULL, 0, 0, "%s", e->msg);
                }
            }
            weft_diag_free(rd);
        }
    }
}

/* Compiles, round-trips through the XML text, verifies and executes one shape. */
static void run_shape(const char *path, char **defines, size_t ndefines, const lib_opts *o,
                      lib_row *row, weft_diag *d) {
    weft_cc_options cc = {(const char *const *)defines, ndefines, o->incs, o->nincs};
    weft_algo *a = NULL, *b = NULL;
    char *xml = NULL;
    weft_verify_summary sum;
    memset(&sum, 0, sizeof sum);
    double t0 = now_ms();
    if (weft_cc_load_file(path, &cc, &a, d) != WEFT_OK) goto done;
    /* What users deploy is the XML text: verify and run what reading it back gives. */
    if (weft_ir_write_string(a, &xml) != WEFT_OK ||
        weft_ir_read_memory(xml, strlen(xml), path, &b, d) != WEFT_OK) {
        weft_diag_add(d, WEFT_SEV_ERROR, path, 0, 0, "the compiled XML does not read back");
        goto done;
    }
    row->compiled = 1;
    weft_result vr = weft_ir_verify(b, NULL, d, &sum);
    row->ranks = b->ngpus;
    row->steps = weft_algo_nsteps(b);
    for (int32_t r = 0; r < b->ngpus; r++) {
        row->tbs += b->gpus[r].ntbs;
        if (b->gpus[r].ntbs > row->tb_per_rank) row->tb_per_rank = b->gpus[r].ntbs;
    }
    row->depth = sum.critical_path;
    if (vr != WEFT_OK) goto done;
    row->verified = 1;
    execute(b, o, row, d);
done:
    row->ms = now_ms() - t0;
    weft_verify_summary_free(&sum);
    weft_algo_free(b);
    weft_algo_free(a);
    free(xml);
}

static void print_header(void) {
    printf("%-28s %-16s %5s %6s %5s %7s %5s  %-8s  %-9s %8s\n", "algorithm", "shape", "ranks",
           "steps", "tbs", "tb/rank", "depth", "verified", "executed", "ms");
}

/* Runs every shape of one file; returns 0 when all passed. */
static int run_file(const char *path, const lib_opts *o, lib_totals *t) {
    char *text = NULL, *shapes = NULL, *defs_buf = NULL;
    char **defines = NULL;
    size_t len = 0, cap = 0;
    int failed = 0;
    char name[64];
    snprintf(name, sizeof name, "%s", basename_of(path));
    if (ends_with(name, ".weft")) name[strlen(name) - 5] = '\0';
    weft_diag *d = weft_diag_new();
    if (d == NULL) return 1;
    if (weft_read_file(path, &text, &len, d) != WEFT_OK) {
        printf("%-28s %-16s cannot read the file\n", name, "-");
        print_diag_indented(d, 4);
        weft_diag_free(d);
        t->shapes++, t->failed++;
        return 1;
    }
    shapes = o->shape ? weft_strdup(o->shape) : test_shapes(text);
    if (shapes == NULL) goto nomem;
    int nshapes = 0;
    for (char *save = NULL, *shape = strtok_r(shapes, " \t\r", &save); shape;
         shape = strtok_r(NULL, " \t\r", &save)) {
        nshapes++;
        /* NAME=VALUE,NAME=VALUE -> defines[] */
        free(defs_buf);
        if ((defs_buf = weft_strdup(shape)) == NULL) goto nomem;
        size_t ndef = 0;
        for (char *s2 = NULL, *kv = strtok_r(defs_buf, ",", &s2); kv;
             kv = strtok_r(NULL, ",", &s2)) {
            if (weft_grow((void **)&defines, &cap, ndef, sizeof *defines)) goto nomem;
            defines[ndef++] = kv;
        }
        lib_row row;
        memset(&row, 0, sizeof row);
        weft_diag_clear(d);
        run_shape(path, defines, ndef, o, &row, d);
        int ok = row.verified && row.runs > 0 && row.runs_ok == row.runs;
        t->shapes++;
        t->runs += row.runs;
        if (!ok) t->failed++, failed = 1;
        if (ok && o->quiet) continue;
        char executed[24];
        if (!row.verified)
            snprintf(executed, sizeof executed, "-");
        else
            snprintf(executed, sizeof executed, "%s %d/%d", row.runs_ok == row.runs ? "ok" : "FAIL",
                     row.runs_ok, row.runs);
        if (!row.compiled)
            printf("%-28s %-16s %5s %6s %5s %7s %5s  %-8s  %-9s %8.1f\n", name, shape, "-", "-",
                   "-", "-", "-", "no", "-", row.ms);
        else
            printf("%-28s %-16s %5d %6lld %5lld %7d %5lld  %-8s  %-9s %8.1f\n", name, shape,
                   row.ranks, (long long)row.steps, (long long)row.tbs, row.tb_per_rank,
                   (long long)row.depth, row.verified ? "ok" : "FAIL", executed, row.ms);
        if (!ok) print_diag_indented(d, 12);
    }
    if (nshapes == 0) {
        printf("%-28s %-16s no `// test:` line: nothing to run\n", name, "-");
        t->shapes++, t->failed++, failed = 1;
    }
    goto out;
nomem:
    fprintf(stderr, "weft library: out of memory\n");
    failed = 1;
    t->failed++;
out:
    free(defines);
    free(defs_buf);
    free(shapes);
    free(text);
    weft_diag_free(d);
    return failed;
}

int weft_cmd_library(int argc, char **argv) {
    lib_opts o;
    memset(&o, 0, sizeof o);
    char **files = NULL;
    size_t nfiles = 0, fcap = 0, icap = 0;
    int rc = WEFT_EXIT_OK, npaths = 0;
    weft_getopt g;
    weft_getopt_init(&g, &weft_spec_library, argc, argv);
    for (int c; (c = weft_getopt_next(&g)) != WEFT_OPT_END;) {
        switch (c) {
        case WEFT_OPT_EXIT: rc = g.exit_code; goto out;
        case 'q': o.quiet = 1; break;
        case OPT_SHAPE:
            if (strchr(g.arg, ' ') || strchr(g.arg, '=') == NULL) {
                rc = weft_opt_error(&g, "NAME=VALUE[,NAME=VALUE...], not '%s'", g.arg);
                goto out;
            }
            o.shape = g.arg;
            break;
        case OPT_COUNT: o.count = g.num; break;
        case 'I':
            if (weft_grow((void **)&o.incs, &icap, o.nincs, sizeof *o.incs)) goto nomem;
            o.incs[o.nincs++] = g.arg;
            break;
        }
    }
    npaths = g.noperands;
    for (int i = 0; i < npaths; i++) {
        weft_result r = collect(g.operands[i], &files, &nfiles, &fcap);
        if (r == WEFT_ERR_NOMEM) goto nomem;
        if (r != WEFT_OK) rc = WEFT_EXIT_INPUT;
    }
    if (npaths == 0) { /* the one default (datadir.h), each folder of it */
        const char *from = NULL;
        char *def = weft_default_algos(&from);
        if (def == NULL) {
            fprintf(stderr, "weft library: no algorithms to run: %s\n", from);
            rc = WEFT_EXIT_INPUT;
        }
        for (char *p = def, *q; p && *p; p = q) {
            q = strchr(p, ':');
            if (q) *q++ = '\0';
            if (!*p) continue;
            weft_result r = collect(p, &files, &nfiles, &fcap);
            if (r == WEFT_ERR_NOMEM) {
                free(def);
                goto nomem;
            }
            if (r != WEFT_OK) rc = WEFT_EXIT_INPUT;
            if (!q) break;
        }
        free(def);
    }
    if (rc != WEFT_EXIT_OK) goto out;

    lib_totals t;
    memset(&t, 0, sizeof t);
    double t0 = now_ms();
    print_header();
    for (size_t i = 0; i < nfiles; i++) {
        t.files++;
        if (run_file(files[i], &o, &t)) rc = WEFT_EXIT_INPUT;
    }
    t.seconds = (now_ms() - t0) / 1e3;
    if (t.failed == 0)
        printf(
            "\n%d files, %d shapes: all compiled, verified and executed (%d CPU runs) in %.1f s\n",
            t.files, t.shapes, t.runs, t.seconds);
    else
        printf("\n%d files, %d shapes: %d FAILED (%d CPU runs) in %.1f s\n", t.files, t.shapes,
               t.failed, t.runs, t.seconds);
    goto out;
nomem:
    fprintf(stderr, "weft library: out of memory\n");
    rc = WEFT_EXIT_INPUT;
out:
    for (size_t i = 0; i < nfiles; i++)
        free(files[i]);
    free(files);
    free(o.incs);
    return rc;
}
