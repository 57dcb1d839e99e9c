/* svg.h — the few SVG primitives weft's pictures need (lines, arrows, polylines, rectangles,
 * circles, text, groups), written straight to a file; no dependency. Used by weft tune's plot,
 * weft show --format=svg and weft trace draw. */
#ifndef WEFT_SVG_H
#define WEFT_SVG_H

#include "weft_common.h"

#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct svg svg;

/* Opens path ("-": standard output) for a w x h picture, written as every weft output is
 * (weft_out_open); NULL (with errno) when it cannot be created. */
svg *svg_open(const char *path, double w, double h);
/* The same on an open stream, which svg_close leaves open. title (may be NULL) is the
 * document's <title>. */
svg *svg_open_stream(FILE *f, double w, double h, const char *title);
/* Completes the file; 0 when every byte was written. */
int svg_close(svg *s);

/* The class attribute of the next element written (a group, line, arrow, rectangle, circle or
 * text), so that a picture's parts can be styled and found (tests select them by class). */
void svg_class(svg *s, const char *cls);
/* Arrowhead markers for svg_arrow, one per colour given (at most 4); call once, early. */
void svg_arrow_markers(svg *s, const char *const *colors, int n);
/* A line from (x1, y1) to (x2, y2) ending in the arrowhead of marker colour marker (one of those
 * given to svg_arrow_markers). */
void svg_arrow(svg *s, double x1, double y1, double x2, double y2, const char *color, double width,
               const char *dash, int marker);

/* Colours are SVG colour strings ("#1f77b4", "black"); dash NULL for a solid line. */
void svg_line(svg *s, double x1, double y1, double x2, double y2, const char *color, double width,
              const char *dash);
void svg_polyline(svg *s, const double *x, const double *y, int n, const char *color, double width,
                  const char *dash);
void svg_rect(svg *s, double x, double y, double w, double h, const char *fill, double opacity,
              const char *stroke);
void svg_circle(svg *s, double x, double y, double r, const char *fill);
/* anchor: "start", "middle" or "end"; rotate: degrees about (x, y). The text is escaped. */
void svg_text(svg *s, double x, double y, double size, const char *anchor, double rotate,
              const char *color, const char *fmt, ...) WEFT_PRINTF(8, 9);
/* The width a line of text takes at size px, estimated (no font metrics here): DejaVu Sans,
 * the first font the pictures ask for and among the widest, averages about 0.6 em per
 * character in the labels weft writes, so a picture sized by this does not cut its text. */
double svg_text_width(double size, const char *text);
/* A group; title (may be NULL) is a tooltip in viewers that show <title>. */
void svg_group_begin(svg *s, const char *title);
void svg_group_end(svg *s);

#ifdef __cplusplus
}
#endif
#endif
