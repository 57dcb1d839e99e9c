/* commands.h — the table of `weft` subcommands: X(name, summary). One line per command; each is
 * implemented as `int weft_cmd_<name>(int argc, char **argv)` in tools/cmd_<name>.c. */
#ifndef WEFT_TOOLS_COMMANDS_H
#define WEFT_TOOLS_COMMANDS_H

#define WEFT_COMMANDS(X)                                                                           \
    X(env, "list the environment variables weft reads, with their values")                         \
    X(show, "print an XML algorithm per rank and tb, with a summary")                              \
    X(fmt, "rewrite an XML algorithm in the canonical MSCCL-loadable shape")                       \
    X(verify, "prove XML algorithms correct, deadlock-free and race-free, offline")                \
    X(run, "execute an XML algorithm with real data and check the result (--cpu)")                 \
    X(compile, "compile a .weft program to MSCCL XML")                                             \
    X(select, "which loaded algorithm serves a collective call, or why NCCL does")                 \
    X(tune, "measure which algorithm serves each size on this machine (under mpirun)")             \
    X(plan, "the GPU and network phases a schedule runs in across nodes, proven")                  \
    X(estimate, "what a schedule costs per message size: timing model, critical path, timeline")   \
    X(library, "compile, verify and CPU-execute the algorithm library; print a table")             \
    X(trace, "summarize, check and merge per-step timeline traces (WEFT_TRACE)")

#define WEFT_X_(n, s) int weft_cmd_##n(int argc, char **argv);
WEFT_COMMANDS(WEFT_X_)
#undef WEFT_X_

/* Exit codes shared by every subcommand. */
enum { WEFT_EXIT_OK = 0, WEFT_EXIT_INPUT = 1, WEFT_EXIT_USAGE = 2 };

#endif
