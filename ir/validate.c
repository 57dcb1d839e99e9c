/* validate.c — structural validation of an algo (read from XML or built in memory): peers,
 * connections, dependencies, bounds, counts; MSCCL runtime limits as warnings. */
#include "stepgraph_internal.h"

#include <stdlib.h>
#include <string.h>

/* MSCCL runtime limits (see docs/ir.md): exceeding them is legal for weft but the file would not
 * load in those runtimes. */
#define MSCCL_MAX_STEPS_EXECUTOR  64
#define MSCCL_MAX_STEPS_LEGACY    256
#define MSCCL_MAX_TBS_EXECUTOR    1024
#define MSCCL_MAX_TBS_RCCL        64
#define MSCCL_MAX_TBS_LEGACY      216
#define MSCCL_MAX_CNT             72 /* cnt must stay below */
#define MSCCL_MAX_CHANNELS        32
#define MAX_UNUSED_HASDEP_REPORTS 10

typedef struct vctx {
    const weft_algo *a;
    weft_diag *d;
    int nerr;
    unsigned flags; /* of the reports being made: WEFT_DIAG_COMPAT for the MSCCL limits */
} vctx;

/* Reports at the element's line, prefixed with "rank R tb T step S: " as far as known (-1 =
 * not part of the location). */
static void vreport(vctx *v, weft_severity sev, int32_t line, int32_t r, int32_t t, int32_t s,
                    const char *fmt, ...) WEFT_PRINTF(7, 8);
static void vreport(vctx *v, weft_severity sev, int32_t line, int32_t r, int32_t t, int32_t s,
                    const char *fmt, ...) {
    if (sev == WEFT_SEV_ERROR) v->nerr++;
    char where[64] = "";
    if (r >= 0 && t >= 0 && s >= 0)
        snprintf(where, sizeof where, "rank %d tb %d step %d: ", r, t, s);
    else if (r >= 0 && t >= 0)
        snprintf(where, sizeof where, "rank %d tb %d: ", r, t);
    else if (r >= 0)
        snprintf(where, sizeof where, "rank %d: ", r);
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    const char *file = v->a->file;
    weft_diag_add_flags(v->d, sev, v->flags, file, file ? line : 0, 0, "%s%s", where, msg);
}

static int32_t buf_chunks(const weft_gpu *g, weft_buf b) {
    switch (b) {
    case WEFT_BUF_INPUT: return g->i_chunks;
    case WEFT_BUF_OUTPUT: return g->o_chunks;
    case WEFT_BUF_SCRATCH: return g->s_chunks;
    case WEFT_BUF_COUNT: break;
    }
    return 0; /* not a buffer (rejected before) */
}

static const char *buf_attr(weft_buf b) {
    switch (b) {
    case WEFT_BUF_INPUT: return "i_chunks";
    case WEFT_BUF_OUTPUT: return "o_chunks";
    case WEFT_BUF_SCRATCH: return "s_chunks";
    case WEFT_BUF_COUNT: break;
    }
    return "?"; /* not a buffer (rejected before) */
}

