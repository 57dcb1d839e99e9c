/* nccl_api.h — the NCCL C API of nccl.h (2.28), one X-macro row per function: libweft_nccl.so
 * exports exactly these as pncclX plus a weak ncclX alias (as libnccl does) and resolves the real
 * ones by the same names. The compiler checks every row against nccl.h's declarations; the
 * shim.exports test checks that no function of nccl.h is missing. */
#ifndef WEFT_SHIM_NCCL_API_H
#define WEFT_SHIM_NCCL_API_H

#include <nccl.h>

/* X(rk, how, name, params, args)
 *   rk:   return kind — RES (ncclResult_t), STR (const char *), VOID
 *   how:  PASS — forwarded to the real NCCL unchanged; COLL — a collective weft may serve (shim.c
 *         generates it from the row: a shim_op of its parameters, served or handed to NCCL);
 *         OWN — defined by hand in shim.c (tracking communicators or groups around the call)
 *   name: without the nccl/pnccl prefix; params and args: parenthesized lists */
#define WEFT_NCCL_API(X)                                                                           \
    X(RES, PASS, MemAlloc, (void **ptr, size_t size), (ptr, size))                                 \
    X(RES, PASS, MemFree, (void *ptr), (ptr))                                                      \
    X(RES, PASS, GetVersion, (int *version), (version))                                            \
    X(RES, PASS, GetUniqueId, (ncclUniqueId * uniqueId), (uniqueId))                               \
    X(RES, OWN, CommInitRankConfig,                                                                \
      (ncclComm_t * comm, int nranks, ncclUniqueId commId, int rank, ncclConfig_t *config),        \
      (comm, nranks, commId, rank, config))                                                        \
    X(RES, OWN, CommInitRank, (ncclComm_t * comm, int nranks, ncclUniqueId commId, int rank),      \
      (comm, nranks, commId, rank))                                                                \
    X(RES, OWN, CommInitAll, (ncclComm_t * comm, int ndev, const int *devlist),                    \
      (comm, ndev, devlist))                                                                       \
    X(RES, OWN, CommFinalize, (ncclComm_t comm), (comm))                                           \
    X(RES, OWN, CommDestroy, (ncclComm_t comm), (comm))                                            \
    X(RES, OWN, CommAbort, (ncclComm_t comm), (comm))                                              \
    X(RES, OWN, CommRevoke, (ncclComm_t comm, int revokeFlags), (comm, revokeFlags))               \
    X(RES, OWN, CommSplit,                                                                         \
      (ncclComm_t comm, int color, int key, ncclComm_t *newcomm, ncclConfig_t *config),            \
      (comm, color, key, newcomm, config))                                                         \
    X(RES, OWN, CommShrink,                                                                        \
      (ncclComm_t comm, int *excludeRanksList, int excludeRanksCount, ncclComm_t *newcomm,         \
       ncclConfig_t *config, int shrinkFlags),                                                     \
      (comm, excludeRanksList, excludeRanksCount, newcomm, config, shrinkFlags))                   \
    X(RES, OWN, CommInitRankScalable,                                                              \
      (ncclComm_t * newcomm, int nranks, int myrank, int nId, ncclUniqueId *commIds,               \
       ncclConfig_t *config),                                                                      \
      (newcomm, nranks, myrank, nId, commIds, config))                                             \
    X(STR, PASS, GetErrorString, (ncclResult_t result), (result))                                  \
    X(STR, PASS, GetLastError, (ncclComm_t comm), (comm))                                          \
    X(VOID, PASS, ResetDebugInit, (void), ())                                                      \
    X(RES, PASS, CommGetAsyncError, (ncclComm_t comm, ncclResult_t * asyncError),                  \
      (comm, asyncError))                                                                          \
    X(RES, PASS, CommCount, (const ncclComm_t comm, int *count), (comm, count))                    \
    X(RES, PASS, CommCuDevice, (const ncclComm_t comm, int *device), (comm, device))               \
    X(RES, PASS, CommUserRank, (const ncclComm_t comm, int *rank), (comm, rank))                   \
    X(RES, PASS, CommRegister, (const ncclComm_t comm, void *buff, size_t size, void **handle),    \
      (comm, buff, size, handle))                                                                  \
    X(RES, PASS, CommDeregister, (const ncclComm_t comm, void *handle), (comm, handle))            \
    X(RES, OWN, CommWindowRegister,                                                                \
      (ncclComm_t comm, void *buff, size_t size, ncclWindow_t *win, int winFlags),                 \
      (comm, buff, size, win, winFlags))                                                           \
    X(RES, OWN, CommWindowDeregister, (ncclComm_t comm, ncclWindow_t win), (comm, win))            \
    X(RES, PASS, RedOpCreatePreMulSum,                                                             \
      (ncclRedOp_t * op, void *scalar, ncclDataType_t datatype, ncclScalarResidence_t residence,   \
       ncclComm_t comm),                                                                           \
      (op, scalar, datatype, residence, comm))                                                     \
    X(RES, PASS, RedOpDestroy, (ncclRedOp_t op, ncclComm_t comm), (op, comm))                      \
    X(RES, COLL, Reduce,                                                                           \
      (const void *sendbuff, void *recvbuff, size_t count, ncclDataType_t datatype,                \
       ncclRedOp_t op, int root, ncclComm_t comm, cudaStream_t stream),                            \
      (sendbuff, recvbuff, count, datatype, op, root, comm, stream))                               \
    X(RES, COLL, Bcast,                                                                            \
      (void *buff, size_t count, ncclDataType_t datatype, int root, ncclComm_t comm,               \
       cudaStream_t stream),                                                                       \
      (buff, count, datatype, root, comm, stream))                                                 \
    X(RES, COLL, Broadcast,                                                                        \
      (const void *sendbuff, void *recvbuff, size_t count, ncclDataType_t datatype, int root,      \
       ncclComm_t comm, cudaStream_t stream),                                                      \
      (sendbuff, recvbuff, count, datatype, root, comm, stream))                                   \
    X(RES, COLL, AllReduce,                                                                        \
      (const void *sendbuff, void *recvbuff, size_t count, ncclDataType_t datatype,                \
       ncclRedOp_t op, ncclComm_t comm, cudaStream_t stream),                                      \
      (sendbuff, recvbuff, count, datatype, op, comm, stream))                                     \
    X(RES, COLL, ReduceScatter,                                                                    \
      (const void *sendbuff, void *recvbuff, size_t recvcount, ncclDataType_t datatype,            \
       ncclRedOp_t op, ncclComm_t comm, cudaStream_t stream),                                      \
      (sendbuff, recvbuff, recvcount, datatype, op, comm, stream))                                 \
    X(RES, COLL, AllGather,                                                                        \
      (const void *sendbuff, void *recvbuff, size_t sendcount, ncclDataType_t datatype,            \
       ncclComm_t comm, cudaStream_t stream),                                                      \
      (sendbuff, recvbuff, sendcount, datatype, comm, stream))                                     \
    X(RES, COLL, AlltoAll,                                                                         \
      (const void *sendbuff, void *recvbuff, size_t count, ncclDataType_t datatype,                \
       ncclComm_t comm, cudaStream_t stream),                                                      \
      (sendbuff, recvbuff, count, datatype, comm, stream))                                         \
    X(RES, COLL, Gather,                                                                           \
      (const void *sendbuff, void *recvbuff, size_t count, ncclDataType_t datatype, int root,      \
       ncclComm_t comm, cudaStream_t stream),                                                      \
      (sendbuff, recvbuff, count, datatype, root, comm, stream))                                   \
    X(RES, COLL, Scatter,                                                                          \
      (const void *sendbuff, void *recvbuff, size_t count, ncclDataType_t datatype, int root,      \
       ncclComm_t comm, cudaStream_t stream),                                                      \
      (sendbuff, recvbuff, count, datatype, root, comm, stream))                                   \
    X(RES, PASS, Send,                                                                             \
      (const void *sendbuff, size_t count, ncclDataType_t datatype, int peer, ncclComm_t comm,     \
       cudaStream_t stream),                                                                       \
      (sendbuff, count, datatype, peer, comm, stream))                                             \
    X(RES, PASS, Recv,                                                                             \
      (void *recvbuff, size_t count, ncclDataType_t datatype, int peer, ncclComm_t comm,           \
       cudaStream_t stream),                                                                       \
      (recvbuff, count, datatype, peer, comm, stream))                                             \
    X(RES, OWN, GroupStart, (void), ())                                                            \
    X(RES, OWN, GroupEnd, (void), ())                                                              \
    X(RES, OWN, GroupSimulateEnd, (ncclSimInfo_t * simInfo), (simInfo))

#define WEFT_NCCL_RET_RES  ncclResult_t
#define WEFT_NCCL_RET_STR  const char *
#define WEFT_NCCL_RET_VOID void

#endif
