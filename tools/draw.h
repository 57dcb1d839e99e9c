/* draw.h — pictures of a schedule for `weft show --format=svg|dot`: ranks by thread blocks by
 * steps placed in time, message arrows, the critical path highlighted. */
#ifndef WEFT_TOOLS_DRAW_H
#define WEFT_TOOLS_DRAW_H

#include "weft_ir.h"

#include <stdio.h>

/* SVG: one <g class="rank"> per rank holding its tbs' rows and step boxes (class "step", plus
 * "crit" on the critical path); one arrow per message (class "msg"), dependencies across tbs
 * dashed (class "dep"), the path's arrows also "crit", and the path itself as one polyline
 * (class "critical-path"). 0 when every byte was written. */
int draw_schedule_svg(const weft_algo *a, const weft_timeline *t, FILE *out);
/* Graphviz DOT: a cluster per rank and per tb, the same nodes and edges and classes. */
int draw_schedule_dot(const weft_algo *a, const weft_timeline *t, FILE *out);

#endif
