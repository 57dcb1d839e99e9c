/* trace_summary.c — what `weft trace summarize` and `weft trace check` print: time per step type
 * and per connection (waits versus moving data, achieved bandwidth), the critical path of a call
 * through program order, dependencies, messages and FIFO credit, and the consistency checks. */
#include "trace_tools.h"
#include "weft_ir.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

/* ---- formatting ----------------------------------------------------------------------------- */
typedef struct usbuf {
    char s[32];
} usbuf;

static usbuf us(int64_t ns) {
    usbuf b;
    uint64_t a = ns < 0 ? (uint64_t)0 - (uint64_t)ns : (uint64_t)ns;
    snprintf(b.s, sizeof b.s, "%s%" PRIu64 ".%03u", ns < 0 ? "-" : "", a / 1000,
             (unsigned)(a % 1000));
    return b;
}

/* scale x num / den in fmt, "-" where there is nothing to divide by. */
static usbuf ratio(const char *fmt, double scale, int64_t num, int64_t den) {
    usbuf b;
    if (den <= 0)
        snprintf(b.s, sizeof b.s, "-");
    else
        snprintf(b.s, sizeof b.s, fmt, scale * (double)num / (double)den);
    return b;
}
/* bytes per ns = GB/s (10^9 bytes per second). */
static usbuf gbs(int64_t bytes, int64_t ns) {
    return ratio("%.2f", 1.0, bytes, ns);
}
static usbuf pct(int64_t part, int64_t whole) {
    return ratio("%.1f%%", 100.0, part, whole);
}

/* Sums of many durations: saturate instead of overflowing (a hostile file may hold anything). */
static int64_t sadd(int64_t a, int64_t b) {
    int64_t r;
    if (__builtin_add_overflow(a, b, &r)) return b > 0 ? INT64_MAX : INT64_MIN;
    return r;
}

static const char *name_or(const char *s) {
    return s ? s : "?";
}

/* ---- indexing ------------------------------------------------------------------------------- */
/* A call across ranks: the model calls [c0, c1) with the same seq (the model is sorted). */
typedef struct group {
    int64_t seq;
    size_t c0, c1;
} group;

typedef struct msg_key {
    int32_t from, to, chan;
    int64_t msg;
    size_t slice;
} msg_key;

typedef struct an {
    const weft_trace *t;
    size_t *first; /* slices of call c: [first[c], first[c + 1]) */
    group *g;
    size_t ng;
} an;

static void an_free(an *a) {
    free(a->first);
    free(a->g);
}

static weft_result an_init(an *a, const weft_trace *t) {
    weft_result res = WEFT_OK;
    memset(a, 0, sizeof *a);
    a->t = t;
    a->first = calloc(t->ncalls + 1, sizeof *a->first);
    a->g = malloc((t->ncalls ? t->ncalls : 1) * sizeof *a->g);
    WEFT_CHECK_ALLOC(a->first);
    WEFT_CHECK_ALLOC(a->g);
    for (size_t i = 0; i < t->nslices; i++)
        a->first[t->slices[i].call + 1]++;
    for (size_t c = 0; c < t->ncalls; c++)
        a->first[c + 1] += a->first[c];
    for (size_t c = 0; c < t->ncalls;) {
        size_t e = c;
        while (e < t->ncalls && t->calls[e].seq == t->calls[c].seq)
            e++;
        a->g[a->ng++] = (group){t->calls[c].seq, c, e};
        c = e;
    }
    return WEFT_OK;
fail:
    an_free(a);
    return res;
}

static int64_t slice_wait(const weft_trace_slice *s) {
    return s->dep_ns + s->data_ns + s->credit_ns;
}

static int64_t slice_move(const weft_trace_slice *s) {
    return (s->t1 - s->t0) - slice_wait(s);
}

/* Longest kernel among a group's ranks (no cross-rank clock involved). */
static int64_t group_kernel(const an *a, const group *g, int32_t *rank) {
    int64_t best = -1;
    for (size_t c = g->c0; c < g->c1; c++) {
        int64_t k = a->t->calls[c].t1 - a->t->calls[c].t0;
        if (k > best) best = k, *rank = a->t->calls[c].rank;
    }
    return best;
}

/* ---- per step type -------------------------------------------------------------------------- */
typedef struct tstat {
    int64_t n, total, dep, data, credit, move, bytes;
} tstat;

