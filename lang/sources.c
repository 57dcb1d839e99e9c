/* sources.c — the loaded files of a program and diagnostics with a source line and caret. */
#include "lang_internal.h"

#include <stdlib.h>
#include <string.h>

weft_lang_sources *weft_lang_sources_new(void) {
    return calloc(1, sizeof(weft_lang_sources));
}

void weft_lang_sources_free(weft_lang_sources *s) {
    if (s == NULL) return;
    for (size_t i = 0; i < s->n; i++) {
        free(s->v[i].path);
        free(s->v[i].text);
        free(s->v[i].line_starts);
    }
    free(s->v);
    free(s);
}

/* Takes ownership of text; returns the file index or -1 on allocation failure. */
int32_t weft_lang_sources_add(weft_lang_sources *s, const char *path, char *text, size_t len) {
    if (weft_grow((void **)&s->v, &s->cap, s->n, sizeof *s->v) != 0) {
        free(text);
        return -1;
    }
    struct weft_lang_source *f = &s->v[s->n];
    memset(f, 0, sizeof *f);
    f->path = weft_strdup(path);
    if (f->path == NULL) {
        free(text);
        return -1;
    }
    f->text = text;
    f->len = len;
    return (int32_t)s->n++;
}

size_t weft_lang_sources_count(const weft_lang_sources *s) {
    return s ? s->n : 0;
}

const char *weft_lang_source_path(const weft_lang_sources *s, int32_t file) {
    return s && file >= 0 && (size_t)file < s->n ? s->v[file].path : NULL;
}

const char *weft_lang_source_text(const weft_lang_sources *s, int32_t file, size_t *len) {
    if (s == NULL || file < 0 || (size_t)file >= s->n) {
        *len = 0;
        return "";
    }
    *len = s->v[file].len;
    return s->v[file].text;
}

/* Line starts are computed the first time a diagnostic needs them; the cast drops const
 * because this is a cache, not a change of the sources. */
static int index_lines(const weft_lang_sources *cs, int32_t file) {
    struct weft_lang_source *f = &((weft_lang_sources *)cs)->v[file];
    if (f->line_starts) return 0;
    int32_t n = 1;
    for (size_t i = 0; i < f->len; i++)
        if (f->text[i] == '\n') n++;
    f->line_starts = malloc((size_t)n * sizeof *f->line_starts);
    if (f->line_starts == NULL) return -1;
    f->line_starts[0] = 0;
    int32_t k = 1;
    for (size_t i = 0; i < f->len; i++)
        if (f->text[i] == '\n') f->line_starts[k++] = (int32_t)i + 1;
    f->nlines = n;
    return 0;
}

void weft_lang_linecol(const weft_lang_sources *s, int32_t file, int32_t offset, int *line,
                       int *col) {
    *line = *col = 0;
    if (s == NULL || file < 0 || (size_t)file >= s->n || index_lines(s, file) != 0) return;
    const struct weft_lang_source *f = &s->v[file];
    if (offset < 0) offset = 0;
    if ((size_t)offset > f->len) offset = (int32_t)f->len;
    int32_t lo = 0, hi = f->nlines - 1;
    while (lo < hi) {
        int32_t mid = (lo + hi + 1) / 2;
        if (f->line_starts[mid] <= offset)
            lo = mid;
        else
            hi = mid - 1;
    }
    *line = lo + 1;
    *col = offset - f->line_starts[lo] + 1;
}

void weft_lang_vreport(weft_diag *d, const weft_lang_sources *s, weft_severity sev,
                       weft_lang_loc loc, const char *fmt, va_list ap) {
    if (d == NULL) return;
    const char *path = weft_lang_source_path(s, loc.file);
    int line = 0, col = 0;
    weft_lang_linecol(s, loc.file, loc.start, &line, &col);
    if (line == 0) {
        weft_diag_vadd(d, sev, path, 0, 0, fmt, ap);
        return;
    }
    const struct weft_lang_source *f = &s->v[loc.file];
    int32_t ls = f->line_starts[line - 1];
    int32_t le = ls;
    while ((size_t)le < f->len && f->text[le] != '\n')
        le++;
    if (le > ls && f->text[le - 1] == '\r') le--;
    int32_t start = loc.start < ls ? ls : loc.start;
    int32_t end = loc.end > le ? le : loc.end;
    int caret = end > start ? (int)(end - start) : 1;
    char *src = malloc((size_t)(le - ls) + 1);
    char *msg = NULL;
    va_list ap2;
    va_copy(ap2, ap);
    int mlen = vsnprintf(NULL, 0, fmt, ap2);
    va_end(ap2);
    if (mlen >= 0 && (msg = malloc((size_t)mlen + 1)) != NULL)
        vsnprintf(msg, (size_t)mlen + 1, fmt, ap);
    if (src == NULL || msg == NULL) {
        weft_diag_add(d, sev, path, line, col, "%s", msg ? msg : "(out of memory)");
    } else {
        memcpy(src, f->text + ls, (size_t)(le - ls));
        src[le - ls] = '\0';
        weft_diag_add_src(d, sev, path, line, col, src, caret, "%s", msg);
    }
    free(src);
    free(msg);
}

void weft_lang_report(weft_diag *d, const weft_lang_sources *s, weft_severity sev,
                      weft_lang_loc loc, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    weft_lang_vreport(d, s, sev, loc, fmt, ap);
    va_end(ap);
}

void weft_lang_parse_error(weft_lang_parser *p, weft_lang_yyltype at, const char *fmt, ...) {
    weft_lang_loc loc = {p->file, at.start, at.end};
    p->nerrors++;
    va_list ap;
    va_start(ap, fmt);
    weft_lang_vreport(p->d, p->sources, WEFT_SEV_ERROR, loc, fmt, ap);
    va_end(ap);
}
