/* program.c — the evaluated program that evaluation, checking and lowering share: its buffers and
 * their layout per buffer mode, diagnostics with the frames an operation came from (repeats
 * counted, not repeated), freeing it, and the --emit=ops listing. */
#include "cc_internal.h"

#include <stdlib.h>
#include <string.h>

/* Errors already reported at a source position: an error inside a loop is shown once, for
 * the first iteration that hits it, and the rest are counted. */
typedef struct cc_seen {
    weft_map keys; /* the positions (as a set) */
    size_t suppressed;
} cc_seen;

static cc_seen *seen_of(const weft_cc_program *p) {
    return (cc_seen *)p->seen;
}

int cc_seen_new(weft_cc_program *p) {
    p->seen = calloc(1, sizeof(cc_seen));
    return p->seen ? 0 : -1;
}

void cc_count_suppressed(const weft_cc_program *p, size_t n) {
    if (seen_of(p)) seen_of(p)->suppressed += n;
}

void cc_flush_suppressed(const weft_cc_program *p, weft_diag *d) {
    cc_seen *s = seen_of(p);
    if (s == NULL || s->suppressed == 0) return;
    weft_diag_add(d, WEFT_SEV_NOTE, weft_lang_source_path(p->src->sources, 0), 0, 0,
                  "%zu more diagnostic%s at places already reported %s not shown", s->suppressed,
                  s->suppressed == 1 ? "" : "s", s->suppressed == 1 ? "is" : "are");
    s->suppressed = 0;
}

/* Whether key is new (and now recorded); without memory every report is new. */
static int seen_insert(cc_seen *s, uint64_t key) {
    int added = 1;
    if (s != NULL && weft_map_put(&s->keys, key, &added) == NULL) return 1;
    return added;
}

void cc_layout_init(cc_layout *l, const weft_cc_program *p, int inplace) {
    l->inplace = inplace;
    l->size[WEFT_MEM_SEND] = p->in_chunks;
    l->size[WEFT_MEM_RECV] = p->out_chunks;
    l->size[WEFT_MEM_SCRATCH] = p->scratch_total;
    l->base[WEFT_MEM_SEND] = 0;
    l->base[WEFT_MEM_RECV] = (int64_t)p->nranks * p->in_chunks;
    l->base[WEFT_MEM_SCRATCH] = l->base[WEFT_MEM_RECV] + (int64_t)p->nranks * p->out_chunks;
    l->nslots = l->base[WEFT_MEM_SCRATCH] + (int64_t)p->nranks * p->scratch_total;
}

/* Every rank has both buffers here, laid out as NCCL aliases them in place (weft_buf_mem);
 * which a non-root rank of a rooted collective may use is the IR verifier's rule. */
int64_t cc_slot(const cc_layout *l, const weft_cc_program *p, int32_t buf, int32_t rank,
                int32_t idx) {
    int mem = WEFT_MEM_SCRATCH;
    int32_t seg = 0;
    if (buf >= CC_BUF_SCRATCH0)
        idx += p->scratch[buf - CC_BUF_SCRATCH0].base;
    else
        mem = weft_buf_mem(p->coll, l->inplace, rank,
                           buf == CC_BUF_INPUT ? WEFT_BUF_INPUT : WEFT_BUF_OUTPUT, &seg);
    return l->base[mem] + (int64_t)rank * l->size[mem] + seg * p->chunks + idx;
}

const char *cc_buf_name(const weft_cc_program *p, int32_t buf) {
    if (buf == CC_BUF_INPUT) return "input";
    if (buf == CC_BUF_OUTPUT) return "output";
    if (buf - CC_BUF_SCRATCH0 < p->nscratch && buf >= CC_BUF_SCRATCH0)
        return p->scratch[buf - CC_BUF_SCRATCH0].name;
    return "?";
}

