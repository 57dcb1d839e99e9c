/* trace_write.c — writes a trace model as Chrome trace event JSON (object format), one event per
 * line: a process per rank, a thread per thread block, a complete ("X") slice per step execution
 * and one per call on a "calls" track. Shaped for Perfetto's streaming importer and
 * chrome://tracing: displayTimeUnit first, then otherData, then traceEvents last; no arrays
 * inside events, no \u escapes, ASCII only. */
#include "trace_internal.h"
#include "weft_ir.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

/* The thread id of the calls track (above any tb id a schedule can have). */
#define KERNEL_TID 1000000

struct weft_trace_writer {
    FILE *f;
    weft_out *owned; /* the file weft_trace_writer_open made; NULL when writing the caller's */
    int nevents;
    uint64_t *named; /* (rank << 32 | tid) keys already given names, sorted */
    size_t nnamed, cap_named;
    weft_result err;
};

/* ---- formatting ----------------------------------------------------------------------------- */
/* ns as microseconds with exactly three decimals (exact, any sign). */
static void put_us(FILE *f, int64_t ns) {
    uint64_t a = ns < 0 ? (uint64_t)0 - (uint64_t)ns : (uint64_t)ns;
    fprintf(f, "%s%" PRIu64 ".%03u", ns < 0 ? "-" : "", a / 1000, (unsigned)(a % 1000));
}

/* A JSON string of printable ASCII: quotes and backslashes escaped, anything else becomes '?'
 * (Perfetto's importer rejects control characters and does not decode \u escapes). */
static void put_str(FILE *f, const char *s) {
    weft_fput_quoted(f, s, '?', 1);
}

static const char *buf_letter(int32_t b) {
    switch ((weft_buf)b) {
    case WEFT_BUF_INPUT: return "i";
    case WEFT_BUF_OUTPUT: return "o";
    case WEFT_BUF_SCRATCH: return "s";
    case WEFT_BUF_COUNT: break;
    }
    return "-"; /* none (-1: the step does not use that side) */
}

static const char *name_or(const char *n) {
    return n ? n : "?";
}

static void begin_event(weft_trace_writer *w) {
    fputs(w->nevents++ ? ",\n" : "\n", w->f);
}

/* ---- names of ranks and thread blocks ------------------------------------------------------- */
static int named_find(const weft_trace_writer *w, uint64_t key, size_t *pos) {
    size_t lo = 0, hi = w->nnamed;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (w->named[mid] < key)
            lo = mid + 1;
        else
            hi = mid;
    }
    *pos = lo;
    return lo < w->nnamed && w->named[lo] == key;
}

static weft_result named_add(weft_trace_writer *w, uint64_t key) {
    size_t pos;
    if (named_find(w, key, &pos)) return WEFT_OK;
    if (weft_grow((void **)&w->named, &w->cap_named, w->nnamed, sizeof *w->named) != 0)
        return WEFT_ERR_NOMEM;
    memmove(&w->named[pos + 1], &w->named[pos], (w->nnamed - pos) * sizeof *w->named);
    w->named[pos] = key;
    w->nnamed++;
    return WEFT_OK;
}

static uint64_t tkey(int32_t rank, int64_t tid) {
    return (uint64_t)(uint32_t)rank << 32 | (uint64_t)(uint32_t)tid;
}

typedef struct tb_role {
    uint64_t key;
    size_t ord; /* position in the model: ties resolve in model order */
    int32_t send, recv, chan;
} tb_role;

static int cmp_role(const void *pa, const void *pb) {
    const tb_role *a = pa, *b = pb;
    return weft_cmp_keys((int64_t[]){a->key, a->ord}, (int64_t[]){b->key, b->ord}, 2);
}