static void check_algo(vctx *v) {
    const weft_algo *a = v->a;
    if ((unsigned)a->proto >= WEFT_PROTO_COUNT)
        vreport(v, WEFT_SEV_ERROR, a->line, -1, -1, -1, "invalid protocol %d", (int)a->proto);
    if ((unsigned)a->coll >= WEFT_COLL_COUNT)
        vreport(v, WEFT_SEV_ERROR, a->line, -1, -1, -1, "invalid collective %d", (int)a->coll);
    if (a->nchannels < 1 || a->nchannels > WEFT_IR_MAX_CHANNELS)
        vreport(v, WEFT_SEV_ERROR, a->line, -1, -1, -1, "nchannels=\"%d\" must be 1..%d",
                a->nchannels, WEFT_IR_MAX_CHANNELS);
    else if (a->nchannels > MSCCL_MAX_CHANNELS) {
        v->flags = WEFT_DIAG_COMPAT;
        vreport(v, WEFT_SEV_WARNING, a->line, -1, -1, -1,
                "nchannels=\"%d\": the MSCCL runtimes support at most %d channels", a->nchannels,
                MSCCL_MAX_CHANNELS);
        v->flags = 0;
    }
    if (a->nchunksperloop < 1 || a->nchunksperloop > WEFT_IR_MAX_CHUNKS)
        vreport(v, WEFT_SEV_ERROR, a->line, -1, -1, -1, "nchunksperloop=\"%d\" must be 1..%d",
                a->nchunksperloop, WEFT_IR_MAX_CHUNKS);
    else if ((unsigned)a->coll < WEFT_COLL_COUNT && a->nchunksperloop % weft_algo_size_mult(a))
        vreport(v, WEFT_SEV_ERROR, a->line, -1, -1, -1,
                "nchunksperloop=\"%d\" is not a multiple of ngpus=\"%d\", as %s requires",
                a->nchunksperloop, a->ngpus, weft_coll_name(a->coll));
    if (a->inplace > 1 || a->outofplace > 1)
        vreport(v, WEFT_SEV_ERROR, a->line, -1, -1, -1, "inplace and outofplace must be 0 or 1");
    else if (!a->inplace && !a->outofplace)
        vreport(v, WEFT_SEV_WARNING, a->line, -1, -1, -1,
                "inplace=\"0\" and outofplace=\"0\": no call can select this algorithm");
    if (a->min_bytes < 0 || a->max_bytes < 0)
        vreport(v, WEFT_SEV_ERROR, a->line, -1, -1, -1,
                "minBytes and maxBytes must not be negative");
    else if (a->max_bytes != 0 && a->min_bytes > a->max_bytes)
        vreport(v, WEFT_SEV_ERROR, a->line, -1, -1, -1,
                "minBytes=\"%lld\" is larger than maxBytes=\"%lld\"", (long long)a->min_bytes,
                (long long)a->max_bytes);
    if (a->graph_max_bytes < 0 ||
        (a->graph_max_bytes != 0 && (a->graph_max_bytes < a->min_bytes ||
                                     (a->max_bytes != 0 && a->graph_max_bytes > a->max_bytes))))
        vreport(v, WEFT_SEV_ERROR, a->line, -1, -1, -1,
                "graphMaxBytes=\"%lld\" is outside [minBytes, maxBytes] = [%lld, %lld]",
                (long long)a->graph_max_bytes, (long long)a->min_bytes, (long long)a->max_bytes);
    if (weft_coll_rooted(a->coll) && (a->root < 0 || a->root >= a->ngpus))
        vreport(v, WEFT_SEV_ERROR, a->line, -1, -1, -1, "root=\"%d\" is out of range (ngpus is %d)",
                a->root, a->ngpus);
}

/* Declared buffer sizes against what the collective's buffers hold: K chunks for a large
 * (N x count) buffer, K / N for the others; in-place files declare 0 for the aliased side. */
static void check_gpu(vctx *v, const weft_gpu *g, int32_t r) {
    const weft_algo *a = v->a;
    if (g->id != r)
        vreport(v, WEFT_SEV_ERROR, g->line, r, -1, -1, "gpu id %d is not its rank", g->id);
    for (int b = 0; b < WEFT_BUF_COUNT; b++) {
        int32_t n = buf_chunks(g, (weft_buf)b);
        if (n < 0 || n > WEFT_IR_MAX_CHUNKS) {
            vreport(v, WEFT_SEV_ERROR, g->line, r, -1, -1, "%s=\"%d\" must be 0..%d",
                    buf_attr((weft_buf)b), n, WEFT_IR_MAX_CHUNKS);
            continue;
        }
        if (b == WEFT_BUF_SCRATCH || !weft_coll_runnable(a->coll) || a->nchunksperloop < 1 ||
            a->nchunksperloop % weft_algo_size_mult(a))
            continue;
        int32_t want =
            weft_coll_large(a->coll, (weft_buf)b) ? a->nchunksperloop : weft_algo_chunks_per_seg(a);
        if (n > want)
            vreport(v, WEFT_SEV_ERROR, g->line, r, -1, -1,
                    "%s=\"%d\" exceeds the %d chunks the %s buffer of %s holds with "
                    "nchunksperloop=\"%d\"",
                    buf_attr((weft_buf)b), n, want, b == WEFT_BUF_INPUT ? "input" : "output",
                    weft_coll_name(a->coll), a->nchunksperloop);
    }
}

