/* stream_wait.h — waiting for a stream as nccl-tests does, for the programs that time collectives
 * as it times them (weft-tune, weft_bench). Include it after CU(call) and NC(call), which stop
 * the program on a failed CUDA or NCCL call (weft-tune's own; tests/runtime/gpu_check.h). */
#ifndef WEFT_TOOLS_STREAM_WAIT_H
#define WEFT_TOOLS_STREAM_WAIT_H

#include <cuda_runtime_api.h>
#include <nccl.h>
#include <sched.h>

/* nccl-tests' testStreamSynchronize: poll the stream, check the communicator, yield. A sample
 * timed so ends when the stream is seen idle, as nccl-tests' does, and a communicator that
 * failed asynchronously stops the program instead of leaving it waiting. */
static inline void weft_wait_stream(cudaStream_t s, ncclComm_t comm) {
    for (;;) {
        cudaError_t e = cudaStreamQuery(s);
        if (e == cudaSuccess) return;
        if (e != cudaErrorNotReady) CU(e);
        ncclResult_t ae = ncclSuccess;
        NC(ncclCommGetAsyncError(comm, &ae));
        NC(ae);
        sched_yield();
    }
}

#endif
