/* exec.c — the CPU reference executor: runs a schedule over host buffers for every rank with
 * real data under a deterministic scheduler and compares the result with a naive reference
 * collective. */
#include "stepgraph_internal.h"
#include "weft_elemops.h"

#include <stdlib.h>
#include <string.h>

void weft_exec_opts_init(weft_exec_opts *o) {
    memset(o, 0, sizeof *o);
    o->count = 1024;
    o->dtype = WEFT_DTYPE_FLOAT;
    o->op = WEFT_OP_SUM;
    o->seed = 1;
    o->max_reports = 8;
}

typedef struct rbufs {
    char *in, *out, *scr; /* NULL where the rank has no such buffer */
    char *own_a, *own_b;  /* what was allocated */
    int64_t in_elems, out_elems;
} rbufs;

typedef struct ex {
    const weft_sg *g;
    const weft_algo *a;
    const weft_exec_opts *o;
    int32_t N, k;
    int64_t count, C;
    size_t es;
    rbufs *rb;
    char **payload;                /* per send step: what it sent, until received */
    char *tv, *ts;                 /* per step: the values, and a loaded operand */
    int32_t sid, rank, match, cnt; /* the step being run */
} ex;

/* ---- data ------------------------------------------------------------------------------ */
static uint64_t mix(uint64_t x) {
    x += 0x9E3779B97F4A7C15ull;
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
    return x ^ (x >> 31);
}

/* `case NOT_FLOAT:` is the case labels of the types the table (WEFT_DTYPES) does not mark
 * floating point, and of WEFT_DTYPE_COUNT: the float conversions below are never asked for
 * these. Taken from the table rather than listed, and no default:, so that a new
 * floating-point type without a conversion is a -Wswitch warning. */
#define NOT_FLOAT_0(id) WEFT_DTYPE_##id : case
#define NOT_FLOAT_1(id)
#define NOT_FLOAT_(id, n, b, v, f) NOT_FLOAT_##f(id)
#define NOT_FLOAT                  WEFT_DTYPES(NOT_FLOAT_) WEFT_DTYPE_COUNT

static void put_float(weft_dtype t, double v, void *out) {
    switch (t) {
    case WEFT_DTYPE_HALF: {
        uint16_t h = weft_float_to_half((float)v);
        memcpy(out, &h, 2);
        break;
    }
    case WEFT_DTYPE_BFLOAT16: {
        uint16_t h = weft_float_to_bf16((float)v);
        memcpy(out, &h, 2);
        break;
    }
    case WEFT_DTYPE_FLOAT: {
        float f = (float)v;
        memcpy(out, &f, 4);
        break;
    }
    case WEFT_DTYPE_DOUBLE: memcpy(out, &v, 8); break;
    case NOT_FLOAT: break; /* never asked */
    }
}

static double get_float(weft_dtype t, const void *p) {
    uint16_t h;
    float f;
    double v;
    switch (t) {
    case WEFT_DTYPE_HALF: memcpy(&h, p, 2); return weft_half_to_float(h);
    case WEFT_DTYPE_BFLOAT16: memcpy(&h, p, 2); return weft_bf16_to_float(h);
    case WEFT_DTYPE_FLOAT: memcpy(&f, p, 4); return f;
    case WEFT_DTYPE_DOUBLE: memcpy(&v, p, 8); return v;
    case NOT_FLOAT: break; /* never asked */
    }
    return 0.0;
}

/* Input element e of rank r. Integers are random bits (wrapping arithmetic is associative, so
 * any order of combining gives the reference's bits). Floating-point values are small
 * integers, chosen so that every partial result of the reduction is exact in the type:
 * then the schedule's order of combining cannot change a bit either. */
