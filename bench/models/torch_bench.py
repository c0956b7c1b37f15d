#!/usr/bin/python3
"""PyTorch's side of bench/models/run.sh: latency and peak memory of one
torchvision model on the CPU.

usage: torch_bench.py MODEL BATCH THREADS ITERATIONS WARMUP
Prints one line: "median_ms min_ms peak_rss_mib". Random weights (as in
tests/models/export.py: only speed and memory are measured here).
"""
import os
import statistics
import sys
import time

import torch
import torchvision

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from peak_rss import peak_rss_kib  # noqa: E402


def main(argv):
    name, batch, threads, iterations, warmup = argv[1], *map(int, argv[2:6])
    torch.set_num_threads(threads)
    torch.manual_seed(0)
    model = getattr(torchvision.models, name)(weights=None).eval()
    x = torch.randn(batch, 3, 224, 224)
    times = []
    with torch.no_grad():
        for i in range(warmup + iterations):
            start = time.perf_counter()
            model(x)
            if i >= warmup:
                times.append((time.perf_counter() - start) * 1e3)
    peak = peak_rss_kib() / 1024.0
    print(f"{statistics.median(times):.1f} {min(times):.1f} {peak:.0f}")


if __name__ == "__main__":
    main(sys.argv)