static void check_tb(vctx *v, const weft_gpu *g, int32_t r, const weft_tb *tb, int32_t t,
                     int32_t *maxchan) {
    const weft_algo *a = v->a;
    if (tb->id != t)
        vreport(v, WEFT_SEV_ERROR, tb->line, r, t, -1, "tb id %d is not its index", tb->id);
    const char *dir[2] = {"send", "recv"};
    int32_t peer[2] = {tb->send, tb->recv};
    for (int k = 0; k < 2; k++) {
        if (peer[k] < -1 || peer[k] >= a->ngpus)
            vreport(v, WEFT_SEV_ERROR, tb->line, r, t, -1,
                    "%s=\"%d\" is out of range (ngpus is %d)", dir[k], peer[k], a->ngpus);
        else if (peer[k] == r)
            vreport(v, WEFT_SEV_ERROR, tb->line, r, t, -1, "%s=\"%d\": a tb cannot %s itself",
                    dir[k], peer[k], k == 0 ? "send to" : "receive from");
    }
    if (tb->chan < 0)
        vreport(v, WEFT_SEV_ERROR, tb->line, r, t, -1, "chan=\"%d\" is negative", tb->chan);
    else if (tb->chan >= a->nchannels && a->nchannels >= 1)
        vreport(v, WEFT_SEV_ERROR, tb->line, r, t, -1, "chan=\"%d\" is not below nchannels=\"%d\"",
                tb->chan, a->nchannels);
    if (tb->chan > *maxchan) *maxchan = tb->chan;
    (void)g;
}

static void check_step(vctx *v, const weft_gpu *g, int32_t r, const weft_tb *tb, int32_t t,
                       const weft_step *st, int32_t s, int64_t *big_cnt, int64_t first_big[3]) {
    if ((unsigned)st->type >= WEFT_STEP_COUNT) {
        vreport(v, WEFT_SEV_ERROR, st->line, r, t, s, "invalid step type %d", (int)st->type);
        return;
    }
    const char *tn = weft_step_name(st->type);
    unsigned f = weft_step_flags(st->type);
    if ((unsigned)st->srcbuf >= WEFT_BUF_COUNT || (unsigned)st->dstbuf >= WEFT_BUF_COUNT) {
        vreport(v, WEFT_SEV_ERROR, st->line, r, t, s, "invalid buffer");
        return;
    }
    if (st->cnt < 0)
        vreport(v, WEFT_SEV_ERROR, st->line, r, t, s, "cnt=\"%d\" is negative", st->cnt);
    else if (st->cnt == 0 && st->type != WEFT_STEP_NOP)
        vreport(v, WEFT_SEV_ERROR, st->line, r, t, s,
                "cnt=\"0\": a '%s' step moves at least one chunk", tn);
    else if (st->cnt >= MSCCL_MAX_CNT) {
        if ((*big_cnt)++ == 0) first_big[0] = r, first_big[1] = t, first_big[2] = s;
    }
    /* Sides a step does not use carry -1 by convention (nop), or anything: only below -1 is
     * nonsense everywhere. */
    int used[2] = {(f & WEFT_STEP_F_READS_SRC) != 0, (f & WEFT_STEP_F_WRITE) != 0};
    const char *side[2] = {"src", "dst"};
    weft_buf bufs[2] = {st->srcbuf, st->dstbuf};
    int32_t offs[2] = {st->srcoff, st->dstoff};
    for (int k = 0; k < 2; k++) {
        if (offs[k] < (used[k] ? 0 : -1)) {
            vreport(v, WEFT_SEV_ERROR, st->line, r, t, s, "%soff=\"%d\" is negative", side[k],
                    offs[k]);
            continue;
        }
        if (!used[k] || st->cnt < 1) continue;
        int32_t n = buf_chunks(g, bufs[k]);
        if ((int64_t)offs[k] + st->cnt > n)
            vreport(v, WEFT_SEV_ERROR, st->line, r, t, s,
                    "%sbuf=\"%c\" %soff=\"%d\" cnt=\"%d\" reaches past the %d chunks of that "
                    "buffer (%s=\"%d\")",
                    side[k], weft_buf_code(bufs[k]), side[k], offs[k], st->cnt, n,
                    buf_attr(bufs[k]), n);
    }
    if ((f & WEFT_STEP_F_SEND) && tb->send < 0)
        vreport(v, WEFT_SEV_ERROR, st->line, r, t, s,
                "a '%s' step sends, but the tb has send=\"-1\"", tn);
    if ((f & WEFT_STEP_F_RECV) && tb->recv < 0)
        vreport(v, WEFT_SEV_ERROR, st->line, r, t, s,
                "a '%s' step receives, but the tb has recv=\"-1\"", tn);
    if (st->hasdep > 1)
        vreport(v, WEFT_SEV_ERROR, st->line, r, t, s, "hasdep=\"%d\" must be 0 or 1", st->hasdep);
    if (st->depid == -1 && st->deps == -1) return;
    if (st->depid < 0 || st->deps < 0) {
        vreport(v, WEFT_SEV_ERROR, st->line, r, t, s,
                "depid=\"%d\" deps=\"%d\": both must be -1 (no dependency) or both >= 0", st->depid,
                st->deps);
        return;
    }
    if (st->depid >= g->ntbs) {
        vreport(v, WEFT_SEV_ERROR, st->line, r, t, s,
                "depid=\"%d\": rank %d has no tb %d (it has %d)", st->depid, r, st->depid, g->ntbs);
        return;
    }
    const weft_tb *dt = &g->tbs[st->depid];
    if (st->deps >= dt->nsteps) {
        vreport(v, WEFT_SEV_ERROR, st->line, r, t, s,
                "depid=\"%d\" deps=\"%d\": tb %d has no step %d (it has %d)", st->depid, st->deps,
                st->depid, st->deps, dt->nsteps);
        return;
    }
    if (st->depid == t && st->deps >= s) {
        vreport(v, WEFT_SEV_ERROR, st->line, r, t, s,
                "depends on step %d of its own tb, which cannot run before it", st->deps);
        return;
    }
    if (!dt->steps[st->deps].hasdep)
        vreport(v, WEFT_SEV_ERROR, st->line, r, t, s,
                "depends on tb %d step %d, which has hasdep=\"0\" (it would never signal)",
                st->depid, st->deps);
}

