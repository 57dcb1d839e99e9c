/* tune_spec.c — `weft tune`'s option table (opts.h): parsed by tune_opts_parse in the weft CLI
 * and in weft-tune, and read by --help, the man page and the completion even where weft-tune is
 * not built. */
#include "tune_spec.h"

#include "weft_ir.h"

#define TUNE_IF_1(x) x,
#define TUNE_IF_0(x)
#define TUNE_COLL_(id, name, a, b, c, d, runnable, e) TUNE_IF_##runnable(name)
const char *const tune_coll_words[] = {WEFT_COLLS(TUNE_COLL_) NULL};
static const char *const mode_words[] = {"out", "in", NULL};
static const char *const launch_words[] = {"eager", "graph", NULL};
static const char *const buffer_words[] = {"unregistered", "registered", NULL};

static const weft_opt tune_opts_table[] = {
    WEFT_OPT_TEXT(PATHS, 'd', "algos", "PATHS",
                  "folders and files of algorithms, as WEFT_ALGO_DIR\n"
                  "(default: its value)"),
    WEFT_OPT_TEXT(OUT, 'o', "output", "TABLE", "the table to write (rank 0 writes it)"),
    WEFT_OPT_LIST('C', "colls", "COLLS", tune_coll_words,
                  "collectives, comma-separated (default: each one\n"
                  "some algorithm fits)"),
    WEFT_OPT_SIZE('b', "minbytes", "MIN", 1, ~0ull, "the smallest size (default 8)"),
    WEFT_OPT_SIZE('e', "maxbytes", "MAX", 1, ~0ull, "the largest size (default 256M)"),
    WEFT_OPT_REAL('f', "stepfactor", "FACTOR", 1.01, 1024,
                  "sizes in bytes as selection counts them, from MIN\n"
                  "to MAX, times FACTOR (default 2; K, M, G are\n"
                  "powers of 1024)"),
    WEFT_OPT_LIST(TUNE_OPT_MODES, "modes", "LIST", mode_words,
                  "out (out-of-place), in (in-place); default both.\n"
                  "Rooted collectives are measured out-of-place\n"
                  "only (their ranks cannot know the root's mode)"),
    WEFT_OPT_LIST(TUNE_OPT_LAUNCH, "launch", "LIST", launch_words,
                  "eager, graph (CUDA graph capture); default both"),
    WEFT_OPT_LIST(TUNE_OPT_BUFFERS, "buffers", "LIST", buffer_words,
                  "unregistered, registered (ncclCommWindowRegister);\n"
                  "default both. Rooted collectives: unregistered\n"
                  "only, for the same reason"),
    WEFT_OPT_TEXT(STR, 'D', "define", "NAME=VALUE",
                  "compile every .weft source that declares NAME with\n"
                  "it, e.g. -D SERVE=1 -D ANYN=1 lets the library's\n"
                  "files that NCCL serves by default compete"),
    WEFT_OPT_INT('n', "iters", "ITERS", 10, 1000000,
                 "calls per implementation and size, at least\n"
                 "(default 200)"),
    WEFT_OPT_INT(TUNE_OPT_CALLS, "calls", "K", 1, 10000,
                 "calls per timed sample, as nccl-tests -n (default\n"
                 "20)"),
    WEFT_OPT_INT('w', "warmup", "WARMUP", 0, 100000,
                 "warm-up calls per implementation and size\n"
                 "(default 20)"),
    WEFT_OPT_REAL(TUNE_OPT_PRECISION, "precision", "P", 0.0001, 0.5,
                  "a ratio known to +-P needs no more rounds (default\n"
                  "0.01)"),
    WEFT_OPT_INT(TUNE_OPT_MAX_ROUNDS, "max-rounds", "X", 1, 100,
                 "at most X times the first rounds (default 4)"),
    WEFT_OPT_REAL(TUNE_OPT_MARGIN, "margin", "M", 0, 0.5,
                  "a candidate must also beat NCCL by M, a fraction\n"
                  "(default 0)"),
    WEFT_OPT_FLAG(TUNE_OPT_NO_CHECK, "no-check",
                  "do not compare each candidate's result with\n"
                  "NCCL's first"),
    WEFT_OPT_REAL(TUNE_OPT_VERIFY_MAX, "verify-max", "R", 0.5, 2,
                  "the verification keeps a choice unless weft's time\n"
                  "through the shim is above R x NCCL's beyond the\n"
                  "noise (default 1.02)"),
    WEFT_OPT_INT(TUNE_OPT_VERIFY_CALLS_SMALL, "verify-calls-small", "K", 1, 10000,
                 "the verification's calls per sample below 1 MB,\n"
                 "as compare_nccl.sh --iters-small (default 200;\n"
                 "from 1 MB --calls, as its --iters)"),
    WEFT_OPT_FLAG(TUNE_OPT_NO_VERIFY, "no-verify",
                  "write the table as decided, without timing it\n"
                  "through the shim"),
    WEFT_OPT_FLAG(TUNE_OPT_MERGE, "merge",
                  "keep the sections of an existing TABLE this run\n"
                  "does not measure"),
    WEFT_OPT_FLAG(TUNE_OPT_PLOT, "plot",
                  "also draw the table: time and bus bandwidth\n"
                  "against size (TABLE.svg)"),
    WEFT_OPT_TEXT(FILE, TUNE_OPT_PLOT_ONLY, "plot-only", "TABLE",
                  "draw TABLE (to -o PICTURE.svg, default TABLE.svg),\n"
                  "measure nothing (no GPU needed)"),
    WEFT_OPT_FLAG('q', "quiet", "no progress output"),
    {0}};

