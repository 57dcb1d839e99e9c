/* lower.c — from operations to the IR: steps, fusion, thread blocks and channels, dependencies,
 * scratch layout and instances.
 *
 * Placement: messages without hints get their channels from place.c (chains that would meet at
 * one dependency depth go apart); local steps without hints go where no other step has their
 * depth.
 *
 * Ordering: the messages of each connection go in the order their receives can run (by depth),
 * and each thread block runs its steps in the order of a list-scheduling simulation (round after
 * round, every block runs its ready step of least dependency depth, then of longest chain after
 * it, then first in the program; a connection holds CC_FIFO_SLOTS messages). The simulated run
 * is an execution of the schedule, so the schedule cannot deadlock with at least that much
 * buffering per connection: were every block stuck, the stuck step that ran
 * first in the simulation would have had everything it needs. A fusion could make the
 * simulation stall (a fused step sending ahead of a message it depends on): with program-ordered
 * connections it did; with connections ordered by depth no program is known to, but should one,
 * the fusions involved are undone, and without fusion the simulation always completes. */
#include "cc_internal.h"

#include <stdlib.h>
#include <string.h>

enum { H_NONE = 0, H_SEND, H_RECV, H_LOCAL };

/* Messages a connection holds in the simulation: the verifier's default assumption, so the
 * schedule cannot deadlock when the runtime buffers at least this many per connection. */
#define CC_FIFO_SLOTS WEFT_VERIFY_FIFO_SLOTS

typedef struct half {
    uint8_t kind;
    int32_t rank, op, step;
    int32_t node; /* union-find node: the connection end or thread block it lives in */
    int64_t dep0;
    int32_t ndeps;
} half;

typedef struct lstep {
    weft_step_type type;
    int32_t rank, tb;
    int32_t recv, send, local; /* halves, -1 when absent */
    int32_t prio;              /* program position of its first operation */
    int32_t depth;             /* longest chain of dependencies and messages that ends here */
    int32_t height;            /* longest such chain that starts here */
    int32_t pending;           /* simulation: dependencies not yet run */
    uint8_t queued, done;
    int32_t idx, final_idx, nwaits;
    int64_t wait0; /* waits in lowerer.waits: (tb, abstract index) pairs */
    uint8_t hasdep;
} lstep;

/* A union-find node: one end of a connection (rank, dir, peer, chan), a hinted thread-block
 * label, or a block for local steps. Attributes are kept at the root. */
typedef struct node {
    int32_t parent;
    int32_t rank, send, recv, chan, label;
    int32_t tb;    /* final thread block index on its rank (roots) */
    int32_t first; /* ordering of unlabelled blocks: first program position */
    uint8_t used;  /* holds a step */
} node;

typedef struct lowerer {
    const weft_cc_program *p;
    weft_diag *d;
    int errors, nomem;
    half *h;
    int64_t nhalves;
    int32_t *deps;
    int64_t ndeps, capdeps;
    lstep *steps;
    size_t nsteps, capsteps;
    node *nodes;
    size_t nnodes, capnodes;
    weft_map node_of; /* (rank, kind, peer, chan) -> node + 1 */
    int32_t *waits;
    size_t nwaits, capwaits;
    /* thread blocks: union-find roots in id order, blocks per rank, first root of each rank */
    int32_t *roots, *ntbs, *rootfirst;
    size_t nroots;
    /* copy fusions, per op: the copy whose source this op reads instead of its destination
     * (absorb), the receive this local op is carried out by (into); -1 when none */
    int32_t *absorb, *into;
    int32_t *chan;  /* per op: its channel (cc_place_channels) */
    int32_t *depth; /* per half: its dependency depth before copy fusion (place_channels) */
} lowerer;

/* The channel of an operation: its hint, or where place.c put it. */
static int32_t chan_of(const lowerer *L, const cc_op *op) {
    return L->chan[op - L->p->ops];
}

/* ---- nodes ------------------------------------------------------------------------------ */

enum { NK_SEND = 1, NK_RECV, NK_LABEL, NK_LOCAL };

static int32_t new_node(lowerer *L, int32_t rank) {
    if (weft_grow((void **)&L->nodes, &L->capnodes, L->nnodes, sizeof *L->nodes) != 0) {
        L->nomem = 1;
        return -1;
    }
    node *n = &L->nodes[L->nnodes];
    n->parent = (int32_t)L->nnodes;
    n->rank = rank;
    n->send = n->recv = n->chan = n->label = n->tb = -1;
    n->first = INT32_MAX;
    n->used = 0;
    return (int32_t)L->nnodes++;
}

static uint64_t node_key(int32_t rank, int kind, int32_t peer, int32_t chan) {
    return ((uint64_t)(uint32_t)rank << 36) ^ ((uint64_t)kind << 33) ^
           ((uint64_t)(uint32_t)(peer + 1) << 8) ^ (uint64_t)(uint32_t)chan ^ 0x8000000000000000ULL;
}

static int32_t lookup_node(const lowerer *L, int32_t rank, int kind, int32_t peer, int32_t chan) {
    const uint64_t *v = weft_map_get(&L->node_of, node_key(rank, kind, peer, chan));
    return v ? (int32_t)*v - 1 : -1;
}

/* The node for (rank, kind, peer, chan), created with its attributes on first use. */
static int32_t get_node(lowerer *L, int32_t rank, int kind, int32_t peer, int32_t chan) {
    int32_t n = lookup_node(L, rank, kind, peer, chan);
    if (n >= 0) return n;
    n = new_node(L, rank);
    if (n < 0) return -1;
    uint64_t *v = weft_map_put(&L->node_of, node_key(rank, kind, peer, chan), NULL);
    if (v == NULL) {
        L->nomem = 1;
        return -1;
    }
    *v = (uint64_t)n + 1;
    node *nd = &L->nodes[n];
    if (kind == NK_SEND) nd->send = peer;
    if (kind == NK_RECV) nd->recv = peer;
    if (kind == NK_SEND || kind == NK_RECV || kind == NK_LOCAL) nd->chan = chan;
    if (kind == NK_LABEL) nd->label = peer;
    return n;
}

static int32_t find(lowerer *L, int32_t n) {
    while (L->nodes[n].parent != n) {
        L->nodes[n].parent = L->nodes[L->nodes[n].parent].parent;
        n = L->nodes[n].parent;
    }
    return n;
}

/* Why two nodes cannot be one thread block, or NULL when they can. */
static const char *conflict(lowerer *L, int32_t a, int32_t b, char *why, size_t n) {
    node *x = &L->nodes[find(L, a)], *y = &L->nodes[find(L, b)];
    if (x == y) return NULL;
    if (x->send >= 0 && y->send >= 0) {
        snprintf(why, n, "would send to rank %d and rank %d (a thread block sends to one peer)",
                 x->send, y->send);
        return why;
    }
    if (x->recv >= 0 && y->recv >= 0) {
        snprintf(why, n,
                 "would receive from rank %d and rank %d (a thread block receives from one peer)",
                 x->recv, y->recv);
        return why;
    }
    if (x->chan >= 0 && y->chan >= 0 && x->chan != y->chan) {
        snprintf(why, n, "would use channel %d and channel %d (a thread block uses one channel)",
                 x->chan, y->chan);
        return why;
    }
    if (x->label >= 0 && y->label >= 0) {
        snprintf(why, n, "is already tb %d and tb %d", x->label, y->label);
        return why;
    }
    return NULL;
}

static void unite(lowerer *L, int32_t a, int32_t b) {
    int32_t x = find(L, a), y = find(L, b);
    if (x == y) return;
    node *nx = &L->nodes[x], *ny = &L->nodes[y];
    ny->parent = x;
    if (nx->send < 0) nx->send = ny->send;
    if (nx->recv < 0) nx->recv = ny->recv;
    if (nx->chan < 0) nx->chan = ny->chan;
    if (nx->label < 0) nx->label = ny->label;
}

/* ---- dependencies ----------------------------------------------------------------------- */

typedef struct slotdeps {
    int32_t *writer;  /* half that last wrote the slot */
    int32_t *readers; /* head of the list of halves that read it since */
    int32_t *pool_half, *pool_next;
    size_t npool, cappool, capnext;
    int32_t *stamp; /* per half: last half whose dependency list holds it */
} slotdeps;

static void add_dep(lowerer *L, slotdeps *s, int32_t self, int32_t dep) {
    if (dep < 0 || dep == self || s->stamp[dep] == self) return;
    s->stamp[dep] = self;
    if (weft_grow((void **)&L->deps, (size_t *)&L->capdeps, (size_t)L->ndeps, sizeof *L->deps)) {
        L->nomem = 1;
        return;
    }
    L->deps[L->ndeps++] = dep;
    L->h[self].ndeps++;
}

