/* cmd_estimate.c — `weft estimate`: what a schedule costs, without a GPU: the interpreter's timing
 * model (tools/trace/sim.h) per message size, its critical path, a timeline picture. */
#include "commands.h"
#include "sim.h"
#include "svg.h"
#include "topo.h"
#include "weft_compiler.h"

#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The model's parameters as the command shows and takes them (--set NAME=VALUE): microseconds,
 * GB/s (10^9 bytes per second), shares. */
typedef struct est_params {
    double launch_us, cta_us, signal_us, link_gbps, gpu_gbps, max_ctas, slots;
    double lat_us[WEFT_PROTO_COUNT], step_us[WEFT_PROTO_COUNT], cta_gbps[WEFT_PROTO_COUNT],
        eff[WEFT_PROTO_COUNT];
} est_params;

#define P1(f, name, help)    {name, offsetof(est_params, f), help},
#define PP(f, p, name, help) {name, offsetof(est_params, f) + (p) * sizeof(double), help},
#define PROTO_ROWS(p, pn)                                                                          \
    PP(lat_us, p, pn ".lat_us", "a message: from the end of its send to its data at the peer")     \
    PP(step_us, p, pn ".step_us", "the fixed cost of one step on one slice")                       \
    PP(cta_gbps, p, pn ".cta_gbps", "what one CTA moves per second")                               \
    PP(eff, p, pn ".wire_eff", "the payload's share of what crosses the link")

static const struct {
    const char *name;
    size_t off;
    const char *help;
} params[] = {
    P1(launch_us, "launch_us", "from the call to the CTAs' start (kernel launch)")
        P1(cta_us, "cta_us", "... and this more per CTA the launch starts on a rank") P1(
            signal_us, "signal_us", "a dependency between tbs of a rank; a FIFO credit's return")
            P1(link_gbps, "link_gbps", "one direction of one peer pair (0: no limit)") P1(
                gpu_gbps, "gpu_gbps",
                "all of a rank's sends together: its ports, a switch (0: no limit)")
                P1(max_ctas, "max_ctas", "CTAs per rank a launch may take (the runtime's groups)")
                    P1(slots, "slots", "messages a connection holds before its sender waits")
                        PROTO_ROWS(WEFT_PROTO_SIMPLE, "simple") PROTO_ROWS(WEFT_PROTO_LL, "ll")
                            PROTO_ROWS(WEFT_PROTO_LL128, "ll128")};
#define NPARAMS (sizeof params / sizeof *params)

static double *param(est_params *p, size_t i) {
    return (double *)((char *)p + params[i].off);
}

static void to_params(const weft_sim_model *m, est_params *p) {
    p->launch_us = (double)m->launch_ns / 1000, p->signal_us = (double)m->sig_ns / 1000;
    p->cta_us = (double)m->cta_ns / 1000;
    p->link_gbps = m->link_Bpns, p->gpu_gbps = m->gpu_Bpns, p->max_ctas = m->max_ctas,
    p->slots = m->slots;
    for (int k = 0; k < WEFT_PROTO_COUNT; k++) {
        p->lat_us[k] = m->proto[k].lat_ns / 1000, p->step_us[k] = m->proto[k].step_ns / 1000;
        p->cta_gbps[k] = m->proto[k].cta_Bpns, p->eff[k] = m->proto[k].wire_eff;
    }
}

static void from_params(const est_params *p, weft_sim_model *m) {
    m->launch_ns = (int64_t)(p->launch_us * 1000 + 0.5);
    m->sig_ns = (int64_t)(p->signal_us * 1000 + 0.5);
    m->cta_ns = (int64_t)(p->cta_us * 1000 + 0.5);
    m->link_Bpns = p->link_gbps, m->gpu_Bpns = p->gpu_gbps, m->max_ctas = (int32_t)p->max_ctas,
    m->slots = (int32_t)p->slots;
    for (int k = 0; k < WEFT_PROTO_COUNT; k++)
        m->proto[k] =
            (weft_sim_proto){p->lat_us[k] * 1000, p->step_us[k] * 1000, p->cta_gbps[k], p->eff[k]};
}

enum {
    OPT_SIZES = 256,
    OPT_TYPE,
    OPT_INPLACE,
    OPT_LINK,
    OPT_SET,
    OPT_PATH,
    OPT_SVG,
    OPT_AT,
    OPT_MODEL,
    OPT_TOPO
};

