/* trace_model.c — the host model of a trace: turning what the GPU's CTAs recorded into slices on
 * the host clock, clock alignment between %globaltimer and the host, sorting. */
#include "trace_internal.h"
#include "weft_ir.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

/* ---- clock --------------------------------------------------------------------------------- */
int64_t weft_trace_host_now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

weft_result weft_trace_clock_add(weft_trace_clock *c, int64_t host_ns, uint64_t gpu_ns,
                                 int64_t err_ns) {
    if (weft_grow((void **)&c->s, &c->cap, c->n, sizeof *c->s) != 0) return WEFT_ERR_NOMEM;
    size_t i = c->n;
    while (i > 0 && c->s[i - 1].gpu_ns > gpu_ns) {
        c->s[i] = c->s[i - 1];
        i--;
    }
    /* Two samples at the same GPU time would make a zero interval: keep the more precise. */
    if (i > 0 && c->s[i - 1].gpu_ns == gpu_ns) {
        if (err_ns < c->s[i - 1].err_ns)
            c->s[i - 1] = (weft_trace_clock_sample){host_ns, gpu_ns, err_ns};
        memmove(&c->s[i], &c->s[i + 1], (c->n - i) * sizeof *c->s);
        return WEFT_OK;
    }
    c->s[i] = (weft_trace_clock_sample){host_ns, gpu_ns, err_ns};
    c->n++;
    return WEFT_OK;
}

int64_t weft_trace_clock_map(const weft_trace_clock *c, uint64_t g, int64_t *err_ns) {
    if (c == NULL || c->n == 0) {
        if (err_ns) *err_ns = -1;
        return (int64_t)g;
    }
    /* Unsigned arithmetic: whatever a device wrote, nothing overflows a signed type. */
    if (c->n == 1) {
        if (err_ns) *err_ns = c->s[0].err_ns;
        return (int64_t)((uint64_t)c->s[0].host_ns + (g - c->s[0].gpu_ns));
    }
    /* The pair around g, or the nearest pair at either end. */
    size_t i = 0;
    while (i + 2 < c->n && c->s[i + 1].gpu_ns <= g)
        i++;
    const weft_trace_clock_sample *a = &c->s[i], *b = &c->s[i + 1];
    double dg = (double)(b->gpu_ns - a->gpu_ns);
    double drift = ((double)b->host_ns - (double)a->host_ns - dg) / dg; /* host/GPU ns - 1 */
    uint64_t off = g - a->gpu_ns; /* wraps below a: the cast below makes it negative */
    double corr = drift * (double)(int64_t)off;
    if (corr > 4e18 || corr < -4e18) corr = 0; /* nonsense samples: no drift correction */
    if (err_ns) *err_ns = a->err_ns > b->err_ns ? a->err_ns : b->err_ns;
    return (int64_t)((uint64_t)a->host_ns + off + (uint64_t)(int64_t)corr);
}

void weft_trace_clock_free(weft_trace_clock *c) {
    free(c->s);
    memset(c, 0, sizeof *c);
}

/* ---- model --------------------------------------------------------------------------------- */
void weft_trace_init(weft_trace *t, int64_t time_base_ns) {
    memset(t, 0, sizeof *t);
    t->time_base_ns = time_base_ns;
}

void weft_trace_clear(weft_trace *t) {
    for (size_t i = 0; i < t->ncalls; i++)
        free(t->calls[i].algo);
    t->ncalls = 0;
    t->nslices = 0;
}

void weft_trace_free(weft_trace *t) {
    if (t == NULL) return;
    weft_trace_clear(t);
    free(t->calls);
    free(t->slices);
    for (size_t i = 0; i < t->nfiles; i++)
        free(t->files[i]);
    free(t->files);
    memset(t, 0, sizeof *t);
}

/* a - b without signed overflow, whatever the device wrote. */
static int64_t rel(int64_t a, int64_t b) {
    return (int64_t)((uint64_t)a - (uint64_t)b);
}

