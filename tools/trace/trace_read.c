/* trace_read.c — reads weft's Chrome trace event JSON back into the model (for `weft trace`):
 * the object format weft writes, events streamed one at a time, every weft field checked, errors
 * as file:line; foreign events (other categories, other phases) are skipped. */
#include "json_internal.h"
#include "trace_tools.h"
#include "weft_ir.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#define KERNEL_TID 1000000
#define MAX_ERRORS 20
#define MAX_RANKS  8192
#define MAX_TBS    (1 << 20)
/* Times and durations within +-2^59 ns (18 years), time bases within 2^59 of each other: every
 * sum and difference the analysis forms then fits in 63 bits. */
#define MAX_TIME_NS ((int64_t)1 << 59)

typedef struct pending {
    int64_t seq;
    int32_t rank;
} pending;

typedef struct reader {
    json_parser jp;
    const char *file;
    weft_diag *d;
    int nerr;
    weft_trace u;
    pending *pend; /* per slice of u: the call it names */
    size_t cap_pend;
    int have_other;
    int64_t base;
} reader;

static void err(reader *r, int line, const char *fmt, ...) WEFT_PRINTF(3, 4);
static void err(reader *r, int line, const char *fmt, ...) {
    if (r->nerr == MAX_ERRORS)
        weft_diag_add(r->d, WEFT_SEV_NOTE, r->file, line, 0, "too many errors; stopping");
    if (r->nerr++ >= MAX_ERRORS) return;
    va_list ap;
    va_start(ap, fmt);
    char msg[512];
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    weft_diag_add(r->d, WEFT_SEV_ERROR, r->file, line, 0, "%s", msg);
}

/* ---- fields --------------------------------------------------------------------------------- */
typedef struct ev {
    reader *r;
    const json_value *obj, *args;
    const char *what; /* "weft.step event" */
    int line;
    int bad;
} ev;

static const json_value *member(ev *e, const char *key, int in_args, int required) {
    const json_value *v = json_get(in_args ? e->args : e->obj, key);
    if (v == NULL && required) {
        err(e->r, e->line, "%s: \"%s%s\" is missing", e->what, in_args ? "args." : "", key);
        e->bad = 1;
    }
    return v;
}

static int64_t get_int(ev *e, const char *key, int in_args, int64_t lo, int64_t hi) {
    const json_value *v = member(e, key, in_args, 1);
    int64_t x = 0;
    if (v == NULL) return lo;
    if (json_int64(v, &x) != 0) {
        err(e->r, e->line, "%s: \"%s%s\" must be an integer", e->what, in_args ? "args." : "", key);
        e->bad = 1;
        return lo;
    }
    if (x < lo || x > hi) {
        err(e->r, e->line, "%s: \"%s%s\" is %" PRId64 ", outside [%" PRId64 ", %" PRId64 "]",
            e->what, in_args ? "args." : "", key, x, lo, hi);
        e->bad = 1;
        return lo;
    }
    return x;
}

/* A time in microseconds, as ns. */
static int64_t get_us(ev *e, const char *key, int in_args, int64_t lo) {
    const json_value *v = member(e, key, in_args, 1);
    int64_t x = 0;
    if (v == NULL) return 0;
    if (json_fixed(v, 3, &x) != 0 || x > MAX_TIME_NS || x < -MAX_TIME_NS) {
        err(e->r, e->line, "%s: \"%s%s\" must be a number of microseconds within +-2^59 ns",
            e->what, in_args ? "args." : "", key);
        e->bad = 1;
        return 0;
    }
    if (x < lo) {
        err(e->r, e->line, "%s: \"%s%s\" is negative", e->what, in_args ? "args." : "", key);
        e->bad = 1;
        return 0;
    }
    return x;
}

static const char *get_str(ev *e, const char *key, int in_args) {
    const json_value *v = member(e, key, in_args, 1);
    if (v == NULL) return "";
    if (v->type != JSON_STRING) {
        err(e->r, e->line, "%s: \"%s%s\" must be a string", e->what, in_args ? "args." : "", key);
        e->bad = 1;
        return "";
    }
    return v->str;
}

