/* test_trace.c — unit tests of the trace layer: the JSON reader (grammar, escapes, numbers,
 * limits, exact messages), clock alignment, turning device records into slices (dropped and
 * inconsistent records), write -> read -> write byte identity, merging files with different time
 * bases, and a deterministic mutation sweep (every prefix, thousands of byte changes) through the
 * reader and the analyses, which must reject or accept but never crash. */
#include "check.h"
#include "json_internal.h"
#include "trace_internal.h"
#include "trace_tools.h"
#include "weft_ir.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ---- JSON ----------------------------------------------------------------------------------- */
/* Parses text as one value followed by nothing; returns the first message or "ok". */
static char msgbuf[512];
static const char *parse_msg(const char *text, size_t len) {
    weft_diag *d = weft_diag_new();
    json_parser jp;
    json_init(&jp, "t", text, len, d);
    json_value *v = json_parse(&jp);
    if (v && json_peek(&jp) != -1) json_error(&jp, 0, "extra text");
    snprintf(msgbuf, sizeof msgbuf, "ok");
    if (weft_diag_size(d) > 0) {
        char *m = weft_diag_format(weft_diag_get(d, 0));
        snprintf(msgbuf, sizeof msgbuf, "%s", m);
        free(m);
        /* weft_diag_format may end in a newline */
        size_t n = strlen(msgbuf);
        while (n && msgbuf[n - 1] == '\n')
            msgbuf[--n] = '\0';
    }
    json_free(&jp);
    weft_diag_free(d);
    return msgbuf;
}

static const char *pm(const char *text) {
    return parse_msg(text, strlen(text));
}

