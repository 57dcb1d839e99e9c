/* tune_opts.c — `weft tune`'s command line, shared by the weft CLI (help, --plot-only) and the
 * weft-tune program that measures. */
#include "tune.h"
#include "tune_spec.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

void tune_opts_default(tune_opts *o) {
    *o = (tune_opts){.minb = 8,
                     .maxb = 256ull << 20,
                     .factor = 2,
                     .modes = 3,
                     .launches = 3,
                     .buffers = 3,
                     .iters = 200,
                     .calls = 20,
                     .verify_calls_small = 200, /* compare_nccl.sh's -n below 1 MB */
                     .warmup = 20,
                     .precision = 0.01,
                     .max_factor = 4,
                     .check = 1,
                     .verify = 1,
                     /* the promise: preloaded, weft is never more than 2% slower */
                     .verify_max = 1.02};
}

int tune_opts_parse(int argc, char **argv, tune_opts *o, FILE *err) {
    tune_opts_default(o);
    weft_getopt g;
    weft_getopt_init(&g, &weft_spec_tune, argc, argv);
    g.err = err;
    g.out = err ? stdout : NULL;
    for (int c; (c = weft_getopt_next(&g)) != WEFT_OPT_END;) {
        switch (c) {
        case WEFT_OPT_EXIT: return g.exit_code == 0 ? 1 : 2;
        case TUNE_OPT_NO_CHECK: o->check = 0; break;
        case TUNE_OPT_NO_VERIFY: o->verify = 0; break;
        case TUNE_OPT_VERIFY_MAX: o->verify_max = g.real; break;
        case TUNE_OPT_MERGE: o->merge = 1; break;
        case TUNE_OPT_PLOT: o->plot = 1; break;
        case 'q': o->quiet = 1; break;
        case 'd': o->paths = g.arg; break;
        case 'o': o->out = g.arg; break;
        case TUNE_OPT_PLOT_ONLY: o->plot_only = g.arg; break;
        case 'C':
            for (int k = 0; tune_coll_words[k]; k++)
                if (g.num & (1ll << k)) o->colls |= 1u << weft_coll_from_name(tune_coll_words[k]);
            break;
        case 'b': o->minb = g.unum; break;
        case 'e': o->maxb = g.unum; break;
        case 'f': o->factor = g.real; break;
        case TUNE_OPT_MODES: o->modes = (int)g.num; break;
        case TUNE_OPT_LAUNCH: o->launches = (int)g.num; break;
        case TUNE_OPT_BUFFERS: o->buffers = (int)g.num; break;
        case 'D': {
            const char *v = g.arg, *eq = strchr(v, '=');
            if (eq == NULL || eq == v || eq[1] == '\0' || strchr(v, ',') || strchr(v, ' '))
                return weft_opt_error(&g, "expected NAME=VALUE, not '%s'", v);
            if (o->ndefines == TUNE_MAX_DEFINES)
                return weft_opt_error(&g, "at most %d of them", TUNE_MAX_DEFINES);
            o->defines[o->ndefines++] = v;
            break;
        }
        case 'n': o->iters = (int)g.num; break;
        case TUNE_OPT_CALLS: o->calls = (int)g.num; break;
        case TUNE_OPT_VERIFY_CALLS_SMALL: o->verify_calls_small = (int)g.num; break;
        case 'w': o->warmup = (int)g.num; break;
        case TUNE_OPT_PRECISION: o->precision = g.real; break;
        case TUNE_OPT_MAX_ROUNDS: o->max_factor = (int)g.num; break;
        case TUNE_OPT_MARGIN: o->margin = g.real; break;
        }
    }
    if (g.noperands) return weft_getopt_usage(&g, "unexpected argument '%s'", g.operands[0]);
    if (o->plot_only) return 0;
    if (o->paths == NULL || *o->paths == '\0') {
        o->paths = weft_env_get(WEFT_ENV_ALGO_DIR);
        if (*o->paths == '\0')
            return weft_getopt_usage(&g, "which algorithms? (-d PATHS, or WEFT_ALGO_DIR)");
    }
    if (o->out == NULL) return weft_getopt_usage(&g, "where to write the table? (-o TABLE)");
    if (o->minb > o->maxb) return weft_getopt_usage(&g, "-b is larger than -e");
    return 0;
}

char *tune_plot_path(const char *table) {
    size_t n = strlen(table);
    if (n > 4 && strcmp(table + n - 4, ".txt") == 0)
        return weft_asprintf("%.*s.svg", (int)(n - 4), table);
    return weft_asprintf("%s.svg", table);
}
