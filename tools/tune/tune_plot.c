/* tune_plot.c — the picture of a tuning table: per section, time and bus bandwidth against size
 * for NCCL and every candidate, and the range each one was given, as one SVG file. */
#include "svg.h"
#include "tune.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define PAGE_W  1200.0
#define ROW_H   360.0
#define TOP_H   60.0
#define PANEL_W 470.0
#define PANEL_H 230.0

static const char *const palette[] = {"#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd",
                                      "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf"};
#define NPAL ((int)(sizeof palette / sizeof *palette))

typedef struct axis {
    double lo, hi; /* data range (log10 of it when log) */
    double p0, p1; /* pixel range */
    int log;
} axis;

static double ax_map(const axis *a, double v) {
    double x = a->log ? log10(v > 0 ? v : 1e-9) : v;
    if (a->hi <= a->lo) return (a->p0 + a->p1) / 2;
    return a->p0 + (x - a->lo) / (a->hi - a->lo) * (a->p1 - a->p0);
}

static void bytes_label(double b, char *buf, size_t len) {
    weft_tune_bytes_str((uint64_t)(b + 0.5), buf, len);
    char *sp = strchr(buf, ' ');
    if (sp) memmove(sp, sp + 1, strlen(sp)); /* "1MB": tick labels are narrow */
}

/* The x axis (bytes, log scale): a tick at every power of 4 (of 2 when the span is short). */
static void draw_x(svg *s, const axis *x, double y0, double y1) {
    double lo = pow(10, x->lo), hi = pow(10, x->hi);
    int step = log2(hi / lo) > 12 ? 2 : 1;
    for (int e = (int)floor(log2(lo)); e <= (int)ceil(log2(hi)); e++) {
        if (e % step) continue;
        double v = ldexp(1, e);
        if (v < lo * 0.999 || v > hi * 1.001) continue;
        double px = ax_map(x, v);
        char lab[32];
        bytes_label(v, lab, sizeof lab);
        svg_line(s, px, y0, px, y1, "#e0e0e0", 1, NULL);
        svg_text(s, px, y1 + 14, 10, "middle", 0, "#333", "%s", lab);
    }
}

/* A log y axis with ticks at 1, 2, 5 x powers of ten (decades only when the span is wide). */
static void draw_ylog(svg *s, const axis *y, double x0, double x1, const char *unit) {
    double lo = pow(10, y->lo), hi = pow(10, y->hi);
    int wide = y->hi - y->lo > 2.5;
    static const double steps[] = {1, 2, 5};
    for (int e = (int)floor(y->lo); e <= (int)ceil(y->hi); e++)
        for (int k = 0; k < (wide ? 1 : 3); k++) {
            double v = steps[k] * pow(10, e);
            if (v < lo || v > hi) continue;
            double py = ax_map(y, v);
            svg_line(s, x0, py, x1, py, "#e0e0e0", 1, NULL);
            svg_text(s, x0 - 4, py + 3, 10, "end", 0, "#333", "%g%s", v, unit);
        }
}

static void draw_ylin(svg *s, const axis *y, double x0, double x1) {
    double span = y->hi - y->lo, raw = span / 5, mag = pow(10, floor(log10(raw > 0 ? raw : 1)));
    double step = raw / mag < 2 ? 2 * mag : raw / mag < 5 ? 5 * mag : 10 * mag;
    for (double v = 0; v <= y->hi + 1e-9; v += step) {
        double py = ax_map(y, v);
        svg_line(s, x0, py, x1, py, "#e0e0e0", 1, NULL);
        svg_text(s, x0 - 4, py + 3, 10, "end", 0, "#333", "%g", v);
    }
}

/* The algorithms measured in a section, in order of first appearance. */
static int section_algos(const weft_tune_section *sec, int *ids, int max) {
    int n = 0;
    for (size_t r = 0; r < sec->nrows; r++)
        for (size_t k = 0; k < sec->rows[r].nm; k++) {
            int a = sec->rows[r].m[k].algo, seen = 0;
            for (int i = 0; i < n; i++)
                seen |= ids[i] == a;
            if (!seen && n < max) ids[n++] = a;
        }
    return n;
}

static const char *color_of(const int *ids, int n, int algo) {
    if (algo < 0) return "black";
    for (int i = 0; i < n; i++)
        if (ids[i] == algo) return palette[i % NPAL];
    return "#999";
}

static const weft_tune_meas *meas_of(const weft_tune_row *r, int algo) {
    for (size_t k = 0; k < r->nm; k++)
        if (r->m[k].algo == algo) return &r->m[k];
    return NULL;
}

