/* tune_table.c — tuning tables: reading, checking and writing the text format of docs/tune.md,
 * building tables, and the lookups selection makes. CPU-only C. */
#include "weft_tune_table.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ---- the machine ------------------------------------------------------------------------- */

void weft_machine_free(weft_machine *m) {
    if (m == NULL) return;
    free(m->gpu);
    free(m->topology);
    free(m->weft);
    memset(m, 0, sizeof *m);
}

static int dup_or_null(char **dst, const char *src) {
    *dst = NULL;
    if (src == NULL) return 0;
    *dst = weft_strdup(src);
    return *dst == NULL;
}

weft_result weft_machine_copy(weft_machine *dst, const weft_machine *src) {
    memset(dst, 0, sizeof *dst);
    if (src == NULL) return WEFT_OK;
    dst->gpus = src->gpus;
    dst->nccl = src->nccl;
    dst->nrpn = src->nrpn;
    memcpy(dst->rpn, src->rpn, sizeof dst->rpn);
    if (dup_or_null(&dst->gpu, src->gpu) || dup_or_null(&dst->topology, src->topology) ||
        dup_or_null(&dst->weft, src->weft)) {
        weft_machine_free(dst);
        return WEFT_ERR_NOMEM;
    }
    return WEFT_OK;
}

void weft_machine_nccl_str(int code, char *buf, size_t len) {
    if (code <= 0)
        snprintf(buf, len, "unknown");
    else if (code >= 20900) /* NCCL_VERSION(X,Y,Z) = X*10000 + Y*100 + Z from 2.9 on */
        snprintf(buf, len, "%d.%d.%d", code / 10000, code % 10000 / 100, code % 100);
    else
        snprintf(buf, len, "%d.%d.%d", code / 1000, code % 1000 / 100, code % 100);
}

/* Appends "; " and a formatted field difference to why. */
static void add_why(char *why, size_t len, const char *fmt, ...) WEFT_PRINTF(3, 4);
static void add_why(char *why, size_t len, const char *fmt, ...) {
    if (why == NULL || len == 0) return;
    size_t n = strlen(why);
    if (n + 3 >= len) return;
    if (n) {
        memcpy(why + n, "; ", 3);
        n += 2;
    }
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why + n, len - n, fmt, ap);
    va_end(ap);
}

int weft_machine_differs(const weft_machine *t, const weft_machine *h, char *why, size_t len) {
    int differs = 0;
    if (why && len) why[0] = '\0';
    if ((t->gpu && h->gpu && strcmp(t->gpu, h->gpu) != 0) ||
        (t->gpus && h->gpus && t->gpus != h->gpus)) {
        add_why(why, len, "GPUs: the table's %d x '%s', this machine's %d x '%s'", t->gpus,
                t->gpu ? t->gpu : "?", h->gpus, h->gpu ? h->gpu : "?");
        differs = 1;
    }
    if (t->topology && h->topology && strcmp(t->topology, h->topology) != 0) {
        add_why(why, len, "topology: the table's '%s', this machine's '%s'", t->topology,
                h->topology);
        differs = 1;
    }
    if (t->nccl && h->nccl && t->nccl != h->nccl) {
        char a[32], b[32];
        weft_machine_nccl_str(t->nccl, a, sizeof a);
        weft_machine_nccl_str(h->nccl, b, sizeof b);
        add_why(why, len, "NCCL: the table's %s, this process's %s", a, b);
        differs = 1;
    }
    if (t->weft && h->weft && strcmp(t->weft, h->weft) != 0) {
        add_why(why, len, "weft: the table's %s, this one %s", t->weft, h->weft);
        differs = 1;
    }
    if (t->nrpn > 0 && h->nrpn > 0) {
        int found = 0;
        for (int i = 0; i < t->nrpn; i++)
            found |= t->rpn[i] == h->rpn[0];
        if (!found) {
            char list[96] = "";
            for (int i = 0; i < t->nrpn; i++)
                snprintf(list + strlen(list), sizeof list - strlen(list), "%s%d", i ? ", " : "",
                         t->rpn[i]);
            add_why(why, len, "ranks per node: the table's %s, this job's %d", list, h->rpn[0]);
            differs = 1;
        }
    }
    return differs;
}

/* ---- tables: building -------------------------------------------------------------------- */

weft_tune_table *weft_tune_table_new(void) {
    return calloc(1, sizeof(weft_tune_table));
}

static void section_free(weft_tune_section *s) {
    for (size_t i = 0; i < s->nrows; i++) {
        free(s->rows[i].m);
        free(s->rows[i].note);
    }
    free(s->rows);
    free(s->ranges);
}

void weft_tune_table_free(weft_tune_table *t) {
    if (t == NULL) return;
    free(t->path);
    weft_machine_free(&t->machine);
    for (size_t i = 0; i < t->nrun; i++) {
        free(t->run[i].key);
        free(t->run[i].value);
    }
    free(t->run);
    for (size_t i = 0; i < t->nalgos; i++) {
        weft_tune_algo *a = &t->algos[i];
        free(a->id);
        free(a->file);
        free(a->name);
        free(a->defines);
    }
    free(t->algos);
    for (size_t i = 0; i < t->nsecs; i++)
        section_free(&t->secs[i]);
    free(t->secs);
    free(t);
}

weft_result weft_tune_set_run(weft_tune_table *t, const char *key, const char *value) {
    for (size_t i = 0; i < t->nrun; i++)
        if (strcmp(t->run[i].key, key) == 0) {
            char *v = weft_strdup(value);
            if (v == NULL) return WEFT_ERR_NOMEM;
            free(t->run[i].value);
            t->run[i].value = v;
            return WEFT_OK;
        }
    if (weft_grow((void **)&t->run, &t->caprun, t->nrun, sizeof *t->run) != 0)
        return WEFT_ERR_NOMEM;
    weft_tune_kv *kv = &t->run[t->nrun];
    kv->key = weft_strdup(key);
    kv->value = weft_strdup(value);
    if (kv->key == NULL || kv->value == NULL) {
        free(kv->key);
        free(kv->value);
        return WEFT_ERR_NOMEM;
    }
    t->nrun++;
    return WEFT_OK;
}

/* Characters an id may hold: it is one token of the format. */
static int id_char(int c) {
    return isalnum(c) || c == '_' || c == '.' || c == '-' || c == '+';
}

static int id_reserved(const char *s) {
    return strcmp(s, "nccl") == 0 || strcmp(s, "inf") == 0;
}

static int find_id(const weft_tune_table *t, const char *id) {
    for (size_t i = 0; i < t->nalgos; i++)
        if (strcmp(t->algos[i].id, id) == 0) return (int)i;
    return -1;
}

