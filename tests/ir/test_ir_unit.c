/* test_ir_unit.c — unit tests of the IR reader, writer, validation and listing on small inputs:
 * writer shape (attribute order, escaping, no tabs or declaration), in-memory IR, sorting,
 * legacy defaults, the root extension, and hostile bytes. */
#include "check.h"
#include "weft_ir.h"

#include <stdlib.h>
#include <string.h>

static weft_step mk(weft_step_type t, weft_buf sb, int32_t so, weft_buf db, int32_t dof,
                    int32_t c) {
    weft_step s = {t, sb, db, so, dof, c, -1, -1, 0, 0};
    return s;
}

/* A 2-rank allreduce ring, built through the API as the compiler would. */
static weft_algo *ring2(const char *name) {
    weft_algo *a = weft_algo_new(name, WEFT_COLL_ALLREDUCE, 2, 2);
    if (a == NULL) return NULL;
    a->nchannels = 1;
    a->inplace = 1;
    a->outofplace = 0;
    for (int r = 0; r < 2; r++) {
        weft_gpu *g = &a->gpus[r];
        g->i_chunks = 2;
        weft_tb *tb = weft_gpu_add_tb(g, 1 - r, 1 - r, 0);
        if (tb == NULL) goto fail;
        weft_step s0 = mk(WEFT_STEP_SEND, WEFT_BUF_INPUT, r, WEFT_BUF_INPUT, r, 1);
        weft_step s1 = mk(WEFT_STEP_RRCS, WEFT_BUF_INPUT, 1 - r, WEFT_BUF_INPUT, 1 - r, 1);
        weft_step s2 = mk(WEFT_STEP_RECV, WEFT_BUF_INPUT, r, WEFT_BUF_INPUT, r, 1);
        if (weft_tb_add_step(tb, &s0) < 0 || weft_tb_add_step(tb, &s1) < 0 ||
            weft_tb_add_step(tb, &s2) < 0)
            goto fail;
    }
    return a;
fail:
    weft_algo_free(a);
    return NULL;
}

static const char ring2_xml[] =
    "<algo name=\"ring\" proto=\"Simple\" nchannels=\"1\" nchunksperloop=\"2\" ngpus=\"2\" "
    "coll=\"allreduce\" inplace=\"1\" outofplace=\"0\" minBytes=\"0\" maxBytes=\"0\">\n"
    "  <gpu id=\"0\" i_chunks=\"2\" o_chunks=\"0\" s_chunks=\"0\">\n"
    "    <tb id=\"0\" send=\"1\" recv=\"1\" chan=\"0\">\n"
    "      <step s=\"0\" type=\"s\" srcbuf=\"i\" srcoff=\"0\" dstbuf=\"i\" dstoff=\"0\" cnt=\"1\" "
    "depid=\"-1\" deps=\"-1\" hasdep=\"0\"/>\n"
    "      <step s=\"1\" type=\"rrcs\" srcbuf=\"i\" srcoff=\"1\" dstbuf=\"i\" dstoff=\"1\" "
    "cnt=\"1\" depid=\"-1\" deps=\"-1\" hasdep=\"0\"/>\n"
    "      <step s=\"2\" type=\"r\" srcbuf=\"i\" srcoff=\"0\" dstbuf=\"i\" dstoff=\"0\" cnt=\"1\" "
    "depid=\"-1\" deps=\"-1\" hasdep=\"0\"/>\n"
    "    </tb>\n"
    "  </gpu>\n"
    "  <gpu id=\"1\" i_chunks=\"2\" o_chunks=\"0\" s_chunks=\"0\">\n"
    "    <tb id=\"0\" send=\"0\" recv=\"0\" chan=\"0\">\n"
    "      <step s=\"0\" type=\"s\" srcbuf=\"i\" srcoff=\"1\" dstbuf=\"i\" dstoff=\"1\" cnt=\"1\" "
    "depid=\"-1\" deps=\"-1\" hasdep=\"0\"/>\n"
    "      <step s=\"1\" type=\"rrcs\" srcbuf=\"i\" srcoff=\"0\" dstbuf=\"i\" dstoff=\"0\" "
    "cnt=\"1\" depid=\"-1\" deps=\"-1\" hasdep=\"0\"/>\n"
    "      <step s=\"2\" type=\"r\" srcbuf=\"i\" srcoff=\"1\" dstbuf=\"i\" dstoff=\"1\" cnt=\"1\" "
    "depid=\"-1\" deps=\"-1\" hasdep=\"0\"/>\n"
    "    </tb>\n"
    "  </gpu>\n"
    "</algo>\n";