static const weft_opt estimate_opts[] = {
    WEFT_OPT_DEFINE,
    WEFT_OPT_TEXT(STR, OPT_SIZES, "sizes", "LIST",
                  "comma-separated sizes in bytes as selection counts\n"
                  "them (K, M, G: powers of 1024; default\n"
                  "8,32,128,...,128M: x4 from 8 B)"),
    WEFT_OPT_TYPE(OPT_TYPE, "element type (default float)"),
    WEFT_OPT_FLAG(OPT_INPLACE, "inplace",
                  "label the calls in-place (the same steps and bytes\n"
                  "as out-of-place: the model does not tell them\n"
                  "apart)"),
    WEFT_OPT_REAL(OPT_LINK, "link-gbps", "G", 0, 1e9,
                  "bandwidth of one direction of a peer pair (--set\n"
                  "link_gbps=G)"),
    WEFT_OPT_TEXT(STR, OPT_SET, "set", "NAME=VALUE",
                  "a model parameter (--model lists them); repeatable"),
    WEFT_OPT_SIZE(OPT_PATH, "path", "SIZE", 1, 1ull << 40,
                  "list the critical path's steps at SIZE"),
    WEFT_OPT_TEXT(OUT, OPT_SVG, "svg", "OUT",
                  "draw the timeline at the last size (or --at SIZE)\n"
                  "into OUT"),
    WEFT_OPT_SIZE(OPT_AT, "at", "SIZE", 1, 1ull << 40, "the size --svg draws"),
    WEFT_OPT_TEXT(FILE, OPT_TOPO, "topo", "FILE",
                  "the machine's topology as NCCL dumps it\n"
                  "(NCCL_TOPO_DUMP_FILE): each peer pair at its link's\n"
                  "bandwidth and latency (NVLink, PCIe, network)"),
    WEFT_OPT_FLAG(OPT_MODEL, "model", "print the model's parameters and exit"),
    {0}};

const weft_cmd_spec weft_spec_estimate = {
    .name = "estimate",
    .summary = "what a schedule costs per message size: timing model, critical path, timeline",
    .synopsis =
        "FILE.xml|FILE.weft [-D NAME=VALUE]... [--sizes LIST]\n"
        "                     [--type T] [--inplace] [--link-gbps G] [--set NAME=VALUE]...\n"
        "                     [--path SIZE] [--svg OUT [--at SIZE]] [--topo FILE] [--model]",
    .description =
        "Estimates, without a GPU, how long one call of the schedule takes at each message\n"
        "size: the interpreter's timing model (the one the trace tests use) runs every tb\n"
        "slice by slice as the runtime cuts the call (slots, CTA groups), each step waiting\n"
        "for its dependency, its message and its FIFO credit, then moving its bytes at its\n"
        "protocol's rate per CTA and its share of the link. Prints per size the estimated\n"
        "time, bus bandwidth, the cut (slices x CTAs per tb) and the critical path (steps on\n"
        "the longest chain of waits, time moving data against time in messages and\n"
        "signals). The defaults are calibrated on 2 GPUs over NVLink (docs/estimate.md says\n"
        "against what, and how close they come).\n"
        "\n"
        "With --topo, every link is the machine's instead of one uniform link: rank r runs on\n"
        "GPU r % G of node r / G (G GPUs in the dump, in the order of their NCCL rank); a\n"
        "pair's bandwidth is NCCL's figure for its path (NVLink lanes, PCIe, the CPUs'\n"
        "interconnect, the network device), its sends share the GPU's NVLinks or its PCIe\n"
        "link, and a message off NVLink takes NCCL's extra latency for PCIe or the network.\n"
        "The links the schedule sends on are listed.",
    .opts = estimate_opts,
    .operands = WEFT_ARG_ALGO,
    .exit_status = "0 ok, 1 the input is wrong (or the model deadlocks), 2 usage error.",
};

/* A size as --sizes takes it: 1 B to 1 TB. */
static int parse_size(const char *s, unsigned long long *out) {
    return weft_parse_size(s, 1, 1ull << 40, out);
}

/* --set NAME=VALUE (or --link-gbps: name given) into ep; 0 or a usage error said. */
static int set_param(weft_getopt *g, est_params *ep, const char *name, const char *val) {
    size_t p = 0;
    while (p < NPARAMS && strcmp(params[p].name, name) != 0)
        p++;
    if (p == NPARAMS) {
        const char *names[NPARAMS];
        for (size_t k = 0; k < NPARAMS; k++)
            names[k] = params[k].name;
        const char *dym = weft_did_you_mean(name, names, (int)NPARAMS);
        if (dym) return weft_opt_error(g, "no model parameter '%s'; did you mean '%s'?", name, dym);
        return weft_opt_error(g, "no model parameter '%s' (weft estimate --model lists them)",
                              name);
    }
    char *end;
    errno = 0;
    double x = strtod(val, &end);
    if (end == val || *end != '\0' || errno || !(x >= 0) || x > 1e9)
        return weft_opt_error(g, "%s wants a number >= 0, not '%s'", name, val);
    /* counts are whole (rates and shares are checked with the model; a time too large for the
     * model's clock is found when it runs, and exits 2 too) */
    const double *pv = param(ep, p);
    if ((pv == &ep->slots || pv == &ep->max_ctas) && (x < 1 || x > 65536 || x != (double)(int)x))
        return weft_opt_error(g, "%s wants a whole number from 1 to 65536, not '%s'", name, val);
    *param(ep, p) = x;
    return 0;
}

