/* cmd_show.c — `weft show`: a readable per-rank, per-tb listing and a summary of XML algorithms. */
#include "commands.h"
#include "weft_ir.h"

#include <stdio.h>
#include <string.h>

static void show_usage(FILE *out) {
    fprintf(out,
            "usage: weft show [--summary] [-v] FILE.xml...\n\n"
            "Reads MSCCL XML algorithms and prints, per rank and tb, one line per step, then a\n"
            "summary (ranks, tbs, channels, steps by type, chunks sent per peer pair).\n\n"
            "Step lines read: S TYPE DATA-FLOW [after tb T step S] [(signals)], where i[x], o[x],\n"
            "s[x] are chunks of the input, output and scratch buffer (i[x..y] a range), `recv P`\n"
            "the data received from rank P, `send P` sending to rank P, `+` the reduction.\n\n"
            "options:\n"
            "  -s, --summary   print the summary only\n"
            "  -v, --verbose   also print info notes (e.g. defaults applied to legacy files)\n"
            "  -h, --help      this text\n\n"
            "Exit codes: 0 ok, 1 a file is unreadable or invalid, 2 usage error.\n");
}

int weft_cmd_show(int argc, char **argv) {
    int summary = 0, verbose = 0, nfiles = 0, rc = WEFT_EXIT_OK, opts_done = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (opts_done || a[0] != '-' || a[1] == '\0') {
            nfiles++;
        } else if (strcmp(a, "--") == 0) {
            opts_done = 1;
        } else if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
            show_usage(stdout);
            return WEFT_EXIT_OK;
        } else if (strcmp(a, "-s") == 0 || strcmp(a, "--summary") == 0) {
            summary = 1;
        } else if (strcmp(a, "-v") == 0 || strcmp(a, "--verbose") == 0) {
            verbose = 1;
        } else {
            fprintf(stderr, "weft show: unknown option '%s'\n", a);
            show_usage(stderr);
            return WEFT_EXIT_USAGE;
        }
    }
    if (nfiles == 0) {
        fprintf(stderr, "weft show: no input file\n");
        show_usage(stderr);
        return WEFT_EXIT_USAGE;
    }
    weft_severity level =
        verbose || weft_log_level_get() >= WEFT_LOG_INFO ? WEFT_SEV_INFO : WEFT_SEV_NOTE;
    int seen = 0;
    opts_done = 0;
    for (int i = 1; i < argc; i++) {
        const char *path = argv[i];
        if (!opts_done && strcmp(path, "--") == 0) {
            opts_done = 1;
            continue;
        }
        if (!opts_done && path[0] == '-' && path[1] != '\0') continue;
        weft_diag *d = weft_diag_new();
        weft_algo *a = NULL;
        weft_result r = d ? weft_ir_read_file(path, &a, d) : WEFT_ERR_NOMEM;
        fflush(stdout);
        weft_diag_print(d, stderr, level);
        if (r == WEFT_OK) {
            if (nfiles > 1) printf("%s==> %s <==\n", seen ? "\n" : "", path);
            seen = 1;
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
    return rc;
}
