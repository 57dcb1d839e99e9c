/* test_trace_emu.cc — the interpreter's trace instrumentation, run on the host emulation
 * (tests/runtime/emu.h) with the runtime's own plans: every step execution of every tb is
 * recorded once and in order, CTA headers are written whole, waits lie inside their step, message
 * indices pair up per connection, bytes match the count policy computed here independently,
 * a late rank shows up as the other's data wait and starts the critical path, a stalled call
 * marks its CTAs stopped, small buffers count what they drop, and tracing does not change a
 * single output bit. */
#include "emu.h"
#include "gen.h"
#include "trace_rt_internal.h"
#include "trace_tools.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <string>
#include <vector>

static int failures = 0;
#define FAILF(...)                                                                                 \
    do {                                                                                           \
        fprintf(stderr, __VA_ARGS__);                                                              \
        failures++;                                                                                \
    } while (0)

static weft_rt_cfg small_cfg() {
    weft_rt_cfg c;
    memset(&c, 0, sizeof c);
    c.nslots[WEFT_RT_PROTO_SIMPLE] = 2;
    c.slot_bytes[WEFT_RT_PROTO_SIMPLE] = 1024;
    c.nslots[WEFT_RT_PROTO_LL] = 2;
    c.slot_bytes[WEFT_RT_PROTO_LL] = 2048;
    c.nslots[WEFT_RT_PROTO_LL128] = 2;
    c.slot_bytes[WEFT_RT_PROTO_LL128] = 2048;
    c.nthreads = 2;
    c.timeout_ns = 60ll * 1000000000ll;
    return c;
}

struct Run {
    std::vector<std::vector<char>> in, out, scr;
    std::vector<std::vector<weft_trace_tbhdr>> hdr;
    std::vector<std::vector<weft_trace_rec>> rec;
    std::vector<uint32_t> cap;
    std::vector<weft_call_geom> g;
};

/* One call of algorithm 0 on em; traced when cap_override >= 0 (0: exact capacity). */
static weft_result run(EmuComm &em, Run &R, size_t count, int traced, uint32_t cap_override) {
    const weft_algo_plan &p = em.plans[0];
    const weft_algo *a = em.algos[0];
    const int n = em.n, reduces = weft_coll_reduces(a->coll);
    const weft_dtype dt = WEFT_DTYPE_FLOAT;
    const size_t es = 4;
    R.in.assign(n, {});
    R.out.assign(n, {});
    R.scr.assign(n, {});
    R.hdr.assign(n, {});
    R.rec.assign(n, {});
    R.cap.assign(n, 0);
    R.g.assign(n, {});
    std::vector<std::vector<char *>> bufs(n, std::vector<char *>(3));
    em.trace.clear();
    const weft_rank_plan *ranks = weft_plan_mode(&p, 0)->ranks;
    for (int r = 0; r < n; r++) {
        weft_call_geom &g = R.g[r];
        if (weft_call_geometry(&p, &em.cfg, 0, count, (int32_t)es, reduces, 0, &g) != WEFT_OK)
            return WEFT_ERR_INTERNAL;
        size_t ine = (weft_coll_large(a->coll, WEFT_BUF_INPUT) ? n : 1) * count;
        size_t oute = (weft_coll_large(a->coll, WEFT_BUF_OUTPUT) ? n : 1) * count;
        R.in[r].resize(ine * es + 64);
        R.out[r].assign(oute * es + 64, 0);
        R.scr[r].assign(weft_call_scratch(&p, r, count, (int32_t)es) + 64, 0);
        for (size_t e = 0; e < ine; e++) {
            float v = (float)((r * 7 + e * 3) % 13);
            memcpy(&R.in[r][e * es], &v, es);
        }
        bufs[r][0] = R.in[r].data();
        bufs[r][1] = R.out[r].data();
        bufs[r][2] = R.scr[r].data();
        const weft_rank_plan &rp = ranks[r];
        uint32_t cap = 1;
        for (int t = 0; t < rp.ntbs; t++)
            if ((uint32_t)(rp.tbs[t].nsteps * g.niter) > cap)
                cap = (uint32_t)(rp.tbs[t].nsteps * g.niter);
        if (cap_override) cap = cap_override;
        R.cap[r] = cap;
        /* Garbage first: the CTAs must write their whole headers. */
        weft_trace_tbhdr junk;
        memset(&junk, 0xa5, sizeof junk);
        R.hdr[r].assign(rp.ntbs, junk);
        R.rec[r].assign((size_t)rp.ntbs * cap, weft_trace_rec{});
        if (traced) em.trace.push_back(weft_trace_dev{R.hdr[r].data(), R.rec[r].data(), cap, 0});
    }
    return em.launch(0, dt, WEFT_OP_SUM, count, 0, bufs);
}

