/* show.c — a readable listing of an algo: per rank, per tb, one line per step; then a summary. */
#include "weft_ir.h"

#include <stdlib.h>
#include <string.h>

/* "i[3]" for one chunk, "i[3..5]" (inclusive) for several. */
static void chunks(char *out, size_t len, weft_buf b, int32_t off, int32_t cnt) {
    char c = weft_buf_code(b);
    if (cnt <= 1)
        snprintf(out, len, "%c[%d]", c, off);
    else
        snprintf(out, len, "%c[%d..%lld]", c, off, (long long)off + cnt - 1);
}

/* The data flow of one step, e.g. "recv 3 + i[0] -> i[0], send 1". */
static void describe(char *out, size_t len, const weft_tb *tb, const weft_step *st) {
    char src[48], dst[48];
    chunks(src, sizeof src, st->srcbuf, st->srcoff, st->cnt);
    chunks(dst, sizeof dst, st->dstbuf, st->dstoff, st->cnt);
    switch (st->type) {
    case WEFT_STEP_SEND: snprintf(out, len, "%s -> send %d", src, tb->send); break;
    case WEFT_STEP_RECV: snprintf(out, len, "recv %d -> %s", tb->recv, dst); break;
    case WEFT_STEP_RCS:
        snprintf(out, len, "recv %d -> %s, send %d", tb->recv, dst, tb->send);
        break;
    case WEFT_STEP_RRS:
        snprintf(out, len, "recv %d + %s -> send %d", tb->recv, src, tb->send);
        break;
    case WEFT_STEP_RRC: snprintf(out, len, "recv %d + %s -> %s", tb->recv, src, dst); break;
    case WEFT_STEP_RRCS:
        snprintf(out, len, "recv %d + %s -> %s, send %d", tb->recv, src, dst, tb->send);
        break;
    case WEFT_STEP_CPY: snprintf(out, len, "%s -> %s", src, dst); break;
    case WEFT_STEP_RE: snprintf(out, len, "%s + %s -> %s", dst, src, dst); break;
    case WEFT_STEP_NOP: snprintf(out, len, "-"); break;
    case WEFT_STEP_COUNT: snprintf(out, len, "?"); break; /* not a step type */
    }
}

static void show_listing(const weft_algo *a, FILE *out) {
    for (int32_t r = 0; r < a->ngpus; r++) {
        const weft_gpu *g = &a->gpus[r];
        fprintf(out, "rank %d: %d tb%s; chunks: input %d, output %d, scratch %d\n", r, g->ntbs,
                g->ntbs == 1 ? "" : "s", g->i_chunks, g->o_chunks, g->s_chunks);
        for (int32_t t = 0; t < g->ntbs; t++) {
            const weft_tb *tb = &g->tbs[t];
            fprintf(out, "  tb %d: send %d, recv %d, chan %d, %d step%s\n", t, tb->send, tb->recv,
                    tb->chan, tb->nsteps, tb->nsteps == 1 ? "" : "s");
            for (int32_t s = 0; s < tb->nsteps; s++) {
                const weft_step *st = &tb->steps[s];
                char what[160];
                describe(what, sizeof what, tb, st);
                fprintf(out, "    %3d %-4s %s", s, weft_step_name(st->type), what);
                if (st->depid >= 0) fprintf(out, "  after tb %d step %d", st->depid, st->deps);
                if (st->hasdep) fprintf(out, "  (signals)");
                fputc('\n', out);
            }
        }
    }
}

