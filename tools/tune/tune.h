/* tune.h — `weft tune`: its options, the measurement loop written against a backend (the GPUs
 * through MPI, NCCL and weft_runtime.h in weft-tune; scripted timings in the tests), the decision
 * per size, and the picture of a table. */
#ifndef WEFT_TUNE_H
#define WEFT_TUNE_H

#include "weft_select.h"
#include "weft_tune_table.h"

#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---- options ----------------------------------------------------------------------------- */
#define TUNE_MAX_DEFINES 32

typedef struct tune_opts {
    const char *paths; /* -d */
    const char *out;   /* -o */
    unsigned colls;    /* bit per weft_coll; 0: every collective some candidate fits */
    uint64_t minb, maxb;
    double factor;
    int modes;    /* bit 0 out-of-place, bit 1 in-place */
    int launches; /* bit 0 eager, bit 1 graph */
    int buffers;  /* bit 0 unregistered, bit 1 registered */
    const char *defines[TUNE_MAX_DEFINES];
    int ndefines;
    int iters;         /* per implementation and size, at least */
    int calls;         /* calls per timed sample (nccl-tests -n) */
    int warmup;        /* launches per implementation and size before timing */
    double precision;  /* a ratio known to +- this is settled */
    int max_factor;    /* rounds at most this many times the first ones */
    double margin;     /* a candidate must beat NCCL by this much more than the noise */
    int check;         /* compare every candidate's result with NCCL's first */
    int verify;        /* time the table's choices through the shim's selection before writing */
    double verify_max; /* ... and drop one whose weft/NCCL time is above this beyond the noise */
    /* the verification's calls per sample below 1 MB (compare_nccl.sh's --iters-small); from
     * 1 MB it takes calls, as --iters there */
    int verify_calls_small;
    int merge, plot, quiet;
    const char *plot_only; /* --plot-only TABLE: draw it, measure nothing */
} tune_opts;

void tune_opts_default(tune_opts *o);
/* 0: run; 1: --help was given (printed to stdout); 2: usage error (said on err). err NULL: say
 * nothing (every MPI rank but the first). */
int tune_opts_parse(int argc, char **argv, tune_opts *o, FILE *err);
/* "TABLE.svg" for "TABLE.txt" (or TABLE + ".svg"), malloc'd. */
char *tune_plot_path(const char *table);

/* ---- the backend ------------------------------------------------------------------------- */
/* One call to measure: float sum, root 0 for rooted collectives. */
typedef struct tune_point {
    weft_coll coll;
    int nranks, inplace;
    unsigned flags; /* WEFT_CALL_GRAPH, WEFT_CALL_REGISTERED */
    uint64_t bytes; /* as nccl-tests counts them */
    size_t count;   /* NCCL's count argument (floats) */
    /* The verification's points are timed as compare_nccl.sh's nccl-tests run for their size
     * times them (weft_nt_run_of): calls per sample (its -n) and the bound its -e puts on where
     * a sample's calls are moved (weft_nt_shift; the buffers hold at least that). 0 while
     * searching: --calls, and the buffers' whole size. */
    int calls;
    uint64_t maxbytes;
} tune_point;

/* Every function is collective (every rank calls it, in the same order) unless it says
 * otherwise; each returns a weft_tune_status (>= 0) or -1 on a failure that ends the run. impl
 * is -1 for NCCL or an index of the registry's algorithms. */
typedef struct tune_backend {
    void *ctx;
    int rank, nranks;
    /* Send and receive buffers of `bytes` bytes, registered as symmetric windows or not; a kind
     * the machine cannot give is WEFT_TUNE_UNSUPPORTED with why (the same on every rank). */
    int (*buffers)(void *ctx, int registered, uint64_t bytes, char *why, size_t len);
    /* Runs impl once on fresh inputs and compares its output with NCCL's: OK or WRONG (this
     * rank's view), or UNSUPPORTED when weft would not launch it. */
    int (*check)(void *ctx, const tune_point *p, int impl);
    /* n eager launches (warm-up: scratch, caches, clocks), then waits for them. */
    int (*warm)(void *ctx, const tune_point *p, int impl, int n);
    /* Graph points: whether n launches of impl can be captured into a CUDA graph (UNSUPPORTED:
     * cannot); the first capture's one-time costs are paid here, untimed. */
    int (*capture)(void *ctx, const tune_point *p, int impl, int n);
    /* One timed sample as nccl-tests takes it: one call completed, a barrier, then n calls (or a
     * graph of n captured for the sample, launched once), call i's buffers moved by
     * weft_nt_shift(footprint, p->maxbytes or the buffers' size, i); *us = time per call on this
     * rank, from the host's clock to the stream's end. */
    int (*sample)(void *ctx, const tune_point *p, int impl, int n, double *us);
    /* Frees what capture made for the point, if anything. */
    void (*release)(void *ctx, const tune_point *p);
    /* Every rank's n values, rank after rank, into all (n * nranks values). Exact: the ranks'
     * decisions are computed from the same numbers in the same order, so they agree. */
    int (*allgather)(void *ctx, const double *mine, int n, double *all);
    /* Seconds, for the ETA (local). */
    double (*now)(void *ctx);
    /* Verification, once the table is decided: from now on impl >= 0 names an algorithm of reg,
     * the registry libweft_nccl.so builds for the new table (tune_shim_registry), and weft's
     * calls of a point's own kind go as the shim sends them: the runtime attached to reg selects
     * the algorithm for the call (weft_comm_select: the table's section by launch kind and
     * buffers, the range by size), which must be impl (else those calls are UNSUPPORTED), and
     * launches it. Frees the buffers: buffers() is called again before any point. why says
     * what failed (-1). */
    int (*through)(void *ctx, const weft_registry *reg, char *why, size_t len);
} tune_backend;

