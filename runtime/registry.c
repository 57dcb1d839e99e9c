/* registry.c — the algorithm registry: loading and checking algorithm files, and the per-call
 * selection every rank computes identically. CPU-only C; no CUDA or NCCL calls. */
#include "registry_internal.h"
#include "runtime_internal.h"
#include "weft_compiler.h"

#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

struct weft_registry {
    weft_algo **algos;
    /* per algorithm: the PARAM_ bits of the .weft source it was compiled from, so that
     * weft_registry_for_ranks can instantiate it for other rank counts and roots */
    uint8_t *param_n;
    size_t n, cap, capn;
};

weft_result weft_registry_new(weft_registry **out) {
    weft_result res = WEFT_OK;
    if (out == NULL) return WEFT_ERR_USAGE;
    *out = calloc(1, sizeof **out);
    WEFT_CHECK_ALLOC(*out);
fail:
    return res;
}

void weft_registry_free(weft_registry *r) {
    if (r == NULL) return;
    for (size_t i = 0; i < r->n; i++)
        weft_algo_free(r->algos[i]);
    free(r->algos);
    free(r->param_n);
    free(r);
}

size_t weft_registry_size(const weft_registry *r) {
    return r ? r->n : 0;
}

const weft_algo *weft_registry_get(const weft_registry *r, size_t i) {
    return r && i < r->n ? r->algos[i] : NULL;
}

/* ---- checking ---------------------------------------------------------------------------- */

/* What selection and the executors rely on beyond the IR's own validation: the schedule can run
 * (a collective NCCL has), the count policy can cut it (k = K / multiplier >= 1, exactly), and a
 * rooted schedule names a rank. Warnings for schedules that can never be selected. */
static weft_result check_selectable(const weft_algo *a, weft_diag *d) {
    const char *f = a->file ? a->file : a->name;
    int line = a->line;
    weft_result res = WEFT_OK;
    if (!weft_coll_runnable(a->coll)) {
        weft_diag_add(d, WEFT_SEV_ERROR, f, line, 0,
                      "collective '%s' has no NCCL call that weft can serve",
                      weft_coll_name(a->coll));
        res = WEFT_ERR_INPUT;
    }
    if (a->ngpus < 1) {
        weft_diag_add(d, WEFT_SEV_ERROR, f, line, 0, "ngpus must be at least 1, not %d",
                      (int)a->ngpus);
        return WEFT_ERR_INPUT;
    }
    int32_t m = weft_algo_size_mult(a);
    if (a->nchunksperloop < 1 || a->nchunksperloop % m != 0) {
        weft_diag_add(d, WEFT_SEV_ERROR, f, line, 0,
                      "nchunksperloop %d is not a positive multiple of %d (the size multiplier "
                      "of %s on %d ranks)",
                      (int)a->nchunksperloop, (int)m, weft_coll_name(a->coll), (int)a->ngpus);
        res = WEFT_ERR_INPUT;
    }
    if (weft_coll_rooted(a->coll) && (a->root < 0 || a->root >= a->ngpus)) {
        weft_diag_add(d, WEFT_SEV_ERROR, f, line, 0, "root %d is not a rank of %d", (int)a->root,
                      (int)a->ngpus);
        res = WEFT_ERR_INPUT;
    }
    if (a->min_bytes < 0 || a->max_bytes < 0) {
        weft_diag_add(d, WEFT_SEV_ERROR, f, line, 0, "minBytes and maxBytes must not be negative");
        res = WEFT_ERR_INPUT;
    }
    if (res != WEFT_OK) return res;
    if (!a->inplace && !a->outofplace)
        weft_diag_add(d, WEFT_SEV_WARNING, f, line, 0,
                      "inplace and outofplace are both 0: '%s' is never selected", a->name);
    else if (weft_coll_rooted(a->coll) && !(a->inplace && a->outofplace))
        weft_diag_add(d, WEFT_SEV_WARNING, f, line, 0,
                      "rooted '%s' is selected only when it declares both inplace and outofplace "
                      "(non-root ranks cannot know the root's buffer mode)",
                      a->name);
    if (a->max_bytes != 0 && a->min_bytes > a->max_bytes)
        weft_diag_add(d, WEFT_SEV_WARNING, f, line, 0,
                      "minBytes %lld > maxBytes %lld: '%s' is never selected",
                      (long long)a->min_bytes, (long long)a->max_bytes, a->name);
    return WEFT_OK;
}