/* A name from a table (lookup returns -1 when unknown). */
static int32_t get_enum(ev *e, const char *key, int (*lookup)(const char *), const char *kind) {
    const char *s = get_str(e, key, 1);
    if (e->bad && *s == '\0') return 0;
    int v = lookup(s);
    if (v < 0) {
        err(e->r, e->line, "%s: \"args.%s\": unknown %s \"%s\"", e->what, key, kind, s);
        e->bad = 1;
        return 0;
    }
    return v;
}

static int buf_from_letter(const char *s) {
    if (strcmp(s, "i") == 0) return WEFT_BUF_INPUT;
    if (strcmp(s, "o") == 0) return WEFT_BUF_OUTPUT;
    if (strcmp(s, "s") == 0) return WEFT_BUF_SCRATCH;
    if (strcmp(s, "-") == 0) return 99;
    return -1;
}

/* ---- events --------------------------------------------------------------------------------- */
/* What every complete ("X") event has: pid (the rank), tid (lo..hi), ts and dur (t0, t1), and an
 * args object; 0 when it has no args object. */
static int read_span(reader *r, ev *e, int64_t lo, int64_t hi, int32_t *rank, int32_t *tid,
                     int64_t *t0, int64_t *t1) {
    *rank = (int32_t)get_int(e, "pid", 0, 0, MAX_RANKS - 1);
    *tid = (int32_t)get_int(e, "tid", 0, lo, hi);
    *t0 = get_us(e, "ts", 0, -MAX_TIME_NS);
    *t1 = *t0 + get_us(e, "dur", 0, 0);
    if (e->args == NULL || e->args->type != JSON_OBJECT) {
        err(r, e->line, "%s: \"args\" must be an object", e->what);
        return 0;
    }
    return 1;
}

static void read_call(reader *r, ev *e) {
    weft_trace_call c;
    int32_t tid;
    memset(&c, 0, sizeof c);
    if (!read_span(r, e, KERNEL_TID, KERNEL_TID, &c.rank, &tid, &c.t0, &c.t1)) return;
    c.seq = get_int(e, "call", 1, 0, INT64_MAX);
    const char *algo = get_str(e, "algorithm", 1);
    c.coll = get_enum(e, "collective", weft_coll_from_name, "collective");
    c.count = get_int(e, "count", 1, 0, INT64_MAX);
    c.dtype = get_enum(e, "type", weft_dtype_from_name, "data type");
    c.op = get_enum(e, "op", weft_redop_from_name, "reduction op");
    c.inplace = (int32_t)get_int(e, "inplace", 1, 0, 1);
    int64_t rank = get_int(e, "rank", 1, 0, MAX_RANKS - 1);
    c.nranks = (int32_t)get_int(e, "nranks", 1, 1, MAX_RANKS);
    c.proto = get_enum(e, "proto", weft_proto_from_name, "protocol");
    c.niter = (int32_t)get_int(e, "niter", 1, 0, INT32_MAX);
    c.group = member(e, "group", 1, 0) ? (int32_t)get_int(e, "group", 1, 1, 1 << 16) : 1;
    c.chunk_elems = get_int(e, "chunk_elems", 1, 0, INT64_MAX);
    c.slice_elems = get_int(e, "slice_elems", 1, 0, INT64_MAX);
    c.elem_bytes = (int32_t)get_int(e, "elem_bytes", 1, 1, 16);
    c.fifo_slots = (int32_t)get_int(e, "fifo_slots", 1, 0, INT32_MAX);
    c.ntbs = (int32_t)get_int(e, "ntbs", 1, 0, MAX_TBS);
    c.records = get_int(e, "records", 1, 0, INT64_MAX);
    c.dropped = get_int(e, "dropped", 1, 0, INT64_MAX);
    c.stopped = (int32_t)get_int(e, "stopped", 1, 0, MAX_TBS);
    c.clock_err_ns = get_int(e, "clock_err_ns", 1, -1, MAX_TIME_NS);
    if (e->bad) return;
    if (rank != c.rank) {
        err(r, e->line, "%s: \"args.rank\" is %" PRId64 " but \"pid\" is %d", e->what, rank,
            c.rank);
        return;
    }
    if (c.rank >= c.nranks) {
        err(r, e->line, "%s: rank %d is not below nranks %d", e->what, c.rank, c.nranks);
        return;
    }
    const char *name = get_str(e, "name", 0);
    if (strcmp(name, algo) != 0) {
        err(r, e->line, "%s: \"name\" and \"args.algorithm\" differ", e->what);
        return;
    }
    c.algo = weft_strdup(algo);
    c.line = e->line;
    c.file = -1;
    if (c.algo == NULL ||
        weft_grow((void **)&r->u.calls, &r->u.cap_calls, r->u.ncalls, sizeof c) != 0) {
        free(c.algo);
        err(r, e->line, "out of memory");
        return;
    }
    r->u.calls[r->u.ncalls++] = c;
}

