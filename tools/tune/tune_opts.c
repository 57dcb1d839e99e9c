/* tune_opts.c — `weft tune`'s command line, shared by the weft CLI (help, --plot-only) and the
 * weft-tune program that measures. */
#include "tune.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

const char tune_usage[] =
    "usage: mpirun -np N weft tune -d PATHS -o TABLE [-C COLLS] [-b MIN -e MAX -f FACTOR]\n"
    "                     [--modes out,in] [--launch eager,graph]\n"
    "                     [--buffers unregistered,registered] [-D NAME=VALUE]... [-n ITERS]\n"
    "                     [--calls K] [-w WARMUP] [--precision P] [--max-rounds X] [--margin M]\n"
    "                     [--no-check] [--verify-max R] [--no-verify] [--merge] [--plot] [-q]\n"
    "       weft tune --plot-only TABLE [-o PICTURE.svg]\n"
    "\n"
    "Measures, on this machine, which algorithm of PATHS serves each collective call fastest,\n"
    "and writes the answer as a tuning table that libweft_nccl.so follows (WEFT_TUNE_FILE=TABLE,\n"
    "or TABLE saved as weft-tune.txt in the algorithm folder). Launch it like nccl-tests: one\n"
    "process per GPU, on one node or several (mpirun -H with several hosts, or one host\n"
    "split into nodes with NCCL_HOSTID): the table's sections are for the node shape NCCL\n"
    "reports, and answer only calls of that shape. For each collective, size, buffer mode,\n"
    "launch kind (eager or CUDA graph) and buffer kind (plain or registered as NCCL symmetric\n"
    "windows), every candidate that fits the communicator and NCCL itself run interleaved on\n"
    "the same buffers, each sample timed as nccl-tests times (K calls between a barrier and\n"
    "the stream's end, on the host clock; NCCL on communicators weft is not attached to):\n"
    "warm-up, then rounds until at least ITERS calls each, repeated until the spread of each\n"
    "candidate's time ratio to NCCL is known. A candidate serves a size only when it beats\n"
    "NCCL by more than that noise (and M); every rank decides from the same numbers. Before\n"
    "the table is written, each size it gives to weft is timed against NCCL again through the\n"
    "shim's selection (the table loaded as libweft_nccl.so loads it); one slower than R x NCCL\n"
    "beyond the noise goes back to NCCL. docs/tune.md.\n"
    "\n"
    "  -d PATHS          folders and files of algorithms, as WEFT_ALGO_DIR (default: its value)\n"
    "  -o TABLE          the table to write (rank 0 writes it)\n"
    "  -C COLLS          collectives, comma-separated (default: each one some algorithm fits)\n"
    "  -b, -e, -f        sizes in bytes as nccl-tests counts them, from MIN to MAX, times\n"
    "                    FACTOR (default 8, 256M, 2; K, M, G are powers of 1024)\n"
    "  --modes LIST      out (out-of-place), in (in-place); default both. Rooted collectives\n"
    "                    are measured out-of-place only (their ranks cannot know the root's mode)\n"
    "  --launch LIST     eager, graph (CUDA graph capture); default both\n"
    "  --buffers LIST    unregistered, registered (ncclCommWindowRegister); default both.\n"
    "                    Rooted collectives: unregistered only, for the same reason\n"
    "  -D NAME=VALUE     compile every .weft source that declares NAME with it, e.g. -D SERVE=1\n"
    "                    -D ANYN=1 lets the library's files that NCCL serves by default compete\n"
    "  -n ITERS          calls per implementation and size, at least (default 200)\n"
    "  --calls K         calls per timed sample, as nccl-tests -n (default 20)\n"
    "  -w WARMUP         warm-up calls per implementation and size (default 20)\n"
    "  --precision P     a ratio known to +-P needs no more rounds (default 0.01)\n"
    "  --max-rounds X    at most X times the first rounds (default 4)\n"
    "  --margin M        a candidate must also beat NCCL by M, a fraction (default 0)\n"
    "  --no-check        do not compare each candidate's result with NCCL's first\n"
    "  --verify-max R    the verification keeps a choice unless weft's time through the shim\n"
    "                    is above R x NCCL's beyond the noise (default 1.02)\n"
    "  --no-verify       write the table as decided, without timing it through the shim\n"
    "  --merge           keep the sections of an existing TABLE this run does not measure\n"
    "  --plot            also draw the table: time and bus bandwidth against size (TABLE.svg)\n"
    "  -q                no progress output\n"
    "Exit codes: 0 ok, 1 measuring failed, 2 usage error.\n";