typedef struct conn {
    int32_t peer, chan, tb;
} conn;

static int cmp_conn(const void *x, const void *y) {
    const conn *a = x, *b = y;
    return weft_cmp_keys((int64_t[]){a->peer, a->chan, a->tb}, (int64_t[]){b->peer, b->chan, b->tb},
                         3);
}

/* At most one tb per (peer, channel, direction): messages on a connection are matched in order,
 * two tbs on one would race for them. */
static weft_result check_connections(vctx *v, const weft_gpu *g, int32_t r) {
    weft_result res = WEFT_OK;
    conn *c = malloc((g->ntbs > 0 ? (size_t)g->ntbs : 1) * sizeof *c);
    WEFT_CHECK_ALLOC(c);
    for (int k = 0; k < 2; k++) {
        size_t n = 0;
        for (int32_t t = 0; t < g->ntbs; t++) {
            int32_t p = k == 0 ? g->tbs[t].send : g->tbs[t].recv;
            if (p >= 0) c[n++] = (conn){p, g->tbs[t].chan, t};
        }
        qsort(c, n, sizeof *c, cmp_conn);
        for (size_t i = 1; i < n; i++)
            if (c[i].peer == c[i - 1].peer && c[i].chan == c[i - 1].chan)
                vreport(v, WEFT_SEV_ERROR, g->tbs[c[i].tb].line, r, c[i].tb, -1,
                        "%s=\"%d\" on channel %d is already used by tb %d (one tb per peer, "
                        "channel and direction)",
                        k == 0 ? "send" : "recv", c[i].peer, c[i].chan, c[i - 1].tb);
    }
fail:
    free(c);
    return res;
}

/* hasdep="1" that nobody waits for costs a flag write per step; likely a leftover. */
static weft_result check_unused_hasdep(vctx *v, const weft_gpu *g, int32_t r, int *reported) {
    weft_result res = WEFT_OK;
    size_t total = 0;
    size_t *base = malloc(((size_t)g->ntbs + 1) * sizeof *base);
    uint8_t *waited = NULL;
    WEFT_CHECK_ALLOC(base);
    for (int32_t t = 0; t < g->ntbs; t++)
        base[t] = total, total += (size_t)g->tbs[t].nsteps;
    waited = calloc(total ? total : 1, 1);
    WEFT_CHECK_ALLOC(waited);
    for (int32_t t = 0; t < g->ntbs; t++)
        for (int32_t s = 0; s < g->tbs[t].nsteps; s++) {
            const weft_step *st = &g->tbs[t].steps[s];
            if (st->depid >= 0 && st->depid < g->ntbs && st->deps >= 0 &&
                st->deps < g->tbs[st->depid].nsteps)
                waited[base[st->depid] + (size_t)st->deps] = 1;
        }
    for (int32_t t = 0; t < g->ntbs; t++)
        for (int32_t s = 0; s < g->tbs[t].nsteps; s++) {
            const weft_step *st = &g->tbs[t].steps[s];
            if (st->hasdep != 1 || waited[base[t] + (size_t)s]) continue;
            if (++*reported <= MAX_UNUSED_HASDEP_REPORTS)
                vreport(v, WEFT_SEV_WARNING, st->line, r, t, s,
                        "hasdep=\"1\" but no step depends on it");
        }
fail:
    free(waited);
    free(base);
    return res;
}

