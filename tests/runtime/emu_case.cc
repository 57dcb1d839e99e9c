/* emu_case.cc — one emulated call, checked (emu_case.h). */
#include "emu_case.h"
#include "refcheck.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <vector>

using namespace refcheck;

namespace {

const size_t GUARD = 64;

struct Buf {
    std::vector<char> mem;
    size_t bytes = 0;
    void alloc(size_t b) {
        bytes = b;
        mem.assign(b + 2 * GUARD, (char)0xA5);
    }
    char *p() {
        return mem.data() + GUARD;
    }
    bool guards_ok() const {
        for (size_t i = 0; i < GUARD; i++)
            if (mem[i] != (char)0xA5 || mem[GUARD + bytes + i] != (char)0xA5) return false;
        return true;
    }
};

std::string fmt(const char *f, ...) __attribute__((format(printf, 1, 2)));
std::string fmt(const char *f, ...) {
    char b[1024];
    va_list ap;
    va_start(ap, f);
    vsnprintf(b, sizeof b, f, ap);
    va_end(ap);
    return b;
}

} // namespace

std::string emu_case_name(const weft_algo *a, const EmuCase &c) {
    static const char *const cm[] = {"configured", "as written", "collapsed", "mixed"};
    return fmt("%s %s %s count=%zu %s%s, %s%s", a->name, weft_dtype_name(c.dt),
               weft_redop_name(c.op), c.count, c.inplace ? "in-place" : "out-of-place",
               c.direct ? " registered" : "", cm[c.collapse + 1],
               c.hop == 1 ? ", one-hop where it fits" : "");
}

