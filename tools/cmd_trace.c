/* cmd_trace.c — `weft trace`: summarize, check, merge and draw the per-step timeline traces that
 * WEFT_TRACE records (Chrome trace event JSON, one file per rank). */
#include "commands.h"
#include "trace_tools.h"
#include "weft_common.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum { OPT_CALL = 256, OPT_PATH_MAX, OPT_TOLERANCE };

static const weft_opt summarize_opts[] = {
    WEFT_OPT_INT(OPT_CALL, "call", "N", 0, ~0ull >> 1,
                 "the critical path of call N (default: the longest)"),
    WEFT_OPT_INT(OPT_PATH_MAX, "path-max", "N", 0, 1 << 30,
                 "list at most N steps of the path (default 40, 0:\n"
                 "all)"),
    {0}};
static const weft_opt check_opts[] = {
    WEFT_OPT_REAL(OPT_TOLERANCE, "tolerance", "F", 0, 1,
                  "the busiest tb's step time within F of the kernel\n"
                  "time (default 0.10; 0 < F < 1)"),
    {0}};
/* -o of the subcommands that write one file */
#define TRACE_OPT_OUTPUT                                                                           \
    WEFT_OPT_TEXT(OUT, 'o', "output", "OUT", "write to OUT (default, or -: standard output)")
static const weft_opt merge_opts[] = {TRACE_OPT_OUTPUT, {0}};

static const weft_opt draw_opts[] = {
    WEFT_OPT_INT(OPT_CALL, "call", "N", 0, ~0ull >> 1, "draw call N (default: the longest)"),
    TRACE_OPT_OUTPUT,
    {0}};

static const weft_cmd_spec spec_summarize = {
    .name = "trace summarize",
    .summary = "time per step type and connection, and the critical path",
    .synopsis = "[--call N] [--path-max N] FILE...",
    .description = "Time per step type and per connection (waits versus moving data, achieved\n"
                   "bandwidth), and the critical path of the longest call (--call N: of call N).",
    .opts = summarize_opts,
    .operands = WEFT_ARG_FILE,
    .exit_status = "0 ok, 1 a trace is wrong, 2 usage error.",
};
static const weft_cmd_spec spec_check = {
    .name = "trace check",
    .summary = "check a trace's slices, drops and message order",
    .synopsis = "[--tolerance F] FILE...",
    .description =
        "Slices ordered and non-overlapping per tb and inside their kernel, the busiest tb's\n"
        "step time within F (default 0.10) of the kernel time, nothing dropped, messages\n"
        "received after they were sent.",
    .opts = check_opts,
    .operands = WEFT_ARG_FILE,
    .exit_status = "0 ok, 1 a trace is wrong or a check failed, 2 usage error.",
};
static const weft_cmd_spec spec_merge = {
    .name = "trace merge",
    .summary = "one trace file with every rank, for Perfetto",
    .synopsis = "[-o OUT] FILE...",
    .description =
        "One file with every rank (standard output, or OUT), for Perfetto (ui.perfetto.dev) or\n"
        "chrome://tracing. OUT is written as every weft output is: through a symbolic link,\n"
        "into a FIFO as a stream, a regular file replaced whole keeping its mode.",
    .opts = merge_opts,
    .operands = WEFT_ARG_FILE,
    .exit_status = "0 ok, 1 a trace is wrong or OUT cannot be written, 2 usage error.",
};
static const weft_cmd_spec spec_draw = {
    .name = "trace draw",
    .summary = "one call's timeline as an SVG picture",
    .synopsis = "[--call N] [-o OUT] FILE...",
    .description =
        "One call (the longest, or call N) as SVG: a row per tb grouped by rank, a bar per step\n"
        "execution at its recorded time (grey while it waited, its step type's colour while it\n"
        "moved data), an arrow per message from the sending to the receiving step, and the\n"
        "critical path of `weft trace summarize` in red. Standard output, or OUT written as\n"
        "every weft output is.",
    .opts = draw_opts,
    .operands = WEFT_ARG_FILE,
    .exit_status = "0 ok, 1 a trace is wrong, the call is not in it or OUT cannot be written,\n"
                   "2 usage error.",
};
static const weft_cmd_spec *const trace_subs[] = {&spec_summarize, &spec_check, &spec_merge,
                                                  &spec_draw, NULL};

const weft_cmd_spec weft_spec_trace = {
    .name = "trace",
    .summary = "summarize, check, merge and draw per-step timeline traces (WEFT_TRACE)",
    .description =
        "FILEs are traces written with WEFT_TRACE (one per rank, or merged; - : standard\n"
        "input); several are read as one trace (their clocks are already aligned).",
    .exit_status = "0 ok, 1 a trace is wrong (or a check failed), 2 usage error.",
    .subs = trace_subs,
};

static int read_all(weft_trace *t, int n, char **files, weft_diag *d) {
    weft_trace_init(t, 0);
    int bad = 0;
    for (int i = 0; i < n; i++)
        if (weft_trace_read_file(t, files[i], d) != WEFT_OK) bad = 1;
    return bad;
}

