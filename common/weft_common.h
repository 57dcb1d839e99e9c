/* weft_common.h — result codes, diagnostics, logging and environment shared by every layer. */
#ifndef WEFT_COMMON_H
#define WEFT_COMMON_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__)
#define WEFT_API          __attribute__((visibility("default")))
#define WEFT_PRINTF(f, a) __attribute__((format(printf, f, a)))
#else
#define WEFT_API
#define WEFT_PRINTF(f, a)
#endif

/* ---- result codes ----------------------------------------------------------------------- */
/* X(name, text): one table feeds the enum and weft_result_str(). */
#define WEFT_RESULTS(X)                                                                            \
    X(OK, "success")                                                                               \
    X(ERR_INPUT, "invalid input")                                                                  \
    X(ERR_USAGE, "invalid usage")                                                                  \
    X(ERR_NOMEM, "out of memory")                                                                  \
    X(ERR_SYSTEM, "system error")                                                                  \
    X(ERR_UNSUPPORTED, "not supported")                                                            \
    X(ERR_CUDA, "CUDA error")                                                                      \
    X(ERR_NCCL, "NCCL error")                                                                      \
    X(ERR_TIMEOUT, "timed out")                                                                    \
    X(ERR_INTERNAL, "internal error")

typedef enum weft_result {
#define WEFT_X_(n, t) WEFT_##n,
    WEFT_RESULTS(WEFT_X_)
#undef WEFT_X_
        WEFT_RESULT_COUNT
} weft_result;

WEFT_API const char *weft_result_str(weft_result r);

/* Called by WEFT_CHECK on the way up so that a failure leaves a file:line trail at TRACE level. */
void weft_trace_failure(const char *file, int line, weft_result r);

/* Every fallible function declares `weft_result res = WEFT_OK;` and ends in a `fail:` label that
 * frees in reverse order and returns res. */
#define WEFT_CHECK(call)                                                                           \
    do {                                                                                           \
        weft_result weft_r_ = (call);                                                              \
        if (weft_r_ != WEFT_OK) {                                                                  \
            weft_trace_failure(__FILE__, __LINE__, weft_r_);                                       \
            res = weft_r_;                                                                         \
            goto fail;                                                                             \
        }                                                                                          \
    } while (0)
#define WEFT_CHECK_ALLOC(ptr) WEFT_CHECK((ptr) == NULL ? WEFT_ERR_NOMEM : WEFT_OK)
#define WEFT_FAIL(code)                                                                            \
    do {                                                                                           \
        res = (code);                                                                              \
        weft_trace_failure(__FILE__, __LINE__, res);                                               \
        goto fail;                                                                                 \
    } while (0)

/* ---- diagnostics ------------------------------------------------------------------------ */
#define WEFT_SEVERITIES(X)                                                                         \
    X(ERROR, "error")                                                                              \
    X(WARNING, "warning")                                                                          \
    X(NOTE, "note")                                                                                \
    X(INFO, "info")

typedef enum weft_severity {
#define WEFT_X_(n, t) WEFT_SEV_##n,
    WEFT_SEVERITIES(WEFT_X_)
#undef WEFT_X_
} weft_severity;

typedef struct weft_diag_entry {
    weft_severity sev;
    char *file; /* may be NULL */
    int line;   /* 1-based, 0 = none */
    int col;    /* 1-based, 0 = none */
    char *msg;
    char *source;  /* the source line for a caret, or NULL */
    int caret_len; /* length of the underlined span, >= 1 when source is set */
    /* 1-based column of the caret in source when source is an excerpt of a long line (it then
     * begins and ends with "..."); 0: the caret is under col */
    int caret_col;
    unsigned flags; /* WEFT_DIAG_COMPAT... */
} weft_diag_entry;

/* Entry flags. COMPAT: a warning about a limit of MSCCL's or RCCL's loaders (channels, thread
 * blocks, steps, cnt), which weft's own runtime does not have; `weft select` shows them only
 * with --compat. */
