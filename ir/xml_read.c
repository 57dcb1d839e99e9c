/* xml_read.c — the MSCCL XML reader on libxml2: builds a weft_algo, reporting file:line errors. */
#include "weft_ir.h"

#include <libxml/parser.h>
#include <libxml/SAX2.h>
#include <libxml/parserInternals.h>
#include <libxml/tree.h>
#include <libxml/xmlerror.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* Past this many errors the rest of the file is unlikely to say anything new. */
#define MAX_ERRORS 20

typedef struct reader {
    const char *file;
    weft_diag *d;
    int nerr;
    int stopped;    /* the DOCTYPE hook halted libxml2 */
    int doctype_at; /* its line */
} reader;

static void report(reader *r, weft_severity sev, long line, const char *fmt, ...) WEFT_PRINTF(4, 5);
static void report(reader *r, weft_severity sev, long line, const char *fmt, ...) {
    if (sev == WEFT_SEV_ERROR) {
        r->nerr++;
        if (r->nerr > MAX_ERRORS) return;
    }
    va_list ap;
    va_start(ap, fmt);
    weft_diag_vadd(r->d, sev, r->file, line > 0 && line < 0x7fffffff ? (int)line : 0, 0, fmt, ap);
    va_end(ap);
    if (sev == WEFT_SEV_ERROR && r->nerr == MAX_ERRORS)
        weft_diag_add(r->d, WEFT_SEV_NOTE, r->file, 0, 0, "too many errors, stopping here");
}

static int too_many(const reader *r) {
    return r->nerr >= MAX_ERRORS;
}

/* Elements carry their line in psvi (set by on_start_element below): libxml2's own node->line
 * saturates at 65535 and its workaround for larger lines is off by one for our elements. */
static long line_of(const xmlNode *n) {
    if (n->type == XML_ELEMENT_NODE && n->psvi) return (long)(intptr_t)n->psvi;
    return xmlGetLineNo(n);
}

/* ---- libxml2 plumbing --------------------------------------------------------------------- */

/* libxml2's messages would otherwise go to stderr; they become diagnostics of this file. */
static void xml_error(reader *r, xmlErrorPtr e) {
    if (r == NULL || e == NULL) return;
    char msg[256];
    snprintf(msg, sizeof msg, "%s", e->message ? e->message : "unknown error");
    size_t n = strlen(msg);
    while (n > 0 && (msg[n - 1] == '\n' || msg[n - 1] == ' '))
        msg[--n] = '\0';
    report(r, e->level == XML_ERR_WARNING ? WEFT_SEV_WARNING : WEFT_SEV_ERROR, e->line,
           "malformed XML: %s", msg);
}

/* Errors of the parser itself arrive with the parser context (SAX handlers need it as their
 * user data), those raised elsewhere (encoding, I/O) with the reader. */
static void on_parser_error(void *ctx, xmlErrorPtr e) {
    xmlParserCtxtPtr ctxt = ctx;
    xml_error(ctxt ? ctxt->_private : NULL, e);
}
static void on_global_error(void *ctx, xmlErrorPtr e) {
    xml_error(ctx, e);
}

/* MSCCL files never carry a DTD; refusing it up front rules out entity expansion games. */
static void on_internal_subset(void *ctx, const xmlChar *name, const xmlChar *ext,
                               const xmlChar *sys) {
    (void)name, (void)ext, (void)sys;
    xmlParserCtxtPtr ctxt = ctx;
    reader *r = ctxt->_private;
    r->stopped = 1;
    r->doctype_at = xmlSAX2GetLineNumber(ctxt);
    xmlStopParser(ctxt);
}

static void on_start_element(void *ctx, const xmlChar *name, const xmlChar *prefix,
                             const xmlChar *uri, int nns, const xmlChar **ns, int nattrs,
                             int ndefaulted, const xmlChar **attrs) {
    xmlParserCtxtPtr ctxt = ctx;
    xmlSAX2StartElementNs(ctx, name, prefix, uri, nns, ns, nattrs, ndefaulted, attrs);
    if (ctxt->node && ctxt->node->type == XML_ELEMENT_NODE && ctxt->input && ctxt->input->line > 0)
        ctxt->node->psvi = (void *)(intptr_t)ctxt->input->line;
}

