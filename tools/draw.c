/* draw.c — a schedule as a picture: rows are thread blocks grouped by rank, columns the steps'
 * happens-before depths (weft_ir_timeline, the verifier's critical path computation), so every
 * message arrow points right and the critical path reads left to right. */
#include "draw.h"
#include "svg.h"

#include <stdlib.h>
#include <string.h>

/* Colours per step type (weft_step_type order: s r rcs rrs rrc rrcs cpy re nop). */
static const char *const step_fill[] = {"#9ecae9", "#a1d99b", "#c7e9c0", "#fdae6b", "#fdd0a2",
                                        "#fd8d3c", "#d9d9d9", "#dadaeb", "#f7f7f7"};
#define NFILL  ((int)(sizeof step_fill / sizeof *step_fill))
#define CRIT   "#d62728"
#define MSG    "#7f7f7f"
#define FAR    "#c6c6c6" /* a message between ranks not drawn side by side: behind the rest */
#define NET    "#7b3294" /* a message between nodes */
#define FARNET "#c9b3d6" /* ... drawn faint */

static const char *fill_of(int type) {
    return type >= 0 && type < NFILL ? step_fill[type] : "#ffffff";
}

/* Geometry: a label column (as wide as its labels), then one column per depth; per node a
 * header, per rank a header and its rows. A box holds two lines: its type (and the peers of its
 * faint messages), its chunk. */
enum {
    COLW = 64,
    BOXW = 44,
    ROWH = 30,
    BOXH = 24,
    HEAD = 18,
    GAP = 8,
    NODEHEAD = 20,
    NODEPAD = 6,
    TOP = 50,
    LEGEND_LINE = 15
};

typedef struct layout {
    double left;      /* the label column's width */
    double *rank_y;   /* nranks: the top of each rank's block */
    int32_t *tb_base; /* nranks + 1: rank r's tbs are rows tb_row[tb_base[r] ..] */
    int32_t *tb_row;  /* per tb of every rank: its row in the rank's block */
    int32_t *nrows;   /* per rank: rows it takes */
    int32_t *to;      /* per step: the step that takes its message, -1 none */
    int32_t gpn;      /* ranks per node; 0: one node, not drawn */
    double width, height, legend_y;
} layout;

static double row_y(const layout *l, int32_t rank, int32_t tb) {
    return l->rank_y[rank] + HEAD + (double)l->tb_row[l->tb_base[rank] + tb] * ROWH;
}

static double col_x(const layout *l, int32_t depth) {
    return l->left + (double)(depth - 1) * COLW;
}

static int32_t node_of(const layout *l, int32_t rank) {
    return l->gpn > 0 ? rank / l->gpn : 0;
}

static void layout_free(layout *l) {
    free(l->rank_y);
    free(l->tb_base);
    free(l->tb_row);
    free(l->nrows);
    free(l->to);
}

/* "i[3]" or "i[3..5]". */
static void chunks(char *out, size_t len, weft_buf b, int32_t off, int32_t cnt) {
    if (cnt <= 1)
        snprintf(out, len, "%c[%d]", weft_buf_code(b), off);
    else
        snprintf(out, len, "%c[%d..%lld]", weft_buf_code(b), off, (long long)off + cnt - 1);
}

static const weft_step *ir_step(const weft_algo *a, const weft_placed_step *p) {
    return &a->gpus[p->rank].tbs[p->tb].steps[p->step];
}

/* The chunks a step's box names: those it writes, else those it reads (a send's, the local
 * operand of rrs), else none. */
static void box_chunks(const weft_step *st, char *out, size_t len) {
    unsigned f = weft_step_flags(st->type);
    if (f & WEFT_STEP_F_WRITE)
        chunks(out, len, st->dstbuf, st->dstoff, st->cnt);
    else if (f & WEFT_STEP_F_READS_SRC)
        chunks(out, len, st->srcbuf, st->srcoff, st->cnt);
    else
        out[0] = '\0';
}

/* The label of a row: its tb with peers and channel ("tb 3 <2 >4 ch 1") when it holds one, else
 * its tbs: a range ("tb 0..7") or in order ("tb 0, 4, 8"), cut to fit max characters ("tb 0, 4,
 * 8 +5"). */
