/* ir.c — IR tables and names, construction, copying and comparison. */
#include "weft_ir.h"

#include <stdlib.h>
#include <string.h>

/* ---- names: one array per X-macro table ------------------------------------------------- */
static const char *const coll_names[] = {WEFT_COLLS(WEFT_X_COL2)};
static const char *const proto_names[] = {WEFT_PROTOS(WEFT_X_COL2)};
static const char *const launch_names[] = {
#define WEFT_X_(id, n, g, r) n,
    WEFT_LAUNCHES(WEFT_X_)
#undef WEFT_X_
};

const char *weft_launch_name(weft_launch l) {
    return weft_name_of(launch_names, WEFT_LAUNCH_COUNT, l);
}
int weft_launch_from_name(const char *name) {
    return weft_name_find(launch_names, WEFT_LAUNCH_COUNT, name, 0);
}
const char *weft_launch_mask_str(unsigned mask, char *buf, size_t len) {
    size_t at = 0;
    if (len) buf[0] = '\0';
    for (int l = 0; l < WEFT_LAUNCH_COUNT; l++)
        if (mask & (1u << l) && at < len) {
            int n = snprintf(buf + at, len - at, "%s%s", at ? " " : "", launch_names[l]);
            at += n > 0 ? (size_t)n : 0;
        }
    return buf;
}
static const char *const step_names[] = {WEFT_STEP_TYPES(WEFT_X_COL2)};
static const char *const buf_names[] = {WEFT_BUFS(WEFT_X_COL3)};
static const char buf_codes[] = {WEFT_BUFS(WEFT_X_COL2)};
static const char *const dtype_names[] = {WEFT_DTYPES(WEFT_X_COL2)};
static const char *const redop_names[] = {WEFT_REDOPS(WEFT_X_COL2)};

const char *weft_coll_name(weft_coll c) {
    return weft_name_of(coll_names, WEFT_COLL_COUNT, c);
}
int weft_coll_from_name(const char *name) {
    if (strcmp(name, "reduce_scatter") == 0) return WEFT_COLL_REDUCESCATTER;
    return weft_name_find(coll_names, WEFT_COLL_COUNT, name, 0);
}
const char *weft_proto_name(weft_proto p) {
    return weft_name_of(proto_names, WEFT_PROTO_COUNT, p);
}
int weft_proto_from_name(const char *name) {
    return weft_name_find(proto_names, WEFT_PROTO_COUNT, name, 0);
}
const char *weft_step_name(weft_step_type t) {
    return weft_name_of(step_names, WEFT_STEP_COUNT, t);
}
int weft_step_from_name(const char *name) {
    return weft_name_find(step_names, WEFT_STEP_COUNT, name, 0);
}
const char *weft_buf_name(weft_buf b) {
    return weft_name_of(buf_names, WEFT_BUF_COUNT, b);
}
char weft_buf_code(weft_buf b) {
    return (unsigned)b < WEFT_BUF_COUNT ? buf_codes[b] : '?';
}
int weft_buf_from_code(char c) {
    const char *p = c ? memchr(buf_codes, c, sizeof buf_codes) : NULL;
    return p ? (int)(p - buf_codes) : -1;
}
const char *weft_dtype_name(weft_dtype t) {
    return weft_name_of(dtype_names, WEFT_DTYPE_COUNT, t);
}
/* Case-insensitive, with the spellings people use for the same types. */
int weft_dtype_from_name(const char *name) {
    static const char *const aliases[] = {"char", "int",     "float16", "fp16", "float32",
                                          "fp32", "float64", "fp64",    "bf16"};
    static const weft_dtype alias_of[] = {
        WEFT_DTYPE_INT8,   WEFT_DTYPE_INT32,  WEFT_DTYPE_HALF,
        WEFT_DTYPE_HALF,   WEFT_DTYPE_FLOAT,  WEFT_DTYPE_FLOAT,
        WEFT_DTYPE_DOUBLE, WEFT_DTYPE_DOUBLE, WEFT_DTYPE_BFLOAT16};
    int t = weft_name_find(dtype_names, WEFT_DTYPE_COUNT, name, 1);
    int k = t < 0 ? weft_name_find(aliases, (int)(sizeof aliases / sizeof *aliases), name, 1) : -1;
    return t >= 0 ? t : k >= 0 ? (int)alias_of[k] : -1;
}
const char *weft_redop_name(weft_redop op) {
    return weft_name_of(redop_names, WEFT_OP_COUNT, op);
}
int weft_redop_from_name(const char *name) {
    return weft_name_find(redop_names, WEFT_OP_COUNT, name, 1);
}