static pthread_once_t xml_once = PTHREAD_ONCE_INIT;
static void xml_init(void) {
    xmlInitParser();
}

/* libxml2 checks attributes for uniqueness pairwise, so one tag with 10^5 attributes costs it
 * minutes. No MSCCL element has more than 11: tags with more than this many are refused by a
 * linear pre-scan before libxml2 sees them. */
#define MAX_ATTRS_PER_TAG 64

static int starts(const char *p, const char *end, const char *s) {
    size_t n = strlen(s);
    return (size_t)(end - p) >= n && memcmp(p, s, n) == 0;
}

/* Returns the line of the first start tag with too many attributes, 0 when there is none.
 * Comments, CDATA, processing instructions and declarations are skipped; anything malformed is
 * left for libxml2 to report. */
static long crowded_tag(const char *p, size_t len) {
    const char *end = p + len;
    long line = 1;
    while (p < end) {
        if (*p == '\n') line++;
        if (*p != '<') {
            p++;
            continue;
        }
        const char *close = NULL;
        if (starts(p, end, "<!--"))
            close = "-->";
        else if (starts(p, end, "<![CDATA["))
            close = "]]>";
        else if (starts(p, end, "<?"))
            close = "?>";
        else if (starts(p, end, "<!"))
            close = ">";
        if (close) {
            for (p++; p < end && !starts(p, end, close); p++)
                if (*p == '\n') line++;
            if (p == end) break;
            p += strlen(close);
            continue;
        }
        long at = line;
        int eq = 0;
        char quote = 0;
        for (p++; p < end; p++) {
            if (*p == '\n') line++;
            if (quote) {
                if (*p == quote) quote = 0;
            } else if (*p == '"' || *p == '\'') {
                quote = *p;
            } else if (*p == '=') {
                if (++eq > MAX_ATTRS_PER_TAG) return at;
            } else if (*p == '>') {
                p++;
                break;
            }
        }
    }
    return 0;
}

/* ---- attributes --------------------------------------------------------------------------- */

enum { MAX_ATTRS = 12 };

typedef struct attrs {
    const char *elem; /* "step" */
    const char *const *names;
    int n;
    char *val[MAX_ATTRS];
    long line;
} attrs;

static const char *const algo_attrs[] = {"name",     "proto",    "nchannels", "nchunksperloop",
                                         "ngpus",    "coll",     "inplace",   "outofplace",
                                         "minBytes", "maxBytes", "root"};
enum {
    A_NAME,
    A_PROTO,
    A_NCHANNELS,
    A_NCHUNKS,
    A_NGPUS,
    A_COLL,
    A_INPLACE,
    A_OUTOFPLACE,
    A_MINBYTES,
    A_MAXBYTES,
    A_ROOT,
    A_COUNT
};
static const char *const gpu_attrs[] = {"id", "i_chunks", "o_chunks", "s_chunks"};
enum { G_ID, G_I, G_O, G_S, G_COUNT };
static const char *const tb_attrs[] = {"id", "send", "recv", "chan"};
enum { T_ID, T_SEND, T_RECV, T_CHAN, T_COUNT };
static const char *const step_attrs[] = {"s",      "type", "srcbuf", "srcoff", "dstbuf",
                                         "dstoff", "cnt",  "depid",  "deps",   "hasdep"};
enum {
    S_S,
    S_TYPE,
    S_SRCBUF,
    S_SRCOFF,
    S_DSTBUF,
    S_DSTOFF,
    S_CNT,
    S_DEPID,
    S_DEPS,
    S_HASDEP,
    S_COUNT
};

/* A value quoted for a message: at most 40 bytes, so garbage cannot flood the output. */
static const char *shown(const char *v, char *buf, size_t len) {
    size_t n = strlen(v);
    if (n <= 40) return v;
    snprintf(buf, len, "%.37s...", v);
    return buf;
}

static void attrs_free(attrs *at) {
    for (int i = 0; i < at->n; i++) {
        if (at->val[i]) xmlFree(at->val[i]);
        at->val[i] = NULL;
    }
}

/* Collects the known attributes of an element; unknown ones are warned about and ignored (the
 * MSCCL runtimes ignore them too). */
