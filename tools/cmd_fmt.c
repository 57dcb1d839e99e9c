/* cmd_fmt.c — `weft fmt`: rewrites an XML algorithm in weft's canonical, MSCCL-loadable shape. */
#include "commands.h"
#include "weft_compiler.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const weft_opt fmt_opts[] = {
    WEFT_OPT_TEXT(OUT, 'o', "output", "OUT", "write to OUT instead of standard output"),
    WEFT_OPT_FLAG('v', "verbose",
                  "also print info notes (e.g. defaults applied to\n"
                  "legacy files)"),
    WEFT_OPT_DEFINE,
    {0}};

const weft_cmd_spec weft_spec_fmt = {
    .name = "fmt",
    .summary = "rewrite an XML algorithm in the canonical MSCCL-loadable shape",
    .synopsis = "[-v] FILE.xml [-o OUT.xml]\n"
                "[-v] FILE.weft [-D NAME=VALUE]... [-o OUT.xml]",
    .description =
        "Reads an MSCCL XML algorithm (- : standard input), validates it, and writes it in the\n"
        "canonical shape the MSCCL executor and RCCL parse: one element per line, two-space\n"
        "indentation, all ten step attributes in a fixed order, no XML declaration, no tabs.\n"
        "Legacy files gain outofplace, minBytes and maxBytes. Writes to standard output, or to\n"
        "OUT: through a symbolic link to its target, into a FIFO or device as a stream, a\n"
        "regular file replaced whole (never half-written; OUT may be FILE itself) keeping its\n"
        "mode. A .weft source is compiled (with the -D parameters) and its schedule written\n"
        "the same way, as `weft compile` does.",
    .opts = fmt_opts,
    .operands = WEFT_ARG_ALGO,
    .exit_status = "0 ok, 1 the input is unreadable or invalid (nothing is written), or OUT\n"
                   "cannot be written, 2 usage error.",
};

int weft_cmd_fmt(int argc, char **argv) {
    const char *in = NULL, *out = NULL;
    int verbose = 0, rc = WEFT_EXIT_INPUT;
    weft_diag *d = NULL;
    weft_algo *a = NULL;
    char *text = NULL;
    weft_getopt g;
    weft_getopt_init(&g, &weft_spec_fmt, argc, argv);
    for (int c; (c = weft_getopt_next(&g)) != WEFT_OPT_END;) {
        if (c == WEFT_OPT_EXIT) {
            rc = g.exit_code;
            goto done;
        }
        if (c == 'o') out = g.arg;
        if (c == 'v') verbose = 1;
    }
    if (g.noperands != 1) {
        rc = g.noperands ? weft_usage_error(&weft_spec_fmt, "one input file only ('%s' and '%s')",
                                            g.operands[0], g.operands[1])
                         : weft_usage_error(&weft_spec_fmt, "no input file");
        goto done;
    }
    in = g.operands[0];
    weft_severity level =
        verbose || weft_log_level_get() >= WEFT_LOG_INFO ? WEFT_SEV_INFO : WEFT_SEV_NOTE;
    d = weft_diag_new();
    weft_cc_options co = {g.defines, g.ndefines, NULL, 0};
    weft_result r = d ? weft_cc_load_file(in, &co, &a, d) : WEFT_ERR_NOMEM;
    if (r == WEFT_OK) r = weft_ir_write_string(a, &text);
    if (r == WEFT_OK) r = weft_write_file(out, WEFT_OUT_STDOUT, text, strlen(text), d);
    weft_diag_print(d, stderr, level);
    if (r != WEFT_OK && r != WEFT_ERR_INPUT && r != WEFT_ERR_SYSTEM)
        fprintf(stderr, "weft fmt: %s: %s\n", in, weft_result_str(r));
    if (r == WEFT_OK) rc = WEFT_EXIT_OK;
done:
    free(text);
    weft_algo_free(a);
    weft_diag_free(d);
    weft_getopt_free(&g);
    return rc;
}
