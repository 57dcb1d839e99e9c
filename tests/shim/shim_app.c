/* shim_app.c — an NCCL application for the shim's CPU tests: run over the fake libnccl with
 * libweft_nccl (preloaded, or linked ahead of libnccl) or without it, one scenario per process.
 * It checks return values, the exact sequence of NCCL and weft work (one log written by the fake
 * libnccl and the fake runtime), and weft's own log. */
#define _GNU_SOURCE /* dladdr */
#include "check.h"

#include <dlfcn.h>
#include <nccl.h>
#include <regex.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

/* exported by the fake libnccl */
void fake_nccl_set(const char *key, long value);
char *fake_nccl_take_log(void);

static const char *algos, *workdir, *scenario;
static char logpath[1024];

/* Drops the queries the shim makes of NCCL itself (version, size, rank, device) when filter. */
static char *take_log(int filter) {
    char *s = fake_nccl_take_log();
    if (!filter) return s;
    static const char *const drop[] = {"GetVersion\n", "CommCount\n", "CommUserRank\n",
                                       "CommCuDevice\n", "TeamLsa\n"};
    char *out = s, *w = s;
    for (char *line = s; *line;) {
        char *nl = strchr(line, '\n');
        size_t len = nl ? (size_t)(nl - line) + 1 : strlen(line);
        int keep = 1;
        for (size_t i = 0; i < sizeof drop / sizeof *drop; i++)
            if (len == strlen(drop[i]) && strncmp(line, drop[i], len) == 0) keep = 0;
        if (keep) {
            memmove(w, line, len);
            w += len;
        }
        line += len;
    }
    *w = '\0';
    return out;
}

static void drop_log(void) {
    free(take_log(1));
}

#define EXPECT_LOG(filter, expected)                                                               \
    do {                                                                                           \
        char *got_ = take_log(filter);                                                             \
        CHECK_STR(got_, expected);                                                                 \
        free(got_);                                                                                \
    } while (0)

/* Occurrences of s in weft's log file. */
static int in_weft_log(const char *s) {
    FILE *f = fopen(logpath, "r");
    if (f == NULL) return 0;
    int n = 0;
    char line[4096];
    while (fgets(line, sizeof line, f))
        if (strstr(line, s)) n++;
    fclose(f);
    return n;
}

#define EXPECT_WEFT_LOG(n, s)                                                                      \
    do {                                                                                           \
        int got_ = in_weft_log(s);                                                                 \
        if (got_ != (n))                                                                           \
            fprintf(stderr, "%s:%d: weft log has %d lines with \"%s\", expected %d\n", __FILE__,   \
                    __LINE__, got_, s, (n));                                                       \
        check_failures += got_ != (n);                                                             \
    } while (0)

/* Lines of weft's log that hold the words of s, whatever the spaces between them (the columns
 * of a WEFT_REPORT table). */
static int in_weft_log_words(const char *s) {
    FILE *f = fopen(logpath, "r");
    if (f == NULL) return 0;
    int n = 0;
    char line[4096], squeezed[4096];
    while (fgets(line, sizeof line, f)) {
        size_t k = 0;
        for (size_t i = 0; line[i] && line[i] != '\n'; i++)
            if (line[i] != ' ' || (k > 0 && squeezed[k - 1] != ' ')) squeezed[k++] = line[i];
        squeezed[k] = '\0';
        if (strstr(squeezed, s)) n++;
    }
    fclose(f);
    return n;
}

#define EXPECT_REPORT(n, s)                                                                        \
    do {                                                                                           \
        int got_ = in_weft_log_words(s);                                                           \
        if (got_ != (n))                                                                           \
            fprintf(stderr, "%s:%d: weft log has %d report lines with \"%s\", expected %d\n",      \
                    __FILE__, __LINE__, got_, s, (n));                                             \
        check_failures += got_ != (n);                                                             \
    } while (0)

static void setup(const char *algo_dir, const char *debug) {
    if (algo_dir) setenv("WEFT_ALGO_DIR", algo_dir, 1);
    if (debug) setenv("WEFT_DEBUG", debug, 1);
    snprintf(logpath, sizeof logpath, "%s/weft.%s.%d.log", workdir, scenario, (int)getpid());
    unlink(logpath);
    setenv("WEFT_DEBUG_FILE", logpath, 1);
}

static ncclComm_t init(int nranks, int rank) {
    ncclUniqueId id;
    ncclComm_t c = NULL;
    CHECK(ncclGetUniqueId(&id) == ncclSuccess);
    CHECK(ncclCommInitRank(&c, nranks, id, rank) == ncclSuccess);
    return c;
}

static float fbuf[1 << 21], gbuf[1 << 21];
#define S ((cudaStream_t)0)

/* ---- every function, as stock NCCL would answer --------------------------------------------- */
static const char passthrough_log[] =
    "GetVersion\nGetUniqueId\nGetErrorString 5\nCommInitRank nranks=2 rank=0\nCommCount\n"
    "CommCuDevice\nCommUserRank\nCommGetAsyncError\nGetLastError\nResetDebugInit\nMemAlloc 64\n"
    "CommRegister 64\nCommDeregister\nCommWindowRegister 64 flags=1\nCommWindowDeregister\n"
    "MemFree\nRedOpCreatePreMulSum type=7 residence=1\nRedOpDestroy 6\n"
    "AllReduce count=4 type=7 op=0 inplace=0\nAllGather count=4 type=7\n"
    "ReduceScatter count=4 type=7 op=1\nAlltoAll count=4 type=7\n"
    "Broadcast count=4 root=1 inplace=0\nBcast count=4 root=1\n"
    "Broadcast count=4 root=1 inplace=1\nReduce count=4 type=7 op=2 root=1\n"
    "Gather count=4 type=7 root=1\nScatter count=4 type=7 root=1\nSend count=4 peer=1\n"
    "Recv count=4 peer=1\nGroupStart\nSend count=1 peer=1\nRecv count=1 peer=1\nGroupEnd\n"
    "GroupStart\nGroupSimulateEnd\nCommInitRankConfig nranks=2 rank=1 blocking=1\n"
    "CommSplit color=0 key=0\nCommSplit color=-1 key=0\nCommShrink exclude=1 flags=0\n"
    "CommInitRankScalable nranks=2 rank=0 nId=1\nCommInitAll ndev=2\nCommRevoke flags=0\n"
    "CommFinalize rank=0\nCommDestroy rank=0\nCommAbort rank=0\nCommDestroy rank=0\n"
    "CommDestroy rank=0\nCommDestroy rank=0\nCommDestroy rank=1\nCommDestroy rank=1\n";