static void add_reader(lowerer *L, slotdeps *s, int64_t slot, int32_t hh) {
    if (s->readers[slot] >= 0 && s->pool_half[s->readers[slot]] == hh) return;
    if (weft_grow((void **)&s->pool_half, &s->cappool, s->npool, sizeof *s->pool_half) != 0) {
        L->nomem = 1;
        return;
    }
    if (s->capnext < s->cappool) { /* grown with pool_half, not on every call */
        int32_t *nx = realloc(s->pool_next, s->cappool * sizeof *nx);
        if (nx == NULL) {
            L->nomem = 1;
            return;
        }
        s->pool_next = nx;
        s->capnext = s->cappool;
    }
    s->pool_half[s->npool] = hh;
    s->pool_next[s->npool] = s->readers[slot];
    s->readers[slot] = (int32_t)s->npool++;
}

/* Reads then writes of each half, in program order: RAW, WAR and WAW dependencies on the
 * rank's own memory (in-place aliasing when the program is valid in-place, which covers the
 * out-of-place mode too). */
static int compute_deps(lowerer *L) {
    const weft_cc_program *p = L->p;
    cc_layout lay;
    cc_layout_init(&lay, p, p->inplace);
    slotdeps s;
    memset(&s, 0, sizeof s);
    int rc = -1;
    s.writer = malloc(((size_t)lay.nslots + 1) * sizeof *s.writer);
    s.readers = malloc(((size_t)lay.nslots + 1) * sizeof *s.readers);
    s.stamp = malloc(((size_t)L->nhalves + 1) * sizeof *s.stamp);
    if (!s.writer || !s.readers || !s.stamp) goto out;
    for (int64_t i = 0; i < lay.nslots; i++)
        s.writer[i] = s.readers[i] = -1;
    for (int64_t i = 0; i < L->nhalves; i++)
        s.stamp[i] = -1;
    for (size_t qi = 0; qi < p->nops && !L->nomem; qi++) {
        const cc_op *op = &p->ops[qi];
        half *hs = &L->h[2 * qi], *hr = &L->h[2 * qi + 1];
        if (hs->kind == H_NONE) continue;
        int32_t cnt = op->dst.cnt;
        int64_t s0 = cc_slot(&lay, p, op->src.buf, op->src.rank, op->src.off);
        int64_t d0 = cc_slot(&lay, p, op->dst.buf, op->dst.rank, op->dst.off);
        int32_t reader = (int32_t)(2 * qi);
        int32_t writer = hs->kind == H_LOCAL ? (int32_t)(2 * qi) : (int32_t)(2 * qi + 1);
        /* reader half: RAW on the source */
        L->h[reader].dep0 = L->ndeps;
        for (int32_t i = 0; i < cnt; i++)
            add_dep(L, &s, reader, s.writer[s0 + i]);
        if (hs->kind != H_LOCAL) {
            for (int32_t i = 0; i < cnt; i++)
                add_reader(L, &s, s0 + i, reader);
            hr->dep0 = L->ndeps;
        } else if (L->into[qi] < 0) {
            /* a local step reads its source too: a later write of it waits (WAR), or another
             * block could overwrite the source first (a receive carrying out the operation reads
             * the message instead, not the source) */
            for (int32_t i = 0; i < cnt; i++)
                add_reader(L, &s, s0 + i, reader);
        }
        /* writer half: WAW, WAR, and RAW for a reduce */
        for (int32_t i = 0; i < cnt; i++) {
            int64_t dd = d0 + i;
            add_dep(L, &s, writer, s.writer[dd]);
            for (int32_t r = s.readers[dd]; r >= 0; r = s.pool_next[r])
                add_dep(L, &s, writer, s.pool_half[r]);
        }
        /* a fused copy X -> DST: the step reads X (RAW), and later writes of X wait for it */
        if (L->absorb[qi] >= 0) {
            const cc_op *c = &p->ops[L->absorb[qi]];
            int64_t x0 = cc_slot(&lay, p, c->src.buf, c->src.rank, c->src.off);
            for (int32_t i = 0; i < cnt; i++)
                add_dep(L, &s, writer, s.writer[x0 + i]);
            for (int32_t i = 0; i < cnt; i++)
                add_reader(L, &s, x0 + i, writer);
        }
        for (int32_t i = 0; i < cnt; i++) {
            s.writer[d0 + i] = writer;
            s.readers[d0 + i] = -1;
        }
        /* a local copy onto itself (both modes enabled) reads the slot it writes */
        if (hs->kind == H_LOCAL)
            for (int32_t i = 0; i < cnt; i++)
                if (s0 + i >= d0 && s0 + i < d0 + cnt) s.writer[s0 + i] = writer;
    }
    rc = L->nomem ? -1 : 0;
out:
    free(s.writer);
    free(s.readers);
    free(s.stamp);
    free(s.pool_half);
    free(s.pool_next);
    return rc;
}

/* ---- channels ----------------------------------------------------------------------------- */

/* Channels before any block exists: the dependency depth of each operation's sending and
 * receiving step from the program's dependencies (a receive one after its send; a send that
 * forwards a received value in the receiving step), then place.c's choice. The dependencies are
 * dropped again: copy fusions, decided on the blocks, change them. */
static int place_channels(lowerer *L) {
    const weft_cc_program *p = L->p;
    int32_t *dh = L->depth = calloc((size_t)L->nhalves + 1, sizeof *dh);
    int32_t *dsend = calloc(p->nops + 1, sizeof *dsend),
            *drecv = calloc(p->nops + 1, sizeof *drecv);
    int rc = -1;
    if (!dh || !dsend || !drecv || compute_deps(L) != 0) goto out;
    for (size_t q = 0; q < p->nops; q++) {
        const half *hs = &L->h[2 * q], *hr = &L->h[2 * q + 1];
        if (hs->kind == H_NONE) continue;
        int32_t f = p->fuse_from[q];
        int32_t in = hs->kind == H_SEND && f >= 0 && L->h[2 * f].kind == H_SEND ? 2 * f + 1 : -1;
        int32_t d = 0;
        for (int32_t k = 0; k < hs->ndeps; k++) {
            int32_t u = L->deps[hs->dep0 + k];
            if (dh[u] + (u != in) > d) d = dh[u] + (u != in);
        }
        if (in >= 0 && dh[in] < d) dh[in] = d; /* one step */
        dh[2 * q] = d;
        if (hs->kind != H_SEND) continue;
        d = dh[2 * q] + 1;
        for (int32_t k = 0; k < hr->ndeps; k++)
            if (dh[L->deps[hr->dep0 + k]] + 1 > d) d = dh[L->deps[hr->dep0 + k]] + 1;
        dh[2 * q + 1] = d;
    }
    for (size_t q = 0; q < p->nops; q++) {
        dsend[q] = dh[2 * q];
        drecv[q] = dh[2 * q + 1];
    }
    rc = cc_place_channels(p, dsend, drecv, L->chan);
out:
    L->ndeps = 0;
    for (int64_t i = 0; i < L->nhalves; i++)
        L->h[i].ndeps = 0;
    free(dsend);
    free(drecv);
    return rc;
}

/* ---- hints -------------------------------------------------------------------------------- */

static const char *const hint_names[] = {
#define WEFT_X_(id, n) n,
    CC_HINTS(WEFT_X_)
#undef WEFT_X_
};

static void hint_error(lowerer *L, const cc_op *op, int hint, int32_t rank, const char *why) {
    L->errors++;
    cc_report(L->p, L->d, WEFT_SEV_ERROR, op->hint_loc[hint], op->frame,
              "cannot honour %s=%d: tb %d on rank %d %s", hint_names[hint], op->hint[hint],
              op->hint[hint], rank, why);
}

static void apply_hint(lowerer *L, const cc_op *op, int hint, int32_t rank, int32_t end) {
    char why[200];
    int32_t lab = get_node(L, rank, NK_LABEL, op->hint[hint], 0);
    if (lab < 0) return;
    const node *e = &L->nodes[find(L, end)];
    if (e->label >= 0 && e->label != op->hint[hint]) {
        L->errors++;
        cc_report(L->p, L->d, WEFT_SEV_ERROR, op->hint_loc[hint], op->frame,
                  "cannot honour %s=%d: rank %d already %s rank %d on channel %d in tb %d (one "
                  "thread block per connection)",
                  hint_names[hint], op->hint[hint], rank,
                  hint == CC_HINT_SENDTB ? "sends to" : "receives from",
                  hint == CC_HINT_SENDTB ? op->dst.rank : op->src.rank, chan_of(L, op), e->label);
        return;
    }
    const char *c = conflict(L, lab, end, why, sizeof why);
    if (c) {
        hint_error(L, op, hint, rank, c);
        return;
    }
    unite(L, lab, end);
}

/* ---- building --------------------------------------------------------------------------- */

/* A new step of rank, ordered among its block's steps by prio (its operation's index). */
static int32_t new_step(lowerer *L, weft_step_type type, int32_t rank, int32_t prio) {
    if (weft_grow((void **)&L->steps, &L->capsteps, L->nsteps, sizeof *L->steps) != 0) {
        L->nomem = 1;
        return -1;
    }
    lstep *s = &L->steps[L->nsteps];
    memset(s, 0, sizeof *s);
    s->type = type;
    s->rank = rank;
    s->prio = prio;
    s->recv = s->send = s->local = -1;
    return (int32_t)L->nsteps++;
}