/* Elements a step touches in chunk j of iteration it (the count policy, as ptrs() applies it). */
static int64_t lim_of(const weft_algo *a, const weft_call_geom &g, int32_t k, int buf, int32_t x,
                      int64_t e0, int64_t en) {
    if (buf == WEFT_BUF_SCRATCH) return en;
    (void)a;
    int64_t v = weft_chunk_valid(g.count, k, g.C, x) - e0;
    return v < 0 ? 0 : v < en ? v : en;
}

static int64_t expect_bytes(const weft_algo *a, const weft_call_geom &g, int32_t k,
                            const weft_rank_plan &rp, const weft_dstep &st, int it) {
    unsigned f = weft_step_flags((weft_step_type)st.type);
    if (st.type == WEFT_STEP_NOP) return 0;
    int64_t e0 = (int64_t)it * g.E, en = g.C - e0 < g.E ? g.C - e0 : g.E, sum = 0;
    for (int j = 0; j < st.cnt; j++) {
        int64_t lim = en;
        if (f & WEFT_STEP_F_READS_SRC) {
            if (st.nsrc > 1) {
                for (int s = 0; s < st.nsrc; s++) {
                    const weft_dsrc &x = rp.xsrc[st.xsrc + s];
                    int64_t l = lim_of(a, g, k, x.buf, x.off + j, e0, en);
                    lim = l < lim ? l : lim;
                }
            } else {
                int64_t l = lim_of(a, g, k, st.srcbuf, st.srcoff + j, e0, en);
                lim = l < lim ? l : lim;
            }
        }
        if (f & WEFT_STEP_F_WRITE) {
            int64_t l = lim_of(a, g, k, st.dstbuf, st.dstoff + j, e0, en);
            lim = l < lim ? l : lim;
        }
        sum += lim * g.kelem;
    }
    return sum;
}