int weft_ir_is_valid(const weft_algo *a) {
    return weft_proven_valid(a) || weft_ir_validate(a, NULL) == WEFT_OK;
}

weft_result weft_ir_validate(const weft_algo *a, weft_diag *d) {
    weft_result res = WEFT_OK;
    vctx v = {a, d, 0, 0};
    if (a == NULL) return WEFT_ERR_INPUT;
    if (a->ngpus < 1 || a->ngpus > WEFT_IR_MAX_RANKS || a->gpus == NULL) {
        vreport(&v, WEFT_SEV_ERROR, a->line, -1, -1, -1, "ngpus=\"%d\" must be 1..%d", a->ngpus,
                WEFT_IR_MAX_RANKS);
        return WEFT_ERR_INPUT;
    }
    /* Array shapes first: everything below indexes them freely. */
    for (int32_t r = 0; r < a->ngpus; r++) {
        const weft_gpu *g = &a->gpus[r];
        int ok = g->ntbs >= 0 && (g->ntbs == 0 || g->tbs != NULL);
        for (int32_t t = 0; ok && t < g->ntbs; t++)
            ok = g->tbs[t].nsteps >= 0 && (g->tbs[t].nsteps == 0 || g->tbs[t].steps != NULL);
        if (!ok) {
            vreport(&v, WEFT_SEV_ERROR, g->line, r, -1, -1, "invalid tb or step array");
            return WEFT_ERR_INPUT;
        }
    }
    /* Sizes next: past them, even walking the schedule costs too much. */
    int64_t nsteps = 0, moves = 0, locs = 0;
    for (int32_t r = 0; r < a->ngpus; r++) {
        const weft_gpu *g = &a->gpus[r];
        int64_t l = (int64_t)(g->i_chunks > 0 ? g->i_chunks : 0) +
                    (g->o_chunks > 0 ? g->o_chunks : 0) + (g->s_chunks > 0 ? g->s_chunks : 0);
        if (l > locs) locs = l;
        for (int32_t t = 0; t < g->ntbs; t++) {
            nsteps += g->tbs[t].nsteps;
            for (int32_t s = 0; s < g->tbs[t].nsteps; s++)
                if (g->tbs[t].steps[s].cnt > 0) moves += g->tbs[t].steps[s].cnt;
        }
    }
    /* the buffers of the collective, as the verifier lays them out */
    if (a->nchunksperloop > 0 && (unsigned)a->coll < WEFT_COLL_COUNT) {
        int64_t k = a->nchunksperloop / weft_algo_size_mult(a);
        int64_t l = (weft_coll_large(a->coll, WEFT_BUF_INPUT) ? a->ngpus : 1) * k +
                    (weft_coll_large(a->coll, WEFT_BUF_OUTPUT) ? a->ngpus : 1) * k;
        for (int32_t r = 0; r < a->ngpus; r++)
            if (a->gpus[r].s_chunks > 0 && l + a->gpus[r].s_chunks > locs)
                locs = l + a->gpus[r].s_chunks;
        if (l > locs) locs = l;
    }
    int big = 0;
    if (nsteps > WEFT_IR_MAX_STEPS)
        big = 1, vreport(&v, WEFT_SEV_ERROR, a->line, -1, -1, -1,
                         "%lld steps in all: weft reads, verifies and runs at most %d",
                         (long long)nsteps, WEFT_IR_MAX_STEPS);
    if (moves > WEFT_IR_MAX_MOVES)
        big = 1, vreport(&v, WEFT_SEV_ERROR, a->line, -1, -1, -1,
                         "the steps move %lld chunks in all (the sum of cnt): weft verifies and "
                         "runs at most %d",
                         (long long)moves, WEFT_IR_MAX_MOVES);
    if ((int64_t)a->ngpus * locs > WEFT_IR_MAX_LOCATIONS)
        big = 1, vreport(&v, WEFT_SEV_ERROR, a->line, -1, -1, -1,
                         "%d ranks of %lld chunks each (input, output and scratch): weft verifies "
                         "and runs at most %d chunks over all ranks",
                         a->ngpus, (long long)locs, WEFT_IR_MAX_LOCATIONS);
    if (big) return WEFT_ERR_INPUT;
    check_algo(&v);
    int32_t maxchan = -1, maxsteps = 0, maxsteps_r = 0, maxsteps_t = 0, maxtbs = 0, maxtbs_r = 0;
    int64_t big_cnt = 0, first_big[3] = {0, 0, 0};
    int unused_hasdep = 0;
    for (int32_t r = 0; r < a->ngpus; r++) {
        const weft_gpu *g = &a->gpus[r];
        check_gpu(&v, g, r);
        if (g->ntbs > maxtbs) maxtbs = g->ntbs, maxtbs_r = r;
        for (int32_t t = 0; t < g->ntbs; t++) {
            const weft_tb *tb = &g->tbs[t];
            check_tb(&v, g, r, tb, t, &maxchan);
            if (tb->nsteps > maxsteps) maxsteps = tb->nsteps, maxsteps_r = r, maxsteps_t = t;
            for (int32_t s = 0; s < tb->nsteps; s++)
                check_step(&v, g, r, tb, t, &tb->steps[s], s, &big_cnt, first_big);
        }
        WEFT_CHECK(check_connections(&v, g, r));
        WEFT_CHECK(check_unused_hasdep(&v, g, r, &unused_hasdep));
    }
    if (unused_hasdep > MAX_UNUSED_HASDEP_REPORTS)
        vreport(&v, WEFT_SEV_WARNING, a->line, -1, -1, -1,
                "%d more steps have hasdep=\"1\" but no step depends on them",
                unused_hasdep - MAX_UNUSED_HASDEP_REPORTS);
    if (maxchan >= 0 && maxchan + 1 < a->nchannels)
        vreport(&v, WEFT_SEV_WARNING, a->line, -1, -1, -1,
                "nchannels=\"%d\" but the highest chan used is %d", a->nchannels, maxchan);
    /* MSCCL runtime limits. */
    v.flags = WEFT_DIAG_COMPAT;
    if (maxsteps > MSCCL_MAX_STEPS_EXECUTOR)
        vreport(&v, WEFT_SEV_WARNING, a->gpus[maxsteps_r].tbs[maxsteps_t].line, maxsteps_r,
                maxsteps_t, -1, "%d steps: the MSCCL executor loads at most %d steps per tb%s",
                maxsteps, MSCCL_MAX_STEPS_EXECUTOR,
                maxsteps > MSCCL_MAX_STEPS_LEGACY ? ", the legacy MSCCL runtime 256" : "");
    if (maxtbs > MSCCL_MAX_TBS_RCCL)
        vreport(&v, WEFT_SEV_WARNING, a->gpus[maxtbs_r].line, maxtbs_r, -1, -1,
                "%d tbs: RCCL loads at most %d tbs per rank%s%s", maxtbs, MSCCL_MAX_TBS_RCCL,
                maxtbs > MSCCL_MAX_TBS_LEGACY ? ", the legacy MSCCL runtime 216" : "",
                maxtbs > MSCCL_MAX_TBS_EXECUTOR ? ", the MSCCL executor 1024" : "");
    if (big_cnt > 0) {
        const weft_step *st = &a->gpus[first_big[0]].tbs[first_big[1]].steps[first_big[2]];
        char more[64] = "";
        if (big_cnt > 1)
            snprintf(more, sizeof more, " (and %lld more step%s)", (long long)big_cnt - 1,
                     big_cnt > 2 ? "s" : "");
        vreport(&v, WEFT_SEV_WARNING, st->line, (int32_t)first_big[0], (int32_t)first_big[1],
                (int32_t)first_big[2], "cnt=\"%d\"%s: the MSCCL runtimes accept cnt below %d only",
                st->cnt, more, MSCCL_MAX_CNT);
    }
    v.flags = 0;
    if (v.nerr) res = WEFT_ERR_INPUT;
    if (res == WEFT_OK) weft_proven_set_valid(a);
fail:
    return res;
}