static void passthrough(void) {
    int v = 0, x = -1;
    ncclUniqueId id;
    ncclComm_t c = NULL;
    CHECK(ncclGetVersion(&v) == ncclSuccess && v == NCCL_VERSION_CODE);
    CHECK(ncclGetUniqueId(&id) == ncclSuccess && id.internal[0] == 'F');
    CHECK_STR(ncclGetErrorString(ncclInvalidUsage), "fake usage");
    CHECK(ncclCommInitRank(&c, 2, id, 0) == ncclSuccess && c != NULL);
    CHECK(ncclCommCount(c, &x) == ncclSuccess && x == 2);
    CHECK(ncclCommCuDevice(c, &x) == ncclSuccess && x == 0);
    CHECK(ncclCommUserRank(c, &x) == ncclSuccess && x == 0);
    ncclResult_t async = ncclInternalError;
    CHECK(ncclCommGetAsyncError(c, &async) == ncclSuccess && async == ncclSuccess);
    CHECK_STR(ncclGetLastError(c), "fake last error");
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
    ncclResetDebugInit();
#pragma GCC diagnostic pop
    void *p = NULL, *h = NULL;
    ncclWindow_t w = NULL;
    CHECK(ncclMemAlloc(&p, 64) == ncclSuccess && p != NULL);
    CHECK(ncclCommRegister(c, p, 64, &h) == ncclSuccess && h == p);
    CHECK(ncclCommDeregister(c, h) == ncclSuccess);
    CHECK(ncclCommWindowRegister(c, p, 64, &w, NCCL_WIN_COLL_SYMMETRIC) == ncclSuccess &&
          (void *)w == p);
    CHECK(ncclCommWindowDeregister(c, w) == ncclSuccess);
    CHECK(ncclMemFree(p) == ncclSuccess);
    ncclRedOp_t op = ncclSum;
    float scalar = 0.5f;
    CHECK(ncclRedOpCreatePreMulSum(&op, &scalar, ncclFloat, ncclScalarHostImmediate, c) ==
              ncclSuccess &&
          op == ncclNumOps + 1);
    CHECK(ncclRedOpDestroy(op, c) == ncclSuccess);
    CHECK(ncclAllReduce(fbuf, gbuf, 4, ncclFloat, ncclSum, c, S) == ncclSuccess);
    CHECK(ncclAllGather(fbuf, gbuf, 4, ncclFloat, c, S) == ncclSuccess);
    CHECK(ncclReduceScatter(fbuf, gbuf, 4, ncclFloat, ncclProd, c, S) == ncclSuccess);
    CHECK(ncclAlltoAll(fbuf, gbuf, 4, ncclFloat, c, S) == ncclSuccess);
    CHECK(ncclBroadcast(fbuf, gbuf, 4, ncclFloat, 1, c, S) == ncclSuccess);
    CHECK(ncclBcast(fbuf, 4, ncclFloat, 1, c, S) == ncclSuccess);
    CHECK(ncclReduce(fbuf, gbuf, 4, ncclFloat, ncclMax, 1, c, S) == ncclSuccess);
    CHECK(ncclGather(fbuf, gbuf, 4, ncclFloat, 1, c, S) == ncclSuccess);
    CHECK(ncclScatter(fbuf, gbuf, 4, ncclFloat, 1, c, S) == ncclSuccess);
    CHECK(ncclSend(fbuf, 4, ncclFloat, 1, c, S) == ncclSuccess);
    CHECK(ncclRecv(gbuf, 4, ncclFloat, 1, c, S) == ncclSuccess);
    CHECK(ncclGroupStart() == ncclSuccess);
    CHECK(ncclSend(fbuf, 1, ncclFloat, 1, c, S) == ncclSuccess);
    CHECK(ncclRecv(gbuf, 1, ncclFloat, 1, c, S) == ncclSuccess);
    CHECK(ncclGroupEnd() == ncclSuccess);
    ncclSimInfo_t sim = NCCL_SIM_INFO_INITIALIZER;
    CHECK(ncclGroupStart() == ncclSuccess);
    CHECK(ncclGroupSimulateEnd(&sim) == ncclSuccess && sim.estimatedTime == 1.0f);
    CHECK(ncclGroupEnd() == ncclInvalidUsage); /* unmatched: NCCL's answer */
    ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
    ncclComm_t c2 = NULL, s = NULL, none = c, k = NULL, sc = NULL, all[2] = {NULL, NULL};
    CHECK(ncclCommInitRankConfig(&c2, 2, id, 1, &config) == ncclSuccess && c2);
    CHECK(ncclCommSplit(c, 0, 0, &s, NULL) == ncclSuccess && s);
    CHECK(ncclCommSplit(c, NCCL_SPLIT_NOCOLOR, 0, &none, NULL) == ncclSuccess && none == NULL);
    int excl[] = {1};
    CHECK(ncclCommShrink(c, excl, 1, &k, NULL, NCCL_SHRINK_DEFAULT) == ncclSuccess && k);
    CHECK(ncclCommInitRankScalable(&sc, 2, 0, 1, &id, &config) == ncclSuccess && sc);
    CHECK(ncclCommInitAll(all, 2, NULL) == ncclSuccess && all[0] && all[1]);
    CHECK(ncclCommRevoke(s, NCCL_REVOKE_DEFAULT) == ncclSuccess);
    CHECK(ncclCommFinalize(c) == ncclSuccess);
    CHECK(ncclCommDestroy(c) == ncclSuccess);
    CHECK(ncclCommAbort(s) == ncclSuccess);
    CHECK(ncclCommDestroy(k) == ncclSuccess);
    CHECK(ncclCommDestroy(sc) == ncclSuccess);
    CHECK(ncclCommDestroy(all[0]) == ncclSuccess);
    CHECK(ncclCommDestroy(all[1]) == ncclSuccess);
    CHECK(ncclCommDestroy(c2) == ncclSuccess);
    EXPECT_LOG(0, passthrough_log);
}

/* ---- weft serves what its algorithms fit ------------------------------------------------- */
static void serve(void) {
    ncclComm_t c = init(2, 0);
    EXPECT_LOG(1, "GetUniqueId\nCommInitRank nranks=2 rank=0\nweft.api version=22809\n"
                  "weft.attach n=1\n");
    unsigned short *h = (unsigned short *)fbuf;
    CHECK(ncclAllReduce(fbuf, gbuf, 4, ncclFloat, ncclSum, c, S) == ncclSuccess);
    /* an empty call goes straight to NCCL, before any lookup (not even a log line) */
    CHECK(ncclAllGather(fbuf, gbuf, 0, ncclFloat, c, S) == ncclSuccess);
    CHECK(ncclAllReduce(fbuf, fbuf, 1 << 20, ncclFloat, ncclSum, c, S) == ncclSuccess);
    CHECK(ncclAllReduce(fbuf, gbuf, 1 << 20, ncclFloat, ncclMin, c, S) == ncclSuccess);
    CHECK(ncclAllReduce(fbuf, gbuf, 4, ncclFloat, ncclAvg, c, S) == ncclSuccess);
    CHECK(ncclAllReduce(fbuf, gbuf, 4, ncclFloat8e4m3, ncclSum, c, S) == ncclSuccess);
    CHECK(ncclAllReduce(NULL, gbuf, 4, ncclFloat, ncclSum, c, S) == ncclInvalidArgument);
    CHECK(ncclAllGather(gbuf, gbuf, 16, ncclFloat, c, S) == ncclSuccess); /* rank 0: in place */
    CHECK(ncclAllGather(fbuf, gbuf, 16, ncclFloat8e5m2, c, S) == ncclSuccess);
    CHECK(ncclReduceScatter(h, h, 7, ncclHalf, ncclSum, c, S) == ncclSuccess);
    CHECK(ncclAlltoAll(fbuf, gbuf, 5, ncclBfloat16, c, S) == ncclSuccess);
    CHECK(ncclBroadcast(fbuf, gbuf, 8, ncclFloat, 0, c, S) == ncclSuccess);
    CHECK(ncclBroadcast(fbuf, gbuf, 8, ncclFloat, 1, c, S) == ncclSuccess);
    CHECK(ncclBcast(fbuf, 8, ncclFloat, 0, c, S) == ncclSuccess);
    CHECK(ncclBcast(fbuf, 8, ncclFloat, 1, c, S) == ncclSuccess);
    CHECK(ncclReduce(fbuf, gbuf, 8, ncclFloat, ncclSum, 0, c, S) == ncclSuccess);
    CHECK(ncclGather(fbuf, gbuf, 8, ncclFloat, 0, c, S) == ncclSuccess);
    CHECK(ncclScatter(fbuf, gbuf, 8, ncclFloat, 0, c, S) == ncclSuccess);
    EXPECT_LOG(1, "weft.launch ar2_small count=4 inplace=0\n"
                  "AllGather count=0 type=7\n"
                  "AllReduce count=1048576 type=7 op=0 inplace=1\n"
                  "weft.launch ar2_large count=1048576 inplace=0\n"
                  "AllReduce count=4 type=7 op=4 inplace=0\n"
                  "AllReduce count=4 type=10 op=0 inplace=0\n"
                  "weft.launch ag2 count=16 inplace=1\n"
                  "weft.launch ag2 count=16 inplace=0\n"
                  "weft.launch rs2 count=7 inplace=1\n"
                  "weft.launch a2a2 count=5 inplace=0\n"
                  "weft.launch bc2_root0 count=8 inplace=0\n"
                  "Broadcast count=8 root=1 inplace=0\n"
                  "weft.launch bc2_root0 count=8 inplace=1\n"
                  "Bcast count=8 root=1\nBroadcast count=8 root=1 inplace=1\n"
                  "Reduce count=8 type=7 op=0 root=0\nGather count=8 type=7 root=0\n"
                  "Scatter count=8 type=7 root=0\n");
    /* why each call went where it did; ncclBcast's inner ncclBroadcast is NCCL's own business */
    EXPECT_WEFT_LOG(1, "-> weft 'ar2_small'");
    EXPECT_WEFT_LOG(0, "AllGather count 0");
    EXPECT_WEFT_LOG(1, "AllReduce count 1048576 float sum in-place bytes 4194304");
    EXPECT_WEFT_LOG(1, "-> NCCL: no algorithm for this buffer mode");
    EXPECT_WEFT_LOG(1, "-> NCCL: reduction op not served by weft (avg, PreMulSum and user ops "
                       "go to NCCL)");
    EXPECT_WEFT_LOG(1, "-> NCCL: data type not served by weft");
    EXPECT_WEFT_LOG(1, "-> NCCL: NULL buffer (NCCL reports the error)");
    EXPECT_WEFT_LOG(1, "AllGather count 16 fp8e5m2 out-of-place bytes 32");
    EXPECT_WEFT_LOG(1, "ncclBcast count 8 float in-place root 1 bytes 32");
    EXPECT_WEFT_LOG(0, "ncclBroadcast count 8 float in-place root 1");
    EXPECT_WEFT_LOG(1, "ncclReduce count 8 float sum out-of-place root 0 bytes 32");
    EXPECT_WEFT_LOG(2, "-> NCCL: no algorithm for this root");
    /* symmetric windows reach weft (they let calls read peers' buffers in place); others not */
    void *wp = NULL;
    ncclWindow_t w = NULL, w2 = NULL;
    CHECK(ncclMemAlloc(&wp, 64) == ncclSuccess);
    CHECK(ncclCommWindowRegister(c, wp, 64, &w, NCCL_WIN_COLL_SYMMETRIC) == ncclSuccess);
    CHECK(ncclCommWindowRegister(c, wp, 64, &w2, 0) == ncclSuccess);
    CHECK(ncclCommWindowDeregister(c, w) == ncclSuccess);
    CHECK(ncclCommWindowDeregister(c, w2) == ncclSuccess);
    /* in a group NCCL registers at ncclGroupEnd (nccl-tests -R 2): weft learns of it then */
    CHECK(ncclGroupStart() == ncclSuccess);
    CHECK(ncclCommWindowRegister(c, wp, 64, &w, NCCL_WIN_COLL_SYMMETRIC) == ncclSuccess);
    CHECK(ncclGroupEnd() == ncclSuccess);
    CHECK(ncclCommWindowDeregister(c, w) == ncclSuccess);
    CHECK(ncclMemFree(wp) == ncclSuccess);
    EXPECT_LOG(1, "MemAlloc 64\nCommWindowRegister 64 flags=1\n"
                  "weft.window_register nranks=2 bytes=64\nCommWindowRegister 64 flags=0\n"
                  "weft.window_deregister nranks=2\nCommWindowDeregister\n"
                  "weft.window_deregister nranks=2\nCommWindowDeregister\n"
                  "GroupStart\nCommWindowRegister 64 flags=1\nGroupEnd\n"
                  "weft.window_register nranks=2 bytes=64\n"
                  "weft.window_deregister nranks=2\nCommWindowDeregister\nMemFree\n");
    CHECK(ncclCommDestroy(c) == ncclSuccess);
    EXPECT_LOG(1, "CommDestroy rank=0\nweft.abort nranks=2\n");
    EXPECT_WEFT_LOG(1, "weft's state released locally at ncclCommDestroy");
}