static void size_str(unsigned long long b, char *buf, size_t n) {
    if (b >= (1ull << 30) && b % (1ull << 30) == 0)
        snprintf(buf, n, "%llu GB", b >> 30);
    else if (b >= (1ull << 20) && b % (1ull << 20) == 0)
        snprintf(buf, n, "%llu MB", b >> 20);
    else if (b >= 1024 && b % 1024 == 0)
        snprintf(buf, n, "%llu KB", b >> 10);
    else
        snprintf(buf, n, "%llu B", b);
}

/* The count of a call of a size (weft_coll_footprint), at least 1. */
static int64_t count_of(const weft_algo *a, unsigned long long bytes, int32_t esz) {
    uint64_t per = weft_coll_footprint(a->coll, 1, (uint64_t)esz, a->ngpus);
    int64_t c = (int64_t)(bytes / per);
    return c < 1 ? 1 : c;
}

static const char *const why_names[] = {"start", "previous step", "dependency", "message",
                                        "credit"};

/* Time moving data on the path, and the rest (launch, messages, signals). */
static void path_split(const weft_sim *s, const weft_sim_hop *p, size_t n, double *move_us) {
    int64_t mv = 0;
    for (size_t i = 0; i < n; i++) {
        const weft_sim_exec *e = &s->tbs[p[i].tb].e[p[i].x];
        mv += e->t1 - (e->t0 + e->dep + e->data + e->credit);
    }
    *move_us = (double)mv / 1000;
}

static void print_path(FILE *tab, const weft_algo *a, const weft_sim *s, const weft_sim_hop *p,
                       size_t n, int64_t t_start) {
    fprintf(tab,
            "       start us  waited us     dur us  rank   tb  step  slice  type   released by\n");
    for (size_t i = 0; i < n; i++) {
        const weft_sim_tb *t = &s->tbs[p[i].tb];
        const weft_sim_exec *e = &t->e[p[i].x];
        const weft_step *xs = &a->gpus[t->rank].tbs[t->tb].steps[e->step];
        int64_t w = e->dep + e->data + e->credit;
        fprintf(tab, "  %13.3f %10.3f %10.3f  %4d %4d  %4d  %5d  %-5s  %s\n",
                (double)(e->t0 + w - t_start) / 1000, (double)w / 1000,
                (double)(e->t1 - e->t0 - w) / 1000, t->rank, t->tb, e->step, e->iter,
                weft_step_name(xs->type), why_names[e->why]);
    }
}

/* The timeline's geometry. Up to FOLD_AT tbs in all, a row per (rank, tb), each execution's
 * wait drawn before it; past that (a 128-tb file drew a 3,664-px wall of stripes), each rank's
 * tbs are folded into at most FOLD_ROWS rows: a tb goes to the first row where none of its
 * executions meets one already there (waits left out, they would always meet), else to the
 * last row, drawn over. A rank's rows then read as its busy time. */
enum { FOLD_AT = 48, FOLD_ROWS = 6 };
static const double T_LEFT = 110, T_TOP = 44, T_ROW = 14, T_WIDTH = 1000, T_RIGHT = 40;

static int64_t exec_start(const weft_sim_exec *e) {
    return e->t0 + e->dep + e->data + e->credit;
}

/* Rows for the tbs: row[i] for s->tbs[i], rank_row0[r] the first row of rank r and rank_nrows[r]
 * its rows, over[r] set where a tb found no row free and was drawn over; the row count. */
