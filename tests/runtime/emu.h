/* emu.h — runs the GPU interpreter (runtime/interp.h) on the host: every CTA of every rank is a
 * group of threads with a barrier, windows are host memory. Tests the protocols, thread-block
 * groups, direct transfers, the count policy and the watchdog without a GPU (and under
 * ThreadSanitizer). The plans, the window layout, the records and the call geometry are the
 * runtime's own (plan.c), as on the GPU. C++17. */
#ifndef WEFT_TESTS_EMU_H
#define WEFT_TESTS_EMU_H

#include "runtime_internal.h"

#include <array>
#include <string>
#include <vector>

struct EmuComm {
    int n = 0;
    int nthreads = 2; /* threads per emulated CTA */
    /* CTAs per tb at most (on a GPU: the device's CTA budget over the tbs), small so that
     * tests stay cheap yet groups run. */
    int max_group = 3;
    /* Every emulated thread an OS thread (always under ThreadSanitizer); otherwise coroutines
     * on the launching thread, much faster (emu.cc). */
    bool os_threads = false;
    /* LL128 calls on the GPU's lanes (HostPlat8: eight threads a line; nthreads 8 .. 32, a
     * multiple of 8) instead of a thread a line; coroutines only (under OS threads a thread a
     * line, as before). */
    bool ll128_lanes = false;
    /* Launch with every rank's buffers "registered" (as symmetric windows): transfers the plan
     * allows run direct, receivers reading the sender's buffer in place. */
    bool direct = false;
    /* Collapsed ranks (plan.c): -1 as the configuration says (cfg.collapse_bytes), 0 never,
     * 1 whenever the plan has them; per rank when collapse_ranks is not empty (ranks may run
     * different forms of one plan). collapsed_calls counts rank-calls that ran collapsed. */
    /* The one-hop kernel (hop.h): -1 as the configuration says (cfg.hop, weft_hop_call), 0 never,
     * 1 wherever weft_hop_call allows it with cfg.hop on. hop_calls counts calls that ran on it. */
    int hop = -1;
    long hop_calls = 0;
    int collapse = -1;
    std::vector<int> collapse_ranks;
    long collapsed_calls = 0;
    weft_rt_cfg cfg{};
    weft_layout lay{};
    std::vector<const weft_algo *> algos;
    std::vector<weft_algo_plan> plans; /* parallel to algos; algo == NULL when ineligible */
    std::vector<std::string> why;      /* why an algorithm is ineligible */
    std::vector<char *> win;
    std::vector<weft_dstate *> state;
    std::vector<std::vector<uint64_t>> pos;
    std::vector<std::vector<weft_dconn>> sc, rc;
    /* [rank][algo][mode] records */
    std::vector<std::vector<std::array<std::vector<char>, 2>>> rec;
    std::vector<std::vector<std::vector<weft_dprog>>> prog; /* [rank][algo][tb x kmax] */
    std::vector<weft_errrec> err;
    std::vector<int> start_delay_ms;   /* per rank: its threads start late (watchdog tests) */
    std::vector<weft_trace_dev> trace; /* per rank, when set: per-step records (tests/trace) */
    weft_call_geom last{};             /* the geometry of the last launch */

    EmuComm() = default;
    EmuComm(const EmuComm &) = delete;
    EmuComm &operator=(const EmuComm &) = delete;
    ~EmuComm();
    weft_result attach(int nranks, const std::vector<const weft_algo *> &a, const weft_rt_cfg &c);
    bool eligible(int ai) const {
        return ai >= 0 && (size_t)ai < plans.size() && plans[ai].algo != nullptr;
    }
    /* Runs algorithm ai on every rank with the given buffers (bufs[r][0..2]: input, output,
     * scratch) in the given call mode and returns when all CTAs are done. */
    weft_result launch(int ai, weft_dtype dt, weft_redop op, size_t count, int inplace,
                       const std::vector<std::vector<char *>> &bufs);
    bool any_error() const;

  private:
    weft_result launch_hop(int ai, int ki, weft_dtype dt, size_t count, int inplace,
                           const std::vector<std::vector<char *>> &bufs, int32_t nb, int32_t S);
};

#endif
