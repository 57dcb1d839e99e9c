/* test_draw.c — checks pictures against what they show, counted independently of the drawing.
 *   test_draw [--gpus-per-node=G] FILE.xml PICTURE.svg [PICTURE.dot]: a schedule (weft show
 *     --format=svg|dot [--gpus-per-node G]). The SVG is parsed with libxml2: it must be SVG with
 *     one group per rank holding exactly that rank's steps, one arrow per message (a step that
 *     receives takes one), and as many steps marked critical as the verifier's critical path,
 *     joined by one polyline; it must read without hovering (check_readable); the DOT must have
 *     the same counts.
 *   test_draw --trace PICTURE.svg SEQ PATH TRACE...: one call of a trace (weft trace draw): a
 *     group per rank of call SEQ holding exactly that rank's step executions, an arrow per
 *     message whose send and receive are both recorded, PATH executions marked critical (the
 *     length `weft trace summarize` reports), joined by one polyline.
 * Prints the counts. */
#include "svg.h"
#include "trace_internal.h"
#include "trace_tools.h"
#include "weft_ir.h"

#include <libxml/parser.h>
#include <libxml/xpath.h>
#include <libxml/xpathInternals.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int failures;
#define EXPECT(cond, ...)                                                                          \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            fprintf(stderr, "test_draw: " __VA_ARGS__);                                            \
            fputc('\n', stderr);                                                                   \
            failures++;                                                                            \
        }                                                                                          \
    } while (0)

/* A step type receives (takes one message): the recv column of the semantics' table. */
static const int receives[] = {
#define WEFT_X_(id, n, rv, sd, red, wr, rs, rd) rv,
    WEFT_STEP_TYPES(WEFT_X_)
#undef WEFT_X_
};

static long count(xmlXPathContextPtr x, const char *expr) {
    xmlXPathObjectPtr o = xmlXPathEvalExpression((const xmlChar *)expr, x);
    long n = o && o->type == XPATH_NUMBER ? (long)o->floatval : -1;
    if (o == NULL || o->type != XPATH_NUMBER) fprintf(stderr, "test_draw: bad XPath %s\n", expr);
    xmlXPathFreeObject(o);
    return n;
}

static long occurrences(const char *text, const char *s) {
    long n = 0;
    for (const char *p = text; (p = strstr(p, s)) != NULL; p += strlen(s))
        n++;
    return n;
}

static void check_dot(const char *path, int nranks, long nsteps, long messages, long crit) {
    weft_diag *d = weft_diag_new();
    char *text = NULL;
    size_t len = 0;
    if (weft_read_file(path, &text, &len, d) != WEFT_OK) {
        weft_diag_print(d, stderr, WEFT_SEV_ERROR);
        failures++;
    } else {
        EXPECT(strncmp(text, "digraph ", 8) == 0 && len > 2 && strcmp(text + len - 2, "}\n") == 0,
               "%s: not one digraph", path);
        EXPECT(occurrences(text, "class=\"rank\"") == nranks, "%s: clusters per rank", path);
        EXPECT(occurrences(text, "class=\"step") == nsteps, "%s: step nodes", path);
        EXPECT(occurrences(text, "class=\"msg") == messages, "%s: message edges", path);
        EXPECT(occurrences(text, "class=\"step crit\"") == crit, "%s: critical steps", path);
    }
    free(text);
    weft_diag_free(d);
}

static xmlXPathContextPtr open_svg(const char *path, xmlDocPtr *doc) {
    *doc = xmlReadFile(path, NULL, XML_PARSE_NONET);
    EXPECT(*doc != NULL, "%s is not well-formed XML", path);
    if (*doc == NULL) return NULL;
    xmlNodePtr root = xmlDocGetRootElement(*doc);
    EXPECT(root && strcmp((const char *)root->name, "svg") == 0 && root->ns &&
               strcmp((const char *)root->ns->href, "http://www.w3.org/2000/svg") == 0,
           "the root is not an SVG element");
    xmlXPathContextPtr x = xmlXPathNewContext(*doc);
    xmlXPathRegisterNs(x, (const xmlChar *)"s", (const xmlChar *)"http://www.w3.org/2000/svg");
    EXPECT(count(x, "count(/s:svg[@viewBox and @width and @height]/s:title)") == 1,
           "no viewBox, size or title");
    return x;
}

static long polyline_points(xmlXPathContextPtr x) {
    xmlXPathObjectPtr o = xmlXPathEvalExpression(
        (const xmlChar *)"string(//s:polyline[@class='critical-path']/@points)", x);
    long n =
        o && o->stringval && *o->stringval ? 1 + occurrences((const char *)o->stringval, " ") : 0;
    xmlXPathFreeObject(o);
    return n;
}

static double num(xmlXPathContextPtr x, const char *expr) {
    xmlXPathObjectPtr o = xmlXPathEvalExpression((const xmlChar *)expr, x);
    double v = o && o->type == XPATH_NUMBER ? o->floatval : -1;
    xmlXPathFreeObject(o);
    return v;
}