static void gen_input(const ex *x, int32_t r, int64_t e, void *out) {
    uint64_t h = mix(x->o->seed * 0x100000001B3ull ^ mix(((uint64_t)r << 40) ^ (uint64_t)e));
    weft_dtype t = x->o->dtype;
    if (!weft_dtype_is_float(t)) {
        memcpy(out, &h, x->es);
        return;
    }
    double exact = t == WEFT_DTYPE_HALF       ? 2048.0
                   : t == WEFT_DTYPE_BFLOAT16 ? 256.0
                   : t == WEFT_DTYPE_FLOAT    ? 16777216.0
                                              : 9007199254740992.0;
    double v;
    switch (x->o->op) {
    case WEFT_OP_PROD: {
        /* +-1, and +-2 from one rank per element: every partial product is +-1 or +-2 */
        int32_t special = (int32_t)(mix(x->o->seed ^ (uint64_t)e) % (uint64_t)x->N);
        v = (h & 1) ? -1.0 : 1.0;
        if (r == special) v *= 2.0;
        put_float(t, v, out);
        return;
    }
    case WEFT_OP_MIN:
    case WEFT_OP_MAX: {
        int64_t amp = (int64_t)(exact < 2000 ? exact - 1 : 1000);
        v = (double)((int64_t)(h % (uint64_t)(2 * amp + 1)) - amp);
        put_float(t, v, out);
        return;
    }
    case WEFT_OP_SUM:
    case WEFT_OP_AVG:
    case WEFT_OP_COUNT: break;
    }
    /* sum and avg (the sum, divided after), and an op out of range alike */
    int64_t amp = (int64_t)(exact / x->N);
    if (amp > 8) amp = 8;
    if (amp < 1) amp = 1;
    v = (double)((int64_t)(h % (uint64_t)(2 * amp + 1)) - amp);
    put_float(t, v, out);
}

/* What output and scratch memory holds before the call: values no input produces, so that a
 * chunk a schedule forgets to fill, or reduces into, shows. */
static void gen_poison(const ex *x, int32_t r, int64_t e, int which, void *out) {
    uint64_t h =
        mix(~x->o->seed ^ mix(((uint64_t)r << 40) ^ ((uint64_t)which << 36) ^ (uint64_t)e));
    weft_dtype t = x->o->dtype;
    if (!weft_dtype_is_float(t)) {
        memcpy(out, &h, x->es);
        return;
    }
    double v = 3000.0 + (double)(h % 1000);
    put_float(t, (h >> 20) & 1 ? -v : v, out);
}

static int elem_equal(weft_dtype t, const void *a, const void *b) {
    if (!weft_dtype_is_float(t)) return memcmp(a, b, (size_t)weft_dtype_size(t)) == 0;
    double x = get_float(t, a), y = get_float(t, b);
    return x == y || (x != x && y != y);
}

static void format_elem(weft_dtype t, const void *p, char *buf, size_t len) {
    switch (t) {
    case WEFT_DTYPE_INT8: snprintf(buf, len, "%d", *(const int8_t *)p); break;
    case WEFT_DTYPE_UINT8: snprintf(buf, len, "%u", *(const uint8_t *)p); break;
    case WEFT_DTYPE_INT32: {
        int32_t v;
        memcpy(&v, p, 4);
        snprintf(buf, len, "%d", v);
        break;
    }
    case WEFT_DTYPE_UINT32: {
        uint32_t v;
        memcpy(&v, p, 4);
        snprintf(buf, len, "%u", v);
        break;
    }
    case WEFT_DTYPE_INT64: {
        int64_t v;
        memcpy(&v, p, 8);
        snprintf(buf, len, "%lld", (long long)v);
        break;
    }
    case WEFT_DTYPE_UINT64: {
        uint64_t v;
        memcpy(&v, p, 8);
        snprintf(buf, len, "%llu", (unsigned long long)v);
        break;
    }
    case WEFT_DTYPE_HALF:
    case WEFT_DTYPE_FLOAT:
    case WEFT_DTYPE_DOUBLE:
    case WEFT_DTYPE_BFLOAT16: snprintf(buf, len, "%.9g", get_float(t, p)); break;
    case WEFT_DTYPE_COUNT: snprintf(buf, len, "?"); break; /* not a data type */
    }
}

/* ---- memory ---------------------------------------------------------------------------- */
static char *chunk_at(const ex *x, int32_t r, weft_buf b, int32_t c, int64_t *valid) {
    const rbufs *rb = &x->rb[r];
    if (b == WEFT_BUF_SCRATCH) {
        *valid = x->C;
        return rb->scr + (size_t)((int64_t)c * x->C) * x->es;
    }
    *valid = weft_chunk_valid(x->count, x->k, x->C, c);
    char *base = b == WEFT_BUF_INPUT ? rb->in : rb->out;
    return base + (size_t)weft_chunk_start(x->count, x->k, x->C, c) * x->es;
}

