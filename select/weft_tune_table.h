/* weft_tune_table.h — tuning tables (`weft tune`, docs/tune.md): the machine fingerprint, the
 * text format's one reader and writer, and the lookup the registry's selection makes; `weft
 * tune` writes what the registry reads (not installed). CPU-only; no CUDA or NCCL calls. */
#ifndef WEFT_TUNE_TABLE_H
#define WEFT_TUNE_TABLE_H

#include "weft_runtime.h"

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The newest format this weft reads and writes: version 2 adds a node shape to sections
 * (`gpus-per-node G`). A table is written as version 1 when every section is for one node, so
 * one-node tables stay readable by earlier weft; version 1 tables are read as one node. */
#define WEFT_TUNE_VERSION       2
#define WEFT_TUNE_VERSION_NODES 2
/* The largest table read: weft tune writes some kilobytes per collective and rank count, and
 * every process that loads an algorithm folder reads its table (a larger file is refused with
 * its size, not copied into each of them). */
#define WEFT_TUNE_MAX_BYTES ((size_t)64 << 20)
/* The file the registry looks for in each algorithm folder. */
#define WEFT_TUNE_FOLDER_FILE "weft-tune.txt"
/* A range's upper end when it has none. */
#define WEFT_TUNE_INF UINT64_MAX

/* ---- the machine ------------------------------------------------------------------------- */
/* What a table was measured on. Unknown fields (NULL, 0, nrpn 0) are not compared. */
typedef struct weft_machine {
    char *gpu;      /* model name(s), e.g. "NVIDIA H200" */
    int gpus;       /* GPUs on the node (all of them, whatever CUDA_VISIBLE_DEVICES says) */
    char *topology; /* NVLink/NVSwitch summary, e.g. "NVSwitch, 18 NVLinks per GPU" */
    int nccl;       /* NCCL version code (22809 = 2.28.9) */
    char *weft;     /* weft version */
    int rpn[16];    /* ranks per node: a table lists every count it was tuned with; a machine the
                     * launcher's local size */
    int nrpn;
} weft_machine;

void weft_machine_free(weft_machine *m);
weft_result weft_machine_copy(weft_machine *dst, const weft_machine *src);
/* This machine: GPUs and links from NVML (loaded with dlopen; absent: unknown), the NCCL of the
 * process (ncclGetVersion found with dlsym; absent: unknown), weft's version, and the ranks per
 * node the launcher announces (OMPI_COMM_WORLD_LOCAL_SIZE or LOCAL_WORLD_SIZE; absent: unknown).
 * Never fails: what cannot be found stays unknown. */
void weft_machine_detect(weft_machine *m);
/* NCCL's version code as text: 22809 -> "2.28.9", 0 -> "unknown". */
void weft_machine_nccl_str(int code, char *buf, size_t len);
/* 0 when every field known on both sides agrees (ranks per node: the machine's value is one
 * of the table's); otherwise 1 and why receives "GPU: table 'X' x 8, this machine 'Y' x 2;
 * ..." naming every field that differs. */
int weft_machine_differs(const weft_machine *table, const weft_machine *here, char *why,
                         size_t len);

/* ---- tables ------------------------------------------------------------------------------ */
/* A measured algorithm: the instance of a file for a rank count (and root), with the -D
 * defines it was built with and a hash of its schedule (weft_tune_algo_hash). */
typedef struct weft_tune_algo {
    char *id;      /* the name ranges and rows use: the algorithm's name, made unique */
    char *file;    /* the file's name without its folder */
    char *name;    /* the algorithm's name */
    char *defines; /* "SERVE=1,ANYN=1" or "" */
    int ranks, root;
    uint64_t hash;
    int line;
} weft_tune_algo;

/* What became of a candidate at one size. */
#define WEFT_TUNE_STATUSES(X)                                                                      \
    X(OK, "ok")                                                                                    \
    X(WRONG, "wrong")             /* its result differed from NCCL's: never chosen */              \
    X(UNSUPPORTED, "unsupported") /* the runtime would not run it (not eligible, capture) */

typedef enum weft_tune_status {
#define WEFT_X_(id, n) WEFT_TUNE_##id,
    WEFT_TUNE_STATUSES(WEFT_X_)
#undef WEFT_X_
        WEFT_TUNE_STATUS_COUNT
} weft_tune_status;

typedef struct weft_tune_meas {
    int algo; /* index into the table's algos */
    weft_tune_status status;
    double us;            /* median time per call, microseconds (OK only) */
    double ratio, lo, hi; /* median of the per-round ratios to NCCL's time, and its 95% interval */
} weft_tune_meas;

/* One measured size: NCCL's time and every candidate's, and what was chosen. */
typedef struct weft_tune_row {
    uint64_t bytes;
    int rounds;     /* interleaved rounds measured */
    double nccl_us; /* NCCL's median time per call */
    int choice;     /* -1 NCCL, else an index into the table's algos */
    weft_tune_meas *m;
    size_t nm, capm;
    /* Comment lines written right after the row's `at` line, one per '\n'-separated line (weft
     * tune's verification through the shim says there what it found); kept by the reader, so a
     * table read and written again keeps them. NULL for none. */
    char *note;
    int line;
} weft_tune_row;

/* Sizes [lo, hi] (bytes as nccl-tests counts them) served by choice (-1 NCCL). */
typedef struct weft_tune_range {
    uint64_t lo, hi;
    int choice;
    int line;
} weft_tune_range;