static void row_label(const weft_algo *a, const layout *l, int32_t r, int32_t row, char *out,
                      size_t len, size_t max) {
    const weft_gpu *g = &a->gpus[r];
    int32_t n = 0, only = -1;
    for (int32_t tb = 0; tb < g->ntbs; tb++)
        if (l->tb_row[l->tb_base[r] + tb] == row) n++, only = tb;
    if (n == 1) {
        const weft_tb *b = &g->tbs[only];
        size_t k = (size_t)snprintf(out, len, "tb %d", only);
        if (b->recv >= 0 && k < len) k += (size_t)snprintf(out + k, len - k, " <%d", b->recv);
        if (b->send >= 0 && k < len) k += (size_t)snprintf(out + k, len - k, " >%d", b->send);
        if (k < len) snprintf(out + k, len - k, " ch %d", b->chan);
        return;
    }
    int32_t lo = -1, hi = -1, runs = 0;
    for (int32_t tb = 0; tb < g->ntbs; tb++)
        if (l->tb_row[l->tb_base[r] + tb] == row) {
            if (hi != tb - 1 || lo < 0) runs++, lo = lo < 0 ? tb : lo;
            hi = tb;
        }
    if (runs == 1) { /* consecutive tbs: a range */
        snprintf(out, len, "tb %d..%d", lo, hi);
        return;
    }
    size_t k = (size_t)snprintf(out, len, "tb");
    int32_t shown = 0;
    for (int32_t tb = 0; tb < g->ntbs && k < len; tb++) {
        if (l->tb_row[l->tb_base[r] + tb] != row) continue;
        char item[24];
        int w = snprintf(item, sizeof item, "%s %d", shown ? "," : "", tb);
        /* room for " +NN" after it */
        if (k + (size_t)w + 4 > max && shown < n) {
            snprintf(out + k, len - k, " +%d", n - shown);
            return;
        }
        k += (size_t)snprintf(out + k, len - k, "%s", item);
        shown++;
    }
}

enum { LABEL_CHARS = 24 };

/* Rows: a rank's tbs packed into as few rows as their spans of depth allow (a tb's steps from
 * its first to its last depth; two tbs share a row when their spans do not meet), so that a
 * schedule with a tb per chunk, one or two steps each, does not take a row per tb. Greedy in
 * order of first depth, which needs no more rows than the most tbs alive at one depth. */
static int pack_rows(const weft_algo *a, const weft_timeline *t, layout *l) {
    int32_t total = l->tb_base[a->ngpus];
    int32_t *first = malloc(((size_t)total + 1) * sizeof *first);
    int32_t *last = malloc(((size_t)total + 1) * sizeof *last);
    int32_t *order = malloc(((size_t)total + 1) * sizeof *order);
    int32_t *row_end = malloc(((size_t)total + 1) * sizeof *row_end);
    int rc = -1;
    if (first == NULL || last == NULL || order == NULL || row_end == NULL) goto done;
    for (int32_t i = 0; i < total; i++)
        first[i] = INT32_MAX, last[i] = 0;
    for (int32_t i = 0; i < t->nsteps; i++) {
        const weft_placed_step *p = &t->steps[i];
        int32_t k = l->tb_base[p->rank] + p->tb;
        if (p->depth < first[k]) first[k] = p->depth;
        if (p->depth > last[k]) last[k] = p->depth;
    }
    for (int32_t r = 0; r < a->ngpus; r++) {
        int32_t b = l->tb_base[r], n = l->tb_base[r + 1] - b, rows = 0;
        /* insertion sort by first depth, then id: ranks hold tens of tbs */
        for (int32_t i = 0; i < n; i++) {
            int32_t j = i;
            for (; j > 0 && first[b + order[b + j - 1]] > first[b + i]; j--)
                order[b + j] = order[b + j - 1];
            order[b + j] = i;
        }
        for (int32_t i = 0; i < n; i++) {
            int32_t tb = order[b + i], row = 0;
            if (first[b + tb] == INT32_MAX) { /* no steps: a row of its own, labelled */
                l->tb_row[b + tb] = rows++;
                row_end[b + rows - 1] = INT32_MAX;
                continue;
            }
            while (row < rows && row_end[b + row] >= first[b + tb])
                row++;
            if (row == rows) rows++;
            row_end[b + row] = last[b + tb];
            l->tb_row[b + tb] = row;
        }
        l->nrows[r] = rows > 0 ? rows : 1;
    }
    rc = 0;
done:
    free(first);
    free(last);
    free(order);
    free(row_end);
    return rc;
}