static weft_result attrs_load(reader *r, attrs *at, const xmlNode *node, const char *elem,
                              const char *const *names, int n) {
    memset(at, 0, sizeof *at);
    at->elem = elem;
    at->names = names;
    at->n = n;
    at->line = line_of(node);
    for (const xmlAttr *p = node->properties; p; p = p->next) {
        int k = -1;
        if (p->ns == NULL)
            for (int i = 0; i < n; i++)
                if (strcmp((const char *)p->name, names[i]) == 0) k = i;
        if (k < 0) {
            char b[48];
            report(r, WEFT_SEV_WARNING, at->line, "<%s>: unknown attribute '%s%s%s' ignored", elem,
                   p->ns && p->ns->prefix ? (const char *)p->ns->prefix : "",
                   p->ns && p->ns->prefix ? ":" : "", shown((const char *)p->name, b, sizeof b));
            continue;
        }
        char *v = (char *)xmlNodeListGetString(node->doc, p->children, 1);
        if (v == NULL) v = (char *)xmlStrdup((const xmlChar *)"");
        if (v == NULL) {
            attrs_free(at);
            return WEFT_ERR_NOMEM;
        }
        at->val[k] = v;
    }
    return WEFT_OK;
}

static int attr_present(const attrs *at, int i) {
    return at->val[i] != NULL;
}

/* Parses -?[0-9]+ with no spaces; 0 ok, 1 not an integer, 2 beyond 64 bits. */
static int parse_int(const char *s, int64_t *out) {
    const char *p = s;
    int neg = 0;
    if (*p == '-') neg = 1, p++;
    if (*p < '0' || *p > '9') return 1;
    uint64_t v = 0;
    int big = 0;
    for (; *p >= '0' && *p <= '9'; p++) {
        if (v > (UINT64_MAX - 9) / 10)
            big = 1;
        else
            v = v * 10 + (uint64_t)(*p - '0');
    }
    if (*p != '\0') return 1;
    if (big || v > (uint64_t)INT64_MAX) return 2;
    *out = neg ? -(int64_t)v : (int64_t)v;
    return 0;
}

static int missing(reader *r, const attrs *at, int i) {
    if (attr_present(at, i)) return 0;
    report(r, WEFT_SEV_ERROR, at->line, "<%s> is missing attribute '%s'", at->elem, at->names[i]);
    return 1;
}

/* Reads integer attribute i into *out; reports and returns -1 when missing, malformed or
 * outside [lo, hi]. */
static int get_int(reader *r, const attrs *at, int i, int64_t lo, int64_t hi, int64_t *out) {
    if (missing(r, at, i)) return -1;
    char b[48];
    int64_t v = 0;
    int rc = parse_int(at->val[i], &v);
    if (rc == 1) {
        report(r, WEFT_SEV_ERROR, at->line, "<%s> attribute '%s' is not an integer: \"%s\"",
               at->elem, at->names[i], shown(at->val[i], b, sizeof b));
        return -1;
    }
    if (rc == 2 || v < lo || v > hi) {
        report(r, WEFT_SEV_ERROR, at->line,
               "<%s> attribute '%s' is out of range: \"%s\" (allowed: %lld..%lld)", at->elem,
               at->names[i], shown(at->val[i], b, sizeof b), (long long)lo, (long long)hi);
        return -1;
    }
    *out = v;
    return 0;
}

static int get_i32(reader *r, const attrs *at, int i, int32_t *out) {
    int64_t v;
    if (get_int(r, at, i, INT32_MIN, INT32_MAX, &v) != 0) return -1;
    *out = (int32_t)v;
    return 0;
}

static int get_bool(reader *r, const attrs *at, int i, uint8_t *out) {
    int64_t v;
    if (get_int(r, at, i, 0, 1, &v) != 0) return -1;
    *out = (uint8_t)v;
    return 0;
}

static int get_buf(reader *r, const attrs *at, int i, weft_buf *out) {
    static const char codes[] = {
#define WEFT_X_(id, c, n) c,
        WEFT_BUFS(WEFT_X_)
#undef WEFT_X_
    };
    if (missing(r, at, i)) return -1;
    const char *v = at->val[i];
    for (int b = 0; b < WEFT_BUF_COUNT; b++)
        if (v[0] == codes[b] && v[1] == '\0') {
            *out = (weft_buf)b;
            return 0;
        }
    char b[48];
    report(r, WEFT_SEV_ERROR, at->line,
           "<%s> attribute '%s': unknown buffer \"%s\" (expected i, o or s)", at->elem,
           at->names[i], shown(v, b, sizeof b));
    return -1;
}

