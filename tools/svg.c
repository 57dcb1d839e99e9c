/* svg.c — the SVG primitives of svg.h, written with stdio. */
#include "svg.h"

#include <stdarg.h>
#include <stdlib.h>

struct svg {
    FILE *f;
    weft_out *o;     /* svg_open: written as every weft output (weft_common.h), or NULL */
    const char *cls; /* for the next element */
};

static void put_escaped(FILE *f, const char *t) {
    for (; *t; t++) {
        switch (*t) {
        case '<': fputs("&lt;", f); break;
        case '>': fputs("&gt;", f); break;
        case '&': fputs("&amp;", f); break;
        case '"': fputs("&quot;", f); break;
        default:
            if ((unsigned char)*t >= 0x20 || *t == '\t') fputc(*t, f);
            break;
        }
    }
}

svg *svg_open_stream(FILE *f, double w, double h, const char *title) {
    svg *s = calloc(1, sizeof *s);
    if (s == NULL) return NULL;
    s->f = f;
    fprintf(s->f,
            "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
            "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%.0f\" height=\"%.0f\" "
            "viewBox=\"0 0 %.0f %.0f\" font-family=\"DejaVu Sans, Helvetica, Arial, "
            "sans-serif\">\n",
            w, h, w, h);
    if (title) {
        fputs("<title>", s->f);
        put_escaped(s->f, title);
        fputs("</title>\n", s->f);
    }
    fprintf(s->f, "<rect x=\"0\" y=\"0\" width=\"%.0f\" height=\"%.0f\" fill=\"white\"/>\n", w, h);
    return s;
}

svg *svg_open(const char *path, double w, double h) {
    weft_out *o = NULL;
    if (weft_out_open(path, WEFT_OUT_STDOUT, &o, NULL) != WEFT_OK) return NULL;
    svg *s = svg_open_stream(weft_out_file(o), w, h, NULL);
    if (s == NULL) {
        weft_out_close(o, NULL);
        return NULL;
    }
    s->o = o;
    return s;
}

int svg_close(svg *s) {
    if (s == NULL) return -1;
    fputs("</svg>\n", s->f);
    int bad = s->o ? weft_out_close(s->o, NULL) != WEFT_OK : ferror(s->f) || fflush(s->f) != 0;
    free(s);
    return bad ? -1 : 0;
}

void svg_class(svg *s, const char *cls) {
    s->cls = cls;
}

/* ` class="..."` when one is pending; it applies to one element. */
static void put_class(svg *s) {
    if (s->cls == NULL) return;
    fputs(" class=\"", s->f);
    put_escaped(s->f, s->cls);
    fputc('"', s->f);
    s->cls = NULL;
}

void svg_arrow_markers(svg *s, const char *const *colors, int n) {
    fputs("<defs>\n", s->f);
    for (int i = 0; i < n && i < 4; i++)
        fprintf(s->f,
                "<marker id=\"arrow%d\" viewBox=\"0 0 10 10\" refX=\"9\" refY=\"5\" "
                "markerWidth=\"6\" markerHeight=\"6\" orient=\"auto-start-reverse\">"
                "<path d=\"M 0 0 L 10 5 L 0 10 z\" fill=\"%s\"/></marker>\n",
                i, colors[i]);
    fputs("</defs>\n", s->f);
}

static void stroke_attrs(FILE *f, const char *color, double width, const char *dash) {
    fprintf(f, " stroke=\"%s\" stroke-width=\"%.2f\"", color, width);
    if (dash) fprintf(f, " stroke-dasharray=\"%s\"", dash);
}

void svg_line(svg *s, double x1, double y1, double x2, double y2, const char *color, double width,
              const char *dash) {
    fputs("<line", s->f);
    put_class(s);
    fprintf(s->f, " x1=\"%.2f\" y1=\"%.2f\" x2=\"%.2f\" y2=\"%.2f\"", x1, y1, x2, y2);
    stroke_attrs(s->f, color, width, dash);
    fputs("/>\n", s->f);
}

void svg_arrow(svg *s, double x1, double y1, double x2, double y2, const char *color, double width,
               const char *dash, int marker) {
    fputs("<line", s->f);
    put_class(s);
    fprintf(s->f, " x1=\"%.2f\" y1=\"%.2f\" x2=\"%.2f\" y2=\"%.2f\"", x1, y1, x2, y2);
    stroke_attrs(s->f, color, width, dash);
    fprintf(s->f, " marker-end=\"url(#arrow%d)\"/>\n", marker);
}

void svg_polyline(svg *s, const double *x, const double *y, int n, const char *color, double width,
                  const char *dash) {
    if (n < 1) return;
    fputs("<polyline", s->f);
    put_class(s);
    fputs(" fill=\"none\" points=\"", s->f);
    for (int i = 0; i < n; i++)
        fprintf(s->f, "%s%.2f,%.2f", i ? " " : "", x[i], y[i]);
    fputc('"', s->f);
    stroke_attrs(s->f, color, width, dash);
    fputs(" stroke-linejoin=\"round\"/>\n", s->f);
}

void svg_rect(svg *s, double x, double y, double w, double h, const char *fill, double opacity,
              const char *stroke) {
    fputs("<rect", s->f);
    put_class(s);
    fprintf(s->f, " x=\"%.2f\" y=\"%.2f\" width=\"%.2f\" height=\"%.2f\" fill=\"%s\"", x, y, w, h,
            fill);
    if (opacity < 1) fprintf(s->f, " fill-opacity=\"%.2f\"", opacity);
    if (stroke) fprintf(s->f, " stroke=\"%s\" stroke-width=\"1\"", stroke);
    fputs("/>\n", s->f);
}

void svg_circle(svg *s, double x, double y, double r, const char *fill) {
    fputs("<circle", s->f);
    put_class(s);
    fprintf(s->f, " cx=\"%.2f\" cy=\"%.2f\" r=\"%.2f\" fill=\"%s\"/>\n", x, y, r, fill);
}

void svg_text(svg *s, double x, double y, double size, const char *anchor, double rotate,
              const char *color, const char *fmt, ...) {
    char buf[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    fputs("<text", s->f);
    put_class(s);
    fprintf(s->f, " x=\"%.2f\" y=\"%.2f\" font-size=\"%.1f\" text-anchor=\"%s\" fill=\"%s\"", x, y,
            size, anchor, color);
    if (rotate != 0) fprintf(s->f, " transform=\"rotate(%.1f %.2f %.2f)\"", rotate, x, y);
    fputc('>', s->f);
    put_escaped(s->f, buf);
    fputs("</text>\n", s->f);
}

double svg_text_width(double size, const char *text) {
    double em = 0;
    for (const unsigned char *t = (const unsigned char *)text; *t; t++) {
        if ((*t & 0xc0) == 0x80) continue; /* a UTF-8 continuation byte: the same character */
        em += *t == ' ' || *t == '.' || *t == ',' || *t == ':' || *t == ';' || *t == '[' ||
                      *t == ']' || *t == '(' || *t == ')' || *t == 'i' || *t == 'l'
                  ? 0.36
              : *t == 'm' || *t == 'w' || *t == 'M' || *t == 'W' ? 0.92
                                                                 : 0.64;
    }
    return em * size;
}

void svg_group_begin(svg *s, const char *title) {
    fputs("<g", s->f);
    put_class(s);
    fputc('>', s->f);
    if (title) {
        fputs("<title>", s->f);
        put_escaped(s->f, title);
        fputs("</title>", s->f);
    }
    fputc('\n', s->f);
}

void svg_group_end(svg *s) {
    fputs("</g>\n", s->f);
}