/* ---- groups: weft's calls are launched after the real outermost ncclGroupEnd, in order ---- */
static void groups(void) {
    ncclComm_t c = init(2, 0);
    drop_log();
    CHECK(ncclGroupStart() == ncclSuccess);
    CHECK(ncclAllReduce(fbuf, gbuf, 4, ncclFloat, ncclSum, c, S) == ncclSuccess);
    CHECK(ncclSend(fbuf, 3, ncclFloat, 1, c, S) == ncclSuccess);
    CHECK(ncclAllReduce(fbuf, fbuf, 1 << 20, ncclFloat, ncclSum, c, S) == ncclSuccess);
    CHECK(ncclGroupStart() == ncclSuccess);
    CHECK(ncclAllGather(fbuf, gbuf, 16, ncclFloat, c, S) == ncclSuccess);
    CHECK(ncclGroupEnd() == ncclSuccess);
    CHECK(ncclRecv(gbuf, 3, ncclFloat, 1, c, S) == ncclSuccess);
    EXPECT_LOG(1, "GroupStart\nSend count=3 peer=1\nAllReduce count=1048576 type=7 op=0 "
                  "inplace=1\nRecv count=3 peer=1\n");
    CHECK(ncclGroupEnd() == ncclSuccess);
    EXPECT_LOG(1, "GroupEnd\nweft.launch ar2_small count=4 inplace=0\n"
                  "weft.launch ag2 count=16 inplace=0\n");
    EXPECT_WEFT_LOG(2, "(after ncclGroupEnd)");
    /* a simulated group launches nothing */
    ncclSimInfo_t sim = NCCL_SIM_INFO_INITIALIZER;
    CHECK(ncclGroupStart() == ncclSuccess);
    CHECK(ncclAllReduce(fbuf, gbuf, 4, ncclFloat, ncclSum, c, S) == ncclSuccess);
    CHECK(ncclGroupSimulateEnd(&sim) == ncclSuccess);
    EXPECT_LOG(1, "GroupStart\nGroupSimulateEnd\n");
    /* unmatched ends are NCCL's error and leave nothing behind */
    CHECK(ncclGroupEnd() == ncclInvalidUsage);
    CHECK(ncclAllReduce(fbuf, gbuf, 4, ncclFloat, ncclSum, c, S) == ncclSuccess);
    EXPECT_LOG(1, "weft.launch ar2_small count=4 inplace=0\n");
    /* communicators created in a group are attached after it, together */
    ncclUniqueId id;
    ncclComm_t a = NULL, b = NULL;
    CHECK(ncclGetUniqueId(&id) == ncclSuccess);
    CHECK(ncclGroupStart() == ncclSuccess);
    CHECK(ncclCommInitRank(&a, 2, id, 0) == ncclSuccess);
    CHECK(ncclCommInitRank(&b, 2, id, 1) == ncclSuccess);
    CHECK(ncclAllReduce(fbuf, gbuf, 4, ncclFloat, ncclSum, a, S) == ncclSuccess);
    CHECK(ncclGroupEnd() == ncclSuccess);
    EXPECT_LOG(1, "GetUniqueId\nGroupStart\nCommInitRank nranks=2 rank=0\n"
                  "CommInitRank nranks=2 rank=1\nAllReduce count=4 type=7 op=0 inplace=0\n"
                  "GroupEnd\nweft.attach n=2\n");
    EXPECT_WEFT_LOG(1, "-> NCCL: communicator not attached");
    CHECK(ncclGroupStart() == ncclSuccess);
    CHECK(ncclAllReduce(fbuf, gbuf, 4, ncclFloat, ncclSum, a, S) == ncclSuccess);
    CHECK(ncclAllReduce(fbuf, gbuf, 4, ncclFloat, ncclSum, b, S) == ncclSuccess);
    CHECK(ncclGroupEnd() == ncclSuccess);
    EXPECT_LOG(1, "GroupStart\nGroupEnd\nweft.launch ar2_small count=4 inplace=0\n"
                  "weft.launch ar2_small count=4 inplace=0\n");
    ncclComm_t all[2];
    CHECK(ncclCommInitAll(all, 2, NULL) == ncclSuccess);
    EXPECT_LOG(1, "CommInitAll ndev=2\nweft.attach n=2\n");
    CHECK(ncclCommDestroy(all[0]) == ncclSuccess && ncclCommDestroy(all[1]) == ncclSuccess);
    CHECK(ncclCommDestroy(a) == ncclSuccess && ncclCommDestroy(b) == ncclSuccess);
    CHECK(ncclCommDestroy(c) == ncclSuccess);
    EXPECT_LOG(1, "CommDestroy rank=0\nweft.abort nranks=2\nCommDestroy rank=1\n"
                  "weft.abort nranks=2\nCommDestroy rank=0\nweft.abort nranks=2\n"
                  "CommDestroy rank=1\nweft.abort nranks=2\nCommDestroy rank=0\n"
                  "weft.abort nranks=2\n");
}

