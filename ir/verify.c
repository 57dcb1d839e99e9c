/* verify.c — semantic verification of a schedule: postconditions by symbolic execution with
 * exact contribution tracking, deadlock freedom over all interleavings (unbounded and bounded
 * connection buffers), data races between tbs of a rank by happens-before, bounds. */
#include "stepgraph_internal.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

static const char *const class_names[] = {WEFT_VERIFY_CLASSES(WEFT_X_COL2)};

const char *weft_verify_class_name(weft_verify_class c) {
    return weft_name_of(class_names, WEFT_VERIFY_CLASS_COUNT, c);
}

void weft_verify_opts_init(weft_verify_opts *o) {
    memset(o, 0, sizeof *o);
    o->fifo_slots = WEFT_VERIFY_FIFO_SLOTS;
    o->max_reports = 8;
}

void weft_verify_summary_free(weft_verify_summary *s) {
    if (s == NULL) return;
    free(s->pairs);
    s->pairs = NULL;
    s->npairs = 0;
}

/* ---- a bump allocator for symbolic values ---------------------------------------------- */
typedef struct arena_block {
    struct arena_block *next;
    size_t size;
    uint64_t data[];
} arena_block;

typedef struct arena {
    arena_block *head;
    size_t used;  /* words used in head */
    size_t total; /* words in all blocks */
    int over;     /* a request went past VERIFY_MAX_VALUE_WORDS */
} arena;

/* The symbolic values of one mode may take this much; past it the schedule is refused (as too
 * large to verify) rather than the machine's memory exhausted: values grow with the ranks a
 * reduction combines and the distinct chunks it mixes. */
#define VERIFY_MAX_VALUE_WORDS (((size_t)256 << 20) / sizeof(uint64_t))

static uint64_t *arena_alloc(arena *A, size_t words) {
    if (A->head == NULL || A->used + words > A->head->size) {
        size_t size = words > (1u << 17) ? words : (1u << 17);
        if (A->total + size > VERIFY_MAX_VALUE_WORDS) {
            A->over = 1;
            return NULL;
        }
        A->total += size;
        arena_block *b = malloc(sizeof *b + size * sizeof(uint64_t));
        if (b == NULL) return NULL;
        b->next = A->head;
        b->size = size;
        A->head = b;
        A->used = 0;
    }
    uint64_t *p = A->head->data + A->used;
    A->used += words;
    return p;
}

static void arena_free(arena *A) {
    while (A->head) {
        arena_block *n = A->head->next;
        free(A->head);
        A->head = n;
    }
    A->used = 0;
    A->total = 0;
}

/* ---- symbolic values ------------------------------------------------------------------- *
 * The value of a chunk is the multiset of the initial chunks (rank q, location x) it was
 * combined from: groups sorted by location, each a bitset over ranks, plus "extras", the
 * additional copies of a contribution counted more than once, sorted by id = x * N + q.
 * Values are immutable and shared; NULL in a location table means "its initial value". */
typedef struct sval {
    uint32_t ng, nx;
    /* The value is intact at an element position only where user chunk slot `slot` (and every
     * lower one) is valid there: slots shorten with the slot index (weft_semantics.h, the count
     * policy), and a value stored into a slot loses what lies past its end. -1: no such slot.
     * `by`: the step that stored it into that slot (-1: the initial value). Not part of what
     * sv_equal compares. */
    int32_t slot, by;
    uint64_t w[]; /* ng groups of (location, nw bit words); then nx pairs (id, copies) */
} sval;

typedef struct term {
    int32_t loc, q, mult;
} term;

typedef struct ctx {
    const weft_sg *g;
    const weft_algo *a;
    const weft_verify_opts *o;
    weft_diag *d;
    weft_verify_summary *sum;
    int inplace, both_modes;
    int32_t N, L, nw;
    arena A;
    sval **val;      /* [N * L] */
    int32_t *writer; /* [N * L] step that last wrote the location, -1 */
    sval ***payload; /* [nsteps] what a send step sent */
    uint64_t *tmp;   /* scratch for overlaps: 2 words each, ntmp words */
    size_t ntmp;
    sval *expect;          /* scratch value, one group */
    int32_t *order;        /* the unbounded run's order */
    int32_t *pos;          /* position of each step in order */
    int32_t sid, cnt;      /* the step being evaluated */
    sval **regs, *operand; /* its registers (weft_step_eval) */
    weft_result res;
} ctx;

static size_t sv_words(const ctx *c, uint32_t ng, uint32_t nx) {
    return 2 + (size_t)ng * (1 + (size_t)c->nw) + 2 * (size_t)nx;
}

static sval *sv_alloc(ctx *c, uint32_t ng, uint32_t nx) {
    uint64_t *p = arena_alloc(&c->A, sv_words(c, ng, nx));
    if (p == NULL) {
        c->res = WEFT_ERR_NOMEM;
        return NULL;
    }
    sval *v = (sval *)p;
    v->ng = ng;
    v->nx = nx;
    v->slot = v->by = -1;
    return v;
}

static uint64_t *sv_group(const ctx *c, const sval *v, uint32_t i) {
    return (uint64_t *)v->w + (size_t)i * (1 + (size_t)c->nw);
}
static uint64_t *sv_extras(const ctx *c, const sval *v) {
    return (uint64_t *)v->w + (size_t)v->ng * (1 + (size_t)c->nw);
}

static void sv_set_single(const ctx *c, sval *v, int32_t loc, int32_t q) {
    v->ng = 1;
    v->nx = 0;
    v->slot = v->by = -1;
    uint64_t *gp = sv_group(c, v, 0);
    memset(gp, 0, (1 + (size_t)c->nw) * sizeof *gp);
    gp[0] = (uint64_t)loc;
    gp[1 + q / 64] = 1ull << (q % 64);
}

static sval *sv_single(ctx *c, int32_t loc, int32_t q) {
    sval *v = sv_alloc(c, 1, 0);
    if (v) sv_set_single(c, v, loc, q);
    return v;
}

/* The chunk slot of a location (its index within its segment), or -1 for scratch, whose chunks
 * always hold C elements. */
static int32_t loc_slot(const ctx *c, int32_t loc) {
    const weft_sg *g = c->g;
    if (loc < g->nin) return loc % g->k;
    if (loc < g->nin + g->nout) return (loc - g->nin) % g->k;
    return -1;
}

/* The value at (rank, loc), materializing the initial value on first use. */
static sval *val_get(ctx *c, int32_t rank, int32_t loc) {
    sval **p = &c->val[(size_t)rank * c->L + loc];
    if (*p == NULL) {
        *p = sv_single(c, loc, rank);
        if (*p) (*p)->slot = loc_slot(c, loc);
    }
    return *p;
}

static int sv_equal(const ctx *c, const sval *a, const sval *b) {
    if (a == b) return 1;
    if (a->ng != b->ng || a->nx != b->nx) return 0;
    return memcmp(a->w, b->w, (sv_words(c, a->ng, a->nx) - 2) * sizeof(uint64_t)) == 0;
}