static int make_layout(const weft_algo *a, const weft_timeline *t, int32_t gpn, layout *l) {
    memset(l, 0, sizeof *l);
    l->gpn = gpn > 0 && gpn < a->ngpus ? gpn : 0;
    size_t nr = (size_t)a->ngpus + 1;
    l->rank_y = malloc(nr * sizeof *l->rank_y);
    l->tb_base = malloc(nr * sizeof *l->tb_base);
    l->nrows = malloc(nr * sizeof *l->nrows);
    if (l->rank_y == NULL || l->tb_base == NULL || l->nrows == NULL) return -1;
    l->tb_base[0] = 0;
    for (int32_t r = 0; r < a->ngpus; r++)
        l->tb_base[r + 1] = l->tb_base[r] + a->gpus[r].ntbs;
    l->tb_row = malloc(((size_t)l->tb_base[a->ngpus] + 1) * sizeof *l->tb_row);
    l->to = malloc(((size_t)t->nsteps + 1) * sizeof *l->to);
    if (l->tb_row == NULL || l->to == NULL || pack_rows(a, t, l) != 0) return -1;
    for (int32_t i = 0; i < t->nsteps; i++)
        l->to[i] = -1;
    for (int32_t i = 0; i < t->nsteps; i++)
        if (t->steps[i].from >= 0) l->to[t->steps[i].from] = i;
    /* the label column: as wide as the widest row label */
    l->left = 120;
    char lab[96];
    for (int32_t r = 0; r < a->ngpus; r++)
        for (int32_t row = 0; row < l->nrows[r]; row++) {
            row_label(a, l, r, row, lab, sizeof lab, LABEL_CHARS);
            double w = 18 + svg_text_width(10, lab) + 12;
            if (w > l->left) l->left = w;
        }
    double y = TOP;
    for (int32_t r = 0; r < a->ngpus; r++) {
        if (l->gpn && r % l->gpn == 0) y += NODEHEAD;
        l->rank_y[r] = y;
        y += HEAD + (double)l->nrows[r] * ROWH + GAP;
        if (l->gpn && (r + 1) % l->gpn == 0) y += NODEPAD;
    }
    l->legend_y = y + 8;
    l->width = col_x(l, (int32_t)t->critical_path + 1) + 24;
    return 0;
}

static void step_title(const weft_algo *a, const weft_placed_step *p, char *buf, size_t len) {
    const weft_step *st = ir_step(a, p);
    const weft_tb *tb = &a->gpus[p->rank].tbs[p->tb];
    char src[48], dst[48];
    chunks(src, sizeof src, st->srcbuf, st->srcoff, st->cnt);
    chunks(dst, sizeof dst, st->dstbuf, st->dstoff, st->cnt);
    snprintf(buf, len, "rank %d tb %d step %d: %s %s -> %s (recv %d, send %d), depth %d%s", p->rank,
             p->tb, p->step, weft_step_name(st->type), src, dst, tb->recv, tb->send, p->depth,
             p->critical ? ", on the critical path" : "");
}

/* An edge from step u to step v is on the path when v is and u set v's depth. */
static int crit_edge(const weft_timeline *t, int32_t u, int32_t v) {
    return t->steps[v].critical && t->steps[u].critical && t->steps[v].pred == u;
}

/* A message between ranks drawn side by side is a short line; between ranks farther apart a
 * line would cross every rank between (at 8 ranks all-pairs, 56 lines through one gap), so it
 * is drawn faint, and the boxes at both ends name the peer. */
static int far_apart(int32_t r1, int32_t r2) {
    return r1 - r2 > 1 || r2 - r1 > 1;
}

/* A font size up to size at which text fits a box. */
static double fit(double size, const char *text) {
    double w = svg_text_width(size, text);
    return w > BOXW - 3 ? size * (BOXW - 3) / w : size;
}