std::string emu_check_case(EmuComm &em, int ai, const EmuCase &c, EmuTally &t) {
    const weft_algo *a = em.algos[ai];
    const int n = em.n;
    const weft_dtype dt = c.dt;
    const size_t count = c.count, es = (size_t)weft_dtype_size(dt);
    const int inplace = c.inplace;
    const weft_coll coll = a->coll;
    const int li = weft_coll_large(coll, WEFT_BUF_INPUT),
              lo = weft_coll_large(coll, WEFT_BUF_OUTPUT);
    const size_t ine = (li ? n : 1) * count, oute = (lo ? n : 1) * count;
    const int reduces = weft_coll_reduces(coll);
    const int root = weft_coll_rooted(coll) ? a->root : -1;
    const int32_t k = weft_algo_chunks_per_seg(a);
    const int64_t C = weft_chunk_elems((int64_t)count, k);
    const std::string name = emu_case_name(a, c);

    std::vector<std::vector<char>> in(n, std::vector<char>(ine * es));
    for (int r = 0; r < n; r++)
        for (size_t e = 0; e < ine; e++)
            put(dt, in[r].data(), e, small_val(c.seed, r, e, c.op));

    std::vector<Buf> b1(n), b2(n), scr(n);
    std::vector<std::vector<char *>> bufs(n, std::vector<char *>(3));
    for (int r = 0; r < n; r++) {
        char *ip, *op_;
        if (inplace) {
            b1[r].alloc((li || lo ? n : 1) * count * es);
            memset(b1[r].p(), 0x5A, b1[r].bytes);
            if (li == lo)
                ip = op_ = b1[r].p();
            else if (lo)
                op_ = b1[r].p(), ip = op_ + (size_t)r * count * es;
            else
                ip = b1[r].p(), op_ = ip + (size_t)r * count * es;
        } else {
            b1[r].alloc(ine * es);
            b2[r].alloc(oute * es);
            memset(b2[r].p(), 0x5A, b2[r].bytes);
            ip = b1[r].p(), op_ = b2[r].p();
        }
        memcpy(ip, in[r].data(), ine * es);
        scr[r].alloc((size_t)a->gpus[r].s_chunks * (size_t)C * es);
        bufs[r][0] = ip, bufs[r][1] = op_, bufs[r][2] = scr[r].p();
    }

    t.cases++;
    em.direct = c.direct;
    em.collapse = c.collapse == 2 ? 0 : c.collapse;
    em.collapse_ranks.clear();
    if (c.collapse == 2)
        for (int r = 0; r < n; r++)
            em.collapse_ranks.push_back((int)((r + c.seed) & 1));
    em.hop = c.hop;
    long before = em.collapsed_calls, hop_before = em.hop_calls;
    weft_result res = em.launch(ai, dt, c.op, count, inplace, bufs);
    const bool hopped = em.hop_calls > hop_before;
    t.hop += hopped;
    t.collapsed += em.collapsed_calls > before;
    t.mixed += c.collapse == 2 && em.collapsed_calls > before && em.collapsed_calls - before < n;
    t.direct += em.last.direct && !hopped;
    t.groups += em.last.K > 1 && !hopped;
    t.fused += em.plans[ai].mode[inplace ? 1 : 0].fused > 0 && !hopped;
    if (res != WEFT_OK) {
        char msg[1024] = "";
        for (int pass = 0; pass < 2 && !msg[0]; pass++) /* the stall itself before the aborts */
            for (int r = 0; r < n; r++)
                if (em.err[r].code && (pass == 1 || em.err[r].code != WEFT_RT_WAIT_ABORTED)) {
                    weft_errrec_format(&em.err[r], a, msg, sizeof msg);
                    break;
                }
        return fmt("%s: launch failed: %s %s", name.c_str(), weft_result_str(res), msg);
    }
    /* At a call boundary every connection is drained: the sender's count, the receiver's count
     * and (LL, LL128) the head agree, per key and member, whichever forms ran. */
    for (int32_t kk = 0; kk < em.lay.nkeys; kk++)
        for (int r = 0; r < n; r++) {
            int to = (r + em.lay.keys[kk].d) % n;
            for (int g = 0; g < em.lay.members[kk]; g++) {
                uint64_t sp = em.pos[r][em.lay.pos_off[kk] + 2 * g];
                uint64_t rp = em.pos[to][em.lay.pos_off[kk] + 2 * em.lay.members[kk] + 2 * g];
                uint64_t hd = *(uint64_t *)(void *)(em.win[r] + em.lay.head_off[kk] +
                                                    (size_t)g * WEFT_RT_LINE);
                if (sp != rp || (em.lay.keys[kk].proto != WEFT_RT_PROTO_SIMPLE && hd != sp))
                    return fmt("%s: after the call, rank %d to %d (distance %d, channel %d, "
                               "member %d): sent %llu, received %llu, returned %llu",
                               name.c_str(), r, to, em.lay.keys[kk].d, em.lay.keys[kk].chan, g,
                               (unsigned long long)sp, (unsigned long long)rp,
                               (unsigned long long)hd);
            }
        }

    int ki = weft_rt_kernel_index(dt, c.op, reduces);
    std::vector<char> exp;
    for (int r = 0; r < n; r++) {
        if (!expected(coll, n, r, root, count, es, ki, in, exp)) continue;
        const char *got = bufs[r][1];
        for (size_t e = 0; e < oute; e++)
            if (memcmp(got + e * es, exp.data() + e * es, es) != 0) {
                uint64_t g = 0, w = 0;
                memcpy(&g, got + e * es, es);
                memcpy(&w, exp.data() + e * es, es);
                return fmt("%s: rank %d output element %zu differs (and maybe more): bytes %#llx, "
                           "want %#llx",
                           name.c_str(), r, e, (unsigned long long)g, (unsigned long long)w);
            }
    }
    for (int r = 0; r < n; r++) {
        if (!b1[r].guards_ok() || (!inplace && !b2[r].guards_ok()) || !scr[r].guards_ok())
            return fmt("%s: rank %d wrote outside a buffer", name.c_str(), r);
        size_t e;
        int32_t x;
        if (!send_untouched(a, inplace, r, count, es, ine, bufs[r][0], in[r], &e, &x))
            return fmt("%s: rank %d changed element %zu of its send buffer (input chunk %d), "
                       "which NCCL never writes",
                       name.c_str(), r, e, x);
    }
    return "";
}
