/* layout.c — the window layout every rank shares: the connection keys of the prepared plans,
 * the offsets of FIFOs, counters, arrival and direct-transfer words, their start values, and each
 * rank's connection ends. Pure host code, tested without a GPU. */
#include "runtime_internal.h"

#include <stdlib.h>
#include <string.h>

weft_result weft_layout_init(weft_layout *l, int32_t nranks, int32_t nalgos) {
    memset(l, 0, sizeof *l);
    l->nranks = nranks;
    l->nalgos = nalgos;
    l->dflag_off = calloc(nalgos > 0 ? (size_t)nalgos : 1, sizeof *l->dflag_off);
    l->dflag_tbs = calloc(nalgos > 0 ? (size_t)nalgos : 1, sizeof *l->dflag_tbs);
    return l->dflag_off && l->dflag_tbs ? WEFT_OK : WEFT_ERR_NOMEM;
}

void weft_layout_free(weft_layout *l) {
    free(l->keys);
    free(l->members);
    free(l->tail_off);
    free(l->head_off);
    free(l->slot_off);
    free(l->pos_off);
    free(l->dflag_off);
    free(l->dflag_tbs);
    memset(l, 0, sizeof *l);
}

static int key_cmp(const void *x, const void *y) {
    const weft_rt_key *a = x, *b = y;
    return weft_cmp_keys((int64_t[]){a->proto, a->d, a->chan}, (int64_t[]){b->proto, b->d, b->chan},
                         3);
}

int32_t weft_layout_find(const weft_layout *l, int32_t d, int32_t chan, int32_t proto) {
    weft_rt_key k = {d, chan, proto};
    for (int32_t i = 0; i < l->nkeys; i++) /* sorted only once finished */
        if (key_cmp(&l->keys[i], &k) == 0) return i;
    return -1;
}

static weft_result layout_add_key(weft_layout *l, weft_rt_key k, int32_t members) {
    int32_t i = weft_layout_find(l, k.d, k.chan, k.proto);
    if (i >= 0) {
        if (l->members[i] < members) l->members[i] = members;
        return WEFT_OK;
    }
    weft_rt_key *n = realloc(l->keys, ((size_t)l->nkeys + 1) * sizeof *n);
    if (n == NULL) return WEFT_ERR_NOMEM;
    l->keys = n;
    int32_t *m = realloc(l->members, ((size_t)l->nkeys + 1) * sizeof *m);
    if (m == NULL) return WEFT_ERR_NOMEM;
    l->members = m;
    l->keys[l->nkeys] = k;
    l->members[l->nkeys++] = members;
    return WEFT_OK;
}

weft_result weft_layout_add(weft_layout *l, int32_t ai, const weft_algo_plan *p) {
    weft_result res = WEFT_OK;
    const weft_algo *a = p->algo;
    int32_t pr = p->proto, n = l->nranks;
    if (ai >= 0 && ai < l->nalgos && (p->mode[0].direct || p->mode[1].direct))
        l->dflag_tbs[ai] = p->maxtbs * p->kmax;
    if (p->mode[0].hop || p->mode[1].hop) l->hop_off = 1; /* placed by weft_layout_finish */
    for (int32_t r = 0; r < a->ngpus && r < n; r++)
        for (int32_t t = 0; t < a->gpus[r].ntbs; t++) {
            const weft_tb *tb = &a->gpus[r].tbs[t];
            if (tb->send >= 0)
                WEFT_CHECK(layout_add_key(
                    l, (weft_rt_key){weft_rt_mod(tb->send - r, n), tb->chan, pr}, p->kmax));
            if (tb->recv >= 0)
                WEFT_CHECK(layout_add_key(
                    l, (weft_rt_key){weft_rt_mod(r - tb->recv, n), tb->chan, pr}, p->kmax));
        }
fail:
    return res;
}

static size_t round_up(size_t x, size_t a) {
    return (x + a - 1) / a * a;
}