int32_t cc_buf_size(const weft_cc_program *p, int32_t buf) {
    if (buf == CC_BUF_INPUT) return p->in_chunks;
    if (buf == CC_BUF_OUTPUT) return p->out_chunks;
    if (buf >= CC_BUF_SCRATCH0 && buf - CC_BUF_SCRATCH0 < p->nscratch)
        return p->scratch[buf - CC_BUF_SCRATCH0].size;
    return 0;
}

void cc_ref_str(const weft_cc_program *p, const cc_ref *r, char *buf, size_t n) {
    if (r->cnt == 1)
        snprintf(buf, n, "%s[%d][%d]", cc_buf_name(p, r->buf), r->rank, r->off);
    else
        snprintf(buf, n, "%s[%d][%d..%d]", cc_buf_name(p, r->buf), r->rank, r->off,
                 r->off + r->cnt);
}

const char *cc_source_text(const weft_cc_program *p, weft_lang_loc loc, int *len) {
    size_t n = 0;
    *len = 0;
    if (loc.file < 0) return "";
    const char *t = weft_lang_source_text(p->src->sources, loc.file, &n);
    if (loc.start < 0 || (size_t)loc.end > n || loc.end < loc.start) return "";
    *len = loc.end - loc.start;
    return t + loc.start;
}

static void notes(const weft_cc_program *p, weft_diag *d, int32_t frame) {
    char buf[512];
    int shown = 0;
    while (frame >= 0) {
        if (shown == 4) {
            int more = 0;
            for (int32_t g = frame; g >= 0; g = p->frames[g].parent)
                more++;
            weft_diag_add(d, WEFT_SEV_NOTE, weft_lang_source_path(p->src->sources, 0), 0, 0,
                          "... and %d more enclosing loop%s or call%s", more, more == 1 ? "" : "s",
                          more == 1 ? "" : "s");
            return;
        }
        shown++;
        const cc_frame *f = &p->frames[frame];
        int line, col;
        if (f->is_call) {
            weft_lang_linecol(p->src->sources, f->loc.file, f->loc.start, &line, &col);
            weft_diag_add(d, WEFT_SEV_NOTE, weft_lang_source_path(p->src->sources, f->loc.file),
                          line, col, "in call %s%s", f->name, f->args ? f->args : "()");
            frame = f->parent;
            continue;
        }
        /* consecutive loops print as one note, outermost first, at the innermost loop */
        int32_t chain[64], n = 0, g = frame;
        while (g >= 0 && !p->frames[g].is_call && n < 64) {
            chain[n++] = g;
            g = p->frames[g].parent;
        }
        int m = 0;
        for (int i = n - 1; i >= 0 && m < (int)sizeof buf; i--)
            m += snprintf(buf + m, sizeof buf - (size_t)m, "%s%s=%lld", i == n - 1 ? "" : ", ",
                          p->frames[chain[i]].name, (long long)p->frames[chain[i]].value);
        weft_lang_linecol(p->src->sources, f->loc.file, f->loc.start, &line, &col);
        weft_diag_add(d, WEFT_SEV_NOTE, weft_lang_source_path(p->src->sources, f->loc.file), line,
                      col, "in iteration %s", buf);
        frame = g;
    }
}

int cc_report_wanted(const weft_cc_program *p, weft_lang_loc loc, weft_severity sev) {
    uint64_t key = ((uint64_t)(uint32_t)(loc.file + 2) << 32) | (uint32_t)loc.start;
    key = key * 2 + (sev == WEFT_SEV_ERROR);
    if (seen_insert(seen_of(p), key)) return 1;
    if (seen_of(p)) seen_of(p)->suppressed++;
    return 0;
}

void cc_vreport(const weft_cc_program *p, weft_diag *d, weft_severity sev, weft_lang_loc loc,
                int32_t frame, const char *fmt, va_list ap) {
    if (!cc_report_wanted(p, loc, sev)) return;
    cc_vreport_new(p, d, sev, loc, frame, fmt, ap);
}

