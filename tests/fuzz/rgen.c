/* rgen.c — random schedules built as data flows (rgen.h).
 *
 * A schedule is made in two stages. First every value the collective delivers (a run of w
 * chunks of one source, or the reduction of one chunk run over all ranks) gets a plan: a random
 * reduction tree over the ranks and a random distribution tree from where the value is complete
 * to every rank that needs it, written as operations over value nodes (a value held in cells of
 * a rank, or a message in flight) with random step types: s, r, rcs, rrs, rrc, rrcs, cpy, re.
 * Then the operations of all plans are emitted one at a time in a random order that respects
 * their data flow: a temporary gets its cells when it is written (scratch, or output chunks that
 * hold nothing needed), a thread block is picked or made per connection end, and the
 * dependencies on other thread blocks follow from who last wrote and read each cell. Since every
 * step is emitted after everything it waits for, the schedule completes with unbounded
 * connection buffers; whether it is right with bounded ones, for every count and in its modes,
 * is for the verifier to say. */
#include "rgen.h"

#include <stdlib.h>
#include <string.h>

#define RG_MAXR    8
#define RG_MAXK    4
#define RG_MEM     (RG_MAXR * RG_MAXK) /* chunks of one user memory at most */
#define RG_MAXS    48                  /* scratch chunks */
#define RG_NCELL   (2 * RG_MEM + RG_MAXS)
#define RG_MAXTB   24
#define RG_MAXNODE 3072
#define RG_MAXOP   3072

void rgen_opts_init(rgen_opts *o) {
    o->min_ranks = 2;
    o->max_ranks = 4;
    o->max_k = 3;
    o->max_channels = 2;
    o->unsafe_pct = 5;
}

typedef struct rng {
    uint64_t s;
} rng;

