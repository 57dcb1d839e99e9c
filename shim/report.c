/* report.c — WEFT_REPORT=1: per communicator, the calls weft and NCCL served, grouped by
 * collective, launch mode and outcome, printed at the communicator's destroy or at exit. */
#include "report.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

/* One line of a table: the calls of one collective and launch mode with one outcome. */
typedef struct report_row {
    int coll, launch;
    char *served; /* the algorithm, or NULL: NCCL served, for why */
    char *why;
    unsigned long long calls, lo, hi;
} report_row;

typedef struct report_comm {
    ncclComm_t comm;
    int rank, nranks;
    report_row *rows;
    size_t nrows, caprows;
    struct report_comm *next;
} report_comm;

static pthread_once_t report_once = PTHREAD_ONCE_INIT;
static int report_on;
static pthread_mutex_t report_lock = PTHREAD_MUTEX_INITIALIZER;
static report_comm *report_comms;

static void report_init(void) {
    report_on = weft_env_int(WEFT_ENV_REPORT, 0) != 0;
}

int shim_report_enabled(void) {
    pthread_once(&report_once, report_init);
    return report_on;
}

static int same(const char *a, const char *b) {
    return a == b || (a && b && strcmp(a, b) == 0);
}

void shim_report_call(ncclComm_t comm, int rank, int nranks, weft_coll coll,
                      unsigned long long bytes, int launch, const char *served, const char *why) {
    if (!shim_report_enabled()) return;
    if (served) why = NULL;
    pthread_mutex_lock(&report_lock);
    report_comm *c = report_comms;
    while (c && c->comm != comm)
        c = c->next;
    if (c == NULL) {
        if ((c = calloc(1, sizeof *c)) == NULL) goto done;
        c->comm = comm;
        c->rank = c->nranks = -1;
        c->next = report_comms;
        report_comms = c;
    }
    if (rank >= 0) c->rank = rank;
    if (nranks >= 1) c->nranks = nranks;
    report_row *r = NULL;
    for (size_t i = 0; i < c->nrows && r == NULL; i++)
        if (c->rows[i].coll == (int)coll && c->rows[i].launch == launch &&
            same(c->rows[i].served, served) && same(c->rows[i].why, why))
            r = &c->rows[i];
    if (r == NULL) {
        if (weft_grow((void **)&c->rows, &c->caprows, c->nrows, sizeof *c->rows) != 0) goto done;
        r = &c->rows[c->nrows];
        memset(r, 0, sizeof *r);
        r->coll = (int)coll;
        r->launch = launch;
        r->served = served ? weft_strdup(served) : NULL;
        r->why = why ? weft_strdup(why) : NULL;
        if ((served && r->served == NULL) || (why && r->why == NULL)) {
            free(r->served);
            free(r->why);
            goto done;
        }
        r->lo = bytes;
        c->nrows++;
    }
    r->calls++;
    if (bytes < r->lo) r->lo = bytes;
    if (bytes > r->hi) r->hi = bytes;
done:
    pthread_mutex_unlock(&report_lock);
}

/* Collective, then launch mode, then weft's rows before NCCL's. */
static int cmp_rows(const void *x, const void *y) {
    const report_row *a = x, *b = y;
    if (a->coll != b->coll) return a->coll < b->coll ? -1 : 1;
    if (a->launch != b->launch) return a->launch < b->launch ? -1 : 1;
    if (!a->served != !b->served) return a->served ? -1 : 1;
    return strcmp(a->served ? a->served : a->why, b->served ? b->served : b->why);
}

/* "allgather, reducescatter and alltoall": the served collectives whose size grows with the rank
 * count, asked of weft_coll_footprint rather than listed, so the note cannot drift from it. */
