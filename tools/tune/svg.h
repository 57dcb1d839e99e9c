/* svg.h — the few SVG primitives weft's pictures need (lines, polylines, rectangles, circles,
 * text), written straight to a file; no dependency. */
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
/* Completes the file; 0 when every byte was written. */
int svg_close(svg *s);

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
/* A tooltip on the element that follows in viewers that show <title>. */
void svg_group_begin(svg *s, const char *title);
void svg_group_end(svg *s);

#ifdef __cplusplus
}
#endif
#endif
