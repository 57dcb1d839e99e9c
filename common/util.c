/* util.c — result strings, failure trail, bounded file reading, allocation helpers, a hash map. */
#include "weft_common.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

const char *weft_result_str(weft_result r) {
    static const char *const names[] = {
#define WEFT_X_(n, t) t,
        WEFT_RESULTS(WEFT_X_)
#undef WEFT_X_
    };
    if ((unsigned)r >= WEFT_RESULT_COUNT) return "unknown result";
    return names[r];
}

void weft_trace_failure(const char *file, int line, weft_result r) {
    WEFT_TRACE("%s:%d -> %s", file, line, weft_result_str(r));
}

char *weft_strdup(const char *s) {
    if (s == NULL) return NULL;
    size_t n = strlen(s) + 1;
    char *p = malloc(n);
    if (p) memcpy(p, s, n);
    return p;
}

char *weft_asprintf(const char *fmt, ...) {
    va_list ap, ap2;
    va_start(ap, fmt);
    va_copy(ap2, ap);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    char *p = NULL;
    if (n >= 0 && (p = malloc((size_t)n + 1)) != NULL) vsnprintf(p, (size_t)n + 1, fmt, ap2);
    va_end(ap2);
    return p;
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

const char *weft_file_kind(unsigned st_mode) {
    mode_t m = (mode_t)st_mode;
    if (S_ISREG(m)) return "a regular file";
    if (S_ISDIR(m)) return "a directory";
    if (S_ISFIFO(m)) return "a FIFO";
    if (S_ISCHR(m)) return "a character device";
    if (S_ISBLK(m)) return "a block device";
    if (S_ISSOCK(m)) return "a socket";
    return "not a regular file";
}

weft_result weft_read_file_max(const char *path, size_t max_bytes, unsigned flags, char **data,
                               size_t *len, weft_diag *d) {
    weft_result res = WEFT_OK;
    char *buf = NULL;
    size_t n = 0, cap = 0;
    int fd = -1, own = 1;
    struct stat st;
    *data = NULL;
    if (len) *len = 0;
    if ((flags & WEFT_READ_STDIN) && strcmp(path, "-") == 0) {
        fd = 0;
        own = 0;
        path = "<stdin>";
    } else {
        /* O_NONBLOCK: opening a FIFO must not wait for a writer; fstat then refuses it */
        fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
        if (fd < 0) {
            weft_diag_add(d, WEFT_SEV_ERROR, path, 0, 0, "cannot open: %s", strerror(errno));
            WEFT_FAIL(WEFT_ERR_INPUT);
        }
    }
    if (fstat(fd, &st) != 0) {
        weft_diag_add(d, WEFT_SEV_ERROR, path, 0, 0, "cannot read: %s", strerror(errno));
        WEFT_FAIL(WEFT_ERR_INPUT);
    }
    if (own && !S_ISREG(st.st_mode)) {
        weft_diag_add(d, WEFT_SEV_ERROR, path, 0, 0, "not a regular file (it is %s)",
                      weft_file_kind((unsigned)st.st_mode));
        WEFT_FAIL(WEFT_ERR_INPUT);
    }
    if (S_ISREG(st.st_mode) && (uint64_t)st.st_size > (uint64_t)max_bytes) {
        weft_diag_add(d, WEFT_SEV_ERROR, path, 0, 0,
                      "file too large (%lld bytes; the limit is %zu)", (long long)st.st_size,
                      max_bytes);
        WEFT_FAIL(WEFT_ERR_INPUT);
    }
    if (own) {
        int fl = fcntl(fd, F_GETFL);
        if (fl >= 0) fcntl(fd, F_SETFL, fl & ~O_NONBLOCK);
    }
    for (;;) {
        /* room for what is left under the limit, one byte past it, and the terminator */
        if (n == cap || cap - n < 2) {
            size_t want = cap ? 2 * cap : (S_ISREG(st.st_mode) ? (size_t)st.st_size + 2 : 65536);
            if (want < 65536) want = 65536;
            if (want > max_bytes + 2) want = max_bytes + 2;
            if (want <= cap) want = cap + 2;
            char *p = realloc(buf, want);
            if (p == NULL) WEFT_FAIL(WEFT_ERR_NOMEM);
            buf = p;
            cap = want;
        }
        ssize_t got = read(fd, buf + n, cap - n - 1);
        if (got < 0 && errno == EINTR) continue;
        if (got < 0) {
            weft_diag_add(d, WEFT_SEV_ERROR, path, 0, 0, "read error: %s", strerror(errno));
            WEFT_FAIL(WEFT_ERR_INPUT);
        }
        if (got == 0) break;
        n += (size_t)got;
        if (n > max_bytes) {
            weft_diag_add(d, WEFT_SEV_ERROR, path, 0, 0,
                          "file too large (more than %zu bytes; the limit)", max_bytes);
            WEFT_FAIL(WEFT_ERR_INPUT);
        }
    }
    if (buf == NULL && (buf = malloc(1)) == NULL) WEFT_FAIL(WEFT_ERR_NOMEM);
    buf[n] = '\0';
    *data = buf;
    if (len) *len = n;
    buf = NULL;
fail:
    free(buf);
    if (own && fd >= 0) close(fd);
    return res;
}

weft_result weft_read_file(const char *path, char **data, size_t *len, weft_diag *d) {
    return weft_read_file_max(path, WEFT_READ_MAX_BYTES, 0, data, len, d);
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
