/* fuzz_diff.cc — differential fuzzing of the GPU interpreter against the verifier: random
 * schedules (rgen.h) that `weft verify` proves run on the CPU reference executor and on the host
 * emulation of the interpreter (the same interp.h and plan.c as the GPU) in every form (as
 * written, collapsed, mixed, registered/direct, thread-block groups, several counts that do and
 * do not divide, several types and ops, every mode the schedule declares). Verified must mean
 * right: any difference, stall or write where NCCL never writes fails, with the schedule saved
 * as a reproducer. C++17.
 *
 *   fuzz_diff [--seed S] [--count N] [--seconds T] [--ranks LO-HI] [--save DIR] [--write DIR]
 *
 * --count N: seeds S .. S+N-1 (default 200); --seconds T: stop after T seconds instead (the
 * long run; the report says how far it got). --file F: check schedule F (a reproducer) in every
 * case of the grid, reporting every failure. --save DIR: failing schedules (default "."),
 * --write DIR: every verified schedule the runtime accepts (a corpus for test_gpu --algos). */
#include "emu.h"
#include "emu_case.h"
#include "rgen.h"
#include "weft_ir.h"

#include <map>
#include <memory>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <string>
#include <time.h>
#include <vector>

namespace {

double now_s() {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

struct Stats {
    long seeds = 0, gaveup = 0, rejected = 0, refused = 0, run = 0, failed = 0, cpu_calls = 0;
    long by_coll[WEFT_COLL_COUNT] = {}, by_proto[WEFT_PROTO_COUNT] = {}, steps = 0;
    long inplace = 0, ranks[9] = {}, lanes = 0; /* lanes: LL128 on the GPU's lanes */
    long reject_class[WEFT_VERIFY_CLASS_COUNT] = {};
    std::map<std::string, long> refusals;
    EmuTally emu;
};

struct Opts {
    uint64_t seed = 1;
    long count = 200;
    double seconds = 0;
    rgen_opts gen;
    const char *save = ".";
    const char *write = nullptr;
    int verbose = 0;
    int all = 0; /* --file: every case of the grid, every failure */
    int dump = 0;
    int seed_given = 0;
    std::vector<const char *> files;
} opt;

uint64_t mix64(uint64_t x) {
    x += 0x9e3779b97f4a7c15ull;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

void save_xml(const weft_algo *a, const char *dir, const char *why) {
    std::string path = std::string(dir) + "/" + a->name + ".xml";
    weft_out *o = nullptr;
    weft_diag *d = weft_diag_new();
    if (weft_out_open(path.c_str(), 0, &o, d) == WEFT_OK) {
        if (why) fprintf(weft_out_file(o), "<!-- %s -->\n", why);
        weft_ir_write(a, weft_out_file(o));
        weft_out_close(o, d);
    }
    weft_diag_print(d, stderr, WEFT_SEV_ERROR);
    weft_diag_free(d);
    if (why) fprintf(stderr, "  reproducer: %s\n", path.c_str());
}

/* The runtime's configuration for a schedule: small FIFOs (every call wraps them), slices
 * smaller than chunks (several iterations, thread-block groups), at least the verifier's
 * FIFO depth. */
weft_rt_cfg config(uint64_t h) {
    weft_rt_cfg c;
    memset(&c, 0, sizeof c);
    c.nslots[WEFT_RT_PROTO_SIMPLE] = 2 + (int)(h % 3);
    c.nslots[WEFT_RT_PROTO_LL] = 2 + (int)((h >> 2) % 3);
    c.slot_bytes[WEFT_RT_PROTO_SIMPLE] = 256 << ((h >> 4) % 3);
    c.slot_bytes[WEFT_RT_PROTO_LL] = 512 << ((h >> 6) % 3);
    /* LL128: 16 or 32 lines a slot, so that a message of a few chunks still fits whole lines */
    c.nslots[WEFT_RT_PROTO_LL128] = 2 + (int)((h >> 10) % 3);
    c.slot_bytes[WEFT_RT_PROTO_LL128] = 2048 << ((h >> 12) % 2);
    if ((h >> 8) & 1) {
        c.slice_bytes[WEFT_RT_PROTO_SIMPLE] = 128;
        c.slice_bytes[WEFT_RT_PROTO_LL] = 64;
        c.slice_bytes[WEFT_RT_PROTO_LL128] = 240; /* two lines */
    }
    c.nthreads = 2;
    c.timeout_ns = 3ll * 1000000000ll; /* a stall fails the case (a call takes milliseconds) */
    return c;
}

/* Runs one seed; false when it failed (reported). */
bool check(weft_algo *a, uint64_t seed, Stats &st);
void dump_plan(const EmuComm &em);

bool one(uint64_t seed, Stats &st) {
    st.seeds++;
    weft_algo *a = rgen_algo(seed, &opt.gen);
    if (a == nullptr) {
        st.gaveup++;
        return true;
    }
    return check(a, seed, st);
}

/* Checks schedule a (owned; freed here) as the fuzzer does; seed picks the configuration,
 * counts, types and forms. */
bool check(weft_algo *a, uint64_t seed, Stats &st) {
    bool ok = true;
    weft_diag *d = weft_diag_new();
    weft_verify_summary sum;
    memset(&sum, 0, sizeof sum);
    const uint64_t h = mix64(seed);
    std::vector<int> modes;
    if (a->outofplace) modes.push_back(0);
    if (a->inplace) modes.push_back(1);
    const int32_t k = weft_algo_chunks_per_seg(a);
    const bool reduces = weft_coll_reduces(a->coll);
    std::vector<size_t> counts = {(size_t)(1 + h % 3), (size_t)k * (5 + (h >> 3) % 7) + 1,
                                  (size_t)k * 48, (size_t)(200 + (h >> 9) % 300)};
    if (weft_ir_validate(a, d) != WEFT_OK) {
        fprintf(stderr, "FAIL %s: the generator made a schedule that does not validate:\n",
                a->name);
        weft_diag_print(d, stderr, WEFT_SEV_ERROR);
        save_xml(a, opt.save, "does not validate");
        st.failed++;
        ok = false;
        goto done;
    }
    if (weft_ir_verify(a, nullptr, nullptr, &sum) != WEFT_OK) {
        st.rejected++;
        for (int c = 0; c < WEFT_VERIFY_CLASS_COUNT; c++)
            st.reject_class[c] += sum.errors[c] > 0;
        goto done;
    }
    /* The CPU reference executor agrees with the verifier. */
    for (int m : modes)
        for (size_t ci = 0; ci < counts.size(); ci++) {
            weft_exec_opts eo;
            weft_exec_opts_init(&eo);
            eo.count = (int64_t)counts[ci];
            eo.dtype = ci & 1 ? WEFT_DTYPE_FLOAT : WEFT_DTYPE_INT32;
            eo.op = reduces ? (weft_redop)((h >> (12 + ci)) % 4) : WEFT_OP_SUM;
            eo.inplace = (uint8_t)m;
            eo.seed = seed + ci;
            eo.sched_seed = ci == 0 ? 0 : h + ci;
            eo.fifo_slots = 2;
            weft_diag_clear(d);
            st.cpu_calls++;
            if (weft_ir_exec(a, &eo, d, nullptr) != WEFT_OK) {
                fprintf(stderr,
                        "FAIL %s: verified, but the CPU executor computes it wrong "
                        "(count=%lld %s):\n",
                        a->name, (long long)eo.count, m ? "in-place" : "out-of-place");
                weft_diag_print(d, stderr, WEFT_SEV_ERROR);
                save_xml(a, opt.save, "verified, CPU executor wrong");
                st.failed++;
                ok = false;
                goto done;
            }
        }
    {
        std::vector<const weft_algo *> v{a};
        auto fresh = [&]() {
            std::unique_ptr<EmuComm> e(new EmuComm);
            e->nthreads = 1 + (int)((h >> 20) % 3);
            e->max_group = 1 + (int)((h >> 22) % 3);
            /* a quarter of the LL128 schedules on the GPU's lanes (eight threads a line) */
            if (a->proto == WEFT_PROTO_LL128 && ((h >> 30) & 3) == 0) {
                e->ll128_lanes = true;
                e->nthreads = 8 * (1 + (int)((h >> 40) % 2));
            }
            if (e->attach(a->ngpus, v, config(h >> 24)) != WEFT_OK) e.reset();
            return e;
        };
        std::unique_ptr<EmuComm> emp = fresh();
        if (!emp) {
            fprintf(stderr, "FAIL %s: attach failed\n", a->name);
            save_xml(a, opt.save, "attach failed");
            st.failed++;
            ok = false;
            goto done;
        }
        if (!emp->eligible(0)) {
            /* The runtime may refuse what it cannot run, at load, saying why (NCCL serves). */
            st.refused++;
            std::string why = emp->why[0];
            for (char &ch : why)
                if (ch >= '0' && ch <= '9') ch = '#';
            st.refusals[why]++;
            goto done;
        }
        if (opt.dump) dump_plan(*emp);
        st.run++;
        st.by_coll[a->coll]++;
        st.by_proto[a->proto]++;
        st.lanes += emp->ll128_lanes;
        st.inplace += a->inplace;
        st.ranks[a->ngpus]++;
        st.steps += weft_algo_nsteps(a);
        if (opt.write) save_xml(a, opt.write, nullptr);
        /* Every form: as written, collapsed, mixed; registered (direct) as written and
         * collapsed; the counts above; a type and op per call. */
        static const struct {
            bool direct;
            int collapse;
        } forms[] = {{false, 0}, {false, 1}, {false, 2}, {true, 0}, {true, 1}};
        static const weft_dtype types[] = {WEFT_DTYPE_INT32,  WEFT_DTYPE_FLOAT,
                                           WEFT_DTYPE_INT8,   WEFT_DTYPE_HALF,
                                           WEFT_DTYPE_UINT64, WEFT_DTYPE_BFLOAT16};
        int n = 0;
        for (int m : modes)
            for (const auto &f : forms)
                for (size_t ci = 0; ci < counts.size(); ci++, n++) {
                    if (!opt.all && (n + (int)(h >> 30)) % 2) continue; /* half the grid */
                    EmuCase c;
                    c.inplace = m;
                    c.direct = f.direct;
                    c.collapse = f.collapse;
                    c.count = counts[ci];
                    c.dt = types[(h >> (32 + n % 16)) % 6];
                    c.op = reduces ? (weft_redop)((h >> (36 + n % 20)) % 4) : WEFT_OP_SUM;
                    c.seed = (uint32_t)(seed * 31 + (uint64_t)n);
                    std::string err = emu_check_case(*emp, 0, c, st.emu);
                    if (!err.empty() && opt.all) {
                        fprintf(stderr, "FAIL %s\n", err.c_str());
                        ok = false;
                        /* a stalled communicator is left as the watchdog found it: a new one */
                        if (!(emp = fresh())) goto done;
                        continue;
                    }
                    if (!err.empty()) {
                        fprintf(stderr, "FAIL %s\n", err.c_str());
                        save_xml(a, opt.save, err.c_str());
                        st.failed++;
                        ok = false;
                        goto done;
                    }
                }
    }
done:
    weft_verify_summary_free(&sum);
    weft_diag_free(d);
    weft_algo_free(a);
    return ok;
}

/* --dump: every rank's plan in each mode as the interpreter walks it (tb records, then the
 * runner of a collapsed rank), for reading a reproducer. */
void dump_plan(const EmuComm &em) {
    static const char bc[] = "ios";
    for (int mi = 0; mi < 2; mi++) {
        const weft_mode_plan *m = &em.plans[0].mode[mi];
        if (!m->sched || !m->ranks) continue;
        fprintf(stderr, "== %s: collapsed %d, fused %d, direct %d, gain %d\n",
                mi ? "in place" : "out of place", m->collapsed, m->fused, m->direct,
                m->collapse_gain);
        for (int r = 0; r < em.n; r++) {
            const weft_rank_plan *rp = &m->ranks[r];
            for (int t = 0; t < rp->nrec; t++) {
                const weft_dtb *tb = &rp->tbs[t];
                fprintf(stderr, "rank %d %s %d (send %d recv %d chan %d)\n", r,
                        tb->runner ? "runner" : "tb", t, tb->speer, tb->rpeer, tb->chan);
                for (int s = 0; s < tb->nsteps; s++) {
                    const weft_dstep *d = &rp->steps[tb->first + s];
                    fprintf(stderr,
                            "  %2d %-4s %c%d -> %c%d cnt %d flags %#x dep %d/%d+%d post %d "
                            "(tb %d step %d)",
                            s, weft_step_name((weft_step_type)d->type), bc[d->srcbuf % 3],
                            d->srcoff, bc[d->dstbuf % 3], d->dstoff, d->cnt, d->flags, d->depid,
                            d->dep_stride, d->dep_target, d->post, d->otb, d->orig);
                    if (d->flags & WEFT_DSTEP_F_DST2)
                        fprintf(stderr, " dst2 %c%d", bc[d->dst2buf % 3], d->dst2off);
                    int base = tb->runner ? tb->xbase : 0;
                    for (int side = 0; side < 2; side++) {
                        int cnt = side ? d->nsend : d->nrecv, x0 = side ? d->xsend : d->xrecv;
                        if (side == 1 && !(d->flags & WEFT_DSTEP_F_XCONN) && !tb->runner) cnt = 0;
                        for (int i = 0; i < cnt; i++) {
                            const weft_drecv &e = rp->xrecv[base + x0 + i];
                            if (e.tb >= 0)
                                fprintf(stderr, " %s[tb %d msg %d/%d %c%d ord %d]",
                                        side ? "send" : "recv", e.tb, e.k, e.per, bc[e.pbuf % 3],
                                        e.poff, e.ord);
                            else
                                fprintf(stderr, " local[%c%d ord %d]", bc[e.pbuf % 3], e.poff,
                                        e.ord);
                            if (d->flags & WEFT_DSTEP_F_SCATTER)
                                fprintf(stderr, "->%c%d", bc[e.dbuf % 3], e.doff);
                        }
                    }
                    fprintf(stderr, "\n");
                }
            }
        }
    }
}

void report(const Stats &st, double secs) {
    static const char *const cn[] = {
#define WEFT_X_(id, n, is, os, red, root, run, bw) n,
        WEFT_COLLS(WEFT_X_)
#undef WEFT_X_
    };
    fprintf(stderr,
            "fuzz_diff: seeds %llu..%llu: %ld schedules, %ld gave up, %ld refused by the verifier, "
            "%ld refused by the runtime at load, %ld run (%ld steps), %ld failed\n",
            (unsigned long long)opt.seed, (unsigned long long)(opt.seed + st.seeds - 1), st.seeds,
            st.gaveup, st.rejected, st.refused, st.run, st.steps, st.failed);
    fprintf(stderr,
            "  %ld CPU executions, %ld emulated calls (%ld direct, %ld with groups, %ld with fused "
            "receives, %ld collapsed, %ld mixed); %.1f s, %.0f verified schedules per minute\n",
            st.cpu_calls, st.emu.cases, st.emu.direct, st.emu.groups, st.emu.fused,
            st.emu.collapsed, st.emu.mixed, secs, secs > 0 ? 60.0 * (double)st.run / secs : 0.0);
    fprintf(stderr, "  run by collective:");
    for (int c = 0; c < WEFT_COLL_COUNT; c++)
        if (st.by_coll[c]) fprintf(stderr, " %s %ld", cn[c], st.by_coll[c]);
    fprintf(stderr, "; Simple %ld, LL %ld, LL128 %ld (%ld on the GPU's lanes); in place %ld; ranks",
            st.by_proto[0], st.by_proto[1], st.by_proto[2], st.lanes, st.inplace);
    for (int r = 2; r <= 8; r++)
        if (st.ranks[r]) fprintf(stderr, " %d:%ld", r, st.ranks[r]);
    fprintf(stderr, "\n  verifier's refusals by class:");
    for (int c = 0; c < WEFT_VERIFY_CLASS_COUNT; c++)
        if (st.reject_class[c])
            fprintf(stderr, " %s %ld", weft_verify_class_name((weft_verify_class)c),
                    st.reject_class[c]);
    fprintf(stderr, "\n");
    for (const auto &r : st.refusals)
        fprintf(stderr, "  runtime refused %ld: %s\n", r.second, r.first.c_str());
}

int usage() {
    fprintf(stderr, "usage: fuzz_diff [--seed S] [--count N | --seconds T] [--ranks LO-HI] "
                    "[--save DIR] [--write DIR] [--unsafe PCT] [--file F]\n");
    return 2;
}

} // namespace

int main(int argc, char **argv) {
    rgen_opts_init(&opt.gen);
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        bool more = i + 1 < argc;
        if (!strcmp(a, "--seed") && more)
            opt.seed = strtoull(argv[++i], nullptr, 0), opt.seed_given = 1;
        else if (!strcmp(a, "--count") && more)
            opt.count = atol(argv[++i]);
        else if (!strcmp(a, "--seconds") && more)
            opt.seconds = atof(argv[++i]), opt.count = -1;
        else if (!strcmp(a, "--ranks") && more) {
            int lo = 0, hi = 0;
            if (sscanf(argv[++i], "%d-%d", &lo, &hi) == 2)
                opt.gen.min_ranks = lo, opt.gen.max_ranks = hi;
            else if (sscanf(argv[i], "%d", &lo) == 1)
                opt.gen.min_ranks = opt.gen.max_ranks = lo;
            else
                return usage();
        } else if (!strcmp(a, "--save") && more)
            opt.save = argv[++i];
        else if (!strcmp(a, "--write") && more)
            opt.write = argv[++i];
        else if (!strcmp(a, "--unsafe") && more)
            opt.gen.unsafe_pct = atoi(argv[++i]);
        else if (!strcmp(a, "--file") && more)
            opt.files.push_back(argv[++i]), opt.all = 1;
        else if (!strcmp(a, "--dump"))
            opt.dump = 1;
        else if (!strcmp(a, "-v"))
            opt.verbose = 1;
        else
            return usage();
    }
    Stats st;
    double t0 = now_s();
    if (!opt.files.empty()) { /* a reproducer: every case of its grid */
        int bad = 0;
        for (const char *f : opt.files) {
            weft_algo *a = nullptr;
            weft_diag *d = weft_diag_new();
            if (weft_ir_read_file(f, &a, d) != WEFT_OK) {
                weft_diag_print(d, stderr, WEFT_SEV_ERROR);
                bad = 1;
            } else {
                st.seeds++;
                /* a saved reproducer runs with its own seed's configuration and cases */
                unsigned long long n = 0;
                uint64_t seed = opt.seed_given || sscanf(a->name, "rgen-%llu", &n) != 1
                                    ? opt.seed
                                    : (uint64_t)n;
                bad |= !check(a, seed, st);
            }
            weft_diag_free(d);
        }
        report(st, now_s() - t0);
        return bad;
    }
    for (uint64_t s = opt.seed;; s++) {
        if (opt.count >= 0 && (long)(s - opt.seed) >= opt.count) break;
        if (opt.seconds > 0 && now_s() - t0 > opt.seconds) break;
        one(s, st);
        if (opt.verbose && st.seeds % 100 == 0) report(st, now_s() - t0);
    }
    report(st, now_s() - t0);
    if (st.run == 0) {
        fprintf(stderr, "fuzz_diff: no schedule ran\n");
        return 1;
    }
    return st.failed ? 1 : 0;
}