/* How much checking an algorithm still needs before it joins a registry. */
enum { CHECK_ALL, CHECK_VALIDATED, CHECK_NONE };

/* The connection buffers the runtime will give each protocol: its defaults with WEFT_FIFO
 * applied (runtime/plan.c), read once per load. */
static void runtime_fifo(weft_rt_cfg *cfg) {
    weft_rt_cfg_default(cfg);
}

/* The verifier's proof with the FIFO depth the runtime will use for this algorithm's protocol:
 * a schedule that needs more messages buffered than WEFT_FIFO gives could stall on the GPU. */
static weft_result prove(const weft_algo *a, const weft_rt_cfg *cfg, weft_diag *d) {
    weft_verify_opts opts;
    weft_verify_summary sum;
    weft_verify_opts_init(&opts);
    int32_t proto = weft_plan_proto(a);
    opts.fifo_slots = cfg->nslots[proto];
    weft_result res = weft_ir_verify(a, &opts, d, &sum);
    if (sum.errors[WEFT_VERIFY_FIFO_DEADLOCK] > 0 && sum.min_fifo > opts.fifo_slots)
        weft_diag_add(d, WEFT_SEV_NOTE, a->file ? a->file : a->name, 0, 0,
                      "the runtime buffers %d message%s per %s connection%s; this schedule needs "
                      "%d",
                      opts.fifo_slots, opts.fifo_slots == 1 ? "" : "s",
                      proto == WEFT_RT_PROTO_SIMPLE ? "Simple" : "LL",
                      weft_env_is_set(WEFT_ENV_FIFO) ? " (WEFT_FIFO)" : "", sum.min_fifo);
    weft_verify_summary_free(&sum);
    return res;
}

/* Appends an algorithm after the checks it still needs: structural validation unless the IR
 * reader or the compiler ran it, weft's selection checks, and the verifier's proof (its
 * collective, no deadlock with the FIFO depth the runtime provides, no race, in bounds) for every
 * buffer mode it declares; CHECK_NONE for copies of algorithms of a registry. Every algorithm in
 * a registry has passed all of them. Takes ownership of a, also on failure. */
static weft_result append(weft_registry *r, weft_algo *a, int checks, int param_n,
                          const weft_rt_cfg *cfg, weft_diag *d) {
    weft_result res = WEFT_OK;
    if (r == NULL || a == NULL) WEFT_FAIL(WEFT_ERR_USAGE);
    if (checks == CHECK_ALL) WEFT_CHECK(weft_ir_validate(a, d));
    if (checks != CHECK_NONE) {
        WEFT_CHECK(check_selectable(a, d));
        WEFT_CHECK(prove(a, cfg, d));
    }
    if (weft_grow((void **)&r->algos, &r->cap, r->n, sizeof *r->algos) != 0 ||
        weft_grow((void **)&r->param_n, &r->capn, r->n, sizeof *r->param_n) != 0)
        WEFT_FAIL(WEFT_ERR_NOMEM);
    r->param_n[r->n] = (uint8_t)param_n;
    r->algos[r->n++] = a;
    return WEFT_OK;
fail:
    weft_algo_free(a);
    return res;
}

weft_result weft_registry_add(weft_registry *r, weft_algo *a, weft_diag *d) {
    weft_rt_cfg cfg;
    runtime_fifo(&cfg);
    return append(r, a, CHECK_ALL, 0, &cfg, d);
}

