/* fake_nccl.c — a CPU-only stand-in for libnccl.so.2 in the shim tests: every function of nccl.h
 * as a strong pncclX and a weak ncclX (as libnccl exports them), recording each call in one log
 * that the fake runtime backend writes to as well, so that tests see the order of NCCL and weft
 * work. Like the real library it calls some of its own API through its PLT (ncclBcast calls
 * ncclBroadcast, ncclCommInitAll calls ncclGetUniqueId, ncclAllReduce brackets itself in
 * ncclGroupStart/End), which is what the shim's re-entry guard must handle. Ranks can sit on
 * nodes (option gpus_per_node: ncclTeamLsa, the host function of nccl_device, reports them), and
 * with option p2p_data ncclSend/ncclRecv move bytes between the communicators of one process
 * that belong together (one ncclCommInitAll, one unique id, or one split of those). */
#include <nccl.h>

#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FAKE_API __attribute__((visibility("default")))

/* The communicators of one process that form one NCCL communicator, and their messages in
 * flight: per (sender, receiver), a queue of sends not yet received or of receives not yet
 * sent (never both). */
typedef struct fake_msg {
    struct fake_msg *next;
    int is_send;
    void *ptr; /* a send: a copy of its bytes (owned); a receive: where they go */
    size_t bytes;
} fake_msg;

typedef struct fake_group {
    struct fake_group *next; /* in the list of all groups */
    char key[64];
    int nranks, refs, nsplits;
    fake_msg **queues; /* nranks x nranks */
} fake_group;

struct ncclComm {
    int nranks, rank, dev, blocking;
    fake_group *grp;
    int nsplits; /* splits of this communicator so far (all ranks split in the same order) */
};

/* ---- the log and the options the tests set ----------------------------------------------- */
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static char *log_text;
static size_t log_len, log_cap;

FAKE_API void fake_nccl_record(const char *fmt, ...) {
    char line[512];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(line, sizeof line - 1, fmt, ap);
    va_end(ap);
    if (n < 0) return;
    if ((size_t)n > sizeof line - 2) n = (int)sizeof line - 2;
    line[n++] = '\n';
    pthread_mutex_lock(&lock);
    if (log_len + (size_t)n + 1 > log_cap) {
        size_t cap = (log_cap ? log_cap * 2 : 4096) + (size_t)n;
        char *p = realloc(log_text, cap);
        if (p == NULL) {
            pthread_mutex_unlock(&lock);
            return;
        }
        log_text = p;
        log_cap = cap;
    }
    memcpy(log_text + log_len, line, (size_t)n);
    log_len += (size_t)n;
    log_text[log_len] = '\0';
    pthread_mutex_unlock(&lock);
}

/* The log so far (a malloc'd copy owned by the caller); clears it. */
FAKE_API char *fake_nccl_take_log(void) {
    pthread_mutex_lock(&lock);
    char *s = log_text ? log_text : calloc(1, 1);
    log_text = NULL;
    log_len = log_cap = 0;
    pthread_mutex_unlock(&lock);
    return s;
}

static struct {
    const char *key;
    long value;
} options[] = {
    {"version", NCCL_VERSION_CODE}, /* what ncclGetVersion reports */
    {"attach_fail", 0},             /* the fake backend's weft_comm_attach fails */
    {"attach_unsupported", 0},      /* ... reports WEFT_ERR_UNSUPPORTED */
    {"launch_fail", 0},             /* the fake backend's weft_comm_launch fails */
    {"gpus_per_node", 0},           /* ranks n*G .. n*G+G-1 share node n (0: one node) */
    {"p2p_data", 0},                /* ncclSend/ncclRecv move bytes (host memory) */
};

FAKE_API void fake_nccl_set(const char *key, long value) {
    for (size_t i = 0; i < sizeof options / sizeof *options; i++)
        if (strcmp(options[i].key, key) == 0) options[i].value = value;
}

FAKE_API long fake_nccl_get(const char *key) {
    for (size_t i = 0; i < sizeof options / sizeof *options; i++)
        if (strcmp(options[i].key, key) == 0) return options[i].value;
    return 0;
}

/* ---- communicator groups -----------------------------------------------------------------------
 */
static fake_group *groups;