#define WEFT_DIAG_COMPAT 1u

/* A collector of diagnostics. Every library function that can reject input takes a weft_diag*;
 * NULL is allowed and discards messages. Stores at most WEFT_DIAG_MAX entries so that garbage
 * input cannot make it grow without bound; the overflow is counted. */
typedef struct weft_diag weft_diag;
#define WEFT_DIAG_MAX 200

/* Owned by the caller; free with weft_diag_free. */
WEFT_API weft_diag *weft_diag_new(void);
WEFT_API void weft_diag_free(weft_diag *d);
WEFT_API void weft_diag_add(weft_diag *d, weft_severity sev, const char *file, int line, int col,
                            const char *fmt, ...) WEFT_PRINTF(6, 7);
WEFT_API void weft_diag_vadd(weft_diag *d, weft_severity sev, const char *file, int line, int col,
                             const char *fmt, va_list ap);
/* As weft_diag_add, with the source line and the length of the span to underline. */
WEFT_API void weft_diag_add_src(weft_diag *d, weft_severity sev, const char *file, int line,
                                int col, const char *source_line, int caret_len, const char *fmt,
                                ...) WEFT_PRINTF(8, 9);
/* As weft_diag_add_src with the caret at caret_col of source (see weft_diag_entry). */
WEFT_API void weft_diag_vadd_src(weft_diag *d, weft_severity sev, const char *file, int line,
                                 int col, const char *source, int caret_col, int caret_len,
                                 const char *fmt, va_list ap);
/* As weft_diag_add, the entry carrying flags. */
void weft_diag_add_flags(weft_diag *d, weft_severity sev, unsigned flags, const char *file,
                         int line, int col, const char *fmt, ...) WEFT_PRINTF(7, 8);
/* Removes the stored entries that have any of flags, and their counts. */
WEFT_API void weft_diag_drop(weft_diag *d, unsigned flags);
/* Adds every entry of from to d, in order, and counts what from counted past its cap. */
WEFT_API void weft_diag_append(weft_diag *d, const weft_diag *from);
WEFT_API size_t weft_diag_size(const weft_diag *d);
/* 1 when the next entry would only be counted (WEFT_DIAG_MAX are stored): a caller can then skip
 * building the message and call weft_diag_add anyway, which counts it cheaply. */
WEFT_API int weft_diag_full(const weft_diag *d);
WEFT_API const weft_diag_entry *weft_diag_get(const weft_diag *d, size_t i);
/* Number of entries of this severity, including those dropped past WEFT_DIAG_MAX. */
WEFT_API size_t weft_diag_count(const weft_diag *d, weft_severity sev);
/* Prints entries at least as severe as min_sev (ERROR < WARNING < NOTE < INFO), in order. */
WEFT_API void weft_diag_print(const weft_diag *d, FILE *out, weft_severity min_sev);
/* Formats one entry as it would be printed; returns a malloc'd string owned by the caller. */
WEFT_API char *weft_diag_format(const weft_diag_entry *e);
WEFT_API void weft_diag_clear(weft_diag *d);
WEFT_API const char *weft_severity_str(weft_severity s);

/* ---- environment ------------------------------------------------------------------------ */
/* X(id, name, alias or NULL, help). Every variable weft reads is listed here and read only
 * through weft_env_get(); the first read logs it at INFO when set. */
/* X(id, name, alias, help, kind): kind says which values are valid (weft_env_check), the help
 * what the variable does, its unit and default. */
