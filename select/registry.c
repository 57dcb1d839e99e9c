/* registry.c — the algorithm registry: loading and checking algorithm files, the tuning table
 * (weft tune) that overrides their size ranges, and the per-call selection every rank computes
 * identically. CPU-only C; no CUDA or NCCL calls. */
#include "weft_compiler.h"
#include "weft_rt_cfg.h"
#include "weft_select.h"
#include "weft_tune_table.h"

#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* What the registry knows of an algorithm beyond the IR. */
typedef struct reg_meta {
    /* the PARAM_ bits of the .weft source it was compiled from, so that
     * weft_registry_for_ranks can instantiate it for other rank counts and roots */
    int params;
    /* every parameter the source declares, ",N,ROOT,C," (commas around each), or NULL */
    char *declared;
    /* the -D defines beyond N and ROOT it was compiled with, "SERVE=1,ANYN=1", or "" */
    char *recipe;
    /* built only because a tuning table names it: never selected by its own byte range */
    int table_only;
    /* weft_tune_algo_hash of the algorithm, 0 until a tuning table asked (one clone and write
     * per algorithm, not one per table line that names it) */
    uint64_t tune_hash;
} reg_meta;

/* A source whose default build its own `require`s rule out (not an algorithm of the registry). */
typedef struct reg_src {
    char *path;
    int params;
    char *declared;
} reg_src;

struct weft_registry {
    weft_algo **algos;
    reg_meta *meta;
    size_t n, cap, capm;
    reg_src *srcs;
    size_t nsrcs, capsrcs;
    /* The tuning table, when one is in use, and per table algorithm the indices of the
     * algorithms that are it (one, or one per root), found by file, name, rank count and
     * schedule hash. */
    weft_tune_table *table;
    int **tmap;
    size_t *ntmap;
    /* sections of the table for tnranks ranks in the registry's node shape by [collective][in
     * place][flags], for a registry of one rank count (weft_registry_for_ranks, _for_nodes);
     * tnranks 0: look them up in the table */
    int tnranks;
    const weft_tune_section *sec[WEFT_COLL_COUNT][2][4];
    weft_machine *machine; /* compare tables with this instead of detecting (tests) */
    int table_tried;
    /* per algorithm, in a registry for several nodes: its proven cut into phases (else NULL),
     * and the chunks its network phases send between nodes over all ranks (0 on one node),
     * which selection ranks candidates by when nothing better tells them apart */
    weft_phased **phased;
    int64_t *net_chunks;
    size_t capp, capnet;
    int gpus_per_node; /* 0: made without a node structure (weft_registry_load, _for_ranks) */
};

static void table_unset(weft_registry *r) {
    if (r->tmap)
        for (size_t i = 0; i < r->table->nalgos; i++)
            free(r->tmap[i]);
    free(r->tmap);
    free(r->ntmap);
    r->tmap = NULL;
    r->ntmap = NULL;
    weft_tune_table_free(r->table);
    r->table = NULL;
    r->tnranks = 0;
    memset(r->sec, 0, sizeof r->sec);
}

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
        free(r->meta[i].declared);
        free(r->meta[i].recipe);
        weft_phased_free(r->phased[i]);
    }
    free(r->algos);
    free(r->meta);
    free(r->phased);
    free(r->net_chunks);
    for (size_t i = 0; i < r->nsrcs; i++) {
        free(r->srcs[i].path);
        free(r->srcs[i].declared);
    }
    free(r->srcs);
    table_unset(r);
    if (r->machine) weft_machine_free(r->machine);
    free(r->machine);
    free(r);
}

size_t weft_registry_size(const weft_registry *r) {
    return r ? r->n : 0;
}

const weft_algo *weft_registry_get(const weft_registry *r, size_t i) {
    return r && i < r->n ? r->algos[i] : NULL;
}

/* ---- checking ---------------------------------------------------------------------------- */

/* What selection needs beyond the IR's validation (which every algorithm here passed: counts,
 * root and size range are sound): a collective NCCL has. Warnings for schedules that can never
 * be selected. */