static fake_group *group_get(const char *key, int nranks) {
    pthread_mutex_lock(&lock);
    fake_group *g = groups;
    while (g && (strcmp(g->key, key) != 0 || g->nranks != nranks))
        g = g->next;
    if (g == NULL && (g = calloc(1, sizeof *g)) != NULL) {
        snprintf(g->key, sizeof g->key, "%s", key);
        g->nranks = nranks;
        g->queues = calloc((size_t)nranks * (size_t)nranks, sizeof *g->queues);
        if (g->queues == NULL) {
            free(g);
            g = NULL;
        } else {
            g->next = groups;
            groups = g;
        }
    }
    if (g) g->refs++;
    pthread_mutex_unlock(&lock);
    return g;
}

static void group_put(fake_group *g) {
    if (g == NULL) return;
    pthread_mutex_lock(&lock);
    if (--g->refs == 0) {
        fake_group **p = &groups;
        while (*p != g)
            p = &(*p)->next;
        *p = g->next;
        for (int i = 0; i < g->nranks * g->nranks; i++)
            while (g->queues[i]) {
                fake_msg *m = g->queues[i];
                g->queues[i] = m->next;
                if (m->is_send) free(m->ptr);
                free(m);
            }
        free(g->queues);
        free(g);
    }
    pthread_mutex_unlock(&lock);
}

/* A send or receive between two ranks of g: completes against the oldest opposite operation
 * queued, else waits in the queue. 0 on success. */
static int p2p(fake_group *g, int src, int dst, int is_send, void *ptr, size_t bytes) {
    int rc = 0;
    pthread_mutex_lock(&lock);
    fake_msg **q = &g->queues[src * g->nranks + dst];
    if (*q && (*q)->is_send != is_send) {
        fake_msg *m = *q;
        *q = m->next;
        if (m->bytes != bytes)
            rc = -1;
        else if (is_send)
            memcpy(m->ptr, ptr, bytes);
        else
            memcpy(ptr, m->ptr, bytes);
        if (m->is_send) free(m->ptr);
        free(m);
    } else {
        fake_msg *m = calloc(1, sizeof *m);
        if (m) {
            m->is_send = is_send;
            m->bytes = bytes;
            m->ptr = is_send ? malloc(bytes ? bytes : 1) : ptr;
            if (is_send && m->ptr) memcpy(m->ptr, ptr, bytes);
        }
        if (m == NULL || m->ptr == NULL) {
            free(m);
            rc = -1;
        } else {
            while (*q)
                q = &(*q)->next;
            *q = m;
        }
    }
    pthread_mutex_unlock(&lock);
    return rc;
}

/* ---- the API -------------------------------------------------------------------------------- */
#define ALIAS(ret, name, params) FAKE_API ret name params __attribute__((weak, alias("p" #name)));

static _Thread_local int group_depth;
static _Thread_local int internal; /* inside the fake's own calls of its API */

static ncclComm_t new_comm(int nranks, int rank, int blocking, const char *key) {
    ncclComm_t c = calloc(1, sizeof *c);
    if (c) {
        c->nranks = nranks;
        c->rank = rank;
        c->dev = rank;
        c->blocking = blocking;
        c->grp = group_get(key, nranks);
    }
    return c;
}

static void free_comm(ncclComm_t c) {
    if (c) group_put(c->grp);
    free(c);
}

static const char *id_key(const ncclUniqueId *id, char *buf, size_t len) {
    snprintf(buf, len, "id:%.16s", id->internal);
    return buf;
}

static int config_blocking(const ncclConfig_t *config) {
    return config == NULL || config->blocking == NCCL_CONFIG_UNDEF_INT || config->blocking != 0;
}

FAKE_API ncclResult_t pncclMemAlloc(void **ptr, size_t size) {
    fake_nccl_record("MemAlloc %zu", size);
    *ptr = malloc(size);
    return *ptr ? ncclSuccess : ncclSystemError;
}
ALIAS(ncclResult_t, ncclMemAlloc, (void **ptr, size_t size))

FAKE_API ncclResult_t pncclMemFree(void *ptr) {
    fake_nccl_record("MemFree");
    free(ptr);
    return ncclSuccess;
}
ALIAS(ncclResult_t, ncclMemFree, (void *ptr))

FAKE_API ncclResult_t pncclGetVersion(int *version) {
    fake_nccl_record("GetVersion");
    if (version == NULL) return ncclInvalidArgument;
    *version = (int)fake_nccl_get("version");
    return ncclSuccess;
}
ALIAS(ncclResult_t, ncclGetVersion, (int *version))

