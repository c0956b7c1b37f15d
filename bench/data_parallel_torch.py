#!/usr/bin/python3
"""The peer of bench/data_parallel.c: PyTorch DistributedDataParallel (gloo,
loopback) training torchvision's resnet18 (10 classes, Adam lr 1e-3) on
RANKS processes of THREADS threads each, BATCH rows of SIZE x SIZE per rank,
optionally with torch's ZeroRedundancyOptimizer (ZeRO-1).

usage: bench/data_parallel_torch.py RANKS THREADS STEPS BATCH SIZE SHARD

Prints one line: ranks threads images_per_s optimizer_state_bytes_per_rank.
Needs Debian's python3-torch (exits 77 without it).
"""
import os
import sys
import time

try:
    import torch
    import torch.distributed as dist
    import torch.multiprocessing as mp
    import torchvision
    from torch.distributed.optim import ZeroRedundancyOptimizer
    from torch.nn.parallel import DistributedDataParallel
except ImportError as error:
    print(f"torch/torchvision not importable ({error})", file=sys.stderr)
    sys.exit(77)


def state_bytes(optimizer):
    inner = getattr(optimizer, "optim", optimizer)
    return sum(t.numel() * t.element_size()
               for state in inner.state.values()
               for t in state.values() if torch.is_tensor(t) and t.dim() > 0)


def worker(rank, ranks, threads, steps, batch, size, shard, out):
    torch.set_num_threads(threads)
    dist.init_process_group("gloo", rank=rank, world_size=ranks)
    torch.manual_seed(20240601)
    model = DistributedDataParallel(torchvision.models.resnet18(num_classes=10))
    if shard:
        optimizer = ZeroRedundancyOptimizer(model.parameters(),
                                            optimizer_class=torch.optim.Adam,
                                            lr=1e-3)
    else:
        optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    x = torch.randn(batch, 3, size, size)
    labels = torch.arange(batch) % 10
    loss_fn = torch.nn.CrossEntropyLoss()

    def step():
        optimizer.zero_grad()
        loss_fn(model(x), labels).backward()
        optimizer.step()

    for _ in range(5):
        step()
    dist.barrier()
    began = time.perf_counter()
    for _ in range(steps):
        step()
    dist.barrier()
    seconds = time.perf_counter() - began
    if rank == 0:
        out.put((ranks * batch * steps / seconds, state_bytes(optimizer)))
    dist.destroy_process_group()


def main():
    ranks, threads, steps, batch, size, shard = map(int, sys.argv[1:7])
    os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
    os.environ.setdefault("MASTER_PORT", "29517")
    ctx = mp.get_context("spawn")
    out = ctx.SimpleQueue()
    mp.spawn(worker, args=(ranks, threads, steps, batch, size, shard, out),
             nprocs=ranks)
    images_per_s, state = out.get()
    print(f"{ranks} {threads} {images_per_s:.1f} {state}")


if __name__ == "__main__":
    main()
