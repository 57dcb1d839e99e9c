// timer_probe.cu — how finely %globaltimer (the clock of weft's trace records) ticks on this GPU:
// one thread reads it back to back and reports the increments it saw. gpu_trace_check.sh prints
// it next to the sums-against-kernel-time check, whose smallest calls are a few ticks long.
#include <cstdint>
#include <cstdio>
#include <cuda_runtime.h>

static constexpr int kReads = 4096;

__global__ void probe(uint64_t *out) {
    uint64_t prev, t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(prev));
    for (int i = 0; i < kReads; i++) {
        asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
        out[i] = t - prev;
        prev = t;
    }
}

int main() {
    uint64_t *d = nullptr, h[kReads];
    if (cudaMalloc(&d, sizeof h) != cudaSuccess) {
        printf("timer_probe: no GPU\n");
        return 77;
    }
    probe<<<1, 1>>>(d); // first launch warms the kernel up
    probe<<<1, 1>>>(d);
    if (cudaMemcpy(h, d, sizeof h, cudaMemcpyDeviceToHost) != cudaSuccess) {
        printf("timer_probe: %s\n", cudaGetErrorString(cudaGetLastError()));
        return 1;
    }
    uint64_t minpos = UINT64_MAX, total = 0;
    int ticks = 0;
    for (int i = 0; i < kReads; i++) {
        total += h[i];
        if (h[i] == 0) continue;
        ticks++;
        if (h[i] < minpos) minpos = h[i];
    }
    printf("globaltimer: %d reads over %.3f us, %d advanced; smallest increment %llu ns, mean "
           "tick %.1f ns\n",
           kReads, total / 1e3, ticks, (unsigned long long)minpos,
           ticks ? (double)total / ticks : 0.0);
    cudaFree(d);
    return 0;
}