/* Everything the records of one traced call must satisfy; returns the model (for more checks). */
static void check_call(const char *name, EmuComm &em, Run &R, weft_trace *model, int exact) {
    const weft_algo_plan &p = em.plans[0];
    const weft_algo *a = em.algos[0];
    std::vector<weft_trace_tb *> tbs(em.n);
    std::vector<weft_trace_step *> steps(em.n);
    weft_diag *d = weft_diag_new();
    for (int r = 0; r < em.n; r++) {
        const weft_rank_plan &rp = weft_plan_mode(&p, 0)->ranks[r];
        const weft_call_geom &g = R.g[r];
        if (weft_rt_trace_sched(&rp, &tbs[r], &steps[r]) != WEFT_OK) {
            FAILF("%s: no schedule tables\n", name);
            continue;
        }
        for (int t = 0; t < rp.ntbs; t++) {
            const weft_trace_tbhdr &h = R.hdr[r][t];
            const weft_dtb &tb = rp.tbs[t];
            uint32_t want = (uint32_t)(tb.nsteps * g.niter);
            if (h.n != want || h.stopped != 0 || h.t_end < h.t_begin)
                FAILF("%s: rank %d tb %d: header n %u (want %u), stopped %u\n", name, r, t, h.n,
                      want, h.stopped);
            uint32_t m = h.n < R.cap[r] ? h.n : R.cap[r];
            uint64_t prev_t1 = h.t_begin;
            for (uint32_t i = 0; i < m && exact; i++) {
                const weft_trace_rec &x = R.rec[r][(size_t)t * R.cap[r] + i];
                int wi = (int)(i / (uint32_t)tb.nsteps), ws = (int)(i % (uint32_t)tb.nsteps);
                if (x.iter != wi || x.step != ws) {
                    FAILF("%s: rank %d tb %d record %u is step %d iteration %d, want %d/%d\n", name,
                          r, t, i, x.step, x.iter, ws, wi);
                    break;
                }
                if (x.t0 < prev_t1 || x.t1 < x.t0 ||
                    (uint64_t)x.dep_ns + x.data_ns + x.credit_ns > x.t1 - x.t0)
                    FAILF("%s: rank %d tb %d record %u: times %llu..%llu after %llu, waits "
                          "%u+%u+%u\n",
                          name, r, t, i, (unsigned long long)x.t0, (unsigned long long)x.t1,
                          (unsigned long long)prev_t1, x.dep_ns, x.data_ns, x.credit_ns);
                prev_t1 = x.t1;
                const weft_dstep &st = rp.steps[tb.first + ws];
                int64_t b = expect_bytes(a, g, p.k, rp, st, wi);
                if ((int64_t)x.bytes != b)
                    FAILF("%s: rank %d tb %d step %d iteration %d: %u bytes, want %lld\n", name, r,
                          t, ws, wi, x.bytes, (long long)b);
            }
            if (prev_t1 > h.t_end)
                FAILF("%s: rank %d tb %d: a step ends after the CTA\n", name, r, t);
        }
        weft_trace_callinfo ci = {0,           a->name,
                                  a->coll,     WEFT_DTYPE_FLOAT,
                                  WEFT_OP_SUM, (int64_t)g.count,
                                  0,           r,
                                  em.n,        p.proto,
                                  g.niter,     1,
                                  g.C,         g.E,
                                  g.kelem,     em.cfg.nslots[p.proto],
                                  rp.ntbs,     tbs[r]};
        if (weft_trace_add_call(model, &ci, R.hdr[r].data(), R.rec[r].data(), R.cap[r], NULL, d) !=
                WEFT_OK ||
            weft_diag_size(d) != 0) {
            FAILF("%s: rank %d: records rejected\n", name, r);
            weft_diag_print(d, stderr, WEFT_SEV_NOTE);
        }
    }
    if (weft_trace_sort(model) != WEFT_OK) FAILF("%s: sort\n", name);
    /* Messages: per connection, indices 0.. in order on both ends, as many sent as received. */
    if (exact) {
        struct End {
            int32_t from, to, chan;
            std::vector<int64_t> idx;
        };
        std::vector<End> snd, rcv;
        for (size_t i = 0; i < model->nslices; i++) {
            const weft_trace_slice &s = model->slices[i];
            int32_t r = model->calls[s.call].rank;
            auto add = [](std::vector<End> &v, int32_t f, int32_t t, int32_t c, int64_t m) {
                for (End &e : v)
                    if (e.from == f && e.to == t && e.chan == c) {
                        e.idx.push_back(m);
                        return;
                    }
                v.push_back(End{f, t, c, {m}});
            };
            if (s.smsg >= 0) add(snd, r, s.send, s.chan, s.smsg);
            if (s.rmsg >= 0) add(rcv, s.recv, r, s.chan, s.rmsg);
        }
        if (snd.size() != rcv.size())
            FAILF("%s: %zu sending ends, %zu receiving\n", name, snd.size(), rcv.size());
        for (const End &e : snd) {
            const End *o = nullptr;
            for (const End &x : rcv)
                if (x.from == e.from && x.to == e.to && x.chan == e.chan) o = &x;
            if (o == nullptr || o->idx.size() != e.idx.size()) {
                FAILF("%s: connection %d->%d ch %d: %zu sent, %zu received\n", name, e.from, e.to,
                      e.chan, e.idx.size(), o ? o->idx.size() : 0);
                continue;
            }
            for (size_t i = 0; i < e.idx.size(); i++)
                if (e.idx[i] != (int64_t)i || o->idx[i] != (int64_t)i) {
                    FAILF("%s: connection %d->%d ch %d: message %zu has indices %lld/%lld\n", name,
                          e.from, e.to, e.chan, i, (long long)e.idx[i], (long long)o->idx[i]);
                    break;
                }
        }
    }
    for (int r = 0; r < em.n; r++) {
        free(tbs[r]);
        free(steps[r]);
    }
    weft_diag_free(d);
}

