"""torch_shim.py — PyTorch (backend nccl) under libweft_nccl.so: collectives of several sizes and
dtypes checked element by element, and a short DDP training loop whose losses are saved so that a
run with weft can be compared with a run without it.

  torchrun --nproc_per_node=2 tests/gpu/torch_shim.py --out DIR      # checks + DDP, writes DIR
  python3 tests/gpu/torch_shim.py --compare DIR_A DIR_B              # DDP losses identical?

The environment decides what serves the calls (LD_PRELOAD=libweft_nccl.so, WEFT_ALGO_DIR,
WEFT_DISABLE); the script itself is the same in every run.
"""
import argparse
import json
import os
import sys


def checks(dist, torch, rank, world, dev):
    """Every collective PyTorch maps onto ncclAllReduce, ncclAllGather, ncclReduceScatter,
    ncclAlltoAll and ncclBroadcast, in and out of place, on exact integer-valued data."""
    sizes = [1, 7, 1000, 4099, 1 << 14, (1 << 18) + 3, 1 << 20, 1 << 24]
    dtypes = [torch.float32, torch.float16, torch.bfloat16, torch.int32, torch.int64, torch.uint8]
    failures, n = [], 0

    def data(numel, dtype, r, salt):
        # small integers: sums over two ranks are exact in every dtype above
        x = (torch.arange(numel, device=dev, dtype=torch.int64) * 7 + salt + 3 * r) % 29
        return x.to(dtype)

    def expect(name, got, want):
        nonlocal n
        n += 1
        if not torch.equal(got, want):
            bad = (got != want).nonzero()
            failures.append(f"{name}: {bad.numel()} elements differ, first at {bad[0].tolist()}: "
                            f"got {got.flatten()[bad[0][0]].item()} want "
                            f"{want.flatten()[bad[0][0]].item()}")

    for numel in sizes:
        for dtype in dtypes:
            if numel >= (1 << 24) and dtype not in (torch.float32, torch.bfloat16):
                continue
            tag = f"{numel} x {dtype}"
            ins = [data(numel, dtype, r, 1) for r in range(world)]
            # all_reduce (in place), sum and max; avg goes to NCCL
            t = ins[rank].clone()
            dist.all_reduce(t)
            expect(f"all_reduce sum {tag}", t, sum(x.to(torch.int64) for x in ins).to(dtype))
            t = ins[rank].clone()
            dist.all_reduce(t, op=dist.ReduceOp.MAX)
            expect(f"all_reduce max {tag}", t, torch.stack(ins).max(dim=0).values)
            if dtype.is_floating_point:
                t = ins[rank].clone()
                dist.all_reduce(t, op=dist.ReduceOp.AVG)
                want = (sum(x.to(torch.float64) for x in ins) / world).to(dtype)
                expect(f"all_reduce avg {tag}", t, want)
            # all_gather_into_tensor, out of place and in place
            out = torch.empty(world * numel, dtype=dtype, device=dev)
            dist.all_gather_into_tensor(out, ins[rank])
            expect(f"all_gather {tag}", out, torch.cat(ins))
            out = torch.zeros(world * numel, dtype=dtype, device=dev)
            out[rank * numel:(rank + 1) * numel] = ins[rank]
            dist.all_gather_into_tensor(out, out[rank * numel:(rank + 1) * numel])
            expect(f"all_gather in-place {tag}", out, torch.cat(ins))
            # reduce_scatter_tensor
            big = [data(world * numel, dtype, r, 5) for r in range(world)]
            out = torch.empty(numel, dtype=dtype, device=dev)
            dist.reduce_scatter_tensor(out, big[rank])
            total = sum(x.to(torch.int64) for x in big).to(dtype)
            expect(f"reduce_scatter {tag}", out, total[rank * numel:(rank + 1) * numel])
            # all_to_all_single (equal splits: ncclAlltoAll)
            out = torch.empty(world * numel, dtype=dtype, device=dev)
            dist.all_to_all_single(out, big[rank])
            want = torch.cat([big[q][rank * numel:(rank + 1) * numel] for q in range(world)])
            expect(f"all_to_all_single {tag}", out, want)
            # broadcast from every root
            for root in range(world):
                t = ins[rank].clone()
                dist.broadcast(t, src=root)
                expect(f"broadcast root {root} {tag}", t, ins[root])
    torch.cuda.synchronize()
    return n, failures