static void meta(weft_trace_writer *w, int32_t pid, int64_t tid, const char *what, const char *sv,
                 int64_t iv) {
    begin_event(w);
    fprintf(w->f, "{\"ph\":\"M\",\"pid\":%d,\"tid\":%" PRId64 ",\"name\":\"%s\",\"args\":{", pid,
            tid, what);
    if (sv) {
        fputs("\"name\":", w->f);
        put_str(w->f, sv);
    } else {
        fprintf(w->f, "\"sort_index\":%" PRId64, iv);
    }
    fputs("}}", w->f);
}

/* Names every rank and tb of t not named before, in (rank, tb) order: "rank R" and
 * "tb T (send S, recv Q, ch C)" from the peers its steps use. */
static weft_result name_new(weft_trace_writer *w, const weft_trace *t) {
    weft_result res = WEFT_OK;
    size_t n = t->nslices, cap = n;
    for (size_t i = 0; i < t->ncalls; i++)
        cap += (size_t)(t->calls[i].ntbs > 0 ? t->calls[i].ntbs : 0) + 1;
    tb_role *r = malloc((cap ? cap : 1) * sizeof *r);
    WEFT_CHECK_ALLOC(r);
    size_t m = 0;
    for (size_t i = 0; i < t->nslices; i++) {
        const weft_trace_slice *s = &t->slices[i];
        r[m] = (tb_role){tkey(t->calls[s->call].rank, s->tb), m, s->send, s->recv,
                         s->send >= 0 || s->recv >= 0 ? s->chan : -1};
        m++;
    }
    for (size_t i = 0; i < t->ncalls; i++) {
        const weft_trace_call *c = &t->calls[i];
        r[m] = (tb_role){tkey(c->rank, KERNEL_TID), m, -1, -1, -1};
        m++;
        for (int32_t b = 0; b < c->ntbs; b++, m++)
            r[m] = (tb_role){tkey(c->rank, b), m, -1, -1, -1};
    }
    qsort(r, m, sizeof *r, cmp_role);
    for (size_t i = 0; i < m;) {
        size_t j = i;
        int32_t send = -1, recv = -1, chan = -1;
        for (; j < m && r[j].key == r[i].key; j++) {
            if (send < 0 && r[j].send >= 0) send = r[j].send;
            if (recv < 0 && r[j].recv >= 0) recv = r[j].recv;
            if (r[j].chan >= 0 && (chan < 0 || r[j].chan < chan)) chan = r[j].chan;
        }
        int32_t rank = (int32_t)(r[i].key >> 32);
        int64_t tid = (int64_t)(uint32_t)r[i].key;
        size_t pos;
        if (!named_find(w, tkey(rank, -1), &pos)) {
            char nm[48];
            snprintf(nm, sizeof nm, "rank %d", rank);
            meta(w, rank, 0, "process_name", nm, 0);
            meta(w, rank, 0, "process_sort_index", NULL, rank);
            WEFT_CHECK(named_add(w, tkey(rank, -1)));
        }
        if (!named_find(w, r[i].key, &pos)) {
            char nm[96];
            if (tid == KERNEL_TID)
                snprintf(nm, sizeof nm, "calls");
            else if (send >= 0 && recv >= 0)
                snprintf(nm, sizeof nm, "tb %" PRId64 " (send %d, recv %d, ch %d)", tid, send, recv,
                         chan);
            else if (send >= 0)
                snprintf(nm, sizeof nm, "tb %" PRId64 " (send %d, ch %d)", tid, send, chan);
            else if (recv >= 0)
                snprintf(nm, sizeof nm, "tb %" PRId64 " (recv %d, ch %d)", tid, recv, chan);
            else
                snprintf(nm, sizeof nm, "tb %" PRId64, tid);
            meta(w, rank, tid, "thread_name", nm, 0);
            meta(w, rank, tid, "thread_sort_index", NULL, tid == KERNEL_TID ? -1 : tid);
            WEFT_CHECK(named_add(w, r[i].key));
        }
        i = j;
    }
fail:
    free(r);
    return res;
}