weft_result weft_trace_add_call(weft_trace *t, const weft_trace_callinfo *ci,
                                const weft_trace_tbhdr *hdr, const weft_trace_rec *rec,
                                uint32_t cap, const weft_trace_clock *clk, weft_diag *d) {
    weft_result res = WEFT_OK;
    size_t nbad = 0;
    if (ci == NULL || ci->ntbs < 0 || (ci->ntbs > 0 && (hdr == NULL || ci->tbs == NULL)) ||
        ci->rank < 0 || ci->rank >= ci->nranks)
        return WEFT_ERR_USAGE;
    if (weft_grow((void **)&t->calls, &t->cap_calls, t->ncalls, sizeof *t->calls) != 0)
        return WEFT_ERR_NOMEM;
    weft_trace_call *c = &t->calls[t->ncalls];
    memset(c, 0, sizeof *c);
    c->algo = weft_strdup(ci->algo ? ci->algo : "?");
    WEFT_CHECK_ALLOC(c->algo);
    c->seq = ci->seq;
    c->coll = ci->coll, c->dtype = ci->dtype, c->op = ci->op;
    c->count = ci->count;
    c->inplace = ci->inplace ? 1 : 0;
    c->rank = ci->rank, c->nranks = ci->nranks;
    c->proto = ci->proto, c->niter = ci->niter;
    c->group = ci->group > 0 ? ci->group : 1;
    c->chunk_elems = ci->chunk_elems, c->slice_elems = ci->slice_elems;
    c->elem_bytes = ci->elem_bytes, c->fifo_slots = ci->fifo_slots, c->ntbs = ci->ntbs;
    c->clock_err_ns = -1;
    c->file = -1;

    /* The kernel: first CTA entry to last CTA exit (a CTA that never exited ends at its last
     * record). */
    uint64_t kb = UINT64_MAX, ke = 0;
    for (int32_t b = 0; b < ci->ntbs; b++) {
        const weft_trace_tbhdr *h = &hdr[b];
        uint64_t end = h->t_end;
        uint32_t n = h->n < cap ? h->n : cap;
        for (uint32_t i = 0; i < n && rec; i++)
            if (rec[(size_t)b * cap + i].t1 > end) end = rec[(size_t)b * cap + i].t1;
        if (h->t_begin && h->t_begin < kb) kb = h->t_begin;
        if (end > ke) ke = end;
        c->dropped += h->n > cap ? h->n - cap : 0;
        c->stopped += h->stopped ? 1 : 0;
    }
    if (kb == UINT64_MAX) kb = ke;
    int64_t e0 = -1, e1 = -1;
    c->t0 = rel(weft_trace_clock_map(clk, kb, &e0), t->time_base_ns);
    c->t1 = rel(weft_trace_clock_map(clk, ke > kb ? ke : kb, &e1), t->time_base_ns);
    c->clock_err_ns = e0 > e1 ? e0 : e1;

    for (int32_t b = 0; b < ci->ntbs && rec; b++) {
        const weft_trace_tb *tb = &ci->tbs[b];
        uint32_t n = hdr[b].n < cap ? hdr[b].n : cap;
        for (uint32_t i = 0; i < n; i++) {
            const weft_trace_rec *r = &rec[(size_t)b * cap + i];
            unsigned f = r->step >= 0 && r->step < tb->nsteps
                             ? weft_step_flags((weft_step_type)tb->steps[r->step].type)
                             : 0;
            if (r->step < 0 || r->step >= tb->nsteps || r->iter < 0 || r->iter >= ci->niter ||
                r->t1 < r->t0 || ((f & WEFT_STEP_F_SEND) && tb->send < 0) ||
                ((f & WEFT_STEP_F_RECV) && tb->recv < 0)) {
                if (nbad++ < 3)
                    weft_diag_add(d, WEFT_SEV_WARNING, NULL, 0, 0,
                                  "trace: rank %d tb %d record %u is inconsistent (step %d, "
                                  "iteration %d); skipped",
                                  ci->rank, b, i, r->step, r->iter);
                continue;
            }
            if (weft_grow((void **)&t->slices, &t->cap_slices, t->nslices, sizeof *t->slices) != 0)
                WEFT_FAIL(WEFT_ERR_NOMEM);
            const weft_trace_step *st = &tb->steps[r->step];
            weft_trace_slice *s = &t->slices[t->nslices];
            memset(s, 0, sizeof *s);
            s->call = (int32_t)t->ncalls;
            s->tb = b, s->step = r->step, s->xml_step = st->xml_step, s->iter = r->iter;
            s->type = st->type, s->chan = tb->chan;
            s->send = (f & WEFT_STEP_F_SEND) ? tb->send : -1;
            s->recv = (f & WEFT_STEP_F_RECV) ? tb->recv : -1;
            s->srcbuf = st->srcbuf, s->srcoff = st->srcoff;
            s->dstbuf = st->dstbuf, s->dstoff = st->dstoff;
            s->cnt = st->cnt, s->nsrc = st->nsrc;
            s->elem0 = (int64_t)r->iter * c->group * ci->slice_elems;
            s->elems = ci->chunk_elems - s->elem0 < ci->slice_elems ? ci->chunk_elems - s->elem0
                                                                    : ci->slice_elems;
            if (s->elems < 0) s->elems = 0;
            s->t0 = rel(weft_trace_clock_map(clk, r->t0, NULL), t->time_base_ns);
            s->t1 = rel(weft_trace_clock_map(clk, r->t1, NULL), t->time_base_ns);
            if (s->t1 < s->t0) s->t1 = s->t0;
            /* Waits are GPU durations inside [t0, t1]: never more than the slice. */
            int64_t left = s->t1 - s->t0;
            int64_t w[3] = {r->dep_ns, r->data_ns, r->credit_ns};
            for (int k = 0; k < 3; k++) {
                if (w[k] > left) w[k] = left;
                left -= w[k];
            }
            s->dep_ns = w[0], s->data_ns = w[1], s->credit_ns = w[2];
            s->bytes = r->bytes;
            s->dep_tb = st->dep_tb;
            s->dep_want =
                st->dep_tb >= 0 ? (int64_t)r->iter * st->dep_stride + (int64_t)st->dep_target : 0;
            s->post = st->post > 0 ? (int64_t)r->iter * tb->nsteps_orig + st->post : -1;
            s->smsg = (f & WEFT_STEP_F_SEND) ? (int64_t)(uint32_t)(r->spos - hdr[b].spos0) : -1;
            s->rmsg = (f & WEFT_STEP_F_RECV) ? (int64_t)(uint32_t)(r->rpos - hdr[b].rpos0) : -1;
            t->nslices++;
            c->records++;
        }
    }
    if (nbad > 3)
        weft_diag_add(d, WEFT_SEV_WARNING, NULL, 0, 0,
                      "trace: rank %d: %zu inconsistent records skipped in all", ci->rank, nbad);
    c->dropped += (int64_t)nbad;
    t->ncalls++;
    return WEFT_OK;
fail:
    /* Undo this call's slices: the model stays as it was. */
    while (t->nslices > 0 && t->slices[t->nslices - 1].call == (int32_t)t->ncalls)
        t->nslices--;
    free(c->algo);
    c->algo = NULL;
    return res;
}