static void read_step(reader *r, ev *e) {
    weft_trace_slice s;
    int32_t rank;
    memset(&s, 0, sizeof s);
    if (!read_span(r, e, 0, MAX_TBS - 1, &rank, &s.tb, &s.t0, &s.t1)) return;
    int64_t dur = s.t1 - s.t0;
    int64_t seq = get_int(e, "call", 1, 0, INT64_MAX);
    int64_t tb = get_int(e, "tb", 1, 0, MAX_TBS - 1);
    s.step = (int32_t)get_int(e, "step", 1, 0, INT32_MAX);
    s.xml_step = (int32_t)get_int(e, "xml_step", 1, -1, INT32_MAX);
    s.iter = (int32_t)get_int(e, "iter", 1, 0, INT32_MAX);
    s.type = get_enum(e, "type", weft_step_from_name, "step type");
    s.send = (int32_t)get_int(e, "send", 1, -1, MAX_RANKS - 1);
    s.recv = (int32_t)get_int(e, "recv", 1, -1, MAX_RANKS - 1);
    s.chan = (int32_t)get_int(e, "chan", 1, -1, INT32_MAX);
    s.srcbuf = get_enum(e, "src", buf_from_letter, "buffer");
    s.srcoff = (int32_t)get_int(e, "srcoff", 1, -1, INT32_MAX);
    s.dstbuf = get_enum(e, "dst", buf_from_letter, "buffer");
    s.dstoff = (int32_t)get_int(e, "dstoff", 1, -1, INT32_MAX);
    s.cnt = (int32_t)get_int(e, "cnt", 1, 0, INT32_MAX);
    s.nsrc = (int32_t)get_int(e, "nsrc", 1, 0, INT32_MAX);
    s.elem0 = get_int(e, "elem0", 1, 0, INT64_MAX);
    s.elems = get_int(e, "elems", 1, 0, INT64_MAX);
    s.bytes = get_int(e, "bytes", 1, 0, INT64_MAX);
    s.dep_ns = get_us(e, "dep_us", 1, 0);
    s.data_ns = get_us(e, "data_us", 1, 0);
    s.credit_ns = get_us(e, "credit_us", 1, 0);
    s.dep_tb = (int32_t)get_int(e, "dep_tb", 1, -1, MAX_TBS - 1);
    s.dep_want = get_int(e, "dep_want", 1, 0, INT64_MAX);
    s.post = get_int(e, "post", 1, -1, INT64_MAX);
    s.smsg = get_int(e, "smsg", 1, -1, INT64_MAX);
    s.rmsg = get_int(e, "rmsg", 1, -1, INT64_MAX);
    if (e->bad) return;
    if (s.srcbuf == 99) s.srcbuf = -1;
    if (s.dstbuf == 99) s.dstbuf = -1;
    if (tb != s.tb) {
        err(r, e->line, "%s: \"args.tb\" is %" PRId64 " but \"tid\" is %d", e->what, tb, s.tb);
        return;
    }
    if (s.dep_ns > dur || s.data_ns > dur - s.dep_ns || s.credit_ns > dur - s.dep_ns - s.data_ns) {
        err(r, e->line, "%s: the waits (dep, data, credit) add up to more than \"dur\"", e->what);
        return;
    }
    unsigned f = weft_step_flags((weft_step_type)s.type);
    if ((s.send >= 0) != ((f & WEFT_STEP_F_SEND) != 0) ||
        (s.recv >= 0) != ((f & WEFT_STEP_F_RECV) != 0)) {
        err(r, e->line, "%s: a \"%s\" step %s", e->what, weft_step_name((weft_step_type)s.type),
            (f & WEFT_STEP_F_SEND)   ? (f & WEFT_STEP_F_RECV ? "needs send and recv peers"
                                                             : "needs a send peer and no recv peer")
            : (f & WEFT_STEP_F_RECV) ? "needs a recv peer and no send peer"
                                     : "has no peers");
        return;
    }
    if ((s.smsg >= 0) != (s.send >= 0) || (s.rmsg >= 0) != (s.recv >= 0)) {
        err(r, e->line,
            "%s: \"args.smsg\"/\"args.rmsg\" must be set exactly for the messages "
            "the step sends/receives",
            e->what);
        return;
    }
    s.line = e->line;
    if (weft_grow((void **)&r->u.slices, &r->u.cap_slices, r->u.nslices, sizeof s) != 0 ||
        weft_grow((void **)&r->pend, &r->cap_pend, r->u.nslices, sizeof *r->pend) != 0) {
        err(r, e->line, "out of memory");
        return;
    }
    r->pend[r->u.nslices] = (pending){seq, rank};
    r->u.slices[r->u.nslices++] = s;
}