/* A box's first line: the step's type, and the peer of each message it takes or sends that is
 * drawn faint (between ranks not side by side): "rrs \u21903 \u21925" (from 3, to 5). */
static void box_head(const weft_algo *a, const weft_timeline *t, const layout *l, int32_t i,
                     char *out, size_t len) {
    const weft_placed_step *p = &t->steps[i];
    size_t k = (size_t)snprintf(out, len, "%s", weft_step_name(ir_step(a, p)->type));
    if (p->from >= 0 && far_apart(t->steps[p->from].rank, p->rank) && k < len)
        k += (size_t)snprintf(out + k, len - k, " \u2190%d", t->steps[p->from].rank);
    int32_t to = l->to[i];
    if (to >= 0 && far_apart(t->steps[to].rank, p->rank) && k < len)
        snprintf(out + k, len - k, " \u2192%d", t->steps[to].rank);
}

static void draw_rank(svg *s, const weft_algo *a, const weft_timeline *t, const layout *l,
                      int32_t r, int32_t *next) {
    char title[256], lab[96];
    snprintf(title, sizeof title, "rank %d", r);
    svg_class(s, "rank");
    svg_group_begin(s, title);
    const weft_gpu *g = &a->gpus[r];
    svg_text(s, 10, l->rank_y[r] + 13, 12, "start", 0, "black", "rank %d", r);
    svg_text(s, 66, l->rank_y[r] + 13, 9, "start", 0, "#777", "%d tb%s", g->ntbs,
             g->ntbs == 1 ? "" : "s");
    for (int32_t row = 0; row < l->nrows[r]; row++) {
        row_label(a, l, r, row, lab, sizeof lab, LABEL_CHARS);
        svg_class(s, "row-label");
        svg_text(s, 18, l->rank_y[r] + HEAD + (double)row * ROWH + ROWH / 2.0 + 3.5, 10, "start", 0,
                 "#333", "%s", lab);
    }
    /* the rank's steps are t->steps[*next ..] up to the next rank's */
    for (; *next < t->nsteps && t->steps[*next].rank == r; (*next)++) {
        const weft_placed_step *p = &t->steps[*next];
        const weft_step *st = ir_step(a, p);
        double x = col_x(l, p->depth), y = row_y(l, r, p->tb) + (ROWH - BOXH) / 2.0;
        step_title(a, p, title, sizeof title);
        svg_class(s, p->critical ? "step crit" : "step");
        svg_group_begin(s, title);
        svg_rect(s, x, y, BOXW, BOXH, fill_of(st->type), 1, p->critical ? CRIT : "#555");
        if (p->critical) svg_rect(s, x - 1, y - 1, BOXW + 2, BOXH + 2, "none", 1, CRIT);
        box_head(a, t, l, *next, lab, sizeof lab);
        svg_text(s, x + BOXW / 2.0, y + 10, fit(9, lab), "middle", 0, "black", "%s", lab);
        box_chunks(st, lab, sizeof lab);
        if (lab[0]) {
            svg_class(s, "chunk");
            svg_text(s, x + BOXW / 2.0, y + 20, fit(8, lab), "middle", 0, "#222", "%s", lab);
        }
        svg_group_end(s);
    }
    svg_group_end(s);
}

/* Alternate rows shaded, under everything else; nodes framed. */
static void draw_bands(svg *s, const weft_algo *a, const layout *l) {
    if (l->gpn) {
        svg_class(s, "nodes");
        svg_group_begin(s, NULL);
        for (int32_t r = 0; r < a->ngpus; r += l->gpn) {
            int32_t e = r + l->gpn < a->ngpus ? r + l->gpn : a->ngpus;
            double y0 = l->rank_y[r] - NODEHEAD + 2;
            double y1 = l->rank_y[e - 1] + HEAD + (double)l->nrows[e - 1] * ROWH + 2;
            char title[64];
            snprintf(title, sizeof title, "node %d", node_of(l, r));
            svg_class(s, "node");
            svg_group_begin(s, title);
            svg_rect(s, 2, y0, l->width - 4, y1 - y0, "#fbf8fd", 1, NET);
            svg_text(s, 8, y0 + 13, 11, "start", 0, NET, "node %d: ranks %d..%d", node_of(l, r), r,
                     e - 1);
            svg_group_end(s);
        }
        svg_group_end(s);
    }
    svg_class(s, "rows");
    svg_group_begin(s, NULL);
    for (int32_t r = 0; r < a->ngpus; r++)
        for (int32_t row = 0; row < l->nrows[r]; row += 2)
            svg_rect(s, 6, l->rank_y[r] + HEAD + (double)row * ROWH, l->width - 12, ROWH, "#f2f2f2",
                     1, NULL);
    svg_group_end(s);
}