static int write_merged(const weft_trace *t, const char *path, weft_diag *d) {
    weft_out *o = NULL;
    if (weft_out_open(path, WEFT_OUT_STDOUT, &o, d) != WEFT_OK) return -1;
    if (weft_trace_write(t, weft_out_file(o)) != WEFT_OK && !ferror(weft_out_file(o))) {
        weft_out_abort(o);
        weft_diag_add(d, WEFT_SEV_ERROR, path, 0, 0, "cannot write: out of memory");
        return -1;
    }
    return weft_out_close(o, d) == WEFT_OK ? 0 : -1;
}

/* The picture of call seq (< 0: the longest) into path. */
static int write_drawing(const weft_trace *t, int64_t seq, const char *path, weft_diag *d) {
    weft_out *o = NULL;
    if (weft_out_open(path, WEFT_OUT_STDOUT, &o, d) != WEFT_OK) return -1;
    weft_result r = weft_trace_draw_svg(t, seq, weft_out_file(o));
    if (r != WEFT_OK && !ferror(weft_out_file(o))) {
        weft_out_abort(o);
        if (r == WEFT_ERR_USAGE && seq >= 0)
            weft_diag_add(d, WEFT_SEV_ERROR, NULL, 0, 0,
                          "weft trace: call %" PRId64 " is not in the trace", seq);
        else if (r == WEFT_ERR_USAGE)
            weft_diag_add(d, WEFT_SEV_ERROR, NULL, 0, 0, "weft trace: no call in the trace");
        else
            weft_diag_add(d, WEFT_SEV_ERROR, NULL, 0, 0, "weft trace: %s", weft_result_str(r));
        return -1;
    }
    return weft_out_close(o, d) == WEFT_OK ? 0 : -1;
}

int weft_cmd_trace(int argc, char **argv) {
    weft_getopt g;
    if (argc < 2)
        return weft_usage_error(&weft_spec_trace, "which command? summarize, check, merge or draw");
    const char *sub = argv[1];
    const weft_cmd_spec *spec = NULL;
    const char *names[8];
    int nsubs = 0;
    for (const weft_cmd_spec *const *p = trace_subs; *p; p++) {
        names[nsubs++] = strchr((*p)->name, ' ') + 1;
        if (strcmp(sub, names[nsubs - 1]) == 0) spec = *p;
    }
    if (spec == NULL) {
        /* options before the command: only --help */
        weft_getopt_init(&g, &weft_spec_trace, argc, argv);
        for (int c; (c = weft_getopt_next(&g)) != WEFT_OPT_END;)
            if (c == WEFT_OPT_EXIT) return g.exit_code;
        const char *dym = weft_did_you_mean(sub, names, nsubs);
        if (dym)
            return weft_usage_error(&weft_spec_trace, "unknown command '%s'; did you mean '%s'?",
                                    sub, dym);
        return weft_usage_error(&weft_spec_trace, "unknown command '%s'", sub);
    }
    int is_sum = spec == &spec_summarize, is_check = spec == &spec_check;
    weft_trace_summary_opts so = {-1, 40};
    weft_trace_check_opts co = {0.10};
    const char *outpath = NULL;
    int rc = WEFT_EXIT_OK;
    weft_getopt_init(&g, spec, argc - 1, argv + 1);
    for (int c; (c = weft_getopt_next(&g)) != WEFT_OPT_END;) {
        switch (c) {
        case WEFT_OPT_EXIT: return g.exit_code;
        case OPT_CALL: so.call = g.num; break;
        case OPT_PATH_MAX: so.path_max = (int)g.num; break;
        case OPT_TOLERANCE:
            if (g.real <= 0 || g.real >= 1)
                return weft_opt_error(&g, "a fraction between 0 and 1, not %s", g.arg);
            co.tolerance = g.real;
            break;
        case 'o': outpath = g.arg; break;
        }
    }
    int nfiles = g.noperands;
    char **files = g.operands;
    if (nfiles == 0) return weft_usage_error(spec, "no trace file given");
    weft_diag *d = weft_diag_new();
    weft_trace t;
    if (d == NULL) return WEFT_EXIT_INPUT;
    if (read_all(&t, nfiles, files, d) != 0) {
        rc = WEFT_EXIT_INPUT;
    } else if (is_sum) {
        weft_result r = weft_trace_summarize(&t, &so, stdout);
        if (r == WEFT_ERR_USAGE)
            weft_diag_add(d, WEFT_SEV_ERROR, NULL, 0, 0,
                          "weft trace: call %" PRId64 " is not in the trace", so.call);
        else if (r != WEFT_OK)
            weft_diag_add(d, WEFT_SEV_ERROR, NULL, 0, 0, "weft trace: %s", weft_result_str(r));
        if (r != WEFT_OK) rc = WEFT_EXIT_INPUT;
    } else if (is_check) {
        if (weft_trace_check(&t, &co, stdout, NULL) > 0) rc = WEFT_EXIT_INPUT;
    } else if (spec == &spec_draw) {
        if (write_drawing(&t, so.call, outpath, d) != 0) rc = WEFT_EXIT_INPUT;
    } else if (write_merged(&t, outpath, d) != 0) {
        rc = WEFT_EXIT_INPUT;
    }
    weft_diag_print(d, stderr, WEFT_SEV_NOTE);
    weft_trace_free(&t);
    weft_diag_free(d);
    return rc;
}