FAKE_API ncclResult_t pncclGetUniqueId(ncclUniqueId *uniqueId) {
    if (!internal) fake_nccl_record("GetUniqueId");
    memset(uniqueId->internal, 'F', sizeof uniqueId->internal);
    return ncclSuccess;
}
ALIAS(ncclResult_t, ncclGetUniqueId, (ncclUniqueId * uniqueId))

FAKE_API ncclResult_t pncclCommInitRankConfig(ncclComm_t *comm, int nranks, ncclUniqueId commId,
                                              int rank, ncclConfig_t *config) {
    int blocking = config_blocking(config);
    fake_nccl_record("CommInitRankConfig nranks=%d rank=%d blocking=%d", nranks, rank, blocking);
    char key[64];
    *comm = new_comm(nranks, rank, blocking, id_key(&commId, key, sizeof key));
    return blocking ? ncclSuccess : ncclInProgress;
}
ALIAS(ncclResult_t, ncclCommInitRankConfig,
      (ncclComm_t * comm, int nranks, ncclUniqueId commId, int rank, ncclConfig_t *config))

FAKE_API ncclResult_t pncclCommInitRank(ncclComm_t *comm, int nranks, ncclUniqueId commId,
                                        int rank) {
    fake_nccl_record("CommInitRank nranks=%d rank=%d", nranks, rank);
    if (rank < 0 || rank >= nranks) return ncclInvalidArgument;
    char key[64];
    *comm = new_comm(nranks, rank, 1, id_key(&commId, key, sizeof key));
    return ncclSuccess;
}
ALIAS(ncclResult_t, ncclCommInitRank,
      (ncclComm_t * comm, int nranks, ncclUniqueId commId, int rank))

FAKE_API ncclResult_t pncclCommInitAll(ncclComm_t *comm, int ndev, const int *devlist) {
    (void)devlist;
    ncclUniqueId id;
    internal++;
    ncclGetUniqueId(&id); /* through the PLT, as libnccl does */
    internal--;
    fake_nccl_record("CommInitAll ndev=%d", ndev);
    static int nall;
    char key[64];
    pthread_mutex_lock(&lock);
    snprintf(key, sizeof key, "all:%d", nall++);
    pthread_mutex_unlock(&lock);
    for (int i = 0; i < ndev; i++)
        comm[i] = new_comm(ndev, i, 1, key);
    return ncclSuccess;
}
ALIAS(ncclResult_t, ncclCommInitAll, (ncclComm_t * comm, int ndev, const int *devlist))

FAKE_API ncclResult_t pncclCommFinalize(ncclComm_t comm) {
    fake_nccl_record("CommFinalize rank=%d", comm ? comm->rank : -1);
    return comm ? ncclSuccess : ncclInvalidArgument;
}
ALIAS(ncclResult_t, ncclCommFinalize, (ncclComm_t comm))

FAKE_API ncclResult_t pncclCommDestroy(ncclComm_t comm) {
    fake_nccl_record("CommDestroy rank=%d", comm ? comm->rank : -1);
    free_comm(comm);
    return ncclSuccess;
}
ALIAS(ncclResult_t, ncclCommDestroy, (ncclComm_t comm))

FAKE_API ncclResult_t pncclCommAbort(ncclComm_t comm) {
    fake_nccl_record("CommAbort rank=%d", comm ? comm->rank : -1);
    free_comm(comm);
    return ncclSuccess;
}
ALIAS(ncclResult_t, ncclCommAbort, (ncclComm_t comm))

FAKE_API ncclResult_t pncclCommRevoke(ncclComm_t comm, int revokeFlags) {
    fake_nccl_record("CommRevoke flags=%d", revokeFlags);
    return comm ? ncclSuccess : ncclInvalidArgument;
}
ALIAS(ncclResult_t, ncclCommRevoke, (ncclComm_t comm, int revokeFlags))