/* A unique id from the algorithm's name: characters outside id_char become '_', and a second
 * algorithm of that name gets "~2" (then "~3"...), which no name can produce. */
static char *make_id(const weft_tune_table *t, const char *name) {
    size_t n = strlen(name);
    char *base = malloc(n + 2);
    if (base == NULL) return NULL;
    for (size_t i = 0; i < n; i++)
        base[i] = id_char((unsigned char)name[i]) ? name[i] : '_';
    base[n] = '\0';
    if (n == 0 || id_reserved(base)) {
        base[n] = '_';
        base[n + 1] = '\0';
    }
    if (find_id(t, base) < 0) return base;
    for (int k = 2;; k++) {
        char *id = weft_asprintf("%s~%d", base, k);
        if (id == NULL || find_id(t, id) < 0) {
            free(base);
            return id;
        }
        free(id);
    }
}

static int add_algo_id(weft_tune_table *t, const char *id, const char *file, const char *name,
                       const char *defines, int ranks, int root, uint64_t hash, int line) {
    if (weft_grow((void **)&t->algos, &t->capalgos, t->nalgos, sizeof *t->algos) != 0) return -1;
    weft_tune_algo *a = &t->algos[t->nalgos];
    memset(a, 0, sizeof *a);
    a->id = id ? weft_strdup(id) : make_id(t, name);
    a->file = weft_strdup(file);
    a->name = weft_strdup(name);
    a->defines = weft_strdup(defines ? defines : "");
    a->ranks = ranks;
    a->root = root;
    a->hash = hash;
    a->line = line;
    if (!a->id || !a->file || !a->name || !a->defines) {
        free(a->id);
        free(a->file);
        free(a->name);
        free(a->defines);
        return -1;
    }
    return (int)t->nalgos++;
}

int weft_tune_add_algo(weft_tune_table *t, const char *file, const char *name, const char *defines,
                       int ranks, int root, uint64_t hash) {
    for (size_t i = 0; i < t->nalgos; i++) {
        const weft_tune_algo *a = &t->algos[i];
        if (a->ranks == ranks && a->root == root && a->hash == hash && strcmp(a->file, file) == 0 &&
            strcmp(a->name, name) == 0 && strcmp(a->defines, defines ? defines : "") == 0)
            return (int)i;
    }
    return add_algo_id(t, NULL, file, name, defines, ranks, root, hash, 0);
}

weft_tune_section *weft_tune_add_section(weft_tune_table *t, weft_coll coll, int ranks, int inplace,
                                         unsigned flags) {
    if (weft_grow((void **)&t->secs, &t->capsecs, t->nsecs, sizeof *t->secs) != 0) return NULL;
    t->secs[t->nsecs] = (weft_tune_section){
        .coll = coll, .ranks = ranks, .gpn = ranks, .inplace = inplace, .flags = flags};
    return &t->secs[t->nsecs++];
}

weft_tune_row *weft_tune_add_row(weft_tune_section *s, uint64_t bytes) {
    if (weft_grow((void **)&s->rows, &s->caprows, s->nrows, sizeof *s->rows) != 0) return NULL;
    s->rows[s->nrows] = (weft_tune_row){.bytes = bytes, .choice = -1};
    return &s->rows[s->nrows++];
}

weft_tune_meas *weft_tune_add_meas(weft_tune_row *r, int algo) {
    if (weft_grow((void **)&r->m, &r->capm, r->nm, sizeof *r->m) != 0) return NULL;
    r->m[r->nm] = (weft_tune_meas){.algo = algo};
    return &r->m[r->nm++];
}

weft_result weft_tune_add_note(weft_tune_row *r, const char *line) {
    char *n = r->note ? weft_asprintf("%s\n%s", r->note, line) : weft_strdup(line);
    if (n == NULL) return WEFT_ERR_NOMEM;
    free(r->note);
    r->note = n;
    return WEFT_OK;
}

weft_tune_range *weft_tune_add_range(weft_tune_section *s, uint64_t lo, uint64_t hi, int choice) {
    if (weft_grow((void **)&s->ranges, &s->capranges, s->nranges, sizeof *s->ranges) != 0)
        return NULL;
    weft_tune_range *g = &s->ranges[s->nranges++];
    g->lo = lo;
    g->hi = hi;
    g->choice = choice;
    g->line = 0;
    return g;
}

weft_result weft_tune_ranges_from_rows(weft_tune_section *s) {
    s->nranges = 0;
    if (s->nrows == 0)
        return weft_tune_add_range(s, 0, WEFT_TUNE_INF, -1) ? WEFT_OK : WEFT_ERR_NOMEM;
    for (size_t i = 0; i < s->nrows; i++) {
        if (i > 0 && s->rows[i].choice == s->ranges[s->nranges - 1].choice) continue;
        if (s->nranges > 0) s->ranges[s->nranges - 1].hi = s->rows[i].bytes - 1;
        if (!weft_tune_add_range(s, i == 0 ? 0 : s->rows[i].bytes, WEFT_TUNE_INF,
                                 s->rows[i].choice))
            return WEFT_ERR_NOMEM;
    }
    return WEFT_OK;
}

weft_tune_table *weft_tune_table_clone(const weft_tune_table *t) {
    weft_tune_table *c = weft_tune_table_new();
    if (c == NULL) return NULL;
    if (weft_machine_copy(&c->machine, &t->machine) != WEFT_OK) goto fail;
    c->machine_line = t->machine_line;
    if (dup_or_null(&c->path, t->path)) goto fail;
    for (size_t i = 0; i < t->nrun; i++)
        if (weft_tune_set_run(c, t->run[i].key, t->run[i].value) != WEFT_OK) goto fail;
    for (size_t i = 0; i < t->nalgos; i++) {
        const weft_tune_algo *a = &t->algos[i];
        if (add_algo_id(c, a->id, a->file, a->name, a->defines, a->ranks, a->root, a->hash,
                        a->line) < 0)
            goto fail;
    }
    for (size_t i = 0; i < t->nsecs; i++) {
        const weft_tune_section *s = &t->secs[i];
        weft_tune_section *d = weft_tune_add_section(c, s->coll, s->ranks, s->inplace, s->flags);
        if (d == NULL) goto fail;
        d->gpn = s->gpn;
        d->line = s->line;
        for (size_t j = 0; j < s->nranges; j++) {
            weft_tune_range *g =
                weft_tune_add_range(d, s->ranges[j].lo, s->ranges[j].hi, s->ranges[j].choice);
            if (g == NULL) goto fail;
            g->line = s->ranges[j].line;
        }
        for (size_t j = 0; j < s->nrows; j++) {
            const weft_tune_row *r = &s->rows[j];
            weft_tune_row *q = weft_tune_add_row(d, r->bytes);
            if (q == NULL) goto fail;
            q->rounds = r->rounds;
            q->nccl_us = r->nccl_us;
            q->choice = r->choice;
            q->line = r->line;
            if (r->note && (q->note = weft_strdup(r->note)) == NULL) goto fail;
            for (size_t k = 0; k < r->nm; k++) {
                weft_tune_meas *m = weft_tune_add_meas(q, r->m[k].algo);
                if (m == NULL) goto fail;
                *m = r->m[k];
            }
        }
    }
    return c;
fail:
    weft_tune_table_free(c);
    return NULL;
}