static int32_t fold_rows(const weft_algo *a, const weft_sim *s, int fold, int32_t *row,
                         int32_t *rank_row0, int32_t *rank_nrows, uint8_t *over) {
    if (!fold) {
        for (size_t i = 0; i < s->ntbs; i++)
            row[i] = (int32_t)i;
        for (int32_t r = 0; r < a->ngpus; r++)
            rank_row0[r] = rank_nrows[r] = over[r] = 0;
        for (size_t i = s->ntbs; i-- > 0;)
            rank_row0[s->tbs[i].rank] = (int32_t)i, rank_nrows[s->tbs[i].rank]++;
        return (int32_t)s->ntbs;
    }
    int32_t nrows = 0;
    size_t i = 0;
    for (int32_t r = 0; r < a->ngpus; r++) {
        rank_row0[r] = nrows;
        over[r] = 0;
        size_t b = i;
        int32_t used = 0;
        for (; i < s->ntbs && s->tbs[i].rank == r; i++) {
            int32_t k = 0;
            for (; k < used; k++) {
                int meets = 0;
                /* earlier tbs of the rank in row k: does any execution meet one of tb i's? */
                for (size_t j = b; j < i && !meets; j++) {
                    if (row[j] != nrows + k) continue;
                    for (int32_t x = 0; x < s->tbs[i].n && !meets; x++)
                        for (int32_t y = 0; y < s->tbs[j].n && !meets; y++)
                            meets = exec_start(&s->tbs[i].e[x]) < s->tbs[j].e[y].t1 &&
                                    exec_start(&s->tbs[j].e[y]) < s->tbs[i].e[x].t1;
                }
                if (!meets) break;
            }
            if (k == used && used == FOLD_ROWS) over[r] = 1;
            if (k == used) k = used < FOLD_ROWS ? used++ : used - 1;
            row[i] = nrows + k;
        }
        rank_nrows[r] = used > 0 ? used : 1;
        nrows += rank_nrows[r];
    }
    return nrows;
}

/* Axis ticks: 1, 2 or 5 times a power of ten, about six of them over span (same unit). */
static double tick_step(double span) {
    double step = 1e-3;
    while (span / step > 6)
        step *= span / (step * 2) <= 6 ? 2 : span / (step * 5) <= 6 ? 5 : 10;
    return step;
}

/* The timeline: rows of tbs by rank (folded past FOLD_AT), a box per step execution (colour by
 * what it does), the critical path outlined, a time axis and a legend below. */