FAKE_API ncclResult_t pncclCommSplit(ncclComm_t comm, int color, int key, ncclComm_t *newcomm,
                                     ncclConfig_t *config) {
    fake_nccl_record("CommSplit color=%d key=%d", color, key);
    if (comm == NULL) return ncclInvalidArgument;
    /* every rank keeps its rank (the fake's limit: callers split with key = rank) */
    char gk[64];
    snprintf(gk, sizeof gk, "%p/%d/%d", (void *)comm->grp, comm->nsplits++, color);
    *newcomm = color == NCCL_SPLIT_NOCOLOR
                   ? NULL
                   : new_comm(comm->nranks, comm->rank,
                              config ? config_blocking(config) : comm->blocking, gk);
    return ncclSuccess;
}
ALIAS(ncclResult_t, ncclCommSplit,
      (ncclComm_t comm, int color, int key, ncclComm_t *newcomm, ncclConfig_t *config))

FAKE_API ncclResult_t pncclCommShrink(ncclComm_t comm, int *excludeRanksList, int excludeRanksCount,
                                      ncclComm_t *newcomm, ncclConfig_t *config, int shrinkFlags) {
    (void)excludeRanksList;
    (void)config;
    fake_nccl_record("CommShrink exclude=%d flags=%d", excludeRanksCount, shrinkFlags);
    if (comm == NULL) return ncclInvalidArgument;
    *newcomm = new_comm(comm->nranks - excludeRanksCount, 0, comm->blocking, "shrink");
    return ncclSuccess;
}
ALIAS(ncclResult_t, ncclCommShrink,
      (ncclComm_t comm, int *excludeRanksList, int excludeRanksCount, ncclComm_t *newcomm,
       ncclConfig_t *config, int shrinkFlags))

FAKE_API ncclResult_t pncclCommInitRankScalable(ncclComm_t *newcomm, int nranks, int myrank,
                                                int nId, ncclUniqueId *commIds,
                                                ncclConfig_t *config) {
    fake_nccl_record("CommInitRankScalable nranks=%d rank=%d nId=%d", nranks, myrank, nId);
    char key[64];
    *newcomm = new_comm(nranks, myrank, config_blocking(config),
                        nId > 0 ? id_key(commIds, key, sizeof key) : "scalable");
    return ncclSuccess;
}
ALIAS(ncclResult_t, ncclCommInitRankScalable,
      (ncclComm_t * newcomm, int nranks, int myrank, int nId, ncclUniqueId *commIds,
       ncclConfig_t *config))

FAKE_API const char *pncclGetErrorString(ncclResult_t result) {
    static const char *const s[] = {"fake success",  "fake cuda",       "fake system",
                                    "fake internal", "fake argument",   "fake usage",
                                    "fake remote",   "fake in progress"};
    fake_nccl_record("GetErrorString %d", (int)result);
    return (unsigned)result < 8 ? s[result] : "fake unknown";
}
ALIAS(const char *, ncclGetErrorString, (ncclResult_t result))

FAKE_API const char *pncclGetLastError(ncclComm_t comm) {
    (void)comm;
    fake_nccl_record("GetLastError");
    return "fake last error";
}
ALIAS(const char *, ncclGetLastError, (ncclComm_t comm))

FAKE_API void pncclResetDebugInit(void) {
    fake_nccl_record("ResetDebugInit");
}
ALIAS(void, ncclResetDebugInit, (void))

FAKE_API ncclResult_t pncclCommGetAsyncError(ncclComm_t comm, ncclResult_t *asyncError) {
    fake_nccl_record("CommGetAsyncError");
    if (comm == NULL) return ncclInvalidArgument;
    *asyncError = ncclSuccess;
    return ncclSuccess;
}
ALIAS(ncclResult_t, ncclCommGetAsyncError, (ncclComm_t comm, ncclResult_t *asyncError))

FAKE_API ncclResult_t pncclCommCount(const ncclComm_t comm, int *count) {
    fake_nccl_record("CommCount");
    if (comm == NULL) return ncclInvalidArgument;
    *count = comm->nranks;
    return ncclSuccess;
}
ALIAS(ncclResult_t, ncclCommCount, (const ncclComm_t comm, int *count))

FAKE_API ncclResult_t pncclCommCuDevice(const ncclComm_t comm, int *device) {
    fake_nccl_record("CommCuDevice");
    if (comm == NULL) return ncclInvalidArgument;
    *device = comm->dev;
    return ncclSuccess;
}
ALIAS(ncclResult_t, ncclCommCuDevice, (const ncclComm_t comm, int *device))

