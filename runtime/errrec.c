/* errrec.c — the watchdog's error records as text: which rank, tb and step waited (and its XML
 * line), for what and how long. */
#include "runtime_internal.h"

#include <stdio.h>

void weft_errrec_format(const weft_errrec *e, const weft_algo *a, char *buf, size_t len) {
    char where[512] = "";
    const char *file = a && a->file ? a->file : (a ? a->name : "?");
    int32_t line = 0;
    if (a && e->rank >= 0 && e->rank < a->ngpus && e->tb >= 0 && e->tb < a->gpus[e->rank].ntbs &&
        e->step >= 0 && e->step < a->gpus[e->rank].tbs[e->tb].nsteps)
        line = a->gpus[e->rank].tbs[e->tb].steps[e->step].line;
    if (line > 0)
        snprintf(where, sizeof where, "rank %d tb %d step %d (%s:%d)", e->rank, e->tb, e->step,
                 file, line);
    else
        snprintf(where, sizeof where, "rank %d tb %d step %d (%s)", e->rank, e->tb, e->step, file);
    double ms = (double)e->waited_ns / 1e6;
    switch ((weft_rt_wait)e->code) {
    case WEFT_RT_WAIT_DATA:
        snprintf(buf, len,
                 "%s: timed out after %.0f ms in iteration %lld waiting for data from rank %d on "
                 "channel %d (message %llu; the sender has posted %llu)",
                 where, ms, (long long)e->iter, e->peer, e->chan, (unsigned long long)e->want,
                 (unsigned long long)e->seen);
        break;
    case WEFT_RT_WAIT_CREDIT:
        snprintf(buf, len,
                 "%s: timed out after %.0f ms in iteration %lld waiting for FIFO credit from rank "
                 "%d on channel %d (needs %llu messages consumed; rank %d has consumed %llu)",
                 where, ms, (long long)e->iter, e->peer, e->chan, (unsigned long long)e->want,
                 e->peer, (unsigned long long)e->seen);
        break;
    case WEFT_RT_WAIT_DEP:
        snprintf(buf, len,
                 "%s: timed out after %.0f ms in iteration %lld waiting for tb %d step %d "
                 "(which has not finished it)",
                 where, ms, (long long)e->iter, e->depid, e->deps);
        break;
    case WEFT_RT_WAIT_ABORTED:
        snprintf(buf, len, "%s: stopped because rank %d gave up (see that rank's report)", where,
                 e->peer);
        break;
    default: snprintf(buf, len, "%s: unknown watchdog record %u", where, e->code); break;
    }
}