#define WEFT_ENV_VARS(X)                                                                           \
    X(ALGO_DIR, "WEFT_ALGO_DIR", "MSCCL_ALGO_DIR",                                                 \
      "colon-separated algorithm directories or files (.xml, .weft)", WEFT_ENVK_TEXT)              \
    X(DISABLE, "WEFT_DISABLE", NULL, "1: behave exactly like stock NCCL (default 0)",              \
      WEFT_ENVK_FLAG)                                                                              \
    X(DEBUG, "WEFT_DEBUG", NULL, "log level: NONE, VERSION, WARN (default), INFO or TRACE",        \
      WEFT_ENVK_LEVEL)                                                                             \
    X(DEBUG_SUBSYS, "WEFT_DEBUG_SUBSYS", NULL,                                                     \
      "subsystems logged at INFO and TRACE: a comma list, ^ to exclude (INIT,COLL,ENV,...; ALL)",  \
      WEFT_ENVK_SUBSYS)                                                                            \
    X(DEBUG_FILE, "WEFT_DEBUG_FILE", NULL, "write the log to this file (%h host, %p pid)",         \
      WEFT_ENVK_TEXT)                                                                              \
    X(NCCL_LIB, "WEFT_NCCL_LIB", NULL, "path of the real libnccl when RTLD_NEXT cannot find it",   \
      WEFT_ENVK_TEXT)                                                                              \
    X(TIMEOUT_MS, "WEFT_TIMEOUT_MS", NULL,                                                         \
      "watchdog: milliseconds a collective may stall with every rank present before it is "        \
      "stopped (default 10000; 0 off)",                                                            \
      WEFT_ENVK_MS)                                                                                \
    X(FIFO, "WEFT_FIFO", NULL,                                                                     \
      "FIFO geometry per protocol, e.g. Simple=8x128K,LL=8x32K,LL128=8x64K", WEFT_ENVK_RUNTIME)    \
    X(MAX_CTAS, "WEFT_MAX_CTAS", NULL, "CTAs per rank a collective may take (default 128)",        \
      WEFT_ENVK_COUNT)                                                                             \
    X(COOPERATIVE, "WEFT_COOPERATIVE", NULL,                                                       \
      "auto (default): a launch's CTAs start together only where launches could not all be "       \
      "resident at once; 1 always; 0 never",                                                       \
      WEFT_ENVK_AUTO01)                                                                            \
    X(LATENCY_KERNEL, "WEFT_LATENCY_KERNEL", NULL,                                                 \
      "1 (default): LL calls that are neither direct nor traced run on the latency kernel, the "   \
      "interpreter compiled for them alone; 0: on the general one",                                \
      WEFT_ENVK_FLAG)                                                                              \
    X(HOP, "WEFT_HOP", NULL,                                                                       \
      "auto (default): small calls of one-hop LL schedules on 3 ranks or more run on the one-hop " \
      "kernel (each rank pushes its operands to its peers once, flags by call, no credits); 1 "    \
      "on any rank count; 0 never (the interpreter)",                                              \
      WEFT_ENVK_AUTO01)                                                                            \
    X(LL128, "WEFT_LL128", NULL,                                                                   \
      "auto (default): LL128 algorithms run as LL128 where the GPU is sm_90 or newer and NVLink "  \
      "joins every GPU of the node, elsewhere as LL; 1 always as LL128; 0 always as LL",           \
      WEFT_ENVK_AUTO01)                                                                            \
    X(COLLAPSE, "WEFT_COLLAPSE", NULL,                                                             \
      "largest chunk run with a rank's thread blocks as one CTA group (default LL=256K,Simple=0; " \
      "always,... every plan that can)",                                                           \
      WEFT_ENVK_RUNTIME)                                                                           \
    X(TRACE, "WEFT_TRACE", NULL,                                                                   \
      "record per-step timelines: a Chrome trace file per rank (%r rank, %p pid, %h host)",        \
      WEFT_ENVK_TEXT)                                                                              \
    X(REPORT, "WEFT_REPORT", NULL,                                                                 \
      "1: at each communicator's destroy (at exit for the others) a table per collective: calls "  \
      "served by weft and by NCCL, sizes, launch modes, and why NCCL served (default 0)",          \
      WEFT_ENVK_FLAG)                                                                              \
    X(TUNE_FILE, "WEFT_TUNE_FILE", NULL,                                                           \
      "tuning table made by weft tune (default: weft-tune.txt in an algorithm folder)",            \
      WEFT_ENVK_TEXT)                                                                              \
    X(NCCL_COMM_BLOCKING, "NCCL_COMM_BLOCKING", NULL,                                              \
      "read, not set: NCCL's default config.blocking (weft leaves non-blocking comms to NCCL)",    \
      WEFT_ENVK_FLAG)                                                                              \
    X(NCCL_NVLS_ENABLE, "NCCL_NVLS_ENABLE", NULL,                                                  \
      "read, not set: whether NCCL may use NVLink SHARP; weft tune prints it (compare_nccl.sh "    \
      "runs nccl-tests with 0)",                                                                   \
      WEFT_ENVK_FLAG)                                                                              \
    X(WORLD_RANK, "OMPI_COMM_WORLD_RANK", "PMI_RANK",                                              \
      "read, not set: this process's rank under mpirun (Open MPI; MPICH): weft tune's messages "   \
      "before MPI starts come from rank 0 alone",                                                  \
      WEFT_ENVK_TEXT)                                                                              \
    X(LOCAL_RANKS, "OMPI_COMM_WORLD_LOCAL_SIZE", "LOCAL_WORLD_SIZE",                               \
      "read, not set: processes per node (Open MPI; torchrun), checked against a tuning table",    \
      WEFT_ENVK_COUNT)