/* One series (algo -1: NCCL) on a panel; busbw 1 plots bandwidth. Gaps where it did not run. */
static void series(svg *s, const weft_tune_table *t, const weft_tune_section *sec, int algo,
                   const char *color, const axis *x, const axis *y, int busbw) {
    double *px = malloc(sec->nrows * sizeof *px), *py = malloc(sec->nrows * sizeof *py);
    int n = 0;
    double f = weft_coll_busbw_factor(sec->coll, sec->ranks);
    for (size_t r = 0; px && py && r <= sec->nrows; r++) {
        double us = -1;
        if (r < sec->nrows) {
            const weft_tune_row *row = &sec->rows[r];
            const weft_tune_meas *m = algo < 0 ? NULL : meas_of(row, algo);
            us = algo < 0 ? row->nccl_us : (m && m->status == WEFT_TUNE_OK ? m->us : -1);
        }
        if (us > 0) {
            const weft_tune_row *row = &sec->rows[r];
            double v = busbw ? (double)row->bytes / (us * 1e3) * f : us;
            px[n] = ax_map(x, (double)row->bytes);
            py[n] = ax_map(y, v);
            char tip[160];
            snprintf(tip, sizeof tip, "%s at %llu B: %.2f us, busbw %.2f GB/s",
                     algo < 0 ? "NCCL" : t->algos[algo].id, (unsigned long long)row->bytes, us,
                     (double)row->bytes / (us * 1e3) * f);
            svg_group_begin(s, tip);
            svg_circle(s, px[n], py[n], algo < 0 ? 2.2 : 2.6, color);
            svg_group_end(s);
            n++;
            continue;
        }
        if (n) svg_polyline(s, px, py, n, color, algo < 0 ? 2.2 : 1.6, NULL);
        n = 0;
    }
    free(px);
    free(py);
}

static void panel_frame(svg *s, double x0, double y0, const char *title) {
    svg_rect(s, x0, y0, PANEL_W, PANEL_H, "none", 1, "#888");
    svg_text(s, x0 + PANEL_W / 2, y0 - 6, 11, "middle", 0, "#333", "%s", title);
}