FAKE_API ncclResult_t pncclCommUserRank(const ncclComm_t comm, int *rank) {
    fake_nccl_record("CommUserRank");
    if (comm == NULL) return ncclInvalidArgument;
    *rank = comm->rank;
    return ncclSuccess;
}
ALIAS(ncclResult_t, ncclCommUserRank, (const ncclComm_t comm, int *rank))

FAKE_API ncclResult_t pncclCommRegister(const ncclComm_t comm, void *buff, size_t size,
                                        void **handle) {
    (void)comm;
    fake_nccl_record("CommRegister %zu", size);
    *handle = buff;
    return ncclSuccess;
}
ALIAS(ncclResult_t, ncclCommRegister,
      (const ncclComm_t comm, void *buff, size_t size, void **handle))

FAKE_API ncclResult_t pncclCommDeregister(const ncclComm_t comm, void *handle) {
    (void)comm;
    (void)handle;
    fake_nccl_record("CommDeregister");
    return ncclSuccess;
}
ALIAS(ncclResult_t, ncclCommDeregister, (const ncclComm_t comm, void *handle))

FAKE_API ncclResult_t pncclCommWindowRegister(ncclComm_t comm, void *buff, size_t size,
                                              ncclWindow_t *win, int winFlags) {
    (void)comm;
    fake_nccl_record("CommWindowRegister %zu flags=%d", size, winFlags);
    *win = (ncclWindow_t)buff;
    return ncclSuccess;
}
ALIAS(ncclResult_t, ncclCommWindowRegister,
      (ncclComm_t comm, void *buff, size_t size, ncclWindow_t *win, int winFlags))

FAKE_API ncclResult_t pncclCommWindowDeregister(ncclComm_t comm, ncclWindow_t win) {
    (void)comm;
    (void)win;
    fake_nccl_record("CommWindowDeregister");
    return ncclSuccess;
}
ALIAS(ncclResult_t, ncclCommWindowDeregister, (ncclComm_t comm, ncclWindow_t win))

FAKE_API ncclResult_t pncclRedOpCreatePreMulSum(ncclRedOp_t *op, void *scalar,
                                                ncclDataType_t datatype,
                                                ncclScalarResidence_t residence, ncclComm_t comm) {
    (void)scalar;
    (void)comm;
    fake_nccl_record("RedOpCreatePreMulSum type=%d residence=%d", (int)datatype, (int)residence);
    *op = (ncclRedOp_t)(ncclNumOps + 1);
    return ncclSuccess;
}
ALIAS(ncclResult_t, ncclRedOpCreatePreMulSum,
      (ncclRedOp_t * op, void *scalar, ncclDataType_t datatype, ncclScalarResidence_t residence,
       ncclComm_t comm))

FAKE_API ncclResult_t pncclRedOpDestroy(ncclRedOp_t op, ncclComm_t comm) {
    (void)comm;
    fake_nccl_record("RedOpDestroy %d", (int)op);
    return ncclSuccess;
}
ALIAS(ncclResult_t, ncclRedOpDestroy, (ncclRedOp_t op, ncclComm_t comm))

FAKE_API ncclResult_t pncclReduce(const void *sendbuff, void *recvbuff, size_t count,
                                  ncclDataType_t datatype, ncclRedOp_t op, int root,
                                  ncclComm_t comm, cudaStream_t stream) {
    (void)sendbuff, (void)recvbuff, (void)comm, (void)stream;
    fake_nccl_record("Reduce count=%zu type=%d op=%d root=%d", count, (int)datatype, (int)op, root);
    return ncclSuccess;
}
ALIAS(ncclResult_t, ncclReduce,
      (const void *sendbuff, void *recvbuff, size_t count, ncclDataType_t datatype, ncclRedOp_t op,
       int root, ncclComm_t comm, cudaStream_t stream))

FAKE_API ncclResult_t pncclBcast(void *buff, size_t count, ncclDataType_t datatype, int root,
                                 ncclComm_t comm, cudaStream_t stream) {
    fake_nccl_record("Bcast count=%zu root=%d", count, root);
    return ncclBroadcast(buff, buff, count, datatype, root, comm, stream); /* through the PLT */
}
ALIAS(ncclResult_t, ncclBcast,
      (void *buff, size_t count, ncclDataType_t datatype, int root, ncclComm_t comm,
       cudaStream_t stream))