static weft_result check_selectable(const weft_algo *a, weft_diag *d) {
    const char *f = a->file ? a->file : a->name;
    int line = a->line;
    if (!weft_coll_runnable(a->coll)) {
        weft_diag_add(d, WEFT_SEV_ERROR, f, line, 0,
                      "collective '%s' has no NCCL call that weft can serve",
                      weft_coll_name(a->coll));
        return WEFT_ERR_INPUT;
    }
    if (!a->inplace && !a->outofplace)
        weft_diag_add(d, WEFT_SEV_WARNING, f, line, 0,
                      "inplace and outofplace are both 0: '%s' is never selected", a->name);
    else if (weft_coll_rooted(a->coll) && !(a->inplace && a->outofplace))
        weft_diag_add(d, WEFT_SEV_WARNING, f, line, 0,
                      "rooted '%s' is selected only when it declares both inplace and outofplace "
                      "(non-root ranks cannot know the root's buffer mode)",
                      a->name);
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
    int32_t nph = 0;
    res = weft_phase_cut_max(a, node, WEFT_REGISTRY_MAX_PHASES, out, &nph, d);
    if (res == WEFT_ERR_UNSUPPORTED) {
        weft_diag_add(d, WEFT_SEV_INFO, f, a->line, 0,
                      "'%s' runs in %d GPU phases on nodes of %d GPUs (more than %d): not used "
                      "across these nodes",
                      a->name, nph, r->gpus_per_node, WEFT_REGISTRY_MAX_PHASES);
        goto fail;
    }
    WEFT_CHECK(res);
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

/* The chunks a cut sends between nodes in its network phases, over all ranks (a message
 * staged between two phases inside one node does not cross the network). */
static int64_t network_chunks(const weft_phased *p) {
    int64_t n = 0;
    for (int32_t ph = 0; ph + 1 < p->nphases; ph++)
        for (int32_t x = 0; x < p->nxfers[ph]; x++) {
            const weft_phase_xfer *t = &p->xfers[ph][x];
            if (p->node[t->src] != p->node[t->dst]) n += t->cnt;
        }
    return n;
}

/* How much checking an algorithm still needs before it joins a registry. */
enum { CHECK_ALL, CHECK_VALIDATED, CHECK_NONE };

/* The verifier's proof with the FIFO depth the runtime will use for this algorithm's protocol:
 * a schedule that needs more messages buffered than WEFT_FIFO gives could stall on the GPU. */
static weft_result prove(const weft_algo *a, weft_diag *d) {
    weft_verify_opts opts;
    weft_verify_summary sum;
    weft_verify_opts_init(&opts);
    opts.fifo_slots = weft_rt_fifo_slots(a);
    weft_result res = weft_ir_verify(a, &opts, d, &sum);
    if (sum.errors[WEFT_VERIFY_FIFO_DEADLOCK] > 0 && sum.min_fifo > opts.fifo_slots)
        weft_diag_add(d, WEFT_SEV_NOTE, a->file ? a->file : a->name, 0, 0,
                      "the runtime buffers %d message%s per %s connection%s; this schedule needs "
                      "%d",
                      opts.fifo_slots, opts.fifo_slots == 1 ? "" : "s",
                      weft_proto_name(weft_proto_runs_as(a->proto)),
                      weft_env_is_set(WEFT_ENV_FIFO) ? " (WEFT_FIFO)" : "", sum.min_fifo);
    weft_verify_summary_free(&sum);
    return res;
}

/* Appends an algorithm after the checks it still needs: structural validation unless the IR
 * reader or the compiler ran it, weft's selection checks, and the verifier's proof (its
 * collective, no deadlock with the FIFO depth the runtime provides, no race, in bounds) for every
 * buffer mode it declares; CHECK_NONE for copies of algorithms of a registry. Every algorithm in
 * a registry has passed all of them. Takes ownership of a, also on failure. */
static weft_result append(weft_registry *r, weft_algo *a, int checks, const reg_meta *m,
                          weft_diag *d) {
    weft_result res = WEFT_OK;
    reg_meta mine = {0, NULL, NULL, 0, 0};
    weft_phased *p = NULL;
    if (r == NULL || a == NULL) WEFT_FAIL(WEFT_ERR_USAGE);
    if (checks == CHECK_ALL) WEFT_CHECK(weft_ir_validate(a, d));
    if (checks != CHECK_NONE) {
        WEFT_CHECK(check_selectable(a, d));
        WEFT_CHECK(prove(a, d));
    }
    if (m) {
        mine = *m;
        mine.declared = m->declared ? weft_strdup(m->declared) : NULL;
        if (m->declared && mine.declared == NULL) WEFT_FAIL(WEFT_ERR_NOMEM);
    }
    mine.recipe = weft_strdup(m && m->recipe ? m->recipe : "");
    mine.tune_hash = 0;
    WEFT_CHECK_ALLOC(mine.recipe);
    if (r->gpus_per_node > 0 && r->gpus_per_node < a->ngpus) WEFT_CHECK(cut_for_nodes(r, a, &p, d));
    if (weft_grow((void **)&r->algos, &r->cap, r->n, sizeof *r->algos) != 0 ||
        weft_grow((void **)&r->meta, &r->capm, r->n, sizeof *r->meta) != 0 ||
        weft_grow((void **)&r->phased, &r->capp, r->n, sizeof *r->phased) != 0 ||
        weft_grow((void **)&r->net_chunks, &r->capnet, r->n, sizeof *r->net_chunks) != 0)
        WEFT_FAIL(WEFT_ERR_NOMEM);
    r->meta[r->n] = mine;
    r->phased[r->n] = p;
    r->net_chunks[r->n] = p ? network_chunks(p) : 0;
    r->algos[r->n++] = a;
    return WEFT_OK;
fail:
    free(mine.declared);
    free(mine.recipe);
    weft_phased_free(p);
    weft_algo_free(a);
    return res;
}

/* Removes the algorithms from index n on (instances a table could not use). */
static void truncate_to(weft_registry *r, size_t n) {
    while (r->n > n) {
        r->n--;
        weft_algo_free(r->algos[r->n]);
        free(r->meta[r->n].declared);
        free(r->meta[r->n].recipe);
        weft_phased_free(r->phased[r->n]);
        r->phased[r->n] = NULL;
    }
}

weft_result weft_registry_add(weft_registry *r, weft_algo *a, weft_diag *d) {
    return append(r, a, CHECK_ALL, NULL, d);
}

const char *weft_registry_recipe(const weft_registry *r, size_t i) {
    return r && i < r->n ? r->meta[i].recipe : NULL;
}

/* ---- loading ----------------------------------------------------------------------------- */

static int has_suffix(const char *s, const char *suffix) {
    size_t n = strlen(s), m = strlen(suffix);
    return n > m && strcmp(s + n - m, suffix) == 0;
}

/* The library's parameter names: N the rank count, ROOT the root of rooted collectives, G the
 * GPUs per node of files written for several nodes. */
enum { PARAM_N = 1, PARAM_ROOT = 2, PARAM_G = 4 };

/* Which of those parameters a program declares (0 when it cannot be parsed), and in *names
 * (malloc'd, NULL when none) every parameter it declares as ",A,B,". */
static int declared_params(const char *path, char **names) {
    *names = weft_cc_declared_params(path);
    return (weft_cc_declares(*names, "N") ? PARAM_N : 0) |
           (weft_cc_declares(*names, "ROOT") ? PARAM_ROOT : 0) |
           (weft_cc_declares(*names, "G") ? PARAM_G : 0);
}

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

/* Loads one file; its problems go to d followed by a note that it was skipped. Only allocation
 * failure is returned as an error: a bad file never stops the others from loading. (The readers
 * take regular files only, so that a FIFO, a device or a link to one is refused unread.) */
static weft_result load_file(weft_registry *r, const char *path, weft_diag *d) {
    weft_result res = WEFT_OK;
    weft_algo *a = NULL;
    reg_meta m = {0, NULL, NULL, 0, 0};
    int dormant = 0;
    if (has_suffix(path, ".xml")) {
        res = weft_cc_load_file(path, NULL, &a, d); /* validates */
    } else if (weft_cc_is_source(path)) {
        /* compiled (and validated) with the parameters' defaults; a source with a parameter N
         * is instantiated for other rank counts by weft_registry_for_ranks */
        weft_diag *cd = weft_diag_new();
        if (cd == NULL) return WEFT_ERR_NOMEM;
        res = weft_cc_load_file(path, NULL, &a, cd);
        if (res == WEFT_OK) m.params = declared_params(path, &m.declared);
        /* ruled out by its own `require`s: kept as a source that -D defines (weft tune) or a
         * tuning table's recorded defines can still build, and that weft_registry_for_ranks
         * instantiates for the rank counts it allows. Not a fault of the file: one INFO line
         * (every NCCL job would otherwise start with warnings for the SERVE-gated files). */
        dormant = res == WEFT_ERR_INPUT && only_requirements(cd);
        if (dormant) {
            const weft_diag_entry *e = weft_diag_get(cd, 0);
            for (size_t k = 0; e && e->sev != WEFT_SEV_ERROR && k < weft_diag_size(cd); k++)
                e = weft_diag_get(cd, k);
            weft_diag_add(d, WEFT_SEV_INFO, path, e ? e->line : 0, e ? e->col : 0,
                          "not built with its defaults (%s); kept for the rank counts and defines "
                          "it allows",
                          e ? e->msg : "a requirement failed");
        } else {
            weft_diag_append(d, cd);
        }
        if (dormant) {
            reg_src src = {weft_strdup(path), 0, NULL};
            src.params = declared_params(path, &src.declared);
            if (src.path == NULL ||
                weft_grow((void **)&r->srcs, &r->capsrcs, r->nsrcs, sizeof *r->srcs) != 0) {
                free(src.path);
                free(src.declared);
                weft_diag_free(cd);
                return WEFT_ERR_NOMEM;
            }
            r->srcs[r->nsrcs++] = src;
        }
        weft_diag_free(cd);
    } else {
        weft_diag_add(d, WEFT_SEV_ERROR, path, 0, 0,
                      "not an algorithm file (expected a .xml or .weft name)");
        res = WEFT_ERR_INPUT;
    }
    if (res == WEFT_OK && a->file == NULL && (a->file = weft_strdup(path)) == NULL)
        res = WEFT_ERR_NOMEM;
    if (res == WEFT_OK) {
        res = append(r, a, CHECK_VALIDATED, &m, d);
        a = NULL;
    }
    weft_algo_free(a);
    free(m.declared);
    if (res == WEFT_ERR_NOMEM) return res;
    if (res != WEFT_OK && !dormant)
        weft_diag_add(d, WEFT_SEV_NOTE, path, 0, 0, "algorithm skipped");
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
        if (not_a_file(names[i], d)) continue;
        WEFT_CHECK(load_file(r, names[i], d));
    }
fail:
    for (size_t i = 0; i < n; i++)
        free(names[i]);
    free(names);
    closedir(dp);
    return res;
}

/* dir's tuning table file (malloc'd), or NULL when it has none. */
static char *folder_table(const char *dir) {
    char *p = weft_asprintf("%s%s%s", dir, has_suffix(dir, "/") ? "" : "/", WEFT_TUNE_FOLDER_FILE);
    struct stat st;
    if (p && (stat(p, &st) != 0 || !S_ISREG(st.st_mode))) {
        free(p);
        p = NULL;
    }
    return p;
}

/* The same algorithm loaded twice, as a .weft source and as .xml (the file compiled from it, or
 * one beside it): both stay, and the first in load order ranks first for every call both fit,
 * so users must be told which one serves. One warning per later file, from algorithms index
 * from on (those this load added). */
static void warn_twice_loaded(const weft_registry *r, size_t from, weft_diag *d) {
    for (size_t i = from; i < r->n; i++) {
        const weft_algo *a = r->algos[i];
        for (size_t j = 0; a->file && j < i; j++) {
            const weft_algo *b = r->algos[j];
            if (b->file == NULL || a->coll != b->coll || strcmp(a->name, b->name) != 0 ||
                has_suffix(a->file, ".xml") == has_suffix(b->file, ".xml"))
                continue;
            weft_diag_add(d, WEFT_SEV_WARNING, a->file, 0, 0,
                          "algorithm '%s' (%s) is loaded twice, as .weft and as .xml: also from "
                          "%s, which is used (it comes first in load order, so it serves every "
                          "call both fit)",
                          a->name, weft_coll_name(a->coll), b->file);
            break;
        }
    }
}

