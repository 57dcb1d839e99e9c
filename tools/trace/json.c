/* json.c — the strict JSON reader of json_internal.h: RFC 8259 grammar (no comments, no trailing
 * commas, no NaN, no leading zeros), UTF-8 checked, \u escapes decoded (surrogate pairs joined,
 * lone surrogates and U+0000 rejected), duplicate object keys rejected, bounded nesting. */
#include "json_internal.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

/* ---- arena ---------------------------------------------------------------------------------- */
struct json_block {
    json_block *next;
    size_t used, size;
    max_align_t data[];
};

#define JSON_BLOCK_BYTES ((size_t)64 << 10)

static void *arena_alloc(json_parser *jp, size_t n) {
    n = (n + 15) & ~(size_t)15;
    json_block *b = jp->arena;
    if (b == NULL || b->size - b->used < n) {
        size_t size = n > JSON_BLOCK_BYTES ? n : JSON_BLOCK_BYTES;
        json_block *nb = malloc(sizeof *nb + size);
        if (nb == NULL) return NULL;
        nb->next = b;
        nb->used = 0;
        nb->size = size;
        jp->arena = b = nb;
    }
    void *p = (char *)b->data + b->used;
    b->used += n;
    return p;
}

void json_reset(json_parser *jp) {
    /* Keep one block for the next value: events are small and similar. */
    json_block *b = jp->arena;
    while (b && b->next) {
        json_block *n = b->next;
        free(b);
        b = n;
    }
    if (b) b->used = 0;
    jp->arena = b;
}

void json_free(json_parser *jp) {
    json_block *b = jp->arena;
    while (b) {
        json_block *n = b->next;
        free(b);
        b = n;
    }
    jp->arena = NULL;
}

void json_init(json_parser *jp, const char *file, const char *data, size_t len, weft_diag *d) {
    memset(jp, 0, sizeof *jp);
    jp->file = file;
    jp->p = data;
    jp->end = data + len;
    jp->line = 1;
    jp->d = d;
}

int json_error(json_parser *jp, int line, const char *fmt, ...) {
    if (jp->failed) return -1;
    jp->failed = 1;
    va_list ap;
    va_start(ap, fmt);
    char msg[512];
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    weft_diag_add(jp->d, WEFT_SEV_ERROR, jp->file, line > 0 ? line : jp->line, 0, "%s", msg);
    return -1;
}

static int nomem(json_parser *jp) {
    return json_error(jp, 0, "out of memory");
}

/* ---- lexical -------------------------------------------------------------------------------- */
int json_peek(json_parser *jp) {
    if (jp->failed) return -1;
    while (jp->p < jp->end) {
        char c = *jp->p;
        if (c == '\n')
            jp->line++;
        else if (c != ' ' && c != '\t' && c != '\r')
            return (unsigned char)c;
        jp->p++;
    }
    return -1;
}

/* What the next character is, for messages. */
static const char *found(json_parser *jp, char *buf, size_t len) {
    if (jp->p >= jp->end) return "the end of the file";
    unsigned char c = (unsigned char)*jp->p;
    if (c == 0) return "a NUL byte";
    if (c < 0x20 || c >= 0x7f)
        snprintf(buf, len, "byte 0x%02x", c);
    else
        snprintf(buf, len, "'%c'", c);
    return buf;
}

int json_expect(json_parser *jp, char c, const char *what) {
    if (json_peek(jp) == (unsigned char)c) {
        jp->p++;
        return 0;
    }
    char b[16];
    return json_error(jp, 0, "malformed JSON: expected %s, found %s", what, found(jp, b, sizeof b));
}