FAKE_API ncclResult_t pncclBroadcast(const void *sendbuff, void *recvbuff, size_t count,
                                     ncclDataType_t datatype, int root, ncclComm_t comm,
                                     cudaStream_t stream) {
    (void)datatype, (void)comm, (void)stream;
    fake_nccl_record("Broadcast count=%zu root=%d inplace=%d", count, root, sendbuff == recvbuff);
    return ncclSuccess;
}
ALIAS(ncclResult_t, ncclBroadcast,
      (const void *sendbuff, void *recvbuff, size_t count, ncclDataType_t datatype, int root,
       ncclComm_t comm, cudaStream_t stream))

FAKE_API ncclResult_t pncclAllReduce(const void *sendbuff, void *recvbuff, size_t count,
                                     ncclDataType_t datatype, ncclRedOp_t op, ncclComm_t comm,
                                     cudaStream_t stream) {
    (void)comm, (void)stream;
    if (sendbuff == NULL || recvbuff == NULL) return ncclInvalidArgument;
    internal++;
    ncclGroupStart(); /* through the PLT: the shim must not count these */
    fake_nccl_record("AllReduce count=%zu type=%d op=%d inplace=%d", count, (int)datatype, (int)op,
                     sendbuff == recvbuff);
    ncclResult_t r = ncclGroupEnd();
    internal--;
    return r;
}
ALIAS(ncclResult_t, ncclAllReduce,
      (const void *sendbuff, void *recvbuff, size_t count, ncclDataType_t datatype, ncclRedOp_t op,
       ncclComm_t comm, cudaStream_t stream))

FAKE_API ncclResult_t pncclReduceScatter(const void *sendbuff, void *recvbuff, size_t recvcount,
                                         ncclDataType_t datatype, ncclRedOp_t op, ncclComm_t comm,
                                         cudaStream_t stream) {
    (void)sendbuff, (void)recvbuff, (void)comm, (void)stream;
    fake_nccl_record("ReduceScatter count=%zu type=%d op=%d", recvcount, (int)datatype, (int)op);
    return ncclSuccess;
}
ALIAS(ncclResult_t, ncclReduceScatter,
      (const void *sendbuff, void *recvbuff, size_t recvcount, ncclDataType_t datatype,
       ncclRedOp_t op, ncclComm_t comm, cudaStream_t stream))

FAKE_API ncclResult_t pncclAllGather(const void *sendbuff, void *recvbuff, size_t sendcount,
                                     ncclDataType_t datatype, ncclComm_t comm,
                                     cudaStream_t stream) {
    (void)sendbuff, (void)recvbuff, (void)comm, (void)stream;
    fake_nccl_record("AllGather count=%zu type=%d", sendcount, (int)datatype);
    return ncclSuccess;
}
ALIAS(ncclResult_t, ncclAllGather,
      (const void *sendbuff, void *recvbuff, size_t sendcount, ncclDataType_t datatype,
       ncclComm_t comm, cudaStream_t stream))

FAKE_API ncclResult_t pncclAlltoAll(const void *sendbuff, void *recvbuff, size_t count,
                                    ncclDataType_t datatype, ncclComm_t comm, cudaStream_t stream) {
    (void)sendbuff, (void)recvbuff, (void)comm, (void)stream;
    fake_nccl_record("AlltoAll count=%zu type=%d", count, (int)datatype);
    return ncclSuccess;
}
ALIAS(ncclResult_t, ncclAlltoAll,
      (const void *sendbuff, void *recvbuff, size_t count, ncclDataType_t datatype, ncclComm_t comm,
       cudaStream_t stream))

FAKE_API ncclResult_t pncclGather(const void *sendbuff, void *recvbuff, size_t count,
                                  ncclDataType_t datatype, int root, ncclComm_t comm,
                                  cudaStream_t stream) {
    (void)sendbuff, (void)recvbuff, (void)comm, (void)stream;
    fake_nccl_record("Gather count=%zu type=%d root=%d", count, (int)datatype, root);
    return ncclSuccess;
}
ALIAS(ncclResult_t, ncclGather,
      (const void *sendbuff, void *recvbuff, size_t count, ncclDataType_t datatype, int root,
       ncclComm_t comm, cudaStream_t stream))

