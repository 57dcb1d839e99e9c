/* cmd_trace.c — `weft trace`: summarize, check and merge the per-step timeline traces that
 * WEFT_TRACE records (Chrome trace event JSON, one file per rank). */
#include "commands.h"
#include "trace_internal.h"
#include "weft_common.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char usage_text[] =
    "usage: weft trace summarize [--call N] [--path-max N] FILE...\n"
    "       weft trace check [--tolerance F] FILE...\n"
    "       weft trace merge [-o OUT] FILE...\n"
    "\n"
    "FILEs are traces written with WEFT_TRACE (one per rank, or merged); several are read as\n"
    "one trace (their clocks are already aligned).\n"
    "  summarize  time per step type and per connection (waits versus moving data, achieved\n"
    "             bandwidth), and the critical path of the longest call (--call N: of call N;\n"
    "             --path-max N: list at most N of its steps, default 40, 0 = all)\n"
    "  check      slices ordered and non-overlapping per tb and inside their kernel, the\n"
    "             busiest tb's step time within F (default 0.10) of the kernel time, nothing\n"
    "             dropped, messages received after they were sent; exit 1 when one fails\n"
    "  merge      one file with every rank (stdout, or OUT replaced atomically), for Perfetto\n"
    "             (ui.perfetto.dev) or chrome://tracing\n"
    "Exit codes: 0 ok, 1 a trace is wrong (or a check failed), 2 usage error.\n";

static int usage(const char *why) {
    if (why) fprintf(stderr, "weft trace: %s\n", why);
    fputs(usage_text, stderr);
    return WEFT_EXIT_USAGE;
}

static int parse_long(const char *s, long long lo, long long hi, long long *out) {
    char *end;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    if (end == s || *end || errno || v < lo || v > hi) return -1;
    *out = v;
    return 0;
}

static int read_all(weft_trace *t, int n, char **files, weft_diag *d) {
    weft_trace_init(t, 0);
    int bad = 0;
    for (int i = 0; i < n; i++)
        if (weft_trace_read_file(t, files[i], d) != WEFT_OK) bad = 1;
    return bad;
}

/* Writes to OUT through a temporary file beside it, renamed over it at the end, so OUT is never
 * left half-written. */
static int write_merged(const weft_trace *t, const char *path, weft_diag *d) {
    if (path == NULL) return weft_trace_write(t, stdout) == WEFT_OK && fflush(stdout) == 0 ? 0 : -1;
    char *tmp = weft_asprintf("%s.tmp.XXXXXX", path);
    if (tmp == NULL) return -1;
    int fd = mkstemp(tmp);
    FILE *f = fd >= 0 ? fdopen(fd, "w") : NULL;
    int bad = f == NULL;
    if (f == NULL && fd >= 0) close(fd);
    if (!bad && weft_trace_write(t, f) != WEFT_OK) bad = 1;
    if (f && fclose(f) != 0) bad = 1;
    if (!bad && rename(tmp, path) != 0) bad = 1;
    if (bad) {
        weft_diag_add(d, WEFT_SEV_ERROR, path, 0, 0, "cannot write: %s", strerror(errno));
        if (fd >= 0) unlink(tmp);
    }
    free(tmp);
    return bad ? -1 : 0;
}

int weft_cmd_trace(int argc, char **argv) {
    if (argc < 2) return usage("a subcommand is required");
    const char *sub = argv[1];
    if (strcmp(sub, "--help") == 0 || strcmp(sub, "-h") == 0) {
        fputs(usage_text, stdout);
        return WEFT_EXIT_OK;
    }
    int is_sum = strcmp(sub, "summarize") == 0, is_check = strcmp(sub, "check") == 0,
        is_merge = strcmp(sub, "merge") == 0;
    if (!is_sum && !is_check && !is_merge) {
        fprintf(stderr, "weft trace: unknown subcommand '%s'\n", sub);
        return usage(NULL);
    }
    weft_trace_summary_opts so = {-1, 40};
    weft_trace_check_opts co = {0.10};
    const char *outpath = NULL;
    char **files = calloc((size_t)argc, sizeof *files);
    int nfiles = 0, rc = WEFT_EXIT_OK;
    if (files == NULL) return WEFT_EXIT_INPUT;
    for (int i = 2; i < argc; i++) {
        const char *a = argv[i];
        long long v;
        if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
            fputs(usage_text, stdout);
            free(files);
            return WEFT_EXIT_OK;
        } else if (is_sum && strcmp(a, "--call") == 0) {
            if (i + 1 >= argc || parse_long(argv[++i], 0, INT64_MAX, &v) != 0) {
                free(files);
                return usage("--call needs a call number");
            }
            so.call = v;
        } else if (is_sum && strcmp(a, "--path-max") == 0) {
            if (i + 1 >= argc || parse_long(argv[++i], 0, 1 << 30, &v) != 0) {
                free(files);
                return usage("--path-max needs a number >= 0");
            }
            so.path_max = (int)v;
        } else if (is_check && strcmp(a, "--tolerance") == 0) {
            char *end;
            double f = i + 1 < argc ? strtod(argv[++i], &end) : -1;
            if (f <= 0 || f >= 1 || *end) {
                free(files);
                return usage("--tolerance needs a fraction between 0 and 1");
            }
            co.tolerance = f;
        } else if (is_merge && strcmp(a, "-o") == 0) {
            if (i + 1 >= argc) {
                free(files);
                return usage("-o needs a file name");
            }
            outpath = argv[++i];
        } else if (a[0] == '-' && a[1] != '\0') {
            fprintf(stderr, "weft trace %s: unknown option '%s'\n", sub, a);
            free(files);
            return usage(NULL);
        } else {
            files[nfiles++] = argv[i];
        }
    }
    if (nfiles == 0) {
        free(files);
        return usage("no trace file given");
    }
    weft_diag *d = weft_diag_new();
    weft_trace t;
    if (d == NULL) {
        free(files);
        return WEFT_EXIT_INPUT;
    }
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
    } else if (write_merged(&t, outpath, d) != 0) {
        rc = WEFT_EXIT_INPUT;
    }
    weft_diag_print(d, stderr, WEFT_SEV_NOTE);
    weft_trace_free(&t);
    weft_diag_free(d);
    free(files);
    return rc;
}