static int draw(const char *path, const weft_algo *a, const weft_sim *s, const weft_sim_hop *p,
                size_t np, const char *title) {
    int fold = s->ntbs > FOLD_AT;
    int32_t *row = malloc((s->ntbs + 1) * sizeof *row);
    int32_t *row0 = malloc(((size_t)a->ngpus + 1) * sizeof *row0);
    int32_t *nrow = malloc(((size_t)a->ngpus + 1) * sizeof *nrow);
    uint8_t *over = malloc((size_t)a->ngpus + 1);
    if (row == NULL || row0 == NULL || nrow == NULL || over == NULL) {
        free(row), free(row0), free(nrow), free(over);
        errno = ENOMEM;
        return -1;
    }
    int32_t nrows = fold_rows(a, s, fold, row, row0, nrow, over);
    int any_over = 0;
    for (int32_t r = 0; r < a->ngpus; r++)
        any_over |= over[r];
    /* a gap between ranks when folded, where a rank's rows are no longer labelled one by one */
    double gap = fold ? 6 : 0;
    double plot_h = T_ROW * nrows + gap * a->ngpus;
    static const char *const legend =
        "blue send, green receive, red reduce, grey local; light grey: waiting; outlined: "
        "critical path";
    static const char *const legend_fold =
        "blue send, green receive, red reduce, grey local; outlined: critical path; folded: a "
        "rank's tbs share rows where their steps do not overlap in time (waits not drawn)";
    static const char *const legend_over = "*: more tbs busy at once than rows: the last row is "
                                           "drawn over";
    const char *leg = fold ? legend_fold : legend;
    double w = T_LEFT + T_WIDTH + T_RIGHT;
    if (20 + svg_text_width(13, title) > w) w = 20 + svg_text_width(13, title);
    if (20 + svg_text_width(10, leg) > w) w = 20 + svg_text_width(10, leg);
    double h = T_TOP + plot_h + 64 + (any_over ? 14 : 0);
    svg *g = svg_open(path, w, h);
    if (g == NULL) {
        free(row), free(row0), free(nrow), free(over);
        return -1;
    }
    double span = (double)(s->end - s->start);
    if (span <= 0) span = 1;
#define ROW_Y(rank, rw) (T_TOP + T_ROW * (double)(rw) + gap * (double)(rank))
#define TX(ns)          (T_LEFT + T_WIDTH * (double)((ns)-s->start) / span)
    svg_class(g, "title");
    svg_text(g, 10, 20, 13, "start", 0, "black", "%s", title);
    /* the grid and its labels above the rows, the axis below */
    double step_us = tick_step(span / 1000), yb = T_TOP + plot_h + 4;
    svg_class(g, "axis");
    svg_group_begin(g, NULL);
    for (int k = 0; k * step_us <= span / 1000 * (1 + 1e-9); k++) {
        double x = T_LEFT + T_WIDTH * k * step_us * 1000 / span;
        svg_line(g, x, T_TOP - 4, x, yb, "#e4e4e4", 1, NULL);
        svg_text(g, x, yb + 14, 10, "middle", 0, "black", "%g", k * step_us);
    }
    svg_line(g, T_LEFT, yb, T_LEFT + T_WIDTH, yb, "black", 1, NULL);
    svg_text(g, T_LEFT + T_WIDTH, yb + 28, 10, "end", 0, "black",
             "us from the call (modelled end %.2f us)", span / 1000);
    svg_group_end(g);
    for (int32_t r = 0; r < a->ngpus; r++) {
        if (!fold) break;
        double y = ROW_Y(r, row0[r]);
        int32_t ntbs = a->gpus[r].ntbs;
        svg_class(g, "rank-label");
        if (nrow[r] == 1)
            svg_text(g, T_LEFT - 6, y + T_ROW - 3, 10, "end", 0, "black", "rank %d: %d tb%s", r,
                     ntbs, ntbs == 1 ? "" : "s");
        else {
            svg_text(g, T_LEFT - 6, y + T_ROW - 3, 10, "end", 0, "black", "rank %d", r);
            svg_text(g, T_LEFT - 6, y + 2 * T_ROW - 3, 9, "end", 0, "#555", "%d tbs in %d rows%s",
                     ntbs, nrow[r], over[r] ? "*" : "");
        }
        if (r % 2 == 0) svg_rect(g, T_LEFT, y, T_WIDTH, T_ROW * nrow[r], "#f5f5f5", 1, NULL);
    }
    for (size_t i = 0; i < s->ntbs; i++) {
        const weft_sim_tb *t = &s->tbs[i];
        double y = ROW_Y(t->rank, row[i]);
        if (!fold) {
            svg_class(g, "row-label");
            svg_text(g, T_LEFT - 6, y + T_ROW - 4, 10, "end", 0, "black", "rank %d tb %d", t->rank,
                     t->tb);
        }
        for (int32_t x = 0; x < t->n; x++) {
            const weft_sim_exec *e = &t->e[x];
            const weft_step *xs = &a->gpus[t->rank].tbs[t->tb].steps[e->step];
            unsigned f = weft_step_flags(xs->type);
            const char *fill = (f & WEFT_STEP_F_REDUCE) ? "#d62728"
                               : (f & WEFT_STEP_F_RECV) ? "#2ca02c"
                               : (f & WEFT_STEP_F_SEND) ? "#1f77b4"
                                                        : "#7f7f7f";
            double x0 = TX(e->t0), xw = TX(e->t1), xm = TX(exec_start(e));
            char tip[160];
            snprintf(tip, sizeof tip,
                     "rank %d tb %d step %d slice %d %s: %.3f-%.3f us, waited %.3f", t->rank, t->tb,
                     e->step, e->iter, weft_step_name(xs->type), (double)(e->t0 - s->start) / 1000,
                     (double)(e->t1 - s->start) / 1000,
                     (double)(e->dep + e->data + e->credit) / 1000);
            svg_class(g, "exec");
            svg_group_begin(g, tip);
            if (!fold && xm > x0) svg_rect(g, x0, y + 2, xm - x0, T_ROW - 4, "#dddddd", 1, NULL);
            svg_rect(g, xm, y + 2, xw - xm > 0.5 ? xw - xm : 0.5, T_ROW - 4, fill, 0.85, NULL);
            svg_group_end(g);
        }
    }
    for (size_t i = 0; i < np; i++) {
        const weft_sim_exec *e = &s->tbs[p[i].tb].e[p[i].x];
        double y = ROW_Y(s->tbs[p[i].tb].rank, row[p[i].tb]);
        double x0 = TX(exec_start(e)), x1 = TX(e->t1);
        svg_class(g, "crit");
        svg_rect(g, x0, y + 1, x1 - x0 > 0.5 ? x1 - x0 : 0.5, T_ROW - 2, "none", 1, "black");
    }
#undef ROW_Y
#undef TX
    svg_class(g, "legend");
    svg_group_begin(g, NULL);
    svg_text(g, 10, h - 8 - (any_over ? 14 : 0), 10, "start", 0, "black", "%s", leg);
    if (any_over) svg_text(g, 10, h - 8, 10, "start", 0, "black", "%s", legend_over);
    svg_group_end(g);
    free(row), free(row0), free(nrow), free(over);
    return svg_close(g);
}

/* The model's links from the machine's (--topo): each pair at its path's bandwidth; a message
 * off NVLink later by NCCL's extra latency of its kind over NVLink's (the protocols' lat_us are
 * NVLink's, calibrated) plus the network device's own; NVLink sends share the GPU's NVLinks,
 * every other send its PCIe link. *links and *ports are malloc'd (the caller frees them). */