static int get_step_type(reader *r, const attrs *at, int i, weft_step_type *out) {
    static const char *const names[] = {
#define WEFT_X_(id, n, rv, sd, red, wr, rs) n,
        WEFT_STEP_TYPES(WEFT_X_)
#undef WEFT_X_
    };
    if (missing(r, at, i)) return -1;
    for (int t = 0; t < WEFT_STEP_COUNT; t++)
        if (strcmp(at->val[i], names[t]) == 0) {
            *out = (weft_step_type)t;
            return 0;
        }
    char b[48];
    report(r, WEFT_SEV_ERROR, at->line,
           "<%s> attribute '%s': unknown step type \"%s\" (expected s, r, rcs, rrs, rrc, rrcs, "
           "cpy, re or nop)",
           at->elem, at->names[i], shown(at->val[i], b, sizeof b));
    return -1;
}

/* ---- elements ----------------------------------------------------------------------------- */

static int is_elem(const xmlNode *n, const char *name) {
    return n->type == XML_ELEMENT_NODE && n->ns == NULL && strcmp((const char *)n->name, name) == 0;
}

static int blank(const xmlChar *s) {
    for (; s && *s; s++)
        if (*s != ' ' && *s != '\t' && *s != '\n' && *s != '\r') return 0;
    return 1;
}

/* Children other than elements: blank text, comments and processing instructions are fine;
 * anything else is reported. Returns 1 when n is an element to look at. */
static int child_element(reader *r, const xmlNode *n, const char *parent) {
    switch (n->type) {
    case XML_ELEMENT_NODE: return 1;
    case XML_TEXT_NODE:
    case XML_CDATA_SECTION_NODE:
        if (!blank(n->content))
            report(r, WEFT_SEV_ERROR, line_of(n), "unexpected text inside <%s>", parent);
        return 0;
    case XML_COMMENT_NODE:
    case XML_PI_NODE: return 0;
    default:
        report(r, WEFT_SEV_ERROR, line_of(n), "unexpected content inside <%s>", parent);
        return 0;
    }
}

/* An element's name as written: <m:gpu>, or <gpu xmlns="urn:x"> for a default namespace. */
static void elem_name(char *out, size_t len, const xmlNode *n) {
    char b[48], h[48];
    const char *name = shown((const char *)n->name, b, sizeof b);
    if (n->ns && n->ns->prefix)
        snprintf(out, len, "<%s:%s>", shown((const char *)n->ns->prefix, h, sizeof h), name);
    else if (n->ns && n->ns->href)
        snprintf(out, len, "<%s xmlns=\"%s\">", name,
                 shown((const char *)n->ns->href, h, sizeof h));
    else
        snprintf(out, len, "<%s>", name);
}

static void unexpected_element(reader *r, const xmlNode *n, const char *parent,
                               const char *expected) {
    char e[128];
    elem_name(e, sizeof e, n);
    if (expected)
        report(r, WEFT_SEV_ERROR, line_of(n), "unexpected element %s inside <%s> (expected <%s>)",
               e, parent, expected);
    else
        report(r, WEFT_SEV_ERROR, line_of(n), "unexpected element %s inside <%s>", e, parent);
}

typedef struct step_in {
    int32_t s;
    weft_step st;
} step_in;

static int cmp_step_in(const void *x, const void *y) {
    const step_in *a = x, *b = y;
    if (a->s != b->s) return a->s < b->s ? -1 : 1;
    return a->st.line < b->st.line ? -1 : a->st.line > b->st.line;
}

static int cmp_tb(const void *x, const void *y) {
    const weft_tb *a = x, *b = y;
    if (a->id != b->id) return a->id < b->id ? -1 : 1;
    return a->line < b->line ? -1 : a->line > b->line;
}

