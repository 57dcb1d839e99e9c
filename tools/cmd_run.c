/* cmd_run.c — `weft run`: executes an XML algorithm with real data and checks the result against
 * a reference collective. Modes: --cpu (the CPU reference executor); the GPU mode plugs in as
 * another entry of run_modes[]. */
#include "cli.h"
#include "commands.h"
#include "weft_compiler.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct run_args {
    const char *file;
    weft_exec_opts eo;
    int modes; /* bit 0 in-place, bit 1 out-of-place; 0: what the file declares */
    int quiet;
} run_args;

typedef int (*run_mode_fn)(const run_args *ra, const weft_algo *a, int inplace, weft_diag *d);

/* --cpu: the reference executor */
static int run_cpu(const run_args *ra, const weft_algo *a, int inplace, weft_diag *d) {
    weft_exec_opts eo = ra->eo;
    weft_exec_report rep;
    eo.inplace = (uint8_t)inplace;
    weft_result r = weft_ir_exec(a, &eo, d, &rep);
    fflush(stdout);
    weft_diag_print(d, stderr, WEFT_SEV_NOTE);
    fflush(stderr);
    const char *what = weft_coll_reduces(a->coll) ? weft_redop_name(eo.op) : "";
    if (r == WEFT_OK) {
        if (!ra->quiet)
            printf("%s: cpu: %s %s, %d ranks, count %lld, %s%s%s: ok (%lld steps)\n", ra->file,
                   weft_coll_name(a->coll), inplace ? "in-place" : "out-of-place", a->ngpus,
                   (long long)eo.count, weft_dtype_name(eo.dtype), *what ? " " : "", what,
                   (long long)rep.steps_run);
        return WEFT_EXIT_OK;
    }
    if (r == WEFT_ERR_INPUT)
        fprintf(stderr, "%s: cpu: %s %s, count %lld, %s%s%s: %s\n", ra->file,
                weft_coll_name(a->coll), inplace ? "in-place" : "out-of-place", (long long)eo.count,
                weft_dtype_name(eo.dtype), *what ? " " : "", what,
                rep.stalled      ? "stalled"
                : rep.mismatches ? "wrong result"
                                 : "rejected");
    else
        fprintf(stderr, "weft run: %s: %s\n", ra->file, weft_result_str(r));
    return r == WEFT_ERR_USAGE ? WEFT_EXIT_USAGE : WEFT_EXIT_INPUT;
}

static const struct {
    const char *flag, *help;
    run_mode_fn fn;
} run_modes[] = {
    {"--cpu", "the CPU reference executor (N ranks over host buffers)", run_cpu},
};

static void run_usage(FILE *out) {
    fprintf(out, "usage: weft run MODE FILE.xml|FILE.weft [options]\n\nExecutes an XML algorithm "
                 "(or a compiled .weft source) with real data and compares\nevery rank's result "
                 "with a reference collective.\n\nmodes:\n");
    for (size_t i = 0; i < sizeof run_modes / sizeof *run_modes; i++)
        fprintf(out, "  %-14s %s\n", run_modes[i].flag, run_modes[i].help);
    fprintf(out,
            "\noptions:\n"
            "  --count N      elements per rank segment, NCCL's count (default 1024)\n"
            "  --type T       int8 uint8 int32 uint32 int64 uint64 half float double bfloat16\n"
            "                 (default float)\n"
            "  --op OP        sum prod min max avg (default sum; reductions only)\n"
            "  --inplace, --outofplace\n"
            "                 the call mode (default: each mode the file declares)\n"
            "  --seed S       input data (default 1)\n"
            "  --sched-seed S interleaving of the tbs: 0 round robin (default), else random\n"
            "  --fifo N       messages a connection holds before its sender waits (default 0:\n"
            "                 unbounded)\n"
            "  -D NAME=VALUE  set a parameter of a .weft source; repeatable\n"
            "  -q, --quiet    print nothing when the result is right\n"
            "  -h, --help     this text\n\n"
            "Counts need not be multiples of the chunk count: chunks are slots of\n"
            "ceil(count / k) elements and short trailing chunks are handled (docs/verify.md).\n"
            "Exit codes: 0 right result, 1 wrong result, stall or invalid file, 2 usage error.\n");
}

static int parse_u64(const char *s, unsigned long long max, unsigned long long *out) {
    char *end;
    if (*s == '-' || *s == '\0') return -1;
    unsigned long long v = strtoull(s, &end, 0);
    if (*end != '\0' || v > max) return -1;
    *out = v;
    return 0;
}