weft_result weft_registry_load_ex(weft_registry *r, const char *paths, int flags, weft_diag *d) {
    weft_result res = WEFT_OK;
    char *list = NULL, *table = NULL;
    size_t before = r ? r->n : 0;
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
        if (S_ISDIR(st.st_mode)) {
            WEFT_CHECK(load_dir(r, p, d));
            if (table == NULL) table = folder_table(p);
        } else {
            WEFT_CHECK(load_file(r, p, d));
        }
    }
    warn_twice_loaded(r, before, d);
    if (!(flags & WEFT_REGISTRY_NO_TABLE) && !r->table_tried) {
        const char *env = weft_env_get(WEFT_ENV_TUNE_FILE);
        if (*env) {
            if (table)
                weft_diag_add(d, WEFT_SEV_INFO, table, 0, 0,
                              "not used: WEFT_TUNE_FILE names the tuning table (%s)", env);
            WEFT_CHECK(weft_registry_load_table(r, env, d));
        } else if (table) {
            WEFT_CHECK(weft_registry_load_table(r, table, d));
        }
    }
fail:
    free(list);
    free(table);
    return res;
}

weft_result weft_registry_load(weft_registry *r, const char *paths, weft_diag *d) {
    return weft_registry_load_ex(r, paths, 0, d);
}

/* ---- instances for a rank count ---------------------------------------------------------- */

/* Compiles one instance of a source for the given defines; appends it (with meta m) when it has
 * nranks ranks. A `require` that rules the instance out is one INFO entry; other failures are
 * reported like a bad file. d NULL: nothing is reported. Only allocation failure is an error. */
static weft_result instantiate(weft_registry *r, const char *file, const reg_meta *m, int nranks,
                               const char *const *defines, size_t ndefines, weft_diag *d) {
    weft_result res = WEFT_OK;
    weft_algo *c = NULL;
    weft_diag *cd = weft_diag_new();
    weft_cc_options opts = {defines, ndefines, NULL, 0};
    char what[256] = "";
    for (size_t i = 0, len = 0; i < ndefines && len < sizeof what; i++)
        len += (size_t)snprintf(what + len, sizeof what - len, "%s%s", i ? " " : "", defines[i]);
    WEFT_CHECK_ALLOC(cd);
    weft_result cr = weft_cc_load_file(file, &opts, &c, cd);
    if (cr == WEFT_ERR_NOMEM) WEFT_FAIL(cr);
    if (cr == WEFT_OK && c->file == NULL && (c->file = weft_strdup(file)) == NULL)
        WEFT_FAIL(WEFT_ERR_NOMEM);
    if (cr == WEFT_OK && c->ngpus != nranks) goto fail; /* its rank count is not N after all */
    if (cr == WEFT_OK) {
        cr = append(r, c, CHECK_VALIDATED, m, cd);
        c = NULL;
        if (cr == WEFT_ERR_NOMEM) WEFT_FAIL(cr);
    }
    if (cr != WEFT_OK && only_requirements(cd)) {
        const weft_diag_entry *e = weft_diag_get(cd, 0);
        weft_diag_add(d, WEFT_SEV_INFO, file, e->line, e->col, "no instance for %s: %s", what,
                      e->msg);
    } else if (d) {
        weft_diag_append(d, cd);
        if (cr != WEFT_OK && cr != WEFT_ERR_UNSUPPORTED) /* UNSUPPORTED: a cut said why (INFO) */
            weft_diag_add(d, WEFT_SEV_NOTE, file, 0, 0, "instance for %s skipped", what);
    }
fail:
    weft_algo_free(c);
    weft_diag_free(cd);
    return res;
}

#define MAX_DEFINES 32

/* A source to instantiate: a loaded algorithm (its default build) or a dormant source. */
typedef struct src_info {
    const char *file;
    int params;
    const weft_algo *loaded; /* NULL for a source its defaults rule out */
} src_info;

static src_info src_of_algo(const weft_registry *base, size_t i) {
    src_info s = {base->algos[i]->file, base->meta[i].params, base->algos[i]};
    return s;
}

static src_info src_of_dormant(const weft_registry *base, size_t i) {
    src_info s = {base->srcs[i].path, base->srcs[i].params, NULL};
    return s;
}

/* Appends a copy of an algorithm of a base registry (checked there); in a registry for several
 * nodes its cut may still rule it out, which is reported like a skipped instance. */
static weft_result add_copy(weft_registry *r, const weft_algo *a, const reg_meta *m, weft_diag *d) {
    weft_algo *c = weft_algo_clone(a);
    weft_diag *cd = weft_diag_new();
    if (c == NULL || cd == NULL) {
        weft_algo_free(c);
        weft_diag_free(cd);
        return WEFT_ERR_NOMEM;
    }
    weft_result res = append(r, c, CHECK_NONE, m, cd);
    weft_diag_append(d, cd);
    weft_diag_free(cd);
    if (res == WEFT_ERR_NOMEM) return res;
    if (res != WEFT_OK && res != WEFT_ERR_UNSUPPORTED && d)
        weft_diag_add(d, WEFT_SEV_NOTE, a->file ? a->file : a->name, 0, 0,
                      "'%s' skipped on nodes of %d GPUs", a->name, r->gpus_per_node);
    return WEFT_OK;
}

/* The instances of a source for nranks ranks, appended to r: a copy of the loaded algorithm
 * when it already has nranks ranks, else the source compiled with N (and per root with ROOT).
 * extra (a comma-separated list of NAME=VALUE, or "") adds defines; then the source is always
 * compiled. m is the meta the instances get. */
static weft_result instances(weft_registry *r, const src_info *s, int nranks, const char *extra,
                             const reg_meta *m, weft_diag *d) {
    weft_result res = WEFT_OK;
    const weft_algo *a = s->loaded;
    int params = s->params;
    char def_n[32], def_root[32], *copy = weft_strdup(extra);
    const char *defines[MAX_DEFINES + 2] = {def_n};
    size_t nextra = 0;
    WEFT_CHECK_ALLOC(copy);
    snprintf(def_n, sizeof def_n, "N=%d", nranks);
    char *save = NULL;
    for (char *e = strtok_r(copy, ",", &save); e && nextra < MAX_DEFINES;
         e = strtok_r(NULL, ",", &save))
        defines[2 + nextra++] = e;
    int rooted = a ? weft_coll_rooted(a->coll) : (params & PARAM_ROOT) != 0;
    int per_root = rooted && (params & PARAM_ROOT) && (params & PARAM_N) &&
                   nranks <= WEFT_REGISTRY_MAX_ROOTED_RANKS && s->file;
    if (per_root) {
        /* one instance per root, in root order; the loaded one where it fits */
        for (int root = 0; root < nranks; root++) {
            if (a && a->ngpus == nranks && a->root == root && nextra == 0) {
                WEFT_CHECK(add_copy(r, a, m, d));
                continue;
            }
            snprintf(def_root, sizeof def_root, "ROOT=%d", root);
            defines[1] = def_root;
            WEFT_CHECK(instantiate(r, s->file, m, nranks, defines, 2 + nextra, d));
        }
    } else if (a && a->ngpus == nranks && nextra == 0) {
        WEFT_CHECK(add_copy(r, a, m, d));
    } else if ((params & PARAM_N) && s->file) {
        for (size_t k = 0; k < nextra; k++)
            defines[1 + k] = defines[2 + k];
        WEFT_CHECK(instantiate(r, s->file, m, nranks, defines, 1 + nextra, d));
    } else if (s->file && nextra > 0 && (a == NULL || a->ngpus == nranks)) {
        WEFT_CHECK(instantiate(r, s->file, m, nranks, defines + 2, nextra, d));
    }
fail:
    free(copy);
    return res;
}