/* Loads a chunk slot: its valid elements from memory, zeros for the rest (the padding of a
 * short or empty trailing chunk, computed on and never stored). */
static void load_slot(const ex *x, int32_t r, weft_buf b, int32_t c, char *dst) {
    int64_t valid;
    const char *p = chunk_at(x, r, b, c, &valid);
    if (valid > 0) memcpy(dst, p, (size_t)valid * x->es);
    if (valid < x->C) memset(dst + (size_t)valid * x->es, 0, (size_t)(x->C - valid) * x->es);
}

static void store_slot(const ex *x, int32_t r, weft_buf b, int32_t c, const char *src) {
    int64_t valid;
    char *p = chunk_at(x, r, b, c, &valid);
    if (valid > 0) memcpy(p, src, (size_t)valid * x->es);
}

/* ---- one step: weft_step_eval over data ------------------------------------------------ *
 * Registers 0..cnt-1 are the slots of x->tv, register cnt is x->ts. */
static char *reg(ex *x, int32_t i) {
    return i < x->cnt ? x->tv + (size_t)i * (size_t)x->C * x->es : x->ts;
}
static int ex_take(void *user, int32_t i) {
    ex *x = user;
    size_t slot = (size_t)x->C * x->es;
    memcpy(reg(x, i), x->payload[x->match] + (size_t)i * slot, slot);
    return 0;
}
static int ex_load(void *user, int32_t i, weft_buf b, int32_t c) {
    ex *x = user;
    load_slot(x, x->rank, b, c, reg(x, i));
    return 0;
}
static int ex_reduce(void *user, int32_t i, int32_t j) {
    ex *x = user;
    weft_elem_reduce(x->o->dtype, x->o->op, reg(x, i), reg(x, i), reg(x, j), x->C);
    return 0;
}
static int ex_store(void *user, int32_t i, weft_buf b, int32_t c) {
    ex *x = user;
    store_slot(x, x->rank, b, c, reg(x, i));
    return 0;
}
static int ex_send(void *user, int32_t cnt) {
    ex *x = user;
    size_t bytes = (size_t)cnt * (size_t)x->C * x->es;
    char *m = malloc(bytes + 1);
    if (m == NULL) return WEFT_ERR_NOMEM;
    memcpy(m, x->tv, bytes);
    x->payload[x->sid] = m;
    return 0;
}
static const weft_step_algebra ex_algebra = {ex_take, ex_load, ex_reduce, ex_store, ex_send};

static int exec_step(void *user, int32_t sid) {
    ex *x = user;
    const weft_sg_step *gs = &x->g->steps[sid];
    const weft_step *st = weft_sg_ir_step(x->g, sid);
    x->sid = sid, x->rank = gs->rank, x->match = gs->match, x->cnt = st->cnt;
    int rc = weft_step_eval(&ex_algebra, x, st->type, st->srcbuf, st->srcoff, st->dstbuf,
                            st->dstoff, st->cnt);
    if (gs->match >= 0 && (gs->flags & WEFT_STEP_F_RECV)) {
        free(x->payload[gs->match]); /* taken */
        x->payload[gs->match] = NULL;
    }
    return rc;
}

/* ---- buffers and the reference -------------------------------------------------------- */
/* The user memories of rank r (weft_buf_mem: in place, input and output are one), each as
 * large as the largest buffer in it (-1: none); the buffers' sizes, memories and segments. */
static void rank_memories(const ex *x, int32_t r, int64_t size[2], int64_t elems[2], int has[2],
                          int mem[2], int32_t seg[2]) {
    const weft_sg *g = x->g;
    const int inplace = x->o->inplace;
    has[0] = weft_sg_buf_exists(g, inplace, r, WEFT_BUF_INPUT);
    has[1] = weft_sg_buf_exists(g, inplace, r, WEFT_BUF_OUTPUT);
    elems[0] = has[0] ? (int64_t)(g->nin / x->k) * x->count : 0;
    elems[1] = has[1] ? (int64_t)(g->nout / x->k) * x->count : 0;
    int alias = weft_sg_aliased(g, inplace, r);
    size[0] = size[1] = -1;
    for (int b = 0; b < 2; b++) {
        mem[b] = weft_buf_mem(x->a->coll, alias, r, (weft_buf)b, &seg[b]);
        if (has[b] && elems[b] > size[mem[b]]) size[mem[b]] = elems[b];
    }
}