/* ---- communicators made from others ------------------------------------------------------ */
static void split(void) {
    ncclComm_t c = init(2, 0), s = NULL, none = NULL, k = NULL, nb = NULL;
    drop_log();
    CHECK(ncclCommSplit(c, 0, 0, &s, NULL) == ncclSuccess);
    CHECK(ncclCommSplit(c, NCCL_SPLIT_NOCOLOR, 0, &none, NULL) == ncclSuccess && none == NULL);
    int excl[] = {1};
    CHECK(ncclCommShrink(c, excl, 1, &k, NULL, NCCL_SHRINK_DEFAULT) == ncclSuccess);
    ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
    config.blocking = 0;
    CHECK(ncclCommSplit(c, 1, 0, &nb, &config) == ncclSuccess);
    EXPECT_LOG(1, "CommSplit color=0 key=0\nweft.attach n=1\nCommSplit color=-1 key=0\n"
                  "CommShrink exclude=1 flags=0\nCommSplit color=1 key=0\n");
    EXPECT_WEFT_LOG(1, "from ncclCommShrink: no algorithm loaded for this rank count");
    EXPECT_WEFT_LOG(1, "from ncclCommSplit: non-blocking communicator");
    /* the parent can go first; the child keeps working */
    CHECK(ncclCommDestroy(c) == ncclSuccess);
    CHECK(ncclAllReduce(fbuf, gbuf, 4, ncclFloat, ncclSum, s, S) == ncclSuccess);
    CHECK(ncclAllReduce(fbuf, gbuf, 4, ncclFloat, ncclSum, k, S) == ncclSuccess);
    CHECK(ncclAllReduce(fbuf, gbuf, 4, ncclFloat, ncclSum, nb, S) == ncclSuccess);
    CHECK(ncclCommDestroy(s) == ncclSuccess && ncclCommDestroy(k) == ncclSuccess);
    CHECK(ncclCommDestroy(nb) == ncclSuccess);
    EXPECT_LOG(1, "CommDestroy rank=0\nweft.abort nranks=2\n"
                  "weft.launch ar2_small count=4 inplace=0\n"
                  "AllReduce count=4 type=7 op=0 inplace=0\n"
                  "AllReduce count=4 type=7 op=0 inplace=0\n"
                  "CommDestroy rank=0\nweft.abort nranks=2\nCommDestroy rank=0\n"
                  "CommDestroy rank=0\n");
}

/* ---- non-blocking communicators are NCCL's -------------------------------------------------- */
static void nonblocking(void) {
    setenv("NCCL_COMM_BLOCKING", "0", 1); /* NCCL's default when a config does not say */
    ncclUniqueId id;
    ncclComm_t c = NULL, d = NULL, e = NULL;
    CHECK(ncclGetUniqueId(&id) == ncclSuccess);
    ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
    config.blocking = 0;
    CHECK(ncclCommInitRankConfig(&c, 2, id, 0, &config) == ncclInProgress);
    CHECK(ncclCommInitRank(&d, 2, id, 0) == ncclSuccess);
    config.blocking = 1;
    CHECK(ncclCommInitRankConfig(&e, 2, id, 0, &config) == ncclSuccess);
    CHECK(ncclAllReduce(fbuf, gbuf, 4, ncclFloat, ncclSum, c, S) == ncclSuccess);
    CHECK(ncclAllReduce(fbuf, gbuf, 4, ncclFloat, ncclSum, d, S) == ncclSuccess);
    CHECK(ncclAllReduce(fbuf, gbuf, 4, ncclFloat, ncclSum, e, S) == ncclSuccess);
    CHECK(ncclCommDestroy(c) == ncclSuccess && ncclCommDestroy(d) == ncclSuccess);
    CHECK(ncclCommDestroy(e) == ncclSuccess);
    EXPECT_LOG(1, "GetUniqueId\nCommInitRankConfig nranks=2 rank=0 blocking=0\nweft.api "
                  "version=22809\nCommInitRank nranks=2 rank=0\n"
                  "CommInitRankConfig nranks=2 rank=0 blocking=1\nweft.attach n=1\n"
                  "AllReduce count=4 type=7 op=0 inplace=0\nAllReduce count=4 type=7 op=0 "
                  "inplace=0\nweft.launch ar2_small count=4 inplace=0\nCommDestroy rank=0\n"
                  "CommDestroy rank=0\nCommDestroy rank=0\nweft.abort nranks=2\n");
    EXPECT_WEFT_LOG(4, "non-blocking communicator (config.blocking=0): weft is not attached");
    EXPECT_WEFT_LOG(1, "NCCL_COMM_BLOCKING set by environment to 0");
}

/* ---- failures inside weft are never the application's ------------------------------------- */
static void attach_fail(void) {
    fake_nccl_set("attach_fail", 1);
    ncclComm_t c = init(2, 0);
    CHECK(c != NULL);
    CHECK(ncclAllReduce(fbuf, gbuf, 4, ncclFloat, ncclSum, c, S) == ncclSuccess);
    CHECK(ncclAllReduce(fbuf, gbuf, 4, ncclFloat, ncclSum, c, S) == ncclSuccess);
    fake_nccl_set("attach_fail", 0);
    fake_nccl_set("attach_unsupported", 1);
    ncclComm_t d = init(2, 1);
    CHECK(ncclAllReduce(fbuf, gbuf, 4, ncclFloat, ncclSum, d, S) == ncclSuccess);
    CHECK(ncclCommDestroy(c) == ncclSuccess && ncclCommDestroy(d) == ncclSuccess);
    EXPECT_LOG(1, "GetUniqueId\nCommInitRank nranks=2 rank=0\nweft.api version=22809\n"
                  "weft.attach n=1\nAllReduce count=4 type=7 op=0 inplace=0\n"
                  "AllReduce count=4 type=7 op=0 inplace=0\nGetUniqueId\n"
                  "CommInitRank nranks=2 rank=1\nweft.attach n=1\n"
                  "AllReduce count=4 type=7 op=0 inplace=0\nCommDestroy rank=0\n"
                  "CommDestroy rank=1\n");
    EXPECT_WEFT_LOG(1, "weft WARN");
    EXPECT_WEFT_LOG(1, "rank 0 of 2 (device 0): weft could not attach (CUDA error: fake attach "
                       "failure); NCCL serves every call on it");
    EXPECT_WEFT_LOG(1, "rank 1 of 2 (device 1): weft does not support it (peers are not "
                       "LSA-reachable)");
}

static void launch_fail(void) {
    ncclComm_t c = init(2, 0);
    drop_log();
    fake_nccl_set("launch_fail", 1);
    CHECK(ncclAllReduce(fbuf, gbuf, 4, ncclFloat, ncclSum, c, S) == ncclSuccess);
    fake_nccl_set("launch_fail", 0);
    CHECK(ncclAllReduce(fbuf, gbuf, 4, ncclFloat, ncclSum, c, S) == ncclSuccess);
    CHECK(ncclCommDestroy(c) == ncclSuccess);
    EXPECT_LOG(1, "AllReduce count=4 type=7 op=0 inplace=0\n"
                  "AllReduce count=4 type=7 op=0 inplace=0\n"
                  "CommDestroy rank=0\nweft.abort nranks=2\n");
    EXPECT_WEFT_LOG(1, "weft WARN");
    EXPECT_WEFT_LOG(1, "a weft launch failed (CUDA error); NCCL serves every call on it from now");
    EXPECT_WEFT_LOG(1, "-> NCCL: an earlier weft launch failed on this communicator");
}