static uint64_t rg_next(rng *r) { /* splitmix64 */
    uint64_t z = (r->s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}
static int rg_below(rng *r, int n) {
    return n <= 1 ? 0 : (int)(rg_next(r) % (uint64_t)n);
}
static int rg_pct(rng *r, int pct) {
    return rg_below(r, 100) < pct;
}

enum { NODE_CELL, NODE_MSG };

typedef struct node {
    int kind, rank, w;
    int to, chan;      /* messages: receiver; channel, set when sent */
    weft_buf buf;      /* cells: where the value is (fixed nodes: from the start) */
    int off;           /* -1: not placed yet */
    int fixed, final;  /* fixed: buf/off given; final: the collective's result (locks its cells) */
    int same_as;       /* `re`: the result lives where this node (its incoming value) is */
    int readers, made; /* operations still to read it; produced */
} node;

typedef struct op {
    weft_step_type type;
    int rank;
    int in, src, dstin, dst, out; /* nodes or -1; dstin: what `re` reads in its destination */
    int done;
} op;

typedef struct cellst {
    int holder;          /* node whose value is here and still to be read, or -1 */
    int locked;          /* a final value is here */
    int wtb, wstep;      /* the last step that wrote it */
    int rstep[RG_MAXTB]; /* per tb, its last step that read it since that write (-1) */
} cellst;

typedef struct gen {
    rng r;
    weft_algo *a;
    weft_coll coll;
    int N, k, w_max, inplace, root, nch, out_pct, unsafe;
    int nin, nout; /* chunks of the input and output */
    node nodes[RG_MAXNODE];
    int nn;
    op ops[RG_MAXOP];
    int nops;
    cellst cell[RG_MAXR][RG_NCELL];
    int smax[RG_MAXR];
    int fail;
} gen;

/* ---- cells: the memory of a rank, aliasing as the call mode does ------------------------- */
static int cell_of(const gen *g, int rank, weft_buf b, int x) {
    int32_t seg;
    int m = weft_buf_mem(g->coll, g->inplace, rank, b, &seg);
    if (m == WEFT_MEM_SCRATCH) return 2 * RG_MEM + x;
    return m * RG_MEM + seg * g->k + x;
}

static int buf_chunks(const gen *g, weft_buf b) {
    return b == WEFT_BUF_INPUT ? g->nin : b == WEFT_BUF_OUTPUT ? g->nout : RG_MAXS;
}

/* ---- nodes and operations --------------------------------------------------------------- */
static int new_node(gen *g, int kind, int rank, int w) {
    if (g->nn >= RG_MAXNODE) {
        g->fail = 1;
        return 0;
    }
    node *n = &g->nodes[g->nn];
    memset(n, 0, sizeof *n);
    n->kind = kind, n->rank = rank, n->w = w;
    n->to = n->chan = -1;
    n->off = -1;
    n->same_as = -1;
    return g->nn++;
}

static int tmp_node(gen *g, int rank, int w) {
    return new_node(g, NODE_CELL, rank, w);
}

static int msg_node(gen *g, int from, int to, int w) {
    int m = new_node(g, NODE_MSG, from, w);
    g->nodes[m].to = to;
    return m;
}

/* A value in place from the start: an input chunk run of rank. */
static int input_node(gen *g, int rank, int x, int w) {
    int n = new_node(g, NODE_CELL, rank, w);
    node *p = &g->nodes[n];
    p->buf = WEFT_BUF_INPUT, p->off = x, p->fixed = 1, p->made = 1;
    for (int i = 0; i < w; i++)
        g->cell[rank][cell_of(g, rank, WEFT_BUF_INPUT, x + i)].holder = n;
    return n;
}

static int final_node(gen *g, int rank, int x, int w) {
    int n = new_node(g, NODE_CELL, rank, w);
    node *p = &g->nodes[n];
    p->buf = WEFT_BUF_OUTPUT, p->off = x, p->fixed = 1, p->final = 1;
    return n;
}

static void add_op(gen *g, weft_step_type t, int rank, int in, int src, int dstin, int dst,
                   int out) {
    if (g->nops >= RG_MAXOP) {
        g->fail = 1;
        return;
    }
    op *o = &g->ops[g->nops++];
    o->type = t, o->rank = rank;
    o->in = in, o->src = src, o->dstin = dstin, o->dst = dst, o->out = out;
    o->done = 0;
    if (in >= 0) g->nodes[in].readers++;
    if (src >= 0) g->nodes[src].readers++;
    if (dstin >= 0) g->nodes[dstin].readers++;
}

/* ---- plans ------------------------------------------------------------------------------ */
/* A random tree over the ranks in set[0..n) rooted at set[0]: par[rank] (-1 for the root and
 * ranks outside it). Some trees are chains, most are bushier. */
static void rand_tree(gen *g, const int *set, int n, int *par) {
    int ord[RG_MAXR];
    for (int i = 0; i < RG_MAXR; i++)
        par[i] = -1;
    memcpy(ord, set, (size_t)n * sizeof *ord);
    for (int i = n - 1; i > 1; i--) {
        int j = 1 + rg_below(&g->r, i);
        int t = ord[i];
        ord[i] = ord[j], ord[j] = t;
    }
    int chain = rg_pct(&g->r, 35);
    for (int i = 1; i < n; i++)
        par[ord[i]] = chain ? ord[i - 1] : ord[rg_below(&g->r, i)];
}

static int children(gen *g, const int *par, int u, int *ch) {
    int m = 0;
    for (int c = 0; c < g->N; c++)
        if (par[c] == u) ch[m++] = c;
    for (int i = m - 1; i > 0; i--) {
        int j = rg_below(&g->r, i + 1);
        int t = ch[i];
        ch[i] = ch[j], ch[j] = t;
    }
    return m;
}

/* Where a value's destination is (dest[rank] = output chunk, -1 none). */
typedef struct dests {
    int out[RG_MAXR];
} dests;

/* The final node of u for a value that u holds in node x: x itself when it already sits in the
 * final cells (in place), else a new final node, -1 when u needs none. */
static int final_for(gen *g, int u, int x, const dests *D, int w) {
    if (D->out[u] < 0) return -1;
    const node *n = &g->nodes[x];
    if (n->fixed && cell_of(g, u, n->buf, n->off) == cell_of(g, u, WEFT_BUF_OUTPUT, D->out[u])) {
        for (int i = 0; i < w; i++) /* already there: nothing may overwrite it */
            g->cell[u][cell_of(g, u, WEFT_BUF_OUTPUT, D->out[u] + i)].locked = 1;
        return x;
    }
    return final_node(g, u, D->out[u], w);
}

static void dist_recv(gen *g, int u, int m, const int *par, const dests *D, int w);

/* u holds the value in node x: store it where u needs it and send it down the tree. */
static void dist_from(gen *g, int u, int x, const int *par, const dests *D, int w) {
    int ch[RG_MAXR], nc = children(g, par, u, ch);
    int f = final_for(g, u, x, D, w);
    if (f >= 0 && f != x) {
        add_op(g, WEFT_STEP_CPY, u, -1, x, -1, f, -1);
        if (rg_pct(&g->r, 30)) x = f; /* send the stored copy */
    }
    if (nc > 0 && rg_pct(&g->r, 25)) { /* send from a copy (scratch, or a spare output chunk) */
        int t = tmp_node(g, u, w);
        add_op(g, WEFT_STEP_CPY, u, -1, x, -1, t, -1);
        x = t;
    }
    for (int i = 0; i < nc; i++) {
        int m = msg_node(g, u, ch[i], w);
        add_op(g, WEFT_STEP_SEND, u, -1, x, -1, -1, m);
        dist_recv(g, ch[i], m, par, D, w);
    }
}

/* u receives the value in message m from its parent. */
static void dist_recv(gen *g, int u, int m, const int *par, const dests *D, int w) {
    int ch[RG_MAXR], nc = children(g, par, u, ch);
    int want = D->out[u] >= 0;
    int t = want && rg_pct(&g->r, 75) ? final_node(g, u, D->out[u], w) : tmp_node(g, u, w);
    int first = 0;
    if (nc > 0 && rg_pct(&g->r, 60)) { /* receive, store and forward in one step */
        int m1 = msg_node(g, u, ch[0], w);
        add_op(g, WEFT_STEP_RCS, u, m, -1, -1, t, m1);
        dist_recv(g, ch[0], m1, par, D, w);
        first = 1;
    } else {
        add_op(g, WEFT_STEP_RECV, u, m, -1, -1, t, -1);
    }
    if (want && !g->nodes[t].final) {
        int f = final_node(g, u, D->out[u], w);
        add_op(g, WEFT_STEP_CPY, u, -1, t, -1, f, -1);
    }
    for (int i = first; i < nc; i++) {
        int m1 = msg_node(g, u, ch[i], w);
        add_op(g, WEFT_STEP_SEND, u, -1, t, -1, -1, m1);
        dist_recv(g, ch[i], m1, par, D, w);
    }
}

/* The reduction of input run x over u's subtree. Returns the message u sends its parent, or, at
 * the tree's root z, the node that holds the whole reduction (f: z's final node, which the last
 * combine may write directly, or -1). */
static int red_up(gen *g, int u, int z, const int *par, int x, int w, int f) {
    int ch[RG_MAXR], nc = children(g, par, u, ch);
    int acc = input_node(g, u, x, w);
    for (int i = 0; i < nc; i++) {
        int mc = red_up(g, ch[i], z, par, x, w, -1);
        if (i == nc - 1 && u != z) { /* the last: the partial goes up */
            int mp = msg_node(g, u, par[u], w);
            switch (rg_below(&g->r, 3)) {
            case 0: add_op(g, WEFT_STEP_RRS, u, mc, acc, -1, -1, mp); break;
            case 1: add_op(g, WEFT_STEP_RRCS, u, mc, acc, -1, tmp_node(g, u, w), mp); break;
            default: {
                int t = tmp_node(g, u, w);
                add_op(g, WEFT_STEP_RRC, u, mc, acc, -1, t, -1);
                add_op(g, WEFT_STEP_SEND, u, -1, t, -1, -1, mp);
            }
            }
            return mp;
        }
        int last = i == nc - 1;
        int dst = last && f >= 0 && rg_pct(&g->r, 70) ? f : tmp_node(g, u, w);
        int how = rg_below(&g->r, 4);
        if (g->nodes[dst].final || how <= 1) {
            add_op(g, WEFT_STEP_RRC, u, mc, acc, -1, dst, -1);
            acc = dst;
        } else if (how == 2 || g->nodes[acc].fixed) { /* receive, then reduce into it */
            int t = tmp_node(g, u, w);
            add_op(g, WEFT_STEP_RECV, u, mc, -1, -1, t, -1);
            g->nodes[dst].same_as = t;
            add_op(g, WEFT_STEP_RE, u, -1, acc, t, dst, -1);
            acc = dst;
        } else { /* receive, then reduce it into the partial */
            int t = tmp_node(g, u, w);
            add_op(g, WEFT_STEP_RECV, u, mc, -1, -1, t, -1);
            g->nodes[dst].same_as = acc;
            add_op(g, WEFT_STEP_RE, u, -1, t, acc, dst, -1);
            acc = dst;
        }
    }
    if (u == z) return acc;
    int mp = msg_node(g, u, par[u], w);
    if (rg_pct(&g->r, 25)) {
        int t = tmp_node(g, u, w);
        add_op(g, WEFT_STEP_CPY, u, -1, acc, -1, t, -1);
        acc = t;
    }
    add_op(g, WEFT_STEP_SEND, u, -1, acc, -1, -1, mp);
    return mp;
}

static int rank_set(gen *g, const dests *D, int z, int *set) {
    int n = 0;
    set[n++] = z;
    for (int r = 0; r < g->N; r++)
        if (r != z && (D->out[r] >= 0 || rg_pct(&g->r, 8))) set[n++] = r;
    return n;
}

/* One value: input run x of rank src (src < 0: reduced over every rank) to dests. */
static void plan_value(gen *g, int src, int x, const dests *D, int w) {
    int set[RG_MAXR], par[RG_MAXR];
    if (src >= 0) {
        int n = rank_set(g, D, src, set);
        rand_tree(g, set, n, par);
        dist_from(g, src, input_node(g, src, x, w), par, D, w);
        return;
    }
    int z = rg_below(&g->r, g->N);
    for (int r = 0; r < g->N; r++)
        set[r] = r;
    set[0] = z, set[z] = 0;
    rand_tree(g, set, g->N, par);
    int f = D->out[z] >= 0 ? final_node(g, z, D->out[z], w) : -1;
    int acc = red_up(g, z, z, par, x, w, f);
    int n = rank_set(g, D, z, set);
    rand_tree(g, set, n, par);
    if (acc == f) { /* z's own result is in place: only send it on */
        dests D2 = *D;
        D2.out[z] = -1;
        dist_from(g, z, acc, par, &D2, w);
    } else {
        dist_from(g, z, acc, par, D, w);
    }
}

static void plan_all(gen *g) {
    const int N = g->N, k = g->k;
    for (int j = 0; j < k;) {
        int w = 1 + rg_below(&g->r, g->w_max < k - j ? g->w_max : k - j);
        dests D;
        for (int s = 0; s < N; s++) {
            for (int r = 0; r < N; r++)
                D.out[r] = -1;
            switch (g->coll) {
            case WEFT_COLL_ALLREDUCE:
                if (s > 0) break;
                for (int r = 0; r < N; r++)
                    D.out[r] = j;
                plan_value(g, -1, j, &D, w);
                break;
            case WEFT_COLL_REDUCE:
                if (s > 0) break;
                D.out[g->root] = j;
                plan_value(g, -1, j, &D, w);
                break;
            case WEFT_COLL_REDUCESCATTER:
                D.out[s] = j;
                plan_value(g, -1, s * k + j, &D, w);
                break;
            case WEFT_COLL_ALLGATHER:
                for (int r = 0; r < N; r++)
                    D.out[r] = s * k + j;
                plan_value(g, s, j, &D, w);
                break;
            case WEFT_COLL_GATHER:
                D.out[g->root] = s * k + j;
                plan_value(g, s, j, &D, w);
                break;
            case WEFT_COLL_BROADCAST:
                if (s > 0) break;
                for (int r = 0; r < N; r++)
                    D.out[r] = j;
                plan_value(g, g->root, j, &D, w);
                break;
            case WEFT_COLL_SCATTER:
                D.out[s] = j;
                plan_value(g, g->root, s * k + j, &D, w);
                break;
            case WEFT_COLL_ALLTOALL:
                for (int r = 0; r < N; r++) {
                    for (int q = 0; q < N; q++)
                        D.out[q] = -1;
                    D.out[r] = s * k + j;
                    plan_value(g, s, r * k + j, &D, w);
                }
                break;
            default: g->fail = 1; return;
            }
        }
        j += w;
    }
}

/* ---- emission --------------------------------------------------------------------------- */
static int cell_free_for(const gen *g, const op *o, int rank, int c) {
    const cellst *cs = &g->cell[rank][c];
    if (cs->locked) return 0;
    if (cs->holder < 0) return 1;
    /* the value there is read by this step for the last time (read before written) */
    int h = cs->holder;
    return (h == o->src || h == o->dstin) && g->nodes[h].readers == 1;
}

static int writable(const gen *g, int rank, weft_buf b, int x) {
    return weft_chunk_writable(g->coll, g->root, g->inplace, rank, g->k, b, x);
}

/* Cells for temporary node t of o's rank: a spare run of output chunks (at times), else the
 * lowest free run of scratch. Some schedules may also use what NCCL never writes. */
static int place(gen *g, const op *o, int t) {
    node *n = &g->nodes[t];
    const int u = n->rank, w = n->w;
    weft_buf bs[2] = {WEFT_BUF_OUTPUT, WEFT_BUF_INPUT};
    for (int bi = 0; bi < 2; bi++) {
        weft_buf b = bs[bi];
        int unsafe = b == WEFT_BUF_INPUT || !weft_output_written(g->coll, g->root, u);
        if (!weft_buf_exists(g->coll, g->root, g->inplace, u, b)) continue;
        if (!rg_pct(&g->r, unsafe ? (g->unsafe ? 30 : 0) : g->out_pct)) continue;
        int nb = buf_chunks(g, b), start = rg_below(&g->r, nb);
        for (int i = 0; i < nb; i++) {
            int x = (start + i) % nb, ok = x + w <= nb;
            for (int e = 0; ok && e < w; e++)
                ok = cell_free_for(g, o, u, cell_of(g, u, b, x + e)) &&
                     (g->unsafe || writable(g, u, b, x + e));
            if (ok) {
                n->buf = b, n->off = x;
                return 1;
            }
        }
    }
    int fresh = rg_pct(&g->r, 30);
    for (int x = fresh ? g->smax[u] : 0; x + w <= RG_MAXS; x++) {
        int ok = 1;
        for (int e = 0; ok && e < w; e++)
            ok = cell_free_for(g, o, u, cell_of(g, u, WEFT_BUF_SCRATCH, x + e));
        if (ok) {
            n->buf = WEFT_BUF_SCRATCH, n->off = x;
            if (x + w > g->smax[u]) g->smax[u] = x + w;
            return 1;
        }
    }
    return 0;
}

static int ready(const gen *g, const op *o) {
    if (o->done) return 0;
    if ((o->in >= 0 && !g->nodes[o->in].made) || (o->src >= 0 && !g->nodes[o->src].made) ||
        (o->dstin >= 0 && !g->nodes[o->dstin].made))
        return 0;
    if (o->dst >= 0) {
        const node *d = &g->nodes[o->dst];
        if (d->fixed)
            for (int e = 0; e < d->w; e++)
                if (!cell_free_for(g, o, o->rank, cell_of(g, o->rank, d->buf, d->off + e)))
                    return 0;
    }
    return 1;
}

/* ---- thread blocks ---------------------------------------------------------------------- */
static int find_tb(const gen *g, int u, int send, int recv, int chan) {
    const weft_gpu *gp = &g->a->gpus[u];
    for (int t = 0; t < gp->ntbs; t++) {
        const weft_tb *tb = &gp->tbs[t];
        if (tb->chan == chan &&
            ((send >= 0 && tb->send == send) || (recv >= 0 && tb->recv == recv)))
            return t;
    }
    return -1;
}

static int new_tb(gen *g, int u, int send, int recv, int chan) {
    if (g->a->gpus[u].ntbs >= RG_MAXTB) return -1;
    weft_tb *tb = weft_gpu_add_tb(&g->a->gpus[u], send, recv, chan);
    return tb ? tb->id : -1;
}

/* A tb of u on channel chan with its recv (or send) end free, to take that end, or a new one. */
static int tb_taking(gen *g, int u, int send, int recv, int chan) {
    weft_gpu *gp = &g->a->gpus[u];
    if (rg_pct(&g->r, 40)) {
        int cand[RG_MAXTB], n = 0;
        for (int t = 0; t < gp->ntbs; t++)
            if (gp->tbs[t].chan == chan && (send >= 0 ? gp->tbs[t].send : gp->tbs[t].recv) < 0)
                cand[n++] = t;
        if (n > 0) {
            int t = cand[rg_below(&g->r, n)];
            if (send >= 0)
                gp->tbs[t].send = send;
            else
                gp->tbs[t].recv = recv;
            return t;
        }
    }
    int t = new_tb(g, u, send, recv, chan);
    if (t < 0) g->fail = 1;
    return t;
}

static int tb_recv(gen *g, int u, int from, int chan) {
    int t = find_tb(g, u, -1, from, chan);
    return t >= 0 ? t : tb_taking(g, u, -1, from, chan);
}

static int tb_send(gen *g, int u, int to) {
    weft_gpu *gp = &g->a->gpus[u];
    int cand[RG_MAXTB], n = 0;
    for (int t = 0; t < gp->ntbs; t++)
        if (gp->tbs[t].send == to) cand[n++] = t;
    if (n > 0 && rg_pct(&g->r, 75)) return cand[rg_below(&g->r, n)];
    int chan = rg_below(&g->r, g->nch);
    int t = find_tb(g, u, to, -1, chan);
    return t >= 0 ? t : tb_taking(g, u, to, -1, chan);
}

/* One tb with both ends: receiving from `from` on chan and sending to `to` (-1: impossible). */
static int tb_both(gen *g, int u, int from, int chan, int to) {
    weft_gpu *gp = &g->a->gpus[u];
    int tr = find_tb(g, u, -1, from, chan), ts = find_tb(g, u, to, -1, chan);
    if (tr >= 0 && ts >= 0) return tr == ts ? tr : -1;
    if (tr >= 0) {
        if (gp->tbs[tr].send >= 0) return -1;
        gp->tbs[tr].send = to;
        return tr;
    }
    if (ts >= 0) {
        if (gp->tbs[ts].recv >= 0) return -1;
        gp->tbs[ts].recv = from;
        return ts;
    }
    int t = new_tb(g, u, to, from, chan);
    if (t < 0) g->fail = 1;
    return t;
}

static int tb_local(gen *g, int u) {
    int n = g->a->gpus[u].ntbs;
    if (n > 0 && !rg_pct(&g->r, 20)) return rg_below(&g->r, n);
    int t = new_tb(g, u, -1, -1, rg_below(&g->r, g->nch));
    if (t < 0) {
        if (n == 0) g->fail = 1;
        return n > 0 ? rg_below(&g->r, n) : -1;
    }
    return t;
}

/* ---- steps ------------------------------------------------------------------------------ */
static int append(gen *g, int u, int t, weft_step *s) {
    int i = weft_tb_add_step(&g->a->gpus[u].tbs[t], s);
    if (i < 0) g->fail = 1;
    return i;
}

/* Appends st to tb t of u after what it must wait for on other tbs: the last writer of every
 * cell it reads or writes, and the readers since of every cell it writes. One dependency rides
 * on the step, the others on nops just before it. */
static void put_step(gen *g, int u, int t, weft_step st, const int *rd, int nrd, const int *wr,
                     int nwr) {
    int need[RG_MAXTB];
    for (int i = 0; i < RG_MAXTB; i++)
        need[i] = -1;
    for (int i = 0; i < nrd + nwr; i++) {
        cellst *c = &g->cell[u][i < nrd ? rd[i] : wr[i - nrd]];
        if (c->wtb >= 0 && c->wtb != t && c->wstep > need[c->wtb]) need[c->wtb] = c->wstep;
        if (i >= nrd)
            for (int q = 0; q < RG_MAXTB; q++)
                if (q != t && c->rstep[q] > need[q]) need[q] = c->rstep[q];
    }
    int deps[RG_MAXTB], nd = 0;
    for (int q = 0; q < RG_MAXTB; q++)
        if (need[q] >= 0) deps[nd++] = q;
    for (int i = nd - 1; i > 0; i--) { /* which one rides on the step: random */
        int j = rg_below(&g->r, i + 1), x = deps[i];
        deps[i] = deps[j], deps[j] = x;
    }
    weft_gpu *gp = &g->a->gpus[u];
    for (int i = 0; i < nd; i++) {
        int q = deps[i];
        gp->tbs[q].steps[need[q]].hasdep = 1;
        weft_step *s = &st, nop;
        if (i < nd - 1) {
            nop = weft_step_make(WEFT_STEP_NOP, WEFT_BUF_INPUT, -1, WEFT_BUF_INPUT, -1, 0);
            s = &nop;
        }
        s->depid = q, s->deps = need[q];
        if (i < nd - 1 && append(g, u, t, s) < 0) return;
    }
    int idx = append(g, u, t, &st);
    if (idx < 0) return;
    for (int i = 0; i < nrd; i++)
        g->cell[u][rd[i]].rstep[t] = idx;
    for (int i = 0; i < nwr; i++) {
        cellst *c = &g->cell[u][wr[i]];
        c->wtb = t, c->wstep = idx;
        for (int q = 0; q < RG_MAXTB; q++)
            c->rstep[q] = -1;
    }
}

static void consume(gen *g, int n) {
    if (n < 0) return;
    node *p = &g->nodes[n];
    if (--p->readers > 0 || p->kind != NODE_CELL) return;
    for (int e = 0; e < p->w; e++) {
        cellst *c = &g->cell[p->rank][cell_of(g, p->rank, p->buf, p->off + e)];
        if (c->holder == n) c->holder = -1;
    }
}

/* Splits a receive-and-send o whose two ends no one tb has: the receive first, then a send of
 * what it stored (rrs stores into a new temporary for it). */
static void split(gen *g, op *o) {
    int out = o->out;
    o->out = -1;
    if (o->type == WEFT_STEP_RRS) o->dst = tmp_node(g, o->rank, g->nodes[out].w);
    o->type = o->type == WEFT_STEP_RCS ? WEFT_STEP_RECV : WEFT_STEP_RRC;
    add_op(g, WEFT_STEP_SEND, o->rank, -1, o->dst, -1, -1, out);
}

static void emit(gen *g, op *o) {
    const int u = o->rank;
    int t;
    node *in = o->in >= 0 ? &g->nodes[o->in] : NULL;
    node *out = o->out >= 0 ? &g->nodes[o->out] : NULL;
    if (in && out) {
        t = tb_both(g, u, in->rank, in->chan, out->to);
        if (t < 0 && !g->fail) {
            split(g, o);
            out = NULL;
            t = tb_recv(g, u, in->rank, in->chan);
        }
    } else if (in) {
        t = tb_recv(g, u, in->rank, in->chan);
    } else if (out) {
        t = tb_send(g, u, out->to);
    } else {
        t = tb_local(g, u);
    }
    if (g->fail || t < 0) {
        g->fail = 1;
        return;
    }
    node *dst = o->dst >= 0 ? &g->nodes[o->dst] : NULL;
    if (dst && !dst->fixed) {
        if (dst->same_as >= 0) {
            dst->buf = g->nodes[dst->same_as].buf, dst->off = g->nodes[dst->same_as].off;
        } else if (!place(g, o, o->dst)) {
            g->fail = 1;
            return;
        }
    }
    const node *src = o->src >= 0 ? &g->nodes[o->src] : NULL;
    const node *dsti = o->dstin >= 0 ? &g->nodes[o->dstin] : NULL;
    int w = in ? in->w : src ? src->w : dst->w;
    /* `re` reads its destination and its source; a step's unused side repeats its used one */
    const node *sn = o->type == WEFT_STEP_RE ? src : src ? src : dst;
    const node *dn = dst ? dst : sn;
    weft_step st = weft_step_make(o->type, sn->buf, sn->off, dn->buf, dn->off, w);
    int rd[2 * RG_MAXK], nrd = 0, wr[RG_MAXK], nwr = 0;
    for (int e = 0; e < w; e++) {
        if (src) rd[nrd++] = cell_of(g, u, src->buf, src->off + e);
        if (dsti) rd[nrd++] = cell_of(g, u, dsti->buf, dsti->off + e);
        if (dst) wr[nwr++] = cell_of(g, u, dst->buf, dst->off + e);
    }
    put_step(g, u, t, st, rd, nrd, wr, nwr);
    if (g->fail) return;
    if (out) out->chan = g->a->gpus[u].tbs[t].chan, out->made = 1;
    consume(g, o->in);
    consume(g, o->src);
    consume(g, o->dstin);
    if (dst) {
        dst->made = 1;
        for (int e = 0; e < w; e++) {
            cellst *c = &g->cell[u][cell_of(g, u, dst->buf, dst->off + e)];
            c->holder = dst->readers > 0 ? o->dst : -1;
            if (dst->final) c->locked = 1;
        }
    }
    o->done = 1;
}

static void emit_all(gen *g) {
    int left = g->nops;
    int *rd = malloc(sizeof(int) * RG_MAXOP);
    if (rd == NULL) {
        g->fail = 1;
        return;
    }
    while (left > 0 && !g->fail) {
        int n = 0;
        for (int i = 0; i < g->nops; i++)
            if (ready(g, &g->ops[i])) rd[n++] = i;
        if (n == 0) { /* temporaries hold cells a final value waits for: give up this seed */
            g->fail = 1;
            break;
        }
        /* At times the oldest ready operation (long chains), else any (wide interleavings). */
        int pick = rg_pct(&g->r, 30) ? rd[0] : rd[rg_below(&g->r, n)];
        int before = g->nops;
        emit(g, &g->ops[pick]);
        left += g->nops - before - 1;
    }
    free(rd);
}

/* ---- the schedule ----------------------------------------------------------------------- */
static const weft_coll rg_colls[] = {
    WEFT_COLL_ALLREDUCE, WEFT_COLL_ALLGATHER, WEFT_COLL_REDUCESCATTER, WEFT_COLL_ALLTOALL,
    WEFT_COLL_BROADCAST, WEFT_COLL_REDUCE,    WEFT_COLL_GATHER,        WEFT_COLL_SCATTER};

weft_algo *rgen_algo(uint64_t seed, const rgen_opts *opts) {
    rgen_opts def;
    if (opts == NULL) rgen_opts_init(&def), opts = &def;
    gen *g = calloc(1, sizeof *g);
    if (g == NULL) return NULL;
    g->r.s = seed * 0x2545f4914f6cdd1dull + 0x1234567;
    int lo = opts->min_ranks < 2 ? 2 : opts->min_ranks;
    int hi = opts->max_ranks > RG_MAXR ? RG_MAXR : opts->max_ranks < lo ? lo : opts->max_ranks;
    int mk = opts->max_k < 1 ? 1 : opts->max_k > RG_MAXK ? RG_MAXK : opts->max_k;
    g->N = lo + rg_below(&g->r, hi - lo + 1);
    g->coll = rg_colls[rg_below(&g->r, (int)(sizeof rg_colls / sizeof *rg_colls))];
    g->k = 1 + rg_below(&g->r, mk);
    g->w_max = 1 + rg_below(&g->r, 2);
    g->inplace = rg_pct(&g->r, 40);
    g->root = weft_coll_rooted(g->coll) ? rg_below(&g->r, g->N) : 0;
    g->nch = 1 + rg_below(&g->r, opts->max_channels < 1 ? 1 : opts->max_channels);
    g->out_pct = rg_below(&g->r, 60);
    g->unsafe = rg_pct(&g->r, opts->unsafe_pct);
    int both = rg_pct(&g->r, 15);
    int32_t mult =
        weft_coll_large(g->coll, WEFT_BUF_INPUT) || weft_coll_large(g->coll, WEFT_BUF_OUTPUT) ? g->N
                                                                                              : 1;
    g->nin = weft_coll_segs(g->coll, WEFT_BUF_INPUT, g->N) * g->k;
    g->nout = weft_coll_segs(g->coll, WEFT_BUF_OUTPUT, g->N) * g->k;
    for (int r = 0; r < RG_MAXR; r++)
        for (int c = 0; c < RG_NCELL; c++) {
            g->cell[r][c].holder = g->cell[r][c].wtb = g->cell[r][c].wstep = -1;
            for (int q = 0; q < RG_MAXTB; q++)
                g->cell[r][c].rstep[q] = -1;
        }
    char name[48];
    snprintf(name, sizeof name, "rgen-%llu", (unsigned long long)seed);
    weft_algo *a = g->a = weft_algo_new(name, g->coll, g->N, mult * g->k);
    if (a == NULL) goto fail;
    int pr = rg_below(&g->r, 10);
    a->proto = pr < 5 ? WEFT_PROTO_SIMPLE : pr < 9 ? WEFT_PROTO_LL : WEFT_PROTO_LL128;
    a->root = g->root;
    a->inplace = (uint8_t)(g->inplace || both);
    a->outofplace = (uint8_t)(!g->inplace || both);
    plan_all(g);
    if (!g->fail) emit_all(g);
    if (g->fail) goto fail;
    int maxchan = 0;
    for (int r = 0; r < g->N; r++) {
        weft_gpu *gp = &a->gpus[r];
        gp->i_chunks = g->nin;
        gp->o_chunks = g->nout;
        gp->s_chunks = g->smax[r];
        if (gp->ntbs == 0) { /* a rank with nothing to do still runs */
            weft_tb *tb = weft_gpu_add_tb(gp, -1, -1, 0);
            weft_step nop =
                weft_step_make(WEFT_STEP_NOP, WEFT_BUF_INPUT, -1, WEFT_BUF_INPUT, -1, 0);
            if (tb == NULL || weft_tb_add_step(tb, &nop) < 0) goto fail;
        }
        for (int t = 0; t < gp->ntbs; t++)
            if (gp->tbs[t].chan > maxchan) maxchan = gp->tbs[t].chan;
    }
    a->nchannels = maxchan + 1;
    free(g);
    return a;
fail:
    if (g->a) weft_algo_free(g->a);
    free(g);
    return NULL;
}