/* The defines of list (NAME=VALUE...) that the source declares, comma-joined (malloc'd). */
static char *declared_subset(const char *declared, const char *const *list, size_t n) {
    size_t len = 0;
    char *out = calloc(1, 1);
    for (size_t i = 0; out && declared && i < n; i++) {
        const char *eq = strchr(list[i], '=');
        size_t nl = eq ? (size_t)(eq - list[i]) : strlen(list[i]);
        char key[128];
        if (nl == 0 || nl + 3 > sizeof key) continue;
        snprintf(key, sizeof key, ",%.*s,", (int)nl, list[i]);
        if (strstr(declared, key) == NULL) continue;
        char *more = realloc(out, len + strlen(list[i]) + 2);
        if (more == NULL) {
            free(out);
            return NULL;
        }
        out = more;
        len += (size_t)sprintf(out + len, "%s%s", len ? "," : "", list[i]);
    }
    return out;
}

/* ---- the tuning table -------------------------------------------------------------------- */

static const char *base_name(const char *path) {
    const char *s = strrchr(path, '/');
    return s ? s + 1 : path;
}

static int same_key(const weft_algo *a, const weft_tune_algo *ta) {
    return a->file && strcmp(base_name(a->file), ta->file) == 0 && a->name &&
           strcmp(a->name, ta->name) == 0 && a->ngpus == ta->ranks;
}

/* The index of r's algorithm that is table algorithm ta (same file, name and rank count, its
 * root for rooted collectives, same schedule hash) from index `from` on, or -1. */
static int find_measured(weft_registry *r, const weft_tune_algo *ta, size_t from) {
    for (size_t i = from; i < r->n; i++) {
        const weft_algo *a = r->algos[i];
        if (!same_key(a, ta) || (weft_coll_rooted(a->coll) && a->root != ta->root)) continue;
        if (r->meta[i].tune_hash == 0) r->meta[i].tune_hash = weft_tune_algo_hash(a);
        if (r->meta[i].tune_hash == ta->hash) return (int)i;
    }
    return -1;
}

/* A source built with a table's recorded defines during one table_resolve: what it gave (the
 * algorithms' name, root and hash, kept also when they were dropped) or why it gave nothing,
 * so that another table line naming it is answered without compiling and verifying again. */
typedef struct built_inst {
    char *name;
    int32_t root;
    uint64_t hash;
} built_inst;
typedef struct built_src {
    const char *file, *defines;
    built_inst *inst;
    size_t ninst;
    char *why; /* the first error when nothing was built, else NULL */
} built_src;

static void built_free(built_src *b, size_t n) {
    for (size_t i = 0; i < n; i++) {
        for (size_t j = 0; j < b[i].ninst; j++)
            free(b[i].inst[j].name);
        free(b[i].inst);
        free(b[i].why);
    }
    free(b);
}

/* Whether an earlier build of the source gave table algorithm ta (then building it again
 * makes it; else it is stale). */
static int built_has(const built_src *b, const weft_tune_algo *ta) {
    for (size_t j = 0; j < b->ninst; j++)
        if (strcmp(b->inst[j].name, ta->name) == 0 && b->inst[j].hash == ta->hash &&
            (b->inst[j].root < 0 || b->inst[j].root == ta->root))
            return 1;
    return 0;
}

/* Records what r[before..] holds after a build of (file, defines) as entry *out. */
static weft_result built_record(weft_registry *r, size_t before, const char *file,
                                const char *defines, const weft_diag *cd, built_src *out) {
    memset(out, 0, sizeof *out);
    out->file = file;
    out->defines = defines;
    out->inst = calloc(r->n - before + 1, sizeof *out->inst);
    if (out->inst == NULL) return WEFT_ERR_NOMEM;
    for (size_t i = before; i < r->n; i++) {
        const weft_algo *a = r->algos[i];
        if (r->meta[i].tune_hash == 0) r->meta[i].tune_hash = weft_tune_algo_hash(a);
        built_inst *bi = &out->inst[out->ninst];
        bi->name = weft_strdup(a->name ? a->name : "");
        if (bi->name == NULL) return WEFT_ERR_NOMEM;
        bi->root = weft_coll_rooted(a->coll) ? a->root : -1;
        bi->hash = r->meta[i].tune_hash;
        out->ninst++;
    }
    /* the first error; else what instantiate said instead (a `require` ruling it out) */
    for (int pass = 0; pass < 2 && out->ninst == 0; pass++)
        for (size_t i = 0; i < weft_diag_size(cd) && out->why == NULL; i++) {
            const weft_diag_entry *e = weft_diag_get(cd, i);
            if (pass == 0 && e->sev != WEFT_SEV_ERROR) continue;
            out->why = e->line > 0 ? weft_asprintf("%s:%d:%d: %s", e->file ? e->file : file,
                                                   e->line, e->col, e->msg)
                                   : weft_asprintf("%s", e->msg);
            if (out->why == NULL) return WEFT_ERR_NOMEM;
        }
    return WEFT_OK;
}

/* Table algorithm k is served by `found` and, for rooted collectives, by the instances for the
 * other roots built the same way (same recipe). */
static weft_result map_algo(weft_registry *r, size_t k, int found) {
    const weft_tune_algo *ta = &r->table->algos[k];
    const weft_algo *f = r->algos[found];
    size_t n = 0;
    int *idx = malloc(r->n * sizeof *idx);
    if (idx == NULL) return WEFT_ERR_NOMEM;
    idx[n++] = found;
    for (size_t i = 0; weft_coll_rooted(f->coll) && i < r->n; i++)
        if ((int)i != found && same_key(r->algos[i], ta) && r->algos[i]->root != f->root &&
            strcmp(r->meta[i].recipe, r->meta[found].recipe) == 0 &&
            r->meta[i].table_only == r->meta[found].table_only)
            idx[n++] = (int)i;
    r->tmap[k] = idx;
    r->ntmap[k] = n;
    return WEFT_OK;
}

/* The GPUs per node of the sections that apply to r's calls of nranks ranks: r's node shape,
 * or one node for registries made without one. */
static int table_shape(const weft_registry *r, int nranks) {
    return weft_tune_shape(nranks, r->gpus_per_node);
}

/* Marks in used[k] each table algorithm a range of a section for nranks ranks in nodes of gpn
 * (nranks 0: of any section) chooses: one pass over the ranges, not one per algorithm. */
static void table_uses(const weft_tune_table *t, int nranks, int gpn, uint8_t *used) {
    for (size_t i = 0; i < t->nsecs; i++) {
        const weft_tune_section *s = &t->secs[i];
        if (nranks && (s->ranks != nranks || s->gpn != gpn)) continue;
        for (size_t j = 0; j < s->nranges; j++)
            if (s->ranges[j].choice >= 0) used[s->ranges[j].choice] = 1;
    }
}

/* Finds (and, with base, builds from its source with the recorded defines) the algorithms r's
 * table names for nranks ranks in r's node shape (0: for any rank count, only among those
 * loaded, silently); sections of another node shape are not r's. What cannot be found is a
 * note in d: those sizes keep the files' own ranges. */