static void test_json_grammar(void) {
    static const struct {
        const char *in, *want;
    } cases[] = {
        {"0", "ok"},
        {"-0", "ok"},
        {"1.5e3", "ok"},
        {"-12.25E-2", "ok"},
        {" true ", "ok"},
        {"null", "ok"},
        {"[]", "ok"},
        {"{}", "ok"},
        {"[1, [2, {\"a\": []}]]", "ok"},
        {"\"\\\"\\\\\\/\\b\\f\\n\\r\\t\"", "ok"},
        {"01", "t:1: error: malformed JSON: leading zero in a number"},
        {"1.", "t:1: error: malformed JSON: digits expected after '.'"},
        {"1e", "t:1: error: malformed JSON: digits expected in the exponent"},
        {"-", "t:1: error: malformed JSON: a number needs digits"},
        {".5", "t:1: error: malformed JSON: expected a value, found '.'"},
        {"+1", "t:1: error: malformed JSON: expected a value, found '+'"},
        {"tru", "t:1: error: malformed JSON: expected a value, found 't'"},
        {"NaN", "t:1: error: malformed JSON: expected a value, found 'N'"},
        {"", "t:1: error: malformed JSON: expected a value, found the end of the file"},
        {"[1,]", "t:1: error: malformed JSON: trailing comma before ']'"},
        {"[1 2]", "t:1: error: malformed JSON: expected ',' or ']' after an element, found '2'"},
        {"{\"a\" 1}", "t:1: error: malformed JSON: expected ':' after a member name, found '1'"},
        {"{1:2}", "t:1: error: malformed JSON: expected a member name (a string), found '1'"},
        {"{\"a\":1,\"a\":2}", "t:1: error: duplicate member \"a\" in an object"},
        {"\"abc", "t:1: error: malformed JSON: unterminated string"},
        {"\"a\nb\"", "t:1: error: malformed JSON: line break inside a string"},
        {"\"\\x\"", "t:1: error: malformed JSON: invalid escape '\\x'"},
        {"\"\\u12\"", "t:1: error: malformed JSON: \\u needs four hex digits"},
        {"\"\\u0000\"", "t:1: error: \\u0000 inside a string is not supported"},
        {"\"\\ud800\"", "t:1: error: malformed JSON: unpaired UTF-16 surrogate"},
        {"\"\\udc00\\ud800\"", "t:1: error: malformed JSON: unpaired UTF-16 surrogate"},
        {"\"\\ud83d\\ude00\"", "ok"},
        {"\"\xc3\xa9\"", "ok"},
        {"\"\xc3\"", "t:1: error: malformed JSON: invalid UTF-8 in a string"},
        {"\"\xe0\x80\x80\"",
         "t:1: error: malformed JSON: invalid UTF-8 in a string"}, /* overlong */
        {"\"\xed\xa0\x80\"",
         "t:1: error: malformed JSON: invalid UTF-8 in a string"}, /* surrogate */
        {"\"\xf4\x90\x80\x80\"",
         "t:1: error: malformed JSON: invalid UTF-8 in a string"}, /* > 10FFFF */
        {"[\n\n1,\n]", "t:4: error: malformed JSON: trailing comma before ']'"},
        {"1 2", "t:1: error: extra text"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++)
        CHECK_STR(pm(cases[i].in), cases[i].want);
    CHECK_STR(parse_msg("[\0]", 3),
              "t:1: error: malformed JSON: expected a value, found a NUL byte");
    /* Nesting: 64 levels are fine, 65 are not. */
    char deep[200];
    memset(deep, '[', 64);
    memset(deep + 64, ']', 64);
    deep[128] = '\0';
    CHECK_STR(pm(deep), "ok");
    memset(deep, '[', 65);
    memset(deep + 65, ']', 65);
    deep[130] = '\0';
    CHECK_STR(pm(deep), "t:1: error: JSON nested deeper than 64 levels");

    /* Decoding. */
    weft_diag *d = weft_diag_new();
    json_parser jp;
    const char *txt = "{\"k\":\"a\\u00e9\\ud83d\\ude00\\n\",\"n\":-12.5,\"z\":[true,false,null]}";
    json_init(&jp, "t", txt, strlen(txt), d);
    json_value *v = json_parse(&jp);
    CHECK(v && v->type == JSON_OBJECT && v->n == 3);
    const json_value *k = json_get(v, "k");
    CHECK(k && k->type == JSON_STRING && strcmp(k->str, "a\xc3\xa9\xf0\x9f\x98\x80\n") == 0);
    CHECK(k && k->len == 8);
    const json_value *z = json_get(v, "z");
    CHECK(z && z->type == JSON_ARRAY && z->n == 3 && z->items[0]->type == JSON_TRUE &&
          z->items[1]->type == JSON_FALSE && z->items[2]->type == JSON_NULL);
    CHECK(json_get(v, "missing") == NULL);
    CHECK(json_get(z, "k") == NULL);
    int64_t x;
    CHECK(json_fixed(json_get(v, "n"), 0, &x) == 0 && x == -13); /* -12.5 rounds away from 0 */
    CHECK(json_int64(json_get(v, "n"), &x) != 0);
    json_free(&jp);
    weft_diag_free(d);
}

static int fixed_of(const char *num, int scale, int64_t *out) {
    json_value v = {.type = JSON_NUMBER, .str = num, .len = strlen(num)};
    return json_fixed(&v, scale, out);
}

static int int_of(const char *num, int64_t *out) {
    json_value v = {.type = JSON_NUMBER, .str = num, .len = strlen(num)};
    return json_int64(&v, out);
}

static void test_json_numbers(void) {
    static const struct {
        const char *in;
        int scale;
        int ok;
        int64_t want;
    } f[] = {
        {"12.345", 3, 1, 12345},
        {"1.0005", 3, 1, 1001},
        {"-1.0005", 3, 1, -1001},
        {"1.00049", 3, 1, 1000},
        {"0.0004", 3, 1, 0},
        {"0.0005", 3, 1, 1},
        {"-0.0", 3, 1, 0},
        {"0", 3, 1, 0},
        {"1e-3", 3, 1, 1},
        {"1E+2", 3, 1, 100000},
        {"0.000000000000000000000000001", 3, 1, 0},
        {"4611686018427387.904", 3, 1, (int64_t)1 << 62},
        {"4611686018427387.905", 3, 0, 0},
        {"123456789012345678901234567890", 0, 0, 0},
        {"1e300", 3, 0, 0},
        {"1e-300", 3, 1, 0},
        {"99999999999999999999e-20", 0, 1, 1},
        {"0.1234567890123456789012345678901234567890123456789012345678901234567890", 3, 1, 123},
    };
    for (size_t i = 0; i < sizeof f / sizeof *f; i++) {
        int64_t x = -7;
        int ok = fixed_of(f[i].in, f[i].scale, &x) == 0;
        if (ok != f[i].ok || (ok && x != f[i].want)) {
            fprintf(stderr,
                    "json_fixed(%s, %d): ok %d value %" PRId64 ", want ok %d value %" PRId64 "\n",
                    f[i].in, f[i].scale, ok, x, f[i].ok, f[i].want);
            check_failures++;
        }
    }
    int64_t x;
    CHECK(int_of("9223372036854775807", &x) == 0 && x == INT64_MAX);
    CHECK(int_of("-9223372036854775808", &x) == 0 && x == INT64_MIN);
    CHECK(int_of("9223372036854775808", &x) != 0);
    CHECK(int_of("-9223372036854775809", &x) != 0);
    CHECK(int_of("1.0", &x) != 0);
    CHECK(int_of("1e2", &x) != 0);
    CHECK(int_of("-0", &x) == 0 && x == 0);
}

/* ---- clock ---------------------------------------------------------------------------------- */
static void test_clock(void) {
    weft_trace_clock c = {0};
    int64_t e = 0;
    CHECK(weft_trace_clock_map(&c, 5000, &e) == 5000 && e == -1);
    CHECK(weft_trace_clock_map(NULL, 7, NULL) == 7);
    weft_trace_clock_add(&c, 1000, 0, 40);
    CHECK(weft_trace_clock_map(&c, 500, &e) == 1500 && e == 40);
    /* A second sample: the GPU clock runs 50 ppm slow against the host. */
    weft_trace_clock_add(&c, 2001100, 2000000, 60);
    CHECK(weft_trace_clock_map(&c, 0, &e) == 1000 && e == 60);
    CHECK(weft_trace_clock_map(&c, 1000000, NULL) == 1001050);
    CHECK(weft_trace_clock_map(&c, 2000000, NULL) == 2001100);
    CHECK(weft_trace_clock_map(&c, 4000000, NULL) == 4001200); /* extrapolated */
    /* Before the first sample (unsigned wrap made negative). */
    weft_trace_clock d0 = {0};
    weft_trace_clock_add(&d0, 1000000, 1000000, 0);
    weft_trace_clock_add(&d0, 2000000, 2000000, 0);
    CHECK(weft_trace_clock_map(&d0, 500000, NULL) == 500000);
    weft_trace_clock_free(&d0);
    /* A third sample, added out of order, with another offset: the pair around g is used. */
    weft_trace_clock_add(&c, 3000000 + 1000, 1000000, 10);
    CHECK(c.n == 3 && c.s[1].gpu_ns == 1000000);
    CHECK(weft_trace_clock_map(&c, 500000, &e) == 1000 + 500000 + 2 * 500000 && e == 40);
    /* The same GPU time again keeps the more precise sample. */
    weft_trace_clock_add(&c, 3000000 + 2000, 1000000, 5);
    CHECK(c.n == 3 && c.s[1].err_ns == 5 && c.s[1].host_ns == 3002000);
    weft_trace_clock_add(&c, 1, 1000000, 500);
    CHECK(c.n == 3 && c.s[1].err_ns == 5);
    weft_trace_clock_free(&c);
    CHECK(c.n == 0 && c.s == NULL);
    /* Huge garbage does not trap (UBSan) and maps to something. */
    weft_trace_clock g = {0};
    weft_trace_clock_add(&g, INT64_MAX - 5, 1, 0);
    weft_trace_clock_add(&g, INT64_MIN + 5, UINT64_MAX, 0);
    (void)weft_trace_clock_map(&g, 12345, NULL);
    (void)weft_trace_clock_map(&g, UINT64_MAX / 2, NULL);
    weft_trace_clock_free(&g);
    CHECK(weft_trace_host_now() > 1600000000000000000);
}

/* ---- records -> slices ---------------------------------------------------------------------- */
static const weft_trace_step steps0[3] = {
    /* type, srcbuf, srcoff, dstbuf, dstoff, cnt, nsrc, xml, dep_tb, stride, target, post */
    {WEFT_STEP_SEND, WEFT_BUF_INPUT, 0, WEFT_BUF_INPUT, 0, 1, 1, 0, -1, 0, 0, 0},
    {WEFT_STEP_RRC, WEFT_BUF_OUTPUT, 1, WEFT_BUF_OUTPUT, 1, 1, 1, 1, 1, 1, 1, 0},
    {WEFT_STEP_NOP, 0, -1, 0, -1, 0, 1, 2, -1, 0, 0, 3},
};
static const weft_trace_step steps1[1] = {
    {WEFT_STEP_RE, WEFT_BUF_SCRATCH, 0, WEFT_BUF_OUTPUT, 0, 1, 3, 0, -1, 0, 0, 1},
};

static weft_trace_callinfo callinfo(int rank, const weft_trace_tb *tbs) {
    weft_trace_callinfo ci = {5,
                              "unit \"algo\"\t\x01",
                              WEFT_COLL_ALLREDUCE,
                              WEFT_DTYPE_HALF,
                              WEFT_OP_MAX,
                              1000,
                              1,
                              rank,
                              2,
                              WEFT_PROTO_LL,
                              2,
                              1,
                              300,
                              160,
                              2,
                              4,
                              2,
                              tbs};
    return ci;
}

/* smsg / rmsg are the message indices; the counters start at 50 and 7 (see build). */
static weft_trace_rec rec(uint64_t t0, uint64_t t1, int step, int iter, uint32_t dep, uint32_t data,
                          uint32_t credit, uint32_t smsg, uint32_t rmsg) {
    weft_trace_rec r = {t0, t1, dep, data, credit, 320, step, iter, 50 + smsg, 7 + rmsg};
    return r;
}

/* Two ranks, one call: rank r's GPU clock runs r * 1000 ns ahead. */
static void build(weft_trace *t, weft_diag *d, int with_bad) {
    const weft_trace_tb tbs[2] = {{1, 1, 0, 3, 3, steps0}, {-1, -1, 0, 1, 1, steps1}};
    for (int r = 0; r < 2; r++) {
        const uint32_t N = 0; /* no message: the counters are not read */
        const uint64_t o = (uint64_t)r * 1000;
        const uint32_t cap = with_bad ? 6 : 8;
        weft_trace_clock clk = {0};
        weft_trace_clock_add(&clk, 1000000, 1000000 + o, 100 + r);
        weft_trace_tbhdr hdr[2] = {{o + 1000100, o + 1010000, 6, 50, 7, 0},
                                   {o + 1000200, o + 1009000, 2, 50, 7, 0}};
        weft_trace_rec a[8], b[8], rb[2 * 8];
        memset(a, 0, sizeof a);
        memset(b, 0, sizeof b);
        a[0] = rec(o + 1000200, o + 1001000, 0, 0, 0, 0, 0, 0, N);
        a[1] = rec(o + 1001000, o + 1003000, 1, 0, 100, 900, 0, N, 0);
        a[2] = rec(o + 1003000, o + 1003100, 2, 0, 0, 0, 0, N, N);
        a[3] = rec(o + 1003100, o + 1004000, 0, 1, 0, 0, 300, 1, N);
        a[4] = rec(o + 1004000, o + 1005000, 1, 1, 5000, 0, 0, N, 1); /* waits > dur: clamped */
        a[5] = rec(o + 1005000, o + 1005500, 2, 1, 0, 0, 0, N, N);
        b[0] = rec(o + 1000300, o + 1002000, 0, 0, 0, 0, 0, N, N);
        b[1] = rec(o + 1002000, o + 1008000, 0, 1, 0, 0, 0, N, N);
        if (with_bad) {
            hdr[0].n = 11; /* 5 past the capacity of 6 */
            hdr[1].n = 3;
            b[2] = rec(o + 1008000, o + 1007000, 0, 1, 0, 0, 0, N, N); /* ends before it starts */
            a[5].step = 9;                                             /* no such step */
        }
        memcpy(rb, a, cap * sizeof *rb);
        memcpy(rb + cap, b, cap * sizeof *rb);
        weft_trace_callinfo ci = callinfo(r, tbs);
        CHECK(weft_trace_add_call(t, &ci, hdr, rb, cap, &clk, d) == WEFT_OK);
        weft_trace_clock_free(&clk);
    }
    CHECK(weft_trace_sort(t) == WEFT_OK);
}

static void test_records(void) {
    weft_diag *d = weft_diag_new();
    weft_trace t;
    weft_trace_init(&t, 1000000);
    build(&t, d, 0);
    CHECK(weft_diag_size(d) == 0);
    CHECK(t.ncalls == 2 && t.nslices == 16);
    const weft_trace_call *c = &t.calls[0];
    CHECK(c->rank == 0 && c->seq == 5 && c->t0 == 100 && c->t1 == 10000 && c->records == 8 &&
          c->dropped == 0 && c->clock_err_ns == 100 && c->ntbs == 2);
    CHECK(t.calls[1].rank == 1 && t.calls[1].t0 == 100 && t.calls[1].clock_err_ns == 101);
    const weft_trace_slice *s = &t.slices[1]; /* rank 0 tb 0: the rrc of iteration 0 */
    CHECK(s->call == 0 && s->tb == 0 && s->step == 1 && s->iter == 0 && s->type == WEFT_STEP_RRC);
    CHECK(s->send == -1 && s->recv == 1 && s->chan == 0 && s->rmsg == 0 && s->smsg == -1);
    CHECK(s->t0 == 1000 && s->t1 == 3000 && s->dep_ns == 100 && s->data_ns == 900);
    CHECK(s->dep_tb == 1 && s->dep_want == 1 && s->post == -1 && s->elem0 == 0 && s->elems == 160);
    s = &t.slices[4]; /* iteration 1 of the rrc: its 5000 ns dependency wait is clamped to 1000 */
    CHECK(s->iter == 1 && s->step == 1 && s->dep_ns == 1000 && s->data_ns == 0 && s->dep_want == 2);
    CHECK(s->elem0 == 160 && s->elems == 140);
    s = &t.slices[5];
    CHECK(s->type == WEFT_STEP_NOP && s->post == 3 + 3 && s->send == -1 && s->recv == -1);
    s = &t.slices[3];
    CHECK(s->type == WEFT_STEP_SEND && s->send == 1 && s->smsg == 1 && s->credit_ns == 300);
    s = &t.slices[6];
    CHECK(s->tb == 1 && s->nsrc == 3 && s->post == 1 && s->srcbuf == WEFT_BUF_SCRATCH);
    weft_trace_free(&t);

    /* Capacity overflow, a record ending before it starts, a step out of range. */
    weft_trace_init(&t, 1000000);
    build(&t, d, 1);
    CHECK(t.ncalls == 2 && t.nslices == 2 * (5 + 2));
    CHECK(t.calls[0].dropped == 5 + 2 && t.calls[0].records == 7);
    CHECK(weft_diag_count(d, WEFT_SEV_WARNING) == 4);
    char *m = weft_diag_format(weft_diag_get(d, 0));
    CHECK(strstr(m, "trace: rank 0 tb 0 record 5 is inconsistent (step 9, iteration 1); skipped"));
    free(m);
    weft_trace_free(&t);

    /* Usage errors. */
    weft_trace_init(&t, 0);
    weft_trace_callinfo bad = callinfo(2, NULL);
    CHECK(weft_trace_add_call(&t, &bad, NULL, NULL, 0, NULL, d) == WEFT_ERR_USAGE);
    CHECK(weft_trace_add_call(&t, NULL, NULL, NULL, 0, NULL, d) == WEFT_ERR_USAGE);
    weft_trace_free(&t);
    weft_diag_free(d);
}

/* ---- write / read --------------------------------------------------------------------------- */
static char *write_str(const weft_trace *t, size_t *len) {
    char *buf = NULL;
    FILE *f = open_memstream(&buf, len);
    CHECK(weft_trace_write(t, f) == WEFT_OK);
    fclose(f);
    return buf;
}

static int same_model(const weft_trace *a, const weft_trace *b) {
    if (a->ncalls != b->ncalls || a->nslices != b->nslices || a->time_base_ns != b->time_base_ns)
        return 0;
    for (size_t i = 0; i < a->ncalls; i++) {
        weft_trace_call x = a->calls[i], y = b->calls[i];
        x.algo = y.algo = NULL; /* compared by the caller */
        x.file = y.file = x.line = y.line = 0;
        if (memcmp(&x, &y, sizeof x) != 0) return 0;
    }
    for (size_t i = 0; i < a->nslices; i++) {
        weft_trace_slice x = a->slices[i], y = b->slices[i];
        x.line = y.line = 0;
        if (memcmp(&x, &y, sizeof x) != 0) return 0;
    }
    return 1;
}

static void test_roundtrip(void) {
    weft_diag *d = weft_diag_new();
    weft_trace t, u, v;
    weft_trace_init(&t, 1000000);
    build(&t, d, 0);
    size_t n1, n2;
    char *s1 = write_str(&t, &n1);
    static const char head[] = "{\"displayTimeUnit\":\"ns\",\"otherData\":{\"producer\":\"weft\"";
    CHECK(strncmp(s1, head, sizeof head - 1) == 0);
    CHECK(strstr(s1, "\"name\":\"unit \\\"algo\\\"??\"") != NULL); /* escaped, ASCII only */
    CHECK(strstr(s1, "\\u") == NULL);
    weft_trace_init(&u, 0);
    CHECK(weft_trace_read_memory(&u, s1, n1, "s1", d) == WEFT_OK);
    CHECK(weft_diag_size(d) == 0);
    char *s2 = write_str(&u, &n2);
    CHECK(n1 == n2 && memcmp(s1, s2, n1) == 0);
    /* The model survives, except the name's characters that JSON output replaced. */
    CHECK(u.ncalls == 2 && strcmp(u.calls[0].algo, "unit \"algo\"??") == 0);
    CHECK(same_model(&t, &u));

    /* A second file with an earlier time base: everything is rebased onto it. */
    weft_trace_init(&v, 999000);
    weft_trace_callinfo ci = callinfo(0, (const weft_trace_tb[]){{1, 1, 0, 3, 3, steps0}});
    ci.seq = 6;
    ci.ntbs = 1;
    weft_trace_tbhdr hdr = {1000100, 1000300, 1, 50, 7, 0};
    weft_trace_rec r1 = rec(1000150, 1000250, 0, 0, 0, 0, 0, 0, 0);
    CHECK(weft_trace_add_call(&v, &ci, &hdr, &r1, 1, NULL, d) == WEFT_OK);
    size_t n3;
    char *s3 = write_str(&v, &n3);
    CHECK(weft_trace_read_memory(&u, s3, n3, "s3", d) == WEFT_OK);
    CHECK(u.time_base_ns == 999000 && u.nfiles == 2 && u.ncalls == 3);
    CHECK(u.calls[0].seq == 5 && u.calls[0].t0 == 1100 && u.calls[2].seq == 6 &&
          u.calls[2].t0 == 1100 && u.calls[2].file == 1 && u.calls[0].file == 0);
    /* The same file twice: its calls collide. */
    weft_diag_clear(d);
    CHECK(weft_trace_read_memory(&u, s3, n3, "again", d) == WEFT_ERR_INPUT);
    CHECK(u.nfiles == 2 && u.ncalls == 3);
    char *m = weft_diag_format(weft_diag_get(d, 0));
    CHECK(strstr(m, "again:9: error: call 6 of rank 0 is also in s3 (line 9)") != NULL);
    if (!strstr(m, "again:9")) fprintf(stderr, "%s\n", m);
    free(m);

    /* Incremental writing gives the same events as one write (names first in both). */
    weft_trace_writer *w = NULL;
    char *path = weft_asprintf("%s/weft_trace_unit_%d.json",
                               getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp", (int)getpid());
    CHECK(weft_trace_writer_open(path, t.time_base_ns, &w, d) == WEFT_OK);
    CHECK(weft_trace_writer_append(w, &t) == WEFT_OK);
    CHECK(weft_trace_writer_close(w) == WEFT_OK);
    char *data = NULL;
    size_t len = 0;
    CHECK(weft_read_file(path, &data, &len, d) == WEFT_OK);
    CHECK(len == n1 && data && memcmp(data, s1, n1) == 0);
    remove(path);
    free(data);
    free(path);
    CHECK(weft_trace_writer_open("/nonexistent-dir/x.json", 0, &w, d) == WEFT_ERR_SYSTEM);

    /* The analyses run and name the critical path. */
    char *rep = NULL;
    size_t rlen = 0;
    FILE *f = open_memstream(&rep, &rlen);
    weft_trace_summary_opts so = {-1, 0};
    CHECK(weft_trace_summarize(&t, &so, f) == WEFT_OK);
    weft_trace_check_opts co = {0.10};
    weft_trace_check(&t, &co, f, NULL);
    fclose(f);
    CHECK(strstr(rep, "critical path of call 5") != NULL);
    free(rep);

    free(s1);
    free(s2);
    free(s3);
    weft_trace_free(&t);
    weft_trace_free(&u);
    weft_trace_free(&v);
    weft_diag_free(d);
}

/* ---- the tracer, on host memory ---------------------------------------------------------------
 */
typedef struct hostbe {
    int syncs, capturing, allocs, frees, clocks;
    int64_t offset; /* the "GPU" clock runs this far ahead */
} hostbe;

static void *hb_alloc(void *ctx, size_t n) {
    ((hostbe *)ctx)->allocs++;
    return malloc(n);
}
static void hb_free(void *ctx, void *p) {
    ((hostbe *)ctx)->frees++;
    free(p);
}
static int hb_sync(void *ctx, void *stream) {
    (void)stream;
    ((hostbe *)ctx)->syncs++;
    return 0;
}
static int hb_copy(void *ctx, void *dst, const void *src, size_t n) {
    (void)ctx;
    memcpy(dst, src, n);
    return 0;
}
static int hb_capturing(void *ctx, void *stream) {
    (void)stream;
    return ((hostbe *)ctx)->capturing;
}
static int hb_clock(void *ctx, int64_t *h, uint64_t *g, int64_t *e) {
    hostbe *b = ctx;
    b->clocks++;
    *h = weft_trace_host_now();
    *g = (uint64_t)(*h + b->offset);
    *e = 50;
    return 0;
}

/* What a CTA of the interpreter writes: every execution of every step, in order. */
static void fake_kernel(const weft_trace_callinfo *ci, const weft_trace_dev *dev, int64_t offset) {
    const uint64_t start = (uint64_t)(weft_trace_host_now() + offset);
    for (int32_t b = 0; b < ci->ntbs; b++) {
        weft_trace_tbhdr *h = &dev->hdr[b];
        uint32_t sent = 0, got = 0;
        uint64_t now = start;       /* the CTAs run side by side */
        memset(h, 0xa5, sizeof *h); /* stale bytes: the CTA writes its whole header */
        h->n = h->stopped = 0;
        h->spos0 = 0xfffffff0u, h->rpos0 = 3; /* counters from earlier calls */
        h->t_begin = now;
        for (int32_t it = 0; it < ci->niter; it++)
            for (int32_t s = 0; s < ci->tbs[b].nsteps; s++, now += 100) {
                if (h->n++ >= dev->cap) continue;
                weft_trace_rec *r = &dev->rec[(size_t)b * dev->cap + h->n - 1];
                memset(r, 0, sizeof *r);
                r->t0 = now, r->t1 = now + 90, r->step = s, r->iter = it;
                unsigned f = weft_step_flags((weft_step_type)ci->tbs[b].steps[s].type);
                r->spos = h->spos0 + sent, r->rpos = h->rpos0 + got;
                sent += (f & WEFT_STEP_F_SEND) != 0;
                got += (f & WEFT_STEP_F_RECV) != 0;
                r->bytes = 64;
            }
        h->t_end = now + 5;
    }
}

static void test_tracer(void) {
    weft_diag *d = weft_diag_new();
    hostbe hb = {0, 0, 0, 0, 0, 123456};
    weft_tracer_backend be = {&hb,     hb_alloc,     hb_free,  hb_sync,
                              hb_copy, hb_capturing, hb_clock, NULL};
    const char *tmp = getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
    char *pat = weft_asprintf("%s/weft_tracer_%d_%%r_%%%%.json", tmp, (int)getpid());
    char *pat2 = weft_asprintf("%s/weft_tracer2_%d", tmp, (int)getpid());
    /* 2 tbs x 3 steps x 4 iterations = 12 records per tb: 32*2 + 12*2*48 = 1216 bytes a call;
     * an arena of 3000 bytes holds two calls (regions start at multiples of 256). */
    const weft_trace_tb tbs[2] = {{1, 1, 0, 3, 3, steps0}, {1, 1, 1, 3, 3, steps0}};
    weft_trace_callinfo ci = callinfo(0, tbs);
    ci.niter = 4;
    ci.ntbs = 2;
    weft_tracer *t = NULL, *t2 = NULL, *t3 = NULL;
    CHECK(weft_tracer_open(pat, 1, &be, 3000, &t, d) == WEFT_OK);
    char *want = weft_asprintf("%s/weft_tracer_%d_1_%%.json", tmp, (int)getpid());
    CHECK_STR(weft_tracer_path(t), want);
    /* The same pattern again: a second file, not the same one. */
    CHECK(weft_tracer_open(pat, 1, &be, 3000, &t2, d) == WEFT_OK);
    char *want2 = weft_asprintf("%s/weft_tracer_%d_1_%%.2.json", tmp, (int)getpid());
    CHECK_STR(weft_tracer_path(t2), want2);
    CHECK(weft_tracer_open(pat2, 7, &be, 0, &t3, d) == WEFT_OK);
    char *want3 = weft_asprintf("%s/weft_tracer2_%d.rank7.json", tmp, (int)getpid());
    CHECK_STR(weft_tracer_path(t3), want3);
    CHECK(hb.clocks == 3);
    weft_trace_dev dev;
    for (int c = 0; c < 5; c++) {
        ci.seq = c;
        CHECK(weft_tracer_launch(t, &ci, NULL, &dev) == WEFT_OK);
        CHECK(dev.rec != NULL && dev.cap == 12);
        fake_kernel(&ci, &dev, hb.offset);
    }
    CHECK(hb.syncs == 2); /* calls 0-1 and 2-3 were collected when the next did not fit */
    /* A launch that failed after the tracer gave it a region: forgotten. */
    ci.seq = 99;
    CHECK(weft_tracer_launch(t, &ci, NULL, &dev) == WEFT_OK && dev.rec != NULL);
    weft_tracer_cancel(t);
    hb.capturing = 1;
    CHECK(weft_tracer_launch(t, &ci, NULL, &dev) == WEFT_OK && dev.rec == NULL);
    CHECK(weft_tracer_untraced(t) == 1);
    hb.capturing = 0;
    /* A call larger than the arena keeps the first executions of each tb. */
    ci.seq = 5;
    ci.niter = 100;
    CHECK(weft_tracer_launch(t, &ci, NULL, &dev) == WEFT_OK && dev.cap == (3000 - 64) / 96);
    fake_kernel(&ci, &dev, hb.offset);
    CHECK(weft_tracer_flush(t) == WEFT_OK && hb.syncs == 4);
    CHECK(weft_tracer_flush(t) == WEFT_OK && hb.syncs == 4); /* nothing pending */
    CHECK(weft_tracer_close(t) == WEFT_OK);
    CHECK(weft_tracer_close(t3) == WEFT_OK);
    /* The file: 6 calls, the last one with its overflow counted. */
    weft_trace rd;
    weft_trace_init(&rd, 0);
    CHECK(weft_trace_read_file(&rd, want, d) == WEFT_OK);
    CHECK(rd.ncalls == 6 && rd.nslices == 5 * 24 + 2 * 30);
    CHECK(rd.ncalls == 6 && rd.calls[5].dropped == 2 * (300 - 30) && rd.calls[5].records == 60);
    CHECK(rd.ncalls == 6 && rd.calls[0].clock_err_ns == 50);
    /* Times are on the host clock: the GPU's offset is gone. */
    int64_t now = weft_trace_host_now() - rd.time_base_ns;
    CHECK(rd.ncalls == 6 && rd.calls[0].t0 >= 0 && rd.calls[5].t1 <= now + 1000000);
    weft_trace_check_opts co = {0.5};
    FILE *dn = fopen("/dev/null", "w");
    CHECK(weft_trace_check(&rd, &co, dn, NULL) == 2); /* the call with dropped records */
    fclose(dn);
    weft_trace_free(&rd);
    weft_diag_free(d);
    d = weft_diag_new();
    weft_trace_init(&rd, 0);
    CHECK(weft_trace_read_file(&rd, want3, d) == WEFT_OK && rd.ncalls == 0);
    weft_trace_free(&rd);
    /* Errors: an unwritable path, no device memory. */
    weft_tracer *bad = NULL;
    CHECK(weft_tracer_open("/nonexistent-dir/x", 0, &be, 0, &bad, d) == WEFT_ERR_SYSTEM && !bad);
    CHECK(weft_tracer_open("", 0, &be, 0, &bad, d) == WEFT_ERR_USAGE);
    int allocs = hb.allocs, frees = hb.frees;
    CHECK(allocs == frees + 1); /* t2 still open */
    CHECK(weft_tracer_close(t2) == WEFT_OK && hb.allocs == hb.frees);
    remove(want);
    remove(want2);
    remove(want3);
    free(want);
    free(want2);
    free(want3);
    free(pat);
    free(pat2);
    weft_diag_free(d);
}

/* ---- mutations ------------------------------------------------------------------------------ */
static uint64_t rng = 0x9e3779b97f4a7c15ull;
static uint32_t next_rand(void) {
    rng = rng * 6364136223846793005ull + 1442695040888963407ull;
    return (uint32_t)(rng >> 33);
}

/* Reads text; it must be accepted, or rejected with at least one error. Accepted traces go
 * through the writer and both analyses. */
static void one(const char *text, size_t len, size_t *accepted) {
    weft_diag *d = weft_diag_new();
    weft_trace t;
    weft_trace_init(&t, 0);
    weft_result r = weft_trace_read_memory(&t, text, len, "m", d);
    if (r == WEFT_OK) {
        ++*accepted;
        FILE *f = fopen("/dev/null", "w");
        weft_trace_summary_opts so = {-1, 10};
        weft_trace_check_opts co = {0.10};
        weft_trace_write(&t, f);
        weft_trace_summarize(&t, &so, f);
        weft_trace_check(&t, &co, f, NULL);
        fclose(f);
    } else if (weft_diag_count(d, WEFT_SEV_ERROR) == 0) {
        fprintf(stderr, "rejected without an error: %.*s\n", (int)(len < 200 ? len : 200), text);
        check_failures++;
    }
    weft_trace_free(&t);
    weft_diag_free(d);
}

static void test_mutations(const char *extra) {
    weft_diag *d = weft_diag_new();
    weft_trace t;
    weft_trace_init(&t, 1000000);
    build(&t, d, 0);
    size_t n;
    char *s = write_str(&t, &n);
    char *buf = malloc(n + 1);
    size_t acc = 0;
    for (size_t k = 0; k <= n; k += 3)
        one(s, k, &acc);
    static const char pool[] = "{}[],:\"\\-0123456789.eE+ \nXMtfn\x01\xff";
    for (int i = 0; i < 4000; i++) {
        memcpy(buf, s, n);
        int edits = 1 + (int)(next_rand() % 3);
        for (int e = 0; e < edits; e++) {
            size_t at = next_rand() % n;
            buf[at] = pool[next_rand() % (sizeof pool - 1)];
        }
        one(buf, n, &acc);
    }
    /* Numbers changed into extremes, one field at a time. */
    static const char *const big[] = {"-1",
                                      "0",
                                      "9223372036854775807",
                                      "-9223372036854775808",
                                      "576460752303423",
                                      "-576460752303423.488",
                                      "1e18",
                                      "3"};
    for (size_t pos = 0; pos + 1 < n; pos++) {
        if (!(s[pos] == ':' && (s[pos + 1] == '-' || (s[pos + 1] >= '0' && s[pos + 1] <= '9'))))
            continue;
        size_t end = pos + 1;
        while (end < n && strchr("-0123456789.", s[end]))
            end++;
        for (size_t b = 0; b < sizeof big / sizeof *big; b++) {
            size_t bl = strlen(big[b]);
            char *m = malloc(n + bl + 1);
            memcpy(m, s, pos + 1);
            memcpy(m + pos + 1, big[b], bl);
            memcpy(m + pos + 1 + bl, s + end, n - end);
            one(m, pos + 1 + bl + (n - end), &acc);
            free(m);
        }
    }
    CHECK(acc > 50); /* the sweep exercised the analyses too */
    printf("mutation sweep: %zu variants accepted\n", acc);
    if (extra) { /* a trace file from the command line: its prefixes and mutations too */
        char *data = NULL;
        size_t len = 0;
        if (weft_read_file(extra, &data, &len, d) == WEFT_OK && len > 0) {
            for (size_t k = 0; k <= len; k += 1 + len / 500)
                one(data, k, &acc);
            for (int i = 0; i < 500; i++) {
                size_t at = next_rand() % len;
                char old = data[at];
                data[at] = pool[next_rand() % (sizeof pool - 1)];
                one(data, len, &acc);
                data[at] = old;
            }
        }
        free(data);
    }
    free(buf);
    free(s);
    weft_trace_free(&t);
    weft_diag_free(d);
}

static weft_tracer *atexit_close;
static void close_at_exit(void) {
    if (atexit_close && weft_tracer_close(atexit_close) != WEFT_OK) _exit(3);
}

/* Records two calls and returns without closing: the exit handler must complete the file (and
 * the owner's close after it must only free). */
static int exit_without_close(const char *pattern, int close_later) {
    static hostbe hb = {0, 0, 0, 0, 0, 0};
    weft_tracer_backend be = {&hb,     hb_alloc,     hb_free,  hb_sync,
                              hb_copy, hb_capturing, hb_clock, NULL};
    /* static: the calls are collected at exit, after this function returned */
    static const weft_trace_tb tbs[2] = {{1, 1, 0, 3, 3, steps0}, {1, 1, 1, 3, 3, steps0}};
    weft_trace_callinfo ci = callinfo(0, tbs);
    static weft_tracer *t;
    weft_trace_dev dev;
    if (weft_tracer_open(pattern, 0, &be, 0, &t, NULL) != WEFT_OK) return 1;
    for (int c = 0; c < 2; c++) {
        ci.seq = c;
        if (weft_tracer_launch(t, &ci, NULL, &dev) != WEFT_OK || dev.rec == NULL) return 1;
        fake_kernel(&ci, &dev, 0);
    }
    printf("%s\n", weft_tracer_path(t));
    if (close_later) atexit_close = t; /* an owner's exit handler that runs after weft's */
    return 0;
}

int main(int argc, char **argv) {
    if (argc == 3 && strcmp(argv[1], "--exit-without-close") == 0)
        return exit_without_close(argv[2], 0);
    if (argc == 3 && strcmp(argv[1], "--exit-then-close") == 0) {
        atexit(close_at_exit); /* registered first: runs after the tracer's own handler */
        return exit_without_close(argv[2], 1);
    }
    test_json_grammar();
    test_json_numbers();
    test_clock();
    test_records();
    test_roundtrip();
    test_tracer();
    test_mutations(argc > 1 ? argv[1] : NULL);
    CHECK_DONE();
}