static weft_result alloc_buffers(ex *x) {
    weft_result res = WEFT_OK;
    const weft_algo *a = x->a;
    for (int32_t r = 0; r < x->N; r++) {
        rbufs *rb = &x->rb[r];
        int has[2], mem[2];
        int32_t seg[2];
        int64_t size[2], elems[2];
        rank_memories(x, r, size, elems, has, mem, seg);
        rb->in_elems = elems[0];
        rb->out_elems = elems[1];
        char **own[2] = {&rb->own_a, &rb->own_b};
        for (int m = 0; m < 2; m++)
            if (size[m] >= 0) {
                *own[m] = malloc((size_t)size[m] * x->es + 1);
                WEFT_CHECK_ALLOC(*own[m]);
            }
        if (has[0]) rb->in = *own[mem[0]] + (size_t)((int64_t)seg[0] * x->count) * x->es;
        if (has[1]) rb->out = *own[mem[1]] + (size_t)((int64_t)seg[1] * x->count) * x->es;
        int64_t ns = (int64_t)a->gpus[r].s_chunks * x->C;
        rb->scr = malloc((size_t)ns * x->es + 1);
        WEFT_CHECK_ALLOC(rb->scr);
        /* poison first, then the input (which may lie inside the output) */
        for (int64_t e = 0; rb->out && e < rb->out_elems; e++)
            gen_poison(x, r, e, 0, rb->out + (size_t)e * x->es);
        for (int64_t e = 0; e < ns; e++)
            gen_poison(x, r, e, 1, rb->scr + (size_t)e * x->es);
        for (int64_t e = 0; rb->in && e < rb->in_elems; e++)
            gen_input(x, r, e, rb->in + (size_t)e * x->es);
    }
fail:
    return res;
}

/* The expected output of rank r into out (out_elems elements) from the saved inputs, segment
 * by segment as weft_coll_source says; 0 when the rank's output is not part of the call. A
 * reduced input segment is computed once, into red[src] (count elements each, NULL until
 * then), and copied for every rank that wants it: ranks x count work, not ranks^2 x count. */
static weft_result reference(const ex *x, char **in, char **red, int32_t r, char *out,
                             int64_t out_elems, int *constrained) {
    const int64_t n = x->count;
    const size_t es = x->es;
    int64_t nseg = n ? out_elems / n : 1;
    *constrained = 0;
    for (int32_t seg = 0; seg < nseg; seg++) {
        int32_t from, src;
        if (!weft_coll_source(x->a->coll, x->N, x->a->root, r, seg, &from, &src)) return WEFT_OK;
        char *o = out + (size_t)((int64_t)seg * n) * es;
        size_t at = (size_t)((int64_t)src * n) * es;
        if (from >= 0) {
            memcpy(o, in[from] + at, (size_t)n * es);
            continue;
        }
        if (red[src] == NULL) {
            char *v = malloc((size_t)n * es + 1);
            if (v == NULL) return WEFT_ERR_NOMEM;
            memcpy(v, in[0] + at, (size_t)n * es);
            for (int32_t q = 1; q < x->N; q++)
                weft_elem_reduce(x->o->dtype, x->o->op, v, v, in[q] + at, n);
            if (x->o->op == WEFT_OP_AVG) weft_elem_div(x->o->dtype, v, n, x->N);
            red[src] = v;
        }
        memcpy(o, red[src], (size_t)n * es);
    }
    *constrained = 1;
    return WEFT_OK;
}

/* ---- what a run needs ------------------------------------------------------------------ *
 * The most chunks in flight at once (sent, not yet received) in the run the executor will
 * make: the same schedule, interleaving and connection buffers, without data. With unbounded
 * buffers a schedule that sends everything before it receives keeps every message. */
typedef struct inflight {
    const weft_sg *g;
    int64_t now, peak;
} inflight;