/* <step s=".." type=".." .../>: returns 0 and fills *out when the element is well-formed. */
static weft_result read_step(reader *r, const xmlNode *n, step_in *out, int *ok) {
    weft_result res = WEFT_OK;
    attrs at;
    WEFT_CHECK(attrs_load(r, &at, n, "step", step_attrs, S_COUNT));
    memset(out, 0, sizeof *out);
    int bad = 0;
    bad |= get_i32(r, &at, S_S, &out->s);
    bad |= get_step_type(r, &at, S_TYPE, &out->st.type);
    bad |= get_buf(r, &at, S_SRCBUF, &out->st.srcbuf);
    bad |= get_i32(r, &at, S_SRCOFF, &out->st.srcoff);
    bad |= get_buf(r, &at, S_DSTBUF, &out->st.dstbuf);
    bad |= get_i32(r, &at, S_DSTOFF, &out->st.dstoff);
    bad |= get_i32(r, &at, S_CNT, &out->st.cnt);
    bad |= get_i32(r, &at, S_DEPID, &out->st.depid);
    bad |= get_i32(r, &at, S_DEPS, &out->st.deps);
    bad |= get_bool(r, &at, S_HASDEP, &out->st.hasdep);
    if (!bad && out->s < 0) {
        report(r, WEFT_SEV_ERROR, at.line, "<step> attribute 's' is negative: \"%d\"", out->s);
        bad = 1;
    }
    out->st.line = (int32_t)(at.line < INT32_MAX ? at.line : 0);
    for (const xmlNode *c = n->children; c; c = c->next)
        if (child_element(r, c, "step")) unexpected_element(r, c, "step", NULL);
    *ok = !bad;
fail:
    attrs_free(&at);
    return res;
}

/* <tb id send recv chan> with its steps, sorted by `s`, which must be 0..n-1. The tb is
 * appended to g (its id taken from the file) when well-formed. */
static weft_result read_tb(reader *r, const xmlNode *n, weft_gpu *g, int32_t rank) {
    weft_result res = WEFT_OK;
    step_in *steps = NULL;
    size_t nsteps = 0, cap = 0;
    attrs at;
    WEFT_CHECK(attrs_load(r, &at, n, "tb", tb_attrs, T_COUNT));
    int32_t id = -1, send = 0, recv = 0, chan = 0;
    int bad = 0;
    bad |= get_i32(r, &at, T_ID, &id);
    bad |= get_i32(r, &at, T_SEND, &send);
    bad |= get_i32(r, &at, T_RECV, &recv);
    bad |= get_i32(r, &at, T_CHAN, &chan);
    if (id < 0 && !bad) {
        report(r, WEFT_SEV_ERROR, at.line, "<tb> attribute 'id' is negative: \"%d\"", id);
        bad = 1;
    }
    for (const xmlNode *c = n->children; c && !too_many(r); c = c->next) {
        if (!child_element(r, c, "tb")) continue;
        if (!is_elem(c, "step")) {
            unexpected_element(r, c, "tb", "step");
            continue;
        }
        if (weft_grow((void **)&steps, &cap, nsteps, sizeof *steps) != 0) WEFT_FAIL(WEFT_ERR_NOMEM);
        int ok = 0;
        WEFT_CHECK(read_step(r, c, &steps[nsteps], &ok));
        if (ok)
            nsteps++;
        else
            bad = 1;
    }
    if (bad) goto fail;
    /* Steps may come in any order (the MSCCL runtimes index them by `s`). */
    if (nsteps > 1) qsort(steps, nsteps, sizeof *steps, cmp_step_in);
    for (size_t i = 1; i < nsteps; i++)
        if (steps[i].s == steps[i - 1].s) {
            report(r, WEFT_SEV_ERROR, steps[i].st.line,
                   "rank %d tb %d: duplicate <step s=\"%d\"> (first on line %d)", rank, id,
                   steps[i].s, steps[i - 1].st.line);
            bad = 1;
        }
    if (bad) goto fail;
    for (size_t i = 0; i < nsteps; i++)
        if (steps[i].s != (int32_t)i) {
            report(r, WEFT_SEV_ERROR, at.line,
                   "rank %d tb %d: no <step s=\"%zu\"> (s must run 0..%zu without gaps)", rank, id,
                   i, nsteps - 1);
            goto fail;
        }
    weft_tb *tb = weft_gpu_add_tb(g, send, recv, chan);
    WEFT_CHECK_ALLOC(tb);
    tb->id = id;
    tb->line = (int32_t)(at.line < INT32_MAX ? at.line : 0);
    for (size_t i = 0; i < nsteps; i++)
        if (weft_tb_add_step(tb, &steps[i].st) < 0) WEFT_FAIL(WEFT_ERR_NOMEM);
fail:
    free(steps);
    attrs_free(&at);
    return res;
}

