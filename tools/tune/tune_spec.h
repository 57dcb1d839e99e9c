/* tune_spec.h — `weft tune`'s option table and the ids of its long-only options. */
#ifndef WEFT_TUNE_SPEC_H
#define WEFT_TUNE_SPEC_H

#include "opts.h"

enum {
    TUNE_OPT_MODES = 256,
    TUNE_OPT_LAUNCH,
    TUNE_OPT_BUFFERS,
    TUNE_OPT_CALLS,
    TUNE_OPT_PRECISION,
    TUNE_OPT_MAX_ROUNDS,
    TUNE_OPT_MARGIN,
    TUNE_OPT_NO_CHECK,
    TUNE_OPT_MERGE,
    TUNE_OPT_PLOT,
    TUNE_OPT_PLOT_ONLY,
    TUNE_OPT_VERIFY_MAX,
    TUNE_OPT_NO_VERIFY,
    TUNE_OPT_VERIFY_CALLS_SMALL
};

extern const weft_cmd_spec weft_spec_tune;
/* The collectives weft serves, in the order of weft_coll (-C's words). */
extern const char *const tune_coll_words[];

#endif
