// trace_cuda.cu — the tracer's CUDA backend: device arena, waiting on the launch's stream,
// graph-capture detection, and host/GPU clock samples by a ping-pong with a one-thread
// kernel through host-mapped memory.
#include "trace_internal.h"

#include <cuda_runtime_api.h>
#include <stdlib.h>
#include <string.h>

namespace {

constexpr int kRounds = 16;
constexpr int64_t kTimeoutNs = 100000000; // 100 ms: a busy or broken GPU fails the sample

struct Ctx {
    int dev;
    // Host-mapped: [0] the host's ping (round r writes 2r+1; -1 quits), [1] the GPU's pong.
    volatile int32_t *flag;
    volatile uint64_t *stamp; // the GPU's timer per round
    int32_t *dflag;
    uint64_t *dstamp;
    cudaStream_t st;
};

__global__ void pingpong(int32_t *flag_, uint64_t *stamp_, int rounds) {
    volatile int32_t *flag = flag_;
    volatile uint64_t *stamp = stamp_;
    for (int r = 0; r < rounds; r++) {
        int32_t want = 2 * r + 1, f;
        while ((f = flag[0]) != want && f != -1) {
        }
        if (f == -1) return;
        uint64_t t;
        asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
        stamp[r] = t;
        __threadfence_system();
        flag[1] = want;
    }
}

struct Device {
    int old = -1;
    explicit Device(int d) {
        cudaGetDevice(&old);
        if (old != d) cudaSetDevice(d);
    }
    ~Device() {
        int now = -1;
        cudaGetDevice(&now);
        if (old >= 0 && now != old) cudaSetDevice(old);
    }
};

void *be_alloc(void *c, size_t n) {
    Device g(static_cast<Ctx *>(c)->dev);
    void *p = nullptr;
    return cudaMalloc(&p, n) == cudaSuccess ? p : nullptr;
}

void be_free(void *c, void *p) {
    Device g(static_cast<Ctx *>(c)->dev);
    if (p) cudaFree(p);
}

int be_sync(void *c, void *stream) {
    Device g(static_cast<Ctx *>(c)->dev);
    cudaError_t e = cudaStreamSynchronize(static_cast<cudaStream_t>(stream));
    if (e == cudaErrorInvalidResourceHandle || e == cudaErrorContextIsDestroyed) {
        /* The application destroyed the stream since the call: wait for the whole device. */
        cudaGetLastError();
        e = cudaDeviceSynchronize();
    }
    return e == cudaSuccess ? 0 : -1;
}

int be_to_host(void *c, void *dst, const void *src, size_t n) {
    Device g(static_cast<Ctx *>(c)->dev);
    return n == 0 || cudaMemcpy(dst, src, n, cudaMemcpyDeviceToHost) == cudaSuccess ? 0 : -1;
}

int be_capturing(void *, void *stream) {
    cudaStreamCaptureStatus s = cudaStreamCaptureStatusNone;
    if (cudaStreamIsCapturing(static_cast<cudaStream_t>(stream), &s) != cudaSuccess) return 0;
    return s != cudaStreamCaptureStatusNone;
}

int be_clock(void *c, int64_t *host_ns, uint64_t *gpu_ns, int64_t *err_ns) {
    Ctx *x = static_cast<Ctx *>(c);
    Device g(x->dev);
    x->flag[0] = 0;
    x->flag[1] = 0;
    int rounds = kRounds;
    void *args[] = {&x->dflag, &x->dstamp, &rounds};
    /* cudaLaunchKernel reports this launch's own error (the application's last error stays). */
    if (cudaLaunchKernel(reinterpret_cast<const void *>(pingpong), dim3(1), dim3(1), args, 0,
                         x->st) != cudaSuccess)
        return -1;
    int64_t best = -1;
    for (int r = 0; r < kRounds; r++) {
        int32_t want = 2 * r + 1;
        int64_t h0 = weft_trace_host_now();
        __atomic_store_n(const_cast<int32_t *>(&x->flag[0]), want, __ATOMIC_SEQ_CST);
        int64_t h1;
        while (__atomic_load_n(const_cast<int32_t *>(&x->flag[1]), __ATOMIC_ACQUIRE) != want) {
            if (weft_trace_host_now() - h0 > kTimeoutNs) {
                __atomic_store_n(const_cast<int32_t *>(&x->flag[0]), -1, __ATOMIC_SEQ_CST);
                cudaStreamSynchronize(x->st);
                return -1;
            }
        }
        h1 = weft_trace_host_now();
        if (best < 0 || h1 - h0 < best) {
            best = h1 - h0;
            *host_ns = h0 + (h1 - h0) / 2;
            *gpu_ns = x->stamp[r];
            *err_ns = (h1 - h0 + 1) / 2;
        }
    }
    return cudaStreamSynchronize(x->st) == cudaSuccess && best >= 0 ? 0 : -1;
}

void be_release(void *c) {
    Ctx *x = static_cast<Ctx *>(c);
    Device g(x->dev);
    if (x->st) cudaStreamDestroy(x->st);
    if (x->flag) cudaFreeHost(const_cast<int32_t *>(x->flag));
    if (x->stamp) cudaFreeHost(const_cast<uint64_t *>(x->stamp));
    free(x);
}

} // namespace

extern "C" weft_result weft_tracer_cuda_backend(int device, weft_tracer_backend *out) {
    memset(out, 0, sizeof *out);
    Ctx *x = static_cast<Ctx *>(calloc(1, sizeof(Ctx)));
    if (x == nullptr) return WEFT_ERR_NOMEM;
    x->dev = device;
    Device g(device);
    void *f = nullptr, *s = nullptr;
    if (cudaHostAlloc(&f, 2 * sizeof(int32_t), cudaHostAllocMapped) != cudaSuccess ||
        cudaHostAlloc(&s, kRounds * sizeof(uint64_t), cudaHostAllocMapped) != cudaSuccess ||
        cudaHostGetDevicePointer(reinterpret_cast<void **>(&x->dflag), f, 0) != cudaSuccess ||
        cudaHostGetDevicePointer(reinterpret_cast<void **>(&x->dstamp), s, 0) != cudaSuccess ||
        cudaStreamCreateWithFlags(&x->st, cudaStreamNonBlocking) != cudaSuccess) {
        x->flag = static_cast<volatile int32_t *>(f);
        x->stamp = static_cast<volatile uint64_t *>(s);
        be_release(x);
        return WEFT_ERR_CUDA;
    }
    x->flag = static_cast<volatile int32_t *>(f);
    x->stamp = static_cast<volatile uint64_t *>(s);
    *out = weft_tracer_backend{x,          be_alloc,     be_free,  be_sync,
                               be_to_host, be_capturing, be_clock, be_release};
    return WEFT_OK;
}