void tune_opts_default(tune_opts *o) {
    memset(o, 0, sizeof *o);
    o->minb = 8;
    o->maxb = 256ull << 20;
    o->factor = 2;
    o->modes = 3;
    o->launches = 3;
    o->buffers = 3;
    o->iters = 200;
    o->calls = 20;
    o->warmup = 20;
    o->precision = 0.01;
    o->max_factor = 4;
    o->margin = 0;
    o->check = 1;
    o->verify = 1;
    o->verify_max = 1.02; /* the promise: preloaded, weft is never more than 2% slower */
}

static int parse_size(const char *s, uint64_t *out) {
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    uint64_t mult = 1;
    if (*end == 'K' || *end == 'k')
        mult = 1ull << 10, end++;
    else if (*end == 'M' || *end == 'm')
        mult = 1ull << 20, end++;
    else if (*end == 'G' || *end == 'g')
        mult = 1ull << 30, end++;
    if (end == s || *end || errno || *s == '-' || v > UINT64_MAX / mult) return -1;
    *out = v * mult;
    return 0;
}

static int parse_pos_int(const char *s, int lo, int hi, int *out) {
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (end == s || *end || errno || v < lo || v > hi) return -1;
    *out = (int)v;
    return 0;
}

static int parse_frac(const char *s, double lo, double hi, double *out) {
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (end == s || *end || errno || !(v >= lo && v <= hi)) return -1;
    *out = v;
    return 0;
}

/* A comma-separated list of words, each one bit (its index in words); -1 on an unknown word. */
static int parse_list(const char *s, const char *const *words, int n, int *bits) {
    char buf[256];
    if (strlen(s) >= sizeof buf) return -1;
    strcpy(buf, s);
    *bits = 0;
    char *save = NULL;
    for (char *w = strtok_r(buf, ",", &save); w; w = strtok_r(NULL, ",", &save)) {
        int found = -1;
        for (int i = 0; i < n; i++)
            if (strcmp(w, words[i]) == 0) found = i;
        if (found < 0) return -1;
        *bits |= 1 << found;
    }
    return *bits ? 0 : -1;
}