/* <gpu id i_chunks o_chunks s_chunks> with its tbs, sorted by id, which must be 0..n-1. The
 * result goes to *g (freshly zeroed); *id is -1 when the id could not be read. */
static weft_result read_gpu(reader *r, const xmlNode *n, weft_gpu *g, int32_t *id, int *ok) {
    weft_result res = WEFT_OK;
    attrs at;
    memset(g, 0, sizeof *g);
    *ok = 0;
    *id = -1;
    WEFT_CHECK(attrs_load(r, &at, n, "gpu", gpu_attrs, G_COUNT));
    int bad = 0;
    int64_t v;
    if (get_int(r, &at, G_ID, 0, INT32_MAX, &v) == 0)
        *id = (int32_t)v;
    else
        bad = 1;
    bad |= get_i32(r, &at, G_I, &g->i_chunks);
    bad |= get_i32(r, &at, G_O, &g->o_chunks);
    bad |= get_i32(r, &at, G_S, &g->s_chunks);
    g->line = (int32_t)(at.line < INT32_MAX ? at.line : 0);
    int before = r->nerr;
    for (const xmlNode *c = n->children; c && !too_many(r); c = c->next) {
        if (!child_element(r, c, "gpu")) continue;
        if (!is_elem(c, "tb")) {
            unexpected_element(r, c, "gpu", "tb");
            continue;
        }
        WEFT_CHECK(read_tb(r, c, g, *id));
    }
    if (r->nerr != before) bad = 1;
    if (bad) goto fail;
    /* tbs may come in any order; their ids must be exactly 0..n-1. */
    if (g->ntbs > 1) qsort(g->tbs, (size_t)g->ntbs, sizeof *g->tbs, cmp_tb);
    for (int32_t t = 1; t < g->ntbs; t++)
        if (g->tbs[t].id == g->tbs[t - 1].id) {
            report(r, WEFT_SEV_ERROR, g->tbs[t].line,
                   "rank %d: duplicate <tb id=\"%d\"> (first on line %d)", *id, g->tbs[t].id,
                   g->tbs[t - 1].line);
            bad = 1;
        }
    if (bad) goto fail;
    for (int32_t t = 0; t < g->ntbs; t++)
        if (g->tbs[t].id != t) {
            report(r, WEFT_SEV_ERROR, g->line,
                   "rank %d: no <tb id=\"%d\"> (tb ids must run 0..%d without gaps)", *id, t,
                   g->ntbs - 1);
            goto fail;
        }
    g->id = *id;
    *ok = 1;
fail:
    attrs_free(&at);
    return res;
}

static void gpu_clear(weft_gpu *g) {
    for (int32_t t = 0; t < g->ntbs; t++)
        free(g->tbs[t].steps);
    free(g->tbs);
    memset(g, 0, sizeof *g);
}

static int get_enum(reader *r, const attrs *at, int i, int (*lookup)(const char *),
                    const char *what, const char *expected) {
    if (missing(r, at, i)) return -1;
    int v = lookup(at->val[i]);
    if (v >= 0) return v;
    char b[48];
    report(r, WEFT_SEV_ERROR, at->line, "<%s> attribute '%s': unknown %s \"%s\" (expected %s)",
           at->elem, at->names[i], what, shown(at->val[i], b, sizeof b), expected);
    return -1;
}

