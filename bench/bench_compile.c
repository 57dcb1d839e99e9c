/* bench_compile.c — how long `weft compile` takes, phase by phase (reported, not a pass/fail
 * threshold): parse, evaluate, check (symbolic tracing), lower, validate, write XML. */
#define _POSIX_C_SOURCE 200809L
#include "weft_compiler.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

enum { P_PARSE, P_EVAL, P_CHECK, P_LOWER, P_VALIDATE, P_WRITE, P_COUNT };
static const char *const phase_names[P_COUNT] = {"parse", "eval",     "check",
                                                 "lower", "validate", "write"};

static double now_ms(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* One compile of path with N ranks; phase times in ms; returns 0 on success. */
static int compile_once(const char *path, int n, double *ms, int64_t *steps, size_t *xmlbytes) {
    char def[32];
    snprintf(def, sizeof def, "N=%d", n);
    const char *defs[1] = {def};
    weft_cc_options o = {defs, 1, NULL, 0};
    weft_diag *d = weft_diag_new();
    weft_lang_program *prog = NULL;
    weft_cc_program *p = NULL;
    weft_algo *a = NULL;
    char *xml = NULL;
    int rc = 1;
    double t0 = now_ms();
    if (weft_lang_parse_file(path, NULL, 0, &prog, d) != WEFT_OK) goto out;
    double t1 = now_ms();
    if (weft_cc_eval(prog, &o, &p, d) != WEFT_OK) goto out;
    double t2 = now_ms();
    if (weft_cc_check(p, d) != WEFT_OK) goto out;
    double t3 = now_ms();
    if (weft_cc_lower(p, &a, d) != WEFT_OK) goto out;
    double t4 = now_ms();
    if (weft_ir_validate(a, d) != WEFT_OK) goto out;
    double t5 = now_ms();
    if (weft_ir_write_string(a, &xml) != WEFT_OK) goto out;
    double t6 = now_ms();
    ms[P_PARSE] = t1 - t0;
    ms[P_EVAL] = t2 - t1;
    ms[P_CHECK] = t3 - t2;
    ms[P_LOWER] = t4 - t3;
    ms[P_VALIDATE] = t5 - t4;
    ms[P_WRITE] = t6 - t5;
    *steps = weft_algo_nsteps(a);
    *xmlbytes = strlen(xml);
    rc = 0;
out:
    if (rc) weft_diag_print(d, stderr, WEFT_SEV_ERROR);
    free(xml);
    weft_algo_free(a);
    weft_cc_program_free(p);
    weft_lang_program_free(prog);
    weft_diag_free(d);
    return rc;
}

int main(int argc, char **argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: bench_compile PROGRAMS_DIR [runs]\n");
        return 2;
    }
    int runs = argc > 2 ? atoi(argv[2]) : 5;
    if (runs < 1) runs = 1;
    static const struct {
        const char *file;
        int n;
        double target_ms; /* the goal the compile (parse .. lower) should stay under */
    } cases[] = {
        {"ring_allreduce.weft", 16, 100},
        {"allpairs_allreduce.weft", 64, 2000},
        {"allpairs_msccl.weft", 64, 2000},
    };
    printf("%-24s %5s %8s %9s", "program", "ranks", "steps", "xml MB");
    for (int ph = 0; ph < P_COUNT; ph++)
        printf(" %8s", phase_names[ph]);
    printf(" %9s %8s\n", "compile", "goal");
    int failed = 0;
    for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
        char path[4096];
        snprintf(path, sizeof path, "%s/%s", argv[1], cases[c].file);
        double *all = calloc((size_t)runs * (P_COUNT + 1), sizeof *all);
        int64_t steps = 0;
        size_t bytes = 0;
        int ok = all != NULL;
        for (int r = 0; ok && r < runs; r++) {
            double ms[P_COUNT];
            if (compile_once(path, cases[c].n, ms, &steps, &bytes) != 0) {
                ok = 0;
                break;
            }
            double total = 0;
            for (int ph = 0; ph < P_COUNT; ph++) {
                all[(size_t)ph * runs + r] = ms[ph];
                if (ph <= P_LOWER) total += ms[ph];
            }
            all[(size_t)P_COUNT * runs + r] = total;
        }
        if (!ok) {
            printf("%-24s %5d  failed to compile\n", cases[c].file, cases[c].n);
            failed = 1;
            free(all);
            continue;
        }
        printf("%-24s %5d %8lld %9.1f", cases[c].file, cases[c].n, (long long)steps,
               (double)bytes / 1e6);
        double med[P_COUNT + 1];
        for (int ph = 0; ph <= P_COUNT; ph++) {
            qsort(all + (size_t)ph * runs, (size_t)runs, sizeof *all, cmp_double);
            med[ph] = all[(size_t)ph * runs + runs / 2];
        }
        for (int ph = 0; ph < P_COUNT; ph++)
            printf(" %8.1f", med[ph]);
        printf(" %9.1f %8.0f%s\n", med[P_COUNT], cases[c].target_ms,
               med[P_COUNT] <= cases[c].target_ms ? "" : "  (over)");
        free(all);
    }
    printf("\nmedian of %d runs, milliseconds; compile = parse + eval + check + lower (validation "
           "and XML writing shown apart)\n",
           runs);
    return failed;
}
