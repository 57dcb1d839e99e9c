/* json_internal.h — a small strict JSON (RFC 8259) reader for trace files: values are parsed
 * one at a time into an arena that the caller resets between them, so that a file of millions of
 * events needs memory for one event only; every error names file:line. */
#ifndef WEFT_JSON_INTERNAL_H
#define WEFT_JSON_INTERNAL_H

#include "weft_common.h"

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum json_type {
    JSON_NULL,
    JSON_FALSE,
    JSON_TRUE,
    JSON_NUMBER,
    JSON_STRING,
    JSON_ARRAY,
    JSON_OBJECT
} json_type;

typedef struct json_value json_value;
struct json_value {
    json_type type;
    int line;
    const char *str; /* string: decoded, NUL-terminated; number: its text (not terminated) */
    size_t len;
    size_t n;           /* members of an array or object */
    json_value **items; /* n values */
    const char **keys;  /* object: n decoded keys */
};

typedef struct json_block json_block;

/* Nesting deeper than this is rejected (the parser recurses). */
#define JSON_MAX_DEPTH 64

typedef struct json_parser {
    const char *file;
    const char *p, *end;
    int line;
    weft_diag *d;
    int failed; /* an error was reported; every later call fails at once */
    json_block *arena;
} json_parser;

void json_init(json_parser *jp, const char *file, const char *data, size_t len, weft_diag *d);
/* Frees what the arena holds (values parsed so far become invalid). */
void json_reset(json_parser *jp);
void json_free(json_parser *jp);

/* Skips white space; returns the next character, or -1 at the end of the input. */
int json_peek(json_parser *jp);
/* Consumes c (after white space) or reports "expected WHAT". Returns 0 on success. */
int json_expect(json_parser *jp, char c, const char *what);
/* Parses one value (NULL after an error, which is reported). */
json_value *json_parse(json_parser *jp);
/* Parses a string (for keys of a streamed object). NULL after an error. */
const char *json_parse_string(json_parser *jp);
/* Reports an error at the current line (or at `line` when > 0); returns -1. */
int json_error(json_parser *jp, int line, const char *fmt, ...) WEFT_PRINTF(3, 4);

/* Member `key` of an object, or NULL. */
const json_value *json_get(const json_value *obj, const char *key);
/* An integer without fraction or exponent that fits in int64: 0, else -1. */
int json_int64(const json_value *v, int64_t *out);
/* A number times 10^scale, rounded to the nearest integer (halves away from zero), within
 * +-2^62: 0, else -1. json_fixed(v, 3, &ns) reads microseconds as nanoseconds. */
int json_fixed(const json_value *v, int scale, int64_t *out);

#ifdef __cplusplus
}
#endif
#endif
