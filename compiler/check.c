/* check.c — the checker (weft_cc_check): symbolic execution of the operations, what every chunk
 * holds in each buffer mode, against ensures and the collective's postcondition. */
#include "cc_internal.h"

#include <stdlib.h>
#include <string.h>

/* A chunk's contents: the sorted set of input contributions (rank * in_chunks + index) it is
 * the reduction of. Immutable and shared by reference count; NULL = holds nothing. */
typedef struct val {
    int32_t refs, n;
    uint32_t ids[];
} val;

static val *val_new(int32_t n) {
    val *v = malloc(sizeof *v + (size_t)n * sizeof(uint32_t));
    if (v) {
        v->refs = 1;
        v->n = n;
    }
    return v;
}
static val *val_ref(val *v) {
    if (v) v->refs++;
    return v;
}
static void val_unref(val *v) {
    if (v && --v->refs == 0) free(v);
}

enum { MODE_OUT = 0, MODE_IN = 1 };

/* A diagnostic waiting for both modes to be traced, so that one found in both is shown once. */
typedef struct pending {
    weft_lang_loc loc;
    int32_t frame;
    char *msg;
    uint8_t modes;
} pending;

typedef struct tracer {
    weft_cc_program *p;
    weft_diag *d;
    int mode;
    cc_layout lay;
    val **v;
    int32_t *writer;
    int32_t *cpy; /* per slot: the local copy that last wrote it, while nothing else has read or
                     written it since (-1 otherwise) */
    /* per slot: the highest chunk index within a segment that the value there went through
     * (-1: none). Chunks shorten with that index when the count is not a multiple of the
     * chunk count (weft_semantics.h, the count policy), and a value stored into a shorter
     * chunk loses its last elements. short_by: the op that stored it there. */
    int32_t *seg_idx, *short_by;
    int64_t nslots;
    /* per op, for lowering */
    int32_t *cand;
    int32_t *feed, *into; /* candidates for p->feed and p->recv_into in this mode */
    int64_t *reads_of;
    uint8_t *final;
    uint8_t *noop;
    pending *pend;
    size_t npend, cappend;
    int post_errors;
    size_t dropped; /* errors not kept (repeats at one place, or too many) */
    int nomem;
    /* contributions merged, compared and listed: past CC_MAX_TRACE_WORK checking stops (a
     * program can make every reduce merge millions of contributions) */
    int64_t work;
    int over;
} tracer;

/* Charges n units of checking work; 1 once over the budget (the caller stops). */
static int spend(tracer *t, int64_t n) {
    t->work += n;
    if (t->work <= CC_MAX_TRACE_WORK) return 0;
    t->over = 1;
    return 1;
}

/* ---- diagnostics ------------------------------------------------------------------------ */

static void perr(tracer *t, weft_lang_loc loc, int32_t frame, const char *fmt, ...)
    WEFT_PRINTF(4, 5);
static void perr(tracer *t, weft_lang_loc loc, int32_t frame, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    char *msg = weft_vasprintf(fmt, ap);
    va_end(ap);
    if (msg == NULL) {
        t->nomem = 1;
        return;
    }
    /* one message per place and mode is shown (the first); the rest are only counted */
    for (size_t i = 0; i < t->npend; i++) {
        pending *q = &t->pend[i];
        if (q->loc.file != loc.file || q->loc.start != loc.start) continue;
        if (strcmp(q->msg, msg) == 0) {
            q->modes |= (uint8_t)(1u << t->mode);
            free(msg);
            return;
        }
        if (q->modes & (1u << t->mode)) {
            t->dropped++;
            free(msg);
            return;
        }
    }
    if (t->npend >= 1000) {
        t->dropped++;
        free(msg);
        return;
    }
    if (weft_grow((void **)&t->pend, &t->cappend, t->npend, sizeof *t->pend) != 0) {
        free(msg);
        t->nomem = 1;
        return;
    }
    t->pend[t->npend++] = (pending){loc, frame, msg, (uint8_t)(1u << t->mode)};
}