/* ---- events --------------------------------------------------------------------------------- */
static void put_call(weft_trace_writer *w, const weft_trace_call *c) {
    FILE *f = w->f;
    begin_event(w);
    fputs("{\"ph\":\"X\",\"cat\":\"weft.call\",\"name\":", f);
    put_str(f, c->algo ? c->algo : "?");
    fprintf(f, ",\"pid\":%d,\"tid\":%d,\"ts\":", c->rank, KERNEL_TID);
    put_us(f, c->t0);
    fputs(",\"dur\":", f);
    put_us(f, c->t1 - c->t0);
    fprintf(f, ",\"args\":{\"call\":%" PRId64 ",\"algorithm\":", c->seq);
    put_str(f, c->algo ? c->algo : "?");
    fprintf(
        f,
        ",\"collective\":\"%s\",\"count\":%" PRId64
        ",\"type\":\"%s\",\"op\":\"%s\",\"inplace\":%d,\"rank\":%d,\"nranks\":%d,"
        "\"proto\":\"%s\",\"niter\":%d,\"chunk_elems\":%" PRId64 ",\"slice_elems\":%" PRId64
        ",\"elem_bytes\":%d,\"fifo_slots\":%d,\"ntbs\":%d,\"records\":%" PRId64
        ",\"dropped\":%" PRId64 ",\"stopped\":%d,\"clock_err_ns\":%" PRId64,
        name_or((unsigned)c->coll < WEFT_COLL_COUNT ? weft_coll_name((weft_coll)c->coll) : NULL),
        c->count, name_or(weft_dtype_name((weft_dtype)c->dtype)),
        name_or(weft_redop_name((weft_redop)c->op)), c->inplace, c->rank, c->nranks,
        name_or((unsigned)c->proto < WEFT_PROTO_COUNT ? weft_proto_name((weft_proto)c->proto)
                                                      : NULL),
        c->niter, c->chunk_elems, c->slice_elems, c->elem_bytes, c->fifo_slots, c->ntbs, c->records,
        c->dropped, c->stopped, c->clock_err_ns);
    /* omitted when 1, as in traces from before groups existed */
    if (c->group > 1) fprintf(f, ",\"group\":%d", c->group);
    fputs("}}", f);
}

static void put_slice(weft_trace_writer *w, const weft_trace *t, const weft_trace_slice *s) {
    FILE *f = w->f;
    const weft_trace_call *c = &t->calls[s->call];
    const char *ty = weft_step_name((weft_step_type)s->type);
    begin_event(w);
    fprintf(f, "{\"ph\":\"X\",\"cat\":\"weft.step\",\"name\":\"%s", ty);
    if (s->recv >= 0) fprintf(f, " <%d", s->recv);
    if (s->send >= 0) fprintf(f, " >%d", s->send);
    fprintf(f, "\",\"pid\":%d,\"tid\":%d,\"ts\":", c->rank, s->tb);
    put_us(f, s->t0);
    fputs(",\"dur\":", f);
    put_us(f, s->t1 - s->t0);
    fprintf(f,
            ",\"args\":{\"call\":%" PRId64 ",\"tb\":%d,\"step\":%d,\"xml_step\":%d,\"iter\":%d,"
            "\"type\":\"%s\",\"send\":%d,\"recv\":%d,\"chan\":%d,\"src\":\"%s\",\"srcoff\":%d,"
            "\"dst\":\"%s\",\"dstoff\":%d,\"cnt\":%d,\"nsrc\":%d,\"elem0\":%" PRId64
            ",\"elems\":%" PRId64 ",\"bytes\":%" PRId64 ",\"dep_us\":",
            c->seq, s->tb, s->step, s->xml_step, s->iter, ty, s->send, s->recv, s->chan,
            buf_letter(s->srcbuf), s->srcoff, buf_letter(s->dstbuf), s->dstoff, s->cnt, s->nsrc,
            s->elem0, s->elems, s->bytes);
    put_us(f, s->dep_ns);
    fputs(",\"data_us\":", f);
    put_us(f, s->data_ns);
    fputs(",\"credit_us\":", f);
    put_us(f, s->credit_ns);
    fputs(",\"move_us\":", f);
    put_us(f, (s->t1 - s->t0) - s->dep_ns - s->data_ns - s->credit_ns);
    fprintf(f,
            ",\"dep_tb\":%d,\"dep_want\":%" PRId64 ",\"post\":%" PRId64 ",\"smsg\":%" PRId64
            ",\"rmsg\":%" PRId64 "}}",
            s->dep_tb, s->dep_want, s->post, s->smsg, s->rmsg);
}