/* ---- loading ----------------------------------------------------------------------------- */

static int has_suffix(const char *s, const char *suffix) {
    size_t n = strlen(s), m = strlen(suffix);
    return n > m && strcmp(s + n - m, suffix) == 0;
}

/* The library's parameter names: N the rank count, ROOT the root of rooted collectives. */
enum { PARAM_N = 1, PARAM_ROOT = 2 };

/* Which of those parameters a program declares (0 when it cannot be parsed). */
static int declared_params(const char *path) {
    weft_lang_program *prog = NULL;
    int found = 0;
    if (weft_lang_parse_file(path, NULL, 0, &prog, NULL) == WEFT_OK && prog && prog->root) {
        for (int32_t i = 0; i < prog->root->nkids; i++) {
            const weft_lang_node *k = prog->root->kids[i];
            if (k->kind != WEFT_LANG_PARAM || k->name == NULL) continue;
            if (strcmp(k->name, "N") == 0) found |= PARAM_N;
            if (strcmp(k->name, "ROOT") == 0) found |= PARAM_ROOT;
        }
    }
    weft_lang_program_free(prog);
    return found;
}

/* Loads one file; its problems go to d followed by a note that it was skipped. Only allocation
 * failure is returned as an error: a bad file never stops the others from loading. (The readers
 * take regular files only, so that a FIFO, a device or a link to one is refused unread.) */
static weft_result load_file(weft_registry *r, const char *path, const weft_rt_cfg *cfg,
                             weft_diag *d) {
    weft_result res = WEFT_OK;
    weft_algo *a = NULL;
    int param_n = 0;
    if (has_suffix(path, ".xml")) {
        res = weft_ir_read_file(path, &a, d); /* validates */
    } else if (has_suffix(path, ".weft")) {
        /* compiled (and validated) with the parameters' defaults; a source with a parameter N
         * is instantiated for other rank counts by weft_registry_for_ranks */
        res = weft_cc_compile_file(path, NULL, &a, d);
        param_n = res == WEFT_OK ? declared_params(path) : 0;
    } else {
        weft_diag_add(d, WEFT_SEV_ERROR, path, 0, 0,
                      "not an algorithm file (expected a .xml or .weft name)");
        res = WEFT_ERR_INPUT;
    }
    if (res == WEFT_OK && a->file == NULL && (a->file = weft_strdup(path)) == NULL)
        res = WEFT_ERR_NOMEM;
    if (res == WEFT_OK) {
        res = append(r, a, CHECK_VALIDATED, param_n, cfg, d);
        a = NULL;
    }
    weft_algo_free(a);
    if (res == WEFT_ERR_NOMEM) return res;
    if (res != WEFT_OK) weft_diag_add(d, WEFT_SEV_NOTE, path, 0, 0, "algorithm skipped");
    return WEFT_OK;
}

static int cmp_names(const void *x, const void *y) {
    return strcmp(*(char *const *)x, *(char *const *)y);
}

/* Why an entry named like an algorithm file is not one: INFO, so that a link gone stale or a
 * FIFO left in the folder is visible in WEFT_DEBUG=INFO logs rather than skipped silently. */
static int not_a_file(const char *path, weft_diag *d) {
    struct stat st, lst;
    if (stat(path, &st) == 0) {
        if (S_ISREG(st.st_mode)) return 0;
        weft_diag_add(d, WEFT_SEV_INFO, path, 0, 0, "skipped: not a regular file (it is %s)",
                      weft_file_kind((unsigned)st.st_mode));
        return 1;
    }
    int err = errno;
    if (err == ENOENT && lstat(path, &lst) == 0 && S_ISLNK(lst.st_mode))
        weft_diag_add(d, WEFT_SEV_INFO, path, 0, 0,
                      "skipped: a symbolic link to nothing (what it names does not exist)");
    else
        weft_diag_add(d, WEFT_SEV_INFO, path, 0, 0, "skipped: %s", strerror(err));
    return 1;
}