int32_t weft_algo_size_mult(const weft_algo *a) {
    return weft_coll_large(a->coll, WEFT_BUF_INPUT) || weft_coll_large(a->coll, WEFT_BUF_OUTPUT)
               ? a->ngpus
               : 1;
}

int32_t weft_algo_chunks_per_seg(const weft_algo *a) {
    int32_t m = weft_algo_size_mult(a);
    return m > 0 ? a->nchunksperloop / m : 0;
}

int64_t weft_algo_nsteps(const weft_algo *a) {
    int64_t n = 0;
    for (int32_t r = 0; r < a->ngpus; r++)
        for (int32_t t = 0; t < a->gpus[r].ntbs; t++)
            n += a->gpus[r].tbs[t].nsteps;
    return n;
}

int32_t weft_algo_msg_chunks(const weft_algo *a) {
    int32_t m = 1;
    for (int32_t r = 0; r < a->ngpus; r++)
        for (int32_t t = 0; t < a->gpus[r].ntbs; t++)
            for (int32_t s = 0; s < a->gpus[r].tbs[t].nsteps; s++) {
                const weft_step *st = &a->gpus[r].tbs[t].steps[s];
                if ((weft_step_flags(st->type) & (WEFT_STEP_F_SEND | WEFT_STEP_F_RECV)) &&
                    st->cnt > m)
                    m = st->cnt;
            }
    return m;
}

weft_algo *weft_algo_new(const char *name, weft_coll coll, int32_t ngpus, int32_t nchunksperloop) {
    if (ngpus < 0) return NULL;
    weft_algo *a = calloc(1, sizeof *a);
    if (a == NULL) return NULL;
    *a = (weft_algo){.name = weft_strdup(name ? name : ""),
                     .proto = WEFT_PROTO_SIMPLE,
                     .coll = coll,
                     .nchunksperloop = nchunksperloop,
                     .ngpus = ngpus,
                     .outofplace = 1,
                     .launch = WEFT_LAUNCH_ALL,
                     .gpus = calloc(ngpus > 0 ? (size_t)ngpus : 1, sizeof *a->gpus)};
    if (a->name == NULL || a->gpus == NULL) {
        weft_algo_free(a);
        return NULL;
    }
    for (int32_t r = 0; r < ngpus; r++)
        a->gpus[r].id = r;
    return a;
}

static void gpu_free(weft_gpu *g) {
    for (int32_t t = 0; t < g->ntbs; t++)
        free(g->tbs[t].steps);
    free(g->tbs);
}

void weft_algo_free(weft_algo *a) {
    if (a == NULL) return;
    if (a->gpus)
        for (int32_t r = 0; r < a->ngpus; r++)
            gpu_free(&a->gpus[r]);
    free(a->gpus);
    free(a->name);
    free(a->file);
    free(a);
}

weft_tb *weft_gpu_add_tb(weft_gpu *g, int32_t send, int32_t recv, int32_t chan) {
    size_t cap = (size_t)g->cap;
    if (weft_grow((void **)&g->tbs, &cap, (size_t)g->ntbs, sizeof *g->tbs) != 0) return NULL;
    g->cap = (int32_t)cap;
    weft_tb *tb = &g->tbs[g->ntbs];
    memset(tb, 0, sizeof *tb);
    tb->id = g->ntbs++;
    tb->send = send;
    tb->recv = recv;
    tb->chan = chan;
    return tb;
}