static void rank_sized_colls(char *buf, size_t cap) {
    int k = 0, n = 0;
    for (int c = 0; c < WEFT_COLL_COUNT; c++)
        n += weft_coll_runnable((weft_coll)c) && weft_coll_footprint((weft_coll)c, 1, 1, 2) == 2;
    buf[0] = '\0';
    for (int c = 0; c < WEFT_COLL_COUNT; c++) {
        if (!weft_coll_runnable((weft_coll)c) || weft_coll_footprint((weft_coll)c, 1, 1, 2) != 2)
            continue;
        size_t len = strlen(buf);
        snprintf(buf + len, cap - len, "%s%s",
                 k == 0       ? ""
                 : k == n - 1 ? " and "
                              : ", ",
                 weft_coll_name((weft_coll)c));
        k++;
    }
}

static void print_comm(report_comm *c, const char *how) {
    unsigned long long weft = 0, nccl = 0;
    for (size_t i = 0; i < c->nrows; i++)
        *(c->rows[i].served ? &weft : &nccl) += c->rows[i].calls;
    char who[64] = "";
    if (c->rank >= 0 && c->nranks >= 1)
        snprintf(who, sizeof who, " rank %d of %d", c->rank, c->nranks);
    char per_rank[128] = "";
    if (c->nranks < 1) rank_sized_colls(per_rank, sizeof per_rank);
    weft_log_report("communicator %p%s, %s: %llu calls: %llu served by weft, %llu by NCCL%s%s%s",
                    (void *)c->comm, who, how, weft + nccl, weft, nccl,
                    c->nranks < 1 ? " (rank count unknown: " : "", per_rank,
                    c->nranks < 1 ? " bytes are per rank)" : "");
    if (c->nrows > 1) qsort(c->rows, c->nrows, sizeof *c->rows, cmp_rows);
    weft_log_report("  %-13s %-16s %8s  %-24s %s", "collective", "launch", "calls", "bytes",
                    "served by");
    for (size_t i = 0; i < c->nrows; i++) {
        const report_row *r = &c->rows[i];
        char bytes[48];
        if (r->lo == r->hi)
            snprintf(bytes, sizeof bytes, "%llu", r->lo);
        else
            snprintf(bytes, sizeof bytes, "%llu .. %llu", r->lo, r->hi);
        weft_log_report("  %-13s %-16s %8llu  %-24s %s%s%s", weft_coll_name((weft_coll)r->coll),
                        r->launch >= 0 ? weft_launch_name((weft_launch)r->launch) : "-", r->calls,
                        bytes, r->served ? "weft '" : "NCCL: ", r->served ? r->served : r->why,
                        r->served ? "'" : "");
    }
}

static void comm_free(report_comm *c) {
    for (size_t i = 0; i < c->nrows; i++) {
        free(c->rows[i].served);
        free(c->rows[i].why);
    }
    free(c->rows);
    free(c);
}

void shim_report_end(ncclComm_t comm, const char *how) {
    if (!shim_report_enabled()) return;
    pthread_mutex_lock(&report_lock);
    report_comm **p = &report_comms;
    while (*p && (*p)->comm != comm)
        p = &(*p)->next;
    report_comm *c = *p;
    if (c) *p = c->next;
    if (c) print_comm(c, how);
    pthread_mutex_unlock(&report_lock);
    if (c) comm_free(c);
}

/* The communicators a program never destroyed (many exit without ncclCommDestroy): at exit, or
 * when the library is unloaded, whichever comes first (a destructor, unlike atexit, never runs
 * code of a library already unloaded). */
__attribute__((destructor)) static void print_all_at_exit(void) {
    if (!__atomic_load_n(&report_on, __ATOMIC_ACQUIRE)) return;
    pthread_mutex_lock(&report_lock);
    report_comm *c = report_comms;
    report_comms = NULL;
    /* oldest first, as they were created */
    report_comm *rev = NULL;
    while (c) {
        report_comm *n = c->next;
        c->next = rev;
        rev = c;
        c = n;
    }
    for (c = rev; c; c = c->next)
        print_comm(c, "at exit (never destroyed)");
    pthread_mutex_unlock(&report_lock);
    while (rev) {
        report_comm *n = rev->next;
        comm_free(rev);
        rev = n;
    }
}