/* a (+) b: the union of the multisets. */
static sval *sv_reduce(ctx *c, const sval *a, const sval *b) {
    const int32_t nw = c->nw, N = c->N;
    uint32_t i = 0, j = 0, ng = 0;
    size_t ov = 0;
    while (i < a->ng || j < b->ng) {
        uint64_t la = i < a->ng ? sv_group(c, a, i)[0] : UINT64_MAX;
        uint64_t lb = j < b->ng ? sv_group(c, b, j)[0] : UINT64_MAX;
        if (la == lb) {
            const uint64_t *ga = sv_group(c, a, i), *gb = sv_group(c, b, j);
            for (int32_t k = 0; k < nw; k++)
                ov += (size_t)__builtin_popcountll(ga[1 + k] & gb[1 + k]);
            i++, j++;
        } else if (la < lb) {
            i++;
        } else {
            j++;
        }
        ng++;
    }
    size_t nxmax = a->nx + b->nx + ov;
    if (nxmax > UINT32_MAX / 4) {
        c->res = WEFT_ERR_NOMEM;
        return NULL;
    }
    /* the overlaps of every group, not of one: as many as the contributions the two share */
    if (2 * ov + 2 > c->ntmp) {
        uint64_t *t = realloc(c->tmp, (2 * ov + 2) * sizeof *t);
        if (t == NULL) {
            c->res = WEFT_ERR_NOMEM;
            return NULL;
        }
        c->tmp = t;
        c->ntmp = 2 * ov + 2;
    }
    sval *v = sv_alloc(c, ng, (uint32_t)nxmax);
    if (v == NULL) return NULL;
    /* the overlaps, as (id, 1) pairs in id order, go to the end of v's extras area first */
    uint64_t *ovl = sv_extras(c, v) + 2 * (a->nx + b->nx);
    size_t no = 0;
    i = j = 0;
    uint32_t gi = 0;
    while (i < a->ng || j < b->ng) {
        uint64_t la = i < a->ng ? sv_group(c, a, i)[0] : UINT64_MAX;
        uint64_t lb = j < b->ng ? sv_group(c, b, j)[0] : UINT64_MAX;
        uint64_t *gv = sv_group(c, v, gi++);
        if (la == lb) {
            const uint64_t *ga = sv_group(c, a, i++), *gb = sv_group(c, b, j++);
            gv[0] = la;
            for (int32_t k = 0; k < nw; k++) {
                uint64_t both = ga[1 + k] & gb[1 + k];
                gv[1 + k] = ga[1 + k] | gb[1 + k];
                while (both) {
                    int bit = __builtin_ctzll(both);
                    both &= both - 1;
                    ovl[2 * no] = la * (uint64_t)N + (uint64_t)(k * 64 + bit);
                    ovl[2 * no + 1] = 1;
                    no++;
                }
            }
        } else if (la < lb) {
            memcpy(gv, sv_group(c, a, i++), (1 + (size_t)nw) * sizeof *gv);
        } else {
            memcpy(gv, sv_group(c, b, j++), (1 + (size_t)nw) * sizeof *gv);
        }
    }
    /* merge a's extras, b's extras and the overlaps (copied aside: the output overlaps them) */
    uint64_t *ex = sv_extras(c, v);
    uint64_t *ov2 = c->tmp;
    if (no) memcpy(ov2, ovl, 2 * no * sizeof *ov2);
    const uint64_t *src[3] = {sv_extras(c, a), sv_extras(c, b), ov2};
    size_t len[3] = {a->nx, b->nx, no}, at[3] = {0, 0, 0};
    size_t nx = 0;
    for (;;) {
        int best = -1;
        for (int s = 0; s < 3; s++)
            if (at[s] < len[s] && (best < 0 || src[s][2 * at[s]] < src[best][2 * at[best]]))
                best = s;
        if (best < 0) break;
        uint64_t id = src[best][2 * at[best]], m = src[best][2 * at[best] + 1];
        at[best]++;
        if (nx > 0 && ex[2 * (nx - 1)] == id)
            ex[2 * (nx - 1) + 1] += m;
        else {
            ex[2 * nx] = id;
            ex[2 * nx + 1] = m;
            nx++;
        }
    }
    v->nx = (uint32_t)nx;
    const sval *hi = a->slot >= b->slot ? a : b; /* intact only where both are */
    v->slot = hi->slot;
    v->by = hi->by;
    return v;
}

/* Lists a value's contributions as (loc, rank, multiplicity), sorted. */
static size_t sv_terms(const ctx *c, const sval *v, term *out) {
    size_t n = 0;
    const uint64_t *ex = sv_extras(c, v);
    uint32_t xi = 0;
    for (uint32_t i = 0; i < v->ng; i++) {
        const uint64_t *gp = sv_group(c, v, i);
        for (int32_t k = 0; k < c->nw; k++) {
            uint64_t bits = gp[1 + k];
            while (bits) {
                int bit = __builtin_ctzll(bits);
                bits &= bits - 1;
                int32_t q = k * 64 + bit;
                uint64_t id = gp[0] * (uint64_t)c->N + (uint64_t)q;
                int32_t m = 1;
                while (xi < v->nx && ex[2 * xi] < id)
                    xi++;
                if (xi < v->nx && ex[2 * xi] == id) m += (int32_t)ex[2 * xi + 1];
                out[n].loc = (int32_t)gp[0];
                out[n].q = q;
                out[n].mult = m;
                n++;
            }
        }
    }
    return n;
}

static size_t sv_nterms(const ctx *c, const sval *v) {
    size_t n = 0;
    for (uint32_t i = 0; i < v->ng; i++)
        for (int32_t k = 0; k < c->nw; k++)
            n += (size_t)__builtin_popcountll(sv_group(c, v, i)[1 + k]);
    return n;
}

/* ---- text -------------------------------------------------------------------------------- */
/* "in(q,x)", "out(q,y)" or "scratch(q,x)"; a run of ranks lo..hi is written "in(lo..hi,x)". */
static void term_name(const ctx *c, weft_sb *b, int32_t loc, int32_t lo, int32_t hi) {
    const weft_sg *g = c->g;
    const char *buf = "in";
    int32_t x = loc;
    if (loc >= g->nin + g->nout)
        buf = "scratch", x = loc - g->nin - g->nout;
    else if (loc >= g->nin)
        buf = "out", x = loc - g->nin;
    if (lo == hi)
        weft_sb_printf(b, "%s(%d,%d)", buf, lo, x);
    else
        weft_sb_printf(b, "%s(%d..%d,%d)", buf, lo, hi, x);
}

/* Formats a term list: each contribution when there are few, otherwise runs of ranks. */
static void format_terms(const ctx *c, weft_sb *b, const term *t, size_t n) {
    if (n == 0) {
        weft_sb_printf(b, "nothing");
        return;
    }
    int compact = n > 8;
    size_t shown = 0, i = 0;
    while (i < n) {
        if (shown >= 24) {
            weft_sb_printf(b, "+... (%zu more)", n - i);
            return;
        }
        if (shown) weft_sb_printf(b, "+");
        size_t j = i;
        if (compact && t[i].mult == 1)
            while (j + 1 < n && t[j + 1].loc == t[i].loc && t[j + 1].q == t[j].q + 1 &&
                   t[j + 1].mult == 1)
                j++;
        if (t[i].mult > 1) weft_sb_printf(b, "%d*", t[i].mult);
        if (j >= i + 2) {
            term_name(c, b, t[i].loc, t[i].q, t[j].q);
            i = j + 1;
        } else {
            term_name(c, b, t[i].loc, t[i].q, t[i].q);
            i++;
        }
        shown++;
    }
}

/* Appends "; missing ..." and "; extra ..." for the multiset differences. */
static void format_diff(const ctx *c, weft_sb *b, const term *h, size_t nh, const term *e,
                        size_t ne, term *scratch) {
    for (int pass = 0; pass < 2; pass++) {
        const term *x = pass == 0 ? e : h, *y = pass == 0 ? h : e;
        size_t nx = pass == 0 ? ne : nh, ny = pass == 0 ? nh : ne, n = 0, j = 0;
        for (size_t i = 0; i < nx; i++) {
            while (j < ny && (y[j].loc < x[i].loc || (y[j].loc == x[i].loc && y[j].q < x[i].q)))
                j++;
            int32_t have = j < ny && y[j].loc == x[i].loc && y[j].q == x[i].q ? y[j].mult : 0;
            if (x[i].mult > have) {
                scratch[n] = x[i];
                scratch[n].mult = x[i].mult - have;
                n++;
            }
        }
        if (n == 0) continue;
        weft_sb_printf(b, pass == 0 ? "; missing " : "; extra ");
        format_terms(c, b, scratch, n);
        int uninit = 0;
        for (size_t i = 0; i < n; i++)
            uninit |= scratch[i].loc >= c->g->nin;
        if (pass == 1 && uninit) weft_sb_printf(b, " (what those chunks held before the call)");
    }
}

/* ---- findings ---------------------------------------------------------------------------- */
static int report_ok(ctx *c, weft_verify_class cls, int64_t *nreported) {
    c->sum->errors[cls]++;
    return (*nreported)++ < c->o->max_reports;
}

static const char *mode_suffix(const ctx *c) {
    if (!c->both_modes) return "";
    return c->inplace ? " (in-place)" : " (out-of-place)";
}

/* ---- symbolic execution of one mode: weft_step_eval over contributions ---------------- *
 * Registers 0..cnt-1 are the step's values (arena-allocated: a send's become its message),
 * register cnt is c->operand. */