/* ---- the writer ----------------------------------------------------------------------------- */
static weft_result writer_start(FILE *f, weft_out *owned, int64_t base, weft_trace_writer **out) {
    weft_trace_writer *w = calloc(1, sizeof *w);
    if (w == NULL) return WEFT_ERR_NOMEM;
    w->f = f;
    w->owned = owned;
    fprintf(f,
            "{\"displayTimeUnit\":\"ns\",\"otherData\":{\"producer\":\"weft\","
            "\"weft_trace_version\":1,\"time_base_ns\":\"%" PRId64 "\",\"clock\":"
            "\"CLOCK_REALTIME\"},\n\"traceEvents\":[",
            base);
    *out = w;
    return WEFT_OK;
}

weft_result weft_trace_writer_open(const char *path, int64_t time_base_ns, weft_trace_writer **out,
                                   weft_diag *d) {
    *out = NULL;
    /* as every weft output: the file appears whole when the writer closes */
    weft_out *o = NULL;
    weft_result res = weft_out_open(path, 0, &o, d);
    if (res != WEFT_OK) return res;
    res = writer_start(weft_out_file(o), o, time_base_ns, out);
    if (res != WEFT_OK) weft_out_abort(o);
    return res;
}

weft_result weft_trace_writer_append(weft_trace_writer *w, const weft_trace *t) {
    weft_result res = WEFT_OK;
    size_t *first = NULL, *order = NULL;
    WEFT_CHECK(name_new(w, t));
    /* Each call, then its slices in model order (a counting sort by call). */
    first = calloc(t->ncalls + 1, sizeof *first);
    order = malloc((t->nslices ? t->nslices : 1) * sizeof *order);
    WEFT_CHECK_ALLOC(first);
    WEFT_CHECK_ALLOC(order);
    for (size_t i = 0; i < t->nslices; i++)
        first[t->slices[i].call + 1]++;
    for (size_t c = 0; c < t->ncalls; c++)
        first[c + 1] += first[c];
    for (size_t i = 0; i < t->nslices; i++)
        order[first[t->slices[i].call]++] = i;
    for (size_t c = t->ncalls; c > 0; c--)
        first[c] = first[c - 1];
    first[0] = 0;
    for (size_t c = 0; c < t->ncalls; c++) {
        put_call(w, &t->calls[c]);
        for (size_t k = first[c]; k < first[c + 1]; k++)
            put_slice(w, t, &t->slices[order[k]]);
    }
    if (ferror(w->f)) WEFT_FAIL(WEFT_ERR_SYSTEM);
fail:
    free(first);
    free(order);
    if (res != WEFT_OK) w->err = res;
    return res;
}

weft_result weft_trace_writer_close(weft_trace_writer *w) {
    if (w == NULL) return WEFT_OK;
    weft_result res = w->err;
    fputs("\n]}\n", w->f);
    if (w->owned) {
        if (weft_out_close(w->owned, NULL) != WEFT_OK) res = WEFT_ERR_SYSTEM;
    } else if (fflush(w->f) != 0 || ferror(w->f)) {
        res = WEFT_ERR_SYSTEM;
    }
    free(w->named);
    free(w);
    return res;
}

weft_result weft_trace_write(const weft_trace *t, FILE *out) {
    weft_trace_writer *w = NULL;
    weft_result res = writer_start(out, NULL, t->time_base_ns, &w);
    if (res != WEFT_OK) return res;
    res = weft_trace_writer_append(w, t);
    weft_result r2 = weft_trace_writer_close(w);
    return res != WEFT_OK ? res : r2;
}
