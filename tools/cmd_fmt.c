/* cmd_fmt.c — `weft fmt`: rewrites an XML algorithm in weft's canonical, MSCCL-loadable shape. */
#include "commands.h"
#include "weft_ir.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void fmt_usage(FILE *out) {
    fprintf(out,
            "usage: weft fmt [-v] FILE.xml [-o OUT.xml]\n\n"
            "Reads an MSCCL XML algorithm, validates it, and writes it in the canonical shape the\n"
            "MSCCL executor and RCCL parse: one element per line, two-space indentation, all ten\n"
            "step attributes in a fixed order, no XML declaration, no tabs. Legacy files gain\n"
            "outofplace, minBytes and maxBytes. Writes to standard output, or to OUT (replaced\n"
            "atomically; OUT may be FILE itself).\n\n"
            "options:\n"
            "  -o OUT          write to OUT instead of standard output\n"
            "  -v, --verbose   also print info notes (e.g. defaults applied to legacy files)\n"
            "  -h, --help      this text\n\n"
            "Exit codes: 0 ok, 1 the input is unreadable or invalid (nothing is written), 2 usage\n"
            "error.\n");
}

/* Writes to a temporary file beside OUT and renames it, so OUT is never left half-written. */
static int write_atomically(const char *out, const char *text) {
    size_t n = strlen(out);
    char *tmp = malloc(n + 16);
    if (tmp == NULL) return -1;
    snprintf(tmp, n + 16, "%s.tmp.XXXXXX", out);
    int fd = mkstemp(tmp);
    if (fd < 0) {
        fprintf(stderr, "weft fmt: %s: %s\n", out, strerror(errno));
        free(tmp);
        return -1;
    }
    FILE *f = fdopen(fd, "w");
    size_t len = strlen(text);
    int bad = f == NULL || fwrite(text, 1, len, f) != len;
    if (f ? fclose(f) != 0 : close(fd) != 0) bad = 1;
    if (!bad && rename(tmp, out) != 0) bad = 1;
    if (bad) {
        fprintf(stderr, "weft fmt: %s: %s\n", out, strerror(errno));
        unlink(tmp);
    }
    free(tmp);
    return bad ? -1 : 0;
}

int weft_cmd_fmt(int argc, char **argv) {
    const char *in = NULL, *out = NULL;
    int verbose = 0, opts_done = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (opts_done || a[0] != '-' || a[1] == '\0') {
            if (in) {
                fprintf(stderr, "weft fmt: one input file only ('%s' and '%s')\n", in, a);
                return WEFT_EXIT_USAGE;
            }
            in = a;
        } else if (strcmp(a, "--") == 0) {
            opts_done = 1;
        } else if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
            fmt_usage(stdout);
            return WEFT_EXIT_OK;
        } else if (strcmp(a, "-v") == 0 || strcmp(a, "--verbose") == 0) {
            verbose = 1;
        } else if (strcmp(a, "-o") == 0 || strcmp(a, "--output") == 0) {
            if (i + 1 >= argc) {
                fprintf(stderr, "weft fmt: %s needs a file name\n", a);
                return WEFT_EXIT_USAGE;
            }
            out = argv[++i];
        } else {
            fprintf(stderr, "weft fmt: unknown option '%s'\n", a);
            fmt_usage(stderr);
            return WEFT_EXIT_USAGE;
        }
    }
    if (in == NULL) {
        fprintf(stderr, "weft fmt: no input file\n");
        fmt_usage(stderr);
        return WEFT_EXIT_USAGE;
    }
    weft_severity level =
        verbose || weft_log_level_get() >= WEFT_LOG_INFO ? WEFT_SEV_INFO : WEFT_SEV_NOTE;
    int rc = WEFT_EXIT_INPUT;
    weft_diag *d = weft_diag_new();
    weft_algo *a = NULL;
    char *text = NULL;
    weft_result r = d ? weft_ir_read_file(in, &a, d) : WEFT_ERR_NOMEM;
    weft_diag_print(d, stderr, level);
    if (r == WEFT_OK) r = weft_ir_write_string(a, &text);
    if (r != WEFT_OK) {
        if (r != WEFT_ERR_INPUT) fprintf(stderr, "weft fmt: %s: %s\n", in, weft_result_str(r));
        goto done;
    }
    if (out) {
        if (write_atomically(out, text) != 0) goto done;
    } else if (fputs(text, stdout) == EOF || fflush(stdout) != 0) {
        fprintf(stderr, "weft fmt: cannot write standard output\n");
        goto done;
    }
    rc = WEFT_EXIT_OK;
done:
    free(text);
    weft_algo_free(a);
    weft_diag_free(d);
    return rc;
}
