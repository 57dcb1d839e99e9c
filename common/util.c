/* util.c — result strings, failure trail, file reading and small allocation helpers. */
#include "weft_common.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

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

weft_result weft_read_file(const char *path, char **data, size_t *len, weft_diag *d) {
    weft_result res = WEFT_OK;
    char *buf = NULL;
    size_t n = 0, cap = 0;
    FILE *f = fopen(path, "rb");
    *data = NULL;
    if (len) *len = 0;
    if (f == NULL) {
        weft_diag_add(d, WEFT_SEV_ERROR, path, 0, 0, "cannot open: %s", strerror(errno));
        WEFT_FAIL(WEFT_ERR_INPUT);
    }
    for (;;) {
        if (weft_grow((void **)&buf, &cap, n + 65536, 1) != 0) WEFT_FAIL(WEFT_ERR_NOMEM);
        size_t got = fread(buf + n, 1, cap - n - 1, f);
        n += got;
        if (got == 0) break;
    }
    if (ferror(f)) {
        weft_diag_add(d, WEFT_SEV_ERROR, path, 0, 0, "read error: %s", strerror(errno));
        WEFT_FAIL(WEFT_ERR_INPUT);
    }
    buf[n] = '\0';
    *data = buf;
    if (len) *len = n;
    buf = NULL;
fail:
    free(buf);
    if (f) fclose(f);
    return res;
}