/* Sort records: qsort has no context argument, so what a comparison needs is copied in. */
typedef struct sortrec {
    int32_t a, b, c, d; /* compared in order */
    int32_t id;
} sortrec;

static int cmp_sortrec(const void *pa, const void *pb) {
    const sortrec *x = pa, *y = pb;
    return weft_cmp_keys((int64_t[]){x->a, x->b, x->c, x->d}, (int64_t[]){y->a, y->b, y->c, y->d},
                         4);
}

/* The same, then by id. */
static int cmp_sortrec_id(const void *pa, const void *pb) {
    const sortrec *x = pa, *y = pb;
    int c = cmp_sortrec(pa, pb);
    return c ? c : (x->id > y->id) - (x->id < y->id);
}

static int cmp_i32(const void *a, const void *b) {
    int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
    return x < y ? -1 : x > y;
}

static int32_t step_half(const lstep *s) {
    return s->recv >= 0 ? s->recv : s->send >= 0 ? s->send : s->local;
}

/* XML offset of a chunk in instance c: each segment of k chunks becomes k x I chunks, copy c
 * taking the c-th k of them; scratch is laid out per copy. */
static int32_t map_off(const weft_cc_program *p, int32_t buf, int32_t off, int32_t c,
                       int32_t sper) {
    if (buf >= CC_BUF_SCRATCH0) return c * sper + p->scratch[buf - CC_BUF_SCRATCH0].base + off;
    int32_t k = p->chunks, I = p->instances;
    return (off / k) * k * I + c * k + off % k;
}

static weft_buf xml_buf(int32_t buf) {
    return buf == CC_BUF_INPUT    ? WEFT_BUF_INPUT
           : buf == CC_BUF_OUTPUT ? WEFT_BUF_OUTPUT
                                  : WEFT_BUF_SCRATCH;
}

/* The chunks a step reads and writes. A receiving step stores into its operation's destination,
 * or into the destination of the local operation fused into it; it combines with that
 * destination, or with the source of a copy fused into it. */
static void step_refs(const lowerer *L, const lstep *ls, cc_ref *src, cc_ref *dst) {
    const weft_cc_program *p = L->p;
    if (ls->recv >= 0) {
        int32_t q = ls->local >= 0 ? L->h[ls->local].op : L->h[ls->recv].op;
        *src = *dst = p->ops[q].dst;
        if (L->absorb[q] >= 0) *src = p->ops[L->absorb[q]].src;
    } else if (ls->local >= 0) {
        *src = p->ops[L->h[ls->local].op].src;
        *dst = p->ops[L->h[ls->local].op].dst;
    } else {
        *src = *dst = p->ops[L->h[ls->send].op].src;
    }
}

static void fill_step(const lowerer *L, const lstep *ls, int32_t c, int32_t sper, weft_step *st) {
    const weft_cc_program *p = L->p;
    cc_ref src, dst;
    step_refs(L, ls, &src, &dst);
    *st = weft_step_make(ls->type, xml_buf(src.buf), map_off(p, src.buf, src.off, c, sper),
                         xml_buf(dst.buf), map_off(p, dst.buf, dst.off, c, sper), dst.cnt);
}

static int check_segments(lowerer *L) {
    const weft_cc_program *p = L->p;
    if (p->instances == 1) return 0;
    int bad = 0;
    for (size_t i = 0; i < p->nops; i++) {
        const cc_op *op = &p->ops[i];
        if (op->kind == CC_OP_ENSURE) continue;
        const cc_ref *refs[2] = {&op->src, &op->dst};
        for (int j = 0; j < 2; j++) {
            const cc_ref *r = refs[j];
            if (r->buf >= CC_BUF_SCRATCH0 || r->cnt == 1) continue;
            int32_t k = p->chunks;
            if (r->off / k != (r->off + r->cnt - 1) / k) {
                char s[96];
                cc_ref_str(p, r, s, sizeof s);
                cc_report(p, L->d, WEFT_SEV_ERROR, op->loc, op->frame,
                          "with instances > 1 a chunk range may not cross a segment boundary: "
                          "%s crosses chunk %d (chunks = %d)",
                          s, (r->off / k + 1) * k, k);
                L->errors++;
                bad = 1;
                break;
            }
        }
    }
    return bad ? -1 : 0;
}

/* In place, where the output is the rank's slice of a larger input (reducescatter), the rest
 * of the input is the application's send buffer (weft_input_writable): no step may store
 * there. Checked on the steps as fused, since a reduce whose value is only forwarded (rrs)
 * stores nothing, which is how a ring accumulates in place. */
static int check_send_buffer(lowerer *L) {
    const weft_cc_program *p = L->p;
    int bad = 0;
    if (!p->inplace) return 0;
    for (size_t i = 0; i < L->nsteps; i++) {
        const lstep *s = &L->steps[i];
        if (!(weft_step_flags(s->type) & WEFT_STEP_F_WRITE)) continue;
        cc_ref src, dst;
        step_refs(L, s, &src, &dst);
        if (dst.buf != CC_BUF_INPUT) continue;
        for (int32_t c = 0; c < dst.cnt; c++) {
            if (weft_input_writable(p->coll, 1, dst.rank, p->chunks, dst.off + c)) continue;
            const cc_op *op = &p->ops[L->h[s->local >= 0 ? s->local : s->recv].op];
            cc_ref r = {CC_BUF_INPUT, dst.rank, dst.off + c, 1};
            char b[96];
            cc_ref_str(p, &r, b, sizeof b);
            cc_report(p, L->d, WEFT_SEV_ERROR, op->loc, op->frame,
                      "writes %s, outside the rank's output (input[%d][%d..%d]): in an in-place "
                      "%s the rest of the input is the application's send buffer, "
                      "which must not change",
                      b, dst.rank, dst.rank * p->chunks, dst.rank * p->chunks + p->chunks - 1,
                      weft_coll_name(p->coll));
            L->errors++;
            bad = 1;
            break;
        }
    }
    return bad ? -1 : 0;
}

/* Thread-block ids per rank: the union-find roots that hold steps, labelled blocks first. */
static int assign_tbs(lowerer *L) {
    int32_t N = L->p->nranks;
    for (size_t i = 0; i < L->nsteps; i++) {
        lstep *s = &L->steps[i];
        node *root = &L->nodes[find(L, L->h[step_half(s)].node)];
        root->used = 1;
        if (s->prio < root->first) root->first = s->prio;
    }
    L->roots = malloc((L->nnodes + 1) * sizeof *L->roots);
    L->ntbs = calloc((size_t)N + 1, sizeof *L->ntbs);
    L->rootfirst = malloc(((size_t)N + 1) * sizeof *L->rootfirst);
    if (!L->roots || !L->ntbs || !L->rootfirst) return -1;
    L->nroots = 0;
    for (size_t i = 0; i < L->nnodes; i++)
        if (find(L, (int32_t)i) == (int32_t)i && L->nodes[i].used)
            L->roots[L->nroots++] = (int32_t)i;
    /* ids per rank: labelled blocks first in label order, then by their first step */
    sortrec *rec = malloc((L->nroots + 1) * sizeof *rec);
    if (rec == NULL) return -1;
    for (size_t i = 0; i < L->nroots; i++) {
        const node *n = &L->nodes[L->roots[i]];
        rec[i] = (sortrec){n->rank, n->label >= 0 ? 0 : 1, n->label >= 0 ? n->label : n->first, 0,
                           L->roots[i]};
    }
    qsort(rec, L->nroots, sizeof *rec, cmp_sortrec);
    for (size_t i = 0; i < L->nroots; i++)
        L->roots[i] = rec[i].id;
    free(rec);
    for (int32_t r = 0; r <= N; r++)
        L->rootfirst[r] = (int32_t)L->nroots;
    for (size_t i = L->nroots; i-- > 0;)
        L->rootfirst[L->nodes[L->roots[i]].rank] = (int32_t)i;
    for (size_t i = 0; i < L->nroots; i++) {
        node *n = &L->nodes[L->roots[i]];
        n->tb = L->ntbs[n->rank]++;
    }
    for (size_t i = 0; i < L->nsteps; i++) {
        lstep *s = &L->steps[i];
        s->tb = L->nodes[find(L, L->h[step_half(s)].node)].tb;
    }
    return 0;
}

/* Splits a fused step back into its receive and its send (same block). */
static int unfuse(lowerer *L, int32_t si) {
    int32_t sh = L->steps[si].send;
    int32_t t = new_step(L, WEFT_STEP_SEND, L->steps[si].rank, L->h[sh].op);
    if (t < 0) return -1;
    lstep *f = &L->steps[si], *n = &L->steps[t];
    const cc_op *rop = &L->p->ops[L->h[f->recv].op];
    f->send = -1;
    f->type = rop->kind == CC_OP_COPY ? WEFT_STEP_RECV : WEFT_STEP_RRC;
    n->send = sh;
    n->tb = f->tb;
    L->h[sh].step = t;
    return 0;
}

