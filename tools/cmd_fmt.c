/* cmd_fmt.c — `weft fmt`: rewrites an XML algorithm in weft's canonical, MSCCL-loadable shape. */
#include "cli.h"
#include "commands.h"
#include "weft_compiler.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void fmt_usage(FILE *out) {
    fprintf(out,
            "usage: weft fmt [-v] FILE.xml [-o OUT.xml]\n"
            "       weft fmt [-v] FILE.weft [-D NAME=VALUE]... [-o OUT.xml]\n\n"
            "Reads an MSCCL XML algorithm, validates it, and writes it in the canonical shape the\n"
            "MSCCL executor and RCCL parse: one element per line, two-space indentation, all ten\n"
            "step attributes in a fixed order, no XML declaration, no tabs. Legacy files gain\n"
            "outofplace, minBytes and maxBytes. Writes to standard output, or to OUT (replaced\n"
            "atomically; OUT may be FILE itself). A .weft source is compiled (with the -D\n"
            "parameters) and its schedule written the same way, as `weft compile` does.\n\n"
            "options:\n"
            "  -o OUT          write to OUT instead of standard output\n"
            "  -v, --verbose   also print info notes (e.g. defaults applied to legacy files)\n"
            "  -D NAME=VALUE   set a parameter of a .weft source; repeatable\n"
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
    int verbose = 0, opts_done = 0, k, rc = WEFT_EXIT_USAGE;
    const char **defines = calloc((size_t)argc + 1, sizeof *defines);
    size_t ndef = 0;
    weft_diag *d = NULL;
    weft_algo *a = NULL;
    char *text = NULL;
    if (defines == NULL) return WEFT_EXIT_INPUT;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (opts_done || a[0] != '-' || a[1] == '\0') {
            if (in) {
                fprintf(stderr, "weft fmt: one input file only ('%s' and '%s')\n", in, a);
                goto done;
            }
            in = a;
        } else if (strcmp(a, "--") == 0) {
            opts_done = 1;
        } else if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
            fmt_usage(stdout);
            rc = WEFT_EXIT_OK;
            goto done;
        } else if (strcmp(a, "-v") == 0 || strcmp(a, "--verbose") == 0) {
            verbose = 1;
        } else if ((k = weft_cli_define(argc, argv, &i, defines, &ndef)) != 0) {
            if (k < 0) {
                fprintf(stderr, "weft fmt: -D needs NAME=VALUE\n");
                goto done;
            }
        } else if (strcmp(a, "-o") == 0 || strcmp(a, "--output") == 0) {
            if (i + 1 >= argc) {
                fprintf(stderr, "weft fmt: %s needs a file name\n", a);
                goto done;
            }
            out = argv[++i];
        } else {
            fprintf(stderr, "weft fmt: unknown option '%s'\n", a);
            fmt_usage(stderr);
            goto done;
        }
    }
    if (in == NULL) {
        fprintf(stderr, "weft fmt: no input file\n");
        fmt_usage(stderr);
        goto done;
    }
    weft_severity level =
        verbose || weft_log_level_get() >= WEFT_LOG_INFO ? WEFT_SEV_INFO : WEFT_SEV_NOTE;
    rc = WEFT_EXIT_INPUT;
    d = weft_diag_new();
    weft_cc_options co = {defines, ndef, NULL, 0};
    weft_result r = d ? weft_cc_load_file(in, &co, &a, d) : WEFT_ERR_NOMEM;
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
    free(defines);
    return rc;
}