/* The first diagnostic, formatted as printed; "" when none. Owned by the caller. */
static char *first_diag(const weft_diag *d) {
    const weft_diag_entry *e = weft_diag_get(d, 0);
    return e ? weft_diag_format(e) : weft_strdup("");
}

static void test_writer_golden(void) {
    weft_algo *a = ring2("ring");
    CHECK(a != NULL);
    if (a == NULL) return;
    weft_diag *d = weft_diag_new();
    CHECK(weft_ir_validate(a, d) == WEFT_OK);
    CHECK(weft_diag_size(d) == 0);
    char *x = NULL;
    CHECK(weft_ir_write_string(a, &x) == WEFT_OK);
    CHECK_STR(x, ring2_xml);
    /* weft_ir_write writes the same bytes to a stream. */
    FILE *f = tmpfile();
    CHECK(f != NULL);
    if (f) {
        CHECK(weft_ir_write(a, f) == WEFT_OK);
        long n = ftell(f);
        rewind(f);
        char *y = calloc((size_t)n + 1, 1);
        CHECK(y && fread(y, 1, (size_t)n, f) == (size_t)n);
        CHECK_STR(y, x);
        free(y);
        fclose(f);
    }
    free(x);
    weft_diag_free(d);
    weft_algo_free(a);
}

/* The shape the hand-written MSCCL parsers need, checked line by line on a bigger file. */
static void test_writer_shape(void) {
    weft_algo *a = ring2("shape");
    if (a == NULL) return;
    /* Some dependencies, a nop and scratch, so every attribute takes several values. */
    a->gpus[0].s_chunks = 1;
    weft_tb *t1 = weft_gpu_add_tb(&a->gpus[0], -1, -1, 0);
    weft_step nop = mk(WEFT_STEP_NOP, WEFT_BUF_INPUT, -1, WEFT_BUF_OUTPUT, -1, 0);
    nop.depid = 0, nop.deps = 2;
    weft_step cp = mk(WEFT_STEP_CPY, WEFT_BUF_INPUT, 0, WEFT_BUF_SCRATCH, 0, 1);
    a->gpus[0].tbs[0].steps[2].hasdep = 1;
    CHECK(t1 && weft_tb_add_step(t1, &nop) == 0 && weft_tb_add_step(t1, &cp) == 1);
    weft_diag *d = weft_diag_new();
    CHECK(weft_ir_validate(a, d) == WEFT_OK);
    char *x = NULL;
    CHECK(weft_ir_write_string(a, &x) == WEFT_OK);
    if (x == NULL) goto done;
    CHECK(strncmp(x, "<algo ", 6) == 0); /* no <?xml ...?> declaration, no comment */
    CHECK(strchr(x, '\t') == NULL);
    CHECK(strchr(x, '\'') == NULL); /* double quotes only */
    static const char *const order[] = {"s",      "type", "srcbuf", "srcoff", "dstbuf",
                                        "dstoff", "cnt",  "depid",  "deps",   "hasdep"};
    int steps = 0, lines = 0;
    for (char *line = x; *line; lines++) {
        char *nl = strchr(line, '\n');
        CHECK(nl != NULL); /* every line ends in a newline */
        if (nl == NULL) break;
        *nl = '\0';
        /* One element per line: a single '<', and the line ends at its '>'. */
        CHECK(strchr(line, '<') == strrchr(line, '<'));
        CHECK(nl > line && nl[-1] == '>');
        size_t indent = strspn(line, " ");
        const char *tag = line + indent;
        if (strncmp(tag, "<step ", 6) == 0) {
            steps++;
            CHECK(indent == 6);
            CHECK(strcmp(nl - 2, "/>") == 0);
            /* All ten attributes, in order, separated by single spaces. */
            const char *p = tag + 5;
            for (int k = 0; k < 10; k++) {
                CHECK(*p == ' ');
                p++;
                size_t n = strlen(order[k]);
                CHECK(strncmp(p, order[k], n) == 0 && p[n] == '=' && p[n + 1] == '"');
                p = strchr(p + n + 2, '"');
                if (p == NULL) break;
                p++;
            }
            CHECK(p && strcmp(p, "/>") == 0);
        } else if (strncmp(tag, "<tb ", 4) == 0 || strncmp(tag, "</tb>", 5) == 0) {
            CHECK(indent == 4);
        } else if (strncmp(tag, "<gpu ", 5) == 0 || strncmp(tag, "</gpu>", 6) == 0) {
            CHECK(indent == 2);
        } else {
            CHECK(indent == 0);
        }
        line = nl + 1;
    }
    CHECK(steps == 8);
    CHECK(lines == 20);
done:
    free(x);
    weft_diag_free(d);
    weft_algo_free(a);
}