static int count_inflight(void *user, int32_t sid) {
    inflight *f = user;
    const weft_sg_step *gs = &f->g->steps[sid];
    const weft_step *st = weft_sg_ir_step(f->g, sid);
    if ((gs->flags & WEFT_STEP_F_RECV) && gs->match >= 0) f->now -= st->cnt;
    if (gs->flags & WEFT_STEP_F_SEND) f->now += st->cnt;
    if (f->now > f->peak) f->peak = f->now;
    return 0;
}

/* The memory the executor will hold: every rank's buffers and scratch, the saved inputs, the
 * reference and its reduced segments, the messages in flight at their peak and the step's
 * values, in bytes (as a double: the sizes of a hostile file overflow 64 bits). */
static weft_result plan_memory(const ex *x, double *bytes) {
    weft_result res = WEFT_OK;
    const weft_sg *g = x->g;
    weft_sg_run run = {0};
    inflight f = {g, 0, 0};
    run.fifo = x->o->fifo_slots;
    run.seed = x->o->sched_seed;
    run.fire = count_inflight;
    run.user = &f;
    WEFT_CHECK(weft_sg_run_exec(g, &run));
    double elems = 0, C = (double)x->C;
    for (int32_t r = 0; r < x->N; r++) {
        int has[2], mem[2];
        int32_t seg[2];
        int64_t size[2], e[2];
        rank_memories(x, r, size, e, has, mem, seg);
        for (int m = 0; m < 2; m++)
            if (size[m] > 0) elems += (double)size[m];
        elems += (double)x->a->gpus[r].s_chunks * C; /* scratch */
        elems += (double)e[0];                       /* the saved input */
    }
    double in_max = (double)(g->nin / g->k) * (double)x->count,
           out_max = (double)(g->nout / g->k) * (double)x->count;
    int32_t maxcnt = 1;
    for (int32_t s = 0; s < g->nsteps; s++)
        if (weft_sg_ir_step(g, s)->cnt > maxcnt) maxcnt = weft_sg_ir_step(g, s)->cnt;
    elems += (out_max > in_max ? out_max : in_max) + in_max; /* the reference, reduced segments */
    elems += (double)f.peak * C + (double)(maxcnt + 1) * C;  /* messages, the step's values */
    *bytes = elems * (double)x->es;
fail:
    weft_sg_run_free(&run);
    return res;
}

static int32_t elem_chunk(const ex *x, int64_t e) {
    int64_t seg = x->count ? e / x->count : 0, off = x->count ? e % x->count : 0;
    return (int32_t)(seg * x->k + (x->C ? off / x->C : 0));
}

/* Compares elements e0 .. e0+n of a buffer of rank r. */
static int64_t compare(const ex *x, weft_diag *d, int32_t r, const char *what, const char *got,
                       const char *want, int64_t e0, int64_t n, int64_t *reported) {
    int64_t bad = 0;
    for (int64_t e = e0; e < e0 + n; e++) {
        size_t at = (size_t)e * x->es;
        if (elem_equal(x->o->dtype, got + at, want + at)) continue;
        bad++;
        if ((*reported)++ >= x->o->max_reports) continue;
        char gv[48], wv[48];
        format_elem(x->o->dtype, got + at, gv, sizeof gv);
        format_elem(x->o->dtype, want + at, wv, sizeof wv);
        weft_diag_add(d, WEFT_SEV_ERROR, x->a->file, 0, 0,
                      "rank %d: %s element %lld (chunk %d) is %s, expected %s", r, what,
                      (long long)e, elem_chunk(x, e), gv, wv);
    }
    if (bad)
        weft_diag_add(d, WEFT_SEV_NOTE, x->a->file, 0, 0,
                      "rank %d: %lld of %lld %s elements differ from the reference", r,
                      (long long)bad, (long long)n, what);
    return bad;
}