static weft_result table_resolve(weft_registry *r, const weft_registry *base, int nranks,
                                 weft_diag *d) {
    weft_result res = WEFT_OK;
    const weft_tune_table *t = r->table;
    size_t na = t->nalgos ? t->nalgos : 1;
    built_src *built = NULL;
    size_t nbuilt = 0, capbuilt = 0;
    weft_map seen = {0}; /* (source, defines) -> index in built + 1 */
    uint8_t *used = calloc(na, 1);
    r->tmap = calloc(na, sizeof *r->tmap);
    r->ntmap = calloc(na, sizeof *r->ntmap);
    WEFT_CHECK_ALLOC(used);
    WEFT_CHECK_ALLOC(r->tmap);
    WEFT_CHECK_ALLOC(r->ntmap);
    table_uses(t, nranks, nranks ? table_shape(r, nranks) : 0, used);
    for (size_t k = 0; k < t->nalgos; k++) {
        const weft_tune_algo *ta = &t->algos[k];
        if ((nranks && ta->ranks != nranks) || !used[k]) continue;
        int found = find_measured(r, ta, 0);
        if (found < 0 && nranks && base) {
            /* not among the default instances: build it as weft tune did */
            src_info src = {NULL, 0, NULL};
            const char *declared = NULL;
            for (size_t i = 0; i < base->n && src.file == NULL; i++)
                if (base->algos[i]->file && base->meta[i].declared &&
                    strcmp(base_name(base->algos[i]->file), ta->file) == 0 &&
                    strcmp(base->algos[i]->name, ta->name) == 0)
                    src = src_of_algo(base, i), declared = base->meta[i].declared;
            for (size_t i = 0; i < base->nsrcs && src.file == NULL; i++)
                if (strcmp(base_name(base->srcs[i].path), ta->file) == 0)
                    src = src_of_dormant(base, i), declared = base->srcs[i].declared;
            if (src.file == NULL) {
                weft_diag_add(d, WEFT_SEV_NOTE, t->path, ta->line, 0,
                              "tuning table: '%s' (%s for %d ranks) is not among the loaded "
                              "algorithms; the sizes the table gives it use the files' own ranges",
                              ta->id, ta->file, ta->ranks);
                continue;
            }
            /* built before with these defines (one compile and proof per source and defines,
             * however many table lines name it) */
            uint64_t key = weft_hash_bytes(src.file, strlen(src.file)) ^
                           weft_hash64(weft_hash_bytes(ta->defines, strlen(ta->defines)));
            uint64_t *slot = weft_map_get(&seen, key);
            const built_src *b = NULL;
            if (slot && strcmp(built[*slot - 1].file, src.file) == 0 &&
                strcmp(built[*slot - 1].defines, ta->defines) == 0)
                b = &built[*slot - 1];
            if (b == NULL || built_has(b, ta)) {
                size_t before = r->n;
                reg_meta m = {src.params, (char *)declared, ta->defines, 1, 0};
                weft_diag *cd = weft_diag_new();
                WEFT_CHECK_ALLOC(cd);
                res = instances(r, &src, nranks, ta->defines, &m, cd);
                if (res == WEFT_OK && b == NULL &&
                    weft_grow((void **)&built, &capbuilt, nbuilt, sizeof *built) != 0)
                    res = WEFT_ERR_NOMEM;
                if (res == WEFT_OK && b == NULL) {
                    res = built_record(r, before, src.file, ta->defines, cd, &built[nbuilt]);
                    nbuilt++; /* also when half recorded: built_free frees it */
                    b = &built[nbuilt - 1];
                    slot = weft_map_put(&seen, key, NULL);
                    if (slot == NULL)
                        res = WEFT_ERR_NOMEM;
                    else if (*slot == 0) /* else another source has this key: rebuilt each time */
                        *slot = nbuilt;
                }
                weft_diag_free(cd);
                WEFT_CHECK(res);
                found = find_measured(r, ta, before);
                if (found < 0) truncate_to(r, before);
            }
            if (found < 0) {
                if (b->why)
                    weft_diag_add(d, WEFT_SEV_NOTE, t->path, ta->line, 0,
                                  "tuning table: '%s': %s%s%s does not build for %d ranks (%s); "
                                  "the sizes the table gives it use the files' own ranges",
                                  ta->id, ta->file, *ta->defines ? " with " : "", ta->defines,
                                  ta->ranks, b->why);
                else
                    weft_diag_add(d, WEFT_SEV_NOTE, t->path, ta->line, 0,
                                  "tuning table: '%s' is not what was measured (%s%s%s for %d "
                                  "ranks changed since weft tune ran: run it again); the sizes "
                                  "the table gives it use the files' own ranges",
                                  ta->id, ta->file, *ta->defines ? " with " : "", ta->defines,
                                  ta->ranks);
                continue;
            }
        }
        if (found >= 0)
            WEFT_CHECK(map_algo(r, k, found));
        else if (nranks)
            weft_diag_add(d, WEFT_SEV_NOTE, t->path, ta->line, 0,
                          "tuning table: '%s' (%s for %d ranks) is not among the loaded "
                          "algorithms; the sizes the table gives it use the files' own ranges",
                          ta->id, ta->file, ta->ranks);
    }
    if (nranks) {
        r->tnranks = nranks;
        for (size_t i = 0; i < t->nsecs; i++) {
            const weft_tune_section *s = &t->secs[i];
            if (s->ranks == nranks && s->gpn == table_shape(r, nranks))
                r->sec[s->coll][s->inplace ? 1 : 0][s->flags & 3] = s;
        }
    }
fail:
    built_free(built, nbuilt);
    weft_map_free(&seen);
    free(used);
    return res;
}

size_t weft_registry_shape_sections(const weft_registry *r, int nranks) {
    size_t n = 0;
    for (size_t i = 0; r && r->table && i < r->table->nsecs; i++)
        n += r->table->secs[i].ranks == nranks && r->table->secs[i].gpn == table_shape(r, nranks);
    return n;
}

weft_result weft_registry_set_table(weft_registry *r, weft_tune_table *t, weft_diag *d) {
    if (r == NULL) {
        weft_tune_table_free(t);
        return WEFT_ERR_USAGE;
    }
    table_unset(r);
    r->table_tried = 1;
    if (t == NULL) return WEFT_OK;
    r->table = t;
    weft_result res = table_resolve(r, NULL, 0, d);
    if (res != WEFT_OK) table_unset(r);
    return res;
}

const weft_tune_table *weft_registry_table(const weft_registry *r) {
    return r ? r->table : NULL;
}

weft_result weft_registry_set_machine(weft_registry *r, const weft_machine *m) {
    if (r == NULL) return WEFT_ERR_USAGE;
    if (r->machine) weft_machine_free(r->machine);
    free(r->machine);
    r->machine = NULL;
    if (m == NULL) return WEFT_OK;
    r->machine = malloc(sizeof *r->machine);
    if (r->machine == NULL) return WEFT_ERR_NOMEM;
    weft_result res = weft_machine_copy(r->machine, m);
    if (res != WEFT_OK) {
        free(r->machine);
        r->machine = NULL;
    }
    return res;
}

weft_result weft_registry_load_table(weft_registry *r, const char *path, weft_diag *d) {
    weft_result res = WEFT_OK;
    weft_tune_table *t = NULL;
    weft_machine here;
    char why[1024];
    memset(&here, 0, sizeof here);
    if (r == NULL || path == NULL) return WEFT_ERR_USAGE;
    r->table_tried = 1;
    weft_result rr = weft_tune_read_file(path, &t, d);
    if (rr == WEFT_ERR_NOMEM) WEFT_FAIL(rr);
    if (rr != WEFT_OK) {
        weft_diag_add(d, WEFT_SEV_NOTE, path, 0, 0,
                      "tuning table ignored: it cannot be read; the algorithm files' own size "
                      "ranges apply");
        goto fail;
    }
    if (r->machine)
        WEFT_CHECK(weft_machine_copy(&here, r->machine));
    else
        weft_machine_detect(&here);
    if (weft_machine_differs(&t->machine, &here, why, sizeof why)) {
        weft_diag_add(d, WEFT_SEV_NOTE, path, t->machine_line, 0,
                      "tuning table ignored: it was measured on another machine or setup (%s); "
                      "the algorithm files' own size ranges apply (run weft tune here)",
                      why);
        goto fail;
    }
    weft_diag_add(d, WEFT_SEV_INFO, path, 0, 0,
                  "tuning table: %zu sections override the algorithm files' size ranges", t->nsecs);
    res = weft_registry_set_table(r, t, d);
    t = NULL;
fail:
    weft_machine_free(&here);
    weft_tune_table_free(t);
    return res;
}

/* The defines a source gets on nodes of gpn GPUs: G=gpn when it declares G (the library's
 * convention for files written for several nodes) and the given defines do not set it, then the
 * given ones it declares. NULL on allocation failure. */
static char *shape_defines(const char *declared, int params, int gpn, const char *const *defines,
                           size_t ndefines) {
    char *given = declared_subset(declared, defines, ndefines);
    if (given == NULL || gpn <= 0 || !(params & PARAM_G)) return given;
    if (strncmp(given, "G=", 2) == 0 || strstr(given, ",G=") != NULL) return given;
    char *out = weft_asprintf("G=%d%s%s", gpn, *given ? "," : "", given);
    free(given);
    return out;
}