int tune_opts_parse(int argc, char **argv, tune_opts *o, char *err, size_t errlen) {
    static const char *const modes[] = {"out", "in"};
    static const char *const launches[] = {"eager", "graph"};
    static const char *const buffers[] = {"unregistered", "registered"};
    tune_opts_default(o);
#define BAD(...)                                                                                   \
    do {                                                                                           \
        snprintf(err, errlen, __VA_ARGS__);                                                        \
        return 2;                                                                                  \
    } while (0)
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            fputs(tune_usage, stdout);
            return 1;
        }
        if (!strcmp(a, "--no-check")) {
            o->check = 0;
            continue;
        }
        if (!strcmp(a, "--no-verify")) {
            o->verify = 0;
            continue;
        }
        if (!strcmp(a, "--merge")) {
            o->merge = 1;
            continue;
        }
        if (!strcmp(a, "--plot")) {
            o->plot = 1;
            continue;
        }
        if (!strcmp(a, "-q")) {
            o->quiet = 1;
            continue;
        }
        if (a[0] != '-') BAD("unexpected argument '%s'", a);
        if (v == NULL) BAD("%s needs a value", a);
        i++;
        if (!strcmp(a, "-d")) {
            o->paths = v;
        } else if (!strcmp(a, "-o")) {
            o->out = v;
        } else if (!strcmp(a, "--plot-only")) {
            o->plot_only = v;
        } else if (!strcmp(a, "-C")) {
            char buf[256];
            if (strlen(v) >= sizeof buf) BAD("-C %s: too long", v);
            strcpy(buf, v);
            char *save = NULL;
            for (char *w = strtok_r(buf, ",", &save); w; w = strtok_r(NULL, ",", &save)) {
                int c = weft_coll_from_name(w);
                if (c < 0 || !weft_coll_runnable((weft_coll)c))
                    BAD("-C: '%s' is not a collective weft serves", w);
                o->colls |= 1u << c;
            }
            if (o->colls == 0) BAD("-C: which collectives?");
        } else if (!strcmp(a, "-b") || !strcmp(a, "-e")) {
            uint64_t x;
            if (parse_size(v, &x) != 0 || x == 0) BAD("%s %s: not a size in bytes", a, v);
            *(a[1] == 'b' ? &o->minb : &o->maxb) = x;
        } else if (!strcmp(a, "-f")) {
            if (parse_frac(v, 1.01, 1024, &o->factor) != 0)
                BAD("-f %s: the factor between sizes must be more than 1", v);
        } else if (!strcmp(a, "--modes")) {
            if (parse_list(v, modes, 2, &o->modes) != 0)
                BAD("--modes %s: a comma-separated list of out and in", v);
        } else if (!strcmp(a, "--launch")) {
            if (parse_list(v, launches, 2, &o->launches) != 0)
                BAD("--launch %s: a comma-separated list of eager and graph", v);
        } else if (!strcmp(a, "--buffers")) {
            if (parse_list(v, buffers, 2, &o->buffers) != 0)
                BAD("--buffers %s: a comma-separated list of unregistered and registered", v);
        } else if (!strcmp(a, "-D")) {
            const char *eq = strchr(v, '=');
            if (eq == NULL || eq == v || eq[1] == '\0' || strchr(v, ',') || strchr(v, ' '))
                BAD("-D %s: expected NAME=VALUE", v);
            if (o->ndefines == TUNE_MAX_DEFINES) BAD("at most %d -D", TUNE_MAX_DEFINES);
            o->defines[o->ndefines++] = v;
        } else if (!strcmp(a, "-n")) {
            if (parse_pos_int(v, 10, 1000000, &o->iters) != 0)
                BAD("-n %s: calls per implementation and size, 10 to 1000000", v);
        } else if (!strcmp(a, "--calls")) {
            if (parse_pos_int(v, 1, 10000, &o->calls) != 0)
                BAD("--calls %s: calls per timed sample, 1 to 10000", v);
        } else if (!strcmp(a, "-w")) {
            if (parse_pos_int(v, 0, 100000, &o->warmup) != 0)
                BAD("-w %s: warm-up calls, 0 to 100000", v);
        } else if (!strcmp(a, "--precision")) {
            if (parse_frac(v, 0.0001, 0.5, &o->precision) != 0)
                BAD("--precision %s: a fraction between 0.0001 and 0.5", v);
        } else if (!strcmp(a, "--max-rounds")) {
            if (parse_pos_int(v, 1, 100, &o->max_factor) != 0)
                BAD("--max-rounds %s: a factor from 1 to 100", v);
        } else if (!strcmp(a, "--margin")) {
            if (parse_frac(v, 0, 0.5, &o->margin) != 0)
                BAD("--margin %s: a fraction between 0 and 0.5", v);
        } else if (!strcmp(a, "--verify-max")) {
            if (parse_frac(v, 0.5, 2, &o->verify_max) != 0)
                BAD("--verify-max %s: a ratio of weft's time to NCCL's between 0.5 and 2", v);
        } else {
            BAD("unknown option '%s'", a);
        }
    }
    if (o->plot_only) return 0;
    if (o->paths == NULL || *o->paths == '\0') {
        o->paths = weft_env_get(WEFT_ENV_ALGO_DIR);
        if (*o->paths == '\0') BAD("which algorithms? (-d PATHS, or WEFT_ALGO_DIR)");
    }
    if (o->out == NULL) BAD("where to write the table? (-o TABLE)");
    if (o->minb > o->maxb) BAD("-b is larger than -e");
#undef BAD
    return 0;
}

char *tune_plot_path(const char *table) {
    size_t n = strlen(table);
    if (n > 4 && strcmp(table + n - 4, ".txt") == 0)
        return weft_asprintf("%.*s.svg", (int)(n - 4), table);
    return weft_asprintf("%s.svg", table);
}