/* Whether step a goes before step b when both are ready in one block: the shallower first (list
 * scheduling by dependency depth), then the one with the longer chain still to come after it,
 * then the one that comes first in the program. */
static int before(const lowerer *L, int32_t a, int32_t b) {
    const lstep *x = &L->steps[a], *y = &L->steps[b];
    if (x->depth != y->depth) return x->depth < y->depth;
    if (x->height != y->height) return x->height > y->height;
    if (x->prio != y->prio) return x->prio < y->prio;
    return a < b;
}

/* A binary min-heap of step ids by (depth, program position), one per block. */
typedef struct heap {
    int32_t *v;
    size_t n, cap;
} heap;

static int heap_push(const lowerer *L, heap *h, int32_t x) {
    if (weft_grow((void **)&h->v, &h->cap, h->n, sizeof *h->v) != 0) return -1;
    size_t i = h->n++;
    while (i > 0 && before(L, x, h->v[(i - 1) / 2])) {
        h->v[i] = h->v[(i - 1) / 2];
        i = (i - 1) / 2;
    }
    h->v[i] = x;
    return 0;
}

static int32_t heap_pop(const lowerer *L, heap *h) {
    int32_t top = h->v[0], x = h->v[--h->n];
    size_t i = 0;
    for (;;) {
        size_t c = 2 * i + 1;
        if (c >= h->n) break;
        if (c + 1 < h->n && before(L, h->v[c + 1], h->v[c])) c++;
        if (!before(L, h->v[c], x)) break;
        h->v[i] = h->v[c];
        i = c;
    }
    if (h->n > 0) h->v[i] = x;
    return top;
}

typedef struct sim {
    int32_t *dep0, *deps;     /* per step: steps that wait for it (CSR) */
    int32_t *prev_msg;        /* per op: the previous message on its connection, or -1 */
    int32_t *next_msg;        /* per op: the next one, or -1 */
    uint8_t *sent, *received; /* per op */
    heap *heaps;              /* per block (rootfirst[rank] + tb) */
    int32_t *active, nactive;
    uint8_t *in_active;
} sim;

/* What a simulation allocated (the messages' order stays for the next attempt). */
static void sim_clear(const lowerer *L, sim *S) {
    for (size_t b = 0; S->heaps && b < L->nroots; b++)
        free(S->heaps[b].v);
    WEFT_FREE(S->heaps);
    WEFT_FREE(S->active);
    WEFT_FREE(S->in_active);
    WEFT_FREE(S->dep0);
    WEFT_FREE(S->deps);
}

static int ready(const lowerer *L, const sim *S, const lstep *s) {
    if (s->pending > 0 || s->done || s->queued) return 0;
    if (s->recv >= 0) {
        /* the message has arrived and is first in line */
        int32_t q = L->h[s->recv].op;
        if (!S->sent[q] || (S->prev_msg[q] >= 0 && !S->received[S->prev_msg[q]])) return 0;
    }
    if (s->send >= 0) {
        /* sends go in program order, into room on the connection: the message CC_FIFO_SLOTS
         * before this one was received */
        int32_t q = L->h[s->send].op, prev = q;
        if (S->prev_msg[q] >= 0 && !S->sent[S->prev_msg[q]]) return 0;
        for (int k = 0; k < CC_FIFO_SLOTS && prev >= 0; k++)
            prev = S->prev_msg[prev];
        if (prev >= 0 && !S->received[prev]) return 0;
    }
    return 1;
}

static int try_queue(lowerer *L, sim *S, int32_t si) {
    lstep *s = &L->steps[si];
    if (!ready(L, S, s)) return 0;
    int32_t b = L->rootfirst[s->rank] + s->tb;
    s->queued = 1;
    if (heap_push(L, &S->heaps[b], si) != 0) return -1;
    if (!S->in_active[b]) {
        S->in_active[b] = 1;
        S->active[S->nactive++] = b;
    }
    return 0;
}

/* Each step's depth: the longest chain of dependencies and messages (a receive after its send)
 * that ends at it, by Kahn's algorithm over the edges the simulation built. Steps on a cycle
 * (a fusion that sends ahead of what it waits for) get one more than the deepest other step:
 * they cannot run, and the simulation undoes their fusion. */
static int compute_depths(lowerer *L, const sim *S) {
    size_t ns = L->nsteps;
    int32_t *indeg = malloc((ns + 1) * sizeof *indeg), *queue = malloc((ns + 1) * sizeof *queue);
    int rc = -1;
    if (!indeg || !queue) goto out;
    for (size_t i = 0; i < ns; i++) {
        indeg[i] = L->steps[i].pending;
        L->steps[i].depth = -1;
    }
    for (size_t i = 0; i < ns; i++) {
        const lstep *s = &L->steps[i];
        if (s->recv >= 0 && L->h[2 * L->h[s->recv].op].step != (int32_t)i) indeg[i]++;
    }
    size_t head = 0, tail = 0;
    for (size_t i = 0; i < ns; i++)
        if (indeg[i] == 0) {
            L->steps[i].depth = 0;
            queue[tail++] = (int32_t)i;
        }
    int32_t deepest = 0;
    while (head < tail) {
        int32_t u = queue[head++], d = L->steps[u].depth + 1;
        if (d > deepest) deepest = d;
        int32_t msg = L->steps[u].send >= 0 ? L->h[2 * L->h[L->steps[u].send].op + 1].step : -1;
        for (int32_t k = S->dep0[u]; k <= S->dep0[u + 1]; k++) {
            int32_t v = k < S->dep0[u + 1] ? S->deps[k] : msg;
            if (v < 0 || v == u) continue;
            if (L->steps[v].depth < d) L->steps[v].depth = d;
            if (--indeg[v] == 0) queue[tail++] = v;
        }
    }
    for (size_t i = 0; i < ns; i++)
        if (indeg[i] > 0) L->steps[i].depth = deepest + 1;
    /* heights, in reverse topological order */
    for (size_t i = 0; i < ns; i++)
        L->steps[i].height = 0;
    for (size_t k = tail; k-- > 0;) {
        int32_t u = queue[k], h = 0;
        int32_t msg = L->steps[u].send >= 0 ? L->h[2 * L->h[L->steps[u].send].op + 1].step : -1;
        for (int32_t j = S->dep0[u]; j <= S->dep0[u + 1]; j++) {
            int32_t v = j < S->dep0[u + 1] ? S->deps[j] : msg;
            if (v < 0 || v == u) continue;
            if (L->steps[v].height + 1 > h) h = L->steps[v].height + 1;
        }
        L->steps[u].height = h;
    }
    rc = 0;
out:
    free(indeg);
    free(queue);
    return rc;
}

/* The messages of each connection (sender, receiver, channel), in the order the receiver can
 * take them soonest: by the depth of the receiving step, then of the sending one, then program
 * order. A message whose receive waits for more (a receive that also stores a local copy's
 * result) thus goes after those the receiver can take first, and a receive never waits behind a
 * message that depends on it. Sets S->prev_msg and S->next_msg. */
static int order_messages(const lowerer *L, sim *S) {
    const weft_cc_program *p = L->p;
    sortrec *rec = malloc((p->nops + 1) * sizeof *rec);
    if (rec == NULL) return -1;
    size_t n = 0;
    for (size_t i = 0; i < p->nops; i++) {
        S->prev_msg[i] = S->next_msg[i] = -1;
        if (L->h[2 * i].kind != H_SEND) continue;
        const cc_op *op = &p->ops[i];
        const lstep *snd = &L->steps[L->h[2 * i].step], *rcv = &L->steps[L->h[2 * i + 1].step];
        rec[n++] = (sortrec){op->src.rank * p->nranks + op->dst.rank, chan_of(L, op), rcv->depth,
                             snd->depth, (int32_t)i};
    }
    /* the program position breaks ties: the op index is the record's id */
    qsort(rec, n, sizeof *rec, cmp_sortrec_id);
    for (size_t k = 1; k < n; k++)
        if (rec[k].a == rec[k - 1].a && rec[k].b == rec[k - 1].b) {
            S->prev_msg[rec[k].id] = rec[k - 1].id;
            S->next_msg[rec[k - 1].id] = rec[k].id;
        }
    free(rec);
    return 0;
}

