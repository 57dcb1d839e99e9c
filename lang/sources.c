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

/* Longest source line a diagnostic shows whole; a longer one is shown as an excerpt around the
 * caret, so that a diagnostic costs the same on a megabyte-long line as on a short one. */
#define SHOW_LINE   240
#define SHOW_BEFORE 80

void weft_lang_vreport(weft_diag *d, const weft_lang_sources *s, weft_severity sev,
                       weft_lang_loc loc, const char *fmt, va_list ap) {
    if (d == NULL) return;
    const char *path = weft_lang_source_path(s, loc.file);
    int line = 0, col = 0;
    weft_lang_linecol(s, loc.file, loc.start, &line, &col);
    if (line == 0 || weft_diag_full(d)) {
        /* past the cap the entry is only counted: nothing is formatted */
        weft_diag_vadd(d, sev, path, line, col, fmt, ap);
        return;
    }
    const struct weft_lang_source *f = &s->v[loc.file];
    /* the line's end from the index, not by scanning it */
    int32_t ls = f->line_starts[line - 1];
    int32_t le = line < f->nlines ? f->line_starts[line] - 1 : (int32_t)f->len;
    if (le > ls && f->text[le - 1] == '\r') le--;
    int32_t start = loc.start < ls ? ls : loc.start > le ? le : loc.start;
    int32_t end = loc.end > le ? le : loc.end;
    int caret = end > start ? (int)(end - start) : 1;
    int32_t from = ls, to = le, caret_col = 0;
    if (le - ls > SHOW_LINE) {
        from = start - ls > SHOW_BEFORE ? start - SHOW_BEFORE : ls;
        to = from + SHOW_LINE < le ? from + SHOW_LINE : le;
        if (caret > to - start) caret = to - start > 0 ? (int)(to - start) : 1;
    }
    int pre = from > ls, post = to < le;
    if (pre || post) caret_col = (int)(start - from) + 1 + (pre ? 3 : 0);
    size_t n = (size_t)(to - from);
    char *src = malloc(n + 7);
    if (src == NULL) {
        weft_diag_vadd(d, sev, path, line, col, fmt, ap);
        return;
    }
    char *o = src;
    if (pre) o += sprintf(o, "...");
    memcpy(o, f->text + from, n);
    o += n;
    if (post) o += sprintf(o, "...");
    *o = '\0';
    /* control characters (a NUL would cut the text short, an escape would reach the terminal)
     * and bytes that are not UTF-8 are shown as '?'; tabs stay, so that the caret lines up */
    unsigned char *q = (unsigned char *)src + (pre ? 3 : 0), *qe = q + n;
    while (q < qe) {
        size_t len = weft_utf8_len(q, (size_t)(qe - q), NULL);
        if (len > 1) {
            q += len;
            continue;
        }
        if (*q < 0x20 ? *q != '\t' : *q >= 0x7f) *q = '?';
        q++;
    }
    weft_diag_vadd_src(d, sev, path, line, col, src, caret_col, caret, fmt, ap);
    free(src);
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
