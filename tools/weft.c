/* weft.c — the `weft` command line: dispatches to the subcommands listed in commands.h, says
 * its version, and generates the man pages and the bash completion from the option tables. */
#include "commands.h"
#include "weft_common.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if __has_include("weft_runtime.h")
#include "weft_runtime.h"
#endif

#ifndef WEFT_VERSION
#define WEFT_VERSION "unknown"
#endif
#ifndef WEFT_GIT_COMMIT
#define WEFT_GIT_COMMIT "unknown"
#endif
/* The documentation as installed, for the man pages (the prefix is wherever weft is installed:
 * the tree is relocatable). */
#ifndef WEFT_DATA_REL
#define WEFT_DATA_REL "share/weft"
#endif
#define MAN_DOCS "<prefix>/" WEFT_DATA_REL "/docs"

static const struct {
    const weft_cmd_spec *spec;
    int (*fn)(int, char **);
} commands[] = {
#define WEFT_X_(n) {&weft_spec_##n, weft_cmd_##n},
    WEFT_COMMANDS(WEFT_X_)
#undef WEFT_X_
};
#define NCOMMANDS (sizeof commands / sizeof *commands)

static const weft_cmd_spec *const specs[] = {
#define WEFT_X_(n) &weft_spec_##n,
    WEFT_COMMANDS(WEFT_X_)
#undef WEFT_X_
        NULL};

static const char intro[] =
    "weft compiles .weft programs to MSCCL XML schedules, proves schedules correct offline, runs\n"
    "them on the CPU, and shows which one libweft_nccl.so would serve a call with.";

static void usage(FILE *out) {
    fprintf(out, "usage: weft COMMAND [OPTIONS] [ARGS]\n       weft --version\n\n%s\n\ncommands:\n",
            intro);
    for (size_t i = 0; i < NCOMMANDS; i++)
        fprintf(out, "  %-10s %s\n", commands[i].spec->name, commands[i].spec->summary);
    fprintf(out, "\n`weft COMMAND --help` (or `man weft-COMMAND`) describes each. Options take\n"
                 "their value as --name=VALUE or --name VALUE; `--` ends the options; `-` as a\n"
                 "file is standard input or output. Exit codes: 0 ok, 1 the input is wrong, 2\n"
                 "usage error.\n");
}

static void version(void) {
    printf("weft %s (commit %s)\n", WEFT_VERSION, WEFT_GIT_COMMIT);
#if __has_include("weft_runtime.h")
    char range[48];
    printf("built against NCCL %d.%d.%d and CUDA %d.%d (headers)\n", NCCL_MAJOR, NCCL_MINOR,
           NCCL_PATCH, CUDART_VERSION / 1000, CUDART_VERSION % 1000 / 10);
    printf("runs on NCCL %s (the device API of these headers); under any other NCCL "
           "libweft_nccl.so passes every call to NCCL\n",
           weft_nccl_range_str(range, sizeof range));
#ifdef WEFT_GPU_RUNTIME
    printf("GPU runtime: built (libweft_nccl.so, weft-tune)\n");
#else
    printf("GPU runtime: not built (configured without CUDA or NCCL >= 2.28)\n");
#endif
#else
    printf("NCCL, CUDA: not built (nccl.h and cuda_runtime_api.h were not found at configure "
           "time: no selection, tuning or GPU runtime)\n");
#endif
}

/* weft(1): the commands and the options every one takes. */
static void man_index(FILE *out) {
    fprintf(out,
            ".TH WEFT 1 \"\" \"weft %s\" \"weft manual\"\n.SH NAME\nweft \\- compile, verify, "
            "run and select collective\\-communication schedules\n.SH SYNOPSIS\n\\fBweft\\fR "
            "\\fICOMMAND\\fR [\\fIOPTIONS\\fR] [\\fIARGS\\fR]\n.br\n\\fBweft \\-\\-version\\fR\n"
            ".SH DESCRIPTION\n",
            WEFT_VERSION);
    for (const char *p = intro; *p; p++)
        fputc(*p == '\n' ? ' ' : *p, out);
    fputs("\n.PP\nOptions take their value as \\fB\\-\\-name\\fR=\\fIVALUE\\fR or "
          "\\fB\\-\\-name\\fR \\fIVALUE\\fR; \\fB\\-\\-\\fR ends the options; \\fB\\-\\fR as a "
          "file is standard input or output.\n.SH COMMANDS\n",
          out);
    for (size_t i = 0; i < NCOMMANDS; i++)
        fprintf(out, ".TP\n\\fBweft\\-%s\\fR(1)\n%s\n", commands[i].spec->name,
                commands[i].spec->summary);
    fputs(".SH OPTIONS\n.TP\n\\fB\\-h\\fR, \\fB\\-\\-help\\fR\nthe commands\n.TP\n"
          "\\fB\\-\\-version\\fR\nthe version, the commit, and the NCCL and CUDA versions weft "
          "was built against, and the NCCL versions libweft_nccl.so runs on\n.SH EXIT STATUS\n0 "
          "ok, 1 the input is wrong, 2 usage error.\n"
          ".SH ENVIRONMENT\nSee \\fBweft env\\fR.\n.SH FILES\n.TP\n" MAN_DOCS
          "/\nweft's documentation, installed with it (the prefix is the folder above bin/weft): "
          "README.md beside it, and the language, verifier, runtime, shim and tuning guides\n"
          ".SH SEE ALSO\n",
          out);
    for (size_t i = 0; i < NCOMMANDS; i++)
        fprintf(out, "\\fBweft\\-%s\\fR(1)%s\n", commands[i].spec->name,
                i + 1 < NCOMMANDS ? "," : "");
}