/* One simulation; returns 1 when every step ran, 0 on a stall, -1 on allocation failure. */
static int simulate(lowerer *L, sim *S) {
    const weft_cc_program *p = L->p;
    size_t ns = L->nsteps;
    int rc = -1;
    int32_t *cnt = calloc(ns + 1, sizeof *cnt), *fill = NULL, *ran = NULL, *stamp = NULL;
    int32_t *tbcount = calloc(L->nroots + 1, sizeof *tbcount);
    S->dep0 = malloc((ns + 2) * sizeof *S->dep0);
    S->heaps = calloc(L->nroots + 1, sizeof *S->heaps);
    S->active = malloc((L->nroots + 1) * sizeof *S->active);
    S->in_active = calloc(L->nroots + 1, 1);
    S->nactive = 0;
    stamp = malloc((ns + 1) * sizeof *stamp);
    if (!cnt || !tbcount || !S->dep0 || !S->heaps || !S->active || !S->in_active || !stamp)
        goto out;
    for (size_t i = 0; i < ns; i++) {
        lstep *s = &L->steps[i];
        s->pending = 0;
        s->queued = s->done = 0;
        stamp[i] = -1;
    }
    memset(S->sent, 0, p->nops + 1);
    memset(S->received, 0, p->nops + 1);
    /* edges u -> s for each step s and each distinct step u it depends on: count, then fill */
    for (int pass = 0; pass < 2; pass++) {
        for (size_t i = 0; i < ns; i++)
            stamp[i] = -1;
        for (size_t i = 0; i < ns; i++) {
            lstep *s = &L->steps[i];
            int32_t parts[3] = {s->recv, s->send, s->local};
            for (int j = 0; j < 3; j++) {
                if (parts[j] < 0) continue;
                const half *hh = &L->h[parts[j]];
                for (int32_t k = 0; k < hh->ndeps; k++) {
                    int32_t u = L->h[L->deps[hh->dep0 + k]].step;
                    if (u == (int32_t)i || stamp[u] == (int32_t)i) continue;
                    stamp[u] = (int32_t)i;
                    if (pass == 0) {
                        cnt[u]++;
                        s->pending++;
                    } else {
                        S->deps[fill[u]++] = (int32_t)i;
                    }
                }
            }
        }
        if (pass == 0) {
            S->dep0[0] = 0;
            for (size_t i = 0; i < ns; i++)
                S->dep0[i + 1] = S->dep0[i] + cnt[i];
            S->deps = malloc(((size_t)S->dep0[ns] + 1) * sizeof *S->deps);
            fill = malloc((ns + 1) * sizeof *fill);
            if (!S->deps || !fill) goto out;
            memcpy(fill, S->dep0, ns * sizeof *fill);
        }
    }
    if (compute_depths(L, S) != 0 || order_messages(L, S) != 0) goto out;
    for (size_t i = 0; i < ns; i++)
        if (try_queue(L, S, (int32_t)i) < 0) goto out;
    ran = malloc((L->nroots + 1) * sizeof *ran);
    if (!ran) goto out;
    size_t done = 0;
    while (done < ns) {
        if (S->nactive == 0) {
            rc = 0;
            goto out;
        }
        /* every block with a ready step runs one this round */
        int32_t nran = 0, keep = 0;
        for (int32_t a = 0; a < S->nactive; a++) {
            int32_t b = S->active[a];
            int32_t si = heap_pop(L, &S->heaps[b]);
            L->steps[si].idx = tbcount[b]++;
            ran[nran++] = si;
            if (S->heaps[b].n > 0)
                S->active[keep++] = b;
            else
                S->in_active[b] = 0;
        }
        S->nactive = keep;
        for (int32_t a = 0; a < nran; a++) {
            lstep *s = &L->steps[ran[a]];
            s->done = 1;
            done++;
            for (int32_t k = S->dep0[ran[a]]; k < S->dep0[ran[a] + 1]; k++) {
                L->steps[S->deps[k]].pending--;
                if (try_queue(L, S, S->deps[k]) < 0) goto out;
            }
            if (s->send >= 0) {
                int32_t q = L->h[s->send].op, nx = S->next_msg[q];
                S->sent[q] = 1;
                if (try_queue(L, S, L->h[2 * q + 1].step) < 0) goto out;
                if (nx >= 0 && try_queue(L, S, L->h[2 * nx].step) < 0) goto out;
            }
            if (s->recv >= 0) {
                int32_t q = L->h[s->recv].op, nx = S->next_msg[q];
                S->received[q] = 1;
                if (nx >= 0 && try_queue(L, S, L->h[2 * nx + 1].step) < 0) goto out;
                nx = q;
                for (int k = 0; k < CC_FIFO_SLOTS && nx >= 0; k++)
                    nx = S->next_msg[nx];
                if (nx >= 0 && try_queue(L, S, L->h[2 * nx].step) < 0) goto out;
            }
        }
    }
    rc = 1;
out:
    sim_clear(L, S);
    free(cnt);
    free(fill);
    free(ran);
    free(stamp);
    free(tbcount);
    return rc;
}

/* The messages of each connection (sender, receiver, channel) in program order: for every
 * sending operation the previous one on its connection (prev, may be NULL) and the next. */
static int link_messages(const lowerer *L, int32_t *prev, int32_t *next) {
    const weft_cc_program *p = L->p;
    weft_map last = {0}; /* connection -> its latest message + 1 */
    int rc = 0;
    for (size_t i = 0; i < p->nops; i++) {
        next[i] = -1;
        if (prev) prev[i] = -1;
    }
    for (size_t i = 0; i < p->nops && rc == 0; i++) {
        if (L->h[2 * i].kind != H_SEND) continue;
        const cc_op *op = &p->ops[i];
        uint64_t key = ((uint64_t)(uint32_t)op->src.rank << 40) ^
                       ((uint64_t)(uint32_t)op->dst.rank << 8) ^ (uint64_t)chan_of(L, op);
        uint64_t *v = weft_map_put(&last, key, NULL);
        if (v == NULL) {
            rc = -1;
            break;
        }
        if (*v) {
            if (prev) prev[i] = (int32_t)*v - 1;
            next[*v - 1] = (int32_t)i;
        }
        *v = (uint64_t)i + 1;
    }
    weft_map_free(&last);
    return rc;
}

/* Orders every block's steps; undoes fusions until the simulation completes. */
static int schedule(lowerer *L) {
    const weft_cc_program *p = L->p;
    sim S;
    memset(&S, 0, sizeof S);
    int rc = -1;
    S.prev_msg = malloc((p->nops + 1) * sizeof *S.prev_msg);
    S.next_msg = malloc((p->nops + 1) * sizeof *S.next_msg);
    S.sent = malloc(p->nops + 1);
    S.received = malloc(p->nops + 1);
    if (!S.prev_msg || !S.next_msg || !S.sent || !S.received) goto out;
    for (int attempt = 0;; attempt++) {
        int r = simulate(L, &S);
        if (r < 0) goto out;
        if (r == 1) break;
        /* stalled: undo the fusions among the steps that did not run — those whose message
         * already arrived first, all of them after a few tries */
        int undone = 0;
        size_t ns = L->nsteps;
        for (int all = 0; all < 2 && !undone; all++)
            for (size_t i = 0; i < ns; i++) {
                lstep *s = &L->steps[i];
                if (s->done || s->recv < 0 || s->send < 0) continue;
                if (!all && attempt < 8 && !S.sent[L->h[s->recv].op]) continue;
                if (unfuse(L, (int32_t)i) != 0) goto out;
                undone++;
            }
        if (!undone) {
            cc_report(p, L->d, WEFT_SEV_ERROR, (weft_lang_loc){-1, 0, 0}, -1,
                      "internal error: the schedule stalls without any fused step");
            L->errors++;
            rc = -2;
            goto out;
        }
    }
    rc = 0;
out:
    free(S.prev_msg);
    free(S.next_msg);
    free(S.sent);
    free(S.received);
    return rc;
}