int32_t weft_tb_add_step(weft_tb *tb, const weft_step *s) {
    size_t cap = (size_t)tb->cap;
    if (weft_grow((void **)&tb->steps, &cap, (size_t)tb->nsteps, sizeof *tb->steps) != 0) return -1;
    tb->cap = (int32_t)cap;
    tb->steps[tb->nsteps] = *s;
    return tb->nsteps++;
}

weft_algo *weft_algo_clone(const weft_algo *a) {
    weft_algo *c = weft_algo_new(a->name, a->coll, a->ngpus, a->nchunksperloop);
    if (c == NULL) return NULL;
    weft_gpu *saved = c->gpus;
    char *saved_name = c->name;
    *c = *a;
    c->gpus = saved;
    c->name = saved_name;
    c->file = a->file ? weft_strdup(a->file) : NULL;
    if (a->file && c->file == NULL) goto fail;
    for (int32_t r = 0; r < a->ngpus; r++) {
        const weft_gpu *g = &a->gpus[r];
        weft_gpu *h = &c->gpus[r];
        *h = *g;
        h->tbs = NULL;
        h->ntbs = h->cap = 0;
        for (int32_t t = 0; t < g->ntbs; t++) {
            const weft_tb *tb = &g->tbs[t];
            weft_tb *u = weft_gpu_add_tb(h, tb->send, tb->recv, tb->chan);
            if (u == NULL) goto fail;
            u->id = tb->id;
            u->line = tb->line;
            for (int32_t s = 0; s < tb->nsteps; s++)
                if (weft_tb_add_step(u, &tb->steps[s]) < 0) goto fail;
        }
    }
    return c;
fail:
    weft_algo_free(c);
    return NULL;
}

#define DIFF(...)                                                                                  \
    do {                                                                                           \
        if (why) snprintf(why, whylen, __VA_ARGS__);                                               \
        return 0;                                                                                  \
    } while (0)

int weft_algo_equal(const weft_algo *a, const weft_algo *b, char *why, size_t whylen) {
    if (a->proto != b->proto) DIFF("proto differs");
    if (a->coll != b->coll) DIFF("coll differs");
    if (a->nchannels != b->nchannels) DIFF("nchannels differs");
    if (a->nchunksperloop != b->nchunksperloop) DIFF("nchunksperloop differs");
    if (a->ngpus != b->ngpus) DIFF("ngpus differs");
    if (a->inplace != b->inplace || a->outofplace != b->outofplace) DIFF("buffer modes differ");
    if (a->min_bytes != b->min_bytes || a->max_bytes != b->max_bytes ||
        a->graph_max_bytes != b->graph_max_bytes)
        DIFF("size range differs");
    if (weft_coll_rooted(a->coll) && a->root != b->root) DIFF("root differs");
    if (a->launch != b->launch) DIFF("launch modes differ");
    for (int32_t r = 0; r < a->ngpus; r++) {
        const weft_gpu *g = &a->gpus[r], *h = &b->gpus[r];
        if (g->i_chunks != h->i_chunks || g->o_chunks != h->o_chunks || g->s_chunks != h->s_chunks)
            DIFF("gpu %d: chunk counts differ", r);
        if (g->ntbs != h->ntbs) DIFF("gpu %d: tb count differs", r);
        for (int32_t t = 0; t < g->ntbs; t++) {
            const weft_tb *x = &g->tbs[t], *y = &h->tbs[t];
            if (x->send != y->send || x->recv != y->recv || x->chan != y->chan)
                DIFF("gpu %d tb %d: send/recv/chan differ", r, t);
            if (x->nsteps != y->nsteps) DIFF("gpu %d tb %d: step count differs", r, t);
            for (int32_t s = 0; s < x->nsteps; s++) {
                const weft_step *p = &x->steps[s], *q = &y->steps[s];
                if (p->type != q->type || p->srcbuf != q->srcbuf || p->dstbuf != q->dstbuf ||
                    p->srcoff != q->srcoff || p->dstoff != q->dstoff || p->cnt != q->cnt ||
                    p->depid != q->depid || p->deps != q->deps || p->hasdep != q->hasdep)
                    DIFF("gpu %d tb %d step %d differs", r, t, s);
            }
        }
    }
    return 1;
}