static void read_event(reader *r, const json_value *v) {
    if (v->type != JSON_OBJECT) {
        err(r, v->line, "traceEvents: an element is not an object");
        return;
    }
    ev e = {r, v, json_get(v, "args"), "event", v->line, 0};
    const json_value *ph = json_get(v, "ph");
    if (ph == NULL || ph->type != JSON_STRING) {
        err(r, v->line, "event: \"ph\" must be a string");
        return;
    }
    if (strcmp(ph->str, "M") == 0) {
        e.what = "metadata event";
        const char *name = get_str(&e, "name", 0);
        if (strcmp(name, "process_name") == 0 || strcmp(name, "thread_name") == 0 ||
            strcmp(name, "process_sort_index") == 0 || strcmp(name, "thread_sort_index") == 0) {
            get_int(&e, "pid", 0, 0, INT32_MAX);
            if (name[0] == 't') get_int(&e, "tid", 0, 0, INT32_MAX);
            if (e.args == NULL || e.args->type != JSON_OBJECT)
                err(r, e.line, "metadata event: \"args\" must be an object");
        }
        return;
    }
    if (strcmp(ph->str, "X") != 0) return;
    const json_value *cat = json_get(v, "cat");
    if (cat == NULL || cat->type != JSON_STRING) return;
    if (strcmp(cat->str, "weft.call") == 0) {
        e.what = "weft.call event";
        read_call(r, &e);
    } else if (strcmp(cat->str, "weft.step") == 0) {
        e.what = "weft.step event";
        read_step(r, &e);
    }
}

static void read_other(reader *r, const json_value *v) {
    if (v->type != JSON_OBJECT) {
        err(r, v->line, "\"otherData\" must be an object");
        return;
    }
    ev e = {r, v, NULL, "otherData", v->line, 0};
    const char *prod = get_str(&e, "producer", 0);
    if (e.bad) return;
    if (strcmp(prod, "weft") != 0) {
        err(r, v->line, "otherData: producer \"%s\" is not weft", prod);
        return;
    }
    int64_t ver = get_int(&e, "weft_trace_version", 0, 0, INT32_MAX);
    if (e.bad) return;
    if (ver != 1) {
        err(r, v->line, "weft trace version %" PRId64 " is not supported (this weft reads 1)", ver);
        return;
    }
    const char *base = get_str(&e, "time_base_ns", 0);
    if (e.bad) return;
    json_value tmp = {.type = JSON_NUMBER, .str = base, .len = strlen(base)};
    if (json_int64(&tmp, &r->base) != 0 || r->base < 0) {
        err(r, v->line, "otherData: \"time_base_ns\" must be a non-negative integer in a string");
        return;
    }
    r->have_other = 1;
}