static void draw_edges(svg *s, const weft_timeline *t, const layout *l) {
    svg_class(s, "messages");
    svg_group_begin(s, NULL);
    /* far messages first, so the near ones and the path are drawn over them */
    for (int pass = 0; pass < 2; pass++)
        for (int32_t v = 0; v < t->nsteps; v++) {
            const weft_placed_step *q = &t->steps[v];
            for (int k = 0; k < 2; k++) {
                int32_t u = k == 0 ? q->from : q->dep;
                if (u < 0) continue;
                const weft_placed_step *p = &t->steps[u];
                /* a dependency inside the tb is program order: nothing to draw */
                if (k == 1 && p->rank == q->rank && p->tb == q->tb) continue;
                int crit = crit_edge(t, u, v), far = k == 0 && far_apart(p->rank, q->rank);
                if ((pass == 0) != (far && !crit)) continue;
                int net = k == 0 && node_of(l, p->rank) != node_of(l, q->rank);
                double x1 = col_x(l, p->depth) + BOXW, y1 = row_y(l, p->rank, p->tb) + ROWH / 2.0;
                double x2 = col_x(l, q->depth), y2 = row_y(l, q->rank, q->tb) + ROWH / 2.0;
                const char *color = crit ? CRIT : far ? (net ? FARNET : FAR) : net ? NET : MSG;
                svg_class(s, k == 0 ? (crit ? "msg crit" : "msg") : (crit ? "dep crit" : "dep"));
                svg_arrow(s, x1, y1, x2, y2, color,
                          crit  ? 1.8
                          : far ? 0.7
                                : 0.9,
                          k == 0 ? NULL : "3,2",
                          crit          ? 1
                          : net && !far ? 2
                                        : 0);
            }
        }
    svg_group_end(s);
}

static int draw_path(svg *s, const weft_timeline *t, const layout *l) {
    double *x = malloc(((size_t)t->critical_path + 1) * sizeof *x);
    double *y = malloc(((size_t)t->critical_path + 1) * sizeof *y);
    if (x == NULL || y == NULL) {
        free(x);
        free(y);
        return -1;
    }
    int n = 0;
    for (int32_t i = 0; i < t->nsteps && n <= t->critical_path; i++)
        if (t->steps[i].critical) {
            /* the path's steps have distinct depths 1 .. critical_path */
            const weft_placed_step *p = &t->steps[i];
            x[p->depth - 1] = col_x(l, p->depth) + BOXW / 2.0;
            y[p->depth - 1] = row_y(l, p->rank, p->tb) + ROWH / 2.0;
            n++;
        }
    svg_class(s, "critical-path");
    svg_polyline(s, x, y, n, CRIT, 3, NULL);
    free(x);
    free(y);
    return 0;
}

/* The legend's lines after the colour swatches: what the rows, boxes, arrows and labels mean. */
static const char *const legend_lines[] = {
    "columns: happens-before depth (every message arrow points right); a box: step type, then "
    "the chunk it writes (or reads)",
    "rows: thread blocks, \"tb T <P >Q ch C\": receives from rank P, sends to rank Q, channel C; "
    "tbs whose steps never share a column share a row",
    "solid arrows: messages; dashed: dependencies across tbs; faint arrows: messages between "
    "ranks not side by side, whose boxes say \u2190P (from rank P) and \u2192Q (to rank Q)",
};
#define NLEGEND ((int)(sizeof legend_lines / sizeof *legend_lines))

static double legend_width(void) {
    double w = 0;
    for (int i = 0; i < NLEGEND; i++) {
        double x = 20 + svg_text_width(10, legend_lines[i]);
        if (x > w) w = x;
    }
    return w;
}

