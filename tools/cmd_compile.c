/* cmd_compile.c — `weft compile`: a .weft program to MSCCL XML (or its operations or tree). */
#include "commands.h"
#include "weft_compiler.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void compile_usage(FILE *out) {
    fprintf(out,
            "usage: weft compile FILE.weft [-D NAME=VALUE]... [-I DIR]... [-o OUT]\n"
            "                    [--emit=xml|ops|ast]\n\n"
            "Evaluates a weft program for the given parameters, checks that it computes its\n"
            "collective (every rank, every chunk, each contribution once), and writes the MSCCL\n"
            "XML schedule. docs/language.md describes the language.\n\n"
            "options:\n"
            "  -D NAME=VALUE   set parameter NAME (an integer; suffixes K, M, G); repeatable\n"
            "  -I DIR          also look for included files in DIR; repeatable\n"
            "  -o OUT          write the result to OUT instead of standard output\n"
            "  --emit=xml      the MSCCL XML schedule (default)\n"
            "  --emit=ops      the evaluated operations in program order, one per line\n"
            "  --emit=ast      the syntax tree\n"
            "  -v, --verbose   also print info notes\n"
            "  -h, --help      this text\n\n"
            "Diagnostics go to standard error as file:line:col: error: message, with the\n"
            "source line and a caret. Exit codes: 0 ok (warnings allowed), 1 the program is\n"
            "wrong, 2 usage error.\n");
}

enum { EMIT_XML, EMIT_OPS, EMIT_AST };

static int usage_error(const char *fmt, const char *arg) {
    fprintf(stderr, "weft compile: ");
    fprintf(stderr, fmt, arg);
    fprintf(stderr, "\n");
    compile_usage(stderr);
    return WEFT_EXIT_USAGE;
}

int weft_cmd_compile(int argc, char **argv) {
    const char *file = NULL, *outpath = NULL;
    int emit = EMIT_XML, verbose = 0, rc = WEFT_EXIT_OK;
    const char **defines = calloc((size_t)argc + 1, sizeof *defines);
    const char **dirs = calloc((size_t)argc + 1, sizeof *dirs);
    size_t ndef = 0, ndirs = 0;
    if (defines == NULL || dirs == NULL) {
        free(defines);
        free(dirs);
        fprintf(stderr, "weft compile: out of memory\n");
        return WEFT_EXIT_INPUT;
    }
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
            compile_usage(stdout);
            goto done;
        } else if (strcmp(a, "-D") == 0 || strcmp(a, "-I") == 0 || strcmp(a, "-o") == 0) {
            if (i + 1 >= argc) {
                rc = usage_error("%s needs an argument", a);
                goto done;
            }
            if (a[1] == 'D')
                defines[ndef++] = argv[++i];
            else if (a[1] == 'I')
                dirs[ndirs++] = argv[++i];
            else
                outpath = argv[++i];
        } else if (strncmp(a, "-D", 2) == 0) {
            defines[ndef++] = a + 2;
        } else if (strncmp(a, "-I", 2) == 0) {
            dirs[ndirs++] = a + 2;
        } else if (strncmp(a, "--emit=", 7) == 0) {
            if (strcmp(a + 7, "xml") == 0)
                emit = EMIT_XML;
            else if (strcmp(a + 7, "ops") == 0)
                emit = EMIT_OPS;
            else if (strcmp(a + 7, "ast") == 0)
                emit = EMIT_AST;
            else {
                rc = usage_error("unknown --emit '%s' (expected xml, ops or ast)", a + 7);
                goto done;
            }
        } else if (strcmp(a, "-v") == 0 || strcmp(a, "--verbose") == 0) {
            verbose = 1;
        } else if (a[0] == '-' && a[1] != '\0') {
            rc = usage_error("unknown option '%s'", a);
            goto done;
        } else if (file) {
            rc = usage_error("one input file at a time (got '%s' too)", a);
            goto done;
        } else {
            file = a;
        }
    }
    if (file == NULL) {
        rc = usage_error("%s", "no input file");
        goto done;
    }

    weft_diag *d = weft_diag_new();
    weft_lang_program *prog = NULL;
    weft_cc_program *cp = NULL;
    weft_algo *algo = NULL;
    char *text = NULL;
    weft_cc_options opts = {defines, ndef, dirs, ndirs};
    weft_result r = d ? weft_lang_parse_file(file, dirs, ndirs, &prog, d) : WEFT_ERR_NOMEM;
    if (r == WEFT_OK && emit != EMIT_AST) r = weft_cc_eval(prog, &opts, &cp, d);
    if (r == WEFT_OK && emit != EMIT_AST) r = weft_cc_check(cp, d);
    if (r == WEFT_OK && emit == EMIT_XML) r = weft_cc_lower(cp, &algo, d);
    if (r == WEFT_OK && emit == EMIT_XML) r = weft_ir_validate(algo, d);
    if (r == WEFT_OK && emit == EMIT_XML) r = weft_ir_write_string(algo, &text);
    /* the one output: the XML, the operations or the syntax tree */
    FILE *f = NULL;
    if (r == WEFT_OK && (f = outpath ? fopen(outpath, "w") : stdout) == NULL) {
        perror(outpath);
        r = WEFT_ERR_SYSTEM;
    }
    if (r == WEFT_OK) {
        if (emit == EMIT_AST)
            r = weft_lang_dump(prog, f);
        else if (emit == EMIT_OPS)
            r = weft_cc_write_ops(cp, f);
        else
            fputs(text, f);
        if ((f != stdout && fclose(f) != 0) || (f == stdout && fflush(f) != 0)) r = WEFT_ERR_SYSTEM;
    }
    weft_diag_print(d, stderr, verbose ? WEFT_SEV_INFO : WEFT_SEV_NOTE);
    if (r != WEFT_OK && r != WEFT_ERR_INPUT)
        fprintf(stderr, "weft compile: %s: %s\n", file, weft_result_str(r));
    if (r != WEFT_OK) rc = WEFT_EXIT_INPUT;
    free(text);
    weft_algo_free(algo);
    weft_cc_program_free(cp);
    weft_lang_program_free(prog);
    weft_diag_free(d);
done:
    free(defines);
    free(dirs);
    return rc;
}