/* What values a variable takes (weft_env_check). RUNTIME: a spec the runtime's parser checks
 * (weft_rt_cfg_parse, weft_rt_cfg_parse_collapse). */
enum {
    WEFT_ENVK_TEXT,
    WEFT_ENVK_FLAG,
    WEFT_ENVK_MS,
    WEFT_ENVK_COUNT,
    WEFT_ENVK_LEVEL,
    WEFT_ENVK_SUBSYS,
    WEFT_ENVK_AUTO01,
    WEFT_ENVK_RUNTIME
};

typedef enum weft_env_id {
#define WEFT_X_(id, n, a, h, k) WEFT_ENV_##id,
    WEFT_ENV_VARS(WEFT_X_)
#undef WEFT_X_
        WEFT_ENV_COUNT
} weft_env_id;

/* The value (never NULL: "" when unset), read once and cached. Thread-safe. */
WEFT_API const char *weft_env_get(weft_env_id id);
WEFT_API int weft_env_is_set(weft_env_id id);
/* Integer value, or def when unset or not an integer (a WARN is logged for the latter). */
WEFT_API long long weft_env_int(weft_env_id id, long long def);
WEFT_API const char *weft_env_name(weft_env_id id);
/* What the variable does (its help), and what kind of value it takes (WEFT_ENVK_*). */
WEFT_API const char *weft_env_help(weft_env_id id);
WEFT_API int weft_env_kind(weft_env_id id);
/* NULL when value suits variable id (any value of a RUNTIME kind: the runtime checks those),
 * else what is wrong with it, e.g. "not a level (NONE, VERSION, WARN, INFO, TRACE)". */
WEFT_API const char *weft_env_check(weft_env_id id, const char *value);
/* Forget cached values (tests change the environment between cases). */
WEFT_API void weft_env_reset(void);

/* ---- logging ---------------------------------------------------------------------------- */
/* In NCCL's order (NCCL_DEBUG): VERSION logs only the version line a runtime prints once. */
#define WEFT_LOG_LEVELS(X)                                                                         \
    X(NONE, "NONE")                                                                                \
    X(VERSION, "VERSION")                                                                          \
    X(WARN, "WARN")                                                                                \
    X(INFO, "INFO")                                                                                \
    X(TRACE, "TRACE")

