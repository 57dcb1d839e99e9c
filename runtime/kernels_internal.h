/* kernels_internal.h — the plain C face of kernels.cu: launching the interpreter and the avg
 * pass, and the NCCL device-API calls that need C++ (device communicator, LSA pointers). */
#ifndef WEFT_KERNELS_INTERNAL_H
#define WEFT_KERNELS_INTERNAL_H

#include "runtime_internal.h"

#include <cuda_runtime_api.h>
#include <nccl.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The interpreter's instantiations are compiled in WEFT_RT_NSHARDS translation units (generated
 * by runtime/CMakeLists.txt from kernels_interp.cuh, one per entry here); shard k fills the
 * slots i with i % WEFT_RT_NSHARDS == k of every variant's table. */
#define WEFT_RT_SHARD_LIST(X) X(0) X(1) X(2) X(3)
#define WEFT_RT_NSHARDS       4
#define WEFT_X_(k)            void weft_rt_kernels_shard##k(const void **fn[WEFT_RT_KVARIANTS]);
WEFT_RT_SHARD_LIST(WEFT_X_)
#undef WEFT_X_

/* Opaque storage for an ncclDevComm (C code cannot name its C++ members). */
#define WEFT_RT_DEVCOMM_BYTES 1024

/* Kernel `index` (weft_rt_kernel_index), variant v (weft_call_variant), with nblocks CTAs of
 * nthreads threads (weft_call_threads; at most WEFT_RT_NTHREADS); cooperative: all CTAs resident
 * together (their steps wait for each other). */
cudaError_t weft_rt_kernel_launch(int index, weft_rt_kvariant v, int cooperative,
                                  const weft_kargs *ka, int nblocks, int nthreads,
                                  cudaStream_t stream);
/* The one-hop kernel (hop.h) of kernel `index`: nblocks CTAs (every rank's nb) of nthreads;
 * cooperative: all resident together (several ranks in one launch wait for each other). */
cudaError_t weft_rt_hop_launch(int index, const weft_hop_kargs *ka, int nblocks, int nthreads,
                               int cooperative, cudaStream_t stream);
/* Whether this build compiled variant v of kernel `index`: CMake's WEFT_KERNELS and
 * WEFT_KERNELS_TRACED may leave kernels out, and their calls go to NCCL. */
int weft_rt_kernel_built(int index, weft_rt_kvariant v);
/* CTAs of kernel `index` that can be resident at once on the current device (0: not built). */
int weft_rt_kernel_max_blocks(int index);
/* CTAs of variant v of kernel `index` on nthreads threads that can be resident at once on device
 * dev, which is current (0: not built); cached. */
int weft_rt_kernel_capacity(int dev, int index, weft_rt_kvariant v, int nthreads);
/* The fewest of those over every kernel built: what any call may count on. */
int weft_rt_device_max_blocks(void);
/* buf[0..n) = avg of the sum over nranks, as ncclAvg. */
cudaError_t weft_rt_scale_launch(void *buf, int64_t n, weft_dtype dt, int nranks,
                                 cudaStream_t stream);
/* ncclDevCommCreate through the given entry point, without barriers or multimem; returns the
 * ncclResult_t. out must hold WEFT_RT_DEVCOMM_BYTES; read it (after the group, if grouped)
 * with weft_rt_devcomm_info. */
int weft_rt_devcomm_create(void *create_fn, ncclComm_t comm, void *out);
void weft_rt_devcomm_info(const void *devcomm, int *lsa_rank, int *lsa_size, int *nranks);
int weft_rt_devcomm_destroy(void *destroy_fn, ncclComm_t comm, const void *devcomm);
/* host_out[p] = the LSA pointer to offset 0 of peer p's window, p < nranks (synchronous). */
cudaError_t weft_rt_peer_pointers(ncclWindow_t win, int nranks, void **host_out,
                                  cudaStream_t stream);

#ifdef __cplusplus
}
#endif
#endif
