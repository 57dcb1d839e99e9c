/* test_draw.c — checks a picture of a schedule against the schedule, counted independently of
 * the drawing: `test_draw FILE.xml PICTURE.svg [PICTURE.dot]`. The SVG is parsed with libxml2:
 * it must be SVG with one group per rank holding exactly that rank's steps, one arrow per
 * message (a step that receives takes one), and as many steps marked critical as the verifier's
 * critical path, joined by one polyline; the DOT must have the same counts. Prints the counts. */
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

int main(int argc, char **argv) {
    if (argc != 3 && argc != 4) {
        fprintf(stderr, "usage: test_draw FILE.xml PICTURE.svg [PICTURE.dot]\n");
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

    xmlDocPtr doc = xmlReadFile(argv[2], NULL, XML_PARSE_NONET);
    EXPECT(doc != NULL, "%s is not well-formed XML", argv[2]);
    if (doc == NULL) return 1;
    xmlNodePtr root = xmlDocGetRootElement(doc);
    EXPECT(root && strcmp((const char *)root->name, "svg") == 0 && root->ns &&
               strcmp((const char *)root->ns->href, "http://www.w3.org/2000/svg") == 0,
           "the root is not an SVG element");
    xmlXPathContextPtr x = xmlXPathNewContext(doc);
    xmlXPathRegisterNs(x, (const xmlChar *)"s", (const xmlChar *)"http://www.w3.org/2000/svg");
    char q[256];
    EXPECT(count(x, "count(/s:svg[@viewBox and @width and @height]/s:title)") == 1,
           "no viewBox, size or title");
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
    xmlXPathObjectPtr o = xmlXPathEvalExpression(
        (const xmlChar *)"string(//s:polyline[@class='critical-path']/@points)", x);
    long points =
        o && o->stringval && *o->stringval ? 1 + occurrences((const char *)o->stringval, " ") : 0;
    xmlXPathFreeObject(o);
    EXPECT(points == crit, "the critical-path line has %ld points for %ld steps", points, crit);
    printf("%s: %d ranks, %ld steps, %ld messages, critical path %ld\n", argv[1], a->ngpus, nsteps,
           messages, crit);
    if (argc == 4) check_dot(argv[3], a->ngpus, nsteps, messages, crit);

    xmlXPathFreeContext(x);
    xmlFreeDoc(doc);
    weft_verify_summary_free(&sum);
    weft_algo_free(a);
    weft_diag_free(d);
    return failures ? 1 : 0;
}