int weft_cmd_run(int argc, char **argv) {
    run_args ra;
    memset(&ra, 0, sizeof ra);
    weft_exec_opts_init(&ra.eo);
    run_mode_fn mode = NULL;
    const char **defines = calloc((size_t)argc + 1, sizeof *defines);
    size_t ndef = 0;
    int rc = WEFT_EXIT_OK;
    if (defines == NULL) return WEFT_EXIT_INPUT;
    for (int i = 1; i < argc; i++) {
        const char *o = argv[i];
        const char *val = i + 1 < argc ? argv[i + 1] : NULL;
        unsigned long long v;
        int found = 0;
        for (size_t m = 0; m < sizeof run_modes / sizeof *run_modes; m++)
            if (strcmp(o, run_modes[m].flag) == 0) mode = run_modes[m].fn, found = 1;
        if (found) continue;
        if (strcmp(o, "-h") == 0 || strcmp(o, "--help") == 0) {
            run_usage(stdout);
            goto out;
        } else if ((found = weft_cli_define(argc, argv, &i, defines, &ndef)) != 0) {
            if (found < 0) {
                fprintf(stderr, "weft run: -D needs NAME=VALUE\n");
                rc = WEFT_EXIT_USAGE;
                goto out;
            }
        } else if (strcmp(o, "-q") == 0 || strcmp(o, "--quiet") == 0) {
            ra.quiet = 1;
        } else if (strcmp(o, "--inplace") == 0) {
            ra.modes |= 1;
        } else if (strcmp(o, "--outofplace") == 0) {
            ra.modes |= 2;
        } else if (strcmp(o, "--count") == 0 && val) {
            if (parse_u64(val, (1ull << 40), &v)) goto bad_value;
            ra.eo.count = (int64_t)v;
            i++;
        } else if (strcmp(o, "--seed") == 0 && val) {
            if (parse_u64(val, UINT64_MAX, &v)) goto bad_value;
            ra.eo.seed = v;
            i++;
        } else if (strcmp(o, "--sched-seed") == 0 && val) {
            if (parse_u64(val, UINT64_MAX, &v)) goto bad_value;
            ra.eo.sched_seed = v;
            i++;
        } else if (strcmp(o, "--fifo") == 0 && val) {
            if (parse_u64(val, 1u << 30, &v)) goto bad_value;
            ra.eo.fifo_slots = (int32_t)v;
            i++;
        } else if (strcmp(o, "--type") == 0 && val) {
            int t = weft_dtype_from_name(val);
            if (t < 0) goto bad_value;
            ra.eo.dtype = (weft_dtype)t;
            i++;
        } else if (strcmp(o, "--op") == 0 && val) {
            int t = weft_redop_from_name(val);
            if (t < 0) goto bad_value;
            ra.eo.op = (weft_redop)t;
            i++;
        } else if (o[0] == '-' && o[1] != '\0') {
            fprintf(stderr, "weft run: unknown option or missing value '%s'\n", o);
            run_usage(stderr);
            rc = WEFT_EXIT_USAGE;
            goto out;
        } else if (ra.file == NULL) {
            ra.file = o;
        } else {
            fprintf(stderr, "weft run: one file at a time ('%s' and '%s')\n", ra.file, o);
            rc = WEFT_EXIT_USAGE;
            goto out;
        }
        continue;
    bad_value:
        fprintf(stderr, "weft run: invalid value '%s' for %s\n", val, o);
        rc = WEFT_EXIT_USAGE;
        goto out;
    }
    if (mode == NULL || ra.file == NULL) {
        fprintf(stderr, "weft run: %s\n", mode == NULL ? "no mode given (--cpu)" : "no input file");
        run_usage(stderr);
        rc = WEFT_EXIT_USAGE;
        goto out;
    }
    weft_diag *d = weft_diag_new();
    weft_algo *a = NULL;
    if (d == NULL) {
        rc = WEFT_EXIT_INPUT;
        goto out;
    }
    weft_cc_options co = {defines, ndef, NULL, 0};
    weft_result r = weft_cc_load_file(ra.file, &co, &a, d);
    weft_diag_print(d, stderr, WEFT_SEV_NOTE);
    weft_diag_clear(d);
    if (r != WEFT_OK) {
        if (r != WEFT_ERR_INPUT) fprintf(stderr, "weft run: %s: %s\n", ra.file, weft_result_str(r));
        rc = WEFT_EXIT_INPUT;
    } else {
        int modes = ra.modes ? ra.modes : (a->inplace ? 1 : 0) | (a->outofplace ? 2 : 0);
        if (modes == 0) {
            fprintf(stderr, "weft run: %s declares neither in-place nor out-of-place calls\n",
                    ra.file);
            rc = WEFT_EXIT_INPUT;
        }
        for (int m = 0; m < 2; m++) {
            if (!(modes & (1 << m))) continue;
            int rm = mode(&ra, a, m == 0, d);
            weft_diag_clear(d);
            if (rm > rc) rc = rm;
        }
    }
    weft_algo_free(a);
    weft_diag_free(d);
out:
    free(defines);
    return rc;
}