static weft_result build(lowerer *L, weft_algo **out) {
    weft_result res = WEFT_OK;
    const weft_cc_program *p = L->p;
    int32_t N = p->nranks, I = p->instances;
    int32_t mult =
        weft_coll_large(p->coll, WEFT_BUF_INPUT) || weft_coll_large(p->coll, WEFT_BUF_OUTPUT) ? N
                                                                                              : 1;
    weft_algo *a = NULL;
    int32_t *order = NULL, *maxscr = NULL;
    int32_t *roots = L->roots, *ntbs = L->ntbs, *rootfirst = L->rootfirst;
    size_t nroots = L->nroots;
    int32_t *need = NULL, *touched = NULL, *tbpos = NULL;
    /* per (rank, tb, other tb): the latest step of the other tb the tb already waited for,
     * stored + 1 (a hash map: a dense matrix is tbs x tbs per rank) */
    weft_map known = {0};

    a = weft_algo_new(p->name, p->coll, N, mult * p->chunks * I);
    WEFT_CHECK_ALLOC(a);
    a->proto = p->proto;
    a->inplace = p->inplace;
    a->outofplace = p->outofplace;
    a->launch = p->launch;
    a->min_bytes = p->min_bytes;
    a->max_bytes = p->max_bytes;
    a->graph_max_bytes = p->graph_max_bytes;
    a->root = weft_coll_rooted(p->coll) ? p->root : 0;
    a->file = weft_strdup(weft_lang_source_path(p->src->sources, 0));

    /* steps in key order within each block; tbpos[k] = position in order[] of block k's first
     * step, blocks numbered as in roots[] */
    order = malloc((L->nsteps + 1) * sizeof *order);
    tbpos = malloc((nroots + 1) * sizeof *tbpos);
    WEFT_CHECK_ALLOC(order);
    WEFT_CHECK_ALLOC(tbpos);
    for (size_t i = 0; i < L->nsteps; i++)
        order[i] = (int32_t)i;
    {
        sortrec *rec = malloc((L->nsteps + 1) * sizeof *rec);
        WEFT_CHECK_ALLOC(rec);
        for (size_t i = 0; i < L->nsteps; i++) {
            const lstep *st = &L->steps[i];
            rec[i] = (sortrec){st->rank, st->tb, st->idx, 0, (int32_t)i};
        }
        qsort(rec, L->nsteps, sizeof *rec, cmp_sortrec);
        for (size_t i = 0; i < L->nsteps; i++)
            order[i] = rec[i].id;
        free(rec);
    }
    {
        int32_t cur_r = -1, cur_t = -1, idx = 0;
        for (size_t i = 0; i < L->nsteps; i++) {
            lstep *s = &L->steps[order[i]];
            if (s->rank != cur_r || s->tb != cur_t) {
                cur_r = s->rank;
                cur_t = s->tb;
                idx = 0;
                tbpos[rootfirst[s->rank] + s->tb] = (int32_t)i;
            }
            s->idx = idx++;
        }
    }

    /* waits: per other block the latest step needed, minus what an earlier step of the same
     * block already waited for */
    int32_t maxtbs = 1;
    for (int32_t r = 0; r < N; r++)
        if (ntbs[r] > maxtbs) maxtbs = ntbs[r];
    need = malloc((size_t)maxtbs * sizeof *need);
    touched = malloc((size_t)maxtbs * sizeof *touched);
    WEFT_CHECK_ALLOC(need);
    WEFT_CHECK_ALLOC(touched);
    for (int32_t t = 0; t < maxtbs; t++)
        need[t] = -1;
    for (size_t i = 0; i < L->nsteps; i++) {
        lstep *s = &L->steps[order[i]];
        /* need[] is all -1 between steps; touched[] lists the entries this step sets */
        int32_t ntouched = 0;
        int32_t parts[3] = {s->recv, s->send, s->local};
        for (int j = 0; j < 3; j++) {
            if (parts[j] < 0) continue;
            const half *hh = &L->h[parts[j]];
            for (int32_t k = 0; k < hh->ndeps; k++) {
                const lstep *u = &L->steps[L->h[L->deps[hh->dep0 + k]].step];
                if (u == s) continue;
                if (u->tb != s->tb) {
                    if (need[u->tb] < 0) touched[ntouched++] = u->tb;
                    if (u->idx > need[u->tb]) need[u->tb] = u->idx;
                } else if (u->idx >= s->idx) {
                    cc_report(p, L->d, WEFT_SEV_ERROR, p->ops[hh->op].loc, -1,
                              "internal error: a step would wait for a later step of its own "
                              "thread block (rank %d tb %d)",
                              s->rank, s->tb);
                    WEFT_FAIL(WEFT_ERR_INTERNAL);
                }
            }
        }
        s->wait0 = (int64_t)L->nwaits;
        /* in block order, so that the nops come out in a stable order (a step can wait for
         * thousands of blocks: no quadratic sort) */
        if (ntouched > 1) qsort(touched, (size_t)ntouched, sizeof *touched, cmp_i32);
        for (int32_t ti = 0; ti < ntouched; ti++) {
            int32_t t = touched[ti], want = need[t];
            uint64_t key =
                ((uint64_t)s->rank * (uint64_t)maxtbs + (uint64_t)s->tb) * (uint64_t)maxtbs +
                (uint64_t)t;
            uint64_t *kn = weft_map_put(&known, key, NULL);
            need[t] = -1;
            if (kn == NULL) WEFT_FAIL(WEFT_ERR_NOMEM);
            if ((uint64_t)want + 1 <= *kn) continue;
            *kn = (uint64_t)want + 1;
            if (weft_grow((void **)&L->waits, &L->capwaits, L->nwaits + 1, sizeof *L->waits))
                WEFT_FAIL(WEFT_ERR_NOMEM);
            L->waits[L->nwaits++] = t;
            L->waits[L->nwaits++] = want;
            s->nwaits++;
        }
    }
    /* the whole schedule, nops and instances counted, against what weft verifies and runs (the
     * evaluator's bound counted receives only) */
    {
        int64_t total = 0, moves = 0;
        for (size_t i = 0; i < L->nsteps; i++) {
            const lstep *ls = &L->steps[i];
            cc_ref src, dst;
            step_refs(L, ls, &src, &dst);
            total += 1 + (ls->nwaits > 1 ? ls->nwaits - 1 : 0);
            moves += dst.cnt;
        }
        total *= I;
        moves *= I;
        if (total > WEFT_IR_MAX_STEPS || moves > WEFT_IR_MAX_MOVES) {
            cc_report(p, L->d, WEFT_SEV_ERROR, p->header_loc, -1,
                      "the schedule would have %lld steps moving %lld chunks; weft verifies and "
                      "runs at most %d steps moving %d chunks",
                      (long long)total, (long long)moves, WEFT_IR_MAX_STEPS, WEFT_IR_MAX_MOVES);
            WEFT_FAIL(WEFT_ERR_INPUT);
        }
    }
    /* final indices: a nop for every wait but the last, just before the step */
    for (size_t i = 0, cur = (size_t)-1, idx = 0; i < L->nsteps; i++) {
        lstep *s = &L->steps[order[i]];
        size_t blk = (size_t)rootfirst[s->rank] + (size_t)s->tb;
        if (blk != cur) {
            cur = blk;
            idx = 0;
        }
        idx += s->nwaits > 1 ? (size_t)s->nwaits - 1 : 0;
        s->final_idx = (int32_t)idx++;
    }
    for (size_t i = 0; i < L->nsteps; i++) {
        lstep *s = &L->steps[order[i]];
        for (int32_t w = 0; w < s->nwaits; w++) {
            int32_t t = L->waits[s->wait0 + 2 * w], ai = L->waits[s->wait0 + 2 * w + 1];
            L->steps[order[tbpos[rootfirst[s->rank] + t] + ai]].hasdep = 1;
        }
    }

    /* scratch: one copy per instance, each as large as the largest rank's use */
    maxscr = calloc((size_t)N + 1, sizeof *maxscr);
    WEFT_CHECK_ALLOC(maxscr);
    int32_t sper = 0;
    for (size_t i = 0; i < L->nsteps; i++) {
        cc_ref refs[2];
        step_refs(L, &L->steps[i], &refs[0], &refs[1]);
        for (int j = 0; j < 2; j++)
            if (refs[j].buf >= CC_BUF_SCRATCH0) {
                int32_t end =
                    p->scratch[refs[j].buf - CC_BUF_SCRATCH0].base + refs[j].off + refs[j].cnt;
                if (end > maxscr[refs[j].rank]) maxscr[refs[j].rank] = end;
                if (end > sper) sper = end;
            }
    }
    int32_t C = 1;
    for (size_t i = 0; i < nroots; i++)
        if (L->nodes[roots[i]].chan + 1 > C) C = L->nodes[roots[i]].chan + 1;
    for (int32_t r = 0; r < N; r++) {
        weft_gpu *g = &a->gpus[r];
        g->i_chunks = p->in_chunks * I;
        g->o_chunks = p->out_chunks * I;
        g->s_chunks = maxscr[r] ? (I - 1) * sper + maxscr[r] : 0;
    }

    /* blocks and steps, instance by instance */
    for (int32_t c = 0; c < I; c++)
        for (size_t i = 0; i < nroots; i++) {
            const node *n = &L->nodes[roots[i]];
            int32_t ch = (n->chan < 0 ? 0 : n->chan) + c * C;
            if (weft_gpu_add_tb(&a->gpus[n->rank], n->send, n->recv, ch) == NULL)
                WEFT_FAIL(WEFT_ERR_NOMEM);
        }
    for (int32_t c = 0; c < I; c++)
        for (size_t i = 0; i < L->nsteps; i++) {
            const lstep *s = &L->steps[order[i]];
            weft_tb *tb = &a->gpus[s->rank].tbs[c * ntbs[s->rank] + s->tb];
            weft_step st;
            for (int32_t w = 0; w + 1 < s->nwaits; w++) {
                int32_t t = L->waits[s->wait0 + 2 * w], ai = L->waits[s->wait0 + 2 * w + 1];
                memset(&st, 0, sizeof st);
                st.type = WEFT_STEP_NOP;
                st.srcbuf = WEFT_BUF_INPUT;
                st.dstbuf = WEFT_BUF_OUTPUT;
                st.srcoff = st.dstoff = -1;
                st.depid = c * ntbs[s->rank] + t;
                st.deps = L->steps[order[tbpos[rootfirst[s->rank] + t] + ai]].final_idx;
                if (weft_tb_add_step(tb, &st) < 0) WEFT_FAIL(WEFT_ERR_NOMEM);
            }
            fill_step(L, s, c, sper, &st);
            if (s->nwaits > 0) {
                int32_t w = s->nwaits - 1;
                int32_t t = L->waits[s->wait0 + 2 * w], ai = L->waits[s->wait0 + 2 * w + 1];
                st.depid = c * ntbs[s->rank] + t;
                st.deps = L->steps[order[tbpos[rootfirst[s->rank] + t] + ai]].final_idx;
            }
            st.hasdep = s->hasdep;
            if (weft_tb_add_step(tb, &st) < 0) WEFT_FAIL(WEFT_ERR_NOMEM);
        }
    a->nchannels = C * I;
    *out = a;
    a = NULL;
fail:
    weft_algo_free(a);
    free(order);
    free(maxscr);
    weft_map_free(&known);
    free(need);
    free(touched);
    free(tbpos);
    return res;
}

