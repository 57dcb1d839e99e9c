/* proven.c — what this process has established about algorithms, remembered by their content:
 * that one is structurally valid (validate.c: weft_ir_is_valid), that one verifies with given
 * options (verify.c: weft_ir_verifies). The runtime plans the same algorithms for every
 * communicator and both call modes; each is checked once per process, however often asked. */
#include "stepgraph_internal.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

/* What may be remembered at most: schedules beyond this are checked again instead. */
#define PROVEN_MAX_WORDS ((size_t)32 << 20)

typedef struct fact {
    uint32_t *words; /* the content (what weft_algo_equal compares, plus the ids) and the key */
    size_t n;
    int result;
} fact;

static pthread_mutex_t proven_lock = PTHREAD_MUTEX_INITIALIZER;
static weft_map proven_index; /* hash of words -> fact index + 1 */
static fact *facts;
static size_t nfacts, capfacts, total_words;

typedef struct wbuf {
    uint32_t *w;
    size_t n, cap;
} wbuf;

static int put(wbuf *b, int64_t v) {
    if (weft_grow((void **)&b->w, &b->cap, b->n + 1, sizeof *b->w) != 0) return -1;
    b->w[b->n++] = (uint32_t)v;
    b->w[b->n++] = (uint32_t)((uint64_t)v >> 32);
    return 0;
}

/* The algorithm's content followed by what was asked (kind, options) as words; NULL when its
 * arrays are not walkable (validation says why) or it is too large to remember. */
static uint32_t *content(const weft_algo *a, const int64_t *key, int nkey, size_t *n) {
    wbuf b = {NULL, 0, 0};
    if (a == NULL || a->ngpus < 1 || a->ngpus > WEFT_IR_MAX_RANKS || a->gpus == NULL) return NULL;
    int ok = 1;
    for (int i = 0; i < nkey; i++)
        ok &= put(&b, key[i]) == 0;
    int64_t head[] = {a->proto,      a->coll,
                      a->nchannels,  a->nchunksperloop,
                      a->ngpus,      a->inplace,
                      a->outofplace, a->min_bytes,
                      a->max_bytes,  weft_coll_rooted(a->coll) ? a->root : 0};
    for (size_t i = 0; ok && i < sizeof head / sizeof *head; i++)
        ok &= put(&b, head[i]) == 0;
    for (int32_t r = 0; ok && r < a->ngpus; r++) {
        const weft_gpu *g = &a->gpus[r];
        ok = g->ntbs >= 0 && (g->ntbs == 0 || g->tbs != NULL);
        int64_t gw[] = {g->id, g->i_chunks, g->o_chunks, g->s_chunks, g->ntbs};
        for (size_t i = 0; ok && i < sizeof gw / sizeof *gw; i++)
            ok &= put(&b, gw[i]) == 0;
        for (int32_t t = 0; ok && t < g->ntbs; t++) {
            const weft_tb *tb = &g->tbs[t];
            ok = tb->nsteps >= 0 && (tb->nsteps == 0 || tb->steps != NULL) &&
                 b.n + 18 * (size_t)tb->nsteps < PROVEN_MAX_WORDS;
            int64_t tw[] = {tb->id, tb->send, tb->recv, tb->chan, tb->nsteps};
            for (size_t i = 0; ok && i < sizeof tw / sizeof *tw; i++)
                ok &= put(&b, tw[i]) == 0;
            for (int32_t s = 0; ok && s < tb->nsteps; s++) {
                const weft_step *st = &tb->steps[s];
                int64_t sw[] = {st->type, st->srcbuf, st->dstbuf, st->srcoff, st->dstoff,
                                st->cnt,  st->depid,  st->deps,   st->hasdep};
                for (size_t i = 0; ok && i < sizeof sw / sizeof *sw; i++)
                    ok &= put(&b, sw[i]) == 0;
            }
        }
    }
    if (!ok) {
        free(b.w);
        return NULL;
    }
    *n = b.n;
    return b.w;
}

/* The remembered result for what words say, or -1. Called with the lock held. */
static int recall(const uint32_t *w, size_t n, uint64_t h) {
    uint64_t *at = weft_map_get(&proven_index, h);
    if (at == NULL) return -1;
    const fact *f = &facts[*at - 1];
    return f->n == n && memcmp(f->words, w, n * sizeof *w) == 0 ? f->result : -1;
}

/* Remembers result for words (taking them), unless full or another fact shares the hash. */
static void remember(uint32_t *w, size_t n, uint64_t h, int result) {
    int added = 0;
    uint64_t *at = NULL;
    if (total_words + n <= PROVEN_MAX_WORDS &&
        weft_grow((void **)&facts, &capfacts, nfacts, sizeof *facts) == 0)
        at = weft_map_put(&proven_index, h, &added);
    if (at == NULL || !added) {
        free(w);
        return;
    }
    facts[nfacts] = (fact){w, n, result};
    *at = ++nfacts;
    total_words += n;
}

/* The answer remembered for (a, key[0..nkey)): 0 or 1, or -1 (f then keeps what weft_fact_keep
 * records it under; call weft_fact_keep in every case). */
int weft_fact_recall(weft_fact *f, const weft_algo *a, const int64_t *key, int nkey) {
    f->w = content(a, key, nkey, &f->n);
    if (f->w == NULL) return -1;
    f->h = weft_hash_bytes(f->w, f->n * sizeof *f->w);
    pthread_mutex_lock(&proven_lock);
    int r = recall(f->w, f->n, f->h);
    pthread_mutex_unlock(&proven_lock);
    return r;
}

void weft_fact_keep(weft_fact *f, int result) {
    if (f->w != NULL && result >= 0) {
        pthread_mutex_lock(&proven_lock);
        if (recall(f->w, f->n, f->h) < 0) {
            remember(f->w, f->n, f->h, result);
            f->w = NULL;
        }
        pthread_mutex_unlock(&proven_lock);
    }
    free(f->w);
    f->w = NULL;
}

int weft_proven_valid(const weft_algo *a) {
    weft_fact f;
    int r = weft_fact_recall(&f, a, (int64_t[]){WEFT_FACT_VALID}, 1);
    weft_fact_keep(&f, -1);
    return r == 1;
}

void weft_proven_set_valid(const weft_algo *a) {
    weft_fact f;
    int known = weft_fact_recall(&f, a, (int64_t[]){WEFT_FACT_VALID}, 1);
    weft_fact_keep(&f, known < 0 ? 1 : -1);
}