static sval **vreg(ctx *c, int32_t i) {
    return i < c->cnt ? &c->regs[i] : &c->operand;
}
static int sv_take(void *user, int32_t i) {
    ctx *c = user;
    *vreg(c, i) = c->payload[c->g->steps[c->sid].match][i];
    return 0;
}
static int sv_load(void *user, int32_t i, weft_buf b, int32_t x) {
    ctx *c = user;
    int32_t r = c->g->steps[c->sid].rank;
    sval *v = val_get(c, r, weft_sg_loc(c->g, c->inplace, r, b, x));
    *vreg(c, i) = v;
    return v ? 0 : (int)(c->res ? c->res : WEFT_ERR_NOMEM);
}
static int sv_reduce_reg(void *user, int32_t i, int32_t j) {
    ctx *c = user;
    sval *v = sv_reduce(c, *vreg(c, i), *vreg(c, j));
    *vreg(c, i) = v;
    return v ? 0 : (int)(c->res ? c->res : WEFT_ERR_NOMEM);
}
static int sv_store(void *user, int32_t i, weft_buf b, int32_t x) {
    ctx *c = user;
    int32_t r = c->g->steps[c->sid].rank;
    int32_t loc = weft_sg_loc(c->g, c->inplace, r, b, x);
    size_t at = (size_t)r * c->L + loc;
    sval *v = *vreg(c, i);
    int32_t slot = loc_slot(c, loc);
    if (slot > v->slot) { /* a shorter slot than any the value was in: what is past its end goes */
        sval *w = sv_alloc(c, v->ng, v->nx);
        if (w == NULL) return (int)c->res;
        memcpy(w->w, v->w, (sv_words(c, v->ng, v->nx) - 2) * sizeof(uint64_t));
        w->slot = slot;
        w->by = c->sid;
        v = w;
    }
    c->val[at] = v;
    c->writer[at] = c->sid;
    return 0;
}
static int sv_send(void *user, int32_t cnt) {
    ctx *c = user;
    (void)cnt;
    c->payload[c->sid] = c->regs;
    return 0;
}
static const weft_step_algebra sv_algebra = {sv_take, sv_load, sv_reduce_reg, sv_store, sv_send};

static int eval_step(ctx *c, int32_t sid) {
    const weft_step *st = weft_sg_ir_step(c->g, sid);
    if (st->type == WEFT_STEP_NOP) return 0;
    c->sid = sid;
    c->cnt = st->cnt;
    c->regs = (sval **)arena_alloc(&c->A, (size_t)st->cnt);
    if (c->regs == NULL) return (int)(c->res = WEFT_ERR_NOMEM);
    return weft_step_eval(&sv_algebra, c, st->type, st->srcbuf, st->srcoff, st->dstbuf, st->dstoff,
                          st->cnt);
}

/* Builds in c->expect the value output chunk y of rank r must end with (weft_coll_source); 0
 * when unconstrained. */
static int expected(ctx *c, int32_t r, int32_t y) {
    const int32_t k = c->g->k, N = c->N;
    int32_t q, seg;
    if (!weft_coll_source(c->a->coll, N, c->a->root, r, y / k, &q, &seg)) return 0;
    sval *e = c->expect;
    sv_set_single(c, e, seg * k + y % k, q < 0 ? 0 : q);
    if (q < 0) {
        uint64_t *gp = sv_group(c, e, 0);
        for (int32_t i = 0; i < c->nw; i++)
            gp[1 + i] = N - 64 * i >= 64 ? ~0ull : (1ull << (N - 64 * i)) - 1;
    }
    return 1;
}

static void report_value(ctx *c, int32_t r, int32_t loc, const char *what, const sval *have,
                         const sval *want) {
    const weft_sg *g = c->g;
    size_t nh = sv_nterms(c, have), ne = sv_nterms(c, want);
    term *th = malloc((nh + 1) * sizeof *th), *te = malloc((ne + 1) * sizeof *te);
    term *ts = malloc((nh + ne + 1) * sizeof *ts);
    weft_sb b = {0};
    if (th == NULL || te == NULL || ts == NULL) {
        c->res = WEFT_ERR_NOMEM;
        goto done;
    }
    nh = sv_terms(c, have, th);
    ne = sv_terms(c, want, te);
    int32_t w = c->writer[(size_t)r * c->L + loc];
    if (w < 0) {
        weft_sb_printf(&b, "%s is never written, expected ", what);
        format_terms(c, &b, te, ne);
    } else {
        weft_sb_printf(&b, "%s holds ", what);
        format_terms(c, &b, th, nh);
        weft_sb_printf(&b, ", expected ");
        format_terms(c, &b, te, ne);
        format_diff(c, &b, th, nh, te, ne, ts);
    }
    weft_sb_printf(&b, "%s", mode_suffix(c));
    if (w >= 0)
        weft_sg_diag_step(g, c->d, WEFT_SEV_ERROR, w, "%s", weft_sb_str(&b));
    else
        weft_diag_add(c->d, WEFT_SEV_ERROR, c->a->file, c->a->gpus[r].line, 0, "rank %d: %s", r,
                      weft_sb_str(&b));
done:
    free(b.p);
    free(th);
    free(te);
    free(ts);
}

/* A count at which some element position has user chunk slots 0..j valid and slot `slot` not
 * (j < slot): one past k if there is one, as the likeliest to be met, else the smallest. */
static int64_t short_slot_count(int32_t k, int32_t j, int32_t slot) {
    int64_t first = 0;
    for (int64_t count = 1; count <= 4 * (int64_t)k + 4; count++) {
        int64_t C = weft_chunk_elems(count, k);
        /* position 0 sees the most valid slots, position C-1 the fewest */
        int64_t most = (count + C - 1) / C, fewest = (count - (C - 1) + C - 1) / C;
        if (most > j && fewest <= slot) {
            if (count > k) return count;
            if (first == 0) first = count;
        }
    }
    return first ? first : j + 1;
}

/* A value that is right at chunk level but went through a shorter chunk slot than the one it
 * ends in (v->slot > its own slot): reported at the step that stored it there. */
static void report_short(ctx *c, int32_t r, const char *what, int32_t j, const sval *v) {
    const weft_sg *g = c->g;
    const int32_t k = g->k;
    int64_t n = short_slot_count(k, j, v->slot), C = weft_chunk_elems(n, k);
    int64_t lj = weft_chunk_valid(n, k, C, j), ls = weft_chunk_valid(n, k, C, v->slot);
    if (v->by < 0) { /* not reached: only a store raises the slot of a value */
        weft_diag_add(c->d, WEFT_SEV_ERROR, c->a->file, c->a->gpus[r].line, 0,
                      "rank %d: %s passes through a shorter chunk%s", r, what, mode_suffix(c));
        return;
    }
    /* the chunk of the storing step's destination in that slot */
    const weft_step *st = weft_sg_ir_step(g, v->by);
    int32_t x = st->dstoff;
    for (int32_t i = 0; i < st->cnt; i++)
        if (loc_slot(c, weft_sg_loc(g, c->inplace, g->steps[v->by].rank, st->dstbuf,
                                    st->dstoff + i)) == v->slot) {
            x = st->dstoff + i;
            break;
        }
    weft_sg_diag_step(g, c->d, WEFT_SEV_ERROR, v->by,
                      "stores into %s chunk %d data that rank %d's %s ends with, but chunk slot "
                      "%d is shorter than slot %d when the count is not a multiple of %d (count "
                      "%lld: %lld element%s against %lld), and what lies past its end is lost%s",
                      weft_buf_name(st->dstbuf), x, r, what, v->slot, j, k, (long long)n,
                      (long long)ls, ls == 1 ? "" : "s", (long long)lj, mode_suffix(c));
}

