/* diag.c — the diagnostics collector: file:line[:col] messages with optional caret lines. */
#include "weft_common.h"

#include <stdlib.h>
#include <string.h>

struct weft_diag {
    weft_diag_entry *v;
    size_t n, cap;
    size_t counts[4];
};

static const char *const sev_names[] = {
#define WEFT_X_(n, t) t,
    WEFT_SEVERITIES(WEFT_X_)
#undef WEFT_X_
};

const char *weft_severity_str(weft_severity s) {
    return (unsigned)s < sizeof sev_names / sizeof *sev_names ? sev_names[s] : "?";
}

weft_diag *weft_diag_new(void) {
    return calloc(1, sizeof(weft_diag));
}

static void entry_free(weft_diag_entry *e) {
    free(e->file);
    free(e->msg);
    free(e->source);
}

void weft_diag_clear(weft_diag *d) {
    if (d == NULL) return;
    for (size_t i = 0; i < d->n; i++)
        entry_free(&d->v[i]);
    d->n = 0;
    memset(d->counts, 0, sizeof d->counts);
}

void weft_diag_free(weft_diag *d) {
    if (d == NULL) return;
    weft_diag_clear(d);
    free(d->v);
    free(d);
}

static void add_entry(weft_diag *d, weft_severity sev, unsigned flags, const char *file, int line,
                      int col, const char *src, int caret_col, int caret_len, const char *fmt,
                      va_list ap) {
    if (d == NULL) return;
    if ((unsigned)sev < 4) d->counts[sev]++;
    if (d->n >= WEFT_DIAG_MAX) return;
    if (weft_grow((void **)&d->v, &d->cap, d->n, sizeof *d->v) != 0) return;
    weft_diag_entry *e = &d->v[d->n];
    memset(e, 0, sizeof *e);
    va_list ap2;
    va_copy(ap2, ap);
    int len = vsnprintf(NULL, 0, fmt, ap2);
    va_end(ap2);
    if (len < 0 || (e->msg = malloc((size_t)len + 1)) == NULL) return;
    vsnprintf(e->msg, (size_t)len + 1, fmt, ap);
    e->sev = sev;
    e->flags = flags;
    e->file = weft_strdup(file);
    e->line = line;
    e->col = col;
    if (src) {
        e->source = weft_strdup(src);
        e->caret_len = caret_len > 0 ? caret_len : 1;
        e->caret_col = caret_col > 0 ? caret_col : 0;
    }
    d->n++;
}

void weft_diag_vadd(weft_diag *d, weft_severity sev, const char *file, int line, int col,
                    const char *fmt, va_list ap) {
    add_entry(d, sev, 0, file, line, col, NULL, 0, 0, fmt, ap);
}

void weft_diag_add(weft_diag *d, weft_severity sev, const char *file, int line, int col,
                   const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    add_entry(d, sev, 0, file, line, col, NULL, 0, 0, fmt, ap);
    va_end(ap);
}

void weft_diag_add_src(weft_diag *d, weft_severity sev, const char *file, int line, int col,
                       const char *source_line, int caret_len, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    add_entry(d, sev, 0, file, line, col, source_line, 0, caret_len, fmt, ap);
    va_end(ap);
}

void weft_diag_vadd_src(weft_diag *d, weft_severity sev, const char *file, int line, int col,
                        const char *source, int caret_col, int caret_len, const char *fmt,
                        va_list ap) {
    add_entry(d, sev, 0, file, line, col, source, caret_col, caret_len, fmt, ap);
}

static void add_copy(weft_diag *d, const weft_diag_entry *e, ...) {
    va_list ap;
    va_start(ap, e);
    add_entry(d, e->sev, e->flags, e->file, e->line, e->col, e->source, e->caret_col, e->caret_len,
              "%s", ap);
    va_end(ap);
}

