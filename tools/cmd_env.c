/* cmd_env.c — `weft env`: the environment variables weft reads, their meaning and values. */
#include "commands.h"
#include "weft_common.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const weft_opt env_opts[] = {{0}};

const weft_cmd_spec weft_spec_env = {
    .name = "env",
    .summary = "list the environment variables weft reads, with their values",
    .synopsis = "",
    .description = "Lists every environment variable weft reads (the runtime and libweft_nccl.so\n"
                   "included), what it does, and its value in this environment.",
    .opts = env_opts,
    .exit_status = "0 ok, 2 usage error.",
};

int weft_cmd_env(int argc, char **argv) {
    weft_getopt g;
    weft_getopt_init(&g, &weft_spec_env, argc, argv);
    for (int c; (c = weft_getopt_next(&g)) != WEFT_OPT_END;)
        if (c == WEFT_OPT_EXIT) return g.exit_code;
    if (g.noperands)
        return weft_usage_error(&weft_spec_env, "unexpected argument '%s'", g.operands[0]);
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