static void check_postconditions(ctx *c) {
    const weft_sg *g = c->g;
    int64_t nrep = 0;
    for (int32_t r = 0; r < c->N && c->res == WEFT_OK; r++) {
        if (weft_sg_buf_exists(g, c->inplace, r, WEFT_BUF_OUTPUT))
            for (int32_t y = 0; y < g->nout && c->res == WEFT_OK; y++) {
                if (!expected(c, r, y)) continue;
                int32_t loc = weft_sg_loc(g, c->inplace, r, WEFT_BUF_OUTPUT, y);
                sval *v = val_get(c, r, loc);
                if (v == NULL) return;
                int ok = sv_equal(c, v, c->expect);
                if (ok && v->slot <= y % g->k) continue;
                if (!report_ok(c, WEFT_VERIFY_POSTCONDITION, &nrep)) continue;
                char what[48];
                snprintf(what, sizeof what, "output chunk %d", y);
                if (ok)
                    report_short(c, r, what, y % g->k, v);
                else
                    report_value(c, r, loc, what, v, c->expect);
            }
        /* NCCL's send buffer is const: out-of-place calls must leave it as it was */
        if (!c->inplace && weft_sg_buf_exists(g, 0, r, WEFT_BUF_INPUT))
            for (int32_t x = 0; x < g->nin && c->res == WEFT_OK; x++) {
                size_t at = (size_t)r * c->L + x;
                if (c->writer[at] < 0) continue;
                sval *v = val_get(c, r, x);
                if (v == NULL) return;
                sv_set_single(c, c->expect, x, r);
                int ok = sv_equal(c, v, c->expect);
                if (ok && v->slot <= x % g->k) continue;
                if (!report_ok(c, WEFT_VERIFY_POSTCONDITION, &nrep)) continue;
                char what[96];
                snprintf(what, sizeof what,
                         "input chunk %d (which out-of-place calls must leave "
                         "unchanged)",
                         x);
                if (ok)
                    report_short(c, r, what, x % g->k, v);
                else
                    report_value(c, r, x, what, v, c->expect);
            }
    }
    if (nrep > c->o->max_reports)
        weft_diag_add(c->d, WEFT_SEV_NOTE, c->a->file, 0, 0, "%lld more wrong chunks not shown%s",
                      (long long)(nrep - c->o->max_reports), mode_suffix(c));
}

/* ---- data races ------------------------------------------------------------------------ *
 * Walking the steps in the order of a run (a linearization of happens-before), each location
 * keeps its last write and the reads since; every new access is checked against those only
 * (the classic argument: if those pairs are ordered, all conflicting pairs are). The pairs of
 * different tbs become queries "A happens before B", answered first with clocks over the
 * rank's own edges (program order, dependencies), then, for what is left, with clocks over
 * the whole graph (messages too), both restricted to batches of the tbs the queries ask
 * about so that memory stays bounded. */
typedef struct rquery {
    int32_t a, b, loc;
    int32_t atb;        /* the tb of a: queries are answered in batches of source tbs */
    int32_t apos, bpos; /* positions in the run, for reporting in order */
    uint8_t awrite, bwrite;
} rquery;

typedef struct rnode {
    int32_t step, next;
} rnode;

typedef struct races {
    rquery *q;
    size_t nq, capq;
    rnode *pool; /* a node whose location was written since has step -1 */
    size_t npool, cappool;
    int32_t *lastw, *rhead; /* per (rank, loc) */
    weft_map tbread;        /* (rank, loc) x tb -> its node in pool + 1: one lookup per read,
                             * however many tbs read the chunk */
} races;

static int add_query(ctx *c, races *R, int32_t a, int32_t b, int32_t loc, int aw, int bw) {
    if (R->nq > 0) {
        rquery *p = &R->q[R->nq - 1];
        if (p->a == a && p->b == b) return 0; /* the same pair on the next chunk of a range */
    }
    if (weft_grow((void **)&R->q, &R->capq, R->nq, sizeof *R->q) != 0)
        return (int)(c->res = WEFT_ERR_NOMEM);
    R->q[R->nq++] =
        (rquery){a, b, loc, c->g->steps[a].tb, c->pos[a], c->pos[b], (uint8_t)aw, (uint8_t)bw};
    return 0;
}

static int access_loc(ctx *c, races *R, int32_t sid, int32_t loc, int write) {
    const weft_sg *g = c->g;
    const weft_sg_step *s = &g->steps[sid];
    size_t at = (size_t)s->rank * c->L + loc;
    int32_t w = R->lastw[at];
    if (w >= 0 && g->steps[w].tb != s->tb && w != sid)
        if (add_query(c, R, w, sid, loc, 1, write)) return -1;
    if (!write) {
        /* keep one read per tb: the latest, which follows the earlier ones in program order */
        int32_t h = R->rhead[at];
        if (h >= 0 && g->steps[R->pool[h].step].tb == s->tb) {
            R->pool[h].step = sid;
            return 0;
        }
        uint64_t *node =
            weft_map_put(&R->tbread, (uint64_t)at * (uint64_t)g->ntbs + (uint64_t)s->tb, NULL);
        if (node == NULL) return (int)(c->res = WEFT_ERR_NOMEM);
        if (*node > 0 && R->pool[*node - 1].step >= 0) {
            R->pool[*node - 1].step = sid;
            return 0;
        }
        *node = R->npool + 1;
        if (weft_grow((void **)&R->pool, &R->cappool, R->npool, sizeof *R->pool) != 0)
            return (int)(c->res = WEFT_ERR_NOMEM);
        R->pool[R->npool] = (rnode){sid, R->rhead[at]};
        R->rhead[at] = (int32_t)R->npool++;
        return 0;
    }
    for (int32_t n = R->rhead[at]; n >= 0; n = R->pool[n].next) {
        int32_t rs = R->pool[n].step;
        R->pool[n].step = -1;
        if (g->steps[rs].tb != s->tb && rs != sid)
            if (add_query(c, R, rs, sid, loc, 0, 1)) return -1;
    }
    R->rhead[at] = -1;
    R->lastw[at] = sid;
    return 0;
}

/* Names the chunk a step touches at loc: "input chunk 4". */
static void access_name(const ctx *c, int32_t sid, int32_t loc, char *buf, size_t len) {
    const weft_sg *g = c->g;
    const weft_step *st = weft_sg_ir_step(g, sid);
    int32_t r = g->steps[sid].rank;
    weft_access ac[2];
    int na = weft_step_accesses(st, ac);
    for (int k = na - 1; k >= 0; k--) { /* what it writes first */
        weft_buf b = (weft_buf)ac[k].buf;
        int32_t off = ac[k].off;
        for (int32_t i = 0; i < st->cnt; i++)
            if (weft_sg_loc(g, c->inplace, r, b, off + i) == loc) {
                snprintf(buf, len, "%s chunk %d", weft_buf_name(b), off + i);
                return;
            }
    }
    snprintf(buf, len, "location %d", loc);
}

static int cmp_query(const void *x, const void *y) {
    const rquery *p = x, *q = y;
    return weft_cmp_keys((int64_t[]){p->atb, p->b, p->a}, (int64_t[]){q->atb, q->b, q->a}, 3);
}

static int cmp_run_order(const void *x, const void *y) {
    const rquery *p = x, *q = y;
    return weft_cmp_keys((int64_t[]){p->bpos, p->apos}, (int64_t[]){q->bpos, q->apos}, 2);
}

/* Whether a happens before b through one edge into b's tb: a dependency (or, not local, a
 * message) of b or of one of the few steps before it in its tb, from a step of a's tb at or
 * after a. Answers the common pairs (a block that waits for the block it conflicts with)
 * without clocks. Steps before a in the run cannot follow a, which ends the walk early. */
static int ordered_nearby(const ctx *c, int32_t a, int32_t b, int local) {
    const weft_sg *g = c->g;
    const weft_sg_step *sa = &g->steps[a];
    int32_t q = b;
    for (int hops = 0; hops < 64 && c->pos[q] > c->pos[a]; hops++) {
        const weft_sg_step *s = &g->steps[q];
        int32_t preds[2] = {s->dep, local ? -1 : s->match};
        for (int k = 0; k < 2; k++) {
            int32_t p = preds[k];
            if (p >= 0 && g->steps[p].tb == sa->tb && g->steps[p].idx >= sa->idx) return 1;
        }
        if (s->idx == 0) break;
        q--;
    }
    return 0;
}

/* Answers queries q[0..n) (all with source tbs in `tbs`, sorted by source tb) with clocks
 * over the steps in `steps` (a linearization; row: each step's index in it); local: only
 * program order and dependencies. Only the stretch of the run from the earliest source to
 * the latest target can order them: clocks are kept for that window alone (a chain of
 * blocks, each waiting for the previous one, costs its length, not its length squared).
 * Clears `open` of every answered query. */