const weft_cmd_spec weft_spec_tune = {
    .name = "tune",
    .summary = "measure which algorithm serves each size on this machine (under mpirun)",
    .synopsis = "-d PATHS -o TABLE [-C COLLS] [-b MIN -e MAX -f FACTOR]\n"
                "                     [--modes out,in] [--launch eager,graph]\n"
                "                     [--buffers unregistered,registered] [-D NAME=VALUE]... "
                "[-n ITERS]\n"
                "                     [--calls K] [-w WARMUP] [--precision P] [--max-rounds X] "
                "[--margin M]\n"
                "                     [--no-check] [--verify-max R] [--verify-calls-small K]\n"
                "                     [--no-verify] [--merge] [--plot] [-q]\n"
                "--plot-only TABLE [-o PICTURE.svg]",
    .description =
        "Measures, on this machine, which algorithm of PATHS serves each collective call\n"
        "fastest, and writes the answer as a tuning table that libweft_nccl.so follows\n"
        "(WEFT_TUNE_FILE=TABLE, or TABLE saved as weft-tune.txt in the algorithm folder).\n"
        "Launch it like nccl-tests, one process per GPU of one node: mpirun -np N weft tune\n"
        "... For each collective, size, buffer mode, launch kind (eager or CUDA graph) and\n"
        "buffer kind (plain or registered as NCCL symmetric windows), every candidate that\n"
        "fits the communicator and NCCL itself run interleaved on the same buffers, each\n"
        "sample timed as nccl-tests times (K calls between a barrier and the stream's end, on\n"
        "the host clock; NCCL on communicators weft is not attached to): warm-up, then rounds\n"
        "until at least ITERS calls each, repeated until the spread of each candidate's time\n"
        "ratio to NCCL is known. A candidate serves a size only when it beats NCCL by more\n"
        "than that noise (and M); every rank decides from the same numbers. Before the table is\n"
        "written, each size it gives to weft is timed against NCCL again through the shim's\n"
        "selection (the table loaded as libweft_nccl.so loads it), each sample as\n"
        "tools/compare_nccl.sh with the same -b, -e and -f runs nccl-tests for that size\n"
        "(its -n, its buffers' offsets); one slower than R x NCCL beyond the noise goes back\n"
        "to NCCL, and the worst ratio kept is weft's median time over NCCL's, as that\n"
        "script reads it. docs/tune.md.",
    .opts = tune_opts_table,
    .exit_status = "0 ok, 1 measuring failed, 2 usage error.",
};
