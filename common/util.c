/* util.c — result strings, allocation and string helpers, UTF-8, a hash map: the base of common/,
 * which needs nothing else. */
#include "weft_common.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

const char *weft_result_str(weft_result r) {
    static const char *const names[] = {
#define WEFT_X_(n, t) t,
        WEFT_RESULTS(WEFT_X_)
#undef WEFT_X_
    };
    if ((unsigned)r >= WEFT_RESULT_COUNT) return "unknown result";
    return names[r];
}

char *weft_strdup(const char *s) {
    if (s == NULL) return NULL;
    size_t n = strlen(s) + 1;
    char *p = malloc(n);
    if (p) memcpy(p, s, n);
    return p;
}

char *weft_vasprintf(const char *fmt, va_list ap) {
    va_list ap2;
    va_copy(ap2, ap);
    int n = vsnprintf(NULL, 0, fmt, ap2);
    va_end(ap2);
    char *p = NULL;
    if (n >= 0 && (p = malloc((size_t)n + 1)) != NULL) vsnprintf(p, (size_t)n + 1, fmt, ap);
    return p;
}

char *weft_asprintf(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    char *p = weft_vasprintf(fmt, ap);
    va_end(ap);
    return p;
}

void weft_sb_printf(weft_sb *b, const char *fmt, ...) {
    while (!b->oom) {
        va_list ap;
        va_start(ap, fmt);
        size_t room = b->cap - b->n;
        int k = vsnprintf(b->p ? b->p + b->n : NULL, room, fmt, ap);
        va_end(ap);
        if (k >= 0 && (size_t)k < room) {
            b->n += (size_t)k;
            return;
        }
        size_t cap = b->cap ? 2 * b->cap : 128;
        while (k >= 0 && cap < b->n + (size_t)k + 1)
            cap *= 2;
        char *q = k < 0 ? NULL : realloc(b->p, cap);
        if (q == NULL) {
            b->oom = 1;
            return;
        }
        b->p = q;
        b->cap = cap;
    }
}

const char *weft_sb_str(const weft_sb *b) {
    return b->oom ? "(out of memory)" : b->p ? b->p : "";
}

void weft_fput_quoted(FILE *f, const char *s, char bad, int ascii) {
    fputc('"', f);
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\')
            fputc('\\', f), fputc(c, f);
        else
            fputc(c < 0x20 || c == 0x7f || (ascii && c > 0x7f) ? bad : c, f);
    }
    fputc('"', f);
}

const char *weft_name_of(const char *const *names, int n, int i) {
    return i >= 0 && i < n ? names[i] : "?";
}

int weft_name_find(const char *const *names, int n, const char *name, int nocase) {
    for (int i = 0; i < n; i++)
        if (names[i] && (nocase ? strcasecmp(name, names[i]) : strcmp(name, names[i])) == 0)
            return i;
    return -1;
}

size_t weft_utf8_len(const unsigned char *p, size_t n, uint32_t *cp) {
    if (n == 0) return 0;
    uint32_t c = p[0];
    size_t len = c < 0x80                 ? 1
                 : c >= 0xC2 && c <= 0xDF ? 2
                 : c >= 0xE0 && c <= 0xEF ? 3
                 : c >= 0xF0 && c <= 0xF4 ? 4
                                          : 0;
    if (len == 0 || len > n) return 0;
    if (len > 1) c &= 0x3F >> (len - 1);
    for (size_t i = 1; i < len; i++) {
        if ((p[i] & 0xC0) != 0x80) return 0;
        c = (c << 6) | (p[i] & 0x3F);
    }
    static const uint32_t least[5] = {0, 0, 0x80, 0x800, 0x10000};
    if (c < least[len] || c > 0x10FFFF || (c >= 0xD800 && c <= 0xDFFF)) return 0;
    if (cp) *cp = c;
    return len;
}

int weft_grow(void **ptr, size_t *cap, size_t n, size_t sz) {
    if (n < *cap) return 0;
    size_t ncap = *cap ? *cap * 2 : 8;
    while (ncap <= n)
        ncap *= 2;
    if (ncap > SIZE_MAX / sz) return -1;
    void *p = realloc(*ptr, ncap * sz);
    if (p == NULL) return -1;
    *ptr = p;
    *cap = ncap;
    return 0;
}

/* ---- the hash map ------------------------------------------------------------------------ */