static int resolve_batch(ctx *c, rquery *q, size_t n, uint8_t *open, const int32_t *tbs,
                         int32_t ntb, const int32_t *steps, const int32_t *row, int32_t *clk,
                         int local) {
    const weft_sg *g = c->g;
    int32_t lo = INT32_MAX, hi = -1;
    for (size_t i = 0; i < n; i++) {
        if (row[q[i].a] < lo) lo = row[q[i].a];
        if (row[q[i].b] > hi) hi = row[q[i].b];
    }
    for (int32_t i = lo; i <= hi; i++) {
        int32_t sid = steps[i];
        const weft_sg_step *s = &g->steps[sid];
        int32_t *cl = clk + (size_t)(i - lo) * ntb;
        memset(cl, 0, (size_t)ntb * sizeof *cl);
        int32_t preds[3], np = 0;
        if (s->idx > 0) preds[np++] = sid - 1;
        if (s->dep >= 0) preds[np++] = s->dep;
        if (!local && s->match >= 0) preds[np++] = s->match;
        for (int32_t p = 0; p < np; p++) {
            if (row[preds[p]] < lo) continue; /* before every source: orders none of them */
            const int32_t *pc = clk + (size_t)(row[preds[p]] - lo) * ntb;
            for (int32_t w = 0; w < ntb; w++)
                if (pc[w] > cl[w]) cl[w] = pc[w];
        }
        for (int32_t w = 0; w < ntb; w++)
            if (tbs[w] == s->tb) cl[w] = s->idx + 1;
    }
    size_t qi = 0;
    for (int32_t w = 0; w < ntb; w++)
        for (; qi < n && q[qi].atb == tbs[w]; qi++) {
            /* a target before every source of the batch in the linearization cannot follow
             * its source: the query stays open (and has no clock in the window) */
            if (row[q[qi].b] < lo) continue;
            const int32_t *cl = clk + (size_t)(row[q[qi].b] - lo) * ntb;
            if (cl[w] >= g->steps[q[qi].a].idx + 1) open[qi] = 0;
        }
    return 0;
}

/* Resolves the open queries in q[0..n) (sorted by source tb) over `steps`, in batches of at
 * most `width` source tbs. */
static int resolve(ctx *c, rquery *q, size_t n, uint8_t *open, const int32_t *steps, int32_t nsteps,
                   int local, int32_t *row) {
    int32_t width = 64;
    while (width > 1 && (size_t)width * (size_t)nsteps > ((size_t)1 << 23))
        width /= 2;
    int32_t *clk = malloc((size_t)width * ((size_t)nsteps + 1) * sizeof *clk);
    int32_t *tbs = malloc((size_t)width * sizeof *tbs);
    rquery *sub = malloc((n + 1) * sizeof *sub);
    uint8_t *subopen = malloc(n + 1);
    size_t *subidx = malloc((n + 1) * sizeof *subidx);
    if (clk == NULL || tbs == NULL || sub == NULL || subopen == NULL || subidx == NULL) {
        c->res = WEFT_ERR_NOMEM;
        goto done;
    }
    for (size_t i = 0; i < n; i++)
        if (open[i] && ordered_nearby(c, q[i].a, q[i].b, local)) open[i] = 0;
    for (int32_t i = 0; i < nsteps; i++)
        row[steps[i]] = i;
    size_t i = 0;
    while (i < n) {
        /* the next batch: up to `width` distinct source tbs among the open queries */
        int32_t ntb = 0;
        size_t m = 0;
        while (i < n) {
            if (!open[i]) {
                i++;
                continue;
            }
            int32_t t = q[i].atb;
            if (ntb == 0 || tbs[ntb - 1] != t) {
                if (ntb == width) break;
                tbs[ntb++] = t;
            }
            sub[m] = q[i];
            subopen[m] = 1;
            subidx[m++] = i++;
        }
        if (m == 0) break;
        resolve_batch(c, sub, m, subopen, tbs, ntb, steps, row, clk, local);
        for (size_t j = 0; j < m; j++)
            if (!subopen[j]) open[subidx[j]] = 0;
    }
done:
    free(subidx);
    free(subopen);
    free(sub);
    free(tbs);
    free(clk);
    return c->res == WEFT_OK ? 0 : -1;
}

static void check_races(ctx *c) {
    const weft_sg *g = c->g;
    races R = {0};
    uint8_t *open = NULL;
    int32_t *row = NULL, *rsteps = NULL, *mark = NULL, *mark_i = NULL;
    size_t nl = (size_t)c->N * c->L;
    int64_t nrep = 0;
    R.lastw = malloc(nl * sizeof *R.lastw);
    R.rhead = malloc(nl * sizeof *R.rhead);
    mark = malloc(nl * sizeof *mark);
    mark_i = malloc(nl * sizeof *mark_i);
    row = malloc(((size_t)g->nsteps + 1) * sizeof *row);
    rsteps = malloc(((size_t)g->nsteps + 1) * sizeof *rsteps);
    if (!R.lastw || !R.rhead || !mark || !mark_i || !row || !rsteps) {
        c->res = WEFT_ERR_NOMEM;
        goto done;
    }
    memset(R.lastw, 0xff, nl * sizeof *R.lastw);
    memset(R.rhead, 0xff, nl * sizeof *R.rhead);
    memset(mark, 0xff, nl * sizeof *mark);
    for (int32_t oi = 0; oi < g->nsteps; oi++) {
        int32_t sid = c->order[oi];
        const weft_sg_step *s = &g->steps[sid];
        const weft_step *st = weft_sg_ir_step(g, sid);
        if (st->type == WEFT_STEP_NOP) continue;
        int32_t r = s->rank;
        /* a step that reads and writes the same memory at different positions of its ranges
         * would read what it writes: the result depends on the order inside the step */
        if ((s->flags & WEFT_STEP_F_READS_SRC) && (s->flags & WEFT_STEP_F_WRITE)) {
            for (int32_t i = 0; i < st->cnt; i++) {
                size_t at =
                    (size_t)r * c->L + weft_sg_loc(g, c->inplace, r, st->dstbuf, st->dstoff + i);
                mark[at] = sid;
                mark_i[at] = i;
            }
            for (int32_t i = 0; i < st->cnt; i++) {
                size_t at =
                    (size_t)r * c->L + weft_sg_loc(g, c->inplace, r, st->srcbuf, st->srcoff + i);
                if (mark[at] != sid || mark_i[at] == i) continue;
                if (report_ok(c, WEFT_VERIFY_RACE, &nrep))
                    weft_sg_diag_step(
                        g, c->d, WEFT_SEV_ERROR, sid,
                        "its source (%s chunks %d..%d) and destination (%s chunks "
                        "%d..%d) overlap shifted: %s chunk %d is source %d and "
                        "destination %d, so the result depends on the order inside "
                        "the step%s",
                        weft_buf_name(st->srcbuf), st->srcoff, st->srcoff + st->cnt - 1,
                        weft_buf_name(st->dstbuf), st->dstoff, st->dstoff + st->cnt - 1,
                        weft_buf_name(st->srcbuf), st->srcoff + i, i, mark_i[at], mode_suffix(c));
                break;
            }
        }
        weft_access ac[2];
        int na = weft_step_accesses(st, ac);
        for (int k = 0; k < na; k++)
            for (int32_t i = 0; i < st->cnt; i++)
                if (access_loc(c, &R, sid,
                               weft_sg_loc(g, c->inplace, r, (weft_buf)ac[k].buf, ac[k].off + i),
                               ac[k].write))
                    goto done;
    }
    if (R.nq == 0) goto done;
    qsort(R.q, R.nq, sizeof *R.q, cmp_query);
    /* drop duplicate pairs (kept: the first chunk) */
    size_t m = 0;
    for (size_t i = 0; i < R.nq; i++)
        if (m == 0 || R.q[m - 1].a != R.q[i].a || R.q[m - 1].b != R.q[i].b) R.q[m++] = R.q[i];
    R.nq = m;
    open = malloc(R.nq + 1);
    if (open == NULL) {
        c->res = WEFT_ERR_NOMEM;
        goto done;
    }
    memset(open, 1, R.nq);
    /* local clocks, rank by rank. Global tb ids grow with the rank, so the queries (sorted by
     * source tb) come grouped by rank; the steps of each rank are bucketed once, in run order. */
    {
        int32_t *first = calloc((size_t)c->N + 1, sizeof *first);
        if (first == NULL) {
            c->res = WEFT_ERR_NOMEM;
            goto done;
        }
        for (int32_t oi = 0; oi < g->nsteps; oi++)
            first[g->steps[c->order[oi]].rank + 1]++;
        for (int32_t r = 0; r < c->N; r++)
            first[r + 1] += first[r];
        for (int32_t oi = 0; oi < g->nsteps; oi++) {
            int32_t sid = c->order[oi];
            rsteps[first[g->steps[sid].rank]++] = sid;
        }
        for (int32_t r = c->N; r > 0; r--)
            first[r] = first[r - 1];
        first[0] = 0;
        size_t qi = 0;
        while (qi < R.nq) {
            int32_t r = g->steps[R.q[qi].a].rank;
            size_t qe = qi;
            while (qe < R.nq && g->steps[R.q[qe].a].rank == r)
                qe++;
            int rc = resolve(c, R.q + qi, qe - qi, open + qi, rsteps + first[r],
                             first[r + 1] - first[r], 1, row);
            if (rc) {
                free(first);
                goto done;
            }
            qi = qe;
        }
        free(first);
    }
    /* what the rank's own edges do not order may still be ordered through messages */
    size_t nopen = 0;
    for (size_t i = 0; i < R.nq; i++)
        nopen += open[i];
    if (nopen && resolve(c, R.q, R.nq, open, c->order, g->nsteps, 0, row)) goto done;
    /* report in the order of the run */
    {
        size_t nr = 0;
        for (size_t i = 0; i < R.nq; i++)
            if (open[i]) R.q[nr++] = R.q[i];
        qsort(R.q, nr, sizeof *R.q, cmp_run_order);
        for (size_t i = 0; i < nr; i++) {
            rquery *p = &R.q[i];
            if (!report_ok(c, WEFT_VERIFY_RACE, &nrep)) continue;
            char an[64], bn[64], aref[96], aname[64];
            access_name(c, p->b, p->loc, bn, sizeof bn);
            access_name(c, p->a, p->loc, an, sizeof an);
            weft_sg_step_name(g, p->a, aname, sizeof aname);
            int line = weft_sg_ir_step(g, p->a)->line;
            if (line > 0)
                snprintf(aref, sizeof aref, "%s (line %d)", aname, line);
            else
                snprintf(aref, sizeof aref, "%s", aname);
            int same = strcmp(an, bn) == 0;
            weft_sg_diag_step(g, c->d, WEFT_SEV_ERROR, p->b,
                              "%s %s, which %s %s%s%s, and no dependency or message orders the "
                              "two steps%s",
                              p->bwrite ? "writes" : "reads", bn, aref,
                              p->awrite ? "writes" : "reads", same ? "" : " as ", same ? "" : an,
                              mode_suffix(c));
        }
    }
    if (nrep > c->o->max_reports)
        weft_diag_add(c->d, WEFT_SEV_NOTE, c->a->file, 0, 0, "%lld more races not shown%s",
                      (long long)(nrep - c->o->max_reports), mode_suffix(c));
done:
    free(open);
    free(rsteps);
    free(row);
    free(mark_i);
    free(mark);
    free(R.rhead);
    free(R.lastw);
    free(R.pool);
    free(R.q);
    weft_map_free(&R.tbread);
}