static void tstat_add(tstat *x, const weft_trace_slice *s) {
    x->n++;
    x->total = sadd(x->total, s->t1 - s->t0);
    x->dep = sadd(x->dep, s->dep_ns);
    x->data = sadd(x->data, s->data_ns);
    x->credit = sadd(x->credit, s->credit_ns);
    x->move = sadd(x->move, slice_move(s));
    x->bytes = sadd(x->bytes, s->bytes);
}

static void print_types(const weft_trace *t, FILE *out) {
    tstat ty[WEFT_STEP_COUNT], all;
    memset(ty, 0, sizeof ty);
    memset(&all, 0, sizeof all);
    for (size_t i = 0; i < t->nslices; i++) {
        const weft_trace_slice *s = &t->slices[i];
        if (s->type >= 0 && s->type < WEFT_STEP_COUNT) tstat_add(&ty[s->type], s);
        tstat_add(&all, s);
    }
    fprintf(out, "\nper step type\n");
    fprintf(out, "  %-6s %8s %13s %12s %12s %12s %13s %15s %10s\n", "type", "count", "total us",
            "dep us", "data us", "credit us", "move us", "bytes", "move GB/s");
    for (int k = 0; k <= WEFT_STEP_COUNT; k++) {
        const tstat *x = k < WEFT_STEP_COUNT ? &ty[k] : &all;
        if (k < WEFT_STEP_COUNT && x->n == 0) continue;
        fprintf(out, "  %-6s %8" PRId64 " %13s %12s %12s %12s %13s %15" PRId64 " %10s\n",
                k < WEFT_STEP_COUNT ? weft_step_name((weft_step_type)k) : "all", x->n,
                us(x->total).s, us(x->dep).s, us(x->data).s, us(x->credit).s, us(x->move).s,
                x->bytes, gbs(x->bytes, x->move).s);
    }
}

/* ---- per connection ------------------------------------------------------------------------- */
typedef struct citem {
    int32_t from, to, chan;
    int64_t seq;
    size_t slice;
    int recv; /* 0: the sender's side, 1: the receiver's */
} citem;

static int cmp_citem(const void *pa, const void *pb) {
    const citem *a = pa, *b = pb;
    return weft_cmp_keys((int64_t[]){a->from, a->to, a->chan, a->seq, a->recv, a->slice},
                         (int64_t[]){b->from, b->to, b->chan, b->seq, b->recv, b->slice}, 6);
}

static weft_result print_conns(const weft_trace *t, FILE *out) {
    weft_result res = WEFT_OK;
    size_t n = 0;
    citem *it = malloc((2 * t->nslices + 1) * sizeof *it);
    WEFT_CHECK_ALLOC(it);
    for (size_t i = 0; i < t->nslices; i++) {
        const weft_trace_slice *s = &t->slices[i];
        const weft_trace_call *c = &t->calls[s->call];
        if (s->send >= 0) it[n++] = (citem){c->rank, s->send, s->chan, c->seq, i, 0};
        if (s->recv >= 0) it[n++] = (citem){s->recv, c->rank, s->chan, c->seq, i, 1};
    }
    qsort(it, n, sizeof *it, cmp_citem);
    fprintf(out, "\nper connection (sender -> receiver, channel)\n");
    fprintf(out, "  %-16s %7s %15s %12s %12s %12s %12s %12s %9s\n", "connection", "msgs", "bytes",
            "send us", "credit us", "recv us", "data us", "span us", "GB/s");
    if (n == 0) fprintf(out, "  (no messages)\n");
    for (size_t i = 0; i < n;) {
        size_t j = i;
        int64_t nsend = 0, nrecv = 0, bsend = 0, brecv = 0, send = 0, credit = 0, recv = 0,
                data = 0, span = 0;
        while (j < n && it[j].from == it[i].from && it[j].to == it[i].to &&
               it[j].chan == it[i].chan) {
            /* One call of this connection: from its first send to its last receive. */
            size_t k = j;
            int64_t lo = INT64_MAX, hi = INT64_MIN, slo = INT64_MAX, rhi = INT64_MIN;
            for (; k < n && it[k].from == it[i].from && it[k].to == it[i].to &&
                   it[k].chan == it[i].chan && it[k].seq == it[j].seq;
                 k++) {
                const weft_trace_slice *s = &t->slices[it[k].slice];
                if (s->t0 < lo) lo = s->t0;
                if (s->t1 > hi) hi = s->t1;
                if (it[k].recv) {
                    nrecv++, brecv = sadd(brecv, s->bytes), recv = sadd(recv, s->t1 - s->t0);
                    data = sadd(data, s->data_ns);
                    if (s->t1 > rhi) rhi = s->t1;
                } else {
                    nsend++, bsend = sadd(bsend, s->bytes), send = sadd(send, s->t1 - s->t0);
                    credit = sadd(credit, s->credit_ns);
                    if (s->t0 < slo) slo = s->t0;
                }
            }
            /* With both sides in the trace: first send entry to last receive exit. */
            span = sadd(span, (slo != INT64_MAX && rhi != INT64_MIN) ? rhi - slo : hi - lo);
            j = k;
        }
        char key[48];
        snprintf(key, sizeof key, "%d -> %d ch %d", it[i].from, it[i].to, it[i].chan);
        int64_t msgs = nsend ? nsend : nrecv, bytes = nsend ? bsend : brecv;
        fprintf(out, "  %-16s %7" PRId64 " %15" PRId64 " %12s %12s %12s %12s %12s %9s\n", key, msgs,
                bytes, nsend ? us(send).s : "-", nsend ? us(credit).s : "-",
                nrecv ? us(recv).s : "-", nrecv ? us(data).s : "-", us(span).s, gbs(bytes, span).s);
        i = j;
    }
fail:
    free(it);
    return res;
}