static void test_escaping_and_root(void) {
    weft_algo *a = ring2("a&b<\"c\">\nx\ty");
    if (a == NULL) return;
    char *x = NULL;
    CHECK(weft_ir_write_string(a, &x) == WEFT_OK);
    const char *want = "<algo name=\"a&amp;b&lt;&quot;c&quot;&gt;&#10;x&#9;y\" proto=\"Simple\"";
    CHECK(x && strncmp(x, want, strlen(want)) == 0);
    CHECK(x && strstr(x, "root=") == NULL); /* allreduce has no root */
    weft_diag *d = weft_diag_new();
    weft_algo *b = NULL;
    CHECK(x && weft_ir_read_memory(x, strlen(x), "esc.xml", &b, d) == WEFT_OK);
    CHECK(b && strcmp(b->name, a->name) == 0);
    CHECK(b && weft_algo_equal(a, b, NULL, 0));
    free(x);
    weft_algo_free(b);
    weft_algo_free(a);

    /* Names that are not UTF-8 (or name U+FFFF) still write a file that reads back: those bytes
     * become '?'; well-formed UTF-8 stays. */
    a = ring2("L\xEC"
              "128 \xC3\xA9 \xED\xA0\x80 \xEF\xBF\xBF \xF4\x90\x80\x80 \xC3");
    if (a == NULL) return;
    CHECK(weft_ir_write_string(a, &x) == WEFT_OK);
    CHECK(x && strstr(x, "name=\"L?128 \xC3\xA9 ??? ? ???? ?\"") != NULL);
    weft_diag_clear(d);
    CHECK(x && weft_ir_read_memory(x, strlen(x), "utf8.xml", &b, d) == WEFT_OK);
    CHECK(b && weft_algo_equal(a, b, NULL, 0));
    free(x);
    weft_algo_free(b);
    weft_algo_free(a);

    /* Rooted collectives carry root="R", last among <algo>'s attributes. */
    a = weft_algo_new("bc", WEFT_COLL_BROADCAST, 2, 1);
    if (a == NULL) return;
    a->nchannels = 1;
    a->root = 1;
    for (int r = 0; r < 2; r++)
        a->gpus[r].i_chunks = a->gpus[r].o_chunks = 1;
    weft_tb *s = weft_gpu_add_tb(&a->gpus[1], 0, -1, 0);
    weft_tb *v = weft_gpu_add_tb(&a->gpus[0], -1, 1, 0);
    weft_step ss = mk(WEFT_STEP_SEND, WEFT_BUF_INPUT, 0, WEFT_BUF_INPUT, 0, 1);
    weft_step rr = mk(WEFT_STEP_RECV, WEFT_BUF_INPUT, 0, WEFT_BUF_OUTPUT, 0, 1);
    CHECK(s && v && weft_tb_add_step(s, &ss) == 0 && weft_tb_add_step(v, &rr) == 0);
    weft_diag_clear(d);
    CHECK(weft_ir_validate(a, d) == WEFT_OK);
    CHECK(weft_ir_write_string(a, &x) == WEFT_OK);
    CHECK(x && strstr(x, "minBytes=\"0\" maxBytes=\"0\" root=\"1\">\n") != NULL);
    CHECK(x && weft_ir_read_memory(x, strlen(x), "bc.xml", &b, d) == WEFT_OK);
    CHECK(b && b->root == 1 && weft_algo_equal(a, b, NULL, 0));
    /* root="R" out of range is an error; an unrooted collective ignores root. */
    a->root = 2;
    weft_diag_clear(d);
    CHECK(weft_ir_validate(a, d) == WEFT_ERR_INPUT);
    char *m = first_diag(d);
    CHECK_STR(m, "error: root=\"2\" is out of range (ngpus is 2)");
    free(m);
    free(x);
    weft_algo_free(b);
    weft_algo_free(a);
    weft_diag_free(d);
}