/* ---- zero-copy transfers (opts->direct_transfers) ------------------------------------ *
 * A transfer that reads the sender's source and writes the receiver's destination in place may
 * touch them at any time between the start of the send and the end of the receive. Every other
 * access to that memory that conflicts (a write to the source; any access to the destination)
 * must then happen before the send starts or after the receive ends. Receives that reduce take
 * their data through a buffer, so only plain receives (r, rcs) write in place. */
typedef struct tpair {
    int32_t x, s, r, loc;
    uint8_t dst; /* 1: x touches the receiver's destination; 0: the sender's source */
} tpair;

static void check_transfers(ctx *c) {
    const weft_sg *g = c->g;
    size_t nl = (size_t)c->N * c->L;
    int32_t *first = calloc(nl + 2, sizeof *first);
    int32_t *acc = NULL;
    tpair *pairs = NULL;
    rquery *q = NULL;
    uint8_t *open = NULL;
    int32_t *row = NULL;
    size_t npairs = 0, cap = 0;
    int64_t nrep = 0;
    if (first == NULL) goto oom;
    /* every access as (step << 1 | write), bucketed by location */
    for (int pass = 0; pass < 2; pass++) {
        for (int32_t sid = 0; sid < g->nsteps; sid++) {
            const weft_sg_step *gs = &g->steps[sid];
            const weft_step *st = gs->ir;
            if (st->type == WEFT_STEP_NOP) continue;
            weft_access ac[2];
            int na = weft_step_accesses(st, ac);
            for (int k = 0; k < na; k++)
                for (int32_t i = 0; i < st->cnt; i++) {
                    int32_t loc =
                        weft_sg_loc(g, c->inplace, gs->rank, (weft_buf)ac[k].buf, ac[k].off + i);
                    size_t at = (size_t)gs->rank * c->L + loc;
                    if (pass == 0)
                        first[at + 2]++;
                    else
                        acc[first[at + 1]++] = sid * 2 + ac[k].write;
                }
        }
        if (pass == 0) {
            for (size_t i = 2; i < nl + 2; i++)
                first[i] += first[i - 1];
            acc = malloc(((size_t)first[nl + 1] + 1) * sizeof *acc);
            if (acc == NULL) goto oom;
        }
    }
    /* first[at] .. first[at + 1] are now the accesses of location `at` */
    for (int32_t rid = 0; rid < g->nsteps; rid++) {
        const weft_sg_step *rs = &g->steps[rid];
        if (rs->match < 0) continue;
        int32_t sid = rs->match;
        const weft_sg_step *ss = &g->steps[sid];
        /* only a plain send reads its source in place: what rcs, rrs and rrcs send is the value
         * they received, which travels through the connection buffer (and their src may be
         * unused, so it names no location) */
        if (ss->ir->type != WEFT_STEP_SEND) continue;
        for (int dst = 0; dst < 2; dst++) {
            const weft_sg_step *who = dst ? rs : ss;
            const weft_step *st = who->ir;
            if (dst && (rs->flags & (WEFT_STEP_F_REDUCE | WEFT_STEP_F_WRITE)) != WEFT_STEP_F_WRITE)
                continue; /* reduces through a buffer, or does not write */
            for (int32_t i = 0; i < st->cnt; i++) {
                int32_t loc = weft_sg_loc(g, c->inplace, who->rank, dst ? st->dstbuf : st->srcbuf,
                                          (dst ? st->dstoff : st->srcoff) + i);
                size_t at = (size_t)who->rank * c->L + loc;
                for (int32_t k = first[at]; k < first[at + 1]; k++) {
                    int32_t x = acc[k] >> 1, xw = acc[k] & 1;
                    if (x == (dst ? rid : sid)) continue; /* the transfer's own step */
                    if (!dst && !xw) continue;            /* two reads of the source */
                    if (npairs > 0 && pairs[npairs - 1].x == x && pairs[npairs - 1].s == sid &&
                        pairs[npairs - 1].dst == dst)
                        continue;
                    if (weft_grow((void **)&pairs, &cap, npairs, sizeof *pairs) != 0) goto oom;
                    pairs[npairs++] = (tpair){x, sid, rid, loc, (uint8_t)dst};
                }
            }
        }
    }
    if (npairs == 0) goto done;
    /* two queries per pair: x before the send starts (x reaches it), or the receive before x */
    q = malloc(2 * npairs * sizeof *q);
    open = malloc(2 * npairs);
    row = malloc(((size_t)g->nsteps + 1) * sizeof *row);
    if (q == NULL || open == NULL || row == NULL) goto oom;
    for (size_t i = 0; i < npairs; i++) {
        const tpair *p = &pairs[i];
        q[2 * i] = (rquery){p->x, p->s, (int32_t)i, g->steps[p->x].tb, 0, 0, 0, 0};
        q[2 * i + 1] = (rquery){p->r, p->x, (int32_t)i, g->steps[p->r].tb, 0, 0, 0, 0};
    }
    qsort(q, 2 * npairs, sizeof *q, cmp_query);
    memset(open, 1, 2 * npairs);
    if (resolve(c, q, 2 * npairs, open, c->order, g->nsteps, 0, row)) goto done;
    /* a pair is ordered when either query was answered; `loc` carries the pair index */
    uint8_t *ordered = calloc(npairs + 1, 1);
    if (ordered == NULL) goto oom;
    for (size_t i = 0; i < 2 * npairs; i++)
        if (!open[i]) ordered[q[i].loc] = 1;
    for (size_t i = 0; i < npairs; i++) {
        if (ordered[i]) continue;
        if (!report_ok(c, WEFT_VERIFY_RACE, &nrep)) continue;
        const tpair *p = &pairs[i];
        char xn[64], sref[96], rref[96], tmp[64];
        access_name(c, p->x, p->loc, xn, sizeof xn);
        weft_sg_step_name(g, p->s, tmp, sizeof tmp);
        int line = g->steps[p->s].ir->line;
        snprintf(sref, sizeof sref, line > 0 ? "%s (line %d)" : "%s", tmp, line);
        weft_sg_step_name(g, p->r, tmp, sizeof tmp);
        line = g->steps[p->r].ir->line;
        snprintf(rref, sizeof rref, line > 0 ? "%s (line %d)" : "%s", tmp, line);
        /* does x write the location, or only read it? */
        const weft_sg_step *xs = &g->steps[p->x];
        int xw = 0;
        if (xs->flags & WEFT_STEP_F_WRITE)
            for (int32_t k = 0; k < xs->ir->cnt && !xw; k++)
                xw = weft_sg_loc(g, c->inplace, xs->rank, xs->ir->dstbuf, xs->ir->dstoff + k) ==
                     p->loc;
        weft_sg_diag_step(g, c->d, WEFT_SEV_ERROR, p->x,
                          "%s %s while a zero-copy transfer may still %s it (the message of %s "
                          "to %s); order the step before that send or after that receive%s",
                          xw ? "writes" : "reads", xn, p->dst ? "write" : "read", sref, rref,
                          mode_suffix(c));
    }
    free(ordered);
    if (nrep > c->o->max_reports)
        weft_diag_add(c->d, WEFT_SEV_NOTE, c->a->file, 0, 0,
                      "%lld more zero-copy races not shown%s",
                      (long long)(nrep - c->o->max_reports), mode_suffix(c));
    goto done;
oom:
    c->res = WEFT_ERR_NOMEM;
done:
    free(row);
    free(open);
    free(q);
    free(pairs);
    free(acc);
    free(first);
}