static weft_result topo_links(const weft_topo *t, const weft_algo *a, weft_sim_model *m,
                              weft_sim_link **links, double **ports) {
    size_t n = (size_t)a->ngpus;
    *links = calloc(n * n + 1, sizeof **links);
    *ports = calloc(n * WEFT_SIM_PORTS + 1, sizeof **ports);
    if (*links == NULL || *ports == NULL) return WEFT_ERR_NOMEM;
    double nvl_lat = weft_topo_hw_lat_us(WEFT_TOPO_NVL, a->proto);
    for (int32_t s = 0; s < a->ngpus; s++) {
        const weft_topo_gpu *g = weft_topo_gpu_at(t, s % weft_topo_ngpus(t));
        (*ports)[(size_t)s * WEFT_SIM_PORTS + WEFT_SIM_PORT_NVLINK] = g->nvl_gbps;
        (*ports)[(size_t)s * WEFT_SIM_PORTS + WEFT_SIM_PORT_PCIE] = g->pci_gbps;
        for (int32_t r = 0; r < a->ngpus; r++) {
            if (r == s) continue;
            weft_topo_link l = weft_topo_between(t, s, r);
            weft_sim_link *k = &(*links)[(size_t)s * n + (size_t)r];
            k->Bpns = l.gbps; /* GB/s are bytes per ns */
            k->lat_ns = (weft_topo_hw_lat_us(l.kind, a->proto) - nvl_lat + l.net_lat_us) * 1000;
            k->port = l.kind == WEFT_TOPO_NVL ? WEFT_SIM_PORT_NVLINK : WEFT_SIM_PORT_PCIE;
        }
    }
    m->links = *links;
    m->port_Bpns = *ports;
    m->links_n = a->ngpus;
    return WEFT_OK;
}

/* The machine and the links the schedule sends on, and what a message off NVLink adds. */
static void print_topo(FILE *tab, const weft_topo *t, const weft_algo *a) {
    weft_topo_print_summary(t, a->ngpus, tab);
    weft_topo_print_links(t, a, tab, "  ", a->ngpus <= 8);
    int used[WEFT_TOPO_KIND_COUNT] = {0};
    for (int32_t s = 0; s < a->ngpus; s++)
        for (int32_t r = 0; r < a->ngpus; r++)
            if (s != r && weft_topo_sends(a, s, r)) used[weft_topo_between(t, s, r).kind] = 1;
    double nvl = weft_topo_hw_lat_us(WEFT_TOPO_NVL, a->proto);
    const char *sep = "  a message takes NCCL's extra latency over NVLink's: ";
    if (used[WEFT_TOPO_PIX] || used[WEFT_TOPO_PXB] || used[WEFT_TOPO_PHB] || used[WEFT_TOPO_SYS]) {
        fprintf(tab, "%sPCIe +%.2f us", sep, weft_topo_hw_lat_us(WEFT_TOPO_PHB, a->proto) - nvl);
        sep = ", ";
    }
    if (used[WEFT_TOPO_NET]) {
        fprintf(tab, "%snetwork +%.2f us and the device's own", sep,
                weft_topo_hw_lat_us(WEFT_TOPO_NET, a->proto) - nvl);
        sep = ", ";
    }
    if (sep[0] == ',') fprintf(tab, " (%s)\n", weft_proto_name(a->proto));
}