/* --generate-man=DIR: weft.1 and weft-COMMAND.1 there; --generate-completion=FILE: the bash
 * completion. The build runs both (tools/CMakeLists.txt); they are not for users. */
static int generate(const char *what, const char *where) {
    weft_diag *d = weft_diag_new();
    weft_out *o = NULL;
    int bad = d == NULL;
    if (!bad && strcmp(what, "completion") == 0) {
        bad = weft_out_open(where, WEFT_OUT_STDOUT, &o, d) != WEFT_OK;
        if (!bad) weft_cmd_completion(specs, weft_out_file(o));
        bad = bad || weft_out_close(o, d) != WEFT_OK;
    }
    for (size_t i = 0; !bad && strcmp(what, "man") == 0 && i <= NCOMMANDS; i++) {
        char *path = i == 0 ? weft_asprintf("%s/weft.1", where)
                            : weft_asprintf("%s/weft-%s.1", where, commands[i - 1].spec->name);
        bad = path == NULL || weft_out_open(path, 0, &o, d) != WEFT_OK;
        free(path);
        if (bad) break;
        if (i == 0)
            man_index(weft_out_file(o));
        else
            weft_cmd_man(commands[i - 1].spec, WEFT_VERSION, MAN_DOCS, weft_out_file(o));
        bad = weft_out_close(o, d) != WEFT_OK;
    }
    weft_diag_print(d, stderr, WEFT_SEV_NOTE);
    weft_diag_free(d);
    return bad ? WEFT_EXIT_INPUT : WEFT_EXIT_OK;
}

static int dispatch(int argc, char **argv) {
    if (argc < 2) {
        fprintf(stderr, "weft: which command? (weft --help lists them)\n");
        return WEFT_EXIT_USAGE;
    }
    const char *a = argv[1];
    if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0 || strcmp(a, "help") == 0) {
        if (strcmp(a, "help") == 0 && argc > 2) {
            /* weft help COMMAND: its --help */
            char *args[] = {argv[2], "--help", NULL};
            for (size_t i = 0; i < NCOMMANDS; i++)
                if (strcmp(argv[2], commands[i].spec->name) == 0) return commands[i].fn(2, args);
        } else {
            usage(stdout);
            return WEFT_EXIT_OK;
        }
    } else if (strcmp(a, "--version") == 0 || strcmp(a, "-V") == 0) {
        version();
        return WEFT_EXIT_OK;
    } else if (strncmp(a, "--generate-", 11) == 0 && strchr(a, '=')) {
        char what[32];
        snprintf(what, sizeof what, "%.*s", (int)(strchr(a, '=') - a - 11), a + 11);
        return generate(what, strchr(a, '=') + 1);
    } else {
        for (size_t i = 0; i < NCOMMANDS; i++)
            if (strcmp(a, commands[i].spec->name) == 0) return commands[i].fn(argc - 1, argv + 1);
    }
    const char *names[NCOMMANDS + 3];
    for (size_t i = 0; i < NCOMMANDS; i++)
        names[i] = commands[i].spec->name;
    names[NCOMMANDS] = "--help";
    names[NCOMMANDS + 1] = "--version";
    const char *bad = strcmp(a, "help") == 0 ? argv[2] : a;
    const char *dym = weft_did_you_mean(bad, names, (int)NCOMMANDS + 2);
    if (dym)
        fprintf(stderr, "weft: unknown %s '%s'; did you mean '%s'?\n",
                bad[0] == '-' ? "option" : "command", bad, dym);
    else
        fprintf(stderr, "weft: unknown %s '%s' (weft --help lists the commands)\n",
                bad[0] == '-' ? "option" : "command", bad);
    return WEFT_EXIT_USAGE;
}

int main(int argc, char **argv) {
    int rc = dispatch(argc, argv);
    /* what went to standard output must have arrived: a full disk, /dev/full */
    int earlier = ferror(stdout);
    errno = 0;
    if (fflush(stdout) != 0 || earlier) {
        /* errno is the flush's; a write that failed earlier left only the error flag */
        if (errno && !earlier)
            fprintf(stderr, "weft: cannot write standard output: %s\n", strerror(errno));
        else
            fprintf(stderr, "weft: cannot write standard output (a write failed: a full disk?)\n");
        if (rc == WEFT_EXIT_OK) rc = WEFT_EXIT_INPUT;
    }
    return rc;
}
