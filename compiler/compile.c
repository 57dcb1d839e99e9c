/* compile.c — the compile pipeline: parse, evaluate, check, lower, then the IR's validation. */
#include "cc_internal.h"

#include <stdlib.h>
#include <string.h>

static weft_result compile(weft_lang_program *prog, const weft_cc_options *opts, weft_algo **out,
                           weft_diag *d) {
    weft_result res = WEFT_OK;
    weft_cc_program *p = NULL;
    WEFT_CHECK(weft_cc_eval(prog, opts, &p, d));
    WEFT_CHECK(weft_cc_check(p, d));
    WEFT_CHECK(weft_cc_lower(p, out, d));
    /* the IR's own checks: a failure here is a compiler bug; warnings are the runtimes' limits */
    WEFT_CHECK(weft_ir_validate(*out, d));
fail:
    if (res != WEFT_OK) {
        weft_algo_free(*out);
        *out = NULL;
    }
    weft_cc_program_free(p);
    return res;
}

weft_result weft_cc_compile_file(const char *path, const weft_cc_options *opts, weft_algo **out,
                                 weft_diag *d) {
    weft_result res = WEFT_OK;
    weft_lang_program *prog = NULL;
    *out = NULL;
    WEFT_CHECK(weft_lang_parse_file(path, opts ? opts->include_dirs : NULL,
                                    opts ? opts->ninclude_dirs : 0, &prog, d));
    WEFT_CHECK(compile(prog, opts, out, d));
fail:
    weft_lang_program_free(prog);
    return res;
}

weft_result weft_cc_compile_string(const char *text, size_t len, const char *name,
                                   const weft_cc_options *opts, weft_algo **out, weft_diag *d) {
    weft_result res = WEFT_OK;
    weft_lang_program *prog = NULL;
    *out = NULL;
    WEFT_CHECK(weft_lang_parse_string(text, len, name, opts ? opts->include_dirs : NULL,
                                      opts ? opts->ninclude_dirs : 0, &prog, d));
    WEFT_CHECK(compile(prog, opts, out, d));
fail:
    weft_lang_program_free(prog);
    return res;
}

int weft_cc_is_source(const char *path) {
    size_t n = path ? strlen(path) : 0;
    return n > 5 && strcmp(path + n - 5, ".weft") == 0;
}

weft_result weft_cc_load_file(const char *path, const weft_cc_options *opts, weft_algo **out,
                              weft_diag *d) {
    weft_result res = WEFT_OK;
    if (out == NULL || path == NULL) return WEFT_ERR_USAGE;
    *out = NULL;
    if (weft_cc_is_source(path)) {
        WEFT_CHECK(weft_cc_compile_file(path, opts, out, d));
    } else if (opts && opts->ndefines > 0) {
        weft_diag_add(d, WEFT_SEV_ERROR, path, 0, 0,
                      "-D %s: an XML schedule has no parameters (-D is for .weft sources)",
                      opts->defines[0]);
        WEFT_FAIL(WEFT_ERR_INPUT);
    } else {
        WEFT_CHECK(weft_ir_read_file(path, out, d)); /* validates */
    }
    if ((*out)->file == NULL) WEFT_CHECK_ALLOC((*out)->file = weft_strdup(path));
fail:
    if (res != WEFT_OK) {
        weft_algo_free(*out);
        *out = NULL;
    }
    return res;
}

char *weft_cc_declared_params(const char *path) {
    weft_lang_program *prog = NULL;
    weft_sb sb = {0};
    if (weft_lang_parse_file(path, NULL, 0, &prog, NULL) == WEFT_OK && prog && prog->root)
        for (int32_t i = 0; i < prog->root->nkids; i++) {
            const weft_lang_node *k = prog->root->kids[i];
            if (k->kind == WEFT_LANG_PARAM && k->name)
                weft_sb_printf(&sb, "%s%s,", sb.n ? "" : ",", k->name);
        }
    weft_lang_program_free(prog);
    if (sb.oom) {
        free(sb.p);
        return NULL;
    }
    return sb.p;
}

int weft_cc_declares(const char *declared, const char *name) {
    size_t n = strlen(name);
    for (const char *p = declared ? strstr(declared, name) : NULL; p; p = strstr(p + 1, name))
        if (p > declared && p[-1] == ',' && p[n] == ',') return 1;
    return 0;
}