FAKE_API ncclResult_t pncclScatter(const void *sendbuff, void *recvbuff, size_t count,
                                   ncclDataType_t datatype, int root, ncclComm_t comm,
                                   cudaStream_t stream) {
    (void)sendbuff, (void)recvbuff, (void)comm, (void)stream;
    fake_nccl_record("Scatter count=%zu type=%d root=%d", count, (int)datatype, root);
    return ncclSuccess;
}
ALIAS(ncclResult_t, ncclScatter,
      (const void *sendbuff, void *recvbuff, size_t count, ncclDataType_t datatype, int root,
       ncclComm_t comm, cudaStream_t stream))

/* Bytes of one element of t (the real enum's sizes). */
static size_t type_bytes(ncclDataType_t t) {
    switch (t) {
    case ncclInt8:
    case ncclUint8: return 1;
    case ncclFloat16:
    case ncclBfloat16: return 2;
    case ncclInt32:
    case ncclUint32:
    case ncclFloat32: return 4;
    default: return 8;
    }
}

FAKE_API ncclResult_t pncclSend(const void *sendbuff, size_t count, ncclDataType_t datatype,
                                int peer, ncclComm_t comm, cudaStream_t stream) {
    (void)stream;
    fake_nccl_record("Send count=%zu peer=%d", count, peer);
    if (fake_nccl_get("p2p_data")) {
        if (comm == NULL || peer < 0 || peer >= comm->nranks || comm->grp == NULL)
            return ncclInvalidArgument;
        if (p2p(comm->grp, comm->rank, peer, 1, (void *)(uintptr_t)sendbuff,
                count * type_bytes(datatype)) != 0)
            return ncclInvalidUsage;
    }
    return ncclSuccess;
}
ALIAS(ncclResult_t, ncclSend,
      (const void *sendbuff, size_t count, ncclDataType_t datatype, int peer, ncclComm_t comm,
       cudaStream_t stream))

FAKE_API ncclResult_t pncclRecv(void *recvbuff, size_t count, ncclDataType_t datatype, int peer,
                                ncclComm_t comm, cudaStream_t stream) {
    (void)stream;
    fake_nccl_record("Recv count=%zu peer=%d", count, peer);
    if (fake_nccl_get("p2p_data")) {
        if (comm == NULL || peer < 0 || peer >= comm->nranks || comm->grp == NULL)
            return ncclInvalidArgument;
        if (p2p(comm->grp, peer, comm->rank, 0, recvbuff, count * type_bytes(datatype)) != 0)
            return ncclInvalidUsage;
    }
    return ncclSuccess;
}

/* ncclTeamLsa (nccl_device/core.h, a host function with C linkage): the ranks of this rank's
 * node. The struct is ncclTeam_t's layout. */
typedef struct fake_team {
    int nRanks, rank, stride;
} fake_team;

FAKE_API fake_team pncclTeamLsa(ncclComm_t comm) {
    fake_nccl_record("TeamLsa");
    fake_team t = {1, 0, 1};
    if (comm == NULL) return t;
    long g = fake_nccl_get("gpus_per_node");
    t.nRanks = g > 0 && g < comm->nranks ? (int)g : comm->nranks;
    t.rank = comm->rank % t.nRanks;
    return t;
}
ALIAS(fake_team, ncclTeamLsa, (ncclComm_t comm))
ALIAS(ncclResult_t, ncclRecv,
      (void *recvbuff, size_t count, ncclDataType_t datatype, int peer, ncclComm_t comm,
       cudaStream_t stream))

/* Groups: only the outermost bracket of the application shows in the log. */
FAKE_API ncclResult_t pncclGroupStart(void) {
    if (group_depth++ == 0 && !internal) fake_nccl_record("GroupStart");
    return ncclSuccess;
}
ALIAS(ncclResult_t, ncclGroupStart, (void))

FAKE_API ncclResult_t pncclGroupEnd(void) {
    if (group_depth == 0) return ncclInvalidUsage;
    if (--group_depth == 0 && !internal) fake_nccl_record("GroupEnd");
    return ncclSuccess;
}
ALIAS(ncclResult_t, ncclGroupEnd, (void))

FAKE_API ncclResult_t pncclGroupSimulateEnd(ncclSimInfo_t *simInfo) {
    if (group_depth == 0) return ncclInvalidUsage;
    if (--group_depth == 0) fake_nccl_record("GroupSimulateEnd");
    if (simInfo) simInfo->estimatedTime = 1.0f;
    return ncclSuccess;
}
ALIAS(ncclResult_t, ncclGroupSimulateEnd, (ncclSimInfo_t * simInfo))
