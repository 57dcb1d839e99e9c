/* xml_read.c — the MSCCL XML reader on libxml2: builds a weft_algo from SAX events (no document
 * tree: memory stays proportional to the schedule, not to the text), reporting file:line errors. */
#include "weft_ir.h"
#include "weft_xml_guard.h"

#include <libxml/parser.h>
#include <libxml/SAX2.h>
#include <libxml/parserInternals.h>
#include <libxml/xmlerror.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* Past this many errors the rest of the file is unlikely to say anything new. */
#define MAX_ERRORS 20

/* What a file's structure says (elements, attributes) is collected in `sd` and reported only
 * when libxml2 finds the whole document well-formed: a malformed file gets libxml2's messages
 * alone, as a reader that builds a tree first would give. */
typedef struct reader {
    const char *file;
    weft_diag *d;  /* libxml2's messages, and the final result */
    weft_diag *sd; /* messages about the structure, until the document is known well-formed */
    int nerr;      /* errors of either kind: past MAX_ERRORS the structure is no longer read */
    int nxerr;     /* errors of libxml2 */
    int nserr;     /* errors about the structure */
} reader;

static void report_to(reader *r, int structure, weft_severity sev, long line, const char *fmt,
                      va_list ap) {
    weft_diag *d = structure ? r->sd : r->d;
    int *n = structure ? &r->nserr : &r->nxerr;
    if (sev == WEFT_SEV_ERROR) {
        r->nerr++;
        if (++*n > MAX_ERRORS) return;
    }
    weft_diag_vadd(d, sev, r->file, line > 0 && line < 0x7fffffff ? (int)line : 0, 0, fmt, ap);
    if (sev == WEFT_SEV_ERROR && *n == MAX_ERRORS)
        weft_diag_add(d, WEFT_SEV_NOTE, r->file, 0, 0, "too many errors, stopping here");
}

/* A message about the structure of the file. */
static void report(reader *r, weft_severity sev, long line, const char *fmt, ...) WEFT_PRINTF(4, 5);
static void report(reader *r, weft_severity sev, long line, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    report_to(r, 1, sev, line, fmt, ap);
    va_end(ap);
}

/* A message of libxml2 or about the text as a whole. */
static void report_xml(reader *r, weft_severity sev, long line, const char *fmt, ...)
    WEFT_PRINTF(4, 5);
static void report_xml(reader *r, weft_severity sev, long line, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    report_to(r, 0, sev, line, fmt, ap);
    va_end(ap);
}

static int too_many(const reader *r) {
    return r->nerr >= MAX_ERRORS;
}

/* The SAX handlers' state (below); ctxt->_private points to it, and its first member is the
 * libxml2 guard (weft_xml_guard.h). */
typedef struct sax sax;

/* libxml2's messages, from the guard. */
static void on_xml_message(void *who, weft_severity sev, long line, const char *msg) {
    report_xml(who, sev, line, "%s", msg);
}

/* ---- libxml2 plumbing --------------------------------------------------------------------- */

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

enum { MAX_ATTRS = 16 };

typedef struct attrs {
    const char *elem; /* "step" */
    const char *const *names;
    int n;
    char *val[MAX_ATTRS];
    long line;
} attrs;

static const char *const algo_attrs[] = {
    "name",       "proto",    "nchannels", "nchunksperloop", "ngpus",  "coll",         "inplace",
    "outofplace", "minBytes", "maxBytes",  "root",           "launch", "graphMaxBytes"};
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
    A_LAUNCH,
    A_GRAPHMAX,
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
        free(at->val[i]);
        at->val[i] = NULL;
    }
}

/* An attribute value as libxml2 hands it to SAX: not terminated, and with '&' still written
 * "&#38;" (libxml2 leaves that to the tree builder; every other reference is already replaced,
 * and there are no entities since a DOCTYPE is refused). */
