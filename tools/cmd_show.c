/* cmd_show.c — `weft show`: a readable per-rank, per-tb listing and a summary of XML algorithms,
 * or a picture of one (--format=svg|dot, draw.c). */
#include "commands.h"
#include "draw.h"
#include "weft_compiler.h"

#include <stdlib.h>

#include <stdio.h>
#include <string.h>

enum { FMT_TEXT, FMT_SVG, FMT_DOT, OPT_FORMAT = 256, OPT_GPN };
static const char *const show_formats[] = {"text", "svg", "dot", NULL};

static const weft_opt show_opts[] = {
    WEFT_OPT_FLAG('s', "summary", "print the summary only"),
    WEFT_OPT_FLAG('v', "verbose",
                  "also print info notes (e.g. defaults applied to\n"
                  "legacy files)"),
    WEFT_OPT_DEFINE,
    WEFT_OPT_TEXT(OUT, 'o', "output", "OUT",
                  "write the listing or picture to OUT (default, or -:\n"
                  "standard output)"),
    WEFT_OPT_WORD(OPT_FORMAT, "format", "F", show_formats, NULL,
                  "text (default), or a picture of one schedule: svg,\n"
                  "or dot for Graphviz"),
    WEFT_OPT_INT(OPT_GPN, "gpus-per-node", "G", 1, 8192,
                 "pictures: frame ranks n*G .. n*G+G-1 as node n and\n"
                 "colour messages between nodes"),
    {0}};

const weft_cmd_spec weft_spec_show = {
    .name = "show",
    .summary = "print an XML algorithm per rank and tb, with a summary",
    .synopsis = "[--summary] [-v] [-D NAME=VALUE]... [-o OUT] FILE.xml|FILE.weft...\n"
                "--format=svg|dot [--gpus-per-node G] [-D NAME=VALUE]... [-o OUT]\n"
                "FILE.xml|FILE.weft",
    .description =
        "Reads MSCCL XML algorithms (- : standard input), or compiles .weft sources, and\n"
        "prints, per rank and tb, one line per step, then a summary (ranks, tbs, channels,\n"
        "steps by type, chunks sent per peer pair).\n"
        "\n"
        "--format=svg draws the schedule instead: rows of tbs grouped by rank (tbs whose\n"
        "steps never share a column share a row); each step a box, in the column of its\n"
        "happens-before depth, naming its type and the chunk it writes (or reads); an arrow\n"
        "per message (dashed: dependencies across tbs; grey and labelled with the peer at\n"
        "both ends: between ranks not side by side); the critical path (the longest chain of\n"
        "waits, as `weft verify` counts it) in red; a legend. --gpus-per-node G frames each\n"
        "node's ranks and colours messages between nodes. --format=dot writes the same as a\n"
        "Graphviz graph (`dot -Tsvg`).\n"
        "\n"
        "Step lines read: S TYPE DATA-FLOW [after tb T step S] [(signals)], where i[x], o[x],\n"
        "s[x] are chunks of the input, output and scratch buffer (i[x..y] a range), `recv P`\n"
        "the data received from rank P, `send P` sending to rank P, `+` the reduction.",
    .opts = show_opts,
    .operands = WEFT_ARG_ALGO,
    .exit_status = "0 ok, 1 a file is unreadable or invalid, 2 usage error.",
};

/* The picture of one algorithm on f. */
static weft_result draw(const weft_algo *a, int format, int32_t gpn, FILE *f, weft_diag *d) {
    weft_timeline t;
    weft_result r = weft_ir_timeline(a, &t, d);
    if (r != WEFT_OK) return r;
    int bad =
        format == FMT_SVG ? draw_schedule_svg(a, &t, gpn, f) : draw_schedule_dot(a, &t, gpn, f);
    weft_timeline_free(&t);
    return bad ? WEFT_ERR_SYSTEM : WEFT_OK;
}

int weft_cmd_show(int argc, char **argv) {
    int summary = 0, verbose = 0, rc = WEFT_EXIT_OK, format = FMT_TEXT;
    int32_t gpn = 0;
    const char *outpath = NULL;
    weft_out *out = NULL;
    weft_getopt g;
    weft_getopt_init(&g, &weft_spec_show, argc, argv);
    for (int c; (c = weft_getopt_next(&g)) != WEFT_OPT_END;) {
        if (c == WEFT_OPT_EXIT) {
            weft_getopt_free(&g);
            return g.exit_code;
        }
        if (c == 's') summary = 1;
        if (c == 'v') verbose = 1;
        if (c == OPT_FORMAT) format = (int)g.num;
        if (c == 'o') outpath = g.arg;
        if (c == OPT_GPN) gpn = (int32_t)g.num;
    }
    int nfiles = g.noperands;
    if (nfiles == 0) {
        weft_getopt_free(&g);
        return weft_usage_error(&weft_spec_show, "no input file");
    }
    if (format != FMT_TEXT && (nfiles > 1 || summary)) {
        weft_getopt_free(&g);
        return weft_usage_error(&weft_spec_show, "--format=%s draws one file, without --summary",
                                show_formats[format]);
    }
    if (gpn && format == FMT_TEXT) {
        weft_getopt_free(&g);
        return weft_usage_error(&weft_spec_show, "--gpus-per-node frames nodes in a picture: with "
                                                 "--format=svg or dot");
    }
    weft_severity level =
        verbose || weft_log_level_get() >= WEFT_LOG_INFO ? WEFT_SEV_INFO : WEFT_SEV_NOTE;
    weft_cc_options co = {g.defines, g.ndefines, NULL, 0};
    int seen = 0;
    {
        weft_diag *od = weft_diag_new();
        if (weft_out_open(outpath, WEFT_OUT_STDOUT, &out, od) != WEFT_OK) {
            weft_diag_print(od, stderr, WEFT_SEV_ERROR);
            weft_diag_free(od);
            weft_getopt_free(&g);
            return WEFT_EXIT_INPUT;
        }
        weft_diag_free(od);
    }
    FILE *of = weft_out_file(out);
    for (int i = 0; i < nfiles; i++) {
        const char *path = g.operands[i];
        weft_diag *d = weft_diag_new();
        weft_algo *a = NULL;
        weft_result r = d ? weft_cc_load_file(path, &co, &a, d) : WEFT_ERR_NOMEM;
        fflush(of);
        weft_diag_print(d, stderr, level);
        if (r == WEFT_OK) {
            if (nfiles > 1) fprintf(of, "%s==> %s <==\n", seen ? "\n" : "", path);
            seen = 1;
            r = format == FMT_TEXT ? weft_ir_show(a, of, summary) : draw(a, format, gpn, of, d);
            fflush(of);
            weft_diag_print(d, stderr, WEFT_SEV_ERROR);
        }
        if (r != WEFT_OK) {
            if (r != WEFT_ERR_INPUT && !ferror(of)) /* a write error: said at exit */
                fprintf(stderr, "weft show: %s: %s\n", path, weft_result_str(r));
            rc = WEFT_EXIT_INPUT;
        }
        weft_algo_free(a);
        weft_diag_free(d);
    }
    weft_getopt_free(&g);
    /* the output is kept even when a file failed (as with several files on stdout) */
    weft_diag *cd = weft_diag_new();
    if (weft_out_close(out, cd) != WEFT_OK) rc = WEFT_EXIT_INPUT;
    weft_diag_print(cd, stderr, WEFT_SEV_ERROR);
    weft_diag_free(cd);
    return rc;
}