/* Puts a local operation into the block of step end `target` on channel `chan`, as its hints
 * allow; returns 0 when they do not (the operation stays a step of its own). */
static int join_block(lowerer *L, int32_t op, int32_t target, int32_t chan) {
    const cc_op *o = &L->p->ops[op];
    half *h = &L->h[2 * op];
    char why[160];
    if (o->hint[CC_HINT_CHAN] >= 0 && o->hint[CC_HINT_CHAN] != chan) return 0;
    if (h->node >= 0) {
        if (conflict(L, h->node, target, why, sizeof why) != NULL) return 0;
        unite(L, h->node, target);
    }
    return 1;
}

/* Busy blocks: (block, depth) pairs that already hold a step, so that local steps go where they
 * do not delay another step of the same depth. */
static uint64_t busy_key(int32_t root, int32_t depth) {
    return ((uint64_t)(uint32_t)root << 32) | (uint32_t)depth;
}

static int mark_busy(lowerer *L, weft_map *busy, int32_t hi) {
    uint64_t *v = weft_map_put(busy, busy_key(find(L, L->h[hi].node), L->depth[hi]), NULL);
    if (v == NULL) return -1;
    *v = 1;
    return 0;
}

/* A local step without a thread-block hint, among the blocks of what it waits for, latest first:
 * the first on its channel with no other step at its depth (it then waits for one step in that
 * block without a dependency); when each has one, a local block of its rank that has none. 0 when
 * it has nothing to wait for, -1 when memory runs out. */
static int place_local(lowerer *L, weft_map *busy, int32_t hl) {
    half *h = &L->h[hl];
    int32_t want = L->p->ops[h->op].hint[CC_HINT_CHAN], chan = want < 0 ? 0 : want;
    int32_t *cand = malloc(((size_t)h->ndeps + 1) * sizeof *cand), n = 0;
    if (cand == NULL) return -1;
    for (int32_t k = 0; k < h->ndeps; k++) {
        int32_t dh = L->deps[h->dep0 + k];
        if (L->h[dh].node >= 0) cand[n++] = dh;
    }
    /* latest operation first, as insertion sort: a step waits for few */
    for (int32_t a = 1; a < n; a++)
        for (int32_t b = a; b > 0 && L->h[cand[b]].op > L->h[cand[b - 1]].op; b--) {
            int32_t t = cand[b];
            cand[b] = cand[b - 1];
            cand[b - 1] = t;
        }
    int32_t d = L->depth[hl];
    for (int32_t a = 0; a < n && h->node < 0; a++) {
        int32_t root = find(L, L->h[cand[a]].node);
        if (want >= 0 && L->nodes[root].chan != want) continue;
        if (weft_map_get(busy, busy_key(root, d)) == NULL) h->node = root;
    }
    for (int32_t k = 0; n > 0 && h->node < 0; k++) {
        int32_t b = get_node(L, h->rank, NK_LOCAL, WEFT_IR_MAX_RANKS + k, chan);
        if (b < 0) break;
        if (weft_map_get(busy, busy_key(find(L, b), d)) == NULL) h->node = b;
    }
    free(cand);
    if (L->nomem) return -1;
    return h->node >= 0 && mark_busy(L, busy, hl) != 0 ? -1 : 0;
}

/* The copy fusions the trace found legal, where hints and message order allow them:
 * - a receive whose value one local copy or reduce Z -> Y alone reads stores into Y itself (a
 *   receive `r`, or `rrc` combining with Y); the local operation joins the receiving block. The
 *   step then waits for what that operation waits for, so no other message of its connection may
 *   come between the two in program order (it could not be received before it);
 * - a local copy X -> Y whose Y a receiving reduce reads first is not emitted: that step
 *   combines with X instead (`rrc`/`rrcs`/`rrs` with src X, dst Y).
 * Decided before dependencies are computed: the fused steps read what their parts read. */
static int copy_fusions(lowerer *L) {
    const weft_cc_program *p = L->p;
    int32_t *next = malloc((p->nops + 1) * sizeof *next);
    uint8_t *forwarded = calloc(p->nops + 1, 1);
    int rc = -1;
    /* the next message on each operation's connection */
    if (!next || !forwarded || link_messages(L, NULL, next) != 0) goto out;
    /* receives whose value a later send forwards keep it (an rcs/rrcs/rrs fusion) */
    for (size_t i = 0; i < p->nops; i++)
        if (p->fuse_from[i] >= 0) forwarded[p->fuse_from[i]] = 1;
    for (size_t e = 0; e < p->nops; e++) {
        int32_t r = p->recv_into[e];
        if (r < 0 || L->h[2 * e].kind != H_LOCAL || L->h[2 * r].kind != H_SEND) continue;
        if (forwarded[r] || (next[r] >= 0 && next[r] < (int32_t)e)) continue;
        int32_t target = L->h[2 * r + 1].node;
        if (!join_block(L, (int32_t)e, target, chan_of(L, &p->ops[r]))) continue;
        L->h[2 * e].node = target;
        L->into[e] = r;
    }
    for (size_t k = 0; k < p->nops; k++) {
        int32_t a = p->feed[k], target, chan;
        /* a copy that a receive already carries out stays there */
        if (a < 0 || L->h[2 * a].kind != H_LOCAL || L->into[a] >= 0) continue;
        if (L->h[2 * k].kind == H_SEND) {
            target = L->h[2 * k + 1].node;
            chan = chan_of(L, &p->ops[k]);
        } else if (L->into[k] >= 0) {
            target = L->h[2 * L->into[k] + 1].node;
            chan = chan_of(L, &p->ops[L->into[k]]);
        } else {
            continue;
        }
        if (!join_block(L, a, target, chan)) continue;
        L->absorb[k] = a;
        L->h[2 * a].kind = H_NONE;
    }
    rc = L->nomem ? -1 : 0;
out:
    free(next);
    free(forwarded);
    return rc;
}

