/* commands.h — the table of `weft` subcommands, in the order `weft --help` lists them. Each is
 * `int weft_cmd_<name>(int argc, char **argv)` in tools/cmd_<name>.c, with its option table
 * `weft_spec_<name>` (opts.h) from which its parsing, --help, man page and completion come. */
#ifndef WEFT_TOOLS_COMMANDS_H
#define WEFT_TOOLS_COMMANDS_H

#include "opts.h"

#define WEFT_COMMANDS(X)                                                                           \
    X(env)                                                                                         \
    X(show)                                                                                        \
    X(fmt)                                                                                         \
    X(verify)                                                                                      \
    X(run)                                                                                         \
    X(compile)                                                                                     \
    X(select)                                                                                      \
    X(tune)                                                                                        \
    X(plan)                                                                                        \
    X(estimate)                                                                                    \
    X(library)                                                                                     \
    X(trace)

#define WEFT_X_(n)                                                                                 \
    int weft_cmd_##n(int argc, char **argv);                                                       \
    extern const weft_cmd_spec weft_spec_##n;
WEFT_COMMANDS(WEFT_X_)
#undef WEFT_X_

/* Exit codes shared by every subcommand. */
enum { WEFT_EXIT_OK = 0, WEFT_EXIT_INPUT = 1, WEFT_EXIT_USAGE = 2 };

#endif
