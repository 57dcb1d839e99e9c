/* compile.c — the compile pipeline: parse, evaluate, check, lower, then the IR's validation. */
#include "cc_internal.h"

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
