/* draw.h — pictures of a schedule for `weft show --format=svg|dot`: ranks by thread blocks by
 * steps placed in time, message arrows, the critical path highlighted. */
#ifndef WEFT_TOOLS_DRAW_H
#define WEFT_TOOLS_DRAW_H

#include "weft_ir.h"

#include <stdio.h>

/* SVG: one <g class="rank"> per rank holding its rows (class "row-label": the tbs each holds)
 * and step boxes (class "step", plus "crit" on the critical path; a box's second line, class
 * "chunk", the chunks it writes or reads); one arrow per message (class "msg"), those between
 * ranks not side by side labelled with the peer at both ends (class "peer"), dependencies across
 * tbs dashed (class "dep"), the path's arrows also "crit", and the path itself as one polyline
 * (class "critical-path"); a legend (class "legend"). gpus_per_node > 0 (and below the rank
 * count) frames ranks n*G .. n*G+G-1 as node n (class "node") and colours messages between
 * nodes. As wide as its columns, title and legend. 0 when every byte was written. */
int draw_schedule_svg(const weft_algo *a, const weft_timeline *t, int32_t gpus_per_node, FILE *out);
/* Graphviz DOT: a cluster per node (as above), per rank and per tb, the same nodes and edges and
 * classes. */
int draw_schedule_dot(const weft_algo *a, const weft_timeline *t, int32_t gpus_per_node, FILE *out);

#endif