/* What makes a picture read in a PNG, where nothing shows on hover: every text fits the
 * picture's width (by svg_text_width's estimate, the one the drawing sizes itself by), the
 * legend is there, each step box names its chunks where its step has any, the rows take fewer
 * than one per tb where tbs can share one, and with nodes, one frame per node. */
static void check_readable(xmlXPathContextPtr x, const weft_algo *a, int gpn) {
    double width = num(x, "number(/s:svg/@width)");
    xmlXPathObjectPtr o = xmlXPathEvalExpression((const xmlChar *)"//s:text", x);
    long texts = 0;
    for (int i = 0; o && o->nodesetval && i < o->nodesetval->nodeNr; i++) {
        xmlNodePtr n = o->nodesetval->nodeTab[i];
        xmlChar *tx = xmlNodeGetContent(n), *xs = xmlGetProp(n, (const xmlChar *)"x"),
                *fs = xmlGetProp(n, (const xmlChar *)"font-size"),
                *an = xmlGetProp(n, (const xmlChar *)"text-anchor");
        double w = svg_text_width(atof((const char *)fs), (const char *)tx);
        double x0 = atof((const char *)xs);
        double right = strcmp((const char *)an, "end") == 0      ? x0
                       : strcmp((const char *)an, "middle") == 0 ? x0 + w / 2
                                                                 : x0 + w;
        EXPECT(right <= width + 0.5, "text '%s' ends at %.0f, past the picture's width %.0f",
               (const char *)tx, right, width);
        texts++;
        xmlFree(tx), xmlFree(xs), xmlFree(fs), xmlFree(an);
    }
    xmlXPathFreeObject(o);
    EXPECT(texts > 0, "no text");
    EXPECT(count(x, "count(//s:g[@class='legend']/s:text)") >= 3, "no legend");
    long boxes = 0, rows = count(x, "count(//s:text[@class='row-label'])"), tbs = 0;
    for (int32_t r = 0; r < a->ngpus; r++) {
        tbs += a->gpus[r].ntbs;
        for (int32_t t = 0; t < a->gpus[r].ntbs; t++)
            for (int32_t i = 0; i < a->gpus[r].tbs[t].nsteps; i++)
                boxes += (weft_step_flags(a->gpus[r].tbs[t].steps[i].type) &
                          (WEFT_STEP_F_WRITE | WEFT_STEP_F_READS_SRC)) != 0;
    }
    long chunk_texts = count(x, "count(//s:g[starts-with(@class, 'step')]/s:text[@class='chunk'])");
    EXPECT(chunk_texts == boxes, "%ld step boxes name their chunks, not %ld", chunk_texts, boxes);
    EXPECT(rows >= a->ngpus && rows <= tbs, "%ld rows for %ld tbs", rows, tbs);
    if (gpn > 0 && gpn < a->ngpus)
        EXPECT(count(x, "count(//s:g[@class='node'])") == (a->ngpus + gpn - 1) / gpn,
               "%ld node frames for %d ranks of %d per node",
               count(x, "count(//s:g[@class='node'])"), a->ngpus, gpn);
    else
        EXPECT(count(x, "count(//s:g[@class='node'])") == 0, "node frames without nodes");
    printf("  readable: width %.0f holds its %ld texts; %ld rows for %ld tbs; %ld chunk labels\n",
           width, texts, rows, tbs, chunk_texts);
}

static int check_trace(int argc, char **argv) {
    if (argc < 6) {
        fprintf(stderr, "usage: test_draw --trace PICTURE.svg SEQ PATH TRACE...\n");
        return 2;
    }
    int64_t seq = strtoll(argv[3], NULL, 10);
    long path = strtol(argv[4], NULL, 10);
    weft_diag *d = weft_diag_new();
    weft_trace t;
    weft_trace_init(&t, 0);
    for (int i = 5; i < argc; i++)
        if (weft_trace_read_file(&t, argv[i], d) != WEFT_OK) {
            weft_diag_print(d, stderr, WEFT_SEV_ERROR);
            return 1;
        }
    xmlDocPtr doc;
    xmlXPathContextPtr x = open_svg(argv[2], &doc);
    if (x == NULL) return 1;
    long nranks = 0, nslices = 0, messages = 0;
    char q[256];
    for (size_t c = 0; c < t.ncalls; c++) {
        if (t.calls[c].seq != seq) continue;
        nranks++;
        long mine = 0;
        for (size_t i = 0; i < t.nslices; i++)
            if ((size_t)t.slices[i].call == c) mine++;
        nslices += mine;
        snprintf(q, sizeof q,
                 "count(/s:svg/s:g[@class='rank'][s:title='rank %d']//s:g[starts-with(@class, "
                 "'slice')][starts-with(s:title, 'rank %d tb ')])",
                 t.calls[c].rank, t.calls[c].rank);
        EXPECT(count(x, q) == mine, "rank %d's group holds %ld of its %ld step executions",
               t.calls[c].rank, count(x, q), mine);
    }
    /* a message is drawn when its send and its receive are both in the trace */
    for (size_t i = 0; i < t.nslices; i++) {
        const weft_trace_slice *r = &t.slices[i];
        if (t.calls[r->call].seq != seq || r->rmsg < 0) continue;
        for (size_t j = 0; j < t.nslices; j++) {
            const weft_trace_slice *s = &t.slices[j];
            if (t.calls[s->call].seq == seq && s->smsg == r->rmsg && s->chan == r->chan &&
                t.calls[s->call].rank == r->recv && s->send == t.calls[r->call].rank) {
                messages++;
                break;
            }
        }
    }
    EXPECT(count(x, "count(/s:svg/s:g[@class='rank'])") == nranks, "%ld rank groups, not %ld",
           count(x, "count(/s:svg/s:g[@class='rank'])"), nranks);
    long arrows = count(x, "count(//s:line[@class='msg' or @class='msg crit'][@marker-end])");
    EXPECT(arrows == messages, "%ld message arrows, not %ld", arrows, messages);
    long crit = count(x, "count(//s:g[@class='slice crit'])");
    EXPECT(crit == path, "%ld step executions marked critical, summarize's path has %ld", crit,
           path);
    EXPECT(polyline_points(x) == 2 * path, "the critical-path line has %ld points for %ld steps",
           polyline_points(x), path);
    printf("call %lld: %ld ranks, %ld step executions, %ld messages, critical path %ld\n",
           (long long)seq, nranks, nslices, messages, crit);
    xmlXPathFreeContext(x);
    xmlFreeDoc(doc);
    weft_trace_free(&t);
    weft_diag_free(d);
    return failures ? 1 : 0;
}