def ddp_losses(dist, torch, rank, dev, steps=30):
    from torch.nn.parallel import DistributedDataParallel as DDP
    torch.manual_seed(1234)
    model = torch.nn.Sequential(torch.nn.Linear(256, 512), torch.nn.ReLU(),
                                torch.nn.Linear(512, 512), torch.nn.ReLU(),
                                torch.nn.Linear(512, 10)).to(dev)
    ddp = DDP(model, device_ids=[dev.index], bucket_cap_mb=1)
    opt = torch.optim.SGD(ddp.parameters(), lr=0.05, momentum=0.9)
    gen = torch.Generator(device="cpu").manual_seed(100 + rank)
    losses = []
    for _ in range(steps):
        x = torch.randn(64, 256, generator=gen).to(dev)
        y = torch.randint(0, 10, (64,), generator=gen).to(dev)
        opt.zero_grad(set_to_none=True)
        loss = torch.nn.functional.cross_entropy(ddp(x), y)
        loss.backward()
        opt.step()
        losses.append(loss.item())
    # parameters after training, to compare across runs too
    digest = float(sum(p.detach().double().sum().item() for p in model.parameters()))
    return losses, digest


def run(out):
    import torch
    import torch.distributed as dist
    os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")
    torch.use_deterministic_algorithms(True)
    rank = int(os.environ["RANK"])
    world = int(os.environ["WORLD_SIZE"])
    dev = torch.device("cuda", int(os.environ.get("LOCAL_RANK", rank)))
    torch.cuda.set_device(dev)
    dist.init_process_group("nccl", device_id=dev)
    n, failures = checks(dist, torch, rank, world, dev)
    losses, digest = ddp_losses(dist, torch, rank, dev)
    dist.barrier()
    dist.destroy_process_group()
    os.makedirs(out, exist_ok=True)
    with open(os.path.join(out, f"rank{rank}.json"), "w") as f:
        json.dump({"checks": n, "failures": failures, "losses": losses, "digest": digest}, f)
    for line in failures[:20]:
        print(f"rank {rank}: FAIL {line}", flush=True)
    print(f"rank {rank}: {n - len(failures)}/{n} collective checks passed; "
          f"DDP losses {losses[0]:.6f} .. {losses[-1]:.6f}, parameter digest {digest:.9e}",
          flush=True)
    return 1 if failures else 0


def compare(a, b):
    status = 0
    for name in sorted(os.listdir(a)):
        if not name.endswith(".json"):
            continue
        with open(os.path.join(a, name)) as f:
            x = json.load(f)
        with open(os.path.join(b, name)) as f:
            y = json.load(f)
        diff = max(abs(p - q) for p, q in zip(x["losses"], y["losses"]))
        same = x["losses"] == y["losses"] and x["digest"] == y["digest"]
        print(f"{name}: {len(x['losses'])} DDP losses, max |difference| {diff:.3g}, parameter "
              f"digests {x['digest']:.9e} vs {y['digest']:.9e}: "
              f"{'identical' if same else 'DIFFERENT'}")
        status |= 0 if same else 1
    return status


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", help="folder for per-rank results (under torchrun)")
    ap.add_argument("--compare", nargs=2, metavar="DIR", help="compare two runs' DDP losses")
    args = ap.parse_args()
    if args.compare:
        return compare(*args.compare)
    if not args.out:
        ap.error("--out or --compare is required")
    return run(args.out)


if __name__ == "__main__":
    sys.exit(main())