/* The top level: an object; traceEvents streamed. */
static void parse_top(reader *r) {
    json_parser *jp = &r->jp;
    int have_events = 0, have_other = 0;
    if (json_peek(jp) != '{') {
        if (json_peek(jp) == -1 && !jp->failed)
            json_error(jp, 0, "no JSON in the file: not a trace");
        else
            json_expect(jp, '{', "'{' (a weft trace is a JSON object)");
        return;
    }
    jp->p++;
    if (json_peek(jp) == '}') {
        jp->p++;
    } else {
        for (;;) {
            json_reset(jp);
            if (json_peek(jp) != '"') {
                json_expect(jp, '"', "a member name (a string)");
                return;
            }
            const char *k = json_parse_string(jp);
            if (k == NULL || json_expect(jp, ':', "':' after a member name") != 0) return;
            int is_events = strcmp(k, "traceEvents") == 0, is_other = strcmp(k, "otherData") == 0;
            if ((is_events && have_events) || (is_other && have_other)) {
                json_error(jp, 0, "duplicate member \"%s\" in an object", k);
                return;
            }
            if (is_events) {
                have_events = 1;
                if (json_expect(jp, '[', "'[' (traceEvents is an array)") != 0) return;
                if (json_peek(jp) == ']') {
                    jp->p++;
                } else {
                    for (;;) {
                        json_reset(jp);
                        json_value *v = json_parse(jp);
                        if (v == NULL) return;
                        if (r->nerr < MAX_ERRORS) read_event(r, v);
                        int c = json_peek(jp);
                        if (c == ',') {
                            jp->p++;
                            if (json_peek(jp) == ']') {
                                json_error(jp, 0, "malformed JSON: trailing comma before ']'");
                                return;
                            }
                            continue;
                        }
                        if (json_expect(jp, ']', "',' or ']' after an element") != 0) return;
                        break;
                    }
                }
            } else {
                json_value *v = json_parse(jp);
                if (v == NULL) return;
                if (is_other) {
                    have_other = 1;
                    read_other(r, v);
                }
            }
            int c = json_peek(jp);
            if (c == ',') {
                jp->p++;
                continue;
            }
            if (json_expect(jp, '}', "',' or '}' after a member") != 0) return;
            break;
        }
    }
    if (json_peek(jp) != -1) {
        json_error(jp, 0, "malformed JSON: text after the end of the trace object");
        return;
    }
    if (!have_other)
        err(r, 1, "not a weft trace: no \"otherData\" with producer \"weft\"");
    else if (!have_events)
        err(r, 1, "not a trace: no \"traceEvents\"");
}

/* ---- linking and merging -------------------------------------------------------------------- */
typedef struct call_ix {
    int64_t seq;
    int32_t rank;
    size_t i;
} call_ix;

static int cmp_ix(const void *pa, const void *pb) {
    const call_ix *a = pa, *b = pb;
    return weft_cmp_keys((int64_t[]){a->rank, a->seq, a->i}, (int64_t[]){b->rank, b->seq, b->i}, 3);
}

static const call_ix *find_ix(const call_ix *ix, size_t n, int32_t rank, int64_t seq) {
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (ix[mid].rank < rank || (ix[mid].rank == rank && ix[mid].seq < seq))
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < n && ix[lo].rank == rank && ix[lo].seq == seq ? &ix[lo] : NULL;
}

typedef struct step_key {
    int32_t call, tb, iter, step;
    size_t i;
} step_key;

static int cmp_step_key(const void *pa, const void *pb) {
    const step_key *a = pa, *b = pb;
    return weft_cmp_keys((int64_t[]){a->call, a->tb, a->iter, a->step, a->i},
                         (int64_t[]){b->call, b->tb, b->iter, b->step, b->i}, 5);
}