/* gpn: GPUs per node (> 0), or 0 for the registries of weft_registry_for_ranks(_defines). */
static weft_result for_shape(const weft_registry *base, int nranks, int gpn,
                             const char *const *defines, size_t ndefines, int with_table,
                             weft_registry **out, weft_diag *d) {
    weft_result res = WEFT_OK;
    weft_registry *r = NULL;
    char *extra = NULL;
    if (base == NULL || out == NULL || nranks < 1 || gpn < 0 || (gpn > 0 && nranks % gpn))
        return WEFT_ERR_USAGE;
    *out = NULL;
    WEFT_CHECK(weft_registry_new(&r));
    r->gpus_per_node = gpn;
    const int nodes = gpn > 0 && gpn < nranks;
    for (size_t i = 0; i < base->n; i++) {
        const weft_algo *a = base->algos[i];
        int params = base->meta[i].params;
        int source = a->file && has_suffix(a->file, ".weft");
        if (nodes && source && !(params & PARAM_G)) {
            /* the library's convention: a file for several nodes says so with G */
            if ((params & PARAM_N) || a->ngpus == nranks)
                weft_diag_add(d, WEFT_SEV_INFO, a->file, a->line, 0,
                              "'%s' is written for one node (no parameter G): NCCL serves the "
                              "calls it would fit on %d ranks in nodes of %d",
                              a->name, nranks, gpn);
            continue;
        }
        extra = source ? shape_defines(base->meta[i].declared, params, gpn, defines, ndefines)
                       : weft_strdup("");
        WEFT_CHECK_ALLOC(extra);
        reg_meta m = {params, base->meta[i].declared, extra, 0, 0};
        src_info s = src_of_algo(base, i);
        WEFT_CHECK(instances(r, &s, nranks, extra, &m, d));
        free(extra);
        extra = NULL;
    }
    /* sources whose defaults rule them out, built when the defines given concern them, and
     * across nodes the files written for several nodes, with G (their defaults are one node
     * shape: the shape of this registry may be one their requires allow) */
    for (size_t i = 0; i < base->nsrcs && (ndefines > 0 || nodes); i++) {
        if (nodes && !(base->srcs[i].params & PARAM_G)) continue;
        extra = shape_defines(base->srcs[i].declared, base->srcs[i].params, gpn, defines, ndefines);
        WEFT_CHECK_ALLOC(extra);
        if (*extra) {
            reg_meta m = {base->srcs[i].params, base->srcs[i].declared, extra, 0, 0};
            src_info s = src_of_dormant(base, i);
            WEFT_CHECK(instances(r, &s, nranks, extra, &m, d));
        }
        free(extra);
        extra = NULL;
    }
    if (with_table && base->table) {
        r->table = weft_tune_table_clone(base->table);
        WEFT_CHECK_ALLOC(r->table);
        r->table_tried = 1;
        WEFT_CHECK(table_resolve(r, base, nranks, d));
    }
    *out = r;
    r = NULL;
fail:
    free(extra);
    weft_registry_free(r);
    return res;
}

weft_result weft_registry_for_ranks(const weft_registry *base, int nranks, weft_registry **out,
                                    weft_diag *d) {
    return for_shape(base, nranks, 0, NULL, 0, 1, out, d);
}

weft_result weft_registry_for_ranks_defines(const weft_registry *base, int nranks,
                                            const char *const *defines, size_t ndefines,
                                            weft_registry **out, weft_diag *d) {
    return for_shape(base, nranks, 0, defines, ndefines, 0, out, d);
}

weft_result weft_registry_for_nodes(const weft_registry *base, int nranks, int gpus_per_node,
                                    weft_registry **out, weft_diag *d) {
    if (gpus_per_node < 1) return WEFT_ERR_USAGE;
    return for_shape(base, nranks, gpus_per_node, NULL, 0, 1, out, d);
}

weft_result weft_registry_for_nodes_defines(const weft_registry *base, int nranks,
                                            int gpus_per_node, const char *const *defines,
                                            size_t ndefines, weft_registry **out, weft_diag *d) {
    if (gpus_per_node < 1) return WEFT_ERR_USAGE;
    return for_shape(base, nranks, gpus_per_node, defines, ndefines, 0, out, d);
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
            "need an algorithm declaring both)")                                                   \
    X(LAUNCH, "no algorithm for this launch mode (CUDA graph or not, registered buffers or not: "  \
              "each file serves the modes where it was measured faster than NCCL)")                \
    X(GRAPHBYTES, "message size above the CUDA-graph bound (graphMaxBytes) of every fitting "      \
                  "algorithm (its captured calls that large go to NCCL)")

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

/* Bytes compared with [minBytes, maxBytes] (weft_coll_footprint). 0 on overflow (never in
 * range: min is checked first). */