/* ---- lookups ----------------------------------------------------------------------------- */

int weft_tune_shape(int ranks, int gpn) {
    return gpn <= 0 || gpn >= ranks ? ranks : gpn;
}

const weft_tune_section *weft_tune_find(const weft_tune_table *t, weft_coll coll, int ranks,
                                        int gpn, int inplace, unsigned flags) {
    if (t == NULL) return NULL;
    gpn = weft_tune_shape(ranks, gpn);
    flags &= WEFT_CALL_GRAPH | WEFT_CALL_REGISTERED;
    if (weft_coll_rooted(coll)) { /* what every rank of a rooted call can know alike */
        inplace = 0;
        flags &= ~(unsigned)WEFT_CALL_REGISTERED;
    }
    for (size_t i = 0; i < t->nsecs; i++) {
        const weft_tune_section *s = &t->secs[i];
        if (s->coll == coll && s->ranks == ranks && s->gpn == gpn && !s->inplace == !inplace &&
            s->flags == flags)
            return s;
    }
    return NULL;
}

const weft_tune_range *weft_tune_range_of(const weft_tune_section *s, uint64_t bytes) {
    size_t lo = 0, hi = s ? s->nranges : 0;
    while (lo < hi) { /* ranges are sorted and contiguous (checked at read) */
        size_t mid = lo + (hi - lo) / 2;
        if (bytes < s->ranges[mid].lo)
            hi = mid;
        else if (bytes > s->ranges[mid].hi)
            lo = mid + 1;
        else
            return &s->ranges[mid];
    }
    return NULL;
}

const weft_tune_row *weft_tune_row_of(const weft_tune_section *s, uint64_t bytes) {
    const weft_tune_row *best = NULL;
    for (size_t i = 0; s && i < s->nrows; i++)
        if (s->rows[i].bytes <= bytes) best = &s->rows[i];
    if (best == NULL && s && s->nrows) best = &s->rows[0];
    return best;
}

uint64_t weft_tune_call_bytes(const weft_call *c) {
    return weft_coll_footprint(c->coll, (uint64_t)c->count, (uint64_t)weft_dtype_size(c->dtype),
                               c->nranks);
}

static const char *launch_word(unsigned flags) {
    return weft_call_flag_word(WEFT_CALL_GRAPH, flags);
}

static const char *buffers_word(unsigned flags) {
    return weft_call_flag_word(WEFT_CALL_REGISTERED, flags);
}

/* Whether a section is for several nodes. */
static int across_nodes(const weft_tune_section *s) {
    return s->gpn > 0 && s->gpn < s->ranks;
}

void weft_tune_section_str(const weft_tune_section *s, char *buf, size_t len) {
    char shape[48] = "";
    if (across_nodes(s))
        snprintf(shape, sizeof shape, " in %d nodes of %d", s->ranks / s->gpn, s->gpn);
    snprintf(buf, len, "%s %d ranks%s %s %s %s", weft_coll_name(s->coll), s->ranks, shape,
             s->inplace ? "in-place" : "out-of-place", launch_word(s->flags),
             buffers_word(s->flags));
}

void weft_tune_bytes_str(uint64_t b, char *buf, size_t len) {
    static const char *const units[] = {"B", "KB", "MB", "GB", "TB"};
    int u = 0;
    while (u < 4 && b >= 1024 && b % 1024 == 0) {
        b /= 1024;
        u++;
    }
    snprintf(buf, len, "%" PRIu64 " %s", b, units[u]);
}

uint64_t weft_tune_algo_hash(const weft_algo *a) {
    weft_algo *c = weft_algo_clone(a);
    char *xml = NULL;
    uint64_t h = 0;
    if (c == NULL) return 0;
    /* not what it computes: the name, where it came from, and the size range a table replaces */
    free(c->name);
    c->name = weft_strdup("-");
    free(c->file);
    c->file = NULL;
    c->min_bytes = c->max_bytes = 0;
    if (c->name && weft_ir_write_string(c, &xml) == WEFT_OK && xml) {
        h = 1469598103934665603ull;
        for (const unsigned char *p = (const unsigned char *)xml; *p; p++) {
            h ^= *p;
            h *= 1099511628211ull;
        }
        if (h == 0) h = 1;
    }
    free(xml);
    weft_algo_free(c);
    return h;
}

/* ---- writing ----------------------------------------------------------------------------- */

static void put_quoted(FILE *f, const char *s) {
    weft_fput_quoted(f, s, ' ', 0);
}

static void put_choice(FILE *f, const weft_tune_table *t, int choice) {
    fputs(choice < 0 ? "nccl" : t->algos[choice].id, f);
}

