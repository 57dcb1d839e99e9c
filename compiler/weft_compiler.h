/* weft_compiler.h — the weft compiler: evaluates a parsed program, checks it, lowers it to the IR.
 */
#ifndef WEFT_COMPILER_H
#define WEFT_COMPILER_H

#include "weft_common.h"
#include "weft_ir.h"
#include "weft_lang.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct weft_cc_options {
    /* Parameter overrides, each "NAME=VALUE" with an integer VALUE (suffixes K/M/G allowed). */
    const char *const *defines;
    size_t ndefines;
    /* Folders searched for `include` after the including file's own folder. */
    const char *const *include_dirs;
    size_t ninclude_dirs;
} weft_cc_options;

/* The evaluated program: header values and the operations in program order. */
typedef struct weft_cc_program weft_cc_program;

/* Evaluates a parsed program for the given parameters: header, scratch buffers, operations.
 * Reports undefined names, bad header fields, out-of-range ranks and chunks, and failed
 * `require`s to d with source locations. On WEFT_OK *out is owned by the caller and refers to
 * prog, which must outlive it. */
WEFT_API weft_result weft_cc_eval(const weft_lang_program *prog, const weft_cc_options *opts,
                                  weft_cc_program **out, weft_diag *d);
/* Traces symbolic chunk contents in every buffer mode the header enables: reads of chunks that
 * hold nothing yet, double counting, writes to a read-only input, `ensure`s and the
 * collective's postcondition. Records what lowering needs (fusion candidates, dead values).
 * WEFT_ERR_INPUT when any error was reported. */
WEFT_API weft_result weft_cc_check(weft_cc_program *p, weft_diag *d);
/* Lowers a checked program to the IR (steps, fusion, thread blocks and channels, dependencies,
 * scratch, instances). Rejects hints that cannot be honoured. The schedule cannot deadlock
 * when connections buffer two messages (docs/language.md, "How programs become schedules").
 * On WEFT_OK *out is owned by the caller (weft_algo_free). */
WEFT_API weft_result weft_cc_lower(const weft_cc_program *p, weft_algo **out, weft_diag *d);
/* Writes the operations one per line (`weft compile --emit=ops`). */
WEFT_API weft_result weft_cc_write_ops(const weft_cc_program *p, FILE *out);
WEFT_API void weft_cc_program_free(weft_cc_program *p);

/* The whole pipeline: parse (with includes), evaluate, check, lower, then the IR's validation
 * (whose warnings are the MSCCL runtimes' limits). */
WEFT_API weft_result weft_cc_compile_file(const char *path, const weft_cc_options *opts,
                                          weft_algo **out, weft_diag *d);
WEFT_API weft_result weft_cc_compile_string(const char *text, size_t len, const char *name,
                                            const weft_cc_options *opts, weft_algo **out,
                                            weft_diag *d);

/* Whether path names a .weft source (else it is read as MSCCL XML). */
WEFT_API int weft_cc_is_source(const char *path);
/* Any schedule file, the one loader of every command and of the registry, so that a .weft
 * source is accepted wherever a schedule is: a .weft is compiled with opts (its defines and
 * include folders), any other name is read as MSCCL XML and validated; defines given for an XML
 * file are an error (it has no parameters). On WEFT_OK *out is owned by the caller
 * (weft_algo_free) and its file is path. */
WEFT_API weft_result weft_cc_load_file(const char *path, const weft_cc_options *opts,
                                       weft_algo **out, weft_diag *d);
/* Every parameter a .weft source declares, as ",A,B," (a comma around each name), or NULL when
 * it declares none or cannot be parsed. Malloc'd; the caller frees it. */
WEFT_API char *weft_cc_declared_params(const char *path);
/* Whether a ",A,B," list from weft_cc_declared_params holds name. */
WEFT_API int weft_cc_declares(const char *declared, const char *name);

#ifdef __cplusplus
}
#endif
#endif
