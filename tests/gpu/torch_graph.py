"""torch_graph.py — collectives as PyTorch applications capture them in CUDA graphs (backend
nccl, torch.cuda.graph: PyTorch's stream and event nodes around every captured call), timed per
call and checked element by element; rows shaped like nccl-tests' (the size is nccl-tests' size:
the larger of a call's two buffers) so that tests/gpu/nccl_tests_ratio.py compares runs without
and with libweft_nccl.so.

  torchrun --standalone --nproc_per_node=N tests/gpu/torch_graph.py [--coll all_reduce]
      [--smallest 8] [--largest 4194304] [--step 8] [--calls 20] [--replays 100] [--rounds 3]

--coll: all_reduce (in place, float32 sum), all_gather (all_gather_into_tensor) or
reduce_scatter (reduce_scatter_tensor, sum). Each graph captures --calls calls, each on its own
tensors (as a model's layers do). Timing: the median over --rounds of (--replays replays) /
(replays x calls). Check: the inputs reset outside the graph, one replay, every output equal to
what the collective defines (small integers: exact in float32). The environment decides what
serves the calls.
"""
import argparse
import os
import statistics
import sys


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--coll", choices=("all_reduce", "all_gather", "reduce_scatter"),
                    default="all_reduce")
    ap.add_argument("--smallest", type=int, default=8)
    ap.add_argument("--largest", type=int, default=4 << 20)
    ap.add_argument("--step", type=int, default=8)
    ap.add_argument("--calls", type=int, default=20)
    ap.add_argument("--replays", type=int, default=100)
    ap.add_argument("--rounds", type=int, default=3)
    a = ap.parse_args()

    import torch
    import torch.distributed as dist

    rank, world = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
    dev = torch.device("cuda", int(os.environ.get("LOCAL_RANK", rank)))
    torch.cuda.set_device(dev)
    dist.init_process_group("nccl", device_id=dev)
    if rank == 0:
        print(f"# torch {torch.__version__}, NCCL {torch.cuda.nccl.version()}, {world} ranks, "
              f"{a.calls} {a.coll} (float32 sum) per graph, {a.replays} replays, "
              f"median of {a.rounds}")
        print("#  size  count  type  redop  root  time(us)  algbw  busbw  #wrong")

    def inp(numel, r, k):  # rank r's input of call k: small integers
        return (torch.arange(numel, device=dev, dtype=torch.int64) * 7 + 3 * r + k) % 29

    def call(x, y):
        if a.coll == "all_reduce":
            dist.all_reduce(x)
        elif a.coll == "all_gather":
            dist.all_gather_into_tensor(y, x)
        else:
            dist.reduce_scatter_tensor(y, x)

    def want(numel, k):
        if a.coll == "all_reduce":
            return sum(inp(numel, r, k) for r in range(world)).to(torch.float32)
        if a.coll == "all_gather":
            return torch.cat([inp(numel, r, k) for r in range(world)]).to(torch.float32)
        full = sum(inp(numel, r, k) for r in range(world)).to(torch.float32)
        return full.view(world, -1)[rank]

    wrong_total = 0
    size = a.smallest
    while size <= a.largest:
        # nccl-tests' size: the larger buffer (all_gather's output, reduce_scatter's input)
        per = size if a.coll == "all_reduce" else size // world
        numel = max(1, per // 4) if a.coll != "reduce_scatter" else max(1, per // 4) * world
        x0 = [inp(numel, rank, k).to(torch.float32) for k in range(a.calls)]
        xs = [x.clone() for x in x0]
        out_n = {"all_reduce": 0, "all_gather": numel * world, "reduce_scatter": numel // world}
        ys = [torch.empty(out_n[a.coll], device=dev, dtype=torch.float32) for _ in xs]
        # eager warm-up on a side stream, as torch.cuda.graph's documentation asks
        s = torch.cuda.Stream()
        s.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(s):
            for x, y in zip(xs, ys):
                call(x, y)
        torch.cuda.current_stream().wait_stream(s)
        torch.cuda.synchronize()
        g = torch.cuda.CUDAGraph()
        with torch.cuda.graph(g):
            for x, y in zip(xs, ys):
                call(x, y)
        # check: one replay from the inputs
        for x, x_0 in zip(xs, x0):
            x.copy_(x_0)
        g.replay()
        torch.cuda.synchronize()
        wrong = 0
        for k, (x, y) in enumerate(zip(xs, ys)):
            got = x if a.coll == "all_reduce" else y
            wrong += int((got != want(numel, k)).sum().item())
        # time: all_reduce's values grow by world per replay (inf at worst), which costs nothing
        times = []
        for _ in range(a.rounds):
            g.replay()
            torch.cuda.synchronize()
            dist.barrier()
            t0, t1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            t0.record()
            for _ in range(a.replays):
                g.replay()
            t1.record()
            torch.cuda.synchronize()
            times.append(t0.elapsed_time(t1) * 1000.0 / (a.replays * a.calls))
        t = torch.tensor([statistics.median(times), float(wrong)], device=dev,
                         dtype=torch.float64)
        dist.all_reduce(t, op=dist.ReduceOp.MAX)  # the slowest rank's time, every rank's errors
        us, w = t[0].item(), int(t[1].item())
        wrong_total += w
        if rank == 0:
            nbytes = numel * 4 * (world if a.coll == "all_gather" else 1)
            algbw = nbytes / us / 1e3
            busbw = algbw * ((2 * (world - 1) / world) if a.coll == "all_reduce"
                             else (world - 1) / world)
            cols = f"{us:9.2f} {algbw:7.2f} {busbw:7.2f} {w}"
            # all_reduce runs in place: nccl-tests' in-place columns
            if a.coll == "all_reduce":
                cols = f"N/A N/A N/A N/A {cols}"
            print(f"{nbytes:>12} {numel:>12} float sum -1 {cols}", flush=True)
        del g
        size *= a.step
    dist.destroy_process_group()
    return 1 if wrong_total else 0


if __name__ == "__main__":
    sys.exit(main())