weft_result weft_tune_write(const weft_tune_table *t, FILE *f) {
    const weft_machine *m = &t->machine;
    fputs("# weft tuning table: which algorithm serves each collective call on this machine.\n"
          "# Written by `weft tune`, read by libweft_nccl.so (WEFT_TUNE_FILE, or weft-tune.txt in "
          "an\n# algorithm folder) and `weft select --table`. Format: docs/tune.md; `range` lines "
          "may be\n# edited by hand, `at` lines are the measurements (times in microseconds).\n",
          f);
    int version = 1; /* the oldest that can say it: one-node tables stay readable by old weft */
    for (size_t i = 0; i < t->nsecs; i++)
        if (across_nodes(&t->secs[i])) version = WEFT_TUNE_VERSION_NODES;
    fprintf(f, "weft-tune %d\n", version);
    if (m->gpu) {
        fputs("machine gpu ", f);
        put_quoted(f, m->gpu);
        fprintf(f, " %d\n", m->gpus);
    }
    if (m->topology) {
        fputs("machine topology ", f);
        put_quoted(f, m->topology);
        fputc('\n', f);
    }
    if (m->nccl) {
        char v[32];
        weft_machine_nccl_str(m->nccl, v, sizeof v);
        fprintf(f, "machine nccl %s\n", v);
    }
    if (m->weft) fprintf(f, "machine weft %s\n", m->weft);
    if (m->nrpn > 0) {
        fputs("machine ranks-per-node", f);
        for (int i = 0; i < m->nrpn; i++)
            fprintf(f, " %d", m->rpn[i]);
        fputc('\n', f);
    }
    if (t->nrun) {
        fputs("run", f);
        for (size_t i = 0; i < t->nrun; i++) {
            fprintf(f, " %s ", t->run[i].key);
            put_quoted(f, t->run[i].value);
        }
        fputc('\n', f);
    }
    for (size_t i = 0; i < t->nalgos; i++) {
        const weft_tune_algo *a = &t->algos[i];
        fprintf(f, "algo %s file ", a->id);
        put_quoted(f, a->file);
        fputs(" name ", f);
        put_quoted(f, a->name);
        fprintf(f, " ranks %d root %d defines ", a->ranks, a->root);
        put_quoted(f, a->defines);
        fprintf(f, " hash %016" PRIx64 "\n", a->hash);
    }
    for (size_t i = 0; i < t->nsecs; i++) {
        const weft_tune_section *s = &t->secs[i];
        fprintf(f, "\nsection %s ranks %d", weft_coll_name(s->coll), s->ranks);
        if (across_nodes(s)) fprintf(f, " gpus-per-node %d", s->gpn);
        fprintf(f, " %s %s %s\n", s->inplace ? "in-place" : "out-of-place", launch_word(s->flags),
                buffers_word(s->flags));
        for (size_t j = 0; j < s->nranges; j++) {
            const weft_tune_range *g = &s->ranges[j];
            fprintf(f, "range %" PRIu64 " ", g->lo);
            if (g->hi == WEFT_TUNE_INF)
                fputs("inf ", f);
            else
                fprintf(f, "%" PRIu64 " ", g->hi);
            put_choice(f, t, g->choice);
            fputc('\n', f);
        }
        for (size_t j = 0; j < s->nrows; j++) {
            const weft_tune_row *r = &s->rows[j];
            fprintf(f, "at %" PRIu64 " rounds=%d nccl=%.2f", r->bytes, r->rounds, r->nccl_us);
            for (size_t k = 0; k < r->nm; k++) {
                const weft_tune_meas *q = &r->m[k];
                fprintf(f, " %s=", t->algos[q->algo].id);
                if (q->status == WEFT_TUNE_OK)
                    fprintf(f, "%.2f/%.4f/%.4f/%.4f", q->us, q->ratio, q->lo, q->hi);
                else
                    fputs(q->status == WEFT_TUNE_WRONG ? "wrong" : "unsupported", f);
            }
            fputs(" choose=", f);
            put_choice(f, t, r->choice);
            fputc('\n', f);
            for (const char *n = r->note; n && *n;) {
                size_t len = strcspn(n, "\n");
                fprintf(f, "# %.*s\n", (int)len, n);
                n += len + (n[len] == '\n');
            }
        }
    }
    return ferror(f) ? WEFT_ERR_SYSTEM : WEFT_OK;
}

weft_result weft_tune_write_file(const weft_tune_table *t, const char *path, weft_diag *d) {
    weft_out *o = NULL;
    weft_result res = weft_out_open(path, WEFT_OUT_STDOUT, &o, d);
    if (res != WEFT_OK) return res;
    res = weft_tune_write(t, weft_out_file(o));
    if (res != WEFT_OK && res != WEFT_ERR_SYSTEM) {
        weft_out_abort(o);
        return res;
    }
    return weft_out_close(o, d); /* a write error is said here */
}

/* ---- reading ----------------------------------------------------------------------------- */

#define MAX_TOKENS 512

typedef struct reader {
    const char *name;
    int line;
    weft_diag *d;
    int errors;
    char *tok[MAX_TOKENS];
    int ntok;
    /* the table's algorithm ids (hash -> index + 1) and sections (key -> index + 1), so that
     * each line costs one lookup however many came before (a table of many `algo` and
     * `section` lines is read in time linear in its size) */
    weft_map ids, secs;
} reader;

static int rd_find_id(const reader *r, const weft_tune_table *t, const char *id) {
    const uint64_t *v = weft_map_get(&r->ids, weft_hash_bytes(id, strlen(id)));
    if (v == NULL) return -1;
    if (strcmp(t->algos[*v - 1].id, id) == 0) return (int)(*v - 1);
    return find_id(t, id); /* two ids with one hash */
}

static uint64_t section_key(int coll, int ranks, int gpn, int inplace, unsigned flags) {
    return (uint64_t)(uint8_t)coll | (uint64_t)(uint16_t)ranks << 8 |
           (uint64_t)(uint16_t)gpn << 24 | (uint64_t)(inplace != 0) << 40 | (uint64_t)flags << 41;
}

static void rd_err(reader *r, const char *fmt, ...) WEFT_PRINTF(2, 3);
static void rd_err(reader *r, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    weft_diag_vadd(r->d, WEFT_SEV_ERROR, r->name, r->line, 0, fmt, ap);
    va_end(ap);
    r->errors++;
}

/* Splits one line (a writable copy) into tokens in place: whitespace separates, "..." quotes
 * (with \" and \\), # starts a comment. Returns 0, or -1 after reporting. */
static int tokenize(reader *r, char *s) {
    r->ntok = 0;
    while (*s) {
        while (*s == ' ' || *s == '\t' || *s == '\r')
            s++;
        if (*s == '\0' || *s == '#') break;
        if (r->ntok == MAX_TOKENS) {
            rd_err(r, "more than %d words on one line", MAX_TOKENS);
            return -1;
        }
        if (*s == '"') {
            char *out = ++s;
            r->tok[r->ntok++] = out;
            while (*s && *s != '"') {
                if (*s == '\\' && (s[1] == '"' || s[1] == '\\')) s++;
                *out++ = *s++;
            }
            if (*s != '"') {
                rd_err(r, "unterminated quoted string");
                return -1;
            }
            s++;
            *out = '\0';
            if (*s && *s != ' ' && *s != '\t' && *s != '\r') {
                rd_err(r, "expected a space after a quoted string");
                return -1;
            }
        } else {
            r->tok[r->ntok++] = s;
            while (*s && *s != ' ' && *s != '\t' && *s != '\r' && *s != '#')
                s++;
            if (*s == '#') {
                *s = '\0';
                break;
            }
            if (*s) *s++ = '\0';
        }
    }
    return 0;
}