/* ---- teardown points ---------------------------------------------------------------------- */
static void teardown(void) {
    ncclComm_t c = init(2, 0), d = init(2, 1);
    drop_log();
    CHECK(ncclCommFinalize(c) == ncclSuccess);
    CHECK(ncclAllReduce(fbuf, gbuf, 4, ncclFloat, ncclSum, c, S) == ncclSuccess);
    CHECK(ncclCommDestroy(c) == ncclSuccess);
    CHECK(ncclCommRevoke(d, 0) == ncclSuccess);
    CHECK(ncclCommAbort(d) == ncclSuccess);
    EXPECT_LOG(1, "weft.detach nranks=2\nCommFinalize rank=0\n"
                  "AllReduce count=4 type=7 op=0 inplace=0\nCommDestroy rank=0\n"
                  "CommRevoke flags=0\nCommAbort rank=1\nweft.abort nranks=2\n");
    EXPECT_WEFT_LOG(1, "-> NCCL: communicator finalized");
    EXPECT_WEFT_LOG(1, "weft's state released locally at ncclCommAbort");
    /* several communicators of one thread are finalized in a group: no collective teardown
     * there (the real finalize runs at ncclGroupEnd); local release at destroy */
    ncclComm_t a = init(2, 0), b = init(2, 1);
    drop_log();
    CHECK(ncclGroupStart() == ncclSuccess);
    CHECK(ncclCommFinalize(a) == ncclSuccess);
    CHECK(ncclCommFinalize(b) == ncclSuccess);
    CHECK(ncclGroupEnd() == ncclSuccess);
    CHECK(ncclAllReduce(fbuf, gbuf, 4, ncclFloat, ncclSum, b, S) == ncclSuccess);
    CHECK(ncclCommDestroy(a) == ncclSuccess);
    CHECK(ncclCommDestroy(b) == ncclSuccess);
    EXPECT_LOG(1, "GroupStart\nCommFinalize rank=0\nCommFinalize rank=1\nGroupEnd\n"
                  "AllReduce count=4 type=7 op=0 inplace=0\nCommDestroy rank=0\n"
                  "weft.abort nranks=2\nCommDestroy rank=1\nweft.abort nranks=2\n");
    EXPECT_WEFT_LOG(1, "weft detached at ncclCommFinalize");
}

/* ---- algorithm files: bad ones are reported once and skipped ----------------------------------
 */
static void bad_algos(void) {
    char dir[1100], path[1200], paths[2600], src[1200];
    snprintf(dir, sizeof dir, "%s/bad_algos.%d", workdir, (int)getpid());
    CHECK(mkdir(dir, 0700) == 0);
    snprintf(path, sizeof path, "%s/broken.xml", dir);
    FILE *f = fopen(path, "w");
    CHECK(f != NULL);
    if (f) {
        fputs("<algo name=\"broken\"\n", f);
        fclose(f);
    }
    snprintf(src, sizeof src, "%s/allreduce_2r_small.xml", algos);
    snprintf(paths, sizeof paths, "%s:/nonexistent/algos:%s", dir, src);
    setup(paths, "WARN");
    ncclComm_t c[3] = {init(2, 0), init(2, 1), init(2, 0)};
    for (int i = 0; i < 3; i++)
        CHECK(ncclAllReduce(fbuf, gbuf, 4, ncclFloat, ncclSum, c[i], S) == ncclSuccess);
    for (int i = 0; i < 3; i++)
        CHECK(ncclCommDestroy(c[i]) == ncclSuccess);
    char *log = take_log(1);
    CHECK(strstr(log, "weft.launch ar2_small") != NULL);
    free(log);
    snprintf(path, sizeof path, "%s/broken.xml: note: algorithm skipped", dir);
    EXPECT_WEFT_LOG(1, path);
    EXPECT_WEFT_LOG(1, "/nonexistent/algos: error: cannot open: No such file or directory");
    snprintf(path, sizeof path, "%s/broken.xml", dir);
    unlink(path);
    rmdir(dir);
}

/* ---- a folder with hostile files: weft stays up, serves what is good, NCCL the rest --------- */
static void write_text(const char *dir, const char *name, const char *text) {
    char path[1300];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "w");
    CHECK(f != NULL);
    if (f) {
        fputs(text, f);
        fclose(f);
    }
}

static void copy_file(const char *src, const char *dir, const char *name) {
    char dst[1300];
    snprintf(dst, sizeof dst, "%s/%s", dir, name);
    FILE *in = fopen(src, "r"), *out = fopen(dst, "w");
    CHECK(in && out);
    if (in && out) {
        char buf[4096];
        size_t n;
        while ((n = fread(buf, 1, sizeof buf, in)) > 0)
            fwrite(buf, 1, n, out);
    }
    if (in) fclose(in);
    if (out) fclose(out);
}

static void hostile_algos(void) {
    char dir[1100], path[1300], src[1200];
    snprintf(dir, sizeof dir, "%s/hostile_algos.%d", workdir, (int)getpid());
    CHECK(mkdir(dir, 0700) == 0);
    /* the good one, last in name order */
    snprintf(src, sizeof src, "%s/allreduce_2r_small.xml", algos);
    copy_file(src, dir, "z_good.xml");
    /* an out-of-place allreduce that sums into NCCL's const send buffer and restores it: were
     * it accepted, it would serve the allreduces below (it comes first) */
    snprintf(src, sizeof src, "%s/../../verify/bad/const-input-restored.xml", algos);
    copy_file(src, dir, "l_const.xml");
    /* an index past 2^63 - 2 (used to overflow the compiler and crash the process) */
    write_text(dir, "a_index.weft",
               "param N = 2;\nalgorithm a { collective allreduce; ranks N; }\n"
               "copy input[9223372036854775807][0] -> input[1][0];\n");
    /* 2^60 calls, and an endless loop with a body: the work budget stops both */
    write_text(dir, "b_calls.weft",
               "param N = 2;\nalgorithm b { collective allreduce; ranks N; }\n"
               "def f(d) { if d < 60 { f(d + 1); f(d + 1); } }\nf(0);\n");
    write_text(dir, "c_loop.weft",
               "param N = 2;\nalgorithm c { collective allreduce; ranks N; }\n"
               "for i in 0..9223372036854775807 { let x = i * 2; }\n");
    /* garbage: NULs and invalid bytes */
    snprintf(path, sizeof path, "%s/d_nul.weft", dir);
    FILE *f = fopen(path, "w");
    if (f) {
        for (int i = 0; i < 200000; i++)
            fputc(i % 3 ? 0 : 0x81, f);
        fclose(f);
    }
    /* a FIFO nobody writes, a directory, links to a device, to nothing, to themselves */
    snprintf(path, sizeof path, "%s/e_fifo.xml", dir);
    CHECK(mkfifo(path, 0600) == 0);
    snprintf(path, sizeof path, "%s/f_dir.xml", dir);
    CHECK(mkdir(path, 0700) == 0);
    snprintf(path, sizeof path, "%s/g_zero.weft", dir);
    CHECK(symlink("/dev/zero", path) == 0);
    snprintf(path, sizeof path, "%s/h_dangling.xml", dir);
    CHECK(symlink("/nonexistent/x.xml", path) == 0);
    snprintf(path, sizeof path, "%s/i_loop.xml", dir);
    CHECK(symlink("i_loop.xml", path) == 0);
    /* too large to read: a sparse 300 MiB XML file and a 5 MiB source */
    snprintf(path, sizeof path, "%s/j_huge.xml", dir);
    f = fopen(path, "w");
    if (f) {
        CHECK(ftruncate(fileno(f), 300L << 20) == 0);
        fclose(f);
    }
    snprintf(path, sizeof path, "%s/k_huge.weft", dir);
    f = fopen(path, "w");
    if (f) {
        CHECK(ftruncate(fileno(f), 5L << 20) == 0);
        fclose(f);
    }
    setup(dir, "INFO");
    ncclComm_t c[2] = {init(2, 0), init(2, 1)};
    for (int i = 0; i < 2; i++) {
        CHECK(ncclAllReduce(fbuf, gbuf, 4, ncclFloat, ncclSum, c[i], S) == ncclSuccess);
        CHECK(ncclAllGather(fbuf, gbuf, 4, ncclFloat, c[i], S) == ncclSuccess);
    }
    for (int i = 0; i < 2; i++)
        CHECK(ncclCommDestroy(c[i]) == ncclSuccess);
    char *log = take_log(1);
    /* the good file serves the allreduces; NCCL the allgathers */
    CHECK(strstr(log, "weft.launch ar2_small") != NULL);
    CHECK(strstr(log, "AllGather count=4") != NULL);
    free(log);
    static const char *const why[][2] = {
        {"a_index.weft:3:12: error: rank 9223372036854775807 is out of range 0..1", NULL},
        {"b_calls.weft:3:", "evaluation stopped at its limit of"},
        {"c_loop.weft:3:", "evaluation stopped at its limit of"},
        {"d_nul.weft:1:1: error: ", "invalid bytes"},
        {"e_fifo.xml: info: skipped: not a regular file (it is a FIFO)", NULL},
        {"f_dir.xml: info: skipped: not a regular file (it is a directory)", NULL},
        {"g_zero.weft: info: skipped: not a regular file (it is a character device)", NULL},
        {"h_dangling.xml: info: skipped: a symbolic link to nothing", NULL},
        {"i_loop.xml: info: skipped: Too many levels of symbolic links", NULL},
        {"j_huge.xml: error: file too large (314572800 bytes; the limit is 268435456)", NULL},
        {"k_huge.weft: error: file too large (5242880 bytes; the limit is 4194304)", NULL},
        {"l_const.xml:7: error: rank 0 tb 0 step 2: writes input chunk 0, but the input is NCCL's "
         "const send buffer in an out-of-place call",
         NULL},
    };
    for (size_t i = 0; i < sizeof why / sizeof *why; i++) {
        snprintf(path, sizeof path, "%s/%s", dir, why[i][0]);
        if (in_weft_log(path) < 1 || (why[i][1] && in_weft_log(why[i][1]) < 1)) {
            fprintf(stderr, "%s:%d: weft log lacks \"%s\" %s\n", __FILE__, __LINE__, path,
                    why[i][1] ? why[i][1] : "");
            check_failures++;
        }
    }
    const char *names[] = {"z_good.xml", "a_index.weft", "b_calls.weft", "c_loop.weft",
                           "d_nul.weft", "e_fifo.xml",   "g_zero.weft",  "h_dangling.xml",
                           "i_loop.xml", "j_huge.xml",   "k_huge.weft",  "l_const.xml"};
    for (size_t i = 0; i < sizeof names / sizeof *names; i++) {
        snprintf(path, sizeof path, "%s/%s", dir, names[i]);
        unlink(path);
    }
    snprintf(path, sizeof path, "%s/f_dir.xml", dir);
    rmdir(path);
    rmdir(dir);
}