static uint64_t call_bytes(const weft_call *c, const weft_algo *a) {
    return weft_coll_footprint(a->coll, (uint64_t)c->count, (uint64_t)weft_dtype_size(c->dtype),
                               a->ngpus);
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

/* The call's launch mode; a rooted collective's counts as unregistered (NCCL ignores the buffers
 * of its non-root ranks, so that they need not be registered: see weft_tune_find). */
static weft_launch call_launch(const weft_call *c) {
    return weft_launch_of((c->flags & WEFT_CALL_GRAPH) != 0,
                          !weft_coll_rooted(c->coll) && (c->flags & WEFT_CALL_REGISTERED) != 0);
}

/* How far algorithm a gets with call c: the stage it fails, or STAGE_COUNT when it serves it.
 * with_bytes 0 leaves the size to the caller (a table, or a call that names its algorithm). */
static int fit(const weft_algo *a, const weft_call *c, int with_bytes) {
    if (a->coll != c->coll) return STAGE_COLL;
    if (a->ngpus != c->nranks) return STAGE_RANKS;
    if (weft_coll_rooted(c->coll) && a->root != c->root) return STAGE_ROOT;
    const uint64_t bytes = with_bytes ? call_bytes(c, a) : 0;
    if (with_bytes && (bytes == 0 || bytes < (uint64_t)a->min_bytes ||
                       (a->max_bytes != 0 && bytes > (uint64_t)a->max_bytes)))
        return STAGE_BYTES;
    if (weft_coll_rooted(c->coll) ? !(a->inplace && a->outofplace)
                                  : !(c->inplace ? a->inplace : a->outofplace))
        return STAGE_MODE;
    if (!(a->launch & (1u << call_launch(c)))) return STAGE_LAUNCH;
    /* a captured call: the file's own bound for graphs, where NCCL's captured kernels overtake
     * it at sizes its eager calls still win */
    if (with_bytes && (c->flags & WEFT_CALL_GRAPH) && a->graph_max_bytes != 0 &&
        bytes > (uint64_t)a->graph_max_bytes)
        return STAGE_GRAPHBYTES;
    return STAGE_COUNT;
}

static const weft_tune_section *table_section(const weft_registry *r, const weft_call *c) {
    unsigned flags = c->flags & (WEFT_CALL_GRAPH | WEFT_CALL_REGISTERED);
    int rooted = weft_coll_rooted(c->coll);
    if (rooted) flags &= ~(unsigned)WEFT_CALL_REGISTERED; /* see weft_tune_find */
    if (r->tnranks == c->nranks) return r->sec[c->coll][!rooted && c->inplace][flags];
    return weft_tune_find(r->table, c->coll, c->nranks, table_shape(r, c->nranks), c->inplace,
                          flags);
}

/* ---- ranking the algorithms that fit a call ---------------------------------------------- */

const char *weft_select_basis_str(weft_select_basis b) {
    static const char *const text[] = {
#define WEFT_X_(id, s) s,
        WEFT_SELECT_BASES(WEFT_X_)
#undef WEFT_X_
    };
    return (unsigned)b < WEFT_SELECT_BASIS_COUNT ? text[b] : "?";
}

/* A cost model's estimate of an algorithm's time for a call, in microseconds (< 0: it cannot
 * say). p is its cut into phases across nodes (NULL on one node), gpn the GPUs per node. */
typedef double (*cost_model_fn)(const weft_algo *a, const weft_phased *p, int gpn,
                                const weft_call *c);

/* The cost model selection ranks by, or NULL while weft has none for selection: the one hook,
 * ranking candidates ahead of network bytes once wired here. `weft estimate`'s model
 * (tools/trace/sim.c, issue 26) is not yet: it lives above this layer and is calibrated on one
 * node of 2 GPUs with no network phases, where the candidates this ranking separates differ. A
 * model wired here must be a pure function of its arguments, so that every rank ranks alike. */
static cost_model_fn cost_model(void) {
    return NULL;
}

/* Bytes algorithm i sends across the network for call c, all ranks together: its network
 * chunks times the call's chunk size (weft_chunk_elems); 0 on one node; UINT64_MAX on
 * overflow. */
static uint64_t net_bytes(const weft_registry *r, size_t i, const weft_call *c) {
    uint64_t chunks = (uint64_t)r->net_chunks[i];
    if (chunks == 0) return 0;
    const weft_algo *a = r->algos[i];
    uint64_t per = (uint64_t)weft_chunk_elems((int64_t)c->count, weft_algo_chunks_per_seg(a)) *
                   (uint64_t)weft_dtype_size(c->dtype);
    if (per != 0 && chunks > UINT64_MAX / per) return UINT64_MAX;
    return chunks * per;
}

static weft_select_cand rank_keys(const weft_registry *r, size_t i, const weft_call *c,
                                  cost_model_fn model) {
    weft_select_cand k = {(int)i, -1.0, net_bytes(r, i, c)};
    if (model) k.est_us = model(r->algos[i], r->phased[i], weft_registry_gpus_per_node(r), c);
    return k;
}

/* Which key tells x and y apart (ESTIMATE, NETWORK or ORDER), and by its sign (*cmp < 0) that
 * x ranks first. Estimates count only when both have one. */
static weft_select_basis rank_cmp(const weft_select_cand *x, const weft_select_cand *y, int *cmp) {
    if (x->est_us >= 0 && y->est_us >= 0 && x->est_us != y->est_us) {
        *cmp = x->est_us < y->est_us ? -1 : 1;
        return WEFT_SELECT_ESTIMATE;
    }
    if (x->net_bytes != y->net_bytes) {
        *cmp = x->net_bytes < y->net_bytes ? -1 : 1;
        return WEFT_SELECT_NETWORK;
    }
    *cmp = (x->algo > y->algo) - (x->algo < y->algo);
    return WEFT_SELECT_ORDER;
}

static int cand_cmp(const void *x, const void *y) {
    int cmp = 0;
    rank_cmp(x, y, &cmp);
    return cmp;
}

static int select_core(const weft_registry *r, const weft_call *c, const unsigned char *usable,
                       const char **why, weft_select_expl *e) {
    const char *reason = NULL;
    if (e) {
        memset(e, 0, sizeof *e);
        e->chosen = -1;
        e->basis = WEFT_SELECT_NONE;
        e->gpus_per_node = r && r->gpus_per_node > 0 ? r->gpus_per_node : c ? c->nranks : 0;
    }
    if (r == NULL || c == NULL) {
        reason = "no registry";
        goto none;
    }
    if ((reason = call_unservable(c)) != NULL) goto none;
    if (r->n == 0) {
        reason = "no algorithm loaded";
        goto none;
    }
    if (c->algo > 0) {
        if ((size_t)c->algo > r->n) {
            reason = "no such algorithm (weft_call.algo is past the registry's end)";
            goto none;
        }
        int stage = fit(r->algos[c->algo - 1], c, 0);
        if (stage == STAGE_COUNT && (!usable || usable[c->algo - 1])) {
            if (e) e->chosen = c->algo - 1, e->basis = WEFT_SELECT_NAMED;
            return c->algo - 1;
        }
        reason = stage == STAGE_COUNT ? WEFT_SELECT_WHY_UNUSABLE : stage_why[stage];
        goto none;
    }
    if (r->table) {
        const weft_tune_section *s = table_section(r, c);
        const weft_tune_range *g = s ? weft_tune_range_of(s, weft_tune_call_bytes(c)) : NULL;
        if (e) e->section = s;
        if (g && g->choice < 0) {
            reason = WEFT_SELECT_WHY_TABLE_NCCL;
            if (e) e->basis = WEFT_SELECT_TABLE;
            goto none;
        }
        /* the algorithm the table names; when it is not loaded or does not fit this call (its
         * root, an op it cannot run), the files' own ranges decide */
        for (size_t j = 0; g && j < r->ntmap[g->choice]; j++) {
            int i = r->tmap[g->choice][j];
            if ((!usable || usable[i]) && fit(r->algos[i], c, 0) == STAGE_COUNT) {
                if (e) e->chosen = i, e->basis = WEFT_SELECT_TABLE;
                return i;
            }
        }
    }
    /* every algorithm that fits in its own range competes; the best by rank_cmp serves */
    cost_model_fn model = cost_model();
    int furthest = STAGE_COLL, unusable = 0, nfit = 0;
    weft_select_cand best = {-1, -1.0, 0};
    for (size_t i = 0; i < r->n; i++) {
        if (r->meta[i].table_only) continue; /* built for the table's sizes only */
        int stage = fit(r->algos[i], c, 1);
        if (stage == STAGE_COUNT && usable && !usable[i]) {
            unusable = 1; /* fits, but cannot run on this communicator: another may */
            continue;
        }
        if (stage != STAGE_COUNT) {
            if (stage > furthest) furthest = stage;
            continue;
        }
        weft_select_cand k = rank_keys(r, i, c, model);
        int cmp = -1;
        if (nfit++ > 0) rank_cmp(&k, &best, &cmp);
        if (cmp < 0) best = k;
        if (e && e->ncands < WEFT_SELECT_MAX_CANDS) e->cands[e->ncands++] = k;
    }
    if (nfit > 0) {
        if (e) {
            int cmp = 0;
            e->chosen = best.algo;
            qsort(e->cands, e->ncands, sizeof *e->cands, cand_cmp);
            e->basis = nfit == 1 ? WEFT_SELECT_ONLY : rank_cmp(&e->cands[0], &e->cands[1], &cmp);
        }
        return best.algo;
    }
    reason = unusable ? WEFT_SELECT_WHY_UNUSABLE : stage_why[furthest];
none:
    if (why) *why = reason;
    if (e) e->why = reason;
    return -1;
}

int weft_registry_select(const weft_registry *r, const weft_call *c, const char **why) {
    return select_core(r, c, NULL, why, NULL);
}

int weft_registry_select_usable(const weft_registry *r, const weft_call *c,
                                const unsigned char *usable, const char **why) {
    return select_core(r, c, usable, why, NULL);
}

int weft_registry_select_explain(const weft_registry *r, const weft_call *c,
                                 const unsigned char *usable, weft_select_expl *e) {
    return select_core(r, c, usable, NULL, e);
}

/* ---- why each file does or does not serve a call (weft select -v) ------------------------- */

/* The collective a source's header names, or -1 when it cannot be told without evaluating it
 * (a parameter, an expression) or the source does not parse. */
static int source_coll(const char *path) {
    weft_lang_program *prog = NULL;
    int coll = -1;
    if (weft_lang_parse_file(path, NULL, 0, &prog, NULL) == WEFT_OK && prog && prog->root)
        for (int32_t i = 0; i < prog->root->nkids; i++) {
            const weft_lang_node *k = prog->root->kids[i];
            if (k->kind != WEFT_LANG_ALGORITHM) continue;
            for (int32_t f = 0; f < k->nkids; f++) {
                const weft_lang_node *fl = k->kids[f];
                if (fl->name && strcmp(fl->name, "collective") == 0 && fl->a &&
                    fl->a->kind == WEFT_LANG_NAME && fl->a->name)
                    coll = weft_coll_from_name(fl->a->name);
            }
        }
    weft_lang_program_free(prog);
    return coll;
}

static int add_why(weft_registry_why **out, size_t *n, size_t *cap, const char *file, int verdict,
                   int line, int col, char *why) {
    weft_registry_why w = {weft_strdup(file), line, col, verdict, why};
    if (w.file == NULL || why == NULL || weft_grow((void **)out, cap, *n, sizeof **out) != 0) {
        free(w.file);
        free(why);
        return -1;
    }
    (*out)[(*n)++] = w;
    return 0;
}

/* Why a file made no instance for this communicator: what making r said about it (an INFO
 * entry: a `require` of the instance, the node shape), else the first error of compiling it for
 * the shape (N, ROOT, G as it declares them: the `require` that rules it out, often a gate such
 * as SERVE), else its rank count. */
static char *why_no_instance(const weft_registry *r, const char *file, const weft_algo *loaded,
                             const char *declared, const weft_call *c, const weft_diag *made,
                             size_t made_from, int *line, int *col) {
    const weft_diag_entry *best = NULL;
    char root[32]; /* a rooted source says why per root: the call's root's entry comes first */
    snprintf(root, sizeof root, "ROOT=%d:", c->root);
    for (size_t k = made_from; made && k < weft_diag_size(made); k++) {
        const weft_diag_entry *e = weft_diag_get(made, k);
        if (e->file == NULL || strcmp(e->file, file) != 0 ||
            (e->sev != WEFT_SEV_INFO && e->sev != WEFT_SEV_ERROR))
            continue;
        int mine = weft_coll_rooted(c->coll) && strstr(e->msg, root) != NULL;
        int best_mine = best && weft_coll_rooted(c->coll) && strstr(best->msg, root) != NULL;
        if (best == NULL || e->sev > best->sev || (e->sev == best->sev && mine && !best_mine))
            best = e;
    }
    if (best) {
        *line = best->line, *col = best->col;
        /* "no instance for N=4: requirement failed: ..." reads as the compile below does */
        const char *rest =
            strncmp(best->msg, "no instance for ", 16) == 0 ? strstr(best->msg, ": ") : NULL;
        if (rest)
            return weft_asprintf("%s (built with %.*s)", rest + 2, (int)(rest - best->msg - 16),
                                 best->msg + 16);
        return weft_strdup(best->msg);
    }
    if (weft_cc_is_source(file)) {
        char dn[32], dr[32], dg[32];
        const char *defs[3];
        size_t nd = 0;
        if (weft_cc_declares(declared, "N"))
            snprintf(dn, sizeof dn, "N=%d", c->nranks), defs[nd++] = dn;
        if (weft_coll_rooted(c->coll) && weft_cc_declares(declared, "ROOT"))
            snprintf(dr, sizeof dr, "ROOT=%d", c->root), defs[nd++] = dr;
        if (r->gpus_per_node > 0 && weft_cc_declares(declared, "G"))
            snprintf(dg, sizeof dg, "G=%d", r->gpus_per_node), defs[nd++] = dg;
        weft_cc_options o = {defs, nd, NULL, 0};
        weft_diag *cd = weft_diag_new();
        weft_algo *a = NULL;
        weft_result res = cd ? weft_cc_load_file(file, &o, &a, cd) : WEFT_ERR_NOMEM;
        char *why = NULL;
        for (size_t k = 0; res != WEFT_OK && cd && k < weft_diag_size(cd) && !why; k++) {
            const weft_diag_entry *e = weft_diag_get(cd, k);
            if (e->sev != WEFT_SEV_ERROR) continue;
            *line = e->line, *col = e->col;
            why =
                nd ? weft_asprintf("%s (built with %s%s%s%s%s)", e->msg, defs[0], nd > 1 ? " " : "",
                                   nd > 1 ? defs[1] : "", nd > 2 ? " " : "", nd > 2 ? defs[2] : "")
                   : weft_strdup(e->msg);
        }
        if (why == NULL && res == WEFT_OK && a->ngpus != c->nranks)
            why = weft_asprintf("written for %d ranks (no parameter N)", a->ngpus);
        weft_algo_free(a);
        weft_diag_free(cd);
        if (why) return why;
    }
    if (loaded && loaded->ngpus != c->nranks)
        return weft_asprintf("written for %d ranks", loaded->ngpus);
    return weft_strdup("no instance of it fits this communicator");
}

static int cmp_why(const void *x, const void *y) {
    return strcmp(((const weft_registry_why *)x)->file, ((const weft_registry_why *)y)->file);
}

weft_result weft_registry_explain(const weft_registry *base, const weft_registry *r,
                                  const weft_call *c, const weft_diag *made, size_t made_from,
                                  weft_registry_why **out, size_t *nout) {
    weft_result res = WEFT_OK;
    size_t n = 0, cap = 0;
    weft_registry_why *w = NULL;
    if (base == NULL || r == NULL || c == NULL || out == NULL || nout == NULL)
        return WEFT_ERR_USAGE;
    const char *why_not = NULL;
    int chosen = weft_registry_select(r, c, &why_not);
    const char *chosen_file = chosen >= 0 ? r->algos[chosen]->file : NULL;
    size_t total = base->n + base->nsrcs;
    for (size_t s = 0; s < total; s++) {
        const weft_algo *loaded = s < base->n ? base->algos[s] : NULL;
        const char *file = loaded ? loaded->file : base->srcs[s - base->n].path;
        const char *declared = loaded ? base->meta[s].declared : base->srcs[s - base->n].declared;
        if (file == NULL) continue;
        int dup = 0; /* a file is loaded once, but be safe with several paths to one folder */
        for (size_t k = 0; k < n && !dup; k++)
            dup = strcmp(w[k].file, file) == 0;
        if (dup) continue;
        int coll = loaded ? (int)loaded->coll : source_coll(file);
        if (coll >= 0 && coll != (int)c->coll) continue;
        /* its instances here: the furthest any gets with this call */
        int furthest = -1, inst = 0;
        const weft_algo *best = NULL;
        for (size_t i = 0; i < r->n; i++) {
            if (r->algos[i]->file == NULL || strcmp(r->algos[i]->file, file) != 0) continue;
            inst++;
            int st = fit(r->algos[i], c, 1);
            if (st > furthest) furthest = st, best = r->algos[i];
        }
        int line = 0, col = 0, verdict;
        char *why;
        char lo[32], hi[32];
        if (inst == 0) {
            verdict = WEFT_WHY_RULED_OUT;
            why = why_no_instance(r, file, loaded, declared, c, made, made_from, &line, &col);
        } else if (furthest == STAGE_COUNT) {
            int sel = chosen_file && strcmp(chosen_file, file) == 0;
            verdict = sel ? WEFT_WHY_SELECTED : WEFT_WHY_FITS;
            why = sel ? weft_asprintf("selected ('%s')", r->algos[chosen]->name)
                      : weft_asprintf("fits, but %s",
                                      chosen >= 0 ? "another algorithm ranks first (the table, the "
                                                    "estimate, network bytes, load order)"
                                      : why_not   ? why_not
                                                  : "not selected");
        } else {
            verdict = WEFT_WHY_NOT_THIS_CALL;
            weft_tune_bytes_str((uint64_t)best->min_bytes, lo, sizeof lo);
            if (best->max_bytes)
                weft_tune_bytes_str((uint64_t)best->max_bytes, hi, sizeof hi);
            else
                snprintf(hi, sizeof hi, "any size");
            switch (furthest) {
            case STAGE_ROOT:
                why = weft_asprintf("built for root %d, not %d", best->root, c->root);
                break;
            case STAGE_BYTES:
                why = weft_asprintf("serves %s .. %s; this call is %llu B", lo, hi,
                                    (unsigned long long)call_bytes(c, best));
                break;
            case STAGE_MODE:
                why =
                    weft_asprintf("declares %s only", best->inplace ? "in-place" : "out-of-place");
                break;
            case STAGE_LAUNCH: {
                char m[96];
                why = weft_asprintf("serves launch modes %s; this call is %s",
                                    weft_launch_mask_str(best->launch, m, sizeof m),
                                    weft_launch_name(call_launch(c)));
                break;
            }
            case STAGE_GRAPHBYTES:
                weft_tune_bytes_str((uint64_t)best->graph_max_bytes, hi, sizeof hi);
                why = weft_asprintf("serves calls captured in CUDA graphs up to %s; this call is "
                                    "%llu B",
                                    hi, (unsigned long long)call_bytes(c, best));
                break;
            default: why = weft_strdup(stage_why[furthest < 0 ? 0 : furthest]); break;
            }
        }
        if (add_why(&w, &n, &cap, file, verdict, line, col, why) != 0) WEFT_FAIL(WEFT_ERR_NOMEM);
    }
    if (n > 1) qsort(w, n, sizeof *w, cmp_why);
    *out = w;
    *nout = n;
    w = NULL;
    n = 0;
fail:
    weft_registry_why_free(w, n);
    return res;
}

void weft_registry_why_free(weft_registry_why *w, size_t n) {
    for (size_t i = 0; w && i < n; i++) {
        free(w[i].file);
        free(w[i].why);
    }
    free(w);
}
