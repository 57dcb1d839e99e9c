/* test_lang_unit.c — the parser API: trees, locations, diagnostics, limits. */
#include "check.h"
#include "weft_lang.h"

#include <stdlib.h>
#include <string.h>

static weft_result parse(const char *src, weft_lang_program **p, weft_diag *d) {
    return weft_lang_parse_string(src, strlen(src), "t.weft", NULL, 0, p, d);
}

static char *first_diag(weft_diag *d) {
    const weft_diag_entry *e = weft_diag_get(d, 0);
    return e ? weft_diag_format(e) : NULL;
}

int main(void) {
    weft_diag *d = weft_diag_new();
    weft_lang_program *p = NULL;

    /* a small program: structure and locations */
    const char *src = "param N = 4;\nalgorithm a { collective allreduce; ranks N; }\n"
                      "copy input[0][0] -> input[1][0] chan=1;\n";
    CHECK(parse(src, &p, d) == WEFT_OK);
    CHECK(weft_diag_size(d) == 0);
    CHECK(p && p->root && p->root->kind == WEFT_LANG_FILE && p->root->nkids == 3);
    if (p && p->root && p->root->nkids == 3) {
        const weft_lang_node *cp = p->root->kids[2];
        CHECK(cp->kind == WEFT_LANG_COPY && cp->nkids == 1);
        CHECK_STR(cp->kids[0]->name, "chan");
        CHECK_STR(cp->a->name, "input");
        int line, col;
        weft_lang_linecol(p->sources, cp->loc.file, cp->loc.start, &line, &col);
        CHECK(line == 3 && col == 1);
        weft_lang_linecol(p->sources, cp->b->loc.file, cp->b->loc.start, &line, &col);
        CHECK(line == 3 && col == 21);
        CHECK_STR(weft_lang_source_path(p->sources, 0), "t.weft");
        CHECK(weft_lang_sources_count(p->sources) == 1);
        /* a report formats file:line:col, the source line and a caret under the span */
        weft_diag *d2 = weft_diag_new();
        weft_lang_report(d2, p->sources, WEFT_SEV_WARNING, cp->b->loc, "look %d", 7);
        char *s = first_diag(d2);
        CHECK_STR(s, "t.weft:3:21: warning: look 7\n"
                     "  copy input[0][0] -> input[1][0] chan=1;\n"
                     "                      ^~~~~~~~~~~");
        free(s);
        weft_diag_free(d2);
    }
    weft_lang_program_free(p);
    p = NULL;

    /* syntax errors: several per run, each with what was expected */
    weft_diag_clear(d);
    CHECK(parse("let a = ;\nlet b = 2\nlet c = 3;\n", &p, d) == WEFT_ERR_INPUT);
    CHECK(weft_diag_count(d, WEFT_SEV_ERROR) == 2);
    char *s = first_diag(d);
    CHECK_STR(s, "t.weft:1:9: error: syntax error: unexpected ';', expecting identifier, "
                 "integer, '-', '(' or '!'\n  let a = ;\n          ^");
    free(s);
    weft_lang_program_free(p);
    p = NULL;

    /* an empty file parses (the compiler then asks for an algorithm block) */
    weft_diag_clear(d);
    CHECK(parse("", &p, d) == WEFT_OK);
    CHECK(p && p->root && p->root->nkids == 0);
    weft_lang_program_free(p);
    p = NULL;

    /* deep nesting is refused, not a stack overflow */
    weft_diag_clear(d);
    size_t n = 50000;
    char *deep = malloc(4 * n + 64);
    strcpy(deep, "let x = ");
    size_t m = strlen(deep);
    for (size_t i = 0; i < n; i++)
        deep[m++] = '(';
    deep[m++] = '1';
    for (size_t i = 0; i < n; i++)
        deep[m++] = ')';
    strcpy(deep + m, ";\n");
    CHECK(parse(deep, &p, d) == WEFT_ERR_INPUT);
    CHECK(weft_diag_count(d, WEFT_SEV_ERROR) >= 1);
    weft_lang_program_free(p);
    p = NULL;
    weft_diag_clear(d);
    m = strlen(strcpy(deep, "let x = 1"));
    for (size_t i = 0; i < n; i++) {
        deep[m++] = '+';
        deep[m++] = '1';
    }
    strcpy(deep + m, ";\n");
    CHECK(parse(deep, &p, d) == WEFT_ERR_INPUT);
    s = first_diag(d);
    CHECK(s && strstr(s, "nested too deeply") != NULL);
    free(s);
    free(deep);
    weft_lang_program_free(p);
    p = NULL;

    /* NUL bytes and binary junk are errors, not crashes */
    weft_diag_clear(d);
    const char junk[] = "let \0x = \x01\xff;";
    CHECK(weft_lang_parse_string(junk, sizeof junk - 1, "j.weft", NULL, 0, &p, d) ==
          WEFT_ERR_INPUT);
    weft_lang_program_free(p);
    p = NULL;

    /* tables */
    CHECK_STR(weft_lang_kind_name(WEFT_LANG_COPY), "copy");
    CHECK_STR(weft_lang_op_str(WEFT_LANG_OP_LE), "<=");
    CHECK_STR(weft_lang_kind_name(WEFT_LANG_KIND_COUNT), "?");

    /* a missing file */
    weft_diag_clear(d);
    CHECK(weft_lang_parse_file("/nonexistent/x.weft", NULL, 0, &p, d) == WEFT_ERR_INPUT);
    CHECK(p == NULL);
    weft_diag_free(d);
    CHECK_DONE();
}
