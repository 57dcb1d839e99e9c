/* trace_draw.c — one call's timeline as SVG (`weft trace draw`): a row per thread block grouped
 * by rank, each step execution a bar at its recorded time (waiting, then moving data), an arrow
 * from each message's sending step to the step that received it, and the critical path that
 * `weft trace summarize` reports, in red. */
#include "svg.h"
#include "trace_tools.h"
#include "weft_ir.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

/* Colours per step type, as in weft show --format=svg (s r rcs rrs rrc rrcs cpy re nop). */
static const char *const type_fill[] = {"#6baed6", "#74c476", "#a1d99b", "#fd8d3c", "#fdae6b",
                                        "#e6550d", "#bdbdbd", "#bcbddc", "#f0f0f0"};
#define NFILL ((int)(sizeof type_fill / sizeof *type_fill))
#define CRIT  "#d62728"
#define MSG   "#7f7f7f"
#define WAIT  "#e8e8e8"

enum { LEFT = 150, PLOTW = 960, ROWH = 16, BARH = 10, HEAD = 16, GAP = 8, TOP = 64 };

typedef struct rowmap {
    int32_t rank, ntbs;
    double y; /* the top of the rank's block */
} rowmap;

typedef struct view {
    const weft_trace *t;
    weft_trace_path p;
    rowmap *ranks; /* one per model call of the group, in rank order */
    size_t nranks;
    int64_t origin, span;
    double height;
    uint8_t *crit; /* per slice of the trace: on the path */
} view;

static double tx(const view *v, int64_t ns) {
    return LEFT + (double)(ns - v->origin) * PLOTW / (double)v->span;
}

static const rowmap *rank_row(const view *v, int32_t rank) {
    for (size_t i = 0; i < v->nranks; i++)
        if (v->ranks[i].rank == rank) return &v->ranks[i];
    return NULL;
}

static double slice_y(const view *v, const weft_trace_slice *s) {
    const rowmap *m = rank_row(v, v->t->calls[s->call].rank);
    return m->y + HEAD + (double)s->tb * ROWH + ROWH / 2.0;
}

static int64_t slice_release(const weft_trace_slice *s) {
    return s->t0 + s->dep_ns + s->data_ns + s->credit_ns;
}

/* A send and the receive that took its message: (from, to, chan, message number). */
typedef struct mkey {
    int32_t from, to, chan;
    int64_t msg;
    size_t slice;
} mkey;

static int cmp_mkey(const void *pa, const void *pb) {
    const mkey *a = pa, *b = pb;
    return weft_cmp_keys((int64_t[]){a->from, a->to, a->chan, a->msg},
                         (int64_t[]){b->from, b->to, b->chan, b->msg}, 4);
}

static void draw_axis(svg *s, const view *v) {
    /* ticks at 1, 2 or 5 times a power of ten microseconds, about eight of them */
    double span_us = (double)v->span / 1e3, step = 1e-3;
    for (;;) {
        if (span_us / step <= 8) break;
        if (span_us / (step * 2) <= 8) {
            step *= 2;
            break;
        }
        if (span_us / (step * 5) <= 8) {
            step *= 5;
            break;
        }
        step *= 10;
    }
    svg_class(s, "axis");
    svg_group_begin(s, NULL);
    double bottom = v->height - 34;
    for (int i = 0; i * step <= span_us + 1e-9; i++) {
        double x = LEFT + i * step * 1e3 * PLOTW / (double)v->span;
        svg_line(s, x, TOP - 6, x, bottom, "#e4e4e4", 1, NULL);
        svg_text(s, x, TOP - 10, 9, "middle", 0, "#555", "%g", i * step);
    }
    svg_text(s, LEFT + PLOTW, TOP - 22, 9, "end", 0, "#555",
             "us from the call's first thread block entry");
    svg_group_end(s);
}

