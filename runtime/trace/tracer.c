/* tracer.c — recording one rank's trace: a bounded device arena carved into one region per
 * traced launch, collected into the model and appended to the rank's file when it fills, on
 * flush and at close (or at process exit); clock samples at open and at each collection. Device
 * access goes through weft_tracer_backend (CUDA in the runtime, host memory in tests). */
#include "trace_internal.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define REGION_ALIGN 256

typedef struct pending {
    weft_trace_callinfo ci; /* algo is a copy owned here */
    size_t off;             /* region in the arena */
    uint32_t cap;
    void *stream;
} pending;

struct weft_tracer {
    weft_tracer_backend be;
    char *path;
    int rank;
    weft_trace_writer *w;
    weft_trace_clock clk;
    weft_trace model;
    char *arena; /* device */
    size_t size, used;
    char *host; /* host copy of [0, used) */
    pending *pend;
    size_t npend, cap_pend;
    int64_t untraced;
    int failed; /* a collection failed: record nothing more */
    int closed; /* completed at process exit: the owner's close only frees */
    weft_tracer *next;
};

/* ---- the process's open tracers (unique paths, closed at exit) ---------------------------- */
static pthread_mutex_t open_lock = PTHREAD_MUTEX_INITIALIZER;
static weft_tracer *open_list;
static pthread_once_t exit_once = PTHREAD_ONCE_INIT;

/* Completes every file still open. The tracers stay allocated (their owners may still hold
 * them, and may close them later from their own exit handlers); nothing is recorded after. */
static void close_all_at_exit(void) {
    pthread_mutex_lock(&open_lock);
    weft_tracer *list = open_list;
    open_list = NULL;
    pthread_mutex_unlock(&open_lock);
    for (weft_tracer *t = list; t; t = t->next) {
        weft_result r = t->failed ? WEFT_OK : weft_tracer_flush(t);
        weft_result r2 = weft_trace_writer_close(t->w);
        t->w = NULL;
        t->closed = t->failed = 1;
        if (r != WEFT_OK || r2 != WEFT_OK)
            WEFT_WARN("weft: the trace %s could not be completed at exit", t->path);
    }
}

static void register_exit(void) {
    atexit(close_all_at_exit);
}

static int path_in_use(const char *p) {
    for (weft_tracer *t = open_list; t; t = t->next)
        if (strcmp(t->path, p) == 0) return 1;
    return 0;
}

/* ---- paths -------------------------------------------------------------------------------- */
static int ends_with(const char *s, const char *suf) {
    size_t n = strlen(s), m = strlen(suf);
    return n >= m && strcmp(s + n - m, suf) == 0;
}

/* The pattern with %r %p %h %% expanded; ".rank<R>" added when there is no %r; ".<n>" (n > 1)
 * before the extension. */
static char *expand(const char *pat, int rank, int n) {
    char host[256] = "host";
    gethostname(host, sizeof host - 1);
    host[sizeof host - 1] = '\0';
    /* Each pattern character expands to at most the host name or a number. */
    size_t cap = (strlen(pat) + 1) * (strlen(host) + 24) + 64, k = 0;
    char *o = malloc(cap);
    if (o == NULL) return NULL;
    int have_r = 0;
    for (const char *p = pat; *p; p++) {
        if (*p != '%' || p[1] == '\0') {
            o[k++] = *p;
            continue;
        }
        switch (*++p) {
        case 'r': k += (size_t)snprintf(o + k, cap - k, "%d", rank), have_r = 1; break;
        case 'p': k += (size_t)snprintf(o + k, cap - k, "%ld", (long)getpid()); break;
        case 'h': k += (size_t)snprintf(o + k, cap - k, "%s", host); break;
        case '%': o[k++] = '%'; break;
        default:
            o[k++] = '%';
            o[k++] = *p;
            break;
        }
    }
    o[k] = '\0';
    int json = ends_with(o, ".json");
    if (json) o[k -= 5] = '\0';
    if (!have_r) k += (size_t)snprintf(o + k, cap - k, ".rank%d", rank);
    if (n > 1) k += (size_t)snprintf(o + k, cap - k, ".%d", n);
    snprintf(o + k, cap - k, ".json");
    return o;
}