/* Every .xml and .weft file directly inside dir (not its subdirectories), sorted by name in byte
 * order so that every process loads the same algorithms in the same order. */
static weft_result load_dir(weft_registry *r, const char *dir, const weft_rt_cfg *cfg,
                            weft_diag *d) {
    weft_result res = WEFT_OK;
    char **names = NULL;
    size_t n = 0, cap = 0;
    DIR *dp = opendir(dir);
    if (dp == NULL) {
        weft_diag_add(d, WEFT_SEV_ERROR, dir, 0, 0, "cannot open directory: %s", strerror(errno));
        return WEFT_OK;
    }
    struct dirent *e;
    while ((e = readdir(dp)) != NULL) {
        if (e->d_name[0] == '.') continue;
        if (!has_suffix(e->d_name, ".xml") && !has_suffix(e->d_name, ".weft")) continue;
        if (weft_grow((void **)&names, &cap, n, sizeof *names) != 0) WEFT_FAIL(WEFT_ERR_NOMEM);
        names[n] = weft_asprintf("%s%s%s", dir, has_suffix(dir, "/") ? "" : "/", e->d_name);
        WEFT_CHECK_ALLOC(names[n]);
        n++;
    }
    if (n > 1) qsort(names, n, sizeof *names, cmp_names);
    for (size_t i = 0; i < n; i++) {
        if (not_a_file(names[i], d)) continue;
        WEFT_CHECK(load_file(r, names[i], cfg, d));
    }
fail:
    for (size_t i = 0; i < n; i++)
        free(names[i]);
    free(names);
    closedir(dp);
    return res;
}

weft_result weft_registry_load(weft_registry *r, const char *paths, weft_diag *d) {
    weft_result res = WEFT_OK;
    char *list = NULL;
    if (r == NULL || paths == NULL) WEFT_FAIL(WEFT_ERR_USAGE);
    list = weft_strdup(paths);
    WEFT_CHECK_ALLOC(list);
    weft_rt_cfg cfg;
    runtime_fifo(&cfg);
    char *save = NULL;
    for (char *p = strtok_r(list, ":", &save); p; p = strtok_r(NULL, ":", &save)) {
        struct stat st;
        if (stat(p, &st) != 0) {
            weft_diag_add(d, WEFT_SEV_ERROR, p, 0, 0, "cannot open: %s", strerror(errno));
            continue;
        }
        if (S_ISDIR(st.st_mode))
            WEFT_CHECK(load_dir(r, p, &cfg, d));
        else
            WEFT_CHECK(load_file(r, p, &cfg, d));
    }
fail:
    free(list);
    return res;
}

/* ---- instances for a rank count ---------------------------------------------------------- */

/* Whether every error of d is a failed `require` (the program rules this rank count out). */
static int only_requirements(const weft_diag *d) {
    size_t n = 0;
    for (size_t i = 0; i < weft_diag_size(d); i++) {
        const weft_diag_entry *e = weft_diag_get(d, i);
        if (e->sev != WEFT_SEV_ERROR) continue;
        if (strncmp(e->msg, "requirement failed", 18) != 0) return 0;
        n++;
    }
    return n > 0 && n == weft_diag_count(d, WEFT_SEV_ERROR);
}

/* Compiles one instance of a source for the given defines; appends it when it has nranks ranks.
 * A `require` that rules the instance out is one INFO entry; other failures are reported like a
 * bad file. Only allocation failure is an error. */
