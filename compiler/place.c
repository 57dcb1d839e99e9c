/* place.c — channels for the operations a program leaves unplaced, so that chains of messages
 * that would run at the same time do not queue in one thread block.
 *
 * A thread block serves one connection end per direction on one channel, and the lowerer puts a
 * rank's send and receive ends towards one peer, and the two ends of a step that receives and
 * sends on (a fused chain), in one block. Two chains through the same ends on the same channel
 * therefore share a block: where both have a step at the same dependency depth, one of them
 * waits. Like msccl-tools' automatic placement, each chain of fused messages (an operation and
 * the ones that send on what it received) gets one channel; here the lowest channel on which
 * none of its steps meets a step of another chain at the same depth in the same block, else the
 * one where fewest do. Chains with a channel, sendtb or recvtb hint keep their placement and are
 * placed first; programs whose chains never meet keep everything on channel 0. */
#include "cc_internal.h"

#include <stdlib.h>
#include <string.h>

/* Blocks as they will come out: union-find over connection ends (rank, direction, peer,
 * channel); each root knows the peer it sends to and the one it receives from (-1: none yet) and
 * lists the depths it is busy at. */
typedef struct pl_end {
    int32_t parent;
    int32_t send, recv;
    int32_t *depth;
    size_t n, cap;
} pl_end;

typedef struct placer {
    pl_end *ends;
    size_t nends, capends;
    weft_map of;   /* (rank, peer, channel) -> end + 1 */
    weft_map busy; /* (root, depth) -> 1 */
    int nomem;
} placer;

static uint64_t end_key(int32_t rank, int send, int32_t peer, int32_t chan) {
    return ((uint64_t)(uint32_t)rank << 40) ^ ((uint64_t)(uint32_t)peer << 11) ^
           ((uint64_t)send << 10) ^ (uint64_t)chan;
}

static uint64_t busy_key(int32_t root, int32_t depth) {
    return ((uint64_t)(uint32_t)root << 32) | (uint32_t)depth;
}

static int32_t pl_find(placer *P, int32_t e) {
    while (P->ends[e].parent != e) {
        P->ends[e].parent = P->ends[P->ends[e].parent].parent;
        e = P->ends[e].parent;
    }
    return e;
}

/* The end (rank, send or receive, peer, chan), created on first use; -1 when memory runs out. */
static int32_t pl_end_of(placer *P, int32_t rank, int send, int32_t peer, int32_t chan) {
    int added = 0;
    uint64_t *v = weft_map_put(&P->of, end_key(rank, send, peer, chan), &added);
    if (v == NULL) goto nomem;
    if (!added) return (int32_t)*v - 1;
    if (weft_grow((void **)&P->ends, &P->capends, P->nends, sizeof *P->ends) != 0) goto nomem;
    memset(&P->ends[P->nends], 0, sizeof *P->ends);
    P->ends[P->nends].parent = (int32_t)P->nends;
    P->ends[P->nends].send = send ? peer : -1;
    P->ends[P->nends].recv = send ? -1 : peer;
    *v = (uint64_t)P->nends + 1;
    return (int32_t)P->nends++;
nomem:
    P->nomem = 1;
    return -1;
}

static int pl_is_busy(placer *P, int32_t e, int32_t depth) {
    return weft_map_get(&P->busy, busy_key(pl_find(P, e), depth)) != NULL;
}

static void pl_occupy(placer *P, int32_t e, int32_t depth) {
    int32_t r = pl_find(P, e);
    int added = 0;
    uint64_t *v = weft_map_put(&P->busy, busy_key(r, depth), &added);
    if (v == NULL) {
        P->nomem = 1;
        return;
    }
    *v = 1;
    if (!added) return;
    pl_end *x = &P->ends[r];
    if (weft_grow((void **)&x->depth, &x->cap, x->n, sizeof *x->depth) != 0) {
        P->nomem = 1;
        return;
    }
    x->depth[x->n++] = depth;
}

/* Whether two ends can be one block: one send peer and one receive peer. */
static int pl_fits(placer *P, int32_t a, int32_t b) {
    const pl_end *x = &P->ends[pl_find(P, a)], *y = &P->ends[pl_find(P, b)];
    return x == y || ((x->send < 0 || y->send < 0 || x->send == y->send) &&
                      (x->recv < 0 || y->recv < 0 || x->recv == y->recv));
}

/* One block from two: the smaller list of busy depths moves to the larger. */
static void pl_unite(placer *P, int32_t a, int32_t b) {
    int32_t x = pl_find(P, a), y = pl_find(P, b);
    if (x == y) return;
    if (P->ends[x].n < P->ends[y].n) {
        int32_t t = x;
        x = y;
        y = t;
    }
    P->ends[y].parent = x;
    if (P->ends[x].send < 0) P->ends[x].send = P->ends[y].send;
    if (P->ends[x].recv < 0) P->ends[x].recv = P->ends[y].recv;
    for (size_t i = 0; i < P->ends[y].n && !P->nomem; i++)
        pl_occupy(P, x, P->ends[y].depth[i]);
    WEFT_FREE(P->ends[y].depth);
    P->ends[y].n = P->ends[y].cap = 0;
}