void weft_diag_append(weft_diag *d, const weft_diag *from) {
    if (d == NULL || from == NULL) return;
    for (size_t i = 0; i < from->n; i++)
        add_copy(d, &from->v[i], from->v[i].msg);
    /* what from only counted: counted here too */
    size_t stored[4] = {0, 0, 0, 0};
    for (size_t i = 0; i < from->n; i++)
        if ((unsigned)from->v[i].sev < 4) stored[from->v[i].sev]++;
    for (int s = 0; s < 4; s++)
        d->counts[s] += from->counts[s] - stored[s];
}

void weft_diag_add_flags(weft_diag *d, weft_severity sev, unsigned flags, const char *file,
                         int line, int col, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    add_entry(d, sev, flags, file, line, col, NULL, 0, 0, fmt, ap);
    va_end(ap);
}

void weft_diag_drop(weft_diag *d, unsigned flags) {
    if (d == NULL) return;
    size_t k = 0;
    for (size_t i = 0; i < d->n; i++) {
        if (d->v[i].flags & flags) {
            if ((unsigned)d->v[i].sev < 4) d->counts[d->v[i].sev]--;
            entry_free(&d->v[i]);
        } else {
            d->v[k++] = d->v[i];
        }
    }
    d->n = k;
}

int weft_diag_full(const weft_diag *d) {
    return d == NULL || d->n >= WEFT_DIAG_MAX;
}

size_t weft_diag_size(const weft_diag *d) {
    return d ? d->n : 0;
}

const weft_diag_entry *weft_diag_get(const weft_diag *d, size_t i) {
    return d && i < d->n ? &d->v[i] : NULL;
}

size_t weft_diag_count(const weft_diag *d, weft_severity sev) {
    return d && (unsigned)sev < 4 ? d->counts[sev] : 0;
}

/* "file:line:col: sev: msg" with the parts that are known, then the source line and a caret
 * under the span, tabs kept so that the caret lines up in a terminal. */
char *weft_diag_format(const weft_diag_entry *e) {
    char loc[64] = "";
    if (e->line > 0 && e->col > 0)
        snprintf(loc, sizeof loc, ":%d:%d", e->line, e->col);
    else if (e->line > 0)
        snprintf(loc, sizeof loc, ":%d", e->line);
    char *head = weft_asprintf("%s%s%s%s: %s", e->file ? e->file : "", loc,
                               e->file || e->line ? ": " : "", weft_severity_str(e->sev), e->msg);
    if (head == NULL || e->source == NULL) return head;
    size_t srclen = strlen(e->source);
    int at = e->caret_col > 0 ? e->caret_col : e->col;
    size_t pad = at > 0 ? (size_t)at - 1 : 0;
    size_t total = strlen(head) + 1 + 2 + srclen + 1 + 2 + pad + (size_t)e->caret_len + 1;
    char *out = malloc(total);
    if (out == NULL) return head;
    char *p = out;
    p += sprintf(p, "%s\n  %s\n  ", head, e->source);
    for (size_t i = 0; i < pad; i++)
        *p++ = (i < srclen && e->source[i] == '\t') ? '\t' : ' ';
    *p++ = '^';
    for (int i = 1; i < e->caret_len; i++)
        *p++ = '~';
    *p = '\0';
    free(head);
    return out;
}

void weft_diag_print(const weft_diag *d, FILE *out, weft_severity min_sev) {
    if (d == NULL) return;
    for (size_t i = 0; i < d->n; i++) {
        if (d->v[i].sev > min_sev) continue;
        char *s = weft_diag_format(&d->v[i]);
        if (s) fprintf(out, "%s\n", s);
        free(s);
    }
    size_t dropped = 0;
    for (int s = 0; s <= (int)min_sev && s < 4; s++)
        dropped += d->counts[s];
    size_t shown = 0;
    for (size_t i = 0; i < d->n; i++)
        if (d->v[i].sev <= min_sev) shown++;
    if (dropped > shown) fprintf(out, "(%zu more diagnostics not shown)\n", dropped - shown);
}