static int parse_u64(const char *s, uint64_t *out) {
    if (!isdigit((unsigned char)*s)) return -1;
    errno = 0;
    char *end;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno || *end) return -1;
    *out = (uint64_t)v;
    return 0;
}

static int parse_int(const char *s, int lo, int hi, int *out) {
    uint64_t v;
    if (parse_u64(s, &v) != 0 || v < (uint64_t)lo || v > (uint64_t)hi) return -1;
    *out = (int)v;
    return 0;
}

static int parse_double(const char *s, double *out) {
    errno = 0;
    char *end;
    double v = strtod(s, &end);
    if (end == s || *end || errno || !(v >= 0) || v > 1e12) return -1;
    *out = v;
    return 0;
}

static int parse_nccl_version(const char *s, int *code) {
    int a, b, c;
    char tail;
    if (sscanf(s, "%d.%d.%d%c", &a, &b, &c, &tail) != 3 || a < 0 || b < 0 || b > 99 || c < 0 ||
        c > 99 || a > 99)
        return -1;
    *code = a * 10000 + b * 100 + c;
    return 0;
}

static int parse_choice(reader *r, const weft_tune_table *t, const char *s, int *choice) {
    if (strcmp(s, "nccl") == 0) {
        *choice = -1;
        return 0;
    }
    *choice = rd_find_id(r, t, s);
    if (*choice < 0) {
        rd_err(r, "'%s' is neither nccl nor an algorithm declared by an earlier `algo` line", s);
        return -1;
    }
    return 0;
}

static void line_machine(reader *r, weft_tune_table *t) {
    weft_machine *m = &t->machine;
    const char *what = r->ntok > 1 ? r->tok[1] : "";
    if (t->machine_line == 0) t->machine_line = r->line;
    if (strcmp(what, "gpu") == 0 && r->ntok == 4) {
        free(m->gpu);
        m->gpu = weft_strdup(r->tok[2]);
        if (parse_int(r->tok[3], 1, 1 << 20, &m->gpus) != 0)
            rd_err(r, "machine gpu: the GPU count '%s' is not a positive integer", r->tok[3]);
    } else if (strcmp(what, "topology") == 0 && r->ntok == 3) {
        free(m->topology);
        m->topology = weft_strdup(r->tok[2]);
    } else if (strcmp(what, "nccl") == 0 && r->ntok == 3) {
        if (parse_nccl_version(r->tok[2], &m->nccl) != 0)
            rd_err(r, "machine nccl: '%s' is not a version (like 2.28.9)", r->tok[2]);
    } else if (strcmp(what, "weft") == 0 && r->ntok == 3) {
        free(m->weft);
        m->weft = weft_strdup(r->tok[2]);
    } else if (strcmp(what, "ranks-per-node") == 0 && r->ntok >= 3) {
        m->nrpn = 0;
        for (int i = 2; i < r->ntok; i++) {
            int v;
            if (parse_int(r->tok[i], 1, 1 << 20, &v) != 0) {
                rd_err(r, "machine ranks-per-node: '%s' is not a positive integer", r->tok[i]);
            } else if (m->nrpn == (int)(sizeof m->rpn / sizeof *m->rpn)) {
                rd_err(r, "machine ranks-per-node: at most %d values",
                       (int)(sizeof m->rpn / sizeof *m->rpn));
                break;
            } else {
                m->rpn[m->nrpn++] = v;
            }
        }
    } else {
        rd_err(r, "expected `machine gpu \"MODEL\" COUNT`, `machine topology \"TEXT\"`, `machine "
                  "nccl X.Y.Z`, `machine weft VERSION` or `machine ranks-per-node N...`");
    }
}

static void line_run(reader *r, weft_tune_table *t) {
    if (r->ntok % 2 == 0) {
        rd_err(r, "`run` takes KEY VALUE pairs");
        return;
    }
    for (int i = 1; i + 1 < r->ntok; i += 2)
        if (weft_tune_set_run(t, r->tok[i], r->tok[i + 1]) != WEFT_OK) r->errors++;
}

static void line_algo(reader *r, weft_tune_table *t) {
    const char *id = r->ntok > 1 ? r->tok[1] : "";
    const char *file = NULL, *name = NULL, *defines = "";
    int ranks = 0, root = 0, have_hash = 0;
    uint64_t hash = 0;
    if (r->ntok < 2 || r->ntok % 2 != 0) {
        rd_err(r, "expected `algo ID file FILE name NAME ranks N root R defines \"...\" hash HEX`");
        return;
    }
    for (const char *p = id; *p; p++)
        if (!id_char((unsigned char)*p) && *p != '~') {
            rd_err(r, "algorithm id '%s': only letters, digits and _ . - + ~", id);
            return;
        }
    if (id_reserved(id)) {
        rd_err(r, "'%s' cannot be an algorithm id", id);
        return;
    }
    int twice = rd_find_id(r, t, id);
    if (twice >= 0) {
        rd_err(r, "algorithm id '%s' is declared twice (line %d)", id, t->algos[twice].line);
        return;
    }
    for (int i = 2; i + 1 < r->ntok; i += 2) {
        const char *k = r->tok[i], *v = r->tok[i + 1];
        if (strcmp(k, "file") == 0)
            file = v;
        else if (strcmp(k, "name") == 0)
            name = v;
        else if (strcmp(k, "defines") == 0)
            defines = v;
        else if (strcmp(k, "ranks") == 0) {
            if (parse_int(v, 1, WEFT_IR_MAX_RANKS, &ranks) != 0)
                rd_err(r, "algo %s: ranks '%s' is not a rank count", id, v);
        } else if (strcmp(k, "root") == 0) {
            if (parse_int(v, 0, WEFT_IR_MAX_RANKS, &root) != 0)
                rd_err(r, "algo %s: root '%s' is not a rank", id, v);
        } else if (strcmp(k, "hash") == 0) {
            char *end;
            errno = 0;
            hash = strtoull(v, &end, 16);
            /* strtoull alone takes a sign and spaces: "-1" would be ffffffffffffffff */
            size_t nhex = strspn(v, "0123456789abcdefABCDEF");
            if (*v == '\0' || *end || errno || strlen(v) > 16 || v[nhex] != '\0')
                rd_err(r, "algo %s: hash '%s' is not 16 hexadecimal digits", id, v);
            have_hash = 1;
        } else {
            rd_err(r, "algo %s: unknown field '%s'", id, k);
        }
    }
    if (file == NULL || name == NULL || ranks == 0 || !have_hash) {
        rd_err(r, "algo %s: file, name, ranks and hash are required", id);
        return;
    }
    if (root >= ranks) {
        rd_err(r, "algo %s: root %d is not a rank of %d", id, root, ranks);
        return;
    }
    int k = add_algo_id(t, id, file, name, defines, ranks, root, hash, r->line);
    uint64_t *slot = k < 0 ? NULL : weft_map_put(&r->ids, weft_hash_bytes(id, strlen(id)), NULL);
    if (slot == NULL)
        r->errors++;
    else if (*slot == 0) /* else another id with this hash came first: found by the scan */
        *slot = (uint64_t)k + 1;
}