/* Resolves every step slice to its call and checks them against it. */
static weft_result link(reader *r) {
    weft_result res = WEFT_OK;
    weft_trace *u = &r->u;
    call_ix *ix = malloc((u->ncalls ? u->ncalls : 1) * sizeof *ix);
    int64_t *count = calloc(u->ncalls ? u->ncalls : 1, sizeof *count);
    step_key *sk = malloc((u->nslices ? u->nslices : 1) * sizeof *sk);
    WEFT_CHECK_ALLOC(ix);
    WEFT_CHECK_ALLOC(count);
    WEFT_CHECK_ALLOC(sk);
    for (size_t i = 0; i < u->ncalls; i++)
        ix[i] = (call_ix){u->calls[i].seq, u->calls[i].rank, i};
    qsort(ix, u->ncalls, sizeof *ix, cmp_ix);
    for (size_t i = 1; i < u->ncalls; i++)
        if (ix[i].rank == ix[i - 1].rank && ix[i].seq == ix[i - 1].seq)
            err(r, u->calls[ix[i].i].line, "call %" PRId64 " of rank %d appears twice (line %d)",
                ix[i].seq, ix[i].rank, u->calls[ix[i - 1].i].line);
    for (size_t i = 0; i < u->nslices && r->nerr < MAX_ERRORS; i++) {
        weft_trace_slice *s = &u->slices[i];
        const call_ix *c = find_ix(ix, u->ncalls, r->pend[i].rank, r->pend[i].seq);
        if (c == NULL) {
            err(r, s->line, "weft.step event: no weft.call event for call %" PRId64 " of rank %d",
                r->pend[i].seq, r->pend[i].rank);
            continue;
        }
        const weft_trace_call *call = &u->calls[c->i];
        s->call = (int32_t)c->i;
        count[c->i]++;
        const char *what = "weft.step event";
        if (s->tb >= call->ntbs)
            err(r, s->line, "%s: tb %d, but call %" PRId64 " of rank %d has %d tb%s", what, s->tb,
                call->seq, call->rank, call->ntbs, call->ntbs == 1 ? "" : "s");
        else if (s->iter >= call->niter)
            err(r, s->line, "%s: iteration %d, but call %" PRId64 " has %d iteration%s", what,
                s->iter, call->seq, call->niter, call->niter == 1 ? "" : "s");
        else if (s->send >= call->nranks || s->recv >= call->nranks)
            err(r, s->line, "%s: peer %d is not a rank of call %" PRId64 " (%d ranks)", what,
                s->send >= call->nranks ? s->send : s->recv, call->seq, call->nranks);
        else if (s->dep_tb >= call->ntbs)
            err(r, s->line, "%s: dep_tb %d, but call %" PRId64 " of rank %d has %d tb%s", what,
                s->dep_tb, call->seq, call->rank, call->ntbs, call->ntbs == 1 ? "" : "s");
    }
    if (r->nerr) goto done;
    for (size_t i = 0; i < u->ncalls; i++)
        if (count[i] != u->calls[i].records)
            err(r, u->calls[i].line,
                "weft.call event: call %" PRId64 " of rank %d declares %" PRId64
                " record%s but the file has %" PRId64 " step event%s for it",
                u->calls[i].seq, u->calls[i].rank, u->calls[i].records,
                u->calls[i].records == 1 ? "" : "s", count[i], count[i] == 1 ? "" : "s");
    for (size_t i = 0; i < u->nslices; i++)
        sk[i] =
            (step_key){u->slices[i].call, u->slices[i].tb, u->slices[i].iter, u->slices[i].step, i};
    qsort(sk, u->nslices, sizeof *sk, cmp_step_key);
    for (size_t i = 1; i < u->nslices; i++)
        if (sk[i].call == sk[i - 1].call && sk[i].tb == sk[i - 1].tb &&
            sk[i].iter == sk[i - 1].iter && sk[i].step == sk[i - 1].step)
            err(r, u->slices[sk[i].i].line,
                "weft.step event: step %d iteration %d of tb %d is recorded twice (line %d)",
                sk[i].step, sk[i].iter, sk[i].tb, u->slices[sk[i - 1].i].line);
done:
    if (r->nerr) res = WEFT_ERR_INPUT;
fail:
    free(ix);
    free(count);
    free(sk);
    return res;
}

static void shift(weft_trace *t, int64_t by) {
    for (size_t i = 0; i < t->ncalls; i++)
        t->calls[i].t0 += by, t->calls[i].t1 += by;
    for (size_t i = 0; i < t->nslices; i++)
        t->slices[i].t0 += by, t->slices[i].t1 += by;
}