static weft_result read_algo(reader *r, const xmlNode *root, weft_algo **out) {
    weft_result res = WEFT_OK;
    weft_algo *a = NULL;
    weft_gpu tmp = {0};
    attrs at;
    WEFT_CHECK(attrs_load(r, &at, root, "algo", algo_attrs, A_COUNT));
    int bad = 0;
    int64_t v = 0;
    int32_t ngpus = -1, nchannels = 0, nchunks = 0, root_rank = 0;
    if (get_int(r, &at, A_NGPUS, 1, WEFT_IR_MAX_RANKS, &v) == 0)
        ngpus = (int32_t)v;
    else
        bad = 1;
    if (missing(r, &at, A_NAME)) bad = 1;
    int proto = get_enum(r, &at, A_PROTO, weft_proto_from_name, "protocol", "Simple, LL or LL128");
    int coll = get_enum(r, &at, A_COLL, weft_coll_from_name, "collective",
                        "allreduce, allgather, reducescatter, alltoall, broadcast, reduce, "
                        "gather, scatter, alltoallv, send, recv or custom");
    bad |= proto < 0 || coll < 0;
    bad |= get_i32(r, &at, A_NCHANNELS, &nchannels);
    bad |= get_i32(r, &at, A_NCHUNKS, &nchunks);
    uint8_t inplace = 0, outofplace = 0;
    int64_t minb = 0, maxb = 0;
    bad |= get_bool(r, &at, A_INPLACE, &inplace);
    int legacy = !attr_present(&at, A_OUTOFPLACE) && !attr_present(&at, A_MINBYTES) &&
                 !attr_present(&at, A_MAXBYTES);
    if (legacy) {
        outofplace = !inplace;
    } else {
        bad |= get_bool(r, &at, A_OUTOFPLACE, &outofplace);
        bad |= get_int(r, &at, A_MINBYTES, 0, INT64_MAX, &minb);
        bad |= get_int(r, &at, A_MAXBYTES, 0, INT64_MAX, &maxb);
    }
    if (attr_present(&at, A_ROOT)) {
        bad |= get_i32(r, &at, A_ROOT, &root_rank);
        if (coll >= 0 && !weft_coll_rooted((weft_coll)coll))
            report(r, WEFT_SEV_WARNING, at.line, "<algo> attribute 'root' is ignored for %s",
                   weft_coll_name((weft_coll)coll));
    }
    if (ngpus > 0) {
        a = weft_algo_new(at.val[A_NAME] ? at.val[A_NAME] : "", coll >= 0 ? (weft_coll)coll : 0,
                          ngpus, nchunks);
        WEFT_CHECK_ALLOC(a);
        a->file = r->file ? weft_strdup(r->file) : NULL;
        if (r->file) WEFT_CHECK_ALLOC(a->file);
        a->proto = proto >= 0 ? (weft_proto)proto : 0;
        a->nchannels = nchannels;
        a->inplace = inplace;
        a->outofplace = outofplace;
        a->min_bytes = minb;
        a->max_bytes = maxb;
        a->root = weft_coll_rooted(a->coll) ? root_rank : 0;
        a->legacy = (uint8_t)legacy;
        a->line = (int32_t)(at.line < INT32_MAX ? at.line : 0);
        for (int32_t g = 0; g < ngpus; g++)
            a->gpus[g].id = -1; /* not seen yet */
    }
    for (const xmlNode *c = root->children; c && !too_many(r); c = c->next) {
        if (!child_element(r, c, "algo")) continue;
        if (!is_elem(c, "gpu")) {
            unexpected_element(r, c, "algo", "gpu");
            continue;
        }
        int32_t id = -1;
        int ok = 0;
        WEFT_CHECK(read_gpu(r, c, &tmp, &id, &ok));
        if (a && id >= ngpus) {
            report(r, WEFT_SEV_ERROR, line_of(c),
                   "<gpu> attribute 'id' is out of range: \"%d\" (ngpus is %d)", id, ngpus);
        } else if (a && id >= 0 && a->gpus[id].id >= 0) {
            report(r, WEFT_SEV_ERROR, line_of(c), "duplicate <gpu id=\"%d\"> (first on line %d)",
                   id, a->gpus[id].line);
        } else if (a && ok) {
            a->gpus[id] = tmp;
            memset(&tmp, 0, sizeof tmp);
            continue;
        } else if (a && id >= 0) {
            a->gpus[id].id = id; /* seen, though broken: not "missing" as well */
            a->gpus[id].line = tmp.line;
        }
        gpu_clear(&tmp);
    }
    if (a && !too_many(r))
        for (int32_t g = 0; g < ngpus; g++)
            if (a->gpus[g].id < 0) {
                report(r, WEFT_SEV_ERROR, at.line, "no <gpu id=\"%d\"> (ngpus is %d)", g, ngpus);
                break;
            }
    if (bad || r->nerr) goto fail;
    if (legacy)
        report(r, WEFT_SEV_INFO, at.line,
               "legacy MSCCL format (no outofplace, minBytes, maxBytes): assuming "
               "outofplace=\"%d\", minBytes=\"0\", maxBytes=\"0\" (unbounded)",
               outofplace);
    *out = a;
    a = NULL;
fail:
    gpu_clear(&tmp);
    weft_algo_free(a);
    attrs_free(&at);
    if (res == WEFT_OK && *out == NULL) res = WEFT_ERR_INPUT;
    return res;
}

