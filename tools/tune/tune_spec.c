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
    {.id = 'd',
     .shortname = 'd',
     .name = "algos",
     .arg = WEFT_ARG_PATHS,
     .meta = "PATHS",
     .help = "folders and files of algorithms, as WEFT_ALGO_DIR\n(default: its value)"},
    {.id = 'o',
     .shortname = 'o',
     .name = "output",
     .arg = WEFT_ARG_OUT,
     .meta = "TABLE",
     .help = "the table to write (rank 0 writes it)"},
    {.id = 'C',
     .shortname = 'C',
     .name = "colls",
     .arg = WEFT_ARG_LIST,
     .meta = "COLLS",
     .help = "collectives, comma-separated (default: each one\nsome algorithm fits)",
     .words = tune_coll_words},
    {.id = 'b',
     .shortname = 'b',
     .name = "minbytes",
     .arg = WEFT_ARG_SIZE,
     .meta = "MIN",
     .help = "the smallest size (default 8)",
     .lo = 1,
     .hi = ~0ull},
    {.id = 'e',
     .shortname = 'e',
     .name = "maxbytes",
     .arg = WEFT_ARG_SIZE,
     .meta = "MAX",
     .help = "the largest size (default 256M)",
     .lo = 1,
     .hi = ~0ull},
    {.id = 'f',
     .shortname = 'f',
     .name = "stepfactor",
     .arg = WEFT_ARG_REAL,
     .meta = "FACTOR",
     .help = "sizes in bytes as nccl-tests counts them, from MIN\nto MAX, times FACTOR (default 2; "
             "K, M, G "
             "are\npowers of 1024)",
     .rlo = 1.01,
     .rhi = 1024},
    {.id = TUNE_OPT_MODES,
     .name = "modes",
     .arg = WEFT_ARG_LIST,
     .meta = "LIST",
     .help = "out (out-of-place), in (in-place); default both.\nRooted collectives are measured "
             "out-of-place\nonly (their ranks cannot know the root's mode)",
     .words = mode_words},
    {.id = TUNE_OPT_LAUNCH,
     .name = "launch",
     .arg = WEFT_ARG_LIST,
     .meta = "LIST",
     .help = "eager, graph (CUDA graph capture); default both",
     .words = launch_words},
    {.id = TUNE_OPT_BUFFERS,
     .name = "buffers",
     .arg = WEFT_ARG_LIST,
     .meta = "LIST",
     .help =
         "unregistered, registered (ncclCommWindowRegister);\ndefault both. Rooted collectives: "
         "unregistered\nonly, for the same reason",
     .words = buffer_words},
    {.id = 'D',
     .shortname = 'D',
     .name = "define",
     .arg = WEFT_ARG_STR,
     .meta = "NAME=VALUE",
     .help = "compile every .weft source that declares NAME with\nit, e.g. -D SERVE=1 -D ANYN=1 "
             "lets the "
             "library's\nfiles that NCCL serves by default compete"},
    {.id = 'n',
     .shortname = 'n',
     .name = "iters",
     .arg = WEFT_ARG_INT,
     .meta = "ITERS",
     .help = "calls per implementation and size, at least\n(default 200)",
     .lo = 10,
     .hi = 1000000},
    {.id = TUNE_OPT_CALLS,
     .name = "calls",
     .arg = WEFT_ARG_INT,
     .meta = "K",
     .help = "calls per timed sample, as nccl-tests -n (default\n20)",
     .lo = 1,
     .hi = 10000},
    {.id = 'w',
     .shortname = 'w',
     .name = "warmup",
     .arg = WEFT_ARG_INT,
     .meta = "WARMUP",
     .help = "warm-up calls per implementation and size\n(default 20)",
     .lo = 0,
     .hi = 100000},
    {.id = TUNE_OPT_PRECISION,
     .name = "precision",
     .arg = WEFT_ARG_REAL,
     .meta = "P",
     .help = "a ratio known to +-P needs no more rounds (default\n0.01)",
     .rlo = 0.0001,
     .rhi = 0.5},
    {.id = TUNE_OPT_MAX_ROUNDS,
     .name = "max-rounds",
     .arg = WEFT_ARG_INT,
     .meta = "X",
     .help = "at most X times the first rounds (default 4)",
     .lo = 1,
     .hi = 100},
    {.id = TUNE_OPT_MARGIN,
     .name = "margin",
     .arg = WEFT_ARG_REAL,
     .meta = "M",
     .help = "a candidate must also beat NCCL by M, a fraction\n(default 0)",
     .rlo = 0,
     .rhi = 0.5},
    {.id = TUNE_OPT_NO_CHECK,
     .name = "no-check",
     .arg = WEFT_ARG_NONE,
     .help = "do not compare each candidate's result with\nNCCL's first"},
    {.id = TUNE_OPT_VERIFY_MAX,
     .name = "verify-max",
     .arg = WEFT_ARG_REAL,
     .meta = "R",
     .help = "the verification keeps a choice unless weft's time\nthrough the shim is above R x "
             "NCCL's beyond the\nnoise (default 1.02)",
     .rlo = 0.5,
     .rhi = 2},
    {.id = TUNE_OPT_NO_VERIFY,
     .name = "no-verify",
     .arg = WEFT_ARG_NONE,
     .help = "write the table as decided, without timing it\nthrough the shim"},
    {.id = TUNE_OPT_MERGE,
     .name = "merge",
     .arg = WEFT_ARG_NONE,
     .help = "keep the sections of an existing TABLE this run\ndoes not measure"},
    {.id = TUNE_OPT_PLOT,
     .name = "plot",
     .arg = WEFT_ARG_NONE,
     .help = "also draw the table: time and bus bandwidth\nagainst size (TABLE.svg)"},
    {.id = TUNE_OPT_PLOT_ONLY,
     .name = "plot-only",
     .arg = WEFT_ARG_FILE,
     .meta = "TABLE",
     .help = "draw TABLE (to -o PICTURE.svg, default TABLE.svg),\nmeasure nothing (no GPU needed)"},
    {.id = 'q',
     .shortname = 'q',
     .name = "quiet",
     .arg = WEFT_ARG_NONE,
     .help = "no progress output"},
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
                "                     [--no-check] [--verify-max R] [--no-verify] [--merge] [--plot] "
                "[-q]\n"
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
        "selection (the table loaded as libweft_nccl.so loads it); one slower than R x NCCL\n"
        "beyond the noise goes back to NCCL. docs/tune.md.",
    .opts = tune_opts_table,
    .exit_status = "0 ok, 1 measuring failed, 2 usage error.",
};