/* Without a file, validation messages carry no location but keep the rank/tb/step prefix. */
static void test_validate_in_memory(void) {
    weft_algo *a = ring2("bad");
    if (a == NULL) return;
    weft_diag *d = weft_diag_new();
    a->gpus[1].tbs[0].send = 1;
    a->gpus[0].tbs[0].steps[1].cnt = 0;
    a->gpus[0].tbs[0].steps[2].depid = 0;
    a->gpus[0].tbs[0].steps[2].deps = 0; /* step 0 does not signal */
    CHECK(weft_ir_validate(a, d) == WEFT_ERR_INPUT);
    CHECK(weft_diag_count(d, WEFT_SEV_ERROR) == 3);
    static const char *const want[] = {
        "error: rank 0 tb 0 step 1: cnt=\"0\": a 'rrcs' step moves at least one chunk",
        "error: rank 0 tb 0 step 2: depends on tb 0 step 0, which has hasdep=\"0\" (it would "
        "never signal)",
        "error: rank 1 tb 0: send=\"1\": a tb cannot send to itself",
    };
    for (size_t i = 0; i < 3; i++) {
        const weft_diag_entry *e = weft_diag_get(d, i);
        char *m = e ? weft_diag_format(e) : NULL;
        CHECK_STR(m, want[i]);
        free(m);
    }
    /* The writer refuses what the format cannot express. */
    char *x = (char *)"unchanged";
    a->gpus[0].tbs[0].steps[0].type = (weft_step_type)99;
    CHECK(weft_ir_write_string(a, &x) == WEFT_ERR_INPUT);
    CHECK(x == NULL);
    a->gpus[0].tbs[0].steps[0].type = WEFT_STEP_SEND;
    a->proto = (weft_proto)7;
    CHECK(weft_ir_write_string(a, &x) == WEFT_ERR_INPUT);
    weft_diag_clear(d);
    CHECK(weft_ir_validate(a, d) == WEFT_ERR_INPUT);
    CHECK(weft_ir_validate(NULL, d) == WEFT_ERR_INPUT);
    weft_diag_free(d);
    weft_algo_free(a);
}

