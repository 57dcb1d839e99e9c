/* cmd_show.c — `weft show`: a readable per-rank, per-tb listing and a summary of XML algorithms. */
#include "commands.h"
#include "weft_compiler.h"

#include <stdlib.h>

#include <stdio.h>
#include <string.h>

static const weft_opt show_opts[] = {
    {.id = 's',
     .shortname = 's',
     .name = "summary",
     .arg = WEFT_ARG_NONE,
     .help = "print the summary only"},
    {.id = 'v',
     .shortname = 'v',
     .name = "verbose",
     .arg = WEFT_ARG_NONE,
     .help = "also print info notes (e.g. defaults applied to\nlegacy files)"},
    {.id = 'D',
     .shortname = 'D',
     .name = "define",
     .arg = WEFT_ARG_STR,
     .meta = "NAME=VALUE",
     .help = "set a parameter of .weft sources; repeatable"},
    {0}};

const weft_cmd_spec weft_spec_show = {
    .name = "show",
    .summary = "print an XML algorithm per rank and tb, with a summary",
    .synopsis = "[--summary] [-v] [-D NAME=VALUE]... FILE.xml|FILE.weft...",
    .description =
        "Reads MSCCL XML algorithms (- : standard input), or compiles .weft sources, and\n"
        "prints, per rank and tb, one line per step, then a summary (ranks, tbs, channels,\n"
        "steps by type, chunks sent per peer pair).\n"
        "\n"
        "Step lines read: S TYPE DATA-FLOW [after tb T step S] [(signals)], where i[x], o[x],\n"
        "s[x] are chunks of the input, output and scratch buffer (i[x..y] a range), `recv P`\n"
        "the data received from rank P, `send P` sending to rank P, `+` the reduction.",
    .opts = show_opts,
    .operands = WEFT_ARG_FILE,
    .exit_status = "0 ok, 1 a file is unreadable or invalid, 2 usage error.",
};

int weft_cmd_show(int argc, char **argv) {
    int summary = 0, verbose = 0, rc = WEFT_EXIT_OK;
    const char **defines = calloc((size_t)argc + 1, sizeof *defines);
    size_t ndef = 0;
    if (defines == NULL) return WEFT_EXIT_INPUT;
    weft_getopt g;
    weft_getopt_init(&g, &weft_spec_show, argc, argv);
    for (int c; (c = weft_getopt_next(&g)) != WEFT_OPT_END;) {
        if (c == WEFT_OPT_EXIT) {
            free(defines);
            return g.exit_code;
        }
        if (c == 's') summary = 1;
        if (c == 'v') verbose = 1;
        if (c == 'D') defines[ndef++] = g.arg;
    }
    int nfiles = g.noperands;
    if (nfiles == 0) {
        free(defines);
        return weft_usage_error(&weft_spec_show, "no input file");
    }
    weft_severity level =
        verbose || weft_log_level_get() >= WEFT_LOG_INFO ? WEFT_SEV_INFO : WEFT_SEV_NOTE;
    weft_cc_options co = {defines, ndef, NULL, 0};
    int seen = 0;
    for (int i = 0; i < nfiles; i++) {
        const char *path = g.operands[i];
        weft_diag *d = weft_diag_new();
        weft_algo *a = NULL;
        weft_result r = d ? weft_cc_load_file(path, &co, &a, d) : WEFT_ERR_NOMEM;
        fflush(stdout);
        weft_diag_print(d, stderr, level);
        if (r == WEFT_OK) {
            if (nfiles > 1) printf("%s==> %s <==\n", seen ? "\n" : "", path);
            seen = 1;
            r = weft_ir_show(a, stdout, summary);
            fflush(stdout);
        }
        if (r != WEFT_OK) {
            if (r != WEFT_ERR_INPUT && !ferror(stdout)) /* a write error: said at exit */
                fprintf(stderr, "weft show: %s: %s\n", path, weft_result_str(r));
            rc = WEFT_EXIT_INPUT;
        }
        weft_algo_free(a);
        weft_diag_free(d);
    }
    free(defines);
    return rc;
}