int main(int argc, char **argv) {
    if (argc > 1 && strcmp(argv[1], "--trace") == 0) return check_trace(argc, argv);
    int gpn = 0;
    if (argc > 2 && strncmp(argv[1], "--gpus-per-node=", 16) == 0) {
        gpn = atoi(argv[1] + 16);
        argv++, argc--;
    }
    if (argc != 3 && argc != 4) {
        fprintf(stderr,
                "usage: test_draw [--gpus-per-node=G] FILE.xml PICTURE.svg [PICTURE.dot]\n");
        return 2;
    }
    weft_diag *d = weft_diag_new();
    weft_algo *a = NULL;
    weft_verify_summary sum;
    if (weft_ir_read_file(argv[1], &a, d) != WEFT_OK ||
        weft_ir_verify(a, NULL, d, &sum) != WEFT_OK) {
        weft_diag_print(d, stderr, WEFT_SEV_ERROR);
        return 1;
    }
    long nsteps = 0, messages = 0;
    for (int32_t r = 0; r < a->ngpus; r++)
        for (int32_t t = 0; t < a->gpus[r].ntbs; t++)
            for (int32_t i = 0; i < a->gpus[r].tbs[t].nsteps; i++, nsteps++)
                messages += receives[a->gpus[r].tbs[t].steps[i].type];

    xmlDocPtr doc;
    xmlXPathContextPtr x = open_svg(argv[2], &doc);
    if (x == NULL) return 1;
    char q[256];
    EXPECT(count(x, "count(/s:svg/s:g[@class='rank'])") == a->ngpus, "%ld rank groups, not %d",
           count(x, "count(/s:svg/s:g[@class='rank'])"), a->ngpus);
    for (int32_t r = 0; r < a->ngpus; r++) {
        long want = 0;
        for (int32_t t = 0; t < a->gpus[r].ntbs; t++)
            want += a->gpus[r].tbs[t].nsteps;
        snprintf(q, sizeof q,
                 "count(/s:svg/s:g[@class='rank'][%d]//s:g[starts-with(@class, 'step')]"
                 "[starts-with(s:title, 'rank %d tb ')])",
                 r + 1, r);
        EXPECT(count(x, q) == want, "rank %d's group holds %ld of its %ld steps", r, count(x, q),
               want);
    }
    long steps = count(x, "count(//s:g[@class='step' or @class='step crit'])");
    EXPECT(steps == nsteps, "%ld step boxes, not %ld", steps, nsteps);
    long arrows = count(x, "count(//s:line[@class='msg' or @class='msg crit'][@marker-end])");
    EXPECT(arrows == messages, "%ld message arrows, not %ld", arrows, messages);
    long crit = count(x, "count(//s:g[@class='step crit'])");
    EXPECT(crit == sum.critical_path, "%ld steps marked critical, the verifier's path has %lld",
           crit, (long long)sum.critical_path);
    EXPECT(count(x, "count(//s:polyline[@class='critical-path'])") == 1, "no critical-path line");
    /* the polyline joins the critical steps: one point each */
    EXPECT(polyline_points(x) == crit, "the critical-path line has %ld points for %ld steps",
           polyline_points(x), crit);
    printf("%s: %d ranks, %ld steps, %ld messages, critical path %ld\n", argv[1], a->ngpus, nsteps,
           messages, crit);
    check_readable(x, a, gpn);
    if (argc == 4) check_dot(argv[3], a->ngpus, nsteps, messages, crit);

    xmlXPathFreeContext(x);
    xmlFreeDoc(doc);
    weft_verify_summary_free(&sum);
    weft_algo_free(a);
    weft_diag_free(d);
    return failures ? 1 : 0;
}