/* splitmix64's finaliser: every key bit reaches the low bits that index the table. */
uint64_t weft_hash64(uint64_t x) {
    x ^= x >> 30;
    x *= 0xBF58476D1CE4E5B9ULL;
    x ^= x >> 27;
    x *= 0x94D049BB133111EBULL;
    return x ^ (x >> 31);
}

uint64_t weft_hash_bytes(const void *p, size_t n) {
    const unsigned char *s = p;
    uint64_t h = 0xcbf29ce484222325ULL; /* FNV-1a */
    for (size_t i = 0; i < n; i++)
        h = (h ^ s[i]) * 0x100000001b3ULL;
    return weft_hash64(h ^ n);
}

void weft_map_free(weft_map *m) {
    free(m->keys);
    free(m->vals);
    free(m->used);
    memset(m, 0, sizeof *m);
}

static size_t map_find(const weft_map *m, uint64_t key) {
    size_t j = (size_t)weft_hash64(key) & (m->cap - 1);
    while (m->used[j] && m->keys[j] != key)
        j = (j + 1) & (m->cap - 1);
    return j;
}

uint64_t *weft_map_get(const weft_map *m, uint64_t key) {
    if (m->cap == 0) return NULL;
    size_t j = map_find(m, key);
    return m->used[j] ? &m->vals[j] : NULL;
}

uint64_t *weft_map_put(weft_map *m, uint64_t key, int *added) {
    if (added) *added = 0;
    if (2 * (m->n + 1) > m->cap) {
        weft_map g = {0};
        g.cap = m->cap ? 2 * m->cap : 64;
        g.keys = malloc(g.cap * sizeof *g.keys);
        g.vals = malloc(g.cap * sizeof *g.vals);
        g.used = calloc(g.cap, 1);
        if (g.keys == NULL || g.vals == NULL || g.used == NULL) {
            weft_map_free(&g);
            return NULL;
        }
        for (size_t i = 0; i < m->cap; i++)
            if (m->used[i]) {
                size_t j = map_find(&g, m->keys[i]);
                g.used[j] = 1;
                g.keys[j] = m->keys[i];
                g.vals[j] = m->vals[i];
            }
        g.n = m->n;
        weft_map_free(m);
        *m = g;
    }
    size_t j = map_find(m, key);
    if (!m->used[j]) {
        m->used[j] = 1;
        m->keys[j] = key;
        m->vals[j] = 0;
        m->n++;
        if (added) *added = 1;
    }
    return &m->vals[j];
}

/* ---- did you mean (weft_did_you_mean): the CLI's options and words, the compiler's -D --- */
/* Edit distance with adjacent transpositions (a typo's usual shapes), capped at 99. */
static int distance(const char *a, const char *b) {
    size_t n = strlen(a), m = strlen(b);
    if (n > 64 || m > 64) return 99;
    int d[65][65];
    for (size_t i = 0; i <= n; i++)
        d[i][0] = (int)i;
    for (size_t j = 0; j <= m; j++)
        d[0][j] = (int)j;
    for (size_t i = 1; i <= n; i++)
        for (size_t j = 1; j <= m; j++) {
            int cost = a[i - 1] != b[j - 1];
            int v = d[i - 1][j] + 1;
            if (d[i][j - 1] + 1 < v) v = d[i][j - 1] + 1;
            if (d[i - 1][j - 1] + cost < v) v = d[i - 1][j - 1] + cost;
            if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] &&
                d[i - 2][j - 2] + 1 < v)
                v = d[i - 2][j - 2] + 1;
            d[i][j] = v;
        }
    return d[n][m];
}

const char *weft_did_you_mean(const char *s, const char *const *names, int n) {
    const char *best = NULL;
    int bestd = 99;
    size_t len = strlen(s);
    if (len < 2) return NULL; /* one letter could be a typo of any other */
    /* a third of the word may be wrong, at least one letter */
    int limit = len <= 3 ? 1 : (int)(len + 2) / 3;
    for (int i = 0; i < n; i++) {
        if (names[i] == NULL) continue;
        int dd = distance(s, names[i]);
        /* an unfinished word: the only name it begins */
        if (len >= 3 && strncmp(names[i], s, len) == 0 && dd > 0) dd = limit;
        if (dd < bestd) bestd = dd, best = names[i];
    }
    return bestd <= limit ? best : NULL;
}