/* ---- checking ---------------------------------------------------------------------------- */
/* A check's input: element i of rank's input buffer, a small integer so that float sums are
 * exact in any order. */
float tune_input(int rank, size_t i);
/* What p's output must hold on rank when every rank's input is tune_input (float sum, root 0),
 * from the collective's definition (weft_coll_source): out[] receives outb / 4 floats and def[i]
 * whether element i is defined (a non-root rank's output of reduce and gather is not). The check
 * compares weft's output with this, not with NCCL's: NCCL's own path differs by section (an
 * eager call on a captured communicator, zero-copy on registered windows), and a difference there
 * must not be read as weft's. */
void tune_expected(const tune_point *p, int rank, float *out, unsigned char *def, size_t outb);
/* The first element where got differs from want where defined, or (size_t)-1. */
size_t tune_first_diff(const float *want, const unsigned char *def, const float *got, size_t n);

/* ---- measuring --------------------------------------------------------------------------- */
/* The decision at one size from the interleaved rounds: t[r * nimpl + k] is the time of
 * implementation k (0 NCCL, 1.. the candidates) in round r, averaged over the ranks; ok[k] says
 * whether candidate k ran correctly. */
typedef struct tune_stat {
    double us;            /* median time */
    double ratio, lo, hi; /* median of the per-round ratios to NCCL and its 95% interval */
} tune_stat;

void tune_stats(const double *t, int rounds, int nimpl, tune_stat *st);
/* Whether more rounds could change the decision: 0 when every runnable candidate's interval is
 * clear of the threshold thr (1 - margin when choosing, the largest ratio kept when verifying)
 * or known to +-precision. */
int tune_unsettled(const tune_stat *st, const int *ok, int nimpl, double thr, double precision);
/* The winner: among the candidates whose whole interval lies below 1 - margin (faster than NCCL
 * by more than the noise), the lowest median ratio; candidates whose intervals overlap the
 * best's are tied with it and the first in registry order wins. 0 (NCCL) when none. */
int tune_decide(const tune_stat *st, const int *ok, int nimpl, double margin);

/* Verifying a choice: dropped when its ratio to NCCL through the shim is above max beyond the
 * noise (its whole 95% interval), kept otherwise. */
int tune_verify_drops(const tune_stat *st, double max);
/* The ratio a verified choice reads as, given NCCL's statistics st[0] and weft's st[1]: weft's
 * median time over NCCL's, as compare_nccl.sh compares nccl-tests' runs (its medians' ratio per
 * size and mode), not the median of the paired ratios the decision uses. The "worst ratio kept"
 * is the largest of these. */
double tune_verify_ratio(const tune_stat *st);

/* The registry libweft_nccl.so builds with table t for a communicator of nranks ranks in nodes
 * of gpn GPUs (gpn == nranks: one node), made by the functions it uses: the folders of paths
 * loaded as weft_registry_load loads them (t in place of a table found there), then
 * weft_registry_for_nodes. *base_out holds what *out was made from; free both. Notes about the
 * table's algorithms (missing, changed) are added to d as warnings: the shim would not follow
 * the table there. */
weft_result tune_shim_registry(const char *paths, const weft_tune_table *t, int nranks, int gpn,
                               weft_registry **base_out, weft_registry **out, weft_diag *d);

/* Runs every measurement on this rank (collective) and returns the table, the same on every
 * rank (checked). reg: the algorithms for the communicator (weft_registry_for_ranks_defines);
 * m: this machine (rank 0's is written); progress: where rank 0 reports, NULL for none; tty:
 * progress may redraw one line. Unless o->verify is 0, the decided table is then verified
 * through the shim's selection (b->through) before it is returned: every size a range gives to
 * weft is timed against NCCL again, as the shim would serve it, and a choice above
 * o->verify_max beyond the noise goes to NCCL (said in progress, in a warning in d, and in a
 * comment under its `at` line); the run's `verify` and `verified` entries record the rule and
 * the summary. Failures of the backend and disagreements end it with an error in d. */
weft_result tune_run(const tune_opts *o, const tune_backend *b, const weft_registry *reg,
                     const weft_machine *m, FILE *progress, int tty, weft_tune_table **out,
                     weft_diag *d);

/* Collective: WEFT_OK when every rank holds the same table (compared by a hash of its text),
 * else WEFT_ERR_INTERNAL with an error in d on every rank. tune_run ends with it. */
weft_result tune_agree(const tune_backend *b, const weft_tune_table *t, weft_diag *d);

/* ---- the picture ------------------------------------------------------------------------- */
/* Draws every section of t (time and bus bandwidth against size, one line per candidate and
 * NCCL, the chosen ranges marked) as one SVG file. */
weft_result tune_plot(const weft_tune_table *t, const char *path, weft_diag *d);

#ifdef __cplusplus
}
#endif
#endif