static weft_result check_mode(ctx *c, int inplace) {
    weft_result res = WEFT_OK;
    const weft_sg *g = c->g;
    c->inplace = inplace;
    c->res = WEFT_OK;
    size_t nl = (size_t)c->N * c->L;
    c->A.over = 0;
    c->val = calloc(nl + 1, sizeof *c->val);
    c->writer = malloc((nl + 1) * sizeof *c->writer);
    c->payload = calloc((size_t)g->nsteps + 1, sizeof *c->payload);
    WEFT_CHECK_ALLOC(c->val);
    WEFT_CHECK_ALLOC(c->writer);
    WEFT_CHECK_ALLOC(c->payload);
    memset(c->writer, 0xff, (nl + 1) * sizeof *c->writer);
    if (weft_sg_check_mode(g, inplace, c->d, c->sum->errors) != WEFT_OK) goto fail;
    for (int32_t i = 0; i < g->nsteps; i++)
        if (eval_step(c, c->order[i])) WEFT_FAIL(c->res ? c->res : WEFT_ERR_NOMEM);
    /* races first: with one, the values below are those of one interleaving only */
    int64_t races_before = c->sum->errors[WEFT_VERIFY_RACE];
    check_races(c);
    WEFT_CHECK(c->res);
    if (c->o->direct_transfers) {
        check_transfers(c);
        WEFT_CHECK(c->res);
    }
    int64_t post_before = c->sum->errors[WEFT_VERIFY_POSTCONDITION];
    check_postconditions(c);
    WEFT_CHECK(c->res);
    if (c->sum->errors[WEFT_VERIFY_RACE] > races_before &&
        c->sum->errors[WEFT_VERIFY_POSTCONDITION] > post_before)
        weft_diag_add(c->d, WEFT_SEV_NOTE, c->a->file, 0, 0,
                      "with the race%s above, the values are those of one interleaving%s",
                      c->sum->errors[WEFT_VERIFY_RACE] - races_before == 1 ? "" : "s",
                      mode_suffix(c));
fail:
    if (c->A.over) {
        weft_diag_add(c->d, WEFT_SEV_ERROR, c->a->file, c->a->line, 0,
                      "the schedule's symbolic values need more than %zu MiB, the verifier's "
                      "limit (reductions that mix many ranks and chunks)%s",
                      VERIFY_MAX_VALUE_WORDS * sizeof(uint64_t) >> 20, mode_suffix(c));
        c->sum->errors[WEFT_VERIFY_STRUCTURE]++;
        res = WEFT_ERR_INPUT;
    }
    WEFT_FREE(c->payload);
    WEFT_FREE(c->writer);
    WEFT_FREE(c->val);
    arena_free(&c->A);
    return res;
}

static int cmp_pair(const void *x, const void *y) {
    const struct weft_verify_pair *p = x, *q = y;
    return weft_cmp_keys((int64_t[]){p->src, p->dst}, (int64_t[]){q->src, q->dst}, 2);
}

static void summarize(ctx *c) {
    const weft_sg *g = c->g;
    weft_verify_summary *s = c->sum;
    int32_t *cp = malloc(((size_t)g->nsteps + 1) * sizeof *cp);
    /* one entry per connection that carries chunks, then merged per rank pair */
    s->pairs = malloc(((size_t)g->nconns + 1) * sizeof *s->pairs);
    if (cp == NULL || s->pairs == NULL) {
        free(cp);
        c->res = WEFT_ERR_NOMEM;
        return;
    }
    int64_t np = 0;
    for (int32_t ci = 0; ci < g->nconns; ci++) {
        const weft_sg_conn *cn = &g->conns[ci];
        int64_t chunks = 0;
        for (int32_t m = 0; m < cn->nsend; m++)
            chunks += weft_sg_ir_step(g, cn->sends[m])->cnt;
        s->chunks_moved += chunks;
        if (chunks > 0) s->pairs[np++] = (struct weft_verify_pair){cn->src, cn->dst, chunks};
    }
    qsort(s->pairs, (size_t)np, sizeof *s->pairs, cmp_pair);
    s->npairs = 0;
    for (int64_t i = 0; i < np; i++) {
        struct weft_verify_pair *last = s->npairs ? &s->pairs[s->npairs - 1] : NULL;
        if (last && last->src == s->pairs[i].src && last->dst == s->pairs[i].dst)
            last->chunks += s->pairs[i].chunks;
        else
            s->pairs[s->npairs++] = s->pairs[i];
    }
    s->critical_path = weft_sg_depths(g, c->order, cp, NULL);
    free(cp);
}

/* Bounded buffering only removes interleavings, and a run's outcome does not depend on the
 * interleaving, so deadlock freedom is monotone in the capacity: binary search. A capacity of
 * the most messages any connection carries behaves as unbounded. */
static weft_result min_fifo(ctx *c) {
    weft_result res = WEFT_OK;
    const weft_sg *g = c->g;
    int32_t hi = 1;
    for (int32_t i = 0; i < g->nconns; i++)
        if (g->conns[i].nsend > hi) hi = g->conns[i].nsend;
    int32_t lo = 1;
    while (lo < hi) {
        int32_t mid = lo + (hi - lo) / 2;
        weft_sg_run r = {0};
        r.fifo = mid;
        r.burst = 1;
        res = weft_sg_run_exec(g, &r);
        int stalled = r.stalled;
        weft_sg_run_free(&r);
        if (res != WEFT_OK) return res;
        if (stalled)
            lo = mid + 1;
        else
            hi = mid;
    }
    c->sum->min_fifo = lo;
    return res;
}

