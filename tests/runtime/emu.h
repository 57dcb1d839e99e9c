/* emu.h — runs the GPU interpreter (runtime/interp.h) on the host: every CTA of every rank is a
 * group of threads with a barrier, windows are host memory. Tests the protocols, the count
 * policy and the watchdog without a GPU (and under ThreadSanitizer). C++17. */
#ifndef WEFT_TESTS_EMU_H
#define WEFT_TESTS_EMU_H

#include "runtime_internal.h"

#include <string>
#include <vector>

struct EmuComm {
    int n = 0;
    int nthreads = 2; /* threads per emulated CTA */
    weft_rt_cfg cfg{};
    weft_layout lay{};
    std::vector<const weft_algo *> algos;
    std::vector<weft_algo_plan> plans; /* parallel to algos; ranks == NULL when ineligible */
    std::vector<std::string> why;      /* why an algorithm is ineligible */
    std::vector<char *> win;
    std::vector<weft_dstate *> state;
    std::vector<std::vector<uint64_t>> pos;
    std::vector<std::vector<weft_dconn>> sc, rc;
    std::vector<std::vector<std::vector<char>>> rec;        /* [rank][algo] records */
    std::vector<std::vector<std::vector<weft_dprog>>> prog; /* [rank][algo][tb] */
    std::vector<weft_errrec> err;
    std::vector<int> start_delay_ms;   /* per rank: its threads start late (watchdog tests) */
    std::vector<weft_trace_dev> trace; /* per rank, when set: per-step records (tests/trace) */

    EmuComm() = default;
    EmuComm(const EmuComm &) = delete;
    EmuComm &operator=(const EmuComm &) = delete;
    ~EmuComm();
    weft_result attach(int nranks, const std::vector<const weft_algo *> &a, const weft_rt_cfg &c);
    /* Runs algorithm ai on every rank with the given buffers (bufs[r][0..2]: input, output,
     * scratch) and returns when all CTAs are done. */
    weft_result launch(int ai, weft_dtype dt, weft_redop op, size_t count,
                       const std::vector<std::vector<char *>> &bufs);
    bool any_error() const;
};

#endif