/* ---- sorting ------------------------------------------------------------------------------- */
typedef struct call_key {
    int64_t seq;
    int32_t rank, file;
    size_t idx;
} call_key;

static int cmp_call(const void *pa, const void *pb) {
    const call_key *a = pa, *b = pb;
    return weft_cmp_keys((int64_t[]){a->seq, a->rank, a->file, a->idx},
                         (int64_t[]){b->seq, b->rank, b->file, b->idx}, 4);
}

static int cmp_slice(const void *pa, const void *pb) {
    const weft_trace_slice *a = pa, *b = pb;
    return weft_cmp_keys((int64_t[]){a->call, a->tb, a->t0, a->iter, a->step, a->t1, a->line},
                         (int64_t[]){b->call, b->tb, b->t0, b->iter, b->step, b->t1, b->line}, 7);
}

weft_result weft_trace_sort(weft_trace *t) {
    if (t->ncalls > 1) {
        call_key *k = malloc(t->ncalls * sizeof *k);
        weft_trace_call *nc = malloc(t->ncalls * sizeof *nc);
        int32_t *map = malloc(t->ncalls * sizeof *map);
        if (!k || !nc || !map) {
            free(k);
            free(nc);
            free(map);
            return WEFT_ERR_NOMEM;
        }
        {
            for (size_t i = 0; i < t->ncalls; i++)
                k[i] = (call_key){t->calls[i].seq, t->calls[i].rank, t->calls[i].file, i};
            qsort(k, t->ncalls, sizeof *k, cmp_call);
            for (size_t i = 0; i < t->ncalls; i++) {
                nc[i] = t->calls[k[i].idx];
                map[k[i].idx] = (int32_t)i;
            }
            memcpy(t->calls, nc, t->ncalls * sizeof *nc);
            for (size_t i = 0; i < t->nslices; i++)
                t->slices[i].call = map[t->slices[i].call];
        }
        free(k);
        free(nc);
        free(map);
    }
    if (t->nslices > 1) qsort(t->slices, t->nslices, sizeof *t->slices, cmp_slice);
    return WEFT_OK;
}