weft_result weft_tracer_open(const char *pattern, int rank, const weft_tracer_backend *be,
                             size_t arena_bytes, weft_tracer **out, weft_diag *d) {
    weft_result res = WEFT_OK;
    *out = NULL;
    if (pattern == NULL || *pattern == '\0' || be == NULL || rank < 0) return WEFT_ERR_USAGE;
    pthread_once(&exit_once, register_exit);
    weft_tracer *t = calloc(1, sizeof *t);
    WEFT_CHECK_ALLOC(t);
    t->be = *be;
    t->rank = rank;
    t->size = arena_bytes ? arena_bytes : WEFT_TRACE_DEFAULT_ARENA;
    weft_trace_init(&t->model, weft_trace_host_now());
    pthread_mutex_lock(&open_lock);
    for (int n = 1; t->path == NULL && n < 1000; n++) {
        char *p = expand(pattern, rank, n);
        if (p == NULL || !path_in_use(p))
            t->path = p;
        else
            free(p);
    }
    if (t->path) {
        /* Listed at once (path reserved); unlisted again below on failure. */
        t->next = open_list;
        open_list = t;
    }
    pthread_mutex_unlock(&open_lock);
    WEFT_CHECK_ALLOC(t->path);
    t->arena = t->be.alloc(t->be.ctx, t->size);
    if (t->arena == NULL) {
        weft_diag_add(d, WEFT_SEV_ERROR, t->path, 0, 0,
                      "trace: no device memory for the %zu-byte trace buffer", t->size);
        WEFT_FAIL(WEFT_ERR_NOMEM);
    }
    WEFT_CHECK(weft_trace_writer_open(t->path, t->model.time_base_ns, &t->w, d));
    int64_t h, e;
    uint64_t g;
    if (t->be.clock && t->be.clock(t->be.ctx, &h, &g, &e) == 0)
        WEFT_CHECK(weft_trace_clock_add(&t->clk, h, g, e));
    *out = t;
    return WEFT_OK;
fail:
    if (t) {
        pthread_mutex_lock(&open_lock);
        for (weft_tracer **pp = &open_list; *pp; pp = &(*pp)->next)
            if (*pp == t) {
                *pp = t->next;
                break;
            }
        pthread_mutex_unlock(&open_lock);
        if (t->w) weft_trace_writer_close(t->w);
        if (t->arena) t->be.free(t->be.ctx, t->arena);
        if (t->be.release) t->be.release(t->be.ctx);
        weft_trace_free(&t->model);
        free(t->path);
        free(t);
    }
    return res;
}

const char *weft_tracer_path(const weft_tracer *t) {
    return t ? t->path : NULL;
}

int64_t weft_tracer_untraced(const weft_tracer *t) {
    return t ? t->untraced : 0;
}

/* ---- collecting ---------------------------------------------------------------------------- */
static size_t region_bytes(int32_t ntbs, uint32_t cap) {
    return (size_t)ntbs * sizeof(weft_trace_tbhdr) + (size_t)ntbs * cap * sizeof(weft_trace_rec);
}

weft_result weft_tracer_flush(weft_tracer *t) {
    weft_result res = WEFT_OK;
    if (t == NULL || t->npend == 0) return WEFT_OK;
    weft_diag *d = weft_diag_new();
    /* Wait for every stream with a pending call (each once). */
    for (size_t i = 0; i < t->npend && res == WEFT_OK; i++) {
        size_t j = 0;
        while (j < i && t->pend[j].stream != t->pend[i].stream)
            j++;
        if (j == i && t->be.sync(t->be.ctx, t->pend[i].stream) != 0) res = WEFT_ERR_CUDA;
    }
    if (res == WEFT_OK) {
        char *h = realloc(t->host, t->used ? t->used : 1);
        if (h == NULL)
            res = WEFT_ERR_NOMEM;
        else {
            t->host = h;
            if (t->be.to_host(t->be.ctx, t->host, t->arena, t->used) != 0) res = WEFT_ERR_CUDA;
        }
    }
    int64_t hn, e;
    uint64_t g;
    if (res == WEFT_OK && t->be.clock && t->be.clock(t->be.ctx, &hn, &g, &e) == 0)
        res = weft_trace_clock_add(&t->clk, hn, g, e);
    for (size_t i = 0; i < t->npend && res == WEFT_OK; i++) {
        const pending *p = &t->pend[i];
        const weft_trace_tbhdr *hdr = (const weft_trace_tbhdr *)(void *)(t->host + p->off);
        const weft_trace_rec *rec =
            (const weft_trace_rec *)(void *)(t->host + p->off +
                                             (size_t)p->ci.ntbs * sizeof(weft_trace_tbhdr));
        res = weft_trace_add_call(&t->model, &p->ci, hdr, rec, p->cap, &t->clk, d);
    }
    if (res == WEFT_OK) res = weft_trace_sort(&t->model);
    if (res == WEFT_OK) res = weft_trace_writer_append(t->w, &t->model);
    for (size_t i = 0; i < weft_diag_size(d); i++) {
        char *m = weft_diag_format(weft_diag_get(d, i));
        if (m) WEFT_WARN("weft: %s: %s", t->path, m);
        free(m);
    }
    if (res != WEFT_OK) {
        WEFT_WARN("weft: trace %s: collecting %zu calls failed (%s); recording stops", t->path,
                  t->npend, weft_result_str(res));
        t->failed = 1;
    }
    weft_trace_clear(&t->model);
    for (size_t i = 0; i < t->npend; i++)
        free((void *)t->pend[i].ci.algo);
    t->npend = 0;
    t->used = 0;
    weft_diag_free(d);
    return res;
}

