/* tune_core.c — weft tune's measurement loop over a backend: every candidate and NCCL
 * interleaved on the same buffers, rounds until the spread of each ratio is known, the decision
 * per size, progress with an ETA, and the table. The same code runs on GPUs (weft-tune) and on
 * scripted timings (tests/tune). */
#include "tune.h"

#include "nccl_tests.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* ---- statistics -------------------------------------------------------------------------- */

static int cmp_double(const void *x, const void *y) {
    double a = *(const double *)x, b = *(const double *)y;
    return a < b ? -1 : a > b;
}

static double median_sorted(const double *v, int n) {
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/* The 95% confidence interval of the median of n sorted samples, from order statistics (no
 * assumption about the distribution): ranks floor(n/2 - 0.98 sqrt n) and
 * ceil(1 + n/2 + 0.98 sqrt n), 1-based, clamped to the samples. */
static void median_interval(const double *v, int n, double *lo, double *hi) {
    double h = 0.98 * sqrt((double)n);
    int j = (int)floor(n / 2.0 - h), k = (int)ceil(1 + n / 2.0 + h);
    if (j < 1) j = 1;
    if (k > n) k = n;
    *lo = v[j - 1];
    *hi = v[k - 1];
}

void tune_stats(const double *t, int rounds, int nimpl, tune_stat *st) {
    double *v = malloc((size_t)(rounds > 0 ? rounds : 1) * sizeof *v);
    for (int k = 0; k < nimpl; k++) {
        memset(&st[k], 0, sizeof st[k]);
        if (v == NULL || rounds < 1) continue;
        for (int r = 0; r < rounds; r++)
            v[r] = t[r * nimpl + k];
        qsort(v, (size_t)rounds, sizeof *v, cmp_double);
        st[k].us = median_sorted(v, rounds);
        if (k == 0) {
            st[k].ratio = st[k].lo = st[k].hi = 1;
            continue;
        }
        /* paired: each round's ratio compares times taken moments apart, so slow drifts of the
         * machine (clocks, temperature, other jobs) cancel */
        for (int r = 0; r < rounds; r++) {
            double n = t[r * nimpl];
            v[r] = n > 0 ? t[r * nimpl + k] / n : INFINITY;
        }
        qsort(v, (size_t)rounds, sizeof *v, cmp_double);
        st[k].ratio = median_sorted(v, rounds);
        median_interval(v, rounds, &st[k].lo, &st[k].hi);
    }
    free(v);
}

int tune_unsettled(const tune_stat *st, const int *ok, int nimpl, double thr, double precision) {
    for (int k = 1; k < nimpl; k++) {
        if (!ok[k]) continue;
        if (st[k].hi < thr || st[k].lo >= thr) continue; /* clearly faster, or clearly not */
        if ((st[k].hi - st[k].lo) / 2 <= precision) continue;
        return 1;
    }
    return 0;
}

int tune_decide(const tune_stat *st, const int *ok, int nimpl, double margin) {
    double thr = 1 - margin;
    int best = 0;
    for (int k = 1; k < nimpl; k++)
        if (ok[k] && st[k].hi < thr && (best == 0 || st[k].ratio < st[best].ratio)) best = k;
    if (best == 0) return 0;
    for (int k = 1; k < best; k++) /* ties go to the first in registry order */
        if (ok[k] && st[k].hi < thr && st[k].lo <= st[best].hi) return k;
    return best;
}

int tune_verify_drops(const tune_stat *st, double max) {
    return st->lo > max;
}

double tune_verify_ratio(const tune_stat *st) {
    return st[0].us > 0 ? st[1].us / st[0].us : INFINITY;
}

/* ---- the plan ---------------------------------------------------------------------------- */

typedef struct plan_sec {
    weft_coll coll;
    int inplace;
    unsigned flags;
    int *cands; /* registry indices */
    int ncands;
} plan_sec;

typedef struct run {
    const tune_opts *o;
    const tune_backend *b;
    const weft_registry *reg;
    FILE *progress;
    int tty;
    weft_diag *d;
    const char *phase; /* "" measuring, "verify " verifying: the prefix of progress counts */
    plan_sec *secs;
    int nsecs;
    uint64_t *sizes; /* candidate byte sizes, before rounding to whole elements */
    int nsizes;
    /* progress and ETA */
    int total, done;
    double t0;
    double *seen; /* per size index, per implementation: seconds a point took; < 0 unknown */
    /* NCCL's time per call against size (a straight line: latency + bytes / bandwidth), and
     * how long points took against what that line predicts, for sizes not yet seen */
    double sx, sy, sxx, sxy, maxb;
    int nfit;
    double took, predicted;
} run;

/* Bytes a size counts per element of a point's count (weft_coll_footprint; points are float). */
static uint64_t elem_bytes(weft_coll c, int nranks) {
    return weft_coll_footprint(c, 1, 4, nranks);
}

/* The point for size index si of section s, or 0 when the size holds no whole element. */
static int make_point(const run *R, const plan_sec *s, int si, tune_point *p) {
    uint64_t per = elem_bytes(s->coll, R->b->nranks);
    uint64_t count = R->sizes[si] / per;
    if (count == 0) return 0;
    memset(p, 0, sizeof *p);
    p->coll = s->coll;
    p->nranks = R->b->nranks;
    p->inplace = s->inplace;
    p->flags = s->flags;
    p->count = (size_t)count;
    p->bytes = count * per;
    /* sizes that round to the same element count are measured once */
    if (si > 0) {
        uint64_t prev = R->sizes[si - 1] / per;
        if (prev == count) return 0;
    }
    return 1;
}

/* Bytes of the larger of a call's two buffers (gather's output, scatter's input: ranks x). */
static uint64_t buffer_bytes(const tune_point *p) {
    int32_t in = weft_coll_segs(p->coll, WEFT_BUF_INPUT, p->nranks),
            out = weft_coll_segs(p->coll, WEFT_BUF_OUTPUT, p->nranks);
    return (uint64_t)p->count * 4 * (uint64_t)(in > out ? in : out);
}

static void plan_free(run *R) {
    for (int i = 0; i < R->nsecs; i++)
        free(R->secs[i].cands);
    free(R->secs);
    free(R->sizes);
    free(R->seen);
}

/* Sections in measuring order: buffer kind (allocated once each), collective, mode, launch. */
static weft_result plan(run *R) {
    weft_result res = WEFT_OK;
    const tune_opts *o = R->o;
    int nranks = R->b->nranks;
    size_t cap = 0;
    for (uint64_t b = o->minb; b <= o->maxb;) {
        size_t n = (size_t)R->nsizes;
        if (weft_grow((void **)&R->sizes, &cap, n, sizeof *R->sizes) != 0)
            WEFT_FAIL(WEFT_ERR_NOMEM);
        R->sizes[R->nsizes++] = b;
        double next = (double)b * o->factor;
        uint64_t nb = next >= 1.8e19 ? UINT64_MAX : (uint64_t)next;
        if (nb <= b) nb = b + 1;
        if (nb < b || R->nsizes > 4096) break;
        b = nb;
    }
    size_t capsecs = 0;
    for (int reg = 0; reg < 2; reg++) {
        if (!(o->buffers & (1 << reg))) continue;
        for (int c = 0; c < WEFT_COLL_COUNT; c++) {
            if (!weft_coll_runnable((weft_coll)c) || (o->colls && !(o->colls & (1u << c))))
                continue;
            /* rooted: the ranks cannot agree on the root's buffers (weft_tune_find) */
            if (reg && weft_coll_rooted((weft_coll)c)) continue;
            for (int mode = 0; mode < 2; mode++) {
                if (!(o->modes & (1 << mode))) continue;
                if (mode == 1 && weft_coll_rooted((weft_coll)c)) continue;
                int *cands = NULL, nc = 0;
                for (size_t i = 0; i < weft_registry_size(R->reg); i++) {
                    weft_call call = {
                        (weft_coll)c, WEFT_DTYPE_FLOAT, WEFT_OP_SUM, 1024, mode, 0, nranks, 0,
                        (int)i + 1};
                    if (weft_registry_select(R->reg, &call, NULL) != (int)i) continue;
                    int *more = realloc(cands, (size_t)(nc + 1) * sizeof *cands);
                    if (more == NULL) {
                        free(cands);
                        WEFT_FAIL(WEFT_ERR_NOMEM);
                    }
                    cands = more;
                    cands[nc++] = (int)i;
                }
                if (nc == 0) {
                    free(cands);
                    continue;
                }
                for (int launch = 0; launch < 2; launch++) {
                    if (!(o->launches & (1 << launch))) continue;
                    if (weft_grow((void **)&R->secs, &capsecs, (size_t)R->nsecs, sizeof *R->secs))
                        WEFT_FAIL(WEFT_ERR_NOMEM);
                    plan_sec *s = &R->secs[R->nsecs++];
                    s->coll = (weft_coll)c;
                    s->inplace = mode;
                    s->flags = (launch ? WEFT_CALL_GRAPH : 0u) | (reg ? WEFT_CALL_REGISTERED : 0u);
                    s->ncands = nc;
                    s->cands = malloc((size_t)nc * sizeof *s->cands);
                    WEFT_CHECK_ALLOC(s->cands);
                    memcpy(s->cands, cands, (size_t)nc * sizeof *cands);
                }
                free(cands);
            }
        }
    }
    for (int i = 0; i < R->nsecs; i++)
        for (int si = 0; si < R->nsizes; si++) {
            tune_point p;
            R->total += make_point(R, &R->secs[i], si, &p);
        }
    R->seen = malloc((size_t)(R->nsizes ? R->nsizes : 1) * sizeof *R->seen);
    WEFT_CHECK_ALLOC(R->seen);
    for (int si = 0; si < R->nsizes; si++)
        R->seen[si] = -1;
fail:
    return res;
}

/* ---- progress ---------------------------------------------------------------------------- */

static void fmt_duration(double s, char *buf, size_t len) {
    long t = (long)(s + 0.5);
    if (t >= 3600)
        snprintf(buf, len, "%ldh%02ldm", t / 3600, t / 60 % 60);
    else if (t >= 60)
        snprintf(buf, len, "%ldm%02lds", t / 60, t % 60);
    else
        snprintf(buf, len, "%lds", t);
}

/* NCCL's time per call at `bytes` from the line through the sizes measured so far; until a
 * size of 1 MB or more was measured the slope is a guess of 20 GB/s (it only feeds the ETA). */
static double line_us(const run *R, double bytes) {
    double n = R->nfit, slope = 1.0 / 20e3, lat = 10;
    if (n >= 1) lat = R->sy / n;
    if (n >= 2 && R->maxb >= (1 << 20) && n * R->sxx - R->sx * R->sx > 0) {
        slope = (n * R->sxy - R->sx * R->sy) / (n * R->sxx - R->sx * R->sx);
        if (slope < 0) slope = 0;
        lat = (R->sy - slope * R->sx) / n;
    }
    if (lat < 1) lat = 1;
    return lat + slope * bytes;
}

/* What one implementation's share of a point should cost in seconds, before calibration. */
static double model_s(const run *R, double bytes) {
    return (R->o->iters + R->o->warmup + 5) * line_us(R, bytes) * 1e-6;
}

/* Seconds the points not yet measured should take: per implementation, what the same size took
 * in an earlier section, else the model scaled by how long the points so far took against it. */
static double eta(const run *R, int cur_sec, int cur_si) {
    if (R->done == 0) return -1;
    double k = R->predicted > 0 ? R->took / R->predicted : 1;
    double left = 0;
    for (int i = cur_sec; i < R->nsecs; i++)
        for (int si = i == cur_sec ? cur_si + 1 : 0; si < R->nsizes; si++) {
            tune_point p;
            if (!make_point(R, &R->secs[i], si, &p)) continue;
            double per = R->seen[si] >= 0 ? R->seen[si] : k * model_s(R, (double)p.bytes);
            left += per * (R->secs[i].ncands + 1);
        }
    return left;
}

static void point_str(const run *R, const tune_point *p, char *buf, size_t len) {
    char sz[32];
    weft_tune_bytes_str(p->bytes, sz, sizeof sz);
    snprintf(buf, len, "%s %s %s %s %s", weft_coll_name(p->coll),
             p->inplace ? "in-place" : "out-of-place",
             weft_call_flag_word(WEFT_CALL_GRAPH, p->flags),
             weft_call_flag_word(WEFT_CALL_REGISTERED, p->flags), sz);
    (void)R;
}

/* The live line (terminals only): where the run is and what it is doing. */
static void progress_live(const run *R, const tune_point *p, const char *what, const char *who) {
    if (R->progress == NULL || !R->tty) return;
    char pt[160];
    point_str(R, p, pt, sizeof pt);
    fprintf(R->progress, "\r\033[K[%s%d/%d] %s: %s%s%s", R->phase, R->done + 1, R->total, pt, what,
            who ? " " : "", who ? who : "");
    fflush(R->progress);
}

static const char *algo_name(const run *R, int impl) {
    return impl < 0 ? "NCCL" : weft_registry_get(R->reg, (size_t)impl)->name;
}

/* ---- measuring one point ----------------------------------------------------------------- */

/* Agrees on per-implementation statuses: the worst any rank saw. */
static int agree_status(const run *R, int *st, int n) {
    int nr = R->b->nranks;
    double *mine = calloc((size_t)n, sizeof *mine), *all = malloc((size_t)n * nr * sizeof *all);
    int rc = -1;
    if (mine && all) {
        for (int k = 0; k < n; k++)
            mine[k] = st[k];
        if (R->b->allgather(R->b->ctx, mine, n, all) == 0) {
            for (int k = 0; k < n; k++)
                for (int r = 0; r < nr; r++)
                    if (all[r * n + k] > st[k]) st[k] = (int)all[r * n + k];
            rc = 0;
        }
    }
    free(mine);
    free(all);
    return rc;
}

/* Every rank's per-implementation times, averaged over the ranks in rank order. */
static int agree_times(const run *R, const double *mine, int n, double *avg) {
    int nr = R->b->nranks;
    double *all = malloc((size_t)n * nr * sizeof *all);
    if (all == NULL || R->b->allgather(R->b->ctx, mine, n, all) != 0) {
        free(all);
        return -1;
    }
    for (int k = 0; k < n; k++) {
        double s = 0;
        for (int r = 0; r < nr; r++)
            s += all[r * n + k];
        avg[k] = s / nr;
    }
    free(all);
    return 0;
}

typedef struct point_result {
    int *status;   /* per implementation (0 = NCCL) */
    tune_stat *st; /* per implementation */
    int rounds, choice;
} point_result;

#define BK(call)                                                                                   \
    do {                                                                                           \
        if ((call) < 0) goto backend_failed;                                                       \
    } while (0)

/* A stage before the timing (warm-up, capture): n launches of each implementation still in
 * (st[k] OK) through fn, whose status replaces st[k] where it is not OK; then the ranks agree.
 * 0: NCCL passed; 1: NCCL failed it, an error "POINT: NCCL nccl_failed" in R->d (the point
 * cannot be measured); -1: the backend failed. */
static int prepare(run *R, const tune_point *p, const int *impl, int *st, int nimpl,
                   int (*fn)(void *ctx, const tune_point *p, int impl, int n), int n,
                   const char *doing, const char *nccl_failed) {
    for (int k = 0; k < nimpl; k++) {
        if (st[k] != WEFT_TUNE_OK) continue;
        progress_live(R, p, doing, algo_name(R, impl[k]));
        int r = fn(R->b->ctx, p, impl[k], n);
        if (r < 0) return -1;
        if (r != WEFT_TUNE_OK) st[k] = r;
    }
    if (agree_status(R, st, nimpl) != 0) return -1;
    if (st[0] == WEFT_TUNE_OK) return 0;
    char pt[160];
    point_str(R, p, pt, sizeof pt);
    weft_diag_add(R->d, WEFT_SEV_ERROR, NULL, 0, 0, "%s: NCCL %s", pt, nccl_failed);
    return 1;
}

/* Measures point p of section s: NCCL and s's candidates interleaved until every ratio is clear
 * of thr or known to the precision asked; pr gets the statistics and the decision. */
static weft_result measure(run *R, const plan_sec *s, const tune_point *p, double thr,
                           point_result *pr) {
    weft_result res = WEFT_OK;
    const tune_opts *o = R->o;
    const tune_backend *b = R->b;
    int nimpl = s->ncands + 1;
    int *impl = malloc((size_t)nimpl * sizeof *impl), *ok = calloc((size_t)nimpl, sizeof *ok);
    double *mine = calloc((size_t)nimpl, sizeof *mine), *avg = calloc((size_t)nimpl, sizeof *avg);
    double *t = NULL;
    int *st = pr->status, stage;
    WEFT_CHECK_ALLOC(impl);
    WEFT_CHECK_ALLOC(ok);
    WEFT_CHECK_ALLOC(mine);
    WEFT_CHECK_ALLOC(avg);
    impl[0] = -1;
    for (int k = 1; k < nimpl; k++)
        impl[k] = s->cands[k - 1];
    for (int k = 0; k < nimpl; k++)
        st[k] = WEFT_TUNE_OK;

    /* 1. each candidate's result against NCCL's, on fresh inputs */
    if (o->check)
        for (int k = 1; k < nimpl; k++) {
            progress_live(R, p, "checking", algo_name(R, impl[k]));
            BK(st[k] = b->check(b->ctx, p, impl[k]));
        }
    if (agree_status(R, st, nimpl) != 0) goto backend_failed;
    /* 2. warm-up, eager */
    BK(stage = prepare(R, p, impl, st, nimpl, b->warm, o->warmup > 0 ? o->warmup : 1, "warming up",
                       "itself failed"));
    if (stage != 0) WEFT_FAIL(WEFT_ERR_INTERNAL);
    /* 3. calls per sample: a fixed count, as nccl-tests' -n (a sample of one call at a large
     * size would charge the barrier's skew and the host's enqueue latency to that one call);
     * the verification's, the -n of compare_nccl.sh's run for the size */
    int batch = p->calls > 0 ? p->calls : o->calls > 0 ? o->calls : 20;
    /* 4. graph points: can each implementation be captured (every sample captures anew) */
    if (p->flags & WEFT_CALL_GRAPH) {
        BK(stage = prepare(R, p, impl, st, nimpl, b->capture, batch, "capturing",
                           "could not be captured"));
        if (stage != 0) WEFT_FAIL(WEFT_ERR_INTERNAL);
    }
    for (int k = 0; k < nimpl; k++)
        ok[k] = st[k] == WEFT_TUNE_OK;
    /* 5. interleaved rounds, the order rotating so that no implementation always follows the
     * same one; at least `iters` calls each, then more until every ratio is settled */
    int first = (o->iters + batch - 1) / batch;
    if (first < 10) first = 10;
    int most = first * o->max_factor, block = first / 2 > 5 ? first / 2 : 5;
    t = malloc((size_t)most * nimpl * sizeof *t);
    WEFT_CHECK_ALLOC(t);
    int rounds = 0, next_check = first;
    int live = 0;
    for (int k = 1; k < nimpl; k++)
        live += ok[k];
    while (live > 0 && rounds < most) {
        if (R->tty && R->progress && rounds % 5 == 0) {
            char what[64];
            snprintf(what, sizeof what, "round %d/%d,", rounds + 1, next_check);
            progress_live(R, p, what, NULL);
        }
        for (int j = 0; j < nimpl; j++) {
            int k = (j + rounds) % nimpl;
            mine[k] = 0;
            if (ok[k]) BK(b->sample(b->ctx, p, impl[k], batch, &mine[k]));
        }
        if (agree_times(R, mine, nimpl, &t[(size_t)rounds * nimpl]) != 0) goto backend_failed;
        rounds++;
        if (rounds == next_check) {
            tune_stats(t, rounds, nimpl, pr->st);
            if (!tune_unsettled(pr->st, ok, nimpl, thr, o->precision)) break;
            next_check = rounds + block < most ? rounds + block : most;
        }
    }
    if (live == 0) { /* nothing ran: NCCL's time alone, for the record */
        for (rounds = 0; rounds < 10; rounds++) {
            mine[0] = 0;
            BK(b->sample(b->ctx, p, -1, batch, &mine[0]));
            if (agree_times(R, mine, nimpl, &t[(size_t)rounds * nimpl]) != 0) goto backend_failed;
        }
    }
    tune_stats(t, rounds, nimpl, pr->st);
    pr->rounds = rounds;
    pr->choice = tune_decide(pr->st, ok, nimpl, o->margin);
    b->release(b->ctx, p);
    goto fail;
backend_failed:
    weft_diag_add(R->d, WEFT_SEV_ERROR, NULL, 0, 0, "the measurement failed (see above)");
    res = WEFT_ERR_SYSTEM;
fail:
    free(impl);
    free(ok);
    free(mine);
    free(avg);
    free(t);
    return res;
}

/* ---- the table --------------------------------------------------------------------------- */

static const char *file_base(const char *path) {
    const char *s = path ? strrchr(path, '/') : NULL;
    return s ? s + 1 : path ? path : "(in memory)";
}

/* Table algorithm for registry algorithm i (added on first use). */
static int table_algo(const run *R, weft_tune_table *t, int *map, int i) {
    if (map[i] >= 0) return map[i];
    const weft_algo *a = weft_registry_get(R->reg, (size_t)i);
    uint64_t h = weft_tune_algo_hash(a);
    if (h == 0) return -1;
    map[i] =
        weft_tune_add_algo(t, file_base(a->file), a->name, weft_registry_recipe(R->reg, (size_t)i),
                           a->ngpus, weft_coll_rooted(a->coll) ? a->root : 0, h);
    return map[i];
}

static void report(run *R, const tune_point *p, const plan_sec *s, const point_result *pr,
                   double left) {
    if (R->progress == NULL) return;
    char pt[160], e[32] = "--";
    point_str(R, p, pt, sizeof pt);
    if (left >= 0) fmt_duration(left, e, sizeof e);
    if (R->tty) fputs("\r\033[K", R->progress);
    fprintf(R->progress, "[%d/%d] %s: NCCL %.2f us", R->done, R->total, pt, pr->st[0].us);
    for (int k = 1; k <= s->ncands; k++) {
        const char *n = algo_name(R, s->cands[k - 1]);
        if (pr->status[k] == WEFT_TUNE_OK)
            fprintf(R->progress, ", %s %.2f (%.2fx +-%.1f%%)", n, pr->st[k].us, pr->st[k].ratio,
                    100 * (pr->st[k].hi - pr->st[k].lo) / 2);
        else
            fprintf(R->progress, ", %s %s", n,
                    pr->status[k] == WEFT_TUNE_WRONG ? "WRONG RESULT" : "unsupported");
    }
    fprintf(R->progress, " -> %s; %d rounds; ETA %s\n",
            pr->choice ? algo_name(R, s->cands[pr->choice - 1]) : "NCCL", pr->rounds, e);
    fflush(R->progress);
}

/* 64-bit FNV-1a of the table's text: the ranks compare it to know they agree. */
static int table_digest(const weft_tune_table *t, uint64_t *h) {
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    if (f == NULL) return -1;
    weft_result r = weft_tune_write(t, f);
    fclose(f);
    if (r != WEFT_OK || buf == NULL) {
        free(buf);
        return -1;
    }
    *h = 1469598103934665603ull;
    for (size_t i = 0; i < len; i++) {
        *h ^= (unsigned char)buf[i];
        *h *= 1099511628211ull;
    }
    free(buf);
    return 0;
}

weft_result tune_agree(const tune_backend *b, const weft_tune_table *t, weft_diag *d) {
    weft_result res = WEFT_OK;
    uint64_t h = 0;
    double *all = NULL;
    if (table_digest(t, &h) != 0) WEFT_FAIL(WEFT_ERR_NOMEM);
    double mine[2] = {(double)(h >> 32), (double)(h & 0xffffffffu)};
    all = malloc((size_t)b->nranks * 2 * sizeof *all);
    WEFT_CHECK_ALLOC(all);
    if (b->allgather(b->ctx, mine, 2, all) != 0) {
        weft_diag_add(d, WEFT_SEV_ERROR, NULL, 0, 0, "the measurement failed (see above)");
        WEFT_FAIL(WEFT_ERR_SYSTEM);
    }
    for (int r = 0; r < b->nranks; r++)
        if (all[2 * r] != mine[0] || all[2 * r + 1] != mine[1]) {
            weft_diag_add(d, WEFT_SEV_ERROR, NULL, 0, 0,
                          "rank %d and rank %d reached different tables; nothing is written", r,
                          b->rank);
            WEFT_FAIL(WEFT_ERR_INTERNAL);
        }
fail:
    free(all);
    return res;
}

/* ---- verification through the shim ------------------------------------------------------- */

weft_result tune_shim_registry(const char *paths, const weft_tune_table *t, int nranks, int gpn,
                               weft_registry **base_out, weft_registry **out, weft_diag *d) {
    weft_result res = WEFT_OK;
    weft_registry *base = NULL;
    weft_tune_table *copy = NULL;
    weft_diag *ld = weft_diag_new();
    *base_out = *out = NULL;
    WEFT_CHECK_ALLOC(ld);
    WEFT_CHECK(weft_registry_new(&base));
    /* weft_registry_load, with t where it would read a table from a file (t passes that file's
     * machine check: it was measured here) */
    WEFT_CHECK(weft_registry_load_ex(base, paths, WEFT_REGISTRY_NO_TABLE, ld));
    copy = weft_tune_table_clone(t);
    WEFT_CHECK_ALLOC(copy);
    res = weft_registry_set_table(base, copy, ld); /* takes copy, also on failure */
    copy = NULL;
    WEFT_CHECK(res);
    /* the shim's registry for a communicator of this shape (its LSA team: gpn ranks) */
    WEFT_CHECK(weft_registry_for_nodes(base, nranks, gpn, out, ld));
    /* the folder's own problems were reported when it was loaded for measuring; what matters
     * now is a table algorithm the shim would not find */
    for (size_t i = 0; i < weft_diag_size(ld); i++) {
        const weft_diag_entry *e = weft_diag_get(ld, i);
        if (e->sev == WEFT_SEV_NOTE && strncmp(e->msg, "tuning table", 12) == 0)
            weft_diag_add(d, WEFT_SEV_WARNING, e->file, e->line, e->col, "%s", e->msg);
    }
    *base_out = base;
    base = NULL;
fail:
    weft_registry_free(base);
    weft_diag_free(ld);
    return res;
}

typedef struct verify_sum {
    int verified, dropped;
    double worst; /* the largest tune_verify_ratio kept; 0: none */
} verify_sum;

/* The point a table row was measured at, to be timed as compare_nccl.sh's nccl-tests run for
 * its size times it (with this run's -b, -e and -f): that run's -n calls per sample, each moved
 * within that run's -e. nccl-tests' size is the call's larger buffer. */
static void row_point(const run *R, const weft_tune_section *s, const weft_tune_row *row,
                      tune_point *p) {
    const tune_opts *o = R->o;
    uint64_t per = elem_bytes(s->coll, R->b->nranks);
    memset(p, 0, sizeof *p);
    p->coll = s->coll;
    p->nranks = R->b->nranks;
    p->inplace = s->inplace;
    p->flags = s->flags;
    p->count = (size_t)(row->bytes / per);
    p->bytes = row->bytes;
    weft_nt_run nt =
        weft_nt_run_of(buffer_bytes(p), o->minb, o->maxb, o->factor, o->calls > 0 ? o->calls : 20,
                       o->verify_calls_small > 0 ? o->verify_calls_small : 200);
    p->calls = nt.iters;
    p->maxbytes = nt.maxbytes;
}

static int section_kind(const weft_tune_section *s) {
    return (s->flags & WEFT_CALL_REGISTERED) ? 1 : 0;
}

/* A buffer kind (1 registered, 0 not) in the table's words. */
static const char *kind_word(int kind) {
    return weft_call_flag_word(WEFT_CALL_REGISTERED, kind ? WEFT_CALL_REGISTERED : 0);
}

/* Whether registry algorithm a is table algorithm ta (what the range names). */
static int is_table_algo(const weft_algo *a, const weft_tune_algo *ta) {
    return a->name && strcmp(a->name, ta->name) == 0 && strcmp(file_base(a->file), ta->file) == 0 &&
           weft_tune_algo_hash(a) == ta->hash;
}

/* Drops row's choice (NCCL serves its size from now on), note saying why: its comment in the
 * table and a warning in d; measured 0: also the progress line (a measured point has its own). */
static weft_result drop_choice(run *R, const tune_point *p, weft_tune_row *row, const char *note,
                               int measured, verify_sum *sum) {
    char pt[160];
    point_str(R, p, pt, sizeof pt);
    if (R->progress && !measured) {
        if (R->tty) fputs("\r\033[K", R->progress);
        fprintf(R->progress, "[%s%d/%d] %s: %s\n", R->phase, R->done + 1, R->total, pt, note);
        fflush(R->progress);
    }
    weft_diag_add(R->d, WEFT_SEV_WARNING, NULL, 0, 0, "%s: %s", pt, note);
    row->choice = -1;
    sum->dropped++;
    return weft_tune_add_note(row, note);
}

/* Verifies one row the table gives to weft: the shim's lookup for its point, then that
 * algorithm timed against NCCL as weft tune measures. */
static weft_result verify_row(run *R, const weft_registry *vreg, const weft_tune_table *t,
                              const weft_tune_section *ts, weft_tune_row *row, point_result *pr,
                              verify_sum *sum, double left) {
    weft_result res = WEFT_OK;
    const tune_opts *o = R->o;
    tune_point p;
    row_point(R, ts, row, &p);
    const weft_tune_algo *ta = &t->algos[row->choice];
    char *note = NULL, other[160] = "";
    /* what libweft_nccl.so selects for this call: the same function, the same registry */
    weft_call c = {p.coll, WEFT_DTYPE_FLOAT, WEFT_OP_SUM, p.count, p.inplace,
                   0,      p.nranks,         p.flags,     0};
    const char *why = NULL;
    int ai = weft_registry_select(vreg, &c, &why);
    sum->verified++;
    if (ai < 0) {
        note = weft_asprintf("through the shim: '%s' is not what it selects here (%s): dropped, "
                             "NCCL serves this size",
                             ta->id, why ? why : "no algorithm fits");
        WEFT_CHECK_ALLOC(note);
        WEFT_CHECK(drop_choice(R, &p, row, note, 0, sum));
        goto fail;
    }
    const weft_algo *a = weft_registry_get(vreg, (size_t)ai);
    if (!is_table_algo(a, ta))
        snprintf(other, sizeof other, " (where the table names '%s')", ta->id);
    plan_sec vs = {p.coll, p.inplace, p.flags, &ai, 1};
    WEFT_CHECK(measure(R, &vs, &p, o->verify_max, pr));
    const tune_stat *st = &pr->st[1];
    int drop = 1;
    if (pr->status[1] == WEFT_TUNE_WRONG)
        note = weft_asprintf("through the shim: '%s'%s computed a result different from NCCL's: "
                             "dropped, NCCL serves this size",
                             a->name, other);
    else if (pr->status[1] != WEFT_TUNE_OK)
        note = weft_asprintf("through the shim: '%s'%s could not run as the shim runs it: "
                             "dropped, NCCL serves this size",
                             a->name, other);
    else {
        drop = tune_verify_drops(st, o->verify_max);
        note = weft_asprintf("through the shim: '%s'%s %.2f us, NCCL %.2f us: %.3fx (per round "
                             "%.3fx, 95%% interval %.3f-%.3f, %d rounds of %d calls), %s %g: %s",
                             a->name, other, st->us, pr->st[0].us, tune_verify_ratio(pr->st),
                             st->ratio, st->lo, st->hi, pr->rounds, p.calls,
                             drop ? "above" : "not above", o->verify_max,
                             drop ? "dropped, NCCL serves this size" : "kept");
    }
    WEFT_CHECK_ALLOC(note);
    if (R->progress) {
        char pt[160], e[32] = "--";
        point_str(R, &p, pt, sizeof pt);
        if (left >= 0) fmt_duration(left, e, sizeof e);
        if (R->tty) fputs("\r\033[K", R->progress);
        fprintf(R->progress, "[%s%d/%d] %s: NCCL %.2f us, %s through the shim", R->phase,
                R->done + 1, R->total, pt, pr->st[0].us, a->name);
        if (pr->status[1] == WEFT_TUNE_OK)
            fprintf(R->progress, " %.2f (%.2fx +-%.1f%%)", st->us, tune_verify_ratio(pr->st),
                    100 * (st->hi - st->lo) / 2);
        else
            fprintf(R->progress, " %s",
                    pr->status[1] == WEFT_TUNE_WRONG ? "WRONG RESULT" : "unsupported");
        fprintf(R->progress, " -> %s; %d rounds; ETA %s\n", drop ? "dropped: NCCL" : "kept",
                pr->rounds, e);
        fflush(R->progress);
    }
    if (drop) {
        WEFT_CHECK(drop_choice(R, &p, row, note, 1, sum));
    } else {
        double r = tune_verify_ratio(pr->st); /* what compare_nccl.sh will read */
        if (r > sum->worst) sum->worst = r;
        WEFT_CHECK(weft_tune_add_note(row, note));
    }
fail:
    free(note);
    return res;
}

/* Seconds the verification's points left should take, from those done. */
static double verify_eta(const run *R, double t0) {
    if (R->done == 0) return -1;
    return (R->b->now(R->b->ctx) - t0) / R->done * (R->total - R->done);
}

/* verify's points on buffers of one kind (registered or not), which are allocated for them. */
static weft_result verify_kind(run *R, const weft_registry *vreg, weft_tune_table *t, int kind,
                               point_result *pr, verify_sum *sum, double t0) {
    weft_result res = WEFT_OK;
    const tune_backend *b = R->b;
    char why[256] = "";
    uint64_t most = 0;
    int here = 0;
    for (size_t i = 0; i < t->nsecs; i++) {
        const weft_tune_section *ts = &t->secs[i];
        if (section_kind(ts) != kind) continue;
        for (size_t j = 0; j < ts->nrows; j++) {
            tune_point p;
            if (ts->rows[j].choice < 0) continue;
            row_point(R, ts, &ts->rows[j], &p);
            if (buffer_bytes(&p) > most) most = buffer_bytes(&p);
            if (p.maxbytes > most) most = p.maxbytes; /* nccl-tests' buffers hold its -e */
            here++;
        }
    }
    if (here == 0) return WEFT_OK;
    int br = b->buffers(b->ctx, kind, most, why, sizeof why);
    if (br < 0) {
        weft_diag_add(R->d, WEFT_SEV_ERROR, NULL, 0, 0, "allocating buffers failed%s%s",
                      *why ? ": " : "", why);
        return WEFT_ERR_SYSTEM;
    }
    for (size_t i = 0; i < t->nsecs; i++) {
        weft_tune_section *ts = &t->secs[i];
        if (section_kind(ts) != kind) continue;
        int before = sum->dropped;
        for (size_t j = 0; j < ts->nrows; j++) {
            weft_tune_row *row = &ts->rows[j];
            if (row->choice < 0) continue;
            if (br != WEFT_TUNE_OK) { /* measured before, cannot be now: not verified */
                tune_point p;
                row_point(R, ts, row, &p);
                char *note = weft_asprintf("through the shim: cannot be verified (%s buffers: "
                                           "%s): dropped, NCCL serves this size",
                                           kind_word(kind), why);
                WEFT_CHECK_ALLOC(note);
                sum->verified++;
                res = drop_choice(R, &p, row, note, 0, sum);
                free(note);
                WEFT_CHECK(res);
            } else {
                WEFT_CHECK(verify_row(R, vreg, t, ts, row, pr, sum, verify_eta(R, t0)));
            }
            R->done++;
        }
        if (sum->dropped > before) WEFT_CHECK(weft_tune_ranges_from_rows(ts));
    }
fail:
    return res;
}

/* The decided table through the shim: every size a range gives to weft, timed again as
 * libweft_nccl.so would serve it with this table; a choice above o->verify_max beyond the noise
 * goes to NCCL and the ranges follow. Collective. */
static weft_result verify(run *R, weft_tune_table *t, point_result *pr) {
    weft_result res = WEFT_OK;
    const tune_opts *o = R->o;
    const tune_backend *b = R->b;
    weft_registry *vbase = NULL, *vreg = NULL;
    const weft_registry *measured = R->reg;
    verify_sum sum = {0, 0, 0};
    int through = 0, npts = 0;
    char why[256] = "", buf[256];
    double t0 = b->now(b->ctx);
    for (size_t i = 0; i < t->nsecs; i++)
        for (size_t j = 0; j < t->secs[i].nrows; j++)
            npts += t->secs[i].rows[j].choice >= 0;
    if (npts == 0) {
        snprintf(buf, sizeof buf, "nothing to verify: NCCL serves every size measured");
        goto done;
    }
    int gpn = weft_tune_shape(b->nranks, weft_registry_gpus_per_node(R->reg));
    WEFT_CHECK(tune_shim_registry(o->paths, t, b->nranks, gpn, &vbase, &vreg, R->d));
    if (b->through(b->ctx, vreg, why, sizeof why) < 0) {
        weft_diag_add(R->d, WEFT_SEV_ERROR, NULL, 0, 0,
                      "verifying the table: weft could not be attached as the shim attaches it%s%s",
                      *why ? ": " : "", why);
        WEFT_FAIL(WEFT_ERR_SYSTEM);
    }
    through = 1;
    R->reg = vreg;
    R->phase = "verify ";
    R->done = 0;
    R->total = npts;
    if (R->progress) {
        fprintf(R->progress,
                "weft tune: verifying the %d sizes the table gives to weft through the shim (the "
                "table loaded as libweft_nccl.so loads it, each against NCCL again, timed as "
                "tools/compare_nccl.sh -b %llu -e %llu -f %g runs nccl-tests: -n %d below 1 MB, "
                "%d from it; above %gx NCCL's time beyond the noise, NCCL serves that size)\n",
                npts, (unsigned long long)o->minb, (unsigned long long)o->maxb, o->factor,
                o->verify_calls_small > 0 ? o->verify_calls_small : 200,
                o->calls > 0 ? o->calls : 20, o->verify_max);
        fflush(R->progress);
    }
    for (int kind = 0; kind < 2; kind++)
        WEFT_CHECK(verify_kind(R, vreg, t, kind, pr, &sum, t0));
    char worst[64] = "none kept";
    if (sum.verified > sum.dropped)
        snprintf(worst, sizeof worst, "worst ratio kept %.3fx", sum.worst);
    if (sum.dropped == 0)
        snprintf(buf, sizeof buf,
                 "%d choices verified through the shim: all kept (none above %gx NCCL's time "
                 "beyond the noise); %s",
                 sum.verified, o->verify_max, worst);
    else
        snprintf(buf, sizeof buf,
                 "%d choices verified through the shim: %d kept, %d dropped (above %gx NCCL's "
                 "time beyond the noise: NCCL serves those sizes); %s",
                 sum.verified, sum.verified - sum.dropped, sum.dropped, o->verify_max, worst);
done:
    WEFT_CHECK(weft_tune_set_run(t, "verified", buf));
    if (R->progress) {
        if (R->tty) fputs("\r\033[K", R->progress);
        fprintf(R->progress, "weft tune: %s\n", buf);
        fflush(R->progress);
    }
fail:
    if (through && b->through(b->ctx, NULL, why, sizeof why) < 0 && res == WEFT_OK) {
        weft_diag_add(R->d, WEFT_SEV_ERROR, NULL, 0, 0, "ending the verification failed%s%s",
                      *why ? ": " : "", why);
        res = WEFT_ERR_SYSTEM;
    }
    R->reg = measured;
    R->phase = "";
    weft_registry_free(vreg);
    weft_registry_free(vbase);
    return res;
}

static weft_result record_run(const tune_opts *o, weft_tune_table *t) {
    weft_result res = WEFT_OK;
    char buf[512], lo[32], hi[32];
    weft_tune_bytes_str(o->minb, lo, sizeof lo);
    weft_tune_bytes_str(o->maxb, hi, sizeof hi);
    snprintf(buf, sizeof buf, "%s to %s, x%g", lo, hi, o->factor);
    WEFT_CHECK(weft_tune_set_run(t, "sizes", buf));
    WEFT_CHECK(weft_tune_set_run(t, "dtype", "float"));
    WEFT_CHECK(weft_tune_set_run(t, "op", "sum"));
    snprintf(buf, sizeof buf, "%d", o->iters);
    WEFT_CHECK(weft_tune_set_run(t, "iters", buf));
    snprintf(buf, sizeof buf, "%d", o->warmup);
    WEFT_CHECK(weft_tune_set_run(t, "warmup", buf));
    snprintf(buf, sizeof buf, "%g", o->precision);
    WEFT_CHECK(weft_tune_set_run(t, "precision", buf));
    snprintf(buf, sizeof buf, "%g", o->margin);
    WEFT_CHECK(weft_tune_set_run(t, "margin", buf));
    snprintf(buf, sizeof buf, "%d", o->max_factor);
    WEFT_CHECK(weft_tune_set_run(t, "max-rounds", buf));
    buf[0] = '\0';
    for (int i = 0; i < o->ndefines; i++)
        snprintf(buf + strlen(buf), sizeof buf - strlen(buf), "%s%s", i ? "," : "", o->defines[i]);
    WEFT_CHECK(weft_tune_set_run(t, "defines", buf));
    WEFT_CHECK(weft_tune_set_run(t, "check", o->check ? "yes" : "no"));
    snprintf(buf, sizeof buf, "%g", o->verify_max);
    WEFT_CHECK(weft_tune_set_run(t, "verify", o->verify ? buf : "no"));
fail:
    return res;
}

weft_result tune_run(const tune_opts *o, const tune_backend *b, const weft_registry *reg,
                     const weft_machine *m, FILE *progress, int tty, weft_tune_table **out,
                     weft_diag *d) {
    weft_result res = WEFT_OK;
    run R;
    weft_tune_table *t = NULL;
    int *map = NULL;
    point_result pr = {NULL, NULL, 0, 0};
    memset(&R, 0, sizeof R);
    R.o = o;
    R.b = b;
    R.reg = reg;
    R.progress = progress;
    R.tty = tty;
    R.d = d;
    R.phase = "";
    R.t0 = b->now(b->ctx);
    *out = NULL;
    WEFT_CHECK(plan(&R));
    t = weft_tune_table_new();
    WEFT_CHECK_ALLOC(t);
    WEFT_CHECK(weft_machine_copy(&t->machine, m));
    WEFT_CHECK(record_run(o, t));
    size_t nreg = weft_registry_size(reg);
    map = malloc((nreg ? nreg : 1) * sizeof *map);
    WEFT_CHECK_ALLOC(map);
    for (size_t i = 0; i < nreg; i++)
        map[i] = -1;
    if (R.nsecs == 0) {
        weft_diag_add(d, WEFT_SEV_ERROR, o->paths, 0, 0,
                      "no algorithm fits a %d-rank communicator for the collectives and modes "
                      "asked: nothing to measure",
                      b->nranks);
        WEFT_FAIL(WEFT_ERR_INPUT);
    }
    int maxc = 0;
    for (int i = 0; i < R.nsecs; i++)
        if (R.secs[i].ncands > maxc) maxc = R.secs[i].ncands;
    pr.status = malloc((size_t)(maxc + 1) * sizeof *pr.status);
    pr.st = malloc((size_t)(maxc + 1) * sizeof *pr.st);
    WEFT_CHECK_ALLOC(pr.status);
    WEFT_CHECK_ALLOC(pr.st);
    if (progress) {
        int gpn = weft_tune_shape(b->nranks, weft_registry_gpus_per_node(reg));
        char shape[48] = "";
        if (gpn < b->nranks)
            snprintf(shape, sizeof shape, " in %d nodes of %d GPU%s", b->nranks / gpn, gpn,
                     gpn == 1 ? "" : "s");
        fprintf(progress,
                "weft tune: %d ranks%s, %d sections (collective, mode, launch, buffers), %d "
                "points; NCCL and every candidate interleaved, >= %d calls each per point\n",
                b->nranks, shape, R.nsecs, R.total, o->iters);
        fflush(progress);
    }
    int have_kind = -1;
    for (int i = 0; i < R.nsecs; i++) {
        plan_sec *s = &R.secs[i];
        int kind = (s->flags & WEFT_CALL_REGISTERED) ? 1 : 0;
        if (kind != have_kind) {
            /* buffers for every point of this kind */
            uint64_t most = 0;
            for (int j = i; j < R.nsecs; j++) {
                if (((R.secs[j].flags & WEFT_CALL_REGISTERED) ? 1 : 0) != kind) break;
                for (int si = 0; si < R.nsizes; si++) {
                    tune_point p;
                    if (make_point(&R, &R.secs[j], si, &p) && buffer_bytes(&p) > most)
                        most = buffer_bytes(&p);
                }
            }
            char why[256] = "";
            int br = b->buffers(b->ctx, kind, most, why, sizeof why);
            if (br < 0) {
                weft_diag_add(d, WEFT_SEV_ERROR, NULL, 0, 0, "allocating buffers failed%s%s",
                              *why ? ": " : "", why);
                WEFT_FAIL(WEFT_ERR_SYSTEM);
            }
            have_kind = kind;
            if (br != WEFT_TUNE_OK) {
                weft_diag_add(d, WEFT_SEV_WARNING, NULL, 0, 0,
                              "%s buffers cannot be measured here (%s): those sections are left "
                              "out",
                              kind_word(kind), why);
                if (progress)
                    fprintf(progress, "weft tune: %s buffers cannot be measured here (%s)\n",
                            kind_word(kind), why);
                while (i + 1 < R.nsecs &&
                       ((R.secs[i + 1].flags & WEFT_CALL_REGISTERED) ? 1 : 0) == kind) {
                    for (int si = 0; si < R.nsizes; si++) {
                        tune_point p;
                        R.total -= make_point(&R, &R.secs[i + 1], si, &p);
                    }
                    i++;
                }
                for (int si = 0; si < R.nsizes; si++) {
                    tune_point p;
                    R.total -= make_point(&R, s, si, &p);
                }
                continue;
            }
        }
        weft_tune_section *ts = weft_tune_add_section(t, s->coll, b->nranks, s->inplace, s->flags);
        WEFT_CHECK_ALLOC(ts);
        /* the node shape the registry was made for: the table answers only calls of it */
        ts->gpn = weft_tune_shape(b->nranks, weft_registry_gpus_per_node(reg));
        for (int si = 0; si < R.nsizes; si++) {
            tune_point p;
            if (!make_point(&R, s, si, &p)) continue;
            double start = b->now(b->ctx);
            WEFT_CHECK(measure(&R, s, &p, 1 - o->margin, &pr));
            double took = b->now(b->ctx) - start, per = took / (s->ncands + 1);
            R.seen[si] = R.seen[si] < 0 ? per : 0.5 * (R.seen[si] + per);
            R.took += per;
            R.predicted += model_s(&R, (double)p.bytes);
            double x = (double)p.bytes, y = pr.st[0].us;
            R.sx += x;
            R.sy += y;
            R.sxx += x * x;
            R.sxy += x * y;
            if (x > R.maxb) R.maxb = x;
            R.nfit++;
            R.done++;
            weft_tune_row *row = weft_tune_add_row(ts, p.bytes);
            WEFT_CHECK_ALLOC(row);
            row->rounds = pr.rounds;
            row->nccl_us = pr.st[0].us;
            row->choice = -1;
            for (int k = 1; k <= s->ncands; k++) {
                int a = table_algo(&R, t, map, s->cands[k - 1]);
                if (a < 0) WEFT_FAIL(WEFT_ERR_NOMEM);
                weft_tune_meas *q = weft_tune_add_meas(row, a);
                WEFT_CHECK_ALLOC(q);
                q->status = (weft_tune_status)pr.status[k];
                if (q->status == WEFT_TUNE_OK) {
                    q->us = pr.st[k].us;
                    q->ratio = pr.st[k].ratio;
                    q->lo = pr.st[k].lo;
                    q->hi = pr.st[k].hi;
                } else if (q->status == WEFT_TUNE_WRONG) {
                    char pt[160];
                    point_str(&R, &p, pt, sizeof pt);
                    weft_diag_add(d, WEFT_SEV_WARNING, NULL, 0, 0,
                                  "%s: '%s' computed a result different from NCCL's; it is not "
                                  "chosen (a bug: please report it with this line)",
                                  pt, algo_name(&R, s->cands[k - 1]));
                }
                if (k == pr.choice) row->choice = a;
            }
            report(&R, &p, s, &pr, eta(&R, i, si));
        }
        WEFT_CHECK(weft_tune_ranges_from_rows(ts));
    }
    /* every rank built its table from the same gathered numbers; make sure */
    WEFT_CHECK(tune_agree(b, t, d));
    if (o->verify) {
        WEFT_CHECK(verify(&R, t, &pr));
        WEFT_CHECK(tune_agree(b, t, d));
    }
    {
        char date[64];
        time_t now = time(NULL);
        struct tm tmv;
        strftime(date, sizeof date, "%Y-%m-%d %H:%M UTC", gmtime_r(&now, &tmv));
        WEFT_CHECK(weft_tune_set_run(t, "date", date));
        char took[32];
        fmt_duration(b->now(b->ctx) - R.t0, took, sizeof took);
        WEFT_CHECK(weft_tune_set_run(t, "took", took));
    }
    *out = t;
    t = NULL;
fail:
    free(pr.status);
    free(pr.st);
    free(map);
    weft_tune_table_free(t);
    plan_free(&R);
    return res;
}

/* ---- checking ------------------------------------------------------------------------------ */
float tune_input(int rank, size_t i) {
    return (float)(((size_t)rank * 131 + i * 7) % 16);
}

void tune_expected(const tune_point *p, int rank, float *out, unsigned char *def, size_t outb) {
    size_t n = outb / 4, c = p->count;
    for (size_t e = 0; e < n; e++) {
        int32_t from, in_seg;
        size_t seg = c ? e / c : 0, j = c ? e % c : 0;
        def[e] = (unsigned char)weft_coll_source(p->coll, p->nranks, 0, rank, (int32_t)seg, &from,
                                                 &in_seg);
        size_t at = (size_t)in_seg * c + j;
        float v = 0;
        if (from >= 0) {
            v = tune_input(from, at);
        } else {
            for (int r = 0; r < p->nranks; r++)
                v += tune_input(r, at); /* small integers: exact in any order */
        }
        out[e] = def[e] ? v : 0;
    }
}

size_t tune_first_diff(const float *want, const unsigned char *def, const float *got, size_t n) {
    for (size_t i = 0; i < n; i++)
        if (def[i] && memcmp(&want[i], &got[i], sizeof(float)) != 0) return i;
    return (size_t)-1;
}
