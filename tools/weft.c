/* weft.c — the `weft` command line: dispatches to the subcommands listed in commands.h. */
#include "commands.h"

#include <stdio.h>
#include <string.h>

static const struct {
    const char *name, *summary;
    int (*fn)(int, char **);
} commands[] = {
#define WEFT_X_(n, s) {#n, s, weft_cmd_##n},
    WEFT_COMMANDS(WEFT_X_)
#undef WEFT_X_
};

static void usage(FILE *out) {
    fprintf(out, "usage: weft <command> [options] [args]\n\ncommands:\n");
    for (size_t i = 0; i < sizeof commands / sizeof *commands; i++)
        fprintf(out, "  %-10s %s\n", commands[i].name, commands[i].summary);
    fprintf(out, "\n`weft <command> --help` describes each. Exit codes: 0 ok, 1 the input is "
                 "wrong, 2 usage error.\n");
}

int main(int argc, char **argv) {
    if (argc < 2) {
        usage(stderr);
        return WEFT_EXIT_USAGE;
    }
    if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0 ||
        strcmp(argv[1], "help") == 0) {
        usage(stdout);
        return WEFT_EXIT_OK;
    }
    if (strcmp(argv[1], "--version") == 0) {
        printf("weft 0.1.0\n");
        return WEFT_EXIT_OK;
    }
    for (size_t i = 0; i < sizeof commands / sizeof *commands; i++)
        if (strcmp(argv[1], commands[i].name) == 0) return commands[i].fn(argc - 1, argv + 1);
    fprintf(stderr, "weft: unknown command '%s'\n", argv[1]);
    usage(stderr);
    return WEFT_EXIT_USAGE;
}