typedef enum weft_log_level {
#define WEFT_X_(n, t) WEFT_LOG_##n,
    WEFT_LOG_LEVELS(WEFT_X_)
#undef WEFT_X_
} weft_log_level;

/* X(id, name, what it covers): the subsystems WEFT_DEBUG_SUBSYS selects, as NCCL_DEBUG_SUBSYS
 * does (a comma list; a leading ^ excludes the listed ones; ALL). Each INFO and TRACE message
 * names one; WARN and VERSION messages are never filtered, as in NCCL. */
#define WEFT_LOG_SUBSYSTEMS(X)                                                                     \
    X(INIT, "INIT", "the runtime starting: algorithms loaded, communicators attached and left")    \
    X(COLL, "COLL", "each distinct call: which algorithm serves it, or why NCCL does")             \
    X(ENV, "ENV", "environment variables set")                                                     \
    X(PLAN, "PLAN", "device plans: whether an algorithm fits a communicator, CTAs, FIFOs")         \
    X(REG, "REG", "buffer windows registered with a communicator")                                 \
    X(PROFILE, "PROFILE", "the trace recorder (WEFT_TRACE)")                                       \
    X(CALL, "CALL", "the file:line trail of a failure on its way up (at TRACE)")

typedef enum weft_log_subsys_id {
#define WEFT_X_(id, n, h) WEFT_SUBSYS_ID_##id,
    WEFT_LOG_SUBSYSTEMS(WEFT_X_)
#undef WEFT_X_
        WEFT_SUBSYS_COUNT
} weft_log_subsys_id;

/* One bit per subsystem: WEFT_SUBSYS_INIT, WEFT_SUBSYS_COLL, ... */
enum {
#define WEFT_X_(id, n, h) WEFT_SUBSYS_##id = 1u << WEFT_SUBSYS_ID_##id,
    WEFT_LOG_SUBSYSTEMS(WEFT_X_)
#undef WEFT_X_
        WEFT_SUBSYS_ALL = (1u << WEFT_SUBSYS_COUNT) - 1
};

/* Level from WEFT_DEBUG (default WARN), subsystems from WEFT_DEBUG_SUBSYS (default ALL); output
 * to WEFT_DEBUG_FILE or stderr, one line per message in NCCL's shape:
 * "host:pid:tid [dev] weft LEVEL msg", dev being the calling thread's CUDA device once the GPU
 * runtime has installed weft_log_set_device_fn, "-" before that and in processes without one. */
WEFT_API weft_log_level weft_log_level_get(void);
/* The subsystem mask in force (WEFT_SUBSYS_* bits). */
WEFT_API unsigned weft_log_subsys_get(void);
/* 1 when a message of this level and subsystem would be written. */
WEFT_API int weft_log_enabled(weft_log_level lvl, unsigned subsys);
WEFT_API void weft_log(weft_log_level lvl, unsigned subsys, const char *fmt, ...) WEFT_PRINTF(3, 4);
/* A line of a report the user asked for (WEFT_REPORT): to the log's file in its shape, level
 * REPORT, whatever WEFT_DEBUG and WEFT_DEBUG_SUBSYS say. */
WEFT_API void weft_log_report(const char *fmt, ...) WEFT_PRINTF(1, 2);
/* The mask a WEFT_DEBUG_SUBSYS value selects; names not known are reported through bad (a
 * malloc'd comma list, or NULL when all are known) when bad is not NULL. */
WEFT_API unsigned weft_log_subsys_parse(const char *spec, char **bad);
const char *weft_log_subsys_name(weft_log_subsys_id id);
/* The calling thread's device for the [dev] field (-1: none); the GPU runtime installs one that
 * asks CUDA. It must not log. */
void weft_log_set_device_fn(int (*fn)(void));
#define WEFT_WARN(...) weft_log(WEFT_LOG_WARN, WEFT_SUBSYS_ALL, __VA_ARGS__)
#define WEFT_INFO(subsys, ...)                                                                     \
    do {                                                                                           \
        if (weft_log_enabled(WEFT_LOG_INFO, subsys)) weft_log(WEFT_LOG_INFO, subsys, __VA_ARGS__); \
    } while (0)