int weft_cmd_estimate(int argc, char **argv) {
    const char *file = NULL, *svg_out = NULL;
    size_t nsizes = 0;
    unsigned long long sizes[64], at = 0, path_at = 0;
    int rc = WEFT_EXIT_USAGE, dtype = WEFT_DTYPE_FLOAT, inplace = -1, show_model = 0;
    const char *topo_file = NULL, *link_set = NULL;
    weft_topo *topo = NULL;
    weft_sim_link *links = NULL;
    double *ports = NULL;
    weft_sim_model model;
    est_params ep;
    weft_diag *d = NULL;
    weft_algo *a = NULL;
    weft_sim_model_default(&model);
    to_params(&model, &ep);
    weft_getopt g;
    weft_getopt_init(&g, &weft_spec_estimate, argc, argv);
    for (int c; (c = weft_getopt_next(&g)) != WEFT_OPT_END;) {
        switch (c) {
        case WEFT_OPT_EXIT: rc = g.exit_code; goto done;
        case OPT_INPLACE: inplace = 1; break;
        case OPT_MODEL: show_model = 1; break;
        case OPT_TYPE: dtype = (int)g.num; break;
        case OPT_SVG: svg_out = g.arg; break;
        case OPT_AT: at = g.unum; break;
        case OPT_PATH: path_at = g.unum; break;
        case OPT_LINK:
            ep.link_gbps = g.real;
            link_set = "--link-gbps";
            break;
        case OPT_TOPO: topo_file = g.arg; break;
        case OPT_SET: {
            const char *eq = strchr(g.arg, '=');
            char name[64];
            if (eq == NULL || (size_t)(eq - g.arg) >= sizeof name) {
                rc = weft_opt_error(&g, "NAME=VALUE, not '%s'", g.arg);
                goto done;
            }
            snprintf(name, sizeof name, "%.*s", (int)(eq - g.arg), g.arg);
            if ((rc = set_param(&g, &ep, name, eq + 1)) != 0) goto done;
            if (strcmp(name, "link_gbps") == 0) link_set = "--set link_gbps";
            if (strcmp(name, "gpu_gbps") == 0) link_set = "--set gpu_gbps";
            rc = WEFT_EXIT_USAGE;
            break;
        }
        case OPT_SIZES: {
            char *list = weft_strdup(g.arg), *save = NULL;
            nsizes = 0;
            for (char *t = list ? strtok_r(list, ",", &save) : NULL; t;
                 t = strtok_r(NULL, ",", &save)) {
                if (nsizes == sizeof sizes / sizeof *sizes || parse_size(t, &sizes[nsizes]) != 0) {
                    rc = weft_opt_error(&g, "'%s' is not a size from 1 B to 1 TB (or more than 64)",
                                        t);
                    free(list);
                    goto done;
                }
                nsizes++;
            }
            free(list);
            if (nsizes == 0) {
                rc = weft_opt_error(&g, "which sizes?");
                goto done;
            }
            break;
        }
        }
    }
    if (g.noperands > 1) {
        rc = weft_usage_error(&weft_spec_estimate, "one file at a time ('%s' and '%s')",
                              g.operands[0], g.operands[1]);
        goto done;
    }
    file = g.noperands ? g.operands[0] : NULL;
    if (topo_file && link_set) {
        rc = weft_usage_error(&weft_spec_estimate,
                              "--topo gives each link its own bandwidth: %s does not apply",
                              link_set);
        goto done;
    }
    if (ep.slots < 1 || ep.max_ctas < 1) {
        fprintf(stderr, "weft estimate: slots and max_ctas must be at least 1\n");
        goto done;
    }
    for (int p = 0; p < WEFT_PROTO_COUNT; p++)
        if (ep.cta_gbps[p] <= 0 || ep.eff[p] <= 0 || ep.eff[p] > 1) {
            fprintf(stderr,
                    "weft estimate: %s: cta_gbps must be > 0 and wire_eff in (0, 1] (not %g, "
                    "%g)\n",
                    weft_proto_name((weft_proto)p), ep.cta_gbps[p], ep.eff[p]);
            goto done;
        }
    if (show_model) {
        for (size_t p = 0; p < NPARAMS; p++)
            printf("%-16s %10g  %s\n", params[p].name, *param(&ep, p), params[p].help);
        rc = WEFT_EXIT_OK;
        goto done;
    }
    if (file == NULL) {
        rc = weft_usage_error(&weft_spec_estimate, "no input file");
        goto done;
    }
    if (nsizes == 0)
        for (unsigned long long b = 8; b <= (128ull << 20); b *= 4)
            sizes[nsizes++] = b;
    if (at == 0) at = sizes[nsizes - 1];
    /* the sizes --at draws and --path lists are estimated too, in size order */
    for (int k = 0; k < 2; k++) {
        unsigned long long want = k ? path_at : at;
        int have = want == 0;
        for (size_t i = 0; i < nsizes; i++)
            have |= sizes[i] == want;
        if (have) continue;
        if (nsizes == sizeof sizes / sizeof *sizes) {
            fprintf(stderr, "weft estimate: at most %zu sizes, --at and --path included\n",
                    sizeof sizes / sizeof *sizes);
            goto done;
        }
        size_t i = nsizes++;
        for (; i > 0 && sizes[i - 1] > want; i--)
            sizes[i] = sizes[i - 1];
        sizes[i] = want;
    }
    from_params(&ep, &model);
    model.dtype = dtype;
    rc = WEFT_EXIT_INPUT;
    d = weft_diag_new();
    weft_cc_options co = {g.defines, g.ndefines, NULL, 0};
    weft_result r = d ? weft_cc_load_file(file, &co, &a, d) : WEFT_ERR_NOMEM;
    if (weft_cmd_report(&weft_spec_estimate, file, r, d, WEFT_SEV_NOTE) != WEFT_OK) goto done;
    if (topo_file) {
        r = weft_topo_read_file(topo_file, &topo, d);
        if (r == WEFT_OK) r = weft_topo_fit(topo, a->ngpus, file, d);
        if (r == WEFT_OK) r = topo_links(topo, a, &model, &links, &ports);
        if (weft_cmd_report(&weft_spec_estimate, topo_file, r, d, WEFT_SEV_NOTE) != WEFT_OK)
            goto done;
    }
    if (inplace < 0) inplace = !a->outofplace;
    if (inplace && !a->inplace) {
        fprintf(stderr, "weft estimate: %s declares no in-place calls\n", file);
        goto done;
    }
    int32_t esz = weft_dtype_size((weft_dtype)dtype);
    int maxtbs = 0;
    for (int q = 0; q < a->ngpus; q++)
        if (a->gpus[q].ntbs > maxtbs) maxtbs = a->gpus[q].ntbs;
    /* a picture on standard output keeps it to itself: the table goes to standard error */
    FILE *tab = svg_out && strcmp(svg_out, "-") == 0 ? stderr : stdout;
    fprintf(tab, "%s (%s): %s on %d ranks, %s, %d tbs per rank at most, %s, %s\n", a->name, file,
            weft_coll_name(a->coll), a->ngpus, weft_proto_name(a->proto), maxtbs,
            inplace ? "in-place" : "out-of-place", weft_dtype_name((weft_dtype)dtype));
    const weft_sim_proto *pr = &model.proto[a->proto];
    char link_text[64];
    if (topo)
        snprintf(link_text, sizeof link_text, "links of the topology");
    else
        snprintf(link_text, sizeof link_text, "link %g GB/s per direction", ep.link_gbps);
    fprintf(tab,
            "model: launch %.2f us, %s, %s: message %.2f us, step %.2f us, "
            "%g GB/s per CTA, wire %.0f%% (weft estimate --model; docs/estimate.md)\n",
            ep.launch_us, link_text, weft_proto_name(a->proto), pr->lat_ns / 1000,
            pr->step_ns / 1000, pr->cta_Bpns, pr->wire_eff * 100);
    if (topo) print_topo(tab, topo, a);
    fprintf(tab, "%10s %12s %12s %14s   %s\n", "size", "est us", "busbw GB/s", "slices x CTAs",
            "critical path");
    int drew = svg_out == NULL, listed = path_at == 0;
    for (size_t i = 0; i < nsizes; i++) {
        char sz[32];
        size_str(sizes[i], sz, sizeof sz);
        model.count = count_of(a, sizes[i], esz);
        weft_sim s;
        weft_sim_hop *p = NULL;
        size_t np = 0;
        r = weft_sim_run(a, &model, 0, &s, d);
        /* both buffer modes run the same steps over the same bytes: one model for either */
        if (r == WEFT_OK) r = weft_sim_critical_path(&s, &p, &np);
        if (r != WEFT_OK) {
            weft_diag_print(d, stderr, WEFT_SEV_NOTE);
            if (r == WEFT_ERR_USAGE) /* the parameters overflow the model's clock (said) */
                rc = WEFT_EXIT_USAGE;
            else if (r != WEFT_ERR_INPUT)
                fprintf(stderr, "weft estimate: %s\n", weft_result_str(r));
            weft_sim_free(&s);
            goto done;
        }
        double us = (double)(s.end - s.start) / 1000, move;
        path_split(&s, p, np, &move);
        double busbw = (double)sizes[i] / (us * 1000) * weft_coll_busbw_factor(a->coll, a->ngpus);
        char cut[32];
        snprintf(cut, sizeof cut, "%d x %d", s.niter, s.group);
        fprintf(tab,
                "%10s %12.2f %12.2f %14s   %zu steps: %.2f us moving data, %.2f us launch, "
                "messages and signals\n",
                sz, us, busbw, cut, np, move, us - move);
        if (!listed && sizes[i] == path_at) {
            print_path(tab, a, &s, p, np, s.start);
            listed = 1;
        }
        if (!drew && sizes[i] == at) {
            char title[256];
            snprintf(title, sizeof title, "%s: %s on %d ranks, %s, modelled %.2f us", a->name, sz,
                     a->ngpus, weft_proto_name(a->proto), us);
            if (draw(svg_out, a, &s, p, np, title) != 0) {
                fprintf(stderr, "%s: error: cannot write: %s\n", svg_out, strerror(errno));
                free(p);
                weft_sim_free(&s);
                goto done;
            }
            drew = 1;
        }
        free(p);
        weft_sim_free(&s);
    }
    rc = WEFT_EXIT_OK;
done:
    free(ports);
    free(links);
    weft_topo_free(topo);
    weft_algo_free(a);
    weft_diag_free(d);
    weft_getopt_free(&g);
    return rc;
}