static weft_result instantiate(weft_registry *r, const char *file, int params, int nranks,
                               const char *const *defines, size_t ndefines, const weft_rt_cfg *cfg,
                               weft_diag *d) {
    weft_result res = WEFT_OK;
    weft_algo *c = NULL;
    weft_diag *cd = weft_diag_new();
    weft_cc_options opts = {defines, ndefines, NULL, 0};
    char what[64];
    snprintf(what, sizeof what, "%s%s%s", defines[0], ndefines > 1 ? " " : "",
             ndefines > 1 ? defines[1] : "");
    WEFT_CHECK_ALLOC(cd);
    weft_result cr = weft_cc_compile_file(file, &opts, &c, cd);
    if (cr == WEFT_ERR_NOMEM) WEFT_FAIL(cr);
    if (cr == WEFT_OK && c->file == NULL && (c->file = weft_strdup(file)) == NULL)
        WEFT_FAIL(WEFT_ERR_NOMEM);
    if (cr == WEFT_OK && c->ngpus != nranks) goto fail; /* its rank count is not N after all */
    if (cr == WEFT_OK) {
        cr = append(r, c, CHECK_VALIDATED, params, cfg, cd);
        c = NULL;
        if (cr == WEFT_ERR_NOMEM) WEFT_FAIL(cr);
    }
    if (cr != WEFT_OK && only_requirements(cd)) {
        const weft_diag_entry *e = weft_diag_get(cd, 0);
        weft_diag_add(d, WEFT_SEV_INFO, file, e->line, e->col, "no instance for %s: %s", what,
                      e->msg);
    } else {
        weft_diag_append(d, cd);
        if (cr != WEFT_OK)
            weft_diag_add(d, WEFT_SEV_NOTE, file, 0, 0, "instance for %s skipped", what);
    }
fail:
    weft_algo_free(c);
    weft_diag_free(cd);
    return res;
}

weft_result weft_registry_for_ranks(const weft_registry *base, int nranks, weft_registry **out,
                                    weft_diag *d) {
    weft_result res = WEFT_OK;
    weft_registry *r = NULL;
    char def_n[32], def_root[32];
    const char *defines[] = {def_n, def_root};
    if (base == NULL || out == NULL || nranks < 1) return WEFT_ERR_USAGE;
    *out = NULL;
    snprintf(def_n, sizeof def_n, "N=%d", nranks);
    WEFT_CHECK(weft_registry_new(&r));
    weft_rt_cfg cfg;
    runtime_fifo(&cfg);
    for (size_t i = 0; i < base->n; i++) {
        const weft_algo *a = base->algos[i];
        int params = base->param_n[i];
        int per_root = weft_coll_rooted(a->coll) && (params & PARAM_ROOT) && (params & PARAM_N) &&
                       nranks <= WEFT_REGISTRY_MAX_ROOTED_RANKS && a->file;
        if (per_root) {
            /* one instance per root, in root order; the loaded one where it fits */
            for (int root = 0; root < nranks; root++) {
                if (a->ngpus == nranks && a->root == root) {
                    weft_algo *c = weft_algo_clone(a);
                    WEFT_CHECK_ALLOC(c);
                    WEFT_CHECK(append(r, c, CHECK_NONE, params, &cfg, d));
                    continue;
                }
                snprintf(def_root, sizeof def_root, "ROOT=%d", root);
                WEFT_CHECK(instantiate(r, a->file, params, nranks, defines, 2, &cfg, d));
            }
        } else if (a->ngpus == nranks) {
            weft_algo *c = weft_algo_clone(a);
            WEFT_CHECK_ALLOC(c);
            WEFT_CHECK(append(r, c, CHECK_NONE, params, &cfg, d));
        } else if ((params & PARAM_N) && a->file) {
            WEFT_CHECK(instantiate(r, a->file, params, nranks, defines, 1, &cfg, d));
        }
    }
    *out = r;
    r = NULL;
fail:
    weft_registry_free(r);
    return res;
}

/* ---- selection --------------------------------------------------------------------------- */

/* The stages a candidate passes, in order; the reason reported for a call nothing serves is the
 * one of the candidate that got furthest, which names the closest miss. */
