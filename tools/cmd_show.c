/* cmd_show.c — `weft show`: a readable per-rank, per-tb listing and a summary of XML algorithms. */
#include "cli.h"
#include "commands.h"
#include "weft_compiler.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void show_usage(FILE *out) {
    fprintf(out,
            "usage: weft show [--summary] [-v] [-D NAME=VALUE]... FILE.xml|FILE.weft...\n\n"
            "Reads MSCCL XML algorithms (or compiles .weft sources) and prints, per rank and tb,\n"
            "one line per step, then a summary (ranks, tbs, channels, steps by type, chunks\n"
            "sent per peer pair).\n\n"
            "Step lines read: S TYPE DATA-FLOW [after tb T step S] [(signals)], where i[x], o[x],\n"
            "s[x] are chunks of the input, output and scratch buffer (i[x..y] a range), `recv P`\n"
            "the data received from rank P, `send P` sending to rank P, `+` the reduction.\n\n"
            "options:\n"
            "  -s, --summary   print the summary only\n"
            "  -v, --verbose   also print info notes (e.g. defaults applied to legacy files)\n"
            "  -D NAME=VALUE   set a parameter of .weft sources; repeatable\n"
            "  -h, --help      this text\n\n"
            "Exit codes: 0 ok, 1 a file is unreadable or invalid, 2 usage error.\n");
}

int weft_cmd_show(int argc, char **argv) {
    int summary = 0, verbose = 0, nfiles = 0, rc = WEFT_EXIT_OK, opts_done = 0, k;
    const char **files = calloc((size_t)argc + 1, sizeof *files);
    const char **defines = calloc((size_t)argc + 1, sizeof *defines);
    size_t ndef = 0;
    if (files == NULL || defines == NULL) {
        fprintf(stderr, "weft show: out of memory\n");
        rc = WEFT_EXIT_INPUT;
        goto done;
    }
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (opts_done || a[0] != '-' || a[1] == '\0') {
            files[nfiles++] = a;
        } else if (strcmp(a, "--") == 0) {
            opts_done = 1;
        } else if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
            show_usage(stdout);
            goto done;
        } else if (strcmp(a, "-s") == 0 || strcmp(a, "--summary") == 0) {
            summary = 1;
        } else if (strcmp(a, "-v") == 0 || strcmp(a, "--verbose") == 0) {
            verbose = 1;
        } else if ((k = weft_cli_define(argc, argv, &i, defines, &ndef)) != 0) {
            if (k < 0) {
                fprintf(stderr, "weft show: -D needs NAME=VALUE\n");
                rc = WEFT_EXIT_USAGE;
                goto done;
            }
        } else {
            fprintf(stderr, "weft show: unknown option '%s'\n", a);
            show_usage(stderr);
            rc = WEFT_EXIT_USAGE;
            goto done;
        }
    }
    if (nfiles == 0) {
        fprintf(stderr, "weft show: no input file\n");
        show_usage(stderr);
        rc = WEFT_EXIT_USAGE;
        goto done;
    }
    weft_severity level =
        verbose || weft_log_level_get() >= WEFT_LOG_INFO ? WEFT_SEV_INFO : WEFT_SEV_NOTE;
    weft_cc_options co = {defines, ndef, NULL, 0};
    for (int i = 0; i < nfiles; i++) {
        const char *path = files[i];
        weft_diag *d = weft_diag_new();
        weft_algo *a = NULL;
        weft_result r = d ? weft_cc_load_file(path, &co, &a, d) : WEFT_ERR_NOMEM;
        fflush(stdout);
        weft_diag_print(d, stderr, level);
        if (r == WEFT_OK) {
            if (nfiles > 1) printf("%s==> %s <==\n", i ? "\n" : "", path);
            r = weft_ir_show(a, stdout, summary);
            fflush(stdout);
        }
        if (r != WEFT_OK) {
            if (r != WEFT_ERR_INPUT)
                fprintf(stderr, "weft show: %s: %s\n", path, weft_result_str(r));
            rc = WEFT_EXIT_INPUT;
        }
        weft_algo_free(a);
        weft_diag_free(d);
    }
done:
    free(files);
    free(defines);
    return rc;
}