static int word_index(const char *s, const char *a, const char *b) {
    return strcmp(s, a) == 0 ? 0 : strcmp(s, b) == 0 ? 1 : -1;
}

/* 0 when s is flag bit's word when clear, 1 when set, -1 when neither. */
static int flag_index(const char *s, unsigned bit) {
    return word_index(s, weft_call_flag_word(bit, 0), weft_call_flag_word(bit, bit));
}

#define SECTION_SYNTAX                                                                             \
    "`section COLLECTIVE ranks N [gpus-per-node G] out-of-place|in-place eager|graph "             \
    "unregistered|registered`"

static weft_tune_section *line_section(reader *r, weft_tune_table *t) {
    /* the node shape is optional: without it the section is for one node */
    int shaped = r->ntok == 9 && strcmp(r->tok[4], "gpus-per-node") == 0, w = shaped ? 6 : 4;
    if ((r->ntok != 7 && !shaped) || strcmp(r->tok[2], "ranks") != 0) {
        rd_err(r, "expected " SECTION_SYNTAX);
        return NULL;
    }
    int coll = weft_coll_from_name(r->tok[1]), ranks = 0, gpn = 0;
    int mode = word_index(r->tok[w], "out-of-place", "in-place");
    int graph = flag_index(r->tok[w + 1], WEFT_CALL_GRAPH);
    int reg = flag_index(r->tok[w + 2], WEFT_CALL_REGISTERED);
    if (coll < 0 || !weft_coll_runnable((weft_coll)coll)) {
        rd_err(r, "'%s' is not a collective weft serves", r->tok[1]);
        return NULL;
    }
    if (parse_int(r->tok[3], 1, WEFT_IR_MAX_RANKS, &ranks) != 0 || mode < 0 || graph < 0 ||
        reg < 0) {
        rd_err(r, "expected " SECTION_SYNTAX " (%s)", r->tok[1]);
        return NULL;
    }
    if (shaped && (parse_int(r->tok[5], 1, ranks, &gpn) != 0 || ranks % gpn != 0)) {
        rd_err(r, "gpus-per-node '%s': %d ranks are not whole nodes of that many GPUs", r->tok[5],
               ranks);
        return NULL;
    }
    gpn = weft_tune_shape(ranks, gpn);
    /* every rank must find the same section of a rooted collective */
    if ((mode == 1 || reg == 1) && weft_coll_rooted((weft_coll)coll)) {
        rd_err(r, "%s sections are %s", r->tok[1],
               mode == 1 ? "out-of-place (every rank must find the same section, and non-root "
                           "ranks cannot know the root's buffer mode)"
                         : "unregistered (every rank must find the same section, and NCCL "
                           "ignores the buffers of non-root ranks that registration would "
                           "concern)");
        return NULL;
    }
    unsigned flags = (graph ? WEFT_CALL_GRAPH : 0u) | (reg ? WEFT_CALL_REGISTERED : 0u);
    int added = 0;
    uint64_t *slot = weft_map_put(&r->secs, section_key(coll, ranks, gpn, mode, flags), &added);
    if (slot == NULL) {
        r->errors++;
        return NULL;
    }
    if (!added) {
        rd_err(r, "this section is already given at line %d", (int)(*slot >> 32));
        return NULL;
    }
    *slot = (uint64_t)(uint32_t)r->line << 32;
    weft_tune_section *s = weft_tune_add_section(t, (weft_coll)coll, ranks, mode, flags);
    if (s == NULL) {
        r->errors++;
    } else {
        s->gpn = gpn;
        s->line = r->line;
    }
    return s;
}

static void line_range(reader *r, weft_tune_table *t, weft_tune_section *s) {
    uint64_t lo, hi = WEFT_TUNE_INF;
    int choice;
    if (r->ntok != 4) {
        rd_err(r, "expected `range LO HI ALGORITHM|nccl` (HI may be inf)");
        return;
    }
    if (parse_u64(r->tok[1], &lo) != 0 ||
        (strcmp(r->tok[2], "inf") != 0 && parse_u64(r->tok[2], &hi) != 0)) {
        rd_err(r, "range: '%s %s' are not byte counts", r->tok[1], r->tok[2]);
        return;
    }
    if (parse_choice(r, t, r->tok[3], &choice) != 0) return;
    weft_tune_range *g = weft_tune_add_range(s, lo, hi, choice);
    if (g == NULL)
        r->errors++;
    else
        g->line = r->line;
}

static void line_at(reader *r, weft_tune_table *t, weft_tune_section *s) {
    uint64_t bytes;
    if (r->ntok < 2 || parse_u64(r->tok[1], &bytes) != 0) {
        rd_err(r, "expected `at BYTES rounds=N nccl=US ALGO=US/RATIO/LO/HI... choose=ALGO`");
        return;
    }
    weft_tune_row *row = weft_tune_add_row(s, bytes);
    if (row == NULL) {
        r->errors++;
        return;
    }
    row->line = r->line;
    int have_choose = 0, have_nccl = 0;
    for (int i = 2; i < r->ntok; i++) {
        char *eq = strchr(r->tok[i], '=');
        if (eq == NULL) {
            rd_err(r, "'%s': expected KEY=VALUE", r->tok[i]);
            continue;
        }
        *eq = '\0';
        const char *k = r->tok[i], *v = eq + 1;
        if (strcmp(k, "rounds") == 0) {
            if (parse_int(v, 1, 1 << 30, &row->rounds) != 0)
                rd_err(r, "rounds=%s is not a positive integer", v);
        } else if (strcmp(k, "nccl") == 0) {
            if (parse_double(v, &row->nccl_us) != 0) rd_err(r, "nccl=%s is not a time", v);
            have_nccl = 1;
        } else if (strcmp(k, "choose") == 0) {
            if (parse_choice(r, t, v, &row->choice) == 0) have_choose = 1;
        } else {
            int a = rd_find_id(r, t, k);
            if (a < 0) {
                rd_err(r, "'%s' is not an algorithm declared by an earlier `algo` line", k);
                continue;
            }
            weft_tune_meas *m = weft_tune_add_meas(row, a);
            if (m == NULL) {
                r->errors++;
                continue;
            }
            if (strcmp(v, "wrong") == 0) {
                m->status = WEFT_TUNE_WRONG;
            } else if (strcmp(v, "unsupported") == 0) {
                m->status = WEFT_TUNE_UNSUPPORTED;
            } else {
                char buf[128];
                snprintf(buf, sizeof buf, "%s", v);
                char *p[4], *save = NULL;
                int n = 0;
                for (char *x = strtok_r(buf, "/", &save); x && n < 4;
                     x = strtok_r(NULL, "/", &save))
                    p[n++] = x;
                if (n != 4 || parse_double(p[0], &m->us) != 0 ||
                    parse_double(p[1], &m->ratio) != 0 || parse_double(p[2], &m->lo) != 0 ||
                    parse_double(p[3], &m->hi) != 0)
                    rd_err(r, "%s=%s: expected US/RATIO/LO/HI, wrong or unsupported", k, v);
            }
        }
    }
    if (!have_choose || !have_nccl || row->rounds == 0)
        rd_err(r, "an `at` line needs rounds=, nccl= and choose=");
}