/* Calls of one collective, rank count, node shape, buffer mode and kind (WEFT_CALL_* flags). Its
 * ranges cover every size from 0 up, in order; rows are the evidence. */
typedef struct weft_tune_section {
    weft_coll coll;
    int ranks;
    int gpn; /* GPUs per node: ranks n*gpn .. n*gpn+gpn-1 on node n; ranks when one node */
    int inplace;
    unsigned flags;
    weft_tune_range *ranges;
    size_t nranges, capranges;
    weft_tune_row *rows;
    size_t nrows, caprows;
    int line;
} weft_tune_section;

typedef struct weft_tune_kv {
    char *key, *value;
} weft_tune_kv;

typedef struct weft_tune_table {
    char *path; /* for diagnostics; may be NULL */
    weft_machine machine;
    int machine_line;
    weft_tune_kv *run; /* how it was measured (`run` line), kept as written */
    size_t nrun, caprun;
    weft_tune_algo *algos;
    size_t nalgos, capalgos;
    weft_tune_section *secs;
    size_t nsecs, capsecs;
} weft_tune_table;

weft_tune_table *weft_tune_table_new(void);
void weft_tune_table_free(weft_tune_table *t);
weft_tune_table *weft_tune_table_clone(const weft_tune_table *t);

/* Reads and checks a table: errors name file:line; WEFT_ERR_INPUT when any. */
weft_result weft_tune_read_file(const char *path, weft_tune_table **out, weft_diag *d);
weft_result weft_tune_read_string(const char *text, size_t len, const char *name,
                                  weft_tune_table **out, weft_diag *d);
/* The format docs/tune.md describes; deterministic, so a table read and written again is the
 * same text. write_file writes path as every weft output is (weft_out_open: through links, into
 * FIFOs, a regular file replaced whole keeping its mode; "-" is standard output). */
weft_result weft_tune_write(const weft_tune_table *t, FILE *out);
weft_result weft_tune_write_file(const weft_tune_table *t, const char *path, weft_diag *d);
/* The same checks the reader makes, for a table built in memory. */
weft_result weft_tune_validate(const weft_tune_table *t, weft_diag *d);

/* Builders (tables made by `weft tune`). Each returns the new element, NULL on allocation
 * failure; strings are copied. */
weft_result weft_tune_set_run(weft_tune_table *t, const char *key, const char *value);
int weft_tune_add_algo(weft_tune_table *t, const char *file, const char *name, const char *defines,
                       int ranks, int root, uint64_t hash);
/* A section for one node (gpn = ranks); set gpn for a section across nodes. */
weft_tune_section *weft_tune_add_section(weft_tune_table *t, weft_coll coll, int ranks, int inplace,
                                         unsigned flags);
weft_tune_row *weft_tune_add_row(weft_tune_section *s, uint64_t bytes);
weft_tune_meas *weft_tune_add_meas(weft_tune_row *r, int algo);
/* Appends a line to r's note (a copy); WEFT_ERR_NOMEM on failure. */
weft_result weft_tune_add_note(weft_tune_row *r, const char *line);
weft_tune_range *weft_tune_add_range(weft_tune_section *s, uint64_t lo, uint64_t hi, int choice);
/* Ranges from the rows' choices: consecutive sizes with the same choice form one range; the
 * first starts at 0, each later one at its first measured size, the last has no upper end. */
weft_result weft_tune_ranges_from_rows(weft_tune_section *s);
/* Copies into dst every section of src that dst lacks (same collective, ranks, node shape, mode,
 * flags), with the algorithms they name, and the ranks per node. The machines must agree
 * otherwise. */
weft_result weft_tune_merge(weft_tune_table *dst, const weft_tune_table *src, weft_diag *d);

/* The section for a call on ranks ranks in nodes of gpn GPUs (gpn <= 0 or >= ranks: one node),
 * or NULL: a section of another node shape never answers. Rooted collectives have one section
 * per launch kind,
 * measured out of place on unregistered buffers: NCCL ignores the buffers of non-root ranks, so
 * the ranks cannot agree on the root's buffer mode or on its buffers being registered, and the
 * lookup must not depend on either. */
const weft_tune_section *weft_tune_find(const weft_tune_table *t, weft_coll coll, int ranks,
                                        int gpn, int inplace, unsigned flags);
/* The GPUs per node of a section key: gpn, or ranks when gpn says one node (<= 0, >= ranks). */
int weft_tune_shape(int ranks, int gpn);
const weft_tune_range *weft_tune_range_of(const weft_tune_section *s, uint64_t bytes);
/* The measured row nearest below or at bytes (the evidence for a range), or NULL. */
const weft_tune_row *weft_tune_row_of(const weft_tune_section *s, uint64_t bytes);
/* The size of a call (weft_coll_footprint); 0 on overflow. */
uint64_t weft_tune_call_bytes(const weft_call *c);
/* "allreduce 8 ranks out-of-place eager unregistered", across nodes "allreduce 8 ranks in 2
 * nodes of 4 out-of-place eager unregistered" */
void weft_tune_section_str(const weft_tune_section *s, char *buf, size_t len);
/* Bytes as "1 MB", "64 KB", "8 B" (powers of 1024, exact when they divide). */
void weft_tune_bytes_str(uint64_t b, char *buf, size_t len);

/* A hash of what an algorithm computes and how (its schedule and header, not its name, file or
 * size range): the same file compiled the same way hashes the same. 64-bit FNV-1a of its
 * canonical XML. 0 on allocation failure. */
uint64_t weft_tune_algo_hash(const weft_algo *a);

#ifdef __cplusplus
}
#endif
#endif