/* tbs and steps come in any order, XML declarations, comments and CRLF are fine. */
static void test_reader_liberal(void) {
    const char *text =
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\r\n"
        "<!-- a comment -->\r\n"
        "<algo name='x' proto='LL' nchannels='1' nchunksperloop='2' ngpus='2' coll='allreduce'\r\n"
        "      inplace='1' outofplace='0' minBytes='0' maxBytes='0'>\r\n"
        "  <gpu id='1' i_chunks='2' o_chunks='0' s_chunks='0'>\r\n"
        "    <tb id='0' send='0' recv='0' chan='0'>\r\n"
        "      <step s='2' type='r' srcbuf='i' srcoff='1' dstbuf='i' dstoff='1' cnt='1' "
        "depid='-1' deps='-1' hasdep='0'/>\r\n"
        "      <step s='0' type='s' srcbuf='i' srcoff='1' dstbuf='i' dstoff='1' cnt='1' "
        "depid='-1' deps='-1' hasdep='0'/>\r\n"
        "      <step s='1' type='rrcs' srcbuf='i' srcoff='0' dstbuf='i' dstoff='0' cnt='1' "
        "depid='-1' deps='-1' hasdep='0'/>\r\n"
        "    </tb>\r\n"
        "  </gpu>\r\n"
        "  <gpu id='0' i_chunks='2' o_chunks='0' s_chunks='0'>\r\n"
        "    <tb id='1' send='-1' recv='-1' chan='0'>\r\n"
        "      <step s='0' type='nop' srcbuf='i' srcoff='-1' dstbuf='o' dstoff='-1' cnt='0' "
        "depid='0' deps='2' hasdep='0'/>\r\n"
        "    </tb>\r\n"
        "    <tb id='0' send='1' recv='1' chan='0'>\r\n"
        "      <step s='0' type='s' srcbuf='i' srcoff='0' dstbuf='i' dstoff='0' cnt='1' "
        "depid='-1' deps='-1' hasdep='0'/>\r\n"
        "      <step s='1' type='rrcs' srcbuf='i' srcoff='1' dstbuf='i' dstoff='1' cnt='1' "
        "depid='-1' deps='-1' hasdep='0'/>\r\n"
        "      <step s='2' type='r' srcbuf='i' srcoff='0' dstbuf='i' dstoff='0' cnt='1' "
        "depid='-1' deps='-1' hasdep='1'/>\r\n"
        "    </tb>\r\n"
        "  </gpu>\r\n"
        "</algo>\r\n";
    weft_diag *d = weft_diag_new();
    weft_algo *a = NULL;
    CHECK(weft_ir_read_memory(text, strlen(text), "liberal.xml", &a, d) == WEFT_OK);
    CHECK(weft_diag_size(d) == 0);
    if (a) {
        /* A start tag over several lines reports the line where it ends (libxml2 records that). */
        CHECK(a->proto == WEFT_PROTO_LL && a->line == 4);
        CHECK(a->gpus[0].ntbs == 2 && a->gpus[0].tbs[0].send == 1 && a->gpus[0].tbs[1].send == -1);
        CHECK(a->gpus[0].tbs[0].line == 16 && a->gpus[0].tbs[1].line == 13);
        CHECK(a->gpus[1].tbs[0].steps[0].type == WEFT_STEP_SEND);
        CHECK(a->gpus[1].tbs[0].steps[1].type == WEFT_STEP_RRCS);
        CHECK(a->gpus[1].tbs[0].steps[2].type == WEFT_STEP_RECV);
        CHECK(a->gpus[1].tbs[0].steps[2].line == 7);
        CHECK(a->gpus[0].tbs[1].steps[0].depid == 0 && a->gpus[0].tbs[1].steps[0].deps == 2);
        CHECK_STR(a->file, "liberal.xml");
        CHECK(!a->legacy);
    }
    weft_algo_free(a);
    weft_diag_free(d);
}

static void test_legacy(void) {
    const char *text =
        "<algo name=\"l\" proto=\"Simple\" nchannels=\"1\" nchunksperloop=\"1\" ngpus=\"1\" "
        "coll=\"reduce_scatter\" inplace=\"0\">\n"
        "  <gpu id=\"0\" i_chunks=\"1\" o_chunks=\"1\" s_chunks=\"0\">\n"
        "    <tb id=\"0\" send=\"-1\" recv=\"-1\" chan=\"0\">\n"
        "      <step s=\"0\" type=\"cpy\" srcbuf=\"i\" srcoff=\"0\" dstbuf=\"o\" dstoff=\"0\" "
        "cnt=\"1\" depid=\"-1\" deps=\"-1\" hasdep=\"0\"/>\n"
        "    </tb>\n"
        "  </gpu>\n"
        "</algo>\n";
    weft_diag *d = weft_diag_new();
    weft_algo *a = NULL;
    CHECK(weft_ir_read_memory(text, strlen(text), NULL, &a, d) == WEFT_OK);
    CHECK(a && a->legacy && a->outofplace == 1 && a->inplace == 0);
    CHECK(a && a->min_bytes == 0 && a->max_bytes == 0);
    CHECK(a && a->coll == WEFT_COLL_REDUCESCATTER);
    CHECK(weft_diag_size(d) == 1 && weft_diag_count(d, WEFT_SEV_INFO) == 1);
    char *m = first_diag(d);
    CHECK_STR(m, "<memory>:1: info: legacy MSCCL format (no outofplace, minBytes, maxBytes): "
                 "assuming outofplace=\"1\", minBytes=\"0\", maxBytes=\"0\" (unbounded)");
    free(m);
    char *x = NULL;
    CHECK(a && weft_ir_write_string(a, &x) == WEFT_OK);
    CHECK(x && strstr(x, "coll=\"reducescatter\" inplace=\"0\" outofplace=\"1\" minBytes=\"0\" "
                         "maxBytes=\"0\">\n") != NULL);
    free(x);
    weft_algo_free(a);
    weft_diag_free(d);
}