static char *attr_value(const xmlChar *v, const xmlChar *end) {
    size_t n = (size_t)(end - v);
    char *out = malloc(n + 1), *o = out;
    if (out == NULL) return NULL;
    for (size_t i = 0; i < n; i++) {
        if (v[i] == '&' && i + 5 <= n && memcmp(v + i, "&#38;", 5) == 0) {
            *o++ = '&';
            i += 4;
        } else {
            *o++ = (char)v[i];
        }
    }
    *o = '\0';
    return out;
}

/* Collects the known attributes of an element (SAX2's array: name, prefix, URI, value, end for
 * each); unknown ones are warned about and ignored (the MSCCL runtimes ignore them too). */
static weft_result attrs_load(reader *r, attrs *at, long line, int nattrs, const xmlChar **av,
                              const char *elem, const char *const *names, int n) {
    memset(at, 0, sizeof *at);
    at->elem = elem;
    at->names = names;
    at->n = n;
    at->line = line;
    for (int a = 0; a < nattrs; a++) {
        const xmlChar *const *p = av + 5 * a;
        int k = -1;
        if (p[1] == NULL)
            for (int i = 0; i < n; i++)
                if (strcmp((const char *)p[0], names[i]) == 0) k = i;
        if (k < 0) {
            char b[48];
            report(r, WEFT_SEV_WARNING, at->line, "<%s>: unknown attribute '%s%s%s' ignored", elem,
                   p[1] ? (const char *)p[1] : "", p[1] ? ":" : "",
                   shown((const char *)p[0], b, sizeof b));
            continue;
        }
        free(at->val[k]); /* libxml2 refuses duplicates; keep the last if one slips through */
        at->val[k] = attr_value(p[3], p[4]);
        if (at->val[k] == NULL) {
            attrs_free(at);
            return WEFT_ERR_NOMEM;
        }
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
    if (missing(r, at, i)) return -1;
    const char *v = at->val[i];
    int code = v[0] && v[1] == '\0' ? weft_buf_from_code(v[0]) : -1;
    if (code >= 0) {
        *out = (weft_buf)code;
        return 0;
    }
    char b[48];
    report(r, WEFT_SEV_ERROR, at->line,
           "<%s> attribute '%s': unknown buffer \"%s\" (expected i, o or s)", at->elem,
           at->names[i], shown(v, b, sizeof b));
    return -1;
}

static int get_step_type(reader *r, const attrs *at, int i, weft_step_type *out) {
    if (missing(r, at, i)) return -1;
    int t = weft_step_from_name(at->val[i]);
    if (t >= 0) {
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

static int blank_n(const xmlChar *s, int n) {
    for (int i = 0; i < n; i++)
        if (s[i] != ' ' && s[i] != '\t' && s[i] != '\n' && s[i] != '\r') return 0;
    return 1;
}

/* An element's name as written: <m:gpu>, or <gpu xmlns="urn:x"> for a default namespace. */
static void elem_name(char *out, size_t len, const xmlChar *name, const xmlChar *prefix,
                      const xmlChar *uri) {
    char b[48], h[48];
    const char *nm = shown((const char *)name, b, sizeof b);
    if (prefix)
        snprintf(out, len, "<%s:%s>", shown((const char *)prefix, h, sizeof h), nm);
    else if (uri)
        snprintf(out, len, "<%s xmlns=\"%s\">", nm, shown((const char *)uri, h, sizeof h));
    else
        snprintf(out, len, "<%s>", nm);
}

typedef struct step_in {
    int32_t s;
    weft_step st;
} step_in;

static int cmp_step_in(const void *x, const void *y) {
    const step_in *a = x, *b = y;
    return weft_cmp_keys((int64_t[]){a->s, a->st.line}, (int64_t[]){b->s, b->st.line}, 2);
}

static int cmp_tb(const void *x, const void *y) {
    const weft_tb *a = x, *b = y;
    return weft_cmp_keys((int64_t[]){a->id, a->line}, (int64_t[]){b->id, b->line}, 2);
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

/* The launch modes of attribute i: names of weft_launch separated by spaces or commas, at
 * least one. */
static int get_launch(reader *r, const attrs *at, int i, unsigned *out) {
    const char *v = at->val[i];
    unsigned mask = 0;
    char b[48];
    for (const char *p = v; *p;) {
        size_t n = strcspn(p, " ,\t");
        if (n > 0) {
            char name[32];
            int l = -1;
            if (n < sizeof name) {
                memcpy(name, p, n);
                name[n] = '\0';
                l = weft_launch_from_name(name);
            }
            if (l < 0) {
                report(r, WEFT_SEV_ERROR, at->line,
                       "<%s> attribute '%s': unknown launch mode in \"%s\" (expected eager, "
                       "graph, registered or registered-graph, separated by spaces)",
                       at->elem, at->names[i], shown(v, b, sizeof b));
                return -1;
            }
            mask |= 1u << l;
        }
        p += n;
        p += strspn(p, " ,\t");
    }
    if (mask == 0) {
        report(r, WEFT_SEV_ERROR, at->line,
               "<%s> attribute '%s' names no launch mode (leave it out for all of them)", at->elem,
               at->names[i]);
        return -1;
    }
    *out = mask;
    return 0;
}

/* The reader's state between SAX events: the element path is <algo> <gpu> <tb> <step>, one of
 * each open at a time, so that what is being read is the last of each kind. */
struct sax {
    weft_xml_guard guard; /* first: see the typedef */
    reader *r;
    xmlParserCtxtPtr ctxt;
    weft_result res; /* allocation failure: everything after is ignored */
    int depth;       /* elements open */
    int skip;        /* > 0: depth of an element whose content is ignored */
    int done;        /* the structure is no longer read (too many errors, or failure) */
    long text_line;  /* line of the current run of text, 0 when none */
    int text_told;   /* the current run was reported */
    int saw_root;
    /* <algo> */
    weft_algo *a;
    int abad, legacy;
    long aline;
    /* <gpu> */
    weft_gpu g;
    int32_t gid;
    int gbad, gerr;
    /* <tb> */
    attrs tat;
    int32_t tid, tsend, trecv, tchan;
    int tbad;
    step_in *steps;
    size_t nsteps, capsteps;
    int64_t total_steps;
};

static long sax_line(const sax *x) {
    return x->ctxt->input ? (long)x->ctxt->input->line : 0;
}

static void sax_nomem(sax *x) {
    x->res = WEFT_ERR_NOMEM;
    x->done = 1;
}

static void unexpected_element(sax *x, const xmlChar *name, const xmlChar *prefix,
                               const xmlChar *uri, const char *parent, const char *expected) {
    char e[128];
    elem_name(e, sizeof e, name, prefix, uri);
    if (expected)
        report(x->r, WEFT_SEV_ERROR, sax_line(x),
               "unexpected element %s inside <%s> (expected <%s>)", e, parent, expected);
    else
        report(x->r, WEFT_SEV_ERROR, sax_line(x), "unexpected element %s inside <%s>", e, parent);
}

/* <algo ...>: the header; the schedule is allocated once ngpus is known. */
static void algo_start(sax *x, int nattrs, const xmlChar **av) {
    reader *r = x->r;
    attrs at;
    if (attrs_load(r, &at, sax_line(x), nattrs, av, "algo", algo_attrs, A_COUNT) != WEFT_OK) {
        sax_nomem(x);
        return;
    }
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
    unsigned launch = WEFT_LAUNCH_ALL;
    if (attr_present(&at, A_LAUNCH) && get_launch(r, &at, A_LAUNCH, &launch) != 0) bad = 1;
    int64_t graphmax = 0;
    if (attr_present(&at, A_GRAPHMAX)) bad |= get_int(r, &at, A_GRAPHMAX, 0, INT64_MAX, &graphmax);
    x->abad = bad;
    x->legacy = legacy;
    x->aline = at.line;
    if (ngpus > 0) {
        weft_algo *a = weft_algo_new(at.val[A_NAME] ? at.val[A_NAME] : "",
                                     coll >= 0 ? (weft_coll)coll : 0, ngpus, nchunks);
        if (a == NULL || (r->file && (a->file = weft_strdup(r->file)) == NULL)) {
            weft_algo_free(a);
            attrs_free(&at);
            sax_nomem(x);
            return;
        }
        a->proto = proto >= 0 ? (weft_proto)proto : 0;
        a->nchannels = nchannels;
        a->inplace = inplace;
        a->outofplace = outofplace;
        a->min_bytes = minb;
        a->max_bytes = maxb;
        a->root = weft_coll_rooted(a->coll) ? root_rank : 0;
        a->launch = (uint8_t)launch;
        a->graph_max_bytes = graphmax;
        a->legacy = (uint8_t)legacy;
        a->line = (int32_t)(at.line < INT32_MAX ? at.line : 0);
        for (int32_t g = 0; g < ngpus; g++)
            a->gpus[g].id = -1; /* not seen yet */
        x->a = a;
    }
    attrs_free(&at);
}

/* </algo>: every gpu must have been there. */
static void algo_end(sax *x) {
    reader *r = x->r;
    if (x->a && !too_many(r))
        for (int32_t g = 0; g < x->a->ngpus; g++)
            if (x->a->gpus[g].id < 0) {
                report(r, WEFT_SEV_ERROR, x->aline, "no <gpu id=\"%d\"> (ngpus is %d)", g,
                       x->a->ngpus);
                break;
            }
    if (x->abad || r->nerr) return;
    if (x->legacy)
        report(r, WEFT_SEV_INFO, x->aline,
               "legacy MSCCL format (no outofplace, minBytes, maxBytes): assuming "
               "outofplace=\"%d\", minBytes=\"0\", maxBytes=\"0\" (unbounded)",
               x->a ? x->a->outofplace : 0);
}

/* <gpu id i_chunks o_chunks s_chunks>: read into x->g until its end. */
static void gpu_start(sax *x, int nattrs, const xmlChar **av) {
    reader *r = x->r;
    attrs at;
    gpu_clear(&x->g);
    x->gid = -1;
    if (attrs_load(r, &at, sax_line(x), nattrs, av, "gpu", gpu_attrs, G_COUNT) != WEFT_OK) {
        sax_nomem(x);
        return;
    }
    int bad = 0;
    int64_t v;
    if (get_int(r, &at, G_ID, 0, INT32_MAX, &v) == 0)
        x->gid = (int32_t)v;
    else
        bad = 1;
    bad |= get_i32(r, &at, G_I, &x->g.i_chunks);
    bad |= get_i32(r, &at, G_O, &x->g.o_chunks);
    bad |= get_i32(r, &at, G_S, &x->g.s_chunks);
    x->g.line = (int32_t)(at.line < INT32_MAX ? at.line : 0);
    x->gbad = bad;
    x->gerr = r->nerr;
    attrs_free(&at);
}

/* </gpu>: tbs sorted by id, which must be exactly 0..n-1; then the gpu takes its rank. */
static void gpu_end(sax *x) {
    reader *r = x->r;
    weft_gpu *g = &x->g;
    int32_t id = x->gid;
    int ok = !x->gbad && r->nerr == x->gerr;
    if (ok) {
        /* tbs may come in any order; their ids must be exactly 0..n-1. */
        if (g->ntbs > 1) qsort(g->tbs, (size_t)g->ntbs, sizeof *g->tbs, cmp_tb);
        for (int32_t t = 1; t < g->ntbs; t++)
            if (g->tbs[t].id == g->tbs[t - 1].id) {
                report(r, WEFT_SEV_ERROR, g->tbs[t].line,
                       "rank %d: duplicate <tb id=\"%d\"> (first on line %d)", id, g->tbs[t].id,
                       g->tbs[t - 1].line);
                ok = 0;
            }
    }
    if (ok)
        for (int32_t t = 0; t < g->ntbs; t++)
            if (g->tbs[t].id != t) {
                report(r, WEFT_SEV_ERROR, g->line,
                       "rank %d: no <tb id=\"%d\"> (tb ids must run 0..%d without gaps)", id, t,
                       g->ntbs - 1);
                ok = 0;
                break;
            }
    weft_algo *a = x->a;
    if (a && id >= a->ngpus) {
        report(r, WEFT_SEV_ERROR, g->line,
               "<gpu> attribute 'id' is out of range: \"%d\" (ngpus is %d)", id, a->ngpus);
    } else if (a && id >= 0 && a->gpus[id].id >= 0) {
        report(r, WEFT_SEV_ERROR, g->line, "duplicate <gpu id=\"%d\"> (first on line %d)", id,
               a->gpus[id].line);
    } else if (a && ok) {
        g->id = id;
        a->gpus[id] = *g;
        memset(g, 0, sizeof *g);
        return;
    } else if (a && id >= 0) {
        a->gpus[id].id = id; /* seen, though broken: not "missing" as well */
        a->gpus[id].line = g->line;
    }
    gpu_clear(g);
}

static void tb_start(sax *x, int nattrs, const xmlChar **av) {
    reader *r = x->r;
    x->nsteps = 0;
    if (attrs_load(r, &x->tat, sax_line(x), nattrs, av, "tb", tb_attrs, T_COUNT) != WEFT_OK) {
        sax_nomem(x);
        return;
    }
    x->tid = -1, x->tsend = x->trecv = x->tchan = 0;
    int bad = 0;
    bad |= get_i32(r, &x->tat, T_ID, &x->tid);
    bad |= get_i32(r, &x->tat, T_SEND, &x->tsend);
    bad |= get_i32(r, &x->tat, T_RECV, &x->trecv);
    bad |= get_i32(r, &x->tat, T_CHAN, &x->tchan);
    if (x->tid < 0 && !bad) {
        report(r, WEFT_SEV_ERROR, x->tat.line, "<tb> attribute 'id' is negative: \"%d\"", x->tid);
        bad = 1;
    }
    x->tbad = bad;
}

/* </tb>: its steps, sorted by `s`, which must be 0..n-1; the tb is appended to the gpu (its id
 * taken from the file) when well-formed. */
static void tb_end(sax *x) {
    reader *r = x->r;
    int32_t rank = x->gid, id = x->tid;
    size_t n = x->nsteps;
    step_in *steps = x->steps;
    if (x->tbad) goto done;
    /* Steps may come in any order (the MSCCL runtimes index them by `s`). */
    if (n > 1) qsort(steps, n, sizeof *steps, cmp_step_in);
    int bad = 0;
    for (size_t i = 1; i < n; i++)
        if (steps[i].s == steps[i - 1].s) {
            report(r, WEFT_SEV_ERROR, steps[i].st.line,
                   "rank %d tb %d: duplicate <step s=\"%d\"> (first on line %d)", rank, id,
                   steps[i].s, steps[i - 1].st.line);
            bad = 1;
        }
    if (bad) goto done;
    for (size_t i = 0; i < n; i++)
        if (steps[i].s != (int32_t)i) {
            report(r, WEFT_SEV_ERROR, x->tat.line,
                   "rank %d tb %d: no <step s=\"%zu\"> (s must run 0..%zu without gaps)", rank, id,
                   i, n - 1);
            goto done;
        }
    weft_tb *tb = weft_gpu_add_tb(&x->g, x->tsend, x->trecv, x->tchan);
    if (tb == NULL) {
        sax_nomem(x);
        goto done;
    }
    tb->id = id;
    tb->line = (int32_t)(x->tat.line < INT32_MAX ? x->tat.line : 0);
    for (size_t i = 0; i < n; i++)
        if (weft_tb_add_step(tb, &steps[i].st) < 0) {
            sax_nomem(x);
            goto done;
        }
done:
    x->nsteps = 0;
    attrs_free(&x->tat);
}

/* <step s=".." type=".." .../>: appended to the tb's list when well-formed. */
static void step_start(sax *x, int nattrs, const xmlChar **av) {
    reader *r = x->r;
    attrs at;
    if (++x->total_steps > WEFT_IR_MAX_STEPS) {
        /* the pre-scan counts steps too; this guards what it cannot see */
        report(r, WEFT_SEV_ERROR, sax_line(x), "more than %d <step> elements (the most weft reads)",
               WEFT_IR_MAX_STEPS);
        x->done = 1;
        return;
    }
    if (attrs_load(r, &at, sax_line(x), nattrs, av, "step", step_attrs, S_COUNT) != WEFT_OK) {
        sax_nomem(x);
        return;
    }
    step_in out;
    memset(&out, 0, sizeof out);
    int bad = 0;
    bad |= get_i32(r, &at, S_S, &out.s);
    bad |= get_step_type(r, &at, S_TYPE, &out.st.type);
    bad |= get_buf(r, &at, S_SRCBUF, &out.st.srcbuf);
    bad |= get_i32(r, &at, S_SRCOFF, &out.st.srcoff);
    bad |= get_buf(r, &at, S_DSTBUF, &out.st.dstbuf);
    bad |= get_i32(r, &at, S_DSTOFF, &out.st.dstoff);
    bad |= get_i32(r, &at, S_CNT, &out.st.cnt);
    bad |= get_i32(r, &at, S_DEPID, &out.st.depid);
    bad |= get_i32(r, &at, S_DEPS, &out.st.deps);
    bad |= get_bool(r, &at, S_HASDEP, &out.st.hasdep);
    if (!bad && out.s < 0) {
        report(r, WEFT_SEV_ERROR, at.line, "<step> attribute 's' is negative: \"%d\"", out.s);
        bad = 1;
    }
    out.st.line = (int32_t)(at.line < INT32_MAX ? at.line : 0);
    attrs_free(&at);
    if (bad) {
        x->tbad = 1;
        return;
    }
    if (weft_grow((void **)&x->steps, &x->capsteps, x->nsteps, sizeof *x->steps) != 0) {
        sax_nomem(x);
        return;
    }
    x->steps[x->nsteps++] = out;
}

/* Text between elements: blank text is fine, anything else is reported once per run. */
static void text_run_end(sax *x) {
    x->text_line = 0;
    x->text_told = 0;
}

static const char *const parent_names[] = {"", "algo", "gpu", "tb", "step"};

static void on_text(void *ctx, const xmlChar *ch, int len) {
    sax *x = ((xmlParserCtxtPtr)ctx)->_private;
    if (x->done || x->skip || x->depth == 0) return;
    if (x->text_line == 0) x->text_line = sax_line(x);
    if (x->text_told || blank_n(ch, len)) return;
    x->text_told = 1;
    report(x->r, WEFT_SEV_ERROR, x->text_line, "unexpected text inside <%s>",
           parent_names[x->depth < 4 ? x->depth : 4]);
}

/* A CDATA section is a text of its own. */
static void on_cdata(void *ctx, const xmlChar *ch, int len) {
    sax *x = ((xmlParserCtxtPtr)ctx)->_private;
    text_run_end(x);
    on_text(ctx, ch, len);
    text_run_end(x);
}

/* Comments and processing instructions are fine; they end a run of text. */
static void on_comment(void *ctx, const xmlChar *value) {
    (void)value;
    text_run_end(((xmlParserCtxtPtr)ctx)->_private);
}
static void on_pi(void *ctx, const xmlChar *target, const xmlChar *data) {
    (void)target, (void)data;
    text_run_end(((xmlParserCtxtPtr)ctx)->_private);
}

static void on_start_element(void *ctx, const xmlChar *name, const xmlChar *prefix,
                             const xmlChar *uri, int nns, const xmlChar **ns, int nattrs,
                             int ndefaulted, const xmlChar **av) {
    (void)nns, (void)ns, (void)ndefaulted;
    sax *x = ((xmlParserCtxtPtr)ctx)->_private;
    int depth = x->depth++;
    text_run_end(x);
    if (x->done || x->skip) return;
    if (too_many(x->r)) {
        x->done = 1;
        return;
    }
    static const char *const want[] = {"algo", "gpu", "tb", "step"};
    int known = depth < 4 && uri == NULL && strcmp((const char *)name, want[depth]) == 0;
    if (depth == 0) {
        x->saw_root = 1;
        if (!known) {
            char e[128];
            elem_name(e, sizeof e, name, prefix, uri);
            /* nothing else of the file means anything */
            report(x->r, WEFT_SEV_ERROR, sax_line(x), "root element is %s, expected <algo>", e);
            x->done = 1;
            return;
        }
        algo_start(x, nattrs, av);
        return;
    }
    if (!known) {
        unexpected_element(x, name, prefix, uri, parent_names[depth < 4 ? depth : 4],
                           depth < 4 ? want[depth] : NULL);
        x->skip = x->depth;
        return;
    }
    if (depth == 1) gpu_start(x, nattrs, av);
    if (depth == 2) tb_start(x, nattrs, av);
    if (depth == 3) step_start(x, nattrs, av);
}

static void on_end_element(void *ctx, const xmlChar *name, const xmlChar *prefix,
                           const xmlChar *uri) {
    (void)name, (void)prefix, (void)uri;
    sax *x = ((xmlParserCtxtPtr)ctx)->_private;
    int depth = x->depth--;
    text_run_end(x);
    if (x->skip) {
        if (depth == x->skip) x->skip = 0;
        return;
    }
    if (x->done) return;
    if (depth == 1) algo_end(x);
    if (depth == 2) gpu_end(x);
    if (depth == 3) tb_end(x);
}

/* The text handed to libxml2 through its I/O interface, a piece at a time: xmlCtxtReadMemory
 * would first copy all of it (up to 256 MiB more), while this way the parser keeps only the part
 * it is working on (the same parser, the same messages). */
typedef struct mem_reader {
    const char *p;
    size_t left;
} mem_reader;

static int mem_read(void *ctx, char *buf, int len) {
    mem_reader *m = ctx;
    size_t n = (size_t)len < m->left ? (size_t)len : m->left;
    memcpy(buf, m->p, n);
    m->p += n;
    m->left -= n;
    return (int)n;
}

static int mem_close(void *ctx) {
    (void)ctx;
    return 0;
}

/* The number of <step> tags, and the line of the one past WEFT_IR_MAX_STEPS (0 when there are
 * not that many): a file with more is refused before libxml2 reads it. */
static long step_count(const char *p, size_t len, int64_t *count) {
    const char *end = p + len;
    long line = 1;
    *count = 0;
    for (const char *q = p; q < end; q++) {
        if (*q == '\n') line++;
        if (*q != '<' || end - q < 6 || memcmp(q + 1, "step", 4) != 0) continue;
        char c = q[5];
        if (c != ' ' && c != '\t' && c != '\n' && c != '\r' && c != '/' && c != '>') continue;
        if (++*count > WEFT_IR_MAX_STEPS) return line;
    }
    return 0;
}

weft_result weft_ir_read_memory(const char *data, size_t len, const char *name, weft_algo **out,
                                weft_diag *d) {
    weft_result res = WEFT_OK;
    reader r = {name ? name : "<memory>", d, NULL, 0, 0, 0};
    sax x;
    memset(&x, 0, sizeof x);
    xmlParserCtxtPtr ctxt = NULL;
    xmlDocPtr doc = NULL;
    *out = NULL;
    if (len > (size_t)WEFT_IR_MAX_FILE_BYTES) {
        report_xml(&r, WEFT_SEV_ERROR, 0, "file too large (%zu bytes; the limit is %d)", len,
                   WEFT_IR_MAX_FILE_BYTES);
        WEFT_FAIL(WEFT_ERR_INPUT);
    }
    long crowded = crowded_tag(data ? data : "", data ? len : 0);
    if (crowded) {
        report_xml(&r, WEFT_SEV_ERROR, crowded,
                   "an element with more than %d attributes (MSCCL elements have at most 11)",
                   MAX_ATTRS_PER_TAG);
        WEFT_FAIL(WEFT_ERR_INPUT);
    }
    int64_t nsteps = 0;
    long past = step_count(data ? data : "", data ? len : 0, &nsteps);
    if (past) {
        report_xml(&r, WEFT_SEV_ERROR, past,
                   "more than %d <step> elements: weft reads, verifies and runs schedules of at "
                   "most that many steps",
                   WEFT_IR_MAX_STEPS);
        WEFT_FAIL(WEFT_ERR_INPUT);
    }
    r.sd = weft_diag_new();
    WEFT_CHECK_ALLOC(r.sd);
    pthread_once(&xml_once, xml_init);
    ctxt = xmlNewParserCtxt();
    WEFT_CHECK_ALLOC(ctxt);
    x.r = &r;
    x.ctxt = ctxt;
    x.guard.report = on_xml_message;
    x.guard.who = &r;
    ctxt->_private = &x;
    /* SAX only: no handler builds a tree */
    xmlSAXHandler *h = ctxt->sax;
    h->startElementNs = on_start_element;
    h->endElementNs = on_end_element;
    h->characters = on_text;
    h->ignorableWhitespace = on_text;
    h->cdataBlock = on_cdata;
    h->comment = on_comment;
    h->processingInstruction = on_pi;
    h->reference = NULL;
    weft_xml_guard_begin(&x.guard, ctxt);
    mem_reader m = {data ? data : "", data ? len : 0};
    doc = xmlCtxtReadIO(ctxt, mem_read, mem_close, &m, NULL, NULL,
                        XML_PARSE_NONET | XML_PARSE_BIG_LINES | XML_PARSE_NOCDATA);
    weft_xml_guard_end(&x.guard);
    if (x.res != WEFT_OK) WEFT_FAIL(x.res);
    if (weft_xml_guard_check(&x.guard, doc, "<!DOCTYPE> is not allowed in an MSCCL algorithm file"))
        WEFT_FAIL(WEFT_ERR_INPUT);
    /* well-formed: what the structure says counts */
    weft_diag_append(d, r.sd);
    if (!x.saw_root) {
        report_xml(&r, WEFT_SEV_ERROR, 0, "no root element");
        WEFT_FAIL(WEFT_ERR_INPUT);
    }
    if (r.nerr || x.abad || x.a == NULL || x.done) {
        if (r.nerr == 0) report_xml(&r, WEFT_SEV_ERROR, 0, "malformed schedule");
        WEFT_FAIL(WEFT_ERR_INPUT);
    }
    WEFT_CHECK(weft_ir_validate(x.a, d));
    *out = x.a;
    x.a = NULL;
fail:
    weft_algo_free(x.a);
    gpu_clear(&x.g);
    attrs_free(&x.tat);
    free(x.steps);
    weft_diag_free(r.sd);
    if (doc) xmlFreeDoc(doc);
    if (ctxt) xmlFreeParserCtxt(ctxt);
    return res;
}

weft_result weft_ir_read_file(const char *path, weft_algo **out, weft_diag *d) {
    weft_result res = WEFT_OK;
    char *data = NULL;
    size_t len = 0;
    *out = NULL;
    WEFT_CHECK(weft_read_file_max(path, WEFT_IR_MAX_FILE_BYTES, WEFT_READ_STDIN, &data, &len, d));
    WEFT_CHECK(weft_ir_read_memory(data, len, weft_read_name(path), out, d));
fail:
    free(data);
    return res;
}