static int show_summary(const weft_algo *a, FILE *out) {
    int64_t by_type[WEFT_STEP_COUNT] = {0};
    int64_t ntbs = 0, nsteps = 0, ndeps = 0;
    int32_t maxtbs = 0, maxsteps = 0, maxchan = -1;
    for (int32_t r = 0; r < a->ngpus; r++) {
        const weft_gpu *g = &a->gpus[r];
        ntbs += g->ntbs;
        if (g->ntbs > maxtbs) maxtbs = g->ntbs;
        for (int32_t t = 0; t < g->ntbs; t++) {
            const weft_tb *tb = &g->tbs[t];
            if (tb->chan > maxchan) maxchan = tb->chan;
            if (tb->nsteps > maxsteps) maxsteps = tb->nsteps;
            nsteps += tb->nsteps;
            for (int32_t s = 0; s < tb->nsteps; s++) {
                if ((unsigned)tb->steps[s].type < WEFT_STEP_COUNT) by_type[tb->steps[s].type]++;
                if (tb->steps[s].depid >= 0) ndeps++;
            }
        }
    }
    fprintf(out, "algo %s: %s, proto %s", a->name ? a->name : "", weft_coll_name(a->coll),
            weft_proto_name(a->proto));
    if (weft_coll_rooted(a->coll)) fprintf(out, ", root %d", a->root);
    fprintf(out, "\n  modes:    %s%s%s\n", a->inplace ? "in-place" : "",
            a->inplace && a->outofplace ? ", " : "", a->outofplace ? "out-of-place" : "");
    fprintf(out, "  sizes:    %lld bytes .. ", (long long)a->min_bytes);
    if (a->max_bytes)
        fprintf(out, "%lld bytes", (long long)a->max_bytes);
    else
        fprintf(out, "unbounded");
    if (a->graph_max_bytes)
        fprintf(out, " (in CUDA graphs up to %lld bytes)", (long long)a->graph_max_bytes);
    fprintf(out, "\n");
    fprintf(out, "  ranks:    %d\n", a->ngpus);
    fprintf(out, "  chunks:   nchunksperloop %d (%d per segment)\n", a->nchunksperloop,
            weft_algo_chunks_per_seg(a));
    fprintf(out, "  channels: %d (highest chan used %d)\n", a->nchannels, maxchan);
    fprintf(out, "  tbs:      %lld (at most %d per rank)\n", (long long)ntbs, maxtbs);
    fprintf(out, "  steps:    %lld (at most %d per tb), %lld with a dependency\n",
            (long long)nsteps, maxsteps, (long long)ndeps);
    fprintf(out, "  by type: ");
    int any = 0;
    for (int k = 0; k < WEFT_STEP_COUNT; k++)
        if (by_type[k])
            fprintf(out, "%s %s %lld", any++ ? "," : "", weft_step_name(k), (long long)by_type[k]);
    fprintf(out, "%s\n", any ? "" : " none");
    /* Chunks moved per (sender, receiver): one row of counts at a time keeps memory linear in
     * the rank count. */
    int64_t *row = calloc((size_t)a->ngpus, sizeof *row);
    if (row == NULL) return -1;
    fprintf(out, "  chunks sent (sender -> receiver: chunks in messages):\n");
    int64_t pairs = 0, total = 0;
    for (int32_t r = 0; r < a->ngpus; r++) {
        const weft_gpu *g = &a->gpus[r];
        memset(row, 0, (size_t)a->ngpus * sizeof *row);
        for (int32_t t = 0; t < g->ntbs; t++) {
            const weft_tb *tb = &g->tbs[t];
            if (tb->send < 0 || tb->send >= a->ngpus) continue;
            for (int32_t s = 0; s < tb->nsteps; s++)
                if (weft_step_flags(tb->steps[s].type) & WEFT_STEP_F_SEND)
                    row[tb->send] += tb->steps[s].cnt;
        }
        int k = 0; /* pairs printed for this sender */
        for (int32_t q = 0; q < a->ngpus; q++) {
            if (row[q] == 0) continue;
            /* Eight pairs to a line keeps wide machines readable. */
            fprintf(out, "%s%d -> %d: %lld",
                    k == 0       ? "    "
                    : k % 8 == 0 ? ",\n    "
                                 : ", ",
                    r, q, (long long)row[q]);
            k++;
            pairs++;
            total += row[q];
        }
        if (k) fputc('\n', out);
    }
    fprintf(out, "    total %lld chunks over %lld peer pairs\n", (long long)total,
            (long long)pairs);
    free(row);
    return 0;
}

weft_result weft_ir_show(const weft_algo *a, FILE *out, int summary_only) {
    if (a == NULL || a->ngpus < 0 || (a->ngpus > 0 && a->gpus == NULL)) return WEFT_ERR_INPUT;
    if (!summary_only) {
        show_listing(a, out);
        fputc('\n', out);
    }
    if (show_summary(a, out) != 0) return WEFT_ERR_NOMEM;
    if (ferror(out)) return WEFT_ERR_SYSTEM;
    return WEFT_OK;
}