static void draw_legend(svg *s, const weft_algo *a, const layout *l) {
    int used[NFILL] = {0};
    for (int32_t r = 0; r < a->ngpus; r++)
        for (int32_t tb = 0; tb < a->gpus[r].ntbs; tb++)
            for (int32_t i = 0; i < a->gpus[r].tbs[tb].nsteps; i++) {
                int ty = (int)a->gpus[r].tbs[tb].steps[i].type;
                if (ty >= 0 && ty < NFILL) used[ty] = 1;
            }
    double x = 10, y = l->legend_y;
    svg_class(s, "legend");
    svg_group_begin(s, NULL);
    for (int ty = 0; ty < NFILL; ty++) {
        if (!used[ty]) continue;
        svg_rect(s, x, y, 30, 14, step_fill[ty], 1, "#555");
        svg_text(s, x + 15, y + 10, 9, "middle", 0, "black", "%s",
                 weft_step_name((weft_step_type)ty));
        x += 36;
    }
    svg_line(s, x + 4, y + 7, x + 28, y + 7, CRIT, 3, NULL);
    svg_text(s, x + 32, y + 11, 10, "start", 0, "#333",
             "critical path: the longest chain of waits (as weft verify counts it)");
    y += 14;
    for (int i = 0; i < NLEGEND; i++)
        svg_text(s, 10, y + LEGEND_LINE * (i + 1), 10, "start", 0, "#333", "%s", legend_lines[i]);
    if (l->gpn) {
        y += LEGEND_LINE * (NLEGEND + 1);
        svg_line(s, 10, y - 4, 34, y - 4, NET, 1.2, NULL);
        svg_text(s, 40, y, 10, "start", 0, NET,
                 "purple: messages between nodes (%d ranks per node)", l->gpn);
    }
    svg_group_end(s);
}

int draw_schedule_svg(const weft_algo *a, const weft_timeline *t, int32_t gpus_per_node,
                      FILE *out) {
    layout l;
    if (make_layout(a, t, gpus_per_node, &l) != 0) {
        layout_free(&l);
        return -1;
    }
    int64_t ntbs = 0;
    for (int32_t r = 0; r < a->ngpus; r++)
        ntbs += a->gpus[r].ntbs;
    char title[512], sub[512];
    snprintf(title, sizeof title,
             "%s: %s on %d ranks, %lld tbs, %d steps, %lld messages; critical path %lld steps",
             a->name ? a->name : "", weft_coll_name(a->coll), a->ngpus, (long long)ntbs, t->nsteps,
             (long long)t->nmessages, (long long)t->critical_path);
    /* the file's name without its folder: the same picture wherever the file is */
    const char *file = a->file ? strrchr(a->file, '/') : NULL;
    file = file ? file + 1 : a->file;
    const char *modes = a->inplace && a->outofplace ? "in place and out of place"
                        : a->inplace                ? "in place"
                                                    : "out of place";
    snprintf(sub, sizeof sub, "%s, %s, %d channel%s%s%s", weft_proto_name(a->proto), modes,
             a->nchannels, a->nchannels == 1 ? "" : "s", file ? "; " : "", file ? file : "");
    /* as wide as the widest of the columns, the title, its second line and the legend */
    double w = 20 + svg_text_width(14, title);
    if (w > l.width) l.width = w;
    if (20 + svg_text_width(10, sub) > l.width) l.width = 20 + svg_text_width(10, sub);
    if (legend_width() > l.width) l.width = legend_width();
    l.height = l.legend_y + 14 + LEGEND_LINE * (NLEGEND + (l.gpn ? 2 : 1)) + 8;
    svg *s = svg_open_stream(out, l.width, l.height, title);
    if (s == NULL) {
        layout_free(&l);
        return -1;
    }
    static const char *const markers[] = {MSG, CRIT, NET};
    svg_arrow_markers(s, markers, 3);
    svg_class(s, "title");
    svg_text(s, 10, 24, 14, "start", 0, "black", "%s", title);
    svg_text(s, 10, 40, 10, "start", 0, "#555", "%s", sub);
    draw_bands(s, a, &l);
    int bad = draw_path(s, t, &l);
    int32_t next = 0;
    for (int32_t r = 0; r < a->ngpus; r++)
        draw_rank(s, a, t, &l, r, &next);
    draw_edges(s, t, &l);
    draw_legend(s, a, &l);
    layout_free(&l);
    return svg_close(s) != 0 || bad ? -1 : 0;
}