weft_result weft_cc_lower(const weft_cc_program *p, weft_algo **out, weft_diag *d) {
    weft_result res = WEFT_OK;
    lowerer L;
    int32_t *consumer = NULL;
    weft_map busy = {0}; /* blocks and depths that hold a step (place_local) */
    memset(&L, 0, sizeof L);
    L.p = p;
    L.d = d;
    *out = NULL;
    if (!p->checked) return WEFT_ERR_USAGE;
    if (check_segments(&L) != 0) WEFT_FAIL(WEFT_ERR_INPUT);
    {
        /* before any work: every operation between ranks is a receive step, and a send step of
         * its own unless it forwards what a receive stored (fusion can only be undone) */
        int64_t least = 0;
        for (size_t i = 0; i < p->nops; i++)
            if (p->ops[i].kind != CC_OP_ENSURE && p->ops[i].src.rank != p->ops[i].dst.rank)
                least += p->fuse_from[i] >= 0 ? 1 : 2;
        least *= p->instances;
        if (least > WEFT_IR_MAX_STEPS) {
            cc_report(p, d, WEFT_SEV_ERROR, p->header_loc, -1,
                      "the schedule would have at least %lld steps; weft verifies and runs at "
                      "most %d",
                      (long long)least, WEFT_IR_MAX_STEPS);
            WEFT_FAIL(WEFT_ERR_INPUT);
        }
    }
    L.nhalves = 2 * (int64_t)p->nops;
    L.h = calloc((size_t)L.nhalves + 1, sizeof *L.h);
    L.absorb = malloc((p->nops + 1) * sizeof *L.absorb);
    L.into = malloc((p->nops + 1) * sizeof *L.into);
    WEFT_CHECK_ALLOC(L.h);
    WEFT_CHECK_ALLOC(L.absorb);
    WEFT_CHECK_ALLOC(L.into);
    L.chan = malloc((p->nops + 1) * sizeof *L.chan);
    WEFT_CHECK_ALLOC(L.chan);
    for (size_t i = 0; i < p->nops; i++)
        L.absorb[i] = L.into[i] = -1;
    for (size_t i = 0; i < p->nops; i++) {
        const cc_op *op = &p->ops[i];
        half *hs = &L.h[2 * i], *hr = &L.h[2 * i + 1];
        hs->op = hr->op = (int32_t)i;
        hs->step = hr->step = -1;
        hs->node = hr->node = -1;
        if (op->kind == CC_OP_ENSURE || p->noop[i]) continue;
        if (op->src.rank == op->dst.rank) {
            hs->kind = H_LOCAL;
            hs->rank = op->src.rank;
        } else {
            hs->kind = H_SEND;
            hs->rank = op->src.rank;
            hr->kind = H_RECV;
            hr->rank = op->dst.rank;
        }
    }
    if (place_channels(&L) != 0) WEFT_FAIL(WEFT_ERR_NOMEM);
    /* connection ends and hints */
    for (size_t i = 0; i < p->nops; i++) {
        const cc_op *op = &p->ops[i];
        half *hs = &L.h[2 * i], *hr = &L.h[2 * i + 1];
        if (hs->kind == H_SEND) {
            int32_t ch = chan_of(&L, op);
            hs->node = get_node(&L, hs->rank, NK_SEND, hr->rank, ch);
            hr->node = get_node(&L, hr->rank, NK_RECV, hs->rank, ch);
            if (hs->node < 0 || hr->node < 0) WEFT_FAIL(WEFT_ERR_NOMEM);
            if (op->hint[CC_HINT_SENDTB] >= 0)
                apply_hint(&L, op, CC_HINT_SENDTB, hs->rank, hs->node);
            if (op->hint[CC_HINT_RECVTB] >= 0)
                apply_hint(&L, op, CC_HINT_RECVTB, hr->rank, hr->node);
        } else if (hs->kind == H_LOCAL && op->hint[CC_HINT_TB] >= 0) {
            hs->node = get_node(&L, hs->rank, NK_LABEL, op->hint[CC_HINT_TB], 0);
            if (hs->node < 0) WEFT_FAIL(WEFT_ERR_NOMEM);
            node *root = &L.nodes[find(&L, hs->node)];
            if (op->hint[CC_HINT_CHAN] >= 0) {
                if (root->chan >= 0 && root->chan != op->hint[CC_HINT_CHAN]) {
                    char why[96];
                    snprintf(why, sizeof why, "uses channel %d (a thread block uses one channel)",
                             root->chan);
                    hint_error(&L, op, CC_HINT_TB, hs->rank, why);
                } else {
                    root->chan = op->hint[CC_HINT_CHAN];
                }
            }
        }
        if (L.nomem) WEFT_FAIL(WEFT_ERR_NOMEM);
    }
    if (L.errors) WEFT_FAIL(WEFT_ERR_INPUT);
    if (copy_fusions(&L) != 0 || compute_deps(&L) != 0) WEFT_FAIL(WEFT_ERR_NOMEM);

    /* steps and fusion, in program order */
    for (size_t i = 0; i < p->nops; i++) {
        const cc_op *op = &p->ops[i];
        int32_t si = (int32_t)(2 * i), ri = (int32_t)(2 * i + 1);
        half *hs = &L.h[si], *hr = &L.h[ri];
        if (hs->kind == H_NONE) continue;
        if (hs->kind == H_LOCAL && L.into[i] >= 0) {
            /* carried out by the receive it reads: that step stores into DST */
            int32_t st = L.h[2 * L.into[i] + 1].step;
            L.steps[st].local = si;
            L.steps[st].type = op->kind == CC_OP_COPY ? WEFT_STEP_RECV : WEFT_STEP_RRC;
            hs->step = st;
            continue;
        }
        if (hs->kind == H_LOCAL) {
            hs->step = new_step(&L, op->kind == CC_OP_COPY ? WEFT_STEP_CPY : WEFT_STEP_RE, hs->rank,
                                (int32_t)i);
            if (hs->step < 0) WEFT_FAIL(WEFT_ERR_NOMEM);
            L.steps[hs->step].local = si;
            continue;
        }
        int32_t from = p->fuse_from[i];
        int fused = 0;
        if (from >= 0) {
            half *rp = &L.h[2 * from + 1];
            const cc_op *pop = &p->ops[from];
            lstep *ps = rp->step >= 0 ? &L.steps[rp->step] : NULL;
            char why[160];
            if (rp->kind == H_RECV && ps && ps->send < 0 && ps->local < 0 &&
                chan_of(&L, pop) == chan_of(&L, op) &&
                conflict(&L, rp->node, hs->node, why, sizeof why) == NULL) {
                unite(&L, rp->node, hs->node);
                ps->send = si;
                ps->type = ps->type == WEFT_STEP_RECV
                               ? WEFT_STEP_RCS
                               : (p->dead[from] ? WEFT_STEP_RRS : WEFT_STEP_RRCS);
                hs->step = rp->step;
                fused = 1;
            }
        }
        if (!fused) {
            hs->step = new_step(&L, WEFT_STEP_SEND, hs->rank, (int32_t)i);
            if (hs->step < 0) WEFT_FAIL(WEFT_ERR_NOMEM);
            L.steps[hs->step].send = si;
        }
        hr->step = new_step(&L, op->kind == CC_OP_COPY ? WEFT_STEP_RECV : WEFT_STEP_RRC, hr->rank,
                            (int32_t)i);
        if (hr->step < 0) WEFT_FAIL(WEFT_ERR_NOMEM);
        L.steps[hr->step].recv = ri;
    }

    /* the send and receive ends towards one peer on one channel share a block */
    for (size_t i = 0; i < p->nops; i++) {
        half *hs = &L.h[2 * i], *hr = &L.h[2 * i + 1];
        if (hs->kind != H_SEND) continue;
        int32_t ch = chan_of(&L, &p->ops[i]);
        /* on the sender: its send end with its receive end from the same peer, if any */
        int32_t back = lookup_node(&L, hs->rank, NK_RECV, hr->rank, ch);
        char why[160];
        if (back >= 0 && conflict(&L, hs->node, back, why, sizeof why) == NULL)
            unite(&L, hs->node, back);
    }

    /* local steps: into the block of a step they wait for (place_local); without any, into the
     * block of their first consumer; else a local block */
    for (int64_t hi = 0; hi < L.nhalves; hi++)
        if (L.h[hi].kind != H_NONE && L.h[hi].node >= 0 && mark_busy(&L, &busy, (int32_t)hi))
            WEFT_FAIL(WEFT_ERR_NOMEM);
    for (size_t i = 0; i < p->nops; i++)
        if (L.h[2 * i].kind == H_LOCAL && L.h[2 * i].node < 0 &&
            place_local(&L, &busy, (int32_t)(2 * i)) != 0)
            WEFT_FAIL(WEFT_ERR_NOMEM);
    for (int pass = 1; pass < 3; pass++) {
        if (pass == 1) {
            consumer = malloc((p->nops + 1) * sizeof *consumer);
            WEFT_CHECK_ALLOC(consumer);
            for (size_t i = 0; i < p->nops; i++)
                consumer[i] = -1;
            for (int64_t hi = 0; hi < L.nhalves; hi++) {
                const half *c = &L.h[hi];
                if (c->kind == H_NONE || c->node < 0) continue;
                for (int32_t k = 0; k < c->ndeps; k++) {
                    const half *dh = &L.h[L.deps[c->dep0 + k]];
                    int32_t *cur = &consumer[dh->op];
                    if (dh->kind != H_LOCAL || dh->node >= 0) continue;
                    if (*cur < 0 || c->op < L.h[*cur].op) *cur = (int32_t)hi;
                }
            }
        }
        for (size_t i = 0; i < p->nops; i++) {
            const cc_op *op = &p->ops[i];
            half *hl = &L.h[2 * i];
            if (hl->kind != H_LOCAL || hl->node >= 0) continue;
            int32_t want = op->hint[CC_HINT_CHAN];
            int32_t best = pass == 1 ? consumer[i] : -1;
            if (best >= 0) {
                node *root = &L.nodes[find(&L, L.h[best].node)];
                if (want < 0 || root->chan == want) hl->node = (int32_t)(root - L.nodes);
                continue;
            }
            if (pass == 2) {
                hl->node = get_node(&L, hl->rank, NK_LOCAL, -1, want < 0 ? 0 : want);
                if (hl->node < 0) WEFT_FAIL(WEFT_ERR_NOMEM);
            }
        }
    }
    if (L.nomem) WEFT_FAIL(WEFT_ERR_NOMEM);
    if (assign_tbs(&L) != 0) WEFT_FAIL(WEFT_ERR_NOMEM);
    int sr = schedule(&L);
    if (sr == -2) WEFT_FAIL(WEFT_ERR_INTERNAL);
    if (sr != 0) WEFT_FAIL(WEFT_ERR_NOMEM);
    if (check_send_buffer(&L) != 0) WEFT_FAIL(WEFT_ERR_INPUT);
    WEFT_CHECK(build(&L, out));
fail:
    free(consumer);
    weft_map_free(&busy);
    cc_flush_suppressed(p, d);
    free(L.h);
    free(L.deps);
    free(L.steps);
    free(L.nodes);
    weft_map_free(&L.node_of);
    free(L.waits);
    free(L.roots);
    free(L.ntbs);
    free(L.rootfirst);
    free(L.absorb);
    free(L.into);
    free(L.chan);
    free(L.depth);
    return res;
}
