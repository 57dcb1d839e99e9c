/* xml_write.c — writes an algo in exactly the shape the MSCCL executor's and RCCL's hand-written
 * parsers accept: one element per line, fixed attribute order, double quotes, no declaration. */
#include "weft_ir.h"

#include <stdlib.h>
#include <string.h>

/* The name is the only free text. Besides the XML specials, line breaks and tabs are written as
 * character references so that the element stays on one line; other control characters cannot
 * appear in XML 1.0 at all and become '?', as do bytes that are not UTF-8 (a file must read back)
 * and the two code points XML excludes, U+FFFE and U+FFFF. */
static void put_escaped(weft_sb *b, const char *s) {
    for (; s && *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c >= 0x80) {
            uint32_t cp = 0;
            /* at most 4 bytes; the terminator ends a sequence early, never read past */
            size_t n = weft_utf8_len((const unsigned char *)s, 4, &cp);
            if (n == 0) {
                weft_sb_printf(b, "?");
                continue;
            }
            if (cp == 0xFFFE || cp == 0xFFFF)
                weft_sb_printf(b, "?");
            else
                weft_sb_printf(b, "%.*s", (int)n, s);
            s += n - 1;
            continue;
        }
        switch (c) {
        case '&': weft_sb_printf(b, "&amp;"); break;
        case '<': weft_sb_printf(b, "&lt;"); break;
        case '>': weft_sb_printf(b, "&gt;"); break;
        case '"': weft_sb_printf(b, "&quot;"); break;
        case '\n': weft_sb_printf(b, "&#10;"); break;
        case '\r': weft_sb_printf(b, "&#13;"); break;
        case '\t': weft_sb_printf(b, "&#9;"); break;
        default: weft_sb_printf(b, "%c", c < 0x20 || c == 0x7f ? '?' : (char)c); break;
        }
    }
}

/* Values the format cannot express are refused rather than written as garbage. */
static int writable(const weft_algo *a) {
    if (a == NULL || a->ngpus < 0 || (a->ngpus > 0 && a->gpus == NULL)) return 0;
    if ((unsigned)a->proto >= WEFT_PROTO_COUNT || (unsigned)a->coll >= WEFT_COLL_COUNT) return 0;
    for (int32_t r = 0; r < a->ngpus; r++) {
        const weft_gpu *g = &a->gpus[r];
        if (g->ntbs < 0 || (g->ntbs > 0 && g->tbs == NULL)) return 0;
        for (int32_t t = 0; t < g->ntbs; t++) {
            const weft_tb *tb = &g->tbs[t];
            if (tb->nsteps < 0 || (tb->nsteps > 0 && tb->steps == NULL)) return 0;
            for (int32_t s = 0; s < tb->nsteps; s++) {
                const weft_step *st = &tb->steps[s];
                if ((unsigned)st->type >= WEFT_STEP_COUNT ||
                    (unsigned)st->srcbuf >= WEFT_BUF_COUNT ||
                    (unsigned)st->dstbuf >= WEFT_BUF_COUNT)
                    return 0;
            }
        }
    }
    return 1;
}

static void write_algo(const weft_algo *a, weft_sb *b) {
    weft_sb_printf(b, "<algo name=\"");
    put_escaped(b, a->name);
    weft_sb_printf(
        b,
        "\" proto=\"%s\" nchannels=\"%d\" nchunksperloop=\"%d\" ngpus=\"%d\" coll=\"%s\" "
        "inplace=\"%d\" outofplace=\"%d\" minBytes=\"%lld\" maxBytes=\"%lld\"",
        weft_proto_name(a->proto), a->nchannels, a->nchunksperloop, a->ngpus,
        weft_coll_name(a->coll), a->inplace, a->outofplace, (long long)a->min_bytes,
        (long long)a->max_bytes);
    if (weft_coll_rooted(a->coll)) weft_sb_printf(b, " root=\"%d\"", a->root);
    if ((a->launch & WEFT_LAUNCH_ALL) != WEFT_LAUNCH_ALL) {
        char m[96];
        weft_sb_printf(b, " launch=\"%s\"", weft_launch_mask_str(a->launch, m, sizeof m));
    }
    if (a->graph_max_bytes)
        weft_sb_printf(b, " graphMaxBytes=\"%lld\"", (long long)a->graph_max_bytes);
    weft_sb_printf(b, ">\n");
    for (int32_t r = 0; r < a->ngpus; r++) {
        const weft_gpu *g = &a->gpus[r];
        weft_sb_printf(b, "  <gpu id=\"%d\" i_chunks=\"%d\" o_chunks=\"%d\" s_chunks=\"%d\">\n", r,
                       g->i_chunks, g->o_chunks, g->s_chunks);
        for (int32_t t = 0; t < g->ntbs; t++) {
            const weft_tb *tb = &g->tbs[t];
            weft_sb_printf(b, "    <tb id=\"%d\" send=\"%d\" recv=\"%d\" chan=\"%d\">\n", t,
                           tb->send, tb->recv, tb->chan);
            for (int32_t s = 0; s < tb->nsteps; s++) {
                const weft_step *st = &tb->steps[s];
                weft_sb_printf(
                    b,
                    "      <step s=\"%d\" type=\"%s\" srcbuf=\"%c\" srcoff=\"%d\" dstbuf=\"%c\" "
                    "dstoff=\"%d\" cnt=\"%d\" depid=\"%d\" deps=\"%d\" hasdep=\"%d\"/>\n",
                    s, weft_step_name(st->type), weft_buf_code(st->srcbuf), st->srcoff,
                    weft_buf_code(st->dstbuf), st->dstoff, st->cnt, st->depid, st->deps,
                    st->hasdep);
            }
            weft_sb_printf(b, "    </tb>\n");
        }
        weft_sb_printf(b, "  </gpu>\n");
    }
    weft_sb_printf(b, "</algo>\n");
}

weft_result weft_ir_write_string(const weft_algo *a, char **out) {
    weft_result res = WEFT_OK;
    weft_sb b = {0};
    *out = NULL;
    if (!writable(a)) WEFT_FAIL(WEFT_ERR_INPUT);
    write_algo(a, &b);
    if (b.oom) WEFT_FAIL(WEFT_ERR_NOMEM);
    *out = b.p;
    b.p = NULL;
fail:
    free(b.p);
    return res;
}

weft_result weft_ir_write(const weft_algo *a, FILE *out) {
    weft_result res = WEFT_OK;
    char *s = NULL;
    WEFT_CHECK(weft_ir_write_string(a, &s));
    size_t n = strlen(s);
    if (fwrite(s, 1, n, out) != n || fflush(out) != 0) WEFT_FAIL(WEFT_ERR_SYSTEM);
fail:
    free(s);
    return res;
}