static void draw_slices(svg *s, const view *v, size_t c) {
    const weft_trace *t = v->t;
    const weft_trace_call *call = &t->calls[c];
    const rowmap *m = rank_row(v, call->rank);
    char title[320];
    snprintf(title, sizeof title, "rank %d", call->rank);
    svg_class(s, "rank");
    svg_group_begin(s, title);
    svg_text(s, 10, m->y + 12, 12, "start", 0, "black", "rank %d", call->rank);
    for (int32_t tb = 0; tb < m->ntbs; tb++)
        svg_text(s, 18, m->y + HEAD + tb * ROWH + 11.5, 10, "start", 0, "#333", "tb %d", tb);
    for (size_t i = 0; i < t->nslices; i++) {
        const weft_trace_slice *sl = &t->slices[i];
        if ((size_t)sl->call != c) continue;
        int64_t rel = slice_release(sl);
        snprintf(title, sizeof title,
                 "rank %d tb %d step %d iter %d: %s, %.3f us at %.3f us; waited dep %.3f, data "
                 "%.3f, credit %.3f us; %" PRId64 " bytes%s",
                 call->rank, sl->tb, sl->step, sl->iter, weft_step_name((weft_step_type)sl->type),
                 (double)(sl->t1 - sl->t0) / 1e3, (double)(sl->t0 - v->origin) / 1e3,
                 (double)sl->dep_ns / 1e3, (double)sl->data_ns / 1e3, (double)sl->credit_ns / 1e3,
                 sl->bytes, v->crit[i] ? "; on the critical path" : "");
        double y = slice_y(v, sl) - BARH / 2.0;
        double x0 = tx(v, sl->t0), xr = tx(v, rel < sl->t1 ? rel : sl->t1), x1 = tx(v, sl->t1);
        svg_class(s, v->crit[i] ? "slice crit" : "slice");
        svg_group_begin(s, title);
        if (xr > x0) svg_rect(s, x0, y, xr - x0, BARH, WAIT, 1, NULL);
        svg_rect(s, xr, y, x1 - xr > 0.6 ? x1 - xr : 0.6, BARH,
                 sl->type >= 0 && sl->type < NFILL ? type_fill[sl->type] : "#fff", 1,
                 v->crit[i] ? CRIT : NULL);
        svg_group_end(s);
    }
    svg_group_end(s);
}

/* Arrows from each sending step's end to the receiving step's release; an arrow is on the
 * critical path when the path goes from that send to that receive. */
static weft_result draw_messages(svg *s, const view *v) {
    const weft_trace *t = v->t;
    size_t ns = 0, s0 = SIZE_MAX, s1 = 0;
    for (size_t i = 0; i < t->nslices; i++)
        if ((size_t)t->slices[i].call >= v->p.c0 && (size_t)t->slices[i].call < v->p.c1) {
            if (s0 == SIZE_MAX) s0 = i;
            s1 = i + 1;
        }
    mkey *sends = malloc(((s1 > s0 ? s1 - s0 : 0) + 1) * sizeof *sends);
    if (sends == NULL) return WEFT_ERR_NOMEM;
    for (size_t i = s0; i < s1; i++) {
        const weft_trace_slice *sl = &t->slices[i];
        if (sl->smsg >= 0)
            sends[ns++] = (mkey){t->calls[sl->call].rank, sl->send, sl->chan, sl->smsg, i};
    }
    qsort(sends, ns, sizeof *sends, cmp_mkey);
    svg_class(s, "messages");
    svg_group_begin(s, NULL);
    for (size_t i = s0; i < s1; i++) {
        const weft_trace_slice *r = &t->slices[i];
        if (r->rmsg < 0) continue;
        mkey k = {r->recv, t->calls[r->call].rank, r->chan, r->rmsg, 0};
        const mkey *m = bsearch(&k, sends, ns, sizeof *sends, cmp_mkey);
        if (m == NULL) continue; /* its sender is not in the trace */
        const weft_trace_slice *snd = &t->slices[m->slice];
        int crit = 0;
        for (size_t h = 1; h < v->p.n; h++)
            if (v->p.slices[h] == i && v->p.slices[h - 1] == m->slice) crit = 1;
        int64_t rel = slice_release(r);
        svg_class(s, crit ? "msg crit" : "msg");
        svg_arrow(s, tx(v, snd->t1), slice_y(v, snd), tx(v, rel < r->t1 ? rel : r->t1),
                  slice_y(v, r), crit ? CRIT : MSG, crit ? 1.6 : 0.7, NULL, crit ? 1 : 0);
    }
    svg_group_end(s);
    free(sends);
    return WEFT_OK;
}