static int hexval(char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

static int read_u4(json_parser *jp, const char *q, unsigned *out) {
    if (jp->end - q < 4) return -1;
    unsigned v = 0;
    for (int i = 0; i < 4; i++) {
        int h = hexval(q[i]);
        if (h < 0) return -1;
        v = v << 4 | (unsigned)h;
    }
    *out = v;
    return 0;
}

/* Length of a well-formed UTF-8 sequence at q (lead byte >= 0x80), or 0. */
static size_t utf8_len(const unsigned char *q, const unsigned char *end) {
    unsigned c = q[0];
    size_t n;
    unsigned min;
    if (c >= 0xc2 && c <= 0xdf)
        n = 2, min = 0x80;
    else if (c >= 0xe0 && c <= 0xef)
        n = 3, min = 0x800;
    else if (c >= 0xf0 && c <= 0xf4)
        n = 4, min = 0x10000;
    else
        return 0;
    if ((size_t)(end - q) < n) return 0;
    unsigned v = c & (0x7f >> n);
    for (size_t i = 1; i < n; i++) {
        if ((q[i] & 0xc0) != 0x80) return 0;
        v = v << 6 | (q[i] & 0x3f);
    }
    if (v < min || v > 0x10ffff || (v >= 0xd800 && v <= 0xdfff)) return 0;
    return n;
}

static size_t put_utf8(char *o, unsigned v) {
    if (v < 0x80) {
        o[0] = (char)v;
        return 1;
    }
    if (v < 0x800) {
        o[0] = (char)(0xc0 | v >> 6);
        o[1] = (char)(0x80 | (v & 0x3f));
        return 2;
    }
    if (v < 0x10000) {
        o[0] = (char)(0xe0 | v >> 12);
        o[1] = (char)(0x80 | (v >> 6 & 0x3f));
        o[2] = (char)(0x80 | (v & 0x3f));
        return 3;
    }
    o[0] = (char)(0xf0 | v >> 18);
    o[1] = (char)(0x80 | (v >> 12 & 0x3f));
    o[2] = (char)(0x80 | (v >> 6 & 0x3f));
    o[3] = (char)(0x80 | (v & 0x3f));
    return 4;
}

/* A string at jp->p (the opening quote), decoded into the arena. */
static const char *parse_string(json_parser *jp, size_t *lenp) {
    if (json_expect(jp, '"', "'\"'") != 0) return NULL;
    /* First pass: find the end and validate; the decoded text is never longer. */
    const char *q = jp->p;
    while (q < jp->end && *q != '"') {
        unsigned char c = (unsigned char)*q;
        if (c == '\\') {
            if (q + 1 >= jp->end) break;
            q += 2;
        } else if (c < 0x20) {
            return json_error(jp, 0,
                              c == '\n' ? "malformed JSON: line break inside a string"
                                        : "malformed JSON: control character 0x%02x inside a "
                                          "string",
                              c),
                   NULL;
        } else {
            q++;
        }
    }
    if (q >= jp->end) return json_error(jp, 0, "malformed JSON: unterminated string"), NULL;
    char *out = arena_alloc(jp, (size_t)(q - jp->p) + 1);
    if (out == NULL) return nomem(jp), NULL;
    size_t n = 0;
    const char *s = jp->p;
    while (s < q) {
        unsigned char c = (unsigned char)*s;
        if (c == '\\') {
            char e = s[1];
            s += 2;
            switch (e) {
            case '"': out[n++] = '"'; break;
            case '\\': out[n++] = '\\'; break;
            case '/': out[n++] = '/'; break;
            case 'b': out[n++] = '\b'; break;
            case 'f': out[n++] = '\f'; break;
            case 'n': out[n++] = '\n'; break;
            case 'r': out[n++] = '\r'; break;
            case 't': out[n++] = '\t'; break;
            case 'u': {
                unsigned v, w;
                if (read_u4(jp, s, &v) != 0)
                    return json_error(jp, 0, "malformed JSON: \\u needs four hex digits"), NULL;
                s += 4;
                if (v >= 0xd800 && v <= 0xdbff) {
                    if (q - s < 6 || s[0] != '\\' || s[1] != 'u' || read_u4(jp, s + 2, &w) != 0 ||
                        w < 0xdc00 || w > 0xdfff)
                        return json_error(jp, 0, "malformed JSON: unpaired UTF-16 surrogate"), NULL;
                    s += 6;
                    v = 0x10000 + ((v - 0xd800) << 10) + (w - 0xdc00);
                } else if (v >= 0xdc00 && v <= 0xdfff) {
                    return json_error(jp, 0, "malformed JSON: unpaired UTF-16 surrogate"), NULL;
                } else if (v == 0) {
                    return json_error(jp, 0, "\\u0000 inside a string is not supported"), NULL;
                }
                n += put_utf8(out + n, v);
                break;
            }
            default:
                return json_error(jp, 0, "malformed JSON: invalid escape '\\%c'",
                                  e >= 0x20 && e < 0x7f ? e : '?'),
                       NULL;
            }
        } else if (c >= 0x80) {
            size_t k = utf8_len((const unsigned char *)s, (const unsigned char *)q);
            if (k == 0) return json_error(jp, 0, "malformed JSON: invalid UTF-8 in a string"), NULL;
            memcpy(out + n, s, k);
            n += k;
            s += k;
        } else {
            out[n++] = (char)c;
            s++;
        }
    }
    out[n] = '\0';
    jp->p = q + 1;
    if (lenp) *lenp = n;
    return out;
}

const char *json_parse_string(json_parser *jp) {
    return parse_string(jp, NULL);
}

static json_value *new_value(json_parser *jp, json_type t, int line) {
    json_value *v = arena_alloc(jp, sizeof *v);
    if (v == NULL) return nomem(jp), NULL;
    memset(v, 0, sizeof *v);
    v->type = t;
    v->line = line;
    return v;
}

static int is_digit(char c) {
    return c >= '0' && c <= '9';
}

static json_value *parse_number(json_parser *jp) {
    const char *s = jp->p, *q = s;
    if (q < jp->end && *q == '-') q++;
    if (q >= jp->end || !is_digit(*q))
        return json_error(jp, 0, "malformed JSON: a number needs digits"), NULL;
    if (*q == '0') {
        q++;
        if (q < jp->end && is_digit(*q))
            return json_error(jp, 0, "malformed JSON: leading zero in a number"), NULL;
    } else {
        while (q < jp->end && is_digit(*q))
            q++;
    }
    if (q < jp->end && *q == '.') {
        q++;
        if (q >= jp->end || !is_digit(*q))
            return json_error(jp, 0, "malformed JSON: digits expected after '.'"), NULL;
        while (q < jp->end && is_digit(*q))
            q++;
    }
    if (q < jp->end && (*q == 'e' || *q == 'E')) {
        q++;
        if (q < jp->end && (*q == '+' || *q == '-')) q++;
        if (q >= jp->end || !is_digit(*q))
            return json_error(jp, 0, "malformed JSON: digits expected in the exponent"), NULL;
        while (q < jp->end && is_digit(*q))
            q++;
    }
    json_value *v = new_value(jp, JSON_NUMBER, jp->line);
    if (v == NULL) return NULL;
    v->str = s;
    v->len = (size_t)(q - s);
    jp->p = q;
    return v;
}

static int literal(json_parser *jp, const char *word) {
    size_t n = strlen(word);
    if ((size_t)(jp->end - jp->p) >= n && memcmp(jp->p, word, n) == 0) {
        jp->p += n;
        return 1;
    }
    return 0;
}

/* Growable list of members while an array or object is parsed (heap, then copied into the
 * arena so that one reset frees everything). */
typedef struct members {
    json_value **v;
    const char **k;
    size_t n, cap;
} members;

static int members_push(members *m, json_value *v, const char *k) {
    if (m->n == m->cap) {
        size_t nc = m->cap ? m->cap * 2 : 8;
        json_value **nv = realloc(m->v, nc * sizeof *nv);
        if (nv == NULL) return -1;
        m->v = nv;
        const char **nk = realloc((void *)m->k, nc * sizeof *nk);
        if (nk == NULL) return -1;
        m->k = nk;
        m->cap = nc;
    }
    m->v[m->n] = v;
    m->k[m->n] = k;
    m->n++;
    return 0;
}

static json_value *parse_value(json_parser *jp, int depth);

static json_value *parse_container(json_parser *jp, int depth, int object) {
    int line = jp->line;
    char close = object ? '}' : ']';
    jp->p++; /* the opening bracket */
    if (depth >= JSON_MAX_DEPTH)
        return json_error(jp, 0, "JSON nested deeper than %d levels", JSON_MAX_DEPTH), NULL;
    members m = {0};
    json_value *res = NULL;
    if (json_peek(jp) == (unsigned char)close) {
        jp->p++;
    } else {
        for (;;) {
            const char *key = NULL;
            if (object) {
                if (json_peek(jp) != '"') {
                    char b[16];
                    json_error(jp, 0, "malformed JSON: expected a member name (a string), found %s",
                               found(jp, b, sizeof b));
                    goto out;
                }
                key = parse_string(jp, NULL);
                if (key == NULL) goto out;
                for (size_t i = 0; i < m.n; i++)
                    if (strcmp(m.k[i], key) == 0) {
                        json_error(jp, 0, "duplicate member \"%s\" in an object", key);
                        goto out;
                    }
                if (json_expect(jp, ':', "':' after a member name") != 0) goto out;
            }
            json_value *v = parse_value(jp, depth + 1);
            if (v == NULL) goto out;
            if (members_push(&m, v, key) != 0) {
                nomem(jp);
                goto out;
            }
            int c = json_peek(jp);
            if (c == ',') {
                jp->p++;
                if (json_peek(jp) == (unsigned char)close) {
                    json_error(jp, 0, "malformed JSON: trailing comma before '%c'", close);
                    goto out;
                }
                continue;
            }
            if (c == (unsigned char)close) {
                jp->p++;
                break;
            }
            char b[16];
            json_error(jp, 0, "malformed JSON: expected ',' or '%c' after %s, found %s", close,
                       object ? "a member" : "an element", found(jp, b, sizeof b));
            goto out;
        }
    }
    res = new_value(jp, object ? JSON_OBJECT : JSON_ARRAY, line);
    if (res == NULL) goto out;
    res->n = m.n;
    if (m.n) {
        res->items = arena_alloc(jp, m.n * sizeof *res->items);
        if (res->items == NULL) {
            nomem(jp);
            res = NULL;
            goto out;
        }
        memcpy(res->items, m.v, m.n * sizeof *m.v);
        if (object) {
            res->keys = arena_alloc(jp, m.n * sizeof *res->keys);
            if (res->keys == NULL) {
                nomem(jp);
                res = NULL;
                goto out;
            }
            memcpy((void *)res->keys, m.k, m.n * sizeof *m.k);
        }
    }
out:
    free(m.v);
    free((void *)m.k);
    return res;
}

static json_value *parse_value(json_parser *jp, int depth) {
    int c = json_peek(jp);
    int line = jp->line;
    switch (c) {
    case '{': return parse_container(jp, depth, 1);
    case '[': return parse_container(jp, depth, 0);
    case '"': {
        size_t n = 0;
        const char *s = parse_string(jp, &n);
        if (s == NULL) return NULL;
        json_value *v = new_value(jp, JSON_STRING, line);
        if (v) v->str = s, v->len = n;
        return v;
    }
    case 't':
        if (literal(jp, "true")) return new_value(jp, JSON_TRUE, line);
        break;
    case 'f':
        if (literal(jp, "false")) return new_value(jp, JSON_FALSE, line);
        break;
    case 'n':
        if (literal(jp, "null")) return new_value(jp, JSON_NULL, line);
        break;
    case -1:
        if (jp->failed) return NULL;
        break;
    default:
        if (c == '-' || is_digit((char)c)) return parse_number(jp);
        break;
    }
    char b[16];
    json_error(jp, 0, "malformed JSON: expected a value, found %s", found(jp, b, sizeof b));
    return NULL;
}

json_value *json_parse(json_parser *jp) {
    if (jp->failed) return NULL;
    return parse_value(jp, 0);
}

/* ---- access --------------------------------------------------------------------------------- */
const json_value *json_get(const json_value *obj, const char *key) {
    if (obj == NULL || obj->type != JSON_OBJECT) return NULL;
    for (size_t i = 0; i < obj->n; i++)
        if (strcmp(obj->keys[i], key) == 0) return obj->items[i];
    return NULL;
}

int json_int64(const json_value *v, int64_t *out) {
    if (v == NULL || v->type != JSON_NUMBER) return -1;
    const char *s = v->str, *e = v->str + v->len;
    int neg = 0;
    if (s < e && *s == '-') neg = 1, s++;
    uint64_t acc = 0;
    const uint64_t lim = neg ? (uint64_t)INT64_MAX + 1 : (uint64_t)INT64_MAX;
    if (s == e) return -1;
    for (; s < e; s++) {
        if (!is_digit(*s)) return -1; /* fraction or exponent */
        unsigned dgt = (unsigned)(*s - '0');
        if (acc > (lim - dgt) / 10) return -1;
        acc = acc * 10 + dgt;
    }
    *out = neg ? (int64_t)(0 - acc) : (int64_t)acc;
    return 0;
}

int json_fixed(const json_value *v, int scale, int64_t *out) {
    if (v == NULL || v->type != JSON_NUMBER) return -1;
    const char *s = v->str, *e = v->str + v->len;
    int neg = 0;
    if (s < e && *s == '-') neg = 1, s++;
    /* Significant digits (leading zeros dropped) and the power of ten of the last one. */
    char dig[64];
    int nd = 0;
    long exp10 = scale;
    for (; s < e && is_digit(*s); s++) {
        if (nd == 0 && *s == '0') continue;
        if (nd < (int)sizeof dig)
            dig[nd++] = *s;
        else
            exp10++; /* beyond any range we accept: only the magnitude matters */
    }
    if (s < e && *s == '.') {
        for (s++; s < e && is_digit(*s); s++) {
            if (nd == 0 && *s == '0') {
                exp10--;
                continue;
            }
            if (nd < (int)sizeof dig) dig[nd++] = *s, exp10--;
        }
    }
    if (s < e && (*s == 'e' || *s == 'E')) {
        s++;
        int eneg = 0;
        if (s < e && (*s == '+' || *s == '-')) eneg = *s == '-', s++;
        long x = 0;
        for (; s < e && is_digit(*s); s++)
            if (x < 100000) x = x * 10 + (*s - '0');
        exp10 += eneg ? -x : x;
    }
    /* value = 0.dig... * 10^(nd + exp10): integer part = the first nd + exp10 digits. */
    const uint64_t lim = (uint64_t)1 << 62;
    long ip = nd + exp10;
    uint64_t acc = 0;
    if (nd == 0) {
        *out = 0;
        return 0;
    }
    if (ip > 19) return -1;
    for (long i = 0; i < ip; i++) {
        unsigned dgt = i < nd ? (unsigned)(dig[i] - '0') : 0;
        if (acc > (lim - dgt) / 10) return -1;
        acc = acc * 10 + dgt;
    }
    /* Round on the first dropped digit (exact halves, and anything past them, go up). */
    if (ip >= 0 && ip < nd && dig[ip] >= '5') acc++;
    if (acc > lim) return -1;
    *out = neg ? -(int64_t)acc : (int64_t)acc;
    return 0;
}
