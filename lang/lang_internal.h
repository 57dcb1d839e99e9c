/* lang_internal.h — what the lexer, the grammar and the tree builders share inside lang/. */
#ifndef WEFT_LANG_INTERNAL_H
#define WEFT_LANG_INTERNAL_H

#include "weft_lang.h"

/* The grammar's location: byte offsets in the file being parsed. */
typedef struct weft_lang_yyltype {
    int32_t start, end;
} weft_lang_yyltype;
#define WEFT_LANG_YYLTYPE             weft_lang_yyltype
#define WEFT_LANG_YYLTYPE_IS_DECLARED 1

struct weft_lang_source {
    char *path;
    char *text;
    size_t len;
    int32_t *line_starts; /* computed on first use */
    int32_t nlines;
};

struct weft_lang_sources {
    struct weft_lang_source *v;
    size_t n, cap;
};

#define WEFT_LANG_MAX_NEST 256
/* Deepest tree the parser builds: evaluation and printing recurse over it. */
#define WEFT_LANG_MAX_DEPTH 2000

/* State of one file's parse, shared by the lexer (as its extra data) and the grammar. */
typedef struct weft_lang_parser {
    weft_lang_sources *sources;
    int32_t file;
    weft_diag *d;
    int32_t pos;        /* byte offset of the next character the lexer reads */
    int nerrors;        /* lexical and syntax errors reported */
    int32_t comment_at; /* where the block comment being skipped began */
    weft_lang_node *root;
    int nomem; /* an allocation failed while building the tree */
    /* open brackets, so that an error at the end of the file can say which one is unclosed */
    int32_t open_at[WEFT_LANG_MAX_NEST];
    char open_ch[WEFT_LANG_MAX_NEST];
    int nopen;
    int too_deep; /* reported once */
} weft_lang_parser;

/* sources.c */
int32_t weft_lang_sources_add(weft_lang_sources *s, const char *path, char *text, size_t len);
weft_lang_sources *weft_lang_sources_new(void);
void weft_lang_sources_free(weft_lang_sources *s);

/* ast.c: tree builders used by the grammar's actions. They never fail visibly: on allocation
 * failure they set p->nomem and return NULL, and the parse reports it at the end. */
weft_lang_node *weft_lang_node_new(weft_lang_parser *p, weft_lang_kind kind, weft_lang_yyltype loc);
weft_lang_node *weft_lang_leaf(weft_lang_parser *p, weft_lang_kind kind, char *name,
                               weft_lang_yyltype loc);
weft_lang_node *weft_lang_int(weft_lang_parser *p, int64_t v, weft_lang_yyltype loc);
weft_lang_node *weft_lang_tree(weft_lang_parser *p, weft_lang_kind kind, char *name,
                               weft_lang_node *a, weft_lang_node *b, weft_lang_node *c,
                               weft_lang_yyltype loc);
weft_lang_node *weft_lang_binary(weft_lang_parser *p, weft_lang_op op, weft_lang_node *a,
                                 weft_lang_node *b, weft_lang_yyltype loc);
weft_lang_node *weft_lang_unary(weft_lang_parser *p, weft_lang_op op, weft_lang_node *a,
                                weft_lang_yyltype loc);
/* Appends kid to list->kids (kid may be NULL after an error: ignored); returns list. */
weft_lang_node *weft_lang_append(weft_lang_parser *p, weft_lang_node *list, weft_lang_node *kid);
/* Moves the kids of `from` into `to` and frees `from`; returns to. */
weft_lang_node *weft_lang_adopt(weft_lang_node *to, weft_lang_node *from);
/* Gives `n` the location loc (the grammar uses it after building a list). */
weft_lang_node *weft_lang_at(weft_lang_parser *p, weft_lang_node *n, weft_lang_yyltype loc);
void weft_lang_node_free(weft_lang_node *n);

/* Reports an error at a byte range of the file being parsed. */
void weft_lang_parse_error(weft_lang_parser *p, weft_lang_yyltype loc, const char *fmt, ...)
    WEFT_PRINTF(3, 4);

/* parser.y: parses one file's text into p->root. */
int weft_lang_parse_text(weft_lang_parser *p, const char *text, size_t len);

#endif