weft_result weft_ir_read_memory(const char *data, size_t len, const char *name, weft_algo **out,
                                weft_diag *d) {
    weft_result res = WEFT_OK;
    reader r = {name ? name : "<memory>", d, 0, 0, 0};
    xmlParserCtxtPtr ctxt = NULL;
    xmlDocPtr doc = NULL;
    weft_algo *a = NULL;
    *out = NULL;
    if (len > (size_t)WEFT_IR_MAX_FILE_BYTES) {
        report(&r, WEFT_SEV_ERROR, 0, "file too large (%zu bytes; the limit is %d)", len,
               WEFT_IR_MAX_FILE_BYTES);
        WEFT_FAIL(WEFT_ERR_INPUT);
    }
    long crowded = crowded_tag(data ? data : "", data ? len : 0);
    if (crowded) {
        report(&r, WEFT_SEV_ERROR, crowded,
               "an element with more than %d attributes (MSCCL elements have at most 11)",
               MAX_ATTRS_PER_TAG);
        WEFT_FAIL(WEFT_ERR_INPUT);
    }
    pthread_once(&xml_once, xml_init);
    ctxt = xmlNewParserCtxt();
    WEFT_CHECK_ALLOC(ctxt);
    ctxt->_private = &r;
    ctxt->sax->serror = on_parser_error;
    ctxt->sax->internalSubset = on_internal_subset;
    ctxt->sax->startElementNs = on_start_element;
    /* Errors raised outside the parser context use the thread's global handler: borrow it for
     * the duration of the parse. */
    xmlStructuredErrorFunc saved_fn = xmlStructuredError;
    void *saved_ctx = xmlStructuredErrorContext;
    xmlSetStructuredErrorFunc(&r, on_global_error);
    doc = xmlCtxtReadMemory(ctxt, data, (int)len, NULL, NULL,
                            XML_PARSE_NONET | XML_PARSE_BIG_LINES | XML_PARSE_NOCDATA);
    xmlSetStructuredErrorFunc(saved_ctx, saved_fn);
    if (r.stopped) {
        report(&r, WEFT_SEV_ERROR, r.doctype_at,
               "<!DOCTYPE> is not allowed in an MSCCL algorithm file");
        WEFT_FAIL(WEFT_ERR_INPUT);
    }
    if (doc == NULL) {
        if (r.nerr == 0) report(&r, WEFT_SEV_ERROR, 0, "malformed XML");
        WEFT_FAIL(WEFT_ERR_INPUT);
    }
    xmlNodePtr root = xmlDocGetRootElement(doc);
    if (root == NULL) {
        report(&r, WEFT_SEV_ERROR, 0, "no root element");
        WEFT_FAIL(WEFT_ERR_INPUT);
    }
    if (!is_elem(root, "algo")) {
        char e[128];
        elem_name(e, sizeof e, root);
        report(&r, WEFT_SEV_ERROR, line_of(root), "root element is %s, expected <algo>", e);
        WEFT_FAIL(WEFT_ERR_INPUT);
    }
    WEFT_CHECK(read_algo(&r, root, &a));
    WEFT_CHECK(weft_ir_validate(a, d));
    *out = a;
    a = NULL;
fail:
    weft_algo_free(a);
    if (doc) xmlFreeDoc(doc);
    if (ctxt) xmlFreeParserCtxt(ctxt);
    return res;
}

weft_result weft_ir_read_file(const char *path, weft_algo **out, weft_diag *d) {
    weft_result res = WEFT_OK;
    char *data = NULL;
    size_t len = 0;
    *out = NULL;
    struct stat st;
    if (stat(path, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > WEFT_IR_MAX_FILE_BYTES) {
        weft_diag_add(d, WEFT_SEV_ERROR, path, 0, 0, "file too large (%lld bytes; the limit is %d)",
                      (long long)st.st_size, WEFT_IR_MAX_FILE_BYTES);
        WEFT_FAIL(WEFT_ERR_INPUT);
    }
    WEFT_CHECK(weft_read_file(path, &data, &len, d));
    WEFT_CHECK(weft_ir_read_memory(data, len, path, out, d));
fail:
    free(data);
    return res;
}