static weft_result draw_path(svg *s, const view *v) {
    double *x = malloc((2 * v->p.n + 1) * sizeof *x), *y = malloc((2 * v->p.n + 1) * sizeof *y);
    if (x == NULL || y == NULL) {
        free(x);
        free(y);
        return WEFT_ERR_NOMEM;
    }
    int n = 0;
    for (size_t h = 0; h < v->p.n; h++) {
        const weft_trace_slice *sl = &v->t->slices[v->p.slices[h]];
        int64_t rel = slice_release(sl);
        x[n] = tx(v, rel < sl->t1 ? rel : sl->t1), y[n++] = slice_y(v, sl);
        x[n] = tx(v, sl->t1), y[n++] = slice_y(v, sl);
    }
    svg_class(s, "critical-path");
    svg_polyline(s, x, y, n, CRIT, 2.5, NULL);
    free(x);
    free(y);
    return WEFT_OK;
}

weft_result weft_trace_draw_svg(const weft_trace *t, int64_t seq, FILE *out) {
    weft_result res = WEFT_OK;
    view v;
    memset(&v, 0, sizeof v);
    v.t = t;
    svg *s = NULL;
    WEFT_CHECK(weft_trace_call_path(t, seq, &v.p));
    v.nranks = v.p.c1 - v.p.c0;
    v.ranks = calloc(v.nranks + 1, sizeof *v.ranks);
    v.crit = calloc(t->nslices + 1, 1);
    WEFT_CHECK_ALLOC(v.ranks);
    WEFT_CHECK_ALLOC(v.crit);
    for (size_t h = 0; h < v.p.n; h++)
        v.crit[v.p.slices[h]] = 1;
    /* the model is sorted by (seq, rank): the group's calls are in rank order */
    v.origin = INT64_MAX;
    int64_t end = INT64_MIN;
    double y = TOP;
    for (size_t c = v.p.c0; c < v.p.c1; c++) {
        const weft_trace_call *call = &t->calls[c];
        int32_t ntbs = call->ntbs;
        for (size_t i = 0; i < t->nslices; i++)
            if ((size_t)t->slices[i].call == c && t->slices[i].tb >= ntbs)
                ntbs = t->slices[i].tb + 1;
        v.ranks[c - v.p.c0] = (rowmap){call->rank, ntbs, y};
        y += HEAD + (double)ntbs * ROWH + GAP;
        if (call->t0 < v.origin) v.origin = call->t0;
        if (call->t1 > end) end = call->t1;
    }
    v.span = end > v.origin ? end - v.origin : 1;
    v.height = y + 44;
    const weft_trace_call *c0 = &t->calls[v.p.c0];
    char title[512];
    snprintf(title, sizeof title,
             "call %" PRId64 ": %s, %s of %" PRId64 " %s on %d ranks (%zu in the trace): %.3f us; "
             "critical path %zu steps",
             v.p.seq, c0->algo ? c0->algo : "?", weft_coll_name((weft_coll)c0->coll), c0->count,
             weft_dtype_name((weft_dtype)c0->dtype), c0->nranks, v.nranks, (double)v.span / 1e3,
             v.p.n);
    s = svg_open_stream(out, LEFT + PLOTW + 30, v.height, title);
    if (s == NULL) WEFT_FAIL(WEFT_ERR_NOMEM);
    static const char *const markers[] = {MSG, CRIT};
    svg_arrow_markers(s, markers, 2);
    svg_class(s, "title");
    svg_text(s, 10, 22, 14, "start", 0, "black", "%s", title);
    draw_axis(s, &v);
    WEFT_CHECK(draw_path(s, &v));
    for (size_t c = v.p.c0; c < v.p.c1; c++)
        draw_slices(s, &v, c);
    WEFT_CHECK(draw_messages(s, &v));
    svg_class(s, "legend");
    svg_group_begin(s, NULL);
    double ly = v.height - 16;
    svg_rect(s, 10, ly - 9, 16, BARH, WAIT, 1, "#999");
    svg_text(s, 30, ly, 10, "start", 0, "#333", "waiting (dependency, data, credit)");
    svg_line(s, 230, ly - 4, 254, ly - 4, CRIT, 2.5, NULL);
    svg_text(s, 258, ly, 10, "start", 0, "#333",
             "critical path (as weft trace summarize); arrows: messages; hover a bar for its "
             "waits and bytes");
    svg_group_end(s);
fail:
    if (s && svg_close(s) != 0 && res == WEFT_OK) res = WEFT_ERR_SYSTEM;
    free(v.p.slices);
    free(v.ranks);
    free(v.crit);
    return res;
}