static void draw_section(svg *s, const weft_tune_table *t, const weft_tune_section *sec,
                         double top) {
    char what[128];
    weft_tune_section_str(sec, what, sizeof what);
    svg_text(s, 20, top + 18, 14, "start", 0, "black", "%s", what);
    if (sec->nrows == 0) {
        svg_text(s, 20, top + 40, 11, "start", 0, "#666", "no measurements (ranges only)");
        return;
    }
    int ids[64];
    int na = section_algos(sec, ids, 64);
    /* legend */
    double lx = 420;
    svg_line(s, lx, top + 14, lx + 18, top + 14, "black", 2.2, NULL);
    svg_text(s, lx + 22, top + 18, 11, "start", 0, "black", "NCCL");
    lx += 70;
    for (int i = 0; i < na && lx < PAGE_W - 60; i++) {
        const char *name = t->algos[ids[i]].id;
        svg_line(s, lx, top + 14, lx + 18, top + 14, palette[i % NPAL], 2, NULL);
        svg_text(s, lx + 22, top + 18, 11, "start", 0, "black", "%s", name);
        lx += 40 + 6.2 * (double)strlen(name);
    }
    /* axes */
    double bmin = (double)sec->rows[0].bytes, bmax = (double)sec->rows[sec->nrows - 1].bytes;
    if (bmax <= bmin) bmin /= 2, bmax *= 2;
    double tmin = INFINITY, tmax = 0, bwmax = 0, f = weft_coll_busbw_factor(sec->coll, sec->ranks);
    for (size_t r = 0; r < sec->nrows; r++) {
        const weft_tune_row *row = &sec->rows[r];
        for (size_t k = 0; k <= row->nm; k++) {
            double us = k == row->nm ? row->nccl_us
                                     : (row->m[k].status == WEFT_TUNE_OK ? row->m[k].us : -1);
            if (us <= 0) continue;
            if (us < tmin) tmin = us;
            if (us > tmax) tmax = us;
            double bw = (double)row->bytes / (us * 1e3) * f;
            if (bw > bwmax) bwmax = bw;
        }
    }
    if (!(tmax > 0)) tmin = 1, tmax = 10;
    double y0 = top + 48, x0a = 70, x0b = 70 + PANEL_W + 110;
    axis xa = {log10(bmin), log10(bmax), x0a, x0a + PANEL_W, 1};
    axis xb = {log10(bmin), log10(bmax), x0b, x0b + PANEL_W, 1};
    axis ya = {log10(tmin / 1.25), log10(tmax * 1.25), y0 + PANEL_H, y0 + 14, 1};
    axis yb = {0, bwmax > 0 ? bwmax * 1.1 : 1, y0 + PANEL_H, y0, 0};
    panel_frame(s, x0a, y0, "time per call (us, log)");
    panel_frame(s, x0b, y0, "bus bandwidth (GB/s, nccl-tests' factors)");
    draw_x(s, &xa, y0, y0 + PANEL_H);
    draw_x(s, &xb, y0, y0 + PANEL_H);
    draw_ylog(s, &ya, x0a, x0a + PANEL_W, "");
    draw_ylin(s, &yb, x0b, x0b + PANEL_W);
    svg_text(s, x0a + PANEL_W / 2, y0 + PANEL_H + 30, 11, "middle", 0, "#333", "size (bytes)");
    svg_text(s, x0b + PANEL_W / 2, y0 + PANEL_H + 30, 11, "middle", 0, "#333", "size (bytes)");
    /* who serves which sizes: a strip along the top of the time panel */
    for (size_t g = 0; g < sec->nranges; g++) {
        const weft_tune_range *rg = &sec->ranges[g];
        double lo = rg->lo > bmin ? (double)rg->lo : bmin;
        double hi = rg->hi == WEFT_TUNE_INF || (double)rg->hi > bmax ? bmax : (double)rg->hi;
        if (hi < lo) continue;
        double a = ax_map(&xa, lo), b = ax_map(&xa, hi);
        if (g + 1 < sec->nranges && (double)sec->ranges[g + 1].lo <= bmax)
            b = ax_map(&xa, (double)sec->ranges[g + 1].lo);
        const char *c = color_of(ids, na, rg->choice);
        char tip[160], his[32] = "and up";
        if (rg->hi != WEFT_TUNE_INF)
            snprintf(his, sizeof his, "to %llu B", (unsigned long long)rg->hi);
        snprintf(tip, sizeof tip, "%s serves %llu B %s",
                 rg->choice < 0 ? "NCCL" : t->algos[rg->choice].id, (unsigned long long)rg->lo,
                 his);
        svg_group_begin(s, tip);
        svg_rect(s, a, y0, b - a > 1 ? b - a : 1, 10, rg->choice < 0 ? "#bbbbbb" : c, 0.85, NULL);
        svg_group_end(s);
    }
    svg_text(s, x0a + 4, y0 + 24, 9, "start", 0, "#555",
             "strip: who serves each size (grey: NCCL)");
    for (int pass = 0; pass < 2; pass++) {
        const axis *x = pass ? &xb : &xa, *y = pass ? &yb : &ya;
        for (int i = 0; i < na; i++)
            series(s, t, sec, ids[i], palette[i % NPAL], x, y, pass);
        series(s, t, sec, -1, "black", x, y, pass);
    }
}

weft_result tune_plot(const weft_tune_table *t, const char *path, weft_diag *d) {
    double h = TOP_H + ROW_H * (double)(t->nsecs ? t->nsecs : 1);
    svg *s = svg_open(path, PAGE_W, h);
    if (s == NULL) {
        weft_diag_add(d, WEFT_SEV_ERROR, path, 0, 0, "cannot write: %s", strerror(errno));
        return WEFT_ERR_SYSTEM;
    }
    const weft_machine *m = &t->machine;
    char nccl[32];
    weft_machine_nccl_str(m->nccl, nccl, sizeof nccl);
    const char *date = "";
    for (size_t i = 0; i < t->nrun; i++)
        if (strcmp(t->run[i].key, "date") == 0) date = t->run[i].value;
    svg_text(s, 20, 26, 16, "start", 0, "black", "weft tune: %d x %s, %s, NCCL %s, weft %s",
             m->gpus, m->gpu ? m->gpu : "unknown GPU",
             m->topology ? m->topology : "topology unknown", nccl, m->weft ? m->weft : "?");
    svg_text(s, 20, 46, 11, "start", 0, "#555",
             "%s%s%s; median time per call over interleaved rounds, float sum; hover a point for "
             "its numbers",
             t->path ? t->path : "", *date ? ", " : "", date);
    if (t->nsecs == 0)
        svg_text(s, 20, TOP_H + 20, 12, "start", 0, "#666", "the table has no sections");
    for (size_t i = 0; i < t->nsecs; i++)
        draw_section(s, t, &t->secs[i], TOP_H + ROW_H * (double)i);
    if (svg_close(s) != 0) {
        weft_diag_add(d, WEFT_SEV_ERROR, path, 0, 0, "cannot write: %s", strerror(errno));
        return WEFT_ERR_SYSTEM;
    }
    return WEFT_OK;
}