static std::string report(const weft_trace *t, int check) {
    char *buf = nullptr;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    weft_trace_summary_opts so = {-1, 0};
    weft_trace_check_opts co = {0.999};
    if (check)
        weft_trace_check(t, &co, f, nullptr);
    else
        weft_trace_summarize(t, &so, f);
    fclose(f);
    std::string s(buf, len);
    free(buf);
    return s;
}

static void one_case(const char *name, weft_algo *a, int nranks, size_t count, int late_rank) {
    EmuComm em;
    em.max_group = 1; /* the checks below follow every iteration of every tb */
    std::vector<const weft_algo *> v{a};
    if (em.attach(nranks, v, small_cfg()) != WEFT_OK || !em.eligible(0)) {
        FAILF("%s: attach failed: %s\n", name, em.why.empty() ? "" : em.why[0].c_str());
        return;
    }
    /* Untraced, then traced: the same bits. */
    Run plain, traced;
    if (run(em, plain, count, 0, 0) != WEFT_OK) FAILF("%s: untraced run failed\n", name);
    if (late_rank >= 0) em.start_delay_ms[late_rank] = 150;
    if (run(em, traced, count, 1, 0) != WEFT_OK) FAILF("%s: traced run failed\n", name);
    if (late_rank >= 0) em.start_delay_ms[late_rank] = 0;
    for (int r = 0; r < nranks; r++)
        if (plain.out[r] != traced.out[r])
            FAILF("%s: rank %d: tracing changed the output\n", name, r);
    weft_trace model;
    weft_trace_init(&model, 0);
    check_call(name, em, traced, &model, 1);
    std::string chk = report(&model, 1);
    for (const char *want :
         {"ok    slices ordered and non-overlapping",
          "ok    slices inside their call's kernel span", "ok    every step execution recorded",
          "ok    messages received after their send began"})
        if (chk.find(want) == std::string::npos)
            FAILF("%s: weft_trace_check lacks \"%s\":\n%s", name, want, chk.c_str());
    std::string sum = report(&model, 0);
    if (sum.find("critical path of call 0") == std::string::npos)
        FAILF("%s: no critical path:\n%s", name, sum.c_str());
    if (late_rank >= 0) {
        /* The other rank waited for the late one's first message, and the path starts there. */
        int64_t waited = 0;
        for (size_t i = 0; i < model.nslices; i++)
            if (model.calls[model.slices[i].call].rank != late_rank &&
                model.slices[i].data_ns > waited)
                waited = model.slices[i].data_ns;
        if (waited < 100 * 1000000ll)
            FAILF("%s: the longest data wait is %lld ns with rank %d 150 ms late\n", name,
                  (long long)waited, late_rank);
        char want[96];
        snprintf(want, sizeof want, "to its first step (rank %d)", late_rank);
        if (sum.find(want) == std::string::npos)
            FAILF("%s: the critical path does not start on the late rank:\n%s", name, sum.c_str());
    }
    printf("%s: %zu step executions traced\n", name, model.nslices);
    weft_trace_free(&model);

    /* A buffer of 2 records per tb: the first two of each tb kept, the rest counted. */
    Run small;
    if (run(em, small, count, 1, 2) != WEFT_OK) FAILF("%s: small-buffer run failed\n", name);
    weft_trace_init(&model, 0);
    check_call(name, em, small, &model, 0);
    int64_t dropped = 0, recorded = 0, total = 0, ntbs = 0;
    for (size_t c = 0; c < model.ncalls; c++)
        dropped += model.calls[c].dropped, recorded += model.calls[c].records;
    for (int r = 0; r < nranks; r++)
        for (const weft_trace_tbhdr &h : small.hdr[r])
            total += h.n, ntbs++;
    if (recorded + dropped != total || recorded > 2 * ntbs)
        FAILF("%s: small buffer: %lld recorded + %lld dropped != %lld\n", name, (long long)recorded,
              (long long)dropped, (long long)total);
    weft_trace_free(&model);
}