/* Checks every section against its algorithms; the reader's line numbers name the culprits. */
static void check_table(const weft_tune_table *t, const char *name, weft_diag *d, int *errors) {
#define CK_ERR(line, ...)                                                                          \
    do {                                                                                           \
        weft_diag_add(d, WEFT_SEV_ERROR, name, line, 0, __VA_ARGS__);                              \
        (*errors)++;                                                                               \
    } while (0)
    for (size_t i = 0; i < t->nsecs; i++) {
        const weft_tune_section *s = &t->secs[i];
        char what[96];
        weft_tune_section_str(s, what, sizeof what);
        if (s->nranges == 0) {
            CK_ERR(s->line, "section %s has no `range` lines", what);
            continue;
        }
        for (size_t j = 0; j < s->nranges; j++) {
            const weft_tune_range *g = &s->ranges[j];
            uint64_t want = j == 0 ? 0 : s->ranges[j - 1].hi + 1;
            if (j > 0 && s->ranges[j - 1].hi == WEFT_TUNE_INF) {
                CK_ERR(g->line, "range after one that has no upper end (inf)");
                break;
            }
            if (g->lo != want) {
                CK_ERR(g->line,
                       "range starts at %" PRIu64 " bytes; the ranges of a section must cover "
                       "every size from 0 in order, so this one must start at %" PRIu64,
                       g->lo, want);
                break;
            }
            if (g->hi < g->lo) {
                CK_ERR(g->line, "range ends (%" PRIu64 ") before it starts (%" PRIu64 ")", g->hi,
                       g->lo);
                break;
            }
            if (g->choice >= 0) {
                const weft_tune_algo *a = &t->algos[g->choice];
                if (a->ranks != s->ranks)
                    CK_ERR(g->line, "'%s' is an algorithm for %d ranks, in a %d-rank section",
                           a->id, a->ranks, s->ranks);
            }
        }
        if (s->ranges[s->nranges - 1].hi != WEFT_TUNE_INF)
            CK_ERR(s->ranges[s->nranges - 1].line,
                   "the last range of a section must end at inf (every size needs an answer)");
        for (size_t j = 1; j < s->nrows; j++)
            if (s->rows[j].bytes <= s->rows[j - 1].bytes)
                CK_ERR(s->rows[j].line, "`at` sizes must increase");
    }
#undef CK_ERR
}

weft_result weft_tune_validate(const weft_tune_table *t, weft_diag *d) {
    int errors = 0;
    check_table(t, t->path, d, &errors);
    return errors ? WEFT_ERR_INPUT : WEFT_OK;
}

weft_result weft_tune_read_string(const char *text, size_t len, const char *name,
                                  weft_tune_table **out, weft_diag *d) {
    weft_result res = WEFT_OK;
    weft_tune_table *t = NULL;
    char *line = NULL; /* the current line, a writable copy for tokenize */
    size_t capline = 0;
    reader r = {name ? name : "<table>", 0, d, 0, {0}, 0, {0}, {0}};
    weft_tune_section *cur = NULL;
    size_t noted = 0; /* 1 + the row of cur that comment lines now belong to (0: none) */
    int seen_header = 0;
    if (out == NULL || text == NULL) return WEFT_ERR_USAGE;
    *out = NULL;
    t = weft_tune_table_new();
    WEFT_CHECK_ALLOC(t);
    if (name && (t->path = weft_strdup(name)) == NULL) WEFT_FAIL(WEFT_ERR_NOMEM);
    if (memchr(text, '\0', len) != NULL) {
        weft_diag_add(d, WEFT_SEV_ERROR, r.name, 0, 0, "not a text file (it holds a NUL byte)");
        WEFT_FAIL(WEFT_ERR_INPUT);
    }
    for (size_t at = 0; at < len || (at == 0 && len == 0);) {
        /* one line at a time into a buffer as long as the longest line, not the whole text */
        const char *nl = memchr(text + at, '\n', len - at);
        size_t n = nl ? (size_t)(nl - (text + at)) : len - at;
        if (n + 1 > capline) {
            char *more = realloc(line, n + 1);
            WEFT_CHECK_ALLOC(more);
            line = more;
            capline = n + 1;
        }
        memcpy(line, text + at, n);
        line[n] = '\0';
        at += n + 1;
        r.line++;
        /* comment lines right after an `at` line are its note (weft tune's verification) */
        const char *c = line + strspn(line, " \t");
        if (*c == '#' && noted) {
            c += 1 + (c[1] == ' ');
            size_t n = strcspn(c, "\r");
            char *l = weft_asprintf("%.*s", (int)n, c);
            if (l == NULL || weft_tune_add_note(&cur->rows[noted - 1], l) != WEFT_OK) {
                free(l);
                WEFT_FAIL(WEFT_ERR_NOMEM);
            }
            free(l);
            continue;
        }
        noted = 0;
        if (tokenize(&r, line) != 0 || r.ntok == 0) continue;
        const char *kw = r.tok[0];
        if (!seen_header) {
            int v = 0;
            if (strcmp(kw, "weft-tune") != 0 || r.ntok != 2 || parse_int(r.tok[1], 1, 1000, &v)) {
                rd_err(&r,
                       "not a weft tuning table (the first line must be `weft-tune V`, V the "
                       "format version: 1 to %d)",
                       WEFT_TUNE_VERSION);
                WEFT_FAIL(WEFT_ERR_INPUT);
            }
            if (v > WEFT_TUNE_VERSION) {
                rd_err(&r,
                       "table format version %d; this weft reads versions 1 to %d (run weft tune "
                       "again)",
                       v, WEFT_TUNE_VERSION);
                WEFT_FAIL(WEFT_ERR_INPUT);
            }
            seen_header = 1;
        } else if (strcmp(kw, "machine") == 0) {
            if (t->nalgos || t->nsecs)
                rd_err(&r, "`machine` lines come before `algo` and `section` lines");
            else
                line_machine(&r, t);
        } else if (strcmp(kw, "run") == 0) {
            line_run(&r, t);
        } else if (strcmp(kw, "algo") == 0) {
            if (t->nsecs)
                rd_err(&r, "`algo` lines come before the sections");
            else
                line_algo(&r, t);
        } else if (strcmp(kw, "section") == 0) {
            cur = line_section(&r, t);
            if (cur == NULL) cur = weft_tune_add_section(t, WEFT_COLL_CUSTOM, 0, 0, 0);
            if (cur == NULL) WEFT_FAIL(WEFT_ERR_NOMEM);
        } else if (strcmp(kw, "range") == 0 || strcmp(kw, "at") == 0) {
            if (cur == NULL)
                rd_err(&r, "`%s` outside a section", kw);
            else if (kw[0] == 'r')
                line_range(&r, t, cur);
            else {
                size_t before = cur->nrows;
                line_at(&r, t, cur);
                if (cur->nrows > before) noted = cur->nrows;
            }
        } else {
            rd_err(&r, "unknown line '%s' (expected machine, run, algo, section, range or at)", kw);
        }
        if (weft_diag_count(d, WEFT_SEV_ERROR) >= 50) break;
    }
    if (!seen_header) {
        r.line = 0;
        rd_err(&r, "empty: not a weft tuning table");
    }
    /* sections that failed to parse were kept as placeholders so that their lines had a home */
    for (size_t i = 0; i < t->nsecs;) {
        if (t->secs[i].ranks == 0) {
            section_free(&t->secs[i]);
            memmove(&t->secs[i], &t->secs[i + 1], (t->nsecs - i - 1) * sizeof *t->secs);
            t->nsecs--;
        } else {
            i++;
        }
    }
    if (r.errors == 0) check_table(t, r.name, d, &r.errors);
    if (r.errors) WEFT_FAIL(WEFT_ERR_INPUT);
    *out = t;
    t = NULL;
fail:
    free(line);
    weft_map_free(&r.ids);
    weft_map_free(&r.secs);
    weft_tune_table_free(t);
    return res;
}