/* Bytes that are not XML, or not text at all, are rejected with a message; never a crash. */
static void test_hostile(void) {
    static const struct {
        const char *data;
        size_t len;
        const char *want;
    } cases[] = {
        {"\0\0\0\0", 4, "h.xml:1: error: malformed XML: Document is empty"},
        {"", 0, "h.xml:1: error: malformed XML: Document is empty"},
        {"<algo", 5, "h.xml:1: error: malformed XML: Couldn't find end of Start Tag algo line 1"},
        {"<algo/>", 7, "h.xml:1: error: <algo> is missing attribute 'ngpus'"},
        {"<algo xmlns='urn:x'/>", 21,
         "h.xml:1: error: root element is <algo xmlns=\"urn:x\">, expected <algo>"},
        {"<?xml version='1.0' encoding='no-such-encoding'?><algo/>", 56,
         "h.xml:1: error: malformed XML: Unsupported encoding no-such-encoding"},
        {"<algo>&undefined;</algo>", 24,
         "h.xml:1: error: malformed XML: Entity 'undefined' not defined"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        weft_diag *d = weft_diag_new();
        weft_algo *a = (weft_algo *)&cases; /* must be reset to NULL */
        CHECK(weft_ir_read_memory(cases[i].data, cases[i].len, "h.xml", &a, d) == WEFT_ERR_INPUT);
        CHECK(a == NULL);
        char *m = first_diag(d);
        CHECK_STR(m, cases[i].want);
        free(m);
        weft_diag_free(d);
    }
    weft_diag *d = weft_diag_new();
    weft_algo *a = NULL;
    CHECK(weft_ir_read_file("/nonexistent/weft/x.xml", &a, d) == WEFT_ERR_INPUT);
    CHECK(a == NULL && weft_diag_count(d, WEFT_SEV_ERROR) == 1);
    /* A NULL collector is allowed. */
    CHECK(weft_ir_read_memory("<x/>", 4, "n.xml", &a, NULL) == WEFT_ERR_INPUT);
    weft_diag_free(d);
}

/* Lines past 65535 (where libxml2's own line field saturates) are still exact. */
static void test_big_lines(void) {
    const char *head = "<algo name=\"x\" proto=\"LL\" nchannels=\"1\" nchunksperloop=\"1\" "
                       "ngpus=\"1\" coll=\"allreduce\" inplace=\"1\" outofplace=\"0\" "
                       "minBytes=\"0\" maxBytes=\"0\">\n";
    const char *filler = "<!-- filler -->\n";
    const char *tail = "  <gpu id=\"0\" i_chunks=\"1\" o_chunks=\"0\" s_chunks=\"0\">\n"
                       "    <tb id=\"0\" send=\"-1\" recv=\"-1\" chan=\"0\">\n"
                       "      <step s=\"0\" type=\"cpy\" srcbuf=\"i\" srcoff=\"0\" dstbuf=\"i\" "
                       "dstoff=\"3\" cnt=\"1\" depid=\"-1\" deps=\"-1\" hasdep=\"0\"/>\n"
                       "    </tb>\n  </gpu>\n</algo>\n";
    size_t nfill = 70000, len = strlen(head) + nfill * strlen(filler) + strlen(tail);
    char *text = malloc(len + 1), *p = text;
    if (text == NULL) return;
    p += sprintf(p, "%s", head);
    for (size_t i = 0; i < nfill; i++)
        p += sprintf(p, "%s", filler);
    sprintf(p, "%s", tail);
    weft_diag *d = weft_diag_new();
    weft_algo *a = NULL;
    CHECK(weft_ir_read_memory(text, len, "big.xml", &a, d) == WEFT_ERR_INPUT);
    char *m = first_diag(d);
    CHECK_STR(m, "big.xml:70004: error: rank 0 tb 0 step 0: dstbuf=\"i\" dstoff=\"3\" cnt=\"1\" "
                 "reaches past the 1 chunks of that buffer (i_chunks=\"1\")");
    free(m);
    weft_diag_free(d);
    free(text);
}

static void test_show(void) {
    weft_algo *a = ring2("ring");
    if (a == NULL) return;
    a->gpus[0].tbs[0].steps[2].hasdep = 1;
    weft_tb *t1 = weft_gpu_add_tb(&a->gpus[0], -1, -1, 0);
    weft_step re = mk(WEFT_STEP_RE, WEFT_BUF_INPUT, 0, WEFT_BUF_INPUT, 1, 1);
    re.depid = 0, re.deps = 2;
    CHECK(t1 && weft_tb_add_step(t1, &re) == 0);
    FILE *f = tmpfile();
    if (f == NULL) {
        CHECK(f != NULL);
        weft_algo_free(a);
        return;
    }
    CHECK(weft_ir_show(a, f, 0) == WEFT_OK);
    long n = ftell(f);
    rewind(f);
    char *got = calloc((size_t)n + 1, 1);
    CHECK(got && fread(got, 1, (size_t)n, f) == (size_t)n);
    fclose(f);
    CHECK_STR(got, "rank 0: 2 tbs; chunks: input 2, output 0, scratch 0\n"
                   "  tb 0: send 1, recv 1, chan 0, 3 steps\n"
                   "      0 s    i[0] -> send 1\n"
                   "      1 rrcs recv 1 + i[1] -> i[1], send 1\n"
                   "      2 r    recv 1 -> i[0]  (signals)\n"
                   "  tb 1: send -1, recv -1, chan 0, 1 step\n"
                   "      0 re   i[1] + i[0] -> i[1]  after tb 0 step 2\n"
                   "rank 1: 1 tb; chunks: input 2, output 0, scratch 0\n"
                   "  tb 0: send 0, recv 0, chan 0, 3 steps\n"
                   "      0 s    i[1] -> send 0\n"
                   "      1 rrcs recv 0 + i[0] -> i[0], send 0\n"
                   "      2 r    recv 0 -> i[1]\n"
                   "\n"
                   "algo ring: allreduce, proto Simple\n"
                   "  modes:    in-place\n"
                   "  sizes:    0 bytes .. unbounded\n"
                   "  ranks:    2\n"
                   "  chunks:   nchunksperloop 2 (2 per segment)\n"
                   "  channels: 1 (highest chan used 0)\n"
                   "  tbs:      3 (at most 2 per rank)\n"
                   "  steps:    7 (at most 3 per tb), 1 with a dependency\n"
                   "  by type:  s 2, r 2, rrcs 2, re 1\n"
                   "  chunks sent (sender -> receiver: chunks in messages):\n"
                   "    0 -> 1: 2\n"
                   "    1 -> 0: 2\n"
                   "    total 4 chunks over 2 peer pairs\n");
    free(got);
    weft_algo_free(a);
}

/* A message's chunks bound a FIFO slice, a local step's do not: the runtime's plan and the trace
 * model both ask weft_algo_msg_chunks (the model once counted local copies too). */
static void test_msg_chunks(void) {
    weft_algo *a = ring2("ring");
    CHECK(a != NULL);
    if (a == NULL) return;
    CHECK(weft_algo_msg_chunks(a) == 1);
    weft_tb *loc = weft_gpu_add_tb(&a->gpus[0], -1, -1, 0);
    weft_step cp = mk(WEFT_STEP_CPY, WEFT_BUF_INPUT, 0, WEFT_BUF_OUTPUT, 0, 2);
    CHECK(loc && weft_tb_add_step(loc, &cp) == 0);
    CHECK(weft_algo_msg_chunks(a) == 1);
    a->gpus[1].tbs[0].steps[0].cnt = 2; /* rank 1's send */
    CHECK(weft_algo_msg_chunks(a) == 2);
    weft_algo_free(a);
}

int main(void) {
    test_msg_chunks();
    test_writer_golden();
    test_writer_shape();
    test_escaping_and_root();
    test_validate_in_memory();
    test_reader_liberal();
    test_legacy();
    test_hostile();
    test_big_lines();
    test_show();
    CHECK_DONE();
}