#define WEFT_TRACE(subsys, ...)                                                                    \
    do {                                                                                           \
        if (weft_log_enabled(WEFT_LOG_TRACE, subsys))                                              \
            weft_log(WEFT_LOG_TRACE, subsys, __VA_ARGS__);                                         \
    } while (0)
/* Re-read WEFT_DEBUG, WEFT_DEBUG_SUBSYS and WEFT_DEBUG_FILE (after weft_env_reset). */
WEFT_API void weft_log_reset(void);

/* ---- small helpers shared by the layers -------------------------------------------------- */
/* Reads a whole regular file of at most max_bytes; *data is malloc'd, NUL-terminated, owned by
 * the caller. Anything but a regular file (a directory, FIFO, device or socket, also through a
 * symbolic link) is refused with its kind named, before any byte is read, and a FIFO is never
 * waited on; reading stops after max_bytes + 1 bytes, so a file that grows cannot exhaust
 * memory either. With WEFT_READ_STDIN, "-" reads standard input (whatever it is: a pipe, a
 * terminal), up to the same limit. Errors go to d as `path: error: ...`. */
#define WEFT_READ_STDIN     1u
#define WEFT_READ_MAX_BYTES ((size_t)1 << 30) /* the limit of weft_read_file */
WEFT_API weft_result weft_read_file_max(const char *path, size_t max_bytes, unsigned flags,
                                        char **data, size_t *len, weft_diag *d);
/* The name diagnostics give a file read with WEFT_READ_STDIN: path, or "<stdin>" for "-". */
WEFT_API const char *weft_read_name(const char *path);
/* weft_read_file_max(path, WEFT_READ_MAX_BYTES, 0, ...). */
WEFT_API weft_result weft_read_file(const char *path, char **data, size_t *len, weft_diag *d);
/* What kind of file st_mode is, for messages: "a directory", "a FIFO", "a character device"... */
const char *weft_file_kind(unsigned st_mode);
/* Output files, as every writer of weft writes them. weft_out_open follows symbolic links to
 * the file they name; a FIFO, device or socket there is written as a stream (never replaced);
 * a regular file, new or old, is written to a new temporary beside it (created with O_EXCL, so
 * no link planted at its name is followed) that weft_out_close renames over it: the file is
 * never seen half-written, an input that is also the output is read whole before it changes, a
 * new file gets 0666 less the umask and an old one keeps its mode (and owner where allowed).
 * With WEFT_OUT_STDOUT, "-" (or NULL) is standard output. Errors go to d as
 * `path: error: cannot write: ...` (weft_out_close reports a full disk or /dev/full). */
#define WEFT_OUT_STDOUT 1u
typedef struct weft_out weft_out;
weft_result weft_out_open(const char *path, unsigned flags, weft_out **out, weft_diag *d);
FILE *weft_out_file(const weft_out *o);
const char *weft_out_path(const weft_out *o); /* as given, "<stdout>" for standard output */
/* Flushes, puts the file in place and frees o (also on failure: the temporary is removed). */
weft_result weft_out_close(weft_out *o, weft_diag *d);
/* Frees o leaving the target as it was (a stream keeps what was written). */
void weft_out_abort(weft_out *o);
/* Opens, writes len bytes of data, closes. */
weft_result weft_write_file(const char *path, unsigned flags, const void *data, size_t len,
                            weft_diag *d);
/* The temporary file of weft_out_open: "TARGET.tmp.XXXXXXXX" from r, and a new one created
 * with O_CREAT | O_EXCL | O_NOFOLLOW and mode (before the umask) from seed's names in turn;
 * the fd, or -1 with errno (*name malloc'd). For the tests. */
