/* emu_case.h — one emulated call of a schedule, checked against the collective's definition:
 * every rank's output, buffers' guard bytes, what NCCL never writes left alone, connections
 * drained. Shared by test_emu and the differential fuzzer (tests/fuzz). C++17. */
#ifndef WEFT_TESTS_EMU_CASE_H
#define WEFT_TESTS_EMU_CASE_H

#include "emu.h"

#include <string>

struct EmuCase {
    weft_dtype dt = WEFT_DTYPE_INT32;
    weft_redop op = WEFT_OP_SUM;
    size_t count = 1;
    int inplace = 0;
    uint32_t seed = 1;   /* the input data */
    bool direct = false; /* buffers registered: direct transfers where the plan allows them */
    /* -1: as the configuration says; 0: as written; 1: collapsed where the plan has it; 2: the
     * ranks differ (rank r collapsed when (r + seed) is odd). */
    int collapse = 0;
    /* the one-hop kernel: -1 as the configuration says, 0 never, 1 wherever the plan allows */
    int hop = -1;
};

/* What the checked calls exercised. */
struct EmuTally {
    long cases = 0, direct = 0, groups = 0, fused = 0, collapsed = 0, mixed = 0, hop = 0;
};

/* "algo type op count=N mode": how a case is named in messages. */
std::string emu_case_name(const weft_algo *a, const EmuCase &c);

/* Runs c with algorithm ai of em (eligible) and checks it; "" when right, else what went wrong
 * (the first difference; a stall names the step the watchdog saw). */
std::string emu_check_case(EmuComm &em, int ai, const EmuCase &c, EmuTally &t);

#endif