void cc_vreport_new(const weft_cc_program *p, weft_diag *d, weft_severity sev, weft_lang_loc loc,
                    int32_t frame, const char *fmt, va_list ap) {
    if (loc.file < 0) {
        weft_diag_vadd(d, sev, weft_lang_source_path(p->src->sources, 0), 0, 0, fmt, ap);
        return;
    }
    weft_lang_vreport(d, p->src->sources, sev, loc, fmt, ap);
    notes(p, d, frame);
}

void cc_report(const weft_cc_program *p, weft_diag *d, weft_severity sev, weft_lang_loc loc,
               int32_t frame, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    cc_vreport(p, d, sev, loc, frame, fmt, ap);
    va_end(ap);
}

void weft_cc_program_free(weft_cc_program *p) {
    if (p == NULL) return;
    for (size_t i = 0; i < p->nframes; i++)
        free(p->frames[i].args);
    free(p->frames);
    free(p->name);
    free(p->scratch);
    free(p->ops);
    free(p->terms);
    free(p->fuse_from);
    free(p->dead);
    free(p->noop);
    free(p->feed);
    free(p->recv_into);
    if (p->seen) {
        weft_map_free(&seen_of(p)->keys);
        free(p->seen);
    }
    free(p);
}

/* ---- --emit=ops --------------------------------------------------------------------------- */

static const char *const op_names[] = {
#define WEFT_X_(id, n) n,
    CC_OP_KINDS(WEFT_X_)
#undef WEFT_X_
};

static const char *const hint_names[] = {
#define WEFT_X_(id, n) n,
    CC_HINTS(WEFT_X_)
#undef WEFT_X_
};

weft_result weft_cc_write_ops(const weft_cc_program *p, FILE *out) {
    fprintf(out, "# %s: %s, %d ranks, chunks %d, %s, %s%s%s, instances %d\n", p->name,
            weft_coll_name(p->coll), p->nranks, p->chunks, weft_proto_name(p->proto),
            p->inplace ? "inplace" : "", p->inplace && p->outofplace ? " " : "",
            p->outofplace ? "outofplace" : "", p->instances);
    for (int32_t i = 0; i < p->nscratch; i++)
        fprintf(out, "# scratch %s[%d] at %d\n", p->scratch[i].name, p->scratch[i].size,
                p->scratch[i].base);
    for (size_t i = 0; i < p->nops; i++) {
        const cc_op *op = &p->ops[i];
        char a[96], b[96];
        int line, col;
        weft_lang_linecol(p->src->sources, op->loc.file, op->loc.start, &line, &col);
        cc_ref_str(p, &op->src, a, sizeof a);
        cc_ref_str(p, &op->dst, b, sizeof b);
        if (op->kind == CC_OP_ENSURE) {
            fprintf(out, "%d: ensure %s ==", line, b);
            for (int32_t t = 0; t < op->nterms; t++) {
                const cc_term *tm = &p->terms[op->term0 + t];
                fprintf(out, "%s %s[", t ? " +" : "", cc_buf_name(p, tm->buf));
                if (tm->rank_hi - tm->rank_lo == 1)
                    fprintf(out, "%d]", tm->rank_lo);
                else
                    fprintf(out, "%d..%d]", tm->rank_lo, tm->rank_hi);
                if (tm->cnt == 1)
                    fprintf(out, "[%d]", tm->off);
                else
                    fprintf(out, "[%d..%d]", tm->off, tm->off + tm->cnt);
            }
            fputc('\n', out);
            continue;
        }
        fprintf(out, "%d: %s %s -> %s", line, op_names[op->kind], a, b);
        for (int h = 0; h < CC_HINT_COUNT; h++)
            if (op->hint[h] >= 0) fprintf(out, " %s=%d", hint_names[h], op->hint[h]);
        fputc('\n', out);
    }
    return ferror(out) ? WEFT_ERR_SYSTEM : WEFT_OK;
}