weft_result weft_tune_read_file(const char *path, weft_tune_table **out, weft_diag *d) {
    char *data = NULL;
    size_t len = 0;
    if (out) *out = NULL;
    weft_result res = weft_read_file_max(path, WEFT_TUNE_MAX_BYTES, 0, &data, &len, d);
    if (res != WEFT_OK) return res;
    res = weft_tune_read_string(data, len, path, out, d);
    free(data);
    return res;
}

/* ---- merging ----------------------------------------------------------------------------- */

weft_result weft_tune_merge(weft_tune_table *dst, const weft_tune_table *src, weft_diag *d) {
    weft_result res = WEFT_OK;
    char why[512];
    weft_machine a = dst->machine, b = src->machine;
    a.nrpn = b.nrpn = 0; /* ranks per node are merged, not compared */
    if (weft_machine_differs(&a, &b, why, sizeof why)) {
        weft_diag_add(d, WEFT_SEV_ERROR, src->path, src->machine_line, 0,
                      "cannot merge tables of different machines: %s", why);
        return WEFT_ERR_INPUT;
    }
    for (int i = 0; i < src->machine.nrpn; i++) {
        int v = src->machine.rpn[i], found = 0;
        for (int j = 0; j < dst->machine.nrpn; j++)
            found |= dst->machine.rpn[j] == v;
        if (!found && dst->machine.nrpn < (int)(sizeof dst->machine.rpn / sizeof(int)))
            dst->machine.rpn[dst->machine.nrpn++] = v;
    }
    for (size_t i = 0; i < src->nsecs; i++) {
        const weft_tune_section *s = &src->secs[i];
        if (weft_tune_find(dst, s->coll, s->ranks, s->gpn, s->inplace, s->flags)) continue;
        weft_tune_section *n = weft_tune_add_section(dst, s->coll, s->ranks, s->inplace, s->flags);
        WEFT_CHECK_ALLOC(n);
        n->gpn = s->gpn;
        /* algorithm indices of src -> dst, added on first use */
        int *map = malloc((src->nalgos ? src->nalgos : 1) * sizeof *map);
        WEFT_CHECK_ALLOC(map);
        for (size_t k = 0; k < src->nalgos; k++)
            map[k] = -2;
#define MAP(x)                                                                                     \
    ((x) < 0 ? -1                                                                                  \
             : (map[x] == -2                                                                       \
                    ? (map[x] = weft_tune_add_algo(dst, src->algos[x].file, src->algos[x].name,    \
                                                   src->algos[x].defines, src->algos[x].ranks,     \
                                                   src->algos[x].root, src->algos[x].hash))        \
                    : map[x]))
        for (size_t j = 0; j < s->nranges && res == WEFT_OK; j++) {
            int c = MAP(s->ranges[j].choice);
            if ((s->ranges[j].choice >= 0 && c < 0) ||
                !weft_tune_add_range(n, s->ranges[j].lo, s->ranges[j].hi, c))
                res = WEFT_ERR_NOMEM;
        }
        for (size_t j = 0; j < s->nrows && res == WEFT_OK; j++) {
            const weft_tune_row *r = &s->rows[j];
            weft_tune_row *q = weft_tune_add_row(n, r->bytes);
            if (q == NULL) {
                res = WEFT_ERR_NOMEM;
                break;
            }
            q->rounds = r->rounds;
            q->nccl_us = r->nccl_us;
            q->choice = MAP(r->choice);
            if (r->note && (q->note = weft_strdup(r->note)) == NULL) res = WEFT_ERR_NOMEM;
            for (size_t k = 0; k < r->nm && res == WEFT_OK; k++) {
                weft_tune_meas *m = weft_tune_add_meas(q, 0);
                if (m == NULL) {
                    res = WEFT_ERR_NOMEM;
                    break;
                }
                *m = r->m[k];
                m->algo = MAP(r->m[k].algo);
                if (m->algo < 0) res = WEFT_ERR_NOMEM;
            }
        }
#undef MAP
        free(map);
        if (res != WEFT_OK) goto fail;
    }
fail:
    return res;
}
