/* cmd_compile.c — `weft compile`: a .weft program to MSCCL XML (or its operations or tree). */
#include "commands.h"
#include "weft_compiler.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const emit_words[] = {"xml", "ops", "ast", NULL};
enum { EMIT_XML, EMIT_OPS, EMIT_AST, OPT_EMIT = 256 };

static const weft_opt compile_opts[] = {
    WEFT_OPT_DEFINE_HELP("set parameter NAME (an integer; suffixes K, M, G);\n"
                         "repeatable"),
    WEFT_OPT_TEXT(DIR, 'I', "include", "DIR", "also look for included files in DIR; repeatable"),
    WEFT_OPT_TEXT(OUT, 'o', "output", "OUT",
                  "write the result to OUT (default, or -: standard\n"
                  "output)"),
    WEFT_OPT_WORD(OPT_EMIT, "emit", "WHAT", emit_words, NULL,
                  "xml: the MSCCL XML schedule (default); ops: the\n"
                  "evaluated operations in program order, one per\n"
                  "line; ast: the syntax tree"),
    WEFT_OPT_FLAG('v', "verbose", "also print info notes"),
    {0}};

const weft_cmd_spec weft_spec_compile = {
    .name = "compile",
    .summary = "compile a .weft program to MSCCL XML",
    .synopsis = "FILE.weft [-D NAME=VALUE]... [-I DIR]... [-o OUT] [--emit=xml|ops|ast]",
    .description =
        "Evaluates a weft program for the given parameters, checks that it computes its\n"
        "collective (every rank, every chunk, each contribution once), and writes the MSCCL\n"
        "XML schedule. FILE - reads standard input. docs/language.md describes the language.\n"
        "\n"
        "Diagnostics go to standard error as file:line:col: error: message, with the source\n"
        "line and a caret.",
    .opts = compile_opts,
    .operands = WEFT_ARG_ALGO,
    .exit_status = "0 ok (warnings allowed), 1 the program is wrong, 2 usage error.",
};

int weft_cmd_compile(int argc, char **argv) {
    const char *file = NULL, *outpath = NULL;
    int emit = EMIT_XML, verbose = 0, rc = WEFT_EXIT_OK;
    const char **dirs = calloc((size_t)argc + 1, sizeof *dirs);
    size_t ndirs = 0;
    if (dirs == NULL) {
        fprintf(stderr, "weft compile: out of memory\n");
        return WEFT_EXIT_INPUT;
    }
    weft_getopt g;
    weft_getopt_init(&g, &weft_spec_compile, argc, argv);
    for (int c; (c = weft_getopt_next(&g)) != WEFT_OPT_END;) {
        switch (c) {
        case WEFT_OPT_EXIT: rc = g.exit_code; goto done;
        case 'I': dirs[ndirs++] = g.arg; break;
        case 'o': outpath = g.arg; break;
        case OPT_EMIT: emit = (int)g.num; break;
        case 'v': verbose = 1; break;
        }
    }
    if (g.noperands != 1) {
        rc = g.noperands ? weft_usage_error(&weft_spec_compile,
                                            "one input file at a time (got '%s' and '%s')",
                                            g.operands[0], g.operands[1])
                         : weft_usage_error(&weft_spec_compile, "no input file");
        goto done;
    }
    file = g.operands[0];

    weft_diag *d = weft_diag_new();
    weft_lang_program *prog = NULL;
    weft_cc_program *cp = NULL;
    weft_algo *algo = NULL;
    char *text = NULL;
    weft_cc_options opts = {g.defines, g.ndefines, dirs, ndirs};
    weft_result r = d ? weft_lang_parse_file(file, dirs, ndirs, &prog, d) : WEFT_ERR_NOMEM;
    if (r == WEFT_OK && emit != EMIT_AST) r = weft_cc_eval(prog, &opts, &cp, d);
    if (r == WEFT_OK && emit != EMIT_AST) r = weft_cc_check(cp, d);
    if (r == WEFT_OK && emit == EMIT_XML) r = weft_cc_lower(cp, &algo, d);
    if (r == WEFT_OK && emit == EMIT_XML) r = weft_ir_validate(algo, d);
    if (r == WEFT_OK && emit == EMIT_XML) r = weft_ir_write_string(algo, &text);
    /* the one output: the XML, the operations or the syntax tree; a write error (a full disk)
     * is said by weft_out_close */
    weft_out *out = NULL;
    if (r == WEFT_OK && weft_out_open(outpath, WEFT_OUT_STDOUT, &out, d) != WEFT_OK)
        r = WEFT_ERR_INPUT;
    if (r == WEFT_OK) {
        FILE *f = weft_out_file(out);
        if (emit == EMIT_AST)
            r = weft_lang_dump(prog, f);
        else if (emit == EMIT_OPS)
            r = weft_cc_write_ops(cp, f);
        else
            fputs(text, f);
        if (r != WEFT_OK && r != WEFT_ERR_SYSTEM)
            weft_out_abort(out);
        else if (weft_out_close(out, d) != WEFT_OK)
            r = WEFT_ERR_INPUT;
    }
    if (weft_cmd_report(&weft_spec_compile, file, r, d, verbose ? WEFT_SEV_INFO : WEFT_SEV_NOTE) !=
        WEFT_OK)
        rc = WEFT_EXIT_INPUT;
    free(text);
    weft_algo_free(algo);
    weft_cc_program_free(cp);
    weft_lang_program_free(prog);
    weft_diag_free(d);
done:
    weft_getopt_free(&g);
    free(dirs);
    return rc;
}