weft_result weft_tracer_launch(weft_tracer *t, const weft_trace_callinfo *ci, void *stream,
                               weft_trace_dev *dev) {
    memset(dev, 0, sizeof *dev);
    if (t == NULL || t->failed) return WEFT_OK;
    if (ci == NULL || ci->ntbs <= 0 || ci->niter < 0) return WEFT_ERR_USAGE;
    if (t->be.capturing && t->be.capturing(t->be.ctx, stream)) {
        if (t->untraced++ == 0)
            WEFT_INFO(WEFT_SUBSYS_PROFILE,
                      "weft: trace %s: calls captured in a CUDA graph are not traced", t->path);
        return WEFT_OK;
    }
    /* Every tb gets room for the most step executions any tb of the call makes. */
    uint64_t cap = 1;
    for (int32_t b = 0; b < ci->ntbs; b++) {
        uint64_t n = (uint64_t)ci->tbs[b].nsteps * (uint64_t)ci->niter;
        if (n > cap) cap = n;
    }
    size_t hdrs = (size_t)ci->ntbs * sizeof(weft_trace_tbhdr);
    if (hdrs >= t->size) {
        t->untraced++;
        return WEFT_OK;
    }
    /* A call larger than the whole arena keeps the first executions of each tb. */
    uint64_t fit = (t->size - hdrs) / ((size_t)ci->ntbs * sizeof(weft_trace_rec));
    if (cap > fit) cap = fit;
    if (cap > UINT32_MAX) cap = UINT32_MAX;
    if (cap == 0) {
        t->untraced++;
        return WEFT_OK;
    }
    size_t need = region_bytes(ci->ntbs, (uint32_t)cap);
    size_t off = (t->used + REGION_ALIGN - 1) & ~(size_t)(REGION_ALIGN - 1);
    if (off + need > t->size) {
        weft_result r = weft_tracer_flush(t);
        if (r != WEFT_OK) return WEFT_OK; /* reported; this call runs untraced */
        off = 0;
    }
    if (weft_grow((void **)&t->pend, &t->cap_pend, t->npend, sizeof *t->pend) != 0)
        return WEFT_ERR_NOMEM;
    char *algo = weft_strdup(ci->algo ? ci->algo : "?");
    if (algo == NULL) return WEFT_ERR_NOMEM;
    pending *p = &t->pend[t->npend++];
    p->ci = *ci;
    p->ci.algo = algo;
    p->off = off;
    p->cap = (uint32_t)cap;
    p->stream = stream;
    t->used = off + need;
    dev->hdr = (weft_trace_tbhdr *)(void *)(t->arena + off);
    dev->rec = (weft_trace_rec *)(void *)(t->arena + off + hdrs);
    dev->cap = (uint32_t)cap;
    return WEFT_OK;
}

void weft_tracer_cancel(weft_tracer *t) {
    if (t == NULL || t->npend == 0) return;
    pending *p = &t->pend[--t->npend];
    free((void *)p->ci.algo);
    t->used = p->off;
}

weft_result weft_tracer_close(weft_tracer *t) {
    if (t == NULL) return WEFT_OK;
    if (t->closed) { /* completed at exit (freeing device memory after the CUDA runtime's own
                      * teardown only returns an error) */
        t->be.free(t->be.ctx, t->arena);
        if (t->be.release) t->be.release(t->be.ctx);
        for (size_t i = 0; i < t->npend; i++)
            free((void *)t->pend[i].ci.algo);
        weft_trace_clock_free(&t->clk);
        weft_trace_free(&t->model);
        free(t->pend);
        free(t->host);
        free(t->path);
        free(t);
        return WEFT_OK;
    }
    pthread_mutex_lock(&open_lock);
    for (weft_tracer **pp = &open_list; *pp; pp = &(*pp)->next)
        if (*pp == t) {
            *pp = t->next;
            break;
        }
    pthread_mutex_unlock(&open_lock);
    weft_result res = t->failed ? WEFT_OK : weft_tracer_flush(t);
    weft_result r2 = weft_trace_writer_close(t->w);
    if (res == WEFT_OK) res = r2;
    if (res == WEFT_OK && t->untraced)
        WEFT_INFO(WEFT_SUBSYS_PROFILE, "weft: trace %s: %lld calls were not traced", t->path,
                  (long long)t->untraced);
    t->be.free(t->be.ctx, t->arena);
    if (t->be.release) t->be.release(t->be.ctx);
    weft_trace_clock_free(&t->clk);
    weft_trace_free(&t->model);
    for (size_t i = 0; i < t->npend; i++)
        free((void *)t->pend[i].ci.algo);
    free(t->pend);
    free(t->host);
    free(t->path);
    free(t);
    return res;
}
