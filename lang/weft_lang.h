/* weft_lang.h — the weft language front end: sources, syntax tree, parser, diagnostics. */
#ifndef WEFT_LANG_H
#define WEFT_LANG_H

#include "weft_common.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- sources and locations --------------------------------------------------------------- */
/* A location is a byte range of one loaded file; line and column are computed only when a
 * diagnostic is printed. */
typedef struct weft_lang_loc {
    int32_t file; /* index in the program's sources; -1 = none */
    int32_t start, end;
} weft_lang_loc;

/* The files a program was read from (the main file and its includes). */
typedef struct weft_lang_sources weft_lang_sources;

WEFT_API size_t weft_lang_sources_count(const weft_lang_sources *s);
WEFT_API const char *weft_lang_source_path(const weft_lang_sources *s, int32_t file);
/* The whole text of a loaded file. */
WEFT_API const char *weft_lang_source_text(const weft_lang_sources *s, int32_t file, size_t *len);
/* 1-based line and column (in bytes) of a byte offset; 0 when unknown. */
WEFT_API void weft_lang_linecol(const weft_lang_sources *s, int32_t file, int32_t offset, int *line,
                                int *col);
/* Adds `path:line:col: sev: message` with the source line and a caret under loc. */
WEFT_API void weft_lang_report(weft_diag *d, const weft_lang_sources *s, weft_severity sev,
                               weft_lang_loc loc, const char *fmt, ...) WEFT_PRINTF(5, 6);
WEFT_API void weft_lang_vreport(weft_diag *d, const weft_lang_sources *s, weft_severity sev,
                                weft_lang_loc loc, const char *fmt, va_list ap);

/* ---- the syntax tree --------------------------------------------------------------------- */
/* X(id, name, fields used). One node type for all kinds keeps the grammar actions one call. */
#define WEFT_LANG_NODES(X)                                                                         \
    X(FILE, "file")           /* kids: items */                                                    \
    X(BLOCK, "block")         /* kids: statements */                                               \
    X(PARAM, "param")         /* name; a: default or NULL */                                       \
    X(ALGORITHM, "algorithm") /* name; kids: FIELDs */                                             \
    X(FIELD, "field")         /* name; a: value or NULL for a flag */                              \
    X(SCRATCH, "scratch")     /* name; a: size */                                                  \
    X(DEF, "def")             /* name; kids: NAMEs (parameters); a: BLOCK */                       \
    X(INCLUDE, "include")     /* name: path as written; a: the included FILE, NULL if seen */      \
    X(LET, "let")             /* name; a: value */                                                 \
    X(FOR, "for")             /* name; a: from; b: to (exclusive); c: BLOCK */                     \
    X(IF, "if")               /* a: condition; b: BLOCK; c: else BLOCK or IF, or NULL */           \
    X(COPY, "copy")           /* a: source CHUNK; b: destination CHUNK; kids: HINTs */             \
    X(REDUCE, "reduce")       /* as COPY */                                                        \
    X(ENSURE, "ensure")       /* a: CHUNK; kids: CHUNK terms */                                    \
    X(REQUIRE, "require")     /* a: condition; name: message or NULL */                            \
    X(CALL, "call")           /* name; kids: arguments */                                          \
    X(HINT, "hint")           /* name; a: value */                                                 \
    X(CHUNK, "chunk")         /* name: buffer; a: rank SPAN; b: index SPAN */                      \
    X(SPAN, "span")           /* a: first; b: end (exclusive) or NULL for one */                   \
    X(INT, "int")             /* ival */                                                           \
    X(NAME, "name")           /* name */                                                           \
    X(UNARY, "unary")         /* op; a */                                                          \
    X(BINARY, "binary")       /* op; a, b */                                                       \
    X(COND, "cond")           /* a ? b : c */                                                      \
    X(FUNC, "func")           /* name; kids: arguments (built-in function) */

typedef enum weft_lang_kind {
#define WEFT_X_(id, n) WEFT_LANG_##id,
    WEFT_LANG_NODES(WEFT_X_)
#undef WEFT_X_
        WEFT_LANG_KIND_COUNT
} weft_lang_kind;

/* X(id, spelling, binary precedence for printing) */
#define WEFT_LANG_OPS(X)                                                                           \
    X(ADD, "+", 5)                                                                                 \
    X(SUB, "-", 5)                                                                                 \
    X(MUL, "*", 6)                                                                                 \
    X(DIV, "/", 6)                                                                                 \
    X(MOD, "%", 6)                                                                                 \
    X(EQ, "==", 4)                                                                                 \
    X(NE, "!=", 4)                                                                                 \
    X(LT, "<", 4)                                                                                  \
    X(LE, "<=", 4)                                                                                 \
    X(GT, ">", 4)                                                                                  \
    X(GE, ">=", 4)                                                                                 \
    X(AND, "&&", 3)                                                                                \
    X(OR, "||", 2)                                                                                 \
    X(NEG, "-", 7)                                                                                 \
    X(NOT, "!", 7)

typedef enum weft_lang_op {
#define WEFT_X_(id, s, p) WEFT_LANG_OP_##id,
    WEFT_LANG_OPS(WEFT_X_)
#undef WEFT_X_
        WEFT_LANG_OP_COUNT
} weft_lang_op;

typedef struct weft_lang_node weft_lang_node;
struct weft_lang_node {
    weft_lang_kind kind;
    weft_lang_op op;
    weft_lang_loc loc;
    int64_t ival;
    int32_t depth; /* height of the subtree (bounded so that walking it cannot overflow) */
    char *name;
    weft_lang_node *a, *b, *c;
    weft_lang_node **kids;
    int32_t nkids, capkids;
};

WEFT_API const char *weft_lang_kind_name(weft_lang_kind k);
WEFT_API const char *weft_lang_op_str(weft_lang_op op);

/* A parsed file with its includes resolved. */
typedef struct weft_lang_program {
    weft_lang_sources *sources; /* owned */
    weft_lang_node *root;       /* a FILE node, owned */
} weft_lang_program;

/* ---- parsing ----------------------------------------------------------------------------- */
/* Source text one program may have, its includes counted: larger inputs are refused before
 * they are read (a .weft file is a screenful; this leaves room for generated ones). */
#define WEFT_LANG_MAX_SOURCE_BYTES (4 << 20)
/* Parses a file and, recursively, the files it includes (relative to the including file, then
 * each of include_dirs). Only regular files are read ("-" for the main file is standard input,
 * named <stdin> in diagnostics, its includes relative to the current folder), at most
 * WEFT_LANG_MAX_SOURCE_BYTES in all. Syntax errors are reported to d, several per run. On WEFT_OK
 * *out is owned by the caller (free with weft_lang_program_free). On WEFT_ERR_INPUT *out may still
 * hold what was parsed (so that callers can print diagnostics with sources) and must be freed. */
WEFT_API weft_result weft_lang_parse_file(const char *path, const char *const *include_dirs,
                                          size_t n_include_dirs, weft_lang_program **out,
                                          weft_diag *d);
/* As above from memory; `name` is the path used in diagnostics and for relative includes. */
WEFT_API weft_result weft_lang_parse_string(const char *text, size_t len, const char *name,
                                            const char *const *include_dirs, size_t n_include_dirs,
                                            weft_lang_program **out, weft_diag *d);
WEFT_API void weft_lang_program_free(weft_lang_program *p);

/* Writes the tree as indented S-expressions (`weft compile --emit=ast`). */
WEFT_API weft_result weft_lang_dump(const weft_lang_program *p, FILE *out);

#ifdef __cplusplus
}
#endif
#endif