static int cmp_u64(const void *a, const void *b) {
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* "input[0..4][1] + input[6][1]": contributions grouped by index, ranks as ranges. */
static void val_str(const weft_cc_program *p, const val *v, char *buf, size_t n) {
    if (v == NULL || v->n == 0) {
        snprintf(buf, n, "nothing");
        return;
    }
    int32_t in = p->in_chunks;
    /* a value can hold millions of contributions: past this many it is only counted */
    uint64_t *pairs = v->n <= (1 << 16) ? malloc((size_t)v->n * sizeof *pairs) : NULL;
    if (pairs == NULL) {
        snprintf(buf, n, "%d contributions", v->n);
        return;
    }
    for (int32_t i = 0; i < v->n; i++)
        pairs[i] = ((uint64_t)(v->ids[i] % (uint32_t)in) << 32) | (v->ids[i] / (uint32_t)in);
    /* ids are sorted by rank then index; sort by index then rank */
    qsort(pairs, (size_t)v->n, sizeof *pairs, cmp_u64);
    size_t m = 0;
    int terms = 0;
    buf[0] = '\0';
    for (int32_t i = 0; i < v->n && m < n;) {
        uint32_t idx = (uint32_t)(pairs[i] >> 32), r0 = (uint32_t)pairs[i];
        int32_t j = i + 1;
        while (j < v->n && (uint32_t)(pairs[j] >> 32) == idx &&
               (uint32_t)pairs[j] == r0 + (uint32_t)(j - i))
            j++;
        if (terms == 6) {
            m += (size_t)snprintf(buf + m, n - m, " + ... (%d contributions)", v->n);
            break;
        }
        if (j - i == 1)
            m += (size_t)snprintf(buf + m, n - m, "%sinput[%u][%u]", terms ? " + " : "", r0, idx);
        else
            m += (size_t)snprintf(buf + m, n - m, "%sinput[%u..%u][%u]", terms ? " + " : "", r0,
                                  r0 + (uint32_t)(j - i), idx);
        terms++;
        i = j;
    }
    free(pairs);
}

static void id_str(const weft_cc_program *p, uint32_t id, char *buf, size_t n) {
    snprintf(buf, n, "input[%u][%u]", id / (uint32_t)p->in_chunks, id % (uint32_t)p->in_chunks);
}

/* ---- memory ----------------------------------------------------------------------------- */

static int64_t slot(const tracer *t, int32_t buf, int32_t rank, int32_t idx) {
    return cc_slot(&t->lay, t->p, buf, rank, idx);
}

static uint32_t contribution(const weft_cc_program *p, int32_t rank, int32_t idx) {
    return (uint32_t)rank * (uint32_t)p->in_chunks + (uint32_t)idx;
}

/* Whether rank r's input holds data when the call starts: where the rank has an input out of
 * place (weft_buf_exists; in place, that of broadcast's non-root ranks is their output). */
static int input_holds_data(const weft_cc_program *p, int32_t r) {
    return weft_buf_exists(p->coll, p->root, 0, r, WEFT_BUF_INPUT);
}

static int init_memory(tracer *t) {
    weft_cc_program *p = t->p;
    cc_layout_init(&t->lay, p, t->mode == MODE_IN);
    t->nslots = t->lay.nslots;
    t->v = calloc((size_t)t->nslots + 1, sizeof *t->v);
    t->writer = malloc(((size_t)t->nslots + 1) * sizeof *t->writer);
    t->cpy = malloc(((size_t)t->nslots + 1) * sizeof *t->cpy);
    t->seg_idx = malloc(((size_t)t->nslots + 1) * sizeof *t->seg_idx);
    t->short_by = malloc(((size_t)t->nslots + 1) * sizeof *t->short_by);
    if (t->v == NULL || t->writer == NULL || t->cpy == NULL || t->seg_idx == NULL ||
        t->short_by == NULL)
        return -1;
    for (int64_t i = 0; i < t->nslots; i++)
        t->writer[i] = t->cpy[i] = t->seg_idx[i] = t->short_by[i] = -1;
    for (int32_t r = 0; r < p->nranks; r++) {
        if (!input_holds_data(p, r)) continue;
        for (int32_t j = 0; j < p->in_chunks; j++) {
            val *v = val_new(1);
            if (v == NULL) return -1;
            v->ids[0] = contribution(p, r, j);
            int64_t s = slot(t, CC_BUF_INPUT, r, j);
            val_unref(t->v[s]);
            t->v[s] = v;
            t->seg_idx[s] = j % p->chunks;
        }
    }
    return 0;
}

static void free_memory(tracer *t) {
    for (int64_t i = 0; t->v && i < t->nslots; i++)
        val_unref(t->v[i]);
    WEFT_FREE(t->v);
    WEFT_FREE(t->writer);
    WEFT_FREE(t->cpy);
    WEFT_FREE(t->seg_idx);
    WEFT_FREE(t->short_by);
}

/* ---- operations ------------------------------------------------------------------------- */

/* Union of two sets; *dup gets a contribution found in both (or UINT32_MAX). */
static val *merge(const val *a, const val *b, uint32_t *dup) {
    val *r = val_new(a->n + b->n);
    *dup = UINT32_MAX;
    if (r == NULL) return NULL;
    int32_t i = 0, j = 0, n = 0;
    while (i < a->n || j < b->n) {
        if (j >= b->n || (i < a->n && a->ids[i] < b->ids[j])) {
            r->ids[n++] = a->ids[i++];
        } else if (i >= a->n || b->ids[j] < a->ids[i]) {
            r->ids[n++] = b->ids[j++];
        } else {
            if (*dup == UINT32_MAX) *dup = a->ids[i];
            r->ids[n++] = a->ids[i++];
            j++;
        }
    }
    r->n = n;
    return r;
}

static const char *empty_hint(const weft_cc_program *p, const cc_ref *r, char *buf, size_t len) {
    if (r->buf != CC_BUF_INPUT || input_holds_data(p, r->rank)) return "";
    snprintf(buf, len, " (only the root's input holds data in a %s)", weft_coll_name(p->coll));
    return buf;
}

static void note_read(tracer *t, int64_t s) {
    if (t->writer[s] >= 0) t->reads_of[t->writer[s]]++;
}

/* Slot bookkeeping for the copy fusions, after op qi ran: its reads and writes end every copy
 * candidate they touch, and a local copy becomes the candidate of its destination. */
static void track_copies(tracer *t, int32_t qi, int64_t s0, int64_t d0, int32_t cnt) {
    const cc_op *q = &t->p->ops[qi];
    for (int32_t i = 0; i < cnt; i++)
        t->cpy[s0 + i] = t->cpy[d0 + i] = -1;
    if (q->kind == CC_OP_COPY && q->src.rank == q->dst.rank)
        for (int32_t i = 0; i < cnt; i++)
            t->cpy[d0 + i] = qi;
}

/* The fusion candidates of op qi, before it runs (docs/language.md, "How programs become
 * schedules"):
 * - feed: a reduce into Y whose Y holds exactly what a local copy X -> Y put there, with nothing
 *   having read or written Y since, nor written X: the reduce can read X instead of Y, and the
 *   copy can go. (In-place, X may be Y: the copy moved nothing.)
 * - into: a local copy or reduce Z -> Y whose Z holds exactly what one receive stored there; it
 *   becomes a fusion if, at the end, that value turns out to have no other reader and not to be
 *   part of the result: the receive can then store into Y directly. */
static void fusion_candidates(tracer *t, int32_t qi, int64_t s0, int64_t d0, int32_t cnt) {
    const weft_cc_program *p = t->p;
    const cc_op *q = &p->ops[qi];
    if (q->kind == CC_OP_REDUCE) {
        int32_t a = t->cpy[d0];
        for (int32_t i = 1; i < cnt && a >= 0; i++)
            if (t->cpy[d0 + i] != a) a = -1;
        if (a >= 0) {
            const cc_op *c = &p->ops[a];
            int64_t x0 = slot(t, c->src.buf, c->src.rank, c->src.off);
            if (c->dst.cnt != cnt || slot(t, c->dst.buf, c->dst.rank, c->dst.off) != d0) a = -1;
            for (int32_t i = 0; i < cnt && a >= 0; i++)
                if (t->writer[x0 + i] > a) a = -1;
        }
        t->feed[qi] = a;
    }
    if (q->src.rank == q->dst.rank) {
        int32_t w = t->writer[s0];
        for (int32_t i = 1; i < cnt && w >= 0; i++)
            if (t->writer[s0 + i] != w) w = -1;
        if (w >= 0) {
            const cc_op *r = &p->ops[w];
            if (r->kind != CC_OP_COPY || r->src.rank == r->dst.rank || r->dst.cnt != cnt ||
                slot(t, r->dst.buf, r->dst.rank, r->dst.off) != s0)
                w = -1;
        }
        t->into[qi] = w;
    }
}

static void trace_op(tracer *t, int32_t qi) {
    weft_cc_program *p = t->p;
    cc_op *q = &p->ops[qi];
    char a[96], b[96];
    int32_t cnt = q->dst.cnt;
    int64_t s0 = slot(t, q->src.buf, q->src.rank, q->src.off);
    int64_t d0 = slot(t, q->dst.buf, q->dst.rank, q->dst.off);
    const char *what = q->kind == CC_OP_COPY ? "copy" : "reduce";
    if (t->mode == MODE_OUT && q->dst.buf == CC_BUF_INPUT) {
        cc_ref_str(p, &q->dst, b, sizeof b);
        perr(t, q->loc, q->frame, "writes %s, but the input is read-only in an out-of-place %s", b,
             weft_coll_name(p->coll));
    }
    if (q->src.rank == q->dst.rank && s0 < d0 + cnt && d0 < s0 + cnt) {
        if (s0 == d0 && q->kind == CC_OP_COPY) {
            t->noop[qi] = 1;
            for (int32_t i = 0; i < cnt; i++)
                note_read(t, s0 + i);
            track_copies(t, qi, s0, d0, cnt);
            return;
        }
        perr(t, q->loc, q->frame, "the source and destination overlap%s",
             t->mode == MODE_IN && q->src.buf != q->dst.buf ? " (they share memory in-place)" : "");
        return;
    }
    int bad = 0;
    for (int32_t i = 0; i < cnt && !bad; i++) {
        if (t->v[s0 + i] == NULL) {
            cc_ref r = {q->src.buf, q->src.rank, q->src.off + i, 1};
            char hint[80];
            cc_ref_str(p, &r, a, sizeof a);
            perr(t, q->loc, q->frame, "%s reads %s, which holds nothing yet%s", what, a,
                 empty_hint(p, &r, hint, sizeof hint));
            bad = 1;
        } else if (q->kind == CC_OP_REDUCE && t->v[d0 + i] == NULL) {
            cc_ref r = {q->dst.buf, q->dst.rank, q->dst.off + i, 1};
            cc_ref_str(p, &r, a, sizeof a);
            perr(t, q->loc, q->frame,
                 "reduce into %s, which holds nothing yet (copy something there first)", a);
            bad = 1;
        }
    }
    if (bad) return;
    fusion_candidates(t, qi, s0, d0, cnt);
    /* fusion candidate: a send of exactly what one receive stored */
    if (q->src.rank != q->dst.rank) {
        int32_t w = t->writer[s0];
        for (int32_t i = 1; i < cnt && w >= 0; i++)
            if (t->writer[s0 + i] != w) w = -1;
        if (w >= 0) {
            const cc_op *pw = &p->ops[w];
            if (pw->src.rank != pw->dst.rank && pw->dst.rank == q->src.rank && pw->dst.cnt == cnt &&
                slot(t, pw->dst.buf, pw->dst.rank, pw->dst.off) == s0)
                t->cand[qi] = w;
        }
    }
    int reported = 0;
    for (int32_t i = 0; i < cnt; i++) {
        int64_t s = s0 + i, dd = d0 + i;
        note_read(t, s);
        /* the chunk index the value reaches: the source's, the destination's when reducing,
         * and that of the destination chunk itself (scratch chunks are never short) */
        int32_t si = t->seg_idx[s], by = t->short_by[s];
        if (q->kind == CC_OP_REDUCE && t->seg_idx[dd] > si)
            si = t->seg_idx[dd], by = t->short_by[dd];
        int32_t di = q->dst.buf < CC_BUF_SCRATCH0 ? (q->dst.off + i) % p->chunks : -1;
        if (di > si) si = di, by = qi;
        t->seg_idx[dd] = si;
        t->short_by[dd] = by;
        val *nv;
        if (q->kind == CC_OP_COPY) {
            nv = val_ref(t->v[s]);
        } else {
            note_read(t, dd);
            uint32_t dup;
            if (spend(t, (int64_t)t->v[dd]->n + t->v[s]->n)) return;
            nv = merge(t->v[dd], t->v[s], &dup);
            if (nv == NULL) {
                t->nomem = 1;
                return;
            }
            if (dup != UINT32_MAX && !reported) {
                cc_ref r = {q->dst.buf, q->dst.rank, q->dst.off + i, 1};
                id_str(p, dup, a, sizeof a);
                cc_ref_str(p, &r, b, sizeof b);
                perr(t, q->loc, q->frame, "reduce counts %s twice: %s already holds it", a, b);
                reported = 1;
            }
        }
        val_unref(t->v[dd]);
        t->v[dd] = nv;
        t->writer[dd] = qi;
    }
    track_copies(t, qi, s0, d0, cnt);
}

static int cmp_u32(const void *a, const void *b) {
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return x < y ? -1 : x > y;
}

static int same(const val *v, const uint32_t *ids, int32_t n) {
    if (v == NULL) return n == 0;
    if (v->n != n) return 0;
    return memcmp(v->ids, ids, (size_t)n * sizeof *ids) == 0;
}

static void trace_ensure(tracer *t, int32_t qi) {
    weft_cc_program *p = t->p;
    cc_op *q = &p->ops[qi];
    int64_t total = 0;
    for (int32_t k = 0; k < q->nterms; k++) {
        const cc_term *tm = &p->terms[q->term0 + k];
        total += tm->rank_hi - tm->rank_lo;
        if (tm->buf != CC_BUF_INPUT) {
            perr(t, q->loc, q->frame,
                 "ensure terms name input chunks (a contribution of a rank), not %s",
                 cc_buf_name(p, tm->buf));
            return;
        }
    }
    uint32_t *ids = malloc((size_t)(total ? total : 1) * sizeof *ids);
    if (ids == NULL) {
        t->nomem = 1;
        return;
    }
    for (int32_t c = 0; c < q->dst.cnt; c++) {
        int32_t n = 0;
        if (spend(t, total)) break;
        for (int32_t k = 0; k < q->nterms; k++) {
            const cc_term *tm = &p->terms[q->term0 + k];
            for (int32_t r = tm->rank_lo; r < tm->rank_hi; r++)
                ids[n++] = contribution(p, r, tm->off + c);
        }
        qsort(ids, (size_t)n, sizeof *ids, cmp_u32);
        for (int32_t i = 1; i < n; i++)
            if (ids[i] == ids[i - 1]) {
                char a[64];
                id_str(p, ids[i], a, sizeof a);
                perr(t, q->loc, q->frame, "ensure names %s twice", a);
                free(ids);
                return;
            }
        int64_t s = slot(t, q->dst.buf, q->dst.rank, q->dst.off + c);
        note_read(t, s);
        if (!same(t->v[s], ids, n)) {
            char a[96], have[256], want[256];
            cc_ref r = {q->dst.buf, q->dst.rank, q->dst.off + c, 1};
            cc_ref_str(p, &r, a, sizeof a);
            val_str(p, t->v[s], have, sizeof have);
            val *w = val_new(n);
            if (w == NULL) {
                t->nomem = 1;
                break;
            }
            memcpy(w->ids, ids, (size_t)n * sizeof *ids);
            val_str(p, w, want, sizeof want);
            val_unref(w);
            perr(t, q->loc, q->frame, "ensure fails: %s holds %s, not %s", a, have, want);
            break;
        }
    }
    free(ids);
}

/* ---- the postcondition ------------------------------------------------------------------- */

/* Expected contributions of output chunk j on rank r (weft_coll_source), in order; returns how
 * many (ids may be NULL to count them), -1 when unconstrained. */
static int32_t expected(const weft_cc_program *p, int32_t r, int32_t j, uint32_t *ids) {
    int32_t k = p->chunks, q, seg;
    if (!weft_coll_source(p->coll, p->nranks, p->root, r, j / k, &q, &seg)) return -1;
    int32_t x = seg * k + j % k;
    if (q >= 0) {
        if (ids) ids[0] = contribution(p, q, x);
        return 1;
    }
    for (q = 0; ids && q < p->nranks; q++)
        ids[q] = contribution(p, q, x);
    return p->nranks;
}

static void check_post(tracer *t) {
    weft_cc_program *p = t->p;
    uint32_t *ids = malloc((size_t)p->nranks * sizeof *ids + sizeof *ids);
    /* allreduce and reduce expect one value per chunk index: a value already found right there
     * (copies share it) is not compared again */
    const val **ok = calloc((size_t)p->out_chunks + 1, sizeof *ok);
    if (ids == NULL || ok == NULL) {
        free(ids);
        free(ok);
        t->nomem = 1;
        return;
    }
    int by_index = p->coll == WEFT_COLL_ALLREDUCE || p->coll == WEFT_COLL_REDUCE;
    int64_t wrong = 0;
    for (int32_t r = 0; r < p->nranks; r++)
        for (int32_t j = 0; j < p->out_chunks; j++) {
            int64_t s = slot(t, CC_BUF_OUTPUT, r, j);
            if (t->writer[s] >= 0) t->final[t->writer[s]] = 1;
            int32_t want = expected(p, r, j, NULL);
            if (want < 0) continue;
            const val *have = t->v[s];
            int right = 0;
            if (have && have->n == want) {
                if (by_index && ok[j] == have) {
                    right = 1;
                } else {
                    if (spend(t, 2 * (int64_t)want)) goto out;
                    expected(p, r, j, ids);
                    right = same(have, ids, want);
                    if (right && by_index) ok[j] = have;
                }
            }
            if (right && t->seg_idx[s] > j % p->chunks && t->short_by[s] >= 0) {
                /* right for counts that are multiples of the chunk count only */
                if (++wrong > 8) continue;
                const cc_op *by = &p->ops[t->short_by[s]];
                char a[64], d[64];
                cc_ref_str(p, &by->dst, d, sizeof d);
                cc_ref ref = {CC_BUF_OUTPUT, r, j, 1};
                cc_ref_str(p, &ref, a, sizeof a);
                perr(t, by->loc, by->frame,
                     "%s ends with data that passes through %s here, but chunk %d of a segment is "
                     "shorter than chunk %d when the count is not a multiple of %d, and what "
                     "lies past its end is lost",
                     a, d, t->seg_idx[s], j % p->chunks, p->chunks);
                continue;
            }
            if (right) continue;
            if (++wrong > 8) continue;
            int32_t n = expected(p, r, j, ids);
            char a[64], hs[256], ws[256];
            cc_ref ref = {CC_BUF_OUTPUT, r, j, 1};
            cc_ref_str(p, &ref, a, sizeof a);
            val_str(p, have, hs, sizeof hs);
            val *w = val_new(n);
            if (w == NULL) {
                t->nomem = 1;
                goto out;
            }
            memcpy(w->ids, ids, (size_t)n * sizeof *ids);
            val_str(p, w, ws, sizeof ws);
            val_unref(w);
            int32_t wi = t->writer[s];
            if (wi >= 0)
                perr(t, p->ops[wi].loc, p->ops[wi].frame,
                     "at the end, %s holds %s; %s needs %s (written last here)", a, hs,
                     weft_coll_name(p->coll), ws);
            else
                perr(t, p->coll_loc, -1, "at the end, %s holds %s; %s needs %s", a, hs,
                     weft_coll_name(p->coll), ws);
        }
    if (wrong > 8)
        perr(t, p->coll_loc, -1, "%lld more output chunks are wrong at the end",
             (long long)(wrong - 8));
out:
    free(ids);
    free(ok);
}

/* ---- driver ----------------------------------------------------------------------------- */

static void trace_mode(tracer *t, int mode) {
    weft_cc_program *p = t->p;
    t->mode = mode;
    for (size_t i = 0; i < p->nops; i++) {
        t->cand[i] = t->feed[i] = t->into[i] = -1;
        t->reads_of[i] = 0;
        t->final[i] = 0;
        t->noop[i] = 0;
    }
    if (init_memory(t) != 0) {
        t->nomem = 1;
        free_memory(t);
        return;
    }
    for (size_t i = 0; i < p->nops && !t->nomem && !t->over; i++) {
        if (p->ops[i].kind == CC_OP_ENSURE)
            trace_ensure(t, (int32_t)i);
        else
            trace_op(t, (int32_t)i);
        if (t->over)
            cc_report(p, t->d, WEFT_SEV_ERROR, p->ops[i].loc, p->ops[i].frame,
                      "checking stopped here: tracing the program takes more than %lld steps "
                      "(contributions merged or compared), the limit",
                      (long long)CC_MAX_TRACE_WORK);
    }
    if (!t->nomem && !t->over) {
        check_post(t);
        if (t->over)
            cc_report(p, t->d, WEFT_SEV_ERROR, p->coll_loc, -1,
                      "checking stopped: comparing the outputs with what %s needs takes more "
                      "than %lld steps, the limit",
                      weft_coll_name(p->coll), (long long)CC_MAX_TRACE_WORK);
    }
    free_memory(t);
}

weft_result weft_cc_check(weft_cc_program *p, weft_diag *d) {
    weft_result res = WEFT_OK;
    tracer t;
    memset(&t, 0, sizeof t);
    t.p = p;
    t.d = d;
    size_t n = p->nops ? p->nops : 1;
    t.cand = malloc(n * sizeof *t.cand);
    t.reads_of = malloc(n * sizeof *t.reads_of);
    t.final = malloc(n);
    t.noop = malloc(n);
    t.feed = malloc(n * sizeof *t.feed);
    t.into = malloc(n * sizeof *t.into);
    free(p->fuse_from);
    free(p->dead);
    free(p->noop);
    free(p->feed);
    free(p->recv_into);
    p->fuse_from = malloc(n * sizeof *p->fuse_from);
    p->dead = malloc(n);
    p->noop = malloc(n);
    p->feed = malloc(n * sizeof *p->feed);
    p->recv_into = malloc(n * sizeof *p->recv_into);
    if (!t.cand || !t.reads_of || !t.final || !t.noop || !t.feed || !t.into || !p->fuse_from ||
        !p->dead || !p->noop || !p->feed || !p->recv_into)
        WEFT_FAIL(WEFT_ERR_NOMEM);
    int first = 1;
    for (int mode = MODE_OUT; mode <= MODE_IN; mode++) {
        if ((mode == MODE_OUT && !p->outofplace) || (mode == MODE_IN && !p->inplace)) continue;
        trace_mode(&t, mode);
        if (t.nomem) WEFT_FAIL(WEFT_ERR_NOMEM);
        if (t.over) break;
        for (size_t i = 0; i < p->nops; i++) {
            int dead = t.reads_of[i] == p->ops[i].dst.cnt && !t.final[i];
            /* the receive's value: read by this op alone, and not part of the result */
            int32_t into = t.into[i];
            if (into >= 0 && (t.reads_of[into] != p->ops[into].dst.cnt || t.final[into])) into = -1;
            if (first) {
                p->fuse_from[i] = t.cand[i];
                p->dead[i] = (uint8_t)dead;
                p->noop[i] = t.noop[i];
                p->feed[i] = t.feed[i];
                p->recv_into[i] = into;
            } else {
                if (p->fuse_from[i] != t.cand[i]) p->fuse_from[i] = -1;
                p->dead[i] = (uint8_t)(p->dead[i] && dead);
                p->noop[i] = (uint8_t)(p->noop[i] && t.noop[i]);
                if (p->feed[i] != t.feed[i]) p->feed[i] = -1;
                if (p->recv_into[i] != into) p->recv_into[i] = -1;
            }
        }
        first = 0;
    }
    /* a copy that moves nothing in every mode is not emitted: nothing to fuse */
    for (size_t i = 0; i < p->nops; i++)
        if (p->feed[i] >= 0 && p->noop[p->feed[i]]) p->feed[i] = -1;
    if (p->coll == WEFT_COLL_CUSTOM) {
        int any = 0;
        for (size_t i = 0; i < p->nops; i++)
            if (p->ops[i].kind == CC_OP_ENSURE) any = 1;
        if (!any)
            cc_report(p, d, WEFT_SEV_WARNING, p->coll_loc, -1,
                      "a custom collective states its postcondition with 'ensure'; this one has "
                      "none, so nothing is checked");
    }
    uint8_t all = (uint8_t)((p->outofplace ? 1u : 0u) | (p->inplace ? 2u : 0u));
    for (size_t i = 0; i < t.npend; i++) {
        const pending *q = &t.pend[i];
        const char *mode = q->modes == all ? "" : q->modes == 1 ? "out-of-place: " : "in-place: ";
        cc_report(p, d, WEFT_SEV_ERROR, q->loc, q->frame, "%s%s", mode, q->msg);
    }
    cc_count_suppressed(p, t.dropped);
    cc_flush_suppressed(p, d);
    if (t.npend > 0 || t.over) WEFT_FAIL(WEFT_ERR_INPUT);
    p->checked = 1;
fail:
    for (size_t i = 0; i < t.npend; i++)
        free(t.pend[i].msg);
    free(t.pend);
    free(t.cand);
    free(t.reads_of);
    free(t.final);
    free(t.noop);
    free(t.feed);
    free(t.into);
    return res;
}