static int cmp_i64(const void *a, const void *b) {
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

static int is_message(const cc_op *op) {
    return op->kind != CC_OP_ENSURE && op->src.rank != op->dst.rank;
}

/* The steps of a chain's messages on channel cc (each on its own, chan[], when cc < 0) that meet
 * another chain's step: for each message, its sending end at the sending depth and its receiving
 * end at the receiving depth. With commit, the chain takes channel c instead: its ends become busy,
 * and each step that receives and sends on joins its two ends into one block. */
/* A clash that breaks a chain: its step cannot receive and send on in one block, so the chain
 * waits a step there; worse than meeting another chain at one depth. */
#define PL_BROKEN 4

static int64_t pl_try(placer *P, const weft_cc_program *p, const int32_t *next, int32_t first,
                      const int32_t *dsend, const int32_t *drecv, const int32_t *chan, int32_t cc,
                      int commit) {
    int64_t clashes = 0;
    int32_t prev_recv = -1; /* the receiving end of the chain's previous message */
    for (int32_t i = first; i >= 0 && !P->nomem; i = next[i]) {
        const cc_op *op = &p->ops[i];
        int32_t c = cc >= 0 ? cc : chan[i];
        int32_t es = pl_end_of(P, op->src.rank, 1, op->dst.rank, c);
        int32_t er = pl_end_of(P, op->dst.rank, 0, op->src.rank, c);
        if (es < 0 || er < 0) return -1;
        int fused = prev_recv >= 0 && (cc >= 0 || chan[i] == chan[p->fuse_from[i]]);
        if (!commit) {
            if (fused && !pl_fits(P, prev_recv, es)) clashes += PL_BROKEN;
            clashes += pl_is_busy(P, es, dsend[i]) + pl_is_busy(P, er, drecv[i]);
            prev_recv = er;
            continue;
        }
        if (fused && pl_fits(P, prev_recv, es)) pl_unite(P, prev_recv, es);
        pl_occupy(P, es, dsend[i]);
        pl_occupy(P, er, drecv[i]);
        prev_recv = er;
    }
    return P->nomem ? -1 : clashes;
}

int cc_place_channels(const weft_cc_program *p, const int32_t *dsend, const int32_t *drecv,
                      int32_t *chan) {
    size_t n = p->nops;
    placer P;
    memset(&P, 0, sizeof P);
    int32_t *head = malloc((n + 1) * sizeof *head), *next = malloc((n + 1) * sizeof *next);
    int32_t *tail = malloc((n + 1) * sizeof *tail);
    uint8_t *fixed = calloc(n + 1, 1);
    int rc = -1;
    if (!head || !next || !tail || !fixed) goto out;
    /* the channel count with instances stays within the MSCCL runtimes' 32 */
    int32_t limit = CC_MAX_CHANNELS / (p->instances > 0 ? p->instances : 1);
    if (limit < 1) limit = 1;
    /* chains: an operation sending on what another received continues that one's chain */
    for (size_t i = 0; i < n; i++) {
        const cc_op *op = &p->ops[i];
        next[i] = -1;
        head[i] = (int32_t)i;
        chan[i] = op->hint[CC_HINT_CHAN] >= 0 ? op->hint[CC_HINT_CHAN] : 0;
        if (!is_message(op)) continue;
        int32_t f = p->fuse_from[i];
        if (f >= 0 && is_message(&p->ops[f]) && tail[head[f]] == f) {
            head[i] = head[f];
            next[f] = (int32_t)i;
        }
        tail[head[i]] = (int32_t)i;
        if (op->hint[CC_HINT_CHAN] >= 0 || op->hint[CC_HINT_SENDTB] >= 0 ||
            op->hint[CC_HINT_RECVTB] >= 0)
            fixed[head[i]] = 1;
    }
    /* a chain's channel: its first channel hint, else 0 when it has a thread-block hint */
    for (size_t h = 0; h < n; h++) {
        if (head[h] != (int32_t)h || !is_message(&p->ops[h]) || !fixed[h]) continue;
        int32_t c = -1;
        for (int32_t i = (int32_t)h; i >= 0 && c < 0; i = next[i])
            c = p->ops[i].hint[CC_HINT_CHAN];
        if (c < 0) c = 0;
        for (int32_t i = (int32_t)h; i >= 0; i = next[i])
            if (p->ops[i].hint[CC_HINT_CHAN] < 0) chan[i] = c;
        if (pl_try(&P, p, next, (int32_t)h, dsend, drecv, chan, -1, 1) < 0) goto out;
    }
    /* the others by the depth they start at, then program order */
    {
        size_t nc = 0;
        int64_t *order = malloc((n + 1) * sizeof *order);
        if (order == NULL) goto out;
        for (size_t h = 0; h < n; h++)
            if (head[h] == (int32_t)h && is_message(&p->ops[h]) && !fixed[h])
                order[nc++] = ((int64_t)dsend[h] << 32) | (int64_t)h;
        qsort(order, nc, sizeof *order, cmp_i64);
        for (size_t k = 0; k < nc && !P.nomem; k++) {
            int32_t h = (int32_t)(order[k] & 0xffffffff), best = 0;
            int64_t fewest = INT64_MAX;
            for (int32_t c = 0; c < limit; c++) {
                int64_t cl = pl_try(&P, p, next, h, dsend, drecv, chan, c, 0);
                if (cl < 0) break;
                if (cl < fewest) {
                    fewest = cl;
                    best = c;
                }
                if (cl == 0) break;
            }
            if (pl_try(&P, p, next, h, dsend, drecv, chan, best, 1) < 0) break;
            for (int32_t i = h; i >= 0; i = next[i])
                chan[i] = best;
        }
        free(order);
    }
    rc = P.nomem ? -1 : 0;
out:
    for (size_t e = 0; e < P.nends; e++)
        free(P.ends[e].depth);
    free(P.ends);
    weft_map_free(&P.of);
    weft_map_free(&P.busy);
    free(head);
    free(next);
    free(tail);
    free(fixed);
    return rc;
}