/* ---- DOT ------------------------------------------------------------------------------------ */
static void dot_string(FILE *f, const char *s) {
    weft_fput_quoted(f, s, '?', 0);
}

int draw_schedule_dot(const weft_algo *a, const weft_timeline *t, int32_t gpus_per_node,
                      FILE *out) {
    int32_t gpn = gpus_per_node > 0 && gpus_per_node < a->ngpus ? gpus_per_node : 0;
    fputs("digraph ", out);
    dot_string(out, a->name ? a->name : "schedule");
    fprintf(out,
            " {\n  graph [rankdir=LR, fontname=\"Helvetica\", label=\"%s on %d ranks: %d steps, "
            "%lld messages, critical path %lld steps (red)\"];\n"
            "  node [shape=box, style=filled, fontname=\"Helvetica\", fontsize=9, height=0.25, "
            "width=0.4];\n  edge [arrowsize=0.5];\n",
            weft_coll_name(a->coll), a->ngpus, t->nsteps, (long long)t->nmessages,
            (long long)t->critical_path);
    int32_t i = 0;
    char title[256];
    for (int32_t r = 0; r < a->ngpus; r++) {
        if (gpn && r % gpn == 0)
            fprintf(out, "  subgraph cluster_n%d {\n    label=\"node %d\"; class=\"node\";\n",
                    r / gpn, r / gpn);
        fprintf(out, "  subgraph cluster_r%d {\n    label=\"rank %d\"; class=\"rank\";\n", r, r);
        for (int32_t tb = 0; tb < a->gpus[r].ntbs; tb++) {
            const weft_tb *b = &a->gpus[r].tbs[tb];
            fprintf(out,
                    "    subgraph cluster_r%d_t%d {\n      label=\"tb %d (recv %d, send %d, ch "
                    "%d)\"; style=dashed;\n",
                    r, tb, tb, b->recv, b->send, b->chan);
            int32_t first = i;
            for (; i < t->nsteps && t->steps[i].rank == r && t->steps[i].tb == tb; i++) {
                const weft_placed_step *p = &t->steps[i];
                step_title(a, p, title, sizeof title);
                fprintf(out, "      s%d [label=\"%s\", fillcolor=\"%s\", class=\"%s\", tooltip=", i,
                        weft_step_name(ir_step(a, p)->type), fill_of(ir_step(a, p)->type),
                        p->critical ? "step crit" : "step");
                dot_string(out, title);
                fprintf(out, "%s];\n", p->critical ? ", color=\"" CRIT "\", penwidth=2" : "");
            }
            for (int32_t j = first + 1; j < i; j++)
                fprintf(out, "      s%d -> s%d [class=\"order\"%s];\n", j - 1, j,
                        crit_edge(t, j - 1, j) ? ", color=\"" CRIT "\", penwidth=2" : "");
            fputs("    }\n", out);
        }
        fputs("  }\n", out);
        if (gpn && ((r + 1) % gpn == 0 || r + 1 == a->ngpus)) fputs("  }\n", out);
    }
    for (int32_t v = 0; v < t->nsteps; v++) {
        const weft_placed_step *q = &t->steps[v];
        if (q->from >= 0)
            fprintf(out, "  s%d -> s%d [class=\"msg%s\"%s];\n", q->from, v,
                    crit_edge(t, q->from, v) ? " crit" : "",
                    crit_edge(t, q->from, v) ? ", color=\"" CRIT "\", penwidth=2" : "");
        if (q->dep >= 0 && !(t->steps[q->dep].rank == q->rank && t->steps[q->dep].tb == q->tb))
            fprintf(out, "  s%d -> s%d [class=\"dep%s\", style=dashed%s];\n", q->dep, v,
                    crit_edge(t, q->dep, v) ? " crit" : "",
                    crit_edge(t, q->dep, v) ? ", color=\"" CRIT "\", penwidth=2" : "");
    }
    fputs("}\n", out);
    return ferror(out) || fflush(out) != 0 ? -1 : 0;
}