/* Moves u into t (rebased to the earlier time base). */
static weft_result merge(reader *r, weft_trace *t) {
    weft_result res = WEFT_OK;
    weft_trace *u = &r->u;
    call_ix *ix = NULL;
    char *name = NULL;
    if (t->nfiles > 0 && t->ncalls > 0) {
        ix = malloc(t->ncalls * sizeof *ix);
        WEFT_CHECK_ALLOC(ix);
        for (size_t i = 0; i < t->ncalls; i++)
            ix[i] = (call_ix){t->calls[i].seq, t->calls[i].rank, i};
        qsort(ix, t->ncalls, sizeof *ix, cmp_ix);
        for (size_t i = 0; i < u->ncalls; i++) {
            const call_ix *c = find_ix(ix, t->ncalls, u->calls[i].rank, u->calls[i].seq);
            if (c) {
                const weft_trace_call *o = &t->calls[c->i];
                err(r, u->calls[i].line, "call %" PRId64 " of rank %d is also in %s (line %d)",
                    o->seq, o->rank, o->file >= 0 ? t->files[o->file] : "the trace", o->line);
            }
        }
        if (r->nerr) WEFT_FAIL(WEFT_ERR_INPUT);
    }
    int64_t base = t->nfiles == 0 ? r->base : t->time_base_ns;
    if (r->base < base) base = r->base;
    if ((t->nfiles > 0 && t->time_base_ns - base > MAX_TIME_NS) || r->base - base > MAX_TIME_NS) {
        err(r, 1, "time base %" PRId64 " ns is too far from the other files'", r->base);
        WEFT_FAIL(WEFT_ERR_INPUT);
    }
    name = weft_strdup(r->file);
    WEFT_CHECK_ALLOC(name);
    char **nf = realloc(t->files, (t->nfiles + 1) * sizeof *nf);
    WEFT_CHECK_ALLOC(nf);
    t->files = nf;
    /* Capacity first, so that nothing below can fail half-way. */
    while (t->cap_calls < t->ncalls + u->ncalls)
        if (weft_grow((void **)&t->calls, &t->cap_calls, t->cap_calls, sizeof *t->calls) != 0)
            WEFT_FAIL(WEFT_ERR_NOMEM);
    while (t->cap_slices < t->nslices + u->nslices)
        if (weft_grow((void **)&t->slices, &t->cap_slices, t->cap_slices, sizeof *t->slices) != 0)
            WEFT_FAIL(WEFT_ERR_NOMEM);
    if (t->nfiles > 0) shift(t, t->time_base_ns - base);
    shift(u, r->base - base);
    t->time_base_ns = base;
    int32_t fi = (int32_t)t->nfiles;
    t->files[t->nfiles++] = name;
    name = NULL;
    int32_t off = (int32_t)t->ncalls;
    for (size_t i = 0; i < u->ncalls; i++) {
        t->calls[t->ncalls] = u->calls[i];
        t->calls[t->ncalls++].file = fi;
    }
    for (size_t i = 0; i < u->nslices; i++) {
        t->slices[t->nslices] = u->slices[i];
        t->slices[t->nslices++].call += off;
    }
    u->ncalls = 0; /* the algorithm names now belong to t */
    u->nslices = 0;
fail:
    free(ix);
    free(name);
    return res;
}

weft_result weft_trace_read_memory(weft_trace *t, const char *data, size_t len, const char *name,
                                   weft_diag *d) {
    weft_result res = WEFT_OK;
    reader r;
    memset(&r, 0, sizeof r);
    r.file = name ? name : "<memory>";
    r.d = d;
    weft_trace_init(&r.u, 0);
    json_init(&r.jp, r.file, data, len, d);
    parse_top(&r);
    json_free(&r.jp);
    if (r.jp.failed || r.nerr) WEFT_FAIL(WEFT_ERR_INPUT);
    WEFT_CHECK(link(&r));
    WEFT_CHECK(merge(&r, t));
    WEFT_CHECK(weft_trace_sort(t));
fail:
    weft_trace_free(&r.u);
    free(r.pend);
    return res;
}

weft_result weft_trace_read_file(weft_trace *t, const char *path, weft_diag *d) {
    char *data = NULL;
    size_t len = 0;
    weft_result res =
        weft_read_file_max(path, WEFT_READ_MAX_BYTES, WEFT_READ_STDIN, &data, &len, d);
    if (res != WEFT_OK) return res;
    res = weft_trace_read_memory(t, data, len, path, d);
    free(data);
    return res;
}
