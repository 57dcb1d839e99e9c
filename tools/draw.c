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
#define NFILL ((int)(sizeof step_fill / sizeof *step_fill))
#define CRIT  "#d62728"
#define MSG   "#7f7f7f"

static const char *fill_of(int type) {
    return type >= 0 && type < NFILL ? step_fill[type] : "#ffffff";
}

/* Geometry: a label column, then one column per depth; per rank a header line and a row per
 * tb. */
enum { LEFT = 170, COLW = 30, BOXW = 24, ROWH = 18, BOXH = 14, HEAD = 18, GAP = 10, TOP = 46 };

typedef struct layout {
    double *rank_y; /* nranks: the top of each rank's block */
    double width, height, legend_y;
} layout;

static double row_y(const layout *l, int32_t rank, int32_t tb) {
    return l->rank_y[rank] + HEAD + (double)tb * ROWH;
}

static double col_x(int32_t depth) {
    return LEFT + (double)(depth - 1) * COLW;
}

static int make_layout(const weft_algo *a, const weft_timeline *t, layout *l) {
    l->rank_y = malloc(((size_t)a->ngpus + 1) * sizeof *l->rank_y);
    if (l->rank_y == NULL) return -1;
    double y = TOP;
    for (int32_t r = 0; r < a->ngpus; r++) {
        l->rank_y[r] = y;
        y += HEAD + (double)a->gpus[r].ntbs * ROWH + GAP;
    }
    l->legend_y = y + 8;
    l->height = y + 40;
    l->width = col_x((int32_t)t->critical_path + 1) + 20;
    if (l->width < 640) l->width = 640;
    return 0;
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

/* The tooltip of a step: where it is, what it moves, its depth. */
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

static void draw_rank(svg *s, const weft_algo *a, const weft_timeline *t, const layout *l,
                      int32_t r, int32_t *next) {
    char title[256];
    snprintf(title, sizeof title, "rank %d", r);
    svg_class(s, "rank");
    svg_group_begin(s, title);
    svg_text(s, 10, l->rank_y[r] + 12, 12, "start", 0, "black", "rank %d", r);
    const weft_gpu *g = &a->gpus[r];
    for (int32_t tb = 0; tb < g->ntbs; tb++) {
        double y = row_y(l, r, tb);
        const weft_tb *b = &g->tbs[tb];
        char peers[64] = "";
        int n = 0;
        if (b->recv >= 0) n += snprintf(peers + n, sizeof peers - (size_t)n, " <%d", b->recv);
        if (b->send >= 0) n += snprintf(peers + n, sizeof peers - (size_t)n, " >%d", b->send);
        svg_text(s, 18, y + 12.5, 10, "start", 0, "#333", "tb %d%s ch %d", tb, peers, b->chan);
    }
    /* the rank's steps are t->steps[*next ..] up to the next rank's */
    for (; *next < t->nsteps && t->steps[*next].rank == r; (*next)++) {
        const weft_placed_step *p = &t->steps[*next];
        const weft_step *st = ir_step(a, p);
        double x = col_x(p->depth), y = row_y(l, r, p->tb) + (ROWH - BOXH) / 2.0;
        step_title(a, p, title, sizeof title);
        svg_class(s, p->critical ? "step crit" : "step");
        svg_group_begin(s, title);
        svg_rect(s, x, y, BOXW, BOXH, fill_of(st->type), 1, p->critical ? CRIT : "#555");
        if (p->critical) svg_rect(s, x - 1, y - 1, BOXW + 2, BOXH + 2, "none", 1, CRIT);
        svg_text(s, x + BOXW / 2.0, y + 10, 8, "middle", 0, "black", "%s",
                 weft_step_name(st->type));
        svg_group_end(s);
    }
    svg_group_end(s);
}

/* Alternate rows shaded, under everything else. */
static void draw_bands(svg *s, const weft_algo *a, const layout *l) {
    svg_class(s, "rows");
    svg_group_begin(s, NULL);
    for (int32_t r = 0; r < a->ngpus; r++)
        for (int32_t tb = 0; tb < a->gpus[r].ntbs; tb += 2)
            svg_rect(s, 4, row_y(l, r, tb), l->width - 8, ROWH, "#f2f2f2", 1, NULL);
    svg_group_end(s);
}

static void draw_edges(svg *s, const weft_timeline *t, const layout *l) {
    svg_class(s, "messages");
    svg_group_begin(s, NULL);
    for (int32_t v = 0; v < t->nsteps; v++) {
        const weft_placed_step *q = &t->steps[v];
        for (int k = 0; k < 2; k++) {
            int32_t u = k == 0 ? q->from : q->dep;
            if (u < 0) continue;
            const weft_placed_step *p = &t->steps[u];
            /* a dependency inside the tb is program order: nothing to draw */
            if (k == 1 && p->rank == q->rank && p->tb == q->tb) continue;
            int crit = crit_edge(t, u, v);
            double x1 = col_x(p->depth) + BOXW, y1 = row_y(l, p->rank, p->tb) + ROWH / 2.0;
            double x2 = col_x(q->depth), y2 = row_y(l, q->rank, q->tb) + ROWH / 2.0;
            svg_class(s, k == 0 ? (crit ? "msg crit" : "msg") : (crit ? "dep crit" : "dep"));
            svg_arrow(s, x1, y1, x2, y2, crit ? CRIT : MSG, crit ? 1.8 : 0.8, k == 0 ? NULL : "3,2",
                      crit ? 1 : 0);
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
            x[p->depth - 1] = col_x(p->depth) + BOXW / 2.0;
            y[p->depth - 1] = row_y(l, p->rank, p->tb) + ROWH / 2.0;
            n++;
        }
    svg_class(s, "critical-path");
    svg_polyline(s, x, y, n, CRIT, 3, NULL);
    free(x);
    free(y);
    return 0;
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
        svg_rect(s, x, y, BOXW, BOXH, step_fill[ty], 1, "#555");
        svg_text(s, x + BOXW / 2.0, y + 10, 8, "middle", 0, "black", "%s",
                 weft_step_name((weft_step_type)ty));
        x += BOXW + 6;
    }
    svg_line(s, x + 4, y + BOXH / 2.0, x + 28, y + BOXH / 2.0, CRIT, 3, NULL);
    svg_text(s, x + 32, y + 11, 10, "start", 0, "#333",
             "critical path: the longest chain of waits (as weft verify counts it)");
    svg_text(s, 10, y + 30, 10, "start", 0, "#333",
             "columns: happens-before depth; arrows: messages (solid), dependencies across tbs "
             "(dashed); hover a step for its chunks");
    svg_group_end(s);
}

int draw_schedule_svg(const weft_algo *a, const weft_timeline *t, FILE *out) {
    layout l;
    if (make_layout(a, t, &l) != 0) return -1;
    int64_t ntbs = 0;
    for (int32_t r = 0; r < a->ngpus; r++)
        ntbs += a->gpus[r].ntbs;
    char title[512];
    snprintf(title, sizeof title,
             "%s: %s on %d ranks, %lld tbs, %d steps, %lld messages; critical path %lld steps",
             a->name ? a->name : "", weft_coll_name(a->coll), a->ngpus, (long long)ntbs, t->nsteps,
             (long long)t->nmessages, (long long)t->critical_path);
    svg *s = svg_open_stream(out, l.width, l.height, title);
    if (s == NULL) {
        free(l.rank_y);
        return -1;
    }
    static const char *const markers[] = {MSG, CRIT};
    svg_arrow_markers(s, markers, 2);
    svg_class(s, "title");
    svg_text(s, 10, 24, 14, "start", 0, "black", "%s", title);
    /* the file's name without its folder: the same picture wherever the file is */
    const char *file = a->file ? strrchr(a->file, '/') : NULL;
    file = file ? file + 1 : a->file;
    const char *modes = a->inplace && a->outofplace ? "in place and out of place"
                        : a->inplace                ? "in place"
                                                    : "out of place";
    svg_text(s, 10, 40, 10, "start", 0, "#555", "%s, %s, %d channel%s%s%s",
             weft_proto_name(a->proto), modes, a->nchannels, a->nchannels == 1 ? "" : "s",
             file ? "; " : "", file ? file : "");
    draw_bands(s, a, &l);
    int bad = draw_path(s, t, &l);
    int32_t next = 0;
    for (int32_t r = 0; r < a->ngpus; r++)
        draw_rank(s, a, t, &l, r, &next);
    draw_edges(s, t, &l);
    draw_legend(s, a, &l);
    free(l.rank_y);
    return svg_close(s) != 0 || bad ? -1 : 0;
}

/* ---- DOT ------------------------------------------------------------------------------------ */
static void dot_string(FILE *f, const char *s) {
    weft_fput_quoted(f, s, '?', 0);
}

int draw_schedule_dot(const weft_algo *a, const weft_timeline *t, FILE *out) {
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