/* ---- the critical path ---------------------------------------------------------------------- */
enum { HOP_START, HOP_PROGRAM, HOP_DEP, HOP_DATA, HOP_CREDIT };

typedef struct hop {
    size_t slice;
    int kind;        /* how this step was released by the previous hop */
    int64_t waited;  /* its wait of that kind */
    int64_t latency; /* release time minus the previous hop's end */
} hop;

static int cmp_msg(const void *pa, const void *pb) {
    const msg_key *a = pa, *b = pb;
    return weft_cmp_keys((int64_t[]){a->from, a->to, a->chan, a->msg, a->slice},
                         (int64_t[]){b->from, b->to, b->chan, b->msg, b->slice}, 5);
}

static const msg_key *find_msg(const msg_key *v, size_t n, int32_t from, int32_t to, int32_t chan,
                               int64_t msg) {
    msg_key k = {from, to, chan, msg, 0};
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (cmp_msg(&v[mid], &k) < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < n && v[lo].from == from && v[lo].to == to && v[lo].chan == chan && v[lo].msg == msg
               ? &v[lo]
               : NULL;
}

typedef struct path {
    hop *h; /* in time order */
    size_t n;
    const char *stop; /* why the walk stopped before a step with nothing to wait for, or NULL */
    char stopbuf[160];
} path;

/* The model call of group g on rank r, or SIZE_MAX. */
static size_t call_of(const an *a, const group *g, int32_t r) {
    for (size_t c = g->c0; c < g->c1; c++)
        if (a->t->calls[c].rank == r) return c;
    return SIZE_MAX;
}

/* Walks back from the step that ends last: each step was released by the last thing it waited
 * for (dependency, then data, then credit for Simple; credit before data for LL), or, when it
 * did not wait, by the previous step of its tb. */
static weft_result critical_path(const an *a, const group *g, path *p) {
    weft_result res = WEFT_OK;
    const weft_trace *t = a->t;
    size_t s0 = a->first[g->c0], s1 = a->first[g->c1];
    size_t ns = s1 - s0, nsend = 0, nrecv = 0, nrev = 0;
    msg_key *sends = malloc((ns + 1) * sizeof *sends), *recvs = malloc((ns + 1) * sizeof *recvs);
    hop *rev = malloc((ns + 1) * sizeof *rev);
    memset(p, 0, sizeof *p);
    WEFT_CHECK_ALLOC(sends);
    WEFT_CHECK_ALLOC(recvs);
    WEFT_CHECK_ALLOC(rev);
    if (ns == 0) goto done;
    size_t end = s0;
    for (size_t i = s0; i < s1; i++) {
        const weft_trace_slice *s = &t->slices[i];
        int32_t r = t->calls[s->call].rank;
        if (s->smsg >= 0) sends[nsend++] = (msg_key){r, s->send, s->chan, s->smsg, i};
        if (s->rmsg >= 0) recvs[nrecv++] = (msg_key){s->recv, r, s->chan, s->rmsg, i};
        if (s->t1 > t->slices[end].t1) end = i;
    }
    qsort(sends, nsend, sizeof *sends, cmp_msg);
    qsort(recvs, nrecv, sizeof *recvs, cmp_msg);
    size_t cur = end;
    for (size_t guard = 0; guard <= ns; guard++) {
        const weft_trace_slice *s = &t->slices[cur];
        const weft_trace_call *c = &t->calls[s->call];
        int kind = HOP_PROGRAM;
        int64_t waited = 0;
        int ll = weft_proto_lines((weft_proto)c->proto);
        /* The last wait with time on it, in the order the interpreter waits. */
        int order[3] = {HOP_DEP, ll ? HOP_CREDIT : HOP_DATA, ll ? HOP_DATA : HOP_CREDIT};
        for (int k = 0; k < 3; k++) {
            int64_t w = order[k] == HOP_DEP    ? s->dep_ns
                        : order[k] == HOP_DATA ? s->data_ns
                                               : s->credit_ns;
            if (w > 0) kind = order[k], waited = w;
        }
        size_t pred = SIZE_MAX;
        const char *miss = NULL;
        if (kind == HOP_PROGRAM) {
            if (cur > a->first[s->call] && t->slices[cur - 1].tb == s->tb) pred = cur - 1;
        } else if (kind == HOP_DEP) {
            size_t lo = a->first[s->call], hi = a->first[s->call + 1];
            for (size_t i = lo; i < hi; i++)
                if (t->slices[i].tb == s->dep_tb && t->slices[i].post >= s->dep_want) {
                    pred = i;
                    break;
                }
            if (pred == SIZE_MAX) miss = "the step it waited for on tb %d is not in the trace";
        } else if (kind == HOP_DATA) {
            const msg_key *m = find_msg(sends, nsend, s->recv, c->rank, s->chan, s->rmsg);
            if (m) pred = m->slice;
            if (m == NULL)
                miss = call_of(a, g, s->recv) == SIZE_MAX
                           ? "the message came from rank %d, which is not in the trace"
                           : "the sending step on rank %d is not in the trace";
        } else {
            int64_t want = s->smsg - c->fifo_slots;
            const msg_key *m =
                want >= 0 ? find_msg(recvs, nrecv, c->rank, s->send, s->chan, want) : NULL;
            if (m) pred = m->slice;
            if (m == NULL)
                miss = want < 0 ? "it waited for FIFO credit that no earlier message explains"
                       : call_of(a, g, s->send) == SIZE_MAX
                           ? "the credit came from rank %d, which is not in the trace"
                           : "the receiving step on rank %d that freed the slot is not in the "
                             "trace";
        }
        int64_t release = s->t0 + slice_wait(s);
        if (pred == SIZE_MAX) {
            rev[nrev++] = (hop){cur, HOP_START, 0, 0};
            if (miss) {
                snprintf(p->stopbuf, sizeof p->stopbuf, miss,
                         kind == HOP_DEP    ? s->dep_tb
                         : kind == HOP_DATA ? s->recv
                                            : s->send);
                p->stop = p->stopbuf;
            }
            break;
        }
        rev[nrev++] = (hop){cur, kind, waited, release - t->slices[pred].t1};
        if (t->slices[pred].t1 > s->t1 || pred == cur) {
            /* Inconsistent clocks or data: never walk forward in time. */
            snprintf(p->stopbuf, sizeof p->stopbuf,
                     "stopped: the step it waited for ends after it (clocks misaligned?)");
            p->stop = p->stopbuf;
            rev[nrev - 1].kind = HOP_START;
            break;
        }
        cur = pred;
    }
done:
    p->h = malloc((nrev ? nrev : 1) * sizeof *p->h);
    WEFT_CHECK_ALLOC(p->h);
    for (size_t i = 0; i < nrev; i++)
        p->h[i] = rev[nrev - 1 - i];
    p->n = nrev;
fail:
    free(sends);
    free(recvs);
    free(rev);
    return res;
}

static void hop_text(const weft_trace *t, const hop *h, char *buf, size_t len) {
    const weft_trace_slice *s = &t->slices[h->slice];
    const weft_trace_call *c = &t->calls[s->call];
    switch (h->kind) {
    case HOP_START: snprintf(buf, len, "start"); break;
    case HOP_PROGRAM: snprintf(buf, len, "previous step of the tb"); break;
    case HOP_DEP: snprintf(buf, len, "dependency on tb %d", s->dep_tb); break;
    case HOP_DATA:
        snprintf(buf, len, "message %d->%d ch %d #%" PRId64, s->recv, c->rank, s->chan, s->rmsg);
        break;
    default:
        snprintf(buf, len, "credit %d->%d ch %d #%" PRId64, c->rank, s->send, s->chan,
                 s->smsg - c->fifo_slots);
        break;
    }
}

static void print_hop(const weft_trace *t, const hop *h, int64_t origin, FILE *out) {
    const weft_trace_slice *s = &t->slices[h->slice];
    const weft_trace_call *c = &t->calls[s->call];
    char ty[32], via[64];
    int n = snprintf(ty, sizeof ty, "%s", weft_step_name((weft_step_type)s->type));
    if (s->recv >= 0) n += snprintf(ty + n, sizeof ty - (size_t)n, " <%d", s->recv);
    if (s->send >= 0 && n < (int)sizeof ty)
        snprintf(ty + n, sizeof ty - (size_t)n, " >%d", s->send);
    hop_text(t, h, via, sizeof via);
    fprintf(out, "  %11s %10s %5d %4d %5d %5d  %-12s %-26s %10s\n", us(s->t0 - origin).s,
            us(s->t1 - s->t0).s, c->rank, s->tb, s->step, s->iter, ty, via,
            h->kind == HOP_START || h->kind == HOP_PROGRAM ? "" : us(h->waited).s);
}

/* The call numbered seq, or the longest when seq < 0; NULL when there is none. */
static const group *pick_group(const an *a, int64_t seq) {
    const group *g = NULL;
    int64_t best = -1;
    for (size_t i = 0; i < a->ng; i++) {
        int32_t r = 0;
        int64_t k = group_kernel(a, &a->g[i], &r);
        if (seq >= 0 ? a->g[i].seq == seq : k > best) g = &a->g[i], best = k;
    }
    return g;
}

weft_result weft_trace_call_path(const weft_trace *t, int64_t seq, weft_trace_path *out) {
    weft_result res = WEFT_OK;
    an a;
    path p;
    memset(out, 0, sizeof *out);
    memset(&p, 0, sizeof p);
    WEFT_CHECK(an_init(&a, t));
    const group *g = pick_group(&a, seq);
    if (g == NULL) {
        an_free(&a);
        return WEFT_ERR_USAGE;
    }
    out->seq = g->seq;
    out->c0 = g->c0;
    out->c1 = g->c1;
    res = critical_path(&a, g, &p);
    if (res == WEFT_OK) {
        out->slices = malloc((p.n ? p.n : 1) * sizeof *out->slices);
        if (out->slices == NULL) res = WEFT_ERR_NOMEM;
    }
    if (res == WEFT_OK) {
        for (size_t i = 0; i < p.n; i++)
            out->slices[i] = p.h[i].slice;
        out->n = p.n;
    }
    free(p.h);
    an_free(&a);
fail:
    return res;
}

static weft_result print_path(const an *a, const weft_trace_summary_opts *o, FILE *out) {
    weft_result res = WEFT_OK;
    const weft_trace *t = a->t;
    path p;
    memset(&p, 0, sizeof p);
    const group *g = pick_group(a, o->call);
    if (g == NULL) return WEFT_ERR_INPUT; /* weft_trace_summarize checked o->call */
    const weft_trace_call *c0 = &t->calls[g->c0];
    WEFT_CHECK(critical_path(a, g, &p));
    int64_t origin = INT64_MAX;
    for (size_t c = g->c0; c < g->c1; c++)
        if (t->calls[c].t0 < origin) origin = t->calls[c].t0;
    fprintf(out, "\ncritical path of call %" PRId64 " (%s, %s, %d of %d ranks in the trace)",
            g->seq, c0->algo, name_or(weft_coll_name((weft_coll)c0->coll)), (int)(g->c1 - g->c0),
            c0->nranks);
    if (p.n == 0) {
        fprintf(out, ": no steps recorded\n");
        goto fail;
    }
    const weft_trace_slice *first = &t->slices[p.h[0].slice],
                           *last = &t->slices[p.h[p.n - 1].slice];
    int64_t span = last->t1 - first->t0, move = 0, lat = 0, wait0 = slice_wait(first);
    for (size_t i = 0; i < p.n; i++) {
        const weft_trace_slice *s = &t->slices[p.h[i].slice];
        move = sadd(move, i == 0 ? slice_move(s) : s->t1 - (s->t0 + slice_wait(s)));
        lat = sadd(lat, i == 0 ? 0 : p.h[i].latency);
    }
    fprintf(out, ": %zu steps, %s us\n", p.n, us(span).s);
    fprintf(out, "  %11s %10s %5s %4s %5s %5s  %-12s %-26s %10s\n", "start us", "dur us", "rank",
            "tb", "step", "iter", "type", "released by", "waited us");
    size_t lim = o->path_max > 0 ? (size_t)o->path_max : p.n;
    for (size_t i = 0; i < p.n; i++) {
        if (p.n > lim && i == lim / 2) {
            fprintf(out, "  ... %zu more steps ...\n", p.n - lim);
            i = p.n - (lim - lim / 2);
        }
        print_hop(t, &p.h[i], origin, out);
    }
    if (p.stop) fprintf(out, "  (the path starts here: %s)\n", p.stop);
    int64_t lost = 0;
    for (size_t c = g->c0; c < g->c1; c++)
        lost = sadd(lost, t->calls[c].dropped);
    if (lost)
        fprintf(out,
                "  (%" PRId64 " step executions of this call were not recorded: the path "
                "covers only the recorded ones)\n",
                lost);
    fprintf(
        out,
        "  before the path: %s us from the call's first CTA entry to its first step (rank %d)\n",
        us(first->t0 - origin).s, t->calls[first->call].rank);
    fprintf(out,
            "  on the path: moving data %s us (%s), waiting before the first step %s us (%s), "
            "between steps (signal and message latency) %s us (%s)\n",
            us(move).s, pct(move, span).s, us(wait0).s, pct(wait0, span).s, us(lat).s,
            pct(lat, span).s);
fail:
    free(p.h);
    return res;
}

/* ---- summarize ------------------------------------------------------------------------------ */
typedef struct algo_row {
    const char *algo;
    int32_t coll, nranks;
    int64_t calls, sum, min, max;
} algo_row;

weft_result weft_trace_summarize(const weft_trace *t, const weft_trace_summary_opts *o, FILE *out) {
    weft_result res = WEFT_OK;
    an a;
    algo_row *rows = NULL;
    size_t nrows = 0;
    int64_t dropped = 0, stopped = 0;
    WEFT_CHECK(an_init(&a, t));
    if (o->call >= 0) {
        size_t i = 0;
        while (i < a.ng && a.g[i].seq != o->call)
            i++;
        if (i == a.ng) WEFT_FAIL(WEFT_ERR_USAGE); /* nothing printed: the caller says why */
    }
    int32_t maxrank = -1;
    size_t nranks = 0;
    for (size_t i = 0; i < t->ncalls; i++) {
        dropped = sadd(dropped, t->calls[i].dropped);
        stopped = sadd(stopped, t->calls[i].stopped);
        if (t->calls[i].rank > maxrank) maxrank = t->calls[i].rank;
    }
    if (maxrank >= 0) {
        char *seen = calloc((size_t)maxrank + 1, 1);
        WEFT_CHECK_ALLOC(seen);
        for (size_t i = 0; i < t->ncalls; i++)
            seen[t->calls[i].rank] = 1;
        for (int32_t r = 0; r <= maxrank; r++)
            nranks += seen[r];
        free(seen);
    }
    fprintf(out, "trace: %zu call%s on %zu rank%s, %zu step executions", a.ng, a.ng == 1 ? "" : "s",
            nranks, nranks == 1 ? "" : "s", t->nslices);
    if (dropped) fprintf(out, ", %" PRId64 " NOT RECORDED (buffer full)", dropped);
    if (stopped) fprintf(out, ", %" PRId64 " CTAs stopped by the watchdog", stopped);
    fprintf(out, "\n");

    /* Calls per algorithm, kernel time = the slowest rank's. */
    rows = calloc(a.ng + 1, sizeof *rows);
    WEFT_CHECK_ALLOC(rows);
    for (size_t i = 0; i < a.ng; i++) {
        const weft_trace_call *c = &t->calls[a.g[i].c0];
        int32_t r;
        int64_t k = group_kernel(&a, &a.g[i], &r);
        size_t j = 0;
        while (j < nrows && !(strcmp(rows[j].algo, c->algo) == 0 && rows[j].coll == c->coll &&
                              rows[j].nranks == c->nranks))
            j++;
        if (j == nrows) rows[nrows++] = (algo_row){c->algo, c->coll, c->nranks, 0, 0, k, k};
        rows[j].calls++;
        rows[j].sum = sadd(rows[j].sum, k);
        if (k < rows[j].min) rows[j].min = k;
        if (k > rows[j].max) rows[j].max = k;
    }
    fprintf(out, "\ncalls (kernel time: the slowest rank's, first CTA in to last CTA out)\n");
    fprintf(out, "  %-28s %-14s %5s %7s %12s %12s %12s\n", "algorithm", "collective", "ranks",
            "calls", "mean us", "min us", "max us");
    for (size_t j = 0; j < nrows; j++)
        fprintf(out, "  %-28s %-14s %5d %7" PRId64 " %12s %12s %12s\n", rows[j].algo,
                name_or(weft_coll_name((weft_coll)rows[j].coll)), rows[j].nranks, rows[j].calls,
                us(rows[j].sum / rows[j].calls).s, us(rows[j].min).s, us(rows[j].max).s);
    print_types(t, out);
    WEFT_CHECK(print_conns(t, out));
    if (a.ng > 0) WEFT_CHECK(print_path(&a, o, out));
fail:
    free(rows);
    an_free(&a);
    return res;
}

/* ---- check ---------------------------------------------------------------------------------- */
typedef struct checker {
    FILE *out;
    weft_diag *d;
    size_t failed;
} checker;

static void verdict(checker *k, int ok, const char *fmt, ...) WEFT_PRINTF(3, 4);
static void verdict(checker *k, int ok, const char *fmt, ...) {
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    fprintf(k->out, "  %-4s  %s\n", ok ? "ok" : "FAIL", msg);
    if (!ok) {
        k->failed++;
        weft_diag_add(k->d, WEFT_SEV_ERROR, NULL, 0, 0, "trace check failed: %s", msg);
    }
}

static const char *file_of(const weft_trace *t, const weft_trace_call *c) {
    return c->file >= 0 && (size_t)c->file < t->nfiles ? t->files[c->file] : "trace";
}

size_t weft_trace_check(const weft_trace *t, const weft_trace_check_opts *o, FILE *out,
                        weft_diag *d) {
    checker k = {out, d, 0};
    an a;
    if (an_init(&a, t) != WEFT_OK) {
        verdict(&k, 0, "out of memory");
        return k.failed;
    }
    double tol = o && o->tolerance > 0 ? o->tolerance : 0.10;
    fprintf(out, "check: %zu call%s, %zu call-rank%s, %zu step executions\n", a.ng,
            a.ng == 1 ? "" : "s", t->ncalls, t->ncalls == 1 ? "" : "s", t->nslices);

    /* 1. Per tb: execution order and no overlap. */
    char first_bad[320] = "";
    size_t nbad = 0, ntb = 0;
    for (size_t i = 0; i < t->nslices; i++) {
        const weft_trace_slice *s = &t->slices[i];
        const weft_trace_slice *p = i > 0 ? &t->slices[i - 1] : NULL;
        if (p == NULL || p->call != s->call || p->tb != s->tb) {
            ntb++;
            continue;
        }
        int order = s->iter > p->iter || (s->iter == p->iter && s->step > p->step);
        if (s->t0 < p->t1 || !order) {
            if (nbad++ == 0) {
                const weft_trace_call *c = &t->calls[s->call];
                snprintf(first_bad, sizeof first_bad,
                         "; first: %s:%d: rank %d tb %d: step %d iteration %d starts at %s us, "
                         "%s step %d iteration %d (ends %s us)",
                         file_of(t, c), s->line, c->rank, s->tb, s->step, s->iter, us(s->t0).s,
                         s->t0 < p->t1 ? "before the end of" : "out of order after", p->step,
                         p->iter, us(p->t1).s);
            }
        }
    }
    verdict(&k, nbad == 0, "slices ordered and non-overlapping on every tb (%zu tbs, %zu bad)%s",
            ntb, nbad, first_bad);

    /* 2. Inside the call's kernel span. */
    nbad = 0;
    first_bad[0] = '\0';
    for (size_t i = 0; i < t->nslices; i++) {
        const weft_trace_slice *s = &t->slices[i];
        const weft_trace_call *c = &t->calls[s->call];
        if (s->t0 < c->t0 || s->t1 > c->t1) {
            if (nbad++ == 0)
                snprintf(first_bad, sizeof first_bad,
                         "; first: %s:%d: rank %d tb %d step %d [%s, %s] us outside [%s, %s]",
                         file_of(t, c), s->line, c->rank, s->tb, s->step, us(s->t0).s, us(s->t1).s,
                         us(c->t0).s, us(c->t1).s);
        }
    }
    verdict(&k, nbad == 0, "slices inside their call's kernel span (%zu bad)%s", nbad, first_bad);

    /* 3. Busiest tb's step time against kernel time, per call and rank. */
    double lo = 1e300, hi = -1;
    nbad = 0;
    first_bad[0] = '\0';
    for (size_t c = 0; c < t->ncalls; c++) {
        const weft_trace_call *cl = &t->calls[c];
        int64_t kern = cl->t1 - cl->t0, best = 0, sum = 0;
        int32_t tb = -1;
        for (size_t i = a.first[c]; i <= a.first[c + 1]; i++) {
            if (i == a.first[c + 1] || (tb >= 0 && t->slices[i].tb != tb)) {
                if (sum > best) best = sum;
                sum = 0;
                if (i == a.first[c + 1]) break;
            }
            tb = t->slices[i].tb;
            sum = sadd(sum, t->slices[i].t1 - t->slices[i].t0);
        }
        if (a.first[c] == a.first[c + 1]) continue;
        double ratio = kern > 0 ? (double)best / (double)kern : 1.0;
        if (ratio < lo) lo = ratio;
        if (ratio > hi) hi = ratio;
        if (ratio < 1.0 - tol || ratio > 1.0 + 1e-9) {
            if (nbad++ == 0)
                snprintf(first_bad, sizeof first_bad,
                         "; first: %s:%d: call %" PRId64 " rank %d: %s us of steps in %s us",
                         file_of(t, cl), cl->line, cl->seq, cl->rank, us(best).s, us(kern).s);
        }
    }
    if (hi < 0)
        verdict(&k, 1, "busiest tb's step time / kernel time: no steps recorded");
    else
        verdict(&k, nbad == 0,
                "busiest tb's step time / kernel time: %.3f .. %.3f (tolerance %.2f, %zu "
                "outside)%s",
                lo, hi, tol, nbad, first_bad);

    /* 4. Completeness. */
    int64_t dropped = 0, stopped = 0;
    for (size_t c = 0; c < t->ncalls; c++)
        dropped = sadd(dropped, t->calls[c].dropped), stopped = sadd(stopped, t->calls[c].stopped);
    verdict(&k, dropped == 0 && stopped == 0,
            "every step execution recorded (%" PRId64 " dropped, %" PRId64 " CTAs stopped)",
            dropped, stopped);

    /* 5. Causality across ranks: a message is received after its send began (clock check). */
    size_t nmsg = 0;
    int64_t min_lat = INT64_MAX, slack = 0;
    nbad = 0;
    first_bad[0] = '\0';
    for (size_t gi = 0; gi < a.ng; gi++) {
        const group *g = &a.g[gi];
        size_t s0 = a.first[g->c0], s1 = a.first[g->c1], ns = 0;
        msg_key *sends = malloc((s1 - s0 + 1) * sizeof *sends);
        if (sends == NULL) {
            verdict(&k, 0, "out of memory");
            break;
        }
        for (size_t i = s0; i < s1; i++) {
            const weft_trace_slice *s = &t->slices[i];
            if (s->smsg >= 0)
                sends[ns++] = (msg_key){t->calls[s->call].rank, s->send, s->chan, s->smsg, i};
        }
        qsort(sends, ns, sizeof *sends, cmp_msg);
        for (size_t i = s0; i < s1; i++) {
            const weft_trace_slice *s = &t->slices[i];
            const weft_trace_call *c = &t->calls[s->call];
            if (s->rmsg < 0) continue;
            const msg_key *m = find_msg(sends, ns, s->recv, c->rank, s->chan, s->rmsg);
            if (m == NULL) continue;
            const weft_trace_slice *snd = &t->slices[m->slice];
            const weft_trace_call *sc = &t->calls[snd->call];
            int64_t err = sadd(c->clock_err_ns > 0 ? c->clock_err_ns : 0,
                               sc->clock_err_ns > 0 ? sc->clock_err_ns : 0);
            int64_t lat = s->t1 - snd->t0;
            nmsg++;
            if (lat < min_lat) min_lat = lat, slack = err;
            if (sadd(lat, err) < 0 && nbad++ == 0)
                snprintf(first_bad, sizeof first_bad,
                         "; first: %s:%d: rank %d received message %" PRId64
                         " %s us before rank %d began sending it",
                         file_of(t, c), s->line, c->rank, s->rmsg, us(-lat).s, sc->rank);
        }
        free(sends);
    }
    if (nmsg == 0)
        verdict(&k, 1, "messages received after their send began: no message with both ends");
    else
        verdict(&k, nbad == 0,
                "messages received after their send began (%zu message%s, smallest send start "
                "to receive end %s us, clock uncertainty %s us)%s",
                nmsg, nmsg == 1 ? "" : "s", us(min_lat).s, us(slack).s, first_bad);
    an_free(&a);
    return k.failed;
}