/* ---- one folder of sources serves every communicator size --------------------------------- */
static void sizes(void) {
    char dir[1100], path[2400], src[1200];
    snprintf(dir, sizeof dir, "%s/sizes.%d", workdir, (int)getpid());
    CHECK(mkdir(dir, 0700) == 0);
    snprintf(path, sizeof path, "%s/ring.weft", dir);
    FILE *f = fopen(path, "w");
    CHECK(f != NULL);
    if (f) {
        fputs("param N = 4;\nalgorithm ring { collective allreduce; ranks N; chunks N; inplace; "
              "minbytes 1M; }\nfor s in 0..N-1 { for i in 0..N { let r = (i + s) % N;\n"
              "reduce input[r][i] -> input[(r + 1) % N][i]; } }\nfor s in 0..N-1 { for i in "
              "0..N { let r = (i - 1 + s) % N; copy input[r][i] -> input[(r + 1) % N][i]; } }\n",
              f);
        fclose(f);
    }
    snprintf(src, sizeof src, "%s/allreduce_2r_small.xml", algos);
    snprintf(path, sizeof path, "%s:%s", dir, src);
    setup(path, "INFO");
    ncclUniqueId id;
    ncclComm_t c2 = NULL, c3 = NULL, c5 = NULL, c8[8];
    CHECK(ncclGetUniqueId(&id) == ncclSuccess);
    CHECK(ncclGroupStart() == ncclSuccess);
    CHECK(ncclCommInitRank(&c3, 3, id, 0) == ncclSuccess);
    CHECK(ncclCommInitRank(&c2, 2, id, 0) == ncclSuccess);
    CHECK(ncclCommInitRank(&c5, 5, id, 1) == ncclSuccess);
    CHECK(ncclGroupEnd() == ncclSuccess);
    CHECK(ncclCommInitAll(c8, 8, NULL) == ncclSuccess);
    CHECK(ncclAllReduce(gbuf, gbuf, 1 << 20, ncclFloat, ncclSum, c3, S) == ncclSuccess);
    CHECK(ncclAllReduce(gbuf, gbuf, 1 << 20, ncclFloat, ncclSum, c2, S) == ncclSuccess);
    CHECK(ncclAllReduce(gbuf, gbuf, 4, ncclFloat, ncclSum, c2, S) == ncclSuccess);
    CHECK(ncclAllReduce(gbuf, gbuf, 1 << 20, ncclFloat, ncclSum, c8[7], S) == ncclSuccess);
    CHECK(ncclAllReduce(gbuf, gbuf, 4, ncclFloat, ncclSum, c8[7], S) == ncclSuccess);
    char *log = take_log(1);
    CHECK_STR(log, "GetUniqueId\nweft.api version=22809\nGroupStart\n"
                   "CommInitRank nranks=3 rank=0\nCommInitRank nranks=2 rank=0\n"
                   "CommInitRank nranks=5 rank=1\nGroupEnd\nweft.attach n=1\nweft.attach n=1\n"
                   "weft.attach n=1\nCommInitAll ndev=8\nweft.attach n=8\n"
                   "weft.launch ring count=1048576 inplace=1\n"
                   "weft.launch ring count=1048576 inplace=1\n"
                   "weft.launch ar2_small count=4 inplace=1\n"
                   "weft.launch ring count=1048576 inplace=1\n"
                   "AllReduce count=4 type=7 op=0 inplace=1\n");
    free(log);
    ncclComm_t all[] = {c2, c3, c5};
    for (int i = 0; i < 3; i++)
        CHECK(ncclCommDestroy(all[i]) == ncclSuccess);
    for (int i = 0; i < 8; i++)
        CHECK(ncclCommDestroy(c8[i]) == ncclSuccess);
    drop_log();
    EXPECT_WEFT_LOG(1, "weft INFO for 3 ranks: algorithm 0: 'ring' allreduce on 3 ranks");
    EXPECT_WEFT_LOG(1, "weft INFO for 2 ranks: algorithm 1: 'ar2_small' allreduce on 2 ranks");
    EXPECT_WEFT_LOG(1, "weft INFO for 8 ranks: algorithm 0: 'ring' allreduce on 8 ranks");
    EXPECT_WEFT_LOG(1, "weft INFO for 5 ranks: algorithm 0: 'ring' allreduce on 5 ranks");
    snprintf(path, sizeof path, "%s/ring.weft", dir);
    unlink(path);
    rmdir(dir);
}

/* ---- across nodes: the registry for NCCL's node structure -------------------------------- */
static void nodes(void) {
    /* 2 nodes of 1 GPU: the 2-rank files serve, cut into phases */
    fake_nccl_set("gpus_per_node", 1);
    ncclComm_t c2[2], c4[4];
    CHECK(ncclCommInitAll(c2, 2, NULL) == ncclSuccess);
    CHECK(ncclAllReduce(fbuf, gbuf, 4, ncclFloat, ncclSum, c2[0], S) == ncclSuccess);
    /* 4 ranks in nodes of 3: a shape weft does not serve */
    fake_nccl_set("gpus_per_node", 3);
    CHECK(ncclCommInitAll(c4, 4, NULL) == ncclSuccess);
    CHECK(ncclAllReduce(fbuf, gbuf, 4, ncclFloat, ncclSum, c4[0], S) == ncclSuccess);
    fake_nccl_set("gpus_per_node", 0);
    for (int i = 0; i < 2; i++)
        CHECK(ncclCommDestroy(c2[i]) == ncclSuccess);
    for (int i = 0; i < 4; i++)
        CHECK(ncclCommDestroy(c4[i]) == ncclSuccess);
    EXPECT_LOG(1, "CommInitAll ndev=2\nweft.api version=22809\nweft.attach n=2\n"
                  "weft.launch ar2_small count=4 inplace=0\nCommInitAll ndev=4\n"
                  "AllReduce count=4 type=7 op=0 inplace=0\nCommDestroy rank=0\n"
                  "weft.abort nranks=2\nCommDestroy rank=1\nweft.abort nranks=2\n"
                  "CommDestroy rank=0\nCommDestroy rank=1\nCommDestroy rank=2\n"
                  "CommDestroy rank=3\n");
    EXPECT_WEFT_LOG(1, "weft INFO for 2 ranks in nodes of 1: algorithm 0: 'ag2' allgather");
    /* the policy across nodes, once per node shape (no tuning table here) */
    EXPECT_WEFT_LOG(1, "weft INFO for 2 ranks in nodes of 1: no tuning table section for this "
                       "node shape: each algorithm serves only its own size range");
    EXPECT_WEFT_LOG(4, "the nodes have different numbers of GPUs (rank ");
}