char *weft_out_tmp_name(const char *target, uint64_t r);
int weft_out_tmp_create(const char *target, unsigned mode, uint64_t seed, char **name);
WEFT_API char *weft_strdup(const char *s);
WEFT_API char *weft_asprintf(const char *fmt, ...) WEFT_PRINTF(1, 2);
char *weft_vasprintf(const char *fmt, va_list ap);

/* A growing string, appended to by weft_sb_printf; zero-initialise it, free p. An allocation
 * failure sets oom and stops appending (weft_sb_str then says so). */
typedef struct weft_sb {
    char *p;
    size_t n, cap;
    int oom;
} weft_sb;
void weft_sb_printf(weft_sb *b, const char *fmt, ...) WEFT_PRINTF(2, 3);
const char *weft_sb_str(const weft_sb *b);

/* Columns of an X-macro table's rows, for arrays of one column (names are the second):
 * `static const char *const names[] = {WEFT_COLLS(WEFT_X_COL2)};`. */
#define WEFT_X_COL2(id, a, ...)    a,
#define WEFT_X_COL3(id, a, b, ...) b,

/* Writes s in double quotes, quotes and backslashes escaped; a control character (with ascii,
 * also any byte past '~') becomes bad. */
void weft_fput_quoted(FILE *f, const char *s, char bad, int ascii);

/* An X-macro table's names as an array of n: the name of entry i ("?" out of range), and the
 * entry of a name (-1 when unknown; nocase: ignoring ASCII case). */
const char *weft_name_of(const char *const *names, int n, int i);
int weft_name_find(const char *const *names, int n, const char *name, int nocase);
/* The name of names[0..n) that s is most likely a typo of (edit distance with transpositions,
 * at most a third of s wrong), or NULL. */
const char *weft_did_you_mean(const char *s, const char *const *names, int n);

/* qsort's order of two keys of n numbers, compared in turn. */
static inline int weft_cmp_keys(const int64_t *a, const int64_t *b, int n) {
    for (int i = 0; i < n; i++)
        if (a[i] != b[i]) return a[i] < b[i] ? -1 : 1;
    return 0;
}

/* The length of the well-formed UTF-8 sequence at p (at most n bytes), 0 when there is none: no
 * overlong forms, surrogates or code points past U+10FFFF. *cp (when not NULL) gets the code
 * point. ASCII bytes are sequences of 1. */
size_t weft_utf8_len(const unsigned char *p, size_t n, uint32_t *cp);

/* Frees p and clears it, so that freeing it again is harmless. */
#define WEFT_FREE(p) (free(p), (p) = NULL)

/* Growable array helper: ensures capacity for n+1 elements of size sz; returns 0 on success. */
int weft_grow(void **ptr, size_t *cap, size_t n, size_t sz);

/* A hash map from 64-bit keys to 64-bit values: open addressing with linear probing, keys
 * mixed by splitmix64's finaliser, grown at half full. Zero-initialise it (`weft_map m = {0};`)
 * and free it with weft_map_free; there is no removal. String keys hash with weft_hash_bytes
 * and keep the strings elsewhere (compare on a hit: two strings can share a hash). */
typedef struct weft_map {
    uint64_t *keys, *vals;
    uint8_t *used;
    size_t cap, n;
} weft_map;
void weft_map_free(weft_map *m);
/* The value of key, or NULL when key is absent. Valid until the next weft_map_put. */
uint64_t *weft_map_get(const weft_map *m, uint64_t key);
/* The value of key, inserted as 0 when absent (*added = 1, else 0; added may be NULL); NULL when
 * memory runs out. Valid until the next weft_map_put. */
uint64_t *weft_map_put(weft_map *m, uint64_t key, int *added);
uint64_t weft_hash64(uint64_t x);
uint64_t weft_hash_bytes(const void *p, size_t n);

#ifdef __cplusplus
}
#endif
#endif
