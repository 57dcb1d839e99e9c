/* registry.c — the algorithm registry: loading and checking algorithm files, and the per-call
 * selection every rank computes identically. CPU-only C; no CUDA or NCCL calls. */
#include "registry_internal.h"
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
    /* per algorithm, in a registry for several nodes: its proven cut into phases (else NULL) */
    weft_phased **phased;
    size_t n, cap, capn, capp;
    int gpus_per_node; /* 0: made without a node structure (weft_registry_load, _for_ranks) */
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
    for (size_t i = 0; i < r->n; i++) {
        weft_algo_free(r->algos[i]);
        weft_phased_free(r->phased[i]);
    }
    free(r->algos);
    free(r->param_n);
    free(r->phased);
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

/* The cut of a for the registry's nodes (ranks n*G .. n*G+G-1 on node n, as NCCL's LSA teams),
 * proven; an algorithm whose cut fails or has too many phases does not join the registry. */
static weft_result cut_for_nodes(const weft_registry *r, const weft_algo *a, weft_phased **out,
                                 weft_diag *d) {
    weft_result res = WEFT_OK;
    const char *f = a->file ? a->file : a->name;
    int32_t *node = malloc((size_t)a->ngpus * sizeof *node);
    WEFT_CHECK_ALLOC(node);
    for (int32_t q = 0; q < a->ngpus; q++)
        node[q] = q / r->gpus_per_node;
    WEFT_CHECK(weft_phase_cut(a, node, out, d));
    if ((*out)->nphases > WEFT_REGISTRY_MAX_PHASES) {
        weft_diag_add(d, WEFT_SEV_INFO, f, a->line, 0,
                      "'%s' runs in %d GPU phases on nodes of %d GPUs (more than %d): not used "
                      "across these nodes",
                      a->name, (*out)->nphases, r->gpus_per_node, WEFT_REGISTRY_MAX_PHASES);
        WEFT_FAIL(WEFT_ERR_UNSUPPORTED);
    }
    weft_verify_opts opts;
    weft_verify_opts_init(&opts);
    res = weft_phase_verify(a, *out, &opts, d, NULL);
fail:
    if (res != WEFT_OK) {
        weft_phased_free(*out);
        *out = NULL;
    }
    free(node);
    return res;
}

/* How much checking an algorithm still needs before it joins a registry. */
enum { CHECK_ALL, CHECK_VALIDATED, CHECK_NONE };

/* Appends an algorithm after the checks it still needs: structural validation unless the IR
 * reader or the compiler ran it, weft's selection checks, and the verifier's proof (its
 * collective, no deadlock with the FIFO depth the runtime provides, no race, in bounds) for every
 * buffer mode it declares; CHECK_NONE for copies of algorithms of a registry. Every algorithm in
 * a registry has passed all of them. Takes ownership of a, also on failure. */
static weft_result append(weft_registry *r, weft_algo *a, int checks, int param_n, weft_diag *d) {
    weft_result res = WEFT_OK;
    weft_phased *p = NULL;
    if (r == NULL || a == NULL) WEFT_FAIL(WEFT_ERR_USAGE);
    if (checks == CHECK_ALL) WEFT_CHECK(weft_ir_validate(a, d));
    if (checks != CHECK_NONE) {
        WEFT_CHECK(check_selectable(a, d));
        weft_verify_opts opts;
        weft_verify_opts_init(&opts);
        WEFT_CHECK(weft_ir_verify(a, &opts, d, NULL));
    }
    if (r->gpus_per_node > 0 && r->gpus_per_node < a->ngpus) WEFT_CHECK(cut_for_nodes(r, a, &p, d));
    if (weft_grow((void **)&r->algos, &r->cap, r->n, sizeof *r->algos) != 0 ||
        weft_grow((void **)&r->param_n, &r->capn, r->n, sizeof *r->param_n) != 0 ||
        weft_grow((void **)&r->phased, &r->capp, r->n, sizeof *r->phased) != 0)
        WEFT_FAIL(WEFT_ERR_NOMEM);
    r->param_n[r->n] = (uint8_t)param_n;
    r->phased[r->n] = p;
    r->algos[r->n++] = a;
    return WEFT_OK;
fail:
    weft_phased_free(p);
    weft_algo_free(a);
    return res;
}

weft_result weft_registry_add(weft_registry *r, weft_algo *a, weft_diag *d) {
    return append(r, a, CHECK_ALL, 0, d);
}

/* ---- loading ----------------------------------------------------------------------------- */