/* ---- no NCCL, old NCCL ------------------------------------------------------------------- */
static void no_nccl(void) {
    setenv("WEFT_NCCL_LIB", "/nonexistent/libnccl.so.2", 1);
    int v = 0;
    ncclComm_t c = NULL;
    ncclUniqueId id;
    memset(&id, 0, sizeof id);
    CHECK(ncclGetVersion(&v) == ncclSystemError && v == 0);
    CHECK(ncclCommInitRank(&c, 2, id, 0) == ncclSystemError);
    CHECK(ncclAllReduce(fbuf, gbuf, 4, ncclFloat, ncclSum, c, S) == ncclSystemError);
    CHECK_STR(ncclGetErrorString(ncclSuccess), "the real NCCL was not found (libweft_nccl.so)");
    EXPECT_LOG(0, "");
    EXPECT_WEFT_LOG(1, "weft WARN");
    EXPECT_WEFT_LOG(1, "cannot find the real NCCL at WEFT_NCCL_LIB=/nonexistent/libnccl.so.2: ");
}

/* A libnccl outside the device API weft was built for (older or newer): every call is NCCL's
 * alone (not even a query of weft's own) and one WARN names both versions and what to do. */
static void other_nccl(int version, const char *says) {
    fake_nccl_set("version", version);
    ncclComm_t c = init(2, 0);
    CHECK(ncclAllReduce(fbuf, gbuf, 4, ncclFloat, ncclSum, c, S) == ncclSuccess);
    CHECK(ncclBroadcast(fbuf, gbuf, 8, ncclFloat, 0, c, S) == ncclSuccess);
    CHECK(ncclGroupStart() == ncclSuccess);
    CHECK(ncclAllGather(fbuf, gbuf, 16, ncclFloat, c, S) == ncclSuccess);
    CHECK(ncclGroupEnd() == ncclSuccess);
    CHECK(ncclCommDestroy(c) == ncclSuccess);
    EXPECT_LOG(0, "GetUniqueId\nCommInitRank nranks=2 rank=0\nGetVersion\n"
                  "AllReduce count=4 type=7 op=0 inplace=0\nBroadcast count=8 root=0 inplace=0\n"
                  "GroupStart\nAllGather count=16 type=7\nGroupEnd\nCommDestroy rank=0\n");
    EXPECT_WEFT_LOG(1, "weft WARN");
    EXPECT_WEFT_LOG(1, says);
    EXPECT_WEFT_LOG(1, "weft supports NCCL 2.28.9 to 2.28.x");
}

static void old_nccl(void) {
    other_nccl(22803, "weft is off, every call goes to NCCL (");
    EXPECT_WEFT_LOG(1, "NCCL 2.28.3 is older than the device API weft was built for (weft "
                       "supports NCCL 2.28.9 to 2.28.x): use NCCL 2.28.9 or a later 2.28.x "
                       "(PyTorch's pip nvidia-nccl-cu12 2.28.9: its lib folder first on "
                       "LD_LIBRARY_PATH), or rebuild weft against this NCCL's headers");
}

static void new_nccl(void) {
    other_nccl(23007, "weft is off, every call goes to NCCL (");
    EXPECT_WEFT_LOG(1, "NCCL 2.30.7 is newer than the device API weft was built for (weft "
                       "supports NCCL 2.28.9 to 2.28.x): use NCCL 2.28.x for weft (PyTorch's pip "
                       "nvidia-nccl-cu12 2.28.9: its lib folder first on LD_LIBRARY_PATH); weft's "
                       "device code does not yet run on the device API of 2.29 and later");
}

/* ---- WEFT_REPORT: which implementation served the calls, per communicator ---------------- */
static void report(void) {
    setenv("WEFT_REPORT", "1", 1);
    /* a communicator the program never destroys: its table at exit */
    pid_t pid = fork();
    if (pid == 0) {
        ncclComm_t c = init(2, 0);
        CHECK(ncclAllReduce(fbuf, gbuf, 4, ncclFloat, ncclSum, c, S) == ncclSuccess);
        exit(check_failures != 0);
    }
    int status = 0;
    CHECK(pid > 0 && waitpid(pid, &status, 0) == pid && WIFEXITED(status) &&
          WEXITSTATUS(status) == 0);
    EXPECT_REPORT(1, "rank 0 of 2, at exit (never destroyed): 1 calls: 1 served by weft, 0 by "
                     "NCCL");
    EXPECT_REPORT(1, "weft REPORT allreduce eager 1 16 weft 'ar2_small'");
    EXPECT_WEFT_LOG(3, "weft REPORT"); /* the child's table, in the same log file */
    ncclComm_t c = init(2, 0);
    for (int i = 0; i < 10; i++)
        CHECK(ncclAllReduce(fbuf, gbuf, 4, ncclFloat, ncclSum, c, S) == ncclSuccess);
    CHECK(ncclAllReduce(fbuf, gbuf, 8, ncclFloat, ncclSum, c, S) == ncclSuccess);
    for (int i = 0; i < 5; i++)
        CHECK(ncclAllReduce(fbuf, gbuf, 4, ncclFloat, ncclAvg, c, S) == ncclSuccess);
    CHECK(ncclAllReduce(fbuf, fbuf, 1 << 20, ncclFloat, ncclSum, c, S) == ncclSuccess);
    CHECK(ncclAllGather(fbuf, gbuf, 0, ncclFloat, c, S) == ncclSuccess);
    CHECK(ncclAllGather(fbuf, gbuf, 16, ncclFloat, c, S) == ncclSuccess);
    CHECK(ncclGroupStart() == ncclSuccess);
    CHECK(ncclAllReduce(fbuf, gbuf, 4, ncclFloat, ncclSum, c, S) == ncclSuccess);
    CHECK(ncclSend(fbuf, 4, ncclFloat, 1, c, S) == ncclSuccess); /* not a collective: no row */
    CHECK(ncclGroupEnd() == ncclSuccess);
    EXPECT_WEFT_LOG(3, "weft REPORT"); /* nothing before the communicator ends */
    CHECK(ncclCommDestroy(c) == ncclSuccess);
    EXPECT_REPORT(2, "weft REPORT communicator ");
    EXPECT_REPORT(1, " rank 0 of 2, at ncclCommDestroy: 20 calls: 13 served by weft, 7 by NCCL");
    EXPECT_REPORT(2, "weft REPORT collective launch calls bytes served by");
    EXPECT_REPORT(1, "weft REPORT allreduce eager 12 16 .. 32 weft 'ar2_small'");
    EXPECT_REPORT(1, "weft REPORT allreduce eager 1 4194304 NCCL: no algorithm for this buffer "
                     "mode");
    EXPECT_REPORT(1, "weft REPORT allreduce eager 5 16 NCCL: reduction op not served by weft");
    EXPECT_REPORT(1, "weft REPORT allgather eager 1 128 weft 'ag2'");
    EXPECT_REPORT(1, "weft REPORT allgather - 1 0 NCCL: empty call (count 0)");
    EXPECT_WEFT_LOG(8, "weft REPORT   "); /* column titles and rows: 1 + 1 (child), 1 + 5 */
    /* tables go out at the end of each communicator, not again at exit */
    drop_log();
}

