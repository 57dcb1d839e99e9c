/* cmd_run.c — `weft run`: executes an XML algorithm with real data and checks the result against
 * a reference collective. Modes: --cpu (the CPU reference executor); the GPU mode plugs in as
 * another entry of run_modes[]. */
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

/* The modes: one option each; another (the GPU) plugs in as a row here and in run_opts. */
enum {
    OPT_CPU = 256,
    OPT_INPLACE,
    OPT_OUTOFPLACE,
    OPT_COUNT,
    OPT_TYPE,
    OPT_OP,
    OPT_SEED,
    OPT_SCHED_SEED,
    OPT_FIFO
};
static const struct {
    int id;
    run_mode_fn fn;
} run_modes[] = {{OPT_CPU, run_cpu}};

static const weft_opt run_opts[] = {
    WEFT_OPT_FLAG(OPT_CPU, "cpu",
                  "the mode: the CPU reference executor (N ranks over\n"
                  "host buffers)"),
    WEFT_OPT_INT(OPT_COUNT, "count", "N", 0, 1ull << 40,
                 "elements per rank segment, NCCL's count (default\n"
                 "1024)"),
    WEFT_OPT_TYPE(OPT_TYPE, "the data type (default float)"),
    WEFT_OPT_OP(OPT_OP, "the reduction (default sum; reductions only)"),
    WEFT_OPT_FLAG(OPT_INPLACE, "inplace",
                  "the in-place call (default: each mode the file\n"
                  "declares)"),
    WEFT_OPT_FLAG(OPT_OUTOFPLACE, "outofplace", "the out-of-place call"),
    WEFT_OPT_INT(OPT_SEED, "seed", "S", 0, ~0ull >> 1, "input data (default 1)"),
    WEFT_OPT_INT(OPT_SCHED_SEED, "sched-seed", "S", 0, ~0ull >> 1,
                 "interleaving of the tbs: 0 round robin (default),\n"
                 "else random"),
    WEFT_OPT_INT(OPT_FIFO, "fifo", "N", 0, 1u << 30,
                 "messages a connection holds before its sender\n"
                 "waits (default 2, what weft verify checks;\n"
                 "0: unbounded)"),
    WEFT_OPT_FLAG('q', "quiet", "print nothing when the result is right"),
    WEFT_OPT_DEFINE,
    {0}};

const weft_cmd_spec weft_spec_run = {
    .name = "run",
    .summary = "execute an XML algorithm with real data and check the result (--cpu)",
    .synopsis = "--cpu FILE.xml|FILE.weft [options]",
    .description =
        "Executes an XML algorithm (- : standard input; or a .weft source, compiled with the -D\n"
        "parameters) with real data and compares every rank's result with a reference\n"
        "collective. --cpu, the CPU reference executor, is the\n"
        "one mode so far.\n"
        "\n"
        "Counts need not be multiples of the chunk count: chunks are slots of\n"
        "ceil(count / k) elements and short trailing chunks are handled (docs/verify.md).",
    .opts = run_opts,
    .operands = WEFT_ARG_ALGO,
    .exit_status = "0 right result, 1 wrong result, stall or invalid file, 2 usage error.",
};

int weft_cmd_run(int argc, char **argv) {
    run_args ra;
    memset(&ra, 0, sizeof ra);
    weft_exec_opts_init(&ra.eo);
    /* bounded as weft verify's default: unbounded buffers hide schedules that deadlock on any
     * runtime, and keep every message of one that sends everything first in memory */
    ra.eo.fifo_slots = 2;
    run_mode_fn mode = NULL;
    weft_diag *d = NULL;
    weft_algo *a = NULL;
    int rc = WEFT_EXIT_OK;
    weft_getopt g;
    weft_getopt_init(&g, &weft_spec_run, argc, argv);
    for (int c; (c = weft_getopt_next(&g)) != WEFT_OPT_END;) {
        for (size_t m = 0; m < sizeof run_modes / sizeof *run_modes; m++)
            if (c == run_modes[m].id) mode = run_modes[m].fn;
        switch (c) {
        case WEFT_OPT_EXIT: rc = g.exit_code; goto out;
        case 'q': ra.quiet = 1; break;
        case OPT_INPLACE: ra.modes |= 1; break;
        case OPT_OUTOFPLACE: ra.modes |= 2; break;
        case OPT_COUNT: ra.eo.count = g.num; break;
        case OPT_SEED: ra.eo.seed = (uint64_t)g.num; break;
        case OPT_SCHED_SEED: ra.eo.sched_seed = (uint64_t)g.num; break;
        case OPT_FIFO: ra.eo.fifo_slots = (int32_t)g.num; break;
        case OPT_TYPE: ra.eo.dtype = (weft_dtype)g.num; break;
        case OPT_OP: ra.eo.op = (weft_redop)g.num; break;
        }
    }
    if (mode == NULL || g.noperands != 1) {
        rc = mode == NULL ? weft_usage_error(&weft_spec_run, "no mode given (--cpu)")
             : g.noperands == 0
                 ? weft_usage_error(&weft_spec_run, "no input file")
                 : weft_usage_error(&weft_spec_run, "one file at a time ('%s' and '%s')",
                                    g.operands[0], g.operands[1]);
        goto out;
    }
    ra.file = g.operands[0];
    if ((d = weft_diag_new()) == NULL) {
        rc = WEFT_EXIT_INPUT;
        goto out;
    }
    weft_cc_options co = {g.defines, g.ndefines, NULL, 0};
    weft_result r = weft_cc_load_file(ra.file, &co, &a, d);
    if (weft_cmd_report(&weft_spec_run, ra.file, r, d, WEFT_SEV_NOTE) != WEFT_OK) {
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
out:
    weft_algo_free(a);
    weft_diag_free(d);
    weft_getopt_free(&g);
    return rc;
}
