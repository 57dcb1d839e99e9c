/* cmd_env.c — `weft env`: the environment variables weft reads, their meaning and values. */
#include "commands.h"
#include "weft_common.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int weft_cmd_env(int argc, char **argv) {
    if (argc > 1 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)) {
        printf("usage: weft env\n\nLists every environment variable weft reads (the runtime and "
               "libweft_nccl.so included), what it does, and its value in this environment.\n");
        return WEFT_EXIT_OK;
    }
    if (argc > 1) {
        fprintf(stderr, "weft env: unexpected argument '%s'\n", argv[1]);
        return WEFT_EXIT_USAGE;
    }
    static const struct {
        const char *name, *alias, *help;
    } vars[] = {
#define WEFT_X_(id, n, a, h) {n, a, h},
        WEFT_ENV_VARS(WEFT_X_)
#undef WEFT_X_
    };
    for (size_t i = 0; i < sizeof vars / sizeof *vars; i++) {
        const char *v = getenv(vars[i].name);
        if ((v == NULL || !*v) && vars[i].alias) v = getenv(vars[i].alias);
        printf("%-16s %s%s%s\n", vars[i].name, vars[i].help, vars[i].alias ? "; alias " : "",
               vars[i].alias ? vars[i].alias : "");
        printf("%-16s = %s\n", "", v && *v ? v : "(unset)");
    }
    return WEFT_EXIT_OK;
}