/* With WEFT_DISABLE the table says so, and weft still makes no NCCL call of its own. */
static void report_disabled(void) {
    setenv("WEFT_REPORT", "1", 1);
    setenv("WEFT_DISABLE", "1", 1);
    ncclComm_t c = init(2, 0);
    CHECK(ncclAllReduce(fbuf, gbuf, 4, ncclFloat, ncclSum, c, S) == ncclSuccess);
    CHECK(ncclCommDestroy(c) == ncclSuccess);
    EXPECT_LOG(0, "GetUniqueId\nCommInitRank nranks=2 rank=0\n"
                  "AllReduce count=4 type=7 op=0 inplace=0\nCommDestroy rank=0\n");
    EXPECT_REPORT(1, ", at ncclCommDestroy: 1 calls: 0 served by weft, 1 by NCCL (rank count "
                     "unknown: ");
    EXPECT_REPORT(1, "weft REPORT allreduce - 1 16 NCCL: WEFT_DISABLE is set");
}

/* ---- logging ----------------------------------------------------------------------------------
 */
static void logging(int trace) {
    ncclComm_t c = init(2, 0);
    for (int i = 0; i < 10; i++)
        CHECK(ncclAllReduce(fbuf, gbuf, 4, ncclFloat, ncclSum, c, S) == ncclSuccess);
    for (int i = 0; i < 10; i++)
        CHECK(ncclAllReduce(fbuf, gbuf, 4, ncclFloat, ncclAvg, c, S) == ncclSuccess);
    CHECK(ncclBcast(fbuf, 8, ncclFloat, 1, c, S) == ncclSuccess);
    CHECK(ncclCommDestroy(c) == ncclSuccess);
    EXPECT_WEFT_LOG(trace ? 10 : 1, "-> weft 'ar2_small'");
    EXPECT_WEFT_LOG(trace ? 10 : 1, "-> NCCL: reduction op not served");
    EXPECT_WEFT_LOG(1, "root 1 bytes 32"); /* ncclBcast, not also its inner ncclBroadcast */
    EXPECT_WEFT_LOG(1, "WEFT_ALGO_DIR set by environment to ");
    EXPECT_WEFT_LOG(1, "WEFT_DEBUG set by environment to ");
    EXPECT_WEFT_LOG(1, "WEFT_DEBUG_FILE set by environment to ");
    EXPECT_WEFT_LOG(6, "weft INFO algorithm ");
    EXPECT_WEFT_LOG(2, "algorithm 2: 'ar2_small' allreduce on 2 ranks, LL, in-place and "
                       "out-of-place, bytes [0, 65536] ("); /* loaded, and for 2 ranks */
    EXPECT_WEFT_LOG(1, "weft INFO for 2 ranks: algorithm 5: 'rs2' reducescatter on 2 ranks");
    EXPECT_WEFT_LOG(1, "weft attached");
}

/* Lines of weft's log not in NCCL's shape, "host:pid:tid [dev] weft LEVEL msg" (the fake runtime
 * installs no device query: "-"). */
static int log_misshapen(void) {
    regex_t re;
    CHECK(regcomp(&re, "^[^: ]+:[0-9]+:[0-9]+ \\[-\\] weft (VERSION|WARN|INFO|TRACE) [^ ]",
                  REG_EXTENDED | REG_NOSUB) == 0);
    FILE *f = fopen(logpath, "r");
    int bad = 0;
    char line[4096];
    while (f && fgets(line, sizeof line, f))
        if (regexec(&re, line, 0, NULL, 0) != 0) {
            fprintf(stderr, "misshapen log line: %s", line);
            bad++;
        }
    if (f) fclose(f);
    regfree(&re);
    return bad;
}

/* WEFT_DEBUG_SUBSYS keeps INFO lines of the subsystems it names (^: of the others); warnings and
 * the version line pass whatever it says; WEFT_DEBUG=VERSION logs the version line alone. */
static void logging_subsys(const char *level, const char *subsys) {
    setup(algos, level);
    setenv("WEFT_DEBUG_SUBSYS", subsys, 1);
    ncclComm_t c = init(2, 0);
    CHECK(ncclAllReduce(fbuf, gbuf, 4, ncclFloat, ncclSum, c, S) == ncclSuccess);
    CHECK(ncclCommDestroy(c) == ncclSuccess);
    int coll = strcmp(subsys, "coll") == 0, version = strcmp(level, "VERSION") == 0;
    EXPECT_WEFT_LOG(1, " weft VERSION weft ");
    EXPECT_WEFT_LOG(1, ": libweft_nccl.so over NCCL ");
    EXPECT_WEFT_LOG(!version && coll, "-> weft 'ar2_small'");
    EXPECT_WEFT_LOG(!version && !coll, "weft attached");
    EXPECT_WEFT_LOG(!version && !coll, "WEFT_DEBUG_SUBSYS set by environment to ^COLL,Plan");
    EXPECT_WEFT_LOG(0, "set by environment to coll");
    CHECK(log_misshapen() == 0);
}

/* The NCCL functions must resolve into libweft_nccl when it is in the process. */
static void check_resolution(int want_shim) {
    Dl_info info;
    void *p = NULL;
    ncclResult_t (*f)(int *) = ncclGetVersion;
    memcpy(&p, &f, sizeof p);
    CHECK(dladdr(p, &info) != 0);
    int is_shim = info.dli_fname && strstr(info.dli_fname, "weft_nccl") != NULL;
    if (is_shim != want_shim)
        fprintf(stderr, "ncclGetVersion resolves to %s\n", info.dli_fname ? info.dli_fname : "?");
    CHECK(is_shim == want_shim);
}

int main(int argc, char **argv) {
    if (argc != 5) {
        fprintf(stderr, "usage: shim_app SCENARIO ALGOS_DIR WORK_DIR shim|stock\n");
        return 2;
    }
    scenario = argv[1];
    algos = argv[2];
    workdir = argv[3];
    check_resolution(strcmp(argv[4], "shim") == 0);
    static const struct {
        const char *name, *algo_dir, *debug;
        void (*run)(void);
    } scenarios[] = {
        {"passthrough", NULL, "TRACE", passthrough},
        {"serve", "", "INFO", serve},
        {"groups", "", "INFO", groups},
        {"split", "", "INFO", split},
        {"nonblocking", "", "INFO", nonblocking},
        {"attach_fail", "", "INFO", attach_fail},
        {"launch_fail", "", "INFO", launch_fail},
        {"teardown", "", "INFO", teardown},
        {"bad_algos", NULL, NULL, bad_algos},
        {"hostile_algos", NULL, NULL, hostile_algos},
        {"sizes", NULL, NULL, sizes},
        {"nodes", "", "INFO", nodes},
        {"no_nccl", "", "WARN", no_nccl},
        {"old_nccl", "", "WARN", old_nccl},
        {"new_nccl", "", "WARN", new_nccl},
        {"report", "", "WARN", report},
        {"report_disabled", "", "NONE", report_disabled},
    };
    if (strcmp(scenario, "logging_info") == 0 || strcmp(scenario, "logging_trace") == 0) {
        int trace = strcmp(scenario, "logging_trace") == 0;
        setup(algos, trace ? "TRACE" : "INFO");
        logging(trace);
        CHECK(log_misshapen() == 0);
        CHECK_DONE();
    }
    if (strncmp(scenario, "logging_subsys", 14) == 0) {
        const char *which = scenario + 14;
        logging_subsys(strcmp(which, "_version") == 0 ? "VERSION" : "INFO",
                       strcmp(which, "_coll") == 0 ? "coll" : "^COLL,Plan");
        CHECK_DONE();
    }
    for (size_t i = 0; i < sizeof scenarios / sizeof *scenarios; i++) {
        if (strcmp(scenario, scenarios[i].name) != 0) continue;
        if (scenarios[i].algo_dir || scenarios[i].debug)
            setup(scenarios[i].algo_dir && !*scenarios[i].algo_dir ? algos : scenarios[i].algo_dir,
                  scenarios[i].debug);
        scenarios[i].run();
        CHECK_DONE();
    }
    fprintf(stderr, "shim_app: unknown scenario '%s'\n", scenario);
    return 2;
}