#define WEFT_SELECT_STAGES(X)                                                                      \
    X(COLL, "no algorithm for this collective")                                                    \
    X(RANKS, "no algorithm for this collective and rank count")                                    \
    X(ROOT, "no algorithm for this root")                                                          \
    X(BYTES, "message size outside the [minBytes, maxBytes] of every fitting algorithm")           \
    X(MODE, "no algorithm for this buffer mode (in-place or out-of-place; rooted collectives "     \
            "need an algorithm declaring both)")

enum {
#define WEFT_X_(id, s) STAGE_##id,
    WEFT_SELECT_STAGES(WEFT_X_)
#undef WEFT_X_
        STAGE_COUNT
};

static const char *const stage_why[] = {
#define WEFT_X_(id, s) s,
    WEFT_SELECT_STAGES(WEFT_X_)
#undef WEFT_X_
};

/* Bytes compared with [minBytes, maxBytes]: count x type size x (ngpus for allgather,
 * reducescatter and alltoall, else 1), exactly what msccl-executor-nccl and RCCL's MSCCL compare,
 * so existing files keep their meaning. 0 on overflow (never in range: min is checked first). */
static uint64_t call_bytes(const weft_call *c, const weft_algo *a) {
    uint64_t mult = 1;
    if (a->coll == WEFT_COLL_ALLGATHER || a->coll == WEFT_COLL_REDUCESCATTER ||
        a->coll == WEFT_COLL_ALLTOALL)
        mult = (uint64_t)a->ngpus;
    uint64_t b = (uint64_t)c->count, s = (uint64_t)weft_dtype_size(c->dtype);
    if (b > UINT64_MAX / s) return 0;
    b *= s;
    if (b > UINT64_MAX / mult) return 0;
    return b * mult;
}

static const char *call_unservable(const weft_call *c) {
    if (!weft_coll_runnable(c->coll)) return "collective not served by weft";
    if (c->count == 0) return "empty call (count 0)";
    if (c->nranks < 1) return "communicator has no ranks";
    if ((unsigned)c->dtype >= WEFT_DTYPE_COUNT || weft_dtype_size(c->dtype) == 0)
        return "data type not served by weft";
    if (weft_coll_reduces(c->coll) && !(c->op == WEFT_OP_SUM || c->op == WEFT_OP_PROD ||
                                        c->op == WEFT_OP_MAX || c->op == WEFT_OP_MIN))
        return "reduction op not served by weft (avg, PreMulSum and user ops go to NCCL)";
    if (weft_coll_rooted(c->coll) && (c->root < 0 || c->root >= c->nranks))
        return "root is not a rank of the communicator";
    return NULL;
}

int weft_registry_select(const weft_registry *r, const weft_call *c, const char **why) {
    const char *reason = NULL;
    if (r == NULL || c == NULL) {
        reason = "no registry";
        goto none;
    }
    if ((reason = call_unservable(c)) != NULL) goto none;
    if (r->n == 0) {
        reason = "no algorithm loaded";
        goto none;
    }
    int furthest = -1;
    for (size_t i = 0; i < r->n; i++) {
        const weft_algo *a = r->algos[i];
        int stage = STAGE_COLL;
        if (a->coll != c->coll) goto rejected;
        stage = STAGE_RANKS;
        if (a->ngpus != c->nranks) goto rejected;
        stage = STAGE_ROOT;
        if (weft_coll_rooted(c->coll) && a->root != c->root) goto rejected;
        stage = STAGE_BYTES;
        uint64_t bytes = call_bytes(c, a);
        if (bytes == 0 || bytes < (uint64_t)a->min_bytes ||
            (a->max_bytes != 0 && bytes > (uint64_t)a->max_bytes))
            goto rejected;
        stage = STAGE_MODE;
        if (weft_coll_rooted(c->coll) ? !(a->inplace && a->outofplace)
                                      : !(c->inplace ? a->inplace : a->outofplace))
            goto rejected;
        return (int)i;
    rejected:
        if (stage > furthest) furthest = stage;
    }
    reason = stage_why[furthest];
none:
    if (why) *why = reason;
    return -1;
}