weft_result weft_ir_exec(const weft_algo *a, const weft_exec_opts *o, weft_diag *d,
                         weft_exec_report *report) {
    weft_result res = WEFT_OK;
    weft_exec_opts defaults;
    weft_exec_report local_rep;
    weft_exec_report *rep = report ? report : &local_rep;
    weft_sg *g = NULL;
    weft_sg_run run = {0};
    char **saved = NULL, **red = NULL, *want = NULL;
    ex x;
    memset(&x, 0, sizeof x);
    memset(rep, 0, sizeof *rep);
    if (o == NULL) {
        weft_exec_opts_init(&defaults);
        o = &defaults;
    }
    if (!weft_coll_runnable(a->coll)) {
        weft_diag_add(d, WEFT_SEV_ERROR, a->file, a->line, 0,
                      "weft does not execute %s schedules (no NCCL collective runs them)",
                      weft_coll_name(a->coll));
        return WEFT_ERR_UNSUPPORTED;
    }
    if (o->count < 0 || (unsigned)o->dtype >= WEFT_DTYPE_COUNT || weft_dtype_size(o->dtype) == 0 ||
        (unsigned)o->op >= WEFT_OP_COUNT || o->fifo_slots < 0) {
        weft_diag_add(d, WEFT_SEV_ERROR, NULL, 0, 0, "invalid executor options");
        return WEFT_ERR_USAGE;
    }
    if (o->inplace ? !a->inplace : !a->outofplace) {
        weft_diag_add(d, WEFT_SEV_ERROR, a->file, a->line, 0,
                      "the algorithm does not declare %s calls (%s=\"0\")",
                      o->inplace ? "in-place" : "out-of-place",
                      o->inplace ? "inplace" : "outofplace");
        return WEFT_ERR_USAGE;
    }
    WEFT_CHECK(weft_sg_validate(a, d, NULL));
    WEFT_CHECK(weft_sg_build(a, d, NULL, &g));
    WEFT_CHECK(weft_sg_check_mode(g, o->inplace, d, NULL));
    x.g = g;
    x.a = a;
    x.o = o;
    x.N = a->ngpus;
    x.k = g->k;
    x.count = o->count;
    x.C = weft_chunk_elems(o->count, g->k);
    x.es = (size_t)weft_dtype_size(o->dtype);
    {
        /* refuse what this machine should not be asked to hold rather than fail half-way */
        double total;
        WEFT_CHECK(plan_memory(&x, &total));
        if (total > (double)WEFT_EXEC_MAX_BYTES) {
            weft_diag_add(d, WEFT_SEV_ERROR, a->file, 0, 0,
                          "count %lld needs %.1f GiB (buffers, saved inputs, the reference and "
                          "the messages in flight), more than the CPU executor's limit of %d GiB "
                          "(a smaller count%s)",
                          (long long)x.count, total / (1 << 30), (int)(WEFT_EXEC_MAX_BYTES >> 30),
                          o->fifo_slots == 0 ? ", or bounded connection buffers, which keep fewer "
                                               "messages in flight"
                                             : "");
            WEFT_FAIL(WEFT_ERR_INPUT);
        }
    }
    int32_t maxcnt = 1;
    for (int32_t s = 0; s < g->nsteps; s++) {
        int32_t c = weft_sg_ir_step(g, s)->cnt;
        if (c > maxcnt) maxcnt = c;
    }
    size_t slot = (size_t)x.C * x.es;
    x.rb = calloc((size_t)x.N, sizeof *x.rb);
    x.payload = calloc((size_t)g->nsteps + 1, sizeof *x.payload);
    x.tv = malloc((size_t)maxcnt * slot + 1);
    x.ts = malloc(slot + 1);
    WEFT_CHECK_ALLOC(x.rb);
    WEFT_CHECK_ALLOC(x.payload);
    WEFT_CHECK_ALLOC(x.tv);
    WEFT_CHECK_ALLOC(x.ts);
    WEFT_CHECK(alloc_buffers(&x));
    /* the reference works from copies: an in-place run overwrites its input */
    saved = calloc((size_t)x.N, sizeof *saved);
    WEFT_CHECK_ALLOC(saved);
    int64_t in_max = (int64_t)(g->nin / g->k) * x.count,
            out_max = (int64_t)(g->nout / g->k) * x.count;
    for (int32_t r = 0; r < x.N; r++) {
        saved[r] = calloc((size_t)in_max * x.es + 1, 1);
        WEFT_CHECK_ALLOC(saved[r]);
        if (x.rb[r].in) memcpy(saved[r], x.rb[r].in, (size_t)x.rb[r].in_elems * x.es);
    }

    run.fifo = o->fifo_slots;
    run.seed = o->sched_seed;
    run.fire = exec_step;
    run.user = &x;
    WEFT_CHECK(weft_sg_run_exec(g, &run));
    rep->steps_run = run.nfired;
    rep->steps_total = g->nsteps;
    if (run.stalled) {
        rep->stalled = 1;
        weft_diag_add(d, WEFT_SEV_ERROR, a->file, 0, 0,
                      "stalled: %lld of %d steps ran, then no tb could progress",
                      (long long)run.nfired, g->nsteps);
        int32_t listed = 0, blocked = 0, limit = 4 * o->max_reports;
        for (int32_t t = 0; t < g->ntbs; t++) {
            if (run.pc[t] >= g->tbs[t].nsteps) continue;
            blocked++;
            if (listed++ >= limit) continue;
            char why[320], name[64];
            int32_t s = g->tbs[t].first + run.pc[t];
            weft_sg_describe_wait(g, &run, t, why, sizeof why);
            weft_sg_step_name(g, s, name, sizeof name);
            weft_diag_add(d, WEFT_SEV_NOTE, a->file, weft_sg_ir_step(g, s)->line, 0, "%s ('%s') %s",
                          name, weft_step_name(weft_sg_ir_step(g, s)->type), why);
        }
        if (blocked > limit)
            weft_diag_add(d, WEFT_SEV_NOTE, a->file, 0, 0, "%d more blocked tbs not listed",
                          blocked - limit);
        WEFT_FAIL(WEFT_ERR_INPUT);
    }
    if (o->op == WEFT_OP_AVG)
        for (int32_t r = 0; r < x.N; r++) {
            int64_t n = weft_avg_elems(a->coll, a->root, r, x.count, x.N);
            if (x.rb[r].out && n) weft_elem_div(o->dtype, x.rb[r].out, n, x.N);
        }
    want = malloc((size_t)(out_max > in_max ? out_max : in_max) * x.es + 1);
    red = calloc((size_t)(g->nin / g->k) + 1, sizeof *red);
    WEFT_CHECK_ALLOC(want);
    WEFT_CHECK_ALLOC(red);
    int64_t reported = 0;
    for (int32_t r = 0; r < x.N; r++) {
        int constrained = 0;
        if (x.rb[r].out)
            WEFT_CHECK(reference(&x, saved, red, r, want, x.rb[r].out_elems, &constrained));
        if (constrained)
            rep->mismatches +=
                compare(&x, d, r, "output", x.rb[r].out, want, 0, x.rb[r].out_elems, &reported);
        /* NCCL's send buffer is const: an out-of-place call must leave it unchanged, an in-place
         * one whatever of it is not also the output NCCL writes (weft_chunk_writable) */
        if (x.rb[r].in && (!o->inplace || !weft_output_written(a->coll, a->root, r)))
            rep->mismatches +=
                compare(&x, d, r, "input", x.rb[r].in, saved[r], 0, x.rb[r].in_elems, &reported);
        else if (x.rb[r].in && x.rb[r].out && weft_coll_inplace_sliced(a->coll) &&
                 weft_coll_large(a->coll, WEFT_BUF_INPUT)) {
            /* the input segments other than the rank's own, its output */
            int64_t lo = (int64_t)r * x.count, hi = lo + x.count;
            rep->mismatches += compare(&x, d, r, "input", x.rb[r].in, saved[r], 0, lo, &reported);
            rep->mismatches += compare(&x, d, r, "input", x.rb[r].in, saved[r], hi,
                                       x.rb[r].in_elems - hi, &reported);
        }
    }
    if (rep->mismatches) res = WEFT_ERR_INPUT;
fail:
    if (x.payload)
        for (int32_t s = 0; s < (g ? g->nsteps : 0); s++)
            free(x.payload[s]);
    free(x.payload);
    if (x.rb)
        for (int32_t r = 0; r < x.N; r++) {
            free(x.rb[r].own_a);
            free(x.rb[r].own_b);
            free(x.rb[r].scr);
        }
    if (saved)
        for (int32_t r = 0; r < x.N; r++)
            free(saved[r]);
    free(saved);
    if (red)
        for (int32_t s = 0; s < g->nin / g->k; s++)
            free(red[s]);
    free(red);
    free(want);
    free(x.rb);
    free(x.tv);
    free(x.ts);
    weft_sg_run_free(&run);
    weft_sg_free(g);
    return res;
}