weft_result weft_ir_verify(const weft_algo *a, const weft_verify_opts *opts, weft_diag *d,
                           weft_verify_summary *summary) {
    weft_result res = WEFT_OK;
    weft_verify_opts defaults;
    weft_verify_summary local_sum;
    weft_sg *g = NULL;
    weft_sg_run run0 = {0}, run1 = {0};
    ctx c;
    memset(&c, 0, sizeof c);
    if (opts == NULL) {
        weft_verify_opts_init(&defaults);
        opts = &defaults;
    }
    weft_verify_summary *sum = summary ? summary : &local_sum;
    memset(sum, 0, sizeof *sum);
    sum->nranks = a->ngpus;
    sum->nchannels = a->nchannels;
    sum->nsteps = weft_algo_nsteps(a);
    for (int32_t r = 0; r < a->ngpus; r++)
        sum->ntbs += a->gpus[r].ntbs;
    if (!weft_coll_runnable(a->coll)) {
        weft_diag_add(d, WEFT_SEV_ERROR, a->file, a->line, 0,
                      "weft does not verify %s schedules (no NCCL collective runs them)",
                      weft_coll_name(a->coll));
        sum->errors[WEFT_VERIFY_STRUCTURE]++;
        WEFT_FAIL(WEFT_ERR_UNSUPPORTED);
    }
    if (!a->inplace && !a->outofplace) {
        weft_diag_add(d, WEFT_SEV_ERROR, a->file, a->line, 0,
                      "the algorithm declares neither inplace=\"1\" nor outofplace=\"1\"");
        sum->errors[WEFT_VERIFY_STRUCTURE]++;
    }
    WEFT_CHECK(weft_sg_validate(a, d, sum->errors));
    res = weft_sg_build(a, d, sum->errors, &g);
    if (res != WEFT_OK) goto fail;
    if ((int64_t)a->ngpus * g->nlocs > WEFT_IR_MAX_LOCATIONS) {
        weft_diag_add(d, WEFT_SEV_ERROR, a->file, a->line, 0,
                      "%d ranks of %d chunks are more than the verifier handles (%d in all)",
                      a->ngpus, g->nlocs, WEFT_IR_MAX_LOCATIONS);
        sum->errors[WEFT_VERIFY_STRUCTURE]++;
        WEFT_FAIL(WEFT_ERR_INPUT);
    }
    c.g = g;
    c.a = a;
    c.o = opts;
    c.d = d;
    c.sum = sum;
    c.both_modes = a->inplace && a->outofplace;
    c.N = a->ngpus;
    c.L = g->nlocs;
    c.nw = (c.N + 63) / 64;
    c.order = malloc(((size_t)g->nsteps + 1) * sizeof *c.order);
    c.pos = malloc(((size_t)g->nsteps + 1) * sizeof *c.pos);
    c.ntmp = (size_t)c.nw * 64 * 2 + 2;
    c.tmp = malloc(c.ntmp * sizeof *c.tmp);
    c.expect = malloc(sv_words(&c, 1, 0) * sizeof(uint64_t));
    WEFT_CHECK_ALLOC(c.order);
    WEFT_CHECK_ALLOC(c.pos);
    WEFT_CHECK_ALLOC(c.tmp);
    WEFT_CHECK_ALLOC(c.expect);

    /* deadlock: one run decides for every interleaving (see stepgraph_internal.h) */
    WEFT_CHECK(weft_sg_linearize(g, c.order, &run0));
    if (run0.stalled) {
        int n = weft_sg_report_cycles(g, &run0, d, "deadlock", opts->max_reports);
        if (n == 0) /* every wait has a partner once matching passed; say so if not */
            weft_diag_add(d, WEFT_SEV_ERROR, a->file, 0, 0,
                          "deadlock: %lld of %d steps ran, then no tb could progress",
                          (long long)run0.nfired, g->nsteps);
        sum->errors[WEFT_VERIFY_DEADLOCK] += n ? n : 1;
        WEFT_FAIL(WEFT_ERR_INPUT);
    }
    for (int32_t i = 0; i < g->nsteps; i++)
        c.pos[c.order[i]] = i;
    summarize(&c);
    WEFT_CHECK(c.res);
    WEFT_CHECK(min_fifo(&c));
    if (opts->fifo_slots > 0 && opts->fifo_slots < sum->min_fifo) {
        run1.fifo = opts->fifo_slots;
        run1.burst = 1;
        WEFT_CHECK(weft_sg_run_exec(g, &run1));
        if (run1.stalled) {
            char what[96];
            snprintf(what, sizeof what, "deadlock when a connection buffers %d message%s",
                     opts->fifo_slots, opts->fifo_slots == 1 ? "" : "s");
            sum->errors[WEFT_VERIFY_FIFO_DEADLOCK] +=
                weft_sg_report_cycles(g, &run1, d, what, opts->max_reports);
            weft_diag_add(d, WEFT_SEV_NOTE, a->file, 0, 0,
                          "the schedule needs connection buffers of at least %d messages",
                          sum->min_fifo);
        }
    }
    for (int mode = 0; mode < 2; mode++) {
        int inplace = mode == 0;
        if (inplace ? !a->inplace : !a->outofplace) continue;
        sum->modes |= (uint8_t)(1u << mode);
        WEFT_CHECK(check_mode(&c, inplace));
    }
    for (int i = 0; i < WEFT_VERIFY_CLASS_COUNT; i++)
        if (sum->errors[i]) res = WEFT_ERR_INPUT;
fail:
    if (res == WEFT_OK)
        for (int i = 0; i < WEFT_VERIFY_CLASS_COUNT; i++)
            if (sum->errors[i]) res = WEFT_ERR_INPUT;
    weft_sg_run_free(&run1);
    weft_sg_run_free(&run0);
    free(c.expect);
    free(c.tmp);
    free(c.pos);
    free(c.order);
    weft_sg_free(g);
    if (summary == NULL) weft_verify_summary_free(sum);
    return res;
}

void weft_verify_summary_print(const weft_verify_summary *s, FILE *out, int max_pairs) {
    fprintf(out, "  %d ranks, %lld tbs, %lld steps, %d channel%s; critical path %lld steps\n",
            s->nranks, (long long)s->ntbs, (long long)s->nsteps, s->nchannels,
            s->nchannels == 1 ? "" : "s", (long long)s->critical_path);
    if (s->min_fifo > 0)
        fprintf(out, "  needs connection buffers of %d message%s\n", s->min_fifo,
                s->min_fifo == 1 ? "" : "s");
    if (s->pairs == NULL) return;
    int64_t npairs = s->npairs, lo = INT64_MAX, hi = 0;
    for (int64_t i = 0; i < npairs; i++) {
        int64_t v = s->pairs[i].chunks;
        if (v < lo) lo = v;
        if (v > hi) hi = v;
    }
    if (npairs == 0) {
        fprintf(out, "  no chunks move between ranks\n");
        return;
    }
    fprintf(out, "  %lld chunks moved over %lld peer pairs", (long long)s->chunks_moved,
            (long long)npairs);
    if (lo == hi)
        fprintf(out, " (%lld each)\n", (long long)lo);
    else
        fprintf(out, " (%lld to %lld)\n", (long long)lo, (long long)hi);
    if (npairs > max_pairs) return;
    fprintf(out, "  chunks per pair:");
    for (int64_t i = 0; i < npairs; i++)
        fprintf(out, "%s%d->%d:%lld", i % 8 == 0 && i ? "\n                   " : " ",
                s->pairs[i].src, s->pairs[i].dst, (long long)s->pairs[i].chunks);
    fprintf(out, "\n");
}

int weft_ir_verifies(const weft_algo *a, const weft_verify_opts *o) {
    weft_verify_opts q;
    if (o == NULL)
        weft_verify_opts_init(&q);
    else
        q = *o;
    weft_fact f;
    int r = weft_fact_recall(&f, a,
                             (int64_t[]){WEFT_FACT_VERIFIES, q.fifo_slots, q.direct_transfers}, 3);
    if (r < 0) {
        q.max_reports = 1; /* only whether it verifies is kept */
        weft_diag *d = weft_diag_new();
        weft_result vr = d ? weft_ir_verify(a, &q, d, NULL) : WEFT_ERR_NOMEM;
        weft_diag_free(d);
        r = vr == WEFT_OK;
        if (vr == WEFT_ERR_NOMEM) { /* running out of memory proves nothing */
            weft_fact_keep(&f, -1);
            return 0;
        }
    }
    weft_fact_keep(&f, r);
    return r;
}
