/* cmd_env.c — `weft env`: the environment variables weft reads, their meaning and values. */
#include "commands.h"
#include "weft_common.h"
#if __has_include("weft_rt_cfg.h")
#include "weft_rt_cfg.h" /* the runtime's own spec parsers */
#endif

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const weft_opt env_opts[] = {{0}};

const weft_cmd_spec weft_spec_env = {
    .name = "env",
    .summary = "list the environment variables weft reads, with their values",
    .synopsis = "",
    .description = "Lists every environment variable weft reads (the runtime and libweft_nccl.so\n"
                   "included), what it does (its unit and default), and its value in this\n"
                   "environment, marking a value weft would ignore as invalid, with why.",
    .opts = env_opts,
    .exit_status = "0 ok, 1 a variable holds a value weft ignores (marked invalid), 2 usage error.",
};

int weft_cmd_env(int argc, char **argv) {
    weft_getopt g;
    weft_getopt_init(&g, &weft_spec_env, argc, argv);
    for (int c; (c = weft_getopt_next(&g)) != WEFT_OPT_END;)
        if (c == WEFT_OPT_EXIT) return g.exit_code;
    if (g.noperands)
        return weft_usage_error(&weft_spec_env, "unexpected argument '%s'", g.operands[0]);
    static const struct {
        const char *name, *alias;
    } vars[] = {
#define WEFT_X_(id, n, a, h, k) {n, a},
        WEFT_ENV_VARS(WEFT_X_)
#undef WEFT_X_
    };
    int w = 0; /* the names' column: as wide as the longest */
    for (size_t i = 0; i < sizeof vars / sizeof *vars; i++)
        w = (int)strlen(vars[i].name) > w ? (int)strlen(vars[i].name) : w;
    int bad = 0;
    for (size_t i = 0; i < sizeof vars / sizeof *vars; i++) {
        const char *v = getenv(vars[i].name);
        if ((v == NULL || !*v) && vars[i].alias) v = getenv(vars[i].alias);
        const char *why = weft_env_check((weft_env_id)i, v);
#if __has_include("weft_rt_cfg.h")
        char rwhy[256] = "";
        if (!why && v && *v && weft_rt_env_check((weft_env_id)i, v, rwhy, sizeof rwhy) != WEFT_OK)
            why = rwhy;
#endif
        printf("%-*s %s%s%s\n", w, vars[i].name, weft_env_help((weft_env_id)i),
               vars[i].alias ? "; alias " : "", vars[i].alias ? vars[i].alias : "");
        if (why)
            printf("%-*s = %s   (invalid: %s; weft ignores it)\n", w, "", v, why);
        else
            printf("%-*s = %s\n", w, "", v && *v ? v : "(unset)");
        bad |= why != NULL;
    }
    if (bad) {
        fprintf(stderr, "weft env: some values are invalid (marked): weft ignores them\n");
        return WEFT_EXIT_INPUT;
    }
    return WEFT_EXIT_OK;
}