weft_result weft_layout_finish(weft_layout *l, const weft_rt_cfg *cfg) {
    weft_result res = WEFT_OK;
    size_t n = (size_t)l->nkeys;
    if (n) {
        /* sort keys and their member counts together */
        for (size_t i = 1; i < n; i++)
            for (size_t j = i; j > 0 && key_cmp(&l->keys[j], &l->keys[j - 1]) < 0; j--) {
                weft_rt_key k = l->keys[j];
                l->keys[j] = l->keys[j - 1], l->keys[j - 1] = k;
                int32_t m = l->members[j];
                l->members[j] = l->members[j - 1], l->members[j - 1] = m;
            }
    }
    free(l->tail_off), free(l->head_off), free(l->slot_off), free(l->pos_off);
    l->tail_off = calloc(n ? n : 1, sizeof(size_t));
    l->head_off = calloc(n ? n : 1, sizeof(size_t));
    l->slot_off = calloc(n ? n : 1, sizeof(size_t));
    l->pos_off = calloc(n ? n : 1, sizeof(size_t));
    WEFT_CHECK_ALLOC(l->tail_off);
    WEFT_CHECK_ALLOC(l->head_off);
    WEFT_CHECK_ALLOC(l->slot_off);
    WEFT_CHECK_ALLOC(l->pos_off);
    size_t off = round_up(WEFT_RT_ARRIVAL_OFF(l->nalgos > 0 ? l->nalgos : 1), 4096), pw = 0;
    for (size_t i = 0; i < n; i++) {
        size_t m = (size_t)l->members[i];
        l->tail_off[i] = off, off += m * WEFT_RT_LINE;
        l->head_off[i] = off, off += m * WEFT_RT_LINE;
        l->pos_off[i] = pw, pw += 4 * m; /* send end: m x {pos, credit}; receive end: m x 2 */
    }
    for (int32_t ai = 0; ai < l->nalgos; ai++) {
        if (l->dflag_tbs[ai] == 0) continue;
        off = round_up(off, 4096);
        l->dflag_off[ai] = off;
        off += 2 * (size_t)l->dflag_tbs[ai] * WEFT_RT_DLINE;
    }
    off = round_up(off, 4096);
    for (size_t i = 0; i < n; i++) {
        int32_t p = l->keys[i].proto;
        l->slot_off[i] = off;
        size_t ms = round_up((size_t)cfg->nslots[p] * (size_t)cfg->slot_bytes[p], 4096);
        off += (size_t)l->members[i] * ms;
    }
    if (l->hop_off) {
        off = round_up(off, 4096);
        l->hop_off = off;
        off += weft_hop_area_bytes(l->nranks);
    }
    l->pos_words = pw ? pw : 1;
    l->bytes = off;
fail:
    return res;
}

void weft_layout_start(const weft_layout *l, const weft_rt_cfg *cfg, uint64_t *pos,
                       void (*put)(void *ctx, size_t off, uint64_t v), void *ctx) {
    for (size_t w = 0; w < l->pos_words; w++)
        pos[w] = cfg->start_msgs;
    for (int32_t i = 0; i < l->nkeys; i++)
        for (int32_t g = 0; g < l->members[i]; g++) {
            put(ctx, l->head_off[i] + (size_t)g * WEFT_RT_LINE, cfg->start_msgs);
            put(ctx, l->tail_off[i] + (size_t)g * WEFT_RT_LINE, cfg->start_msgs);
        }
    weft_hop_start(l, cfg, put, ctx);
    for (int32_t ai = 0; ai < l->nalgos; ai++) {
        put(ctx, WEFT_RT_ARRIVAL_OFF(ai), cfg->start_calls);
        /* the previous call's epoch, no message yet (interp.h: tag | count) */
        for (int32_t w = 0; l->dflag_off[ai] && w < 2 * l->dflag_tbs[ai]; w++)
            put(ctx, l->dflag_off[ai] + (size_t)w * WEFT_RT_DLINE, cfg->start_calls << 32);
    }
}

/* One end of key i's connection: its FIFO and tail in the receiver's window rx, its head (the
 * credit) in the sender's window tx, its counters at pos, and the rank it talks to. */
static weft_dconn conn_end(const weft_layout *l, const weft_rt_cfg *cfg, int32_t i, char *rx,
                           char *tx, uint64_t *pos, int32_t peer) {
    const weft_rt_key *k = &l->keys[i];
    const int32_t p = k->proto;
    weft_dconn e;
    memset(&e, 0, sizeof e);
    e.slots = rx + l->slot_off[i];
    e.tail = (uint64_t *)(void *)(rx + l->tail_off[i]);
    e.head = (uint64_t *)(void *)(tx + l->head_off[i]);
    e.pos = pos;
    e.mstride = (int64_t)round_up((size_t)cfg->nslots[p] * (size_t)cfg->slot_bytes[p], 4096);
    e.nslots = cfg->nslots[p];
    e.slot_bytes = cfg->slot_bytes[p];
    e.peer = peer;
    e.chan = k->chan;
    return e;
}

void weft_layout_conns(const weft_layout *l, const weft_rt_cfg *cfg, int32_t rank, char *const *win,
                       uint64_t *pos, weft_dconn *sconn, weft_dconn *rconn) {
    int32_t n = l->nranks;
    for (int32_t i = 0; i < l->nkeys; i++) {
        const weft_rt_key *k = &l->keys[i];
        int32_t to = weft_rt_mod(rank + k->d, n), from = weft_rt_mod(rank - k->d, n);
        uint64_t *pp = pos + l->pos_off[i];
        sconn[i] = conn_end(l, cfg, i, win[to], win[rank], pp, to);
        rconn[i] = conn_end(l, cfg, i, win[rank], win[from], pp + 2 * (size_t)l->members[i], from);
    }
}