/* Both ranks receive before they send: the watchdog stops the call; the CTAs say so. */
static void stalled_case() {
    weft_algo *a = gen_deadlock();
    EmuComm em;
    em.max_group = 1; /* the checks below follow every iteration of every tb */
    weft_rt_cfg c = small_cfg();
    c.timeout_ns = 100 * 1000000ll;
    std::vector<const weft_algo *> v{a};
    Run R;
    if (em.attach(2, v, c) != WEFT_OK || !em.eligible(0)) {
        FAILF("stalled: attach failed\n");
    } else if (run(em, R, 4, 1, 0) != WEFT_ERR_TIMEOUT) {
        FAILF("stalled: the watchdog did not stop the call\n");
    } else {
        for (int r = 0; r < 2; r++) {
            const weft_trace_tbhdr &h = R.hdr[r][0];
            const weft_trace_rec &x = R.rec[r][0];
            if (h.stopped != 1 || h.n != 1 || x.step != 0 || x.t1 < x.t0 ||
                (uint64_t)x.data_ns > x.t1 - x.t0 || x.data_ns < 50 * 1000000u)
                FAILF("stalled: rank %d: stopped %u, n %u, step %d, data wait %u ns\n", r,
                      h.stopped, h.n, x.step, x.data_ns);
        }
        printf("stalled: both CTAs marked stopped after their data wait\n");
    }
    weft_algo_free(a);
}

static weft_algo *read_xml(const char *dir, const char *file) {
    std::string path = std::string(dir) + "/" + file;
    weft_algo *a = nullptr;
    weft_diag *d = weft_diag_new();
    if (weft_ir_read_file(path.c_str(), &a, d) != WEFT_OK) {
        weft_diag_print(d, stderr, WEFT_SEV_ERROR);
        FAILF("%s: not read\n", path.c_str());
    }
    weft_diag_free(d);
    return a;
}

int main(int argc, char **argv) {
    const char *data = argc > 1 ? argv[1] : "data";
    weft_algo *ring = read_xml(data, "ring2.xml"), *ap = read_xml(data, "allpairs2.xml");
    if (ring) {
        one_case("ring2 (Simple, 2 iterations)", ring, 2, 1000, -1);
        one_case("ring2, rank 1 late", ring, 2, 999, 1);
    }
    if (ap) one_case("allpairs2 (LL, dependencies)", ap, 2, 777, -1);
    weft_algo *ap3 = read_xml(data, "allpairs3.xml");
    if (ap3) one_case("allpairs3 (LL, fused re)", ap3, 3, 555, -1);
    weft_algo_free(ap3);
    const char *specs[] = {"ar_ring:n=3:ch=2:proto=Simple",     "ar_ring:n=4:ch=1:proto=LL",
                           "ar_direct:n=2:ch=2:proto=LL:cpc=2", "ag_ring:n=3:ch=2:proto=Simple",
                           "rs_ring:n=3:ch=1:proto=LL",         "ar_ring:n=3:ch=2:proto=LL128",
                           "ar_direct:n=2:ch=2:proto=LL128"};
    for (const char *sp : specs) {
        gen_params gp;
        weft_algo *a = gen_parse(sp, &gp) == 0 ? gen_algo(&gp) : nullptr;
        if (a == nullptr) {
            FAILF("%s: not generated\n", sp);
            continue;
        }
        one_case(sp, a, gp.nranks, 1001, -1);
        weft_algo_free(a);
    }
    stalled_case();
    weft_algo_free(ring);
    weft_algo_free(ap);
    if (failures) fprintf(stderr, "%d failure(s)\n", failures);
    return failures ? 1 : 0;
}