static int has_suffix(const char *s, const char *suffix) {
    size_t n = strlen(s), m = strlen(suffix);
    return n > m && strcmp(s + n - m, suffix) == 0;
}

/* The library's parameter names: N the rank count, ROOT the root of rooted collectives, G the
 * GPUs per node of files written for several nodes. */
enum { PARAM_N = 1, PARAM_ROOT = 2, PARAM_G = 4 };

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
            if (strcmp(k->name, "G") == 0) found |= PARAM_G;
        }
    }
    weft_lang_program_free(prog);
    return found;
}

/* Loads one file; its problems go to d followed by a note that it was skipped. Only allocation
 * failure is returned as an error: a bad file never stops the others from loading. */
static weft_result load_file(weft_registry *r, const char *path, weft_diag *d) {
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
        res = append(r, a, CHECK_VALIDATED, param_n, d);
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

/* Every .xml and .weft file directly inside dir (not its subdirectories), sorted by name in byte
 * order so that every process loads the same algorithms in the same order. */
static weft_result load_dir(weft_registry *r, const char *dir, weft_diag *d) {
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
        struct stat st;
        if (stat(names[i], &st) != 0 || !S_ISREG(st.st_mode)) continue; /* dangling link, dir */
        WEFT_CHECK(load_file(r, names[i], d));
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
    char *save = NULL;
    for (char *p = strtok_r(list, ":", &save); p; p = strtok_r(NULL, ":", &save)) {
        struct stat st;
        if (stat(p, &st) != 0) {
            weft_diag_add(d, WEFT_SEV_ERROR, p, 0, 0, "cannot open: %s", strerror(errno));
            continue;
        }
        if (S_ISDIR(st.st_mode))
            WEFT_CHECK(load_dir(r, p, d));
        else
            WEFT_CHECK(load_file(r, p, d));
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

static void copy_diag(weft_diag *to, const weft_diag *from) {
    for (size_t i = 0; i < weft_diag_size(from); i++) {
        const weft_diag_entry *e = weft_diag_get(from, i);
        weft_diag_add_src(to, e->sev, e->file, e->line, e->col, e->source, e->caret_len, "%s",
                          e->msg);
    }
}

/* Compiles one instance of a source for the given defines; appends it when it has nranks ranks.
 * A `require` that rules the instance out, or a cut with too many phases, is one INFO entry;
 * other failures are reported like a bad file. Only allocation failure is an error. */
static weft_result instantiate(weft_registry *r, const char *file, int params, int nranks,
                               const char *const *defines, size_t ndefines, weft_diag *d) {
    weft_result res = WEFT_OK;
    weft_algo *c = NULL;
    weft_diag *cd = weft_diag_new();
    weft_cc_options opts = {defines, ndefines, NULL, 0};
    char what[96] = "";
    for (size_t i = 0; i < ndefines; i++)
        snprintf(what + strlen(what), sizeof what - strlen(what), "%s%s", i ? " " : "", defines[i]);
    WEFT_CHECK_ALLOC(cd);
    weft_result cr = weft_cc_compile_file(file, &opts, &c, cd);
    if (cr == WEFT_ERR_NOMEM) WEFT_FAIL(cr);
    if (cr == WEFT_OK && c->file == NULL && (c->file = weft_strdup(file)) == NULL)
        WEFT_FAIL(WEFT_ERR_NOMEM);
    if (cr == WEFT_OK && c->ngpus != nranks) goto fail; /* its rank count is not N after all */
    if (cr == WEFT_OK) {
        cr = append(r, c, CHECK_VALIDATED, params, cd);
        c = NULL;
        if (cr == WEFT_ERR_NOMEM) WEFT_FAIL(cr);
    }
    if (cr != WEFT_OK && only_requirements(cd)) {
        const weft_diag_entry *e = weft_diag_get(cd, 0);
        weft_diag_add(d, WEFT_SEV_INFO, file, e->line, e->col, "no instance for %s: %s", what,
                      e->msg);
    } else {
        copy_diag(d, cd);
        if (cr != WEFT_OK && cr != WEFT_ERR_UNSUPPORTED)
            weft_diag_add(d, WEFT_SEV_NOTE, file, 0, 0, "instance for %s skipped", what);
    }
fail:
    weft_algo_free(c);
    weft_diag_free(cd);
    return res;
}

/* Appends a copy of an algorithm of a base registry (checked there); in a registry for several
 * nodes its cut may still rule it out, which is reported like a skipped instance. */
static weft_result add_copy(weft_registry *r, const weft_algo *a, int params, weft_diag *d) {
    weft_algo *c = weft_algo_clone(a);
    weft_diag *cd = weft_diag_new();
    if (c == NULL || cd == NULL) {
        weft_algo_free(c);
        weft_diag_free(cd);
        return WEFT_ERR_NOMEM;
    }
    weft_result res = append(r, c, CHECK_NONE, params, cd);
    copy_diag(d, cd);
    weft_diag_free(cd);
    if (res == WEFT_ERR_NOMEM) return res;
    if (res != WEFT_OK && res != WEFT_ERR_UNSUPPORTED)
        weft_diag_add(d, WEFT_SEV_NOTE, a->file ? a->file : a->name, 0, 0,
                      "'%s' skipped on nodes of %d GPUs", a->name, r->gpus_per_node);
    return WEFT_OK;
}

/* gpn: GPUs per node (> 0), or 0 for the registry of weft_registry_for_ranks. */
static weft_result for_shape(const weft_registry *base, int nranks, int gpn, weft_registry **out,
                             weft_diag *d) {
    weft_result res = WEFT_OK;
    weft_registry *r = NULL;
    char def_n[32], def_g[32], def_root[32];
    if (base == NULL || out == NULL || nranks < 1 || gpn < 0 || (gpn > 0 && nranks % gpn))
        return WEFT_ERR_USAGE;
    *out = NULL;
    snprintf(def_n, sizeof def_n, "N=%d", nranks);
    snprintf(def_g, sizeof def_g, "G=%d", gpn);
    WEFT_CHECK(weft_registry_new(&r));
    r->gpus_per_node = gpn;
    const int nodes = gpn > 0 && gpn < nranks;
    for (size_t i = 0; i < base->n; i++) {
        const weft_algo *a = base->algos[i];
        int params = base->param_n[i];
        int source = a->file && has_suffix(a->file, ".weft");
        int use_g = gpn > 0 && (params & PARAM_G) && source;
        if (nodes && source && !use_g) {
            /* the library's convention: a file for several nodes says so with G */
            if ((params & PARAM_N) || a->ngpus == nranks)
                weft_diag_add(d, WEFT_SEV_INFO, a->file, a->line, 0,
                              "'%s' is written for one node (no parameter G): NCCL serves the "
                              "calls it would fit on %d ranks in nodes of %d",
                              a->name, nranks, gpn);
            continue;
        }
        const char *defines[3];
        size_t nd = 0;
        if ((params & PARAM_N) && source) defines[nd++] = def_n;
        if (use_g) defines[nd++] = def_g;
        int per_root = weft_coll_rooted(a->coll) && (params & PARAM_ROOT) && (params & PARAM_N) &&
                       nranks <= WEFT_REGISTRY_MAX_ROOTED_RANKS && source;
        if (per_root) {
            /* one instance per root, in root order; the loaded one where it fits */
            defines[nd++] = def_root;
            for (int root = 0; root < nranks; root++) {
                if (a->ngpus == nranks && a->root == root && !use_g) {
                    WEFT_CHECK(add_copy(r, a, params, d));
                    continue;
                }
                snprintf(def_root, sizeof def_root, "ROOT=%d", root);
                WEFT_CHECK(instantiate(r, a->file, params, nranks, defines, nd, d));
            }
        } else if (a->ngpus == nranks && !use_g) {
            WEFT_CHECK(add_copy(r, a, params, d));
        } else if (nd > 0) {
            WEFT_CHECK(instantiate(r, a->file, params, nranks, defines, nd, d));
        }
    }
    *out = r;
    r = NULL;
fail:
    weft_registry_free(r);
    return res;
}

weft_result weft_registry_for_ranks(const weft_registry *base, int nranks, weft_registry **out,
                                    weft_diag *d) {
    return for_shape(base, nranks, 0, out, d);
}

weft_result weft_registry_for_nodes(const weft_registry *base, int nranks, int gpus_per_node,
                                    weft_registry **out, weft_diag *d) {
    if (gpus_per_node < 1) return WEFT_ERR_USAGE;
    return for_shape(base, nranks, gpus_per_node, out, d);
}

int weft_registry_gpus_per_node(const weft_registry *r) {
    return r ? r->gpus_per_node : 0;
}

const weft_phased *weft_registry_phases(const weft_registry *r, size_t i) {
    return r && i < r->n ? r->phased[i] : NULL;
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
